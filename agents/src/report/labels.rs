//! What the user reads in place of internal names: a tool is an action said in French, an
//! argument is what it holds (both declared with the tools), a router fallback is its
//! reason. The internal names stay in logs, the trace and `--json`.

/// The action a tool call stands for, as « je n'ai pas pu … » completes it (the table of
/// the tools: [`crate::tools::ToolName::action`]). A name no tool has (an old trace, a
/// model's invention) reads as « faire cette action ».
pub fn action(tool: &str) -> &'static str {
    crate::tools::ToolName::from_wire(tool).map_or("faire cette action", crate::tools::ToolName::action)
}

/// What an argument holds, with its article: « le texte », « l'échéance ».
pub use crate::tools::args::field;

/// A router fallback's reason, for the journal.
pub fn fallback(reason: &str) -> &'static str {
    match reason {
        "model_unavailable" => "aucun modèle ne répond",
        "not_json" => "réponse du routeur illisible",
        "bad_agent" => "agent inconnu dans la réponse du routeur",
        "bad_domain" => "domaine inconnu dans la réponse du routeur",
        "confirmation" => "réponse à une question",
        "bare_command" => "commande brève, demandée d'abord",
        "local" => "compris sans modèle",
        _ => "autre",
    }
}

/// A tool outcome's kind, for the journal.
pub fn outcome(kind: &str) -> &'static str {
    match kind {
        "done" => "fait",
        "refused" => "refusé",
        "failed" => "panne",
        "briefing" => "briefing",
        _ => "inconnu",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_and_argument_has_a_french_label() {
        let tools = crate::tools::ToolBox::new();
        let mut seen = 0;
        for tool in tools.all() {
            let d = tool.definition();
            seen += 1;
            assert_ne!(action(d.name), "faire cette action", "{}", d.name);
            for arg in d.parameters["properties"].as_object().into_iter().flat_map(|p| p.keys()) {
                assert_ne!(field(arg), "une donnée de la demande", "{}.{arg}", d.name);
            }
        }
        assert_eq!(seen, crate::tools::ToolName::ALL.len());
    }
}
