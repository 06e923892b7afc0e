//! `cargo bench -p arthur-audio --bench tts`: Piper synthesis of the same answers with the
//! same `joe` voice, piper-rs (this crate: our clause phonemizer, piece by piece as the
//! voice loop plays them) vs the Python `piper-tts`, at one and at two ONNX Runtime
//! threads, side by side in one run; and the time to the first audio of each answer
//! against synthesising the answer in one call (what streaming by piece buys).
//! Needs `models/fetch --offline`; the Python column needs `models/bench-setup`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use arthur_audio::piper::{PiperOptions, PiperVoice};
use arthur_audio::tts::{self, Synthesizer};

/// Three-sentence answers in the shape of Arthur's spoken reports (`compose_spoken`,
/// in English for the English voice).
const ANSWERS: &[&str] = &[
    "Reminder number one saved: call the bank, for tomorrow at nine. Nothing else was written. Anything else?",
    "You have three reminders today: the first one is to call the bank. The second one is overdue. \
     The third one is for tonight.",
    "Work session started on the garden project, at twenty past ten. It is the second one today. Good luck!",
    "Preference recorded: you prefer meetings in the morning. You now have twelve preferences. \
     The oldest one was kept.",
    "I could not write this note: the store refused it, because it was empty. Nothing was saved. \
     Say it again if you wish.",
    "This week, you worked eleven hours on the kitchen project. That is two more than last week. Well done.",
];

struct Row {
    synth_s: f64,
    first_s: f64,
    audio_s: f64,
    /// The whole answer in a single synthesis call (piper-rs only).
    one_call_s: f64,
}

fn piper_rs(voice: &PiperVoice) -> Vec<Row> {
    voice.synthesize("Hello there.").unwrap(); // warm-up, as on the Python side
    ANSWERS
        .iter()
        .map(|answer| {
            let start = Instant::now();
            let mut first: Option<f64> = None;
            let whole = tts::speak(voice, answer, |_| {
                first.get_or_insert(start.elapsed().as_secs_f64());
            })
            .unwrap();
            let synth_s = start.elapsed().as_secs_f64();
            let start = Instant::now();
            voice.synthesize(answer).unwrap();
            Row {
                synth_s,
                first_s: first.unwrap_or(0.0),
                audio_s: whole.duration_secs() as f64,
                one_call_s: start.elapsed().as_secs_f64(),
            }
        })
        .collect()
}

fn python(voice: &Path, dir: &Path, threads: usize) -> Option<Vec<Row>> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
        .join("arthur/bench");
    let python = cache.join("venv/bin/python");
    if !python.is_file() {
        return None;
    }
    let sentences = dir.join("answers.txt");
    std::fs::write(&sentences, ANSWERS.join("\n")).ok()?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/run_piper_tts.py");
    let out = Command::new(python)
        .arg(script)
        .arg(voice)
        .arg(&sentences)
        .args(["--threads", &threads.to_string()])
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("piper-tts failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let rows = v["items"]
        .as_array()?
        .iter()
        .map(|i| Row {
            synth_s: i["synth_s"].as_f64().unwrap_or(f64::NAN),
            first_s: i["first_audio_s"].as_f64().unwrap_or(f64::NAN),
            audio_s: i["audio_s"].as_f64().unwrap_or(f64::NAN),
            one_call_s: f64::NAN,
        })
        .collect();
    Some(rows)
}

fn main() {
    let models = common::model_dir();
    let voice_path = models.join("en_US-joe-medium.onnx");
    assert!(voice_path.is_file(), "run models/fetch --offline");
    let dir = tempfile::tempdir().unwrap();
    println!("TTS bench: Piper en_US-joe-medium, {} answers of three sentences", ANSWERS.len());
    println!(
        "{:<22} {:>8} {:>8} {:>7} {:>9} {:>10} {:>10}",
        "engine", "synth s", "audio s", "RTF", "first s", "one-call s", "first/one"
    );
    let summary = |name: &str, rows: &[Row]| {
        let synth: f64 = rows.iter().map(|r| r.synth_s).sum();
        let audio: f64 = rows.iter().map(|r| r.audio_s).sum();
        let first: f64 = rows.iter().map(|r| r.first_s).sum::<f64>() / rows.len() as f64;
        let one_call: f64 = rows.iter().map(|r| r.one_call_s).sum();
        let ratio: f64 = rows.iter().map(|r| r.first_s / r.one_call_s).sum::<f64>() / rows.len() as f64;
        println!(
            "{name:<22} {synth:>8.2} {audio:>8.1} {:>7.3} {first:>9.3} {one_call:>10.2} {ratio:>10.2}",
            synth / audio
        );
        synth
    };
    for threads in [1, 2] {
        let load = Instant::now();
        let voice = PiperVoice::load(&voice_path, &PiperOptions { threads, ..common::piper_options() }).expect("voice");
        let load_s = load.elapsed().as_secs_f64();
        let rs = summary(&format!("piper-rs {threads} thr"), &piper_rs(&voice));
        drop(voice);
        match python(&voice_path, dir.path(), threads) {
            Some(rows) => {
                let py = summary(&format!("piper-tts {threads} thr"), &rows);
                println!(
                    "  {threads} thread(s): piper-rs/piper-tts {:.2}× (goal ≤ 0.8×); piper-rs load {load_s:.2} s",
                    rs / py
                );
            }
            None => println!("piper-tts: unavailable (run models/bench-setup; errors above, if any)"),
        }
    }
    println!(
        "  first = time to the first piece of audio (mean); first/one = first ÷ the answer in one call (goal ≤ 0.3)"
    );
}
