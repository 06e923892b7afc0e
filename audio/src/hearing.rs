//! The signal side of a voice loop: each microphone frame has what the loudspeaker played
//! over it removed (AEC3, with the live capture's timing), then goes to the speech
//! detector; the echo left after cancellation is measured so that, on a real device where
//! the canceller is not perfect (or not yet converged), Arthur's own voice is not taken for
//! the user cutting in. Time is the audio's: samples heard, mapped onto an `Instant`.
//!
//! The loops of `arthur-voice` own the frame stream and the turn-taking; this owns no I/O.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::clock::CaptureClock;
use crate::detect::energy_db;
use crate::echo::EchoCanceller;
use crate::playback::Speaker;
use crate::vad::Vad;
use crate::SAMPLE_RATE_HZ;

/// How many frames (30 ms each) a live microphone frame waits for the loudspeaker's
/// reference: more than the device's output buffer (rodio asks for 50 ms) plus scheduling.
const HOLD_FRAMES: usize = 4;

/// The frames heard so far: the clock, the echo canceller and the voice detector.
pub struct Hearing {
    pub vad: Vad,
    aec: Option<EchoCanceller>,
    reference: Vec<f32>,
    /// What is left of the echo after cancellation, measured while Arthur speaks.
    residual: Residual,
    /// When each frame received was captured (a live microphone; replays have none).
    clock: Option<CaptureClock>,
    /// Energy of the microphone before and after cancellation over the frames where
    /// something played and the user did not stand out: the answer's ERLE.
    erle: (f64, f64),
    /// Live frames waiting for the loudspeaker's reference over them, with their capture
    /// time (see [`Hearing::hear`]).
    held: VecDeque<(Vec<f32>, Instant)>,
    samples: u64,
    start: Instant,
}

/// The echo left after cancellation: the level of the cleaned microphone relative to the
/// level of what played, while something played and nobody stood out.
#[derive(Debug, Default)]
struct Residual {
    /// Cleaned minus played level, dB, for recent frames with playback.
    gaps: VecDeque<f32>,
    /// Recent played levels, dB (smoothed like the VAD's level).
    played: VecDeque<f32>,
}

impl Residual {
    const WINDOW: usize = 200; // frames: 6 s of playback
    /// Until enough playback was heard, the echo is assumed to come back unattenuated.
    const UNKNOWN_DB: f32 = 0.0;

    fn observe(&mut self, cleaned_db: f32, played_db: f32, user_speaking: bool) {
        self.played.push_back(played_db);
        while self.played.len() > 5 {
            self.played.pop_front();
        }
        if played_db > -50.0 && !user_speaking {
            self.gaps.push_back(cleaned_db - played_db);
            while self.gaps.len() > Self::WINDOW {
                self.gaps.pop_front();
            }
        }
    }

    /// The echo's level after cancellation now (dBFS): recent played level + the 90th
    /// percentile of the residual gap.
    fn expected_db(&self) -> f32 {
        let played = self.played.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let gap = if self.gaps.len() < 50 {
            Self::UNKNOWN_DB
        } else {
            let mut g: Vec<f32> = self.gaps.iter().copied().collect();
            g.sort_by(f32::total_cmp);
            g[g.len() * 9 / 10]
        };
        played + gap
    }
}

impl Hearing {
    /// `echo_cancellation`: only where a loudspeaker echoes (AEC3 would only muffle the
    /// user otherwise); `clock`: the live microphone's capture times, none for a recording.
    pub fn new(vad: Vad, echo_cancellation: bool, clock: Option<CaptureClock>) -> Self {
        Self {
            vad,
            aec: echo_cancellation.then(EchoCanceller::new),
            reference: Vec::new(),
            residual: Residual::default(),
            clock,
            held: VecDeque::new(),
            erle: (0.0, 0.0),
            samples: 0,
            start: Instant::now(),
        }
    }

    /// Samples received so far (the frames counted by [`Hearing::received`]).
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Audio time, in seconds.
    pub fn secs(&self) -> f64 {
        self.samples as f64 / f64::from(SAMPLE_RATE_HZ)
    }

    /// The listener's clock: audio time mapped onto an `Instant`.
    pub fn now(&self) -> Instant {
        self.start + Duration::from_secs_f64(self.secs())
    }

    /// A frame of `len` samples came in: audio time advances.
    pub fn received(&mut self, len: usize) {
        self.samples += len as u64;
    }

    /// When the last frame received finished being captured, on the wall clock (the
    /// loudspeaker's reference is laid out on it).
    fn captured_at(&self) -> Instant {
        self.clock.as_ref().and_then(|c| c.instant_of(self.samples, SAMPLE_RATE_HZ)).unwrap_or_else(|| self.now())
    }

    /// A frame just received: the speaker advances by it, and what it played meanwhile is
    /// removed from it.
    pub fn hear(&mut self, frame: &mut [f32], speaker: &mut dyn Speaker) {
        speaker.advance(frame.len());
        let mut at = self.captured_at();
        if self.aec.is_some() && self.clock.is_some() {
            // A live microphone: the loudspeaker's reference for a frame is what the device
            // pulled at its capture time, and the device pulls a buffer at a time — the
            // stretch for a frame just captured may not be pulled yet. The frame waits until
            // `HOLD_FRAMES` more were captured (so that long has gone by on the wall clock).
            self.held.push_back((frame.to_vec(), at));
            if self.held.len() <= HOLD_FRAMES {
                frame.fill(0.0);
                return;
            }
            let Some((older, when)) = self.held.pop_front() else { return };
            if older.len() != frame.len() {
                frame.fill(0.0);
                return;
            }
            frame.copy_from_slice(&older);
            at = when;
        }
        if let Some(aec) = self.aec.as_mut() {
            speaker.reference(at, frame.len(), &mut self.reference);
            let before = energy(frame);
            aec.process(frame, &self.reference);
            let user = self.vad.is_foreground_now();
            if energy_db(&self.reference) > -50.0 && !user {
                self.erle.0 += before;
                self.erle.1 += energy(frame);
            }
            self.residual.observe(energy_db(frame), energy_db(&self.reference), user);
        }
    }

    /// The echo return loss enhancement over what played since the last call (dB), logged.
    pub fn report_erle(&mut self) {
        let (mic, cleaned) = std::mem::take(&mut self.erle);
        if mic > 0.0 {
            let erle_db = 10.0 * (mic / cleaned.max(1e-12)).log10();
            tracing::info!("echo cancelled over the answer: ERLE {erle_db:.1} dB");
        }
    }

    /// The echo's expected level after cancellation now (dBFS), for the log.
    pub fn echo_db(&self) -> f32 {
        self.residual.expected_db()
    }

    /// Whether speech heard now is above what is left of Arthur's own echo (always, with
    /// no loudspeaker in the room).
    pub fn above_echo(&self) -> bool {
        const MARGIN_DB: f32 = 6.0;
        self.aec.is_none() || self.vad.level_db() >= self.residual.expected_db() + MARGIN_DB
    }
}

fn energy(x: &[f32]) -> f64 {
    x.iter().map(|v| f64::from(*v) * f64::from(*v)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_is_assumed_whole_until_enough_playback_was_heard() {
        let mut r = Residual::default();
        for _ in 0..49 {
            r.observe(-40.0, -20.0, false);
        }
        assert_eq!(r.expected_db(), -20.0, "unknown: as loud as what played");
        r.observe(-40.0, -20.0, false);
        assert_eq!(r.expected_db(), -40.0, "measured: 20 dB below what played");
        // The user speaking over the answer is not echo.
        for _ in 0..200 {
            r.observe(-10.0, -20.0, true);
        }
        assert_eq!(r.expected_db(), -40.0);
    }

    #[test]
    fn audio_time_is_samples_received() {
        let mut h = Hearing::new(Vad::new(Default::default()), false, None);
        h.received(SAMPLE_RATE_HZ as usize / 2);
        assert_eq!(h.samples(), 8_000);
        assert!((h.secs() - 0.5).abs() < 1e-9);
        assert!(h.above_echo(), "no loudspeaker, no echo");
    }
}
