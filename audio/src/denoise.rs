//! A light denoiser before whisper for a loud room: RNNoise (the `nnnoiseless` port, pure
//! Rust, weights in the crate) on one utterance. RNNoise works at 48 kHz on 10 ms frames, so
//! the utterance is resampled up and back down with the crate's own filter.

use nnnoiseless::DenoiseState;

use crate::wav::resample;
use crate::SAMPLE_RATE_HZ;

const RNNOISE_HZ: u32 = 48_000;

/// `pcm` (16 kHz mono, -1..1) with the noise RNNoise recognises removed; same length, same
/// timing (its one-frame delay is taken out).
pub fn denoise(pcm: &[f32]) -> Vec<f32> {
    if pcm.is_empty() {
        return Vec::new();
    }
    let frame = DenoiseState::FRAME_SIZE;
    let mut up: Vec<f32> = resample(pcm, SAMPLE_RATE_HZ, RNNOISE_HZ).into_iter().map(|s| s * 32_768.0).collect();
    let len = up.len();
    // One more frame to flush the delay, then whole frames.
    up.resize(len.div_ceil(frame) * frame + frame, 0.0);
    let mut state = DenoiseState::new();
    let mut out = Vec::with_capacity(up.len());
    let mut buf = vec![0.0f32; frame];
    for chunk in up.chunks_exact(frame) {
        state.process_frame(&mut buf, chunk);
        out.extend(buf.iter().map(|s| s / 32_768.0));
    }
    // The output lags the input by one frame.
    let aligned = &out[frame.min(out.len())..];
    let mut down = resample(&aligned[..len.min(aligned.len())], RNNOISE_HZ, SAMPLE_RATE_HZ);
    down.resize(pcm.len(), 0.0);
    down
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wav::rms;

    /// A deterministic white noise.
    fn noise(n: usize, amp: f32) -> Vec<f32> {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * amp
            })
            .collect()
    }

    #[test]
    fn steady_noise_is_attenuated_and_length_kept() {
        let input = noise(16_000, 0.05);
        let out = denoise(&input);
        assert_eq!(out.len(), input.len());
        // RNNoise learns the noise floor within a few hundred milliseconds.
        let tail = 8_000..16_000;
        let before = rms(&input[tail.clone()]);
        let after = rms(&out[tail]);
        assert!(after < before / 3.0, "white noise kept: {before} → {after}");
    }

    #[test]
    fn empty_is_empty() {
        assert!(denoise(&[]).is_empty());
    }
}
