//! Echo cancellation: with an open loudspeaker the microphone hears Arthur's own answer,
//! which would trigger barge-in and be transcribed. What the loudspeaker played (the
//! reference) is removed from what the microphone captured before the speech detector
//! sees it.
//!
//! WebRTC's AEC3 (the `aec3` crate, a pure-Rust port: no system library, no `unsafe` of
//! ours), high-pass filter + AEC3 only — no noise suppressor or gain control, which would
//! change the levels the room's background is measured by. Chosen by measurement against
//! the two Debian options the issue names (same signals: espeak-ng speech played through a
//! delay, an attenuation and a reverb, a near-end talker at the echo's level):
//!
//! | echo path | AEC3 (this) | WebRTC 0.3 (`libwebrtc-audio-processing`) | speexdsp MDF, 400 ms tail |
//! |---|---|---|---|
//! | 20 ms, −6 dB, 150 ms reverb | ERLE 44 dB | 42 dB | 15 dB |
//! | 120 ms, −6 dB, 150 ms | 45 dB | 44 dB | 8 dB |
//! | 250 ms, −3 dB, 250 ms | 38 dB | 4.5 dB | 2.3 dB |
//!
//! AEC3 is the only one that holds at a quarter-second delay (device buffers add that much
//! on a real machine); all three use about 1 % of a core. Speech of the user during the
//! answer is kept (attenuated by about 6 dB while Arthur speaks, as with WebRTC 0.3).

use aec3::api::config::EchoCanceller3Config;
use aec3::api::control::EchoControl;
use aec3::audio_processing::aec3::echo_canceller3::EchoCanceller3;
use aec3::audio_processing::audio_buffer::AudioBuffer;
use aec3::audio_processing::high_pass_filter::HighPassFilter;
use aec3::audio_processing::stream_config::StreamConfig;

use crate::SAMPLE_RATE_HZ;

/// Samples per AEC3 frame (10 ms at 16 kHz).
pub const BLOCK: usize = SAMPLE_RATE_HZ as usize / 100;

/// Removes the loudspeaker's echo from the microphone, 10 ms at a time. AEC3's state is
/// not `Send` (the voice loop is), so it lives on a thread of its own; each frame goes
/// there and back (AEC3 takes about 1 % of a core: a third of a millisecond per frame).
pub struct EchoCanceller {
    work: std::sync::mpsc::Sender<(Vec<f32>, Vec<f32>)>,
    done: std::sync::mpsc::Receiver<Vec<f32>>,
}

impl std::fmt::Debug for EchoCanceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EchoCanceller").finish_non_exhaustive()
    }
}

impl Default for EchoCanceller {
    fn default() -> Self {
        Self::new()
    }
}

impl EchoCanceller {
    pub fn new() -> Self {
        let (work, jobs) = std::sync::mpsc::channel::<(Vec<f32>, Vec<f32>)>();
        let (results, done) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new().name("arthur-aec".into()).spawn(move || {
            let mut aec = Aec3::new();
            for (mut mic, played) in jobs {
                aec.process(&mut mic, &played);
                if results.send(mic).is_err() {
                    break;
                }
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "echo canceller thread not started: the microphone passes as it is");
        }
        Self { work, done }
    }

    /// Cleans `mic` in place. `played` is what the loudspeaker played over the same
    /// samples (one reference sample per microphone sample; silence when nothing plays).
    /// Output is delayed by less than one block when `mic` is not a multiple of 10 ms.
    pub fn process(&mut self, mic: &mut [f32], played: &[f32]) {
        if self.work.send((mic.to_vec(), played.to_vec())).is_err() {
            return;
        }
        if let Ok(clean) = self.done.recv() {
            mic.copy_from_slice(&clean[..mic.len()]);
        }
    }
}

/// Finds the bulk delay between what was played and its echo, from 10 ms energy envelopes
/// (normalised cross-correlation over the last 6 s, lags up to 3 s, re-estimated every
/// half second while something plays), and delays the reference by it, less a margin left
/// to AEC3. A new delay is taken only when two estimates in a row agree.
struct DelayAligner {
    /// Reference history (undelayed), newest last.
    history: std::collections::VecDeque<f32>,
    mic_env: std::collections::VecDeque<f32>,
    ref_env: std::collections::VecDeque<f32>,
    delay: usize,
    candidate: Option<usize>,
    blocks: usize,
    out: Vec<f32>,
    /// How much the canceller took out (dB) on recent blocks where something played.
    erle: std::collections::VecDeque<f32>,
    /// An estimate confirmed the current delay (or chose it).
    locked: bool,
}

impl DelayAligner {
    const WINDOW: usize = 600; // blocks: 6 s
    const MAX_LAG: usize = 300; // blocks: 3 s
    /// What is left to AEC3's own estimator.
    const MARGIN: usize = 6; // blocks: 60 ms
    /// Lags past the current delay that AEC3's own estimator covers (its 14 filters).
    const COVERED: usize = 40; // blocks: 400 ms
    /// Blocks with sound over which the cancellation is judged.
    const ERLE_BLOCKS: usize = 200; // 2 s

    fn new() -> Self {
        Self {
            history: std::collections::VecDeque::new(),
            mic_env: std::collections::VecDeque::new(),
            ref_env: std::collections::VecDeque::new(),
            delay: 0,
            candidate: None,
            blocks: 0,
            out: vec![0.0; BLOCK],
            erle: std::collections::VecDeque::new(),
            locked: false,
        }
    }

    /// What the canceller made of a block: the microphone before and after, and whether
    /// the (aligned) reference carried sound.
    fn observe(&mut self, mic: &[f32], cleaned: &[f32], playing: bool) {
        let energy = |x: &[f32]| x.iter().map(|v| v * v).sum::<f32>() + 1e-10;
        // A silent microphone says nothing of the cancellation (the echo has not come yet).
        if !playing || energy(mic) < 1e-6 * mic.len() as f32 {
            return;
        }
        self.erle.push_back(10.0 * (energy(mic) / energy(cleaned)).log10());
        while self.erle.len() > Self::ERLE_BLOCKS {
            self.erle.pop_front();
        }
    }

    /// Whether the current alignment works: the canceller takes out at least 10 dB on
    /// most recent blocks with sound (a median: the user talking over an answer is not
    /// cancelled and must not count as a failure of the alignment).
    fn cancelling_well(&self) -> bool {
        if self.erle.len() < Self::ERLE_BLOCKS / 2 {
            return false;
        }
        let mut e: Vec<f32> = self.erle.iter().copied().collect();
        e.sort_by(f32::total_cmp);
        e[e.len() / 2] >= 10.0
    }

    /// The reference for this block, delayed.
    fn push(&mut self, mic: &[f32], reference: &[f32]) -> &[f32] {
        let rms = |x: &[f32]| (x.iter().map(|v| v * v).sum::<f32>() / x.len().max(1) as f32).sqrt();
        self.mic_env.push_back(rms(mic));
        self.ref_env.push_back(rms(reference));
        while self.mic_env.len() > Self::WINDOW {
            self.mic_env.pop_front();
            self.ref_env.pop_front();
        }
        self.history.extend(reference.iter().copied());
        let keep = (Self::MAX_LAG + 2) * BLOCK;
        while self.history.len() > keep {
            self.history.pop_front();
        }
        self.blocks += 1;
        if self.blocks.is_multiple_of(50) {
            self.estimate();
        }
        let n = self.history.len();
        for (i, out) in self.out.iter_mut().enumerate() {
            // Sample i of this block, `delay` samples back.
            let back = self.delay + BLOCK - i;
            *out = if back <= n { self.history[n - back] } else { 0.0 };
        }
        &self.out
    }

    fn estimate(&mut self) {
        // A working alignment is kept: the envelope correlation is easily fooled (the
        // user's voice in the window, an answer's rhythm), and a wrong jump lets the
        // whole echo through until the next estimate. (Before an alignment was confirmed,
        // AEC3's output says little: it mutes an echo it cannot model yet.)
        if self.locked && self.cancelling_well() {
            self.candidate = None;
            return;
        }
        // The echo cannot come before what made it: what the microphone heard before the
        // first sound played in the window is the room (the user's question, loud and
        // close), not an echo. Left in, it swamps the echo's correlation at the true lag.
        let Some(first) = self.ref_env.iter().position(|e| *e > 1e-3) else { return };
        let mic: Vec<f32> = self.mic_env.iter().skip(first).copied().collect();
        let rf: Vec<f32> = self.ref_env.iter().skip(first).copied().collect();
        let n = mic.len();
        let active = rf.iter().filter(|e| **e > 1e-3).count();
        if n < 200 || active < 100 {
            return; // too little played to tell
        }
        let mean = |x: &[f32]| x.iter().sum::<f32>() / x.len() as f32;
        let correlation = |lag: usize| {
            let a = &mic[lag..];
            let b = &rf[..n - lag];
            let (ma, mb) = (mean(a), mean(b));
            let (mut num, mut da, mut db) = (0.0, 0.0, 0.0);
            for (x, y) in a.iter().zip(b) {
                num += (x - ma) * (y - mb);
                da += (x - ma) * (x - ma);
                db += (y - mb) * (y - mb);
            }
            num / (da * db).sqrt().max(1e-12)
        };
        let lags = 0..Self::MAX_LAG.min(n - 100);
        let scores: Vec<f32> = lags.clone().map(correlation).collect();
        let Some((best_lag, best)) = scores.iter().copied().enumerate().max_by(|a, b| a.1.total_cmp(&b.1)) else {
            return;
        };
        // What the current alignment already covers (AEC3 finds the rest of the delay
        // itself): a new delay must explain the echo clearly better, or it is not worth
        // the canceller re-converging — a wrong jump lets the whole echo through.
        let current = self.delay / BLOCK;
        let covered = scores
            .iter()
            .enumerate()
            .filter(|(lag, _)| (current..current + Self::COVERED).contains(lag))
            .map(|(_, r)| *r)
            .fold(f32::NEG_INFINITY, f32::max);
        if best >= 0.6 && (current..current + Self::COVERED).contains(&best_lag) {
            self.locked = true;
        }
        if best < 0.5 || (current..current + Self::COVERED).contains(&best_lag) || best < covered + 0.1 {
            self.candidate = None;
            return;
        }
        let delay = best_lag.saturating_sub(Self::MARGIN) * BLOCK;
        if self.candidate.is_some_and(|c| c.abs_diff(delay) <= 2 * BLOCK) {
            tracing::debug!(delay_ms = delay / 16, correlation = best, covered, "echo path delay found");
            self.delay = delay;
            self.candidate = None;
            self.locked = true;
        } else {
            self.candidate = Some(delay);
        }
    }
}

/// AEC3 itself, on the canceller's thread.
struct Aec3 {
    aec: EchoCanceller3,
    /// Device latency seen so far, taken out of the reference before AEC3 (whose own
    /// delay estimator covers a few hundred milliseconds, where a sound server may buffer
    /// two seconds).
    aligner: DelayAligner,
    hpf: HighPassFilter,
    render: AudioBuffer,
    capture: AudioBuffer,
    config: StreamConfig,
    scratch: Vec<Vec<f32>>,
    out: Vec<f32>,
    /// Blocks since the (aligned) reference last carried sound.
    quiet_blocks: usize,
    /// Reference not yet given to AEC3 (when a frame is not a whole number of blocks).
    pending_mic: Vec<f32>,
    pending_ref: Vec<f32>,
}

impl Aec3 {
    fn new() -> Self {
        let rate = SAMPLE_RATE_HZ as usize;
        let buffer = || AudioBuffer::from_sample_rates(rate, 1, rate, 1, rate);
        let mut config = EchoCanceller3Config::default();
        // Residual delays up to about 0.7 s once the aligner took out the bulk.
        config.delay.num_filters = 14;
        config.delay.down_sampling_factor = 8;
        Self {
            aec: EchoCanceller3::new(config, rate as i32, 1, 1),
            aligner: DelayAligner::new(),
            hpf: HighPassFilter::new(rate as i32, 1),
            render: buffer(),
            capture: buffer(),
            config: StreamConfig::new(rate, 1, false),
            scratch: vec![vec![0.0; BLOCK]],
            out: vec![0.0; BLOCK],
            quiet_blocks: usize::MAX / 2,
            pending_mic: Vec::new(),
            pending_ref: Vec::new(),
        }
    }

    fn process(&mut self, mic: &mut [f32], played: &[f32]) {
        debug_assert_eq!(mic.len(), played.len());
        self.pending_mic.extend_from_slice(mic);
        self.pending_ref.extend(played.iter().copied().chain(std::iter::repeat(0.0)).take(mic.len()));
        let whole = self.pending_mic.len() / BLOCK * BLOCK;
        let mut cleaned = Vec::with_capacity(whole);
        for start in (0..whole).step_by(BLOCK) {
            self.block(start);
            cleaned.extend_from_slice(&self.out);
        }
        self.pending_mic.drain(..whole);
        self.pending_ref.drain(..whole);
        // Hand back as many cleaned samples as came in, the newest last.
        let n = mic.len();
        if cleaned.len() >= n {
            mic.copy_from_slice(&cleaned[cleaned.len() - n..]);
        } else {
            let keep = n - cleaned.len();
            mic.copy_within(..keep, 0);
            mic[keep..].copy_from_slice(&cleaned);
        }
    }

    fn block(&mut self, start: usize) {
        let mic = &self.pending_mic[start..start + BLOCK];
        let reference = self.aligner.push(mic, &self.pending_ref[start..start + BLOCK]);
        let loud = reference.iter().any(|v| v.abs() > 1e-4);
        self.quiet_blocks = if loud { 0 } else { self.quiet_blocks.saturating_add(1) };
        self.render.copy_from(&[reference], &self.config);
        self.render.split_into_frequency_bands();
        self.aec.analyze_render(&mut self.render);

        let mic = &self.pending_mic[start..start + BLOCK];
        self.capture.copy_from(&[mic], &self.config);
        self.scratch[0].copy_from_slice(&self.capture.channel(0)[..BLOCK]);
        self.hpf.process(&mut self.scratch);
        self.capture.channel_mut(0)[..BLOCK].copy_from_slice(&self.scratch[0]);
        self.aec.analyze_capture(&mut self.capture);
        self.capture.split_into_frequency_bands();
        self.aec.process_capture(&mut self.capture, false);
        self.capture.merge_frequency_bands();
        let mut out = [self.out.as_mut_slice()];
        self.capture.copy_to_stream(&self.config, &mut out);
        self.aligner.observe(&self.pending_mic[start..start + BLOCK], &self.out, loud);
        // Nothing has played for longer than an echo lasts: what the microphone hears is
        // the room, and AEC3's suppressor (slow to let go) would only muffle the user.
        if self.quiet_blocks > Self::ECHO_TAIL_BLOCKS {
            self.out.copy_from_slice(&self.pending_mic[start..start + BLOCK]);
        }
    }

    /// How long an echo can last after the aligned reference fell silent (reverb), blocks.
    const ECHO_TAIL_BLOCKS: usize = 40;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * 0.2
            })
            .collect()
    }

    fn power(x: &[f32]) -> f32 {
        x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32
    }

    /// A speech-like far-end signal (noise with a syllable envelope) through a 40 ms delay
    /// at half amplitude is removed by more than 20 dB once AEC3 has converged.
    #[test]
    fn the_echo_of_what_was_played_is_removed() {
        let n = 16_000 * 6;
        let far: Vec<f32> = noise(n, 3)
            .into_iter()
            .enumerate()
            .map(|(i, s)| s * (0.55 + 0.45 * (i as f32 * std::f32::consts::TAU * 4.0 / 16_000.0).sin()))
            .collect();
        let delay = 640;
        let mut mic: Vec<f32> = (0..n).map(|i| if i >= delay { 0.5 * far[i - delay] } else { 0.0 }).collect();
        let echo = mic.clone();
        let mut aec = EchoCanceller::new();
        for (m, f) in mic.chunks_mut(480).zip(far.chunks(480)) {
            aec.process(m, f);
        }
        let tail = 16_000 * 3..n;
        let erle = 10.0 * (power(&echo[tail.clone()]) / power(&mic[tail]).max(1e-12)).log10();
        assert!(erle > 20.0, "ERLE {erle:.1} dB");
    }

    /// A sound server buffering 1.7 s (as a PulseAudio null sink does): the aligner finds
    /// the delay and the echo is removed all the same.
    #[test]
    fn an_echo_delayed_by_the_device_buffers_is_removed_too() {
        let n = 16_000 * 14;
        let far: Vec<f32> = noise(n, 5)
            .into_iter()
            .enumerate()
            .map(|(i, s)| s * (0.5 + 0.5 * (i as f32 * std::f32::consts::TAU * 2.7 / 16_000.0).sin()).powi(2))
            .collect();
        let delay = 27_200;
        let mut mic: Vec<f32> = (0..n).map(|i| if i >= delay { far[i - delay] } else { 0.0 }).collect();
        let echo = mic.clone();
        let mut aec = EchoCanceller::new();
        for (m, f) in mic.chunks_mut(480).zip(far.chunks(480)) {
            aec.process(m, f);
        }
        let tail = 16_000 * 9..n;
        let erle = 10.0 * (power(&echo[tail.clone()]) / power(&mic[tail]).max(1e-12)).log10();
        assert!(erle > 20.0, "ERLE {erle:.1} dB");
    }

    /// Noise shaped by syllables of random lengths (60–300 ms) and pauses: an envelope with
    /// no period for a correlation to lock onto by accident.
    fn syllables(n: usize, seed: u64, gain: f32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f32 / (1u64 << 53) as f32
        };
        let carrier = noise(n, seed ^ 0x55);
        let mut out = vec![0.0; n];
        let mut at = 0;
        while at < n {
            let len = (960.0 + next() * 3840.0) as usize;
            let level = if next() < 0.25 { 0.0 } else { gain * (0.3 + 0.7 * next()) };
            for i in at..(at + len).min(n) {
                let phase = (i - at) as f32 / len as f32 * std::f32::consts::PI;
                out[i] = carrier[i] * level * phase.sin();
            }
            at += len;
        }
        out
    }

    /// The user's question, loud and close, is in the microphone before anything plays: it
    /// is the room, not an echo, and must not pull the delay estimate onto a lag where the
    /// answer's rhythm happens to match it (this sent the reference 2.4 s off and let the
    /// answer's own echo cut it in the simulated room).
    #[test]
    fn speech_heard_before_anything_played_does_not_move_the_echo_delay() {
        for seed in 1..=12 {
            let question = 16_000 * 5 / 2;
            let n = question + 16_000 * 8;
            let user = syllables(question, seed, 0.9);
            let far: Vec<f32> =
                std::iter::repeat_n(0.0, question).chain(syllables(n - question, seed + 100, 0.5)).collect();
            let delay = 960; // 60 ms
            let mic: Vec<f32> = (0..n)
                .map(|i| user.get(i).copied().unwrap_or(0.0) + if i >= delay { 0.5 * far[i - delay] } else { 0.0 })
                .collect();
            let mut aligner = DelayAligner::new();
            let mut worst = 0;
            for (m, f) in mic.chunks(BLOCK).zip(far.chunks(BLOCK)) {
                aligner.push(m, f);
                worst = worst.max(aligner.delay);
            }
            assert!(worst <= 4 * BLOCK, "seed {seed}: the reference was delayed {} ms", worst / 16);
        }
    }

    /// The user talking over an answer (loud, close, for two seconds) is in the window the
    /// delay is estimated on: the alignment that cancels the echo is kept.
    #[test]
    fn the_user_talking_over_an_answer_does_not_move_the_echo_delay() {
        for seed in 1..=8 {
            let n = 16_000 * 12;
            let far = syllables(n, seed + 200, 0.5);
            let talk = 16_000 * 4..16_000 * 6;
            let user = syllables(talk.len(), seed + 300, 0.9);
            let delay = 960; // 60 ms
            let mic: Vec<f32> = (0..n)
                .map(|i| {
                    let near = if talk.contains(&i) { user[i - talk.start] } else { 0.0 };
                    near + if i >= delay { 0.5 * far[i - delay] } else { 0.0 }
                })
                .collect();
            let mut canceller = Aec3::new();
            let mut worst = 0;
            for (m, f) in mic.chunks(480).zip(far.chunks(480)) {
                let mut m = m.to_vec();
                canceller.process(&mut m, f);
                worst = worst.max(canceller.aligner.delay);
            }
            assert!(worst <= 4 * BLOCK, "seed {seed}: the reference was delayed {} ms", worst / 16);
        }
    }

    /// With nothing played, what the microphone hears goes through.
    #[test]
    fn without_a_reference_the_microphone_passes() {
        let n = 16_000 * 2;
        let voice: Vec<f32> = noise(n, 9);
        let mut mic = voice.clone();
        let mut aec = EchoCanceller::new();
        for m in mic.chunks_mut(480) {
            let silence = vec![0.0; m.len()];
            aec.process(m, &silence);
        }
        let ratio = power(&mic[8_000..]) / power(&voice[8_000..]);
        assert!((0.5..2.0).contains(&ratio), "{ratio}");
    }
}
