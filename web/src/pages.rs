//! Server-rendered pages, one per memory kind, with the ids the reports use. All user and
//! model text goes through maud, which escapes it.

use std::sync::Arc;

use arthur_agents::fr;
use arthur_agents::memory::worktime::{format_duration, totals, worked_within};
use arthur_agents::memory::{MemoryStore, StoreError};
use arthur_agents::report::labels;
use arthur_agents::time::{local_today, week_start, IsoDate};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use chrono::{DateTime, Utc};
use maud::{html, Markup, DOCTYPE};

use super::WebState;

const NAV: [(&str, &str); 11] = [
    ("/", "Discussion"),
    ("/notes", "Notes"),
    ("/rappels", "Rappels"),
    ("/minuteurs", "Minuteurs"),
    ("/listes", "Listes"),
    ("/preferences", "Préférences"),
    ("/souvenirs", "Souvenirs"),
    ("/projets", "Projets"),
    ("/sessions", "Sessions"),
    ("/journal", "Journal"),
    ("/atlas", "Atlas"),
];

pub(crate) fn layout(state: &WebState, path: &str, title: &str, body: Markup) -> Response {
    let page = html! {
        (DOCTYPE)
        html lang="fr" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — Arthur" }
                link rel="stylesheet" href="/static/style.css";
            }
            body {
                header {
                    nav {
                        // The Atlas tab only where Atlas is set up.
                        @for (href, label) in NAV.iter().filter(|(h, _)| *h != "/atlas" || state.atlas.is_some()) {
                            @if *href == path { a.current href=(href) aria-current="page" { (label) } }
                            @else { a href=(href) { (label) } }
                        }
                    }
                    @if state.demo { p.demo { "Mode démo : lecture seule." } }
                    // Due reminders and ringing timers, live (static/due.js).
                    div #annonces role="alert" aria-live="assertive" hidden {}
                }
                main { h1 { (title) } (body) }
                script src="/static/due.js" {}
            }
        }
    };
    Html(page.into_string()).into_response()
}

/// Any path Arthur does not serve: a French page, with the way back.
pub async fn not_found(State(state): State<Arc<WebState>>) -> Response {
    let mut page = layout(
        &state,
        "",
        "Page introuvable",
        html! { p { "Cette page n'existe pas. " a href="/" { "Retour à la discussion" } "." } },
    );
    *page.status_mut() = StatusCode::NOT_FOUND;
    page
}

pub(crate) fn failed(e: StoreError) -> Response {
    tracing::error!(error = %e, "page failed");
    (StatusCode::INTERNAL_SERVER_ERROR, Html("<p>Panne : la base de données n'a pas répondu.</p>")).into_response()
}

fn when(ts: DateTime<Utc>, state: &WebState) -> String {
    fr::datetime(ts, state.tz)
}

pub async fn chat_page(State(state): State<Arc<WebState>>) -> Response {
    layout(
        &state,
        "/",
        "Discussion",
        html! {
            div #conversation aria-live="polite" {}
            form #composer autocomplete="off" {
                label for="message" class="sr-only" { "Message" }
                textarea #message name="message" rows="2" placeholder="Écris à Arthur…" required {}
                button type="submit" #send { "Envoyer" }
            }
            p.legend {
                span.badge.code { "vérifié" } " : écrit par le code à partir de ce qui a réellement été fait. "
                span.badge.model { "conversation" } " : texte du modèle, montré seulement quand aucun outil n'a servi et qu'il n'affirme rien sur ta mémoire ni sur une action."
            }
            script src="/static/chat.js" {}
        },
    )
}

pub async fn notes(State(state): State<Arc<WebState>>) -> Response {
    let notes = match state.store.list_notes(None).await {
        Ok(n) => n,
        Err(e) => return failed(e),
    };
    layout(
        &state,
        "/notes",
        "Notes",
        html! {
            @if notes.is_empty() { p.empty { "Aucune note." } }
            ul.items {
                @for n in notes.iter().rev() {
                    li id=(format!("note-{}", n.id)) {
                        span.id { "n°" (n.id) }
                        span.text { (n.texte) }
                        @if let Some(p) = &n.projet { span.tag { (p) } }
                        time { (when(n.created_at, &state)) }
                    }
                }
            }
        },
    )
}

pub async fn rappels(State(state): State<Arc<WebState>>) -> Response {
    let rappels = match state.store.list_rappels(true).await {
        Ok(r) => r,
        Err(e) => return failed(e),
    };
    let now = state.now();
    let overdue: Vec<_> = rappels.iter().filter(|r| !r.fait && r.echeance < now).collect();
    let due: Vec<_> = rappels.iter().filter(|r| !r.fait && r.echeance >= now).collect();
    let done: Vec<_> = rappels.iter().filter(|r| r.fait).collect();
    let section = |title: &str, class: &str, list: &[&arthur_agents::memory::Rappel]| {
        html! {
            section class=(class) {
                h2 { (title) " (" (list.len()) ")" }
                @if list.is_empty() { p.empty { "Aucun." } }
                ul.items {
                    @for r in list {
                        li id=(format!("rappel-{}", r.id)) {
                            span.id { "n°" (r.id) }
                            span.text { (r.texte) }
                            time { (when(r.echeance, &state)) }
                            @if let Some(p) = &r.repetition { span.tag.rule { (p.label()) } }
                            @if let (Some(f), true) = (r.fait_le, r.is_recurring()) { span.tag { "série arrêtée le " (when(f, &state)) } }
                            @else if let Some(f) = r.fait_le { span.tag { "fait le " (when(f, &state)) } }
                        }
                    }
                }
            }
        }
    };
    layout(
        &state,
        "/rappels",
        "Rappels",
        html! {
            (section("En retard", "overdue", &overdue))
            (section("À venir", "due", &due))
            (section("Faits", "done", &done))
            p { a href="/rappels.ics" { "S'abonner au calendrier des rappels (iCalendar)" } }
        },
    )
}

pub async fn preferences(State(state): State<Arc<WebState>>) -> Response {
    let prefs = match state.store.list_preferences().await {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let active = prefs.iter().filter(|p| p.active).count();
    layout(
        &state,
        "/preferences",
        "Préférences",
        html! {
            p.cap { (fr::count(active as i64, "active", "actives")) " sur " (state.preferences_cap) " au maximum (plafond). Les préférences actives sont données au modèle à chaque tour." }
            ul.items {
                @for p in &prefs {
                    li id=(format!("preference-{}", p.id)) class=(if p.active { "active" } else { "inactive" }) {
                        span.id { "n°" (p.id) }
                        span.text { (p.texte) }
                        @if p.active { span.tag { "active" } }
                        @else { span.tag { "désactivée" @if let Some(d) = p.desactivee_le { " le " (when(d, &state)) } } }
                    }
                }
            }
            @if prefs.is_empty() { p.empty { "Aucune préférence." } }
        },
    )
}

pub async fn souvenirs(State(state): State<Arc<WebState>>) -> Response {
    let souvenirs = match state.store.list_souvenirs().await {
        Ok(s) => s,
        Err(e) => return failed(e),
    };
    layout(
        &state,
        "/souvenirs",
        "Souvenirs",
        html! {
            p { "Les souvenirs ne sont jamais donnés d'office au modèle : il doit les chercher dans ta mémoire." }
            @if souvenirs.is_empty() { p.empty { "Aucun souvenir." } }
            ul.items {
                @for s in souvenirs.iter().rev() {
                    li id=(format!("souvenir-{}", s.id)) {
                        span.id { "n°" (s.id) }
                        span.text { (s.texte) }
                        span.tag { @if s.embedding_model.is_some() { "indexé" } @else { "recherche par mots-clés seulement" } }
                        time { (when(s.created_at, &state)) }
                    }
                }
            }
        },
    )
}

pub async fn projets(State(state): State<Arc<WebState>>) -> Response {
    let projets = match state.store.list_projets().await {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let mut details = Vec::new();
    for p in &projets {
        match state.store.projet_detail(p.id).await {
            Ok(Some(d)) => details.push(d),
            Ok(None) => {}
            Err(e) => return failed(e),
        }
    }
    layout(
        &state,
        "/projets",
        "Projets",
        html! {
            @if details.is_empty() { p.empty { "Aucun projet." } }
            @for d in &details {
                article.projet id=(format!("projet-{}", d.projet.id)) {
                    h2 { (d.projet.nom) " " span.tag { (d.projet.statut.label()) } }
                    @if let Some(desc) = &d.projet.description { p { (desc) } }
                    p { "Phase : " (d.projet.phase.as_deref().unwrap_or("aucune")) }
                    @if d.phases.len() > 1 {
                        p { "Phases successives : " (d.phases.iter().map(|p| p.phase.as_str()).collect::<Vec<_>>().join(" → ")) }
                    }
                    h3 { "Décisions (" (d.decisions.len()) ")" }
                    ul.items {
                        @for dec in &d.decisions {
                            li id=(format!("decision-{}", dec.id)) { span.id { "n°" (dec.id) } span.text { (dec.texte) } time { (when(dec.created_at, &state)) } }
                        }
                    }
                    p { "Notes rattachées : " (d.notes) }
                }
            }
        },
    )
}

async fn session_totals(state: &WebState) -> Result<Markup, StoreError> {
    let now = state.now();
    let today = local_today(now, state.tz);
    let day_start = IsoDate(today).start_utc(state.tz);
    let week = IsoDate(week_start(today)).start_utc(state.tz);
    let store: &dyn MemoryStore = state.store.as_ref();
    let day = totals(&store.sessions_overlapping(day_start, now, None).await?, day_start, now, now);
    let wk = totals(&store.sessions_overlapping(week, now, None).await?, week, now, now);
    let all_sessions = store.list_sessions().await?;
    let all = totals(&all_sessions, DateTime::<Utc>::MIN_UTC, now, now);
    let running = store.running_session().await?;
    Ok(html! {
        @match &running {
            Some(s) => p.running { "Session " (if s.is_paused() { "en pause" } else { "en cours" }) " sur " strong { (s.projet) } " depuis " (when(s.debut, state)) "." },
            None => p { "Aucune session en cours." },
        }
        table {
            thead { tr { th { "Période" } th { "Temps de travail" } } }
            tbody {
                tr { td { "Aujourd'hui" } td { (format_duration(day.total_secs)) } }
                tr { td { "Cette semaine" } td { (format_duration(wk.total_secs)) } }
            }
        }
        h2 { "Par projet (depuis toujours)" }
        table {
            tbody { @for (p, secs) in &all.par_projet { tr { td { (p) } td { (format_duration(*secs)) } } } }
        }
        h2 { "Dernières sessions" }
        ul.items {
            @for s in all_sessions.iter().rev().take(50) {
                li id=(format!("session-{}", s.id)) {
                    span.id { "n°" (s.id) }
                    span.text { (s.projet) }
                    time { (when(s.debut, state)) }
                    " → " @if let Some(f) = s.fin { time { (fr::time(f, state.tz)) } } @else { "en cours" }
                    span.tag { (format_duration(worked_within(s, s.debut, s.fin.unwrap_or(now), now).num_seconds())) }
                    @if !s.pauses.is_empty() { span.tag { (fr::count(s.pauses.len() as i64, "pause", "pauses")) } }
                }
            }
        }
    })
}

pub async fn sessions(State(state): State<Arc<WebState>>) -> Response {
    match session_totals(&state).await {
        Ok(body) => layout(&state, "/sessions", "Sessions de travail", body),
        Err(e) => failed(e),
    }
}

pub async fn journal(State(state): State<Arc<WebState>>) -> Response {
    let turns = match state.store.list_turns(50).await {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    layout(
        &state,
        "/journal",
        "Journal des tours",
        html! {
            @if turns.is_empty() { p.empty { "Aucun tour pour l'instant." } }
            @for t in &turns {
                article.turn id=(format!("tour-{}", t.id)) {
                    h2 { "Tour n°" (t.id) " — " (when(t.started_at, &state)) @if t.status != "complete" { " " span.tag.warn { "interrompu" } } }
                    p.said { "« " (t.user_text) " »" }
                    @let r = &t.trace["router"];
                    p { "Routage : " (r["agent"].as_str().unwrap_or("?")) " × " (r["domain"].as_str().unwrap_or("?"))
                        // Understood without a model, or a reply to a question, is no failure: only
                        // a model that did not answer (or answered garbage) is shown as a warning.
                        @if let Some(f) = r["fallback"].as_str() {
                            @if matches!(f, "local" | "confirmation" | "bare_command") { " " span.tag.info title=(f) { (labels::fallback(f)) } }
                            @else { " " span.tag.warn title=(f) { "repli : " (labels::fallback(f)) } }
                        } }
                    @if let Some(calls) = t.trace["calls"].as_array() {
                        table {
                            thead { tr { th { "Appel" } th { "Fournisseur" } th { "Modèle" } th { "Jetons (entrée/sortie)" } th { "Latence" } th { "1er jeton" } } }
                            tbody {
                                @for (i, c) in calls.iter().enumerate() {
                                    tr {
                                        td { (i + 1) }
                                        td { (c["provider"].as_str().unwrap_or("—")) }
                                        td { (c["model"].as_str().unwrap_or("—")) }
                                        td { (c["prompt_tokens"].as_u64().map(|v| v.to_string()).unwrap_or("—".into())) " / " (c["completion_tokens"].as_u64().map(|v| v.to_string()).unwrap_or("—".into())) }
                                        td { (c["latency_ms"].as_u64().map(|v| format!("{v} ms")).unwrap_or("—".into())) }
                                        td { (c["ttft_ms"].as_u64().map(|v| format!("{v} ms")).unwrap_or("—".into())) }
                                    }
                                }
                            }
                        }
                    }
                    @if let Some(tools) = t.trace["tools"].as_array() {
                        ul.items {
                            @for tool in tools {
                                li {
                                    (capitalise(labels::action(tool["name"].as_str().unwrap_or("?")))) " → "
                                    span.tag { (labels::outcome(tool["outcome"].as_str().unwrap_or("?"))) }
                                    details.trace { summary { "détails" } code { (tool["name"].as_str().unwrap_or("?")) " " (tool["arguments"].as_str().unwrap_or("")) } }
                                }
                            }
                        }
                    }
                    @if let Some(stages) = &t.stages { p.stages { "Voix : " (voice_stages(stages)) } }
                    @if let Some(w) = &t.written { pre.answer { (w) } }
                }
            }
        },
    )
}

/// A voice turn's stage timings (`MemoryStore::set_turn_stages`) in one line: what the
/// user waited from the end of their speech to the first sound of the answer, and where
/// it went. A stage not measured is said so, never shown as 0.
fn voice_stages(stages: &serde_json::Value) -> String {
    let ms = |key: &str| match stages[key].as_f64() {
        Some(v) if v.fract() != 0.0 && v < 10.0 => format!("{} ms", format!("{v:.1}").replace('.', ",")),
        Some(v) => format!("{v:.0} ms"),
        None => "non mesuré".to_owned(),
    };
    let transcription = if stages["transcribed_in_pause"].as_bool() == Some(true) {
        format!("{} (pendant la pause)", ms("transcription_ms"))
    } else {
        ms("transcription_ms")
    };
    format!(
        "fin de la parole → premier son : {} (silence {}, transcription {}, routage {}, modèle {}, outils {}, tour {}, synthèse du premier son {})",
        ms("felt_ms"),
        ms("silence_ms"),
        transcription,
        ms("routing_ms"),
        ms("model_ms"),
        ms("tools_ms"),
        ms("turn_ms"),
        ms("first_audio_ms"),
    )
}

/// Atlas' e-mails, newest first: state, classification, sender, subject (escaped by maud).
pub async fn atlas(State(state): State<Arc<WebState>>) -> Response {
    let rows = match &state.atlas {
        None => Vec::new(),
        Some(store) => match store.list(None).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "reading Atlas e-mails");
                return layout(
                    &state,
                    "/atlas",
                    "Atlas",
                    html! { p.error { "Impossible de lire les e-mails d'Atlas." } },
                );
            }
        },
    };
    let configured = state.health.snapshot().atlas_last_poll;
    let can_draft = state.drafter.is_some();
    layout(
        &state,
        "/atlas",
        "Atlas",
        html! {
            p { a href="/atlas/agents" { "Les agents d'Atlas" } }
            @if let Some(at) = configured {
                p { "Dernière relève : " (crate::pages::local_time(&state, at)) }
            }
            @if rows.is_empty() {
                p.empty { "Aucun e-mail lu par Atlas pour l'instant." }
            } @else {
                table.atlas {
                    thead { tr { th { "n°" } th { "reçu" } th { "état" } th { "intention" } th { "confiance" } th { "expéditeur" } th { "sujet" } th {} } }
                    tbody {
                        @for r in rows.iter().rev().take(200) {
                            tr {
                                td { (r.id) }
                                td { (crate::pages::local_time(&state, r.created_at)) }
                                td { span.tag { (r.status.as_str()) } }
                                td { (r.intent.map(|i| i.as_str()).unwrap_or("—")) @if let Some(c) = r.complexity { @if r.intent == Some(arthur_atlas::Intent::Run) { " · " (c.as_str()) } } }
                                td { (r.confidence.map(|c| format!("{:.0} %", c * 100.0)).unwrap_or_else(|| "—".into())) }
                                td { (r.from_email.as_deref().unwrap_or("—")) }
                                td { (r.subject) }
                                td {
                                    @if can_draft && r.status == arthur_atlas::EmailState::Actioned {
                                        button type="button" data-draft=(r.id) { "Brouillon de réponse" }
                                        pre.draft id=(format!("draft-{}", r.id)) {}
                                    }
                                    @if r.status == arthur_atlas::EmailState::AwaitingApproval {
                                        button type="button" data-decide="approve" data-id=(r.id) { "Approuver" }
                                        " "
                                        button type="button" data-decide="cancel" data-id=(r.id) { "Refuser" }
                                        p.decision id=(format!("decision-{}", r.id)) {}
                                    }
                                    @if matches!(r.status, arthur_atlas::EmailState::ScanFailed | arthur_atlas::EmailState::ClassifyFailed) {
                                        button type="button" data-decide="retry" data-id=(r.id) { "Relancer" }
                                        p.decision id=(format!("decision-{}", r.id)) {}
                                    }
                                }
                            }
                        }
                    }
                }
                script src="/static/atlas.js" {}
            }
        },
    )
}

fn local_time(state: &WebState, at: chrono::DateTime<chrono::Utc>) -> String {
    at.with_timezone(&state.tz).format("%d/%m/%Y %H:%M").to_string()
}

/// « Créer la note », for the start of a line.
fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}
