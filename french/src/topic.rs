//! Whether a request is about the user's own memory, read on the request's words before any
//! model answers (issue 38): their notes, reminders and agenda, work time, projects and
//! phases, decisions, preferences, souvenirs, lists and timers, and the people and things of
//! their life that only the memory can know. The cues are data (`templates/memory.toml`);
//! this module says which one decided, what the request is about (« ta nièce ») and which
//! words a search should use. It knows nothing of tools: the agents turn a topic into reads.

use std::sync::OnceLock;

use chrono::NaiveDateTime;
use serde::Deserialize;

use crate::grammar::Lexicon;
use crate::words::Words;

/// The memory's kinds, as a request names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    Note,
    Rappel,
    Projet,
    Decision,
    Preference,
    Souvenir,
    Liste,
    Minuteur,
    Travail,
}

/// Which cue decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cue {
    /// « tu te souviens », « je t'avais dit », « on avait décidé ».
    Recall,
    /// « … déjà ? » at the end of a question.
    RecallTail,
    /// « j'ai quelque chose samedi ? », « je suis libre jeudi ? ».
    Agenda,
    /// « j'ai bossé combien ? ».
    Work,
    /// A name the store knows (a project, a list, a timer) in a question.
    KnownName,
    /// A memory noun that is the user's or a definite one (« mes notes », « le minuteur »).
    Noun,
    /// A value of the user's things or people (« c'est quoi mon code », « le prénom de ma
    /// nièce »).
    Value,
    /// A person of the user's life, put in front (« Olivier, il habite où ? »).
    Person,
}

impl Cue {
    pub fn as_str(self) -> &'static str {
        match self {
            Cue::Recall => "recall",
            Cue::RecallTail => "recall_tail",
            Cue::Agenda => "agenda",
            Cue::Work => "work",
            Cue::KnownName => "known_name",
            Cue::Noun => "noun",
            Cue::Value => "value",
            Cue::Person => "person",
        }
    }
}

/// A request about the user's memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Topic {
    pub cue: Cue,
    /// The kinds the request names, first named first (empty: the memory at large).
    pub kinds: Vec<MemoryKind>,
    /// What it is about, said to the user (« ta nièce », « le rendez-vous chez le
    /// dentiste »), when the request names it.
    pub subject: Option<String>,
    /// Words to search the notes and the memory with (as said).
    pub keywords: Vec<String>,
    /// Names of the store the request holds (a project, a list, a timer), as the store
    /// spells them.
    pub names: Vec<(MemoryKind, String)>,
    /// The words that decided, for the trace.
    pub evidence: String,
}

/// A phrase: for each word, its alternatives (folded).
type Phrase = Vec<Vec<String>>;

#[derive(Deserialize)]
struct Raw {
    recall: Vec<String>,
    recall_tail: Vec<String>,
    agenda: Vec<String>,
    agenda_dated: Vec<String>,
    moments: Vec<String>,
    whereabouts: Vec<String>,
    status: Vec<String>,
    timer_left: Vec<String>,
    private: Vec<String>,
    work: Vec<String>,
    work_verbs: Vec<String>,
    nouns: std::collections::BTreeMap<String, Vec<String>>,
    determiners: RawDeterminers,
    value: RawValue,
    advice: RawAdvice,
    strong: RawStrong,
}

#[derive(Deserialize)]
struct RawDeterminers {
    mine: Vec<String>,
    definite: Vec<String>,
    other: Vec<String>,
}

#[derive(Deserialize)]
struct RawValue {
    questions: Vec<String>,
    attributes: Vec<String>,
}

#[derive(Deserialize)]
struct RawAdvice {
    phrases: Vec<String>,
}

#[derive(Deserialize)]
struct RawStrong {
    nouns: Vec<String>,
}

struct Data {
    recall: Vec<Phrase>,
    recall_tail: Vec<Phrase>,
    agenda: Vec<Phrase>,
    agenda_dated: Vec<Phrase>,
    moments: Vec<Phrase>,
    whereabouts: Vec<Phrase>,
    status: Vec<Phrase>,
    timer_left: Vec<Phrase>,
    private: Vec<Phrase>,
    work: Vec<Phrase>,
    work_verbs: Vec<String>,
    nouns: Vec<(MemoryKind, Phrase)>,
    mine: Vec<String>,
    definite: Vec<String>,
    other: Vec<String>,
    value_questions: Vec<Phrase>,
    attributes: Vec<Phrase>,
    advice: Vec<Phrase>,
    strong: Vec<String>,
}

fn phrase(text: &str) -> Phrase {
    // Alternatives are cut before folding, so « t' » and « tu » stay two words.
    text.split_whitespace()
        .map(|w| w.split('|').map(|alt| Words::split_only(alt).folded_text().replace("' ", "'")).collect())
        .collect::<Vec<Vec<String>>>()
        .into_iter()
        .flat_map(|alts: Vec<String>| {
            // « rendez vous » written as one alternative is two words: keep one per word.
            let split: Vec<Vec<String>> =
                if alts.len() == 1 { alts[0].split(' ').map(|w| vec![w.to_string()]).collect() } else { vec![alts] };
            split
        })
        .collect()
}

fn kind_named(name: &str) -> Option<MemoryKind> {
    Some(match name {
        "note" => MemoryKind::Note,
        "rappel" => MemoryKind::Rappel,
        "projet" => MemoryKind::Projet,
        "decision" => MemoryKind::Decision,
        "preference" => MemoryKind::Preference,
        "souvenir" => MemoryKind::Souvenir,
        "liste" => MemoryKind::Liste,
        "minuteur" => MemoryKind::Minuteur,
        "travail" => MemoryKind::Travail,
        _ => return None,
    })
}

fn data() -> &'static Data {
    static DATA: OnceLock<Data> = OnceLock::new();
    DATA.get_or_init(|| {
        let raw: Raw = toml::from_str(include_str!("../templates/memory.toml")).expect("templates/memory.toml parses");
        let all = |v: &[String]| v.iter().map(|p| phrase(p)).collect::<Vec<_>>();
        let mut nouns = Vec::new();
        for (kind, list) in &raw.nouns {
            let k = kind_named(kind).unwrap_or_else(|| panic!("templates/memory.toml: unknown kind {kind}"));
            nouns.extend(list.iter().map(|n| (k, phrase(n))));
        }
        // Longest first: « compte a rebours » before « compte ».
        nouns.sort_by_key(|(_, p)| std::cmp::Reverse(p.len()));
        let folded = |v: &[String]| v.iter().map(|w| crate::fold::fold(w)).collect::<Vec<_>>();
        Data {
            recall: all(&raw.recall),
            recall_tail: all(&raw.recall_tail),
            agenda: all(&raw.agenda),
            agenda_dated: all(&raw.agenda_dated),
            moments: all(&raw.moments),
            whereabouts: all(&raw.whereabouts),
            status: all(&raw.status),
            timer_left: all(&raw.timer_left),
            private: all(&raw.private),
            work: all(&raw.work),
            work_verbs: folded(&raw.work_verbs),
            nouns,
            mine: folded(&raw.determiners.mine),
            definite: folded(&raw.determiners.definite),
            other: folded(&raw.determiners.other),
            value_questions: all(&raw.value.questions),
            attributes: all(&raw.value.attributes),
            advice: all(&raw.advice.phrases),
            strong: folded(&raw.strong.nouns),
        }
    })
}

/// Where a phrase starts in the folded words, if it occurs.
fn find(f: &[&str], p: &Phrase) -> Option<usize> {
    if p.is_empty() || p.len() > f.len() {
        return None;
    }
    (0..=f.len() - p.len()).find(|&i| p.iter().enumerate().all(|(k, alts)| alts.iter().any(|a| a == f[i + k])))
}

fn first_of<'a>(f: &[&str], phrases: &'a [Phrase]) -> Option<(usize, &'a Phrase)> {
    phrases.iter().filter_map(|p| find(f, p).map(|i| (i, p))).min_by_key(|(i, p)| (*i, std::cmp::Reverse(p.len())))
}

const INTERROGATIVES: [&str; 20] = [
    "quoi",
    "quand",
    "combien",
    "comment",
    "qui",
    "quel",
    "quelle",
    "quels",
    "quelles",
    "lequel",
    "laquelle",
    "lesquels",
    "lesquelles",
    "pourquoi",
    "what",
    "when",
    "where",
    "who",
    "which",
    "how",
];
/// Verbs that ask Arthur to read something out (« lis-moi », « montre-moi », « redis-moi »).
const READ_VERBS: [&str; 21] = [
    "dis",
    "lis",
    "relis",
    "montre",
    "donne",
    "affiche",
    "redis",
    "resume",
    "rappelle",
    "liste",
    "enumere",
    "cite",
    "retrouve",
    "sors",
    "ressors",
    "recapitule",
    "raconte",
    "tell",
    "show",
    "read",
    "remind",
];

const READ_INFINITIVES: [&str; 12] = [
    "dire",
    "redire",
    "lire",
    "relire",
    "montrer",
    "donner",
    "rappeler",
    "afficher",
    "resumer",
    "citer",
    "retrouver",
    "trouver",
];

/// Words that say nothing of what a request is about.
const STOP: [&str; 96] = [
    "le", "la", "les", "l'", "un", "une", "des", "du", "de", "d'", "au", "aux", "a", "et", "ou", "en", "sur", "pour",
    "avec", "dans", "par", "chez", "que", "qu'", "qui", "quoi", "quand", "comment", "combien", "quel", "quelle",
    "quels", "quelles", "est", "c'", "ce", "cet", "cette", "ces", "il", "elle", "ils", "elles", "on", "je", "j'", "tu",
    "t'", "te", "me", "m'", "moi", "toi", "se", "s'", "ne", "n'", "pas", "plus", "deja", "y", "a", "ai", "as", "avais",
    "avait", "etait", "sont", "mon", "ma", "mes", "ton", "ta", "tes", "notre", "nos", "son", "sa", "ses", "leur",
    "bien", "encore", "alors", "dis", "donc", "ca", "cela", "quelque", "chose", "truc", "trucs", "hein", "non", "oui",
    "si", "fait",
];

/// Is the request a question, or a request to read something out?
fn asks(words: &Words, f: &[&str]) -> bool {
    // An interrogative word opens or closes the request (« combien j'ai bossé », « j'ai
    // bossé combien »); inside a statement « qui » and « quand » are relatives
    // (« un rendez-vous qui m'angoisse »).
    let edge = |w: Option<&&str>| w.is_some_and(|w| INTERROGATIVES.contains(w));
    let anywhere = |w: &&str| INTERROGATIVES.contains(w) && !matches!(*w, "qui" | "quand" | "comment");
    if words.question || edge(f.first()) || edge(f.last()) || f.iter().any(anywhere) {
        return true;
    }
    if f.windows(3).any(|w| w[0] == "c'" && matches!(w[1], "est" | "etait") && INTERROGATIVES.contains(&w[2])) {
        return true;
    }
    // « où » folds to « ou » (or): read it on the original.
    if words.words.iter().any(|w| words.original[w.start..w.end].to_lowercase() == "où") {
        return true;
    }
    // « ai-je », « as-tu », « suis-je »: an inverted subject.
    let inverted = ["-je", "-tu", "-il", "-elle", "-t-il", "-t-elle", "-on"];
    let lower = words.original.to_lowercase();
    if inverted.iter().any(|s| lower.contains(&format!("{s} ")) || lower.trim_end_matches(['?', ' ', '.']).ends_with(s))
    {
        return true;
    }
    if f.starts_with(&["est", "ce", "que"]) || f.starts_with(&["est", "ce", "qu'"]) {
        return true;
    }
    // Indirect questions: « je me demandais si… », « tu sais si… », « dis-moi si… ».
    let indirect: [&[&str]; 11] = [
        &["voudrais", "savoir"],
        &["aimerais", "savoir"],
        &["veux", "savoir"],
        &["je", "me", "demandais"],
        &["je", "me", "demande"],
        &["tu", "sais", "si"],
        &["dis", "moi", "si"],
        &["sais", "tu", "si"],
        &["sais", "plus", "si"],
        &["sais", "pas", "si"],
        &["confirme", "moi"],
    ];
    if indirect.iter().any(|p| f.windows(p.len()).any(|w| w == *p)) {
        return true;
    }
    // « fais-moi le récap de… », « fais-moi un point sur… »: a read.
    if f.windows(4).any(|w| {
        w[0] == "fais" && w[1] == "moi" && matches!(w[3], "recap" | "point" | "topo" | "resume" | "bilan" | "etat")
    }) {
        return true;
    }
    // « tu peux me dire… » arrives without its polite head: « me dire… ».
    let lead = usize::from(matches!(f.first(), Some(&("me" | "m'"))));
    words.polite && lead == 1
        || f.get(lead).is_some_and(|w| READ_VERBS.contains(w) || READ_INFINITIVES.contains(w))
        || f.windows(3).any(|w| w[0] == "tu" && (w[1] == "me" || w[1] == "m'") && READ_VERBS.contains(&w[2]))
        || f.windows(4).any(|w| w[0] == "tu" && w[1] == "peux" && (w[2] == "me" || w[2] == "m'"))
}

/// A memory noun at `i` (its kind and length), if one starts there.
fn noun_at(f: &[&str], i: usize) -> Option<(MemoryKind, usize)> {
    data().nouns.iter().find_map(|(k, p)| {
        (i + p.len() <= f.len() && p.iter().enumerate().all(|(j, alts)| alts.iter().any(|a| a == f[i + j])))
            .then_some((*k, p.len()))
    })
}

/// The determiner before the noun at `i`, past one adjective (« ma dernière note »).
fn determiner_before<'a>(f: &[&'a str], i: usize) -> Option<&'a str> {
    let d = data();
    let is_det =
        |w: &str| d.mine.iter().any(|m| m == w) || d.definite.iter().any(|m| m == w) || d.other.iter().any(|m| m == w);
    match i {
        0 => None,
        _ if is_det(f[i - 1]) => Some(f[i - 1]),
        _ if i >= 2 && is_det(f[i - 2]) => Some(f[i - 2]),
        _ => None,
    }
}

/// The user's possessive said back to them: « ma nièce » → « ta nièce ».
fn second_person(word: &str) -> Option<&'static str> {
    Some(match crate::fold::fold(word).as_str() {
        "mon" => "ton",
        "ma" => "ta",
        "mes" => "tes",
        "notre" => "votre",
        "nos" => "vos",
        "my" | "our" => "your",
        _ => return None,
    })
}

/// Where a noun phrase stops: at punctuation in the original, or at a word that starts
/// something else (a verb, a question, « déjà »).
fn phrase_end(words: &Words, f: &[&str], from: usize, max: usize) -> usize {
    const ENDS: [&str; 30] = [
        "c'",
        "est",
        "etait",
        "deja",
        "il",
        "elle",
        "ils",
        "elles",
        "quoi",
        "quand",
        "comment",
        "combien",
        "qui",
        "quel",
        "quelle",
        "tu",
        "t'",
        "je",
        "j'",
        "ou",
        "encore",
        "dessus",
        "la",
        "hein",
        "non",
        "maintenant",
        "s'",
        "a",
        "que",
        "qu'",
    ];
    let mut end = from + 1;
    while end < f.len() && end < from + max {
        let between = &words.original[words.words[end - 1].end..words.words[end].start];
        if between.contains([',', '?', '!', '.', ';', ':']) || ENDS.contains(&f[end]) {
            break;
        }
        // « de ma nièce » goes on; « de » at the end does not.
        end += 1;
    }
    while end > from + 1
        && matches!(
            f[end - 1],
            "de" | "d'"
                | "du"
                | "des"
                | "a"
                | "au"
                | "le"
                | "la"
                | "les"
                | "l'"
                | "pour"
                | "avec"
                | "sur"
                | "dans"
                | "en"
                | "par"
        )
    {
        end -= 1;
    }
    end
}

/// The original words `a..b`, as said.
fn said(words: &Words, a: usize, b: usize) -> String {
    words.original[words.words[a].start..words.words[b - 1].end].to_string()
}

/// The subject of the request, said to the user: the first thing of theirs (« ma
/// nièce » → « ta nièce »), else the first memory noun named with its complement (« le
/// rendez-vous chez le dentiste »), else a name.
fn subject(words: &Words, f: &[&str]) -> Option<(String, usize, usize)> {
    let d = data();
    if let Some(i) = f.iter().position(|w| d.mine.iter().any(|m| m == w)) {
        if i + 1 < f.len() {
            let end = phrase_end(words, f, i + 1, 4);
            let own = second_person(f[i]).unwrap_or("ton");
            return Some((format!("{own} {}", said(words, i + 1, end)), i + 1, end));
        }
    }
    for i in 0..f.len() {
        if let Some((_, n)) = noun_at(f, i) {
            let det = determiner_before(f, i).filter(|x| d.definite.iter().any(|m| m == x));
            if let Some(det) = det {
                let start = f[..i].iter().rposition(|w| *w == det).unwrap_or(i);
                let end = phrase_end(words, f, i + n - 1, 5);
                return Some((said(words, start, end), start, end));
            }
        }
    }
    // A name (a capital letter not at the start of the sentence, or put in front).
    let capital = |k: usize| words.original[words.words[k].start..].chars().next().is_some_and(char::is_uppercase);
    (0..f.len()).find(|&k| capital(k) && (k > 0 || f.len() > 1) && !STOP.contains(&f[k])).map(|k| {
        let mut end = k + 1;
        while end < f.len() && capital(end) {
            end += 1;
        }
        (said(words, k, end), k, end)
    })
}

/// The content words of `a..b` (as said), to search with: what the request is about
/// (« nièce »), before what it asks of it (« prénom »), which is kept only when alone.
fn content(words: &Words, f: &[&str], a: usize, b: usize) -> Vec<String> {
    let d = data();
    let all: Vec<usize> =
        (a..b).filter(|&k| !STOP.contains(&f[k]) && f[k].chars().count() > 2 && noun_at(f, k).is_none()).collect();
    let attribute = |k: &usize| d.attributes.iter().any(|p| p.len() == 1 && p[0].iter().any(|x| x == f[*k]));
    let about: Vec<usize> = all.iter().copied().filter(|k| !attribute(k)).collect();
    let chosen = if about.is_empty() { all } else { about };
    chosen.into_iter().map(|k| words.original[words.words[k].start..words.words[k].end].to_string()).collect()
}

/// The store's names the request holds.
fn names(f: &[&str], lexicon: &Lexicon) -> Vec<(MemoryKind, String)> {
    let mut out = Vec::new();
    let mut look = |kind: MemoryKind, list: &[String]| {
        for name in list {
            let p: Vec<String> = Words::split_only(name).folded().iter().map(|w| w.to_string()).collect();
            if p.is_empty() {
                continue;
            }
            let phrase: Phrase = p.into_iter().map(|w| vec![w]).collect();
            if find(f, &phrase).is_some() {
                out.push((kind, name.clone()));
            }
        }
    };
    look(MemoryKind::Projet, &lexicon.projects);
    look(MemoryKind::Minuteur, &lexicon.timers);
    look(MemoryKind::Liste, &lexicon.lists);
    out
}

/// Is this request about the user's own memory? `None` for anything else: a command the
/// grammar reads is the grammar's; knowledge, advice and conversation are the model's.
pub fn topic(words: &Words, now: NaiveDateTime, lexicon: &Lexicon) -> Option<Topic> {
    let d = data();
    let f = words.folded();
    if f.is_empty() {
        return None;
    }
    let asking = asks(words, &f);
    // « … déjà ? »: the last words of the request, before its question mark.
    let tail = d.recall_tail.iter().find(|p| f.len() > p.len() && find(&f[f.len() - p.len()..], p) == Some(0));
    let names = names(&f, lexicon);
    let mut kinds: Vec<MemoryKind> = Vec::new();
    let push = |k: MemoryKind, kinds: &mut Vec<MemoryKind>| {
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    };
    for i in 0..f.len() {
        if let Some((k, _)) = noun_at(&f, i) {
            push(k, &mut kinds);
        }
    }
    // The kinds named by a noun; a name's kind is added only once the name counts.
    let noun_kinds = kinds.clone();
    for (k, _) in &names {
        push(*k, &mut kinds);
    }
    let decided = |cue: Cue, evidence: String, kinds: Vec<MemoryKind>| {
        let subject = subject(words, &f);
        let mut keywords = match &subject {
            Some((_, a, b)) => content(words, &f, *a, *b),
            None => Vec::new(),
        };
        if keywords.is_empty() {
            keywords = content(words, &f, 0, f.len());
        }
        keywords.truncate(4);
        Some(Topic { cue, kinds, subject: subject.map(|s| s.0), keywords, names: names.clone(), evidence })
    };
    let show = |p: &Phrase| p.iter().map(|alts| alts[0].as_str()).collect::<Vec<_>>().join(" ");

    let recall = first_of(&f, &d.recall).map(|(_, p)| show(p));
    if let Some(ev) = recall {
        if asking || tail.is_some() {
            return decided(Cue::Recall, ev, kinds);
        }
    }
    // « … déjà ? » about the user's life: a person, a moment, a place, the user's own
    // things; « c'est quoi la formule de l'aire d'un cercle déjà ? » is knowledge.
    if let Some(p) = tail {
        let personal = f.iter().any(|w| {
            matches!(*w, "je" | "j'" | "tu" | "t'" | "on" | "nous" | "m'" | "me" | "quand" | "qui" | "ou")
                || d.mine.iter().any(|m| m == w)
        }) || words.words.iter().any(|w| words.original[w.start..w.end].to_lowercase() == "où")
            || kinds_named(&f);
        let who_when_where = first_of(&f, &d.value_questions).is_some_and(|(_, q)| {
            !matches!(
                show(q).as_str(),
                "c' est quoi" | "c' etait quoi" | "quel est" | "quelle est" | "quels sont" | "quelles sont"
            )
        });
        if personal || who_when_where {
            return decided(Cue::RecallTail, show(p), kinds);
        }
    }
    if !asking && !bare_noun_phrase(&f) {
        return None;
    }
    if let Some((_, p)) = first_of(&f, &d.whereabouts) {
        return decided(Cue::Value, show(p), kinds);
    }
    let work_question = f.iter().any(|w| d.work_verbs.iter().any(|v| v == w))
        && (f.contains(&"combien") || f.windows(2).any(|w| w == ["depuis", "quand"]));
    let work = first_of(&f, &d.work).map(|(_, p)| show(p)).or(work_question.then(|| "combien".to_string()));
    if let Some(ev) = work.filter(|_| !how_to(&f)) {
        let mut k = kinds.clone();
        k.insert(0, MemoryKind::Travail);
        k.dedup();
        return decided(Cue::Work, ev, k);
    }
    // « je fais quoi demain ? »: the agenda, though « je fais quoi » alone asks advice.
    let dated = || first_of(&f, &d.moments).is_some() || crate::Grammar::mentions_moment(&words.original, now);
    if let Some((_, p)) = first_of(&f, &d.agenda_dated).filter(|_| dated()) {
        let advice = first_of(&f, &d.advice).filter(|(_, a)| show(a) != "je fais quoi" && show(a) != "j' en fais quoi");
        if advice.is_none() && !how_to(&f) {
            let mut k = kinds.clone();
            k.insert(0, MemoryKind::Rappel);
            k.dedup();
            return decided(Cue::Agenda, show(p), k);
        }
    }
    // Knowledge and advice, even about the user's own things, are the model's.
    if first_of(&f, &d.advice).is_some() || how_to(&f) {
        return None;
    }
    if let Some((_, p)) = first_of(&f, &d.status) {
        let mut k = kinds.clone();
        if !k.contains(&MemoryKind::Projet) {
            k.insert(0, MemoryKind::Projet);
        }
        return decided(Cue::Noun, show(p), k);
    }
    // A timer asked about, when one runs (the store's timers are in the lexicon).
    if !lexicon.timers.is_empty() {
        let counted_else = f.windows(3).any(|w| {
            w[0] == "combien"
                && matches!(w[1], "de" | "d'")
                && !matches!(w[2], "temps" | "minutes" | "secondes" | "minuteurs")
        });
        if let Some((_, p)) = first_of(&f, &d.timer_left).filter(|_| !counted_else) {
            let mut k = kinds.clone();
            k.retain(|x| *x != MemoryKind::Minuteur);
            k.insert(0, MemoryKind::Minuteur);
            return decided(Cue::Noun, show(p), k);
        }
    }
    let agenda = first_of(&f, &d.agenda).or_else(|| first_of(&f, &d.agenda_dated).filter(|_| dated()));
    if let Some((_, p)) = agenda {
        let mut k = kinds.clone();
        k.insert(0, MemoryKind::Rappel);
        k.dedup();
        return decided(Cue::Agenda, show(p), k);
    }
    if let Some((k, name)) = names.iter().find(|(k, _)| *k == MemoryKind::Projet || noun_kinds.contains(k)) {
        let mut ks = kinds.clone();
        if !ks.contains(k) {
            ks.insert(0, *k);
        }
        return decided(Cue::KnownName, name.clone(), ks);
    }
    // « je dois faire mon rappel de vaccin tous les combien ? »: what the user must do.
    if modal_world(&f) {
        return None;
    }
    let personal = personal(words, &f, &names);
    let dislocated = dislocation(words, &f);
    for i in 0..f.len() {
        if let Some((k, n)) = noun_at(&f, i) {
            // « la Réunion », « Note ça. »: a name, or a verb at the head of a command.
            if capital_at(words, i) && i > 0 {
                continue;
            }
            let strong = d.strong.iter().any(|x| x == f[i]);
            // « le projet potager », « la liste bricolage »: a definite noun and its name.
            let definite = determiner_before(&f, i).is_some_and(|x| d.definite.iter().any(|m| m == x));
            let next =
                |k: usize| f.get(k).is_some_and(|w| !STOP.contains(w) && !matches!(*w, "de" | "d'" | "du" | "des"));
            let named = definite
                && (next(i + n) || matches!(f.get(i + n), Some(&("de" | "des" | "du" | "d'"))) && next(i + n + 1));
            // « C'est quoi la session parlementaire ? »: a definition asked, not the memory.
            let defined = i >= 3 && f[i - 3..i - 1] == ["est", "quoi"]
                || f.starts_with(&["qu'", "est", "ce", "que", "c'", "est"]);
            let named = named && !defined;
            let in_dislocation = dislocated.is_some_and(|(a, b)| (a..b).contains(&i));
            // « y a pas une note sur… ? », « sur la liste ? », « c'était quoi la décision… ? »:
            // a thing looked for in the user's keeping, or recalled.
            let kept = (i >= 2
                && f[i.saturating_sub(4)..i]
                    .windows(2)
                    .any(|w| w == ["y", "a"] || w == ["t'", "as"] || w == ["tu", "as"]))
                || (i >= 2 && matches!(f[i - 2], "sur" | "dans") && definite)
                || (definite && f.contains(&"etait"));
            if !strong && !personal && !named && !in_dislocation && !kept {
                continue;
            }
            let det = determiner_before(&f, i);
            if det.is_some() || i == 0 {
                return decided(
                    Cue::Noun,
                    format!("{} {}", det.unwrap_or(""), f[i..i + n].join(" ")).trim().to_string(),
                    {
                        let mut ks = kinds.clone();
                        ks.retain(|x| *x != k);
                        ks.insert(0, k);
                        ks
                    },
                );
            }
        }
    }
    // A value of the user's own things or people.
    // « quand est-ce que je dois planter… » is not « quand est mon… ».
    let value = d
        .value_questions
        .iter()
        .filter_map(|p| find(&f, p).map(|i| (i, p)))
        .find(|(i, p)| !matches!((f.get(i + p.len()), f.get(i + p.len() + 1)), (Some(&"ce"), Some(&"que" | &"qu'"))))
        .map(|(_, p)| show(p));
    let mine = f.iter().any(|w| d.mine.iter().any(|m| m == w));
    let capital = |k: usize| words.original[words.words[k].start..].chars().next().is_some_and(char::is_uppercase);
    let attribute_of = d.attributes.iter().find_map(|p| {
        let i = find(&f, p)?;
        let after = i + p.len();
        let of = matches!(f.get(after), Some(&"de" | &"d'" | &"du"));
        let whose = (after + 1..(after + 5).min(f.len())).any(|k| d.mine.iter().any(|m| m == f[k]) || capital(k));
        (of && whose).then(|| show(p))
    });
    match (value.clone(), mine, attribute_of) {
        (Some(v), true, _) => return decided(Cue::Value, v, kinds),
        (_, _, Some(a)) => return decided(Cue::Value, a, kinds),
        _ => {}
    }
    // « Olivier, il habite où ? », « le kiné, il s'appelle comment ? »: a person of the
    // user's life, put in front, then asked about.
    let comma =
        (1..f.len().min(6)).find(|&k| words.original[words.words[k - 1].end..words.words[k].start].contains(','));
    // What only the user can know of their own things (« le mot de passe de la tablette »).
    if let Some((_, p)) = first_of(&f, &d.private) {
        return decided(Cue::Value, show(p), kinds);
    }
    // « ça tombe quand, la fête de l'école ? », « le mariage de Gaspard, c'est quel jour ? »:
    // a thing of the user's life put aside, then asked when, who or which.
    let asks_when_who = f.iter().any(|w| matches!(*w, "quand" | "qui" | "lequel" | "laquelle" | "combien"))
        || f.windows(2).any(|w| {
            matches!(w, ["quel", "jour"] | ["quelle", "heure"] | ["quelle", "date"] | ["ce", "samedi"] | ["c'", "est"])
                && w != ["c'", "est"]
        })
        || words.words.iter().any(|w| words.original[w.start..w.end].to_lowercase() == "où");
    if let Some((a, b)) = dislocation(words, &f) {
        let head_is_name = capital_at(words, a) || (a + 1 < b && capital_at(words, a + 1));
        // « C'est quand, la fête des mères ? » is the calendar's: the user's own life shows
        // a name, a possessive or the first person.
        let own = f.iter().any(|w| matches!(*w, "je" | "j'" | "me" | "m'" | "moi") || d.mine.iter().any(|m| m == w));
        if asks_when_who && !head_is_name && own {
            return decided(Cue::Person, said(words, a, b), kinds);
        }
    }
    // « c'est qui déjà, Mathilde ? »: the name after the comma.
    if let Some(k) = comma {
        if f[..k].windows(2).any(|w| w == ["est", "qui"] || w == ["etait", "qui"]) && capital(k) {
            return decided(Cue::Person, said(words, k, (k + 1).min(f.len())), kinds);
        }
    }
    if let Some(k) = comma {
        let person = (k == 1 && capital(0))
            || (k <= 6 && (d.definite.iter().any(|x| x == f[0]) || d.mine.iter().any(|x| x == f[0])) && !capital(1));
        let asked = matches!(f.get(k), Some(&"il" | &"elle" | &"ils" | &"elles" | &"tu" | &"son" | &"sa" | &"ses"))
            || f[k..].starts_with(&["c'", "est", "qui"]);
        if person && asked && value.is_some() {
            return decided(Cue::Person, said(words, 0, k), kinds);
        }
    }
    // « Il habite où, Yannick ? », « Karine, elle est allergique à quoi ? »: a first name of
    // the user's life with « il » or « elle », asked about.
    let named_person = (0..f.len()).any(|k| {
        let cut_before = k == 0 || words.original[words.words[k - 1].end..words.words[k].start].contains(',');
        let cut_after =
            k + 1 >= f.len() || words.original[words.words[k].end..words.words[k + 1].start].contains([',', '?']);
        capital_at(words, k) && cut_before && cut_after && !STOP.contains(&f[k]) && (k > 0 || f.len() > 2)
    });
    let pronoun = f.iter().any(|w| matches!(*w, "il" | "elle" | "ils" | "elles"));
    let interrogative = f.iter().any(|w| INTERROGATIVES.contains(w))
        || words.words.iter().any(|w| words.original[w.start..w.end].to_lowercase() == "où");
    if named_person && pronoun && interrogative && !f.contains(&"pourquoi") {
        return decided(Cue::Person, "prénom".into(), kinds);
    }
    // The user's own past, asked about (« on s'est rencontrés quand ? », « j'ai dépassé mes
    // 35 heures ? », « on les avait posés quand ? »): only the memory holds it.
    if let Some(ev) = own_past(&f) {
        const KEPT: [&str; 22] = [
            "note",
            "ecrit",
            "dit",
            "demande",
            "programme",
            "enregistre",
            "mis",
            "range",
            "cache",
            "pris",
            "garde",
            "laisse",
            "pose",
            "prevu",
            "consigne",
            "valide",
            "decide",
            "choisi",
            "fixe",
            "arrete",
            "convenu",
            "retenu",
        ];
        // « j'avais validé… ? », « on avait laissé tomber… »: the pluperfect recalls.
        let pluperfect = ev.split(' ').any(|w| matches!(w, "avais" | "avait" | "avions" | "etais" | "etait"));
        let asked_which = f
            .iter()
            .any(|w| matches!(*w, "quand" | "qui" | "combien" | "quel" | "quelle" | "lequel" | "laquelle" | "quoi"))
            || words.words.iter().any(|w| words.original[w.start..w.end].to_lowercase() == "où");
        // A yes-or-no question on the user's own past (« j'ai dépassé mes 35 heures ? »):
        // the memory too, unless it asks an opinion (set aside above).
        if asked_which || pluperfect || KEPT.iter().any(|k| ev.ends_with(k)) || words.question {
            return decided(Cue::Recall, ev, kinds);
        }
    }
    // A question in the first person about the user's own life, neither knowledge nor
    // advice (set aside above): « qu'est-ce qu'il faut que je prenne chez Leroy Merlin ? »,
    // « le gars qui m'a dépanné la box, c'était qui ? ».
    // The user as an object or in a relative clause (« qui m'a dépanné », « que j'ai
    // pris », « où on était »): a present « je » (« combien de temps je laisse cuire… ») or
    // a generic « on » (« quand est-ce qu'on change d'heure ») asks knowledge.
    let first_person = f
        .iter()
        .enumerate()
        .any(|(k, w)| matches!(*w, "me" | "m'" | "moi") && !(k > 0 && matches!(f[k - 1], "je" | "j'" | "ne" | "n'")))
        || f.windows(2)
            .any(|w| matches!(w[0], "que" | "qu'" | "ou" | "qui") && matches!(w[1], "j'" | "je" | "on" | "nous"))
            && own_past(&f).is_some();
    if first_person && asks_when_who && !f.contains(&"pourquoi") && !generic_opinion(&f) && !modal_world(&f) {
        return decided(Cue::Recall, "première personne".into(), kinds);
    }
    // Something of the user's, asked when, where or who (« mon train, c'est à quelle heure ? »,
    // « mes beaux-parents, ils viennent quand ? »): knowledge and advice were set aside above.
    let mine = (0..f.len()).any(|k| d.mine.iter().any(|m| m == f[k]) && !(k > 0 && capital_at(words, k)));
    let when_where_who = f.iter().any(|w| matches!(*w, "quand" | "qui" | "lequel" | "laquelle"))
        || words.words.iter().any(|w| words.original[w.start..w.end].to_lowercase() == "où")
        || f.windows(2).any(|w| matches!(w, ["quelle", "heure"] | ["quel", "jour"] | ["quelle", "date"]));
    let modal =
        f.iter().any(|w| matches!(*w, "peux" | "peut" | "dois" | "doit" | "faut" | "pourrais" | "devrais" | "vaut"));
    let subject_je = f.iter().any(|w| matches!(*w, "je" | "j'"));
    if mine && when_where_who && !modal && !subject_je && !f.contains(&"pourquoi") && !generic_opinion(&f) {
        return decided(Cue::Value, "possessif".into(), kinds);
    }
    None
}

/// A noun phrase put in front or behind, cut by a comma (« le projet potager, c'est quoi
/// le statut ? », « ça dit quoi, le projet vélo ? »): the words `a..b` of that phrase.
fn dislocation(words: &Words, f: &[&str]) -> Option<(usize, usize)> {
    let d = data();
    let cut = (1..f.len()).find(|&k| words.original[words.words[k - 1].end..words.words[k].start].contains(','))?;
    let det = |w: &str| d.definite.iter().any(|m| m == w) || d.mine.iter().any(|m| m == w);
    if det(f[0]) && cut <= 6 {
        return Some((0, cut));
    }
    if f.get(cut).is_some_and(|w| det(w)) && f.len() - cut <= 6 {
        return Some((cut, f.len()));
    }
    None
}

/// A first-person subject (clitics allowed) with an auxiliary and a past participle.
fn own_past(f: &[&str]) -> Option<String> {
    const AUX: [&str; 14] = [
        "ai", "avais", "aurais", "a", "avait", "aurait", "suis", "etais", "est", "etait", "sommes", "etions", "avions",
        "avons",
    ];
    const CLITICS: [&str; 12] = ["l'", "le", "la", "les", "en", "y", "s'", "se", "m'", "me", "t'", "lui"];
    for (i, w) in f.iter().enumerate() {
        if !matches!(*w, "j'" | "je" | "on" | "nous") {
            continue;
        }
        let mut k = i + 1;
        // « j'ai pas », « on n'avait »: a negation is still the user's past.
        while k < f.len() && (CLITICS.contains(&f[k]) || matches!(f[k], "n'" | "ne")) {
            k += 1;
        }
        if k + 1 >= f.len() || !AUX.contains(&f[k]) {
            continue;
        }
        let mut p = k + 1;
        while p < f.len()
            && matches!(f[p], "pas" | "bien" | "deja" | "encore" | "rien" | "jamais" | "plus" | "vraiment" | "tout")
        {
            p += 1;
        }
        let Some(part) = f.get(p) else { continue };
        if f[k + 1..p].contains(&"jamais") {
            continue;
        }
        const SHORT: [&str; 12] = ["pu", "vu", "eu", "su", "lu", "du", "mis", "pris", "dit", "fait", "ete", "ri"];
        let participle = SHORT.contains(part)
            || part.len() > 3
                && [
                    "e", "es", "ee", "ees", "i", "is", "ie", "ies", "it", "u", "us", "ue", "ert", "ort", "aint",
                    "eint", "ait", "ite", "ise", "ises",
                ]
                .iter()
                .any(|e| part.ends_with(e))
                && !STOP.contains(part)
                && !matches!(
                    *part,
                    "besoin"
                        | "envie"
                        | "peur"
                        | "faim"
                        | "une"
                        | "cette"
                        | "quelque"
                        | "rendez"
                        | "toujours"
                        | "souvent"
                        | "aussi"
                        | "combien"
                        | "quoi"
                );
        // « je suis fatigué », « j'ai mal »: a state, not a past; « j'ai pris » is a past.
        let state = matches!(f[k], "suis" | "etais" | "est" | "etait" | "sommes")
            && !matches!(f[i], "on" | "nous")
            && !matches!(f.get(i + 1), Some(&("m'" | "me" | "s'" | "se")));
        if (participle || *part == "pris") && !state {
            return Some(f[i..=p].join(" "));
        }
    }
    None
}

/// « je peux… ? », « je dois… ? », « il me faut combien… ? »: what the user may or must do,
/// a question for the model.
fn modal_world(f: &[&str]) -> bool {
    f.windows(2).any(|w| {
        matches!(w[0], "je" | "on")
            && matches!(w[1], "peux" | "peut" | "pourrais" | "dois" | "devrais" | "pourrait" | "doit" | "devrait")
            || w == ["me", "faut"]
    })
}

/// « tu en penses quoi ? », « c'est grave ? »: an opinion or a worry, for the model.
fn generic_opinion(f: &[&str]) -> bool {
    const WORRIES: [&[&str]; 12] = [
        &["c'", "est", "grave"],
        &["c'", "est", "normal"],
        &["c'", "est", "dangereux"],
        &["c'", "est", "bien"],
        &["c'", "est", "mieux"],
        &["tu", "en", "penses"],
        &["t'", "en", "penses"],
        &["qu'", "en", "penses"],
        &["tu", "penses", "que"],
        &["tu", "crois", "que"],
        &["ca", "vaut", "le", "coup"],
        &["il", "vaut", "mieux"],
    ];
    WORRIES.iter().any(|p| f.windows(p.len()).any(|w| w == *p))
}

/// « comment je refuse… », « comment le découper », « comment faire »: how to do
/// something, not what the memory holds.
fn how_to(f: &[&str]) -> bool {
    f.iter().enumerate().any(|(i, w)| {
        *w == "comment"
            && match f[i + 1..].iter().find(|w| !matches!(**w, "ne" | "n'" | "plus" | "pas")) {
                Some(&("je" | "j'")) => {
                    !f.get(i + 2).is_some_and(|v| matches!(*v, "veux" | "voulais" | "prefere" | "aime"))
                }
                Some(&("on" | "tu" | "faire" | "bien" | "mieux")) => true,
                Some(
                    &("le" | "la" | "les" | "l'" | "me" | "m'" | "te" | "t'" | "se" | "en" | "y" | "lui" | "leur"),
                ) => f.get(i + 2).is_some_and(|v| infinitive(v)),
                Some(v) => infinitive(v),
                None => false,
            }
    })
}

fn infinitive(w: &str) -> bool {
    w.len() > 3
        && (w.ends_with("er") || w.ends_with("ir") || w.ends_with("re"))
        && !matches!(w, "lequel" | "entre" | "autre" | "notre" | "votre" | "leur")
}

fn capital_at(words: &Words, k: usize) -> bool {
    words.original[words.words[k].start..].chars().next().is_some_and(char::is_uppercase)
}

/// Does the request speak of the user's own life: the first person, something of theirs,
/// a name (a capital letter past the first word), or a name the store knows?
fn personal(words: &Words, f: &[&str], names: &[(MemoryKind, String)]) -> bool {
    let d = data();
    f.iter().any(|w| matches!(*w, "je" | "j'" | "me" | "m'" | "moi" | "on" | "nous") || d.mine.iter().any(|m| m == w))
        || (1..f.len()).any(|k| capital_at(words, k) && !STOP.contains(&f[k]))
        || !names.is_empty()
}

/// Does the request name one of the memory's kinds?
fn kinds_named(f: &[&str]) -> bool {
    (0..f.len()).any(|i| noun_at(f, i).is_some())
}

/// « liste de courses », « rappels de la semaine », « mes notes d'hier »: a memory noun and
/// its complement, with no verb, is a request to read it.
fn bare_noun_phrase(f: &[&str]) -> bool {
    let d = data();
    let start =
        usize::from(f.first().is_some_and(|w| d.mine.iter().any(|m| m == w) || d.definite.iter().any(|m| m == w)));
    f.len() <= 8 && noun_at(f, start).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn now() -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 12, 3).unwrap().and_hms_opt(10, 0, 0).unwrap()
    }

    fn lexicon() -> Lexicon {
        Lexicon {
            projects: vec!["Atlas".into(), "jardin".into()],
            lists: vec!["courses".into()],
            timers: vec!["pâtes".into()],
        }
    }

    fn t(s: &str) -> Option<Topic> {
        topic(&Words::new(s), now(), &lexicon())
    }

    #[test]
    fn the_issue_s_questions_are_about_the_memory() {
        use MemoryKind as K;
        let cases = [
            ("Tu te souviens du prénom de ma nièce ?", None, Some("ta nièce")),
            (
                "Il est où le rendez-vous chez le dentiste déjà ?",
                Some(K::Rappel),
                Some("le rendez-vous chez le dentiste"),
            ),
            ("Ça fait combien de temps que je bosse sur Atlas cette semaine ?", Some(K::Travail), None),
            ("Elle en est où la phase du projet jardin ?", Some(K::Projet), Some("la phase du projet jardin")),
            ("Le minuteur des pâtes, il en reste combien ?", Some(K::Minuteur), None),
            ("J'ai bossé combien aujourd'hui ?", Some(K::Travail), None),
            ("J'ai quelque chose de prévu demain ?", Some(K::Rappel), None),
        ];
        for (s, kind, subject) in cases {
            let got = t(s).unwrap_or_else(|| panic!("{s}: not a memory topic"));
            if let Some(kind) = kind {
                assert_eq!(got.kinds.first(), Some(&kind), "{s}: {got:?}");
            }
            if let Some(subject) = subject {
                assert_eq!(got.subject.as_deref(), Some(subject), "{s}");
            }
        }
        let niece = t("Tu te souviens du prénom de ma nièce ?").unwrap();
        assert_eq!((niece.cue, niece.keywords), (Cue::Recall, vec!["nièce".to_string()]));
    }

    #[test]
    fn knowledge_and_advice_are_not() {
        for s in [
            "comment je fais un œuf mollet ?",
            "ma fille a de la fièvre, je fais quoi ?",
            "comment je détartre ma bouilloire ?",
            "c'est quoi la méthode pomodoro ?",
            "quelle est la capitale de l'Australie ?",
            "j'ai rendez-vous chez le dentiste demain, j'ai peur, comment me détendre ?",
            "écris-moi un poème sur la mer",
            "qu'est-ce que je pourrais faire ce week-end avec mes enfants ?",
            "il fait beau aujourd'hui",
            "je suis fatigué",
            "c'est quoi la capitale du Pérou déjà ?",
            "C'est quoi la session parlementaire ?",
            "combien de temps pour cuire des pâtes al dente",
            "j'ai perdu ma carte bancaire, je fais quoi ?",
        ] {
            assert_eq!(t(s), None, "{s}");
        }
    }
}
