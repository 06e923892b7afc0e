//! The audio crate's integration tests, one binary. `cargo test` runs the signal processing
//! on synthetic and recorded audio; the system tier (feature `system-tests`) needs the
//! speech models `models/fetch` installs and a sound server or device: whisper, Piper,
//! PulseAudio capture and ALSA playback
//! are binaries of their own (`pulse`, `alsa_playback`: they change the process environment).

mod common;

mod dsp;
mod smart_turn;

#[cfg(feature = "system-tests")]
mod piper;
#[cfg(feature = "system-tests")]
mod stt;
