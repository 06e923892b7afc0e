//! Offline mode end to end through `arthur ask --json`: with no provider configured, and
//! with a provider that answers 500 — the same tools, outcomes and reports as the online
//! turn (whose model is scripted, local-first off), with no "offline" notice on a command the
//! grammar knows; a question before an unsure write; "oui" and "non".

use std::process::Command;

use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use serde_json::Value;

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    fn command(&self) -> Command {
        let mut c = crate::common::arthur_command();
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("ARTHUR_DATA_DIR", self.dir.path().join("data"));
        c
    }

    /// The code report of one tool run directly (`arthur tool`).
    fn tool_report(&self, provider: Option<&str>, name: &str, args: &str) -> String {
        let mut c = self.command();
        if let Some(base) = provider {
            c.env("MISTRAL_API_KEY", "test-key").env("MISTRAL_BASE_URL", base);
        }
        let out = c.args(["tool", name, args]).output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim_end().to_string()
    }

    fn ask(&self, provider: Option<&str>, args: &[&str]) -> Value {
        self.ask_with(provider, &[], args)
    }

    fn ask_with(&self, provider: Option<&str>, env: &[(&str, &str)], args: &[&str]) -> Value {
        let mut c = crate::common::arthur_command();
        c.envs(env.iter().copied());
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("ARTHUR_DATA_DIR", self.dir.path().join("data"))
            .arg("ask")
            .arg("--json")
            .args(args);
        if let Some(base) = provider {
            c.env("MISTRAL_API_KEY", "test-key").env("MISTRAL_BASE_URL", base);
        }
        let out = c.output().unwrap();
        let mut v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        // The exit code says what the incident says: 3 refused, 4 failed, 0 otherwise.
        let expected = match v["incident"]["kind"].as_str() {
            Some("refus") => 3,
            Some("panne") => 4,
            _ => 0,
        };
        assert_eq!(out.status.code(), Some(expected), "{v}: {}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let conversation = stderr.lines().find_map(|l| l.strip_prefix("conversation: ")).unwrap_or_default();
        v["_conversation"] = Value::String(conversation.to_string());
        v
    }
}

/// Commands, and the tool call the online model makes for them.
const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "rappelle-moi d'appeler la banque le 3 décembre 2099 à 9 h",
        "creer_rappel",
        r#"{"texte": "appeler la banque", "echeance": "2099-12-03T09:00"}"#,
    ),
    ("note : acheter du pain", "creer_note", r#"{"texte": "acheter du pain"}"#),
    ("quels sont mes rappels ?", "lister_rappels", "{}"),
    ("le rappel 7 est fait", "marquer_rappel_fait", r#"{"id": 7}"#),
    (
        "retiens que je préfère des réponses courtes",
        "memoriser_preference",
        r#"{"texte": "je préfère des réponses courtes"}"#,
    ),
    ("désactive la préférence 3", "desactiver_preference", r#"{"id": 3}"#),
    ("je fais une pause", "suspendre_session", "{}"),
    ("je commence à travailler sur Atlas", "demarrer_session", r#"{"projet": "Atlas"}"#),
    ("cherche dans ma mémoire le code du portail", "chercher_dans_memoire", r#"{"requete": "code du portail"}"#),
    ("quelles sont mes préférences ?", "lister_preferences", "{}"),
];

/// The code-composed report lines (everything after the offline notice).
fn reports(v: &Value) -> String {
    let written = v["written"].as_str().unwrap();
    written.lines().filter(|l| !l.starts_with("Je suis hors ligne")).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_gives_the_same_outcomes_and_reports_as_online() {
    let failing = ScriptedLlm::start().await;
    failing.set_fallback(Some(Reply::status(500, "internal error")));
    for (said, tool, args) in COMMANDS {
        let online_home = Home::new();
        // A fresh script per command: a refusal leaves the final answer unused.
        let online_llm = ScriptedLlm::start().await;
        online_llm.push(Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "ecriture"}"#));
        online_llm.push(Reply::tool_calls("", &[(tool, args)]));
        online_llm.push(Reply::text("Voilà."));
        let online = online_home.ask_with(Some(&online_llm.base_url()), &[("ARTHUR_LOCAL_FIRST", "0")], &[said]);

        let offline = Home::new().ask(None, &[said]);
        let unreachable = Home::new().ask(Some(&failing.base_url()), &[said]);

        let failing_url = failing.base_url();
        for (label, v, provider) in
            [("no provider", &offline, None), ("provider failing", &unreachable, Some(failing_url.as_str()))]
        {
            assert_eq!(v["tools"], online["tools"], "{said}: {label}");
            assert_eq!(v["incident"], online["incident"], "{said}: {label}");
            // Writes: the receipt the online turn gave. Reads: the tool's own code report,
            // on a home with the same providers (the search mode depends on them).
            let expected = if arthur_agents::tools::writes(tool) {
                reports(&online)
            } else {
                Home::new().tool_report(provider, tool, args)
            };
            assert_eq!(reports(v), expected, "{said}: {label}");
            // A command the grammar knows needs no model: nothing to say about being offline.
            assert!(!v["written"].as_str().unwrap().contains("hors ligne"), "{said}: {label}: {v}");
            assert!(!v["spoken"].as_str().unwrap().contains("hors ligne"), "{said}: {label}");
        }
        assert_eq!(offline["llm_calls"], 0);
        // Online too, the answer is code's: the model's "Voilà." after the tool is never shown.
        assert!(!online["written"].as_str().unwrap().contains("Voilà"), "{said}: {online}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsure_write_waits_for_oui_and_non_cancels() {
    let home = Home::new();
    let first = home.ask(None, &["rappelle-moi d'appeler le notaire"]);
    assert!(
        first["written"].as_str().unwrap().contains("Tu veux que je crée le rappel « appeler le notaire » pour"),
        "{first}"
    );
    assert_eq!(first["tools"], serde_json::json!([]), "nothing written before the answer");
    let conversation = first["_conversation"].as_str().unwrap().to_string();
    let yes = home.ask(None, &["--conversation", &conversation, "oui"]);
    assert_eq!(yes["tools"], serde_json::json!([{"name": "creer_rappel", "outcome": "done"}]));
    assert!(yes["written"].as_str().unwrap().contains("Rappel n°1 enregistré : « appeler le notaire »"), "{yes}");

    let again = home.ask(None, &["--conversation", &conversation, "je préfère que tu sois bref"]);
    assert!(
        again["written"]
            .as_str()
            .unwrap()
            .contains("Tu veux que je retienne la préférence « je préfère que tu sois bref » ?"),
        "{again}"
    );
    let no = home.ask(None, &["--conversation", &conversation, "non"]);
    assert_eq!(no["written"], "D'accord, je n'ai rien fait.");
    assert_eq!(no["tools"], serde_json::json!([]));
    // "oui" with nothing pending is not a command.
    let stray = home.ask(None, &["--conversation", &conversation, "oui"]);
    assert!(stray["written"].as_str().unwrap().contains("Rien n'a été fait"), "{stray}");
    assert_eq!(stray["tools"], serde_json::json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_requests_are_refused_honestly_offline() {
    let v = Home::new().ask(None, &["raconte-moi une blague"]);
    assert_eq!(v["written"], arthur_agents::turn::local::NOT_UNDERSTOOD_OFFLINE);
    assert_eq!(v["tools"], serde_json::json!([]));
    assert_eq!(v["incident"], Value::Null);
}

/// A question opens a frame that the next `arthur ask --conversation` answers (issue 39,
/// docs/interface.md §3.8): a fill runs the command asked, a « oui » runs what followed it
/// too, a correction right after a write redoes it, another command closes the frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_answered_by_the_next_ask_of_its_conversation() {
    let home = Home::new();
    let export = |home: &Home| -> Value {
        let out = home.command().args(["export", "--json"]).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };

    // A missing duration asked, then given alone.
    let ask = home.ask(None, &["mets un minuteur"]);
    assert_eq!(ask["tools"], serde_json::json!([]), "{ask}");
    assert!(ask["written"].as_str().unwrap().contains('?'), "a question: {ask}");
    let conversation = ask["_conversation"].as_str().unwrap().to_string();
    let fill = home.ask(None, &["--conversation", &conversation, "cinq minutes"]);
    assert_eq!(fill["tools"], serde_json::json!([{"name": "demarrer_minuteur", "outcome": "done"}]), "{fill}");

    // The same reply in another conversation fills nothing.
    let ask = home.ask(None, &["mets un minuteur"]);
    let elsewhere = home.ask(None, &["--conversation", "une-autre", "cinq minutes"]);
    assert_eq!(elsewhere["tools"], serde_json::json!([]), "{elsewhere}");
    // Another command closes the frame: the time is told, nothing started, and the frame is gone.
    let conversation = ask["_conversation"].as_str().unwrap().to_string();
    let other = home.ask(None, &["--conversation", &conversation, "quelle heure est-il ?"]);
    assert!(other["written"].as_str().unwrap().starts_with("Il est "), "{other}");
    let late = home.ask(None, &["--conversation", &conversation, "cinq minutes"]);
    assert_eq!(late["tools"], serde_json::json!([]), "the frame was closed: {late}");

    // « oui » to creating a project runs the session that was asked in the first place.
    let ask = home.ask(None, &["démarre une session sur le projet potager"]);
    assert_eq!(ask["tools"], serde_json::json!([]), "{ask}");
    let conversation = ask["_conversation"].as_str().unwrap().to_string();
    let yes = home.ask(None, &["--conversation", &conversation, "oui"]);
    assert_eq!(
        yes["tools"],
        serde_json::json!([{"name": "creer_projet", "outcome": "done"}, {"name": "demarrer_session", "outcome": "done"}]),
        "{yes}"
    );
    let store = export(&home);
    assert!(store["projets"].to_string().contains("potager"), "{store}");
    assert!(store["sessions"].to_string().contains("potager"), "{store}");

    // A correction right after a reminder is written redoes it: one reminder, at 11 h.
    let first = home.ask(None, &["rappelle-moi d'appeler le plombier le 3 décembre 2099 à 10 h"]);
    assert_eq!(first["tools"], serde_json::json!([{"name": "creer_rappel", "outcome": "done"}]), "{first}");
    let conversation = first["_conversation"].as_str().unwrap().to_string();
    let fixed = home.ask(None, &["--conversation", &conversation, "non, à onze heures"]);
    assert!(fixed["written"].as_str().unwrap().starts_with("Je corrige :"), "{fixed}");
    let rappels: Vec<Value> = export(&home)["rappels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["texte"] == "appeler le plombier")
        .cloned()
        .collect();
    assert_eq!(rappels.len(), 1, "{rappels:?}");
    // Stored in UTC: 11 h in Paris in December.
    assert_eq!(rappels[0]["echeance"], "2099-12-03T10:00:00Z", "{rappels:?}");
}
