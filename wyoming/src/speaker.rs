//! Arthur's voice on a satellite: a [`Speaker`] (the voice loop's sink) that sends what it
//! plays as `audio-start`, `audio-chunk`s and `audio-stop` to the satellite, paced by the
//! loop's own clock — the satellite's microphone audio — a little ahead of it, so that a
//! stop (barge-in, « stop ») cuts the answer within that lead instead of after everything
//! already sent. Like the WAV speaker, it plays in audio time and knows what it played, the
//! echo canceller's reference.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arthur_audio::playback::{PlaybackError, Speaker};
use arthur_audio::tts::Pcm;
use arthur_audio::wav::resample;
use arthur_audio::SAMPLE_RATE_HZ;

use crate::audio::{encode_i16, AudioFormat};
use crate::event::Event;
use crate::server::SAMPLES_PER_CHUNK;

/// How far ahead of the satellite's clock audio is sent: what a stop cannot take back.
pub const LEAD_SECS: f32 = 0.5;

/// Where a [`SatelliteSpeaker`] sends its events (the satellite's connection, when there is
/// one: audio sent while it is away is lost, and the speaker goes on in audio time).
pub trait Outbox: Send + Sync {
    fn send(&self, event: Event);
}

/// The satellite's playback rate: the one it asked for (`snd_format` of its `run-pipeline`),
/// else 22,050 Hz, the default of wyoming-satellite's `--snd-command-rate`.
#[derive(Debug, Clone)]
pub struct OutputRate(Arc<AtomicU32>);

impl Default for OutputRate {
    fn default() -> Self {
        Self(Arc::new(AtomicU32::new(22_050)))
    }
}

impl OutputRate {
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    pub fn set(&self, rate: u32) {
        if crate::audio::RATES.contains(&rate) {
            self.0.store(rate, Ordering::Relaxed);
        }
    }
}

pub struct SatelliteSpeaker {
    outbox: Arc<dyn Outbox>,
    rate: OutputRate,
    /// The rate of the stream being sent (fixed from its `audio-start` to its `audio-stop`).
    stream_rate: Option<u32>,
    /// Not yet sent, at `stream_rate` (or the output rate when no stream is open).
    unsent: VecDeque<f32>,
    /// Not yet played, in audio time (16 kHz): decides `is_playing`, gives the reference.
    unplayed: VecDeque<f32>,
    /// Of the stream being sent: 16 kHz samples played, samples sent at its rate.
    played: u64,
    sent: u64,
    last: Vec<f32>,
    stops: usize,
    /// Counts the input samples gone by (the loop's clock), for whoever watches it.
    clock: Option<Arc<AtomicU64>>,
}

impl SatelliteSpeaker {
    pub fn new(outbox: Arc<dyn Outbox>, rate: OutputRate) -> Self {
        Self {
            outbox,
            rate,
            stream_rate: None,
            unsent: VecDeque::new(),
            unplayed: VecDeque::new(),
            played: 0,
            sent: 0,
            last: Vec::new(),
            stops: 0,
            clock: None,
        }
    }

    /// Adds every input sample gone by to `clock`.
    pub fn counting(mut self, clock: Arc<AtomicU64>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// How many times playback was stopped before its end.
    pub fn interruptions(&self) -> usize {
        self.stops
    }

    /// Sends what the clock allows: up to [`LEAD_SECS`] ahead of what has played.
    fn pump(&mut self) {
        let Some(rate) = self.stream_rate else { return };
        let lead = (LEAD_SECS * SAMPLE_RATE_HZ as f32) as u64;
        let allowed = self.played.saturating_add(lead).saturating_mul(u64::from(rate)) / u64::from(SAMPLE_RATE_HZ);
        while self.sent < allowed && !self.unsent.is_empty() {
            let n = SAMPLES_PER_CHUNK.min(self.unsent.len()).min((allowed - self.sent) as usize).max(1);
            let piece: Vec<f32> = self.unsent.drain(..n).collect();
            self.sent += n as u64;
            let chunk = Event::with_data("audio-chunk", AudioFormat::mono16(rate).to_data());
            self.outbox.send(chunk.with_payload(encode_i16(&piece)));
        }
    }

    fn close_stream(&mut self) {
        if self.stream_rate.take().is_some() {
            self.outbox.send(Event::new("audio-stop"));
        }
        self.unsent.clear();
        self.played = 0;
        self.sent = 0;
    }
}

impl Speaker for SatelliteSpeaker {
    fn enqueue(&mut self, pcm: &Pcm) -> Result<(), PlaybackError> {
        if pcm.rate == 0 {
            return Err(PlaybackError::Failed("sample rate 0".into()));
        }
        let rate = match self.stream_rate {
            Some(rate) => rate,
            None => {
                let rate = self.rate.get();
                self.outbox.send(Event::with_data("audio-start", AudioFormat::mono16(rate).to_data()));
                self.stream_rate = Some(rate);
                rate
            }
        };
        self.unsent.extend(resample(&pcm.samples, pcm.rate, rate));
        self.unplayed.extend(resample(&pcm.samples, pcm.rate, SAMPLE_RATE_HZ));
        self.pump();
        Ok(())
    }

    fn is_playing(&self) -> bool {
        !self.unplayed.is_empty()
    }

    fn stop(&mut self) {
        if self.is_playing() {
            self.stops += 1;
        }
        self.unplayed.clear();
        self.close_stream();
    }

    fn advance(&mut self, samples: usize) {
        if let Some(clock) = &self.clock {
            clock.fetch_add(samples as u64, Ordering::AcqRel);
        }
        let n = samples.min(self.unplayed.len());
        self.last.clear();
        self.last.extend(self.unplayed.drain(..n));
        self.last.resize(samples, 0.0);
        if self.stream_rate.is_some() {
            self.played += n as u64;
            self.pump();
            if self.unplayed.is_empty() {
                // Played out: what rounding left unsent goes, then the stream ends.
                self.played = u64::MAX / 4;
                self.pump();
                self.close_stream();
            }
        }
    }

    fn reference(&mut self, _at: Instant, samples: usize, out: &mut Vec<f32>) {
        out.clear();
        out.extend_from_slice(&self.last[..self.last.len().min(samples)]);
        out.resize(samples, 0.0);
    }

    /// A satellite is a loudspeaker in a room: what it plays comes back into its microphone.
    fn echoes(&self) -> bool {
        true
    }

    fn drain(&mut self) {
        self.played = u64::MAX / 4;
        self.pump();
        self.unplayed.clear();
        self.close_stream();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Sent(Mutex<Vec<Event>>);

    impl Outbox for Sent {
        fn send(&self, event: Event) {
            self.0.lock().unwrap().push(event);
        }
    }

    impl Sent {
        fn take(&self) -> Vec<Event> {
            std::mem::take(&mut self.0.lock().unwrap())
        }
    }

    fn samples(events: &[Event]) -> usize {
        events.iter().filter(|e| e.is("audio-chunk")).map(|e| e.payload().len() / 2).sum()
    }

    #[test]
    fn audio_goes_out_a_lead_ahead_of_the_satellites_clock_and_ends_with_a_stop() {
        let sent = Arc::new(Sent::default());
        let mut speaker = SatelliteSpeaker::new(sent.clone(), OutputRate::default());
        speaker.enqueue(&Pcm { samples: vec![0.25; 32_000], rate: 16_000 }).unwrap();
        let first = sent.take();
        assert!(first[0].is("audio-start") && first[0].data["rate"] == 22_050, "{:?}", first[0]);
        assert_eq!(samples(&first), 11_025, "half a second at 22,050 Hz is sent at once");
        assert!(speaker.is_playing());
        speaker.advance(16_000);
        assert_eq!(samples(&sent.take()), 22_050, "one second later, one second more");
        speaker.advance(16_000);
        let end = sent.take();
        assert_eq!(samples(&end), 11_025, "the rest");
        assert!(end.last().unwrap().is("audio-stop"));
        assert!(!speaker.is_playing());
        let mut reference = Vec::new();
        speaker.reference(Instant::now(), 16_000, &mut reference);
        assert!(reference.iter().all(|s| *s == 0.25), "the reference is what played");
        speaker.advance(480);
        speaker.reference(Instant::now(), 480, &mut reference);
        assert!(reference.iter().all(|s| *s == 0.0), "then silence");
        assert!(sent.take().is_empty());
    }

    #[test]
    fn a_stop_sends_nothing_more_and_the_rate_asked_for_is_used() {
        let sent = Arc::new(Sent::default());
        let rate = OutputRate::default();
        rate.set(16_000);
        let mut speaker = SatelliteSpeaker::new(sent.clone(), rate);
        speaker.enqueue(&Pcm { samples: vec![0.25; 44_100 * 3], rate: 44_100 }).unwrap();
        speaker.advance(4_800);
        let mut reference = Vec::new();
        speaker.reference(Instant::now(), 4_800, &mut reference);
        assert!(reference.iter().skip(100).all(|s| (*s - 0.25).abs() < 0.01), "the reference is what played");
        speaker.stop();
        let events = sent.take();
        assert_eq!(events[0].data["rate"], 16_000);
        assert_eq!(samples(&events), 8_000 + 4_800, "the lead and what played, no more");
        assert!(events.last().unwrap().is("audio-stop"));
        assert_eq!(speaker.interruptions(), 1);
        speaker.advance(16_000);
        assert!(sent.take().is_empty(), "nothing after a stop");
        speaker.enqueue(&Pcm { samples: vec![0.1; 1_600], rate: 16_000 }).unwrap();
        speaker.drain();
        let again = sent.take();
        assert!(again[0].is("audio-start") && again.last().unwrap().is("audio-stop"));
        assert_eq!(samples(&again), 1_600);
    }
}
