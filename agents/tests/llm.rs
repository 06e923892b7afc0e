//! The language-model facade over real HTTP: both wire formats (chat completions for
//! Mistral/OpenAI, Anthropic Messages), streaming or not, tool calls, usage, retries, the
//! fallback chain mistral → anthropic → openai, timeouts, the exact request bodies, and the
//! providers' documented failures (an error event after the 200, a connection cut, stalled or
//! reset mid-stream, documented error bodies), all against `ScriptedLlm` servers on 127.0.0.1
//! port 0.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arthur_agents::llm::client::{
    default_model, ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint, ANTHROPIC_CHAT_MODEL,
    MISTRAL_CHAT_MODEL, OPENAI_CHAT_MODEL, OPENAI_ROUTER_MODEL,
};
use arthur_agents::llm::embeddings::{Embedder, HttpEmbedder};
use arthur_agents::llm::scripted::{CutKind, Reply, ScriptedLlm};
use arthur_agents::llm::{
    ChatModel, ChatRequest, ChatResponse, LlmError, Message, ModelRole, ProviderKind, StreamEvent, ToolCall, ToolSpec,
    Usage,
};
use arthur_agents::secret::Secret;
use serde_json::{json, Value};

const MISTRAL_KEY: &str = "mistral-secret-key-0001";
const ANTHROPIC_KEY: &str = "anthropic-secret-key-0002";
const OPENAI_KEY: &str = "openai-secret-key-0003";

fn key(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Mistral => MISTRAL_KEY,
        ProviderKind::Anthropic => ANTHROPIC_KEY,
        ProviderKind::OpenAi => OPENAI_KEY,
    }
}

fn endpoint(kind: ProviderKind, server: &ScriptedLlm) -> ProviderEndpoint {
    ProviderEndpoint::new(kind, server.base_url(), Secret::new(key(kind)))
}

fn fast() -> ClientOptions {
    ClientOptions {
        retries_per_provider: 2,
        backoff_base: Duration::from_millis(5),
        attempt_timeout: Duration::from_secs(5),
        total_timeout: Duration::from_secs(20),
    }
}

fn client(endpoints: Vec<ProviderEndpoint>) -> LlmClient {
    LlmClient::new(endpoints, ConfiguredModels::default(), fast()).unwrap()
}

fn request(role: ModelRole) -> ChatRequest {
    ChatRequest {
        role,
        messages: vec![Message::system("Tu es Arthur."), Message::user("Bonjour !")],
        tools: vec![],
        json_mode: false,
        tool_choice: Default::default(),
        temperature: None,
        max_tokens: None,
    }
}

fn tool_spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: format!("L'outil {name}"),
        parameters: json!({"type": "object", "properties": {"texte": {"type": "string"}}, "required": ["texte"]}),
    }
}

/// Runs a streaming call and returns the response and every event, in order.
async fn streamed(client: &LlmClient, request: &ChatRequest) -> (Result<ChatResponse, LlmError>, Vec<StreamEvent>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let callback = move |e: StreamEvent| sink.lock().unwrap().push(e);
    let result = client.chat(request, Some(&callback)).await;
    let events = events.lock().unwrap().clone();
    (result, events)
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            StreamEvent::ToolCallStarted { .. } => None,
        })
        .collect()
}

fn all_failed(result: Result<ChatResponse, LlmError>) -> Vec<arthur_agents::llm::Attempt> {
    match result {
        Err(LlmError::AllFailed(attempts)) => attempts,
        other => panic!("expected AllFailed, got {other:?}"),
    }
}

fn derived_prompt_tokens(response: &ChatResponse) -> u32 {
    u32::try_from(response.request_bytes / 4).unwrap().max(1)
}

// ---------------------------------------------------------------- text, both wire formats

#[tokio::test]
async fn chat_completions_text_without_streaming() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::text("Bonjour, je suis Arthur."));
    let client = client(vec![endpoint(ProviderKind::Mistral, &server)]);

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "Bonjour, je suis Arthur.");
    assert!(response.tool_calls.is_empty());
    assert_eq!((response.provider, response.model.as_str()), (ProviderKind::Mistral, MISTRAL_CHAT_MODEL));
    assert_eq!(response.ttft_ms, None);
    let usage = response.usage.unwrap();
    assert_eq!(usage.prompt_tokens, derived_prompt_tokens(&response));
    assert_eq!(usage.completion_tokens, "Bonjour, je suis Arthur.".len() as u32 / 4);
    assert_eq!(response.attempts.len(), 1);
    assert_eq!(response.attempts[0].status, Some(200));
    assert_eq!(response.attempts[0].error, None);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {MISTRAL_KEY}").as_str()));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(response.request_bytes, serde_json::to_vec(&sent.body).unwrap().len());
    assert_eq!(
        sent.body,
        json!({
            "model": "mistral-large-latest",
            "messages": [{"role": "system", "content": "Tu es Arthur."}, {"role": "user", "content": "Bonjour !"}],
            "stream": false,
        })
    );
}

#[tokio::test]
async fn chat_completions_text_streaming_openai_and_mistral() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Mistral] {
        let server = ScriptedLlm::start().await;
        let text = "Voilà une réponse assez longue pour être découpée en morceaux.";
        server.push(Reply::with_usage(Usage { prompt_tokens: 42, completion_tokens: 7 }, Reply::text(text)));
        let client = client(vec![endpoint(kind, &server)]);

        let (result, events) = streamed(&client, &request(ModelRole::Router)).await;
        let response = result.unwrap();
        assert_eq!(response.content, text);
        assert!(events.len() > 3, "{kind:?}: several deltas expected, got {events:?}");
        assert!(events.iter().all(|e| matches!(e, StreamEvent::TextDelta(_))));
        assert_eq!(text_of(&events), text);
        assert_eq!(response.usage, Some(Usage { prompt_tokens: 42, completion_tokens: 7 }), "{kind:?}");
        assert_eq!(response.model, default_model(kind, ModelRole::Router));
        let ttft = response.ttft_ms.expect("ttft recorded when streaming");
        assert!(ttft <= response.latency_ms);

        let body = &server.requests()[0].body;
        assert_eq!(body["stream"], true);
        if kind == ProviderKind::OpenAi {
            assert_eq!(body["stream_options"], json!({"include_usage": true}));
        } else {
            assert!(body.get("stream_options").is_none());
        }
        assert_eq!(server.requests()[0].header("accept"), Some("text/event-stream"));
    }
}

#[tokio::test]
async fn anthropic_text_without_streaming() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::with_usage(Usage { prompt_tokens: 11, completion_tokens: 5 }, Reply::text("Salut !")));
    let client = client(vec![endpoint(ProviderKind::Anthropic, &server)]);

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "Salut !");
    assert_eq!((response.provider, response.model.as_str()), (ProviderKind::Anthropic, ANTHROPIC_CHAT_MODEL));
    assert_eq!(response.usage, Some(Usage { prompt_tokens: 11, completion_tokens: 5 }));

    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": "Tu es Arthur.",
            "messages": [{"role": "user", "content": "Bonjour !"}],
            "stream": false,
        })
    );
}

#[tokio::test]
async fn anthropic_text_streaming() {
    let server = ScriptedLlm::start().await;
    let text = "Une réponse d'Anthropic, envoyée morceau par morceau.";
    server.push(Reply::text(text));
    let client = client(vec![endpoint(ProviderKind::Anthropic, &server)]);

    let (result, events) = streamed(&client, &request(ModelRole::Router)).await;
    let response = result.unwrap();
    assert_eq!(response.content, text);
    assert!(events.len() > 3);
    assert_eq!(text_of(&events), text);
    assert!(response.ttft_ms.is_some());
    assert_eq!(response.model, "claude-haiku-4-5");
    let usage = response.usage.unwrap();
    assert_eq!(usage.prompt_tokens, derived_prompt_tokens(&response));
    assert_eq!(usage.completion_tokens, text.chars().count() as u32 / 4);
    assert_eq!(server.requests()[0].body["stream"], true);
}

// ---------------------------------------------------------------- tool calls

const CALLS: [(&str, &str); 2] = [
    ("creer_note", r#"{"texte":"Acheter du pain complet","projet":"Maison"}"#),
    ("lister_rappels", r#"{"inclure_faits":false}"#),
];

fn expected_calls(ids: [&str; 2]) -> Vec<ToolCall> {
    CALLS
        .iter()
        .zip(ids)
        .map(|((name, args), id)| ToolCall { id: id.to_string(), name: name.to_string(), arguments: args.to_string() })
        .collect()
}

/// Anthropic answers `input` objects, re-serialised: compare the arguments as JSON values.
fn assert_same_calls(actual: &[ToolCall], ids: [&str; 2]) {
    let expected = expected_calls(ids);
    assert_eq!(actual.len(), expected.len(), "{actual:?}");
    for (a, e) in actual.iter().zip(&expected) {
        assert_eq!((a.id.as_str(), a.name.as_str()), (e.id.as_str(), e.name.as_str()));
        let parsed: Value = serde_json::from_str(&a.arguments).unwrap();
        assert_eq!(parsed, serde_json::from_str::<Value>(&e.arguments).unwrap());
    }
}

#[tokio::test]
async fn chat_completions_tool_calls_without_streaming() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::tool_calls("", &CALLS));
    let client = client(vec![endpoint(ProviderKind::OpenAi, &server)]);

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "");
    assert_eq!(response.tool_calls, expected_calls(["call_1", "call_2"]));
    assert!(response.usage.is_some());
}

#[tokio::test]
async fn chat_completions_tool_calls_streaming_arguments_reassembled() {
    for kind in [ProviderKind::Mistral, ProviderKind::OpenAi] {
        let server = ScriptedLlm::start().await;
        server.push(Reply::tool_calls("Je note ça.", &CALLS));
        let client = client(vec![endpoint(kind, &server)]);

        let (result, events) = streamed(&client, &request(ModelRole::Chat)).await;
        let response = result.unwrap();
        assert_eq!(response.content, "Je note ça.");
        assert_eq!(response.tool_calls, expected_calls(["call_1", "call_2"]));
        // Text first, then one ToolCallStarted per call, in order.
        let first_tool = events.iter().position(|e| matches!(e, StreamEvent::ToolCallStarted { .. })).unwrap();
        assert_eq!(text_of(&events[..first_tool]), "Je note ça.");
        assert_eq!(
            events[first_tool..],
            [
                StreamEvent::ToolCallStarted { name: "creer_note".into() },
                StreamEvent::ToolCallStarted { name: "lister_rappels".into() }
            ]
        );
        assert!(response.ttft_ms.is_some());
        assert!(response.usage.is_some(), "{kind:?}: usage from the last chunk");
    }
}

#[tokio::test]
async fn anthropic_tool_calls_with_and_without_streaming() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::tool_calls("", &CALLS));
    server.push(Reply::tool_calls("D'accord.", &CALLS));
    let client = client(vec![endpoint(ProviderKind::Anthropic, &server)]);

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_same_calls(&response.tool_calls, ["toolu_1", "toolu_2"]);
    assert_eq!(response.content, "");

    let (result, events) = streamed(&client, &request(ModelRole::Chat)).await;
    let response = result.unwrap();
    assert_eq!(response.content, "D'accord.");
    assert_eq!(response.tool_calls, expected_calls(["toolu_4", "toolu_5"]));
    let first_tool = events.iter().position(|e| matches!(e, StreamEvent::ToolCallStarted { .. })).unwrap();
    assert_eq!(text_of(&events[..first_tool]), "D'accord.");
    assert_eq!(
        events[first_tool..],
        [
            StreamEvent::ToolCallStarted { name: "creer_note".into() },
            StreamEvent::ToolCallStarted { name: "lister_rappels".into() }
        ]
    );
    assert!(response.usage.unwrap().completion_tokens >= 1);
}

// ---------------------------------------------------------------- exact wire shapes

fn conversation_with_tools() -> ChatRequest {
    let note = ToolCall { id: "abcDEF123".into(), name: "creer_note".into(), arguments: r#"{"texte":"pain"}"#.into() };
    let rappels = ToolCall { id: "xyz987654".into(), name: "lister_rappels".into(), arguments: "{}".into() };
    ChatRequest {
        role: ModelRole::Chat,
        messages: vec![
            Message::system("Tu es l'Intendant."),
            Message::user("Note pain et liste mes rappels"),
            Message::assistant("Je m'en occupe.", vec![note.clone(), rappels.clone()]),
            Message::tool(&note, "Note 12 créée"),
            Message::tool(&rappels, "Aucun rappel"),
        ],
        tools: vec![tool_spec("creer_note"), tool_spec("lister_rappels")],
        json_mode: false,
        tool_choice: Default::default(),
        temperature: Some(0.25),
        max_tokens: Some(300),
    }
}

#[tokio::test]
async fn chat_completions_request_body_has_the_exact_wire_shape() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::text("Fait."));
    let client = client(vec![endpoint(ProviderKind::Mistral, &server)]);
    client.chat(&conversation_with_tools(), None).await.unwrap();

    let schema = json!({"type": "object", "properties": {"texte": {"type": "string"}}, "required": ["texte"]});
    assert_eq!(
        server.requests()[0].body,
        json!({
            "model": "mistral-large-latest",
            "messages": [
                {"role": "system", "content": "Tu es l'Intendant."},
                {"role": "user", "content": "Note pain et liste mes rappels"},
                {"role": "assistant", "content": "Je m'en occupe.", "tool_calls": [
                    {"id": "abcDEF123", "type": "function",
                        "function": {"name": "creer_note", "arguments": "{\"texte\":\"pain\"}"}},
                    {"id": "xyz987654", "type": "function",
                        "function": {"name": "lister_rappels", "arguments": "{}"}},
                ]},
                {"role": "tool", "content": "Note 12 créée", "tool_call_id": "abcDEF123", "name": "creer_note"},
                {"role": "tool", "content": "Aucun rappel", "tool_call_id": "xyz987654", "name": "lister_rappels"},
            ],
            "tools": [
                {"type": "function", "function": {"name": "creer_note", "description": "L'outil creer_note",
                    "parameters": schema}},
                {"type": "function", "function": {"name": "lister_rappels", "description": "L'outil lister_rappels",
                    "parameters": schema}},
            ],
            "tool_choice": "auto",
            "temperature": 0.25,
            "max_tokens": 300,
            "stream": false,
        })
    );
}

#[tokio::test]
async fn anthropic_request_body_has_the_exact_wire_shape() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::text("Fait."));
    let client = client(vec![endpoint(ProviderKind::Anthropic, &server)]);
    let mut conversation = conversation_with_tools();
    conversation.messages.push(Message::user("Merci"));
    client.chat(&conversation, None).await.unwrap();

    let schema = json!({"type": "object", "properties": {"texte": {"type": "string"}}, "required": ["texte"]});
    assert_eq!(
        server.requests()[0].body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 300,
            "system": "Tu es l'Intendant.",
            "messages": [
                {"role": "user", "content": "Note pain et liste mes rappels"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Je m'en occupe."},
                    {"type": "tool_use", "id": "abcDEF123", "name": "creer_note", "input": {"texte": "pain"}},
                    {"type": "tool_use", "id": "xyz987654", "name": "lister_rappels", "input": {}},
                ]},
                // Consecutive tool results (and the user's next words) form one user message.
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "abcDEF123", "content": "Note 12 créée"},
                    {"type": "tool_result", "tool_use_id": "xyz987654", "content": "Aucun rappel"},
                    {"type": "text", "text": "Merci"},
                ]},
            ],
            "tools": [
                {"name": "creer_note", "description": "L'outil creer_note", "input_schema": schema},
                {"name": "lister_rappels", "description": "L'outil lister_rappels", "input_schema": schema},
            ],
            "temperature": 0.25,
            "stream": false,
        })
    );
}

#[tokio::test]
async fn unparsable_tool_arguments_become_an_empty_anthropic_input() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::text("ok"));
    let client = client(vec![endpoint(ProviderKind::Anthropic, &server)]);
    let broken = ToolCall { id: "call_1".into(), name: "creer_note".into(), arguments: "{pas du json".into() };
    let mut req = request(ModelRole::Chat);
    req.messages.push(Message::assistant("", vec![broken.clone()]));
    req.messages.push(Message::tool(&broken, "refusé"));
    client.chat(&req, None).await.unwrap();
    let body = &server.requests()[0].body;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "creer_note", "input": {}}]})
    );
}

#[tokio::test]
async fn foreign_tool_ids_are_mapped_for_mistral_consistently() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::text("ok"));
    let client = client(vec![endpoint(ProviderKind::Mistral, &server)]);
    let call = ToolCall { id: "toolu_01A09q90qw90lq917835".into(), name: "creer_note".into(), arguments: "{}".into() };
    let mut req = request(ModelRole::Chat);
    req.messages.push(Message::assistant("", vec![call.clone()]));
    req.messages.push(Message::tool(&call, "fait"));
    client.chat(&req, None).await.unwrap();
    let body = &server.requests()[0].body;
    let id = body["messages"][2]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(id.len(), 9);
    assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(body["messages"][3]["tool_call_id"], id);
}

#[tokio::test]
async fn json_mode_sends_response_format_on_chat_completions_only() {
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    mistral.push(Reply::text(r#"{"agent":"intendant","domain":"QUOTIDIEN"}"#));
    anthropic.push(Reply::text(r#"{"agent":"mentor","domain":"PERSO"}"#));
    let mut req = request(ModelRole::Router);
    req.json_mode = true;

    let response = client(vec![endpoint(ProviderKind::Mistral, &mistral)]).chat(&req, None).await.unwrap();
    assert_eq!(response.content, r#"{"agent":"intendant","domain":"QUOTIDIEN"}"#);
    assert_eq!(mistral.requests()[0].body["response_format"], json!({"type": "json_object"}));
    assert_eq!(mistral.requests()[0].body["model"], "mistral-small-latest");

    client(vec![endpoint(ProviderKind::Anthropic, &anthropic)]).chat(&req, None).await.unwrap();
    assert!(anthropic.requests()[0].body.get("response_format").is_none());
}

// ---------------------------------------------------------------- retries and fallback

#[tokio::test]
async fn a_429_is_retried_on_the_same_provider() {
    let mistral = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    mistral.push(Reply::status(429, r#"{"message":"rate limited"}"#));
    mistral.push(Reply::text("Après une pause."));
    let client = client(vec![endpoint(ProviderKind::OpenAi, &openai), endpoint(ProviderKind::Mistral, &mistral)]);

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "Après une pause.");
    assert_eq!(response.provider, ProviderKind::Mistral);
    assert_eq!(response.attempts.len(), 2);
    assert_eq!(response.attempts[0].status, Some(429));
    assert!(response.attempts[0].error.as_deref().unwrap().contains("rate limited"));
    assert_eq!(response.attempts[1].status, Some(200));
    assert_eq!(mistral.requests().len(), 2);
    assert!(openai.requests().is_empty());
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::with_header("Retry-After", "1", Reply::status(429, "slow down")));
    server.push(Reply::text("ok"));
    let client = client(vec![endpoint(ProviderKind::OpenAi, &server)]);
    let started = Instant::now();
    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(950), "waited {:?}", started.elapsed());
    assert_eq!(response.attempts.len(), 2);
    assert!(response.latency_ms >= 950);
}

#[tokio::test]
async fn server_errors_exhaust_retries_then_the_next_provider_answers_with_its_default_model() {
    let mistral = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    mistral.set_fallback(Some(Reply::status(503, "overloaded")));
    openai.push(Reply::text("OpenAI répond."));
    let client = LlmClient::new(
        vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::OpenAi, &openai)],
        ConfiguredModels { router: None, chat: Some("mon-modele-chat".into()) },
        fast(),
    )
    .unwrap();

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "OpenAI répond.");
    assert_eq!((response.provider, response.model.as_str()), (ProviderKind::OpenAi, OPENAI_CHAT_MODEL));
    // 1 try + 2 retries on Mistral, with the configured model; then OpenAI with its default.
    assert_eq!(mistral.requests().len(), 3);
    assert!(mistral.requests().iter().all(|r| r.body["model"] == "mon-modele-chat"));
    assert_eq!(openai.requests()[0].body["model"], "gpt-4o");
    assert_eq!(openai.requests()[0].header("authorization"), Some(format!("Bearer {OPENAI_KEY}").as_str()));
    let statuses: Vec<_> = response.attempts.iter().map(|a| (a.provider, a.model.as_str(), a.status)).collect();
    assert_eq!(
        statuses,
        vec![
            (ProviderKind::Mistral, "mon-modele-chat", Some(503)),
            (ProviderKind::Mistral, "mon-modele-chat", Some(503)),
            (ProviderKind::Mistral, "mon-modele-chat", Some(503)),
            (ProviderKind::OpenAi, "gpt-4o", Some(200)),
        ]
    );
    // The answering provider's body size, not the failed ones'.
    assert_eq!(response.request_bytes, serde_json::to_vec(&openai.requests()[0].body).unwrap().len());
}

#[tokio::test]
async fn whole_chain_mistral_then_anthropic_then_openai() {
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    mistral.set_fallback(Some(Reply::status(500, "boom")));
    anthropic.set_fallback(Some(Reply::status(529, r#"{"type":"error","error":{"type":"overloaded_error"}}"#)));
    openai.push(Reply::tool_calls("", &CALLS[..1]));
    let client = client(vec![
        endpoint(ProviderKind::OpenAi, &openai),
        endpoint(ProviderKind::Anthropic, &anthropic),
        endpoint(ProviderKind::Mistral, &mistral),
    ]);

    let (result, events) = streamed(&client, &request(ModelRole::Router)).await;
    let response = result.unwrap();
    assert_eq!((response.provider, response.model.as_str()), (ProviderKind::OpenAi, OPENAI_ROUTER_MODEL));
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(events, vec![StreamEvent::ToolCallStarted { name: "creer_note".into() }]);
    assert_eq!(mistral.requests().len(), 3);
    assert_eq!(anthropic.requests().len(), 3);
    assert!(anthropic.requests().iter().all(|r| r.path == "/v1/messages" && r.body["model"] == "claude-haiku-4-5"));
    let providers: Vec<_> = response.attempts.iter().map(|a| a.provider).collect();
    let expected =
        [vec![ProviderKind::Mistral; 3], vec![ProviderKind::Anthropic; 3], vec![ProviderKind::OpenAi]].concat();
    assert_eq!(providers, expected);
}

#[tokio::test]
async fn mistral_fails_then_anthropic_answers_through_the_messages_api() {
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    mistral.set_fallback(Some(Reply::status(502, "bad gateway")));
    anthropic.push(Reply::tool_calls("Je crée la note.", &CALLS));
    let client = client(vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::Anthropic, &anthropic)]);

    let response = client.chat(&conversation_with_tools(), None).await.unwrap();
    assert_eq!((response.provider, response.model.as_str()), (ProviderKind::Anthropic, ANTHROPIC_CHAT_MODEL));
    assert_eq!(response.content, "Je crée la note.");
    assert_same_calls(&response.tool_calls, ["toolu_1", "toolu_2"]);
    let sent = &anthropic.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.body["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(response.attempts.len(), 4);
}

#[tokio::test]
async fn a_401_falls_through_without_retry() {
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    mistral.set_fallback(Some(Reply::status(401, r#"{"message":"Unauthorized"}"#)));
    anthropic.push(Reply::text("ok"));
    let client = client(vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::Anthropic, &anthropic)]);

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.provider, ProviderKind::Anthropic);
    assert_eq!(mistral.requests().len(), 1);
    assert_eq!(response.attempts[0].status, Some(401));
    assert_eq!(response.attempts.len(), 2);
}

#[tokio::test]
async fn garbage_falls_through_without_retry_streaming_or_not() {
    for stream in [false, true] {
        let mistral = ScriptedLlm::start().await;
        let openai = ScriptedLlm::start().await;
        mistral.set_fallback(Some(Reply::Garbage("<html>oops</html>".into())));
        openai.push(Reply::text("propre"));
        let client = client(vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::OpenAi, &openai)]);
        let response = if stream {
            streamed(&client, &request(ModelRole::Chat)).await.0.unwrap()
        } else {
            client.chat(&request(ModelRole::Chat), None).await.unwrap()
        };
        assert_eq!(response.content, "propre");
        assert_eq!(mistral.requests().len(), 1, "stream={stream}");
        assert!(response.attempts[0].error.as_deref().unwrap().contains("malformed"));
    }
    // Valid JSON but not the wire shape (no choices).
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    mistral.push(Reply::Garbage(r#"{"object":"chat.completion","choices":[]}"#.into()));
    anthropic.push(Reply::Garbage(r#"{"type":"message"}"#.into()));
    let attempts = all_failed(
        client(vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::Anthropic, &anthropic)])
            .chat(&request(ModelRole::Chat), None)
            .await,
    );
    assert_eq!(attempts.len(), 2);
    assert!(attempts.iter().all(|a| a.status == Some(200) && a.error.as_deref().unwrap().contains("malformed")));
}

#[tokio::test]
async fn an_attempt_timeout_falls_through() {
    let mistral = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    mistral.set_fallback(Some(Reply::delayed(Duration::from_secs(2), Reply::text("trop tard"))));
    openai.push(Reply::text("à l'heure"));
    let options = ClientOptions { retries_per_provider: 1, attempt_timeout: Duration::from_millis(150), ..fast() };
    let client = LlmClient::new(
        vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::OpenAi, &openai)],
        ConfiguredModels::default(),
        options,
    )
    .unwrap();

    let started = Instant::now();
    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(response.content, "à l'heure");
    assert_eq!(mistral.requests().len(), 2, "a timeout is retried, then falls through");
    for attempt in &response.attempts[..2] {
        assert_eq!(attempt.status, None);
        assert!(attempt.error.as_deref().unwrap().contains("timed out"), "{attempt:?}");
        assert!(attempt.latency_ms >= 140);
    }
}

#[tokio::test]
async fn the_total_timeout_bounds_the_whole_call() {
    let server = ScriptedLlm::start().await;
    server.set_fallback(Some(Reply::delayed(Duration::from_secs(3), Reply::text("jamais"))));
    let options = ClientOptions { total_timeout: Duration::from_millis(300), ..fast() };
    let client =
        LlmClient::new(vec![endpoint(ProviderKind::Mistral, &server)], ConfiguredModels::default(), options).unwrap();
    let started = Instant::now();
    let attempts = all_failed(client.chat(&request(ModelRole::Chat), None).await);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(attempts.len(), 1);
    assert!(attempts[0].error.as_deref().unwrap().contains("total timeout"));
}

#[tokio::test]
async fn a_connection_error_is_retried_then_falls_through() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let openai = ScriptedLlm::start().await;
    openai.push(Reply::text("ok"));
    let client = client(vec![
        ProviderEndpoint::new(ProviderKind::Mistral, format!("http://{closed}"), Secret::new(MISTRAL_KEY)),
        endpoint(ProviderKind::OpenAi, &openai),
    ]);
    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.provider, ProviderKind::OpenAi);
    assert_eq!(response.attempts.len(), 4);
    assert!(response.attempts[..3].iter().all(|a| a.status.is_none() && a.error.is_some()));
}

#[tokio::test]
async fn everything_failing_lists_every_attempt() {
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    mistral.set_fallback(Some(Reply::status(500, "mistral down")));
    anthropic.set_fallback(Some(Reply::status(400, "bad request")));
    // The default fallback: HTTP 500 "script exhausted".
    let client = client(vec![
        endpoint(ProviderKind::Mistral, &mistral),
        endpoint(ProviderKind::Anthropic, &anthropic),
        endpoint(ProviderKind::OpenAi, &openai),
    ]);

    let error = client.chat(&request(ModelRole::Chat), None).await.unwrap_err();
    let shown = error.to_string();
    assert!(shown.starts_with("every provider failed"), "{shown}");
    assert!(shown.contains("mistral/mistral-large-latest") && shown.contains("anthropic/claude-sonnet-4-5"));
    assert!(shown.contains("openai/gpt-4o") && shown.contains("script exhausted"));
    let attempts = all_failed(Err(error));
    let summary: Vec<_> = attempts.iter().map(|a| (a.provider, a.status)).collect();
    assert_eq!(
        summary,
        vec![
            (ProviderKind::Mistral, Some(500)),
            (ProviderKind::Mistral, Some(500)),
            (ProviderKind::Mistral, Some(500)),
            (ProviderKind::Anthropic, Some(400)),
            (ProviderKind::OpenAi, Some(500)),
            (ProviderKind::OpenAi, Some(500)),
            (ProviderKind::OpenAi, Some(500)),
        ]
    );
    assert!(attempts.iter().all(|a| a.error.is_some()));
}

#[tokio::test]
async fn no_endpoint_means_no_provider() {
    let client = client(vec![]);
    assert!(client.is_empty());
    let error = client.chat(&request(ModelRole::Chat), None).await.unwrap_err();
    assert!(matches!(error, LlmError::NoProvider));
}

#[tokio::test]
async fn api_keys_never_appear_in_errors() {
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    // Providers sometimes echo the key they were given.
    mistral.set_fallback(Some(Reply::status(401, format!(r#"{{"message":"Incorrect API key: {MISTRAL_KEY}"}}"#))));
    anthropic.set_fallback(Some(Reply::status(500, format!("key {ANTHROPIC_KEY} is overloaded"))));
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let client = client(vec![
        endpoint(ProviderKind::Mistral, &mistral),
        endpoint(ProviderKind::Anthropic, &anthropic),
        ProviderEndpoint::new(ProviderKind::OpenAi, format!("http://{closed}"), Secret::new(OPENAI_KEY)),
    ]);
    let error = client.chat(&request(ModelRole::Chat), None).await.unwrap_err();
    let shown = format!("{error} {error:?} {client:?}");
    for secret in [MISTRAL_KEY, ANTHROPIC_KEY, OPENAI_KEY] {
        assert!(!shown.contains(secret), "{secret} leaked in {shown}");
    }
    assert!(shown.contains("Incorrect API key: [REDACTED]"));
}

// ---------------------------------------------------------------- documented failures after the 200

/// An answer long enough to be cut: six-character pieces, so two deltas are `PARTIAL_TWO_DELTAS`.
const PARTIAL: &str = "Début d'une réponse qui ne finira pas.";
const PARTIAL_TWO_DELTAS: &str = "Début d'une ";

/// How many stream events hold the first two text deltas: Anthropic sends `message_start`,
/// `content_block_start` and a `ping` first; chat completions a role chunk.
fn two_deltas(kind: ProviderKind) -> usize {
    match kind {
        ProviderKind::Anthropic => 5,
        _ => 3,
    }
}

/// One provider whose first streamed answer fails after two deltas (`first`) and whose
/// second is whole: the client retries on the same provider and answers the second; the
/// failed attempt keeps its HTTP 200 and an error naming `error_part`.
async fn retried_once_after_a_mid_stream_failure(kind: ProviderKind, first: Reply, error_part: &str) {
    let server = ScriptedLlm::start().await;
    server.push(first);
    server.push(Reply::text("Deuxième essai."));
    let client = client(vec![endpoint(kind, &server)]);

    let (result, events) = streamed(&client, &request(ModelRole::Chat)).await;
    let response = result.unwrap();
    assert_eq!(response.content, "Deuxième essai.", "{kind:?}");
    // The failed attempt had streamed content before it failed: the failure came mid-way.
    let streamed_text = text_of(&events);
    assert!(
        streamed_text.starts_with(PARTIAL_TWO_DELTAS) && !streamed_text.contains(PARTIAL),
        "{kind:?}: {streamed_text}"
    );
    assert_eq!(response.attempts.len(), 2, "{kind:?}");
    assert_eq!(response.attempts[0].status, Some(200), "{kind:?}: the failure came after an HTTP 200");
    let error = response.attempts[0].error.as_deref().unwrap();
    assert!(error.contains(error_part), "{kind:?}: {error}");
    assert_eq!(response.attempts[1].error, None);
    assert_eq!(server.requests().len(), 2, "{kind:?}: retried on the same provider");
}

#[tokio::test]
async fn anthropic_overloaded_error_event_mid_stream_is_retried_and_its_partial_text_never_answers() {
    let after = two_deltas(ProviderKind::Anthropic);
    let first = Reply::stream_error(after, "overloaded_error", "Overloaded", Reply::text(PARTIAL));
    retried_once_after_a_mid_stream_failure(ProviderKind::Anthropic, first, "overloaded_error").await;
}

#[tokio::test]
async fn anthropic_request_error_event_mid_stream_falls_through_without_retry() {
    let anthropic = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    let after = two_deltas(ProviderKind::Anthropic);
    anthropic.set_fallback(Some(Reply::stream_error(
        after,
        "invalid_request_error",
        "messages: text content blocks must be non-empty",
        Reply::text(PARTIAL),
    )));
    openai.push(Reply::text("OpenAI répond."));
    let client = client(vec![endpoint(ProviderKind::Anthropic, &anthropic), endpoint(ProviderKind::OpenAi, &openai)]);

    let (result, _) = streamed(&client, &request(ModelRole::Chat)).await;
    let response = result.unwrap();
    assert_eq!((response.provider, response.content.as_str()), (ProviderKind::OpenAi, "OpenAI répond."));
    assert_eq!(anthropic.requests().len(), 1, "a request error is not retried");
    assert_eq!(response.attempts.len(), 2);
    let error = response.attempts[0].error.as_deref().unwrap();
    assert!(error.contains("invalid_request_error"), "{error}");
}

#[tokio::test]
async fn chat_completions_error_chunk_mid_stream_is_retried_openai_and_mistral() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Mistral] {
        let message = "The server had an error while processing your request. Sorry about that!";
        let first = Reply::stream_error(two_deltas(kind), "server_error", message, Reply::text(PARTIAL));
        retried_once_after_a_mid_stream_failure(kind, first, "The server had an error").await;
    }
}

#[tokio::test]
async fn a_stream_ending_before_its_terminator_is_never_a_complete_answer() {
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    // Mistral: cut after two deltas. Anthropic: every event but `message_stop`, even the
    // `message_delta` with its stop reason: still not a whole message.
    mistral.push(Reply::cut(two_deltas(ProviderKind::Mistral), CutKind::Close, Reply::text(PARTIAL)));
    anthropic.push(Reply::cut(usize::MAX, CutKind::Close, Reply::text(PARTIAL)));
    openai.push(Reply::text("Seule réponse entière."));
    let client = client(vec![
        endpoint(ProviderKind::Mistral, &mistral),
        endpoint(ProviderKind::Anthropic, &anthropic),
        endpoint(ProviderKind::OpenAi, &openai),
    ]);

    let (result, events) = streamed(&client, &request(ModelRole::Chat)).await;
    let response = result.unwrap();
    assert_eq!((response.provider, response.content.as_str()), (ProviderKind::OpenAi, "Seule réponse entière."));
    assert!(text_of(&events).contains(PARTIAL), "Anthropic's whole text was streamed, and still refused");
    let summary: Vec<_> = response.attempts.iter().map(|a| (a.provider, a.status)).collect();
    assert_eq!(
        summary,
        vec![
            (ProviderKind::Mistral, Some(200)),
            (ProviderKind::Anthropic, Some(200)),
            (ProviderKind::OpenAi, Some(200))
        ]
    );
    assert!(response.attempts[0].error.as_deref().unwrap().contains("stream ended before [DONE]"));
    assert!(response.attempts[1].error.as_deref().unwrap().contains("stream ended before message_stop"));
    assert_eq!((mistral.requests().len(), anthropic.requests().len()), (1, 1), "a truncated answer is not retried");
}

#[tokio::test]
async fn a_connection_reset_mid_stream_is_retried_on_the_same_provider() {
    for kind in [ProviderKind::Mistral, ProviderKind::Anthropic] {
        let first = Reply::cut(two_deltas(kind), CutKind::Reset, Reply::text(PARTIAL));
        retried_once_after_a_mid_stream_failure(kind, first, "reading the answer failed").await;
    }
}

#[tokio::test]
async fn a_whole_body_cut_in_half_is_malformed_and_a_reset_one_is_retried() {
    // A body that ends cleanly half-way: malformed, the next provider answers.
    let mistral = ScriptedLlm::start().await;
    let anthropic = ScriptedLlm::start().await;
    mistral.push(Reply::cut(0, CutKind::Close, Reply::text(PARTIAL)));
    anthropic.push(Reply::cut(0, CutKind::Reset, Reply::tool_calls("", &CALLS)));
    anthropic.push(Reply::text("Anthropic répond."));
    let client = client(vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::Anthropic, &anthropic)]);

    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!((response.provider, response.content.as_str()), (ProviderKind::Anthropic, "Anthropic répond."));
    assert!(response.tool_calls.is_empty(), "nothing of the reset answer is kept");
    assert_eq!(mistral.requests().len(), 1);
    assert!(response.attempts[0].error.as_deref().unwrap().contains("malformed"));
    // The reset one: a read error, retried on the same provider.
    assert_eq!(anthropic.requests().len(), 2);
    assert_eq!(response.attempts.len(), 3);
    assert!(response.attempts[1].error.as_deref().unwrap().contains("reading the answer failed"));
}

#[tokio::test]
async fn a_stream_stalled_mid_way_times_out_then_falls_through() {
    let mistral = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    mistral.set_fallback(Some(Reply::cut(two_deltas(ProviderKind::Mistral), CutKind::Hang, Reply::text(PARTIAL))));
    openai.push(Reply::text("à temps"));
    let options = ClientOptions { retries_per_provider: 1, attempt_timeout: Duration::from_millis(150), ..fast() };
    let client = LlmClient::new(
        vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::OpenAi, &openai)],
        ConfiguredModels::default(),
        options,
    )
    .unwrap();

    let (result, events) = streamed(&client, &request(ModelRole::Chat)).await;
    let response = result.unwrap();
    assert_eq!(response.content, "à temps");
    assert!(text_of(&events).starts_with(PARTIAL_TWO_DELTAS));
    assert_eq!(mistral.requests().len(), 2, "a stall is a timeout: retried, then the next provider");
    for attempt in &response.attempts[..2] {
        assert!(attempt.error.as_deref().unwrap().contains("timed out"), "{attempt:?}");
        assert_eq!(attempt.status, Some(200), "the stall came after an HTTP 200: {attempt:?}");
    }
}

#[tokio::test]
async fn a_429_for_an_exhausted_quota_is_not_retried() {
    // OpenAI documents "insufficient_quota" as a 429 that waiting does not clear.
    let openai = ScriptedLlm::start().await;
    openai.push(Reply::api_error(429, "insufficient_quota", "You exceeded your current quota."));
    openai.push(Reply::text("jamais demandé"));
    let client = client(vec![endpoint(ProviderKind::OpenAi, &openai)]);
    assert!(client.chat(&request(ModelRole::Chat), None).await.is_err());
    assert_eq!(openai.requests().len(), 1, "not retried");
    assert_eq!(openai.remaining(), 1);
    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "jamais demandé");
    // A rate limit is still worth a retry on the same provider.
    openai.push(Reply::api_error(429, "rate_limit_exceeded", "Rate limit reached."));
    openai.push(Reply::text("OpenAI répond."));
    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "OpenAI répond.");
    assert_eq!(openai.requests().len(), 4, "the rate limit was retried");
}

#[tokio::test]
async fn an_openai_stream_cut_after_its_finish_reason_keeps_the_answer_and_reports_no_usage() {
    // Role chunk, two deltas, the finish chunk: then neither the usage chunk nor `[DONE]`.
    // OpenAI documents that an interrupted stream may lack the usage chunk; the text is whole.
    let server = ScriptedLlm::start().await;
    let usage = Usage { prompt_tokens: 30, completion_tokens: 3 };
    server.push(Reply::cut(4, CutKind::Close, Reply::with_usage(usage, Reply::text("Réponse ok."))));
    server.push(Reply::cut(usize::MAX, CutKind::Close, Reply::with_usage(usage, Reply::text("Réponse ok."))));
    let client = client(vec![endpoint(ProviderKind::OpenAi, &server)]);

    let (result, _) = streamed(&client, &request(ModelRole::Chat)).await;
    let response = result.unwrap();
    assert_eq!(response.content, "Réponse ok.");
    assert_eq!(response.usage, None, "the usage never came: unknown, not zero");
    // Only `[DONE]` missing: the usage chunk came.
    let (result, _) = streamed(&client, &request(ModelRole::Chat)).await;
    assert_eq!(result.unwrap().usage, Some(usage));
}

#[tokio::test]
async fn documented_error_statuses_are_retried_or_not_by_type() {
    let anthropic = ScriptedLlm::start().await;
    let openai = ScriptedLlm::start().await;
    // 529 overloaded: retried. A stream error asked without streaming: its documented status.
    anthropic.push(Reply::api_error(529, "overloaded_error", "Overloaded"));
    anthropic.push(Reply::stream_error(0, "overloaded_error", "Overloaded", Reply::text("jamais servi")));
    anthropic.push(Reply::text("Troisième essai."));
    let client = client(vec![endpoint(ProviderKind::Anthropic, &anthropic), endpoint(ProviderKind::OpenAi, &openai)]);
    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.content, "Troisième essai.");
    let statuses: Vec<_> = response.attempts.iter().map(|a| a.status).collect();
    assert_eq!(statuses, vec![Some(529), Some(529), Some(200)]);
    assert!(response.attempts[0].error.as_deref().unwrap().contains("overloaded_error"));

    // 401 authentication_error: not retried, the next provider answers.
    anthropic.push(Reply::api_error(401, "authentication_error", "invalid x-api-key"));
    openai.push(Reply::text("OpenAI répond."));
    let response = client.chat(&request(ModelRole::Chat), None).await.unwrap();
    assert_eq!(response.provider, ProviderKind::OpenAi);
    assert_eq!(response.attempts[0].status, Some(401));
    assert_eq!(anthropic.requests().len(), 4);
}

#[tokio::test]
async fn an_answer_finished_with_reason_error_is_not_an_answer() {
    for stream in [false, true] {
        let mistral = ScriptedLlm::start().await;
        let openai = ScriptedLlm::start().await;
        mistral.set_fallback(Some(Reply::with_stop_reason("error", Reply::text(PARTIAL))));
        openai.push(Reply::text("OpenAI répond."));
        let client = client(vec![endpoint(ProviderKind::Mistral, &mistral), endpoint(ProviderKind::OpenAi, &openai)]);
        let response = if stream {
            streamed(&client, &request(ModelRole::Chat)).await.0.unwrap()
        } else {
            client.chat(&request(ModelRole::Chat), None).await.unwrap()
        };
        assert_eq!(response.content, "OpenAI répond.", "stream={stream}");
        assert!(response.attempts[0].error.is_some(), "stream={stream}");
    }
}

// ---------------------------------------------------------------- the scripted server itself

#[tokio::test]
async fn scripted_server_script_fallback_and_embeddings() {
    let server = ScriptedLlm::start().await;
    server.push(Reply::text("un"));
    server.push(Reply::text("deux"));
    assert_eq!(server.remaining(), 2);
    let http = reqwest::Client::new();
    let url = format!("{}/v1/chat/completions", server.base_url());
    let body = json!({"model": "m", "messages": []});
    let first: Value = http.post(&url).json(&body).send().await.unwrap().json().await.unwrap();
    assert_eq!(first["choices"][0]["message"]["content"], "un");
    assert_eq!(server.remaining(), 1);
    http.post(&url).json(&body).send().await.unwrap();
    let exhausted = http.post(&url).json(&body).send().await.unwrap();
    assert_eq!(exhausted.status(), 500);
    assert_eq!(exhausted.json::<Value>().await.unwrap(), json!({"error": "script exhausted"}));
    server.set_fallback(Some(Reply::text("toujours")));
    let again: Value = http.post(&url).json(&body).send().await.unwrap().json().await.unwrap();
    assert_eq!(again["choices"][0]["message"]["content"], "toujours");

    let embedder =
        HttpEmbedder::new(&server.base_url(), Secret::new("k"), "mistral-embed", Duration::from_secs(5)).unwrap();
    let texts = vec!["chat".to_string(), "vélo".to_string()];
    let a = embedder.embed(&texts).await.unwrap();
    let b = embedder.embed(&texts).await.unwrap();
    assert_eq!(a, b);
    assert_ne!(a[0], a[1]);
    assert_eq!(server.requests().len(), 6);
    assert_eq!(server.chat_requests().len(), 4);
}

/// The events of a raw SSE body, as `(event name, data)`.
fn sse_events(body: &str) -> Vec<(Option<String>, String)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let event = e.lines().find_map(|l| l.strip_prefix("event: ")).map(str::to_string);
            let data = e.lines().filter_map(|l| l.strip_prefix("data: ")).collect::<Vec<_>>().join("\n");
            (event, data)
        })
        .collect()
}

#[tokio::test]
async fn scripted_server_failures_have_the_documented_wire_shapes() {
    let server = ScriptedLlm::start().await;
    let http = reqwest::Client::new();
    let post = |path: &str, stream: bool| {
        http.post(format!("{}{path}", server.base_url()))
            .json(&json!({"model": "m", "messages": [], "stream": stream, "stream_options": {"include_usage": true}}))
            .send()
    };

    // Anthropic: `event: error` after message_start and one delta, then nothing.
    server.push(Reply::stream_error(4, "overloaded_error", "Overloaded", Reply::text(PARTIAL)));
    let response = post("/v1/messages", true).await.unwrap();
    assert_eq!(response.status(), 200);
    let events = sse_events(&response.text().await.unwrap());
    let names: Vec<_> = events.iter().map(|(e, _)| e.as_deref().unwrap_or_default()).collect();
    assert_eq!(names, ["message_start", "content_block_start", "ping", "content_block_delta", "error"]);
    let error: Value = serde_json::from_str(&events[4].1).unwrap();
    assert_eq!(error, json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));

    // Chat completions: a chunk carrying `error`, no `[DONE]`.
    server.push(Reply::stream_error(2, "server_error", "boom", Reply::text(PARTIAL)));
    let events = sse_events(&post("/v1/chat/completions", true).await.unwrap().text().await.unwrap());
    assert_eq!(events.len(), 3);
    assert_eq!(
        serde_json::from_str::<Value>(&events[2].1).unwrap(),
        json!({"error": {"message": "boom", "type": "server_error", "param": null, "code": null}})
    );

    // Cut cleanly: a 200 whose body simply stops before its terminator.
    server.push(Reply::cut(usize::MAX, CutKind::Close, Reply::text(PARTIAL)));
    let events = sse_events(&post("/v1/chat/completions", true).await.unwrap().text().await.unwrap());
    assert!(events.iter().all(|(_, d)| d != "[DONE]"), "{events:?}");
    assert!(events.iter().any(|(_, d)| d.contains("\"choices\":[]")), "only [DONE] is missing: {events:?}");

    // Reset: reading the body fails.
    server.push(Reply::cut(1, CutKind::Reset, Reply::text(PARTIAL)));
    let response = post("/v1/messages", true).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.text().await.is_err());

    // Error bodies, and a stream error asked without streaming: the documented status.
    server.push(Reply::api_error(429, "rate_limit_error", "Number of requests has exceeded your rate limit"));
    server.push(Reply::stream_error(3, "overloaded_error", "Overloaded", Reply::text(PARTIAL)));
    server.push(Reply::api_error(429, "insufficient_quota", "You exceeded your current quota"));
    let response = post("/v1/messages", false).await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"type": "error", "error": {"type": "rate_limit_error",
            "message": "Number of requests has exceeded your rate limit"}, "request_id": "req_scripted"})
    );
    let response = post("/v1/messages", false).await.unwrap();
    assert_eq!(response.status(), 529);
    assert_eq!(response.json::<Value>().await.unwrap()["error"]["type"], "overloaded_error");
    let response = post("/v1/chat/completions", false).await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
            "param": null, "code": null}})
    );

    // Any finish or stop reason, in both formats, whole or streamed.
    server.push(Reply::with_stop_reason("length", Reply::text("coupé")));
    server.push(Reply::with_stop_reason("max_tokens", Reply::text("coupé")));
    server.push(Reply::with_stop_reason("error", Reply::text("coupé")));
    let whole: Value = post("/v1/chat/completions", false).await.unwrap().json().await.unwrap();
    assert_eq!(whole["choices"][0]["finish_reason"], "length");
    let whole: Value = post("/v1/messages", false).await.unwrap().json().await.unwrap();
    assert_eq!(whole["stop_reason"], "max_tokens");
    let events = sse_events(&post("/v1/chat/completions", true).await.unwrap().text().await.unwrap());
    assert!(events.iter().any(|(_, d)| d.contains("\"finish_reason\":\"error\"")), "{events:?}");
}
