//! The reports of the second round of everyday basics — repeated reminders, moved ones,
//! alarms, the souvenirs read back — written and spoken, each fact of one said in the other:
//! numbers, texts, the rule, the old time and the new one, counts.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::fr;
use crate::fr::{spoken_duration_exact, written_duration};
use crate::memory::{EtatMinuteur, Genre, Minuteur, Rappel, Souvenir};
use crate::tools::Portee;

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn rule(r: &Rappel) -> String {
    r.repetition.as_ref().map(|p| p.label()).unwrap_or_default()
}

fn spoken_rule(r: &Rappel) -> String {
    r.repetition.as_ref().map(|p| p.spoken_label()).unwrap_or_default()
}

pub fn recurring_created(r: &Rappel, tz: Tz) -> String {
    format!(
        "Rappel répété n°{} enregistré : « {} », {} ; le premier le {}.",
        r.id,
        r.texte,
        rule(r),
        fr::datetime(r.echeance, tz)
    )
}

pub fn spoken_recurring_created(r: &Rappel, now: DateTime<Utc>, tz: Tz) -> String {
    format!(
        "Rappel répété numéro {} enregistré : {}, {}. Le premier : {}.",
        fr::number(r.id),
        r.texte,
        spoken_rule(r),
        fr::spoken_datetime(r.echeance, now, tz)
    )
}

pub fn occurrence_done(before: &Rappel, after: &Rappel, tz: Tz) -> String {
    format!(
        "Rappel n°{} « {} » fait pour le {} ; le prochain : le {} ({}).",
        after.id,
        after.texte,
        fr::datetime(before.echeance, tz),
        fr::datetime(after.echeance, tz),
        rule(after)
    )
}

pub fn spoken_occurrence_done(before: &Rappel, after: &Rappel, now: DateTime<Utc>, tz: Tz) -> String {
    format!(
        "Rappel numéro {} fait pour {} : {}. Le prochain : {}, {}.",
        fr::number(after.id),
        fr::spoken_datetime(before.echeance, now, tz),
        after.texte,
        fr::spoken_datetime(after.echeance, now, tz),
        spoken_rule(after)
    )
}

/// The old time and the new one (the tool refuses a new time already past).
pub fn moved(before: &Rappel, after: &Rappel, tz: Tz) -> String {
    let series = if after.is_recurring() {
        format!(" Cette fois seulement : la série reste {}.", rule(after))
    } else {
        String::new()
    };
    format!(
        "Rappel n°{} « {} » déplacé : il était prévu le {}, il l'est maintenant le {}.{series}",
        after.id,
        after.texte,
        fr::datetime(before.echeance, tz),
        fr::datetime(after.echeance, tz)
    )
}

pub fn spoken_moved(before: &Rappel, after: &Rappel, now: DateTime<Utc>, tz: Tz) -> String {
    let series = if after.is_recurring() {
        format!(" Cette fois seulement, la série reste {}.", spoken_rule(after))
    } else {
        String::new()
    };
    format!(
        "Rappel numéro {} déplacé : {}. Il était prévu {}, il l'est maintenant {}.{series}",
        fr::number(after.id),
        after.texte,
        fr::spoken_datetime(before.echeance, now, tz),
        fr::spoken_datetime(after.echeance, now, tz)
    )
}

pub fn series_stopped(r: &Rappel, tz: Tz) -> String {
    format!(
        "Rappel répété n°{} « {} » arrêté ({}) : il ne reviendra plus, même pas le {}.",
        r.id,
        r.texte,
        rule(r),
        fr::datetime(r.echeance, tz)
    )
}

pub fn spoken_series_stopped(r: &Rappel, now: DateTime<Utc>, tz: Tz) -> String {
    format!(
        "Rappel répété numéro {} arrêté : {}, {}. Il ne reviendra plus, même pas {}.",
        fr::number(r.id),
        r.texte,
        spoken_rule(r),
        fr::spoken_datetime(r.echeance, now, tz)
    )
}

/// « n°4 (mardi 1er décembre 2026 à 7 h 00) » or « « sport » (n°4, …) ».
pub fn alarm_label(m: &Minuteur, tz: Tz) -> String {
    match &m.nom {
        Some(n) => format!("« {n} » (n°{}, {})", m.id, fr::datetime(m.alarm_time(), tz)),
        None => format!("n°{} ({})", m.id, fr::datetime(m.alarm_time(), tz)),
    }
}

fn spoken_alarm_label(m: &Minuteur, now: DateTime<Utc>, tz: Tz) -> String {
    match &m.nom {
        Some(n) => format!("{n}, numéro {}, {}", fr::number(m.id), fr::spoken_datetime(m.alarm_time(), now, tz)),
        None => format!("numéro {}, {}", fr::number(m.id), fr::spoken_datetime(m.alarm_time(), now, tz)),
    }
}

fn alarm_state(m: &Minuteur, now: DateTime<Utc>, tz: Tz) -> &'static str {
    let _ = tz;
    match m.etat {
        EtatMinuteur::Sonne => " : il sonne",
        _ if m.overdue(now) => " : son heure est passée",
        _ if m.echeance.is_some_and(|e| e != m.alarm_time()) => " : repoussé",
        _ => "",
    }
}

pub fn alarm_set(m: &Minuteur, tz: Tz) -> String {
    match &m.nom {
        Some(n) => format!("Réveil « {n} » (n°{}) réglé pour le {}.", m.id, fr::datetime(m.alarm_time(), tz)),
        None => format!("Réveil n°{} réglé pour le {}.", m.id, fr::datetime(m.alarm_time(), tz)),
    }
}

pub fn spoken_alarm_set(m: &Minuteur, now: DateTime<Utc>, tz: Tz) -> String {
    match &m.nom {
        Some(n) => format!(
            "Réveil {n}, numéro {}, réglé pour {}.",
            fr::number(m.id),
            fr::spoken_datetime(m.alarm_time(), now, tz)
        ),
        None => {
            format!("Réveil numéro {} réglé pour {}.", fr::number(m.id), fr::spoken_datetime(m.alarm_time(), now, tz))
        }
    }
}

pub fn alarms(ms: &[Minuteur], now: DateTime<Utc>, tz: Tz) -> String {
    if ms.is_empty() {
        return "Aucun réveil réglé.".to_string();
    }
    let mut out = format!("Réveils ({}) :", ms.len());
    for m in ms {
        out.push_str(&format!("\n- {}{}", alarm_label(m, tz), alarm_state(m, now, tz)));
    }
    out
}

pub fn spoken_alarms(ms: &[Minuteur], now: DateTime<Utc>, tz: Tz) -> String {
    match ms.len() {
        0 => "Aucun réveil réglé.".to_string(),
        n => format!(
            "{} : {}.",
            if n == 1 { "Un réveil".to_string() } else { format!("{} réveils", capitalise(&fr::number(n as i64))) },
            ms.iter()
                .map(|m| format!("{}{}", spoken_alarm_label(m, now, tz), alarm_state(m, now, tz).replace(" :", ",")))
                .collect::<Vec<_>>()
                .join(" ; ")
        ),
    }
}

pub fn alarms_cancelled(ms: &[Minuteur], tz: Tz) -> String {
    match ms {
        [] => "Aucun réveil n'était réglé : rien n'a été annulé.".to_string(),
        [m] => format!("Réveil {} annulé.", alarm_label(m, tz)),
        many => format!(
            "{} réveils annulés : {}.",
            many.len(),
            many.iter().map(|m| alarm_label(m, tz)).collect::<Vec<_>>().join(", ")
        ),
    }
}

pub fn spoken_alarms_cancelled(ms: &[Minuteur], now: DateTime<Utc>, tz: Tz) -> String {
    match ms {
        [] => "Aucun réveil n'était réglé, rien n'a été annulé.".to_string(),
        [m] => format!("Réveil {} annulé.", spoken_alarm_label(m, now, tz)),
        many => format!(
            "{} réveils annulés : {}.",
            capitalise(&fr::number(many.len() as i64)),
            many.iter().map(|m| spoken_alarm_label(m, now, tz)).collect::<Vec<_>>().join(" ; ")
        ),
    }
}

/// « contenant « café » », « , les 3 derniers sur 12 »: what a read was limited to.
pub fn scope(p: &Portee, plural_last: &str) -> String {
    let mut out = String::new();
    if let Some(n) = p.numero {
        out.push_str(&format!(" n°{n}"));
    }
    if let Some(w) = &p.contient {
        out.push_str(&format!(" contenant « {w} »"));
    }
    if let Some(n) = p.derniers {
        out.push_str(&format!(", {plural_last} {n} sur {}", p.total));
    }
    out
}

pub fn spoken_scope(p: &Portee, plural_last: &str) -> String {
    let mut out = String::new();
    if let Some(n) = p.numero {
        out.push_str(&format!(" numéro {}", fr::number(n)));
    }
    if let Some(w) = &p.contient {
        out.push_str(&format!(" contenant {w}"));
    }
    if let Some(n) = p.derniers {
        out.push_str(&format!(", {plural_last} {} sur {}", fr::number(i64::from(n)), fr::number(p.total as i64)));
    }
    out
}

pub fn souvenirs(p: &Portee, ss: &[Souvenir]) -> String {
    let scope = scope(p, "les derniers :");
    if ss.is_empty() {
        return format!("Aucun souvenir{scope}.");
    }
    let mut out = format!("Souvenirs{scope} ({}) :", ss.len());
    for s in ss {
        out.push_str(&format!("\n- n°{} « {} »", s.id, s.texte));
    }
    out
}

pub fn spoken_souvenirs(p: &Portee, ss: &[Souvenir]) -> String {
    let scope = spoken_scope(p, "les derniers :");
    if ss.is_empty() {
        return format!("Tu n'as aucun souvenir{scope}.");
    }
    let count = if ss.len() == 1 {
        "Un souvenir".to_string()
    } else {
        format!("{} souvenirs", capitalise(&fr::number(ss.len() as i64)))
    };
    let mut items: Vec<String> =
        ss.iter().take(5).map(|s| format!("numéro {}, {}", fr::number(s.id), s.texte)).collect();
    if ss.len() > 5 {
        items.push(format!("et {} autres", fr::number((ss.len() - 5) as i64)));
    }
    format!("{count}{scope} : {}.", items.join(" ; "))
}

/// What rings, said and written when it stops or is snoozed: « Minuteur « pâtes » »,
/// « Minuteur de 10 min », « Réveil de 7 h 00 ».
pub fn ringing_label(m: &Minuteur, tz: Tz) -> String {
    match (m.genre, &m.nom) {
        (Genre::Reveil, Some(n)) => format!("Réveil « {n} »"),
        (Genre::Reveil, None) => format!("Réveil de {}", fr::time(m.alarm_time(), tz)),
        (Genre::Minuteur, Some(n)) => format!("Minuteur « {n} »"),
        (Genre::Minuteur, None) => format!("Minuteur de {}", written_duration(m.duree_secondes)),
    }
}

pub fn spoken_ringing_label(m: &Minuteur, tz: Tz) -> String {
    match (m.genre, &m.nom) {
        (Genre::Reveil, Some(n)) => format!("Réveil {n}"),
        (Genre::Reveil, None) => format!("Réveil de {}", fr::spoken_time(m.alarm_time(), tz)),
        (Genre::Minuteur, _) => format!("Minuteur {}", crate::report::spoken_timer_label(m)),
    }
}

/// « c'est bon »: what stopped ringing (written, spoken).
pub fn acknowledged(done: &[Minuteur], tz: Tz) -> (String, String) {
    let w: Vec<String> = done.iter().map(|m| ringing_label(m, tz)).collect();
    let s: Vec<String> = done.iter().map(|m| spoken_ringing_label(m, tz)).collect();
    if done.len() == 1 {
        (format!("{} arrêté.", w[0]), format!("{} arrêté.", s[0]))
    } else {
        (format!("Arrêtés : {}.", w.join(", ")), format!("Arrêtés : {}.", s.join(", ")))
    }
}

/// « encore cinq minutes »: what rings again, and when (written, spoken).
pub fn snoozed(done: &[Minuteur], secs: i64, tz: Tz) -> (String, String) {
    let at = done.first().and_then(|m| m.echeance);
    let w: Vec<String> = done.iter().map(|m| ringing_label(m, tz)).collect();
    let s: Vec<String> = done.iter().map(|m| spoken_ringing_label(m, tz)).collect();
    let when_w = at.map(|a| fr::time(a, tz)).unwrap_or_default();
    let when_s = at.map(|a| fr::spoken_time(a, tz)).unwrap_or_default();
    (
        format!("{} : je sonne de nouveau dans {}, à {when_w}.", w.join(", "), written_duration(secs)),
        format!("{} : je sonne de nouveau dans {}, à {when_s}.", s.join(", "), spoken_duration_exact(secs)),
    )
}

/// The refusals of this round, in one sentence (written).
pub mod refusal {
    use super::*;

    pub fn not_recurring(r: &Rappel) -> String {
        format!(
            "le rappel n°{} « {} » ne se répète pas : pour l'enlever, dis « le rappel {} est fait » ou « supprime le rappel {} ».",
            r.id, r.texte, r.id, r.id
        )
    }
    pub fn already_stopped(r: &Rappel) -> String {
        format!("le rappel répété n°{} « {} » était déjà arrêté.", r.id, r.texte)
    }
    pub fn same_time(r: &Rappel, tz: Tz) -> String {
        format!("le rappel n°{} « {} » est déjà prévu le {}.", r.id, r.texte, fr::datetime(r.echeance, tz))
    }
    pub fn alarm_same_time(m: &Minuteur, tz: Tz) -> String {
        format!("le réveil {} est déjà réglé à cette heure-là.", alarm_label(m, tz))
    }
    pub fn no_alarm(id: Option<i64>) -> String {
        match id {
            Some(id) => format!("aucun réveil n°{id} n'est réglé."),
            None => "aucun réveil n'est réglé.".to_string(),
        }
    }
    pub fn alarms_ambiguous(ms: &[Minuteur], tz: Tz) -> String {
        format!(
            "plusieurs réveils sont réglés ({}) : dis lequel par son numéro.",
            ms.iter().map(|m| alarm_label(m, tz)).collect::<Vec<_>>().join(", ")
        )
    }
}

/// The same, said.
pub mod spoken_refusal {
    use super::*;

    pub fn not_recurring(r: &Rappel) -> String {
        let n = fr::number(r.id);
        format!(
            "le rappel numéro {n}, {}, ne se répète pas. Pour l'enlever, dis : le rappel {n} est fait, ou : supprime le rappel {n}.",
            r.texte
        )
    }
    pub fn already_stopped(r: &Rappel) -> String {
        format!("le rappel répété numéro {}, {}, était déjà arrêté.", fr::number(r.id), r.texte)
    }
    pub fn same_time(r: &Rappel, now: DateTime<Utc>, tz: Tz) -> String {
        format!(
            "le rappel numéro {}, {}, est déjà prévu {}.",
            fr::number(r.id),
            r.texte,
            fr::spoken_datetime(r.echeance, now, tz)
        )
    }
    pub fn alarm_same_time(m: &Minuteur, now: DateTime<Utc>, tz: Tz) -> String {
        format!("le réveil {} est déjà réglé à cette heure-là.", spoken_alarm_label(m, now, tz))
    }
    pub fn no_alarm(id: Option<i64>) -> String {
        match id {
            Some(id) => format!("aucun réveil numéro {} n'est réglé.", fr::number(id)),
            None => "aucun réveil n'est réglé.".to_string(),
        }
    }
    pub fn alarms_ambiguous(ms: &[Minuteur], now: DateTime<Utc>, tz: Tz) -> String {
        format!(
            "plusieurs réveils sont réglés, {}, dis lequel par son numéro.",
            ms.iter().map(|m| spoken_alarm_label(m, now, tz)).collect::<Vec<_>>().join(" ; ")
        )
    }
}
