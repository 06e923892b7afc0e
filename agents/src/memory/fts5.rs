//! SQLite's keyword search, redone: the FTS5 table `souvenirs_fts` (tokenizer `unicode61
//! remove_diacritics 2`) queried with `"term1"* OR "term2"* …` and ordered by
//! `bm25(souvenirs_fts), id`. PostgreSQL's `to_tsvector('french', …)` stems, keeps accents
//! and ranks otherwise, so it would find other souvenirs in another order.
//!
//! Same tokens as FTS5 for Latin scripts (letters and digits, lower case, diacritics
//! removed from letters whose base is an ASCII letter: "Été" → "ete", "œ" stays); the
//! same matches (each term is a phrase of its tokens, the last one a prefix); the same
//! score (FTS5's bm25: k1 = 1.2, b = 0.75, idf floored at 1e-6, computed in the same order
//! so that ties fall the same way).
//!
//! SQLite runs it in its FTS5 table; PostgreSQL stores each souvenir's tokens (`mots`,
//! `nb_mots`, written by [`indexed`] on insert) under a GIN index so that only the
//! souvenirs holding a term are read, and ranks them here with the table's statistics.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// FTS5's token characters: Unicode letters, numbers and private-use characters.
fn is_token_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c, '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{FFFFD}' | '\u{100000}'..='\u{10FFFD}')
}

/// Combining diacritics that FTS5 keeps inside a token (and then drops): its
/// `sqlite3Fts5UnicodeIsdiacritic`.
fn is_inner_diacritic(c: char) -> bool {
    const MASK0: u32 = 0x0802_9FDF;
    const MASK1: u32 = 0x0003_61F8;
    let c = c as u32;
    match c {
        768..=799 => MASK0 & (1 << (c - 768)) != 0,
        800..=817 => MASK1 & (1 << (c - 800)) != 0,
        _ => false,
    }
}

/// Lower case; a letter whose decomposition starts with an ASCII letter becomes that
/// letter; combining marks go.
fn fold(c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    for lower in c.to_lowercase() {
        match std::iter::once(lower).nfd().next() {
            Some(base) if base.is_ascii_alphabetic() => out.push(base),
            _ if is_combining_mark(lower) => {}
            _ => out.push(lower),
        }
    }
}

/// The tokens of `text`, folded.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| !is_token_char(*c)).is_some() {}
        if chars.peek().is_none() {
            return out;
        }
        let mut token = String::new();
        while let Some(c) = chars.next_if(|c| is_token_char(*c) || is_inner_diacritic(*c)) {
            fold(c, &mut token);
        }
        out.push(token);
    }
}

/// How many times `phrase` (its last token a prefix) occurs in `doc`.
fn occurrences(phrase: &[String], doc: &[String]) -> usize {
    let Some((last, head)) = phrase.split_last() else { return 0 };
    if doc.len() < phrase.len() {
        return 0;
    }
    (0..=doc.len() - phrase.len())
        .filter(|&i| head.iter().zip(&doc[i..]).all(|(p, d)| p == d) && doc[i + head.len()].starts_with(last.as_str()))
        .count()
}

/// What bm25 needs of the whole table: its row count, its token count, and for each term
/// the number of rows holding it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stats {
    pub rows: i64,
    pub tokens: i64,
    pub hits: Vec<i64>,
}

/// A souvenir as the index keeps it: its tokens joined by spaces, and how many there are.
pub(crate) fn indexed(text: &str) -> (String, i64) {
    let t = tokens(text);
    let n = t.len() as i64;
    (t.join(" "), n)
}

/// The PostgreSQL `tsquery` (config `simple`) matching the rows that hold `term`: its
/// tokens as a phrase (`<->`), the last one a prefix; `None` when it has no token. Tokens
/// are letters and digits only; each is quoted anyway.
pub(crate) fn tsquery(term: &str) -> Option<String> {
    let t = tokens(term);
    let (last, head) = t.split_last()?;
    let mut parts: Vec<String> = head.iter().map(|w| format!("'{w}'")).collect();
    parts.push(format!("'{last}':*"));
    Some(parts.join(" <-> "))
}

/// Indices of the `docs` that match any of `terms`, best first (bm25), then by index
/// (the rows are given by id), the statistics taken from the documents themselves.
#[cfg(test)]
pub(crate) fn rank(terms: &[String], docs: &[&str]) -> Vec<usize> {
    let phrases: Vec<Vec<String>> = terms.iter().map(|t| tokens(t)).collect();
    let toks: Vec<Vec<String>> = docs.iter().map(|d| tokens(d)).collect();
    let stats = Stats {
        rows: toks.len() as i64,
        tokens: toks.iter().map(|d| d.len() as i64).sum(),
        hits: phrases.iter().map(|p| toks.iter().filter(|d| occurrences(p, d) > 0).count() as i64).collect(),
    };
    rank_with(terms, docs, &stats)
}

/// Indices of the `candidates` that match any of `terms`, best first (bm25 with the
/// table's `stats`), then by index (the candidates are given by id). With the statistics
/// of the whole table, the order is FTS5's, whichever rows are given.
pub(crate) fn rank_with(terms: &[String], candidates: &[&str], stats: &Stats) -> Vec<usize> {
    let phrases: Vec<Vec<String>> = terms.iter().map(|t| tokens(t)).collect();
    let docs: Vec<Vec<String>> = candidates.iter().map(|d| tokens(d)).collect();
    // freq[d][p]: occurrences of phrase p in document d.
    let freq: Vec<Vec<usize>> = docs.iter().map(|d| phrases.iter().map(|p| occurrences(p, d)).collect()).collect();
    let avgdl = stats.tokens as f64 / stats.rows.max(1) as f64;
    let idf: Vec<f64> = (0..phrases.len())
        .map(|p| {
            let n_hit = stats.hits.get(p).copied().unwrap_or(0);
            let idf = (((stats.rows - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
            if idf <= 0.0 {
                1e-6
            } else {
                idf
            }
        })
        .collect();
    let mut scored: Vec<(f64, usize)> = freq
        .iter()
        .enumerate()
        .filter(|(_, f)| f.iter().any(|&n| n > 0))
        .map(|(i, f)| {
            let d = docs[i].len() as f64;
            let mut score = 0.0;
            for (p, &n) in f.iter().enumerate() {
                let n = n as f64;
                score += idf[p] * ((n * (K1 + 1.0)) / (n + K1 * (1.0 - B + B * d / avgdl)));
            }
            // bm25() returns -score; rows are ordered by it, ascending.
            (-score, i)
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_fold_case_and_accents_like_unicode61() {
        assert_eq!(tokens("L'Été à Noël, 2026 — œuvre"), ["l", "ete", "a", "noel", "2026", "œuvre"]);
        assert_eq!(tokens("  ...  "), Vec::<String>::new());
        // A decomposed accent stays inside its token and is dropped.
        assert_eq!(tokens("e\u{301}te\u{301}"), ["ete"]);
    }

    #[test]
    fn phrases_match_with_a_prefix_last_token() {
        let doc = tokens("le dentiste de l'été, les dentistes");
        assert_eq!(occurrences(&tokens("dentiste"), &doc), 2);
        assert_eq!(occurrences(&tokens("l'ete"), &doc), 1);
        assert_eq!(occurrences(&tokens("!!"), &doc), 0);
    }

    #[test]
    fn the_index_form_and_the_query() {
        assert_eq!(indexed("L'Été, à Noël !"), ("l ete a noel".to_string(), 4));
        assert_eq!(tsquery("code du portail").as_deref(), Some("'code' <-> 'du' <-> 'portail':*"));
        assert_eq!(tsquery("?!"), None);
    }

    #[test]
    fn ranking_candidates_with_the_table_statistics_is_ranking_the_table() {
        let docs = ["le code du portail est 4521", "portail bleu", "acheter du pain", "le portail, le portail"];
        let terms = vec!["portail".to_string(), "code".to_string()];
        let all = rank(&terms, &docs);
        // Only the rows holding a term, with the whole table's statistics.
        let holding: Vec<usize> = vec![0, 1, 3];
        let candidates: Vec<&str> = holding.iter().map(|&i| docs[i]).collect();
        let stats = Stats { rows: 4, tokens: docs.iter().map(|d| tokens(d).len() as i64).sum(), hits: vec![3, 1] };
        let ranked: Vec<usize> = rank_with(&terms, &candidates, &stats).into_iter().map(|i| holding[i]).collect();
        assert_eq!(ranked, all);
    }
}
