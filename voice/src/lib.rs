//! Arthur's voice: the hands-free and push-to-talk loops (`listen`) around the agents'
//! turn, their turn-taking as a pure machine (`turns`), how they read what was said
//! (`words`), the self-test of `arthur doctor --voix` (`selftest`) and the services Home
//! Assistant's protocol serves (`wyoming`), and what `arthur serve` announces through them:
//! the timers' bell (`timers`) and the due reminders (`notifier`). The ears and the
//! voice themselves (capture, echo cancellation, speech detection, whisper, Piper) are
//! `arthur-audio`'s; configuration and wiring are the `arthur` binary's. What stops a loop is
//! a typed [`error::VoiceError`].

pub mod error;
pub mod listen;
pub mod notifier;
pub mod phrases;
pub mod selftest;
pub mod tally;
pub mod timers;
pub mod turns;
pub mod words;
pub mod wyoming;
