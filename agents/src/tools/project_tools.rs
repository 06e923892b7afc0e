//! Tools over projects and their decisions (the Mentor's own).

use super::args::{arg_kind, enum_schema, tool_args, Name, OptName, OptText, Text};
use super::*;
use crate::memory::{worktime, CreateProjet, ProjetChanges, Statut, UpdateProjet};
use chrono::{DateTime, Utc};

pub(super) fn register(tools: &mut Vec<Box<dyn DynTool>>) {
    tools.push(Box::new(ListerProjets));
    tools.push(Box::new(LireProjet));
    tools.push(Box::new(CreerProjet));
    tools.push(Box::new(ModifierProjet));
    tools.push(Box::new(ActerDecision));
}

arg_kind! {
    /// A project's status, one of [`Statut::ALL`].
    OptStatut: Option<Statut>, required = false, schema |_d| enum_schema(&Statut::ALL.map(|s| s.as_str())),
        read |a, f, _| match a.opt_name(f)? {
            None => Ok(None),
            Some(raw) => Statut::parse(&raw).map(Some).ok_or(ArgError::new(f, ArgProblem::NotAllowed)),
        };
}

tool_args! {
    pub struct ByNomProjet { nom: Name }
    pub struct CreerProjetArgs { nom: Name, description: OptText, phase: OptName }
    /// The status is read first: a wrong status is said before a missing name.
    pub struct ModifierProjetArgs { statut: OptStatut, nom: Name, description: OptText, phase: OptName }
    pub struct ActerDecisionArgs { projet: Name, texte: Text }
}

pub struct ListerProjets;

#[async_trait]
impl Tool for ListerProjets {
    const NAME: ToolName = ToolName::ListerProjets;
    const PAGE: Page = Page::Projets;
    type Args = ();

    fn description(&self) -> &'static str {
        "Liste les projets."
    }
    async fn run(&self, ctx: &ToolContext, (): Self::Args) -> Result<Outcome, StoreError> {
        Ok(Outcome::Done(Receipt::Projects { projets: ctx.store.list_projets().await? }))
    }
}

pub struct LireProjet;

#[async_trait]
impl Tool for LireProjet {
    const NAME: ToolName = ToolName::LireProjet;
    const PAGE: Page = Page::Projets;
    type Args = ByNomProjet;

    fn description(&self) -> &'static str {
        "Lit un projet : phase, statut, décisions, temps passé."
    }
    async fn run(&self, ctx: &ToolContext, ByNomProjet { nom }: Self::Args) -> Result<Outcome, StoreError> {
        let projet = match lookup_project(ctx, &nom).await? {
            Ok(p) => p,
            Err(refusal) => return Ok(Outcome::Refused(refusal)),
        };
        let Some(detail) = ctx.store.projet_detail(projet.id).await? else {
            return Ok(Outcome::Refused(Refusal::ProjectUnknown { nom }));
        };
        let now = ctx.now();
        let sessions = ctx.store.sessions_overlapping(DateTime::<Utc>::MIN_UTC, now, Some(projet.id)).await?;
        let worked_secs = worktime::totals(&sessions, DateTime::<Utc>::MIN_UTC, now, now).total_secs;
        Ok(Outcome::Done(Receipt::Project { detail, worked_secs }))
    }
}

pub struct CreerProjet;

#[async_trait]
impl Tool for CreerProjet {
    const NAME: ToolName = ToolName::CreerProjet;
    const PAGE: Page = Page::Projets;
    type Args = CreerProjetArgs;

    fn description(&self) -> &'static str {
        "Crée un projet."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let CreerProjetArgs { nom, description, phase } = args;
        Ok(match ctx.store.create_projet(&nom, description.as_deref(), phase.as_deref(), ctx.now()).await? {
            CreateProjet::Created(projet) => Outcome::Done(Receipt::ProjectCreated { projet }),
            CreateProjet::Duplicate(projet) => Outcome::Refused(Refusal::ProjectDuplicate { projet }),
        })
    }
}

pub struct ModifierProjet;

#[async_trait]
impl Tool for ModifierProjet {
    const NAME: ToolName = ToolName::ModifierProjet;
    const PAGE: Page = Page::Projets;
    type Args = ModifierProjetArgs;

    fn description(&self) -> &'static str {
        "Modifie description, phase ou statut d'un projet."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let ModifierProjetArgs { statut, nom, description, phase } = args;
        let changes = ProjetChanges { description, phase, statut };
        if changes.is_empty() {
            return Ok(Outcome::Refused(Refusal::NothingToChange));
        }
        let projet = match lookup_project(ctx, &nom).await? {
            Ok(p) => p,
            Err(refusal) => return Ok(Outcome::Refused(refusal)),
        };
        Ok(match ctx.store.update_projet(projet.id, &changes, ctx.now()).await? {
            UpdateProjet::Updated { before, after } => Outcome::Done(Receipt::ProjectUpdated { before, after }),
            UpdateProjet::NotFound => Outcome::Refused(Refusal::ProjectUnknown { nom }),
        })
    }
}

pub struct ActerDecision;

#[async_trait]
impl Tool for ActerDecision {
    const NAME: ToolName = ToolName::ActerDecision;
    const PAGE: Page = Page::Projets;
    type Args = ActerDecisionArgs;

    fn description(&self) -> &'static str {
        "Acte une décision sur un projet."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        ActerDecisionArgs { projet: nom, texte }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let projet = match lookup_project(ctx, &nom).await? {
            Ok(p) => p,
            Err(refusal) => return Ok(Outcome::Refused(refusal)),
        };
        Ok(match ctx.store.add_decision(projet.id, &texte, ctx.now()).await? {
            Some(decision) => Outcome::Done(Receipt::DecisionRecorded { decision }),
            None => Outcome::Refused(Refusal::ProjectUnknown { nom }),
        })
    }
}
