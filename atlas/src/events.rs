//! The launcher's audit events, typed: each one a variant with its own fields, turned into
//! its stored name and JSON detail in one place — no string constant paired with ad-hoc
//! JSON at the call site, so an event always carries the same fields.

use serde_json::{json, Value};

use super::audit;

/// One audit event of the launcher (spec §3, §4, §9; issues 17 and 18).
#[derive(Debug, Clone, PartialEq)]
pub enum LaunchEvent {
    /// The author is not verified: the launch waits for the founder.
    LaunchHeld {
        reason: &'static str,
        from: Option<String>,
        dkim_pass: bool,
        client_id: Option<i64>,
        intent: Option<&'static str>,
        complexity: Option<&'static str>,
    },
    SpawnStarted {
        prompt: &'static str,
        max_turns: u32,
        authority: &'static str,
        attempt: u32,
    },
    WorktreeFallback {
        reason: String,
    },
    WorktreeReopened {
        branch: String,
        path: String,
    },
    PersonaLoaded {
        agent: &'static str,
    },
    PersonaFailed {
        agent: &'static str,
        error: String,
    },
    ContractRead {
        launch_id: i64,
        source: String,
        ok: bool,
    },
    SpawnActionDone {
        launch_id: i64,
        commits: usize,
    },
    SpawnFailed {
        launch_id: i64,
        class: &'static str,
        code: i32,
        retryable: bool,
        killed: Option<&'static str>,
        commits: usize,
    },
    /// `--resume` refused by Claude Code (no such session): a fresh pass follows.
    ResumeRefused {
        launch_id: i64,
        session: String,
        said: Option<String>,
    },
    Salvaged {
        commits: usize,
        contract: String,
    },
    DeployDone {
        tenant: String,
    },
    DeployFailed {
        code: Option<i32>,
        output_lines: usize,
        reason: Option<String>,
    },
    QaPassed {
        routes: usize,
        iteration: u32,
    },
    QaFailed {
        failed: usize,
        routes: usize,
        iso_only: bool,
        iteration: u32,
    },
    Escalated {
        reason: &'static str,
        iterations: u32,
        attempts: u32,
        iso_only: bool,
    },
    WorktreeMerged {
        commits: usize,
        sha: String,
        base: String,
    },
    WorktreeMergeSkipped {
        why: String,
        branch: String,
    },
    OrchestrationFailed {
        reason: &'static str,
    },
    RecapSent {
        status: &'static str,
    },
    RecapFailed {
        error: String,
    },
    /// The recap of a second (or later) timeout is not sent: the founder was told at the first.
    RecapSkipped {
        reason: &'static str,
        attempt: u32,
    },
    LockWatchdogAlert {
        holder: String,
        since: String,
    },
}

impl LaunchEvent {
    /// The stored event name.
    pub fn name(&self) -> &'static str {
        match self {
            LaunchEvent::LaunchHeld { .. } => audit::LAUNCH_HELD_UNVERIFIED_SENDER,
            LaunchEvent::SpawnStarted { .. } => audit::SPAWN_STARTED,
            LaunchEvent::WorktreeFallback { .. } => audit::WORKTREE_FALLBACK,
            LaunchEvent::WorktreeReopened { .. } => audit::WORKTREE_REOPENED,
            LaunchEvent::PersonaLoaded { .. } => audit::PERSONA_LOADED,
            LaunchEvent::PersonaFailed { .. } => audit::PERSONA_FAILED,
            LaunchEvent::ContractRead { .. } => audit::CONTRACT_READ,
            LaunchEvent::SpawnActionDone { .. } => audit::SPAWN_ACTION_DONE,
            LaunchEvent::SpawnFailed { .. } => audit::SPAWN_FAILED,
            LaunchEvent::ResumeRefused { .. } => audit::RESUME_REFUSED,
            LaunchEvent::Salvaged { .. } => audit::SALVAGED,
            LaunchEvent::DeployDone { .. } => audit::DEPLOY_DONE,
            LaunchEvent::DeployFailed { .. } => audit::DEPLOY_FAILED,
            LaunchEvent::QaPassed { .. } => audit::QA_PASSED,
            LaunchEvent::QaFailed { .. } => audit::QA_FAILED,
            LaunchEvent::Escalated { .. } => audit::ESCALATED,
            LaunchEvent::WorktreeMerged { .. } => audit::WORKTREE_MERGED,
            LaunchEvent::WorktreeMergeSkipped { .. } => audit::WORKTREE_MERGE_SKIPPED,
            LaunchEvent::OrchestrationFailed { .. } => audit::ORCHESTRATION_FAILED,
            LaunchEvent::RecapSent { .. } => audit::RECAP_SENT,
            LaunchEvent::RecapFailed { .. } => audit::RECAP_FAILED,
            LaunchEvent::RecapSkipped { .. } => audit::RECAP_SKIPPED,
            LaunchEvent::LockWatchdogAlert { .. } => audit::LOCK_WATCHDOG_ALERT,
        }
    }

    /// The stored detail.
    pub fn detail(&self) -> Value {
        match self {
            LaunchEvent::LaunchHeld { reason, from, dkim_pass, client_id, intent, complexity } => json!({
                "reason": reason, "from": from, "dkim_pass": dkim_pass, "client_id": client_id,
                "intent": intent, "complexity": complexity,
            }),
            LaunchEvent::SpawnStarted { prompt, max_turns, authority, attempt } => {
                json!({"prompt": prompt, "max_turns": max_turns, "authority": authority, "attempt": attempt})
            }
            LaunchEvent::WorktreeFallback { reason } => json!({"reason": reason}),
            LaunchEvent::WorktreeReopened { branch, path } => json!({"branch": branch, "path": path}),
            LaunchEvent::PersonaLoaded { agent } => json!({"agent": agent, "level": "metier"}),
            LaunchEvent::PersonaFailed { agent, error } => json!({"agent": agent, "error": error}),
            LaunchEvent::ContractRead { launch_id, source, ok } => {
                json!({"launch_id": launch_id, "source": source, "ok": ok})
            }
            LaunchEvent::SpawnActionDone { launch_id, commits } => json!({"launch_id": launch_id, "commits": commits}),
            LaunchEvent::SpawnFailed { launch_id, class, code, retryable, killed, commits } => json!({
                "launch_id": launch_id, "class": class, "code": code, "retryable": retryable,
                "killed": killed, "commits": commits,
            }),
            LaunchEvent::ResumeRefused { launch_id, session, said } => {
                json!({"launch_id": launch_id, "session": session, "said": said})
            }
            LaunchEvent::Salvaged { commits, contract } => json!({"commits": commits, "contract": contract}),
            LaunchEvent::DeployDone { tenant } => json!({"tenant": tenant}),
            LaunchEvent::DeployFailed { code, output_lines, reason } => {
                json!({"code": code, "output_lines": output_lines, "reason": reason})
            }
            LaunchEvent::QaPassed { routes, iteration } => json!({"routes": routes, "iteration": iteration}),
            LaunchEvent::QaFailed { failed, routes, iso_only, iteration } => {
                json!({"failed": failed, "routes": routes, "iso_only": iso_only, "iteration": iteration})
            }
            LaunchEvent::Escalated { reason, iterations, attempts, iso_only } => {
                json!({"reason": reason, "iterations": iterations, "attempts": attempts, "iso_only": iso_only})
            }
            LaunchEvent::WorktreeMerged { commits, sha, base } => json!({"commits": commits, "sha": sha, "base": base}),
            LaunchEvent::WorktreeMergeSkipped { why, branch } => json!({"why": why, "branch": branch}),
            LaunchEvent::OrchestrationFailed { reason } => json!({"reason": reason}),
            LaunchEvent::RecapSent { status } => json!({"status": status}),
            LaunchEvent::RecapFailed { error } => json!({"error": error}),
            LaunchEvent::RecapSkipped { reason, attempt } => json!({"reason": reason, "attempt": attempt}),
            LaunchEvent::LockWatchdogAlert { holder, since } => json!({"holder": holder, "since": since}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_its_name_and_an_object_detail() {
        let events = [
            LaunchEvent::SpawnStarted { prompt: "run", max_turns: 40, authority: "founder_dkim", attempt: 1 },
            LaunchEvent::ResumeRefused { launch_id: 3, session: "s".into(), said: None },
            LaunchEvent::Escalated { reason: "timeouts", iterations: 1, attempts: 3, iso_only: false },
            LaunchEvent::RecapSkipped { reason: "already_alerted", attempt: 2 },
        ];
        let names: Vec<&str> = events.iter().map(LaunchEvent::name).collect();
        assert_eq!(names, ["spawn_started", "resume_refused", "escalated", "recap_skipped"]);
        assert!(events.iter().all(|e| e.detail().is_object()));
        assert_eq!(events[0].detail()["authority"], "founder_dkim");
    }
}
