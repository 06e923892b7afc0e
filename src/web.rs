//! The web interface over the app: `arthur-web` serves it; this binds the configured
//! address and hands it the app's engine, memory and Atlas.

use std::sync::Arc;

use anyhow::Context;
pub use arthur_web::*;

use crate::app::App;

/// Binds the configured address (loopback unless a token is set) and builds the state
/// over the app; says where the interface is.
pub async fn bind_for(
    app: &App,
    health: Arc<board::HealthBoard>,
) -> anyhow::Result<(tokio::net::TcpListener, Arc<WebState>)> {
    let addr = listen_address(&app.settings.web_addr, app.settings.web_token.as_ref()).context("web configuration")?;
    let listener = bind(addr).await?;
    eprintln!("Arthur : interface web sur http://{}", listener.local_addr()?);
    // The model installed is known before (and without) the voice, as `arthur doctor` finds it.
    if let Ok(model) = crate::voice::whisper_model(&app.settings) {
        health.update(|s| {
            s.whisper_model.get_or_insert(model);
        });
    }
    let state = Arc::new(WebState {
        engine: app.engine.clone(),
        store: app.ctx.store.clone(),
        tz: app.ctx.tz,
        preferences_cap: app.ctx.preferences_cap,
        demo: app.settings.demo,
        token: app.settings.web_token.clone(),
        health,
        // The Atlas tab (and its routes) only where Atlas is set up.
        atlas: app.settings.atlas.imap_url.is_some().then(|| crate::atlas_cli::store(app)),
        drafter: Some(Arc::new(crate::atlas_cli::drafter_for(app))),
    });
    Ok((listener, state))
}
