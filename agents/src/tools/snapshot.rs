//! The wire contract of the tools, pinned: every tool's name, description, JSON Schema and
//! the French labels of its arguments, compared byte for byte with
//! `agents/tests/tool_schemas.json`. A change there is a change of docs/interface.md §4.
//! `ARTHUR_UPDATE_SNAPSHOT=1 cargo test -p arthur-agents --lib snapshot` rewrites the file.

use serde_json::{json, Map, Value};

use super::ToolBox;

const SNAPSHOT: &str = include_str!("../../tests/tool_schemas.json");

/// Every tool in registry order, as the models and the user see it.
fn current() -> String {
    let tools: Vec<Value> = ToolBox::new()
        .all()
        .map(|t| {
            let d = t.definition();
            let labels: Map<String, Value> = d.parameters["properties"]
                .as_object()
                .into_iter()
                .flat_map(|p| p.keys())
                .map(|arg| (arg.clone(), Value::from(super::args::field(arg))))
                .collect();
            json!({
                "name": d.name,
                "description": d.description,
                // What goes on the wire, byte for byte.
                "wire": serde_json::to_string(&d.parameters).expect("a schema serialises"),
                "labels": labels,
            })
        })
        .collect();
    serde_json::to_string_pretty(&tools).expect("serialises") + "\n"
}

#[test]
fn every_tool_schema_is_the_pinned_one_byte_for_byte() {
    let now = current();
    if std::env::var_os("ARTHUR_UPDATE_SNAPSHOT").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tool_schemas.json");
        std::fs::write(path, &now).expect("snapshot written");
        return;
    }
    assert_eq!(now, SNAPSHOT, "the tools' wire contract changed: see docs/interface.md §4");
}
