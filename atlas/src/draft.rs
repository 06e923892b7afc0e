//! Draft replies to a client (spec §6.4–6.5): asked by the founder for a finished run,
//! written with the client's own provider and model (Mistral by default), checked by code
//! (formal "vous", 3 to 6 sentences), signed by code, stored and shown — never sent.

use std::sync::Arc;

use arthur_agents::llm::{ChatModel, ChatRequest, Message, ModelRole, ProviderKind};
use chrono::{DateTime, Utc};

use arthur_agents::time::Clock;

use super::mail::{split_cover, truncate_chars, Mail};
use super::store::{AtlasStore, AtlasStoreError};
use super::EmailState;

pub const DRAFT_PROMPT: &str = include_str!("../../prompts/atlas/draft_reply.txt");

#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    #[error("no Atlas e-mail #{0}")]
    NotFound(i64),
    #[error("the run of e-mail #{id} is not finished (state {state})")]
    NotFinished { id: i64, state: &'static str },
    #[error("the client's provider {0} has no API key configured")]
    NoModel(&'static str),
    #[error("the draft could not be written: {0}")]
    Llm(String),
    #[error("the model's draft breaks the rules twice ({0})")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] AtlasStoreError),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub id: i64,
    pub text: String,
    pub provider: String,
    pub model: String,
}

/// The model for one provider and model name (the provider's default when None); None when
/// that provider has no key. Arthur builds it from its providers' settings: there is no
/// silent move to another provider.
pub type ModelFor =
    dyn Fn(ProviderKind, Option<String>) -> Result<Option<(Arc<dyn ChatModel>, ProviderKind)>, String> + Send + Sync;

/// Writes draft replies (the CLI and the web share it).
pub struct Drafter {
    pub store: Arc<dyn AtlasStore>,
    pub clock: Arc<dyn Clock>,
    /// Under every draft ([`crate::settings::AtlasSettings::signature`]).
    pub signature: String,
    pub models: Box<ModelFor>,
}

impl Drafter {
    /// A draft reply for e-mail `id` with its client's provider and model.
    pub async fn write(&self, id: i64) -> Result<Draft, DraftError> {
        let client = match self.store.email(id).await? {
            Some(row) => match row.client_id {
                Some(c) => self.store.client(c).await?,
                None => None,
            },
            None => None,
        };
        let kind = provider_of(client.as_ref().and_then(|c| c.ai_provider.as_deref()));
        let llm = (self.models)(kind, client.as_ref().and_then(|c| c.ai_model.clone())).map_err(DraftError::Llm)?;
        write(self.store.as_ref(), llm, id, &self.signature, self.clock.now()).await
    }
}

/// The provider of a client's drafts: its configured one, Mistral by default.
pub fn provider_of(client_provider: Option<&str>) -> ProviderKind {
    match client_provider {
        Some("anthropic") => ProviderKind::Anthropic,
        Some("openai") => ProviderKind::OpenAi,
        _ => ProviderKind::Mistral,
    }
}

/// Checks the rules code can check: 3 to 6 sentences, "vous", never "tu".
pub fn check(text: &str) -> Result<(), String> {
    let sentences = text
        .split(['.', '!', '?'])
        .map(str::trim)
        .filter(|s| s.chars().filter(|c| c.is_alphabetic()).count() >= 3)
        .count();
    if !(3..=6).contains(&sentences) {
        return Err(format!("{sentences} sentences instead of 3 to 6"));
    }
    let words: Vec<String> = text.split(|c: char| !c.is_alphabetic() && c != '\'').map(|w| w.to_lowercase()).collect();
    if !words.iter().any(|w| w == "vous" || w == "votre" || w == "vos") {
        return Err("no formal \"vous\"".into());
    }
    if words.iter().any(|w| ["tu", "toi", "ton", "ta", "tes", "t'as"].contains(&w.as_str())) {
        return Err("informal \"tu\"".into());
    }
    Ok(())
}

/// Writes, checks, signs and stores a draft for a finished run.
pub async fn write(
    store: &dyn AtlasStore,
    llm: Option<(Arc<dyn ChatModel>, ProviderKind)>,
    email_id: i64,
    signature: &str,
    now: DateTime<Utc>,
) -> Result<Draft, DraftError> {
    let row = store.email(email_id).await?.ok_or(DraftError::NotFound(email_id))?;
    if row.status != EmailState::Actioned {
        return Err(DraftError::NotFinished { id: email_id, state: row.status.as_str() });
    }
    let client = match row.client_id {
        Some(id) => store.client(id).await?,
        None => None,
    };
    let kind = provider_of(client.as_ref().and_then(|c| c.ai_provider.as_deref()));
    let Some((llm, llm_kind)) = llm else { return Err(DraftError::NoModel(kind.as_str())) };
    let raw = store.raw(email_id).await?.unwrap_or_default();
    let mail = Mail::parse(&raw);
    let split = split_cover(&mail.body);
    let (body, _) = truncate_chars(&split.cover, 4000);
    let summary = store
        .launches(email_id)
        .await?
        .last()
        .and_then(|l| l.end.contract.clone())
        .and_then(|c| serde_json::from_str::<serde_json::Value>(&c).ok())
        .map(|c| {
            let summary = c["summary_md"].as_str().unwrap_or("").to_string();
            let hint = c["draft_reply_for_user"]
                .as_str()
                .map(|h| format!("\nPiste de réponse de l'agent : {h}"))
                .unwrap_or_default();
            format!("{summary}{hint}")
        })
        .unwrap_or_default();
    let user = format!(
        "Client : {}\nSujet : {}\n\nUSER_EMAIL_BODY_START\n{}\nUSER_EMAIL_BODY_END\n\nRésumé du travail fait :\n{}",
        client.as_ref().map(|c| c.name.as_str()).unwrap_or("(non résolu)"),
        mail.subject,
        body.replace("USER_EMAIL_BODY_END", "USER EMAIL BODY END"),
        if summary.is_empty() { "(aucun résumé)" } else { &summary }
    );
    let mut messages = vec![Message::system(DRAFT_PROMPT), Message::user(user)];
    let model = client.as_ref().and_then(|c| c.ai_model.clone());
    let mut last_problem = String::new();
    for _ in 0..2 {
        let request = ChatRequest {
            role: ModelRole::Chat,
            messages: messages.clone(),
            tools: vec![],
            json_mode: false,
            tool_choice: Default::default(),
            temperature: Some(0.3),
            max_tokens: Some(600),
        };
        let response = llm.chat(&request, None).await.map_err(|e| DraftError::Llm(e.to_string()))?;
        let text = response.content.trim().to_string();
        match check(&text) {
            Ok(()) => {
                let signed = format!("{text}\n\n{signature}");
                let model_name = model.clone().unwrap_or(response.model.clone());
                let id = store.add_draft(email_id, &signed, llm_kind.as_str(), &model_name, now).await?;
                return Ok(Draft { id, text: signed, provider: llm_kind.as_str().into(), model: model_name });
            }
            Err(problem) => {
                last_problem = problem.clone();
                messages.push(Message::assistant(text, vec![]));
                messages.push(Message::user(format!(
                    "Ce brouillon ne respecte pas la consigne ({problem}). Réécris-le : vouvoiement, 3 à 6 phrases."
                )));
            }
        }
    }
    Err(DraftError::Invalid(last_problem))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_checked_by_code() {
        assert!(check(
            "Bonjour, merci pour votre message. Le panier est corrigé. Vous pouvez vérifier dès maintenant."
        )
        .is_ok());
        assert!(check("Bonjour. Merci.").is_err(), "too short");
        assert!(check("Salut, tu peux regarder. Le panier marche. Dis-moi si ton site va bien.").is_err());
        assert!(check("Le panier est corrigé. Il fonctionne. La page est en ligne.").is_err(), "no vous");
        let long = "Vous avez raison. ".repeat(7);
        assert!(check(&long).is_err(), "too long");
        assert_eq!(provider_of(None), ProviderKind::Mistral);
        assert_eq!(provider_of(Some("anthropic")), ProviderKind::Anthropic);
    }
}
