//! Shared helpers for the integration tests: a real SQLite file in a temp dir, a manual
//! clock, the real tool registry, and fresh reads through a second connection pool.
#![allow(dead_code)]

pub mod noise;

use std::path::PathBuf;
use std::sync::Arc;

use arthur_agents::llm::embeddings::Embedder;
use arthur_agents::memory::{export, MemoryStore, SqliteStore};
use arthur_agents::time::{Clock, ManualClock};
use arthur_agents::tools::{Outcome, Receipt, Refusal, ToolBox, ToolContext};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;

/// The tests that run whisper and Piper share two cores with the rest of the test binary:
/// they take turns, so that two of them never fight for the cores (each is heavy, and the
/// live ones run in real time).
pub async fn one_voice_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static VOICE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    // With RUST_LOG set, a voice test tells why it decided (barge-ins, what was heard).
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
    }
    VOICE.lock().await
}

/// The `arthur` binary this test run built: the one way the tests start it.
pub fn arthur_command() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_arthur"))
}

/// Monday 30 November 2026, 10:00 in Paris.
pub fn start_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
}

pub struct TestApp {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub store: Arc<SqliteStore>,
    pub clock: Arc<ManualClock>,
    pub tools: ToolBox,
    pub ctx: ToolContext,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(None, 20).await
}

pub async fn spawn_app_with(embedder: Option<Arc<dyn Embedder>>, preferences_cap: u32) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arthur.db");
    let store = Arc::new(SqliteStore::open_path(&path).await.unwrap());
    let clock = Arc::new(ManualClock::new(start_time()));
    let ctx = ToolContext {
        store: store.clone() as Arc<dyn MemoryStore>,
        clock: clock.clone() as Arc<dyn Clock>,
        tz: chrono_tz::Europe::Paris,
        embedder,
        preferences_cap,
    };
    TestApp { dir, path, store, clock, tools: ToolBox::new(), ctx }
}

impl TestApp {
    pub async fn call(&self, name: &str, args: Value) -> Outcome {
        self.tools.invoke(&self.ctx, name, &args).await
    }

    pub async fn done(&self, name: &str, args: Value) -> Receipt {
        match self.call(name, args.clone()).await {
            Outcome::Done(r) => r,
            other => panic!("{name} {args} expected Done, got {other:?}"),
        }
    }

    /// Calls a tool that must refuse, and checks that nothing in the store changed.
    pub async fn refused(&self, name: &str, args: Value) -> Refusal {
        let before = self.snapshot().await;
        let outcome = self.call(name, args.clone()).await;
        let after = self.snapshot().await;
        assert_eq!(before, after, "{name} {args} refused but the store changed");
        match outcome {
            Outcome::Refused(r) => r,
            other => panic!("{name} {args} expected Refused, got {other:?}"),
        }
    }

    /// A second, independent pool on the same file: what a fresh reader sees.
    pub async fn fresh(&self) -> SqliteStore {
        SqliteStore::open_path(&self.path).await.unwrap()
    }

    /// Everything the store holds, as JSON, read through a fresh pool.
    pub async fn snapshot(&self) -> Value {
        let fresh = self.fresh().await;
        let v = serde_json::to_value(export::export(&fresh, start_time()).await.unwrap()).unwrap();
        fresh.close().await;
        v
    }

    pub fn clock_now(&self) -> DateTime<Utc> {
        use arthur_agents::time::Clock;
        self.clock.now()
    }

    pub async fn sql(&self, statement: &str) {
        sqlx::query(statement).execute(self.store.pool()).await.unwrap();
    }
}

// ---------- the honest turn over a scripted model server ----------

use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::ProviderKind;
use arthur_agents::secret::Secret;
use arthur_agents::turn::TurnEngine;

/// Fast retries for tests: one retry, 1 ms backoff, short timeouts.
pub fn test_client_options() -> ClientOptions {
    ClientOptions {
        retries_per_provider: 1,
        backoff_base: std::time::Duration::from_millis(1),
        attempt_timeout: std::time::Duration::from_secs(5),
        total_timeout: std::time::Duration::from_secs(20),
    }
}

pub struct TurnApp {
    pub app: TestApp,
    pub engine: TurnEngine,
    pub llm: ScriptedLlm,
}

/// A test app whose only provider (Mistral) is a scripted server.
pub async fn spawn_turn_app() -> TurnApp {
    let app = spawn_app().await;
    let llm = ScriptedLlm::start().await;
    let client = LlmClient::new(
        vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("test-key"))],
        ConfiguredModels { router: Some("mistral-small-latest".into()), chat: Some("mistral-large-latest".into()) },
        test_client_options(),
    )
    .unwrap();
    // These tests script the model: commands the grammar knows go to it too.
    let engine = TurnEngine::new(Some(Arc::new(client)), app.ctx.clone()).with_local_first(false);
    TurnApp { app, engine, llm }
}

/// The same app with the default engine: the grammar goes first (`ARTHUR_LOCAL_FIRST`).
pub async fn spawn_local_first_app() -> TurnApp {
    let t = spawn_turn_app().await;
    let client = LlmClient::new(
        vec![ProviderEndpoint::new(ProviderKind::Mistral, t.llm.base_url(), Secret::new("test-key"))],
        ConfiguredModels { router: Some("mistral-small-latest".into()), chat: Some("mistral-large-latest".into()) },
        test_client_options(),
    )
    .unwrap();
    let engine = TurnEngine::new(Some(Arc::new(client)), t.app.ctx.clone());
    TurnApp { app: t.app, engine, llm: t.llm }
}

/// The router's answer.
pub fn route(agent: &str, domain: &str, action: &str) -> Reply {
    Reply::text(format!(r#"{{"agent": "{agent}", "domain": "{domain}", "action": "{action}"}}"#))
}

// ---------- the web server on port 0 ----------

pub struct WebApp {
    pub turn: TurnApp,
    pub base: String,
    pub http: reqwest::Client,
}

/// The web router over a test app and a scripted model, listening on 127.0.0.1:0.
pub async fn spawn_web_app(demo: bool, token: Option<&str>) -> WebApp {
    let turn = spawn_turn_app().await;
    let engine = Arc::new(
        TurnEngine::new(
            Some(Arc::new(
                LlmClient::new(
                    vec![ProviderEndpoint::new(ProviderKind::Mistral, turn.llm.base_url(), Secret::new("test-key"))],
                    ConfiguredModels::default(),
                    test_client_options(),
                )
                .unwrap(),
            )),
            turn.app.ctx.clone(),
        )
        .with_local_first(false),
    );
    let state = Arc::new(arthur::web::WebState {
        engine,
        store: turn.app.ctx.store.clone(),
        tz: turn.app.ctx.tz,
        preferences_cap: turn.app.ctx.preferences_cap,
        demo,
        token: token.map(Secret::new),
        health: Default::default(),
        atlas: None,
        drafter: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(arthur::web::run(listener, state, Default::default()));
    WebApp { turn, base, http: reqwest::Client::new() }
}

impl WebApp {
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.http.get(format!("{}{path}", self.base)).send().await.unwrap()
    }

    pub async fn post_json(&self, path: &str, body: Value) -> reqwest::Response {
        self.http.post(format!("{}{path}", self.base)).json(&body).send().await.unwrap()
    }

    /// POST /api/chat; returns the NDJSON lines.
    pub async fn chat(&self, message: &str, conversation: Option<&str>) -> Vec<Value> {
        let response = self
            .http
            .post(format!("{}/api/chat", self.base))
            .json(&serde_json::json!({"message": message, "conversation": conversation}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let text = response.text().await.unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

// ---------- child processes, speech and PulseAudio (the voice and appliance tests) ----------

/// A child process killed (SIGKILL) and reaped when dropped, whatever the test did.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines of the child's stdout and stderr, as they come.
pub fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().expect("stdout piped");
    let err = child.stderr.take().expect("stderr piped");
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        std::io::BufReader::new(out).lines().map_while(Result::ok).for_each(|l| drop(tx.send(l)))
    });
    std::thread::spawn(move || {
        std::io::BufReader::new(err).lines().map_while(Result::ok).for_each(|l| drop(tx2.send(l)))
    });
    rx
}

/// Waits for a line containing `needle` (kept in `seen`, with every line read); returns it.
pub fn wait_line(
    lines: &std::sync::mpsc::Receiver<String>,
    seen: &mut Vec<String>,
    needle: &str,
    timeout: std::time::Duration,
) -> String {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(l) = seen.iter().find(|l| l.contains(needle)) {
            return l.clone();
        }
        match lines.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no {needle:?} within {timeout:?}; output: {seen:#?}"),
        }
    }
}

pub fn sigterm(child: &std::process::Child) {
    let status = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

/// Waits for the child to exit, failing the test after `bound`.
pub async fn wait_exit(child: &mut std::process::Child, bound: std::time::Duration) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + bound;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(std::time::Instant::now() < deadline, "not stopped within {bound:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// English speech from espeak-ng (whisper base understands it; not its French), written
/// to `path` and returned as 16 kHz mono samples.
pub fn espeak_en(text: &str, path: &std::path::Path) -> Vec<f32> {
    let ok = std::process::Command::new("espeak-ng")
        .args(["-v", "en", "-s", "150", "-w", path.to_str().unwrap(), text])
        .status()
        .expect("espeak-ng is installed by scripts/setup")
        .success();
    assert!(ok);
    arthur_audio::wav::read_wav_16k_mono(path).unwrap()
}

/// French speech, as a person would say `text` to Arthur: MBROLA's fr3 voice through
/// espeak-ng at 140 words a minute (`scripts/fetch-french-test-voice`), 16 kHz mono, half a
/// second of silence on each side — whisper base understands it (espeak-ng's own French it
/// does not). espeak-ng reads « Arthur » and « aujourd'hui » the English way: they are
/// respelt. Written to `path`; the samples are returned.
pub fn french_speech(text: &str, path: &std::path::Path) -> Vec<f32> {
    let voice = dirs_cache().join("arthur/french-test-voice");
    assert!(voice.join("bin/mbrola").is_file(), "run scripts/fetch-french-test-voice (scripts/setup does)");
    let said = text.replace("Arthur", "Artur").replace("d'aujourd'hui", "d'aujourdhui").replace("lait à", "lait, à");
    let raw = path.with_extension("raw.wav");
    let path_env = format!("{}:{}", voice.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let out = std::process::Command::new("espeak-ng")
        .args(["-v", "mb-fr3", "-s", "120", "-w", raw.to_str().unwrap(), &said])
        .env("ESPEAK_DATA_PATH", &voice)
        .env("PATH", path_env)
        .output()
        .expect("espeak-ng is installed by scripts/setup");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ok = std::process::Command::new("sox")
        .arg(&raw)
        .args(["-r", "16000", "-c", "1", "-b", "16"])
        .arg(path)
        .args(["pad", "0.5", "0.5"])
        .status()
        .expect("sox is installed by scripts/setup")
        .success();
    assert!(ok);
    let _ = std::fs::remove_file(&raw);
    arthur_audio::wav::read_wav_16k_mono(path).unwrap()
}

/// French speech said by the natural French test voice (Kokoro-82M, voice ff_siwis:
/// `scripts/kokoro-say`, installed by `scripts/fetch-french-test-voice`), 16 kHz mono, half a
/// second of silence on each side. Written to `path`; the samples are returned.
pub fn kokoro_speech(text: &str, path: &std::path::Path) -> Vec<f32> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/kokoro-say");
    let out = std::process::Command::new(&script).arg(text).arg(path).output().expect("scripts/kokoro-say runs");
    assert!(
        out.status.success(),
        "run scripts/fetch-french-test-voice (scripts/setup does): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut samples = vec![0.0; 8_000];
    samples.extend(arthur_audio::wav::read_wav_16k_mono(path).unwrap());
    samples.extend(vec![0.0; 8_000]);
    samples
}

fn dirs_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache"))
}

/// The model's side of "remind me to call the bank": route, `creer_rappel` (the receipt,
/// composed by code, ends the turn: no third call).
pub fn script_bank_reminder(llm: &ScriptedLlm) {
    llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    llm.push(Reply::tool_calls(
        "",
        &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2099-12-01T09:00"}"#)],
    ));
}

/// A private PulseAudio server with a null sink `arthur_null` (48 kHz stereo, consumed in
/// real time) standing for the sound card; returns it and its `PULSE_SERVER` address.
pub fn start_pulseaudio(dir: &std::path::Path) -> (Killed, String) {
    let socket = dir.join("native");
    let child = std::process::Command::new("pulseaudio")
        .args(["--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--log-target=stderr"])
        .arg(format!("--load=module-native-protocol-unix socket={} auth-anonymous=1", socket.display()))
        .arg("--load=module-null-sink sink_name=arthur_null rate=48000 channels=2")
        .env("HOME", dir)
        .env("XDG_RUNTIME_DIR", dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("pulseaudio is installed by scripts/setup");
    let server = Killed(child);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !socket.exists() {
        assert!(std::time::Instant::now() < deadline, "PulseAudio did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (server, format!("unix:{}", socket.display()))
}

// ---------- the voice tests' models ----------

/// whisper base in English with the wake word as its prompt (espeak-ng's and the joe
/// voice's French are not intelligible to it): the voice tests' ears.
pub fn english_transcriber() -> Arc<arthur_audio::stt::Transcriber> {
    let model = arthur::config::default_model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    std::sync::Arc::new(
        arthur_audio::stt::Transcriber::load(
            &model,
            arthur_audio::stt::SttOptions {
                language: "en".into(),
                initial_prompt: Some("Arthur".into()),
                adaptive_audio_ctx: true,
                ..Default::default()
            },
        )
        .unwrap(),
    )
}

/// The Piper joe voice `models/fetch --offline` installs: the voice tests' mouth.
pub fn joe() -> Arc<dyn arthur_audio::tts::Synthesizer> {
    let model = arthur::config::default_model_dir().unwrap().join("en_US-joe-medium.onnx");
    assert!(model.is_file(), "run models/fetch --offline (it installs the joe voice)");
    std::sync::Arc::new(
        arthur_audio::piper::PiperVoice::load(
            &model,
            &arthur_audio::piper::PiperOptions {
                onnxruntime: arthur::config::default_onnxruntime(),
                ..arthur_audio::piper::PiperOptions::default()
            },
        )
        .expect("the Piper voice loads"),
    )
}

/// A talker in front of the null sink that never leaves: one playback stream (pacat) opened
/// once and fed silence in real time, speech spliced in on demand. A paplay per sentence
/// would connect a new stream each time, and PulseAudio rewinds the sink to mix a new stream
/// in: what it had taken of Arthur's stream is dropped and asked again, which moves Arthur's
/// echo by tens of milliseconds — an artefact of the test bench, not of a room.
pub struct Talker {
    speech: std::sync::mpsc::Sender<Vec<f32>>,
    _pacat: Killed,
}

impl Talker {
    pub fn start(address: &str, sink: &str) -> Self {
        use std::io::Write;
        let mut child = std::process::Command::new("pacat")
            .args(["-p", "-d", sink, "--format=float32le", "--rate=16000", "--channels=1", "--latency-msec=40"])
            .env("PULSE_SERVER", address)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("pacat is installed with pulseaudio-utils");
        let mut stdin = child.stdin.take().unwrap();
        let (speech, queued) = std::sync::mpsc::channel::<Vec<f32>>();
        std::thread::spawn(move || {
            let chunk = 320; // 20 ms
            let mut pending: std::collections::VecDeque<f32> = Default::default();
            let start = std::time::Instant::now();
            let mut written = 0u64;
            loop {
                while let Ok(s) = queued.try_recv() {
                    pending.extend(s);
                }
                let samples: Vec<f32> = (0..chunk).map(|_| pending.pop_front().unwrap_or(0.0)).collect();
                let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
                if stdin.write_all(&bytes).is_err() {
                    return;
                }
                written += chunk as u64;
                // Keep pace with the wall clock (a little ahead, so the stream never starves).
                let due = start + std::time::Duration::from_secs_f64(written as f64 / 16_000.0);
                let ahead = std::time::Duration::from_millis(40);
                if let Some(wait) = due.checked_duration_since(std::time::Instant::now() + ahead) {
                    std::thread::sleep(wait);
                }
            }
        });
        Self { speech, _pacat: Killed(child) }
    }

    /// Says the WAV at `path` and returns once it has been said.
    pub fn say(&self, path: &std::path::Path) {
        let samples = arthur_audio::wav::read_wav_16k_mono(path).unwrap();
        let secs = samples.len() as f64 / 16_000.0;
        self.speech.send(samples).unwrap();
        std::thread::sleep(std::time::Duration::from_secs_f64(secs + 0.1));
    }
}
