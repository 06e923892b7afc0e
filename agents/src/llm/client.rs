//! The one door to language models: `LlmClient` tries the configured providers in the order
//! mistral → anthropic → openai, retries transient failures with backoff, falls through to
//! the next provider on anything else, and records every attempt for the trace.

use std::error::Error as _;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};

use super::sse::{SseEvent, SseParser};
use super::types::{Attempt, ChatModel, ChatRequest, ChatResponse, LlmError, ModelRole, ProviderKind, StreamEvent};
use super::wire::{Answer, WireFailure};
use super::{anthropic, openai};
use crate::secret::Secret;

pub const MISTRAL_ROUTER_MODEL: &str = "mistral-small-latest";
pub const MISTRAL_CHAT_MODEL: &str = "mistral-large-latest";
pub const ANTHROPIC_ROUTER_MODEL: &str = "claude-haiku-4-5";
pub const ANTHROPIC_CHAT_MODEL: &str = "claude-sonnet-4-5";
pub const OPENAI_ROUTER_MODEL: &str = "gpt-4o-mini";
pub const OPENAI_CHAT_MODEL: &str = "gpt-4o";

/// A provider's own model for a role, used when nothing is configured or after a fallback.
pub fn default_model(kind: ProviderKind, role: ModelRole) -> &'static str {
    match (kind, role) {
        (ProviderKind::Mistral, ModelRole::Router) => MISTRAL_ROUTER_MODEL,
        (ProviderKind::Mistral, ModelRole::Chat) => MISTRAL_CHAT_MODEL,
        (ProviderKind::Anthropic, ModelRole::Router) => ANTHROPIC_ROUTER_MODEL,
        (ProviderKind::Anthropic, ModelRole::Chat) => ANTHROPIC_CHAT_MODEL,
        (ProviderKind::OpenAi, ModelRole::Router) => OPENAI_ROUTER_MODEL,
        (ProviderKind::OpenAi, ModelRole::Chat) => OPENAI_CHAT_MODEL,
    }
}

/// The public endpoint of each provider (the `*_BASE_URL` defaults), without `/v1`.
pub fn default_base_url(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Mistral => "https://api.mistral.ai",
        ProviderKind::Anthropic => "https://api.anthropic.com",
        ProviderKind::OpenAi => "https://api.openai.com",
    }
}

fn rank(kind: ProviderKind) -> u8 {
    match kind {
        ProviderKind::Mistral => 0,
        ProviderKind::Anthropic => 1,
        ProviderKind::OpenAi => 2,
    }
}

/// One provider with a key. A provider without a key simply has no endpoint.
#[derive(Debug, Clone)]
pub struct ProviderEndpoint {
    pub kind: ProviderKind,
    /// Without `/v1` (the client appends the API path); a trailing `/` is ignored.
    pub base_url: String,
    pub api_key: Secret,
}

impl ProviderEndpoint {
    pub fn new(kind: ProviderKind, base_url: impl Into<String>, api_key: Secret) -> Self {
        Self { kind, base_url: base_url.into(), api_key }
    }
}

/// Models chosen by configuration (`ARTHUR_ROUTER_MODEL`, `ARTHUR_CHAT_MODEL`); they apply
/// to the first provider of the chain only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfiguredModels {
    pub router: Option<String>,
    pub chat: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Extra tries on the same provider after a 429, a 5xx, a connection error or a timeout.
    pub retries_per_provider: u32,
    /// First backoff; doubles with each retry. A `Retry-After` (seconds) wins. Both capped at 5 s.
    pub backoff_base: Duration,
    /// One attempt: until the whole answer (non-streaming), or until the headers and then
    /// between two chunks (streaming).
    pub attempt_timeout: Duration,
    /// The whole call, retries and fallbacks included.
    pub total_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            retries_per_provider: 2,
            backoff_base: Duration::from_millis(250),
            attempt_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(90),
        }
    }
}

const MAX_BACKOFF: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ClientBuildError {
    #[error("the HTTP client could not be built: {0}")]
    Http(#[from] reqwest::Error),
}

/// The fallback chain over every configured provider.
#[derive(Debug, Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    endpoints: Vec<ProviderEndpoint>,
    models: ConfiguredModels,
    options: ClientOptions,
}

impl LlmClient {
    pub fn new(
        endpoints: Vec<ProviderEndpoint>,
        models: ConfiguredModels,
        options: ClientOptions,
    ) -> Result<Self, ClientBuildError> {
        let http = reqwest::Client::builder().build()?;
        Ok(Self::with_http_client(http, endpoints, models, options))
    }

    /// With a caller's HTTP client (proxies, TLS settings). Timeouts are the client's own.
    pub fn with_http_client(
        http: reqwest::Client,
        mut endpoints: Vec<ProviderEndpoint>,
        models: ConfiguredModels,
        options: ClientOptions,
    ) -> Self {
        for endpoint in &mut endpoints {
            endpoint.base_url = endpoint.base_url.trim_end_matches('/').to_string();
        }
        endpoints.sort_by_key(|e| rank(e.kind)); // stable: several endpoints of a kind keep their order
        Self { http, endpoints, models, options }
    }

    /// True when no provider is configured (Arthur is offline).
    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty()
    }

    /// The providers and models a call for `role` tries, in order.
    pub fn chain(&self, role: ModelRole) -> Vec<(ProviderKind, String)> {
        self.endpoints.iter().enumerate().map(|(i, e)| (e.kind, self.model_for(i, e.kind, role))).collect()
    }

    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    fn model_for(&self, position: usize, kind: ProviderKind, role: ModelRole) -> String {
        let configured = match role {
            ModelRole::Router => self.models.router.as_deref(),
            ModelRole::Chat => self.models.chat.as_deref(),
        };
        match configured.filter(|m| position == 0 && !m.trim().is_empty()) {
            Some(model) => model.to_string(),
            None => default_model(kind, role).to_string(),
        }
    }

    fn backoff(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(MAX_BACKOFF),
            None => self.options.backoff_base.saturating_mul(2u32.saturating_pow(retry)).min(MAX_BACKOFF),
        }
    }

    async fn run_chain(
        &self,
        request: &ChatRequest,
        stream: Option<&(dyn Fn(StreamEvent) + Send + Sync)>,
        started: Instant,
        attempts: &mut Vec<Attempt>,
        current: &mut Option<(ProviderKind, String, Instant)>,
    ) -> Option<ChatResponse> {
        for (position, endpoint) in self.endpoints.iter().enumerate() {
            let model = self.model_for(position, endpoint.kind, request.role);
            for retry in 0..=self.options.retries_per_provider {
                let attempt_start = Instant::now();
                *current = Some((endpoint.kind, model.clone(), attempt_start));
                let result = self.attempt(endpoint, &model, request, stream, attempt_start).await;
                *current = None;
                let latency_ms = millis(attempt_start.elapsed());
                match result {
                    Ok(success) => {
                        tracing::debug!(
                            provider = endpoint.kind.as_str(),
                            model = %model,
                            latency_ms,
                            request_bytes = success.request_bytes,
                            "language-model call answered"
                        );
                        attempts.push(Attempt {
                            provider: endpoint.kind,
                            model: model.clone(),
                            status: Some(success.status),
                            error: None,
                            latency_ms,
                        });
                        return Some(ChatResponse {
                            content: success.answer.content,
                            tool_calls: success.answer.tool_calls,
                            usage: success.answer.usage,
                            provider: endpoint.kind,
                            model,
                            latency_ms: millis(started.elapsed()),
                            ttft_ms: success.ttft_ms,
                            request_bytes: success.request_bytes,
                            attempts: std::mem::take(attempts),
                        });
                    }
                    Err(failure) => {
                        let error = redact(&failure.message, &endpoint.api_key);
                        let will_retry = failure.retryable && retry < self.options.retries_per_provider;
                        tracing::warn!(
                            provider = endpoint.kind.as_str(),
                            model = %model,
                            status = ?failure.status,
                            latency_ms,
                            will_retry,
                            error = %error,
                            "language-model attempt failed"
                        );
                        attempts.push(Attempt {
                            provider: endpoint.kind,
                            model: model.clone(),
                            status: failure.status,
                            error: Some(error),
                            latency_ms,
                        });
                        if !will_retry {
                            break;
                        }
                        tokio::time::sleep(self.backoff(retry, failure.retry_after)).await;
                    }
                }
            }
        }
        None
    }

    async fn attempt(
        &self,
        endpoint: &ProviderEndpoint,
        model: &str,
        request: &ChatRequest,
        stream: Option<&(dyn Fn(StreamEvent) + Send + Sync)>,
        start: Instant,
    ) -> Result<Success, Failure> {
        let streaming = stream.is_some();
        let (path, body) = match endpoint.kind {
            ProviderKind::Anthropic => (anthropic::PATH, anthropic::request_body(model, request, streaming)),
            kind => (openai::PATH, openai::request_body(kind, model, request, streaming)),
        };
        let body = serde_json::to_vec(&body).map_err(|e| Failure::malformed(None, format!("request body: {e}")))?;
        let request_bytes = body.len();
        let mut builder = self
            .http
            .post(format!("{}{path}", endpoint.base_url))
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, if streaming { "text/event-stream" } else { "application/json" })
            .body(body);
        builder = match endpoint.kind {
            ProviderKind::Anthropic => {
                builder.header("x-api-key", endpoint.api_key.expose()).header("anthropic-version", anthropic::VERSION)
            }
            _ => builder.bearer_auth(endpoint.api_key.expose()),
        };

        let limit = self.options.attempt_timeout;
        let response = match tokio::time::timeout(limit, builder.send()).await {
            Err(_) => return Err(Failure::timeout(limit)),
            Ok(Err(e)) => return Err(Failure::transport(&e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let retry_after = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Duration::from_secs_f64(s.min(MAX_BACKOFF.as_secs_f64())));
            let body = match tokio::time::timeout(limit, response.bytes()).await {
                Ok(Ok(bytes)) => bytes,
                _ => Default::default(),
            };
            let detail = snippet(&body);
            // OpenAI documents a 429 "insufficient_quota" that waiting does not clear: the
            // next provider is tried at once instead of retrying this one.
            let quota_exhausted = status == 429 && {
                let value: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                ["/error/code", "/error/type"]
                    .iter()
                    .any(|p| value.pointer(p).and_then(serde_json::Value::as_str) == Some("insufficient_quota"))
            };
            let retryable = (status == 429 && !quota_exhausted) || status == 408 || (500..600).contains(&status);
            let message = if detail.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {detail}") };
            return Err(Failure { status: Some(status), message, retryable, retry_after });
        }

        let Some(callback) = stream else {
            let bytes = match tokio::time::timeout(limit, response.bytes()).await {
                Err(_) => return Err(Failure::timeout(limit).after(status)),
                Ok(Err(e)) => return Err(Failure::transport(&e).after(status)),
                Ok(Ok(bytes)) => bytes,
            };
            let answer = parse_whole(endpoint.kind, &bytes).map_err(|m| Failure::malformed(Some(status), m))?;
            return Ok(Success { status, answer, ttft_ms: None, request_bytes });
        };

        let content_type =
            response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_ascii_lowercase();
        if content_type.contains("application/json") {
            // A server that ignored `stream`: take the whole answer and report it at once.
            let bytes = match tokio::time::timeout(limit, response.bytes()).await {
                Err(_) => return Err(Failure::timeout(limit).after(status)),
                Ok(Err(e)) => return Err(Failure::transport(&e).after(status)),
                Ok(Ok(bytes)) => bytes,
            };
            let answer = parse_whole(endpoint.kind, &bytes).map_err(|m| Failure::malformed(Some(status), m))?;
            let ttft_ms = Some(millis(start.elapsed()));
            if !answer.content.is_empty() {
                callback(StreamEvent::TextDelta(answer.content.clone()));
            }
            for call in &answer.tool_calls {
                callback(StreamEvent::ToolCallStarted { name: call.name.clone() });
            }
            return Ok(Success { status, answer, ttft_ms, request_bytes });
        }

        let mut response = response;
        let mut parser = SseParser::new();
        let mut state = match endpoint.kind {
            ProviderKind::Anthropic => StreamState::Anthropic(anthropic::StreamState::default()),
            _ => StreamState::OpenAi(openai::StreamState::default()),
        };
        let mut ttft_ms = None;
        let mut complete = false;
        while !complete {
            let chunk = match tokio::time::timeout(limit, response.chunk()).await {
                Err(_) => return Err(Failure::timeout(limit).after(status)),
                Ok(Err(e)) => return Err(Failure::transport(&e).after(status)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            let events = parser.push(&chunk);
            complete = state.feed(events, callback, start, &mut ttft_ms).map_err(|f| f.with_status(status))?;
        }
        if !complete {
            state.feed(parser.finish(), callback, start, &mut ttft_ms).map_err(|f| f.with_status(status))?;
        }
        let answer = state.finish().map_err(|f| f.with_status(status))?;
        Ok(Success { status, answer, ttft_ms, request_bytes })
    }
}

#[async_trait]
impl ChatModel for LlmClient {
    async fn chat(
        &self,
        request: &ChatRequest,
        stream: Option<&(dyn Fn(StreamEvent) + Send + Sync)>,
    ) -> Result<ChatResponse, LlmError> {
        if self.endpoints.is_empty() {
            return Err(LlmError::NoProvider);
        }
        let started = Instant::now();
        let mut attempts = Vec::new();
        let mut current = None;
        let limit = self.options.total_timeout;
        let chain = self.run_chain(request, stream, started, &mut attempts, &mut current);
        match tokio::time::timeout(limit, chain).await {
            Ok(Some(response)) => Ok(response),
            Ok(None) => Err(LlmError::AllFailed(attempts)),
            Err(_) => {
                let error = format!("total timeout of {} ms exceeded", millis(limit));
                if let Some((provider, model, attempt_start)) = current {
                    let latency_ms = millis(attempt_start.elapsed());
                    tracing::warn!(provider = provider.as_str(), model = %model, latency_ms, error = %error,
                        "language-model attempt failed");
                    attempts.push(Attempt { provider, model, status: None, error: Some(error), latency_ms });
                } else {
                    tracing::warn!(error = %error, "language-model call gave up");
                }
                Err(LlmError::AllFailed(attempts))
            }
        }
    }
}

impl WireFailure {
    fn with_status(self, status: u16) -> Failure {
        Failure { status: Some(status), message: self.message, retryable: self.retryable, retry_after: None }
    }
}

struct Success {
    status: u16,
    answer: Answer,
    ttft_ms: Option<u64>,
    request_bytes: usize,
}

struct Failure {
    status: Option<u16>,
    message: String,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn timeout(limit: Duration) -> Self {
        Self {
            status: None,
            message: format!("timed out after {} ms", millis(limit)),
            retryable: true,
            retry_after: None,
        }
    }

    fn transport(error: &reqwest::Error) -> Self {
        let mut message = if error.is_timeout() {
            "timed out".to_string()
        } else if error.is_connect() {
            "connection failed".to_string()
        } else if error.is_body() || error.is_decode() {
            "reading the answer failed".to_string()
        } else {
            "request failed".to_string()
        };
        // The chain of causes, never the URL (reqwest's own Display would add it).
        let mut source = error.source();
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        Self { status: error.status().map(|s| s.as_u16()), message, retryable: true, retry_after: None }
    }

    /// The same failure, met while reading the body of an answer that came with `status`
    /// (a 200 did come back: the attempt says so).
    fn after(self, status: u16) -> Self {
        Self { status: Some(status), ..self }
    }

    fn malformed(status: Option<u16>, message: String) -> Self {
        Self { status, message: format!("malformed answer: {message}"), retryable: false, retry_after: None }
    }
}

enum StreamState {
    OpenAi(openai::StreamState),
    Anthropic(anthropic::StreamState),
}

impl StreamState {
    /// Feeds events; `Ok(true)` once the stream said it is complete.
    fn feed(
        &mut self,
        events: Vec<SseEvent>,
        callback: &(dyn Fn(StreamEvent) + Send + Sync),
        start: Instant,
        ttft_ms: &mut Option<u64>,
    ) -> Result<bool, WireFailure> {
        let mut emit = |event: StreamEvent| {
            if ttft_ms.is_none() {
                *ttft_ms = Some(millis(start.elapsed()));
            }
            callback(event);
        };
        for event in &events {
            let done = match self {
                StreamState::OpenAi(state) => state.on_event(event, &mut emit),
                StreamState::Anthropic(state) => state.on_event(event, &mut emit),
            }
            .map_err(|f| WireFailure { message: format!("malformed stream: {}", f.message), ..f })?;
            if done {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn finish(self) -> Result<Answer, WireFailure> {
        match self {
            StreamState::OpenAi(state) => state.finish(),
            StreamState::Anthropic(state) => state.finish(),
        }
        .map_err(|f| WireFailure { message: format!("malformed stream: {}", f.message), ..f })
    }
}

fn parse_whole(kind: ProviderKind, bytes: &[u8]) -> Result<Answer, String> {
    match kind {
        ProviderKind::Anthropic => anthropic::parse_response(bytes),
        _ => openai::parse_response(bytes),
    }
}

/// The start of an error body, on one line, for an attempt's error text.
fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = one_line.chars().take(300).collect();
    if one_line.chars().count() > 300 {
        out.push('…');
    }
    out
}

/// Some providers echo the key in their error bodies: it never leaves this module.
fn redact(text: &str, key: &Secret) -> String {
    crate::redact::redact_known(text, key.expose())
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped_and_retry_after_wins() {
        let options = ClientOptions { backoff_base: Duration::from_millis(250), ..ClientOptions::default() };
        let client = LlmClient::with_http_client(reqwest::Client::new(), vec![], ConfiguredModels::default(), options);
        assert_eq!(client.backoff(0, None), Duration::from_millis(250));
        assert_eq!(client.backoff(1, None), Duration::from_millis(500));
        assert_eq!(client.backoff(2, None), Duration::from_secs(1));
        assert_eq!(client.backoff(10, None), MAX_BACKOFF);
        assert_eq!(client.backoff(0, Some(Duration::from_secs(2))), Duration::from_secs(2));
        assert_eq!(client.backoff(0, Some(Duration::from_secs(60))), MAX_BACKOFF);
    }

    #[test]
    fn chain_is_ordered_and_only_the_first_provider_uses_the_configured_model() {
        let key = Secret::new("k");
        let client = LlmClient::with_http_client(
            reqwest::Client::new(),
            vec![
                ProviderEndpoint::new(ProviderKind::OpenAi, "http://o/", key.clone()),
                ProviderEndpoint::new(ProviderKind::Anthropic, "http://a", key.clone()),
            ],
            ConfiguredModels { router: Some("my-router".into()), chat: None },
            ClientOptions::default(),
        );
        assert_eq!(
            client.chain(ModelRole::Router),
            vec![(ProviderKind::Anthropic, "my-router".to_string()), (ProviderKind::OpenAi, "gpt-4o-mini".to_string())]
        );
        assert_eq!(
            client.chain(ModelRole::Chat),
            vec![
                (ProviderKind::Anthropic, "claude-sonnet-4-5".to_string()),
                (ProviderKind::OpenAi, "gpt-4o".to_string())
            ]
        );
        assert_eq!(client.endpoints[1].base_url, "http://o");
    }

    #[test]
    fn redaction_and_snippets() {
        assert_eq!(redact("bad key sk-123 given", &Secret::new("sk-123")), "bad key [REDACTED] given");
        assert_eq!(snippet(b"{\n  \"error\":\n \"x\"}"), "{ \"error\": \"x\"}");
        assert_eq!(snippet("é".repeat(400).as_bytes()).chars().count(), 301);
    }
}
