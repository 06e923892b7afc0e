//! Voice activity detection gating the recogniser: whisper hallucinates on silence and
//! noise ("Sous-titres réalisés par la communauté d'Amara.org"), so only utterances — with
//! a pre-roll so the first word is not clipped and a hangover so pauses do not cut a
//! sentence — reach it.
//!
//! A [`SpeechDetector`] says, chunk by chunk, whether there is a voice (a trained network:
//! music, dishes and fans are not speech; or the energy threshold of old). The segmenter
//! here turns those decisions into utterances, and measures the room: the level of the
//! background over the last seconds, and whether that background is itself speech (a
//! television). A television is speech too, so what separates the user from it is level:
//! when the background talks, an utterance is in the *foreground* only while it stands a
//! margin above the background; background speech still makes utterances (a wake word may
//! be in them), marked as such, and a user speaking over it starts a new one.

use std::collections::VecDeque;
use std::ops::Range;

use crate::detect::{energy_db, EnergyDetector, SpeechDetector};
use crate::SAMPLE_RATE_HZ;

/// How the background is told from the user.
#[derive(Debug, Clone, PartialEq)]
pub struct BackgroundConfig {
    /// Window over which the background is measured.
    pub window_ms: u32,
    /// The background's level is this percentile (0–1) of the window's chunk energies.
    pub percentile: f32,
    /// The background is speech (a television) when at least this fraction of the
    /// window's chunks are speech.
    pub speech_fraction: f32,
    /// Speech starts in the foreground when it is this much above a speaking background…
    pub margin_db: f32,
    /// …and stays in it while it is at least this much above.
    pub hold_margin_db: f32,
    /// Levels are compared smoothed over this long (syllables are uneven).
    pub smooth_ms: u32,
    /// A foreground utterance is kept out of the background measure for this long at
    /// most: longer speech is the room (a television does not stop).
    pub max_command_ms: u32,
}

impl Default for BackgroundConfig {
    fn default() -> Self {
        Self {
            window_ms: 15_000,
            percentile: 0.5,
            speech_fraction: 0.4,
            margin_db: 7.0,
            hold_margin_db: 3.0,
            smooth_ms: 150,
            max_command_ms: 8_000,
        }
    }
}

/// Tuning of the [`Vad`]; the defaults suit 16 kHz audio.
#[derive(Debug, Clone, PartialEq)]
pub struct VadConfig {
    /// Sample rate of the frames pushed, in Hz.
    pub sample_rate: u32,
    /// A chunk whose speech probability exceeds this starts (or continues) speech…
    pub onset_threshold: f32,
    /// …and once speaking, one above this still counts as speech.
    pub hold_threshold: f32,
    /// Speech for this long (consecutive chunks) starts an utterance.
    pub onset_ms: u32,
    /// Audio kept before the first speech chunk.
    pub pre_roll_ms: u32,
    /// How far before the onset the speech may have begun: chunks just before it whose
    /// probability is above [`VadConfig::lookback_threshold`] are taken in too (a word
    /// said into clatter or music often scores low until the detector catches up — the
    /// wake word was lost that way), then the pre-roll before them.
    pub lookback_ms: u32,
    pub lookback_threshold: f32,
    /// Silence that ends an utterance.
    pub hangover_ms: u32,
    /// Silence kept at the end of an utterance (of the hangover).
    pub tail_ms: u32,
    /// Utterances whose speech (first to last speech chunk) is shorter are discarded.
    pub min_speech_ms: u32,
    /// An utterance is cut and emitted at the first chunk that makes it this long.
    pub max_utterance_ms: u32,
    /// After this much silence inside a foreground utterance, [`VadEvent::Paused`] is
    /// emitted once (the loop may transcribe what was said so far and close early).
    pub pause_ms: Option<u32>,
    /// Telling the user from a speaking background; `None`: every utterance is foreground.
    pub background: Option<BackgroundConfig>,
}

impl Default for VadConfig {
    fn default() -> Self {
        Self {
            sample_rate: SAMPLE_RATE_HZ,
            onset_threshold: 0.5,
            hold_threshold: 0.35,
            onset_ms: 90,
            pre_roll_ms: 300,
            lookback_ms: 0,
            lookback_threshold: 0.15,
            hangover_ms: 600,
            tail_ms: 300,
            min_speech_ms: 250,
            max_utterance_ms: 20_000,
            pause_ms: None,
            background: None,
        }
    }
}

impl VadConfig {
    /// The tuning of a trained detector in a room: background measured, pauses reported.
    pub fn room() -> Self {
        Self { background: Some(BackgroundConfig::default()), pause_ms: Some(200), lookback_ms: 900, ..Self::default() }
    }

    fn samples(&self, ms: u32) -> usize {
        (u64::from(self.sample_rate) * u64::from(ms) / 1000) as usize
    }
}

/// A complete utterance.
#[derive(Debug, Clone, PartialEq)]
pub struct Utterance {
    /// Pre-roll, speech, and at most `tail_ms` of trailing silence.
    pub samples: Vec<f32>,
    /// Stream index of the first sample.
    pub start: u64,
    /// Where the speech is within `samples` (first speech chunk to the end of the last).
    pub speech: Range<usize>,
    /// Mean power of the speech chunks, dBFS.
    pub level_db: f32,
    /// The background's level when the utterance began, dBFS.
    pub background_db: f32,
    /// Whether the background was speech then.
    pub background_speaks: bool,
    /// Whether it stood out from the background (always, when the background is quiet).
    pub foreground: bool,
}

impl Utterance {
    /// Duration of the speech, in seconds.
    pub fn speech_secs(&self) -> f64 {
        self.speech.len() as f64 / f64::from(SAMPLE_RATE_HZ)
    }
}

/// What one pushed frame caused.
#[derive(Debug, Clone, PartialEq)]
pub enum VadEvent {
    /// Speech began (the onset chunks were seen); an utterance is being collected.
    SpeechStarted { foreground: bool },
    /// The speaker paused (`pause_ms` of silence) inside a foreground utterance.
    Paused,
    /// A complete utterance.
    Utterance(Utterance),
    /// The speech that started was too short (a knock, a click) and was dropped.
    Discarded,
}

#[derive(Debug)]
enum State {
    Idle {
        /// Recent chunks: pre-roll followed by the current run of speech chunks, each with
        /// its speech probability.
        recent: VecDeque<(Vec<f32>, f32)>,
        recent_samples: usize,
        /// Consecutive speech chunks (any level) at the end of `recent`.
        run: usize,
        run_samples: usize,
        /// Consecutive foreground speech chunks.
        run_fg: usize,
        run_fg_samples: usize,
    },
    Speaking {
        foreground: bool,
        /// The background was known when this utterance began.
        room_known: bool,
        utterance: Vec<f32>,
        /// Stream index of the utterance's first sample.
        start: u64,
        /// Length of `utterance` up to the end of the last speech chunk.
        last_speech_end: usize,
        /// Length of `utterance` where the first speech chunk began.
        speech_start: usize,
        /// Silence since the last speech chunk.
        silence: usize,
        /// Silence that closes this utterance instead of the hangover (the loop was told
        /// the user has not finished).
        hold: Option<usize>,
        paused_told: bool,
        power_sum: f64,
        power_chunks: usize,
        background_db: f32,
        background_speaks: bool,
        /// In a background utterance: consecutive foreground chunks at its end.
        run_fg: usize,
        run_fg_samples: usize,
    },
}

impl State {
    fn idle() -> Self {
        State::Idle { recent: VecDeque::new(), recent_samples: 0, run: 0, run_samples: 0, run_fg: 0, run_fg_samples: 0 }
    }
}

/// The room's background: recent chunk energies and speech decisions outside the user's
/// utterances.
#[derive(Debug, Default)]
struct Background {
    chunks: VecDeque<(f32, bool)>,
    level_db: f32,
    speaks: bool,
    frozen: bool,
}

/// Voice activity detector: push frames, get events.
pub struct Vad {
    config: VadConfig,
    detector: Box<dyn SpeechDetector>,
    chunk: usize,
    onset_chunks: usize,
    pending: Vec<f32>,
    state: State,
    background: Background,
    /// Recent chunk powers (linear), for the smoothed level.
    smooth: VecDeque<f32>,
    smooth_chunks: usize,
    events: VecDeque<VadEvent>,
    /// Samples pushed so far.
    seen: u64,
    /// Samples given to the detector so far (a multiple of the chunk length).
    processed: u64,
    last_span: Option<Range<u64>>,
}

impl std::fmt::Debug for Vad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vad").field("detector", &self.detector.name()).field("config", &self.config).finish()
    }
}

impl Vad {
    /// The energy VAD of old (kept to compare against): adaptive threshold, no background.
    pub fn new(config: VadConfig) -> Self {
        Self::with_detector(config, Box::new(EnergyDetector::new()))
    }

    pub fn with_detector(config: VadConfig, detector: Box<dyn SpeechDetector>) -> Self {
        let chunk = detector.chunk_len().max(1);
        let chunk_ms = chunk as f64 * 1000.0 / f64::from(config.sample_rate);
        let onset_chunks = ((f64::from(config.onset_ms) / chunk_ms).round() as usize).max(1);
        let smooth_chunks = config
            .background
            .as_ref()
            .map(|b| ((f64::from(b.smooth_ms) / chunk_ms).round() as usize).max(1))
            .unwrap_or(1);
        Self {
            config,
            detector,
            chunk,
            onset_chunks,
            pending: Vec::new(),
            state: State::idle(),
            background: Background { level_db: f32::NEG_INFINITY, ..Background::default() },
            smooth: VecDeque::new(),
            smooth_chunks,
            events: VecDeque::new(),
            seen: 0,
            processed: 0,
            last_span: None,
        }
    }

    pub fn config(&self) -> &VadConfig {
        &self.config
    }

    pub fn detector_name(&self) -> &str {
        self.detector.name()
    }

    /// True while an utterance is being collected (speech was detected and has not ended).
    pub fn is_speech_now(&self) -> bool {
        matches!(self.state, State::Speaking { .. })
    }

    /// True while a foreground utterance is being collected.
    pub fn is_foreground_now(&self) -> bool {
        matches!(self.state, State::Speaking { foreground: true, .. })
    }

    /// The utterance being collected so far, if any.
    pub fn current_utterance(&self) -> Option<&[f32]> {
        match &self.state {
            State::Speaking { utterance, .. } => Some(utterance),
            State::Idle { .. } => None,
        }
    }

    /// Silence since the last speech chunk of the utterance being collected (0 when none).
    pub fn silence_samples(&self) -> usize {
        match &self.state {
            State::Speaking { silence, .. } => *silence,
            State::Idle { .. } => 0,
        }
    }

    /// Where the speech begins in [`current_utterance`](Self::current_utterance) (0 when
    /// none is being collected).
    pub fn current_speech_start(&self) -> usize {
        match &self.state {
            State::Speaking { speech_start, .. } => *speech_start,
            State::Idle { .. } => 0,
        }
    }

    /// The background's level (dBFS) and whether it is speech.
    pub fn background(&self) -> (f32, bool) {
        (self.background.level_db, self.background.speaks)
    }

    /// Keeps the background as it is now (while Arthur speaks: the answer is not the
    /// room), or lets it follow the room again.
    pub fn freeze_background(&mut self, frozen: bool) {
        self.background.frozen = frozen;
    }

    /// The level (dBFS) of the last chunks, smoothed.
    pub fn level_db(&self) -> f32 {
        let n = self.smooth.len().max(1) as f32;
        10.0 * (self.smooth.iter().sum::<f32>() / n).max(1e-12).log10()
    }

    /// Samples pushed since creation.
    pub fn samples_seen(&self) -> u64 {
        self.seen
    }

    /// Stream sample range of the last utterance emitted.
    pub fn last_utterance_span(&self) -> Option<Range<u64>> {
        self.last_span.clone()
    }

    /// Drops any utterance in progress and the pre-roll; the background is kept.
    pub fn reset(&mut self) {
        self.state = State::idle();
        self.events.clear();
    }

    /// Feeds one frame (any length).
    pub fn push(&mut self, frame: &[f32]) -> Option<VadEvent> {
        self.seen += frame.len() as u64;
        self.pending.extend_from_slice(frame);
        let mut offset = 0;
        while self.pending.len() - offset >= self.chunk {
            let chunk = self.pending[offset..offset + self.chunk].to_vec();
            offset += self.chunk;
            self.processed += chunk.len() as u64;
            if let Some(event) = self.chunk(chunk) {
                self.events.push_back(event);
            }
        }
        self.pending.drain(..offset);
        self.events.pop_front()
    }

    /// Keeps the utterance being collected open through a silence of `ms` (instead of the
    /// hangover; at least the hangover): the user has not finished, by what they said or how
    /// it sounded. Lasts until the utterance ends.
    pub fn hold_open(&mut self, ms: u32) {
        let samples = self.config.samples(ms.max(self.config.hangover_ms));
        if let State::Speaking { hold, .. } = &mut self.state {
            *hold = Some(samples);
        }
    }

    /// Ends the utterance in progress now (the loop found it complete): it is emitted
    /// (or discarded if too short), as at the end of the hangover.
    pub fn end_utterance(&mut self) -> Option<VadEvent> {
        self.events.clear();
        match self.state {
            State::Speaking { .. } => self.finish(),
            State::Idle { .. } => None,
        }
    }

    /// Ends the stream: an utterance in progress is emitted (or discarded if too short).
    pub fn flush(&mut self) -> Option<VadEvent> {
        if let Some(event) = self.events.pop_front() {
            return Some(event);
        }
        match self.state {
            State::Speaking { .. } => {
                if !self.pending.is_empty() {
                    let rest = std::mem::take(&mut self.pending);
                    if let State::Speaking { utterance, .. } = &mut self.state {
                        utterance.extend_from_slice(&rest);
                    }
                }
                self.finish()
            }
            State::Idle { .. } => {
                self.state = State::idle();
                None
            }
        }
    }

    fn track_background(&mut self, energy: f32, speech: bool) {
        let Some(bg) = &self.config.background else { return };
        if self.background.frozen {
            return;
        }
        let window = (self.config.samples(bg.window_ms) / self.chunk).max(1);
        self.background.chunks.push_back((energy, speech));
        while self.background.chunks.len() > window {
            self.background.chunks.pop_front();
        }
        let mut values: Vec<f32> = self.background.chunks.iter().map(|c| c.0).collect();
        let k = ((values.len() - 1) as f32 * bg.percentile.clamp(0.0, 1.0)).round() as usize;
        let (_, v, _) = values.select_nth_unstable_by(k, f32::total_cmp);
        self.background.level_db = *v;
        // Until the room is known, the background is not taken as speech.
        let speaking = self.background.chunks.iter().filter(|c| c.1).count();
        self.background.speaks =
            self.room_known() && speaking as f32 >= bg.speech_fraction * self.background.chunks.len() as f32;
    }

    /// Enough of the room was heard to judge it (300 ms).
    fn room_known(&self) -> bool {
        self.background.chunks.len() * self.chunk >= self.config.samples(300)
    }

    /// Whether the smoothed level stands `margin` above a speaking background.
    fn above(&self, margin: f32) -> bool {
        if !self.background.speaks {
            return true;
        }
        self.level_db() >= self.background.level_db + margin
    }

    fn chunk(&mut self, chunk: Vec<f32>) -> Option<VadEvent> {
        let p = self.detector.speech_probability(&chunk);
        let energy = energy_db(&chunk);
        let power = 10f32.powf(energy / 10.0);
        self.smooth.push_back(power);
        while self.smooth.len() > self.smooth_chunks {
            self.smooth.pop_front();
        }
        let (margin, hold_margin) =
            self.config.background.as_ref().map(|b| (b.margin_db, b.hold_margin_db)).unwrap_or((0.0, 0.0));
        let speech_onset = p > self.config.onset_threshold;
        let speech_hold = p > self.config.hold_threshold;
        let fg_onset = speech_onset && self.above(margin);
        let fg_hold = speech_hold && self.above(hold_margin);
        // The user's own speech is not the room — for as long as a command lasts, once the
        // room is known. Speech that goes on longer is the room after all (a television
        // switched on never stops), and so is speech before the room was known.
        let max_command = self.config.background.as_ref().map(|b| self.config.samples(b.max_command_ms)).unwrap_or(0);
        let users = matches!(&self.state, State::Speaking { foreground: true, room_known: true, utterance, .. }
            if utterance.len() < max_command);
        if !users {
            self.track_background(energy, speech_onset);
        }
        let pre_roll = self.config.samples(self.config.pre_roll_ms);
        let lookback = self.config.samples(self.config.lookback_ms);
        let lookback_threshold = self.config.lookback_threshold;
        let hangover = self.config.samples(self.config.hangover_ms);
        let max_len = self.config.samples(self.config.max_utterance_ms);
        let onset = self.onset_chunks;
        let (background_db, background_speaks) = (self.background.level_db, self.background.speaks);
        let room_known = self.room_known();
        let chunk_len = chunk.len();

        match &mut self.state {
            State::Idle { recent, recent_samples, run, run_samples, run_fg, run_fg_samples } => {
                recent.push_back((chunk, p));
                *recent_samples += chunk_len;
                if speech_onset {
                    *run += 1;
                    *run_samples += chunk_len;
                } else {
                    *run = 0;
                    *run_samples = 0;
                }
                if fg_onset {
                    *run_fg += 1;
                    *run_fg_samples += chunk_len;
                } else {
                    *run_fg = 0;
                    *run_fg_samples = 0;
                }
                // Keep at most `pre_roll` + `lookback` samples before the current run.
                while let Some((front, _)) = recent.front() {
                    if *recent_samples - front.len() >= pre_roll + lookback + *run_samples {
                        *recent_samples -= front.len();
                        recent.pop_front();
                    } else {
                        break;
                    }
                }
                let foreground = *run_fg >= onset;
                if foreground || *run >= onset {
                    let speech_len = if foreground { *run_fg_samples } else { *run_samples };
                    // The chunks just before the onset that sound like speech, then the pre-roll.
                    let mut counted = 0;
                    let mut earlier = 0;
                    for (c, p) in recent.iter().rev() {
                        if counted < speech_len {
                            counted += c.len();
                            continue;
                        }
                        if *p <= lookback_threshold || earlier + c.len() > lookback {
                            break;
                        }
                        earlier += c.len();
                    }
                    let keep = speech_len + earlier + pre_roll;
                    while recent.front().is_some_and(|(front, _)| *recent_samples - front.len() >= keep) {
                        if let Some((front, _)) = recent.pop_front() {
                            *recent_samples -= front.len();
                        }
                    }
                    let utterance: Vec<f32> = recent.drain(..).flat_map(|(c, _)| c).collect();
                    let speech_start = utterance.len() - speech_len;
                    let start = self.processed - utterance.len() as u64;
                    tracing::debug!(
                        p,
                        energy_db = energy,
                        background_db,
                        foreground,
                        at_sample = start,
                        "speech started"
                    );
                    let speech_power = &utterance[speech_start..];
                    let power_sum = f64::from(crate::wav::rms(speech_power)).powi(2) * (speech_len / chunk_len) as f64;
                    self.state = State::Speaking {
                        foreground,
                        room_known,
                        last_speech_end: utterance.len(),
                        utterance,
                        start,
                        speech_start,
                        silence: 0,
                        hold: None,
                        paused_told: false,
                        power_sum,
                        power_chunks: speech_len / chunk_len,
                        background_db,
                        background_speaks,
                        run_fg: 0,
                        run_fg_samples: 0,
                    };
                    return Some(VadEvent::SpeechStarted { foreground });
                }
                None
            }
            State::Speaking {
                foreground,
                utterance,
                last_speech_end,
                silence,
                hold,
                paused_told,
                power_sum,
                power_chunks,
                run_fg,
                run_fg_samples,
                ..
            } => {
                utterance.extend_from_slice(&chunk);
                let speaking = if *foreground { fg_hold } else { speech_hold };
                if speaking {
                    *silence = 0;
                    *paused_told = false;
                    *last_speech_end = utterance.len();
                    *power_sum += f64::from(power);
                    *power_chunks += 1;
                } else {
                    *silence += chunk_len;
                }
                if !*foreground {
                    // The user speaking over a talking background: their utterance starts here.
                    if fg_onset {
                        *run_fg += 1;
                        *run_fg_samples += chunk_len;
                    } else {
                        *run_fg = 0;
                        *run_fg_samples = 0;
                    }
                    if *run_fg >= onset {
                        let keep = (*run_fg_samples + pre_roll).min(utterance.len());
                        let speech_len = *run_fg_samples;
                        let tail = utterance.split_off(utterance.len() - keep);
                        *last_speech_end = (*last_speech_end).min(utterance.len());
                        let before = self.finish();
                        let start = self.processed - tail.len() as u64;
                        let speech_start = tail.len() - speech_len;
                        let power_sum =
                            f64::from(crate::wav::rms(&tail[speech_start..])).powi(2) * (speech_len / chunk_len) as f64;
                        self.state = State::Speaking {
                            foreground: true,
                            room_known,
                            last_speech_end: tail.len(),
                            speech_start,
                            utterance: tail,
                            start,
                            silence: 0,
                            hold: None,
                            paused_told: false,
                            power_sum,
                            power_chunks: speech_len / chunk_len,
                            background_db,
                            background_speaks,
                            run_fg: 0,
                            run_fg_samples: 0,
                        };
                        tracing::debug!(background_db, "foreground speech over a talking background");
                        // The user first (barge-in waits on it), then what the background said.
                        self.events.push_back(VadEvent::SpeechStarted { foreground: true });
                        self.events.extend(before);
                        return None;
                    }
                }
                if *silence >= hold.unwrap_or(hangover) || utterance.len() >= max_len {
                    return self.finish();
                }
                if *foreground
                    && !*paused_told
                    && self.config.pause_ms.is_some_and(|ms| *silence >= self.config.samples(ms))
                {
                    *paused_told = true;
                    return Some(VadEvent::Paused);
                }
                None
            }
        }
    }

    fn finish(&mut self) -> Option<VadEvent> {
        let State::Speaking {
            mut utterance,
            start,
            last_speech_end,
            speech_start,
            foreground,
            power_sum,
            power_chunks,
            background_db,
            background_speaks,
            ..
        } = std::mem::replace(&mut self.state, State::idle())
        else {
            return None;
        };
        let speech = last_speech_end.saturating_sub(speech_start);
        if speech < self.config.samples(self.config.min_speech_ms) {
            tracing::debug!(speech_samples = speech, "speech too short, discarded");
            return Some(VadEvent::Discarded);
        }
        let keep = (last_speech_end + self.config.samples(self.config.tail_ms)).min(utterance.len());
        utterance.truncate(keep);
        self.last_span = Some(start..start + utterance.len() as u64);
        let level_db = 10.0 * (power_sum / power_chunks.max(1) as f64).max(1e-12).log10() as f32;
        tracing::debug!(
            samples = utterance.len(),
            at_sample = start,
            level_db,
            background_db,
            foreground,
            "utterance complete"
        );
        Some(VadEvent::Utterance(Utterance {
            samples: utterance,
            start,
            speech: speech_start..last_speech_end,
            level_db,
            background_db,
            background_speaks,
            foreground,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: usize = 480;

    /// A deterministic pseudo-random generator (xorshift) for noise.
    struct Noise(u64);
    impl Noise {
        fn uniform(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
    }

    fn tone(secs: f32, amp: f32) -> Vec<f32> {
        let n = (secs * 16_000.0) as usize;
        (0..n).map(|i| amp * (i as f32 * 2.0 * std::f32::consts::PI * 300.0 / 16_000.0).sin()).collect()
    }

    fn run(vad: &mut Vad, signal: &[f32]) -> Vec<VadEvent> {
        let mut events: Vec<VadEvent> = signal.chunks(FRAME).filter_map(|f| vad.push(f)).collect();
        while let Some(e) = vad.flush() {
            events.push(e);
        }
        events
    }

    fn utterances(events: &[VadEvent]) -> Vec<&Utterance> {
        events
            .iter()
            .filter_map(|e| match e {
                VadEvent::Utterance(u) => Some(u),
                _ => None,
            })
            .collect()
    }

    /// A detector scripted by level: speech when a chunk is louder than -40 dBFS.
    const LOUD: ByLevel = ByLevel(&[(-40.0, 0.9)]);

    /// A detector scripted by level: the probability of the first (dBFS, probability) step
    /// the chunk's energy is above, else 0 (two steps: a soft voice scored low and a loud
    /// one high, as Silero scores a word said into clatter before it catches up).
    struct ByLevel(&'static [(f32, f32)]);
    impl SpeechDetector for ByLevel {
        fn name(&self) -> &str {
            "by level"
        }
        fn chunk_len(&self) -> usize {
            512
        }
        fn speech_probability(&mut self, chunk: &[f32]) -> f32 {
            let e = energy_db(chunk);
            self.0.iter().find(|(above, _)| e > *above).map_or(0.0, |(_, p)| *p)
        }
        fn reset(&mut self) {}
    }

    /// The first word, scored below the onset threshold, is kept: the look-back takes the
    /// chunks just before the onset that still sound like speech (up to its limit), then
    /// the pre-roll. Without it (the tuning as it was) the word's start is lost.
    #[test]
    fn a_first_word_scored_low_is_taken_in_by_the_look_back() {
        let soft = |secs: f32| tone(secs, 0.02); // about -37 dBFS
                                                 // (soft word, look-back, audio kept before the loud part: the soft word up to the
                                                 // look-back's limit, then the 300 ms pre-roll)
        for (soft_secs, lookback_ms, kept_secs) in [(0.6, 900, 0.9), (0.6, 0, 0.3), (2.0, 900, 1.2)] {
            let mut signal = vec![0.0; 16_000 * 2];
            signal.extend(soft(soft_secs));
            let loud_at = signal.len();
            signal.extend(tone(1.0, 0.3));
            signal.extend(vec![0.0; 16_000 * 2]);
            let config = VadConfig { lookback_ms, ..VadConfig::default() };
            let mut vad = Vad::with_detector(config, Box::new(ByLevel(&[(-30.0, 0.9), (-50.0, 0.3)])));
            let events = run(&mut vad, &signal);
            let utt = utterances(&events);
            assert_eq!(utt.len(), 1, "{events:?}");
            let before = loud_at as f32 - utt[0].start as f32;
            // Within a chunk (32 ms) of what is expected: the chunks are not frame-aligned.
            assert!(
                (before / 16_000.0 - kept_secs).abs() < 0.07,
                "soft {soft_secs} s, look-back {lookback_ms} ms: the utterance starts {:.2} s before the loud part",
                before / 16_000.0
            );
        }
    }

    #[test]
    fn silence_gives_nothing() {
        let mut vad = Vad::new(VadConfig::default());
        assert!(run(&mut vad, &vec![0.0; 16_000 * 5]).is_empty());
        assert!(!vad.is_speech_now());
    }

    #[test]
    fn a_burst_in_silence_is_one_utterance_with_pre_roll_and_tail() {
        // Frame-aligned: 34 frames of silence, 32 frames of tone, 34 frames of silence.
        let mut signal = vec![0.0; 34 * FRAME];
        signal.extend(tone(32.0 * 0.03, 0.3));
        signal.extend(vec![0.0; 34 * FRAME]);
        let mut vad = Vad::new(VadConfig::default());
        let events = run(&mut vad, &signal);
        assert_eq!(events.len(), 2, "{events:?}");
        assert_eq!(events[0], VadEvent::SpeechStarted { foreground: true });
        let utt = utterances(&events);
        assert_eq!(utt.len(), 1);
        // 300 ms pre-roll + the tone + 300 ms tail.
        assert_eq!(utt[0].samples.len(), 4_800 + 32 * FRAME + 4_800);
        assert_eq!(utt[0].speech, 4_800..4_800 + 32 * FRAME);
        assert!((utt[0].level_db - 20.0 * (0.3f32 / 2f32.sqrt()).log10()).abs() < 0.5, "{}", utt[0].level_db);
        let start = (34 * FRAME - 4_800) as u64;
        assert_eq!(vad.last_utterance_span(), Some(start..start + utt[0].samples.len() as u64));
    }

    #[test]
    fn short_clicks_are_not_speech() {
        let mut signal = vec![0.0; 34 * FRAME];
        signal.extend(tone(0.06, 0.5)); // two frames: below the onset
        signal.extend(vec![0.0; 34 * FRAME]);
        signal.extend(tone(0.15, 0.5)); // onset reached, but shorter than min speech
        signal.extend(vec![0.0; 34 * FRAME]);
        let mut vad = Vad::new(VadConfig::default());
        let events = run(&mut vad, &signal);
        assert_eq!(events, vec![VadEvent::SpeechStarted { foreground: true }, VadEvent::Discarded]);
    }

    #[test]
    fn steady_noise_is_not_speech_for_the_energy_detector() {
        let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
        let signal: Vec<f32> = (0..16_000 * 6).map(|_| 0.1 * noise.uniform()).collect();
        let mut vad = Vad::new(VadConfig::default());
        assert!(run(&mut vad, &signal).is_empty());
    }

    #[test]
    fn noise_that_starts_later_does_not_hold_forever() {
        // Silence, then a fan switches on: at most one utterance, cut well before max.
        let mut noise = Noise(7);
        let mut signal = vec![0.0; 16_000 * 2];
        signal.extend((0..16_000 * 10).map(|_| 0.05 * noise.uniform()));
        let mut vad = Vad::new(VadConfig::default());
        let events = run(&mut vad, &signal);
        let utt = utterances(&events);
        assert!(utt.len() <= 1, "{}", utt.len());
        if let Some(u) = utt.first() {
            assert!(u.samples.len() < 16_000 * 5, "{} samples", u.samples.len());
        }
        assert!(!vad.is_speech_now());
    }

    #[test]
    fn hangover_joins_short_pauses_and_splits_long_ones() {
        let mut signal = vec![0.0; 16_000];
        signal.extend(tone(0.5, 0.3));
        signal.extend(vec![0.0; 4_800]); // 300 ms pause: same utterance
        signal.extend(tone(0.5, 0.3));
        signal.extend(vec![0.0; 24_000]); // 1.5 s: a new one
        signal.extend(tone(0.5, 0.3));
        signal.extend(vec![0.0; 16_000]);
        let mut vad = Vad::new(VadConfig::default());
        let events = run(&mut vad, &signal);
        assert_eq!(utterances(&events).len(), 2, "{events:?}");
    }

    #[test]
    fn max_length_cuts_and_flush_emits() {
        let config = VadConfig { max_utterance_ms: 1_000, ..VadConfig::default() };
        let mut signal = vec![0.0; 16_000];
        signal.extend(tone(2.5, 0.3));
        let mut vad = Vad::new(config);
        let mut events: Vec<VadEvent> = signal.chunks(FRAME).filter_map(|f| vad.push(f)).collect();
        assert!(vad.is_speech_now());
        events.extend(vad.flush());
        let utt = utterances(&events);
        assert!(utt.len() >= 2, "{events:?}");
        assert!(utt.iter().all(|u| u.samples.len() < 16_000 + FRAME));
        assert!(!vad.is_speech_now());
    }

    #[test]
    fn a_pause_is_reported_once_and_end_utterance_closes_early() {
        let config = VadConfig { pause_ms: Some(200), ..VadConfig::room() };
        let mut vad = Vad::with_detector(config, Box::new(LOUD));
        let mut signal = vec![0.0; 16_000];
        signal.extend(tone(1.0, 0.3));
        signal.extend(vec![0.0; 16_000]);
        let mut events = Vec::new();
        let mut closed_at = None;
        for (i, frame) in signal.chunks(FRAME).enumerate() {
            match vad.push(frame) {
                Some(VadEvent::Paused) => {
                    events.push(VadEvent::Paused);
                    let e = vad.end_utterance().expect("an utterance");
                    closed_at = Some(i * FRAME);
                    events.push(e);
                }
                Some(e) => events.push(e),
                None => {}
            }
        }
        assert!(matches!(events[0], VadEvent::SpeechStarted { foreground: true }), "{events:?}");
        assert_eq!(events[1], VadEvent::Paused);
        let VadEvent::Utterance(u) = &events[2] else { panic!("{events:?}") };
        assert_eq!(events.len(), 3, "{events:?}");
        // Closed about 200 ms after the speech, not after the 600 ms hangover.
        let closed = closed_at.unwrap() as f32 / 16_000.0;
        assert!((2.15..2.35).contains(&closed), "closed at {closed} s");
        assert!(u.speech_secs() > 0.9);
    }

    /// Held open at the pause (the user has not finished), a 1 s silence does not end the
    /// utterance: the speech after it joins it, and the hold lasts until it ends.
    #[test]
    fn an_utterance_held_open_spans_a_hesitation() {
        let config = VadConfig { pause_ms: Some(200), ..VadConfig::room() };
        let mut signal = vec![0.0; 16_000];
        signal.extend(tone(1.0, 0.3));
        signal.extend(vec![0.0; 16_000]);
        signal.extend(tone(0.8, 0.3));
        signal.extend(vec![0.0; 16_000 * 3]);
        let hear = |hold: bool| {
            let mut vad = Vad::with_detector(config.clone(), Box::new(LOUD));
            let mut events = Vec::new();
            for frame in signal.chunks(FRAME) {
                match vad.push(frame) {
                    Some(VadEvent::Paused) if hold => vad.hold_open(2_000),
                    Some(e) => events.push(e),
                    None => {}
                }
            }
            events
        };
        let plain = hear(false);
        assert_eq!(utterances(&plain).len(), 2, "the hangover cuts at the hesitation: {plain:?}");
        let held = hear(true);
        let u = utterances(&held);
        assert_eq!(u.len(), 1, "{held:?}");
        assert!(u[0].speech_secs() > 2.7, "{}", u[0].speech_secs());
        // It closed 2 s after the last speech (the hold), not at the 600 ms hangover.
        let end = (u[0].start as usize + u[0].speech.end) as f32 / 16_000.0;
        assert!((3.7..3.9).contains(&end), "{end}");
    }

    /// A speaking background (a talking tone at -30 dBFS that never stops) is measured;
    /// speech 12 dB over it starts a foreground utterance of its own, which ends when the
    /// user stops even though the background goes on.
    #[test]
    fn foreground_speech_over_a_talking_background_is_its_own_utterance() {
        let mut vad = Vad::with_detector(VadConfig::room(), Box::new(LOUD));
        let bg_amp = 0.0447; // -30 dBFS RMS for a sine (×√2)
        let mut signal = tone(10.0, bg_amp);
        let user_at = 16_000 * 6;
        let user = tone(1.5, bg_amp * 4.0); // +12 dB
        for (i, s) in user.iter().enumerate() {
            signal[user_at + i] += s;
        }
        let events = run(&mut vad, &signal);
        let utt = utterances(&events);
        // Before the room is known (300 ms), speech counts as the user's: skip it.
        let fg: Vec<_> = utt.iter().filter(|u| u.foreground && u.start > 16_000 * 2).collect();
        assert_eq!(
            fg.len(),
            1,
            "{:?}",
            utt.iter().map(|u| (u.start, u.samples.len(), u.foreground)).collect::<Vec<_>>()
        );
        let u = fg[0];
        assert!(u.background_speaks);
        assert!((u.background_db + 30.0).abs() < 1.5, "{}", u.background_db);
        let start = u.start as usize + u.speech.start;
        let end = u.start as usize + u.speech.end;
        assert!(start.abs_diff(user_at) < 16_000 / 5, "starts at {start}, user at {user_at}");
        assert!(end.abs_diff(user_at + user.len()) < 16_000 / 4, "ends at {end}");
        assert!(utt.iter().any(|u| !u.foreground), "the background made utterances too");
    }
}
