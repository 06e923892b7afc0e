//! The launcher (spec §3, §4, §9): picks classified e-mails, takes a lease per message,
//! checks the author's authority, runs Claude Code in a pseudo-terminal inside an isolated
//! worktree with the prompt its intent and complexity call for, journals every event
//! (redacted) live, then performs the steps `machine::next` decides — deploy, QA per route,
//! resumed iterations, merge-back — and executes the end it decides, telling the founder by
//! e-mail what really happened, fact by fact. A timeout is retried on the same branch at most
//! `ATLAS_MAX_RETRIES` times; an API that Claude Code found unavailable (or its refusal to run
//! as root) parks the message with a backoff, at most `ATLAS_API_RETRIES` times, then a human
//! is asked. A retry resumes the session its last launch saved. Every commit the agent cites
//! is looked up on its branch before the recap states it.
//!
//! One file per job: `policy` (which message may launch, when, under whose authority),
//! `driver` (one leased message: its workspace, then the machine's decisions executed),
//! `steps` (each step performed: a pass of Claude Code, deploy, QA, merge), `contract` (what
//! the agent wrote), `finish` (the end: cleanup, claims checked, recap, final state), `prompt`
//! (what Claude Code is told) and `journal` (its events stored as they come).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arthur_agents::memory::MemoryStore;
use arthur_agents::time::Clock;
use tokio_util::sync::CancellationToken;

use crate::child_env::ChildEnv;
use crate::events::LaunchEvent;
use crate::notify::Notifier;
use crate::recap::RunStatus;
use crate::smtp::SmtpAccount;
use crate::store::{AtlasStore, AtlasStoreError};

mod contract;
mod driver;
mod finish;
mod journal;
mod policy;
mod prompt;
mod steps;

pub use crate::machine::{
    code_decision, downgrade, is_no_code, parking_backoff, CodeDecision, Contract, MAX_ISO_ITERATIONS,
    MAX_QA_ITERATIONS, QA_EXIT_ISO_ONLY,
};
pub use crate::watchdog::LOCK_ALERT_MINUTES;
pub use contract::{parse_contract, read_contract, ContractSource, CONTRACT_PLACEHOLDER};
pub use finish::cited_shas;
pub use journal::{journal_event, journal_writer};
pub use policy::{
    approval_notice, author_authority, hold_for_approval, root_blocks_bypass, CycleReport, LEASE_TTL_MINUTES,
    MAX_PER_CYCLE, QUIET_WINDOW_MINUTES, STALE_WORKTREE_AGE,
};
pub use prompt::{
    iteration_block, retry_block, split_qa_output, task_prompt, PromptExtras, PromptKind, QaLines, RetryContext,
    ITERATION_PROMPT, MAX_TURNS_RUN_LEGER, PLAN_ADDENDUM, RICH_PROMPT, RUN_PROMPT,
};
pub use steps::{claude_env, resolve_route, DEPLOY_TIMEOUT, KILLED_BY_SHUTDOWN, QA_TIMEOUT, QUIET_CLAUDE_ENV};

/// The launcher's configuration (from the settings).
#[derive(Debug, Clone)]
pub struct LauncherConfig {
    pub claude_bin: PathBuf,
    pub repo: Option<PathBuf>,
    pub base_branch: Option<String>,
    pub data_dir: PathBuf,
    pub idle_timeout: Duration,
    pub hard_timeout: Duration,
    pub budget: Duration,
    pub grace_after_result: Duration,
    pub deploy_cmd: Option<String>,
    pub qa_cmd: Option<String>,
    pub disabled: bool,
    pub permission_mode: String,
    pub model: Option<String>,
    pub allowed_tools: Option<String>,
    pub strict_mcp: bool,
    pub smtp: Option<SmtpAccount>,
    pub founder: Option<String>,
    pub mailbox: Option<String>,
    /// The names besides the base allowlist that the children get (`ATLAS_CHILD_ENV`).
    pub child_env: ChildEnv,
    /// `ATLAS_TRUST_UNSIGNED_FOUNDER=1`.
    pub trust_unsigned_founder: bool,
    /// Retries of a timed-out launch before it is escalated (`ATLAS_MAX_RETRIES`, 2).
    pub max_retries: u32,
    /// `ATLAS_WORKTREE=0` (false): the spec's emergency switch, runs work in the trunk.
    pub use_worktree: bool,
    /// `ATLAS_SANDBOXED=1`: the machine is a sandbox (a CI container, a throw-away VM), so
    /// Claude Code may bypass permissions as root (`IS_SANDBOX=1` is given to it).
    pub sandboxed: bool,
    /// Parkings after an unavailable API before a human is asked (`ATLAS_API_RETRIES`, 5).
    pub max_api_retries: u32,
}

pub struct Launcher {
    pub store: Arc<dyn AtlasStore>,
    pub cfg: LauncherConfig,
    pub clock: Arc<dyn Clock>,
    /// Who holds the leases this launcher takes (host + pid).
    pub holder: String,
    /// Where the founder's preferences are read for the persona a run puts on (the persona
    /// itself comes from this launcher's store). None: no persona.
    pub personas: Option<Arc<dyn MemoryStore>>,
    /// Arthur is stopping: a run in flight is killed and takes the salvage path (commits and
    /// partial contract kept, the founder told, the message relaunched later); no new run starts.
    pub shutdown: Option<CancellationToken>,
}

/// Who this process is, in lease rows and as the launch lock's application name.
pub fn holder() -> String {
    let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
    format!("{}:{}", if host.is_empty() { "localhost" } else { host.as_str() }, std::process::id())
}

/// How one message's launch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchResult {
    Actioned(RunStatus),
    Failed(String),
    /// Timed out (retryable): back to `classified`, relaunched after the quiet window.
    RetryLater(String),
    /// A human must take over (QA budget spent, or every attempt timed out).
    Escalated(String),
    /// Claude Code could not work (the API, root): back in the queue after a backoff.
    Parked(String),
}

impl Launcher {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    async fn audit(&self, email_id: i64, event: LaunchEvent) -> Result<(), AtlasStoreError> {
        self.store.audit(Some(email_id), event.name(), event.detail(), self.now()).await
    }

    /// Who tells the founder about held, parked and escalated messages.
    pub fn notifier(&self) -> Notifier {
        Notifier {
            store: self.store.clone(),
            clock: self.clock.clone(),
            smtp: self.cfg.smtp.clone(),
            founder: self.cfg.founder.clone(),
            mailbox: self.cfg.mailbox.clone(),
        }
    }
}
