//! The reminder notifier of `arthur serve`: when a reminder's time comes, Arthur prints it,
//! offers it to the voice (spoken between two utterances) and every open web page shows it
//! live, until the user has heard it to the end or acknowledged it on a page. The
//! announcement is recorded in the store before anything is said, so a restart or a second
//! notifier never claims it twice; delivery is recorded apart, so a reminder the voice could
//! not say stays "due, not yet acknowledged" and is offered again.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use arthur_agents::memory::{MemoryStore, Rappel, StoreError};
use arthur_agents::time::Clock;
use chrono_tz::Tz;
use tokio::sync::mpsc;

use crate::tally::Tally;
use tokio_util::sync::CancellationToken;

pub struct NotifierDeps {
    pub store: Arc<dyn MemoryStore>,
    pub clock: Arc<dyn Clock>,
    pub tz: Tz,
    pub period: Duration,
    /// The voice loop's announcement queue, when the voice runs.
    pub announce: Option<mpsc::Sender<crate::listen::Announcement>>,
    /// What it counts for `/healthz`.
    pub health: Arc<Tally>,
    /// Print each due reminder on stdout (serve's terminal or journal).
    pub print: bool,
}

/// What Arthur says for a due reminder (composed by code, like every report).
pub fn announcement(rappel: &Rappel) -> String {
    format!("Rappel : {}.", rappel.texte.trim().trim_end_matches('.'))
}

/// What serve prints for a due reminder: the same words, its number and its time.
pub fn printed(rappel: &Rappel, tz: Tz) -> String {
    format!(
        "Rappel dû (n°{}, prévu le {}) : {}.",
        rappel.id,
        arthur_agents::fr::datetime(rappel.echeance, tz),
        rappel.texte.trim().trim_end_matches('.')
    )
}

/// The notifier's memory between ticks: the reminders already in the voice's queue, so a
/// reminder is queued once while it waits to be said.
#[derive(Debug, Default)]
pub struct Notifier {
    queued: HashSet<i64>,
}

/// Checks every `period` until shutdown. A failed check is logged and tried again at the
/// next tick: the notifier itself never fails.
pub async fn run(deps: NotifierDeps, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(deps.period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut notifier = Notifier::default();
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if let Err(e) = notifier.tick(&deps).await {
                    tracing::warn!(error = %e, "reminder check failed; retried at the next tick");
                }
            }
            () = shutdown.cancelled() => break,
        }
    }
    tracing::info!("reminder notifier stopped");
}

impl Notifier {
    /// Claims the reminders that came due (printed once), then offers the voice every
    /// reminder still undelivered that is not in its queue yet. Returns the newly due.
    pub async fn tick(&mut self, deps: &NotifierDeps) -> Result<Vec<Rappel>, StoreError> {
        let now = deps.clock.now();
        let mut due = Vec::new();
        for rappel in deps.store.due_unannounced_rappels(now).await? {
            if !deps.store.mark_rappel_announced(rappel.id, now).await? {
                continue; // another notifier was first
            }
            tracing::info!(id = rappel.id, due = %rappel.echeance, "reminder due");
            if deps.print {
                println!("{}", printed(&rappel, deps.tz));
            }
            deps.health.reminder_due(deps.print);
            due.push(rappel);
        }
        if let Some(tx) = &deps.announce {
            let waiting = deps.store.undelivered_rappels().await?;
            self.queued.retain(|id| waiting.iter().any(|(r, _)| r.id == *id));
            for (rappel, _) in waiting {
                if self.queued.contains(&rappel.id) {
                    continue;
                }
                let a =
                    crate::listen::Announcement { text: announcement(&rappel), bell: false, rappel: Some(rappel.id) };
                match tx.try_send(a) {
                    Ok(()) => {
                        self.queued.insert(rappel.id);
                    }
                    Err(_) => {
                        tracing::warn!(
                            id = rappel.id,
                            "voice busy or stopped: reminder offered again at the next tick"
                        );
                        break;
                    }
                }
            }
        }
        Ok(due)
    }
}
