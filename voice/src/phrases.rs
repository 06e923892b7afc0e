//! Commands heard as phrases, for the voice loops (issue 40): the grammar's network of words
//! (`arthur_agents::ears::phrase_net`) in the recogniser's form (`arthur_audio::phrases`),
//! kept while the user's names do not change, and one steered reading of an utterance
//! judged by whisper's own confidence (`ears::Confidence`): a write heard with doubt is
//! asked by the turn (`TurnEngine::run_heard`), never run.

use std::sync::{Arc, Mutex};

use arthur_agents::ears::{self, Confidence};
use arthur_audio::phrases::{NetBuilder, PhraseNet};
use arthur_audio::stt::{Room, SttError, Transcriber, Vocabulary};
use arthur_french::Lexicon;

/// The penalty, in logits, of a token that leaves every sentence of the grammar, when a
/// loop steers with the network. Measured (`ears-fr`, issue 40, Kokoro + MBROLA): with the
/// favoured words, penalties 2 and 4 understood no more commands in silence (22 of 38 both)
/// nor at 12 dB (12 → 11), one or two more at 6 dB, and free speech got a little worse
/// (Kokoro 14.9 → 16.0 %): the misses are in free slots, which the network leaves free.
/// So no loop steers by default.
pub const PHRASE_PENALTY: f32 = 4.0;

/// `words` in the recogniser's form.
pub fn net(words: &ears::WordNet) -> PhraseNet {
    let mut b = NetBuilder::new();
    for _ in 1..words.states {
        b.state();
    }
    let classes: Vec<u32> = words
        .classes
        .iter()
        .map(|(w, digits)| b.class(&w.iter().map(String::as_str).collect::<Vec<_>>(), *digits))
        .collect();
    for (from, to, m) in &words.moves {
        match m {
            ears::Move::Epsilon => b.epsilon(*from, *to),
            ears::Move::Word(w) => b.word(*from, *to, w),
            ears::Move::Any => b.any(*from, *to),
            ears::Move::Class(c) => b.class_word(*from, *to, classes[*c]),
        }
    }
    b.build()
}

/// The grammar's network for one wake word, rebuilt only when the user's names change.
#[derive(Debug, Default)]
pub struct PhraseCache {
    last: Mutex<Option<(String, Arc<PhraseNet>)>>,
}

impl PhraseCache {
    /// The network for `wake_word` and `lexicon` (a few milliseconds to build, once).
    pub fn get(&self, wake_word: &str, lexicon: &Lexicon) -> Arc<PhraseNet> {
        let key = format!("{wake_word}\u{1}{:?}\u{1}{:?}\u{1}{:?}", lexicon.projects, lexicon.lists, lexicon.timers);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((k, n)) = last.as_ref().filter(|(k, _)| *k == key) {
            debug_assert_eq!(k, &key);
            return n.clone();
        }
        let n = Arc::new(net(&ears::phrase_net(wake_word, lexicon)));
        *last = Some((key, n.clone()));
        n
    }
}

/// One utterance heard as a phrase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeardPhrase {
    pub text: String,
    /// Whisper itself weighed some word of it low (`confidence`): a write must be asked.
    pub misheard: bool,
}

/// Reads `pcm` once: `favoured` words favoured, the grammar's `net` steering at `penalty`
/// (when given), and the reading doubted when `confidence` says whisper was unsure of it.
#[allow(clippy::too_many_arguments)]
pub fn hear_phrase(
    transcriber: &Transcriber,
    pcm: &[f32],
    room: Option<Room>,
    prompt: Option<&str>,
    favoured: Option<&Vocabulary>,
    net: Option<(&PhraseNet, f32)>,
    confidence: Option<Confidence>,
    wake_word: &str,
) -> Result<HeardPhrase, SttError> {
    let r = transcriber.read_steered(pcm, room, prompt, favoured, net)?;
    let misheard =
        confidence.is_some_and(|c| c.doubts(r.tokens.iter().map(|t| (t.text.as_str(), t.logprob, t.gap)), wake_word));
    Ok(HeardPhrase { text: r.text, misheard })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_network_converts_and_is_cached_per_lexicon() {
        let cache = PhraseCache::default();
        let lexicon = Lexicon { projects: vec!["Atlas".into()], ..Default::default() };
        let a = cache.get("Arthur", &lexicon);
        assert!(!a.is_empty());
        assert!(Arc::ptr_eq(&a, &cache.get("Arthur", &lexicon)), "same names: same network");
        let other = Lexicon { projects: vec!["Jardin".into()], ..Default::default() };
        assert!(!Arc::ptr_eq(&a, &cache.get("Arthur", &other)), "a new project: rebuilt");
        let place = |words: &[&str]| a.place(&a.states_after(words.iter().copied()));
        assert_eq!(place(&["arthur", "rappelle", "moi"]), arthur_audio::phrases::Place::Free);
        assert_eq!(place(&["arthur", "crès"]), arthur_audio::phrases::Place::Left);
        assert!(matches!(place(&["arthur", "quelle"]), arthur_audio::phrases::Place::Next { .. }));
    }
}
