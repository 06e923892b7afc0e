//! The memory domain: what Arthur keeps (notes, reminders, preferences, souvenirs,
//! projects, decisions, work sessions, conversations and turn traces), and the one storage
//! trait every backend implements.
//!
//! State transitions that can be refused (a reminder already done, a session already
//! running…) are decided INSIDE the backend's transaction and come back as typed results,
//! so that the check and the write can never be separated by another writer.

pub mod basics;
mod basics_sql;
pub mod briefing;
pub mod export;
mod fts5;
pub mod migrations;
pub mod postgres;
pub mod recurrence;
pub mod rules;
mod sql;
pub mod sqlite;
pub mod worktime;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Serialize;

pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// Database failure: the effect of the operation is unknown to the caller.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration error: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
    #[error("corrupt row in {table}: {detail}")]
    Corrupt { table: &'static str, detail: String },
    #[error("unsupported database url: {0}")]
    UnsupportedUrl(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Note {
    pub id: i64,
    pub texte: String,
    /// Name of the project the note is attached to.
    pub projet: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rappel {
    pub id: i64,
    pub texte: String,
    pub echeance: DateTime<Utc>,
    pub fait: bool,
    pub fait_le: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// A recurring reminder's rule (`None`: a one-off reminder). Its `echeance` is the next
    /// occurrence; `fait` means the series was stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repetition: Option<recurrence::Repetition>,
}

impl Rappel {
    pub fn is_recurring(&self) -> bool {
        self.repetition.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preference {
    pub id: i64,
    pub texte: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
    pub desactivee_le: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Souvenir {
    pub id: i64,
    pub texte: String,
    /// Model that produced the stored embedding; `None` when stored offline.
    pub embedding_model: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A project's status. Stored and exchanged as its snake_case French name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Statut {
    Actif,
    EnPause,
    Termine,
    Abandonne,
}

impl Statut {
    pub const ALL: [Statut; 4] = [Statut::Actif, Statut::EnPause, Statut::Termine, Statut::Abandonne];

    pub fn as_str(self) -> &'static str {
        match self {
            Statut::Actif => "actif",
            Statut::EnPause => "en_pause",
            Statut::Termine => "termine",
            Statut::Abandonne => "abandonne",
        }
    }

    /// Accepts the stored names and their natural spellings ("terminé", "en pause").
    pub fn parse(raw: &str) -> Option<Self> {
        let n = crate::text::normalise(raw).replace([' ', '-'], "_");
        match n.as_str() {
            "actif" | "active" => Some(Statut::Actif),
            "en_pause" | "pause" | "suspendu" => Some(Statut::EnPause),
            "termine" | "terminee" | "fini" => Some(Statut::Termine),
            "abandonne" | "abandonnee" => Some(Statut::Abandonne),
            _ => None,
        }
    }

    /// How the status is said to the user.
    pub fn label(self) -> &'static str {
        match self {
            Statut::Actif => "actif",
            Statut::EnPause => "en pause",
            Statut::Termine => "terminé",
            Statut::Abandonne => "abandonné",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Projet {
    pub id: i64,
    pub nom: String,
    pub description: Option<String>,
    pub phase: Option<String>,
    pub statut: Statut,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseChange {
    pub phase: String,
    pub since: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub id: i64,
    pub projet: String,
    pub texte: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pause {
    pub debut: DateTime<Utc>,
    pub fin: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionTravail {
    pub id: i64,
    pub projet: String,
    pub debut: DateTime<Utc>,
    pub fin: Option<DateTime<Utc>>,
    pub pauses: Vec<Pause>,
}

impl SessionTravail {
    pub fn is_running(&self) -> bool {
        self.fin.is_none()
    }
    pub fn is_paused(&self) -> bool {
        self.fin.is_none() && self.pauses.iter().any(|p| p.fin.is_none())
    }
}

/// A project with everything `lire_projet` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjetDetail {
    pub projet: Projet,
    pub phases: Vec<PhaseChange>,
    pub decisions: Vec<Decision>,
    pub notes: usize,
}

/// The fields `modifier_projet` may change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjetChanges {
    pub description: Option<String>,
    pub phase: Option<String>,
    pub statut: Option<Statut>,
}

impl ProjetChanges {
    pub fn is_empty(&self) -> bool {
        self.description.is_none() && self.phase.is_none() && self.statut.is_none()
    }
}

/// Result of marking a reminder done.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkDone {
    Marked(Rappel),
    NotFound,
    AlreadyDone(Rappel),
    /// A recurring reminder: this occurrence is done, the reminder moved to the next one
    /// (boxed: the refusals stay small).
    Advanced {
        before: Box<Rappel>,
        after: Box<Rappel>,
    },
}

/// Result of moving a reminder to another time.
#[derive(Debug, Clone, PartialEq)]
pub enum MoveRappel {
    Moved { before: Rappel, after: Rappel },
    NotFound,
    AlreadyDone(Rappel),
}

/// Result of stopping a recurring reminder.
#[derive(Debug, Clone, PartialEq)]
pub enum StopSeries {
    Stopped(Rappel),
    NotFound,
    /// A one-off reminder: there is no series to stop.
    NotRecurring(Rappel),
    AlreadyStopped(Rappel),
}

/// Result of adding a preference.
#[derive(Debug, Clone, PartialEq)]
pub enum AddPreference {
    /// Stored; `active` counts the active preferences afterwards.
    Added {
        preference: Preference,
        active: u32,
    },
    CapReached {
        cap: u32,
    },
    Duplicate(Preference),
}

/// Result of deactivating a preference.
#[derive(Debug, Clone, PartialEq)]
pub enum Deactivate {
    Deactivated(Preference),
    NotFound,
    AlreadyInactive(Preference),
}

/// Result of creating a project.
#[derive(Debug, Clone, PartialEq)]
pub enum CreateProjet {
    Created(Projet),
    Duplicate(Projet),
}

/// Result of changing a project.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // returned once per call, never stored in bulk
pub enum UpdateProjet {
    Updated { before: Projet, after: Projet },
    NotFound,
}

/// Result of a chrono command (start, pause, resume, stop).
#[derive(Debug, Clone, PartialEq)]
pub enum ChronoChange {
    /// The command applied; the session as stored afterwards.
    Applied(SessionTravail),
    /// Starting while a session runs (its state is given).
    AlreadyRunning(SessionTravail),
    /// Pausing a session that is already paused.
    AlreadyPaused(SessionTravail),
    /// Resuming a running session that is not paused.
    NotPaused(SessionTravail),
    /// Nothing is running.
    NoSession,
    /// Starting on a project that does not exist.
    UnknownProject,
}

pub use basics::{
    AlarmCancel, AlarmSet, BasicsStore, ElementListe, EtatMinuteur, Genre, ListAdd, ListClear, ListRemove, Liste,
    Minuteur, TimerCancel, TimerChange, TimerEdit, TimerStart, TimerTarget, BUILTIN_LISTS,
};
pub use recurrence::{Frequence, Repetition};

/// One storage backend (`SqliteStore`, `PgStore`). Every method is one transaction.
#[async_trait]
pub trait MemoryStore: BasicsStore + Send + Sync {
    // Notes.
    async fn create_note(&self, texte: &str, projet_id: Option<i64>, now: DateTime<Utc>) -> StoreResult<Note>;
    async fn list_notes(&self, projet_id: Option<i64>) -> StoreResult<Vec<Note>>;
    async fn notes_between(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> StoreResult<Vec<Note>>;

    // Reminders.
    async fn create_rappel(&self, texte: &str, echeance: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<Rappel>;
    /// A recurring reminder whose first occurrence is `echeance`.
    async fn create_recurring_rappel(
        &self,
        texte: &str,
        echeance: DateTime<Utc>,
        repetition: &recurrence::Repetition,
        now: DateTime<Utc>,
    ) -> StoreResult<Rappel>;
    /// Moves a reminder not done to `echeance` (a recurring one: this occurrence only); it
    /// will be announced again when that time comes.
    async fn move_rappel(&self, id: i64, echeance: DateTime<Utc>) -> StoreResult<MoveRappel>;
    /// Stops a recurring reminder's series (`fait` from now on).
    async fn stop_rappel_series(&self, id: i64, now: DateTime<Utc>) -> StoreResult<StopSeries>;
    async fn list_rappels(&self, include_done: bool) -> StoreResult<Vec<Rappel>>;
    async fn get_rappel(&self, id: i64) -> StoreResult<Option<Rappel>>;
    /// Reminders not done, due at `now` or before, and not yet announced.
    async fn due_unannounced_rappels(&self, now: DateTime<Utc>) -> StoreResult<Vec<Rappel>>;
    /// Records that reminder `id` was announced; `false` when it already was (so two
    /// notifiers, or a restart, announce it once).
    async fn mark_rappel_announced(&self, id: i64, at: DateTime<Utc>) -> StoreResult<bool>;
    /// Reminders not done announced at `since` or after, the last announced first (« le »
    /// of « repousse-le » is the one just said).
    async fn announced_since(&self, since: DateTime<Utc>) -> StoreResult<Vec<(Rappel, DateTime<Utc>)>>;
    /// Reminders announced but not yet delivered (heard to the end, or seen on the web),
    /// and not done, oldest first, with when they were announced.
    async fn undelivered_rappels(&self) -> StoreResult<Vec<(Rappel, DateTime<Utc>)>>;
    /// Records that the user heard (`Delivery::Voice`) or saw (`Delivery::Web`) reminder `id`;
    /// `false` when it was not announced or already delivered. A recurring reminder then
    /// moves to its next occurrence (announced again when it comes).
    async fn mark_rappel_delivered(&self, id: i64, at: DateTime<Utc>, by: Delivery) -> StoreResult<bool>;
    /// How many announced reminders were delivered, by voice and on the web, and how many
    /// still wait (not done, not delivered).
    async fn reminder_deliveries(&self) -> StoreResult<ReminderDeliveries>;
    async fn mark_rappel_done(&self, id: i64, now: DateTime<Utc>) -> StoreResult<MarkDone>;

    // Preferences.
    async fn add_preference(&self, texte: &str, cap: u32, now: DateTime<Utc>) -> StoreResult<AddPreference>;
    async fn list_preferences(&self) -> StoreResult<Vec<Preference>>;
    async fn active_preferences(&self, limit: u32) -> StoreResult<Vec<Preference>>;
    async fn deactivate_preference(&self, id: i64, now: DateTime<Utc>) -> StoreResult<Deactivate>;

    // Souvenirs.
    async fn add_souvenir(
        &self,
        texte: &str,
        embedding: Option<(&[f32], &str)>,
        now: DateTime<Utc>,
    ) -> StoreResult<Souvenir>;
    async fn list_souvenirs(&self) -> StoreResult<Vec<Souvenir>>;
    /// Souvenirs with their embedding, for a brute-force cosine search.
    async fn souvenir_embeddings(&self) -> StoreResult<Vec<(Souvenir, Option<Vec<f32>>)>>;
    async fn set_souvenir_embedding(&self, id: i64, embedding: &[f32], model: &str) -> StoreResult<()>;
    /// Full-text search; `terms` are plain words, combined with OR and ranked.
    async fn search_souvenirs_keyword(&self, terms: &[String], limit: u32) -> StoreResult<Vec<Souvenir>>;

    // Projects and decisions.
    async fn create_projet(
        &self,
        nom: &str,
        description: Option<&str>,
        phase: Option<&str>,
        now: DateTime<Utc>,
    ) -> StoreResult<CreateProjet>;
    async fn find_projet(&self, nom: &str) -> StoreResult<Option<Projet>>;
    async fn list_projets(&self) -> StoreResult<Vec<Projet>>;
    async fn projet_detail(&self, id: i64) -> StoreResult<Option<ProjetDetail>>;
    async fn update_projet(&self, id: i64, changes: &ProjetChanges, now: DateTime<Utc>) -> StoreResult<UpdateProjet>;
    async fn add_decision(&self, projet_id: i64, texte: &str, now: DateTime<Utc>) -> StoreResult<Option<Decision>>;
    async fn decisions_between(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> StoreResult<Vec<Decision>>;
    async fn list_decisions(&self) -> StoreResult<Vec<Decision>>;

    // Work sessions (the chrono).
    async fn start_session(&self, projet_id: i64, now: DateTime<Utc>) -> StoreResult<ChronoChange>;
    async fn pause_session(&self, now: DateTime<Utc>) -> StoreResult<ChronoChange>;
    async fn resume_session(&self, now: DateTime<Utc>) -> StoreResult<ChronoChange>;
    async fn stop_session(&self, now: DateTime<Utc>) -> StoreResult<ChronoChange>;
    async fn running_session(&self) -> StoreResult<Option<SessionTravail>>;
    /// Sessions that overlap `[from, to)`, optionally for one project, with their pauses.
    async fn sessions_overlapping(
        &self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        projet_id: Option<i64>,
    ) -> StoreResult<Vec<SessionTravail>>;
    async fn list_sessions(&self) -> StoreResult<Vec<SessionTravail>>;

    // Conversations and traces (filled by the turn, shown by the journal).
    async fn create_conversation(&self, id: &str, now: DateTime<Utc>) -> StoreResult<()>;
    /// Labels the conversation with its domain only if it has none yet; returns the label
    /// the conversation carries afterwards.
    async fn label_conversation(&self, id: &str, domain: &str, source: LabelSource) -> StoreResult<Option<String>>;
    /// Who set the label (`router` or `fallback`), if the conversation has one.
    async fn conversation_label_source(&self, id: &str) -> StoreResult<Option<String>>;
    async fn conversation_domain(&self, id: &str) -> StoreResult<Option<Option<String>>>;
    async fn append_message(
        &self,
        conversation_id: &str,
        role: &str,
        content: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;
    async fn recent_messages(&self, conversation_id: &str, limit: u32) -> StoreResult<Vec<(String, String)>>;
    /// Records a turn as started (status `interrupted` until [`MemoryStore::finish_turn`]).
    async fn begin_turn(&self, conversation_id: &str, user_text: &str, now: DateTime<Utc>) -> StoreResult<i64>;
    async fn finish_turn(
        &self,
        id: i64,
        trace: &serde_json::Value,
        written: &str,
        spoken: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Records how long each stage of a voice turn took (end of speech, transcription,
    /// routing, tools, first audio), next to the turn's trace. Unknown turn: no error,
    /// nothing written.
    async fn set_turn_stages(&self, turn_id: i64, stages: &serde_json::Value) -> StoreResult<()>;
    /// The most recent turns, newest first.
    async fn list_turns(&self, limit: u32) -> StoreResult<Vec<TurnRecord>>;
    /// The traces of a conversation's most recent finished turns, newest first.
    async fn conversation_traces(&self, conversation_id: &str, limit: u32) -> StoreResult<Vec<serde_json::Value>>;
    /// Records the write awaiting confirmation in a conversation (replacing any other).
    async fn set_pending(&self, pending: &PendingAction) -> StoreResult<()>;
    /// Takes (and removes) the write awaiting confirmation in a conversation.
    async fn take_pending(&self, conversation_id: &str) -> StoreResult<Option<PendingAction>>;

    /// Deletes one note; returns it as it was (`None`: no such note).
    async fn delete_note(&self, id: i64) -> StoreResult<Option<Note>>;
    /// Deletes one reminder (and its announcement); returns it as it was.
    async fn delete_rappel(&self, id: i64) -> StoreResult<Option<Rappel>>;

    /// The names of the user's lists (for the grammar's lexicon).
    async fn list_names(&self) -> StoreResult<Vec<String>> {
        Ok(self.lists().await?.into_iter().map(|l| l.nom).collect())
    }
    /// The names of the active timers (for the grammar's lexicon).
    async fn timer_names(&self) -> StoreResult<Vec<String>> {
        Ok(self.active_timers().await?.into_iter().filter_map(|m| m.nom).collect())
    }
}

/// Embeddings are stored as little-endian f32.
pub fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn decode_vector(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Who labelled a conversation with its domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LabelSource {
    /// The router's answer, parsed against its contract.
    Router,
    /// The deterministic fallback (no model, router garbage, offline turn).
    Fallback,
}

impl LabelSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LabelSource::Router => "router",
            LabelSource::Fallback => "fallback",
        }
    }
}

/// A write the offline parser asked the user to confirm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingAction {
    pub conversation_id: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    pub question: String,
    pub created_at: DateTime<Utc>,
}

/// One stored turn, as the journal shows it.
/// Where a due reminder reached the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Delivery {
    /// Spoken to the end by the voice.
    Voice,
    /// Acknowledged on a web page.
    Web,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Voice => "voix",
            Delivery::Web => "web",
        }
    }
}

/// Announced reminders by what became of them (from the store: they survive restarts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ReminderDeliveries {
    pub spoken: i64,
    pub seen_on_web: i64,
    pub waiting: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnRecord {
    pub id: i64,
    pub conversation_id: String,
    pub user_text: String,
    pub trace: serde_json::Value,
    pub written: Option<String>,
    pub spoken: Option<String>,
    /// `complete`, or `interrupted` when the process stopped mid-turn.
    pub status: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The voice turn's stage timings ([`MemoryStore::set_turn_stages`]), if it was one.
    pub stages: Option<serde_json::Value>,
}
