//! What the ears expect after the wake word, for the speech recogniser: a context prompt
//! made of the grammar's command words and the user's own names (whisper then spells them
//! as Arthur knows them), and the grammar as a judge between several readings of one
//! utterance (the one it parses as sure wins). Pure functions: the voice loop hands the
//! prompt to `arthur_audio::stt` and the readings back here.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use arthur_french::Lexicon;

use crate::understand::{understand, Reading};

/// The words of the grammar's commands, as they are said: verbs and nouns of every intent
/// (reminders, notes, lists, timers, work sessions, projects, memory, briefings). Each is
/// a word of `templates/fr.toml` (tested), so the prompt never teaches whisper a word the
/// grammar would not read.
pub const COMMAND_WORDS: &[&str] = &[
    "rappelle-moi",
    "rappel",
    "rappels",
    "note",
    "notes",
    "liste",
    "courses",
    "ajoute",
    "retire",
    "minuteur",
    "minuteurs",
    "minutes",
    "session",
    "travail",
    "travailler",
    "travaillé",
    "commence",
    "pause",
    "reprends",
    "arrête",
    "chrono",
    "projet",
    "projets",
    "décision",
    "souviens-toi",
    "préférence",
    "préférences",
    "cherche",
    "bilan",
    "semaine",
    "demain",
    "heure",
    "heures",
    "quelle",
    "date",
    "combien",
    "fait",
    "numéro",
    "supprime",
    "efface",
    "annule",
    "lance",
    "fais-moi",
    "dis-moi",
    "lis-moi",
];

/// whisper keeps at most half its 448-token context for the prompt; French words are
/// about two tokens, so names beyond this many characters are left out (the newest last).
const MAX_PROMPT_CHARS: usize = 400;

/// The context prompt: the wake word, the user's names (projects, lists, timers: those
/// whisper would otherwise misspell), then the command words, as one line of text.
pub fn context_prompt(wake_word: &str, lexicon: &Lexicon) -> String {
    let mut prompt = format!("{wake_word}.");
    let names = lexicon.projects.iter().chain(&lexicon.lists).chain(&lexicon.timers);
    let mut seen = std::collections::HashSet::new();
    for name in names.filter(|n| !n.trim().is_empty()) {
        if !seen.insert(arthur_french::fold::fold(name)) {
            continue;
        }
        if prompt.len() + name.len() + 2 > MAX_PROMPT_CHARS / 2 {
            break;
        }
        prompt.push(' ');
        prompt.push_str(name.trim());
        prompt.push(',');
    }
    if prompt.ends_with(',') {
        prompt.pop();
        prompt.push('.');
    }
    for word in COMMAND_WORDS {
        if prompt.len() + word.len() + 2 > MAX_PROMPT_CHARS {
            break;
        }
        prompt.push(' ');
        prompt.push_str(word);
        prompt.push(',');
    }
    if prompt.ends_with(',') {
        prompt.pop();
        prompt.push('.');
    }
    prompt
}

/// The words the recogniser should favour while it decodes (`arthur_audio::favour`): the
/// wake word, the user's names (projects, lists, timers), then the command words; each once.
pub fn favoured_words(wake_word: &str, lexicon: &Lexicon) -> Vec<String> {
    let names = lexicon.projects.iter().chain(&lexicon.lists).chain(&lexicon.timers).map(|n| n.trim());
    let mut seen = std::collections::HashSet::new();
    std::iter::once(wake_word.trim())
        .chain(names)
        .chain(COMMAND_WORDS.iter().copied())
        .filter(|w| !w.is_empty() && seen.insert(arthur_french::fold::fold(w)))
        .map(str::to_owned)
        .collect()
}

/// How surely the grammar reads a transcript: sure, unsure, incomplete, not a command.
fn rank(reading: &Reading) -> u8 {
    match reading {
        Reading::Sure(_) => 3,
        Reading::Unsure { .. } => 2,
        Reading::Incomplete { .. } => 1,
        Reading::NotCommand => 0,
    }
}

/// The reading to keep among several of one utterance (in the recogniser's order of
/// preference): the first the grammar is surest of; the first one when it reads none of
/// them as a command (free speech keeps the recogniser's own choice).
pub fn choose(hypotheses: &[String], now: DateTime<Utc>, tz: Tz, lexicon: &Lexicon) -> usize {
    let mut best: Option<(usize, u8)> = None;
    for (i, text) in hypotheses.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let r = rank(&understand(text, now, tz, lexicon).reading);
        if best.is_none_or(|(_, b)| r > b) {
            best = Some((i, r));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// When a second reading of an utterance is worth its cost (a whole decoding more).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SecondReading {
    /// Never: one decoding, the recogniser's choice.
    Never,
    /// When the grammar reads the first as a command it is not sure of (unsure or
    /// incomplete): a misheard argument (« jeudis », « post ») is the usual cause. Free
    /// speech and sure commands cost one decoding.
    #[default]
    WhenUnsure,
    /// Whenever the first is not a sure command (free speech too: twice the time).
    UnlessSure,
}

/// What was heard of one utterance, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heard {
    pub text: String,
    /// Decodings run (1 or 2).
    pub decodings: usize,
    /// The second reading won the grammar's judgement.
    pub second_won: bool,
}

/// Hears one utterance: `decode(prompt)` runs the recogniser with that context prompt
/// (`None`: none). The first reading uses `first`; when `policy` asks for it, a second uses
/// `second`, and the grammar judges between the two ([`choose`], first reading on a tie).
/// `strip` takes the wake word off a reading before the grammar reads it.
#[allow(clippy::too_many_arguments)]
pub fn hear<E>(
    mut decode: impl FnMut(Option<&str>) -> Result<String, E>,
    first: Option<&str>,
    second: Option<&str>,
    policy: SecondReading,
    strip: impl Fn(&str) -> String,
    now: DateTime<Utc>,
    tz: Tz,
    lexicon: &Lexicon,
) -> Result<Heard, E> {
    let one = decode(first)?;
    let rank_one = rank(&understand(&strip(&one), now, tz, lexicon).reading);
    let again = match policy {
        SecondReading::Never => false,
        SecondReading::WhenUnsure => rank_one == 1 || rank_one == 2,
        SecondReading::UnlessSure => rank_one < 3 && !one.trim().is_empty(),
    };
    if !again {
        return Ok(Heard { text: one, decodings: 1, second_won: false });
    }
    let two = decode(second)?;
    let readings = [strip(&one), strip(&two)];
    let pick = choose(&readings, now, tz, lexicon);
    Ok(if pick == 1 {
        Heard { text: two, decodings: 2, second_won: true }
    } else {
        Heard { text: one, decodings: 2, second_won: false }
    })
}

/// The grammar's sentences as a network of words, for the recogniser to decode a command
/// as a phrase (issue 40, `arthur_audio::phrases`): the wake word, words that may come
/// before a request, one template of the grammar, polite words after it. Free slots take
/// any words; moments, durations and numbers take their own words and digits; known
/// names take the user's names. States are numbered from 0, the start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WordNet {
    pub states: u32,
    pub moves: Vec<(u32, u32, Move)>,
    /// Closed classes of words (folded), and whether words with digits belong to each.
    pub classes: Vec<(Vec<String>, bool)>,
}

/// A move of a [`WordNet`].
#[derive(Debug, Clone, PartialEq)]
pub enum Move {
    /// Takes no word.
    Epsilon,
    /// Takes this folded word.
    Word(String),
    /// Takes any one word.
    Any,
    /// Takes one word of class `n`.
    Class(usize),
}

impl WordNet {
    fn state(&mut self) -> u32 {
        self.states += 1;
        self.states - 1
    }

    fn add(&mut self, from: u32, to: u32, m: Move) {
        self.moves.push((from, to, m));
    }

    /// One or more words taken by `one` (a move), from `from`; returns the state after.
    fn several(&mut self, from: u32, one: Move) -> u32 {
        let (mid, end) = (self.state(), self.state());
        self.add(from, mid, one.clone());
        self.add(mid, mid, one);
        self.add(mid, end, Move::Epsilon);
        end
    }

    /// `parts` from `from`; returns the state after them.
    fn parts(&mut self, from: u32, parts: &[arthur_french::candidates::Part], moment: usize) -> u32 {
        use arthur_french::candidates::{Part, SlotWords};
        let mut at = from;
        for part in parts {
            at = match part {
                Part::Word(w) => {
                    let to = self.state();
                    self.add(at, to, Move::Word(w.clone()));
                    to
                }
                Part::Alt(alts) => {
                    let to = self.state();
                    for alt in alts {
                        let end = self.parts(at, alt, moment);
                        self.add(end, to, Move::Epsilon);
                    }
                    to
                }
                Part::Opt(inner) => {
                    let end = self.parts(at, inner, moment);
                    self.add(at, end, Move::Epsilon);
                    end
                }
                Part::Slot(SlotWords::Free) => self.several(at, Move::Any),
                Part::Slot(SlotWords::Moment) => self.several(at, Move::Class(moment)),
                Part::Slot(SlotWords::Names(names)) => {
                    let words: Vec<String> = names.iter().flat_map(|n| phrase_words(n)).collect();
                    self.classes.push((words, false));
                    let class = self.classes.len() - 1;
                    self.several(at, Move::Class(class))
                }
            };
        }
        at
    }
}

/// Whether `parts` may begin with a free slot.
fn starts_free(parts: &[arthur_french::candidates::Part]) -> bool {
    use arthur_french::candidates::{Part, SlotWords};
    match parts.split_first() {
        None => false,
        Some((Part::Slot(SlotWords::Free), _)) => true,
        Some((Part::Slot(_) | Part::Word(_), _)) => false,
        Some((Part::Opt(inner), rest)) => starts_free(inner) || starts_free(rest),
        Some((Part::Alt(alts), rest)) => alts.iter().any(|a| starts_free(a) || (a.is_empty() && starts_free(rest))),
    }
}

/// Folded words of a name or phrase, as the phrase network reads them.
fn phrase_words(text: &str) -> Vec<String> {
    arthur_french::Words::split_only(text).words.into_iter().map(|w| w.folded).collect()
}

/// The network of the French grammar's sentences after `wake_word`, with `lexicon`'s names.
pub fn phrase_net(wake_word: &str, lexicon: &Lexicon) -> WordNet {
    use arthur_french::candidates::{french_templates, AROUND_WORDS, MOMENT_WORDS};
    let mut net = WordNet::default();
    let start = net.state();
    net.classes.push((MOMENT_WORDS.iter().map(|w| w.to_string()).collect(), true));
    net.classes.push((AROUND_WORDS.iter().map(|w| w.to_string()).collect(), false));
    let (moment, around) = (0, 1);
    // The wake word, said or not (the recogniser hears it in front of the command).
    let mut at = start;
    for w in phrase_words(wake_word) {
        let to = net.state();
        net.add(at, to, Move::Word(w));
        at = to;
    }
    let woken = net.state();
    net.add(at, woken, Move::Epsilon);
    net.add(start, woken, Move::Epsilon);
    // Hesitations, openers and polite heads, then one template, then polite tails.
    let head = net.several(woken, Move::Class(around));
    net.add(woken, head, Move::Epsilon);
    let end = net.state();
    // A template that may start with free text (« {texte} désormais ») would leave every
    // sentence free from its first word: it is left out (the grammar still reads it).
    for template in french_templates(lexicon).into_iter().filter(|t| !starts_free(t)) {
        let after = net.parts(head, &template, moment);
        net.add(after, end, Move::Epsilon);
    }
    net.several(end, Move::Class(around));
    net
}

/// How much whisper must have believed a reading for a command it holds to run unasked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Confidence {
    /// A word token whisper gave a lower log-probability than this is a guess.
    pub min_logprob: f32,
    /// A token chosen this many logits below whisper's own first choice (the favoured
    /// words or the phrase network pulled it in) is a guess too.
    pub max_gap: f32,
}

impl Confidence {
    /// Chosen on the `ears-fr` figures (issue 40).
    pub const MEASURED: Self = Self { min_logprob: -2.3, max_gap: 2.0 };

    /// Whether a reading holds a guess: a token of a word (not the wake word, not
    /// punctuation) whisper itself weighed below these bounds. `tokens` are (text,
    /// log-probability, gap) in order.
    pub fn doubts<'a>(&self, tokens: impl IntoIterator<Item = (&'a str, f32, f32)>, wake_word: &str) -> bool {
        let wake: Vec<String> = phrase_words(wake_word);
        let mut text = String::new();
        for (piece, logprob, gap) in tokens {
            text.push_str(piece);
            if !piece.chars().any(char::is_alphanumeric) {
                continue;
            }
            // Tokens of the wake word, at the very start, are the wake word's business.
            let words = phrase_words(&text);
            let in_wake = words.len() <= wake.len() && words.iter().zip(&wake).all(|(a, b)| b.starts_with(a.as_str()));
            if in_wake {
                continue;
            }
            if logprob < self.min_logprob || gap > self.max_gap {
                return true;
            }
        }
        false
    }
}

/// A command that would write heard with doubt reads as unsure: the turn asks
/// (« J'ai peut-être mal entendu. Tu veux que je… ? ») instead of running it. Other
/// readings stay as they are (a question asked, a reading, free speech).
pub fn doubted(reading: Reading) -> Reading {
    use crate::understand::{Command, Doubt};
    match reading {
        Reading::Sure(Command::Tool(command)) if writes(&command) => {
            Reading::Unsure { command: Command::Tool(command), doubt: Doubt::Misheard }
        }
        other => other,
    }
}

/// Whether a command changes the store (reading a list or the time does not).
pub fn writes(command: &crate::understand::ToolCommand) -> bool {
    let name = command.name();
    !(name.starts_with("lister_") || name.starts_with("lire_") || name.starts_with("chercher_"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arthur_french::Grammar;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
    }

    #[test]
    fn every_command_word_is_a_word_of_the_grammar() {
        let g = Grammar::french();
        for w in COMMAND_WORDS {
            for part in w.split(['-', '\'']) {
                assert!(g.knows_word(part), "{part:?} (of {w:?}) is in no template");
            }
        }
    }

    #[test]
    fn favoured_words_come_once_names_first() {
        let lexicon = Lexicon {
            projects: vec!["Atlas".into(), " jardin ".into(), "atlas".into()],
            lists: vec!["courses".into(), "".into()],
            timers: vec![],
        };
        let w = favoured_words("Arthur", &lexicon);
        assert_eq!(w[..3], ["Arthur", "Atlas", "jardin"]);
        assert_eq!(w.iter().filter(|w| w.as_str() == "courses").count(), 1, "a list named like a command word: once");
        assert!(w.iter().all(|w| !w.is_empty()));
        assert_eq!(w.len(), 3 + COMMAND_WORDS.len(), "{w:?}");
    }

    #[test]
    fn the_prompt_has_the_wake_word_the_names_and_the_commands() {
        let lexicon = Lexicon {
            projects: vec!["Atlas".into(), "jardin".into(), "Atlas".into()],
            lists: vec!["courses".into()],
            timers: vec![],
        };
        let p = context_prompt("Arthur", &lexicon);
        assert!(p.starts_with("Arthur. Atlas, jardin, courses."), "{p}");
        assert_eq!(p.matches("Atlas").count(), 1, "a name once: {p}");
        assert!(p.contains("minuteur") && p.contains("rappelle-moi"), "{p}");
        assert!(p.len() <= MAX_PROMPT_CHARS);
    }

    #[test]
    fn many_names_never_push_the_prompt_past_its_budget() {
        let lexicon =
            Lexicon { projects: (0..200).map(|i| format!("projet numéro {i}")).collect(), ..Default::default() };
        let p = context_prompt("Arthur", &lexicon);
        assert!(p.len() <= MAX_PROMPT_CHARS, "{} chars", p.len());
        assert!(p.contains("minuteur"), "the command words keep their room: {p}");
    }

    #[test]
    fn the_judge_prefers_the_reading_the_grammar_is_sure_of() {
        let lexicon = Lexicon { projects: vec!["jardin".into()], ..Default::default() };
        let tz = chrono_tz::Europe::Paris;
        let heard = vec!["Arthur, je fais une post.".to_string(), "Arthur, je fais une pause.".to_string()];
        assert_eq!(choose(&heard, now(), tz, &lexicon), 1);
        // Free speech: neither is a command; the recogniser's first choice stays.
        let free = vec!["Le plombier passe jeudi.".to_string(), "Le plombier passe jeudis.".to_string()];
        assert_eq!(choose(&free, now(), tz, &lexicon), 0);
        // An empty reading never wins, even first.
        let empty = vec![String::new(), "Quelle heure est-il ?".to_string()];
        assert_eq!(choose(&empty, now(), tz, &lexicon), 1);
        let silent_first = vec![String::new(), "Le plombier passe jeudi.".to_string()];
        assert_eq!(choose(&silent_first, now(), tz, &lexicon), 1);
        assert_eq!(choose(&[], now(), tz, &lexicon), 0);
    }
    #[test]
    fn a_second_reading_runs_only_when_the_policy_asks_and_wins_only_when_surer() {
        let lexicon = Lexicon { projects: vec!["jardin".into()], ..Default::default() };
        let tz = chrono_tz::Europe::Paris;
        let id = |t: &str| t.to_string();
        let heard = |first: &'static str, second: &'static str, policy| {
            let mut calls = Vec::new();
            let h = hear(
                |p: Option<&str>| {
                    calls.push(p.map(str::to_string));
                    Ok::<_, ()>(if calls.len() == 1 { first } else { second }.to_string())
                },
                Some("contexte"),
                None,
                policy,
                id,
                now(),
                tz,
                &lexicon,
            )
            .unwrap();
            (h, calls)
        };
        // A sure command: one decoding, whatever the policy.
        let (h, calls) = heard("rappelle-moi demain à 9 h d'appeler la banque", "x", SecondReading::UnlessSure);
        assert_eq!((h.decodings, calls), (1, vec![Some("contexte".to_string())]));
        // Free speech: one decoding unless asked for every reading.
        let (h, _) = heard("le plombier passe jeudi", "le plombier passe jeudis", SecondReading::WhenUnsure);
        assert_eq!((h.decodings, h.text.as_str()), (1, "le plombier passe jeudi"));
        let (h, calls) = heard("le plombier passe jeudi", "le plombier passe jeudis", SecondReading::UnlessSure);
        assert_eq!((h.decodings, h.second_won), (2, false), "free speech keeps the first reading");
        assert_eq!(calls, vec![Some("contexte".to_string()), None]);
        // Garbled into free speech, heard right the second time: the grammar picks it.
        let (h, _) = heard("je fais une post", "je fais une pause", SecondReading::UnlessSure);
        assert_eq!((h.text.as_str(), h.second_won), ("je fais une pause", true));
        let (h, _) = heard("je fais une post", "je fais une pause", SecondReading::Never);
        assert_eq!((h.text.as_str(), h.decodings), ("je fais une post", 1));
        // An error of the recogniser is the caller's.
        let failed =
            hear(|_| Err::<String, _>("whisper"), None, None, SecondReading::UnlessSure, id, now(), tz, &lexicon);
        assert_eq!(failed, Err("whisper"));
    }

    /// Walks `net` over `words` (a small interpreter of the moves, for the tests): whether
    /// some sentence of the network starts with them.
    fn walk(net: &WordNet, words: &[&str]) -> bool {
        let closure = |mut set: Vec<u32>| {
            let mut i = 0;
            while i < set.len() {
                for (f, t, m) in &net.moves {
                    if *f == set[i] && *m == Move::Epsilon && !set.contains(t) {
                        set.push(*t);
                    }
                }
                i += 1;
            }
            set
        };
        let mut set = closure(vec![0]);
        for w in words {
            let mut next = Vec::new();
            for (f, t, m) in &net.moves {
                let takes = match m {
                    Move::Epsilon => false,
                    Move::Word(x) => x == w,
                    Move::Any => true,
                    Move::Class(c) => {
                        let (words, digits) = &net.classes[*c];
                        words.iter().any(|x| x == w) || (*digits && w.chars().any(|c| c.is_ascii_digit()))
                    }
                };
                if set.contains(f) && takes && !next.contains(t) {
                    next.push(*t);
                }
            }
            set = closure(next);
            if set.is_empty() {
                return false;
            }
        }
        true
    }

    #[test]
    fn the_phrase_net_holds_the_grammar_sentences_and_free_slots() {
        let lexicon = Lexicon { projects: vec!["Jardin potager".into()], ..Default::default() };
        let net = phrase_net("Arthur", &lexicon);
        let ok = |s: &str| {
            let words: Vec<String> = phrase_words(s);
            walk(&net, &words.iter().map(String::as_str).collect::<Vec<_>>())
        };
        assert!(ok("Arthur, rappelle-moi demain à neuf heures d'appeler la banque"));
        assert!(ok("rappelle-moi d'appeler le plombier vendredi à 18 h"), "without the wake word, digits");
        assert!(ok("Arthur, quels sont mes rappels"));
        assert!(ok("Arthur, euh, crée le projet cuisine"));
        assert!(ok("Arthur, note pour jardin potager : semer"), "a known name");
        assert!(!ok("Arthur, qu'elles sont mérapelles"), "a misheard frame leaves the network");
        assert!(!ok("Arthur, crès le projet cuisine"));
        assert!(ok("Arthur, fais-moi le bilan de la semaine"));
        assert!(!ok("Arthur, fais-moi le bilan de la jodi"), "a closed slot takes its own words");
    }

    #[test]
    fn a_reading_whisper_weighed_low_is_doubted_past_the_wake_word() {
        let c = Confidence { min_logprob: -2.0, max_gap: 1.0 };
        let sure = [(" Arthur", -0.1, 0.0), (",", -0.1, 0.0), (" quelle", -0.2, 0.0), (" heure", -0.3, 0.0)];
        assert!(!c.doubts(sure, "Arthur"));
        let low = [(" Arthur", -0.1, 0.0), (" neuf", -2.5, 0.0)];
        assert!(c.doubts(low, "Arthur"));
        let pulled = [(" Arthur", -0.1, 0.0), (" jeudi", -0.5, 1.5)];
        assert!(c.doubts(pulled, "Arthur"), "steered far from whisper's own choice");
        let wake = [(" Ar", -3.0, 0.0), ("thur", -0.1, 2.0), (",", -4.0, 0.0), (" pause", -0.1, 0.0)];
        assert!(!c.doubts(wake, "Arthur"), "the wake word and punctuation are not judged");
    }

    #[test]
    fn only_writes_are_made_unsure() {
        let lexicon = Lexicon::default();
        let tz = chrono_tz::Europe::Paris;
        let write = understand("rappelle-moi demain à 9 h d'appeler la banque", now(), tz, &lexicon).reading;
        assert!(matches!(doubted(write), Reading::Unsure { doubt: crate::understand::Doubt::Misheard, .. }));
        let read = understand("quels sont mes rappels", now(), tz, &lexicon).reading;
        assert!(matches!(doubted(read.clone()), Reading::Sure(_)), "{read:?}");
        let time = understand("quelle heure est-il", now(), tz, &lexicon).reading;
        assert_eq!(doubted(time.clone()), time);
        assert_eq!(doubted(Reading::NotCommand), Reading::NotCommand);
    }
}
