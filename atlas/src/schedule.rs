//! The one schedule of Atlas' background workers (poller, classifier, launcher, lock watchdog):
//! a tick after an offset, then one per period, until shutdown — written once so that every
//! worker stops the same way.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// A tick after `offset`, then one every `period`, until the shutdown token is cancelled:
/// `while every.tick().await { … }`. A tick in progress (the loop's body) finishes first; a
/// stop request wins over a tick that is due.
pub struct Every {
    offset: Duration,
    period: Duration,
    shutdown: CancellationToken,
    interval: Option<tokio::time::Interval>,
}

impl Every {
    pub fn new(offset: Duration, period: Duration, shutdown: &CancellationToken) -> Self {
        Every { offset, period, shutdown: shutdown.clone(), interval: None }
    }

    /// Waits for the next tick: true, or false once stopped.
    pub async fn tick(&mut self) -> bool {
        if self.interval.is_none() {
            tokio::select! {
                biased;
                () = self.shutdown.cancelled() => return false,
                () = tokio::time::sleep(self.offset) => {}
            }
            let mut interval = tokio::time::interval(self.period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            self.interval = Some(interval);
        }
        let interval = self.interval.as_mut().expect("set above");
        tokio::select! {
            biased;
            () = self.shutdown.cancelled() => false,
            _ = interval.tick() => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ticks_until_the_stop_and_never_after() {
        let stop = CancellationToken::new();
        let mut ticks = 0;
        let mut every = Every::new(Duration::from_millis(5), Duration::from_millis(1), &stop);
        while every.tick().await {
            ticks += 1;
            if ticks == 3 {
                stop.cancel();
            }
        }
        assert_eq!(ticks, 3, "a stop request wins over a due tick");
        let stop = CancellationToken::new();
        stop.cancel();
        let mut ticks = 0;
        let mut every = Every::new(Duration::ZERO, Duration::from_secs(60), &stop);
        while every.tick().await {
            ticks += 1;
        }
        assert_eq!(ticks, 0, "stopped before the first tick");
    }
}
