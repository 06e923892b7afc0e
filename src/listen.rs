//! The voice loops. Hands-free: frames → VAD → whisper → wake word / follow-up window →
//! the honest turn → `spoken` → TTS, sentence by sentence, with earcons for "listening"
//! and "done", and barge-in (speech during playback stops it). Push-to-talk: a key starts
//! and stops recording, no wake word, a key during playback interrupts it.
//!
//! Both run on a stream of 16 kHz frames (microphone, or a WAV file replayed) and a
//! [`Speaker`]. Time is the time of the input audio (samples consumed), so a replayed
//! conversation — with a [`WavSpeaker`] that plays in audio time — behaves like the live
//! one it records, interruptions included.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use arthur_agents::turn::TurnEngine;
use arthur_audio::playback::{Speaker, WavSpeaker};
use arthur_audio::stt::Transcriber;
use arthur_audio::tts::{self, Pcm, Synthesizer};
use arthur_audio::vad::{Vad, VadConfig, VadEvent};
use arthur_audio::wake::{Heard, Listener, ListenerConfig};
use arthur_audio::wav::{WavSource, FRAME_SAMPLES};
use arthur_audio::{earcon, SAMPLE_RATE_HZ};
use tokio::sync::mpsc;

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
    /// When the answer was cut short by the user speaking (or pressing the key), in
    /// seconds of input audio.
    pub interrupted_at_secs: Option<f64>,
}

/// What the loop is doing, for whoever shows it (terminal lines, logs).
#[derive(Debug, Clone, PartialEq)]
pub enum LoopEvent {
    Ready,
    Recording,
    Transcribing,
    Ignored(String),
    Heard(String),
    Answer(String),
    BargeIn,
    NothingHeard,
    /// Something Arthur says on his own (a due reminder).
    Announcement(String),
}

/// Keys of the push-to-talk loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PttKey {
    /// Starts recording, or stops it (and sends what was said); interrupts an answer.
    Toggle,
    Quit,
}

/// The parts a voice loop needs.
pub struct VoiceLoop<'a> {
    pub engine: &'a TurnEngine,
    pub transcriber: Arc<Transcriber>,
    pub synth: Arc<dyn Synthesizer>,
    pub listener: ListenerConfig,
    /// Speech during playback stops it. Off: the microphone is ignored while Arthur speaks
    /// (for loudspeakers without echo cancellation).
    pub barge_in: bool,
}

/// How an answer being spoken ended.
enum Spoken {
    Finished,
    BargeIn,
    Key(PttKey),
    InputEnded,
}

/// The frame stream, its clock and the voice detector.
struct Ears<'f> {
    frames: &'f mut mpsc::Receiver<Vec<f32>>,
    vad: Vad,
    samples: u64,
    start: Instant,
    ended: bool,
}

impl Ears<'_> {
    fn secs(&self) -> f64 {
        self.samples as f64 / f64::from(SAMPLE_RATE_HZ)
    }

    /// The listener's clock: audio time mapped onto an `Instant`.
    fn now(&self) -> Instant {
        self.start + Duration::from_secs_f64(self.secs())
    }

    async fn next(&mut self) -> Option<Vec<f32>> {
        if self.ended {
            return None;
        }
        let frame = self.frames.recv().await;
        match &frame {
            Some(f) => self.samples += f.len() as u64,
            None => self.ended = true,
        }
        frame
    }
}

impl VoiceLoop<'_> {
    /// Hands-free on a recorded source, in audio time: what Arthur says (earcons included)
    /// is written to `output` as a 16 kHz WAV. Returns every utterance heard.
    pub async fn run_wav(&self, input: &Path, output: Option<&Path>) -> anyhow::Result<Vec<Exchange>> {
        let source = WavSource::open(input, FRAME_SAMPLES).with_context(|| format!("reading {}", input.display()))?;
        let mut frames = replay(source, None);
        let mut speaker = WavSpeaker::new();
        let exchanges = self.hands_free(&mut frames, &mut speaker, std::future::pending(), |_| {}).await?;
        if let Some(path) = output {
            speaker.write(path).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(exchanges)
    }

    /// Hands-free until the input ends or `shutdown` resolves.
    pub async fn hands_free(
        &self,
        frames: &mut mpsc::Receiver<Vec<f32>>,
        speaker: &mut dyn Speaker,
        shutdown: impl Future<Output = ()>,
        on_event: impl FnMut(&LoopEvent),
    ) -> anyhow::Result<Vec<Exchange>> {
        self.hands_free_announcing(frames, speaker, None, shutdown, on_event).await
    }

    /// Hands-free, also speaking what arrives on `announcements` (due reminders) between
    /// two utterances, with the same barge-in.
    pub async fn hands_free_announcing(
        &self,
        frames: &mut mpsc::Receiver<Vec<f32>>,
        speaker: &mut dyn Speaker,
        mut announcements: Option<&mut mpsc::Receiver<String>>,
        shutdown: impl Future<Output = ()>,
        mut on_event: impl FnMut(&LoopEvent),
    ) -> anyhow::Result<Vec<Exchange>> {
        let mut ears =
            Ears { frames, vad: Vad::new(VadConfig::default()), samples: 0, start: Instant::now(), ended: false };
        let mut listener = Listener::new(self.listener.clone());
        let mut exchanges = Vec::new();
        let mut conversation: Option<String> = None;
        tokio::pin!(shutdown);
        on_event(&LoopEvent::Ready);
        loop {
            let announcement = async {
                match announcements.as_deref_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            };
            let frame = tokio::select! {
                frame = ears.next() => frame,
                Some(text) = announcement => {
                    on_event(&LoopEvent::Announcement(text.clone()));
                    speaker.enqueue(&earcon_pcm(earcon::listening()))?;
                    if let Spoken::BargeIn = self.speak(&text, &mut ears, speaker, None).await? {
                        on_event(&LoopEvent::BargeIn);
                        listener.answered(ears.now());
                    }
                    continue;
                }
                () = &mut shutdown => break,
            };
            let event = match frame {
                Some(frame) => {
                    speaker.advance(frame.len());
                    if speaker.is_playing() && !self.barge_in {
                        continue;
                    }
                    ears.vad.push(&frame)
                }
                None => match ears.vad.flush() {
                    Some(e) => Some(e),
                    None => break,
                },
            };
            let pcm = match event {
                Some(VadEvent::SpeechStarted) if speaker.is_playing() => {
                    // An earcon, or the tail of an answer: the user is talking over it.
                    speaker.stop();
                    continue;
                }
                Some(VadEvent::Utterance(pcm)) => pcm,
                _ => continue,
            };
            let at_secs = ears.secs();
            on_event(&LoopEvent::Transcribing);
            let transcript = self.transcribe(pcm).await?;
            let mut exchange = Exchange {
                at_secs,
                transcript: transcript.clone(),
                command: None,
                written: None,
                spoken: None,
                interrupted_at_secs: None,
            };
            match listener.on_utterance(&transcript, ears.now()) {
                Heard::Ignored => on_event(&LoopEvent::Ignored(transcript.clone())),
                Heard::WakeOnly => speaker.enqueue(&earcon_pcm(earcon::listening()))?,
                Heard::Command(command) => {
                    on_event(&LoopEvent::Heard(command.clone()));
                    speaker.enqueue(&earcon_pcm(earcon::listening()))?;
                    let result =
                        self.engine.run(conversation.as_deref(), &command, None).await.context("running the turn")?;
                    conversation = Some(result.conversation_id.clone());
                    on_event(&LoopEvent::Answer(result.written.clone()));
                    match self.speak(&result.spoken, &mut ears, speaker, None).await? {
                        Spoken::Finished => speaker.enqueue(&earcon_pcm(earcon::done()))?,
                        Spoken::BargeIn => {
                            exchange.interrupted_at_secs = Some(ears.secs());
                            on_event(&LoopEvent::BargeIn);
                        }
                        Spoken::Key(_) | Spoken::InputEnded => {}
                    }
                    // The follow-up window opens when Arthur stops speaking (or is
                    // interrupted: what interrupted him needs no wake word).
                    listener.answered(ears.now());
                    exchange.command = Some(command);
                    exchange.written = Some(result.written);
                    exchange.spoken = Some(result.spoken);
                }
            }
            tracing::info!(at_secs, transcript = %exchange.transcript, taken = exchange.command.is_some(), "utterance");
            exchanges.push(exchange);
        }
        speaker.drain();
        Ok(exchanges)
    }

    /// Push-to-talk until Esc (or the input ends, or `shutdown`).
    pub async fn push_to_talk(
        &self,
        frames: &mut mpsc::Receiver<Vec<f32>>,
        keys: &mut mpsc::Receiver<PttKey>,
        speaker: &mut dyn Speaker,
        shutdown: impl Future<Output = ()>,
        mut on_event: impl FnMut(&LoopEvent),
    ) -> anyhow::Result<Vec<Exchange>> {
        let mut ears =
            Ears { frames, vad: Vad::new(VadConfig::default()), samples: 0, start: Instant::now(), ended: false };
        let mut exchanges = Vec::new();
        let mut conversation: Option<String> = None;
        let mut recording: Option<Vec<f32>> = None;
        let mut pending_key: Option<PttKey> = None;
        tokio::pin!(shutdown);
        on_event(&LoopEvent::Ready);
        loop {
            let key = match pending_key.take() {
                Some(k) => Some(k),
                None => {
                    tokio::select! {
                        key = keys.recv() => Some(key.unwrap_or(PttKey::Quit)),
                        frame = ears.next() => {
                            let Some(frame) = frame else { break };
                            speaker.advance(frame.len());
                            if let Some(buf) = recording.as_mut() {
                                buf.extend_from_slice(&frame);
                            }
                            None
                        }
                        () = &mut shutdown => break,
                    }
                }
            };
            match key {
                None => {}
                Some(PttKey::Quit) => break,
                Some(PttKey::Toggle) => match recording.take() {
                    None => {
                        speaker.stop();
                        recording = Some(Vec::new());
                        on_event(&LoopEvent::Recording);
                    }
                    Some(pcm) => {
                        on_event(&LoopEvent::Transcribing);
                        let at_secs = ears.secs();
                        let transcript = self.transcribe(pcm).await?;
                        if transcript.trim().is_empty() {
                            on_event(&LoopEvent::NothingHeard);
                            on_event(&LoopEvent::Ready);
                            continue;
                        }
                        on_event(&LoopEvent::Heard(transcript.clone()));
                        let result = self
                            .engine
                            .run(conversation.as_deref(), &transcript, None)
                            .await
                            .context("running the turn")?;
                        conversation = Some(result.conversation_id.clone());
                        on_event(&LoopEvent::Answer(result.written.clone()));
                        let mut exchange = Exchange {
                            at_secs,
                            transcript: transcript.clone(),
                            command: Some(transcript),
                            written: Some(result.written),
                            spoken: Some(result.spoken.clone()),
                            interrupted_at_secs: None,
                        };
                        match self.speak(&result.spoken, &mut ears, speaker, Some(keys)).await? {
                            Spoken::Finished => speaker.enqueue(&earcon_pcm(earcon::done()))?,
                            Spoken::Key(key) => {
                                exchange.interrupted_at_secs = Some(ears.secs());
                                on_event(&LoopEvent::BargeIn);
                                pending_key = Some(key);
                            }
                            Spoken::BargeIn | Spoken::InputEnded => {}
                        }
                        exchanges.push(exchange);
                        if pending_key.is_none() {
                            on_event(&LoopEvent::Ready);
                        }
                    }
                },
            }
        }
        speaker.drain();
        Ok(exchanges)
    }

    async fn transcribe(&self, pcm: Vec<f32>) -> anyhow::Result<String> {
        let transcriber = self.transcriber.clone();
        tokio::task::spawn_blocking(move || transcriber.transcribe(&pcm))
            .await
            .context("transcription task")?
            .context("transcribing")
    }

    /// Speaks `text`: sentences are synthesised on a blocking thread and queued as each
    /// is ready, so the first plays while the rest is made. Input frames keep flowing:
    /// speech (hands-free) or a key (push-to-talk) stops playback and synthesis.
    async fn speak(
        &self,
        text: &str,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        mut keys: Option<&mut mpsc::Receiver<PttKey>>,
    ) -> anyhow::Result<Spoken> {
        let (tx, mut rx) = mpsc::channel::<Result<Pcm, tts::TtsError>>(4);
        let synth = self.synth.clone();
        let sentences = tts::chunks(text);
        let synthesis = tokio::task::spawn_blocking(move || {
            for sentence in sentences {
                if tx.blocking_send(synth.synthesize(&sentence)).is_err() {
                    break; // interrupted: the receiver is gone
                }
            }
        });
        let mut synth_done = false;
        let outcome = loop {
            if synth_done && !speaker.is_playing() {
                break Spoken::Finished;
            }
            if !speaker.is_playing() {
                // Nothing to play yet: wait for the next sentence (audio time stands still).
                match rx.recv().await {
                    Some(Ok(pcm)) => speaker.enqueue(&pcm)?,
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "speech synthesis failed");
                        synth_done = true;
                    }
                    None => synth_done = true,
                }
                continue;
            }
            let key_wait = async {
                match keys.as_deref_mut() {
                    Some(k) => k.recv().await.unwrap_or(PttKey::Quit),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                next = rx.recv(), if !synth_done => match next {
                    Some(Ok(pcm)) => speaker.enqueue(&pcm)?,
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "speech synthesis failed");
                        synth_done = true;
                    }
                    None => synth_done = true,
                },
                key = key_wait => {
                    speaker.stop();
                    break Spoken::Key(key);
                }
                frame = ears.next() => {
                    let Some(frame) = frame else {
                        break Spoken::InputEnded;
                    };
                    speaker.advance(frame.len());
                    if keys.is_some() || !self.barge_in {
                        continue;
                    }
                    if let Some(VadEvent::SpeechStarted) = ears.vad.push(&frame) {
                        tracing::info!(at_secs = ears.secs(), "barge-in: playback stopped");
                        speaker.stop();
                        break Spoken::BargeIn;
                    }
                }
            }
        };
        drop(rx);
        let _ = synthesis.await;
        Ok(outcome)
    }
}

fn earcon_pcm(samples: Vec<f32>) -> Pcm {
    Pcm { samples, rate: SAMPLE_RATE_HZ }
}

/// Replays a WAV source as frames. With `pace`, in real time (like a microphone, then
/// `pace` of trailing silence); without, as fast as the loop consumes them — the loop's
/// clock is the audio, so nothing changes but the wall time.
pub fn replay(mut source: WavSource, pace: Option<Duration>) -> mpsc::Receiver<Vec<f32>> {
    let (tx, rx) = mpsc::channel(if pace.is_some() { 256 } else { 1 });
    tokio::spawn(async move {
        let frame_secs = source.frame_len() as f64 / f64::from(SAMPLE_RATE_HZ);
        let start = tokio::time::Instant::now();
        let silence_frames = pace.map(|t| (t.as_secs_f64() / frame_secs).ceil() as usize).unwrap_or(0);
        let frame_len = source.frame_len();
        let tail = std::iter::repeat_n(vec![0.0; frame_len], silence_frames);
        for (n, frame) in std::iter::from_fn(|| source.next_frame()).chain(tail).enumerate() {
            if pace.is_some() {
                tokio::time::sleep_until(start + Duration::from_secs_f64(frame_secs * n as f64)).await;
            }
            if tx.send(frame).await.is_err() {
                return;
            }
        }
    });
    rx
}

/// Frames from the live capture, into a bounded queue (about a minute of audio; a loop
/// that falls that far behind loses the oldest frames, with a warning).
pub fn capture_frames(
    config: &arthur_audio::capture::CaptureConfig,
) -> anyhow::Result<(arthur_audio::capture::Capture, mpsc::Receiver<Vec<f32>>)> {
    let (tx, rx) = mpsc::channel(2_000);
    let mut warned = false;
    let capture = arthur_audio::capture::Capture::start(config, move |frame| {
        if tx.try_send(frame).is_err() && !warned {
            warned = true;
            tracing::warn!("the voice loop is behind: microphone frames dropped");
        }
    })?;
    Ok((capture, rx))
}
