//! The everyday basics on the web: the timers page (live: the page's script asks
//! `/api/minuteurs` every second and writes what it answers with `textContent` only), the
//! lists page, and the « C'est bon » button of a ringing timer.

use std::sync::Arc;

use arthur_agents::memory::{EtatMinuteur, Genre, Minuteur};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use maud::html;
use serde_json::{json, Value};

use super::pages::{failed, layout};
use super::WebState;

/// Its state as the page says it: a deadline passed while no bell ran is « temps écoulé »,
/// never « en cours » with a time to come.
fn etat_label(m: &Minuteur, now: chrono::DateTime<chrono::Utc>) -> &'static str {
    match m.etat {
        EtatMinuteur::EnCours if m.overdue(now) => "temps écoulé",
        EtatMinuteur::EnCours if m.genre == Genre::Reveil => "réglé",
        EtatMinuteur::EnCours => "en cours",
        EtatMinuteur::EnPause => "en pause",
        EtatMinuteur::Sonne => "sonne",
        EtatMinuteur::Termine if m.unanswered() => "a sonné sans réponse",
        EtatMinuteur::Termine => "terminé",
        EtatMinuteur::Annule => "annulé",
    }
}

/// « « pâtes » », « n°3 (10 min) », « Réveil n°4 (mardi 1er décembre 2026 à 7 h 00) ».
fn label(m: &Minuteur, state: &WebState) -> String {
    match m.genre {
        Genre::Minuteur => arthur_agents::report::timer_label(m),
        Genre::Reveil => format!("Réveil {}", arthur_agents::report::alarm_label(m, state.tz)),
    }
}

/// Shown on the page: running, paused, ringing, and rung without an answer (until it is
/// acknowledged).
fn shown(m: &Minuteur) -> bool {
    m.etat.is_active() || m.unanswered()
}

/// One timer as the page's script reads it.
fn timer_json(m: &Minuteur, state: &WebState) -> Value {
    let now = state.now();
    json!({
        "id": m.id,
        "genre": m.genre.as_str(),
        "nom": m.nom,
        "libelle": label(m, state),
        "etat": m.etat.as_str(),
        "etat_libelle": etat_label(m, now),
        "duree_secondes": m.duree_secondes,
        "restant_secondes": m.remaining(now),
        "echeance": m.echeance,
        // Only a time to come: a passed deadline is never told as « sonne à ».
        "sonne_a": m.echeance.filter(|e| *e > now && m.etat == EtatMinuteur::EnCours)
            .map(|e| arthur_agents::fr::time(e, state.tz)),
        "acquitte": m.acquitte_le.is_some(),
        "sans_reponse": m.unanswered(),
    })
}

/// `GET /api/minuteurs`: the timers and alarms shown (active, or rung unanswered), and the
/// last ended or cancelled ones.
pub async fn api_timers(State(state): State<Arc<WebState>>) -> Response {
    match state.store.all_timers().await {
        Ok(all) => {
            let active: Vec<Value> = all.iter().filter(|m| shown(m)).map(|m| timer_json(m, &state)).collect();
            let past: Vec<Value> = all.iter().filter(|m| !shown(m)).take(10).map(|m| timer_json(m, &state)).collect();
            Json(json!({"actifs": active, "passes": past})).into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "timers failed");
            (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({"error": "database unavailable"}))).into_response()
        }
    }
}

/// `POST /api/minuteurs/{id}/acquitter`: the user heard a ringing timer.
pub async fn acknowledge(State(state): State<Arc<WebState>>, Path(id): Path<i64>) -> Response {
    match state.store.acknowledge_timers(Some(id), state.now()).await {
        Ok(done) if done.is_empty() => {
            (StatusCode::CONFLICT, Json(json!({"message": "Ce minuteur ne sonne pas : rien n'a changé."})))
                .into_response()
        }
        Ok(done) => Json(json!({"message": arthur_agents::report::acknowledged(&done, state.tz).0})).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "acknowledge failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({"message": "Panne : la base de données n'a pas répondu, l'effet est inconnu."})),
            )
                .into_response()
        }
    }
}

pub async fn timers_page(State(state): State<Arc<WebState>>) -> Response {
    let all = match state.store.all_timers().await {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let now = state.now();
    let active: Vec<&Minuteur> = all.iter().filter(|m| shown(m)).collect();
    layout(
        &state,
        "/minuteurs",
        "Minuteurs",
        html! {
            p.legend { "Mis à jour chaque seconde. Pour lancer un minuteur : « minuteur pâtes de 10 minutes » ; un réveil : « réveille-moi à 7 h »." }
            section #timers {
                @if active.is_empty() { p.empty #timers-empty { "Aucun minuteur en cours." } }
                ul.items #timers-list {
                    @for m in &active {
                        li id=(format!("minuteur-{}", m.id)) class=(m.etat.as_str()) {
                            span.text { (label(m, &state)) }
                            span.tag.state { (etat_label(m, now)) }
                            @if m.etat.is_active() && !m.overdue(now) {
                                span.remaining { (arthur_agents::turn::local::written_duration(m.remaining(now))) }
                            }
                        }
                    }
                }
            }
            script src="/static/timers.js" {}
        },
    )
}

pub async fn lists_page(State(state): State<Arc<WebState>>) -> Response {
    let lists = match state.store.lists().await {
        Ok(l) => l,
        Err(e) => return failed(e),
    };
    layout(
        &state,
        "/listes",
        "Listes",
        html! {
            p.legend { "Pour ajouter : « ajoute du lait à la liste de courses ». Les listes ne sont pas des notes." }
            @if lists.is_empty() { p.empty { "Aucune liste pour l'instant." } }
            @for l in &lists {
                section id=(format!("liste-{}", l.id)) {
                    h2 { (l.nom) " (" (l.elements.len()) ")" }
                    @if l.elements.is_empty() { p.empty { "Vide." } }
                    ul.items {
                        @for e in &l.elements {
                            li id=(format!("element-{}", e.id)) { span.text { (e.texte) } }
                        }
                    }
                }
            }
        },
    )
}
