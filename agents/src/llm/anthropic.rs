//! The Anthropic Messages wire format (`POST {base}/v1/messages`): the system prompt apart,
//! content blocks, tool results sent back as user blocks, and the named SSE events of a stream.

use serde_json::{json, Map, Value};

use super::sse::SseEvent;
use super::types::{ChatRequest, Role, StreamEvent, ToolCall, ToolChoice, Usage};
use super::wire::{short, Answer, WireFailure};

pub(crate) const PATH: &str = "/v1/messages";
pub(crate) const VERSION: &str = "2023-06-01";
/// Anthropic requires `max_tokens`; used when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The JSON body for one call. `json_mode` has no native flag here and is ignored.
pub(crate) fn request_body(model: &str, request: &ChatRequest, stream: bool) -> Value {
    let system: Vec<&str> =
        request.messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in &request.messages {
        let (role, blocks) = match m.role {
            Role::System => continue,
            Role::User => ("user", text_block(&m.content)),
            Role::Assistant => {
                let mut blocks = text_block(&m.content);
                for call in &m.tool_calls {
                    let input = match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(v @ Value::Object(_)) => v,
                        _ => json!({}),
                    };
                    blocks
                        .push(json!({"type": "tool_use", "id": tool_id(&call.id), "name": call.name, "input": input}));
                }
                ("assistant", blocks)
            }
            Role::Tool => {
                let id = tool_id(m.tool_call_id.as_deref().unwrap_or_default());
                ("user", vec![json!({"type": "tool_result", "tool_use_id": id, "content": m.content})])
            }
        };
        if blocks.is_empty() {
            continue; // Anthropic refuses empty text blocks
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, mut blocks)| {
            let content = if blocks.len() == 1 && blocks[0]["type"] == "text" {
                blocks.remove(0)["text"].take()
            } else {
                Value::Array(blocks)
            };
            json!({"role": role, "content": content})
        })
        .collect();

    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)));
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        // `{"type": "any"}`: the model must use one of the tools
        // (https://docs.anthropic.com/en/docs/build-with-claude/tool-use, "Forcing tool use").
        if request.tool_choice == ToolChoice::Required {
            body.insert("tool_choice".into(), json!({"type": "any"}));
        }
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    body.insert("stream".into(), json!(stream));
    Value::Object(body)
}

fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

/// Anthropic accepts tool ids made of letters, digits, `_` and `-`; others are mapped.
fn tool_id(id: &str) -> String {
    let mapped: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if mapped.is_empty() {
        "toolu_0".to_string()
    } else {
        mapped
    }
}

/// A non-streaming answer: content blocks and usage.
pub(crate) fn parse_response(body: &[u8]) -> Result<Answer, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("answer is not JSON: {e}"))?;
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(format!("error answer: {}", value.get("error").map(short).unwrap_or_default()));
    }
    let blocks = value.get("content").and_then(Value::as_array).ok_or("answer has no content blocks")?;
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => content.push_str(block.get("text").and_then(Value::as_str).unwrap_or_default()),
            Some("tool_use") => {
                let name = block.get("name").and_then(Value::as_str).filter(|n| !n.is_empty());
                let name = name.ok_or("tool_use block without a name")?.to_string();
                let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                let id = if id.is_empty() { format!("toolu_{}", tool_calls.len() + 1) } else { id.to_string() };
                let arguments = block.get("input").filter(|v| !v.is_null()).map_or("{}".to_string(), Value::to_string);
                tool_calls.push(ToolCall { id, name, arguments });
            }
            _ => {} // thinking and other blocks are not part of the answer
        }
    }
    let usage = value.get("usage").map(|u| Usage {
        prompt_tokens: count(u.get("input_tokens")),
        completion_tokens: count(u.get("output_tokens")),
    });
    Ok(Answer { content, tool_calls, usage })
}

fn count(value: Option<&Value>) -> u32 {
    value.and_then(Value::as_u64).map_or(0, |v| u32::try_from(v).unwrap_or(u32::MAX))
}

#[derive(Debug)]
enum Block {
    Text,
    Tool { id: String, name: String, start_input: Option<Value>, json: String },
}

/// Accumulates a streamed answer from its named events.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    content: String,
    blocks: Vec<(u64, Block)>,
    input_tokens: Option<u32>,
    output_tokens: Option<u32>,
    stopped: bool,
}

impl StreamState {
    /// Handles one event; `Ok(true)` once `message_stop` arrived.
    pub(crate) fn on_event(
        &mut self,
        event: &SseEvent,
        emit: &mut dyn FnMut(StreamEvent),
    ) -> Result<bool, WireFailure> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| WireFailure::malformed(format!("stream event is not JSON: {e}")))?;
        let kind = data.get("type").and_then(Value::as_str).or(event.event.as_deref()).unwrap_or_default();
        match kind {
            "message_start" => {
                let usage = data.get("message").and_then(|m| m.get("usage"));
                if let Some(u) = usage {
                    self.input_tokens = u.get("input_tokens").map(|v| count(Some(v)));
                    self.output_tokens = u.get("output_tokens").map(|v| count(Some(v))).or(self.output_tokens);
                }
            }
            "content_block_start" => {
                let index = data.get("index").and_then(Value::as_u64).unwrap_or(self.blocks.len() as u64);
                let block = data.get("content_block").cloned().unwrap_or_default();
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(text) = block.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                            self.text(text, emit);
                        }
                        self.blocks.push((index, Block::Text));
                    }
                    Some("tool_use") => {
                        let name = block.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
                        if name.is_empty() {
                            return Err(WireFailure::malformed("tool_use block without a name".to_string()));
                        }
                        emit(StreamEvent::ToolCallStarted { name: name.clone() });
                        let id = block.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                        let start_input = block.get("input").filter(|v| v.as_object().is_some_and(|o| !o.is_empty()));
                        self.blocks.push((
                            index,
                            Block::Tool { id, name, start_input: start_input.cloned(), json: String::new() },
                        ));
                    }
                    _ => {} // thinking and other blocks
                }
            }
            "content_block_delta" => {
                let index = data.get("index").and_then(Value::as_u64);
                let delta = data.get("delta").cloned().unwrap_or_default();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(text) = delta.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                            self.text(text, emit);
                        }
                    }
                    Some("input_json_delta") => {
                        let part = delta.get("partial_json").and_then(Value::as_str).unwrap_or_default();
                        let block = self.blocks.iter_mut().rev().find(|(i, _)| index.is_none_or(|index| *i == index));
                        match block {
                            Some((_, Block::Tool { json, .. })) => json.push_str(part),
                            _ => {
                                return Err(WireFailure::malformed("input_json_delta outside a tool_use block".into()))
                            }
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(out) = data.get("usage").and_then(|u| u.get("output_tokens")) {
                    self.output_tokens = Some(count(Some(out)));
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "error" => {
                let error = data.get("error").cloned().unwrap_or_default();
                let kind = error.get("type").and_then(Value::as_str).unwrap_or("error").to_string();
                let message = format!("error in stream: {kind}: {}", short(&error));
                return Err(if matches!(kind.as_str(), "overloaded_error" | "api_error" | "rate_limit_error") {
                    WireFailure::retryable(message)
                } else {
                    WireFailure::malformed(message)
                });
            }
            _ => {} // ping, content_block_stop
        }
        Ok(false)
    }

    fn text(&mut self, text: &str, emit: &mut dyn FnMut(StreamEvent)) {
        self.content.push_str(text);
        emit(StreamEvent::TextDelta(text.to_string()));
    }

    /// The whole answer, once the stream ended.
    pub(crate) fn finish(self) -> Result<Answer, WireFailure> {
        if !self.stopped {
            return Err(WireFailure::malformed("stream ended before message_stop".to_string()));
        }
        let mut tool_calls = Vec::new();
        for (_, block) in self.blocks {
            let Block::Tool { id, name, start_input, json } = block else { continue };
            let arguments =
                if !json.trim().is_empty() { json } else { start_input.map_or("{}".to_string(), |v| v.to_string()) };
            let id = if id.is_empty() { format!("toolu_{}", tool_calls.len() + 1) } else { id };
            tool_calls.push(ToolCall { id, name, arguments });
        }
        let usage = match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(Usage { prompt_tokens: i.unwrap_or(0), completion_tokens: o.unwrap_or(0) }),
        };
        Ok(Answer { content: self.content, tool_calls, usage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::types::{Message, ModelRole};

    #[test]
    fn tool_ids_are_mapped_to_the_allowed_alphabet() {
        assert_eq!(tool_id("call_abc-1"), "call_abc-1");
        assert_eq!(tool_id("a.b/c"), "a_b_c");
        assert_eq!(tool_id(""), "toolu_0");
    }

    #[test]
    fn consecutive_same_role_messages_are_merged_and_system_set_apart() {
        let request = ChatRequest {
            role: ModelRole::Chat,
            messages: vec![
                Message::system("a"),
                Message::user("u1"),
                Message::system("b"),
                Message::user("u2"),
                Message::assistant("", vec![]),
            ],
            tools: vec![],
            json_mode: true,
            tool_choice: Default::default(),
            temperature: None,
            max_tokens: None,
        };
        let body = request_body("m", &request, false);
        assert_eq!(body["system"], "a\n\nb");
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "u1"}, {"type": "text", "text": "u2"}]}])
        );
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert!(body.get("response_format").is_none());
    }
}
