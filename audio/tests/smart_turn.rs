//! Smart Turn's input features against pipecat's own code (`_whisper_features.py` in the
//! pipecat-ai wheel): on a fixture computed by it (fast tier), and on speech through the
//! reference script at run time, with the model's probability (system tier).

use arthur_audio::smart_turn::{features, window, N_FRAMES, N_MELS};

/// The fixture's signal (`chirp()` in `data/smart_turn_reference.py`): 3 s of a rising
/// tone in a half-sine envelope, with a little LCG noise; computed in f64, kept in f32.
fn chirp() -> Vec<f32> {
    let mut state: u64 = 12345;
    (0..48_000)
        .map(|i| {
            state = (1_664_525 * state + 1_013_904_223) % (1 << 32);
            let noise = (state >> 8) as f64 / f64::from(1u32 << 24) - 0.5;
            let t = i as f64 / 16_000.0;
            let x = 0.3
                * (2.0 * std::f64::consts::PI * (200.0 + 400.0 * t) * t).sin()
                * (std::f64::consts::PI * t / 3.0).sin()
                + 0.05 * noise;
            x as f32
        })
        .collect()
}

fn fixture() -> (Vec<f32>, Vec<f32>) {
    let text = include_str!("data/smart_turn_features.txt");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let mut numbers = || -> Vec<f32> {
        lines.next().expect("a line of numbers").split_whitespace().map(|v| v.parse().expect("a number")).collect()
    };
    (numbers(), numbers())
}

#[test]
fn the_features_are_pipecats_on_its_own_fixture() {
    let f = features(&window(&chirp()));
    assert_eq!(f.len(), N_MELS * N_FRAMES);
    let (band_means, sampled) = fixture();
    assert_eq!(band_means.len(), N_MELS);
    for (m, expected) in band_means.iter().enumerate() {
        let mean = f[m * N_FRAMES..(m + 1) * N_FRAMES].iter().sum::<f32>() / N_FRAMES as f32;
        assert!((mean - expected).abs() < 2e-4, "band {m}: {mean} against {expected}");
    }
    let ours: Vec<f32> = f.iter().step_by(79).copied().collect();
    assert_eq!(ours.len(), sampled.len());
    let worst = ours.iter().zip(&sampled).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(worst < 1e-3, "largest difference {worst}");
}

#[test]
fn a_missing_model_is_a_clear_error() {
    let e = arthur_audio::smart_turn::SmartTurn::load(std::path::Path::new("/nonexistent/smart-turn.onnx"), None)
        .err()
        .unwrap();
    assert!(e.to_string().contains("models/fetch"), "{e}");
}

#[cfg(feature = "system-tests")]
mod with_the_model {
    use super::*;
    use arthur_audio::smart_turn::{SmartTurn, SMART_TURN_FILE};
    use std::path::PathBuf;

    /// The pipecat-ai wheel `models/fetch` cached.
    fn wheel() -> PathBuf {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .expect("HOME");
        cache.join("arthur/models-fetch/wheels/pipecat_ai-1.14.0-py3-none-any.whl")
    }

    /// A Python with numpy: `SMART_TURN_PYTHON` (one with onnxruntime too compares the
    /// probability), else the system's, else the venv `models/fetch --offline` made.
    fn python() -> PathBuf {
        let venv = wheel().parent().unwrap().parent().unwrap().join("venv/bin/python");
        let chosen = std::env::var_os("SMART_TURN_PYTHON").map(PathBuf::from);
        for py in chosen.into_iter().chain([PathBuf::from("python3"), venv]) {
            let ok = std::process::Command::new(&py)
                .args(["-c", "import numpy"])
                .stderr(std::process::Stdio::null())
                .status();
            if ok.is_ok_and(|s| s.success()) {
                return py;
            }
        }
        panic!("no Python with numpy (models/fetch --offline makes one)");
    }

    fn espeak(text: &str, dir: &std::path::Path) -> Vec<f32> {
        let path = dir.join("said.wav");
        let ok =
            std::process::Command::new("espeak-ng").args(["-v", "fr", "-s", "150", "-w"]).arg(&path).arg(text).status();
        assert!(ok.is_ok_and(|s| s.success()), "espeak-ng");
        arthur_audio::wav::read_wav_16k_mono(&path).unwrap()
    }

    /// On speech (espeak-ng, a sentence and its first half, each followed by the 200 ms of
    /// silence the loop judges at), the features are those pipecat computes, and the
    /// probability is pipecat's when its runtime can be imported here.
    #[test]
    fn on_speech_the_features_and_the_probability_are_pipecats() {
        let dir = tempfile::tempdir().unwrap();
        let model_dir = crate::common::model_dir();
        let mut model =
            SmartTurn::load(&model_dir.join(SMART_TURN_FILE), crate::common::piper_options().onnxruntime.as_deref())
                .expect("models/fetch installs Smart Turn");
        let said = espeak("Ajoute à la liste de courses du pain, du lait et des œufs.", dir.path());
        for audio in [said.clone(), said[..said.len() / 2].to_vec()] {
            let mut audio = audio;
            audio.extend(vec![0.0; 3_200]);
            let raw = dir.path().join("audio.f32");
            std::fs::write(&raw, audio.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
            let out = dir.path().join("features.f32");
            let reference = std::process::Command::new(python())
                .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/smart_turn_reference.py"))
                .arg(wheel())
                .arg(&raw)
                .arg(&out)
                .arg(model_dir.join(SMART_TURN_FILE))
                .output()
                .expect("the reference script runs");
            assert!(reference.status.success(), "{}", String::from_utf8_lossy(&reference.stderr));
            let theirs: Vec<f32> = std::fs::read(&out)
                .unwrap()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            let ours = features(&window(&audio));
            assert_eq!(ours.len(), theirs.len());
            let worst = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
            assert!(worst < 1e-3, "largest difference {worst}");
            let p = model.probability(&audio).unwrap();
            assert!((0.0..=1.0).contains(&p));
            let stdout = String::from_utf8_lossy(&reference.stdout);
            if let Ok(expected) = stdout.trim().parse::<f32>() {
                assert!((p - expected).abs() < 1e-3, "ours {p}, pipecat's {expected}");
                eprintln!("probability: ours {p}, pipecat's {expected}; features within {worst}");
            } else {
                eprintln!("onnxruntime is not importable here: the probability ({p}) is not compared");
            }
        }
    }
}
