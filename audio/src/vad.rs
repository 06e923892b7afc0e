//! Voice activity detection gating the recogniser: whisper hallucinates on silence and
//! noise ("Sous-titres réalisés par la communauté d'Amara.org"), so only utterances — with
//! a pre-roll so the first word is not clipped and a hangover so pauses do not cut a
//! sentence — reach it. An adaptive energy detector: the noise floor is a low percentile
//! of the recent frame energies, speech is energy above the floor by a margin for several
//! consecutive frames.

use std::collections::VecDeque;
use std::ops::Range;

use crate::SAMPLE_RATE_HZ;

/// Tuning of the [`Vad`]; the defaults suit 16 kHz audio in 30 ms frames.
#[derive(Debug, Clone, PartialEq)]
pub struct VadConfig {
    /// Sample rate of the frames pushed, in Hz.
    pub sample_rate: u32,
    /// A frame is loud when its energy exceeds the noise floor by this many dB.
    pub margin_db: f32,
    /// Once speaking, a frame still counts as speech down to `margin_db - hysteresis_db`.
    pub hysteresis_db: f32,
    /// A frame quieter than this (dBFS, RMS) is never speech, whatever the floor.
    pub min_level_dbfs: f32,
    /// Consecutive loud frames needed to start an utterance.
    pub onset_frames: usize,
    /// Audio kept before the first loud frame.
    pub pre_roll_ms: u32,
    /// Silence that ends an utterance.
    pub hangover_ms: u32,
    /// Silence kept at the end of an utterance (of the hangover).
    pub tail_ms: u32,
    /// Utterances whose speech (first to last loud frame) is shorter are discarded.
    pub min_speech_ms: u32,
    /// An utterance is cut and emitted at the first frame that makes it this long.
    pub max_utterance_ms: u32,
    /// Window over which the noise floor is estimated.
    pub floor_window_ms: u32,
    /// Percentile (0–1) of the window's frame energies taken as the floor.
    pub floor_percentile: f32,
}

impl Default for VadConfig {
    fn default() -> Self {
        Self {
            sample_rate: SAMPLE_RATE_HZ,
            margin_db: 10.0,
            hysteresis_db: 4.0,
            min_level_dbfs: -55.0,
            onset_frames: 3,
            pre_roll_ms: 300,
            hangover_ms: 600,
            tail_ms: 300,
            min_speech_ms: 250,
            max_utterance_ms: 20_000,
            floor_window_ms: 3_000,
            floor_percentile: 0.1,
        }
    }
}

impl VadConfig {
    fn samples(&self, ms: u32) -> usize {
        (u64::from(self.sample_rate) * u64::from(ms) / 1000) as usize
    }
}

/// What one pushed frame caused.
#[derive(Debug, Clone, PartialEq)]
pub enum VadEvent {
    /// Speech began (the onset frames were seen); an utterance is being collected.
    SpeechStarted,
    /// A complete utterance: pre-roll, speech, and at most `tail_ms` of trailing silence.
    Utterance(Vec<f32>),
    /// The speech that started was too short (a knock, a click) and was dropped.
    Discarded,
}

#[derive(Debug)]
enum State {
    Idle {
        /// Recent frames: pre-roll followed by the current run of loud frames.
        recent: VecDeque<Vec<f32>>,
        recent_samples: usize,
        /// Consecutive loud frames at the end of `recent`.
        run: usize,
        run_samples: usize,
    },
    Speaking {
        utterance: Vec<f32>,
        /// Stream index of the utterance's first sample.
        start: u64,
        /// Length of `utterance` up to the end of the last loud frame.
        last_loud_end: usize,
        /// Length of `utterance` where the first loud frame began.
        speech_start: usize,
        /// Silence since the last loud frame.
        silence: usize,
    },
}

impl State {
    fn idle() -> Self {
        State::Idle { recent: VecDeque::new(), recent_samples: 0, run: 0, run_samples: 0 }
    }
}

/// Adaptive energy voice activity detector: push frames, get events.
#[derive(Debug)]
pub struct Vad {
    config: VadConfig,
    state: State,
    /// Recent frame energies (dB) with their lengths, for the floor.
    energies: VecDeque<(f32, usize)>,
    energies_samples: usize,
    floor_db: f32,
    /// Samples pushed so far.
    seen: u64,
    last_span: Option<Range<u64>>,
}

impl Vad {
    pub fn new(config: VadConfig) -> Self {
        Self {
            config,
            state: State::idle(),
            energies: VecDeque::new(),
            energies_samples: 0,
            floor_db: f32::NEG_INFINITY,
            seen: 0,
            last_span: None,
        }
    }

    pub fn config(&self) -> &VadConfig {
        &self.config
    }

    /// True while an utterance is being collected (speech was detected and has not ended):
    /// what barge-in watches during playback.
    pub fn is_speech_now(&self) -> bool {
        matches!(self.state, State::Speaking { .. })
    }

    /// The current noise floor estimate, in dBFS (RMS).
    pub fn noise_floor_db(&self) -> f32 {
        self.floor_db
    }

    /// Samples pushed since creation.
    pub fn samples_seen(&self) -> u64 {
        self.seen
    }

    /// Stream sample range of the last utterance emitted.
    pub fn last_utterance_span(&self) -> Option<Range<u64>> {
        self.last_span.clone()
    }

    /// Drops any utterance in progress and the pre-roll; the noise floor is kept.
    pub fn reset(&mut self) {
        self.state = State::idle();
    }

    /// Feeds one frame (any length, typically 30 ms).
    pub fn push(&mut self, frame: &[f32]) -> Option<VadEvent> {
        if frame.is_empty() {
            return None;
        }
        let energy = energy_db(frame);
        self.track_floor(energy, frame.len());
        self.seen += frame.len() as u64;
        let onset_threshold = (self.floor_db + self.config.margin_db).max(self.config.min_level_dbfs);
        let hold_threshold = (self.floor_db + self.config.margin_db - self.config.hysteresis_db)
            .max(self.config.min_level_dbfs - self.config.hysteresis_db);
        let pre_roll = self.config.samples(self.config.pre_roll_ms);
        let hangover = self.config.samples(self.config.hangover_ms);
        let max_len = self.config.samples(self.config.max_utterance_ms);

        match &mut self.state {
            State::Idle { recent, recent_samples, run, run_samples } => {
                recent.push_back(frame.to_vec());
                *recent_samples += frame.len();
                if energy > onset_threshold {
                    *run += 1;
                    *run_samples += frame.len();
                } else {
                    *run = 0;
                    *run_samples = 0;
                }
                // Keep at most `pre_roll` samples before the current run.
                while let Some(front) = recent.front() {
                    if *recent_samples - front.len() >= pre_roll + *run_samples {
                        *recent_samples -= front.len();
                        recent.pop_front();
                    } else {
                        break;
                    }
                }
                if *run >= self.config.onset_frames.max(1) {
                    let utterance: Vec<f32> = recent.drain(..).flatten().collect();
                    let speech_start = utterance.len() - *run_samples;
                    let start = self.seen - utterance.len() as u64;
                    tracing::debug!(energy_db = energy, floor_db = self.floor_db, at_sample = start, "speech started");
                    self.state =
                        State::Speaking { last_loud_end: utterance.len(), utterance, start, speech_start, silence: 0 };
                    return Some(VadEvent::SpeechStarted);
                }
                None
            }
            State::Speaking { utterance, last_loud_end, silence, .. } => {
                utterance.extend_from_slice(frame);
                if energy > hold_threshold {
                    *silence = 0;
                    *last_loud_end = utterance.len();
                } else {
                    *silence += frame.len();
                }
                if *silence >= hangover || utterance.len() >= max_len {
                    return self.finish();
                }
                None
            }
        }
    }

    /// Ends the stream: an utterance in progress is emitted (or discarded if too short).
    pub fn flush(&mut self) -> Option<VadEvent> {
        match self.state {
            State::Speaking { .. } => self.finish(),
            State::Idle { .. } => {
                self.state = State::idle();
                None
            }
        }
    }

    fn finish(&mut self) -> Option<VadEvent> {
        let State::Speaking { mut utterance, start, last_loud_end, speech_start, .. } =
            std::mem::replace(&mut self.state, State::idle())
        else {
            return None;
        };
        let speech = last_loud_end - speech_start;
        if speech < self.config.samples(self.config.min_speech_ms) {
            tracing::debug!(speech_samples = speech, "speech too short, discarded");
            return Some(VadEvent::Discarded);
        }
        let keep = (last_loud_end + self.config.samples(self.config.tail_ms)).min(utterance.len());
        utterance.truncate(keep);
        self.last_span = Some(start..start + utterance.len() as u64);
        tracing::debug!(samples = utterance.len(), at_sample = start, floor_db = self.floor_db, "utterance complete");
        Some(VadEvent::Utterance(utterance))
    }

    fn track_floor(&mut self, energy: f32, len: usize) {
        let window = self.config.samples(self.config.floor_window_ms).max(len);
        self.energies.push_back((energy, len));
        self.energies_samples += len;
        while let Some(&(_, front_len)) = self.energies.front() {
            if self.energies_samples - front_len >= window {
                self.energies_samples -= front_len;
                self.energies.pop_front();
            } else {
                break;
            }
        }
        let mut values: Vec<f32> = self.energies.iter().map(|(e, _)| *e).collect();
        let p = self.config.floor_percentile.clamp(0.0, 1.0);
        let k = ((values.len() - 1) as f32 * p).round() as usize;
        let (_, v, _) = values.select_nth_unstable_by(k, f32::total_cmp);
        self.floor_db = *v;
    }
}

/// Energy of a frame in dBFS (RMS), floored at -120 dB.
pub fn energy_db(frame: &[f32]) -> f32 {
    let rms = crate::wav::rms(frame);
    20.0 * rms.max(1e-6).log10()
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
        events.extend(vad.flush());
        events
    }

    fn utterances(events: &[VadEvent]) -> Vec<&Vec<f32>> {
        events
            .iter()
            .filter_map(|e| match e {
                VadEvent::Utterance(u) => Some(u),
                _ => None,
            })
            .collect()
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
        assert_eq!(events[0], VadEvent::SpeechStarted);
        let utt = utterances(&events);
        assert_eq!(utt.len(), 1);
        // 300 ms pre-roll + the tone + 300 ms tail.
        assert_eq!(utt[0].len(), 4_800 + 32 * FRAME + 4_800);
        let start = (34 * FRAME - 4_800) as u64;
        assert_eq!(vad.last_utterance_span(), Some(start..start + utt[0].len() as u64));
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
        assert_eq!(events, vec![VadEvent::SpeechStarted, VadEvent::Discarded]);
    }

    #[test]
    fn steady_noise_becomes_the_floor() {
        let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
        let signal: Vec<f32> = (0..16_000 * 6).map(|_| 0.1 * noise.uniform()).collect();
        let mut vad = Vad::new(VadConfig::default());
        assert!(run(&mut vad, &signal).is_empty());
        let expected = 20.0 * (0.1f32 / 3f32.sqrt()).log10();
        assert!((vad.noise_floor_db() - expected).abs() < 1.0, "{}", vad.noise_floor_db());
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
            assert!(u.len() < 16_000 * 5, "{} samples", u.len());
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
        assert!(utt.iter().all(|u| u.len() < 16_000 + FRAME));
        assert!(!vad.is_speech_now());
    }
}
