//! What the Wyoming server serves, behind three small traits so that the protocol knows
//! nothing of whisper, Piper or the turn: an [`Asr`] (16 kHz PCM → transcript), a [`Tts`]
//! (one sentence → PCM) and a [`Handler`] (a transcript → Arthur's answer, handled or not).
//! The binary implements them with the real components; tests may implement them with
//! anything. Each also describes itself for the `info` event.

use arthur_audio::tts::Pcm;
use serde_json::{json, Value};

/// A service's failure, said to the peer in an `error` event (never a secret in it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// The request cannot be served as asked (unknown voice, language not spoken…).
    #[error("{0}")]
    Refused(String),
    /// The service failed while serving it.
    #[error("{0}")]
    Failed(String),
}

impl ServiceError {
    /// The `code` of the `error` event.
    pub fn code(&self) -> &'static str {
        match self {
            ServiceError::Refused(_) => "refused",
            ServiceError::Failed(_) => "failed",
        }
    }
}

/// Speech to text.
#[async_trait::async_trait]
pub trait Asr: Send + Sync {
    /// The model, for `info`.
    fn describe(&self) -> AsrModel;
    /// Transcribes one utterance (16 kHz mono). `language`: what the client asked for, if
    /// anything; a language the model does not run is refused.
    async fn transcribe(&self, pcm_16k_mono: Vec<f32>, language: Option<&str>) -> Result<String, ServiceError>;
}

/// Text to speech, one sentence at a time (the server cuts the text and streams).
#[async_trait::async_trait]
pub trait Tts: Send + Sync {
    /// The voices, the default one first, for `info`.
    fn voices(&self) -> Vec<Voice>;
    /// Speaks `sentence` with the named voice (`None`: the default one).
    async fn synthesize(&self, sentence: &str, voice: Option<&str>) -> Result<Pcm, ServiceError>;
}

/// Arthur's turn, for Home Assistant's conversation agent (`handle`).
#[async_trait::async_trait]
pub trait Handler: Send + Sync {
    /// The languages it understands, for `info`.
    fn languages(&self) -> Vec<String>;
    /// One turn. `conversation`: the client's conversation id, continued when given.
    async fn handle(&self, text: &str, conversation: Option<&str>) -> Result<Answer, ServiceError>;
}

/// The outcome of one turn as the protocol tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// What is said to the user (composed by Arthur's code as everywhere else).
    pub text: String,
    /// `false` when the turn refused or failed: the client gets `not-handled`.
    pub handled: bool,
    /// The conversation the turn belongs to (given back in the event's context).
    pub conversation: String,
}

/// A speech-to-text model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsrModel {
    pub name: String,
    pub description: String,
    pub languages: Vec<String>,
}

/// A voice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voice {
    pub name: String,
    pub description: String,
    pub languages: Vec<String>,
    /// The rate its PCM comes at (an empty answer still names it in `audio-start`).
    pub rate: u32,
}

/// What the server offers; a part that is `None` is left out of `info`.
#[derive(Clone, Default)]
pub struct Services {
    pub asr: Option<std::sync::Arc<dyn Asr>>,
    pub tts: Option<std::sync::Arc<dyn Tts>>,
    pub handler: Option<std::sync::Arc<dyn Handler>>,
}

fn attribution() -> Value {
    json!({"name": "Arthur", "url": ""})
}

fn whisper_attribution() -> Value {
    json!({"name": "OpenAI (whisper), ggerganov (whisper.cpp)", "url": "https://github.com/ggerganov/whisper.cpp"})
}

fn piper_attribution() -> Value {
    json!({"name": "rhasspy", "url": "https://github.com/rhasspy/piper"})
}

impl Services {
    /// The `info` event's data, with every field the reference's dataclasses name (an absent
    /// optional field is written as null rather than left out).
    pub fn info(&self) -> Value {
        let version = env!("CARGO_PKG_VERSION");
        let asr: Vec<Value> = self
            .asr
            .iter()
            .map(|asr| {
                let m = asr.describe();
                json!({
                    "name": "arthur-whisper",
                    "description": "Arthur : reconnaissance vocale (whisper.cpp)",
                    "attribution": attribution(),
                    "installed": true,
                    "version": version,
                    "models": [{
                        "name": m.name,
                        "description": m.description,
                        "attribution": whisper_attribution(),
                        "installed": true,
                        "version": null,
                        "languages": m.languages,
                    }],
                    "supports_transcript_streaming": false,
                })
            })
            .collect();
        let tts: Vec<Value> = self
            .tts
            .iter()
            .map(|tts| {
                let voices: Vec<Value> = tts
                    .voices()
                    .into_iter()
                    .map(|v| {
                        json!({
                            "name": v.name,
                            "description": v.description,
                            "attribution": piper_attribution(),
                            "installed": true,
                            "version": null,
                            "languages": v.languages,
                            "speakers": null,
                        })
                    })
                    .collect();
                json!({
                    "name": "arthur-piper",
                    "description": "Arthur : synthèse vocale (Piper), phrase par phrase",
                    "attribution": attribution(),
                    "installed": true,
                    "version": version,
                    "voices": voices,
                    "supports_synthesize_streaming": true,
                })
            })
            .collect();
        let handle: Vec<Value> = self
            .handler
            .iter()
            .map(|h| {
                json!({
                    "name": "arthur",
                    "description": "Arthur : le tour honnête (ce qu'il dit de ses actes est composé par son code)",
                    "attribution": attribution(),
                    "installed": true,
                    "version": version,
                    "models": [{
                        "name": "arthur",
                        "description": "Arthur",
                        "attribution": attribution(),
                        "installed": true,
                        "version": version,
                        "languages": h.languages(),
                    }],
                    "supports_handled_streaming": false,
                    "supports_home_control": false,
                })
            })
            .collect();
        json!({
            "asr": asr, "tts": tts, "handle": handle,
            "intent": [], "wake": [], "mic": [], "snd": [],
        })
    }
}
