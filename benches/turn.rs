//! `cargo bench --bench turn`: for a set of typical requests, the prompt size of each
//! exchange (router + specialist calls: request bytes, and tokens as reported by the
//! server's usage) and the turn's overhead outside model time, on a real SQLite file and a
//! scripted model server on loopback.

use std::sync::Arc;
use std::time::Duration;

use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::ProviderKind;
use arthur_agents::memory::{MemoryStore, SqliteStore};
use arthur_agents::secret::Secret;
use arthur_agents::time::SystemClock;
use arthur_agents::tools::{ToolBox, ToolContext};
use arthur_agents::turn::TurnEngine;
use serde_json::json;

struct Case {
    said: &'static str,
    agent: &'static str,
    calls: &'static [(&'static str, &'static str)],
}

const CASES: &[Case] = &[
    Case {
        said: "rappelle-moi d'appeler la banque demain à 9 h",
        agent: "intendant",
        calls: &[("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2099-12-01T09:00"}"#)],
    },
    Case {
        said: "note : acheter du pain",
        agent: "intendant",
        calls: &[("creer_note", r#"{"texte": "acheter du pain"}"#)],
    },
    Case { said: "qu'est-ce que j'ai comme rappels ?", agent: "intendant", calls: &[("lister_rappels", "{}")] },
    Case {
        said: "je commence à bosser sur Atlas",
        agent: "mentor",
        calls: &[("demarrer_session", r#"{"projet": "Atlas"}"#)],
    },
    Case { said: "j'arrête", agent: "intendant", calls: &[("arreter_session", "{}")] },
    Case {
        said: "combien j'ai travaillé aujourd'hui ?",
        agent: "intendant",
        calls: &[("lire_temps_travail", r#"{"debut": "2026-11-30"}"#)],
    },
    Case {
        said: "retiens que je préfère des réponses courtes",
        agent: "intendant",
        calls: &[("memoriser_preference", r#"{"texte": "réponses courtes"}"#)],
    },
    Case {
        said: "on a décidé de passer Atlas en Rust",
        agent: "mentor",
        calls: &[("acter_decision", r#"{"projet": "Atlas", "texte": "passer en Rust"}"#)],
    },
    Case {
        said: "c'est quoi déjà le code du portail ?",
        agent: "mentor",
        calls: &[("chercher_dans_memoire", r#"{"requete": "code portail"}"#)],
    },
    Case { said: "bonjour Arthur", agent: "intendant", calls: &[] },
];

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open_path(&dir.path().join("bench.db")).await.unwrap());
    let ctx = ToolContext {
        store: store.clone() as Arc<dyn MemoryStore>,
        clock: Arc::new(SystemClock),
        tz: chrono_tz::Europe::Paris,
        embedder: None,
        preferences_cap: 20,
    };
    let tools = ToolBox::new();
    tools.invoke(&ctx, "creer_projet", &json!({"nom": "Atlas"})).await;
    for i in 0..15 {
        tools
            .invoke(
                &ctx,
                "memoriser_preference",
                &json!({"texte": format!("préférence de test numéro {i}, assez longue pour peser")}),
            )
            .await;
    }
    tools.invoke(&ctx, "memoriser_souvenir", &json!({"texte": "le code du portail est 4521"})).await;

    let llm = ScriptedLlm::start().await;
    let options =
        ClientOptions { retries_per_provider: 0, backoff_base: Duration::from_millis(1), ..ClientOptions::default() };
    let client = LlmClient::new(
        vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("bench"))],
        ConfiguredModels::default(),
        options,
    )
    .unwrap();
    let engine = TurnEngine::new(Some(Arc::new(client)), ctx);

    println!(
        "cargo bench --bench turn — scripted model on loopback, 15 active preferences of 60 characters, SQLite file"
    );
    println!("{:<48} {:>6} {:>12} {:>12} {:>12}", "request", "calls", "prompt bytes", "prompt tok*", "overhead µs");
    let mut all_tokens = Vec::new();
    let mut overheads = Vec::new();
    for round in 0..5 {
        for case in CASES {
            let agent = case.agent;
            llm.push(Reply::text(format!(r#"{{"agent": "{agent}", "domain": "QUOTIDIEN", "action": "ecriture"}}"#)));
            if case.calls.first().map(|c| c.0) == Some("memoriser_preference") {
                // A new preference each round, so none is refused as a duplicate.
                let args = format!(r#"{{"texte": "réponses courtes, manche {round}"}}"#);
                llm.push(Reply::tool_calls("", &[("memoriser_preference", args.as_str())]));
            } else if !case.calls.is_empty() {
                llm.push(Reply::tool_calls("", case.calls));
            }
            llm.push(Reply::text("D'accord."));
            let before = llm.requests().len();
            let r = engine.run(None, case.said, None).await.unwrap();
            let requests = llm.requests();
            let bytes: usize = requests[before..].iter().map(|q| q.body.to_string().len()).sum();
            assert_eq!(llm.remaining(), 0, "{}: the script and the turn disagree", case.said);
            let specialist: u64 = r.trace.calls.iter().filter_map(|c| c.prompt_tokens.map(u64::from)).sum();
            let tokens = specialist + r.trace.router["call"]["prompt_tokens"].as_u64().unwrap_or(0);
            overheads.push(r.trace.overhead_us);
            all_tokens.push(tokens);
            if round == 0 {
                println!(
                    "{:<48} {:>6} {:>12} {:>12} {:>12}",
                    case.said,
                    r.llm_calls + 1,
                    bytes,
                    tokens,
                    r.trace.overhead_us
                );
            }
        }
    }
    println!(
        "exchanges: {}; prompt tokens per exchange: median {}, max {} (target ≤ 4000)",
        all_tokens.len(),
        median(all_tokens.clone()),
        all_tokens.iter().max().unwrap()
    );
    println!(
        "turn overhead outside model time: median {} µs, max {} µs",
        median(overheads.clone()),
        overheads.iter().max().unwrap()
    );
    println!("* tokens as reported by the server's usage; the scripted server derives them from the request size (bytes / 4).");
}
