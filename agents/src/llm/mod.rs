//! Access to language-model providers: the provider-neutral types, the two wire formats
//! (OpenAI-compatible chat completions, spoken by Mistral, OpenAI, llama.cpp and Ollama; and
//! Anthropic Messages), the fallback client over the configured providers, embeddings, and
//! the scripted test server (feature `scripted`).

pub mod embeddings;
pub mod types;

pub use types::*;
pub mod anthropic;
pub mod client;
pub mod openai;
#[cfg(feature = "scripted")]
pub mod scripted;
pub mod sse;
mod wire;
