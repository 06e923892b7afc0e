//! Work time is computed here, in one place, from the stored sessions and pauses: pauses
//! never count, a running session counts up to "now", and only the part inside the asked
//! range is added.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::SessionTravail;

/// Time worked per project inside a range, in order of first appearance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkTotals {
    pub total_secs: i64,
    pub par_projet: Vec<(String, i64)>,
    /// Sessions that overlap the range, however short: a session of 0.4 s is a session,
    /// so « aucune session » is said only when there is none.
    pub sessions: u32,
}

fn overlap(a: (DateTime<Utc>, DateTime<Utc>), b: (DateTime<Utc>, DateTime<Utc>)) -> Duration {
    let start = a.0.max(b.0);
    let end = a.1.min(b.1);
    if end > start {
        end - start
    } else {
        Duration::zero()
    }
}

/// Time worked in `session` within `[from, to)`, counting a running session or an open
/// pause up to `now`.
pub fn worked_within(session: &SessionTravail, from: DateTime<Utc>, to: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    let range = (from, to.min(now));
    let span = (session.debut, session.fin.unwrap_or(now).max(session.debut));
    let gross = overlap(span, range);
    let paused: Duration = session
        .pauses
        .iter()
        .map(|p| {
            let pause = (p.debut.max(span.0), p.fin.unwrap_or(now).min(span.1));
            overlap(pause, range)
        })
        .fold(Duration::zero(), |acc, d| acc + d);
    (gross - paused).max(Duration::zero())
}

/// Totals over several sessions.
pub fn totals(sessions: &[SessionTravail], from: DateTime<Utc>, to: DateTime<Utc>, now: DateTime<Utc>) -> WorkTotals {
    let mut par_projet: Vec<(String, i64)> = Vec::new();
    let mut total = 0;
    let mut count = 0;
    for s in sessions {
        let span = (s.debut, s.fin.unwrap_or(now).max(s.debut));
        let touches = span.0 < to.min(now) && span.1 >= from;
        if touches {
            count += 1;
        }
        let secs = worked_within(s, from, to, now).num_seconds();
        if secs == 0 {
            continue;
        }
        total += secs;
        match par_projet.iter_mut().find(|(p, _)| *p == s.projet) {
            Some((_, t)) => *t += secs,
            None => par_projet.push((s.projet.clone(), secs)),
        }
    }
    WorkTotals { total_secs: total, par_projet, sessions: count }
}

/// Kept under its old name for the board and the tests: the formatter is French output.
pub use crate::fr::written_minutes as format_duration;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Pause;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, h, m, 0).unwrap()
    }

    #[test]
    fn pauses_do_not_count_and_range_clips() {
        let s = SessionTravail {
            id: 1,
            projet: "Atlas".into(),
            debut: at(9, 0),
            fin: Some(at(12, 0)),
            pauses: vec![Pause { debut: at(10, 0), fin: Some(at(10, 30)) }],
        };
        assert_eq!(worked_within(&s, at(0, 0), at(23, 0), at(23, 0)).num_minutes(), 150);
        // Range 10:15–11:00 holds 15 min of pause and 30 of work.
        assert_eq!(worked_within(&s, at(10, 15), at(11, 0), at(23, 0)).num_minutes(), 30);
    }

    #[test]
    fn running_session_counts_up_to_now_minus_open_pause() {
        let s = SessionTravail {
            id: 1,
            projet: "Atlas".into(),
            debut: at(9, 0),
            fin: None,
            pauses: vec![Pause { debut: at(9, 40), fin: None }],
        };
        assert_eq!(worked_within(&s, at(0, 0), at(23, 0), at(10, 0)).num_minutes(), 40);
    }
}
