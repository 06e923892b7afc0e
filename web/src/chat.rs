//! `POST /api/chat`: one turn, streamed as NDJSON — status lines while it runs (routing,
//! each tool), then the code-composed reports and the final answer with its parts marked.
//! No model draft is ever sent: model text reaches the page only in the final answer, once
//! the turn's outcome is known. The turn runs to its end even if the client goes away.

use std::sync::Arc;

use arthur_agents::turn::{PartSource, TurnEvent};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::WebState;

/// Longest message accepted (characters).
pub const MAX_MESSAGE_CHARS: usize = 4000;

#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    pub message: String,
    #[serde(default)]
    pub conversation: Option<String>,
}

fn bad_request(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"type": "error", "message": message}))).into_response()
}

pub async fn chat(State(state): State<Arc<WebState>>, body: axum::body::Bytes) -> Response {
    let request: ChatRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(_) => return bad_request("Requête invalide : il faut un objet JSON {\"message\": \"…\"}."),
    };
    let message = request.message.trim().to_string();
    if message.is_empty() {
        return bad_request("Le message est vide.");
    }
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return bad_request("Le message est trop long (4000 caractères au plus).");
    }
    let conversation = request.conversation.filter(|c| {
        !c.is_empty() && c.len() <= 80 && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
    });

    let (tx, rx) = mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        let sink_tx = tx.clone();
        let sink = move |event: TurnEvent| {
            let mut line = json!({"type": "status", "text": event.text()});
            if let TurnEvent::Tool(name) = &event {
                line["tool"] = json!(name);
            }
            let _ = sink_tx.send(line);
        };
        match state.engine.run(conversation.as_deref(), &message, Some(&sink)).await {
            Ok(result) => {
                for part in result.parts.iter().filter(|p| p.source == PartSource::Code) {
                    let _ = tx.send(json!({"type": "report", "text": part.written}));
                }
                let mut last = result.to_ask_json();
                last["type"] = json!("final");
                last["conversation"] = json!(result.conversation_id);
                last["parts"] = json!(result
                    .parts
                    .iter()
                    .map(|p| json!({"source": p.source, "text": p.written}))
                    .collect::<Vec<_>>());
                let _ = tx.send(last);
            }
            Err(e) => {
                tracing::error!(error = %e, "turn failed");
                let _ = tx.send(json!({
                    "type": "error",
                    "message": "Panne : la base de données n'a pas répondu, l'effet est inconnu. Vérifie la page Journal (/journal)."
                }));
            }
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let value = rx.recv().await?;
        let mut line = value.to_string();
        line.push('\n');
        Some((Ok::<_, std::convert::Infallible>(line), rx))
    });
    (
        [(header::CONTENT_TYPE, "application/x-ndjson; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")],
        Body::from_stream(stream),
    )
        .into_response()
}
