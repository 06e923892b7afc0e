//! Earcons: two short tones that tell the user, without words, that Arthur is listening
//! (rising) and that it has finished listening (falling). Generated as 16 kHz f32 PCM with
//! raised-cosine fades so they start and stop without clicks.

use crate::SAMPLE_RATE_HZ;

/// Length of each earcon.
pub const EARCON_MS: u32 = 150;
/// Peak amplitude: clearly audible, well below clipping.
const AMPLITUDE: f32 = 0.3;
/// Fade in and fade out.
const FADE_MS: u32 = 15;

/// Rising tone (~150 ms): Arthur is listening.
pub fn listening() -> Vec<f32> {
    chirp(660.0, 990.0, EARCON_MS, AMPLITUDE)
}

/// Falling tone (~150 ms): Arthur heard the command.
pub fn done() -> Vec<f32> {
    chirp(990.0, 660.0, EARCON_MS, AMPLITUDE)
}

/// A timer's bell (~1 s): three short high tones, the last held, unlike the listening
/// earcons so that it is not mistaken for one.
pub fn alarm() -> Vec<f32> {
    let gap = vec![0.0; (SAMPLE_RATE_HZ / 10) as usize];
    let mut out = Vec::new();
    for (i, ms) in [180, 180, 360].into_iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(&gap);
        }
        out.extend(chirp(1320.0, 1320.0, ms, AMPLITUDE));
    }
    out
}

/// A sine glide from `from_hz` to `to_hz` (exponential, so it sounds even) over
/// `duration_ms`, peaking at `amplitude`, with raised-cosine fades at both ends; 16 kHz.
pub fn chirp(from_hz: f32, to_hz: f32, duration_ms: u32, amplitude: f32) -> Vec<f32> {
    let rate = SAMPLE_RATE_HZ as f32;
    let n = (u64::from(SAMPLE_RATE_HZ) * u64::from(duration_ms) / 1000) as usize;
    let fade = ((u64::from(SAMPLE_RATE_HZ) * u64::from(FADE_MS) / 1000) as usize).min(n / 2);
    let ratio = if from_hz > 0.0 { to_hz / from_hz } else { 1.0 };
    let mut phase = 0.0f32;
    (0..n)
        .map(|i| {
            let t = if n > 1 { i as f32 / (n - 1) as f32 } else { 0.0 };
            let freq = from_hz * ratio.powf(t);
            let gain = if i < fade {
                raised_cosine(i, fade)
            } else if i >= n - fade {
                raised_cosine(n - 1 - i, fade)
            } else {
                1.0
            };
            let sample = amplitude * gain * phase.sin();
            phase = (phase + 2.0 * std::f32::consts::PI * freq / rate) % (2.0 * std::f32::consts::PI);
            sample
        })
        .collect()
}

/// Gain at step `i` of a fade of `len` steps: 0 at the edge, rising to 1.
fn raised_cosine(i: usize, len: usize) -> f32 {
    0.5 - 0.5 * (std::f32::consts::PI * i as f32 / len as f32).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wav::{duration_secs, rms};

    /// Rising zero crossings per second over a slice.
    fn frequency(s: &[f32]) -> f32 {
        let c = s.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count();
        c as f32 / duration_secs(s, SAMPLE_RATE_HZ) as f32
    }

    #[test]
    fn earcons_are_short_audible_and_click_free() {
        for tone in [listening(), done()] {
            let secs = duration_secs(&tone, SAMPLE_RATE_HZ);
            assert!((secs - 0.15).abs() < 0.005, "{secs}");
            assert!(rms(&tone) > 0.1, "{}", rms(&tone));
            assert!(tone.iter().all(|s| s.abs() <= AMPLITUDE + 1e-6));
            // Fades: the edges start and end at silence, no jump between samples.
            assert!(tone[0].abs() < 1e-6 && tone[tone.len() - 1].abs() < 1e-3);
            let max_step = tone.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0, f32::max);
            assert!(max_step < 0.15, "{max_step}");
        }
    }

    #[test]
    fn listening_rises_and_done_falls() {
        let (up, down) = (listening(), done());
        let (a, b) = up.split_at(up.len() / 2);
        assert!(frequency(b) > frequency(a) + 100.0);
        let (a, b) = down.split_at(down.len() / 2);
        assert!(frequency(a) > frequency(b) + 100.0);
        assert_ne!(up, down);
    }

    #[test]
    fn the_alarm_is_three_high_tones_of_about_a_second() {
        let a = alarm();
        let secs = duration_secs(&a, SAMPLE_RATE_HZ);
        assert!((0.8..1.1).contains(&secs), "{secs}");
        assert!((frequency(&a[..2000]) - 1320.0).abs() < 60.0, "{}", frequency(&a[..2000]));
        assert!(a.iter().all(|s| s.abs() <= AMPLITUDE + 1e-6));
    }

    #[test]
    fn degenerate_chirps_do_not_panic() {
        assert!(chirp(440.0, 440.0, 0, 0.5).is_empty());
        assert_eq!(chirp(440.0, 880.0, 1, 0.5).len(), 16);
        assert!(chirp(0.0, 880.0, 10, 0.5).iter().all(|s| s.is_finite()));
    }
}
