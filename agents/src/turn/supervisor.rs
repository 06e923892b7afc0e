//! The supervisor: ONE call to the router model per user message, parsed against the JSON
//! contract; anything else gives a deterministic fallback that says why. It never gets
//! control back.

use serde::Serialize;

use crate::llm::{ChatModel, ChatRequest, Message, ModelRole};
use crate::text::normalise;
use crate::tools::AgentKind;

use super::trace::CallTrace;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Domain {
    #[serde(rename = "TRAVAIL")]
    Travail,
    #[serde(rename = "QUOTIDIEN")]
    Quotidien,
    #[serde(rename = "PERSO")]
    Perso,
}

impl Domain {
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Travail => "TRAVAIL",
            Domain::Quotidien => "QUOTIDIEN",
            Domain::Perso => "PERSO",
        }
    }
    /// The domain named in the templates or the router's answer.
    pub fn parse_label(raw: &str) -> Option<Self> {
        Self::parse(raw)
    }

    fn parse(raw: &str) -> Option<Self> {
        match normalise(raw).as_str() {
            "travail" => Some(Domain::Travail),
            "quotidien" => Some(Domain::Quotidien),
            "perso" | "personnel" => Some(Domain::Perso),
            _ => None,
        }
    }
}

/// The router's expected kind of action (an extra key of the contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedAction {
    Ecriture,
    Lecture,
    Conversation,
}

/// Why the fallback decided instead of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackReason {
    /// No model could be reached.
    ModelUnavailable,
    /// The answer held no JSON object.
    NotJson,
    /// `agent` missing or not intendant/mentor.
    BadAgent,
    /// `domain` missing or not one of the three.
    BadDomain,
    /// The message answered a confirmation question: no routing was needed.
    Confirmation,
    /// A bare chrono word ("stop", "pause"): asked before anything, no model needed.
    BareCommand,
    /// The grammar understood the words: no routing was needed (local first).
    Local,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouterDecision {
    pub agent: AgentKind,
    pub domain: Domain,
    pub action: Option<ExpectedAction>,
    /// `None` when the model's answer was used.
    pub fallback: Option<FallbackReason>,
    /// The model's answer (cut to 300 characters), for the trace.
    pub raw: String,
    pub call: Option<CallTrace>,
}

/// Words that send a request to the Mentor when the router could not decide.
const MENTOR_WORDS: &[&str] =
    &["projet", "projets", "decision", "decide", "phase", "souvenir", "souviens", "memorise", "mentor", "strategie"];

/// The deterministic fallback: Mentor if the text speaks of projects, decisions or
/// souvenirs, else Intendant; domain QUOTIDIEN unless work words appear.
pub fn fallback(text: &str, reason: FallbackReason, raw: String, call: Option<CallTrace>) -> RouterDecision {
    let n = normalise(text);
    let words: Vec<&str> = n.split(|c: char| !c.is_alphanumeric()).collect();
    let agent = if words.iter().any(|w| MENTOR_WORDS.contains(w)) { AgentKind::Mentor } else { AgentKind::Intendant };
    let domain =
        if words.iter().any(|w| matches!(*w, "travail" | "projet" | "client" | "session" | "boulot" | "reunion")) {
            Domain::Travail
        } else {
            Domain::Quotidien
        };
    RouterDecision { agent, domain, action: None, fallback: Some(reason), raw, call }
}

/// Parses the router's answer against the contract.
pub fn parse(text: &str, answer: &str, call: Option<CallTrace>) -> RouterDecision {
    let raw: String = answer.chars().take(300).collect();
    let json = match (answer.find('{'), answer.rfind('}')) {
        (Some(a), Some(b)) if a < b => serde_json::from_str::<serde_json::Value>(&answer[a..=b]).ok(),
        _ => None,
    };
    let Some(serde_json::Value::Object(obj)) = json else {
        return fallback(text, FallbackReason::NotJson, raw, call);
    };
    let agent = match obj.get("agent").and_then(|v| v.as_str()).map(normalise).as_deref() {
        Some("intendant") => AgentKind::Intendant,
        Some("mentor") => AgentKind::Mentor,
        _ => return fallback(text, FallbackReason::BadAgent, raw, call),
    };
    let Some(domain) = obj.get("domain").and_then(|v| v.as_str()).and_then(Domain::parse) else {
        return fallback(text, FallbackReason::BadDomain, raw, call);
    };
    let action = match obj.get("action").and_then(|v| v.as_str()).map(normalise).as_deref() {
        Some("ecriture") => Some(ExpectedAction::Ecriture),
        Some("lecture") => Some(ExpectedAction::Lecture),
        Some("conversation") => Some(ExpectedAction::Conversation),
        _ => None,
    };
    RouterDecision { agent, domain, action, fallback: None, raw, call }
}

/// The one routing call.
pub async fn route(llm: &dyn ChatModel, text: &str) -> RouterDecision {
    let request = ChatRequest {
        role: ModelRole::Router,
        messages: vec![Message::system(crate::prompts::SUPERVISOR.trim()), Message::user(text)],
        tools: Vec::new(),
        json_mode: true,
        tool_choice: Default::default(),
        temperature: Some(0.0),
        max_tokens: Some(60),
    };
    match llm.chat(&request, None).await {
        Ok(response) => {
            let call = CallTrace::from_response(&response);
            parse(text, &response.content, Some(call))
        }
        Err(e) => {
            tracing::warn!(error = %e, "router call failed, using the deterministic fallback");
            fallback(text, FallbackReason::ModelUnavailable, String::new(), Some(CallTrace::from_error(&e)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_answers_are_parsed_and_garbage_falls_back() {
        let d = parse("x", r#"{"agent": "mentor", "domain": "TRAVAIL", "action": "ecriture", "extra": 1}"#, None);
        assert_eq!(
            (d.agent, d.domain, d.action, d.fallback),
            (AgentKind::Mentor, Domain::Travail, Some(ExpectedAction::Ecriture), None)
        );
        let d = parse("x", "Voici : {\"agent\":\"Intendant\",\"domain\":\"perso\"} voilà", None);
        assert_eq!((d.agent, d.domain, d.fallback), (AgentKind::Intendant, Domain::Perso, None));
        assert_eq!(parse("x", "je pense intendant", None).fallback, Some(FallbackReason::NotJson));
        assert_eq!(
            parse("x", r#"{"agent": "chef", "domain": "PERSO"}"#, None).fallback,
            Some(FallbackReason::BadAgent)
        );
        assert_eq!(
            parse("x", r#"{"agent": "mentor", "domain": "LOISIRS"}"#, None).fallback,
            Some(FallbackReason::BadDomain)
        );
        // Deterministic: the same text always gives the same fallback.
        let a = parse("note pour le projet Atlas", "???", None);
        let b = parse("note pour le projet Atlas", "!!!", None);
        assert_eq!((a.agent, a.domain), (b.agent, b.domain));
        assert_eq!((a.agent, a.domain), (AgentKind::Mentor, Domain::Travail));
        assert_eq!(parse("rappelle-moi le pain", "", None).agent, AgentKind::Intendant);
    }
}
