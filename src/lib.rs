//! The Arthur application: configuration, command line, and the wiring of the agents, the
//! store and (later) voice, web and Atlas into one appliance.

pub mod app;
pub mod bench;
pub mod chat;
pub mod cli;
pub mod config;
pub mod listen;
pub mod voice;
pub mod web;
