//! Each step as performed: a pass of Claude Code through the PTY (its prompt, its session
//! flags, its journal, the lease renewed while it runs, a refused resume or an outage told
//! apart), the deploy and QA commands (in the children's allowlisted environment, with a
//! timeout, their output redacted) and the merge back — each turned into the observation the
//! machine reads.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::contract::{read_contract, CONTRACT_PLACEHOLDER};
use super::driver::{PassFacts, RunCtx};
use super::journal::journal_writer;
use super::policy::LEASE_TTL_MINUTES;
use super::prompt::{iteration_block, one_line, retry_block, task_prompt, PromptExtras, ITERATION_PROMPT};
use super::Launcher;
use crate::compact::{self, CompactOptions};
use crate::events::LaunchEvent;
use crate::machine::{
    MergeFact, NotMergedWhy, Progress, RouteQa, RunMode, RunObservation, RunPlan, Setback, QA_EXIT_ISO_ONLY,
};
use crate::pty::{self, ClaudeArgs, ExitClass, LaunchSpec, RunOutcome};
use crate::redact;
use crate::store::{AtlasStoreError, LaunchEnd, NewLaunch};
use crate::worktree::{self, MergeOutcome, Workspace};

/// `RunOutcome::killed` when Arthur's own shutdown stopped the run.
pub const KILLED_BY_SHUTDOWN: &str = "shutdown";

/// Deploy command timeout (spec §9: 900 s).
pub const DEPLOY_TIMEOUT: Duration = Duration::from_secs(900);

/// QA command timeout per route.
pub const QA_TIMEOUT: Duration = Duration::from_secs(900);

/// Added to every Claude Code child: no telemetry, no feature-flag or update calls, no
/// warm-up request (docs/interface.md §6.4): the only traffic is the model API.
pub const QUIET_CLAUDE_ENV: (&str, &str) = ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");

/// The declared route re-resolved against the real sitemap before an iteration is spent on
/// an avoidable 404: exact, then normalised (slashes, case), then the unique sitemap route
/// ending with the declared last segment. None: no sitemap, keep the declared route.
pub fn resolve_route(declared: &str, sitemap: &[String]) -> Option<String> {
    if sitemap.is_empty() {
        return None;
    }
    let norm = |r: &str| format!("/{}", r.trim().trim_matches('/').to_lowercase());
    if let Some(hit) = sitemap.iter().find(|r| r.as_str() == declared) {
        return Some(hit.clone());
    }
    let d = norm(declared);
    if let Some(hit) = sitemap.iter().find(|r| norm(r) == d) {
        return Some(hit.clone());
    }
    let last = d.rsplit('/').next().unwrap_or("");
    let hits: Vec<&String> =
        sitemap.iter().filter(|r| !last.is_empty() && norm(r).rsplit('/').next() == Some(last)).collect();
    match hits.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// What the launcher gives every Claude Code child on purpose, beyond the allowlist: where the
/// contract goes, no non-essential traffic, and `IS_SANDBOX=1` on a declared sandbox (the only
/// way Claude Code 2.1.x accepts bypassPermissions as root).
pub fn claude_env(contract_file: &Path, sandboxed: bool) -> Vec<(String, String)> {
    let mut env = vec![
        ("ATLAS_CONTRACT_FILE".to_string(), contract_file.display().to_string()),
        (QUIET_CLAUDE_ENV.0.to_string(), QUIET_CLAUDE_ENV.1.to_string()),
    ];
    if sandboxed {
        env.push(("IS_SANDBOX".into(), "1".into()));
    }
    env
}

/// One pass as the launcher starts it.
pub(super) struct Pass {
    iteration: u32,
    attempt: u32,
    prompt: String,
    system: String,
    resume: Option<String>,
    persist: bool,
    model: Option<String>,
    session_mode: &'static str,
}

impl Launcher {
    /// One pass of Claude Code (the `Run` step): its prompt, its session flags, the run, and
    /// what it came to.
    pub(super) async fn run_pass(
        &self,
        ctx: &RunCtx,
        plan: &RunPlan,
        progress: &Progress,
        passes: &mut Vec<PassFacts>,
    ) -> Result<RunObservation, AtlasStoreError> {
        // The contract is written early (ok: false) and overwritten by the agent.
        let _ = std::fs::write(&ctx.contract_file, CONTRACT_PLACEHOLDER);
        let iteration_block = match &plan.feedback {
            Some(feedback) => {
                let commits =
                    worktree::commits_since_fork(&ctx.ws, ctx.trunk_start.as_deref()).await.unwrap_or_default();
                // A new session does not remember the previous pass: it is told what it did.
                let transcript = match (&plan.mode, passes.last()) {
                    (RunMode::Fresh { .. }, Some(last)) => Some(self.compacted_transcript(last.launch_id, 6000).await?),
                    _ => None,
                };
                Some(iteration_block(plan.iteration, feedback, &commits, transcript.as_deref(), &plan.mode))
            }
            None => None,
        };
        let retry_block = ctx.retry.as_ref().map(retry_block);
        let prompt = task_prompt(
            &ctx.row,
            &ctx.mail,
            ctx.client.as_ref(),
            &PromptExtras { iteration: iteration_block, retry: retry_block },
        );
        let mut system = ctx.kind.system_prompt(&ctx.contract_file, self.cfg.budget);
        if let Some(p) = &ctx.persona {
            system = format!("{system}\n\n{p}");
        }
        if plan.feedback.is_some() {
            system = format!("{system}\n\n{}", ITERATION_PROMPT.replace("{{iteration}}", &plan.iteration.to_string()));
        }
        let (resume, persist) = match &plan.mode {
            RunMode::First { persist } => (None, *persist),
            RunMode::Resume { session } => (Some(session.clone()), true),
            RunMode::Fresh { .. } => (None, progress.may_iterate()),
        };
        let model = ctx.client.as_ref().and_then(|c| c.claude_model.clone()).or_else(|| self.cfg.model.clone());
        let pass = Pass {
            iteration: plan.iteration,
            attempt: ctx.retry.as_ref().map_or(1, |r| r.attempt),
            prompt,
            system,
            resume: resume.clone(),
            persist,
            model,
            session_mode: plan.mode.as_str(),
        };
        let (launch_id, run, cost_usd) = self.run_claude(ctx, pass).await?;
        let result = run.result.as_ref();
        passes.push(PassFacts {
            launch_id,
            cost_usd,
            turns: result.and_then(|r| r["num_turns"].as_u64()),
            duration_s: result.and_then(|r| r["duration_ms"].as_u64()).map(|ms| ms / 1000),
            said: result.and_then(|r| r["result"].as_str()).map(str::to_string),
        });
        // A refused resume ran nothing (Claude Code only said why): it is not a pass of the run
        // and adds nothing, known or unknown, to its figures.
        let resume_refused = resume.is_some() && run.resume_refused();
        if resume_refused {
            passes.pop();
        }
        // Something outside the run kept it from working: parked, never failed for good.
        let api = run.api_failure();
        let setback = if run.refused_as_root() {
            Some(Setback::RootRefused)
        } else {
            api.as_ref().filter(|a| a.transient()).map(|a| Setback::ApiUnavailable { status: a.status })
        };
        if let Some(api) = &api {
            let said = redact::redact(&api.message).0.into_owned();
            tracing::warn!(email = ctx.row.id, status = ?api.status, transient = api.transient(), %said, "Claude Code gave up on the API");
        }
        if run.refused_as_root() {
            tracing::error!(
                email = ctx.row.id,
                "Claude Code refused bypassPermissions as root; run Arthur as its service user or set ATLAS_SANDBOXED=1"
            );
        }
        let denied: Vec<String> = run
            .permission_denials()
            .into_iter()
            .map(|d| format!("{} : {}", d.tool, redact::redact(&d.input).0))
            .collect();
        let (contract, source) = read_contract(&ctx.contract_file);
        self.audit(ctx.row.id, LaunchEvent::ContractRead { launch_id, source: format!("{source:?}"), ok: contract.ok })
            .await?;
        let commits = worktree::commits_since_fork(&ctx.ws, ctx.trunk_start.as_deref()).await.unwrap_or_default();
        if resume_refused {
            let said = run.noise.first().map(|l| redact::redact(l).0.into_owned());
            tracing::warn!(
                email = ctx.row.id,
                ?said,
                "Claude Code refused to resume the session; a fresh pass follows"
            );
            let session = resume.clone().unwrap_or_default();
            self.audit(ctx.row.id, LaunchEvent::ResumeRefused { launch_id, session, said }).await?;
        } else if run.class != ExitClass::Ok {
            let event = LaunchEvent::SpawnFailed {
                launch_id,
                class: run.class.as_str(),
                code: run.class.code(),
                retryable: run.class.retryable(),
                killed: run.killed,
                commits: commits.len(),
            };
            self.audit(ctx.row.id, event).await?;
            if run.class.retryable() {
                self.audit(
                    ctx.row.id,
                    LaunchEvent::Salvaged { commits: commits.len(), contract: format!("{source:?}") },
                )
                .await?;
            }
        } else {
            self.audit(ctx.row.id, LaunchEvent::SpawnActionDone { launch_id, commits: commits.len() }).await?;
        }
        // Only a saved session can be resumed.
        let session = persist
            .then(|| result.and_then(|r| r["session_id"].as_str().map(str::to_string)).or(run.session_id.clone()))
            .flatten();
        Ok(RunObservation {
            class: run.class,
            by_shutdown: run.killed == Some(KILLED_BY_SHUTDOWN),
            resume_refused,
            session,
            contract,
            commits: commits.len(),
            setback,
            max_turns: run.max_turns_reached(),
            denied,
        })
    }

    /// The `Deploy` step: `ATLAS_DEPLOY_CMD` once in the workspace (900 s).
    pub(super) async fn deploy(&self, ctx: &RunCtx, tenant: &str) -> Result<Result<(), String>, AtlasStoreError> {
        let id = ctx.row.id;
        let Some(deploy) = &self.cfg.deploy_cmd else {
            let reason = "ATLAS_DEPLOY_CMD is not set".to_string();
            self.audit(id, LaunchEvent::DeployFailed { code: None, output_lines: 0, reason: Some(reason) }).await?;
            return Ok(Err("ATLAS_DEPLOY_CMD n'est pas configurée".into()));
        };
        let env = self.cfg.child_env.for_child(&[
            ("ATLAS_TENANT".into(), tenant.to_string()),
            ("ATLAS_WORKSPACE".into(), ctx.ws.dir().display().to_string()),
        ]);
        let (code, out) = shell(deploy, ctx.ws.dir(), &env, DEPLOY_TIMEOUT).await;
        if code != Some(0) {
            let event = LaunchEvent::DeployFailed { code, output_lines: out.lines().count(), reason: None };
            self.audit(id, event).await?;
            let tail = tail_lines(&out, 20);
            return Ok(Err(match code {
                Some(c) => format!("code {c} : {}", one_line(&tail)),
                None => one_line(&tail),
            }));
        }
        self.audit(id, LaunchEvent::DeployDone { tenant: tenant.to_string() }).await?;
        Ok(Ok(()))
    }

    /// The `Qa` step: `ATLAS_QA_CMD` once per declared route, re-resolved against the sitemap.
    pub(super) async fn qa(
        &self,
        ctx: &RunCtx,
        tenant: &str,
        routes: &[String],
        iteration: u32,
    ) -> Result<Vec<RouteQa>, AtlasStoreError> {
        let Some(qa) = &self.cfg.qa_cmd else { return Ok(Vec::new()) };
        let sitemap = read_sitemap(ctx.ws.dir());
        let mut results = Vec::new();
        for declared in routes {
            let route = resolve_route(declared, &sitemap).unwrap_or_else(|| declared.clone());
            let env = self.cfg.child_env.for_child(&[
                ("ATLAS_TENANT".into(), tenant.to_string()),
                ("ATLAS_ROUTE".into(), route.clone()),
                ("ATLAS_WORKSPACE".into(), ctx.ws.dir().display().to_string()),
            ]);
            let (code, out) = shell(qa, ctx.ws.dir(), &env, QA_TIMEOUT).await;
            let output = if code == Some(0) {
                String::new()
            } else {
                compact::compact_tool_output(&out, true, &CompactOptions::default())
            };
            results.push(RouteQa { declared: declared.clone(), route, code, output });
        }
        let failed = results.iter().filter(|r| !r.passed()).count();
        let event = if failed == 0 {
            LaunchEvent::QaPassed { routes: results.len(), iteration }
        } else {
            let iso_only = results.iter().filter(|r| !r.passed()).all(|r| r.code == Some(QA_EXIT_ISO_ONLY));
            LaunchEvent::QaFailed { failed, routes: results.len(), iso_only, iteration }
        };
        self.audit(ctx.row.id, event).await?;
        Ok(results)
    }

    /// The `MergeBack` step: the branch into the trunk, only onto a clean trunk on its base.
    pub(super) async fn merge(&self, ctx: &RunCtx) -> Result<MergeFact, AtlasStoreError> {
        let id = ctx.row.id;
        let Workspace::Worktree { branch, base, .. } = &ctx.ws else {
            let commits = worktree::commits_since_fork(&ctx.ws, ctx.trunk_start.as_deref()).await.unwrap_or_default();
            return Ok(MergeFact::InTrunk { commits: commits.len() });
        };
        let not_merged = |why: NotMergedWhy| MergeFact::NotMerged { branch: branch.clone(), why };
        let fact = match worktree::merge_back(&ctx.ws).await {
            Ok(MergeOutcome::Merged { commits, sha }) => {
                self.audit(id, LaunchEvent::WorktreeMerged { commits, sha: sha.clone(), base: base.clone() }).await?;
                return Ok(MergeFact::Merged { base: base.clone(), sha, commits });
            }
            Ok(MergeOutcome::NothingToMerge) => return Ok(MergeFact::NothingToMerge),
            Ok(MergeOutcome::NotAWorktree) => return Ok(MergeFact::InTrunk { commits: 0 }),
            Ok(MergeOutcome::TrunkDirty) => not_merged(NotMergedWhy::DirtyTrunk),
            Ok(MergeOutcome::Conflict { detail }) => not_merged(NotMergedWhy::Conflict(detail)),
            Ok(MergeOutcome::TrunkNotOnBase { head }) => not_merged(NotMergedWhy::TrunkElsewhere(head)),
            Err(e) => not_merged(NotMergedWhy::Failed(e.to_string())),
        };
        let why = match &fact {
            MergeFact::NotMerged { why, .. } => format!("{why:?}"),
            _ => String::new(),
        };
        self.audit(id, LaunchEvent::WorktreeMergeSkipped { why, branch: branch.clone() }).await?;
        Ok(fact)
    }

    /// One Claude Code process through the PTY, its events journaled live (redacted, batched).
    /// Returns the launch row, the outcome and the pass's own cost.
    pub(super) async fn run_claude(
        &self,
        ctx: &RunCtx,
        pass: Pass,
    ) -> Result<(i64, RunOutcome, Option<f64>), AtlasStoreError> {
        let email_id = ctx.row.id;
        let (branch, fork) = match &ctx.ws {
            Workspace::Worktree { branch, fork_commit, .. } => (Some(branch.clone()), Some(fork_commit.clone())),
            Workspace::Trunk { .. } => (None, None),
        };
        let launch_id = self
            .store
            .start_launch(
                &NewLaunch {
                    email_id,
                    iteration: pass.iteration as i64,
                    prompt_kind: if pass.iteration > 1 { "iteration" } else { ctx.kind.as_str() },
                    max_turns: ctx.kind.max_turns() as i64,
                    workspace: ctx.ws.dir().display().to_string(),
                    branch,
                    fork_commit: fork,
                    attempt: pass.attempt as i64,
                    session_mode: pass.session_mode,
                },
                self.now(),
            )
            .await?;
        // What the session already cost before this pass (a resumed session's total adds up
        // every pass): the earlier launches' own costs.
        let session_cost_before = match &pass.resume {
            Some(session) => {
                let earlier = self.store.launches(email_id).await?;
                let costs: Vec<f64> = earlier
                    .iter()
                    .filter(|l| l.id != launch_id && l.end.session_id.as_deref() == Some(session.as_str()))
                    .filter_map(|l| l.end.cost_usd)
                    .collect();
                (!costs.is_empty()).then(|| costs.iter().sum())
            }
            None => None,
        };
        let args = pty::claude_args(&ClaudeArgs {
            prompt: pass.prompt,
            add_dir: ctx.ws.dir().to_path_buf(),
            permission_mode: self.cfg.permission_mode.clone(),
            max_turns: ctx.kind.max_turns(),
            system_prompt: pass.system,
            resume: pass.resume,
            persist_session: pass.persist,
            strict_mcp: self.cfg.strict_mcp,
            allowed_tools: self.cfg.allowed_tools.clone(),
            model: pass.model,
        });
        let spec = LaunchSpec {
            program: self.cfg.claude_bin.clone(),
            args,
            cwd: ctx.ws.dir().to_path_buf(),
            // Only the allowlist and what the run needs on purpose: none of Arthur's secrets.
            env: self.cfg.child_env.for_child(&claude_env(&ctx.contract_file, self.cfg.sandboxed)),
            idle_timeout: self.cfg.idle_timeout,
            hard_timeout: self.cfg.hard_timeout,
            budget: self.cfg.budget,
            grace_after_result: self.cfg.grace_after_result,
            cols: 400,
        };
        let (tx, rx) = mpsc::unbounded_channel::<Value>();
        let writer = tokio::spawn(journal_writer(self.store.clone(), self.clock.clone(), launch_id, rx));
        // The lease lives as long as the run: renewed every minute.
        let renew = {
            let (store, clock, holder) = (self.store.clone(), self.clock.clone(), self.holder.clone());
            tokio::spawn(async move {
                let mut t = tokio::time::interval(Duration::from_secs(60));
                t.tick().await;
                loop {
                    t.tick().await;
                    let _ = store
                        .renew_lease(email_id, &holder, clock.now(), chrono::Duration::minutes(LEASE_TTL_MINUTES))
                        .await;
                }
            })
        };
        let started = std::time::Instant::now();
        let run = pty::run(spec, move |event| {
            let _ = tx.send(event);
        });
        let outcome = match self.shutdown.clone() {
            None => run.await,
            Some(stop) => tokio::select! {
                outcome = run => outcome,
                // Dropping the run kills Claude Code's whole session.
                () = stop.cancelled() => {
                    tracing::warn!(email = email_id, "Arthur is stopping: the run in flight is interrupted and salvaged");
                    Ok(RunOutcome {
                        class: ExitClass::HardTimeout,
                        exit_code: None,
                        result: None,
                        events: 0,
                        skipped_lines: 0,
                        duration: started.elapsed(),
                        killed: Some(KILLED_BY_SHUTDOWN),
                        session_id: None,
                        noise: Vec::new(),
                        init_seen: false,
                    })
                }
            },
        };
        renew.abort();
        let (events, redactions) = writer.await.unwrap_or(Ok((0, 0)))?;
        let mut run = match outcome {
            Ok(run) => run,
            Err(e) => {
                tracing::warn!(email = email_id, "Claude Code could not start: {e}");
                RunOutcome {
                    class: ExitClass::Error,
                    exit_code: None,
                    result: None,
                    events: 0,
                    skipped_lines: 0,
                    duration: Duration::ZERO,
                    killed: None,
                    session_id: None,
                    noise: Vec::new(),
                    init_seen: false,
                }
            }
        };
        // The journal's count is the truth when the run was cut by a shutdown.
        run.events = run.events.max(events as u64);
        let result = run.result.as_ref();
        let cost_usd = run.pass_cost_usd(session_cost_before);
        let end = LaunchEnd {
            status: run.class.as_str().to_string(),
            exit_code: run.exit_code.map(i64::from),
            killed: run.killed.map(str::to_string),
            session_id: result.and_then(|r| r["session_id"].as_str().map(str::to_string)).or(run.session_id.clone()),
            cost_usd,
            num_turns: result.and_then(|r| r["num_turns"].as_i64()),
            duration_ms: result.and_then(|r| r["duration_ms"].as_i64()).or(Some(run.duration.as_millis() as i64)),
            events,
            redactions,
            contract: std::fs::read_to_string(&ctx.contract_file).ok().map(|c| redact::redact(&c).0.into_owned()),
        };
        self.store.finish_launch(launch_id, &end, self.now()).await?;
        Ok((launch_id, run, cost_usd))
    }
}

fn read_sitemap(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("sitemap.txt"))
        .map(|t| t.lines().map(str::trim).filter(|l| l.starts_with('/')).map(str::to_string).collect())
        .unwrap_or_default()
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A configured command through `sh -c`, with a timeout, in `env` only (the child's whole
/// environment); (exit code, output). Its output is redacted before anyone sees it.
async fn shell(cmd: &str, cwd: &Path, env: &[(String, String)], timeout: Duration) -> (Option<i32>, String) {
    let mut c = tokio::process::Command::new("sh");
    c.arg("-c").arg(cmd).current_dir(cwd).kill_on_drop(true).stdin(std::process::Stdio::null()).env_clear();
    for (k, v) in env {
        c.env(k, v);
    }
    match tokio::time::timeout(timeout, c.output()).await {
        Err(_) => (None, format!("timed out after {} s", timeout.as_secs())),
        Ok(Err(e)) => (None, format!("cannot run the command: {e}")),
        Ok(Ok(out)) => {
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            (out.status.code(), redact::redact(&text).0.into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_re_resolved_against_the_sitemap() {
        let sitemap: Vec<String> =
            ["/", "/boutique/panier", "/Contact/", "/blog/article"].iter().map(|s| s.to_string()).collect();
        assert_eq!(resolve_route("/boutique/panier", &sitemap).as_deref(), Some("/boutique/panier"));
        assert_eq!(resolve_route("contact", &sitemap).as_deref(), Some("/Contact/"));
        assert_eq!(resolve_route("/panier", &sitemap).as_deref(), Some("/boutique/panier"));
        assert_eq!(resolve_route("/inconnu", &sitemap), None);
        assert_eq!(resolve_route("/panier", &[]), None);
    }
}
