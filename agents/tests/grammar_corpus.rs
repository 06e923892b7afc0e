//! The grammar measured on the command corpora written blind (`corpus/commands_*.tsv`, see
//! `corpus/COMMANDS.md`): recall of the commands, how the unsure ones are asked, and — the
//! figure that must stay at zero — writes that would run with other arguments than the user
//! said, or at all when the user did not ask for one. Hostile and odd inputs are in the same
//! corpora. The figures are printed (`cargo test -p arthur-agents grammar -- --nocapture`).

use arthur_agents::understand::{understand, Command, Reading, Told};
use arthur_french::{fold::fold, Lexicon};
use chrono::{TimeZone, Utc};
use serde_json::Value;

fn lexicon() -> Lexicon {
    Lexicon {
        projects: ["Atlas", "Arthur", "Jardin", "Thèse"].map(String::from).to_vec(),
        lists: ["courses", "tâches", "cadeaux"].map(String::from).to_vec(),
        timers: vec!["pâtes".into()],
    }
}

/// Text compared without case, accents, punctuation or a leading article.
fn norm(v: &Value) -> String {
    match v {
        // Dates and date-times exactly.
        Value::String(s) if s.len() >= 10 && s.as_bytes()[4] == b'-' && s[..4].chars().all(|c| c.is_ascii_digit()) => {
            s.clone()
        }
        Value::String(s) => {
            let f = fold(s);
            let words: Vec<&str> = f.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
            let mut w = words.as_slice();
            while w.len() > 1 && matches!(w[0], "de" | "d" | "du" | "des" | "le" | "la" | "les" | "l" | "un" | "une") {
                w = &w[1..];
            }
            w.join(" ")
        }
        other => other.to_string(),
    }
}

/// What the grammar gave, as (certainty, action, arguments).
fn got(reading: &Reading) -> (&'static str, String, Value) {
    let named = |c: &Command| -> (String, Value) {
        match c {
            Command::Tool(t) => (t.name().to_string(), t.arguments().unwrap_or(Value::Null)),
            Command::Told(Told::Time) => ("@heure".into(), serde_json::json!({})),
            Command::Told(Told::Date { days }) => ("@date".into(), serde_json::json!({"jours": days})),
            Command::Told(Told::Help) => ("@aide".into(), serde_json::json!({})),
            Command::Told(Told::Courtesy(_)) => ("@politesse".into(), serde_json::json!({})),
            Command::Told(Told::Cancel) => ("@annule".into(), serde_json::json!({})),
        }
    };
    match reading {
        Reading::Sure(c) => {
            let (a, v) = named(c);
            ("sure", a, v)
        }
        Reading::Unsure { command, .. } => {
            let (a, v) = named(command);
            ("unsure", a, v)
        }
        Reading::Incomplete { intent, .. } => ("unsure", intent.clone(), Value::Null),
        Reading::NotCommand => ("none", "-".into(), Value::Null),
    }
}

fn args_match(expected: &Value, got: &Value) -> bool {
    let Some(exp) = expected.as_object() else { return true };
    exp.iter().all(|(k, v)| {
        let mut g = got.get(k).cloned().unwrap_or(Value::Null);
        // A one-day range may leave its end out.
        if k == "fin" && g.is_null() && exp.get("debut") == Some(v) {
            g = v.clone();
        }
        // « jours »: 0 is the default of a bare date question.
        if k == "jours" && g.is_null() {
            return v == &serde_json::json!(0);
        }
        norm(v) == norm(&g)
    })
}

#[derive(Default)]
struct Figures {
    sure: usize,
    sure_exact: usize,
    sure_asked: usize,
    unsure: usize,
    unsure_asked: usize,
    none: usize,
    none_kept: usize,
    wrong_writes: Vec<String>,
    wrong_reads: Vec<String>,
    misses: Vec<String>,
}

fn measure(corpus: &str) -> Figures {
    let now = Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
    let lex = lexicon();
    let mut f = Figures::default();
    for line in corpus.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let cols: Vec<&str> = line.splitn(4, '\t').collect();
        assert_eq!(cols.len(), 4, "bad corpus line: {line}");
        let (expected, action, args, said) = (cols[0], cols[1], cols[2], cols[3]);
        let exp_args: Value = serde_json::from_str(args).unwrap_or_else(|e| panic!("{line}: {e}"));
        let u = understand(said, now, chrono_tz::Europe::Paris, &lex);
        let (certainty, g_action, g_args) = got(&u.reading);
        let same_call = g_action == action && args_match(&exp_args, &g_args);
        let show = format!("[{expected} {action} {args}] {said}  → {certainty} {g_action} {g_args}");
        if certainty == "sure" && arthur_agents::tools::writes(&g_action) && !(expected == "sure" && same_call) {
            f.wrong_writes.push(show.clone());
        } else if certainty == "sure" && !(expected == "sure" && same_call) {
            f.wrong_reads.push(show.clone());
        }
        match expected {
            "sure" => {
                f.sure += 1;
                if certainty == "sure" && same_call {
                    f.sure_exact += 1;
                } else if certainty == "unsure" && g_action == action {
                    f.sure_asked += 1;
                    f.misses.push(show);
                } else {
                    f.misses.push(show);
                }
            }
            "unsure" => {
                f.unsure += 1;
                if certainty == "unsure" {
                    f.unsure_asked += 1;
                } else if certainty == "none" {
                    f.misses.push(show);
                }
            }
            "none" => {
                f.none += 1;
                if certainty == "none" {
                    f.none_kept += 1;
                } else if certainty == "unsure" {
                    f.misses.push(show);
                }
            }
            other => panic!("unknown expectation {other}: {line}"),
        }
    }
    f
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

fn report(name: &str, f: &Figures) {
    println!(
        "{name}: commands understood {}/{} ({:.1} %), asked instead {}; unsure asked {}/{} ({:.1} %); \
         non-commands left to the model {}/{} ({:.1} %); wrong writes {}; reads nobody asked for {}",
        f.sure_exact,
        f.sure,
        pct(f.sure_exact, f.sure),
        f.sure_asked,
        f.unsure_asked,
        f.unsure,
        pct(f.unsure_asked, f.unsure),
        f.none_kept,
        f.none,
        pct(f.none_kept, f.none),
        f.wrong_writes.len(),
        f.wrong_reads.len(),
    );
    for w in &f.wrong_writes {
        println!("  WRONG WRITE {w}");
    }
    for w in &f.wrong_reads {
        println!("  wrong read  {w}");
    }
    for m in &f.misses {
        println!("  miss        {m}");
    }
}

fn check(name: &str, corpus: &str) -> Figures {
    let f = measure(corpus);
    report(name, &f);
    assert!(f.sure + f.unsure + f.none >= 250, "{name}: a corpus of at least 250 utterances");
    assert!(f.wrong_writes.is_empty(), "{name}: {} wrong writes", f.wrong_writes.len());
    f
}

#[test]
fn commands_a() {
    let f = check("commands_a.tsv", include_str!("corpus/commands_a.tsv"));
    assert!(f.sure_exact * 100 >= f.sure * 85, "recall under 85 %");
}

#[test]
fn commands_b() {
    let f = check("commands_b.tsv", include_str!("corpus/commands_b.tsv"));
    assert!(f.none_kept * 100 >= f.none * 95, "non-commands taken for commands");
}

/// Written blind after the grammar was tuned on the two corpora above, and measured once
/// before any change for it (the first-contact figures are in the README's table).
#[test]
fn commands_c_held_out() {
    let f = check("commands_c.tsv", include_str!("corpus/commands_c.tsv"));
    assert!(f.sure_exact * 100 >= f.sure * 80, "recall under 80 %");
}

/// A second held-out set, written blind as speech-recognition output after the grammar was
/// tuned on the three above; measured once before any change for it.
#[test]
fn commands_d_held_out() {
    let f = check("commands_d.tsv", include_str!("corpus/commands_d.tsv"));
    assert!(f.sure_exact * 100 >= f.sure * 80, "recall under 80 %");
}

mod hostile {
    //! Odd and hostile inputs: any text at all never makes the grammar fail, and a write it
    //! is sure of only ever stores words that were said.

    use super::*;
    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "rappelle-moi",
        "note",
        "minuteur",
        "ajoute",
        "liste",
        "de",
        "courses",
        "demain",
        "à",
        "9",
        "h",
        "supprime",
        "le",
        "rappel",
        "3",
        "ne",
        "pas",
        "euh",
        "Arthur",
        "dans",
        "-3",
        "heures",
        "2026-12-10",
        "21:00",
        "et",
        "lait",
        "appeler",
        "Luc",
        "hier",
        "31",
        "février",
        "{{texte}}",
        "'); DROP",
        "vide",
        "tous",
        "?",
        ",",
        "…",
        "minutes",
        "pâtes",
        "arrête",
        "le chrono",
        "quelle",
        "heure",
        "stop",
        "oui",
        "non",
    ];

    fn said_words(s: &str) -> Vec<String> {
        fold(s).split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(String::from).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

        #[test]
        fn any_text_is_read_without_failing(text in "\\PC{0,400}") {
            let now = Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
            let _ = understand(&text, now, chrono_tz::Europe::Paris, &lexicon());
        }

        #[test]
        fn a_sure_write_stores_only_words_that_were_said(
            picks in proptest::collection::vec(proptest::sample::select(WORDS), 1..14)
        ) {
            let text = picks.join(" ");
            let now = Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
            let u = understand(&text, now, chrono_tz::Europe::Paris, &lexicon());
            if let Reading::Sure(Command::Tool(t)) = &u.reading {
                let said = said_words(&text);
                for key in ["texte", "element", "nom", "requete", "contient"] {
                    if let Some(Value::String(v)) = t.arguments().and_then(|a| a.get(key).cloned()) {
                        for w in said_words(&v) {
                            prop_assert!(said.contains(&w), "{text:?} → {} {key}={v:?}", t.name());
                        }
                    }
                }
            }
        }
    }
}
