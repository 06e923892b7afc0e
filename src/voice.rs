//! The voice commands: `arthur transcribe FILE.wav` (whisper on the whole file), `arthur
//! say TEXT -o FILE.wav` (sentence by sentence), and `arthur listen` — choosing the
//! microphone or a recording, the loudspeaker or a WAV file, the Piper voice or espeak-ng.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use arthur_audio::piper::{PiperOptions, PiperVoice};
use arthur_audio::playback::{DeviceSpeaker, Speaker, WavSpeaker};
use arthur_audio::stt::{SttOptions, Transcriber};
use arthur_audio::tts::{self, EspeakNg, Synthesizer};
use arthur_audio::wav::{WavSource, FRAME_SAMPLES};
use tokio::sync::mpsc;

use arthur_audio::detect::SileroDetector;
use arthur_audio::smart_turn::SmartTurn;
use arthur_voice::listen::{DetectorChoice, Exchange, LoopEvent, PttKey, Tuning, TurnEnd, VoiceLoop};
use tokio_util::sync::CancellationToken;

use crate::config::{Settings, VadSetting, Voice};

/// The configured detector (`ARTHUR_VAD`): earshot or energy when asked; else Silero when
/// `models/fetch` installed it and ONNX Runtime is there, else earshot.
pub fn detector(voice: &Voice) -> DetectorChoice {
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

/// How the end of a turn is decided: by meaning (Smart Turn and the grammar) when
/// `models/fetch` installed Smart Turn and ONNX Runtime is there, else by silences as
/// before (`doctor --voix` says which).
pub fn turn_end(voice: &Voice) -> TurnEnd {
    let model = voice.model_dir.as_deref().and_then(SmartTurn::model_in);
    match (model, voice.onnxruntime.clone().filter(|p| p.is_file())) {
        (Some(model), Some(onnxruntime)) => TurnEnd::Meaning { model, onnxruntime },
        _ => TurnEnd::Silences,
    }
}

/// A real room with the configured detector, the end of a turn judged by meaning when the
/// model is there.
pub fn tuning(voice: &Voice) -> Tuning {
    Tuning::room(detector(voice)).judging_turns(turn_end(voice))
}

/// A real room with the detector this process's configuration gives (file and environment;
/// the built-in defaults if they do not load): what tests and benches use.
pub fn configured_tuning() -> Tuning {
    match Settings::load() {
        Ok(settings) => tuning(&settings.voice),
        Err(_) => Tuning::room(DetectorChoice::Earshot),
    }
}

/// The whisper model: `ARTHUR_WHISPER_MODEL`, else the one `models/fetch` installed.
pub fn whisper_model(settings: &Settings) -> anyhow::Result<PathBuf> {
    if let Some(path) = &settings.voice.whisper_model {
        if !path.is_file() {
            bail!("ARTHUR_WHISPER_MODEL points to {}, which is not a file", path.display());
        }
        return Ok(path.clone());
    }
    settings
        .voice
        .model_dir
        .as_deref()
        .and_then(arthur_audio::stt::default_model_path)
        .context("no whisper model found: run models/fetch (or set ARTHUR_WHISPER_MODEL)")
}

/// The user's vocabulary, given to whisper as its initial prompt: the wake word and the
/// project names, which it would otherwise misspell.
pub async fn vocabulary(app: &crate::app::App) -> String {
    let projects = app
        .ctx
        .store
        .list_projets()
        .await
        .map(|p| p.into_iter().map(|p| p.nom).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut words = vec!["Arthur".to_string()];
    words.extend(projects);
    words.join(", ")
}

pub fn transcribe(settings: &Settings, wav: &Path, threads: Option<u32>) -> anyhow::Result<String> {
    let model = whisper_model(settings)?;
    let pcm = arthur_audio::wav::read_wav_16k_mono(wav).with_context(|| format!("reading {}", wav.display()))?;
    let options = SttOptions {
        language: settings.voice.stt_lang.clone(),
        threads: threads.unwrap_or(2),
        adaptive_audio_ctx: true,
        ..SttOptions::default()
    };
    let transcriber = Transcriber::load(&model, options).with_context(|| format!("loading {}", model.display()))?;
    transcriber.transcribe(&pcm).context("transcribing")
}

/// The voice Arthur speaks with: the Piper voice configured (`ARTHUR_PIPER_VOICE`), else
/// an installed Piper voice of the conversation's language, else espeak-ng. A configured
/// voice that does not load is an error; an installed one falls back with a warning.
pub fn synthesizer(settings: &Settings) -> anyhow::Result<Arc<dyn Synthesizer>> {
    let lang = if settings.voice.stt_lang.starts_with("en") { "en" } else { "fr" };
    let options = PiperOptions { onnxruntime: settings.voice.onnxruntime.clone(), ..PiperOptions::default() };
    if let Some(path) = &settings.voice.piper_voice {
        let voice =
            PiperVoice::load(path, &options).with_context(|| format!("ARTHUR_PIPER_VOICE={}", path.display()))?;
        return Ok(Arc::new(voice));
    }
    if let Some(path) =
        settings.voice.model_dir.as_deref().and_then(|dir| arthur_audio::piper::default_voice_path(dir, lang))
    {
        match PiperVoice::load(&path, &options) {
            Ok(voice) => return Ok(Arc::new(voice)),
            Err(e) => {
                tracing::warn!(voice = %path.display(), error = %e, "Piper voice unusable: speaking with espeak-ng")
            }
        }
    }
    Ok(Arc::new(EspeakNg::new(lang)))
}

pub fn say(settings: &Settings, text: &str, out: &Path) -> anyhow::Result<f32> {
    let synth = synthesizer(settings)?;
    let pcm = tts::speak(synth.as_ref(), text, |_| {}).context("synthesising speech")?;
    if pcm.samples.is_empty() {
        bail!("nothing to say");
    }
    arthur_audio::wav::write_wav(out, &pcm.samples, pcm.rate).with_context(|| format!("writing {}", out.display()))?;
    Ok(pcm.duration_secs())
}

/// Where the voice's audio comes from and goes to (`arthur listen`, `arthur serve`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AudioIo {
    /// Écoute un enregistrement au lieu du micro (joué en temps réel ; `arthur
    /// listen` le joue à son propre rythme avec --output et sans --ptt).
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Écrit ce qu'Arthur dit dans ce fichier WAV au lieu du haut-parleur.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Micro : un identifiant d'entrée (`pulseaudio:…`, `alsa:…`) ou une partie de son nom
    /// (ARTHUR_AUDIO_INPUT par défaut, sinon l'entrée par défaut).
    #[arg(long)]
    pub device: Option<String>,
}

/// The microphone (when live), its frames, and when each was captured (when live).
pub type Ears =
    (Option<arthur_audio::capture::Capture>, mpsc::Receiver<Vec<f32>>, Option<arthur_audio::clock::CaptureClock>);

impl AudioIo {
    /// The frames: the microphone, or the recording played like one (then `tail` of
    /// silence). The capture stops when the returned `Capture` is dropped.
    pub fn open_ears(&self, settings: &Settings, tail: std::time::Duration) -> anyhow::Result<Ears> {
        match &self.input {
            Some(input) => {
                let source = WavSource::open(input, FRAME_SAMPLES)
                    .with_context(|| format!("fichier audio illisible : {}", input.display()))?;
                Ok((None, arthur_voice::listen::replay(source, Some(tail)), None))
            }
            None => {
                let config = arthur_audio::capture::CaptureConfig {
                    device: self.device.clone().or_else(|| settings.voice.input_device.clone()),
                };
                let (capture, frames, clock) =
                    arthur_voice::listen::capture_frames(&config).context("aucun micro utilisable")?;
                Ok((Some(capture), frames, Some(clock)))
            }
        }
    }

    /// Where Arthur speaks: the WAV file of `--output`, else the default loudspeaker.
    pub fn open_mouth(&self) -> anyhow::Result<Mouth> {
        Ok(match &self.output {
            Some(path) => Mouth::Wav(WavSpeaker::new(), path.clone()),
            None => Mouth::Device(
                DeviceSpeaker::open_default()
                    .context("aucun haut-parleur utilisable (--output FICHIER.wav écrit les réponses à la place)")?,
            ),
        })
    }
}

/// Where the voice goes.
pub enum Mouth {
    /// Played in audio time, written to the file by [`Mouth::finish`].
    Wav(WavSpeaker, PathBuf),
    Device(DeviceSpeaker),
}

impl Mouth {
    pub fn speaker(&mut self) -> &mut dyn Speaker {
        match self {
            Mouth::Wav(s, _) => s,
            Mouth::Device(s) => s,
        }
    }

    /// Writes what was said to the `--output` file, if that is where the voice went.
    pub fn finish(&self) -> anyhow::Result<()> {
        if let Mouth::Wav(speaker, path) = self {
            speaker.write(path).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(())
    }
}

/// `arthur listen` as typed.
#[derive(Debug, Clone)]
pub struct ListenArgs {
    pub ptt: bool,
    pub io: AudioIo,
    pub wake_word: String,
    pub follow_up: u64,
}

/// The loaded recogniser for the conversation: the user's vocabulary as initial prompt,
/// the encoder sized to each utterance.
pub async fn transcriber(app: &crate::app::App) -> anyhow::Result<Arc<Transcriber>> {
    let model = whisper_model(&app.settings)?;
    let options = SttOptions {
        language: app.settings.voice.stt_lang.clone(),
        initial_prompt: Some(vocabulary(app).await),
        adaptive_audio_ctx: true,
        beam_size: Some(app.settings.voice.stt_beam).filter(|w| *w > 1),
        ..Default::default()
    };
    let transcriber = tokio::task::spawn_blocking(move || {
        Transcriber::load(&model, options).with_context(|| format!("loading {}", model.display()))
    })
    .await
    .context("loading task")??;
    Ok(Arc::new(transcriber))
}

pub async fn listen(app: &crate::app::App, args: ListenArgs, shutdown: CancellationToken) -> anyhow::Result<()> {
    let settings = &app.settings;
    let transcriber = transcriber(app).await?;
    let synth = {
        let settings = settings.clone();
        tokio::task::spawn_blocking(move || synthesizer(&settings)).await.context("loading the voice")??
    };
    tracing::info!(voice = synth.name(), "voice ready");
    let listener = arthur_audio::wake::ListenerConfig {
        wake_word: args.wake_word.clone(),
        follow_up: std::time::Duration::from_secs(args.follow_up),
        ..Default::default()
    };
    let voice_loop = VoiceLoop::new(app.engine.as_ref(), transcriber, synth, listener, settings.voice.barge_in)
        .with_tuning(tuning(&settings.voice))
        .with_journal(app.store.clone());
    tracing::info!(detector = ?voice_loop.tuning.detector, "speech detector");

    // A recording with a WAV output and no push-to-talk: replayed in audio time.
    if let (Some(input), Some(output), false) = (&args.io.input, &args.io.output, args.ptt) {
        for e in voice_loop.run_wav(input, Some(output)).await? {
            match (&e.command, &e.written) {
                (Some(c), Some(w)) => {
                    println!("[{} s] toi › {c}\narthur › {w}", arthur_agents::fr::decimal(e.at_secs, 1))
                }
                _ => println!(
                    "[{} s] (ignoré, sans mot d'éveil) {}",
                    arthur_agents::fr::decimal(e.at_secs, 1),
                    e.transcript
                ),
            }
            if let Some(at) = e.interrupted_at_secs {
                println!("[{} s] (réponse interrompue)", arthur_agents::fr::decimal(at, 1));
            }
        }
        return Ok(());
    }

    // Otherwise in real time: the microphone, or the recording played like one.
    let (capture, mut frames, clock) = args.io.open_ears(settings, std::time::Duration::from_secs(2))?;
    let voice_loop = voice_loop.with_capture_clock(clock);
    if let Some(capture) = &capture {
        eprintln!("Micro : {}", capture.info().device);
    }
    let mut mouth = args.io.open_mouth()?;
    let speaker = mouth.speaker();

    let exchanges = if args.ptt {
        push_to_talk_in_terminal(&voice_loop, &mut frames, speaker, shutdown).await?
    } else {
        voice_loop.hands_free(&mut frames, speaker, shutdown, |event| print_event(event, "\n")).await?
    };
    tracing::info!(exchanges = exchanges.len(), "voice conversation ended");
    mouth.finish()
}

fn print_event(event: &LoopEvent, newline: &str) {
    let line = match event {
        LoopEvent::Ready => "Prêt.".to_string(),
        LoopEvent::Recording => "● J'écoute… (Espace pour terminer)".to_string(),
        LoopEvent::Transcribing => return,
        LoopEvent::Ignored(t) => format!("(ignoré, sans mot d'éveil) {t}"),
        LoopEvent::Heard(t) => format!("toi › {t}"),
        LoopEvent::Answer(t) => format!("arthur › {}", t.replace('\n', &format!("{newline}         "))),
        LoopEvent::BargeIn => "(réponse interrompue)".to_string(),
        LoopEvent::Stopped(t) => format!("(« {} » : je me tais, rien d'autre n'est fait)", t.trim()),
        LoopEvent::NothingHeard => "(rien entendu)".to_string(),
        LoopEvent::Announcement(t) => format!("arthur (rappel) › {t}"),
    };
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "{line}{newline}");
    let _ = out.flush();
}

/// Restores the terminal when push-to-talk ends, however it ends.
struct RawMode;

impl RawMode {
    fn enable() -> anyhow::Result<Self> {
        crossterm::terminal::enable_raw_mode().context("push-to-talk needs a terminal (raw mode unavailable)")?;
        Ok(Self)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

async fn push_to_talk_in_terminal(
    voice_loop: &VoiceLoop<'_>,
    frames: &mut mpsc::Receiver<Vec<f32>>,
    speaker: &mut dyn Speaker,
    shutdown: CancellationToken,
) -> anyhow::Result<Vec<Exchange>> {
    use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, KeyModifiers};
    use futures_util::StreamExt;

    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        bail!("push-to-talk needs a terminal: run it in one, or use hands-free mode without --ptt");
    }
    let _raw = RawMode::enable()?;
    print!("Arthur, appui pour parler : [Espace] parler / terminer · [Échap] quitter\r\n");
    let (key_tx, mut keys) = mpsc::channel(16);
    let reader = tokio::spawn(async move {
        let mut events = EventStream::new();
        while let Some(Ok(event)) = events.next().await {
            let Event::Key(key) = event else { continue };
            if key.kind == KeyEventKind::Release {
                continue;
            }
            let mapped = match key.code {
                KeyCode::Char(' ') | KeyCode::Enter => Some(PttKey::Toggle),
                KeyCode::Esc | KeyCode::Char('q') => Some(PttKey::Quit),
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => Some(PttKey::Quit),
                _ => None,
            };
            if let Some(k) = mapped {
                if key_tx.send(k).await.is_err() || k == PttKey::Quit {
                    break;
                }
            }
        }
    });
    let result =
        voice_loop.push_to_talk(frames, &mut keys, speaker, shutdown, |event| print_event(event, "\r\n")).await;
    reader.abort();
    print!("Au revoir.\r\n");
    Ok(result?)
}

/// `arthur doctor --voix` as typed.
#[derive(Debug, Clone, Default)]
pub struct SelfTestArgs {
    /// The ten sentences read one after the other, recorded (instead of the microphone).
    pub input: Option<PathBuf>,
    pub device: Option<String>,
}

/// `arthur doctor --voix`: the configured model and language on the microphone or a
/// recording (`arthur_voice::selftest`).
pub async fn selftest(app: &crate::app::App, args: &SelfTestArgs) -> anyhow::Result<arthur_voice::selftest::Report> {
    let settings = &app.settings;
    let language = settings.voice.stt_lang.clone();
    let model_path = whisper_model(settings)?;
    let model = model_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    println!("Est-ce que je te comprends ? (modèle {model}, langue {language})");
    let (ok, turn_end) = turn_end_line(settings);
    println!("  [{}] {turn_end}", if ok { "ok" } else { "--" });
    let transcriber = transcriber(app).await?;
    let (_capture, frames) = match &args.input {
        Some(path) => {
            let source = WavSource::open(path, FRAME_SAMPLES).with_context(|| format!("reading {}", path.display()))?;
            (None, arthur_voice::listen::replay(source, None))
        }
        None => {
            let config = arthur_audio::capture::CaptureConfig {
                device: args.device.clone().or_else(|| settings.voice.input_device.clone()),
            };
            let (capture, frames, _) =
                arthur_voice::listen::capture_frames(&config).context("aucun micro utilisable")?;
            println!("Micro : {}. Lisez chaque phrase à voix haute quand elle s'affiche.", capture.info().device);
            (Some(capture), frames)
        }
    };
    let test = arthur_voice::selftest::SelfTest {
        language,
        model,
        transcriber,
        tuning: tuning(&settings.voice),
        now: app.ctx.now(),
    };
    Ok(arthur_voice::selftest::run(test, frames).await?)
}

/// How the voice loop decides that the user has finished speaking, in one line for
/// `arthur doctor` and `doctor --voix`: by meaning when Smart Turn is installed, else by
/// silences (and what to run to change it).
pub fn turn_end_line(settings: &Settings) -> (bool, String) {
    match turn_end(&settings.voice) {
        arthur_voice::listen::TurnEnd::Meaning { .. } => (
            true,
            "fin de phrase : au sens (Smart Turn v3.2 écoute le ton, la grammaire lit les mots) — je réponds dès que tu as fini".into(),
        ),
        arthur_voice::listen::TurnEnd::Silences => (
            false,
            "fin de phrase : aux silences (Smart Turn absent — lance models/fetch) ; j'attends 0,4 à 0,6 s de silence avant de répondre".into(),
        ),
    }
}
