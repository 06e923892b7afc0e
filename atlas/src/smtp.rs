//! Mail to the founder, and to nobody else (doctrine "zéro mail au client par l'IA"): the
//! recap after a run and every notice go through here. `ATLAS_SMTP_URL` is parsed once into
//! an [`SmtpAccount`] whose password is a [`Secret`]; every message gets an envelope of
//! exactly the founder and is checked before it leaves; a send has a timeout; no error,
//! `Debug` or `Display` of this module carries the password. What a mail says is composed
//! elsewhere (`recap`, `notify`): this module only delivers a [`Letter`].

use std::fmt;
use std::time::Duration;

use arthur_agents::secret::Secret;
use lettre::address::Envelope;
use lettre::message::header::{self, ContentType};
use lettre::message::{Attachment, Mailbox, Mailboxes, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// Budget for the whole send (connection, TLS, authentication, transfer) and for each SMTP
/// command inside it.
pub const SMTP_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum SmtpError {
    #[error("invalid ATLAS_SMTP_URL: {0}")]
    Url(String),
    #[error("invalid {which} address {value:?}: {reason}")]
    Address { which: &'static str, value: String, reason: String },
    #[error("an e-mail of Atlas goes to the founder only; refusing recipients {0:?}")]
    Recipients(Vec<String>),
    #[error("cannot build the e-mail: {0}")]
    Build(String),
    #[error("cannot send the e-mail through the SMTP server {server}: {reason}")]
    Send { server: String, reason: String },
    #[error("sending the e-mail through the SMTP server {server} timed out after {secs} s")]
    Timeout { server: String, secs: u64 },
}

/// How the connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpSecurity {
    /// `smtp://`: no TLS. Only accepted towards a loopback host (a local relay, the tests).
    Plain,
    /// `smtp+starttls://`: STARTTLS required before anything is authenticated or sent.
    StartTls,
    /// `smtps://`: TLS from the first byte (submissions port).
    Tls,
}

impl SmtpSecurity {
    fn scheme(self) -> &'static str {
        match self {
            SmtpSecurity::Plain => "smtp",
            SmtpSecurity::StartTls => "smtp+starttls",
            SmtpSecurity::Tls => "smtps",
        }
    }
}

/// `smtp://user:password@host:port` (plain, loopback only; port 25 by default),
/// `smtp+starttls://…` (587) or `smtps://…` (465). User and password are optional together
/// (a relay that does not authenticate). The password is a [`Secret`].
#[derive(Clone)]
pub struct SmtpAccount {
    pub host: String,
    pub port: u16,
    pub security: SmtpSecurity,
    pub user: Option<String>,
    pub password: Option<Secret>,
}

impl fmt::Debug for SmtpAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SmtpAccount({})", self.label())
    }
}

impl fmt::Display for SmtpAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl SmtpAccount {
    pub fn parse(raw: &str) -> Result<Self, SmtpError> {
        // Never echo the URL: it holds the password.
        let url = url::Url::parse(raw.trim()).map_err(|e| SmtpError::Url(format!("not a URL ({e})")))?;
        let security = match url.scheme() {
            "smtp" => SmtpSecurity::Plain,
            "smtp+starttls" => SmtpSecurity::StartTls,
            "smtps" => SmtpSecurity::Tls,
            other => return Err(SmtpError::Url(format!("scheme {other:?} (expected smtp, smtp+starttls or smtps)"))),
        };
        let host = url
            .host_str()
            .map(|h| h.trim_matches(|c| c == '[' || c == ']').to_string())
            .filter(|h| !h.is_empty())
            .ok_or_else(|| SmtpError::Url("no host".into()))?;
        if security == SmtpSecurity::Plain && !is_loopback(&host) {
            return Err(SmtpError::Url(format!(
                "smtp:// (no TLS) is only accepted towards a loopback host, not {host:?}; use smtps:// or smtp+starttls://"
            )));
        }
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        let user = decode(url.username());
        let password = url.password().map(decode);
        let (user, password) = match (user.is_empty(), password) {
            (true, None) => (None, None),
            (false, Some(p)) if !p.is_empty() => (Some(user), Some(Secret::new(p))),
            (true, Some(_)) => return Err(SmtpError::Url("a password without a user name".into())),
            (false, _) => return Err(SmtpError::Url("a user name without a password".into())),
        };
        let port = url.port().unwrap_or(match security {
            SmtpSecurity::Plain => 25,
            SmtpSecurity::StartTls => 587,
            SmtpSecurity::Tls => 465,
        });
        Ok(Self { host, port, security, user, password })
    }

    /// `scheme://user@host:port` (no password): for logs and errors.
    pub fn label(&self) -> String {
        let user = self.user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        format!("{}://{user}{host}:{}", self.security.scheme(), self.port)
    }

    /// `text` with every occurrence of the password replaced: a server or library message
    /// that echoes it cannot carry it into an error.
    fn scrub(&self, text: String) -> String {
        crate::redact::redact_known(&text, self.password.as_ref().map_or("", |p| p.expose()))
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().map(|ip| ip.is_loopback()).unwrap_or(false)
}

/// A plain-text e-mail composed by code, with its attachments.
#[derive(Debug, Clone, Default)]
pub struct Letter {
    /// One line (the composer's job).
    pub subject: String,
    pub body: String,
    pub attachments: Vec<Attached>,
}

/// A file joined to a letter.
#[derive(Debug, Clone)]
pub struct Attached {
    pub name: String,
    /// Its MIME type (`application/octet-stream` when it does not parse).
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

/// What [`send`] did.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The only recipient (the founder's address).
    pub recipient: String,
    /// The server's final reply to the message (code and text).
    pub server_reply: String,
}

fn mailbox(which: &'static str, value: &str) -> Result<Mailbox, SmtpError> {
    value.trim().parse::<Mailbox>().map_err(|e| SmtpError::Address {
        which,
        value: one_line(value),
        reason: e.to_string(),
    })
}

/// The message for `letter`, addressed to `founder` and nobody else.
pub fn message(from: &str, founder: &str, letter: &Letter) -> Result<Message, SmtpError> {
    let from = mailbox("sender", from)?;
    let founder = mailbox("founder", founder)?;
    // The envelope is set explicitly: the SMTP recipients are exactly the founder, whatever
    // the headers say.
    let envelope = Envelope::new(Some(from.email.clone()), vec![founder.email.clone()])
        .map_err(|e| SmtpError::Build(e.to_string()))?;
    let builder = Message::builder()
        .from(from)
        .to(founder.clone())
        .subject(one_line(&letter.subject))
        .message_id(None)
        .envelope(envelope);
    let message = if letter.attachments.is_empty() {
        builder.singlepart(SinglePart::plain(letter.body.clone()))
    } else {
        let mut parts = MultiPart::mixed().singlepart(SinglePart::plain(letter.body.clone()));
        for a in &letter.attachments {
            let content_type = ContentType::parse(a.content_type)
                .unwrap_or(ContentType::parse("application/octet-stream").expect("a valid MIME type"));
            parts = parts.singlepart(Attachment::new(a.name.clone()).body(a.bytes.clone(), content_type));
        }
        builder.multipart(parts)
    }
    .map_err(|e| SmtpError::Build(e.to_string()))?;
    only_founder(&message, &founder)?;
    Ok(message)
}

/// Refuses a message whose envelope or headers would reach anyone but the founder.
fn only_founder(message: &Message, founder: &Mailbox) -> Result<(), SmtpError> {
    let rcpt = message.envelope().to();
    let mut extra: Vec<String> = rcpt.iter().filter(|a| **a != founder.email).map(|a| a.to_string()).collect();
    for header in ["Cc", "Bcc"] {
        if let Some(value) = message.headers().get_raw(header) {
            extra.push(format!("{header}: {value}"));
        }
    }
    let to: Vec<Mailbox> =
        message.headers().get::<header::To>().map(|to| Mailboxes::from(to).into_iter().collect()).unwrap_or_default();
    if to.len() != 1 || to[0].email != founder.email {
        extra.push(format!("To: {}", message.headers().get_raw("To").unwrap_or_default()));
    }
    if rcpt.len() != 1 || !extra.is_empty() {
        return Err(SmtpError::Recipients(extra));
    }
    Ok(())
}

/// Sends `letter` to the founder only, within [`SMTP_TIMEOUT`].
pub async fn send(account: &SmtpAccount, from: &str, founder: &str, letter: &Letter) -> Result<Sent, SmtpError> {
    let message = message(from, founder, letter)?;
    let recipient = message.envelope().to().first().map(|a| a.to_string()).unwrap_or_default();
    let server = account.label();
    let transport = transport(account)?;
    match tokio::time::timeout(SMTP_TIMEOUT, transport.send(message)).await {
        Err(_) => Err(SmtpError::Timeout { server, secs: SMTP_TIMEOUT.as_secs() }),
        Ok(Err(e)) if e.is_timeout() => Err(SmtpError::Timeout { server, secs: SMTP_TIMEOUT.as_secs() }),
        Ok(Err(e)) => Err(SmtpError::Send { server, reason: account.scrub(error_chain(&e)) }),
        Ok(Ok(r)) => Ok(Sent {
            recipient,
            server_reply: account.scrub(format!("{} {}", r.code(), r.message().collect::<Vec<_>>().join(" "))),
        }),
    }
}

fn transport(account: &SmtpAccount) -> Result<AsyncSmtpTransport<Tokio1Executor>, SmtpError> {
    let tls = |host: &str| {
        TlsParameters::new(host.to_string()).map_err(|e| SmtpError::Send {
            server: account.label(),
            reason: account.scrub(format!("TLS setup: {}", error_chain(&e))),
        })
    };
    let tls = match account.security {
        SmtpSecurity::Plain => Tls::None,
        SmtpSecurity::StartTls => Tls::Required(tls(&account.host)?),
        SmtpSecurity::Tls => Tls::Wrapper(tls(&account.host)?),
    };
    let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(account.host.clone())
        .port(account.port)
        .tls(tls)
        .timeout(Some(SMTP_TIMEOUT));
    if let (Some(user), Some(password)) = (&account.user, &account.password) {
        builder = builder
            .credentials(Credentials::new(user.clone(), password.expose().to_string()))
            .authentication(vec![Mechanism::Plain, Mechanism::Login]);
    }
    Ok(builder.build())
}

/// The error and its sources on one line.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    one_line(&text)
}

/// One line, no control characters (CR/LF/TAB… become spaces), runs of spaces collapsed.
fn one_line(text: &str) -> String {
    text.split(|c: char| c.is_control() || c.is_whitespace()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_never_shows_password() {
        let a = SmtpAccount::parse("smtps://atlas:p%40ss-w0rd@mail.example.fr").unwrap();
        assert_eq!(a.port, 465);
        assert_eq!(a.password.as_ref().unwrap().expose(), "p@ss-w0rd");
        let shown = format!("{a:?} {a} {}", a.label());
        assert!(!shown.contains("p@ss") && !shown.contains("w0rd"), "{shown}");
        assert!(SmtpAccount::parse("smtp://a:b@mail.example.fr").is_err());
        assert_eq!(SmtpAccount::parse("smtp+starttls://a:b@mail.example.fr").unwrap().port, 587);
        let e = SmtpAccount::parse("ftp://a:hunter2@x").unwrap_err().to_string();
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn only_the_founder() {
        let letter = Letter { subject: "s\r\nBcc: evil@x.fr".into(), body: "b".into(), attachments: Vec::new() };
        let m = message("Atlas <atlas@maboite.fr>", "boss@maboite.fr", &letter).unwrap();
        let to: Vec<String> = m.envelope().to().iter().map(|a| a.to_string()).collect();
        assert_eq!(to, vec!["boss@maboite.fr".to_string()]);
        assert!(m.headers().get_raw("Bcc").is_none(), "a subject cannot add a header");
        assert!(matches!(
            message("atlas@maboite.fr", "not an address", &letter),
            Err(SmtpError::Address { which: "founder", .. })
        ));
    }
}
