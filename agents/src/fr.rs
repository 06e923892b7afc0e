//! The one French output module: how dates, times, durations and numbers are written for a
//! French reader ("lundi 30 novembre à 9 h 05", "2 h 16 min") and said for a French
//! listener ("lundi trente novembre à neuf heures cinq"). It depends on nothing else in the
//! crate, so the store, the reports and the turn all use it without a circle.

use chrono::{DateTime, Datelike, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;

const WEEKDAYS: [&str; 7] = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"];
const MONTHS: [&str; 12] = [
    "janvier",
    "février",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "août",
    "septembre",
    "octobre",
    "novembre",
    "décembre",
];

/// "lundi 30 novembre 2026".
pub fn date(d: NaiveDate) -> String {
    let day = if d.day() == 1 { "1er".to_string() } else { d.day().to_string() };
    format!(
        "{} {} {} {}",
        WEEKDAYS[d.weekday().num_days_from_monday() as usize],
        day,
        MONTHS[d.month0() as usize],
        d.year()
    )
}

/// "lundi 30 novembre 2026 à 9 h 05", in the user's time zone.
pub fn datetime(ts: DateTime<Utc>, tz: Tz) -> String {
    let local = ts.with_timezone(&tz);
    format!("{} à {}", date(local.date_naive()), time(ts, tz))
}

/// "9 h 05".
pub fn time(ts: DateTime<Utc>, tz: Tz) -> String {
    let local = ts.with_timezone(&tz);
    format!("{} h {:02}", local.hour(), local.minute())
}

const UNITS: [&str; 17] = [
    "zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze", "treize",
    "quatorze", "quinze", "seize",
];
const TENS: [&str; 7] = ["", "dix", "vingt", "trente", "quarante", "cinquante", "soixante"];

fn below_hundred(n: u64) -> String {
    match n {
        0..=16 => UNITS[n as usize].to_string(),
        17..=19 => format!("dix-{}", UNITS[(n - 10) as usize]),
        20..=69 => {
            let (t, u) = (n / 10, n % 10);
            match u {
                0 => TENS[t as usize].to_string(),
                1 => format!("{} et un", TENS[t as usize]),
                _ => format!("{}-{}", TENS[t as usize], UNITS[u as usize]),
            }
        }
        70..=79 => match n {
            71 => "soixante et onze".to_string(),
            _ => format!("soixante-{}", below_hundred(n - 60)),
        },
        80 => "quatre-vingts".to_string(),
        _ => format!("quatre-vingt-{}", below_hundred(n - 80)),
    }
}

fn below_thousand(n: u64) -> String {
    let (h, rest) = (n / 100, n % 100);
    match (h, rest) {
        (0, _) => below_hundred(rest),
        (1, 0) => "cent".to_string(),
        (1, _) => format!("cent {}", below_hundred(rest)),
        (_, 0) => format!("{} cents", UNITS[h as usize]),
        (_, _) => format!("{} cent {}", UNITS[h as usize], below_hundred(rest)),
    }
}

/// "1 active", "3 actives": a count in figures with its noun agreed (0 and 1 take the
/// singular in French).
pub fn count(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n.abs() <= 1 { one } else { many })
}

/// "une active", "trois actives": the same in words; `feminine` gives « une ».
pub fn spoken_count(n: i64, one: &str, many: &str, feminine: bool) -> String {
    let number = if n == 1 && feminine { "une".to_string() } else { number(n) };
    format!("{number} {}", if n.abs() <= 1 { one } else { many })
}

/// A whole number in words: 21 → "vingt et un", 1999 → "mille neuf cent quatre-vingt-dix-neuf".
pub fn number(n: i64) -> String {
    if n < 0 {
        return format!("moins {}", number(-n));
    }
    let n = n as u64;
    if n < 1000 {
        return below_thousand(n);
    }
    if n < 1_000_000 {
        let (th, rest) = (n / 1000, n % 1000);
        let head = if th == 1 { "mille".to_string() } else { format!("{} mille", below_thousand(th)) };
        return if rest == 0 { head } else { format!("{head} {}", below_thousand(rest)) };
    }
    n.to_string()
}

/// "4,7": a decimal number written the French way.
pub fn decimal(v: f64, places: usize) -> String {
    format!("{v:.places$}").replace('.', ",")
}

/// "neuf heures", "neuf heures trente", "midi", "minuit et quart" is not attempted: plain and exact.
pub fn spoken_time(ts: DateTime<Utc>, tz: Tz) -> String {
    let local = ts.with_timezone(&tz);
    let (h, m) = (local.hour(), local.minute());
    let hours = match h {
        0 => "minuit".to_string(),
        12 => "midi".to_string(),
        1 => "une heure".to_string(),
        _ => format!("{} heures", number(i64::from(h))),
    };
    if m == 0 {
        hours
    } else {
        // « dix heures une », « neuf heures vingt et une »: the minutes agree.
        let minutes = number(i64::from(m));
        let minutes = if m % 10 == 1 && m != 11 { format!("{}e", minutes) } else { minutes };
        format!("{hours} {minutes}")
    }
}

/// "mardi premier décembre" (the year only when it is not `today`'s).
pub fn spoken_date(d: NaiveDate, today: NaiveDate) -> String {
    let day = if d.day() == 1 { "premier".to_string() } else { number(i64::from(d.day())) };
    let base =
        format!("{} {} {}", WEEKDAYS[d.weekday().num_days_from_monday() as usize], day, MONTHS[d.month0() as usize]);
    if d.year() == today.year() {
        base
    } else {
        format!("{base} {}", number(i64::from(d.year())))
    }
}

/// "demain à neuf heures trente", "aujourd'hui à midi", or the spoken date and time.
pub fn spoken_datetime(ts: DateTime<Utc>, now: DateTime<Utc>, tz: Tz) -> String {
    let day = ts.with_timezone(&tz).date_naive();
    let today = now.with_timezone(&tz).date_naive();
    let when = match (day - today).num_days() {
        0 => "aujourd'hui".to_string(),
        1 => "demain".to_string(),
        -1 => "hier".to_string(),
        _ => spoken_date(day, today),
    };
    format!("{when} à {}", spoken_time(ts, tz))
}

/// "deux heures et cinq minutes", "quarante-cinq minutes", "moins d'une minute".
pub fn spoken_duration(secs: i64) -> String {
    let minutes = secs.max(0) / 60;
    let (h, m) = (minutes / 60, minutes % 60);
    let hours = match h {
        0 => None,
        1 => Some("une heure".to_string()),
        _ => Some(format!("{} heures", number(h))),
    };
    let mins = match m {
        0 => None,
        1 => Some("une minute".to_string()),
        _ => Some(format!("{} minutes", number(m))),
    };
    match (hours, mins) {
        (None, None) => "moins d'une minute".to_string(),
        (Some(h), None) => h,
        (None, Some(m)) => m,
        (Some(h), Some(m)) => format!("{h} et {m}"),
    }
}

/// "2 h 05", "45 min", "moins d'une minute": how a duration is written to the user.
pub fn written_minutes(secs: i64) -> String {
    let minutes = secs.max(0) / 60;
    match (minutes / 60, minutes % 60) {
        (0, 0) => "moins d'une minute".to_string(),
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m:02}"),
    }
}

/// "10 minutes", "1 h 30", "2 h 16 min 10 s" (written), exact to the second.
pub fn written_duration(secs: i64) -> String {
    let s = secs.abs();
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    let mut out = Vec::new();
    if h > 0 {
        out.push(format!("{h} h"));
    }
    if m > 0 {
        out.push(if h > 0 { format!("{m:02} min") } else { format!("{m} min") });
    }
    if sec > 0 || out.is_empty() {
        out.push(format!("{sec} s"));
    }
    out.join(" ")
}

/// The same, said: "dix minutes", "une heure et trente minutes", "quarante-cinq secondes".
pub fn spoken_duration_exact(secs: i64) -> String {
    let s = secs.abs();
    let rest = s % 60;
    if s < 60 {
        return if s == 1 { "une seconde".into() } else { format!("{} secondes", number(s)) };
    }
    let base = spoken_duration(s - rest);
    match rest {
        0 => base,
        1 => format!("{base} et une seconde"),
        r => format!("{base} et {} secondes", number(r)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_in_words() {
        let cases = [
            (0, "zéro"),
            (1, "un"),
            (17, "dix-sept"),
            (21, "vingt et un"),
            (22, "vingt-deux"),
            (70, "soixante-dix"),
            (71, "soixante et onze"),
            (77, "soixante-dix-sept"),
            (80, "quatre-vingts"),
            (81, "quatre-vingt-un"),
            (91, "quatre-vingt-onze"),
            (99, "quatre-vingt-dix-neuf"),
            (100, "cent"),
            (101, "cent un"),
            (200, "deux cents"),
            (230, "deux cent trente"),
            (1000, "mille"),
            (2026, "deux mille vingt-six"),
            (1999, "mille neuf cent quatre-vingt-dix-neuf"),
        ];
        for (n, words) in cases {
            assert_eq!(number(n), words, "{n}");
        }
    }

    #[test]
    fn spoken_times_and_durations() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        let ts = Utc.with_ymd_and_hms(2026, 12, 1, 8, 30, 0).unwrap();
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
        assert_eq!(spoken_datetime(ts, now, tz), "demain à neuf heures trente");
        let later = Utc.with_ymd_and_hms(2026, 12, 3, 11, 0, 0).unwrap();
        assert_eq!(spoken_datetime(later, now, tz), "jeudi trois décembre à midi");
        assert_eq!(spoken_duration(2 * 3600 + 5 * 60), "deux heures et cinq minutes");
        assert_eq!(spoken_duration(60), "une minute");
    }

    use super::*;
    use chrono::TimeZone;

    #[test]
    fn french_dates() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        let ts = Utc.with_ymd_and_hms(2026, 12, 1, 8, 5, 0).unwrap();
        assert_eq!(datetime(ts, tz), "mardi 1er décembre 2026 à 9 h 05");
    }

    #[test]
    fn durations_written_and_said() {
        assert_eq!(written_duration(600), "10 min");
        assert_eq!(written_duration(5400), "1 h 30 min");
        assert_eq!(written_duration(8160), "2 h 16 min");
        assert_eq!(written_duration(45), "45 s");
        assert_eq!(spoken_duration_exact(600), "dix minutes");
        assert_eq!(spoken_duration_exact(90), "une minute et trente secondes");
        assert_eq!(spoken_duration_exact(3600), "une heure");
        assert_eq!(written_minutes(30), "moins d'une minute");
        assert_eq!(written_minutes(45 * 60), "45 min");
        assert_eq!(written_minutes(2 * 3600 + 5 * 60), "2 h 05");
        assert_eq!(written_minutes(3600), "1 h");
    }
}
