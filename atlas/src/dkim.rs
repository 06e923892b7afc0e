//! The DKIM verdict computed at intake and stored on the raw message: the two classifier
//! short-circuits act only on a message whose From domain is vouched for by a passing,
//! aligned signature (From and Subject alone are forgeable). Keys come from DNS, or from
//! static records consulted first (a private domain, or offline tests): the resolver is
//! injectable.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mail_auth::common::parse::TxtRecordParser;
use mail_auth::common::verify::DomainKey;
use mail_auth::hickory_resolver::config::{ResolverConfig, ResolverOpts};
use mail_auth::{AuthenticatedMessage, DkimResult, MessageAuthenticator, Parameters, ResolverCache, Txt};

use super::mail::EmailAddress;

/// The verdict stored with the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DkimVerdict {
    /// A signature passed and its domain is the From domain or a parent of it.
    pub pass: bool,
    /// One line per signature ("d=example.org s=sel pass"), or why there is none.
    pub detail: String,
}

/// Static TXT records (`selector._domainkey.domain` → record text), looked up before DNS.
#[derive(Default, Clone)]
struct StaticTxt(HashMap<Box<str>, Txt>);

impl StaticTxt {
    fn key(name: &str) -> String {
        let n = name.trim().to_ascii_lowercase();
        if n.ends_with('.') {
            n
        } else {
            format!("{n}.")
        }
    }
}

impl ResolverCache<Box<str>, Txt> for StaticTxt {
    fn get<Q>(&self, name: &Q) -> Option<Txt>
    where
        Box<str>: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.0.get(name).cloned()
    }
    fn remove<Q>(&self, _name: &Q) -> Option<Txt>
    where
        Box<str>: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        None
    }
    fn insert(&self, _key: Box<str>, _value: Txt, _valid_until: Instant) {}
}

#[derive(Debug, thiserror::Error)]
pub enum DkimConfigError {
    #[error("cannot read the DKIM key file {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("DKIM key file {path}, line {line}: {problem}")]
    Line { path: String, line: usize, problem: String },
}

/// Verifies DKIM signatures with DNS (system resolver, short timeouts) or offline.
#[derive(Clone)]
pub struct DkimVerifier {
    authenticator: Arc<MessageAuthenticator>,
    records: StaticTxt,
    use_dns: bool,
}

impl DkimVerifier {
    /// DNS through the system configuration (falls back to an empty configuration, every
    /// lookup then fails closed), plus the static records.
    pub fn system(records: HashMap<String, String>) -> Result<Self, DkimConfigError> {
        let mut opts = ResolverOpts::default();
        opts.timeout = Duration::from_secs(3);
        opts.attempts = 1;
        let authenticator = MessageAuthenticator::new_system_conf()
            .or_else(|_| MessageAuthenticator::new(ResolverConfig::default(), opts))
            .map_err(|e| DkimConfigError::Line { path: "(system resolver)".into(), line: 0, problem: e.to_string() })?;
        Ok(Self { authenticator: Arc::new(authenticator), records: Self::parse_records(records)?, use_dns: true })
    }

    /// Only the given records (`selector._domainkey.domain` → `v=DKIM1; k=…; p=…`); no network.
    pub fn offline(records: HashMap<String, String>) -> Result<Self, DkimConfigError> {
        let authenticator = MessageAuthenticator::new(ResolverConfig::default(), ResolverOpts::default())
            .map_err(|e| DkimConfigError::Line { path: "(resolver)".into(), line: 0, problem: e.to_string() })?;
        Ok(Self { authenticator: Arc::new(authenticator), records: Self::parse_records(records)?, use_dns: false })
    }

    fn parse_records(records: HashMap<String, String>) -> Result<StaticTxt, DkimConfigError> {
        let mut out = HashMap::new();
        for (name, text) in records {
            let key = DomainKey::parse(text.as_bytes()).map_err(|e| DkimConfigError::Line {
                path: name.clone(),
                line: 0,
                problem: format!("not a DKIM key record: {e}"),
            })?;
            out.insert(StaticTxt::key(&name).into_boxed_str(), Txt::from(key));
        }
        Ok(StaticTxt(out))
    }

    /// Reads `name record…` lines (`#` comments) from a key file.
    pub fn read_key_file(path: &Path) -> Result<HashMap<String, String>, DkimConfigError> {
        let shown = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|source| DkimConfigError::Read { path: shown.clone(), source })?;
        let mut out = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((name, record)) = line.split_once(char::is_whitespace) else {
                return Err(DkimConfigError::Line {
                    path: shown,
                    line: i + 1,
                    problem: "expected `selector._domainkey.domain v=DKIM1; …`".into(),
                });
            };
            out.insert(name.to_string(), record.trim().to_string());
        }
        Ok(out)
    }

    pub async fn verify(&self, raw: &[u8], from: Option<&EmailAddress>) -> DkimVerdict {
        let Some(message) = AuthenticatedMessage::parse(raw) else {
            return DkimVerdict { pass: false, detail: "unparsable headers".into() };
        };
        if message.dkim_headers.is_empty() {
            return DkimVerdict { pass: false, detail: "no DKIM-Signature".into() };
        }
        if !self.use_dns {
            // Every key must come from the static records: a signature whose key is not
            // there is a temporary error, never a pass.
            let known = message.dkim_headers.iter().any(|h| {
                let sig = &h.header;
                self.records.0.contains_key(StaticTxt::key(&format!("{}._domainkey.{}", sig.s, sig.d)).as_str())
            });
            if !known {
                return DkimVerdict { pass: false, detail: "no key for the signing domain (offline)".into() };
            }
        }
        let params = Parameters::new(&message).with_txt_cache(&self.records);
        let outputs = self.authenticator.verify_dkim(params).await;
        let from_domain = from.map(|f| f.domain().to_string());
        let mut pass = false;
        let mut lines = Vec::new();
        for out in &outputs {
            let (d, s) = out.signature().map(|sig| (sig.d.to_ascii_lowercase(), sig.s.clone())).unwrap_or_default();
            let result = match out.result() {
                DkimResult::Pass => "pass".to_string(),
                DkimResult::Neutral(e) => format!("neutral ({e})"),
                DkimResult::Fail(e) => format!("fail ({e})"),
                DkimResult::PermError(e) => format!("permerror ({e})"),
                DkimResult::TempError(e) => format!("temperror ({e})"),
                DkimResult::None => "none".to_string(),
            };
            let aligned = from_domain.as_deref().is_some_and(|fd| fd == d || fd.ends_with(&format!(".{d}")));
            if matches!(out.result(), DkimResult::Pass) && aligned && !d.is_empty() {
                pass = true;
            }
            lines.push(format!("d={d} s={s} {result}{}", if aligned { "" } else { " (not aligned with From)" }));
        }
        DkimVerdict { pass, detail: lines.join("; ") }
    }
}
