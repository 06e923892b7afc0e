//! How often, as people say it: « tous les jours », « du lundi au vendredi », « tous les
//! lundis à 19 h », « un lundi sur deux », « toutes les deux semaines », « le 5 de chaque
//! mois », « tous les mois le 5 à 10 h ». A whole span of folded words is read as a rule, or
//! not at all; a rule said loosely (« le lundi ») is read but marked unsure, so the command
//! built on it asks first.

use crate::moment::time_of_day;
use crate::number::natural;

/// The rhythm of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freq {
    Daily,
    /// Monday to Friday.
    Weekdays,
    Weekly,
    Monthly,
}

/// A rule read from the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recurrence {
    pub freq: Freq,
    /// Every how many days, weeks or months.
    pub interval: u32,
    /// Monday is 0 (weekly rules).
    pub weekday: Option<u32>,
    /// The day of the month (monthly rules).
    pub monthday: Option<u32>,
    /// The hour said, if one was.
    pub time: Option<(u32, u32)>,
    /// An hour implied by a part of the day (« tous les soirs »: 19 h), to be confirmed.
    pub default_hour: Option<u32>,
    /// Said plainly; `false` for a loose form (« le lundi »), which is asked first.
    pub sure: bool,
}

const WEEKDAYS: [&str; 7] = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"];

/// « lundi » or « lundis ».
fn weekday(w: &str) -> Option<u32> {
    let w = w.strip_suffix('s').unwrap_or(w);
    WEEKDAYS.iter().position(|d| *d == w).map(|p| p as u32)
}

/// A day of the month, 1–31 (« 5 », « cinq », « premier », « 1er »).
fn monthday(words: &[&str]) -> Option<u32> {
    natural(words).filter(|n| (1..=31).contains(n)).map(|n| n as u32)
}

/// A count of 2–12 (« deux », « 3 »), and « quinze jours » is two weeks.
fn count(words: &[&str]) -> Option<u32> {
    natural(words).filter(|n| (1..=99).contains(n)).map(|n| n as u32)
}

/// A part of the day after the rhythm (« tous les lundis soir »): its usual hour.
fn period(words: &[&str]) -> Option<u32> {
    match words {
        ["matin" | "matins"] | ["le", "matin"] | ["au", "matin"] => Some(9),
        ["midi" | "midis"] | ["a", "midi"] => Some(12),
        ["apres", "midi"] | ["apres", "midis"] | ["l'", "apres", "midi"] => Some(15),
        ["soir" | "soirs"] | ["le", "soir"] | ["au", "soir"] => Some(19),
        _ => None,
    }
}

fn rule(freq: Freq, interval: u32) -> Recurrence {
    Recurrence { freq, interval, weekday: None, monthday: None, time: None, default_hour: None, sure: true }
}

/// The rhythm alone, over the whole span.
fn rhythm(w: &[&str]) -> Option<Recurrence> {
    // A part of the day at the end: « tous les lundis soir », « chaque matin ».
    for cut in (1..w.len()).rev() {
        if let Some(h) = period(&w[cut..]) {
            if let Some(mut r) = rhythm_bare(&w[..cut]) {
                r.default_hour = Some(h);
                return Some(r);
            }
        }
    }
    if let [every @ ("tous" | "chaque"), rest @ ..] = w {
        let rest = if *every == "tous" { rest.strip_prefix(&["les"]).unwrap_or(rest) } else { rest };
        if let Some(h) = period(rest) {
            let mut r = rule(Freq::Daily, 1);
            r.default_hour = Some(h);
            return Some(r);
        }
    }
    rhythm_bare(w)
}

fn rhythm_bare(w: &[&str]) -> Option<Recurrence> {
    let weekly_on = |d: u32, interval: u32| Recurrence { weekday: Some(d), ..rule(Freq::Weekly, interval) };
    let monthly_on = |d: u32, interval: u32| Recurrence { monthday: Some(d), ..rule(Freq::Monthly, interval) };
    match w {
        ["tous", "les", "jours"]
        | ["chaque", "jour"]
        | ["quotidiennement"]
        | ["tous", "les", "jours", "sans", "exception"] => Some(rule(Freq::Daily, 1)),
        ["en", "semaine"]
        | ["du", "lundi", "au", "vendredi"]
        | ["tous", "les", "jours", "de", "la", "semaine"]
        | ["les", "jours", "de", "semaine"]
        | ["chaque", "jour", "de", "la", "semaine"]
        | ["les", "jours", "ouvres" | "ouvrables"]
        | ["tous", "les", "jours", "ouvres" | "ouvrables"]
        | ["chaque", "jour", "ouvre" | "ouvrable"]
        | ["les", "jours", "de", "travail"]
        | ["tous", "les", "jours", "du", "lundi", "au", "vendredi"] => Some(rule(Freq::Weekdays, 1)),
        ["toutes", "les", "semaines"]
        | ["chaque", "semaine"]
        | ["une", "fois", "par", "semaine"]
        | ["hebdomadairement"] => Some(rule(Freq::Weekly, 1)),
        ["une", "semaine", "sur", "deux"]
        | ["tous", "les", "quinze", "jours"]
        | ["toutes", "les", "deux", "semaines"] => Some(rule(Freq::Weekly, 2)),
        ["tous", "les", "mois"] | ["chaque", "mois"] | ["une", "fois", "par", "mois"] | ["mensuellement"] => {
            Some(rule(Freq::Monthly, 1))
        }
        ["un", "jour", "sur", n @ ..] => count(n).filter(|n| *n >= 2).map(|n| rule(Freq::Daily, n)),
        // « tous les lundis », « chaque lundi »
        ["tous", "les", d] | ["chaque", d] if weekday(d).is_some() => weekday(d).map(|d| weekly_on(d, 1)),
        // « le lundi », « les lundis »: habitual, but loose.
        ["le" | "les", d] if weekday(d).is_some() && d.ends_with('s') == (w[0] == "les") => {
            weekday(d).map(|d| Recurrence { sure: false, ..weekly_on(d, 1) })
        }
        // « un lundi sur deux »
        ["un", d, "sur", n @ ..] if weekday(d).is_some() => {
            let n = count(n).filter(|n| *n >= 2)?;
            weekday(d).map(|d| weekly_on(d, n))
        }
        // « tous les 5 du mois », « le 5 de chaque mois », « chaque 5 du mois »
        ["tous", "les" | "le", n @ .., "du", "mois"]
        | ["chaque", n @ .., "du", "mois"]
        | ["le", n @ .., "du", "mois"] => monthday(n).map(|d| monthly_on(d, 1)),
        ["le", n @ .., "de", "chaque", "mois"] | ["le", n @ .., "de", "tous", "les", "mois"] => {
            monthday(n).map(|d| monthly_on(d, 1))
        }
        // « tous les mois le 5 », « chaque mois le premier »
        ["tous", "les", "mois", "le", n @ ..] | ["chaque", "mois", "le", n @ ..] => {
            monthday(n).map(|d| monthly_on(d, 1))
        }
        // « tous les trois jours / deux semaines / six mois », « tous les deux lundis »,
        // « toutes les deux semaines le lundi »
        ["tous" | "toutes", "les", rest @ ..] => every_n(rest),
        _ => None,
    }
}

/// « N jours », « N semaines [le lundi] », « N mois [le 5] », « N lundis ».
fn every_n(w: &[&str]) -> Option<Recurrence> {
    for k in 1..w.len().min(4) {
        let Some(n) = count(&w[..k]) else { continue };
        if n < 2 {
            continue;
        }
        let rest = &w[k..];
        return match rest {
            ["jours"] if n == 15 => Some(rule(Freq::Weekly, 2)),
            ["jours"] => Some(rule(Freq::Daily, n)),
            ["semaines"] => Some(rule(Freq::Weekly, n)),
            ["semaines", "le", d] if weekday(d).is_some() => {
                weekday(d).map(|d| Recurrence { weekday: Some(d), ..rule(Freq::Weekly, n) })
            }
            [d] if weekday(d).is_some() => weekday(d).map(|d| Recurrence { weekday: Some(d), ..rule(Freq::Weekly, n) }),
            ["mois"] => Some(rule(Freq::Monthly, n)),
            ["mois", "le", m @ ..] => monthday(m).map(|d| Recurrence { monthday: Some(d), ..rule(Freq::Monthly, n) }),
            _ => None,
        };
    }
    None
}

/// A whole span read as a rule, with an hour before or after it (« tous les lundis à 19
/// h », « à 7 h du lundi au vendredi »).
pub fn recurrence(w: &[&str]) -> Option<Recurrence> {
    if w.is_empty() || w.len() > 14 {
        return None;
    }
    if let Some(r) = rhythm(w) {
        return Some(r);
    }
    for k in (1..w.len()).rev() {
        if let (Some(mut r), Some(t)) = (rhythm(&w[..k]), time_of_day(&w[k..])) {
            r.time = Some(t);
            return Some(r);
        }
    }
    for k in 1..w.len() {
        if let (Some(t), Some(mut r)) = (time_of_day(&w[..k]), rhythm(&w[k..])) {
            r.time = Some(t);
            return Some(r);
        }
    }
    None
}

/// Does the text hold a rhythm somewhere inside (« tous les lundis de sortir… »)? A
/// one-off reminder whose text does is a repeat that was not read whole: asked, not written.
pub fn mentions(words: &[&str]) -> bool {
    (0..words.len()).any(|a| {
        matches!(words[a], "tous" | "toutes" | "chaque" | "un" | "une" | "en" | "du")
            && (a + 2..=(a + 6).min(words.len())).any(|b| rhythm(&words[a..b]).is_some_and(|r| r.sure))
    }) || words.iter().any(|w| matches!(*w, "quotidiennement" | "hebdomadairement" | "mensuellement"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::Words;

    fn r(s: &str) -> Option<Recurrence> {
        let w = Words::split_only(s);
        recurrence(&w.folded())
    }

    #[test]
    fn rules_as_people_say_them() {
        let monday = r("tous les lundis").unwrap();
        assert_eq!(
            (monday.freq, monday.weekday, monday.interval, monday.time, monday.sure),
            (Freq::Weekly, Some(0), 1, None, true)
        );
        assert_eq!(r("tous les lundis à 19 h").unwrap().time, Some((19, 0)));
        assert_eq!(r("à 7 h 30 du lundi au vendredi").unwrap().freq, Freq::Weekdays);
        assert_eq!(r("tous les jours à 8 h").unwrap().freq, Freq::Daily);
        let m = r("le 5 de chaque mois").unwrap();
        assert_eq!((m.freq, m.monthday), (Freq::Monthly, Some(5)));
        assert_eq!(r("tous les mois le 5 à 10 h").unwrap().time, Some((10, 0)));
        let two = r("toutes les deux semaines").unwrap();
        assert_eq!((two.freq, two.interval), (Freq::Weekly, 2));
        assert_eq!(r("un lundi sur deux").unwrap().interval, 2);
        assert_eq!(r("tous les quinze jours").unwrap().interval, 2);
        assert_eq!(r("tous les trois jours").unwrap().interval, 3);
        let evening = r("tous les lundis soir").unwrap();
        assert_eq!((evening.weekday, evening.default_hour), (Some(0), Some(19)));
        assert_eq!(r("tous les soirs").unwrap().default_hour, Some(19));
        assert!(!r("le lundi").unwrap().sure);
        assert_eq!(r("lundi prochain"), None);
        assert_eq!(r("demain à 9 h"), None);
        let m = |s: &str| mentions(&Words::split_only(s).folded());
        assert!(m("tous les lundis de sortir les poubelles"));
        assert!(!m("ranger tous les papiers"));
        assert!(!m("appeler chaque client"));
    }
}
