//! Piper voices through piper-rs: a VITS model run by ONNX Runtime (loaded at run time
//! from `libonnxruntime.so`, never downloaded at build time) on phonemes from espeak-ng.
//!
//! We phonemize ourselves, clause by clause: espeak-rs drops punctuation, and without it
//! Piper runs the words together with no pauses. Each clause's phonemes get their
//! punctuation back before the model sees them.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, OnceLock};

use std::time::Instant;

use crate::tts::{Pcm, Synthesizer, TtsError};

/// File name of ONNX Runtime in Arthur's model directory (`models/fetch` puts it there).
pub const ONNXRUNTIME_FILE: &str = "libonnxruntime.so";

/// How a Piper voice runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiperOptions {
    /// `libonnxruntime.so`, as the binary's configuration resolved it; `None`: the runtime
    /// an earlier [`init_onnxruntime`] loaded (this crate never looks for it itself).
    pub onnxruntime: Option<PathBuf>,
    /// ONNX Runtime threads for one synthesis: two made synthesis 1.45× faster than one on
    /// the 2-core machines (`cargo bench -p arthur-audio --bench tts`).
    pub threads: usize,
}

impl Default for PiperOptions {
    fn default() -> Self {
        Self { onnxruntime: None, threads: 2 }
    }
}

/// A loaded Piper voice.
pub struct PiperVoice {
    piper: Mutex<piper_rs::Piper>,
    espeak_voice: String,
    sample_rate: u32,
    name: String,
}

impl std::fmt::Debug for PiperVoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiperVoice").field("name", &self.name).field("espeak_voice", &self.espeak_voice).finish()
    }
}

impl PiperVoice {
    /// Loads `model` (`VOICE.onnx`, with `VOICE.onnx.json` beside it).
    pub fn load(model: &Path, options: &PiperOptions) -> Result<Self, TtsError> {
        let started = Instant::now();
        let config_path = PathBuf::from(format!("{}.json", model.display()));
        if !model.is_file() {
            return Err(TtsError::Unavailable(format!("Piper voice not found: {}", model.display())));
        }
        let config_text = std::fs::read_to_string(&config_path)
            .map_err(|e| TtsError::Unavailable(format!("Piper voice config {}: {e}", config_path.display())))?;
        let config: piper_rs::ModelConfig = serde_json::from_str(&config_text)
            .map_err(|e| TtsError::Unavailable(format!("Piper voice config {}: {e}", config_path.display())))?;
        warn_if_espeak_data_unset();
        init_onnxruntime(options.onnxruntime.as_deref())?;
        let session = ort::session::Session::builder()
            .map_err(|e| TtsError::Unavailable(format!("ONNX Runtime: {e}")))?
            .with_intra_threads(options.threads.max(1))
            .map_err(|e| TtsError::Unavailable(format!("ONNX Runtime threads: {e}")))?
            .commit_from_file(model)
            .map_err(|e| TtsError::Unavailable(format!("loading {}: {e}", model.display())))?;
        let espeak_voice = config.espeak.voice.clone();
        let sample_rate = config.audio.sample_rate;
        let name = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "piper".into());
        tracing::info!(voice = %name, espeak = %espeak_voice, sample_rate, load_ms = started.elapsed().as_millis() as u64, "Piper voice loaded");
        Ok(Self { piper: Mutex::new(piper_rs::Piper::from_session(session, config)), espeak_voice, sample_rate, name })
    }

    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// The espeak-ng language the voice was trained with ("fr", "en-us", …).
    pub fn language(&self) -> &str {
        &self.espeak_voice
    }

    /// Phonemes of `text`, clause by clause, with the punctuation Piper pauses on.
    pub fn phonemize(&self, text: &str) -> Result<String, TtsError> {
        // espeak-ng is one global state (the voice set, then the text read): one caller
        // at a time, whichever voice asks.
        static ESPEAK: Mutex<()> = Mutex::new(());
        let _espeak = ESPEAK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut out = String::new();
        for (clause, punct) in clauses(text) {
            let phonemes = espeak_rs::text_to_phonemes(&clause, &self.espeak_voice, None)
                .map_err(|e| TtsError::Failed(format!("phonemes: {e}")))?
                .join(" ");
            let phonemes = phonemes.trim().trim_end_matches(['.', ',', '?', '!', ';', ':']);
            if phonemes.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(phonemes);
            if let Some(p) = punct {
                out.push(p);
            }
        }
        Ok(out)
    }
}

impl Synthesizer for PiperVoice {
    fn name(&self) -> &str {
        &self.name
    }

    fn synthesize(&self, sentence: &str) -> Result<Pcm, TtsError> {
        let phonemes = self.phonemize(sentence)?;
        if phonemes.is_empty() {
            return Ok(Pcm { samples: Vec::new(), rate: self.sample_rate });
        }
        let mut piper = self.piper.lock().map_err(|_| TtsError::Failed("Piper voice lock poisoned".into()))?;
        let (samples, rate) = piper
            .create(&phonemes, true, None, None, None, None)
            .map_err(|e| TtsError::Failed(format!("Piper: {e}")))?;
        Ok(Pcm { samples, rate })
    }
}

/// Splits text at clause punctuation, keeping the mark that ended each clause (folded to
/// the marks Piper knows).
fn clauses(text: &str) -> Vec<(String, Option<char>)> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        let mark = match c {
            '.' | '…' => Some('.'),
            ',' => Some(','),
            ';' => Some(';'),
            ':' => Some(':'),
            '!' => Some('!'),
            '?' => Some('?'),
            _ => None,
        };
        match mark {
            Some(m) => {
                if current.chars().any(char::is_alphanumeric) {
                    out.push((std::mem::take(&mut current), Some(m)));
                } else {
                    current.clear();
                }
            }
            None => current.push(c),
        }
    }
    if current.chars().any(char::is_alphanumeric) {
        out.push((current, None));
    }
    out
}

/// ONNX Runtime in a model directory (`models/fetch` installs it there), if it is there.
pub fn onnxruntime_in(model_dir: &Path) -> Option<PathBuf> {
    Some(model_dir.join(ONNXRUNTIME_FILE)).filter(|p| p.is_file())
}

/// Loads ONNX Runtime from `path`, once per process (Piper and Silero VAD share it). With
/// `None`, succeeds only if an earlier call loaded it: the path is configuration, which
/// the binary resolves (`ORT_DYLIB_PATH`, the model directory), not this crate.
pub fn init_onnxruntime(path: Option<&Path>) -> Result<(), TtsError> {
    static INIT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let Some(path) = path else {
        return match INIT.get() {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(TtsError::Unavailable(e.clone())),
            None => Err(TtsError::Unavailable(
                "ONNX Runtime not found (run models/fetch, or set ORT_DYLIB_PATH)".to_string(),
            )),
        };
    };
    let result = INIT.get_or_init(|| {
        if !path.is_file() {
            return Err(format!("ONNX Runtime not found at {}", path.display()));
        }
        let builder = ort::init_from(path).map_err(|e| format!("loading {}: {e}", path.display()))?;
        builder.commit();
        tracing::info!(path = %path.display(), "ONNX Runtime loaded");
        Ok(path.to_path_buf())
    });
    result.as_ref().map(|_| ()).map_err(|e| TtsError::Unavailable(e.clone()))
}

/// The variable espeak-ng (inside piper-rs) reads for its data directory.
pub const ESPEAK_DATA_VAR: &str = "PIPER_ESPEAKNG_DATA_DIRECTORY";

/// The system's `espeak-ng-data` parent directory, for [`ESPEAK_DATA_VAR`]: without it the
/// library falls back to a copy inside the build directory that only exists on the machine
/// that compiled it. Only looks: the binary sets the variable before any thread starts
/// (`std::env::set_var` is unsound once other threads may read the environment).
pub fn espeak_data_dir() -> Option<PathBuf> {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/share",
        "/usr/local/share",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|d| d.join("espeak-ng-data").join("phontab").is_file())
}

fn warn_if_espeak_data_unset() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os(ESPEAK_DATA_VAR).is_none() {
            tracing::warn!(
                "{ESPEAK_DATA_VAR} is not set: espeak-ng uses its build-time data (Debian: apt-get install espeak-ng-data)"
            );
        }
    });
}

/// Finds an installed Piper voice for `lang` ("fr", "en") in `model_dir` (voice files are
/// named after their locale: `fr_FR-siwis-medium.onnx`).
pub fn default_voice_path(model_dir: &Path, lang: &str) -> Option<PathBuf> {
    let mut voices: Vec<PathBuf> = std::fs::read_dir(model_dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "onnx") && p.with_extension("onnx.json").is_file())
        .collect();
    voices.sort();
    voices.into_iter().find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(lang)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_keep_their_punctuation() {
        assert_eq!(
            clauses("Bonjour, Paul. Rappel enregistré ! Autre chose ? fin"),
            [
                ("Bonjour".to_string(), Some(',')),
                (" Paul".to_string(), Some('.')),
                (" Rappel enregistré ".to_string(), Some('!')),
                (" Autre chose ".to_string(), Some('?')),
                (" fin".to_string(), None),
            ]
        );
        assert!(clauses(" ... ").is_empty());
    }
}
