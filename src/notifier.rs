//! The reminder notifier of `arthur serve`: when a reminder's time comes, Arthur says it
//! (through the voice loop, between two utterances) and logs it, once — the announcement
//! is recorded in the store before it is said, so a restart or a second notifier never
//! repeats it. The web's reminder page shows overdue reminders on its own.

use std::sync::Arc;
use std::time::Duration;

use arthur_agents::memory::{MemoryStore, Rappel};
use arthur_agents::time::Clock;
use tokio::sync::mpsc;

use crate::health::HealthBoard;
use crate::serve::Shutdown;

pub struct NotifierDeps {
    pub store: Arc<dyn MemoryStore>,
    pub clock: Arc<dyn Clock>,
    pub period: Duration,
    /// The voice loop's announcement queue, when the voice runs.
    pub announce: Option<mpsc::Sender<crate::listen::Announcement>>,
    pub health: Arc<HealthBoard>,
}

/// What Arthur says for a due reminder (composed by code, like every report).
pub fn announcement(rappel: &Rappel) -> String {
    format!("Rappel : {}.", rappel.texte.trim().trim_end_matches('.'))
}

/// Checks every `period` until shutdown.
pub async fn run(deps: NotifierDeps, shutdown: Shutdown) -> anyhow::Result<()> {
    let mut tick = tokio::time::interval(deps.period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if let Err(e) = announce_due(&deps).await {
                    tracing::warn!(error = %e, "reminder check failed; retried at the next tick");
                }
            }
            () = &mut stop => break,
        }
    }
    tracing::info!("reminder notifier stopped");
    Ok(())
}

/// Announces every reminder that is due and was not announced yet; returns them.
pub async fn announce_due(deps: &NotifierDeps) -> anyhow::Result<Vec<Rappel>> {
    let now = deps.clock.now();
    let mut announced = Vec::new();
    for rappel in deps.store.due_unannounced_rappels(now).await? {
        if !deps.store.mark_rappel_announced(rappel.id, now).await? {
            continue; // another notifier was first
        }
        let text = announcement(&rappel);
        tracing::info!(id = rappel.id, due = %rappel.echeance, "reminder due: {text}");
        if let Some(tx) = &deps.announce {
            if tx.try_send(crate::listen::Announcement { text, bell: false }).is_err() {
                tracing::warn!(id = rappel.id, "voice busy or stopped: reminder shown on the web only");
            }
        }
        deps.health.update(|s| s.reminders_announced += 1);
        announced.push(rappel);
    }
    Ok(announced)
}
