//! The 38 tools (the seed's 21, the everyday basics, repeats, moves and alarms): a typed trait (name, JSON Schema, typed arguments, typed outcome), the
//! registry that turns a model's call into an [`Outcome`] whatever happens. What each tool
//! is (wire name, agents, writes, French sentences) is the one table in [`name`].

pub mod args;
pub mod outcome;

mod basics_tools;
mod memory_tools;
mod name;
mod project_tools;
mod repeat_tools;
mod session_tools;
#[cfg(test)]
mod snapshot;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use serde_json::Value;

pub use crate::text::contains_words;
pub use args::{ArgError, ArgProblem, Args, Expected, ToolArgs};
pub use memory_tools::cosine;
pub use name::{write_names, writes, Agents, NotDone, Spec, ToolName};
pub use outcome::{
    Briefing, BriefingKind, Failure, KeywordReason, Outcome, Page, Portee, Receipt, Refusal, ReminderFilter, SearchHit,
    SearchMode,
};
pub use repeat_tools::MAX_DERNIERS;

use crate::llm::embeddings::Embedder;
use crate::memory::{MemoryStore, StoreError};
use crate::time::Clock;

/// A reminder due more than this in the past is refused as a wrong date (creating one,
/// moving one, a repeat's first time).
pub const PAST_DUE_GRACE_SECS: i64 = 60;

/// Default number of active preferences (each one is injected into every turn).
pub const DEFAULT_PREFERENCES_CAP: u32 = 20;

/// Everything a tool may touch.
#[derive(Clone)]
pub struct ToolContext {
    pub store: Arc<dyn MemoryStore>,
    pub clock: Arc<dyn Clock>,
    pub tz: Tz,
    pub embedder: Option<Arc<dyn Embedder>>,
    pub preferences_cap: u32,
}

impl ToolContext {
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }
}

/// A tool as the model sees it (OpenAI/Mistral `tools[].function`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: Value,
}

/// One tool: its typed arguments are parsed once, then it runs against the store.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// Its row in the table of the tools ([`ToolName::spec`]).
    const NAME: ToolName;
    /// The page where what this tool touches can be checked.
    const PAGE: Page;
    /// Its arguments, declared once with [`args::tool_args!`]: the JSON Schema (with exactly
    /// the names of the external interface) and the parsing both come from it.
    type Args: ToolArgs + Send;

    fn description(&self) -> &'static str;
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError>;
}

/// Object-safe face of [`Tool`], used by the registry.
#[async_trait]
pub trait DynTool: Send + Sync {
    /// The name on the wire.
    fn name(&self) -> &'static str;
    fn tool_name(&self) -> ToolName;
    fn page(&self) -> Page;
    fn definition(&self) -> ToolDefinition;
    /// Parses, runs, and turns every error into a typed outcome.
    async fn invoke(&self, ctx: &ToolContext, raw: &Value) -> Outcome;
}

#[async_trait]
impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        T::NAME.wire()
    }
    fn tool_name(&self) -> ToolName {
        T::NAME
    }
    fn page(&self) -> Page {
        T::PAGE
    }
    fn definition(&self) -> ToolDefinition {
        ToolDefinition { name: T::NAME.wire(), description: self.description(), parameters: T::Args::schema() }
    }
    async fn invoke(&self, ctx: &ToolContext, raw: &Value) -> Outcome {
        let parsed = Args::parse(raw).and_then(|a| T::Args::read(&a, ctx.tz));
        let args = match parsed {
            Ok(args) => args,
            Err(e) => return Outcome::Refused(Refusal::InvalidArguments(e)),
        };
        match self.run(ctx, args).await {
            Ok(outcome) => outcome,
            Err(e) => {
                tracing::error!(tool = T::NAME.wire(), error = %e, "tool failed");
                Outcome::Failed(Failure { page: T::PAGE, error: e.to_string() })
            }
        }
    }
}

/// The two specialists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    Intendant,
    Mentor,
}

impl AgentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Intendant => "intendant",
            AgentKind::Mentor => "mentor",
        }
    }
}

/// Every tool, in one registry.
pub struct ToolBox {
    tools: Vec<Box<dyn DynTool>>,
}

impl Default for ToolBox {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolBox {
    pub fn new() -> Self {
        let mut tools: Vec<Box<dyn DynTool>> = Vec::new();
        memory_tools::register(&mut tools);
        basics_tools::register(&mut tools);
        project_tools::register(&mut tools);
        session_tools::register(&mut tools);
        repeat_tools::register(&mut tools);
        // The registration is the one step the compiler cannot check: every test builds a
        // box, so a tool left out fails them all here.
        for name in ToolName::ALL {
            let n = tools.iter().filter(|t| t.tool_name() == *name).count();
            assert_eq!(n, 1, "{name} must be registered once (tools::*_tools::register)");
        }
        assert_eq!(tools.len(), ToolName::ALL.len());
        Self { tools }
    }

    pub fn all(&self) -> impl Iterator<Item = &dyn DynTool> {
        self.tools.iter().map(|t| t.as_ref())
    }

    pub fn get(&self, name: &str) -> Option<&dyn DynTool> {
        self.all().find(|t| t.name() == name)
    }

    /// The tool names an agent is given, own tools first.
    pub fn names_for(agent: AgentKind) -> Vec<&'static str> {
        let own = ToolName::ALL.iter().filter(|t| t.spec().agents != Agents::Both);
        let shared = ToolName::ALL.iter().filter(|t| t.spec().agents == Agents::Both);
        own.chain(shared).filter(|t| t.given_to(agent)).map(|t| t.wire()).collect()
    }

    /// Definitions handed to the model for `agent`.
    pub fn definitions_for(&self, agent: AgentKind) -> Vec<ToolDefinition> {
        Self::names_for(agent).into_iter().filter_map(|n| self.get(n)).map(|t| t.definition()).collect()
    }

    /// Runs a call as `agent` would: unknown names and tools outside the agent's list are
    /// typed refusals and are not executed.
    pub async fn invoke_as(&self, agent: AgentKind, ctx: &ToolContext, name: &str, raw: &Value) -> Outcome {
        let Some(tool) = self.get(name) else {
            return Outcome::Refused(Refusal::UnknownTool { name: name.chars().take(64).collect() });
        };
        if !Self::names_for(agent).contains(&tool.name()) {
            return Outcome::Refused(Refusal::ToolNotAllowed { name: tool.name(), agent: agent.as_str() });
        }
        tool.invoke(ctx, raw).await
    }

    /// Runs a call with no agent restriction (terminal commands, the offline parser).
    pub async fn invoke(&self, ctx: &ToolContext, name: &str, raw: &Value) -> Outcome {
        match self.get(name) {
            Some(tool) => tool.invoke(ctx, raw).await,
            None => Outcome::Refused(Refusal::UnknownTool { name: name.chars().take(64).collect() }),
        }
    }
}

args::tool_args! {
    /// The tools that take one number (a note, a reminder, a preference).
    pub struct ById { id: args::Id }
}

args::tool_args! {
    /// The tools that store one text (a preference, a souvenir).
    pub struct ByTexte { texte: args::Text }
}

/// A project must exist for tools that attach to it.
pub(crate) async fn lookup_project(
    ctx: &ToolContext,
    nom: &str,
) -> Result<Result<crate::memory::Projet, Refusal>, StoreError> {
    Ok(ctx.store.find_projet(nom).await?.ok_or_else(|| Refusal::ProjectUnknown { nom: nom.to_string() }))
}
