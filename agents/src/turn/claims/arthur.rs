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
        // "pourquoi on a choisi…", "quand on a fini": the generic "on" of an indirect
        // question or a time clause, not Arthur.
        if w.folded == "on" && LEX.generic_on_after.has(c.before(i)) {
            continue;
        }
        // "Veux-tu que je…", "il faut que je…": hypothetical; but "le rappel que je t'ai
        // programmé" is a relative clause in the past, a claim.
        if LEX.que.has(c.before(i)) {
            let verb = c.after_clitics(i + 1);
            // "ce que j'ai noté pour toi": whatever it is, not a particular deed.
            let free = i > 1 && LEX.free_relative.has(c.folded(i - 2));
            if !LEX.relative_past_aux.has(c.folded(verb)) || free {
                continue;
            }
        }
        out.push(i + 1);
    }
    out
}

/// The clause names a memory kind, one of the user's things or a moment: what is
/// promised concerns the memory ("je vais te donner tes rappels de demain").
fn concerns_memory(c: &Clause) -> bool {
    memory_here(c) || c.any(&LEX.user_possessives) || super::clause::has_time(c)
}

/// A lasting change of behaviour: "désormais…", "je ne te proposerai plus…".
fn lasting(c: &Clause, verb_at: usize) -> bool {
    LEX.lasting.in_(&c.joined)
        || c.sentence_lasting
        || c.words.iter().any(|w| LEX.ne.has(&w.folded))
            && c.words[verb_at..].iter().any(|w| LEX.no_longer.has(&w.folded))
}

fn memory_here(c: &Clause) -> bool {
    c.words.iter().any(|w| super::clause::is_memory_word(&w.folded))
}

/// An English "-ing" of an action verb ("adding", "setting", "saving").
fn action_ing(word: &str) -> bool {
    let Some(stem) = word.strip_suffix("ing").filter(|s| s.is_ascii()) else { return false };
    let undoubled = stem.len() > 2 && stem.as_bytes()[stem.len() - 1] == stem.as_bytes()[stem.len() - 2];
    LEX.present_verbs.has(stem)
        || LEX.present_verbs.has(&format!("{stem}e"))
        || undoubled && LEX.present_verbs.has(&stem[..stem.len() - 1])
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
            let english_past =
                LEX.english_have.has(v) && c.words.get(j).is_some_and(|w| !LEX.have_not_past.has(&w.folded));
            // "j'ai rajouter le pain": the infinitive written for the participle it sounds like.
            let french = !LEX.english_have.has(v) && !LEX.did.has(v);
            let sounds_like = |w: &str| french && LEX.action_infinitives.has(w);
            // "je n'en ai pas", "j'en ai trois": « en » makes « avoir » a possession.
            let possession = c.words[start..i].iter().any(|w| LEX.partitive.has(&w.folded));
            match c.words.get(j) {
                Some(next)
                    if is_participle_after_aux(&next.raw)
                        || sounds_like(&next.folded)
                        || (LEX.did.has(v) && negated)
                        || english_past =>
                {
                    if LEX.harmless_participles.has(&next.raw) {
                        continue;
                    }
                    return hit(kind, rule, &[subject, v, &next.raw]);
                }
                // "je l'ai." / "I have it."
                None if (start + 1 < i || negated) && !possession => return hit(kind, rule, &[subject, v]),
                _ => continue,
            }
        }
        // English simple past: "I cancelled the oven timer", "we agreed you'd send it".
        if LEX.english_subjects.has(subject)
            && !c.asks
            && !c.question_led
            && super::clause::is_participle(&verb.raw)
            && !LEX.harmless_participles.has(&verb.raw)
        {
            return hit(ClaimKind::Action, "arthur.past", &[subject, &verb.raw]);
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
            // "I'm going to add that": a near future.
            if LEX.going.has(next)
                && c.folded(j + 1) == "to"
                && c.words.get(j + 2).is_some_and(|w| !LEX.harmless_near_future.has(&w.raw))
            {
                let inf = c.raw(j + 2);
                if !LEX.speech_acts.has(inf) || concerns_memory(c) {
                    return hit(ClaimKind::Promise, "arthur.near_future", &[subject, next, inf]);
                }
            }
            // "I'm setting a timer", "I am adding it": an action verb, or a memory kind.
            if next.ends_with("ing")
                && next.len() > 5
                && !LEX.harmless_ing.has(next)
                && (action_ing(next) || memory_here(c))
            {
                return hit(ClaimKind::Action, "arthur.progressive", &[subject, v, next]);
            }
            continue;
        }
        // Near future: "je vais te le rappeler", "on va noter", "I will remind you".
        if LEX.near_future_aux.has(v) {
            let j = c.after_clitics(i + 1);
            let Some(inf) = c.words.get(j) else { continue };
            if LEX.well.has(&inf.folded) {
                continue;
            }
            // "je vais t'expliquer", "je vais te proposer trois idées": said in this very
            // answer, unless it is a lasting change or concerns the memory.
            let harmless =
                LEX.harmless_near_future.has(&inf.raw) || LEX.speech_acts.has(&inf.folded) && !concerns_memory(c);
            if harmless && !lasting(c, j) {
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
        // Simple future: "je te préviendrai", "je ferai", "nous noterons" — but "je
        // t'expliquerai" and "je te proposerai" promise nothing about the memory.
        if LEX.future_endings.ending_of(v) && v.len() > 4 && !LEX.harmless_futures.has(v) {
            let raw = verb.raw.as_str();
            let stem = raw.strip_suffix("ai").or_else(|| raw.strip_suffix("ons")).unwrap_or(raw);
            let harmless = [stem.to_string(), format!("{stem}e")].iter().any(|inf| {
                LEX.harmless_near_future.has(inf)
                    || LEX.speech_acts.has(&crate::text::normalise(inf)) && !concerns_memory(c)
            });
            if !harmless || lasting(c, i) {
                return hit(ClaimKind::Promise, "arthur.future", &[subject, v]);
            }
        }
        // Present: "je note", "je m'en occupe", "je te crée ça" — but "Je le note ?" offers,
        // "je ne retiens que ce que tu demandes" states a rule, and "on annule depuis la
        // rubrique…" is the generic "on".
        let offer = c.asks;
        let restriction =
            c.words[start..].iter().any(|w| LEX.que.has(&w.folded)) && c.words.iter().any(|w| LEX.ne.has(&w.folded));
        let negated = LEX.ne.has(c.folded(start));
        let rule = negated || restriction;
        let generic_on = subject == "on";
        // "Je ne trouve pas de liste « vacances »": a search of the memory said to have
        // failed ("je ne garde jamais…", "je ne retiens que…" state rules).
        let failed_search = negated
            && !restriction
            && c.words[i + 1..].first().is_some_and(|w| LEX.denied_now.has(&w.folded))
            && concerns_memory(c);
        if LEX.present_verbs.has(v) && failed_search && !offer && !generic_on {
            return hit(ClaimKind::Denial, "arthur.present_denial", &[subject, v]);
        }
        // "je trouve 391", "je trouve ça joli": a result or an opinion, unless what is found
        // is the memory's.
        if LEX.finding.has(v) && !concerns_memory(c) {
            continue;
        }
        let to_you = c.words[start..i].iter().any(|w| LEX.to_you.has(&w.folded));
        if LEX.notify_verbs.has(v) && to_you && !offer && !generic_on {
            return hit(ClaimKind::Promise, "arthur.present_promise", &[subject, v]);
        }
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
        // "je compte l'ajouter", "je m'engage à te prévenir" — not in a question ("Should
        // I save that as a note?").
        if c.asks || c.question_led {
            continue;
        }
        // "je te conseille de mettre le rappel une heure avant": advice gives the user the
        // action; what follows is theirs to do.
        if LEX.speech_acts.has(v) || LEX.speech_acts.has(&format!("{v}r")) {
            continue;
        }
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
