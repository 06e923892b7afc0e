//! Home Assistant's voice protocol, Wyoming, for Arthur: JSON lines and PCM over TCP. Arthur
//! serves its speech-to-text, its text-to-speech and its honest turn to Home Assistant
//! ([`server`]), and hosts remote satellites — a microphone and a loudspeaker in another
//! room — on which its hands-free loop runs ([`satellite`]). What it serves sits behind
//! small traits ([`service`]): this crate knows the protocol, not whisper, Piper or the turn.

pub mod addr;
pub mod announce;
pub mod audio;
pub mod event;
pub mod satellite;
pub mod server;
pub mod service;
pub mod speaker;

pub use service::{Answer, Asr, AsrModel, Handler, ServiceError, Services, Tts, Voice};
