//! Atlas' workers inside `arthur serve` and `arthur atlas poll|classify|launch`: the poller
//! (poll, scan, classify), the classifier alone, and the launcher, each one tick per period
//! until shutdown on one schedule ([`Every`]); a failed tick is reported and
//! retried at the next one, never fatal. What each tick did goes to a caller's hook (the
//! CLI prints a line); by default it is logged, and the poller also publishes a
//! [`PollStatus`] on a `watch` channel, which the binary reads into its health board: Atlas
//! does not know who displays it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::imap::ImapAccount;
use super::launch::{CycleReport, Launcher};
use super::pipeline::{Atlas, PollReport};
use super::store::AtlasStoreError;
use super::watchdog::LockWatchdog;
use crate::schedule::Every;

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

/// Polls every `period` until shutdown, each tick logged; stopping between two steps loses
/// nothing (\Seen follows the commit).
pub async fn run(deps: WorkerDeps, shutdown: CancellationToken) {
    run_with(deps, shutdown, |outcome| match outcome {
        TickOutcome::Polled(r) => tracing::info!(
            unseen = r.unseen,
            inserted = r.inserted,
            duplicates = r.duplicates,
            blocked = r.blocked,
            classified = r.classified,
            failed = r.classify_failed,
            "Atlas tick"
        ),
        TickOutcome::Failed(reason) => tracing::warn!(%reason, "Atlas tick failed; retried at the next one"),
    })
    .await;
    tracing::info!("Atlas poller stopped");
}

/// [`run`], each tick's outcome handed to `report`.
pub async fn run_with(deps: WorkerDeps, shutdown: CancellationToken, mut report: impl FnMut(&TickOutcome)) {
    let mut every = Every::new(Duration::ZERO, deps.period, &shutdown);
    while every.tick().await {
        report(&tick(&deps).await);
    }
}

/// What one scan-and-classify pass did (without polling).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassifyPass {
    pub scanned: usize,
    pub blocked: usize,
    pub classified: usize,
    pub failed: usize,
}

/// One scan-and-classify pass of what is pending.
pub async fn classify_pass(atlas: &Atlas) -> Result<ClassifyPass, AtlasStoreError> {
    let (scanned, blocked) = atlas.scan_pending().await?;
    let (classified, failed) = atlas.classify_pending().await?;
    Ok(ClassifyPass { scanned, blocked, classified, failed })
}

/// The classifier alone (`arthur atlas classify`): a pass every `period` until shutdown,
/// each pass's outcome handed to `report`.
pub async fn run_classifier(
    atlas: &Atlas,
    period: Duration,
    shutdown: CancellationToken,
    mut report: impl FnMut(Result<ClassifyPass, AtlasStoreError>),
) {
    let mut every = Every::new(Duration::ZERO, period, &shutdown);
    while every.tick().await {
        report(classify_pass(atlas).await);
    }
}

/// What the launcher inside `arthur serve` works with.
pub struct LauncherDeps {
    pub launcher: Launcher,
    /// The first cycle this long after the start (so the poll has classified).
    pub offset: Duration,
    pub period: Duration,
}

/// The launcher inside `arthur serve`: first cycle `offset` after the start, then every
/// `period`. The lock watchdog is a task of its own (`watchdog::run`): a cycle can last hours.
pub async fn run_launcher(deps: LauncherDeps, shutdown: CancellationToken) {
    run_launcher_with(deps, None, shutdown, |cycle| match cycle {
        Ok(r) => tracing::info!(
            launched = r.launched,
            actioned = r.actioned,
            failed = r.failed,
            held = r.held,
            "Atlas launch cycle"
        ),
        Err(e) => tracing::warn!(error = %e, "Atlas launch cycle failed; retried at the next one"),
    })
    .await;
    tracing::info!("Atlas launcher stopped");
}

/// [`run_launcher`], each cycle's outcome handed to `report`; with a `watchdog`, each cycle
/// comes after a check of the old locks (`arthur atlas launch`), whose failure fails the
/// cycle. On a stop request the run in flight is interrupted and salvaged by the launcher
/// itself (when it holds the token); a process killed harder is reclaimed at the next start.
pub async fn run_launcher_with(
    deps: LauncherDeps,
    watchdog: Option<LockWatchdog>,
    shutdown: CancellationToken,
    mut report: impl FnMut(Result<CycleReport, AtlasStoreError>),
) {
    let LauncherDeps { launcher, offset, period } = deps;
    let mut every = Every::new(offset, period, &shutdown);
    while every.tick().await {
        let checked = match &watchdog {
            Some(w) => w.check().await.map(|_| ()),
            None => Ok(()),
        };
        report(match checked {
            Ok(()) => launcher.cycle().await,
            Err(e) => Err(e),
        });
    }
}
