//! Reports composed by code from typed outcomes: a refusal says nothing was written, a
//! failure says the effect is unknown and names the page to check, a success states what
//! the store holds. No model is involved; the `match`es are exhaustive on purpose.

mod basics;
pub mod labels;
mod repeats;

use chrono_tz::Tz;

use crate::fr;
use crate::fr::written_minutes as format_duration;
use crate::memory::{Preference, Projet, Rappel, SessionTravail};
use crate::tools::args::{ArgProblem, Expected};
use crate::tools::{KeywordReason, Outcome, Receipt, Refusal, SearchMode};

/// The written report of one tool call. `tool` is the name taken from the emitted call.
pub fn compose_written(tool: &str, outcome: &Outcome, tz: Tz) -> String {
    match outcome {
        Outcome::Done(receipt) => describe_receipt(receipt, tz),
        Outcome::Refused(refusal) => {
            format!("Je n'ai pas pu {} : {} Rien n'a été écrit.", labels::action(tool), describe_refusal(refusal, tz))
        }
        Outcome::Failed(failure) => format!(
            "Panne en voulant {} : une erreur est survenue, l'effet est inconnu. Vérifie la page {} ({}).",
            labels::action(tool),
            failure.page.label(),
            failure.page.path()
        ),
        Outcome::Briefing(briefing) => briefing.text.clone(),
    }
}

fn rappel_line(r: &Rappel, tz: Tz, now: Option<chrono::DateTime<chrono::Utc>>) -> String {
    let state = if r.fait && r.is_recurring() {
        " (série arrêtée)"
    } else if r.fait {
        " (fait)"
    } else if now.is_some_and(|n| r.echeance < n) {
        " (en retard)"
    } else {
        ""
    };
    let rule = r.repetition.as_ref().map(|p| format!(", {}", p.label())).unwrap_or_default();
    format!("n°{} « {} » pour le {}{rule}{state}", r.id, r.texte, fr::datetime(r.echeance, tz))
}

/// " dus du lundi 1er au … contenant « banque »", for the header of a filtered list.
fn reminder_scope(f: &crate::tools::ReminderFilter) -> String {
    let range = match (f.debut, f.fin) {
        (Some(d), Some(e)) if d == e => format!(" pour le {}", fr::date(d.0)),
        (Some(d), Some(e)) => format!(" du {} au {}", fr::date(d.0), fr::date(e.0)),
        (Some(d), None) => format!(" à partir du {}", fr::date(d.0)),
        (None, Some(e)) => format!(" jusqu'au {}", fr::date(e.0)),
        (None, None) => String::new(),
    };
    let words = f.contient.as_deref().map(|w| format!(" contenant « {w} »")).unwrap_or_default();
    format!("{range}{words}")
}

fn spoken_reminder_scope(f: &crate::tools::ReminderFilter, today: chrono::NaiveDate) -> String {
    use crate::fr::spoken_date;
    let range = match (f.debut, f.fin) {
        (Some(d), Some(e)) if d == e => format!(" pour {}", spoken_date(d.0, today)),
        (Some(d), Some(e)) => format!(" du {} au {}", spoken_date(d.0, today), spoken_date(e.0, today)),
        (Some(d), None) => format!(" à partir du {}", spoken_date(d.0, today)),
        (None, Some(e)) => format!(" jusqu'au {}", spoken_date(e.0, today)),
        (None, None) => String::new(),
    };
    let words = f.contient.as_deref().map(|w| format!(" contenant {w}")).unwrap_or_default();
    format!("{range}{words}")
}

fn preference_line(p: &Preference) -> String {
    let state = if p.active { "" } else { " (désactivée)" };
    format!("n°{} « {} »{state}", p.id, p.texte)
}

fn projet_line(p: &Projet) -> String {
    let phase = p.phase.as_deref().map(|ph| format!(", phase {ph}")).unwrap_or_default();
    format!("{} ({}{phase})", p.nom, p.statut.label())
}

fn session_state(s: &SessionTravail, tz: Tz) -> String {
    let state = if s.is_paused() { "en pause" } else { "en cours" };
    format!("une session {state} sur {} depuis {}", s.projet, fr::time(s.debut, tz))
}

fn list<T>(items: &[T], empty: &str, header: &str, line: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        return empty.to_string();
    }
    let mut out = format!("{header} ({}) :", items.len());
    for item in items {
        out.push_str("\n- ");
        out.push_str(&line(item));
    }
    out
}

/// What a successful call stored or read, from its receipt.
pub fn describe_receipt(receipt: &Receipt, tz: Tz) -> String {
    match receipt {
        Receipt::NoteCreated { note } => match &note.projet {
            Some(p) => format!("Note n°{} enregistrée pour le projet {p} : « {} ».", note.id, note.texte),
            None => format!("Note n°{} enregistrée : « {} ».", note.id, note.texte),
        },
        Receipt::Notes { projet, contient, notes, portee } => {
            let scope = format!(
                "{}{}{}",
                projet.as_deref().map(|p| format!(" pour le projet {p}")).unwrap_or_default(),
                contient.as_deref().map(|w| format!(" contenant « {w} »")).unwrap_or_default(),
                repeats::scope(portee, "les dernières :")
            );
            let empty = format!("Aucune note{scope}.");
            list(notes, &empty, &format!("Notes{scope}"), |n| match (&n.projet, projet) {
                (Some(p), None) => format!("n°{} ({p}) « {} »", n.id, n.texte),
                _ => format!("n°{} « {} »", n.id, n.texte),
            })
        }
        Receipt::ReminderCreated { rappel, bare_date } => {
            let hour_note = if *bare_date { " (aucune heure donnée : 9 h par défaut)" } else { "" };
            format!(
                "Rappel n°{} enregistré : « {} » pour le {}{hour_note}.",
                rappel.id,
                rappel.texte,
                fr::datetime(rappel.echeance, tz)
            )
        }
        Receipt::Reminders { include_done, filter, rappels, now, portee } => {
            let scope = format!("{}{}", reminder_scope(filter), repeats::scope(portee, "les derniers :"));
            let empty =
                if *include_done { format!("Aucun rappel{scope}.") } else { format!("Aucun rappel à faire{scope}.") };
            let header = if *include_done { format!("Rappels{scope}") } else { format!("Rappels à faire{scope}") };
            list(rappels, &empty, &header, |r| rappel_line(r, tz, Some(*now)))
        }
        Receipt::ReminderDone { rappel } => {
            format!("Rappel n°{} « {} » marqué comme fait.", rappel.id, rappel.texte)
        }
        Receipt::WorkTime { debut, fin, until_now, projet, totals, running } => {
            let range = if debut == fin {
                format!("le {}", fr::date(debut.0))
            } else {
                format!("du {} au {}", fr::date(debut.0), fr::date(fin.0))
            };
            let until = if *until_now { " (jusqu'à maintenant)" } else { "" };
            let scope = projet.as_deref().map(|p| format!(" sur {p}")).unwrap_or_default();
            let mut out = if totals.total_secs == 0 && totals.sessions == 0 {
                format!("Aucune session de travail{scope} {range}{until} : 0 minute mesurée.")
            } else if totals.total_secs < 60 {
                format!(
                    "Temps de travail{scope} {range}{until} : moins d'une minute ({}).",
                    fr::count(i64::from(totals.sessions), "session", "sessions")
                )
            } else {
                format!("Temps de travail{scope} {range}{until} : {}.", format_duration(totals.total_secs))
            };
            if projet.is_none() && totals.par_projet.len() > 1 {
                for (p, secs) in &totals.par_projet {
                    out.push_str(&format!("\n- {p} : {}", format_duration(*secs)));
                }
            }
            if let Some(s) = running {
                out.push_str(&format!("\nIl y a {}.", session_state(s, tz)));
            }
            out
        }
        Receipt::PreferenceStored { preference, active, cap } => {
            format!(
                "Préférence n°{} enregistrée : « {} » ({} sur {cap} au maximum).",
                preference.id,
                preference.texte,
                fr::count(i64::from(*active), "active", "actives")
            )
        }
        Receipt::Preferences { preferences, active, cap, portee } => {
            let scope = repeats::scope(portee, "les dernières :");
            let list = list(
                preferences,
                &format!("Aucune préférence{scope}."),
                &format!("Préférences{scope}"),
                preference_line,
            );
            format!("{list}\n{} sur {cap} au maximum.", fr::count(i64::from(*active), "active", "actives"))
        }
        Receipt::PreferenceDeactivated { preference } => {
            format!("Préférence n°{} « {} » désactivée.", preference.id, preference.texte)
        }
        Receipt::Search { requete, search, hits, not_indexed } => {
            let how = match search {
                SearchMode::Vector { threshold, .. } => format!("recherche par similarité, seuil {threshold}"),
                SearchMode::Keyword { reason: KeywordReason::NoEmbeddingProvider } => {
                    "recherche par mots-clés, aucun modèle d'embeddings configuré".to_string()
                }
                SearchMode::Keyword { reason: KeywordReason::EmbeddingFailed } => {
                    "recherche par mots-clés, le modèle d'embeddings n'a pas répondu".to_string()
                }
            };
            let mut out = if hits.is_empty() {
                format!("Rien trouvé dans les souvenirs pour « {requete} » ({how}).")
            } else {
                let mut s = format!("Souvenirs trouvés pour « {requete} » ({how}) :");
                for h in hits {
                    s.push_str(&format!("\n- n°{} « {} »", h.souvenir.id, h.souvenir.texte));
                }
                s
            };
            if *not_indexed > 0 {
                out.push_str(&if *not_indexed == 1 {
                    "\n1 souvenir n'a pas pu être indexé et n'a pas été cherché.".to_string()
                } else {
                    format!("\n{not_indexed} souvenirs n'ont pas pu être indexés et n'ont pas été cherchés.")
                });
            }
            out
        }
        Receipt::SessionStarted { session } => {
            format!("Session n°{} démarrée sur {} à {}.", session.id, session.projet, fr::time(session.debut, tz))
        }
        Receipt::SessionPaused { session } => {
            let at = session.pauses.last().map(|p| fr::time(p.debut, tz)).unwrap_or_default();
            format!("Session sur {} mise en pause à {at}.", session.projet)
        }
        Receipt::SessionResumed { session } => {
            let at = session.pauses.last().and_then(|p| p.fin).map(|t| fr::time(t, tz)).unwrap_or_default();
            format!("Session sur {} reprise à {at}.", session.projet)
        }
        Receipt::SessionStopped { session, worked_secs } => format!(
            "Session sur {} arrêtée{} : {} de travail, pauses exclues.",
            session.projet,
            session.fin.map(|f| format!(" à {}", fr::time(f, tz))).unwrap_or_default(),
            format_duration(*worked_secs)
        ),
        Receipt::Projects { projets } => list(projets, "Aucun projet.", "Projets", projet_line),
        Receipt::Project { detail, worked_secs } => {
            let p = &detail.projet;
            let mut out = format!("Projet {}.", projet_line(p));
            if let Some(d) = &p.description {
                out.push_str(&format!("\nDescription : {d}"));
            }
            out.push_str(&format!("\nTemps passé : {}.", format_duration(*worked_secs)));
            if detail.phases.len() > 1 {
                let phases: Vec<&str> = detail.phases.iter().map(|ph| ph.phase.as_str()).collect();
                out.push_str(&format!("\nPhases successives : {}.", phases.join(" → ")));
            }
            out.push('\n');
            out.push_str(&list(&detail.decisions, "Aucune décision.", "Décisions", |d| {
                format!("« {} » ({})", d.texte, fr::date(d.created_at.with_timezone(&tz).date_naive()))
            }));
            out.push_str(&format!("\nNotes rattachées : {}.", detail.notes));
            out
        }
        Receipt::ProjectCreated { projet } => format!("Projet {} créé.", projet_line(projet)),
        Receipt::ProjectUpdated { before, after } => {
            let changes = project_changes(before, after);
            if changes.is_empty() {
                format!("Projet {} : rien n'a changé, les valeurs étaient déjà celles-là.", after.nom)
            } else {
                format!("Projet {} modifié : {}.", after.nom, changes.join(", "))
            }
        }
        Receipt::DecisionRecorded { decision } => {
            format!("Décision n°{} actée sur {} : « {} ».", decision.id, decision.projet, decision.texte)
        }
        Receipt::SouvenirStored { souvenir } => {
            format!("Souvenir n°{} mémorisé : « {} ».", souvenir.id, souvenir.texte)
        }
        Receipt::NoteDeleted { note } => basics::note_deleted(note),
        Receipt::ReminderDeleted { rappel } => basics::reminder_deleted(rappel, tz),
        Receipt::TimerStarted { minuteur } => basics::timer_started(minuteur, tz),
        Receipt::Timers { nom, minuteurs, now } => basics::timers(nom.as_deref(), minuteurs, *now, tz),
        Receipt::TimerChanged { before, after, now } => basics::timer_changed(before, after, *now, tz),
        Receipt::TimersCancelled { minuteurs } => basics::timers_cancelled(minuteurs),
        Receipt::ListItemAdded { liste, element, new_list } => basics::item_added(liste, element, *new_list),
        Receipt::ListItemRemoved { liste, element } => basics::item_removed(liste, element),
        Receipt::List { liste } => basics::list(liste),
        Receipt::ListCleared { liste } => basics::list_cleared(liste),
        Receipt::RecurringReminderCreated { rappel } => repeats::recurring_created(rappel, tz),
        Receipt::ReminderOccurrenceDone { before, after } => repeats::occurrence_done(before, after, tz),
        Receipt::ReminderMoved { before, after } => repeats::moved(before, after, tz),
        Receipt::ReminderSeriesStopped { rappel } => repeats::series_stopped(rappel, tz),
        Receipt::AlarmSet { reveil } => repeats::alarm_set(reveil, tz),
        Receipt::Alarms { reveils, now } => repeats::alarms(reveils, *now, tz),
        Receipt::AlarmsCancelled { reveils } => repeats::alarms_cancelled(reveils, tz),
        Receipt::Souvenirs { portee, souvenirs } => repeats::souvenirs(portee, souvenirs),
    }
}

pub use basics::{list_name, spoken_timer_label, timer_label};
pub use repeats::{acknowledged, alarm_label, ringing_label, snoozed, spoken_ringing_label};

/// What was wrong in the request, said with what the argument holds (« le texte est
/// vide »), never its internal name.
fn describe_problem(field: &str, problem: &ArgProblem) -> String {
    let what = labels::field(field);
    match problem {
        ArgProblem::NotAnObject => "les données reçues ne sont pas un objet JSON.".to_string(),
        ArgProblem::Missing => format!("{what} manque."),
        ArgProblem::WrongType { expected } => {
            let kind = match expected {
                Expected::Text => "un texte",
                Expected::Integer => "un nombre entier",
                Expected::Boolean => "oui ou non",
            };
            format!("{what} devait être {kind}.")
        }
        ArgProblem::Empty => format!("{what} est vide."),
        ArgProblem::TooLong { max } => format!("{what} dépasse {max} caractères."),
        ArgProblem::BadDate => format!("{what} n'est pas une date."),
        ArgProblem::BadDateTime => format!("{what} n'est pas une date avec une heure."),
        ArgProblem::NotPositive => format!("{what} doit être un nombre positif."),
        ArgProblem::NotAllowed => format!("{what} n'a pas une valeur permise."),
    }
}

/// Why a call was refused, in one sentence.
pub fn describe_refusal(refusal: &Refusal, tz: Tz) -> String {
    match refusal {
        Refusal::InvalidArguments(e) => describe_problem(e.field, &e.problem),
        Refusal::UnknownTool { .. } => "je ne sais pas faire cette action.".to_string(),
        Refusal::ToolNotAllowed { .. } => "cette action n'est pas permise ici.".to_string(),
        Refusal::ReminderUnknown { id } => format!("aucun rappel n°{id}."),
        Refusal::ReminderAlreadyDone { rappel } => {
            format!("le rappel n°{} « {} » était déjà fait.", rappel.id, rappel.texte)
        }
        Refusal::DueDateInPast { echeance } => {
            format!("l'échéance demandée, {}, est déjà passée.", fr::datetime(*echeance, tz))
        }
        Refusal::PreferenceUnknown { id } => format!("aucune préférence n°{id}."),
        Refusal::PreferenceAlreadyInactive { preference } => {
            format!("la préférence n°{} « {} » était déjà désactivée.", preference.id, preference.texte)
        }
        Refusal::PreferenceDuplicate { preference } => {
            format!("la même préférence existe déjà, n°{} « {} ».", preference.id, preference.texte)
        }
        Refusal::PreferenceCapReached { cap } => {
            format!("le plafond de {cap} préférences actives est atteint ; désactives-en une d'abord.")
        }
        Refusal::FutureDate { debut, .. } => {
            format!(
                "le {} n'est pas encore arrivé : aucune session ne peut y exister, aucune lecture n'a été faite.",
                fr::date(debut.0)
            )
        }
        Refusal::InvertedRange { debut, fin } => {
            format!("la fin ({}) est avant le début ({}).", fr::date(fin.0), fr::date(debut.0))
        }
        Refusal::SessionAlreadyRunning { session } => format!("il y a déjà {}.", session_state(session, tz)),
        Refusal::SessionAlreadyPaused { session } => format!("la session sur {} est déjà en pause.", session.projet),
        Refusal::SessionNotPaused { session } => format!("la session sur {} n'est pas en pause.", session.projet),
        Refusal::NoRunningSession => "aucune session de travail n'est en cours.".to_string(),
        Refusal::ProjectUnknown { nom } if nom.is_empty() => "ce projet n'existe pas.".to_string(),
        Refusal::ProjectUnknown { nom } => format!("aucun projet nommé « {nom} »."),
        Refusal::ProjectDuplicate { projet } => format!("un projet nommé « {} » existe déjà.", projet.nom),
        Refusal::NothingToChange => "aucune modification n'a été demandée.".to_string(),
        Refusal::NoteUnknown { id } => format!("aucune note n°{id}."),
        Refusal::TimerNameTaken { minuteur } => basics::refusal::timer_name_taken(minuteur, tz),
        Refusal::NoTimer { nom } => basics::refusal::no_timer(nom.as_deref()),
        Refusal::TimersAmbiguous { minuteurs } => basics::refusal::ambiguous(minuteurs),
        Refusal::TimerAlreadyPaused { minuteur } => {
            format!("le minuteur {} est déjà en pause.", basics::timer_label(minuteur))
        }
        Refusal::TimerNotPaused { minuteur } => {
            format!("le minuteur {} n'est pas en pause.", basics::timer_label(minuteur))
        }
        Refusal::TimerRinging { minuteur } => {
            format!("le minuteur {} sonne : dis « c'est bon » pour l'arrêter.", basics::timer_label(minuteur))
        }
        Refusal::TimerWouldEnd { minuteur, remaining } => basics::refusal::would_end(minuteur, *remaining),
        Refusal::ListUnknown { nom } => format!("aucune liste nommée « {nom} »."),
        Refusal::ListItemAlreadyThere { liste, element } => {
            format!("« {element} » est déjà sur {}.", basics::list_name(liste))
        }
        Refusal::ListItemNotThere { liste, element } => {
            format!("« {element} » n'est pas sur {}.", basics::list_name(liste))
        }
        Refusal::ListItemsAmbiguous { liste, elements } => basics::refusal::items_ambiguous(liste, elements),
        Refusal::SouvenirUnknown { id } => format!("aucun souvenir n°{id}."),
        Refusal::ReminderNotRecurring { rappel } => repeats::refusal::not_recurring(rappel),
        Refusal::ReminderSeriesAlreadyStopped { rappel } => repeats::refusal::already_stopped(rappel),
        Refusal::ReminderSameTime { rappel } => repeats::refusal::same_time(rappel, tz),
        Refusal::AlarmSameTime { reveil } => repeats::refusal::alarm_same_time(reveil, tz),
        Refusal::NoAlarm { id } => repeats::refusal::no_alarm(*id),
        Refusal::AlarmsAmbiguous { reveils } => repeats::refusal::alarms_ambiguous(reveils, tz),
    }
}

/// How many items of a list are read aloud before "et N autres".
const SPOKEN_LIST_MAX: usize = 5;

fn spoken_list<T>(items: &[T], line: impl Fn(&T) -> String) -> String {
    let shown: Vec<String> = items.iter().take(SPOKEN_LIST_MAX).map(line).collect();
    let mut out = shown.join(" ; ");
    if items.len() > SPOKEN_LIST_MAX {
        out.push_str(&format!(" ; et {} autres", crate::fr::number((items.len() - SPOKEN_LIST_MAX) as i64)));
    }
    out
}

fn n(v: i64) -> String {
    crate::fr::number(v)
}

fn spoken_count(count: usize, one: &str, many: &str) -> String {
    let feminine = matches!(one, "note" | "préférence" | "décision" | "session");
    match (count, feminine) {
        (0, false) => format!("aucun {one}"),
        (0, true) => format!("aucune {one}"),
        (1, false) => format!("un {one}"),
        (1, true) => format!("une {one}"),
        (c, _) => format!("{} {many}", n(c as i64)),
    }
}

/// "numéro douze".
fn sid(id: i64) -> String {
    format!("numéro {}", n(id))
}

/// "zéro virgule six".
fn spoken_decimal(v: f32) -> String {
    let tenths = (v * 10.0).round() as i64;
    if tenths % 10 == 0 {
        n(tenths / 10)
    } else {
        format!("{} virgule {}", n(tenths / 10), n(tenths % 10))
    }
}

/// The spoken report of one tool call: no markdown, numbers, dates and times in words,
/// short — and every fact of the written report (ids, names, dates, times, durations,
/// counts, "nothing changed") said too. `tool` is the name taken from the emitted call.
pub fn compose_spoken(tool: &str, outcome: &Outcome, now: chrono::DateTime<chrono::Utc>, tz: Tz) -> String {
    use crate::fr::{spoken_date, spoken_datetime as when, spoken_duration as dur, spoken_time};
    let today = now.with_timezone(&tz).date_naive();
    match outcome {
        Outcome::Done(receipt) => match receipt {
            Receipt::NoteCreated { note } => match &note.projet {
                Some(p) => format!("Note {} enregistrée pour le projet {p} : {}.", sid(note.id), note.texte),
                None => format!("Note {} enregistrée : {}.", sid(note.id), note.texte),
            },
            Receipt::Notes { projet, contient, notes, portee } => {
                let scope = format!(
                    "{}{}{}",
                    projet.as_deref().map(|p| format!(" pour le projet {p}")).unwrap_or_default(),
                    contient.as_deref().map(|w| format!(" contenant {w}")).unwrap_or_default(),
                    repeats::spoken_scope(portee, "les dernières :")
                );
                if notes.is_empty() {
                    format!("Tu n'as aucune note{scope}.")
                } else {
                    format!(
                        "{}{scope} : {}.",
                        capitalise(&spoken_count(notes.len(), "note", "notes")),
                        spoken_list(notes, |x| match (&x.projet, projet) {
                            (Some(p), None) => format!("{}, projet {p}, {}", sid(x.id), x.texte),
                            _ => format!("{}, {}", sid(x.id), x.texte),
                        })
                    )
                }
            }
            Receipt::ReminderCreated { rappel, bare_date } => {
                let hour_note =
                    if *bare_date { " Aucune heure n'était donnée : neuf heures par défaut." } else { "" };
                format!(
                    "Rappel {} enregistré pour {} : {}.{hour_note}",
                    sid(rappel.id),
                    when(rappel.echeance, now, tz),
                    rappel.texte
                )
            }
            Receipt::Reminders { include_done, filter, rappels, portee, .. } => {
                let scope = format!(
                    "{}{}",
                    spoken_reminder_scope(filter, today),
                    repeats::spoken_scope(portee, "les derniers :")
                );
                let what = if *include_done { "" } else { " à faire" };
                if rappels.is_empty() {
                    format!("Tu n'as aucun rappel{what}{scope}.")
                } else {
                    format!(
                        "{}{what}{scope} : {}.",
                        capitalise(&spoken_count(rappels.len(), "rappel", "rappels")),
                        spoken_list(rappels, |r| {
                            let state = if r.fait && r.is_recurring() {
                                ", série arrêtée"
                            } else if r.fait {
                                ", fait"
                            } else if r.echeance < now {
                                ", en retard"
                            } else {
                                ""
                            };
                            let rule =
                                r.repetition.as_ref().map(|p| format!(", {}", p.spoken_label())).unwrap_or_default();
                            format!("{}, {}, {}{rule}{state}", sid(r.id), r.texte, when(r.echeance, now, tz))
                        })
                    )
                }
            }
            Receipt::ReminderDone { rappel } => {
                format!("Rappel {} marqué comme fait : {}.", sid(rappel.id), rappel.texte)
            }
            Receipt::WorkTime { debut, fin, until_now, projet, totals, running } => {
                let range = if debut == fin {
                    spoken_date(debut.0, today)
                } else {
                    format!("du {} au {}", spoken_date(debut.0, today), spoken_date(fin.0, today))
                };
                let scope = projet.as_deref().map(|p| format!(" sur {p}")).unwrap_or_default();
                let until = if *until_now { ", jusqu'à maintenant" } else { "" };
                let mut out = if totals.total_secs == 0 && totals.sessions == 0 {
                    format!("Aucune session de travail{scope}, {range}{until} : zéro minute mesurée.")
                } else if totals.total_secs < 60 {
                    let n = totals.sessions;
                    let count = if n == 1 {
                        "une session".to_string()
                    } else {
                        format!("{} sessions", fr::number(i64::from(n)))
                    };
                    format!("Temps de travail{scope}, {range}{until} : moins d'une minute ({count}).")
                } else {
                    format!("Temps de travail{scope}, {range}{until} : {}.", dur(totals.total_secs))
                };
                if projet.is_none() && totals.par_projet.len() > 1 {
                    let parts: Vec<String> =
                        totals.par_projet.iter().map(|(p, secs)| format!("{p}, {}", dur(*secs))).collect();
                    out.push_str(&format!(" Dont {}.", parts.join(" ; ")));
                }
                if let Some(s) = running {
                    let state = if s.is_paused() { "en pause" } else { "en cours" };
                    out.push_str(&format!(
                        " Il y a une session {state} sur {} depuis {}.",
                        s.projet,
                        spoken_time(s.debut, tz)
                    ));
                }
                out
            }
            Receipt::PreferenceStored { preference, active, cap } => format!(
                "Préférence {} enregistrée : {}. {} sur {} au maximum.",
                sid(preference.id),
                preference.texte,
                capitalise(&fr::spoken_count(i64::from(*active), "active", "actives", true)),
                n(i64::from(*cap))
            ),
            Receipt::Preferences { preferences, active, cap, portee } => {
                let scope = repeats::spoken_scope(portee, "les dernières :");
                let counts = format!(
                    "{} sur {} au maximum",
                    capitalise(&fr::spoken_count(i64::from(*active), "active", "actives", true)),
                    n(i64::from(*cap))
                );
                if preferences.is_empty() {
                    format!("Aucune préférence{scope}. {counts}.")
                } else {
                    format!(
                        "{}{scope} : {}. {counts}.",
                        capitalise(&spoken_count(preferences.len(), "préférence", "préférences")),
                        spoken_list(preferences, |p| {
                            let state = if p.active { "" } else { ", désactivée" };
                            format!("{}, {}{state}", sid(p.id), p.texte)
                        })
                    )
                }
            }
            Receipt::PreferenceDeactivated { preference } => {
                format!("Préférence {} désactivée : {}.", sid(preference.id), preference.texte)
            }
            Receipt::Search { requete, search, hits, not_indexed } => {
                let how = match search {
                    SearchMode::Vector { threshold, .. } => {
                        format!("recherche par similarité, seuil {}", spoken_decimal(*threshold))
                    }
                    SearchMode::Keyword { reason: KeywordReason::NoEmbeddingProvider } => {
                        "recherche par mots-clés, aucun modèle d'embeddings n'est configuré".to_string()
                    }
                    SearchMode::Keyword { reason: KeywordReason::EmbeddingFailed } => {
                        "recherche par mots-clés, le modèle d'embeddings n'a pas répondu".to_string()
                    }
                };
                let mut out = if hits.is_empty() {
                    format!("Je n'ai rien trouvé dans tes souvenirs pour {requete}, {how}.")
                } else {
                    format!(
                        "Dans tes souvenirs, pour {requete}, {how} : {}.",
                        spoken_list(hits, |h| format!("{}, {}", sid(h.souvenir.id), h.souvenir.texte))
                    )
                };
                if *not_indexed > 0 {
                    out.push_str(&if *not_indexed == 1 {
                        " Un souvenir n'a pas pu être indexé et n'a pas été cherché.".to_string()
                    } else {
                        format!(
                            " {} souvenirs n'ont pas pu être indexés et n'ont pas été cherchés.",
                            capitalise(&n(i64::from(*not_indexed)))
                        )
                    });
                }
                out
            }
            Receipt::SessionStarted { session } => format!(
                "Session {} démarrée sur {} à {}.",
                sid(session.id),
                session.projet,
                spoken_time(session.debut, tz)
            ),
            Receipt::SessionPaused { session } => match session.pauses.last() {
                Some(p) => format!("Session sur {} mise en pause à {}.", session.projet, spoken_time(p.debut, tz)),
                None => format!("Session sur {} mise en pause.", session.projet),
            },
            Receipt::SessionResumed { session } => match session.pauses.last().and_then(|p| p.fin) {
                Some(t) => format!("Session sur {} reprise à {}.", session.projet, spoken_time(t, tz)),
                None => format!("Session sur {} reprise.", session.projet),
            },
            Receipt::SessionStopped { session, worked_secs } => format!(
                "Session sur {} arrêtée{} : {} de travail, pauses exclues.",
                session.projet,
                session.fin.map(|f| format!(" à {}", spoken_time(f, tz))).unwrap_or_default(),
                dur(*worked_secs)
            ),
            Receipt::Projects { projets } if projets.is_empty() => "Tu n'as aucun projet.".to_string(),
            Receipt::Projects { projets } => format!(
                "{} : {}.",
                capitalise(&spoken_count(projets.len(), "projet", "projets")),
                spoken_list(projets, spoken_projet)
            ),
            Receipt::Project { detail, worked_secs } => {
                let p = &detail.projet;
                let mut out = format!("Projet {}.", spoken_projet(p));
                if let Some(d) = &p.description {
                    out.push_str(&format!(" Description : {d}."));
                }
                out.push_str(&format!(" Temps passé : {}.", dur(*worked_secs)));
                if detail.phases.len() > 1 {
                    let phases: Vec<&str> = detail.phases.iter().map(|ph| ph.phase.as_str()).collect();
                    out.push_str(&format!(" Phases successives : {}.", phases.join(", puis ")));
                }
                if detail.decisions.is_empty() {
                    out.push_str(" Aucune décision.");
                } else {
                    out.push_str(&format!(
                        " {} : {}.",
                        capitalise(&spoken_count(detail.decisions.len(), "décision", "décisions")),
                        spoken_list(&detail.decisions, |d| format!(
                            "{}, le {}",
                            d.texte,
                            spoken_date(d.created_at.with_timezone(&tz).date_naive(), today)
                        ))
                    ));
                }
                out.push_str(&format!(" Notes rattachées : {}.", n(detail.notes as i64)));
                out
            }
            Receipt::ProjectCreated { projet } => format!("Projet {} créé.", spoken_projet(projet)),
            Receipt::ProjectUpdated { before, after } => {
                let changes = project_changes(before, after);
                if changes.is_empty() {
                    format!("Projet {} : rien n'a changé, les valeurs étaient déjà celles-là.", after.nom)
                } else {
                    let said = changes.join(", ").replace('→', "devient").replace("« ", "").replace(" »", "");
                    format!("Projet {} modifié : {said}.", after.nom)
                }
            }
            Receipt::DecisionRecorded { decision } => {
                format!("Décision {} actée sur {} : {}.", sid(decision.id), decision.projet, decision.texte)
            }
            Receipt::SouvenirStored { souvenir } => {
                format!("Souvenir {} mémorisé : {}.", sid(souvenir.id), souvenir.texte)
            }
            Receipt::NoteDeleted { note } => basics::spoken_note_deleted(note),
            Receipt::ReminderDeleted { rappel } => basics::spoken_reminder_deleted(rappel, now, tz),
            Receipt::TimerStarted { minuteur } => basics::spoken_timer_started(minuteur, tz),
            Receipt::Timers { nom, minuteurs, now } => basics::spoken_timers(nom.as_deref(), minuteurs, *now, tz),
            Receipt::TimerChanged { before, after, now } => basics::spoken_timer_changed(before, after, *now, tz),
            Receipt::TimersCancelled { minuteurs } => basics::spoken_timers_cancelled(minuteurs),
            Receipt::ListItemAdded { liste, element, new_list } => basics::spoken_item_added(liste, element, *new_list),
            Receipt::ListItemRemoved { liste, element } => basics::spoken_item_removed(liste, element),
            Receipt::List { liste } => basics::spoken_list(liste),
            Receipt::ListCleared { liste } => basics::spoken_list_cleared(liste),
            Receipt::RecurringReminderCreated { rappel } => repeats::spoken_recurring_created(rappel, now, tz),
            Receipt::ReminderOccurrenceDone { before, after } => {
                repeats::spoken_occurrence_done(before, after, now, tz)
            }
            Receipt::ReminderMoved { before, after } => repeats::spoken_moved(before, after, now, tz),
            Receipt::ReminderSeriesStopped { rappel } => repeats::spoken_series_stopped(rappel, now, tz),
            Receipt::AlarmSet { reveil } => repeats::spoken_alarm_set(reveil, now, tz),
            Receipt::Alarms { reveils, now } => repeats::spoken_alarms(reveils, *now, tz),
            Receipt::AlarmsCancelled { reveils } => repeats::spoken_alarms_cancelled(reveils, now, tz),
            Receipt::Souvenirs { portee, souvenirs } => repeats::spoken_souvenirs(portee, souvenirs),
        },
        Outcome::Refused(refusal) => format!("Je n'ai rien écrit : {}", spoken_refusal(refusal, now, tz)),
        Outcome::Failed(failure) if crate::tools::writes(tool) => format!(
            "Une erreur est survenue, je ne sais pas si c'est enregistré. Vérifie la page {}.",
            failure.page.label()
        ),
        Outcome::Failed(failure) => {
            format!("Une erreur est survenue, je n'ai pas pu lire. Vérifie la page {}.", failure.page.label())
        }
        Outcome::Briefing(briefing) => spoken_text(&briefing.text),
    }
}

/// "Atlas, actif, phase cadrage".
fn spoken_projet(p: &Projet) -> String {
    let phase = p.phase.as_deref().map(|ph| format!(", phase {ph}")).unwrap_or_default();
    format!("{}, {}{phase}", p.nom, p.statut.label())
}

/// What `modifier_projet` changed, one phrase per field (shared by both reports so that
/// they never disagree on whether something changed).
fn project_changes(before: &Projet, after: &Projet) -> Vec<String> {
    let mut changes = Vec::new();
    if before.description != after.description {
        changes.push(format!("description « {} »", after.description.as_deref().unwrap_or("")));
    }
    if before.phase != after.phase {
        changes.push(format!(
            "phase {} → {}",
            before.phase.as_deref().unwrap_or("aucune"),
            after.phase.as_deref().unwrap_or("aucune")
        ));
    }
    if before.statut != after.statut {
        changes.push(format!("statut {} → {}", before.statut.label(), after.statut.label()));
    }
    changes
}

fn spoken_refusal(refusal: &Refusal, now: chrono::DateTime<chrono::Utc>, tz: Tz) -> String {
    use crate::fr::{spoken_date, spoken_datetime, spoken_time};
    let today = now.with_timezone(&tz).date_naive();
    match refusal {
        Refusal::InvalidArguments(e) => spoken_text(&describe_problem(e.field, &e.problem)).replace(['«', '»'], ""),
        Refusal::UnknownTool { .. } => "je ne sais pas faire cette action.".to_string(),
        Refusal::ToolNotAllowed { .. } => "cette action n'est pas permise ici.".to_string(),
        Refusal::ReminderUnknown { id } => format!("il n'y a pas de rappel {}.", sid(*id)),
        Refusal::ReminderAlreadyDone { rappel } => {
            format!("le rappel {}, {}, était déjà fait.", sid(rappel.id), rappel.texte)
        }
        Refusal::DueDateInPast { echeance } => {
            format!("l'échéance, {}, est déjà passée.", spoken_datetime(*echeance, now, tz))
        }
        Refusal::PreferenceUnknown { id } => format!("il n'y a pas de préférence {}.", sid(*id)),
        Refusal::PreferenceAlreadyInactive { preference } => {
            format!("la préférence {}, {}, était déjà désactivée.", sid(preference.id), preference.texte)
        }
        Refusal::PreferenceDuplicate { preference } => {
            format!("cette préférence existe déjà, {}, {}.", sid(preference.id), preference.texte)
        }
        Refusal::PreferenceCapReached { cap } => {
            format!("le plafond de {} préférences actives est atteint, désactives-en une d'abord.", n(i64::from(*cap)))
        }
        Refusal::FutureDate { debut, .. } => {
            format!(
                "{} n'est pas encore arrivé, il ne peut pas y avoir de temps de travail, aucune lecture n'a été faite.",
                spoken_date(debut.0, today)
            )
        }
        Refusal::InvertedRange { debut, fin } => format!(
            "la fin de la période, {}, est avant son début, {}.",
            spoken_date(fin.0, today),
            spoken_date(debut.0, today)
        ),
        Refusal::SessionAlreadyRunning { session } => {
            let state = if session.is_paused() { "en pause" } else { "en cours" };
            format!("il y a déjà une session {state} sur {} depuis {}.", session.projet, spoken_time(session.debut, tz))
        }
        Refusal::SessionAlreadyPaused { session } => format!("la session sur {} est déjà en pause.", session.projet),
        Refusal::SessionNotPaused { session } => format!("la session sur {} n'est pas en pause.", session.projet),
        Refusal::NoRunningSession => "aucune session n'est en cours.".to_string(),
        Refusal::ProjectUnknown { nom } if nom.is_empty() => "ce projet n'existe pas.".to_string(),
        Refusal::ProjectUnknown { nom } => format!("je ne connais pas de projet {nom}."),
        Refusal::ProjectDuplicate { projet } => format!("le projet {} existe déjà.", projet.nom),
        Refusal::NothingToChange => "aucune modification n'était demandée.".to_string(),
        Refusal::NoteUnknown { id } => format!("il n'y a pas de note {}.", sid(*id)),
        Refusal::TimerNameTaken { minuteur } => basics::spoken_refusal::timer_name_taken(minuteur, tz),
        Refusal::NoTimer { nom } => basics::spoken_refusal::no_timer(nom.as_deref()),
        Refusal::TimersAmbiguous { minuteurs } => basics::spoken_refusal::ambiguous(minuteurs),
        Refusal::TimerAlreadyPaused { minuteur } => {
            format!("le minuteur {} est déjà en pause.", basics::spoken_timer_label(minuteur))
        }
        Refusal::TimerNotPaused { minuteur } => {
            format!("le minuteur {} n'est pas en pause.", basics::spoken_timer_label(minuteur))
        }
        Refusal::TimerRinging { minuteur } => {
            format!("le minuteur {} sonne, dis c'est bon pour l'arrêter.", basics::spoken_timer_label(minuteur))
        }
        Refusal::TimerWouldEnd { minuteur, remaining } => basics::spoken_refusal::would_end(minuteur, *remaining),
        Refusal::ListUnknown { nom } => format!("je ne connais pas de liste {nom}."),
        Refusal::ListItemAlreadyThere { liste, element } => {
            format!("{element} est déjà sur {}.", basics::list_name(liste))
        }
        Refusal::ListItemNotThere { liste, element } => {
            format!("{element} n'est pas sur {}.", basics::list_name(liste))
        }
        Refusal::ListItemsAmbiguous { liste, elements } => basics::spoken_refusal::items_ambiguous(liste, elements),
        Refusal::SouvenirUnknown { id } => format!("il n'y a pas de souvenir {}.", sid(*id)),
        Refusal::ReminderNotRecurring { rappel } => repeats::spoken_refusal::not_recurring(rappel),
        Refusal::ReminderSeriesAlreadyStopped { rappel } => repeats::spoken_refusal::already_stopped(rappel),
        Refusal::ReminderSameTime { rappel } => repeats::spoken_refusal::same_time(rappel, now, tz),
        Refusal::AlarmSameTime { reveil } => repeats::spoken_refusal::alarm_same_time(reveil, now, tz),
        Refusal::NoAlarm { id } => repeats::spoken_refusal::no_alarm(*id),
        Refusal::AlarmsAmbiguous { reveils } => repeats::spoken_refusal::alarms_ambiguous(reveils, now, tz),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Text made fit for speech: no markdown marks, list dashes, or "n°"; numbers stay as the
/// composer wrote them.
pub fn spoken_text(text: &str) -> String {
    text.lines()
        .map(|l| l.trim().trim_start_matches(['-', '*', '#', '•']).trim())
        .filter(|l| !l.is_empty())
        .map(|l| l.replace("n°", "numéro ").replace(['*', '`', '_', '#'], ""))
        .collect::<Vec<_>>()
        .join(" ")
}
