//! What can stop a voice loop, typed at the crate's boundary so that the binary (which adds
//! its own context with anyhow) and the tests can tell a missing microphone from a failed
//! turn. Each variant's message says what the loop was doing and its source says why: the
//! chain reads as it did when these were anyhow contexts.

use std::path::PathBuf;

use arthur_agents::memory::StoreError;
use arthur_audio::capture::CaptureError;
use arthur_audio::detect::DetectorError;
use arthur_audio::playback::PlaybackError;
use arthur_audio::stt::SttError;
use arthur_audio::wav::WavError;

#[derive(Debug, thiserror::Error)]
pub enum VoiceError {
    #[error("loading Silero VAD")]
    Detector(#[source] DetectorError),
    #[error("reading {}", path.display())]
    ReadWav {
        path: PathBuf,
        #[source]
        source: WavError,
    },
    #[error("writing {}", path.display())]
    WriteWav {
        path: PathBuf,
        #[source]
        source: PlaybackError,
    },
    /// The loudspeaker (or the WAV it plays into) refused a sound.
    #[error(transparent)]
    Playback(#[from] PlaybackError),
    #[error("running the turn")]
    Turn(#[source] StoreError),
    /// The blocking thread whisper ran on panicked or was cancelled.
    #[error("transcription task")]
    TranscriptionTask(#[source] tokio::task::JoinError),
    #[error("transcribing")]
    Transcribing(#[source] SttError),
    /// The microphone did not start.
    #[error(transparent)]
    Capture(#[from] CaptureError),
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;

    /// The chain the binary prints (`{:#}`) is what the anyhow contexts made: what the loop
    /// was doing, then why.
    #[test]
    fn each_error_says_what_the_loop_was_doing_then_why() {
        let e = VoiceError::Turn(StoreError::UnsupportedUrl("x".into()));
        assert_eq!(e.to_string(), "running the turn");
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("unsupported database url: x"));
        let e = VoiceError::ReadWav { path: "/a.wav".into(), source: WavError::Invalid("no channel") };
        assert_eq!(e.to_string(), "reading /a.wav");
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("invalid WAV parameters: no channel"));
        let e = VoiceError::Detector(DetectorError::Runtime("no".into()));
        assert_eq!(
            (e.to_string(), e.source().unwrap().to_string()),
            ("loading Silero VAD".into(), "ONNX Runtime: no".into())
        );
    }
}
