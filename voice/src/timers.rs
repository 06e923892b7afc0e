//! The timers' (and alarms') bell in `arthur serve`: once a timer's deadline has passed (stored in the
//! database, so a restart changes nothing), it rings — its bell and « Le minuteur … est
//! terminé » through the voice loop, after any answer being spoken — again every few seconds
//! until the user says « c'est bon » (or presses the web page's button), for a bounded time.
//! With no voice it is printed and shown live on the web page.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use arthur_agents::memory::{MemoryStore, Minuteur, StoreError};
use arthur_agents::time::Clock;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use tokio::sync::mpsc;

use crate::listen::Announcement;
use crate::tally::Tally;
use tokio_util::sync::CancellationToken;

/// How often deadlines are checked.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);
/// A ringing timer is said again after this long without an answer.
pub const REPEAT_EVERY: Duration = Duration::from_secs(10);
/// After this long without an answer it stops ringing (and stays on the web page as
/// ended, not acknowledged).
pub const RING_FOR: Duration = Duration::from_secs(120);
/// An alarm rings longer: someone asleep may take a while to answer.
pub const ALARM_RING_FOR: Duration = Duration::from_secs(600);

pub struct BellDeps {
    pub store: Arc<dyn MemoryStore>,
    pub clock: Arc<dyn Clock>,
    pub tz: Tz,
    /// The voice loop's announcement queue, when the voice runs.
    pub announce: Option<mpsc::Sender<Announcement>>,
    /// What it counts for `/healthz`.
    pub health: Arc<Tally>,
    pub check_every: Duration,
    pub repeat_every: Duration,
    pub ring_for: Duration,
}

/// What Arthur says when a timer ends. It says the timer ended while it was stopped only
/// when the deadline is older than `up_since`, the moment this bell started: a timer that
/// keeps ringing unanswered did not end during a stop.
pub fn announcement(m: &Minuteur, up_since: DateTime<Utc>, tz: Tz) -> String {
    if m.genre == arthur_agents::memory::Genre::Reveil {
        let what = match &m.nom {
            Some(n) => format!("ton réveil {n}"),
            None => "ton réveil".to_string(),
        };
        return match m.echeance {
            Some(end) if end < up_since => format!(
                "{} était réglé à {}, pendant que j'étais arrêté.",
                capitalise(&what),
                arthur_agents::fr::spoken_time(end, tz)
            ),
            Some(end) => format!("Il est {} : c'est l'heure de {what}.", arthur_agents::fr::spoken_time(end, tz)),
            None => format!("C'est l'heure de {what}."),
        };
    }
    let what = format!("Le minuteur {}", arthur_agents::report::spoken_timer_label(m));
    match m.echeance {
        Some(end) if end < up_since => {
            format!("{what} s'est terminé à {}, pendant que j'étais arrêté.", arthur_agents::fr::spoken_time(end, tz))
        }
        _ => format!("{what} est terminé."),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Rings due timers and repeats the ringing ones until shutdown. A failed check is logged
/// and tried again at the next one: the bell itself never fails.
pub async fn run(deps: BellDeps, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(deps.check_every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut bell = Bell::new(deps.clock.now());
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if let Err(e) = ring(&deps, &mut bell).await {
                    tracing::warn!(error = %e, "timer check failed; retried at the next tick");
                }
            }
            () = shutdown.cancelled() => break,
        }
    }
    tracing::info!("timer bell stopped");
}

/// What the bell remembers between checks.
#[derive(Debug)]
pub struct Bell {
    /// When this bell started: a deadline before it passed while Arthur was stopped.
    up_since: DateTime<Utc>,
    /// When each ringing timer was last said.
    last_said: HashMap<i64, DateTime<Utc>>,
}

impl Bell {
    pub fn new(up_since: DateTime<Utc>) -> Self {
        Self { up_since, last_said: HashMap::new() }
    }
}

/// One check: timers whose deadline passed start ringing; ringing ones are said again when
/// due; those rung too long stop. Returns the timers announced this time.
pub async fn ring(deps: &BellDeps, bell: &mut Bell) -> Result<Vec<Minuteur>, StoreError> {
    let now = deps.clock.now();
    let up_since = bell.up_since;
    let last_said = &mut bell.last_said;
    for m in deps.store.ring_due_timers(now).await? {
        let text = announcement(&m, up_since, deps.tz);
        tracing::info!(id = m.id, "timer ended: {text}");
        eprintln!("Arthur : {text}");
        deps.health.timer_rang();
    }
    let ring_for = chrono::Duration::from_std(deps.ring_for).unwrap_or_default();
    for m in deps.store.expire_ringing(now - ring_for).await? {
        tracing::info!(id = m.id, "timer stopped ringing with no answer");
        last_said.remove(&m.id);
    }
    let alarm_for = chrono::Duration::from_std(ALARM_RING_FOR.max(deps.ring_for)).unwrap_or_default();
    for m in deps.store.expire_ringing_alarms(now - alarm_for).await? {
        tracing::info!(id = m.id, "alarm stopped ringing with no answer");
        last_said.remove(&m.id);
    }
    let repeat = chrono::Duration::from_std(deps.repeat_every).unwrap_or_default();
    let mut said = Vec::new();
    let ringing = deps.store.ringing_timers().await?;
    last_said.retain(|id, _| ringing.iter().any(|m| m.id == *id));
    for m in ringing {
        if last_said.get(&m.id).is_some_and(|at| now - *at < repeat) {
            continue;
        }
        last_said.insert(m.id, now);
        if let Some(tx) = &deps.announce {
            let text = announcement(&m, up_since, deps.tz);
            if tx.try_send(Announcement { text, bell: true, rappel: None }).is_err() {
                tracing::warn!(id = m.id, "voice busy or stopped: the timer rings on the web page only");
            }
        }
        said.push(m);
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arthur_agents::memory::EtatMinuteur;
    use chrono::TimeZone;

    fn timer(nom: Option<&str>, end: DateTime<Utc>) -> Minuteur {
        Minuteur {
            id: 1,
            genre: arthur_agents::memory::Genre::Minuteur,
            nom: nom.map(String::from),
            duree_secondes: 600,
            etat: EtatMinuteur::Sonne,
            echeance: Some(end),
            restant_secondes: None,
            created_at: end,
            fini_le: Some(end),
            acquitte_le: None,
            annule_le: None,
        }
    }

    #[test]
    fn what_is_said_when_a_timer_ends() {
        let end = Utc.with_ymd_and_hms(2026, 11, 30, 9, 10, 0).unwrap();
        let tz = chrono_tz::Europe::Paris;
        let before = end - chrono::Duration::minutes(30);
        assert_eq!(announcement(&timer(Some("pâtes"), end), before, tz), "Le minuteur pâtes est terminé.");
        assert_eq!(announcement(&timer(None, end), end, tz), "Le minuteur de dix minutes est terminé.");
        let later = end + chrono::Duration::minutes(30);
        assert_eq!(
            announcement(&timer(Some("pâtes"), end), later, tz),
            "Le minuteur pâtes s'est terminé à dix heures dix, pendant que j'étais arrêté."
        );
        let mut alarm = timer(None, end);
        alarm.genre = arthur_agents::memory::Genre::Reveil;
        assert_eq!(announcement(&alarm, before, tz), "Il est dix heures dix : c'est l'heure de ton réveil.");
        assert_eq!(
            announcement(&alarm, later, tz),
            "Ton réveil était réglé à dix heures dix, pendant que j'étais arrêté."
        );
    }
}
