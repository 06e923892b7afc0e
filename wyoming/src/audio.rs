//! PCM as Wyoming carries it (`rate`, `width` in bytes, `channels`, interleaved little-endian
//! integers; width 1 is unsigned, as in WAV) to and from what Arthur's audio code works on:
//! mono `f32` in [-1, 1], resampled to 16 kHz for the ears. Formats come from the peer, so
//! each is checked before a byte is decoded.

use arthur_audio::wav::StreamResampler;
use arthur_audio::SAMPLE_RATE_HZ;
use serde_json::{json, Value};

use crate::event::Event;

/// Sample rates accepted from a peer.
pub const RATES: std::ops::RangeInclusive<u32> = 1_000..=192_000;
/// At most this many channels (they are averaged into one).
pub const MAX_CHANNELS: u16 = 16;

/// An audio stream's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AudioFormat {
    pub rate: u32,
    /// Bytes per sample: 1 (unsigned), 2, 3 or 4 (signed).
    pub width: u16,
    pub channels: u16,
}

/// Why audio from a peer was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("audio format field `{0}` is missing or not a whole number")]
    Missing(&'static str),
    #[error("sample rate {0} Hz is outside 1000–192000")]
    Rate(u64),
    #[error("sample width {0} bytes is not 1, 2, 3 or 4")]
    Width(u64),
    #[error("{0} channels is not between 1 and {MAX_CHANNELS}")]
    Channels(u64),
    #[error("a chunk of {len} bytes is not a whole number of {frame}-byte frames")]
    Partial { len: usize, frame: usize },
}

impl AudioFormat {
    /// What Arthur sends: 16-bit mono at `rate`.
    pub fn mono16(rate: u32) -> Self {
        Self { rate, width: 2, channels: 1 }
    }

    /// The format named in an `audio-start` or `audio-chunk` event's data.
    pub fn from_event(event: &Event) -> Result<Self, FormatError> {
        let field = |key: &'static str| event.data.get(key).and_then(Value::as_u64).ok_or(FormatError::Missing(key));
        let (rate, width, channels) = (field("rate")?, field("width")?, field("channels")?);
        if !RATES.contains(&u32::try_from(rate).unwrap_or(0)) {
            return Err(FormatError::Rate(rate));
        }
        if !(1..=4).contains(&width) {
            return Err(FormatError::Width(width));
        }
        if channels == 0 || channels > u64::from(MAX_CHANNELS) {
            return Err(FormatError::Channels(channels));
        }
        Ok(Self { rate: rate as u32, width: width as u16, channels: channels as u16 })
    }

    /// The event data naming this format (with a null timestamp, as the reference writes).
    pub fn to_data(self) -> Value {
        json!({"rate": self.rate, "width": self.width, "channels": self.channels, "timestamp": null})
    }

    pub fn frame_bytes(self) -> usize {
        usize::from(self.width) * usize::from(self.channels)
    }

    /// The bytes as mono samples (channels averaged), at this format's rate.
    pub fn decode_mono(self, bytes: &[u8]) -> Result<Vec<f32>, FormatError> {
        let frame = self.frame_bytes();
        if !bytes.len().is_multiple_of(frame) {
            return Err(FormatError::Partial { len: bytes.len(), frame });
        }
        let width = usize::from(self.width);
        let sample = |b: &[u8]| -> f32 {
            match width {
                1 => (f32::from(b[0]) - 128.0) / 128.0,
                2 => f32::from(i16::from_le_bytes([b[0], b[1]])) / 32_768.0,
                3 => (i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8) as f32 / 8_388_608.0,
                _ => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32 / 2_147_483_648.0,
            }
        };
        let channels = f32::from(self.channels);
        Ok(bytes.chunks_exact(frame).map(|f| f.chunks_exact(width).map(sample).sum::<f32>() / channels).collect())
    }
}

/// Mono samples as 16-bit little-endian PCM (clipped to [-1, 1]).
pub fn encode_i16(samples: &[f32]) -> Vec<u8> {
    samples.iter().flat_map(|s| ((s.clamp(-1.0, 1.0) * 32_767.0).round() as i16).to_le_bytes()).collect()
}

/// A stream in any format, converted to 16 kHz mono as it arrives; the resampler starts over
/// when the rate changes.
#[derive(Default)]
pub struct ToMono16k {
    resampler: Option<(u32, StreamResampler)>,
}

impl ToMono16k {
    /// Appends the 16 kHz samples of `bytes` (in `format`) to `out`.
    pub fn push(&mut self, format: AudioFormat, bytes: &[u8], out: &mut Vec<f32>) -> Result<(), FormatError> {
        let mono = format.decode_mono(bytes)?;
        if self.resampler.as_ref().is_none_or(|(rate, _)| *rate != format.rate) {
            self.flush(out);
            let resampler = StreamResampler::new(format.rate, SAMPLE_RATE_HZ).map_err(|_| FormatError::Rate(0))?;
            self.resampler = Some((format.rate, resampler));
        }
        if let Some((_, resampler)) = self.resampler.as_mut() {
            resampler.process(&mono, out);
        }
        Ok(())
    }

    /// The end of the stream: what the resampler still holds (its kernel's half) comes out.
    pub fn flush(&mut self, out: &mut Vec<f32>) {
        if let Some((rate, mut resampler)) = self.resampler.take() {
            // 10 ms of silence pushes every pending output sample through the kernel.
            resampler.process(&vec![0.0; (rate / 100) as usize], out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(rate: u64, width: u64, channels: u64) -> Event {
        Event::with_data("audio-chunk", json!({"rate": rate, "width": width, "channels": channels}))
    }

    #[test]
    fn formats_from_a_peer_are_checked() {
        assert_eq!(AudioFormat::from_event(&chunk(16000, 2, 1)), Ok(AudioFormat::mono16(16000)));
        assert_eq!(AudioFormat::from_event(&chunk(0, 2, 1)), Err(FormatError::Rate(0)));
        assert_eq!(AudioFormat::from_event(&chunk(16000, 5, 1)), Err(FormatError::Width(5)));
        assert_eq!(AudioFormat::from_event(&chunk(16000, 2, 0)), Err(FormatError::Channels(0)));
        let no_rate = Event::with_data("audio-start", json!({"width": 2, "channels": 1}));
        assert_eq!(AudioFormat::from_event(&no_rate), Err(FormatError::Missing("rate")));
        let text_rate = Event::with_data("audio-start", json!({"rate": "16000", "width": 2, "channels": 1}));
        assert_eq!(AudioFormat::from_event(&text_rate), Err(FormatError::Missing("rate")));
    }

    #[test]
    fn every_width_decodes_to_the_same_level_and_channels_are_averaged() {
        let half = 0.5f32;
        let cases: Vec<(u16, Vec<u8>)> = vec![
            (1, vec![192]),
            (2, (16_384i16).to_le_bytes().to_vec()),
            (3, (4_194_304i32).to_le_bytes()[..3].to_vec()),
            (4, (1_073_741_824i32).to_le_bytes().to_vec()),
        ];
        for (width, bytes) in cases {
            let f = AudioFormat { rate: 16_000, width, channels: 1 };
            assert_eq!(f.decode_mono(&bytes).unwrap(), vec![half], "width {width}");
        }
        let stereo = AudioFormat { rate: 16_000, width: 2, channels: 2 };
        let frame: Vec<u8> = [16_384i16, -16_384].iter().flat_map(|s| s.to_le_bytes()).collect();
        assert_eq!(stereo.decode_mono(&frame).unwrap(), vec![0.0]);
        assert_eq!(stereo.decode_mono(&frame[..3]), Err(FormatError::Partial { len: 3, frame: 4 }));
        let negative = AudioFormat { rate: 16_000, width: 3, channels: 1 };
        assert_eq!(negative.decode_mono(&(-4_194_304i32).to_le_bytes()[..3]).unwrap(), vec![-0.5]);
    }

    #[test]
    fn a_stream_at_any_rate_becomes_16_khz_of_the_same_length() {
        for rate in [8_000u32, 16_000, 22_050, 44_100, 48_000] {
            let secs = 1.5;
            let n = (rate as f32 * secs) as usize;
            let tone: Vec<f32> =
                (0..n).map(|i| (i as f32 * 440.0 * std::f32::consts::TAU / rate as f32).sin() * 0.5).collect();
            let bytes = encode_i16(&tone);
            let mut conv = ToMono16k::default();
            let mut out = Vec::new();
            for piece in bytes.chunks(2048) {
                conv.push(AudioFormat::mono16(rate), piece, &mut out).unwrap();
            }
            conv.flush(&mut out);
            let expected = (secs * 16_000.0) as usize;
            assert!(out.len().abs_diff(expected) <= 200, "{rate} Hz: {} samples for {expected}", out.len());
            let rms = (out[1_000..20_000].iter().map(|s| s * s).sum::<f32>() / 19_000.0).sqrt();
            assert!((rms - 0.3535).abs() < 0.02, "{rate} Hz: level kept ({rms})");
        }
    }
}
