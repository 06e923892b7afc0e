//! The web fallback: the chat page with its NDJSON stream, one page per memory kind (the
//! pages that `Failed` reports name), the journal of turns, the reminders as an iCalendar
//! feed, and the export. Loopback by default; anywhere else only with an access token.

pub mod atlas_actions;
pub mod atlas_agents;
mod basics;
pub mod board;
mod chat;
mod due;
mod ics;
pub(crate) mod pages;

use std::net::SocketAddr;
use std::sync::Arc;

use arthur_agents::memory::MemoryStore;
use arthur_agents::secret::Secret;
use arthur_agents::turn::TurnEngine;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono_tz::Tz;

pub use ics::reminders_calendar;

/// Name of the cookie that carries the access token after a `?token=` visit.
const TOKEN_COOKIE: &str = "arthur_token";

/// Everything the handlers need.
pub struct WebState {
    pub engine: Arc<TurnEngine>,
    pub store: Arc<dyn MemoryStore>,
    pub tz: Tz,
    pub preferences_cap: u32,
    pub demo: bool,
    pub token: Option<Secret>,
    /// What `arthur serve`'s components report (empty under `arthur web`).
    pub health: Arc<crate::board::HealthBoard>,
    /// Atlas' store, for the `/atlas` pages (None: they say Atlas is not set up).
    pub atlas: Option<Arc<dyn arthur_atlas::store::AtlasStore>>,
    /// Writes draft replies on the founder's request (None: the button is not offered).
    pub drafter: Option<Arc<arthur_atlas::draft::Drafter>>,
}

impl WebState {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.engine.context().now()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("refusing to listen on {0} without an access token: set ARTHUR_WEB_TOKEN (or [web] token)")]
    TokenRequired(SocketAddr),
    #[error("invalid listen address {0:?}")]
    BadAddress(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
}

/// Parses the listen address and refuses a non-loopback one without a token.
pub fn listen_address(raw: &str, token: Option<&Secret>) -> Result<SocketAddr, WebError> {
    let addr: SocketAddr = raw.parse().map_err(|_| WebError::BadAddress(raw.to_string()))?;
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(WebError::TokenRequired(addr));
    }
    Ok(addr)
}

pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, WebError> {
    tokio::net::TcpListener::bind(addr).await.map_err(|source| WebError::Bind { addr, source })
}

/// Serves until `shutdown` is cancelled; in-flight requests finish first.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: Arc<WebState>,
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    tracing::info!(addr = ?listener.local_addr().ok(), demo = state.demo, "web server listening");
    axum::serve(listener, router(state)).with_graceful_shutdown(shutdown.cancelled_owned()).await
}

pub fn router(state: Arc<WebState>) -> Router {
    Router::new()
        .route("/", get(pages::chat_page))
        .route("/notes", get(pages::notes))
        .route("/rappels", get(pages::rappels))
        .route("/preferences", get(pages::preferences))
        .route("/souvenirs", get(pages::souvenirs))
        .route("/projets", get(pages::projets))
        .route("/sessions", get(pages::sessions))
        .route("/minuteurs", get(basics::timers_page))
        .route("/listes", get(basics::lists_page))
        .route("/api/minuteurs", get(basics::api_timers))
        .route("/api/minuteurs/{id}/acquitter", post(basics::acknowledge))
        .route("/journal", get(pages::journal))
        .route("/atlas", get(pages::atlas))
        .route("/atlas/agents", get(atlas_agents::page))
        .route("/rappels.ics", get(ics::rappels_ics))
        .route("/api/chat", post(chat::chat))
        .route("/api/atlas/{id}/draft", post(atlas_agents::draft))
        .route("/api/atlas/{id}/approve", post(atlas_actions::approve))
        .route("/api/atlas/{id}/cancel", post(atlas_actions::cancel))
        .route("/api/atlas/{id}/retry", post(atlas_actions::retry))
        .route("/api/export", get(export))
        .route("/api/annonces", get(due::api_due))
        .route("/api/rappels/{id}/vu", post(due::seen))
        .route("/healthz", get(healthz))
        .route("/static/atlas.js", get(|| async { asset("text/javascript; charset=utf-8", include_str!("atlas.js")) }))
        .route("/static/chat.js", get(|| async { asset("text/javascript; charset=utf-8", include_str!("chat.js")) }))
        .route(
            "/static/timers.js",
            get(|| async { asset("text/javascript; charset=utf-8", include_str!("timers.js")) }),
        )
        .route("/static/due.js", get(|| async { asset("text/javascript; charset=utf-8", include_str!("due.js")) }))
        .route("/static/style.css", get(|| async { asset("text/css; charset=utf-8", include_str!("style.css")) }))
        .fallback(pages::not_found)
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(middleware::from_fn(security_headers))
        .with_state(state)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

fn plain(status: StatusCode, message: &'static str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], message).into_response()
}

fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == TOKEN_COOKIE).then(|| v.to_string())
    })
}

fn query_token(uri: &axum::http::Uri) -> Option<String> {
    uri.query()?.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == "token").then(|| v.to_string())
    })
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The Host header names this machine's loopback interface.
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return false };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Demo mode, access token, and cross-site protection, before any handler runs.
async fn guard(State(state): State<Arc<WebState>>, request: Request, next: Next) -> Response {
    let safe = matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if state.demo && !safe {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "Mode démo : lecture seule");
    }
    let mut set_cookie = None;
    if state.token.is_none() && !loopback_host(request.headers()) {
        // Without a token only loopback names are served: a page of another site whose
        // name was rebound to 127.0.0.1 (DNS rebinding) gets nothing.
        return plain(StatusCode::MISDIRECTED_REQUEST, "Requête refusée : nom d'hôte inattendu.");
    }
    if let Some(token) = &state.token {
        let headers = request.headers();
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_string);
        let from_query = query_token(request.uri());
        let presented = bearer.or_else(|| cookie_token(headers)).or_else(|| from_query.clone());
        if !presented.is_some_and(|p| constant_time_eq(p.as_bytes(), token.expose().as_bytes())) {
            return plain(StatusCode::UNAUTHORIZED, "Accès refusé : jeton manquant ou invalide.");
        }
        if from_query.is_some() {
            set_cookie = Some(format!("{TOKEN_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict", token.expose()));
        }
    }
    if !safe {
        let headers = request.headers();
        // Browsers say where a request comes from; a page of another site may not write.
        if headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) == Some("cross-site") {
            return plain(StatusCode::FORBIDDEN, "Requête refusée : elle vient d'un autre site.");
        }
        if let (Some(origin), Some(host)) = (
            headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
            headers.get(header::HOST).and_then(|v| v.to_str().ok()),
        ) {
            let origin_host = origin.split("://").nth(1).unwrap_or(origin);
            if origin_host != host {
                return plain(StatusCode::FORBIDDEN, "Requête refusée : elle vient d'un autre site.");
            }
        }
        // A JSON body cannot be sent cross-site without a CORS preflight, which we never grant.
        let json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !json {
            return plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Requête refusée : JSON attendu.");
        }
    }
    let mut response = next.run(request).await;
    if let Some(cookie) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    );
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

async fn export(State(state): State<Arc<WebState>>) -> Response {
    match arthur_agents::memory::export::export(state.store.as_ref(), state.now()).await {
        Ok(data) => Json(data).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "export failed");
            (StatusCode::INTERNAL_SERVER_ERROR, Json(serde_json::json!({"error": "database unavailable"})))
                .into_response()
        }
    }
}

async fn healthz(State(state): State<Arc<WebState>>) -> Response {
    let database = state.store.list_projets().await.is_ok();
    let live = state.health.snapshot();
    // What reached the user is read from the store (it survives restarts); null when the
    // store cannot say.
    let delivered = state.store.reminder_deliveries().await.ok();
    // Messages that wait on the founder; null when Atlas' store cannot say.
    let counts = match &state.atlas {
        Some(store) => store.state_counts().await.ok(),
        None => None,
    };
    let count = |s: arthur_atlas::EmailState| {
        counts.as_ref().map(|c| c.iter().find(|(state, _)| *state == s).map(|(_, n)| *n).unwrap_or(0))
    };
    let body = serde_json::json!({
        "status": if database { "ok" } else { "degraded" },
        "database": if database { "ok" } else { "error" },
        "demo": state.demo,
        "voice": live.voice,
        "models": { "whisper": live.whisper_model, "voice": live.voice_name },
        "reminders_announced": delivered.map(|d| d.spoken + d.seen_on_web),
        "reminders": {
            "due": live.reminders_due,
            "printed": live.reminders_printed,
            "spoken": delivered.map(|d| d.spoken),
            "seen_on_web": delivered.map(|d| d.seen_on_web),
            "waiting": delivered.map(|d| d.waiting),
        },
        "timers_rung": live.timers_rung,
        "providers": live.providers,
        "atlas": {
            "last_poll": live.atlas_last_poll,
            "last_error": live.atlas_last_error,
            "classified": live.atlas_classified,
            "awaiting_approval": count(arthur_atlas::EmailState::AwaitingApproval),
            "parked": {
                "scan_failed": count(arthur_atlas::EmailState::ScanFailed),
                "classify_failed": count(arthur_atlas::EmailState::ClassifyFailed),
            },
            "escalated": count(arthur_atlas::EmailState::Escalated),
        },
        "wyoming": live.wyoming,
    });
    let code = if database { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (code, Json(body)).into_response()
}
