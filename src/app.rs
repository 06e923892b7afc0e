//! Opening Arthur: settings → data directory → database → tool context. Everything a
//! command needs to run a tool lives in [`App`].

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::embeddings::{Embedder, HttpEmbedder};
use arthur_agents::llm::{ChatModel, ProviderKind};
use arthur_agents::memory::MemoryStore;
use arthur_agents::time::{Clock, SystemClock};
use arthur_agents::tools::{ToolBox, ToolContext};
use arthur_agents::turn::TurnEngine;

use crate::config::{Settings, DEFAULT_CHAT_MODEL, DEFAULT_EMBED_MODEL, DEFAULT_ROUTER_MODEL};

/// Timeout of one embeddings request.
const EMBED_TIMEOUT: Duration = Duration::from_secs(20);

pub struct App {
    pub settings: Settings,
    /// The memory store (`db.memory`).
    pub store: Arc<dyn MemoryStore>,
    pub db: crate::db::Database,
    pub tools: ToolBox,
    pub ctx: ToolContext,
    pub engine: Arc<TurnEngine>,
}

impl App {
    /// Opens the store named by the settings (creating the data directory and the
    /// database on first start) with the wall clock.
    pub async fn open(settings: Settings) -> anyhow::Result<Self> {
        Self::open_with_clock(settings, Arc::new(SystemClock)).await
    }

    pub async fn open_with_clock(settings: Settings, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&settings.data_dir)
            .with_context(|| format!("creating data directory {}", settings.data_dir.display()))?;
        let db = crate::db::Database::open(settings.database_url.as_str()).await?;
        let store = db.memory.clone();
        let ctx = ToolContext {
            store: store.clone(),
            clock,
            tz: settings.timezone,
            embedder: embedder(&settings)?,
            preferences_cap: settings.preferences_cap,
        };
        let engine =
            Arc::new(TurnEngine::new(llm_client(&settings)?, ctx.clone()).with_local_first(settings.local_first));
        Ok(Self { settings, store, db, tools: ToolBox::new(), ctx, engine })
    }
}

/// The Atlas classifier's model: the same fallback chain, with `ATLAS_CLASSIFIER_MODEL` as
/// the first provider's small model and the spec's 30 s budget for the whole call.
pub fn classifier_llm(settings: &Settings) -> anyhow::Result<Option<Arc<dyn ChatModel>>> {
    let mut s = settings.clone();
    s.models.router = settings.models.atlas_classifier.clone();
    llm_client_with(&s, ClientOptions { total_timeout: Duration::from_secs(30), ..ClientOptions::default() })
}

/// One provider only, with this chat model (its default otherwise): the client's own choice
/// for its draft replies (no silent move to another provider). None: no key for it.
pub fn provider_llm(
    settings: &Settings,
    kind: ProviderKind,
    model: Option<String>,
) -> anyhow::Result<Option<(Arc<dyn ChatModel>, ProviderKind)>> {
    let p = &settings.providers;
    let provider = match kind {
        ProviderKind::Mistral => &p.mistral,
        ProviderKind::Anthropic => &p.anthropic,
        ProviderKind::OpenAi => &p.openai,
    };
    let Some(provider) = provider else { return Ok(None) };
    let endpoint = ProviderEndpoint::new(kind, provider.base_url.clone(), provider.api_key.clone());
    let client =
        LlmClient::new(vec![endpoint], ConfiguredModels { router: None, chat: model }, ClientOptions::default())
            .context("building the model client")?;
    Ok(Some((Arc::new(client), kind)))
}

fn llm_client(settings: &Settings) -> anyhow::Result<Option<Arc<dyn ChatModel>>> {
    llm_client_with(settings, ClientOptions::default())
}

/// The fallback chain mistral → anthropic → openai over the providers that have a key;
/// `None` when there is none (Arthur is offline).
fn llm_client_with(settings: &Settings, options: ClientOptions) -> anyhow::Result<Option<Arc<dyn ChatModel>>> {
    let p = &settings.providers;
    let endpoints: Vec<ProviderEndpoint> = [
        (ProviderKind::Mistral, &p.mistral),
        (ProviderKind::Anthropic, &p.anthropic),
        (ProviderKind::OpenAi, &p.openai),
    ]
    .into_iter()
    .filter_map(|(kind, provider)| {
        provider.as_ref().map(|pr| ProviderEndpoint::new(kind, pr.base_url.clone(), pr.api_key.clone()))
    })
    .collect();
    let Some(first) = endpoints.first().map(|e| e.kind) else {
        return Ok(None);
    };
    // The configured names apply to the first provider; the built-in defaults are
    // Mistral's, so on another first provider they give way to that provider's defaults.
    let chosen =
        |value: &str, default: &str| (first == ProviderKind::Mistral || value != default).then(|| value.to_string());
    let models = ConfiguredModels {
        router: chosen(&settings.models.router, DEFAULT_ROUTER_MODEL),
        chat: chosen(&settings.models.chat, DEFAULT_CHAT_MODEL),
    };
    let client = LlmClient::new(endpoints, models, options).context("building the model client")?;
    Ok(Some(Arc::new(client)))
}

/// The embeddings provider: Mistral when its key is set, else an OpenAI-compatible one.
/// Anthropic has no embeddings endpoint. None → keyword search, said in every answer.
fn embedder(settings: &Settings) -> anyhow::Result<Option<Arc<dyn Embedder>>> {
    let p = &settings.providers;
    let chosen = if let Some(m) = &p.mistral {
        Some((m, settings.models.embed.clone()))
    } else if let Some(o) = &p.openai {
        // The default model name is Mistral's; an OpenAI-compatible server needs its own.
        let model = if settings.models.embed == DEFAULT_EMBED_MODEL {
            "text-embedding-3-small".to_string()
        } else {
            settings.models.embed.clone()
        };
        Some((o, model))
    } else {
        None
    };
    Ok(match chosen {
        None => None,
        Some((provider, model)) => Some(Arc::new(
            HttpEmbedder::new(&provider.base_url, provider.api_key.clone(), &model, EMBED_TIMEOUT)
                .context("building the embeddings client")?,
        )),
    })
}
