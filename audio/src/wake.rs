//! Wake word and follow-up window, kept pure so the hands-free loop is testable: an
//! utterance is for Arthur only when it starts with the wake word ("Arthur", in whisper's
//! spellings), or when it comes within a short window after Arthur answered (or after the
//! wake word said alone). Time is passed in, never read here.

use std::time::{Duration, Instant};

/// The default wake word.
pub const DEFAULT_WAKE_WORD: &str = "Arthur";
/// Default follow-up window after an answer, and after a bare wake word.
pub const DEFAULT_FOLLOW_UP: Duration = Duration::from_secs(8);

/// Interjections accepted before the wake word ("OK Arthur", "hey Arthur", "dis Arthur").
const FILLERS: &[&[&str]] = &[
    &["ok"],
    &["okay"],
    &["o", "k"],
    &["hey"],
    &["he"],
    &["hei"],
    &["eh"],
    &["hi"],
    &["hello"],
    &["dis"],
    &["bonjour"],
    &["salut"],
    &["allo"],
    &["alors"],
];
/// At most this many fillers before the wake word ("hey, OK Arthur").
const MAX_FILLERS: usize = 2;

/// Lower case, accents folded (é → e, œ → oe), punctuation and apostrophes turned into
/// spaces, runs of spaces collapsed, trimmed.
pub fn normalize(text: &str) -> String {
    words(text).into_iter().map(|w| w.norm).collect::<Vec<_>>().join(" ")
}

/// One word of a transcript: its normalised form and its byte range in the original.
struct Word {
    norm: String,
    end: usize,
}

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut end = 0;
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            for lower in c.to_lowercase() {
                fold_char(lower, &mut current);
            }
            end = i + c.len_utf8();
        } else if !current.is_empty() {
            out.push(Word { norm: std::mem::take(&mut current), end });
        }
    }
    if !current.is_empty() {
        out.push(Word { norm: current, end });
    }
    out
}

fn fold_char(c: char, out: &mut String) {
    let folded = match c {
        'à' | 'â' | 'ä' | 'á' | 'ã' | 'å' => "a",
        'ç' => "c",
        'é' | 'è' | 'ê' | 'ë' => "e",
        'î' | 'ï' | 'í' | 'ì' => "i",
        'ô' | 'ö' | 'ó' | 'ò' | 'õ' => "o",
        'ù' | 'û' | 'ü' | 'ú' => "u",
        'ÿ' | 'ý' => "y",
        'ñ' => "n",
        'œ' => "oe",
        'æ' => "ae",
        'ß' => "ss",
        _ => {
            out.push(c);
            return;
        }
    };
    out.push_str(folded);
}

/// A rough phonetic key so whisper's spellings meet: "Arthur", "Artur", "Arthure",
/// "Arthurs", "Artour" all give "artur".
fn phonetic_key(word: &str) -> String {
    let mut s = word.replace("ou", "u").replace('h', "");
    while s.len() > 3 && (s.ends_with('e') || s.ends_with('s') || s.ends_with('x')) {
        s.pop();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if !out.ends_with(c) {
            out.push(c);
        }
    }
    out
}

/// Whether a (normalised, joined) heard word is the (normalised, joined) wake word.
fn sounds_like(heard: &str, wake: &str) -> bool {
    if heard == wake {
        return true;
    }
    let (h, w) = (phonetic_key(heard), phonetic_key(wake));
    if h == w {
        return true;
    }
    // One slip allowed on longer words ("arthor"), never on short ones.
    w.chars().count() >= 5 && {
        let chars = |s: &str| s.chars().collect::<Vec<char>>();
        crate::wer::edit_distance(&chars(&h), &chars(&w)) <= 1
    }
}

/// If `transcript` starts (after normalisation and optional interjections such as "OK" or
/// "hey") with the wake word, returns the rest of the command as it was written (accents
/// and case kept, leading punctuation and spaces removed; empty when the wake word was
/// said alone). `None` when the transcript does not start with the wake word.
pub fn strip_wake_word(transcript: &str, wake: &str) -> Option<String> {
    let wake_words: Vec<String> = words(wake).into_iter().map(|w| w.norm).collect();
    if wake_words.is_empty() {
        return None;
    }
    let wake_joined = wake_words.concat();
    let heard = words(transcript);
    let mut start = 0;
    for _ in 0..=MAX_FILLERS {
        if let Some(end) = match_wake(&heard[start..], wake_words.len(), &wake_joined) {
            let end_byte = heard[start + end - 1].end;
            let rest = transcript[end_byte..].trim_start_matches(|c: char| !c.is_alphanumeric()).trim_end();
            return Some(rest.to_owned());
        }
        let filler = FILLERS
            .iter()
            .find(|f| f.len() <= heard.len() - start && f.iter().zip(&heard[start..]).all(|(a, b)| *a == b.norm))?;
        start += filler.len();
    }
    None
}

/// Number of heard words making up the wake word at the start of `heard`: the same number
/// of words as the wake word, or one more or one fewer (whisper splits and joins words:
/// "Ar thur").
fn match_wake(heard: &[Word], wake_len: usize, wake_joined: &str) -> Option<usize> {
    let candidates = [wake_len, wake_len + 1, wake_len.saturating_sub(1)];
    candidates.into_iter().find(|&n| {
        n >= 1 && n <= heard.len() && {
            let joined: String = heard[..n].iter().map(|w| w.norm.as_str()).collect();
            sounds_like(&joined, wake_joined)
        }
    })
}

/// Tuning of the [`Listener`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerConfig {
    pub wake_word: String,
    /// After an answer, utterances are taken without the wake word for this long.
    pub follow_up: Duration,
    /// After the wake word said alone, the command is awaited for this long.
    pub command_wait: Duration,
}

impl Default for ListenerConfig {
    fn default() -> Self {
        Self { wake_word: DEFAULT_WAKE_WORD.to_owned(), follow_up: DEFAULT_FOLLOW_UP, command_wait: DEFAULT_FOLLOW_UP }
    }
}

/// Where the listener stands at a given instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenerState {
    /// Only utterances starting with the wake word are taken.
    Idle,
    /// The wake word was said alone: the next utterance is the command.
    AwaitingCommand { until: Instant },
    /// Arthur just answered: a follow-up needs no wake word.
    FollowUp { until: Instant },
}

/// What to do with one transcribed utterance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Heard {
    /// Send this text through the turn.
    Command(String),
    /// The wake word alone: play the "listening" earcon and wait for the command.
    WakeOnly,
    /// Not for Arthur (no wake word outside a window, or nothing said).
    Ignored,
}

/// What the loop knows about an utterance besides its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtteranceContext {
    /// It stood out from the room's background (a television is not the user).
    pub foreground: bool,
    /// The offline parser reads it as a command.
    pub reads_as_command: bool,
    /// It began while Arthur was speaking and cut him: the user is talking to him.
    pub after_barge_in: bool,
}

impl UtteranceContext {
    /// Anything said in a window is for Arthur (the rule before background speech was
    /// told apart).
    pub fn permissive() -> Self {
        Self { foreground: true, reads_as_command: true, after_barge_in: false }
    }
}

/// At most this many words make a "short reply" to Arthur's question ("oui", "mardi
/// prochain", "non, plutôt jeudi à dix heures").
pub const SHORT_REPLY_WORDS: usize = 6;

/// The hands-free state machine: idle → wake word → command → answer → follow-up window.
#[derive(Debug, Clone)]
pub struct Listener {
    config: ListenerConfig,
    window: Option<(Instant, WindowKind)>,
    /// The last answer ended with a question.
    asked: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WindowKind {
    Command,
    FollowUp,
}

impl Listener {
    pub fn new(config: ListenerConfig) -> Self {
        Self { config, window: None, asked: false }
    }

    pub fn config(&self) -> &ListenerConfig {
        &self.config
    }

    pub fn state(&self, now: Instant) -> ListenerState {
        match self.window {
            Some((until, kind)) if now <= until => match kind {
                WindowKind::Command => ListenerState::AwaitingCommand { until },
                WindowKind::FollowUp => ListenerState::FollowUp { until },
            },
            _ => ListenerState::Idle,
        }
    }

    /// Whether an utterance ending at `now` needs the wake word to be taken (no window).
    pub fn needs_wake_word(&self, now: Instant) -> bool {
        self.state(now) == ListenerState::Idle
    }

    /// Decides about one utterance transcribed at `now` (the end of the utterance), any
    /// utterance inside a window being for Arthur. A command closes the window (the turn
    /// runs; call [`Listener::answered`] after it).
    pub fn on_utterance(&mut self, transcript: &str, now: Instant) -> Heard {
        self.on_utterance_in(transcript, now, UtteranceContext::permissive())
    }

    /// What [`Listener::on_utterance_in`] would decide, without changing anything.
    pub fn would_take(&self, transcript: &str, now: Instant, context: UtteranceContext) -> bool {
        matches!(self.clone().on_utterance_in(transcript, now, context), Heard::Command(_))
    }

    /// Decides about one utterance in a room: inside a window, an utterance without the
    /// wake word is taken only when it stood out from the background and, after an
    /// answer, reads as a command, or is a short reply to Arthur's question, or cut
    /// Arthur's answer; after the wake word said alone, when it stood out.
    pub fn on_utterance_in(&mut self, transcript: &str, now: Instant, context: UtteranceContext) -> Heard {
        let state = self.state(now);
        let in_window = match state {
            ListenerState::Idle => false,
            ListenerState::AwaitingCommand { .. } => context.foreground,
            ListenerState::FollowUp { .. } => {
                let words = normalize(transcript).split(' ').filter(|w| !w.is_empty()).count();
                context.foreground
                    && (context.reads_as_command
                        || context.after_barge_in
                        || (self.asked && words <= SHORT_REPLY_WORDS))
            }
        };
        let heard = match strip_wake_word(transcript, &self.config.wake_word) {
            Some(rest) if rest.is_empty() => {
                self.window = Some((now + self.config.command_wait, WindowKind::Command));
                tracing::debug!("wake word alone, awaiting the command");
                return Heard::WakeOnly;
            }
            Some(rest) => Heard::Command(rest),
            None if in_window => {
                let text = transcript.trim();
                if normalize(text).is_empty() {
                    return Heard::Ignored;
                }
                Heard::Command(text.to_owned())
            }
            None => {
                tracing::debug!(?state, ?context, "utterance without the wake word ignored");
                return Heard::Ignored;
            }
        };
        self.window = None;
        heard
    }

    /// The wake word was heard elsewhere at `now` (a satellite's own detector): the next
    /// utterance is the command, as after the wake word said alone.
    pub fn woken(&mut self, now: Instant) {
        self.window = Some((now + self.config.command_wait, WindowKind::Command));
    }

    /// Arthur finished answering at `now`: opens the follow-up window.
    pub fn answered(&mut self, now: Instant) {
        self.answered_asking(now, false);
    }

    /// Arthur finished answering at `now`, with a question (`asked`) or not.
    pub fn answered_asking(&mut self, now: Instant, asked: bool) {
        self.window = Some((now + self.config.follow_up, WindowKind::FollowUp));
        self.asked = asked;
    }

    /// Closes any window (e.g. the user said goodbye).
    pub fn close_window(&mut self) {
        self.window = None;
    }
}

impl Default for Listener {
    fn default() -> Self {
        Self::new(ListenerConfig::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_case_accents_and_punctuation() {
        assert_eq!(
            normalize("  Arthur, Rappelle-moi d'appeler ÉLODIE… à 9h ! "),
            "arthur rappelle moi d appeler elodie a 9h"
        );
        assert_eq!(normalize("Cœur, où ça ?"), "coeur ou ca");
        assert_eq!(normalize("?!"), "");
    }

    #[test]
    fn strips_the_wake_word_and_keeps_the_original_command() {
        let cases = [
            ("Arthur, rappelle-moi d'appeler Élodie.", "rappelle-moi d'appeler Élodie."),
            ("arthur rappelle moi", "rappelle moi"),
            ("OK Arthur, quelle heure est-il ?", "quelle heure est-il ?"),
            ("O.K. Arthur note ça", "note ça"),
            ("Hey arthur. Démarre une session.", "Démarre une session."),
            ("Hé, Arthur : lis mes rappels", "lis mes rappels"),
            ("Dis Arthur, ajoute une note", "ajoute une note"),
            ("Artur, ajoute une note", "ajoute une note"),
            ("Arthure ajoute une note", "ajoute une note"),
            ("Arthurs, ajoute une note", "ajoute une note"),
            ("ARTHOUR ajoute une note", "ajoute une note"),
            ("Ar thur, ajoute une note", "ajoute une note"),
            ("Hey, OK Arthur, ajoute une note", "ajoute une note"),
            ("Arthur.", ""),
            ("Arthur", ""),
        ];
        for (input, expected) in cases {
            assert_eq!(strip_wake_word(input, "Arthur").as_deref(), Some(expected), "{input}");
        }
    }

    #[test]
    fn no_wake_word_no_command() {
        for input in [
            "Rappelle-moi d'appeler Arthur",
            "J'ai vu Arthur hier",
            "Art, ajoute une note",
            "Martha, ajoute une note",
            "ok ok ok Arthur",
            "",
            "...",
        ] {
            assert_eq!(strip_wake_word(input, "Arthur"), None, "{input}");
        }
    }

    #[test]
    fn the_wake_word_is_configurable() {
        assert_eq!(strip_wake_word("Jarvis, note ça", "Jarvis").as_deref(), Some("note ça"));
        assert_eq!(strip_wake_word("Arthur, note ça", "Jarvis"), None);
        assert_eq!(strip_wake_word("Ok mon ami, note ça", "Mon ami").as_deref(), Some("note ça"));
        assert_eq!(strip_wake_word("Arthur, note", ""), None);
    }

    #[test]
    fn a_wake_word_heard_elsewhere_opens_the_command_window() {
        let t0 = Instant::now();
        let mut l = Listener::default();
        l.woken(t0);
        assert_eq!(
            l.on_utterance("quelle heure est-il", t0 + Duration::from_secs(2)),
            Heard::Command("quelle heure est-il".into())
        );
        assert_eq!(l.state(t0 + Duration::from_secs(3)), ListenerState::Idle, "one command, then the wake word again");
        l.woken(t0);
        assert_eq!(l.on_utterance("quelle heure est-il", t0 + DEFAULT_FOLLOW_UP * 2), Heard::Ignored, "too late");
    }

    #[test]
    fn listener_follows_wake_word_and_windows() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut l = Listener::default();
        assert_eq!(l.state(t0), ListenerState::Idle);
        assert_eq!(l.on_utterance("quelle heure est-il", t0), Heard::Ignored);
        assert_eq!(
            l.on_utterance("Arthur, quelle heure est-il", t0 + s(1)),
            Heard::Command("quelle heure est-il".into())
        );
        assert_eq!(l.state(t0 + s(2)), ListenerState::Idle);
        // The answer ends at 5 s: follow-ups until 13 s need no wake word.
        l.answered(t0 + s(5));
        assert_eq!(l.state(t0 + s(6)), ListenerState::FollowUp { until: t0 + s(13) });
        assert_eq!(l.on_utterance("  ", t0 + s(6)), Heard::Ignored);
        assert_eq!(l.on_utterance("et demain ?", t0 + s(7)), Heard::Command("et demain ?".into()));
        // A command closes the window until the next answer.
        assert_eq!(l.on_utterance("et après ?", t0 + s(8)), Heard::Ignored);
        l.answered(t0 + s(10));
        assert_eq!(l.on_utterance("Arthur, merci", t0 + s(11)), Heard::Command("merci".into()));
        l.answered(t0 + s(12));
        assert_eq!(l.on_utterance("et encore", t0 + s(21)), Heard::Ignored);
        assert_eq!(l.state(t0 + s(21)), ListenerState::Idle);
    }

    #[test]
    fn wake_word_alone_waits_for_the_command() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut l = Listener::new(ListenerConfig { command_wait: s(5), ..ListenerConfig::default() });
        assert_eq!(l.on_utterance("Arthur ?", t0), Heard::WakeOnly);
        assert_eq!(l.state(t0 + s(1)), ListenerState::AwaitingCommand { until: t0 + s(5) });
        assert_eq!(l.on_utterance("note du pain", t0 + s(3)), Heard::Command("note du pain".into()));
        assert_eq!(l.on_utterance("Arthur", t0 + s(10)), Heard::WakeOnly);
        assert_eq!(l.on_utterance("note du pain", t0 + s(16)), Heard::Ignored);
        l.answered(t0 + s(20));
        l.close_window();
        assert_eq!(l.state(t0 + s(21)), ListenerState::Idle);
    }

    #[test]
    fn in_a_room_the_window_is_for_the_user_only() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let tv = UtteranceContext { foreground: false, reads_as_command: true, after_barge_in: false };
        let user = UtteranceContext { foreground: true, reads_as_command: false, after_barge_in: false };
        let command = UtteranceContext { reads_as_command: true, ..user };
        let mut l = Listener::default();
        l.answered(t0);
        assert_eq!(l.on_utterance_in("note du pain", t0 + s(1), tv), Heard::Ignored, "background speech");
        assert_eq!(l.on_utterance_in("and then the weather", t0 + s(2), user), Heard::Ignored, "not a command");
        assert!(l.would_take("note du pain", t0 + s(3), command));
        assert_eq!(l.on_utterance_in("note du pain", t0 + s(3), command), Heard::Command("note du pain".into()));
        // A short reply to a question is taken; a long one needs to read as a command.
        l.answered_asking(t0 + s(10), true);
        assert_eq!(l.on_utterance_in("mardi prochain", t0 + s(11), user), Heard::Command("mardi prochain".into()));
        l.answered_asking(t0 + s(20), true);
        assert_eq!(
            l.on_utterance_in("so I was telling him about the trip we had last summer", t0 + s(21), user),
            Heard::Ignored
        );
        // What cut Arthur is for him; the wake word always works, even over the television.
        assert_eq!(
            l.on_utterance_in("call my mother", t0 + s(22), UtteranceContext { after_barge_in: true, ..user }),
            Heard::Command("call my mother".into())
        );
        assert_eq!(l.on_utterance_in("Arthur, note du pain", t0 + s(60), tv), Heard::Command("note du pain".into()));
        // After the wake word alone, the next utterance must be the user's.
        assert_eq!(l.on_utterance_in("Arthur", t0 + s(70), user), Heard::WakeOnly);
        assert_eq!(l.on_utterance_in("note du pain", t0 + s(71), tv), Heard::Ignored);
    }
}
