//! The root crate's integration tests, in one binary with shared helpers (`common`: the
//! app on a real SQLite file, the one way to start the `arthur` binary; `harness`: the
//! private PostgreSQL cluster and the one `free_port`; `support`: Atlas' fixtures).
//!
//! Two tiers. `cargo test` runs the fast one: the SQLite integration tests of the tools,
//! the turn, the parser, the CLI, the web routes, crash safety. The system tier needs real
//! servers, devices or speech models (PostgreSQL, Dovecot, ClamAV, SMTP, Chromium,
//! PulseAudio, tmux, whisper and Piper, the soak) and is compiled with the feature
//! `system-tests`; `scripts/test` and CI run both.

mod common;
#[path = "postgres/harness.rs"]
mod harness;
#[path = "../atlas/tests/support/mod.rs"]
mod support;

mod atlas;
mod basics;
mod cli;
mod code_facts;
mod conversation;
mod crash;
mod dialogues;
mod memory_told;
mod offline;
mod offline_parser;
mod repeats;
mod said;
mod search;
mod sessions_prop;
mod tools;
mod turn;
mod web;

#[cfg(feature = "system-tests")]
mod browser;
#[cfg(feature = "system-tests")]
mod listen;
#[cfg(feature = "system-tests")]
mod listen_live;
#[cfg(feature = "system-tests")]
mod listen_room;
#[cfg(feature = "system-tests")]
mod postgres;
#[cfg(feature = "system-tests")]
mod ptt;
#[cfg(feature = "system-tests")]
mod serve;
#[cfg(feature = "system-tests")]
mod voice;
#[cfg(feature = "system-tests")]
mod voice_fr;
#[cfg(feature = "system-tests")]
mod wyoming;
