//! Embeddings for souvenirs: `POST {base}/v1/embeddings` with `{"model", "input": [...]}`,
//! answered with `{"data": [{"index", "embedding"}]}`.

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;

use crate::secret::Secret;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding request failed: {0}")]
    Http(#[from] reqwest::Error),
    #[error("embedding provider answered {status}")]
    Status { status: u16 },
    #[error("embedding answer malformed: {0}")]
    Malformed(&'static str),
}

/// Turns texts into vectors.
#[async_trait]
pub trait Embedder: Send + Sync {
    /// The model name, stored beside each vector so a change of model is detected.
    fn model(&self) -> &str;
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// An OpenAI-compatible embeddings endpoint (Mistral by default).
#[derive(Debug, Clone)]
pub struct HttpEmbedder {
    client: reqwest::Client,
    base_url: String,
    api_key: Secret,
    model: String,
}

impl HttpEmbedder {
    pub fn new(base_url: &str, api_key: Secret, model: &str, timeout: Duration) -> Result<Self, EmbedError> {
        let client = reqwest::Client::builder().timeout(timeout).build()?;
        Ok(Self { client, base_url: base_url.trim_end_matches('/').to_string(), api_key, model: model.to_string() })
    }
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

#[async_trait]
impl Embedder for HttpEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let response = self
            .client
            .post(format!("{}/v1/embeddings", self.base_url))
            .bearer_auth(self.api_key.expose())
            .json(&serde_json::json!({"model": self.model, "input": texts}))
            .send()
            .await?;
        if !response.status().is_success() {
            return Err(EmbedError::Status { status: response.status().as_u16() });
        }
        let body: EmbeddingsResponse = response.json().await?;
        if body.data.len() != texts.len() {
            return Err(EmbedError::Malformed("not one vector per input"));
        }
        let mut out = vec![Vec::new(); texts.len()];
        for (position, item) in body.data.into_iter().enumerate() {
            let slot = item.index.unwrap_or(position);
            if slot >= out.len() || item.embedding.is_empty() {
                return Err(EmbedError::Malformed("bad index or empty vector"));
            }
            out[slot] = item.embedding;
        }
        if out.iter().any(Vec::is_empty) {
            return Err(EmbedError::Malformed("missing vector"));
        }
        Ok(out)
    }
}
