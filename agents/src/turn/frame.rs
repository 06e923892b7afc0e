//! A question opens a typed frame (issue 39): when Arthur asks, the conversation keeps the
//! pending command — which tool, the arguments already filled, the argument asked about or
//! doubted, what follows once it is done — so that the next utterance can fill it (« cinq
//! minutes », « celui du dentiste »), correct it (« non, à onze heures », « plutôt jeudi »,
//! « l'autre »), confirm it (« oui », « vas-y ») or drop it (« laisse tomber »). Anything else
//! closes the frame and is a new turn. A write just done leaves a frame too, so that « non, à
//! onze heures » right after it corrects that very write. The reading of a reply is a pure
//! function of the frame and the words ([`reply`]), tested apart from the store.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use arthur_french::{Lexicon, Words};

use crate::understand::{understand_as, yes_no, Command, Reading};

/// A call of the registry, as a frame keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub tool: String,
    pub args: Value,
}

/// The pending command of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    pub tool: String,
    /// The arguments filled so far, with the interface's names.
    pub args: Value,
    /// The argument asked about (missing) or doubted (`echeance` after a default hour);
    /// `None`: a yes-or-no question.
    #[serde(default)]
    pub asking: Option<String>,
    /// Calls to run once this one is done (the session after its project is created, the
    /// other items of a list).
    #[serde(default)]
    pub then: Vec<Call>,
    /// « mardi ou mercredi » and « du beurre ou de la margarine »: what was said, to choose.
    #[serde(default)]
    pub choices: Vec<String>,
    /// The notes or reminders that matched a description, for « le 2 », « l'autre ».
    #[serde(default)]
    pub candidates: Vec<i64>,
    /// The hour of `echeance` was said (not the default one).
    #[serde(default)]
    pub time_said: bool,
    /// The write was already done: the frame only takes a correction of it.
    #[serde(default)]
    pub done: bool,
}

impl Frame {
    pub fn new(tool: &str, args: Value, asking: Option<&str>) -> Self {
        Self {
            tool: tool.to_string(),
            args,
            asking: asking.map(str::to_string),
            then: Vec::new(),
            choices: Vec::new(),
            candidates: Vec::new(),
            time_said: false,
            done: false,
        }
    }

    /// The frame kept in a pending action's arguments (`{"frame": …}`), or a yes-or-no
    /// question on a plain call (pending actions written before frames existed).
    pub fn from_pending(tool: &str, arguments: &Value) -> Self {
        match arguments.get("frame").cloned().and_then(|f| serde_json::from_value::<Frame>(f).ok()) {
            Some(f) => f,
            None => Frame::new(tool, arguments.clone(), None),
        }
    }

    pub fn to_pending(&self) -> Value {
        json!({ "frame": self })
    }

    /// Is every argument the tool needs there?
    pub fn complete(&self) -> bool {
        let has = |k: &str| self.args.get(k).is_some_and(|v| !v.is_null() && v != "");
        use crate::tools::ToolName as T;
        // A tool name no tool has (an old pending row) asks for nothing more.
        let Some(tool) = T::from_wire(&self.tool) else { return true };
        match tool {
            T::CreerNote | T::MemoriserSouvenir | T::MemoriserPreference => has("texte"),
            T::CreerRappel => has("texte") && has("echeance"),
            T::DemarrerMinuteur => has("duree_secondes"),
            T::SupprimerNote | T::SupprimerRappel | T::MarquerRappelFait | T::DesactiverPreference => has("id"),
            T::DemarrerSession => has("projet"),
            T::ActerDecision => has("projet") && has("texte"),
            T::AjouterAListe | T::RetirerDeListe => has("liste") && has("element"),
            T::LireListe | T::ViderListe => has("liste"),
            T::CreerProjet => has("nom"),
            T::ListerRappels
            | T::LireBriefingHebdo
            | T::ListerMinuteurs
            | T::ModifierMinuteur
            | T::AnnulerMinuteur
            | T::CreerRappelRecurrent
            | T::DeplacerRappel
            | T::ArreterRappelRecurrent
            | T::CreerReveil
            | T::ListerReveils
            | T::AnnulerReveil
            | T::ListerProjets
            | T::LireProjet
            | T::ModifierProjet
            | T::ListerNotes
            | T::LireTempsTravail
            | T::ListerPreferences
            | T::ChercherDansMemoire
            | T::ListerSouvenirs
            | T::SuspendreSession
            | T::ReprendreSession
            | T::ArreterSession => true,
        }
    }
}

/// What the next utterance does to a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// « oui », « vas-y », « d'accord », « c'est ça ».
    Yes,
    /// « non », « laisse tomber », « annule ».
    No,
    /// An argument given or corrected: the frame with it.
    Fill(Frame),
    /// A target described (« celui du dentiste »): to look up among the notes or reminders.
    Describe(String),
    /// One more of the same, after a write (« et des kiwis aussi »): run as it is.
    More(Frame),
    /// « cinq ou dix minutes »: asked which.
    Choose(String, String),
    /// Anything else: the frame closes and the words are a new turn.
    Other,
}

/// Words that open a correction (« non, à onze heures », « plutôt jeudi »).
const CORRECTION_HEADS: &[&[&str]] = &[
    &["non", "non"],
    &["ah", "non"],
    &["euh", "non"],
    &["non", "pardon"],
    &["non", "plutot"],
    &["non", "attends"],
    &["attends"],
    &["oui", "mais"],
    &["oui", "plutot"],
    &["ou", "plutot"],
    &["je", "voulais", "dire"],
    &["je", "veux", "dire"],
    &["plutot"],
    &["non"],
    &["pardon"],
    &["oui"],
    &["si"],
    &["mais"],
    &["en", "fait"],
    &["finalement"],
];

/// « oui oui c'est bon », « ouais crée-le », « bah oui vas-y », « non merci ça ira »: a yes or
/// a no with words around it that add nothing.
fn confirmation(words: &Words) -> Option<bool> {
    const YES: [&str; 10] =
        ["oui", "ouais", "ouai", "ok", "okay", "yes", "carrement", "parfait", "exactement", "volontiers"];
    const NO: [&str; 3] = ["non", "nan", "nope"];
    const FILLERS: [&str; 34] = [
        "oui",
        "ouais",
        "ok",
        "bah",
        "ben",
        "euh",
        "c'",
        "est",
        "bon",
        "ca",
        "carrement",
        "vas",
        "y",
        "va",
        "fais",
        "le",
        "la",
        "cree",
        "crees",
        "lance",
        "merci",
        "stp",
        "parfait",
        "exactement",
        "tout",
        "a",
        "fait",
        "ira",
        "ok",
        "go",
        "d'",
        "accord",
        "bien",
        "sur",
    ];
    let f = words.folded();
    let f: Vec<&str> = f.into_iter().skip_while(|w| matches!(*w, "bah" | "ben" | "euh" | "alors" | "bon")).collect();
    let first = *f.first()?;
    let rest_adds_nothing = f[1..].iter().all(|w| FILLERS.contains(w) || NO.contains(w) && first == "non");
    if YES.contains(&first) && rest_adds_nothing {
        Some(true)
    } else if NO.contains(&first)
        && f[1..]
            .iter()
            .all(|w| FILLERS.contains(w) || matches!(*w, "merci" | "laisse" | "tomber" | "pas" | "la" | "peine"))
    {
        Some(false)
    } else {
        None
    }
}

/// Words that drop the question whatever it asked.
const DROPS: &[&str] = &[
    "laisse tomber",
    "annule",
    "oublie",
    "oublie ca",
    "non merci",
    "pas la peine",
    "c'est pas la peine",
    "tant pis",
    "rien",
    "non rien",
    "stop",
    "arrete",
    "non laisse tomber",
    "non annule",
    "laisse",
];

/// Reads the reply to a frame. `now` is local; `heard`: a transcript.
pub fn reply(frame: &Frame, text: &str, heard: bool, now: NaiveDateTime, lexicon: &Lexicon) -> Reply {
    // A self-repair inside the reply is read as repaired (« jeudi euh non vendredi »); two
    // said for the slot asked are asked about.
    let repaired = match arthur_french::repair::repair(text, now) {
        arthur_french::repair::Repair::Repaired(t) => t,
        arthur_french::repair::Repair::Alternatives { first, second, .. } if frame.asking.is_some() && !frame.done => {
            return Reply::Choose(first, second);
        }
        _ => text.to_string(),
    };
    let words = if heard { Words::heard(&repaired) } else { Words::new(&repaired) };
    let folded = words.folded_text().replace("' ", "'");
    // « non finalement c'est pas la peine », « bon, laisse tomber »: dropped.
    let drop_inside =
        ["pas la peine", "laisse tomber", "oublie ca", "on oublie", "annule tout", "ca ira", "pas besoin"]
            .iter()
            .any(|d| folded.contains(d))
            && folded.split_whitespace().next().is_some_and(|w| {
                matches!(
                    w,
                    "non" | "finalement" | "bon" | "bof" | "ah" | "en" | "oh" | "laisse" | "pas" | "c'est" | "c'"
                )
            });
    if DROPS.contains(&folded.as_str()) || drop_inside {
        return if frame.done { Reply::Other } else { Reply::No };
    }
    if let Some(yes) = yes_no(&repaired).or_else(|| confirmation(&words)) {
        return match (yes, frame.done) {
            (_, true) => Reply::Other,
            (true, _) => Reply::Yes,
            (false, _) => Reply::No,
        };
    }
    // The correction's head taken off: what is left is the value.
    let f = words.folded();
    let mut skip = 0;
    let mut corrected = false;
    for head in CORRECTION_HEADS {
        if f.len() > head.len() && f.starts_with(head) {
            skip = head.len();
            corrected = true;
            break;
        }
    }
    // What opens a reply is not its content (« euh de sortir le chien », « bah 19 h »).
    while skip < f.len() && matches!(f[skip], "euh" | "ben" | "bah" | "alors" | "bon" | "disons" | "ah") {
        skip += 1;
    }
    // « pas Bruno, Benoît », « pas celui-là, l'autre »: the second is the value, and in a text
    // the first is what it replaces.
    let mut replaced: Option<String> = None;
    if f.get(skip) == Some(&"pas") {
        if let Some(k) =
            (skip + 1..f.len()).find(|&k| words.original[words.words[k - 1].end..words.words[k].start].contains(','))
        {
            replaced = Some(words.said_between(skip + 1, k));
            skip = k;
            corrected = true;
        }
    }
    // « et des kiwis aussi » right after an item was added: one more, on the same list (the
    // words' cleaning took « et » away in front; the original still has it).
    let opens_with_and = {
        let o = arthur_french::fold::fold(words.original.trim_start());
        o.starts_with("et ") || o.starts_with("puis ")
    };
    if frame.done && frame.tool == "ajouter_a_liste" && !corrected && opens_with_and {
        let body: Vec<&str> = f.iter().copied().filter(|w| *w != "aussi").collect();
        if !body.is_empty() {
            let start = 0;
            let end = if f.last() == Some(&"aussi") { f.len() - 1 } else { f.len() };
            let items = crate::understand::several_items(&words.said_between(start, end));
            let mut more = Frame::new("ajouter_a_liste", frame.args.clone(), None);
            more.args["element"] = json!(items[0]);
            more.then = items[1..]
                .iter()
                .map(|e| Call {
                    tool: "ajouter_a_liste".into(),
                    args: json!({ "liste": frame.args["liste"], "element": e }),
                })
                .collect();
            return Reply::More(more);
        }
    }
    if frame.done && !corrected {
        return Reply::Other;
    }
    let rest = &f[skip..];
    let said = words.said_between(skip, f.len());
    if rest.is_empty() {
        return Reply::Other;
    }
    // Another command, sure of itself, is a new turn (« quelle heure est-il ? »).
    let other = understand_as(
        &repaired,
        heard,
        chrono::TimeZone::from_utc_datetime(&chrono::Utc, &now),
        chrono_tz::UTC,
        lexicon,
    );
    let other_command = match &other.reading {
        Reading::Sure(Command::Tool(t)) => t.name() != frame.tool,
        Reading::Sure(Command::Told(_)) => true,
        _ => false,
    };
    let asking = frame.asking.clone().or_else(|| {
        // A correction of a yes-or-no proposal or of a write just done names its own slot.
        guess_slot(frame, rest, now)
    });
    let Some(mut slot) = asking else {
        return Reply::Other;
    };
    // « les courses », « bricolage »: a list's name, for a list command.
    if matches!(frame.tool.as_str(), "ajouter_a_liste" | "retirer_de_liste" | "lire_liste" | "vider_liste") {
        let span = strip_leads(
            rest,
            &["a", "sur", "dans", "la", "les", "ma", "mes", "liste", "de", "des", "du", "d'", "pour"],
        );
        let name = span.join(" ");
        let key = |s: &str| arthur_french::fold::fold(s).trim_end_matches('s').to_string();
        let known = lexicon
            .lists
            .iter()
            .chain(["courses".to_string(), "taches".to_string()].iter())
            .find(|l| key(l) == key(&name))
            .cloned();
        if let Some(liste) = known.filter(|_| span.len() <= 3) {
            let mut next = frame.clone();
            next.args["liste"] = json!(liste);
            for call in &mut next.then {
                call.args["liste"] = json!(liste);
            }
            next.asking = if next.complete() { None } else { next.asking.clone() };
            return Reply::Fill(next);
        }
    }
    // « demain à 9 h » where a text was asked and the moment is missing too: the moment.
    if slot == "texte" && frame.tool == "creer_rappel" && frame.args.get("echeance").is_none() {
        let span = strip_leads(rest, &["pour"]);
        if arthur_french::moment::moment(span, now).is_some() {
            slot = "echeance".to_string();
        }
    }
    let mut next = frame.clone();
    let value: Option<Value> = match slot.as_str() {
        "duree_secondes" => duration_of(rest).map(|s| json!(s)),
        "echeance" => {
            let span = strip_leads(rest, &["pour", "plutot", "mais"]);
            moment_parts(span, now).map(|(day, time)| {
                let old = frame
                    .args
                    .get("echeance")
                    .and_then(Value::as_str)
                    .and_then(|e| NaiveDateTime::parse_from_str(e, "%Y-%m-%dT%H:%M").ok());
                let date = day.or(old.map(|o| o.date())).unwrap_or(now.date() + chrono::Duration::days(1));
                let nine = NaiveTime::from_hms_opt(9, 0, 0).unwrap_or_default();
                let time = time.or(old.map(|o| o.time())).unwrap_or(nine);
                next.time_said = frame.time_said || parts_time_said(time, &day_time_words(span));
                json!(date.and_time(time).format("%Y-%m-%dT%H:%M").to_string())
            })
        }
        "id" => {
            let span = strip_leads(rest, &["le", "la", "numero", "n", "celui", "celle", "c'est"]);
            if let Some(n) = arthur_french::number::natural(span) {
                // « le 2 »: a number said, or the second of the candidates listed.
                if n > 0 && frame.candidates.contains(&n) || frame.candidates.is_empty() {
                    Some(json!(n))
                } else {
                    frame.candidates.get((n - 1) as usize).map(|id| json!(id))
                }
            } else if let Some(k) = rest.iter().find_map(|w| match *w {
                "premier" | "premiere" => Some(0),
                "deuxieme" | "second" | "seconde" => Some(1),
                "troisieme" => Some(2),
                "quatrieme" => Some(3),
                _ => None,
            }) {
                frame.candidates.get(k).map(|id| json!(id))
            } else if rest.contains(&"autre") && frame.candidates.len() == 2 {
                // « pas celui-là, l'autre »: the candidate that was not proposed.
                let current = frame.args.get("id").and_then(Value::as_i64);
                current.and_then(|c| frame.candidates.iter().find(|x| **x != c)).map(|id| json!(id))
            } else if rest.iter().any(|w| matches!(*w, "dernier" | "derniere")) {
                return Reply::Describe("@dernier".into());
            } else if !other_command {
                // « celui du dentiste », « la note sur le plombier »: a description.
                let described = strip_leads(
                    rest,
                    &[
                        "celui", "celle", "ceux", "du", "de", "la", "le", "les", "sur", "avec", "pour", "qui", "parle",
                        "concerne", "note", "rappel", "l'", "d'", "des",
                    ],
                );
                let start = f.len() - described.len();
                return Reply::Describe(words.said_between(start, f.len()));
            } else {
                None
            }
        }
        // « à la liste de courses », « sur la liste des tâches »: the list, not the item.
        "element" if matches!(rest.first(), Some(&("a" | "sur" | "dans"))) && rest.contains(&"liste") => {
            let span = strip_leads(rest, &["a", "sur", "dans", "la", "ma", "liste", "de", "des", "du", "d'"]);
            let start = f.len() - span.len();
            next.args["liste"] = json!(words.said_between(start, f.len()));
            next.asking = if next.args.get("element").is_some() { None } else { Some("element".into()) };
            return Reply::Fill(next);
        }
        "texte" | "element" if !other_command => {
            // « d'envoyer le dossier », « que le garage ferme à 18 h »: what leads a text in a
            // command leads it in a reply too.
            let lead = matches!(rest.first(), Some(&("de" | "d'" | "que" | "qu'" | "pour")));
            let body = if lead { words.said_between(f.len() - rest.len() + 1, f.len()) } else { said.clone() };
            let text = match (&replaced, frame.args.get("texte").and_then(Value::as_str)) {
                // « pas Bruno, Benoît » in « appeler Bruno »: the word replaced.
                (Some(old), Some(current)) if slot == "texte" && current.contains(old.as_str()) => {
                    current.replacen(old.as_str(), &body, 1)
                }
                _ if slot == "element" => crate::understand::bare_item(&body),
                _ => body,
            };
            (!text.trim().is_empty()).then(|| json!(text))
        }
        "projet" | "nom" | "liste" if !other_command => {
            let span = strip_leads(
                rest,
                &[
                    "sur", "le", "la", "les", "l'", "projet", "liste", "de", "du", "des", "d'", "celui", "celle",
                    "minuteur", "pour",
                ],
            );
            let start = f.len() - span.len();
            let name = words.said_between(start, f.len());
            (!name.is_empty()).then(|| json!(name))
        }
        _ => None,
    };
    // « mardi ou mercredi ? » → « mercredi », « cinq ou dix minutes ? » → « dix »: the choice
    // said, read as its slot reads it (a duration borrows the other choice's unit).
    let value = value.or_else(|| {
        let said_f = arthur_french::fold::fold(&said);
        let chosen = frame.choices.iter().find(|c| {
            let c = arthur_french::fold::fold(c);
            c == said_f || said_f.contains(&c) || c.split_whitespace().next() == said_f.split_whitespace().next()
        })?;
        match slot.as_str() {
            "duree_secondes" => {
                let unit = frame
                    .choices
                    .iter()
                    .filter_map(|c| c.split_whitespace().last())
                    .find(|u| u.starts_with("minute") || u.starts_with("heure") || u.starts_with("seconde"));
                let w = Words::new(chosen);
                duration_of(&w.folded())
                    .or_else(|| {
                        let with_unit = format!("{chosen} {}", unit?);
                        duration_of(&Words::new(&with_unit).folded())
                    })
                    .map(|s| json!(s))
            }
            "echeance" => None,
            _ => Some(json!(crate::understand::bare_item(chosen))),
        }
    });
    match value {
        Some(v) => {
            next.args[slot.as_str()] = v;
            next.asking = if next.complete() { None } else { next.asking.clone() };
            next.choices.clear();
            Reply::Fill(next)
        }
        None => Reply::Other,
    }
}

/// A duration said in a reply (« pendant dix minutes », « bah disons un quart d'heure »).
fn duration_of(words: &[&str]) -> Option<i64> {
    let span = strip_leads(
        words,
        &[
            "pour", "de", "d'", "en", "un", "minuteur", "pendant", "disons", "bah", "ben", "euh", "genre", "environ",
            "mets", "plutot", "mais", "alors",
        ],
    );
    arthur_french::duration::seconds(span)
        .or_else(|| {
            // « un quart d'heure » begins with « un ».
            let idx = words.len() - span.len();
            words.get(idx.saturating_sub(1)..).and_then(arthur_french::duration::seconds)
        })
        .filter(|s| *s > 0)
}

/// Was an hour said in a reply?
fn parts_time_said(_time: NaiveTime, said: &[String]) -> bool {
    !said.is_empty()
}

fn day_time_words(span: &[&str]) -> Vec<String> {
    // The hour counts as said when the reply holds a time: « à 9 h », « midi », « 20h30 ».
    span.iter()
        .filter(|w| {
            w.contains('h') && w.chars().any(|c| c.is_ascii_digit())
                || matches!(**w, "h" | "heure" | "heures" | "midi" | "minuit")
        })
        .map(|w| w.to_string())
        .collect()
}

/// The words without the leading ones in `leads` (« pour cinq minutes » → « cinq
/// minutes »).
fn strip_leads<'a, 'b>(words: &'b [&'a str], leads: &[&str]) -> &'b [&'a str] {
    let mut w = words;
    while let [first, rest @ ..] = w {
        if leads.contains(first) && !rest.is_empty() {
            w = rest;
        } else {
            break;
        }
    }
    w
}

/// The day and the hour a reply says (either may be missing).
fn moment_parts(span: &[&str], now: NaiveDateTime) -> Option<(Option<NaiveDate>, Option<NaiveTime>)> {
    let m = arthur_french::moment::moment(span, now)?;
    let rolled = m.issue == Some(arthur_french::MomentIssue::Rolled);
    let day_said = (m.at.date() != now.date() && !rolled)
        || (0..span.len()).any(|a| (a + 1..=span.len()).any(|b| arthur_french::moment::day(&span[a..b]).is_some()))
        || span.iter().any(|w| matches!(*w, "demain" | "aujourd'hui" | "dans" | "ce" | "cet"));
    let day = day_said.then(|| m.at.date());
    let time = m.time_said.then(|| m.at.time());
    (day.is_some() || time.is_some()).then_some((day, time))
}

/// The argument a correction names by its kind: a moment for a reminder's due time, a
/// duration for a timer, a name or a text otherwise.
fn guess_slot(frame: &Frame, rest: &[&str], now: NaiveDateTime) -> Option<String> {
    let span = strip_leads(rest, &["pour", "plutot", "mais"]);
    let has = |k: &str| frame.args.get(k).is_some();
    if has("echeance") && moment_parts(span, now).is_some() {
        return Some("echeance".into());
    }
    if has("duree_secondes") && arthur_french::duration::seconds(strip_leads(span, &["pour", "de"])).is_some() {
        return Some("duree_secondes".into());
    }
    if has("element") {
        return Some("element".into());
    }
    if has("texte") {
        return Some("texte".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 12, 3).unwrap().and_hms_opt(10, 0, 0).unwrap()
    }

    fn lexicon() -> Lexicon {
        Lexicon { projects: vec!["Atlas".into()], lists: vec!["courses".into()], timers: vec![] }
    }

    fn r(frame: &Frame, text: &str) -> Reply {
        reply(frame, text, false, now(), &lexicon())
    }

    #[test]
    fn a_missing_duration_is_filled() {
        let f = Frame::new("demarrer_minuteur", json!({}), Some("duree_secondes"));
        for (said, secs) in [
            ("cinq minutes", 300),
            ("un quart d'heure", 900),
            ("1 h 30", 5400),
            ("euh une demi-heure", 1800),
            ("pour 90 secondes", 90),
        ] {
            match r(&f, said) {
                Reply::Fill(next) => assert_eq!(next.args["duree_secondes"], secs, "{said}"),
                other => panic!("{said}: {other:?}"),
            }
        }
        assert_eq!(r(&f, "quelle heure est-il ?"), Reply::Other);
        assert_eq!(r(&f, "laisse tomber"), Reply::No);
    }

    #[test]
    fn a_proposed_hour_is_corrected_and_a_day_kept() {
        let mut f = Frame::new(
            "creer_rappel",
            json!({"texte": "appeler Luc", "echeance": "2026-12-04T09:00"}),
            Some("echeance"),
        );
        match r(&f, "non, à onze heures") {
            Reply::Fill(next) => assert_eq!(next.args["echeance"], "2026-12-04T11:00"),
            other => panic!("{other:?}"),
        }
        match r(&f, "plutôt jeudi") {
            Reply::Fill(next) => assert_eq!(next.args["echeance"], "2026-12-10T09:00"),
            other => panic!("{other:?}"),
        }
        assert_eq!(r(&f, "oui"), Reply::Yes);
        assert_eq!(r(&f, "non"), Reply::No);
        // After the write, only a correction is read.
        f.done = true;
        f.asking = None;
        assert_eq!(r(&f, "oui"), Reply::Other);
        assert!(matches!(r(&f, "non, à midi"), Reply::Fill(n) if n.args["echeance"] == "2026-12-04T12:00"));
    }

    #[test]
    fn a_target_is_named_or_described() {
        let f = Frame { candidates: vec![4, 7], ..Frame::new("supprimer_rappel", json!({}), Some("id")) };
        assert!(matches!(r(&f, "le 7"), Reply::Fill(n) if n.args["id"] == 7));
        assert!(matches!(r(&f, "le deuxième"), Reply::Fill(n) if n.args["id"] == 7));
        assert!(matches!(r(&f, "celui du dentiste"), Reply::Describe(d) if d == "dentiste"));
    }
}
