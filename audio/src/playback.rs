//! Where Arthur's voice goes: a [`Speaker`] queues speech sentence by sentence and can be
//! stopped at once (barge-in). [`DeviceSpeaker`] plays on the sound card with rodio;
//! [`WavSpeaker`] plays in *audio time* — it advances only as the loop consumes input
//! frames — and records what was played, so a replayed conversation (tests, `--output`)
//! behaves exactly like the live one, interruptions included.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::tts::Pcm;
use crate::wav;
use crate::SAMPLE_RATE_HZ;

#[derive(Debug, thiserror::Error)]
pub enum PlaybackError {
    #[error("no audio output device: {0}")]
    NoDevice(String),
    #[error("audio output failed: {0}")]
    Failed(String),
    #[error(transparent)]
    Wav(#[from] wav::WavError),
}

/// Something that plays speech.
pub trait Speaker: Send {
    /// Queues `pcm` after what is already queued; returns at once.
    fn enqueue(&mut self, pcm: &Pcm) -> Result<(), PlaybackError>;
    /// Whether queued audio is still playing.
    fn is_playing(&self) -> bool;
    /// Stops now and drops everything queued (barge-in).
    fn stop(&mut self);
    /// Tells the speaker that `samples` of input (16 kHz) went by. Speakers that play in
    /// audio time advance by that much; device speakers play on their own clock.
    fn advance(&mut self, _samples: usize) {}
    /// What reached the loudspeaker over the last `samples` of input, captured until
    /// `at`, at 16 kHz, one sample per input sample (silence when nothing played): the echo
    /// canceller's reference. Call once per input frame, after [`advance`](Self::advance).
    /// Speakers that cannot tell give silence.
    fn reference(&mut self, _at: Instant, samples: usize, out: &mut Vec<f32>) {
        out.clear();
        out.resize(samples, 0.0);
    }
    /// Whether what it plays can come back into the microphone (a loudspeaker in a room;
    /// not a file): only then is there an echo to cancel.
    fn echoes(&self) -> bool {
        true
    }
    /// Waits until everything queued has been played.
    fn drain(&mut self);
}

/// What a [`DeviceSpeaker`] handed to the device, on the wall clock: raw pieces (when
/// the device pulled them, their rate, their samples) as it pulled them, laid out at 16 kHz
/// on a timeline only when the loop asks — never on the audio thread. A piece pulled in a
/// burst plays after the one before it, so its place is the later of its pull time and the
/// end of the previous piece; silence between pieces is silence on the timeline. The
/// reference for a captured frame is then the stretch of timeline at the frame's capture
/// time: a constant offset from the echo (the device's latency) that the canceller finds,
/// where a first-in first-out queue would jitter with every burst.
#[derive(Default)]
struct Tap {
    raw: std::collections::VecDeque<(Instant, u32, Vec<f32>)>,
    raw_samples: usize,
    /// 16 kHz samples from `start`.
    timeline: std::collections::VecDeque<f32>,
    start: Option<Instant>,
    /// Where the next piece would follow on, at the latest.
    next: Option<Instant>,
    resampler: Option<(u32, wav::StreamResampler)>,
    scratch: Vec<f32>,
}

impl Tap {
    /// At most this much is kept (a loop that stopped asking lets it go).
    const MAX: usize = SAMPLE_RATE_HZ as usize * 6;

    fn push(&mut self, samples: &[f32], rate: u32) {
        self.raw.push_back((Instant::now(), rate, samples.to_vec()));
        self.raw_samples += samples.len();
        while self.raw_samples > Self::MAX * 4 {
            if let Some((_, _, front)) = self.raw.pop_front() {
                self.raw_samples -= front.len();
            }
        }
    }

    fn secs_to_samples(d: Duration) -> usize {
        (d.as_secs_f64() * f64::from(SAMPLE_RATE_HZ)).round() as usize
    }

    fn convert(&mut self) {
        while let Some((pulled, rate, samples)) = self.raw.pop_front() {
            self.raw_samples = self.raw_samples.saturating_sub(samples.len());
            let at = self.next.map_or(pulled, |n| n.max(pulled));
            let start = *self.start.get_or_insert(at);
            // Silence up to where this piece plays.
            let offset = Self::secs_to_samples(at.saturating_duration_since(start));
            if offset > self.timeline.len() {
                self.timeline.resize(offset, 0.0);
            }
            if self.resampler.as_ref().is_none_or(|(r, _)| *r != rate) {
                self.resampler = wav::StreamResampler::new(rate, SAMPLE_RATE_HZ).ok().map(|s| (rate, s));
            }
            let Some((_, resampler)) = self.resampler.as_mut() else { continue };
            self.scratch.clear();
            resampler.process(&samples, &mut self.scratch);
            self.timeline.extend(self.scratch.iter().copied());
            self.next = Some(at + Duration::from_secs_f64(samples.len() as f64 / f64::from(rate.max(1))));
        }
        let excess = self.timeline.len().saturating_sub(Self::MAX);
        if excess > 0 {
            self.timeline.drain(..excess);
            self.start = self.start.map(|s| s + Duration::from_secs_f64(excess as f64 / f64::from(SAMPLE_RATE_HZ)));
        }
    }

    /// The timeline over the `n` samples ending at `end` (silence where nothing played).
    fn extract(&mut self, end: Instant, n: usize, out: &mut Vec<f32>) {
        out.clear();
        out.resize(n, 0.0);
        let Some(start) = self.start else { return };
        let duration = Duration::from_secs_f64(n as f64 / f64::from(SAMPLE_RATE_HZ));
        let from = end.checked_sub(duration).unwrap_or(end);
        let (first, ahead) = match from.checked_duration_since(start) {
            Some(d) => (Self::secs_to_samples(d), 0),
            None => (0, Self::secs_to_samples(start.saturating_duration_since(from))),
        };
        for (i, slot) in out.iter_mut().enumerate().skip(ahead) {
            if let Some(v) = self.timeline.get(first + i - ahead) {
                *slot = *v;
            }
        }
        // What is older than this frame will not be asked for again.
        let done = first.min(self.timeline.len());
        self.timeline.drain(..done);
        self.start = Some(start + Duration::from_secs_f64(done as f64 / f64::from(SAMPLE_RATE_HZ)));
    }

    fn clear(&mut self) {
        self.raw.clear();
        self.raw_samples = 0;
        self.timeline.clear();
        self.start = None;
        self.next = None;
    }
}

/// A mono buffer whose samples are copied to the [`Tap`] as the device pulls them.
struct Tapped {
    inner: rodio::buffer::SamplesBuffer,
    rate: u32,
    tap: Arc<std::sync::Mutex<Tap>>,
    local: Vec<f32>,
}

impl Tapped {
    fn flush(&mut self) {
        if !self.local.is_empty() {
            if let Ok(mut tap) = self.tap.lock() {
                tap.push(&self.local, self.rate);
            }
            self.local.clear();
        }
    }
}

impl Iterator for Tapped {
    type Item = rodio::Sample;

    fn next(&mut self) -> Option<Self::Item> {
        let sample = self.inner.next();
        match sample {
            Some(s) => {
                self.local.push(s);
                if self.local.len() >= 256 {
                    self.flush();
                }
            }
            None => self.flush(),
        }
        sample
    }
}

impl rodio::Source for Tapped {
    fn current_span_len(&self) -> Option<usize> {
        self.inner.current_span_len()
    }
    fn channels(&self) -> rodio::ChannelCount {
        self.inner.channels()
    }
    fn sample_rate(&self) -> rodio::SampleRate {
        self.inner.sample_rate()
    }
    fn total_duration(&self) -> Option<Duration> {
        self.inner.total_duration()
    }
}

/// Plays on an output device through rodio. The device stream lives on a thread of its
/// own; dropping the speaker closes it.
pub struct DeviceSpeaker {
    mixer: rodio::mixer::Mixer,
    player: rodio::Player,
    close: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    device: String,
    tap: Arc<std::sync::Mutex<Tap>>,
}

impl DeviceSpeaker {
    /// Opens the default output device.
    pub fn open_default() -> Result<Self, PlaybackError> {
        let (tx, rx) = mpsc::channel();
        let close = Arc::new(AtomicBool::new(false));
        let thread_close = close.clone();
        let thread = std::thread::Builder::new()
            .name("arthur-playback".into())
            .spawn(move || {
                let mut sink = match rodio::DeviceSinkBuilder::open_default_sink() {
                    Ok(sink) => sink,
                    Err(e) => {
                        let _ = tx.send(Err(PlaybackError::NoDevice(e.to_string())));
                        return;
                    }
                };
                sink.log_on_drop(false);
                let description =
                    format!("{} Hz, {} channel(s)", sink.config().sample_rate(), sink.config().channel_count());
                let _ = tx.send(Ok((sink.mixer().clone(), description)));
                while !thread_close.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                drop(sink);
            })
            .map_err(|e| PlaybackError::Failed(e.to_string()))?;
        let (mixer, device) = match rx.recv() {
            Ok(Ok(opened)) => opened,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => {
                let _ = thread.join();
                return Err(PlaybackError::Failed("playback thread ended".into()));
            }
        };
        tracing::info!(%device, "playing on the default output device");
        let player = rodio::Player::connect_new(&mixer);
        Ok(Self { mixer, player, close, thread: Some(thread), device, tap: Default::default() })
    }

    pub fn device(&self) -> &str {
        &self.device
    }
}

impl Speaker for DeviceSpeaker {
    fn enqueue(&mut self, pcm: &Pcm) -> Result<(), PlaybackError> {
        let (Some(rate), Some(channels)) = (std::num::NonZero::new(pcm.rate), std::num::NonZero::new(1u16)) else {
            return Err(PlaybackError::Failed("sample rate 0".into()));
        };
        if !pcm.samples.is_empty() {
            let inner = rodio::buffer::SamplesBuffer::new(channels, rate, pcm.samples.clone());
            self.player.append(Tapped { inner, rate: pcm.rate, tap: self.tap.clone(), local: Vec::with_capacity(256) });
        }
        Ok(())
    }

    fn reference(&mut self, at: Instant, samples: usize, out: &mut Vec<f32>) {
        let pieces = self.tap.lock().map(|mut tap| std::mem::take(&mut *tap)).ok();
        let Some(mut taken) = pieces else {
            out.clear();
            out.resize(samples, 0.0);
            return;
        };
        // Convert outside the lock the audio thread takes.
        taken.convert();
        taken.extract(at, samples, out);
        if let Ok(mut tap) = self.tap.lock() {
            // Put back what is left, before anything pulled meanwhile.
            let newer = std::mem::take(&mut *tap);
            *tap = taken;
            tap.raw.extend(newer.raw);
            tap.raw_samples += newer.raw_samples;
        }
    }

    fn is_playing(&self) -> bool {
        !self.player.empty()
    }

    fn stop(&mut self) {
        self.player.stop();
        if let Ok(mut tap) = self.tap.lock() {
            tap.clear();
        }
        // A stopped player waits for its queue to flush before taking more: start afresh.
        self.player = rodio::Player::connect_new(&self.mixer);
    }

    fn drain(&mut self) {
        self.player.sleep_until_end();
    }
}

impl Drop for DeviceSpeaker {
    fn drop(&mut self) {
        self.close.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Plays in audio time and keeps what was played (16 kHz mono).
#[derive(Debug, Default)]
pub struct WavSpeaker {
    queue: Vec<f32>,
    pos: usize,
    played: Vec<f32>,
    stops: usize,
    /// What the last `advance` played, silence-padded to its length.
    last: Vec<f32>,
}

impl WavSpeaker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything played so far, in order (16 kHz mono).
    pub fn played(&self) -> &[f32] {
        &self.played
    }

    /// How many times playback was stopped before its end.
    pub fn interruptions(&self) -> usize {
        self.stops
    }

    /// Writes what was played to a 16 kHz WAV file.
    pub fn write(&self, path: impl AsRef<std::path::Path>) -> Result<(), PlaybackError> {
        Ok(wav::write_wav(path, &self.played, SAMPLE_RATE_HZ)?)
    }
}

impl Speaker for WavSpeaker {
    fn enqueue(&mut self, pcm: &Pcm) -> Result<(), PlaybackError> {
        if pcm.rate == 0 {
            return Err(PlaybackError::Failed("sample rate 0".into()));
        }
        self.queue.extend(wav::resample(&pcm.samples, pcm.rate, SAMPLE_RATE_HZ));
        Ok(())
    }

    fn is_playing(&self) -> bool {
        self.pos < self.queue.len()
    }

    fn stop(&mut self) {
        if self.is_playing() {
            self.stops += 1;
        }
        self.queue.clear();
        self.pos = 0;
    }

    fn advance(&mut self, samples: usize) {
        let end = (self.pos + samples).min(self.queue.len());
        self.played.extend_from_slice(&self.queue[self.pos..end]);
        self.last.clear();
        self.last.extend_from_slice(&self.queue[self.pos..end]);
        self.last.resize(samples, 0.0);
        self.pos = end;
        if self.pos == self.queue.len() {
            self.queue.clear();
            self.pos = 0;
        }
    }

    fn reference(&mut self, _at: Instant, samples: usize, out: &mut Vec<f32>) {
        out.clear();
        out.extend_from_slice(&self.last[..self.last.len().min(samples)]);
        out.resize(samples, 0.0);
    }

    /// It plays into a file: nothing comes back.
    fn echoes(&self) -> bool {
        false
    }

    fn drain(&mut self) {
        let rest = self.queue.len() - self.pos;
        self.advance(rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces pulled in bursts land one after the other on the timeline, silence between
    /// answers stays silence, and a frame's reference is the stretch at its capture time.
    #[test]
    fn the_tap_lays_bursts_out_on_the_wall_clock() {
        let mut tap = Tap::default();
        let t0 = Instant::now();
        let ms = |n: u64| Duration::from_millis(n);
        // Two 100 ms pieces pulled at once, then one pulled 500 ms after t0.
        tap.raw.push_back((t0, 16_000, vec![0.1; 1_600]));
        tap.raw.push_back((t0, 16_000, vec![0.2; 1_600]));
        tap.raw.push_back((t0 + ms(500), 16_000, vec![0.3; 1_600]));
        tap.convert();
        let mut out = Vec::new();
        tap.extract(t0 + ms(30), 480, &mut out);
        assert!(out.iter().all(|v| *v == 0.1), "{:?}", &out[..4]);
        tap.extract(t0 + ms(150), 480, &mut out);
        assert!(out.iter().all(|v| *v == 0.2));
        tap.extract(t0 + ms(300), 480, &mut out);
        assert!(out.iter().all(|v| *v == 0.0), "silence between");
        tap.extract(t0 + ms(560), 480, &mut out);
        assert!(out.iter().all(|v| *v == 0.3));
        // Asked before anything played: silence.
        let mut empty = Tap::default();
        empty.extract(t0, 480, &mut out);
        assert!(out.len() == 480 && out.iter().all(|v| *v == 0.0));
    }

    fn tone(secs: f32, rate: u32) -> Pcm {
        Pcm { samples: (0..(secs * rate as f32) as usize).map(|i| (i as f32 * 0.05).sin() * 0.3).collect(), rate }
    }

    #[test]
    fn the_wav_speaker_plays_in_audio_time_and_stops_on_demand() {
        let mut speaker = WavSpeaker::new();
        assert!(!speaker.is_playing());
        speaker.enqueue(&tone(1.0, 22_050)).unwrap();
        speaker.enqueue(&tone(0.5, 16_000)).unwrap();
        assert!(speaker.is_playing());
        speaker.advance(8_000);
        assert_eq!(speaker.played().len(), 8_000, "half a second went by");
        let mut reference = Vec::new();
        speaker.reference(Instant::now(), 8_000, &mut reference);
        assert_eq!(reference, speaker.played(), "the reference is what played");
        speaker.stop();
        assert!(!speaker.is_playing());
        assert_eq!(speaker.interruptions(), 1);
        speaker.advance(16_000);
        assert_eq!(speaker.played().len(), 8_000, "nothing plays after a stop");
        speaker.reference(Instant::now(), 16_000, &mut reference);
        assert!(reference.len() == 16_000 && reference.iter().all(|s| *s == 0.0), "silence as reference");
        speaker.enqueue(&tone(0.25, 16_000)).unwrap();
        speaker.drain();
        assert_eq!(speaker.played().len(), 12_000);
        assert!(!speaker.is_playing());
        assert_eq!(speaker.interruptions(), 1, "draining is not an interruption");
    }
}
