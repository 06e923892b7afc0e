//! Ordinary conversation through the whole turn (the grammar, the router, the model, the
//! composition), measured on the benign corpora written blind
//! (`agents/tests/corpus/conversation_benign.tsv` and `conversation_benign2.tsv`: advice,
//! world facts, recipes, plans the user asked for, encouragement, jokes, poems, honest
//! limits, in French and English). Each answer is the scripted model's; what reaches the
//! user should be that answer, untouched. The figures are printed (`cargo test --test
//! integration conversation -- --nocapture`).

use crate::common;

use arthur_agents::llm::scripted::Reply;
use common::{route, spawn_local_first_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_answers_reach_the_user_untouched() {
    through_the_turn("conversation_benign.tsv", include_str!("../agents/tests/corpus/conversation_benign.tsv")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_answers_of_the_second_corpus_reach_the_user_untouched() {
    through_the_turn("conversation_benign2.tsv", include_str!("../agents/tests/corpus/conversation_benign2.tsv")).await;
}

async fn through_the_turn(name: &str, corpus: &str) {
    let t = spawn_local_first_app().await;
    let (mut answers, mut untouched, mut sentences, mut withheld, mut taken) = (0, 0, 0, 0, Vec::new());
    let mut altered = Vec::new();
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        let (kind, request, answer) = (cols[1], cols[2], cols[3]);
        let understood = t.engine.understand(request).await.unwrap();
        if understood.is_command() {
            // The grammar took the request for a command: the model is never asked.
            taken.push(format!("[{kind}] {request} → {:?}", understood.reading));
            continue;
        }
        t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
        t.llm.push(Reply::text(answer));
        let r = t.engine.run(None, request, None).await.unwrap();
        answers += 1;
        sentences += arthur_agents::turn::claims::sentences(answer).len();
        withheld += r.trace.withheld_claims.len();
        if r.written == answer.trim() {
            untouched += 1;
        } else {
            altered.push(format!("[{kind}] {request}\n     model: {answer}\n     user:  {}", r.written));
        }
        assert!(r.tools.is_empty(), "{request}: {:?}", r.tools);
    }
    assert_eq!(t.llm.remaining(), 0);
    println!(
        "{name} through the turn: answers untouched {untouched}/{answers} ({:.1} %); sentences withheld {withheld}/{sentences} ({:.1} %); requests taken for commands {}",
        100.0 * untouched as f64 / answers.max(1) as f64,
        100.0 * withheld as f64 / sentences.max(1) as f64,
        taken.len()
    );
    for a in &altered {
        println!("  altered {a}");
    }
    for c in &taken {
        println!("  taken   {c}");
    }
}
