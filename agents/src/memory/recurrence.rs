//! Recurring reminders: a rule (every day, every weekday, every Monday, every month on the
//! 5th, every two weeks…) read from the first occurrence's local date and hour, so that the
//! next occurrence is computed in the user's zone (19 h stays 19 h across a change of
//! time). A recurring reminder is one row whose due time moves to the next occurrence each
//! time one is done or seen; the rule is stored as an RFC 5545 `RRULE` (what `/rappels.ics`
//! hands a phone calendar), with its first occurrence and its zone.

use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, NaiveDateTime, Timelike, Utc, Weekday};
use chrono_tz::Tz;
use serde::Serialize;

use crate::time::local_to_utc;

/// How often a reminder comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Frequence {
    /// Every day (or every `intervalle` days).
    Quotidienne,
    /// Monday to Friday.
    JoursOuvres,
    /// On the first occurrence's weekday, every `intervalle` weeks.
    Hebdomadaire,
    /// On the first occurrence's day of the month, every `intervalle` months (a month
    /// without that day is skipped, as RFC 5545 says).
    Mensuelle,
}

impl Frequence {
    pub const ALL: [Frequence; 4] =
        [Frequence::Quotidienne, Frequence::JoursOuvres, Frequence::Hebdomadaire, Frequence::Mensuelle];

    /// The name in the tool arguments and the export.
    pub fn as_str(self) -> &'static str {
        match self {
            Frequence::Quotidienne => "quotidienne",
            Frequence::JoursOuvres => "jours_ouvres",
            Frequence::Hebdomadaire => "hebdomadaire",
            Frequence::Mensuelle => "mensuelle",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        let n = crate::text::normalise(raw).replace([' ', '-'], "_");
        Some(match n.as_str() {
            "quotidienne" | "quotidien" | "jour" | "jours" | "daily" => Frequence::Quotidienne,
            "jours_ouvres" | "jours_ouvrables" | "semaine" | "en_semaine" | "weekdays" => Frequence::JoursOuvres,
            "hebdomadaire" | "hebdo" | "weekly" => Frequence::Hebdomadaire,
            "mensuelle" | "mensuel" | "monthly" => Frequence::Mensuelle,
            _ => return None,
        })
    }
}

/// The most a rule may skip (every twelve days, weeks or months).
pub const MAX_INTERVALLE: u32 = 12;

/// A reminder's repetition, as stored and exported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Repetition {
    pub frequence: Frequence,
    pub intervalle: u32,
    /// The first occurrence, local wall time in `fuseau`: its weekday, day of the month and
    /// hour are the rule's.
    pub debut: NaiveDateTime,
    pub fuseau: String,
    /// Occurrences done or seen so far.
    pub occurrences: i64,
}

const DAYS: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
const WEEKDAY_NAMES: [&str; 7] = ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"];

impl Repetition {
    pub fn new(frequence: Frequence, intervalle: u32, debut: NaiveDateTime, tz: Tz) -> Self {
        // A rule keeps whole minutes (what is stored and said).
        let debut = debut.with_second(0).and_then(|d| d.with_nanosecond(0)).unwrap_or(debut);
        let intervalle = if frequence == Frequence::JoursOuvres { 1 } else { intervalle.clamp(1, MAX_INTERVALLE) };
        Self { frequence, intervalle, debut, fuseau: tz.name().to_string(), occurrences: 0 }
    }

    pub fn tz(&self) -> Tz {
        self.fuseau.parse().unwrap_or(chrono_tz::Europe::Paris)
    }

    /// The RFC 5545 rule (`FREQ=WEEKLY;BYDAY=MO`), without its start.
    pub fn rrule(&self) -> String {
        let day = DAYS[self.debut.weekday().num_days_from_monday() as usize];
        let interval = if self.intervalle > 1 { format!(";INTERVAL={}", self.intervalle) } else { String::new() };
        match self.frequence {
            Frequence::Quotidienne => format!("FREQ=DAILY{interval}"),
            Frequence::JoursOuvres => "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR".to_string(),
            Frequence::Hebdomadaire => format!("FREQ=WEEKLY{interval};BYDAY={day}"),
            Frequence::Mensuelle => format!("FREQ=MONTHLY{interval};BYMONTHDAY={}", self.debut.day()),
        }
    }

    /// Reads a stored rule back (`None`: not one this code writes).
    pub fn from_stored(rrule: &str, debut: &str, fuseau: &str, occurrences: i64) -> Option<Self> {
        let debut = NaiveDateTime::parse_from_str(debut, "%Y-%m-%dT%H:%M").ok()?;
        let mut freq = None;
        let mut intervalle = 1;
        let mut byday = None;
        for part in rrule.split(';') {
            let (k, v) = part.split_once('=')?;
            match k {
                "FREQ" => freq = Some(v),
                "INTERVAL" => intervalle = v.parse().ok()?,
                "BYDAY" => byday = Some(v),
                "BYMONTHDAY" => {}
                _ => return None,
            }
        }
        let frequence = match (freq?, byday) {
            ("DAILY", _) => Frequence::Quotidienne,
            ("WEEKLY", Some("MO,TU,WE,TH,FR")) => Frequence::JoursOuvres,
            ("WEEKLY", _) => Frequence::Hebdomadaire,
            ("MONTHLY", _) => Frequence::Mensuelle,
            _ => return None,
        };
        fuseau.parse::<Tz>().ok()?;
        Some(Self { frequence, intervalle, debut, fuseau: fuseau.to_string(), occurrences })
    }

    /// The stored form of the first occurrence.
    pub fn debut_stored(&self) -> String {
        self.debut.format("%Y-%m-%dT%H:%M").to_string()
    }

    /// The `k`-th date of the rule's calendar (before weekdays are filtered), or `None` when
    /// it does not exist (the 31st of a short month).
    fn nth_date(&self, k: i64) -> Option<NaiveDate> {
        let d0 = self.debut.date();
        let step = i64::from(self.intervalle);
        match self.frequence {
            Frequence::Quotidienne => d0.checked_add_signed(Duration::days(k * step)),
            Frequence::JoursOuvres => d0.checked_add_signed(Duration::days(k)),
            Frequence::Hebdomadaire => d0.checked_add_signed(Duration::days(7 * k * step)),
            Frequence::Mensuelle => {
                let months = u32::try_from(k * step).ok()?;
                let first = d0.with_day(1)?.checked_add_months(Months::new(months))?;
                first.with_day(d0.day())
            }
        }
    }

    /// The first occurrence strictly after `after` (none past the year 9999).
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let tz = self.tz();
        let time = self.debut.time();
        let after_local = after.with_timezone(&tz).date_naive();
        // Start a little before `after` so that no occurrence is skipped, then walk.
        let days_between = (after_local - self.debut.date()).num_days().max(0);
        let step_days = match self.frequence {
            Frequence::Quotidienne => i64::from(self.intervalle),
            Frequence::JoursOuvres => 1,
            Frequence::Hebdomadaire => 7 * i64::from(self.intervalle),
            Frequence::Mensuelle => 31 * i64::from(self.intervalle),
        };
        let mut k = (days_between / step_days - 1).max(0);
        if self.frequence == Frequence::Mensuelle {
            let months =
                (after_local.year() - self.debut.year()) * 12 + after_local.month() as i32 - self.debut.month() as i32;
            k = (i64::from(months) / i64::from(self.intervalle) - 1).max(0);
        }
        for _ in 0..2000 {
            if let Some(date) = self.nth_date(k) {
                if date.year() > 9999 {
                    return None;
                }
                let working = !matches!(date.weekday(), Weekday::Sat | Weekday::Sun);
                if self.frequence != Frequence::JoursOuvres || working {
                    let at = local_to_utc(date.and_time(time), tz);
                    if at > after {
                        return Some(at);
                    }
                }
            }
            k += 1;
        }
        None
    }

    /// « tous les lundis à 19 h 00 », « du lundi au vendredi à 7 h 30 », « tous les mois le 5
    /// à 9 h 00 »: the rule, written.
    pub fn label(&self) -> String {
        let at = format!("{} h {:02}", self.debut.hour(), self.debut.minute());
        format!("{} à {at}", self.rhythm(|n| n.to_string(), |d| d.to_string()))
    }

    /// The same, said (« tous les lundis à dix-neuf heures »).
    pub fn spoken_label(&self) -> String {
        let t = local_to_utc(self.debut, self.tz());
        format!(
            "{} à {}",
            self.rhythm(
                |n| crate::fr::number(i64::from(n)),
                |d| if d == 1 { "premier".to_string() } else { crate::fr::number(i64::from(d)) }
            ),
            crate::fr::spoken_time(t, self.tz())
        )
    }

    fn rhythm(&self, n: impl Fn(u32) -> String, day: impl Fn(u32) -> String) -> String {
        let weekday = WEEKDAY_NAMES[self.debut.weekday().num_days_from_monday() as usize];
        let k = self.intervalle;
        match (self.frequence, k) {
            (Frequence::Quotidienne, 1) => "tous les jours".to_string(),
            (Frequence::Quotidienne, _) => format!("tous les {} jours", n(k)),
            (Frequence::JoursOuvres, _) => "du lundi au vendredi".to_string(),
            (Frequence::Hebdomadaire, 1) => format!("tous les {weekday}s"),
            (Frequence::Hebdomadaire, 2) => format!("un {weekday} sur deux"),
            (Frequence::Hebdomadaire, _) => format!("un {weekday} toutes les {} semaines", n(k)),
            (Frequence::Mensuelle, 1) => format!("tous les mois le {}", day(self.debut.day())),
            (Frequence::Mensuelle, _) => format!("tous les {} mois le {}", n(k), day(self.debut.day())),
        }
    }

    /// The first occurrence at or after `from` for a rule said without a date (« tous les
    /// lundis à 19 h » said on a Wednesday starts next Monday): the local start.
    pub fn first_from(
        frequence: Frequence,
        weekday: Option<u32>,
        monthday: Option<u32>,
        time: (u32, u32),
        from: NaiveDateTime,
    ) -> Option<NaiveDateTime> {
        let t = chrono::NaiveTime::from_hms_opt(time.0, time.1, 0)?;
        for k in 0..400 {
            let d = from.date() + Duration::days(k);
            let ok = match frequence {
                Frequence::Quotidienne => true,
                Frequence::JoursOuvres => !matches!(d.weekday(), Weekday::Sat | Weekday::Sun),
                Frequence::Hebdomadaire => weekday.is_none_or(|w| d.weekday().num_days_from_monday() == w),
                Frequence::Mensuelle => monthday.is_none_or(|m| d.day() == m),
            };
            let at = d.and_time(t);
            if ok && at > from {
                return Some(at);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn local(y: i32, m: u32, d: u32, h: u32, min: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d).unwrap().and_hms_opt(h, min, 0).unwrap()
    }

    const TZ: Tz = chrono_tz::Europe::Paris;

    #[test]
    fn every_monday_at_seven_pm_stays_seven_pm_across_the_change_of_time() {
        let r = Repetition::new(Frequence::Hebdomadaire, 1, local(2027, 3, 22, 19, 0), TZ);
        assert_eq!(r.rrule(), "FREQ=WEEKLY;BYDAY=MO");
        assert_eq!(r.label(), "tous les lundis à 19 h 00");
        assert_eq!(r.spoken_label(), "tous les lundis à dix-neuf heures");
        // Summer time starts on Sunday 28 March 2027: 19 h is 18:00 UTC after, 18:00 before.
        let first = local_to_utc(local(2027, 3, 22, 19, 0), TZ);
        let next = r.next_after(first).unwrap();
        assert_eq!(next, Utc.with_ymd_and_hms(2027, 3, 29, 17, 0, 0).unwrap());
        assert_eq!(next.with_timezone(&TZ).hour(), 19);
    }

    #[test]
    fn weekdays_months_and_every_two_weeks() {
        let friday = local(2026, 12, 4, 7, 30);
        let r = Repetition::new(Frequence::JoursOuvres, 1, friday, TZ);
        let next = r.next_after(local_to_utc(friday, TZ)).unwrap().with_timezone(&TZ);
        assert_eq!(next.date_naive(), NaiveDate::from_ymd_opt(2026, 12, 7).unwrap(), "Monday, not Saturday");
        let m = Repetition::new(Frequence::Mensuelle, 1, local(2026, 1, 31, 9, 0), TZ);
        let next = m.next_after(local_to_utc(local(2026, 1, 31, 9, 0), TZ)).unwrap().with_timezone(&TZ);
        assert_eq!(next.date_naive(), NaiveDate::from_ymd_opt(2026, 3, 31).unwrap(), "February has no 31st");
        let b = Repetition::new(Frequence::Hebdomadaire, 2, local(2026, 12, 7, 19, 0), TZ);
        assert_eq!(b.rrule(), "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO");
        let after = local_to_utc(local(2026, 12, 9, 12, 0), TZ);
        assert_eq!(
            b.next_after(after).unwrap().with_timezone(&TZ).date_naive(),
            NaiveDate::from_ymd_opt(2026, 12, 21).unwrap()
        );
        // Long after: the walk starts near `after`, not at the first occurrence.
        let far = local_to_utc(local(2031, 6, 1, 0, 0), TZ);
        assert!(b.next_after(far).unwrap() > far);
    }

    #[test]
    fn a_stored_rule_reads_back() {
        for f in Frequence::ALL {
            let r = Repetition::new(f, 2, local(2026, 12, 5, 8, 15), TZ);
            let back = Repetition::from_stored(&r.rrule(), &r.debut_stored(), &r.fuseau, 0).unwrap();
            assert_eq!(back, r, "{f:?}");
        }
        assert_eq!(Repetition::from_stored("FREQ=YEARLY", "2026-12-05T08:15", "Europe/Paris", 0), None);
    }

    #[test]
    fn the_first_occurrence_of_a_rule_said_without_a_date() {
        // Wednesday 2 December 2026, 10:00: « tous les lundis à 19 h » starts on the 7th.
        let now = local(2026, 12, 2, 10, 0);
        let first = Repetition::first_from(Frequence::Hebdomadaire, Some(0), None, (19, 0), now).unwrap();
        assert_eq!(first, local(2026, 12, 7, 19, 0));
        let first = Repetition::first_from(Frequence::Mensuelle, None, Some(5), (9, 0), now).unwrap();
        assert_eq!(first, local(2026, 12, 5, 9, 0));
        let first = Repetition::first_from(Frequence::Quotidienne, None, None, (9, 0), now).unwrap();
        assert_eq!(first, local(2026, 12, 3, 9, 0), "9 h has passed today");
    }
}
