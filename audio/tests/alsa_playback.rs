//! Playback on a real ALSA device through rodio: these machines have no sound card, so the
//! default device is ALSA's `file` plugin over the `null` device (from a private
//! `~/.asoundrc`), which writes what was played to a WAV file we then read back.
//! Alone in its test binary: it points the process at its own ALSA configuration.

use std::time::{Duration, Instant};

use arthur_audio::playback::{DeviceSpeaker, Speaker};
use arthur_audio::tts::Pcm;
use arthur_audio::wav;

fn tone(secs: f32, rate: u32, hz: f32) -> Pcm {
    let n = (secs * rate as f32) as usize;
    Pcm { samples: (0..n).map(|i| (i as f32 / rate as f32 * hz * std::f32::consts::TAU).sin() * 0.4).collect(), rate }
}

#[test]
fn the_device_speaker_plays_what_is_queued_and_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let played = dir.path().join("played.wav");
    std::fs::write(
        dir.path().join(".asoundrc"),
        format!(
            "pcm.!default {{\n  type file\n  slave.pcm \"null\"\n  file \"{}\"\n  format \"wav\"\n}}\n",
            played.display()
        ),
    )
    .unwrap();
    // This test binary has a single test: nothing else reads the environment meanwhile.
    std::env::set_var("HOME", dir.path());
    std::env::remove_var("PULSE_SERVER");
    std::env::remove_var("XDG_RUNTIME_DIR");

    let mut speaker = DeviceSpeaker::open_default().expect("the default ALSA device opens");
    assert!(!speaker.is_playing());
    speaker.enqueue(&tone(0.5, 22_050, 440.0)).unwrap();
    speaker.enqueue(&tone(0.5, 16_000, 660.0)).unwrap();
    assert!(speaker.is_playing());
    let started = Instant::now();
    speaker.drain();
    assert!(!speaker.is_playing());
    let drain_secs = started.elapsed().as_secs_f32();

    // Barge-in: a long answer stopped early leaves nothing queued, and the speaker takes
    // the next answer. (The null device consumes faster than real time: the real-time
    // behaviour is tested on PulseAudio, in tests/pulse.rs.)
    speaker.enqueue(&tone(30.0, 22_050, 440.0)).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let stop = Instant::now();
    speaker.stop();
    assert!(!speaker.is_playing(), "stopped");
    let stop_secs = stop.elapsed().as_secs_f32();
    speaker.enqueue(&tone(0.2, 16_000, 880.0)).unwrap();
    speaker.drain();
    drop(speaker);

    let (samples, rate) = wav::read_wav_mono(&played).expect("the file plugin wrote a WAV");
    let secs = wav::duration_secs(&samples, rate);
    eprintln!("device rate {rate} Hz, {secs:.2} s written, drain {drain_secs:.2} s, stop {stop_secs:.3} s");
    assert!(secs >= 1.0, "the queued second reached the device: {secs:.2} s");
    assert!(wav::rms(&samples) > 0.05, "tones, not silence");
    assert!(stop_secs < 0.5, "stop took {stop_secs:.3} s");
}
