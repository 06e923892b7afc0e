//! The signal path on real synthetic speech: WAV files of every PCM format in, 16 kHz mono
//! out; espeak-ng phrases padded with silence, white noise and hum through a `WavSource` and
//! the VAD, which must find exactly the spoken phrases, with their pre-roll, and nothing in
//! silence or steady noise.

use std::path::Path;
use std::process::Command;

use arthur_audio::vad::{Vad, VadConfig, VadEvent};
use arthur_audio::wav::{duration_secs, read_wav_16k_mono, rms, write_wav, WavSink, WavSource, FRAME_SAMPLES};
use arthur_audio::{earcon, SAMPLE_RATE_HZ};

const RATE: usize = SAMPLE_RATE_HZ as usize;
const PHRASE: &str = "Arthur, remind me to call the dentist tomorrow at nine.";

/// English speech from espeak-ng (22.05 kHz), read back at 16 kHz through our resampler.
fn espeak(text: &str, dir: &Path) -> Vec<f32> {
    let path = dir.join("espeak.wav");
    let status = Command::new("espeak-ng")
        .args(["-v", "en", "-w"])
        .arg(&path)
        .arg(text)
        .status()
        .expect("espeak-ng is needed by these tests (Debian package espeak-ng)");
    assert!(status.success(), "espeak-ng failed: {status}");
    read_wav_16k_mono(&path).unwrap()
}

/// Deterministic white noise (xorshift, uniform) at an RMS level in dBFS.
fn white_noise(len: usize, dbfs: f32, seed: u64) -> Vec<f32> {
    let amp = 10f32.powf(dbfs / 20.0) * 3f32.sqrt();
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            amp * ((x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0)
        })
        .collect()
}

/// Mains hum: 50 Hz and its harmonics, at an RMS level in dBFS.
fn hum(len: usize, dbfs: f32) -> Vec<f32> {
    let raw: Vec<f32> = (0..len)
        .map(|i| {
            let t = i as f32 / RATE as f32;
            let w = 2.0 * std::f32::consts::PI * 50.0 * t;
            w.sin() + 0.5 * (2.0 * w).sin() + 0.3 * (3.0 * w).sin()
        })
        .collect();
    let gain = 10f32.powf(dbfs / 20.0) / rms(&raw);
    raw.into_iter().map(|s| s * gain).collect()
}

#[derive(Clone, Copy, Debug)]
enum Background {
    Silence,
    Noise(f32),
    Hum(f32),
}

fn background(kind: Background, len: usize) -> Vec<f32> {
    match kind {
        Background::Silence => vec![0.0; len],
        Background::Noise(db) => white_noise(len, db, 0x5EED_1234_ABCD_0001),
        Background::Hum(db) => hum(len, db),
    }
}

/// `speech` placed at `at` samples into `len` samples of background.
fn mix(bg: Background, len: usize, speech: &[(usize, &[f32])]) -> Vec<f32> {
    let mut out = background(bg, len);
    for (at, s) in speech {
        for (o, v) in out[*at..].iter_mut().zip(*s) {
            *o += v;
        }
    }
    out
}

/// First and last sample of the 10 ms blocks of `clean` louder than -40 dBFS.
fn loud_extent(clean: &[f32]) -> (usize, usize) {
    let block = RATE / 100;
    let loud: Vec<usize> =
        clean.chunks(block).enumerate().filter(|(_, c)| rms(c) > 0.01).map(|(i, _)| i * block).collect();
    (loud[0], loud[loud.len() - 1] + block)
}

struct Run {
    events: Vec<VadEvent>,
    spans: Vec<std::ops::Range<u64>>,
    /// Stream sample at which `is_speech_now` first turned true.
    first_speech_now: Option<u64>,
}

/// Writes `signal` to a 16-bit WAV, replays it through a `WavSource` and the VAD.
fn run_vad(signal: &[f32], dir: &Path) -> Run {
    let path = dir.join("mix.wav");
    write_wav(&path, signal, SAMPLE_RATE_HZ).unwrap();
    let source = WavSource::open(&path, FRAME_SAMPLES).unwrap();
    let mut vad = Vad::new(VadConfig::default());
    let mut run = Run { events: Vec::new(), spans: Vec::new(), first_speech_now: None };
    for frame in source {
        assert_eq!(frame.len(), FRAME_SAMPLES);
        let event = vad.push(&frame);
        if vad.is_speech_now() && run.first_speech_now.is_none() {
            run.first_speech_now = Some(vad.samples_seen());
        }
        if let Some(e) = event {
            if matches!(e, VadEvent::Utterance(_)) {
                run.spans.push(vad.last_utterance_span().unwrap());
            }
            run.events.push(e);
        }
    }
    if let Some(e) = vad.flush() {
        run.events.push(e);
    }
    run
}

fn utterance_count(events: &[VadEvent]) -> usize {
    events.iter().filter(|e| matches!(e, VadEvent::Utterance(_))).count()
}

#[test]
fn wav_files_of_every_pcm_format_read_as_16k_mono() {
    let dir = tempfile::tempdir().unwrap();
    let formats = [
        (hound::SampleFormat::Int, 8u16),
        (hound::SampleFormat::Int, 16),
        (hound::SampleFormat::Int, 24),
        (hound::SampleFormat::Int, 32),
        (hound::SampleFormat::Float, 32),
    ];
    for (format, bits) in formats {
        for channels in [1u16, 2, 6] {
            for rate in [8_000u32, 16_000, 22_050, 44_100, 48_000] {
                let path = dir.path().join(format!("{bits}-{channels}-{rate}.wav"));
                let spec = hound::WavSpec { channels, sample_rate: rate, bits_per_sample: bits, sample_format: format };
                let mut w = hound::WavWriter::create(&path, spec).unwrap();
                for i in 0..rate {
                    let v = 0.5 * (2.0 * std::f64::consts::PI * 440.0 * f64::from(i) / f64::from(rate)).sin();
                    for _ in 0..channels {
                        match format {
                            hound::SampleFormat::Float => w.write_sample(v as f32).unwrap(),
                            hound::SampleFormat::Int => {
                                let full = (1i64 << (bits - 1)) as f64;
                                let q = (v * full).round() as i32;
                                match bits {
                                    8 => w.write_sample(q as i8).unwrap(),
                                    16 => w.write_sample(q as i16).unwrap(),
                                    _ => w.write_sample(q).unwrap(),
                                }
                            }
                        }
                    }
                }
                w.finalize().unwrap();
                let mono = read_wav_16k_mono(&path).unwrap();
                let what = format!("{format:?} {bits}-bit, {channels} ch, {rate} Hz");
                assert_eq!(mono.len(), RATE, "{what}");
                let mid = &mono[RATE / 10..RATE * 9 / 10];
                let level = rms(mid);
                assert!((level - 0.3536).abs() < 0.01, "{what}: rms {level}");
                let crossings = mid.windows(2).filter(|p| p[0] < 0.0 && p[1] >= 0.0).count();
                let freq = crossings as f64 / duration_secs(mid, SAMPLE_RATE_HZ);
                assert!((freq - 440.0).abs() < 5.0, "{what}: {freq} Hz");
            }
        }
    }
}

#[test]
fn sink_streams_and_earcons_survive_a_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("earcons.wav");
    let mut sink = WavSink::create(&path, SAMPLE_RATE_HZ).unwrap();
    sink.write(&earcon::listening()).unwrap();
    sink.write(&vec![0.0; RATE / 10]).unwrap();
    sink.write(&earcon::done()).unwrap();
    assert_eq!(sink.written(), (2 * 2_400 + 1_600) as u64);
    sink.finish().unwrap();
    let back = read_wav_16k_mono(&path).unwrap();
    assert!((duration_secs(&back, SAMPLE_RATE_HZ) - 0.4).abs() < 1e-6);
    assert!(rms(&back[..2_400]) > 0.1 && rms(&back[4_000..]) > 0.1);
    // A 16 kHz file written at 48 kHz comes back at 16 kHz with the same duration.
    let path48 = dir.path().join("earcon48.wav");
    let up = arthur_audio::wav::resample(&earcon::listening(), SAMPLE_RATE_HZ, 48_000);
    write_wav(&path48, &up, 48_000).unwrap();
    let back = read_wav_16k_mono(&path48).unwrap();
    assert_eq!(back.len(), 2_400);
}

#[test]
fn one_spoken_phrase_is_exactly_one_utterance_in_silence_noise_and_hum() {
    let dir = tempfile::tempdir().unwrap();
    let speech = espeak(PHRASE, dir.path());
    let secs = duration_secs(&speech, SAMPLE_RATE_HZ);
    assert!(secs > 2.0 && secs < 6.0, "espeak phrase lasts {secs} s");
    let (first_loud, last_loud) = loud_extent(&speech);
    let lead = 3 * RATE / 2;
    let total = lead + speech.len() + 2 * RATE;
    for bg in [
        Background::Silence,
        Background::Noise(-60.0),
        Background::Noise(-45.0),
        Background::Noise(-35.0),
        Background::Hum(-40.0),
        Background::Hum(-30.0),
    ] {
        let signal = mix(bg, total, &[(lead, &speech)]);
        let run = run_vad(&signal, dir.path());
        assert_eq!(run.events.len(), 2, "{bg:?}: {:?}", kinds(&run.events));
        assert_eq!(run.events[0], VadEvent::SpeechStarted { foreground: true }, "{bg:?}");
        assert_eq!(utterance_count(&run.events), 1, "{bg:?}");
        let span = &run.spans[0];
        let (onset, end) = ((lead + first_loud) as u64, (lead + last_loud) as u64);
        // The pre-roll: at least 250 ms before the first loud sound, at most ~330 ms.
        assert!(span.start + 4_000 <= onset, "{bg:?}: starts at {} for onset {onset}", span.start);
        assert!(span.start + 4_800 + FRAME_SAMPLES as u64 >= onset, "{bg:?}: pre-roll too long");
        // The whole phrase is inside, with a short tail.
        assert!(span.end >= end, "{bg:?}: ends at {} before {end}", span.end);
        assert!(span.end <= end + 8_000, "{bg:?}: tail too long ({} after)", span.end - end);
        // Barge-in sees the speech within ~150 ms of its onset.
        let seen = run.first_speech_now.unwrap();
        assert!(seen <= onset + 2_400, "{bg:?}: speech seen {} samples late", seen - onset);
    }
}

#[test]
fn silence_noise_and_hum_alone_are_never_speech() {
    let dir = tempfile::tempdir().unwrap();
    let len = 10 * RATE;
    for bg in [
        Background::Silence,
        Background::Noise(-70.0),
        Background::Noise(-50.0),
        Background::Noise(-40.0),
        Background::Noise(-30.0),
        Background::Noise(-20.0),
        Background::Hum(-50.0),
        Background::Hum(-35.0),
        Background::Hum(-20.0),
    ] {
        let run = run_vad(&background(bg, len), dir.path());
        assert!(run.events.is_empty(), "{bg:?}: {:?}", kinds(&run.events));
        assert_eq!(run.first_speech_now, None, "{bg:?}");
    }
}

#[test]
fn two_phrases_apart_are_two_utterances() {
    let dir = tempfile::tempdir().unwrap();
    let first = espeak("Arthur, what time is it?", dir.path());
    let second = espeak("And tomorrow morning?", dir.path());
    let at2 = RATE + first.len() + 2 * RATE;
    let total = at2 + second.len() + 2 * RATE;
    for bg in [Background::Silence, Background::Noise(-45.0)] {
        let signal = mix(bg, total, &[(RATE, &first), (at2, &second)]);
        let run = run_vad(&signal, dir.path());
        assert_eq!(utterance_count(&run.events), 2, "{bg:?}: {:?}", kinds(&run.events));
        assert!(run.spans[0].end <= at2 as u64 && run.spans[1].start < at2 as u64);
    }
}

/// Measured figures (printed with `--nocapture`): how far the noise can rise while the
/// phrase is still found exactly once, and how late the VAD sees the speech.
#[test]
fn report_vad_figures_over_noise_levels() {
    let dir = tempfile::tempdir().unwrap();
    let speech = espeak(PHRASE, dir.path());
    let (first_loud, _) = loud_extent(&speech);
    let speech_db = 20.0 * rms(&speech).log10();
    let lead = 3 * RATE / 2;
    let total = lead + speech.len() + 2 * RATE;
    println!("speech level {speech_db:.1} dBFS (RMS over the phrase)");
    println!("noise dBFS | SNR dB | utterances | onset seen after (ms) | pre-roll (ms)");
    let mut clean_up_to = None;
    for level in [-70.0f32, -60.0, -50.0, -45.0, -40.0, -35.0, -30.0, -25.0, -20.0] {
        let signal = mix(Background::Noise(level), total, &[(lead, &speech)]);
        let run = run_vad(&signal, dir.path());
        let n = utterance_count(&run.events);
        let onset = (lead + first_loud) as u64;
        let seen = run
            .first_speech_now
            .map(|s| format!("{:.0}", (s as f64 - onset as f64) / 16.0))
            .unwrap_or_else(|| "-".into());
        let pre = run
            .spans
            .first()
            .map(|s| format!("{:.0}", (onset as f64 - s.start as f64) / 16.0))
            .unwrap_or_else(|| "-".into());
        println!("{level:>10} | {:>6.1} | {n:>10} | {seen:>21} | {pre:>13}", speech_db - level);
        if n == 1 && clean_up_to.is_none_or(|l| l < level) {
            clean_up_to = Some(level);
        }
    }
    // The design target: one utterance at least up to -35 dBFS of white noise.
    assert!(clean_up_to.is_some_and(|l| l >= -35.0), "{clean_up_to:?}");
}

fn kinds(events: &[VadEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            VadEvent::SpeechStarted { .. } => "started".to_owned(),
            VadEvent::Utterance(u) => format!("utterance({} samples)", u.samples.len()),
            VadEvent::Paused => "paused".to_owned(),
            VadEvent::Discarded => "discarded".to_owned(),
        })
        .collect()
}
