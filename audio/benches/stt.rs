//! `cargo bench -p arthur-audio --bench stt`: transcription time and word error rate of the
//! same 30 synthetic English commands with whisper-rs (this crate) and faster-whisper
//! (Python), same base weights, 2 threads, greedy, side by side in one run; whisper-rs also
//! with the levers of issue 29 (quantized weights made by `models/ggml_quantize.py`, flash
//! attention, a smaller encoder context), each alone and together, and each one's ratio to
//! faster-whisper int8 (goal ≤ 0.6×).
//! Needs `models/fetch --offline`; the faster-whisper column needs `models/bench-setup`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use arthur_audio::stt::{SttOptions, Transcriber};
use arthur_audio::wav;
use arthur_audio::wer::{words, Tally};

const COMMANDS_TXT: &str = include_str!("../tests/data/commands_en.txt");

fn wer(reference: &[&str], hypotheses: &[String]) -> f64 {
    let mut tally = Tally::default();
    for (r, h) in reference.iter().zip(hypotheses) {
        tally.add(&words(r), &words(h));
    }
    100.0 * tally.rate()
}

fn corpus(dir: &Path, commands: &[&str]) -> (Vec<Vec<f32>>, f64) {
    std::fs::write(dir.join("commands.txt"), commands.join("\n")).unwrap();
    let mut clips = Vec::new();
    let mut seconds = 0.0;
    for (i, text) in commands.iter().enumerate() {
        let raw = dir.join(format!("{i}-raw.wav"));
        let out = dir.join(format!("{i}.wav"));
        assert!(Command::new("espeak-ng").args(["-v", "en", "-w"]).arg(&raw).arg(text).status().unwrap().success());
        assert!(Command::new("sox")
            .arg(&raw)
            .args(["-r", "16000", "-c", "1", "-b", "16"])
            .arg(&out)
            .status()
            .unwrap()
            .success());
        let pcm = wav::read_wav_16k_mono(&out).unwrap();
        seconds += wav::duration_secs(&pcm, 16_000);
        clips.push(pcm);
    }
    (clips, seconds)
}

fn whisper_rs(model: &Path, clips: &[Vec<f32>], options: SttOptions) -> (f64, Vec<String>) {
    let t = Transcriber::load(model, options).expect("model");
    let start = Instant::now();
    let texts = clips.iter().map(|c| t.transcribe(c).unwrap()).collect();
    (start.elapsed().as_secs_f64(), texts)
}

/// `base` quantized by `models/ggml_quantize.py`: the installed copy (`models/fetch`), else
/// one made in the temporary directory.
fn quantized(base: &Path, kind: &str) -> Option<PathBuf> {
    let installed = base.with_file_name(format!("ggml-base-{kind}.bin"));
    if installed.is_file() {
        return Some(installed);
    }
    let out = std::env::temp_dir().join(format!("arthur-stt-bench-ggml-base-{kind}.bin"));
    if !out.is_file() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/ggml_quantize.py");
        let python = std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".cache/arthur/models-fetch/venv/bin/python"))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| "python3".into());
        let ok = Command::new(python).arg(script).arg(base).arg(&out).arg(kind).status().ok()?.success();
        if !ok {
            return None;
        }
    }
    Some(out)
}

fn faster_whisper(corpus: &Path, compute: &str, beam: u32) -> Option<(f64, Vec<String>)> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?
        .join("arthur/bench");
    let python = cache.join("venv/bin/python");
    let model = cache.join("ct2-base");
    if !python.is_file() || !model.join("model.bin").is_file() {
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/run_faster_whisper.py");
    let out = Command::new(python)
        .arg(script)
        .arg(corpus)
        .arg(&model)
        .arg(compute)
        .arg("2")
        .arg(beam.to_string())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("faster-whisper failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let secs = text.lines().find_map(|l| l.strip_prefix("SECONDS\t"))?.parse().ok()?;
    let texts = text.lines().filter_map(|l| l.strip_prefix("TEXT\t")).map(str::to_string).collect();
    Some((secs, texts))
}

fn main() {
    let commands: Vec<&str> = COMMANDS_TXT.lines().filter(|l| !l.trim().is_empty()).collect();
    let dir = tempfile::tempdir().unwrap();
    let (clips, audio_secs) = corpus(dir.path(), &commands);
    let models = common::model_dir();
    let base = models.join("ggml-base.bin");
    assert!(base.is_file(), "run models/fetch --offline");
    println!(
        "STT bench: {} espeak-ng English commands, {audio_secs:.1} s of audio, base weights, 2 threads, greedy unless said",
        clips.len()
    );
    println!("{:<40} {:>10} {:>8} {:>8}", "engine", "seconds", "RTF", "WER %");
    let row = |name: &str, secs: f64, texts: &[String]| {
        println!("{name:<40} {secs:>10.2} {:>8.3} {:>8.1}", secs / audio_secs, wer(&commands, texts));
        secs
    };
    let english = SttOptions { language: "en".into(), threads: 2, ..SttOptions::default() };
    let adaptive = SttOptions { adaptive_audio_ctx: true, ..english.clone() };
    let fitted = SttOptions { audio_ctx_floor: 200, ..adaptive.clone() };
    let q8 = quantized(&base, "q8_0");
    let q5 = quantized(&base, "q5_0");
    let mut rows: Vec<(String, PathBuf, SttOptions)> = vec![
        ("whisper-rs (whisper.cpp), full window".into(), base.clone(), english.clone()),
        ("whisper-rs, adaptive audio_ctx (≥ 500)".into(), base.clone(), adaptive.clone()),
        ("  + flash attention".into(), base.clone(), SttOptions { flash_attn: true, ..adaptive.clone() }),
        ("  + audio_ctx fitted (≥ 200)".into(), base.clone(), fitted.clone()),
    ];
    for (kind, path) in [("q8_0", &q8), ("q5_0", &q5)] {
        match path {
            Some(p) => {
                rows.push((format!("  + {kind} weights"), p.clone(), adaptive.clone()));
                rows.push((
                    format!("  + {kind} + flash attention"),
                    p.clone(),
                    SttOptions { flash_attn: true, ..adaptive.clone() },
                ));
                rows.push((
                    format!("  + {kind} + flash attention + fitted"),
                    p.clone(),
                    SttOptions { flash_attn: true, ..fitted.clone() },
                ));
            }
            None => println!("{kind}: could not be made (models/ggml_quantize.py failed)"),
        }
    }
    // One run, side by side: faster-whisper first, then every whisper-rs row.
    // STT_BENCH_FW=int8 leaves out faster-whisper float32 (the ratio's reference is int8).
    let computes = std::env::var("STT_BENCH_FW").unwrap_or_else(|_| "int8,float32".into());
    let fw: Vec<(&str, Option<Timed>)> = ["int8", "float32"]
        .into_iter()
        .filter(|c| computes.split(',').any(|w| w == *c))
        .map(|c| (c, faster_whisper(dir.path(), c, 1)))
        .collect();
    let int8 = fw.first().and_then(|(_, r)| r.as_ref().map(|r| r.0));
    // Beam search 5 (`ARTHUR_STT_BEAM=5`, not the default) against faster-whisper int8 at
    // the same beam.
    rows.push((
        "whisper-rs, adaptive + beam search 5".into(),
        base.clone(),
        SttOptions { beam_size: Some(5), ..adaptive.clone() },
    ));
    let int8_beam = fw.first().and_then(|_| faster_whisper(dir.path(), "int8", 5));
    for (name, model, options) in rows {
        let beam = options.beam_size.is_some();
        let (s, t) = whisper_rs(&model, &clips, options);
        row(&name, s, &t);
        let (reference, label) = if beam {
            (int8_beam.as_ref().map(|r| r.0), "faster-whisper int8, beam 5")
        } else {
            (int8, "faster-whisper int8")
        };
        if let Some(fw) = reference {
            println!("{:<40} {:>10} ratio to {label}: {:.2}× (goal ≤ 0.6×)", "", "", s / fw);
        }
    }
    if let Some((s, t)) = &int8_beam {
        row("faster-whisper int8, beam search 5", *s, t);
    }
    for (compute, result) in fw {
        match result {
            Some((s, t)) => {
                row(&format!("faster-whisper {compute}"), s, &t);
            }
            None => println!("faster-whisper {compute}: unavailable (run models/bench-setup; errors above, if any)"),
        }
    }
}

/// A run's seconds and its transcripts.
type Timed = (f64, Vec<String>);
