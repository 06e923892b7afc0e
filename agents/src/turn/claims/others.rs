//! Who = someone else: a third party said to handle the user's request ("ta sœur s'en
//! occupe", "le plombier a été prévenu", "Paul a confirmé qu'il s'occupait des billets"),
//! which explains an inaction Arthur cannot vouch for.

use super::clause::{
    has_number, has_specific_time, has_time, is_memory_word, is_participle, is_participle_after_aux, matches_state,
};
use super::clause::{modal_clause, Clause};
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
    if c.question_led || c.asks || c.framed() || modal_clause(c) || c.any(&LEX.generic_markers) {
        return None;
    }
    let named = c.words.iter().enumerate().find(|(i, w)| {
        (LEX.third_parties.has(&w.folded) && (!LEX.indefinite.has(c.before(*i)) || LEX.te.in_(&c.joined)))
            || (*i > 0 && w.capital && w.folded != "i")
    });
    let pending = has_time(c) || LEX.pending.in_(&c.joined);
    let future = c.any(&LEX.future_aux);
    let phrase = LEX.handling_phrases.found_in(&c.joined);
    let handling = c.words.iter().enumerate().find(|(i, w)| {
        // "takes about eight minutes to reach Earth": an English infinitive too.
        let infinitive = LEX.infinitive_endings.ending_of(&w.folded) || c.before(*i) == "to";
        (!infinitive || future) && (LEX.handling_stems.stem_of(&w.folded) || LEX.action_infinitives.has(&w.folded))
    });
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
    if let Some((_, who)) = named {
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
