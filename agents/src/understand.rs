//! Understanding the user's words before any model: the French grammar's reading
//! (`arthur-french`) turned into a typed command, with one of three answers and never a
//! guess. **Sure**: a template matched and every slot is valid — it runs. **Unsure**: a
//! default was filled in, a slot is ambiguous, the date is past or impossible, the target
//! was guessed — it asks, naming what it would do (or what is missing). **Not a command**:
//! no template matched — it goes to the model, or offline Arthur says what it can do.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use serde_json::{json, Value};

use arthur_french::{grammar::Match, Direction, Grammar, Lexicon, MomentIssue, SlotValue, Words};

/// Which briefing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Periode {
    Jour,
    Semaine,
}

/// What a delete or a "done" names: a number said, or a description to look up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Id(i64),
    /// « la note sur le plombier »: the one whose text holds these words.
    Matching(String),
    /// « mon dernier rappel ».
    Last,
    /// « tous mes rappels »: never done from a sentence.
    All,
    /// « supprime la note »: nothing named.
    Unnamed,
    /// « repousse-le », « rappelle-le-moi »: the reminder just said.
    This,
}

/// Where a reminder is moved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quand {
    /// A day and an hour (local).
    At(NaiveDateTime),
    /// A day alone: at the reminder's own hour.
    Day(NaiveDate),
    /// Later (or, negative, earlier) than it was due, by so many seconds.
    Shift(i64),
}

/// Which memory a read is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lecture {
    Souvenirs,
    Preferences,
    Notes,
    Rappels,
}

/// A timer change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerAction {
    Pause,
    Resume,
}

/// A tool call, typed: what the grammar understood, before it becomes the JSON arguments
/// that every caller (model, terminal, grammar) hands the registry.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCommand {
    CreerNote {
        texte: String,
        projet: Option<String>,
    },
    ListerNotes {
        projet: Option<String>,
        contient: Option<String>,
    },
    SupprimerNote {
        target: Target,
    },
    CreerRappel {
        texte: String,
        echeance: NaiveDateTime,
    },
    ListerRappels {
        inclure_faits: bool,
        debut: Option<NaiveDate>,
        fin: Option<NaiveDate>,
        contient: Option<String>,
    },
    MarquerRappelFait {
        target: Target,
    },
    SupprimerRappel {
        target: Target,
    },
    LireBriefing {
        periode: Periode,
    },
    LireTempsTravail {
        debut: NaiveDate,
        fin: Option<NaiveDate>,
        projet: Option<String>,
    },
    MemoriserPreference {
        texte: String,
    },
    ListerPreferences,
    DesactiverPreference {
        id: i64,
    },
    ChercherDansMemoire {
        requete: String,
    },
    /// « cherche le code du portail »: the notes and the memory, both read.
    Chercher {
        requete: String,
    },
    MemoriserSouvenir {
        texte: String,
    },
    DemarrerSession {
        projet: String,
    },
    SuspendreSession,
    ReprendreSession,
    ArreterSession,
    ListerProjets,
    LireProjet {
        nom: String,
    },
    CreerProjet {
        nom: String,
        description: Option<String>,
        phase: Option<String>,
    },
    ModifierProjet {
        nom: String,
        phase: Option<String>,
        statut: Option<String>,
    },
    ActerDecision {
        projet: String,
        texte: String,
    },
    DemarrerMinuteur {
        duree_secondes: i64,
        nom: Option<String>,
    },
    /// A timer is targeted by its name, or by the duration it was started with
    /// (`duree_initiale_secondes`: « le minuteur de 5 minutes »), or is the only one.
    ListerMinuteurs {
        nom: Option<String>,
        duree_initiale_secondes: Option<i64>,
    },
    ModifierMinuteur {
        nom: Option<String>,
        duree_initiale_secondes: Option<i64>,
        delta_secondes: Option<i64>,
        action: Option<TimerAction>,
    },
    AnnulerMinuteur {
        nom: Option<String>,
        duree_initiale_secondes: Option<i64>,
        tous: bool,
    },
    AjouterAListe {
        liste: String,
        element: String,
    },
    /// « du pain, du lait et des œufs », « retire les œufs et le lait »: several commands of
    /// one kind said at once, one call each.
    Several(Vec<ToolCommand>),
    RetirerDeListe {
        liste: String,
        element: String,
    },
    LireListe {
        liste: String,
    },
    ViderListe {
        liste: String,
    },
    CreerRappelRecurrent {
        texte: String,
        /// The first occurrence (local): its weekday, day and hour make the rule.
        echeance: NaiveDateTime,
        frequence: crate::memory::Frequence,
        intervalle: u32,
    },
    DeplacerRappel {
        target: Target,
        quand: Quand,
    },
    ArreterRappelRecurrent {
        target: Target,
    },
    CreerReveil {
        heure: NaiveDateTime,
        nom: Option<String>,
    },
    ListerReveils,
    AnnulerReveil {
        id: Option<i64>,
        tous: bool,
    },
    /// Souvenirs or preferences, by number, words or the last ones.
    Lire {
        lecture: Lecture,
        id: Option<i64>,
        contient: Option<String>,
        derniers: Option<u32>,
    },
}

/// Answered by code without any tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    /// « quelle heure est-il ».
    Time,
    /// « on est le combien », « quel jour serons-nous dans dix jours ».
    Date { days: i64 },
    /// « aide », « qu'est-ce que tu sais faire ».
    Help,
    /// « bonjour », « merci ».
    Courtesy(Courtesy),
    /// « annule », « oublie », « laisse tomber »: drop the pending question.
    Cancel,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Courtesy {
    Hello,
    Thanks,
    Goodbye,
    HowAreYou,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Tool(ToolCommand),
    Told(Told),
}

/// Why a command is asked before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doubt {
    /// No hour was said: one was chosen.
    DefaultTime,
    /// The moment is in the past.
    Past,
    /// The date or hour does not exist.
    Impossible,
    /// A delay or duration that is zero or negative.
    NotPositive,
    /// An hour alone that has passed today: tomorrow was assumed.
    Rolled,
    /// Part of the date was left out.
    Vague,
    /// The text still holds words of a moment (« appeler Luc hier »).
    TextHoldsMoment,
    /// The target was not named by its number.
    GuessedTarget,
    /// A name the store does not know (a project).
    UnknownName,
    /// A required piece is missing (a timer's duration, a note's text).
    Missing,
    /// Two readings are equally good.
    Ambiguous,
    /// Several words were misheard.
    Misheard,
    /// The sentence is one that always asks (« vide la liste », a bare « stop »).
    AlwaysAsks,
    /// Too long to be meant (a timer of several days).
    TooLong,
    /// Two commands in one sentence.
    TwoCommands,
    /// Words were cut from the text (a reason given with the request).
    TextCut,
    /// « mardi ou mercredi »: two were said; which one is asked.
    Alternatives,
}

impl Doubt {
    pub fn as_str(self) -> &'static str {
        match self {
            Doubt::DefaultTime => "default_time",
            Doubt::Past => "past",
            Doubt::Impossible => "impossible",
            Doubt::NotPositive => "not_positive",
            Doubt::Rolled => "rolled",
            Doubt::Vague => "vague",
            Doubt::TextHoldsMoment => "text_holds_moment",
            Doubt::GuessedTarget => "guessed_target",
            Doubt::UnknownName => "unknown_name",
            Doubt::Missing => "missing",
            Doubt::Ambiguous => "ambiguous",
            Doubt::Misheard => "misheard",
            Doubt::AlwaysAsks => "always_asks",
            Doubt::TooLong => "too_long",
            Doubt::TwoCommands => "two_commands",
            Doubt::TextCut => "text_cut",
            Doubt::Alternatives => "alternatives",
        }
    }
}

/// The three answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    Sure(Command),
    /// A command that would run once confirmed; `command` is what it would do.
    Unsure {
        command: Command,
        doubt: Doubt,
    },
    /// A command that cannot be proposed as it is (an impossible date, a missing
    /// duration): Arthur says what is missing; nothing awaits « oui ».
    Incomplete {
        intent: String,
        doubt: Doubt,
    },
    NotCommand,
}

/// What was understood, with what the trace records of how.
#[derive(Debug, Clone, PartialEq)]
pub struct Understanding {
    pub reading: Reading,
    /// The intent's agent and domain, from the templates.
    pub agent: Option<String>,
    pub domain: Option<String>,
    /// The template that matched (for the trace).
    pub template: Option<String>,
}

impl Understanding {
    pub fn sure(&self) -> Option<&Command> {
        match &self.reading {
            Reading::Sure(c) => Some(c),
            _ => None,
        }
    }

    pub fn is_command(&self) -> bool {
        !matches!(self.reading, Reading::NotCommand)
    }

    pub fn certainty(&self) -> &'static str {
        match self.reading {
            Reading::Sure(_) => "sure",
            Reading::Unsure { .. } | Reading::Incomplete { .. } => "unsure",
            Reading::NotCommand => "none",
        }
    }
}

/// The default list for « mets des pommes dans la liste ».
pub const DEFAULT_LIST: &str = "courses";
/// Lists every user has: a fact of the store, named here too for the grammar's callers.
pub use crate::memory::BUILTIN_LISTS;
/// A timer longer than this is asked first.
pub const MAX_TIMER_SECS: i64 = 24 * 3600;

/// How a request may open without being part of the command (« je voudrais que tu
/// effaces… », « il faudrait ajouter… »): tried without them when the whole is not a command.
const REQUEST_HEADS: &[&[&str]] = &[
    &["je", "voudrais", "que", "tu"],
    &["j'", "aimerais", "que", "tu"],
    &["je", "veux", "que", "tu"],
    &["il", "faut", "que", "tu"],
    &["il", "faudrait", "que", "tu"],
    &["faut", "que", "tu"],
    &["tu", "dois"],
    &["il", "faudrait"],
    &["il", "faut"],
    &["je", "voudrais"],
    &["j'", "aimerais"],
    &["je", "veux"],
    &["je", "voudrais", "que", "vous"],
    &["j'", "aimerais", "que", "vous"],
    &["pense", "a"],
    &["n'", "oublie", "pas", "de"],
    &["tu", "me"],
    &["tu", "nous"],
    &["me"],
    &["tu"],
    &["vous", "me"],
];

/// Reads the user's words in the user's zone against the names the store knows (typed
/// words: a free text keeps every character).
pub fn understand(text: &str, now: DateTime<Utc>, tz: Tz, lexicon: &Lexicon) -> Understanding {
    understand_as(text, false, now, tz, lexicon)
}

/// [`understand`] for typed words or for a transcript (`heard`: a free text loses its
/// hesitations, « euh », and nothing else).
pub fn understand_as(text: &str, heard: bool, now: DateTime<Utc>, tz: Tz, lexicon: &Lexicon) -> Understanding {
    let local = now.with_timezone(&tz).naive_local();
    if odd(text) {
        return Understanding { reading: Reading::NotCommand, agent: None, domain: None, template: None };
    }
    // « jeudi euh non vendredi »: read as repaired; « mardi ou mercredi »: read with the
    // first, asked which (for a moment or a list item).
    match arthur_french::repair::repair(text, local) {
        arthur_french::repair::Repair::Repaired(fixed) if fixed != text => {
            return understand_as(&fixed, heard, now, tz, lexicon);
        }
        arthur_french::repair::Repair::Alternatives { with_first, kind, .. } => {
            let mut u = understand_as(&with_first, heard, now, tz, lexicon);
            let asks = match (&u.reading, kind) {
                (Reading::Sure(Command::Tool(t)) | Reading::Unsure { command: Command::Tool(t), .. }, k) => {
                    matches!((t, k), (ToolCommand::CreerRappel { .. }, arthur_french::repair::Kind::Moment))
                        || matches!((t, k), (ToolCommand::AjouterAListe { .. }, arthur_french::repair::Kind::Led))
                        || matches!(
                            (t, k),
                            (
                                ToolCommand::DemarrerMinuteur { .. },
                                arthur_french::repair::Kind::Duration | arthur_french::repair::Kind::Number
                            )
                        )
                }
                _ => false,
            };
            if asks {
                if let Reading::Sure(Command::Tool(t)) | Reading::Unsure { command: Command::Tool(t), .. } = &u.reading
                {
                    u.reading = Reading::Unsure { command: Command::Tool(t.clone()), doubt: Doubt::Alternatives };
                }
                return u;
            }
        }
        _ => {}
    }
    let words = if heard { Words::heard(text) } else { Words::new(text) };
    if words.words.len() > LONG_WORDS {
        return understand_long(&words, heard, now, tz, lexicon);
    }
    let first = understand_words(&words, local, lexicon);
    // Not a command, or only the preference hint (« je voudrais que tu… »).
    let weak = matches!(
        &first.reading,
        Reading::NotCommand
            | Reading::Unsure {
                doubt: Doubt::AlwaysAsks,
                command: Command::Tool(ToolCommand::MemoriserPreference { .. }),
            }
    );
    if weak {
        let folded = words.folded();
        for head in REQUEST_HEADS {
            if folded.len() > head.len() && folded.starts_with(head) {
                let mut rest = words.clone();
                rest.words.drain(..head.len());
                let second = understand_words(&rest, local, lexicon);
                if second.is_command() {
                    return second;
                }
            }
        }
    }
    if first.reading == Reading::NotCommand {
        // « sur la liste bricolage ajoute des vis », « pour les courses mets du café »: a
        // phrase put in front is read where the templates have it, at the end.
        if let Some(moved) = fronted(&words, local, lexicon) {
            return moved;
        }
        if let Some(two) = two_commands(&words, local, lexicon) {
            return two;
        }
        if let Some(one) = one_clause(&words, local, lexicon) {
            return one;
        }
    }
    first
}

/// The arguments a command the grammar read as incomplete already has (« mets un rappel
/// demain à 9 h »: the moment, not the text): what a question's frame starts from.
pub fn partial_args(text: &str, heard: bool, intent: &str, now: DateTime<Utc>, tz: Tz, lexicon: &Lexicon) -> Value {
    let local = now.with_timezone(&tz).naive_local();
    let words = if heard { Words::heard(text) } else { Words::new(text) };
    let mut args = json!({});
    let matches = Grammar::french().matches(&words, local, lexicon);
    // The reading that understood the most in typed slots (« pour lundi à 10 h » a moment,
    // not a text).
    let Some(m) =
        matches.iter().filter(|m| m.intent == intent).max_by_key(|m| (m.slot_words, std::cmp::Reverse(m.free_words)))
    else {
        return args;
    };
    for (name, value) in &m.slots {
        match value {
            SlotValue::Moment(mo) if mo.issue != Some(MomentIssue::Impossible) => {
                args[name] = json!(mo.at.format("%Y-%m-%dT%H:%M").to_string());
                if mo.time_said {
                    args["_time_said"] = json!(true);
                }
            }
            SlotValue::Seconds(s) if *s > 0 => args[name] = json!(s),
            SlotValue::Text(t) | SlotValue::Known(t) | SlotValue::Unknown(t) if !empty_meaning(t) => {
                args[name] = json!(t)
            }
            _ => {}
        }
    }
    // « crée un rappel pour lundi à 10 h »: with no text, the whole moment said is the
    // longest span that reads as one (a template gave part of it to the text).
    if intent == "creer_rappel" {
        let f = words.folded();
        let mut best: Option<(usize, arthur_french::Moment)> = None;
        for a in 0..f.len() {
            for b in a + 1..=f.len().min(a + 12) {
                if let Some(mo) = arthur_french::moment::moment(&f[a..b], local) {
                    if mo.issue != Some(MomentIssue::Impossible) && best.as_ref().is_none_or(|(n, _)| b - a > *n) {
                        best = Some((b - a, mo));
                    }
                }
            }
        }
        if let Some((_, mo)) = best {
            args["echeance"] = json!(mo.at.format("%Y-%m-%dT%H:%M").to_string());
            if mo.time_said {
                args["_time_said"] = json!(true);
            }
            if args.get("texte").and_then(Value::as_str).is_some_and(|t| {
                arthur_french::moment::moment(&Words::split_only(t).folded(), local).is_some()
                    || Grammar::mentions_moment(t, local)
            }) {
                args.as_object_mut().map(|a| a.remove("texte"));
            }
        }
    }
    args
}

/// Past this many words the grammar reads only the head of an utterance (its search grows
/// with the length); a free text that ends the head runs to the end of what was said.
const LONG_WORDS: usize = 80;

/// A long utterance (« note : » and a whole page): the command is read on its first words,
/// and the free text it ends with is the whole rest, as said — so a text too long for its
/// tool is refused with its limit, never cut.
fn understand_long(words: &Words, heard: bool, now: DateTime<Utc>, tz: Tz, lexicon: &Lexicon) -> Understanding {
    // The head ends on a word a text may end with (not « le », « du », « et »…).
    let last = (LONG_WORDS / 2..words.words.len().min(LONG_WORDS))
        .find(|&k| {
            !matches!(
                words.words[k].folded.as_str(),
                "le" | "la"
                    | "les"
                    | "l'"
                    | "de"
                    | "du"
                    | "des"
                    | "d'"
                    | "un"
                    | "une"
                    | "et"
                    | "a"
                    | "au"
                    | "aux"
                    | "pour"
                    | "sur"
                    | "en"
                    | "que"
                    | "qu'"
                    | "ou"
                    | "mais"
                    | "par"
                    | "avec"
                    | "dans"
            )
        })
        .unwrap_or(LONG_WORDS / 2);
    let head_end = words.words[last].end;
    let head = &words.original[..head_end];
    let mut u = understand_as(head, heard, now, tz, lexicon);
    let rest_of = |said: &str| -> Option<String> {
        let prefix: String = said.chars().take(40).collect();
        let at = head.rfind(said).or_else(|| head.rfind(&prefix))?;
        let full = words.original[at..].trim_end_matches(|c: char| c.is_whitespace() || ".,;:!?…".contains(c));
        Some(full.to_string())
    };
    let extend = |cmd: &mut ToolCommand| -> bool {
        use ToolCommand as T;
        let slot = match cmd {
            T::CreerNote { texte, .. }
            | T::CreerRappel { texte, .. }
            | T::MemoriserSouvenir { texte }
            | T::MemoriserPreference { texte }
            | T::ActerDecision { texte, .. } => texte,
            T::AjouterAListe { element, .. } => element,
            _ => return false,
        };
        match rest_of(slot) {
            Some(full) if full.len() > slot.len() => {
                *slot = full;
                true
            }
            _ => false,
        }
    };
    let extended = match &mut u.reading {
        Reading::Sure(Command::Tool(cmd)) | Reading::Unsure { command: Command::Tool(cmd), .. } => extend(cmd),
        _ => false,
    };
    if !extended {
        // Not a command whose text ends the head: a long text, for the model.
        return Understanding { reading: Reading::NotCommand, agent: None, domain: None, template: None };
    }
    u
}

/// A prepositional phrase said first (« sur la liste bricolage », « pour le projet
/// Atlas »), moved after the rest: the reading of the sentence said in the usual order.
fn fronted(words: &Words, now: NaiveDateTime, lexicon: &Lexicon) -> Option<Understanding> {
    let f = words.folded();
    if !matches!(f.first(), Some(&("sur" | "pour" | "dans" | "a" | "au" | "aux"))) || f.len() < 4 {
        return None;
    }
    for k in 2..=f.len().saturating_sub(2).min(6) {
        let cut = words.words[k].start;
        let head = words.original[..cut].trim().trim_end_matches(',');
        let rest = words.original[cut..].trim();
        let moved = Words::new(&format!("{rest} {head}"));
        let u = understand_words(&moved, now, lexicon);
        if matches!(u.reading, Reading::Sure(Command::Tool(_)) | Reading::Unsure { command: Command::Tool(_), .. }) {
            return Some(u);
        }
    }
    None
}

/// Words that take back or correct what was just said: a sentence holding them is not
/// cut into clauses (« rappelle-moi demain, enfin non, mercredi »).
const CORRECTIONS: [&str; 10] = ["non", "pas", "plutot", "enfin", "finalement", "attends", "sauf", "mais", "ne", "n'"];

/// « je fais une pause café, suspends la session », « supprime le rappel 8, il ne sert
/// plus à rien »: a sentence cut by a comma whose one clause is a command and the others
/// say nothing Arthur could do, nor take anything back. The command is the clause.
fn one_clause(words: &Words, now: NaiveDateTime, lexicon: &Lexicon) -> Option<Understanding> {
    if words.words.iter().any(|w| CORRECTIONS.contains(&w.folded.as_str())) {
        return None;
    }
    // Clause boundaries: a comma, a semicolon or a dash in the original text between words.
    let mut cuts = vec![0];
    for k in 1..words.words.len() {
        let between = &words.original[words.words[k - 1].end..words.words[k].start];
        if between.contains([',', ';', '—', '–']) || between.contains(" - ") {
            cuts.push(k);
        }
    }
    if cuts.len() < 2 {
        return None;
    }
    cuts.push(words.words.len());
    let mut found = None;
    for pair in cuts.windows(2) {
        let mut clause = words.clone();
        clause.words.truncate(pair[1]);
        clause.words.drain(..pair[0]);
        let u = understand_words(&clause, now, lexicon);
        // Only a tool command stands alone in a clause (« tant pis » after a remark is not
        // « annule »).
        let tool =
            matches!(&u.reading, Reading::Sure(Command::Tool(_)) | Reading::Unsure { command: Command::Tool(_), .. })
                || matches!(&u.reading, Reading::Incomplete { .. });
        if u.is_command() && !tool {
            return None;
        }
        if u.is_command() {
            if found.is_some() {
                return None;
            }
            found = Some(u);
        }
    }
    found
}

/// « ajoute du lait et supprime la note deux »: two commands in one sentence are not
/// guessed at; Arthur asks for one at a time.
fn two_commands(words: &Words, now: NaiveDateTime, lexicon: &Lexicon) -> Option<Understanding> {
    let folded = words.folded();
    for (k, w) in folded.iter().enumerate() {
        if (*w != "et" && *w != "puis") || k == 0 || k + 1 >= folded.len() {
            continue;
        }
        let mut left = words.clone();
        left.words.truncate(k);
        let mut right = words.clone();
        right.words.drain(..=k);
        let l = understand_words(&left, now, lexicon);
        let r = understand_words(&right, now, lexicon);
        if l.is_command() && r.is_command() {
            let intent = match &l.reading {
                Reading::Sure(Command::Tool(t)) | Reading::Unsure { command: Command::Tool(t), .. } => {
                    t.name().to_string()
                }
                Reading::Incomplete { intent, .. } => intent.clone(),
                _ => "commande".to_string(),
            };
            return Some(Understanding {
                reading: Reading::Incomplete { intent, doubt: Doubt::TwoCommands },
                agent: l.agent,
                domain: l.domain,
                template: l.template,
            });
        }
    }
    None
}

fn understand_words(words: &Words, local: NaiveDateTime, lexicon: &Lexicon) -> Understanding {
    let grammar = Grammar::french();
    let matches = grammar.matches(words, local, lexicon);
    let Some(best) = matches.first() else {
        return Understanding { reading: Reading::NotCommand, agent: None, domain: None, template: None };
    };
    let mut reading = read(best, local, lexicon);
    // Another reading just as good that would do something else: ask.
    if let Reading::Sure(cmd) = &reading {
        let rival = matches.iter().skip(1).find(|m| {
            (m.free_words, m.unknown_names, m.fuzzy, m.misheard, m.slot_words)
                == (best.free_words, best.unknown_names, best.fuzzy, best.misheard, best.slot_words)
                && matches!(read(m, local, lexicon), Reading::Sure(ref other) if other != cmd)
        });
        if rival.is_some() {
            reading = Reading::Unsure { command: cmd.clone(), doubt: Doubt::Ambiguous };
        }
    }
    Understanding {
        reading,
        agent: best.agent.clone(),
        domain: best.domain.clone(),
        template: Some(best.template.clone()),
    }
}

/// Sure or not, from one match.
fn read(m: &Match, now: NaiveDateTime, lexicon: &Lexicon) -> Reading {
    if m.slots.values().any(|v| matches!(v, SlotValue::Text(t) | SlotValue::Unknown(t) if odd(t))) {
        return Reading::NotCommand;
    }
    let Some(command) = command(m, now, lexicon) else {
        return Reading::NotCommand;
    };
    if m.slots.values().any(|v| matches!(v, SlotValue::Text(t) if empty_meaning(t))) {
        return Reading::Incomplete { intent: m.intent.clone(), doubt: Doubt::Missing };
    }
    if m.slots.values().any(|v| matches!(v, SlotValue::Text(t) if holds_command(t, now, lexicon))) {
        return Reading::Incomplete { intent: m.intent.clone(), doubt: Doubt::TwoCommands };
    }
    let (command, mut doubt) = match command {
        Built::Ready(c, d) => (c, d),
        Built::Incomplete(d) => return Reading::Incomplete { intent: m.intent.clone(), doubt: d },
    };
    // Two misspelt words, or a word the recogniser writes for another (« mais un minuteur »).
    if m.fuzzy >= 2 || m.misheard > 0 {
        doubt = doubt.or(Some(Doubt::Misheard));
    }
    if m.ask {
        doubt = doubt.or(Some(Doubt::AlwaysAsks));
    }
    match doubt {
        None => Reading::Sure(command),
        // Nothing sensible to propose: say what is wrong instead.
        Some(d @ (Doubt::Impossible | Doubt::Missing)) => Reading::Incomplete { intent: m.intent.clone(), doubt: d },
        Some(doubt) => Reading::Unsure { command, doubt },
    }
}

/// Is this text a preference about how Arthur behaves (`Some(true)`), a taste that may be
/// one (`Some(false)`), or neither (`None`)?
fn preference_kind(text: &str) -> Option<bool> {
    let f = arthur_french::fold::fold(text);
    let behaves = [
        "tu ",
        "tu'",
        " te ",
        " t'",
        "reponse",
        "repond",
        "parle",
        "tutoie",
        "vouvoie",
        "appelle-moi",
        "appelle moi",
        "me dire",
        "me lis",
        "me donne",
    ];
    let opens_pref = [
        "je prefere",
        "j'aime que",
        "j'aimerais que",
        "je veux que",
        "je ne veux plus",
        "je voudrais que",
        "tu dois",
        "ne me ",
        "appelle-moi",
        "appelle moi",
        "tutoie",
        "vouvoie",
        "reponds",
        "parle-moi",
        "parle moi",
    ];
    let tastes = ["j'aime", "je n'aime pas", "je deteste", "j'adore"];
    if opens_pref.iter().any(|p| f.starts_with(p)) {
        return Some(behaves.iter().any(|b| f.contains(b)) || !f.starts_with("je prefere"));
    }
    if tastes.iter().any(|p| f.starts_with(p)) {
        return Some(false).filter(|_| behaves.iter().any(|b| f.contains(b)));
    }
    None
}

enum Built {
    Ready(Command, Option<Doubt>),
    Incomplete(Doubt),
}

fn text_slot(m: &Match, name: &str) -> Option<String> {
    m.text(name).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// Text that is not something said: template or code fragments (« {{texte}} »,
/// « '); DROP TABLE »). The grammar does not read it as a command.
fn odd(text: &str) -> bool {
    text.contains(['{', '}', '<', '>', '\\', '|', '`', '$']) || text.contains("--") || text.contains("')")
}

/// A text that is only a pronoun (« note ça », « ajoute ça ») names nothing.
fn empty_meaning(text: &str) -> bool {
    let f = arthur_french::fold::fold(text);
    let f = f.trim_matches(|c: char| !c.is_alphanumeric());
    matches!(
        f,
        "ca" | "cela"
            | "ce"
            | "cet"
            | "cette"
            | "ceci"
            | "le"
            | "la"
            | "les"
            | "tout"
            | "tout ca"
            | "quelque chose"
            | "un truc"
            | "truc"
            | "ce truc"
    )
}

/// Verbs that open a command: after « et », they start a second one.
const COMMAND_VERBS: [&str; 24] = [
    "ajoute", "rajoute", "mets", "met", "rappelle", "note", "supprime", "efface", "retire", "enleve", "lance",
    "demarre", "arrete", "annule", "cree", "marque", "coche", "vide", "lis", "montre", "cherche", "retiens",
    "memorise", "reprends",
];

/// The text holds a second command (« du pain et rappelle-moi demain… »).
fn holds_command(text: &str, now: NaiveDateTime, lexicon: &Lexicon) -> bool {
    let words = Words::split_only(text);
    let f = words.folded();
    f.iter().enumerate().any(|(k, w)| {
        (*w == "et" || *w == "puis") && k + 1 < f.len() && {
            let mut rest = words.clone();
            rest.words.drain(..=k);
            COMMAND_VERBS.contains(&f[k + 1])
                || matches!(understand_words(&rest, now, lexicon).reading, Reading::Sure(_) | Reading::Unsure { .. })
        }
    })
}

/// « aller chez le kiné, parce que je suis tête en l'air »: the reason given is not part of
/// the task. Cut at the comma; the cut is asked, not assumed.
fn without_justification(text: &str) -> (String, bool) {
    let f = arthur_french::fold::fold(text);
    for marker in [", parce que", ", parce qu'", ", car ", ", puisque", ", comme ca", " parce que ", " parce qu'"] {
        if let Some(at) = f.find(marker) {
            // Folding keeps byte offsets only for ASCII; cut on the char count instead.
            let chars = f[..at].chars().count();
            let kept: String = text.chars().take(chars).collect();
            let kept = kept.trim_end_matches([',', ' ']).to_string();
            if !kept.is_empty() {
                return (kept, true);
            }
        }
    }
    (text.to_string(), false)
}

/// A thing named only by what was said of it (« le truc que j'ai ajouté tout à
/// l'heure »): not something to write.
fn vague_item(text: &str) -> bool {
    let f = arthur_french::fold::fold(text);
    ["truc", "machin", "chose", "ce que", "celui", "celle", "ceux", "la meme", "le meme", "ca ", "qu'", "qu ", "que "]
        .iter()
        .any(|v| f.starts_with(v) || f.starts_with(&format!("le {v}")) || f.starts_with(&format!("la {v}")))
}

/// A search in the memory without the possessive in front (« mon allergie » finds « allergie au pollen »).
fn search_terms(raw: &str) -> String {
    let mut t = raw.trim().to_string();
    for lead in ["mon ", "ma ", "mes ", "le ", "la ", "les ", "l'", "l’", "un ", "une ", "des ", "du ", "de "] {
        if t.to_lowercase().starts_with(lead) && t.len() > lead.len() {
            t = t[lead.len()..].trim().to_string();
            break;
        }
    }
    t
}

fn number_slot(m: &Match, name: &str) -> Option<i64> {
    match m.slots.get(name)? {
        SlotValue::Number(n) => Some(*n),
        _ => None,
    }
}

/// A name slot: known to the store, or new (`unknown` true).
fn name_slot(m: &Match, name: &str) -> Option<(String, bool)> {
    match m.slots.get(name)? {
        SlotValue::Known(s) => Some((s.clone(), false)),
        SlotValue::Unknown(s) | SlotValue::Text(s) => Some((s.clone(), true)),
        _ => None,
    }
}

fn moment_doubt(issue: MomentIssue) -> Doubt {
    match issue {
        MomentIssue::Impossible => Doubt::Impossible,
        MomentIssue::Past => Doubt::Past,
        MomentIssue::NotPositive => Doubt::NotPositive,
        MomentIssue::DefaultTime => Doubt::DefaultTime,
        MomentIssue::Rolled => Doubt::Rolled,
        MomentIssue::Vague => Doubt::Vague,
    }
}

/// The text with the pronoun before it, when that pronoun (« ça », « ceci », « cela »)
/// was not followed by a colon: then it was the text's first word.
fn pronoun_led(said: &str, texte: &str) -> Option<String> {
    let at = said.rfind(texte)?;
    let before = said[..at].trim_end();
    let lower = before.to_lowercase();
    for p in ["ça", "ca", "ceci", "cela"] {
        if lower.ends_with(p) && lower[..lower.len() - p.len()].ends_with([' ', ':']) {
            let start = before.len() - p.len();
            return Some(said[start..].trim_end_matches(|c: char| ".!?".contains(c)).trim().to_string());
        }
    }
    None
}

/// « du pain, du lait et des œufs », « du pain du lait et des œufs », « des pommes puis des
/// poires »: the items of one list, each without its article. One item stays one (« du jus
/// de pomme », « des vis à bois », « sel et poivre » said as one is two).
pub fn several_items(raw: &str) -> Vec<String> {
    const ARTICLES: [&str; 9] = ["du", "des", "de la", "de l'", "un", "une", "quelques", "le", "la"];
    let text = raw.trim();
    // Cut at commas and at « et », « puis », « ainsi que ».
    let mut parts: Vec<String> = Vec::new();
    for chunk in text.split(',') {
        let mut rest = chunk.trim().to_string();
        loop {
            let lower = rest.to_lowercase();
            let cut = [" et ", " puis ", " ainsi que ", " plus "]
                .iter()
                .filter_map(|sep| lower.find(sep).map(|at| (at, sep.len())))
                .min();
            match cut {
                Some((at, len)) => {
                    parts.push(rest[..at].trim().to_string());
                    rest = rest[at + len..].trim().to_string();
                }
                None => {
                    parts.push(rest.trim().to_string());
                    break;
                }
            }
        }
    }
    // Then where an article opens a new item inside a part (« du pain du lait »).
    let mut items = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let mut start = 0;
        for k in 1..words.len() {
            let w = arthur_french::fold::fold(words[k]);
            let prev = arthur_french::fold::fold(words[k - 1]);
            let two = if k + 1 < words.len() {
                format!("{w} {}", arthur_french::fold::fold(words[k + 1]))
            } else {
                String::new()
            };
            let opens = ARTICLES.iter().any(|a| *a == w || two.starts_with(&format!("{a} ")) && a.contains(' '))
                && !matches!(prev.as_str(), "de" | "d'" | "a" | "au" | "aux" | "en" | "pour" | "sans" | "avec" | "et")
                // « du du papier »: an article said twice opens nothing.
                && !ARTICLES.contains(&prev.as_str())
                && k > start;
            if opens && (matches!(w.as_str(), "du" | "des" | "un" | "une" | "quelques") || two.starts_with("de l")) {
                items.push(words[start..k].join(" "));
                start = k;
            }
        }
        items.push(words[start..].join(" "));
    }
    let items: Vec<String> = items.into_iter().map(|i| bare_item(&i)).filter(|i| !i.is_empty()).collect();
    // Only short items: a long part is a sentence, not a list.
    if items.len() > 1 && items.iter().all(|i| i.split_whitespace().count() <= 4) {
        items
    } else {
        vec![bare_item(text)]
    }
}

/// A short text said twice over from its start (« des yaourts des yaourts »): said once.
fn restarted(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let n = words.len();
    if n >= 2 && n.is_multiple_of(2) {
        let half = n / 2;
        let fold = |w: &[&str]| arthur_french::fold::fold(&w.join(" "));
        if fold(&words[..half]) == fold(&words[half..]) {
            return words[..half].join(" ");
        }
    }
    text.to_string()
}

/// A list element without its article: « du lait » → « lait », « des pommes » → « pommes ».
pub fn bare_item(raw: &str) -> String {
    let item = bare_item_once(raw);
    // « du du papier toilette »: an article said twice.
    let again = bare_item_once(&item);
    let first = |s: &str| s.split_whitespace().next().map(arthur_french::fold::fold).unwrap_or_default();
    if again != item && first(raw.trim()[..raw.trim().len() - item.len()].trim()) == first(&item) {
        again
    } else {
        item
    }
}

fn bare_item_once(raw: &str) -> String {
    let trimmed = raw.trim();
    let lower = trimmed.to_lowercase();
    for article in
        ["de la ", "de l'", "de l’", "du ", "des ", "de ", "d'", "d’", "un ", "une ", "le ", "la ", "les ", "l'", "l’"]
    {
        if lower.starts_with(article) && trimmed.len() > article.len() {
            return trimmed[article.len()..].trim().to_string();
        }
    }
    trimmed.to_string()
}

fn range_slot(m: &Match, dir: Direction, today: NaiveDate) -> Option<Option<(NaiveDate, NaiveDate)>> {
    match m.slots.get("debut") {
        None => Some(None),
        Some(SlotValue::Range(r)) => r.resolve(today, dir).map(Some),
        Some(SlotValue::Day(d)) => d.resolve(today, dir).map(|d| Some((d, d))),
        Some(_) => None,
    }
}

fn target(m: &Match) -> Target {
    if m.args.get("cible").map(String::as_str) == Some("celui_ci") {
        return Target::This;
    }
    if let Some(id) = number_slot(m, "id") {
        return Target::Id(id);
    }
    if let Some(c) = text_slot(m, "contient") {
        return Target::Matching(search_terms(&c));
    }
    let t = arthur_french::fold::fold(&m.template);
    if t.contains("dernier") || t.contains("derniere") || t.contains("precedent") {
        Target::Last
    } else if t.contains("tous") || t.contains("toutes") {
        Target::All
    } else {
        Target::Unnamed
    }
}

fn target_doubt(t: &Target) -> Option<Doubt> {
    match t {
        Target::Id(0) => Some(Doubt::Impossible),
        Target::Id(_) => None,
        // « le »: the reminder just said, looked up when the command runs (or said unknown).
        Target::This => None,
        Target::Unnamed => Some(Doubt::Missing),
        _ => Some(Doubt::GuessedTarget),
    }
}

fn timer_name(m: &Match) -> Option<String> {
    name_slot(m, "nom").map(|(n, _)| n)
}

/// The duration a timer was started with, when the sentence names it so (« le minuteur de
/// 5 minutes »); a zero or negative one is not a timer's.
fn started_for(m: &Match) -> Result<Option<i64>, Built> {
    match m.slots.get("duree_initiale_secondes") {
        Some(SlotValue::Seconds(s)) if *s <= 0 => Err(Built::Incomplete(Doubt::NotPositive)),
        Some(SlotValue::Seconds(s)) => Ok(Some(*s)),
        _ => Ok(None),
    }
}

/// A timer's name holds no number or duration (« minuteur vingt cinq minutes » is not a
/// timer named « vingt »).
fn plausible_timer_name(name: &str) -> bool {
    let w = Words::split_only(name);
    !w.folded().iter().any(|x| {
        arthur_french::number::is_number_word(x)
            || x.chars().any(|c| c.is_ascii_digit())
            || matches!(
                *x,
                "minute"
                    | "minutes"
                    | "heure"
                    | "heures"
                    | "seconde"
                    | "secondes"
                    | "min"
                    | "mn"
                    | "m"
                    | "h"
                    | "s"
                    | "s'"
                    | "sec"
                    | "autre"
            )
    })
}

/// The typed command of a match, with what makes it unsure.
fn command(m: &Match, now: NaiveDateTime, lexicon: &Lexicon) -> Option<Built> {
    use ToolCommand as T;
    let today = now.date();
    let tool = |c: ToolCommand, d: Option<Doubt>| Some(Built::Ready(Command::Tool(c), d));
    // A required text not said (« prends une note »): asked for, nothing proposed.
    macro_rules! need {
        ($e:expr) => {
            match $e {
                Some(v) => v,
                None => return Some(Built::Incomplete(Doubt::Missing)),
            }
        };
    }
    let told = |t: Told| Some(Built::Ready(Command::Told(t), None));
    let arg = |k: &str| m.args.get(k).map(String::as_str);
    match m.intent.as_str() {
        "creer_note" => {
            let texte = need!(text_slot(m, "texte"));
            // « note ça : X » names what follows; « note : ça ne marche pas » is a text that
            // starts with « ça ».
            let texte = match pronoun_led(&m.said, &texte) {
                Some(whole) if m.template.contains("(ca|ceci|cela") => whole,
                _ => texte,
            };
            let (texte, cut) = without_justification(&texte);
            let projet = name_slot(m, "projet");
            let doubt = projet.as_ref().filter(|(_, unknown)| *unknown).map(|_| Doubt::UnknownName);
            tool(T::CreerNote { texte, projet: projet.map(|(p, _)| p) }, doubt.or(cut.then_some(Doubt::TextCut)))
        }
        "lister_notes" => {
            let projet = name_slot(m, "projet");
            if projet.as_ref().is_some_and(|(_, unknown)| *unknown) {
                // « mes notes sur le plombier »: not a project; the words are a filter.
                let (p, _) = projet?;
                return tool(T::ListerNotes { projet: None, contient: Some(p) }, None);
            }
            let target = target(m);
            if let Target::Id(id) = target {
                // « lis-moi la note 3 »: that note, read by its number.
                return tool(T::Lire { lecture: Lecture::Notes, id: Some(id), contient: None, derniers: None }, None);
            }
            if let Some((None, None, Some(derniers))) = read_limits(m) {
                return tool(
                    T::Lire { lecture: Lecture::Notes, id: None, contient: None, derniers: Some(derniers) },
                    None,
                );
            }
            tool(T::ListerNotes { projet: projet.map(|(p, _)| p), contient: text_slot(m, "contient") }, None)
        }
        "supprimer_note" => {
            let t = target(m);
            let d = target_doubt(&t);
            tool(T::SupprimerNote { target: t }, d)
        }
        "creer_rappel" => {
            let (texte, cut) = without_justification(&need!(text_slot(m, "texte")));
            let (echeance, mut doubt) = match m.slots.get("echeance") {
                Some(SlotValue::Moment(mo)) => {
                    if mo.issue == Some(MomentIssue::Impossible) {
                        return Some(Built::Incomplete(Doubt::Impossible));
                    }
                    (mo.at, mo.issue.map(moment_doubt))
                }
                // No moment said: tomorrow at 9:00, to be confirmed.
                _ => ((today + Duration::days(1)).and_hms_opt(9, 0, 0)?, Some(Doubt::DefaultTime)),
            };
            // « mets un rappel pour jeudi »: the moment alone, nothing to remind of.
            if arthur_french::moment::moment(&Words::split_only(&texte).folded(), now).is_some() {
                return Some(Built::Incomplete(Doubt::Missing));
            }
            // « tous les lundis de… » not read as a rule: a repeat is never made a one-off.
            if arthur_french::recurrence::mentions(&Words::split_only(&texte).folded()) {
                return Some(Built::Incomplete(Doubt::Vague));
            }
            if doubt.is_none() && Grammar::mentions_moment(&texte, now) {
                doubt = Some(Doubt::TextHoldsMoment);
            }
            if cut {
                doubt = doubt.or(Some(Doubt::TextCut));
            }
            tool(T::CreerRappel { texte, echeance }, doubt)
        }
        "lister_rappels" => {
            // « le rappel 3 », « mes derniers rappels »: by number or the last ones.
            if let Some((id, contient, derniers)) = read_limits(m).filter(|(i, _, d)| i.is_some() || d.is_some()) {
                return tool(T::Lire { lecture: Lecture::Rappels, id, contient, derniers }, None);
            }
            let range = range_slot(m, Direction::Future, today)?;
            tool(
                T::ListerRappels {
                    inclure_faits: arg("inclure_faits") == Some("true"),
                    debut: range.map(|r| r.0),
                    fin: range.map(|r| r.1),
                    contient: text_slot(m, "contient"),
                },
                None,
            )
        }
        "marquer_rappel_fait" => {
            let t = target(m);
            let d = target_doubt(&t);
            tool(T::MarquerRappelFait { target: t }, d)
        }
        "supprimer_rappel" => {
            let t = target(m);
            let d = target_doubt(&t);
            tool(T::SupprimerRappel { target: t }, d)
        }
        "lire_briefing_hebdo" => {
            let periode = if arg("periode") == Some("jour") { Periode::Jour } else { Periode::Semaine };
            tool(T::LireBriefing { periode }, None)
        }
        "lire_temps_travail" => {
            let range = range_slot(m, Direction::Past, today)?;
            let projet = name_slot(m, "projet");
            if projet.as_ref().is_some_and(|(_, unknown)| *unknown) {
                // A project the store does not know: not this question.
                return None;
            }
            let (debut, fin) = range.unwrap_or((today, today));
            tool(
                T::LireTempsTravail { debut, fin: (fin != debut).then_some(fin), projet: projet.map(|(p, _)| p) },
                None,
            )
        }
        "memoriser_preference" => {
            let texte = need!(text_slot(m, "texte"));
            // « je préfère que tu me tutoies »: the preference is the whole sentence.
            let texte = if m.ask { m.said.clone() } else { texte };
            tool(T::MemoriserPreference { texte }, None)
        }
        "chercher" => {
            let requete = search_terms(&need!(text_slot(m, "requete")));
            let f = arthur_french::fold::fold(&requete);
            // « cherche un restaurant », « trouve-moi une rime », « sur internet »: not the
            // user's own notes or memory.
            let elsewhere = ["internet", "web", "en ligne", "google", "sur le net"].iter().any(|w| f.contains(w));
            let indefinite = ["un ", "une ", "des ", "quelque"].iter().any(|a| f.starts_with(a));
            let raw = arthur_french::fold::fold(text_slot(m, "requete").as_deref().unwrap_or(""));
            let raw_indefinite = ["un ", "une ", "des ", "quelque"].iter().any(|a| raw.starts_with(a));
            if elsewhere || indefinite || raw_indefinite || requete.split_whitespace().count() > 5 {
                return None;
            }
            tool(T::Chercher { requete }, None)
        }
        "lister_preferences" => match read_limits(m) {
            None => tool(T::ListerPreferences, None),
            Some((id, contient, derniers)) => {
                tool(T::Lire { lecture: Lecture::Preferences, id, contient, derniers }, None)
            }
        },
        "lister_souvenirs" => {
            let (id, contient, derniers) = read_limits(m).unwrap_or_default();
            tool(T::Lire { lecture: Lecture::Souvenirs, id, contient, derniers }, None)
        }
        "creer_rappel_recurrent" => recurring(m, now),
        "deplacer_rappel" => {
            let t = target(m);
            let quand = match (m.slots.get("echeance"), m.slots.get("delta")) {
                (Some(SlotValue::Moment(mo)), _) => match mo.issue {
                    Some(MomentIssue::Impossible) => return Some(Built::Incomplete(Doubt::Impossible)),
                    Some(MomentIssue::Past | MomentIssue::NotPositive) => {
                        return Some(Built::Incomplete(Doubt::Past));
                    }
                    Some(MomentIssue::DefaultTime) => (Quand::Day(mo.at.date()), None),
                    Some(issue) => (Quand::At(mo.at), Some(moment_doubt(issue))),
                    None => (Quand::At(mo.at), None),
                },
                (_, Some(SlotValue::Seconds(s))) if *s > 0 => {
                    (Quand::Shift(if arg("sens") == Some("avance") { -s } else { *s }), None)
                }
                (_, Some(SlotValue::Seconds(_))) => return Some(Built::Incomplete(Doubt::NotPositive)),
                _ => return Some(Built::Incomplete(Doubt::Missing)),
            };
            let d = target_doubt(&t).or(quand.1);
            tool(T::DeplacerRappel { target: t, quand: quand.0 }, d)
        }
        "arreter_rappel_recurrent" => {
            let t = target(m);
            let d = target_doubt(&t);
            tool(T::ArreterRappelRecurrent { target: t }, d)
        }
        "creer_reveil" => {
            let nom = timer_name(m);
            match m.slots.get("heure") {
                Some(SlotValue::Moment(mo)) => match mo.issue {
                    Some(MomentIssue::Impossible) => Some(Built::Incomplete(Doubt::Impossible)),
                    Some(MomentIssue::Past | MomentIssue::NotPositive) => Some(Built::Incomplete(Doubt::Past)),
                    // « réveille-moi demain »: at what time is not guessed.
                    Some(MomentIssue::DefaultTime) => Some(Built::Incomplete(Doubt::Missing)),
                    // An hour that has passed today is tomorrow's: what an alarm means.
                    Some(MomentIssue::Rolled) | None => tool(T::CreerReveil { heure: mo.at, nom }, None),
                    Some(issue) => tool(T::CreerReveil { heure: mo.at, nom }, Some(moment_doubt(issue))),
                },
                _ => Some(Built::Incomplete(Doubt::Missing)),
            }
        }
        "lister_reveils" => tool(T::ListerReveils, None),
        "annuler_reveil" => {
            let tous = arg("tous") == Some("true");
            match number_slot(m, "id") {
                Some(0) => Some(Built::Incomplete(Doubt::Impossible)),
                id => tool(T::AnnulerReveil { id: if tous { None } else { id }, tous }, None),
            }
        }
        "desactiver_preference" => match number_slot(m, "id") {
            Some(id) if id > 0 => tool(T::DesactiverPreference { id }, None),
            Some(_) => Some(Built::Incomplete(Doubt::Impossible)),
            None => Some(Built::Incomplete(Doubt::GuessedTarget)),
        },
        "chercher_dans_memoire" => {
            tool(T::ChercherDansMemoire { requete: search_terms(&need!(text_slot(m, "requete"))) }, None)
        }
        "memoriser_souvenir" => {
            let texte = need!(text_slot(m, "texte"));
            // « retiens que je préfère des réponses courtes »: how Arthur should behave is a
            // preference; a taste alone (« que je préfère le thé ») may be either: asked.
            match preference_kind(&texte) {
                Some(true) => tool(T::MemoriserPreference { texte }, None),
                Some(false) => tool(T::MemoriserPreference { texte }, Some(Doubt::Ambiguous)),
                None => tool(T::MemoriserSouvenir { texte }, None),
            }
        }
        "demarrer_session" => {
            let (projet, unknown) = need!(name_slot(m, "projet"));
            if unknown && (projet.split_whitespace().count() > 3 || Grammar::mentions_moment(&projet, now)) {
                return None;
            }
            tool(T::DemarrerSession { projet }, unknown.then_some(Doubt::UnknownName))
        }
        "suspendre_session" => tool(T::SuspendreSession, None),
        "reprendre_session" => tool(T::ReprendreSession, None),
        "arreter_session" => tool(T::ArreterSession, None),
        "lister_projets" => tool(T::ListerProjets, None),
        "lire_projet" => {
            let (nom, unknown) = name_slot(m, "nom")?;
            if unknown {
                return None;
            }
            tool(T::LireProjet { nom }, None)
        }
        "creer_projet" => {
            // « crée un projet »: its name is asked.
            let nom = need!(text_slot(m, "nom"));
            let known =
                lexicon.projects.iter().any(|p| arthur_french::fold::fold(p) == arthur_french::fold::fold(&nom));
            tool(
                T::CreerProjet { nom, description: text_slot(m, "description"), phase: text_slot(m, "phase") },
                known.then_some(Doubt::Ambiguous),
            )
        }
        "modifier_projet" => {
            let (nom, unknown) = name_slot(m, "nom")?;
            if unknown {
                return None;
            }
            let statut = arg("statut").map(str::to_string).or_else(|| text_slot(m, "statut"));
            tool(T::ModifierProjet { nom, phase: text_slot(m, "phase"), statut }, None)
        }
        "acter_decision" => {
            // « note la décision : … » without a project: which one is asked.
            let (projet, unknown) = need!(name_slot(m, "projet"));
            let texte = need!(text_slot(m, "texte"));
            tool(T::ActerDecision { projet, texte }, unknown.then_some(Doubt::UnknownName))
        }
        "demarrer_minuteur" => {
            let nom = timer_name(m);
            if nom.as_deref().is_some_and(|n| !plausible_timer_name(n)) {
                return None;
            }
            match m.slots.get("duree_secondes") {
                Some(SlotValue::Seconds(s)) if *s <= 0 => Some(Built::Incomplete(Doubt::NotPositive)),
                Some(SlotValue::Seconds(s)) => tool(
                    T::DemarrerMinuteur { duree_secondes: *s, nom },
                    (*s > MAX_TIMER_SECS).then_some(Doubt::TooLong),
                ),
                _ => Some(Built::Incomplete(Doubt::Missing)),
            }
        }
        "lister_minuteurs" => {
            let duree_initiale_secondes = match started_for(m) {
                Ok(d) => d,
                Err(b) => return Some(b),
            };
            tool(T::ListerMinuteurs { nom: timer_name(m), duree_initiale_secondes }, None)
        }
        "modifier_minuteur" => {
            let duree_initiale_secondes = match started_for(m) {
                Ok(d) => d,
                Err(b) => return Some(b),
            };
            let action = match arg("action") {
                Some("pause") => Some(TimerAction::Pause),
                Some("reprendre") => Some(TimerAction::Resume),
                _ => None,
            };
            let delta = match m.slots.get("delta_secondes") {
                Some(SlotValue::Seconds(s)) => {
                    let s = if arg("negatif") == Some("true") { -s.abs() } else { *s };
                    if s == 0 {
                        return Some(Built::Incomplete(Doubt::NotPositive));
                    }
                    Some(s)
                }
                _ => None,
            };
            if action.is_none() && delta.is_none() {
                return Some(Built::Incomplete(Doubt::Missing));
            }
            tool(
                T::ModifierMinuteur { nom: timer_name(m), duree_initiale_secondes, delta_secondes: delta, action },
                None,
            )
        }
        "annuler_minuteur" => {
            let tous = arg("tous") == Some("true");
            let duree_initiale_secondes = match started_for(m) {
                Ok(d) => d,
                Err(b) => return Some(b),
            };
            let (nom, duree_initiale_secondes) =
                if tous { (None, None) } else { (timer_name(m), duree_initiale_secondes) };
            tool(T::AnnulerMinuteur { nom, duree_initiale_secondes, tous }, None)
        }
        "ajouter_a_liste" | "retirer_de_liste" | "lire_liste" | "vider_liste" => {
            let liste = match name_slot(m, "liste") {
                Some((l, _)) => l,
                None => arg("liste").unwrap_or(DEFAULT_LIST).to_string(),
            };
            let liste = canonical_list(&liste, lexicon);
            match m.intent.as_str() {
                "ajouter_a_liste" | "retirer_de_liste" => {
                    let element = need!(text_slot(m, "element"));
                    if vague_item(&element) {
                        return Some(Built::Incomplete(Doubt::Missing));
                    }
                    // « des yaourts des yaourts »: an item said again from its start is one
                    // item (a list item is a name; a note keeps its repeats).
                    let element = bare_item(&restarted(&element));
                    // « à la liste de du lait »: an article still in front once one was taken
                    // away is the sentence's, cut in the wrong place; never written.
                    let first_of = arthur_french::fold::fold(element.split_whitespace().next().unwrap_or_default());
                    if matches!(first_of.as_str(), "du" | "de" | "des" | "d'" | "le" | "la" | "les" | "l'")
                        || first_of.starts_with("d'")
                        || first_of.starts_with("l'")
                    {
                        return None;
                    }
                    // « lait dans la liste », « dans notre », « achat lait » (« ma liste achat
                    // lait »): words of the sentence around the item, not an item; never written.
                    let fe = arthur_french::fold::fold(&element);
                    let first = fe.split_whitespace().next().unwrap_or_default();
                    if fe.split_whitespace().any(|w| matches!(w, "liste" | "listes" | "notre" | "nos" | "votre"))
                        || matches!(first, "dans" | "sur" | "a" | "au" | "aux" | "notre" | "nos" | "votre")
                        || (matches!(first, "achat" | "achats" | "shopping" | "commissions") && fe.contains(' '))
                    {
                        return None;
                    }
                    // « ajoute du sel dans l'eau des pâtes »: a place inside the item is not
                    // something to buy; without a list named, not a list command.
                    let t = arthur_french::fold::fold(&m.template);
                    let named = name_slot(m, "liste").is_some() || t.contains("liste") || t.contains("courses");
                    let f = arthur_french::fold::fold(&element);
                    if !named && [" dans ", " sur ", " au ", " aux ", " a ", " en "].iter().any(|p| f.contains(p)) {
                        return None;
                    }
                    if m.intent == "ajouter_a_liste" {
                        let items = several_items(text_slot(m, "element").as_deref().unwrap_or(&element));
                        if items.len() > 1 {
                            let each = items
                                .into_iter()
                                .map(|e| T::AjouterAListe { liste: liste.clone(), element: e })
                                .collect();
                            return tool(T::Several(each), None);
                        }
                        tool(T::AjouterAListe { liste, element }, None)
                    } else {
                        let items = several_items(text_slot(m, "element").as_deref().unwrap_or(&element));
                        if items.len() > 1 {
                            let each = items
                                .into_iter()
                                .map(|e| T::RetirerDeListe { liste: liste.clone(), element: e })
                                .collect();
                            return tool(T::Several(each), None);
                        }
                        tool(T::RetirerDeListe { liste, element }, None)
                    }
                }
                "lire_liste" => {
                    let named = name_slot(m, "liste").is_some() || arg("liste").is_some();
                    tool(T::LireListe { liste }, (!named).then_some(Doubt::Missing))
                }
                _ => {
                    let t = arthur_french::fold::fold(&m.template);
                    if t.contains("toutes les") || t.contains("toutes mes") {
                        return Some(Built::Incomplete(Doubt::GuessedTarget));
                    }
                    tool(T::ViderListe { liste }, None)
                }
            }
        }
        "@heure" => told(Told::Time),
        "@date" => {
            let days = if let Some(n) = number_slot(m, "jours") {
                n
            } else if let Some(n) = number_slot(m, "semaines") {
                7 * n
            } else if let Some(SlotValue::Day(d)) = m.slots.get("jours") {
                (d.resolve(today, Direction::Future)? - today).num_days()
            } else {
                0
            };
            told(Told::Date { days })
        }
        "@aide" => told(Told::Help),
        "@politesse" => told(Told::Courtesy(match arg("genre") {
            Some("merci") => Courtesy::Thanks,
            Some("aurevoir") => Courtesy::Goodbye,
            Some("cava") => Courtesy::HowAreYou,
            _ => Courtesy::Hello,
        })),
        "@annule" => told(Told::Cancel),
        _ => None,
    }
}

/// A read's limits (number, words, the last N), when the sentence gave any.
fn read_limits(m: &Match) -> Option<(Option<i64>, Option<String>, Option<u32>)> {
    let id = number_slot(m, "id");
    let contient = text_slot(m, "contient").map(|c| search_terms(&c));
    let derniers = number_slot(m, "derniers")
        .or_else(|| m.args.get("derniers").and_then(|d| d.parse().ok()))
        .map(|n| n.clamp(1, crate::tools::MAX_DERNIERS) as u32);
    (id.is_some() || contient.is_some() || derniers.is_some()).then_some((id, contient, derniers))
}

/// « rappelle-moi tous les lundis à 19 h de sortir les poubelles »: the rule read, its
/// first occurrence from now; a rule said without its hour, or loosely, is asked.
fn recurring(m: &Match, now: NaiveDateTime) -> Option<Built> {
    use crate::memory::recurrence::{Frequence, Repetition, MAX_INTERVALLE};
    use arthur_french::recurrence::Freq;
    let texte = match text_slot(m, "texte") {
        Some(t) => t,
        None => return Some(Built::Incomplete(Doubt::Missing)),
    };
    let (texte, cut) = without_justification(&texte);
    let Some(SlotValue::Recurrence(r)) = m.slots.get("regle") else { return None };
    if r.interval > MAX_INTERVALLE {
        return Some(Built::Incomplete(Doubt::TooLong));
    }
    let frequence = match r.freq {
        Freq::Daily => Frequence::Quotidienne,
        Freq::Weekdays => Frequence::JoursOuvres,
        Freq::Weekly => Frequence::Hebdomadaire,
        Freq::Monthly => Frequence::Mensuelle,
    };
    let mut doubt = None;
    let time = match (r.time, r.default_hour) {
        (Some(t), _) => t,
        (None, Some(h)) => {
            doubt = Some(Doubt::DefaultTime);
            (h, 0)
        }
        (None, None) => {
            doubt = Some(Doubt::DefaultTime);
            (crate::time::BARE_DATE_REMINDER_HOUR, 0)
        }
    };
    let monthday = match (frequence, r.monthday) {
        (Frequence::Mensuelle, None) => {
            doubt = doubt.or(Some(Doubt::Vague));
            Some(chrono::Datelike::day(&now.date()))
        }
        (_, d) => d,
    };
    let first = Repetition::first_from(frequence, r.weekday, monthday, time, now)?;
    if !r.sure {
        doubt = doubt.or(Some(Doubt::Ambiguous));
    }
    if Grammar::mentions_moment(&texte, now) {
        doubt = doubt.or(Some(Doubt::TextHoldsMoment));
    }
    if cut {
        doubt = doubt.or(Some(Doubt::TextCut));
    }
    Some(Built::Ready(
        Command::Tool(ToolCommand::CreerRappelRecurrent { texte, echeance: first, frequence, intervalle: r.interval }),
        doubt,
    ))
}

/// A list name as the store spells it, or as said for a new one; « course » is « courses ».
fn canonical_list(said: &str, lexicon: &Lexicon) -> String {
    let key = |s: &str| arthur_french::fold::fold(s).trim_end_matches('s').to_string();
    // Regional names of the shopping list.
    if ["epicerie", "commission", "provision", "course a faire", "achat", "shopping", "liste de course"]
        .contains(&key(said).as_str())
    {
        return DEFAULT_LIST.to_string();
    }
    let k = key(said);
    lexicon
        .lists
        .iter()
        .map(String::as_str)
        .chain(BUILTIN_LISTS)
        .find(|l| key(l) == k)
        .map(str::to_string)
        .unwrap_or_else(|| said.trim().to_string())
}

impl ToolCommand {
    /// The registry calls this command makes, in order: one, or two for a search of both
    /// the notes and the memory; none while a target still has to be looked up.
    pub fn calls(&self) -> Vec<(&'static str, Value)> {
        match self {
            ToolCommand::Chercher { requete } => vec![
                ("lister_notes", json!({ "contient": requete })),
                ("chercher_dans_memoire", json!({ "requete": requete })),
            ],
            ToolCommand::Several(each) => each.iter().flat_map(ToolCommand::calls).collect(),
            other => other.arguments().map(|a| vec![(other.name(), a)]).unwrap_or_default(),
        }
    }

    /// The tool this command calls (its first, for several).
    pub fn tool(&self) -> crate::tools::ToolName {
        use crate::tools::ToolName as N;
        use ToolCommand as T;
        match self {
            T::CreerNote { .. } => N::CreerNote,
            T::ListerNotes { .. } => N::ListerNotes,
            T::SupprimerNote { .. } => N::SupprimerNote,
            T::CreerRappel { .. } => N::CreerRappel,
            T::ListerRappels { .. } => N::ListerRappels,
            T::MarquerRappelFait { .. } => N::MarquerRappelFait,
            T::SupprimerRappel { .. } => N::SupprimerRappel,
            T::LireBriefing { .. } => N::LireBriefingHebdo,
            T::LireTempsTravail { .. } => N::LireTempsTravail,
            T::MemoriserPreference { .. } => N::MemoriserPreference,
            T::ListerPreferences => N::ListerPreferences,
            T::DesactiverPreference { .. } => N::DesactiverPreference,
            T::ChercherDansMemoire { .. } => N::ChercherDansMemoire,
            T::Chercher { .. } => N::ChercherDansMemoire,
            T::MemoriserSouvenir { .. } => N::MemoriserSouvenir,
            T::DemarrerSession { .. } => N::DemarrerSession,
            T::SuspendreSession => N::SuspendreSession,
            T::ReprendreSession => N::ReprendreSession,
            T::ArreterSession => N::ArreterSession,
            T::ListerProjets => N::ListerProjets,
            T::LireProjet { .. } => N::LireProjet,
            T::CreerProjet { .. } => N::CreerProjet,
            T::ModifierProjet { .. } => N::ModifierProjet,
            T::ActerDecision { .. } => N::ActerDecision,
            T::DemarrerMinuteur { .. } => N::DemarrerMinuteur,
            T::ListerMinuteurs { .. } => N::ListerMinuteurs,
            T::ModifierMinuteur { .. } => N::ModifierMinuteur,
            T::AnnulerMinuteur { .. } => N::AnnulerMinuteur,
            T::AjouterAListe { .. } => N::AjouterAListe,
            T::Several(each) => each.first().map(ToolCommand::tool).unwrap_or(N::AjouterAListe),
            T::RetirerDeListe { .. } => N::RetirerDeListe,
            T::LireListe { .. } => N::LireListe,
            T::ViderListe { .. } => N::ViderListe,
            T::CreerRappelRecurrent { .. } => N::CreerRappelRecurrent,
            T::DeplacerRappel { .. } => N::DeplacerRappel,
            T::ArreterRappelRecurrent { .. } => N::ArreterRappelRecurrent,
            T::CreerReveil { .. } => N::CreerReveil,
            T::ListerReveils => N::ListerReveils,
            T::AnnulerReveil { .. } => N::AnnulerReveil,
            T::Lire { lecture: Lecture::Souvenirs, .. } => N::ListerSouvenirs,
            T::Lire { lecture: Lecture::Preferences, .. } => N::ListerPreferences,
            T::Lire { lecture: Lecture::Notes, .. } => N::ListerNotes,
            T::Lire { lecture: Lecture::Rappels, .. } => N::ListerRappels,
        }
    }

    pub fn name(&self) -> &'static str {
        self.tool().wire()
    }

    /// The arguments as the registry takes them (the interface's names), or `None` when
    /// the target still has to be looked up in the store.
    pub fn arguments(&self) -> Option<Value> {
        use ToolCommand as T;
        let mut v = json!({});
        let mut set = |k: &str, x: Value| {
            v[k] = x;
        };
        match self {
            T::CreerNote { texte, projet } => {
                set("texte", json!(texte));
                if let Some(p) = projet {
                    set("projet", json!(p));
                }
            }
            T::ListerNotes { projet, contient } => {
                if let Some(p) = projet {
                    set("projet", json!(p));
                }
                if let Some(c) = contient {
                    set("contient", json!(c));
                }
            }
            T::SupprimerNote { target } | T::MarquerRappelFait { target } | T::SupprimerRappel { target } => {
                let Target::Id(id) = target else { return None };
                set("id", json!(id));
            }
            T::CreerRappel { texte, echeance } => {
                set("texte", json!(texte));
                set("echeance", json!(echeance.format("%Y-%m-%dT%H:%M").to_string()));
            }
            T::ListerRappels { inclure_faits, debut, fin, contient } => {
                if *inclure_faits {
                    set("inclure_faits", json!(true));
                }
                if let Some(d) = debut {
                    set("debut", json!(d.to_string()));
                }
                if let Some(f) = fin {
                    set("fin", json!(f.to_string()));
                }
                if let Some(c) = contient {
                    set("contient", json!(c));
                }
            }
            T::LireBriefing { periode } => {
                set("periode", json!(if *periode == Periode::Jour { "jour" } else { "semaine" }));
            }
            T::LireTempsTravail { debut, fin, projet } => {
                set("debut", json!(debut.to_string()));
                if let Some(f) = fin {
                    set("fin", json!(f.to_string()));
                }
                if let Some(p) = projet {
                    set("projet", json!(p));
                }
            }
            T::MemoriserPreference { texte } | T::MemoriserSouvenir { texte } => set("texte", json!(texte)),
            T::DesactiverPreference { id } => set("id", json!(id)),
            T::ChercherDansMemoire { requete } | T::Chercher { requete } => set("requete", json!(requete)),
            T::DemarrerSession { projet } => set("projet", json!(projet)),
            T::ListerPreferences | T::SuspendreSession | T::ReprendreSession | T::ArreterSession | T::ListerProjets => {
            }
            T::LireProjet { nom } => set("nom", json!(nom)),
            T::CreerProjet { nom, description, phase } => {
                set("nom", json!(nom));
                if let Some(d) = description {
                    set("description", json!(d));
                }
                if let Some(p) = phase {
                    set("phase", json!(p));
                }
            }
            T::ModifierProjet { nom, phase, statut } => {
                set("nom", json!(nom));
                if let Some(p) = phase {
                    set("phase", json!(p));
                }
                if let Some(s) = statut {
                    set("statut", json!(s));
                }
            }
            T::ActerDecision { projet, texte } => {
                set("projet", json!(projet));
                set("texte", json!(texte));
            }
            T::DemarrerMinuteur { duree_secondes, nom } => {
                set("duree_secondes", json!(duree_secondes));
                if let Some(n) = nom {
                    set("nom", json!(n));
                }
            }
            T::ListerMinuteurs { nom, duree_initiale_secondes } => {
                if let Some(n) = nom {
                    set("nom", json!(n));
                }
                if let Some(d) = duree_initiale_secondes {
                    set("duree_initiale_secondes", json!(d));
                }
            }
            T::ModifierMinuteur { nom, duree_initiale_secondes, delta_secondes, action } => {
                if let Some(n) = nom {
                    set("nom", json!(n));
                }
                if let Some(d) = duree_initiale_secondes {
                    set("duree_initiale_secondes", json!(d));
                }
                if let Some(d) = delta_secondes {
                    set("delta_secondes", json!(d));
                }
                match action {
                    Some(TimerAction::Pause) => set("action", json!("pause")),
                    Some(TimerAction::Resume) => set("action", json!("reprendre")),
                    None => {}
                }
            }
            T::AnnulerMinuteur { nom, duree_initiale_secondes, tous } => {
                if let Some(n) = nom {
                    set("nom", json!(n));
                }
                if let Some(d) = duree_initiale_secondes {
                    set("duree_initiale_secondes", json!(d));
                }
                if *tous {
                    set("tous", json!(true));
                }
            }
            // Several calls: the first one's arguments (a frame keeps the others).
            T::Several(each) => return each.first()?.arguments(),
            T::AjouterAListe { liste, element } | T::RetirerDeListe { liste, element } => {
                set("liste", json!(liste));
                set("element", json!(element));
            }
            T::LireListe { liste } | T::ViderListe { liste } => set("liste", json!(liste)),
            T::CreerRappelRecurrent { texte, echeance, frequence, intervalle } => {
                set("texte", json!(texte));
                set("echeance", json!(echeance.format("%Y-%m-%dT%H:%M").to_string()));
                set("frequence", json!(frequence.as_str()));
                if *intervalle > 1 {
                    set("intervalle", json!(intervalle));
                }
            }
            T::DeplacerRappel { target, quand } => {
                let (Target::Id(id), Quand::At(at)) = (target, quand) else { return None };
                set("id", json!(id));
                set("echeance", json!(at.format("%Y-%m-%dT%H:%M").to_string()));
            }
            T::ArreterRappelRecurrent { target } => {
                let Target::Id(id) = target else { return None };
                set("id", json!(id));
            }
            T::CreerReveil { heure, nom } => {
                set("heure", json!(heure.format("%Y-%m-%dT%H:%M").to_string()));
                if let Some(n) = nom {
                    set("nom", json!(n));
                }
            }
            T::ListerReveils => {}
            T::AnnulerReveil { id, tous } => {
                if let Some(id) = id {
                    set("id", json!(id));
                }
                if *tous {
                    set("tous", json!(true));
                }
            }
            T::Lire { id, contient, derniers, .. } => {
                if let Some(id) = id {
                    set("id", json!(id));
                }
                if let Some(c) = contient {
                    set("contient", json!(c));
                }
                if let Some(d) = derniers {
                    set("derniers", json!(d));
                }
            }
        }
        Some(v)
    }
}

static YES: &[&str] = &[
    "oui",
    "ouais",
    "ouai",
    "yes",
    "ok",
    "okay",
    "d'accord",
    "daccord",
    "vas-y",
    "vas y",
    "va-y",
    "va y",
    "confirme",
    "je confirme",
    "c'est ca",
    "c'est bon",
    "exactement",
    "parfait",
    "bien sur",
    "tout a fait",
    "absolument",
    "volontiers",
    "carrement",
    "yep",
    "oui oui",
    "oui vas-y",
    "oui merci",
    "oui stp",
    "oui s'il te plait",
    "oui c'est ca",
    "oui confirme",
    "oui parfait",
    "ok merci",
    "ok vas-y",
    "c'est parfait",
    "go",
    "fais-le",
    "fais le",
    "oui fais-le",
    "oui fais le",
    "affirmatif",
    "bien sur que oui",
    "evidemment",
    "oui bien sur",
];
static NO: &[&str] = &[
    "non",
    "nan",
    "no",
    "nope",
    "annule",
    "laisse tomber",
    "pas du tout",
    "surtout pas",
    "non merci",
    "oublie",
    "oublie ca",
    "stop",
    "pas maintenant",
    "ce n'est pas ca",
    "c'est pas ca",
    "non annule",
    "non laisse tomber",
    "non non",
    "non c'est pas ca",
    "negatif",
    "non pas du tout",
    "non surtout pas",
    "annule ca",
    "non oublie",
];

/// What stops a ringing timer (« c'est bon », « stop », « merci »…).
static ACKNOWLEDGE: &[&str] = &[
    "stop",
    "c'est bon",
    "ok",
    "okay",
    "d'accord",
    "arrete",
    "arrete-toi",
    "arrete ca",
    "merci",
    "j'ai entendu",
    "c'est entendu",
    "entendu",
    "ca va",
    "tais-toi",
    "silence",
    "chut",
    "c'est note",
    "c'est fait",
    "stop stop",
    "arrete le minuteur",
    "coupe",
    "coupe le minuteur",
    "ok merci",
    "c'est bon merci",
    "vu",
    "bien recu",
    "ca marche",
    "arrete le reveil",
    "coupe le reveil",
    "eteins le reveil",
    "stop reveil",
    "arrete l'alarme",
    "coupe l'alarme",
    "je suis reveille",
    "je suis debout",
    "je me leve",
];

/// « encore cinq minutes »: how long a ringing timer or alarm waits before it rings again
/// (`None`: the utterance is not that).
pub fn snooze(raw: &str) -> Option<i64> {
    const DEFAULT: i64 = 5 * 60;
    let words = Words::new(raw);
    let f = words.folded();
    let lead = [
        &["encore"][..],
        &["laisse", "moi", "encore"],
        &["laisse", "moi", "dormir", "encore"],
        &["laisse", "moi", "dormir"],
        &["sonne", "dans"],
        &["sonne", "encore", "dans"],
        &["resonne", "dans"],
        &["rappelle", "moi", "dans"],
        &["repousse", "de"],
        &["repousse", "le", "de"],
        &["repousse", "la", "de"],
        &["redis", "le", "moi", "dans"],
        &["encore", "un", "peu", "de"],
    ];
    if matches!(
        f.as_slice(),
        ["snooze"] | ["encore", "un", "peu"] | ["laisse", "moi", "dormir"] | ["pas", "encore"] | ["plus", "tard"]
    ) {
        return Some(DEFAULT);
    }
    for l in lead {
        if f.len() > l.len() && f.starts_with(l) {
            if let Some(s) = arthur_french::duration::seconds(&f[l.len()..]).filter(|s| (60..=3600).contains(s)) {
                return Some(s);
            }
        }
    }
    None
}

/// Does the utterance tell a ringing timer to stop?
pub fn acknowledges(raw: &str) -> bool {
    static SET: std::sync::OnceLock<std::collections::HashSet<String>> = std::sync::OnceLock::new();
    let set = SET.get_or_init(|| folded_set(ACKNOWLEDGE));
    let f = Words::new(raw).folded_text().replace("' ", "'");
    set.contains(&f)
}

fn folded_set(list: &[&str]) -> std::collections::HashSet<String> {
    list.iter().map(|w| Words::split_only(w).folded_text().replace("' ", "'")).collect()
}

/// A yes/no answer to a confirmation question, if the utterance is one.
pub fn yes_no(raw: &str) -> Option<bool> {
    static SETS: std::sync::OnceLock<(std::collections::HashSet<String>, std::collections::HashSet<String>)> =
        std::sync::OnceLock::new();
    let (yes, no) = SETS.get_or_init(|| (folded_set(YES), folded_set(NO)));
    let f = Words::new(raw).folded_text().replace("' ", "'");
    if yes.contains(&f) {
        Some(true)
    } else if no.contains(&f) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        // Monday 30 November 2026, 10:00 in Paris.
        Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
    }

    fn lexicon() -> Lexicon {
        Lexicon {
            projects: vec!["Atlas".into(), "Jardin".into()],
            lists: vec!["courses".into(), "tâches".into()],
            timers: vec!["pâtes".into()],
        }
    }

    fn u(s: &str) -> Reading {
        understand(s, now(), chrono_tz::Europe::Paris, &lexicon()).reading
    }

    fn sure_call(s: &str) -> (&'static str, Value) {
        match u(s) {
            Reading::Sure(Command::Tool(t)) => (t.name(), t.arguments().unwrap()),
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn the_examples_of_the_issue_are_never_guessed() {
        // A moment in the past, a negative delay, an ISO date, a creative request.
        assert!(matches!(u("rappelle-moi d'appeler Luc hier à 10 h"), Reading::Unsure { doubt: Doubt::Past, .. }));
        assert!(matches!(
            u("rappelle-moi la banque dans -3 heures"),
            Reading::Unsure { doubt: Doubt::NotPositive, .. }
        ));
        assert_eq!(
            sure_call("rappelle-moi d'appeler Luc le 2026-12-10 à 9:00"),
            ("creer_rappel", json!({"texte": "appeler Luc", "echeance": "2026-12-10T09:00"}))
        );
        assert_eq!(u("écris-moi un haïku sur l'automne"), Reading::NotCommand);
        assert_eq!(u("combien de temps met le train pour Lyon"), Reading::NotCommand);
        assert_eq!(u("je trouve les préférences de Julie bizarres"), Reading::NotCommand);
        assert_eq!(
            sure_call("quels sont mes rappels de demain ?"),
            ("lister_rappels", json!({"debut": "2026-12-01", "fin": "2026-12-01"}))
        );
        assert_eq!(
            sure_call("combien j'ai travaillé le mois dernier ?"),
            ("lire_temps_travail", json!({"debut": "2026-10-01", "fin": "2026-10-31"}))
        );
        assert_eq!(sure_call("cherche portail dans mes notes"), ("lister_notes", json!({"contient": "portail"})));
        assert_eq!(sure_call("crée le projet jardinage"), ("creer_projet", json!({"nom": "jardinage"})));
        assert_eq!(
            sure_call("rapelle-moi d'appeler Luc demain à 10 h"),
            ("creer_rappel", json!({"texte": "appeler Luc", "echeance": "2026-12-01T10:00"}))
        );
    }

    #[test]
    fn yes_and_no() {
        for y in ["oui", "Oui !", "ouais", "d'accord", "vas-y", "oui, vas-y", "c'est ça", "ok merci"] {
            assert_eq!(yes_no(y), Some(true), "{y}");
        }
        for n in ["non", "Non merci.", "laisse tomber", "annule"] {
            assert_eq!(yes_no(n), Some(false), "{n}");
        }
        for other in ["oui mais demain", "rappelle-moi", "non je veux dire jeudi"] {
            assert_eq!(yes_no(other), None, "{other}");
        }
    }

    #[test]
    fn several_items_are_several() {
        assert_eq!(several_items("du pain, du lait et des œufs"), ["pain", "lait", "œufs"]);
        assert_eq!(several_items("du pain du lait et des œufs"), ["pain", "lait", "œufs"]);
        assert_eq!(several_items("des pommes puis des poires et du raisin"), ["pommes", "poires", "raisin"]);
        assert_eq!(
            several_items("des tomates, des courgettes, des oignons et de l'ail"),
            ["tomates", "courgettes", "oignons", "ail"]
        );
        assert_eq!(several_items("du jus de pomme"), ["jus de pomme"]);
        assert_eq!(several_items("des vis à bois"), ["vis à bois"]);
        assert_eq!(several_items("de la crème et du beurre"), ["crème", "beurre"]);
    }

    #[test]
    fn list_items_lose_their_article() {
        assert_eq!(bare_item("du lait"), "lait");
        assert_eq!(bare_item("de la farine"), "farine");
        assert_eq!(bare_item("des pommes"), "pommes");
        assert_eq!(bare_item("réparer le volet"), "réparer le volet");
    }
}
