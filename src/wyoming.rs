//! Arthur on Home Assistant's voice protocol, wired (issue 31): the Wyoming server of
//! `arthur serve` serving the real whisper, Piper voices and turn (`arthur_wyoming`'s traits
//! implemented here), and a hands-free loop on each configured satellite. With satellites,
//! what Arthur says on his own (due reminders, timers) goes where the user last spoke.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use arthur_agents::turn::{IncidentKind, TurnEngine};
use arthur_audio::piper::{PiperOptions, PiperVoice};
use arthur_audio::stt::Transcriber;
use arthur_audio::tts::{Pcm, Synthesizer};
use arthur_wyoming::announce::{Announcer, PlaceId};
use arthur_wyoming::satellite::{SatelliteEnds, SatelliteStatus};
use arthur_wyoming::speaker::Outbox;
use arthur_wyoming::{Answer, Asr, AsrModel, Handler, ServiceError, Services, Tts, Voice};
use serde::Serialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::app::App;
use crate::config::Settings;
use crate::health::HealthBoard;
use crate::listen::{Announcement, LoopEvent, VoiceLoop};
use crate::serve::Shutdown;

/// What `arthur serve` says where the address is set up: the protocol has no authentication.
pub const NO_AUTHENTICATION: &str =
    "sans authentification : qui atteint ce port fait parler Arthur et lui donne des commandes";

/// The speech models, loaded once for the local voice, the server and the satellites.
pub struct Speech {
    pub whisper: PathBuf,
    pub transcriber: Arc<Transcriber>,
    pub synth: Arc<dyn Synthesizer>,
}

/// Loads whisper (with the user's vocabulary) and the configured voice.
pub async fn load_speech(app: &App) -> anyhow::Result<Speech> {
    let whisper = crate::voice::whisper_model(&app.settings).context("aucun modèle whisper")?;
    let transcriber = crate::voice::transcriber(app).await.context("modèle whisper illisible")?;
    let settings = app.settings.clone();
    let synth = tokio::task::spawn_blocking(move || crate::voice::synthesizer(&settings))
        .await
        .context("chargement de la voix interrompu")?
        .context("voix Piper inutilisable")?;
    Ok(Speech { whisper, transcriber, synth })
}

// ---------- the services ----------

/// whisper, in the configured language.
pub struct WhisperAsr {
    pub transcriber: Arc<Transcriber>,
    pub model: String,
    pub language: String,
}

/// "fr-FR", "fr_FR" and "fr" are one language here.
fn primary(language: &str) -> String {
    language.split(['-', '_']).next().unwrap_or_default().to_ascii_lowercase()
}

#[async_trait::async_trait]
impl Asr for WhisperAsr {
    fn describe(&self) -> AsrModel {
        AsrModel {
            name: self.model.clone(),
            description: format!("whisper.cpp {}", self.model),
            languages: vec![self.language.clone()],
        }
    }

    async fn transcribe(&self, pcm: Vec<f32>, language: Option<&str>) -> Result<String, ServiceError> {
        if let Some(asked) = language.filter(|l| primary(l) != primary(&self.language)) {
            return Err(ServiceError::Refused(format!(
                "language {asked:?} asked; this whisper runs in {:?} (ARTHUR_STT_LANG)",
                self.language
            )));
        }
        let transcriber = self.transcriber.clone();
        tokio::task::spawn_blocking(move || transcriber.transcribe(&pcm))
            .await
            .map_err(|e| ServiceError::Failed(format!("transcription task: {e}")))?
            .map_err(|e| ServiceError::Failed(e.to_string()))
    }
}

/// The Piper voices installed in the model directory (the configured one first, loaded);
/// another is loaded the first time it is asked for.
pub struct PiperTts {
    voices: Vec<(Voice, Option<PathBuf>)>,
    loaded: Mutex<std::collections::HashMap<String, Arc<dyn Synthesizer>>>,
    onnxruntime: Option<PathBuf>,
}

/// A Piper voice's name, languages and rate from its `.onnx.json`.
fn piper_voice_info(model: &std::path::Path) -> Option<Voice> {
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.json", model.display())).ok()?).ok()?;
    let name = model.file_stem()?.to_string_lossy().into_owned();
    let language = config["language"]["code"].as_str().or(config["espeak"]["voice"].as_str()).unwrap_or("").to_string();
    Some(Voice {
        description: format!("Piper {name}"),
        name,
        languages: vec![language],
        rate: config["audio"]["sample_rate"].as_u64().and_then(|r| u32::try_from(r).ok()).unwrap_or(22_050),
    })
}

impl PiperTts {
    /// `default`: the voice Arthur speaks with (a Piper voice, or espeak-ng without one).
    pub fn new(settings: &Settings, default: Arc<dyn Synthesizer>) -> Self {
        let lang = if settings.voice.stt_lang.starts_with("en") { "en" } else { "fr" };
        let mut installed: Vec<PathBuf> = settings
            .voice
            .model_dir
            .as_deref()
            .and_then(|dir| std::fs::read_dir(dir).ok())
            .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        installed.retain(|p| p.extension().is_some_and(|e| e == "onnx") && p.with_extension("onnx.json").is_file());
        if let Some(configured) = settings.voice.piper_voice.clone().filter(|p| p.is_file()) {
            installed.push(configured);
        }
        installed.sort();
        installed.dedup();
        let default_info = installed
            .iter()
            .find(|p| p.file_stem().is_some_and(|s| s.to_string_lossy() == default.name()))
            .and_then(|p| piper_voice_info(p))
            .unwrap_or_else(|| Voice {
                name: default.name().to_string(),
                description: default.name().to_string(),
                languages: vec![lang.to_string()],
                rate: 22_050,
            });
        let mut voices = vec![(default_info.clone(), None)];
        for path in installed {
            if let Some(info) = piper_voice_info(&path).filter(|v| v.name != default_info.name) {
                voices.push((info, Some(path)));
            }
        }
        let loaded = Mutex::new([(default_info.name, default)].into_iter().collect());
        Self { voices, loaded, onnxruntime: settings.voice.onnxruntime.clone() }
    }

    async fn voice(&self, name: Option<&str>) -> Result<Arc<dyn Synthesizer>, ServiceError> {
        let (info, path) = match name {
            None => &self.voices[0],
            Some(name) => self
                .voices
                .iter()
                .find(|(v, _)| v.name == name)
                .ok_or_else(|| ServiceError::Refused(format!("no voice named {name:?} here")))?,
        };
        if let Some(voice) = self.loaded.lock().unwrap_or_else(|p| p.into_inner()).get(&info.name) {
            return Ok(voice.clone());
        }
        let path = path.clone().ok_or_else(|| ServiceError::Failed("voice not loaded".into()))?;
        let options = PiperOptions { onnxruntime: self.onnxruntime.clone(), ..PiperOptions::default() };
        let voice = tokio::task::spawn_blocking(move || PiperVoice::load(&path, &options))
            .await
            .map_err(|e| ServiceError::Failed(format!("loading task: {e}")))?
            .map_err(|e| ServiceError::Failed(e.to_string()))?;
        let voice: Arc<dyn Synthesizer> = Arc::new(voice);
        self.loaded.lock().unwrap_or_else(|p| p.into_inner()).insert(info.name.clone(), voice.clone());
        Ok(voice)
    }
}

#[async_trait::async_trait]
impl Tts for PiperTts {
    fn voices(&self) -> Vec<Voice> {
        self.voices.iter().map(|(v, _)| v.clone()).collect()
    }

    async fn synthesize(&self, sentence: &str, voice: Option<&str>) -> Result<Pcm, ServiceError> {
        let synth = self.voice(voice).await?;
        let sentence = sentence.to_string();
        tokio::task::spawn_blocking(move || synth.synthesize(&sentence))
            .await
            .map_err(|e| ServiceError::Failed(format!("synthesis task: {e}")))?
            .map_err(|e| ServiceError::Failed(e.to_string()))
    }
}

/// Arthur's turn. Its answer is the turn's spoken report, composed by code; a turn that
/// ended in a refusal or a failure (effect unknown) is `not-handled`, as `arthur ask`'s
/// `incident` says `refus` or `panne`.
pub struct TurnHandler {
    pub engine: Arc<TurnEngine>,
}

#[async_trait::async_trait]
impl Handler for TurnHandler {
    fn languages(&self) -> Vec<String> {
        vec!["fr".to_string()]
    }

    async fn handle(&self, text: &str, conversation: Option<&str>) -> Result<Answer, ServiceError> {
        if text.trim().is_empty() {
            return Err(ServiceError::Refused("empty transcript".into()));
        }
        let result = self
            .engine
            .run(conversation, text, None)
            .await
            .map_err(|e| ServiceError::Failed(format!("the turn failed: {e}")))?;
        let handled =
            !matches!(result.incident.as_ref().map(|i| i.kind), Some(IncidentKind::Refus | IncidentKind::Panne));
        Ok(Answer { text: result.spoken, handled, conversation: result.conversation_id })
    }
}

// ---------- where Arthur speaks on his own ----------

/// The places Arthur speaks (the local loudspeaker, each satellite) and where the user last
/// spoke: due reminders and timers are said there.
pub type Places = Announcer<Announcement>;

/// Routes the notifier's and the bell's announcements until `stop`.
pub fn route_announcements(places: Arc<Places>, rx: mpsc::Receiver<Announcement>, stop: &Shutdown) -> JoinHandle<()> {
    tokio::spawn(arthur_wyoming::announce::run(places, rx, stop.token()))
}

/// The local voice loop's place: its announcement queue, and the call to make when the user
/// spoke there.
pub fn local_place(places: &Arc<Places>) -> (mpsc::Receiver<Announcement>, impl Fn() + Send + 'static) {
    let (tx, rx) = mpsc::channel(16);
    let id = places.add("haut-parleur local", tx, true, || true);
    let places = places.clone();
    (rx, move || places.spoke(id))
}

// ---------- health ----------

/// The Wyoming part of `/healthz`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WyomingHealth {
    /// Where the server listens; `None`: off.
    pub server: Option<String>,
    pub satellites: Vec<SatelliteHealth>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SatelliteHealth {
    pub address: String,
    pub name: Option<String>,
    /// `connecting`, `connected`, or `waiting` (gone; retried at `retry_at`).
    pub state: &'static str,
    pub since: chrono::DateTime<chrono::Utc>,
    pub last_error: Option<String>,
    pub connections: u64,
    pub retry_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl From<&SatelliteStatus> for SatelliteHealth {
    fn from(s: &SatelliteStatus) -> Self {
        Self {
            address: s.address.clone(),
            name: s.name.clone(),
            state: s.state.as_str(),
            since: s.since.into(),
            last_error: s.last_error.clone(),
            connections: s.connections,
            retry_at: s.retry_at.map(Into::into),
        }
    }
}

/// `arthur doctor`'s lines: the server's address (and that it has no authentication), and
/// whether each satellite answers `describe` now.
pub async fn doctor(settings: &Settings) -> Vec<(bool, String)> {
    let w = &settings.wyoming;
    let mut out = Vec::new();
    match &w.addr {
        // Optional, as Atlas: not set up is no fault.
        None => out.push((
            true,
            "Wyoming (Home Assistant) : non configuré (facultatif ; ARTHUR_WYOMING_ADDR pour le servir, voir le README)"
                .to_string(),
        )),
        Some(addr) if arthur_wyoming::addr::is_loopback(addr) => out.push((
            true,
            format!("Wyoming (Home Assistant) : serveur sur {addr}, cette machine seulement ({NO_AUTHENTICATION})"),
        )),
        Some(addr) => out.push((
            false,
            format!(
                "Wyoming (Home Assistant) : serveur sur {addr}, ouvert au réseau — {NO_AUTHENTICATION}. \
                 Laisse entrer seulement Home Assistant (pare-feu), ou mets un port seul pour rester sur cette machine"
            ),
        )),
    }
    for address in &w.satellites {
        out.push(match arthur_wyoming::satellite::probe(address, Duration::from_secs(3)).await {
            Ok(name) => (
                true,
                format!("satellite {address}{} : joignable", name.map(|n| format!(" ({n})")).unwrap_or_default()),
            ),
            Err(e) => (
                false,
                format!(
                    "satellite {address} : injoignable ({e}). Vérifie que wyoming-satellite tourne à cette adresse \
                     et qu'aucun Home Assistant n'y est branché ; arthur serve réessaie de lui-même"
                ),
            ),
        });
    }
    out
}

// ---------- starting it all ----------

/// The running Wyoming parts of `arthur serve`.
#[derive(Default)]
pub struct Running {
    pub tasks: Vec<JoinHandle<()>>,
    /// Satellites whose loops run: announcements have somewhere to go.
    pub satellites: usize,
}

/// Starts the server (when `ARTHUR_WYOMING_ADDR` is set) and a loop per satellite (when the
/// speech models are there). Says on stderr what runs, and where the address is set, that
/// the protocol has no authentication.
pub async fn start(
    app: &App,
    speech: Option<&Speech>,
    health: Arc<HealthBoard>,
    places: Arc<Places>,
    stop: &Shutdown,
) -> anyhow::Result<Running> {
    let mut running = Running::default();
    let settings = &app.settings;
    if let Some(addr) = &settings.wyoming.addr {
        let listener = arthur_wyoming::server::bind(addr).await.with_context(|| {
            format!("impossible d'écouter sur {addr} (port pris, ou adresse d'une autre machine ?)")
        })?;
        let bound = listener.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| addr.clone());
        let services = Services {
            asr: speech.map(|s| -> Arc<dyn Asr> {
                Arc::new(WhisperAsr {
                    transcriber: s.transcriber.clone(),
                    model: s.whisper.file_stem().map(|m| m.to_string_lossy().into_owned()).unwrap_or_default(),
                    language: settings.voice.stt_lang.clone(),
                })
            }),
            tts: speech.map(|s| -> Arc<dyn Tts> { Arc::new(PiperTts::new(settings, s.synth.clone())) }),
            handler: Some(Arc::new(TurnHandler { engine: app.engine.clone() })),
        };
        let served = match (services.asr.is_some(), services.tts.is_some()) {
            (true, true) => "reconnaissance vocale, voix et commandes",
            _ => "les commandes écrites seulement (pas de modèles de parole : models/fetch)",
        };
        let exposure =
            if arthur_wyoming::addr::is_loopback(&bound) { "cette machine seulement" } else { "ouvert au réseau" };
        eprintln!("Wyoming : serveur sur {bound} ({served} ; {exposure}, {NO_AUTHENTICATION}).");
        health.update(|h| h.wyoming.server = Some(bound));
        running.tasks.push(tokio::spawn(arthur_wyoming::server::run(
            arthur_wyoming::server::ServerDeps { listener, services },
            stop.token(),
        )));
    }
    if settings.wyoming.satellites.is_empty() {
        return Ok(running);
    }
    let Some(speech) = speech else {
        eprintln!("Wyoming : satellites ignorés — pas de modèles de parole (models/fetch).");
        return Ok(running);
    };
    for address in &settings.wyoming.satellites {
        running.tasks.extend(satellite(app, speech, address, health.clone(), places.clone(), stop));
        running.satellites += 1;
    }
    eprintln!("Wyoming : {} satellite(s) : {}.", running.satellites, settings.wyoming.satellites.join(", "));
    Ok(running)
}

/// One satellite: its link, its state copied to the health board, its hands-free loop.
fn satellite(
    app: &App,
    speech: &Speech,
    address: &str,
    health: Arc<HealthBoard>,
    places: Arc<Places>,
    stop: &Shutdown,
) -> Vec<JoinHandle<()>> {
    let (ends, deps) = arthur_wyoming::satellite::pair(address);
    let mut tasks = vec![tokio::spawn(arthur_wyoming::satellite::run(deps, stop.token()))];

    let mut status = ends.link.status();
    let token = stop.token();
    tasks.push(tokio::spawn(async move {
        loop {
            let s = SatelliteHealth::from(&*status.borrow_and_update());
            health.update(|h| match h.wyoming.satellites.iter_mut().find(|x| x.address == s.address) {
                Some(x) => *x = s,
                None => h.wyoming.satellites.push(s),
            });
            tokio::select! {
                changed = status.changed() => if changed.is_err() { return },
                () = token.cancelled() => return,
            }
        }
    }));

    let (tx, mut announcements) = mpsc::channel(16);
    let alive = ends.link.clone();
    let place: PlaceId = places.add(address, tx, false, move || alive.is_connected());
    let engine = app.engine.clone();
    let transcriber = speech.transcriber.clone();
    let synth = speech.synth.clone();
    let barge_in = app.settings.voice.barge_in;
    let tuning = crate::listen::Tuning::for_voice(&app.settings.voice);
    let journal = app.store.clone();
    let stop = stop.clone();
    let address = address.to_string();
    tasks.push(tokio::spawn(async move {
        let SatelliteEnds { mut frames, mut speaker, woken, link } = ends;
        let listener = arthur_audio::wake::ListenerConfig::default();
        let voice_loop = VoiceLoop::new(engine.as_ref(), transcriber, synth, listener, barge_in)
            .with_tuning(tuning)
            .with_journal(journal)
            .with_wake_signal(woken);
        let on_event = |event: &LoopEvent| {
            match event {
                LoopEvent::Heard(command) => {
                    link.heard(command);
                    places.spoke(place);
                }
                // The satellite's `synthesize` is told what is being said (its display,
                // its synthesize command): the answer's written form, the same facts.
                LoopEvent::Answer(text) | LoopEvent::Announcement(text) => {
                    link.send(arthur_wyoming::event::Event::with_data("synthesize", json!({"text": text})))
                }
                LoopEvent::Ignored(_) | LoopEvent::Stopped(_) => link.not_a_command(),
                _ => {}
            }
            tracing::info!(satellite = %address, ?event, "voice");
        };
        match voice_loop
            .hands_free_announcing(&mut frames, &mut speaker, Some(&mut announcements), stop.wait(), on_event)
            .await
        {
            Ok(exchanges) => tracing::info!(exchanges = exchanges.len(), "satellite voice loop stopped"),
            Err(e) => tracing::error!(error = %format!("{e:#}"), "satellite voice loop failed"),
        }
    }));
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_match_on_their_primary_subtag() {
        assert_eq!(primary("fr-FR"), "fr");
        assert_eq!(primary("en_US"), "en");
        assert_eq!(primary("FR"), "fr");
    }
}
