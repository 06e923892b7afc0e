//! The board `arthur serve`'s components report into (the voice, the bell, the notifier,
//! Atlas' workers, the Wyoming services), read by `GET /healthz` and the web pages.

use std::path::PathBuf;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Live state reported by the running components.
#[derive(Default)]
pub struct HealthBoard {
    state: Mutex<LiveState>,
    /// What the bell and the notifier counted, read at each snapshot. A function `serve`
    /// gives, so that this crate needs neither the bell nor the voice (none: all zeros).
    counts: Option<Box<dyn Fn() -> Counts + Send + Sync>>,
}

impl std::fmt::Debug for HealthBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthBoard")
            .field("state", &self.state)
            .field("counts", &self.counts.as_ref().map(|c| c()))
            .finish()
    }
}

/// What the bell and the notifier did since the start, as the board shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub reminders_due: u64,
    pub reminders_printed: u64,
    pub timers_rung: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveState {
    /// "à l'écoute (…)", or why the voice is off; `None` outside `arthur serve`.
    pub voice: Option<String>,
    pub voice_name: Option<String>,
    pub whisper_model: Option<PathBuf>,
    /// Reminders that came due since the start (claimed by this notifier; from the tally).
    pub reminders_due: u64,
    /// Of those, printed on serve's stdout.
    pub reminders_printed: u64,
    /// Timers that rang since the start.
    pub timers_rung: u64,
    pub providers: Vec<ProviderCheck>,
    pub atlas_last_poll: Option<DateTime<Utc>>,
    /// Why the last Atlas tick failed (cleared by the next good one).
    pub atlas_last_error: Option<String>,
    /// Messages classified by the Atlas poller since the start.
    pub atlas_classified: u64,
    /// The Wyoming server and satellites (issue 31).
    pub wyoming: WyomingHealth,
}

impl HealthBoard {
    /// A board whose counts are read from `counts` at each snapshot.
    pub fn counting(counts: impl Fn() -> Counts + Send + Sync + 'static) -> Self {
        Self { state: Mutex::default(), counts: Some(Box::new(counts)) }
    }

    pub fn update(&self, f: impl FnOnce(&mut LiveState)) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut state);
    }

    pub fn snapshot(&self) -> LiveState {
        let mut live = self.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let counts = self.counts.as_ref().map(|c| c()).unwrap_or_default();
        live.reminders_due = counts.reminders_due;
        live.reminders_printed = counts.reminders_printed;
        live.timers_rung = counts.timers_rung;
        live
    }
}

/// One provider: configured (a key is set) and, when checked, reachable.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderCheck {
    pub name: &'static str,
    pub base_url: String,
    /// `None` until checked; `Some(false)` when no HTTP answer came within the timeout.
    pub reachable: Option<bool>,
}

/// The Wyoming part of `/healthz`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WyomingHealth {
    /// Where the server listens; `None`: off.
    pub server: Option<String>,
    pub satellites: Vec<SatelliteHealth>,
}

/// One satellite's link, as `serve` copies it from the satellite's status.
#[derive(Debug, Clone, Serialize)]
pub struct SatelliteHealth {
    pub address: String,
    pub name: Option<String>,
    /// `connecting`, `connected`, or `waiting` (gone; retried at `retry_at`).
    pub state: &'static str,
    pub since: DateTime<Utc>,
    pub last_error: Option<String>,
    pub connections: u64,
    pub retry_at: Option<DateTime<Utc>>,
}
