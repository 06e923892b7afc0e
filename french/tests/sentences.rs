//! The sentence tests of `templates/fr_tests.toml`: phrasings as data beside the grammar,
//! each read by the shipped grammar as its intent with its slots.

use std::collections::BTreeMap;

use arthur_french::{Grammar, Lexicon, SlotValue, Words};
use chrono::NaiveDate;
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    test: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    intent: String,
    sentences: Vec<String>,
    #[serde(default)]
    slots: BTreeMap<String, toml::Value>,
    #[serde(default)]
    ask: bool,
}

/// A slot as the data file writes it.
fn written(value: &SlotValue) -> Option<toml::Value> {
    Some(match value {
        SlotValue::Text(s) | SlotValue::Known(s) | SlotValue::Unknown(s) => toml::Value::String(s.clone()),
        SlotValue::Number(n) | SlotValue::Seconds(n) => toml::Value::Integer(*n),
        SlotValue::Moment(m) => toml::Value::String(m.at.format("%Y-%m-%dT%H:%M").to_string()),
        _ => return None,
    })
}

#[test]
fn every_sentence_of_the_data_reads_as_its_intent() {
    let file: File = toml::from_str(include_str!("../templates/fr_tests.toml")).expect("fr_tests.toml parses");
    let now = NaiveDate::from_ymd_opt(2026, 11, 30).and_then(|d| d.and_hms_opt(10, 0, 0)).expect("a valid date");
    let lexicon = Lexicon {
        projects: vec!["Atlas".into(), "Jardin".into()],
        lists: vec!["courses".into(), "tâches".into()],
        timers: vec!["pâtes".into()],
    };
    let grammar = Grammar::french();
    let mut failures = Vec::new();
    let mut count = 0;
    for case in &file.test {
        assert!(grammar.intents().any(|i| i == case.intent), "no intent {} in fr.toml", case.intent);
        for sentence in &case.sentences {
            count += 1;
            let Some(m) = grammar.best(&Words::new(sentence), now, &lexicon) else {
                failures.push(format!("« {sentence} »: no reading (expected {})", case.intent));
                continue;
            };
            if m.intent != case.intent {
                failures.push(format!("« {sentence} »: {} (expected {})", m.intent, case.intent));
                continue;
            }
            for (slot, expected) in &case.slots {
                let got = m
                    .slots
                    .get(slot)
                    .and_then(written)
                    .or_else(|| m.args.get(slot).map(|a| toml::Value::String(a.clone())));
                if got.as_ref() != Some(expected) {
                    failures.push(format!("« {sentence} »: {slot} = {got:?} (expected {expected})"));
                }
            }
            if m.ask != case.ask {
                failures.push(format!("« {sentence} »: ask = {} (expected {})", m.ask, case.ask));
            }
        }
    }
    assert!(count > 30, "the data file is whole");
    assert!(failures.is_empty(), "{} of {count} sentences:\n{}", failures.len(), failures.join("\n"));
}
