//! No attachment is read without a clean verdict: every MIME part goes through ClamAV
//! (clamd over its socket, or one clamscan run per message) and comes back as a `Verdict`.
//! Anything short of a definite "OK" from the scanner — a refused connection, a timeout, a
//! size limit, an answer we cannot parse — is `Verdict::Error`, never `Clean`.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Connecting to clamd.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Sending one part to clamd and reading its whole reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);
/// One clamscan run over all the parts of a message.
const CLAMSCAN_TIMEOUT: Duration = Duration::from_secs(120);
/// INSTREAM chunk size (clamd reads chunks of any size up to its StreamMaxLength).
const CHUNK: usize = 64 * 1024;
/// Longest clamd reply we read; a verdict line is far shorter.
const MAX_REPLY: usize = 4096;

#[derive(Debug, Clone)]
pub enum Scanner {
    /// clamd over its socket: `host:port` (TCP) or a Unix socket path (starts with '/' or `unix:`).
    Clamd { addr: String },
    /// clamscan process; `db` = signature database directory (`-d`), system default when None.
    Clamscan { db: Option<PathBuf> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Clean,
    Infected { signature: String },
    Error { reason: String },
}

impl Verdict {
    /// "clean" | "infected" | "error".
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Clean => "clean",
            Verdict::Infected { .. } => "infected",
            Verdict::Error { .. } => "error",
        }
    }

    pub fn is_clean(&self) -> bool {
        matches!(self, Verdict::Clean)
    }

    fn error(reason: impl Into<String>) -> Verdict {
        Verdict::Error { reason: reason.into() }
    }

    /// Clean < Error < Infected: when a scanner says two things about one part, the worse wins.
    fn severity(&self) -> u8 {
        match self {
            Verdict::Clean => 0,
            Verdict::Error { .. } => 1,
            Verdict::Infected { .. } => 2,
        }
    }
}

impl Scanner {
    /// clamd when an address is configured, else clamscan with the optional database.
    pub fn from_settings(clamd_addr: Option<&str>, clamscan_db: Option<&Path>) -> Scanner {
        match clamd_addr.map(str::trim).filter(|a| !a.is_empty()) {
            Some(addr) => Scanner::Clamd { addr: addr.to_string() },
            None => Scanner::Clamscan { db: clamscan_db.map(Path::to_path_buf) },
        }
    }

    /// One verdict per part, same order. Never panics; any failure is `Verdict::Error` with
    /// an English reason.
    pub async fn scan_parts(&self, parts: &[&[u8]]) -> Vec<Verdict> {
        if parts.is_empty() {
            return Vec::new();
        }
        let verdicts = match self {
            Scanner::Clamd { addr } => {
                let mut verdicts = Vec::with_capacity(parts.len());
                for part in parts {
                    verdicts.push(clamd_scan(addr, part).await);
                }
                verdicts
            }
            Scanner::Clamscan { db } => clamscan(db.as_deref(), parts).await,
        };
        let count = |kind: &str| verdicts.iter().filter(|v| v.as_str() == kind).count();
        tracing::debug!(
            scanner = %self.describe(),
            parts = parts.len(),
            clean = count("clean"),
            infected = count("infected"),
            errors = count("error"),
            "attachments scanned"
        );
        verdicts
    }

    /// For logs: "clamd 127.0.0.1:3310", "clamscan (db /x)", "clamscan (system database)".
    pub fn describe(&self) -> String {
        match self {
            Scanner::Clamd { addr } => format!("clamd {addr}"),
            Scanner::Clamscan { db: Some(db) } => format!("clamscan (db {})", db.display()),
            Scanner::Clamscan { db: None } => "clamscan (system database)".to_string(),
        }
    }
}

/// What a scanner said about one part (`OK`, `<Sig> FOUND`, `<reason> ERROR`, …), as a verdict.
/// `empty` is whether the part has no bytes at all (clamscan calls that "Empty file").
fn parse_status(status: &str, scanner: &str, empty: bool) -> Verdict {
    let status = status.trim();
    if status == "OK" || (empty && status == "Empty file") {
        return Verdict::Clean;
    }
    if let Some(signature) = status.strip_suffix(" FOUND") {
        let signature = signature.trim();
        if signature.starts_with("Heuristics.Limits.Exceeded") {
            return Verdict::error(format!(
                "{scanner} did not scan the whole part: its size or scan limits were exceeded ({})",
                excerpt(signature)
            ));
        }
        if signature.is_empty() {
            return Verdict::error(format!("{scanner} reported a detection without a name"));
        }
        return Verdict::Infected { signature: excerpt(signature) };
    }
    if let Some(reason) = status.strip_suffix("ERROR") {
        let reason = reason.trim();
        if reason.contains("size limit exceeded") {
            return Verdict::error(format!(
                "the part is larger than {scanner} accepts (StreamMaxLength): {}",
                excerpt(reason)
            ));
        }
        return Verdict::error(format!("{scanner} could not scan the part: {}", excerpt(reason)));
    }
    Verdict::error(format!("unexpected answer from {scanner}: {:?}", excerpt(status)))
}

/// At most 300 characters of scanner or process output, on one line.
fn excerpt(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

// ----------------------------------------------------------------------------------------
// clamd: INSTREAM, one connection per part.

/// Where clamd listens.
enum ClamdAddr<'a> {
    Tcp(&'a str),
    Unix(&'a str),
}

fn clamd_addr(addr: &str) -> ClamdAddr<'_> {
    if let Some(path) = addr.strip_prefix("unix:") {
        ClamdAddr::Unix(path)
    } else if addr.starts_with('/') {
        ClamdAddr::Unix(addr)
    } else {
        ClamdAddr::Tcp(addr)
    }
}

async fn clamd_scan(addr: &str, part: &[u8]) -> Verdict {
    match clamd_addr(addr) {
        ClamdAddr::Tcp(host_port) => {
            match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(host_port)).await {
                Ok(Ok(stream)) => instream(stream, part).await,
                Ok(Err(e)) => Verdict::error(format!("cannot connect to clamd at {addr}: {e}")),
                Err(_) => Verdict::error(format!(
                    "cannot connect to clamd at {addr}: no answer within {} s",
                    CONNECT_TIMEOUT.as_secs()
                )),
            }
        }
        ClamdAddr::Unix(path) => unix_scan(addr, path, part).await,
    }
}

#[cfg(unix)]
async fn unix_scan(addr: &str, path: &str, part: &[u8]) -> Verdict {
    match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::UnixStream::connect(path)).await {
        Ok(Ok(stream)) => instream(stream, part).await,
        Ok(Err(e)) => Verdict::error(format!("cannot connect to clamd at {addr}: {e}")),
        Err(_) => Verdict::error(format!(
            "cannot connect to clamd at {addr}: no answer within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

#[cfg(not(unix))]
async fn unix_scan(addr: &str, _path: &str, _part: &[u8]) -> Verdict {
    Verdict::error(format!("cannot connect to clamd at {addr}: Unix sockets need a Unix system"))
}

/// Sends one part with `zINSTREAM` and reads the verdict. The reply is read while the part
/// is still being sent: clamd answers "INSTREAM size limit exceeded" and closes as soon as
/// the part passes its StreamMaxLength, and that answer must not be lost to a broken pipe.
async fn instream<S: AsyncRead + AsyncWrite>(stream: S, part: &[u8]) -> Verdict {
    let (mut reader, mut writer) = tokio::io::split(stream);
    let send = async move {
        writer.write_all(b"zINSTREAM\0").await?;
        for chunk in part.chunks(CHUNK) {
            // CHUNK fits in a u32.
            writer.write_all(&(chunk.len() as u32).to_be_bytes()).await?;
            writer.write_all(chunk).await?;
        }
        writer.write_all(&0u32.to_be_bytes()).await?;
        writer.flush().await?;
        Ok::<_, io::Error>(writer)
    };
    let receive = async move {
        let mut reply = Vec::new();
        let mut buf = [0u8; 512];
        loop {
            let n = reader.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            reply.extend_from_slice(&buf[..n]);
            // Replies to `z` commands end with a NUL.
            if reply.contains(&0) || reply.len() >= MAX_REPLY {
                break;
            }
        }
        Ok::<_, io::Error>(reply)
    };
    tokio::pin!(send);
    tokio::pin!(receive);

    // `sent` is Some(Ok) only once the zero-length terminator has been written; biased so
    // a finished send is always recorded before a reply is taken.
    let mut sent: Option<io::Result<_>> = None;
    let exchange = async {
        loop {
            tokio::select! {
                biased;
                result = &mut send, if sent.is_none() => sent = Some(result),
                reply = &mut receive => break reply,
            }
        }
    };
    let reply = match tokio::time::timeout(REPLY_TIMEOUT, exchange).await {
        Ok(reply) => reply,
        Err(_) => return Verdict::error(format!("clamd did not answer within {} s", REPLY_TIMEOUT.as_secs())),
    };
    let send_error = match &sent {
        Some(Err(e)) => Some(e.to_string()),
        _ => None,
    };
    let reply = match reply {
        Ok(reply) => reply,
        Err(e) => {
            return Verdict::error(match send_error {
                Some(s) => format!("connection to clamd lost while sending the part: {s}"),
                None => format!("cannot read clamd's answer: {e}"),
            })
        }
    };
    let text = String::from_utf8_lossy(&reply);
    let text = text.trim_end_matches('\0').trim();
    if text.is_empty() {
        return Verdict::error(match send_error {
            Some(s) => format!("connection to clamd lost while sending the part: {s}"),
            None => "clamd closed the connection without a verdict".to_string(),
        });
    }
    let status = text.strip_prefix("stream:").unwrap_or(text);
    let verdict = parse_status(status, "clamd", part.is_empty());
    // An "OK" for a part that was not entirely sent says nothing about the part.
    if verdict.is_clean() && !matches!(sent, Some(Ok(_))) {
        return Verdict::error("clamd answered OK before the whole part was sent");
    }
    verdict
}

// ----------------------------------------------------------------------------------------
// clamscan: the parts as files part-0, part-1… in a private temporary directory, one run.

async fn clamscan(db: Option<&Path>, parts: &[&[u8]]) -> Vec<Verdict> {
    let all = |reason: String| vec![Verdict::Error { reason }; parts.len()];

    // Private (0700) directory; the files get neutral names, never the attachment's name.
    let dir = match tempfile::Builder::new().prefix("arthur-scan-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return all(format!("cannot create a temporary directory for clamscan: {e}")),
    };
    for (i, part) in parts.iter().enumerate() {
        if let Err(e) = tokio::fs::write(dir.path().join(format!("part-{i}")), part).await {
            return all(format!("cannot write the part for clamscan: {e}"));
        }
    }

    let mut cmd = tokio::process::Command::new("clamscan");
    cmd.arg("--no-summary").arg("--stdout").arg("--alert-exceeds-max=yes");
    if let Some(db) = db {
        cmd.arg("-d").arg(db);
    }
    cmd.arg("--");
    for i in 0..parts.len() {
        cmd.arg(format!("part-{i}"));
    }
    cmd.current_dir(dir.path()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);

    let child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return all("clamscan is not installed (no `clamscan` on PATH)".to_string())
        }
        Err(e) => return all(format!("cannot start clamscan: {e}")),
    };
    let output = match tokio::time::timeout(CLAMSCAN_TIMEOUT, child.wait_with_output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => return all(format!("clamscan failed: {e}")),
        // Dropping the future killed clamscan (kill_on_drop).
        Err(_) => return all(format!("clamscan did not finish within {} s", CLAMSCAN_TIMEOUT.as_secs())),
    };
    drop(dir);

    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output.status.code();
    let failure = || {
        let stderr = excerpt(&stderr);
        let status = match code {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_string(),
        };
        if stderr.is_empty() {
            status
        } else {
            format!("{status}: {stderr}")
        }
    };
    if !matches!(code, Some(0..=2)) {
        return all(format!("clamscan failed ({})", failure()));
    }

    let mut verdicts: Vec<Option<Verdict>> = vec![None; parts.len()];
    for line in stdout.lines() {
        let Some((name, status)) = line.split_once(": ") else { continue };
        let Some(index) = name.strip_prefix("part-").and_then(|i| i.parse::<usize>().ok()) else {
            continue;
        };
        let Some(slot) = verdicts.get_mut(index) else { continue };
        let verdict = parse_status(status, "clamscan", parts[index].is_empty());
        if slot.as_ref().is_none_or(|old| verdict.severity() > old.severity()) {
            *slot = Some(verdict);
        }
    }
    // Exit status 1 means something was found: if no part shows it, no OK line is trusted.
    let detection_unattributed = code == Some(1) && verdicts.iter().flatten().all(Verdict::is_clean);
    verdicts
        .into_iter()
        .map(|verdict| match verdict {
            Some(Verdict::Clean) if detection_unattributed => {
                Verdict::error("clamscan reported a detection (exit status 1) without naming the part")
            }
            Some(verdict) => verdict,
            None => Verdict::error(format!("clamscan gave no verdict for this part ({})", failure())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(parse_status("OK", "clamd", false), Verdict::Clean);
        assert_eq!(
            parse_status("Eicar-Test-Signature FOUND", "clamd", false),
            Verdict::Infected { signature: "Eicar-Test-Signature".into() }
        );
        assert!(!parse_status("Empty file", "clamscan", false).is_clean());
        assert!(parse_status("Empty file", "clamscan", true).is_clean());
        let too_big = parse_status("INSTREAM size limit exceeded. ERROR", "clamd", false);
        assert!(matches!(&too_big, Verdict::Error { reason } if reason.contains("StreamMaxLength")));
        let limits = parse_status("Heuristics.Limits.Exceeded.MaxFileSize FOUND", "clamd", false);
        assert_eq!(limits.as_str(), "error");
        assert_eq!(parse_status("", "clamd", false).as_str(), "error");
        assert_eq!(parse_status("PONG", "clamd", false).as_str(), "error");
    }

    #[test]
    fn settings_choose_the_scanner() {
        let s = Scanner::from_settings(Some("127.0.0.1:3310"), Some(Path::new("/x")));
        assert_eq!(s.describe(), "clamd 127.0.0.1:3310");
        let s = Scanner::from_settings(Some("  "), Some(Path::new("/x")));
        assert_eq!(s.describe(), "clamscan (db /x)");
        assert_eq!(Scanner::from_settings(None, None).describe(), "clamscan (system database)");
    }
}
