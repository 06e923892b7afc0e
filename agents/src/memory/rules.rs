//! The decisions of the memory's refusable writes, as pure functions: given what the write
//! transaction read, may the write go on, and with which time? Both backends call them
//! inside their write transaction, so a rule is written (and tested) once and the check
//! and the write can never be separated.

use chrono::{DateTime, Utc};

use super::{AddPreference, ChronoChange, Deactivate, MarkDone, Preference, Rappel, SessionTravail};

/// A chrono command never writes a time before the event it follows (a clock stepped back).
pub fn not_before(now: DateTime<Utc>, floor: DateTime<Utc>) -> DateTime<Utc> {
    now.max(floor)
}

/// Marking a reminder done: only an existing reminder not yet done.
#[allow(clippy::result_large_err)] // decided once per call, never stored in bulk
pub fn mark_done(current: Option<Rappel>) -> Result<Rappel, MarkDone> {
    match current {
        None => Err(MarkDone::NotFound),
        Some(r) if r.fait => Err(MarkDone::AlreadyDone(r)),
        Some(r) => Ok(r),
    }
}

/// Deactivating a preference: only an existing active one.
pub fn deactivate(current: Option<Preference>) -> Result<Preference, Deactivate> {
    match current {
        None => Err(Deactivate::NotFound),
        Some(p) if !p.active => Err(Deactivate::AlreadyInactive(p)),
        Some(p) => Ok(p),
    }
}

/// Adding a preference: never a duplicate of an active one, never past the cap (which is
/// visible and enforced). `Ok` carries the active count once it is added.
pub fn add_preference(duplicate: Option<Preference>, active: i64, cap: u32) -> Result<u32, AddPreference> {
    if let Some(p) = duplicate {
        return Err(AddPreference::Duplicate(p));
    }
    if active >= i64::from(cap) {
        return Err(AddPreference::CapReached { cap });
    }
    Ok(u32::try_from(active + 1).unwrap_or(u32::MAX))
}

/// Starting a session: on an existing project, when none runs, never before the last one
/// ended (sessions never overlap). `Ok` is the start time.
pub fn start(
    project_exists: bool,
    running: Option<SessionTravail>,
    last_end: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, ChronoChange> {
    if !project_exists {
        return Err(ChronoChange::UnknownProject);
    }
    if let Some(s) = running {
        return Err(ChronoChange::AlreadyRunning(s));
    }
    Ok(not_before(now, last_end.unwrap_or(now)))
}

/// Pausing: a running session not already paused; the pause starts after the session
/// and after the end of its last pause. `Ok` is the session and the pause's start.
pub fn pause(
    running: Option<SessionTravail>,
    now: DateTime<Utc>,
) -> Result<(SessionTravail, DateTime<Utc>), ChronoChange> {
    let Some(s) = running else { return Err(ChronoChange::NoSession) };
    if s.is_paused() {
        return Err(ChronoChange::AlreadyPaused(s));
    }
    let floor = s.pauses.iter().filter_map(|p| p.fin).max().unwrap_or(s.debut).max(s.debut);
    let at = not_before(now, floor);
    Ok((s, at))
}

/// Resuming: a running session with an open pause; it ends after it began.
pub fn resume(
    running: Option<SessionTravail>,
    now: DateTime<Utc>,
) -> Result<(SessionTravail, DateTime<Utc>), ChronoChange> {
    let Some(s) = running else { return Err(ChronoChange::NoSession) };
    let Some(open) = s.pauses.iter().find(|p| p.fin.is_none()).map(|p| p.debut) else {
        return Err(ChronoChange::NotPaused(s));
    };
    Ok((s, not_before(now, open)))
}

/// Stopping: a running session; it ends after everything it holds (its pauses included),
/// and an open pause closes at the same instant.
pub fn stop(
    running: Option<SessionTravail>,
    now: DateTime<Utc>,
) -> Result<(SessionTravail, DateTime<Utc>), ChronoChange> {
    let Some(s) = running else { return Err(ChronoChange::NoSession) };
    let floor = s.pauses.iter().flat_map(|p| [Some(p.debut), p.fin]).flatten().max().unwrap_or(s.debut).max(s.debut);
    let at = not_before(now, floor);
    Ok((s, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Pause;
    use chrono::{Duration, TimeZone};

    fn at(m: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap() + Duration::minutes(m)
    }

    fn session(pauses: Vec<Pause>) -> SessionTravail {
        SessionTravail { id: 1, projet: "Atlas".into(), debut: at(0), fin: None, pauses }
    }

    fn rappel(fait: bool) -> Rappel {
        Rappel {
            id: 3,
            texte: "pain".into(),
            echeance: at(60),
            fait,
            fait_le: fait.then(|| at(1)),
            created_at: at(0),
            repetition: None,
        }
    }

    fn preference(active: bool) -> Preference {
        Preference { id: 2, texte: "court".into(), active, created_at: at(0), desactivee_le: None }
    }

    #[test]
    fn reminders_and_preferences() {
        assert_eq!(mark_done(None), Err(MarkDone::NotFound));
        assert_eq!(mark_done(Some(rappel(true))), Err(MarkDone::AlreadyDone(rappel(true))));
        assert_eq!(mark_done(Some(rappel(false))), Ok(rappel(false)));
        assert_eq!(deactivate(None), Err(Deactivate::NotFound));
        assert_eq!(deactivate(Some(preference(false))), Err(Deactivate::AlreadyInactive(preference(false))));
        assert_eq!(deactivate(Some(preference(true))), Ok(preference(true)));
        assert_eq!(add_preference(Some(preference(true)), 0, 20), Err(AddPreference::Duplicate(preference(true))));
        assert_eq!(add_preference(None, 20, 20), Err(AddPreference::CapReached { cap: 20 }));
        assert_eq!(add_preference(None, 19, 20), Ok(20));
    }

    #[test]
    fn the_chrono_never_goes_back_in_time() {
        assert_eq!(start(false, None, None, at(5)), Err(ChronoChange::UnknownProject));
        assert_eq!(start(true, Some(session(vec![])), None, at(5)), Err(ChronoChange::AlreadyRunning(session(vec![]))));
        // The clock stepped back behind the last session's end: the start waits for it.
        assert_eq!(start(true, None, Some(at(10)), at(5)), Ok(at(10)));
        assert_eq!(start(true, None, Some(at(1)), at(5)), Ok(at(5)));

        assert_eq!(pause(None, at(5)), Err(ChronoChange::NoSession));
        let open = session(vec![Pause { debut: at(3), fin: None }]);
        assert_eq!(pause(Some(open.clone()), at(5)), Err(ChronoChange::AlreadyPaused(open.clone())));
        let closed = session(vec![Pause { debut: at(3), fin: Some(at(8)) }]);
        assert_eq!(pause(Some(closed.clone()), at(5)).map(|(_, t)| t), Ok(at(8)));

        assert_eq!(resume(Some(session(vec![])), at(5)), Err(ChronoChange::NotPaused(session(vec![]))));
        assert_eq!(resume(Some(open.clone()), at(2)).map(|(_, t)| t), Ok(at(3)));

        assert_eq!(stop(None, at(5)), Err(ChronoChange::NoSession));
        assert_eq!(stop(Some(closed), at(5)).map(|(_, t)| t), Ok(at(8)));
        assert_eq!(stop(Some(open), at(9)).map(|(_, t)| t), Ok(at(9)));
    }
}
