//! The hands-free loop end to end on a recorded source, in audio time: English speech made
//! with espeak-ng (whisper base does not understand espeak's French), the wake word, a
//! scripted model, the reminder in the database, Arthur's spoken answer in the output WAV,
//! a short reply to Arthur's question inside the window taken without the wake word, one
//! outside it ignored; the round trip through our Piper voice and whisper; barge-in.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use arthur_agents::llm::scripted::Reply;
use arthur_agents::memory::MemoryStore;
use arthur_audio::tts::EspeakNg;
use arthur_audio::wake::ListenerConfig;
use arthur_audio::wav;
use arthur_voice::listen::VoiceLoop;
use common::{route, spawn_turn_app};

fn speech(text: &str, dir: &Path, name: &str) -> Vec<f32> {
    let path = dir.join(name);
    let status = std::process::Command::new("espeak-ng")
        .args(["-v", "en", "-s", "150", "-w", path.to_str().unwrap(), text])
        .status()
        .expect("espeak-ng is installed by scripts/setup");
    assert!(status.success());
    wav::read_wav_16k_mono(&path).unwrap()
}

fn silence(secs: f32) -> Vec<f32> {
    vec![0.0; (secs * 16_000.0) as usize]
}

fn write_input(dir: &Path, samples: &[f32]) -> std::path::PathBuf {
    let path = dir.join("input.wav");
    wav::write_wav(&path, samples, 16_000).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spoken_command_with_the_wake_word_writes_a_reminder_and_is_answered_aloud() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(1.0);
    input.extend(speech("Arthur, remind me to call the bank.", dir.path(), "a.wav"));
    input.extend(silence(5.0));
    input.extend(speech("Tomorrow at nine.", dir.path(), "b.wav"));
    input.extend(silence(40.0));
    input.extend(speech("Call my mother.", dir.path(), "c.wav"));
    input.extend(silence(1.5));
    let input_path = write_input(dir.path(), &input);

    let t = spawn_turn_app().await;
    // The model asks for the day (no tool: a question states nothing), then writes.
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::text("For which day and time?"));
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls(
        "",
        &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2026-12-01T09:00"}"#)],
    ));
    // No third call: the receipt, composed by code, ends a turn where a tool ran.

    let voice_loop = VoiceLoop::new(
        &t.engine,
        common::english_transcriber(),
        Arc::new(EspeakNg::new("fr")),
        ListenerConfig::default(),
        true,
    )
    .with_tuning(arthur::voice::configured_tuning());
    let output = dir.path().join("arthur.wav");
    let exchanges = voice_loop.run_wav(&input_path, Some(&output)).await.unwrap();

    assert_eq!(exchanges.len(), 3, "{exchanges:#?}");
    let first = &exchanges[0];
    let command = first.command.as_deref().unwrap().to_lowercase();
    assert!(command.contains("remind") && command.contains("call"), "{first:?}");
    assert!(!command.starts_with("arthur"), "wake word removed");
    assert!(first.spoken.as_deref().unwrap().ends_with('?'), "{first:?}");
    assert_eq!(first.interrupted_at_secs, None, "nobody spoke over the answer");
    // Within the follow-up window, a short reply to the question: taken without the wake word.
    let second = &exchanges[1];
    assert!(second.command.as_deref().unwrap_or("").to_lowercase().contains("tomorrow"), "{second:?}");
    assert!(second.written.as_deref().unwrap().contains("Rappel n°1 enregistré"), "{second:?}");
    assert!(second.spoken.as_deref().unwrap().contains("Rappel numéro un enregistré"));
    // Long after the answer, without the wake word: ignored.
    assert_eq!(exchanges[2].command, None, "{:?}", exchanges[2]);
    assert_eq!(t.llm.remaining(), 0);

    let rappels = t.app.fresh().await.list_rappels(false).await.unwrap();
    assert_eq!(rappels.len(), 1);
    assert_eq!(rappels[0].texte, "appeler la banque");

    let said = wav::read_wav_16k_mono(&output).unwrap();
    let secs = wav::duration_secs(&said, 16_000);
    assert!(secs > 3.0, "Arthur's answers were spoken: {secs} s");
    assert!(wav::rms(&said) > 0.01);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_piper_voice_is_understood_by_our_whisper() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(0.5);
    input.extend(speech("Arthur, what are my reminders?", dir.path(), "a.wav"));
    input.extend(silence(2.0));
    let input_path = write_input(dir.path(), &input);

    let t = spawn_turn_app().await;
    // A conversation turn: no tool ran, and the model's text states nothing about memory,
    // actions or commitments, so it is the one kind of model text that is spoken.
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("A garden party on a sunny Sunday afternoon sounds lovely."));

    let transcriber = common::english_transcriber();
    let voice_loop = VoiceLoop::new(&t.engine, transcriber.clone(), common::joe(), ListenerConfig::default(), true)
        .with_tuning(arthur::voice::configured_tuning());
    let output = dir.path().join("arthur.wav");
    let exchanges = voice_loop.run_wav(&input_path, Some(&output)).await.unwrap();
    assert_eq!(exchanges.len(), 1, "{exchanges:#?}");
    let spoken = exchanges[0].spoken.clone().unwrap();
    assert!(spoken.contains("garden party"), "conversation is spoken as the model wrote it: {spoken}");

    let said = wav::read_wav_16k_mono(&output).unwrap();
    assert!(wav::duration_secs(&said, 16_000) > 2.5);
    assert!(wav::rms(&said) > 0.02, "speech, not silence");
    let heard = transcriber.transcribe(&said).unwrap().to_lowercase();
    for word in ["garden", "party", "sunday"] {
        assert!(heard.contains(word), "whisper heard {heard:?} in our voice saying {spoken:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speaking_over_the_answer_stops_it_and_is_heard_without_the_wake_word() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(0.5);
    input.extend(speech("Arthur, what are my reminders?", dir.path(), "a.wav"));
    // The utterance ends 0.6 s into this silence (the VAD's hangover): the answer starts
    // then, and the user talks over it 1.4 s later.
    input.extend(silence(2.0));
    let interruption_at = input.len() as f64 / 16_000.0;
    input.extend(speech("Stop. Call my mother.", dir.path(), "b.wav"));
    input.extend(silence(10.0));
    let input_path = write_input(dir.path(), &input);

    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    let long_answer = "Here is an idea for a quiet weekend: a long walk along the river in the morning, \
                       then a slow lunch on a terrace, then an afternoon reading in the garden until the evening.";
    t.llm.push(Reply::text(long_answer));
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Of course."));

    let synth = common::joe();
    let full = arthur_audio::tts::speak(synth.as_ref(), long_answer, |_| {}).unwrap();
    let voice_loop = VoiceLoop::new(&t.engine, common::english_transcriber(), synth, ListenerConfig::default(), true)
        .with_tuning(arthur::voice::configured_tuning());
    let output = dir.path().join("arthur.wav");
    let exchanges = voice_loop.run_wav(&input_path, Some(&output)).await.unwrap();
    assert_eq!(exchanges[0].spoken.as_deref(), Some(long_answer), "{exchanges:#?}");
    let stopped_at = exchanges[0].interrupted_at_secs.expect("the answer was interrupted");
    let latency = stopped_at - interruption_at;
    assert!((0.0..0.3).contains(&latency), "playback stopped {latency:.3} s after the user spoke");
    // "Stop." only cut the answer; what followed is the next command, without the wake word.
    let commands: Vec<&str> = exchanges.iter().filter_map(|e| e.command.as_deref()).collect();
    assert_eq!(commands.len(), 2, "{exchanges:#?}");
    assert!(commands[1].to_lowercase().contains("mother"), "{exchanges:#?}");

    let said = wav::read_wav_16k_mono(&output).unwrap();
    let played = wav::duration_secs(&said, 16_000);
    assert!(played < full.duration_secs() as f64 - 2.0, "played {played:.1} s of {:.1} s", full.duration_secs());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_barge_in_the_answer_plays_to_the_end_and_the_microphone_is_ignored() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(0.5);
    input.extend(speech("Arthur, what are my reminders?", dir.path(), "a.wav"));
    input.extend(silence(2.0));
    input.extend(speech("Stop. Call my mother.", dir.path(), "b.wav"));
    input.extend(silence(12.0));
    let input_path = write_input(dir.path(), &input);

    let t = spawn_turn_app().await;
    // The answer is the code's report of the read: long, because the store holds reminders.
    for texte in [
        "appeler la banque pour le prêt de la maison",
        "envoyer le devis de la cuisine au menuisier",
        "réserver la salle pour l'anniversaire de maman",
    ] {
        t.app.done("creer_rappel", serde_json::json!({"texte": texte, "echeance": "2026-12-03T09:00"})).await;
    }
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lister_rappels", "{}")]));
    t.llm.push(Reply::text("You have no reminder today."));
    let voice_loop = VoiceLoop::new(
        &t.engine,
        common::english_transcriber(),
        Arc::new(EspeakNg::new("en")),
        ListenerConfig::default(),
        false,
    )
    .with_tuning(arthur::voice::configured_tuning());
    let exchanges = voice_loop.run_wav(&input_path, None).await.unwrap();
    assert_eq!(exchanges.len(), 1, "what was said during the answer was not heard: {exchanges:#?}");
    assert_eq!(exchanges[0].interrupted_at_secs, None);
    let spoken = exchanges[0].spoken.as_deref().unwrap();
    assert!(spoken.contains("banque") && !spoken.contains("no reminder"), "the code told the read: {spoken}");
}

/// The loop reads the words with the turn's clock and zone (the configuration's, and the
/// test clock here), not the machine's: « aujourd'hui à 16 h » at 09:00 UTC is still to come
/// in Paris (10:00) but already past in Auckland (22:00), so only in Paris is it a whole
/// command that may close at the pause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_reads_time_in_the_configured_zone_and_clock() {
    let said = "rappelle-moi d'appeler la banque aujourd'hui à 16 h";
    let transcriber = common::english_transcriber();
    for (tz, whole) in [(chrono_tz::Europe::Paris, true), (chrono_tz::Pacific::Auckland, false)] {
        let app = common::spawn_app().await;
        let mut ctx = app.ctx.clone();
        ctx.tz = tz;
        let engine = arthur_agents::turn::TurnEngine::new(None, ctx);
        let voice_loop = VoiceLoop::new(
            &engine,
            transcriber.clone(),
            Arc::new(EspeakNg::new("fr")),
            ListenerConfig::default(),
            true,
        )
        .with_tuning(arthur::voice::configured_tuning());
        assert_eq!(voice_loop.closes_early(said), whole, "{tz}");
    }
}

/// A wake word heard elsewhere (a satellite's own detector) opens the command window where
/// it was heard in the audio, however far behind the loop runs: here the whole recording is
/// queued before the loop starts (a loop seconds late), the wake word is placed before the
/// second of two identical commands said without « Arthur »; the first is ignored, the
/// second taken. (A flag read by the loop when it next looks would open the window at once,
/// take the first and miss the second.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wake_word_heard_elsewhere_opens_the_window_where_it_was_heard_in_the_audio() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let command = speech("Remind me to call the bank.", dir.path(), "a.wav");
    let mut input = silence(1.0);
    input.extend(&command);
    input.extend(silence(12.0));
    let woke_at = input.len() as u64;
    input.extend(silence(0.5));
    input.extend(&command);
    input.extend(silence(3.0));

    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls(
        "",
        &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2026-12-01T09:00"}"#)],
    ));
    let signal = Arc::new(AtomicU64::new(woke_at + 1));
    let voice_loop =
        VoiceLoop::new(&t.engine, common::english_transcriber(), common::joe(), ListenerConfig::default(), true)
            .with_tuning(arthur::voice::configured_tuning())
            .with_wake_signal(signal.clone());
    let frames: Vec<Vec<f32>> = input.chunks(wav::FRAME_SAMPLES).map(<[f32]>::to_vec).collect();
    let (tx, mut rx) = tokio::sync::mpsc::channel(frames.len());
    for frame in frames {
        tx.try_send(frame).unwrap();
    }
    drop(tx);
    let mut speaker = arthur_audio::playback::WavSpeaker::new();
    let exchanges =
        voice_loop.hands_free(&mut rx, &mut speaker, tokio_util::sync::CancellationToken::new(), |_| {}).await.unwrap();

    assert_eq!(exchanges.len(), 2, "{exchanges:#?}");
    assert_eq!(exchanges[0].command, None, "before the wake word: ignored: {:?}", exchanges[0]);
    let taken = exchanges[1].command.as_deref().unwrap_or_default().to_lowercase();
    assert!(taken.contains("remind") && taken.contains("bank"), "after it: the command: {:?}", exchanges[1]);
    assert_eq!(signal.load(Ordering::Acquire), 0, "lowered once heard");
    assert_eq!(t.llm.remaining(), 0);
}

/// A hesitation inside a command (« remind me to… ») does not cut it when the end of the
/// turn is judged by meaning (Smart Turn, installed by models/fetch, and the grammar: the
/// reading stops on « to »): the whole command is one utterance. Judged by silences alone,
/// as before, the 700 ms pause outlasts the 600 ms hangover and cuts it in two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hesitation_inside_a_command_does_not_cut_it_when_the_turn_is_judged_by_meaning() {
    use arthur_voice::listen::{Tuning, TurnEnd};
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(1.0);
    input.extend(speech("Arthur, remind me to", dir.path(), "a.wav"));
    input.extend(silence(0.7));
    input.extend(speech("call the bank tomorrow at nine.", dir.path(), "b.wav"));
    input.extend(silence(4.0));
    let input_path = write_input(dir.path(), &input);

    let by_meaning = arthur::voice::configured_tuning();
    assert!(matches!(by_meaning.turn_end, TurnEnd::Meaning { .. }), "models/fetch installs Smart Turn");
    let by_silences = Tuning { turn_end: TurnEnd::Silences, ..by_meaning.clone() };
    for (tuning, judged) in [(by_meaning, true), (by_silences, false)] {
        let t = spawn_turn_app().await;
        t.llm.set_fallback(Some(Reply::text("Noted.")));
        let voice_loop = VoiceLoop::new(
            &t.engine,
            common::english_transcriber(),
            Arc::new(EspeakNg::new("en")),
            ListenerConfig::default(),
            true,
        )
        .with_tuning(tuning);
        let exchanges = voice_loop.run_wav(&input_path, None).await.unwrap();
        let commands: Vec<String> =
            exchanges.iter().filter_map(|e| e.command.as_deref()).map(str::to_lowercase).collect();
        let first = commands.first().unwrap_or_else(|| panic!("no command taken: {exchanges:#?}"));
        if judged {
            assert_eq!(commands.len(), 1, "{exchanges:#?}");
            assert!(first.contains("remind") && first.contains("bank"), "{exchanges:#?}");
        } else {
            assert!(!first.contains("bank"), "the silences of before cut at the pause: {exchanges:#?}");
        }
    }
}
