//! What the bell and the notifier did since `arthur serve` started, counted where they run
//! and read by the health board (`/healthz`): counters, so neither needs the board itself.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Tally {
    /// Reminders that came due since the start (claimed by this notifier).
    reminders_due: AtomicU64,
    /// Of those, printed on serve's stdout.
    reminders_printed: AtomicU64,
    /// Timers that rang since the start.
    timers_rung: AtomicU64,
}

/// The counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub reminders_due: u64,
    pub reminders_printed: u64,
    pub timers_rung: u64,
}

impl Tally {
    pub fn reminder_due(&self, printed: bool) {
        self.reminders_due.fetch_add(1, Ordering::Relaxed);
        if printed {
            self.reminders_printed.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn timer_rang(&self) {
        self.timers_rung.fetch_add(1, Ordering::Relaxed);
    }

    pub fn counts(&self) -> Counts {
        Counts {
            reminders_due: self.reminders_due.load(Ordering::Relaxed),
            reminders_printed: self.reminders_printed.load(Ordering::Relaxed),
            timers_rung: self.timers_rung.load(Ordering::Relaxed),
        }
    }
}
