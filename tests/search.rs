//! chercher_dans_memoire and memoriser_souvenir: keyword search (FTS5) when no embedding
//! provider is configured, cosine search with the 0.6 threshold through a scripted server
//! that speaks the OpenAI/Mistral embeddings wire format over HTTP, and the fallback when
//! that server fails.

use crate::common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arthur_agents::llm::embeddings::{Embedder, HttpEmbedder};
use arthur_agents::memory::MemoryStore;
use arthur_agents::report::compose_written;
use arthur_agents::secret::Secret;
use arthur_agents::tools::{KeywordReason, Outcome, Receipt, SearchMode};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use common::{spawn_app, spawn_app_with};
use serde_json::{json, Value};

/// The scripted embedding space: one dimension per known word.
const VOCABULARY: [&str; 6] = ["dentiste", "martin", "chat", "velo", "banque", "voisine"];

fn embed_text(text: &str) -> Vec<f32> {
    let t = text.to_lowercase().replace('é', "e");
    let mut v: Vec<f32> = VOCABULARY.iter().map(|w| if t.contains(w) { 1.0 } else { 0.0 }).collect();
    v.push(0.001); // never a zero vector
    v
}

#[derive(Default)]
struct Script {
    fail: AtomicBool,
    calls: AtomicUsize,
    inputs: std::sync::Mutex<Vec<String>>,
}

async fn embeddings(
    State(script): State<Arc<Script>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    script.calls.fetch_add(1, Ordering::SeqCst);
    if headers.get("authorization").and_then(|h| h.to_str().ok()) != Some("Bearer test-key") {
        return (StatusCode::UNAUTHORIZED, Json(json!({"message": "Unauthorized"})));
    }
    if script.fail.load(Ordering::SeqCst) {
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(json!({"message": "internal error"})));
    }
    assert_eq!(body["model"], "mistral-embed");
    let inputs: Vec<String> =
        body["input"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    script.inputs.lock().unwrap().extend(inputs.iter().cloned());
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": embed_text(t)}))
        .collect();
    (
        StatusCode::OK,
        Json(
            json!({"id": "emb-1", "object": "list", "data": data, "model": "mistral-embed", "usage": {"prompt_tokens": 3, "total_tokens": 3}}),
        ),
    )
}

async fn scripted_server() -> (SocketAddr, Arc<Script>) {
    let script = Arc::new(Script::default());
    let app = Router::new().route("/v1/embeddings", post(embeddings)).with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, script)
}

fn embedder(addr: SocketAddr) -> Arc<dyn Embedder> {
    Arc::new(
        HttpEmbedder::new(&format!("http://{addr}/"), Secret::new("test-key"), "mistral-embed", Duration::from_secs(5))
            .unwrap(),
    )
}

#[tokio::test]
async fn keyword_search_when_no_embedding_provider() {
    let app = spawn_app().await;
    let Receipt::SouvenirStored { souvenir } =
        app.done("memoriser_souvenir", json!({"texte": "Mon dentiste s'appelle Martin, il est à Lyon"})).await
    else {
        panic!()
    };
    assert_eq!(souvenir.embedding_model, None);
    assert_eq!(app.fresh().await.list_souvenirs().await.unwrap(), vec![souvenir.clone()]);
    app.done("memoriser_souvenir", json!({"texte": "La voisine garde le chat en août"})).await;

    // Accents, case and plurals do not matter.
    let Receipt::Search { hits, search, .. } =
        app.done("chercher_dans_memoire", json!({"requete": "Comment s'appelle le DENTISTE ?"})).await
    else {
        panic!()
    };
    assert_eq!(search, SearchMode::Keyword { reason: KeywordReason::NoEmbeddingProvider });
    assert_eq!(hits.iter().map(|h| h.souvenir.id).collect::<Vec<_>>(), vec![souvenir.id]);
    let Receipt::Search { hits, .. } = app.done("chercher_dans_memoire", json!({"requete": "voisine"})).await else {
        panic!()
    };
    assert_eq!(hits.len(), 1);

    // Nothing matches: a Done whose receipt says so, and which search ran.
    let r = app.done("chercher_dans_memoire", json!({"requete": "passeport"})).await;
    let Receipt::Search { ref hits, .. } = r else { panic!() };
    assert!(hits.is_empty());
    let text = compose_written("chercher_dans_memoire", &Outcome::Done(r), app.ctx.tz);
    assert!(text.contains("Rien trouvé") && text.contains("mots-clés"), "{text}");

    // FTS syntax in the query is data, not syntax.
    let Receipt::Search { hits, .. } =
        app.done("chercher_dans_memoire", json!({"requete": "\"dentiste\" OR * NEAR("})).await
    else {
        panic!()
    };
    assert_eq!(hits.len(), 1);
}

#[tokio::test]
async fn vector_search_keeps_only_what_clears_the_threshold() {
    let (addr, script) = scripted_server().await;
    let app = spawn_app_with(Some(embedder(addr)), 20).await;
    let Receipt::SouvenirStored { souvenir: dentist } =
        app.done("memoriser_souvenir", json!({"texte": "Mon dentiste s'appelle Martin"})).await
    else {
        panic!()
    };
    assert_eq!(dentist.embedding_model.as_deref(), Some("mistral-embed"));
    // Cosine with "dentiste" = 1/√3 ≈ 0.577: under the threshold.
    app.done("memoriser_souvenir", json!({"texte": "dentiste, chat et vélo ce week-end"})).await;
    app.done("memoriser_souvenir", json!({"texte": "La voisine garde le chat"})).await;

    let r = app.done("chercher_dans_memoire", json!({"requete": "dentiste"})).await;
    let Receipt::Search { ref hits, ref search, not_indexed, .. } = r else { panic!() };
    assert_eq!(search, &SearchMode::Vector { threshold: 0.6, model: "mistral-embed".into() });
    assert_eq!(not_indexed, 0);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].souvenir.id, dentist.id);
    let score = hits[0].score.unwrap();
    assert!((score - std::f32::consts::FRAC_1_SQRT_2).abs() < 0.01, "{score}");
    let text = compose_written("chercher_dans_memoire", &Outcome::Done(r.clone()), app.ctx.tz);
    assert!(text.contains("similarité") && text.contains("0.6"), "{text}");

    let Receipt::Search { hits, .. } = app.done("chercher_dans_memoire", json!({"requete": "banque"})).await else {
        panic!()
    };
    assert!(hits.is_empty(), "nothing over the threshold: nothing returned");
    assert!(script.calls.load(Ordering::SeqCst) >= 5);
}

#[tokio::test]
async fn souvenirs_stored_offline_are_embedded_at_the_next_vector_search() {
    let (addr, script) = scripted_server().await;
    let app = spawn_app_with(Some(embedder(addr)), 20).await;
    script.fail.store(true, Ordering::SeqCst);
    // The provider fails: the souvenir is stored anyway, without a vector.
    let Receipt::SouvenirStored { souvenir } =
        app.done("memoriser_souvenir", json!({"texte": "Le vélo est chez Martin"})).await
    else {
        panic!()
    };
    assert_eq!(souvenir.embedding_model, None);
    // Still failing: the search falls back to keywords and says so.
    let Receipt::Search { search, hits, .. } = app.done("chercher_dans_memoire", json!({"requete": "vélo"})).await
    else {
        panic!()
    };
    assert_eq!(search, SearchMode::Keyword { reason: KeywordReason::EmbeddingFailed });
    assert_eq!(hits.len(), 1);

    script.fail.store(false, Ordering::SeqCst);
    let Receipt::Search { search, hits, .. } = app.done("chercher_dans_memoire", json!({"requete": "velo"})).await
    else {
        panic!()
    };
    assert!(matches!(search, SearchMode::Vector { .. }));
    assert_eq!(hits.len(), 1);
    let stored = app.fresh().await.list_souvenirs().await.unwrap();
    assert_eq!(stored[0].embedding_model.as_deref(), Some("mistral-embed"), "backfilled");
    assert!(script.inputs.lock().unwrap().iter().any(|t| t == "Le vélo est chez Martin"));
}

#[tokio::test]
async fn a_wrong_api_key_falls_back_to_keywords_and_says_so() {
    let (addr, _) = scripted_server().await;
    let bad: Arc<dyn Embedder> = Arc::new(
        HttpEmbedder::new(&format!("http://{addr}"), Secret::new("wrong"), "mistral-embed", Duration::from_secs(5))
            .unwrap(),
    );
    let app = spawn_app_with(Some(bad), 20).await;
    app.done("memoriser_souvenir", json!({"texte": "code du portail 1234"})).await;
    let Receipt::Search { search, hits, .. } = app.done("chercher_dans_memoire", json!({"requete": "portail"})).await
    else {
        panic!()
    };
    assert_eq!(search, SearchMode::Keyword { reason: KeywordReason::EmbeddingFailed });
    assert_eq!(hits.len(), 1);
}
