//! An utterance as words: what was typed or transcribed, cut into folded words that keep
//! their place in the original text (so a note's content is stored as it was said), with
//! what is not part of the request taken away — the wake word in front, « euh », a word
//! said twice, the politeness around a command.

use crate::fold::fold;

/// One word: folded (lower case, no accents), and where it sits in [`Words::original`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub folded: String,
    pub start: usize,
    pub end: usize,
    /// Its rank among the words as first cut, so that a word taken away between two
    /// others (« euh », a repeat) is not put back when the text between them is restored.
    pub rank: usize,
}

/// The words of one utterance.
#[derive(Debug, Clone)]
pub struct Words {
    /// The text as said (apostrophes unified).
    pub original: String,
    pub words: Vec<Word>,
    /// Ended with a question mark and was not a polite request (« tu peux… ? »).
    pub question: bool,
    /// A polite request was taken away in front (« est-ce que tu peux… »).
    pub polite: bool,
    /// Every word as first cut, by rank, the ones taken away included: what a free text
    /// holds is read back from these (see [`Words::said_between`]).
    pub all: Vec<Word>,
    /// Ranks of the words taken away as repeats (« non non non »): content, put back in a
    /// free text.
    pub repeats: Vec<usize>,
    /// The words came from speech recognition: a free text loses its hesitations
    /// (« euh »); typed text keeps every character.
    pub spoken: bool,
}

/// Elided words: « d'appeler » is « d' » + « appeler ».
const ELIDED: [&str; 14] =
    ["l", "d", "j", "m", "t", "s", "n", "c", "qu", "jusqu", "lorsqu", "puisqu", "presqu", "quoiqu"];

/// Hesitations dropped wherever they are.
const FILLERS: [&str; 10] = ["euh", "euhh", "euuh", "heu", "hum", "hmm", "mmh", "hem", "beuh", "hein"];
/// Openers dropped at the very start when a request follows.
const OPENERS: [&str; 10] = ["alors", "bon", "ben", "bah", "donc", "eh", "oh", "et", "voila", "tiens"];

/// Polite openings of a request, as folded words; longest first.
const POLITE_HEADS: &[&[&str]] = &[
    &["est", "ce", "que", "tu", "pourrais"],
    &["est", "ce", "que", "tu", "peux"],
    &["est", "ce", "que", "tu", "veux", "bien"],
    &["est", "ce", "que", "vous", "pouvez"],
    &["est", "ce", "que", "vous", "pourriez"],
    &["pourriez", "vous"],
    &["vous", "pourriez"],
    &["voudriez", "vous"],
    &["voulez", "vous"],
    &["tu", "voudrais", "bien"],
    &["tu", "veux", "bien"],
    &["veux", "tu", "bien"],
    &["tu", "peux"],
    &["tu", "pourrais"],
    &["peux", "tu"],
    &["pourrais", "tu"],
    &["pouvez", "vous"],
    &["vous", "pouvez"],
    &["merci", "de"],
    &["merci", "d'"],
    &["s'", "il", "te", "plait"],
    &["s'", "il", "vous", "plait"],
    &["stp"],
    &["svp"],
    &["please"],
];
/// Polite endings.
const POLITE_TAILS: &[&[&str]] = &[
    &["une", "fois"],
    &["d'", "accord"],
    &["merci", "ben"],
    &["s'", "il", "te", "plait"],
    &["s'", "il", "vous", "plait"],
    &["stp"],
    &["svp"],
    &["steuplait"],
    &["merci", "beaucoup"],
    &["merci"],
];

/// Words that may call Arthur before the request.
const WAKE_LEADS: [&str; 8] = ["ok", "okay", "dis", "hey", "he", "eh", "salut", "bonjour"];

impl Words {
    /// The name the user calls the assistant (folded), removed in front and at the end.
    pub const WAKE_WORD: &'static str = "arthur";

    pub fn new(raw: &str) -> Self {
        Self::with_wake_word(raw, Self::WAKE_WORD)
    }

    pub fn with_wake_word(raw: &str, wake: &str) -> Self {
        let mut out = Self::split_only(raw);
        out.clean(&fold(wake));
        out
    }

    /// The words of a transcript: as [`Words::new`], and a free text loses its hesitations.
    pub fn heard(raw: &str) -> Self {
        let mut out = Self::new(raw);
        out.spoken = true;
        out
    }

    /// The words only: nothing taken away (templates, and texts already cleaned).
    pub fn split_only(raw: &str) -> Self {
        let original: String = raw
            .chars()
            .map(|c| match c {
                '’' | '`' | '´' | 'ʼ' | '‘' => '\'',
                c => c,
            })
            .collect();
        let question = original.trim_end().trim_end_matches(['.', '!', ' ', '"', '»', ')']).ends_with('?');
        let mut words = split(&original);
        repair_split_elisions(&original, &mut words);
        Self { original, all: words.clone(), words, question, polite: false, repeats: Vec::new(), spoken: false }
    }

    /// Folded words, for matching.
    pub fn folded(&self) -> Vec<&str> {
        self.words.iter().map(|w| w.folded.as_str()).collect()
    }

    /// The original text behind words `a..b` (as said, inner punctuation kept, words taken
    /// away left out).
    pub fn original_between(&self, a: usize, b: usize) -> String {
        if a >= b || b > self.words.len() {
            return String::new();
        }
        let mut text = String::new();
        for k in a..b {
            let w = &self.words[k];
            if k > a {
                let prev = &self.words[k - 1];
                if w.rank == prev.rank + 1 {
                    text.push_str(&self.original[prev.end..w.start]);
                } else {
                    text.push(' ');
                }
            }
            text.push_str(&self.original[w.start..w.end]);
        }
        text.trim_matches(|c: char| c.is_whitespace() || ",;:.!?-«»\"()".contains(c)).to_string()
    }

    /// A free text as it was said, words `a..b` (issue 38: « text is stored as said »): the
    /// original characters from the first word to the last — repeats, punctuation, brackets,
    /// quotes and addresses are content —, with the repeats taken away right after the last
    /// word put back (« New York New York »), a closing bracket or quote whose opening is
    /// inside kept, and quotes around the whole left out. A transcript loses its hesitations
    /// (« euh »), nothing else; typed text keeps every character.
    pub fn said_between(&self, a: usize, b: usize) -> String {
        if a >= b || b > self.words.len() {
            return String::new();
        }
        let first = self.words[a].rank;
        let mut last = self.words[b - 1].rank;
        let next_kept = self.words.get(b).map(|w| w.rank).unwrap_or(usize::MAX);
        while last + 1 < self.all.len() && last + 1 < next_kept && self.repeats.contains(&(last + 1)) {
            last += 1;
        }
        let mut text = String::new();
        let mut prev: Option<usize> = None;
        for rank in first..=last {
            let w = &self.all[rank];
            // « ben », « bah » are hesitations when heard in lower case (« Ben » is a name).
            let hesitation =
                FILLERS.contains(&w.folded.as_str()) || matches!(&self.original[w.start..w.end], "ben" | "bah");
            if self.spoken && hesitation {
                continue;
            }
            if let Some(p) = prev {
                if p + 1 == rank {
                    text.push_str(&self.original[self.all[p].end..w.start]);
                } else {
                    // A hesitation was left out here: what came after it stays (« site euh :
                    // https://… » keeps its colon).
                    let before = &self.original[self.all[p].end..self.all[p + 1].start];
                    let after = &self.original[self.all[rank - 1].end..w.start];
                    text.push_str(if !before.trim().is_empty() {
                        before
                    } else if !after.trim().is_empty() {
                        after
                    } else {
                        " "
                    });
                }
            }
            text.push_str(&self.original[w.start..w.end]);
            prev = Some(rank);
        }
        // What follows the last word up to the next one is kept (« 20 % », « ✅ », a closing
        // bracket or quote whose opening is inside), but the sentence's own punctuation.
        let end = self.all[last].end;
        let next_start = self.all.get(last + 1).map(|w| w.start).unwrap_or(self.original.len());
        // (« ! » and « … » say something; a final full stop or comma does not, nor the
        // question mark of a request (« peux-tu noter que… ? »), unless the text itself asks.)
        let asks = {
            let f = fold(text.trim_start());
            ["est-ce", "est ce", "qui ", "quoi", "quand", "comment", "pourquoi", "combien", "quel", "ou ", "où "]
                .iter()
                .any(|q| {
                    f.starts_with(q)
                        || f.contains(&format!(": {q}"))
                        || f.contains(&format!(" {q}")) && f.contains("est-ce")
                })
        };
        let tail = self.original[end..next_start]
            .trim_end_matches(|c: char| c.is_whitespace() || ".,;:".contains(c) || (c == '?' && !asks));
        let tail = if tail.ends_with("..") { tail } else { tail.trim_end_matches('.') };
        for c in tail.chars() {
            let opened = match c {
                ')' => text.matches('(').count() > text.matches(')').count(),
                ']' => text.matches('[').count() > text.matches(']').count(),
                '»' => text.matches('«').count() > text.matches('»').count(),
                '”' => text.matches('“').count() > text.matches('”').count(),
                '"' => text.matches('"').count() % 2 == 1,
                _ => true,
            };
            if !opened {
                break;
            }
            text.push(c);
        }
        let text = text.trim();
        // Quotes around the whole text frame it; they are not part of it.
        for (open, close) in [('«', '»'), ('"', '"'), ('“', '”')] {
            if let Some(inner) = text.strip_prefix(open).and_then(|t| t.strip_suffix(close)) {
                if !inner.contains(open) && !inner.contains(close) {
                    return inner.trim().to_string();
                }
            }
        }
        // An opening mark left alone at the start is the frame's.
        let text = match text.chars().next() {
            Some(c @ ('«' | '"' | '“' | '('))
                if !text[c.len_utf8()..].contains(match c {
                    '«' => '»',
                    '“' => '”',
                    '(' => ')',
                    _ => '"',
                }) =>
            {
                text[c.len_utf8()..].trim_start()
            }
            _ => text,
        };
        text.to_string()
    }

    /// The folded words joined by spaces.
    pub fn folded_text(&self) -> String {
        self.folded().join(" ")
    }

    fn is(&self, i: usize, w: &str) -> bool {
        self.words.get(i).is_some_and(|x| x.folded == w)
    }

    fn starts_with(&self, seq: &[&str]) -> bool {
        seq.len() <= self.words.len() && seq.iter().enumerate().all(|(i, w)| self.is(i, w))
    }

    fn ends_with(&self, seq: &[&str]) -> bool {
        let n = self.words.len();
        seq.len() < n && seq.iter().enumerate().all(|(i, w)| self.is(n - seq.len() + i, w))
    }

    fn clean(&mut self, wake: &str) {
        // Hesitations, anywhere.
        self.words.retain(|w| !FILLERS.contains(&w.folded.as_str()));
        // The wake word in front (« Arthur, », « ok Arthur »); « bonjour Arthur » alone keeps
        // its greeting.
        for _ in 0..2 {
            if self.is(0, wake) && self.words.len() > 1 {
                self.words.remove(0);
            } else if self.words.len() > 2 && WAKE_LEADS.contains(&self.words[0].folded.as_str()) && self.is(1, wake) {
                self.words.drain(..2);
            } else if self.words.len() == 2 && WAKE_LEADS.contains(&self.words[0].folded.as_str()) && self.is(1, wake) {
                self.words.pop();
            }
        }
        // « merci Arthur », « salut, Arthur »: the name at the end after a courtesy or a
        // comma (« sur le projet Arthur » keeps it).
        if self.words.len() > 1 && self.words.last().is_some_and(|w| w.folded == wake) {
            let n = self.words.len();
            let before = &self.original[..self.words[n - 1].start];
            let courtesy = matches!(
                self.words[n - 2].folded.as_str(),
                "merci"
                    | "bonjour"
                    | "salut"
                    | "bonsoir"
                    | "coucou"
                    | "stp"
                    | "plait"
                    | "hello"
                    | "revoir"
                    | "bien"
                    | "nuit"
                    | "beaucoup"
                    | "soiree"
                    | "journee"
                    | "demain"
                    | "plus"
                    | "ciao"
                    | "bye"
            );
            if courtesy || before.trim_end().ends_with(',') {
                self.words.pop();
            }
        }
        // A word or two said twice in a row (« rappelle-moi rappelle-moi », « le le »).
        let mut i = 0;
        while i < self.words.len() {
            let mut removed = false;
            for n in (1..=3).rev() {
                if i + 2 * n <= self.words.len()
                    && (0..n).all(|k| self.words[i + k].folded == self.words[i + n + k].folded)
                    && !(0..n).all(|k| self.words[i + k].folded.chars().all(|c| c.is_ascii_digit()))
                    && !(n == 1 && matches!(self.words[i].folded.as_str(), "nous" | "vous"))
                {
                    self.repeats.extend(self.words[i + n..i + 2 * n].iter().map(|w| w.rank));
                    self.words.drain(i + n..i + 2 * n);
                    removed = true;
                    break;
                }
            }
            if !removed {
                i += 1;
            }
        }
        // « s'il te plaît » anywhere (« rappelle-moi, s'il te plaît, de… »).
        for polite in [&["s'", "il", "te", "plait"][..], &["s'", "il", "vous", "plait"][..], &["stp"][..], &["svp"][..]]
        {
            let n = polite.len();
            let mut i = 0;
            while i + n <= self.words.len() {
                if self.words.len() > n && (0..n).all(|k| self.words[i + k].folded == polite[k]) {
                    self.words.drain(i..i + n);
                    self.polite = true;
                } else {
                    i += 1;
                }
            }
        }
        // « ajoute une fois des speculoos »: the Belgian « une fois » after the verb, when
        // an article follows (« une fois par semaine » keeps it).
        if self.words.len() > 3
            && self.is(1, "une")
            && self.is(2, "fois")
            && matches!(self.words[3].folded.as_str(), "des" | "du" | "de" | "d'" | "le" | "la" | "les" | "l'" | "un")
        {
            self.words.drain(1..3);
        }
        // Openers (« alors », « bon ») and politeness around the request.
        for _ in 0..3 {
            if self.words.len() > 1 && OPENERS.contains(&self.words[0].folded.as_str()) {
                self.words.remove(0);
                continue;
            }
            let Some(head) = POLITE_HEADS.iter().find(|h| h.len() < self.words.len() && self.starts_with(h)) else {
                break;
            };
            self.words.drain(..head.len());
            self.polite = true;
        }
        for _ in 0..2 {
            if let Some(tail) = POLITE_TAILS.iter().find(|t| self.ends_with(t)) {
                let n = self.words.len();
                self.words.truncate(n - tail.len());
                if self.words.len() > 1 && self.words.last().is_some_and(|w| w.folded == wake) {
                    self.words.pop();
                }
            }
        }
        if self.polite {
            self.question = false;
        }
    }
}

/// A character that may be inside a word.
fn wordish(c: char) -> bool {
    c.is_alphanumeric() || c == '°'
}

/// Cuts the text into words with their byte spans. Hyphens between letters separate words
/// (« rappelle-moi »); between digits they join (« 2026-12-10 »); « 21:00 », « 15/01 » and
/// « 1,5 » stay whole; an apostrophe after an elided word ends it (« d' »), elsewhere it
/// stays inside (« aujourd'hui »); a minus sign sticks to the number it precedes.
fn split(text: &str) -> Vec<Word> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    let mut current = String::new();
    let end_of = |k: usize| chars.get(k).map(|&(b, _)| b).unwrap_or(text.len());
    let mut k = 0;
    while k < chars.len() {
        let (byte, c) = chars[k];
        let prev = k.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(k + 1).map(|&(_, c)| c);
        let digit_join = matches!(c, ':' | '/' | ',' | '.' | '-')
            && prev.is_some_and(|p| p.is_ascii_digit())
            && next.is_some_and(|n| n.is_ascii_digit())
            && start.is_some();
        if wordish(c) || digit_join {
            if start.is_none() {
                start = Some(byte);
                // A minus sign right before a number, not inside a word.
                if c.is_ascii_digit() && k > 0 && matches!(chars[k - 1].1, '-' | '−' | '–') {
                    let before = k.checked_sub(2).map(|p| chars[p].1);
                    if before.is_none_or(|b| b.is_whitespace()) {
                        start = Some(chars[k - 1].0);
                        current.push('-');
                    }
                }
            }
            crate::fold::fold_into(c, &mut current);
        } else if c == '\'' && start.is_some() && ELIDED.contains(&current.as_str()) {
            current.push('\'');
            words.push(Word {
                folded: std::mem::take(&mut current),
                start: start.unwrap_or(byte),
                end: byte + 1,
                rank: 0,
            });
            start = None;
        } else if c == '\'' && start.is_some() && next.is_some_and(char::is_alphabetic) {
            current.push('\'');
        } else {
            if let Some(s) = start.take() {
                words.push(Word { folded: std::mem::take(&mut current), start: s, end: byte, rank: 0 });
            }
            // A lone « n° » or « # » before a number reads as « numéro ».
            if c == '#' && next.is_some_and(|n| n.is_ascii_digit()) {
                words.push(Word { folded: "numero".into(), start: byte, end: end_of(k + 1), rank: 0 });
            }
        }
        k += 1;
    }
    if let Some(s) = start {
        words.push(Word { folded: current, start: s, end: text.len(), rank: 0 });
    }
    for w in &mut words {
        if w.folded == "n°" {
            w.folded = "numero".into();
        } else if let Some(rest) = w.folded.strip_prefix("n°") {
            // « n°3 »: the number alone; the word « numéro » is implied.
            w.folded = rest.to_string();
        }
        w.folded = w.folded.trim_end_matches('°').to_string();
    }
    words.retain(|w| !w.folded.is_empty());
    // « aujourd hui » (the apostrophe lost) is one word.
    let mut k = 0;
    while k + 1 < words.len() {
        if words[k].folded == "aujourd" && words[k + 1].folded == "hui" {
            words[k].folded = "aujourd'hui".into();
            words[k].end = words[k + 1].end;
            words.remove(k + 1);
        }
        k += 1;
    }
    for (rank, w) in words.iter_mut().enumerate() {
        w.rank = rank;
    }
    words
}

/// Speech recognition writes « d appeler » for « d'appeler »: an elided letter alone before
/// a vowel is joined back into « d' ».
fn repair_split_elisions(text: &str, words: &mut [Word]) {
    for i in 0..words.len().saturating_sub(1) {
        // « reste-t-il »: a letter between hyphens is not elided.
        if text[..words[i].start].ends_with('-') || text[words[i].end..].starts_with('-') {
            continue;
        }
        // « 5 m et 30 s », « 30 s et »: a unit after a number is not elided.
        if i > 0 && words[i - 1].folded != "et" && crate::number::is_number_word(&words[i - 1].folded) {
            continue;
        }
        let next_vowel = words[i + 1].folded.starts_with(['a', 'e', 'i', 'o', 'u', 'y', 'h']);
        if next_vowel && ["d", "l", "j", "m", "s", "n", "c", "qu"].contains(&words[i].folded.as_str()) {
            words[i].folded.push('\'');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> String {
        Words::new(s).folded_text()
    }

    #[test]
    fn words_and_spans() {
        let w = Words::new("Arthur, rappelle-moi d'appeler la Sécurité sociale.");
        assert_eq!(w.folded_text(), "rappelle moi d' appeler la securite sociale");
        let n = w.words.len();
        assert_eq!(w.original_between(3, n), "appeler la Sécurité sociale");
        assert!(!w.question);
    }

    #[test]
    fn numbers_dates_and_elisions() {
        assert_eq!(f("le 2026-12-10 à 21:00"), "le 2026-12-10 a 21:00");
        assert_eq!(f("dans -3 heures"), "dans -3 heures");
        assert_eq!(f("rappelle-moi dans 1,5 heure"), "rappelle moi dans 1,5 heure");
        assert_eq!(f("aujourd'hui à 9h30"), "aujourd'hui a 9h30");
        assert_eq!(f("rappelle moi d appeler luc"), "rappelle moi d' appeler luc");
        assert_eq!(f("marque le rappel n°3 comme fait"), "marque le rappel 3 comme fait");
        assert_eq!(f("le rappel #4"), "le rappel numero 4");
        assert_eq!(f("combien de temps reste-t-il"), "combien de temps reste t il");
    }

    #[test]
    fn words_taken_away_stay_out_of_the_text() {
        let w = Words::new("ajoute euh du du sucre, merci");
        assert_eq!(w.folded_text(), "ajoute du sucre");
        assert_eq!(w.original_between(1, 3), "du sucre");
        let w = Words::new("note : acheter, euh, du pain");
        assert_eq!(w.original_between(1, w.words.len()), "acheter du pain");
    }

    #[test]
    fn a_free_text_is_kept_as_said() {
        let said = |s: &str, from: usize| {
            let w = Words::new(s);
            w.said_between(from, w.words.len())
        };
        assert_eq!(said("note : la chanson s'appelle New York New York", 1), "la chanson s'appelle New York New York");
        assert_eq!(said("note Marie a dit non non non", 1), "Marie a dit non non non");
        assert_eq!(said("note mail de Paul : paul@exemple.fr", 1), "mail de Paul : paul@exemple.fr");
        assert_eq!(said("note rdv chez le dentiste (important)", 1), "rdv chez le dentiste (important)");
        assert_eq!(said("note le film s'appelle \"Amélie\"", 1), "le film s'appelle \"Amélie\"");
        assert_eq!(said("note « acheter du pain »", 1), "acheter du pain");
        assert_eq!(said("note 3 × 4 = 12 ✅", 1), "3 × 4 = 12 ✅");
        assert_eq!(said("note remise de 20 % !", 1), "remise de 20 % !");
        assert_eq!(said("note acheter du pain.", 1), "acheter du pain");
        assert_eq!(
            said("note question : est-ce qu'on garde la voiture ?", 1),
            "question : est-ce qu'on garde la voiture ?"
        );
        let w = Words::new("peux-tu noter que la chaudière fait du bruit ?");
        assert_eq!(w.said_between(2, w.words.len()), "la chaudière fait du bruit");
        assert_eq!(said("note https://exemple.fr/a?b=1.", 1), "https://exemple.fr/a?b=1");
        // Typed, every character stays; heard, the hesitations go, nothing else.
        assert_eq!(said("note : acheter, euh, du du pain.", 1), "acheter, euh, du du pain");
        let heard = Words::heard("note : acheter, euh, du du pain.");
        assert_eq!(heard.said_between(1, heard.words.len()), "acheter, du du pain");
        // The request around the text is not the text.
        let w = Words::new("Arthur, note du pain s'il te plaît");
        assert_eq!(w.said_between(1, w.words.len()), "du pain");
    }

    #[test]
    fn what_is_not_the_request_goes() {
        assert_eq!(f("euh Arthur rappelle-moi euh de de appeler Luc"), "rappelle moi de appeler luc");
        assert_eq!(f("ok arthur quelle heure est-il"), "quelle heure est il");
        let w = Words::new("Est-ce que tu peux noter du pain, s'il te plaît ?");
        assert_eq!(w.folded_text(), "noter du pain");
        assert!(w.polite && !w.question);
        assert!(Words::new("quelle heure est-il ?").question);
        assert_eq!(f("rappelle-moi rappelle-moi de sortir"), "rappelle moi de sortir");
        assert_eq!(f("merci Arthur"), "merci");
        assert_eq!(f("Bonjour Arthur !"), "bonjour");
        assert_eq!(f("arthur démarre le chrono sur le projet arthur"), "demarre le chrono sur le projet arthur");
        assert_eq!(f("nous nous voyons"), "nous nous voyons");
    }
}
