//! The `/atlas` page's decisions: approve or refuse a launch held for an unverified author
//! (`POST /api/atlas/{id}/approve`, `/cancel`), put back a message parked after errors
//! (`/retry`) — the same store calls as `arthur atlas approve|cancel|retry ID`, behind the same guards as every other write (token, same-site, JSON
//! body). The answer is a French sentence composed by code, shown with `textContent`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::WebState;

/// Which decision a button asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Cancel,
    /// Put a message parked after errors back in the queue.
    Retry,
}

async fn decide(state: &WebState, id: i64, decision: Decision) -> Response {
    let Some(store) = &state.atlas else {
        return (StatusCode::NOT_FOUND, Json(serde_json::json!({"error": "Atlas n'est pas configuré."})))
            .into_response();
    };
    let result = match decision {
        Decision::Approve => arthur_atlas::decisions::approve(store.as_ref(), id, "web", state.now()).await,
        Decision::Cancel => arthur_atlas::decisions::cancel(store.as_ref(), id, "web", state.now()).await,
        Decision::Retry => arthur_atlas::decisions::retry(store.as_ref(), id, "web", state.now()).await,
    };
    match result {
        Ok((0, line)) => Json(serde_json::json!({"id": id, "message": line})).into_response(),
        Ok((_, line)) => {
            let missing = matches!(store.email(id).await, Ok(None));
            let status = if missing { StatusCode::NOT_FOUND } else { StatusCode::CONFLICT };
            (status, Json(serde_json::json!({"error": line}))).into_response()
        }
        Err(e) => {
            tracing::error!(email = id, ?decision, "Atlas decision failed: {e:#}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(serde_json::json!({"error": "La base d'Atlas est indisponible : rien n'a changé."})),
            )
                .into_response()
        }
    }
}

pub async fn approve(State(state): State<Arc<WebState>>, Path(id): Path<i64>) -> Response {
    decide(&state, id, Decision::Approve).await
}

pub async fn cancel(State(state): State<Arc<WebState>>, Path(id): Path<i64>) -> Response {
    decide(&state, id, Decision::Cancel).await
}

pub async fn retry(State(state): State<Arc<WebState>>, Path(id): Path<i64>) -> Response {
    decide(&state, id, Decision::Retry).await
}
