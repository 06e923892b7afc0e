//! Atlas' worker loops as `arthur serve` runs them (`run(deps, shutdown)`): the poller
//! publishes each tick's outcome on its status channel, and every loop — poller, launcher,
//! lock watchdog — stops when its `CancellationToken` is cancelled, the launcher without
//! starting a cycle when the stop comes before its offset.

use std::time::Duration;

use arthur_atlas::imap::ImapAccount;
use arthur_atlas::store::AtlasStore;
use arthur_atlas::watchdog::{LockWatchdog, WatchdogDeps};
use arthur_atlas::worker::{self, LauncherDeps, PollStatus, WorkerDeps};
use arthur_atlas::{audit, notify::Notifier};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::support::launch::LaunchApp;
use crate::support::*;

/// A bound on how long a cancelled loop may take to return (it should be at once).
const STOPS_WITHIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread")]
async fn the_poller_publishes_its_ticks_and_stops_when_cancelled() {
    let app = spawn_atlas().await;
    // Nothing listens there: the tick fails, and says why.
    let port = clamav::free_port();
    let account = ImapAccount::parse(&format!("imap://atlas:secret@127.0.0.1:{port}/INBOX")).unwrap();
    let (status, mut seen) = watch::channel(PollStatus::default());
    let stop = CancellationToken::new();
    let deps = WorkerDeps { atlas: app.atlas, account, period: Duration::from_secs(3600), status };
    let task = tokio::spawn(worker::run(deps, stop.clone()));
    tokio::time::timeout(STOPS_WITHIN, seen.changed()).await.expect("the first tick runs at once").unwrap();
    let s = seen.borrow_and_update().clone();
    assert!(s.last_error.is_some(), "{s:?}");
    assert_eq!((s.last_poll, s.classified), (None, 0), "a failed tick is not a poll");
    assert!(!s.last_error.unwrap().contains("secret"), "the password stays out of the status");
    stop.cancel();
    tokio::time::timeout(STOPS_WITHIN, task).await.expect("the poller stops when cancelled").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_launcher_cancelled_before_its_offset_launches_nothing_and_the_watchdog_stops() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Corriger le panier").await;
    let stop = CancellationToken::new();
    let launcher = t.launcher(t.claude("success", None), |_| {});
    let deps = LauncherDeps { launcher, offset: Duration::from_secs(120), period: Duration::from_secs(300) };
    let task = tokio::spawn(worker::run_launcher(deps, stop.clone()));
    let notifier = Notifier {
        store: t.app.store.clone(),
        clock: t.app.clock.clone(),
        smtp: None,
        founder: Some(FOUNDER.into()),
        mailbox: None,
    };
    let watchdog = LockWatchdog { store: t.app.store.clone(), clock: t.app.clock.clone(), notifier };
    let checks = tokio::spawn(arthur_atlas::watchdog::run(
        WatchdogDeps { watchdog, period: Duration::from_secs(900) },
        stop.clone(),
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.cancel();
    tokio::time::timeout(STOPS_WITHIN, task).await.expect("the launcher stops when cancelled").unwrap();
    tokio::time::timeout(STOPS_WITHIN, checks).await.expect("the watchdog stops when cancelled").unwrap();
    assert!(!t.app.events(row.id).await.contains(&audit::SPAWN_STARTED.to_string()), "no cycle before the offset");
    assert!(t.app.store.launches(row.id).await.unwrap().is_empty());
}
