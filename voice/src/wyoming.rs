//! Arthur's speech and turn as Home Assistant's voice protocol serves them: whisper, the
//! Piper voices and the honest turn behind `arthur_wyoming`'s traits. Starting the server
//! and the satellites' loops, and copying their state to `/healthz`, is wiring: the
//! binary's (`arthur::wyoming`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arthur_agents::turn::{IncidentKind, TurnEngine};
use arthur_audio::piper::{PiperOptions, PiperVoice};
use arthur_audio::stt::Transcriber;
use arthur_audio::tts::{Pcm, Synthesizer};
use arthur_wyoming::{Answer, Asr, AsrModel, Handler, ServiceError, Tts, Voice};

/// whisper, in the configured language.
pub struct WhisperAsr {
    pub transcriber: Arc<Transcriber>,
    pub model: String,
    pub language: String,
    /// In French, each transcript favours the grammar's words and the user's names (read
    /// from this engine's store at each request) by this bonus, as the hands-free loop does
    /// (`listen::EarsPolicy::favour`). Home Assistant sends what follows its wake word: a
    /// command, most of the time.
    pub favour: Option<(Arc<TurnEngine>, f32)>,
}

impl WhisperAsr {
    /// The words to favour for one request, if any (none when the store cannot say).
    async fn vocabulary(&self) -> Option<arthur_audio::stt::Vocabulary> {
        let (engine, bonus) = self.favour.as_ref().filter(|_| primary(&self.language) == "fr")?;
        let lexicon = engine
            .lexicon()
            .await
            .inspect_err(|e| tracing::warn!(error = %e, "the user's names are unknown: transcribed without them"))
            .ok()?;
        let words = arthur_agents::ears::favoured_words("", &lexicon);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        Some(self.transcriber.vocabulary(&words, *bonus))
    }
}

/// "fr-FR", "fr_FR" and "fr" are one language here.
fn primary(language: &str) -> String {
    language.split(['-', '_']).next().unwrap_or_default().to_ascii_lowercase()
}

#[async_trait::async_trait]
impl Asr for WhisperAsr {
    fn describe(&self) -> AsrModel {
        AsrModel {
            name: self.model.clone(),
            description: format!("whisper.cpp {}", self.model),
            languages: vec![self.language.clone()],
        }
    }

    async fn transcribe(&self, pcm: Vec<f32>, language: Option<&str>) -> Result<String, ServiceError> {
        if let Some(asked) = language.filter(|l| primary(l) != primary(&self.language)) {
            return Err(ServiceError::Refused(format!(
                "language {asked:?} asked; this whisper runs in {:?} (ARTHUR_STT_LANG)",
                self.language
            )));
        }
        let transcriber = self.transcriber.clone();
        let vocabulary = self.vocabulary().await;
        tokio::task::spawn_blocking(move || match vocabulary {
            Some(v) => {
                let prompt = transcriber.options().initial_prompt.clone();
                transcriber
                    .hypotheses_favouring(&pcm, None, &[prompt.as_deref()], Some(&v))
                    .map(|mut h| h.pop().unwrap_or_default())
            }
            None => transcriber.transcribe(&pcm),
        })
        .await
        .map_err(|e| ServiceError::Failed(format!("transcription task: {e}")))?
        .map_err(|e| ServiceError::Failed(e.to_string()))
    }
}

/// Where the voices are, as configured (`ARTHUR_STT_LANG`, the model directory,
/// `ARTHUR_PIPER_VOICE`, ONNX Runtime).
#[derive(Debug, Clone, Default)]
pub struct InstalledVoices {
    pub stt_lang: String,
    pub model_dir: Option<PathBuf>,
    pub piper_voice: Option<PathBuf>,
    pub onnxruntime: Option<PathBuf>,
}

/// The Piper voices installed in the model directory (the configured one first, loaded);
/// another is loaded the first time it is asked for.
pub struct PiperTts {
    voices: Vec<(Voice, Option<PathBuf>)>,
    loaded: Mutex<std::collections::HashMap<String, Arc<dyn Synthesizer>>>,
    onnxruntime: Option<PathBuf>,
}

/// A Piper voice's name, languages and rate from its `.onnx.json`.
fn piper_voice_info(model: &std::path::Path) -> Option<Voice> {
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.json", model.display())).ok()?).ok()?;
    let name = model.file_stem()?.to_string_lossy().into_owned();
    let language = config["language"]["code"].as_str().or(config["espeak"]["voice"].as_str()).unwrap_or("").to_string();
    Some(Voice {
        description: format!("Piper {name}"),
        name,
        languages: vec![language],
        rate: config["audio"]["sample_rate"].as_u64().and_then(|r| u32::try_from(r).ok()).unwrap_or(22_050),
    })
}

impl PiperTts {
    /// `default`: the voice Arthur speaks with (a Piper voice, or espeak-ng without one).
    pub fn new(installed: &InstalledVoices, default: Arc<dyn Synthesizer>) -> Self {
        let lang = if installed.stt_lang.starts_with("en") { "en" } else { "fr" };
        let mut found: Vec<PathBuf> = installed
            .model_dir
            .as_deref()
            .and_then(|dir| std::fs::read_dir(dir).ok())
            .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        found.retain(|p| p.extension().is_some_and(|e| e == "onnx") && p.with_extension("onnx.json").is_file());
        if let Some(configured) = installed.piper_voice.clone().filter(|p| p.is_file()) {
            found.push(configured);
        }
        found.sort();
        found.dedup();
        let default_info = found
            .iter()
            .find(|p| p.file_stem().is_some_and(|s| s.to_string_lossy() == default.name()))
            .and_then(|p| piper_voice_info(p))
            .unwrap_or_else(|| Voice {
                name: default.name().to_string(),
                description: default.name().to_string(),
                languages: vec![lang.to_string()],
                rate: 22_050,
            });
        let mut voices = vec![(default_info.clone(), None)];
        for path in found {
            if let Some(info) = piper_voice_info(&path).filter(|v| v.name != default_info.name) {
                voices.push((info, Some(path)));
            }
        }
        let loaded = Mutex::new([(default_info.name, default)].into_iter().collect());
        Self { voices, loaded, onnxruntime: installed.onnxruntime.clone() }
    }

    async fn voice(&self, name: Option<&str>) -> Result<Arc<dyn Synthesizer>, ServiceError> {
        let (info, path) = match name {
            None => &self.voices[0],
            Some(name) => self
                .voices
                .iter()
                .find(|(v, _)| v.name == name)
                .ok_or_else(|| ServiceError::Refused(format!("no voice named {name:?} here")))?,
        };
        if let Some(voice) = self.loaded.lock().unwrap_or_else(|p| p.into_inner()).get(&info.name) {
            return Ok(voice.clone());
        }
        let path = path.clone().ok_or_else(|| ServiceError::Failed("voice not loaded".into()))?;
        let options = PiperOptions { onnxruntime: self.onnxruntime.clone(), ..PiperOptions::default() };
        let voice = tokio::task::spawn_blocking(move || PiperVoice::load(&path, &options))
            .await
            .map_err(|e| ServiceError::Failed(format!("loading task: {e}")))?
            .map_err(|e| ServiceError::Failed(e.to_string()))?;
        let voice: Arc<dyn Synthesizer> = Arc::new(voice);
        self.loaded.lock().unwrap_or_else(|p| p.into_inner()).insert(info.name.clone(), voice.clone());
        Ok(voice)
    }
}

#[async_trait::async_trait]
impl Tts for PiperTts {
    fn voices(&self) -> Vec<Voice> {
        self.voices.iter().map(|(v, _)| v.clone()).collect()
    }

    async fn synthesize(&self, sentence: &str, voice: Option<&str>) -> Result<Pcm, ServiceError> {
        let synth = self.voice(voice).await?;
        let sentence = sentence.to_string();
        tokio::task::spawn_blocking(move || synth.synthesize(&sentence))
            .await
            .map_err(|e| ServiceError::Failed(format!("synthesis task: {e}")))?
            .map_err(|e| ServiceError::Failed(e.to_string()))
    }
}

/// Arthur's turn. Its answer is the turn's spoken report, composed by code; a turn that
/// ended in a refusal or a failure (effect unknown) is `not-handled`, as `arthur ask`'s
/// `incident` says `refus` or `panne`.
pub struct TurnHandler {
    pub engine: Arc<TurnEngine>,
}

#[async_trait::async_trait]
impl Handler for TurnHandler {
    fn languages(&self) -> Vec<String> {
        vec!["fr".to_string()]
    }

    async fn handle(&self, text: &str, conversation: Option<&str>) -> Result<Answer, ServiceError> {
        if text.trim().is_empty() {
            return Err(ServiceError::Refused("empty transcript".into()));
        }
        let result = self
            .engine
            .run_heard(conversation, text, false, None)
            .await
            .map_err(|e| ServiceError::Failed(format!("the turn failed: {e}")))?;
        let handled =
            !matches!(result.incident.as_ref().map(|i| i.kind), Some(IncidentKind::Refus | IncidentKind::Panne));
        Ok(Answer { text: result.spoken, handled, conversation: result.conversation_id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_match_on_their_primary_subtag() {
        assert_eq!(primary("fr-FR"), "fr");
        assert_eq!(primary("en_US"), "en");
        assert_eq!(primary("FR"), "fr");
    }
}
