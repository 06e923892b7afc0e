//! Atlas, the background e-mail pipeline: a dedicated mailbox is polled, each message is
//! stored once, scanned, classified by a guarded model call and materialised; the launcher
//! starts Claude Code only for a verified author (or after the founder's approval), in an
//! environment that holds none of Arthur's secrets, and tells the founder what happened.
//!
//! A crate of its own so that Arthur's other parts build and test without it, and it without
//! them: it reaches Arthur only through `arthur-agents` (the language-model facade, and the
//! founder's preferences through `MemoryStore`). It owns its tables and their migrations
//! (`migrations/atlas`), its settings ([`settings::AtlasSettings`]) and its workers, shaped
//! `run(deps, shutdown)` with a `CancellationToken`; the binary wires them from its
//! configuration and reads their status ([`worker::PollStatus`]).
//!
//! "spec §N" in this crate's comments is section N of `docs/specs/atlas-harness.md`, the
//! founding specification of the harness, kept in the repository.

pub mod authority;
pub mod child_env;
pub mod classify;
pub mod cli;
pub mod client;
pub mod compact;
pub mod decisions;
pub mod dkim;
pub mod draft;
pub mod events;
pub mod imap;
pub mod launch;
pub mod machine;
pub mod mail;
pub mod notify;
pub mod ocr;
pub mod persona;
pub mod pipeline;
pub mod pty;
pub mod recap;
pub mod roster;
/// One redaction for the whole house, kept under its old path here.
pub use arthur_agents::redact;
pub mod report;
pub mod scan;
pub mod schedule;
pub mod settings;
pub mod smtp;
pub mod store;
pub mod watchdog;
pub mod worker;
pub mod worktree;

use std::fmt;
use std::str::FromStr;

/// What an e-mail asks for (spec §5.1). `chantier` is not an intent: large work is
/// `Run` with `Complexity::Plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Intent {
    Run,
    Question,
    Noise,
    Negociation,
    Conseil,
}

impl Intent {
    pub const ALL: [Intent; 5] = [Intent::Run, Intent::Question, Intent::Noise, Intent::Negociation, Intent::Conseil];
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Run => "run",
            Intent::Question => "question",
            Intent::Noise => "noise",
            Intent::Negociation => "negociation",
            Intent::Conseil => "conseil",
        }
    }
}

impl FromStr for Intent {
    type Err = String;
    /// Strict: exactly one of the five names (surrounding spaces and case tolerated).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        Intent::ALL.into_iter().find(|i| i.as_str() == t).ok_or_else(|| format!("unknown intent {s:?}"))
    }
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much work a run is: one pass (`Leger`) or a plan first (`Plan`). Only meaningful for
/// `Intent::Run`; forced to `Leger` for every other intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Complexity {
    Leger,
    Plan,
}

impl Complexity {
    pub fn as_str(self) -> &'static str {
        match self {
            Complexity::Leger => "leger",
            Complexity::Plan => "plan",
        }
    }
}

impl FromStr for Complexity {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "leger" => Ok(Complexity::Leger),
            "plan" => Ok(Complexity::Plan),
            _ => Err(format!("unknown complexity {s:?}")),
        }
    }
}

/// Where an e-mail is in the pipeline (the `status` of its state row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EmailState {
    Received,
    Scanned,
    /// An attachment was not clean: never classified, never read.
    Blocked,
    Classified,
    /// Classification kept failing for a day; `arthur atlas retry ID` (or `classify
    /// --retry-failed`) puts it back.
    ClassifyFailed,
    Spawned,
    Actioned,
    Failed,
    /// Classified for a launch, but its author is not verified: waits for the founder's
    /// `arthur atlas approve ID` (or `cancel`).
    AwaitingApproval,
    /// The founder refused the launch.
    Cancelled,
    /// The scanner kept failing for a day: parked, `arthur atlas retry ID` puts it back
    /// (never for an infected attachment: that is `Blocked`).
    ScanFailed,
    /// A human must take over: QA failed past its iteration budget, or the run timed out
    /// more than `ATLAS_MAX_RETRIES` times (its commits kept on one branch).
    Escalated,
}

impl EmailState {
    pub const ALL: [EmailState; 12] = [
        EmailState::Received,
        EmailState::Scanned,
        EmailState::Blocked,
        EmailState::Classified,
        EmailState::ClassifyFailed,
        EmailState::Spawned,
        EmailState::Actioned,
        EmailState::Failed,
        EmailState::AwaitingApproval,
        EmailState::Cancelled,
        EmailState::ScanFailed,
        EmailState::Escalated,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            EmailState::Received => "received",
            EmailState::Scanned => "scanned",
            EmailState::Blocked => "blocked",
            EmailState::Classified => "classified",
            EmailState::ClassifyFailed => "classify_failed",
            EmailState::Spawned => "spawned",
            EmailState::Actioned => "actioned",
            EmailState::Failed => "failed",
            EmailState::AwaitingApproval => "awaiting_approval",
            EmailState::Cancelled => "cancelled",
            EmailState::ScanFailed => "scan_failed",
            EmailState::Escalated => "escalated",
        }
    }
}

impl FromStr for EmailState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EmailState::ALL.into_iter().find(|e| e.as_str() == s).ok_or_else(|| {
            format!("unknown state {s:?} (expected one of {})", EmailState::ALL.map(|e| e.as_str()).join(", "))
        })
    }
}

/// The audit events of the intake and classification (spec §1, §5).
pub mod audit {
    pub const POLL_INSERTED: &str = "poll_inserted";
    pub const POLL_DUPLICATE: &str = "poll_duplicate";
    pub const POLL_FAILED: &str = "poll_failed";
    pub const SCANNED: &str = "scanned";
    pub const SCAN_FAILED: &str = "scan_failed";
    pub const OCR_EXTRACTED: &str = "ocr_extracted";
    pub const OCR_FAILED: &str = "ocr_failed";
    pub const CLIENT_UNRESOLVED_FORWARD: &str = "client_unresolved_forward";
    pub const CLASSIFIED: &str = "classified";
    pub const CLASSIFICATION_UNCERTAIN: &str = "classification_uncertain";
    pub const CLASSIFY_FAILED: &str = "classify_failed";
    pub const CLASSIFY_BLOCKED_UNSAFE_ATTACHMENTS: &str = "classify_blocked_unsafe_attachments";
    pub const NOISE_FLOOR: &str = "noise_floor_low_confidence";
    pub const NOISE_OVERRIDE_FOUNDER_ATTACHMENT: &str = "noise_override_founder_attachment";
    pub const NOISE_OVERRIDE_KNOWN_CLIENT: &str = "noise_override_known_client";
    pub const NEGOCIATION_OVERRIDE_EXISTING_CLIENT: &str = "negociation_override_existing_client";
    pub const SHORT_CIRCUIT_SELF_FORWARD: &str = "short_circuit_self_forward";
    pub const SHORT_CIRCUIT_VALIDATION_COPY: &str = "short_circuit_validation_copy";
    pub const MATERIALISED: &str = "materialised";
    pub const CHANTIER_LINKED: &str = "chantier_linked";
    // The launcher (spec §3, §4, §9).
    pub const LAUNCH_DISABLED: &str = "launch_disabled";
    pub const SPAWN_STARTED: &str = "spawn_started";
    pub const SPAWN_ACTION_DONE: &str = "spawn_action_done";
    pub const SPAWN_FAILED: &str = "spawn_failed";
    pub const SPAWN_SKIPPED_LOCK_HELD: &str = "spawn_skipped_lock_held";
    pub const LOCK_WATCHDOG_ALERT: &str = "lock_watchdog_alert";
    pub const LAUNCH_INTERRUPTED: &str = "launch_interrupted";
    pub const WORKTREE_FALLBACK: &str = "worktree_fallback";
    pub const WORKTREE_MERGED: &str = "worktree_merged";
    pub const WORKTREE_MERGE_SKIPPED: &str = "worktree_merge_skipped";
    pub const CONTRACT_READ: &str = "contract_read";
    pub const SALVAGED: &str = "salvaged";
    pub const INTENT_DOWNGRADED: &str = "intent_downgraded";
    pub const ORCHESTRATION_FAILED: &str = "orchestration_failed";
    pub const DEPLOY_DONE: &str = "deploy_done";
    pub const DEPLOY_FAILED: &str = "deploy_failed";
    pub const QA_PASSED: &str = "qa_passed";
    pub const QA_FAILED: &str = "qa_failed";
    pub const ESCALATED: &str = "escalated";
    pub const RECAP_SENT: &str = "recap_sent";
    pub const RECAP_FAILED: &str = "recap_failed";
    pub const ACTIONED: &str = "actioned";
    pub const PERSONA_LOADED: &str = "persona_loaded";
    pub const DRAFT_WRITTEN: &str = "draft_written";
    pub const CANCELLED_BY_FOUNDER: &str = "cancelled_by_founder";
    pub const PERSONA_FAILED: &str = "persona_failed";
    pub const FAILED: &str = "failed";
    pub const RETRY_SCHEDULED: &str = "retry_scheduled";
    /// Commits the agent cites that its branch does not back.
    pub const CLAIMS_UNBACKED: &str = "claims_unbacked";
    // Launch authority (issue 17).
    pub const LAUNCH_HELD_UNVERIFIED_SENDER: &str = "launch_held_unverified_sender";
    pub const LAUNCH_APPROVED: &str = "launch_approved";
    pub const LAUNCH_REFUSED: &str = "launch_refused";
    pub const CLIENT_AUTO_LAUNCH: &str = "client_auto_launch";
    // Outages and retries (issue 18).
    pub const PARKED: &str = "parked";
    pub const WORKTREE_REOPENED: &str = "worktree_reopened";
    pub const RESUME_REFUSED: &str = "resume_refused";
    pub const RECAP_SKIPPED: &str = "recap_skipped";
    pub const RETRY_REQUESTED: &str = "retry_requested";
    pub const NOTICE_SENT: &str = "notice_sent";
    pub const NOTICE_FAILED: &str = "notice_failed";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_are_strict() {
        assert_eq!("run".parse::<Intent>().unwrap(), Intent::Run);
        assert_eq!(" Conseil ".parse::<Intent>().unwrap(), Intent::Conseil);
        assert!("chantier".parse::<Intent>().is_err());
        assert!("noise please".parse::<Intent>().is_err());
        assert!("medium".parse::<Complexity>().is_err());
        for s in EmailState::ALL {
            assert_eq!(s.as_str().parse::<EmailState>().unwrap(), s);
        }
    }
}
