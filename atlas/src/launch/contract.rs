//! The contract the agent writes (spec §3.2): a JSON file the launcher seeds with a
//! placeholder, read leniently after each pass — every field has a safe default, and a
//! placeholder left untouched means the agent never wrote its own.

use std::path::Path;

use serde_json::Value;

use crate::machine::Contract;

/// What the launcher writes as the contract before the run; an agent that never writes its
/// own leaves exactly this.
pub const CONTRACT_PLACEHOLDER: &str = r#"{"ok":false,"commits":[],"summary_md":""}"#;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContractSource {
    Read,
    /// The file still holds the launcher's placeholder: the agent never wrote its contract.
    NotWritten,
    Missing,
    Invalid(String),
}

pub fn parse_contract(text: &str) -> Result<Contract, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let strings = |key: &str| -> Vec<String> {
        obj.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).filter(|s| !s.trim().is_empty()).collect())
            .unwrap_or_default()
    };
    let text_field =
        |key: &str| obj.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    Ok(Contract {
        ok: obj.get("ok").and_then(Value::as_bool).unwrap_or(false),
        intent: obj.get("intent").and_then(Value::as_str).and_then(|s| s.parse().ok()),
        tenant: text_field("tenant").filter(|t| t != "null"),
        routes_to_qa: strings("routes_to_qa"),
        commits: strings("commits"),
        summary_md: text_field("summary_md").unwrap_or_default(),
        draft_reply_for_user: text_field("draft_reply_for_user"),
    })
}

pub fn read_contract(path: &Path) -> (Contract, ContractSource) {
    match std::fs::read_to_string(path) {
        Err(_) => (Contract::default(), ContractSource::Missing),
        Ok(text) if text.trim() == CONTRACT_PLACEHOLDER => (Contract::default(), ContractSource::NotWritten),
        Ok(text) => match parse_contract(&text) {
            Ok(c) => (c, ContractSource::Read),
            Err(e) => (Contract::default(), ContractSource::Invalid(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Intent;

    #[test]
    fn contracts_are_read_leniently() {
        let c = parse_contract(
            r#"{"ok": true, "tenant": "shop", "routes_to_qa": ["/a", ""], "commits": ["abc"], "extra": 1}"#,
        )
        .unwrap();
        assert_eq!((c.ok, c.tenant.as_deref(), c.routes_to_qa.len(), c.commits.len()), (true, Some("shop"), 1, 1));
        let c = parse_contract(r#"{"tenant": null, "intent": "question"}"#).unwrap();
        assert_eq!((c.ok, c.tenant, c.intent), (false, None, Some(Intent::Question)));
        assert!(parse_contract("not json").is_err());
        assert!(parse_contract("[1]").is_err());
    }
}
