//! `turn-end` (issue 41): answering as soon as the user has finished. Each step of the
//! issue is a row, measured in one run against the rows before it:
//!
//! - the time from the last voiced sample of a sure French command to the first sample of
//!   the answer, in real time (said by MBROLA fr3, and by Kokoro ff_siwis when
//!   `scripts/fetch-french-test-voice` installed it; whisper base in French as shipped;
//!   local first, no model called);
//! - false cuts: French commands said with 300 to 700 ms of silence where people hesitate
//!   (after « rappelle-moi », before the hour, between list items), replayed to the loop in
//!   audio time: a cut is a command run from an utterance closed before the sentence's end;
//! - the CPU the loop uses while listening to television babble (no wake word).
//!
//! The load average is printed beside the figures: on this 2-core machine whisper's
//! threads and other builds inflate latency and CPU.

use super::*;

use arthur_voice::listen::{EarsPolicy, TurnEnd};

/// One row: a step of the issue, and the tuning it runs with.
struct Step {
    name: &'static str,
    tuning: Tuning,
}

fn smart_turn() -> Option<TurnEnd> {
    let dir = arthur::config::default_model_dir()?;
    Some(TurnEnd::Meaning {
        model: arthur_audio::smart_turn::SmartTurn::model_in(&dir)?,
        onnxruntime: arthur::config::default_onnxruntime()?,
    })
}

/// The rows: the loop before issue 41, then each step added (the last row is the loop as
/// shipped). Decode once was already the loop's way (the pause's reading is kept when no
/// more speech came): its row takes it away, to show what it saves.
fn steps() -> Vec<Step> {
    let shipped = Tuning::room(silero());
    let before = Tuning { first_words_ready: false, ..shipped.clone() };
    let mut steps = vec![Step {
        name: "before: silences (the grammar's sure reading closes at the pause)",
        tuning: before.clone(),
    }];
    match smart_turn() {
        Some(meaning) => {
            let by_meaning = before.judging_turns(meaning.clone());
            steps.push(Step {
                name: "1 without decode once (the closed utterance decoded again)",
                tuning: Tuning { decode_once: false, ..by_meaning.clone() },
            });
            steps.push(Step {
                name: "1. end of turn by meaning (Smart Turn v3.2 + the grammar), 2. decode once",
                tuning: by_meaning,
            });
            steps.push(Step { name: "3. + the first words at once (shipped)", tuning: shipped.judging_turns(meaning) });
        }
        None => eprintln!("turn-end: Smart Turn is not installed (models/fetch --offline): only the row before"),
    }
    steps
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The French test voices installed: MBROLA fr3 always (when `scripts/fetch-french-test-voice`
/// ran), Kokoro when its script is there. Each says `text` with `|` marking a pause of
/// `pause_ms` (SSML breaks for MBROLA).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Voice {
    Mbrola,
    Kokoro,
}

impl Voice {
    fn installed() -> Vec<Voice> {
        let mut voices = Vec::new();
        if !mbrola_fr3("Artur.", 150).is_empty() {
            voices.push(Voice::Mbrola);
        }
        if !kokoro("Bonjour.").is_empty() {
            voices.push(Voice::Kokoro);
        }
        voices
    }

    fn name(self) -> &'static str {
        match self {
            Voice::Mbrola => "MBROLA fr3 150 wpm",
            Voice::Kokoro => "Kokoro ff_siwis",
        }
    }

    /// `text` said, with `pause_ms` of silence at each `|`: MBROLA through espeak-ng's SSML
    /// breaks (the sentence's intonation goes on around them); Kokoro, which has no breaks,
    /// says each part alone, the parts before a pause ending on « … » when they have no
    /// punctuation of their own (a hesitation's suspended tone), joined by the silence.
    fn say(self, text: &str, pause_ms: u32) -> Vec<f32> {
        match self {
            Voice::Mbrola if !text.contains('|') => mbrola_fr3(text, 150),
            Voice::Mbrola => {
                let ssml = format!("<speak>{}</speak>", text.replace('|', &format!("<break time=\"{pause_ms}ms\"/>")));
                mbrola_fr3_ssml(&ssml, 150)
            }
            Voice::Kokoro => {
                let parts: Vec<&str> = text.split('|').map(str::trim).collect();
                let mut out = Vec::new();
                for (i, part) in parts.iter().enumerate() {
                    let last = i + 1 == parts.len();
                    let said = if last || part.ends_with([',', '.', ':', '…']) {
                        kokoro(part)
                    } else {
                        kokoro(&format!("{part}…"))
                    };
                    if said.is_empty() {
                        return Vec::new();
                    }
                    let start = if i == 0 { 0 } else { noise::first_voiced_sample(&said).saturating_sub(320) };
                    let end = if last { said.len() } else { noise::last_voiced_sample(&said) };
                    out.extend_from_slice(&said[start..end.max(start)]);
                    if !last {
                        out.extend(vec![0.0; (RATE as usize * pause_ms as usize) / 1000]);
                    }
                }
                out
            }
        }
    }
}

/// `text` said by Kokoro-82M's French voice ff_siwis (`scripts/kokoro-say`, installed by
/// `scripts/fetch-french-test-voice`; cached), 16 kHz; empty when it is not installed.
fn kokoro(text: &str) -> Vec<f32> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kokoro-say");
    let dir = std::env::temp_dir().join("arthur-voice-bench-noise");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("kokoro-{:016x}.wav", fnv(text)));
    if !path.is_file() {
        let ok = std::process::Command::new(&script)
            .arg(text)
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return Vec::new();
        }
    }
    wav::read_wav_16k_mono(&path).unwrap_or_default()
}

/// `ssml` said by MBROLA fr3 (espeak-ng `-m`; cached like [`mbrola_fr3`]).
fn mbrola_fr3_ssml(ssml: &str, wpm: u32) -> Vec<f32> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")));
    let Some(voice) = cache.map(|c| c.join("arthur/french-test-voice")).filter(|v| v.join("bin/mbrola").is_file())
    else {
        return Vec::new();
    };
    let said = ssml.replace("Arthur", "Artur");
    let dir = std::env::temp_dir().join("arthur-voice-bench-noise");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("mbrola-fr3-ssml-{wpm}-{:016x}.wav", fnv(&said)));
    if !path.is_file() {
        let raw = path.with_extension("raw.wav");
        let path_env = format!("{}:{}", voice.join("bin").display(), std::env::var("PATH").unwrap_or_default());
        let ok = std::process::Command::new("espeak-ng")
            .args(["-m", "-v", "mb-fr3", "-s", &wpm.to_string(), "-w"])
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

/// Sure French commands (the grammar reads each whole), for the latency.
const SURE: [&str; 3] = [
    "Arthur, rappelle-moi demain à neuf heures d'appeler la banque.",
    "Arthur, note : acheter du pain.",
    "Arthur, mets un minuteur de dix minutes.",
];

/// French commands with pauses (`|`) where people hesitate: after « rappelle-moi », before
/// the hour, between list items.
const PAUSED: [&str; 12] = [
    "Arthur, rappelle-moi | d'appeler la banque demain à neuf heures.",
    "Arthur, rappelle-moi | de sortir les poubelles ce soir à vingt heures.",
    "Arthur, rappelle-moi | demain à dix heures de prendre mes médicaments.",
    "Arthur, rappelle-moi | jeudi à quatorze heures d'appeler le garagiste.",
    "Arthur, rappelle-moi demain à | neuf heures d'appeler la banque.",
    "Arthur, rappelle-moi d'appeler le dentiste jeudi | à dix heures.",
    "Arthur, rappelle-moi de sortir les poubelles ce soir | à vingt heures.",
    "Arthur, rappelle-moi vendredi | à quinze heures de rappeler Julie.",
    "Arthur, ajoute à la liste de courses du pain, | du lait, | et des œufs.",
    "Arthur, ajoute à la liste de courses des tomates, | des carottes, | et du fromage.",
    "Arthur, ajoute du beurre, | de la farine | et du sucre à la liste de courses.",
    "Arthur, ajoute à la liste de courses des pommes, | des poires | et des bananes.",
];

fn french_transcriber() -> Arc<Transcriber> {
    let dir = arthur::config::default_model_dir().expect("data dir");
    Arc::new(
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
    )
}

pub async fn part_turn_end(maker: &NoiseMaker, models: &Models) {
    let steps = steps();
    let voices = Voice::installed();
    if voices.is_empty() {
        println!("\n## End of turn (issue 41): no French test voice (scripts/fetch-french-test-voice)");
        return;
    }
    let french = french_transcriber();
    // VOICE_BENCH_TURN_END=latency,cuts,cpu runs some of the three.
    let only = std::env::var("VOICE_BENCH_TURN_END").unwrap_or_default();
    let runs = |what: &str| only.is_empty() || only.split(',').any(|w| w.trim() == what);
    if runs("latency") {
        latency(&steps, &voices, &french, models).await;
    }
    if runs("cuts") {
        false_cuts(&steps, &voices, &french).await;
    }
    if runs("cpu") {
        cpu(&steps, maker, models).await;
    }
}

/// Last voiced sample → first answer sample for sure commands, in real time.
async fn latency(steps: &[Step], voices: &[Voice], french: &Arc<Transcriber>, models: &Models) {
    let rounds = if quick() { 2 } else { 3 };
    println!(
        "\n## End of turn (issue 41): a sure French command, last voiced sample → first answer sample (real time; whisper base fr, favoured words; local first; {} sentences × {rounds} rounds)",
        SURE.len()
    );
    println!("| step | voice | heard | median | max | silence waited (median) | decoding at the pause / after the close (median) | turn (median) | first audio after the turn (median) | load |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for voice in voices {
        let said: Vec<Vec<f32>> = SURE.iter().map(|s| voice.say(s, 0)).collect();
        for step in steps {
            let t = turns_with(true).await;
            let tuning = Tuning { ears: EarsPolicy::MEASURED, ..step.tuning.clone() };
            let voice_loop = VoiceLoop::new(&t.engine, french.clone(), models.voice.clone(), Default::default(), true)
                .with_tuning(tuning);
            // As at the appliance's start: the models loaded and the fixed phrases made
            // before anyone speaks (one second of silence, not measured).
            run_in_room(&voice_loop, vec![0.0; RATE as usize], None, false, |_| {}).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            let load = load_average();
            let (mut felt, mut silence, mut turn, mut first) = (vec![], vec![], vec![], vec![]);
            let (mut in_pause, mut after_close) = (vec![], vec![]);
            let mut heard = 0;
            let mut total = 0;
            for _ in 0..rounds {
                for sentence in &said {
                    total += 1;
                    let mut input = vec![0.0f32; 8_000];
                    let last_voiced = input.len() + noise::last_voiced_sample(sentence);
                    input.extend(sentence);
                    input.extend(vec![0.0f32; RATE as usize * 5]);
                    let start = tokio::time::Instant::now();
                    let (mut frames, mut speaker) = noise::room(input, None, Some(start));
                    let enqueued = speaker.enqueued.clone();
                    let exchanges = voice_loop
                        .hands_free(&mut frames, &mut speaker, tokio_util::sync::CancellationToken::new(), |_| {})
                        .await
                        .unwrap();
                    let Some(e) = exchanges.iter().find(|e| e.command.is_some()) else {
                        eprintln!("turn-end ({}): not heard as a command: {exchanges:?}", step.name);
                        continue;
                    };
                    heard += 1;
                    let first_audio = enqueued.lock().unwrap()[1].0;
                    let spoken_end = start.into_std() + Duration::from_secs_f64(secs(last_voiced));
                    felt.push((first_audio - spoken_end).as_secs_f64());
                    if let Some(s) = &e.stages {
                        silence.push(s.silence_ms as f64);
                        let decoding = s.transcription_ms as f64;
                        if s.transcribed_in_pause {
                            in_pause.push(decoding);
                            after_close.push(0.0);
                        } else {
                            after_close.push(decoding);
                        }
                        turn.push(s.turn_ms as f64);
                        first.push(s.first_audio_ms as f64);
                    }
                }
            }
            let max = felt.iter().cloned().fold(f64::NAN, f64::max);
            println!(
                "| {} | {} | {heard} of {total} | {:.3} s | {max:.3} s | {:.0} ms | {:.0} ms / {:.0} ms | {:.0} ms | {:.0} ms | {load} |",
                step.name,
                voice.name(),
                median(felt),
                median(silence),
                median(in_pause),
                median(after_close),
                median(turn),
                median(first)
            );
        }
    }
}

/// Commands with hesitations, replayed in audio time: how many are cut before their end.
async fn false_cuts(steps: &[Step], voices: &[Voice], french: &Arc<Transcriber>) {
    let pauses: &[u32] = if quick() { &[300, 500, 700] } else { &[300, 400, 500, 600, 700] };
    println!(
        "\n## End of turn (issue 41): false cuts on {} French commands said with pauses of {pauses:?} ms where people hesitate (audio time)",
        PAUSED.len()
    );
    println!("| step | voice | cut before the end | of which at a pause of ≥ 500 ms | taken whole | not taken |");
    println!("|---|---|---|---|---|---|");
    let verbose = std::env::var("VOICE_BENCH_VERBOSE").is_ok_and(|v| v == "1");
    for voice in voices {
        for (i, step) in steps.iter().enumerate() {
            // Decode once and the first words change nothing of when an utterance closes:
            // a row that differs from an earlier one only by them is not run again.
            let closes_alike = |other: &Step| {
                let same = Tuning {
                    decode_once: other.tuning.decode_once,
                    first_words_ready: other.tuning.first_words_ready,
                    ..step.tuning.clone()
                };
                same == other.tuning
            };
            if let Some(earlier) = steps[..i].iter().find(|s| closes_alike(s)) {
                println!("| {} | {} | closes as « {} » (not run again) | | | |", step.name, voice.name(), earlier.name);
                continue;
            }
            let t = turns_with(true).await;
            let tuning = Tuning { ears: EarsPolicy::MEASURED, ..step.tuning.clone() };
            // What Arthur answers does not change where the utterances closed: a short
            // silence for each piece spares the synthesis.
            let voice_loop =
                VoiceLoop::new(&t.engine, french.clone(), Arc::new(Mute), Default::default(), true).with_tuning(tuning);
            let (mut cut, mut cut_long, mut whole, mut missed, mut total) = (0, 0, 0, 0, 0);
            for sentence in PAUSED {
                for &pause in pauses {
                    total += 1;
                    let said = voice.say(sentence, pause);
                    let mut input = vec![0.0f32; 8_000];
                    let last_voiced = secs(input.len() + noise::last_voiced_sample(&said));
                    input.extend(&said);
                    input.extend(vec![0.0f32; RATE as usize * 4]);
                    let (exchanges, _) = run_in_room(&voice_loop, input, None, false, |_| {}).await;
                    let commands: Vec<&Exchange> = exchanges.iter().filter(|e| e.command.is_some()).collect();
                    if commands.iter().any(|e| e.at_secs < last_voiced) {
                        cut += 1;
                        cut_long += usize::from(pause >= 500);
                        if verbose {
                            let heard: Vec<_> = commands.iter().map(|e| (e.at_secs, e.command.clone())).collect();
                            eprintln!(
                                "cut ({}, {pause} ms): {sentence} → {heard:?} (end at {last_voiced:.2} s)",
                                step.name
                            );
                        }
                    } else if commands.is_empty() {
                        missed += 1;
                    } else {
                        whole += 1;
                    }
                }
            }
            let pct = |n: usize| 100.0 * n as f64 / total.max(1) as f64;
            println!(
                "| {} | {} | {cut} of {total} ({:.1} %) | {cut_long} | {whole} | {missed} |",
                step.name,
                voice.name(),
                pct(cut)
            );
        }
    }
}

/// A voice that says each piece as 0.3 s of silence.
struct Mute;

impl Synthesizer for Mute {
    fn name(&self) -> &str {
        "mute"
    }

    fn synthesize(&self, _: &str) -> Result<arthur_audio::tts::Pcm, arthur_audio::tts::TtsError> {
        Ok(arthur_audio::tts::Pcm { samples: vec![0.0; RATE as usize * 3 / 10], rate: RATE })
    }
}

/// CPU used by the loop over television babble without the wake word.
async fn cpu(steps: &[Step], maker: &NoiseMaker, models: &Models) {
    let minutes = if quick() { 2.0 } else { 10.0 };
    println!("\n## End of turn (issue 41): CPU under babble ({minutes} min of babble, no wake word; the loop as fast as it goes; English whisper as in `cpu`)");
    println!("| step | CPU (cores, averaged over the audio's duration) | utterances transcribed | load before |");
    println!("|---|---|---|---|");
    let babble = maker.make(Noise::Babble, minutes * 60.0, 11);
    for step in steps {
        let t = turns().await;
        t.llm.set_fallback(Some(Reply::text(LONG_ANSWER)));
        let voice_loop =
            VoiceLoop::new(&t.engine, models.whisper.clone(), models.voice.clone(), Default::default(), true)
                .with_tuning(step.tuning.clone());
        let transcribed = Arc::new(Mutex::new(0usize));
        let n = transcribed.clone();
        let load = load_average();
        let before = cpu_secs();
        run_in_room(&voice_loop, babble.clone(), None, false, |e| {
            if *e == LoopEvent::Transcribing {
                *n.lock().unwrap() += 1;
            }
        })
        .await;
        let cpu = (cpu_secs() - before) / f64::from(minutes * 60.0);
        println!("| {} | {cpu:.3} | {} | {load} |", step.name, transcribed.lock().unwrap());
    }
}
