//! Where Arthur's voice goes: a [`Speaker`] queues speech sentence by sentence and can be
//! stopped at once (barge-in). [`DeviceSpeaker`] plays on the sound card with rodio;
//! [`WavSpeaker`] plays in *audio time* — it advances only as the loop consumes input
//! frames — and records what was played, so a replayed conversation (tests, `--output`)
//! behaves exactly like the live one, interruptions included.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::clock::StreamOrigin;
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

/// What a [`DeviceSpeaker`] handed to the device, placed by *device sample count*: the
/// device's output is one continuous stream (rodio's mixer plays silence between
/// answers), so a piece's place in it is the number of device frames the mixer had
/// produced when the piece was pulled — read from a [`Clock`] source mixed in. Pieces are
/// laid out at 16 kHz on that stream's timeline only when the loop asks, never on the audio
/// thread. The wall clock enters once: the stream's origin, the earliest `pull instant −
/// frames / rate` seen (a callback can run late, never ahead of the device's buffer), so
/// a late callback moves nothing. (Laying pieces out by their pull instants inserted a gap
/// at every late callback: the reference slid against the echo by tens of milliseconds
/// within seconds and AEC3 did not converge.)
#[derive(Default)]
struct Tap {
    /// Pieces as pulled: device frame of their first sample, their rate, their samples.
    raw: std::collections::VecDeque<(u64, u32, Vec<f32>)>,
    raw_samples: usize,
    /// The device stream's rate (frames per second), once the clock ran.
    device_rate: u32,
    /// Wall-clock instant of device frame 0 (see the type's comment).
    origin: Option<StreamOrigin>,
    /// 16 kHz samples; `timeline[0]` is stream position `timeline_start` (16 kHz units).
    timeline: std::collections::VecDeque<f32>,
    timeline_start: u64,
    /// Where the next piece goes if it follows on (16 kHz), and where its first sample
    /// should be in the stream if it does (device frames, fractional).
    write: u64,
    expected: Option<f64>,
    resampler: Option<(u32, wav::StreamResampler)>,
    scratch: Vec<f32>,
}

impl Tap {
    /// At most this much is kept (a loop that stopped asking lets it go).
    const MAX: usize = SAMPLE_RATE_HZ as usize * 6;
    /// A piece this far (16 kHz samples) from where the previous one ended does not follow
    /// on: it starts afresh there (a new answer after silence, or after a stop).
    const JOIN_TOLERANCE: f64 = 16.0;

    fn push(&mut self, frame: u64, samples: &[f32], rate: u32) {
        self.raw.push_back((frame, rate, samples.to_vec()));
        self.raw_samples += samples.len();
        while self.raw_samples > Self::MAX * 4 {
            if let Some((_, _, front)) = self.raw.pop_front() {
                self.raw_samples -= front.len();
            }
        }
    }

    /// The device's mixer produced frame `frame` at `at` (called from the [`Clock`]).
    fn stamp(&mut self, at: Instant, frame: u64, device_rate: u32) {
        self.device_rate = device_rate;
        match self.origin.as_mut() {
            Some(origin) => origin.observe(at, frame, device_rate),
            None => self.origin = Some(StreamOrigin::new(at, frame, device_rate)),
        }
    }

    fn to_16k(&self, frame: f64) -> f64 {
        frame * f64::from(SAMPLE_RATE_HZ) / f64::from(self.device_rate.max(1))
    }

    fn convert(&mut self) {
        if self.device_rate == 0 {
            return; // the clock has not run yet: nothing was played either
        }
        while let Some((frame, rate, samples)) = self.raw.pop_front() {
            self.raw_samples = self.raw_samples.saturating_sub(samples.len());
            let at = self.to_16k(frame as f64);
            let follows = self.expected.is_some_and(|e| (self.to_16k(e) - at).abs() <= Self::JOIN_TOLERANCE)
                && self.resampler.as_ref().is_some_and(|(r, _)| *r == rate);
            if !follows {
                // A fresh start at the piece's own place in the stream.
                self.resampler = wav::StreamResampler::new(rate, SAMPLE_RATE_HZ).ok().map(|s| (rate, s));
                let place = at.round().max(0.0) as u64;
                if self.timeline.is_empty() || place < self.timeline_start {
                    self.timeline.clear();
                    self.timeline_start = place;
                }
                self.timeline.resize((place - self.timeline_start) as usize, 0.0);
                self.write = place;
            }
            let Some((_, resampler)) = self.resampler.as_mut() else { continue };
            self.scratch.clear();
            resampler.process(&samples, &mut self.scratch);
            let offset = (self.write - self.timeline_start) as usize;
            self.timeline.truncate(offset);
            self.timeline.resize(offset, 0.0);
            self.timeline.extend(self.scratch.iter().copied());
            self.write += self.scratch.len() as u64;
            let frames = samples.len() as f64 * f64::from(self.device_rate) / f64::from(rate.max(1));
            self.expected = Some(if follows { self.expected.unwrap_or(frame as f64) } else { frame as f64 } + frames);
        }
        let excess = self.timeline.len().saturating_sub(Self::MAX);
        if excess > 0 {
            self.timeline.drain(..excess);
            self.timeline_start += excess as u64;
        }
    }

    /// The timeline over the `n` samples ending at `end` (silence where nothing played).
    fn extract(&mut self, end: Instant, n: usize, out: &mut Vec<f32>) {
        out.clear();
        out.resize(n, 0.0);
        let Some(origin) = self.origin else { return };
        if self.device_rate == 0 {
            return;
        }
        let end16 = self.to_16k(origin.index_at(end, self.device_rate)).round() as i64;
        let first = end16 - n as i64;
        let start = self.timeline_start as i64;
        for (i, slot) in out.iter_mut().enumerate() {
            let pos = first + i as i64 - start;
            if pos >= 0 {
                if let Some(v) = self.timeline.get(pos as usize) {
                    *slot = *v;
                }
            }
        }
        // What is older than this frame will not be asked for again.
        if first > start {
            let done = ((first - start) as usize).min(self.timeline.len());
            self.timeline.drain(..done);
            self.timeline_start += done as u64;
        }
    }
}

/// The device's sample clock: a silent, endless source at the mixer's own rate and channel
/// count (so rodio passes it through unconverted), pulled once per output sample. It
/// counts the frames the mixer produced and stamps the [`Tap`] with the wall clock now and
/// then; pieces read the count when they are pulled.
struct Clock {
    channels: rodio::ChannelCount,
    rate: rodio::SampleRate,
    samples: u64,
    frames: Arc<std::sync::atomic::AtomicU64>,
    tap: Arc<std::sync::Mutex<Tap>>,
}

impl Iterator for Clock {
    type Item = rodio::Sample;

    fn next(&mut self) -> Option<Self::Item> {
        let channels = u64::from(self.channels.get());
        if self.samples.is_multiple_of(channels) {
            let frame = self.samples / channels;
            self.frames.store(frame, Ordering::Relaxed);
            if frame.is_multiple_of(Self::STAMP_EVERY) {
                if let Ok(mut tap) = self.tap.lock() {
                    tap.stamp(Instant::now(), frame, self.rate.get());
                }
            }
        }
        self.samples += 1;
        Some(0.0)
    }
}

impl Clock {
    /// Frames between wall-clock stamps (about 5 ms at 48 kHz).
    const STAMP_EVERY: u64 = 256;
}

impl rodio::Source for Clock {
    fn current_span_len(&self) -> Option<usize> {
        None
    }
    fn channels(&self) -> rodio::ChannelCount {
        self.channels
    }
    fn sample_rate(&self) -> rodio::SampleRate {
        self.rate
    }
    fn total_duration(&self) -> Option<Duration> {
        None
    }
}

/// A mono buffer whose samples are copied to the [`Tap`] as the device pulls them, each
/// piece with the device frame its first sample was pulled at.
struct Tapped {
    inner: rodio::buffer::SamplesBuffer,
    rate: u32,
    tap: Arc<std::sync::Mutex<Tap>>,
    frames: Arc<std::sync::atomic::AtomicU64>,
    first_frame: u64,
    local: Vec<f32>,
}

impl Tapped {
    fn flush(&mut self) {
        if !self.local.is_empty() {
            if let Ok(mut tap) = self.tap.lock() {
                tap.push(self.first_frame, &self.local, self.rate);
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
                if self.local.is_empty() {
                    self.first_frame = self.frames.load(Ordering::Relaxed);
                }
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
    /// Frames the device's mixer has produced (the [`Clock`]'s count).
    frames: Arc<std::sync::atomic::AtomicU64>,
}

impl DeviceSpeaker {
    /// Opens the default output device.
    pub fn open_default() -> Result<Self, PlaybackError> {
        let (tx, rx) = mpsc::channel();
        let close = Arc::new(AtomicBool::new(false));
        let thread_close = close.clone();
        let tap: Arc<std::sync::Mutex<Tap>> = Default::default();
        let frames: Arc<std::sync::atomic::AtomicU64> = Default::default();
        let (clock_tap, clock_frames) = (tap.clone(), frames.clone());
        let thread = std::thread::Builder::new()
            .name("arthur-playback".into())
            .spawn(move || {
                crate::quiet::alsa_errors_to_log();
                let opened = rodio::DeviceSinkBuilder::open_default_sink();
                crate::quiet::drain();
                let mut sink = match opened {
                    Ok(sink) => sink,
                    Err(e) => {
                        let _ = tx.send(Err(PlaybackError::NoDevice(e.to_string())));
                        return;
                    }
                };
                sink.log_on_drop(false);
                let (channels, rate) = (sink.config().channel_count(), sink.config().sample_rate());
                sink.mixer().add(Clock { channels, rate, samples: 0, frames: clock_frames, tap: clock_tap });
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
        Ok(Self { mixer, player, close, thread: Some(thread), device, tap, frames })
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
            self.player.append(Tapped {
                inner,
                rate: pcm.rate,
                tap: self.tap.clone(),
                frames: self.frames.clone(),
                first_frame: 0,
                local: Vec::with_capacity(256),
            });
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
            // Put back what is left, before anything pulled or stamped meanwhile.
            let newer = std::mem::take(&mut *tap);
            *tap = taken;
            tap.raw.extend(newer.raw);
            tap.raw_samples += newer.raw_samples;
            if let Some(stamped) = newer.origin {
                tap.device_rate = newer.device_rate;
                match tap.origin.as_mut() {
                    Some(origin) => origin.merge(&stamped),
                    None => tap.origin = Some(stamped),
                }
            }
        }
    }

    fn is_playing(&self) -> bool {
        !self.player.empty()
    }

    fn stop(&mut self) {
        // What was pulled stays on the timeline: the device's buffer still plays it, and
        // its echo is cancelled like the rest.
        self.player.stop();
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

    /// Pieces land at their place in the device stream (its frame count), whatever the
    /// instant they were pulled at: a piece a few frames off where the previous one ended
    /// follows on, silence between answers stays silence, a callback that ran late moves
    /// nothing, and a frame's reference is the stretch of stream at its capture time.
    #[test]
    fn the_tap_lays_pieces_out_by_device_sample_count() {
        let mut tap = Tap::default();
        let t0 = Instant::now();
        let ms = |n: u64| Duration::from_millis(n);
        tap.stamp(t0, 0, 48_000);
        // 100 ms at frame 0, the next 100 ms 30 frames late (the converter's jitter), then
        // a piece one second into the stream.
        tap.push(0, &[0.1; 1_600], 16_000);
        tap.push(4_830, &[0.2; 1_600], 16_000);
        tap.push(48_000, &[0.3; 1_600], 16_000);
        // A callback 40 ms late: the stream's origin stays (but for its 10 ppm leak, far
        // below a sample here; the margins below are the converter's jitter).
        tap.stamp(t0 + ms(240), 9_600, 48_000);
        tap.convert();
        let mut out = Vec::new();
        tap.extract(t0 + ms(30), 480, &mut out);
        assert!(out[2..].iter().all(|v| *v == 0.1), "{:?}", &out[..4]);
        tap.extract(t0 + ms(120), 480, &mut out);
        assert!(out[..156].iter().all(|v| *v == 0.1) && out[164..].iter().all(|v| *v == 0.2), "contiguous");
        tap.extract(t0 + ms(300), 480, &mut out);
        assert!(out.iter().all(|v| *v == 0.0), "silence between");
        tap.extract(t0 + ms(1_060), 480, &mut out);
        assert!(out[4..].iter().all(|v| *v == 0.3));
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
