//! The stand-alone voice commands with the real engines: `arthur say` (espeak-ng, sentence
//! by sentence) and `arthur transcribe` (whisper.cpp on a model from `models/fetch`), and
//! the round trip through both.

use std::path::PathBuf;
use std::process::{Command, Output};

fn model(name: &str) -> PathBuf {
    let dir = arthur::config::default_model_dir().expect("a data directory");
    let path = dir.join(name);
    assert!(path.is_file(), "{} is missing: run models/fetch --offline", path.display());
    path
}

fn arthur(home: &std::path::Path, envs: &[(&str, &std::ffi::OsStr)], args: &[&str]) -> Output {
    let mut c = crate::common::arthur_command();
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

/// `arthur doctor --voix` end to end on a recording of the ten sentences read one after the
/// other (English: espeak-ng French is not intelligible to whisper): every sentence is
/// heard, the word error rate and the stage times are printed, understanding is said to be
/// unmeasured in a language the parser does not know, and a piece of advice follows.
#[test]
fn the_voice_self_test_runs_on_a_recording_end_to_end() {
    let home = tempfile::tempdir().unwrap();
    // The installed models (whisper, Silero VAD, ONNX Runtime) where the child looks.
    let data = home.path().join("data").join("arthur");
    std::fs::create_dir_all(&data).unwrap();
    std::os::unix::fs::symlink(arthur::config::default_model_dir().unwrap(), data.join("models")).unwrap();
    let mut pcm = vec![0.0f32; 16_000];
    for (i, sentence) in arthur_voice::selftest::ENGLISH.iter().enumerate() {
        let path = home.path().join(format!("s{i}.wav"));
        let ok = Command::new("espeak-ng")
            .args(["-v", "en-us", "-s", "150", "-w", path.to_str().unwrap(), sentence])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        pcm.extend(arthur_audio::wav::read_wav_16k_mono(&path).unwrap());
        pcm.extend(vec![0.0; 16_000 * 2]);
    }
    let recording = home.path().join("ten.wav");
    arthur_audio::wav::write_wav(&recording, &pcm, 16_000).unwrap();
    let en = std::ffi::OsStr::new("en");
    let base = model("ggml-base.bin");
    let out = arthur(
        home.path(),
        &[("ARTHUR_STT_LANG", en), ("ARTHUR_WHISPER_MODEL", base.as_os_str())],
        &["doctor", "--voix", "--input", recording.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.matches("entendu : «").count(), 10, "every sentence was heard: {stdout}");
    assert!(!stdout.contains("(rien entendu)"), "{stdout}");
    for sentence in arthur_voice::selftest::ENGLISH {
        assert!(stdout.contains(&format!("« {sentence} »")), "the sentence is shown: {stdout}");
    }
    let wer_line = stdout.lines().find(|l| l.contains("taux d'erreur de mots")).expect(&stdout);
    let percent: f64 = wer_line.split(':').nth(1).unwrap().trim().split(' ').next().unwrap().parse().unwrap();
    assert!(percent < 35.0, "espeak-ng English through whisper base: {wer_line}");
    assert!(stdout.contains("commandes comprises : non mesuré"), "{stdout}");
    assert!(stdout.contains("temps (médiane) : fin de parole → phrase close"), "{stdout}");
    assert!(stdout.contains("transcription"), "{stdout}");
    assert!(stdout.contains("Conseil : "), "{stdout}");

    // French asks for the French sentences (shown to the user even though no French
    // recording exists here to read them).
    let fr = std::ffi::OsStr::new("fr");
    let silent = home.path().join("silence.wav");
    arthur_audio::wav::write_wav(&silent, &vec![0.0; 16_000 * 3], 16_000).unwrap();
    let out = arthur(
        home.path(),
        &[("ARTHUR_STT_LANG", fr), ("ARTHUR_WHISPER_MODEL", base.as_os_str())],
        &["doctor", "--voix", "--input", silent.to_str().unwrap()],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("« Rappelle-moi d'appeler la banque demain à neuf heures. »"), "{stdout}");
    assert_eq!(stdout.matches("(rien entendu)").count(), 10, "{stdout}");
    assert!(stdout.contains("commandes comprises : 0 sur 10"), "{stdout}");
    assert!(stdout.contains("Conseil : Je n'ai presque rien entendu"), "{stdout}");
}
