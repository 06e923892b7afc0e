//! The everyday basics said aloud in French, end to end through `arthur serve` offline: the
//! recording (MBROLA's French voice, `common::french_speech`) goes through whisper and the
//! grammar, the list and the timer land in the database, the time is told by code, the
//! timer rings with its bell and stops on « c'est bon ».
//! The same road is walked by the natural French test voice (Kokoro, issue 40).

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use arthur_audio::wav;
use common::{lines_of, sigterm, wait_exit, wait_line, Killed};

fn silence(secs: f32) -> Vec<f32> {
    vec![0.0; (secs * 16_000.0) as usize]
}

/// `arthur serve` offline in French on `input` (as a microphone recording), the answers
/// written to `dir/arthur.wav`: the child, its output lines, those seen, the web address —
/// once it listens.
fn serve_offline(
    dir: &std::path::Path,
    input: &[f32],
) -> (Killed, std::sync::mpsc::Receiver<String>, Vec<String>, String) {
    let input_path = dir.join("mic.wav");
    wav::write_wav(&input_path, input, 16_000).unwrap();
    let model = arthur::config::default_model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let config = dir.join("arthur.toml");
    std::fs::write(&config, "").unwrap();
    let child = crate::common::arthur_command()
        .args(["serve", "--input"])
        .arg(&input_path)
        .arg("--output")
        .arg(dir.join("arthur.wav"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("ARTHUR_CONFIG", &config)
        .env("ARTHUR_DATA_DIR", dir.join("data"))
        .env("ARTHUR_WEB_ADDR", "127.0.0.1:0")
        .env("ARTHUR_STT_LANG", "fr")
        .env("ARTHUR_WHISPER_MODEL", &model)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let lines = lines_of(&mut child.0);
    let mut seen = Vec::new();
    let web_line = wait_line(&lines, &mut seen, "interface web sur http://", Duration::from_secs(30));
    let base = web_line.split("sur ").nth(1).unwrap().trim().to_string();
    wait_line(&lines, &mut seen, "à l'écoute", Duration::from_secs(60));
    (child, lines, seen, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "issue 29: since the ears merge, « c'est bon » is not acknowledged in this run with no models in HOME; run with --ignored"]
async fn the_basics_said_in_french_run_offline_and_the_timer_stops_on_cest_bon() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(0.5);
    input.extend(common::french_speech("Arthur, ajoute des pommes à la liste de courses.", &dir.path().join("a.wav")));
    input.extend(silence(6.0));
    input.extend(common::french_speech("Arthur, quelle heure est-il ?", &dir.path().join("b.wav")));
    input.extend(silence(6.0));
    input.extend(common::french_speech("Arthur, minuteur de trois secondes.", &dir.path().join("c.wav")));
    // The timer ends three seconds after it starts and is announced with its bell.
    input.extend(silence(12.0));
    input.extend(common::french_speech("Arthur, c'est bon.", &dir.path().join("d.wav")));
    // Said again, as a user does while it still rings: a loop running behind its audio (a
    // loaded machine) may hear the first one before the bell, when there is nothing to stop.
    input.extend(silence(20.0));
    input.extend(common::french_speech("Arthur, c'est bon.", &dir.path().join("e.wav")));
    input.extend(silence(4.0));
    let (mut child, lines, mut seen, base) = serve_offline(dir.path(), &input);
    let output = dir.path().join("arthur.wav");

    // Everything said was heard and done, offline: the item on the list, the timer rung and
    // acknowledged.
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(240);
    let export = loop {
        let export: serde_json::Value =
            http.get(format!("{base}/api/export")).send().await.unwrap().json().await.unwrap();
        let acknowledged = export["minuteurs"]
            .as_array()
            .is_some_and(|m| m.iter().any(|t| t["etat"] == "termine" && !t["acquitte_le"].is_null()));
        if acknowledged {
            break export;
        }
        assert!(Instant::now() < deadline, "not done in time: {export:#}\n{seen:#?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let courses = export["listes"].as_array().unwrap().iter().find(|l| l["nom"] == "courses").expect("the list");
    assert!(courses["elements"].to_string().contains("pommes"), "{courses}");
    let timer = &export["minuteurs"][0];
    assert_eq!(timer["duree_secondes"], 3, "{timer}");
    let health: serde_json::Value = http.get(format!("{base}/healthz")).send().await.unwrap().json().await.unwrap();
    assert!(health["timers_rung"].as_u64().unwrap() >= 1, "{health}");
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(15)).await.success());
    while let Ok(l) = lines.recv_timeout(Duration::from_millis(200)) {
        seen.push(l);
    }
    // The time was told by code (no model here), and the answers were spoken.
    let store =
        arthur_agents::memory::sqlite::SqliteStore::open_path(&dir.path().join("data/arthur.db")).await.unwrap();
    use arthur_agents::memory::MemoryStore;
    let turns = store.list_turns(20).await.unwrap();
    assert!(turns.iter().any(|t| t.written.as_deref().is_some_and(|w| w.starts_with("Il est "))), "{turns:#?}");
    assert!(turns.iter().all(|t| t.trace["calls"].as_array().is_none_or(|c| c.is_empty())), "no model call");
    let said = wav::read_wav_16k_mono(&output).expect("the answers were written at the stop");
    assert!(wav::rms(&said) > 0.01);
}

/// The natural French test voice (issue 40: Kokoro, `common::kokoro_speech`) through
/// `arthur serve --input` offline: the item said lands on the list, the time is told by
/// code. What MBROLA's diphone voice proves above, a voice that sounds like a person proves
/// here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_item_said_by_the_natural_french_voice_lands_on_the_list() {
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(0.5);
    input.extend(common::kokoro_speech("Arthur, ajoute des pommes à la liste de courses.", &dir.path().join("a.wav")));
    input.extend(silence(6.0));
    input.extend(common::kokoro_speech("Arthur, quelle heure est-il ?", &dir.path().join("b.wav")));
    input.extend(silence(6.0));
    // Arthur's question answered by the next utterance of the voice conversation (issue 39):
    // named, so that the follow-up window's length on a loaded machine does not matter.
    input.extend(common::kokoro_speech("Arthur, j'ai besoin d'un minuteur.", &dir.path().join("c.wav")));
    input.extend(silence(8.0));
    input.extend(common::kokoro_speech("Arthur, cinq minutes.", &dir.path().join("d.wav")));
    input.extend(silence(8.0));
    let (mut child, _lines, seen, base) = serve_offline(dir.path(), &input);
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(180);
    let store_path = dir.path().join("data/arthur.db");
    use arthur_agents::memory::MemoryStore;
    loop {
        let export: serde_json::Value =
            http.get(format!("{base}/api/export")).send().await.unwrap().json().await.unwrap();
        let listed = export["listes"]
            .as_array()
            .and_then(|l| l.iter().find(|l| l["nom"] == "courses"))
            .is_some_and(|l| l["elements"].to_string().contains("pommes"));
        let store = arthur_agents::memory::sqlite::SqliteStore::open_path(&store_path).await.unwrap();
        let told = store
            .list_turns(20)
            .await
            .unwrap()
            .iter()
            .any(|t| t.written.as_deref().is_some_and(|w| w.starts_with("Il est ")));
        let timed = export["minuteurs"].as_array().is_some_and(|m| m.iter().any(|m| m["duree_secondes"] == 300));
        if listed && told && timed {
            break;
        }
        assert!(Instant::now() < deadline, "not done in time: {export:#}\n{seen:#?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    sigterm(&child.0);
    assert!(wait_exit(&mut child.0, Duration::from_secs(15)).await.success());
}

/// The doubt gate in the loop (issue 40): a reading the gate finds misheard never writes —
/// the write is asked (« J'ai peut-être mal entendu. Tu veux… ? ») — and the same reading
/// with no gate writes. The gate's bounds are set so that every word is a guess here: what
/// is tested is the road from whisper's weights to the turn; the bounds shipped
/// (`Confidence::MEASURED`) are measured by `cargo bench --bench voice` (`ears-fr`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_the_doubt_gate_finds_misheard_is_asked_not_written() {
    use arthur_agents::ears::Confidence;
    use arthur_agents::llm::scripted::Reply;
    use arthur_agents::memory::BasicsStore;
    use arthur_voice::listen::{EarsPolicy, VoiceLoop};
    use std::sync::Arc;
    let _voice = common::one_voice_at_a_time().await;
    let dir = tempfile::tempdir().unwrap();
    let mut input = silence(0.5);
    input.extend(common::kokoro_speech("Arthur, ajoute des pommes à la liste de courses.", &dir.path().join("a.wav")));
    input.extend(silence(3.0));
    let input_path = dir.path().join("mic.wav");
    wav::write_wav(&input_path, &input, 16_000).unwrap();
    let model = arthur::config::default_model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let french = Arc::new(
        arthur_audio::stt::Transcriber::load(
            &model,
            arthur_audio::stt::SttOptions { language: "fr".into(), adaptive_audio_ctx: true, ..Default::default() },
        )
        .unwrap(),
    );
    let everything_a_guess = Confidence { min_logprob: 0.0, max_gap: -1.0 };
    for doubt in [Some(everything_a_guess), None] {
        // As `arthur serve` runs: the grammar first.
        let t = common::spawn_local_first_app().await;
        t.llm.set_fallback(Some(Reply::text("Le modèle ne devait pas être appelé.")));
        let tuning = arthur::voice::configured_tuning();
        let tuning = arthur_voice::listen::Tuning { ears: EarsPolicy { doubt, ..EarsPolicy::MEASURED }, ..tuning };
        let voice_loop = VoiceLoop::new(
            &t.engine,
            french.clone(),
            Arc::new(arthur_audio::tts::EspeakNg::new("fr")),
            Default::default(),
            true,
        )
        .with_tuning(tuning);
        let exchanges = voice_loop.run_wav(&input_path, None).await.unwrap();
        let written: Vec<&str> = exchanges.iter().filter_map(|e| e.written.as_deref()).collect();
        let items = t.app.fresh().await.list("courses").await.unwrap().map(|l| l.elements).unwrap_or_default();
        if doubt.is_some() {
            assert!(written.iter().any(|w| w.starts_with("J'ai peut-être mal entendu.")), "{exchanges:#?}");
            assert!(items.is_empty(), "nothing written on a misheard reading: {items:?}");
        } else {
            assert!(written.iter().any(|w| w.contains("pommes")), "{exchanges:#?}");
            assert_eq!(items.len(), 1, "{items:?}");
        }
    }
}
