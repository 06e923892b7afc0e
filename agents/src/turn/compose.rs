//! Composing the answer of a turn from what really happened: receipts of every write,
//! one certainty statement per incident, and model text only when it narrates no action.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use super::claims::strip_claims;
use super::supervisor::ExpectedAction;
use crate::llm::ToolCall;
use crate::report::{compose_spoken, compose_written, spoken_text};
use crate::tools::Outcome;

/// Tools that write to the store: their receipts are always part of the answer.
pub use crate::tools::WRITE_TOOLS;

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

/// The sentence said when the router expected a write and no tool ran.
pub const NOTHING_RECORDED_NO_TOOL: &str =
    "Je n'ai rien enregistré : aucun outil n'a été utilisé pour cette demande. Redis-la si tu veux que je l'enregistre.";
pub const NOTHING_RECORDED: &str = "Je n'ai rien enregistré.";
pub const CALL_CAP: &str = "Je n'ai pas terminé : la limite de cinq appels au modèle est atteinte.";
pub const MODEL_FAILED: &str = "Le modèle de langage ne répond plus : je n'ai pas pu terminer.";
pub const NO_MODEL: &str = "Aucun modèle de langage n'est configuré : je suis hors ligne et je ne comprends pas encore les phrases libres sans lui. Rien n'a été fait.";

/// Said when the user answers "non" to a confirmation question.
pub const CANCELLED: &str = "D'accord, je n'ai rien fait.";
/// Opens every offline answer.
pub const OFFLINE_NO_MODEL: &str = "Je suis hors ligne : aucun modèle de langage n'est configuré.";
pub const OFFLINE_UNREACHABLE: &str = "Je suis hors ligne : aucun modèle de langage ne répond.";
pub const OFFLINE_UNSUPPORTED: &str = "Je ne peux pas faire ça hors ligne. Rien n'a été fait.";

pub(crate) fn code(written: String, spoken: String) -> AnswerPart {
    AnswerPart { source: PartSource::Code, written, spoken }
}

pub(crate) fn code_part(written: String, spoken: String) -> AnswerPart {
    code(written, spoken)
}

pub(crate) fn fixed(text: &str) -> AnswerPart {
    code(text.to_string(), text.to_string())
}

/// The written and spoken report of one call.
pub(crate) fn report_part(call: &ToolCall, outcome: &Outcome, now: DateTime<Utc>, tz: Tz) -> AnswerPart {
    code(compose_written(&call.name, outcome, tz), compose_spoken(&call.name, outcome, now, tz))
}

fn is_write(name: &str) -> bool {
    WRITE_TOOLS.contains(&name)
}

/// The parts of the answer, and the model sentences withheld.
pub fn compose(
    executed: &[(ToolCall, Outcome)],
    end: &End,
    expected: Option<ExpectedAction>,
    now: DateTime<Utc>,
    tz: Tz,
) -> (Vec<AnswerPart>, Vec<String>) {
    let report = |call: &ToolCall, outcome: &Outcome| report_part(call, outcome, now, tz);
    let wrote = executed.iter().any(|(c, o)| is_write(&c.name) && matches!(o, Outcome::Done(_)));
    let mut parts = Vec::new();
    let mut withheld = Vec::new();
    match end {
        End::Answered(text) => {
            // Every write of the turn is told by its receipt, never by the model.
            parts.extend(
                executed
                    .iter()
                    .filter(|(c, o)| is_write(&c.name) && matches!(o, Outcome::Done(_)))
                    .map(|(c, o)| report(c, o)),
            );
            let (kept, removed) = strip_claims(text);
            withheld = removed;
            if !wrote && executed.is_empty() && expected == Some(ExpectedAction::Ecriture) {
                // A write was expected and no tool ran: the model's statements (which may
                // invent a reason) are not shown; a clarifying question is.
                let (questions, statements): (Vec<String>, Vec<String>) =
                    super::claims::sentences(&kept).into_iter().partition(|s| s.trim_end().ends_with('?'));
                withheld.extend(statements);
                if questions.is_empty() {
                    parts.push(fixed(NOTHING_RECORDED_NO_TOOL));
                } else {
                    if !withheld.is_empty() {
                        parts.push(fixed(NOTHING_RECORDED));
                    }
                    let text = questions.join(" ");
                    parts.push(AnswerPart { source: PartSource::Model, spoken: spoken_text(&text), written: text });
                }
            } else {
                if !wrote && !withheld.is_empty() {
                    parts.push(fixed(NOTHING_RECORDED));
                }
                if !kept.trim().is_empty() {
                    parts.push(AnswerPart { source: PartSource::Model, spoken: spoken_text(&kept), written: kept });
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
            if *end != End::Incident && !wrote {
                parts.push(fixed(NOTHING_RECORDED));
            }
        }
        End::NoModel => parts.push(fixed(NO_MODEL)),
    }
    if parts.is_empty() {
        parts.push(fixed("Je n'ai rien à ajouter."));
    }
    (parts, withheld)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Note;
    use crate::tools::{ArgError, ArgProblem, Failure, Page, Receipt, Refusal};
    use chrono::TimeZone;
    use proptest::prelude::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
    }

    fn call(name: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments: "{}".into() }
    }

    fn note_done() -> Outcome {
        Outcome::Done(Receipt::NoteCreated {
            note: Note { id: 3, texte: "pain".into(), projet: None, created_at: now() },
        })
    }

    const MODEL_SENTENCES: [&str; 10] = [
        "C'est noté !",
        "J'ai ajouté le rappel.",
        "Tu as un rendez-vous jeudi.",
        "Bonne journée.",
        "J'ai retiré la préférence.",
        "Rien n'a été écrit.",
        "La note est bien enregistrée.",
        "Veux-tu autre chose ?",
        "Je m'en souviendrai.",
        "Il fait beau.",
    ];

    fn outcome_strategy() -> impl Strategy<Value = (String, Outcome)> {
        prop_oneof![
            Just(("creer_note".to_string(), note_done())),
            Just(("marquer_rappel_fait".to_string(), Outcome::Refused(Refusal::ReminderUnknown { id: 4 }))),
            Just((
                "creer_rappel".to_string(),
                Outcome::Refused(Refusal::InvalidArguments(ArgError {
                    field: "echeance",
                    problem: ArgProblem::BadDateTime
                }))
            )),
            Just(("creer_note".to_string(), Outcome::Failed(Failure { page: Page::Notes, error: "disk".into() }))),
            Just(("lister_notes".to_string(), Outcome::Done(Receipt::Notes { projet: None, notes: vec![] }))),
        ]
    }

    proptest! {
        /// Whatever the outcomes and the model's words: exactly one certainty statement per
        /// incident, and no model-written claim of an action in the answer.
        #[test]
        fn one_statement_per_incident_and_no_model_claim(
            outcomes in proptest::collection::vec(outcome_strategy(), 0..6),
            model in proptest::collection::vec(0usize..MODEL_SENTENCES.len(), 0..6),
            expected in prop_oneof![Just(None), Just(Some(ExpectedAction::Ecriture)), Just(Some(ExpectedAction::Lecture))],
        ) {
            let text: String = model.iter().map(|i| MODEL_SENTENCES[*i]).collect::<Vec<_>>().join(" ");
            // The loop semantics: the batch ends at the first incident's batch; here one batch.
            let executed: Vec<(ToolCall, Outcome)> = outcomes.iter().map(|(n, o)| (call(n), o.clone())).collect();
            let has_incident = executed.iter().any(|(_, o)| o.is_incident());
            let end = if has_incident { End::Incident } else { End::Answered(text.clone()) };
            let (parts, _) = compose(&executed, &end, expected, now(), chrono_tz::Europe::Paris);
            let written: String = parts.iter().map(|p| p.written.as_str()).collect::<Vec<_>>().join("\n");
            let refusals = executed.iter().filter(|(_, o)| matches!(o, Outcome::Refused(_))).count();
            let failures = executed.iter().filter(|(_, o)| matches!(o, Outcome::Failed(_))).count();
            prop_assert_eq!(written.matches("Rien n'a été écrit").count(), refusals, "{}", written);
            prop_assert_eq!(written.matches("l'effet est inconnu").count(), failures, "{}", written);
            for p in parts.iter().filter(|p| p.source == PartSource::Model) {
                for s in super::super::claims::sentences(&p.written) {
                    prop_assert!(!super::super::claims::is_action_claim(&s), "model claim shown: {}", s);
                }
            }
            // Every successful write has its receipt.
            let writes = executed.iter().filter(|(c, o)| is_write(&c.name) && matches!(o, Outcome::Done(_))).count();
            prop_assert_eq!(written.matches("Note n°3 enregistrée").count(), writes);
            let spoken: String = parts.iter().map(|p| p.spoken.as_str()).collect::<Vec<_>>().join(" ");
            prop_assert!(!spoken.contains('*') && !spoken.contains("n°"), "{}", spoken);
        }
    }

    #[test]
    fn a_clarifying_question_on_a_write_is_kept() {
        let (parts, _) = compose(
            &[],
            &End::Answered("À quelle heure veux-tu ce rappel ?".into()),
            Some(ExpectedAction::Ecriture),
            now(),
            chrono_tz::Europe::Paris,
        );
        assert_eq!(parts.len(), 1);
        assert_eq!(
            (parts[0].source, parts[0].written.as_str()),
            (PartSource::Model, "À quelle heure veux-tu ce rappel ?")
        );
        let (parts, _) = compose(
            &[],
            &End::Answered("C'est noté ! Pour quelle heure ? Ta sœur s'en occupe.".into()),
            Some(ExpectedAction::Ecriture),
            now(),
            chrono_tz::Europe::Paris,
        );
        let written: Vec<&str> = parts.iter().map(|p| p.written.as_str()).collect();
        assert_eq!(written, [NOTHING_RECORDED, "Pour quelle heure ?"]);
    }

    #[test]
    fn narrated_action_without_tool_is_replaced() {
        let (parts, withheld) = compose(
            &[],
            &End::Answered("C'est noté, le dossier est déjà pris en charge par ta sœur.".into()),
            Some(ExpectedAction::Ecriture),
            now(),
            chrono_tz::Europe::Paris,
        );
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].written, NOTHING_RECORDED_NO_TOOL);
        assert!(!withheld.is_empty());
    }
}
