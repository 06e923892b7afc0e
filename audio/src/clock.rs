//! Sample clocks on the wall clock: when a sample of a stream (the loudspeaker's, the
//! microphone's) passed, from stamps taken as the stream flows. The echo canceller's
//! reference is looked up by the microphone's capture time on the loudspeaker's clock, so
//! both must count samples, not arrivals.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The instant of sample 0 of a stream whose samples are stamped as they pass
/// (`instant − index / rate`): the earliest stamp wins, since a stamp can be late (a
/// callback scheduled late, a frame that waited in a queue) but never early. It rises by
/// at most [`StreamOrigin::LEAK`] a second, so that a device whose clock runs slow against
/// the system's is followed in the end — slowly: the earliest stamps come in bursts (a
/// device filling its buffer at start), and an origin rising faster than that slides the
/// reference against the echo (500 ppm made AEC3 lose 20 dB).
#[derive(Debug, Clone, Copy)]
pub struct StreamOrigin {
    origin: Instant,
    seen: Instant,
}

impl StreamOrigin {
    /// 10 ppm: a slide AEC3 follows without loss (0.6 ms a minute).
    const LEAK: f64 = 1e-5;

    pub fn new(stamp: Instant, index: u64, rate: u32) -> Self {
        let origin = Self::sample_zero(stamp, index, rate);
        Self { origin, seen: stamp }
    }

    fn sample_zero(stamp: Instant, index: u64, rate: u32) -> Instant {
        let elapsed = Duration::from_secs_f64(index as f64 / f64::from(rate.max(1)));
        stamp.checked_sub(elapsed).unwrap_or(stamp)
    }

    /// Takes a stamp: sample `index` passed at `stamp`.
    pub fn observe(&mut self, stamp: Instant, index: u64, rate: u32) {
        let candidate = Self::sample_zero(stamp, index, rate);
        let leak = Duration::from_secs_f64(stamp.saturating_duration_since(self.seen).as_secs_f64() * Self::LEAK);
        self.seen = self.seen.max(stamp);
        self.origin = (self.origin + leak).min(candidate);
    }

    /// Takes the stamps another copy of the same stream's origin saw.
    pub fn merge(&mut self, other: &StreamOrigin) {
        self.origin = self.origin.min(other.origin);
        self.seen = self.seen.max(other.seen);
    }

    /// When sample `index` (at `rate`) passed.
    pub fn instant_of(&self, index: u64, rate: u32) -> Instant {
        self.origin + Duration::from_secs_f64(index as f64 / f64::from(rate.max(1)))
    }

    /// The (fractional) sample index at `at`; negative before the origin.
    pub fn index_at(&self, at: Instant, rate: u32) -> f64 {
        let secs = match at.checked_duration_since(self.origin) {
            Some(d) => d.as_secs_f64(),
            None => -self.origin.saturating_duration_since(at).as_secs_f64(),
        };
        secs * f64::from(rate)
    }
}

/// The microphone's clock as the voice loop sees it: the capture time of the frames it
/// was handed, by their index in what it received (a frame dropped on the way restarts
/// it, since indices and capture times no longer match).
#[derive(Debug, Clone, Default)]
pub struct CaptureClock(Arc<Mutex<Option<StreamOrigin>>>);

impl CaptureClock {
    /// Samples up to `index_end` (at `rate`) were captured by `captured`.
    pub fn stamp(&self, index_end: u64, captured: Instant, rate: u32) {
        if let Ok(mut origin) = self.0.lock() {
            match origin.as_mut() {
                Some(o) => o.observe(captured, index_end, rate),
                None => *origin = Some(StreamOrigin::new(captured, index_end, rate)),
            }
        }
    }

    /// Forgets the origin (after a drop: the next stamp starts afresh).
    pub fn reset(&self) {
        if let Ok(mut origin) = self.0.lock() {
            *origin = None;
        }
    }

    /// When sample `index` was captured, once a stamp was taken.
    pub fn instant_of(&self, index: u64, rate: u32) -> Option<Instant> {
        self.0.lock().ok()?.as_ref().map(|o| o.instant_of(index, rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Late stamps leave the origin alone, an earlier one moves it back, and without any
    /// it rises by at most 10 ppm.
    #[test]
    fn a_stream_origin_is_its_earliest_stamp() {
        let t0 = Instant::now();
        let ms = |n: u64| Duration::from_millis(n);
        let mut origin = StreamOrigin::new(t0 + ms(10), 480, 48_000); // 10 ms late
        assert_eq!(origin.instant_of(0, 48_000), t0);
        origin.observe(t0 + ms(1_030), 48_000, 48_000); // 30 ms late
        let drift = origin.instant_of(0, 48_000).duration_since(t0);
        assert!(drift <= Duration::from_micros(11), "{drift:?}");
        origin.observe(t0 + ms(1_995), 96_000, 48_000); // 5 ms before t0's schedule
        let back = t0.duration_since(origin.instant_of(0, 48_000));
        assert!(back >= ms(4), "{back:?}");
        assert!((origin.index_at(t0 + ms(1_000), 48_000) - 48_240.0).abs() < 30.0);
    }
}
