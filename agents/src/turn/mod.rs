//! One turn, end to end: the supervisor routes once, the specialist loop runs the model's
//! tool calls in order against the store (at most five model calls, cut after the batch
//! of the first incident), and the answer is composed by code from what really happened.

pub mod claims;
pub mod compose;
pub mod frame;
pub mod local;
pub mod recall;
pub mod supervisor;
pub mod trace;
pub mod undo;

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
use crate::understand::{understand, understand_as, Command, Doubt, Reading, Target, Told, ToolCommand, Understanding};
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

/// How the words of a turn reached it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    /// Typed (terminal, web): a free text is stored character for character.
    #[default]
    Typed,
    /// A transcript (the voice loop, Home Assistant): a free text loses its hesitations.
    Heard,
    /// A transcript the ears doubted: a write is asked first.
    Doubted,
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
pub(crate) fn agent_for(tool: &str) -> AgentKind {
    if crate::tools::ToolName::from_wire(tool).is_some_and(|t| t.spec().agents == crate::tools::Agents::Mentor) {
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
    /// A question about the memory (see [`TurnTrace::memory`]).
    memory: Option<recall::MemoryTrace>,
    /// The turn « annule » took back.
    undid: Option<i64>,
    /// The words of the turn, and whether they were heard (a transcript).
    said: String,
    heard: bool,
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

/// What the user's words say, read by code before any model: the grammar's reading, and
/// whether they ask about the user's own memory.
struct Heard {
    understanding: Understanding,
    topic: Option<arthur_french::topic::Topic>,
    memory: Option<recall::MemoryAsk>,
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
    fn write(&self) -> Option<(crate::tools::ToolName, Value)> {
        match self.understanding.sure() {
            Some(Command::Tool(t)) if t.tool().writes() => Some((t.tool(), t.arguments()?)),
            _ => None,
        }
    }

    /// The read the user's words asked for, when the grammar is sure of it.
    fn read(&self) -> Option<(&'static str, Value)> {
        match self.understanding.sure() {
            Some(Command::Tool(t)) if !t.tool().writes() => Some((t.name(), t.arguments()?)),
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
        self.run_args(agent, call.clone(), &raw, state).await
    }

    /// A call code made (grammar, frame, undo, memory reads): its arguments go to the tool
    /// as they are, not through their text; the text is kept only for the trace and the
    /// model's history.
    async fn run_value(&self, agent: AgentKind, id: &str, name: &str, args: Value, state: &mut TurnState) -> Outcome {
        let call = ToolCall { id: id.into(), name: name.to_string(), arguments: args.to_string() };
        self.run_args(agent, call, &args, state).await
    }

    async fn run_args(&self, agent: AgentKind, call: ToolCall, raw: &Value, state: &mut TurnState) -> Outcome {
        let t = Instant::now();
        let outcome = self.tools.invoke_as(agent, &self.ctx, &call.name, raw).await;
        state.record(call, outcome.clone(), t.elapsed().as_micros() as u64);
        outcome
    }

    /// Runs one turn in `conversation` (a new one when `None`) on typed words.
    pub async fn run(
        &self,
        conversation: Option<&str>,
        text: &str,
        events: Option<EventSink<'_>>,
    ) -> Result<TurnResult, StoreError> {
        self.run_from(conversation, text, Source::Typed, events).await
    }

    /// [`Self::run`] on a transcript: a free text it stores loses its hesitations
    /// (« euh »), never a word of content. `misheard`: the ears heard it with doubt (whisper
    /// itself weighed some word of it low, `crate::ears::Confidence`): a command that would
    /// write is asked first (« J'ai peut-être mal entendu. Tu veux que je… ? »), never run.
    pub async fn run_heard(
        &self,
        conversation: Option<&str>,
        text: &str,
        misheard: bool,
        events: Option<EventSink<'_>>,
    ) -> Result<TurnResult, StoreError> {
        let source = if misheard { Source::Doubted } else { Source::Heard };
        self.run_from(conversation, text, source, events).await
    }

    /// Runs one turn on words typed or heard.
    pub async fn run_from(
        &self,
        conversation: Option<&str>,
        text: &str,
        source: Source,
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
        let mut state = TurnState { said: text.to_string(), heard: source != Source::Typed, ..TurnState::default() };

        // A write awaiting confirmation is answered first, deterministically; any other
        // message drops it.
        let taken = store.take_pending(&conversation_id).await?;
        let had_pending =
            taken.as_ref().is_some_and(|p| now - p.created_at <= chrono::Duration::minutes(PENDING_TTL_MINUTES));
        let local_now = now.with_timezone(&self.ctx.tz).naive_local();
        let lexicon = self.lexicon().await?;
        // The frame of Arthur's last question (or of the write just done): the words may
        // answer it; anything else is a new turn.
        let pending = match taken {
            Some(p) if now - p.created_at <= chrono::Duration::minutes(PENDING_TTL_MINUTES) => {
                let f = frame::Frame::from_pending(&p.tool, &p.arguments);
                match frame::reply(&f, text, source != Source::Typed, local_now, &lexicon) {
                    frame::Reply::Other => None,
                    answer => Some((f, answer)),
                }
            }
            _ => None,
        };

        let t_read = Instant::now();
        let heard = source != Source::Typed;
        let mut understanding = understand_as(text, heard, now, self.ctx.tz, &lexicon);
        if source == Source::Doubted {
            understanding.reading = crate::ears::doubted(understanding.reading);
        }
        let topic = arthur_french::topic::topic(
            &arthur_french::Words::new(text),
            now.with_timezone(&self.ctx.tz).naive_local(),
            &lexicon,
        );
        let memory = recall::MemoryAsk::of(text, &understanding, topic.clone());
        let reading = Heard { understanding, topic, memory };
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
        // A timer or an alarm ringing is stopped by « c'est bon », « stop »…, or said again
        // later on « encore cinq minutes », before anything else.
        let ringing = if crate::understand::acknowledges(text) || crate::understand::snooze(text).is_some() {
            store.ringing_timers().await?
        } else {
            Vec::new()
        };
        let (decision, flow) = match (pending, &self.llm) {
            (_, _) if !ringing.is_empty() => {
                let (part, label) = self.answer_ringing(text).await?;
                (local_decision(supervisor::FallbackReason::Local), Flow::Direct(vec![part], label))
            }
            (Some((f, answer)), _) => {
                let mut decision =
                    supervisor::fallback(text, supervisor::FallbackReason::Confirmation, String::new(), None);
                decision.agent = agent_for(&f.tool);
                let doubted = source == Source::Doubted;
                let flow = self.answer_frame(&conversation_id, turn_id, f, answer, doubted, &mut state).await?;
                (decision, flow)
            }
            (None, _) if reading.bare_chrono().is_some() => {
                // "stop", "pause": may be meant for the speech; the chrono is asked first.
                let tool = reading.bare_chrono().unwrap_or("arreter_session");
                let decision = supervisor::fallback(text, supervisor::FallbackReason::BareCommand, String::new(), None);
                let flow = self.ask_before_chrono(&conversation_id, tool, &mut state).await?;
                (decision, flow)
            }
            // « annule », « oublie ça » with no question pending: the last write is taken
            // back, or code says plainly that nothing was.
            (None, _) if matches!(reading.understanding.sure(), Some(Command::Told(Told::Cancel))) => {
                let flow = self.undo_last(&conversation_id, turn_id, &mut state).await?;
                (local_decision(supervisor::FallbackReason::Local), flow)
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
            (None, _) if local && reading.understanding.is_command() && reading.memory.is_none() => {
                let flow = self.run_understood(&conversation_id, &reading.understanding, &mut state).await?;
                (local_decision(supervisor::FallbackReason::Local), flow)
            }
            // The memory asked about, and the grammar sure of its read, or no model: code
            // reads and tells.
            (None, llm)
                if reading.memory.as_ref().is_some_and(|m| {
                    llm.is_none()
                        || (local
                            && matches!(m.asked, recall::Asked::Grammar(_))
                            && reading.understanding.sure().is_some())
                }) =>
            {
                if llm.is_none() {
                    state.connectivity = Some(OFFLINE);
                }
                let ask = reading.memory.clone().expect("matched above");
                let mut decision = local_decision(supervisor::FallbackReason::Local);
                decision.agent = ask.agent(decision.agent);
                let flow = self.recall_by_code(&ask, "code", &mut state).await?;
                (decision, flow)
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
            memory: state.memory,
            undo: undo::steps(&state.executed),
            undid: state.undid,
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

        // A question about the user's memory, from the words, or the router's `lecture`
        // when the words said nothing else: answered by a read, never by the model's text.
        let router_said_read = decision.action == Some(ExpectedAction::Lecture);
        let memory = reading.memory.clone().or_else(|| {
            router_said_read
                .then(|| recall::MemoryAsk::from_router(text, &reading.understanding, reading.topic.clone()))
                .flatten()
        });
        if let Some(ask) = memory {
            let flow = self.recall_online(llm, conversation_id, text, &ask, &decision, now, events, state).await?;
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
                tool_choice: Default::default(),
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
            let wrote = state.executed.iter().any(|(c, _)| crate::tools::writes(&c.name));
            if wrote || decision.action != Some(ExpectedAction::Ecriture) {
                return Ok((decision, Flow::Loop(End::Answered(String::new()))));
            }
        }
        Ok((decision, Flow::Loop(End::CallCap)))
    }

    /// A question about the memory, online: the model chooses among the read tools (and
    /// must choose one); its text never reaches the user. When it reads nothing, code
    /// reads; when no model answers, code reads too.
    #[allow(clippy::too_many_arguments)]
    async fn recall_online(
        &self,
        llm: &dyn ChatModel,
        conversation_id: &str,
        text: &str,
        ask: &recall::MemoryAsk,
        decision: &RouterDecision,
        now: DateTime<Utc>,
        events: Option<EventSink<'_>>,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        let store = self.ctx.store.as_ref();
        if let Some(sink) = events {
            sink(TurnEvent::Status("lecture de ta mémoire".into()));
        }
        let agent = ask.agent(decision.agent);
        let history = store.recent_messages(conversation_id, HISTORY_MESSAGES).await?;
        let preferences = store.active_preferences(self.ctx.preferences_cap).await?;
        let mut messages = vec![Message::system(crate::prompts::specialist(agent, now, self.ctx.tz, &preferences))];
        for (role, content) in history {
            messages.push(if role == "user" { Message::user(content) } else { Message::assistant(content, vec![]) });
        }
        messages.push(Message::user(text));
        let specs: Vec<ToolSpec> =
            tool_specs(&self.tools, agent).into_iter().filter(|t| recall::is_read(&t.name)).collect();
        let request = ChatRequest {
            role: ModelRole::Chat,
            messages,
            tools: specs,
            json_mode: false,
            tool_choice: crate::llm::ToolChoice::Required,
            temperature: Some(0.3),
            max_tokens: Some(800),
        };
        let t = Instant::now();
        let result = llm.chat(&request, None).await;
        state.model_time_us += t.elapsed().as_micros() as u64;
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "specialist model call failed");
                state.calls.push(CallTrace::from_error(&e));
                state.connectivity = Some(UNREACHABLE);
                return self.recall_by_code(ask, "code", state).await;
            }
        };
        state.calls.push(CallTrace::from_response(&response));
        if response.tool_calls.is_empty() {
            // Text where a read was required: never shown; code reads instead.
            if !response.content.trim().is_empty() {
                state.withdrawn_drafts.push(response.content.clone());
            }
            return self.recall_by_code(ask, "code", state).await;
        }
        if !response.content.trim().is_empty() {
            state.withdrawn_drafts.push(response.content.clone());
        }
        for call in &response.tool_calls {
            if let Some(sink) = events {
                sink(TurnEvent::Tool(call.name.clone()));
            }
            if recall::is_read(&call.name) || self.tools.get(&call.name).is_none() {
                self.run_tool(agent, call, state).await;
            } else {
                // A write asked in answer to a question: not run.
                let name = self.tools.get(&call.name).map(|t| t.name()).unwrap_or("outil");
                let refused = Outcome::Refused(crate::tools::Refusal::ToolNotAllowed { name, agent: agent.as_str() });
                state.record(call.clone(), refused, 0);
            }
        }
        state.memory = Some(ask.trace("model"));
        Ok(self.tell_reads(ask, state))
    }

    /// Code runs the reads of a memory question itself and tells what they found.
    async fn recall_by_code(
        &self,
        ask: &recall::MemoryAsk,
        reads_by: &'static str,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        for (name, args) in ask.code_reads(self.ctx.now(), self.ctx.tz) {
            self.run_value(agent_for(name), "memory", name, args, state).await;
        }
        state.memory = Some(ask.trace(reads_by));
        Ok(self.tell_reads(ask, state))
    }

    /// What the reads of a memory question found, told by code; when they found nothing,
    /// or nothing could be read, code says so.
    fn tell_reads(&self, ask: &recall::MemoryAsk, state: &TurnState) -> Flow {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let mut parts: Vec<AnswerPart> =
            state.executed.iter().map(|(c, o)| compose::report_part(c, o, now, tz)).collect();
        let found: Vec<Option<bool>> = state.executed.iter().map(|(_, o)| recall::found_nothing(o)).collect();
        // A listing the grammar read says « aucun … » on its own; a question the words or
        // the router made gets one sentence more, about what was asked.
        let asked_of_the_words = !matches!(ask.asked, recall::Asked::Grammar(_));
        if state.executed.is_empty() {
            parts.push(compose::fixed(&ask.nothing(false)));
        } else if asked_of_the_words && found.iter().all(|f| *f == Some(true)) {
            parts.push(compose::fixed(&ask.nothing(true)));
        }
        Flow::Direct(parts, "memory")
    }

    /// « annule » with no question pending: the writes of the turn just before (in this
    /// conversation, else the last turn of all), within [`undo::UNDO_WINDOW_MINUTES`], are
    /// taken back by the steps that turn recorded; what cannot be is said to be still there.
    async fn undo_last(&self, conversation_id: &str, turn_id: i64, state: &mut TurnState) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let say = |text: &str| Ok(Flow::Direct(vec![compose::fixed(text)], "undo"));
        let turns = self.ctx.store.list_turns(20).await?;
        let previous: Vec<&crate::memory::TurnRecord> =
            turns.iter().filter(|t| t.id != turn_id && t.status == "complete").collect();
        let last = previous.iter().find(|t| t.conversation_id == conversation_id).or(previous.first());
        let Some(last) = last else {
            return say("Rien à annuler : je n'ai encore rien fait.");
        };
        if last.trace.get("undid").and_then(Value::as_i64).is_some() {
            return say("Je viens déjà d'annuler ta dernière action : il n'y a rien d'autre à annuler.");
        }
        let steps: Vec<undo::UndoStep> =
            last.trace.get("undo").cloned().and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
        if steps.is_empty() {
            return say("Rien à annuler : ta dernière demande n'a rien enregistré ni modifié.");
        }
        let recent = last.finished_at.is_some_and(|f| now - f <= chrono::Duration::minutes(undo::UNDO_WINDOW_MINUTES));
        if !recent {
            return say(
                "Je n'ai rien annulé : ta dernière action date de plus de cinq minutes. Dis-moi précisément quoi supprimer.",
            );
        }
        state.undid = Some(last.id);
        let mut kept = Vec::new();
        for step in steps {
            match step {
                undo::UndoStep::Call { tool, args } => {
                    self.run_value(agent_for(&tool), "undo", &tool, args, state).await;
                }
                undo::UndoStep::Kept { what, how } => kept.push((what, how)),
            }
        }
        let mut parts = Vec::new();
        if !state.executed.is_empty() {
            parts.push(compose::fixed("J'annule ce que je viens de faire :"));
            parts.extend(state.executed.iter().map(|(c, o)| compose::report_part(c, o, now, tz)));
        }
        for (what, how) in kept {
            let lead = if state.executed.is_empty() { "Je n'ai rien annulé" } else { "Je n'ai pas pu tout annuler" };
            parts.push(compose::fixed(&format!("{lead} : {what}. {how}")));
        }
        Ok(Flow::Direct(parts, "undo"))
    }

    /// Records a write awaiting "oui" in this conversation.
    async fn set_pending(
        &self,
        conversation_id: &str,
        tool: &str,
        arguments: Value,
        question: &str,
    ) -> Result<(), StoreError> {
        self.set_frame(conversation_id, &frame::Frame::new(tool, arguments, None), question).await
    }

    /// Keeps the frame of a question (or of a write just done) for the next utterance.
    async fn set_frame(&self, conversation_id: &str, f: &frame::Frame, question: &str) -> Result<(), StoreError> {
        self.ctx
            .store
            .set_pending(&crate::memory::PendingAction {
                conversation_id: conversation_id.to_string(),
                tool: f.tool.clone(),
                arguments: f.to_pending(),
                question: question.to_string(),
                created_at: self.ctx.now(),
            })
            .await
    }

    /// What the next utterance did to the frame of the last question.
    async fn answer_frame(
        &self,
        conversation_id: &str,
        turn_id: i64,
        f: frame::Frame,
        answer: frame::Reply,
        doubted: bool,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        // A reply the ears doubted never writes (issue 40): what it would run is asked
        // first, named, and « oui » runs it. (A correction of a write just done is redone
        // as said: its receipt names both values.)
        let answer = match answer {
            frame::Reply::Fill(next) if doubted && !next.done && next.complete() => {
                return self.ask_again(conversation_id, next).await;
            }
            frame::Reply::More(more) if doubted && more.then.is_empty() => {
                return self.ask_again(conversation_id, more).await;
            }
            other => other,
        };
        match answer {
            frame::Reply::Yes if f.complete() => self.run_frame(conversation_id, f, state).await,
            frame::Reply::Yes => self.ask_again(conversation_id, f).await,
            frame::Reply::No | frame::Reply::Other => {
                Ok(Flow::Direct(vec![compose::fixed(compose::CANCELLED)], "cancelled"))
            }
            frame::Reply::Fill(next) if next.done => self.correct_done(conversation_id, turn_id, next, state).await,
            // « non, je voulais dire verger » to « je crée le projet jardin et je démarre une
            // session ? »: the session goes to the project named, created only if it is new.
            frame::Reply::Fill(mut next)
                if next.tool == "creer_projet" && next.then.iter().any(|c| c.tool == "demarrer_session") =>
            {
                let nom = next.args.get("nom").and_then(Value::as_str).unwrap_or_default().to_string();
                for call in &mut next.then {
                    call.args["projet"] = json!(nom);
                }
                match self.ctx.store.find_projet(&nom).await? {
                    Some(p) => {
                        let start = frame::Frame::new("demarrer_session", json!({ "projet": p.nom }), None);
                        self.run_frame(conversation_id, start, state).await
                    }
                    None => self.ask_again(conversation_id, next).await,
                }
            }
            frame::Reply::Fill(next) if next.complete() => {
                // A hint about a reminder's hour that was only proposed by default is asked
                // again with what was said; anything else given is run.
                if next.tool == "creer_rappel" && !next.time_said && f.asking.as_deref() != Some("texte") {
                    return self.ask_again(conversation_id, next).await;
                }
                self.run_frame(conversation_id, next, state).await
            }
            frame::Reply::Fill(next) => self.ask_again(conversation_id, next).await,
            frame::Reply::Describe(words) => self.describe_target(conversation_id, f, &words, state).await,
            frame::Reply::More(more) => self.run_frame(conversation_id, more, state).await,
            frame::Reply::Choose(first, second) => {
                let question = format!("Tu veux dire « {first} » ou « {second} » ?");
                let mut f = f;
                f.choices = vec![first, second];
                self.set_frame(conversation_id, &f, &question).await?;
                Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"))
            }
        }
    }

    /// Runs a frame's call, then what follows it; a write just done leaves a frame for a
    /// correction (« non, à onze heures »).
    async fn run_frame(
        &self,
        conversation_id: &str,
        f: frame::Frame,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let outcome = self.run_value(agent_for(&f.tool), "frame", &f.tool, f.args.clone(), state).await;
        if matches!(outcome, Outcome::Done(_)) {
            for next in &f.then {
                let o = self.run_value(agent_for(&next.tool), "frame", &next.tool, next.args.clone(), state).await;
                if !matches!(o, Outcome::Done(_)) {
                    break;
                }
            }
            self.keep_for_correction(conversation_id, state).await?;
        }
        Ok(Flow::Direct(state.executed.iter().map(|(c, o)| compose::report_part(c, o, now, tz)).collect(), "confirmed"))
    }

    /// After one write the user may correct at once (a reminder's day or hour, a timer's
    /// duration, a list item, a note's text), its frame is kept.
    async fn keep_for_correction(&self, conversation_id: &str, state: &TurnState) -> Result<(), StoreError> {
        let writes: Vec<&(ToolCall, Outcome)> = state
            .executed
            .iter()
            .filter(|(c, o)| crate::tools::writes(&c.name) && matches!(o, Outcome::Done(_)))
            .collect();
        if let [(call, _)] = writes.as_slice() {
            if matches!(call.name.as_str(), "creer_rappel" | "demarrer_minuteur" | "ajouter_a_liste" | "creer_note") {
                let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                let f = frame::Frame { done: true, time_said: true, ..frame::Frame::new(&call.name, args, None) };
                self.set_frame(conversation_id, &f, "").await?;
            }
        }
        Ok(())
    }

    /// A frame still missing something: asked again, the frame kept.
    async fn ask_again(&self, conversation_id: &str, f: frame::Frame) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let question = if f.complete() {
            local::question_from_call(&f.tool, &f.args, now, self.ctx.tz)
        } else {
            local::incomplete(&f.tool, Doubt::Missing)
        };
        self.set_frame(conversation_id, &f, &question).await?;
        Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"))
    }

    /// « non, à onze heures » right after a write: the write is taken back and done again
    /// with the correction; both receipts are told.
    async fn correct_done(
        &self,
        conversation_id: &str,
        turn_id: i64,
        next: frame::Frame,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let traces = self.ctx.store.list_turns(5).await?;
        let last =
            traces.iter().find(|t| t.id != turn_id && t.conversation_id == conversation_id && t.status == "complete");
        let steps: Vec<undo::UndoStep> = last
            .and_then(|t| t.trace.get("undo").cloned())
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        if steps.is_empty() || steps.iter().any(|s| matches!(s, undo::UndoStep::Kept { .. })) {
            return Ok(Flow::Direct(
                vec![compose::fixed(
                    "Je n'ai rien corrigé : ta dernière demande ne se reprend pas comme ça. Redis-moi tout.",
                )],
                "asked",
            ));
        }
        state.undid = last.map(|t| t.id);
        for step in steps {
            if let undo::UndoStep::Call { tool, args } = step {
                self.run_value(agent_for(&tool), "correction", &tool, args, state).await;
            }
        }
        if state.executed.iter().all(|(_, o)| matches!(o, Outcome::Done(_))) {
            self.run_value(agent_for(&next.tool), "correction", &next.tool, next.args.clone(), state).await;
            self.keep_for_correction(conversation_id, state).await?;
        }
        let mut parts = vec![compose::fixed("Je corrige :")];
        parts.extend(state.executed.iter().map(|(c, o)| compose::report_part(c, o, now, tz)));
        Ok(Flow::Direct(parts, "corrected"))
    }

    /// « celui du dentiste », « le dernier », « celui de lundi » in answer to « Quel rappel ? »:
    /// the one it names is the user's choice, done; none or several are said.
    async fn describe_target(
        &self,
        conversation_id: &str,
        f: frame::Frame,
        words: &str,
        state: &mut TurnState,
    ) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        // A day (« celui de lundi »): the reminder due that day.
        let folded: Vec<String> =
            arthur_french::Words::split_only(words).folded().iter().map(|w| w.to_string()).collect();
        let folded: Vec<&str> = folded.iter().map(String::as_str).collect();
        let today = now.with_timezone(&tz).date_naive();
        let day = arthur_french::moment::day(&folded).and_then(|d| d.resolve(today, arthur_french::Direction::Future));
        if let (Some(day), true) = (day, f.tool != "supprimer_note") {
            let due: Vec<crate::memory::Rappel> = self
                .ctx
                .store
                .list_rappels(f.tool == "supprimer_rappel")
                .await?
                .into_iter()
                .filter(|r| r.echeance.with_timezone(&tz).date_naive() == day)
                .collect();
            if let [one] = due.as_slice() {
                let mut next = f.clone();
                next.args = json!({ "id": one.id });
                return self.run_frame(conversation_id, next, state).await;
            }
        }
        let target = if words == "@dernier" { Target::Last } else { Target::Matching(words.to_string()) };
        use crate::tools::ToolName as T;
        let cmd = match T::from_wire(&f.tool) {
            Some(T::SupprimerNote) => ToolCommand::SupprimerNote { target },
            Some(T::SupprimerRappel) => ToolCommand::SupprimerRappel { target },
            Some(T::MarquerRappelFait) => ToolCommand::MarquerRappelFait { target },
            Some(
                T::ListerRappels
                | T::LireBriefingHebdo
                | T::DemarrerMinuteur
                | T::ListerMinuteurs
                | T::ModifierMinuteur
                | T::AnnulerMinuteur
                | T::AjouterAListe
                | T::RetirerDeListe
                | T::LireListe
                | T::ViderListe
                | T::CreerRappelRecurrent
                | T::DeplacerRappel
                | T::ArreterRappelRecurrent
                | T::CreerReveil
                | T::ListerReveils
                | T::AnnulerReveil
                | T::ListerProjets
                | T::LireProjet
                | T::CreerProjet
                | T::ModifierProjet
                | T::ActerDecision
                | T::MemoriserSouvenir
                | T::CreerNote
                | T::ListerNotes
                | T::CreerRappel
                | T::LireTempsTravail
                | T::MemoriserPreference
                | T::ListerPreferences
                | T::DesactiverPreference
                | T::ChercherDansMemoire
                | T::ListerSouvenirs
                | T::DemarrerSession
                | T::SuspendreSession
                | T::ReprendreSession
                | T::ArreterSession,
            )
            | None => return Ok(Flow::Direct(vec![compose::fixed(compose::CANCELLED)], "cancelled")),
        };
        match self.resolve_target(&cmd).await? {
            Resolved::Found(ToolCommand::SupprimerNote { target: Target::Id(id) }, _)
            | Resolved::FoundAmong(ToolCommand::SupprimerNote { target: Target::Id(id) }, _, _)
            | Resolved::Found(ToolCommand::SupprimerRappel { target: Target::Id(id) }, _)
            | Resolved::FoundAmong(ToolCommand::SupprimerRappel { target: Target::Id(id) }, _, _)
            | Resolved::Found(ToolCommand::MarquerRappelFait { target: Target::Id(id) }, _)
            | Resolved::FoundAmong(ToolCommand::MarquerRappelFait { target: Target::Id(id) }, _, _) => {
                let mut next = f.clone();
                next.args = json!({ "id": id });
                self.run_frame(conversation_id, next, state).await
            }
            _ => self.ask_resolving(conversation_id, &cmd, Doubt::GuessedTarget, "").await,
        }
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
                let question = self.question_for(tool.wire(), &args).await?;
                Some(Witness { tool, args, question })
            }
            None => None,
        };
        // Neither the memory nor an action asked, by the words or by the router: the model's
        // answer is about the world, and its generic « tu » claims nothing.
        let world = reading.topic.is_none()
            && reading.memory.is_none()
            && !reading.understanding.is_command()
            && !matches!(decision.action, Some(ExpectedAction::Ecriture | ExpectedAction::Lecture));
        let request = if world { claims::Request::World } else { claims::Request::Unknown };
        let signals = Signals { expected: decision.action, asked_write: witness.as_ref(), request };
        let mut composed = compose::compose(&state.executed, end, signals, now, tz);
        let told_facts = composed.withheld.iter().any(|s| claims::claim(s) == Some(claims::ClaimKind::StoredFact));
        if let (true, true, Some((tool, args))) = (state.executed.is_empty(), told_facts, reading.read()) {
            // The model answered a read without reading: code reads and tells it.
            self.run_value(agent_for(tool), "witness", tool, args, state).await;
            let withheld = std::mem::take(&mut composed.withheld);
            composed = compose::compose(&state.executed, end, signals, now, tz);
            composed.withheld = withheld;
            state.witness = Some(WitnessTrace { tool: tool.to_string(), effect: "read" });
        }
        if composed.offered {
            if let Some(w) = &witness {
                self.set_pending(conversation_id, w.tool.wire(), w.args.clone(), &w.question).await?;
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
        if let Some(ask) = &reading.memory {
            return self.recall_by_code(ask, "code", state).await;
        }
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
                    if let Some(flow) = self.run_reminder_named(conversation_id, cmd, state).await? {
                        return Ok(flow);
                    }
                    return self.ask_resolving(conversation_id, cmd, Doubt::GuessedTarget, &state.said).await;
                }
                for (name, args) in calls {
                    let agent = if ToolBox::names_for(agent).contains(&name) { agent } else { agent_for(name) };
                    self.run_value(agent, "local", name, args, state).await;
                }
                self.keep_for_correction(conversation_id, state).await?;
                // « plusieurs minuteurs sont en cours : dis lequel » — the next words may name it.
                if let Some((call, Outcome::Refused(crate::tools::Refusal::TimersAmbiguous { minuteurs }))) =
                    state.executed.last()
                {
                    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(json!({}));
                    let mut f = frame::Frame::new(&call.name, args, Some("nom"));
                    f.choices = minuteurs.iter().filter_map(|m| m.nom.clone()).collect();
                    self.set_frame(conversation_id, &f, "").await?;
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
                self.ask_resolving(conversation_id, cmd, *doubt, &state.said.clone()).await
            }
            Reading::Unsure { command: Command::Told(t), .. } => {
                Ok(Flow::Direct(local::told(*t, now, tz, self.llm.is_some(), false), "told"))
            }
            Reading::Incomplete { intent, doubt } => {
                let said = local::incomplete(intent, *doubt);
                // « mets un minuteur », « crée une note », « rappelle-moi »: the piece asked for
                // may come next.
                use crate::tools::ToolName as T;
                let tool = T::from_wire(intent);
                let missing = match (tool, doubt) {
                    (Some(T::CreerNote | T::MemoriserSouvenir | T::MemoriserPreference), Doubt::Missing) => {
                        Some(("texte", json!({})))
                    }
                    (Some(T::CreerRappel), Doubt::Missing) => Some(("texte", json!({}))),
                    (Some(T::DemarrerMinuteur), Doubt::Missing | Doubt::NotPositive) => {
                        Some(("duree_secondes", json!({})))
                    }
                    (Some(T::DemarrerSession), Doubt::Missing) => Some(("projet", json!({}))),
                    (Some(T::AjouterAListe | T::RetirerDeListe), Doubt::Missing) => {
                        Some(("element", json!({ "liste": crate::understand::DEFAULT_LIST })))
                    }
                    (Some(T::LireListe | T::ViderListe), Doubt::Missing) => Some(("liste", json!({}))),
                    (Some(T::SupprimerNote | T::SupprimerRappel | T::MarquerRappelFait), Doubt::Missing) => {
                        Some(("id", json!({})))
                    }
                    (Some(T::CreerProjet), Doubt::Missing) => Some(("nom", json!({}))),
                    (Some(T::ActerDecision), Doubt::Missing | Doubt::UnknownName) => Some(("projet", json!({}))),
                    (
                        Some(
                            T::ListerRappels
                            | T::MarquerRappelFait
                            | T::LireBriefingHebdo
                            | T::SupprimerRappel
                            | T::DemarrerMinuteur
                            | T::ListerMinuteurs
                            | T::ModifierMinuteur
                            | T::AnnulerMinuteur
                            | T::AjouterAListe
                            | T::RetirerDeListe
                            | T::LireListe
                            | T::ViderListe
                            | T::CreerRappelRecurrent
                            | T::DeplacerRappel
                            | T::ArreterRappelRecurrent
                            | T::CreerReveil
                            | T::ListerReveils
                            | T::AnnulerReveil
                            | T::ListerProjets
                            | T::LireProjet
                            | T::CreerProjet
                            | T::ModifierProjet
                            | T::ActerDecision
                            | T::MemoriserSouvenir
                            | T::CreerNote
                            | T::ListerNotes
                            | T::SupprimerNote
                            | T::CreerRappel
                            | T::LireTempsTravail
                            | T::MemoriserPreference
                            | T::ListerPreferences
                            | T::DesactiverPreference
                            | T::ChercherDansMemoire
                            | T::ListerSouvenirs
                            | T::DemarrerSession
                            | T::SuspendreSession
                            | T::ReprendreSession
                            | T::ArreterSession,
                        )
                        | None,
                        _,
                    ) => None,
                };
                if let Some((slot, mut args)) = missing {
                    // What was already said stays (« mets un rappel demain à 9 h » → the text).
                    let lexicon = self.lexicon().await?;
                    let known = crate::understand::partial_args(
                        &state.said,
                        state.heard,
                        intent,
                        self.ctx.now(),
                        self.ctx.tz,
                        &lexicon,
                    );
                    let time_said = known.get("_time_said").is_some();
                    if let (Some(a), Some(k)) = (args.as_object_mut(), known.as_object()) {
                        for (key, v) in k.iter().filter(|(key, _)| !key.starts_with('_')) {
                            a.insert(key.clone(), v.clone());
                        }
                    }
                    let mut f = frame::Frame { time_said, ..frame::Frame::new(intent, args, Some(slot)) };
                    // « Quel rappel ? » → « le deuxième »: counted in the order they are listed.
                    f.candidates = match tool {
                        Some(T::SupprimerNote) => self.ctx.store.list_notes(None).await?.iter().map(|n| n.id).collect(),
                        Some(T::SupprimerRappel) => {
                            self.ctx.store.list_rappels(true).await?.iter().map(|r| r.id).collect()
                        }
                        Some(T::MarquerRappelFait) => {
                            self.ctx.store.list_rappels(false).await?.iter().map(|r| r.id).collect()
                        }
                        Some(
                            T::ListerRappels
                            | T::LireBriefingHebdo
                            | T::DemarrerMinuteur
                            | T::ListerMinuteurs
                            | T::ModifierMinuteur
                            | T::AnnulerMinuteur
                            | T::AjouterAListe
                            | T::RetirerDeListe
                            | T::LireListe
                            | T::ViderListe
                            | T::CreerRappelRecurrent
                            | T::DeplacerRappel
                            | T::ArreterRappelRecurrent
                            | T::CreerReveil
                            | T::ListerReveils
                            | T::AnnulerReveil
                            | T::ListerProjets
                            | T::LireProjet
                            | T::CreerProjet
                            | T::ModifierProjet
                            | T::ActerDecision
                            | T::MemoriserSouvenir
                            | T::CreerNote
                            | T::ListerNotes
                            | T::CreerRappel
                            | T::LireTempsTravail
                            | T::MemoriserPreference
                            | T::ListerPreferences
                            | T::DesactiverPreference
                            | T::ChercherDansMemoire
                            | T::ListerSouvenirs
                            | T::DemarrerSession
                            | T::SuspendreSession
                            | T::ReprendreSession
                            | T::ArreterSession,
                        )
                        | None => Vec::new(),
                    };
                    self.set_frame(conversation_id, &f, &said).await?;
                }
                Ok(Flow::Direct(vec![compose::fixed(&said)], "incomplete"))
            }
            Reading::NotCommand => {
                Ok(Flow::Direct(vec![compose::fixed(local::NOT_UNDERSTOOD_OFFLINE)], "offline_unsupported"))
            }
        }
    }

    /// Asks before an unsure command; a target described instead of numbered is looked up
    /// first, so the question names the note or reminder it would touch.
    async fn ask_resolving(
        &self,
        conversation_id: &str,
        cmd: &ToolCommand,
        doubt: Doubt,
        said: &str,
    ) -> Result<Flow, StoreError> {
        let now = self.ctx.now();
        let tz = self.ctx.tz;
        let resolved = match self.resolve_reminder(conversation_id, cmd).await? {
            Some(r) => r,
            None => self.resolve_target(cmd).await?,
        };
        let mut among = Vec::new();
        let (cmd, named) = match resolved {
            Resolved::Found(c, named) => (c, named),
            Resolved::FoundAmong(c, named, others) => {
                among = others;
                (c, named)
            }
            Resolved::Say(text) => return Ok(Flow::Direct(vec![compose::fixed(&text)], "asked")),
            // « Quel rappel ? », « Plusieurs notes correspondent… »: the next words may name it.
            Resolved::Which(text, candidates) => {
                let mut f = frame::Frame::new(cmd.name(), json!({}), Some("id"));
                f.candidates = candidates;
                self.set_frame(conversation_id, &f, &text).await?;
                return Ok(Flow::Direct(vec![compose::fixed(&text)], "asked"));
            }
        };
        if let Some(texte) = named {
            // The target was guessed from a description: the question says which one.
            let described = local::describe(&cmd, now, tz);
            let question = match cmd.arguments().and_then(|a| a["id"].as_i64()) {
                Some(id) if described.contains(&format!("n°{id}")) => format!(
                    "Tu veux {} ?",
                    local::que_je(&described.replacen(&format!("n°{id}"), &format!("n°{id} « {texte} »"), 1))
                ),
                _ => format!("Tu veux {} « {texte} » ?", local::que_je(&described)),
            };
            if let Some(args) = cmd.arguments() {
                let mut f = frame::Frame::new(cmd.name(), args, Some("id"));
                f.candidates = among;
                self.set_frame(conversation_id, &f, &question).await?;
            }
            return Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"));
        }
        if let ToolCommand::CreerRappel { texte, .. } = &cmd {
            if matches!(doubt, Doubt::Past | Doubt::NotPositive) {
                // The text is kept: « Redis-moi quand » is answered by the moment alone.
                let said = local::incomplete("creer_rappel", doubt);
                let f = frame::Frame::new("creer_rappel", json!({ "texte": texte }), Some("echeance"));
                self.set_frame(conversation_id, &frame::Frame { time_said: true, ..f }, &said).await?;
                return Ok(Flow::Direct(vec![compose::fixed(&said)], "incomplete"));
            }
        }
        if let ToolCommand::DemarrerSession { projet } = &cmd {
            // « n'existe pas » is said of the store's answer, not of how the name was heard.
            if doubt == Doubt::UnknownName && self.ctx.store.find_projet(projet).await?.is_none() {
                // A project the store does not know: offered to be created first.
                let create = ToolCommand::CreerProjet { nom: projet.clone(), description: None, phase: None };
                let question = format!(
                    "Le projet « {projet} » n'existe pas encore. Tu veux que je le crée et que je démarre une session dessus ?"
                );
                if let Some(args) = create.arguments() {
                    // « oui » does what was asked in the first place: the session starts once
                    // the project exists.
                    let mut f = frame::Frame::new(create.name(), args, Some("nom"));
                    f.then = vec![frame::Call { tool: "demarrer_session".into(), args: json!({ "projet": projet }) }];
                    self.set_frame(conversation_id, &f, &question).await?;
                }
                return Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"));
            }
        }
        if let ToolCommand::CreerProjet { nom, description, .. } = &cmd {
            if doubt == Doubt::Ambiguous {
                // « existe déjà » only from the row that exists.
                if let Some(p) = self.ctx.store.find_projet(nom).await? {
                    return Ok(Flow::Direct(
                        vec![compose::fixed(&format!("Le projet {} existe déjà : je n'ai rien créé.", p.nom))],
                        "asked",
                    ));
                }
                // Where the name ends was not sure (« nouveau projet rénovation de la salle de
                // bain »): the whole of it is offered as the name.
                let whole = match description {
                    Some(d) => format!("{nom} {d}"),
                    None => nom.clone(),
                };
                if let Some(p) = self.ctx.store.find_projet(&whole).await? {
                    return Ok(Flow::Direct(
                        vec![compose::fixed(&format!("Le projet {} existe déjà : je n'ai rien créé.", p.nom))],
                        "asked",
                    ));
                }
                let create = ToolCommand::CreerProjet { nom: whole, description: None, phase: None };
                let question = local::question(&create, Doubt::Ambiguous, now, tz);
                if let Some(args) = create.arguments() {
                    self.set_pending(conversation_id, create.name(), args, &question).await?;
                }
                return Ok(Flow::Direct(vec![compose::fixed(&question)], "asked"));
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
                        vec![compose::fixed(&format!(
                            "La{} est déjà vide : je n'ai rien fait.",
                            &crate::report::list_name(&l.nom)[2..]
                        ))],
                        "asked",
                    ))
                }
                Some(l) => {
                    let n = l.elements.len();
                    let (s, verb) = if n > 1 { ("s", "seraient") } else { ("", "serait") };
                    format!(
                        "Tu veux que je vide {} ? {n} élément{s} en {verb} retiré{s} : {}.",
                        crate::report::list_name(&l.nom),
                        l.elements.iter().take(5).map(|e| e.texte.as_str()).collect::<Vec<_>>().join(", ")
                    )
                }
            }
        } else if let (Doubt::Alternatives, Some((first, second))) = (doubt, alternatives(said)) {
            format!("Tu veux dire « {first} » ou « {second} » ?")
        } else {
            local::question(&cmd, doubt, now, tz)
        };
        if let Some(args) = cmd.arguments() {
            let mut f = frame::Frame::new(cmd.name(), args, asking_for(cmd.name(), doubt));
            f.time_said = !matches!(doubt, Doubt::DefaultTime);
            // Several at once: the frame runs the others after the first.
            if let ToolCommand::Several(each) = &cmd {
                f.then = each
                    .iter()
                    .skip(1)
                    .flat_map(|c| c.calls())
                    .map(|(tool, args)| frame::Call { tool: tool.into(), args })
                    .collect();
            }
            if doubt == Doubt::Alternatives {
                if let Some((first, second)) = alternatives(said) {
                    f.choices = vec![first, second];
                }
            }
            self.set_frame(conversation_id, &f, &question).await?;
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
            Target::Unnamed | Target::This => {
                // « le deuxième » then counts in the order they are listed.
                let all = items.iter().map(|(i, _)| *i).collect();
                return Ok(Resolved::Which(local::incomplete(cmd.name(), Doubt::Missing), all));
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
            [(id, texte)] => {
                // With two in all, « l'autre » names the one not proposed.
                let all: Vec<i64> = items.iter().map(|(i, _)| *i).collect();
                Ok(Resolved::Found(with_id(*id), Some(texte.clone())).with_others(if all.len() == 2 {
                    all
                } else {
                    Vec::new()
                }))
            }
            many => {
                let list = many.iter().take(5).map(|(id, t)| format!("n°{id} « {t} »")).collect::<Vec<_>>().join(", ");
                let which = if note { "laquelle" } else { "lequel" };
                Ok(Resolved::Which(
                    format!("Plusieurs {label}s correspondent : {list}. Dis-moi {which} par son numéro ; je n'ai rien fait."),
                    many.iter().map(|(id, _)| *id).collect(),
                ))
            }
        }
    }
}

/// How long after it was said a reminder is still « le », « ça » (« repousse-le »).
const JUST_SAID_MINUTES: i64 = 15;

impl TurnEngine {
    /// « c'est bon » stops what rings; « encore cinq minutes » makes it ring again later.
    async fn answer_ringing(&self, text: &str) -> Result<(AnswerPart, &'static str), StoreError> {
        let store = self.ctx.store.as_ref();
        let (now, tz) = (self.ctx.now(), self.ctx.tz);
        if let Some(secs) = crate::understand::snooze(text) {
            let snoozed = store.snooze_ringing(secs, now).await?;
            let (w, s) = crate::report::snoozed(&snoozed, secs, tz);
            return Ok((compose::code(w, s), "snoozed"));
        }
        let done = store.acknowledge_timers(None, now).await?;
        let (w, s) = crate::report::acknowledged(&done, tz);
        Ok((compose::code(w, s), "acknowledged"))
    }

    /// The reminder « le » or « ça » stands for: the one announced last (in the last
    /// minutes), else the one this conversation's last turn was about.
    async fn reminder_just_said(&self, conversation_id: &str) -> Result<Option<crate::memory::Rappel>, StoreError> {
        let store = self.ctx.store.as_ref();
        let since = self.ctx.now() - chrono::Duration::minutes(JUST_SAID_MINUTES);
        if let Some((r, _)) = store.announced_since(since).await?.into_iter().next() {
            return Ok(Some(r));
        }
        let traces = store.conversation_traces(conversation_id, 1).await?;
        let id = traces.first().and_then(|t| {
            t["tools"].as_array()?.iter().rev().find_map(|tool| {
                let d = &tool["detail"]["detail"];
                d["rappel"]["id"]
                    .as_i64()
                    .or_else(|| d["after"]["id"].as_i64())
                    .filter(|_| d["rappel"].is_object() || d["after"]["texte"].is_string())
            })
        });
        match id {
            Some(id) => Ok(store.get_rappel(id).await?.filter(|r| !r.fait)),
            None => Ok(None),
        }
    }

    /// A reminder to move or whose series to stop, looked up: by its number, « le » (the
    /// one just said), or a description (then `Found` carries its text: to be asked). The
    /// new time is computed from its own (« à demain » keeps its hour). `None`: not one of
    /// these commands.
    async fn resolve_reminder(&self, conversation_id: &str, cmd: &ToolCommand) -> Result<Option<Resolved>, StoreError> {
        use crate::understand::Quand;
        let (target, quand) = match cmd {
            ToolCommand::DeplacerRappel { target, quand } => (target, Some(*quand)),
            ToolCommand::ArreterRappelRecurrent { target } => (target, None),
            _ => return Ok(None),
        };
        let store = self.ctx.store.as_ref();
        let tz = self.ctx.tz;
        let stop = quand.is_none();
        let (rappel, guessed) = match target {
            Target::Id(id) => match store.get_rappel(*id).await? {
                Some(r) => (r, false),
                // Unknown: the tool refuses it, naming the number.
                None if stop => return Ok(Some(Resolved::Found(cmd.clone(), None))),
                None => {
                    let now = self.ctx.now();
                    let placeholder = ToolCommand::DeplacerRappel {
                        target: Target::Id(*id),
                        quand: Quand::At(now.with_timezone(&tz).naive_local() + chrono::Duration::hours(1)),
                    };
                    return Ok(Some(Resolved::Found(placeholder, None)));
                }
            },
            Target::This => match self.reminder_just_said(conversation_id).await? {
                Some(r) => (r, false),
                None => {
                    return Ok(Some(Resolved::Say(
                        "Je ne sais pas de quel rappel tu parles : dis son numéro, par exemple : décale le rappel 3 à 11 h. Je n'ai rien fait."
                            .to_string(),
                    )))
                }
            },
            Target::Matching(words) => {
                let found: Vec<crate::memory::Rappel> = store
                    .list_rappels(false)
                    .await?
                    .into_iter()
                    .filter(|r| crate::tools::contains_words(&r.texte, words) && (!stop || r.is_recurring()))
                    .collect();
                let what = if stop { "rappel répété" } else { "rappel" };
                match found.as_slice() {
                    [] => {
                        return Ok(Some(Resolved::Say(format!(
                            "Aucun {what} ne parle de « {words} » : je n'ai rien fait."
                        ))))
                    }
                    [one] => (one.clone(), true),
                    many => {
                        let list = many
                            .iter()
                            .take(5)
                            .map(|r| format!("n°{} « {} »", r.id, r.texte))
                            .collect::<Vec<_>>()
                            .join(", ");
                        return Ok(Some(Resolved::Say(format!(
                            "Plusieurs {what}s correspondent : {list}. Dis-moi lequel par son numéro ; je n'ai rien fait."
                        ))));
                    }
                }
            }
            Target::Last | Target::All | Target::Unnamed => {
                return Ok(Some(Resolved::Say(local::incomplete(cmd.name(), Doubt::Missing))))
            }
        };
        let concrete = match quand {
            None => ToolCommand::ArreterRappelRecurrent { target: Target::Id(rappel.id) },
            Some(q) => {
                let due = rappel.echeance.with_timezone(&tz).naive_local();
                let at = match q {
                    Quand::At(at) => at,
                    Quand::Day(d) => d.and_time(due.time()),
                    Quand::Shift(secs) => due + chrono::Duration::seconds(secs),
                };
                ToolCommand::DeplacerRappel { target: Target::Id(rappel.id), quand: Quand::At(at) }
            }
        };
        Ok(Some(Resolved::Found(concrete, guessed.then_some(rappel.texte))))
    }

    /// A sure move or stop whose reminder was named (by number or « le »): run once its
    /// time is known. A described one is asked instead (`None`).
    async fn run_reminder_named(
        &self,
        conversation_id: &str,
        cmd: &ToolCommand,
        state: &mut TurnState,
    ) -> Result<Option<Flow>, StoreError> {
        let (now, tz) = (self.ctx.now(), self.ctx.tz);
        match self.resolve_reminder(conversation_id, cmd).await? {
            Some(Resolved::Say(text)) => Ok(Some(Flow::Direct(vec![compose::fixed(&text)], "asked"))),
            Some(Resolved::Found(c, None)) => {
                let Some(args) = c.arguments() else { return Ok(None) };
                self.run_value(AgentKind::Intendant, "local", c.name(), args, state).await;
                Ok(Some(Flow::Direct(
                    state.executed.iter().map(|(c, o)| compose::report_part(c, o, now, tz)).collect(),
                    "local",
                )))
            }
            _ => Ok(None),
        }
    }
}

impl Resolved {
    fn with_others(self, others: Vec<i64>) -> Self {
        match self {
            Resolved::Found(c, n) if !others.is_empty() => Resolved::FoundAmong(c, n, others),
            other => other,
        }
    }
}

/// A described target, looked up.
enum Resolved {
    /// As `Found`, with the others it could have been (« l'autre »).
    FoundAmong(ToolCommand, Option<String>, Vec<i64>),
    /// The command with its target's number, and the target's text when it was guessed.
    Found(ToolCommand, Option<String>),
    Say(String),
    /// None named, or several: the question, and the numbers that matched.
    Which(String, Vec<i64>),
}

/// The argument an unsure command's doubt is about: what the next words may give.
fn asking_for(tool: &str, doubt: Doubt) -> Option<&'static str> {
    use crate::tools::ToolName as T;
    let tool = T::from_wire(tool)?;
    match (tool, doubt) {
        (
            T::CreerRappel,
            Doubt::DefaultTime
            | Doubt::Rolled
            | Doubt::Past
            | Doubt::Vague
            | Doubt::TextHoldsMoment
            | Doubt::Alternatives,
        ) => Some("echeance"),
        (T::AjouterAListe | T::RetirerDeListe, Doubt::Alternatives) => Some("element"),
        (_, Doubt::GuessedTarget) => Some("id"),
        (T::DemarrerSession | T::ActerDecision, Doubt::UnknownName) => Some("projet"),
        (T::CreerNote, Doubt::UnknownName) => Some("projet"),
        (T::DemarrerMinuteur, Doubt::TooLong | Doubt::NotPositive | Doubt::Alternatives) => Some("duree_secondes"),
        (T::CreerProjet, Doubt::Ambiguous) => Some("nom"),
        (
            T::ListerRappels
            | T::MarquerRappelFait
            | T::LireBriefingHebdo
            | T::SupprimerRappel
            | T::DemarrerMinuteur
            | T::ListerMinuteurs
            | T::ModifierMinuteur
            | T::AnnulerMinuteur
            | T::AjouterAListe
            | T::RetirerDeListe
            | T::LireListe
            | T::ViderListe
            | T::CreerRappelRecurrent
            | T::DeplacerRappel
            | T::ArreterRappelRecurrent
            | T::CreerReveil
            | T::ListerReveils
            | T::AnnulerReveil
            | T::ListerProjets
            | T::LireProjet
            | T::CreerProjet
            | T::ModifierProjet
            | T::ActerDecision
            | T::MemoriserSouvenir
            | T::CreerNote
            | T::ListerNotes
            | T::SupprimerNote
            | T::CreerRappel
            | T::LireTempsTravail
            | T::MemoriserPreference
            | T::ListerPreferences
            | T::DesactiverPreference
            | T::ChercherDansMemoire
            | T::ListerSouvenirs
            | T::DemarrerSession
            | T::SuspendreSession
            | T::ReprendreSession
            | T::ArreterSession,
            _,
        ) => None,
    }
}

/// The two of « mardi ou mercredi » in the words, if they hold an alternative.
fn alternatives(text: &str) -> Option<(String, String)> {
    match arthur_french::repair::repair(text, chrono::Utc::now().naive_utc()) {
        arthur_french::repair::Repair::Alternatives { first, second, .. } => Some((first, second)),
        _ => None,
    }
}
