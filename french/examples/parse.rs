//! Reads utterances on stdin and prints how the French grammar matches each one (best
//! first): `cargo run -p arthur-french --example parse`. The clock is Monday 30 November
//! 2026, 10:00, and the lexicon the command corpora's world (agents/tests/corpus/COMMANDS.md).

use std::io::BufRead;

use arthur_french::{Grammar, Lexicon, Words};
use chrono::NaiveDate;

fn main() {
    let now = NaiveDate::from_ymd_opt(2026, 11, 30).and_then(|d| d.and_hms_opt(10, 0, 0)).expect("a valid date");
    let lexicon = Lexicon {
        projects: ["Atlas", "Arthur", "Jardin", "Thèse"].map(String::from).to_vec(),
        lists: ["courses", "tâches", "cadeaux"].map(String::from).to_vec(),
        timers: vec!["pâtes".into()],
    };
    let g = Grammar::french();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let words = Words::new(&line);
        let t = std::time::Instant::now();
        let all = g.matches(&words, now, &lexicon);
        println!("{line}\n  words: {}  ({} µs)", words.folded_text(), t.elapsed().as_micros());
        for m in all.iter().take(3) {
            println!(
                "  {} {:?} args={:?} ask={} free={} unknown={} fuzzy={}  [{}]",
                m.intent, m.slots, m.args, m.ask, m.free_words, m.unknown_names, m.fuzzy, m.template
            );
        }
        if all.is_empty() {
            println!("  (no match)");
        }
    }
}
