//! `cargo bench --bench voice`: the voice in a room, measured through the real components
//! (whisper base, the Piper joe voice, the hands-free loop, a scripted model with zero
//! latency on loopback) on a noise set made here (`tests/common/noise.rs`: espeak-ng
//! babble, sox music, clatter, fan; commands said by the joe voice mixed in at an SNR):
//!
//! - `vad`: utterances the speech detector opens per hour of each noise; commands missed at
//!   10, 5 and 0 dB SNR (not detected, and not understood: wake word + key word);
//! - `echo`: Arthur's own answer played back into the microphone (delay, attenuation,
//!   reverb): answers cut by their own echo, echo transcribed, and the time from the
//!   onset of a command spoken over the answer to the answer stopping;
//! - `latency`: in real time, from the last voiced sample of a 3 s command to the first
//!   sample of the answer handed to the speaker;
//! - `sure`: the same for a French command the grammar is sure of (MBROLA fr3 when
//!   installed, else espeak-ng French; whisper base in French), with a model configured that
//!   answers after 400 ms per call: the model path (`ARTHUR_LOCAL_FIRST=0`, router + one
//!   call) and local first (no call) side by side, local first with one plain reading
//!   (before), as shipped (favoured words), with the context prompt, and with it and beam
//!   search 5;
//! - `cpu`: CPU used by the loop over 10 minutes of babble without the wake word, and the
//!   turns it ran;
//! - `tv`: a television (voices and music) under commands at 20, 12 and 6 dB: answers cut
//!   by it, phantom commands per hour of it, commands heard; `tvhour`: a whole hour of it
//!   at 12 dB, a command every two minutes;
//! - `rss`: resident memory with the models loaded, idle CPU listening to silence;
//! - `ears` (issue 29): the commands understood by whisper alone, in silence and under a
//!   television at 12 and 6 dB, said by joe and by espeak-ng, and free speech's word error
//!   rate, for each way of decoding (context prompt, beam search, denoiser, flash
//!   attention, quantized weights, tiny.en, favoured words at bonuses 1 to 5), each against
//!   the first row (`VOICE_BENCH_EARS=0,2` runs some rows; `VOICE_BENCH_VERBOSE=1` prints
//!   what was missed); `ears-fr`: the same in French (espeak-ng, MBROLA fr3 at 120 and 150
//!   wpm), understood = the grammar reads the same tool and arguments, with the grammar as
//!   the judge of several readings, favoured words, and free speech's word error rate
//!   (issue 29's rows: `ears-fr-29`); `ears-fr` (issue 40, `benches/parts/ears_fr.rs`: a sub-folder, or Cargo would take it for a bench of its own):
//!   the natural French test voice (Kokoro) beside MBROLA, the grammar as the recogniser's
//!   language model, the doubt gate, wrong writes and stored words.
//!
//! `VOICE_BENCH_PART=vad,echo,…` runs some parts (all but `tvhour` by default: it takes
//! about half an hour); `VOICE_BENCH_QUICK=1` shortens them.
//! Needs `models/fetch --offline` (whisper base, the joe voice, ONNX Runtime).

#[path = "parts/ears_fr.rs"]
mod ears_fr;
#[path = "../tests/common/noise.rs"]
mod noise;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::ProviderKind;
use arthur_agents::memory::{MemoryStore, SqliteStore};
use arthur_agents::secret::Secret;
use arthur_agents::time::SystemClock;
use arthur_agents::tools::ToolContext;
use arthur_agents::turn::TurnEngine;
use arthur_audio::piper::{PiperOptions, PiperVoice};
use arthur_audio::playback::WavSpeaker;
use arthur_audio::stt::{Denoise, Room, SttOptions, Transcriber};
use arthur_audio::tts::Synthesizer;
use arthur_audio::vad::{Vad, VadEvent};
use arthur_audio::wake::strip_wake_word;
use arthur_audio::wav::{self, WavSource, FRAME_SAMPLES};
use arthur_voice::listen::{DetectorChoice, Exchange, LoopEvent, Tuning, VoiceLoop};
use noise::{EchoPath, Noise, NoiseMaker, RATE};

/// The configurations compared side by side.
#[derive(Debug, Clone, PartialEq)]
enum Variant {
    /// The voice as it was before issues 20 and 21: energy VAD, no echo cancellation,
    /// any speech cuts an answer, anything said in the window is a command.
    Today,
    /// The voice in a room (echo cancellation, background measured, speculative
    /// transcription, wake-word prefix, user-only barge-in and window) with a detector.
    Room(DetectorChoice),
}

impl Variant {
    fn name(&self) -> &'static str {
        match self {
            Variant::Today => "today (energy VAD)",
            Variant::Room(DetectorChoice::Silero { .. }) => "room, Silero VAD",
            Variant::Room(DetectorChoice::Earshot) => "room, earshot",
            Variant::Room(DetectorChoice::Energy) => "room, energy",
        }
    }

    fn tuning(&self) -> Tuning {
        match self {
            Variant::Today => Tuning::before_room(),
            Variant::Room(d) => Tuning::room(d.clone()),
        }
    }

    fn vad(&self) -> Vad {
        let mut tuning = self.tuning();
        // VOICE_BENCH_LOOKBACK=0 measures the room detector without its look-back.
        if let Some(ms) = std::env::var("VOICE_BENCH_LOOKBACK").ok().and_then(|v| v.parse().ok()) {
            if *self != Variant::Today {
                tuning.vad.lookback_ms = ms;
            }
        }
        Vad::with_detector(tuning.vad, tuning.detector.build().expect("the detector loads"))
    }

    fn voice_loop<'a>(&self, engine: &'a TurnEngine, models: &'a Models) -> VoiceLoop<'a> {
        VoiceLoop::new(engine, models.whisper.clone(), models.voice.clone(), Default::default(), true)
            .with_tuning(self.tuning())
    }
}

fn silero() -> DetectorChoice {
    let dir = arthur::config::default_model_dir().expect("a data directory");
    DetectorChoice::Silero {
        model: arthur_audio::detect::SileroDetector::model_in(&dir).expect("models/fetch installs silero_vad.onnx"),
        onnxruntime: arthur::config::default_onnxruntime().expect("models/fetch installs ONNX Runtime"),
    }
}

/// The loop's variants: before, and after.
fn loop_variants() -> Vec<Variant> {
    vec![Variant::Today, Variant::Room(silero())]
}

/// The speech detectors compared.
fn detector_variants() -> Vec<Variant> {
    let all = vec![Variant::Today, Variant::Room(DetectorChoice::Earshot), Variant::Room(silero())];
    // VOICE_BENCH_DETECTOR=silero (or earshot, today) compares fewer.
    match std::env::var("VOICE_BENCH_DETECTOR") {
        Ok(only) => all.into_iter().filter(|v| only.split(',').any(|o| v.name().to_lowercase().contains(o))).collect(),
        Err(_) => all,
    }
}

struct Models {
    whisper: Arc<Transcriber>,
    voice: Arc<dyn Synthesizer>,
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

/// A turn engine over a fresh SQLite file, its only provider a scripted model.
struct Turns {
    _dir: tempfile::TempDir,
    engine: TurnEngine,
    llm: ScriptedLlm,
}

async fn turns() -> Turns {
    turns_with(true).await
}

async fn turns_with(local_first: bool) -> Turns {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_path(&dir.path().join("bench.db")).await.unwrap());
    let ctx = ToolContext {
        store: store as Arc<dyn MemoryStore>,
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
    Turns { _dir: dir, engine: TurnEngine::new(Some(Arc::new(client)), ctx).with_local_first(local_first), llm }
}

fn push_reminder_turn(llm: &ScriptedLlm, n: usize) {
    llm.push(Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "ecriture"}"#));
    let args = format!(r#"{{"texte": "appeler la banque {n}", "echeance": "2099-12-01T09:00"}}"#);
    llm.push(Reply::tool_calls("", &[("creer_rappel", args.as_str())]));
    llm.push(Reply::text("Anything else?"));
}

/// A long spoken answer for every turn (router and specialist alike get it: the router
/// falls back, the specialist's text is the conversation answer).
/// Conversation that states nothing about the user (so it is spoken as written: a plan
/// of the user's day told without a read would be withheld).
const LONG_ANSWER: &str = "Here is an idea for a quiet evening. A slow walk by the river before dinner \
    helps the mind settle, then some music and a good book, and a warm cup of tea before an early night.";

fn say(models: &Models, text: &str) -> Vec<f32> {
    let pcm = models.voice.synthesize(text).unwrap();
    wav::resample(&pcm.samples, pcm.rate, RATE)
}

fn secs(samples: usize) -> f64 {
    samples as f64 / f64::from(RATE)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn wants(part: &str) -> bool {
    match std::env::var("VOICE_BENCH_PART") {
        Ok(parts) => parts.split(',').any(|p| p.trim() == part),
        Err(_) => part != "tvhour" && part != "ears-fr-29",
    }
}

fn quick() -> bool {
    std::env::var("VOICE_BENCH_QUICK").is_ok_and(|v| v == "1")
}

/// The VAD alone over `signal`: the spans of the utterances it emits, and whether each
/// stood out from the background.
fn utterance_spans(mut vad: Vad, signal: &[f32]) -> Vec<(std::ops::Range<usize>, bool)> {
    let mut spans = Vec::new();
    let mut collect = |vad: &Vad, event: Option<VadEvent>| {
        if let Some(VadEvent::Utterance(u)) = event {
            let span = vad.last_utterance_span().unwrap();
            spans.push((span.start as usize..span.end as usize, u.foreground));
        }
    };
    for frame in signal.chunks(FRAME_SAMPLES) {
        let event = vad.push(frame);
        collect(&vad, event);
    }
    let event = vad.flush();
    collect(&vad, event);
    spans
}

fn overlap(a: &std::ops::Range<usize>, b: &std::ops::Range<usize>) -> usize {
    a.end.min(b.end).saturating_sub(a.start.max(b.start))
}

async fn part_vad(maker: &NoiseMaker, models: &Models) {
    let minutes = if quick() { 2.0 } else { 10.0 };
    println!(
        "\n## Speech detection in a room ({minutes} min of each noise at -30 dBFS; commands said by the joe voice)"
    );
    println!(
        "| detector | noise | utterances opened per hour (standing out) | missed at 10 dB (not detected / not understood) | at 5 dB | at 0 dB |"
    );
    println!("|---|---|---|---|---|---|");
    let commands: Vec<(Vec<f32>, &str)> = noise::COMMANDS.iter().map(|(text, key)| (say(models, text), *key)).collect();
    for variant in detector_variants() {
        // The baseline: the commands alone, in silence (what whisper itself misses).
        let mut track = vec![0.0; (RATE as f32 * (12.0 * commands.len() as f32 + 4.0)) as usize];
        for (i, (speech, _)) in commands.iter().enumerate() {
            noise::add(&mut track, (4.0 + 12.0 * i as f32) as usize * RATE as usize, speech);
        }
        let (mut clean_missed, mut clean_undetected) = (0, 0);
        let utterances: Vec<std::ops::Range<usize>> =
            utterance_spans(variant.vad(), &track).into_iter().map(|u| u.0).collect();
        for (i, (speech, key)) in commands.iter().enumerate() {
            let at = (4.0 + 12.0 * i as f32) as usize * RATE as usize;
            let voiced = at + noise::first_voiced_sample(speech)..at + noise::last_voiced_sample(speech);
            match utterances.iter().max_by_key(|u| overlap(u, &voiced)) {
                Some(u) if overlap(u, &voiced) * 10 >= voiced.len() * 8 => {
                    let text = models.whisper.transcribe(&track[u.clone()]).unwrap();
                    if !strip_wake_word(&text, "Arthur").is_some_and(|r| r.to_lowercase().contains(key)) {
                        eprintln!("missed in silence ({}): {text:?}", variant.name());
                        clean_missed += 1;
                    }
                }
                _ => clean_undetected += 1,
            }
        }
        println!(
            "| {} | none (the commands alone) | — | {clean_undetected} / {} of 10 in silence | | |",
            variant.name(),
            clean_missed + clean_undetected
        );
        let only = std::env::var("VOICE_BENCH_NOISE").ok();
        for kind in
            Noise::SET.into_iter().filter(|k| only.as_deref().is_none_or(|o| o.split(',').any(|n| n == k.name())))
        {
            let background = maker.make(kind, minutes * 60.0, 7);
            let opened = utterance_spans(variant.vad(), &background);
            let per_hour = opened.len() as f64 * 60.0 / f64::from(minutes);
            let fg_per_hour = opened.iter().filter(|u| u.1).count() as f64 * 60.0 / f64::from(minutes);
            let mut cells = Vec::new();
            for snr in [10.0, 5.0, 0.0] {
                let (mut not_detected, mut not_understood) = (0, 0);
                let mut track = maker.make(kind, 12.0 * commands.len() as f32 + 4.0, 100 + snr as u64);
                let mut spans = Vec::new();
                for (i, (speech, _)) in commands.iter().enumerate() {
                    let at = (4.0 + 12.0 * i as f32) as usize * RATE as usize;
                    let span = noise::mix_at_snr(&mut track, at, speech, snr);
                    let voiced = at + noise::first_voiced_sample(speech)..at + noise::last_voiced_sample(speech);
                    spans.push((span, voiced));
                }
                let utterances: Vec<std::ops::Range<usize>> =
                    utterance_spans(variant.vad(), &track).into_iter().map(|u| u.0).collect();
                for (i, (_, voiced)) in spans.iter().enumerate() {
                    let best = utterances.iter().max_by_key(|u| overlap(u, voiced));
                    let covered = best.map(|u| overlap(u, voiced)).unwrap_or(0);
                    if covered * 10 < voiced.len() * 8 {
                        let near: Vec<String> = utterances
                            .iter()
                            .filter(|u| overlap(u, voiced) > 0)
                            .map(|u| format!("{:.2}–{:.2} s", secs(u.start), secs(u.end)))
                            .collect();
                        eprintln!(
                            "not detected ({}, {}, {snr} dB): {:?} said {:.2}–{:.2} s, utterances over it: {near:?}",
                            variant.name(),
                            kind.name(),
                            noise::COMMANDS[i].0,
                            secs(voiced.start),
                            secs(voiced.end)
                        );
                        not_detected += 1;
                        not_understood += 1;
                        continue;
                    }
                    let u = best.unwrap();
                    let text = models.whisper.transcribe(&track[u.clone()]).unwrap();
                    let understood = strip_wake_word(&text, "Arthur")
                        .is_some_and(|rest| rest.to_lowercase().contains(commands[i].1));
                    if !understood {
                        eprintln!("missed ({}, {}, {snr} dB): {text:?}", variant.name(), kind.name());
                        not_understood += 1;
                    }
                }
                cells.push(format!("{not_detected} / {not_understood} of {}", commands.len()));
            }
            println!(
                "| {} | {} | {per_hour:.0} ({fg_per_hour:.0}) | {} | {} | {} |",
                variant.name(),
                kind.name(),
                cells[0],
                cells[1],
                cells[2]
            );
        }
    }
}

/// Runs the hands-free loop on `input` in the room; returns the exchanges and the speaker.
async fn run_in_room(
    voice_loop: &VoiceLoop<'_>,
    input: Vec<f32>,
    echo: Option<EchoPath>,
    paced: bool,
    on_event: impl FnMut(&LoopEvent),
) -> (Vec<Exchange>, noise::RoomSpeaker) {
    let t0 = paced.then(tokio::time::Instant::now);
    let (mut frames, mut speaker) = noise::room(input, echo, t0);
    let exchanges = voice_loop
        .hands_free(&mut frames, &mut speaker, tokio_util::sync::CancellationToken::new(), on_event)
        .await
        .unwrap();
    (exchanges, speaker)
}

async fn part_echo(models: &Models) {
    let rounds =
        std::env::var("VOICE_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(if quick() { 2 } else { 5 });
    println!("\n## Echo: the answer played back into the microphone ({rounds} answers per path)");
    println!(
        "| variant | echo path | answers cut by their own echo | echo transcribed as speech | command over the answer: stopped after (median, max) | \"call my mother\" heard |"
    );
    println!("|---|---|---|---|---|---|");
    let command = say(models, "Arthur, what is my plan for today?");
    let interruption = say(models, "Stop. Call my mother.");
    for variant in loop_variants() {
        for (delay, gain, rt60) in [(40.0, 0.3, 150.0), (120.0, 0.5, 250.0)] {
            let path = EchoPath::new(delay, gain, rt60);
            let t = turns().await;
            t.llm.set_fallback(Some(Reply::text(LONG_ANSWER)));
            let voice_loop = variant.voice_loop(&t.engine, models);
            let (mut self_cut, mut echo_heard, mut heard_after) = (0, 0, 0);
            let mut stops = Vec::new();
            for _ in 0..rounds {
                // Round A: nobody talks over the answer.
                let mut input = vec![0.0; RATE as usize / 2];
                input.extend(&command);
                input.extend(vec![0.0; RATE as usize * 16]);
                let (exchanges, _) = run_in_room(&voice_loop, input, Some(path.clone()), false, |_| {}).await;
                if exchanges.first().is_some_and(|e| e.interrupted_at_secs.is_some()) {
                    self_cut += 1;
                }
                echo_heard += exchanges.iter().skip(1).filter(|e| !e.transcript.trim().is_empty()).count();
                // Round B: the user talks over the answer 2 s after it starts.
                let mut input = vec![0.0; RATE as usize / 2];
                input.extend(&command);
                let lead = input.len();
                input.extend(vec![0.0; RATE as usize * 30]);
                // Find when the answer starts (the loop runs in audio time: the same input
                // gives the same timeline), then place the interruption 2 s later.
                let (_, probe) = run_in_room(&voice_loop, input.clone(), Some(path.clone()), false, |_| {}).await;
                let answer_at = probe.enqueued.lock().unwrap().get(1).map(|e| e.1).unwrap_or(lead + RATE as usize);
                let at = answer_at + 2 * RATE as usize;
                noise::add(&mut input, at, &interruption);
                let onset = at + noise::first_voiced_sample(&interruption);
                let (exchanges, _) = run_in_room(&voice_loop, input, Some(path.clone()), false, |_| {}).await;
                if exchanges
                    .iter()
                    .skip(1)
                    .any(|e| e.command.as_deref().is_some_and(|c| c.to_lowercase().contains("mother")))
                {
                    heard_after += 1;
                }
                match exchanges.first().and_then(|e| e.interrupted_at_secs) {
                    Some(stopped) if stopped >= secs(onset) - 0.05 => stops.push(stopped - secs(onset)),
                    Some(_) => stops.push(f64::NAN), // cut before the user spoke: by the echo
                    None => {}
                }
            }
            let valid: Vec<f64> = stops.iter().cloned().filter(|s| s.is_finite()).collect();
            let max = valid.iter().cloned().fold(f64::NAN, f64::max);
            println!(
                "| {} | {delay:.0} ms, gain {gain}, reverb {rt60:.0} ms | {self_cut} of {rounds} | {echo_heard} | {} | {heard_after} of {rounds} |",
                variant.name(),
                if valid.is_empty() {
                    format!(
                        "never stopped by the user ({} of {rounds} already cut by the echo)",
                        stops.len() - valid.len()
                    )
                } else {
                    format!(
                        "{:.3} s, {max:.3} s ({} of {rounds} stopped by the user)",
                        median(valid.clone()),
                        valid.len()
                    )
                }
            );
        }
    }
}

async fn part_latency(models: &Models) {
    let rounds = if quick() { 3 } else { 5 };
    println!("\n## Latency the user feels (real time; 3 s command; scripted model, zero latency; {rounds} rounds)");
    println!("| variant | last voiced sample → first answer sample (median) | max | utterance closed → first answer sample (median) |");
    println!("|---|---|---|---|");
    let said = say(models, "Arthur, remind me to call the bank tomorrow morning at nine.");
    for variant in loop_variants() {
        let t = turns().await;
        let voice_loop = variant.voice_loop(&t.engine, models);
        let (mut felt, mut closed) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            push_reminder_turn(&t.llm, round);
            let mut input = vec![0.0f32; 8_000];
            let last_voiced = input.len() + noise::last_voiced_sample(&said);
            input.extend(&said);
            input.extend(vec![0.0f32; RATE as usize * 6]);
            let closed_at = Arc::new(Mutex::new(None::<Instant>));
            let c = closed_at.clone();
            let start = tokio::time::Instant::now();
            let (mut frames, mut speaker) = noise::room(input, None, Some(start));
            let enqueued = speaker.enqueued.clone();
            let exchanges = voice_loop
                .hands_free(&mut frames, &mut speaker, tokio_util::sync::CancellationToken::new(), |e| {
                    if *e == LoopEvent::Transcribing {
                        c.lock().unwrap().get_or_insert(Instant::now());
                    }
                })
                .await
                .unwrap();
            assert!(exchanges.first().is_some_and(|e| e.command.is_some()), "{exchanges:?}");
            // Enqueued: the "listening" earcon, then the answer's first piece.
            let first_audio = enqueued.lock().unwrap()[1].0;
            let spoken_end = start.into_std() + Duration::from_secs_f64(secs(last_voiced));
            felt.push((first_audio - spoken_end).as_secs_f64());
            closed.push((first_audio - closed_at.lock().unwrap().unwrap()).as_secs_f64());
        }
        let max = felt.iter().cloned().fold(f64::NAN, f64::max);
        println!("| {} | {:.3} s | {max:.3} s | {:.3} s |", variant.name(), median(felt), median(closed));
    }
}

/// A French command the grammar is sure of, said to the loop with a model configured that
/// answers after 400 ms per call: the time the user waits, model path and local first.
async fn part_sure(maker: &NoiseMaker, models: &Models) {
    let rounds = if quick() { 3 } else { 5 };
    let dir = arthur::config::default_model_dir().expect("data dir");
    let french = Arc::new(
        Transcriber::load(
            &dir.join("ggml-base.bin"),
            SttOptions {
                language: "fr".into(),
                initial_prompt: Some("Arthur".into()),
                adaptive_audio_ctx: true,
                ..Default::default()
            },
        )
        .expect("run models/fetch --offline"),
    );
    // Beam search 5 (the `ears-fr` row that hears most under a television), for its cost.
    let beam = Arc::new(
        Transcriber::load(&dir.join("ggml-base.bin"), SttOptions { beam_size: Some(5), ..french.options().clone() })
            .expect("run models/fetch --offline"),
    );
    // MBROLA's fr3 voice when it is installed: whisper base hears espeak-ng's own French
    // too poorly for the grammar to be sure of it (`ears-fr`: 0 of 16 in silence).
    let sentence = "Arthur, rappelle-moi demain à neuf heures d'appeler la banque.";
    let (said, voice) = match mbrola_fr3(sentence, 150) {
        pcm if !pcm.is_empty() => (pcm, "MBROLA fr3 150 wpm"),
        _ => (maker.espeak(sentence, "fr", 150, 50), "espeak-ng French"),
    };
    println!(
        "\n## A sure French command with a model configured (real time; {voice}, whisper base fr; the model answers after 400 ms per call; {rounds} rounds)"
    );
    println!("| path | heard as the command | model calls | last voiced sample → first answer sample (median) | max |");
    println!("|---|---|---|---|---|");
    let variant = Variant::Room(silero());
    let shipped = variant.tuning().ears;
    let plain = arthur_voice::listen::EarsPolicy::PLAIN;
    let rows = [
        ("model path (ARTHUR_LOCAL_FIRST=0)", false, shipped, &french),
        ("local first, one plain reading (before)", true, plain, &french),
        ("local first (default: favoured words, greedy)", true, shipped, &french),
        ("local first, favoured words + beam search 5 (ARTHUR_STT_BEAM=5)", true, shipped, &beam),
        (
            "local first, context prompt",
            true,
            arthur_voice::listen::EarsPolicy { context_prompt: true, ..plain },
            &french,
        ),
        (
            "local first, context prompt + beam search 5",
            true,
            arthur_voice::listen::EarsPolicy { context_prompt: true, ..plain },
            &beam,
        ),
    ];
    for (name, local_first, ears, transcriber) in rows {
        let t = turns_with(local_first).await;
        let tuning = Tuning { ears, ..variant.tuning() };
        let voice_loop = VoiceLoop::new(&t.engine, transcriber.clone(), models.voice.clone(), Default::default(), true)
            .with_tuning(tuning);
        let mut felt = Vec::new();
        let mut calls = 0;
        let mut heard_rounds = 0;
        for round in 0..rounds {
            if !local_first {
                let d = Duration::from_millis(400);
                t.llm.push(Reply::delayed(
                    d,
                    Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "ecriture"}"#),
                ));
                let args = format!(r#"{{"texte": "appeler la banque {round}", "echeance": "2099-12-01T09:00"}}"#);
                t.llm.push(Reply::delayed(d, Reply::tool_calls("", &[("creer_rappel", args.as_str())])));
            }
            let before = t.llm.requests().len();
            let mut input = vec![0.0f32; 8_000];
            let last_voiced = input.len() + noise::last_voiced_sample(&said);
            input.extend(&said);
            input.extend(vec![0.0f32; RATE as usize * 6]);
            let start = tokio::time::Instant::now();
            let (mut frames, mut speaker) = noise::room(input, None, Some(start));
            let enqueued = speaker.enqueued.clone();
            let exchanges = voice_loop
                .hands_free(&mut frames, &mut speaker, tokio_util::sync::CancellationToken::new(), |_| {})
                .await
                .unwrap();
            if exchanges.first().is_none_or(|e| e.command.is_none()) {
                eprintln!("sure ({name}): not heard as a command: {exchanges:?}");
                continue;
            }
            heard_rounds += 1;
            let first_audio = enqueued.lock().unwrap()[1].0;
            let spoken_end = start.into_std() + Duration::from_secs_f64(secs(last_voiced));
            felt.push((first_audio - spoken_end).as_secs_f64());
            calls = t.llm.requests().len() - before;
            if round == 0 {
                let heard = exchanges.first().and_then(|e| e.command.clone()).unwrap_or_default();
                println!("<!-- heard: {heard} -->");
            }
        }
        let max = felt.iter().cloned().fold(f64::NAN, f64::max);
        let latency = if felt.is_empty() { "—".to_owned() } else { format!("{:.3} s", median(felt)) };
        println!("| {name} | {heard_rounds} of {rounds} | {calls} | {latency} | {max:.3} s |");
    }
}

async fn part_cpu(maker: &NoiseMaker, models: &Models) {
    let minutes = if quick() { 2.0 } else { 10.0 };
    println!("\n## CPU under babble ({minutes} min of babble, no wake word; the loop as fast as it goes)");
    println!("| variant | CPU (cores, averaged over the audio's duration) | utterances transcribed | turns run |");
    println!("|---|---|---|---|");
    let babble = maker.make(Noise::Babble, minutes * 60.0, 11);
    // The room loop again with beam search 5 (`ARTHUR_STT_BEAM=5`): every speculative
    // decoding during a pause would pay for it too.
    let beam = Arc::new(
        Transcriber::load(
            &arthur::config::default_model_dir().expect("data dir").join("ggml-base.bin"),
            SttOptions { beam_size: Some(5), ..models.whisper.options().clone() },
        )
        .expect("run models/fetch --offline"),
    );
    let mut rows: Vec<(Variant, Arc<Transcriber>, &str)> =
        loop_variants().into_iter().map(|v| (v, models.whisper.clone(), "")).collect();
    rows.push((Variant::Room(silero()), beam, ", beam search 5"));
    for (variant, whisper, suffix) in rows {
        let t = turns().await;
        t.llm.set_fallback(Some(Reply::text(LONG_ANSWER)));
        let voice_loop = VoiceLoop::new(&t.engine, whisper, models.voice.clone(), Default::default(), true)
            .with_tuning(variant.tuning());
        let transcribed = Arc::new(Mutex::new(0usize));
        let n = transcribed.clone();
        let before = cpu_secs();
        let (exchanges, _) = run_in_room(&voice_loop, babble.clone(), None, false, |e| {
            if *e == LoopEvent::Transcribing {
                *n.lock().unwrap() += 1;
            }
        })
        .await;
        let cpu = (cpu_secs() - before) / f64::from(minutes * 60.0);
        let ran = exchanges.iter().filter(|e| e.command.is_some()).count();
        println!("| {}{suffix} | {cpu:.2} | {} | {ran} |", variant.name(), transcribed.lock().unwrap());
    }
}

async fn part_tv(maker: &NoiseMaker, models: &Models, minutes: f32, every: f32, levels: &[f32]) {
    println!(
        "\n## Television under the commands ({minutes} min per level; voices and music at -30 dBFS; a command every {every} s)"
    );
    println!("| variant | command level over the TV | answers cut by the TV | phantom commands (per hour of TV) | commands heard |");
    println!("|---|---|---|---|---|");
    let commands: Vec<(Vec<f32>, &str)> = noise::COMMANDS.iter().map(|(text, key)| (say(models, text), *key)).collect();
    for variant in loop_variants() {
        for &snr in levels {
            let t = turns().await;
            t.llm.set_fallback(Some(Reply::text(LONG_ANSWER)));
            let voice_loop = variant.voice_loop(&t.engine, models);
            // The television is on 20 s before the first command (the room is learnt).
            let mut track = maker.make(Noise::Tv, minutes * 60.0 + 20.0, 21);
            let mut spans = Vec::new();
            let count = (minutes * 60.0 / every) as usize;
            for i in 0..count {
                let (speech, key) = &commands[i % commands.len()];
                let at = (20.0 + every * i as f32) as usize * RATE as usize;
                let span = noise::mix_at_snr(&mut track, at, speech, snr);
                spans.push((span, *key));
            }
            let (exchanges, _) = run_in_room(&voice_loop, track, None, false, |_| {}).await;
            let mut heard = vec![false; spans.len()];
            let (mut answers, mut cut, mut phantom) = (0, 0, 0);
            for e in exchanges.iter().filter(|e| e.command.is_some()) {
                answers += 1;
                if e.interrupted_at_secs.is_some() {
                    cut += 1;
                }
                let end = (e.at_secs * f64::from(RATE)) as usize;
                match spans.iter().position(|(s, _)| end >= s.start && end <= s.end + 2 * RATE as usize) {
                    Some(i) => {
                        if e.command.as_deref().unwrap_or("").to_lowercase().contains(spans[i].1) {
                            heard[i] = true;
                        }
                    }
                    None => {
                        eprintln!("phantom ({}, {snr} dB): {:?}", variant.name(), e.command);
                        phantom += 1
                    }
                }
            }
            let per_hour = phantom as f64 * 60.0 / f64::from(minutes + 1.0 / 3.0);
            println!(
                "| {} | {snr:.0} dB | {cut} of {answers} | {phantom} ({per_hour:.0} per hour) | {} of {} |",
                variant.name(),
                heard.iter().filter(|h| **h).count(),
                spans.len()
            );
        }
    }
}

/// A voice's clips: its speech and the key word a command must keep.
type Said<'a> = Vec<(Vec<f32>, &'a str)>;
/// One clip played: (condition, voice, pcm, room, key word).
type Clip<'a> = (usize, usize, Vec<f32>, Option<Room>, &'a str);
/// Issue 29's figures: the bench's commands (wake word + key word, as in `vad`) said by two
/// voices (Piper joe, espeak-ng en-us), cut as the detector would (300 ms before, 300 ms
/// after) from silence and from a television (babble over music) at 12 and 6 dB; free
/// speech (a note's text, a question: no wake word) for its word error rate in silence and
/// at 12 dB; the transcription time per command. One row per way of decoding, each step
/// measured on its own against the first row, then the steps kept together.
/// (The grammar, the judge of several readings, is French: it cannot judge these English
/// readings; `ears-fr` measures it on the one French voice CI has.)
async fn part_ears(maker: &NoiseMaker, models: &Models) {
    let dir = arthur::config::default_model_dir().expect("data dir");
    let quick = quick();
    // The English counterpart of `arthur_agents::ears::context_prompt` (the grammar's command
    // words and the user's names): the bench's project is « garden », its lists the defaults.
    let context = "Arthur. Garden, shopping, tasks. Remind me, reminder, reminders, note, notes, list, add, \
                   remove, timer, minutes, work session, pause, resume, stop, project, projects, remember, \
                   preferences, search, summary, week, tomorrow.";
    let base = dir.join("ggml-base.bin");
    let q8 = quantized(&base, "q8_0");
    let q5 = quantized(&base, "q5_0");
    let tiny = dir.join("ggml-tiny.en.bin");
    let before = SttOptions {
        language: "en".into(),
        initial_prompt: Some("Arthur".into()),
        adaptive_audio_ctx: true,
        ..Default::default()
    };
    let prompt = SttOptions { initial_prompt: Some(context.into()), ..before.clone() };
    let mut steps: Vec<(&str, std::path::PathBuf, SttOptions)> = vec![
        ("before: base f16, greedy, prompt « Arthur »", base.clone(), before.clone()),
        ("context prompt (command words + names)", base.clone(), prompt.clone()),
        ("beam search 5", base.clone(), SttOptions { beam_size: Some(5), ..before.clone() }),
        ("denoiser below 15 dB SNR", base.clone(), SttOptions { denoise: Denoise::BelowSnrDb(15.0), ..before.clone() }),
        ("denoiser always", base.clone(), SttOptions { denoise: Denoise::Always, ..before.clone() }),
        ("flash attention", base.clone(), SttOptions { flash_attn: true, ..before.clone() }),
        ("q8_0 weights", q8.clone(), before.clone()),
        ("q5_0 weights", q5.clone(), before.clone()),
        ("tiny.en", tiny, before.clone()),
    ];
    // The same words favoured while decoding (`arthur_audio::favour`), at three bonuses.
    let words: Vec<String> =
        context.split(['.', ',']).map(str::trim).filter(|w| !w.is_empty()).map(str::to_owned).collect();
    for (name, bonus) in [
        ("favour the context words, bonus 1", 1.0),
        ("favour the context words, bonus 2", 2.0),
        ("favour the context words, bonus 3", 3.0),
        ("favour the context words, bonus 4", 4.0),
        ("favour the context words, bonus 5", 5.0),
    ] {
        steps.push((name, base.clone(), SttOptions { favour: words.clone(), favour_bonus: bonus, ..before.clone() }));
    }
    steps.push((
        "favour the context words, bonus 3 + beam search 5",
        base.clone(),
        SttOptions { favour: words.clone(), favour_bonus: 3.0, beam_size: Some(5), ..before.clone() },
    ));
    if let Ok(only) = std::env::var("VOICE_BENCH_EARS") {
        let keep: Vec<usize> = only.split(',').filter_map(|i| i.trim().parse().ok()).collect();
        steps = steps.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, s)| s).collect();
    }
    // The clips.
    let voices: Vec<(&str, Said)> = vec![
        ("joe", noise::COMMANDS.iter().map(|(t, k)| (say(models, t), *k)).collect()),
        ("espeak-ng", noise::COMMANDS.iter().map(|(t, k)| (maker.espeak(t, "en-us", 160, 50), *k)).collect()),
    ];
    let voices = if quick { voices[..1].to_vec() } else { voices };
    let margin = RATE as usize * 3 / 10;
    let mut clips: Vec<Clip> = Vec::new();
    for (v, (_, said)) in voices.iter().enumerate() {
        for (speech, key) in said {
            let mut pcm = vec![0.0; margin];
            pcm.extend(speech);
            pcm.extend(vec![0.0; margin]);
            clips.push((0, v, pcm, None, key));
        }
        for (c, snr) in [(1usize, 12.0f32), (2, 6.0)] {
            let every = 8 * RATE as usize;
            let mut track = maker.make(Noise::Tv, (said.len() * 8 + 4) as f32, 29 + v as u64 * 7 + c as u64);
            for (i, (speech, key)) in said.iter().enumerate() {
                let at = 2 * RATE as usize + i * every;
                let span = noise::mix_at_snr(&mut track, at, speech, snr);
                let background = 20.0 * wav::rms(&track[at - RATE as usize..at - margin]).max(1e-9).log10();
                let voiced = at + noise::first_voiced_sample(speech)..at + noise::last_voiced_sample(speech);
                let level = 20.0 * wav::rms(&track[voiced]).max(1e-9).log10();
                let room = Room { level_db: level, background_db: background };
                clips.push((c, v, track[span.start - margin..span.end + margin].to_vec(), Some(room), key));
            }
        }
    }
    // Free speech: what a note holds or a question to the model (no wake word).
    const FREE: [&str; 8] = [
        "Buy some flour, eggs and a birthday candle for Sunday.",
        "What is the capital of Australia and how many people live there?",
        "The plumber said the pipe under the sink needs a new joint.",
        "Can you suggest a good book about the history of Rome?",
        "Write a short poem about autumn leaves falling in the park.",
        "How do I make a simple tomato sauce for pasta?",
        "The car needs new tyres before the winter holidays.",
        "Tell me a joke about a cat and a violin.",
    ];
    let free_said: Vec<Vec<f32>> = FREE.iter().map(|t| say(models, t)).collect();
    let mut free_clips: Vec<(usize, Vec<f32>, Option<Room>)> = Vec::new();
    for (i, speech) in free_said.iter().enumerate() {
        let mut pcm = vec![0.0; margin];
        pcm.extend(speech);
        pcm.extend(vec![0.0; margin]);
        free_clips.push((i, pcm, None));
        let mut track = maker.make(Noise::Tv, secs(speech.len()) as f32 + 3.0, 300 + i as u64);
        let at = 2 * RATE as usize;
        let span = noise::mix_at_snr(&mut track, at, speech, 12.0);
        let background = 20.0 * wav::rms(&track[at - RATE as usize..at - margin]).max(1e-9).log10();
        let level = 20.0 * wav::rms(&track[span.clone()]).max(1e-9).log10();
        free_clips.push((
            i,
            track[span.start - margin..span.end + margin].to_vec(),
            Some(Room { level_db: level, background_db: background }),
        ));
    }
    let per = clips.iter().filter(|c| c.0 == 0).count();
    println!(
        "\n## Commands understood by ear (issue 29): {per} commands per condition ({} × {}), cut as the detector would; television = babble over music",
        voices.iter().map(|v| v.0).collect::<Vec<_>>().join(" + "),
        noise::COMMANDS.len()
    );
    println!("| decoding | silence | TV 12 dB | TV 6 dB | free speech WER, silence | free speech WER, TV 12 dB | STT per command (median) | RTF |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, model, options) in steps {
        let Ok(t) = Transcriber::load(&model, options.clone()) else {
            println!("| {name} | model {} not loadable | | | | | | |", model.display());
            continue;
        };
        let mut heard = [0usize; 3];
        let mut by_voice = vec![[0usize; 3]; voices.len()];
        let mut times = Vec::new();
        let (mut busy, mut audio) = (0.0, 0.0);
        for (c, v, pcm, room, key) in &clips {
            let started = Instant::now();
            let text = t.transcribe_in(pcm, *room).unwrap();
            let took = started.elapsed().as_secs_f64();
            if *c == 0 {
                times.push(took);
            }
            busy += took;
            audio += secs(pcm.len());
            if strip_wake_word(&text, "Arthur").is_some_and(|r| r.to_lowercase().contains(key)) {
                heard[*c] += 1;
                by_voice[*v][*c] += 1;
            } else if std::env::var_os("VOICE_BENCH_VERBOSE").is_some() {
                eprintln!("missed ({name}, {}, condition {c}): {text:?} (key {key})", voices[*v].0);
            }
        }
        let (mut errors, mut words) = ([0usize; 2], [0usize; 2]);
        for (k, (i, pcm, room)) in free_clips.iter().enumerate() {
            let text = t.transcribe_in(pcm, *room).unwrap();
            let expected = arthur_voice::selftest::comparable_words(FREE[*i]);
            errors[k % 2] +=
                arthur_voice::selftest::word_errors(&expected, &arthur_voice::selftest::comparable_words(&text));
            words[k % 2] += expected.len();
        }
        let pct = |n: usize| format!("{n} of {per} ({:.0} %)", 100.0 * n as f64 / per as f64);
        let voice_detail = |c: usize| {
            if voices.len() < 2 {
                String::new()
            } else {
                format!(" [{}]", by_voice.iter().map(|h| h[c].to_string()).collect::<Vec<_>>().join(" + "))
            }
        };
        println!(
            "| {name} | {}{} | {}{} | {}{} | {:.1} % | {:.1} % | {:.3} s | {:.3} |",
            pct(heard[0]),
            voice_detail(0),
            pct(heard[1]),
            voice_detail(1),
            pct(heard[2]),
            voice_detail(2),
            100.0 * errors[0] as f64 / words[0].max(1) as f64,
            100.0 * errors[1] as f64 / words[1].max(1) as f64,
            median(times),
            busy / audio
        );
    }
}

/// The grammar as a judge, in French: `doctor --voix`'s ten commands and six everyday
/// basics (lists, timers, the time), after the wake word, in silence and under a
/// television at 12 and 6 dB, said by three voices: espeak-ng's own French (robotic:
/// whisper base hears much of it wrong) and MBROLA's fr3 voice (the French test voice,
/// `scripts/fetch-french-test-voice`) at 120 and 150 words a minute. Understood = the grammar
/// reads what was heard as it reads the sentence (same tool, same arguments). Each row is
/// one way of decoding; the judge rows run a second decoding only when their policy asks
/// (`arthur_agents::ears::hear`), and say how many ran.
async fn part_ears_fr(maker: &NoiseMaker) {
    use arthur_agents::ears::{hear, SecondReading};
    use arthur_agents::understand::{understand, Reading};
    let dir = arthur::config::default_model_dir().expect("data dir");
    let tz = chrono_tz::Europe::Paris;
    let now = chrono::Utc::now();
    let lexicon = arthur_french::Lexicon {
        projects: vec!["Atlas".into(), "jardin".into()],
        lists: vec!["courses".into()],
        ..Default::default()
    };
    let context = arthur_agents::ears::context_prompt("Arthur", &lexicon);
    let before = SttOptions {
        language: "fr".into(),
        initial_prompt: Some("Arthur".into()),
        adaptive_audio_ctx: true,
        ..Default::default()
    };
    const BASICS: [&str; 6] = [
        "Ajoute des pommes à la liste de courses.",
        "Minuteur de cinq minutes.",
        "Quelle heure est-il ?",
        "Retire le lait de la liste de courses.",
        "Rappelle-moi d'arroser le jardin samedi à dix heures.",
        "Je commence à travailler sur le jardin.",
    ];
    let sentences: Vec<&str> = arthur_voice::selftest::FRENCH
        .iter()
        .chain(BASICS.iter())
        .copied()
        .filter(|s| {
            let command = understand(s, now, tz, &lexicon).reading != Reading::NotCommand;
            if !command {
                eprintln!("left out of ears-fr: the grammar does not read {s:?} as a command");
            }
            command
        })
        .collect();
    let margin = RATE as usize * 3 / 10;
    // (condition, voice, samples, room, sentence)
    let mut clips: Vec<Clip> = Vec::new();
    let voices = ["espeak-ng fr 150", "mbrola fr3 120", "mbrola fr3 150"];
    for (v, voice) in voices.iter().enumerate() {
        let said: Vec<(Vec<f32>, &str)> = sentences
            .iter()
            .map(|s| {
                let text = format!("Arthur, {s}");
                let pcm = match v {
                    0 => maker.espeak(&text, "fr", 150, 50),
                    1 => mbrola_fr3(&text, 120),
                    _ => mbrola_fr3(&text, 150),
                };
                (pcm, *s)
            })
            .collect();
        if said.iter().any(|(pcm, _)| pcm.is_empty()) {
            eprintln!("ears-fr: no {voice} here (scripts/fetch-french-test-voice)");
            continue;
        }
        for (speech, s) in &said {
            let mut pcm = vec![0.0; margin];
            pcm.extend(speech);
            pcm.extend(vec![0.0; margin]);
            clips.push((0, v, pcm, None, s));
        }
        for (c, snr) in [(1usize, 12.0f32), (2, 6.0)] {
            let mut track = maker.make(Noise::Tv, (said.len() * 8 + 4) as f32, 61 + v as u64 * 7 + c as u64);
            for (i, (speech, s)) in said.iter().enumerate() {
                let at = 2 * RATE as usize + i * 8 * RATE as usize;
                let span = noise::mix_at_snr(&mut track, at, speech, snr);
                let background = 20.0 * wav::rms(&track[at - RATE as usize..at - margin]).max(1e-9).log10();
                let voiced = at + noise::first_voiced_sample(speech)..at + noise::last_voiced_sample(speech);
                let level = 20.0 * wav::rms(&track[voiced]).max(1e-9).log10();
                let room = Room { level_db: level, background_db: background };
                clips.push((c, v, track[span.start - margin..span.end + margin].to_vec(), Some(room), s));
            }
        }
    }
    // Free speech, what a favoured word must not distort: a note's text, questions to the
    // model (MBROLA fr3 at 150 wpm, in silence; no wake word). Written for this bench, none
    // holds a command word on purpose, several hold everyday words near them.
    const FREE_FR: [&str; 8] = [
        "Le plombier passera jeudi pour réparer la fuite sous l'évier.",
        "Quelle est la capitale de l'Australie et combien d'habitants compte-t-elle ?",
        "Penser à acheter de la farine, des œufs et une bougie pour dimanche.",
        "Peux-tu me conseiller un bon livre sur l'histoire de Rome ?",
        "Écris un petit poème sur les feuilles d'automne dans le parc.",
        "Comment faire une sauce tomate simple pour les pâtes ?",
        "La voiture a besoin de pneus neufs avant les vacances d'hiver.",
        "Raconte-moi une histoire drôle sur un chat et un violon.",
    ];
    let free_fr: Vec<(Vec<f32>, &str)> = FREE_FR
        .iter()
        .map(|t| {
            let mut pcm = vec![0.0; margin];
            pcm.extend(mbrola_fr3(t, 150));
            pcm.extend(vec![0.0; margin]);
            (pcm, *t)
        })
        .filter(|(pcm, _)| pcm.len() > 2 * margin)
        .collect();
    let per = clips.iter().filter(|c| c.0 == 0).count();
    println!(
        "\n## The grammar as judge (French: {} sentences × {}; whisper base fr)",
        sentences.len(),
        voices.join(" + ")
    );
    println!(
        "| decoding | silence | TV 12 dB | TV 6 dB | free speech WER (MBROLA fr3, {} sentences) | STT per command (median) | decodings per command |",
        free_fr.len()
    );
    println!("|---|---|---|---|---|---|---|");
    let understood = |heard: &str, expected: &str| {
        let want = understand(expected, now, tz, &lexicon).reading;
        let rest = strip_wake_word(heard, "Arthur").unwrap_or_default();
        want != Reading::NotCommand && understand(&rest, now, tz, &lexicon).reading == want
    };
    let strip = |h: &str| strip_wake_word(h, "Arthur").unwrap_or_else(|| h.to_string());
    // (name, options, first prompt, second prompt, policy)
    type Step<'a> = (&'a str, SttOptions, Option<&'a str>, Option<&'a str>, SecondReading);
    let mut steps: Vec<Step> = vec![
        ("before: greedy, prompt « Arthur »", before.clone(), Some("Arthur"), None, SecondReading::Never),
        ("context prompt (ears::context_prompt)", before.clone(), Some(context.as_str()), None, SecondReading::Never),
        (
            "context prompt, judge when unsure (then no prompt)",
            before.clone(),
            Some(context.as_str()),
            None,
            SecondReading::WhenUnsure,
        ),
        (
            "context prompt, judge unless sure (then no prompt)",
            before.clone(),
            Some(context.as_str()),
            None,
            SecondReading::UnlessSure,
        ),
        (
            "context prompt, judge unless sure (then « Arthur »)",
            before.clone(),
            Some(context.as_str()),
            Some("Arthur"),
            SecondReading::UnlessSure,
        ),
        (
            "context prompt + denoiser below 15 dB",
            SttOptions { denoise: Denoise::BelowSnrDb(15.0), ..before.clone() },
            Some(context.as_str()),
            None,
            SecondReading::Never,
        ),
        (
            "context prompt + beam search 5",
            SttOptions { beam_size: Some(5), ..before.clone() },
            Some(context.as_str()),
            None,
            SecondReading::Never,
        ),
    ];
    // The grammar's words favoured while decoding (`arthur_audio::favour`).
    let words = arthur_agents::ears::favoured_words("Arthur", &lexicon);
    let favour = |bonus: f32| SttOptions { favour: words.clone(), favour_bonus: bonus, ..before.clone() };
    // What the hands-free loop ships (`Tuning::room`): the row to read first.
    let shipped = arthur_voice::listen::EarsPolicy::MEASURED;
    steps.push((
        "the loop's default (EarsPolicy::MEASURED)",
        match shipped.favour {
            Some(bonus) => favour(bonus),
            None => before.clone(),
        },
        Some(if shipped.context_prompt { context.as_str() } else { "Arthur" }),
        Some("Arthur"),
        shipped.judge,
    ));
    for (name, bonus) in [
        ("favour the grammar's words, bonus 1", 1.0),
        ("favour the grammar's words, bonus 2", 2.0),
        ("favour the grammar's words, bonus 3", 3.0),
        ("favour the grammar's words, bonus 4", 4.0),
    ] {
        steps.push((name, favour(bonus), Some("Arthur"), None, SecondReading::Never));
    }
    steps.push((
        "favour the grammar's words, bonus 3 + beam search 5",
        SttOptions { beam_size: Some(5), ..favour(3.0) },
        Some("Arthur"),
        None,
        SecondReading::Never,
    ));
    if let Ok(only) = std::env::var("VOICE_BENCH_EARS_FR") {
        let keep: Vec<usize> = only.split(',').filter_map(|i| i.trim().parse().ok()).collect();
        steps = steps.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, s)| s).collect();
    }
    for (name, options, first, second, policy) in steps {
        let t = Transcriber::load(&dir.join("ggml-base.bin"), options).expect("base");
        let mut heard = [0usize; 3];
        let mut by_voice = vec![[0usize; 3]; voices.len()];
        let mut times = Vec::new();
        let mut decodings = 0;
        for (c, v, pcm, room, expected) in &clips {
            let started = Instant::now();
            let h = hear(
                |prompt| t.hypotheses(pcm, *room, &[prompt]).map(|mut h| h.pop().unwrap_or_default()),
                first,
                second,
                policy,
                strip,
                now,
                tz,
                &lexicon,
            )
            .unwrap();
            decodings += h.decodings;
            if *c == 0 {
                times.push(started.elapsed().as_secs_f64());
            }
            if understood(&h.text, expected) {
                heard[*c] += 1;
                by_voice[*v][*c] += 1;
            } else if std::env::var_os("VOICE_BENCH_VERBOSE").is_some() {
                eprintln!("not understood ({name}, {}, condition {c}): {:?} for {expected:?}", voices[*v], h.text);
            }
        }
        // Free speech is read as the loop reads a whole utterance: the first reading only.
        let (mut errors, mut words) = (0, 0);
        for (pcm, said) in &free_fr {
            let text = t.hypotheses(pcm, None, &[first]).unwrap().pop().unwrap_or_default();
            let expected = arthur_voice::selftest::comparable_words(said);
            let got = arthur_voice::selftest::comparable_words(&text);
            errors += arthur_voice::selftest::word_errors(&expected, &got);
            words += expected.len();
            if std::env::var_os("VOICE_BENCH_VERBOSE").is_some() && expected != got {
                eprintln!("free speech ({name}): {text:?} for {said:?}");
            }
        }
        let wer = if words == 0 { "—".to_owned() } else { format!("{:.1} %", 100.0 * errors as f64 / words as f64) };
        let pct = |n: usize| format!("{n} of {per} ({:.0} %)", 100.0 * n as f64 / per.max(1) as f64);
        let detail =
            |c: usize| format!(" [{}]", by_voice.iter().map(|h| h[c].to_string()).collect::<Vec<_>>().join(" + "));
        println!(
            "| {name} | {}{} | {}{} | {}{} | {wer} | {:.3} s | {:.2} |",
            pct(heard[0]),
            detail(0),
            pct(heard[1]),
            detail(1),
            pct(heard[2]),
            detail(2),
            median(times),
            decodings as f64 / clips.len().max(1) as f64
        );
    }
}

/// `text` said by MBROLA's French fr3 voice through espeak-ng at `wpm` (cached; empty when
/// the voice is not installed: `scripts/fetch-french-test-voice`). « Arthur » is respelt,
/// or espeak-ng reads it the English way.
fn mbrola_fr3(text: &str, wpm: u32) -> Vec<f32> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")));
    let Some(voice) = cache.map(|c| c.join("arthur/french-test-voice")).filter(|v| v.join("bin/mbrola").is_file())
    else {
        return Vec::new();
    };
    let said = text.replace("Arthur", "Artur");
    let path =
        std::env::temp_dir().join("arthur-voice-bench-noise").join(format!("mbrola-fr3-{wpm}-{:016x}.wav", fnv(&said)));
    if !path.is_file() {
        let raw = path.with_extension("raw.wav");
        let path_env = format!("{}:{}", voice.join("bin").display(), std::env::var("PATH").unwrap_or_default());
        let ok = std::process::Command::new("espeak-ng")
            .args(["-v", "mb-fr3", "-s", &wpm.to_string(), "-w"])
            .arg(&raw)
            .arg(&said)
            .env("ESPEAK_DATA_PATH", &voice)
            .env("PATH", path_env)
            .status()
            .is_ok_and(|s| s.success())
            && std::process::Command::new("sox")
                .arg(&raw)
                .args(["-r", "16000", "-c", "1", "-b", "16"])
                .arg(&path)
                .status()
                .is_ok_and(|s| s.success());
        let _ = std::fs::remove_file(&raw);
        if !ok {
            return Vec::new();
        }
    }
    wav::read_wav_16k_mono(&path).unwrap_or_default()
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// `base` quantized by `models/ggml_quantize.py` (cached next to the bench's noise).
fn quantized(base: &std::path::Path, kind: &str) -> std::path::PathBuf {
    let dir = base.parent().unwrap();
    let installed = dir.join(format!("ggml-base-{kind}.bin"));
    if installed.is_file() {
        return installed;
    }
    let out = std::env::temp_dir().join(format!("arthur-voice-bench-ggml-base-{kind}.bin"));
    if !out.is_file() {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/ggml_quantize.py");
        let venv = std::env::var_os("HOME")
            .map(|h| std::path::PathBuf::from(h).join(".cache/arthur/models-fetch/venv/bin/python"))
            .filter(|p| p.is_file());
        let python = venv.unwrap_or_else(|| "python3".into());
        let ok = std::process::Command::new(python).arg(script).arg(base).arg(&out).arg(kind).status();
        if !ok.is_ok_and(|s| s.success()) {
            eprintln!("could not quantize {} to {kind}", base.display());
        }
    }
    out
}

async fn part_rss(models: &Models, rss_start: u64, rss_loaded: u64) {
    let t = turns().await;
    let voice_loop = Variant::Room(silero()).voice_loop(&t.engine, models);
    let idle_secs = 10.0;
    let mut frames = arthur_voice::listen::replay(
        WavSource::from_samples(vec![0.0; 16_000 * idle_secs as usize], FRAME_SAMPLES),
        Some(Duration::ZERO),
    );
    let mut speaker = WavSpeaker::new();
    let cpu_before = cpu_secs();
    let wall = Instant::now();
    voice_loop.hands_free(&mut frames, &mut speaker, tokio_util::sync::CancellationToken::new(), |_| {}).await.unwrap();
    let idle_cpu = (cpu_secs() - cpu_before) / wall.elapsed().as_secs_f64();
    println!("\n## Memory and idle CPU");
    println!(
        "RSS: {} MiB at start, {} MiB with whisper base + Piper voice loaded, peak {} MiB",
        rss_start / 1024,
        rss_loaded / 1024,
        vm_kib("VmHWM:") / 1024
    );
    println!("idle CPU while listening to silence in real time: {:.1} % of one core", idle_cpu * 100.0);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // RUST_LOG shows why an answer was cut (which barge-in path, what was heard).
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .try_init();
    }
    let dir = arthur::config::default_model_dir().expect("data dir");
    let rss_start = vm_kib("VmRSS:");
    let whisper = Arc::new(
        Transcriber::load(
            &dir.join("ggml-base.bin"),
            SttOptions {
                language: "en".into(),
                initial_prompt: Some("Arthur".into()),
                adaptive_audio_ctx: true,
                ..Default::default()
            },
        )
        .expect("run models/fetch --offline"),
    );
    let voice: Arc<dyn Synthesizer> = Arc::new(
        PiperVoice::load(
            &dir.join("en_US-joe-medium.onnx"),
            &PiperOptions { onnxruntime: arthur::config::default_onnxruntime(), ..PiperOptions::default() },
        )
        .expect("the joe voice"),
    );
    voice.synthesize("Hello there.").unwrap();
    let rss_loaded = vm_kib("VmRSS:");
    let models = Models { whisper, voice };
    let cache = std::env::temp_dir().join("arthur-voice-bench-noise");
    let maker = NoiseMaker::new(&cache);
    println!("# Voice bench: whisper base (adaptive audio_ctx, 2 threads), Piper joe (2 threads), scripted model");
    if wants("vad") {
        part_vad(&maker, &models).await;
    }
    if wants("echo") {
        part_echo(&models).await;
    }
    if wants("latency") {
        part_latency(&models).await;
    }
    if wants("sure") {
        part_sure(&maker, &models).await;
    }
    if wants("cpu") {
        part_cpu(&maker, &models).await;
    }
    if wants("tv") {
        let minutes = if quick() { 1.5 } else { 4.0 };
        part_tv(&maker, &models, minutes, 30.0, &[20.0, 12.0, 6.0]).await;
    }
    // An hour of television, a command every two minutes (each followed by an answer and
    // its follow-up window): phantom commands per hour counted over a whole hour.
    if wants("tvhour") {
        part_tv(&maker, &models, if quick() { 6.0 } else { 60.0 }, 120.0, &[12.0]).await;
    }
    if wants("ears") {
        part_ears(&maker, &models).await;
    }
    if wants("ears-fr") {
        ears_fr::part(&maker).await;
    }
    if wants("ears-fr-29") {
        part_ears_fr(&maker).await;
    }
    if wants("rss") {
        part_rss(&models, rss_start, rss_loaded).await;
    }
}
