//! Who = nobody, or "it": the impersonal statements of what became of something — a bare
//! acknowledgement ("Noté !"), a receipt's headline ("Rappel n°4 créé"), an operation and
//! its outcome ("L'enregistrement a échoué"), a state ("c'est ajouté", "tout est
//! sauvegardé", "a été créé") — and the set phrases that claim by themselves.

use super::clause::{is_memory_word, is_number, is_participle, is_participle_after_aux, matches_state, Clause};
use super::lexicon::LEX;
use super::{verdict, ClaimKind, Subject, Verdict};

fn hit(kind: ClaimKind, rule: &'static str, ev: &[&str]) -> Option<Verdict> {
    Some(verdict(kind, rule, Subject::Impersonal, ev))
}

/// A receipt or an acknowledgement: "Noté !", "Réservé pour 20 h", "Entrée créée",
/// "Épinglé : …", "L'enregistrement a échoué".
pub(super) fn receipt(c: &Clause) -> Option<Verdict> {
    // "les sessions démarrées et arrêtées": a coordinated adjective, not an answer (what
    // came before "et" was judged on its own).
    // "Meetings scheduled before 9 am tend to…": a general statement.
    if c.after_conjunction && c.words.len() == 1 || super::clause::historical(c) || c.any(&LEX.tendency) {
        return None;
    }
    let first = c.folded(0);
    let framed = c.framed();
    let asked = c.question_led;

    // A bare acknowledgement: "Noté !", "Hop, ajouté !", "Entendu.", "Done!".
    let meaningful: Vec<&super::clause::Word> = c.words.iter().filter(|w| !LEX.fillers.has(&w.folded)).collect();
    // "Entendu, mais quel jour ?": understanding, then a question — no claim yet.
    let understood_then_asked =
        c.sentence_asks && !meaningful.is_empty() && meaningful.iter().all(|w| LEX.understood.has(&w.folded));
    if !meaningful.is_empty()
        && meaningful.len() <= 2
        && meaningful.iter().all(|w| matches_state(&w.raw) || LEX.acks.has(&w.folded))
        && !understood_then_asked
    {
        let ev: Vec<&str> = meaningful.iter().map(|w| w.raw.as_str()).collect();
        return hit(ClaimKind::Action, "receipt.acknowledgement", &ev);
    }
    if c.words.iter().all(|w| LEX.fillers.has(&w.folded)) && c.any(&LEX.voila) {
        return hit(ClaimKind::Action, "receipt.voila", &[first]);
    }
    // A clause that opens on a state: "Réservé pour 20 h.", "Ajouté à ta liste".
    let head = c.raw(0);
    // "enregistré par Usain Bolt": a passive with its agent tells the world's story.
    let agent = LEX.agent_marks.has(c.folded(1));
    // "Vide la corbeille": a verb too, before a determiner it instructs.
    let acts = LEX.also_verbs.has(head) && (LEX.determiners.has(c.folded(1)) || LEX.user_possessives.has(c.folded(1)));
    if matches_state(head)
        && !LEX.here.has(head)
        && !LEX.not_state_lead.has(first)
        && !agent
        && !LEX.also_nouns.has(head)
        && !acts
        && !c.apposition
    {
        return hit(ClaimKind::Action, "receipt.state_first", &[head]);
    }
    // A receipt's headline: a noun, then what became of it ("Entrée créée", "Tâche
    // terminée", "Nouvelle note ajoutée").
    let headline_noun = c.words.iter().take(2).any(|w| is_memory_word(&w.folded) || LEX.operation_nouns.has(&w.folded));
    if !LEX.subject_pronouns.has(first) && !asked && !framed && (!LEX.determiners.has(first) || headline_noun) {
        for k in 1..c.words.len().min(3) {
            let w = &c.words[k];
            if matches_state(&w.raw)
                && !LEX.here.has(&w.raw)
                && is_participle(&w.raw)
                && !LEX.also_nouns.has(&w.raw)
                && !LEX.agent_marks.has(c.folded(k + 1))
                && !LEX.subject_pronouns.has(c.folded(k - 1))
            {
                return hit(ClaimKind::Action, "receipt.headline", &[c.raw(k - 1), &w.raw]);
            }
        }
    }
    // A participle as a title: "Épinglé : relancer le fournisseur", "Session de travail
    // clôturée : 1 h 32".
    let memory_head = is_memory_word(first);
    if !asked && !framed {
        let titled = |raw: &str| {
            (matches_state(raw) || LEX.title_endings.ending_of(raw))
                && is_participle(raw)
                && !LEX.feelings.has(raw)
                && !LEX.not_titles.has(raw)
        };
        // Alone, only a word of what became of something ("Épinglé :"): a lone
        // "fractionné", "priorités" or "entrée" in a plan is a noun.
        if titled(head) && matches_state(head) && !LEX.also_nouns.has(head) && c.words.len() <= 2 && !c.apposition {
            return hit(ClaimKind::Action, "receipt.title", &[head]);
        }
        if memory_head {
            if let Some(w) = c.words.iter().take(5).skip(1).find(|w| titled(&w.raw)) {
                return hit(ClaimKind::Action, "receipt.memory_title", &[head, &w.raw]);
            }
        }
    }
    // An operation and its outcome: "L'enregistrement a échoué", "La suppression n'a pas
    // fonctionné".
    if let Some(op) = c.words.iter().take(3).find(|w| LEX.operation_nouns.has(&w.folded)) {
        if c.any(&LEX.outcome_verbs) && !asked && !framed {
            return hit(ClaimKind::Action, "receipt.operation", &[&op.raw]);
        }
    }
    None
}

/// A negated state is a denial ("rien n'a été effacé", "la note n'a pas été
/// sauvegardée"), which only code may say.
fn negated_kind(c: &Clause) -> ClaimKind {
    let negated = c.words.iter().any(|w| LEX.ne.has(&w.folded) || LEX.nothing.has(&w.folded));
    if negated {
        ClaimKind::Denial
    } else {
        ClaimKind::Action
    }
}

/// A set phrase: "c'est noté", "ça marche", "compte sur moi", "s'en occupe"…
pub(super) fn phrase(c: &Clause) -> Option<Verdict> {
    let j = &c.joined;
    let framed = c.framed();
    let leading = LEX.leading_phrases.iter().filter(|(p, _)| j.starts_with(p));
    for (phrase, kind) in LEX.phrases.iter().filter(|(p, _)| j.contains(p)).chain(leading) {
        // Idioms: "c'est fait maison", "c'est fait pour toi".
        if LEX.done_phrase.is(phrase) && LEX.done_idioms.in_(j) {
            continue;
        }
        // "si c'est bon pour toi", "je ne sais pas si c'est fait": hypothetical.
        if framed && kind == ClaimKind::Action && c.conditional() {
            continue;
        }
        // "Ton collègue pourrait s'en charger, non ?": a suggestion, not a fact.
        if kind == ClaimKind::ThirdParty && c.any(&LEX.modals) {
            continue;
        }
        let subject = match kind {
            ClaimKind::ThirdParty => Subject::ThirdParty,
            ClaimKind::StoredFact => Subject::User,
            _ => Subject::Arthur,
        };
        return Some(verdict(kind, "phrase", subject, &[phrase.trim()]));
    }
    None
}

/// A receipt's number: "n°7", "numéro 4 …", "#12" (an offer may name a number).
pub(super) fn receipt_number(c: &Clause) -> Option<Verdict> {
    if c.question_led || c.framed() {
        return None;
    }
    let numbered = c.words.windows(2).find(|w| LEX.number_marks.has(&w[0].folded) && is_number(&w[1]));
    if let Some(w) = numbered {
        return hit(ClaimKind::Receipt, "receipt.number", &[&w[0].raw, &w[1].raw]);
    }
    if let Some(w) = c.words.iter().find(|w| w.raw.starts_with('°')) {
        return hit(ClaimKind::Receipt, "receipt.number", &[&w.raw]);
    }
    None
}

/// "c'est / tout est / ça a été / it is … <state>", "a été créé", "elle sera dans le
/// dossier dès ce soir".
pub(super) fn state(c: &Clause) -> Option<Verdict> {
    // "Une fois que c'est fait, …", "pour quelle date il est prévu ?": a condition or a
    // question states nothing.
    if c.conditional() || c.question_led || super::clause::historical(c) {
        return None;
    }
    for (i, w) in c.words.iter().enumerate() {
        let copula = LEX.copulas.has(&w.folded);
        let passive = LEX.passive_aux.has(&w.folded);
        if !(copula || passive) {
            continue;
        }
        let mut subject = c.before(i);
        // "ça s'est bien enregistré": the pronominal passive.
        let pronominal = LEX.pronominal.has(subject) && copula;
        if pronominal && i > 1 {
            subject = c.folded(i - 2);
        }
        // "c'est le fait de stocker…": after a copula, an article opens a noun phrase.
        if copula && LEX.determiners.has(c.raw(i + 1)) {
            continue;
        }
        let k = c.after_clitics(i + 1);
        let next = if LEX.been.has(c.raw(k)) { c.raw(c.after_clitics(k + 1)) } else { c.raw(k) };
        // "il sera 9 h": the copula tells the time, not where something will be.
        let clock = c.words.get(k).is_some_and(is_number);
        let pronoun = LEX.pronoun_subjects.has(subject);
        let head = &c.words[..i];
        let about_memory = head.iter().any(|w| {
            is_memory_word(&w.folded)
                || LEX.operation_nouns.has(&w.folded)
                || LEX.third_parties.has(&w.folded)
                || LEX.about_memory_pronouns.has(&w.folded)
        });
        // "Il n'a pas été battu depuis": a pronoun alone needs a word of what became of a
        // stored item; "ta note n'a pas été…" names it.
        let about_stored = c.words.iter().any(|w| {
            is_memory_word(&w.folded)
                || LEX.operation_nouns.has(&w.folded)
                || LEX.third_parties.has(&w.folded)
                || LEX.user_possessives.has(&w.folded)
        });
        if passive && is_participle_after_aux(next) && (matches_state(next) || about_stored) {
            // "a été créé", "ont été envoyés", "has been saved", "rien n'a été effacé".
            return hit(negated_kind(c), "state.passive", &[&w.raw, next]);
        }
        let pronoun = pronoun || (pronominal && about_memory);
        // "elle sera dans le dossier dès ce soir": where it will be, a promise.
        if pronoun
            && !clock
            && LEX.future_copulas.has(&w.folded)
            && (LEX.places.has(next) || super::clause::has_specific_time(c) || matches_state(next))
        {
            return hit(ClaimKind::Promise, "state.will_be", &[subject, &w.raw, next]);
        }
        if pronominal && pronoun && is_participle_after_aux(next) && (matches_state(next) || about_stored) {
            return hit(ClaimKind::Action, "state.pronominal", &[subject, &w.raw, next]);
        }
        if pronoun && matches_state(next) {
            return hit(negated_kind(c), "state.copula", &[subject, &w.raw, next]);
        }
        if pronoun {
            if let Some(p) = LEX.state_phrases.found_in(&c.joined) {
                return hit(ClaimKind::Action, "state.copula", &[subject, &w.raw, p]);
            }
        }
    }
    None
}
