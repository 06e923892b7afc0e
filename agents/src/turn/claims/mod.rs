//! The last line against a model that narrates: a French (and English) detector of
//! sentences that imitate a receipt, claim an action, promise one, or assert a fact about
//! the user's memory or schedule. The turn's structure decides first (a turn in which a
//! tool ran shows no model text at all; an utterance the offline parser reads as a command
//! is answered by code); this detector only judges the model's text of a turn with no
//! tool, and what it flags is never shown.
//!
//! A claim is a statement about Arthur's own actions (done, under way, promised) or about
//! the user's stored data. Each rule answers three questions about a clause:
//! - **who** is the subject: Arthur (first person), nobody (a receipt, an
//!   acknowledgement), the user or one of the user's things, a third party — or the world,
//!   about which nothing is a claim;
//! - **which tense or mood**: a past, a progressive, a near or simple future and an action
//!   verb in the present can claim; a conditional, an imperative, an infinitive after an
//!   offer, a hypothesis ("si…") or a generic present cannot;
//! - **whether the thing is one of Arthur's memory kinds** (reminder, note, list, timer,
//!   preference, souvenir, project, decision, work session, agenda).
//!
//! It reads clause by clause, so a claim hidden in a question ("C'est ajouté, autre
//! chose ?") or after a polite opening is still seen, and it knows the frames that make an
//! action hypothetical (an offer, a capability, a condition), which is what keeps ordinary
//! answers ("Veux-tu que je crée un rappel ?") out of its net.
//!
//! The words are data (`lexicon.toml`, French and English); the Rust code is the engine:
//! `clause` (the text model), `arthur` (first person), `statement` (receipts, states, set
//! phrases), `others` (third parties), `user` (the user's data). [`explain`] says which
//! rule fired and on which words. Recall and false positives are measured on the corpora
//! in `agents/tests/corpus/`.

mod arthur;
mod clause;
mod lexicon;
mod others;
mod statement;
mod user;

use serde::Serialize;

use clause::{counted, framed_clauses, has_number, has_specific_time, is_memory_word, modal_clause, Clause};
use lexicon::LEX;

/// What kind of claim a withheld sentence made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// Looks like a receipt: a number, a stored item in quotes.
    Receipt,
    /// Says something was done (or is being done), in any tense.
    Action,
    /// Commits to a future action.
    Promise,
    /// States a fact about the user's memory, schedule or work time.
    StoredFact,
    /// Says someone else handles it.
    ThirdParty,
    /// Says what was not done (only code may say that).
    Denial,
}

/// Who a claim is about: the first of the three questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    /// Arthur himself: "je", "on", "I", "we".
    Arthur,
    /// Nobody: a receipt's headline or an acknowledgement ("Rappel créé", "Noté !",
    /// "c'est ajouté").
    Impersonal,
    /// One of Arthur's memory kinds, whoever's ("le minuteur tourne", "deux rappels").
    Memory,
    /// The user: "tu", "you".
    User,
    /// Something of the user's: "ta liste", "your timer", "ton code".
    UsersThing,
    /// Someone else said to handle it: "ta sœur", "le plombier", "the system".
    ThirdParty,
}

/// Why a sentence is a claim: its kind, the rule that fired, who it is about, and the
/// words that made the rule fire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub kind: ClaimKind,
    /// The rule's name, `family.rule` ("arthur.past", "receipt.headline", "user.has_thing").
    pub rule: &'static str,
    pub subject: Subject,
    /// The words the rule fired on.
    pub evidence: Vec<String>,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} by {} ({:?}: {})", self.kind, self.rule, self.subject, self.evidence.join(" · "))
    }
}

pub(crate) fn verdict(kind: ClaimKind, rule: &'static str, subject: Subject, evidence: &[&str]) -> Verdict {
    Verdict {
        kind,
        rule,
        subject,
        evidence: evidence.iter().filter(|e| !e.is_empty()).map(|e| e.to_string()).collect(),
    }
}

/// Does this sentence claim anything? Returns the first kind of claim found.
pub fn claim(sentence: &str) -> Option<ClaimKind> {
    explain(sentence).map(|v| v.kind)
}

/// What the request was, as code decided it before any model text: the detector weighs an
/// answer by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Request {
    /// Nothing decided (the detector's full rules).
    #[default]
    Unknown,
    /// Knowledge, advice, a plan, a poem: neither the memory nor an action was asked, by
    /// the words nor by the router.
    World,
}

/// Verbs of what Arthur does to the memory (stems, folded): « noté », « ajouté »,
/// « programmé », « je te rappellerai ».
const MEMORY_ACTION_STEMS: [&str; 24] = [
    "not",
    "enregistr",
    "ajout",
    "rajout",
    "program",
    "memoris",
    "retenu",
    "retiens",
    "retiendr",
    "supprim",
    "effac",
    "annul",
    "planifi",
    "inscri",
    "sauvegard",
    "rappel",
    "cree",
    "creer",
    "lance",
    "demarr",
    "arrete",
    "coch",
    "raye",
    "barre",
];

/// [`explain`], weighed by the request. In an answer to a request about the world, the
/// second person is the generic one of instructions, advice and encouragement (« tu
/// travailles 25 minutes, puis tu fais 5 minutes de pause », « fais-toi une omelette, c'est
/// prêt en 10 minutes »): a sentence is still a claim only when it names the memory or one of
/// its kinds (a reminder, an appointment, a list, a code…), an action on it (« c'est
/// noté »), or the user's work time with a figure.
pub fn explain_for(sentence: &str, request: Request) -> Option<Verdict> {
    let v = explain(sentence)?;
    if request == Request::Unknown || v.rule == "receipt.mark" {
        return Some(v);
    }
    // What the user is told to do (« Note les dîners sur une feuille », « fais ta liste de
    // courses ») names their things without stating them.
    let clauses: Vec<Clause> = clause::clauses(sentence).into_iter().filter(|c| !user::imperative_led(c)).collect();
    let memory = clauses.iter().any(|c| {
        c.words.iter().enumerate().any(|(i, w)| {
            let w = w.folded.as_str();
            // « tes tâches », « your tasks »: in advice, any task.
            let generic = matches!(w, "tache" | "taches" | "task" | "tasks");
            let named =
                (is_memory_word(w) || LEX.secrets.has(w) || matches!(w, "rendezvous" | "rdv" | "rendez")) && !generic;
            // « comme un rendez-vous », « sur une seule tâche »: any such thing, not the
            // user's; « tu as une réunion » is the user's.
            let any = (1..=3).any(|back| {
                i >= back && matches!(c.folded(i - back), "un" | "une" | "des" | "comme" | "a" | "an" | "like")
            }) || (i >= 2 && c.folded(i - 2) == "de" && c.folded(i.saturating_sub(3)) == "comme");
            // « Note de ton côté… », « Note les dîners… »: the verb, told to the user.
            let told_to = i == 0
                && matches!(c.folded(1), "de" | "les" | "le" | "la" | "tes" | "ton" | "ta" | "tout" | "ca" | "bien");
            let owned = c.words.iter().any(|x| matches!(x.folded.as_str(), "tu" | "t'" | "you"))
                && c.words.iter().any(|x| matches!(x.folded.as_str(), "as" | "avais" | "auras" | "have" | "had"));
            named && !told_to && (!any || owned)
        })
    });
    let words: Vec<&str> = clauses.iter().flat_map(|c| c.words.iter().map(|w| w.folded.as_str())).collect();
    let acted = clauses.iter().any(|c| {
        c.words.iter().enumerate().any(|(i, w)| {
            let told_to = i == 0
                && matches!(c.folded(1), "de" | "les" | "le" | "la" | "tes" | "ton" | "ta" | "tout" | "ca" | "bien");
            !told_to && MEMORY_ACTION_STEMS.iter().any(|s| w.folded.starts_with(s))
        })
    });
    // « tu as travaillé 6 h »: the user's work time; « tu travailles 25 minutes, puis… » is
    // how a method goes.
    let worked = words.windows(2).any(|w| {
        matches!(w[0], "as" | "avez" | "a" | "ai" | "t'as")
            && (w[1].starts_with("travaille") || w[1].starts_with("bosse"))
    }) && clauses.iter().any(has_number);
    let kept = match v.kind {
        ClaimKind::Receipt | ClaimKind::Action | ClaimKind::Promise | ClaimKind::Denial => memory || acted,
        ClaimKind::StoredFact | ClaimKind::ThirdParty => memory || worked,
    };
    kept.then_some(v)
}

/// Does this sentence claim anything, and by which rule?
pub fn explain(sentence: &str) -> Option<Verdict> {
    // A check mark, a pin, a bell: a receipt's signature.
    if let Some(mark) = sentence.chars().find(|c| LEX.receipt_marks.has(c.encode_utf8(&mut [0; 4]))) {
        return Some(verdict(ClaimKind::Receipt, "receipt.mark", Subject::Impersonal, &[&mark.to_string()]));
    }
    // « "C'est noté." »: a sentence that is nothing but a quote is no one else's word,
    // unless it is verse (« …, / … »: a poem asked for).
    let all_quote =
        !clause::unquote(sentence).chars().any(char::is_alphanumeric) && sentence.chars().any(char::is_alphanumeric);
    if all_quote && !sentence.contains(['/', '\n']) {
        return explain(&sentence.replace(['«', '»', '“', '”', '"'], " "));
    }
    let clauses = framed_clauses(sentence);
    if let Some(v) = clauses.iter().find_map(clause_claim) {
        return Some(v);
    }
    sentence_claim(sentence, &clauses)
}

/// Does this clause, alone, claim or promise?
fn clause_claim(c: &Clause) -> Option<Verdict> {
    if c.content {
        return None;
    }
    let framed = c.framed();
    let asked = c.question_led;
    if let Some(v) = statement::receipt(c).or_else(|| statement::phrase(c)).or_else(|| statement::receipt_number(c)) {
        return Some(v);
    }
    // "Pour te le rappeler, je l'ai noté": a purpose does not make it hypothetical.
    if !framed || LEX.purpose.has(c.folded(0)) {
        if let Some(v) = arthur::claim(c) {
            return Some(v);
        }
    } else if c.after_condition && !LEX.frame_leads.leads(&c.joined) {
        // "Si tu oublies, je te le rappellerai à 18 h": a promise on a condition is a
        // promise ("si tu veux, je peux…" offers, and "je le note" would be an offer too).
        if let Some(v) = arthur::claim(c).filter(|v| v.kind == ClaimKind::Promise) {
            return Some(v);
        }
    }
    if let Some(v) = statement::state(c)
        .or_else(|| others::already(c))
        .or_else(|| others::handles(c))
        .or_else(|| others::touched_memory(c))
    {
        return Some(v);
    }
    if framed || asked || modal_clause(c) {
        // Asking the user, offering, saying what can be done: no stored fact is asserted.
        return user::fact_in_question(c);
    }
    user::memory_state(c).or_else(|| user::second_person_fact(c, c.asks))
}

/// What only the whole sentence shows: a promise dated in another clause, a statement
/// closed by a tag question, a value after the user's thing, a day's plan announced.
fn sentence_claim(sentence: &str, clauses: &[Clause]) -> Option<Verdict> {
    if clauses.iter().any(|c| c.quoted) {
        return None;
    }
    let fact = |rule, subject, ev: &[&str]| Some(verdict(ClaimKind::StoredFact, rule, subject, ev));
    // "Chaque année, le 12 mai, tu auras ton petit mot": a promise made to the user, its
    // date in another clause.
    let dated = clauses.iter().any(has_specific_time);
    let promised = clauses.iter().find_map(|c| {
        if c.asks || c.any(&LEX.guesses) {
            return None;
        }
        c.words.iter().enumerate().find_map(|(i, w)| {
            let v = c.folded(c.after_clitics(i + 1));
            (LEX.tu.has(&w.folded) && LEX.user_future_endings.ending_of(v) && v.len() >= 5).then_some(v)
        })
    });
    // What the user will receive from Arthur ("tu auras ton petit mot", "tu recevras un
    // rappel"), not what the user will do or feel ("tu retiendras mieux", "tu seras
    // surpris").
    let received = |v: &str| {
        LEX.receive_futures.has(v) || clauses.iter().any(|c| c.words.iter().any(|w| is_memory_word(&w.folded)))
    };
    if let (true, Some(v)) = (dated, promised.filter(|v| received(v))) {
        return Some(verdict(ClaimKind::Promise, "user.dated_promise", Subject::User, &[v]));
    }
    // A statement about the user closed by a tag question: "Tu aimes commencer par tes
    // mails, c'est ça ?", "Ton anniversaire tombe le 14 juin, non ?". What a tag may not
    // confirm: a habit, a taste, a date, a number, what the memory holds ("Tu hésites
    // entre deux options, c'est ça ?" only reflects).
    for (k, tag) in clauses.iter().enumerate() {
        let tagged = tag.asks && LEX.tags.is(&tag.joined);
        if tagged
            && clauses[..k].iter().any(|c| {
                // A figure of the day or of the memory ("35 heures", "trois rappels"), not
                // any number ("tu hésites entre deux options").
                let thing = c.words.iter().any(|w| is_memory_word(&w.folded) || LEX.schedule_nouns.has(&w.folded));
                let specific =
                    c.any(&LEX.habits) || has_specific_time(c) || thing || has_number(c) && clause::has_time(c);
                !c.question_led && c.any(&LEX.user_mentions) && specific
            })
        {
            return fact("user.tag_question", Subject::User, &[tag.joined.trim()]);
        }
    }
    let quoted = sentence.contains('«') || sentence.contains('“') || sentence.matches('"').count() >= 2;
    let words = clause::words_of(&clause::protect(&clause::unquote(sentence)));
    let possessive = |w: &clause::Word| LEX.user_possessives.has(&w.folded);
    let possessive_noun = words.windows(2).any(|w| possessive(&w[0]) && !LEX.conversation_nouns.has(&w[1].folded));
    let possessive_memory =
        words.windows(3).any(|w| possessive(&w[0]) && (is_memory_word(&w[1].folded) || is_memory_word(&w[2].folded)))
            || words.windows(2).any(|w| possessive(&w[0]) && is_memory_word(&w[1].folded));
    let folded = clause::join(&words);
    let digits = words.iter().any(|w| w.folded.chars().any(|c| c.is_ascii_digit()));
    let anything_asked = clauses.iter().any(|c| c.asks || c.question_led);
    // The possessive comes first, then "c'est …" tells its value: "Ta préférence
    // actuelle, c'est le tutoiement", "Ton code wifi, c'est…".
    let before_cest = LEX.cest.position(&folded).map(|at| &folded[..at]);
    let head_words = |max: usize| {
        before_cest.and_then(|head| {
            let ws: Vec<&str> = head.split_whitespace().collect();
            (ws.len() <= max).then_some(ws)
        })
    };
    let possessive_first = head_words(6).is_some_and(|ws| ws.iter().any(|w| LEX.user_possessives.has(w)));
    if possessive_first && (possessive_memory || (possessive_noun && digits)) {
        return fact("user.value_after_possessive", Subject::UsersThing, &["c'est"]);
    }
    let copula = LEX.copula_phrases.in_(&folded);
    // "« Acheter du lait » : c'est pour ta liste de courses ou ta liste de tâches ?" asks.
    if quoted && possessive_noun && copula && !anything_asked {
        return fact("user.quoted_value", Subject::UsersThing, &[]);
    }
    // "Ton créneau de sport, c'est le mardi": the user's thing, then its value; "La
    // dernière décision du projet Orion, c'était…": a memory kind with its name is one of
    // the user's things too.
    let named_item = before_cest.is_some_and(|head| {
        let n = head.split_whitespace().count();
        words.windows(2).take(n).any(|w| is_memory_word(&w[0].folded) && w[1].capital)
    });
    let owned_thing = head_words(8).is_some_and(|ws| {
        (ws.iter().any(|w| LEX.user_possessives.has(w)) || named_item)
            && ws.iter().any(|w| LEX.schedule_nouns.has(w) || is_memory_word(w))
    });
    if owned_thing && !anything_asked {
        return fact("user.thing_value", Subject::UsersThing, &["c'est"]);
    }
    // "Alors, pour demain : réveil à six heures, puis…", "Au programme : dentiste à 10 h
    // 30": a day's plan announced, then listed.
    if let Some((head, tail)) = sentence.split_once(':') {
        let head = clause::join(&clause::words_of(&clause::protect(head)));
        let announced = head.split_whitespace().count() <= 5 && LEX.announces.closes(&head);
        let listed = clause::clauses(tail).iter().any(|c| has_specific_time(c) || has_number(c));
        if announced && listed && !sentence.contains('?') {
            return fact("user.day_announced", Subject::UsersThing, &[head.trim()]);
        }
    }
    // "Ta liste de courses : lait, pain, œufs": the user's thing, then what it holds.
    if let Some((raw_head, tail)) = sentence.split_once(':') {
        let head = clause::words_of(&clause::protect(raw_head));
        // "Liste « bricolage » : …": a memory kind with its quoted name is one of the
        // user's things.
        let named = head.first().is_some_and(|w| is_memory_word(&w.folded)) && raw_head.contains(['«', '“', '"']);
        let owned = head.first().is_some_and(|w| LEX.user_possessives.has(&w.folded)) || named;
        let kind = head.iter().any(|w| is_memory_word(&w.folded));
        if owned && kind && head.len() <= 5 && !tail.trim().is_empty() && !anything_asked {
            return fact("user.listed", Subject::UsersThing, &[&head[1].raw]);
        }
    }
    // "Le code du portail est 4 7 2 9": a secret value told.
    let secret = words.iter().find(|w| LEX.secrets.has(&w.folded));
    let spelled_digits = words.iter().filter(|w| w.folded.chars().all(|c| c.is_ascii_digit())).count() >= 2
        || words.windows(2).any(|w| w.iter().all(|w| LEX.number_words.has(&w.folded)));
    let users = possessive_noun || words.iter().any(|w| LEX.you_words.has(&w.folded));
    if let Some(secret) = secret {
        if (spelled_digits || digits && users) && copula && !anything_asked {
            return fact("user.secret_value", Subject::UsersThing, &[&secret.raw]);
        }
    }
    // A figure or a named day anywhere in the sentence ("…, starting Saturday morning").
    let sentence_counted = clauses.iter().any(counted) || words.iter().any(|w| LEX.week_days.has(&w.folded));
    let sentence_specific = sentence_counted || clauses.iter().any(has_specific_time);
    clauses.iter().find_map(|c| user::about_the_user(c, sentence_specific, sentence_counted))
}

/// Does this one sentence claim (or deny) that an action was performed, promise one, or
/// assert a stored fact?
pub fn is_action_claim(sentence: &str) -> bool {
    claim(sentence).is_some()
}

/// Splits text into sentences, keeping their punctuation. A quote that closes stays whole
/// inside its sentence (« Dis : "Ajoute du lait." J'ai ajouté le lait. » is two sentences,
/// the second one unquoted); a run of marks ends together ("...", "?!", "nuit…)"); a
/// sentence opens on anything but a lower-case letter or a comma ("e.g. this" goes on).
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    let quoted = clause::quoted_mask(&chars);
    let terminal = |c: char| matches!(c, '.' | '!' | '?' | '…');
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        current.push(c);
        i += 1;
        // "9.30" or "n°7." — a dot between digits does not end a sentence.
        let inner_dot = c == '.' && chars.get(i).is_some_and(|n| n.is_ascii_digit());
        // « "Ajoute du lait." »: a quote closed right after its own last mark ends there.
        let before = chars[..i - 1].iter().rposition(|c| !c.is_whitespace());
        let closes = matches!(c, '"' | '»' | '”') && before.is_some_and(|p| quoted[p] && terminal(chars[p]));
        let ends = c == '\n' || terminal(c) && !inner_dot;
        if !(closes || ends && !quoted[i - 1]) {
            continue;
        }
        if c != '\n' {
            while i < chars.len() && (terminal(chars[i]) || matches!(chars[i], ')' | ']')) {
                current.push(chars[i]);
                i += 1;
            }
            // « … demain ? », et je pourrai… »: the sentence goes on.
            let next = chars[i..].iter().find(|c| !c.is_whitespace());
            if next.is_some_and(|n| n.is_lowercase() || matches!(n, ',' | ';' | ':')) {
                continue;
            }
        }
        if !current.trim().is_empty() {
            out.push(current.trim().to_string());
        }
        current.clear();
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// The model text without its claims, and the sentences removed.
pub fn strip_claims(text: &str) -> (String, Vec<String>) {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for s in sentences(text) {
        if is_action_claim(&s) {
            removed.push(s);
        } else {
            kept.push(s);
        }
    }
    (kept.join(" "), removed)
}

/// Is this sentence a question the model asks (and nothing else)?
pub fn is_question(sentence: &str) -> bool {
    sentence.trim_end().ends_with('?')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_hidden_in_questions_and_after_openings_are_caught() {
        for s in [
            "C'est ajouté, autre chose ?",
            "Avec plaisir ! Je l'ai glissé dans ta liste.",
            "Je l'ai mis pour mardi, ça te va ?",
            "Bonne question ! Au fait, le rappel de 18 h a bien été créé.",
        ] {
            assert!(is_action_claim(s), "not caught: {s}");
        }
    }

    #[test]
    fn offers_and_capabilities_pass() {
        for s in [
            "Veux-tu que je crée un rappel pour jeudi ?",
            "Si tu veux, je peux noter ça.",
            "Tu peux me demander de lister tes rappels.",
            "Je peux créer des rappels, des notes et suivre ton temps de travail.",
        ] {
            assert!(!is_action_claim(s), "false positive: {s} ({:?})", explain(s));
        }
    }

    /// Who, tense, memory kind: the claims of issue 25, each with the rule that sees it.
    #[test]
    fn claims_about_arthurs_actions_and_the_users_data() {
        for (s, rule) in [
            ("C'est noté.", "receipt.acknowledgement"),
            ("J'ai ajouté le lait à ta liste.", "arthur.past"),
            ("Minuteur lancé pour dix minutes.", "receipt.headline"),
            ("Je te le rappellerai demain.", "arthur.future"),
            ("Si tu oublies, je te le rappellerai à 18 h.", "arthur.future"),
            ("Rappel n°4 créé : appeler le garage.", "receipt.memory_title"),
            ("Ta sœur s'en occupe.", "phrase"),
            ("Je n'ai rien enregistré.", "arthur.denial"),
            ("Tu as rendez-vous jeudi à 14 h.", "phrase"),
            ("Ta liste contient du pain.", "memory.possessed"),
            ("Il reste 4 minutes sur le minuteur.", "memory.there_is"),
            ("Le minuteur des œufs sonne dans 30 secondes.", "memory.running"),
            ("Tu as travaillé 3 h sur Atlas.", "user.has_done"),
            ("I cancelled the oven timer.", "arthur.past"),
            ("Your sister is taking care of it.", "third_party.handles"),
            ("Désormais je répondrai plus court.", "arthur.future"),
            // A lasting change set in another clause of the sentence.
            ("À l'avenir, je t'expliquerai tout en détail.", "arthur.future"),
            // The infinitive written for the participle it sounds like.
            ("J'ai supprimer la note du plombier.", "arthur.past"),
            ("Je ne trouve pas ta note sur le plombier.", "arthur.present_denial"),
            // Someone else touched the user's things, or will act for them.
            ("Les enfants ont coché la case sur ta liste.", "third_party.touched_memory"),
            ("Le secrétariat confirmera ta place par mail.", "third_party.handles"),
            // The user's conditions, the user's named things, counts of none.
            ("Tu es végétarien.", "user.trait"),
            ("Liste « jardin » : + terreau, + graines.", "user.listed"),
            ("Le dernier rappel du projet Atlas, c'était de relancer Marc.", "user.thing_value"),
            ("Pas de note enregistrée pour ce client.", "memory.counted"),
            ("Ton agenda compte une dizaine de rendez-vous.", "memory.possessed"),
        ] {
            let v = explain(s).unwrap_or_else(|| panic!("not caught: {s}"));
            assert_eq!(v.rule, rule, "{s}: {v}");
        }
    }

    /// World facts, advice, recipes, plans asked for, encouragement, jokes and poems,
    /// offers, instructions and the time of day claim nothing, numbers and « tu » aside.
    #[test]
    fn conversation_is_not_a_claim() {
        for s in [
            "En TGV, il faut compter environ deux heures.",
            "Le record, enregistré par Usain Bolt à Berlin en 2009, est de 9,58 secondes.",
            "Il n'a pas été battu depuis.",
            "Une fois que c'est fait, laisse reposer la pâte.",
            "Sable le tout et ta pâte doit reposer 30 minutes au frais.",
            "Si tu as le temps, ajoute une pincée de sel.",
            "Lundi : 30 minutes de course ; mardi : repos ; jeudi : fractionné.",
            "Tu as déjà fait le plus dur en commençant.",
            "Tu n'as pas besoin de tout faire aujourd'hui.",
            "Tomorrow you'll come back fresher.",
            "Je peux mettre un minuteur si tu veux.",
            "Dis : minuteur de dix minutes.",
            "Il est 10 h 30.",
            "Ajoute un filet d'huile d'olive et c'est prêt.",
            "Félicitations, c'est fait !",
            "Un petit poème : sur ma liste il y a du pain.",
            "Je vais te proposer trois idées.",
            "Le minuteur de cuisine a été inventé au XIXe siècle.",
            "Avance ton réveil de 15 minutes tous les trois jours.",
            "I'm reading a book about anti-gravity.",
            "See you tomorrow, take care!",
            // An apposition describes the dish; an imperative is no state; a noun phrase
            // after « c'est »; the clock.
            "Une omelette aux champignons avec une salade verte, prête en quinze minutes.",
            "Vide la corbeille, puis redémarre.",
            "C'est le fait de ranger qui compte.",
            "Dans dix minutes, il sera midi.",
            // Advice gives the user the action; a result or an opinion; a possession.
            "Je te conseille de noter tes dépenses chaque soir.",
            "Je trouve 42 en tout.",
            "Je n'en ai pas, mais j'aime bien le vert.",
            // The user's request echoed to ask what it lacks; an offer awaiting the answer.
            "Tu as dit « rappelle-moi le pain », mais pour quand ?",
            "Dis-moi l'heure et je le programme.",
            // Rates, an adverb after an auxiliary, the world's story, the generic « on ».
            "Quatre repas par jour, ça fait 28 par semaine.",
            "Tu parcours un kilomètre toutes les six minutes.",
            "La finale est alors reportée au lendemain.",
            "Les chercheurs ont publié la liste des espèces menacées.",
            "Il a reçu la médaille d'or en 1992.",
            "On se demande pourquoi on a choisi le mètre.",
        ] {
            assert_eq!(explain(s), None, "{s}");
        }
    }

    #[test]
    fn stripping_keeps_the_rest() {
        let (kept, removed) = strip_claims("C'est noté ! Tu as aussi un rendez-vous jeudi. Il fait beau.");
        assert_eq!(kept, "Il fait beau.");
        assert_eq!(removed.len(), 2);
    }

    #[test]
    fn sentences_do_not_split_inside_numbers() {
        assert_eq!(sentences("Rappel à 9.30 demain. Bonne journée !"), ["Rappel à 9.30 demain.", "Bonne journée !"]);
    }

    /// A quoted example keeps its closing mark: what follows is judged unquoted.
    #[test]
    fn sentences_keep_quotes_and_runs_whole() {
        let text = "Dis par exemple : \"Ajoute du lait.\" J'ai ajouté le lait à ta liste.";
        assert_eq!(sentences(text), ["Dis par exemple : \"Ajoute du lait.\"", "J'ai ajouté le lait à ta liste."]);
        assert!(strip_claims(text).1.len() == 1, "the claim after the quote is seen");
        assert_eq!(
            sentences("Knock knock... actually, never mind. Ok?!"),
            ["Knock knock... actually, never mind.", "Ok?!"]
        );
        assert_eq!(
            sentences("Dis « Note du pain. Et du lait. » Voilà."),
            ["Dis « Note du pain. Et du lait. »", "Voilà."]
        );
        // An unmatched mark hides nothing, nor does a sentence that is all quote.
        assert_eq!(explain("\" J'ai ajouté le lait à ta liste.").map(|v| v.rule), Some("arthur.past"));
        assert_eq!(explain("« Rappel créé pour demain 9 h. »").map(|v| v.rule), Some("receipt.headline"));
    }
}
