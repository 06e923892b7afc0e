//! The 38 tools (the seed's 21, the everyday basics, repeats, moves and alarms): a typed trait (name, JSON Schema, typed arguments, typed outcome), the
//! registry that turns a model's call into an [`Outcome`] whatever happens, and the table
//! of which agent may use which tool.

pub mod args;
pub mod outcome;

mod basics_tools;
mod memory_tools;
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

pub use args::{ArgError, ArgProblem, Args, Expected, ToolArgs};
pub use memory_tools::{contains_words, cosine};
pub use outcome::{
    Briefing, BriefingKind, Failure, KeywordReason, Outcome, Page, Portee, Receipt, Refusal, ReminderFilter, SearchHit,
    SearchMode,
};
pub use repeat_tools::MAX_DERNIERS;

use crate::llm::embeddings::Embedder;
use crate::memory::{MemoryStore, StoreError};
use crate::time::Clock;

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
    const NAME: &'static str;
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
    fn name(&self) -> &'static str;
    fn page(&self) -> Page;
    fn definition(&self) -> ToolDefinition;
    /// Parses, runs, and turns every error into a typed outcome.
    async fn invoke(&self, ctx: &ToolContext, raw: &Value) -> Outcome;
}

#[async_trait]
impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
    fn page(&self) -> Page {
        T::PAGE
    }
    fn definition(&self) -> ToolDefinition {
        ToolDefinition { name: T::NAME, description: self.description(), parameters: T::Args::schema() }
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
                tracing::error!(tool = T::NAME, error = %e, "tool failed");
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

/// Tools of the Intendant only (docs/interface.md §4): the seed's three and the everyday
/// basics (timers, lists, deleting a reminder; repeating and moving one, alarms).
pub const INTENDANT_OWN: [&str; 18] = [
    "lister_rappels",
    "marquer_rappel_fait",
    "lire_briefing_hebdo",
    "supprimer_rappel",
    "demarrer_minuteur",
    "lister_minuteurs",
    "modifier_minuteur",
    "annuler_minuteur",
    "ajouter_a_liste",
    "retirer_de_liste",
    "lire_liste",
    "vider_liste",
    "creer_rappel_recurrent",
    "deplacer_rappel",
    "arreter_rappel_recurrent",
    "creer_reveil",
    "lister_reveils",
    "annuler_reveil",
];
/// Tools of the Mentor only.
pub const MENTOR_OWN: [&str; 6] =
    ["lister_projets", "lire_projet", "creer_projet", "modifier_projet", "acter_decision", "memoriser_souvenir"];
/// Tools given to both: routing is stochastic, so duplication beats a routing battle.
pub const SHARED: [&str; 14] = [
    "creer_note",
    "lister_notes",
    "supprimer_note",
    "creer_rappel",
    "lire_temps_travail",
    "memoriser_preference",
    "lister_preferences",
    "desactiver_preference",
    "chercher_dans_memoire",
    "lister_souvenirs",
    "demarrer_session",
    "suspendre_session",
    "reprendre_session",
    "arreter_session",
];

/// Tools that write to the store: a failure of one of them leaves the effect unknown.
pub const WRITE_TOOLS: [&str; 26] = [
    "creer_rappel_recurrent",
    "deplacer_rappel",
    "arreter_rappel_recurrent",
    "creer_reveil",
    "annuler_reveil",
    "supprimer_note",
    "supprimer_rappel",
    "demarrer_minuteur",
    "modifier_minuteur",
    "annuler_minuteur",
    "ajouter_a_liste",
    "retirer_de_liste",
    "vider_liste",
    "creer_note",
    "creer_rappel",
    "marquer_rappel_fait",
    "memoriser_preference",
    "desactiver_preference",
    "demarrer_session",
    "suspendre_session",
    "reprendre_session",
    "arreter_session",
    "creer_projet",
    "modifier_projet",
    "acter_decision",
    "memoriser_souvenir",
];

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
        let own: &[&str] = match agent {
            AgentKind::Intendant => &INTENDANT_OWN,
            AgentKind::Mentor => &MENTOR_OWN,
        };
        own.iter().chain(SHARED.iter()).copied().collect()
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
