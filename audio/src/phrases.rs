//! Commands heard as phrases (issue 40): the grammar's sentences, as a network of words,
//! steer whisper while it decodes. At each step the tokens that would leave every sentence
//! still possible lose `penalty` logits (constrained decoding with a penalty for leaving,
//! so speech that is no command can still leave it); free slots (a reminder's text, a new
//! name) take any word, so they stay free. Each token's own probability is kept, before
//! any steering, so that the caller can doubt a reading whisper itself was unsure of.
//!
//! The network knows words, not tokens: a token is judged by the folded letters it adds
//! (lower case, no accents; « rappelle-moi » is « rappelle » « moi », « d'appeler » is
//! « d' » « appeler »). The callback that calls [`Steer::steer`] is `favour.rs`' (the
//! crate's one `unsafe` module).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::favour::{LogitsFilter, Vocabulary};

/// A state of the network.
pub type State = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Word(u32),
    /// Any one word.
    Any,
    /// One word of a closed class (and words with digits when the class takes them).
    Class(u32),
}

#[derive(Debug, Clone, Default)]
struct Class {
    words: Vec<String>,
    digits: bool,
}

/// The sentences a command can be, as a network of words (built by [`NetBuilder`]).
#[derive(Debug, Clone, Default)]
pub struct PhraseNet {
    words: Vec<String>,
    classes: Vec<Class>,
    /// Per state: epsilon moves, then labelled moves.
    eps: Vec<Vec<State>>,
    moves: Vec<Vec<(Label, State)>>,
    start: State,
}

/// Builds a [`PhraseNet`]: states, and moves between them.
#[derive(Debug, Default)]
pub struct NetBuilder {
    net: PhraseNet,
    word_ids: HashMap<String, u32>,
}

impl NetBuilder {
    /// A builder whose start state is state 0.
    pub fn new() -> Self {
        let mut b = Self::default();
        b.state();
        b
    }

    pub fn start(&self) -> State {
        self.net.start
    }

    /// A new state.
    pub fn state(&mut self) -> State {
        self.net.eps.push(Vec::new());
        self.net.moves.push(Vec::new());
        (self.net.eps.len() - 1) as State
    }

    /// A move that takes no word.
    pub fn epsilon(&mut self, from: State, to: State) {
        self.net.eps[from as usize].push(to);
    }

    /// A move that takes `word` (folded: lower case, no accents).
    pub fn word(&mut self, from: State, to: State, word: &str) {
        let next = self.word_ids.len() as u32;
        let id = *self.word_ids.entry(word.to_owned()).or_insert(next);
        if id == next {
            self.net.words.push(word.to_owned());
        }
        self.net.moves[from as usize].push((Label::Word(id), to));
    }

    /// A move that takes any one word.
    pub fn any(&mut self, from: State, to: State) {
        self.net.moves[from as usize].push((Label::Any, to));
    }

    /// A closed class of words (folded); `digits`: words with digits belong to it too.
    pub fn class(&mut self, words: &[&str], digits: bool) -> u32 {
        let mut words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        words.sort();
        words.dedup();
        self.net.classes.push(Class { words, digits });
        (self.net.classes.len() - 1) as u32
    }

    /// A move that takes one word of `class`.
    pub fn class_word(&mut self, from: State, to: State, class: u32) {
        self.net.moves[from as usize].push((Label::Class(class), to));
    }

    pub fn build(self) -> PhraseNet {
        self.net
    }
}

/// Where a reading stands in the network.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// No sentence of the network starts like the reading: nothing is steered any more.
    Left,
    /// Inside a free slot (or past its words): any word may come, nothing is steered.
    Free,
    /// The words that may come next (sorted), and whether words with digits may.
    Next { words: Vec<String>, digits: bool },
}

impl PhraseNet {
    /// Whether the network holds no sentence.
    pub fn is_empty(&self) -> bool {
        self.moves.iter().all(Vec::is_empty)
    }

    fn closure(&self, mut set: Vec<State>) -> Vec<State> {
        let mut seen = vec![false; self.eps.len()];
        for &s in &set {
            seen[s as usize] = true;
        }
        let mut i = 0;
        while i < set.len() {
            for &n in &self.eps[set[i] as usize] {
                if !seen[n as usize] {
                    seen[n as usize] = true;
                    set.push(n);
                }
            }
            i += 1;
        }
        set.sort_unstable();
        set
    }

    /// The states after the words of `words`, from the start (empty: the reading left).
    pub fn states_after<'a>(&self, words: impl IntoIterator<Item = &'a str>) -> Vec<State> {
        let mut set = self.closure(vec![self.start]);
        for w in words {
            set = self.step(&set, w);
            if set.is_empty() {
                break;
            }
        }
        set
    }

    fn takes(&self, label: Label, word: &str) -> bool {
        match label {
            Label::Any => true,
            Label::Word(id) => self.words[id as usize] == word,
            Label::Class(c) => {
                let class = &self.classes[c as usize];
                (class.digits && has_digit(word)) || class.words.binary_search_by(|w| w.as_str().cmp(word)).is_ok()
            }
        }
    }

    fn step(&self, set: &[State], word: &str) -> Vec<State> {
        let mut seen = vec![false; self.eps.len()];
        let mut next = Vec::new();
        for &s in set {
            for &(label, to) in &self.moves[s as usize] {
                if !seen[to as usize] && self.takes(label, word) {
                    seen[to as usize] = true;
                    next.push(to);
                }
            }
        }
        self.closure(next)
    }

    /// What may come after `set`.
    pub fn place(&self, set: &[State]) -> Place {
        if set.is_empty() {
            return Place::Left;
        }
        let mut words = Vec::new();
        let mut digits = false;
        for &s in set {
            for &(label, _) in &self.moves[s as usize] {
                match label {
                    Label::Any => return Place::Free,
                    Label::Word(id) => words.push(self.words[id as usize].clone()),
                    Label::Class(c) => {
                        let class = &self.classes[c as usize];
                        digits |= class.digits;
                        words.extend(class.words.iter().cloned());
                    }
                }
            }
        }
        words.sort_unstable();
        words.dedup();
        Place::Next { words, digits }
    }
}

fn has_digit(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit())
}

/// Folds one character the way the grammar reads words; `None` for a word boundary.
/// The apostrophe belongs to the word it ends (« d' »).
fn fold_char(c: char, out: &mut String) -> bool {
    let folded = match c {
        'à' | 'â' | 'ä' | 'á' | 'À' | 'Â' | 'Ä' | 'Á' => "a",
        'é' | 'è' | 'ê' | 'ë' | 'É' | 'È' | 'Ê' | 'Ë' => "e",
        'î' | 'ï' | 'í' | 'Î' | 'Ï' => "i",
        'ô' | 'ö' | 'ó' | 'Ô' | 'Ö' => "o",
        'ù' | 'û' | 'ü' | 'ú' | 'Ù' | 'Û' | 'Ü' => "u",
        'ç' | 'Ç' => "c",
        'ÿ' => "y",
        'œ' | 'Œ' => "oe",
        'æ' | 'Æ' => "ae",
        '\'' | '’' | 'ʼ' | '‘' => "'",
        c if c.is_alphanumeric() => {
            out.extend(c.to_lowercase());
            return true;
        }
        _ => return false,
    };
    out.push_str(folded);
    true
}

/// Text cut into folded words: the complete ones, and the last one when the text ends
/// inside it (« rappelle-m » → [« rappelle »], « m »).
pub fn fold_words(text: &str) -> (Vec<String>, String) {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if fold_char(c, &mut current) {
            if current.ends_with('\'') {
                words.push(std::mem::take(&mut current));
            }
        } else if !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
    }
    (words, current)
}

/// What one token adds to a reading, folded: does it start a new word, the letters it
/// adds to the word it starts or continues, and does it end that word.
#[derive(Debug, Clone, Default, PartialEq)]
struct Piece {
    starts_word: bool,
    letters: String,
    ends_word: bool,
    /// Pure punctuation or spaces.
    no_letters: bool,
}

impl Piece {
    fn of(text: &str) -> Self {
        let mut p = Piece { starts_word: false, letters: String::new(), ends_word: false, no_letters: true };
        let mut seen = false;
        for c in text.chars() {
            if fold_char(c, &mut p.letters) {
                seen = true;
                p.no_letters = false;
                if p.letters.ends_with('\'') {
                    p.ends_word = true;
                    break;
                }
            } else if seen {
                p.ends_word = true;
                break;
            } else {
                p.starts_word = true;
            }
        }
        p
    }
}

/// The model's tokens as pieces of words (built once per model).
#[derive(Debug, Clone)]
pub struct TokenTable {
    pieces: Vec<Piece>,
    /// Bytes of each token (what the reading so far is rebuilt from).
    bytes: Vec<Vec<u8>>,
    /// The first special token (end of text): tokens from here are never steered.
    eot: i32,
}

impl TokenTable {
    /// `tokens[i]` = the bytes of token `i`; `eot` the first special token.
    pub fn new(tokens: Vec<Vec<u8>>, eot: i32) -> Self {
        let pieces = tokens.iter().map(|b| Piece::of(&String::from_utf8_lossy(b))).collect();
        Self { pieces, bytes: tokens, eot }
    }

    /// Tokens the model knows (the length of its logits).
    pub fn n_vocab(&self) -> usize {
        self.bytes.len()
    }

    fn text(&self, tokens: &[i32]) -> String {
        let bytes: Vec<u8> = tokens
            .iter()
            .filter(|&&t| t >= 0 && t < self.eot)
            .flat_map(|&t| self.bytes.get(t as usize).into_iter().flatten().copied())
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// One token of a reading, as whisper itself weighed it before any steering.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenWeight {
    pub id: i32,
    /// Its log-probability under the model alone.
    pub logprob: f32,
    /// How many logits below the model's own first choice it was (0: its own choice).
    pub gap: f32,
}

#[derive(Debug, Default)]
struct Record {
    /// The original logits of the last step, their log-sum-exp and maximum.
    last: Vec<f32>,
    lse: f32,
    max: f32,
    weights: Vec<TokenWeight>,
    steered_steps: usize,
}

/// One decoding's steering: favoured words, the phrase network, and what whisper weighed.
#[derive(Debug)]
pub struct Steer<'a> {
    pub(crate) vocabulary: Option<&'a Vocabulary>,
    pub(crate) net: Option<(&'a PhraseNet, f32)>,
    pub(crate) table: &'a TokenTable,
    record: Mutex<Record>,
    walk: Mutex<Walk>,
}

/// Where the last step left the reading in the network: each step walks only the words
/// added since, and a reading that left the network or entered a free slot stays so.
#[derive(Debug, Default)]
struct Walk {
    tokens: usize,
    words: Vec<String>,
    set: Option<Vec<State>>,
    done: bool,
}

/// The callback `favour.rs` installs runs the whole steering at each step.
impl LogitsFilter for Steer<'_> {
    fn n_vocab(&self) -> usize {
        self.table.n_vocab()
    }

    fn filter(&self, decoded: &[i32], logits: &mut [f32]) {
        self.steer(decoded, logits);
    }
}

impl<'a> Steer<'a> {
    pub fn new(vocabulary: Option<&'a Vocabulary>, net: Option<(&'a PhraseNet, f32)>, table: &'a TokenTable) -> Self {
        Self { vocabulary, net, table, record: Mutex::new(Record::default()), walk: Mutex::new(Walk::default()) }
    }

    /// One decoding step: `decoded` the reading's tokens so far, `logits` the next token's.
    /// Records the model's own weights, then favours, then steers into the network.
    pub fn steer(&self, decoded: &[i32], logits: &mut [f32]) {
        if let Ok(mut r) = self.record.lock() {
            let n = decoded.len();
            if n > 0 && !r.last.is_empty() {
                // The token chosen at the last step (a restart of the decoding shortens it).
                r.weights.truncate(n - 1);
                let id = decoded[n - 1];
                if let Some(&l) = usize::try_from(id).ok().and_then(|i| r.last.get(i)) {
                    let w = TokenWeight { id, logprob: l - r.lse, gap: (r.max - l).max(0.0) };
                    r.weights.push(w);
                }
            } else if n == 0 {
                r.weights.clear();
            }
            let (max, lse) = log_sum_exp(logits);
            r.last.clear();
            r.last.extend_from_slice(logits);
            r.max = max;
            r.lse = lse;
        }
        if let Some(v) = self.vocabulary {
            v.favour(decoded, logits);
        }
        if let Some((net, penalty)) = self.net {
            if self.constrain(net, penalty, decoded, logits) {
                if let Ok(mut r) = self.record.lock() {
                    r.steered_steps += 1;
                }
            }
        }
    }

    /// Lowers the tokens within `penalty` of the best that leave the network; whether any was.
    fn constrain(&self, net: &PhraseNet, penalty: f32, decoded: &[i32], logits: &mut [f32]) -> bool {
        let text = self.table.text(decoded);
        if text.ends_with('\u{FFFD}') {
            return false; // a character cut between two tokens: judged at the next step
        }
        let (words, partial) = fold_words(&text);
        let mut walk = self.walk.lock().unwrap_or_else(|e| e.into_inner());
        if decoded.len() < walk.tokens || !words.starts_with(&walk.words) {
            *walk = Walk::default(); // the decoding started again (a fallback): walk anew
        }
        walk.tokens = decoded.len();
        if walk.done {
            return false;
        }
        let mut set = walk.set.take().unwrap_or_else(|| net.states_after([]));
        for w in &words[walk.words.len()..] {
            set = net.step(&set, w);
            if set.is_empty() {
                break;
            }
        }
        walk.words = words;
        let here = net.place(&set);
        walk.set = Some(set.clone());
        let Place::Next { words: next, digits } = &here else {
            walk.done = true;
            return false;
        };
        drop(walk);
        if !partial.is_empty() && !fits(next, *digits, &partial, false) {
            return false; // the word being said already left the network
        }
        // Where a token that starts a new word goes: past the partial word, if it is one.
        let after_partial = if partial.is_empty() {
            Some(here.clone())
        } else if fits(next, *digits, &partial, true) {
            Some(net.place(&net.step(&set, &partial)))
        } else {
            None
        };
        let eot = self.table.eot.max(0) as usize;
        let top = logits[..eot.min(logits.len())].iter().copied().filter(|l| l.is_finite()).fold(f32::MIN, f32::max);
        let mut changed = false;
        for (t, l) in logits.iter_mut().enumerate().take(eot) {
            if !l.is_finite() || *l < top - penalty {
                continue;
            }
            let Some(piece) = self.table.pieces.get(t) else { continue };
            let ok = if piece.no_letters {
                partial.is_empty() || after_partial.is_some()
            } else if piece.starts_word || partial.is_empty() {
                match &after_partial {
                    None => false,
                    Some(Place::Left) => false,
                    Some(Place::Free) => true,
                    Some(Place::Next { words, digits }) => fits(words, *digits, &piece.letters, piece.ends_word),
                }
            } else {
                fits(next, *digits, &format!("{partial}{}", piece.letters), piece.ends_word)
            };
            if !ok {
                *l -= penalty;
                changed = true;
            }
        }
        changed
    }

    /// The model's own weight of each token the reading holds, in order.
    pub fn weights(&self) -> Vec<TokenWeight> {
        self.record.lock().map(|r| r.weights.clone()).unwrap_or_default()
    }

    /// Steps at which some token was lowered for leaving the network.
    pub fn steered_steps(&self) -> usize {
        self.record.lock().map(|r| r.steered_steps).unwrap_or_default()
    }
}

/// Whether `word` is (when `whole`) or begins (else) one of `words`, or is a word with digits.
fn fits(words: &[String], digits: bool, word: &str, whole: bool) -> bool {
    if digits && word.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return true;
    }
    let i = words.partition_point(|w| w.as_str() < word);
    match words.get(i) {
        Some(w) if whole => w == word,
        Some(w) => w.starts_with(word),
        None => false,
    }
}

fn log_sum_exp(logits: &[f32]) -> (f32, f32) {
    let max = logits.iter().copied().filter(|l| l.is_finite()).fold(f32::MIN, f32::max);
    let sum: f32 = logits.iter().filter(|l| l.is_finite()).map(|l| (l - max).exp()).sum();
    (max, max + sum.max(f32::MIN_POSITIVE).ln())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// « rappelle moi {texte} » | « quelle heure est il » | « minuteur de {moment} ».
    fn net() -> PhraseNet {
        let mut b = NetBuilder::new();
        let s = b.start();
        let (a, c, t) = (b.state(), b.state(), b.state());
        b.word(s, a, "rappelle");
        b.word(a, c, "moi");
        b.any(c, t);
        b.any(t, t);
        let (q1, q2, q3, q4) = (b.state(), b.state(), b.state(), b.state());
        b.word(s, q1, "quelle");
        b.word(q1, q2, "heure");
        b.word(q2, q3, "est");
        b.word(q3, q4, "il");
        let (m1, m2, m3) = (b.state(), b.state(), b.state());
        b.word(s, m1, "minuteur");
        b.word(m1, m2, "de");
        let moment = b.class(&["cinq", "minutes", "dix"], true);
        b.class_word(m2, m3, moment);
        b.class_word(m3, m3, moment);
        b.build()
    }

    fn table(tokens: &[&str]) -> TokenTable {
        let mut bytes: Vec<Vec<u8>> = tokens.iter().map(|t| t.as_bytes().to_vec()).collect();
        bytes.push(b"<eot>".to_vec());
        TokenTable::new(bytes, tokens.len() as i32)
    }

    #[test]
    fn text_is_cut_into_folded_words() {
        assert_eq!(
            fold_words("Rappelle-moi d'appeler"),
            (vec!["rappelle".into(), "moi".into(), "d'".into()], "appeler".into())
        );
        assert_eq!(
            fold_words("Quelle heure est-il ?"),
            (vec!["quelle".into(), "heure".into(), "est".into(), "il".into()], String::new())
        );
        assert_eq!(fold_words("Crée à 9h"), (vec!["cree".into(), "a".into()], "9h".into()));
    }

    #[test]
    fn the_network_says_what_may_come_next() {
        let n = net();
        let next = |words: &[&str]| n.place(&n.states_after(words.iter().copied()));
        assert_eq!(
            next(&[]),
            Place::Next { words: vec!["minuteur".into(), "quelle".into(), "rappelle".into()], digits: false }
        );
        assert_eq!(next(&["rappelle", "moi"]), Place::Free, "a free slot takes anything");
        assert_eq!(next(&["rappelle", "moi", "d'", "appeler"]), Place::Free);
        assert_eq!(next(&["quelle", "heur"]), Place::Left);
        assert_eq!(
            next(&["minuteur", "de"]),
            Place::Next { words: vec!["cinq".into(), "dix".into(), "minutes".into()], digits: true }
        );
        assert!(matches!(next(&["minuteur", "de", "12"]), Place::Next { digits: true, .. }));
    }

    const TOKENS: [&str; 10] = [" Quelle", " heure", " Crès", " est", "-il", " Jodi", " rappelle", " heu", "re", " ?"];

    fn steered(decoded: &[i32], penalty: f32) -> Vec<f32> {
        let n = net();
        let t = table(&TOKENS);
        let steer = Steer::new(None, Some((&n, penalty)), &t);
        let mut logits = vec![0.0f32; TOKENS.len() + 1];
        steer.steer(decoded, &mut logits);
        logits
    }

    #[test]
    fn tokens_that_leave_every_sentence_are_lowered() {
        let l = steered(&[], 5.0);
        assert_eq!(l[0], 0.0, "« Quelle » starts a sentence");
        assert_eq!(l[6], 0.0, "« rappelle » too");
        assert_eq!(l[2], -5.0, "« Crès » is no word of the network");
        assert_eq!(l[5], -5.0, "« Jodi » neither");
        assert_eq!(l[10], 0.0, "the end of text is never steered");
        let l = steered(&[0], 5.0);
        assert_eq!((l[1], l[7], l[3]), (0.0, 0.0, -5.0), "« heure » and its start « heu » fit, « est » does not");
        let l = steered(&[0, 7], 5.0);
        assert_eq!((l[8], l[3]), (0.0, -5.0), "« heu » + « re » ends « heure »");
        let l = steered(&[0, 1, 3], 5.0);
        assert_eq!(l[4], 0.0, "« -il » is a new word « il »");
    }

    #[test]
    fn free_slots_and_readings_that_left_are_not_steered() {
        let l = steered(&[6], 5.0);
        assert_eq!(l[5], -5.0, "« rappelle » wants « moi »");
        let n = net();
        let t = table(&[" rappelle", "-moi", " Jodi", " Crès"]);
        let steer = Steer::new(None, Some((&n, 5.0)), &t);
        let mut logits = vec![0.0f32; 5];
        steer.steer(&[0, 1], &mut logits);
        assert_eq!(logits, vec![0.0; 5], "inside the free text");
        steer.steer(&[3], &mut logits);
        assert_eq!(logits, vec![0.0; 5], "« Crès » left the network: nothing is steered");
    }

    #[test]
    fn only_tokens_that_could_win_are_lowered() {
        let n = net();
        let t = table(&TOKENS);
        let steer = Steer::new(None, Some((&n, 2.0)), &t);
        let mut logits = vec![0.0f32; TOKENS.len() + 1];
        logits[5] = -10.0;
        steer.steer(&[], &mut logits);
        assert_eq!(logits[5], -10.0, "far below the best: left alone");
        assert_eq!(logits[2], -2.0);
    }

    #[test]
    fn the_model_own_weights_are_recorded_before_steering() {
        let n = net();
        let t = table(&TOKENS);
        let steer = Steer::new(None, Some((&n, 5.0)), &t);
        let mut logits = vec![0.0f32; TOKENS.len() + 1];
        logits[2] = 3.0; // the model prefers « Crès »
        steer.steer(&[], &mut logits);
        assert!(logits[0] > logits[2], "steered to « Quelle »");
        let mut next = vec![0.0f32; TOKENS.len() + 1];
        steer.steer(&[0], &mut next);
        let w = steer.weights();
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].id, 0);
        assert!((w[0].gap - 3.0).abs() < 1e-5, "{w:?}");
        assert!(w[0].logprob < -3.0, "{w:?}");
        assert_eq!(steer.steered_steps(), 2);
    }
}
