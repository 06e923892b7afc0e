//! `cargo bench --bench voice`: the local overhead of a voice turn — from the moment the
//! VAD closes a 3 s utterance to the first sample of the answer handed to the speaker
//! (whisper base, the turn against a scripted model with zero latency on loopback, the
//! first piece of the answer synthesised by Piper) — measured through the real hands-free
//! loop; then the resident memory with the models loaded, and the CPU used while listening
//! to silence in real time.
//! Needs `models/fetch --offline` (whisper base, the joe voice, ONNX Runtime).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arthur::listen::{replay, LoopEvent, VoiceLoop};
use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::ProviderKind;
use arthur_agents::memory::{MemoryStore, SqliteStore};
use arthur_agents::secret::Secret;
use arthur_agents::time::SystemClock;
use arthur_agents::tools::ToolContext;
use arthur_agents::turn::TurnEngine;
use arthur_audio::piper::{PiperOptions, PiperVoice};
use arthur_audio::playback::{Speaker, WavSpeaker};
use arthur_audio::stt::{SttOptions, Transcriber};
use arthur_audio::tts::{Pcm, Synthesizer};
use arthur_audio::wav::{self, WavSource, FRAME_SAMPLES};

/// A speaker playing in audio time that notes when each piece of audio was handed to it.
struct TimedSpeaker {
    inner: WavSpeaker,
    enqueued: Arc<Mutex<Vec<(Instant, usize)>>>,
}

impl Speaker for TimedSpeaker {
    fn enqueue(&mut self, pcm: &Pcm) -> Result<(), arthur_audio::playback::PlaybackError> {
        self.enqueued.lock().unwrap().push((Instant::now(), pcm.samples.len()));
        self.inner.enqueue(pcm)
    }
    fn is_playing(&self) -> bool {
        self.inner.is_playing()
    }
    fn stop(&mut self) {
        self.inner.stop()
    }
    fn advance(&mut self, samples: usize) {
        self.inner.advance(samples)
    }
    fn drain(&mut self) {
        self.inner.drain()
    }
}

fn vm_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field).map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0)))
        .unwrap_or(0)
}

/// User + system CPU time of this process, in seconds.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
    let ticks: f64 = fields.get(11).and_then(|u| u.parse().ok()).unwrap_or(0.0)
        + fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let models = arthur_audio::stt::model_dir().expect("data dir");
    let rss_start = vm_kib("VmRSS:");
    let transcriber = Arc::new(
        Transcriber::load(
            &models.join("ggml-base.bin"),
            SttOptions { language: "en".into(), adaptive_audio_ctx: true, ..Default::default() },
        )
        .expect("run models/fetch --offline"),
    );
    let voice: Arc<dyn Synthesizer> = Arc::new(
        PiperVoice::load(&models.join("en_US-joe-medium.onnx"), &PiperOptions::default()).expect("the joe voice"),
    );
    voice.synthesize("Hello there.").unwrap();
    let rss_loaded = vm_kib("VmRSS:");

    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_path(&dir.path().join("bench.db")).await.unwrap());
    let ctx = ToolContext {
        store: store.clone() as Arc<dyn MemoryStore>,
        clock: Arc::new(SystemClock),
        tz: chrono_tz::Europe::Paris,
        embedder: None,
        preferences_cap: 20,
    };
    let llm = ScriptedLlm::start().await;
    let options =
        ClientOptions { retries_per_provider: 0, backoff_base: Duration::from_millis(1), ..ClientOptions::default() };
    let client = LlmClient::new(
        vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("bench"))],
        ConfiguredModels::default(),
        options,
    )
    .unwrap();
    let engine = TurnEngine::new(Some(Arc::new(client)), ctx);
    let voice_loop =
        VoiceLoop { engine: &engine, transcriber, synth: voice.clone(), listener: Default::default(), barge_in: true };

    // A 3 s command said by the joe voice, between silences.
    let said = voice.synthesize("Arthur, remind me to call the bank tomorrow morning at nine.").unwrap();
    let command = wav::resample(&said.samples, said.rate, 16_000);
    let command_secs = wav::duration_secs(&command, 16_000);
    let mut input = vec![0.0f32; 8_000];
    input.extend(&command);
    input.extend(vec![0.0f32; 16_000 * 8]);

    let rounds = 5;
    let mut overheads = Vec::new();
    for round in 0..rounds {
        llm.push(Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "ecriture"}"#));
        let args = format!(r#"{{"texte": "appeler la banque {round}", "echeance": "2099-12-01T09:00"}}"#);
        llm.push(Reply::tool_calls("", &[("creer_rappel", args.as_str())]));
        llm.push(Reply::text("Anything else?"));
        let enqueued = Arc::new(Mutex::new(Vec::new()));
        let mut speaker = TimedSpeaker { inner: WavSpeaker::new(), enqueued: enqueued.clone() };
        let closed = Arc::new(Mutex::new(None::<Instant>));
        let closed_at = closed.clone();
        let mut frames = replay(WavSource::from_samples(input.clone(), FRAME_SAMPLES), None);
        let exchanges = voice_loop
            .hands_free(&mut frames, &mut speaker, std::future::pending(), |e| {
                if *e == LoopEvent::Transcribing {
                    closed_at.lock().unwrap().get_or_insert(Instant::now());
                }
            })
            .await
            .unwrap();
        assert!(exchanges[0].command.is_some(), "{exchanges:?}");
        let closed = closed.lock().unwrap().expect("an utterance");
        // Enqueued: the "listening" earcon, then the answer's first piece.
        let first_audio = enqueued.lock().unwrap()[1].0;
        overheads.push((first_audio - closed).as_secs_f64());
    }
    overheads.sort_by(f64::total_cmp);

    // Listening to silence in real time, like an idle microphone.
    let idle_secs = 10.0;
    let mut frames =
        replay(WavSource::from_samples(vec![0.0; 16_000 * idle_secs as usize], FRAME_SAMPLES), Some(Duration::ZERO));
    let mut speaker = WavSpeaker::new();
    let cpu_before = cpu_secs();
    let wall = Instant::now();
    voice_loop.hands_free(&mut frames, &mut speaker, std::future::pending(), |_| {}).await.unwrap();
    let idle_cpu = (cpu_secs() - cpu_before) / wall.elapsed().as_secs_f64();

    println!("Voice bench: whisper base (adaptive audio_ctx, 2 threads), Piper joe (2 threads), scripted model");
    println!(
        "voice turn overhead, utterance closed → first answer audio ({command_secs:.1} s command, {rounds} rounds): \
         median {:.3} s, max {:.3} s (goal ≤ 1.0 s; the VAD's 0.6 s hangover comes before)",
        overheads[overheads.len() / 2],
        overheads[overheads.len() - 1]
    );
    println!(
        "RSS: {} MiB at start, {} MiB with whisper base + Piper voice loaded, peak {} MiB",
        rss_start / 1024,
        rss_loaded / 1024,
        vm_kib("VmHWM:") / 1024
    );
    println!("idle CPU while listening to silence in real time: {:.1} % of one core", idle_cpu * 100.0);
}
