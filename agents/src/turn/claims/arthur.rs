//! Who = Arthur: a first-person clause ("je", "j'", "on", "nous", "I", "we") that says an
//! action was done, is under way, or will be done. The tense decides: a past, a
//! progressive, a near or simple future and an action verb in the present claim; a modal
//! (an offer, a capability), a question and a rule ("je ne retiens que…") do not.

use super::clause::{is_participle_after_aux, matches_state, Clause};
use super::lexicon::LEX;
use super::{verdict, ClaimKind, Subject, Verdict};

/// The first-person subject positions of a clause: the index of the word after each.
fn first_person(c: &Clause) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, w) in c.words.iter().enumerate() {
        if !LEX.first_person.has(&w.folded) {
            continue;
        }
        // "Veux-tu que je…", "il faut que je…": hypothetical; but "le rappel que je t'ai
        // programmé" is a relative clause in the past, a claim.
        if LEX.que.has(c.before(i)) {
            let verb = c.after_clitics(i + 1);
            if !LEX.relative_past_aux.has(c.folded(verb)) {
                continue;
            }
        }
        out.push(i + 1);
    }
    out
}

/// A first-person clause claiming or promising an action.
pub(super) fn claim(c: &Clause) -> Option<Verdict> {
    let hit = |kind, rule, ev: &[&str]| Some(verdict(kind, rule, Subject::Arthur, ev));
    for start in first_person(c) {
        let i = c.after_clitics(start);
        let subject = c.folded(start - 1);
        let Some(verb) = c.words.get(i) else {
            continue;
        };
        let v = verb.folded.as_str();
        if LEX.modals.has(v) {
            continue;
        }
        // Past: "j'ai (bien) noté", "je n'ai pas pu", "nous avons acté", "I have added".
        if LEX.past_aux.has(v) {
            if LEX.on_aux.has(v) && subject != "on" {
                continue;
            }
            let mut j = c.after_clitics(i + 1);
            let negated = LEX.negations.has(c.folded(j));
            if negated {
                j = c.after_clitics(j + 1);
            }
            let kind = if negated { ClaimKind::Denial } else { ClaimKind::Action };
            let rule = if negated { "arthur.denial" } else { "arthur.past" };
            let english_past = LEX.english_have.has(v) && c.words.get(j).is_some_and(|w| !LEX.have_not_past.has(&w.folded));
            match c.words.get(j) {
                Some(next)
                    if is_participle_after_aux(&next.raw) || (LEX.did.has(v) && negated) || english_past =>
                {
                    if LEX.harmless_participles.has(&next.raw) {
                        continue;
                    }
                    return hit(kind, rule, &[subject, v, &next.raw]);
                }
                // "je l'ai." / "I have it."
                None if start + 1 < i || negated => return hit(kind, rule, &[subject, v]),
                _ => continue,
            }
        }
        // "je me suis occupé", "je suis en train de noter", "I am adding".
        if LEX.be_aux.has(v) {
            let j = c.after_clitics(i + 1);
            let next = c.raw(j);
            if LEX.busy.has(next) || (matches_state(next) && !LEX.here.has(next)) {
                return hit(ClaimKind::Action, "arthur.state", &[subject, v, next]);
            }
            if let Some(p) = LEX.progressive.found_in(&c.joined) {
                return hit(ClaimKind::Action, "arthur.progressive", &[subject, p]);
            }
            if next.ends_with("ing") && next.len() > 5 && !LEX.harmless_ing.has(next) {
                return hit(ClaimKind::Action, "arthur.progressive", &[subject, v, next]);
            }
            continue;
        }
        // Near future: "je vais te le rappeler", "on va noter", "I will remind you".
        if LEX.near_future_aux.has(v) {
            let j = c.after_clitics(i + 1);
            let Some(inf) = c.words.get(j) else { continue };
            if LEX.well.has(&inf.folded) || LEX.harmless_near_future.has(&inf.raw) {
                continue;
            }
            if v == "will" && LEX.will_harmless.has(&inf.folded) {
                continue;
            }
            return hit(ClaimKind::Promise, "arthur.near_future", &[subject, v, &inf.raw]);
        }
        // A conditional that commits: "je me permettrais de te le rappeler demain".
        if LEX.conditional_endings.ending_of(v) && !LEX.modals.has(v) && LEX.of_.has(c.folded(i + 1)) {
            return hit(ClaimKind::Promise, "arthur.conditional_commitment", &[subject, v]);
        }
        // Simple future: "je te préviendrai", "je ferai", "nous noterons".
        if LEX.future_endings.ending_of(v) && v.len() > 4 && !LEX.harmless_futures.has(v) {
            return hit(ClaimKind::Promise, "arthur.future", &[subject, v]);
        }
        // Present: "je note", "je m'en occupe", "je te crée ça" — but "Je le note ?" offers,
        // "je ne retiens que ce que tu demandes" states a rule, and "on annule depuis la
        // rubrique…" is the generic "on".
        let offer = c.asks;
        let rule = LEX.ne.has(c.folded(start))
            || c.words[start..].iter().any(|w| LEX.que.has(&w.folded)) && c.words.iter().any(|w| LEX.ne.has(&w.folded));
        let generic_on = subject == "on";
        if LEX.present_verbs.has(v) && !offer && !rule && !generic_on {
            return if LEX.promising_present.has(v) {
                hit(ClaimKind::Promise, "arthur.present_promise", &[subject, v])
            } else {
                hit(ClaimKind::Action, "arthur.present", &[subject, v])
            };
        }
        if LEX.just_did.has(v) && LEX.of_.has(c.folded(i + 1)) {
            return hit(ClaimKind::Action, "arthur.just_did", &[subject, v]);
        }
        // Any other verb leading to an action: "je me ferais un plaisir de te le rappeler",
        // "je compte l'ajouter", "je m'engage à te prévenir".
        for k in i + 1..c.words.len() {
            let w = c.folded(k);
            // "je ne garde que ce que tu me demandes d'enregistrer": what follows a
            // relative pronoun is the user's request, not the model's commitment.
            if LEX.without.has(w) || LEX.modals.has(w) || LEX.intention_breaks.has(w) {
                break;
            }
            if LEX.action_infinitives.has(w) {
                return hit(ClaimKind::Promise, "arthur.intention", &[subject, v, w]);
            }
        }
    }
    None
}
