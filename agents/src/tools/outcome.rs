//! What a tool call produced, as a type: the only material reports are composed from.
//! Nothing here is free text written by a model; every refusal is a bounded variant.

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use super::args::ArgError;
use crate::memory::worktime::WorkTotals;
use crate::memory::{
    Decision, ElementListe, Liste, Minuteur, Note, Preference, Projet, ProjetDetail, Rappel, SessionTravail, Souvenir,
};
use crate::time::IsoDate;

/// The page of the web interface where the user can check what a tool touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Page {
    Notes,
    Rappels,
    Preferences,
    Souvenirs,
    Projets,
    Sessions,
    Journal,
    Minuteurs,
    Listes,
}

impl Page {
    pub fn path(self) -> &'static str {
        match self {
            Page::Notes => "/notes",
            Page::Rappels => "/rappels",
            Page::Preferences => "/preferences",
            Page::Souvenirs => "/souvenirs",
            Page::Projets => "/projets",
            Page::Sessions => "/sessions",
            Page::Journal => "/journal",
            Page::Minuteurs => "/minuteurs",
            Page::Listes => "/listes",
        }
    }

    /// How the page is named to the user ("la page Rappels").
    pub fn label(self) -> &'static str {
        match self {
            Page::Notes => "Notes",
            Page::Rappels => "Rappels",
            Page::Preferences => "Préférences",
            Page::Souvenirs => "Souvenirs",
            Page::Projets => "Projets",
            Page::Sessions => "Sessions",
            Page::Journal => "Journal",
            Page::Minuteurs => "Minuteurs",
            Page::Listes => "Listes",
        }
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "lowercase")]
pub enum Outcome {
    /// The call did what was asked; the receipt is read back from the store.
    Done(Receipt),
    /// Nothing was written; the reason is bounded.
    Refused(Refusal),
    /// An error was caught: the effect is unknown.
    Failed(Failure),
    /// A text composed by code that the model must not rephrase.
    Briefing(Briefing),
}

impl Outcome {
    /// `done` | `refused` | `failed` | `briefing`, as in `arthur ask --json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Done(_) => "done",
            Outcome::Refused(_) => "refused",
            Outcome::Failed(_) => "failed",
            Outcome::Briefing(_) => "briefing",
        }
    }

    /// Refused, Failed and Briefing stop the tool loop after the current batch.
    pub fn is_incident(&self) -> bool {
        !matches!(self, Outcome::Done(_))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    pub page: Page,
    /// English, for the trace and the logs; never shown as the user's answer.
    pub error: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BriefingKind {
    Daily,
    Weekly,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Briefing {
    pub kind: BriefingKind,
    pub text: String,
}

/// Which search `chercher_dans_memoire` ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum SearchMode {
    /// Cosine similarity over embeddings, results under the threshold dropped.
    Vector { threshold: f32, model: String },
    /// Full-text keyword search.
    Keyword { reason: KeywordReason },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeywordReason {
    /// No embedding provider is configured.
    NoEmbeddingProvider,
    /// The embedding provider failed for this query.
    EmbeddingFailed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    pub souvenir: Souvenir,
    /// Cosine similarity for a vector search.
    pub score: Option<f32>,
}

/// What the store holds after a successful call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "receipt", rename_all = "snake_case")]
pub enum Receipt {
    NoteCreated {
        note: Note,
    },
    Notes {
        projet: Option<String>,
        /// The words the model asked for, if any.
        contient: Option<String>,
        notes: Vec<Note>,
        /// One number or the last ones, when the read was limited to them.
        #[serde(skip_serializing_if = "Portee::is_all")]
        portee: Portee,
    },
    /// `bare_date`: the due date had no time, so the default hour was used.
    ReminderCreated {
        rappel: Rappel,
        bare_date: bool,
    },
    Reminders {
        include_done: bool,
        filter: ReminderFilter,
        rappels: Vec<Rappel>,
        now: DateTime<Utc>,
        /// One number or the last ones, when the read was limited to them.
        #[serde(skip_serializing_if = "Portee::is_all")]
        portee: Portee,
    },
    ReminderDone {
        rappel: Rappel,
    },
    WorkTime {
        debut: IsoDate,
        fin: IsoDate,
        /// The range reaches today, so it was counted up to now.
        until_now: bool,
        projet: Option<String>,
        totals: WorkTotals,
        running: Option<SessionTravail>,
    },
    PreferenceStored {
        preference: Preference,
        active: u32,
        cap: u32,
    },
    Preferences {
        preferences: Vec<Preference>,
        active: u32,
        cap: u32,
        /// What the read was limited to (everything by default).
        #[serde(skip_serializing_if = "Portee::is_all")]
        portee: Portee,
    },
    PreferenceDeactivated {
        preference: Preference,
    },
    Search {
        requete: String,
        search: SearchMode,
        hits: Vec<SearchHit>,
        not_indexed: u32,
    },
    SessionStarted {
        session: SessionTravail,
    },
    SessionPaused {
        session: SessionTravail,
    },
    SessionResumed {
        session: SessionTravail,
    },
    SessionStopped {
        session: SessionTravail,
        worked_secs: i64,
    },
    Projects {
        projets: Vec<Projet>,
    },
    Project {
        detail: ProjetDetail,
        worked_secs: i64,
    },
    ProjectCreated {
        projet: Projet,
    },
    ProjectUpdated {
        before: Projet,
        after: Projet,
    },
    DecisionRecorded {
        decision: Decision,
    },
    SouvenirStored {
        souvenir: Souvenir,
    },
    NoteDeleted {
        note: Note,
    },
    ReminderDeleted {
        rappel: Rappel,
    },
    TimerStarted {
        minuteur: Minuteur,
    },
    /// The active timers (or the one named), read at `now`.
    Timers {
        nom: Option<String>,
        minuteurs: Vec<Minuteur>,
        now: DateTime<Utc>,
    },
    TimerChanged {
        before: Minuteur,
        after: Minuteur,
        now: DateTime<Utc>,
    },
    TimersCancelled {
        minuteurs: Vec<Minuteur>,
    },
    ListItemAdded {
        liste: Liste,
        element: ElementListe,
        new_list: bool,
    },
    ListItemRemoved {
        liste: Liste,
        element: ElementListe,
    },
    List {
        liste: Liste,
    },
    /// The list as it was before it was emptied.
    ListCleared {
        liste: Liste,
    },
    /// A recurring reminder, as stored (its rule in `rappel.repetition`).
    RecurringReminderCreated {
        rappel: Rappel,
    },
    /// One occurrence of a recurring reminder done: the reminder before, and moved to its
    /// next occurrence.
    ReminderOccurrenceDone {
        before: Rappel,
        after: Rappel,
    },
    ReminderMoved {
        before: Rappel,
        after: Rappel,
    },
    ReminderSeriesStopped {
        rappel: Rappel,
    },
    AlarmSet {
        reveil: Minuteur,
    },
    /// The alarms set or ringing, read at `now`.
    Alarms {
        reveils: Vec<Minuteur>,
        now: DateTime<Utc>,
    },
    AlarmsCancelled {
        reveils: Vec<Minuteur>,
    },
    /// The souvenirs asked for (by number, words, or the last ones).
    Souvenirs {
        portee: Portee,
        souvenirs: Vec<Souvenir>,
    },
}

/// What a read was limited to: one number, words, or the last ones; `total` is how many
/// items of that kind there are in all.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Portee {
    pub numero: Option<i64>,
    pub contient: Option<String>,
    pub derniers: Option<u32>,
    pub total: usize,
}

impl Portee {
    pub fn is_all(&self) -> bool {
        self.numero.is_none() && self.contient.is_none() && self.derniers.is_none()
    }
}

/// The filters of `lister_rappels`: due between two days (included), words in the text.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReminderFilter {
    pub debut: Option<IsoDate>,
    pub fin: Option<IsoDate>,
    pub contient: Option<String>,
}

impl ReminderFilter {
    pub fn is_empty(&self) -> bool {
        self.debut.is_none() && self.fin.is_none() && self.contient.is_none()
    }
}

/// Why nothing was written. Bounded: every variant is a case the code knows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Refusal {
    InvalidArguments(ArgError),
    /// The model asked for a tool that does not exist (name cut to 64 characters).
    UnknownTool {
        name: String,
    },
    /// The tool exists but is not in this agent's list.
    ToolNotAllowed {
        name: &'static str,
        agent: &'static str,
    },
    ReminderUnknown {
        id: i64,
    },
    ReminderAlreadyDone {
        rappel: Rappel,
    },
    /// A reminder due in the past is almost always a wrong date.
    DueDateInPast {
        echeance: DateTime<Utc>,
    },
    PreferenceUnknown {
        id: i64,
    },
    PreferenceAlreadyInactive {
        preference: Preference,
    },
    PreferenceDuplicate {
        preference: Preference,
    },
    PreferenceCapReached {
        cap: u32,
    },
    /// Work time asked for a day that has not come yet: no session can exist there.
    FutureDate {
        debut: IsoDate,
        today: NaiveDate,
    },
    InvertedRange {
        debut: IsoDate,
        fin: IsoDate,
    },
    SessionAlreadyRunning {
        session: SessionTravail,
    },
    SessionAlreadyPaused {
        session: SessionTravail,
    },
    SessionNotPaused {
        session: SessionTravail,
    },
    /// Pause, resume or stop with no running session.
    NoRunningSession,
    ProjectUnknown {
        nom: String,
    },
    ProjectDuplicate {
        projet: Projet,
    },
    /// modifier_projet with no field to change.
    NothingToChange,
    NoteUnknown {
        id: i64,
    },
    /// An active timer already has this name.
    TimerNameTaken {
        minuteur: Minuteur,
    },
    /// No active timer (with that name).
    NoTimer {
        nom: Option<String>,
    },
    /// « le minuteur » while several are active: which one is not guessed.
    TimersAmbiguous {
        minuteurs: Vec<Minuteur>,
    },
    TimerAlreadyPaused {
        minuteur: Minuteur,
    },
    TimerNotPaused {
        minuteur: Minuteur,
    },
    /// A ringing timer can only be acknowledged or cancelled.
    TimerRinging {
        minuteur: Minuteur,
    },
    /// Removing more time than is left.
    TimerWouldEnd {
        minuteur: Minuteur,
        remaining: i64,
    },
    ListUnknown {
        nom: String,
    },
    ListItemAlreadyThere {
        liste: String,
        element: String,
    },
    ListItemNotThere {
        liste: String,
        element: String,
    },
    /// Several items hold these words: which one is not guessed.
    ListItemsAmbiguous {
        liste: String,
        elements: Vec<String>,
    },
    SouvenirUnknown {
        id: i64,
    },
    /// Stopping the series of a reminder that does not repeat.
    ReminderNotRecurring {
        rappel: Rappel,
    },
    /// Its series was already stopped.
    ReminderSeriesAlreadyStopped {
        rappel: Rappel,
    },
    /// Moving a reminder to the time it already has.
    ReminderSameTime {
        rappel: Rappel,
    },
    /// An alarm already rings at that time.
    AlarmSameTime {
        reveil: Minuteur,
    },
    /// No alarm set (with that number).
    NoAlarm {
        id: Option<i64>,
    },
    /// « annule le réveil » while several are set.
    AlarmsAmbiguous {
        reveils: Vec<Minuteur>,
    },
}
