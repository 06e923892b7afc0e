//! One leased message, from `classified` to its end: the workspace it works in (a new
//! worktree, the kept branch of a retry, or the trunk), what a retry continues, then the
//! machine's decisions executed one by one — each step performed and its observation fed
//! back, a corrected lane recorded, the end handed to `finish`. The rules live in
//! `machine`; this file only performs.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::contract::read_contract;
use super::prompt::{PromptKind, RetryContext};
use super::{LaunchResult, Launcher};
use crate::authority::Authority;
use crate::events::LaunchEvent;
use crate::machine::{self, Decision, Progress, Step};
use crate::mail::Mail;
use crate::store::{AtlasStoreError, Client, EmailRow};
use crate::worktree::{self, Workspace};
use crate::{audit, Complexity, EmailState};

/// What every step of one launch works with (instead of arguments passed along).
pub(super) struct RunCtx {
    pub(super) row: EmailRow,
    pub(super) mail: Mail,
    pub(super) client: Option<Client>,
    pub(super) ws: Workspace,
    pub(super) kind: PromptKind,
    pub(super) contract_file: PathBuf,
    pub(super) persona: Option<String>,
    /// In the trunk: its HEAD before the run (commits are counted from it).
    pub(super) trunk_start: Option<String>,
    pub(super) retry: Option<RetryContext>,
}

/// One pass of Claude Code, as recorded on its launch row.
pub(super) struct PassFacts {
    pub(super) launch_id: i64,
    /// This pass's own cost (not the session's running total).
    pub(super) cost_usd: Option<f64>,
    pub(super) turns: Option<u64>,
    pub(super) duration_s: Option<u64>,
    /// The result's text: the agent's last words, whose cited commits are checked.
    pub(super) said: Option<String>,
}

impl Launcher {
    /// Launches one leased message and orchestrates what follows, step by step
    /// (`machine::next` decides; this performs).
    pub(super) async fn launch_leased(
        &self,
        row: &EmailRow,
        authority: Authority,
    ) -> Result<LaunchResult, AtlasStoreError> {
        let store = self.store.as_ref();
        let (Some(intent), complexity) = (row.intent, row.complexity.unwrap_or(Complexity::Leger)) else {
            return Ok(LaunchResult::Failed("no intent".into()));
        };
        let kind = PromptKind::of(Some(intent), Some(complexity));
        let Some(repo) = self.cfg.repo.clone() else {
            store
                .audit(Some(row.id), audit::SPAWN_FAILED, json!({"reason": "ATLAS_REPO is not set"}), self.now())
                .await?;
            store
                .transition(
                    row.id,
                    EmailState::Classified,
                    EmailState::Failed,
                    audit::ORCHESTRATION_FAILED,
                    json!({"reason": "no_repo"}),
                    self.now(),
                )
                .await?;
            return Ok(LaunchResult::Failed("ATLAS_REPO is not set".into()));
        };
        let attempt = row.launch_retries.max(0) as u32 + 1;
        let started = LaunchEvent::SpawnStarted {
            prompt: kind.as_str(),
            max_turns: kind.max_turns(),
            authority: authority.as_str(),
            attempt,
        };
        if !store
            .transition(
                row.id,
                EmailState::Classified,
                EmailState::Spawned,
                started.name(),
                started.detail(),
                self.now(),
            )
            .await?
        {
            return Ok(LaunchResult::Failed("no longer classified".into()));
        }
        let raw = store.raw(row.id).await?.unwrap_or_default();
        let mail = Mail::parse(&raw);
        let client = match row.client_id {
            Some(id) => store.client(id).await?,
            None => None,
        };
        let ws = self.workspace(row, &repo).await?;
        let trunk_start = match &ws {
            Workspace::Trunk { .. } => worktree::head_commit(ws.dir()).await.ok().flatten(),
            Workspace::Worktree { .. } => None,
        };
        let persona = self.persona_block(row.id, intent, complexity, &mail.subject).await?;
        let contracts = self.cfg.data_dir.join("contracts");
        let _ = std::fs::create_dir_all(&contracts);
        let contract_file = contracts.join(format!("email-{}.json", row.id));
        let earlier = store.launches(row.id).await?;
        // A retry (after a timeout or a parking) continues the work: what the earlier attempts
        // committed, and what their last contract said (read before this attempt writes its own).
        let retry = if !earlier.is_empty() {
            let commits = worktree::commits_since_fork(&ws, trunk_start.as_deref()).await.unwrap_or_default();
            let (previous, _) = read_contract(&contract_file);
            Some(RetryContext {
                attempt,
                max_attempts: self.cfg.max_retries + 1,
                commits,
                summary: Some(previous.summary_md).filter(|s| !s.trim().is_empty()),
            })
        } else {
            None
        };
        // …in the session its last launch saved, when Claude Code got to start one.
        let resume = earlier
            .iter()
            .rev()
            .find(|l| l.session_mode.as_deref() != Some("not_saved") && l.end.events > 0)
            .and_then(|l| l.end.session_id.clone());
        let ctx = RunCtx { row: row.clone(), mail, client, ws, kind, contract_file, persona, trunk_start, retry };

        let mut progress =
            Progress::new((intent, complexity), self.cfg.qa_cmd.is_some(), attempt - 1, self.cfg.max_retries);
        progress.setbacks_done = u32::try_from(row.attempts.max(0)).unwrap_or(u32::MAX);
        progress.max_setbacks = self.cfg.max_api_retries;
        progress.resume = resume;
        let mut step = progress.first_step();
        let mut passes: Vec<PassFacts> = Vec::new();
        let finish = loop {
            let observation = match step {
                Step::Run(s) => {
                    let seen = self.run_pass(&ctx, s.plan(), &progress, &mut passes).await?;
                    s.observed(seen)
                }
                Step::Deploy(s) => {
                    let done = self.deploy(&ctx, s.tenant()).await?;
                    s.observed(done)
                }
                Step::Qa(s) => {
                    let routes = self.qa(&ctx, s.tenant(), s.routes(), progress.iteration).await?;
                    s.observed(routes)
                }
                Step::MergeBack(s) => s.observed(self.merge(&ctx).await?),
            };
            let t = machine::next(progress, observation);
            progress = t.progress;
            if let Some((intent, complexity)) = t.lane_corrected {
                // The agent read the whole thread: the lane is corrected (toward no code only).
                store.correct_intent(row.id, intent, complexity, self.now()).await?;
            }
            match t.decision {
                Decision::Perform(next) => step = next,
                Decision::Finish(finish) => break finish,
            }
        };
        self.finish(&ctx, progress, finish, &passes).await
    }

    /// Where the run works: the trunk under `ATLAS_WORKTREE=0`; a retry's kept branch; else a
    /// new worktree (the trunk when the mechanism fails, audited — never a lost run).
    pub(super) async fn workspace(&self, row: &EmailRow, repo: &Path) -> Result<Workspace, AtlasStoreError> {
        let worktrees = self.cfg.data_dir.join("worktrees");
        if !self.cfg.use_worktree {
            let reason = "ATLAS_WORKTREE=0 : le run travaille dans le tronc".to_string();
            self.audit(row.id, LaunchEvent::WorktreeFallback { reason: reason.clone() }).await?;
            return Ok(Workspace::Trunk { repo: repo.to_path_buf(), reason });
        }
        {
            // A message launched before (a timeout, a parking, a dead launcher) continues on
            // the branch it left.
            let launches = self.store.launches(row.id).await?;
            if let Some(prev) = launches.iter().rev().find(|l| l.branch.is_some() && l.fork_commit.is_some()) {
                let (branch, fork) =
                    (prev.branch.clone().unwrap_or_default(), prev.fork_commit.clone().unwrap_or_default());
                match worktree::reopen(
                    repo,
                    &worktrees,
                    Path::new(&prev.workspace),
                    &branch,
                    &fork,
                    self.cfg.base_branch.as_deref(),
                )
                .await
                {
                    Ok(ws) => {
                        let path = ws.dir().display().to_string();
                        self.audit(row.id, LaunchEvent::WorktreeReopened { branch, path }).await?;
                        return Ok(ws);
                    }
                    Err(e) => {
                        tracing::warn!(email = row.id, %branch, "the kept branch cannot be reopened, a new worktree is made: {e}")
                    }
                }
            }
        }
        let name = format!("email-{}", row.id);
        let ws = match worktree::prepare(repo, &worktrees, &name, self.cfg.base_branch.as_deref()).await {
            Ok(ws) => ws,
            Err(e) => Workspace::Trunk { repo: repo.to_path_buf(), reason: e.to_string() },
        };
        if let Workspace::Trunk { reason, .. } = &ws {
            self.audit(row.id, LaunchEvent::WorktreeFallback { reason: reason.clone() }).await?;
        }
        Ok(ws)
    }
}
