//! Who may make Atlas start Claude Code (`--permission-mode bypassPermissions` on the
//! founder's repository) without asking first. A From header is trivially forged, so a
//! message acts on its own only when its author is verified: the founder's address with a
//! DKIM pass aligned with its domain (a forward by them included — the client quoted in the
//! body is context, never authority), or a known client whose record allows it, on the
//! envelope with a DKIM pass. Everything else waits for the founder's approval. Pure: the
//! launcher gathers the facts and acts on the decision.

use super::client::Founder;
use super::mail::EmailAddress;
use super::store::Client;

/// What the stored DKIM detail says when the message carried no signature at all.
pub const UNSIGNED_DETAIL: &str = "no DKIM-Signature";

/// Everything the decision reads, all of it recorded at intake or in the database.
#[derive(Debug, Clone, Copy)]
pub struct AuthorFacts<'a> {
    /// The From address (what the spec calls the envelope).
    pub from: Option<&'a EmailAddress>,
    /// A valid DKIM signature aligned with the From domain (computed at intake).
    pub dkim_pass: bool,
    /// The stored DKIM detail (`no DKIM-Signature`, or one line per signature).
    pub dkim_detail: Option<&'a str>,
    pub founder: Option<&'a Founder>,
    /// The client the From address resolves to (never one read from the body).
    pub envelope_client: Option<&'a Client>,
    /// `ATLAS_TRUST_UNSIGNED_FOUNDER=1`: the founder's own address counts without DKIM.
    pub trust_unsigned_founder: bool,
    /// The founder approved this message (`arthur atlas approve ID`).
    pub approved: bool,
}

/// Why a launch may go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authority {
    /// The founder, DKIM-verified.
    Founder,
    /// The founder's address without a DKIM pass, trusted because
    /// `ATLAS_TRUST_UNSIGNED_FOUNDER=1` (weaker: From can be forged).
    FounderUnsigned,
    /// A client whose record allows launches, DKIM-verified on the envelope.
    Client { client_id: i64 },
    /// The founder approved this very message.
    Approved,
}

impl Authority {
    pub fn as_str(self) -> &'static str {
        match self {
            Authority::Founder => "founder_dkim",
            Authority::FounderUnsigned => "founder_unsigned_trusted",
            Authority::Client { .. } => "client_allowed_dkim",
            Authority::Approved => "approved_by_founder",
        }
    }
}

/// Why a launch waits for the founder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldReason {
    /// No usable From address.
    NoSender,
    /// `ATLAS_FOUNDER_EMAIL` is not set: nobody can be verified.
    NoFounderConfigured,
    /// The founder's address, without any DKIM signature.
    FounderUnsigned,
    /// The founder's address, with a signature that fails or is not aligned with the domain.
    FounderDkimFailed,
    /// A known client whose record does not allow launches.
    ClientNotAllowed { client_id: i64 },
    /// A client that allows launches, but the message carries no DKIM signature.
    ClientUnsigned { client_id: i64 },
    /// A client that allows launches, but the signature fails or is not aligned.
    ClientDkimFailed { client_id: i64 },
    /// Anyone else.
    UnknownSender,
}

impl HoldReason {
    /// The audit's `reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            HoldReason::NoSender => "no_sender",
            HoldReason::NoFounderConfigured => "no_founder_configured",
            HoldReason::FounderUnsigned => "founder_unsigned",
            HoldReason::FounderDkimFailed => "founder_dkim_failed",
            HoldReason::ClientNotAllowed { .. } => "client_not_allowed",
            HoldReason::ClientUnsigned { .. } => "client_unsigned",
            HoldReason::ClientDkimFailed { .. } => "client_dkim_failed",
            HoldReason::UnknownSender => "unknown_sender",
        }
    }

    /// The same, for the founder (French).
    pub fn sentence(self) -> &'static str {
        match self {
            HoldReason::NoSender => "l'e-mail n'a pas d'expéditeur lisible",
            HoldReason::NoFounderConfigured => {
                "ATLAS_FOUNDER_EMAIL n'est pas configurée : aucun expéditeur ne peut être vérifié"
            }
            HoldReason::FounderUnsigned => {
                "il porte ton adresse mais aucune signature DKIM : l'en-tête From se falsifie sans effort"
            }
            HoldReason::FounderDkimFailed => {
                "il porte ton adresse mais sa signature DKIM ne correspond pas à ton domaine"
            }
            HoldReason::ClientNotAllowed { .. } => {
                "l'expéditeur est un client connu, mais sa fiche n'autorise pas les lancements automatiques"
            }
            HoldReason::ClientUnsigned { .. } => {
                "l'expéditeur est un client autorisé, mais l'e-mail n'a aucune signature DKIM"
            }
            HoldReason::ClientDkimFailed { .. } => {
                "l'expéditeur est un client autorisé, mais la signature DKIM ne correspond pas à son domaine"
            }
            HoldReason::UnknownSender => "l'expéditeur n'est ni toi ni un client autorisé",
        }
    }

    pub fn client_id(self) -> Option<i64> {
        match self {
            HoldReason::ClientNotAllowed { client_id }
            | HoldReason::ClientUnsigned { client_id }
            | HoldReason::ClientDkimFailed { client_id } => Some(client_id),
            _ => None,
        }
    }
}

/// Whether the message carried no DKIM signature at all (as opposed to a failing one).
fn unsigned(detail: Option<&str>) -> bool {
    detail.is_none_or(|d| d.trim().is_empty() || d == UNSIGNED_DETAIL)
}

/// The decision (Authority) or the reason to wait (HoldReason).
pub fn decide(f: &AuthorFacts<'_>) -> Result<Authority, HoldReason> {
    if f.approved {
        return Ok(Authority::Approved);
    }
    let Some(from) = f.from else { return Err(HoldReason::NoSender) };
    let Some(founder) = f.founder else { return Err(HoldReason::NoFounderConfigured) };
    if founder.is(from) {
        return match (f.dkim_pass, f.trust_unsigned_founder) {
            (true, _) => Ok(Authority::Founder),
            (false, true) => Ok(Authority::FounderUnsigned),
            (false, false) if unsigned(f.dkim_detail) => Err(HoldReason::FounderUnsigned),
            (false, false) => Err(HoldReason::FounderDkimFailed),
        };
    }
    match f.envelope_client {
        Some(c) if !c.auto_launch => Err(HoldReason::ClientNotAllowed { client_id: c.id }),
        Some(c) if f.dkim_pass => Ok(Authority::Client { client_id: c.id }),
        Some(c) if unsigned(f.dkim_detail) => Err(HoldReason::ClientUnsigned { client_id: c.id }),
        Some(c) => Err(HoldReason::ClientDkimFailed { client_id: c.id }),
        None => Err(HoldReason::UnknownSender),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(auto_launch: bool) -> Client {
        Client {
            id: 4,
            name: "Boutique".into(),
            mrr: Some(100.0),
            status: "actif".into(),
            priority: "haute".into(),
            emails: vec!["jean@boutique.fr".into()],
            domains: vec![],
            ai_provider: None,
            ai_model: None,
            claude_model: None,
            auto_launch,
        }
    }

    #[test]
    fn only_verified_authors_launch_on_their_own() {
        let founder = Founder(EmailAddress::parse("boss@maboite.fr").unwrap());
        let boss = EmailAddress::parse("Boss@MaBoite.fr").unwrap();
        let jean = EmailAddress::parse("jean@boutique.fr").unwrap();
        let stranger = EmailAddress::parse("x@ailleurs.fr").unwrap();
        let (allowed, not_allowed) = (client(true), client(false));
        let base = AuthorFacts {
            from: Some(&boss),
            dkim_pass: true,
            dkim_detail: Some("d=maboite.fr s=atlas pass"),
            founder: Some(&founder),
            envelope_client: None,
            trust_unsigned_founder: false,
            approved: false,
        };
        let unsigned = Some(UNSIGNED_DETAIL);
        let failing = Some("d=maboite.fr s=atlas fail (body hash)");
        let cases: Vec<(AuthorFacts, Result<Authority, HoldReason>)> = vec![
            (base, Ok(Authority::Founder)),
            (AuthorFacts { dkim_pass: false, dkim_detail: unsigned, ..base }, Err(HoldReason::FounderUnsigned)),
            (AuthorFacts { dkim_pass: false, dkim_detail: failing, ..base }, Err(HoldReason::FounderDkimFailed)),
            (
                AuthorFacts { dkim_pass: false, dkim_detail: unsigned, trust_unsigned_founder: true, ..base },
                Ok(Authority::FounderUnsigned),
            ),
            // The flag trusts the founder's own address only.
            (
                AuthorFacts { from: Some(&stranger), dkim_pass: false, trust_unsigned_founder: true, ..base },
                Err(HoldReason::UnknownSender),
            ),
            (AuthorFacts { from: Some(&stranger), ..base }, Err(HoldReason::UnknownSender)),
            (
                AuthorFacts { from: Some(&jean), envelope_client: Some(&allowed), ..base },
                Ok(Authority::Client { client_id: 4 }),
            ),
            (
                AuthorFacts { from: Some(&jean), envelope_client: Some(&not_allowed), ..base },
                Err(HoldReason::ClientNotAllowed { client_id: 4 }),
            ),
            (
                AuthorFacts {
                    from: Some(&jean),
                    envelope_client: Some(&allowed),
                    dkim_pass: false,
                    dkim_detail: unsigned,
                    ..base
                },
                Err(HoldReason::ClientUnsigned { client_id: 4 }),
            ),
            (
                AuthorFacts {
                    from: Some(&jean),
                    envelope_client: Some(&allowed),
                    dkim_pass: false,
                    dkim_detail: failing,
                    ..base
                },
                Err(HoldReason::ClientDkimFailed { client_id: 4 }),
            ),
            (AuthorFacts { from: None, ..base }, Err(HoldReason::NoSender)),
            (AuthorFacts { founder: None, ..base }, Err(HoldReason::NoFounderConfigured)),
            (AuthorFacts { from: Some(&stranger), dkim_pass: false, approved: true, ..base }, Ok(Authority::Approved)),
        ];
        for (i, (facts, expected)) in cases.into_iter().enumerate() {
            assert_eq!(decide(&facts), expected, "case {i}: {facts:?}");
        }
    }
}
