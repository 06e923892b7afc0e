//! Prints the memory topic of each line on stdin (`cargo run -p arthur-french --example topic
//! < agents/tests/corpus/memory_questions_blind.tsv`; a TSV line's second column is read):
//! `YES cue subject evidence keywords` or `NO`. The clock is Thursday 3 December 2026, 10:00,
//! and the lexicon holds the projects Atlas and jardin, the lists and a timer « pâtes ».

fn main() {
    let now = chrono::NaiveDate::from_ymd_opt(2026, 12, 3).unwrap().and_hms_opt(10, 0, 0).unwrap();
    let lex = arthur_french::Lexicon {
        projects: vec!["Atlas".into(), "jardin".into()],
        lists: vec!["courses".into(), "tâches".into()],
        timers: vec!["pâtes".into()],
    };
    let input = std::io::read_to_string(std::io::stdin()).unwrap();
    for line in input.lines().filter(|l| !l.trim().is_empty()) {
        let q = line.split('\t').nth(1).unwrap_or(line);
        let t = arthur_french::topic::topic(&arthur_french::Words::new(q), now, &lex);
        match t {
            Some(t) => println!("YES {}\t{:?}\t{}\t{:?}\t{}", t.cue.as_str(), t.subject, t.evidence, t.keywords, q),
            None => println!("NO\t{q}"),
        }
    }
}
