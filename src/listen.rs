//! The hands-free loop: frames → VAD → whisper → wake word / follow-up window → the honest
//! turn → `spoken` → TTS, with earcons for "listening" and "done". Today it runs on a
//! recorded source (`arthur listen --input FILE.wav`), with time measured in audio time so
//! a replay behaves like the live conversation it records; live capture comes with cpal.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use arthur_agents::turn::TurnEngine;
use arthur_audio::stt::Transcriber;
use arthur_audio::tts::{self, Synthesizer};
use arthur_audio::vad::{Vad, VadConfig, VadEvent};
use arthur_audio::wake::{Heard, Listener, ListenerConfig};
use arthur_audio::wav::{self, WavSource, FRAME_SAMPLES};
use arthur_audio::{earcon, SAMPLE_RATE_HZ};

/// One utterance and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// When the utterance ended, in seconds of input audio.
    pub at_secs: f64,
    pub transcript: String,
    /// The command taken (wake word removed), or `None` when the utterance was ignored.
    pub command: Option<String>,
    pub written: Option<String>,
    pub spoken: Option<String>,
}

pub struct HandsFree<'a> {
    pub engine: &'a TurnEngine,
    pub transcriber: Arc<Transcriber>,
    pub synth: &'a dyn Synthesizer,
    pub listener: ListenerConfig,
}

impl HandsFree<'_> {
    /// Listens to a recorded source; writes what Arthur says (earcons included) to
    /// `output` as a 16 kHz WAV. Returns every utterance heard.
    pub async fn run_wav(&self, input: &Path, output: Option<&Path>) -> anyhow::Result<Vec<Exchange>> {
        let mut source =
            WavSource::open(input, FRAME_SAMPLES).with_context(|| format!("reading {}", input.display()))?;
        let mut vad = Vad::new(VadConfig::default());
        let mut listener = Listener::new(self.listener.clone());
        let start = Instant::now();
        let mut said: Vec<f32> = Vec::new();
        let mut exchanges = Vec::new();
        let mut conversation: Option<String> = None;
        let mut samples: u64 = 0;
        let mut frames = std::iter::from_fn(|| source.next_frame()).fuse();
        loop {
            let event = match frames.next() {
                Some(frame) => {
                    samples += frame.len() as u64;
                    vad.push(&frame)
                }
                None => match vad.flush() {
                    Some(e) => Some(e),
                    None => break,
                },
            };
            let Some(VadEvent::Utterance(pcm)) = event else { continue };
            let at_secs = samples as f64 / f64::from(SAMPLE_RATE_HZ);
            let now = start + Duration::from_secs_f64(at_secs);
            let transcriber = self.transcriber.clone();
            let transcript = tokio::task::spawn_blocking(move || transcriber.transcribe(&pcm))
                .await
                .context("transcription task")?
                .context("transcribing")?;
            let mut exchange =
                Exchange { at_secs, transcript: transcript.clone(), command: None, written: None, spoken: None };
            match listener.on_utterance(&transcript, now) {
                Heard::Ignored => {}
                Heard::WakeOnly => said.extend(earcon::listening()),
                Heard::Command(command) => {
                    said.extend(earcon::listening());
                    let result =
                        self.engine.run(conversation.as_deref(), &command, None).await.context("running the turn")?;
                    conversation = Some(result.conversation_id.clone());
                    let voice = tts::speak(self.synth, &result.spoken, |_| {}).context("speaking")?;
                    let voice16 = wav::resample(&voice.samples, voice.rate, SAMPLE_RATE_HZ);
                    let spoken_secs = voice16.len() as f64 / f64::from(SAMPLE_RATE_HZ);
                    said.extend(voice16);
                    said.extend(earcon::done());
                    // The follow-up window opens when Arthur has finished speaking.
                    listener.answered(now + Duration::from_secs_f64(spoken_secs));
                    exchange.command = Some(command);
                    exchange.written = Some(result.written);
                    exchange.spoken = Some(result.spoken);
                }
            }
            tracing::info!(at_secs, transcript = %exchange.transcript, taken = exchange.command.is_some(), "utterance");
            exchanges.push(exchange);
        }
        if let Some(path) = output {
            wav::write_wav(path, &said, SAMPLE_RATE_HZ).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(exchanges)
    }
}
