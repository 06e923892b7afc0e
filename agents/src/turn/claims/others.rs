//! Who = someone else: a third party said to handle the user's request ("ta sœur s'en
//! occupe", "le plombier a été prévenu", "Paul a confirmé qu'il s'occupait des billets"),
//! which explains an inaction Arthur cannot vouch for.

use super::clause::{
    has_number, has_specific_time, has_time, is_memory_word, is_participle, is_participle_after_aux, matches_state,
};
use super::clause::{is_number, modal_clause, Clause};
use super::lexicon::LEX;
use super::{verdict, ClaimKind, Subject, Verdict};

fn hit(rule: &'static str, ev: &[&str]) -> Option<Verdict> {
    Some(verdict(ClaimKind::ThirdParty, rule, Subject::ThirdParty, ev))
}

/// "déjà" + a participle: "le dossier est déjà réglé", "ta banque a déjà reçu".
pub(super) fn already(c: &Clause) -> Option<Verdict> {
    // "Tu as déjà fait le plus dur": the user's own deed, unless it is about the memory.
    let users_deed = super::user::user_subject(c).is_some() && !c.words.iter().any(|w| is_memory_word(&w.folded));
    if users_deed {
        return None;
    }
    for (i, w) in c.words.iter().enumerate() {
        if LEX.already.has(&w.folded) {
            if let Some(next) = c.words.get(c.after_clitics(i + 1)) {
                // "déjà réglé", "already added", "already handling it".
                let ing = next.raw.ends_with("ing") && next.raw.len() > 5;
                if is_participle(&next.raw) || matches_state(&next.raw) || ing {
                    return hit("third_party.already", &[&w.raw, &next.raw]);
                }
            }
        }
    }
    None
}

/// Someone else handles it: "ton médecin a confirmé", "c'est ta sœur qui gère", "le
/// syndic a transmis ta demande", "Le restaurant a confirmé ta réservation à 20 h".
pub(super) fn handles(c: &Clause) -> Option<Verdict> {
    if c.question_led
        || c.asks
        || c.framed()
        || modal_clause(c)
        || c.any(&LEX.generic_markers)
        || super::clause::historical(c)
    {
        return None;
    }
    let named = c.words.iter().enumerate().find(|(i, w)| {
        (LEX.third_parties.has(&w.folded) && (!LEX.indefinite.has(c.before(*i)) || LEX.te.in_(&c.joined)))
            || (*i > 0 && w.capital && w.folded != "i")
    });
    let pending = has_time(c) || LEX.pending.in_(&c.joined);
    let future = c.any(&LEX.future_aux);
    let phrase = LEX.handling_phrases.found_in(&c.joined);
    let handlings: Vec<(usize, &super::clause::Word)> = c
        .words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            // "takes about eight minutes to reach Earth": an English infinitive too; "gère"
            // is no infinitive (none has « è »).
            let infinitive =
                LEX.infinitive_endings.ending_of(&w.folded) && !w.raw.contains('è') || c.before(*i) == "to";
            // "six pays", "le rappel": after a determiner or a number, a noun.
            let noun = LEX.determiners.has(c.before(*i)) || *i > 0 && is_number(&c.words[i - 1]);
            !noun
                && (!infinitive || future)
                && (LEX.handling_stems.stem_of(&w.folded) || LEX.action_infinitives.has(&w.folded))
        })
        .collect();
    let past_action =
        c.words.iter().enumerate().any(|(i, w)| {
            LEX.third_person_aux.has(&w.folded) && is_participle_after_aux(c.raw(c.after_clitics(i + 1)))
        });
    let about_user = c.any(&LEX.user_words);
    // "La mairie t'enverra le formulaire lundi", "le garage te rappellera": what someone
    // will do to the user.
    let to_user_future = c.words.windows(2).find(|w| {
        LEX.to_you.has(&w[0].folded) && LEX.third_future_endings.ending_of(&w[1].folded) && w[1].folded.len() > 4
    });
    // With its day ("lundi", "demain"), it is an appointment on record; without, advice
    // ("une appli météo te donnera les prévisions").
    let to_user_future = to_user_future.filter(|_| has_specific_time(c));
    if let (Some((_, who)), Some(w)) = (named, to_user_future) {
        return hit("third_party.will_do_to_user", &[&who.raw, &w[1].raw]);
    }
    // "Le pôle réservation confirmera ton créneau": a service named by its noun, the
    // subject of a future done for the user.
    let will_do =
        future || handlings.iter().any(|(_, w)| LEX.third_future_endings.ending_of(&w.folded) && w.folded.len() > 4);
    let service = (c.words.len() > 2
        && LEX.the.has(c.folded(0))
        && !is_memory_word(c.folded(1))
        && !LEX.subject_pronouns.has(c.folded(1))
        && will_do
        && about_user)
        .then(|| (1, &c.words[1]));
    if let Some((at, who)) = named.or(service) {
        // The one named is the subject, before the verb: in "il a reçu le prix Nobel",
        // "rappelle-toi que l'eau bout à 100 °C", what comes after is the object; in what
        // is pending or to come ("va s'occuper de caler ça avec Paul") it is a party to it.
        let handling = handlings.iter().copied().find(|(k, _)| at < *k || will_do || pending);
        let verb = handling.map(|(_, w)| w.raw.as_str()).or(phrase);
        if let Some(verb) = verb {
            if about_user || pending || past_action || future || phrase.is_some() {
                return hit("third_party.handles", &[&who.raw, verb]);
            }
        }
        if past_action && about_user {
            return hit("third_party.did_for_user", &[&who.raw]);
        }
    }
    // "Le restaurant a confirmé ta réservation pour quatre personnes à 20 h".
    if past_action && about_user && (has_specific_time(c) || has_number(c)) {
        return hit("third_party.did_for_user", &[]);
    }
    None
}

/// Someone else did something to one of the memory's things: "Thomas a consulté ta liste
/// de tâches", "Le serveur a supprimé les anciennes notes", "Your roommate crossed coffee
/// off the shared list". Arthur cannot vouch for what he did not see.
pub(super) fn touched_memory(c: &Clause) -> Option<Verdict> {
    if c.question_led
        || c.asks
        || c.framed()
        || modal_clause(c)
        || c.any(&LEX.generic_markers)
        || super::clause::historical(c)
    {
        return None;
    }
    // The verb: a third-person past ("a consulté", "ont coché") or an English simple past.
    let verb = c.words.iter().enumerate().find_map(|(i, w)| {
        let next = c.after_clitics(i + 1);
        // A participle by its form ("consulté", "reçu"): the English "a focus session" has
        // the article, not the auxiliary.
        if LEX.third_person_aux.has(&w.folded) && is_participle(c.raw(next)) && !LEX.been.has(c.raw(next)) {
            Some((i, next))
        } else if i > 0 && w.raw.ends_with("ed") && is_participle(&w.raw) {
            Some((i, i))
        } else {
            None
        }
    })?;
    let (aux, participle) = verb;
    // What is done to a stored thing: changed ("coché", "supprimé") or read ("consulté",
    // "reçu"); "ont publié la liste des espèces" is the world's.
    let act = c.raw(participle);
    if !matches_state(act) && !LEX.memory_reads.has(act) {
        return None;
    }
    // Its subject: a noun or a name, not a pronoun ("il a plu", "on a choisi", "tu as").
    let subject = &c.words[..aux];
    let someone = !subject.is_empty()
        && subject.iter().any(|w| {
            !LEX.subject_pronouns.has(&w.folded)
                && !LEX.first_person.has(&w.folded)
                && !LEX.clitics.has(&w.folded)
                && !LEX.determiners.has(&w.folded)
                && !LEX.user_words.has(&w.folded)
        });
    // What it was done to: one of the memory's things, the user's or a definite one ("ta
    // liste", "les anciennes notes"), not any ("une liste d'exercices").
    let thing = c.words[participle + 1..].iter().enumerate().find(|(k, w)| {
        let at = participle + 1 + k;
        let det = (at.saturating_sub(3)..at)
            .map(|d| c.folded(d))
            .find(|d| LEX.determiners.has(d) || LEX.user_possessives.has(d));
        is_memory_word(&w.folded) && det.is_some_and(|d| !LEX.indefinite.has(d))
    });
    match thing {
        Some((_, w)) if someone => hit("third_party.touched_memory", &[c.raw(0), c.raw(participle), &w.raw]),
        _ => None,
    }
}
