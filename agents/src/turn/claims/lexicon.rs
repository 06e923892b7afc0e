//! The detector's words, kept as data in `lexicon.toml` and parsed once.
//!
//! The file is written in a small part of TOML — `[tables]`, `key = "text"`,
//! `key = ["a", "b"]` (over as many lines as needed), bare or quoted keys, `#` comments —
//! read here by a parser of that part only (anything else is an error naming its line).
//! Every list the engine names must be in the file, and every list of the file must be
//! used by the engine: a misspelt key is an error, not a silent empty list.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use super::ClaimKind;

/// The words, parsed from `lexicon.toml` on first use.
pub(super) static LEX: LazyLock<Lexicon> = LazyLock::new(|| {
    Lexicon::parse(include_str!("lexicon.toml")).unwrap_or_else(|e| panic!("claims/lexicon.toml: {e}"))
});

/// A list of words (or of word parts: stems, endings), in the order written.
#[derive(Debug, Default)]
pub(super) struct Words {
    list: Vec<String>,
    set: HashSet<String>,
}

impl Words {
    fn new(list: Vec<String>) -> Self {
        let set = list.iter().cloned().collect();
        Words { list, set }
    }
    /// The word is in the list.
    pub fn has(&self, word: &str) -> bool {
        self.set.contains(word)
    }
    /// The word starts with one of the list's stems.
    pub fn stem_of(&self, word: &str) -> bool {
        self.list.iter().any(|s| word.starts_with(s.as_str()))
    }
    /// The word ends with one of the list's endings.
    pub fn ending_of(&self, word: &str) -> bool {
        self.list.iter().any(|e| word.ends_with(e.as_str()))
    }
}

/// Phrases of folded words, kept with a space at each end so that they match whole words
/// inside a clause's `joined` text (which has a space at each end too).
#[derive(Debug, Default)]
pub(super) struct Phrases(Vec<String>);

impl Phrases {
    fn new(list: Vec<String>) -> Self {
        Phrases(list.into_iter().map(|p| format!(" {} ", p.trim())).collect())
    }
    /// The first phrase found inside `joined`.
    pub fn found_in(&self, joined: &str) -> Option<&str> {
        self.0.iter().find(|p| joined.contains(p.as_str())).map(|p| p.trim())
    }
    pub fn in_(&self, joined: &str) -> bool {
        self.found_in(joined).is_some()
    }
    /// Where the first of the phrases found inside `joined` starts.
    pub fn position(&self, joined: &str) -> Option<usize> {
        self.0.iter().find_map(|p| joined.find(p.as_str()))
    }
    /// `joined` opens with one of the phrases.
    pub fn leads(&self, joined: &str) -> bool {
        self.0.iter().any(|p| joined.starts_with(p.as_str()))
    }
    /// `joined` closes with one of the phrases.
    pub fn closes(&self, joined: &str) -> bool {
        self.0.iter().any(|p| joined.ends_with(p.as_str()))
    }
    /// `joined` is exactly one of the phrases.
    pub fn is(&self, joined: &str) -> bool {
        self.0.iter().any(|p| joined == p)
    }
}

/// Phrases that claim by themselves, each with its kind, in the order they are tried.
#[derive(Debug, Default)]
pub(super) struct KindPhrases(Vec<(String, ClaimKind)>);

impl KindPhrases {
    pub fn iter(&self) -> impl Iterator<Item = (&str, ClaimKind)> {
        self.0.iter().map(|(p, k)| (p.as_str(), *k))
    }
}

/// Rewrites of the written text, in order (« rendez-vous » → « rendezvous »).
#[derive(Debug, Default)]
pub(super) struct Rewrites(pub Vec<(String, String)>);

/// One value of the file.
#[derive(Debug)]
enum Value {
    Text(String),
    List(Vec<String>),
}

/// The file's entries by full key (`table.key`), in the order written.
struct Entries {
    order: Vec<String>,
    values: HashMap<String, Value>,
}

impl Entries {
    fn list(&mut self, key: &str) -> Result<Vec<String>, String> {
        match self.values.remove(key) {
            Some(Value::List(l)) => Ok(l),
            Some(Value::Text(_)) => Err(format!("`{key}` must be a list")),
            None => Err(format!("`{key}` is missing")),
        }
    }
    /// The entries of a table (`[table]` with `"key" = "value"` lines), in order.
    fn table(&mut self, table: &str) -> Result<Vec<(String, String)>, String> {
        let prefix = format!("{table}.");
        let keys: Vec<String> = self.order.iter().filter(|k| k.starts_with(&prefix)).cloned().collect();
        if keys.is_empty() {
            return Err(format!("table `{table}` is missing"));
        }
        let mut out = Vec::new();
        for key in keys {
            match self.values.remove(&key) {
                Some(Value::Text(v)) => out.push((key[prefix.len()..].to_string(), v)),
                Some(Value::List(_)) => return Err(format!("`{key}` must be text")),
                None => {}
            }
        }
        Ok(out)
    }
}

trait FromEntries: Sized {
    fn take(entries: &mut Entries, key: &str) -> Result<Self, String>;
}

/// A list without repeats: a word written twice is a slip of the pen.
fn distinct(key: &str, list: Vec<String>) -> Result<Vec<String>, String> {
    let mut seen = HashSet::new();
    match list.iter().find(|w| !seen.insert(w.as_str())) {
        Some(twice) => Err(format!("`{key}`: \"{twice}\" is written twice")),
        None => Ok(list),
    }
}

impl FromEntries for Words {
    fn take(entries: &mut Entries, key: &str) -> Result<Self, String> {
        Ok(Words::new(distinct(key, entries.list(key)?)?))
    }
}

impl FromEntries for Phrases {
    fn take(entries: &mut Entries, key: &str) -> Result<Self, String> {
        Ok(Phrases::new(distinct(key, entries.list(key)?)?))
    }
}

impl FromEntries for Rewrites {
    fn take(entries: &mut Entries, key: &str) -> Result<Self, String> {
        Ok(Rewrites(entries.table(key)?))
    }
}

impl FromEntries for KindPhrases {
    fn take(entries: &mut Entries, key: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for (phrase, kind) in entries.table(key)? {
            let kind = match kind.as_str() {
                "receipt" => ClaimKind::Receipt,
                "action" => ClaimKind::Action,
                "promise" => ClaimKind::Promise,
                "stored_fact" => ClaimKind::StoredFact,
                "third_party" => ClaimKind::ThirdParty,
                "denial" => ClaimKind::Denial,
                other => return Err(format!("`{key}.{phrase}`: unknown kind `{other}`")),
            };
            out.push((format!(" {} ", phrase.trim()), kind));
        }
        Ok(KindPhrases(out))
    }
}

macro_rules! lexicon {
    ($( $(#[$doc:meta])* $field:ident : $ty:ident = $key:literal, )*) => {
        /// Every list of `lexicon.toml`, by the name the engine uses.
        #[derive(Debug)]
        pub(super) struct Lexicon {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        impl Lexicon {
            fn parse(src: &str) -> Result<Self, String> {
                let mut entries = parse(src)?;
                let lexicon = Lexicon { $( $field: <$ty>::take(&mut entries, $key)?, )* };
                let mut unused: Vec<&String> = entries.values.keys().collect();
                unused.sort();
                if let Some(first) = unused.first() {
                    return Err(format!("`{first}` is not used by the engine"));
                }
                Ok(lexicon)
            }
        }
    };
}

lexicon! {
    // ---- the text
    joined: Rewrites = "text.joined",
    conjunctions: Words = "text.conjunctions",
    receipt_marks: Words = "text.receipt_marks",

    // ---- who: Arthur, the user, a third party, the world
    first_person: Words = "who.first_person",
    persons: Words = "who.persons",
    subject_pronouns: Words = "who.subject_pronouns",
    user_subject: Words = "who.user_subject",
    user_words: Words = "who.user_words",
    user_possessives: Words = "who.user_possessives",
    own_possessives: Words = "who.own_possessives",
    user_owned: Words = "who.user_owned",
    user_mentions: Words = "who.user_mentions",
    tu: Words = "who.tu",
    you_words: Words = "who.you_words",
    object_after: Words = "who.object_after",
    pronoun_subjects: Words = "who.pronoun_subjects",
    about_memory_pronouns: Words = "who.about_memory_pronouns",
    third_parties: Words = "who.third_parties",
    conversation_nouns: Words = "who.conversation_nouns",
    knowing: Words = "who.knowing",
    eras: Words = "who.eras",
    year_marks: Words = "who.year_marks",
    generic_markers: Words = "who.generic_markers",
    tendency: Words = "who.tendency",

    // ---- grammar: what stands between a subject and its verb, and what a verb form is
    clitics: Words = "grammar.clitics",
    modals: Words = "grammar.modals",
    que: Words = "grammar.que",
    ne: Words = "grammar.ne",
    negations: Words = "grammar.negations",
    determiners: Words = "grammar.determiners",
    indefinite: Words = "grammar.indefinite",
    definite: Words = "grammar.definite",
    the: Words = "grammar.the",
    infinitive_endings: Words = "grammar.infinitive_endings",
    continuation_endings: Words = "grammar.continuation_endings",
    continuation_heads: Words = "grammar.continuation_heads",
    participle_endings: Words = "grammar.participle_endings",
    participle_endings_after_aux: Words = "grammar.participle_endings_after_aux",
    irregular_participles: Words = "grammar.irregular_participles",
    not_participles: Words = "grammar.not_participles",
    feelings: Words = "grammar.feelings",
    copulas: Words = "grammar.copulas",
    passive_aux: Words = "grammar.passive_aux",
    been: Words = "grammar.been",
    future_copulas: Words = "grammar.future_copulas",
    pronominal: Words = "grammar.pronominal",
    third_person_aux: Words = "grammar.third_person_aux",
    future_aux: Words = "grammar.future_aux",
    free_relative: Words = "grammar.free_relative",
    prepositions: Words = "grammar.prepositions",
    not_verbs: Words = "grammar.not_verbs",
    nothing: Words = "grammar.nothing",

    // ---- Arthur's own actions (first person)
    past_aux: Words = "arthur.past_aux",
    relative_past_aux: Words = "arthur.relative_past_aux",
    english_have: Words = "arthur.english_have",
    have_not_past: Words = "arthur.have_not_past",
    did: Words = "arthur.did",
    on_aux: Words = "arthur.on_aux",
    harmless_participles: Words = "arthur.harmless_participles",
    be_aux: Words = "arthur.be_aux",
    busy: Words = "arthur.busy",
    progressive: Phrases = "arthur.progressive",
    harmless_ing: Words = "arthur.harmless_ing",
    near_future_aux: Words = "arthur.near_future_aux",
    harmless_near_future: Words = "arthur.harmless_near_future",
    will_harmless: Words = "arthur.will_harmless",
    well: Words = "arthur.well",
    harmless_futures: Words = "arthur.harmless_futures",
    conditional_endings: Words = "arthur.conditional_endings",
    future_endings: Words = "arthur.future_endings",
    present_verbs: Words = "arthur.present_verbs",
    promising_present: Words = "arthur.promising_present",
    just_did: Words = "arthur.just_did",
    of_: Words = "arthur.of",
    intention_breaks: Words = "arthur.intention_breaks",
    without: Words = "arthur.without",
    action_infinitives: Words = "arthur.action_infinitives",
    english_subjects: Words = "arthur.english_subjects",
    speech_acts: Words = "arthur.speech_acts",
    lasting: Phrases = "arthur.lasting",
    notify_verbs: Words = "arthur.notify_verbs",
    going: Words = "arthur.going",
    to_you: Words = "arthur.to_you",
    generic_on_after: Words = "arthur.generic_on_after",
    partitive: Words = "arthur.partitive",
    denied_now: Words = "arthur.denied_now",
    finding: Words = "arthur.finding",
    no_longer: Words = "arthur.no_longer",

    // ---- receipts and bare acknowledgements
    fillers: Words = "receipt.fillers",
    acks: Words = "receipt.acks",
    understood: Words = "receipt.understood",
    voila: Words = "receipt.voila",
    not_state_lead: Words = "receipt.not_state_lead",
    not_titles: Words = "receipt.not_titles",
    title_endings: Words = "receipt.title_endings",
    state_words: Words = "receipt.state_words",
    state_phrases: Phrases = "receipt.state_phrases",
    operation_nouns: Words = "receipt.operation_nouns",
    outcome_verbs: Words = "receipt.outcome_verbs",
    number_marks: Words = "receipt.number_marks",
    places: Words = "receipt.places",
    here: Words = "receipt.here",
    already: Words = "receipt.already",
    agent_marks: Words = "receipt.agent_marks",
    also_nouns: Words = "receipt.also_nouns",
    also_verbs: Words = "receipt.also_verbs",
    completion: Words = "receipt.completion",

    // ---- set phrases
    phrases: KindPhrases = "phrases.claim",
    leading_phrases: KindPhrases = "phrases.leading",
    done_idioms: Phrases = "phrases.done_idioms",
    done_phrase: Phrases = "phrases.done",

    // ---- the user's memory and schedule
    memory_nouns: Words = "memory.nouns",
    schedule_nouns: Words = "memory.schedule_nouns",
    secrets: Words = "memory.secrets",
    noun_adjectives: Words = "memory.noun_adjectives",
    counted_dets: Words = "memory.counted_dets",
    every: Phrases = "memory.every",
    memory_verbs: Words = "memory.verbs",
    memory_copulas_after: Words = "memory.copulas_after",
    running: Words = "memory.running",
    ringing: Words = "memory.ringing",
    located_preps: Words = "memory.located_preps",
    according_to: Phrases = "memory.according_to",
    there_is: Phrases = "memory.there_is",
    happened_aux: Words = "memory.happened_aux",
    memory_future_endings: Words = "memory.future_endings",
    ordinal_endings: Words = "memory.ordinal_endings",
    already_in: Phrases = "memory.already_in",
    running_nouns: Words = "memory.running_nouns",
    memory_just_did: Words = "memory.just_did",
    none: Words = "memory.none",
    holding: Words = "memory.holding",
    verb_before: Words = "memory.verb_before",
    have: Words = "user.have",
    have_object_dets: Words = "user.have_object_dets",
    have_negations: Words = "user.have_negations",
    negated_elision: Words = "user.negated_elision",
    claimed_participles: Words = "user.claimed_participles",
    habit_adverbs: Words = "user.habit_adverbs",
    prefers: Words = "user.prefers",
    go: Words = "user.go",
    user_future_endings: Words = "user.future_endings",
    works: Words = "user.works",
    works_preps: Words = "user.works_preps",
    thing_verbs: Words = "user.thing_verbs",
    thing_copulas: Words = "user.thing_copulas",
    evaluative: Words = "user.evaluative",
    evaluative_objects: Phrases = "user.evaluative_objects",
    taste_verbs: Words = "user.taste_verbs",
    lead_ok: Words = "user.lead_ok",
    subordinate_or_object: Words = "user.subordinate_or_object",
    subordinate_before: Words = "user.subordinate_before",
    t_verbs: Words = "user.t_verbs",
    dated_frames: Phrases = "user.dated_frames",
    presenting: Phrases = "user.presenting",
    remains: Phrases = "user.remains",
    states: Words = "user.states",
    advice_futures: Words = "user.advice_futures",
    owes: Words = "user.owes",
    wants: Words = "user.wants",
    prefers_that: Words = "user.prefers_that",
    sees: Words = "user.sees",
    not_names: Words = "user.not_names",
    habits: Words = "user.habits",
    traits: Words = "user.traits",
    tags: Phrases = "user.tags",
    announces: Phrases = "user.announces",
    prefers_lead: Phrases = "user.prefers_lead",
    cest: Phrases = "user.cest",
    copula_phrases: Phrases = "user.copula_phrases",
    modal_adjectives: Words = "user.modal_adjectives",
    receive_futures: Words = "user.receive_futures",
    will: Words = "user.will",
    guesses: Words = "user.guesses",
    infinitive_marks: Words = "user.infinitive_marks",
    obligation: Words = "user.obligation",
    obligation_modals: Words = "user.obligation_modals",

    // ---- someone else handles it
    handling_stems: Words = "third_party.handling_stems",
    pending: Phrases = "third_party.pending",
    te: Phrases = "third_party.te",
    handling_phrases: Phrases = "third_party.handling_phrases",
    third_future_endings: Words = "third_party.future_endings",
    memory_reads: Words = "third_party.memory_reads",

    // ---- frames: questions, offers, conditions, instructions
    question_leads: Phrases = "frames.question_leads",
    frame_leads: Phrases = "frames.hypothetical_leads",
    condition_leads: Phrases = "frames.condition_leads",
    purpose: Words = "frames.purpose",
    say_leads: Phrases = "frames.say_leads",
    say_verbs: Words = "frames.say_verbs",
    genres: Words = "frames.genres",
    praise: Phrases = "frames.praise",
    imperatives: Words = "frames.imperatives",
    answer_leads: Phrases = "frames.answer_leads",
    lead_adverbs: Words = "frames.lead_adverbs",
    echo_said: Words = "frames.echo_said",
    echo_aux: Words = "frames.echo_aux",

    // ---- time and numbers
    time_words: Words = "time.words",
    time_phrases: Phrases = "time.phrases",
    days: Words = "time.days",
    week_days: Words = "time.week_days",
    hour_units: Words = "time.hour_units",
    specific_time_phrases: Phrases = "time.specific_phrases",
    number_words: Words = "time.number_words",
    english_hours: Words = "time.english_hours",
    duration_marks: Words = "time.duration_marks",
    rate_marks: Words = "time.rate_marks",
    every_words: Words = "time.every_words",
    measure_units: Words = "time.measure_units",
    rate_units: Words = "time.rate_units",
}

/// Parses the part of TOML the file uses.
fn parse(src: &str) -> Result<Entries, String> {
    let mut order = Vec::new();
    let mut values = HashMap::new();
    let mut table = String::new();
    let mut chars = src.chars().peekable();
    let mut line = 1usize;
    loop {
        skip_blank(&mut chars, &mut line);
        let Some(&c) = chars.peek() else { break };
        if c == '[' {
            chars.next();
            let mut name = String::new();
            for c in chars.by_ref() {
                if c == ']' {
                    break;
                }
                name.push(c);
            }
            table = name.trim().to_string();
            if table.is_empty() || table.contains('[') {
                return Err(format!("line {line}: bad table header"));
            }
            expect_end_of_line(&mut chars, &mut line)?;
            continue;
        }
        let key = if c == '"' {
            chars.next();
            read_string(&mut chars, line)?
        } else {
            let mut k = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    k.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            if k.is_empty() {
                return Err(format!("line {line}: expected a key, found `{c}`"));
            }
            k
        };
        skip_spaces(&mut chars);
        if chars.next() != Some('=') {
            return Err(format!("line {line}: expected `=` after `{key}`"));
        }
        skip_spaces(&mut chars);
        let value = match chars.next() {
            Some('"') => Value::Text(read_string(&mut chars, line)?),
            Some('[') => {
                let mut list = Vec::new();
                loop {
                    skip_blank(&mut chars, &mut line);
                    match chars.next() {
                        Some(']') => break,
                        Some('"') => list.push(read_string(&mut chars, line)?),
                        other => return Err(format!("line {line}: expected a string in the list, found {other:?}")),
                    }
                    skip_blank(&mut chars, &mut line);
                    match chars.peek() {
                        Some(',') => {
                            chars.next();
                        }
                        Some(']') => {}
                        other => return Err(format!("line {line}: expected `,` or `]`, found {other:?}")),
                    }
                }
                Value::List(list)
            }
            other => return Err(format!("line {line}: unsupported value {other:?} for `{key}`")),
        };
        expect_end_of_line(&mut chars, &mut line)?;
        let full = if table.is_empty() { key } else { format!("{table}.{key}") };
        if values.insert(full.clone(), value).is_some() {
            return Err(format!("line {line}: `{full}` is defined twice"));
        }
        order.push(full);
    }
    Ok(Entries { order, values })
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

fn skip_spaces(chars: &mut Chars) {
    while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
        chars.next();
    }
}

/// Spaces, new lines and comments.
fn skip_blank(chars: &mut Chars, line: &mut usize) {
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '\r' => {
                chars.next();
            }
            '\n' => {
                *line += 1;
                chars.next();
            }
            '#' => {
                while chars.peek().is_some_and(|c| *c != '\n') {
                    chars.next();
                }
            }
            _ => break,
        }
    }
}

fn expect_end_of_line(chars: &mut Chars, line: &mut usize) -> Result<(), String> {
    skip_spaces(chars);
    match chars.peek() {
        None | Some('\n') | Some('\r') | Some('#') => Ok(()),
        Some(c) => Err(format!("line {line}: unexpected `{c}` after a value")),
    }
}

/// A basic string, its opening quote already read.
fn read_string(chars: &mut Chars, line: usize) -> Result<String, String> {
    let mut s = String::new();
    loop {
        match chars.next() {
            Some('"') => return Ok(s),
            Some('\\') => match chars.next() {
                Some('"') => s.push('"'),
                Some('\\') => s.push('\\'),
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                other => return Err(format!("line {line}: unsupported escape {other:?}")),
            },
            Some('\n') | None => return Err(format!("line {line}: unterminated string")),
            Some(c) => s.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lexicon_parses_and_every_list_is_used() {
        let lex = &*LEX;
        assert!(lex.memory_nouns.has("rappel"));
        assert!(lex.phrases.iter().count() > 50);
    }

    #[test]
    fn the_toml_subset() {
        let e = parse("# c\na = [\"x\", # y\n \"z\",]\n[t]\n\"k l\" = \"v\"\n").unwrap();
        assert!(matches!(e.values.get("a"), Some(Value::List(l)) if l == &["x", "z"]));
        assert!(matches!(e.values.get("t.k l"), Some(Value::Text(v)) if v == "v"));
        assert!(parse("a = 1\n").is_err());
        assert!(parse("a = \"x\"\na = \"y\"\n").is_err());
    }
}
