#![allow(dead_code)] // each test binary that includes the harness uses part of it
//! A private PostgreSQL cluster per test: `initdb` into a temporary directory, one
//! `postgres` on a free loopback port with its socket in that directory, trust
//! authentication, `fsync=off`. Several can run at once; dropping one stops it
//! (`pg_ctl stop -m immediate`, then SIGKILL if it is still there) and removes its files.
//!
//! The binaries are found at run time under `/usr/lib/postgresql/<version>/bin` (the newest
//! version that has `initdb`), or in `ARTHUR_PG_BIN` when set. As root, the cluster runs as
//! the `postgres` OS user (PostgreSQL refuses root): the commands get that user's uid and gid
//! (`CommandExt::uid`/`gid`, which also drops the supplementary groups), so the postmaster
//! is our direct child and nothing sits between us and it.

use std::fs::File;
use std::net::TcpListener;
use std::os::unix::fs::chown;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::postgres::PgConnection;
use sqlx::Connection;

/// How long the server may take to accept connections before the test fails.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Postgres {
    child: Child,
    port: u16,
    bin: PathBuf,
    data: PathBuf,
    owner: Option<(u32, u32)>,
    /// How long `start` took, initdb included.
    pub started_in: Duration,
    // Last, so that it is removed after the server is stopped.
    _dir: tempfile::TempDir,
}

impl Postgres {
    /// Runs a fresh cluster and waits until it accepts connections.
    pub async fn start() -> Postgres {
        let t0 = Instant::now();
        let bin = bin_dir();
        let owner = if effective_uid() == 0 { Some(postgres_user()) } else { None };
        // As root, under /tmp: the postgres user must be able to reach the directory.
        let dir = match owner {
            Some(_) => tempfile::Builder::new().prefix("arthur-pg-").tempdir_in("/tmp"),
            None => tempfile::Builder::new().prefix("arthur-pg-").tempdir(),
        }
        .expect("temporary directory for the cluster");
        if let Some((uid, gid)) = owner {
            chown(dir.path(), Some(uid), Some(gid)).expect("chown the cluster directory to postgres");
        }
        let data = dir.path().join("data");

        let mut initdb = tokio::process::Command::new(bin.join("initdb"));
        initdb
            .arg("-D")
            .arg(&data)
            .args([
                "--auth=trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
                "--no-instructions",
            ])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        if let Some((uid, gid)) = owner {
            initdb.uid(uid).gid(gid);
        }
        let out = initdb.output().await.expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );

        // A free port can be taken by a parallel instance between our probe and the server's
        // bind: then the server exits at once, and we try another port.
        let log_path = dir.path().join("postgres.log");
        for attempt in 1..=5 {
            let port = free_port();
            let log = File::create(&log_path).expect("server log");
            let mut cmd = Command::new(bin.join("postgres"));
            cmd.arg("-D")
                .arg(&data)
                .arg("-k")
                .arg(dir.path())
                .arg("-p")
                .arg(port.to_string())
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
                .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
                .args(["-c", "shared_buffers=16MB", "-c", "max_connections=40"])
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("log fd"))
                .stderr(log);
            if let Some((uid, gid)) = owner {
                cmd.uid(uid).gid(gid);
            }
            let mut child = cmd.spawn().expect("spawn postgres");
            match wait_ready(&mut child, &url(port, "postgres")).await {
                Ready::Yes => {
                    return Postgres { child, port, bin, data, owner, started_in: t0.elapsed(), _dir: dir };
                }
                // Port lost to a neighbour: the server has exited; try another one.
                Ready::Exited if attempt < 5 => continue,
                failure => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                    panic!("postgres did not start on port {port} ({failure:?}):\n{log}");
                }
            }
        }
        unreachable!("the last attempt returns or panics")
    }

    /// `postgres://postgres@127.0.0.1:PORT/db` (trust authentication on loopback).
    pub fn url(&self, db: &str) -> String {
        url(self.port, db)
    }

    /// The directory of the PostgreSQL binaries in use (psql, pg_ctl…).
    pub fn bin(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    /// The postmaster's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Creates database `name` (letters, digits, underscores) and returns its URL.
    pub async fn create_db(&self, name: &str) -> String {
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "database name {name:?}: letters, digits and underscores only"
        );
        let mut conn = PgConnection::connect(&self.url("postgres")).await.expect("connect to the postgres database");
        sqlx::raw_sql(&format!("CREATE DATABASE \"{name}\"")).execute(&mut conn).await.expect("CREATE DATABASE");
        conn.close().await.expect("close");
        self.url(name)
    }

    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let mut ctl = Command::new(self.bin.join("pg_ctl"));
        ctl.arg("stop").arg("-D").arg(&self.data).args(["-m", "immediate", "-w", "-t", "10"]);
        ctl.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        if let Some((uid, gid)) = self.owner {
            ctl.uid(uid).gid(gid);
        }
        let _ = ctl.status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Still there: SIGKILL the postmaster (its backends exit when it is gone).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}

fn url(port: u16, db: &str) -> String {
    format!("postgres://postgres@127.0.0.1:{port}/{db}")
}

#[derive(Debug)]
enum Ready {
    Yes,
    Exited,
    TimedOut,
}

/// Waits until a connection to `url` succeeds, the server exits, or [`READY_TIMEOUT`].
async fn wait_ready(child: &mut Child, url: &str) -> Ready {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            return Ready::Exited;
        }
        if let Ok(conn) = PgConnection::connect(url).await {
            let _ = conn.close().await;
            return Ready::Yes;
        }
        if Instant::now() > deadline {
            return Ready::TimedOut;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The directory holding `initdb`, `postgres`, `pg_ctl` and `psql`.
pub fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ARTHUR_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed (/usr/lib/postgresql missing): apt-get install postgresql")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).expect("no /usr/lib/postgresql/<version>/bin/initdb")
}

/// A loopback TCP port that was free a moment ago: the one `free_port` of every test binary
/// (each includes this harness).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("probe a free port").port()
}

fn effective_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|uid| uid.parse().ok())
        .expect("effective uid in /proc/self/status")
}

/// The uid and gid of the `postgres` OS user (created by the Debian package).
fn postgres_user() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").expect("/etc/passwd");
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 3 && f[0] == "postgres").then(|| (f[2].parse().ok(), f[3].parse().ok()))
        })
        .and_then(|(uid, gid)| Some((uid?, gid?)))
        .expect("running as root needs the postgres OS user (apt-get install postgresql)")
}

/// Whether process `pid` still exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")) {
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// One cluster for the whole test binary, started on first use (in its own thread and
/// runtime, since each `#[tokio::test]` has its own), stopped when the test process exits:
/// a watcher shell, started with the cluster, waits for this process to go and then stops
/// the server and removes its directory (statics are never dropped).
pub fn shared() -> &'static Postgres {
    static SHARED: std::sync::OnceLock<Postgres> = std::sync::OnceLock::new();
    SHARED.get_or_init(|| {
        let pg = std::thread::spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime")
                .block_on(Postgres::start())
        })
        .join()
        .expect("starting the shared cluster");
        let script = format!(
            "while [ -d /proc/{test} ]; do sleep 0.2; done; \
             '{pg_ctl}' stop -D '{data}' -m immediate -w -t 10 >/dev/null 2>&1; \
             kill -9 {postmaster} 2>/dev/null; rm -rf '{dir}'",
            test = std::process::id(),
            pg_ctl = pg.bin.join("pg_ctl").display(),
            data = pg.data.display(),
            postmaster = pg.child.id(),
            dir = pg._dir.path().display(),
        );
        let mut watcher = Command::new("sh");
        watcher.arg("-c").arg(script).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        if let Some((uid, gid)) = pg.owner {
            watcher.uid(uid).gid(gid);
        }
        // Its own process group: a Ctrl-C aimed at the tests does not stop the cleanup. It
        // outlives this process on purpose (it is the cleanup), so it is never waited for.
        #[allow(clippy::zombie_processes)]
        watcher.process_group(0).spawn().expect("spawn the cluster's watcher");
        pg
    })
}

/// A new, empty database in the shared cluster (unique name), and its URL.
pub async fn fresh_database() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    shared().create_db(&format!("t{}_{n}", std::process::id())).await
}
