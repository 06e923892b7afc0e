//! The command grammar: French sentence templates kept as data (`templates/fr.toml`), in
//! the spirit of Home Assistant's hassil. A template is words, alternatives `(a|b)`,
//! optional parts `[a]`, shared rules `<rule>` and typed slots `{name:type}`; it must cover
//! the whole utterance. Slots parse and validate what they hold (a moment, a duration, a
//! number, a known project or list) so a sentence matches only when every part of it was
//! understood; among several matches the one that leaves the fewest words to free text
//! wins (« appeler Luc hier à 10 h » keeps « hier » in the moment, not in the text). A word
//! written `~mais` is one speech recognition hears for another (« mais » for « mets »): it
//! matches, and the reading it is part of is never sure.

use std::collections::{BTreeMap, HashSet};

use chrono::NaiveDateTime;
use serde::Deserialize;

use crate::fold::{edit_distance_within, fold};
use crate::moment::{self, DayRef, Moment, RangeRef};
use crate::words::Words;

/// Names the grammar cannot know by itself: read from the store before each parse.
#[derive(Debug, Clone, Default)]
pub struct Lexicon {
    pub projects: Vec<String>,
    pub lists: Vec<String>,
    pub timers: Vec<String>,
}

/// What a slot holds once parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum SlotValue {
    /// Free text, as said.
    Text(String),
    /// A name of the lexicon, spelled as the lexicon spells it.
    Known(String),
    /// A name the lexicon does not know yet, as said.
    Unknown(String),
    Number(i64),
    /// A duration, signed (a negative one is read so that the command can ask).
    Seconds(i64),
    Moment(Moment),
    Day(DayRef),
    Range(RangeRef),
    /// How often (« tous les lundis à 19 h »).
    Recurrence(crate::recurrence::Recurrence),
}

/// One way the whole utterance matched a template.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub intent: String,
    pub agent: Option<String>,
    pub domain: Option<String>,
    pub slots: BTreeMap<String, SlotValue>,
    /// Arguments the sentence implies.
    pub args: BTreeMap<String, String>,
    /// The template itself always asks first (« vide la liste »).
    pub ask: bool,
    /// The template, as written in the data (for the trace).
    pub template: String,
    /// Words left to free text, names the lexicon did not know, misspelt words: the
    /// lower, the surer.
    pub free_words: usize,
    pub unknown_names: usize,
    pub fuzzy: usize,
    /// Words matched as the recogniser's mishearing of a template word (`~mais`).
    pub misheard: usize,
    /// Words read by typed slots: a template that says them in letters is more specific.
    pub slot_words: usize,
    /// The whole utterance as said (cleaned), for intents that keep it all.
    pub said: String,
}

impl Match {
    pub fn text(&self, slot: &str) -> Option<&str> {
        match self.slots.get(slot)? {
            SlotValue::Text(s) | SlotValue::Known(s) | SlotValue::Unknown(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GrammarError {
    #[error("templates: {0}")]
    Toml(#[from] toml::de::Error),
    #[error("template {template:?}: {problem}")]
    Template { template: String, problem: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotKind {
    Text,
    ShortName,
    Project,
    List,
    Timer,
    /// A project, list or timer the store already knows.
    KnownProject,
    KnownList,
    KnownTimer,
    Moment,
    Day,
    Range,
    Duration,
    Number,
    Recurrence,
}

impl SlotKind {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "texte" => SlotKind::Text,
            "nom" => SlotKind::ShortName,
            "projet" => SlotKind::Project,
            "liste" => SlotKind::List,
            "minuteur" => SlotKind::Timer,
            "projet_connu" => SlotKind::KnownProject,
            "liste_connue" => SlotKind::KnownList,
            "minuteur_connu" => SlotKind::KnownTimer,
            "quand" => SlotKind::Moment,
            "jour" => SlotKind::Day,
            "periode" => SlotKind::Range,
            "duree" => SlotKind::Duration,
            "numero" | "nombre" => SlotKind::Number,
            "recurrence" => SlotKind::Recurrence,
            _ => return None,
        })
    }

    /// Most words the slot may take.
    fn max_words(self) -> usize {
        match self {
            SlotKind::Text => 60,
            SlotKind::ShortName
            | SlotKind::Project
            | SlotKind::List
            | SlotKind::Timer
            | SlotKind::KnownProject
            | SlotKind::KnownList
            | SlotKind::KnownTimer => 5,
            SlotKind::Moment | SlotKind::Range | SlotKind::Recurrence => 12,
            SlotKind::Day | SlotKind::Duration => 8,
            SlotKind::Number => 5,
        }
    }
}

#[derive(Debug, Clone)]
enum Node {
    Word(String),
    /// A word speech recognition writes for another (`~mais` for « mets »).
    Misheard(String),
    Alt(Vec<Vec<Node>>),
    Opt(Vec<Node>),
    Slot {
        name: String,
        kind: SlotKind,
    },
}

#[derive(Debug)]
struct Template {
    intent: usize,
    source: String,
    nodes: Vec<Node>,
    ask: bool,
    /// Every word the template requires (one of each alternative at least): a quick check
    /// that skips templates whose words were not said.
    required: Vec<Vec<String>>,
}

#[derive(Debug)]
struct Intent {
    name: String,
    agent: Option<String>,
    domain: Option<String>,
    args: BTreeMap<String, String>,
}

/// The data file's shape.
#[derive(Deserialize)]
struct Data {
    #[serde(default)]
    rules: BTreeMap<String, String>,
    #[serde(default)]
    intent: Vec<IntentData>,
    /// Words speech recognition often mistakes for the grammar's words: never fuzzy-matched.
    #[serde(default)]
    not_misspellings: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IntentData {
    name: String,
    agent: Option<String>,
    domain: Option<String>,
    #[serde(default)]
    sentences: Vec<String>,
    /// Sentences that are the intent but always ask first.
    #[serde(default)]
    ask: Vec<String>,
    /// Arguments the sentences imply (« tous les minuteurs » → `tous = "true"`).
    #[serde(default)]
    args: BTreeMap<String, String>,
}

/// The compiled grammar.
#[derive(Debug)]
pub struct Grammar {
    intents: Vec<Intent>,
    templates: Vec<Template>,
    /// Every word written in a template: a word said exactly like one of them is never
    /// read as a misspelling of another.
    vocabulary: HashSet<String>,
    /// The words written `~word`: not the grammar's words (never favoured, never offered),
    /// but never read as misspellings either.
    misheard: HashSet<String>,
}

/// The French templates shipped with Arthur.
pub const FRENCH: &str = include_str!("../templates/fr.toml");

/// Steps the search may take for one utterance before it gives up (no match).
const STEP_BUDGET: usize = 200_000;

impl Grammar {
    /// The grammar shipped with Arthur (compiled once).
    pub fn french() -> &'static Grammar {
        static G: std::sync::OnceLock<Grammar> = std::sync::OnceLock::new();
        G.get_or_init(|| Grammar::from_toml(FRENCH).expect("templates/fr.toml compiles (tested)"))
    }

    pub fn from_toml(source: &str) -> Result<Self, GrammarError> {
        let data: Data = toml::from_str(source)?;
        let mut intents = Vec::new();
        let mut templates = Vec::new();
        let mut vocabulary: HashSet<String> = data.not_misspellings.iter().map(|w| fold(w)).collect();
        let mut misheard = HashSet::new();
        for (k, intent) in data.intent.iter().enumerate() {
            intents.push(Intent {
                name: intent.name.clone(),
                agent: intent.agent.clone(),
                domain: intent.domain.clone(),
                args: intent.args.clone(),
            });
            for (ask, list) in [(false, &intent.sentences), (true, &intent.ask)] {
                for s in list {
                    let err = |problem: String| GrammarError::Template { template: s.clone(), problem };
                    let nodes = compile(s, &data.rules, 0).map_err(err)?;
                    collect_words(&nodes, &mut vocabulary, &mut misheard);
                    let required = required_words(&nodes);
                    templates.push(Template { intent: k, source: s.clone(), nodes, ask, required });
                }
            }
        }
        Ok(Self { intents, templates, vocabulary, misheard })
    }

    /// Whether `word` (folded) is written in some template: the words a command can be
    /// made of (the speech recogniser's context prompt is checked against them).
    pub fn knows_word(&self, word: &str) -> bool {
        self.vocabulary.contains(&fold(word))
    }

    /// The names of the intents, in the data's order.
    pub fn intents(&self) -> impl Iterator<Item = &str> {
        self.intents.iter().map(|i| i.name.as_str())
    }

    /// Every way the whole utterance matches, best first.
    pub fn matches(&self, words: &Words, now: NaiveDateTime, lexicon: &Lexicon) -> Vec<Match> {
        let folded: Vec<&str> = words.folded();
        if folded.is_empty() || folded.len() > 80 {
            return Vec::new();
        }
        let lex = FoldedLexicon::new(lexicon);
        let present: HashSet<&str> = folded.iter().copied().collect();
        let mut out = Vec::new();
        for (index, t) in self.templates.iter().enumerate() {
            if !t.required.iter().all(|alts| {
                alts.iter().any(|w| {
                    present.contains(w.as_str())
                        || folded.iter().any(|f| inflected(w, f))
                        || self.fuzzy_present(w, &folded)
                })
            }) {
                continue;
            }
            let mut search = Search {
                grammar: self,
                words,
                folded: &folded,
                now,
                lex: &lex,
                caps: Vec::new(),
                fuzzy: 0,
                misheard: 0,
                steps: 0,
                found: Vec::new(),
            };
            let mut stack: Vec<&[Node]> = vec![&t.nodes];
            search.walk(&mut stack, 0);
            for (caps, fuzzy, misheard) in search.found {
                let mut slots = BTreeMap::new();
                let mut free_words = 0;
                let mut unknown_names = 0;
                let mut slot_words = 0;
                for c in caps {
                    if matches!(c.kind, SlotKind::Text | SlotKind::ShortName) {
                        free_words += c.len;
                    } else {
                        slot_words += c.len;
                    }
                    if matches!(c.value, SlotValue::Unknown(_)) {
                        unknown_names += 1;
                        free_words += c.len;
                    }
                    slots.insert(c.name, c.value);
                }
                let intent = &self.intents[t.intent];
                out.push((
                    index,
                    Match {
                        intent: intent.name.clone(),
                        agent: intent.agent.clone(),
                        domain: intent.domain.clone(),
                        slots,
                        args: intent.args.clone(),
                        ask: t.ask,
                        template: t.source.clone(),
                        free_words,
                        unknown_names,
                        fuzzy,
                        misheard,
                        slot_words,
                        said: words.said_between(0, words.words.len()),
                    },
                ));
            }
        }
        out.sort_by_key(|(i, m)| (m.free_words, m.unknown_names, m.fuzzy, m.misheard, m.slot_words, *i));
        out.into_iter().map(|(_, m)| m).collect()
    }

    /// The best match of the whole utterance, if any.
    pub fn best(&self, words: &Words, now: NaiveDateTime, lexicon: &Lexicon) -> Option<Match> {
        self.matches(words, now, lexicon).into_iter().next()
    }

    fn fuzzy_present(&self, literal: &str, folded: &[&str]) -> bool {
        folded.iter().any(|w| self.fuzzy_eq(literal, w))
    }

    /// A misspelling of a long template word (« rapelle », « minuteure »), when the word
    /// said is not itself a word of the grammar.
    fn fuzzy_eq(&self, literal: &str, said: &str) -> bool {
        literal.chars().count() >= 6
            && said.chars().count() >= 5
            && !self.vocabulary.contains(said)
            && !self.misheard.contains(said)
            && !said.chars().any(|c| c.is_ascii_digit())
            && edit_distance_within(literal, said, 1).is_some()
    }

    /// Does the text hold, somewhere inside, words that read as a moment (« appeler Luc
    /// hier »)? A reminder's text that does was probably cut in the wrong place.
    pub fn mentions_moment(text: &str, now: NaiveDateTime) -> bool {
        let w = Words::split_only(text);
        let f = w.folded();
        for a in 0..f.len() {
            // « le journal du dimanche », « la réunion de lundi »: a day named as a thing.
            if a > 0 && matches!(f[a - 1], "du" | "de" | "des" | "d'") {
                continue;
            }
            for b in a + 1..=(a + 6).min(f.len()) {
                let span = &f[a..b];
                // A lone number or article is not a moment.
                if span.len() == 1 && (crate::number::natural(span).is_some() || span[0].len() < 3) {
                    continue;
                }
                if moment::moment(span, now).is_some() {
                    return true;
                }
            }
        }
        false
    }
}

struct FoldedLexicon<'a> {
    projects: Vec<(String, &'a str)>,
    lists: Vec<(String, &'a str)>,
    timers: Vec<(String, &'a str)>,
}

/// A name folded for comparison: no article in front, no plural « s » at the end.
fn name_key(s: &str) -> String {
    let f = fold(s);
    let mut words: Vec<&str> = f.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).collect();
    while words.len() > 1
        && matches!(
            words[0],
            "le" | "la"
                | "les"
                | "l'"
                | "mon"
                | "ma"
                | "mes"
                | "du"
                | "de"
                | "des"
                | "d'"
                | "au"
                | "aux"
                | "projet"
                | "liste"
        )
    {
        words.remove(0);
    }
    words
        .iter()
        .map(|w| w.trim_start_matches("l'").trim_start_matches("d'").trim_end_matches(['s', 'x']))
        .collect::<Vec<_>>()
        .join(" ")
}

impl<'a> FoldedLexicon<'a> {
    fn new(l: &'a Lexicon) -> Self {
        let key = |v: &'a [String]| v.iter().map(|n| (name_key(n), n.as_str())).collect();
        Self { projects: key(&l.projects), lists: key(&l.lists), timers: key(&l.timers) }
    }

    fn find(&self, kind: SlotKind, said: &str) -> Option<&'a str> {
        let names = match kind {
            SlotKind::Project | SlotKind::KnownProject => &self.projects,
            SlotKind::List | SlotKind::KnownList => &self.lists,
            SlotKind::Timer | SlotKind::KnownTimer => &self.timers,
            _ => return None,
        };
        let k = name_key(said);
        names.iter().find(|(n, _)| *n == k).map(|(_, orig)| *orig)
    }
}

struct Capture {
    name: String,
    kind: SlotKind,
    value: SlotValue,
    len: usize,
}

struct Search<'g, 'w> {
    grammar: &'g Grammar,
    words: &'w Words,
    folded: &'w [&'w str],
    now: NaiveDateTime,
    lex: &'w FoldedLexicon<'w>,
    caps: Vec<Capture>,
    fuzzy: usize,
    misheard: usize,
    steps: usize,
    found: Vec<(Vec<Capture>, usize, usize)>,
}

impl Clone for Capture {
    fn clone(&self) -> Self {
        Self { name: self.name.clone(), kind: self.kind, value: self.value.clone(), len: self.len }
    }
}

/// « que tu effaces », « tu notes »: a verb of the templates with the « s » of the second
/// person (or without it) is the same verb.
fn inflected(literal: &str, said: &str) -> bool {
    literal.len() >= 5 && literal.ends_with('e') && said.strip_suffix('s').is_some_and(|s| s == literal)
}

/// Words that never start or end a free text: they belong to the sentence around it.
fn bad_edge(w: &str) -> bool {
    matches!(
        w,
        "et" | "ou"
            | "a"
            | "de"
            | "d'"
            | "que"
            | "qu'"
            | "pour"
            | "le"
            | "la"
            | "les"
            | "l'"
            | "du"
            | "des"
            | "dans"
            | "sur"
            | "au"
            | "aux"
    )
}

/// Words that never start a free text.
fn bad_start(w: &str) -> bool {
    matches!(w, "et" | "ou")
}

impl Search<'_, '_> {
    /// Walks the nodes on the stack from word `pos`; every way to the end of both is kept.
    fn walk(&mut self, stack: &mut Vec<&[Node]>, pos: usize) {
        self.steps += 1;
        if self.steps > STEP_BUDGET {
            return;
        }
        let Some(top) = stack.pop() else {
            if pos == self.folded.len() {
                self.found.push((self.caps.clone(), self.fuzzy, self.misheard));
            }
            return;
        };
        if top.is_empty() {
            self.walk(stack, pos);
            stack.push(top);
            return;
        }
        let (node, rest) = (&top[0], &top[1..]);
        stack.push(rest);
        match node {
            Node::Word(w) => {
                if let Some(said) = self.folded.get(pos) {
                    if said == w || inflected(w, said) {
                        self.walk(stack, pos + 1);
                    } else if self.grammar.fuzzy_eq(w, said) {
                        self.fuzzy += 1;
                        self.walk(stack, pos + 1);
                        self.fuzzy -= 1;
                    }
                }
            }
            Node::Misheard(w) => {
                if self.folded.get(pos).is_some_and(|said| said == w) {
                    self.misheard += 1;
                    self.walk(stack, pos + 1);
                    self.misheard -= 1;
                }
            }
            Node::Alt(branches) => {
                for b in branches {
                    stack.push(b);
                    self.walk(stack, pos);
                    stack.pop();
                }
            }
            Node::Opt(inner) => {
                self.walk(stack, pos);
                stack.push(inner);
                self.walk(stack, pos);
                stack.pop();
            }
            Node::Slot { name, kind } => {
                let max = (pos + kind.max_words()).min(self.folded.len());
                for end in pos + 1..=max {
                    if let Some(value) = self.slot(*kind, pos, end) {
                        self.caps.push(Capture { name: name.clone(), kind: *kind, value, len: end - pos });
                        self.walk(stack, end);
                        self.caps.pop();
                    }
                }
            }
        }
        stack.pop();
        stack.push(top);
    }

    fn slot(&self, kind: SlotKind, a: usize, b: usize) -> Option<SlotValue> {
        let span = &self.folded[a..b];
        match kind {
            SlotKind::Text | SlotKind::ShortName => {
                if bad_start(span[0]) || bad_edge(span[span.len() - 1]) {
                    return None;
                }
                // A name is read as a name; a free text is kept as said.
                let text = if kind == SlotKind::Text {
                    self.words.said_between(a, b)
                } else {
                    self.words.original_between(a, b)
                };
                (!text.is_empty()).then_some(SlotValue::Text(text))
            }
            SlotKind::Project
            | SlotKind::List
            | SlotKind::Timer
            | SlotKind::KnownProject
            | SlotKind::KnownList
            | SlotKind::KnownTimer => {
                let said = self.words.original_between(a, b);
                match self.lex.find(kind, &said) {
                    Some(known) => Some(SlotValue::Known(known.to_string())),
                    None if matches!(kind, SlotKind::KnownProject | SlotKind::KnownList | SlotKind::KnownTimer) => None,
                    None => {
                        // A new name is short and made of words (« vacances », « noël »).
                        let article = matches!(
                            span[0],
                            "le" | "la" | "les" | "l'" | "mes" | "mon" | "ma" | "des" | "du" | "de" | "d'"
                        );
                        // « le projet », « la liste »: the kind of thing, not its name.
                        let kind_word = |w: &str| {
                            matches!(
                                w,
                                "le" | "la"
                                    | "les"
                                    | "l'"
                                    | "mon"
                                    | "ma"
                                    | "mes"
                                    | "ce"
                                    | "cette"
                                    | "projet"
                                    | "liste"
                                    | "minuteur"
                            )
                        };
                        if span.iter().all(|w| kind_word(w)) {
                            return None;
                        }
                        let inside = &self.words.original[self.words.words[a].start..self.words.words[b - 1].end];
                        if span.len() - usize::from(article) > 2
                            || inside.contains([':', ',', ';', '?', '!', '.'])
                            || bad_edge(span[span.len() - 1])
                            || span
                                .iter()
                                .any(|w| crate::number::digits(w).is_some() || crate::number::is_number_word(w))
                        {
                            return None;
                        }
                        Some(SlotValue::Unknown(said))
                    }
                }
            }
            SlotKind::Moment => moment::moment(span, self.now).map(SlotValue::Moment),
            SlotKind::Day => moment::day(span).map(SlotValue::Day),
            SlotKind::Range => moment::range(span).map(SlotValue::Range),
            SlotKind::Duration => crate::duration::seconds(span).map(SlotValue::Seconds),
            SlotKind::Number => crate::number::natural(span).map(SlotValue::Number),
            SlotKind::Recurrence => crate::recurrence::recurrence(span).map(SlotValue::Recurrence),
        }
    }
}

/// Compiles one template into nodes, rules inlined.
fn compile(src: &str, rules: &BTreeMap<String, String>, depth: usize) -> Result<Vec<Node>, String> {
    if depth > 8 {
        return Err("rules nest too deep (a rule that names itself?)".into());
    }
    let chars: Vec<char> = src.chars().collect();
    let mut pos = 0;
    let alts = parse_alts(&chars, &mut pos, rules, depth, None)?;
    if pos != chars.len() {
        return Err(format!("unexpected {:?} at {pos}", chars[pos]));
    }
    Ok(if alts.len() == 1 { alts.into_iter().next().unwrap_or_default() } else { vec![Node::Alt(alts)] })
}

fn parse_alts(
    chars: &[char],
    pos: &mut usize,
    rules: &BTreeMap<String, String>,
    depth: usize,
    close: Option<char>,
) -> Result<Vec<Vec<Node>>, String> {
    let mut alts = vec![Vec::new()];
    let mut word = String::new();
    let flush = |word: &mut String, seq: &mut Vec<Node>| {
        if word.contains('~') {
            for token in word.split_whitespace() {
                match token.strip_prefix('~') {
                    Some(heard) => seq.push(Node::Misheard(fold(heard))),
                    None => seq.extend(Words::split_only(token).words.into_iter().map(|w| Node::Word(w.folded))),
                }
            }
        } else if !word.trim().is_empty() {
            for w in Words::split_only(word).words {
                seq.push(Node::Word(w.folded));
            }
        }
        word.clear();
    };
    while *pos < chars.len() {
        let c = chars[*pos];
        match c {
            '(' | '[' => {
                flush(&mut word, alts.last_mut().unwrap_or(&mut Vec::new()));
                *pos += 1;
                let inner = parse_alts(chars, pos, rules, depth, Some(if c == '(' { ')' } else { ']' }))?;
                let node = if c == '(' {
                    Node::Alt(inner)
                } else if inner.len() == 1 {
                    Node::Opt(inner.into_iter().next().unwrap_or_default())
                } else {
                    Node::Opt(vec![Node::Alt(inner)])
                };
                if let Some(seq) = alts.last_mut() {
                    seq.push(node);
                }
            }
            ')' | ']' => {
                if close != Some(c) {
                    return Err(format!("unbalanced {c:?}"));
                }
                flush(&mut word, alts.last_mut().unwrap_or(&mut Vec::new()));
                *pos += 1;
                return Ok(alts);
            }
            '|' => {
                flush(&mut word, alts.last_mut().unwrap_or(&mut Vec::new()));
                alts.push(Vec::new());
                *pos += 1;
            }
            '{' | '<' => {
                flush(&mut word, alts.last_mut().unwrap_or(&mut Vec::new()));
                let end = if c == '{' { '}' } else { '>' };
                let close_at = chars[*pos..].iter().position(|x| *x == end).ok_or(format!("no closing {end:?}"))?;
                let inner: String = chars[*pos + 1..*pos + close_at].iter().collect();
                *pos += close_at + 1;
                let seq = alts.last_mut().ok_or("empty")?;
                if c == '{' {
                    let (name, kind) = inner.split_once(':').unwrap_or((&inner, &inner));
                    let kind = SlotKind::parse(kind.trim()).ok_or(format!("unknown slot type in {{{inner}}}"))?;
                    seq.push(Node::Slot { name: name.trim().to_string(), kind });
                } else {
                    let rule = rules.get(inner.trim()).ok_or(format!("unknown rule <{inner}>"))?;
                    let nodes = compile(rule, rules, depth + 1)?;
                    seq.extend(nodes);
                }
            }
            c => {
                word.push(c);
                *pos += 1;
            }
        }
    }
    if close.is_some() {
        return Err("unclosed group".into());
    }
    flush(&mut word, alts.last_mut().unwrap_or(&mut Vec::new()));
    Ok(alts)
}

fn collect_words(nodes: &[Node], out: &mut HashSet<String>, misheard: &mut HashSet<String>) {
    for n in nodes {
        match n {
            Node::Word(w) => {
                out.insert(w.clone());
            }
            Node::Misheard(w) => {
                misheard.insert(w.clone());
            }
            Node::Alt(bs) => bs.iter().for_each(|b| collect_words(b, out, misheard)),
            Node::Opt(inner) => collect_words(inner, out, misheard),
            Node::Slot { .. } => {}
        }
    }
}

/// For each word position that every path goes through, the words that may stand there.
fn required_words(nodes: &[Node]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for n in nodes {
        match n {
            Node::Word(w) => out.push(vec![w.clone()]),
            Node::Alt(bs) => {
                // Required only when every branch starts with a word.
                let firsts: Option<Vec<String>> = bs
                    .iter()
                    .map(|b| match b.first() {
                        Some(Node::Word(w)) => Some(w.clone()),
                        _ => None,
                    })
                    .collect();
                if let Some(f) = firsts {
                    out.push(f);
                }
            }
            Node::Opt(_) | Node::Slot { .. } | Node::Misheard(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn now() -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 11, 30).unwrap().and_hms_opt(10, 0, 0).unwrap()
    }

    const DATA: &str = r#"
        [rules]
        moi = "(moi|nous)"
        [[intent]]
        name = "creer_rappel"
        sentences = ["rappelle <moi> [de|d'] {texte} {echeance:quand}", "rappelle <moi> {echeance:quand} [de|d'] {texte}"]
        [[intent]]
        name = "lire_liste"
        sentences = ["(lis|montre) [moi] la liste [de|des|d'] {liste}"]
    "#;

    #[test]
    fn the_whole_utterance_and_the_fewest_free_words() {
        let g = Grammar::from_toml(DATA).unwrap();
        let m = g.best(&Words::new("Rappelle-moi d'appeler Luc hier à 10 h"), now(), &Lexicon::default()).unwrap();
        assert_eq!(m.text("texte"), Some("appeler Luc"));
        let SlotValue::Moment(at) = m.slots["echeance"] else { panic!() };
        assert_eq!(at.issue, Some(moment::MomentIssue::Past));
        assert!(g
            .best(&Words::new("ne me rappelle pas d'appeler Luc demain à 10 h"), now(), &Lexicon::default())
            .is_none());
        let w = Words::new("rapelle moi demain à 9 h de sortir");
        let m = g.best(&w, now(), &Lexicon::default()).unwrap();
        assert_eq!((m.fuzzy, m.text("texte")), (1, Some("sortir")));
    }

    #[test]
    fn names_come_from_the_lexicon() {
        let g = Grammar::from_toml(DATA).unwrap();
        let lex = Lexicon { lists: vec!["courses".into(), "tâches".into()], ..Default::default() };
        let m = g.best(&Words::new("lis-moi la liste des tâches"), now(), &lex).unwrap();
        assert_eq!(m.slots["liste"], SlotValue::Known("tâches".into()));
        let m = g.best(&Words::new("lis la liste de vacances"), now(), &lex).unwrap();
        assert_eq!(m.slots["liste"], SlotValue::Unknown("vacances".into()));
    }

    #[test]
    fn the_shipped_templates_compile() {
        let g = Grammar::french();
        assert!(g.intents().count() > 30);
    }

    #[test]
    fn bad_templates_are_errors() {
        assert!(Grammar::from_toml("[[intent]]\nname='x'\nsentences=['(a|b']").is_err());
        assert!(Grammar::from_toml("[[intent]]\nname='x'\nsentences=['{a:inconnu}']").is_err());
        assert!(Grammar::from_toml("[[intent]]\nname='x'\nsentences=['<nulle>']").is_err());
    }

    #[test]
    fn a_moment_inside_a_text_is_seen() {
        assert!(Grammar::mentions_moment("appeler Luc hier", now()));
        assert!(Grammar::mentions_moment("la banque dans -3 heures", now()));
        assert!(!Grammar::mentions_moment("acheter le journal du dimanche", now()));
        assert!(!Grammar::mentions_moment("appeler la banque", now()));
    }
}
