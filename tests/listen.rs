//! The hands-free loop end to end on a recorded source: English speech made with espeak-ng
//! (whisper base does not understand espeak's French), the wake word, a scripted model,
//! the reminder in the database, Arthur's spoken answer in the output WAV, a follow-up
//! inside the window taken without the wake word, and one outside it ignored.

mod common;

use std::sync::Arc;

use arthur::listen::HandsFree;
use arthur_agents::llm::scripted::Reply;
use arthur_agents::memory::MemoryStore;
use arthur_audio::stt::{SttOptions, Transcriber};
use arthur_audio::tts::EspeakNg;
use arthur_audio::wake::ListenerConfig;
use arthur_audio::wav;
use common::{route, spawn_turn_app};

fn speech(text: &str, dir: &std::path::Path, name: &str) -> Vec<f32> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spoken_command_with_the_wake_word_writes_a_reminder_and_is_answered_aloud() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(1.0);
    input.extend(speech("Arthur, remind me to call the bank tomorrow at nine.", dir.path(), "a.wav"));
    input.extend(silence(7.0));
    input.extend(speech("And list my reminders.", dir.path(), "b.wav"));
    input.extend(silence(40.0));
    input.extend(speech("Call my mother.", dir.path(), "c.wav"));
    input.extend(silence(1.5));
    let input_path = dir.path().join("input.wav");
    wav::write_wav(&input_path, &input, 16_000).unwrap();

    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls(
        "",
        &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2026-12-01T09:00"}"#)],
    ));
    t.llm.push(Reply::text("Autre chose ?"));
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lister_rappels", "{}")]));
    t.llm.push(Reply::text("Tu as un rappel : appeler la banque."));

    let model = arthur_audio::stt::model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let transcriber = Arc::new(
        Transcriber::load(
            &model,
            SttOptions {
                language: "en".into(),
                initial_prompt: Some("Arthur".into()),
                adaptive_audio_ctx: true,
                ..Default::default()
            },
        )
        .unwrap(),
    );
    let synth = EspeakNg::new("fr");
    let hands_free = HandsFree { engine: &t.engine, transcriber, synth: &synth, listener: ListenerConfig::default() };
    let output = dir.path().join("arthur.wav");
    let exchanges = hands_free.run_wav(&input_path, Some(&output)).await.unwrap();

    assert_eq!(exchanges.len(), 3, "{exchanges:#?}");
    let first = &exchanges[0];
    let command = first.command.as_deref().unwrap().to_lowercase();
    assert!(command.contains("remind") && command.contains("call"), "{first:?}");
    assert!(!first.command.as_deref().unwrap().to_lowercase().starts_with("arthur"), "wake word removed");
    assert!(first.written.as_deref().unwrap().contains("Rappel n°1 enregistré"), "{first:?}");
    assert!(first.spoken.as_deref().unwrap().contains("Rappel numéro un enregistré"));
    // Within the follow-up window: taken without the wake word.
    assert!(exchanges[1].command.is_some(), "{:?}", exchanges[1]);
    assert!(exchanges[1].written.as_deref().unwrap().contains("Tu as un rappel"));
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
