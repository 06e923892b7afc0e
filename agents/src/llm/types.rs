//! The provider-neutral shapes of a chat exchange: what the turn sends, what comes back,
//! and what is recorded about the call. Every provider adapter maps to and from these.

use serde::Serialize;
use serde_json::Value;

/// The three provider families, in fallback order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Mistral,
    Anthropic,
    /// Any OpenAI-compatible server (OpenAI, llama.cpp, Ollama…).
    OpenAi,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Mistral => "mistral",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
        }
    }
}

/// Which model of a provider a call wants: the small router or the large chat model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelRole {
    Router,
    Chat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call as the model emitted it. `arguments` is the raw JSON text it sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// Assistant messages: the calls it asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Tool messages: the call they answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Tool messages: the tool's name (some providers require it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self { role: Role::System, content: content.into(), tool_calls: Vec::new(), tool_call_id: None, name: None }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: Role::User, content: content.into(), tool_calls: Vec::new(), tool_call_id: None, name: None }
    }
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self { role: Role::Assistant, content: content.into(), tool_calls, tool_call_id: None, name: None }
    }
    pub fn tool(call: &ToolCall, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
        }
    }
}

/// A tool offered to the model (JSON Schema parameters).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// What the model may do with the tools it is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// Text or tool calls, as the model sees fit.
    #[default]
    Auto,
    /// At least one tool call (chat completions `"required"`, Anthropic `{"type": "any"}`).
    /// An OpenAI-compatible local server may ignore it: the turn does not rely on it.
    Required,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub role: ModelRole,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// Ask for a JSON object answer (router).
    pub json_mode: bool,
    /// Whether the model may answer in text (`Auto`) or must call one of `tools`
    /// (`Required`: a question about the user's memory is answered by a read, never from
    /// the model's own words).
    pub tool_choice: ToolChoice,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
}

/// One try against one provider, kept for the trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempt {
    pub provider: ProviderKind,
    pub model: String,
    /// HTTP status, when one came back.
    pub status: Option<u16>,
    /// English, secrets never included.
    pub error: Option<String>,
    pub latency_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatResponse {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// As reported by the provider's API; `None` when it reported none.
    pub usage: Option<Usage>,
    /// The provider and model that actually answered.
    pub provider: ProviderKind,
    pub model: String,
    /// Whole call, from the first request to the last byte, retries and fallbacks included.
    pub latency_ms: u64,
    /// Time to first token of the answering attempt (streaming only).
    pub ttft_ms: Option<u64>,
    /// Size of the JSON body sent to the answering provider.
    pub request_bytes: usize,
    /// Every try, failed ones first, the answering one last.
    pub attempts: Vec<Attempt>,
}

/// What a streaming call reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of answer text (a draft until the turn knows no tool call follows).
    TextDelta(String),
    /// The response turned to a tool call: any text so far is not an answer.
    ToolCallStarted { name: String },
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("no language-model provider is configured")]
    NoProvider,
    #[error("every provider failed: {}", summarise(.0))]
    AllFailed(Vec<Attempt>),
}

fn summarise(attempts: &[Attempt]) -> String {
    attempts
        .iter()
        .map(|a| format!("{}/{}: {}", a.provider.as_str(), a.model, a.error.as_deref().unwrap_or("?")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Something that answers chat requests (the fallback client; tests may wrap it).
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// With `stream`, text deltas are reported as they arrive.
    async fn chat(
        &self,
        request: &ChatRequest,
        stream: Option<&(dyn Fn(StreamEvent) + Send + Sync)>,
    ) -> Result<ChatResponse, LlmError>;
}
