//! `/atlas/agents`: the personas Atlas can make Claude Code put on, grouped by family, each
//! with its ring computed by `arthur_atlas::persona` from the family (the spec drew rings from one
//! field and stored another; here there is only one). Everything read from the table goes
//! through maud, which escapes it.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{html, Markup};

use super::WebState;
use arthur_atlas::persona::{self, Group, Persona};

const TITLE: &str = "Agents d'Atlas";

pub async fn page(State(state): State<Arc<WebState>>) -> Response {
    let Some(store) = &state.atlas else {
        return shell(&state, html! { p.empty { "Atlas n'est pas configuré : aucune base d'agents à lire." } });
    };
    match persona::list_active(store.as_ref()).await {
        Ok(personas) => shell(&state, families(&personas)),
        Err(e) => {
            tracing::error!(error = %e, "reading Atlas agents");
            let body = html! { p.error { "Impossible de lire les agents d'Atlas." } };
            (StatusCode::INTERNAL_SERVER_ERROR, shell(&state, body)).into_response()
        }
    }
}

/// One section per family, in the order Direction, Cadrage, Exécution, Validation.
fn families(personas: &[Persona]) -> Markup {
    html! {
        p {
            "Avant chaque lancement, Claude Code endosse l'un de ces agents. L'anneau se déduit de la famille : "
            "Atlas seul au centre (0), Direction 1, Cadrage et Exécution 2, Validation 3."
        }
        @for group in Group::ALL {
            @let members: Vec<&Persona> = personas.iter().filter(|p| p.group == group).collect();
            section.agents id=(group.as_str()) {
                h2 { (group.label()) " (" (members.len()) ")" }
                @if members.is_empty() {
                    p.empty { "Aucun agent actif." }
                } @else {
                    table.agents {
                        thead { tr { th { "surnom" } th { "nom de code" } th { "rôle" } th { "anneau" } th { "mission" } } }
                        tbody {
                            @for p in members {
                                tr id=(format!("agent-{}", p.codename)) {
                                    td { (p.nickname) }
                                    td { code { (p.codename) } }
                                    td { (p.role) }
                                    td.ring { (p.ring()) }
                                    td { (p.job_mission) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The page in the shared layout.
fn shell(state: &WebState, body: Markup) -> Response {
    super::pages::layout(state, "/atlas/agents", TITLE, body)
}

/// `POST /api/atlas/{id}/draft`: a draft reply for a finished run, written for the founder
/// with the client's provider and model; Atlas never sends it.
pub async fn draft(
    State(state): State<Arc<crate::WebState>>,
    axum::extract::Path(id): axum::extract::Path<i64>,
) -> axum::response::Response {
    use axum::Json;
    let Some(drafter) = &state.drafter else {
        return (StatusCode::NOT_FOUND, Json(serde_json::json!({"error": "Atlas n'est pas configuré."})))
            .into_response();
    };
    match drafter.write(id).await {
        Ok(d) => Json(serde_json::json!({"id": d.id, "draft": d.text, "provider": d.provider, "model": d.model}))
            .into_response(),
        Err(e) => {
            use arthur_atlas::draft::DraftError;
            let (status, message) = match &e {
                DraftError::NotFound(_) => (StatusCode::NOT_FOUND, "Cet e-mail n'existe pas.".to_string()),
                DraftError::NotFinished { .. } => (
                    StatusCode::CONFLICT,
                    "Le travail sur cet e-mail n'est pas terminé : pas de brouillon.".to_string(),
                ),
                DraftError::NoModel(p) => {
                    (StatusCode::SERVICE_UNAVAILABLE, format!("Aucune clé pour le fournisseur {p} de ce client."))
                }
                DraftError::Invalid(_) => (
                    StatusCode::BAD_GATEWAY,
                    "Le modèle n'a pas respecté la consigne : aucun brouillon enregistré.".to_string(),
                ),
                DraftError::Llm(_) | DraftError::Store(_) => (
                    StatusCode::BAD_GATEWAY,
                    "Le brouillon n'a pas pu être écrit. Rien n'a été enregistré.".to_string(),
                ),
            };
            tracing::warn!(email = id, "draft reply failed: {e}");
            (status, Json(serde_json::json!({"error": message}))).into_response()
        }
    }
}
