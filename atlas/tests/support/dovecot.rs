//! A real Dovecot IMAP server on loopback, confined to a temp dir, for tests of the IMAP poller.
//!
//! `Dovecot::start()` writes a complete configuration (no `/etc/dovecot`, no system state),
//! runs `dovecot -F -c <conf>` in its own process group on a free 127.0.0.1 port, and waits for
//! the IMAP greeting, which carries a per-instance token so that a greeting from another server
//! that grabbed the same port is never mistaken for ours. Dropping it stops the whole process
//! group (SIGTERM, then SIGKILL) and removes the temp dir.
//!
//! Running as root (CI), the login processes run as the Debian `dovenull` user and the internal
//! services and the mailbox as `dovecot` (Dovecot refuses root for both); the temp dir is made
//! traversable (0711) so that those users reach the passwd file and the Maildir. Running as an
//! ordinary user, everything runs as that user and chroot is switched off.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_imap::imap_proto::rfc4315::UidSetMember;
use async_imap::imap_proto::{Response, ResponseCode, Status};
use async_imap::types::Flag;
use futures_util::TryStreamExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const DOVECOT: &str = "/usr/sbin/dovecot";
pub const USER: &str = "atlas";
pub const PASSWORD: &str = "s3cret-pass";
/// Attempts with a fresh port (and temp dir) when the port was taken between picking and binding.
const ATTEMPTS: usize = 8;
/// Budget for one start attempt (dovecot normally answers in well under a second).
pub const START_TIMEOUT: Duration = Duration::from_secs(20);
/// Budget for any single IMAP operation of the helpers below.
const OP_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Dovecot {
    pub child: Child,
    port: u16,
    /// Unique per instance: Dovecot's `instance_name` (so every process title carries it) and the
    /// token in the login greeting.
    pub instance: String,
    pub dir: tempfile::TempDir,
}

/// Who runs what: Dovecot refuses root for login processes and mail users.
struct Identities {
    internal_user: String,
    internal_group: String,
    login_user: String,
    mail_uid: u32,
    mail_gid: u32,
    /// Login processes chroot into `base_dir/login`, which only root can do.
    chroot: bool,
}

pub enum Attempt {
    Ready(Dovecot),
    /// The port was taken by someone else: try another one.
    PortTaken(String),
}

impl Dovecot {
    /// Starts dovecot -F -c <generated conf> on a free 127.0.0.1 port, one user with a password
    /// (passwd-file), Maildir storage in the temp dir, plaintext auth allowed on loopback without
    /// TLS (ssl = no), logs in the temp dir. Waits until the IMAP greeting is served. Panics with
    /// the dovecot log on failure.
    pub async fn start() -> Dovecot {
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            match Self::try_start(super::clamav::free_port()).await {
                Attempt::Ready(dovecot) => return dovecot,
                Attempt::PortTaken(log) => last = log,
            }
        }
        panic!("dovecot: no free port after {ATTEMPTS} attempts; last log:\n{last}");
    }

    pub async fn try_start(port: u16) -> Attempt {
        let dir = tempfile::Builder::new().prefix("arthur-dovecot-").tempdir().expect("temp dir for dovecot");
        // "arthur-dovecot-XXXXXX": in the master's command line (config path) and every title.
        let instance = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "");
        let ids = identities(dir.path());
        write_config(dir.path(), &instance, port, &ids);

        let stderr = fs::File::create(dir.path().join("stderr.log")).expect("dovecot stderr file");
        let child = Command::new(DOVECOT)
            .arg("-F")
            .arg("-c")
            .arg(dir.path().join("dovecot.conf"))
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            // Its own process group: Drop signals the master and all its children at once.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {DOVECOT}: {e} (is dovecot-imapd installed?)"));
        let mut dovecot = Dovecot { child, port, instance, dir };

        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(status) = dovecot.child.try_wait().expect("waiting on dovecot") {
                let log = dovecot.log();
                if log.contains("Address already in use") {
                    return Attempt::PortTaken(log);
                }
                panic!("dovecot exited during start ({status}); log:\n{log}");
            }
            match dovecot.greeting().await {
                Some(greeting) if greeting.contains(&dovecot.instance) => return Attempt::Ready(dovecot),
                // Another server answers on this port: ours cannot bind it.
                Some(greeting) => {
                    return Attempt::PortTaken(format!("foreign greeting {greeting:?}\n{}", dovecot.log()))
                }
                None => {}
            }
            if Instant::now() > deadline {
                panic!("dovecot served no greeting on port {} within {START_TIMEOUT:?}; log:\n{}", port, dovecot.log());
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The greeting line, or None while nothing listens yet.
    pub async fn greeting(&self) -> Option<String> {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).await.ok()?;
        let mut line = String::new();
        let mut reader = BufReader::new(stream);
        let read = reader.read_line(&mut line);
        match tokio::time::timeout(Duration::from_secs(2), read).await {
            Ok(Ok(n)) if n > 0 => Some(line.trim_end().to_string()),
            _ => None,
        }
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

    /// `imap://user:password@127.0.0.1:PORT/INBOX`
    pub fn url(&self) -> String {
        format!("imap://{USER}:{PASSWORD}@127.0.0.1:{}/INBOX", self.port)
    }

    /// Logged-in async-imap session (tokio TcpStream) for test assertions.
    pub async fn session(&self) -> async_imap::Session<TcpStream> {
        self.within("login", async {
            let stream = TcpStream::connect(("127.0.0.1", self.port)).await.map_err(|e| format!("connect: {e}"))?;
            let mut client = async_imap::Client::new(stream);
            client.read_response().await.map_err(|e| format!("greeting: {e}"))?.ok_or("no greeting")?;
            client.login(USER, PASSWORD).await.map_err(|(e, _)| format!("login: {e}"))
        })
        .await
    }

    /// APPENDs a raw RFC 5322 message to INBOX without the \Seen flag; returns its UID (from
    /// APPENDUID if available, else by searching).
    pub async fn append(&self, raw: &[u8]) -> u32 {
        let mut session = self.session().await;
        let uid = self
            .within("append", async {
                // By hand rather than `Session::append`, which drops the APPENDUID response code.
                let tag = session.run_command(format!("APPEND INBOX () {{{}}}", raw.len())).await.map_err(err)?;
                let go_on = session.read_response().await.map_err(err)?.ok_or("connection lost")?;
                if !matches!(go_on.parsed(), Response::Continue { .. }) {
                    return Err(format!("APPEND refused: {:?}", go_on.parsed()));
                }
                let stream = session.get_mut();
                stream.write_all(raw).await.map_err(err)?;
                stream.write_all(b"\r\n").await.map_err(err)?;
                stream.flush().await.map_err(err)?;
                loop {
                    let response = session.read_response().await.map_err(err)?.ok_or("connection lost")?;
                    if let Response::Done { tag: done, status, outcome } = response.parsed() {
                        if *done != tag {
                            continue;
                        }
                        if *status != Status::Ok {
                            return Err(format!("APPEND failed: {:?}", response.parsed()));
                        }
                        return Ok(match &outcome.code {
                            Some(ResponseCode::AppendUid(_, uids)) => match uids.as_slice() {
                                [UidSetMember::Uid(uid)] => Some(*uid),
                                _ => None,
                            },
                            _ => None,
                        });
                    }
                }
            })
            .await;
        let uid = match uid {
            Some(uid) => uid,
            None => {
                self.within("search for the appended UID", async {
                    session.select("INBOX").await.map_err(err)?;
                    let uids = session.uid_search("ALL").await.map_err(err)?;
                    uids.into_iter().max().ok_or_else(|| "INBOX is empty after APPEND".to_string())
                })
                .await
            }
        };
        session.logout().await.ok();
        uid
    }

    /// UIDs in INBOX and whether each has \Seen.
    pub async fn seen_flags(&self) -> Vec<(u32, bool)> {
        let mut session = self.session().await;
        let mut flags = self
            .within("fetch flags", async {
                session.select("INBOX").await.map_err(err)?;
                let fetches: Vec<_> =
                    session.uid_fetch("1:*", "(UID FLAGS)").await.map_err(err)?.try_collect().await.map_err(err)?;
                fetches
                    .iter()
                    .map(|f| {
                        let uid = f.uid.ok_or("FETCH without UID")?;
                        Ok((uid, f.flags().any(|flag| flag == Flag::Seen)))
                    })
                    .collect::<Result<Vec<_>, String>>()
            })
            .await;
        session.logout().await.ok();
        flags.sort_unstable();
        flags
    }

    /// Clears \Seen on every message (to simulate the server re-announcing messages).
    pub async fn mark_all_unseen(&self) {
        let mut session = self.session().await;
        self.within("clear \\Seen", async {
            session.select("INBOX").await.map_err(err)?;
            let _: Vec<_> = session
                .uid_store("1:*", "-FLAGS.SILENT (\\Seen)")
                .await
                .map_err(err)?
                .try_collect()
                .await
                .map_err(err)?;
            Ok(())
        })
        .await;
        session.logout().await.ok();
    }

    /// The dovecot log (for failure messages).
    pub fn log(&self) -> String {
        let read = |name: &str| fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
        let (log, stderr) = (read("dovecot.log"), read("stderr.log"));
        if stderr.trim().is_empty() {
            log
        } else {
            format!("{log}\n--- stderr ---\n{stderr}")
        }
    }

    /// Runs an IMAP operation with a time limit; panics with the dovecot log on error.
    async fn within<T>(&self, what: &str, op: impl std::future::Future<Output = Result<T, String>>) -> T {
        match tokio::time::timeout(OP_TIMEOUT, op).await {
            Ok(Ok(value)) => value,
            Ok(Err(e)) => panic!("dovecot {what}: {e}; log:\n{}", self.log()),
            Err(_) => panic!("dovecot {what}: no answer within {OP_TIMEOUT:?}; log:\n{}", self.log()),
        }
    }

    /// Live (non-zombie) processes of this instance's process group.
    pub fn live_processes(&self) -> Vec<u32> {
        live_group_members(self.child.id())
    }
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        // The master leads its own process group (pgid = its pid), and its children stay in it.
        // While the master is not reaped (at worst a zombie), that group id cannot be reused.
        let pgid = self.child.id();
        signal_group(pgid, "TERM");
        if !wait_group_dead(pgid, Duration::from_secs(5)) {
            signal_group(pgid, "KILL");
            wait_group_dead(pgid, Duration::from_secs(5));
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            self.child.kill().ok();
        }
        self.child.wait().ok();
        // `dir` (config, sockets, Maildir, logs) is removed after this.
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn id(args: &[&str]) -> String {
    let out = Command::new("id").args(args).output().unwrap_or_else(|e| panic!("running id {args:?}: {e}"));
    assert!(out.status.success(), "id {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn numeric_id(args: &[&str]) -> u32 {
    let text = id(args);
    text.parse().unwrap_or_else(|_| panic!("id {args:?} printed {text:?}"))
}

/// Chooses the users and prepares the permissions of `dir` (a fresh temp dir of ours).
fn identities(dir: &Path) -> Identities {
    let meta = fs::metadata(dir).expect("temp dir metadata");
    if meta.uid() != 0 {
        let me = id(&["-un"]);
        let group = id(&["-gn"]);
        return Identities {
            internal_user: me.clone(),
            internal_group: group,
            login_user: me,
            mail_uid: meta.uid(),
            mail_gid: meta.gid(),
            chroot: false,
        };
    }
    // Root: Debian's dovecot-core users (`dovecot`: internal services and the mailbox, `dovenull`:
    // login processes). They must traverse the temp dir (0700 by default) to the passwd file
    // (read by the auth service, running as `dovecot`) and the Maildir (imap, running as the mail
    // user); the login processes are chrooted into `base_dir/login`, which Dovecot sets up itself.
    let mail_uid = numeric_id(&["-u", "dovecot"]);
    let mail_gid = numeric_id(&["-g", "dovecot"]);
    fs::set_permissions(dir, fs::Permissions::from_mode(0o711)).expect("chmod temp dir");
    Identities {
        internal_user: "dovecot".into(),
        internal_group: "dovecot".into(),
        login_user: "dovenull".into(),
        mail_uid,
        mail_gid,
        chroot: true,
    }
}

fn write_config(dir: &Path, instance: &str, port: u16, ids: &Identities) {
    let d = dir.display();
    let home: PathBuf = dir.join("home");
    fs::create_dir(&home).expect("mail home");
    std::os::unix::fs::chown(&home, Some(ids.mail_uid), Some(ids.mail_gid)).expect("chown mail home");
    let passwd = dir.join("passwd");
    fs::write(&passwd, format!("{USER}:{{PLAIN}}{PASSWORD}\n")).expect("passwd file");
    fs::set_permissions(&passwd, fs::Permissions::from_mode(0o644)).expect("chmod passwd file");
    let chroot = if ids.chroot { "" } else { "  chroot =\n" };
    // Unprivileged, chroot fails: turn it off in every service that has one by default (2.3).
    let unchrooted: String = if ids.chroot {
        String::new()
    } else {
        ["aggregator", "anvil", "director", "imap-urlauth-login", "ipc", "old-stats", "pop3-login", "submission-login"]
            .iter()
            .map(|service| format!("service {service} {{\n  chroot =\n}}\n"))
            .collect()
    };
    let Identities { internal_user, internal_group, login_user, mail_uid, mail_gid, .. } = ids;
    let conf = format!(
        r#"# Generated for one test; nothing is read from /etc/dovecot.
instance_name = {instance}
base_dir = {d}/run
state_dir = {d}/state
log_path = {d}/dovecot.log
info_log_path = {d}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# Refuse a wrong password at once rather than after the default 2 s.
auth_failure_delay = 0
login_greeting = {instance} ready.
default_internal_user = {internal_user}
default_internal_group = {internal_group}
default_login_user = {login_user}
first_valid_uid = {mail_uid}
last_valid_uid = 0
first_valid_gid = {mail_gid}
mail_location = maildir:{d}/home/Maildir
mail_fsync = never
default_process_limit = 10
default_client_limit = 100
passdb {{
  driver = passwd-file
  args = {d}/passwd
}}
userdb {{
  driver = static
  args = uid={mail_uid} gid={mail_gid} home={d}/home
}}
service imap-login {{
{chroot}  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
{unchrooted}"#
    );
    fs::write(dir.join("dovecot.conf"), conf).expect("dovecot.conf");
}

/// Sends a signal to a process group, through kill(1): the crate forbids `unsafe`.
fn signal_group(pgid: u32, signal: &str) {
    Command::new("kill")
        .args(["-s", signal, "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok();
}

/// Waits until no live process remains in the group; false on timeout.
pub fn wait_group_dead(pgid: u32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if live_group_members(pgid).is_empty() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Pids of the non-zombie processes whose process group is `pgid`, from /proc.
pub fn live_group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            // "pid (comm) state ppid pgrp ...": comm may hold anything, so parse after the last ')'.
            let Some((_, rest)) = stat.rsplit_once(')') else { return false };
            let mut fields = rest.split_whitespace();
            let state = fields.next();
            let pgrp = fields.nth(1).and_then(|p| p.parse::<u32>().ok());
            pgrp == Some(pgid) && !matches!(state, Some("Z" | "X"))
        })
        .collect()
}

/// Processes whose command line contains `needle` (pgrep -f), other than pgrep itself.
pub fn pgrep(needle: &str) -> String {
    let out = Command::new("pgrep").args(["-a", "-f", needle]).output().expect("pgrep");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn message(n: u32) -> Vec<u8> {
    format!(
        "From: Sender {n} <sender{n}@example.org>\r\nTo: atlas@example.org\r\nSubject: Test message {n}\r\n\
         Date: Mon, 30 Nov 2026 10:00:00 +0100\r\nMessage-ID: <m{n}@example.org>\r\n\r\nBody {n}.\r\n"
    )
    .into_bytes()
}
