//! The voice loops. Hands-free: frames → echo cancellation → speech detection → whisper →
//! wake word / follow-up window → the honest turn → `spoken` → TTS, sentence by sentence,
//! with earcons for "listening" and "done", and barge-in. Push-to-talk: a key starts and
//! stops recording, no wake word, a key during playback interrupts it.
//!
//! In a real room (the default [`Tuning`]): what the loudspeaker plays is removed from
//! the microphone (AEC3), a trained detector tells speech from noise, and the background
//! is measured so that a television — speech too — is not the user: during an answer only
//! speech that stands out from the background measured before it, or that starts with the
//! wake word or is a stop word, cuts it; in the follow-up window only an utterance that
//! stands out and reads as a command (or a short reply to Arthur's question) needs no wake
//! word. While the user pauses, what was said is transcribed at once, and the utterance
//! closes early when it is already a complete command. A stop word said during or right
//! after an answer only cuts the speech: it never reaches the turn (a stopped answer must
//! not become "stop the work session").
//!
//! Both loops run on a stream of 16 kHz frames (microphone, or a WAV file replayed) and a
//! [`Speaker`]. Time is the time of the input audio (samples consumed), so a replayed
//! conversation — with a [`WavSpeaker`] that plays in audio time — behaves like the live
//! one it records, interruptions included.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use arthur_agents::memory::{Delivery, MemoryStore};
use arthur_agents::turn::{TurnEngine, TurnResult};
use arthur_audio::clock::CaptureClock;
use arthur_audio::detect::{EarshotDetector, EnergyDetector, SileroDetector, SpeechDetector};
use arthur_audio::echo::EchoCanceller;
use arthur_audio::playback::{Speaker, WavSpeaker};
use arthur_audio::stt::Transcriber;
use arthur_audio::tts::{self, Pcm, Synthesizer};
use arthur_audio::vad::{Utterance, Vad, VadConfig, VadEvent};
use arthur_audio::wake::{self, Heard, Listener, ListenerConfig, UtteranceContext};
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
    /// A stop word that only cut (or followed) Arthur's speech: no turn ran.
    pub stopped_speech: bool,
    /// Whether the utterance stood out from the room's background.
    pub foreground: bool,
    /// Where the time went (end of speech → first answer sample), when a turn ran.
    pub stages: Option<Stages>,
}

impl Exchange {
    fn ignored(at_secs: f64, transcript: String, foreground: bool) -> Self {
        Self {
            at_secs,
            transcript,
            command: None,
            written: None,
            spoken: None,
            interrupted_at_secs: None,
            stopped_speech: false,
            foreground,
            stages: None,
        }
    }
}

/// The time of each stage of one voice turn.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Stages {
    /// End of the user's speech, in seconds of input audio.
    pub end_of_speech_s: f64,
    /// Silence heard after the speech before the utterance closed, ms of audio.
    pub silence_ms: u64,
    /// Transcription (the last one, when one made during a pause was kept: 0), ms.
    pub transcription_ms: u64,
    /// Whether the transcript was made during the user's pause (the tail was silence).
    pub transcribed_in_pause: bool,
    /// The whole turn (routing, model calls, tools, composition, storage), ms.
    pub turn_ms: u64,
    /// The router call, ms (absent when no model was called).
    pub routing_ms: Option<u64>,
    /// All model calls of the turn, ms.
    pub model_ms: u64,
    /// All tool calls of the turn, ms.
    pub tools_ms: f64,
    /// From the turn's end to the first answer sample handed to the speaker, ms.
    pub first_audio_ms: u64,
    /// End of speech → first answer sample, as the user waits it, ms (the silence, then
    /// the wall time of the stages).
    pub felt_ms: u64,
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
    /// A stop word cut (or followed) Arthur's speech; nothing else was done.
    Stopped(String),
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

/// Which speech detector decides what is speech.
#[derive(Debug, Clone, PartialEq)]
pub enum DetectorChoice {
    /// The adaptive energy threshold of old (loud = speech).
    Energy,
    /// earshot's network (pure Rust, weights in the binary).
    Earshot,
    /// Silero VAD on ONNX Runtime: this model file, on this runtime.
    Silero { model: PathBuf, onnxruntime: PathBuf },
}

impl DetectorChoice {
    /// The configured detector (`ARTHUR_VAD`): earshot or energy when asked; else Silero
    /// when `models/fetch` installed it and ONNX Runtime is there, else earshot.
    pub fn for_voice(voice: &crate::config::Voice) -> Self {
        use crate::config::VadSetting;
        match voice.vad {
            VadSetting::Earshot => return DetectorChoice::Earshot,
            VadSetting::Energy => return DetectorChoice::Energy,
            VadSetting::Auto | VadSetting::Silero => {}
        }
        let model = voice.model_dir.as_deref().and_then(SileroDetector::model_in);
        match (model, voice.onnxruntime.clone().filter(|p| p.is_file())) {
            (Some(model), Some(onnxruntime)) => DetectorChoice::Silero { model, onnxruntime },
            _ => {
                if voice.vad == VadSetting::Silero {
                    tracing::warn!("ARTHUR_VAD=silero but Silero VAD or ONNX Runtime is not installed: using earshot");
                }
                DetectorChoice::Earshot
            }
        }
    }

    /// The detector, loaded.
    pub fn build(&self) -> anyhow::Result<Box<dyn SpeechDetector>> {
        Ok(match self {
            DetectorChoice::Energy => Box::new(EnergyDetector::new()),
            DetectorChoice::Earshot => Box::new(EarshotDetector::new()),
            DetectorChoice::Silero { model, onnxruntime } => {
                Box::new(SileroDetector::load(model, Some(onnxruntime)).context("loading Silero VAD")?)
            }
        })
    }
}

/// How the hands-free loop hears a room.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuning {
    pub detector: DetectorChoice,
    pub vad: VadConfig,
    /// Removes what the loudspeaker played from the microphone.
    pub echo_cancellation: bool,
    /// Transcribes during the user's pauses; closes the utterance early when what was
    /// said is a complete command.
    pub speculative: bool,
    /// When the wake word is needed, decodes only this much of a long utterance first.
    pub wake_prefix_secs: Option<f32>,
    /// Barge-in and the follow-up window need the user (see the module doc).
    pub user_only: bool,
    /// A stop word said during an answer, or this long after it, only cuts the speech;
    /// `None`: stop words are commands like any other (as before issue 16).
    pub stop_window: Option<Duration>,
    /// A command cut by an interruption is joined with what follows within this long.
    pub rejoin_window: Duration,
}

impl Tuning {
    /// The voice as it was before the room issues (20, 21): energy VAD, no echo
    /// cancellation, every speech onset cuts an answer, any utterance in the window is a
    /// command. Kept for the side-by-side benches.
    pub fn before_room() -> Self {
        Self {
            detector: DetectorChoice::Energy,
            vad: VadConfig::default(),
            echo_cancellation: false,
            speculative: false,
            wake_prefix_secs: None,
            user_only: false,
            stop_window: None,
            rejoin_window: Duration::ZERO,
        }
    }

    /// A real room, with `detector`.
    pub fn room(detector: DetectorChoice) -> Self {
        Self {
            detector,
            vad: VadConfig::room(),
            echo_cancellation: true,
            speculative: true,
            wake_prefix_secs: Some(2.0),
            user_only: true,
            stop_window: Some(Duration::from_secs(5)),
            rejoin_window: Duration::from_millis(1_200),
        }
    }
}

impl Tuning {
    /// A real room with the configured detector.
    pub fn for_voice(voice: &crate::config::Voice) -> Self {
        Self::room(DetectorChoice::for_voice(voice))
    }
}

/// A real room with the detector this process's configuration gives (file and environment;
/// the built-in defaults if they do not load): what tests and benches use.
impl Default for Tuning {
    fn default() -> Self {
        match crate::config::Settings::load() {
            Ok(settings) => Self::for_voice(&settings.voice),
            Err(_) => Self::room(DetectorChoice::Earshot),
        }
    }
}

/// The parts a voice loop needs.
pub struct VoiceLoop<'a> {
    pub engine: &'a TurnEngine,
    pub transcriber: Arc<Transcriber>,
    pub synth: Arc<dyn Synthesizer>,
    pub listener: ListenerConfig,
    /// Speech during playback may stop it. Off: the microphone is ignored while Arthur
    /// speaks (half-duplex).
    pub barge_in: bool,
    pub tuning: Tuning,
    /// Where each turn's stage timings are stored (with its trace), if anywhere.
    pub journal: Option<Arc<dyn MemoryStore>>,
    /// The live microphone's capture times (the echo canceller's reference is looked up by
    /// them); none for a recording.
    pub capture_clock: Option<CaptureClock>,
    /// Where a wake word was heard elsewhere (a satellite's own detector), in samples of the
    /// frame stream plus one (0: none): the next utterance is the command. A position, not a
    /// flag: a loop running behind its audio opens the window where the wake word was, not
    /// where the loop happens to be. Lowered by the loop once it has heard that far.
    pub woken: Option<Arc<std::sync::atomic::AtomicU64>>,
}

/// How an answer being spoken ended.
enum Spoken {
    Finished,
    /// Cut by the user; the utterance that cut it, when it is already complete.
    BargeIn(Option<Box<(Utterance, String)>>),
    Key(PttKey),
    InputEnded,
}

/// The frame stream, its clock, the echo canceller and the voice detector.
struct Ears<'f> {
    frames: &'f mut mpsc::Receiver<Vec<f32>>,
    vad: Vad,
    aec: Option<EchoCanceller>,
    reference: Vec<f32>,
    /// What is left of the echo after cancellation, measured while Arthur speaks.
    residual: Residual,
    /// When each frame received was captured (a live microphone; replays have none).
    clock: Option<CaptureClock>,
    /// Energy of the microphone before and after cancellation over the frames where
    /// something played and the user did not stand out: the answer's ERLE.
    erle: (f64, f64),
    /// Live frames waiting for the loudspeaker's reference over them, with their capture
    /// time (see [`Ears::hear`]).
    held: std::collections::VecDeque<(Vec<f32>, Instant)>,
    samples: u64,
    start: Instant,
    ended: bool,
}

/// The echo left after cancellation: the level of the cleaned microphone relative to the
/// level of what played, while something played and nobody stood out — so that, on a
/// real device where the canceller is not perfect (or not yet converged), Arthur's own
/// voice is not taken for the user cutting in.
#[derive(Debug, Default)]
struct Residual {
    /// Cleaned minus played level, dB, for recent frames with playback.
    gaps: std::collections::VecDeque<f32>,
    /// Recent played levels, dB (smoothed like the VAD's level).
    played: std::collections::VecDeque<f32>,
}

impl Residual {
    const WINDOW: usize = 200; // frames: 6 s of playback
    /// Until enough playback was heard, the echo is assumed to come back unattenuated.
    const UNKNOWN_DB: f32 = 0.0;

    fn observe(&mut self, cleaned_db: f32, played_db: f32, user_speaking: bool) {
        self.played.push_back(played_db);
        while self.played.len() > 5 {
            self.played.pop_front();
        }
        if played_db > -50.0 && !user_speaking {
            self.gaps.push_back(cleaned_db - played_db);
            while self.gaps.len() > Self::WINDOW {
                self.gaps.pop_front();
            }
        }
    }

    /// The echo's level after cancellation now (dBFS): recent played level + the 90th
    /// percentile of the residual gap.
    fn expected_db(&self) -> f32 {
        let played = self.played.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let gap = if self.gaps.len() < 50 {
            Self::UNKNOWN_DB
        } else {
            let mut g: Vec<f32> = self.gaps.iter().copied().collect();
            g.sort_by(f32::total_cmp);
            g[g.len() * 9 / 10]
        };
        played + gap
    }
}

impl Ears<'_> {
    fn secs(&self) -> f64 {
        self.samples as f64 / f64::from(SAMPLE_RATE_HZ)
    }

    /// The listener's clock: audio time mapped onto an `Instant`.
    fn now(&self) -> Instant {
        self.start + Duration::from_secs_f64(self.secs())
    }

    /// Hears the frames already waiting (what came in while a transcription and a turn ran),
    /// so an answer starts at the present of the audio: behind a backlog, a recording's
    /// queued frames would play it in a burst and leave no time to interrupt it.
    fn catch_up(&mut self, speaker: &mut dyn Speaker) {
        while let Ok(mut frame) = self.frames.try_recv() {
            self.samples += frame.len() as u64;
            self.hear(&mut frame, speaker);
        }
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

    /// When the last frame received finished being captured, on the wall clock (the
    /// loudspeaker's reference is laid out on it).
    fn captured_at(&self) -> Instant {
        self.clock.as_ref().and_then(|c| c.instant_of(self.samples, SAMPLE_RATE_HZ)).unwrap_or_else(|| self.now())
    }

    /// A frame just received: the speaker advances by it, and what it played meanwhile is
    /// removed from it.
    fn hear(&mut self, frame: &mut [f32], speaker: &mut dyn Speaker) {
        speaker.advance(frame.len());
        let mut at = self.captured_at();
        if self.aec.is_some() && self.clock.is_some() {
            // A live microphone: the loudspeaker's reference for a frame is what the device
            // pulled at its capture time, and the device pulls a buffer at a time — the
            // stretch for a frame just captured may not be pulled yet. The frame waits until
            // `HOLD_FRAMES` more were captured (so that long has gone by on the wall clock).
            self.held.push_back((frame.to_vec(), at));
            if self.held.len() <= HOLD_FRAMES {
                frame.fill(0.0);
                return;
            }
            let Some((older, when)) = self.held.pop_front() else { return };
            if older.len() != frame.len() {
                frame.fill(0.0);
                return;
            }
            frame.copy_from_slice(&older);
            at = when;
        }
        if let Some(aec) = self.aec.as_mut() {
            speaker.reference(at, frame.len(), &mut self.reference);
            let before = energy(frame);
            aec.process(frame, &self.reference);
            let user = self.vad.is_foreground_now();
            if arthur_audio::detect::energy_db(&self.reference) > -50.0 && !user {
                self.erle.0 += before;
                self.erle.1 += energy(frame);
            }
            self.residual.observe(
                arthur_audio::detect::energy_db(frame),
                arthur_audio::detect::energy_db(&self.reference),
                user,
            );
        }
    }

    /// The echo return loss enhancement over what played since the last call (dB), logged.
    fn report_erle(&mut self) {
        let (mic, cleaned) = std::mem::take(&mut self.erle);
        if mic > 0.0 {
            let erle_db = 10.0 * (mic / cleaned.max(1e-12)).log10();
            tracing::info!("echo cancelled over the answer: ERLE {erle_db:.1} dB");
        }
    }

    /// Whether speech heard now is above what is left of Arthur's own echo (always, with
    /// no loudspeaker in the room).
    fn above_echo(&self) -> bool {
        const MARGIN_DB: f32 = 6.0;
        self.aec.is_none() || self.vad.level_db() >= self.residual.expected_db() + MARGIN_DB
    }
}

fn energy(x: &[f32]) -> f64 {
    x.iter().map(|v| f64::from(*v) * f64::from(*v)).sum()
}

/// How many frames (30 ms each) a live microphone frame waits for the loudspeaker's
/// reference: more than the device's output buffer (rodio asks for 50 ms) plus scheduling.
const HOLD_FRAMES: usize = 4;

/// Utterances longer than this (5 s) are decoded first only as far as their start when
/// the wake word is needed: shorter ones cost whisper no more whole (its encoder works on
/// at least 10 s), and a command with the wake word rarely lasts longer.
const LONG_UTTERANCE: usize = SAMPLE_RATE_HZ as usize * 5;

/// A transcript made during the user's pause, kept while no more speech comes.
struct Partial {
    transcript: String,
    /// Length of the utterance (samples) when it was made.
    len: usize,
    millis: u64,
}

/// A command cut by an interruption, waiting for the rest.
struct Held {
    text: String,
    until_secs: f64,
    exchange: Exchange,
}

/// Per-run state of the hands-free loop.
struct Session {
    listener: Listener,
    conversation: Option<String>,
    exchanges: Vec<Exchange>,
    /// When Arthur last stopped speaking (audio seconds); `None` before any answer.
    answer_end_secs: Option<f64>,
    partial: Option<Partial>,
    /// The start of the utterance being collected was decoded and has no wake word (its
    /// transcript then): nothing more of it is decoded.
    no_wake_word: Option<Option<String>>,
    held: Option<Held>,
    /// The utterance being collected started during an answer (and cut it).
    interrupting: bool,
    /// What was said so far sounds finished: 400 ms of silence end it.
    short_hangover: bool,
    /// The utterance being collected started during an answer and did not cut it (the
    /// room, or what is left of Arthur's echo): only its words can make it count.
    began_in_answer: bool,
}

/// The stop words: said alone (after an optional wake word), they only cut Arthur's speech.
const STOP_WORDS: &[&str] = &[
    "stop",
    "stoppe",
    "arrete",
    "arretez",
    "arrete toi",
    "arrete de parler",
    "tais toi",
    "taisez vous",
    "tais",
    "chut",
    "silence",
    "ca suffit",
    "suffit",
    "assez",
    "c est bon",
    "stop stop",
    "ok stop",
    "d accord stop",
    "merci stop",
    "quiet",
    "be quiet",
    "shut up",
    "enough",
    "hush",
    "okay stop",
    "stop it",
    "stop talking",
];

/// Whether `text` (wake word already removed) is only a stop word.
pub fn is_stop_word(text: &str) -> bool {
    let n = wake::normalize(text);
    !n.is_empty() && STOP_WORDS.contains(&n.as_str())
}

/// `text` without the stop words it starts with as clauses of their own ("Stop. Call my
/// mother." → "Call my mother."; "Stop the session." stays), as written.
fn strip_leading_stop_words(text: &str) -> &str {
    let mut rest = text.trim();
    loop {
        let Some(clause_end) = rest.find(['.', ',', '!', ';', ':', '?']) else {
            return if is_stop_word(rest) { "" } else { rest };
        };
        if !is_stop_word(&rest[..clause_end]) {
            return rest;
        }
        rest = rest[clause_end..].trim_start_matches(|c: char| !c.is_alphanumeric()).trim_start();
    }
}

/// Words a finished sentence does not end on.
const CONTINUATIONS: &[&str] = &[
    "et", "ou", "de", "du", "des", "le", "la", "les", "un", "une", "a", "au", "aux", "pour", "sur", "dans", "avec",
    "que", "qui", "mon", "ma", "mes", "ton", "ta", "the", "an", "to", "and", "or", "of", "for", "on", "in", "at",
    "with", "my", "your", "that", "me", "call", "appeler", "rappelle",
];

/// Whether a transcript reads as a finished sentence: closed by whisper with a full stop,
/// a question or an exclamation mark, not on a word that needs a continuation. Weaker
/// than the parser's reading (whisper punctuates fragments too): it only shortens the
/// hangover, it never closes the utterance at once.
pub fn sounds_finished(text: &str) -> bool {
    let t = text.trim();
    if !(t.ends_with('.') || t.ends_with('?') || t.ends_with('!')) || t.ends_with("...") || t.ends_with('…') {
        return false;
    }
    let words = wake::normalize(t);
    let last = words.rsplit(' ').next().unwrap_or("");
    words.split(' ').count() >= 2 && !CONTINUATIONS.contains(&last)
}

/// Silence after a sentence that sounds finished (instead of the 600 ms hangover).
const SHORT_HANGOVER_SAMPLES: usize = SAMPLE_RATE_HZ as usize * 2 / 5;

/// Whether the grammar reads `text` as a whole command it is sure of.
pub fn parses_whole(text: &str, now: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> bool {
    let lexicon = arthur_french::Lexicon::default();
    matches!(
        arthur_agents::understand::understand(text, now, tz, &lexicon).reading,
        arthur_agents::understand::Reading::Sure(_)
    )
}

/// Whether the grammar takes `text` for a command (sure or not).
pub fn reads_as_command(text: &str, now: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> bool {
    let lexicon = arthur_french::Lexicon::default();
    arthur_agents::understand::understand(text, now, tz, &lexicon).is_command()
}

/// Something Arthur says on its own between two utterances: a due reminder, a timer that
/// ended (with its bell). Composed by code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    pub text: String,
    /// A timer's bell rather than the listening earcon in front.
    pub bell: bool,
    /// The due reminder this says: recorded as heard once it was spoken (to the end, or
    /// until the user spoke over it).
    pub rappel: Option<i64>,
}

impl<'a> VoiceLoop<'a> {
    /// A loop in a real room (the default [`Tuning`]), storing nothing beyond the turns.
    pub fn new(
        engine: &'a TurnEngine,
        transcriber: Arc<Transcriber>,
        synth: Arc<dyn Synthesizer>,
        listener: ListenerConfig,
        barge_in: bool,
    ) -> Self {
        Self {
            engine,
            transcriber,
            synth,
            listener,
            barge_in,
            tuning: Tuning::default(),
            journal: None,
            capture_clock: None,
            woken: None,
        }
    }

    /// Takes the utterance after the position set in `signal` (samples into the frame
    /// stream, plus one) without the wake word.
    pub fn with_wake_signal(mut self, signal: Arc<std::sync::atomic::AtomicU64>) -> Self {
        self.woken = Some(signal);
        self
    }

    /// Stores each turn's stage timings in `store` (shown on /journal).
    pub fn with_journal(mut self, store: Arc<dyn MemoryStore>) -> Self {
        self.journal = Some(store);
        self
    }

    pub fn with_capture_clock(mut self, clock: Option<CaptureClock>) -> Self {
        self.capture_clock = clock;
        self
    }

    pub fn with_tuning(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    fn ears<'f>(&self, frames: &'f mut mpsc::Receiver<Vec<f32>>, speaker: &dyn Speaker) -> anyhow::Result<Ears<'f>> {
        let vad = Vad::with_detector(self.tuning.vad.clone(), self.tuning.detector.build()?);
        // Only a loudspeaker in the room echoes (AEC3 would only muffle the user otherwise).
        let aec = (self.tuning.echo_cancellation && speaker.echoes()).then(EchoCanceller::new);
        Ok(Ears {
            frames,
            vad,
            aec,
            reference: Vec::new(),
            residual: Residual::default(),
            clock: self.capture_clock.clone(),
            held: Default::default(),
            erle: (0.0, 0.0),
            samples: 0,
            start: Instant::now(),
            ended: false,
        })
    }

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

    /// Whether a timer is ringing now (a failed read counts as not: the stop word then only
    /// cuts, as before).
    async fn timer_ringing(&self) -> bool {
        match self.engine.context().store.ringing_timers().await {
            Ok(t) => !t.is_empty(),
            Err(e) => {
                tracing::warn!(error = %e, "could not read the ringing timers");
                false
            }
        }
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
        mut announcements: Option<&mut mpsc::Receiver<Announcement>>,
        shutdown: impl Future<Output = ()>,
        mut on_event: impl FnMut(&LoopEvent),
    ) -> anyhow::Result<Vec<Exchange>> {
        let mut ears = self.ears(frames, speaker)?;
        let mut s = Session {
            listener: Listener::new(self.listener.clone()),
            conversation: None,
            exchanges: Vec::new(),
            answer_end_secs: None,
            partial: None,
            no_wake_word: None,
            held: None,
            began_in_answer: false,
            short_hangover: false,
            interrupting: false,
        };
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
                Some(Announcement { text, bell, rappel }) = announcement => {
                    on_event(&LoopEvent::Announcement(text.clone()));
                    speaker.enqueue(&earcon_pcm(if bell { earcon::alarm() } else { earcon::listening() }))?;
                    let outcome = self.speak(&text, &mut ears, speaker, None).await?;
                    s.answer_end_secs = Some(ears.secs());
                    if let Some(id) = rappel {
                        let ctx = self.engine.context();
                        if let Err(e) = ctx.store.mark_rappel_delivered(id, ctx.now(), Delivery::Voice).await {
                            tracing::warn!(error = %e, id, "could not record the reminder as heard: it stays on the web");
                        }
                    }
                    if let Spoken::BargeIn(done) = outcome {
                        on_event(&LoopEvent::BargeIn);
                        s.listener.answered(ears.now());
                        s.interrupting = true;
                        if let Some(done) = done {
                            let (u, transcript) = *done;
                            self.on_utterance(u, Some((transcript, 0)), Instant::now(), &mut s, &mut ears, speaker, &mut on_event)
                                .await?;
                        }
                    }
                    continue;
                }
                () = &mut shutdown => break,
            };
            let event = match frame {
                Some(mut frame) => {
                    if let Some(signal) = &self.woken {
                        use std::sync::atomic::Ordering;
                        let at = signal.load(Ordering::Acquire);
                        // A newer wake stored meanwhile stays for its own frame.
                        if at != 0
                            && ears.samples >= at
                            && signal.compare_exchange(at, 0, Ordering::AcqRel, Ordering::Acquire).is_ok()
                        {
                            s.listener.woken(ears.now());
                        }
                    }
                    ears.hear(&mut frame, speaker);
                    if speaker.is_playing() && !self.barge_in {
                        continue;
                    }
                    let mut event = ears.vad.push(&frame);
                    if event.is_none() && s.short_hangover && ears.vad.silence_samples() >= SHORT_HANGOVER_SAMPLES {
                        // The sentence sounded finished and the user stayed silent.
                        s.short_hangover = false;
                        event = ears.vad.end_utterance();
                    }
                    if event.is_none() {
                        self.run_held_if_due(&mut s, &mut ears, speaker, &mut on_event).await?;
                    }
                    event
                }
                None => match ears.vad.flush() {
                    Some(e) => Some(e),
                    None => {
                        if let Some(held) = s.held.take() {
                            self.run_command(held.text, held.exchange, &mut s, &mut ears, speaker, &mut on_event)
                                .await?;
                        }
                        break;
                    }
                },
            };
            match event {
                Some(VadEvent::SpeechStarted { foreground }) => {
                    s.partial = None;
                    s.no_wake_word = None;
                    s.began_in_answer = false;
                    s.short_hangover = false;
                    if speaker.is_playing() && (foreground || !self.tuning.user_only) {
                        // An earcon, or the tail of an answer: the user is talking over it.
                        speaker.stop();
                    }
                }
                Some(VadEvent::Paused) if self.tuning.speculative => {
                    self.on_pause(&mut s, &mut ears, speaker, &mut on_event).await?;
                }
                Some(VadEvent::Utterance(u)) => {
                    let partial = s.partial.take().filter(|p| p.len >= u.speech.end);
                    let transcript = partial.map(|p| (p.transcript, p.millis));
                    if std::mem::take(&mut s.began_in_answer) && self.tuning.user_only {
                        match self.cuts_the_answer(&u.samples).await? {
                            Some(t) => {
                                self.on_utterance(
                                    u,
                                    Some((t, 0)),
                                    Instant::now(),
                                    &mut s,
                                    &mut ears,
                                    speaker,
                                    &mut on_event,
                                )
                                .await?
                            }
                            None => {
                                tracing::debug!(
                                    "speech begun during the answer, neither wake word nor stop word: ignored"
                                );
                                s.exchanges.push(Exchange::ignored(ears.secs(), String::new(), u.foreground));
                            }
                        }
                        continue;
                    }
                    if let Some(prefix) = s.no_wake_word.take() {
                        let mut e = Exchange::ignored(ears.secs(), prefix.unwrap_or_default(), u.foreground);
                        on_event(&LoopEvent::Ignored(e.transcript.clone()));
                        e.at_secs = ears.secs();
                        s.exchanges.push(e);
                        continue;
                    }
                    self.on_utterance(u, transcript, Instant::now(), &mut s, &mut ears, speaker, &mut on_event).await?;
                }
                _ => {}
            }
        }
        speaker.drain();
        Ok(s.exchanges)
    }

    /// The user paused: transcribe what was said; close the utterance now when it is a
    /// complete command the listener would take.
    async fn on_pause(
        &self,
        s: &mut Session,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        on_event: &mut impl FnMut(&LoopEvent),
    ) -> anyhow::Result<()> {
        let Some(so_far) = ears.vad.current_utterance().map(<[f32]>::to_vec) else { return Ok(()) };
        let started = Instant::now();
        if s.no_wake_word.is_some() {
            return Ok(()); // not for Arthur: nothing more is decoded
        }
        if s.listener.needs_wake_word(ears.now()) && !s.interrupting {
            if let Some(prefix_secs) = self.tuning.wake_prefix_secs {
                let head = (ears.vad.current_speech_start() + (prefix_secs * SAMPLE_RATE_HZ as f32) as usize)
                    .min(so_far.len());
                if so_far.len() > LONG_UTTERANCE {
                    let prefix = self.transcribe(so_far[..head].to_vec()).await?;
                    if wake::strip_wake_word(&prefix, &self.listener.wake_word).is_none() {
                        tracing::debug!(transcript = %prefix, "no wake word at the start: rest not decoded");
                        s.no_wake_word = Some(Some(prefix));
                        return Ok(());
                    }
                }
            }
        }
        let transcript = self.transcribe(so_far.clone()).await?;
        let millis = started.elapsed().as_millis() as u64;
        let taken = s.listener.would_take(&transcript, ears.now(), self.context(&transcript, true, s));
        // What interrupts Arthur may be cut by his stopping: it waits for the hangover. Only
        // the parser's reading is trusted to close early: whisper ends fragments with a
        // full stop too ("Remind me to call.").
        let text = wake::strip_wake_word(&transcript, &self.listener.wake_word).unwrap_or_else(|| transcript.clone());
        if taken && !s.interrupting && self.closes_early(&text) {
            if let Some(VadEvent::Utterance(u)) = ears.vad.end_utterance() {
                tracing::debug!(%transcript, "complete at the pause: utterance closed early");
                return Box::pin(self.on_utterance(u, Some((transcript, millis)), started, s, ears, speaker, on_event))
                    .await;
            }
        }
        s.short_hangover = taken && !s.interrupting && sounds_finished(&text);
        s.partial = Some(Partial { transcript, len: so_far.len(), millis });
        Ok(())
    }

    /// Whether a partial transcript is a whole command the grammar is sure of, read with the
    /// turn's clock and zone: the utterance may then close at the pause.
    pub fn closes_early(&self, text: &str) -> bool {
        parses_whole(strip_leading_stop_words(text), self.engine_now(), self.tz())
    }

    /// The turn's clock and zone, from the configuration (and the test clock): the grammar
    /// reads « demain à 9 h » in the user's zone, as the turn will.
    fn engine_now(&self) -> chrono::DateTime<chrono::Utc> {
        self.engine.context().now()
    }

    fn tz(&self) -> chrono_tz::Tz {
        self.engine.context().tz
    }

    fn context(&self, transcript: &str, foreground: bool, s: &Session) -> UtteranceContext {
        let text = wake::strip_wake_word(transcript, &self.listener.wake_word).unwrap_or_else(|| transcript.to_owned());
        UtteranceContext {
            foreground,
            reads_as_command: reads_as_command(&text, self.engine_now(), self.tz()),
            after_barge_in: s.interrupting,
        }
    }

    /// One utterance heard: transcribe it (unless done), decide, run the turn.
    /// `transcript`: made during the user's pause (and its time, ms); `closed`: when the
    /// utterance was found over (before that transcription, if any).
    #[allow(clippy::too_many_arguments)]
    async fn on_utterance(
        &self,
        u: Utterance,
        transcript: Option<(String, u64)>,
        closed: Instant,
        s: &mut Session,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        on_event: &mut impl FnMut(&LoopEvent),
    ) -> anyhow::Result<()> {
        let at_secs = ears.secs();
        let interrupting = std::mem::take(&mut s.interrupting);
        let mut stages = Stages {
            end_of_speech_s: (u.start as f64 + u.speech.end as f64) / f64::from(SAMPLE_RATE_HZ),
            silence_ms: (u.samples.len().saturating_sub(u.speech.end) as u64 * 1000) / u64::from(SAMPLE_RATE_HZ),
            transcribed_in_pause: transcript.is_some(),
            ..Stages::default()
        };
        // Close in audio time: the silence the VAD waited before closing.
        stages.silence_ms = ((at_secs - stages.end_of_speech_s).max(0.0) * 1000.0) as u64;
        let mut exchange = Exchange {
            at_secs,
            transcript: String::new(),
            command: None,
            written: None,
            spoken: None,
            interrupted_at_secs: None,
            stopped_speech: false,
            foreground: u.foreground,
            stages: None,
        };
        on_event(&LoopEvent::Transcribing);
        let needs_wake = s.listener.needs_wake_word(ears.now()) && !interrupting;
        let transcript = match transcript {
            Some((t, millis)) => {
                stages.transcription_ms = millis;
                t
            }
            None => {
                // Only the wake word can make this utterance a command: look at its start first.
                if let Some(prefix_secs) = self.tuning.wake_prefix_secs.filter(|_| needs_wake) {
                    let head = u.speech.start + (prefix_secs * SAMPLE_RATE_HZ as f32) as usize;
                    if u.samples.len() > LONG_UTTERANCE {
                        let prefix = self.transcribe(u.samples[..head].to_vec()).await?;
                        if wake::strip_wake_word(&prefix, &self.listener.wake_word).is_none() {
                            exchange.transcript = prefix;
                            tracing::debug!(transcript = %exchange.transcript, "no wake word at the start: rest not decoded");
                            on_event(&LoopEvent::Ignored(exchange.transcript.clone()));
                            s.exchanges.push(exchange);
                            return Ok(());
                        }
                    }
                }
                let started = Instant::now();
                let t = self.transcribe(u.samples.clone()).await?;
                stages.transcription_ms = started.elapsed().as_millis() as u64;
                t
            }
        };
        exchange.transcript = transcript.clone();

        // A stop word during or right after an answer only cuts the speech.
        let stripped =
            wake::strip_wake_word(&transcript, &self.listener.wake_word).unwrap_or_else(|| transcript.clone());
        let near_answer = speaker.is_playing()
            || interrupting
            || s.answer_end_secs
                .is_some_and(|end| self.tuning.stop_window.is_some_and(|w| ears.secs() - end <= w.as_secs_f64()));
        if self.tuning.stop_window.is_some() && near_answer && is_stop_word(&stripped) {
            speaker.stop();
            exchange.stopped_speech = true;
            // « C'est bon » over a ringing timer means « I heard it »: the turn acknowledges it
            // (and says so) rather than only cutting the bell.
            if arthur_agents::understand::acknowledges(&stripped) && self.timer_ringing().await {
                tracing::info!(transcript = %transcript, "stop word while a timer rings: acknowledged by the turn");
                s.listener.answered(ears.now());
                return self.run_command(stripped, exchange, s, ears, speaker, on_event).await;
            }
            tracing::info!(transcript = %transcript, "stop word: speech cut, nothing run");
            on_event(&LoopEvent::Stopped(transcript.clone()));
            // The user is addressing Arthur: what follows at once is for him too.
            s.listener.answered(ears.now());
            s.interrupting = true;
            s.exchanges.push(exchange);
            return Ok(());
        }

        // The rest of a command cut by an interruption.
        if let Some(held) = s.held.take() {
            if ears.secs() <= held.until_secs + u.samples.len() as f64 / f64::from(SAMPLE_RATE_HZ) {
                let joined = format!("{} {}", held.text.trim_end(), strip_leading_stop_words(&stripped));
                tracing::info!(%joined, "command rejoined after an interruption");
                exchange.transcript = format!("{} {}", held.exchange.transcript, transcript);
                return self.run_command(joined, exchange, s, ears, speaker, on_event).await;
            }
            self.run_command(held.text, held.exchange, s, ears, speaker, on_event).await?;
        }

        let context = if self.tuning.user_only {
            self.context(&transcript, u.foreground, s)
        } else {
            UtteranceContext::permissive()
        };
        let context = UtteranceContext { after_barge_in: interrupting, ..context };
        match s.listener.on_utterance_in(&transcript, ears.now(), context) {
            Heard::Ignored => {
                on_event(&LoopEvent::Ignored(transcript.clone()));
                s.exchanges.push(exchange);
            }
            Heard::WakeOnly => {
                speaker.enqueue(&earcon_pcm(earcon::listening()))?;
                s.exchanges.push(exchange);
            }
            Heard::Command(command) => {
                let command = if self.tuning.stop_window.is_some() {
                    strip_leading_stop_words(&command).to_owned()
                } else {
                    command
                };
                let now = self.engine_now();
                // A command that cut Arthur may itself be cut (he stopped, the user paused):
                // unless the parser reads it whole, wait a moment for the rest.
                if interrupting && !self.tuning.rejoin_window.is_zero() && !reads_as_command(&command, now, self.tz()) {
                    // Cut by the interruption itself? Wait a moment for the rest.
                    s.held = Some(Held {
                        text: command,
                        until_secs: ears.secs() + self.tuning.rejoin_window.as_secs_f64(),
                        exchange,
                    });
                    s.listener.answered(ears.now());
                    return Ok(());
                }
                exchange.stages = Some(stages);
                self.run_command_timed(command, exchange, closed, s, ears, speaker, on_event).await?;
            }
        }
        Ok(())
    }

    /// Runs a held command when nothing followed it in time.
    async fn run_held_if_due(
        &self,
        s: &mut Session,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        on_event: &mut impl FnMut(&LoopEvent),
    ) -> anyhow::Result<()> {
        let due = s.held.as_ref().is_some_and(|h| ears.secs() > h.until_secs && !ears.vad.is_speech_now());
        if due {
            let held = s.held.take().expect("checked");
            self.run_command(held.text, held.exchange, s, ears, speaker, on_event).await?;
        }
        Ok(())
    }

    async fn run_command(
        &self,
        command: String,
        exchange: Exchange,
        s: &mut Session,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        on_event: &mut impl FnMut(&LoopEvent),
    ) -> anyhow::Result<()> {
        self.run_command_timed(command, exchange, Instant::now(), s, ears, speaker, on_event).await
    }

    /// The turn for `command`, its answer spoken, its stage timings stored.
    #[allow(clippy::too_many_arguments)]
    async fn run_command_timed(
        &self,
        command: String,
        mut exchange: Exchange,
        closed: Instant,
        s: &mut Session,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        on_event: &mut impl FnMut(&LoopEvent),
    ) -> anyhow::Result<()> {
        on_event(&LoopEvent::Heard(command.clone()));
        speaker.enqueue(&earcon_pcm(earcon::listening()))?;
        let turn_started = Instant::now();
        let result = self.engine.run(s.conversation.as_deref(), &command, None).await.context("running the turn")?;
        let turn_ms = turn_started.elapsed().as_millis() as u64;
        s.conversation = Some(result.conversation_id.clone());
        on_event(&LoopEvent::Answer(result.written.clone()));
        let mut stages = exchange.stages.take().unwrap_or_default();
        stages.turn_ms = turn_ms;
        fill_turn_stages(&mut stages, &result);
        let first_audio = std::sync::Mutex::new(None::<Instant>);
        let outcome = self.speak_noting(&result.spoken, ears, speaker, None, Some(&first_audio)).await?;
        if let Some(first) = *first_audio.lock().unwrap_or_else(|p| p.into_inner()) {
            stages.first_audio_ms =
                first.saturating_duration_since(turn_started + Duration::from_millis(turn_ms)).as_millis() as u64;
            stages.felt_ms = stages.silence_ms + first.saturating_duration_since(closed).as_millis() as u64;
        }
        match outcome {
            Spoken::Finished => speaker.enqueue(&earcon_pcm(earcon::done()))?,
            Spoken::BargeIn(_) => {
                exchange.interrupted_at_secs = Some(ears.secs());
                on_event(&LoopEvent::BargeIn);
                s.interrupting = true;
            }
            Spoken::Key(_) | Spoken::InputEnded => {}
        }
        s.answer_end_secs = Some(ears.secs());
        s.began_in_answer = matches!(outcome, Spoken::Finished) && ears.vad.is_speech_now();
        // The follow-up window opens when Arthur stops speaking (or is interrupted).
        s.listener.answered_asking(ears.now(), result.spoken.trim_end().ends_with('?'));
        if let Some(store) = &self.journal {
            match serde_json::to_value(&stages) {
                Ok(value) => {
                    if let Err(e) = store.set_turn_stages(result.turn_id, &value).await {
                        tracing::warn!(error = %e, turn = result.turn_id, "could not store the turn's stage timings");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "stage timings not serialisable"),
            }
        }
        tracing::info!(
            at_secs = exchange.at_secs,
            transcript = %exchange.transcript,
            felt_ms = stages.felt_ms,
            transcription_ms = stages.transcription_ms,
            turn_ms = stages.turn_ms,
            "voice turn"
        );
        exchange.command = Some(command);
        exchange.written = Some(result.written);
        exchange.spoken = Some(result.spoken);
        exchange.stages = Some(stages);
        s.exchanges.push(exchange);
        if let Spoken::BargeIn(Some(done)) = outcome {
            let (u, transcript) = *done;
            Box::pin(self.on_utterance(u, Some((transcript, 0)), Instant::now(), s, ears, speaker, on_event)).await?;
        }
        Ok(())
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
        let mut ears = self.ears(frames, speaker)?;
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
                            let Some(mut frame) = frame else { break };
                            ears.hear(&mut frame, speaker);
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
                            stopped_speech: false,
                            foreground: true,
                            stages: None,
                        };
                        ears.catch_up(speaker);
                        match self.speak(&result.spoken, &mut ears, speaker, Some(keys)).await? {
                            Spoken::Finished => speaker.enqueue(&earcon_pcm(earcon::done()))?,
                            Spoken::Key(key) => {
                                exchange.interrupted_at_secs = Some(ears.secs());
                                on_event(&LoopEvent::BargeIn);
                                pending_key = Some(key);
                            }
                            Spoken::BargeIn(_) | Spoken::InputEnded => {}
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

    /// Transcribes on a blocking thread. A prefix is decoded with the usual encoder context
    /// (at least 10 s): sized to a second and a half, whisper base heard "Are sir" for
    /// "Arthur".
    async fn transcribe(&self, pcm: Vec<f32>) -> anyhow::Result<String> {
        let transcriber = self.transcriber.clone();
        tokio::task::spawn_blocking(move || transcriber.transcribe(&pcm))
            .await
            .context("transcription task")?
            .context("transcribing")
    }

    async fn speak(
        &self,
        text: &str,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        keys: Option<&mut mpsc::Receiver<PttKey>>,
    ) -> anyhow::Result<Spoken> {
        self.speak_noting(text, ears, speaker, keys, None).await
    }

    /// Speaks `text`: sentences are synthesised on a blocking thread and queued as each
    /// is ready, so the first plays while the rest is made. Input frames keep flowing:
    /// the user's speech (hands-free) or a key (push-to-talk) stops playback and
    /// synthesis. `first_audio` gets the moment the first piece was handed to the speaker.
    async fn speak_noting(
        &self,
        text: &str,
        ears: &mut Ears<'_>,
        speaker: &mut dyn Speaker,
        mut keys: Option<&mut mpsc::Receiver<PttKey>>,
        first_audio: Option<&std::sync::Mutex<Option<Instant>>>,
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
        let note = |speaker: &mut dyn Speaker, pcm: &Pcm| -> anyhow::Result<()> {
            speaker.enqueue(pcm)?;
            if let Some(first) = first_audio {
                first.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(Instant::now);
            }
            Ok(())
        };
        // The background measured before the answer is the one the user must stand out from.
        ears.vad.freeze_background(true);
        let mut checked_prefix = false;
        let mut synth_done = false;
        let outcome = loop {
            if synth_done && !speaker.is_playing() {
                break Spoken::Finished;
            }
            if !speaker.is_playing() {
                // Nothing to play yet: wait for the next sentence (audio time stands still).
                match rx.recv().await {
                    Some(Ok(pcm)) => note(speaker, &pcm)?,
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
                    Some(Ok(pcm)) => note(speaker, &pcm)?,
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
                    let Some(mut frame) = frame else {
                        break Spoken::InputEnded;
                    };
                    ears.hear(&mut frame, speaker);
                    if keys.is_some() || !self.barge_in {
                        continue;
                    }
                    match ears.vad.push(&frame) {
                        Some(VadEvent::SpeechStarted { foreground })
                            if !self.tuning.user_only || (foreground && ears.above_echo()) =>
                        {
                            tracing::info!(
                                at_secs = ears.secs(),
                                foreground,
                                level_db = ears.vad.level_db(),
                                echo_db = ears.residual.expected_db(),
                                "barge-in: playback stopped"
                            );
                            speaker.stop();
                            break Spoken::BargeIn(None);
                        }
                        Some(VadEvent::SpeechStarted { .. }) => checked_prefix = false,
                        Some(VadEvent::Utterance(u)) if self.tuning.user_only => {
                            // Background-level speech: only the wake word or a stop word cuts.
                            let seen = std::mem::take(&mut checked_prefix);
                            if !seen {
                                if let Some(cut) = self.cuts_the_answer(&u.samples).await? {
                                    tracing::info!(at_secs = ears.secs(), transcript = %cut, "barge-in by word: playback stopped");
                                    speaker.stop();
                                    break Spoken::BargeIn(Some(Box::new((u, cut))));
                                }
                            }
                        }
                        _ => {
                            // A long background utterance: look at its start once.
                            let head = ears.vad.current_utterance().filter(|c| c.len() >= SAMPLE_RATE_HZ as usize * 2);
                            if self.tuning.user_only && !checked_prefix && !ears.vad.is_foreground_now() {
                                if let Some(head) = head.map(<[f32]>::to_vec) {
                                    checked_prefix = true;
                                    if let Some(cut) = self.cuts_the_answer(&head).await? {
                                        tracing::info!(at_secs = ears.secs(), transcript = %cut, "barge-in by word: playback stopped");
                                        speaker.stop();
                                        break Spoken::BargeIn(None);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        };
        ears.vad.freeze_background(false);
        ears.report_erle();
        drop(rx);
        let _ = synthesis.await;
        Ok(outcome)
    }

    /// Whether speech heard during an answer cuts it by what it says: it starts with the
    /// wake word, or is a stop word (only its first two seconds are decoded). Returns its
    /// transcript then.
    async fn cuts_the_answer(&self, pcm: &[f32]) -> anyhow::Result<Option<String>> {
        let head = pcm.len().min(SAMPLE_RATE_HZ as usize * 2);
        let transcript = self.transcribe(pcm[..head].to_vec()).await?;
        let wake = wake::strip_wake_word(&transcript, &self.listener.wake_word);
        let text = wake.as_deref().unwrap_or(&transcript);
        let stop = is_stop_word(text) || is_stop_word(text.split(['.', ',', '!']).next().unwrap_or(""));
        Ok((wake.is_some() || stop).then_some(transcript))
    }
}

/// Routing, model and tool times from the turn's trace.
fn fill_turn_stages(stages: &mut Stages, result: &TurnResult) {
    let router_ms = result.trace.router.get("latency_ms").and_then(serde_json::Value::as_u64);
    stages.routing_ms = router_ms;
    stages.model_ms = result.trace.calls.iter().filter_map(|c| c.latency_ms).sum::<u64>() + router_ms.unwrap_or(0);
    stages.tools_ms = result.trace.tools.iter().map(|t| t.elapsed_us as f64 / 1000.0).sum();
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
) -> anyhow::Result<(arthur_audio::capture::Capture, mpsc::Receiver<Vec<f32>>, CaptureClock)> {
    let (tx, rx) = mpsc::channel(2_000);
    let mut warned = false;
    let clock = CaptureClock::default();
    let stamps = clock.clone();
    let mut sent: u64 = 0;
    let capture = arthur_audio::capture::Capture::start(config, move |frame, captured| {
        let len = frame.len() as u64;
        if tx.try_send(frame).is_ok() {
            sent += len;
            stamps.stamp(sent, captured, SAMPLE_RATE_HZ);
        } else {
            // The loop will not see this frame: its indices no longer match capture times.
            stamps.reset();
            if !warned {
                warned = true;
                tracing::warn!("the voice loop is behind: microphone frames dropped");
            }
        }
    })?;
    Ok((capture, rx, clock))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_alone_and_at_the_start() {
        for t in ["Stop.", "stop !", "Arrête.", "Tais-toi !", "Chut.", "Ça suffit.", "Shut up.", "Be quiet!"] {
            assert!(is_stop_word(t), "{t}");
        }
        for t in ["Stop the work session.", "Arrête la session.", "Stopper le chrono", "", "stop stop stop stop"] {
            assert!(!is_stop_word(t), "{t}");
        }
        assert_eq!(strip_leading_stop_words("Stop. Call my mother."), "Call my mother.");
        assert_eq!(strip_leading_stop_words("Chut, arrête : note du pain"), "note du pain");
        assert_eq!(strip_leading_stop_words("Stop the session."), "Stop the session.");
        assert_eq!(strip_leading_stop_words("Stop."), "");
    }

    #[test]
    fn only_a_whole_parse_closes_early() {
        let now = chrono::Utc::now();
        let tz = chrono_tz::Europe::Paris;
        assert!(parses_whole("rappelle-moi d'appeler la banque demain à 9 h", now, tz));
        assert!(parses_whole("note : acheter du pain", now, tz));
        assert!(!parses_whole("rappelle-moi d'appeler", now, tz), "a time would be guessed");
        assert!(!parses_whole("Remind me to call.", now, tz), "whisper's full stop is no proof");
        assert!(reads_as_command("rappelle-moi d'appeler", now, tz));
        assert!(sounds_finished("Remind me to call the bank tomorrow at nine."));
        assert!(!sounds_finished("Remind me to call."), "ends on a verb that wants its object");
        assert!(!sounds_finished("Remind me to call the"));
        assert!(!sounds_finished("Remind me to..."));
        assert!(!sounds_finished("Stop."), "one word");
    }
}
