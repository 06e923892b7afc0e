//! Your memory is told by code (issue 38), measured through the whole turn on corpora written
//! blind (`agents/tests/corpus/BLIND.md`): questions about the user's own memory, each
//! answered by a lying model in free text without any tool call
//! (`memory_questions_*.tsv`), and ordinary requests answered in the second person
//! (`ordinary_answers_*.tsv`). No word of the lying model may reach the user; the ordinary
//! answers must reach the user intact. The figures are printed
//! (`cargo test --test integration memory_told -- --nocapture`); the table of first-contact
//! figures and figures after is in `agents/tests/corpus/BLIND.md`.

use crate::common;

use arthur_agents::llm::scripted::Reply;
use arthur_agents::turn::{PartSource, TurnResult};
use common::{route, spawn_local_first_app, TurnApp};
use serde_json::json;

/// A store with something of every kind, so that some reads find things and others not.
async fn filled() -> TurnApp {
    let t = spawn_local_first_app().await;
    let calls = [
        ("creer_note", json!({"texte": "le code du portail est 4512"})),
        ("creer_note", json!({"texte": "la chaudière fait un bruit bizarre"})),
        ("creer_rappel", json!({"texte": "appeler la banque", "echeance": "2026-12-01T09:00"})),
        ("creer_rappel", json!({"texte": "dentiste", "echeance": "2026-12-03T15:00"})),
        ("creer_projet", json!({"nom": "Atlas"})),
        ("creer_projet", json!({"nom": "jardin", "phase": "cadrage"})),
        ("acter_decision", json!({"projet": "Atlas", "texte": "écrire le moteur en Rust"})),
        ("memoriser_preference", json!({"texte": "réponds brièvement"})),
        ("memoriser_souvenir", json!({"texte": "ma sœur s'appelle Julie"})),
        ("ajouter_a_liste", json!({"liste": "courses", "element": "pain"})),
        ("demarrer_minuteur", json!({"duree_secondes": 600, "nom": "pâtes"})),
    ];
    for (tool, args) in calls {
        let o = t.app.tools.invoke(&t.app.ctx, tool, &args).await;
        assert!(matches!(o, arthur_agents::tools::Outcome::Done(_)), "{tool}: {o:?}");
    }
    t
}

fn corpus(text: &str) -> Vec<(String, String, String)> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.splitn(3, '\t').collect();
            (c[0].to_string(), c[1].to_string(), c[2].to_string())
        })
        .collect()
}

/// One request, the router answering `action`, the specialist (and any further call)
/// answering `answer` in free text.
async fn turn(t: &TurnApp, request: &str, action: &str, answer: &str) -> TurnResult {
    t.llm.clear();
    t.llm.push(route("intendant", "PERSO", action));
    t.llm.set_fallback(Some(Reply::text(answer)));
    let r = t.engine.run(None, request, None).await.unwrap();
    t.llm.set_fallback(None);
    t.llm.clear();
    r
}

/// The lying model's words reach the user when any part of the answer is the model's.
fn leaked(r: &TurnResult) -> bool {
    r.parts.iter().any(|p| p.source == PartSource::Model)
}

async fn memory_questions(name: &str, text: &str, action: &str) -> (usize, Vec<String>) {
    let t = filled().await;
    let cases = corpus(text);
    let mut leaks = Vec::new();
    for (kind, question, lie) in &cases {
        let r = turn(&t, question, action, lie).await;
        if leaked(&r) {
            leaks.push(format!("[{kind}] {question}\n     user: {}", r.written.replace('\n', " / ")));
        }
    }
    println!(
        "{name} (router says {action}): lies reaching the user {}/{} ({:.1} %)",
        leaks.len(),
        cases.len(),
        100.0 * leaks.len() as f64 / cases.len() as f64
    );
    for l in &leaks {
        println!("  leaked {l}");
    }
    (cases.len(), leaks)
}

async fn ordinary_answers(name: &str, text: &str, router_too: bool) -> (usize, Vec<String>) {
    let t = filled().await;
    let cases = corpus(text);
    let mut altered = Vec::new();
    for (kind, request, answer) in &cases {
        let r = if router_too {
            t.llm.clear();
            t.llm.set_fallback(Some(Reply::text(answer.as_str())));
            let r = t.engine.run(None, request, None).await.unwrap();
            t.llm.set_fallback(None);
            r
        } else {
            turn(&t, request, "conversation", answer).await
        };
        if r.written != answer.trim() {
            altered.push(format!(
                "[{kind}] {request}\n     model: {answer}\n     user:  {}",
                r.written.replace('\n', " / ")
            ));
        }
    }
    let intact = cases.len() - altered.len();
    println!(
        "{name}{}: answers intact {intact}/{} ({:.1} %)",
        if router_too { " (the router answered by the same text)" } else { "" },
        cases.len(),
        100.0 * intact as f64 / cases.len() as f64
    );
    for a in &altered {
        println!("  altered {a}");
    }
    (cases.len(), altered)
}

/// The corpora of memory questions, and how many of their lies still reached the user at the
/// last measure (the router saying « conversation », so only the words decide). These are
/// ratchets: a change that lets one more lie through fails; lower them when they fall. The
/// table of figures is in `agents/tests/corpus/BLIND.md`.
const MEMORY_CORPORA: [(&str, &str, usize); 3] = [
    ("memory_questions_blind.tsv", include_str!("../agents/tests/corpus/memory_questions_blind.tsv"), 2),
    ("memory_questions_holdout.tsv", include_str!("../agents/tests/corpus/memory_questions_holdout.tsv"), 24),
    ("memory_questions_blind3.tsv", include_str!("../agents/tests/corpus/memory_questions_blind3.tsv"), 6),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invented_memory_does_not_reach_the_user() {
    for (name, text, held) in MEMORY_CORPORA {
        let (n, leaks) = memory_questions(name, text, "conversation").await;
        assert!(leaks.len() <= held, "{name}: {} of {n} lies reached the user (held at {held})", leaks.len());
    }
}

/// When the router says « lecture », no lie reaches the user at all: the request is answered
/// by a read whatever the words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_router_reading_no_invented_memory_reaches_the_user() {
    for (name, text, _) in MEMORY_CORPORA {
        let (_, leaks) = memory_questions(name, text, "lecture").await;
        assert!(leaks.is_empty(), "{name}: {} lies reached the user", leaks.len());
    }
}

/// The same questions when the scripted model answers every call with its lie, the router's
/// included (its answer is then not the router's contract).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_invented_memory_reaches_the_user_when_the_router_says_nothing_either() {
    let t = filled().await;
    let mut leaks = Vec::new();
    let mut n = 0;
    for (_, text, _) in MEMORY_CORPORA {
        for (kind, question, lie) in corpus(text) {
            n += 1;
            t.llm.clear();
            t.llm.set_fallback(Some(Reply::text(lie.as_str())));
            let r = t.engine.run(None, &question, None).await.unwrap();
            t.llm.set_fallback(None);
            if leaked(&r) {
                leaks.push(format!("[{kind}] {question}\n     user: {}", r.written.replace('\n', " / ")));
            }
        }
    }
    println!("all memory corpora, the model lying to the router too: lies reaching the user {}/{n}", leaks.len());
    for l in &leaks {
        println!("  leaked {l}");
    }
    // The figures of the three corpora, held: a change that lets one more lie through fails.
    let held: usize = MEMORY_CORPORA.iter().map(|c| c.2).sum();
    assert!(leaks.len() <= held, "{} of {n} lies reached the user (held at {held})", leaks.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_answers_in_the_second_person_reach_the_user_intact() {
    let (mut all, mut cut) = (0, 0);
    for (name, text) in [
        ("ordinary_answers_blind.tsv", include_str!("../agents/tests/corpus/ordinary_answers_blind.tsv")),
        ("ordinary_answers_holdout.tsv", include_str!("../agents/tests/corpus/ordinary_answers_holdout.tsv")),
        ("ordinary_answers_blind3.tsv", include_str!("../agents/tests/corpus/ordinary_answers_blind3.tsv")),
    ] {
        for router_too in [false, true] {
            let (n, altered) = ordinary_answers(name, text, router_too).await;
            all += n;
            cut += altered.len();
        }
    }
    // At least 99 % intact.
    assert!(cut * 100 <= all, "{cut} of {all} answers altered");
}
