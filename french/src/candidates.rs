//! The grammar's sentences as a language model for the speech recogniser (issue 40): the
//! templates of `templates/fr.toml` parsed into a tree of folded words, alternatives,
//! optional parts and slots, with the slots sorted into free ones (any words: a reminder's
//! text, a new name) and closed ones (the words a moment, a duration or a number is made
//! of; the names the store knows). The recogniser walks it to keep a command's frame
//! and closed slots inside what the grammar can read; matching stays `grammar.rs`'s.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::fold::fold;
use crate::grammar::{Lexicon, FRENCH};
use crate::words::Words;

/// One part of a template.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// A folded word (« rappelle », « d' », « heures »).
    Word(String),
    /// One of several sequences.
    Alt(Vec<Vec<Part>>),
    /// A sequence that may be left out.
    Opt(Vec<Part>),
    /// A slot: what it may hold.
    Slot(SlotWords),
}

/// What a slot may hold, for the recogniser.
#[derive(Debug, Clone, PartialEq)]
pub enum SlotWords {
    /// Any words (free text, a short name, a project or list that may be new).
    Free,
    /// A moment, a day, a range of days, a duration or a number: [`MOMENT_WORDS`] and
    /// words with digits, one or more.
    Moment,
    /// One of the names the store knows (folded words of each), one or more words.
    Names(Vec<String>),
}

/// The words moments, durations and numbers are said with (`moment.rs`, `duration.rs`,
/// `number.rs`), folded. A closed slot takes one or more of them, or words with digits.
pub const MOMENT_WORDS: &[&str] = &[
    "a",
    "au",
    "aux",
    "alentours",
    "an",
    "annee",
    "apres",
    "apm",
    "aprem",
    "aujourd'",
    "hui",
    "aujourd'hui",
    "aujourdhui",
    "avant",
    "ce",
    "cet",
    "cette",
    "ces",
    "ci",
    "d'",
    "dans",
    "de",
    "des",
    "du",
    "debut",
    "depuis",
    "dernier",
    "derniere",
    "derniers",
    "durant",
    "en",
    "end",
    "entre",
    "environ",
    "er",
    "ere",
    "et",
    "ici",
    "jour",
    "jours",
    "l'",
    "la",
    "le",
    "les",
    "h",
    "heure",
    "heures",
    "hier",
    "hr",
    "hrs",
    "demain",
    "midi",
    "minuit",
    "matin",
    "matinee",
    "soir",
    "soiree",
    "nuit",
    "m",
    "min",
    "mins",
    "mn",
    "minute",
    "minutes",
    "seconde",
    "secondes",
    "sec",
    "secs",
    "s",
    "mois",
    "semaine",
    "semaines",
    "week",
    "weekend",
    "moins",
    "passe",
    "passee",
    "pendant",
    "petite",
    "pile",
    "pour",
    "premier",
    "premiere",
    "prochain",
    "prochaine",
    "prochains",
    "quart",
    "quarts",
    "quelques",
    "suivant",
    "sur",
    "vers",
    "demi",
    "demie",
    "lundi",
    "mardi",
    "mercredi",
    "jeudi",
    "vendredi",
    "samedi",
    "dimanche",
    "janvier",
    "fevrier",
    "mars",
    "avril",
    "mai",
    "juin",
    "juillet",
    "aout",
    "septembre",
    "octobre",
    "novembre",
    "decembre",
    "zero",
    "un",
    "une",
    "deux",
    "trois",
    "quatre",
    "cinq",
    "six",
    "sept",
    "huit",
    "neuf",
    "dix",
    "onze",
    "douze",
    "treize",
    "quatorze",
    "quinze",
    "seize",
    "vingt",
    "vingts",
    "trente",
    "quarante",
    "cinquante",
    "soixante",
    "septante",
    "huitante",
    "octante",
    "nonante",
    "cent",
    "cents",
    "mille",
    "numero",
    "num",
    "n",
    "no",
];

/// Words that may come before a command (hesitations, openers, polite and request heads:
/// `words.rs` and `understand.rs` take them away) and after it (polite tails).
pub const AROUND_WORDS: &[&str] = &[
    "euh", "heu", "hum", "alors", "bon", "ben", "bah", "donc", "eh", "oh", "et", "voila", "tiens", "est", "ce", "que",
    "tu", "vous", "pourrais", "peux", "veux", "bien", "pouvez", "pourriez", "voudriez", "voulez", "voudrais", "merci",
    "de", "d'", "s'", "il", "te", "plait", "stp", "svp", "je", "j'", "aimerais", "faut", "faudrait", "dois", "une",
    "fois", "accord", "beaucoup",
];

/// The data file's shape, as far as sentences go.
#[derive(Deserialize)]
struct Data {
    #[serde(default)]
    rules: BTreeMap<String, String>,
    #[serde(default)]
    intent: Vec<IntentData>,
}

#[derive(Deserialize)]
struct IntentData {
    #[serde(default)]
    sentences: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
}

/// Every template of the shipped French grammar (its `sentences` and `ask` ones), rules
/// written out, with the user's names in the closed slots that want a known name.
pub fn french_templates(lexicon: &Lexicon) -> Vec<Vec<Part>> {
    templates(FRENCH, lexicon).expect("templates/fr.toml compiles (tested)")
}

/// The templates of a grammar file (`fr.toml`'s syntax).
pub fn templates(source: &str, lexicon: &Lexicon) -> Result<Vec<Vec<Part>>, String> {
    let data: Data = toml::from_str(source).map_err(|e| e.to_string())?;
    let names = |list: &[String]| SlotWords::Names(list.iter().map(|n| fold(n.trim())).collect());
    let mut out = Vec::new();
    for intent in &data.intent {
        for s in intent.sentences.iter().chain(&intent.ask) {
            let parts = parse(s, &data.rules, 0, &|kind| match kind {
                "quand" | "jour" | "periode" | "duree" | "numero" | "nombre" | "recurrence" => Some(SlotWords::Moment),
                "projet_connu" => Some(names(&lexicon.projects)),
                "liste_connue" => Some(names(&lexicon.lists)),
                "minuteur_connu" => Some(names(&lexicon.timers)),
                "texte" | "nom" | "projet" | "liste" | "minuteur" | "type" => Some(SlotWords::Free),
                _ => None,
            })
            .map_err(|e| format!("template {s:?}: {e}"))?;
            out.push(parts);
        }
    }
    Ok(out)
}

type SlotOf<'a> = dyn Fn(&str) -> Option<SlotWords> + 'a;

fn parse(src: &str, rules: &BTreeMap<String, String>, depth: usize, slot: &SlotOf) -> Result<Vec<Part>, String> {
    if depth > 8 {
        return Err("rules nest too deep".into());
    }
    let chars: Vec<char> = src.chars().collect();
    let mut pos = 0;
    let alts = alternatives(&chars, &mut pos, rules, depth, None, slot)?;
    if pos != chars.len() {
        return Err(format!("unexpected {:?} at {pos}", chars[pos]));
    }
    Ok(if alts.len() == 1 { alts.into_iter().next().unwrap_or_default() } else { vec![Part::Alt(alts)] })
}

fn alternatives(
    chars: &[char],
    pos: &mut usize,
    rules: &BTreeMap<String, String>,
    depth: usize,
    close: Option<char>,
    slot: &SlotOf,
) -> Result<Vec<Vec<Part>>, String> {
    let mut alts: Vec<Vec<Part>> = vec![Vec::new()];
    let mut word = String::new();
    fn flush(word: &mut String, seq: &mut Vec<Part>) {
        if !word.trim().is_empty() {
            seq.extend(Words::split_only(word).words.into_iter().map(|w| Part::Word(w.folded)));
        }
        word.clear();
    }
    while *pos < chars.len() {
        let c = chars[*pos];
        let seq = alts.last_mut().ok_or("empty")?;
        match c {
            '(' | '[' => {
                flush(&mut word, seq);
                *pos += 1;
                let inner = alternatives(chars, pos, rules, depth, Some(if c == '(' { ')' } else { ']' }), slot)?;
                let seq = alts.last_mut().ok_or("empty")?;
                seq.push(match (c, inner.len()) {
                    ('(', _) => Part::Alt(inner),
                    (_, 1) => Part::Opt(inner.into_iter().next().unwrap_or_default()),
                    _ => Part::Opt(vec![Part::Alt(inner)]),
                });
            }
            ')' | ']' => {
                if close != Some(c) {
                    return Err(format!("unbalanced {c:?}"));
                }
                flush(&mut word, seq);
                *pos += 1;
                return Ok(alts);
            }
            '|' => {
                flush(&mut word, seq);
                alts.push(Vec::new());
                *pos += 1;
            }
            '{' | '<' => {
                flush(&mut word, seq);
                let end = if c == '{' { '}' } else { '>' };
                let len = chars[*pos..].iter().position(|x| *x == end).ok_or(format!("no closing {end:?}"))?;
                let inner: String = chars[*pos + 1..*pos + len].iter().collect();
                *pos += len + 1;
                if c == '{' {
                    let kind = inner.split_once(':').map_or(inner.as_str(), |(_, k)| k).trim();
                    seq.push(Part::Slot(slot(kind).ok_or(format!("unknown slot type in {{{inner}}}"))?));
                } else {
                    let rule = rules.get(inner.trim()).ok_or(format!("unknown rule <{inner}>"))?;
                    seq.extend(parse(rule, rules, depth + 1, slot)?);
                }
            }
            _ => {
                word.push(c);
                *pos += 1;
            }
        }
    }
    if close.is_some() {
        return Err("unclosed group".into());
    }
    flush(&mut word, alts.last_mut().ok_or("empty")?);
    Ok(alts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_template_parses_and_has_words() {
        let lexicon = Lexicon { projects: vec!["Atlas".into()], ..Default::default() };
        let t = french_templates(&lexicon);
        assert!(t.len() > 100, "{} templates", t.len());
        assert!(t.iter().all(|parts| !parts.is_empty()));
    }

    #[test]
    fn rules_are_written_out_and_slots_sorted() {
        let source = r#"
            [rules]
            moi = "(moi|nous)"
            [[intent]]
            name = "x"
            sentences = ["rappelle-<moi> [de] {texte} {echeance:quand}", "note pour {projet:projet_connu}"]
        "#;
        let lexicon = Lexicon { projects: vec!["Jardin Potager".into()], ..Default::default() };
        let t = templates(source, &lexicon).unwrap();
        assert_eq!(
            t[0],
            vec![
                Part::Word("rappelle".into()),
                Part::Alt(vec![vec![Part::Word("moi".into())], vec![Part::Word("nous".into())]]),
                Part::Opt(vec![Part::Word("de".into())]),
                Part::Slot(SlotWords::Free),
                Part::Slot(SlotWords::Moment),
            ]
        );
        assert_eq!(t[1][2], Part::Slot(SlotWords::Names(vec!["jardin potager".into()])));
    }

    #[test]
    fn a_broken_template_is_an_error() {
        let source = "[[intent]]\nname = \"x\"\nsentences = [\"(a|b\"]";
        assert!(templates(source, &Lexicon::default()).is_err());
        let source = "[[intent]]\nname = \"x\"\nsentences = [\"{a:couleur}\"]";
        assert!(templates(source, &Lexicon::default()).unwrap_err().contains("couleur"));
    }

    #[test]
    fn moment_words_are_folded() {
        assert!(MOMENT_WORDS.iter().chain(AROUND_WORDS).all(|w| fold(w) == *w && !w.contains(' ')));
    }
}
