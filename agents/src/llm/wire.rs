//! What a wire adapter (`openai`, `anthropic`) hands back to the client: the parsed answer
//! or the failure. Below both the client and the adapters, so the client can call them and
//! they need nothing from it.

use serde_json::Value;

use super::types::{ToolCall, Usage};

/// A parsed answer, whatever the wire format.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) content: String,
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) usage: Option<Usage>,
}

/// A stream that went wrong, as the wire adapters report it.
#[derive(Debug)]
pub(crate) struct WireFailure {
    pub(crate) message: String,
    pub(crate) retryable: bool,
}

impl WireFailure {
    pub(crate) fn malformed(message: String) -> Self {
        Self { message, retryable: false }
    }
    pub(crate) fn retryable(message: String) -> Self {
        Self { message, retryable: true }
    }
}

/// A short, single-line rendering of a JSON error object for an attempt's error text.
pub(crate) fn short(value: &Value) -> String {
    let text = match value.get("message").and_then(Value::as_str) {
        Some(m) => m.to_string(),
        None => value.to_string(),
    };
    text.chars().take(200).collect()
}
