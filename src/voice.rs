//! The voice commands that stand alone: `arthur transcribe FILE.wav` (whisper, through the
//! VAD-free path: the whole file) and `arthur say TEXT -o FILE.wav` (sentence by sentence).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use arthur_audio::stt::{SttOptions, Transcriber};
use arthur_audio::tts::{self, EspeakNg};

use crate::config::Settings;

/// The whisper model: `ARTHUR_WHISPER_MODEL`, else the one `models/fetch` installed.
pub fn whisper_model(settings: &Settings) -> anyhow::Result<PathBuf> {
    if let Some(path) = &settings.voice.whisper_model {
        if !path.is_file() {
            bail!("ARTHUR_WHISPER_MODEL points to {}, which is not a file", path.display());
        }
        return Ok(path.clone());
    }
    arthur_audio::stt::default_model_path()
        .filter(|p| p.is_file())
        .context("no whisper model found: run models/fetch (or set ARTHUR_WHISPER_MODEL)")
}

/// The user's vocabulary, given to whisper as its initial prompt: the wake word and the
/// project names, which it would otherwise misspell.
pub async fn vocabulary(app: &crate::app::App) -> String {
    let projects = app
        .ctx
        .store
        .list_projets()
        .await
        .map(|p| p.into_iter().map(|p| p.nom).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut words = vec!["Arthur".to_string()];
    words.extend(projects);
    words.join(", ")
}

pub fn transcribe(settings: &Settings, wav: &Path, threads: Option<u32>) -> anyhow::Result<String> {
    let model = whisper_model(settings)?;
    let pcm = arthur_audio::wav::read_wav_16k_mono(wav).with_context(|| format!("reading {}", wav.display()))?;
    let options = SttOptions {
        language: settings.voice.stt_lang.clone(),
        threads: threads.unwrap_or(2),
        adaptive_audio_ctx: true,
        ..SttOptions::default()
    };
    let transcriber = Transcriber::load(&model, options).with_context(|| format!("loading {}", model.display()))?;
    transcriber.transcribe(&pcm).context("transcribing")
}

pub fn say(settings: &Settings, text: &str, out: &Path) -> anyhow::Result<f32> {
    if settings.voice.piper_voice.is_some() {
        tracing::warn!("Piper voices are not supported yet: speaking with espeak-ng");
    }
    let voice = if settings.voice.stt_lang.starts_with("en") { "en" } else { "fr" };
    let synth = EspeakNg::new(voice);
    let pcm = tts::speak(&synth, text, |_| {}).context("synthesising speech")?;
    if pcm.samples.is_empty() {
        bail!("nothing to say");
    }
    arthur_audio::wav::write_wav(out, &pcm.samples, pcm.rate).with_context(|| format!("writing {}", out.display()))?;
    Ok(pcm.duration_secs())
}
