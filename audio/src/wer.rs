//! The word error rate, written once: the edit distance (Levenshtein) between a reference
//! and what was heard, over words or over the letters of one word. The self-test of
//! `arthur doctor --voix`, the speech-to-text tests and bench and the wake word's
//! one-slip tolerance all count errors with it, so their figures mean the same thing.

/// The least number of substitutions, insertions and deletions that turn `reference` into
/// `heard` (words, or the characters of a word).
pub fn edit_distance<T: PartialEq>(reference: &[T], heard: &[T]) -> usize {
    let mut prev: Vec<usize> = (0..=heard.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut row = vec![i + 1; heard.len() + 1];
        for (j, h) in heard.iter().enumerate() {
            row[j + 1] = (prev[j] + usize::from(r != h)).min(prev[j + 1] + 1).min(row[j] + 1);
        }
        prev = row;
    }
    prev[heard.len()]
}

/// Lower-case words without punctuation ("Don't." → "don't"): how the English tests and
/// bench compare transcripts (the self-test compares [`crate::wake::normalize`]d words
/// with numbers as digits, its own reading of French).
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase())
        .map(|w| w.replace(|c: char| !c.is_alphanumeric() && c != '\'', ""))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word errors summed over several sentences: the rate is errors over reference words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub errors: usize,
    pub words: usize,
}

impl Tally {
    /// Counts one sentence; returns its errors.
    pub fn add<T: PartialEq>(&mut self, reference: &[T], heard: &[T]) -> usize {
        let errors = edit_distance(reference, heard);
        self.errors += errors;
        self.words += reference.len();
        errors
    }

    /// Errors per reference word (0 with no words).
    pub fn rate(&self) -> f64 {
        self.errors as f64 / self.words.max(1) as f64
    }
}

impl std::iter::Sum for Tally {
    fn sum<I: Iterator<Item = Tally>>(iter: I) -> Self {
        iter.fold(Tally::default(), |a, b| Tally { errors: a.errors + b.errors, words: a.words + b.words })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions_insertions_and_deletions_count_one_each() {
        let w = words;
        assert_eq!(edit_distance(&w("a b c d"), &w("a x c")), 2, "one substitution, one deletion");
        assert_eq!(edit_distance(&w("a b"), &w("")), 2);
        assert_eq!(edit_distance(&w(""), &w("a b")), 2);
        assert_eq!(edit_distance(&w("Remind me, please."), &w("remind me please")), 0);
        assert_eq!(edit_distance(&w("a b c"), &w("a c b")), 2, "a swap is two edits");
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        assert_eq!(edit_distance(&chars("artur"), &chars("artor")), 1);
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
    }

    #[test]
    fn words_drop_punctuation_and_case_but_keep_apostrophes() {
        assert_eq!(words("Don't stop, NOW!"), ["don't", "stop", "now"]);
        assert_eq!(words(" - ... "), Vec::<String>::new());
    }

    #[test]
    fn the_rate_is_errors_over_reference_words() {
        let mut t = Tally::default();
        assert_eq!(t.add(&words("a b c d"), &words("a x c d")), 1);
        assert_eq!(t.add(&words("e f"), &words("e f")), 0);
        assert_eq!(t, Tally { errors: 1, words: 6 });
        assert!((t.rate() - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(Tally::default().rate(), 0.0);
        let summed: Tally = [t, Tally { errors: 2, words: 4 }].into_iter().sum();
        assert_eq!(summed, Tally { errors: 3, words: 10 });
    }
}
