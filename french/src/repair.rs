//! People correct themselves while they speak (issue 39): « jeudi euh non vendredi », « du
//! beurre non pardon de la margarine », « à 9 h enfin à 10 h », « mardi ou plutôt mercredi ».
//! The repair replaces what it repairs — the nearest phrase before the marker of the same
//! kind (a day by a day, an hour by an hour, « du beurre » by « de la margarine », a name by a
//! name) — and the sentence is read as if it had been said right. « mardi ou mercredi » on a
//! moment or a list item is an alternative: the sentence is read with the first, and the
//! caller asks which.

use chrono::NaiveDateTime;

use crate::words::Words;

/// What one utterance says of itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Repair {
    /// Nothing to repair.
    None,
    /// The utterance as it would have been said right.
    Repaired(String),
    /// « X ou Y »: the utterance with X, and the two said.
    Alternatives { with_first: String, first: String, second: String, kind: Kind },
}

/// What a repaired or alternative phrase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A day, an hour, or both (« vendredi », « à 10 h », « demain à 9 h »).
    Moment,
    /// « dix minutes ».
    Duration,
    /// « 43 ».
    Number,
    /// Led by an article or a preposition (« du beurre », « à Sandrine », « l'ostéo »).
    Led,
    /// One word (a name: « Léo euh non Théo »).
    Word,
}

/// Markers that take back what was just said, strongest first. A weak marker (« enfin »,
/// « plutôt », a bare « non ») repairs only a structured phrase (a moment, a duration, a
/// number, a phrase led by an article or a preposition), never a single word: « il est enfin
/// arrivé » is not a repair.
const STRONG: &[&[&str]] = &[
    &["euh", "non", "pardon"],
    &["euh", "non"],
    &["heu", "non"],
    &["ben", "non"],
    &["non", "pardon"],
    &["pardon"],
    &["ou", "plutot"],
    &["je", "veux", "dire"],
    &["je", "voulais", "dire"],
    &["euh", "plutot"],
    &["non", "plutot"],
];
const WEAK: &[&[&str]] = &[&["enfin"], &["plutot"], &["non"], &["euh"]];

const ARTICLES: [&str; 12] = ["le", "la", "les", "l'", "du", "de", "des", "un", "une", "d'", "au", "aux"];
const PREPOSITIONS: [&str; 8] = ["a", "pour", "chez", "avec", "sur", "dans", "en", "vers"];

fn class(w: &str) -> Option<&'static str> {
    if ARTICLES.contains(&w) {
        Some("article")
    } else if PREPOSITIONS.contains(&w) {
        Some(match w {
            "a" => "a",
            "pour" => "pour",
            "chez" => "chez",
            _ => "prep",
        })
    } else {
        None
    }
}

/// The kind of a whole span, if it is one of the structured ones.
fn kind_of(span: &[&str], now: NaiveDateTime) -> Option<Kind> {
    if span.is_empty() {
        return None;
    }
    if crate::moment::moment(span, now).is_some() || crate::moment::day(span).is_some() {
        return Some(Kind::Moment);
    }
    if crate::duration::seconds(span).is_some() {
        return Some(Kind::Duration);
    }
    if crate::number::natural(span).is_some() {
        return Some(Kind::Number);
    }
    None
}

/// The repair after the marker: its kind and how many words it takes.
fn repair_at(f: &[&str], at: usize, now: NaiveDateTime) -> Option<(Kind, usize)> {
    let rest = &f[at..];
    // « celui du gâteau »: the pronoun stands for the noun; the complement repairs.
    if matches!(rest.first(), Some(&("celui" | "celle" | "ceux" | "celles"))) && rest.len() > 1 {
        return repair_at(f, at + 1, now).map(|(k, n)| (k, n + 1));
    }
    // The longest structured phrase first (« vendredi à 10 h »).
    for n in (1..=rest.len().min(6)).rev() {
        if let Some(k) = kind_of(&rest[..n], now) {
            return Some((k, n));
        }
    }
    let first = *rest.first()?;
    if class(first).is_some() {
        // « de la margarine », « à Sandrine », « l'ostéo »: up to the next boundary.
        return Some((Kind::Led, led_len(rest)));
    }
    Some((Kind::Word, 1))
}

/// How far a phrase led by an article or a preposition goes: up to what opens the rest of
/// the sentence (« à la liste », « dans », « et »); « d'avoine », « à bois » belong to it.
fn led_len(words: &[&str]) -> usize {
    let mut n = 1;
    while n < words.len() && n < 6 {
        let w = words[n];
        let stop = matches!(
            w,
            "dans"
                | "sur"
                | "pour"
                | "et"
                | "puis"
                | "au"
                | "aux"
                | "ou"
                | "enfin"
                | "non"
                | "euh"
                | "pardon"
                | "plutot"
        ) || (w == "a"
            && matches!(words.get(n + 1), Some(&("la" | "le" | "les" | "ma" | "mon" | "mes" | "l'"))));
        if n > 1 && stop {
            break;
        }
        n += 1;
    }
    n
}

/// The phrase the repair replaces: the nearest span ending right before the marker of the
/// same kind (and, for a led phrase, led by a word of the same class).
fn reparandum(f: &[&str], marker: usize, from: usize, kind: Kind, lead: &str, now: NaiveDateTime) -> Option<usize> {
    let lowest = marker.saturating_sub(6);
    match kind {
        Kind::Moment | Kind::Duration | Kind::Number => {
            // A number and a duration repair each other (« 10 minutes non pardon 15 », « trois
            // ou plutôt quatre minutes »).
            let same = |k: Option<Kind>| {
                k == Some(kind)
                    || matches!((k, kind), (Some(Kind::Number), Kind::Duration) | (Some(Kind::Duration), Kind::Number))
            };
            let spans: Vec<usize> = (lowest..marker).rev().filter(|&k| same(kind_of(&f[k..marker], now))).collect();
            // « à 9 h euh non à 10 h »: the span led like the repair, if there is one.
            let led = class(lead).and_then(|c| spans.iter().copied().find(|&k| class(f[k]) == Some(c)));
            led.or_else(|| spans.first().copied())
        }
        Kind::Led => {
            let want = class(lead)?;
            let lowest = marker.saturating_sub(8);
            let candidates: Vec<usize> = (lowest..marker).rev().filter(|&k| class(f[k]) == Some(want)).collect();
            // The phrase most like the repair: the same noun (« du lait … enfin du lait
            // d'avoine »), the same kind inside (« de cinq minutes … de six minutes »), the same
            // lead; « de » right after a noun is its complement (« des rouleaux de scotch »),
            // not an item. Ties go to the nearest.
            let repair_inner: Vec<&str> = f
                .get(from..)
                .map(|r| r.iter().skip_while(|w| class(w).is_some()).copied().collect())
                .unwrap_or_default();
            let repair_noun = repair_inner.first().copied();
            let inner_kind = |span: &[&str]| (1..=span.len().min(4)).rev().find_map(|n| kind_of(&span[..n], now));
            let repair_kind = inner_kind(&repair_inner);
            candidates.iter().copied().max_by_key(|&k| {
                let inner: Vec<&str> = f[k + 1..marker].iter().copied().skip_while(|w| class(w).is_some()).collect();
                let noun = inner.first().copied();
                let complement = matches!(f[k], "de" | "d'") && k > 0 && class(f[k - 1]).is_none();
                let score = 4 * i32::from(noun.is_some() && noun == repair_noun)
                    + 2 * i32::from(repair_kind.is_some() && inner_kind(&inner) == repair_kind)
                    + i32::from(f[k] == lead)
                    - 2 * i32::from(complement);
                // Nearest first on a tie: `max_by_key` keeps the last maximum.
                (score, std::cmp::Reverse(marker - k))
            })
        }
        Kind::Word => (marker >= 1).then(|| marker - 1),
    }
}

/// Reads one utterance for its self-repairs and alternatives.
pub fn repair(text: &str, now: NaiveDateTime) -> Repair {
    let words = Words::split_only(text);
    let f: Vec<&str> = words.words.iter().map(|w| w.folded.as_str()).collect();
    // The first marker that repairs something of its kind.
    for i in 1..f.len() {
        for (markers, strong) in [(STRONG, true), (WEAK, false)] {
            for m in markers.iter() {
                if i + m.len() >= f.len() || f[i..i + m.len()] != **m {
                    continue;
                }
                let after = i + m.len();
                let Some((kind, len)) = repair_at(&f, after, now) else { continue };
                if !strong && (kind == Kind::Word || kind == Kind::Led && m[0] == "euh") {
                    continue;
                }
                // « non » after a hesitation is the strong marker, read above.
                // « celui du gâteau »: the pronoun goes with what it repairs.
                let pronoun = matches!(f[after], "celui" | "celle" | "ceux" | "celles");
                let from = after + usize::from(pronoun);
                let lead = f[from];
                let (kind, len) = if pronoun { repair_at(&f, from, now).unwrap_or((kind, len)) } else { (kind, len) };
                let Some(start) = reparandum(&f, i, from, kind, lead, now) else { continue };
                if start >= i || (kind == Kind::Word && class(f[start]).is_some()) {
                    continue;
                }
                let mut repaired = String::new();
                // A bare number repairs the number of a duration, whose unit stays (« de 10
                // minutes non pardon 15 » → « de 15 minutes »).
                let reparandum_kind = kind_of(&f[start..i], now);
                if kind == Kind::Number && reparandum_kind == Some(Kind::Duration) {
                    let number_end = (start + 1..i)
                        .find(|&k| {
                            crate::number::natural(&f[start..k]).is_some()
                                && crate::number::natural(&f[start..k + 1]).is_none()
                        })
                        .unwrap_or(start + 1);
                    repaired.push_str(&text_of(&words, 0, words.words[start].start));
                    repaired.push_str(&text_of(&words, words.words[from].start, words.words[from + len - 1].end));
                    repaired.push_str(&text_of(&words, words.words[number_end - 1].end, words.words[i - 1].end));
                    repaired.push_str(&text_of(&words, words.words[from + len - 1].end, words.original.len()));
                    return Repair::Repaired(repaired);
                }
                // The reparandum is a phrase as long as a led phrase goes (« du lait »); what
                // lies between it and the marker (« à la liste de courses ») stays.
                let rep_end = if kind == Kind::Led { start + led_len(&f[start..i]) } else { i };
                let repair_end = words.words[from + len - 1].end;
                repaired.push_str(&text_of(&words, 0, words.words[start].start));
                repaired.push_str(&text_of(&words, words.words[from].start, repair_end));
                if rep_end < i {
                    repaired.push_str(&text_of(&words, words.words[rep_end - 1].end, words.words[i - 1].end));
                }
                repaired.push_str(&text_of(&words, repair_end, words.original.len()));
                return Repair::Repaired(repaired);
            }
        }
    }
    // « mardi ou mercredi »: two of a kind either side of « ou ». The second is as short as
    // the kind allows, so what follows is shared (« samedi ou dimanche à 10 h »: both at 10 h).
    for i in 1..f.len().saturating_sub(1) {
        if f[i] != "ou" || f.get(i + 1) == Some(&"plutot") {
            continue;
        }
        let Some((kind, longest)) = repair_at(&f, i + 1, now) else { continue };
        let len = match kind {
            Kind::Moment | Kind::Duration | Kind::Number => {
                (1..=longest).find(|&n| kind_of(&f[i + 1..i + 1 + n], now) == Some(kind)).unwrap_or(longest)
            }
            _ => longest,
        };
        if !matches!(kind, Kind::Moment | Kind::Duration | Kind::Led) {
            continue;
        }
        let Some(start) = reparandum(&f, i, i + 1, kind, f[i + 1], now) else { continue };
        if start >= i {
            continue;
        }
        let first = text_of(&words, words.words[start].start, words.words[i - 1].end);
        let second_end = words.words[i + len].end;
        let second = text_of(&words, words.words[i + 1].start, second_end);
        let mut with_first = text_of(&words, 0, words.words[i - 1].end);
        // « cinq ou six minutes »: the unit of the second is the first's too.
        if kind == Kind::Duration && kind_of(&f[start..i], now) == Some(Kind::Number) {
            let unit_from = (i + 1..=i + len).find(|&k| {
                crate::number::natural(&f[i + 1..k]).is_some() && crate::number::natural(&f[i + 1..=k]).is_none()
            });
            if let Some(u) = unit_from {
                with_first.push(' ');
                with_first.push_str(&text_of(&words, words.words[u].start, second_end));
            }
        }
        with_first.push_str(&text_of(&words, second_end, words.original.len()));
        return Repair::Alternatives { with_first, first, second, kind };
    }
    Repair::None
}

fn text_of(words: &Words, from: usize, to: usize) -> String {
    words.original[from..to].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn now() -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 12, 3).unwrap().and_hms_opt(10, 0, 0).unwrap()
    }

    fn fixed(s: &str) -> String {
        match repair(s, now()) {
            Repair::Repaired(t) => t,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn the_repair_replaces_what_it_repairs() {
        assert_eq!(
            fixed("rappelle-moi jeudi euh non vendredi à 10 h d'appeler le plombier"),
            "rappelle-moi vendredi à 10 h d'appeler le plombier"
        );
        assert_eq!(
            fixed("ajoute du beurre non pardon de la margarine à la liste des courses"),
            "ajoute de la margarine à la liste des courses"
        );
        assert_eq!(
            fixed("rappelle-moi demain à 9h euh non à 10h d'appeler le garage"),
            "rappelle-moi demain à 10h d'appeler le garage"
        );
        assert_eq!(
            fixed("rappelle-moi demain à 18 h d'appeler Léo euh non Théo"),
            "rappelle-moi demain à 18 h d'appeler Théo"
        );
        assert_eq!(fixed("note que Paul chausse du 42 non pardon du 43"), "note que Paul chausse du 43");
        assert_eq!(fixed("note que le train part à 8 h 12 euh non 8 h 42"), "note que le train part à 8 h 42");
        assert_eq!(
            fixed("rappelle-moi mercredi à 10 h d'appeler le kiné enfin l'ostéo"),
            "rappelle-moi mercredi à 10 h d'appeler l'ostéo"
        );
        assert_eq!(fixed("rappelle-moi mardi ou plutôt mercredi d'appeler Luc"), "rappelle-moi mercredi d'appeler Luc");
        assert_eq!(fixed("lance un minuteur de 10 minutes non pardon 15"), "lance un minuteur de 15 minutes");
        assert_eq!(fixed("mets un minuteur de trois ou plutôt quatre minutes"), "mets un minuteur de quatre minutes");
        assert_eq!(fixed("annule le minuteur des pâtes euh non celui du gâteau"), "annule le minuteur du gâteau");
        assert_eq!(fixed("mets un minuteur de cinq minutes euh non de six minutes"), "mets un minuteur de six minutes");
        assert_eq!(
            fixed("ajoute du lait à la liste de courses enfin du lait d'avoine"),
            "ajoute du lait d'avoine à la liste de courses"
        );
        assert_eq!(
            fixed("ajoute des rouleaux de scotch ou plutôt du ruban adhésif à la liste bricolage"),
            "ajoute du ruban adhésif à la liste bricolage"
        );
    }

    #[test]
    fn words_of_content_are_not_repairs() {
        for s in [
            "note : Marie a dit non non non",
            "il est enfin arrivé",
            "note : non merci",
            "ajoute du pain",
            "note que je préfère le thé",
        ] {
            assert!(!matches!(repair(s, now()), Repair::Repaired(_)), "{s}: {:?}", repair(s, now()));
        }
    }

    #[test]
    fn two_of_a_kind_are_alternatives() {
        match repair("rappelle-moi samedi ou dimanche à 10 h d'aller courir", now()) {
            Repair::Alternatives { with_first, .. } => {
                assert_eq!(with_first, "rappelle-moi samedi à 10 h d'aller courir")
            }
            other => panic!("{other:?}"),
        }
        match repair("rappelle-moi mardi ou mercredi d'appeler Luc", now()) {
            Repair::Alternatives { with_first, first, second, kind } => {
                assert_eq!(
                    (with_first.as_str(), first.as_str(), second.as_str(), kind),
                    ("rappelle-moi mardi d'appeler Luc", "mardi", "mercredi", Kind::Moment)
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
