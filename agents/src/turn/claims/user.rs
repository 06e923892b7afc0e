//! Who = the user, or one of the user's things: in a turn where nothing was read, a
//! statement of the user's stored data — a memory noun and its state, count or place
//! ("ta liste est vide", "il reste 4 minutes sur le minuteur"), the user's agenda, work
//! time, tastes or values ("tu as rendez-vous jeudi à 14 h", "ton code, c'est 4512") —
//! can only come from nowhere. Kept out: suggestions (modals), imperatives,
//! subordinates ("si tu as besoin"), questions that carry no figure, hypotheticals,
//! compliments, and the conversation itself ("ta question").

use super::clause::{
    counted, has_number, has_specific_time, has_time, is_memory_word, is_number, is_participle_after_aux,
    matches_state, modal_clause, Clause,
};
use super::lexicon::LEX;
use super::{verdict, ClaimKind, Subject, Verdict};

fn fact(rule: &'static str, subject: Subject, ev: &[&str]) -> Option<Verdict> {
    Some(verdict(ClaimKind::StoredFact, rule, subject, ev))
}

/// A memory noun with what became of it, whose it is, where it is kept, or how many
/// there are: "le rappel est créé", "deux rappels", "dans ta liste", "le chrono tourne".
pub(super) fn memory_state(c: &Clause) -> Option<Verdict> {
    // "en général…", "les décisions peuvent être notées…": a rule or a possibility.
    if c.any(&LEX.generic_markers) || c.any(&LEX.modals) || super::clause::historical(c) {
        return None;
    }
    let j = &c.joined;
    for (i, w) in c.words.iter().enumerate() {
        // "se souvenir", "tu notes": the verb, not the noun.
        if !is_memory_word(&w.folded) || LEX.verb_before.has(c.before(i)) {
            continue;
        }
        // The determiner, past one adjective ("ton premier rendez-vous").
        let mut d = i;
        if d > 0 && LEX.noun_adjectives.has(c.folded(d - 1)) {
            d -= 1;
        }
        let det = c.before(d);
        let before = if d > 1 { c.folded(d - 2) } else { "" };
        let possessive = LEX.user_possessives.has(det);
        // "se base sur les sessions démarrées": a complement, not what the clause is about.
        let complement = LEX.prepositions.has(before) && !possessive;
        // "la dernière décision", "le prochain rappel": one stored item.
        let ordinal = d < i && LEX.the.has(det);
        let definite = LEX.definite.has(det) || d == 0 || possessive;
        let ordinal_word = |w: &str| LEX.ordinal_endings.ending_of(w) && w.len() > 5;
        let every = LEX.every.in_(j) || super::clause::rate(c);
        let opens = c.words[..d.saturating_sub(1)].iter().all(|w| LEX.lead_ok.has(&w.folded));
        let anchored = LEX.none.has(det)
            || opens
            || c.any(&LEX.holding)
            || c.any(&LEX.user_mentions)
            || c.any(&LEX.first_person)
            || c.any(&LEX.user_possessives);
        // "pas de souvenir", "plus de rappel": none.
        let counted = (d > 0 && is_number(&c.words[d - 1]) && !every && anchored)
            || LEX.counted_dets.has(det)
            || LEX.of_.has(det) && LEX.counted_dets.has(before)
            || (d < i && ordinal_word(c.folded(i - 1)))
            || (d > 0 && ordinal_word(det));
        let verb_here = c.any(&LEX.memory_verbs);
        let state_word = c
            .words
            .iter()
            .enumerate()
            .find(|(k, w)| {
                // "Vide ta liste", "le bilan fait le point": a verb before its object.
                let object = LEX.determiners.has(c.folded(k + 1)) || LEX.user_possessives.has(c.folded(k + 1));
                matches_state(&w.raw) && !(LEX.also_verbs.has(&w.raw) && object)
            })
            .map(|(_, w)| w.raw.as_str());
        let state_phrase = LEX.state_phrases.found_in(j).filter(|_| verb_here || i > 0);
        let stated = state_word.or(state_phrase);
        // The noun is the subject of what follows: "ta note … est bien là".
        let copula_after = c.words[i + 1..].iter().any(|w| LEX.memory_copulas_after.has(&w.folded));
        // "le chrono tourne", "la session continue", "le minuteur sonne dans 30 secondes":
        // what runs (a timer, a session), with its determiner.
        let after = &c.words[i + 1..];
        let ringing = after.iter().take(4).any(|w| LEX.ringing.has(&w.folded))
            && (has_number(c) || has_specific_time(c) || possessive);
        let running = d > 0
            && definite
            && LEX.running_nouns.has(w.folded.trim_end_matches('s'))
            && (after.iter().take(4).any(|w| LEX.running.has(&w.folded)) || ringing);
        // Where it is kept: "dans ma mémoire", "sur ta liste", "d'après tes notes".
        // "dans le projet Roman": a memory kind with its name is one of the user's things.
        let named = c.words.get(i + 1).is_some_and(|w| w.capital);
        let located = (LEX.located_preps.has(before) && (possessive || named || LEX.own_possessives.has(det)))
            || LEX.according_to.in_(j);
        // "ta remarque a rejoint le tiroir aux souvenirs", "ton minuteur vient de se
        // terminer": something happened to it.
        // The noun (or the user's thing that opens the clause) is the subject: "you want to
        // start a focus session" has the English article, not the auxiliary.
        let from = if LEX.user_possessives.has(c.folded(0)) { 0 } else { i };
        let happened = (from..c.words.len()).any(|k| {
            let next = c.raw(c.after_clitics(k + 1));
            // "pourquoi on a choisi": the auxiliary has its own subject.
            let own_subject = LEX.subject_pronouns.has(c.before(k));
            LEX.happened_aux.has(c.folded(k)) && is_participle_after_aux(next) && !LEX.been.has(next) && !own_subject
                || LEX.memory_just_did.has(c.folded(k)) && LEX.of_.has(c.folded(k + 1))
        });
        // "ton briefing inclura la météo": what it will hold.
        let will_hold = (possessive || has_specific_time(c))
            && c.words[i + 1..].iter().any(|w| LEX.memory_future_endings.ending_of(&w.folded) && w.folded.len() > 5);
        let rule = if definite && stated.is_some() && !complement {
            "memory.state"
        } else if counted {
            "memory.counted"
        } else if located {
            "memory.located"
        } else if running && !complement {
            "memory.running"
        } else if ordinal && copula_after && !complement {
            "memory.ordinal"
        } else if happened && !complement {
            "memory.happened"
        } else if will_hold {
            "memory.will_hold"
        } else if possessive && (copula_after || (has_time(c) || has_number(c)) && !imperative_led(c)) {
            "memory.possessed"
        } else if definite && has_time(c) && copula_after && !complement {
            "memory.timed"
        } else if LEX.there_is.in_(j) && has_number(c) && !(d == i && LEX.prepositions.has(det)) {
            "memory.there_is"
        } else {
            continue;
        };
        let kind = if stated.is_some() { ClaimKind::Action } else { ClaimKind::StoredFact };
        let subject = if possessive { Subject::UsersThing } else { Subject::Memory };
        return Some(verdict(kind, rule, subject, &[&w.raw, det, stated.unwrap_or("")]));
    }
    // "déjà dans…", "déjà en place".
    if let Some(p) = LEX.already_in.found_in(j) {
        return Some(verdict(ClaimKind::Action, "memory.already_in", Subject::Memory, &[p]));
    }
    None
}

/// After the verb at `k`, an infinitive: a definition or advice ("your best bet is to
/// write it down", "le mieux est de partir tôt"), not a value.
fn defined_after(words: &[super::clause::Word], k: usize) -> bool {
    let mark = words.get(k + 1).map(|w| w.folded.as_str()).unwrap_or("");
    let then = words.get(k + 2).map(|w| w.folded.as_str()).unwrap_or("");
    LEX.infinitive_marks.has(mark) && (mark == "to" || LEX.infinitive_endings.ending_of(then))
}

/// Led by a verb with no subject: an instruction ("Avance ton réveil de 15 minutes",
/// "Shift your schedule by an hour"), whose object is not stated but acted on.
pub(super) fn imperative_led(c: &Clause) -> bool {
    let head = c.folded(0);
    let owned = c.words.iter().position(|w| LEX.user_possessives.has(&w.folded)).unwrap_or(c.words.len());
    let subject =
        c.words[..owned].iter().any(|w| LEX.subject_pronouns.has(&w.folded) || LEX.first_person.has(&w.folded));
    let not_a_verb = LEX.lead_ok.has(head)
        || LEX.determiners.has(head)
        || LEX.user_possessives.has(head)
        || LEX.prepositions.has(head)
        || LEX.time_words.has(head)
        || LEX.days.has(head)
        || is_memory_word(head)
        || c.words.first().is_some_and(is_number);
    !subject && !not_a_verb
}

/// A question that still asserts ("Tu as rendez-vous jeudi ?", "Ta réunion est à 15 h ?").
pub(super) fn fact_in_question(c: &Clause) -> Option<Verdict> {
    if c.question_led || !c.asks {
        return None;
    }
    second_person_fact(c, true)
}

/// A fact about the user the model cannot know without a tool: "tu as travaillé 5 h",
/// "tu n'as aucun rappel", "ton code wifi est 8832", "tu es inscrit pour jeudi".
/// `asking`: the clause is a question; only what it asserts as possessed or as a state
/// counts ("Tu as rendez-vous jeudi ?"), not what it asks about ("tu penses à lundi ?").
pub(super) fn second_person_fact(c: &Clause, asking: bool) -> Option<Verdict> {
    let user = |rule, ev: &[&str]| fact(rule, Subject::User, ev);
    // "Tu auras sûrement plus d'énergie demain": a guess.
    if c.any(&LEX.guesses) {
        return None;
    }
    if let Some(s) = user_subject(c) {
        let i = c.after_clitics(s + 1);
        let verb = c.folded(i);
        if LEX.modals.has(verb) || LEX.go.has(verb) {
            return None;
        }
        // "tu trouveras ce point dans ton briefing", "tu recevras un rappel à 8 h".
        let memory_here = c.words.iter().any(|w| is_memory_word(&w.folded));
        if !asking
            && LEX.user_future_endings.ending_of(verb)
            && verb.len() >= 5
            && (memory_here || has_specific_time(c))
        {
            return Some(verdict(ClaimKind::Promise, "user.will_receive", Subject::User, &[verb]));
        }
        // What the user has or does is a stored fact when it is one of the memory's or the
        // day's things ("tu as une réunion", "tu n'as aucun rappel"), not a quality ("tu as
        // la même force aujourd'hui") or a figure of speech ("tu as intérêt à…").
        let thing_here = c.words.iter().any(|w| is_memory_word(&w.folded) || LEX.schedule_nouns.has(&w.folded));
        let future = LEX.user_future_endings.ending_of(verb) && verb.len() >= 5 || LEX.will.has(verb);
        if LEX.have.has(verb) {
            let j = c.after_clitics(i + 1);
            let next = c.raw(j);
            let negated = LEX.have_negations.has(c.folded(j)) || LEX.negated_elision.has(c.folded(s + 1));
            let mut held = j;
            while LEX.have_negations.has(c.folded(held)) {
                held = c.after_clitics(held + 1);
            }
            if LEX.evaluative_objects.leads(&super::clause::join(&c.words[held.min(c.words.len())..])) {
                return None;
            }
            if LEX.obligation.has(c.folded(held)) && !LEX.english_have.has(verb) {
                return None;
            }
            let claimed = LEX.claimed_participles.has(next);
            // What "tu as" holds: "tu as (un|deux|des) rappel(s)"; "tu as le droit de…" is not it.
            let object =
                if LEX.have_object_dets.has(c.folded(j)) || c.words.get(j).is_some_and(is_number) { j + 1 } else { j };
            let memory_object = is_memory_word(c.folded(object)) || is_memory_word(c.folded(object + 1));
            // The thing it was done to: "tu avais oublié ton rendez-vous".
            let done_to = (j + 1..(j + 4).min(c.words.len())).any(|k| is_memory_word(c.folded(k)));
            if asking {
                // "Tu as des projets pour le week-end ?" asks; "Tu as travaillé 5 h
                // aujourd'hui ?" still asserts a measured fact.
                let measured = has_number(c) || has_specific_time(c);
                if (negated || claimed) && measured {
                    return user("user.has_in_question", &[verb, next]);
                }
                return None;
            }
            if claimed {
                return user("user.has_done", &[verb, next]);
            }
            if negated && (thing_here || has_specific_time(c)) {
                return user("user.has_not", &[verb, c.folded(j)]);
            }
            if has_number(c) && (thing_here || has_time(c)) {
                return user("user.has_figure", &[verb]);
            }
            if is_participle_after_aux(next) {
                // "tu avais oublié ton rendez-vous"; "t'as fait du super boulot" is praise.
                // "tu as bloqué ton vendredi après-midi": done to the user's day.
                let to_day = has_specific_time(c) && c.any(&LEX.user_possessives);
                return if done_to || to_day { user("user.did_to_memory", &[verb, next]) } else { None };
            }
            // "tu as une réunion demain", "tu as un rappel".
            if memory_object || thing_here {
                return user("user.has_thing", &[verb, c.folded(object)]);
            }
            return None;
        }
        // "tu vas toujours courir le dimanche", "tu bois souvent du thé": a habit stated
        // (not a prediction, "tu verras que l'envie passe souvent").
        if !asking && !future {
            let main = c.words.iter().take_while(|w| !LEX.que.has(&w.folded));
            if let Some(h) = main.map(|w| w.folded.as_str()).find(|w| LEX.habit_adverbs.has(w)) {
                return user("user.habit", &[verb, h]);
            }
        }
        // "tu préfères le vouvoiement": a preference stated as known.
        if LEX.prefers.has(verb) && !c.asks {
            return user("user.prefers", &[verb]);
        }
        if asking {
            return None;
        }
        // "tu n'es pas obligé de…", "tu es libre de…": a modality, not a record.
        let mut after = c.after_clitics(i + 1);
        while LEX.have_negations.has(c.folded(after)) {
            after = c.after_clitics(after + 1);
        }
        if LEX.modal_adjectives.has(c.folded(after)) {
            return None;
        }
        // "tomorrow you'll come back fresher": a prediction, unless it names the day's
        // things or someone ("demain tu verras ta conseillère").
        let named = c.words.iter().skip(1).any(|w| w.capital && !LEX.not_names.has(&w.folded));
        if future && !thing_here && !named {
            return None;
        }
        // "tu es inscrit pour jeudi", "tu travailles sur Atlas depuis 9 h".
        // "You did great today": praise, unless a participle says what is on record ("tu
        // es inscrit pour jeudi").
        let praise = LEX.evaluative.has(verb) && !thing_here && !named && !is_participle_after_aux(c.raw(after));
        if has_specific_time(c) && !LEX.modals.has(verb) && !c.any(&LEX.generic_markers) && !praise {
            return user("user.dated", &[verb]);
        }
        if LEX.works.has(verb) && c.any(&LEX.works_preps) && has_number(c) {
            return user("user.works", &[verb]);
        }
    }
    // "ton code wifi est 8832", "your password is 1234".
    for (i, w) in c.words.iter().enumerate() {
        if !LEX.user_possessives.has(&w.folded) {
            continue;
        }
        let noun = c.folded(i + 1);
        if LEX.conversation_nouns.has(noun) {
            continue;
        }
        // Whatever the verb: "ton total de la semaine dépasse les 35 heures", "ton
        // anniversaire tombe le 14 juin".
        let rest = &c.words[(i + 2).min(c.words.len())..];
        let copula = rest.iter().any(|w| LEX.thing_copulas.has(&w.folded));
        if asking && !copula {
            continue;
        }
        if c.any(&LEX.generic_markers) {
            continue;
        }
        // The noun must be the subject of something said about it.
        let said = rest.iter().position(|w| LEX.thing_verbs.has(&w.folded));
        let defined = said.is_some_and(|k| defined_after(rest, k));
        if let Some(said) = said.filter(|_| !defined).map(|k| &rest[k]) {
            if rest.iter().any(is_number) || has_specific_time(c) {
                return fact("user.thing_value", Subject::UsersThing, &[&w.raw, noun, &said.raw]);
            }
        }
    }
    None
}

/// Where the user is the subject of the clause's main verb: "tu", "t'" before « avoir » or
/// « être », "vous", "you" — not in a subordinate ("si tu as besoin", "ce que tu
/// choisis"), not as an object ("je vous souhaite", "see you", "gives you about six"),
/// except after a verb of knowing ("je sais que tu aimes…" states what is known).
pub(super) fn user_subject(c: &Clause) -> Option<usize> {
    c.words.iter().enumerate().position(|(i, w)| {
        let prev = c.before(i);
        let next = c.folded(c.after_clitics(i + 1));
        let is_subject = LEX.user_subject.has(&w.folded)
            // "t'as", "t'es": "t'" is the subject only before avoir and être.
            && (w.folded != "t" || LEX.t_verbs.has(c.folded(i + 1)));
        let known = LEX.que.has(prev) && i > 1 && LEX.knowing.has(c.folded(i - 2));
        // "pour savoir combien de temps tu passes": a subordinate a few words back.
        let subordinate = c.words[i.saturating_sub(3)..i].iter().any(|w| LEX.subordinate_before.has(&w.folded));
        // "Je vous souhaite…", "I'll call you": an object after a subject; "gives you
        // about six", "expects you to know": no verb follows.
        let object = LEX.object_after.has(prev) || LEX.not_verbs.has(next);
        is_subject && (known || !LEX.subordinate_or_object.has(prev) && !subordinate && !object)
    })
}

/// The user as the subject of a statement about their life, or the user's thing with
/// its value: "D'abord tu as le point avec Marc", "In the morning you see the bank at
/// nine", "Ton code wifi, c'est …", "il te reste…", "Voici ton programme".
/// `sentence_specific`/`sentence_counted`: a date or a figure elsewhere in the sentence.
pub(super) fn about_the_user(c: &Clause, sentence_specific: bool, sentence_counted: bool) -> Option<Verdict> {
    // "Pour ajouter un rappel, dis…" frames advice; "pour aujourd'hui, t'as…" dates a fact.
    let framed = LEX.frame_leads.leads(&c.joined) && !LEX.dated_frames.leads(&c.joined);
    // "tu parcours un kilomètre toutes les 5 minutes": a rate is a rule, not the user's life.
    if c.inherited_frame || c.words.is_empty() || framed || c.any(&LEX.guesses) || super::clause::rate(c) {
        return None;
    }
    let counted = counted(c);
    let specific = has_specific_time(c) || counted;
    let named = c.words.iter().skip(1).find(|w| w.capital && !LEX.not_names.has(&w.folded));
    let thing = c.words.iter().find(|w| is_memory_word(&w.folded) || LEX.schedule_nouns.has(&w.folded));
    let possessive_at = c.words.iter().position(|w| LEX.user_owned.has(&w.folded));
    let asking = c.asks || c.sentence_asks;
    // "Tu préfères le thé le matin." (no question mark) states a taste.
    if !asking && LEX.prefers_lead.leads(&c.joined) {
        return fact("user.prefers", Subject::User, &[c.raw(0), c.raw(1)]);
    }
    if asking || c.question_led {
        // "Tu veux que je décale ton rendez-vous de dix heures ?": the figure is the claim
        // ("ta sœur arrive samedi ?" only echoes a day).
        return match possessive_at {
            Some(at) if counted => fact("user.figure_in_question", Subject::UsersThing, &[c.raw(at), c.raw(at + 1)]),
            _ => None,
        };
    }
    if let Some(p) = LEX.remains.found_in(&c.joined) {
        return fact("user.remains", Subject::UsersThing, &[p]);
    }
    // "Voici ton programme", "Here is your plan": the user's thing presented.
    if LEX.presenting.leads(&c.joined) && possessive_at.is_some_and(|at| at <= 3) {
        return fact("user.presented", Subject::UsersThing, &[c.raw(0)]);
    }
    if let Some(at) = possessive_at {
        // "Ton code wifi, c'est …", "Your haircut got moved to Saturday": the user's thing
        // is the subject of the statement.
        let leads = c.words[..at].iter().all(|w| LEX.lead_ok.has(&w.folded));
        let owned = c.folded(at + 1);
        // A verb of state: a bare list ("tes notes, tes décisions") states nothing.
        let stated_at = c.words[at..].iter().position(|w| LEX.states.has(&w.folded));
        let stated = stated_at.is_some_and(|k| !defined_after(&c.words[at..], k));
        // "Ton médecin pourra mieux te conseiller": advice about someone, not a fact.
        let deadline = has_specific_time(c);
        let advice = c.words.iter().any(|w| {
            LEX.modals.has(&w.folded) && !(deadline && LEX.obligation_modals.has(&w.folded))
                || LEX.advice_futures.has(&w.folded)
        });
        let defined = stated_at.is_some_and(|k| defined_after(&c.words[at..], k));
        if leads
            && !advice
            && !defined
            && !LEX.conversation_nouns.has(owned)
            && (specific
                || named.is_some()
                || LEX.cest.in_(&c.joined)
                || thing.is_some() && stated
                || stated && sentence_specific)
        {
            return fact("user.thing_stated", Subject::UsersThing, &[c.raw(at), c.raw(at + 1)]);
        }
    }
    // "Tu dois rendre le rapport avant vendredi", "tu dois quarante euros à Julien": an
    // obligation or a debt on record ("tu dois boire de l'eau" is advice).
    let owes = c.words.windows(2).any(|w| LEX.user_subject.has(&w[0].folded) && LEX.owes.has(&w[1].folded));
    if owes && (named.is_some() || has_specific_time(c)) {
        return fact("user.owes", Subject::User, &[]);
    }
    if modal_clause(c) && !c.any(&LEX.prefers) {
        return None;
    }
    // "D'abord tu as le point avec Marc", "In the morning you see the bank at nine", "You
    // decided to…": the user as the subject of a statement about their life.
    let subject = user_subject(c)?;
    let verb_at = c.after_clitics(subject + 1);
    let verb = c.folded(verb_at);
    // "Tu vas adorer ce film" looks ahead; "tu vas courir le dimanche à sept heures" tells.
    if verb.is_empty() || LEX.go.has(verb) && !specific {
        return None;
    }
    // "Tu préfères le thé" states a taste; "tu préfères que je…" asks.
    let prefers = LEX.prefers.has(verb) && !LEX.prefers_that.has(c.folded(verb_at + 1));
    if (LEX.modals.has(verb) || LEX.wants.has(verb)) && !prefers {
        return None;
    }
    // "Tu es de garde ce week-end, du samedi 8 h…", "tu vois ta conseillère. C'est à
    // quinze heures.": the figure elsewhere in the sentence makes it a fact.
    let figured = counted || sentence_counted && LEX.sees.has(verb);
    // "Tu es allergique aux crustacés": a condition of the user's, what a souvenir keeps.
    if LEX.sees.has(verb) && LEX.traits.has(c.folded(c.after_clitics(verb_at + 1))) {
        return fact("user.trait", Subject::User, &[c.raw(subject), c.raw(verb_at + 1)]);
    }
    if LEX.evaluative.has(verb) && !figured {
        return None;
    }
    let rest = super::clause::join(&c.words[verb_at + 1..]);
    if LEX.have.has(verb) && LEX.evaluative_objects.leads(&rest) {
        return None;
    }
    // "tu as plusieurs options", "tu n'as pas besoin de…": what the user has is a fact
    // when it is one of the day's or the memory's things, or someone.
    if LEX.have.has(verb) {
        let mut held = c.after_clitics(verb_at + 1);
        while LEX.have_negations.has(c.folded(held)) {
            held = c.after_clitics(held + 1);
        }
        let figure_of_speech = LEX.evaluative_objects.leads(&super::clause::join(&c.words[held.min(c.words.len())..]))
            || LEX.obligation.has(c.folded(held)) && !LEX.english_have.has(verb);
        if figure_of_speech || thing.is_none() && named.is_none() {
            return None;
        }
    }
    // "tomorrow you'll come back fresher": a prediction.
    let future = LEX.user_future_endings.ending_of(verb) && verb.len() >= 5 || LEX.will.has(verb);
    if future && thing.is_none() && named.is_none() {
        return None;
    }
    let taste = c.words[verb_at..].iter().take(3).find(|w| LEX.taste_verbs.has(&w.folded));
    let owned_object = c.words.get(verb_at + 1).is_some_and(|w| LEX.user_possessives.has(&w.folded));
    let why = if specific {
        "user.life_dated"
    } else if named.is_some() {
        "user.life_named"
    } else if thing.is_some() {
        "user.life_thing"
    } else if taste.is_some() || prefers {
        "user.taste"
    } else if owned_object && sentence_counted {
        "user.life_counted"
    } else {
        return None;
    };
    fact(why, Subject::User, &[c.raw(subject), c.raw(verb_at)])
}
