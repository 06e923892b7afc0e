//! Whether the user has finished their turn, judged from the sound of it: Smart Turn v3.2
//! (pipecat-ai, BSD-2), a small Whisper-encoder classifier (8 M parameters, int8 ONNX)
//! that hears falling intonation, a drawn-out last syllable or a « euh » where a silence
//! detector only hears a pause. Run on ONNX Runtime like Silero; its weights come from the
//! `pipecat-ai` wheel on PyPI that `models/fetch` installs.
//!
//! Its input is what pipecat's `LocalSmartTurnAnalyzerV3` gives it: the last 8 s of the
//! utterance (zeros in front when shorter), normalised to zero mean and unit variance,
//! then Whisper's log-mel spectrogram (80 Slaney mel bands, 25 ms Hann window every 10 ms,
//! log10 floored 8 decades under the peak, scaled to about -1..1): `features` reproduces
//! pipecat's `_whisper_features.py` and is tested against it (`audio/tests/smart_turn.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use realfft::RealFftPlanner;

use crate::SAMPLE_RATE_HZ;

/// File name of the model in Arthur's model directory (`models/fetch`).
pub const SMART_TURN_FILE: &str = "smart-turn-v3.2-cpu.onnx";

/// Seconds of audio the model hears (the end of the utterance).
pub const WINDOW_SECS: usize = 8;
/// Samples the model hears.
pub const WINDOW_SAMPLES: usize = WINDOW_SECS * SAMPLE_RATE_HZ as usize;
/// Mel bands.
pub const N_MELS: usize = 80;
/// Spectrogram frames (10 ms each).
pub const N_FRAMES: usize = WINDOW_SAMPLES / HOP;

const N_FFT: usize = 400;
const HOP: usize = 160;
const N_BINS: usize = N_FFT / 2 + 1;
const MEL_FLOOR: f64 = 1e-10;
const NORM_VARIANCE_EPS: f32 = 1e-7;

#[derive(Debug, thiserror::Error)]
pub enum SmartTurnError {
    #[error("Smart Turn model not found at {0} (run models/fetch)")]
    ModelMissing(PathBuf),
    #[error("ONNX Runtime: {0}")]
    Runtime(String),
}

/// The window of audio the model hears: the last [`WINDOW_SAMPLES`] of `audio`, zeros in
/// front when it is shorter (as pipecat pads it).
pub fn window(audio: &[f32]) -> Vec<f32> {
    if audio.len() >= WINDOW_SAMPLES {
        return audio[audio.len() - WINDOW_SAMPLES..].to_vec();
    }
    let mut out = vec![0.0; WINDOW_SAMPLES - audio.len()];
    out.extend_from_slice(audio);
    out
}

/// Whisper's log-mel features of `audio` (16 kHz; cut or zero-padded at the end to 8 s,
/// as pipecat's `compute_whisper_log_mel_features` does): `N_MELS × N_FRAMES` values, mel
/// band major. Give it [`window`]'s output to hear the end of an utterance.
pub fn features(audio: &[f32]) -> Vec<f32> {
    let mel = Mel::get();
    let mut x: Vec<f32> = audio.iter().copied().take(WINDOW_SAMPLES).collect();
    x.resize(WINDOW_SAMPLES, 0.0);
    // Zero mean, unit variance, before the spectrogram (in f32, like the reference; its
    // sums are numpy's pairwise ones, ours are in f64: the difference is far below the
    // features' own precision).
    let n = x.len() as f64;
    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = x.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n;
    let (mean, scale) = (mean as f32, (var as f32 + NORM_VARIANCE_EPS).sqrt());
    x.iter_mut().for_each(|v| *v = (*v - mean) / scale);

    // Reflect padding of half a window on both sides (numpy's "reflect": the edge sample
    // is not repeated), then one frame every HOP samples.
    let pad = N_FFT / 2;
    let mut padded = Vec::with_capacity(x.len() + 2 * pad);
    padded.extend((1..=pad).rev().map(|i| f64::from(x[i])));
    padded.extend(x.iter().map(|&v| f64::from(v)));
    padded.extend((0..pad).map(|i| f64::from(x[x.len() - 2 - i])));
    let frames = (padded.len() - N_FFT) / HOP + 1; // N_FRAMES + 1: the last one is dropped

    let fft = RealFftPlanner::<f64>::new().plan_fft_forward(N_FFT);
    let mut input = fft.make_input_vec();
    let mut spectrum = fft.make_output_vec();
    let mut scratch = fft.make_scratch_vec();
    let mut power = vec![0.0f64; N_BINS];
    let mut log_spec = vec![0.0f64; N_MELS * N_FRAMES];
    for f in 0..frames.min(N_FRAMES) {
        let start = f * HOP;
        for (i, slot) in input.iter_mut().enumerate() {
            *slot = padded[start + i] * mel.window[i];
        }
        fft.process_with_scratch(&mut input, &mut spectrum, &mut scratch).expect("sizes from the plan");
        for (p, c) in power.iter_mut().zip(&spectrum) {
            *p = c.norm_sqr();
        }
        for m in 0..N_MELS {
            let filter = &mel.filters[m * N_BINS..(m + 1) * N_BINS];
            let e: f64 = filter.iter().zip(&power).map(|(w, p)| w * p).sum();
            log_spec[m * N_FRAMES + f] = e.max(MEL_FLOOR).log10();
        }
    }
    let peak = log_spec.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    log_spec.iter().map(|&v| ((v.max(peak - 8.0) + 4.0) / 4.0) as f32).collect()
}

/// The periodic Hann window and the Slaney mel filterbank, computed once.
struct Mel {
    window: Vec<f64>,
    /// `N_MELS` rows of `N_BINS` weights.
    filters: Vec<f64>,
}

impl Mel {
    fn get() -> &'static Mel {
        static MEL: std::sync::OnceLock<Mel> = std::sync::OnceLock::new();
        MEL.get_or_init(|| {
            // np.hanning(N + 1)[:-1]: the periodic window torch uses.
            let window =
                (0..N_FFT).map(|n| 0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / N_FFT as f64).cos()).collect();
            Mel { window, filters: mel_filters(N_BINS, N_MELS, 0.0, f64::from(SAMPLE_RATE_HZ) / 2.0) }
        })
    }
}

fn hz_to_mel(f: f64) -> f64 {
    let logstep = 27.0 / 6.4f64.ln();
    if f >= 1000.0 {
        15.0 + (f / 1000.0).ln() * logstep
    } else {
        3.0 * f / 200.0
    }
}

fn mel_to_hz(m: f64) -> f64 {
    let logstep = 6.4f64.ln() / 27.0;
    if m >= 15.0 {
        1000.0 * (logstep * (m - 15.0)).exp()
    } else {
        200.0 * m / 3.0
    }
}

/// Triangular filters on the Slaney mel scale, area-normalised (transformers'
/// `mel_filter_bank(norm="slaney", mel_scale="slaney")`), `mels` rows of `bins` weights.
fn mel_filters(bins: usize, mels: usize, f_min: f64, f_max: f64) -> Vec<f64> {
    let (m_min, m_max) = (hz_to_mel(f_min), hz_to_mel(f_max));
    let points: Vec<f64> =
        (0..mels + 2).map(|i| mel_to_hz(m_min + (m_max - m_min) * i as f64 / (mels + 1) as f64)).collect();
    let nyquist = f64::from(SAMPLE_RATE_HZ / 2);
    let fft_freqs: Vec<f64> = (0..bins).map(|i| nyquist * i as f64 / (bins - 1) as f64).collect();
    let mut out = vec![0.0; mels * bins];
    for m in 0..mels {
        let (lo, mid, hi) = (points[m], points[m + 1], points[m + 2]);
        let enorm = 2.0 / (hi - lo);
        for (b, &f) in fft_freqs.iter().enumerate() {
            let down = (f - lo) / (mid - lo);
            let up = (hi - f) / (hi - mid);
            out[m * bins + b] = down.min(up).max(0.0) * enorm;
        }
    }
    out
}

/// Smart Turn v3.2 loaded on ONNX Runtime. One inference at a time (the session is
/// mutable); share it behind a mutex.
pub struct SmartTurn {
    session: ort::session::Session,
}

impl SmartTurn {
    /// Loads the model on ONNX Runtime (`onnxruntime`, or the one already loaded for Piper
    /// or Silero): one thread, as pipecat runs it.
    pub fn load(model: &Path, onnxruntime: Option<&Path>) -> Result<Self, SmartTurnError> {
        if !model.is_file() {
            return Err(SmartTurnError::ModelMissing(model.to_owned()));
        }
        crate::piper::init_onnxruntime(onnxruntime).map_err(|e| SmartTurnError::Runtime(e.to_string()))?;
        let runtime = |e: ort::Error<_>| SmartTurnError::Runtime(e.to_string());
        let session = ort::session::Session::builder()
            .map_err(|e| SmartTurnError::Runtime(e.to_string()))?
            .with_intra_threads(1)
            .map_err(runtime)?
            .with_inter_threads(1)
            .map_err(runtime)?
            .commit_from_file(model)
            .map_err(|e| SmartTurnError::Runtime(format!("loading {}: {e}", model.display())))?;
        Ok(Self { session })
    }

    /// The model `models/fetch` installed in `model_dir`, if any.
    pub fn model_in(model_dir: &Path) -> Option<PathBuf> {
        Some(model_dir.join(SMART_TURN_FILE)).filter(|p| p.is_file())
    }

    /// How likely it is that the user has finished, 0 to 1, having heard `audio` (the
    /// utterance so far, 16 kHz, its trailing silence included; only its last 8 s count).
    pub fn probability(&mut self, audio: &[f32]) -> Result<f32, SmartTurnError> {
        self.probability_of(features(&window(audio)))
    }

    /// The same from features already computed ([`features`]).
    pub fn probability_of(&mut self, features: Vec<f32>) -> Result<f32, SmartTurnError> {
        use ort::value::Tensor;
        let runtime = |e: ort::Error| SmartTurnError::Runtime(e.to_string());
        let input =
            Tensor::<f32>::from_array(([1usize, N_MELS, N_FRAMES], features.into_boxed_slice())).map_err(runtime)?;
        let outputs = self.session.run(ort::inputs!["input_features" => input]).map_err(runtime)?;
        // The graph ends in a sigmoid: its output, though named "logits", is a probability.
        let (_, p) = outputs[0].try_extract_tensor::<f32>().map_err(runtime)?;
        Ok(p.first().copied().unwrap_or(0.0).clamp(0.0, 1.0))
    }
}

/// A shared [`SmartTurn`], for a loop that runs it on a blocking thread.
pub type SharedSmartTurn = Arc<std::sync::Mutex<SmartTurn>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_keeps_the_end_and_pads_in_front() {
        let short: Vec<f32> = (0..10).map(|i| i as f32).collect();
        let w = window(&short);
        assert_eq!(w.len(), WINDOW_SAMPLES);
        assert!(w[..WINDOW_SAMPLES - 10].iter().all(|&v| v == 0.0));
        assert_eq!(w[WINDOW_SAMPLES - 1], 9.0);
        let long: Vec<f32> = (0..WINDOW_SAMPLES + 5).map(|i| i as f32).collect();
        assert_eq!(window(&long)[0], 5.0, "the start is dropped, the end kept");
    }

    #[test]
    fn the_mel_filters_cover_the_spectrum_once_each() {
        let f = mel_filters(N_BINS, N_MELS, 0.0, 8_000.0);
        for m in 0..N_MELS {
            let row = &f[m * N_BINS..(m + 1) * N_BINS];
            assert!(row.iter().all(|&w| w >= 0.0));
            assert!(row.iter().any(|&w| w > 0.0), "band {m} is empty");
        }
        // Slaney's scale is linear under 1 kHz and the round trip is exact.
        for hz in [0.0, 440.0, 1000.0, 3_000.0, 8_000.0] {
            assert!((mel_to_hz(hz_to_mel(hz)) - hz).abs() < 1e-6, "{hz}");
        }
    }

    #[test]
    fn a_tone_lights_its_own_band_and_the_scale_is_whispers() {
        let tone: Vec<f32> = (0..SAMPLE_RATE_HZ as usize * 2)
            .map(|i| 0.3 * (2.0 * std::f32::consts::PI * 1000.0 * i as f32 / SAMPLE_RATE_HZ as f32).sin())
            .collect();
        let f = features(&window(&tone));
        assert_eq!(f.len(), N_MELS * N_FRAMES);
        let max = f.iter().copied().fold(f32::MIN, f32::max);
        let min = f.iter().copied().fold(f32::MAX, f32::min);
        assert!((min - (max - 2.0)).abs() < 1e-4, "floored 8 decades (2 after scaling) under the peak: {min} {max}");
        // In the last frames (the tone), the loudest band is the one around 1 kHz.
        let frame = N_FRAMES - 10;
        let loudest = (0..N_MELS).max_by(|&a, &b| f[a * N_FRAMES + frame].total_cmp(&f[b * N_FRAMES + frame])).unwrap();
        let centre = mel_to_hz(hz_to_mel(8_000.0) * (loudest + 1) as f64 / (N_MELS + 1) as f64);
        assert!((800.0..1250.0).contains(&centre), "band {loudest} at {centre} Hz");
        // In the padding in front (silence), the floor.
        assert_eq!(f[loudest * N_FRAMES + 10], min);
    }
}
