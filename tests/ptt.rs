//! Push-to-talk in a real terminal: `arthur listen --ptt` runs in tmux (a real pseudo
//! terminal), keys are sent with `send-keys`, the screen read with `capture-pane`. The
//! microphone is a WAV file played in real time; Arthur's voice goes to a WAV file.

use crate::common;

use std::process::Command;
use std::time::{Duration, Instant};

use arthur_agents::llm::scripted::ScriptedLlm;
use arthur_agents::memory::sqlite::SqliteStore;
use arthur_agents::memory::MemoryStore;
use arthur_audio::wav;

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").arg("-L").arg(&self.socket).args(args).output().expect("tmux is installed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-200", "-t", "ptt"])
    }

    fn key(&self, key: &str) {
        self.run(&["send-keys", "-t", "ptt", key]);
    }

    /// Waits until the screen shows `text` `count` times.
    async fn wait_for(&self, text: &str, count: usize, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if screen.matches(text).count() >= count {
                return screen;
            }
            assert!(Instant::now() < deadline, "waited {timeout:?} for {text:?} ×{count}; screen:\n{screen}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_to_talk_records_between_two_presses_and_a_press_interrupts_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let lead_in = 2.5f32;
    let mut input = vec![0.0f32; (lead_in * 16_000.0) as usize];
    let command = common::espeak_en("Remind me to call the bank tomorrow at nine.", &dir.path().join("c.wav"));
    let command_secs = command.len() as f32 / 16_000.0;
    input.extend(command);
    input.extend(vec![0.0f32; 60 * 16_000]);
    let input_path = dir.path().join("mic.wav");
    wav::write_wav(&input_path, &input, 16_000).unwrap();

    let llm = ScriptedLlm::start().await;
    common::script_bank_reminder(&llm);

    let model = arthur::config::default_model_dir().unwrap().join("ggml-base.bin");
    assert!(model.is_file(), "run models/fetch --offline");
    let data = dir.path().join("data");
    let output = dir.path().join("arthur.wav");
    let script = dir.path().join("run.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexport HOME='{home}' ARTHUR_DATA_DIR='{data}' ARTHUR_STT_LANG=en ARTHUR_WHISPER_MODEL='{model}' \
             MISTRAL_API_KEY=test-key MISTRAL_BASE_URL='{url}' RUST_LOG=warn\n\
             '{bin}' listen --ptt --input '{input}' --output '{output}'\necho \"EXIT=$?\"\nsleep 120\n",
            home = dir.path().display(),
            data = data.display(),
            model = model.display(),
            url = llm.base_url(),
            bin = env!("CARGO_BIN_EXE_arthur"),
            input = input_path.display(),
            output = output.display(),
        ),
    )
    .unwrap();
    let tmux = Tmux { socket: format!("arthur-ptt-{}", std::process::id()) };
    tmux.run(&["new-session", "-d", "-s", "ptt", "-x", "160", "-y", "50", &format!("sh {}", script.display())]);

    // The microphone starts with the prompt; the words come `lead_in` seconds later.
    tmux.wait_for("[Espace]", 1, Duration::from_secs(90)).await;
    let prompt_seen = Instant::now();
    tmux.key("Space");
    tmux.wait_for("J'écoute", 1, Duration::from_secs(5)).await;
    let speech_over = Duration::from_secs_f32(lead_in + command_secs + 1.0);
    tokio::time::sleep(speech_over.saturating_sub(prompt_seen.elapsed())).await;
    tmux.key("Space");
    let screen = tmux.wait_for("arthur ›", 1, Duration::from_secs(60)).await;
    assert!(screen.contains("toi ›") && screen.to_lowercase().contains("bank"), "{screen}");
    assert!(screen.contains("Rappel n°1 enregistré"), "{screen}");

    // A press while Arthur speaks cuts the answer and starts recording again.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    tmux.key("Space");
    let screen = tmux.wait_for("J'écoute", 2, Duration::from_secs(10)).await;
    assert!(screen.contains("(réponse interrompue)"), "{screen}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    tmux.key("Space");
    tmux.wait_for("(rien entendu)", 1, Duration::from_secs(30)).await;
    tmux.key("Escape");
    let screen = tmux.wait_for("EXIT=", 1, Duration::from_secs(15)).await;
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("Au revoir."), "{screen}");

    let store = SqliteStore::open_path(&data.join("arthur.db")).await.unwrap();
    let rappels = store.list_rappels(false).await.unwrap();
    assert_eq!(rappels.len(), 1);
    assert_eq!(rappels[0].texte, "appeler la banque");
    assert_eq!(llm.remaining(), 0);
    // Arthur started answering aloud, and was cut off.
    let said = wav::read_wav_16k_mono(&output).unwrap();
    let played = wav::duration_secs(&said, 16_000);
    assert!(played > 0.5 && wav::rms(&said) > 0.01, "{played:.2} s played");
}
