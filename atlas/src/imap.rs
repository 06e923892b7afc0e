//! The IMAP side of the intake: `ATLAS_IMAP_URL` parsed once, a session on the dedicated
//! mailbox (plain on loopback, TLS for `imaps://`), UID SEARCH UNSEEN, fetches that do not
//! set \Seen (BODY.PEEK), and \Seen set only when the caller says the message is stored.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use arthur_agents::secret::Secret;
use futures_util::TryStreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// How long connecting and each command may take.
pub const IMAP_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum ImapError {
    #[error("invalid ATLAS_IMAP_URL: {0}")]
    Url(String),
    #[error("cannot reach the IMAP server {addr}: {source}")]
    Connect { addr: String, source: std::io::Error },
    #[error("TLS with the IMAP server {addr} failed: {reason}")]
    Tls { addr: String, reason: String },
    #[error("the IMAP server refused the login of {user}: {reason}")]
    Login { user: String, reason: String },
    #[error("IMAP {command} failed: {reason}")]
    Command { command: &'static str, reason: String },
    #[error("IMAP {0} timed out")]
    Timeout(&'static str),
}

/// `imap://user:password@host:port/MAILBOX` or `imaps://…` (port 143 / 993 by default,
/// mailbox INBOX by default). The password is a [`Secret`].
#[derive(Clone)]
pub struct ImapAccount {
    pub host: String,
    pub port: u16,
    pub tls: bool,
    pub user: String,
    pub password: Secret,
    pub mailbox: String,
}

impl fmt::Debug for ImapAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ImapAccount({})", self.label())
    }
}

impl ImapAccount {
    pub fn parse(raw: &str) -> Result<Self, ImapError> {
        // Never echo the URL: it holds the password.
        let url = url::Url::parse(raw).map_err(|e| ImapError::Url(format!("not a URL ({e})")))?;
        let tls = match url.scheme() {
            "imap" => false,
            "imaps" => true,
            other => return Err(ImapError::Url(format!("scheme {other:?} (expected imap or imaps)"))),
        };
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| ImapError::Url("no host".into()))?;
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        let user = decode(url.username());
        if user.is_empty() {
            return Err(ImapError::Url("no user name".into()));
        }
        let password = url.password().map(decode).ok_or_else(|| ImapError::Url("no password".into()))?;
        let mailbox = decode(url.path().trim_start_matches('/'));
        Ok(Self {
            host: host.trim_matches(|c| c == '[' || c == ']').to_string(),
            port: url.port().unwrap_or(if tls { 993 } else { 143 }),
            tls,
            user,
            password: Secret::new(password),
            mailbox: if mailbox.is_empty() { "INBOX".into() } else { mailbox },
        })
    }

    /// `user@host:port/mailbox`: the account key of stored messages (no password).
    pub fn label(&self) -> String {
        format!("{}@{}:{}/{}", self.user, self.host, self.port, self.mailbox)
    }
}

/// The byte stream under the session: TCP, or TLS over TCP.
pub trait ImapStream: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug> ImapStream for T {}

async fn timed<T, E: fmt::Display>(
    what: &'static str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, ImapError> {
    match tokio::time::timeout(IMAP_TIMEOUT, fut).await {
        Err(_) => Err(ImapError::Timeout(what)),
        Ok(Err(e)) => Err(ImapError::Command { command: what, reason: e.to_string() }),
        Ok(Ok(v)) => Ok(v),
    }
}

/// A logged-in session with the mailbox selected.
pub struct Mailbox {
    session: async_imap::Session<Box<dyn ImapStream>>,
}

impl Mailbox {
    pub async fn connect(account: &ImapAccount) -> Result<Self, ImapError> {
        let addr = format!("{}:{}", account.host, account.port);
        let tcp = tokio::time::timeout(IMAP_TIMEOUT, TcpStream::connect(&addr))
            .await
            .map_err(|_| ImapError::Timeout("connect"))?
            .map_err(|source| ImapError::Connect { addr: addr.clone(), source })?;
        let stream: Box<dyn ImapStream> = if account.tls {
            let mut roots = rustls::RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            let config =
                rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                    .with_safe_default_protocol_versions()
                    .map_err(|e| ImapError::Tls { addr: addr.clone(), reason: e.to_string() })?
                    .with_root_certificates(roots)
                    .with_no_client_auth();
            let name = rustls::pki_types::ServerName::try_from(account.host.clone())
                .map_err(|e| ImapError::Tls { addr: addr.clone(), reason: e.to_string() })?;
            let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
                .connect(name, tcp)
                .await
                .map_err(|e| ImapError::Tls { addr: addr.clone(), reason: e.to_string() })?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let mut client = async_imap::Client::new(stream);
        match tokio::time::timeout(IMAP_TIMEOUT, client.read_response()).await {
            Err(_) => return Err(ImapError::Timeout("greeting")),
            Ok(Err(e)) => return Err(ImapError::Connect { addr, source: e }),
            Ok(Ok(None)) => {
                return Err(ImapError::Connect {
                    addr,
                    source: std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before the greeting"),
                })
            }
            Ok(Ok(Some(_greeting))) => {}
        }
        let mut session =
            match tokio::time::timeout(IMAP_TIMEOUT, client.login(&account.user, account.password.expose())).await {
                Err(_) => return Err(ImapError::Timeout("login")),
                Ok(Err((e, _))) => return Err(ImapError::Login { user: account.user.clone(), reason: e.to_string() }),
                Ok(Ok(s)) => s,
            };
        timed("SELECT", session.select(&account.mailbox)).await?;
        Ok(Self { session })
    }

    /// UIDs of the messages without \Seen, ascending.
    pub async fn unseen(&mut self) -> Result<Vec<u32>, ImapError> {
        let mut uids: Vec<u32> = timed("UID SEARCH", self.session.uid_search("UNSEEN")).await?.into_iter().collect();
        uids.sort_unstable();
        Ok(uids)
    }

    /// The raw messages of these UIDs, without setting \Seen (BODY.PEEK[]).
    pub async fn fetch(&mut self, uids: &[u32]) -> Result<Vec<(u32, Vec<u8>)>, ImapError> {
        if uids.is_empty() {
            return Ok(Vec::new());
        }
        let set = uid_set(uids);
        let fut = async {
            let stream = self.session.uid_fetch(&set, "(UID BODY.PEEK[])").await?;
            let fetches: Vec<_> = stream.try_collect().await?;
            Ok::<_, async_imap::error::Error>(
                fetches.into_iter().filter_map(|f| Some((f.uid?, f.body()?.to_vec()))).collect::<Vec<_>>(),
            )
        };
        timed("UID FETCH", fut).await
    }

    /// Sets \Seen on these UIDs (after their messages are committed).
    pub async fn mark_seen(&mut self, uids: &[u32]) -> Result<(), ImapError> {
        if uids.is_empty() {
            return Ok(());
        }
        let set = uid_set(uids);
        let fut = async {
            let stream = self.session.uid_store(&set, "+FLAGS.SILENT (\\Seen)").await?;
            let _: Vec<_> = stream.try_collect().await?;
            Ok::<_, async_imap::error::Error>(())
        };
        timed("UID STORE", fut).await
    }

    pub async fn logout(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(5), self.session.logout()).await;
    }
}

/// `1,3,5` — one UID set for a batch.
fn uid_set(uids: &[u32]) -> String {
    uids.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_once_and_hide_the_password() {
        let a = ImapAccount::parse("imap://atlas%40x.fr:p%40ss@127.0.0.1:1143/Atlas").unwrap();
        assert_eq!((a.host.as_str(), a.port, a.tls), ("127.0.0.1", 1143, false));
        assert_eq!(a.user, "atlas@x.fr");
        assert_eq!(a.password.expose(), "p@ss");
        assert_eq!(a.mailbox, "Atlas");
        assert_eq!(a.label(), "atlas@x.fr@127.0.0.1:1143/Atlas");
        assert!(!format!("{a:?}").contains("p@ss"));
        let s = ImapAccount::parse("imaps://u:p@mail.example.org").unwrap();
        assert_eq!((s.port, s.tls, s.mailbox.as_str()), (993, true, "INBOX"));
        for bad in ["http://u:p@h/", "imap://h/INBOX", "imap://u@h/INBOX", "nonsense"] {
            let e = ImapAccount::parse(bad).unwrap_err().to_string();
            assert!(!e.contains(":p@"), "{e}");
        }
    }
}
