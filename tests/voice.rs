//! The stand-alone voice commands with the real engines: `arthur say` (espeak-ng, sentence
//! by sentence) and `arthur transcribe` (whisper.cpp on a model from `models/fetch`), and
//! the round trip through both.

use std::path::PathBuf;
use std::process::{Command, Output};

fn model(name: &str) -> PathBuf {
    let dir = arthur_audio::stt::model_dir().expect("a data directory");
    let path = dir.join(name);
    assert!(path.is_file(), "{} is missing: run models/fetch --offline", path.display());
    path
}

fn arthur(home: &std::path::Path, envs: &[(&str, &std::ffi::OsStr)], args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arthur"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .args(args);
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn say_then_transcribe_round_trips_through_our_tts_and_stt() {
    let home = tempfile::tempdir().unwrap();
    let wav = home.path().join("said.wav");
    let en = std::ffi::OsStr::new("en");
    let out = arthur(
        home.path(),
        &[("ARTHUR_STT_LANG", en)],
        &["say", "Remind me to call the bank tomorrow morning.", "-o", wav.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pcm = arthur_audio::wav::read_wav_16k_mono(&wav).unwrap();
    let secs = arthur_audio::wav::duration_secs(&pcm, 16_000);
    assert!(secs > 1.5, "{secs}");
    assert!(arthur_audio::wav::rms(&pcm) > 0.01);

    let base = model("ggml-base.bin");
    let out = arthur(
        home.path(),
        &[("ARTHUR_STT_LANG", en), ("ARTHUR_WHISPER_MODEL", base.as_os_str())],
        &["transcribe", wav.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap().to_lowercase();
    for word in ["remind", "call", "bank", "tomorrow"] {
        assert!(text.contains(word), "{word:?} not in {text:?}");
    }
}

#[test]
fn french_speech_is_written_sentence_by_sentence() {
    let home = tempfile::tempdir().unwrap();
    let wav = home.path().join("fr.wav");
    let out = arthur(
        home.path(),
        &[],
        &["say", "Bonjour.", "Rappel numéro un enregistré pour demain.", "-o", wav.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pcm = arthur_audio::wav::read_wav_16k_mono(&wav).unwrap();
    assert!(arthur_audio::wav::duration_secs(&pcm, 16_000) > 2.0);
}

#[test]
fn silence_transcribes_to_nothing_and_a_missing_model_is_explained() {
    let home = tempfile::tempdir().unwrap();
    let wav = home.path().join("silence.wav");
    arthur_audio::wav::write_wav(&wav, &vec![0.0; 16_000 * 3], 16_000).unwrap();
    let base = model("ggml-base.bin");
    let out =
        arthur(home.path(), &[("ARTHUR_WHISPER_MODEL", base.as_os_str())], &["transcribe", wav.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), "", "no hallucinated subtitles");

    let out = arthur(home.path(), &[], &["transcribe", wav.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("models/fetch"), "{}", String::from_utf8_lossy(&out.stderr));

    let bad = home.path().join("not.wav");
    std::fs::write(&bad, b"not a wav").unwrap();
    let out =
        arthur(home.path(), &[("ARTHUR_WHISPER_MODEL", base.as_os_str())], &["transcribe", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("illisible"), "{}", String::from_utf8_lossy(&out.stderr));
}
