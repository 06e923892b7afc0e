//! One turn, end to end: the supervisor routes once, the specialist loop runs the model's
//! tool calls in order against the store (at most five model calls, cut after the batch
//! of the first incident), and the answer is composed by code from what really happened.

pub mod claims;
pub mod compose;
pub mod supervisor;
pub mod trace;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Value};

use crate::llm::{ChatModel, ChatRequest, Message, ModelRole, StreamEvent, ToolCall, ToolSpec};
use crate::memory::StoreError;
use crate::report::compose_written;
use crate::tools::{AgentKind, Outcome, ToolBox, ToolContext};
pub use compose::{AnswerPart, End, PartSource};
pub use supervisor::{Domain, ExpectedAction, RouterDecision};
use trace::{CallTrace, ToolTrace, TurnTrace};

/// At most this many specialist model calls per turn (the router's call excluded).
pub const MAX_MODEL_CALLS: u32 = 5;
/// Past messages of the conversation given to the specialist (user and answers).
pub const HISTORY_MESSAGES: u32 = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IncidentKind {
    Refus,
    Panne,
    Briefing,
}

/// The first incident of the turn; never overwritten by a later one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Incident {
    pub kind: IncidentKind,
    pub tool: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolUse {
    pub name: String,
    pub outcome: &'static str,
}

/// What a turn produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    pub conversation_id: String,
    pub turn_id: i64,
    pub written: String,
    pub spoken: String,
    pub parts: Vec<AnswerPart>,
    pub agent: AgentKind,
    pub domain: Domain,
    pub incident: Option<Incident>,
    pub tools: Vec<ToolUse>,
    pub llm_calls: u32,
    pub trace: TurnTrace,
}

impl TurnResult {
    /// Exactly the object of `arthur ask --json` (DESIGN §8).
    pub fn to_ask_json(&self) -> Value {
        json!({
            "written": self.written,
            "spoken": self.spoken,
            "agent": self.agent.as_str(),
            "domain": self.domain.as_str(),
            "incident": self.incident,
            "tools": self.tools,
            "llm_calls": self.llm_calls,
        })
    }
}

/// What a turn reports while it runs (web stream, terminal).
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// What Arthur is doing ("routage", "outil creer_note"…).
    Status(String),
    /// A piece of model text: provisional until the turn ends.
    Draft(String),
    /// The drafts so far turned out to precede tool calls: they are not an answer.
    DraftWithdrawn,
}

pub type EventSink<'a> = &'a (dyn Fn(TurnEvent) + Send + Sync);

/// Runs turns. Turns of one conversation are serialised; different conversations run
/// concurrently.
pub struct TurnEngine {
    llm: Option<Arc<dyn ChatModel>>,
    tools: ToolBox,
    ctx: ToolContext,
    conversation_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

fn new_conversation_id(now: DateTime<Utc>) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_i64(now.timestamp_nanos_opt().unwrap_or_default());
    format!("c{}-{:016x}", now.format("%Y%m%d%H%M%S"), h.finish())
}

fn tool_specs(tools: &ToolBox, agent: AgentKind) -> Vec<ToolSpec> {
    tools
        .definitions_for(agent)
        .into_iter()
        .map(|d| ToolSpec {
            name: d.name.to_string(),
            description: d.description.to_string(),
            parameters: d.parameters,
        })
        .collect()
}

/// What the model re-reads after a tool ran: the code-composed report.
fn tool_message_content(call: &ToolCall, outcome: &Outcome, ctx: &ToolContext) -> String {
    format!("[{}] {}", outcome.kind(), compose_written(&call.name, outcome, ctx.tz))
}

impl TurnEngine {
    pub fn new(llm: Option<Arc<dyn ChatModel>>, ctx: ToolContext) -> Self {
        Self { llm, tools: ToolBox::new(), ctx, conversation_locks: Mutex::new(HashMap::new()) }
    }

    pub fn context(&self) -> &ToolContext {
        &self.ctx
    }

    pub fn tools(&self) -> &ToolBox {
        &self.tools
    }

    fn lock_for(&self, conversation: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.conversation_locks.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(conversation.to_string()).or_default().clone()
    }

    /// Runs one turn in `conversation` (a new one when `None`).
    pub async fn run(
        &self,
        conversation: Option<&str>,
        text: &str,
        events: Option<EventSink<'_>>,
    ) -> Result<TurnResult, StoreError> {
        let started = Instant::now();
        let store = self.ctx.store.as_ref();
        let now = self.ctx.now();
        let conversation_id = conversation.map(str::to_string).unwrap_or_else(|| new_conversation_id(now));
        let lock = self.lock_for(&conversation_id);
        let _guard = lock.lock().await;
        store.create_conversation(&conversation_id, now).await?;
        let turn_id = store.begin_turn(&conversation_id, text, now).await?;
        let emit = |e: TurnEvent| {
            if let Some(sink) = events {
                sink(e)
            }
        };

        let mut model_time_us: u64 = 0;
        let mut calls: Vec<CallTrace> = Vec::new();
        let mut tool_traces: Vec<ToolTrace> = Vec::new();
        let mut executed: Vec<(ToolCall, Outcome)> = Vec::new();
        let mut first_incident: Option<usize> = None;
        let mut withdrawn_drafts: Vec<String> = Vec::new();

        let (decision, end) = match &self.llm {
            None => (
                supervisor::fallback(text, supervisor::FallbackReason::ModelUnavailable, String::new(), None),
                End::NoModel,
            ),
            Some(llm) => {
                emit(TurnEvent::Status("routage".into()));
                let t = Instant::now();
                let decision = supervisor::route(llm.as_ref(), text).await;
                model_time_us += t.elapsed().as_micros() as u64;
                // The domain labels the conversation on its first exchange only.
                store.label_conversation(&conversation_id, decision.domain.as_str()).await?;

                let history = store.recent_messages(&conversation_id, HISTORY_MESSAGES).await?;
                let preferences = store.active_preferences(self.ctx.preferences_cap).await?;
                let mut messages =
                    vec![Message::system(crate::prompts::specialist(decision.agent, now, self.ctx.tz, &preferences))];
                for (role, content) in history {
                    messages.push(if role == "user" {
                        Message::user(content)
                    } else {
                        Message::assistant(content, vec![])
                    });
                }
                messages.push(Message::user(text));
                let specs = tool_specs(&self.tools, decision.agent);

                let mut end = End::CallCap;
                for _ in 0..MAX_MODEL_CALLS {
                    emit(TurnEvent::Status("réflexion".into()));
                    let request = ChatRequest {
                        role: ModelRole::Chat,
                        messages: messages.clone(),
                        tools: specs.clone(),
                        json_mode: false,
                        temperature: Some(0.3),
                        max_tokens: Some(800),
                    };
                    let drafted = AtomicBool::new(false);
                    let withdrawn = AtomicBool::new(false);
                    let on_stream = |ev: StreamEvent| match ev {
                        StreamEvent::TextDelta(t) => {
                            drafted.store(true, Ordering::SeqCst);
                            emit(TurnEvent::Draft(t));
                        }
                        StreamEvent::ToolCallStarted { .. } => {
                            if drafted.load(Ordering::SeqCst) && !withdrawn.swap(true, Ordering::SeqCst) {
                                emit(TurnEvent::DraftWithdrawn);
                            }
                        }
                    };
                    let t = Instant::now();
                    let result =
                        llm.chat(&request, events.map(|_| &on_stream as &(dyn Fn(StreamEvent) + Send + Sync))).await;
                    model_time_us += t.elapsed().as_micros() as u64;
                    let response = match result {
                        Ok(r) => r,
                        Err(e) => {
                            tracing::error!(error = %e, "specialist model call failed");
                            calls.push(CallTrace::from_error(&e));
                            end = End::ModelFailed;
                            break;
                        }
                    };
                    calls.push(CallTrace::from_response(&response));
                    if response.tool_calls.is_empty() {
                        end = End::Answered(response.content.clone());
                        break;
                    }
                    // Text that came with tool calls is never an answer.
                    if !response.content.trim().is_empty() {
                        withdrawn_drafts.push(response.content.clone());
                        if drafted.load(Ordering::SeqCst) && !withdrawn.swap(true, Ordering::SeqCst) {
                            emit(TurnEvent::DraftWithdrawn);
                        }
                    }
                    messages.push(Message::assistant(response.content.clone(), response.tool_calls.clone()));
                    // The whole batch runs, in the order requested, before any cut.
                    for call in &response.tool_calls {
                        emit(TurnEvent::Status(format!("outil {}", call.name)));
                        let raw: Value = serde_json::from_str(&call.arguments)
                            .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                        let t = Instant::now();
                        let outcome = self.tools.invoke_as(decision.agent, &self.ctx, &call.name, &raw).await;
                        tool_traces.push(ToolTrace {
                            name: call.name.clone(),
                            arguments: call.arguments.clone(),
                            outcome: outcome.kind(),
                            detail: outcome.clone(),
                            elapsed_us: t.elapsed().as_micros() as u64,
                        });
                        messages.push(Message::tool(call, tool_message_content(call, &outcome, &self.ctx)));
                        if outcome.is_incident() && first_incident.is_none() {
                            first_incident = Some(executed.len());
                        }
                        executed.push((call.clone(), outcome));
                    }
                    if first_incident.is_some() {
                        end = End::Incident;
                        break;
                    }
                }
                (decision, end)
            }
        };

        let now_end = self.ctx.now();
        let (parts, withheld) = compose::compose(&executed, &end, decision.action, now_end, self.ctx.tz);
        let written = parts.iter().map(|p| p.written.as_str()).collect::<Vec<_>>().join("\n");
        let spoken = parts.iter().map(|p| p.spoken.as_str()).collect::<Vec<_>>().join(" ");
        let incident = first_incident.map(|i| {
            let (call, outcome) = &executed[i];
            let kind = match outcome {
                Outcome::Refused(_) => IncidentKind::Refus,
                Outcome::Failed(_) => IncidentKind::Panne,
                _ => IncidentKind::Briefing,
            };
            Incident { kind, tool: call.name.clone() }
        });
        let end_label = match &end {
            End::Answered(_) => "answered",
            End::Incident => "incident",
            End::CallCap => "call_cap",
            End::ModelFailed => "model_failed",
            End::NoModel => "no_model",
        };
        let llm_calls = calls.len() as u32;
        let overhead_us = (started.elapsed().as_micros() as u64).saturating_sub(model_time_us);
        let trace = TurnTrace {
            router: serde_json::to_value(&decision).unwrap_or(Value::Null),
            calls,
            tools: tool_traces,
            end: end_label,
            withheld_claims: withheld,
            withdrawn_drafts,
            overhead_us,
        };
        let trace_json = serde_json::to_value(&trace).unwrap_or(Value::Null);
        store.append_message(&conversation_id, "user", text, now).await?;
        store.append_message(&conversation_id, "assistant", &written, now_end).await?;
        store.finish_turn(turn_id, &trace_json, &written, &spoken, now_end).await?;
        Ok(TurnResult {
            conversation_id,
            turn_id,
            written,
            spoken,
            parts,
            agent: decision.agent,
            domain: decision.domain,
            incident,
            tools: executed.iter().map(|(c, o)| ToolUse { name: c.name.clone(), outcome: o.kind() }).collect(),
            llm_calls,
            trace,
        })
    }
}
