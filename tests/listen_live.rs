//! `arthur listen` on a live microphone: a PulseAudio server with a null sink stands for the
//! sound card; the binary captures the sink's monitor (`--device`), a spoken command is
//! played into the sink with paplay, the scripted model answers, the reminder lands in the
//! database, the answer is written to `--output`, and SIGTERM ends the loop cleanly.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::memory::sqlite::SqliteStore;
use arthur_agents::memory::MemoryStore;
use arthur_audio::wav;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_pulseaudio(dir: &Path) -> (Killed, String) {
    let socket = dir.join("native");
    let child = Command::new("pulseaudio")
        .args(["--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--log-target=stderr"])
        .arg(format!("--load=module-native-protocol-unix socket={} auth-anonymous=1", socket.display()))
        .arg("--load=module-null-sink sink_name=arthur_null rate=48000 channels=2")
        .env("HOME", dir)
        .env("XDG_RUNTIME_DIR", dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pulseaudio is installed by scripts/setup");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "PulseAudio did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Killed(child), format!("unix:{}", socket.display()))
}

fn wait_line(lines: &mpsc::Receiver<String>, seen: &mut Vec<String>, needle: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while !seen.iter().any(|l| l.contains(needle)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no {needle:?} within {timeout:?}; output so far: {seen:#?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hands_free_on_a_live_microphone() {
    let dir = tempfile::tempdir().unwrap();
    let (_pulse, address) = start_pulseaudio(dir.path());
    let llm = ScriptedLlm::start().await;
    llm.push(Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "ecriture"}"#));
    llm.push(Reply::tool_calls(
        "",
        &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2099-12-01T09:00"}"#)],
    ));
    llm.push(Reply::text("Autre chose ?"));

    let speech = dir.path().join("command.wav");
    assert!(Command::new("espeak-ng")
        .args(["-v", "en", "-s", "150", "-w", speech.to_str().unwrap()])
        .arg("Arthur, remind me to call the bank tomorrow at nine.")
        .status()
        .unwrap()
        .success());
    // A null sink's monitor only delivers audio while something plays into the sink: keep
    // a stream of silence playing, so the microphone flows continuously like a real one.
    let hush = dir.path().join("hush.wav");
    wav::write_wav(&hush, &vec![0.0; 16_000 * 120], 16_000).unwrap();
    let _hush = Killed(
        Command::new("paplay").args(["-d", "arthur_null"]).arg(&hush).env("PULSE_SERVER", &address).spawn().unwrap(),
    );
    let model = arthur_audio::stt::model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let data = dir.path().join("data");
    let output = dir.path().join("arthur.wav");
    let child = Command::new(env!("CARGO_BIN_EXE_arthur"))
        .args(["listen", "--device", "pulseaudio:arthur_null.monitor", "--output"])
        .arg(&output)
        .env("HOME", dir.path())
        .env("PULSE_SERVER", &address)
        .env("ARTHUR_DATA_DIR", &data)
        .env("ARTHUR_STT_LANG", "en")
        .env("ARTHUR_WHISPER_MODEL", &model)
        .env("MISTRAL_API_KEY", "test-key")
        .env("MISTRAL_BASE_URL", llm.base_url())
        .env("RUST_LOG", std::env::var("ARTHUR_TEST_LOG").unwrap_or_else(|_| "warn".into()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let (tx, lines) = mpsc::channel();
    let stdout = child.0.stdout.take().unwrap();
    let tx2 = tx.clone();
    std::thread::spawn(move || BufReader::new(stdout).lines().map_while(Result::ok).for_each(|l| drop(tx.send(l))));
    let stderr = child.0.stderr.take().unwrap();
    std::thread::spawn(move || {
        BufReader::new(stderr).lines().map_while(Result::ok).for_each(|l| drop(tx2.send(format!("stderr: {l}"))))
    });
    let mut seen = Vec::new();
    wait_line(&lines, &mut seen, "Prêt.", Duration::from_secs(90));
    assert!(seen.iter().any(|l| l.contains("arthur_null.monitor")), "the microphone is named: {seen:#?}");

    let played = Command::new("paplay").args(["-d", "arthur_null"]).arg(&speech).env("PULSE_SERVER", &address).status();
    assert!(played.unwrap().success());
    wait_line(&lines, &mut seen, "arthur ›", Duration::from_secs(60));
    assert!(seen.iter().any(|l| l.starts_with("vous ›") && l.to_lowercase().contains("bank")), "{seen:#?}");
    assert!(seen.iter().any(|l| l.contains("Rappel n°1 enregistré")), "{seen:#?}");
    // Let the answer play (in real time, into the WAV), then stop the loop as systemd would.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(Command::new("kill").args(["-TERM", &child.0.id().to_string()]).status().unwrap().success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "arthur listen did not stop on SIGTERM");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status.success(), "{status:?}; {seen:#?}");

    let store = SqliteStore::open_path(&data.join("arthur.db")).await.unwrap();
    let rappels = store.list_rappels(false).await.unwrap();
    assert_eq!(rappels.len(), 1);
    assert_eq!(rappels[0].texte, "appeler la banque");
    let said = wav::read_wav_16k_mono(&output).expect("the answer was written on exit");
    assert!(wav::duration_secs(&said, 16_000) > 1.0 && wav::rms(&said) > 0.01);
}
