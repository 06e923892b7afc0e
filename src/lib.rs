//! The Arthur application: configuration, command line, and the wiring of the agents, the
//! store and (later) voice, web and Atlas into one appliance.

pub mod app;
pub mod atlas;
pub mod bench;
pub mod chat;
pub mod cli;
pub mod config;
pub mod db;
pub mod first_start;
pub mod health;
pub mod listen;
pub mod notifier;
pub mod selftest;
pub mod serve;
pub mod voice;
pub mod web;
