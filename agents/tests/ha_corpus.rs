//! Home Assistant's French sentences for the intents Arthur shares with it — timers, the
//! shopping list and named lists, the time and the date, « laisse tomber » — read by
//! Arthur's grammar offline. The sentences are drawn from the templates of the PyPI package
//! `home-assistant-intents` (`scripts/ha-sentences` writes `corpus/home_assistant_fr.tsv`;
//! the package holds templates, not test sentences). A sentence passes when the grammar
//! reads the same action (run when sure, asked when not) with the same duration, item or
//! list, on the same timer (the one named, the one started for the duration said, or the
//! only one); a sure write of anything else is a wrong write, and there must be none. A
//! few template rules Arthur reads otherwise on purpose are counted apart, each with its
//! reason (`out_of_scope`). `HA_CORPUS_FILE=path` reads another draw instead, a holdout
//! (`scripts/ha-sentences --holdout`).

use arthur_agents::understand::{understand, Command, Reading, TimerAction, Told, ToolCommand};
use arthur_french::Lexicon;
use chrono::{TimeZone, Utc};
use std::collections::BTreeMap;

const CORPUS: &str = include_str!("corpus/home_assistant_fr.tsv");

/// The duration a slot combination stands for (5 minutes, 2 heures, 30 secondes).
fn seconds(combo: &str) -> i64 {
    total(combo.split('_').take_while(|p| *p != "start"))
}

/// The duration a timer was started with, when the combination names it by it
/// (« hours_start_minutes »: 2 hours added to the timer of 5 minutes; « minutes_only » in
/// cancel, pause, resume and status: the timer of 5 minutes).
fn started_for(intent: &str, combo: &str) -> Option<i64> {
    let parts: Vec<&str> = combo.split('_').collect();
    if let Some(k) = parts.iter().position(|p| *p == "start") {
        return Some(total(parts[k + 1..].iter().copied()));
    }
    let targets = matches!(intent, "HassCancelTimer" | "HassPauseTimer" | "HassUnpauseTimer" | "HassTimerStatus");
    (targets && !combo.contains("name") && combo != "default").then(|| total(parts.iter().copied()))
}

fn total<'a>(parts: impl Iterator<Item = &'a str>) -> i64 {
    let mut s = 0;
    for p in parts {
        s += match p {
            "hours" => 7200,
            "minutes" => 300,
            "seconds" => 30,
            _ => 0,
        };
    }
    s
}

/// Why a sentence of Home Assistant's is not Arthur's to read as that intent (`None`: it is).
/// Each reason stands for one template rule; a wrong write is still counted on these.
fn out_of_scope(intent: &str, combo: &str, text: &str) -> Option<&'static str> {
    let f = arthur_french::fold::fold(text).to_lowercase().replace('-', " ");
    match intent {
        // HassNevermind's « chut | silence | tais-toi »: Arthur's voice loop takes these as stop
        // words that only cut its speech, before any grammar (voice/src/words.rs); the
        // grammar's « laisse tomber » (Told::Cancel) takes back the last write when no question
        // is pending, which « tais-toi » must never do.
        "HassNevermind" if matches!(f.as_str(), "chut" | "silence" | "tais toi") => {
            Some("a stop word, not « laisse tomber »")
        }
        // HassCancelTimer's `[<le>|<mon>] <minuteur>` lets « les/mes » and a plural noun name
        // one timer; in French « annule les minuteurs » is all of them, and Arthur asks whether
        // to cancel every timer.
        "HassCancelTimer"
            if combo == "default"
                && ["les ", "mes "].iter().any(|d| {
                    ["minuteurs", "minuteries", "timers", "comptes a rebours", "decomptes"]
                        .iter()
                        .any(|n| f.ends_with(&format!("{d}{n}")))
                }) =>
        {
            Some("« les minuteurs » is every timer")
        }
        _ => None,
    }
}

#[derive(Debug, PartialEq)]
enum Verdict {
    Pass,
    Miss,
    WrongWrite,
}

fn judge(intent: &str, combo: &str, reading: &Reading) -> Verdict {
    use ToolCommand as T;
    let (cmd, sure) = match reading {
        Reading::Sure(c) => (Some(c), true),
        Reading::Unsure { command, .. } => (Some(command), false),
        Reading::Incomplete { .. } | Reading::NotCommand => (None, false),
    };
    let named = combo.contains("name");
    // The timer targeted: by the name said, by the duration it was started with, or the only one.
    let start = started_for(intent, combo);
    let name = named.then(|| "pâtes".to_string());
    let aims = |nom: &Option<String>, d: &Option<i64>| *d == start && (intent == "HassStartTimer" || *nom == name);
    let ok = match (intent, cmd) {
        ("HassStartTimer", Some(Command::Tool(T::DemarrerMinuteur { duree_secondes, nom }))) => {
            *duree_secondes == seconds(combo) && nom.is_some() == named
        }
        ("HassCancelTimer", Some(Command::Tool(T::AnnulerMinuteur { tous: false, nom, duree_initiale_secondes }))) => {
            aims(nom, duree_initiale_secondes)
        }
        ("HassCancelAllTimers", Some(Command::Tool(T::AnnulerMinuteur { tous: true, .. }))) => true,
        (
            "HassIncreaseTimer",
            Some(Command::Tool(T::ModifierMinuteur { delta_secondes: Some(d), nom, duree_initiale_secondes, .. })),
        ) => *d == seconds(combo) && aims(nom, duree_initiale_secondes),
        (
            "HassDecreaseTimer",
            Some(Command::Tool(T::ModifierMinuteur { delta_secondes: Some(d), nom, duree_initiale_secondes, .. })),
        ) => *d == -seconds(combo) && aims(nom, duree_initiale_secondes),
        (
            "HassPauseTimer",
            Some(Command::Tool(T::ModifierMinuteur {
                action: Some(TimerAction::Pause),
                nom,
                duree_initiale_secondes,
                ..
            })),
        ) => aims(nom, duree_initiale_secondes),
        (
            "HassUnpauseTimer",
            Some(Command::Tool(T::ModifierMinuteur {
                action: Some(TimerAction::Resume),
                nom,
                duree_initiale_secondes,
                ..
            })),
        ) => aims(nom, duree_initiale_secondes),
        ("HassTimerStatus", Some(Command::Tool(T::ListerMinuteurs { nom, duree_initiale_secondes }))) => {
            aims(nom, duree_initiale_secondes)
        }
        ("HassShoppingListAddItem" | "HassListAddItem", Some(Command::Tool(T::AjouterAListe { liste, element }))) => {
            liste == "courses" && element == "lait"
        }
        (
            "HassListRemoveItem" | "HassListCompleteItem" | "HassShoppingListCompleteItem",
            Some(Command::Tool(T::RetirerDeListe { liste, element })),
        ) => liste == "courses" && element == "lait",
        ("HassGetCurrentTime", Some(Command::Told(Told::Time))) => true,
        ("HassGetCurrentDate", Some(Command::Told(Told::Date { days: 0 }))) => true,
        ("HassNevermind", Some(Command::Told(Told::Cancel))) => true,
        _ => false,
    };
    let writes = matches!(
        cmd,
        Some(Command::Tool(
            T::DemarrerMinuteur { .. }
                | T::AnnulerMinuteur { .. }
                | T::ModifierMinuteur { .. }
                | T::AjouterAListe { .. }
                | T::Several(_)
                | T::RetirerDeListe { .. }
                | T::ViderListe { .. }
                | T::CreerRappel { .. }
                | T::CreerNote { .. }
        ))
    );
    match (ok, sure && writes) {
        (true, _) => Verdict::Pass,
        (false, true) => Verdict::WrongWrite,
        (false, false) => Verdict::Miss,
    }
}

#[test]
fn home_assistant_french_sentences() {
    let now = Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap();
    let lexicon =
        Lexicon { projects: vec![], lists: vec!["courses".into(), "tâches".into()], timers: vec!["pâtes".into()] };
    // Per intent: passed, judged, and of the passed, asked before being run.
    let mut per_intent: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut excluded: BTreeMap<&str, usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut misses: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    // Another draw of the same templates (a holdout: the committed draw is the one the
    // grammar was tuned on).
    let other = std::env::var("HA_CORPUS_FILE").ok().map(|p| std::fs::read_to_string(p).expect("HA_CORPUS_FILE reads"));
    for line in other.as_deref().unwrap_or(CORPUS).lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut cols = line.split('\t');
        let (Some(intent), Some(combo), Some(text)) = (cols.next(), cols.next(), cols.next()) else { continue };
        let reading = understand(text, now, chrono_tz::Europe::Paris, &lexicon).reading;
        let verdict = judge(intent, combo, &reading);
        if verdict != Verdict::WrongWrite {
            if let Some(why) = out_of_scope(intent, combo, text) {
                *excluded.entry(why).or_default() += 1;
                continue;
            }
        }
        let e = per_intent.entry(intent).or_default();
        e.1 += 1;
        match verdict {
            Verdict::Pass => {
                e.0 += 1;
                e.2 += usize::from(matches!(reading, Reading::Unsure { .. }));
            }
            Verdict::WrongWrite => wrong.push(format!("{intent} {combo} « {text} » → {reading:?}")),
            Verdict::Miss => misses.entry(intent).or_default().push(text),
        }
    }
    let (passed, total, asked) = per_intent.values().fold((0, 0, 0), |(p, t, q), (a, b, c)| (p + a, t + b, q + c));
    let left_out: usize = excluded.values().sum();
    println!(
        "Home Assistant's French sentences: {passed}/{total} pass ({:.1} %; {asked} of them asked first), \
         {left_out} more out of Arthur's scope",
        100.0 * passed as f64 / total as f64
    );
    for (why, n) in &excluded {
        println!("  excluded: {n} ({why})");
    }
    for (intent, (p, t, a)) in &per_intent {
        println!("  {intent}: {p}/{t} (asked {a})");
    }
    // `HA_CORPUS_ALL=1` prints every miss, not only the first of each intent.
    let shown = if std::env::var_os("HA_CORPUS_ALL").is_some() { usize::MAX } else { 8 };
    for (intent, texts) in &misses {
        for t in texts.iter().take(shown) {
            println!("  miss {intent}: « {t} »");
        }
    }
    for w in &wrong {
        println!("  WRONG WRITE {w}");
    }
    assert!(wrong.is_empty(), "{} wrong writes", wrong.len());
    assert!(total + left_out > 3000, "the corpus is whole");
    // A floor on the figure reached (issue 39: every judged sentence, 3296 of them).
    assert!(passed * 100 >= total * MIN_PERCENT, "{passed}/{total} pass, under {MIN_PERCENT} %");
}

/// The pass rate the grammar must keep on these sentences.
const MIN_PERCENT: usize = 100;
