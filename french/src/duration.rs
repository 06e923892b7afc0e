//! Durations as said: « dix minutes », « 2 h et 16 min », « 01h30 », « une heure et demie »,
//! « un quart d'heure », « 90 secondes », « 1,5 heure », and a sign when one was said
//! (« -3 heures », « moins trois heures »): a negative duration is read, not refused, so
//! that the command built on it can ask instead of guessing.

use crate::number::{digits, natural, tenths};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Hour,
    Minute,
    Second,
}

impl Unit {
    fn secs(self) -> i64 {
        match self {
            Unit::Hour => 3600,
            Unit::Minute => 60,
            Unit::Second => 1,
        }
    }
    fn below(self) -> Option<Unit> {
        match self {
            Unit::Hour => Some(Unit::Minute),
            Unit::Minute => Some(Unit::Second),
            Unit::Second => None,
        }
    }
}

fn unit(w: &str) -> Option<Unit> {
    Some(match w {
        "h" | "heure" | "heures" | "hr" | "hrs" => Unit::Hour,
        "min" | "mn" | "m" | "mins" | "minute" | "minutes" | "minut" | "minutte" | "minuttes" => Unit::Minute,
        "s" | "sec" | "secs" | "seconde" | "secondes" => Unit::Second,
        _ => return None,
    })
}

/// « 1h30 », « 01h30 », « 2h », « 10min », « 45s », « 1h30min »: one word.
fn compact(w: &str) -> Option<i64> {
    let split_digits = |s: &str| -> (String, String) {
        let d: String = s.chars().take_while(char::is_ascii_digit).collect();
        let rest = s[d.len()..].to_string();
        (d, rest)
    };
    let (h, rest) = split_digits(w);
    if h.is_empty() {
        return None;
    }
    let n = h.parse::<i64>().ok()?;
    if let Some(after) = rest.strip_prefix('h') {
        let (m, tail) = split_digits(after);
        let minutes = if m.is_empty() { 0 } else { m.parse::<i64>().ok()? };
        if !(tail.is_empty() || matches!(tail.as_str(), "min" | "mn" | "m")) || (m.is_empty() && !tail.is_empty()) {
            return None;
        }
        if minutes >= 60 {
            return None;
        }
        return Some(n * 3600 + minutes * 60);
    }
    match rest.as_str() {
        "min" | "mn" | "mins" => Some(n * 60),
        "s" | "sec" => Some(n),
        _ => None,
    }
}

/// The seconds a whole span of folded words says, signed; `None` when the span is not
/// exactly a duration.
pub fn seconds(words: &[&str]) -> Option<i64> {
    if words.is_empty() || words.len() > 12 {
        return None;
    }
    let (sign, rest) = match words {
        ["moins", rest @ ..] => (-1, rest),
        [first, ..] if first.starts_with('-') && first.len() > 1 => {
            let mut owned: Vec<&str> = words.to_vec();
            owned[0] = &first[1..];
            return parts(&owned, 0, None).map(|s| -s);
        }
        _ => (1, words),
    };
    parts(rest, 0, None).map(|s| sign * s)
}

/// Fixed phrases of a quarter or half hour.
fn phrase(words: &[&str], i: usize) -> Option<(i64, usize)> {
    let rest = &words[i..];
    let table: [(&[&str], i64); 8] = [
        (&["un", "quart", "d'", "heure"], 900),
        (&["quart", "d'", "heure"], 900),
        (&["trois", "quarts", "d'", "heure"], 2700),
        (&["une", "demi", "heure"], 1800),
        (&["demi", "heure"], 1800),
        (&["une", "demie", "heure"], 1800),
        (&["une", "demi", "minute"], 30),
        (&["une", "petite", "minute"], 60),
    ];
    table.iter().find(|(p, _)| rest.starts_with(p)).map(|(p, s)| (*s, p.len()))
}

fn parts(words: &[&str], i: usize, prev: Option<Unit>) -> Option<i64> {
    if i == words.len() {
        return prev.map(|_| 0);
    }
    let mut i = i;
    // « et » only joins two parts.
    if prev.is_some() && words[i] == "et" {
        if let Some(u) = prev {
            match words.get(i + 1..) {
                Some(["demie", ..]) | Some(["demi", ..]) => {
                    return parts(words, i + 2, Some(Unit::Second)).map(|s| s + u.secs() / 2);
                }
                Some(["quart", ..]) if u == Unit::Hour => {
                    return parts(words, i + 2, Some(Unit::Second)).map(|s| s + 900);
                }
                _ => {}
            }
        }
        i += 1;
        if i == words.len() {
            return None;
        }
    }
    if let Some((s, n)) = phrase(words, i) {
        if prev.is_some_and(|p| p <= Unit::Minute) {
            return None;
        }
        return parts(words, i + n, Some(Unit::Minute)).map(|r| r + s);
    }
    if let Some(s) = compact(words[i]) {
        if prev.is_some() {
            return None;
        }
        let lowest = if s % 3600 == 0 && words[i].contains('h') { Unit::Hour } else { Unit::Minute };
        return parts(words, i + 1, Some(lowest)).map(|r| r + s);
    }
    // A number (spelled over several words, or digits, or 1,5) followed by its unit.
    let max = (i + 6).min(words.len());
    for j in (i + 1..=max).rev() {
        let value_tenths = if j == i + 1 {
            tenths(words[i]).or_else(|| natural(&words[i..j]).map(|n| n * 10))
        } else {
            natural(&words[i..j]).map(|n| n * 10)
        };
        let Some(v) = value_tenths else { continue };
        match words.get(j).and_then(|w| unit(w)) {
            Some(u) if prev.is_none_or(|p| u > p) => {
                if let Some(rest) = parts(words, j + 1, Some(u)) {
                    return Some(v * u.secs() / 10 + rest);
                }
            }
            // « 1 h 30 », « 2 minutes 30 »: a bare number after a unit is the unit below.
            None if j == words.len() && v % 10 == 0 && v / 10 < 60 => {
                if let Some(u) = prev.and_then(Unit::below) {
                    return Some(v / 10 * u.secs());
                }
            }
            _ => {}
        }
    }
    let _ = digits;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Option<i64> {
        let w: Vec<&str> = text.split(' ').collect();
        seconds(&w)
    }

    #[test]
    fn durations() {
        assert_eq!(s("10 minutes"), Some(600));
        assert_eq!(s("dix minutes"), Some(600));
        assert_eq!(s("2 h et 16 min"), Some(8160));
        assert_eq!(s("2 h 16"), Some(8160));
        assert_eq!(s("01h30"), Some(5400));
        assert_eq!(s("1h"), Some(3600));
        assert_eq!(s("une heure"), Some(3600));
        assert_eq!(s("une heure et demie"), Some(5400));
        assert_eq!(s("une heure et quart"), Some(4500));
        assert_eq!(s("une minute et demie"), Some(90));
        assert_eq!(s("un quart d' heure"), Some(900));
        assert_eq!(s("une demi heure"), Some(1800));
        assert_eq!(s("trois quarts d' heure"), Some(2700));
        assert_eq!(s("90 secondes"), Some(90));
        assert_eq!(s("1,5 heure"), Some(5400));
        assert_eq!(s("deux minutes trente"), Some(150));
        assert_eq!(s("vingt cinq minutes"), Some(1500));
        assert_eq!(s("1 heure 30 minutes"), Some(5400));
        assert_eq!(s("45s"), Some(45));
        assert_eq!(s("-3 heures"), Some(-10800));
        assert_eq!(s("moins trois heures"), Some(-10800));
        assert_eq!(s("zero minute"), Some(0));
        assert_eq!(s("10"), None);
        assert_eq!(s("minutes"), None);
        assert_eq!(s("10 minutes de pates"), None);
        assert_eq!(s("3 minutes 2 heures"), None);
    }
}
