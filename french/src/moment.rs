//! Dates and times as people say them, read from a whole span of folded words: a moment
//! (« demain à 9 h », « jeudi soir à 8 h », « dans vingt minutes », « le 2026-12-10 à
//! 21:00 »), a day (« demain », « lundi dernier », « le 3 décembre ») and a range of days
//! (« cette semaine », « le mois dernier », « depuis lundi », « du 1er au 5 décembre »).
//!
//! A moment that cannot be trusted as said is still read, with the reason: in the past,
//! impossible (« le 31 février », « à 25 h »), a delay that is not positive, an hour chosen
//! by default, a month left out. The command built on it then asks instead of guessing.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::number::{digits, natural};

/// Why a moment cannot simply be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MomentIssue {
    /// A date that does not exist (« le 31 février », « à 25 h »).
    Impossible,
    /// Before now.
    Past,
    /// « dans -3 heures », « dans zéro minute ».
    NotPositive,
    /// A day without an hour: the hour was chosen by default.
    DefaultTime,
    /// An hour alone that has passed today: taken for tomorrow.
    Rolled,
    /// Part of the date was left out (« le 12 » without its month, « ce week-end »).
    Vague,
}

/// A moment read from the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    /// Local date and time (meaningless when the issue is `Impossible`).
    pub at: NaiveDateTime,
    /// An hour or a delay was said.
    pub time_said: bool,
    /// The first reason not to trust it as it is, if any.
    pub issue: Option<MomentIssue>,
}

/// Which way a bare weekday or month points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The last one (a question about work done).
    Past,
    /// The next one (reminders, plans).
    Future,
}

/// A day named in words, resolved against today and a direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayRef {
    /// Today plus so many days (« demain » is 1, « hier » is -1).
    Offset(i64),
    /// A calendar date (« le 3 décembre », « 2026-12-10 »); `year_said` false means the
    /// direction picks the year.
    Date { month: u32, day: u32, year: Option<i32> },
    /// « lundi » (0) … « dimanche » (6): bare, « prochain » or « dernier ».
    Weekday { day: u32, which: Which },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Bare,
    Next,
    Last,
}

/// A range of days named in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeRef {
    Day(DayRef),
    ThisWeek,
    LastWeek,
    NextWeek,
    ThisMonth,
    LastMonth,
    NextMonth,
    /// « en novembre »: the month, the direction picks its year.
    Month(u32),
    ThisYear,
    LastYear,
    Weekend,
    /// « depuis lundi »: from that day to today.
    Since(DayRef),
    /// « du 1er au 5 décembre ».
    Between(DayRef, DayRef),
    /// « les sept derniers jours » (today included).
    LastDays(i64),
    NextDays(i64),
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

fn month(w: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == w).map(|p| p as u32 + 1).or(match w {
        "fev" | "fevr" => Some(2),
        "sept" => None,
        "dec" => Some(12),
        _ => None,
    })
}

fn weekday(w: &str) -> Option<u32> {
    WEEKDAYS.iter().position(|d| *d == w).map(|p| p as u32)
}

fn starts(words: &[&str], i: usize, seq: &[&str]) -> bool {
    words.get(i..i + seq.len()).is_some_and(|s| s == seq)
}

/// The first of `seqs` found at `i`: its length.
fn any_of(words: &[&str], i: usize, seqs: &[&[&str]]) -> Option<usize> {
    seqs.iter().find(|s| starts(words, i, s)).map(|s| s.len())
}

/// A day number 1–31 (digits, « premier », « 1er », words), over one or more words.
fn day_number(words: &[&str], i: usize) -> Option<(u32, usize)> {
    for len in (1..=3).rev() {
        if let Some(n) = words.get(i..i + len).and_then(natural) {
            if (1..=99).contains(&n) {
                return Some((n as u32, len));
            }
        }
    }
    None
}

/// A year: four digits or « deux mille vingt-six ».
fn year(words: &[&str], i: usize) -> Option<(i32, usize)> {
    if let Some(n) = words.get(i).and_then(|w| digits(w)) {
        return (1000..=9999).contains(&n).then_some((n as i32, 1));
    }
    for len in (2..=5).rev() {
        if let Some(n) = words.get(i..i + len).and_then(natural) {
            if (1000..=9999).contains(&n) {
                return Some((n as i32, len));
            }
        }
    }
    None
}

/// « 2026-12-10 », « 10/12 », « 10/12/2026 », « 10/12/26 ».
fn numeric_date(w: &str) -> Option<(u32, u32, Option<i32>)> {
    let parts: Vec<&str> = w.split(['-', '/']).collect();
    if w.contains('-') && parts.len() == 3 && parts[0].len() == 4 {
        let y = parts[0].parse().ok()?;
        return Some((parts[1].parse().ok()?, parts[2].parse().ok()?, Some(y)));
    }
    if w.contains('/') && (parts.len() == 2 || parts.len() == 3) {
        let d: u32 = parts[0].parse().ok()?;
        let m: u32 = parts[1].parse().ok()?;
        let y = match parts.get(2) {
            Some(y) if y.len() == 2 => Some(2000 + y.parse::<i32>().ok()?),
            Some(y) if y.len() == 4 => Some(y.parse::<i32>().ok()?),
            Some(_) => return None,
            None => None,
        };
        return Some((m, d, y));
    }
    None
}

/// What one piece of a moment says.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    Delay(i64),
    Day(DayRef),
    /// A day of the month without its month (« le 12 »).
    DayOfMonth(u32),
    Time(u32, u32, bool),
    Period(Period),
    Weekend,
    /// « la semaine prochaine », « le mois prochain »: a start to be confirmed.
    Vague(DayRef),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Period {
    Morning,
    Noon,
    Afternoon,
    Evening,
    Night,
}

impl Period {
    fn default_hour(self) -> u32 {
        match self {
            Period::Morning => 9,
            Period::Noon => 12,
            Period::Afternoon => 15,
            Period::Evening => 19,
            Period::Night => 22,
        }
    }
    fn is_late(self) -> bool {
        matches!(self, Period::Afternoon | Period::Evening | Period::Night)
    }
}

fn period_word(words: &[&str], i: usize) -> Option<(Period, usize)> {
    let table: [(&[&str], Period); 10] = [
        (&["apres", "midi"], Period::Afternoon),
        (&["aprem"], Period::Afternoon),
        (&["apm"], Period::Afternoon),
        (&["matin"], Period::Morning),
        (&["matinee"], Period::Morning),
        (&["soir"], Period::Evening),
        (&["soiree"], Period::Evening),
        (&["nuit"], Period::Night),
        (&["midi"], Period::Noon),
        (&["debut", "d'", "apres", "midi"], Period::Afternoon),
    ];
    table.iter().find(|(s, _)| starts(words, i, s)).map(|(s, p)| (*p, s.len()))
}

/// The minutes after « 9 h »: « 30 », « trente », « et quart », « et demie », « moins le
/// quart » (-15), « pile ».
fn minutes_after(words: &[&str], i: usize) -> Option<(i64, usize)> {
    if let Some(n) = any_of(words, i, &[&["et", "quart"]]) {
        return Some((15, n));
    }
    if let Some(n) = any_of(words, i, &[&["et", "demie"], &["et", "demi"]]) {
        return Some((30, n));
    }
    if let Some(n) = any_of(words, i, &[&["moins", "le", "quart"], &["moins", "quart"]]) {
        return Some((-15, n));
    }
    if starts(words, i, &["pile"]) {
        return Some((0, 1));
    }
    for len in (1..=3).rev() {
        if let Some(n) = words.get(i..i + len).and_then(natural) {
            // « 9 h 05 » is written « 05 »; a bare « 5 » is fine too.
            return Some((n, len));
        }
    }
    None
}

/// An hour: « 9 h », « 9 h 30 », « neuf heures et demie », « 9h30 », « 21:00 », « midi »,
/// « minuit et quart », with « du matin / du soir / de l'après-midi » after it.
fn time_at(words: &[&str], i: usize) -> Option<((i64, i64), usize)> {
    let w = *words.get(i)?;
    // One word: « 9h », « 9h30 », « 21:00 ».
    let compact = || -> Option<(i64, i64)> {
        if let Some((h, m)) = w.split_once(':') {
            return Some((digits(h)?, digits(m)?)).filter(|_| m.len() == 2);
        }
        let (h, m) = w.split_once('h')?;
        let hour = digits(h)?;
        let minute = if m.is_empty() {
            0
        } else if m.len() == 2 {
            digits(m)?
        } else {
            return None;
        };
        Some((hour, minute))
    };
    let (mut hm, mut used) = if let Some(hm) = compact() {
        (hm, 1)
    } else if w == "midi" || w == "minuit" {
        let h = if w == "midi" { 12 } else { 0 };
        match minutes_after(words, i + 1) {
            Some((m, n)) if m < 60 && !matches!(words.get(i + 1), Some(&"moins")) => ((h, m), 1 + n),
            _ => ((h, 0), 1),
        }
    } else {
        // A number over one to three words, then « h » / « heure(s) ».
        let mut found = None;
        for len in (1..=3).rev() {
            let Some(h) = words.get(i..i + len).and_then(natural) else { continue };
            if matches!(words.get(i + len), Some(&"h") | Some(&"heure") | Some(&"heures")) {
                found = Some((h, len + 1));
                break;
            }
        }
        let (h, n) = found?;
        match minutes_after(words, i + n) {
            Some((m, k)) => ((h, m), n + k),
            None => ((h, 0), n),
        }
    };
    // « minutes » written after the minutes (« 9 heures 30 minutes »).
    if matches!(words.get(i + used), Some(&"minutes") | Some(&"min")) && hm.1 > 0 {
        used += 1;
    }
    if let Some(n) = any_of(words, i + used, &[&["du", "matin"]]) {
        used += n;
    } else if let Some(n) = any_of(
        words,
        i + used,
        &[&["du", "soir"], &["de", "l'", "apres", "midi"], &["de", "l'", "aprem"], &["de", "la", "nuit"]],
    ) {
        if hm.0 < 12 {
            hm.0 += 12;
        }
        used += n;
    }
    if hm.1 < 0 {
        hm = (hm.0 - 1, hm.1 + 60);
    }
    Some((hm, used))
}

/// An hour alone over the whole span (« à 19 h », « 7 h 30 », « vers midi »), for a rule
/// said with its hour; `None` when the span holds anything else or the hour does not exist.
pub fn time_of_day(words: &[&str]) -> Option<(u32, u32)> {
    let lead = usize::from(matches!(words.first(), Some(&"a") | Some(&"vers") | Some(&"pour") | Some(&"des")));
    let ((h, m), used) = time_at(words, lead)?;
    (lead + used == words.len() && (0..24).contains(&h) && (0..60).contains(&m)).then_some((h as u32, m as u32))
}

/// A day in words at `i`: its reference and length.
fn day_at(words: &[&str], i: usize) -> Option<(DayRef, usize)> {
    let w = *words.get(i)?;
    let fixed: [(&[&str], i64); 8] = [
        (&["aujourd'hui"], 0),
        (&["aujourdhui"], 0),
        (&["apres", "demain"], 2),
        (&["apres-demain"], 2),
        (&["demain"], 1),
        (&["avant", "hier"], -2),
        (&["hier"], -1),
        (&["ce", "jour"], 0),
    ];
    if let Some((s, off)) = fixed.iter().find(|(s, _)| starts(words, i, s)) {
        return Some((DayRef::Offset(*off), s.len()));
    }
    if let Some((m, d, y)) = numeric_date(w) {
        return Some((DayRef::Date { month: m, day: d, year: y }, 1));
    }
    // « lundi », « lundi prochain », « lundi dernier », « ce lundi », « le lundi 7 décembre ».
    let lead = usize::from(matches!(w, "ce" | "le"));
    if let Some(d) = words.get(i + lead).and_then(|w| weekday(w)) {
        let j = i + lead + 1;
        // A weekday followed by a full date: the date decides.
        if let Some((date, n)) = calendar_date(words, j) {
            return Some((date, lead + 1 + n));
        }
        return Some(match words.get(j) {
            Some(&"prochain") | Some(&"suivant") => (DayRef::Weekday { day: d, which: Which::Next }, lead + 2),
            Some(&"dernier") | Some(&"passe") => (DayRef::Weekday { day: d, which: Which::Last }, lead + 2),
            _ => (DayRef::Weekday { day: d, which: Which::Bare }, lead + 1),
        });
    }
    calendar_date(words, i)
}

/// « le 3 décembre », « 3 décembre 2026 », « le premier janvier », « le 1er mars ».
fn calendar_date(words: &[&str], i: usize) -> Option<(DayRef, usize)> {
    let lead = usize::from(matches!(words.get(i), Some(&"le") | Some(&"du") | Some(&"au")));
    let (d, n) = day_number(words, i + lead)?;
    let j = i + lead + n;
    let m = month(words.get(j)?)?;
    let mut len = lead + n + 1;
    let mut y = None;
    if let Some((yy, k)) = year(words, j + 1) {
        y = Some(yy);
        len += k;
    }
    Some((DayRef::Date { month: m, day: d, year: y }, len))
}

/// Words that may stand between the pieces of a moment.
const JOINERS: [&str; 12] = ["a", "vers", "pour", "des", "le", "et", "au", "aux", "alentours", "environ", "ce", "sur"];

/// The pieces of a moment at `i`, one at a time.
fn piece_at(words: &[&str], i: usize) -> Option<(Piece, usize)> {
    let w = *words.get(i)?;
    // « dans 20 minutes », « d'ici une heure », « dans 3 jours », « dans -3 heures ».
    let rel = if w == "dans" {
        Some(1)
    } else if starts(words, i, &["d'", "ici"]) {
        Some(2)
    } else {
        None
    };
    if let Some(k) = rel {
        let j = i + k;
        for end in (j + 1..=(j + 8).min(words.len())).rev() {
            if let Some(s) = crate::duration::seconds(&words[j..end]) {
                return Some((Piece::Delay(s), end - i));
            }
        }
        // Days and weeks: « dans 3 jours », « dans une semaine », « dans quinze jours ».
        for len in (1..=3).rev() {
            let Some(raw) = words.get(j..j + len) else { continue };
            let (sign, nums) = match raw {
                ["moins", rest @ ..] => (-1, rest),
                _ => (1, raw),
            };
            let n = if nums.len() == 1 && nums[0].starts_with('-') {
                digits(&nums[0][1..]).map(|n| -n)
            } else {
                natural(nums).map(|n| sign * n)
            };
            let Some(n) = n else { continue };
            match words.get(j + len) {
                Some(&"jour") | Some(&"jours") => return Some((Piece::Day(DayRef::Offset(n)), k + len + 1)),
                Some(&"semaine") | Some(&"semaines") => {
                    return Some((Piece::Day(DayRef::Offset(7 * n)), k + len + 1));
                }
                _ => {}
            }
        }
        if starts(words, j, &["quelques", "minutes"]) {
            return Some((Piece::Delay(180), k + 2));
        }
        return None;
    }
    if let Some(n) = any_of(words, i, &[&["ce", "soir"], &["ce", "matin"], &["cette", "nuit"], &["ce", "midi"]]) {
        let p = match words[i + 1] {
            "soir" => Period::Evening,
            "matin" => Period::Morning,
            "nuit" => Period::Night,
            _ => Period::Noon,
        };
        if p == Period::Noon {
            return Some((Piece::Time(12, 0, true), n));
        }
        return Some((Piece::Period(p), n));
    }
    if let Some(n) = any_of(words, i, &[&["cet", "apres", "midi"], &["cet", "aprem"]]) {
        return Some((Piece::Period(Period::Afternoon), n));
    }
    if let Some(n) = any_of(words, i, &[&["ce", "week", "end"], &["ce", "weekend"], &["le", "week", "end"]]) {
        return Some((Piece::Weekend, n));
    }
    if let Some(n) = any_of(words, i, &[&["la", "semaine", "prochaine"], &["semaine", "prochaine"]]) {
        return Some((Piece::Vague(DayRef::Weekday { day: 0, which: Which::Next }), n));
    }
    if let Some(((h, m), n)) = time_at(words, i) {
        return Some((Piece::Time(h.clamp(-1, 99) as u32, m.clamp(-1, 99) as u32, true), n));
    }
    if let Some((d, n)) = day_at(words, i) {
        return Some((Piece::Day(d), n));
    }
    // « le 12 » without its month.
    if w == "le" {
        if let Some((d, n)) = day_number(words, i + 1) {
            return Some((Piece::DayOfMonth(d), 1 + n));
        }
    }
    if let Some((p, n)) = period_word(words, i) {
        return Some(if p == Period::Noon { (Piece::Time(12, 0, true), n) } else { (Piece::Period(p), n) });
    }
    None
}

/// Splits a span into pieces, joiners allowed only before a piece.
fn pieces(words: &[&str]) -> Option<Vec<Piece>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if let Some((p, n)) = piece_at(words, i) {
            out.push(p);
            i += n;
            continue;
        }
        // « du » only before a period (« jeudi du matin » is not French; « du matin » is
        // read with the hour), « de » never.
        if JOINERS.contains(&words[i]) && i + 1 < words.len() {
            i += 1;
            continue;
        }
        if matches!(words[i], "en" | "dans" | "la" | "le") && i + 1 < words.len() {
            if let Some((p, n)) = period_word(words, i + 1) {
                out.push(if p == Period::Noon { Piece::Time(12, 0, true) } else { Piece::Period(p) });
                i += 1 + n;
                continue;
            }
        }
        return None;
    }
    (!out.is_empty()).then_some(out)
}

fn weekday_from(today: NaiveDate, day: u32, which: Which, dir: Direction) -> NaiveDate {
    let current = today.weekday().num_days_from_monday() as i64;
    let target = day as i64;
    match (which, dir) {
        (Which::Last, _) | (Which::Bare, Direction::Past) => {
            let mut back = current - target;
            if back < 0 || (back == 0 && which == Which::Last) {
                back += 7;
            }
            today - Duration::days(back)
        }
        (Which::Next, _) | (Which::Bare, Direction::Future) => {
            let mut ahead = target - current;
            if ahead <= 0 {
                ahead += 7;
            }
            today + Duration::days(ahead)
        }
    }
}

impl DayRef {
    /// The date meant, or `None` when it does not exist (« le 31 février »).
    pub fn resolve(self, today: NaiveDate, dir: Direction) -> Option<NaiveDate> {
        match self {
            DayRef::Offset(n) => Some(today + Duration::days(n)),
            DayRef::Weekday { day, which } => Some(weekday_from(today, day, which, dir)),
            DayRef::Date { month, day, year: Some(y) } => NaiveDate::from_ymd_opt(y, month, day),
            DayRef::Date { month, day, year: None } => {
                // The year is the one that makes the date point the right way.
                let this = NaiveDate::from_ymd_opt(today.year(), month, day);
                let other_year = match dir {
                    Direction::Future => today.year() + 1,
                    Direction::Past => today.year() - 1,
                };
                let other = NaiveDate::from_ymd_opt(other_year, month, day);
                match (this, dir) {
                    (Some(d), Direction::Future) if d >= today => Some(d),
                    (Some(d), Direction::Past) if d <= today => Some(d),
                    (Some(_), _) => other,
                    // « le 29 février » of a year without one: the other year may have it.
                    (None, _) => other,
                }
            }
        }
    }
}

/// A whole span read as a moment for a reminder, resolved against `now` (local time).
pub fn moment(words: &[&str], now: NaiveDateTime) -> Option<Moment> {
    if words.is_empty() || words.len() > 12 {
        return None;
    }
    let pieces = pieces(words)?;
    let today = now.date();
    let mut delay = None;
    let mut day: Option<DayRef> = None;
    let mut day_of_month = None;
    let mut time: Option<(u32, u32)> = None;
    let mut period: Option<Period> = None;
    let mut vague = false;
    let mut weekend = false;
    for p in pieces {
        match p {
            Piece::Delay(s) if delay.is_none() && day.is_none() && time.is_none() => delay = Some(s),
            Piece::Day(d) if day.is_none() && day_of_month.is_none() && !weekend => day = Some(d),
            Piece::Vague(d) if day.is_none() => {
                day = Some(d);
                vague = true;
            }
            Piece::DayOfMonth(d) if day.is_none() && day_of_month.is_none() => day_of_month = Some(d),
            Piece::Time(h, m, _) if time.is_none() => time = Some((h, m)),
            Piece::Period(p) if period.is_none() => {
                // « ce soir » also names today.
                period = Some(p);
            }
            Piece::Weekend if day.is_none() => weekend = true,
            _ => return None,
        }
    }
    if let Some(s) = delay {
        if day.is_some() || time.is_some() || period.is_some() || weekend || day_of_month.is_some() {
            return None;
        }
        let at = now + Duration::seconds(s);
        let at = at.with_second(0).and_then(|a| a.with_nanosecond(0)).unwrap_or(at);
        return Some(Moment { at, time_said: true, issue: (s <= 0).then_some(MomentIssue::NotPositive) });
    }
    let impossible = Moment { at: now, time_said: time.is_some(), issue: Some(MomentIssue::Impossible) };
    // The hour, with the period of the day (« jeudi soir à 8 h » is 20 h).
    let hm = match (time, period) {
        (Some((h, m)), Some(p)) if p.is_late() && h < 12 => Some((h + 12, m)),
        (t, _) => t,
    };
    if let Some((h, m)) = hm {
        if h > 23 || m > 59 {
            return Some(impossible);
        }
    }
    let mut issue = None;
    let date = if let Some(d) = day {
        if let DayRef::Offset(n) = d {
            if n < 0 {
                issue = Some(MomentIssue::Past);
            }
        }
        match d.resolve(today, Direction::Future) {
            Some(date) => {
                // « le 15 novembre » said on 30 November: next year's, almost a year away, is
                // more likely a date gone by than what was meant.
                if matches!(d, DayRef::Date { year: None, .. }) && (date - today).num_days() > 300 {
                    issue = Some(MomentIssue::Past);
                }
                Some(date)
            }
            None => return Some(impossible),
        }
    } else if let Some(dm) = day_of_month {
        // « le 12 »: this month's if still to come, else next month's — a guess.
        issue = Some(MomentIssue::Vague);
        let this = NaiveDate::from_ymd_opt(today.year(), today.month(), dm).filter(|d| *d >= today);
        let next_month = if today.month() == 12 { (today.year() + 1, 1) } else { (today.year(), today.month() + 1) };
        match this.or_else(|| NaiveDate::from_ymd_opt(next_month.0, next_month.1, dm)) {
            Some(d) => Some(d),
            None => return Some(impossible),
        }
    } else if weekend {
        issue = Some(MomentIssue::Vague);
        Some(weekday_from(today, 5, Which::Bare, Direction::Future))
    } else if period.is_some() {
        Some(today)
    } else {
        None
    };
    if vague {
        issue = issue.or(Some(MomentIssue::Vague));
    }
    let (h, m, time_said) = match hm {
        Some((h, m)) => (h, m, true),
        None => (period.map(Period::default_hour).unwrap_or(9), 0, false),
    };
    let at_time = NaiveTime::from_hms_opt(h, m, 0)?;
    let at = match date {
        Some(d) => d.and_time(at_time),
        None => {
            let today_at = today.and_time(at_time);
            if today_at > now {
                today_at
            } else {
                issue = issue.or(Some(MomentIssue::Rolled));
                (today + Duration::days(1)).and_time(at_time)
            }
        }
    };
    if at < now {
        issue = Some(MomentIssue::Past);
    }
    if !time_said {
        issue = issue.or(Some(MomentIssue::DefaultTime));
    }
    Some(Moment { at, time_said, issue })
}

/// A whole span read as one day (« demain », « lundi dernier », « le 3 décembre »).
pub fn day(words: &[&str]) -> Option<DayRef> {
    let lead = usize::from(matches!(words.first(), Some(&"de") | Some(&"du") | Some(&"d'") | Some(&"pour")));
    let (d, n) = day_at(words, lead)?;
    (lead + n == words.len()).then_some(d)
}

/// A whole span read as a range of days; a preposition in front is allowed (« du mois
/// dernier », « d'hier », « pour cette semaine »).
pub fn range(words: &[&str]) -> Option<RangeRef> {
    if words.is_empty() || words.len() > 12 {
        return None;
    }
    range_bare(words).or_else(|| match words {
        [lead, rest @ ..] if matches!(*lead, "de" | "du" | "d'" | "pour" | "sur" | "a" | "durant" | "pendant") => {
            let rest_first = rest.first().copied().unwrap_or_default();
            // « du mois dernier » is « le mois dernier ».
            if *lead == "du" && !rest.is_empty() {
                let mut with_le = vec!["le"];
                with_le.extend_from_slice(rest);
                if let Some(r) = range_bare(&with_le) {
                    return Some(r);
                }
            }
            (!rest_first.is_empty()).then(|| range_bare(rest)).flatten()
        }
        _ => None,
    })
}

fn range_bare(words: &[&str]) -> Option<RangeRef> {
    let fixed: [(&[&str], RangeRef); 22] = [
        (&["cette", "semaine"], RangeRef::ThisWeek),
        (&["la", "semaine"], RangeRef::ThisWeek),
        (&["la", "semaine", "derniere"], RangeRef::LastWeek),
        (&["la", "semaine", "passee"], RangeRef::LastWeek),
        (&["semaine", "derniere"], RangeRef::LastWeek),
        (&["la", "semaine", "prochaine"], RangeRef::NextWeek),
        (&["semaine", "prochaine"], RangeRef::NextWeek),
        (&["ce", "mois"], RangeRef::ThisMonth),
        (&["ce", "mois", "ci"], RangeRef::ThisMonth),
        (&["ce", "mois-ci"], RangeRef::ThisMonth),
        (&["le", "mois", "dernier"], RangeRef::LastMonth),
        (&["le", "mois", "passe"], RangeRef::LastMonth),
        (&["mois", "dernier"], RangeRef::LastMonth),
        (&["le", "mois", "prochain"], RangeRef::NextMonth),
        (&["mois", "prochain"], RangeRef::NextMonth),
        (&["cette", "annee"], RangeRef::ThisYear),
        (&["l'", "annee", "derniere"], RangeRef::LastYear),
        (&["l'", "an", "dernier"], RangeRef::LastYear),
        (&["ce", "week", "end"], RangeRef::Weekend),
        (&["ce", "weekend"], RangeRef::Weekend),
        (&["le", "week", "end"], RangeRef::Weekend),
        (&["depuis", "le", "debut", "de", "la", "semaine"], RangeRef::ThisWeek),
    ];
    if let Some((_, r)) = fixed.iter().find(|(s, _)| *s == words) {
        return Some(*r);
    }
    if words == ["depuis", "le", "debut", "du", "mois"] {
        return Some(RangeRef::ThisMonth);
    }
    // « en novembre », « au mois de novembre », « novembre ».
    let m = match words {
        [m] | ["en", m] | ["au", "mois", "de", m] | ["le", "mois", "de", m] | ["du", "mois", "de", m] => month(m),
        _ => None,
    };
    if let Some(m) = m {
        return Some(RangeRef::Month(m));
    }
    // « les sept derniers jours », « ces 3 derniers jours », « les 7 prochains jours ».
    if let ([lead, nums @ .., adj, "jours"], true) = (words, words.len() >= 4) {
        if matches!(*lead, "les" | "ces") {
            if let Some(n) = natural(nums) {
                match *adj {
                    "derniers" => return Some(RangeRef::LastDays(n)),
                    "prochains" => return Some(RangeRef::NextDays(n)),
                    _ => {}
                }
            }
        }
    }
    if let ["depuis", rest @ ..] = words {
        return day(rest).map(RangeRef::Since);
    }
    // « du 1er au 5 décembre », « entre lundi et mercredi ».
    for (open, mid) in [("du", "au"), ("entre", "et"), ("de", "a")] {
        if words.first() == Some(&open) {
            for k in 2..words.len() {
                if words[k] != mid {
                    continue;
                }
                let (a, b) = (&words[1..k], &words[k + 1..]);
                let second = day(b);
                let first = day(a).or_else(|| {
                    // « du 1er au 5 décembre »: the first day borrows the month.
                    let a = match a {
                        ["le", rest @ ..] => rest,
                        _ => a,
                    };
                    let (DayRef::Date { month, year, .. }, Some(d)) = (second?, natural(a)) else { return None };
                    (1..=31).contains(&d).then_some(DayRef::Date { month, day: d as u32, year })
                });
                if let (Some(f), Some(s)) = (first, second) {
                    return Some(RangeRef::Between(f, s));
                }
            }
        }
    }
    day(words).map(RangeRef::Day)
}

fn month_bounds(year: i32, month: u32) -> Option<(NaiveDate, NaiveDate)> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)?
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)?
    };
    Some((first, next - Duration::days(1)))
}

impl RangeRef {
    /// The first and last day, inclusive, or `None` for a date that does not exist.
    pub fn resolve(self, today: NaiveDate, dir: Direction) -> Option<(NaiveDate, NaiveDate)> {
        let monday = today - Duration::days(today.weekday().num_days_from_monday() as i64);
        let (this_first, this_last) = month_bounds(today.year(), today.month())?;
        let clip_past = |(a, b): (NaiveDate, NaiveDate)| match dir {
            Direction::Past => (a, b.min(today)),
            Direction::Future => (a, b),
        };
        Some(match self {
            RangeRef::Day(d) => {
                let d = d.resolve(today, dir)?;
                (d, d)
            }
            RangeRef::ThisWeek => clip_past((monday, monday + Duration::days(6))),
            RangeRef::LastWeek => (monday - Duration::days(7), monday - Duration::days(1)),
            RangeRef::NextWeek => (monday + Duration::days(7), monday + Duration::days(13)),
            RangeRef::ThisMonth => clip_past((this_first, this_last)),
            RangeRef::LastMonth => {
                month_bounds((this_first - Duration::days(1)).year(), (this_first - Duration::days(1)).month())?
            }
            RangeRef::NextMonth => {
                month_bounds((this_last + Duration::days(1)).year(), (this_last + Duration::days(1)).month())?
            }
            RangeRef::Month(m) => {
                let y = match dir {
                    Direction::Past if m > today.month() => today.year() - 1,
                    Direction::Future if m < today.month() => today.year() + 1,
                    _ => today.year(),
                };
                clip_past(month_bounds(y, m)?)
            }
            RangeRef::ThisYear => clip_past((
                NaiveDate::from_ymd_opt(today.year(), 1, 1)?,
                NaiveDate::from_ymd_opt(today.year(), 12, 31)?,
            )),
            RangeRef::LastYear => {
                (NaiveDate::from_ymd_opt(today.year() - 1, 1, 1)?, NaiveDate::from_ymd_opt(today.year() - 1, 12, 31)?)
            }
            RangeRef::Weekend => {
                let sat = weekday_from(today, 5, Which::Bare, dir);
                match dir {
                    Direction::Past => (sat, sat + Duration::days(1)),
                    Direction::Future if today.weekday().num_days_from_monday() == 6 => (today, today),
                    Direction::Future => (sat, sat + Duration::days(1)),
                }
            }
            RangeRef::Since(d) => (d.resolve(today, Direction::Past)?, today),
            RangeRef::Between(a, b) => {
                let a = a.resolve(today, dir)?;
                let b = b.resolve(today, dir)?;
                (a, b)
            }
            RangeRef::LastDays(n) => (today - Duration::days(n.max(1) - 1), today),
            RangeRef::NextDays(n) => (today, today + Duration::days(n.max(1) - 1)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 11, 30).unwrap().and_hms_opt(10, 0, 0).unwrap()
    }

    fn at(s: &str) -> String {
        let w: Vec<&str> = s.split(' ').collect();
        match moment(&w, now()) {
            Some(m) => {
                format!("{}{}", m.at.format("%Y-%m-%dT%H:%M"), m.issue.map(|i| format!(" {i:?}")).unwrap_or_default())
            }
            None => "-".into(),
        }
    }

    #[test]
    fn moments() {
        assert_eq!(at("demain a 9 h"), "2026-12-01T09:00");
        assert_eq!(at("demain a 9h30"), "2026-12-01T09:30");
        assert_eq!(at("demain a neuf heures et demie"), "2026-12-01T09:30");
        assert_eq!(at("lundi prochain"), "2026-12-07T09:00 DefaultTime");
        assert_eq!(at("lundi prochain a 14 h"), "2026-12-07T14:00");
        assert_eq!(at("dans deux heures"), "2026-11-30T12:00");
        assert_eq!(at("dans 20 minutes"), "2026-11-30T10:20");
        assert_eq!(at("d' ici une heure"), "2026-11-30T11:00");
        assert_eq!(at("le 3 decembre a 14 h 30"), "2026-12-03T14:30");
        assert_eq!(at("le trois decembre a quatorze heures trente"), "2026-12-03T14:30");
        assert_eq!(at("ce soir"), "2026-11-30T19:00 DefaultTime");
        assert_eq!(at("ce soir a 20 h"), "2026-11-30T20:00");
        assert_eq!(at("a 8 h"), "2026-12-01T08:00 Rolled");
        assert_eq!(at("a 18 h"), "2026-11-30T18:00");
        assert_eq!(at("demain midi"), "2026-12-01T12:00");
        assert_eq!(at("vendredi a 7 heures du soir"), "2026-12-04T19:00");
        assert_eq!(at("le 15/01"), "2027-01-15T09:00 DefaultTime");
        assert_eq!(at("apres demain matin"), "2026-12-02T09:00 DefaultTime");
        assert_eq!(at("jeudi soir a 8 h"), "2026-12-03T20:00");
        assert_eq!(at("le 2026-12-10 a 9:00"), "2026-12-10T09:00");
        assert_eq!(at("le 2026-12-10 a 21:00"), "2026-12-10T21:00");
        assert_eq!(at("hier a 10 h"), "2026-11-29T10:00 Past");
        assert_eq!(at("dans -3 heures"), "2026-11-30T07:00 NotPositive");
        assert_eq!(at("dans moins trois heures"), "2026-11-30T07:00 NotPositive");
        assert_eq!(at("le 31 fevrier"), "2026-11-30T10:00 Impossible");
        assert_eq!(at("a 25 h"), "2026-11-30T10:00 Impossible");
        assert_eq!(at("le 12 a 10h"), "2026-12-12T10:00 Vague");
        assert_eq!(at("dans 3 jours a 10 h"), "2026-12-03T10:00");
        assert_eq!(at("a 9 h moins le quart"), "2026-12-01T08:45 Rolled");
        assert_eq!(at("a 10 h 30 demain"), "2026-12-01T10:30");
        assert_eq!(at("vers 17 h"), "2026-11-30T17:00");
        assert_eq!(at("ce matin a 8 h"), "2026-11-30T08:00 Past");
        assert_eq!(at("le 15 novembre 2026 a 9 h"), "2026-11-15T09:00 Past");
        assert_eq!(at("mardi 1er decembre a 9 h"), "2026-12-01T09:00");
        assert_eq!(at("appeler luc"), "-");
        assert_eq!(at("a"), "-");
        assert_eq!(at("demain a"), "-");
        assert_eq!(at("du dimanche"), "-");
    }

    fn r(s: &str, dir: Direction) -> String {
        let w: Vec<&str> = s.split(' ').collect();
        match range(&w).and_then(|r| r.resolve(now().date(), dir)) {
            Some((a, b)) => format!("{a} {b}"),
            None => "-".into(),
        }
    }

    #[test]
    fn ranges() {
        use Direction::*;
        assert_eq!(r("cette semaine", Past), "2026-11-30 2026-11-30");
        assert_eq!(r("cette semaine", Future), "2026-11-30 2026-12-06");
        assert_eq!(r("la semaine derniere", Past), "2026-11-23 2026-11-29");
        assert_eq!(r("le mois dernier", Past), "2026-10-01 2026-10-31");
        assert_eq!(r("ce mois ci", Past), "2026-11-01 2026-11-30");
        assert_eq!(r("demain", Future), "2026-12-01 2026-12-01");
        assert_eq!(r("hier", Past), "2026-11-29 2026-11-29");
        assert_eq!(r("lundi", Past), "2026-11-30 2026-11-30");
        assert_eq!(r("lundi dernier", Past), "2026-11-23 2026-11-23");
        assert_eq!(r("vendredi", Past), "2026-11-27 2026-11-27");
        assert_eq!(r("vendredi", Future), "2026-12-04 2026-12-04");
        assert_eq!(r("depuis lundi dernier", Past), "2026-11-23 2026-11-30");
        assert_eq!(r("du 1er au 5 decembre", Future), "2026-12-01 2026-12-05");
        assert_eq!(r("entre le 1er decembre et le 5 decembre", Future), "2026-12-01 2026-12-05");
        assert_eq!(r("en octobre", Past), "2026-10-01 2026-10-31");
        assert_eq!(r("les 7 derniers jours", Past), "2026-11-24 2026-11-30");
        assert_eq!(r("la semaine prochaine", Future), "2026-12-07 2026-12-13");
        assert_eq!(r("pommes", Past), "-");
    }
}
