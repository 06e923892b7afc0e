//! The chrono: start, pause, resume and stop a work session attached to a project.

use super::args::{tool_args, Name};
use super::*;
use crate::memory::{worktime, ChronoChange};

pub(super) fn register(tools: &mut Vec<Box<dyn DynTool>>) {
    tools.push(Box::new(DemarrerSession));
    tools.push(Box::new(SuspendreSession));
    tools.push(Box::new(ReprendreSession));
    tools.push(Box::new(ArreterSession));
}

/// Maps a chrono change to an outcome; `done` builds the receipt of an applied change.
fn chrono_outcome(change: ChronoChange, done: impl FnOnce(crate::memory::SessionTravail) -> Receipt) -> Outcome {
    match change {
        ChronoChange::Applied(session) => Outcome::Done(done(session)),
        ChronoChange::AlreadyRunning(session) => Outcome::Refused(Refusal::SessionAlreadyRunning { session }),
        ChronoChange::AlreadyPaused(session) => Outcome::Refused(Refusal::SessionAlreadyPaused { session }),
        ChronoChange::NotPaused(session) => Outcome::Refused(Refusal::SessionNotPaused { session }),
        ChronoChange::NoSession => Outcome::Refused(Refusal::NoRunningSession),
        ChronoChange::UnknownProject => Outcome::Refused(Refusal::ProjectUnknown { nom: String::new() }),
    }
}

tool_args! {
    pub struct DemarrerSessionArgs { projet: Name }
}

pub struct DemarrerSession;

#[async_trait]
impl Tool for DemarrerSession {
    const NAME: ToolName = ToolName::DemarrerSession;
    const PAGE: Page = Page::Sessions;
    type Args = DemarrerSessionArgs;

    fn description(&self) -> &'static str {
        "Démarre le chrono de travail sur un projet."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        DemarrerSessionArgs { projet: nom }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let projet = match lookup_project(ctx, &nom).await? {
            Ok(p) => p,
            Err(refusal) => return Ok(Outcome::Refused(refusal)),
        };
        Ok(match ctx.store.start_session(projet.id, ctx.now()).await? {
            ChronoChange::UnknownProject => Outcome::Refused(Refusal::ProjectUnknown { nom }),
            change => chrono_outcome(change, |session| Receipt::SessionStarted { session }),
        })
    }
}

pub struct SuspendreSession;

#[async_trait]
impl Tool for SuspendreSession {
    const NAME: ToolName = ToolName::SuspendreSession;
    const PAGE: Page = Page::Sessions;
    type Args = ();

    fn description(&self) -> &'static str {
        "Met en pause le chrono en cours."
    }
    async fn run(&self, ctx: &ToolContext, (): Self::Args) -> Result<Outcome, StoreError> {
        Ok(chrono_outcome(ctx.store.pause_session(ctx.now()).await?, |session| Receipt::SessionPaused { session }))
    }
}

pub struct ReprendreSession;

#[async_trait]
impl Tool for ReprendreSession {
    const NAME: ToolName = ToolName::ReprendreSession;
    const PAGE: Page = Page::Sessions;
    type Args = ();

    fn description(&self) -> &'static str {
        "Reprend le chrono en pause."
    }
    async fn run(&self, ctx: &ToolContext, (): Self::Args) -> Result<Outcome, StoreError> {
        Ok(chrono_outcome(ctx.store.resume_session(ctx.now()).await?, |session| Receipt::SessionResumed { session }))
    }
}

pub struct ArreterSession;

#[async_trait]
impl Tool for ArreterSession {
    const NAME: ToolName = ToolName::ArreterSession;
    const PAGE: Page = Page::Sessions;
    type Args = ();

    fn description(&self) -> &'static str {
        "Arrête le chrono en cours."
    }
    async fn run(&self, ctx: &ToolContext, (): Self::Args) -> Result<Outcome, StoreError> {
        let now = ctx.now();
        Ok(chrono_outcome(ctx.store.stop_session(now).await?, |session| {
            let end = session.fin.unwrap_or(now);
            let worked_secs = worktime::worked_within(&session, session.debut, end, end).num_seconds();
            Receipt::SessionStopped { session, worked_secs }
        }))
    }
}
