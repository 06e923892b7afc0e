//! Questions about the user's own memory are answered by a read, told by code (issue 38).
//! Whether a request is one is decided on the request — the grammar's read templates, the
//! memory topics of `arthur_french::topic`, the router's `lecture` — before any model text
//! exists. The model may then only choose which read to run (read tools only, tool choice
//! "required"); when it reads nothing, code runs the read itself; when the read finds
//! nothing, code says so. No path lets the model's free text speak of the memory.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use serde_json::{json, Value};

use arthur_french::topic::{MemoryKind, Topic};
use arthur_french::{Direction, Words};

use crate::tools::{AgentKind, Outcome, Receipt};
use crate::understand::{Command, Reading, ToolCommand, Understanding};

/// What made the turn a question about the memory (the trace's `memory.cue`).
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// A read template of the grammar matched (sure or not).
    Grammar(ToolCommand),
    /// A memory topic of `templates/memory.toml`.
    Topic(Topic),
    /// Only the router said `lecture`.
    Router,
}

/// A request about the user's memory, as code read it.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryAsk {
    pub asked: Asked,
    /// The topic, when the request names one (also for a grammar read or the router).
    pub topic: Option<Topic>,
    /// The request's own words, for the reads code chooses.
    text: String,
}

/// What the trace records of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryTrace {
    /// `grammar`, `router`, or the topic's cue (`recall`, `agenda`, `work`, `noun`…).
    pub cue: String,
    pub evidence: String,
    /// `model` (the model chose the reads), `code` (code ran them: offline, the model
    /// down, or its answer read nothing).
    pub reads_by: &'static str,
}

/// Is `tool` one that only reads?
pub fn is_read(tool: &str) -> bool {
    !crate::tools::writes(tool)
}

/// A read command of the grammar, sure or not.
fn grammar_read(u: &Understanding) -> Option<&ToolCommand> {
    let cmd = match &u.reading {
        Reading::Sure(Command::Tool(t)) | Reading::Unsure { command: Command::Tool(t), .. } => t,
        _ => return None,
    };
    (is_read(cmd.name()) && !cmd.calls().is_empty()).then_some(cmd)
}

/// Is this an intent of the grammar that reads (for an incomplete reading)?
fn read_intent(u: &Understanding) -> bool {
    match &u.reading {
        Reading::Incomplete { intent, .. } => is_read(intent) && !intent.starts_with('@'),
        _ => false,
    }
}

/// Whether a write of the grammar was understood (sure, unsure or incomplete): then the
/// request is a command, not a question about the memory.
fn grammar_write(u: &Understanding) -> bool {
    match &u.reading {
        Reading::Sure(Command::Tool(t)) | Reading::Unsure { command: Command::Tool(t), .. } => !is_read(t.name()),
        Reading::Incomplete { intent, .. } => !is_read(intent) || intent.starts_with('@'),
        _ => false,
    }
}

impl MemoryAsk {
    /// The request's memory question, decided on the words alone.
    pub fn of(text: &str, u: &Understanding, topic: Option<Topic>) -> Option<Self> {
        if grammar_write(u)
            || matches!(u.reading, Reading::Sure(Command::Told(_)) | Reading::Unsure { command: Command::Told(_), .. })
            || asks_a_write(text)
        {
            return None;
        }
        let text = text.to_string();
        if let Some(cmd) = grammar_read(u) {
            return Some(Self { asked: Asked::Grammar(cmd.clone()), topic, text });
        }
        if read_intent(u) && topic.is_none() {
            return None;
        }
        topic.clone().map(|t| Self { asked: Asked::Topic(t), topic, text })
    }

    /// The router alone said `lecture` (a request the words did not decide).
    pub fn from_router(text: &str, u: &Understanding, topic: Option<Topic>) -> Option<Self> {
        if grammar_write(u) || matches!(u.reading, Reading::Sure(Command::Told(_))) || asks_a_write(text) {
            return None;
        }
        Some(Self { asked: Asked::Router, topic, text: text.to_string() })
    }

    pub fn trace(&self, reads_by: &'static str) -> MemoryTrace {
        let (cue, evidence) = match &self.asked {
            Asked::Grammar(cmd) => ("grammar".to_string(), cmd.name().to_string()),
            Asked::Topic(t) => (t.cue.as_str().to_string(), t.evidence.clone()),
            Asked::Router => ("router".to_string(), "lecture".to_string()),
        };
        MemoryTrace { cue, evidence, reads_by }
    }

    fn kinds(&self) -> &[MemoryKind] {
        self.topic.as_ref().map(|t| t.kinds.as_slice()).unwrap_or(&[])
    }

    /// The specialist whose read tools fit the request: the Mentor for projects and
    /// decisions, the Intendant for the rest, the router's choice when nothing is named.
    pub fn agent(&self, router: AgentKind) -> AgentKind {
        match self.kinds().first() {
            Some(MemoryKind::Projet | MemoryKind::Decision) => AgentKind::Mentor,
            Some(_) => AgentKind::Intendant,
            None => match &self.asked {
                Asked::Grammar(cmd) => crate::turn::agent_for(cmd.name()),
                _ => router,
            },
        }
    }

    /// The reads code runs when the model read nothing (or none answers): the grammar's
    /// read when it has one, else the reads the topic's kind calls for.
    pub fn code_reads(&self, now: DateTime<Utc>, tz: Tz) -> Vec<(&'static str, Value)> {
        if let Asked::Grammar(cmd) = &self.asked {
            return cmd.calls();
        }
        let today = now.with_timezone(&tz).date_naive();
        let topic = self.topic.as_ref();
        let keywords = topic.map(|t| t.keywords.join(" ")).unwrap_or_default();
        let named =
            |kind: MemoryKind| topic.and_then(|t| t.names.iter().find(|(k, _)| *k == kind).map(|(_, n)| n.clone()));
        let search = |calls: &mut Vec<(&'static str, Value)>| {
            if !keywords.is_empty() {
                calls.push(("lister_notes", json!({ "contient": keywords })));
                calls.push(("chercher_dans_memoire", json!({ "requete": keywords })));
            }
        };
        let mut calls = Vec::new();
        match self.kinds().first() {
            Some(MemoryKind::Rappel) => {
                let mut args = json!({});
                match days_in(&self.text, today, Direction::Future).or_else(|| own_period(&self.text, today)) {
                    Some((a, b)) => {
                        args["debut"] = json!(a.to_string());
                        args["fin"] = json!(b.to_string());
                    }
                    None if !keywords.is_empty() => args["contient"] = json!(keywords),
                    None => {}
                }
                calls.push(("lister_rappels", args));
            }
            Some(MemoryKind::Travail) => {
                let (a, b) = days_in(&self.text, today, Direction::Past).unwrap_or((today, today));
                let mut args = json!({ "debut": a.to_string() });
                if b != a {
                    args["fin"] = json!(b.to_string());
                }
                if let Some(p) = named(MemoryKind::Projet) {
                    args["projet"] = json!(p);
                }
                calls.push(("lire_temps_travail", args));
            }
            Some(MemoryKind::Projet | MemoryKind::Decision) => match named(MemoryKind::Projet) {
                Some(p) => calls.push(("lire_projet", json!({ "nom": p }))),
                None => {
                    calls.push(("lister_projets", json!({})));
                    search(&mut calls);
                }
            },
            Some(MemoryKind::Minuteur) => {
                let mut args = json!({});
                if let Some(n) = named(MemoryKind::Minuteur) {
                    args["nom"] = json!(n);
                }
                calls.push(("lister_minuteurs", args));
            }
            Some(MemoryKind::Liste) => match named(MemoryKind::Liste) {
                Some(l) => calls.push(("lire_liste", json!({ "liste": l }))),
                None => search(&mut calls),
            },
            Some(MemoryKind::Preference) => calls.push(("lister_preferences", json!({}))),
            Some(MemoryKind::Note) if keywords.is_empty() => calls.push(("lister_notes", json!({}))),
            _ => search(&mut calls),
        }
        calls
    }

    /// What code says when the reads found nothing, or nothing could be read.
    pub fn nothing(&self, read: bool) -> String {
        let about = self.topic.as_ref().and_then(|t| t.subject.clone()).or_else(|| {
            let k = self.topic.as_ref().map(|t| t.keywords.join(" ")).unwrap_or_default();
            (!k.is_empty()).then(|| format!("« {k} »"))
        });
        match (read, about) {
            (true, Some(a)) => format!("Je n'ai rien sur {a} dans ta mémoire."),
            (true, None) => "Je n'ai rien trouvé à ce sujet dans ta mémoire.".to_string(),
            (false, Some(a)) => {
                format!("Je n'ai rien lu dans ta mémoire sur {a} : je ne peux pas te répondre sans la lire.")
            }
            (false, None) => "Je n'ai rien lu dans ta mémoire : je ne peux pas te répondre sans la lire.".to_string(),
        }
    }
}

/// Verbs that open a write (« relis mes notes et ajoute la date »): a request that holds
/// one is a command for the model's tools, not only a question.
const WRITE_VERBS: [&str; 22] = [
    "ajoute", "rajoute", "mets", "met", "note", "notes", "supprime", "efface", "retire", "enleve", "lance", "demarre",
    "arrete", "cree", "marque", "coche", "vide", "retiens", "memorise", "change", "modifie", "renomme",
];

fn asks_a_write(text: &str) -> bool {
    let words = Words::new(text);
    let f = words.folded();
    f.iter().enumerate().any(|(k, w)| {
        let opens = k == 0
            || matches!(f[k - 1], "et" | "puis" | "ensuite")
            || words.original[words.words[k - 1].end..words.words[k].start].contains([',', ';']);
        opens && WRITE_VERBS.contains(w) && f.get(k + 1).is_some_and(|n| !matches!(*n, "quoi" | "ou"))
    })
}

/// Did a read find nothing? `None` for an outcome that is not a read's receipt.
pub fn found_nothing(outcome: &Outcome) -> Option<bool> {
    let Outcome::Done(r) = outcome else { return None };
    Some(match r {
        Receipt::Notes { notes, .. } => notes.is_empty(),
        Receipt::Reminders { rappels, .. } => rappels.is_empty(),
        Receipt::Search { hits, .. } => hits.is_empty(),
        Receipt::Preferences { preferences, .. } => preferences.is_empty(),
        Receipt::Projects { projets } => projets.is_empty(),
        Receipt::Timers { minuteurs, .. } => minuteurs.is_empty(),
        Receipt::List { liste } => liste.elements.is_empty(),
        Receipt::WorkTime { totals, running, .. } => totals.total_secs == 0 && running.is_none(),
        Receipt::Project { .. } => false,
        Receipt::Souvenirs { souvenirs, .. } => souvenirs.is_empty(),
        Receipt::Alarms { reveils, .. } => reveils.is_empty(),
        _ => return None,
    })
}

/// « ma journée », « ma matinée », « my day »: today; « ma semaine »: this week.
fn own_period(text: &str, today: NaiveDate) -> Option<(NaiveDate, NaiveDate)> {
    let f = arthur_french::fold::fold(text);
    if ["journee", "matinee", "soiree", "my day", "my morning", "my evening", "aprem", "apres-midi"]
        .iter()
        .any(|w| f.contains(w))
    {
        return Some((today, today));
    }
    if ["ma semaine", "my week"].iter().any(|w| f.contains(w)) {
        return arthur_french::RangeRef::ThisWeek.resolve(today, Direction::Future);
    }
    None
}

/// The first range of days the words name (« demain », « cette semaine », « lundi »).
fn days_in(text: &str, today: NaiveDate, dir: Direction) -> Option<(NaiveDate, NaiveDate)> {
    let words = Words::new(text);
    let f = words.folded();
    for a in 0..f.len() {
        for b in (a + 1..=(a + 5).min(f.len())).rev() {
            let span = &f[a..b];
            if let Some(r) = arthur_french::moment::range(span) {
                if let Some(days) = r.resolve(today, dir) {
                    return Some(days);
                }
            }
            if let Some(d) = arthur_french::moment::day(span) {
                if let Some(day) = d.resolve(today, dir) {
                    return Some((day, day));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_read_in_the_request() {
        let today = NaiveDate::from_ymd_opt(2026, 12, 3).unwrap();
        let tomorrow = NaiveDate::from_ymd_opt(2026, 12, 4).unwrap();
        assert_eq!(
            days_in("j'ai quelque chose de prévu demain ?", today, Direction::Future),
            Some((tomorrow, tomorrow))
        );
        let monday = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
        assert_eq!(days_in("j'ai bossé combien cette semaine", today, Direction::Past), Some((monday, today)));
        assert_eq!(days_in("tu te souviens de ma nièce ?", today, Direction::Past), None);
    }
}
