//! What is due, on every page: the reminders that came due and that the user has neither
//! heard nor acknowledged, and the timers ringing. The page's script asks `/api/annonces`
//! every few seconds and shows a banner (text set with `textContent` only); « Vu » records
//! that the user saw the reminder, which is what makes it delivered.

use std::sync::Arc;

use arthur_agents::memory::{Delivery, EtatMinuteur};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::WebState;

fn unavailable(e: impl std::fmt::Display) -> Response {
    tracing::error!(error = %e, "due items failed");
    (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({"message": "Panne : la base de données n'a pas répondu."})))
        .into_response()
}

/// `GET /api/annonces`: `{"rappels": [{id, texte, echeance, prevu, annonce_le}], "minuteurs":
/// [{id, libelle}]}` — reminders due and not yet delivered, timers ringing.
pub async fn api_due(State(state): State<Arc<WebState>>) -> Response {
    let rappels = match state.store.undelivered_rappels().await {
        Ok(r) => r,
        Err(e) => return unavailable(e),
    };
    let timers = match state.store.ringing_timers().await {
        Ok(t) => t,
        Err(e) => return unavailable(e),
    };
    Json(json!({
        "rappels": rappels.iter().map(|(r, announced)| json!({
            "id": r.id,
            "texte": r.texte,
            "echeance": r.echeance,
            "prevu": arthur_agents::fr::datetime(r.echeance, state.tz),
            "annonce_le": announced,
        })).collect::<Vec<_>>(),
        "minuteurs": timers.iter().filter(|m| m.etat == EtatMinuteur::Sonne).map(|m| json!({
            "id": m.id,
            "libelle": arthur_agents::report::ringing_label(m, state.tz),
        })).collect::<Vec<_>>(),
    }))
    .into_response()
}

/// `POST /api/rappels/{id}/vu`: the user saw reminder `id` on a page.
pub async fn seen(State(state): State<Arc<WebState>>, Path(id): Path<i64>) -> Response {
    match state.store.mark_rappel_delivered(id, state.now(), Delivery::Web).await {
        Ok(true) => Json(json!({"message": format!("Rappel n°{id} vu.")})).into_response(),
        Ok(false) => (
            StatusCode::CONFLICT,
            Json(json!({"message": format!("Le rappel n°{id} n'attend pas d'être vu : rien n'a changé.")})),
        )
            .into_response(),
        Err(e) => unavailable(e),
    }
}
