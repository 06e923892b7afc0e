//! Access to language-model providers. For now: embeddings over the OpenAI-compatible wire
//! format that Mistral, OpenAI, llama.cpp and Ollama all speak.

pub mod embeddings;
pub mod types;

pub use types::*;
pub mod anthropic;
pub mod client;
pub mod openai;
#[cfg(feature = "scripted")]
pub mod scripted;
pub mod sse;
