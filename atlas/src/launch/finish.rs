//! The end of a launch, as the machine decided it: the proofs kept, every commit the agent
//! cites looked up on its branch, the worktree removed unless a retry continues in it (never
//! unmerged work), the recap composed from the facts and sent to the founder (or skipped when
//! already alerted), then the message's final state written.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::contract::{read_contract, ContractSource};
use super::driver::{PassFacts, RunCtx};
use super::policy::QUIET_WINDOW_MINUTES;
use super::{LaunchResult, Launcher};
use crate::events::LaunchEvent;
use crate::machine::{
    parking_backoff, Contract, End, EscalateWhy, Finish, MergeFact, Progress, RecapDecision, Setback,
};
use crate::recap::{self, CitedCommit, CommitFound, Figure, Recap};
use crate::store::AtlasStoreError;
use crate::worktree::{self, Workspace};
use crate::{audit, smtp, EmailState};

/// Commits an agent's words cite: hex runs of 7 to 40 characters with a digit in them
/// ("deadbeef" alone could be a word), or any hex run right after the word "commit".
pub fn cited_shas(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut out: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let hex = (7..=40).contains(&w.len()) && w.chars().all(|c| c.is_ascii_hexdigit());
        let after_commit = i > 0 && words[i - 1].to_lowercase().starts_with("commit");
        let sha = w.to_lowercase();
        if hex && (w.chars().any(|c| c.is_ascii_digit()) || after_commit) && !out.contains(&sha) {
            out.push(sha);
        }
    }
    out
}

impl Launcher {
    /// Executes the end the machine decided: the proofs kept, the claims checked, the
    /// worktree cleaned up unless a retry continues in it (never unmerged work), the recap
    /// composed from the facts and sent or skipped, the final state written.
    pub(super) async fn finish(
        &self,
        ctx: &RunCtx,
        mut p: Progress,
        finish: Finish,
        passes: &[PassFacts],
    ) -> Result<LaunchResult, AtlasStoreError> {
        let store = self.store.as_ref();
        let id = ctx.row.id;
        let end = finish.end;
        let commits = worktree::commits_since_fork(&ctx.ws, ctx.trunk_start.as_deref()).await.unwrap_or_default();
        if let (MergeFact::NotAttempted { branch }, Workspace::Worktree { branch: b, .. }) = (&mut p.merge, &ctx.ws) {
            if !commits.is_empty() {
                *branch = Some(b.clone());
            }
        }
        // The proofs the run left (screenshots…) are kept out of the worktree before it goes.
        let proofs = keep_proofs(ctx.ws.dir(), &self.cfg.data_dir.join("proofs").join(format!("email-{id}")));
        // Every commit the agent cites is looked up on the branch while its worktree is there.
        let claims = self.check_claims(ctx, &p.contract, passes, &commits).await;
        let (_, source) = read_contract(&ctx.contract_file);
        let parked = matches!(end, End::Parked { .. });
        let contract_written = parked || !matches!(source, ContractSource::NotWritten | ContractSource::Missing);
        if ctx.ws.is_worktree() && !finish.keep_workspace {
            if let Err(e) = worktree::cleanup(&ctx.ws).await {
                tracing::warn!(email = id, "worktree cleanup failed: {e}");
            }
        }
        match end {
            End::Failed(reason) => self.audit(id, LaunchEvent::OrchestrationFailed { reason: reason.as_str() }).await?,
            End::Escalated(why) => {
                let (reason, iterations, attempts, iso_only) = match why {
                    EscalateWhy::QaBudget { iterations, iso_only } => {
                        ("qa_budget", iterations, p.retries_done + 1, iso_only)
                    }
                    EscalateWhy::Timeouts { attempts } => ("timeouts", p.iteration, attempts, false),
                    EscalateWhy::Unavailable { attempts, why } => (why.as_str(), p.iteration, attempts, false),
                };
                self.audit(id, LaunchEvent::Escalated { reason, iterations, attempts, iso_only }).await?
            }
            _ => {}
        }
        let mut summary_md = p.contract.summary_md.clone();
        if summary_md.trim().is_empty() || !contract_written {
            // No summary in the contract: the founder gets the compacted transcript instead,
            // marked as such by the recap (the run's own words, not a verified report).
            if let Some(last) = passes.last() {
                summary_md = self.compacted_transcript(last.launch_id, 4000).await?;
            }
        }
        let recap = Recap {
            email_id: id,
            subject_of_request: ctx.mail.subject.clone(),
            client: ctx.client.as_ref().map(|c| c.name.clone()),
            classified: p.classified,
            lane: p.lane,
            end,
            merge: p.merge.clone(),
            deploy: p.deploy.clone(),
            qa: p.qa.clone(),
            note: String::new(),
            summary_md,
            commits: commits.clone(),
            cost_usd: Figure::sum(passes.iter().map(|x| x.cost_usd)),
            turns: Figure::sum(passes.iter().map(|x| x.turns)),
            duration_s: Figure::sum(passes.iter().map(|x| x.duration_s)),
            proofs,
            claims,
            contract_written,
            denied: p.denied.clone(),
            retry_at: match end {
                End::Parked { retry: (n, _), .. } => Some((self.now() + parking_backoff(n), parking_backoff(n))),
                _ => None,
            },
        };
        let status = recap::status(&recap);
        match finish.recap {
            RecapDecision::Send => self.send_recap(&recap).await?,
            RecapDecision::Skip { attempt } => {
                self.audit(id, LaunchEvent::RecapSkipped { reason: "already_alerted", attempt }).await?
            }
        }
        let detail = json!({"status": status.word(), "commits": commits.len(), "merged": p.merge.on_trunk()});
        let branch = match &ctx.ws {
            Workspace::Worktree { branch, .. } => Some(branch.clone()),
            Workspace::Trunk { .. } => None,
        };
        let now = self.now();
        Ok(match end {
            End::Delivered => {
                store.transition(id, EmailState::Spawned, finish.state, audit::ACTIONED, detail, now).await?;
                LaunchResult::Actioned(status)
            }
            End::Failed(reason) => {
                store.transition(id, EmailState::Spawned, finish.state, audit::FAILED, detail, now).await?;
                LaunchResult::Failed(reason.as_str().to_string())
            }
            End::Escalated(_) => {
                store.transition(id, EmailState::Spawned, finish.state, audit::ESCALATED, detail, now).await?;
                LaunchResult::Escalated(status.word().to_string())
            }
            End::Interrupted => {
                let detail = json!({"reason": "shutdown", "counted": false, "retry_after_minutes": QUIET_WINDOW_MINUTES, "branch": branch});
                store.transition(id, EmailState::Spawned, finish.state, audit::RETRY_SCHEDULED, detail, now).await?;
                LaunchResult::RetryLater("interrupted by Arthur's shutdown".into())
            }
            End::TimedOut { retry: (n, max) } => {
                let detail =
                    json!({"attempt": n, "max": max, "retry_after_minutes": QUIET_WINDOW_MINUTES, "branch": branch});
                store.schedule_launch_retry(id, detail, now).await?;
                LaunchResult::RetryLater(format!("retry {n} of {max}"))
            }
            End::Parked { why, retry: (n, max) } => {
                let at = now + parking_backoff(n);
                let detail = json!({"reason": why.as_str(), "api_status": match why {
                    Setback::ApiUnavailable { status } => status, Setback::RootRefused => None },
                    "parking": n, "max": max, "retry_at": at.to_rfc3339(), "branch": branch});
                store.park_launch(id, at, detail, now).await?;
                LaunchResult::Parked(format!("parking {n} of {max}, retry at {at}"))
            }
        })
    }

    /// The commits the agent cites — in its contract, its summary, its last words — that are
    /// not this run's commits on its branch: each one either nowhere on the branch, or from
    /// before the run. A git error leaves the citation unchecked (logged), never "found".
    pub(super) async fn check_claims(
        &self,
        ctx: &RunCtx,
        contract: &Contract,
        passes: &[PassFacts],
        commits: &[(String, String)],
    ) -> Vec<CitedCommit> {
        let mut cited: Vec<String> = Vec::new();
        for entry in &contract.commits {
            if let Some(first) = entry.split_whitespace().next() {
                let first = first.trim_matches(|c: char| !c.is_ascii_alphanumeric()).to_lowercase();
                if (4..=40).contains(&first.len())
                    && first.chars().all(|c| c.is_ascii_hexdigit())
                    && !cited.contains(&first)
                {
                    cited.push(first);
                }
            }
        }
        let words =
            std::iter::once(contract.summary_md.as_str()).chain(passes.iter().filter_map(|p| p.said.as_deref()));
        for text in words {
            for sha in cited_shas(text) {
                if !cited.contains(&sha) {
                    cited.push(sha);
                }
            }
        }
        // One citation per commit: a short sha and the full one it abbreviates are the same.
        let mut unique: Vec<String> = Vec::new();
        for sha in cited {
            match unique.iter().position(|u| u.starts_with(&sha) || sha.starts_with(u.as_str())) {
                Some(i) if sha.len() > unique[i].len() => unique[i] = sha,
                Some(_) => {}
                None => unique.push(sha),
            }
        }
        let mut out = Vec::new();
        for sha in unique {
            if commits.iter().any(|(own, _)| own.starts_with(&sha)) {
                continue;
            }
            let found = match worktree::find_on_branch(&ctx.ws, &sha).await {
                Ok(Some(_)) => CommitFound::BeforeRun,
                Ok(None) => CommitFound::Nowhere,
                Err(e) => {
                    tracing::warn!(email = ctx.row.id, %sha, "a cited commit could not be looked up: {e}");
                    continue;
                }
            };
            out.push(CitedCommit { cited: sha, found });
        }
        if !out.is_empty() {
            self.store
                .audit(
                    Some(ctx.row.id),
                    audit::CLAIMS_UNBACKED,
                    json!({"commits": out.iter().map(|c| json!({"cited": c.cited, "found": match c.found {
                        CommitFound::Nowhere => "nowhere", CommitFound::BeforeRun => "before_run" }})).collect::<Vec<_>>()}),
                    self.now(),
                )
                .await
                .unwrap_or_else(|e| tracing::warn!("audit failed: {e}"));
        }
        out
    }

    /// The recap to the founder (never the client), audited either way.
    pub(super) async fn send_recap(&self, recap: &Recap) -> Result<(), AtlasStoreError> {
        let id = recap.email_id;
        let (Some(account), Some(founder)) = (&self.cfg.smtp, &self.cfg.founder) else {
            let error = "ATLAS_SMTP_URL or ATLAS_FOUNDER_EMAIL not set".to_string();
            return self.audit(id, LaunchEvent::RecapFailed { error }).await;
        };
        let from = self.cfg.mailbox.clone().unwrap_or_else(|| founder.clone());
        // The proofs are read from disk: off the async threads.
        let composed = {
            let recap = recap.clone();
            tokio::task::spawn_blocking(move || recap::letter(&recap)).await
        };
        let status = recap::status(recap).word();
        let sent = match composed {
            Ok(composed) => smtp::send(account, &from, founder, &composed.letter).await.map(|_| composed),
            Err(e) => Err(smtp::SmtpError::Build(format!("composing task: {e}"))),
        };
        match sent {
            Ok(composed) => {
                tracing::info!(
                    email_id = id,
                    status,
                    server = %account.label(),
                    attached = composed.attached.len(),
                    skipped = composed.skipped.len(),
                    "atlas recap sent to the founder"
                );
                self.audit(id, LaunchEvent::RecapSent { status }).await
            }
            Err(e) => {
                tracing::warn!(email_id = id, server = %account.label(), error = %e, "atlas recap: not sent");
                self.audit(id, LaunchEvent::RecapFailed { error: e.to_string() }).await
            }
        }
    }
}

/// Proof files the run left in the workspace (`atlas-proofs/`), attached to the recap.
fn proofs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir.join("atlas-proofs"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// The proofs copied to `keep` (under the data directory), so that they outlive the worktree
/// that is removed before the recap goes out; a proof that cannot be copied stays listed at
/// its place (the recap then names it as missing).
fn keep_proofs(dir: &Path, keep: &Path) -> Vec<PathBuf> {
    let found = proofs(dir);
    if found.is_empty() || std::fs::create_dir_all(keep).is_err() {
        return found;
    }
    found
        .into_iter()
        .map(|p| {
            let target = keep.join(p.file_name().unwrap_or_default());
            match std::fs::copy(&p, &target) {
                Ok(_) => target,
                Err(e) => {
                    tracing::warn!(proof = %p.display(), "cannot keep a proof: {e}");
                    p
                }
            }
        })
        .collect()
}
