//! The Atlas poller inside `arthur serve`: one tick per period (poll, scan, classify) until
//! shutdown, shaped like a background worker whose every tick has an outcome; a failed tick
//! is logged and retried at the next one, never fatal to the appliance.

use std::sync::Arc;
use std::time::Duration;

use super::imap::ImapAccount;
use super::pipeline::{Atlas, PollReport};
use crate::health::HealthBoard;
use crate::serve::Shutdown;

/// How one tick ended.
#[derive(Debug)]
pub enum TickOutcome {
    Polled(PollReport),
    Failed(String),
}

pub struct WorkerDeps {
    pub atlas: Atlas,
    pub account: ImapAccount,
    pub period: Duration,
    pub health: Arc<HealthBoard>,
}

pub async fn tick(deps: &WorkerDeps) -> TickOutcome {
    match deps.atlas.poll_once(&deps.account).await {
        Ok(report) => {
            let now = deps.atlas.deps.clock.now();
            deps.health.update(|s| {
                s.atlas_last_poll = Some(now);
                s.atlas_last_error = None;
                s.atlas_classified += report.classified as u64;
            });
            TickOutcome::Polled(report)
        }
        Err(e) => {
            let reason = e.to_string();
            deps.health.update(|s| s.atlas_last_error = Some(reason.clone()));
            TickOutcome::Failed(reason)
        }
    }
}

/// Ticks every `period` until shutdown; a tick in progress finishes first (its writes are
/// transactions, and \Seen follows the commit, so stopping between two steps loses nothing).
pub async fn run(deps: WorkerDeps, shutdown: Shutdown) -> anyhow::Result<()> {
    let mut interval = tokio::time::interval(deps.period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = shutdown.wait();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = interval.tick() => match tick(&deps).await {
                TickOutcome::Polled(r) => tracing::info!(
                    unseen = r.unseen, inserted = r.inserted, duplicates = r.duplicates,
                    blocked = r.blocked, classified = r.classified, failed = r.classify_failed, "Atlas tick"
                ),
                TickOutcome::Failed(reason) => tracing::warn!(%reason, "Atlas tick failed; retried at the next one"),
            },
            () = &mut stop => break,
        }
    }
    tracing::info!("Atlas poller stopped");
    Ok(())
}

/// The launcher inside `arthur serve`: first cycle `offset` after the start (so the poll
/// has classified), then every `period`. The lock watchdog is a task of its own
/// (`watchdog::run`): a cycle can last hours.
pub async fn run_launcher(
    launcher: super::launch::Launcher,
    offset: Duration,
    period: Duration,
    shutdown: Shutdown,
) -> anyhow::Result<()> {
    let stop = shutdown.wait();
    tokio::pin!(stop);
    tokio::select! {
        _ = tokio::time::sleep(offset) => {}
        () = &mut stop => return Ok(()),
    }
    let mut interval = tokio::time::interval(period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => {
                // On a stop request the run in flight is interrupted and salvaged by the
                // launcher itself; a process killed harder is reclaimed at the next start.
                match launcher.cycle().await {
                    Ok(r) => tracing::info!(launched = r.launched, actioned = r.actioned, failed = r.failed, held = r.held, "Atlas launch cycle"),
                    Err(e) => tracing::warn!(error = %e, "Atlas launch cycle failed; retried at the next one"),
                }
            }
            () = &mut stop => break,
        }
    }
    tracing::info!("Atlas launcher stopped");
    Ok(())
}
