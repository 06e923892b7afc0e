//! The record of a turn — router decision, every model call, every tool call with its
//! arguments and outcome — stored as JSON and shown on the journal page.

use serde::Serialize;

use crate::llm::{Attempt, ChatResponse, LlmError};
use crate::tools::Outcome;

/// One model call as the trace keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallTrace {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub latency_ms: Option<u64>,
    pub ttft_ms: Option<u64>,
    pub request_bytes: Option<usize>,
    pub tool_calls: Vec<String>,
    /// Characters of text the response carried (shown or not).
    pub text_chars: usize,
    pub attempts: Vec<Attempt>,
    /// English; set when every provider failed.
    pub error: Option<String>,
}

impl CallTrace {
    pub fn from_response(r: &ChatResponse) -> Self {
        Self {
            provider: Some(r.provider.as_str().to_string()),
            model: Some(r.model.clone()),
            prompt_tokens: r.usage.map(|u| u.prompt_tokens),
            completion_tokens: r.usage.map(|u| u.completion_tokens),
            latency_ms: Some(r.latency_ms),
            ttft_ms: r.ttft_ms,
            request_bytes: Some(r.request_bytes),
            tool_calls: r.tool_calls.iter().map(|c| c.name.clone()).collect(),
            text_chars: r.content.chars().count(),
            attempts: r.attempts.clone(),
            error: None,
        }
    }

    pub fn from_error(e: &LlmError) -> Self {
        let attempts = match e {
            LlmError::AllFailed(a) => a.clone(),
            LlmError::NoProvider => Vec::new(),
        };
        Self {
            provider: None,
            model: None,
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: None,
            ttft_ms: None,
            request_bytes: None,
            tool_calls: Vec::new(),
            text_chars: 0,
            attempts,
            error: Some(e.to_string()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolTrace {
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: String,
    pub outcome: &'static str,
    pub detail: Outcome,
    pub elapsed_us: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnTrace {
    pub router: serde_json::Value,
    pub calls: Vec<CallTrace>,
    pub tools: Vec<ToolTrace>,
    /// Why the loop ended: answered, incident, call_cap, model_failed, no_model.
    pub end: &'static str,
    /// Model sentences withheld because they narrated an action.
    pub withheld_claims: Vec<String>,
    /// Text of responses that carried tool calls: never shown as an answer.
    pub withdrawn_drafts: Vec<String>,
    /// What the user's words asked for, as the offline parser read them, and what code
    /// did with it: `offered` (a write none ran, asked again), `read` (a read told by code
    /// instead of the model), `asked` (a bare chrono word, confirmed first).
    pub witness: Option<WitnessTrace>,
    /// How the grammar read the words before any model.
    pub reading: Option<ReadingTrace>,
    /// Turn time outside model calls (tools, store, composition), microseconds.
    pub overhead_us: u64,
    /// The language model's state as this turn met it: `online`, `offline` (none
    /// configured) or `unreachable`; absent when the turn did not need it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connectivity: Option<&'static str>,
    /// The state this turn's answer told the user (said once per conversation, and again
    /// when it changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connectivity_told: Option<&'static str>,
    /// A question about the user's memory: what decided it, and who chose the reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<super::recall::MemoryTrace>,
    /// What would take this turn's writes back, last first (« annule » reads it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub undo: Vec<super::undo::UndoStep>,
    /// The turn this one took back (« annule »).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undid: Option<i64>,
}

/// The grammar's reading of the user's words: `sure`, `unsure` or `none`, the intent, the
/// template that matched and why it was unsure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadingTrace {
    pub certainty: &'static str,
    pub intent: Option<String>,
    pub template: Option<String>,
    pub doubt: Option<&'static str>,
    pub elapsed_us: u64,
}

impl ReadingTrace {
    pub fn of(u: &crate::understand::Understanding, elapsed_us: u64) -> Self {
        use crate::understand::{Command, Reading, Told};
        let name = |c: &Command| match c {
            Command::Tool(t) => t.name().to_string(),
            Command::Told(Told::Time) => "@heure".into(),
            Command::Told(Told::Date { .. }) => "@date".into(),
            Command::Told(Told::Help) => "@aide".into(),
            Command::Told(Told::Courtesy(_)) => "@politesse".into(),
            Command::Told(Told::Cancel) => "@annule".into(),
        };
        let (intent, doubt) = match &u.reading {
            Reading::Sure(c) => (Some(name(c)), None),
            Reading::Unsure { command, doubt } => (Some(name(command)), Some(doubt.as_str())),
            Reading::Incomplete { intent, doubt } => (Some(intent.clone()), Some(doubt.as_str())),
            Reading::NotCommand => (None, None),
        };
        Self { certainty: u.certainty(), intent, template: u.template.clone(), doubt, elapsed_us }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WitnessTrace {
    pub tool: String,
    pub effect: &'static str,
}
