//! The second line against narrated actions: a French detector of sentences in which the
//! model claims (or denies) that something was recorded. What was done is told by
//! receipts; such sentences from a model are never shown.

use crate::text::normalise;

/// Past participles of the actions a model might narrate (normalised, masculine singular).
const PARTICIPLES: &[&str] = &[
    "note",
    "ajoute",
    "enregistre",
    "cree",
    "retire",
    "supprime",
    "desactive",
    "memorise",
    "marque",
    "demarre",
    "arrete",
    "lance",
    "programme",
    "modifie",
    "acte",
    "retenu",
    "garde",
    "inscrit",
    "rajoute",
    "planifie",
    "efface",
    "enleve",
    "repris",
    "fixe",
    "cale",
    "range",
    "sauvegarde",
    "consigne",
    "valide",
    "coche",
    "mis",
    "pris",
    "stocke",
    "conserve",
    "lance",
    "suspendu",
    "reactive",
    "change",
    "mis a jour",
    "mis en pause",
    "pris en compte",
    "pris note",
];

/// Infinitives of the same actions ("je viens d'ajouter").
const INFINITIVES: &[&str] = &[
    "noter",
    "ajouter",
    "enregistrer",
    "creer",
    "retirer",
    "supprimer",
    "desactiver",
    "memoriser",
    "marquer",
    "demarrer",
    "arreter",
    "lancer",
    "programmer",
    "modifier",
    "acter",
    "retenir",
    "garder",
    "inscrire",
    "planifier",
    "effacer",
    "enlever",
    "reprendre",
    "sauvegarder",
    "cocher",
    "valider",
    "mettre",
    "suspendre",
    "changer",
];

/// Memory nouns whose passive voice is a claim ("ton rappel a été créé").
const NOUNS: &[&str] = &[
    "rappel",
    "rappels",
    "note",
    "notes",
    "preference",
    "preferences",
    "souvenir",
    "souvenirs",
    "decision",
    "decisions",
    "projet",
    "projets",
    "session",
    "chrono",
    "tache",
    "taches",
    "memo",
];

/// Words that may surround a bare participle ("Ok, c'est bien noté !").
const FILLERS: &[&str] = &[
    "ok", "okay", "parfait", "voila", "bien", "c", "est", "tout", "alors", "tres", "super", "et", "hop", "c'est", "d",
    "accord",
];

fn is_participle(word: &str) -> bool {
    let stem =
        word.strip_suffix("es").or_else(|| word.strip_suffix('e')).or_else(|| word.strip_suffix('s')).unwrap_or(word);
    PARTICIPLES.iter().any(|p| !p.contains(' ') && (*p == word || *p == stem))
}

fn tokens(sentence: &str) -> Vec<String> {
    normalise(&sentence.replace(['’', '`'], "'"))
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Does this one sentence claim (or deny) that an action was performed?
pub fn is_action_claim(sentence: &str) -> bool {
    let words = tokens(sentence);
    if words.is_empty() {
        return false;
    }
    let joined = format!(" {} ", words.join(" "));
    const PHRASES: &[&str] = &[
        " c est note ",
        " c est fait ",
        " c est bon ",
        " bien note ",
        " je m en souviendrai ",
        " je retiens ",
        " je le retiens ",
        " je te le rappellerai ",
        " je te rappellerai ",
        " je vous le rappellerai ",
        " je vous rappellerai ",
        " rien n a ete ",
        " je n ai rien ",
        " voila qui est fait ",
        " c est dans ta liste ",
        " c est pris en compte ",
        " pris bonne note ",
        " c est en place ",
        " je m en occupe ",
        " je n ai pas pu ",
        " n a pas ete ",
        " aucune modification n a ",
    ];
    if PHRASES.iter().any(|p| joined.contains(p)) {
        return true;
    }
    // "je viens d'ajouter le rappel", "il vient d'être créé".
    for pair in words.windows(3) {
        if matches!(pair[0].as_str(), "viens" | "vient" | "venons")
            && pair[1] == "d"
            && (INFINITIVES.contains(&pair[2].as_str()) || pair[2] == "etre")
        {
            return true;
        }
    }
    // A memory noun directly followed by a participle: "Rappel ajouté.", "note enregistrée".
    for pair in words.windows(2) {
        if NOUNS.contains(&pair[0].as_str()) && is_participle(&pair[1]) {
            return true;
        }
    }
    // "j'ai (bien|déjà|aussi|donc) noté", "je l'ai ajouté", "je t'ai créé", "on a créé".
    for (i, w) in words.iter().enumerate() {
        let subject = match w.as_str() {
            "ai" => {
                i >= 1
                    && matches!(words[i - 1].as_str(), "j" | "l" | "les" | "t" | "m" | "vous" | "lui" | "nous" | "leur")
            }
            "a" => i >= 1 && words[i - 1] == "on",
            "avons" => i >= 1 && words[i - 1] == "nous",
            _ => false,
        };
        if subject {
            let rest = words[i + 1..].iter().skip_while(|w| {
                matches!(w.as_str(), "bien" | "deja" | "aussi" | "donc" | "egalement" | "maintenant" | "tout")
            });
            if let Some(next) = rest.clone().next() {
                if is_participle(next) {
                    return true;
                }
            }
        }
    }
    // "ton rappel a été créé", "la préférence est bien désactivée", "les notes sont enregistrées".
    if words.iter().any(|w| NOUNS.contains(&w.as_str())) {
        for (i, w) in words.iter().enumerate() {
            if matches!(w.as_str(), "ete" | "est" | "sont") {
                let rest = words[i + 1..]
                    .iter()
                    .skip_while(|w| matches!(w.as_str(), "bien" | "maintenant" | "desormais" | "deja" | "bel"));
                if let Some(next) = rest.clone().next() {
                    if is_participle(next) {
                        return true;
                    }
                }
            }
        }
    }
    // A bare participle: "Noté !", "C'est enregistré.", "Parfait, ajouté."
    let meaningful: Vec<&String> = words.iter().filter(|w| !FILLERS.contains(&w.as_str())).collect();
    meaningful.len() == 1 && is_participle(meaningful[0])
}

/// Splits text into sentences, keeping their punctuation.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if matches!(c, '.' | '!' | '?' | '…' | '\n') {
            if !current.trim().is_empty() {
                out.push(current.trim().to_string());
            }
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// The model text without its action claims, and the sentences removed.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_caught() {
        for s in [
            "C'est noté !",
            "c'est noté",
            "Noté.",
            "Bien noté, je te le rappellerai demain.",
            "J'ai ajouté le rappel pour demain.",
            "J’ai bien enregistré ta préférence.",
            "Je l'ai retirée de tes préférences.",
            "Ton rappel a été créé pour lundi.",
            "La préférence est bien désactivée.",
            "Parfait, c'est enregistré.",
            "J'ai retiré la préférence.",
            "Je m'en souviendrai.",
            "Rien n'a été écrit.",
            "Je n'ai rien enregistré.",
            "OK, ajouté !",
            "J'ai mis à jour le projet.",
            "J'ai démarré le chrono.",
            "Rappel ajouté.",
            "Note enregistrée !",
            "Je t'ai ajouté un rappel pour demain.",
            "Je viens d'ajouter le rappel.",
            "Voilà, rappel enregistré pour demain 9 h.",
            "Je t'ai aussi créé une note.",
        ] {
            assert!(is_action_claim(s), "not caught: {s}");
        }
    }

    #[test]
    fn ordinary_sentences_pass() {
        for s in [
            "Tu as trois rappels cette semaine.",
            "Le dossier de la CAF est à rendre lundi.",
            "Bonne journée !",
            "Veux-tu que je crée un rappel ?",
            "Ta note sur le DKIM parle de la signature.",
            "Je ne trouve aucun souvenir à ce sujet.",
            "Le projet Atlas est en phase de cadrage.",
            "Il est dix heures.",
        ] {
            assert!(!is_action_claim(s), "false positive: {s}");
        }
    }

    #[test]
    fn stripping_keeps_the_rest() {
        let (kept, removed) = strip_claims("C'est noté ! Tu as aussi un rendez-vous jeudi. J'ai ajouté la note.");
        assert_eq!(kept, "Tu as aussi un rendez-vous jeudi.");
        assert_eq!(removed.len(), 2);
    }
}
