//! A scripted language-model server for tests (feature `scripted`): it speaks the real wire
//! formats over real HTTP (chat completions, Anthropic Messages, embeddings; streaming or
//! not), answers from a FIFO script, and records every request it received.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use super::types::Usage;

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Text(String),
    /// Tool calls as `(name, arguments JSON text)`, after an optional text.
    ToolCalls {
        content: String,
        calls: Vec<(String, String)>,
    },
    /// An HTTP error status with this body.
    Status(u16, String),
    /// 200 with a body that is not the wire shape (served as `application/json`).
    Garbage(String),
    /// Waits, then serves the inner reply.
    Delayed(Duration, Box<Reply>),
    /// The inner reply with this usage instead of the derived one.
    WithUsage(Usage, Box<Reply>),
    /// The inner reply with one more response header (e.g. `Retry-After`).
    WithHeader(String, String, Box<Reply>),
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Self {
        Reply::Text(text.into())
    }
    pub fn tool_calls(content: impl Into<String>, calls: &[(&str, &str)]) -> Self {
        Reply::ToolCalls {
            content: content.into(),
            calls: calls.iter().map(|(n, a)| (n.to_string(), a.to_string())).collect(),
        }
    }
    pub fn status(code: u16, body: impl Into<String>) -> Self {
        Reply::Status(code, body.into())
    }
    pub fn delayed(delay: Duration, reply: Reply) -> Self {
        Reply::Delayed(delay, Box::new(reply))
    }
    pub fn with_usage(usage: Usage, reply: Reply) -> Self {
        Reply::WithUsage(usage, Box::new(reply))
    }
    pub fn with_header(name: impl Into<String>, value: impl Into<String>, reply: Reply) -> Self {
        Reply::WithHeader(name.into(), value.into(), Box::new(reply))
    }
}

/// A request as the server received it. Header names are lower case.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The JSON body; a body that is not JSON is kept as a string.
    pub body: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Option<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    ids: AtomicU64,
}

impl Shared {
    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::SeqCst) + 1
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug)]
struct ServerTask(tokio::task::JoinHandle<()>);

impl Drop for ServerTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The server; it stops when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct ScriptedLlm {
    shared: Arc<Shared>,
    addr: SocketAddr,
    _task: Arc<ServerTask>,
}

impl ScriptedLlm {
    /// Binds 127.0.0.1 on a free port and serves in a tokio task.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/v1/messages", post(messages))
            .route("/v1/embeddings", post(embeddings))
            .fallback(not_found)
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::warn!(error = %e, "scripted language-model server stopped");
            }
        });
        Self { shared, addr, _task: Arc::new(ServerTask(task)) }
    }

    /// `http://127.0.0.1:PORT`, without a trailing `/`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Appends a reply to the script (first in, first served).
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.script).push_back(reply);
    }

    /// Served when the script is empty; `None` (the default) answers HTTP 500.
    pub fn set_fallback(&self, reply: Option<Reply>) {
        *lock(&self.shared.fallback) = reply;
    }

    /// Every request received, in order (embeddings and unknown paths included).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Chat requests only (`/v1/chat/completions` and `/v1/messages`).
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.path == "/v1/chat/completions" || r.path == "/v1/messages").collect()
    }

    /// Replies still in the script.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    OpenAi,
    Anthropic,
}

fn record(shared: &Shared, uri: &Uri, headers: &HeaderMap, body: &Bytes) -> Value {
    let body = serde_json::from_slice(body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into()));
    let headers = headers
        .iter()
        .map(|(n, v)| (n.as_str().to_ascii_lowercase(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    lock(&shared.requests).push(RecordedRequest { path: uri.path().to_string(), headers, body: body.clone() });
    body
}

async fn chat_completions(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let request = record(&shared, &uri, &headers, &body);
    answer(&shared, Format::OpenAi, &request, body.len()).await
}

async fn messages(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let request = record(&shared, &uri, &headers, &body);
    answer(&shared, Format::Anthropic, &request, body.len()).await
}

async fn not_found(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    record(&shared, &uri, &headers, &body);
    json_response(StatusCode::NOT_FOUND, &json!({"error": "not found"}))
}

/// A deterministic vector per input, served without touching the script.
async fn embeddings(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let request = record(&shared, &uri, &headers, &body);
    let inputs: Vec<String> = match &request["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect(),
        _ => return json_response(StatusCode::BAD_REQUEST, &json!({"error": "input missing"})),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": embed(text)}))
        .collect();
    let tokens = inputs.iter().map(|t| t.len() / 4 + 1).sum::<usize>();
    json_response(
        StatusCode::OK,
        &json!({"object": "list", "data": data, "model": request["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}),
    )
}

fn embed(text: &str) -> Vec<f32> {
    (0..8u64)
        .map(|dim| {
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ dim;
            for b in text.bytes() {
                hash ^= u64::from(b);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            ((hash % 2001) as f32 / 1000.0) - 1.0
        })
        .collect()
}

async fn answer(shared: &Shared, format: Format, request: &Value, request_bytes: usize) -> Response {
    let next = lock(&shared.script).pop_front();
    let Some(mut reply) = next.or_else(|| lock(&shared.fallback).clone()) else {
        return json_response(StatusCode::INTERNAL_SERVER_ERROR, &json!({"error": "script exhausted"}));
    };
    let mut usage = None;
    let mut extra_headers = Vec::new();
    let terminal = loop {
        match reply {
            Reply::Delayed(delay, inner) => {
                tokio::time::sleep(delay).await;
                reply = *inner;
            }
            Reply::WithUsage(u, inner) => {
                usage = Some(u);
                reply = *inner;
            }
            Reply::WithHeader(name, value, inner) => {
                extra_headers.push((name, value));
                reply = *inner;
            }
            other => break other,
        }
    };
    let mut response = match terminal {
        Reply::Status(code, body) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let content_type =
                if serde_json::from_str::<Value>(&body).is_ok() { "application/json" } else { "text/plain" };
            raw_response(status, content_type, Body::from(body))
        }
        Reply::Garbage(body) => raw_response(StatusCode::OK, "application/json", Body::from(body)),
        Reply::Text(content) => completion(shared, format, request, request_bytes, content, Vec::new(), usage),
        Reply::ToolCalls { content, calls } => {
            completion(shared, format, request, request_bytes, content, calls, usage)
        }
        Reply::Delayed(..) | Reply::WithUsage(..) | Reply::WithHeader(..) => unreachable!("unwrapped above"),
    };
    for (name, value) in extra_headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

fn raw_response(status: StatusCode, content_type: &'static str, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(axum::http::header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response {
    raw_response(status, "application/json", Body::from(value.to_string()))
}

/// Text pieces of at most `size` characters (at least one piece for non-empty text).
fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

/// Arguments in at least two pieces when they have two characters or more.
fn argument_pieces(arguments: &str) -> Vec<String> {
    let n = arguments.chars().count();
    pieces(arguments, n.div_ceil(3).max(1))
}

struct Call {
    id: String,
    name: String,
    arguments: String,
}

fn completion(
    shared: &Shared,
    format: Format,
    request: &Value,
    request_bytes: usize,
    content: String,
    calls: Vec<(String, String)>,
    usage: Option<Usage>,
) -> Response {
    let prefix = match format {
        Format::OpenAi => "call_",
        Format::Anthropic => "toolu_",
    };
    let calls: Vec<Call> = calls
        .into_iter()
        .map(|(name, arguments)| Call { id: format!("{prefix}{}", shared.next_id()), name, arguments })
        .collect();
    let usage = usage.unwrap_or_else(|| {
        let completion_chars =
            content.chars().count() + calls.iter().map(|c| c.arguments.chars().count()).sum::<usize>();
        Usage {
            prompt_tokens: u32::try_from(request_bytes / 4).unwrap_or(u32::MAX).max(1),
            completion_tokens: u32::try_from(completion_chars / 4).unwrap_or(u32::MAX).max(1),
        }
    });
    let model = request.get("model").cloned().unwrap_or(Value::Null);
    let stream = request.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let message_id = shared.next_id();
    match (format, stream) {
        (Format::OpenAi, false) => {
            json_response(StatusCode::OK, &openai_whole(message_id, &model, &content, &calls, usage))
        }
        (Format::Anthropic, false) => {
            json_response(StatusCode::OK, &anthropic_whole(message_id, &model, &content, &calls, usage))
        }
        (Format::OpenAi, true) => {
            let include_usage = request.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true);
            sse_response(openai_frames(message_id, &model, &content, &calls, usage, include_usage))
        }
        (Format::Anthropic, true) => sse_response(anthropic_frames(message_id, &model, &content, &calls, usage)),
    }
}

fn openai_whole(id: u64, model: &Value, content: &str, calls: &[Call], usage: Usage) -> Value {
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
    }
    json!({
        "id": format!("chatcmpl-{id}"), "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message,
            "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
        "usage": openai_usage(usage),
    })
}

fn openai_usage(usage: Usage) -> Value {
    json!({"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens})
}

fn openai_frames(
    id: u64,
    model: &Value,
    content: &str,
    calls: &[Call],
    usage: Usage,
    include_usage: bool,
) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut frames = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    for piece in pieces(content, 6) {
        frames.push(chunk(json!({"content": piece}), Value::Null));
    }
    for (index, call) in calls.iter().enumerate() {
        frames.push(chunk(
            json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in argument_pieces(&call.arguments) {
            frames
                .push(chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}), Value::Null));
        }
    }
    let mut last = chunk(json!({}), json!(if calls.is_empty() { "stop" } else { "tool_calls" }));
    if include_usage {
        // OpenAI: a last chunk with no choices carries the usage.
        frames.push(last);
        frames.push(json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk", "created": 0,
            "model": model, "choices": [], "usage": openai_usage(usage)}));
    } else {
        // Mistral: the usage rides on the chunk with the finish reason.
        last["usage"] = openai_usage(usage);
        frames.push(last);
    }
    let mut out: Vec<String> = frames.into_iter().map(|f| format!("data: {f}\n\n")).collect();
    out.push("data: [DONE]\n\n".to_string());
    out
}

fn anthropic_whole(id: u64, model: &Value, content: &str, calls: &[Call], usage: Usage) -> Value {
    let mut blocks = Vec::new();
    if !content.is_empty() {
        blocks.push(json!({"type": "text", "text": content}));
    }
    for call in calls {
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input(&call.arguments)}));
    }
    json!({
        "id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": model, "content": blocks,
        "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" }, "stop_sequence": null,
        "usage": {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens},
    })
}

fn input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| json!({}))
}

fn anthropic_frames(id: u64, model: &Value, content: &str, calls: &[Call], usage: Usage) -> Vec<String> {
    let mut frames: Vec<(&str, Value)> = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{id}"), "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.prompt_tokens, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !content.is_empty() {
        frames.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        frames.push(("ping", json!({"type": "ping"})));
        for piece in pieces(content, 6) {
            frames.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        frames.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    for call in calls {
        frames.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
        ));
        for piece in argument_pieces(&call.arguments) {
            frames.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        frames.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    frames.push((
        "message_delta",
        json!({"type": "message_delta",
            "delta": {"stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" }, "stop_sequence": null},
            "usage": {"output_tokens": usage.completion_tokens}}),
    ));
    frames.push(("message_stop", json!({"type": "message_stop"})));
    frames.into_iter().map(|(event, data)| format!("event: {event}\ndata: {data}\n\n")).collect()
}

/// Each frame goes out as two chunks cut in the middle (even inside a UTF-8 character), so
/// clients must reassemble events across chunks.
fn sse_response(frames: Vec<String>) -> Response {
    let mut chunks: Vec<Bytes> = Vec::new();
    for frame in frames {
        let bytes = Bytes::from(frame);
        let middle = bytes.len() / 2;
        chunks.push(bytes.slice(..middle));
        chunks.push(bytes.slice(middle..));
    }
    let stream = futures_util::stream::unfold(chunks.into_iter(), |mut chunks| async move {
        let chunk = chunks.next()?;
        tokio::task::yield_now().await;
        Some((Ok::<_, Infallible>(chunk), chunks))
    });
    let mut response = raw_response(StatusCode::OK, "text/event-stream", Body::from_stream(stream));
    response.headers_mut().insert(axum::http::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_pieces_split_in_at_least_two() {
        assert_eq!(argument_pieces("{}"), vec!["{", "}"]);
        assert!(argument_pieces(r#"{"texte":"acheter du pain"}"#).len() >= 2);
        assert_eq!(argument_pieces("").len(), 0);
    }
}
