//! Arthur on Home Assistant's voice protocol, wired (issue 31): the Wyoming server of
//! `arthur serve` serving the real whisper, Piper voices and turn (`arthur_wyoming`'s traits
//! implemented here), and a hands-free loop on each configured satellite. With satellites,
//! what Arthur says on his own (due reminders, timers) goes where the user last spoke.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use arthur_audio::stt::Transcriber;
use arthur_audio::tts::Synthesizer;
use arthur_voice::listen::{Announcement, LoopEvent, VoiceLoop};
pub use arthur_voice::wyoming::{InstalledVoices, PiperTts, TurnHandler, WhisperAsr};
use arthur_web::board::SatelliteHealth;
use arthur_wyoming::announce::{Announcer, PlaceId};
use arthur_wyoming::satellite::{SatelliteEnds, SatelliteStatus};
use arthur_wyoming::speaker::Outbox;
use arthur_wyoming::{Asr, Services, Tts};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::config::Settings;
use crate::health::HealthBoard;

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

// ---------- where Arthur speaks on his own ----------

/// The places Arthur speaks (the local loudspeaker, each satellite) and where the user last
/// spoke: due reminders and timers are said there.
pub type Places = Announcer<Announcement>;

/// Routes the notifier's and the bell's announcements until `stop`.
pub fn route_announcements(
    places: Arc<Places>,
    rx: mpsc::Receiver<Announcement>,
    stop: &CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(arthur_wyoming::announce::run(places, rx, stop.clone()))
}

/// The local voice loop's place: its announcement queue, and the call to make when the user
/// spoke there.
pub fn local_place(places: &Arc<Places>) -> (mpsc::Receiver<Announcement>, impl Fn() + Send + 'static) {
    let (tx, rx) = mpsc::channel(16);
    let id = places.add("haut-parleur local", tx, true, || true);
    let places = places.clone();
    (rx, move || places.spoke(id))
}

/// Where the configured voices are.
pub fn installed_voices(settings: &Settings) -> InstalledVoices {
    InstalledVoices {
        stt_lang: settings.voice.stt_lang.clone(),
        model_dir: settings.voice.model_dir.clone(),
        piper_voice: settings.voice.piper_voice.clone(),
        onnxruntime: settings.voice.onnxruntime.clone(),
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
    stop: &CancellationToken,
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
                    favour: arthur_voice::listen::EarsPolicy::MEASURED.favour.map(|b| (app.engine.clone(), b)),
                })
            }),
            tts: speech
                .map(|s| -> Arc<dyn Tts> { Arc::new(PiperTts::new(&installed_voices(settings), s.synth.clone())) }),
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
            stop.clone(),
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

/// A satellite's status as the board shows it (the board's crate knows no satellite).
fn satellite_health(s: &SatelliteStatus) -> SatelliteHealth {
    SatelliteHealth {
        address: s.address.clone(),
        name: s.name.clone(),
        state: s.state.as_str(),
        since: s.since.into(),
        last_error: s.last_error.clone(),
        connections: s.connections,
        retry_at: s.retry_at.map(Into::into),
    }
}

/// One satellite: its link, its state copied to the health board, its hands-free loop.
fn satellite(
    app: &App,
    speech: &Speech,
    address: &str,
    health: Arc<HealthBoard>,
    places: Arc<Places>,
    stop: &CancellationToken,
) -> Vec<JoinHandle<()>> {
    let (ends, deps) = arthur_wyoming::satellite::pair(address);
    let mut tasks = vec![tokio::spawn(arthur_wyoming::satellite::run(deps, stop.clone()))];

    let mut status = ends.link.status();
    let token = stop.clone();
    tasks.push(tokio::spawn(async move {
        loop {
            let s = satellite_health(&status.borrow_and_update());
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
    let tuning = crate::voice::tuning(&app.settings.voice);
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
            .hands_free_announcing(&mut frames, &mut speaker, Some(&mut announcements), stop, on_event)
            .await
        {
            Ok(exchanges) => tracing::info!(exchanges = exchanges.len(), "satellite voice loop stopped"),
            Err(e) => tracing::error!(error = %format!("{e:#}"), "satellite voice loop failed"),
        }
    }));
    tasks
}
