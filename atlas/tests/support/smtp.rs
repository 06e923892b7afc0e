//! A real SMTP server on loopback for the tests (Python's aiosmtpd): `SmtpServer::start()` runs
//! a small aiosmtpd server (script written to a temp dir) on a port the kernel picks, which
//! stores every message as `NNNNNN.eml` (the raw DATA) plus `NNNNNN.json` (envelope sender,
//! RCPT TO list, authenticated login) written last; `messages()` reads them back in order.
//! The server exits when dropped (killed) or when the test process dies (its stdin closes).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mail_parser::MessageParser;

pub const USER: &str = "atlas";
pub const PASSWORD: &str = "Sm7p-s3cret-pass";
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The server: aiosmtpd's SMTP protocol on an asyncio server bound to 127.0.0.1:0 (no port
/// race), AUTH PLAIN/LOGIN accepted without TLS for one user, required or not.
const SERVER_PY: &str = r#"
import asyncio, json, os, sys, threading
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

directory, user, password, required = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
counter = 0

class Handler:
    async def handle_DATA(self, server, session, envelope):
        global counter
        counter += 1
        base = os.path.join(directory, "%06d" % counter)
        raw = envelope.original_content if envelope.original_content is not None else envelope.content
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        with open(base + ".eml", "wb") as f:
            f.write(raw)
        meta = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "login": session.auth_data if session.authenticated else None,
        }
        with open(base + ".json.tmp", "w") as f:
            json.dump(meta, f)
        os.rename(base + ".json.tmp", base + ".json")
        return "250 OK stored as %06d" % counter

def authenticator(server, session, envelope, mechanism, auth_data):
    if (isinstance(auth_data, LoginPassword)
            and auth_data.login.decode() == user
            and auth_data.password.decode() == password):
        return AuthResult(success=True, auth_data=user)
    return AuthResult(success=False, handled=False)

def parent_watch():
    # The test process holds our stdin: when it dies, we go too.
    sys.stdin.buffer.read()
    os._exit(0)

async def main():
    loop = asyncio.get_running_loop()
    handler = Handler()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="atlas-test-smtp", authenticator=authenticator,
                     auth_required=required, auth_require_tls=False, enable_SMTPUTF8=True, loop=loop),
        host="127.0.0.1", port=0)
    threading.Thread(target=parent_watch, daemon=True).start()
    print("PORT", server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"#;

/// One message as the server received it.
#[derive(Debug, Clone)]
pub struct ReceivedMail {
    /// MAIL FROM.
    pub mail_from: String,
    /// RCPT TO, in order.
    pub rcpt_tos: Vec<String>,
    /// The user that authenticated on the session, if any.
    pub login: Option<String>,
    /// The DATA, as sent.
    pub raw: Vec<u8>,
}

impl ReceivedMail {
    pub fn parsed(&self) -> mail_parser::Message<'_> {
        MessageParser::default().parse(&self.raw).expect("the received message parses")
    }

    /// The header section, as sent (before the first empty line).
    pub fn raw_headers(&self) -> String {
        let text = String::from_utf8_lossy(&self.raw).replace("\r\n", "\n");
        text.split("\n\n").next().unwrap_or_default().to_string()
    }

    /// The first text/plain body, decoded.
    pub fn text(&self) -> String {
        self.parsed().body_text(0).expect("a text body").into_owned()
    }
}

pub struct SmtpServer {
    child: Child,
    /// Held open: the server exits when it closes (this process died).
    _stdin: ChildStdin,
    port: u16,
    dir: tempfile::TempDir,
}

impl SmtpServer {
    /// A server that accepts AUTH (PLAIN, LOGIN) for [`Self::user`]/[`Self::password`]
    /// without requiring it.
    pub fn start() -> Self {
        Self::spawn(false)
    }

    /// A server that refuses MAIL FROM until the session authenticated.
    pub fn start_requiring_auth() -> Self {
        Self::spawn(true)
    }

    fn spawn(auth_required: bool) -> Self {
        let dir = tempfile::Builder::new().prefix("arthur-smtp-").tempdir().expect("temp dir for the SMTP server");
        let script = dir.path().join("server.py");
        std::fs::write(&script, SERVER_PY).expect("writing the SMTP server script");
        let mail_dir = dir.path().join("mail");
        std::fs::create_dir(&mail_dir).expect("mail dir");
        let stderr = std::fs::File::create(dir.path().join("stderr.log")).expect("stderr file");
        let mut child = Command::new(python())
            .arg(&script)
            .arg(&mail_dir)
            .arg(USER)
            .arg(PASSWORD)
            .arg(if auth_required { "1" } else { "0" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e} (is python3-aiosmtpd installed?)", python()));
        let stdin = child.stdin.take().expect("server stdin");
        let stdout = child.stdout.take().expect("server stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut server = SmtpServer { child, _stdin: stdin, port: 0, dir };
        let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
        match line.trim().strip_prefix("PORT ").and_then(|p| p.parse().ok()) {
            Some(port) => server.port = port,
            None => panic!("the SMTP server did not start ({line:?}); stderr:\n{}", server.log()),
        }
        server
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn user(&self) -> &str {
        USER
    }

    pub fn password(&self) -> &str {
        PASSWORD
    }

    /// `smtp://atlas:<password>@127.0.0.1:<port>`: the `ATLAS_SMTP_URL` of this server.
    pub fn url(&self) -> String {
        self.url_with_password(PASSWORD)
    }

    pub fn url_with_password(&self, password: &str) -> String {
        format!("smtp://{USER}:{password}@127.0.0.1:{}", self.port)
    }

    /// Without credentials (no AUTH attempted).
    pub fn url_anonymous(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received so far, in arrival order.
    pub fn messages(&self) -> Vec<ReceivedMail> {
        let mail_dir = self.dir.path().join("mail");
        let mut metas: Vec<PathBuf> = std::fs::read_dir(&mail_dir)
            .expect("reading the mail dir")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        metas.sort();
        metas
            .into_iter()
            .map(|meta| {
                let value: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&meta).expect("reading a meta file")).expect("meta JSON");
                let raw = std::fs::read(meta.with_extension("eml")).expect("reading a message");
                ReceivedMail {
                    mail_from: value["mail_from"].as_str().unwrap_or_default().to_string(),
                    rcpt_tos: value["rcpt_tos"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                        .unwrap_or_default(),
                    login: value["login"].as_str().map(str::to_string),
                    raw,
                }
            })
            .collect()
    }

    /// Waits until at least `n` messages arrived (panics after `timeout`).
    pub fn wait_for_messages(&self, n: usize, timeout: Duration) -> Vec<ReceivedMail> {
        let deadline = Instant::now() + timeout;
        loop {
            let messages = self.messages();
            if messages.len() >= n {
                return messages;
            }
            if Instant::now() > deadline {
                panic!("{} message(s) received, {n} expected; log:\n{}", messages.len(), self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The system interpreter carries the Debian python3-aiosmtpd; a PATH python3 (pyenv…) may not.
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}
