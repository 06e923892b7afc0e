//! The Atlas poller inside `arthur serve`: one tick per period (poll, scan, classify) until
//! shutdown, shaped like a background worker whose every tick has an outcome; a failed tick
//! is logged and retried at the next one, never fatal to the appliance. What the ticks did
//! is published as a [`PollStatus`] on a `watch` channel, which the binary reads into its
//! health board: Atlas does not know who displays it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::imap::ImapAccount;
use super::pipeline::{Atlas, PollReport};

/// The poller's live state, for `/healthz`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PollStatus {
    pub last_poll: Option<DateTime<Utc>>,
    /// Why the last tick failed (cleared by the next good one).
    pub last_error: Option<String>,
    /// Messages classified since the start.
    pub classified: u64,
}

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
    /// Where each tick's result is published.
    pub status: watch::Sender<PollStatus>,
}

pub async fn tick(deps: &WorkerDeps) -> TickOutcome {
    match deps.atlas.poll_once(&deps.account).await {
        Ok(report) => {
            let now = deps.atlas.deps.clock.now();
            deps.status.send_modify(|s| {
                s.last_poll = Some(now);
                s.last_error = None;
                s.classified += report.classified as u64;
            });
            TickOutcome::Polled(report)
        }
        Err(e) => {
            let reason = e.to_string();
            deps.status.send_modify(|s| s.last_error = Some(reason.clone()));
            TickOutcome::Failed(reason)
        }
    }
}

/// Ticks every `period` until shutdown; a tick in progress finishes first (its writes are
/// transactions, and \Seen follows the commit, so stopping between two steps loses nothing).
pub async fn run(deps: WorkerDeps, shutdown: CancellationToken) {
    let mut interval = tokio::time::interval(deps.period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = shutdown.cancelled();
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
}

/// What the launcher inside `arthur serve` works with.
pub struct LauncherDeps {
    pub launcher: super::launch::Launcher,
    /// The first cycle this long after the start (so the poll has classified).
    pub offset: Duration,
    pub period: Duration,
}

/// The launcher inside `arthur serve`: first cycle `offset` after the start, then every
/// `period`. The lock watchdog is a task of its own (`watchdog::run`): a cycle can last hours.
pub async fn run_launcher(deps: LauncherDeps, shutdown: CancellationToken) {
    let LauncherDeps { launcher, offset, period } = deps;
    let stop = shutdown.cancelled();
    tokio::pin!(stop);
    tokio::select! {
        _ = tokio::time::sleep(offset) => {}
        () = &mut stop => return,
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
}
