//! Words whisper should favour while it decodes: the command words and the user's own names
//! (shallow-fusion contextual biasing). A prompt only *shows* whisper these words; here each
//! decoding step adds a bonus to the logits of the tokens that start one of them, or that
//! continue one already begun, so « pause » can win over « awesome » without a second
//! decoding. The trie is built once per vocabulary with the model's own tokenizer.
//!
//! This module holds the workspace's one `unsafe` code: whisper.cpp's logits filter is a C
//! callback (`whisper_full_params::logits_filter_callback`), handed a raw token array and a
//! raw logits array. whisper-rs' `set_grammar` cannot stand in for it: it passes a flat
//! element array where whisper.cpp reads an array of rule pointers.

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{c_int, c_void};

use whisper_rs::whisper_rs_sys::{whisper_context, whisper_state, whisper_token_data};
use whisper_rs::WhisperContext;

/// Most tokens one favoured phrase may take (longer ones are cut: a bonus on the first
/// tokens is what matters).
const MAX_PHRASE_TOKENS: usize = 8;

/// A vocabulary tokenized for one model: a trie of token sequences and the bonus each of
/// its tokens gets (in logits, i.e. natural log of a probability ratio). A phrase already
/// said in this reading is favoured no more: a bonus that could make whisper repeat a word
/// (« Arthur, Arthur, Arthur… ») would invent what nobody said. A phrase is favoured as it
/// is spelt anywhere, and capitalised only where a sentence starts (a capital mid-sentence
/// is a spelling nobody writes, and it pulled « Combien » into a question).
#[derive(Debug, Clone, PartialEq)]
pub struct Vocabulary {
    /// Node [`ANYWHERE`] roots the spellings that may come anywhere, node [`AT_START`] the
    /// ones only a sentence's start takes.
    nodes: Vec<Node>,
    /// Tokens that end a sentence (« . », « ? »…): what follows is a sentence's start.
    stops: Vec<i32>,
    /// Tokens in the longest phrase.
    depth: usize,
    bonus: f32,
    n_vocab: usize,
}

const ANYWHERE: usize = 0;
const AT_START: usize = 1;

#[derive(Debug, Clone, PartialEq, Default)]
struct Node {
    children: HashMap<i32, usize>,
    /// The phrase that ends here.
    ends: Option<usize>,
    /// The phrases that end here or below.
    below: Vec<usize>,
}

/// One way a phrase is tokenized: which phrase, its tokens, whether only a sentence's
/// start takes it.
pub type Spelling = (usize, Vec<i32>, bool);

impl Vocabulary {
    /// Tokenizes `phrases` (as said mid-sentence, with a leading space; capitalised at a
    /// sentence's start) with `ctx`'s tokenizer. Empty phrases and ones whisper cannot
    /// tokenize are skipped.
    pub(crate) fn build(ctx: &WhisperContext, phrases: &[&str], bonus: f32) -> Self {
        let tokenize = |s: &str| ctx.tokenize(s, 4 * MAX_PHRASE_TOKENS).ok();
        let mut spellings: Vec<Spelling> = Vec::new();
        for (i, p) in phrases.iter().map(|p| p.trim()).enumerate().filter(|(_, p)| !p.is_empty()) {
            let mut chars = p.chars();
            let capitalised: String = chars.next().into_iter().flat_map(char::to_uppercase).chain(chars).collect();
            spellings.extend(tokenize(&format!(" {p}")).map(|t| (i, t, false)));
            if capitalised != p {
                spellings.extend(tokenize(&format!(" {capitalised}")).map(|t| (i, t, true)));
            }
        }
        let stops = [".", "!", "?", " ?", " !", "...", "…"]
            .iter()
            .filter_map(|s| tokenize(s))
            .filter(|t| t.len() == 1)
            .map(|t| t[0])
            .collect();
        Self::from_tokens(spellings, stops, bonus, ctx.n_vocab().max(0) as usize)
    }

    /// The trie of these spellings (the tokenizer's output; two spellings of one phrase share
    /// its number), `stops` the tokens that end a sentence, for a vocabulary of `n_vocab`.
    pub fn from_tokens(
        spellings: impl IntoIterator<Item = Spelling>,
        stops: Vec<i32>,
        bonus: f32,
        n_vocab: usize,
    ) -> Self {
        let mut v = Self { nodes: vec![Node::default(), Node::default()], stops, depth: 0, bonus, n_vocab };
        for (phrase, tokens, at_start) in spellings {
            let tokens = &tokens[..tokens.len().min(MAX_PHRASE_TOKENS)];
            if tokens.is_empty() {
                continue;
            }
            v.depth = v.depth.max(tokens.len());
            let mut node = if at_start { AT_START } else { ANYWHERE };
            for &t in tokens {
                v.nodes[node].below.push(phrase);
                node = match v.nodes[node].children.get(&t) {
                    Some(&child) => child,
                    None => {
                        v.nodes.push(Node::default());
                        let child = v.nodes.len() - 1;
                        v.nodes[node].children.insert(t, child);
                        child
                    }
                };
            }
            v.nodes[node].below.push(phrase);
            v.nodes[node].ends = Some(phrase);
        }
        v
    }

    /// Whether no phrase was kept.
    pub fn is_empty(&self) -> bool {
        self.depth == 0
    }

    /// The node `tokens` lead to from `root`, if they spell the start of a phrase.
    fn walk(&self, root: usize, tokens: &[i32]) -> Option<usize> {
        tokens.iter().try_fold(root, |n, t| self.nodes[n].children.get(t).copied())
    }

    /// The roots a phrase starting at `start` in `decoded` may hang from.
    fn roots(&self, decoded: &[i32], start: usize) -> impl Iterator<Item = usize> {
        let sentence_start = start == 0 || self.stops.contains(&decoded[start - 1]);
        std::iter::once(ANYWHERE).chain(sentence_start.then_some(AT_START))
    }

    /// The tokens favoured after `decoded` (the tokens of this reading so far): the first
    /// token of every phrase, and the next token of every phrase `decoded` ends inside,
    /// except towards phrases `decoded` already holds.
    pub fn favoured(&self, decoded: &[i32]) -> Vec<i32> {
        let said: Vec<usize> = (0..decoded.len())
            .flat_map(|start| {
                [ANYWHERE, AT_START].into_iter().flat_map(move |root| {
                    (start + 1..=decoded.len().min(start + self.depth))
                        .map_while(move |end| self.walk(root, &decoded[start..end]))
                        .filter_map(|n| self.nodes[n].ends)
                })
            })
            .collect();
        let mut out: Vec<i32> = Vec::new();
        for start in decoded.len().saturating_sub(self.depth)..=decoded.len() {
            for root in self.roots(decoded, start) {
                let Some(n) = self.walk(root, &decoded[start..]) else { continue };
                for (&t, &child) in &self.nodes[n].children {
                    if self.nodes[child].below.iter().any(|p| !said.contains(p)) {
                        out.push(t);
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Adds the bonus to the favoured tokens' logits (a suppressed token stays suppressed).
    pub fn favour(&self, decoded: &[i32], logits: &mut [f32]) {
        for t in self.favoured(decoded) {
            if let Some(l) = usize::try_from(t).ok().and_then(|i| logits.get_mut(i)) {
                if l.is_finite() {
                    *l += self.bonus;
                }
            }
        }
    }
}

/// What whisper.cpp's logits filter runs at each decoding step: the favoured words alone
/// ([`Vocabulary`]), or the whole steering (`phrases::Steer`). A trait here, so that the one
/// callback below serves both and this module needs none of the modules it serves.
pub(crate) trait LogitsFilter: Sync {
    /// How many logits each step has (the model's n_vocab).
    fn n_vocab(&self) -> usize;
    /// One step: `decoded` the reading's tokens so far, `logits` the next token's.
    fn filter(&self, decoded: &[i32], logits: &mut [f32]);
}

impl LogitsFilter for Vocabulary {
    fn n_vocab(&self) -> usize {
        self.n_vocab
    }

    fn filter(&self, decoded: &[i32], logits: &mut [f32]) {
        self.favour(decoded, logits);
    }
}

/// Sets `params` to run `filter` at each decoding step. `filter` must outlive the `full`
/// call these params are given to (the caller borrows it across that call).
pub(crate) fn install<F: LogitsFilter>(params: &mut whisper_rs::FullParams<'_, '_>, filter: &F) {
    // SAFETY: whisper.cpp calls `filter_logits` only inside `whisper_full`, with the user
    // data set here; the caller keeps `filter` borrowed until `full` returns. The callback
    // only reads the filter through `&F` (it is Sync: whisper.cpp may call it from the
    // threads of several decoders at once).
    unsafe {
        params.set_filter_logits_callback(Some(filter_logits::<F>));
        params.set_filter_logits_callback_user_data(filter as *const F as *mut c_void);
    }
}

/// whisper.cpp's logits filter: `tokens` are the reading's tokens so far, `logits` the
/// next token's (n_vocab of them). Never panics (a panic cannot cross the C boundary).
unsafe extern "C" fn filter_logits<F: LogitsFilter>(
    _ctx: *mut whisper_context,
    _state: *mut whisper_state,
    tokens: *const whisper_token_data,
    n_tokens: c_int,
    logits: *mut f32,
    user_data: *mut c_void,
) {
    if user_data.is_null() || logits.is_null() {
        return;
    }
    // SAFETY: `user_data` is the `&F` `install` set, alive for the whole `full` call.
    let filter = unsafe { &*(user_data as *const F) };
    let decoded: Vec<i32> = match usize::try_from(n_tokens) {
        // SAFETY: whisper.cpp passes its `tokens_cur` vector: `n_tokens` valid elements.
        Ok(n) if n > 0 && !tokens.is_null() => {
            unsafe { std::slice::from_raw_parts(tokens, n) }.iter().map(|t| t.id).collect()
        }
        _ => Vec::new(),
    };
    // SAFETY: whisper.cpp's `decoder.logits` holds exactly n_vocab floats.
    let logits = unsafe { std::slice::from_raw_parts_mut(logits, filter.n_vocab()) };
    filter.filter(&decoded, logits);
}

#[cfg(test)]
mod tests {
    use super::Vocabulary;

    // « pause » = [10, 11], « projet » = [20], « projets » = [20, 21], « work session » =
    // [30, 31, 32], « Arthur » = [40]; « Pause » = [12] at a sentence's start; 99 = « . ».
    fn vocabulary() -> Vocabulary {
        Vocabulary::from_tokens(
            [
                (0, vec![10, 11], false),
                (1, vec![20], false),
                (2, vec![20, 21], false),
                (3, vec![30, 31, 32], false),
                (4, vec![40], false),
                (0, vec![12], true),
            ],
            vec![99],
            2.0,
            64,
        )
    }

    #[test]
    fn capitalised_spellings_only_start_a_sentence() {
        assert_eq!(vocabulary().favoured(&[]), vec![10, 12, 20, 30, 40]);
        assert_eq!(vocabulary().favoured(&[40, 99]), vec![10, 12, 20, 30]);
        assert_eq!(vocabulary().favoured(&[40, 5]), vec![10, 20, 30]);
        // « Pause » said at the start is « pause » said.
        assert_eq!(vocabulary().favoured(&[12, 5]), vec![20, 30, 40]);
    }

    #[test]
    fn first_tokens_are_favoured_anywhere() {
        assert_eq!(vocabulary().favoured(&[1, 2, 3]), vec![10, 20, 30, 40]);
    }

    #[test]
    fn a_begun_phrase_favours_its_next_token() {
        assert_eq!(vocabulary().favoured(&[1, 10]), vec![10, 11, 20, 30, 40]);
        assert_eq!(vocabulary().favoured(&[30, 31]), vec![10, 20, 30, 32, 40]);
        // « projet » is said, « projets » not yet.
        assert_eq!(vocabulary().favoured(&[1, 20]), vec![10, 20, 21, 30, 40]);
        // A token that leaves the phrase ends it.
        assert_eq!(vocabulary().favoured(&[1, 30, 5]), vec![10, 20, 30, 40]);
    }

    #[test]
    fn a_phrase_said_is_favoured_no_more() {
        assert_eq!(vocabulary().favoured(&[40, 7]), vec![10, 20, 30]);
        assert_eq!(vocabulary().favoured(&[1, 10, 11, 5]), vec![20, 30, 40]);
        // Both « projet » and « projets » said: token 20 leads to nothing left to say.
        assert_eq!(vocabulary().favoured(&[1, 20, 21, 5, 20]), vec![10, 30, 40]);
    }

    #[test]
    fn the_bonus_lands_on_finite_logits_only() {
        let v = vocabulary();
        let mut logits = vec![0.0f32; 64];
        logits[20] = f32::NEG_INFINITY;
        v.favour(&[], &mut logits);
        assert_eq!(logits[10], 2.0);
        assert_eq!(logits[30], 2.0);
        assert_eq!(logits[20], f32::NEG_INFINITY, "whisper suppressed it: it stays so");
        assert_eq!(logits[11], 0.0, "not a first token");
        assert_eq!(logits.iter().filter(|l| **l == 2.0).count(), 4, "10, 12, 30 and 40");
    }

    #[test]
    fn a_short_logits_array_is_not_written_past() {
        let v = Vocabulary::from_tokens([(0, vec![100], false)], vec![], 1.0, 4);
        let mut logits = vec![0.0f32; 4];
        v.favour(&[], &mut logits);
        assert_eq!(logits, vec![0.0; 4]);
    }
}
