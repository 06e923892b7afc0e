//! Several `arthur serve --atlas-only` workers on one PostgreSQL database (issue 10), as
//! processes against Dovecot, the scripted model and the fake `claude`: every message is
//! launched exactly once, and a worker killed with SIGKILL mid-launch loses its lock at once,
//! its message is put back by a surviving worker and relaunched only after the one-hour
//! idempotence window (simulated by moving that message's audits an hour back).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arthur_agents::llm::scripted::ScriptedLlm;
use arthur_atlas::store::postgres::LAUNCH_LOCK_CLASS;
use sqlx::postgres::{PgPool, PgPoolOptions};

use crate::common::{lines_of, sigterm, wait_exit, wait_line, Killed};
use crate::harness;
use crate::support::dovecot::Dovecot;
use crate::support::*;

/// What the workers share: the mailbox, the model, the antivirus database, the database.
struct Cluster {
    imap: Dovecot,
    _llm: ScriptedLlm,
    _eicar: tempfile::TempDir,
    db: PgPool,
    /// Every `claude` start, one line: `<worker> <contract file>` (the file names the message).
    invocations: PathBuf,
    vars: Vec<(String, String)>,
    _dir: tempfile::TempDir,
}

/// One host: its own data directory, repository clone and `claude`.
struct Worker {
    data: tempfile::TempDir,
    _repo: tempfile::TempDir,
    claude: PathBuf,
}

const QUICK_RUN: &str = r#"{"type": "system", "subtype": "init"}
{"sleep": 1}
{"contract": {"ok": true, "summary_md": "Réponse préparée.", "commits": []}}
{"result": {"result": "Réponse préparée."}}
"#;

const ENDLESS_RUN: &str = r#"{"type": "system", "subtype": "init"}
{"sleep": 3600}
"#;

impl Cluster {
    async fn start(messages: usize) -> Cluster {
        let imap = Dovecot::start().await;
        let llm = ScriptedLlm::start().await;
        let eicar = crate::support::clamav::eicar_db();
        let db_url = harness::fresh_database().await;
        let dir = tempfile::tempdir().unwrap();
        // The founder's messages are DKIM-signed: a verified author launches on its own.
        let keys = DkimKeys::generate();
        let key_file = dir.path().join("dkim-keys");
        keys.write_file(&key_file);
        let vars = vec![
            ("ATLAS_DKIM_KEYS".into(), key_file.display().to_string()),
            ("ARTHUR_DATABASE_URL".into(), db_url.clone()),
            ("ATLAS_IMAP_URL".into(), imap.url()),
            ("MISTRAL_API_KEY".into(), "sk-test-secret".into()),
            ("MISTRAL_BASE_URL".into(), llm.base_url()),
            ("ATLAS_CLAMSCAN_DB".into(), eicar.path().display().to_string()),
            ("ATLAS_FOUNDER_EMAIL".into(), FOUNDER.into()),
            ("ATLAS_MAILBOX_EMAIL".into(), MAILBOX.into()),
            ("ATLAS_BASE_BRANCH".into(), "main".into()),
        ];
        let cluster = Cluster {
            invocations: dir.path().join("invocations.log"),
            imap,
            _llm: llm,
            _eicar: eicar,
            db: PgPoolOptions::new().max_connections(2).connect(&db_url).await.unwrap(),
            vars,
            _dir: dir,
        };
        for i in 0..messages {
            cluster._llm.push(verdict("question", "leger", 0.9));
            let m = msg(FOUNDER, &format!("Question {i}"), "Peux-tu regarder ?");
            cluster.imap.append(&keys.sign("maboite.fr", &m)).await;
        }
        cluster
    }

    fn worker(&self, name: &'static str, script: &str) -> Worker {
        let data = tempfile::tempdir().unwrap();
        let script_file = data.path().join("claude-script.jsonl");
        std::fs::write(&script_file, script).unwrap();
        let claude = data.path().join("claude");
        std::fs::write(
            &claude,
            format!(
                "#!/bin/sh\necho \"{name} $ATLAS_CONTRACT_FILE\" >> '{log}'\n\
                 FAKE_CLAUDE_SCRIPT='{script}' FAKE_CLAUDE_PID_FILE='{pids}' exec '{fake}' \"$@\"\n",
                log = self.invocations.display(),
                script = script_file.display(),
                pids = data.path().join("claude.pids").display(),
                fake = crate::support::fake_claude().display(),
            ),
        )
        .unwrap();
        Command::new("chmod").arg("+x").arg(&claude).status().unwrap();
        Worker { data, _repo: crate::support::git::git_repo(), claude }
    }

    /// `arthur ARGS` as `worker` (its data dir, repository and claude), with this environment only.
    fn command(&self, worker: &Worker, args: &[&str]) -> Command {
        let mut c = crate::common::arthur_command();
        c.args(args).env_clear().env("PATH", std::env::var("PATH").unwrap()).env("HOME", worker.data.path());
        c.env("ARTHUR_DATA_DIR", worker.data.path()).env("XDG_CONFIG_HOME", worker.data.path().join("config"));
        c.env("ATLAS_REPO", worker._repo.path()).env("ATLAS_CLAUDE_BIN", &worker.claude);
        // CI runs as root: the machine is a sandbox (the fake claude does not care).
        c.env("ATLAS_SANDBOXED", "1");
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// `arthur serve --atlas-only` with one-second poll and launch cycles, once it is ready.
    fn serve(&self, worker: &Worker) -> (Killed, std::sync::mpsc::Receiver<String>, Vec<String>) {
        let mut c = self.command(
            worker,
            &[
                "serve",
                "--atlas-only",
                "--atlas-poll-secs",
                "1",
                "--atlas-launch-secs",
                "1",
                "--atlas-launch-offset-secs",
                "0",
            ],
        );
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = Killed(c.spawn().unwrap());
        let lines = lines_of(&mut child.0);
        let mut seen = Vec::new();
        wait_line(&lines, &mut seen, "prêt (--atlas-only)", Duration::from_secs(30));
        (child, lines, seen)
    }

    /// `(email id, worker)` of every `claude` started so far.
    fn invocations(&self) -> Vec<(i64, String)> {
        std::fs::read_to_string(&self.invocations)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let (worker, file) = l.split_once(' ').unwrap();
                let id = file.rsplit("email-").next().unwrap().trim_end_matches(".json").parse().unwrap();
                (id, worker.to_string())
            })
            .collect()
    }

    async fn count(&self, sql: &str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(&self.db).await.unwrap()
    }

    async fn spawn_started(&self, id: i64) -> i64 {
        sqlx::query_scalar("SELECT count(*) FROM atlas_audits WHERE email_id = $1 AND event = 'spawn_started'")
            .bind(id)
            .fetch_one(&self.db)
            .await
            .unwrap()
    }

    async fn status(&self, id: i64) -> String {
        sqlx::query_scalar("SELECT status FROM atlas_emails WHERE id = $1").bind(id).fetch_one(&self.db).await.unwrap()
    }

    /// The application name (the worker's holder) of the session holding `id`'s launch lock.
    async fn lock_holder(&self, id: i64) -> Option<String> {
        sqlx::query_scalar(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2 AND l.granted
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .bind(i64::from(LAUNCH_LOCK_CLASS))
        .bind(id)
        .fetch_optional(&self.db)
        .await
        .unwrap()
    }

    async fn wait_until<F: std::future::Future<Output = bool>>(&self, what: &str, bound: Duration, f: impl Fn() -> F) {
        let deadline = Instant::now() + bound;
        while !f().await {
            assert!(Instant::now() < deadline, "{what}: not within {bound:?}; invocations {:?}", self.invocations());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

fn kill9(pid: u32) {
    let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
}

/// Stops the fake `claude` processes a worker started (a dead host takes its children with it).
fn kill_claudes(worker: &Worker) {
    for pid in std::fs::read_to_string(worker.data.path().join("claude.pids")).unwrap_or_default().lines() {
        if let Ok(pid) = pid.trim().parse::<u32>() {
            kill9(pid);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_workers_on_one_database_launch_every_message_exactly_once() {
    const MESSAGES: usize = 8;
    let cluster = Cluster::start(MESSAGES).await;
    let a = cluster.worker("A", QUICK_RUN);
    let b = cluster.worker("B", QUICK_RUN);
    // Intake and classification once (the workers would do it too; the model answers once per mail).
    let out = cluster.command(&a, &["atlas", "poll", "--once"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(cluster.count("SELECT count(*) FROM atlas_emails WHERE status = 'classified'").await, MESSAGES as i64);

    let (mut wa, _la, _sa) = cluster.serve(&a);
    let (mut wb, _lb, _sb) = cluster.serve(&b);
    cluster
        .wait_until("every message actioned", Duration::from_secs(120), || async {
            cluster.count("SELECT count(*) FROM atlas_emails WHERE status = 'actioned'").await == MESSAGES as i64
        })
        .await;
    // A few more cycles of both workers: nothing is launched again.
    tokio::time::sleep(Duration::from_secs(3)).await;
    sigterm(&wa.0);
    sigterm(&wb.0);
    assert!(wait_exit(&mut wa.0, Duration::from_secs(30)).await.success());
    assert!(wait_exit(&mut wb.0, Duration::from_secs(30)).await.success());

    let invocations = cluster.invocations();
    let mut launched: Vec<i64> = invocations.iter().map(|(id, _)| *id).collect();
    launched.sort();
    let expected: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM atlas_emails ORDER BY id").fetch_all(&cluster.db).await.unwrap();
    assert_eq!(launched, expected, "each message's claude started exactly once: {invocations:?}");
    for id in &expected {
        assert_eq!(cluster.spawn_started(*id).await, 1, "message {id}");
    }
    assert_eq!(cluster.count("SELECT count(*) FROM atlas_launches").await, MESSAGES as i64);
    assert_eq!(cluster.count("SELECT count(*) FROM atlas_launches WHERE status <> 'ok'").await, 0);
    // Every lock and lease was given back.
    let leases: Vec<(i64, String)> =
        sqlx::query_as("SELECT email_id, holder FROM atlas_leases").fetch_all(&cluster.db).await.unwrap();
    let audits: Vec<(i64, String, String)> =
        sqlx::query_as("SELECT email_id, event, created_at FROM atlas_audits WHERE email_id IS NOT NULL ORDER BY id")
            .fetch_all(&cluster.db)
            .await
            .unwrap();
    assert!(leases.is_empty(), "leases left: {leases:?}\naudits: {audits:#?}");
    assert_eq!(
        cluster
            .count(&format!(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = {LAUNCH_LOCK_CLASS} \
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ))
            .await,
        0
    );
    let by_worker = |w: &str| invocations.iter().filter(|(_, name)| name == w).count();
    eprintln!("launches: A {}, B {}", by_worker("A"), by_worker("B"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_launch_releases_its_lock_and_the_message_is_retried_after_the_window() {
    let cluster = Cluster::start(1).await;
    let a = cluster.worker("A", ENDLESS_RUN);
    let b = cluster.worker("B", QUICK_RUN);
    let out = cluster.command(&a, &["atlas", "poll", "--once"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id: i64 = sqlx::query_scalar("SELECT id FROM atlas_emails").fetch_one(&cluster.db).await.unwrap();

    // A takes the message and hangs in its run.
    let (mut wa, _la, _sa) = cluster.serve(&a);
    cluster
        .wait_until("A's run started", Duration::from_secs(60), || async { !cluster.invocations().is_empty() })
        .await;
    let holder = cluster.lock_holder(id).await.expect("A holds the launch lock");
    assert!(holder.ends_with(&format!(":{}", wa.0.id())), "holder {holder:?} is A");
    assert_eq!(cluster.status(id).await, "spawned");

    // B runs alongside: the message is locked, B leaves it alone.
    let (mut wb, _lb, _sb) = cluster.serve(&b);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(cluster.invocations().len(), 1, "B never launches a locked message");
    assert_eq!(cluster.status(id).await, "spawned");

    // A's host dies: SIGKILL, no chance to clean up.
    kill9(wa.0.id());
    let _ = wait_exit(&mut wa.0, Duration::from_secs(10)).await;
    kill_claudes(&a);
    cluster
        .wait_until("the server released A's lock", Duration::from_secs(20), || async {
            cluster.lock_holder(id).await.is_none()
        })
        .await;
    // B's next cycle puts it back in the queue…
    cluster
        .wait_until("B reclaimed the message", Duration::from_secs(20), || async {
            cluster.status(id).await == "classified"
        })
        .await;
    let interrupted: i64 =
        sqlx::query_scalar("SELECT count(*) FROM atlas_audits WHERE email_id = $1 AND event = 'launch_interrupted'")
            .bind(id)
            .fetch_one(&cluster.db)
            .await
            .unwrap();
    assert_eq!(interrupted, 1);
    assert_eq!(
        cluster.count("SELECT count(*) FROM atlas_launches WHERE status = 'interrupted'").await,
        1,
        "A's launch is marked interrupted"
    );
    // …but does not relaunch it within the idempotence window (several cycles pass).
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(cluster.invocations().len(), 1, "not relaunched within the hour");
    assert_eq!(cluster.spawn_started(id).await, 1);

    // An hour later (the message's audits moved back 61 minutes), B relaunches it.
    sqlx::query(
        "UPDATE atlas_audits SET created_at = to_char((created_at::timestamptz - interval '61 minutes') AT TIME ZONE 'UTC', \
         'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') WHERE email_id = $1",
    )
    .bind(id)
    .execute(&cluster.db)
    .await
    .unwrap();
    cluster
        .wait_until("B relaunched and finished it", Duration::from_secs(60), || async {
            cluster.status(id).await == "actioned"
        })
        .await;
    let invocations = cluster.invocations();
    assert_eq!(invocations, vec![(id, "A".to_string()), (id, "B".to_string())]);
    assert_eq!(cluster.spawn_started(id).await, 2);
    sigterm(&wb.0);
    assert!(wait_exit(&mut wb.0, Duration::from_secs(30)).await.success());
    assert_eq!(cluster.count("SELECT count(*) FROM atlas_leases").await, 0);
}
