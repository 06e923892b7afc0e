//! The text the offline parser works on: whisper's transcript cleaned (wake word, split
//! elisions, stray punctuation) and a folded copy (lower case, no accents) whose characters
//! line up one-to-one with the original, so content can be cut from what was really said.

use std::sync::LazyLock;

use regex::Regex;

/// One character folded to one character: lower case, accents removed, apostrophes unified.
pub fn fold_char(c: char) -> char {
    match c {
        'à' | 'â' | 'ä' | 'á' | 'À' | 'Â' | 'Ä' | 'Á' => 'a',
        'é' | 'è' | 'ê' | 'ë' | 'É' | 'È' | 'Ê' | 'Ë' => 'e',
        'î' | 'ï' | 'í' | 'Î' | 'Ï' => 'i',
        'ô' | 'ö' | 'ó' | 'Ô' | 'Ö' => 'o',
        'ù' | 'û' | 'ü' | 'ú' | 'Ù' | 'Û' | 'Ü' => 'u',
        'ç' | 'Ç' => 'c',
        'œ' | 'Œ' => 'o',
        'æ' | 'Æ' => 'a',
        '’' | '`' | '´' | 'ʼ' => '\'',
        '–' | '—' => '-',
        c => c.to_lowercase().next().unwrap_or(c),
    }
}

static WAKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:(?:ok|dis|hey|hé|eh|bonjour|salut)\s*,?\s+)?arthur\s*[,.!:;-]*\s*").unwrap()
});
static SPLIT_ELISION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(qu|[dljtmsnc]) ([aeiouyhàâäéèêëîïôöûùü])").unwrap());
static POLITE_ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\s*,?\s*\b(?:s'il te plaît|s'il te plait|s'il vous plaît|s'il vous plait|stp)\b\s*,?").unwrap()
});
static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").unwrap());
static POLITE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:est-ce que |est ce que )?(?:tu peux|tu pourrais|peux-tu|peux tu|pourrais-tu|pourrais tu|veux-tu|tu veux bien|merci de)\s+)|\s*,?\s*(?:s'il te plaît|s'il te plait|stp|merci)\s*[.!?]*\s*$").unwrap()
});

/// The cleaned utterance and its folded twin (same number of characters).
#[derive(Debug, Clone)]
pub struct Utterance {
    pub original: Vec<char>,
    pub folded: String,
    /// It was asked, not ordered: a question mark, or a question word in front.
    pub question: bool,
}

static QUESTION_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:est-ce|est ce|pourquoi|quand|comment|où|ou est|qui|quel|quelle|quels|quelles|combien|qu'est-ce|as-tu|avais-tu|ai-je|y a-t-il|dois-je|faut-il)\b").unwrap()
});

impl Utterance {
    pub fn new(raw: &str) -> Self {
        let mut text = raw.replace(['’', '`'], "'");
        text = WAKE.replace(&text, "").into_owned();
        text = SPACES.replace_all(text.trim(), " ").into_owned();
        // Politeness around the command ("peux-tu…", "…s'il te plaît"): a request, even
        // with a question mark, is not a question.
        let request = POLITE.find(&text).is_some_and(|m| m.start() == 0 && !m.as_str().trim().is_empty());
        for _ in 0..2 {
            text = POLITE.replace_all(&text, "").trim().to_string();
        }
        text = POLITE_ANYWHERE.replace_all(&text, " ").into_owned();
        text = SPLIT_ELISION.replace_all(&text, "$1'$2").into_owned();
        let question = !request && (text.trim_end().ends_with('?') || QUESTION_START.is_match(text.trim()));
        let text = text.trim().trim_end_matches(['.', '!', '?', ',', ';', ':', '…']).trim().to_string();
        let original: Vec<char> = text.chars().collect();
        let folded: String = original.iter().map(|c| fold_char(*c)).collect();
        Self { original, folded, question }
    }

    /// The original characters behind a byte range of the folded text.
    pub fn original_slice(&self, start: usize, end: usize) -> String {
        let a = self.folded[..start].chars().count();
        let b = a + self.folded[start..end].chars().count();
        self.original[a..b].iter().collect()
    }

    /// The original text with the given folded byte ranges cut out.
    pub fn original_without(&self, start: usize, end: usize, cuts: &[(usize, usize)]) -> String {
        let mut keep = vec![true; self.folded.len()];
        for &(a, b) in cuts {
            for k in keep.iter_mut().take(b.min(self.folded.len())).skip(a) {
                *k = false;
            }
        }
        let mut out = String::new();
        for (char_idx, (byte, _)) in self.folded.char_indices().enumerate() {
            if byte >= start && byte < end && keep[byte] {
                out.push(self.original[char_idx]);
            } else if byte >= start && byte < end && !out.ends_with(' ') {
                out.push(' ');
            }
        }
        out
    }
}

static LEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:\s|[,:;.-]|d'|qu'|(?:de|que|pour|à|a|afin de|à propos de|a propos de|concernant|le fait que)\s)+",
    )
    .unwrap()
});
static TRAILING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)(?:\s+(?:pour|à|a|le|la|de|vers|dès|d'ici|et)|[\s,:;.!?-])+$").unwrap());

/// Content without punctuation or spaces at its edges (connectors kept).
pub fn trim_edges(content: &str) -> String {
    SPACES
        .replace_all(content.trim(), " ")
        .trim_matches(|c: char| c.is_whitespace() || ",:;.!?-".contains(c))
        .to_string()
}

/// Content as the user said it, without connectors left at its edges.
pub fn tidy(content: &str) -> String {
    let mut s = SPACES.replace_all(content.trim(), " ").into_owned();
    for _ in 0..3 {
        s = LEADING.replace(&s, "").into_owned();
        s = TRAILING.replace(&s, "").into_owned();
    }
    s.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning_keeps_alignment() {
        let u = Utterance::new("Arthur, rappelle-moi d appeler la Sécurité sociale.");
        assert_eq!(u.original.iter().collect::<String>(), "rappelle-moi d'appeler la Sécurité sociale");
        assert_eq!(u.folded, "rappelle-moi d'appeler la securite sociale");
        let start = u.folded.find("securite").unwrap();
        assert_eq!(u.original_slice(start, u.folded.len()), "Sécurité sociale");
        assert_eq!(u.original.len(), u.folded.chars().count());
    }

    #[test]
    fn politeness_and_connectors_go() {
        assert_eq!(Utterance::new("Peux-tu noter du pain s'il te plaît ?").folded, "noter du pain");
        assert_eq!(tidy(" d'appeler la banque pour "), "appeler la banque");
        assert_eq!(tidy("que le loyer est payé."), "le loyer est payé");
    }
}
