//! Composing the answer of a turn from what really happened: the report of every tool
//! call (reads and writes), one certainty statement per incident, what the user asked for
//! and did not get, and model text only in a turn with no tool, when it states nothing.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use serde_json::Value;

use super::claims::{explain_for, sentences, ClaimKind, Request};
use super::supervisor::ExpectedAction;
use crate::llm::ToolCall;
use crate::report::{compose_spoken, compose_written, spoken_text};
use crate::tools::{Outcome, ToolName};

/// Who wrote a part of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartSource {
    /// Composed by code from outcomes: certain.
    Code,
    /// Written by the model; never about an action's result.
    Model,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerPart {
    pub source: PartSource,
    pub written: String,
    pub spoken: String,
}

/// Why the tool loop ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// The model answered with text and no tool call.
    Answered(String),
    /// A refusal, failure or briefing stopped the loop after its batch.
    Incident,
    /// The fifth model call still asked for tools.
    CallCap,
    /// No provider answered (after `calls` successful calls).
    ModelFailed,
    /// No provider is configured at all.
    NoModel,
}

/// What code says in place of a withheld claim, true to the case: an action the model
/// claimed, when the user had asked for a write…
pub const NOTHING_RECORDED: &str = "Je n'ai rien enregistré.";
/// …an action claimed when no write was asked…
pub const NOTHING_DONE: &str = "Je n'ai rien fait de tel.";
/// …the user's own data stated without reading it…
pub const NOT_LOOKED: &str = "Je n'ai pas regardé dans ta mémoire.";
/// …both.
pub const NOTHING_DONE_NOT_LOOKED: &str = "Je n'ai rien fait de tel, et je n'ai pas regardé dans ta mémoire.";
pub const NOTHING_RECORDED_NOT_LOOKED: &str = "Je n'ai rien enregistré, et je n'ai pas regardé dans ta mémoire.";
/// Kept for the read path: nothing was read, so nothing is told.
pub const NOTHING_READ: &str = "Je n'ai rien lu dans ta mémoire.";
pub const CALL_CAP: &str = "Je n'ai pas terminé : la limite de cinq appels au modèle est atteinte.";
pub const MODEL_FAILED: &str = "Le modèle de langage ne répond plus : je n'ai pas pu terminer.";
pub const NO_MODEL: &str = "Aucun modèle de langage n'est configuré : je suis hors ligne et je ne comprends pas encore les phrases libres sans lui. Rien n'a été fait.";

/// Said when the user answers "non" to a confirmation question.
pub const CANCELLED: &str = "D'accord, je n'ai rien fait.";

pub(crate) fn code(written: String, spoken: String) -> AnswerPart {
    AnswerPart { source: PartSource::Code, written, spoken }
}

pub(crate) fn fixed(text: &str) -> AnswerPart {
    code(text.to_string(), spoken_text(&numbers_in_words(&ids_in_words(text))))
}

/// A written sentence's times, durations and numbers said in words (« 9 h 00 » is « neuf
/// heures », « 10 min » is « dix minutes », « 1er » is « premier »): questions and fixed
/// sentences are written with digits, as receipts are, and spoken in words.
fn numbers_in_words(text: &str) -> String {
    use std::sync::LazyLock;
    static TIME: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\b(\d{1,2}) h (\d{2})\b").expect("a valid pattern"));
    static UNIT: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\b(\d{1,4}) (min|s)\b").expect("a valid pattern"));
    static NUMBER: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\b(\d{1,6})(er)?\b").expect("a valid pattern"));
    let n = |s: &str| s.parse::<i64>().map(crate::fr::number).unwrap_or_else(|_| s.to_string());
    let text = TIME.replace_all(text, |c: &regex::Captures| {
        let (h, m) = (c[1].parse::<i64>().unwrap_or(0), c[2].parse::<i64>().unwrap_or(0));
        let hours = match h {
            0 => "minuit".to_string(),
            12 => "midi".to_string(),
            1 => "une heure".to_string(),
            h => format!("{} heures", crate::fr::number(h)),
        };
        if m == 0 {
            hours
        } else {
            format!("{hours} {}", crate::fr::number(m))
        }
    });
    let text = UNIT.replace_all(&text, |c: &regex::Captures| {
        let unit = match (&c[2], &c[1]) {
            ("min", "1") => "minute",
            ("min", _) => "minutes",
            (_, "1") => "seconde",
            _ => "secondes",
        };
        format!("{} {unit}", n(&c[1]))
    });
    NUMBER
        .replace_all(
            &text,
            |c: &regex::Captures| {
                if c.get(2).is_some() && &c[1] == "1" {
                    "premier".to_string()
                } else {
                    n(&c[1])
                }
            },
        )
        .into_owned()
}

/// "le rappel n°3" said "le rappel numéro trois".
fn ids_in_words(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("n°") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "n°".len()..];
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        match digits.parse::<i64>() {
            Ok(n) => {
                out.push_str(&format!("numéro {}", crate::fr::number(n)));
                rest = &after[digits.len()..];
            }
            Err(_) => {
                out.push_str("n°");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The written and spoken report of one call.
pub(crate) fn report_part(call: &ToolCall, outcome: &Outcome, now: DateTime<Utc>, tz: Tz) -> AnswerPart {
    code(compose_written(&call.name, outcome, tz), compose_spoken(&call.name, outcome, now, tz))
}

fn is_write(name: &str) -> bool {
    crate::tools::writes(name)
}

/// A write the user's own words asked for, as the offline parser read them: a witness of
/// intent that the model does not control.
#[derive(Debug, Clone, PartialEq)]
pub struct Witness {
    pub tool: ToolName,
    pub args: Value,
    /// The question that offers it ("Tu veux que je crée le rappel … ?").
    pub question: String,
}

/// What composes an answer besides the outcomes: independent signals of what was asked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signals<'a> {
    /// The router's expected kind of action: a model output, never trusted alone.
    pub expected: Option<ExpectedAction>,
    /// The write the user's words asked for, if the grammar is sure of one.
    pub asked_write: Option<&'a Witness>,
    /// What the request was, decided on the words and the router before any model text.
    pub request: Request,
}

/// The answer of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    pub parts: Vec<AnswerPart>,
    /// Model sentences not shown (all of them when a tool ran).
    pub withheld: Vec<String>,
    /// The witnessed write was offered: it awaits "oui".
    pub offered: bool,
}

/// How the witnessed write compares with what ran.
#[derive(Debug, Clone, PartialEq)]
enum Gap {
    /// No call of that tool ran.
    NotDone,
    /// It ran on another target than the one asked for.
    WrongTarget { asked: String, done: String },
}

fn arg_id(args: &Value) -> Option<i64> {
    match args.get("id")? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().trim_start_matches('#').parse().ok(),
        _ => None,
    }
}

fn call_args(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or(Value::Null)
}

/// "le rappel n°3", "la préférence n°2", "le projet Atlas": the target of a write.
fn target(tool: ToolName, args: &Value) -> Option<String> {
    use ToolName as T;
    match tool {
        T::MarquerRappelFait => arg_id(args).map(|id| format!("le rappel n°{id}")),
        T::DesactiverPreference => arg_id(args).map(|id| format!("la préférence n°{id}")),
        T::DemarrerSession => args.get("projet").and_then(Value::as_str).map(|p| format!("le projet {p}")),
        // No target told apart: a gap is « not done » only.
        T::ListerRappels
        | T::LireBriefingHebdo
        | T::SupprimerRappel
        | T::DemarrerMinuteur
        | T::ListerMinuteurs
        | T::ModifierMinuteur
        | T::AnnulerMinuteur
        | T::AjouterAListe
        | T::RetirerDeListe
        | T::LireListe
        | T::ViderListe
        | T::CreerRappelRecurrent
        | T::DeplacerRappel
        | T::ArreterRappelRecurrent
        | T::CreerReveil
        | T::ListerReveils
        | T::AnnulerReveil
        | T::ListerProjets
        | T::LireProjet
        | T::CreerProjet
        | T::ModifierProjet
        | T::ActerDecision
        | T::MemoriserSouvenir
        | T::CreerNote
        | T::ListerNotes
        | T::SupprimerNote
        | T::CreerRappel
        | T::LireTempsTravail
        | T::MemoriserPreference
        | T::ListerPreferences
        | T::ChercherDansMemoire
        | T::ListerSouvenirs
        | T::SuspendreSession
        | T::ReprendreSession
        | T::ArreterSession => None,
    }
}

fn gap(w: &Witness, executed: &[(ToolCall, Outcome)]) -> Option<Gap> {
    let same: Vec<&(ToolCall, Outcome)> = executed.iter().filter(|(c, _)| c.name == w.tool.wire()).collect();
    if same.is_empty() {
        return Some(Gap::NotDone);
    }
    let done: Vec<&ToolCall> = same.iter().filter(|(_, o)| matches!(o, Outcome::Done(_))).map(|(c, _)| c).collect();
    let asked = target(w.tool, &w.args)?;
    let first = done.first()?;
    let hit = done.iter().any(|c| {
        target(w.tool, &call_args(c)).is_some_and(|t| crate::text::normalise(&t) == crate::text::normalise(&asked))
    });
    if hit {
        return None;
    }
    let done = target(w.tool, &call_args(first)).unwrap_or_else(|| "autre chose".to_string());
    Some(Gap::WrongTarget { asked, done })
}

/// The verb of a write, for "c'est le rappel n°4 qui a été marqué comme fait".
fn done_verb(tool: ToolName) -> &'static str {
    use ToolName as T;
    match tool {
        T::MarquerRappelFait => "qui a été marqué comme fait",
        T::DesactiverPreference => "qui a été désactivée",
        T::DemarrerSession => "sur lequel la session a démarré",
        T::ListerRappels
        | T::LireBriefingHebdo
        | T::SupprimerRappel
        | T::DemarrerMinuteur
        | T::ListerMinuteurs
        | T::ModifierMinuteur
        | T::AnnulerMinuteur
        | T::AjouterAListe
        | T::RetirerDeListe
        | T::LireListe
        | T::ViderListe
        | T::CreerRappelRecurrent
        | T::DeplacerRappel
        | T::ArreterRappelRecurrent
        | T::CreerReveil
        | T::ListerReveils
        | T::AnnulerReveil
        | T::ListerProjets
        | T::LireProjet
        | T::CreerProjet
        | T::ModifierProjet
        | T::ActerDecision
        | T::MemoriserSouvenir
        | T::CreerNote
        | T::ListerNotes
        | T::SupprimerNote
        | T::CreerRappel
        | T::LireTempsTravail
        | T::MemoriserPreference
        | T::ListerPreferences
        | T::ChercherDansMemoire
        | T::ListerSouvenirs
        | T::SuspendreSession
        | T::ReprendreSession
        | T::ArreterSession => "qui a été touché",
    }
}

/// The lines that say the witnessed write was not done (or done elsewhere), then offer it.
fn gap_parts(w: &Witness, executed: &[(ToolCall, Outcome)], parts: &mut Vec<AnswerPart>) -> bool {
    let Some(g) = gap(w, executed) else { return false };
    let line = match g {
        Gap::NotDone => {
            format!("Je n'ai rien enregistré de ce que tu as demandé : {}.", w.tool.not_done(arg_id(&w.args)))
        }
        Gap::WrongTarget { asked, done } => format!(
            "Attention : tu as demandé {asked}, mais c'est {done} {} ; {} n'a pas été touché.",
            done_verb(w.tool),
            asked
        ),
    };
    parts.push(fixed(&line));
    parts.push(fixed(&w.question));
    true
}

/// The parts of the answer, composed by code from what really happened. A turn in which
/// a tool ran ends with code-composed text only; model text reaches the user only in a
/// turn with no tool, and only the sentences that state nothing about memory, actions or
/// commitments.
pub fn compose(
    executed: &[(ToolCall, Outcome)],
    end: &End,
    signals: Signals<'_>,
    now: DateTime<Utc>,
    tz: Tz,
) -> Composed {
    let report = |call: &ToolCall, outcome: &Outcome| report_part(call, outcome, now, tz);
    let wrote = executed.iter().any(|(c, o)| is_write(&c.name) && matches!(o, Outcome::Done(_)));
    let mut parts = Vec::new();
    let mut withheld = Vec::new();
    let mut offered = false;
    match end {
        End::Answered(text) if !executed.is_empty() => {
            // The model chose the tools; code says what they did and what they returned.
            parts.extend(executed.iter().map(|(c, o)| report(c, o)));
            withheld = sentences(text);
            if let Some(w) = signals.asked_write {
                offered = gap_parts(w, executed, &mut parts);
            }
        }
        End::Answered(text) => {
            let all = sentences(text);
            if let Some(w) = signals.asked_write {
                // The user asked for a write (the grammar is sure of it) and none ran:
                // whatever the model said, code says nothing was recorded and offers it.
                withheld = all;
                offered = gap_parts(w, executed, &mut parts);
            } else {
                // Only the claims are withheld; the rest of the answer is the model's to say.
                let mut kept = Vec::new();
                let (mut acted, mut told) = (false, false);
                for sentence in all {
                    match explain_for(&sentence, signals.request).map(|v| v.kind) {
                        Some(ClaimKind::StoredFact) => {
                            told = true;
                            withheld.push(sentence);
                        }
                        Some(_) => {
                            acted = true;
                            withheld.push(sentence);
                        }
                        None => kept.push(sentence),
                    }
                }
                let kept = kept.join(" ");
                if !kept.trim().is_empty() {
                    parts.push(AnswerPart { source: PartSource::Model, spoken: spoken_text(&kept), written: kept });
                }
                // One sentence, true to the case, says what was left out.
                let asked_write = signals.expected == Some(ExpectedAction::Ecriture);
                let note = match (acted, told, asked_write) {
                    (false, false, _) => None,
                    (true, false, true) => Some(NOTHING_RECORDED),
                    (true, false, false) => Some(NOTHING_DONE),
                    (false, true, _) => Some(NOT_LOOKED),
                    (true, true, true) => Some(NOTHING_RECORDED_NOT_LOOKED),
                    (true, true, false) => Some(NOTHING_DONE_NOT_LOOKED),
                };
                if let Some(note) = note {
                    parts.push(fixed(note));
                }
            }
        }
        End::Incident | End::CallCap | End::ModelFailed => {
            if *end == End::CallCap {
                parts.push(fixed(CALL_CAP));
            }
            if *end == End::ModelFailed {
                parts.push(fixed(MODEL_FAILED));
            }
            // The model does not get the word back: everything is said by code, in order.
            parts.extend(executed.iter().map(|(c, o)| report(c, o)));
            if let Some(w) = signals.asked_write {
                offered = gap_parts(w, executed, &mut parts);
            }
            if *end != End::Incident && !wrote && !offered {
                parts.push(fixed(NOTHING_RECORDED));
            }
        }
        End::NoModel => parts.push(fixed(NO_MODEL)),
    }
    if parts.is_empty() {
        parts.push(fixed("Je n'ai rien à ajouter."));
    }
    Composed { parts, withheld, offered }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Note, Rappel};
    use crate::tools::{ArgError, ArgProblem, Failure, Page, Receipt, Refusal, ReminderFilter};
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
    }

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments: args.into() }
    }

    fn note_done() -> Outcome {
        Outcome::Done(Receipt::NoteCreated {
            note: Note { id: 3, texte: "pain".into(), projet: None, created_at: now() },
        })
    }

    /// The labelled corpus: the oracle of the property test, independent of the detector.
    fn corpus() -> Vec<(bool, String)> {
        include_str!("../../tests/corpus/claims.tsv")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let cols: Vec<&str> = l.splitn(3, '\t').collect();
                (cols[0] == "lie", cols[2].to_string())
            })
            .collect()
    }

    fn outcome_strategy() -> impl Strategy<Value = (ToolCall, Outcome)> {
        let rappel = Rappel {
            id: 8,
            texte: "appeler Paul".into(),
            echeance: now() + chrono::Duration::days(1),
            fait: false,
            fait_le: None,
            created_at: now(),
            repetition: None,
        };
        prop_oneof![
            Just((call("creer_note", "{}"), note_done())),
            Just((call("marquer_rappel_fait", r#"{"id": 4}"#), Outcome::Refused(Refusal::ReminderUnknown { id: 4 }))),
            Just((
                call("creer_rappel", "{}"),
                Outcome::Refused(Refusal::InvalidArguments(ArgError {
                    field: "echeance",
                    problem: ArgProblem::BadDateTime
                }))
            )),
            Just((call("creer_note", "{}"), Outcome::Failed(Failure { page: Page::Notes, error: "disk".into() }))),
            Just((
                call("lister_notes", "{}"),
                Outcome::Done(Receipt::Notes {
                    projet: None,
                    contient: None,
                    notes: vec![],
                    portee: Default::default()
                })
            )),
            Just((
                call("lister_rappels", "{}"),
                Outcome::Done(Receipt::Reminders {
                    include_done: false,
                    filter: ReminderFilter::default(),
                    rappels: vec![rappel],
                    now: now(),
                    portee: Default::default(),
                })
            )),
        ]
    }

    proptest! {
        /// Whatever the outcomes, the model's words (drawn from the labelled corpus) and
        /// the signals: no sentence labelled a lie reaches the answer, written or spoken;
        /// when a tool ran, no model sentence at all does; exactly one certainty statement
        /// per incident; every successful write has its receipt.
        #[test]
        fn no_labelled_lie_reaches_the_answer(
            outcomes in proptest::collection::vec(outcome_strategy(), 0..5),
            picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..5),
            expected in prop_oneof![
                Just(None),
                Just(Some(ExpectedAction::Ecriture)),
                Just(Some(ExpectedAction::Lecture)),
                Just(Some(ExpectedAction::Conversation))
            ],
        ) {
            let corpus = corpus();
            let chosen: Vec<&(bool, String)> = picks.iter().map(|i| i.get(&corpus)).collect();
            let text: String = chosen.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join(" ");
            let has_incident = outcomes.iter().any(|(_, o)| o.is_incident());
            let end = if has_incident { End::Incident } else { End::Answered(text.clone()) };
            let signals = Signals { expected, asked_write: None, ..Default::default() };
            let composed = compose(&outcomes, &end, signals, now(), chrono_tz::Europe::Paris);
            let written: String = composed.parts.iter().map(|p| p.written.as_str()).collect::<Vec<_>>().join("\n");
            let spoken: String = composed.parts.iter().map(|p| p.spoken.as_str()).collect::<Vec<_>>().join(" ");
            // A code sentence may coincide with a labelled lie ("Je n'ai rien enregistré."
            // is a lie from a model that wrote, a fact from code when nothing ran): the
            // lie must not reach the answer from the model, nor be echoed by code unless
            // it is one of code's own fixed sentences.
            let own = [NOTHING_RECORDED, NOTHING_READ];
            let from_model: String = composed.parts.iter().filter(|p| p.source == PartSource::Model)
                .map(|p| p.written.as_str()).collect::<Vec<_>>().join("\n");
            let model_spoken: String = composed.parts.iter().filter(|p| p.source == PartSource::Model)
                .map(|p| p.spoken.as_str()).collect::<Vec<_>>().join(" ");
            for (lie, sentence) in &chosen {
                if *lie {
                    prop_assert!(!from_model.contains(sentence.as_str()), "lie shown: {sentence}\n{written}");
                    prop_assert!(!model_spoken.contains(spoken_text(sentence).as_str()), "lie spoken: {sentence}\n{spoken}");
                    if !own.contains(&sentence.as_str()) {
                        prop_assert!(!written.contains(sentence.as_str()), "lie shown by code: {sentence}\n{written}");
                    }
                }
            }
            if !outcomes.is_empty() {
                prop_assert!(composed.parts.iter().all(|p| p.source == PartSource::Code), "{written}");
            }
            let refusals = outcomes.iter().filter(|(_, o)| matches!(o, Outcome::Refused(_))).count();
            let failures = outcomes.iter().filter(|(_, o)| matches!(o, Outcome::Failed(_))).count();
            prop_assert_eq!(written.matches("Rien n'a été écrit").count(), refusals, "{}", written);
            prop_assert_eq!(written.matches("l'effet est inconnu").count(), failures, "{}", written);
            let writes = outcomes.iter().filter(|(c, o)| is_write(&c.name) && matches!(o, Outcome::Done(_))).count();
            prop_assert_eq!(written.matches("Note n°3 enregistrée").count(), writes);
            prop_assert!(!spoken.contains('*') && !spoken.contains("n°"), "{}", spoken);
        }
    }

    fn answered(text: &str, signals: Signals<'_>) -> Composed {
        compose(&[], &End::Answered(text.into()), signals, now(), chrono_tz::Europe::Paris)
    }

    #[test]
    fn a_clarifying_question_on_a_write_is_kept() {
        let signals = Signals { expected: Some(ExpectedAction::Ecriture), ..Default::default() };
        let c = answered("À quelle heure veux-tu ce rappel ?", signals);
        assert_eq!(c.parts.len(), 1);
        assert_eq!(
            (c.parts[0].source, c.parts[0].written.as_str()),
            (PartSource::Model, "À quelle heure veux-tu ce rappel ?")
        );
        let c = answered("C'est noté ! Pour quelle heure ? Ta sœur s'en occupe.", signals);
        let written: Vec<&str> = c.parts.iter().map(|p| p.written.as_str()).collect();
        // Only the claims are withheld; code says what was left out after what is kept.
        assert_eq!(written, ["Pour quelle heure ?", NOTHING_RECORDED]);
    }

    #[test]
    fn only_the_claim_is_withheld_and_code_says_so_true_to_the_case() {
        let conv = Signals { expected: Some(ExpectedAction::Conversation), ..Default::default() };
        let c = answered("Bonne idée, des pâtes au pesto ! C'est noté dans ta liste !", conv);
        let written: Vec<&str> = c.parts.iter().map(|p| p.written.as_str()).collect();
        assert_eq!(written, ["Bonne idée, des pâtes au pesto !", NOTHING_DONE]);
        assert_eq!(c.parts[0].source, PartSource::Model);
        let c = answered("Belle journée en perspective ! Tu as rendez-vous chez le dentiste à 15 h.", conv);
        let written: Vec<&str> = c.parts.iter().map(|p| p.written.as_str()).collect();
        assert_eq!(written, ["Belle journée en perspective !", NOT_LOOKED]);
        let write = Signals { expected: Some(ExpectedAction::Ecriture), ..Default::default() };
        let c = answered("C'est fait, je l'ai ajouté.", write);
        let written: Vec<&str> = c.parts.iter().map(|p| p.written.as_str()).collect();
        assert_eq!(written, [NOTHING_RECORDED]);
        // Nothing withheld: nothing added.
        let c = answered("En TGV, il faut compter environ deux heures.", conv);
        assert_eq!(c.parts.len(), 1);
        assert!(c.withheld.is_empty());
    }

    #[test]
    fn a_claim_inside_a_question_is_withheld() {
        let c = answered("C'est ajouté, autre chose ?", Signals::default());
        assert!(c.parts.iter().all(|p| p.source == PartSource::Code), "{:?}", c.parts);
        assert_eq!(c.withheld, ["C'est ajouté, autre chose ?"]);
    }

    #[test]
    fn ordinary_conversation_passes_untouched() {
        let c = answered("Bonjour ! La capitale de l'Australie est Canberra.", Signals::default());
        assert_eq!(c.parts.len(), 1);
        assert_eq!(c.parts[0].source, PartSource::Model);
        assert!(c.withheld.is_empty());
    }

    #[test]
    fn a_witnessed_write_with_no_tool_is_offered_not_narrated() {
        let w = Witness {
            tool: ToolName::CreerRappel,
            args: serde_json::json!({"texte": "appeler la banque", "echeance": "2026-12-01T09:00"}),
            question: "Tu veux que je crée le rappel « appeler la banque » pour demain à neuf heures ?".into(),
        };
        let signals =
            Signals { expected: Some(ExpectedAction::Conversation), asked_write: Some(&w), ..Default::default() };
        let c = answered("Parfait, c'est calé pour mardi, je t'y ferai penser.", signals);
        assert!(c.offered);
        let written: Vec<&str> = c.parts.iter().map(|p| p.written.as_str()).collect();
        assert_eq!(
            written,
            ["Je n'ai rien enregistré de ce que tu as demandé : aucun rappel n'a été créé.", w.question.as_str()]
        );
    }

    #[test]
    fn a_write_on_another_target_is_named_as_such() {
        let w = Witness {
            tool: ToolName::MarquerRappelFait,
            args: serde_json::json!({"id": 3}),
            question: "Tu veux que je marque le rappel numéro trois comme fait ?".into(),
        };
        let rappel = Rappel {
            id: 4,
            texte: "pain".into(),
            echeance: now(),
            fait: true,
            fait_le: Some(now()),
            created_at: now(),
            repetition: None,
        };
        let executed = [(call("marquer_rappel_fait", r#"{"id": 4}"#), Outcome::Done(Receipt::ReminderDone { rappel }))];
        let signals = Signals { asked_write: Some(&w), ..Default::default() };
        let c = compose(
            &executed,
            &End::Answered("Le rappel 3 est fait !".into()),
            signals,
            now(),
            chrono_tz::Europe::Paris,
        );
        let written = c.parts.iter().map(|p| p.written.as_str()).collect::<Vec<_>>().join("\n");
        assert!(written.contains("Rappel n°4 « pain » marqué comme fait."), "{written}");
        assert!(written.contains("tu as demandé le rappel n°3, mais c'est le rappel n°4"), "{written}");
        assert!(!written.contains("Le rappel 3 est fait"), "{written}");
        assert!(c.offered);
    }
}
