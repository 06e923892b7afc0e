//! The reports of the everyday basics (timers, lists, deletions), written and spoken, each
//! fact of one said in the other: names, durations (exact to the second), times, counts.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::fr;
use crate::fr::{spoken_duration_exact, written_duration};
use crate::memory::{ElementListe, EtatMinuteur, Liste, Minuteur, Note, Rappel};

/// How many items of a list are said aloud before « et N autres ».
const SPOKEN_ITEMS_MAX: usize = 5;

/// « « pâtes » » or « n°3 (10 min) » for an unnamed timer.
pub fn timer_label(m: &Minuteur) -> String {
    match &m.nom {
        Some(n) => format!("« {n} »"),
        None => format!("n°{} ({})", m.id, written_duration(m.duree_secondes)),
    }
}

/// « pâtes » or « de dix minutes » (« d'une heure »), said.
pub fn spoken_timer_label(m: &Minuteur) -> String {
    match &m.nom {
        Some(n) => n.clone(),
        None => {
            let d = spoken_duration_exact(m.duree_secondes);
            if d.starts_with("une ") {
                format!("d'{d}")
            } else {
                format!("de {d}")
            }
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn spoken_count(n: usize, one: &str, many: &str, feminine: bool) -> String {
    match n {
        0 => format!("{} {one}", if feminine { "aucune" } else { "aucun" }),
        1 => format!("{} {one}", if feminine { "une" } else { "un" }),
        n => format!("{} {many}", fr::number(n as i64)),
    }
}

fn timer_state(m: &Minuteur, now: DateTime<Utc>, tz: Tz) -> String {
    match m.etat {
        // Its deadline passed with no bell running: told in the past, never « il sonnera ».
        EtatMinuteur::EnCours if m.overdue(now) => {
            format!("temps écoulé à {}", m.echeance.map(|e| fr::time(e, tz)).unwrap_or_default())
        }
        EtatMinuteur::EnCours => format!(
            "il reste {} (il sonnera à {})",
            written_duration(m.remaining(now)),
            m.echeance.map(|e| fr::time(e, tz)).unwrap_or_default()
        ),
        EtatMinuteur::EnPause => format!("en pause, il reste {}", written_duration(m.remaining(now))),
        EtatMinuteur::Sonne => "terminé, il sonne".to_string(),
        EtatMinuteur::Termine if m.unanswered() => "terminé, il a sonné sans réponse".to_string(),
        EtatMinuteur::Termine => "terminé".to_string(),
        EtatMinuteur::Annule => "annulé".to_string(),
    }
}

fn spoken_timer_state(m: &Minuteur, now: DateTime<Utc>, tz: Tz) -> String {
    match m.etat {
        EtatMinuteur::EnCours if m.overdue(now) => {
            format!("temps écoulé à {}", m.echeance.map(|e| fr::spoken_time(e, tz)).unwrap_or_default())
        }
        EtatMinuteur::EnCours => format!(
            "il reste {}, il sonnera à {}",
            spoken_duration_exact(m.remaining(now)),
            m.echeance.map(|e| fr::spoken_time(e, tz)).unwrap_or_default()
        ),
        EtatMinuteur::EnPause => format!("en pause, il reste {}", spoken_duration_exact(m.remaining(now))),
        EtatMinuteur::Sonne => "terminé, il sonne".to_string(),
        EtatMinuteur::Termine if m.unanswered() => "terminé, il a sonné sans réponse".to_string(),
        EtatMinuteur::Termine => "terminé".to_string(),
        EtatMinuteur::Annule => "annulé".to_string(),
    }
}

pub fn timer_started(m: &Minuteur, tz: Tz) -> String {
    let at = m.echeance.map(|e| fr::time(e, tz)).unwrap_or_default();
    match &m.nom {
        Some(n) => format!("Minuteur « {n} » lancé : {}, il sonnera à {at}.", written_duration(m.duree_secondes)),
        // The duration is its name: said once (« Minuteur de 10 min lancé (n°1) »).
        None => format!("Minuteur de {} lancé (n°{}), il sonnera à {at}.", written_duration(m.duree_secondes), m.id),
    }
}

pub fn spoken_timer_started(m: &Minuteur, tz: Tz) -> String {
    let at = m.echeance.map(|e| fr::spoken_time(e, tz)).unwrap_or_default();
    match &m.nom {
        Some(n) => {
            format!("Minuteur {n} lancé pour {}, il sonnera à {at}.", spoken_duration_exact(m.duree_secondes))
        }
        None => format!(
            "Minuteur de {} lancé, numéro {}, il sonnera à {at}.",
            spoken_duration_exact(m.duree_secondes),
            fr::number(m.id)
        ),
    }
}

pub fn timers(nom: Option<&str>, ms: &[Minuteur], now: DateTime<Utc>, tz: Tz) -> String {
    match (ms, nom) {
        ([], Some(n)) => format!("Aucun minuteur « {n} » en cours."),
        ([], None) => "Aucun minuteur en cours.".to_string(),
        ([m], _) => format!("Minuteur {} : {}.", timer_label(m), timer_state(m, now, tz)),
        (many, _) => {
            let mut out = format!("Minuteurs ({}) :", many.len());
            for m in many {
                out.push_str(&format!("\n- {} : {}", timer_label(m), timer_state(m, now, tz)));
            }
            out
        }
    }
}

pub fn spoken_timers(nom: Option<&str>, ms: &[Minuteur], now: DateTime<Utc>, tz: Tz) -> String {
    match (ms, nom) {
        ([], Some(n)) => format!("Il n'y a aucun minuteur {n} en cours."),
        ([], None) => "Il n'y a aucun minuteur en cours.".to_string(),
        ([m], _) => format!("Minuteur {} : {}.", spoken_timer_label(m), spoken_timer_state(m, now, tz)),
        (many, _) => format!(
            "{} minuteurs : {}.",
            capitalise(&fr::number(many.len() as i64)),
            many.iter()
                .map(|m| format!("{}, {}", spoken_timer_label(m), spoken_timer_state(m, now, tz)))
                .collect::<Vec<_>>()
                .join(" ; ")
        ),
    }
}

pub fn timer_changed(before: &Minuteur, after: &Minuteur, now: DateTime<Utc>, tz: Tz) -> String {
    let label = timer_label(after);
    match (before.etat, after.etat) {
        (EtatMinuteur::EnCours, EtatMinuteur::EnPause) => {
            format!("Minuteur {label} mis en pause : il reste {}.", written_duration(after.remaining(now)))
        }
        (EtatMinuteur::EnPause, EtatMinuteur::EnCours) => format!(
            "Minuteur {label} relancé : il reste {}, il sonnera à {}.",
            written_duration(after.remaining(now)),
            after.echeance.map(|e| fr::time(e, tz)).unwrap_or_default()
        ),
        _ => {
            let delta = after.remaining(now) - before.remaining(now);
            let what = if delta >= 0 { "ajoutées" } else { "retirées" };
            format!("Minuteur {label} : {} {what}, {}.", written_duration(delta), timer_state(after, now, tz))
        }
    }
}

pub fn spoken_timer_changed(before: &Minuteur, after: &Minuteur, now: DateTime<Utc>, tz: Tz) -> String {
    let label = spoken_timer_label(after);
    match (before.etat, after.etat) {
        (EtatMinuteur::EnCours, EtatMinuteur::EnPause) => {
            format!("Minuteur {label} mis en pause, il reste {}.", spoken_duration_exact(after.remaining(now)))
        }
        (EtatMinuteur::EnPause, EtatMinuteur::EnCours) => format!(
            "Minuteur {label} relancé, il reste {}, il sonnera à {}.",
            spoken_duration_exact(after.remaining(now)),
            after.echeance.map(|e| fr::spoken_time(e, tz)).unwrap_or_default()
        ),
        _ => {
            let delta = after.remaining(now) - before.remaining(now);
            let what = if delta >= 0 { "ajoutées" } else { "retirées" };
            format!(
                "Minuteur {label} : {} {what}, {}.",
                spoken_duration_exact(delta),
                spoken_timer_state(after, now, tz)
            )
        }
    }
}

pub fn timers_cancelled(ms: &[Minuteur]) -> String {
    match ms {
        [] => "Aucun minuteur n'était en cours : rien n'a été annulé.".to_string(),
        [m] => format!("Minuteur {} annulé.", timer_label(m)),
        many => format!(
            "{} annulés : {}.",
            count(many.len(), "minuteur", "minuteurs"),
            many.iter().map(timer_label).collect::<Vec<_>>().join(", ")
        ),
    }
}

pub fn spoken_timers_cancelled(ms: &[Minuteur]) -> String {
    match ms {
        [] => "Aucun minuteur n'était en cours, rien n'a été annulé.".to_string(),
        [m] => format!("Minuteur {} annulé.", spoken_timer_label(m)),
        many => format!(
            "{} minuteurs annulés : {}.",
            fr::number(many.len() as i64),
            many.iter().map(spoken_timer_label).collect::<Vec<_>>().join(", ")
        ),
    }
}

pub fn item_added(liste: &Liste, element: &ElementListe, new_list: bool) -> String {
    let size = count(liste.elements.len(), "élément", "éléments");
    if new_list {
        format!("Nouvelle liste « {} » créée ; « {} » ajouté ({size}).", liste.nom, element.texte)
    } else {
        format!("« {} » ajouté à {} ({size}).", element.texte, list_name(&liste.nom))
    }
}

pub fn spoken_item_added(liste: &Liste, element: &ElementListe, new_list: bool) -> String {
    let size = spoken_count(liste.elements.len(), "élément", "éléments", false);
    if new_list {
        format!("Nouvelle liste {} créée, avec {} : {size}.", liste.nom, element.texte)
    } else {
        format!("{} ajouté à {}, qui compte {size}.", capitalise(&element.texte), list_name(&liste.nom))
    }
}

pub fn item_removed(liste: &Liste, element: &ElementListe) -> String {
    format!(
        "« {} » retiré de {} ({} restant{}).",
        element.texte,
        list_name(&liste.nom),
        liste.elements.len(),
        if liste.elements.len() > 1 { "s" } else { "" }
    )
}

pub fn spoken_item_removed(liste: &Liste, element: &ElementListe) -> String {
    format!(
        "{} retiré de {}, il reste {}.",
        capitalise(&element.texte),
        list_name(&liste.nom),
        spoken_count(liste.elements.len(), "élément", "éléments", false)
    )
}

pub fn list(liste: &Liste) -> String {
    if liste.elements.is_empty() {
        return format!("{} est vide.", capitalise(&list_name(&liste.nom)));
    }
    let mut out = format!("Liste {} ({}) :", liste.nom, liste.elements.len());
    for e in &liste.elements {
        out.push_str(&format!("\n- {}", e.texte));
    }
    out
}

pub fn spoken_list(liste: &Liste) -> String {
    if liste.elements.is_empty() {
        return format!("{} est vide.", capitalise(&list_name(&liste.nom)));
    }
    let mut items: Vec<String> = liste.elements.iter().take(SPOKEN_ITEMS_MAX).map(|e| e.texte.clone()).collect();
    if liste.elements.len() > SPOKEN_ITEMS_MAX {
        items.push(format!("et {} autres", fr::number((liste.elements.len() - SPOKEN_ITEMS_MAX) as i64)));
    }
    format!(
        "{} sur {} : {}.",
        capitalise(&spoken_count(liste.elements.len(), "élément", "éléments", false)),
        list_name(&liste.nom),
        items.join(" ; ")
    )
}

pub fn list_cleared(liste: &Liste) -> String {
    if liste.elements.is_empty() {
        return format!("{} était déjà vide : rien n'a été retiré.", capitalise(&list_name(&liste.nom)));
    }
    format!(
        "Liste {} vidée : {} retiré{} ({}).",
        liste.nom,
        count(liste.elements.len(), "élément", "éléments"),
        if liste.elements.len() > 1 { "s" } else { "" },
        liste.elements.iter().map(|e| e.texte.as_str()).collect::<Vec<_>>().join(", ")
    )
}

pub fn spoken_list_cleared(liste: &Liste) -> String {
    if liste.elements.is_empty() {
        return format!("{} était déjà vide, rien n'a été retiré.", capitalise(&list_name(&liste.nom)));
    }
    format!(
        "{} est vidée : {} retiré{}.",
        capitalise(&list_name(&liste.nom)),
        spoken_count(liste.elements.len(), "élément", "éléments", false),
        if liste.elements.len() > 1 { "s" } else { "" }
    )
}

pub fn note_deleted(note: &Note) -> String {
    format!("Note n°{} supprimée : « {} ».", note.id, note.texte)
}

pub fn spoken_note_deleted(note: &Note) -> String {
    format!("Note numéro {} supprimée : {}.", fr::number(note.id), note.texte)
}

pub fn reminder_deleted(r: &Rappel, tz: Tz) -> String {
    format!("Rappel n°{} supprimé : « {} », prévu le {}.", r.id, r.texte, fr::datetime(r.echeance, tz))
}

pub fn spoken_reminder_deleted(r: &Rappel, now: DateTime<Utc>, tz: Tz) -> String {
    format!(
        "Rappel numéro {} supprimé : {}, prévu {}.",
        fr::number(r.id),
        r.texte,
        fr::spoken_datetime(r.echeance, now, tz)
    )
}

/// « la liste de courses », « la liste d'anniversaire »: a list named as French says it.
pub fn list_name(nom: &str) -> String {
    let first = arthur_french::fold::fold(nom).chars().next().unwrap_or('x');
    if "aeiouyh".contains(first) {
        format!("la liste d'{nom}")
    } else {
        format!("la liste de {nom}")
    }
}

fn names(ms: &[Minuteur]) -> String {
    ms.iter().map(timer_label).collect::<Vec<_>>().join(", ")
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The refusals of the basics, in one sentence (written).
pub mod refusal {
    use super::*;

    pub fn timer_name_taken(m: &Minuteur, tz: Tz) -> String {
        format!(
            "un minuteur {} est déjà en cours (il sonnera à {}).",
            timer_label(m),
            m.echeance.map(|e| fr::time(e, tz)).unwrap_or_else(|| "—".into())
        )
    }
    pub fn no_timer(nom: Option<&str>) -> String {
        match nom {
            Some(n) => format!("aucun minuteur « {n} » en cours."),
            None => "aucun minuteur en cours.".to_string(),
        }
    }
    pub fn ambiguous(ms: &[Minuteur]) -> String {
        format!("plusieurs minuteurs sont en cours ({}) : dis lequel.", names(ms))
    }
    pub fn would_end(m: &Minuteur, remaining: i64) -> String {
        format!(
            "il ne reste que {} sur le minuteur {} : impossible d'en retirer autant.",
            written_duration(remaining),
            timer_label(m)
        )
    }
    pub fn items_ambiguous(liste: &str, elements: &[String]) -> String {
        format!(
            "plusieurs éléments de {} correspondent ({}) : dis lequel.",
            list_name(liste),
            elements.iter().map(|e| format!("« {e} »")).collect::<Vec<_>>().join(", ")
        )
    }
}

/// The same, said.
pub mod spoken_refusal {
    use super::*;

    pub fn timer_name_taken(m: &Minuteur, tz: Tz) -> String {
        format!(
            "un minuteur {} est déjà en cours, il sonnera à {}.",
            spoken_timer_label(m),
            m.echeance.map(|e| fr::spoken_time(e, tz)).unwrap_or_default()
        )
    }
    pub fn no_timer(nom: Option<&str>) -> String {
        match nom {
            Some(n) => format!("il n'y a aucun minuteur {n} en cours."),
            None => "il n'y a aucun minuteur en cours.".to_string(),
        }
    }
    pub fn ambiguous(ms: &[Minuteur]) -> String {
        format!(
            "plusieurs minuteurs sont en cours, {}, dis lequel.",
            ms.iter().map(spoken_timer_label).collect::<Vec<_>>().join(", ")
        )
    }
    pub fn would_end(m: &Minuteur, remaining: i64) -> String {
        format!(
            "il ne reste que {} sur le minuteur {}, impossible d'en retirer autant.",
            spoken_duration_exact(remaining),
            spoken_timer_label(m)
        )
    }
    pub fn items_ambiguous(liste: &str, elements: &[String]) -> String {
        format!("plusieurs éléments de {} correspondent, {}, dis lequel.", list_name(liste), elements.join(", "))
    }
}
