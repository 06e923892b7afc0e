//! `arthur atlas …` as a process, configured only through the environment (docs/interface.md §2):
//! clients, a poll against Dovecot with the scripted model and clamscan, the JSON shapes of
//! `list` and `show`, the report, and clear French errors that never print the password.

use std::process::{Command, Output};

use arthur_agents::llm::scripted::ScriptedLlm;
use serde_json::Value;

use crate::support::dovecot::Dovecot;
use crate::support::*;

struct Env {
    data: tempfile::TempDir,
    vars: Vec<(String, String)>,
}

impl Env {
    /// `arthur ARGS` with only this environment (a private data dir, no user config).
    fn command(&self, args: &[&str]) -> Command {
        let mut c = crate::common::arthur_command();
        c.args(args).env_clear().env("PATH", std::env::var("PATH").unwrap()).env("HOME", self.data.path());
        c.env("ARTHUR_DATA_DIR", self.data.path()).env("XDG_CONFIG_HOME", self.data.path().join("config"));
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }
    fn arthur(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
    fn ok(&self, args: &[&str]) -> String {
        let out = self.arthur(args);
        assert!(out.status.success(), "{args:?}: {}\n{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    }
    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }
}

/// One set of DKIM keys for this test binary's processes (the file and the signatures agree).
fn test_keys() -> &'static DkimKeys {
    static KEYS: std::sync::OnceLock<DkimKeys> = std::sync::OnceLock::new();
    KEYS.get_or_init(DkimKeys::generate)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn env(imap: &Dovecot, llm: &ScriptedLlm, db: &std::path::Path) -> Env {
    let data = tempfile::tempdir().unwrap();
    let keys = data.path().join("dkim-keys");
    test_keys().write_file(&keys);
    Env {
        data,
        vars: vec![
            ("ATLAS_DKIM_KEYS".into(), keys.display().to_string()),
            ("ATLAS_IMAP_URL".into(), imap.url()),
            ("MISTRAL_API_KEY".into(), "sk-test-secret".into()),
            ("MISTRAL_BASE_URL".into(), llm.base_url()),
            ("ATLAS_CLAMSCAN_DB".into(), db.display().to_string()),
            ("ATLAS_FOUNDER_EMAIL".into(), FOUNDER.into()),
            ("ATLAS_MAILBOX_EMAIL".into(), MAILBOX.into()),
            ("ATLAS_CLASSIFIER_MODEL".into(), "mistral-small-2603".into()),
            // CI runs as root: the machine is a sandbox (the fake claude does not care).
            ("ATLAS_SANDBOXED".into(), "1".into()),
        ],
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn poll_list_show_and_report_through_the_command_line() {
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let env = env(&imap, &llm, db.path());

    let out = env.ok(&["atlas", "client", "add", "--name", "Boutique", "--domain", "boutique.fr", "--mrr", "1200"]);
    assert!(out.contains("Client n°1 ajouté"), "{out}");
    let clients = env.json(&["atlas", "client", "list", "--json"]);
    assert_eq!(clients[0]["domains"][0], "boutique.fr");
    assert_eq!(clients[0]["mrr"], 1200.0);

    imap.append(&msg("marie@boutique.fr", "Merci", "Merci !").raw()).await;
    imap.append(&msg("x@inconnu.fr", "Devis", "Combien ?").raw()).await;
    imap.append(
        &msg("y@inconnu.fr", "PJ", "voir")
            .attach(Some("a.bin"), "application/octet-stream", &crate::support::clamav::eicar())
            .raw(),
    )
    .await;
    llm.push(verdict("noise", "leger", 0.95));
    llm.push(verdict("negociation", "leger", 0.88));
    let out = env.ok(&["atlas", "poll", "--once"]);
    assert!(out.contains("3 nouveaux") && out.contains("1 bloqué") && out.contains("2 classés"), "{out}");
    assert!(imap.seen_flags().await.iter().all(|(_, s)| *s));
    // The classifier used the configured model name.
    assert!(llm.chat_requests().iter().all(|r| r.body["model"] == "mistral-small-2603"));

    let list = env.json(&["atlas", "list", "--json"]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 3);
    for item in list {
        for key in ["id", "message_id", "state", "intent", "complexity", "confidence"] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
    }
    assert_eq!(list[0]["state"], "classified");
    assert_eq!(list[0]["intent"], "question", "a paying client is never noise");
    assert_eq!(list[1]["intent"], "negociation");
    assert_eq!(list[1]["confidence"], 0.88);
    assert_eq!(list[2]["state"], "blocked");
    assert_eq!(list[2]["intent"], Value::Null);
    let blocked = env.json(&["atlas", "list", "--json", "--state", "blocked"]);
    assert_eq!(blocked.as_array().unwrap().len(), 1);

    let id = list[0]["id"].as_i64().unwrap().to_string();
    let show = env.json(&["atlas", "show", &id, "--json"]);
    assert_eq!(show["state"], "classified");
    assert_eq!(show["classification"]["intent"], "question");
    assert_eq!(show["classification"]["model"], "mistral/mistral-small-2603");
    assert_eq!(show["client"]["name"], "Boutique");
    assert_eq!(show["client"]["source"], "envelope");
    assert_eq!(show["materialised"]["kind"], "question");
    assert!(show["launch_events"].as_array().unwrap().is_empty());
    let events: Vec<&str> = show["audits"].as_array().unwrap().iter().map(|a| a["event"].as_str().unwrap()).collect();
    assert_eq!(events.first(), Some(&"poll_inserted"));
    assert!(events.contains(&"noise_override_known_client") && events.contains(&"classified"), "{events:?}");

    let report = env.ok(&["atlas", "report", "--days", "30"]);
    assert!(report.contains("| question | 1 | 0,95 | 0,00 |"), "{report}");
    assert!(report.contains("| question | 1 | 1 | 100,0 % |"), "{report}");
    // The founder refuses the question: the success proxy counts it.
    assert!(env.ok(&["atlas", "cancel", &id]).contains("question n°1 annulé"));
    let report = env.ok(&["atlas", "report", "--days", "30"]);
    assert!(report.contains("| question | 0 | 1 | 0,0 % |"), "{report}");
    let blocked_id = list[2]["id"].as_i64().unwrap().to_string();
    let out = env.arthur(&["atlas", "cancel", &blocked_id]);
    assert!(!out.status.success() && stderr(&out).contains("Rien n'a été annulé"));
    assert!(report.contains("Bloquées par l'antivirus (classify_blocked_unsafe_attachments) : 1"), "{report}");

    // No secret in the database: neither the IMAP password nor the API key.
    let bytes = std::fs::read(env.data.path().join("arthur.db")).unwrap();
    let wal = std::fs::read(env.data.path().join("arthur.db-wal")).unwrap_or_default();
    for secret in [imap.password(), "sk-test-secret"] {
        let found = |hay: &[u8]| hay.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!found(&bytes) && !found(&wal), "{secret} stored in the database");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_are_french_and_never_print_the_password() {
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let mut env = env(&imap, &llm, db.path());

    // The doctor says what Atlas lacks: no repository, no SMTP.
    let doctor = String::from_utf8_lossy(&env.arthur(&["doctor"]).stdout).into_owned();
    assert!(doctor.contains("[ok] Atlas : configuré"), "{doctor}");
    // Where the values came from: this environment set Atlas' mailbox, nothing came from a file.
    let origins = doctor.lines().find(|l| l.contains("réglages :")).unwrap_or_default();
    assert!(origins.contains("de l'environnement : ") && origins.contains("ATLAS_IMAP_URL"), "{doctor}");
    assert!(!origins.contains("du fichier"), "{doctor}");
    assert!(doctor.contains("[ok] Atlas · antivirus : clamscan"), "{doctor}");
    assert!(doctor.contains("[--] Atlas · lanceur : ATLAS_REPO manquant"), "{doctor}");
    assert!(doctor.contains("[--] Atlas · récapitulatifs : ATLAS_SMTP_URL manquant"), "{doctor}");
    assert!(!doctor.contains(imap.password()), "the doctor never prints the password");
    // As root without ATLAS_SANDBOXED, the doctor says Claude Code would refuse, why and what to do.
    let repo = crate::support::git::git_repo();
    env.vars.push(("ATLAS_REPO".into(), repo.path().display().to_string()));
    env.vars.push(("ATLAS_SANDBOXED".into(), "0".into()));
    let doctor = String::from_utf8_lossy(&env.arthur(&["doctor"]).stdout).into_owned();
    if arthur_atlas::child_env::running_as_root() {
        assert!(doctor.contains("[--] Atlas · root : Arthur tourne en root"), "{doctor}");
        assert!(doctor.contains("User=arthur") && doctor.contains("ATLAS_SANDBOXED=1"), "{doctor}");
    } else {
        assert!(!doctor.contains("Atlas · root"), "{doctor}");
    }
    env.vars.truncate(env.vars.len() - 2);
    let out = env.arthur(&["atlas", "client", "add", "--name", "Moi", "--domain", "gmail.com"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Erreur : le client n'a pas pu être ajouté."), "{}", stderr(&out));
    assert!(stderr(&out).contains("public webmail domain"));
    let out = env.arthur(&["atlas", "client", "add", "--name", "Sans adresse"]);
    assert!(!out.status.success());
    env.ok(&["atlas", "client", "add", "--name", "A", "--email", "a@a.fr"]);
    let out = env.arthur(&["atlas", "client", "add", "--name", "B", "--email", "a@a.fr"]);
    assert!(stderr(&out).contains("already belongs to a client"), "{}", stderr(&out));
    assert_eq!(env.json(&["atlas", "client", "list", "--json"]).as_array().unwrap().len(), 1, "B rolled back");

    let out = env.arthur(&["atlas", "show", "999", "--json"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("aucun e-mail Atlas n°999"));
    let out = env.arthur(&["atlas", "list", "--json", "--state", "perdu"]);
    assert!(!out.status.success());

    // A wrong password, then an unreachable server: French summary, English detail, no password.
    let url = imap.url().replace(imap.password(), "mauvais-secret-42");
    env.vars.retain(|(k, _)| k != "ATLAS_IMAP_URL");
    env.vars.push(("ATLAS_IMAP_URL".into(), url));
    let out = env.arthur(&["atlas", "poll", "--once"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("Erreur : la boîte d'Atlas est injoignable ou mal configurée."), "{err}");
    assert!(err.contains("refused the login"), "{err}");
    assert!(!err.contains("mauvais-secret-42"), "{err}");
    env.vars.retain(|(k, _)| k != "ATLAS_IMAP_URL");
    env.vars.push(("ATLAS_IMAP_URL".into(), "imap://atlas:mauvais-secret-42@127.0.0.1:1/INBOX".into()));
    let out = env.arthur(&["atlas", "poll", "--once"]);
    let err = stderr(&out);
    assert!(!out.status.success() && err.contains("cannot reach the IMAP server 127.0.0.1:1"), "{err}");
    assert!(!err.contains("mauvais-secret-42"));
    env.vars.retain(|(k, _)| k != "ATLAS_IMAP_URL");
    let out = env.arthur(&["atlas", "poll", "--once"]);
    assert!(stderr(&out).contains("set ATLAS_IMAP_URL"), "{}", stderr(&out));
    env.vars.push(("ATLAS_DISABLED".into(), "1".into()));
    let out = env.arthur(&["atlas", "launch", "--once"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("lancements désactivés"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_polls_the_mailbox_and_reports_it_on_healthz() {
    use std::time::Duration;
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let env = env(&imap, &llm, db.path());
    llm.set_fallback(Some(verdict("question", "leger", 0.9)));
    imap.append(&msg("x@inconnu.fr", "Avis", "Ton avis ?").raw()).await;

    let mut c = env.command(&["serve", "--no-voice", "--atlas-poll-secs", "1"]);
    c.env("ARTHUR_WEB_ADDR", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = crate::common::Killed(c.spawn().unwrap());
    let lines = crate::common::lines_of(&mut child.0);
    let mut seen = Vec::new();
    let web = crate::common::wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(30));
    let base = web[web.find("http://").unwrap()..].split_whitespace().next().unwrap().trim_end_matches('.').to_string();
    crate::common::wait_line(&lines, &mut seen, "Atlas : relève de atlas@127.0.0.1", Duration::from_secs(30));
    // A message arriving while serve runs is picked up by a later tick.
    imap.append(&msg("y@inconnu.fr", "Autre <script>alert(1)</script>", "Encore ?").raw()).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let health = loop {
        let h: Value = reqwest::get(format!("{base}/healthz")).await.unwrap().json().await.unwrap();
        if h["atlas"]["classified"] == 2 {
            break h;
        }
        assert!(std::time::Instant::now() < deadline, "not classified in time: {h}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(health["atlas"]["last_poll"].is_string());
    assert!(health["atlas"]["last_error"].is_null());
    assert!(imap.seen_flags().await.iter().all(|(_, s)| *s));
    let page = reqwest::get(format!("{base}/atlas")).await.unwrap().text().await.unwrap();
    assert!(page.contains("Autre &lt;script&gt;alert(1)&lt;/script&gt;"), "{page}");
    assert!(!page.contains("<script>alert(1)"));
    assert!(page.contains("classified") && page.contains("question") && page.contains("90 %"));
    crate::common::sigterm(&child.0);
    let status = crate::common::wait_exit(&mut child.0, Duration::from_secs(15)).await;
    assert!(status.success(), "{seen:#?}");
    let list = env.json(&["atlas", "list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(seen.iter().all(|l| !l.contains(imap.password())), "the password reached the log");
}

/// kill -9 in the middle of an intake, then a new poll: every message stored exactly once,
/// every message \Seen, the database intact.
#[tokio::test(flavor = "multi_thread")]
async fn kill_9_mid_intake_loses_nothing_and_duplicates_nothing() {
    use std::time::Duration;
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    llm.set_fallback(Some(verdict("question", "leger", 0.9)));
    let db = crate::support::clamav::eicar_db();
    let env = env(&imap, &llm, db.path());
    let n = 400;
    for i in 0..n {
        imap.append(&msg("x@inconnu.fr", &format!("Message {i}"), &"texte ".repeat(200)).raw()).await;
    }
    let db_path = env.data.path().join("arthur.db");
    let mut child = env
        .command(&["atlas", "poll", "--once"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill as soon as some messages are committed, before the intake can finish.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let stored_at_kill = loop {
        let count = std::process::Command::new("sqlite3")
            .arg(&db_path)
            .arg("SELECT COUNT(*) FROM atlas_emails")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if count > 0 {
            child.kill().unwrap();
            child.wait().unwrap();
            break count;
        }
        assert!(std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none(), "no row before the end");
        std::thread::sleep(Duration::from_millis(5));
    };
    let unseen_after_kill = imap.seen_flags().await.iter().filter(|(_, s)| !*s).count();
    assert!(unseen_after_kill > 0, "killed too late: everything was already marked");
    assert!(stored_at_kill < n, "killed too late: {stored_at_kill} stored");

    let out = env.ok(&["atlas", "poll", "--once"]);
    assert!(out.contains(" classé"), "{out}");
    let list = env.json(&["atlas", "list", "--json"]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), n, "each message exactly once");
    let mut subjects: Vec<&str> = list.iter().map(|r| r["subject"].as_str().unwrap()).collect();
    subjects.sort();
    subjects.dedup();
    assert_eq!(subjects.len(), n);
    assert!(list.iter().all(|r| r["state"] == "classified"), "the pending steps were finished");
    assert!(imap.seen_flags().await.iter().all(|(_, s)| *s));
    let check = std::process::Command::new("sqlite3").arg(&db_path).arg("PRAGMA integrity_check").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "ok");
}

/// `arthur serve` with the launcher: a run in flight when SIGTERM arrives is interrupted and
/// salvaged — exit 0, the message back in the queue, the founder told.
#[tokio::test(flavor = "multi_thread")]
async fn serve_stops_a_launch_in_flight_through_the_salvage_path() {
    use std::time::Duration;
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let smtp = crate::support::smtp::SmtpServer::start();
    let repo = crate::support::git::git_repo();
    let mut env = env(&imap, &llm, db.path());
    let bin = env.data.path().join("claude");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\nFAKE_CLAUDE_SCENARIO=partial_contract_then_silence exec {} \"$@\"\n",
            crate::support::fake_claude().display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&bin).status().unwrap();
    for (k, v) in [
        ("ATLAS_REPO", repo.path().display().to_string()),
        ("ATLAS_BASE_BRANCH", "main".to_string()),
        ("ATLAS_CLAUDE_BIN", bin.display().to_string()),
        ("ATLAS_SMTP_URL", smtp.url()),
    ] {
        env.vars.push((k.into(), v));
    }
    llm.push(verdict("run", "leger", 0.9));
    imap.append(&test_keys().sign("maboite.fr", &msg(FOUNDER, "Long travail", "Refais tout"))).await;

    let mut c = env.command(&[
        "serve",
        "--no-voice",
        "--atlas-poll-secs",
        "1",
        "--atlas-launch-secs",
        "1",
        "--atlas-launch-offset-secs",
        "1",
    ]);
    c.env("ARTHUR_WEB_ADDR", "127.0.0.1:0").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = crate::common::Killed(c.spawn().unwrap());
    let lines = crate::common::lines_of(&mut child.0);
    let mut seen = Vec::new();
    crate::common::wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(30));
    // Wait for the run's work-in-progress commit in its worktree.
    let worktrees = env.data.path().join("worktrees");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let wip = std::fs::read_dir(&worktrees)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .any(|e| crate::support::git::git(&e.path(), &["log", "--format=%s"]).contains("wip: diagnostic"))
            })
            .unwrap_or(false);
        if wip {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the run never started: {seen:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let stop = std::time::Instant::now();
    crate::common::sigterm(&child.0);
    let status = crate::common::wait_exit(&mut child.0, Duration::from_secs(30)).await;
    assert!(status.success(), "{seen:#?}");
    assert!(stop.elapsed() < Duration::from_secs(20), "stopped in {:?}", stop.elapsed());

    let list = env.json(&["atlas", "list", "--json"]);
    assert_eq!(list[0]["state"], "classified", "back in the queue for a later relaunch");
    let id = list[0]["id"].as_i64().unwrap().to_string();
    let show = env.json(&["atlas", "show", &id, "--json"]);
    let launch = &show["launch_events"][0];
    assert_eq!((launch["status"].as_str(), launch["killed"].as_str()), (Some("hard_timeout"), Some("shutdown")));
    assert!(launch["events"].as_array().unwrap().len() >= 3, "the journal was kept");
    let events: Vec<&str> = show["audits"].as_array().unwrap().iter().map(|a| a["event"].as_str().unwrap()).collect();
    assert!(events.contains(&"salvaged") && events.contains(&"recap_sent"), "{events:?}");
    let mails = smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(mails[0].text().contains("interrompu par l'arrêt d'Arthur"));
    assert!(mails[0].text().contains("wip: diagnostic du panier"), "salvaged commits listed");
}

/// `arthur atlas launch --once` as a process with verbose logs: the secrets a run prints
/// reach neither the log nor the database.
#[tokio::test(flavor = "multi_thread")]
async fn launch_logs_and_database_never_hold_the_secrets_a_run_prints() {
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let repo = crate::support::git::git_repo();
    let mut env = env(&imap, &llm, db.path());
    let bin = env.data.path().join("claude");
    std::fs::write(
        &bin,
        format!("#!/bin/sh\nFAKE_CLAUDE_SCENARIO=secrets exec {} \"$@\"\n", crate::support::fake_claude().display()),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&bin).status().unwrap();
    env.vars.push(("ATLAS_REPO".into(), repo.path().display().to_string()));
    env.vars.push(("ATLAS_CLAUDE_BIN".into(), bin.display().to_string()));
    env.vars.push(("RUST_LOG".into(), "debug".into()));
    llm.push(verdict("question", "leger", 0.9));
    imap.append(&test_keys().sign("maboite.fr", &msg(FOUNDER, "Config", "Regarde la config"))).await;
    env.ok(&["atlas", "poll", "--once"]);
    let out = env.arthur(&["atlas", "launch", "--once"]);
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert!(all.contains("1 lancé,"), "{all}");
    let bytes = std::fs::read(env.data.path().join("arthur.db")).unwrap();
    let wal = std::fs::read(env.data.path().join("arthur.db-wal")).unwrap_or_default();
    for secret in [
        "s3cr3tpass",
        "sk-ant-api03-AbCdEf",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ] {
        assert!(!all.contains(secret), "{secret} in the log");
        let found = |hay: &[u8]| hay.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!found(&bytes) && !found(&wal), "{secret} in the database");
    }
}

/// `arthur atlas launch --once` as a process whose environment holds every kind of secret
/// Arthur has: Claude Code, the deploy command and the QA command each dump their
/// environment, and none of those secrets is there — only the allowlist, the `ATLAS_*`
/// values the launcher gives on purpose, and the one name listed in `ATLAS_CHILD_ENV`.
#[tokio::test(flavor = "multi_thread")]
async fn children_get_the_allowlisted_environment_and_none_of_arthurs_secrets() {
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let repo = crate::support::git::git_repo();
    let smtp = crate::support::smtp::SmtpServer::start_requiring_auth();
    let mut env = env(&imap, &llm, db.path());
    let dir = env.data.path().to_path_buf();
    let script = dir.join("plan.jsonl");
    std::fs::write(
        &script,
        "{\"commit\": \"feat: page\"}\n\
         {\"contract\": {\"ok\": true, \"tenant\": \"shop\", \"routes_to_qa\": [\"/a\"], \"commits\": \"$COMMITS\", \"summary_md\": \"ok\"}}\n\
         {\"result\": {}}\n",
    )
    .unwrap();
    let bin = dir.join("claude");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\nFAKE_CLAUDE_ENV_FILE='{}' FAKE_CLAUDE_SCRIPT='{}' exec {} \"$@\"\n",
            dir.join("claude.env").display(),
            script.display(),
            crate::support::fake_claude().display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&bin).status().unwrap();
    let secrets = [
        ("OPENAI_API_KEY", "sk-openai-never-in-a-child".to_string()),
        ("ARTHUR_WEB_TOKEN", "web-token-never-in-a-child".to_string()),
        ("ARTHUR_DATABASE_URL", format!("sqlite://{}/arthur.db", dir.display())),
        ("ATLAS_SMTP_URL", smtp.url_with_password(smtp.password())),
        ("UNLISTED_SETTING", "not-for-children".to_string()),
    ];
    for (k, v) in secrets.iter().cloned() {
        env.vars.push((k.into(), v));
    }
    for (k, v) in [
        ("ATLAS_REPO", repo.path().display().to_string()),
        ("ATLAS_BASE_BRANCH", "main".to_string()),
        ("ATLAS_CLAUDE_BIN", bin.display().to_string()),
        ("ATLAS_DEPLOY_CMD", format!("env > '{}'", dir.join("deploy.env").display())),
        ("ATLAS_QA_CMD", format!("env > '{}'", dir.join("qa.env").display())),
        ("ANTHROPIC_API_KEY", "sk-ant-listed-on-purpose".to_string()),
        ("ATLAS_CHILD_ENV", "ANTHROPIC_API_KEY".to_string()),
    ] {
        env.vars.push((k.into(), v));
    }
    llm.push(verdict("run", "plan", 0.9));
    imap.append(&test_keys().sign("maboite.fr", &msg(FOUNDER, "Nouvelle page", "Ajoute la page A."))).await;
    env.ok(&["atlas", "poll", "--once"]);
    let out = env.arthur(&["atlas", "launch", "--once"]);
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(out.status.success() && all.contains("1 traité,"), "{all}");

    let claude: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("claude.env")).unwrap()).unwrap();
    let shell_env = |name: &str| -> std::collections::BTreeMap<String, String> {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect()
    };
    let children = [("claude", claude), ("deploy", shell_env("deploy.env")), ("qa", shell_env("qa.env"))];
    let imap_password = imap.password().to_string();
    for (who, vars) in &children {
        let all = format!("{vars:?}");
        for (name, value) in secrets
            .iter()
            .chain([("MISTRAL_API_KEY", "sk-test-secret".to_string()), ("ATLAS_IMAP_URL", imap.url())].iter())
        {
            assert!(!vars.contains_key(*name), "{who} got {name}");
            assert!(!all.contains(value.as_str()), "{who} saw the value of {name}");
        }
        assert!(!all.contains(&imap_password) && !all.contains(smtp.password()), "{who} saw a password");
        assert_eq!(vars.get("ANTHROPIC_API_KEY").map(String::as_str), Some("sk-ant-listed-on-purpose"), "{who}");
        assert!(vars.contains_key("PATH") && vars.contains_key("HOME"), "{who}: {vars:?}");
        let atlas: Vec<&String> = vars.keys().filter(|k| k.starts_with("ATLAS_")).collect();
        let expected: &[&str] = match *who {
            "claude" => &["ATLAS_CONTRACT_FILE"],
            "deploy" => &["ATLAS_TENANT", "ATLAS_WORKSPACE"],
            _ => &["ATLAS_ROUTE", "ATLAS_TENANT", "ATLAS_WORKSPACE"],
        };
        assert_eq!(atlas, expected, "{who}: only what the launcher gives on purpose");
    }
    // The recap still went out (Arthur itself used the SMTP password; its children did not).
    assert_eq!(smtp.wait_for_messages(1, std::time::Duration::from_secs(10)).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_doctor_says_who_may_launch_and_what_the_runs_see() {
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let mut env = env(&imap, &llm, db.path());
    let out = env.ok(&["doctor"]);
    assert!(out.contains("seuls tes e-mails signés DKIM"), "{out}");
    assert!(out.contains("en attente de ton accord : 0"), "{out}");
    assert!(out.contains("mis de côté après une journée d'erreurs : 0 (antivirus 0, classification 0)"), "{out}");
    assert!(out.contains("escaladés (un humain doit reprendre) : 0"), "{out}");
    assert!(out.contains("2 nouveaux essais après un délai dépassé"), "{out}");
    // A parked message is counted (its row put in that state as a day of errors would).
    let pool = sqlx::sqlite::SqlitePoolOptions::new()
        .connect(&format!("sqlite://{}", env.data.path().join("arthur.db").display()))
        .await
        .unwrap();
    let now = arthur_agents::time::to_db(chrono::Utc::now());
    let raw: i64 = sqlx::query_scalar(
        "INSERT INTO atlas_raw_messages (account, message_key, raw, size, received_at) VALUES ('a', 'k', x'00', 1, ?) RETURNING id",
    )
    .bind(&now)
    .fetch_one(&pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO atlas_emails (raw_message_id, status, created_at, updated_at) VALUES (?, 'scan_failed', ?, ?)",
    )
    .bind(raw)
    .bind(&now)
    .bind(&now)
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let out = env.ok(&["doctor"]);
    assert!(
        out.contains("[--] Atlas · mis de côté après une journée d'erreurs : 1 (antivirus 1, classification 0)"),
        "{out}"
    );
    env.vars.push(("ATLAS_TRUST_UNSIGNED_FOUNDER".into(), "1".into()));
    env.vars.push(("ATLAS_CHILD_ENV".into(), "ANTHROPIC_API_KEY".into()));
    let out = env.ok(&["doctor"]);
    assert!(out.contains("[--] Atlas · autorité : ATLAS_TRUST_UNSIGNED_FOUNDER=1"), "{out}");
    assert!(out.contains("ATLAS_CHILD_ENV : ANTHROPIC_API_KEY"), "{out}");
    env.vars.push(("ATLAS_WORKTREE".into(), "0".into()));
    let out = env.ok(&["doctor"]);
    assert!(out.contains("[--] Atlas · runs : ATLAS_WORKTREE=0"), "{out}");
    env.vars.push(("ATLAS_CHILD_ENV".into(), "BAD=NAME".into()));
    let out = env.arthur(&["doctor"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("ATLAS_CHILD_ENV"), "{}", stderr(&out));
}

/// `arthur serve` runs the lock watchdog as a task of its own: while a launch cycle is busy
/// with a run that does not end, a lock held for more than ten minutes (another worker's,
/// stuck) reaches the founder by e-mail — once, however many checks see it.
#[tokio::test(flavor = "multi_thread")]
async fn serve_s_lock_watchdog_alerts_once_while_a_launch_cycle_runs() {
    use std::time::Duration;
    let imap = Dovecot::start().await;
    let llm = ScriptedLlm::start().await;
    let db = crate::support::clamav::eicar_db();
    let smtp = crate::support::smtp::SmtpServer::start();
    let repo = crate::support::git::git_repo();
    let mut env = env(&imap, &llm, db.path());
    let pids = env.data.path().join("claude.pids");
    let bin = env.data.path().join("claude");
    std::fs::write(
        &bin,
        format!(
            "#!/bin/sh\nFAKE_CLAUDE_SCENARIO=silence FAKE_CLAUDE_PID_FILE='{}' exec {} \"$@\"\n",
            pids.display(),
            crate::support::fake_claude().display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&bin).status().unwrap();
    for (k, v) in [
        ("ATLAS_REPO", repo.path().display().to_string()),
        ("ATLAS_BASE_BRANCH", "main".to_string()),
        ("ATLAS_CLAUDE_BIN", bin.display().to_string()),
        ("ATLAS_SMTP_URL", smtp.url()),
    ] {
        env.vars.push((k.into(), v));
    }
    llm.push(verdict("run", "leger", 0.9));
    imap.append(&test_keys().sign("maboite.fr", &msg(FOUNDER, "Long travail", "Refais tout"))).await;
    llm.push(verdict("question", "leger", 0.9));
    imap.append(&msg("x@inconnu.fr", "Autre", "Bonjour").raw()).await;
    let mut c = env.command(&[
        "serve",
        "--no-voice",
        "--atlas-poll-secs",
        "1",
        "--atlas-launch-secs",
        "1",
        "--atlas-launch-offset-secs",
        "1",
        "--atlas-watchdog-secs",
        "1",
    ]);
    c.env("ARTHUR_WEB_ADDR", "127.0.0.1:0").stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = crate::common::Killed(c.spawn().unwrap());
    let lines = crate::common::lines_of(&mut child.0);
    let mut seen = Vec::new();
    crate::common::wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(30));
    // The launcher is now inside a cycle that does not end: claude stays silent for an hour.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&pids).unwrap_or_default().trim().is_empty() {
        assert!(std::time::Instant::now() < deadline, "claude never started: {seen:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Another worker's lock on the second message, taken twenty minutes ago and stuck.
    let url = format!("sqlite://{}", env.data.path().join("arthur.db").display());
    let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect(&url).await.unwrap();
    let other: i64 = sqlx::query_scalar("SELECT id FROM atlas_emails WHERE id <> (SELECT MIN(id) FROM atlas_emails)")
        .fetch_one(&pool)
        .await
        .unwrap();
    let ago = arthur_agents::time::to_db(chrono::Utc::now() - chrono::Duration::minutes(20));
    let later = arthur_agents::time::to_db(chrono::Utc::now() + chrono::Duration::hours(2));
    sqlx::query(
        "INSERT INTO atlas_leases (email_id, holder, acquired_at, expires_at) VALUES (?, 'stuck-host:4242', ?, ?)",
    )
    .bind(other)
    .bind(&ago)
    .bind(&later)
    .execute(&pool)
    .await
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let alert = loop {
        let mails = smtp.wait_for_messages(1, Duration::from_secs(20));
        if let Some(a) = mails.iter().find(|m| m.parsed().subject().unwrap_or("").starts_with("[Atlas] verrou bloqué"))
        {
            break a.clone();
        }
        let subjects: Vec<String> = mails.iter().map(|m| m.parsed().subject().unwrap_or("").to_string()).collect();
        assert!(std::time::Instant::now() < deadline, "no lock alert among {subjects:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert_eq!(alert.rcpt_tos, vec![FOUNDER.to_string()]);
    assert!(
        alert.text().contains("stuck-host:4242") && alert.text().contains(&format!("e-mail n° {other}")),
        "{}",
        alert.text()
    );
    // Several more checks: still one e-mail for that lock, and the run is still going.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let alerts = smtp
        .messages()
        .iter()
        .filter(|m| m.parsed().subject().unwrap_or("").starts_with("[Atlas] verrou bloqué"))
        .count();
    assert_eq!(alerts, 1);
    let audits: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM atlas_audits WHERE event = 'lock_watchdog_alert' AND email_id = ?")
            .bind(other)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(audits >= 3, "a check every second: {audits}");
    let running: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM atlas_launches WHERE status = 'running'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(running, 1, "the cycle was still running meanwhile");
    pool.close().await;
    crate::common::sigterm(&child.0);
    let status = crate::common::wait_exit(&mut child.0, Duration::from_secs(30)).await;
    assert!(status.success(), "{seen:#?}");
}
