//! The audio crate's integration tests, one binary. `cargo test` runs the signal processing
//! on synthetic and recorded audio; the system tier (feature `system-tests`) needs the
//! speech models `models/fetch` installs and a sound server or device: whisper, Piper,
//! PulseAudio capture, ALSA playback.

mod common;

mod dsp;

#[cfg(feature = "system-tests")]
mod alsa_playback;
#[cfg(feature = "system-tests")]
mod piper;
#[cfg(feature = "system-tests")]
mod pulse;
#[cfg(feature = "system-tests")]
mod stt;
