//! Tools over projects and their decisions (the Mentor's own).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::*;
use crate::memory::{worktime, CreateProjet, ProjetChanges, Statut, UpdateProjet};

pub(super) fn register(tools: &mut Vec<Box<dyn DynTool>>) {
    tools.push(Box::new(ListerProjets));
    tools.push(Box::new(LireProjet));
    tools.push(Box::new(CreerProjet));
    tools.push(Box::new(ModifierProjet));
    tools.push(Box::new(ActerDecision));
}

fn statut_schema() -> Value {
    let values: Vec<&str> = Statut::ALL.iter().map(|s| s.as_str()).collect();
    serde_json::json!({"type": "string", "enum": values})
}

pub struct ListerProjets;

#[async_trait]
impl Tool for ListerProjets {
    const NAME: &'static str = "lister_projets";
    const PAGE: Page = Page::Projets;
    type Args = ();

    fn description(&self) -> &'static str {
        "Liste les projets."
    }
    fn parameters(&self) -> Value {
        object_schema(&[], &[])
    }
    fn parse(&self, _: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        Ok(())
    }
    async fn run(&self, ctx: &ToolContext, (): Self::Args) -> Result<Outcome, StoreError> {
        Ok(Outcome::Done(Receipt::Projects { projets: ctx.store.list_projets().await? }))
    }
}

pub struct LireProjet;

#[async_trait]
impl Tool for LireProjet {
    const NAME: &'static str = "lire_projet";
    const PAGE: Page = Page::Projets;
    type Args = String;

    fn description(&self) -> &'static str {
        "Lit un projet : phase, statut, décisions, temps passé."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("nom", string_prop(""))], &["nom"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        a.name("nom")
    }
    async fn run(&self, ctx: &ToolContext, nom: Self::Args) -> Result<Outcome, StoreError> {
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
    const NAME: &'static str = "creer_projet";
    const PAGE: Page = Page::Projets;
    type Args = (String, Option<String>, Option<String>);

    fn description(&self) -> &'static str {
        "Crée un projet."
    }
    fn parameters(&self) -> Value {
        object_schema(
            &[("nom", string_prop("")), ("description", string_prop("")), ("phase", string_prop(""))],
            &["nom"],
        )
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        Ok((a.name("nom")?, a.opt_text("description")?, a.opt_name("phase")?))
    }
    async fn run(&self, ctx: &ToolContext, (nom, description, phase): Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.create_projet(&nom, description.as_deref(), phase.as_deref(), ctx.now()).await? {
            CreateProjet::Created(projet) => Outcome::Done(Receipt::ProjectCreated { projet }),
            CreateProjet::Duplicate(projet) => Outcome::Refused(Refusal::ProjectDuplicate { projet }),
        })
    }
}

pub struct ModifierProjet;

#[async_trait]
impl Tool for ModifierProjet {
    const NAME: &'static str = "modifier_projet";
    const PAGE: Page = Page::Projets;
    type Args = (String, ProjetChanges);

    fn description(&self) -> &'static str {
        "Modifie description, phase ou statut d'un projet."
    }
    fn parameters(&self) -> Value {
        object_schema(
            &[
                ("nom", string_prop("")),
                ("description", string_prop("")),
                ("phase", string_prop("")),
                ("statut", statut_schema()),
            ],
            &["nom"],
        )
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        let statut = match a.opt_name("statut")? {
            None => None,
            Some(raw) => Some(Statut::parse(&raw).ok_or(ArgError::new("statut", ArgProblem::NotAllowed))?),
        };
        Ok((
            a.name("nom")?,
            ProjetChanges { description: a.opt_text("description")?, phase: a.opt_name("phase")?, statut },
        ))
    }
    async fn run(&self, ctx: &ToolContext, (nom, changes): Self::Args) -> Result<Outcome, StoreError> {
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
    const NAME: &'static str = "acter_decision";
    const PAGE: Page = Page::Projets;
    type Args = (String, String);

    fn description(&self) -> &'static str {
        "Acte une décision sur un projet."
    }
    fn parameters(&self) -> Value {
        object_schema(&[("projet", string_prop("")), ("texte", string_prop(""))], &["projet", "texte"])
    }
    fn parse(&self, a: &Args, _: &ToolContext) -> Result<Self::Args, ArgError> {
        Ok((a.name("projet")?, a.text("texte")?))
    }
    async fn run(&self, ctx: &ToolContext, (nom, texte): Self::Args) -> Result<Outcome, StoreError> {
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
