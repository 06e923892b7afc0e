//! The everyday basics' memory: kitchen timers (stored with their deadline, so they survive
//! a restart, and rung once it has passed) and named lists (« courses », « tâches », any
//! name). Each change is one transaction whose refusals are decided inside it by the pure
//! rules below, as for the rest of the memory.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::StoreResult;
use crate::text::{contains_words, normalise};

/// Lists every user has, even before anything was added.
pub const BUILTIN_LISTS: [&str; 2] = ["courses", "tâches"];

/// Where a timer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EtatMinuteur {
    EnCours,
    EnPause,
    /// Its time has come; it rings until the user acknowledges it (or for a bounded time).
    Sonne,
    /// Acknowledged, or rung for the whole bounded time without an answer.
    Termine,
    Annule,
}

impl EtatMinuteur {
    pub fn as_str(self) -> &'static str {
        match self {
            EtatMinuteur::EnCours => "en_cours",
            EtatMinuteur::EnPause => "en_pause",
            EtatMinuteur::Sonne => "sonne",
            EtatMinuteur::Termine => "termine",
            EtatMinuteur::Annule => "annule",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Some(match raw {
            "en_cours" => EtatMinuteur::EnCours,
            "en_pause" => EtatMinuteur::EnPause,
            "sonne" => EtatMinuteur::Sonne,
            "termine" => EtatMinuteur::Termine,
            "annule" => EtatMinuteur::Annule,
            _ => return None,
        })
    }

    /// Running, paused or ringing: a timer the user can still act on.
    pub fn is_active(self) -> bool {
        matches!(self, EtatMinuteur::EnCours | EtatMinuteur::EnPause | EtatMinuteur::Sonne)
    }
}

/// A kitchen timer (a duration) or an alarm (a time of day): both ring the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Genre {
    Minuteur,
    Reveil,
}

impl Genre {
    pub fn as_str(self) -> &'static str {
        match self {
            Genre::Minuteur => "minuteur",
            Genre::Reveil => "reveil",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "minuteur" => Some(Genre::Minuteur),
            "reveil" => Some(Genre::Reveil),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Minuteur {
    pub id: i64,
    /// A timer or an alarm.
    pub genre: Genre,
    pub nom: Option<String>,
    pub duree_secondes: i64,
    pub etat: EtatMinuteur,
    /// When it ends (running) or ended (rung): UTC.
    pub echeance: Option<DateTime<Utc>>,
    /// What was left when it was paused.
    pub restant_secondes: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub fini_le: Option<DateTime<Utc>>,
    pub acquitte_le: Option<DateTime<Utc>>,
    pub annule_le: Option<DateTime<Utc>>,
}

impl Minuteur {
    /// An alarm's time as it was set (a snooze moves its deadline, not this).
    pub fn alarm_time(&self) -> DateTime<Utc> {
        self.created_at + Duration::seconds(self.duree_secondes)
    }

    /// Its deadline has passed but nothing rang it (no bell was running): ended, not to come.
    pub fn overdue(&self, now: DateTime<Utc>) -> bool {
        self.etat == EtatMinuteur::EnCours && self.echeance.is_some_and(|e| e <= now)
    }

    /// Rung until the bell gave up, never acknowledged: kept in view until it is.
    pub fn unanswered(&self) -> bool {
        self.etat == EtatMinuteur::Termine && self.fini_le.is_some() && self.acquitte_le.is_none()
    }

    /// Seconds left at `now` (0 once it has rung).
    pub fn remaining(&self, now: DateTime<Utc>) -> i64 {
        match self.etat {
            EtatMinuteur::EnCours => self.echeance.map(|e| (e - now).num_seconds().max(0)).unwrap_or(0),
            EtatMinuteur::EnPause => self.restant_secondes.unwrap_or(0).max(0),
            _ => 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ElementListe {
    pub id: i64,
    pub texte: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Liste {
    pub id: i64,
    pub nom: String,
    pub created_at: DateTime<Utc>,
    pub elements: Vec<ElementListe>,
}

/// Which timer a command is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimerTarget {
    /// By its name.
    Named(String),
    /// « le minuteur »: the only one there is.
    Only,
    /// « le minuteur de 5 minutes »: the one set for that long (its name when it has none);
    /// none set for that long, the only one there is (the duration may be misremembered, or
    /// have changed with time added).
    SetFor(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerEdit {
    /// Add (or, negative, remove) seconds.
    Add(i64),
    Pause,
    Resume,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TimerStart {
    Started(Minuteur),
    /// An active timer already has that name.
    NameTaken(Minuteur),
}

#[derive(Debug, Clone, PartialEq)]
pub enum TimerChange {
    Applied {
        before: Minuteur,
        after: Minuteur,
    },
    /// No active timer (with that name).
    NoTimer {
        nom: Option<String>,
    },
    /// « le minuteur » while several run: which one is not guessed.
    Ambiguous(Vec<Minuteur>),
    AlreadyPaused(Minuteur),
    NotPaused(Minuteur),
    /// Removing more time than is left.
    WouldEnd {
        minuteur: Minuteur,
        remaining: i64,
    },
    /// It is ringing: only acknowledging or cancelling it makes sense.
    Ringing(Minuteur),
}

#[derive(Debug, Clone, PartialEq)]
pub enum TimerCancel {
    Cancelled(Vec<Minuteur>),
    NoTimer { nom: Option<String> },
    Ambiguous(Vec<Minuteur>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlarmSet {
    Set(Minuteur),
    /// An active alarm already rings at that time.
    SameTime(Minuteur),
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlarmCancel {
    Cancelled(Vec<Minuteur>),
    /// No active alarm (with that number).
    NoAlarm {
        id: Option<i64>,
    },
    /// « annule le réveil » while several are set: which one is not guessed.
    Ambiguous(Vec<Minuteur>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ListAdd {
    Added { liste: Liste, element: ElementListe, new_list: bool },
    AlreadyThere { liste: Liste, element: ElementListe },
}

#[derive(Debug, Clone, PartialEq)]
pub enum ListRemove {
    Removed { liste: Liste, element: ElementListe },
    NoList { nom: String },
    NotThere { liste: Liste },
    Ambiguous { liste: Liste, elements: Vec<ElementListe> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum ListClear {
    /// The list as it was, with the items removed.
    Cleared {
        liste: Liste,
    },
    NoList {
        nom: String,
    },
}

/// A name compared whatever its case, accents, plural or article (« les Pâtes » is
/// « pâte »).
pub fn name_key(raw: &str) -> String {
    let n = normalise(raw);
    let words: Vec<&str> = n.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let skip = words
        .iter()
        .take_while(|w| matches!(**w, "le" | "la" | "les" | "l" | "du" | "de" | "des" | "d" | "mes" | "ma" | "mon"))
        .count()
        .min(words.len().saturating_sub(1));
    words[skip..].iter().map(|w| w.trim_end_matches(['s', 'x'])).collect::<Vec<_>>().join(" ")
}

/// The rules of timers, pure: which timer a target names, and what a change does to it.
pub mod rules {
    use super::*;

    pub fn pick(active: &[Minuteur], target: &TimerTarget) -> Result<Minuteur, Box<TimerChange>> {
        match target {
            TimerTarget::Named(nom) => {
                let key = name_key(nom);
                active
                    .iter()
                    .find(|m| m.nom.as_deref().is_some_and(|n| name_key(n) == key))
                    .cloned()
                    .ok_or_else(|| Box::new(TimerChange::NoTimer { nom: Some(nom.clone()) }))
            }
            TimerTarget::Only => match active {
                [] => Err(Box::new(TimerChange::NoTimer { nom: None })),
                [one] => Ok(one.clone()),
                many => Err(Box::new(TimerChange::Ambiguous(many.to_vec()))),
            },
            TimerTarget::SetFor(secs) => {
                let set_for: Vec<Minuteur> = active.iter().filter(|m| m.duree_secondes == *secs).cloned().collect();
                match set_for.as_slice() {
                    [] => pick(active, &TimerTarget::Only),
                    [one] => Ok(one.clone()),
                    many => Err(Box::new(TimerChange::Ambiguous(many.to_vec()))),
                }
            }
        }
    }

    /// The timer after `edit`, or why not.
    pub fn edit(m: &Minuteur, edit: TimerEdit, now: DateTime<Utc>) -> Result<Minuteur, Box<TimerChange>> {
        let mut after = m.clone();
        match (m.etat, edit) {
            (EtatMinuteur::Sonne, _) => return Err(Box::new(TimerChange::Ringing(m.clone()))),
            (EtatMinuteur::EnPause, TimerEdit::Pause) => return Err(Box::new(TimerChange::AlreadyPaused(m.clone()))),
            (EtatMinuteur::EnCours, TimerEdit::Resume) => return Err(Box::new(TimerChange::NotPaused(m.clone()))),
            (EtatMinuteur::EnCours, TimerEdit::Pause) => {
                after.etat = EtatMinuteur::EnPause;
                after.restant_secondes = Some(m.remaining(now));
                after.echeance = None;
            }
            (EtatMinuteur::EnPause, TimerEdit::Resume) => {
                after.etat = EtatMinuteur::EnCours;
                after.echeance = Some(now + Duration::seconds(m.remaining(now)));
                after.restant_secondes = None;
            }
            (EtatMinuteur::EnCours | EtatMinuteur::EnPause, TimerEdit::Add(delta)) => {
                let remaining = m.remaining(now);
                if remaining + delta <= 0 {
                    return Err(Box::new(TimerChange::WouldEnd { minuteur: m.clone(), remaining }));
                }
                if m.etat == EtatMinuteur::EnCours {
                    after.echeance = m.echeance.map(|e| e + Duration::seconds(delta));
                } else {
                    after.restant_secondes = Some(remaining + delta);
                }
                after.duree_secondes = (m.duree_secondes + delta).max(1);
            }
            (EtatMinuteur::Termine | EtatMinuteur::Annule, _) => {
                return Err(Box::new(TimerChange::NoTimer { nom: m.nom.clone() }));
            }
        }
        Ok(after)
    }

    /// The item a removal names: the same text, else the only one holding these words.
    pub fn find_item(elements: &[ElementListe], said: &str) -> Result<ElementListe, Vec<ElementListe>> {
        let key = name_key(said);
        if let Some(e) = elements.iter().find(|e| name_key(&e.texte) == key) {
            return Ok(e.clone());
        }
        let matching: Vec<ElementListe> = elements.iter().filter(|e| contains_words(&e.texte, said)).cloned().collect();
        match matching.len() {
            1 => Ok(matching[0].clone()),
            _ => Err(matching),
        }
    }
}

/// Timers and lists in the store. Every method is one transaction.
#[async_trait]
pub trait BasicsStore: Send + Sync {
    async fn start_timer(&self, nom: Option<&str>, duree_secondes: i64, now: DateTime<Utc>) -> StoreResult<TimerStart>;
    /// Running, paused and ringing timers, by deadline.
    async fn active_timers(&self) -> StoreResult<Vec<Minuteur>>;
    /// Every timer, newest first (the web page, the export).
    async fn all_timers(&self) -> StoreResult<Vec<Minuteur>>;
    async fn change_timer(&self, target: &TimerTarget, edit: TimerEdit, now: DateTime<Utc>)
        -> StoreResult<TimerChange>;
    /// Cancels the timer named (or the only one), or all of them with `target` `None`.
    async fn cancel_timers(&self, target: Option<&TimerTarget>, now: DateTime<Utc>) -> StoreResult<TimerCancel>;
    /// Running timers whose deadline has passed start ringing; returns them.
    async fn ring_due_timers(&self, now: DateTime<Utc>) -> StoreResult<Vec<Minuteur>>;
    async fn ringing_timers(&self) -> StoreResult<Vec<Minuteur>>;
    /// The user heard them: the ringing timers are done (`id`: that one, ringing or rung
    /// unanswered). Returns them.
    async fn acknowledge_timers(&self, id: Option<i64>, now: DateTime<Utc>) -> StoreResult<Vec<Minuteur>>;
    /// Ringing timers that rang before `before` without an answer stop ringing.
    async fn expire_ringing(&self, before: DateTime<Utc>) -> StoreResult<Vec<Minuteur>>;
    /// The same for alarms (which ring longer).
    async fn expire_ringing_alarms(&self, before: DateTime<Utc>) -> StoreResult<Vec<Minuteur>>;
    /// « encore cinq minutes »: every ringing timer and alarm rings again in `secs`.
    async fn snooze_ringing(&self, secs: i64, now: DateTime<Utc>) -> StoreResult<Vec<Minuteur>>;

    /// An alarm at `at` (with an optional name).
    async fn set_alarm(&self, nom: Option<&str>, at: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<AlarmSet>;
    /// Alarms set or ringing, the soonest first.
    async fn active_alarms(&self) -> StoreResult<Vec<Minuteur>>;
    /// Cancels alarm `id`, the only one (`None`), or all of them (`all`).
    async fn cancel_alarms(&self, id: Option<i64>, all: bool, now: DateTime<Utc>) -> StoreResult<AlarmCancel>;

    async fn add_list_item(&self, liste: &str, element: &str, now: DateTime<Utc>) -> StoreResult<ListAdd>;
    async fn remove_list_item(&self, liste: &str, element: &str) -> StoreResult<ListRemove>;
    async fn list(&self, liste: &str) -> StoreResult<Option<Liste>>;
    async fn clear_list(&self, liste: &str) -> StoreResult<ListClear>;
    async fn lists(&self) -> StoreResult<Vec<Liste>>;
}

#[cfg(test)]
mod tests {
    use super::rules::*;
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
    }

    fn timer(id: i64, nom: Option<&str>, etat: EtatMinuteur, left: i64) -> Minuteur {
        Minuteur {
            id,
            genre: Genre::Minuteur,
            nom: nom.map(String::from),
            duree_secondes: 600,
            etat,
            echeance: (etat == EtatMinuteur::EnCours).then(|| now() + Duration::seconds(left)),
            restant_secondes: (etat == EtatMinuteur::EnPause).then_some(left),
            created_at: now(),
            fini_le: None,
            acquitte_le: None,
            annule_le: None,
        }
    }

    #[test]
    fn names_whatever_the_article_plural_or_accent() {
        assert_eq!(name_key("les Pâtes"), name_key("pâte"));
        assert_eq!(name_key("la soupe"), "soupe");
        assert_eq!(name_key("pâte à pain"), "pate a pain");
    }

    #[test]
    fn which_timer_and_what_a_change_does() {
        let pates = timer(1, Some("pâtes"), EtatMinuteur::EnCours, 300);
        let oeufs = timer(2, Some("œufs"), EtatMinuteur::EnPause, 120);
        assert_eq!(pick(std::slice::from_ref(&pates), &TimerTarget::Only).unwrap().id, 1);
        assert!(
            matches!(pick(&[pates.clone(), oeufs.clone()], &TimerTarget::Only), Err(b) if matches!(*b, TimerChange::Ambiguous(_)))
        );
        assert_eq!(pick(&[pates.clone(), oeufs.clone()], &TimerTarget::Named("les pâtes".into())).unwrap().id, 1);
        // « le minuteur de 2 minutes »: the one set for that long; none, the only one.
        let two = Minuteur { duree_secondes: 120, ..oeufs.clone() };
        assert_eq!(pick(&[pates.clone(), two.clone()], &TimerTarget::SetFor(120)).unwrap().id, 2);
        assert_eq!(pick(std::slice::from_ref(&pates), &TimerTarget::SetFor(120)).unwrap().id, 1);
        assert!(matches!(
            pick(&[pates.clone(), two], &TimerTarget::SetFor(60)).map_err(|b| *b),
            Err(TimerChange::Ambiguous(_))
        ));
        let paused = edit(&pates, TimerEdit::Pause, now()).unwrap();
        assert_eq!((paused.etat, paused.restant_secondes), (EtatMinuteur::EnPause, Some(300)));
        let resumed = edit(&paused, TimerEdit::Resume, now() + Duration::seconds(50)).unwrap();
        assert_eq!(resumed.remaining(now() + Duration::seconds(50)), 300);
        assert!(matches!(edit(&oeufs, TimerEdit::Pause, now()).map_err(|b| *b), Err(TimerChange::AlreadyPaused(_))));
        assert_eq!(edit(&pates, TimerEdit::Add(120), now()).unwrap().remaining(now()), 420);
        assert!(matches!(
            edit(&pates, TimerEdit::Add(-300), now()).map_err(|b| *b),
            Err(TimerChange::WouldEnd { remaining: 300, .. })
        ));
    }
}
