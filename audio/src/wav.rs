//! WAV files in and out, and the resampler: every stage downstream works on 16 kHz mono
//! f32, so a file (any PCM format, any rate, any channel count) is converted here, and a
//! `WavSource` replays it as fixed-size frames exactly as a microphone would deliver them.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::SAMPLE_RATE_HZ;

/// 30 ms at 16 kHz: the frame size the capture path and the VAD work with.
pub const FRAME_SAMPLES: usize = 480;

/// Zero crossings of the windowed sinc on each side of its centre (at the cut-off).
const SINC_ZERO_CROSSINGS: f64 = 16.0;
/// Kaiser window shape: about 80 dB of stop-band attenuation.
const KAISER_BETA: f64 = 8.0;
/// The pass band stops this fraction below the lower Nyquist frequency, leaving room for
/// the transition band so that what aliases is attenuated.
const CUTOFF_MARGIN: f64 = 0.92;
/// Above this many distinct phases the kernel is computed per tap instead of tabulated.
const MAX_TABLE_PHASES: u64 = 4096;

#[derive(Debug, thiserror::Error)]
pub enum WavError {
    #[error("cannot open WAV file {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: hound::Error,
    },
    #[error("cannot read WAV file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: hound::Error,
    },
    #[error("cannot write WAV file {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: hound::Error,
    },
    #[error("unsupported WAV format in {path}: {bits}-bit {format}")]
    Unsupported { path: PathBuf, bits: u16, format: &'static str },
    #[error("invalid WAV parameters: {0}")]
    Invalid(&'static str),
}

/// Reads any PCM WAV (8/16/24/32-bit integer or 32-bit float, any channel count, any
/// rate) and returns 16 kHz mono samples in [-1, 1] (channels averaged).
pub fn read_wav_16k_mono(path: impl AsRef<Path>) -> Result<Vec<f32>, WavError> {
    let (samples, rate) = read_wav_mono(path)?;
    Ok(resample(&samples, rate, SAMPLE_RATE_HZ))
}

/// Reads any PCM WAV as mono f32 at its own rate; returns the samples and the rate.
pub fn read_wav_mono(path: impl AsRef<Path>) -> Result<(Vec<f32>, u32), WavError> {
    let path = path.as_ref();
    let reader = hound::WavReader::open(path).map_err(|source| WavError::Open { path: path.to_owned(), source })?;
    let spec = reader.spec();
    let read_err = |source| WavError::Read { path: path.to_owned(), source };
    let interleaved: Vec<f32> = match (spec.sample_format, spec.bits_per_sample) {
        (hound::SampleFormat::Float, 32) => reader.into_samples::<f32>().collect::<Result<_, _>>().map_err(read_err)?,
        (hound::SampleFormat::Int, bits @ (8 | 16 | 24 | 32)) => {
            // hound gives 8-bit (unsigned on disk) already centred on zero.
            let scale = 1.0 / (1u64 << (bits - 1)) as f64;
            reader
                .into_samples::<i32>()
                .map(|s| s.map(|v| (f64::from(v) * scale) as f32))
                .collect::<Result<_, _>>()
                .map_err(read_err)?
        }
        (format, bits) => {
            return Err(WavError::Unsupported {
                path: path.to_owned(),
                bits,
                format: match format {
                    hound::SampleFormat::Float => "float",
                    hound::SampleFormat::Int => "integer",
                },
            });
        }
    };
    let channels = usize::from(spec.channels.max(1));
    let mono = if channels == 1 {
        interleaved
    } else {
        interleaved.chunks_exact(channels).map(|frame| frame.iter().sum::<f32>() / channels as f32).collect()
    };
    tracing::debug!(
        path = %path.display(),
        rate = spec.sample_rate,
        channels,
        bits = spec.bits_per_sample,
        samples = mono.len(),
        "read WAV file"
    );
    Ok((mono, spec.sample_rate))
}

/// Converts `input` sampled at `from_hz` to `to_hz` with a Kaiser-windowed sinc
/// (polyphase when the rate ratio allows). When downsampling, the cut-off sits below the
/// new Nyquist frequency, so what would alias is attenuated (about 80 dB in the stop band).
/// Returns `ceil(len × to / from)` samples; an empty input or a zero rate gives an empty
/// output, equal rates a copy.
pub fn resample(input: &[f32], from_hz: u32, to_hz: u32) -> Vec<f32> {
    if from_hz == 0 || to_hz == 0 || input.is_empty() {
        return Vec::new();
    }
    if from_hz == to_hz {
        return input.to_vec();
    }
    let filter = Polyphase::new(from_hz, to_hz);
    let out_len = (input.len() as u64 * filter.up).div_ceil(filter.down) as usize;
    let sample = |j: i64| usize::try_from(j).ok().and_then(|j| input.get(j)).copied();
    (0..out_len as u64).map(|n| filter.output(n, sample)).collect()
}

/// The windowed-sinc filter shared by [`resample`] and [`StreamResampler`]: output sample
/// n sits at input position n × down / up; its tap k (0..taps) of phase p weighs input
/// sample i + k − reach + 1.
struct Polyphase {
    up: u64,
    down: u64,
    reach: i64,
    taps: usize,
    cutoff: f64,
    half_width: f64,
    /// Weights per phase, when there are few enough phases to tabulate.
    table: Option<Vec<f32>>,
}

impl Polyphase {
    /// Both rates > 0.
    fn new(from_hz: u32, to_hz: u32) -> Self {
        let g = gcd(u64::from(from_hz), u64::from(to_hz));
        let up = u64::from(to_hz) / g;
        let down = u64::from(from_hz) / g;
        let cutoff = CUTOFF_MARGIN * (f64::from(to_hz) / f64::from(from_hz)).min(1.0);
        let half_width = SINC_ZERO_CROSSINGS / cutoff;
        let reach = half_width.ceil() as i64;
        let taps = (2 * reach) as usize;
        let mut filter = Self { up, down, reach, taps, cutoff, half_width, table: None };
        if up <= MAX_TABLE_PHASES && up != down {
            let table = (0..up).flat_map(|p| (0..taps).map(move |k| (p, k))).map(|(p, k)| filter.tap(p, k) as f32);
            filter.table = Some(table.collect());
        }
        filter
    }

    fn tap(&self, phase: u64, k: usize) -> f64 {
        let frac = phase as f64 / self.up as f64;
        kernel(frac - (k as f64 - self.reach as f64 + 1.0), self.cutoff, self.half_width)
    }

    /// Input index of output `n`'s centre, and its phase.
    fn position(&self, n: u64) -> (i64, u64) {
        let pos = n * self.down;
        ((pos / self.up) as i64, pos % self.up)
    }

    /// Output sample `n`; `sample(j)` is input sample j, `None` outside the input (zero).
    fn output(&self, n: u64, sample: impl Fn(i64) -> Option<f32>) -> f32 {
        let (i, phase) = self.position(n);
        let first = i - self.reach + 1;
        let mut acc = 0.0f64;
        for k in 0..self.taps {
            if let Some(x) = sample(first + k as i64) {
                let w = match &self.table {
                    Some(t) => f64::from(t[phase as usize * self.taps + k]),
                    None => self.tap(phase, k),
                };
                acc += f64::from(x) * w;
            }
        }
        acc as f32
    }
}

/// The same conversion as [`resample`], for a stream that arrives in pieces (a capture
/// callback): each output sample is computed once its whole kernel has arrived, so the
/// output equals the one-shot resampling of the concatenated input, only delayed by half
/// the kernel. The start of the stream is zero-padded like [`resample`].
pub struct StreamResampler {
    /// `None` when the rates are equal: samples pass through.
    filter: Option<Polyphase>,
    /// Input not yet fully used; `buf[0]` is stream sample `buf_start`.
    buf: Vec<f32>,
    buf_start: u64,
    next_out: u64,
}

impl StreamResampler {
    /// A converter from `from_hz` to `to_hz` (both > 0; equal rates pass samples through).
    pub fn new(from_hz: u32, to_hz: u32) -> Result<Self, WavError> {
        if from_hz == 0 || to_hz == 0 {
            return Err(WavError::Invalid("sample rate 0"));
        }
        let filter = (from_hz != to_hz).then(|| Polyphase::new(from_hz, to_hz));
        Ok(Self { filter, buf: Vec::new(), buf_start: 0, next_out: 0 })
    }

    /// Feeds `input`; appends to `out` every output sample that can now be computed.
    pub fn process(&mut self, input: &[f32], out: &mut Vec<f32>) {
        let Some(filter) = &self.filter else {
            out.extend_from_slice(input);
            return;
        };
        self.buf.extend_from_slice(input);
        let available = (self.buf_start + self.buf.len() as u64) as i64;
        let (buf, start) = (&self.buf, self.buf_start as i64);
        // Before the stream's start: zeros; past what has arrived: never read (checked).
        let sample = |j: i64| if j < 0 { None } else { Some(buf[(j - start) as usize]) };
        while filter.position(self.next_out).0 + filter.reach < available {
            out.push(filter.output(self.next_out, sample));
            self.next_out += 1;
        }
        // Drop the input no future output will reach.
        let next_first = (filter.position(self.next_out).0 - filter.reach + 1).max(0) as u64;
        if next_first > self.buf_start {
            let drop = ((next_first - self.buf_start) as usize).min(self.buf.len());
            self.buf.drain(..drop);
            self.buf_start += drop as u64;
        }
    }
}

/// Windowed sinc at distance `x` input samples from the output position.
fn kernel(x: f64, cutoff: f64, half_width: f64) -> f64 {
    if x.abs() >= half_width {
        return 0.0;
    }
    let arg = std::f64::consts::PI * cutoff * x;
    let sinc = if arg.abs() < 1e-12 { 1.0 } else { arg.sin() / arg };
    let r = x / half_width;
    let window = bessel_i0(KAISER_BETA * (1.0 - r * r).sqrt()) / bessel_i0(KAISER_BETA);
    cutoff * sinc * window
}

/// Modified Bessel function of the first kind, order 0 (power series).
fn bessel_i0(x: f64) -> f64 {
    let half = x / 2.0;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..64 {
        let f = half / k as f64;
        term *= f * f;
        sum += term;
        if term < sum * 1e-16 {
            break;
        }
    }
    sum
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Duration of `samples` at `rate` Hz, in seconds.
pub fn duration_secs(samples: &[f32], rate: u32) -> f64 {
    if rate == 0 {
        return 0.0;
    }
    samples.len() as f64 / f64::from(rate)
}

/// Root mean square of `samples` (0 for an empty slice).
pub fn rms(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    let sum: f64 = samples.iter().map(|s| f64::from(*s) * f64::from(*s)).sum();
    (sum / samples.len() as f64).sqrt() as f32
}

/// A WAV file replayed as 16 kHz mono frames of a fixed size, the way the microphone
/// delivers them; the last frame is padded with silence so every frame has the same size.
#[derive(Debug, Clone)]
pub struct WavSource {
    samples: Vec<f32>,
    frame_len: usize,
    pos: usize,
}

impl WavSource {
    /// Opens any PCM WAV (see [`read_wav_16k_mono`]) and yields frames of `frame_len`
    /// samples (use [`FRAME_SAMPLES`] for 30 ms).
    pub fn open(path: impl AsRef<Path>, frame_len: usize) -> Result<Self, WavError> {
        Ok(Self::from_samples(read_wav_16k_mono(path)?, frame_len))
    }

    /// Frames from samples already at 16 kHz mono. A `frame_len` of 0 is taken as 1.
    pub fn from_samples(samples: Vec<f32>, frame_len: usize) -> Self {
        Self { samples, frame_len: frame_len.max(1), pos: 0 }
    }

    /// The next frame, or `None` at the end of the file.
    pub fn next_frame(&mut self) -> Option<Vec<f32>> {
        if self.pos >= self.samples.len() {
            return None;
        }
        let end = (self.pos + self.frame_len).min(self.samples.len());
        let mut frame = self.samples[self.pos..end].to_vec();
        frame.resize(self.frame_len, 0.0);
        self.pos = end;
        Some(frame)
    }

    pub fn frame_len(&self) -> usize {
        self.frame_len
    }

    /// Total length of the file, in 16 kHz samples.
    pub fn len_samples(&self) -> usize {
        self.samples.len()
    }
}

impl Iterator for WavSource {
    type Item = Vec<f32>;

    fn next(&mut self) -> Option<Vec<f32>> {
        self.next_frame()
    }
}

/// Writes f32 samples (clamped to [-1, 1]) at `rate` Hz to a 16-bit mono WAV file,
/// streaming: create, `write` as often as needed, then `finish`.
pub struct WavSink {
    path: PathBuf,
    writer: hound::WavWriter<BufWriter<File>>,
    written: u64,
}

impl WavSink {
    pub fn create(path: impl AsRef<Path>, rate: u32) -> Result<Self, WavError> {
        if rate == 0 {
            return Err(WavError::Invalid("sample rate 0"));
        }
        let path = path.as_ref().to_owned();
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: rate,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let writer =
            hound::WavWriter::create(&path, spec).map_err(|source| WavError::Write { path: path.clone(), source })?;
        Ok(Self { path, writer, written: 0 })
    }

    pub fn write(&mut self, samples: &[f32]) -> Result<(), WavError> {
        for s in samples {
            let v = (s.clamp(-1.0, 1.0) * f32::from(i16::MAX)).round() as i16;
            self.writer.write_sample(v).map_err(|source| WavError::Write { path: self.path.clone(), source })?;
        }
        self.written += samples.len() as u64;
        Ok(())
    }

    /// Samples written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Finalises the header; the file is incomplete until this is called.
    pub fn finish(self) -> Result<(), WavError> {
        let Self { path, writer, written } = self;
        writer.finalize().map_err(|source| WavError::Write { path: path.clone(), source })?;
        tracing::debug!(path = %path.display(), samples = written, "wrote WAV file");
        Ok(())
    }
}

/// Writes `samples` at `rate` Hz to a 16-bit mono WAV file in one call.
pub fn write_wav(path: impl AsRef<Path>, samples: &[f32], rate: u32) -> Result<(), WavError> {
    let mut sink = WavSink::create(path, rate)?;
    sink.write(samples)?;
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_resampler_matches_the_one_shot_resampler() {
        let input: Vec<f32> =
            (0..48_000).map(|i| ((i as f32) * 0.0131).sin() * 0.5 + ((i as f32) * 0.29).sin() * 0.2).collect();
        for (from, to) in [(48_000, 16_000), (44_100, 16_000), (16_000, 16_000), (8_000, 16_000)] {
            let whole = resample(&input, from, to);
            let mut stream = StreamResampler::new(from, to).unwrap();
            let mut out = Vec::new();
            // Uneven pieces, like capture callbacks.
            let mut rest = &input[..];
            let mut n = 1;
            while !rest.is_empty() {
                let take = (n * 97 % 1013 + 1).min(rest.len());
                stream.process(&rest[..take], &mut out);
                rest = &rest[take..];
                n += 1;
            }
            assert!(out.len() + 200 >= whole.len(), "{from}→{to}: {} of {}", out.len(), whole.len());
            for (k, (a, b)) in out.iter().zip(&whole).enumerate() {
                assert!((a - b).abs() < 1e-4, "{from}→{to} sample {k}: {a} vs {b}");
            }
        }
        assert!(StreamResampler::new(0, 16_000).is_err());
    }

    fn sine(freq: f64, rate: u32, secs: f64, amp: f32) -> Vec<f32> {
        let n = (f64::from(rate) * secs) as usize;
        (0..n).map(|i| amp * (2.0 * std::f64::consts::PI * freq * i as f64 / f64::from(rate)).sin() as f32).collect()
    }

    /// Estimated frequency from the count of rising zero crossings.
    fn frequency(samples: &[f32], rate: u32) -> f64 {
        let crossings = samples.windows(2).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count();
        crossings as f64 / duration_secs(samples, rate)
    }

    /// The middle of a signal, away from the edge effects of the filter.
    fn middle(s: &[f32]) -> &[f32] {
        &s[s.len() / 10..s.len() * 9 / 10]
    }

    #[test]
    fn resample_keeps_frequency_and_level() {
        for from in [8_000, 22_050, 44_100, 48_000, 96_000] {
            let input = sine(440.0, from, 1.0, 0.5);
            let out = resample(&input, from, 16_000);
            assert_eq!(out.len(), 16_000, "from {from}");
            let f = frequency(middle(&out), 16_000);
            assert!((f - 440.0).abs() < 3.0, "from {from}: {f} Hz");
            let level = rms(middle(&out));
            assert!((level - 0.5 / 2f32.sqrt()).abs() < 0.01, "from {from}: rms {level}");
        }
    }

    #[test]
    fn downsampling_rejects_what_would_alias() {
        // 12 kHz is above the new Nyquist (8 kHz): it must not come back as a 4 kHz tone.
        let input = sine(12_000.0, 48_000, 1.0, 0.5);
        let out = resample(&input, 48_000, 16_000);
        let ratio = rms(middle(&out)) / rms(&input);
        let db = 20.0 * ratio.max(1e-12).log10();
        assert!(db < -60.0, "aliased tone at {db:.1} dB");
        // 9 kHz from 44.1 kHz as well (odd ratio, polyphase table).
        let input = sine(9_000.0, 44_100, 1.0, 0.5);
        let out = resample(&input, 44_100, 16_000);
        let db = 20.0 * (rms(middle(&out)) / rms(&input)).max(1e-12).log10();
        assert!(db < -40.0, "aliased tone at {db:.1} dB");
    }

    #[test]
    fn resample_edge_cases() {
        assert!(resample(&[], 48_000, 16_000).is_empty());
        assert!(resample(&[1.0], 0, 16_000).is_empty());
        assert_eq!(resample(&[0.1, 0.2], 16_000, 16_000), vec![0.1, 0.2]);
        assert_eq!(resample(&[0.0; 3], 48_000, 16_000).len(), 1);
        // A ratio too fine for a table still works (direct kernel).
        let input = sine(300.0, 44_100, 0.2, 0.5);
        let out = resample(&input, 44_100, 16_001);
        assert_eq!(out.len(), (input.len() as u64 * 16_001).div_ceil(44_100) as usize);
        let f = frequency(middle(&out), 16_001);
        assert!((f - 300.0).abs() < 10.0, "{f}");
    }

    #[test]
    fn source_yields_fixed_frames_and_pads_the_last() {
        let mut src = WavSource::from_samples(vec![0.5; 1000], FRAME_SAMPLES);
        let frames: Vec<_> = src.by_ref().collect();
        assert_eq!(frames.len(), 3);
        assert!(frames.iter().all(|f| f.len() == FRAME_SAMPLES));
        assert_eq!(frames[2][1000 - 960 - 1], 0.5);
        assert_eq!(frames[2][1000 - 960], 0.0);
        assert!(src.next_frame().is_none());
    }

    #[test]
    fn sink_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.wav");
        let tone = sine(1_000.0, 16_000, 0.5, 0.25);
        write_wav(&path, &tone, 16_000).unwrap();
        let back = read_wav_16k_mono(&path).unwrap();
        assert_eq!(back.len(), tone.len());
        let max_err = tone.iter().zip(&back).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(max_err < 1e-4, "{max_err}");
        assert!((duration_secs(&back, 16_000) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn clamps_and_rejects_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.wav");
        write_wav(&path, &[2.0, -2.0], 16_000).unwrap();
        let back = read_wav_16k_mono(&path).unwrap();
        assert!((back[0] - 32767.0 / 32768.0).abs() < 1e-6);
        assert!((back[1] + 32767.0 / 32768.0).abs() < 1e-6);
        assert!(matches!(write_wav(dir.path().join("z.wav"), &[0.0], 0), Err(WavError::Invalid(_))));
        assert!(matches!(read_wav_16k_mono(dir.path().join("missing.wav")), Err(WavError::Open { .. })));
    }
}
