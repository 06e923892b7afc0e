//! Folding: lower case and no accents, so « Rappèle », « rappele » and « RAPPELE » are one
//! word, and edit distance for the misspellings speech recognition and typing make.

/// One character folded: lower case, accents removed, ligatures spelled out.
pub fn fold_into(c: char, out: &mut String) {
    match c {
        'à' | 'â' | 'ä' | 'á' | 'ã' | 'À' | 'Â' | 'Ä' | 'Á' | 'Ã' => out.push('a'),
        'é' | 'è' | 'ê' | 'ë' | 'É' | 'È' | 'Ê' | 'Ë' => out.push('e'),
        'î' | 'ï' | 'í' | 'ì' | 'Î' | 'Ï' | 'Í' => out.push('i'),
        'ô' | 'ö' | 'ó' | 'ò' | 'õ' | 'Ô' | 'Ö' | 'Ó' => out.push('o'),
        'ù' | 'û' | 'ü' | 'ú' | 'Ù' | 'Û' | 'Ü' | 'Ú' => out.push('u'),
        'ç' | 'Ç' => out.push('c'),
        'ñ' | 'Ñ' => out.push('n'),
        'ÿ' | 'Ÿ' => out.push('y'),
        'œ' | 'Œ' => out.push_str("oe"),
        'æ' | 'Æ' => out.push_str("ae"),
        '’' | '`' | '´' | 'ʼ' | '‘' => out.push('\''),
        '–' | '—' | '−' => out.push('-'),
        c => out.extend(c.to_lowercase()),
    }
}

/// A whole string folded.
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        fold_into(c, &mut out);
    }
    out
}

/// Optimal string alignment distance (Damerau–Levenshtein with adjacent transpositions),
/// stopping early once it exceeds `max`.
pub fn edit_distance_within(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let (n, m) = (a.len(), b.len());
    let mut prev2 = vec![0usize; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    let mut cur = vec![0usize; m + 1];
    for i in 1..=n {
        cur[0] = i;
        let mut row_min = cur[0];
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[m] <= max).then_some(prev[m])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding() {
        assert_eq!(fold("Rappèle-MOI à Noël, cœur"), "rappele-moi a noel, coeur");
    }

    #[test]
    fn distances() {
        assert_eq!(edit_distance_within("rapelle", "rappelle", 1), Some(1));
        assert_eq!(edit_distance_within("minuteure", "minuteur", 1), Some(1));
        assert_eq!(edit_distance_within("rappelel", "rappelle", 1), Some(1));
        assert_eq!(edit_distance_within("rappeler", "rappelle", 1), None);
        assert_eq!(edit_distance_within("note", "note", 0), Some(0));
    }
}
