//! The OpenAI-compatible chat-completions wire format (`POST {base}/v1/chat/completions`),
//! spoken by Mistral, OpenAI, llama.cpp and Ollama: request bodies, answers, and the SSE
//! stream of deltas.

use serde_json::{json, Map, Value};

use super::sse::SseEvent;
use super::types::{ChatRequest, Message, ProviderKind, Role, StreamEvent, ToolCall, ToolChoice, Usage};
use super::wire::{short, Answer, WireFailure};

pub(crate) const PATH: &str = "/v1/chat/completions";

/// The JSON body for one call.
pub(crate) fn request_body(kind: ProviderKind, model: &str, request: &ChatRequest, stream: bool) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(|m| message(kind, m)).collect();
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        // "required": the model must call at least one tool (OpenAI's and Mistral's
        // documented value; Mistral also knows "any").
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
        };
        body.insert("tool_choice".into(), json!(choice));
    }
    if request.json_mode {
        body.insert("response_format".into(), json!({"type": "json_object"}));
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(m) = request.max_tokens {
        body.insert("max_tokens".into(), json!(m));
    }
    body.insert("stream".into(), json!(stream));
    if stream && kind == ProviderKind::OpenAi {
        // Mistral puts usage in its last chunk unasked; OpenAI only when asked.
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

fn message(kind: ProviderKind, m: &Message) -> Value {
    let id = |id: &str| if kind == ProviderKind::Mistral { mistral_tool_id(id) } else { id.to_string() };
    match m.role {
        Role::System => json!({"role": "system", "content": m.content}),
        Role::User => json!({"role": "user", "content": m.content}),
        Role::Assistant if m.tool_calls.is_empty() => json!({"role": "assistant", "content": m.content}),
        Role::Assistant => {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": id(&c.id), "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments}})
                })
                .collect();
            json!({"role": "assistant", "content": m.content, "tool_calls": calls})
        }
        Role::Tool => {
            let mut v = json!({"role": "tool", "content": m.content,
                "tool_call_id": id(m.tool_call_id.as_deref().unwrap_or_default())});
            if let Some(name) = &m.name {
                v["name"] = json!(name);
            }
            v
        }
    }
}

/// Mistral accepts only tool-call ids of nine ASCII letters or digits. Ids minted by another
/// provider (after a fallback in the same conversation) are mapped, the same way in the
/// assistant message and in the tool message that answers it.
pub(crate) fn mistral_tool_id(id: &str) -> String {
    if id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return id.to_string();
    }
    const ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    // FNV-1a: stable across runs and platforms.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (0..9)
        .map(|_| {
            let c = ALPHABET[(hash % 62) as usize] as char;
            hash /= 62;
            c
        })
        .collect()
}

/// A non-streaming answer: `choices[0].message` and `usage`.
pub(crate) fn parse_response(body: &[u8]) -> Result<Answer, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("answer is not JSON: {e}"))?;
    let message = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("message"))
        .ok_or("answer has no choices[0].message")?;
    // Mistral ends a generation that failed on its side with `finish_reason: "error"`:
    // whatever text came with it is not an answer.
    if value.pointer("/choices/0/finish_reason").and_then(Value::as_str) == Some("error") {
        return Err("the provider ended the answer with finish_reason \"error\"".into());
    }
    let content = content_text(message.get("content"))?;
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").filter(|v| !v.is_null()) {
        let calls = calls.as_array().ok_or("tool_calls is not a list")?;
        for (i, call) in calls.iter().enumerate() {
            let function = call.get("function").ok_or("tool call without function")?;
            let name = function.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
            let name = name.ok_or("tool call without a name")?.to_string();
            let arguments = match function.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(), // some servers send an object
            };
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            tool_calls.push(ToolCall { id: fill_id(id, i), name, arguments: fill_arguments(arguments) });
        }
    }
    Ok(Answer { content, tool_calls, usage: usage(value.get("usage")) })
}

fn content_text(content: Option<&Value>) -> Result<String, String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        // Content parts: keep the text ones.
        Some(Value::Array(parts)) => {
            Ok(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().concat())
        }
        Some(_) => Err("message content is neither text nor parts".into()),
    }
}

fn usage(value: Option<&Value>) -> Option<Usage> {
    let u = value.filter(|v| v.is_object())?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).map(|v| u32::try_from(v).unwrap_or(u32::MAX));
    let prompt = n("prompt_tokens");
    let completion = n("completion_tokens");
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    Some(Usage { prompt_tokens: prompt.unwrap_or(0), completion_tokens: completion.unwrap_or(0) })
}

fn fill_id(id: &str, position: usize) -> String {
    if id.is_empty() {
        format!("call_{}", position + 1)
    } else {
        id.to_string()
    }
}

fn fill_arguments(arguments: String) -> String {
    if arguments.trim().is_empty() {
        "{}".to_string()
    } else {
        arguments
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates a streamed answer from its `data:` events.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    content: String,
    calls: Vec<PartialCall>,
    usage: Option<Usage>,
    finished: bool,
    done: bool,
}

impl StreamState {
    /// Handles one event; `Ok(true)` once `[DONE]` arrived.
    pub(crate) fn on_event(
        &mut self,
        event: &SseEvent,
        emit: &mut dyn FnMut(StreamEvent),
    ) -> Result<bool, WireFailure> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| WireFailure::malformed(format!("stream chunk is not JSON: {e}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(WireFailure::retryable(format!("error in stream: {}", short(error))));
        }
        if let Some(u) = usage(chunk.get("usage")) {
            self.usage = Some(u);
        }
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
            return Ok(false); // e.g. OpenAI's final usage chunk
        };
        match choice.get("finish_reason").and_then(Value::as_str) {
            // Mistral: the generation failed on its side; the text so far is not an answer.
            Some("error") => {
                return Err(WireFailure::retryable("the provider ended the stream with finish_reason \"error\"".into()))
            }
            Some(_) => self.finished = true,
            None => {}
        }
        let Some(delta) = choice.get("delta") else { return Ok(false) };
        if let Some(text) = delta.get("content").and_then(Value::as_str).filter(|t| !t.is_empty()) {
            self.content.push_str(text);
            emit(StreamEvent::TextDelta(text.to_string()));
        }
        if let Some(pieces) = delta.get("tool_calls").and_then(Value::as_array) {
            for piece in pieces {
                self.tool_piece(piece, emit);
            }
        }
        Ok(false)
    }

    fn tool_piece(&mut self, piece: &Value, emit: &mut dyn FnMut(StreamEvent)) {
        let index = piece.get("index").and_then(Value::as_u64);
        let id = piece.get("id").and_then(Value::as_str).unwrap_or_default();
        let function = piece.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or_default();
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        let position = match index {
            Some(index) => self.calls.iter().position(|c| c.index == Some(index)),
            // No index (some servers): a new id opens a call, a piece without one continues the last.
            None if !id.is_empty() => self.calls.iter().position(|c| c.id == id),
            None => self.calls.len().checked_sub(1),
        };
        let position = position.unwrap_or_else(|| {
            self.calls.push(PartialCall { index, ..PartialCall::default() });
            self.calls.len() - 1
        });
        let call = &mut self.calls[position];
        if call.id.is_empty() && !id.is_empty() {
            call.id = id.to_string();
        }
        if call.name.is_empty() && !name.is_empty() {
            call.name = name.to_string();
            emit(StreamEvent::ToolCallStarted { name: name.to_string() });
        }
        call.arguments.push_str(&arguments);
    }

    /// The whole answer, once the stream ended.
    pub(crate) fn finish(self) -> Result<Answer, WireFailure> {
        if !self.done && !self.finished {
            return Err(WireFailure::malformed("stream ended before [DONE]".to_string()));
        }
        let mut tool_calls = Vec::new();
        for (i, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() {
                return Err(WireFailure::malformed("streamed tool call without a name".to_string()));
            }
            tool_calls.push(ToolCall {
                id: fill_id(&call.id, i),
                name: call.name,
                arguments: fill_arguments(call.arguments),
            });
        }
        Ok(Answer { content: self.content, tool_calls, usage: self.usage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistral_ids_are_nine_alphanumerics_and_stable() {
        assert_eq!(mistral_tool_id("abcDEF123"), "abcDEF123");
        let mapped = mistral_tool_id("toolu_01A09q90qw90lq917835lq9");
        assert_eq!(mapped.len(), 9);
        assert!(mapped.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(mapped, mistral_tool_id("toolu_01A09q90qw90lq917835lq9"));
        assert_ne!(mapped, mistral_tool_id("toolu_2"));
    }

    #[test]
    fn stream_without_done_or_finish_reason_is_malformed() {
        let mut state = StreamState::default();
        let event = SseEvent { event: None, data: r#"{"choices":[{"delta":{"content":"a"}}]}"#.into() };
        assert!(!state.on_event(&event, &mut |_| {}).unwrap());
        assert!(state.finish().is_err());
    }

    #[test]
    fn tool_pieces_without_index_are_grouped_by_id() {
        let mut state = StreamState::default();
        let mut events = Vec::new();
        for data in [
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{\"k\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"y","arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ] {
            state.on_event(&SseEvent { event: None, data: data.into() }, &mut |e| events.push(e)).unwrap();
        }
        let answer = state.finish().unwrap();
        assert_eq!(answer.tool_calls.len(), 2);
        assert_eq!(answer.tool_calls[0].arguments, r#"{"k":1}"#);
        assert_eq!(answer.tool_calls[1].name, "y");
        assert_eq!(events.len(), 2);
    }
}
