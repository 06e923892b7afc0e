//! `arthur serve`, the appliance: one runtime running the web server, the voice loop (when
//! a microphone and the models are there; otherwise a clear line and the rest runs) and the
//! reminder notifier and the Atlas poller (when ATLAS_IMAP_URL is set). Each component is
//! `run(deps, shutdown)`; SIGTERM or Ctrl-C cancels the one `CancellationToken` they all
//! take: the web finishes its in-flight requests (turns included),
//! the voice loop stops at its next frame (a turn in progress finishes first), the
//! notifier stops between two checks. Every write is a transaction, so nothing is left
//! half-written.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::health::{self, HealthBoard};
use arthur_voice::listen::{LoopEvent, VoiceLoop};

/// `arthur serve` as typed.
#[derive(Debug, Clone)]
pub struct ServeArgs {
    pub io: crate::voice::AudioIo,
    pub no_voice: bool,
    pub reminder_check: Duration,
    /// Period of the Atlas poller (every minute by default).
    pub atlas_poll: Duration,
    /// Period of the Atlas launcher (5 minutes) and its offset after the start (2 minutes).
    pub atlas_launch: Duration,
    pub atlas_launch_offset: Duration,
    /// Period of the Atlas lock watchdog (15 minutes), a task of its own.
    pub atlas_watchdog: Duration,
    /// An Atlas worker only (poller and launcher; no web, voice or reminders): one of several
    /// `arthur serve --atlas-only` sharing one PostgreSQL database.
    pub atlas_only: bool,
}

/// Runs the appliance until `stop` is cancelled.
pub async fn run(app: App, args: ServeArgs, stop: CancellationToken) -> anyhow::Result<()> {
    {
        let stop = stop.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            tracing::info!("stopping: web, voice and notifier");
        });
    }
    let tally = Arc::new(health::Tally::default());
    let health = Arc::new(health::board(tally.clone()));
    if args.atlas_only && app.settings.atlas.imap_url.is_none() {
        anyhow::bail!("--atlas-only needs ATLAS_IMAP_URL: an Atlas worker has nothing else to do");
    }
    if !args.atlas_only {
        let health = health.clone();
        let providers = health::providers(&app.settings);
        tokio::spawn(async move {
            let checked = health::check_providers(providers).await;
            health.update(|s| s.providers = checked);
        });
    }

    let web = if args.atlas_only {
        None
    } else {
        let (listener, state) = crate::web::bind_for(&app, health.clone()).await?;
        Some(tokio::spawn(crate::web::run(listener, state, stop.clone())))
    };

    let (announce_tx, announce_rx) = mpsc::channel(16);
    // Wyoming (issue 31): what Arthur says on his own goes where the user last spoke (the
    // local loudspeaker or a satellite), and the speech models are loaded once for all.
    let places = Arc::new(crate::wyoming::Places::default());
    let router = crate::wyoming::route_announcements(places.clone(), announce_rx, &stop);
    let wyoming_on = app.settings.wyoming.addr.is_some() || !app.settings.wyoming.satellites.is_empty();
    let speech = if args.atlas_only || app.settings.demo || (args.no_voice && !wyoming_on) {
        None
    } else {
        Some(crate::wyoming::load_speech(&app).await)
    };
    let voice = if args.atlas_only {
        None
    } else if args.no_voice || app.settings.demo {
        health.update(|s| s.voice = Some("désactivée (--no-voice ou démonstration)".into()));
        None
    } else {
        let started = match &speech {
            Some(Ok(speech)) => start_voice(&app, &args, speech, health.clone(), &places, stop.clone()).await,
            // The French head stays the head; the causes stay in the chain for the log.
            Some(Err(e)) => Err(anyhow::anyhow!("{}", crate::health::error_chain(e)).context(e.to_string())),
            None => Err(anyhow::anyhow!("pas de modèles de parole")),
        };
        match started {
            Ok(task) => Some(task),
            Err(e) => {
                // The user reads the French head of the error; the English causes go to the log.
                let said = e.to_string();
                eprintln!("Arthur : voix désactivée — {said}. Le web et les rappels fonctionnent.");
                tracing::warn!(reason = %crate::health::error_chain(&e), "voice disabled");
                health.update(|s| s.voice = Some(format!("désactivée : {said}")));
                None
            }
        }
    };
    // Wyoming (issue 31): the server and the satellites, off unless configured.
    let wyoming = if args.atlas_only || app.settings.demo || !wyoming_on {
        crate::wyoming::Running::default()
    } else {
        let speech = speech.as_ref().and_then(|s| s.as_ref().ok());
        match crate::wyoming::start(&app, speech, health.clone(), places.clone(), &stop).await {
            Ok(running) => running,
            Err(e) => {
                eprintln!("Wyoming : désactivé — {e}. Le reste fonctionne.");
                tracing::warn!(reason = %crate::health::error_chain(&e), "wyoming disabled");
                crate::wyoming::Running::default()
            }
        }
    };
    let announce = (voice.is_some() || wyoming.satellites > 0).then_some(announce_tx);

    // Timers ring on the appliance, voice or not (the web page shows them live).
    let bell = (!args.atlas_only && !app.settings.demo).then(|| {
        tokio::spawn(crate::timers::run(
            crate::timers::BellDeps {
                store: app.ctx.store.clone(),
                clock: app.ctx.clock.clone(),
                tz: app.ctx.tz,
                announce: announce.clone(),
                health: tally.clone(),
                check_every: crate::timers::CHECK_EVERY,
                repeat_every: crate::timers::REPEAT_EVERY,
                ring_for: crate::timers::RING_FOR,
            },
            stop.clone(),
        ))
    });

    // Reminders belong to the appliance: an Atlas-only worker does not announce them.
    let notifier = (!args.atlas_only).then(|| {
        tokio::spawn(crate::notifier::run(
            crate::notifier::NotifierDeps {
                store: app.ctx.store.clone(),
                clock: app.ctx.clock.clone(),
                tz: app.ctx.tz,
                period: args.reminder_check,
                announce,
                health: tally.clone(),
                print: true,
            },
            stop.clone(),
        ))
    });

    let atlas = if app.settings.atlas.imap_url.is_none() || app.settings.demo {
        None
    } else {
        match atlas_worker(&app, &args, health.clone()) {
            Ok(deps) => {
                eprintln!("Atlas : relève de {} toutes les {} s.", deps.account.label(), args.atlas_poll.as_secs());
                Some(tokio::spawn(arthur_atlas::worker::run(deps, stop.clone())))
            }
            Err(e) => {
                let reason = format!("{e:#}");
                eprintln!("Atlas : désactivé — {reason}. Le reste fonctionne.");
                health.update(|s| s.atlas_last_error = Some(reason));
                None
            }
        }
    };

    let launcher = if atlas.is_some() && app.settings.atlas.repo.is_some() {
        match crate::atlas_cli::launcher(&app) {
            Ok(mut launcher) => {
                launcher.shutdown = Some(stop.clone());
                let deps = arthur_atlas::worker::LauncherDeps {
                    launcher,
                    offset: args.atlas_launch_offset,
                    period: args.atlas_launch,
                };
                Some(tokio::spawn(arthur_atlas::worker::run_launcher(deps, stop.clone())))
            }
            Err(e) => {
                eprintln!("Atlas : lanceur désactivé — {e:#}.");
                None
            }
        }
    } else {
        None
    };

    // The lock watchdog runs beside the launcher, never inside its cycle (which can last
    // hours): wherever Atlas launches, locks held too long reach the founder.
    let watchdog = if launcher.is_some() {
        match crate::atlas_cli::watchdog(&app) {
            Ok(watchdog) => {
                let deps = arthur_atlas::watchdog::WatchdogDeps { watchdog, period: args.atlas_watchdog };
                Some(tokio::spawn(arthur_atlas::watchdog::run(deps, stop.clone())))
            }
            Err(e) => {
                eprintln!("Atlas : chien de garde des verrous désactivé — {e:#}.");
                None
            }
        }
    } else {
        None
    };

    let mut failed = false;
    match web {
        Some(web) => match web.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "web server failed");
                failed = true;
            }
            Err(e) => {
                tracing::error!(error = %e, "web task panicked");
                failed = true;
            }
        },
        None => {
            eprintln!("Atlas : worker {} prêt (--atlas-only).", arthur_atlas::launch::holder());
            stop.cancelled().await
        }
    }
    if let Some(voice) = voice {
        match voice.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %format!("{e:#}"), "voice loop failed");
                failed = true;
            }
            Err(e) => {
                tracing::error!(error = %e, "voice task panicked");
                failed = true;
            }
        }
    }
    // The notifier and the bell log a failed check and go on: they end when stopped.
    for task in [notifier, bell].into_iter().flatten() {
        let _ = task.await;
    }
    // Wyoming (issue 31): the server, the satellites' links and loops end with the token.
    for task in wyoming.tasks.into_iter().chain([router]) {
        if let Err(e) = task.await {
            tracing::error!(error = %e, "Wyoming task panicked");
            failed = true;
        }
    }
    // Atlas' workers end only when stopped; a panic is a failure of the appliance.
    for (name, task) in [("lock watchdog", watchdog), ("launcher", launcher), ("poller", atlas)] {
        if let Some(Err(e)) = match task {
            Some(t) => Some(t.await),
            None => None,
        } {
            tracing::error!(error = %e, "Atlas {name} task panicked");
            failed = true;
        }
    }
    app.db.close().await;
    if failed {
        anyhow::bail!("a component of arthur serve failed (see the log above)");
    }
    eprintln!("Arthur : arrêté proprement.");
    Ok(())
}

/// The poller's dependencies; what its ticks report is copied into the health board.
fn atlas_worker(
    app: &App,
    args: &ServeArgs,
    health: Arc<HealthBoard>,
) -> anyhow::Result<arthur_atlas::worker::WorkerDeps> {
    let (status, mut reports) = watch::channel(arthur_atlas::worker::PollStatus::default());
    let deps = arthur_atlas::worker::WorkerDeps {
        atlas: arthur_atlas::pipeline::Atlas::new(crate::atlas_cli::deps(app)?),
        account: crate::atlas_cli::account(app)?,
        period: args.atlas_poll,
        status,
    };
    // Ends with the poller (its sender dropped).
    tokio::spawn(async move {
        while reports.changed().await.is_ok() {
            let s = reports.borrow_and_update().clone();
            health.update(|h| {
                h.atlas_last_poll = s.last_poll;
                h.atlas_last_error = s.last_error;
                h.atlas_classified = s.classified;
            });
        }
    });
    Ok(deps)
}

/// Opens the audio; the loop itself runs on a task. Announcements come through `places`
/// (issue 31), told where the user speaks.
async fn start_voice(
    app: &App,
    args: &ServeArgs,
    speech: &crate::wyoming::Speech,
    health: Arc<HealthBoard>,
    places: &Arc<crate::wyoming::Places>,
    stop: CancellationToken,
) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<()>>> {
    let (whisper, transcriber, synth) = (speech.whisper.clone(), speech.transcriber.clone(), speech.synth.clone());
    let (mut announcements, spoke_here) = crate::wyoming::local_place(places);
    let (capture, mut frames, clock) = args.io.open_ears(&app.settings, Duration::from_secs(3600))?;
    let mut mouth = args.io.open_mouth()?;
    let device = capture.as_ref().map(|c| c.info().device.clone()).unwrap_or_else(|| "enregistrement".into());
    health.update(|s| {
        s.voice = Some(format!("à l'écoute ({device})"));
        s.voice_name = Some(synth.name().to_string());
        s.whisper_model = Some(whisper);
    });
    eprintln!("Arthur : à l'écoute ({device}), voix {}.", synth.name());
    let engine = app.engine.clone();
    let listener = arthur_audio::wake::ListenerConfig::default();
    let barge_in = app.settings.voice.barge_in;
    let tuning = crate::voice::tuning(&app.settings.voice);
    let journal = app.store.clone();
    Ok(tokio::spawn(async move {
        let _capture = capture;
        let voice_loop = VoiceLoop::new(engine.as_ref(), transcriber, synth, listener, barge_in)
            .with_tuning(tuning)
            .with_journal(journal)
            .with_capture_clock(clock);
        let exchanges = voice_loop
            .hands_free_announcing(&mut frames, mouth.speaker(), Some(&mut announcements), stop, |event| {
                if matches!(event, LoopEvent::Heard(_)) {
                    spoke_here();
                }
                tracing::info!(?event, "voice")
            })
            .await?;
        tracing::info!(exchanges = exchanges.len(), "voice loop stopped");
        mouth.finish()
    }))
}
