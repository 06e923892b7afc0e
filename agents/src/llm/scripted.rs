//! A scripted language-model server for tests (feature `scripted`): it speaks the real wire
//! formats over real HTTP (chat completions, Anthropic Messages, embeddings; streaming or
//! not), answers from a FIFO script, and records every request it received.
//!
//! It stands in for APIs that cannot be reached from here, so it reproduces their documented
//! behaviours, the failing ones included. What it reproduces, and where that is documented:
//!
//! - Chat completions (OpenAI, and Mistral which speaks the same format), `POST
//!   /v1/chat/completions`: a whole answer is `choices[0].message` (`content`, `tool_calls` with
//!   `function.arguments` as JSON text), `finish_reason` `stop` or `tool_calls`, and `usage` —
//!   <https://platform.openai.com/docs/api-reference/chat/object>.
//! - Its stream: `chat.completion.chunk` deltas (first the role, text in pieces, tool-call
//!   arguments in pieces keyed by `index`), a chunk with the `finish_reason`, then `data: [DONE]`
//!   — <https://platform.openai.com/docs/api-reference/chat/streaming>.
//! - `stream_options.include_usage`: one more chunk before `[DONE]`, with `choices: []` and the
//!   usage of the whole request; "if the stream is interrupted, you may not receive the final
//!   usage chunk" (`Reply::Cut` can drop it) — OpenAI API reference, `ChatCompletionStreamOptions`,
//!   <https://platform.openai.com/docs/api-reference/chat/create#chat-create-stream_options>.
//!   Without it, the usage rides on the finish chunk, as Mistral's `CompletionChunk.usage` does
//!   (Mistral OpenAPI, <https://docs.mistral.ai/api/>).
//! - Any finish reason, not only the happy ones (`Reply::WithStopReason`): Mistral documents
//!   `stop`, `length`, `model_length`, `error` and `tool_calls` for a streamed choice (Mistral
//!   OpenAPI, `CompletionResponseStreamChoice.finish_reason`); OpenAI adds `content_filter`.
//! - An error after the HTTP 200, inside the stream (`Reply::StreamError`): a chunk
//!   `{"error":{"message","type","param","code"}}` and no `[DONE]`; the official SDK raises an
//!   `APIError` on any chunk carrying `error` —
//!   <https://github.com/openai/openai-python/blob/main/src/openai/_streaming.py>.
//! - Error bodies `{"error":{"message","type","param","code"}}` (`Reply::ApiError`), 429 with a
//!   `retry-after` (`Reply::WithHeader`) — <https://platform.openai.com/docs/guides/error-codes>,
//!   <https://platform.openai.com/docs/guides/rate-limits>.
//! - Anthropic Messages, `POST /v1/messages`: content blocks `text` and `tool_use` (`input` an
//!   object), `stop_reason` `end_turn` or `tool_use`, `usage.input_tokens`/`output_tokens` —
//!   <https://docs.anthropic.com/en/api/messages>.
//! - Its stream: named events, each with the matching `type` in its data: `message_start` (empty
//!   content), per block `content_block_start`, `content_block_delta` (`text_delta`, or
//!   `input_json_delta` carrying partial JSON text), `content_block_stop`, then `message_delta`
//!   (stop reason, cumulative `output_tokens`) and `message_stop`, with a `ping` —
//!   <https://docs.anthropic.com/en/docs/build-with-claude/streaming> ("Event types").
//! - Its `event: error` after the 200, e.g. `{"type":"error","error":{"type":"overloaded_error",
//!   "message":"Overloaded"}}`, "which would normally correspond to an HTTP 529 in a
//!   non-streaming context"; the stream then ends without `message_stop` (`Reply::StreamError`)
//!   — same page, "Error events".
//! - Error bodies `{"type":"error","error":{"type","message"},"request_id"}` and the documented
//!   status of each type: 400 `invalid_request_error`, 401 `authentication_error`, 403
//!   `permission_error`, 404 `not_found_error`, 413 `request_too_large`, 429 `rate_limit_error`,
//!   500 `api_error`, 529 `overloaded_error` (`Reply::ApiError`) —
//!   <https://docs.anthropic.com/en/api/errors>; a 429 says how long to wait in `retry-after`
//!   (`Reply::WithHeader`) — <https://docs.anthropic.com/en/api/rate-limits>.
//! - Server-sent events as a byte stream: every event reaches the client in two TCP chunks cut
//!   in its middle (even inside a UTF-8 character), which the event-stream format allows —
//!   <https://html.spec.whatwg.org/multipage/server-sent-events.html>.
//! - A connection that breaks before the end (`Reply::Cut`): the body stops after some events
//!   (or half the JSON body) and then ends cleanly, is aborted mid-body, or hangs with the
//!   connection open — the idle and dropped connections the Anthropic errors page warns about
//!   ("Long requests") and the interrupted stream of OpenAI's note above.
//! - Claude Code as a client of `/v1/messages` (the CLI `@anthropic-ai/claude-code`, observed on
//!   2.1.332 with this server and with a stdlib Python twin, docs/interface.md §6.4; Atlas' system
//!   tier runs the real CLI against it, atlas/tests/real_claude.rs): it posts to
//!   `/v1/messages?beta=true` (the route matches the path; the query is recorded), one request
//!   per model turn, streamed, with `tools`, `thinking`, `context_management` and a `role:
//!   "system"` entry inside `messages` (none of which this server checks); a `tool_use` block it
//!   receives as `content_block_start` + `input_json_delta` pieces is run for real (Bash, Write…)
//!   and its `tool_result` comes back in the next request; after a stream that broke or stalled
//!   it re-sends the same turn without streaming, which gets the next reply of the script; with
//!   `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` it sends nothing else (no `HEAD /api/hello`).
//!   Its own retries are worth knowing when scripting a failure: three 529 in a row and it
//!   gives up (≈2 s); 429, 5xx and a refused connection are retried ten times over ≈3 minutes
//!   (`CLAUDE_CODE_MAX_RETRIES` lowers that); a stalled stream is only noticed after 300 s.
//! - Embeddings, `POST /v1/embeddings`: `{"object":"list","data":[{"object":"embedding",
//!   "index","embedding"}],"model","usage"}`, one vector per input, in order —
//!   <https://platform.openai.com/docs/api-reference/embeddings/object> (Mistral's is the same).
//!
//! What it does NOT reproduce (a test that needs one of these must not trust this server):
//!
//! - `tool_choice` (`"required"` on chat completions, `{"type": "any"}` on Messages): the real
//!   APIs then answer with a tool call — <https://platform.openai.com/docs/guides/function-calling>
//!   ("required"), <https://docs.anthropic.com/en/docs/build-with-claude/tool-use> ("Forcing tool
//!   use") — but an OpenAI-compatible local server may ignore the field; this server serves the
//!   script as written, so a test can script either, and checks the recorded request.
//! - Authentication and request validation: any key is accepted and no body is refused (no 400
//!   for a missing `max_tokens`, Anthropic's role alternation, empty text blocks, or Mistral's
//!   nine-character tool-call ids); tests check the recorded request instead.
//! - Real rate limiting, the `x-ratelimit-*` / `anthropic-ratelimit-*` and `request-id`
//!   headers (only what a test adds with `Reply::WithHeader`), and Mistral's own error body
//!   (`{"object":"error","message",..}`): `/v1/chat/completions` errors use OpenAI's shape.
//! - Pacing: deltas come as fast as the client reads them; `Reply::Delayed` waits before the
//!   headers only, `Reply::Cut` with `CutKind::Hang` is the one mid-stream stall.
//! - Pings other than the one after the first text block, event types added after this was
//!   written (the docs ask clients to ignore unknown ones), extended thinking and
//!   `signature_delta`, citations, server tools, `n > 1` choices, logprobs, `refusal`.
//! - Embeddings: the vectors are 8-dimension hashes of the text, not meanings; they are not
//!   scripted and never fail.
//! - HTTP/2, TLS, compression.

use std::collections::VecDeque;
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
    /// An error in the documented body shape of the endpoint that received the request
    /// (Anthropic's on `/v1/messages`, OpenAI's on `/v1/chat/completions`), with this status.
    ApiError {
        status: u16,
        error_type: String,
        message: String,
    },
    /// A stream that fails after its HTTP 200: the first `after` events of the inner reply's
    /// stream (at most all but its terminator), then the format's error event, and the stream
    /// ends there (no `message_stop`, no `[DONE]`). A request that did not ask for a stream gets
    /// the HTTP status documented for `error_type` instead, with the error body.
    StreamError {
        after: usize,
        error_type: String,
        message: String,
        reply: Box<Reply>,
    },
    /// The connection breaks before the end of the inner reply: a stream stops after its first
    /// `after` events (at most all but its terminator), a whole body after its first half; then
    /// `kind` says what the client sees.
    Cut {
        after: usize,
        kind: CutKind,
        reply: Box<Reply>,
    },
    /// The inner reply with this `finish_reason` (chat completions) or `stop_reason`
    /// (Anthropic) instead of the natural one, e.g. `length`, `error`, `max_tokens`.
    WithStopReason(String, Box<Reply>),
}

/// How a `Reply::Cut` body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutKind {
    /// The body ends cleanly, as if complete: only the content tells it is not.
    Close,
    /// The connection is aborted mid-body: the client gets a read error.
    Reset,
    /// Nothing more is sent and the connection stays open.
    Hang,
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
    /// E.g. `api_error(529, "overloaded_error", "Overloaded")`.
    pub fn api_error(status: u16, error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Reply::ApiError { status, error_type: error_type.into(), message: message.into() }
    }
    /// E.g. `stream_error(4, "overloaded_error", "Overloaded", Reply::text(..))`.
    pub fn stream_error(after: usize, error_type: impl Into<String>, message: impl Into<String>, reply: Reply) -> Self {
        Reply::StreamError { after, error_type: error_type.into(), message: message.into(), reply: Box::new(reply) }
    }
    pub fn cut(after: usize, kind: CutKind, reply: Reply) -> Self {
        Reply::Cut { after, kind, reply: Box::new(reply) }
    }
    pub fn with_stop_reason(reason: impl Into<String>, reply: Reply) -> Self {
        Reply::WithStopReason(reason.into(), Box::new(reply))
    }
}

/// The HTTP status documented for an error type (Anthropic's table; OpenAI's types where they
/// differ); unknown types are a 500.
pub fn status_of_error_type(error_type: &str) -> u16 {
    match error_type {
        "invalid_request_error" => 400,
        "authentication_error" | "invalid_api_key" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" | "rate_limit_exceeded" | "insufficient_quota" | "requests" | "tokens" => 429,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => 500,
    }
}

/// A request as the server received it. Header names are lower case.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub path: String,
    /// The query string, when there was one (Claude Code adds `beta=true`).
    pub query: Option<String>,
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

    /// Drops the replies still in the script (a corpus run scripts each case afresh).
    pub fn clear(&self) {
        lock(&self.shared.script).clear();
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
    lock(&shared.requests).push(RecordedRequest {
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        headers,
        body: body.clone(),
    });
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

/// How the served body ends, once the wrappers are unwrapped.
enum Ending {
    Complete,
    Error { after: usize, error_type: String, message: String },
    Cut { after: usize, kind: CutKind },
}

/// What a reply serves before an `Ending` is applied: a whole body, or the events of a stream
/// (each one `event:`/`data:` lines and the blank line; the last one is the terminator).
enum Served {
    Whole { status: StatusCode, content_type: &'static str, body: Bytes },
    Events(Vec<String>),
}

async fn answer(shared: &Shared, format: Format, request: &Value, request_bytes: usize) -> Response {
    let next = lock(&shared.script).pop_front();
    let Some(mut reply) = next.or_else(|| lock(&shared.fallback).clone()) else {
        return json_response(StatusCode::INTERNAL_SERVER_ERROR, &json!({"error": "script exhausted"}));
    };
    let mut shape = Shape::default();
    let mut extra_headers = Vec::new();
    let mut ending = Ending::Complete;
    let terminal = loop {
        match reply {
            Reply::Delayed(delay, inner) => {
                tokio::time::sleep(delay).await;
                reply = *inner;
            }
            Reply::WithUsage(u, inner) => {
                shape.usage = Some(u);
                reply = *inner;
            }
            Reply::WithStopReason(r, inner) => {
                shape.stop_reason = Some(r);
                reply = *inner;
            }
            Reply::WithHeader(name, value, inner) => {
                extra_headers.push((name, value));
                reply = *inner;
            }
            Reply::StreamError { after, error_type, message, reply: inner } => {
                ending = Ending::Error { after, error_type, message };
                reply = *inner;
            }
            Reply::Cut { after, kind, reply: inner } => {
                ending = Ending::Cut { after, kind };
                reply = *inner;
            }
            other => break other,
        }
    };
    let stream = request.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let error_whole = |error_type: &str, message: &str, status: u16| Served::Whole {
        status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        content_type: "application/json",
        body: Bytes::from(error_body(format, error_type, message).to_string()),
    };
    let served = match terminal {
        Reply::Status(code, body) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let content_type =
                if serde_json::from_str::<Value>(&body).is_ok() { "application/json" } else { "text/plain" };
            Served::Whole { status, content_type, body: Bytes::from(body) }
        }
        Reply::Garbage(body) => {
            Served::Whole { status: StatusCode::OK, content_type: "application/json", body: body.into() }
        }
        Reply::ApiError { status, error_type, message } => error_whole(&error_type, &message, status),
        Reply::Text(_) | Reply::ToolCalls { .. } if !stream && matches!(ending, Ending::Error { .. }) => {
            // Not streaming, the same failure is an HTTP error before any content.
            let Ending::Error { error_type, message, .. } = &ending else { unreachable!("matched above") };
            error_whole(error_type, message, status_of_error_type(error_type))
        }
        Reply::Text(content) => completion(shared, format, request, request_bytes, content, Vec::new(), &shape),
        Reply::ToolCalls { content, calls } => {
            completion(shared, format, request, request_bytes, content, calls, &shape)
        }
        Reply::Delayed(..)
        | Reply::WithUsage(..)
        | Reply::WithHeader(..)
        | Reply::WithStopReason(..)
        | Reply::StreamError { .. }
        | Reply::Cut { .. } => unreachable!("unwrapped above"),
    };
    let mut response = match (served, ending) {
        (Served::Whole { status, content_type, body }, Ending::Complete | Ending::Error { .. }) => {
            raw_response(status, content_type, Body::from(body))
        }
        (Served::Whole { status, content_type, body }, Ending::Cut { kind, .. }) => {
            let half = body.slice(..body.len() / 2);
            raw_response(status, content_type, streamed_body(vec![half], Some(kind)))
        }
        (Served::Events(frames), Ending::Complete) => sse_response(frames, None),
        (Served::Events(mut frames), Ending::Error { after, error_type, message }) => {
            frames.truncate(after.min(frames.len().saturating_sub(1)));
            frames.push(error_frame(format, &error_type, &message));
            sse_response(frames, None)
        }
        (Served::Events(mut frames), Ending::Cut { after, kind }) => {
            frames.truncate(after.min(frames.len().saturating_sub(1)));
            sse_response(frames, Some(kind))
        }
    };
    for (name, value) in extra_headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// The documented error body of each format.
fn error_body(format: Format, error_type: &str, message: &str) -> Value {
    match format {
        Format::Anthropic => json!({"type": "error", "error": {"type": error_type, "message": message},
            "request_id": "req_scripted"}),
        Format::OpenAi => json!({"error": {"message": message, "type": error_type, "param": null, "code": null}}),
    }
}

/// The error event a stream carries after its 200.
fn error_frame(format: Format, error_type: &str, message: &str) -> String {
    match format {
        Format::Anthropic => {
            let data = json!({"type": "error", "error": {"type": error_type, "message": message}});
            format!("event: error\ndata: {data}\n\n")
        }
        Format::OpenAi => format!("data: {}\n\n", error_body(format, error_type, message)),
    }
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

/// What the wrappers changed in a completion.
#[derive(Debug, Default)]
struct Shape {
    usage: Option<Usage>,
    stop_reason: Option<String>,
}

/// One answer, whatever its wire form.
struct Completion<'a> {
    id: u64,
    model: &'a Value,
    content: &'a str,
    calls: &'a [Call],
    usage: Usage,
    /// `finish_reason` (chat completions) or `stop_reason` (Anthropic).
    stop: &'a str,
}

fn completion(
    shared: &Shared,
    format: Format,
    request: &Value,
    request_bytes: usize,
    content: String,
    calls: Vec<(String, String)>,
    shape: &Shape,
) -> Served {
    let prefix = match format {
        Format::OpenAi => "call_",
        Format::Anthropic => "toolu_",
    };
    let calls: Vec<Call> = calls
        .into_iter()
        .map(|(name, arguments)| Call { id: format!("{prefix}{}", shared.next_id()), name, arguments })
        .collect();
    let usage = shape.usage.unwrap_or_else(|| {
        let completion_chars =
            content.chars().count() + calls.iter().map(|c| c.arguments.chars().count()).sum::<usize>();
        Usage {
            prompt_tokens: u32::try_from(request_bytes / 4).unwrap_or(u32::MAX).max(1),
            completion_tokens: u32::try_from(completion_chars / 4).unwrap_or(u32::MAX).max(1),
        }
    });
    let natural = match (format, calls.is_empty()) {
        (Format::OpenAi, true) => "stop",
        (Format::OpenAi, false) => "tool_calls",
        (Format::Anthropic, true) => "end_turn",
        (Format::Anthropic, false) => "tool_use",
    };
    let model = request.get("model").cloned().unwrap_or(Value::Null);
    let answer = Completion {
        id: shared.next_id(),
        model: &model,
        content: &content,
        calls: &calls,
        usage,
        stop: shape.stop_reason.as_deref().unwrap_or(natural),
    };
    let stream = request.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let whole = |value: Value| Served::Whole {
        status: StatusCode::OK,
        content_type: "application/json",
        body: Bytes::from(value.to_string()),
    };
    match (format, stream) {
        (Format::OpenAi, false) => whole(openai_whole(&answer)),
        (Format::Anthropic, false) => whole(anthropic_whole(&answer)),
        (Format::OpenAi, true) => {
            let include_usage = request.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true);
            Served::Events(openai_frames(&answer, include_usage))
        }
        (Format::Anthropic, true) => Served::Events(anthropic_frames(&answer)),
    }
}

fn openai_whole(a: &Completion) -> Value {
    let mut message = json!({"role": "assistant", "content": a.content});
    if !a.calls.is_empty() {
        message["tool_calls"] = a
            .calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
    }
    json!({
        "id": format!("chatcmpl-{}", a.id), "object": "chat.completion", "created": 0, "model": a.model,
        "choices": [{"index": 0, "message": message, "finish_reason": a.stop}],
        "usage": openai_usage(a.usage),
    })
}

fn openai_usage(usage: Usage) -> Value {
    json!({"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens})
}

fn openai_frames(a: &Completion, include_usage: bool) -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-{}", a.id), "object": "chat.completion.chunk", "created": 0, "model": a.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut frames = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    for piece in pieces(a.content, 6) {
        frames.push(chunk(json!({"content": piece}), Value::Null));
    }
    for (index, call) in a.calls.iter().enumerate() {
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
    let mut last = chunk(json!({}), json!(a.stop));
    if include_usage {
        // OpenAI: a last chunk with no choices carries the usage.
        frames.push(last);
        frames.push(json!({"id": format!("chatcmpl-{}", a.id), "object": "chat.completion.chunk", "created": 0,
            "model": a.model, "choices": [], "usage": openai_usage(a.usage)}));
    } else {
        // Mistral: the usage rides on the chunk with the finish reason.
        last["usage"] = openai_usage(a.usage);
        frames.push(last);
    }
    let mut out: Vec<String> = frames.into_iter().map(|f| format!("data: {f}\n\n")).collect();
    out.push("data: [DONE]\n\n".to_string());
    out
}

fn anthropic_whole(a: &Completion) -> Value {
    let mut blocks = Vec::new();
    if !a.content.is_empty() {
        blocks.push(json!({"type": "text", "text": a.content}));
    }
    for call in a.calls {
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input(&call.arguments)}));
    }
    json!({
        "id": format!("msg_{}", a.id), "type": "message", "role": "assistant", "model": a.model, "content": blocks,
        "stop_reason": a.stop, "stop_sequence": null,
        "usage": {"input_tokens": a.usage.prompt_tokens, "output_tokens": a.usage.completion_tokens},
    })
}

fn input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| json!({}))
}

fn anthropic_frames(a: &Completion) -> Vec<String> {
    let mut frames: Vec<(&str, Value)> = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{}", a.id), "type": "message",
            "role": "assistant", "model": a.model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": a.usage.prompt_tokens, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !a.content.is_empty() {
        frames.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        frames.push(("ping", json!({"type": "ping"})));
        for piece in pieces(a.content, 6) {
            frames.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        frames.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    for call in a.calls {
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
        json!({"type": "message_delta", "delta": {"stop_reason": a.stop, "stop_sequence": null},
            "usage": {"output_tokens": a.usage.completion_tokens}}),
    ));
    frames.push(("message_stop", json!({"type": "message_stop"})));
    frames.into_iter().map(|(event, data)| format!("event: {event}\ndata: {data}\n\n")).collect()
}

/// Each frame goes out as two chunks cut in the middle (even inside a UTF-8 character), so
/// clients must reassemble events across chunks.
fn sse_response(frames: Vec<String>, end: Option<CutKind>) -> Response {
    let mut chunks: Vec<Bytes> = Vec::new();
    for frame in frames {
        let bytes = Bytes::from(frame);
        let middle = bytes.len() / 2;
        chunks.push(bytes.slice(..middle));
        chunks.push(bytes.slice(middle..));
    }
    let mut response = raw_response(StatusCode::OK, "text/event-stream", streamed_body(chunks, end));
    response.headers_mut().insert(axum::http::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A chunked body sent piece by piece; `end` says how it stops after the last piece (`None`:
/// normally).
fn streamed_body(chunks: Vec<Bytes>, end: Option<CutKind>) -> Body {
    let stream = futures_util::stream::unfold((chunks.into_iter(), end), |(mut chunks, end)| async move {
        if let Some(chunk) = chunks.next() {
            tokio::task::yield_now().await;
            return Some((Ok::<_, std::io::Error>(chunk), (chunks, end)));
        }
        if end == Some(CutKind::Reset) {
            tokio::task::yield_now().await;
        }
        match end {
            None | Some(CutKind::Close) => None,
            // An error from the body makes the server abort the connection mid-body; yielding
            // first lets it flush what was sent, so the client reads those events before the cut.
            Some(CutKind::Reset) => Some((
                Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "scripted connection reset")),
                (chunks, None),
            )),
            Some(CutKind::Hang) => {
                futures_util::future::pending::<()>().await;
                None
            }
        }
    });
    Body::from_stream(stream)
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
