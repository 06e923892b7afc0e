//! One turn, end to end: the supervisor routes once, the specialist loop runs the model's
//! tool calls in order against the store (at most five model calls, cut after the batch
//! of the first incident), and the answer is composed by code from what really happened.

pub mod claims;
pub mod compose;
pub mod local;
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
use crate::report::compose_written;
use crate::tools::{AgentKind, Outcome, ToolBox, ToolContext};
use crate::understand::{understand, Command, Doubt, Reading, Target, Told, ToolCommand, Understanding};
pub use compose::{AnswerPart, Composed, End, PartSource, Signals, Witness};
pub use supervisor::{Domain, ExpectedAction, RouterDecision};
use trace::{CallTrace, ReadingTrace, ToolTrace, TurnTrace, WitnessTrace};

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
    /// How the turn ended, for exit codes: a refusal, a failure (a tool's breakdown, a model
    /// that stopped mid-turn, the call cap), or done.
    pub fn status(&self) -> TurnStatus {
        match (&self.incident, self.trace.end) {
            (Some(Incident { kind: IncidentKind::Refus, .. }), _) => TurnStatus::Refused,
            (Some(Incident { kind: IncidentKind::Panne, .. }), _) | (_, "model_failed" | "call_cap") => {
                TurnStatus::Failed
            }
            _ => TurnStatus::Done,
        }
    }

    pub fn to_ask_json(&self) -> Value {
        json!({
            "conversation": self.conversation_id,
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

/// How a turn ended, as `arthur ask` exits: 0, 3 or 4, like `arthur tool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnStatus {
    Done,
    Refused,
    Failed,
}

/// What a turn reports while it runs (web stream, terminal): what Arthur is doing, never
/// a model draft — model text is shown only once the turn's outcome is known.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// "routage", "réflexion"…
    Status(String),
    /// A tool is running (its internal name: the text shown is [`TurnEvent::text`]).
    Tool(String),
}

impl TurnEvent {
    /// What the user sees: « routage », « outil : créer la note ».
    pub fn text(&self) -> String {
        match self {
            TurnEvent::Status(text) => text.clone(),
            TurnEvent::Tool(name) => format!("outil : {}", crate::report::labels::action(name)),
        }
    }
}

pub type EventSink<'a> = &'a (dyn Fn(TurnEvent) + Send + Sync);

/// Runs turns. Turns of one conversation are serialised; different conversations run
/// concurrently.
pub struct TurnEngine {
    llm: Option<Arc<dyn ChatModel>>,
    tools: ToolBox,
    ctx: ToolContext,
    conversation_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// A command the grammar is sure of runs with no model call, online too
    /// (`ARTHUR_LOCAL_FIRST`, on by default).
    local_first: bool,
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
    reading: Option<ReadingTrace>,
    /// The language model's state as this turn met it (see [`TurnTrace::connectivity`]).
    connectivity: Option<&'static str>,
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

/// The language model's states, as traced and told.
const ONLINE: &str = "online";
const OFFLINE: &str = "offline";
const UNREACHABLE: &str = "unreachable";
/// How far back a conversation is searched for the state last told.
const CONNECTIVITY_LOOKBACK: u32 = 50;

/// Chrono tools a bare word ("stop", "pause") may stand for.
const CHRONO_TOOLS: [&str; 3] = ["suspendre_session", "reprendre_session", "arreter_session"];

/// What the user's words say, read by code before any model: the grammar's reading.
struct Heard {
    understanding: Understanding,
}

impl Heard {
    /// A bare chrono word: asked before it touches the chrono, whoever answers.
    fn bare_chrono(&self) -> Option<&'static str> {
        match &self.understanding.reading {
            Reading::Unsure { command: Command::Tool(t), doubt: Doubt::AlwaysAsks }
                if CHRONO_TOOLS.contains(&t.name()) =>
            {
                Some(t.name())
            }
            _ => None,
        }
    }

    /// The write the user's words asked for, when the grammar is sure of it: the only
    /// witness of intent the turn trusts.
    fn write(&self) -> Option<(&'static str, Value)> {
        match self.understanding.sure() {
            Some(Command::Tool(t)) if compose::WRITE_TOOLS.contains(&t.name()) => Some((t.name(), t.arguments()?)),
            _ => None,
        }
    }

    /// The read the user's words asked for, when the grammar is sure of it.
    fn read(&self) -> Option<(&'static str, Value)> {
        match self.understanding.sure() {
            Some(Command::Tool(t)) if !compose::WRITE_TOOLS.contains(&t.name()) => Some((t.name(), t.arguments()?)),
            _ => None,
        }
    }
}

/// What the model re-reads after a tool ran: the code-composed report.
fn tool_message_content(call: &ToolCall, outcome: &Outcome, ctx: &ToolContext) -> String {
    // The user's text names no internals; the model is told which argument to fix.
    let detail = match outcome {
        Outcome::Refused(crate::tools::Refusal::InvalidArguments(e)) => format!(" (argument « {} »)", e.field),
        _ => String::new(),
    };
    format!("[{}] {}{detail}", outcome.kind(), compose_written(&call.name, outcome, ctx.tz))
}

impl TurnEngine {
    pub fn new(llm: Option<Arc<dyn ChatModel>>, ctx: ToolContext) -> Self {
        Self { llm, tools: ToolBox::new(), ctx, conversation_locks: Mutex::new(HashMap::new()), local_first: true }
    }

    /// Whether a sure command runs without the model when one is configured.
    pub fn with_local_first(mut self, on: bool) -> Self {
        self.local_first = on;
        self
    }

    pub fn local_first(&self) -> bool {
        self.local_first
    }

    /// The conversation a bare reply belongs to: the last one, when its last answer was a
    /// question asked less than [`PENDING_TTL_MINUTES`] ago.
    pub async fn conversation_awaiting_reply(&self) -> Result<Option<String>, StoreError> {
        let now = self.ctx.now();
        let last = self.ctx.store.list_turns(1).await?;
        Ok(last.into_iter().next().and_then(|t| {
            let asked = t.written.as_deref().is_some_and(|w| w.trim_end().ends_with('?'));
            let recent = t.finished_at.is_some_and(|f| now - f <= chrono::Duration::minutes(PENDING_TTL_MINUTES));
            (asked && recent && t.status == "complete").then_some(t.conversation_id)
        }))
    }

    /// The names the grammar cannot know by itself, read from the store.
    pub async fn lexicon(&self) -> Result<arthur_french::Lexicon, StoreError> {
        let store = self.ctx.store.as_ref();
        let projects = store.list_projets().await?.into_iter().map(|p| p.nom).collect();
        let mut lists: Vec<String> = crate::understand::BUILTIN_LISTS.iter().map(|s| s.to_string()).collect();
        for l in store.list_names().await? {
            if !lists.iter().any(|x| crate::text::normalise(x) == crate::text::normalise(&l)) {
                lists.push(l);
            }
        }
        let timers = store.timer_names().await?;
        Ok(arthur_french::Lexicon { projects, lists, timers })
    }

    /// How the grammar reads an utterance against this store, now.
    pub async fn understand(&self, text: &str) -> Result<Understanding, StoreError> {
        let lexicon = self.lexicon().await?;
        Ok(understand(text, self.ctx.now(), self.ctx.tz, &lexicon))
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
        self.run_heard(conversation, text, false, events).await
    }

    /// [`Self::run`] for an utterance the ears heard with doubt (`misheard`: whisper itself
    /// weighed some word of it low, `crate::ears::Confidence`): a command that would write
    /// is asked first (« J'ai peut-être mal entendu. Tu veux que je… ? »), never run.
    pub async fn run_heard(
        &self,
        conversation: Option<&str>,
        text: &str,
        misheard: bool,
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
        let taken = store.take_pending(&conversation_id).await?;
        let had_pending =
            taken.as_ref().is_some_and(|p| now - p.created_at <= chrono::Duration::minutes(PENDING_TTL_MINUTES));
        let pending = match taken {
            Some(p) if now - p.created_at <= chrono::Duration::minutes(PENDING_TTL_MINUTES) => {
                crate::understand::yes_no(text).map(|yes| (p, yes))
            }
            _ => None,
        };

        let t_read = Instant::now();
        let mut reading = Heard { understanding: self.understand(text).await? };
        if misheard {
            reading.understanding.reading = crate::ears::doubted(reading.understanding.reading);
        }
        state.reading = Some(ReadingTrace::of(&reading.understanding, t_read.elapsed().as_micros() as u64));
        let local = self.local_first || self.llm.is_none();
        let mut label = LabelSource::Fallback;
        let local_decision = |reason| {
            let mut d = supervisor::fallback(text, reason, String::new(), None);
            if let Some(agent) = reading.understanding.agent.as_deref() {
                d.agent = if agent == "mentor" { AgentKind::Mentor } else { AgentKind::Intendant };
            }
            if let Some(domain) = reading.understanding.domain.as_deref().and_then(Domain::parse_label) {
                d.domain = domain;
            }
            d
        };
        // A timer ringing is stopped by « c'est bon », « stop »…, before anything else.
        let ringing = if crate::understand::acknowledges(text) { store.ringing_timers().await? } else { Vec::new() };
        let (decision, flow) = match (pending, &self.llm) {
            (_, _) if !ringing.is_empty() => {
                let done = store.acknowledge_timers(None, now).await?;
                let labels: Vec<String> = done.iter().map(crate::report::timer_label).collect();
                let spoken: Vec<String> = done.iter().map(crate::report::spoken_timer_label).collect();
                let part = if done.len() == 1 {
                    compose::code(format!("Minuteur {} arrêté.", labels[0]), format!("Minuteur {} arrêté.", spoken[0]))
                } else {
                    compose::code(
                        format!("Minuteurs arrêtés : {}.", labels.join(", ")),
                        format!("Minuteurs arrêtés : {}.", spoken.join(", ")),
                    )
                };
                (local_decision(supervisor::FallbackReason::Local), Flow::Direct(vec![part], "acknowledged"))
            }
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
            // The clock and help are told by code, never by a model; courtesy too when the
            // grammar goes first.
            (None, _)
                if matches!(
                    reading.understanding.sure(),
                    Some(Command::Told(Told::Time | Told::Date { .. } | Told::Help | Told::Cancel))
                ) || (local && matches!(reading.understanding.sure(), Some(Command::Told(_)))) =>
            {
                let Some(Command::Told(t)) = reading.understanding.sure() else { unreachable!("matched above") };
                let parts = local::told(*t, now, self.ctx.tz, self.llm.is_some(), had_pending);
                (local_decision(supervisor::FallbackReason::Local), Flow::Direct(parts, "told"))
            }
            (None, _) if local && reading.understanding.is_command() => {
                let flow = self.run_understood(&conversation_id, &reading.understanding, &mut state).await?;
                (local_decision(supervisor::FallbackReason::Local), flow)
            }
            (None, None) => {
                state.connectivity = Some(OFFLINE);
                let decision =
                    supervisor::fallback(text, supervisor::FallbackReason::ModelUnavailable, String::new(), None);
                (decision, Flow::Direct(vec![compose::fixed(local::NOT_UNDERSTOOD_OFFLINE)], "offline_unsupported"))
            }
            (None, Some(llm)) => {
                let (decision, flow) =
                    self.online(llm.as_ref(), &conversation_id, text, &reading, now, events, &mut state).await?;
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
        let (parts, connectivity_told) =
            self.tell_connectivity(&conversation_id, state.connectivity, end_label, parts).await?;
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
            reading: state.reading,
            overhead_us,
            connectivity: state.connectivity,
            connectivity_told,
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

    /// Being offline is told once per conversation, and again when the state changes: the
    /// full sentence the first time a request needs the model and none answers, a short one
    /// after; one sentence when the model answers again.
    async fn tell_connectivity(
        &self,
        conversation_id: &str,
        now: Option<&'static str>,
        end: &str,
        mut parts: Vec<AnswerPart>,
    ) -> Result<(Vec<AnswerPart>, Option<&'static str>), StoreError> {
        let Some(now) = now else { return Ok((parts, None)) };
        let traces = self.ctx.store.conversation_traces(conversation_id, CONNECTIVITY_LOOKBACK).await?;
        let known = traces.iter().find_map(|t| t["connectivity_told"].as_str()).unwrap_or(ONLINE);
        let told = match (now, end) {
            (ONLINE, _) if known != ONLINE => {
                parts.insert(0, compose::fixed(local::MODEL_BACK));
                Some(ONLINE)
            }
            (OFFLINE | UNREACHABLE, "offline_unsupported") if known == now => {
                parts = vec![compose::fixed(local::NOT_UNDERSTOOD_AGAIN)];
                None
            }
            (OFFLINE | UNREACHABLE, "offline_unsupported" | "model_failed") => Some(now),
            _ => None,
        };
        Ok((parts, told))
    }

    /// The online turn: one routing call, then the specialist loop. Falls back to the
    /// offline parser when no model answers before any tool ran.
    #[allow(clippy::too_many_arguments)]
    async fn online(
        &self,
        llm: &dyn ChatModel,
        conversation_id: &str,
        text: &str,
        reading: &Heard,
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
        state.connectivity = Some(ONLINE);
        if decision.fallback == Some(supervisor::FallbackReason::ModelUnavailable) {
            state.connectivity = Some(UNREACHABLE);
            let flow = self.unreachable(conversation_id, reading, state).await?;
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
                    state.connectivity = Some(UNREACHABLE);
                    if state.executed.is_empty() {
                        // Nothing ran yet: the grammar can still serve the request.
                        let flow = self.unreachable(conversation_id, reading, state).await?;
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
                emit(TurnEvent::Tool(call.name.clone()));
                let outcome = self.run_tool(decision.agent, call, state).await;
                messages.push(Message::tool(call, tool_message_content(call, &outcome, &self.ctx)));
            }
            if state.first_incident.is_some() {
                return Ok((decision, Flow::Loop(End::Incident)));
            }
            // The outcome ends the turn: a write's receipt, or a read told by code. The model
            // gets the word back only to act on what it read, when a write was expected and
            // none ran yet.
            let wrote = state.executed.iter().any(|(c, _)| compose::WRITE_TOOLS.contains(&c.name.as_str()));
            if wrote || decision.action != Some(ExpectedAction::Ecriture) {
                return Ok((decision, Flow::Loop(End::Answered(String::new()))));
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
        Ok(crate::turn::local::question_from_call(tool, args, self.ctx.now(), self.ctx.tz))
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
        reading: &Heard,
        state: &mut TurnState,
    ) -> Result<Composed, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let witness = match reading.write() {
            Some((tool, args)) => {
                let question = self.question_for(tool, &args).await?;
                Some(Witness { tool, args, question })
            }
            None => None,
        };
        let signals = Signals { expected: decision.action, asked_write: witness.as_ref() };
        let mut composed = compose::compose(&state.executed, end, signals, now, tz);
        let told_facts = composed.withheld.iter().any(|s| claims::claim(s) == Some(claims::ClaimKind::StoredFact));
        if let (true, true, Some((tool, args))) = (state.executed.is_empty(), told_facts, reading.read()) {
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

    /// No model answered before any tool ran: what the grammar understood is still done
    /// (sure) or asked (unsure); anything else is said plainly.
    async fn unreachable(
        &self,
        conversation_id: &str,
        reading: &Heard,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        if reading.understanding.is_command() {
            return self.run_understood(conversation_id, &reading.understanding, state).await;
        }
        Ok(Flow::Direct(vec![compose::fixed(local::NOT_UNDERSTOOD_UNREACHABLE)], "offline_unsupported"))
    }

    /// A command the grammar read, without any model: run when sure, asked when not, and
    /// the missing piece named when nothing can be proposed.
    async fn run_understood(
        &self,
        conversation_id: &str,
        u: &Understanding,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let agent = match u.agent.as_deref() {
            Some("mentor") => AgentKind::Mentor,
            _ => AgentKind::Intendant,
        };
        match &u.reading {
            Reading::Sure(Command::Tool(cmd)) => {
                let calls = cmd.calls();
                if calls.is_empty() {
                    return self.ask_resolving(conversation_id, cmd, Doubt::GuessedTarget).await;
                }
                for (name, args) in calls {
                    let call = ToolCall { id: "local".into(), name: name.to_string(), arguments: args.to_string() };
                    let agent = if ToolBox::names_for(agent).contains(&name) { agent } else { agent_for(name) };
                    self.run_tool(agent, &call, state).await;
                }
                Ok(Flow::Direct(
                    state.executed.iter().map(|(c, o)| compose::report_part(c, o, now, tz)).collect(),
                    "local",
                ))
            }
            Reading::Sure(Command::Told(t)) => {
                Ok(Flow::Direct(local::told(*t, now, tz, self.llm.is_some(), false), "told"))
            }
            Reading::Unsure { command: Command::Tool(cmd), doubt } => {
                self.ask_resolving(conversation_id, cmd, *doubt).await
            }
            Reading::Unsure { command: Command::Told(t), .. } => {
                Ok(Flow::Direct(local::told(*t, now, tz, self.llm.is_some(), false), "told"))
            }
            Reading::Incomplete { intent, doubt } => {
                Ok(Flow::Direct(vec![compose::fixed(&local::incomplete(intent, *doubt))], "incomplete"))
            }
            Reading::NotCommand => {
                Ok(Flow::Direct(vec![compose::fixed(local::NOT_UNDERSTOOD_OFFLINE)], "offline_unsupported"))
            }
        }
    }

    /// Asks before an unsure command; a target described instead of numbered is looked up
    /// first, so the question names the note or reminder it would touch.
    async fn ask_resolving(&self, conversation_id: &str, cmd: &ToolCommand, doubt: Doubt) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let (cmd, named) = match self.resolve_target(cmd).await? {
            Resolved::Found(c, named) => (c, named),
            Resolved::Say(text) => return Ok(Flow::Direct(vec![compose::fixed(&text)], "asked")),
        };
        if let Some(texte) = named {
            // The target was guessed from a description: the question says which one.
            let question = format!("Tu veux que je {} « {texte} » ?", local::describe(&cmd, now, tz));
            if let Some(args) = cmd.arguments() {
                self.set_pending(conversation_id, cmd.name(), args, &question).await?;
            }
            return Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"));
        }
        if let ToolCommand::CreerRappel { .. } = cmd {
            if matches!(doubt, Doubt::Past | Doubt::NotPositive) {
                return Ok(Flow::Direct(vec![compose::fixed(&local::incomplete("creer_rappel", doubt))], "incomplete"));
            }
        }
        if let ToolCommand::DemarrerSession { projet } = &cmd {
            if doubt == Doubt::UnknownName {
                // A project the store does not know: offered to be created first.
                let create = ToolCommand::CreerProjet { nom: projet.clone(), description: None, phase: None };
                let question = format!(
                    "Le projet « {projet} » n'existe pas encore. Tu veux que je le crée ? Tu pourras ensuite démarrer une session dessus."
                );
                if let Some(args) = create.arguments() {
                    self.set_pending(conversation_id, create.name(), args, &question).await?;
                }
                return Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"));
            }
        }
        if let ToolCommand::CreerProjet { nom, .. } = &cmd {
            if doubt == Doubt::Ambiguous {
                return Ok(Flow::Direct(
                    vec![compose::fixed(&format!("Le projet {nom} existe déjà : je n'ai rien créé."))],
                    "asked",
                ));
            }
        }
        let question = if CHRONO_TOOLS.contains(&cmd.name()) {
            self.question_for(cmd.name(), &Value::Object(Default::default())).await?
        } else if let ToolCommand::ViderListe { liste } = &cmd {
            // Clearing is always asked, with what would go.
            match self.ctx.store.list(liste).await? {
                None => {
                    return Ok(Flow::Direct(
                        vec![compose::fixed(&format!("Je ne connais pas de liste « {liste} » : je n'ai rien vidé."))],
                        "asked",
                    ))
                }
                Some(l) if l.elements.is_empty() => {
                    return Ok(Flow::Direct(
                        vec![compose::fixed(&format!("La liste {} est déjà vide : je n'ai rien fait.", l.nom))],
                        "asked",
                    ))
                }
                Some(l) => {
                    let n = l.elements.len();
                    let (s, verb) = if n > 1 { ("s", "seraient") } else { ("", "serait") };
                    format!(
                        "Tu veux que je vide la liste {} ? {n} élément{s} en {verb} retiré{s} : {}.",
                        l.nom,
                        l.elements.iter().take(5).map(|e| e.texte.as_str()).collect::<Vec<_>>().join(", ")
                    )
                }
            }
        } else {
            local::question(&cmd, doubt, now, tz)
        };
        if let Some(args) = cmd.arguments() {
            self.set_pending(conversation_id, cmd.name(), args, &question).await?;
        }
        Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"))
    }

    /// A note or reminder described (« sur le plombier ») or « le dernier »: the one it
    /// names, or what to say when none or several match.
    async fn resolve_target(&self, cmd: &ToolCommand) -> Result<Resolved, StoreError> {
        let store = self.ctx.store.as_ref();
        let (target, note) = match cmd {
            ToolCommand::SupprimerNote { target } => (target, true),
            ToolCommand::SupprimerRappel { target } | ToolCommand::MarquerRappelFait { target } => (target, false),
            other => return Ok(Resolved::Found(other.clone(), None)),
        };
        let with_id = |id: i64| match cmd {
            ToolCommand::SupprimerNote { .. } => ToolCommand::SupprimerNote { target: Target::Id(id) },
            ToolCommand::SupprimerRappel { .. } => ToolCommand::SupprimerRappel { target: Target::Id(id) },
            _ => ToolCommand::MarquerRappelFait { target: Target::Id(id) },
        };
        let what = if note { "note" } else { "rappel" };
        let items: Vec<(i64, String)> = if note {
            store.list_notes(None).await?.into_iter().map(|n| (n.id, n.texte)).collect()
        } else {
            let include_done = matches!(cmd, ToolCommand::SupprimerRappel { .. });
            store.list_rappels(include_done).await?.into_iter().map(|r| (r.id, r.texte)).collect()
        };
        let found: Vec<&(i64, String)> = match target {
            Target::Id(_) => return Ok(Resolved::Found(cmd.clone(), None)),
            Target::Matching(words) => items.iter().filter(|(_, t)| crate::tools::contains_words(t, words)).collect(),
            Target::Last => items.iter().max_by_key(|(id, _)| *id).into_iter().collect(),
            Target::All => {
                return Ok(Resolved::Say(format!(
                "Je ne supprime qu'un {what} à la fois, et je demande avant : dis-moi son numéro. Je n'ai rien fait."
            )))
            }
            Target::Unnamed => {
                return Ok(Resolved::Say(local::incomplete(cmd.name(), Doubt::Missing)));
            }
        };
        let label = if note { "note" } else { "rappel" };
        match found.as_slice() {
            [] => Ok(Resolved::Say(match target {
                Target::Matching(words) => {
                    format!("Aucun{} {label} ne parle de « {words} » : je n'ai rien fait.", if note { "e" } else { "" })
                }
                _ => format!("Il n'y a aucun{} {label} : je n'ai rien fait.", if note { "e" } else { "" }),
            })),
            [(id, texte)] => Ok(Resolved::Found(with_id(*id), Some(texte.clone()))),
            many => {
                let list = many.iter().take(5).map(|(id, t)| format!("n°{id} « {t} »")).collect::<Vec<_>>().join(", ");
                let which = if note { "laquelle" } else { "lequel" };
                Ok(Resolved::Say(format!(
                    "Plusieurs {label}s correspondent : {list}. Dis-moi {which} par son numéro ; je n'ai rien fait."
                )))
            }
        }
    }
}

/// A described target, looked up.
enum Resolved {
    /// The command with its target's number, and the target's text when it was guessed.
    Found(ToolCommand, Option<String>),
    Say(String),
}
