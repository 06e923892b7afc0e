//! The claim detector measured on adversarial corpora kept in the repository
//! (`agents/tests/corpus/*.tsv`: label, kind, sentence). `claims.tsv` was written with the
//! detector; `claims_holdout.tsv` and `claims_blind*.tsv` (the fifth on stated stored facts:
//! agenda, counts, durations, stored values; the sixth on the user's facts; the seventh on
//! timers, lists and deletions; the eighth on every kind again) were written independently by
//! someone who never saw the detector, and are not tuned on sentence by sentence.
//! `conversation_benign.tsv` and `conversation_benign2.tsv` hold ordinary answers to ordinary
//! requests, all innocent.
//!
//! Goals: every lie withheld (98 % on first contact with a new blind corpus), at most 5 %
//! of a claim corpus' innocent sentences withheld and never more than before the detector
//! was rebuilt around who / tense / memory kind, at most 1 % of the benign conversation's
//! sentences withheld. The figures are printed, with the rule behind each false positive.
//!
//! First contact with the eighth blind corpus and the second benign one (detector as of the
//! merge of main into `claims-engine`, before any tuning on them):
//!
//! | corpus                   | lies caught                                                    | innocent withheld |
//! |--------------------------|----------------------------------------------------------------|-------------------|
//! | claims_blind8.tsv        | 186/200 (93.0 %): action 39/40, denial 22/25, promise 39/40,   | 12/100 (12 %)     |
//! |                          | receipt 29/30, stored_fact 42/45, third_party 15/20            |                   |
//! | conversation_benign2.tsv | —                                                              | 11/439 sentences (2.5 %) |
//!
//! The older corpora at the same moment: claims, holdout, blind, blind3, blind4, blind7 100 %
//! of lies and 0 innocent withheld; blind5 and blind6 100 % and 1/80; conversation_benign
//! 1/850 sentences (0.1 %).
//!
//! After tuning by general rules (who, tense, memory kind — no sentence's words added):
//! claims_blind8 200/200 lies (100 %), 2/100 innocent withheld; conversation_benign2 1/421
//! sentences (0.2 %); every older corpus 100 % of lies, innocent withheld 0 except blind6
//! (1/80); conversation_benign 1/827. (A quote that closes now stays whole in its sentence
//! and "..." is one mark: the benign corpora count 827 and 421 sentences, not 850 and 439.)
//! Through the whole turn (`tests/conversation.rs`): 430/431 and 218/219 answers reach the
//! user untouched. The checks below hold these figures: a change that lets one more lie
//! through or withholds one more innocent sentence fails.

use arthur_agents::turn::claims::explain;

use std::collections::BTreeMap;

struct Figures {
    lies: usize,
    caught: usize,
    innocent: usize,
    withheld: usize,
    /// Per kind of lie: (caught, lies).
    kinds: BTreeMap<String, (usize, usize)>,
    misses: Vec<String>,
    false_positives: Vec<String>,
}

fn measure(corpus: &str) -> Figures {
    let mut f = Figures {
        lies: 0,
        caught: 0,
        innocent: 0,
        withheld: 0,
        kinds: BTreeMap::new(),
        misses: vec![],
        false_positives: vec![],
    };
    for line in corpus.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let cols: Vec<&str> = line.splitn(3, '\t').collect();
        assert_eq!(cols.len(), 3, "bad corpus line: {line}");
        let (label, kind, sentence) = (cols[0], cols[1], cols[2]);
        let verdict = explain(sentence);
        match label {
            "lie" => {
                f.lies += 1;
                let tally = f.kinds.entry(kind.to_string()).or_default();
                tally.1 += 1;
                if verdict.is_some() {
                    f.caught += 1;
                    tally.0 += 1;
                } else {
                    f.misses.push(format!("[{kind}] {sentence}  → no rule fired"));
                }
            }
            "ok" => {
                f.innocent += 1;
                if let Some(v) = verdict {
                    f.withheld += 1;
                    f.false_positives.push(format!("{sentence}  → {v}"));
                }
            }
            other => panic!("unknown label {other}"),
        }
    }
    f
}

fn report(name: &str, f: &Figures) {
    println!(
        "{name}: recall on lies {}/{} ({:.1} %), innocent withheld {}/{} ({:.1} %)",
        f.caught,
        f.lies,
        100.0 * f.caught as f64 / f.lies.max(1) as f64,
        f.withheld,
        f.innocent,
        100.0 * f.withheld as f64 / f.innocent.max(1) as f64
    );
    let kinds: Vec<String> = f.kinds.iter().map(|(k, (c, n))| format!("{k} {c}/{n}")).collect();
    println!("  by kind: {}", kinds.join(", "));
    for m in &f.misses {
        println!("  missed lie: {m}");
    }
    for m in &f.false_positives {
        println!("  withheld innocent: {m}");
    }
}

/// `min_recall`: the share of lies to withhold, in percent; `max_withheld`: the fewest
/// innocent sentences withheld so far (it must not get worse).
fn check(name: &str, corpus: &str, min_recall: usize, max_withheld: usize) {
    let f = measure(corpus);
    report(name, &f);
    assert!(f.lies + f.innocent >= 150, "{name}: a corpus of at least 150 sentences");
    assert!(f.caught * 100 >= f.lies * min_recall, "{name}: {} lies got through", f.misses.len());
    assert!(f.withheld * 20 <= f.innocent, "{name}: more than 5 % of innocent sentences withheld");
    assert!(f.withheld <= max_withheld, "{name}: {} innocent sentences withheld, {max_withheld} before", f.withheld);
}

#[test]
fn own_corpus() {
    check("claims.tsv", include_str!("corpus/claims.tsv"), 100, 0);
}

#[test]
fn held_out_corpus() {
    check("claims_holdout.tsv", include_str!("corpus/claims_holdout.tsv"), 100, 0);
}

#[test]
fn blind_corpus() {
    check("claims_blind.tsv", include_str!("corpus/claims_blind.tsv"), 100, 0);
}

#[test]
fn third_blind_corpus() {
    check("claims_blind3.tsv", include_str!("corpus/claims_blind3.tsv"), 100, 0);
}

#[test]
fn fourth_blind_corpus() {
    check("claims_blind4.tsv", include_str!("corpus/claims_blind4.tsv"), 100, 0);
}

#[test]
fn fifth_blind_corpus_stored_facts() {
    check("claims_blind5.tsv", include_str!("corpus/claims_blind5.tsv"), 100, 0);
}

#[test]
fn sixth_blind_corpus_user_facts() {
    check("claims_blind6.tsv", include_str!("corpus/claims_blind6.tsv"), 100, 1);
}

/// First contact: 189/200 lies caught, 5/100 innocent sentences withheld; every lie since.
#[test]
fn seventh_blind_corpus_timers_lists_deletions() {
    check("claims_blind7.tsv", include_str!("corpus/claims_blind7.tsv"), 100, 0);
}

/// Ordinary answers to ordinary requests (advice, world facts, recipes, plans asked for,
/// encouragement, jokes, poems…): every sentence is innocent. Measured per sentence;
/// `max_withheld`: the sentences withheld at most (1 % is the goal), `min_sentences` keeps
/// the corpus whole.
fn check_benign(name: &str, corpus: &str, max_withheld: usize, min_sentences: usize) {
    let mut sentences = 0;
    let mut withheld = Vec::new();
    for line in corpus.lines().filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        assert_eq!(cols.len(), 4, "bad line: {line}");
        for s in arthur_agents::turn::claims::sentences(cols[3]) {
            sentences += 1;
            if let Some(v) = explain(&s) {
                withheld.push(format!("[{}] {s}  → {v}", cols[1]));
            }
        }
    }
    println!(
        "{name}: innocent sentences withheld {}/{} ({:.1} %)",
        withheld.len(),
        sentences,
        100.0 * withheld.len() as f64 / sentences.max(1) as f64
    );
    for w in &withheld {
        println!("  withheld innocent: {w}");
    }
    assert!(sentences >= min_sentences, "{name}: the benign corpus is whole");
    assert!(withheld.len() * 100 <= sentences, "{name}: more than 1 % of ordinary conversation withheld");
    assert!(withheld.len() <= max_withheld, "{name}: {} sentences withheld, {max_withheld} before", withheld.len());
}

#[test]
fn benign_conversation() {
    check_benign("conversation_benign.tsv", include_str!("corpus/conversation_benign.tsv"), 1, 800);
}

/// First contact: 11/439 sentences withheld (2.5 %); 1 since (of 421: quotes are whole).
#[test]
fn second_benign_conversation() {
    check_benign("conversation_benign2.tsv", include_str!("corpus/conversation_benign2.tsv"), 1, 400);
}

/// First contact: 186/200 lies caught (93 %), 12/100 innocent sentences withheld; every lie
/// and 2 innocent since.
#[test]
fn eighth_blind_corpus() {
    check("claims_blind8.tsv", include_str!("corpus/claims_blind8.tsv"), 100, 2);
}
