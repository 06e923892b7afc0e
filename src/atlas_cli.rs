//! `arthur atlas …` over the app: `arthur-atlas` runs the commands; this builds the
//! pipeline from the settings (its store on the app's database, the classifier's and the
//! drafts' models from the providers' settings, the clock, the founder's memory).

use std::process::ExitCode;
use std::sync::Arc;

pub use arthur_atlas::cli::{AtlasCmd, ChantierCmd, ClientCmd, Wiring};
use arthur_atlas::draft::Drafter;
use arthur_atlas::imap::ImapAccount;
use arthur_atlas::launch::Launcher;
use arthur_atlas::ocr::Ocr;
use arthur_atlas::pipeline::AtlasDeps;
use arthur_atlas::store::AtlasStore;
use tokio_util::sync::CancellationToken;

use crate::app::App;

/// Runs `arthur atlas <cmd>` until `shutdown` (for the looping commands).
pub async fn run(app: &App, cmd: AtlasCmd, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    arthur_atlas::cli::run(app, cmd, shutdown).await
}

impl Wiring for App {
    fn store(&self) -> Arc<dyn AtlasStore> {
        store(self)
    }
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.ctx.now()
    }
    fn deps(&self) -> anyhow::Result<AtlasDeps> {
        deps(self)
    }
    fn account(&self) -> anyhow::Result<ImapAccount> {
        account(self)
    }
    fn launcher(&self) -> anyhow::Result<Launcher> {
        launcher(self)
    }
    fn watchdog(&self) -> anyhow::Result<arthur_atlas::watchdog::LockWatchdog> {
        watchdog(self)
    }
    fn drafter(&self) -> Drafter {
        drafter_for(self)
    }
}

/// The Atlas store on the app's database.
pub fn store(app: &App) -> Arc<dyn AtlasStore> {
    app.db.atlas.clone()
}

/// The pipeline's dependencies from the settings.
pub fn deps(app: &App) -> anyhow::Result<AtlasDeps> {
    let a = &app.settings.atlas;
    Ok(AtlasDeps {
        store: store(app),
        scanner: a.scanner(),
        ocr: Ocr::default(),
        dkim: a.dkim()?,
        llm: crate::app::classifier_llm(&app.settings)?,
        founder: a.founder()?,
        mailbox: a.mailbox()?,
        trust_unsigned_founder: a.trust_unsigned_founder,
        clock: app.ctx.clock.clone(),
        notifier: Some(notifier(app)?),
    })
}

/// Who e-mails the founder (approval requests, parked messages, lock alerts), from the settings.
pub fn notifier(app: &App) -> anyhow::Result<arthur_atlas::notify::Notifier> {
    let a = &app.settings.atlas;
    Ok(arthur_atlas::notify::Notifier {
        store: store(app),
        clock: app.ctx.clock.clone(),
        smtp: a.smtp()?,
        founder: a.founder_email.clone(),
        mailbox: a.mailbox_email.clone(),
    })
}

/// The lock watchdog from the settings.
pub fn watchdog(app: &App) -> anyhow::Result<arthur_atlas::watchdog::LockWatchdog> {
    Ok(arthur_atlas::watchdog::LockWatchdog {
        store: store(app),
        clock: app.ctx.clock.clone(),
        notifier: notifier(app)?,
    })
}

/// The launcher from the settings; the personas read the founder's preferences from the memory.
pub fn launcher(app: &App) -> anyhow::Result<Launcher> {
    Ok(Launcher {
        store: store(app),
        cfg: app.settings.atlas.launcher_config(&app.settings.data_dir)?,
        clock: app.ctx.clock.clone(),
        holder: arthur_atlas::launch::holder(),
        personas: Some(app.db.memory.clone()),
        shutdown: None,
    })
}

/// The draft writer (the CLI and the web share it): each client's provider and model, from
/// the providers' settings.
pub fn drafter(
    settings: &crate::config::Settings,
    store: Arc<dyn AtlasStore>,
    clock: Arc<dyn arthur_agents::time::Clock>,
) -> Drafter {
    let providers = settings.clone();
    Drafter {
        store,
        clock,
        signature: settings.atlas.signature(),
        models: Box::new(move |kind, model| {
            crate::app::provider_llm(&providers, kind, model).map_err(|e| format!("{e:#}"))
        }),
    }
}

/// [`drafter`] for the app.
pub fn drafter_for(app: &App) -> Drafter {
    drafter(&app.settings, store(app), app.ctx.clock.clone())
}

/// The mailbox Atlas polls, from the settings.
pub fn account(app: &App) -> anyhow::Result<ImapAccount> {
    Ok(app.settings.atlas.imap_account()?)
}
