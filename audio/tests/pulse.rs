//! The real audio paths on a PulseAudio server with a null sink (48 kHz stereo, consumed in
//! real time): speech played into the sink with `paplay` and captured from the sink's
//! monitor through our cpal `Capture` — resampled to 16 kHz mono — then understood by
//! whisper; and our rodio `DeviceSpeaker` playing into the sink, stopped mid-answer.
//! Alone in its test binary, one test: it points the process at its own server.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arthur_audio::capture::{Capture, CaptureConfig};
use arthur_audio::playback::{DeviceSpeaker, Speaker};
use arthur_audio::stt::{SttOptions, Transcriber};
use arthur_audio::tts::Pcm;
use arthur_audio::wav;

struct PulseServer {
    child: Child,
}

impl Drop for PulseServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_pulseaudio(dir: &Path) -> (PulseServer, String) {
    let socket = dir.join("native");
    let child = Command::new("pulseaudio")
        .args(["--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--log-target=stderr"])
        .arg(format!("--load=module-native-protocol-unix socket={} auth-anonymous=1", socket.display()))
        .arg("--load=module-null-sink sink_name=arthur_null rate=48000 channels=2")
        .env("HOME", dir)
        .env("XDG_RUNTIME_DIR", dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pulseaudio is installed by scripts/setup");
    let server = PulseServer { child };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "PulseAudio did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, format!("unix:{}", socket.display()))
}

#[test]
fn capture_and_playback_through_pulseaudio() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, address) = start_pulseaudio(dir.path());
    // This test binary has a single test: nothing else reads the environment meanwhile.
    std::env::set_var("PULSE_SERVER", &address);
    speech_played_into_the_sink_is_captured_at_16_khz_and_understood(dir.path(), &address);
    the_device_speaker_plays_in_real_time_and_stops_at_once();
}

fn monitor() -> (Capture, Arc<Mutex<Vec<f32>>>) {
    let captured = Arc::new(Mutex::new(Vec::<f32>::new()));
    let sink = captured.clone();
    let capture =
        Capture::start(&CaptureConfig { device: Some("pulseaudio:arthur_null.monitor".into()) }, move |f, _| {
            sink.lock().unwrap().extend(f)
        })
        .expect("capturing from the null sink's monitor");
    (capture, captured)
}

/// Runs of 30 ms frames louder than -30 dBFS, as (start, length) in seconds.
fn loud_runs(samples: &[f32]) -> Vec<(f64, f64)> {
    let frame = wav::FRAME_SAMPLES;
    let mut runs: Vec<(f64, f64)> = Vec::new();
    let mut start: Option<usize> = None;
    let frames: Vec<bool> = samples.chunks(frame).map(|c| wav::rms(c) > 0.03).collect();
    for (i, loud) in frames.iter().chain(std::iter::once(&false)).enumerate() {
        match (loud, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push(((s * frame) as f64 / 16_000.0, ((i - s) * frame) as f64 / 16_000.0));
                start = None;
            }
            _ => {}
        }
    }
    runs
}

fn the_device_speaker_plays_in_real_time_and_stops_at_once() {
    let tone = |secs: f32, hz: f32| Pcm {
        samples: (0..(secs * 22_050.0) as usize)
            .map(|i| (i as f32 / 22_050.0 * hz * std::f32::consts::TAU).sin() * 0.4)
            .collect(),
        rate: 22_050,
    };
    let (capture, captured) = monitor();
    let mut speaker = DeviceSpeaker::open_default().expect("the PulseAudio default sink opens");
    std::thread::sleep(Duration::from_millis(300));
    speaker.enqueue(&tone(1.0, 440.0)).unwrap();
    let started = Instant::now();
    speaker.drain();
    let drained = started.elapsed().as_secs_f64();
    assert!(drained > 0.8, "one second of audio played in {drained:.2} s");

    std::thread::sleep(Duration::from_millis(500));
    speaker.enqueue(&tone(5.0, 660.0)).unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    speaker.stop();
    assert!(!speaker.is_playing());
    std::thread::sleep(Duration::from_millis(800));
    drop(speaker);
    drop(capture);

    let runs = loud_runs(&captured.lock().unwrap());
    assert_eq!(runs.len(), 2, "two tones were heard: {runs:?}");
    assert!((runs[0].1 - 1.0).abs() < 0.2, "the first tone played whole: {runs:?}");
    assert!(runs[1].1 < 1.5, "the stopped tone was cut, not played for 5 s: {runs:?}");
}

fn speech_played_into_the_sink_is_captured_at_16_khz_and_understood(dir: &Path, address: &str) {
    let speech = dir.join("speech.wav");
    let ok = Command::new("espeak-ng")
        .args([
            "-v",
            "en",
            "-s",
            "150",
            "-w",
            speech.to_str().unwrap(),
            "Please remind me to water the plants tonight.",
        ])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let spoken_secs = wav::duration_secs(&wav::read_wav_16k_mono(&speech).unwrap(), 16_000);

    let captured = Arc::new(Mutex::new(Vec::<f32>::new()));
    let sink = captured.clone();
    let frames = Arc::new(Mutex::new(Vec::<usize>::new()));
    let frame_sizes = frames.clone();
    let capture =
        Capture::start(&CaptureConfig { device: Some("pulseaudio:arthur_null.monitor".into()) }, move |f, _| {
            frame_sizes.lock().unwrap().push(f.len());
            sink.lock().unwrap().extend(f);
        })
        .expect("capturing from the null sink's monitor");
    assert_eq!(capture.info().device_rate, 48_000, "{:?}", capture.info());
    assert_eq!(capture.info().device_channels, 2);

    std::thread::sleep(Duration::from_millis(500));
    let played = Command::new("paplay")
        .args(["-d", "arthur_null"])
        .arg(&speech)
        .env("PULSE_SERVER", address)
        .status()
        .expect("paplay is installed by scripts/setup");
    assert!(played.success());
    std::thread::sleep(Duration::from_millis(700));
    drop(capture);

    let samples = captured.lock().unwrap().clone();
    let secs = wav::duration_secs(&samples, 16_000);
    assert!(secs > spoken_secs, "captured {secs:.2} s for {spoken_secs:.2} s of speech");
    assert!(frames.lock().unwrap().iter().all(|n| *n == arthur_audio::wav::FRAME_SAMPLES), "fixed-size frames");
    assert!(wav::rms(&samples) > 0.01, "the speech arrived, not silence");

    let model = common::model_dir().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let transcriber =
        Transcriber::load(&model, SttOptions { language: "en".into(), adaptive_audio_ctx: true, ..Default::default() })
            .unwrap();
    let text = transcriber.transcribe(&samples).unwrap().to_lowercase();
    for word in ["remind", "water", "plants"] {
        assert!(text.contains(word), "heard {text:?}");
    }
}
