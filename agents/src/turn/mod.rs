//! One turn, end to end: the supervisor routes once, the specialist loop runs the model's
//! tool calls in order against the store (at most five model calls, cut after the batch
//! of the first incident), and the answer is composed by code from what really happened.

pub mod claims;
pub mod compose;
pub mod supervisor;
pub mod trace;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Value};

use crate::llm::{ChatModel, ChatRequest, Message, ModelRole, ToolCall, ToolSpec};
use crate::memory::{LabelSource, StoreError};
use crate::offline::OfflineAction;
use crate::report::compose_written;
use crate::tools::{AgentKind, Outcome, ToolBox, ToolContext};
pub use compose::{AnswerPart, Composed, End, PartSource, Signals, Witness};
pub use supervisor::{Domain, ExpectedAction, RouterDecision};
use trace::{CallTrace, ToolTrace, TurnTrace, WitnessTrace};

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
    /// Exactly the object of `arthur ask --json` (docs/interface.md §3.1).
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

/// What a turn reports while it runs (web stream, terminal): what Arthur is doing, never
/// a model draft — model text is shown only once the turn's outcome is known.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// "routage", "réflexion", "outil creer_note"…
    Status(String),
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

/// How long a write awaiting "oui" stays valid.
pub const PENDING_TTL_MINUTES: i64 = 5;

/// The agent whose list holds a tool (shared tools go to the Intendant).
fn agent_for(tool: &str) -> AgentKind {
    if crate::tools::MENTOR_OWN.contains(&tool) {
        AgentKind::Mentor
    } else {
        AgentKind::Intendant
    }
}

/// Forgets a conversation's lock once no other turn holds or awaits it, so the map of
/// locks does not grow with every conversation ever seen.
struct LockCleanup<'a> {
    engine: &'a TurnEngine,
    conversation: String,
}

impl Drop for LockCleanup<'_> {
    fn drop(&mut self) {
        let mut map = self.engine.conversation_locks.lock().unwrap_or_else(|e| e.into_inner());
        // Two references remain: the map's and this turn's own, released right after.
        if map.get(&self.conversation).is_some_and(|l| Arc::strong_count(l) <= 2) {
            map.remove(&self.conversation);
        }
    }
}

/// Everything a turn accumulates while it runs.
#[derive(Default)]
struct TurnState {
    calls: Vec<CallTrace>,
    tools: Vec<ToolTrace>,
    executed: Vec<(ToolCall, Outcome)>,
    first_incident: Option<usize>,
    withdrawn_drafts: Vec<String>,
    model_time_us: u64,
    witness: Option<WitnessTrace>,
}

impl TurnState {
    fn record(&mut self, call: ToolCall, outcome: Outcome, elapsed_us: u64) {
        self.tools.push(ToolTrace {
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            outcome: outcome.kind(),
            detail: outcome.clone(),
            elapsed_us,
        });
        if outcome.is_incident() && self.first_incident.is_none() {
            self.first_incident = Some(self.executed.len());
        }
        self.executed.push((call, outcome));
    }
}

/// How the answer is made: from the loop's outcomes, or given directly.
enum Flow {
    Loop(End),
    Direct(Vec<AnswerPart>, &'static str),
}

/// Chrono tools a bare word ("stop", "pause") may stand for.
const CHRONO_TOOLS: [&str; 3] = ["suspendre_session", "reprendre_session", "arreter_session"];

/// What the user's words say, read by code before any model: the parse of the offline
/// parser and whether they ask about memory at all.
struct Reading {
    parsed: OfflineAction,
    cues: bool,
}

impl Reading {
    /// A bare chrono word: asked before it touches the chrono, whoever answers.
    fn bare_chrono(&self) -> Option<&'static str> {
        match &self.parsed {
            OfflineAction::Tool { name, confident: false, .. } if CHRONO_TOOLS.contains(name) => Some(*name),
            _ => None,
        }
    }

    fn write(&self) -> Option<(&'static str, &Value)> {
        match &self.parsed {
            OfflineAction::Tool { name, args, .. } if compose::WRITE_TOOLS.contains(name) => Some((*name, args)),
            _ => None,
        }
    }

    fn read(&self) -> Option<(&'static str, &Value)> {
        match &self.parsed {
            OfflineAction::Tool { name, args, .. } if !compose::WRITE_TOOLS.contains(name) => Some((*name, args)),
            _ => None,
        }
    }
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

    async fn run_tool(&self, agent: AgentKind, call: &ToolCall, state: &mut TurnState) -> Outcome {
        let raw: Value =
            serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()));
        let t = Instant::now();
        let outcome = self.tools.invoke_as(agent, &self.ctx, &call.name, &raw).await;
        state.record(call.clone(), outcome.clone(), t.elapsed().as_micros() as u64);
        outcome
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
        let _cleanup = LockCleanup { engine: self, conversation: conversation_id.clone() };
        store.create_conversation(&conversation_id, now).await?;
        let turn_id = store.begin_turn(&conversation_id, text, now).await?;
        let mut state = TurnState::default();

        // A write awaiting confirmation is answered first, deterministically; any other
        // message drops it.
        let pending = match store.take_pending(&conversation_id).await? {
            Some(p) if now - p.created_at <= chrono::Duration::minutes(PENDING_TTL_MINUTES) => {
                crate::offline::yes_no(text).map(|yes| (p, yes))
            }
            _ => None,
        };

        let reading = Reading {
            parsed: crate::offline::parse(text, now, self.ctx.tz),
            cues: crate::offline::asks_about_memory(text),
        };
        let mut label = LabelSource::Fallback;
        let (decision, flow) = match (pending, &self.llm) {
            (Some((p, yes)), _) => {
                let mut decision =
                    supervisor::fallback(&p.question, supervisor::FallbackReason::Confirmation, String::new(), None);
                decision.agent = agent_for(&p.tool);
                if yes {
                    let call = ToolCall {
                        id: "confirmation".into(),
                        name: p.tool.clone(),
                        arguments: p.arguments.to_string(),
                    };
                    let outcome = self.run_tool(decision.agent, &call, &mut state).await;
                    (decision, Flow::Direct(vec![compose::report_part(&call, &outcome, now, self.ctx.tz)], "confirmed"))
                } else {
                    (decision, Flow::Direct(vec![compose::fixed(compose::CANCELLED)], "cancelled"))
                }
            }
            (None, _) if reading.bare_chrono().is_some() => {
                // "stop", "pause": may be meant for the speech; the chrono is asked first.
                let tool = reading.bare_chrono().unwrap_or("arreter_session");
                let decision = supervisor::fallback(text, supervisor::FallbackReason::BareCommand, String::new(), None);
                let flow = self.ask_before_chrono(&conversation_id, tool, &mut state).await?;
                (decision, flow)
            }
            (None, None) => {
                let decision =
                    supervisor::fallback(text, supervisor::FallbackReason::ModelUnavailable, String::new(), None);
                let flow = self.offline(&conversation_id, text, compose::OFFLINE_NO_MODEL, &mut state).await?;
                (decision, flow)
            }
            (None, Some(llm)) => {
                let (decision, flow) =
                    self.online(llm.as_ref(), &conversation_id, text, now, events, &mut state).await?;
                if decision.fallback.is_none() {
                    label = LabelSource::Router;
                }
                (decision, flow)
            }
        };
        // The domain labels the conversation on its first exchange only, online or not;
        // a label the fallback chose is recorded as such.
        store.label_conversation(&conversation_id, decision.domain.as_str(), label).await?;

        let now_end = self.ctx.now();
        let (parts, withheld, end_label) = match flow {
            Flow::Loop(end) => {
                let composed = self.compose_loop(&conversation_id, &end, &decision, &reading, &mut state).await?;
                let label = match &end {
                    End::Answered(_) => "answered",
                    End::Incident => "incident",
                    End::CallCap => "call_cap",
                    End::ModelFailed => "model_failed",
                    End::NoModel => "no_model",
                };
                (composed.parts, composed.withheld, label)
            }
            Flow::Direct(parts, label) => (parts, Vec::new(), label),
        };
        let written = parts.iter().map(|p| p.written.as_str()).collect::<Vec<_>>().join("\n");
        let spoken = parts.iter().map(|p| p.spoken.as_str()).collect::<Vec<_>>().join(" ");
        let incident = state.first_incident.map(|i| {
            let (call, outcome) = &state.executed[i];
            let kind = match outcome {
                Outcome::Refused(_) => IncidentKind::Refus,
                Outcome::Failed(_) => IncidentKind::Panne,
                _ => IncidentKind::Briefing,
            };
            Incident { kind, tool: call.name.clone() }
        });
        let llm_calls = state.calls.len() as u32;
        let overhead_us = (started.elapsed().as_micros() as u64).saturating_sub(state.model_time_us);
        let tools = state.executed.iter().map(|(c, o)| ToolUse { name: c.name.clone(), outcome: o.kind() }).collect();
        let trace = TurnTrace {
            router: serde_json::to_value(&decision).unwrap_or(Value::Null),
            calls: state.calls,
            tools: state.tools,
            end: end_label,
            withheld_claims: withheld,
            withdrawn_drafts: state.withdrawn_drafts,
            witness: state.witness,
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
            tools,
            llm_calls,
            trace,
        })
    }

    /// The online turn: one routing call, then the specialist loop. Falls back to the
    /// offline parser when no model answers before any tool ran.
    async fn online(
        &self,
        llm: &dyn ChatModel,
        conversation_id: &str,
        text: &str,
        now: DateTime<Utc>,
        events: Option<EventSink<'_>>,
        state: &mut TurnState,
    ) -> Result<(RouterDecision, Flow), StoreError> {
        let store = self.ctx.store.as_ref();
        let emit = |e: TurnEvent| {
            if let Some(sink) = events {
                sink(e)
            }
        };
        emit(TurnEvent::Status("routage".into()));
        let t = Instant::now();
        let decision = supervisor::route(llm, text).await;
        state.model_time_us += t.elapsed().as_micros() as u64;
        if decision.fallback == Some(supervisor::FallbackReason::ModelUnavailable) {
            let flow = self.offline(conversation_id, text, compose::OFFLINE_UNREACHABLE, state).await?;
            return Ok((decision, flow));
        }

        let history = store.recent_messages(conversation_id, HISTORY_MESSAGES).await?;
        let preferences = store.active_preferences(self.ctx.preferences_cap).await?;
        let mut messages =
            vec![Message::system(crate::prompts::specialist(decision.agent, now, self.ctx.tz, &preferences))];
        for (role, content) in history {
            messages.push(if role == "user" { Message::user(content) } else { Message::assistant(content, vec![]) });
        }
        messages.push(Message::user(text));
        let specs = tool_specs(&self.tools, decision.agent);

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
            // Streamed when someone watches (the time to first token is traced), but no
            // model text is shown before the turn's outcome is known: deltas are dropped.
            let on_stream = |_: crate::llm::StreamEvent| {};
            let t = Instant::now();
            let result = llm
                .chat(&request, events.map(|_| &on_stream as &(dyn Fn(crate::llm::StreamEvent) + Send + Sync)))
                .await;
            state.model_time_us += t.elapsed().as_micros() as u64;
            let response = match result {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(error = %e, "specialist model call failed");
                    state.calls.push(CallTrace::from_error(&e));
                    if state.executed.is_empty() {
                        // Nothing ran yet: the offline parser can still serve the request.
                        let flow = self.offline(conversation_id, text, compose::OFFLINE_UNREACHABLE, state).await?;
                        return Ok((decision, flow));
                    }
                    return Ok((decision, Flow::Loop(End::ModelFailed)));
                }
            };
            state.calls.push(CallTrace::from_response(&response));
            if response.tool_calls.is_empty() {
                return Ok((decision, Flow::Loop(End::Answered(response.content.clone()))));
            }
            // Text that came with tool calls is never an answer.
            if !response.content.trim().is_empty() {
                state.withdrawn_drafts.push(response.content.clone());
            }
            messages.push(Message::assistant(response.content.clone(), response.tool_calls.clone()));
            // The whole batch runs, in the order requested, before any cut.
            for call in &response.tool_calls {
                emit(TurnEvent::Status(format!("outil {}", call.name)));
                let outcome = self.run_tool(decision.agent, call, state).await;
                messages.push(Message::tool(call, tool_message_content(call, &outcome, &self.ctx)));
            }
            if state.first_incident.is_some() {
                return Ok((decision, Flow::Loop(End::Incident)));
            }
        }
        Ok((decision, Flow::Loop(End::CallCap)))
    }

    /// Records a write awaiting "oui" in this conversation.
    async fn set_pending(
        &self,
        conversation_id: &str,
        tool: &str,
        arguments: Value,
        question: &str,
    ) -> Result<(), StoreError> {
        self.ctx
            .store
            .set_pending(&crate::memory::PendingAction {
                conversation_id: conversation_id.to_string(),
                tool: tool.to_string(),
                arguments,
                question: question.to_string(),
                created_at: self.ctx.now(),
            })
            .await
    }

    /// The question that offers a write, naming the running session for the chrono.
    async fn question_for(&self, tool: &str, args: &Value) -> Result<String, StoreError> {
        if CHRONO_TOOLS.contains(&tool) {
            if let Some(session) = self.ctx.store.running_session().await? {
                return Ok(match tool {
                    "suspendre_session" => {
                        format!("Tu veux que je mette en pause la session de travail sur {} ?", session.projet)
                    }
                    "reprendre_session" => {
                        format!("Tu veux que je reprenne la session de travail sur {} ?", session.projet)
                    }
                    _ => format!("Tu veux que j'arrête la session de travail sur {} ?", session.projet),
                });
            }
        }
        Ok(crate::offline::confirmation_question(tool, args, self.ctx.now(), self.ctx.tz))
    }

    /// A bare "stop" or "pause": nothing touches the chrono before the user confirms;
    /// with no session running there is nothing to ask.
    async fn ask_before_chrono(
        &self,
        conversation_id: &str,
        tool: &'static str,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        state.witness = Some(WitnessTrace { tool: tool.to_string(), effect: "asked" });
        if tool != "reprendre_session" && self.ctx.store.running_session().await?.is_none() {
            return Ok(Flow::Direct(
                vec![compose::fixed("Aucune session de travail n'est en cours : je n'ai touché à rien.")],
                "bare_chrono",
            ));
        }
        let question = self.question_for(tool, &Value::Object(Default::default())).await?;
        self.set_pending(conversation_id, tool, Value::Object(Default::default()), &question).await?;
        Ok(Flow::Direct(vec![compose::fixed(&question)], "bare_chrono"))
    }

    /// The answer of an online turn, from its outcomes and the independent signals. When
    /// the model's words were withheld in a turn with no tool, code answers instead: the
    /// read the user asked for is run and told, the write they asked for is offered.
    async fn compose_loop(
        &self,
        conversation_id: &str,
        end: &End,
        decision: &RouterDecision,
        reading: &Reading,
        state: &mut TurnState,
    ) -> Result<Composed, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let witness = match reading.write() {
            Some((tool, args)) => {
                Some(Witness { tool, args: args.clone(), question: self.question_for(tool, args).await? })
            }
            None => None,
        };
        let signals = Signals { expected: decision.action, asked_write: witness.as_ref(), cues: reading.cues };
        let mut composed = compose::compose(&state.executed, end, signals, now, tz);
        if let (true, true, Some((tool, args))) =
            (state.executed.is_empty(), !composed.withheld.is_empty(), reading.read())
        {
            // The model answered a read without reading: code reads and tells it.
            let call = ToolCall { id: "witness".into(), name: tool.to_string(), arguments: args.to_string() };
            self.run_tool(agent_for(tool), &call, state).await;
            let withheld = std::mem::take(&mut composed.withheld);
            composed = compose::compose(&state.executed, end, signals, now, tz);
            composed.withheld = withheld;
            state.witness = Some(WitnessTrace { tool: tool.to_string(), effect: "read" });
        }
        if composed.offered {
            if let Some(w) = &witness {
                self.set_pending(conversation_id, w.tool, w.args.clone(), &w.question).await?;
                state.witness = Some(WitnessTrace { tool: w.tool.to_string(), effect: "offered" });
            }
        }
        Ok(composed)
    }

    /// The offline path: the deterministic parser, the same tools and reports, a question
    /// before an unsure write, and an honest refusal for anything else.
    async fn offline(
        &self,
        conversation_id: &str,
        text: &str,
        why: &'static str,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        use crate::offline::parse;
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        Ok(match parse(text, now, tz) {
            OfflineAction::Unsupported => Flow::Direct(
                vec![compose::fixed(&format!("{why} {}", compose::OFFLINE_UNSUPPORTED))],
                "offline_unsupported",
            ),
            OfflineAction::Tool { name, args, confident } => {
                if !confident && compose::WRITE_TOOLS.contains(&name) {
                    let question = self.question_for(name, &args).await?;
                    self.set_pending(conversation_id, name, args, &question).await?;
                    Flow::Direct(vec![compose::fixed(why), compose::fixed(&question)], "offline_confirm")
                } else {
                    let call = ToolCall { id: "offline".into(), name: name.to_string(), arguments: args.to_string() };
                    self.run_tool(agent_for(name), &call, state).await;
                    Flow::Direct(
                        std::iter::once(compose::fixed(why))
                            .chain(state.executed.iter().map(|(c, o)| compose::report_part(c, o, now, tz)))
                            .collect(),
                        "offline",
                    )
                }
            }
        })
    }
}
