//! How dates and times are written for a French reader ("lundi 30 novembre à 9 h 05").

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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn french_dates() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        let ts = Utc.with_ymd_and_hms(2026, 12, 1, 8, 5, 0).unwrap();
        assert_eq!(datetime(ts, tz), "mardi 1er décembre 2026 à 9 h 05");
    }
}
