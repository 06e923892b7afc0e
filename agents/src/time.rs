//! Time as Arthur sees it: an injectable clock, the user's time zone, and the ISO 8601
//! newtypes that tool arguments are parsed into once.

use std::sync::Mutex;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;

/// Where "now" comes from. Tests and the property test drive a [`ManualClock`].
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self(Mutex::new(start))
    }
    pub fn advance(&self, by: Duration) {
        let mut now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }
    pub fn set(&self, to: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A calendar date given as `YYYY-MM-DD`, in the user's time zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct IsoDate(pub NaiveDate);

impl IsoDate {
    /// Accepts `YYYY-MM-DD`, and a full date-time whose date part is taken (models sometimes
    /// send `2026-12-01T00:00:00`).
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if let Ok(d) = NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
            return plausible(d).then_some(Self(d));
        }
        parse_datetime_any(raw).map(|(naive, _)| Self(naive.date())).filter(|d| plausible(d.0))
    }

    /// First instant of this day in `tz`, as UTC.
    pub fn start_utc(self, tz: Tz) -> DateTime<Utc> {
        local_to_utc(self.0.and_time(NaiveTime::MIN), tz)
    }
}

impl std::fmt::Display for IsoDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0.format("%Y-%m-%d"))
    }
}

/// Years a calendar date may have: four digits, so that storage and arithmetic never
/// overflow ("+262142-12-31" is not a date anyone means).
fn plausible(d: NaiveDate) -> bool {
    (1..=9999).contains(&d.year())
}

/// A due date for a reminder: ISO 8601 date-time, with or without offset (without: the
/// user's time zone), or a bare date (then 09:00 local, said explicitly in the receipt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueAt(pub DateTime<Utc>);

/// The hour a bare date stands for in a reminder.
pub const BARE_DATE_REMINDER_HOUR: u32 = 9;

impl DueAt {
    pub fn parse(raw: &str, tz: Tz) -> Option<Self> {
        Self::parse_with_kind(raw, tz).map(|(due, _)| due)
    }

    /// Also tells whether a bare date (no time) was given.
    pub fn parse_with_kind(raw: &str, tz: Tz) -> Option<(Self, bool)> {
        let raw = raw.trim();
        if let Ok(d) = NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
            if !plausible(d) {
                return None;
            }
            let t = NaiveTime::from_hms_opt(BARE_DATE_REMINDER_HOUR, 0, 0)?;
            return Some((Self(local_to_utc(d.and_time(t), tz)), true));
        }
        let (naive, exact) = parse_datetime_any(raw)?;
        if !plausible(naive.date()) {
            return None;
        }
        Some((Self(exact.unwrap_or_else(|| local_to_utc(naive, tz))), false))
    }
}

/// Parses an ISO 8601 date-time; returns the naive local value and, when an offset was
/// given, the exact instant.
fn parse_datetime_any(raw: &str) -> Option<(NaiveDateTime, Option<DateTime<Utc>>)> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(raw) {
        return Some((dt.naive_local(), Some(dt.with_timezone(&Utc))));
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M%:z", "%Y-%m-%d %H:%M:%S%:z"] {
        if let Ok(dt) = DateTime::parse_from_str(raw, fmt) {
            return Some((dt.naive_local(), Some(dt.with_timezone(&Utc))));
        }
    }
    for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(raw, fmt) {
            return Some((naive, None));
        }
    }
    None
}

/// Local wall time → UTC. A time that does not exist (spring-forward gap) moves one hour
/// later; an ambiguous one (fall-back) takes the earlier instant.
pub fn local_to_utc(naive: NaiveDateTime, tz: Tz) -> DateTime<Utc> {
    match tz.from_local_datetime(&naive) {
        chrono::LocalResult::Single(dt) => dt.with_timezone(&Utc),
        chrono::LocalResult::Ambiguous(early, _) => early.with_timezone(&Utc),
        chrono::LocalResult::None => local_to_utc(naive + Duration::hours(1), tz),
    }
}

/// Today's date in `tz`.
pub fn local_today(now: DateTime<Utc>, tz: Tz) -> NaiveDate {
    now.with_timezone(&tz).date_naive()
}

/// Monday of the ISO week that contains `day`.
pub fn week_start(day: NaiveDate) -> NaiveDate {
    day - Duration::days(i64::from(day.weekday().num_days_from_monday()))
}

/// Storage format: UTC, milliseconds, `Z`, so that text order is time order.
pub fn to_db(ts: DateTime<Utc>) -> String {
    ts.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Inverse of [`to_db`]; tolerant of any RFC 3339 value.
pub fn from_db(raw: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(raw).ok().map(|d| d.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_at_reads_local_time_in_the_user_zone() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        let due = DueAt::parse("2026-12-01T09:00", tz).unwrap();
        assert_eq!(to_db(due.0), "2026-12-01T08:00:00.000Z");
        let due = DueAt::parse("2026-07-01T09:00:00+02:00", tz).unwrap();
        assert_eq!(to_db(due.0), "2026-07-01T07:00:00.000Z");
        let bare = DueAt::parse("2026-12-01", tz).unwrap();
        assert_eq!(to_db(bare.0), "2026-12-01T08:00:00.000Z");
        assert!(DueAt::parse("demain", tz).is_none());
        assert!(DueAt::parse("2026-13-01", tz).is_none());
        assert!(DueAt::parse("+10000-01-01T09:00", tz).is_none());
        assert_eq!(DueAt::parse_with_kind("2027-1-5", tz).map(|(_, bare)| bare), Some(true));
    }

    #[test]
    fn iso_date_rejects_what_is_not_a_date() {
        assert!(IsoDate::parse("2026-02-30").is_none());
        assert!(IsoDate::parse("30/11/2026").is_none());
        assert!(IsoDate::parse("+262142-12-31").is_none());
        assert_eq!(IsoDate::parse("2026-11-30").unwrap().to_string(), "2026-11-30");
        assert_eq!(IsoDate::parse("2026-11-30T10:00:00").unwrap().to_string(), "2026-11-30");
    }

    #[test]
    fn gap_times_move_forward() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        // 2026-03-29 02:30 does not exist in Paris.
        let naive = NaiveDate::from_ymd_opt(2026, 3, 29).unwrap().and_hms_opt(2, 30, 0).unwrap();
        assert_eq!(to_db(local_to_utc(naive, tz)), "2026-03-29T01:30:00.000Z");
    }

    #[test]
    fn db_format_round_trips() {
        let now = Utc.with_ymd_and_hms(2026, 11, 30, 10, 0, 0).unwrap();
        assert_eq!(from_db(&to_db(now)), Some(now));
        assert_eq!(week_start(NaiveDate::from_ymd_opt(2026, 11, 29).unwrap()).to_string(), "2026-11-23");
    }
}
