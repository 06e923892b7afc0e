//! The board `arthur serve`'s components report into (the voice, the bell, the notifier,
//! Atlas' workers, the Wyoming services), read by `GET /healthz` and the web pages.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arthur_voice::tally::Tally;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Live state reported by the running components.
#[derive(Debug, Default)]
pub struct HealthBoard {
    state: Mutex<LiveState>,
    /// What the bell and the notifier count where they run.
    pub tally: Arc<Tally>,
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
    pub wyoming: arthur_voice::wyoming::WyomingHealth,
}

impl HealthBoard {
    pub fn update(&self, f: impl FnOnce(&mut LiveState)) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut state);
    }

    pub fn snapshot(&self) -> LiveState {
        let mut live = self.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let counts = self.tally.counts();
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
