//! « annule », « oublie ça », « laisse tomber » right after a write: the write is taken
//! back, and the receipt says what was undone; what cannot be taken back is said to be still
//! there, with how to remove it (issue 38). Each turn records, from its own outcomes, the
//! steps that would undo it (`TurnTrace::undo`), so the next turn needs no guess.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::ToolCall;
use crate::tools::{Outcome, Receipt};

/// How long after a write « annule » still takes it back.
pub const UNDO_WINDOW_MINUTES: i64 = 5;

/// One step that takes a write back, or says why it cannot be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UndoStep {
    /// This call takes the write back (its receipt says what was undone).
    Call { tool: String, args: Value },
    /// Nothing takes it back: what is still there, and how the user can remove it.
    Kept { what: String, how: String },
}

/// The steps that undo a turn's writes, last write first. Reads and refused or failed
/// calls change nothing, so they have none.
pub fn steps(executed: &[(ToolCall, Outcome)]) -> Vec<UndoStep> {
    let mut out = Vec::new();
    for (_, outcome) in executed.iter().rev() {
        let Outcome::Done(receipt) = outcome else { continue };
        if let Some(step) = step(receipt) {
            out.push(step);
        }
    }
    out
}

fn call(tool: &str, args: Value) -> Option<UndoStep> {
    Some(UndoStep::Call { tool: tool.to_string(), args })
}

fn kept(what: String, how: &str) -> Option<UndoStep> {
    Some(UndoStep::Kept { what, how: how.to_string() })
}

fn step(receipt: &Receipt) -> Option<UndoStep> {
    use Receipt as R;
    match receipt {
        R::NoteCreated { note } => call("supprimer_note", json!({ "id": note.id })),
        R::ReminderCreated { rappel, .. } => call("supprimer_rappel", json!({ "id": rappel.id })),
        R::PreferenceStored { preference, .. } => call("desactiver_preference", json!({ "id": preference.id })),
        R::ListItemAdded { liste, element, .. } => {
            call("retirer_de_liste", json!({ "liste": liste.nom, "element": element.texte }))
        }
        R::TimerStarted { minuteur } => match &minuteur.nom {
            Some(nom) => call("annuler_minuteur", json!({ "nom": nom })),
            // The only way to name an unnamed timer is « the only one »: the registry
            // refuses if several run, and says so.
            None => call("annuler_minuteur", json!({})),
        },
        R::SouvenirStored { souvenir } => kept(
            format!("le souvenir n°{} « {} » est toujours mémorisé", souvenir.id, souvenir.texte),
            "Je ne sais pas encore effacer un souvenir ; il reste visible sur la page Souvenirs.",
        ),
        R::SessionStarted { session } => kept(
            format!("la session de travail sur {} tourne toujours", session.projet),
            "Dis « arrête la session » pour l'arrêter.",
        ),
        R::SessionPaused { session } => kept(
            format!("la session de travail sur {} est toujours en pause", session.projet),
            "Dis « reprends la session » pour la reprendre.",
        ),
        R::SessionResumed { session } => kept(
            format!("la session de travail sur {} a repris et tourne toujours", session.projet),
            "Dis « pause » pour la remettre en pause.",
        ),
        R::SessionStopped { session, .. } => kept(
            format!("la session de travail sur {} reste arrêtée", session.projet),
            &format!("Dis « je reprends sur {} » pour en démarrer une nouvelle.", session.projet),
        ),
        R::ReminderDone { rappel } => kept(
            format!("le rappel n°{} « {} » reste marqué comme fait", rappel.id, rappel.texte),
            "Je ne sais pas encore le remettre à faire ; recrée-le si besoin.",
        ),
        R::NoteDeleted { note } => {
            kept(format!("la note n°{} « {} » reste supprimée", note.id, note.texte), "Redis-la-moi pour la recréer.")
        }
        R::ReminderDeleted { rappel } => kept(
            format!("le rappel n°{} « {} » reste supprimé", rappel.id, rappel.texte),
            "Redis-le-moi pour le recréer.",
        ),
        R::ProjectCreated { projet } => kept(
            format!("le projet {} existe toujours", projet.nom),
            &format!("Dis « le projet {} est abandonné » pour le clore.", projet.nom),
        ),
        R::ProjectUpdated { after, .. } => {
            kept(format!("le projet {} garde ses changements", after.nom), "Redis-moi sa phase ou son statut d'avant.")
        }
        R::DecisionRecorded { decision } => kept(
            format!("la décision n°{} « {} » reste actée", decision.id, decision.texte),
            "Je ne sais pas encore effacer une décision ; elle reste sur la page Projets.",
        ),
        R::PreferenceDeactivated { preference } => kept(
            format!("la préférence n°{} « {} » reste désactivée", preference.id, preference.texte),
            "Redis-la-moi pour l'enregistrer à nouveau.",
        ),
        R::TimerChanged { after, .. } => kept(
            format!("le minuteur n°{} garde son changement", after.id),
            "Redis-moi le changement inverse, par exemple « retire deux minutes au minuteur ».",
        ),
        R::TimersCancelled { minuteurs } => kept(
            match minuteurs.as_slice() {
                [one] => format!("le minuteur n°{} reste annulé", one.id),
                _ => format!("les {} minuteurs restent annulés", minuteurs.len()),
            },
            "Relance-le en me redisant sa durée.",
        ),
        R::ListItemRemoved { liste, element } => kept(
            format!("« {} » reste retiré de la liste {}", element.texte, liste.nom),
            &format!("Dis « ajoute {} à la liste {} » pour le remettre.", element.texte, liste.nom),
        ),
        R::ListCleared { liste } => {
            kept(format!("la liste {} reste vidée", liste.nom), "Redis-moi ses éléments pour les remettre.")
        }
        R::RecurringReminderCreated { rappel } => call("supprimer_rappel", json!({ "id": rappel.id })),
        R::ReminderMoved { before, .. } => call(
            "deplacer_rappel",
            json!({ "id": before.id, "echeance": before.echeance.to_rfc3339_opts(chrono::SecondsFormat::Secs, true) }),
        ),
        R::AlarmSet { reveil } => call("annuler_reveil", json!({ "id": reveil.id })),
        R::ReminderOccurrenceDone { after, .. } => kept(
            format!("le rappel n°{} « {} » est passé à sa prochaine fois", after.id, after.texte),
            "Je ne sais pas encore revenir à la précédente.",
        ),
        R::ReminderSeriesStopped { rappel } => kept(
            format!("la série du rappel n°{} « {} » reste arrêtée", rappel.id, rappel.texte),
            "Redis-moi le rappel et sa règle pour la reprendre.",
        ),
        R::AlarmsCancelled { reveils } => kept(
            match reveils.as_slice() {
                [one] => format!("le réveil n°{} reste annulé", one.id),
                _ => format!("les {} réveils restent annulés", reveils.len()),
            },
            "Redis-moi l'heure pour le remettre.",
        ),
        // Reads.
        R::Alarms { .. } | R::Souvenirs { .. } => None,
        R::Notes { .. }
        | R::Reminders { .. }
        | R::WorkTime { .. }
        | R::Preferences { .. }
        | R::Search { .. }
        | R::Projects { .. }
        | R::Project { .. }
        | R::Timers { .. }
        | R::List { .. } => None,
    }
}
