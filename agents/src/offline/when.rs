//! French dates and times as people say them (and as whisper writes them): "demain à 9 h",
//! "lundi prochain", "dans deux heures", "le 3 décembre à 14 h 30", "ce soir", numbers as
//! digits or words. Everything is resolved against an explicit "now", in local time.

use std::sync::LazyLock;

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use regex::Regex;

/// Number words as a regex alternative (folded text), longest forms first.
pub const NUM_WORDS: &str = r"(?:(?:vingt|trente|quarante|cinquante)(?:[- ](?:et[- ])?(?:une|un|deux|trois|quatre|cinq|six|sept|huit|neuf))?|dix[- ](?:sept|huit|neuf)|zero|une|un|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|treize|quatorze|quinze|seize|premier)";

/// Number words without "un"/"une", which are too often articles ("une heure de tennis").
pub const NUM_WORDS_NOT_ONE: &str = r"(?:(?:vingt|trente|quarante|cinquante)(?:[- ](?:et[- ])?(?:une|un|deux|trois|quatre|cinq|six|sept|huit|neuf))?|dix[- ](?:sept|huit|neuf)|zero|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|onze|douze|treize|quatorze|quinze|seize)";

/// 0–59 from digits or French words ("vingt et une" → 21, "premier" → 1).
pub fn number(raw: &str) -> Option<u32> {
    let raw = raw.trim();
    if let Ok(n) = raw.parse::<u32>() {
        return Some(n);
    }
    let unit = |w: &str| -> Option<u32> {
        Some(match w {
            "zero" => 0,
            "un" | "une" | "premier" => 1,
            "deux" => 2,
            "trois" => 3,
            "quatre" => 4,
            "cinq" => 5,
            "six" => 6,
            "sept" => 7,
            "huit" => 8,
            "neuf" => 9,
            "dix" => 10,
            "onze" => 11,
            "douze" => 12,
            "treize" => 13,
            "quatorze" => 14,
            "quinze" => 15,
            "seize" => 16,
            "vingt" => 20,
            "trente" => 30,
            "quarante" => 40,
            "cinquante" => 50,
            _ => return None,
        })
    };
    let words: Vec<&str> = raw.split(['-', ' ']).filter(|w| !w.is_empty() && *w != "et").collect();
    let mut total = 0;
    for w in &words {
        total += unit(w)?;
    }
    (!words.is_empty()).then_some(total)
}

/// A moment found in the utterance.
#[derive(Debug, Clone, PartialEq)]
pub struct When {
    pub at: NaiveDateTime,
    /// An hour (or a relative delay in minutes/hours) was said; otherwise a default hour
    /// was chosen and the user should confirm.
    pub explicit_time: bool,
    /// Byte ranges of the folded text that expressed it.
    pub spans: Vec<(usize, usize)>,
}

const MONTHS: [&str; 12] = [
    "janvier",
    "fevrier",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "aout",
    "septembre",
    "octobre",
    "novembre",
    "decembre",
];
const WEEKDAYS: [&str; 7] = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"];

fn re(pattern: &str) -> Regex {
    Regex::new(
        &pattern
            .replace("NUM1", &format!(r"(?:\d{{1,2}}|{NUM_WORDS_NOT_ONE})"))
            .replace("NUM", &format!(r"(?:\d{{1,2}}|{NUM_WORDS})")),
    )
    .unwrap()
}

static RELATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:d'ici|dans)\s+(?:(?P<demi>une demi[- ]heure)|(?P<quart>un quart d'heure)|(?P<n>NUM|quelques)\s+(?P<u>minutes?|min|heures?|h|jours?|semaines?)(?P<half>\s+et\s+demie?)?)\b",
    )
});
static TIME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        // "une heure" is an hour only after a preposition, not in "une heure de tennis".
        r"(?:\b(?:a|vers|pour|des|avant)\s+(?P<h>NUM)|\b(?P<h2>NUM1))\s*(?:h|heures?)(?:\s*(?P<m>\d{2}\b|NUM\b|et quart|et demie?|moins le quart|pile))?(?:\s+(?P<per>du matin|du soir|de l'apres[- ]midi|de l'aprem))?\b",
    )
});
static CLOCK: LazyLock<Regex> = LazyLock::new(|| re(r"(?:\b(?:a|vers)\s+)?\b(?P<h>\d{1,2}):(?P<m>\d{2})\b"));
static NOON: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?:\b(?:a|vers|pour|des)\s+)?\b(?P<w>midi|minuit)(?:\s+(?P<m>et quart|et demie?|NUM\b))?"));
static DAY_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\b(?:pour|des)\s+)?\b(?P<w>apres[- ]demain|demain|aujourd'hui|aujourd hui|ce soir|ce matin|cet apres[- ]midi|cette nuit|la semaine prochaine)\b").unwrap()
});
static WEEKDAY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\b(?:pour|des|ce|le)\s+)?\b(?P<d>lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)(?P<next>\s+prochain)?\b").unwrap()
});
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:\b(?:pour|avant)\s+)?(?:\b(?:le|du)\s+)?(?:\b(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)\s+)?\b(?P<d>NUM)(?:er)?\s+(?P<mon>janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre)(?:\s+(?P<y>\d{4}))?\b",
    )
});
static SLASH_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\b(?:le|pour)\s+)?\b(?P<d>\d{1,2})/(?P<mo>\d{1,2})(?:/(?P<y>\d{2,4}))?\b").unwrap()
});
static PERIOD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?P<p>matin|soir|apres[- ]midi|aprem|soiree|matinee)\b").unwrap());

fn next_weekday(today: NaiveDate, weekday: usize) -> NaiveDate {
    let current = today.weekday().num_days_from_monday() as i64;
    let mut delta = weekday as i64 - current;
    if delta <= 0 {
        delta += 7;
    }
    today + Duration::days(delta)
}

fn minutes_word(raw: Option<&str>) -> Option<i64> {
    match raw?.trim() {
        "et quart" => Some(15),
        "et demi" | "et demie" => Some(30),
        "moins le quart" => Some(-15),
        "pile" => Some(0),
        other => number(other).map(i64::from),
    }
}

/// Default hour for a period of the day.
fn period_hour(p: &str) -> u32 {
    match p {
        "matin" | "matinee" => 9,
        "apres-midi" | "apres midi" | "aprem" => 15,
        "soir" | "soiree" => 19,
        "nuit" => 22,
        _ => 9,
    }
}

/// Finds the moment expressed in `folded` (already folded text), relative to `now`.
pub fn extract(folded: &str, now: NaiveDateTime) -> Option<When> {
    let today = now.date();
    let mut spans = Vec::new();
    let mut date: Option<NaiveDate> = None;
    let mut time: Option<(u32, u32)> = None;
    let mut period: Option<&str> = None;

    if let Some(c) = RELATIVE.captures(folded) {
        let m = c.get(0)?;
        spans.push((m.start(), m.end()));
        let delta = if c.name("demi").is_some() {
            Duration::minutes(30)
        } else if c.name("quart").is_some() {
            Duration::minutes(15)
        } else {
            let n = match c.name("n").map(|x| x.as_str()) {
                Some("quelques") => 3,
                Some(x) => i64::from(number(x)?),
                None => return None,
            };
            let half = c.name("half").is_some();
            match c.name("u").map(|x| x.as_str()).unwrap_or("") {
                u if u.starts_with("min") => Duration::minutes(n),
                u if u.starts_with('h') => Duration::minutes(n * 60 + if half { 30 } else { 0 }),
                u if u.starts_with("jour") => {
                    date = Some(today + Duration::days(n));
                    Duration::zero()
                }
                _ => {
                    date = Some(today + Duration::weeks(n));
                    Duration::zero()
                }
            }
        };
        if date.is_none() {
            let at = now + delta;
            return Some(When { at: at.with_second(0)?.with_nanosecond(0)?, explicit_time: true, spans });
        }
    }

    if let Some(c) = DATE.captures(folded) {
        let m = c.get(0)?;
        let d = number(c.name("d")?.as_str())?;
        let mon = c.name("mon")?.as_str();
        let month = MONTHS.iter().position(|x| *x == mon)? as u32 + 1;
        let year = c.name("y").and_then(|y| y.as_str().parse::<i32>().ok());
        let mut candidate = NaiveDate::from_ymd_opt(year.unwrap_or(today.year()), month, d)?;
        if year.is_none() && candidate < today {
            candidate = NaiveDate::from_ymd_opt(today.year() + 1, month, d)?;
        }
        date = Some(candidate);
        spans.push((m.start(), m.end()));
    } else if let Some(c) = SLASH_DATE.captures(folded) {
        let m = c.get(0)?;
        let d: u32 = c.name("d")?.as_str().parse().ok()?;
        let mo: u32 = c.name("mo")?.as_str().parse().ok()?;
        let year = c.name("y").and_then(|y| y.as_str().parse::<i32>().ok()).map(|y| if y < 100 { 2000 + y } else { y });
        let mut candidate = NaiveDate::from_ymd_opt(year.unwrap_or(today.year()), mo, d)?;
        if year.is_none() && candidate < today {
            candidate = NaiveDate::from_ymd_opt(today.year() + 1, mo, d)?;
        }
        date = Some(candidate);
        spans.push((m.start(), m.end()));
    } else if let Some(c) = WEEKDAY.captures(folded) {
        let m = c.get(0)?;
        let name = c.name("d")?.as_str();
        let wd = WEEKDAYS.iter().position(|x| *x == name)?;
        date = Some(next_weekday(today, wd));
        spans.push((m.start(), m.end()));
    }
    if let Some(c) = DAY_WORD.captures(folded) {
        let m = c.get(0)?;
        let w = c.name("w")?.as_str();
        match w {
            "apres-demain" | "apres demain" => date = Some(today + Duration::days(2)),
            "demain" => date = Some(today + Duration::days(1)),
            "aujourd'hui" | "aujourd hui" => date = Some(today),
            "ce soir" => {
                date = Some(today);
                period = Some("soir");
            }
            "ce matin" => {
                date = Some(today);
                period = Some("matin");
            }
            "cet apres-midi" | "cet apres midi" => {
                date = Some(today);
                period = Some("apres-midi");
            }
            "cette nuit" => {
                date = Some(today);
                period = Some("nuit");
            }
            _ => date = Some(next_weekday(today, 0)), // la semaine prochaine: next Monday
        }
        spans.push((m.start(), m.end()));
    }

    if let Some(c) = TIME.captures(folded) {
        let m = c.get(0)?;
        let mut h = number(c.name("h").or_else(|| c.name("h2"))?.as_str())?;
        let mut minutes = minutes_word(c.name("m").map(|x| x.as_str())).unwrap_or(0);
        match c.name("per").map(|x| x.as_str()) {
            Some("du soir") | Some("de l'apres-midi") | Some("de l'apres midi") | Some("de l'aprem") if h < 12 => {
                h += 12
            }
            _ => {}
        }
        if minutes < 0 {
            h = (h + 23) % 24;
            minutes += 60;
        }
        if h > 23 || minutes > 59 {
            return None;
        }
        time = Some((h, minutes as u32));
        spans.push((m.start(), m.end()));
    } else if let Some(c) = CLOCK.captures(folded) {
        let m = c.get(0)?;
        time = Some((c.name("h")?.as_str().parse().ok()?, c.name("m")?.as_str().parse().ok()?));
        spans.push((m.start(), m.end()));
    } else if let Some(c) = NOON.captures_iter(folded).find(|c| {
        // "midi" inside "après-midi" is a period, not noon.
        let start = c.name("w").map(|w| w.start()).unwrap_or(0);
        !folded[..start].ends_with("apres-") && !folded[..start].ends_with("apres ")
    }) {
        let m = c.get(0)?;
        let h = if c.name("w")?.as_str() == "midi" { 12 } else { 0 };
        let minutes = minutes_word(c.name("m").map(|x| x.as_str())).unwrap_or(0).max(0) as u32;
        time = Some((h, minutes));
        spans.push((m.start(), m.end()));
    }
    if period.is_none() {
        if let Some(c) = PERIOD.captures(folded) {
            let m = c.get(0)?;
            if !spans.iter().any(|&(a, b)| m.start() >= a && m.end() <= b) {
                spans.push((m.start(), m.end()));
            }
            period = Some(match c.name("p")?.as_str() {
                "matin" | "matinee" => "matin",
                "soir" | "soiree" => "soir",
                _ => "apres-midi",
            });
        }
    }
    if let (Some((h, mi)), Some(p)) = (time, period) {
        if h < 12 && matches!(p, "soir" | "apres-midi") {
            time = Some((h + 12, mi));
        }
    }
    if date.is_none() && time.is_none() && period.is_none() {
        return None;
    }
    let explicit_time = time.is_some();
    let (h, mi) = time.unwrap_or_else(|| (period.map(period_hour).unwrap_or(9), 0));
    let at_time = NaiveTime::from_hms_opt(h, mi, 0)?;
    let day = match date {
        Some(d) => d,
        // An hour alone: today if still to come, else tomorrow.
        None if today.and_time(at_time) > now => today,
        None => today + Duration::days(1),
    };
    let mut at = day.and_time(at_time);
    if period == Some("soir") && !explicit_time && at <= now {
        at = now + Duration::hours(1);
        at = at.with_minute(0)?.with_second(0)?.with_nanosecond(0)?;
    }
    spans.sort_unstable();
    Some(When { at, explicit_time, spans })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 11, 30).unwrap().and_hms_opt(10, 0, 0).unwrap()
    }

    fn at(s: &str) -> String {
        extract(s, now()).map(|w| w.at.format("%Y-%m-%dT%H:%M").to_string()).unwrap_or_default()
    }

    #[test]
    fn french_moments() {
        assert_eq!(at("demain a 9 h"), "2026-12-01T09:00");
        assert_eq!(at("demain a 9h30"), "2026-12-01T09:30");
        assert_eq!(at("demain a neuf heures et demie"), "2026-12-01T09:30");
        assert_eq!(at("lundi prochain"), "2026-12-07T09:00");
        assert_eq!(at("dans deux heures"), "2026-11-30T12:00");
        assert_eq!(at("dans 20 minutes"), "2026-11-30T10:20");
        assert_eq!(at("le 3 decembre a 14 h 30"), "2026-12-03T14:30");
        assert_eq!(at("le trois decembre a quatorze heures trente"), "2026-12-03T14:30");
        assert_eq!(at("ce soir"), "2026-11-30T19:00");
        assert_eq!(at("a 8 h"), "2026-12-01T08:00");
        assert_eq!(at("a 18 h"), "2026-11-30T18:00");
        assert_eq!(at("demain midi"), "2026-12-01T12:00");
        assert_eq!(at("vendredi a 7 heures du soir"), "2026-12-04T19:00");
        assert_eq!(at("le 15/01"), "2027-01-15T09:00");
        assert_eq!(at("apres-demain matin"), "2026-12-02T09:00");
        assert_eq!(at("jeudi soir a 8 h"), "2026-12-03T20:00");
        assert!(extract("acheter du pain", now()).is_none());
    }

    #[test]
    fn number_words() {
        assert_eq!(number("vingt et un"), Some(21));
        assert_eq!(number("vingt-deux"), Some(22));
        assert_eq!(number("dix-sept"), Some(17));
        assert_eq!(number("quatorze"), Some(14));
        assert_eq!(number("12"), Some(12));
        assert_eq!(number("pain"), None);
    }
}
