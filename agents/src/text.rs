//! Text helpers shared by the store, the tools and the turn: the normalised form used to
//! match names whatever their accents or case ("Émeraude" finds "emeraude"), and word
//! filters built on it. Below every other module, so any of them may use it.

use unicode_normalization::UnicodeNormalization;

/// Lower case, accents removed, inner whitespace collapsed.
pub fn normalise(raw: &str) -> String {
    let stripped: String =
        raw.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).collect::<String>().to_lowercase();
    stripped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every word of `words` appears in `text`, whatever the case and the accents (a filter the
/// model chooses; the code tells what it found).
pub fn contains_words(text: &str, words: &str) -> bool {
    let hay = normalise(text);
    let hay: Vec<&str> = hay.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    normalise(words)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .all(|w| hay.iter().any(|h| h.starts_with(w)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn normalise_ignores_case_accents_and_spacing() {
        assert_eq!(super::normalise("  Émeraude   Café "), "emeraude cafe");
    }
}
