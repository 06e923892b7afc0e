//! Arthur's agents: the memory domain and its storage, the 21 typed tools, the reports
//! composed by code from their outcomes, language-model providers, and the honest turn
//! (supervisor + specialist tool loop).
//!
//! This crate knows nothing of HTTP servers, audio devices or e-mail.

pub mod ears;
pub mod fr;
pub mod llm;
pub mod memory;
pub mod prompts;
pub mod redact;
pub mod report;
pub mod secret;
pub mod text;
pub mod time;
pub mod tools;
pub mod turn;
pub mod understand;
