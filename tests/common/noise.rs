//! The room the voice benches and tests listen in, made here from real tools: "television"
//! babble (several espeak-ng voices reading different texts at once, over a music bed),
//! music-like tones and rhythms from sox, clatter bursts (dishes), and fan noise; commands
//! mixed in at a chosen SNR; and the acoustic path from Arthur's loudspeaker back to his
//! microphone (delay, attenuation, a short reverb). Everything is deterministic: the same
//! seed gives the same samples, so a figure can be compared before and after a change.
//! Included by `tests/` (through `common`) and by `benches/voice.rs` (`#[path]`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use arthur_audio::wav;

pub const RATE: u32 = 16_000;

/// The kinds of noise of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Noise {
    /// Four espeak-ng voices talking at once, no pause: a television talk show.
    Babble,
    /// Chords, a melody, bass drum, snare and hi-hat, from sox-made notes.
    Music,
    /// Dishes and cutlery: broadband knocks and ringing clinks at random intervals.
    Clatter,
    /// A fan: brown noise with a low hum.
    Fan,
    /// A television: babble over a music bed 10 dB below it.
    Tv,
}

impl Noise {
    pub const SET: [Noise; 4] = [Noise::Babble, Noise::Music, Noise::Clatter, Noise::Fan];

    pub fn name(self) -> &'static str {
        match self {
            Noise::Babble => "babble",
            Noise::Music => "music",
            Noise::Clatter => "clatter",
            Noise::Fan => "fan",
            Noise::Tv => "television",
        }
    }
}

/// A deterministic pseudo-random generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next_u64() % items.len() as u64) as usize]
    }
}

/// Makes the noise set's sounds, caching the sox/espeak-ng outputs in `dir`.
pub struct NoiseMaker {
    dir: PathBuf,
}

impl NoiseMaker {
    pub fn new(dir: &Path) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        Self { dir: dir.to_owned() }
    }

    /// `secs` of one kind of noise, normalised to an RMS of -30 dBFS.
    pub fn make(&self, noise: Noise, secs: f32, seed: u64) -> Vec<f32> {
        let n = (secs * RATE as f32) as usize;
        let mut out = match noise {
            Noise::Babble => self.babble(n, seed),
            Noise::Music => self.music(n, seed),
            Noise::Clatter => self.clatter(n, seed),
            Noise::Fan => self.fan(n),
            Noise::Tv => {
                let mut speech = self.babble(n, seed);
                set_rms(&mut speech, db_to_amp(-30.0));
                let mut bed = self.music(n, seed ^ 0xBED);
                set_rms(&mut bed, db_to_amp(-40.0));
                add(&mut speech, 0, &bed);
                speech
            }
        };
        out.truncate(n);
        out.resize(n, 0.0);
        set_rms(&mut out, db_to_amp(-30.0));
        out
    }

    /// Speech said by espeak-ng with a voice, at a rate (words per minute) and pitch.
    pub fn espeak(&self, text: &str, voice: &str, wpm: u32, pitch: u32) -> Vec<f32> {
        let key = format!("{voice}-{wpm}-{pitch}-{:016x}", fnv(text));
        let path = self.dir.join(format!("espeak-{key}.wav"));
        if !path.is_file() {
            let text_file = self.dir.join(format!("espeak-{key}.txt"));
            std::fs::write(&text_file, text).unwrap();
            let ok = Command::new("espeak-ng")
                .args(["-v", voice, "-s", &wpm.to_string(), "-p", &pitch.to_string(), "-w"])
                .arg(&path)
                .arg("-f")
                .arg(&text_file)
                .status()
                .expect("espeak-ng is installed by scripts/setup")
                .success();
            assert!(ok, "espeak-ng failed for voice {voice}");
        }
        wav::read_wav_16k_mono(&path).unwrap()
    }

    /// Runs sox (repeatable: `-R`) to make a 16 kHz mono file from `effects`.
    fn sox(&self, name: &str, args: &[&str]) -> Vec<f32> {
        let path = self.dir.join(format!("sox-{name}.wav"));
        if !path.is_file() {
            let ok = Command::new("sox")
                .arg("-R")
                .args(["-n", "-r", "16000", "-c", "1", "-b", "16"])
                .arg(&path)
                .args(args)
                .status()
                .expect("sox is installed by scripts/setup")
                .success();
            assert!(ok, "sox failed for {name}: {args:?}");
        }
        wav::read_wav_16k_mono(&path).unwrap()
    }

    /// Four voices reading four different texts at once, each starting at another place,
    /// speakers changing every few sentences: no pause long enough to end an utterance.
    fn babble(&self, n: usize, seed: u64) -> Vec<f32> {
        let texts = ["GPL-3", "Apache-2.0", "GFDL-1.3", "MPL-2.0", "LGPL-2.1", "Artistic"]
            .map(|t| std::fs::read_to_string(format!("/usr/share/common-licenses/{t}")).unwrap_or_default());
        let voices = ["en-us", "en-us+f3", "en-gb+m3", "en-us+f4", "en-gb-x-rp+m7", "en-us+m2", "fr+f2", "en-gb+f1"];
        let mut rng = Rng::new(seed);
        let mut out = vec![0.0; n];
        for speaker in 0..4 {
            let mut at = (rng.unit() * RATE as f32) as usize;
            let text = &texts[(speaker + seed as usize) % texts.len()];
            let sentences: Vec<&str> = text.split(['.', ';']).map(str::trim).filter(|s| s.len() > 20).collect();
            let mut i = (rng.next_u64() as usize) % sentences.len().max(1);
            while at < n && !sentences.is_empty() {
                let chunk: String = (0..4).map(|k| sentences[(i + k) % sentences.len()]).collect::<Vec<_>>().join(". ");
                i += 4;
                let voice = *rng.pick(&voices);
                let wpm = rng.range(140.0, 190.0) as u32;
                let pitch = rng.range(30.0, 70.0) as u32;
                let mut piece = self.espeak(&chunk, voice, wpm, pitch);
                let gain = rng.range(0.6, 1.0);
                piece.iter_mut().for_each(|s| *s *= gain);
                add(&mut out, at, &piece);
                at += piece.len() + (rng.range(0.05, 0.4) * RATE as f32) as usize;
            }
        }
        out
    }

    /// 112 beats per minute: a four-chord progression on plucked strings, a melody, and
    /// a drum kit (kick, snare, hi-hat) — every note made by sox.
    fn music(&self, n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed ^ 0x5EED);
        let beat = (60.0 / 112.0 * RATE as f32) as usize;
        let kick = self.sox("kick", &["synth", "0.25", "sine", "90-40", "fade", "q", "0.002", "0.25", "0.2"]);
        let snare = self.sox(
            "snare",
            &["synth", "0.18", "pinknoise", "bandpass", "1800", "1.2q", "fade", "q", "0.001", "0.18", "0.16"],
        );
        let hat =
            self.sox("hat", &["synth", "0.06", "whitenoise", "highpass", "7000", "fade", "q", "0.001", "0.06", "0.05"]);
        let note = |name: &str, secs: &str| self.sox(&format!("pluck-{name}-{secs}"), &["synth", secs, "pluck", name]);
        let chords: [[&str; 3]; 4] = [["C3", "E3", "G3"], ["A2", "C3", "E3"], ["F2", "A2", "C3"], ["G2", "B2", "D3"]];
        let scale = ["C4", "D4", "E4", "G4", "A4", "C5", "D5", "E5"];
        let mut out = vec![0.0; n];
        let mut bar = 0;
        while bar * 4 * beat < n {
            let start = bar * 4 * beat;
            for tone in chords[bar % 4] {
                add_scaled(&mut out, start, &note(tone, "2"), 0.5);
                add_scaled(&mut out, start + 2 * beat, &note(tone, "2"), 0.4);
            }
            for b in 0..4 {
                let at = start + b * beat;
                add_scaled(&mut out, at, &kick, if b % 2 == 0 { 0.9 } else { 0.0 });
                add_scaled(&mut out, at, &snare, if b % 2 == 1 { 0.6 } else { 0.0 });
                add_scaled(&mut out, at, &hat, 0.3);
                add_scaled(&mut out, at + beat / 2, &hat, 0.2);
                if rng.unit() < 0.8 {
                    add_scaled(&mut out, at, &note(rng.pick::<&str>(&scale), "0.5"), 0.45);
                }
                if rng.unit() < 0.4 {
                    add_scaled(&mut out, at + beat / 2, &note(rng.pick::<&str>(&scale), "0.5"), 0.35);
                }
            }
            bar += 1;
        }
        out
    }

    /// Knocks (band-passed noise) and clinks (ringing partials), alone or in clusters,
    /// 0.2 to 4 s apart, loud and soft.
    fn clatter(&self, n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed ^ 0xC1A7);
        let knocks: Vec<Vec<f32>> = [("800", "0.12"), ("1500", "0.08"), ("3000", "0.05"), ("500", "0.2")]
            .iter()
            .map(|(f, d)| {
                self.sox(
                    &format!("knock-{f}-{d}"),
                    &["synth", d, "whitenoise", "bandpass", f, "0.8q", "fade", "q", "0.001", d, d],
                )
            })
            .collect();
        let clinks: Vec<Vec<f32>> = [("2400", "3560", "0.6"), ("3100", "4650", "0.4"), ("1800", "2710", "0.9")]
            .iter()
            .map(|(a, b, d)| {
                self.sox(
                    &format!("clink-{a}-{b}-{d}"),
                    &["synth", d, "sine", a, "sine", b, "remix", "-", "fade", "q", "0.001", d, d],
                )
            })
            .collect();
        let mut out = vec![0.0; n];
        let mut at = 0;
        while at < n {
            let cluster = if rng.unit() < 0.3 { rng.range(2.0, 6.0) as usize } else { 1 };
            let mut t = at;
            for _ in 0..cluster {
                let gain = rng.range(0.2, 1.0);
                let sound = if rng.unit() < 0.5 { rng.pick(&knocks) } else { rng.pick(&clinks) };
                add_scaled(&mut out, t, sound, gain);
                t += (rng.range(0.05, 0.25) * RATE as f32) as usize;
            }
            at = t + (rng.range(0.2, 4.0) * RATE as f32) as usize;
        }
        out
    }

    /// Brown noise low-passed, with a 100 Hz hum and a slow wobble.
    fn fan(&self, n: usize) -> Vec<f32> {
        let secs = format!("{:.0}", (n as f32 / RATE as f32).ceil() + 1.0);
        self.sox(
            &format!("fan-{secs}"),
            &[
                "synth",
                &secs,
                "brownnoise",
                "synth",
                &secs,
                "sine",
                "mix",
                "100",
                "lowpass",
                "1200",
                "tremolo",
                "0.3",
                "10",
            ],
        )
    }
}

pub fn db_to_amp(db: f32) -> f32 {
    10f32.powf(db / 20.0)
}

pub fn amp_to_db(amp: f32) -> f32 {
    20.0 * amp.max(1e-9).log10()
}

/// Scales `x` to the given RMS.
pub fn set_rms(x: &mut [f32], target: f32) {
    let r = wav::rms(x);
    if r > 0.0 {
        x.iter_mut().for_each(|s| *s *= target / r);
    }
}

/// Adds `src` into `dst` from `at` (clipped at the end of `dst`).
pub fn add(dst: &mut [f32], at: usize, src: &[f32]) {
    add_scaled(dst, at, src, 1.0);
}

pub fn add_scaled(dst: &mut [f32], at: usize, src: &[f32], gain: f32) {
    if at >= dst.len() || gain == 0.0 {
        return;
    }
    for (d, s) in dst[at..].iter_mut().zip(src) {
        *d += gain * s;
    }
}

/// RMS of the voiced part of `speech` (10 ms windows within 30 dB of its loudest), the
/// level an SNR is measured on.
pub fn active_rms(speech: &[f32]) -> f32 {
    let windows: Vec<f32> = speech.chunks(160).map(wav::rms).collect();
    let peak = windows.iter().cloned().fold(0.0, f32::max);
    let voiced: Vec<f32> = windows.into_iter().filter(|&r| r > peak * db_to_amp(-30.0)).collect();
    (voiced.iter().map(|r| r * r).sum::<f32>() / voiced.len().max(1) as f32).sqrt()
}

/// Index just after the last voiced 10 ms window of `speech` (within 30 dB of its loudest).
pub fn last_voiced_sample(speech: &[f32]) -> usize {
    let windows: Vec<f32> = speech.chunks(160).map(wav::rms).collect();
    let peak = windows.iter().cloned().fold(0.0, f32::max);
    let last = windows.iter().rposition(|&r| r > peak * db_to_amp(-30.0)).unwrap_or(0);
    ((last + 1) * 160).min(speech.len())
}

/// Index of the first voiced 10 ms window of `speech`.
pub fn first_voiced_sample(speech: &[f32]) -> usize {
    let windows: Vec<f32> = speech.chunks(160).map(wav::rms).collect();
    let peak = windows.iter().cloned().fold(0.0, f32::max);
    windows.iter().position(|&r| r > peak * db_to_amp(-30.0)).unwrap_or(0) * 160
}

/// Mixes `speech` into `noise` at `at`, scaled so that its voiced RMS is `snr_db` above
/// the noise's RMS over the same span. Returns the span it occupies.
pub fn mix_at_snr(noise: &mut [f32], at: usize, speech: &[f32], snr_db: f32) -> std::ops::Range<usize> {
    let end = (at + speech.len()).min(noise.len());
    let noise_rms = wav::rms(&noise[at..end]).max(1e-6);
    let gain = noise_rms * db_to_amp(snr_db) / active_rms(speech).max(1e-6);
    add_scaled(noise, at, speech, gain);
    at..end
}

/// The acoustic path from the loudspeaker to the microphone: a delay, an attenuation and
/// a short reverb (the direct sound, then 40 reflections decaying exponentially over
/// `rt60_ms`, deterministic).
#[derive(Debug, Clone)]
pub struct EchoPath {
    /// (delay in samples, gain), the direct sound first.
    taps: Vec<(usize, f32)>,
}

impl EchoPath {
    /// `delay_ms` before the direct sound, `gain` of the direct sound, reverb of `rt60_ms`
    /// (time to decay by 60 dB) whose first reflections are at 40 % of the direct sound.
    pub fn new(delay_ms: f32, gain: f32, rt60_ms: f32) -> Self {
        let d = (delay_ms * RATE as f32 / 1000.0) as usize;
        let tail = rt60_ms * RATE as f32 / 1000.0;
        let mut rng = Rng::new(0xEC40);
        let mut taps = vec![(d, gain)];
        for _ in 0..40 {
            let t = rng.range(0.02, 1.0) * tail;
            let sign = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
            taps.push((d + t as usize, sign * gain * 0.4 * (-6.9 * t / tail).exp()));
        }
        Self { taps }
    }

    pub fn min_delay(&self) -> usize {
        self.taps.iter().map(|t| t.0).min().unwrap_or(0)
    }

    /// Adds to `frame` (input samples from `start`) the echo of `played` (one sample per
    /// input sample, known up to `start`).
    pub fn add_echo(&self, played: &[f32], start: usize, frame: &mut [f32]) {
        for (i, out) in frame.iter_mut().enumerate() {
            let t = start + i;
            for &(k, h) in &self.taps {
                if let Some(x) = t.checked_sub(k).and_then(|j| played.get(j)) {
                    *out += h * x;
                }
            }
        }
    }

    /// The echo of a whole signal.
    pub fn apply(&self, played: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0; played.len()];
        for &(k, h) in &self.taps {
            for (t, o) in out.iter_mut().enumerate().skip(k) {
                *o += h * played[t - k];
            }
        }
        out
    }
}

/// Ten English commands, each starting with the wake word, with a key word whisper must
/// hear (espeak-ng's French is not intelligible to whisper; see issue 4).
pub const COMMANDS: [(&str, &str); 10] = [
    ("Arthur, remind me to call the bank tomorrow at nine.", "bank"),
    ("Arthur, add a note: buy bread and milk.", "bread"),
    ("Arthur, start a work session on the garden project.", "garden"),
    ("Arthur, what are my reminders for today?", "reminders"),
    ("Arthur, how long did I work this week?", "work"),
    ("Arthur, remember that my sister likes tulips.", "tulips"),
    ("Arthur, pause the session.", "pause"),
    ("Arthur, list my notes about the kitchen.", "kitchen"),
    ("Arthur, remind me to water the plants on Sunday.", "plants"),
    ("Arthur, stop the work session.", "session"),
];

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// What a [`RoomSpeaker`] and the microphone it leaks into share.
struct RoomShared {
    state: std::sync::Mutex<RoomState>,
    advanced: tokio::sync::Notify,
}

#[derive(Default)]
struct RoomState {
    /// Input samples the loop has consumed (the speaker advanced by that much).
    advanced: usize,
    /// What the loudspeaker played, one sample per input sample (silence included).
    played: Vec<f32>,
}

/// A loudspeaker in the room: plays in audio time (a [`WavSpeaker`]) and tells the
/// microphone what it played, so the echo can be mixed into the next frames; notes when
/// each piece of audio was handed to it.
pub struct RoomSpeaker {
    inner: arthur_audio::playback::WavSpeaker,
    shared: std::sync::Arc<RoomShared>,
    /// Whether its sound reaches the microphone (an echo path was given).
    echoes: bool,
    /// (wall time, input sample, length) of every piece enqueued.
    pub enqueued: std::sync::Arc<std::sync::Mutex<Vec<(std::time::Instant, usize, usize)>>>,
}

impl RoomSpeaker {
    pub fn played(&self) -> Vec<f32> {
        self.shared.state.lock().unwrap().played.clone()
    }
    pub fn inner(&self) -> &arthur_audio::playback::WavSpeaker {
        &self.inner
    }
}

impl arthur_audio::playback::Speaker for RoomSpeaker {
    fn enqueue(&mut self, pcm: &arthur_audio::tts::Pcm) -> Result<(), arthur_audio::playback::PlaybackError> {
        let at = self.shared.state.lock().unwrap().advanced;
        self.enqueued.lock().unwrap().push((std::time::Instant::now(), at, pcm.samples.len()));
        self.inner.enqueue(pcm)
    }
    fn is_playing(&self) -> bool {
        self.inner.is_playing()
    }
    fn stop(&mut self) {
        self.inner.stop()
    }
    fn advance(&mut self, samples: usize) {
        let before = self.inner.played().len();
        self.inner.advance(samples);
        let mut state = self.shared.state.lock().unwrap();
        let new = &self.inner.played()[before..];
        state.played.extend_from_slice(new);
        let pad = samples.saturating_sub(new.len());
        state.played.extend(std::iter::repeat_n(0.0, pad));
        state.advanced += samples;
        drop(state);
        self.shared.advanced.notify_waiters();
    }
    fn reference(&mut self, at: std::time::Instant, samples: usize, out: &mut Vec<f32>) {
        self.inner.reference(at, samples, out)
    }
    fn echoes(&self) -> bool {
        self.echoes
    }
    fn drain(&mut self) {
        self.inner.drain()
    }
}

/// A microphone in the room: `input` (the user and the background) as 480-sample frames,
/// plus the loudspeaker's echo through `echo` (its delay must be at least one frame: the
/// echo of what plays during a frame reaches the microphone after it). With `paced`,
/// frame n is delivered at `t0 + (n + 1) × 30 ms`, as a microphone delivers it once
/// captured; otherwise as fast as the loop takes them (the loop's clock is the audio).
pub fn room(
    input: Vec<f32>,
    echo: Option<EchoPath>,
    paced: Option<tokio::time::Instant>,
) -> (tokio::sync::mpsc::Receiver<Vec<f32>>, RoomSpeaker) {
    const FRAME: usize = arthur_audio::wav::FRAME_SAMPLES;
    let shared = std::sync::Arc::new(RoomShared { state: Default::default(), advanced: tokio::sync::Notify::new() });
    let speaker = RoomSpeaker {
        inner: arthur_audio::playback::WavSpeaker::new(),
        shared: shared.clone(),
        echoes: echo.is_some(),
        enqueued: Default::default(),
    };
    if let Some(path) = &echo {
        assert!(path.min_delay() >= FRAME, "the echo path's delay must be at least one frame");
    }
    let (tx, rx) = tokio::sync::mpsc::channel(if paced.is_some() { 4096 } else { 1 });
    tokio::spawn(async move {
        for (n, chunk) in input.chunks(FRAME).enumerate() {
            let mut frame = chunk.to_vec();
            frame.resize(FRAME, 0.0);
            if let Some(path) = &echo {
                // Wait until the loop consumed the previous frames: what was played then is known.
                loop {
                    let notified = shared.advanced.notified();
                    if shared.state.lock().unwrap().advanced >= n * FRAME {
                        break;
                    }
                    notified.await;
                }
                let state = shared.state.lock().unwrap();
                path.add_echo(&state.played, n * FRAME, &mut frame);
            }
            if let Some(t0) = paced {
                tokio::time::sleep_until(t0 + std::time::Duration::from_secs_f64((n + 1) as f64 * 0.03)).await;
            }
            if tx.send(frame).await.is_err() {
                return;
            }
        }
    });
    (rx, speaker)
}
