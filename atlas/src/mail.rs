//! One e-mail as Atlas sees it, parsed once from its raw bytes: the newtypes that carry
//! parsed values (address, Message-ID), the parts to scan, the text the classifier reads
//! and the forward markers. Parsing never fails: malformed MIME still gives a message.

use std::fmt;

use mail_parser::{MessageParser, MimeHeaders, PartType};
use sha2::{Digest, Sha256};

/// Public webmail domains: an address there says nothing about which company wrote it.
pub const PUBLIC_MAIL_DOMAINS: &[&str] = &[
    "gmail.com",
    "googlemail.com",
    "hotmail.com",
    "hotmail.fr",
    "outlook.com",
    "outlook.fr",
    "live.com",
    "live.fr",
    "msn.com",
    "yahoo.com",
    "yahoo.fr",
    "icloud.com",
    "me.com",
    "free.fr",
    "orange.fr",
    "wanadoo.fr",
    "sfr.fr",
    "neuf.fr",
    "laposte.net",
    "bbox.fr",
    "aol.com",
    "gmx.fr",
    "gmx.com",
    "protonmail.com",
    "proton.me",
];

/// An e-mail address, lower-cased, with exactly one `@` and a dotted domain.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EmailAddress(String);

impl EmailAddress {
    pub fn parse(raw: &str) -> Option<Self> {
        let s = raw.trim().trim_matches(|c| c == '<' || c == '>').trim().to_lowercase();
        let (local, domain) = s.split_once('@')?;
        let ok_char = |c: char| !c.is_whitespace() && !"<>()[],;:\"\\".contains(c);
        if local.is_empty()
            || domain.len() < 3
            || !domain.contains('.')
            || domain.contains('@')
            || domain.starts_with('.')
            || domain.ends_with('.')
            || !s.chars().all(ok_char)
        {
            return None;
        }
        Some(Self(s))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    pub fn domain(&self) -> &str {
        self.0.split_once('@').map(|(_, d)| d).unwrap_or("")
    }
    pub fn is_public_webmail(&self) -> bool {
        is_public_domain(self.domain())
    }
}

impl fmt::Display for EmailAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub fn is_public_domain(domain: &str) -> bool {
    let d = domain.trim().to_lowercase();
    PUBLIC_MAIL_DOMAINS.contains(&d.as_str())
}

/// A usable Message-ID (without angle brackets): non-empty, no whitespace, one `@`, at most
/// 250 characters. Anything else is not an identity we can deduplicate on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageId(String);

impl MessageId {
    pub fn parse(raw: &str) -> Option<Self> {
        let s = raw.trim().trim_start_matches('<').trim_end_matches('>').trim();
        if s.is_empty() || s.len() > 250 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return None;
        }
        let (left, right) = s.split_once('@')?;
        if left.is_empty() || right.is_empty() {
            return None;
        }
        Some(Self(s.to_string()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The deduplication key of a message: its Message-ID, or the SHA-256 of its raw bytes when it
/// has no usable one (stable: the same bytes re-announced give the same key).
pub fn message_key(message_id: Option<&MessageId>, raw: &[u8]) -> String {
    match message_id {
        Some(id) => format!("mid:{}", id.as_str()),
        None => format!("sha256:{}", sha256_hex(raw)),
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// One leaf MIME part.
#[derive(Debug, Clone)]
pub struct Part {
    /// The decoded file name (RFC 2047 and RFC 2231 `filename*=` handled by the parser).
    pub name: Option<String>,
    pub content_type: String,
    pub bytes: Vec<u8>,
    /// Not one of the message's text bodies.
    pub is_attachment: bool,
}

/// The first `Return-Path:` of the header section (folded lines joined), as an address.
fn first_return_path(raw: &[u8]) -> Option<EmailAddress> {
    let text = String::from_utf8_lossy(&raw[..raw.len().min(64 * 1024)]);
    for line in text.split('\n').map(|l| l.trim_end_matches('\r')) {
        if line.is_empty() {
            return None;
        }
        let Some((name, value)) = line.split_once(':') else { continue };
        if name.eq_ignore_ascii_case("return-path") {
            let value = value.trim();
            let addr = value.split_whitespace().next().unwrap_or("");
            return EmailAddress::parse(addr.trim_start_matches('<').trim_end_matches('>'));
        }
    }
    None
}

/// A message parsed once.
#[derive(Debug, Clone)]
pub struct Mail {
    pub message_id: Option<MessageId>,
    pub from: Option<EmailAddress>,
    /// The envelope sender the receiving server recorded: the first `Return-Path` header (the
    /// one the final delivery prepends; any further one came with the message). None for a
    /// null sender (`<>`) or when there is none.
    pub return_path: Option<EmailAddress>,
    pub subject: String,
    /// The text bodies (HTML converted to text when there is no plain text).
    pub body: String,
    /// Every leaf part, bodies included: everything is scanned.
    pub parts: Vec<Part>,
    /// The parser could not make sense of the MIME structure: the raw text is the body.
    pub malformed: bool,
}

impl Mail {
    pub fn parse(raw: &[u8]) -> Mail {
        let Some(message) = MessageParser::default().parse(raw) else {
            return Mail {
                message_id: None,
                from: None,
                return_path: first_return_path(raw),
                subject: String::new(),
                body: String::from_utf8_lossy(raw).into_owned(),
                parts: vec![Part {
                    name: None,
                    content_type: "application/octet-stream".into(),
                    bytes: raw.to_vec(),
                    is_attachment: false,
                }],
                malformed: true,
            };
        };
        let message_id = message.message_id().and_then(MessageId::parse);
        let from = message.from().and_then(|a| a.first()).and_then(|a| a.address()).and_then(EmailAddress::parse);
        let subject = message.subject().unwrap_or("").trim().to_string();
        let mut body = String::new();
        for i in 0..message.text_body_count().max(1) {
            if let Some(text) = message.body_text(i) {
                if !body.is_empty() {
                    body.push('\n');
                }
                body.push_str(&text);
            }
        }
        let body_ids: Vec<u32> = message.text_body.iter().chain(message.html_body.iter()).copied().collect();
        let mut parts = Vec::new();
        for (index, part) in message.parts.iter().enumerate() {
            if matches!(part.body, PartType::Multipart(_)) {
                continue;
            }
            let content_type = part
                .content_type()
                .map(|ct| match ct.subtype() {
                    Some(sub) => format!("{}/{}", ct.ctype(), sub),
                    None => ct.ctype().to_string(),
                })
                .unwrap_or_else(|| "text/plain".into())
                .to_lowercase();
            parts.push(Part {
                name: part.attachment_name().map(str::to_string),
                content_type,
                bytes: part.contents().to_vec(),
                is_attachment: !body_ids.contains(&(index as u32)),
            });
        }
        let malformed = message.parts.iter().any(|p| p.is_encoding_problem);
        Mail { message_id, from, return_path: first_return_path(raw), subject, body, parts, malformed }
    }

    pub fn attachments(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().filter(|p| p.is_attachment)
    }

    pub fn attachment_count(&self) -> usize {
        self.attachments().count()
    }

    /// The subject says this is a forward (Fwd:, Fw:, TR:, Transf:).
    pub fn subject_is_forward(&self) -> bool {
        subject_is_forward(&self.subject)
    }

    /// Forwarded: by its subject or by a forward marker in the body.
    pub fn is_forward(&self) -> bool {
        self.subject_is_forward() || split_cover(&self.body).marker.is_some()
    }
}

pub fn subject_is_forward(subject: &str) -> bool {
    let s = subject.trim_start().to_lowercase();
    ["fwd:", "fw:", "tr:", "tr :", "fwd :", "transf:", "transf :"].iter().any(|p| s.starts_with(p))
}

/// The subject with its forward/reply prefixes removed ("Fwd: TR: Re: x" → "x").
pub fn strip_subject_prefixes(subject: &str) -> &str {
    let mut s = subject.trim();
    loop {
        let lower = s.to_lowercase();
        let Some(p) =
            ["fwd:", "fw:", "tr:", "re:", "transf:", "fwd :", "tr :", "re :"].iter().find(|p| lower.starts_with(*p))
        else {
            return s;
        };
        s = s[p.len()..].trim_start();
    }
}

/// A body split into what the immediate sender wrote (cover) and what they quoted or forwarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverSplit {
    pub cover: String,
    pub quoted: String,
    /// The line that opened the quoted part, when it was a forward or reply header.
    pub marker: Option<String>,
}

/// Lines that open a forwarded message (French and English clients).
fn is_forward_marker(line: &str) -> bool {
    let l = line.trim().trim_start_matches('>').trim().to_lowercase();
    let dashed = l.starts_with("---") || l.starts_with("___");
    (dashed
        && ["forwarded message", "message transféré", "message d'origine", "original message", "message original"]
            .iter()
            .any(|m| l.contains(m)))
        || l.starts_with("début du message réexpédié")
        || l.starts_with("begin forwarded message")
}

/// "Le 3 mars 2026 à 10:02, X <x@y> a écrit :" / "On Tue, … wrote:" open a quoted reply.
fn is_reply_header(line: &str) -> bool {
    let l = line.trim().to_lowercase();
    (l.starts_with("le ") && (l.ends_with("a écrit :") || l.ends_with("a écrit:")))
        || (l.starts_with("on ") && l.ends_with("wrote:"))
}

pub fn split_cover(body: &str) -> CoverSplit {
    let lines: Vec<&str> = body.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let marker = is_forward_marker(line) || is_reply_header(line);
        let quoted = line.trim_start().starts_with('>');
        if marker || quoted {
            return CoverSplit {
                cover: lines[..i].join("\n").trim().to_string(),
                quoted: lines[i..].join("\n").trim().to_string(),
                marker: marker.then(|| line.trim().to_string()),
            };
        }
    }
    CoverSplit { cover: body.trim().to_string(), quoted: String::new(), marker: None }
}

/// The sender of the quoted original: the first "De :" / "From:" header line of the quoted
/// part (quote marks and markdown bold tolerated), as an address.
pub fn forwarded_from(quoted: &str) -> Option<EmailAddress> {
    for line in quoted.lines().take(200) {
        let l = line.trim_start_matches(|c: char| c == '>' || c.is_whitespace()).trim_start_matches('*');
        let lower = l.to_lowercase();
        let rest = ["de :", "de:", "from:", "from :", "expéditeur :", "expéditeur:"]
            .iter()
            .find(|p| lower.starts_with(*p))
            .map(|p| &l[p.len()..]);
        let Some(rest) = rest else { continue };
        let rest = rest.trim_start_matches('*').trim();
        // "Name <addr>" or a bare address; "[mailto:addr]" in Outlook quotes.
        let candidate = match (rest.rfind('<'), rest.rfind('>')) {
            (Some(a), Some(b)) if a < b => &rest[a + 1..b],
            _ => rest.split_whitespace().find(|w| w.contains('@')).unwrap_or(rest),
        };
        let candidate = candidate.trim_matches(|c| "[]()\"'".contains(c)).trim_start_matches("mailto:");
        if let Some(addr) = EmailAddress::parse(candidate) {
            return Some(addr);
        }
    }
    None
}

/// `text` cut to at most `max` characters (never inside a character); says if it was cut.
pub fn truncate_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((i, _)) => (&text[..i], true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_once() {
        assert_eq!(EmailAddress::parse(" <Jean@Client.FR> ").unwrap().as_str(), "jean@client.fr");
        assert_eq!(EmailAddress::parse("jean@client.fr").unwrap().domain(), "client.fr");
        for bad in ["", "jean", "jean@", "@client.fr", "a b@c.fr", "x@localhost", "a@b@c.fr"] {
            assert!(EmailAddress::parse(bad).is_none(), "{bad}");
        }
        assert!(EmailAddress::parse("x@gmail.com").unwrap().is_public_webmail());
    }

    #[test]
    fn message_ids_and_fallback_keys() {
        assert_eq!(MessageId::parse("<abc@host>").unwrap().as_str(), "abc@host");
        for bad in ["", "<>", "no-at-sign", "a b@c", "@c", "a@"] {
            assert!(MessageId::parse(bad).is_none(), "{bad}");
        }
        let k1 = message_key(None, b"same bytes");
        assert_eq!(k1, message_key(None, b"same bytes"));
        assert_ne!(k1, message_key(None, b"other bytes"));
        assert!(k1.starts_with("sha256:"));
    }

    #[test]
    fn cover_and_quoted_are_split_at_forward_markers() {
        let body = "Peux-tu regarder ?\nMerci\n\n---------- Forwarded message ---------\nDe : Paul <paul@client.fr>\nLe site est en panne";
        let s = split_cover(body);
        assert_eq!(s.cover, "Peux-tu regarder ?\nMerci");
        assert!(s.quoted.contains("Le site est en panne"));
        assert!(s.marker.is_some());
        assert_eq!(forwarded_from(&s.quoted).unwrap().as_str(), "paul@client.fr");

        let reply = "Oui.\n\nLe mar. 3 mars 2026 à 10:02, Bob <bob@x.fr> a écrit :\n> question";
        assert_eq!(split_cover(reply).cover, "Oui.");
        let plain = "Bonjour, juste un message.";
        assert_eq!(split_cover(plain).quoted, "");
    }

    #[test]
    fn forwarded_from_reads_outlook_and_bold_headers() {
        assert_eq!(
            forwarded_from("**De :** Marie Dupont [mailto:marie@boutique.fr]\nEnvoyé : lundi").unwrap().as_str(),
            "marie@boutique.fr"
        );
        assert_eq!(forwarded_from("> From: ops@shop.com\n> Subject: x").unwrap().as_str(), "ops@shop.com");
        assert!(forwarded_from("rien ici").is_none());
    }

    #[test]
    fn rfc2231_names_and_every_part_are_kept() {
        let raw = concat!(
            "From: a@b.fr\r\nSubject: pj\r\nMessage-ID: <m1@b.fr>\r\nMIME-Version: 1.0\r\n",
            "Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n",
            "--XX\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nVoir la pièce.\r\n",
            "--XX\r\nContent-Type: application/octet-stream\r\n",
            "Content-Disposition: attachment; filename*=UTF-8''facture%20%C3%A9t%C3%A9.pdf\r\n\r\nPDFDATA\r\n",
            "--XX\r\nContent-Type: application/octet-stream\r\n\r\nNO-NAME-BLOB\r\n",
            "--XX--\r\n"
        );
        let mail = Mail::parse(raw.as_bytes());
        assert_eq!(mail.message_id.as_ref().unwrap().as_str(), "m1@b.fr");
        assert_eq!(mail.parts.len(), 3);
        assert_eq!(mail.attachment_count(), 2);
        assert_eq!(mail.parts[1].name.as_deref(), Some("facture été.pdf"));
        assert!(mail.parts[2].name.is_none());
        assert_eq!(mail.parts[2].bytes, b"NO-NAME-BLOB");
        assert!(mail.body.contains("Voir la pièce"));
    }

    #[test]
    fn subjects() {
        assert!(subject_is_forward("TR: facture"));
        assert!(subject_is_forward("Fwd: [Atlas] récap"));
        assert!(!subject_is_forward("Trop cher"));
        assert_eq!(strip_subject_prefixes("Fwd: TR: Re: [Atlas] x"), "[Atlas] x");
    }

    #[test]
    fn truncation_counts_characters() {
        let (t, cut) = truncate_chars("éééé", 2);
        assert_eq!((t, cut), ("éé", true));
        assert_eq!(truncate_chars("ab", 5), ("ab", false));
    }
}
