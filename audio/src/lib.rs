//! Arthur's ears and voice: capture, voice activity detection, speech-to-text,
//! text-to-speech and playback. Input is PCM or WAV, output is text or PCM; this crate
//! knows nothing of agents, storage or HTTP.

/// Every stage of the pipeline works on 16 kHz mono samples.
pub const SAMPLE_RATE_HZ: u32 = 16_000;

pub mod capture;
pub mod clock;
pub mod denoise;
pub mod detect;
pub mod earcon;
pub mod echo;
pub mod favour;
pub mod hearing;
pub mod phrases;
pub mod piper;
pub mod playback;
pub mod quiet;
pub mod stt;
pub mod tts;
pub mod vad;
pub mod wake;
pub mod wav;
pub mod wer;
