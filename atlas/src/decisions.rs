//! The founder's decisions on one message — approve a held launch, refuse it (or what a
//! message materialised), put back a message parked after errors — with the French line
//! that says what really happened, composed from the store's answer. `arthur atlas
//! approve|cancel|retry ID` and the `/atlas` page's buttons share them, so both say the same.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::store::{AtlasStore, Requeue, StoreResult};
use crate::EmailState;

/// `arthur atlas approve ID` (and the web button): (exit code, the French line).
pub async fn approve(store: &dyn AtlasStore, id: i64, by: &str, now: DateTime<Utc>) -> StoreResult<(u8, String)> {
    let Some(row) = store.email(id).await? else {
        return Ok((1, format!("Erreur : aucun e-mail Atlas n°{id}. Rien n'a été approuvé.")));
    };
    if store.approve_launch(id, json!({"by": by}), now).await? {
        return Ok((
            0,
            format!("E-mail n°{id} approuvé : il sera lancé au prochain cycle du lanceur (dans 5 minutes au plus)."),
        ));
    }
    Ok((
        1,
        format!(
            "Erreur : l'e-mail n°{id} n'attend pas d'accord (état {}). Rien n'a été approuvé.",
            row.status.as_str()
        ),
    ))
}

/// `arthur atlas retry ID` (and the web button): (exit code, the French line).
pub async fn retry(store: &dyn AtlasStore, id: i64, by: &str, now: DateTime<Utc>) -> StoreResult<(u8, String)> {
    Ok(match store.retry_parked(id, json!({"by": by}), now).await? {
        Requeue::Requeued { from, to } => (
            0,
            format!(
                "E-mail n°{id} remis dans la file ({} → {}) : il sera repris à la prochaine relève (dans une minute au plus).",
                from.as_str(),
                to.as_str()
            ),
        ),
        Requeue::NotParked(EmailState::Blocked) => (
            1,
            format!("Erreur : l'e-mail n°{id} est bloqué par une pièce jointe non saine ; il ne sera jamais relancé."),
        ),
        Requeue::NotParked(state) => (
            1,
            format!(
                "Erreur : l'e-mail n°{id} n'est pas mis de côté après des erreurs (état {}). Rien n'a changé.",
                state.as_str()
            ),
        ),
        Requeue::Missing => (1, format!("Erreur : aucun e-mail Atlas n°{id}. Rien n'a changé.")),
    })
}

/// `arthur atlas cancel ID` (and the web button): a held launch is refused and the message
/// ends `cancelled`; otherwise what the message materialised is marked refused.
pub async fn cancel(store: &dyn AtlasStore, id: i64, by: &str, now: DateTime<Utc>) -> StoreResult<(u8, String)> {
    if let Some(item) = store.refuse_launch(id, json!({"by": by}), now).await? {
        let what = item.map(|(kind, n)| format!(" ; {kind} n°{n} annulé")).unwrap_or_default();
        return Ok((0, format!("E-mail n°{id} : lancement refusé, rien ne sera lancé{what}.")));
    }
    Ok(match store.cancel_item(id, now).await? {
        Some((kind, item)) => (0, format!("E-mail n°{id} : {kind} n°{item} annulé.")),
        None => (1, format!("Erreur : l'e-mail Atlas n°{id} n'existe pas ou n'a rien créé. Rien n'a été annulé.")),
    })
}
