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
    let model_first = TurnEngine::new(Some(Arc::new(client)), ctx.clone()).with_local_first(false);
    let local_first = TurnEngine::new(Some(Arc::new(client_for(&llm))), ctx);

    println!(
        "cargo bench --bench turn — scripted model on loopback answering after 400 ms per call, 15 active preferences of 60 characters, SQLite file"
    );
    println!(
        "before this round (the regex parser as witness, three model calls per tool turn): median 3 calls, 3515 prompt tokens and 1211 ms per exchange"
    );
    let a = measure(&model_first, &llm, "model path (ARTHUR_LOCAL_FIRST=0)").await;
    let b = measure(&local_first, &llm, "local first (the default)").await;
    for (name, s) in [("model path", &a), ("local first", &b)] {
        println!(
            "{name:<12}: model calls per exchange median {}, total {}; prompt tokens per exchange median {}, max {}; wall time per exchange median {} ms, max {} ms; turn overhead outside model time median {} µs, max {} µs",
            median(s.calls.clone()),
            s.calls.iter().sum::<u64>(),
            median(s.tokens.clone()),
            s.tokens.iter().max().unwrap_or(&0),
            median(s.walls.clone()),
            s.walls.iter().max().unwrap_or(&0),
            median(s.overheads.clone()),
            s.overheads.iter().max().unwrap_or(&0),
        );
    }
    println!("* tokens as reported by the server's usage; the scripted server derives them from the request size (bytes / 4).");
}

fn client_for(llm: &ScriptedLlm) -> LlmClient {
    let options =
        ClientOptions { retries_per_provider: 0, backoff_base: Duration::from_millis(1), ..ClientOptions::default() };
    LlmClient::new(
        vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("bench"))],
        ConfiguredModels::default(),
        options,
    )
    .unwrap()
}

#[derive(Default)]
struct Stats {
    calls: Vec<u64>,
    tokens: Vec<u64>,
    walls: Vec<u64>,
    overheads: Vec<u64>,
}

/// Five rounds of the cases through `engine`; the script holds a reply for every model
/// call the turn makes and nothing more.
async fn measure(engine: &TurnEngine, llm: &ScriptedLlm, title: &str) -> Stats {
    println!("{title}");
    println!(
        "{:<48} {:>6} {:>12} {:>12} {:>9} {:>12}",
        "request", "calls", "prompt bytes", "prompt tok*", "wall ms", "overhead µs"
    );
    let mut s = Stats::default();
    let d = Duration::from_millis(400);
    for round in 0..5 {
        for case in CASES {
            let understood = engine.understand(case.said).await.unwrap();
            let told = matches!(understood.sure(), Some(arthur_agents::understand::Command::Told(_)));
            // A bare chrono word (« j'arrête ») is asked before any model, whoever answers.
            let asks = matches!(
                understood.reading,
                arthur_agents::understand::Reading::Unsure { doubt: arthur_agents::understand::Doubt::AlwaysAsks, .. }
            );
            let local = told || asks || (engine.local_first() && understood.is_command());
            if !local {
                let agent = case.agent;
                let write = case.calls.first().is_some_and(|c| arthur_agents::tools::writes(c.0));
                let action = if case.calls.is_empty() {
                    "conversation"
                } else if write {
                    "ecriture"
                } else {
                    "lecture"
                };
                llm.push(Reply::delayed(
                    d,
                    Reply::text(format!(r#"{{"agent": "{agent}", "domain": "QUOTIDIEN", "action": "{action}"}}"#)),
                ));
                if case.calls.first().map(|c| c.0) == Some("memoriser_preference") {
                    // A new preference each round, so none is refused as a duplicate.
                    let args = format!(r#"{{"texte": "réponses courtes, manche {round}"}}"#);
                    llm.push(Reply::delayed(d, Reply::tool_calls("", &[("memoriser_preference", args.as_str())])));
                } else if !case.calls.is_empty() {
                    llm.push(Reply::delayed(d, Reply::tool_calls("", case.calls)));
                } else {
                    llm.push(Reply::delayed(d, Reply::text("Bonjour !")));
                }
            }
            let before = llm.requests().len();
            let t0 = std::time::Instant::now();
            let r = engine.run(None, case.said, None).await.unwrap();
            let wall = t0.elapsed().as_millis() as u64;
            let requests = llm.requests();
            let bytes: usize = requests[before..].iter().map(|q| q.body.to_string().len()).sum();
            assert_eq!(llm.remaining(), 0, "{}: the script and the turn disagree", case.said);
            let calls = (requests.len() - before) as u64;
            let specialist: u64 = r.trace.calls.iter().filter_map(|c| c.prompt_tokens.map(u64::from)).sum();
            let tokens = specialist + r.trace.router["call"]["prompt_tokens"].as_u64().unwrap_or(0);
            s.calls.push(calls);
            s.tokens.push(tokens);
            s.walls.push(wall);
            s.overheads.push(r.trace.overhead_us);
            if round == 0 {
                println!(
                    "{:<48} {:>6} {:>12} {:>12} {:>9} {:>12}",
                    case.said, calls, bytes, tokens, wall, r.trace.overhead_us
                );
            }
        }
    }
    s
}
