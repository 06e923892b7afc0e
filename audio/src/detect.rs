//! Per-chunk speech decisions for the [`Vad`](crate::vad::Vad): is there a voice in these
//! few milliseconds? An energy threshold answers "is it loud", which a television, music or
//! dishes also are; a trained detector answers "is it speech". Three detectors, compared on
//! the same noise set by `cargo bench --bench voice`:
//!
//! - [`EnergyDetector`] — the adaptive energy threshold Arthur used before (noise floor =
//!   a low percentile of recent energies), kept to measure against;
//! - [`EarshotDetector`] — `earshot`, a small neural network in pure Rust whose weights
//!   ship inside the crate (16 ms chunks);
//! - [`SileroDetector`] — Silero VAD run by ONNX Runtime (already loaded for Piper), its
//!   weights from the `silero-vad` PyPI wheel that `models/fetch` installs (32 ms chunks).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// What a detector says about one chunk of 16 kHz audio.
pub trait SpeechDetector: Send {
    fn name(&self) -> &str;
    /// Samples per decision.
    fn chunk_len(&self) -> usize;
    /// How likely `chunk` (exactly [`chunk_len`](Self::chunk_len) samples, in -1..1) is
    /// speech, 0 to 1. Detectors keep state across chunks (a stream).
    fn speech_probability(&mut self, chunk: &[f32]) -> f32;
    /// Forgets the stream (a new recording, another device).
    fn reset(&mut self);
}

#[derive(Debug, thiserror::Error)]
pub enum DetectorError {
    #[error("Silero VAD model not found at {0} (run models/fetch)")]
    ModelMissing(PathBuf),
    #[error("ONNX Runtime: {0}")]
    Runtime(String),
}

/// Energy of a chunk in dBFS (RMS), floored at -120 dB.
pub fn energy_db(chunk: &[f32]) -> f32 {
    let rms = crate::wav::rms(chunk);
    20.0 * rms.max(1e-6).log10()
}

/// The adaptive energy threshold: a chunk is speech when its energy exceeds the noise
/// floor (a low percentile of the last seconds' energies) by a margin. Its "probability"
/// is 0.5 exactly at `floor + margin` and 0.35 at `floor + margin - hysteresis`, so the
/// segmenter's default thresholds (0.5 to start, 0.35 to hold) reproduce the energy VAD
/// with hysteresis it replaces.
#[derive(Debug, Clone)]
pub struct EnergyDetector {
    chunk: usize,
    margin_db: f32,
    hysteresis_db: f32,
    min_level_dbfs: f32,
    window: usize,
    percentile: f32,
    energies: VecDeque<f32>,
    floor_db: f32,
}

impl EnergyDetector {
    /// The tuning of the energy VAD before issue 20: 30 ms chunks, 10 dB over the 10th
    /// percentile of the last 3 s, 4 dB of hysteresis, never below -55 dBFS.
    pub fn new() -> Self {
        Self {
            chunk: 480,
            margin_db: 10.0,
            hysteresis_db: 4.0,
            min_level_dbfs: -55.0,
            window: 100,
            percentile: 0.1,
            energies: VecDeque::new(),
            floor_db: f32::NEG_INFINITY,
        }
    }

    pub fn noise_floor_db(&self) -> f32 {
        self.floor_db
    }
}

impl Default for EnergyDetector {
    fn default() -> Self {
        Self::new()
    }
}

impl SpeechDetector for EnergyDetector {
    fn name(&self) -> &str {
        "energy"
    }

    fn chunk_len(&self) -> usize {
        self.chunk
    }

    fn speech_probability(&mut self, chunk: &[f32]) -> f32 {
        let energy = energy_db(chunk);
        self.energies.push_back(energy);
        while self.energies.len() > self.window {
            self.energies.pop_front();
        }
        let mut values: Vec<f32> = self.energies.iter().copied().collect();
        let k = ((values.len() - 1) as f32 * self.percentile.clamp(0.0, 1.0)).round() as usize;
        let (_, v, _) = values.select_nth_unstable_by(k, f32::total_cmp);
        self.floor_db = *v;
        let onset = (self.floor_db + self.margin_db).max(self.min_level_dbfs);
        (0.5 + 0.15 * (energy - onset) / self.hysteresis_db).clamp(0.0, 1.0)
    }

    fn reset(&mut self) {
        self.energies.clear();
        self.floor_db = f32::NEG_INFINITY;
    }
}

/// `earshot`'s network: 256-sample (16 ms) chunks, weights compiled in.
pub struct EarshotDetector {
    inner: Box<earshot::Detector>,
    clipped: Vec<f32>,
}

impl EarshotDetector {
    pub fn new() -> Self {
        Self { inner: earshot::Detector::default_boxed(), clipped: Vec::with_capacity(256) }
    }
}

impl Default for EarshotDetector {
    fn default() -> Self {
        Self::new()
    }
}

impl SpeechDetector for EarshotDetector {
    fn name(&self) -> &str {
        "earshot"
    }

    fn chunk_len(&self) -> usize {
        256
    }

    fn speech_probability(&mut self, chunk: &[f32]) -> f32 {
        // earshot wants -1..1 (mixes of speech and noise can exceed it).
        self.clipped.clear();
        self.clipped.extend(chunk.iter().map(|s| s.clamp(-1.0, 1.0)));
        self.inner.predict_f32(&self.clipped).clamp(0.0, 1.0)
    }

    fn reset(&mut self) {
        self.inner.reset();
    }
}

/// File name of the Silero VAD model in Arthur's model directory (`models/fetch`).
pub const SILERO_FILE: &str = "silero_vad.onnx";

/// Silero VAD (v6, 16 kHz) on ONNX Runtime: 512-sample (32 ms) chunks, each given with the
/// previous chunk's last 64 samples as context, and the recurrent state carried over — as
/// the reference implementation (`silero_vad.utils_vad.OnnxWrapper`) does.
pub struct SileroDetector {
    session: ort::session::Session,
    state: Vec<f32>,
    context: Vec<f32>,
    input: Vec<f32>,
}

impl SileroDetector {
    const CONTEXT: usize = 64;

    /// Loads the model (`silero_vad.onnx`) on ONNX Runtime (`onnxruntime`, or the one
    /// already loaded for Piper).
    pub fn load(model: &Path, onnxruntime: Option<&Path>) -> Result<Self, DetectorError> {
        if !model.is_file() {
            return Err(DetectorError::ModelMissing(model.to_owned()));
        }
        crate::piper::init_onnxruntime(onnxruntime).map_err(|e| DetectorError::Runtime(e.to_string()))?;
        let runtime = |e: ort::Error<_>| DetectorError::Runtime(e.to_string());
        let session = ort::session::Session::builder()
            .map_err(|e| DetectorError::Runtime(e.to_string()))?
            .with_intra_threads(1)
            .map_err(runtime)?
            .with_inter_threads(1)
            .map_err(runtime)?
            .commit_from_file(model)
            .map_err(|e| DetectorError::Runtime(format!("loading {}: {e}", model.display())))?;
        Ok(Self {
            session,
            state: vec![0.0; 2 * 128],
            context: vec![0.0; Self::CONTEXT],
            input: Vec::with_capacity(Self::CONTEXT + 512),
        })
    }

    /// The model `models/fetch` installed in `model_dir`, if any.
    pub fn model_in(model_dir: &Path) -> Option<PathBuf> {
        Some(model_dir.join(SILERO_FILE)).filter(|p| p.is_file())
    }

    fn infer(&mut self, chunk: &[f32]) -> Result<f32, ort::Error> {
        use ort::value::Tensor;
        self.input.clear();
        self.input.extend_from_slice(&self.context);
        self.input.extend_from_slice(chunk);
        let input = Tensor::<f32>::from_array(([1usize, self.input.len()], self.input.clone().into_boxed_slice()))?;
        let state = Tensor::<f32>::from_array(([2usize, 1, 128], self.state.clone().into_boxed_slice()))?;
        let sr = Tensor::<i64>::from_array(([1usize], vec![16_000i64].into_boxed_slice()))?;
        let outputs = self.session.run(ort::inputs!["input" => input, "state" => state, "sr" => sr])?;
        let (_, probability) = outputs["output"].try_extract_tensor::<f32>()?;
        let p = probability.first().copied().unwrap_or(0.0);
        let (_, state) = outputs["stateN"].try_extract_tensor::<f32>()?;
        let n = self.state.len().min(state.len());
        self.state[..n].copy_from_slice(&state[..n]);
        self.context.copy_from_slice(&chunk[chunk.len() - Self::CONTEXT..]);
        Ok(p)
    }
}

impl SpeechDetector for SileroDetector {
    fn name(&self) -> &str {
        "silero"
    }

    fn chunk_len(&self) -> usize {
        512
    }

    fn speech_probability(&mut self, chunk: &[f32]) -> f32 {
        match self.infer(chunk) {
            Ok(p) => p.clamp(0.0, 1.0),
            Err(e) => {
                tracing::warn!(error = %e, "Silero VAD inference failed: chunk taken as silence");
                0.0
            }
        }
    }

    fn reset(&mut self) {
        self.state.iter_mut().for_each(|s| *s = 0.0);
        self.context.iter_mut().for_each(|s| *s = 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tone(n: usize, amp: f32) -> Vec<f32> {
        (0..n).map(|i| amp * (i as f32 * 2.0 * std::f32::consts::PI * 300.0 / 16_000.0).sin()).collect()
    }

    #[test]
    fn energy_probability_crosses_one_half_at_floor_plus_margin() {
        let mut d = EnergyDetector::new();
        for _ in 0..100 {
            d.speech_probability(&vec![0.000_316; 480]); // -70 dBFS floor
        }
        assert!(d.speech_probability(&vec![0.000_316; 480]) < 0.35);
        // 12 dB over the floor but under -55 dBFS: the minimum level rules.
        assert!(d.speech_probability(&tone(480, 0.001_78)) < 0.5);
        assert!(d.speech_probability(&tone(480, 0.1)) > 0.5);
    }

    #[test]
    fn earshot_hears_no_voice_in_silence_and_takes_any_level() {
        let mut d = EarshotDetector::new();
        let silence: Vec<f32> = vec![0.0; 256];
        let max_silence = (0..50).map(|_| d.speech_probability(&silence)).fold(0.0, f32::max);
        assert!(max_silence < 0.5, "{max_silence}");
        // Loud input beyond -1..1 does not trip earshot's range check.
        let p = d.speech_probability(&vec![1.5; 256]);
        assert!((0.0..=1.0).contains(&p));
    }
}
