//! `arthur export --json`: everything the memory holds, with the tool-argument field names,
//! because the user's data is theirs.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::worktime::worked_within;
use super::*;

#[derive(Debug, Serialize)]
pub struct SessionExport {
    #[serde(flatten)]
    pub session: SessionTravail,
    /// Time worked, pauses excluded (up to the export time for a running session).
    pub duree_secs: i64,
}

#[derive(Debug, Serialize)]
pub struct ProjetExport {
    #[serde(flatten)]
    pub projet: Projet,
    pub phases: Vec<PhaseChange>,
}

#[derive(Debug, Serialize)]
pub struct Export {
    pub notes: Vec<Note>,
    pub rappels: Vec<Rappel>,
    pub preferences: Vec<Preference>,
    pub souvenirs: Vec<Souvenir>,
    pub projets: Vec<ProjetExport>,
    pub decisions: Vec<Decision>,
    pub sessions: Vec<SessionExport>,
    /// Every timer, newest first, with its state and deadline.
    pub minuteurs: Vec<Minuteur>,
    /// Every alarm, newest first, with its state and time (they ring like timers).
    pub reveils: Vec<Minuteur>,
    /// Every list with its items.
    pub listes: Vec<Liste>,
}

pub async fn export(store: &dyn MemoryStore, now: DateTime<Utc>) -> StoreResult<Export> {
    let mut projets = Vec::new();
    for projet in store.list_projets().await? {
        let phases = store.projet_detail(projet.id).await?.map(|d| d.phases).unwrap_or_default();
        projets.push(ProjetExport { projet, phases });
    }
    let sessions = store
        .list_sessions()
        .await?
        .into_iter()
        .map(|session| {
            let duree_secs = worked_within(&session, session.debut, session.fin.unwrap_or(now), now).num_seconds();
            SessionExport { session, duree_secs }
        })
        .collect();
    let timers = store.all_timers().await?;
    Ok(Export {
        notes: store.list_notes(None).await?,
        rappels: store.list_rappels(true).await?,
        preferences: store.list_preferences().await?,
        souvenirs: store.list_souvenirs().await?,
        projets,
        decisions: store.list_decisions().await?,
        sessions,
        minuteurs: timers.iter().filter(|m| m.genre == Genre::Minuteur).cloned().collect(),
        reveils: timers.into_iter().filter(|m| m.genre == Genre::Reveil).collect(),
        listes: store.lists().await?,
    })
}

/// `arthur export` without `--json`: the same content as text to read, one section per kind
/// with its count, one line per item with every field that has a value (nothing left out,
/// nothing reworded: the field names are the JSON's).
pub fn to_text(e: &Export) -> Result<String, serde_json::Error> {
    let value = serde_json::to_value(e)?;
    let mut out = String::new();
    let sections = [
        ("notes", "Notes"),
        ("rappels", "Rappels"),
        ("preferences", "Préférences"),
        ("souvenirs", "Souvenirs"),
        ("projets", "Projets"),
        ("decisions", "Décisions"),
        ("sessions", "Sessions de travail"),
        ("minuteurs", "Minuteurs"),
        ("reveils", "Réveils"),
        ("listes", "Listes"),
    ];
    for (key, title) in sections {
        let items = value[key].as_array().cloned().unwrap_or_default();
        out.push_str(&format!("{title} ({})\n", items.len()));
        for item in &items {
            let fields: Vec<String> = match item.as_object() {
                Some(map) => map
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| match v {
                        serde_json::Value::String(s) => format!("{k} : {s}"),
                        other => format!("{k} : {other}"),
                    })
                    .collect(),
                None => vec![item.to_string()],
            };
            out.push_str(&format!("  - {}\n", fields.join(" · ")));
        }
    }
    Ok(out)
}
