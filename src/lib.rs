//! The Arthur application: configuration, command line, and the wiring of the agents, the
//! memory store, the voice, the web interface and Atlas (`arthur-atlas`) into one appliance.

pub mod app;
pub mod atlas_cli;
pub mod bench;
pub mod chat;
pub mod cli;
pub mod config;
pub mod db;
pub mod first_start;
pub mod health;
pub mod serve;
pub mod voice;
pub mod web;
pub mod wyoming;
pub use arthur_voice::{notifier, timers};
