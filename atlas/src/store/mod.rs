//! Atlas' storage: the `AtlasStore` trait (one transaction per method, each step of the
//! pipeline a guarded transition so that replaying it is a no-op), written once for both
//! backends: every query and row decoding in `sql`, the decisions in `rules`, and in
//! `sqlite` (the appliance's file) and `postgres` (several workers, one database) only what
//! really differs — the write transaction's lock, the launch lock, claiming candidates, and
//! finding the launches whose launcher died.

mod audits;
mod clients;
mod launches;
mod messages;
mod migrations;
mod notices;
mod personas;
pub mod postgres;
pub mod rules;
mod sql;
pub mod sqlite;
mod transitions;

pub use postgres::PgAtlasStore;
pub use rules::{backoff, failure_detail, plan_failure, FailurePlan, MAX_BACKOFF_MINUTES};
pub use sqlite::SqliteAtlasStore;

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::mail::EmailAddress;
use super::roster::{Persona, StoredLesson};
use super::{Complexity, EmailState, Intent};

#[derive(Debug, thiserror::Error)]
pub enum AtlasStoreError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("a client named {0:?} already exists")]
    DuplicateClient(String),
    #[error("the address or domain {0:?} already belongs to a client")]
    DuplicateAddress(String),
    #[error("{0:?} is a public webmail domain: it cannot identify a client")]
    PublicDomain(String),
    #[error("unexpected value in column {column}: {value:?}")]
    Corrupt { column: &'static str, value: String },
    /// Arthur's memory (the founder's preferences of a persona) did not answer.
    #[error("memory store: {0}")]
    Memory(String),
    #[error("migrating the Atlas tables: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("the seeded personas (atlas/personas.toml): {0}")]
    Seeds(String),
}

pub type StoreResult<T> = Result<T, AtlasStoreError>;

/// A message as fetched, ready to be stored.
#[derive(Debug, Clone)]
pub struct NewMessage {
    /// `user@host:port/mailbox` — never the password.
    pub account: String,
    pub message_key: String,
    pub message_id: Option<String>,
    pub imap_uid: Option<u32>,
    pub from_email: Option<String>,
    pub subject: String,
    pub raw: Vec<u8>,
    pub dkim_pass: bool,
    pub dkim_detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inserted {
    /// A new raw message and its `received` state row (id of the state row).
    New(i64),
    /// Already stored under the same account and key (id of the existing state row).
    Duplicate(i64),
}

/// The state row, with what the list and the pipeline need from the raw message.
#[derive(Debug, Clone)]
pub struct EmailRow {
    pub id: i64,
    pub message_id: Option<String>,
    pub message_key: String,
    pub status: EmailState,
    pub from_email: Option<String>,
    pub subject: String,
    pub dkim_pass: bool,
    /// The DKIM verdict's detail (`no DKIM-Signature`, or one line per signature).
    pub dkim_detail: Option<String>,
    pub size: i64,
    pub scan_verdict: Option<String>,
    pub attachment_count: Option<i64>,
    pub attempts: i64,
    pub client_id: Option<i64>,
    pub client_source: Option<String>,
    pub intent: Option<Intent>,
    pub complexity: Option<Complexity>,
    pub confidence: Option<f64>,
    pub model: Option<String>,
    pub justification: Option<String>,
    pub chantier_id: Option<i64>,
    /// The materialised row, as (`run`|`question`|`negociation`|`conseil`, id).
    pub materialised: Option<(&'static str, i64)>,
    /// When the founder approved the launch of this message (its author was not verified).
    pub approved_at: Option<DateTime<Utc>>,
    /// A failing step is not tried again before this.
    pub retry_at: Option<DateTime<Utc>>,
    /// The first failure of the current run of failures.
    pub failing_since: Option<DateTime<Utc>>,
    /// Timed-out launches retried so far.
    pub launch_retries: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct AuditRow {
    pub id: i64,
    pub email_id: Option<i64>,
    pub event: String,
    pub detail: Value,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Client {
    pub id: i64,
    pub name: String,
    /// Confirmed monthly recurring revenue; `None` when not confirmed.
    pub mrr: Option<f64>,
    pub status: String,
    pub priority: String,
    pub emails: Vec<String>,
    pub domains: Vec<String>,
    /// Provider and model of this client's draft replies (`mistral` by default).
    pub ai_provider: Option<String>,
    pub ai_model: Option<String>,
    /// Claude Code's `--model` for this client's runs (before the global setting).
    pub claude_model: Option<String>,
    /// This client's DKIM-verified e-mails may start Claude Code without the founder's
    /// approval (off by default).
    pub auto_launch: bool,
}

impl Client {
    /// A paying client: confirmed MRR strictly positive.
    pub fn is_paying(&self) -> bool {
        self.mrr.is_some_and(|m| m > 0.0)
    }
}

#[derive(Debug, Clone, Default)]
pub struct NewClient {
    pub name: String,
    pub emails: Vec<EmailAddress>,
    pub domains: Vec<String>,
    pub mrr: Option<f64>,
    pub status: Option<String>,
    pub priority: Option<String>,
    pub ai_provider: Option<String>,
    pub ai_model: Option<String>,
    pub claude_model: Option<String>,
    pub auto_launch: bool,
}

/// A failed attempt at one step of the pipeline.
#[derive(Debug, Clone)]
pub struct StepFailure {
    /// The state the step starts from (the row must still be in it).
    pub from: EmailState,
    pub event: &'static str,
    pub detail: Value,
    /// Failing for this long (since the first failure of the run) parks the row.
    pub park_after: chrono::Duration,
    /// Where the row parks.
    pub terminal: EmailState,
}

/// What `retry_parked` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requeue {
    /// Put back in the queue: the state it was parked in, and the one it is in now.
    Requeued {
        from: EmailState,
        to: EmailState,
    },
    /// Not parked by errors (blocked by an infected attachment, or anything else): untouched.
    NotParked(EmailState),
    Missing,
}

/// The result of a scan, to record on the state row.
#[derive(Debug, Clone)]
pub struct ScanRecord {
    /// `clean`, `infected` or `error` (the worst over all parts).
    pub verdict: &'static str,
    pub scanned_parts: usize,
    pub attachments: usize,
    pub detail: Value,
}

/// A classification after the guards, with everything it materialises, stored in one
/// transaction.
#[derive(Debug, Clone)]
pub struct ClassificationRecord {
    pub intent: Intent,
    pub complexity: Complexity,
    pub confidence: f64,
    pub model: String,
    pub justification: String,
    pub client_id: Option<i64>,
    pub client_source: &'static str,
    pub is_forward: bool,
    /// An open chantier the message was confidently matched to (run and question only).
    pub chantier_id: Option<i64>,
    /// Guard audits (event, detail) written with the `classified` audit.
    pub audits: Vec<(&'static str, Value)>,
}

/// Counts for the calibration report over a window.
#[derive(Debug, Clone, Default)]
pub struct ReportData {
    /// Per classified e-mail: intent, complexity, confidence, client id.
    pub classified: Vec<(Intent, Complexity, f64, Option<i64>)>,
    /// Audit event → count in the window.
    pub audit_counts: BTreeMap<String, i64>,
    /// Per materialised item: its intent, its complexity (runs), its status, internal (no client).
    pub items: Vec<(Intent, Option<Complexity>, String, bool)>,
}

#[async_trait]
pub trait AtlasStore: Send + Sync {
    /// Stores a raw message and its `received` state row and the `poll_inserted` audit, in
    /// one transaction; a message already stored under the same account and key is left
    /// untouched (`Duplicate`).
    async fn insert_message(&self, msg: &NewMessage, now: DateTime<Utc>) -> StoreResult<Inserted>;
    async fn audit(&self, email_id: Option<i64>, event: &str, detail: Value, now: DateTime<Utc>) -> StoreResult<()>;
    /// Rows in these states with an id above `after_id`, oldest first (a cursor, so one
    /// pass visits each row once even when it stays in its state).
    async fn emails_in(&self, states: &[EmailState], after_id: i64, limit: i64) -> StoreResult<Vec<EmailRow>>;
    async fn email(&self, id: i64) -> StoreResult<Option<EmailRow>>;
    async fn raw(&self, id: i64) -> StoreResult<Option<Vec<u8>>>;
    /// `received` → `scanned` (clean) or `blocked` (not clean); false when the row was no
    /// longer `received` (another worker did it).
    async fn record_scan(&self, id: i64, scan: &ScanRecord, now: DateTime<Utc>) -> StoreResult<bool>;
    /// A failed attempt at the step of `f.from`: `attempts + 1`, the next attempt after the
    /// backoff ([`plan_failure`]), or the terminal state once failing for `f.park_after`; the
    /// audit. Returns the state the row is in afterwards.
    async fn record_failure(&self, id: i64, f: &StepFailure, now: DateTime<Utc>) -> StoreResult<EmailState>;
    /// Like `emails_in`, without the rows whose next attempt is after `now`.
    async fn due_in(
        &self,
        states: &[EmailState],
        after_id: i64,
        limit: i64,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<EmailRow>>;
    /// A message parked by errors back in the queue (`scan_failed` → `received`,
    /// `classify_failed` → `scanned`, attempts and backoff reset), audited; never one
    /// `blocked` by an infected attachment.
    async fn retry_parked(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<Requeue>;
    /// A timed-out launch back in the queue for a retry: `spawned` → `classified`,
    /// `launch_retries + 1`, audited; false when the row was not `spawned`.
    async fn schedule_launch_retry(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<bool>;
    /// `spawned` → `classified`, parked until `retry_at` (Claude Code could not work: the API
    /// unavailable, root refused): `attempts + 1`, audited `retry_scheduled` with `detail`;
    /// false when the row was not `spawned`. A parked row is a candidate again at `retry_at`,
    /// whatever the quiet window.
    async fn park_launch(
        &self,
        id: i64,
        retry_at: DateTime<Utc>,
        detail: Value,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;
    /// `scanned` → `classified` with the guard audits, the `classified` audit and the
    /// materialised row; None when the row was no longer `scanned`.
    async fn record_classification(
        &self,
        id: i64,
        rec: &ClassificationRecord,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Option<(&'static str, i64)>>>;
    /// `classify_failed` → `scanned` (attempts reset) so that the next tick retries it.
    async fn retry_failed(&self, now: DateTime<Utc>) -> StoreResult<u64>;
    async fn add_client(&self, client: &NewClient, now: DateTime<Utc>) -> StoreResult<i64>;
    async fn clients(&self) -> StoreResult<Vec<Client>>;
    async fn client(&self, id: i64) -> StoreResult<Option<Client>>;
    /// The client an address identifies: its exact address first, then its domain (never a
    /// public webmail domain).
    async fn client_for(&self, addr: &EmailAddress) -> StoreResult<Option<Client>>;
    async fn add_chantier(&self, name: &str, client_id: Option<i64>, now: DateTime<Utc>) -> StoreResult<i64>;
    async fn open_chantiers(&self, client_id: Option<i64>) -> StoreResult<Vec<(i64, String)>>;
    async fn audits(&self, email_id: i64) -> StoreResult<Vec<AuditRow>>;
    async fn list(&self, state: Option<EmailState>) -> StoreResult<Vec<EmailRow>>;
    async fn report_data(&self, since: DateTime<Utc>) -> StoreResult<ReportData>;

    // ---- the launcher ----
    /// `classified` rows whose intent is in the launch whitelist and that have no spawn
    /// audit since `quiet_since` (the one-hour idempotence window) — or, parked, whose
    /// `retry_at` is past at `now` —, oldest first.
    async fn launch_candidates(
        &self,
        quiet_since: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: i64,
    ) -> StoreResult<Vec<EmailRow>>;
    /// Whether message `id` is still a launch candidate (same rules), checked once its lock
    /// is held: another worker may have launched it since the candidates were read.
    async fn still_candidate(&self, id: i64, quiet_since: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<bool>;
    /// Takes the lease of a message unless a live one exists (an expired one is taken over).
    async fn try_lease(
        &self,
        email_id: i64,
        holder: &str,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> StoreResult<bool>;
    async fn renew_lease(
        &self,
        email_id: i64,
        holder: &str,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> StoreResult<bool>;
    async fn release_lease(&self, email_id: i64, holder: &str) -> StoreResult<()>;
    /// Leases acquired before `acquired_before` and still held: (email id, holder, acquired at).
    async fn old_leases(&self, acquired_before: DateTime<Utc>) -> StoreResult<Vec<(i64, String, DateTime<Utc>)>>;
    /// `spawned` rows without a live lease (their launcher died): back to `classified`,
    /// their running launches marked `interrupted`, audited. Returns their ids.
    async fn reclaim_interrupted(&self, now: DateTime<Utc>) -> StoreResult<Vec<i64>>;
    /// A guarded state change with its audit; false when the row was not in `from`.
    async fn transition(
        &self,
        id: i64,
        from: EmailState,
        to: EmailState,
        event: &str,
        detail: Value,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;
    /// Corrects intent and complexity after the run (the contract's downgrade), audited.
    async fn correct_intent(
        &self,
        id: i64,
        intent: Intent,
        complexity: Complexity,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;
    async fn start_launch(&self, launch: &NewLaunch, now: DateTime<Utc>) -> StoreResult<i64>;
    /// Appends journal events in one transaction.
    async fn append_events(&self, launch_id: i64, events: &[JournalEvent], now: DateTime<Utc>) -> StoreResult<()>;
    async fn finish_launch(&self, launch_id: i64, end: &LaunchEnd, now: DateTime<Utc>) -> StoreResult<()>;
    async fn launches(&self, email_id: i64) -> StoreResult<Vec<LaunchRow>>;
    async fn launch_events(&self, launch_id: i64) -> StoreResult<Vec<JournalEvent>>;
    /// The founder refuses what an e-mail materialised (`annule`, counted by the report's
    /// success proxy); returns the item, None when nothing was materialised.
    async fn cancel_item(&self, email_id: i64, now: DateTime<Utc>) -> StoreResult<Option<(&'static str, i64)>>;
    /// A draft reply written for the founder (never sent).
    async fn add_draft(
        &self,
        email_id: i64,
        text: &str,
        provider: &str,
        model: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<i64>;
    /// Drafts of a message: (id, text, provider, model, created at), newest last.
    async fn drafts(&self, email_id: i64) -> StoreResult<Vec<(i64, String, String, String, DateTime<Utc>)>>;

    // ---- launch authority ----
    /// Whether a client's DKIM-verified e-mails may start Claude Code on their own; false
    /// when there is no such client.
    async fn set_auto_launch(&self, client_id: i64, allowed: bool, now: DateTime<Utc>) -> StoreResult<bool>;
    /// `awaiting_approval` → `classified` with `approved_at` set and the `launch_approved`
    /// audit; false when the message was not awaiting approval.
    async fn approve_launch(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<bool>;
    /// `awaiting_approval` → `cancelled`, what it materialised marked refused (`annule`),
    /// audited, in one transaction; None when the message was not awaiting approval.
    async fn refuse_launch(
        &self,
        id: i64,
        detail: Value,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Option<(&'static str, i64)>>>;
    /// How many messages are in each state.
    async fn state_counts(&self) -> StoreResult<Vec<(EmailState, i64)>>;

    // ---- e-mails to the founder, once per event ----
    /// Records a notice under its unique key; None when one with that key exists already
    /// (it was sent, or is being sent, by this or another worker).
    async fn claim_notice(&self, notice: &NewNotice, now: DateTime<Utc>) -> StoreResult<Option<i64>>;
    /// Takes a notice for a send attempt: false when it was sent already, or another worker
    /// tried it after `retry_before` (a lease on the attempt).
    async fn try_notice(&self, id: i64, retry_before: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<bool>;
    /// The attempt's result: sent, or the error (retried later).
    async fn finish_notice(&self, id: i64, error: Option<&str>, now: DateTime<Utc>) -> StoreResult<()>;
    /// Unsent notices with fewer than `max_attempts` attempts, oldest first.
    async fn unsent_notices(&self, max_attempts: i64, limit: i64) -> StoreResult<Vec<NoticeRow>>;
    async fn notices(&self, email_id: Option<i64>) -> StoreResult<Vec<NoticeRow>>;

    // ---- the personas a launch puts on (spec §2) ----
    /// The agent `codename`, active or not.
    async fn agent(&self, codename: &str) -> StoreResult<Option<Persona>>;
    /// Every active agent, the orchestrator first, then by codename.
    async fn active_agents(&self) -> StoreResult<Vec<Persona>>;
    /// The lessons agent `codename` may recall: its own and the global ones, oldest first.
    async fn lessons(&self, codename: &str) -> StoreResult<Vec<StoredLesson>>;
    /// Records a lesson (`codename` None: a global one); its id.
    async fn add_lesson(&self, codename: Option<&str>, text: &str, now: DateTime<Utc>) -> StoreResult<i64>;
    /// Stores the vectors `model` computed for these lessons, in one transaction.
    async fn set_lesson_vectors(&self, vectors: &[(i64, &[f32])], model: &str) -> StoreResult<()>;
    /// Inserts these agents, or updates their texts when they differ, by codename, in one
    /// transaction; `active` is never written on an existing agent. The rows written.
    async fn upsert_agents(&self, agents: &[Persona]) -> StoreResult<u64>;
}

/// An e-mail to the founder, to send once.
#[derive(Debug, Clone, PartialEq)]
pub struct NewNotice {
    pub email_id: Option<i64>,
    /// `approval_request`, `parked`, `escalated`, `lock_alert`, …
    pub kind: String,
    /// What makes it unique (e.g. `approval:42`): a second notice with the same key is not sent.
    pub dedupe_key: String,
    pub subject: String,
    pub body: String,
}

/// A stored notice.
#[derive(Debug, Clone, PartialEq)]
pub struct NoticeRow {
    pub id: i64,
    pub notice: NewNotice,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub sent_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// A launch about to start.
#[derive(Debug, Clone)]
pub struct NewLaunch {
    pub email_id: i64,
    pub iteration: i64,
    pub prompt_kind: &'static str,
    pub max_turns: i64,
    pub workspace: String,
    pub branch: Option<String>,
    pub fork_commit: Option<String>,
    /// 1 for the first launch of a message, n + 1 for its n-th retry after a timeout.
    pub attempt: i64,
    /// How the Claude Code session is handled: `not_saved`, `saved`, `resumed`,
    /// `fresh_after_refused_resume`.
    pub session_mode: &'static str,
}

/// One journal event, already redacted.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalEvent {
    pub seq: i64,
    pub kind: String,
    pub subtype: Option<String>,
    pub tool_name: Option<String>,
    pub payload: String,
}

/// How a launch ended.
#[derive(Debug, Clone, Default)]
pub struct LaunchEnd {
    pub status: String,
    pub exit_code: Option<i64>,
    pub killed: Option<String>,
    pub session_id: Option<String>,
    pub cost_usd: Option<f64>,
    pub num_turns: Option<i64>,
    pub duration_ms: Option<i64>,
    pub events: i64,
    pub redactions: i64,
    pub contract: Option<String>,
}

/// A stored launch: how it started, and how it ended (`end.status` is `running` until then).
#[derive(Debug, Clone)]
pub struct LaunchRow {
    pub id: i64,
    pub iteration: i64,
    pub prompt_kind: String,
    pub max_turns: i64,
    pub workspace: String,
    pub branch: Option<String>,
    pub fork_commit: Option<String>,
    pub attempt: i64,
    pub session_mode: Option<String>,
    pub end: LaunchEnd,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}
