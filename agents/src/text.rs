//! Text helpers shared by tools: the normalised form used to match names whatever their
//! accents or case ("Émeraude" finds "emeraude").

use unicode_normalization::UnicodeNormalization;

/// Lower case, accents removed, inner whitespace collapsed.
pub fn normalise(raw: &str) -> String {
    let stripped: String =
        raw.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).collect::<String>().to_lowercase();
    stripped.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn normalise_ignores_case_accents_and_spacing() {
        assert_eq!(super::normalise("  Émeraude   Café "), "emeraude cafe");
    }
}
