//! The journal of a run: every event Claude Code prints is redacted and stored as it comes,
//! in batches (one transaction per batch, so the journal keeps up with a chatty run); read
//! back compacted when a new session or the recap needs what a pass did.

use std::sync::Arc;

use arthur_agents::time::Clock;
use serde_json::Value;
use tokio::sync::mpsc;

use super::Launcher;
use crate::compact::{self, CompactOptions};
use crate::mail::truncate_chars;
use crate::redact;
use crate::store::{AtlasStore, AtlasStoreError, JournalEvent};

/// Persists the events as they come: each one redacted, written in batches (one
/// transaction per batch, so the journal keeps up with a chatty run). Returns (events,
/// redactions).
pub async fn journal_writer(
    store: Arc<dyn AtlasStore>,
    clock: Arc<dyn Clock>,
    launch_id: i64,
    mut rx: mpsc::UnboundedReceiver<Value>,
) -> Result<(i64, i64), AtlasStoreError> {
    let mut seq = 0i64;
    let mut redactions = 0i64;
    let mut batch = Vec::with_capacity(256);
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(event) = next {
            seq += 1;
            let (row, n) = journal_event(seq, event);
            redactions += n as i64;
            batch.push(row);
            next = if batch.len() < 256 { rx.try_recv().ok() } else { None };
        }
        store.append_events(launch_id, &batch, clock.now()).await?;
        batch.clear();
    }
    Ok((seq, redactions))
}

/// One event as the journal stores it: type, subtype, tool name, redacted payload.
pub fn journal_event(seq: i64, mut event: Value) -> (JournalEvent, usize) {
    let n = redact::redact_json(&mut event);
    let kind = event["type"].as_str().unwrap_or("unknown").to_string();
    let subtype = event["subtype"].as_str().map(str::to_string);
    let tool_name = event["message"]["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().find(|b| b["type"] == "tool_use"))
        .and_then(|b| b["name"].as_str())
        .map(str::to_string);
    (JournalEvent { seq, kind, subtype, tool_name, payload: event.to_string() }, n)
}

impl Launcher {
    /// The journal of a launch, compacted (spec §4.4.7) and cut to `max` characters.
    pub(super) async fn compacted_transcript(&self, launch_id: i64, max: usize) -> Result<String, AtlasStoreError> {
        let events: Vec<Value> = self
            .store
            .launch_events(launch_id)
            .await?
            .iter()
            .filter_map(|e| serde_json::from_str(&e.payload).ok())
            .collect();
        let text = compact::compact(&events, &CompactOptions::default());
        let (cut, truncated) = truncate_chars(&text, max);
        Ok(if truncated { format!("{cut}\n[… transcript tronqué …]") } else { cut.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn journal_events_are_typed_and_redacted() {
        let event = json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "psql postgres://app:s3cr3tpass@db/prod"}}]}});
        let (row, n) = journal_event(7, event);
        assert_eq!((row.seq, row.kind.as_str(), row.tool_name.as_deref()), (7, "assistant", Some("Bash")));
        assert!(n >= 1 && !row.payload.contains("s3cr3tpass"), "{}", row.payload);
    }
}
