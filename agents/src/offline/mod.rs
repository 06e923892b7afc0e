//! Offline mode: a deterministic French command parser for when no model is configured or
//! none answered. It maps the most common spoken commands to the same tools, outcomes and
//! reports as the online turn, asks before a write it is unsure of, and never guesses:
//! anything else is an honest "je ne peux pas faire ça hors ligne".

pub mod text;
pub mod when;

use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Duration, Utc};
use chrono_tz::Tz;
use regex::Regex;
use serde_json::{json, Value};

use text::{tidy, trim_edges, Utterance};
use when::NUM_WORDS;

/// What the parser understood.
#[derive(Debug, Clone, PartialEq)]
pub enum OfflineAction {
    /// One tool call; `confident` is false when a default was guessed, or when the words
    /// were too bare to be sure ("stop", "pause"): then ask first.
    Tool { name: &'static str, args: Value, confident: bool },
    /// Not a command the parser knows.
    Unsupported,
}

fn re(pattern: &str) -> Regex {
    Regex::new(&pattern.replace("NUM", &format!(r"(?:\d{{1,4}}|{NUM_WORDS})"))).unwrap()
}

macro_rules! rx {
    ($name:ident, $pattern:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| re($pattern));
    };
}

rx!(
    WEEKLY,
    r"^(?:(?:fais-moi|fais moi|donne-moi|donne moi|lis-moi|lis moi|fais|donne|lis)\s+)?(?:le|mon|un|ton)?\s*(?:briefing|bilan|point|resume|recap(?:itulatif)?)\b.*\b(?:semaine|hebdo(?:madaire)?)\b|^(?:ma|la) semaine$"
);
rx!(
    DAILY,
    r"^(?:(?:fais-moi|fais moi|donne-moi|donne moi|lis-moi|lis moi|fais|donne|lis)\s+)?(?:le|mon|un|ton)?\s*(?:briefing|bilan|point|resume|recap(?:itulatif)?)\b|^qu'est-ce que j'ai (?:de prevu )?aujourd'hui$|^ma journee$"
);
rx!(
    MARK_DONE_A,
    r"^(?:le\s+|la\s+)?(?:rappel|tache)\s*(?:numero|n°|no|nr|#)?\s*(?P<n>NUM)\s+(?:est\s+|a\s+ete\s+)?(?:bien\s+)?(?:fait|faite|coche|cochee|termine|terminee|fini|finie|effectue|regle|valide)$"
);
rx!(
    MARK_DONE_B,
    r"^(?:marque|coche|valide|termine|j'ai fait|j'ai fini|j'ai termine)\s+(?:le\s+|la\s+)?(?:rappel|tache)\s*(?:numero|n°|no|nr|#)?\s*(?P<n>NUM)(?:\s+comme\s+(?:fait|faite|termine|terminee))?$"
);
rx!(
    PREF_OFF,
    r"^(?:desactive|oublie|retire|supprime|enleve|annule|efface)\s+(?:la\s+)?preference\s*(?:numero|n°|no|#)?\s*(?P<n>NUM)$"
);
rx!(PREF_LIST, r"\b(?:mes|les|quelles|liste|lis|montre|donne|rappelle)\b.*\bpreferences\b|^preferences$");
rx!(
    PREF_ADD,
    r"^(?:(?:retiens|memorise|souviens-toi|rappelle-toi|enregistre|garde en tete)\s+(?:bien\s+)?(?:que|qu')\s*|(?:nouvelle|ajoute une|ajoute la|enregistre une|memorise une|memorise la) preference\s*(?::|que)?\s*|preference\s*:\s*)(?P<c>.+)$"
);
rx!(
    PREF_HINT,
    r"^(?:je prefere|j'aime que tu|j'aimerais que tu|je veux que tu|je ne veux plus que tu|je voudrais que tu|desormais|dorenavant|a l'avenir)\b"
);
rx!(
    PREF_LIKE,
    r"^(?:je prefere|j'aime|je n'aime pas|je deteste|je veux que tu|je ne veux plus que tu|j'aimerais que tu|tu dois|ne me|appelle-moi|tutoie|vouvoie|reponds|parle|desormais|dorenavant)\b"
);
rx!(
    SESSION_START,
    r"^(?:je\s+(?:commence|demarre|attaque|me\s+mets|me\s+remets|m'y\s+mets)\s+(?:a\s+(?:travailler|bosser)\s+)?(?:sur|a)|je\s+(?:bosse|travaille)\s+(?:maintenant\s+)?sur|(?:demarre|lance|commence)\s+(?:une\s+session|le\s+chrono|la\s+session|le\s+minuteur)(?:\s+de\s+travail)?\s+(?:sur|pour)|(?:demarre|commence)\s+(?:sur|a\s+travailler\s+sur)|session\s+(?:de\s+travail\s+)?(?:sur|pour)|chrono\s+(?:sur|pour))\s+(?:le\s+projet\s+)?(?P<p>.+)$"
);
/// What the chrono commands act on, however it is called.
const CHRONO_OBJECT: &str = r"(?:le\s+chrono(?:metre)?|mon\s+chrono|la\s+session(?:\s+de\s+travail)?|ma\s+session(?:\s+de\s+travail)?|(?:mon|le)\s+travail|le\s+minuteur|le\s+compteur|le\s+timer|le\s+temps|la\s+seance)";

rx!(
    SESSION_PAUSE,
    &r"^(?:pause|petite\s+pause|(?:je|on)\s+(?:fais|fait|prends|prend)\s+(?:une|ma|notre|la)\s+pause|(?:je\s+|on\s+)?(?:mets?|met|mettre)\s+(?:OBJ\s+)?en\s+pause(?:\s+OBJ)?|(?:je\s+|on\s+)?(?:suspends?|interromps?|gele|fige)\s*(?:OBJ)?|pause\s+(?:du\s+|de\s+|sur\s+)?(?:OBJ|chrono|session|travail)|OBJ\s+en\s+pause)$".replace("OBJ", CHRONO_OBJECT)
);
rx!(
    SESSION_RESUME,
    &r"^(?:je\s+reprends(?:\s+OBJ)?|(?:reprends|reprend|relance|redemarre|relancer|redemarrer)\s+OBJ|reprends|reprise(?:\s+(?:de\s+|du\s+)?(?:OBJ|chrono|session|travail))?|on\s+reprend(?:\s+OBJ)?|je\s+m'y\s+remets|fin\s+de\s+(?:la\s+|ma\s+)?pause|(?:remets|remet)\s+OBJ\s+en\s+(?:route|marche)|c'est\s+reparti)$".replace("OBJ", CHRONO_OBJECT)
);
rx!(
    SESSION_STOP,
    &r"^(?:j'arrete(?:\s+OBJ|\s+de\s+travailler|\s+de\s+bosser)?|(?:je\s+|on\s+)?(?:arrete|arretes|stoppe|stop|coupe|termine|finis|clos|cloture|ferme|boucle)\s+(?:OBJ|tout)|on\s+arrete(?:\s+la|\s+de\s+travailler)?|(?:arrete|stoppe)\s+de\s+(?:travailler|compter|chronometrer|bosser)|(?:je\s+|on\s+)?(?:mets|met)\s+fin\s+a\s+OBJ|stop(?:\s+chrono|\s+session)?|(?:fin|arret)\s+(?:de\s+la\s+|du\s+|de\s+)?(?:session|chrono|travail)|j'ai\s+(?:fini|termine)(?:\s+de\s+travailler|\s+pour\s+aujourd'hui)?|je\s+m'arrete(?:\s+la)?|je\s+termine\s+OBJ|c'est\s+fini\s+pour\s+aujourd'hui)$".replace("OBJ", CHRONO_OBJECT)
);
// A chrono command said in one bare word ("stop", "pause"): it may be meant for the
// speech, not the session, so it is asked before it touches the chrono.
rx!(BARE_CHRONO, r"^(?:stop|stoppe|pause|arrete|halte|termine|fini|suspends?|(?:mets?|met)\s+en\s+pause)$");
rx!(BARE_STOP, r"^(?:arrete|halte|termine|fini|stoppe)$");

/// Does the user's message ask for something the memory or the chrono would hold: a
/// command, a request to remember, a question about their own data? An independent
/// signal (the user's words, not the model's) that an answer must come from a tool.
pub fn asks_about_memory(raw: &str) -> bool {
    let u = Utterance::new(raw);
    CUES.is_match(&u.folded)
}

rx!(
    CUES,
    r"\b(?:rappel\w*|note|notes|noter|notez|prends\s+note|retiens|retenir|souviens|souvenir|souvenirs|memoris\w*|memoire|preferences?|oublie\s+pas|n'oublie|fais[- ]moi\s+penser|pense\s+a\s+me|agenda|calendrier|rendez-vous|rdv|sessions?|chrono\w*|minuteur|projets?|decisions?|on\s+a\s+decide|acte|tache|taches|supprime|efface|retire|desactive|annule|marque|coche|enregistre|ajoute|programme|planifie|combien|travaille|bosse|briefing|bilan|prevu|qu'est-ce\s+que\s+j'ai|j'ai\s+quoi|mon\s+code|mot\s+de\s+passe|mon\s+numero|mes\s+identifiants|mon\s+planning|emploi\s+du\s+temps|ma\s+liste|ma\s+semaine|ma\s+journee)\b"
);
rx!(
    WORKTIME,
    r"\bcombien\b.*\b(?:travaille|bosse|temps)\b|\btemps\s+de\s+travail\b|\bj'ai\s+(?:travaille|bosse)\s+combien\b|\bmon\s+temps\b"
);
rx!(
    WORKTIME_PROJECT,
    r"\bsur\s+(?:le\s+projet\s+)?(?P<p>[^,?]+?)(?:\s+(?:aujourd'hui|cette\s+semaine|hier|la\s+semaine\s+derniere|ce\s+mois(?:-ci)?))?$"
);
rx!(
    REMINDERS_LIST,
    r"\b(?:mes|les|quels?|quelles?|liste|lis|montre|donne|affiche)\b.*\brappels\b|^rappels$|\bqu'est-ce que j'ai a faire\b|\bj'ai quoi a faire\b|\bqu'est-ce qu'il me reste a faire\b"
);
rx!(NOTES_LIST, r"\b(?:mes|les|quelles?|liste|lis|montre|donne|affiche|relis)\b.*\bnotes\b|^notes$");
rx!(NOTES_PROJECT, r"\b(?:du|pour le|sur le)\s+projet\s+(?P<p>.+)$");
rx!(
    SEARCH,
    r"^(?:cherche|recherche|retrouve|fouille)\s+(?:dans\s+(?:ma|la|tes|mes)\s+(?:memoire|souvenirs)\s*)?(?:(?:ce\s+que\s+(?:je\s+sais|tu\s+sais|j'ai\s+dit)\s+(?:sur|de|a\s+propos\s+de))\s+)?(?P<q>.+)$|\btu\s+te\s+souviens\s+(?:de\s+|du\s+|des\s+|d')(?P<q2>.+)$|\bqu'est-ce\s+que\s+(?:je\s+sais|tu\s+sais|tu\s+te\s+rappelles)\s+(?:sur|de|du|des|a\s+propos\s+de)\s+(?P<q3>.+)$|\bque\s+sais-tu\s+(?:sur|de)\s+(?P<q4>.+)$"
);
rx!(
    REMINDER,
    r"\b(?:rappelle[- ]moi|rappelle[- ]nous|fais[- ]moi\s+penser|fais\s+moi\s+penser|n'oublie\s+pas\s+de\s+me\s+rappeler|pense\s+a\s+me\s+rappeler|(?:mets|met|mets-moi|cree|ajoute|programme|enregistre)\s+(?:un|le|moi\s+un)\s+rappel|nouveau\s+rappel|un\s+rappel|^rappel)\b\s*(?::|,)?"
);
rx!(
    NOTE,
    r"^(?:note|notes|noter|prends\s+note|prend\s+note|nouvelle\s+note|ajoute\s+une\s+note|cree\s+une\s+note|memo|mets\s+une\s+note|une\s+note|ecris)\b\s*(?::|,)?"
);
rx!(NOTE_PROJECT_HEAD, r"^(?:pour|sur|dans)\s+(?:le\s+)?projet\s+(?P<p>[^\s:,]+(?:\s+[^\s:,]+)?)\s*[:,]\s*");
rx!(NOTE_PROJECT_TAIL, r"\s+(?:pour|sur|dans)\s+le\s+projet\s+(?P<p>[^\s:,]+)$");

rx!(NEGATION, r"\b(?:pas|plus|jamais|ne|n')\b|\bn'");

/// The reminder trigger leads the sentence, or follows only the moment it is for
/// ("Demain à 9 h, rappelle-moi…").
fn trigger_leads(f: &str, start: usize, now: chrono::NaiveDateTime) -> bool {
    let before = &f[..start];
    if before.trim().is_empty() {
        return true;
    }
    let Some(moment) = when::extract(before, now) else { return false };
    let mut rest = before.to_string();
    for &(a, b) in moment.spans.iter().rev() {
        rest.replace_range(a..b, "");
    }
    rest.trim_matches(|c: char| c.is_whitespace() || c == ',').is_empty()
}

fn num(raw: &str) -> Option<i64> {
    raw.parse::<i64>().ok().or_else(|| when::number(raw).map(i64::from))
}

fn tool(name: &'static str, args: Value) -> OfflineAction {
    OfflineAction::Tool { name, args, confident: true }
}

/// Parses one utterance (a whisper transcript or typed text).
pub fn parse(raw: &str, now: DateTime<Utc>, tz: Tz) -> OfflineAction {
    let u = Utterance::new(raw);
    let f = u.folded.as_str();
    if f.is_empty() {
        return OfflineAction::Unsupported;
    }
    let local_now = now.with_timezone(&tz).naive_local();
    let today = local_now.date();

    // A question or a negation never triggers a write: "le rappel 3 n'est pas fait",
    // "pourquoi as-tu retiré la préférence 2 ?".
    let negated = NEGATION.is_match(f);
    let asks = u.question;
    if !asks && !negated {
        if let Some(c) = MARK_DONE_A.captures(f).or_else(|| MARK_DONE_B.captures(f)) {
            if let Some(id) = c.name("n").and_then(|n| num(n.as_str())) {
                return tool("marquer_rappel_fait", json!({ "id": id }));
            }
        }
        if let Some(c) = PREF_OFF.captures(f) {
            if let Some(id) = c.name("n").and_then(|n| num(n.as_str())) {
                return tool("desactiver_preference", json!({ "id": id }));
            }
        }
    }
    if !asks {
        if let Some(m) = REMINDER.find(f).filter(|m| trigger_leads(f, m.start(), local_now)) {
            let moment = when::extract(f, local_now);
            let cuts: Vec<(usize, usize)> = moment.as_ref().map(|w| w.spans.clone()).unwrap_or_default();
            let mut texte = tidy(&u.original_without(m.end(), f.len(), &cuts));
            if texte.is_empty() {
                texte = tidy(&u.original_without(0, m.start(), &cuts));
            }
            if texte.is_empty() {
                return OfflineAction::Unsupported;
            }
            let (at, confident) = match moment {
                Some(w) => (w.at, w.explicit_time),
                // No moment said: tomorrow 9:00, to be confirmed.
                None => (today.succ_opt().unwrap_or(today).and_hms_opt(9, 0, 0).unwrap_or(local_now), false),
            };
            return OfflineAction::Tool {
                name: "creer_rappel",
                args: json!({ "texte": texte, "echeance": at.format("%Y-%m-%dT%H:%M").to_string() }),
                confident,
            };
        }
        if let Some(m) = NOTE.find(f) {
            let rest_start = m.end();
            let rest = &f[rest_start..];
            let (projet, content_start, content_end) = if let Some(c) = NOTE_PROJECT_HEAD.captures(rest.trim_start()) {
                let offset = rest_start + (rest.len() - rest.trim_start().len());
                let p = c.name("p").unwrap();
                (
                    Some(tidy(&u.original_slice(offset + p.start(), offset + p.end()))),
                    offset + c.get(0).unwrap().end(),
                    f.len(),
                )
            } else if let Some(c) = NOTE_PROJECT_TAIL.captures(rest) {
                let p = c.name("p").unwrap();
                (
                    Some(tidy(&u.original_slice(rest_start + p.start(), rest_start + p.end()))),
                    rest_start,
                    rest_start + c.get(0).unwrap().start(),
                )
            } else {
                (None, rest_start, f.len())
            };
            let raw = trim_edges(&u.original_slice(content_start, content_end));
            // "note que X": the "que" belongs to the command; "d'après…" stays as said.
            let lower = raw.to_lowercase();
            let texte = if lower.starts_with("que ") {
                trim_edges(&raw[4..])
            } else if lower.starts_with("qu'") {
                trim_edges(&raw[3..])
            } else {
                raw
            };
            if !texte.is_empty() {
                let mut args = json!({ "texte": texte });
                if let Some(p) = projet.filter(|p| !p.is_empty()) {
                    args["projet"] = json!(p);
                }
                return tool("creer_note", args);
            }
        }
        if let Some(c) = PREF_ADD.captures(f) {
            let m = c.name("c").unwrap();
            let texte = tidy(&u.original_slice(m.start(), m.end()));
            if !texte.is_empty() {
                // "retiens que X" is a preference only when X speaks of how to behave.
                let folded_c = &f[m.start()..m.end()];
                let explicit = f.contains("preference") || PREF_LIKE.is_match(folded_c);
                return OfflineAction::Tool {
                    name: "memoriser_preference",
                    args: json!({ "texte": texte }),
                    confident: explicit,
                };
            }
        }
        if PREF_HINT.is_match(f) {
            let texte = tidy(&u.original.iter().collect::<String>());
            return OfflineAction::Tool {
                name: "memoriser_preference",
                args: json!({ "texte": texte }),
                confident: false,
            };
        }
    }
    if WEEKLY.is_match(f) {
        return tool("lire_briefing_hebdo", json!({}));
    }
    if BARE_STOP.is_match(f) {
        return OfflineAction::Tool { name: "arreter_session", args: json!({}), confident: false };
    }
    if PREF_LIST.is_match(f) {
        return tool("lister_preferences", json!({}));
    }
    if let Some(c) = SESSION_START.captures(f) {
        let p = c.name("p").unwrap();
        let projet = tidy(&u.original_slice(p.start(), p.end()));
        if !projet.is_empty() {
            return tool("demarrer_session", json!({ "projet": projet }));
        }
    }
    if SESSION_PAUSE.is_match(f) {
        return OfflineAction::Tool { name: "suspendre_session", args: json!({}), confident: !BARE_CHRONO.is_match(f) };
    }
    if SESSION_RESUME.is_match(f) {
        return tool("reprendre_session", json!({}));
    }
    if SESSION_STOP.is_match(f) {
        return OfflineAction::Tool { name: "arreter_session", args: json!({}), confident: !BARE_CHRONO.is_match(f) };
    }
    if WORKTIME.is_match(f) {
        let (debut, fin) = if f.contains("semaine derniere") {
            let monday = crate::time::week_start(today) - Duration::days(7);
            (monday, monday + Duration::days(6))
        } else if f.contains("semaine") {
            (crate::time::week_start(today), today)
        } else if f.contains("mois") {
            (today.with_day(1).unwrap_or(today), today)
        } else if f.contains("hier") {
            (today - Duration::days(1), today - Duration::days(1))
        } else {
            (today, today)
        };
        let mut args = json!({ "debut": debut.to_string() });
        if fin != debut {
            args["fin"] = json!(fin.to_string());
        }
        if let Some(c) = WORKTIME_PROJECT.captures(f) {
            let p = c.name("p").unwrap();
            let projet = tidy(&u.original_slice(p.start(), p.end()));
            let folded_p = &f[p.start()..p.end()];
            if !projet.is_empty() && !matches!(folded_p.trim(), "la semaine" | "le mois" | "aujourd'hui") {
                args["projet"] = json!(projet);
            }
        }
        return tool("lire_temps_travail", args);
    }
    if let Some(c) = SEARCH.captures(f) {
        let m = ["q", "q2", "q3", "q4"].iter().find_map(|n| c.name(n)).unwrap();
        let requete = tidy(&u.original_slice(m.start(), m.end()));
        if !requete.is_empty() {
            return tool("chercher_dans_memoire", json!({ "requete": requete }));
        }
    }
    if REMINDERS_LIST.is_match(f) {
        let all = f.contains("faits") || f.contains("tous");
        return tool("lister_rappels", if all { json!({"inclure_faits": true}) } else { json!({}) });
    }
    if NOTES_LIST.is_match(f) {
        if let Some(c) = NOTES_PROJECT.captures(f) {
            let p = c.name("p").unwrap();
            return tool("lister_notes", json!({ "projet": tidy(&u.original_slice(p.start(), p.end())) }));
        }
        return tool("lister_notes", json!({}));
    }
    if DAILY.is_match(f) {
        return tool("lire_briefing_hebdo", json!({ "periode": "jour" }));
    }
    OfflineAction::Unsupported
}

/// The question asked before a write the parser is unsure of, composed from its arguments.
pub fn confirmation_question(name: &str, args: &Value, now: DateTime<Utc>, tz: Tz) -> String {
    let texte = args.get("texte").and_then(Value::as_str).unwrap_or_default();
    match name {
        "creer_rappel" => {
            let when = args
                .get("echeance")
                .and_then(Value::as_str)
                .and_then(|e| crate::time::DueAt::parse(e, tz))
                .map(|d| crate::fr::spoken_datetime(d.0, now, tz))
                .unwrap_or_default();
            format!("Tu veux que je crée le rappel « {texte} » pour {when} ?")
        }
        "memoriser_preference" => format!("Tu veux que je retienne la préférence « {texte} » ?"),
        "creer_note" => match args.get("projet").and_then(Value::as_str) {
            Some(p) => format!("Tu veux que je crée la note « {texte} » pour le projet {p} ?"),
            None => format!("Tu veux que je crée la note « {texte} » ?"),
        },
        "memoriser_souvenir" => format!("Tu veux que je mémorise le souvenir « {texte} » ?"),
        "marquer_rappel_fait" => match args.get("id").and_then(Value::as_i64) {
            Some(id) => format!("Tu veux que je marque le rappel n°{id} comme fait ?"),
            None => "Tu veux que je marque un rappel comme fait ?".to_string(),
        },
        "desactiver_preference" => match args.get("id").and_then(Value::as_i64) {
            Some(id) => format!("Tu veux que je désactive la préférence n°{id} ?"),
            None => "Tu veux que je désactive une préférence ?".to_string(),
        },
        "demarrer_session" => match args.get("projet").and_then(Value::as_str) {
            Some(p) => format!("Tu veux que je démarre une session de travail sur {p} ?"),
            None => "Tu veux que je démarre une session de travail ?".to_string(),
        },
        "suspendre_session" => "Tu veux que je mette la session de travail en pause ?".to_string(),
        "reprendre_session" => "Tu veux que je reprenne la session de travail ?".to_string(),
        "arreter_session" => "Tu veux que j'arrête la session de travail ?".to_string(),
        other => format!("Tu veux que j'exécute {other} ?"),
    }
}

static YES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:oui|ouais|ouai|yes|ok|okay|d'accord|daccord|vas-y|vas y|va-y|confirme|je confirme|c'est ca|c'est bon|exactement|parfait|bien sur|tout a fait|absolument|volontiers|carrement|yep)(?:\s+(?:merci|vas-y|c'est ca|stp|s'il te plait|oui|confirme|parfait))*$").unwrap()
});
static NO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:non|nan|no|nope|annule|laisse tomber|pas du tout|surtout pas|non merci|oublie|oublie ca|stop|pas maintenant|ce n'est pas ca|c'est pas ca)(?:\s+(?:merci|annule|laisse tomber|c'est pas ca))*$").unwrap()
});

/// A yes/no answer to a confirmation question, if the utterance is one.
pub fn yes_no(raw: &str) -> Option<bool> {
    let u = Utterance::new(raw);
    let cleaned = u.folded.replace([',', '.', '!'], " ");
    let f = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    let f = f.as_str();
    if YES.is_match(f) {
        Some(true)
    } else if NO.is_match(f) {
        Some(false)
    } else {
        None
    }
}
