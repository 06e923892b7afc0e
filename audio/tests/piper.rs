//! Piper voices through piper-rs on ONNX Runtime loaded at run time: real synthesis with
//! the `joe` voice from `models/fetch --offline`, punctuation kept as pauses, sentence by
//! sentence, and clear errors for a voice that is not there.

use std::path::PathBuf;
use std::sync::OnceLock;

use arthur_audio::piper::PiperVoice;

use crate::common::{model_dir, piper_options};
use arthur_audio::tts::{self, Synthesizer, TtsError};
use arthur_audio::wav;

fn joe() -> &'static PiperVoice {
    static VOICE: OnceLock<PiperVoice> = OnceLock::new();
    VOICE.get_or_init(|| {
        let path = model_dir().join("en_US-joe-medium.onnx");
        assert!(path.is_file(), "{} is missing: run models/fetch --offline", path.display());
        PiperVoice::load(&path, &piper_options()).expect("the joe voice loads")
    })
}

#[test]
fn the_joe_voice_speaks_sentence_by_sentence() {
    let voice = joe();
    assert_eq!(voice.sample_rate(), 22_050);
    assert_eq!(voice.language(), "en-us");
    let mut pieces = Vec::new();
    let whole = tts::speak(voice, "Reminder saved. You have two meetings tomorrow! Anything else?", |p| {
        pieces.push(p.duration_secs())
    })
    .unwrap();
    assert_eq!(pieces.len(), 3, "{pieces:?}");
    assert!(pieces.iter().all(|s| *s > 0.4), "each sentence is real speech: {pieces:?}");
    assert_eq!(whole.rate, 22_050);
    assert!(whole.duration_secs() > 3.0);
    assert!(wav::rms(&whole.samples) > 0.03, "speech, not silence");
}

#[test]
fn punctuation_becomes_pauses() {
    let voice = joe();
    let phonemes = voice.phonemize("Hello, world. How are you?").unwrap();
    assert!(phonemes.contains(','), "{phonemes}");
    assert!(phonemes.contains('.'), "{phonemes}");
    assert!(phonemes.ends_with('?'), "{phonemes}");
    let run_on = voice.synthesize("one two three four five").unwrap();
    let paused = voice.synthesize("one, two, three, four, five.").unwrap();
    assert!(
        paused.duration_secs() > run_on.duration_secs() + 0.3,
        "commas are heard as pauses: {:.2} s vs {:.2} s",
        paused.duration_secs(),
        run_on.duration_secs()
    );
    assert!(voice.synthesize(" ... ").unwrap().samples.is_empty(), "nothing to say, no sound");
}

#[test]
fn a_missing_voice_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("fr_FR-nobody-medium.onnx");
    let err = PiperVoice::load(&missing, &piper_options()).unwrap_err();
    assert!(matches!(err, TtsError::Unavailable(_)));
    assert!(err.to_string().contains("fr_FR-nobody-medium.onnx"), "{err}");

    // The model without its .onnx.json beside it.
    let lonely: PathBuf = dir.path().join("en_US-lonely-medium.onnx");
    std::fs::write(&lonely, b"not a model").unwrap();
    let err = PiperVoice::load(&lonely, &piper_options()).unwrap_err();
    assert!(err.to_string().contains("en_US-lonely-medium.onnx.json"), "{err}");
}
