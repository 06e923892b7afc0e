//! Home Assistant's voice protocol against the real programs, on loopback (issue 31).
//!
//! - `arthur serve` with its Wyoming server, and the reference client (the `wyoming` package
//!   1.10.2) making Home Assistant's integration's calls (tests/wyoming/home_assistant.py):
//!   describe, transcribe in five formats, synthesize (and the streamed synthesis, one
//!   sentence at a time), handle (handled, and a refusal not handled), a careless peer.
//! - `arthur serve` hosting two real `wyoming-satellite` 1.0.0 programs whose microphone and
//!   speaker are files: the kitchen's command starts with Arthur's wake word, the living
//!   room's with « Hey Jarvis » heard by the satellite's own wake word engine (the real
//!   wyoming-openwakeword 1.8.2); each receipt is spoken on the satellite that heard the
//!   command, a timer rings and a due reminder is said where the user last spoke, a
//!   satellite that goes away is shown in /healthz and by the doctor, retried, and back.
//!
//! The Python programs run from the venvs `scripts/setup` makes in
//! `~/.cache/arthur/wyoming/{client,satellite,openwakeword}`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_audio::wav;
use common::{lines_of, sigterm, wait_exit, wait_line, Killed};
use serde_json::Value;

/// The Python of one of the venvs `scripts/setup` makes.
fn python(venv: &str) -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"));
    let python = cache.join("arthur/wyoming").join(venv).join("bin/python");
    assert!(python.is_file(), "{} is missing: run scripts/setup", python.display());
    python
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wyoming").join(name)
}

/// A process group (a Python program and what it started: the satellite's microphone and
/// speaker commands), killed whole when dropped.
struct Group(Child);

impl Group {
    fn spawn(command: &mut Command) -> Self {
        use std::os::unix::process::CommandExt;
        Self(command.process_group(0).spawn().expect("spawn"))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-s", "KILL", "--", &format!("-{}", self.0.id())]).status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn models() -> (PathBuf, PathBuf) {
    let dir = arthur::config::default_model_dir().unwrap();
    let (whisper, joe) = (dir.join("ggml-base.bin"), dir.join("en_US-joe-medium.onnx"));
    assert!(whisper.is_file() && joe.is_file(), "run models/fetch --offline");
    (whisper, joe)
}

/// `arthur serve --no-voice` in `dir`, in English (whisper base understands the test's
/// speech in English only), with the joe voice and the extra variables.
fn serve(dir: &Path, extra: &[(&str, String)]) -> (Killed, std::sync::mpsc::Receiver<String>) {
    let (whisper, joe) = models();
    let config = dir.join("arthur.toml");
    std::fs::write(&config, "").unwrap();
    let mut command = common::arthur_command();
    command
        // Due reminders looked for every second, not every 30.
        .args(["serve", "--no-voice", "--reminder-check-secs", "1"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("ARTHUR_CONFIG", &config)
        .env("ARTHUR_DATA_DIR", dir.join("data"))
        .env("ARTHUR_WEB_ADDR", "127.0.0.1:0")
        .env("ARTHUR_STT_LANG", "en")
        .env("ARTHUR_WHISPER_MODEL", &whisper)
        .env("ARTHUR_PIPER_VOICE", &joe)
        .env("ARTHUR_MODEL_DIR", whisper.parent().unwrap())
        .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "arthur=info,arthur_wyoming=info".into()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in extra {
        command.env(k, v);
    }
    let mut child = Killed(command.spawn().unwrap());
    let lines = lines_of(&mut child.0);
    (child, lines)
}

fn address_after(line: &str, marker: &str) -> String {
    line.split(marker).nth(1).unwrap().split([' ', '(']).next().unwrap().trim().to_string()
}

async fn get_json(url: &str) -> Value {
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

/// Waits until `check` holds, failing with `what` after `bound` (polling what a real process
/// does in its own time: no timing is asserted). The failure shows the logs of `dir`.
async fn eventually<T>(what: &str, bound: Duration, dir: &Path, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if Instant::now() >= deadline {
            let mut logs = String::new();
            for entry in walk(dir) {
                if entry.extension().is_some_and(|e| e == "log" || e == "txt") {
                    logs.push_str(&format!("\n==== {}\n{}", entry.display(), read(&entry)));
                }
            }
            panic!("{what}: not within {bound:?}{logs}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Copies what `arthur serve` prints to `dir/serve.log` (shown when a wait fails).
fn log_to(lines: std::sync::mpsc::Receiver<String>, dir: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(dir.join("serve.log")).unwrap();
    std::thread::spawn(move || {
        for line in lines {
            let _ = writeln!(file, "{line}");
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_assistants_integration_flow_with_the_reference_client() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let speech = dir.path().join("speech.wav");
    common::espeak_en("Remind me to call the bank tomorrow at nine.", &speech);
    let (mut child, lines) = serve(dir.path(), &[("ARTHUR_WYOMING_ADDR", "127.0.0.1:0".into())]);
    let mut seen = Vec::new();
    let web =
        address_after(&wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(60)), "sur ");
    let line = wait_line(&lines, &mut seen, "Wyoming : serveur sur", Duration::from_secs(120));
    assert!(line.contains("cette machine seulement") && line.contains("sans authentification"), "{line}");
    let addr = address_after(&line, "serveur sur ");
    let (host, port) = addr.rsplit_once(':').unwrap();

    let out = tokio::task::spawn_blocking({
        let (host, port, speech, dir) = (host.to_string(), port.to_string(), speech.clone(), dir.path().to_owned());
        move || {
            Command::new(python("client"))
                .arg(script("home_assistant.py"))
                .args([&host, &port])
                .arg(&speech)
                .arg(&dir)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}\n{seen:#?}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());

    // describe → info: the whisper model and its language, the installed voices, the turn.
    let asr = &r["info"]["asr"][0];
    assert_eq!(asr["models"][0]["name"], "ggml-base", "{r}");
    assert_eq!(asr["models"][0]["languages"], serde_json::json!(["en"]));
    let tts = &r["info"]["tts"][0];
    assert_eq!(tts["streaming"], true);
    assert_eq!(tts["voices"][0]["name"], "en_US-joe-medium", "the configured voice first");
    assert_eq!(tts["voices"][0]["languages"], serde_json::json!(["en_US"]));
    assert_eq!(r["info"]["handle"][0]["languages"], serde_json::json!(["fr"]));

    // transcribe: the same words whatever the rate, width and channels.
    for t in r["transcripts"].as_array().unwrap() {
        let text = t["text"].as_str().unwrap_or_default().to_lowercase();
        assert!(t["type"] == "transcript" && text.contains("remind") && text.contains("bank"), "{t}");
    }
    assert_eq!(r["transcripts"].as_array().unwrap().len(), 5);
    assert_eq!(r["other_language"]["type"], "error", "a language whisper does not run here is refused: {r}");

    // synthesize: Arthur's voice, 16-bit mono at its rate, heard back by Arthur's ears.
    let s = &r["synthesize"];
    assert_eq!(s["start"], serde_json::json!([22050, 2, 1]), "{s}");
    assert_eq!(s["formats"], serde_json::json!([[22050, 2, 1]]));
    assert!(s["seconds"].as_f64().unwrap() > 1.5, "{s}");
    assert_eq!((s["first"].as_str(), s["last"].as_str()), (Some("audio-start"), Some("audio-stop")));
    let round = r["round_trip"]["text"].as_str().unwrap_or_default().to_lowercase();
    assert!(round.contains("bank") && round.contains("done"), "{r}");
    assert!(r["named_voice_seconds"].as_f64().unwrap() > 0.3);
    assert!(r["unknown_voice"]["error"].as_str().unwrap().contains("no-such-voice"), "{r}");
    assert_eq!(r["unknown_voice"]["last"], "audio-stop", "the client is never left waiting");

    // The streamed synthesis: the first sentence came back before the rest was written; one
    // audio stream per sentence; the compatibility `synthesize` said nothing twice.
    let streamed = &r["streamed"];
    assert_eq!(streamed["first_before_rest"], true, "{streamed}");
    let events: Vec<&str> = streamed["events"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    assert_eq!(events.iter().filter(|e| **e == "audio-start").count(), 2, "{events:?}");
    assert_eq!(events.iter().filter(|e| **e == "audio-stop").count(), 2, "{events:?}");
    assert_eq!(events.last(), Some(&"synthesize-stopped"));

    // handle: Arthur's turn, its answer composed by code; a refusal is not handled.
    assert_eq!(r["handled"]["type"], "handled", "{r}");
    assert!(r["handled"]["text"].as_str().unwrap().starts_with("Rappel numéro un enregistré"), "{r}");
    assert_eq!(r["handled"]["context"]["conversation_id"], "ha-conversation-1");
    assert_eq!(r["not_handled"]["type"], "not-handled", "{r}");
    assert!(r["not_handled"]["text"].as_str().unwrap().starts_with("Je n'ai rien écrit"), "{r}");
    let export = get_json(&format!("{web}/api/export")).await;
    let rappels = export["rappels"].as_array().unwrap();
    assert_eq!(rappels.len(), 1, "{export}");
    assert_eq!(rappels[0]["texte"], "appeler la banque");
    // A question asked over `handle` takes its answer from the next transcript of the same
    // conversation id, and only of that one (issue 39, §3.8).
    assert_eq!(r["frame_ask"]["type"], "handled", "{r}");
    assert!(r["frame_ask"]["text"].as_str().unwrap().contains('?'), "{r}");
    assert_ne!(r["frame_elsewhere"]["text"], r["frame_fill"]["text"], "{r}");
    assert_eq!(r["frame_fill"]["type"], "handled", "{r}");
    assert_eq!(r["frame_fill"]["context"]["conversation_id"], "ha-conversation-2");
    let timers: Vec<Value> =
        get_json(&format!("{web}/api/export")).await["minuteurs"].as_array().cloned().unwrap_or_default();
    assert_eq!(timers.len(), 1, "one timer, from the conversation that asked: {timers:?}");
    assert_eq!(timers[0]["duree_secondes"], 300, "{timers:?}");

    // A careless peer: a format that does not exist is an error and the connection goes on;
    // a line that is no event is an error and the connection ends.
    let c = &r["careless"];
    assert_eq!((c["bad_width"]["type"].as_str(), c["bad_width"]["code"].as_str()), (Some("error"), Some("bad-audio")));
    assert_eq!(c["after"]["text"], "still there?", "{c}");
    assert_eq!((c["garbage"]["type"].as_str(), c["garbage"]["code"].as_str()), (Some("error"), Some("bad-event")));
    assert_eq!(c["closed_after_garbage"], true);

    let health = get_json(&format!("{web}/healthz")).await;
    assert_eq!(health["wyoming"]["server"], addr.as_str(), "{health}");
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(15)).await.success());
}

/// One wyoming-satellite 1.0.0: its microphone says `speech` (once `dir/GO` exists), its
/// speaker appends to `dir/said.raw`, its `synthesize` and `transcript` commands append the
/// text they get to `dir/said.txt` and `dir/heard.txt`; the log goes to `dir/satellite.log`.
fn satellite(dir: &Path, name: &str, port: u16, wake: Option<u16>) -> Group {
    let append =
        |file: &str| format!("sh -c 'cat >> {}; echo >> {}'", dir.join(file).display(), dir.join(file).display());
    let mut command = Command::new(python("satellite"));
    command
        .args(["-m", "wyoming_satellite", "--name", name, "--no-zeroconf"])
        .arg(format!("--uri=tcp://127.0.0.1:{port}"))
        .arg(format!(
            "--mic-command={} {} {} {}",
            python("satellite").display(),
            script("mic.py").display(),
            dir.join("speech.raw").display(),
            dir.join("GO").display()
        ))
        .arg(format!("--snd-command=sh -c 'cat >> {}'", dir.join("said.raw").display()))
        .arg(format!("--synthesize-command={}", append("said.txt")))
        .arg(format!("--transcript-command={}", append("heard.txt")))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("satellite.log")).unwrap());
    if let Some(wake) = wake {
        command.arg(format!("--wake-uri=tcp://127.0.0.1:{wake}")).args(["--wake-word-name", "hey_jarvis"]);
    }
    Group::spawn(&mut command)
}

/// Writes `texts` said by the joe voice, with silence around, as the raw PCM mic.py plays.
fn speech_file(dir: &Path, texts: &[&str]) {
    let joe = common::joe();
    let mut samples = vec![0.0f32; 16_000];
    for text in texts {
        let pcm = joe.synthesize(text).unwrap();
        samples.extend(wav::resample(&pcm.samples, pcm.rate, 16_000));
        samples.extend(vec![0.0f32; 6_400]);
    }
    samples.extend(vec![0.0f32; 16_000 * 2]);
    let bytes: Vec<u8> = samples.iter().flat_map(|s| ((s.clamp(-1.0, 1.0) * 32_767.0) as i16).to_le_bytes()).collect();
    std::fs::write(dir.join("speech.raw"), bytes).unwrap();
}

fn satellite_state(health: &Value, port: u16) -> Value {
    let address = format!("127.0.0.1:{port}");
    health["wyoming"]["satellites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["address"] == address.as_str())
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_satellites_one_on_arthurs_wake_word_one_on_its_own_each_answered_where_it_heard() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let (kitchen, salon) = (dir.path().join("kitchen"), dir.path().join("salon"));
    std::fs::create_dir_all(&kitchen).unwrap();
    std::fs::create_dir_all(&salon).unwrap();
    speech_file(&kitchen, &["Arthur, remind me to call the bank tomorrow at nine."]);
    speech_file(&salon, &["Hey Jarvis.", "Remind me to call the bank tomorrow at nine."]);

    // The living room's satellite hears its own wake word with the real openWakeWord.
    let wake_port = crate::harness::free_port();
    let _wake = Group::spawn(
        Command::new(python("openwakeword"))
            .args(["-m", "wyoming_openwakeword", "--preload-model", "hey_jarvis"])
            .arg(format!("--uri=tcp://127.0.0.1:{wake_port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("openwakeword.log")).unwrap()),
    );
    eventually("openWakeWord listening", Duration::from_secs(60), dir.path(), async || {
        tokio::net::TcpStream::connect(("127.0.0.1", wake_port)).await.ok()
    })
    .await;
    let (kitchen_port, salon_port) = (crate::harness::free_port(), crate::harness::free_port());
    let kitchen_satellite = satellite(&kitchen, "cuisine", kitchen_port, None);
    let _salon_satellite = satellite(&salon, "salon", salon_port, Some(wake_port));

    // Each command: the route, then the tool call (a tool turn's receipt ends it: no third
    // call); anything more would be answered "Autre chose ?".
    let llm = ScriptedLlm::start().await;
    for _ in 0..2 {
        llm.push(common::route("intendant", "QUOTIDIEN", "ecriture"));
        llm.push(Reply::tool_calls(
            "",
            &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2099-12-01T09:00"}"#)],
        ));
    }
    llm.set_fallback(Some(Reply::text("Autre chose ?")));
    let satellites = format!("127.0.0.1:{kitchen_port},127.0.0.1:{salon_port}");
    let (mut child, lines) = serve(
        dir.path(),
        &[
            ("ARTHUR_WYOMING_SATELLITES", satellites),
            ("MISTRAL_API_KEY", "test-key".into()),
            ("MISTRAL_BASE_URL", llm.base_url()),
        ],
    );
    let mut seen = Vec::new();
    let web =
        address_after(&wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(60)), "sur ");
    wait_line(&lines, &mut seen, "Wyoming : 2 satellite(s)", Duration::from_secs(120));
    log_to(lines, dir.path());
    let health = format!("{web}/healthz");
    eventually("both satellites connected", Duration::from_secs(60), dir.path(), async || {
        let h = get_json(&health).await;
        let both = [kitchen_port, salon_port].iter().all(|p| satellite_state(&h, *p)["state"] == "connected");
        both.then_some(())
    })
    .await;
    let h = get_json(&health).await;
    assert_eq!(satellite_state(&h, kitchen_port)["name"], "cuisine", "{h}");

    // The kitchen: « Arthur, remind me… » — Arthur's wake word, the receipt spoken there.
    eventually("the kitchen satellite streaming", Duration::from_secs(30), dir.path(), async || {
        read(&kitchen.join("satellite.log")).contains("Streaming audio").then_some(())
    })
    .await;
    std::fs::write(kitchen.join("GO"), "").unwrap();
    eventually("the kitchen's receipt", Duration::from_secs(180), dir.path(), async || {
        read(&kitchen.join("said.txt")).contains("Rappel n°1 enregistré").then_some(())
    })
    .await;
    let heard = read(&kitchen.join("heard.txt")).to_lowercase();
    assert!(heard.contains("remind") && !heard.contains("arthur"), "the command, without the wake word: {heard}");
    let said = eventually("the kitchen's receipt played", Duration::from_secs(60), dir.path(), async || {
        let raw = std::fs::read(kitchen.join("said.raw")).unwrap_or_default();
        // 22,050 Hz 16-bit: the earcons and more than two seconds of speech.
        (raw.len() > 22_050 * 2 * 3).then_some(raw)
    })
    .await;
    let samples: Vec<f32> =
        said.chunks_exact(2).map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32_768.0).collect();
    assert!(wav::rms(&samples) > 0.01, "speech, not silence");

    // The living room: « Hey Jarvis » heard by the satellite, then the command without
    // Arthur's wake word; the receipt spoken there, not in the kitchen.
    eventually("the living room waiting for its wake word", Duration::from_secs(30), dir.path(), async || {
        read(&salon.join("satellite.log")).contains("Waiting for wake word").then_some(())
    })
    .await;
    std::fs::write(salon.join("GO"), "").unwrap();
    eventually("the living room's receipt", Duration::from_secs(180), dir.path(), async || {
        read(&salon.join("said.txt")).contains("Rappel n°2 enregistré").then_some(())
    })
    .await;
    let heard = read(&salon.join("heard.txt")).to_lowercase();
    assert!(heard.contains("remind") && !heard.contains("jarvis"), "{heard}");
    assert!(!read(&kitchen.join("said.txt")).contains("n°2"), "the kitchen said nothing of it");
    let export = get_json(&format!("{web}/api/export")).await;
    assert_eq!(export["rappels"].as_array().unwrap().len(), 2, "{export}");
    assert_eq!(llm.remaining(), 0);

    // A timer rings where the user last spoke: the living room.
    let data = dir.path().join("data");
    let started = common::arthur_command()
        .args(["tool", "demarrer_minuteur", r#"{"duree_secondes": 1, "nom": "thé"}"#])
        .env("ARTHUR_CONFIG", dir.path().join("arthur.toml"))
        .env("ARTHUR_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    eventually("the timer rung in the living room", Duration::from_secs(60), dir.path(), async || {
        read(&salon.join("said.txt")).contains("Le minuteur thé est terminé").then_some(())
    })
    .await;
    assert!(!read(&kitchen.join("said.txt")).contains("minuteur"), "not in the kitchen");

    // So is a due reminder, recorded as heard once said to its end.
    let due = (chrono::Utc::now() + chrono::Duration::seconds(2)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let created = common::arthur_command()
        .args([
            "tool",
            "creer_rappel",
            &serde_json::json!({"texte": "arroser les plantes", "echeance": due}).to_string(),
        ])
        .env("ARTHUR_CONFIG", dir.path().join("arthur.toml"))
        .env("ARTHUR_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    eventually("the reminder said in the living room", Duration::from_secs(60), dir.path(), async || {
        read(&salon.join("said.txt")).contains("Rappel : arroser les plantes").then_some(())
    })
    .await;
    eventually("the reminder recorded as heard", Duration::from_secs(60), dir.path(), async || {
        (get_json(&health).await["reminders"]["spoken"] == 1).then_some(())
    })
    .await;
    assert!(!read(&kitchen.join("said.txt")).contains("arroser"), "not in the kitchen");

    // The kitchen's satellite goes away: shown, retried, and back.
    drop(kitchen_satellite);
    let gone = eventually("the kitchen shown gone", Duration::from_secs(60), dir.path(), async || {
        let s = satellite_state(&get_json(&health).await, kitchen_port);
        (s["state"] == "waiting").then_some(s)
    })
    .await;
    assert!(gone["last_error"].is_string() && gone["retry_at"].is_string(), "{gone}");
    // The doctor says so too, and that the living room answers.
    let doctor = common::arthur_command()
        .arg("doctor")
        .env("ARTHUR_CONFIG", dir.path().join("arthur.toml"))
        .env("ARTHUR_DATA_DIR", &data)
        .env("ARTHUR_WYOMING_SATELLITES", format!("127.0.0.1:{kitchen_port},127.0.0.1:{salon_port}"))
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains(&format!("[--] satellite 127.0.0.1:{kitchen_port} : injoignable")), "{report}");
    assert!(report.contains(&format!("[ok] satellite 127.0.0.1:{salon_port} (salon) : joignable")), "{report}");
    std::fs::remove_file(kitchen.join("GO")).unwrap(); // back, it says nothing
    let _kitchen_again = satellite(&kitchen, "cuisine", kitchen_port, None);
    let back = eventually("the kitchen back", Duration::from_secs(90), dir.path(), async || {
        let s = satellite_state(&get_json(&health).await, kitchen_port);
        (s["state"] == "connected" && s["connections"] == 2).then_some(s)
    })
    .await;
    assert_eq!(back["name"], "cuisine");

    sigterm(&child.0);
    assert!(
        wait_exit(&mut child.0, Duration::from_secs(15)).await.success(),
        "{}",
        read(&dir.path().join("serve.log"))
    );
}
