//! The lock watchdog (spec §10: "alerte si un advisory lock zombie traîne plus de 10 min"): a
//! task of its own in `arthur serve`, independent of the launch cycle — which can run for
//! hours and must not silence it. Every check audits each launch lock held for more than 10
//! minutes and e-mails the founder once per lock (a notice keyed by message, holder and
//! acquisition time), never once per check.

use std::sync::Arc;
use std::time::Duration;

use arthur_agents::time::Clock;

use super::events::LaunchEvent;
use super::notify::Notifier;
use super::store::{AtlasStore, AtlasStoreError, NewNotice};
use tokio_util::sync::CancellationToken;

/// The watchdog's period (spec §10: every 15 minutes).
pub const PERIOD: Duration = Duration::from_secs(15 * 60);

#[derive(Clone)]
pub struct LockWatchdog {
    pub store: Arc<dyn AtlasStore>,
    pub clock: Arc<dyn Clock>,
    pub notifier: Notifier,
}

impl LockWatchdog {
    /// One check: the locks held too long (each audited, each e-mailed once); their count.
    pub async fn check(&self) -> Result<usize, AtlasStoreError> {
        let now = self.clock.now();
        let old = self.store.old_leases(now - chrono::Duration::minutes(LOCK_ALERT_MINUTES)).await?;
        for (email_id, holder, since) in &old {
            tracing::warn!(email = email_id, %holder, %since, "Atlas lock held for more than 10 minutes");
            let event = LaunchEvent::LockWatchdogAlert { holder: holder.clone(), since: since.to_rfc3339() };
            self.store.audit(Some(*email_id), event.name(), event.detail(), now).await?;
            self.notifier.notify_once(lock_notice(*email_id, holder, *since, now)).await?;
        }
        Ok(old.len())
    }
}

/// The e-mail about one lock held too long.
pub fn lock_notice(
    email_id: i64,
    holder: &str,
    since: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
) -> NewNotice {
    let minutes = (now - since).num_minutes();
    NewNotice {
        email_id: Some(email_id),
        kind: "lock_alert".into(),
        dedupe_key: format!("lock:{email_id}:{holder}:{}", since.timestamp()),
        subject: format!("[Atlas] verrou bloqué — e-mail n° {email_id}"),
        body: format!(
            "Bonjour,\n\n\
             Le lancement de l'e-mail n° {email_id} tient son verrou depuis {minutes} minutes (détenteur : {holder}, \
             pris le {since}).\n\
             Un run peut durer longtemps ; mais si ce détenteur n'existe plus (machine arrêtée, processus tué), \
             le message attend : `arthur atlas show {email_id}` dit où il en est.\n\n\
             Ce message ne sera pas répété pour ce verrou.\n\n— Atlas\n",
            since = since.format("%d/%m/%Y %H:%M UTC"),
        ),
    }
}

/// The watchdog alerts on launch leases older than this.
pub const LOCK_ALERT_MINUTES: i64 = 10;

/// What the watchdog task works with.
pub struct WatchdogDeps {
    pub watchdog: LockWatchdog,
    /// Between two checks ([`PERIOD`] in `arthur serve`).
    pub period: Duration,
}

/// Checks every `period` until shutdown; a failed check is logged and retried at the next.
pub async fn run(deps: WatchdogDeps, shutdown: CancellationToken) {
    let WatchdogDeps { watchdog, period } = deps;
    let mut every = crate::schedule::Every::new(Duration::ZERO, period, &shutdown);
    while every.tick().await {
        match watchdog.check().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(locks = n, "Atlas lock watchdog: old locks reported"),
            Err(e) => tracing::warn!(error = %e, "Atlas lock watchdog failed; retried at the next check"),
        }
    }
    tracing::info!("Atlas lock watchdog stopped");
}
