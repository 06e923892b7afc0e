//! Which message may launch, and when: a cycle reclaims launches whose launcher died, sweeps
//! stale worktrees, and takes at most three candidates, each under a lease and the author's
//! authority (else held for the founder's approval, asked once by e-mail); as root without a
//! declared sandbox nothing starts and the founder is told once a day.

use std::time::Duration;

use serde_json::json;

use super::{LaunchResult, Launcher};
use crate::authority::{self, AuthorFacts, Authority, HoldReason};
use crate::client::Founder;
use crate::events::LaunchEvent;
use crate::mail::{truncate_chars, EmailAddress};
use crate::notify::Notifier;
use crate::store::{AtlasStore, AtlasStoreError, EmailRow, NewNotice};
use crate::{audit, worktree, EmailState};

use super::prompt::one_line;

/// Worktrees older than this are swept at the start of a cycle.
pub const STALE_WORKTREE_AGE: Duration = Duration::from_secs(7 * 24 * 3600);

/// Launches per cycle (anti runaway cost).
pub const MAX_PER_CYCLE: i64 = 3;

/// No second launch of a message within this window of a spawn audit.
pub const QUIET_WINDOW_MINUTES: i64 = 60;

/// Lease time to live, renewed every minute while the run lasts.
pub const LEASE_TTL_MINUTES: i64 = 5;

/// Whether Claude Code will refuse to start: root may not bypass permissions unless the
/// machine is declared a sandbox (`ATLAS_SANDBOXED=1`, which gives the child `IS_SANDBOX=1`).
pub fn root_blocks_bypass(is_root: bool, permission_mode: &str, sandboxed: bool) -> bool {
    is_root && permission_mode == "bypassPermissions" && !sandboxed
}

/// Whether `row`'s author may start Claude Code: the founder's DKIM-aligned From (or their
/// unsigned address when trusted), a client allowed on its envelope, or the founder's approval.
pub async fn author_authority(
    store: &dyn AtlasStore,
    row: &EmailRow,
    founder: Option<&Founder>,
    trust_unsigned_founder: bool,
) -> Result<Result<Authority, HoldReason>, AtlasStoreError> {
    let from = row.from_email.as_deref().and_then(EmailAddress::parse);
    let client = match (row.client_id, row.client_source.as_deref()) {
        (Some(id), Some("envelope")) => store.client(id).await?,
        _ => None,
    };
    Ok(authority::decide(&AuthorFacts {
        from: from.as_ref(),
        dkim_pass: row.dkim_pass,
        dkim_detail: row.dkim_detail.as_deref(),
        founder,
        envelope_client: client.as_ref(),
        trust_unsigned_founder,
        approved: row.approved_at.is_some(),
    }))
}

/// `classified` → `awaiting_approval`, audited with the reason, and the approval request
/// e-mailed to the founder (once). The launcher calls it under its lease; the pipeline right
/// after the classification, so the founder is asked at once, not at the next launch cycle.
/// True when this call held the message.
pub async fn hold_for_approval(
    store: &dyn AtlasStore,
    notifier: Option<&Notifier>,
    row: &EmailRow,
    reason: HoldReason,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<bool, AtlasStoreError> {
    let event = LaunchEvent::LaunchHeld {
        reason: reason.as_str(),
        from: row.from_email.clone(),
        dkim_pass: row.dkim_pass,
        client_id: reason.client_id(),
        intent: row.intent.map(|i| i.as_str()),
        complexity: row.complexity.map(|c| c.as_str()),
    };
    let held = store
        .transition(row.id, EmailState::Classified, EmailState::AwaitingApproval, event.name(), event.detail(), now)
        .await?;
    if held {
        tracing::warn!(email = row.id, reason = reason.as_str(), "Atlas: launch held for the founder's approval");
        if let Some(notifier) = notifier {
            notifier.notify_once(approval_notice(row, reason)).await?;
        }
    }
    Ok(held)
}

/// The e-mail asking the founder to approve (or refuse) a held launch: what arrived, who
/// sent it and why that author is not verified, what the classifier made of it, and the
/// two commands. Composed by code; the justification is quoted as the classifier's words.
pub fn approval_notice(row: &EmailRow, reason: HoldReason) -> NewNotice {
    let subject = one_line(&row.subject);
    let dkim = match (row.dkim_pass, row.dkim_detail.as_deref()) {
        (true, _) => "signature valide, alignée sur le domaine".to_string(),
        (false, None | Some(authority::UNSIGNED_DETAIL)) => "aucune signature".to_string(),
        (false, Some(detail)) => format!("non vérifiée ({})", one_line(detail)),
    };
    let (justification, _) = truncate_chars(row.justification.as_deref().unwrap_or(""), 300);
    let mut body = String::new();
    body.push_str("Bonjour,\n\n");
    body.push_str(&format!(
        "Atlas a reçu un e-mail qui lancerait Claude Code sur ton dépôt, mais son auteur n'est pas vérifié : {}.\n",
        reason.sentence()
    ));
    body.push_str("Rien n'a été lancé ; l'e-mail attend ta décision.\n\n");
    body.push_str(&format!("E-mail n° {}\n", row.id));
    body.push_str(&format!("Expéditeur : {}\n", one_line(row.from_email.as_deref().unwrap_or("(inconnu)"))));
    body.push_str(&format!("DKIM : {dkim}\n"));
    body.push_str(&format!("Sujet : {}\n", if subject.is_empty() { "(sans objet)" } else { &subject }));
    body.push_str(&format!(
        "Verdict du classifieur : {} / {} (confiance {})\n",
        row.intent.map(|i| i.as_str()).unwrap_or("?"),
        row.complexity.map(|c| c.as_str()).unwrap_or("leger"),
        row.confidence.map(|c| format!("{:.0} %", c * 100.0)).unwrap_or_else(|| "inconnue".into())
    ));
    if !justification.trim().is_empty() {
        body.push_str(&format!("Justification (mots du classifieur) : « {} »\n", one_line(justification)));
    }
    body.push_str(&format!(
        "\nPour le lancer : arthur atlas approve {id}\nPour le refuser : arthur atlas cancel {id}\n\
         (ou les boutons « Approuver » et « Refuser » de la page /atlas)\n\n— Atlas\n",
        id = row.id
    ));
    NewNotice {
        email_id: Some(row.id),
        kind: "approval_request".into(),
        dedupe_key: format!("approval:{}", row.id),
        subject: format!("[Atlas] à approuver — {}", if subject.is_empty() { "(sans objet)" } else { &subject }),
        body,
    }
}

/// What one cycle did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CycleReport {
    pub disabled: bool,
    pub reclaimed: usize,
    pub candidates: usize,
    /// Held for the founder's approval: the author is not verified.
    pub held: usize,
    pub skipped_lock_held: usize,
    /// Locked, then found launched meanwhile by another worker.
    pub no_longer_candidate: usize,
    pub launched: usize,
    pub actioned: usize,
    pub failed: usize,
    pub retry_later: usize,
    pub escalated: usize,
    /// Parked: the API was unavailable (or root refused); tried again after a backoff.
    pub parked: usize,
    /// Not launched: Arthur runs as root and Claude Code would refuse bypassPermissions.
    pub blocked_as_root: usize,
}

impl Launcher {
    /// Whether this message's author may start Claude Code (spec §5.3's distrust of From,
    /// applied to the launch itself).
    pub async fn authority(&self, row: &EmailRow) -> Result<Result<Authority, HoldReason>, AtlasStoreError> {
        let founder = self.cfg.founder.as_deref().and_then(EmailAddress::parse).map(Founder);
        author_authority(self.store.as_ref(), row, founder.as_ref(), self.cfg.trust_unsigned_founder).await
    }

    /// `classified` → `awaiting_approval`, audited with the reason, and one e-mail to the
    /// founder saying how to approve or refuse.
    pub(super) async fn hold(&self, row: &EmailRow, reason: HoldReason) -> Result<(), AtlasStoreError> {
        hold_for_approval(self.store.as_ref(), Some(&self.notifier()), row, reason, self.now()).await.map(|_| ())
    }

    /// Arthur runs as root and Claude Code would refuse bypassPermissions: nothing is
    /// launched, the messages stay in the queue (never failed), the founder is told once a
    /// day why and what to do.
    pub(super) async fn blocked_as_root(&self, candidates: usize) -> Result<(), AtlasStoreError> {
        tracing::error!(
            candidates,
            "Atlas: Claude Code refuses bypassPermissions as root; run Arthur as its service user, \
             or set ATLAS_SANDBOXED=1 on a sandbox machine. Nothing launched."
        );
        let day = self.now().format("%Y-%m-%d");
        let body = format!(
            "Bonjour,\n\n{waiting}, mais Atlas ne lance rien : Arthur tourne en root \
             et Claude Code refuse le mode bypassPermissions en root (« --dangerously-skip-permissions cannot be used \
             with root/sudo privileges »).\n\nCe qu'il faut faire : lancer Arthur avec l'utilisateur du service \
             (systemd/arthur.service : User=arthur) ; ou, si la machine est un bac à sable jetable (conteneur de CI, \
             VM de test), mettre ATLAS_SANDBOXED=1 ; ou choisir un autre mode (ATLAS_PERMISSION_MODE=dontAsk avec \
             ATLAS_ALLOWED_TOOLS).\n\nLes e-mails restent dans la file : rien n'est perdu, ils partiront dès que \
             la configuration le permettra.\n\n— Atlas\n",
            waiting = if candidates == 1 {
                "1 e-mail attend d'être lancé".to_string()
            } else {
                format!("{candidates} e-mails attendent d'être lancés")
            }
        );
        self.notifier()
            .notify_once(NewNotice {
                email_id: None,
                kind: "root_bypass_refused".into(),
                dedupe_key: format!("root_bypass_refused:{day}"),
                subject: "[Atlas] rien n'est lancé : Arthur tourne en root".into(),
                body,
            })
            .await?;
        Ok(())
    }

    /// One launch cycle: reclaim launches whose launcher died, then up to three candidates.
    pub async fn cycle(&self) -> Result<CycleReport, AtlasStoreError> {
        let mut report =
            CycleReport { reclaimed: self.store.reclaim_interrupted(self.now()).await?.len(), ..Default::default() };
        if let Err(e) = self.notifier().retry_unsent().await {
            tracing::warn!("Atlas: retrying unsent notices failed: {e}");
        }
        if self.cfg.disabled {
            self.store.audit(None, audit::LAUNCH_DISABLED, json!({"switch": "ATLAS_DISABLED"}), self.now()).await?;
            report.disabled = true;
            return Ok(report);
        }
        if let Some(repo) = &self.cfg.repo {
            // Worktrees left behind (a crash, a kept branch) are removed after a week; their
            // branches stay, so no commit is ever lost.
            match worktree::sweep(repo, &self.cfg.data_dir.join("worktrees"), STALE_WORKTREE_AGE).await {
                Ok((0, _)) => {}
                Ok((n, bytes)) => tracing::info!(removed = n, bytes, "stale Atlas worktrees removed"),
                Err(e) => tracing::warn!("sweeping stale worktrees failed: {e}"),
            }
        }
        let quiet_since = self.now() - chrono::Duration::minutes(QUIET_WINDOW_MINUTES);
        let candidates = self.store.launch_candidates(quiet_since, self.now(), MAX_PER_CYCLE).await?;
        report.candidates = candidates.len();
        if !candidates.is_empty()
            && root_blocks_bypass(crate::child_env::running_as_root(), &self.cfg.permission_mode, self.cfg.sandboxed)
        {
            self.blocked_as_root(candidates.len()).await?;
            report.blocked_as_root = candidates.len();
            return Ok(report);
        }
        for row in candidates {
            if self.shutdown.as_ref().is_some_and(|s| s.is_cancelled()) {
                break;
            }
            let ttl = chrono::Duration::minutes(LEASE_TTL_MINUTES);
            if !self.store.try_lease(row.id, &self.holder, self.now(), ttl).await? {
                self.store.audit(Some(row.id), audit::SPAWN_SKIPPED_LOCK_HELD, json!({}), self.now()).await?;
                report.skipped_lock_held += 1;
                continue;
            }
            // The list may be stale: another worker can have launched this message since.
            if !self.store.still_candidate(row.id, quiet_since, self.now()).await? {
                self.store.release_lease(row.id, &self.holder).await?;
                report.no_longer_candidate += 1;
                continue;
            }
            // Read again under the lease: the approval may have come since the list.
            let row = self.store.email(row.id).await?.unwrap_or(row);
            let authority = match self.authority(&row).await? {
                Ok(a) => a,
                Err(reason) => {
                    let held = self.hold(&row, reason).await;
                    self.store.release_lease(row.id, &self.holder).await?;
                    held?;
                    report.held += 1;
                    continue;
                }
            };
            report.launched += 1;
            let result = self.launch_leased(&row, authority).await;
            self.store.release_lease(row.id, &self.holder).await?;
            match result? {
                LaunchResult::Actioned(_) => report.actioned += 1,
                LaunchResult::Failed(_) => report.failed += 1,
                LaunchResult::RetryLater(_) => report.retry_later += 1,
                LaunchResult::Escalated(_) => report.escalated += 1,
                LaunchResult::Parked(_) => report.parked += 1,
            }
        }
        Ok(report)
    }

    /// The lock watchdog, once: an alert (audit + log + one e-mail per lock) for every lease
    /// older than 10 minutes. `arthur serve` runs it as its own task (`watchdog`).
    pub async fn watch_locks(&self) -> Result<usize, AtlasStoreError> {
        crate::watchdog::LockWatchdog {
            store: self.store.clone(),
            clock: self.clock.clone(),
            notifier: self.notifier(),
        }
        .check()
        .await
    }
}
