//! Shared helpers for the integration tests: a real SQLite file in a temp dir, a manual
//! clock, the real tool registry, and fresh reads through a second connection pool.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use arthur_agents::llm::embeddings::Embedder;
use arthur_agents::memory::{export, MemoryStore, SqliteStore};
use arthur_agents::time::{Clock, ManualClock};
use arthur_agents::tools::{Outcome, Receipt, Refusal, ToolBox, ToolContext};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;

/// Monday 30 November 2026, 10:00 in Paris.
pub fn start_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
}

pub struct TestApp {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub store: Arc<SqliteStore>,
    pub clock: Arc<ManualClock>,
    pub tools: ToolBox,
    pub ctx: ToolContext,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(None, 20).await
}

pub async fn spawn_app_with(embedder: Option<Arc<dyn Embedder>>, preferences_cap: u32) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("arthur.db");
    let store = Arc::new(SqliteStore::open_path(&path).await.unwrap());
    let clock = Arc::new(ManualClock::new(start_time()));
    let ctx = ToolContext {
        store: store.clone() as Arc<dyn MemoryStore>,
        clock: clock.clone() as Arc<dyn Clock>,
        tz: chrono_tz::Europe::Paris,
        embedder,
        preferences_cap,
    };
    TestApp { dir, path, store, clock, tools: ToolBox::new(), ctx }
}

impl TestApp {
    pub async fn call(&self, name: &str, args: Value) -> Outcome {
        self.tools.invoke(&self.ctx, name, &args).await
    }

    pub async fn done(&self, name: &str, args: Value) -> Receipt {
        match self.call(name, args.clone()).await {
            Outcome::Done(r) => r,
            other => panic!("{name} {args} expected Done, got {other:?}"),
        }
    }

    /// Calls a tool that must refuse, and checks that nothing in the store changed.
    pub async fn refused(&self, name: &str, args: Value) -> Refusal {
        let before = self.snapshot().await;
        let outcome = self.call(name, args.clone()).await;
        let after = self.snapshot().await;
        assert_eq!(before, after, "{name} {args} refused but the store changed");
        match outcome {
            Outcome::Refused(r) => r,
            other => panic!("{name} {args} expected Refused, got {other:?}"),
        }
    }

    /// A second, independent pool on the same file: what a fresh reader sees.
    pub async fn fresh(&self) -> SqliteStore {
        SqliteStore::open_path(&self.path).await.unwrap()
    }

    /// Everything the store holds, as JSON, read through a fresh pool.
    pub async fn snapshot(&self) -> Value {
        let fresh = self.fresh().await;
        let v = serde_json::to_value(export::export(&fresh, start_time()).await.unwrap()).unwrap();
        fresh.close().await;
        v
    }

    pub async fn sql(&self, statement: &str) {
        sqlx::query(statement).execute(self.store.pool()).await.unwrap();
    }
}

// ---------- the honest turn over a scripted model server ----------

use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::ProviderKind;
use arthur_agents::secret::Secret;
use arthur_agents::turn::TurnEngine;

/// Fast retries for tests: one retry, 1 ms backoff, short timeouts.
pub fn test_client_options() -> ClientOptions {
    ClientOptions {
        retries_per_provider: 1,
        backoff_base: std::time::Duration::from_millis(1),
        attempt_timeout: std::time::Duration::from_secs(5),
        total_timeout: std::time::Duration::from_secs(20),
    }
}

pub struct TurnApp {
    pub app: TestApp,
    pub engine: TurnEngine,
    pub llm: ScriptedLlm,
}

/// A test app whose only provider (Mistral) is a scripted server.
pub async fn spawn_turn_app() -> TurnApp {
    let app = spawn_app().await;
    let llm = ScriptedLlm::start().await;
    let client = LlmClient::new(
        vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("test-key"))],
        ConfiguredModels { router: Some("mistral-small-latest".into()), chat: Some("mistral-large-latest".into()) },
        test_client_options(),
    )
    .unwrap();
    let engine = TurnEngine::new(Some(Arc::new(client)), app.ctx.clone());
    TurnApp { app, engine, llm }
}

/// The router's answer.
pub fn route(agent: &str, domain: &str, action: &str) -> Reply {
    Reply::text(format!(r#"{{"agent": "{agent}", "domain": "{domain}", "action": "{action}"}}"#))
}

// ---------- the web server on port 0 ----------

pub struct WebApp {
    pub turn: TurnApp,
    pub base: String,
    pub http: reqwest::Client,
}

/// The web router over a test app and a scripted model, listening on 127.0.0.1:0.
pub async fn spawn_web_app(demo: bool, token: Option<&str>) -> WebApp {
    let turn = spawn_turn_app().await;
    let engine = Arc::new(TurnEngine::new(
        Some(Arc::new(
            LlmClient::new(
                vec![ProviderEndpoint::new(ProviderKind::Mistral, turn.llm.base_url(), Secret::new("test-key"))],
                ConfiguredModels::default(),
                test_client_options(),
            )
            .unwrap(),
        )),
        turn.app.ctx.clone(),
    ));
    let state = Arc::new(arthur::web::WebState {
        engine,
        store: turn.app.ctx.store.clone(),
        tz: turn.app.ctx.tz,
        preferences_cap: turn.app.ctx.preferences_cap,
        demo,
        token: token.map(Secret::new),
        health: Default::default(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(arthur::web::run(listener, state, std::future::pending()));
    WebApp { turn, base, http: reqwest::Client::new() }
}

impl WebApp {
    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.http.get(format!("{}{path}", self.base)).send().await.unwrap()
    }

    /// POST /api/chat; returns the NDJSON lines.
    pub async fn chat(&self, message: &str, conversation: Option<&str>) -> Vec<Value> {
        let response = self
            .http
            .post(format!("{}/api/chat", self.base))
            .json(&serde_json::json!({"message": message, "conversation": conversation}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let text = response.text().await.unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}
