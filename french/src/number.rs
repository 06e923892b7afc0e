//! Numbers as said or written: « 12 », « douze », « vingt et un », « quatre-vingt-dix-sept »,
//! « deux mille vingt-six », « -3 », « moins trois ». Each parser takes a whole span of
//! folded words and says nothing when a word is not part of a number.

fn unit(w: &str) -> Option<i64> {
    Some(match w {
        "zero" => 0,
        "un" | "une" | "premier" | "premiere" | "1er" | "1ere" => 1,
        "deux" => 2,
        "trois" => 3,
        "quatre" => 4,
        "cinq" => 5,
        "six" => 6,
        "sept" => 7,
        "huit" => 8,
        "neuf" => 9,
        "dix" => 10,
        "onze" => 11,
        "douze" => 12,
        "treize" => 13,
        "quatorze" => 14,
        "quinze" => 15,
        "seize" => 16,
        _ => return None,
    })
}

fn tens(w: &str) -> Option<i64> {
    Some(match w {
        "vingt" | "vingts" => 20,
        "trente" => 30,
        "quarante" => 40,
        "cinquante" => 50,
        "soixante" => 60,
        "septante" => 70,
        "huitante" | "octante" => 80,
        "nonante" => 90,
        _ => return None,
    })
}

/// Is this folded word part of a spelled number?
pub fn is_number_word(w: &str) -> bool {
    unit(w).is_some() || tens(w).is_some() || matches!(w, "cent" | "cents" | "mille" | "et") || digits(w).is_some()
}

/// A word of digits (« 12 », « 1er » counts as 1).
pub fn digits(w: &str) -> Option<i64> {
    let w = w.strip_suffix("er").or_else(|| w.strip_suffix("ere")).unwrap_or(w);
    if w.is_empty() || w.len() > 9 || !w.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    w.parse().ok()
}

/// A non-negative whole number spelled over the words (or one word of digits).
pub fn natural(words: &[&str]) -> Option<i64> {
    if words.len() == 1 {
        if let Some(n) = digits(words[0]) {
            return Some(n);
        }
    }
    if words.is_empty() || words.iter().any(|w| digits(w).is_some()) {
        return None;
    }
    let mut total = 0i64;
    let mut current = 0i64;
    let mut last: Option<&str> = None;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if w == "et" {
            // Only « vingt et un », « soixante et onze »: between tens and un/une/onze.
            let next_ok = words.get(i + 1).is_some_and(|n| matches!(*n, "un" | "une" | "onze"));
            if !(last.is_some_and(|l| tens(l).is_some()) && next_ok) {
                return None;
            }
        } else if w == "quatre" && words.get(i + 1).is_some_and(|n| matches!(*n, "vingt" | "vingts")) {
            current += 80;
            i += 1;
        } else if let Some(t) = tens(w) {
            if current % 100 != 0 {
                return None;
            }
            current += t;
        } else if let Some(u) = unit(w) {
            let low = current % 100;
            // « soixante-dix-sept », « quatre-vingt-douze »: a teen after 60 or 80.
            if low % 10 != 0 || (low != 0 && u >= 10 && low != 60 && low != 80) {
                return None;
            }
            current += u;
        } else if w == "cent" || w == "cents" {
            current = if current == 0 { 100 } else { current * 100 };
        } else if w == "mille" {
            total += if current == 0 { 1000 } else { current * 1000 };
            current = 0;
        } else {
            return None;
        }
        last = Some(w);
        i += 1;
    }
    if last == Some("et") {
        return None;
    }
    Some(total + current)
}

/// A whole number that may be negative: « -3 », « moins trois ».
pub fn signed(words: &[&str]) -> Option<i64> {
    match words {
        [w] if w.starts_with('-') => digits(&w[1..]).map(|n| -n),
        ["moins", rest @ ..] => natural(rest).map(|n| -n),
        _ => natural(words),
    }
}

/// A decimal written with a comma or a point (« 1,5 »), as tenths.
pub fn tenths(w: &str) -> Option<i64> {
    let (a, b) = w.split_once([',', '.'])?;
    let whole = digits(a)?;
    let frac = b.chars().next()?.to_digit(10)? as i64;
    (b.len() == 1).then_some(whole * 10 + frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Option<i64> {
        natural(&s.split(' ').collect::<Vec<_>>())
    }

    #[test]
    fn spelled() {
        assert_eq!(n("12"), Some(12));
        assert_eq!(n("douze"), Some(12));
        assert_eq!(n("vingt et un"), Some(21));
        assert_eq!(n("vingt deux"), Some(22));
        assert_eq!(n("soixante dix sept"), Some(77));
        assert_eq!(n("soixante et onze"), Some(71));
        assert_eq!(n("quatre vingt"), Some(80));
        assert_eq!(n("quatre vingt dix"), Some(90));
        assert_eq!(n("quatre vingt douze"), Some(92));
        assert_eq!(n("cent vingt"), Some(120));
        assert_eq!(n("deux cents"), Some(200));
        assert_eq!(n("deux mille vingt six"), Some(2026));
        assert_eq!(n("dix sept"), Some(17));
        assert_eq!(n("premier"), Some(1));
        assert_eq!(n("1er"), Some(1));
        assert_eq!(n("pain"), None);
        assert_eq!(n("vingt et"), None);
        assert_eq!(n("trois deux"), None);
        assert_eq!(n("12 3"), None);
        assert_eq!(signed(&["-3"]), Some(-3));
        assert_eq!(signed(&["moins", "trois"]), Some(-3));
        assert_eq!(tenths("1,5"), Some(15));
    }
}
