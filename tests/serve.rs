//! `arthur serve`, the appliance, as a process: a recording for a microphone and a scripted
//! model → a spoken command becomes a reminder the web page shows; `/healthz` reports the
//! voice and its models; SIGTERM stops it cleanly within a bound and the database passes
//! `PRAGMA integrity_check`. First start writes the commented example configuration. The
//! reminder notifier announces a due reminder once, across restarts.

use crate::common;

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use arthur::health::Tally;
use arthur::notifier::NotifierDeps;
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::memory::MemoryStore;
use arthur_audio::wav;
use common::{lines_of, script_bank_reminder, sigterm, wait_exit, wait_line, Killed};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_hears_a_command_shows_it_on_the_web_and_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let speech = dir.path().join("speech.wav");
    let mut input = vec![0.0f32; 16_000];
    input.extend(common::espeak_en("Arthur, remind me to call the bank tomorrow at nine.", &speech));
    input.extend(vec![0.0f32; 16_000 * 3]);
    let input_path = dir.path().join("mic.wav");
    wav::write_wav(&input_path, &input, 16_000).unwrap();

    let llm = ScriptedLlm::start().await;
    script_bank_reminder(&llm);
    let model = arthur::config::default_model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let data = dir.path().join("data");
    let output = dir.path().join("arthur.wav");
    let child = crate::common::arthur_command()
        .args(["serve", "--input"])
        .arg(&input_path)
        .arg("--output")
        .arg(&output)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("ARTHUR_DATA_DIR", &data)
        .env("ARTHUR_WEB_ADDR", "127.0.0.1:0")
        .env("ARTHUR_STT_LANG", "en")
        .env("ARTHUR_WHISPER_MODEL", &model)
        .env("MISTRAL_API_KEY", "test-key")
        .env("MISTRAL_BASE_URL", llm.base_url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let lines = lines_of(&mut child.0);
    let mut seen = Vec::new();

    // First start: the example configuration and the one-screen summary.
    wait_line(&lines, &mut seen, "premier démarrage", Duration::from_secs(30));
    let config = dir.path().join("config/arthur/arthur.toml");
    assert!(std::fs::read_to_string(&config).unwrap().contains("# timezone = \"Europe/Paris\""));
    // It invites an api_key: no other account may read it.
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&config).unwrap().permissions().mode() & 0o777, 0o600);
    let web_line = wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(30));
    let base = web_line.split("sur ").nth(1).unwrap().trim().to_string();
    wait_line(&lines, &mut seen, "à l'écoute", Duration::from_secs(60));

    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let page = http.get(format!("{base}/rappels")).send().await.unwrap().text().await.unwrap();
        if page.contains("appeler la banque") {
            break;
        }
        assert!(Instant::now() < deadline, "the spoken reminder never reached the web page; output: {seen:#?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let health: serde_json::Value = http.get(format!("{base}/healthz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(health["database"], "ok", "{health}");
    assert!(health["voice"].as_str().unwrap().starts_with("à l'écoute"), "{health}");
    assert_eq!(health["models"]["whisper"], json!(model.to_str().unwrap()), "{health}");
    assert!(health["atlas"].is_object(), "{health}");

    // Let the answer be spoken, then stop as systemd would.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let asked = Instant::now();
    sigterm(&child.0);
    let status = wait_exit(&mut child.0, Duration::from_secs(10)).await;
    assert!(status.success(), "{status:?}; {seen:#?}");
    eprintln!("stopped {:.2} s after SIGTERM", asked.elapsed().as_secs_f64());
    while let Ok(l) = lines.recv_timeout(Duration::from_millis(200)) {
        seen.push(l);
    }
    assert!(seen.iter().any(|l| l.contains("arrêté proprement")), "{seen:#?}");

    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", data.join("arthur.db").display())).await.unwrap();
    let check: (String,) = sqlx::query_as("PRAGMA integrity_check").fetch_one(&pool).await.unwrap();
    assert_eq!(check.0, "ok");
    let count: (i64,) = sqlx::query_as("SELECT count(*) FROM rappels").fetch_one(&pool).await.unwrap();
    assert_eq!(count.0, 1);
    let said = wav::read_wav_16k_mono(&output).expect("the answer was written at the stop");
    assert!(wav::rms(&said) > 0.01);
}

#[tokio::test]
async fn without_models_serve_keeps_the_web_and_says_why_the_voice_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("arthur.toml");
    std::fs::write(&config, "").unwrap();
    let child = crate::common::arthur_command()
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("ARTHUR_CONFIG", &config)
        .env("ARTHUR_DATA_DIR", dir.path().join("data"))
        .env("ARTHUR_WEB_ADDR", "127.0.0.1:0")
        .env("ARTHUR_WHISPER_MODEL", dir.path().join("missing.bin"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let lines = lines_of(&mut child.0);
    let mut seen = Vec::new();
    let web_line = wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(30));
    let off = wait_line(&lines, &mut seen, "voix désactivée", Duration::from_secs(30));
    assert!(off.contains("aucun modèle whisper") && off.contains("Le web et les rappels fonctionnent"), "{off}");
    assert!(!seen.iter().any(|l| l.contains("premier démarrage")), "ARTHUR_CONFIG names a file: no example written");
    let base = web_line.split("sur ").nth(1).unwrap().trim().to_string();
    // The line is printed as the voice gives up; /healthz follows a moment later.
    let deadline = Instant::now() + Duration::from_secs(10);
    let health = loop {
        let health: serde_json::Value = reqwest::get(format!("{base}/healthz")).await.unwrap().json().await.unwrap();
        if health["voice"].is_string() || Instant::now() > deadline {
            break health;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(health["voice"].as_str().is_some_and(|v| v.starts_with("désactivée")), "{health}");
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(10)).await.success());
}

#[tokio::test]
async fn a_due_reminder_is_announced_once_and_stays_due_until_heard_or_seen() {
    use arthur::notifier::Notifier;
    use arthur_agents::memory::{Delivery, ReminderDeliveries};
    let t = common::spawn_app().await;
    let now = t.ctx.clock.now();
    let due = (now + chrono::Duration::minutes(2)).with_timezone(&t.ctx.tz).format("%Y-%m-%dT%H:%M").to_string();
    t.done("creer_rappel", json!({"texte": "arroser les plantes", "echeance": due})).await;
    t.done("creer_rappel", json!({"texte": "sortir le chien", "echeance": due})).await;
    // A voice whose queue holds one announcement: the second waits for the next tick.
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    let tally = std::sync::Arc::new(Tally::default());
    let health = arthur::health::board(tally.clone());
    let deps = NotifierDeps {
        store: t.ctx.store.clone(),
        clock: t.ctx.clock.clone(),
        tz: t.ctx.tz,
        period: Duration::from_secs(30),
        announce: Some(tx),
        health: tally.clone(),
        print: false,
    };
    let mut notifier = Notifier::default();
    assert!(notifier.tick(&deps).await.unwrap().is_empty(), "not due yet");
    t.clock.advance(chrono::Duration::minutes(3));
    let due = notifier.tick(&deps).await.unwrap();
    assert_eq!(due.len(), 2);
    let first = rx.try_recv().unwrap();
    assert_eq!((first.text.as_str(), first.rappel), ("Rappel : arroser les plantes.", Some(due[0].id)));
    assert!(rx.try_recv().is_err(), "the queue was full: the second is offered again later");
    // Claimed once: a restart (a fresh store on the same file) does not claim them again.
    assert!(t.fresh().await.due_unannounced_rappels(t.ctx.clock.now()).await.unwrap().is_empty());
    assert!(!t.ctx.store.mark_rappel_announced(due[0].id, t.ctx.clock.now()).await.unwrap());
    // Nothing heard or seen yet: both wait.
    let counts = t.ctx.store.reminder_deliveries().await.unwrap();
    assert_eq!(counts, ReminderDeliveries { spoken: 0, seen_on_web: 0, waiting: 2 });
    assert_eq!(health.snapshot().reminders_due, 2);
    // Next tick: the second is offered; the first, still in the voice's hands, is not.
    assert!(notifier.tick(&deps).await.unwrap().is_empty());
    let second = rx.try_recv().unwrap();
    assert_eq!(second.rappel, Some(due[1].id));
    assert!(notifier.tick(&deps).await.unwrap().is_empty());
    assert!(rx.try_recv().is_err(), "each is queued once");
    // The voice spoke the first to the end; the second was seen on a page.
    let at = t.ctx.clock.now();
    assert!(t.ctx.store.mark_rappel_delivered(due[0].id, at, Delivery::Voice).await.unwrap());
    assert!(t.ctx.store.mark_rappel_delivered(due[1].id, at, Delivery::Web).await.unwrap());
    assert!(!t.ctx.store.mark_rappel_delivered(due[1].id, at, Delivery::Voice).await.unwrap(), "once");
    let counts = t.fresh().await.reminder_deliveries().await.unwrap();
    assert_eq!(counts, ReminderDeliveries { spoken: 1, seen_on_web: 1, waiting: 0 });
    assert!(t.ctx.store.undelivered_rappels().await.unwrap().is_empty());
}

/// Without a voice, a due reminder is printed by serve and waits on the web; a done
/// reminder no longer waits.
#[tokio::test]
async fn without_a_voice_a_due_reminder_is_printed_and_waits() {
    use arthur::notifier::Notifier;
    let t = common::spawn_app().await;
    let now = t.ctx.clock.now();
    let due = (now + chrono::Duration::minutes(1)).with_timezone(&t.ctx.tz).format("%Y-%m-%dT%H:%M").to_string();
    t.done("creer_rappel", json!({"texte": "appeler Luc", "echeance": due})).await;
    let tally = std::sync::Arc::new(Tally::default());
    let health = arthur::health::board(tally.clone());
    let deps = NotifierDeps {
        store: t.ctx.store.clone(),
        clock: t.ctx.clock.clone(),
        tz: t.ctx.tz,
        period: Duration::from_secs(30),
        announce: None,
        health: tally.clone(),
        print: true,
    };
    t.clock.advance(chrono::Duration::minutes(2));
    let due = Notifier::default().tick(&deps).await.unwrap();
    assert_eq!(
        arthur::notifier::printed(&due[0], t.ctx.tz),
        "Rappel dû (n°1, prévu le lundi 30 novembre 2026 à 10 h 01) : appeler Luc."
    );
    assert_eq!((health.snapshot().reminders_due, health.snapshot().reminders_printed), (1, 1));
    assert_eq!(t.ctx.store.undelivered_rappels().await.unwrap().len(), 1);
    t.done("marquer_rappel_fait", json!({"id": 1})).await;
    assert!(t.ctx.store.undelivered_rappels().await.unwrap().is_empty(), "done: nothing waits");
}

#[test]
fn the_unit_file_passes_systemd_analyze_verify() {
    let dir = tempfile::tempdir().unwrap();
    let unit = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/systemd/arthur.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/bin/arthur serve"));
    // Verified as installed, with the binary where the package puts it (here: the test build).
    let unit = unit.replace("/usr/bin/arthur", env!("CARGO_BIN_EXE_arthur"));
    let path = dir.path().join("arthur.service");
    std::fs::write(&path, unit).unwrap();
    let out = Command::new("systemd-analyze").arg("verify").arg(&path).output().expect("systemd-analyze (systemd)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.trim().is_empty(), "no warning (unknown key, bad value…): {stderr}");
}

/// `arthur serve --no-voice` on a data dir, the web on a free port; returns its base URL.
fn spawn_serve(
    dir: &std::path::Path,
    llm: Option<&ScriptedLlm>,
) -> (Killed, mpsc::Receiver<String>, Vec<String>, String) {
    let config = dir.join("arthur.toml");
    std::fs::write(&config, "").unwrap();
    let mut cmd = crate::common::arthur_command();
    cmd.args(["serve", "--no-voice"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("ARTHUR_CONFIG", &config)
        .env("ARTHUR_DATA_DIR", dir.join("data"))
        .env("ARTHUR_WEB_ADDR", "127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(llm) = llm {
        cmd.env("MISTRAL_API_KEY", "test-key").env("MISTRAL_BASE_URL", llm.base_url());
    }
    let mut child = Killed(cmd.spawn().unwrap());
    let lines = lines_of(&mut child.0);
    let mut seen = Vec::new();
    let web_line = wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(30));
    let base = web_line.split("sur ").nth(1).unwrap().trim().to_string();
    (child, lines, seen, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_in_the_middle_of_a_turn_leaves_nothing_half_written_and_the_turn_shows_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let llm = ScriptedLlm::start().await;
    llm.push(Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "ecriture"}"#));
    llm.push(Reply::delayed(
        Duration::from_secs(30),
        Reply::tool_calls("", &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2099-12-01T09:00"}"#)]),
    ));
    let (mut child, _lines, _seen, base) = spawn_serve(dir.path(), Some(&llm));
    let turn = tokio::spawn({
        let base = base.clone();
        async move {
            reqwest::Client::new()
                .post(format!("{base}/api/chat"))
                // Not a sentence the grammar runs by itself (it would ask the hour with no
                // model call): this one goes to the model.
                .json(&json!({"message": "fais en sorte que je n'oublie pas la banque demain matin"}))
                .send()
                .await
                .and_then(|r| r.error_for_status())
                .map(|_| ())
        }
    });
    // The turn is waiting for the specialist's answer: its trace is open.
    let deadline = Instant::now() + Duration::from_secs(20);
    while llm.chat_requests().len() < 2 {
        assert!(Instant::now() < deadline, "the turn never reached the specialist");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    let _ = turn.await;

    let (mut child, _lines, _seen, base) = spawn_serve(dir.path(), None);
    let journal = reqwest::get(format!("{base}/journal")).await.unwrap().text().await.unwrap();
    assert!(journal.contains("interrompu"), "the interrupted turn is visible in the journal");
    let rappels = reqwest::get(format!("{base}/rappels")).await.unwrap().text().await.unwrap();
    assert!(!rappels.contains("appeler la banque"), "no reminder was written");
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(10)).await.success());
    let pool =
        sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("data/arthur.db").display())).await.unwrap();
    let check: (String,) = sqlx::query_as("PRAGMA integrity_check").fetch_one(&pool).await.unwrap();
    assert_eq!(check.0, "ok");
    let interrupted: (i64,) =
        sqlx::query_as("SELECT count(*) FROM turn_traces WHERE status = 'interrupted'").fetch_one(&pool).await.unwrap();
    assert_eq!(interrupted.0, 1);
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:").map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0)))
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_soak_of_web_turns_and_polls_keeps_memory_flat() {
    let dir = tempfile::tempdir().unwrap();
    // No provider: every turn goes through the offline parser and writes a note.
    let (mut child, _lines, _seen, base) = spawn_serve(dir.path(), None);
    let pid = child.0.id();
    let http = reqwest::Client::new();
    let turn = |i: usize| {
        let http = http.clone();
        let base = base.clone();
        async move {
            let body = http
                .post(format!("{base}/api/chat"))
                .json(&json!({"message": format!("note : penser au point numéro {i}")}))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(body.contains("Note n°"), "{body}");
            let health = http.get(format!("{base}/healthz")).send().await.unwrap();
            assert_eq!(health.status(), 200);
            http.get(format!("{base}/notes")).send().await.unwrap().text().await.unwrap();
        }
    };
    for i in 0..50 {
        turn(i).await; // warm-up: caches, pools, the allocator's arenas
    }
    let start_rss = rss_kib(pid);
    let started = Instant::now();
    let mut i = 50;
    while started.elapsed() < Duration::from_secs(40) {
        turn(i).await;
        i += 1;
    }
    let end_rss = rss_kib(pid);
    eprintln!(
        "soak: {} turns + polls in {:.0} s; RSS {} KiB after warm-up, {} KiB at the end",
        i - 50,
        started.elapsed().as_secs_f64(),
        start_rss,
        end_rss
    );
    assert!(end_rss < start_rss + start_rss / 4 + 8 * 1024, "RSS grew from {start_rss} KiB to {end_rss} KiB");
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(10)).await.success());
}

/// A running timer is stored with its deadline: killed with SIGKILL and restarted, the
/// appliance still rings it when its time comes (saying it ended while Arthur was stopped
/// when that is so), and the web's live API shows it ringing until acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_timer_survives_kill_9_and_rings_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, _lines, _seen, base) = spawn_serve(dir.path(), None);
    let r: Value = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(&json!({"message": "minuteur thé de 4 secondes"}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
        .lines()
        .last()
        .map(|l| serde_json::from_str(l).unwrap())
        .unwrap();
    assert!(r["written"].as_str().unwrap().starts_with("Minuteur « thé » lancé : 4 s"), "{r}");
    child.0.kill().unwrap(); // SIGKILL, before the timer ends
    child.0.wait().unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;

    let (mut child, lines, mut seen, base) = spawn_serve(dir.path(), None);
    let rang = wait_line(&lines, &mut seen, "Le minuteur thé", Duration::from_secs(20));
    assert!(rang.contains("est terminé") || rang.contains("s'est terminé"), "{rang}");
    let timers: Value = reqwest::get(format!("{base}/api/minuteurs")).await.unwrap().json().await.unwrap();
    assert_eq!(timers["actifs"][0]["nom"], "thé", "{timers}");
    assert_eq!(timers["actifs"][0]["etat"], "sonne", "{timers}");
    let id = timers["actifs"][0]["id"].as_i64().unwrap();
    let ack = reqwest::Client::new()
        .post(format!("{base}/api/minuteurs/{id}/acquitter"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(ack.status().is_success());
    let timers: Value = reqwest::get(format!("{base}/api/minuteurs")).await.unwrap().json().await.unwrap();
    assert_eq!(timers["actifs"], json!([]), "{timers}");
    assert_eq!(timers["passes"][0]["acquitte"], true, "{timers}");
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(10)).await.success());
}

/// On a machine with no sound card (like CI's), serve says in French only why the voice is
/// off: no alsa-lib lines before Arthur's own, no colour codes in a redirected log, no
/// English inside the French sentence; the reason's English detail is in the log line.
#[tokio::test]
async fn without_a_sound_card_serve_says_why_in_french_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("arthur.toml");
    std::fs::write(&config, "").unwrap();
    let model = arthur::config::default_model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let child = crate::common::arthur_command()
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("PULSE_SERVER", format!("unix:{}", dir.path().join("no-such-socket").display()))
        .env("ARTHUR_CONFIG", &config)
        .env("ARTHUR_DATA_DIR", dir.path().join("data"))
        .env("ARTHUR_WEB_ADDR", "127.0.0.1:0")
        .env("ARTHUR_WHISPER_MODEL", &model)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let lines = lines_of(&mut child.0);
    let mut seen = Vec::new();
    let off = wait_line(&lines, &mut seen, "voix désactivée", Duration::from_secs(60));
    assert!(off.contains("aucun micro utilisable. Le web et les rappels fonctionnent."), "{off}");
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(10)).await.success());
    while let Ok(l) = lines.recv_timeout(Duration::from_millis(200)) {
        seen.push(l);
    }
    assert!(!seen.iter().any(|l| l.contains("ALSA lib") || l.contains("jack")), "alsa-lib's own lines: {seen:#?}");
    assert!(!seen.iter().any(|l| l.contains('\x1b')), "colour codes in a redirected log: {seen:#?}");
    let warn = seen.iter().find(|l| l.contains("voice disabled")).expect("the English detail is logged");
    assert!(warn.contains("cannot open the audio input"), "{warn}");
    // The French lines hold no English sentence.
    for l in seen.iter().filter(|l| l.starts_with("Arthur :")) {
        for english in ["cannot", "not found", "error", "failed"] {
            assert!(!l.contains(english), "{l}");
        }
    }
}
