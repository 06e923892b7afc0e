//! What code says on its own, with no model: the clock, help, courtesy, and the question
//! asked before a command the grammar was not sure of — naming exactly what would be done —
//! or the sentence that says what is missing when nothing can be proposed.

use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use serde_json::Value;

use super::compose::{code, fixed, AnswerPart};
use crate::fr;
// Durations are French output (`fr`); the board still reads this one from here.
pub use crate::fr::written_duration;
use crate::report::list_name;
use crate::tools::ToolName;
use crate::understand::{Courtesy, Doubt, Lecture, Periode, Quand, Target, TimerAction, Told, ToolCommand};

/// Said when the grammar did not recognise a command and no model can answer.
pub const NOT_UNDERSTOOD_OFFLINE: &str =
    "Je ne sais pas répondre à ça sans modèle de langage, et aucun n'est configuré. Rien n'a été fait. Dis « aide » pour savoir ce que je sais faire.";
/// The same, once the conversation has been told that no model answers.
pub const NOT_UNDERSTOOD_AGAIN: &str = "Je ne sais pas répondre à ça sans modèle de langage. Rien n'a été fait.";
/// Said once when the model answers again in a conversation told it did not.
pub const MODEL_BACK: &str = "Le modèle de langage répond de nouveau.";
pub const NOT_UNDERSTOOD_UNREACHABLE: &str =
    "Je ne sais pas répondre à ça sans modèle de langage, et aucun ne répond pour l'instant. Rien n'a été fait. Dis « aide » pour savoir ce que je sais faire.";

fn quoted(s: &str) -> String {
    format!("« {s} »")
}

/// « le minuteur « pâtes » », « le minuteur de 5 min », « le minuteur ».
fn timer_described(nom: Option<&str>, started_for: Option<i64>) -> String {
    match (nom, started_for) {
        (Some(n), Some(d)) => format!("le minuteur {} de {}", quoted(n), written_duration(d)),
        (Some(n), None) => format!("le minuteur {}", quoted(n)),
        (None, Some(d)) => format!("le minuteur de {}", written_duration(d)),
        (None, None) => "le minuteur".into(),
    }
}

/// What a command would do, after « que je »: "crée le rappel « … » pour demain à 9 h 00".
pub fn describe(cmd: &ToolCommand, now: DateTime<Utc>, tz: Tz) -> String {
    use ToolCommand as T;
    // Written with digits whatever `now`: the spoken form is made from it.
    let _ = now;
    let local_to_utc = |naive: chrono::NaiveDateTime| {
        crate::time::DueAt::parse(&naive.format("%Y-%m-%dT%H:%M").to_string(), tz).map(|d| d.0)
    };
    let id_of = |t: &Target, what: &str| match t {
        Target::Id(id) => format!("{what} n°{id}"),
        _ => format!("{what} que tu as décrit"),
    };
    match cmd {
        T::CreerNote { texte, projet: Some(p) } => format!("crée la note {} pour le projet {p}", quoted(texte)),
        T::CreerNote { texte, projet: None } => format!("crée la note {}", quoted(texte)),
        T::ListerNotes { .. } => "lise tes notes".into(),
        T::SupprimerNote { target } => format!("supprime {}", id_of(target, "la note")),
        // Written with digits, as receipts are (`compose::fixed` says them in words).
        T::CreerRappel { texte, echeance } => {
            let when = local_to_utc(*echeance).map(|at| fr::datetime(at, tz)).unwrap_or_else(|| echeance.to_string());
            format!("crée le rappel {} pour le {when}", quoted(texte))
        }
        T::ListerRappels { .. } => "lise tes rappels".into(),
        T::MarquerRappelFait { target } => format!("marque {} comme fait", id_of(target, "le rappel")),
        T::SupprimerRappel { target } => format!("supprime {}", id_of(target, "le rappel")),
        T::LireBriefing { periode: Periode::Jour } => "lise le briefing du jour".into(),
        T::LireBriefing { periode: Periode::Semaine } => "lise le briefing de la semaine".into(),
        T::LireTempsTravail { .. } => "lise ton temps de travail".into(),
        T::MemoriserPreference { texte } => format!("retienne la préférence {}", quoted(texte)),
        T::ListerPreferences => "lise tes préférences".into(),
        T::DesactiverPreference { id } => format!("désactive la préférence n°{id}"),
        T::ChercherDansMemoire { requete } => format!("cherche {} dans ta mémoire", quoted(requete)),
        T::Chercher { requete } => format!("cherche {} dans tes notes et ta mémoire", quoted(requete)),
        T::MemoriserSouvenir { texte } => format!("mémorise le souvenir {}", quoted(texte)),
        T::DemarrerSession { projet } => format!("démarre une session de travail sur {projet}"),
        T::SuspendreSession => "mette la session de travail en pause".into(),
        T::ReprendreSession => "reprenne la session de travail".into(),
        T::ArreterSession => "arrête la session de travail".into(),
        T::ListerProjets => "lise tes projets".into(),
        T::LireProjet { nom } => format!("lise le projet {nom}"),
        T::CreerProjet { nom, .. } => format!("crée le projet {}", quoted(nom)),
        T::ModifierProjet { nom, .. } => format!("modifie le projet {nom}"),
        T::ActerDecision { projet, texte } => format!("acte la décision {} pour le projet {projet}", quoted(texte)),
        T::DemarrerMinuteur { duree_secondes, nom: Some(n) } => {
            format!("lance un minuteur {} de {}", quoted(n), written_duration(*duree_secondes))
        }
        T::DemarrerMinuteur { duree_secondes, nom: None } => {
            format!("lance un minuteur de {}", written_duration(*duree_secondes))
        }
        T::ListerMinuteurs { nom: None, duree_initiale_secondes: None } => "lise tes minuteurs".into(),
        T::ListerMinuteurs { nom, duree_initiale_secondes } => {
            format!("te dise où en est {}", timer_described(nom.as_deref(), *duree_initiale_secondes))
        }
        T::ModifierMinuteur { nom, duree_initiale_secondes, delta_secondes, action } => {
            let which = timer_described(nom.as_deref(), *duree_initiale_secondes);
            match (action, delta_secondes) {
                (Some(TimerAction::Pause), _) => format!("mette {which} en pause"),
                (Some(TimerAction::Resume), _) => format!("relance {which}"),
                (None, Some(d)) if *d < 0 => format!("retire {} à {which}", written_duration(*d)),
                (None, Some(d)) => format!("ajoute {} à {which}", written_duration(*d)),
                (None, None) => format!("modifie {which}"),
            }
        }
        T::AnnulerMinuteur { tous: true, .. } => "annule tous les minuteurs".into(),
        T::AnnulerMinuteur { nom, duree_initiale_secondes, .. } => {
            format!("annule {}", timer_described(nom.as_deref(), *duree_initiale_secondes))
        }
        T::AjouterAListe { liste, element } => format!("ajoute {} à {}", quoted(element), list_name(liste)),
        T::Several(each) => {
            let said: Vec<String> = each.iter().map(|c| describe(c, now, tz)).collect();
            match said.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{}, et {last}", rest.join(", ")),
                _ => said.join(""),
            }
        }
        T::RetirerDeListe { liste, element } => format!("retire {} de {}", quoted(element), list_name(liste)),
        T::LireListe { liste } => format!("lise {}", list_name(liste)),
        T::ViderListe { liste } => format!("vide {}", list_name(liste)),
        T::CreerRappelRecurrent { texte, echeance, frequence, intervalle } => {
            let rule = crate::memory::Repetition::new(*frequence, *intervalle, *echeance, tz);
            let when = local_to_utc(*echeance).map(|at| fr::datetime(at, tz)).unwrap_or_else(|| echeance.to_string());
            format!("crée le rappel répété {} {}, à partir du {when}", quoted(texte), rule.label())
        }
        T::DeplacerRappel { target, quand } => {
            let which = match target {
                Target::Id(id) => format!("le rappel n°{id}"),
                Target::This => "ce rappel".to_string(),
                _ => "le rappel que tu as décrit".to_string(),
            };
            match quand {
                Quand::At(at) => {
                    let when = local_to_utc(*at).map(|u| fr::datetime(u, tz)).unwrap_or_else(|| at.to_string());
                    format!("déplace {which} au {when}")
                }
                Quand::Day(d) => format!("déplace {which} au {}, à la même heure", fr::date(*d)),
                Quand::Shift(s) if *s < 0 => format!("avance {which} de {}", written_duration(*s)),
                Quand::Shift(s) => format!("décale {which} de {}", written_duration(*s)),
            }
        }
        T::ArreterRappelRecurrent { target } => format!("arrête {}", id_of(target, "le rappel répété")),
        T::CreerReveil { heure, nom } => {
            let when = local_to_utc(*heure).map(|u| fr::datetime(u, tz)).unwrap_or_else(|| heure.to_string());
            match nom {
                Some(n) => format!("règle le réveil {} pour le {when}", quoted(n)),
                None => format!("règle un réveil pour le {when}"),
            }
        }
        T::ListerReveils => "lise tes réveils".into(),
        T::AnnulerReveil { tous: true, .. } => "annule tous les réveils".into(),
        T::AnnulerReveil { id: Some(id), .. } => format!("annule le réveil n°{id}"),
        T::AnnulerReveil { .. } => "annule le réveil".into(),
        T::Lire { lecture: Lecture::Souvenirs, .. } => "lise tes souvenirs".into(),
        T::Lire { lecture: Lecture::Preferences, .. } => "lise tes préférences".into(),
        T::Lire { lecture: Lecture::Notes, .. } => "lise tes notes".into(),
        T::Lire { lecture: Lecture::Rappels, .. } => "lise tes rappels".into(),
    }
}

/// « que je crée », « que j'arrête », « que j'ajoute ».
pub fn que_je(what: &str) -> String {
    let first = arthur_french::fold::fold(what).chars().next().unwrap_or('x');
    if "aeiouh".contains(first) {
        format!("que j'{what}")
    } else {
        format!("que je {what}")
    }
}

/// The question asked before an unsure command.
pub fn question(cmd: &ToolCommand, doubt: Doubt, now: DateTime<Utc>, tz: Tz) -> String {
    let what = que_je(&describe(cmd, now, tz));
    match (cmd, doubt) {
        (ToolCommand::CreerRappel { .. } | ToolCommand::DeplacerRappel { .. }, Doubt::Rolled) => {
            format!("Cette heure est déjà passée aujourd'hui. Tu veux {what} ?")
        }
        (ToolCommand::CreerRappel { .. }, Doubt::TextHoldsMoment) => {
            format!("Je ne suis pas sûr d'avoir bien coupé la date. Tu veux {what} ?")
        }
        (_, Doubt::Misheard) => format!("J'ai peut-être mal entendu. Tu veux {what} ?"),
        (_, Doubt::TooLong) => format!("C'est long. Tu veux vraiment {what} ?"),
        _ => format!("Tu veux {what} ?"),
    }
}

/// What to say when a command cannot be proposed as it was said.
pub fn incomplete(intent: &str, doubt: Doubt) -> String {
    use ToolName as T;
    // Every grammar intent is a tool; any other name gets the general sentence.
    let Some(tool) = ToolName::from_wire(intent) else {
        return "Je n'ai pas compris toute la demande : je n'ai rien fait. Redis-la autrement.".into();
    };
    match (tool, doubt) {
        (_, Doubt::TwoCommands) => {
            "Tu m'as demandé plusieurs choses à la fois : je n'ai rien fait. Dis-les-moi une par une.".into()
        }
        (T::CreerRappel, Doubt::Impossible) => {
            "Cette date ou cette heure n'existe pas : je n'ai pas créé le rappel. Redis-moi quand.".into()
        }
        (T::CreerRappel, Doubt::Past | Doubt::NotPositive) => {
            "Ce moment est déjà passé : je n'ai pas créé le rappel. Redis-moi quand.".into()
        }
        (T::CreerRappel | T::CreerRappelRecurrent, Doubt::Vague | Doubt::TooLong) => {
            "Je n'ai pas compris quand ce rappel doit revenir : je n'ai rien créé. Dis par exemple : rappelle-moi tous les lundis à 19 h de sortir les poubelles.".into()
        }
        (T::CreerRappelRecurrent, _) => {
            "Qu'est-ce que je dois te rappeler, et quand ? Dis par exemple : rappelle-moi tous les lundis à 19 h de sortir les poubelles.".into()
        }
        (T::CreerRappel, _) => {
            "Qu'est-ce que je dois te rappeler, et quand ? Dis par exemple : rappelle-moi demain à 9 h d'appeler Luc.".into()
        }
        (T::CreerReveil, Doubt::Impossible) => "Cette heure n'existe pas : je n'ai réglé aucun réveil. Redis-moi l'heure.".into(),
        (T::CreerReveil, Doubt::Past | Doubt::NotPositive) => {
            "Cette heure est déjà passée : je n'ai réglé aucun réveil. Redis-moi quand.".into()
        }
        (T::CreerReveil, _) => "À quelle heure ? Dis par exemple : réveille-moi demain à 7 h.".into(),
        (T::DeplacerRappel, Doubt::Impossible) => "Cette date ou cette heure n'existe pas : je n'ai pas déplacé le rappel.".into(),
        (T::DeplacerRappel, Doubt::Past | Doubt::NotPositive) => {
            "Ce moment est déjà passé : je n'ai pas déplacé le rappel. Redis-moi quand.".into()
        }
        (T::DeplacerRappel, _) => "Quel rappel, et à quand ? Dis par exemple : décale le rappel 3 à 11 h.".into(),
        (T::ArreterRappelRecurrent, _) => "Quel rappel répété ? Dis son numéro, par exemple : arrête le rappel 3.".into(),
        (T::AnnulerReveil, _) => "Quel réveil ? « Quels sont mes réveils ? » te les donne avec leur numéro.".into(),
        (T::CreerNote, _) => "Qu'est-ce que je dois noter ? Dis par exemple : note que le code du portail est 4512.".into(),
        (T::DemarrerMinuteur, Doubt::NotPositive) => {
            "Un minuteur doit durer plus que zéro seconde : je n'ai rien lancé. Redis-moi la durée.".into()
        }
        (T::DemarrerMinuteur, _) => "Pour combien de temps ? Dis par exemple : minuteur de dix minutes.".into(),
        (T::ModifierMinuteur, _) => {
            "Je n'ai pas compris ce qu'il faut changer au minuteur : je n'y ai pas touché. Dis par exemple : ajoute deux minutes au minuteur.".into()
        }
        (T::DemarrerSession, _) => "Sur quel projet ? Dis par exemple : je commence à travailler sur Atlas.".into(),
        (T::ActerDecision, _) => {
            "Pour quel projet ? Dis par exemple : pour le projet Atlas, on a décidé de passer en Rust. Je n'ai rien acté.".into()
        }
        (T::CreerProjet, _) => "Quel nom pour le projet ? Dis par exemple : crée le projet Jardin.".into(),
        (T::SupprimerNote, Doubt::Impossible) | (T::SupprimerRappel, Doubt::Impossible) | (T::MarquerRappelFait, Doubt::Impossible) | (T::DesactiverPreference, Doubt::Impossible) => {
            // Said of the number, not of the store: numbers start at 1.
            "Les numéros commencent à 1 : je n'ai rien fait. Redis-moi le numéro.".into()
        }
        (T::SupprimerNote, _) => "Quelle note ? Dis son numéro, par exemple : supprime la note 3.".into(),
        (T::SupprimerRappel, _) => "Quel rappel ? Dis son numéro, par exemple : supprime le rappel 3.".into(),
        (T::MarquerRappelFait, _) => "Quel rappel ? Dis son numéro, par exemple : le rappel 3 est fait.".into(),
        (T::DesactiverPreference, _) => {
            "Quelle préférence ? Dis son numéro, par exemple : désactive la préférence 2. « Quelles sont mes préférences ? » te les donne.".into()
        }
        (T::AjouterAListe, _) => "Qu'est-ce que j'ajoute, et à quelle liste ? Dis par exemple : ajoute du lait à la liste de courses.".into(),
        (T::RetirerDeListe, _) => "Qu'est-ce que je retire, et de quelle liste ?".into(),
        (T::LireListe | T::ViderListe, _) => "Quelle liste ? Dis par exemple : lis-moi la liste de courses.".into(),
        (T::ListerRappels | T::LireTempsTravail, Doubt::Impossible) => {
            "Cette date n'existe pas : je n'ai rien lu. Redis-moi le jour.".into()
        }
        (_, Doubt::Impossible) => "Cette date n'existe pas : je n'ai rien fait.".into(),
        // No sentence of their own: the general one.
        (
            T::ListerRappels
            | T::LireBriefingHebdo
            | T::ListerMinuteurs
            | T::AnnulerMinuteur
            | T::ListerReveils
            | T::ListerProjets
            | T::LireProjet
            | T::ModifierProjet
            | T::MemoriserSouvenir
            | T::ListerNotes
            | T::LireTempsTravail
            | T::MemoriserPreference
            | T::ListerPreferences
            | T::ChercherDansMemoire
            | T::ListerSouvenirs
            | T::SuspendreSession
            | T::ReprendreSession
            | T::ArreterSession,
            _,
        ) => {
            "Je n'ai pas compris toute la demande : je n'ai rien fait. Redis-la autrement.".into()
        }
    }
}

/// What Arthur can do, offline or not: the commands the grammar knows.
pub fn help(online: bool) -> AnswerPart {
    let written = format!(
        "Voici ce que je sais faire{} :\n\
         - rappels : « rappelle-moi demain à 9 h d'appeler Luc », « quels sont mes rappels de demain ? », « le rappel 3 est fait », « supprime le rappel 3 »\n\
         - rappels répétés et déplacés : « rappelle-moi tous les lundis à 19 h de sortir les poubelles », « arrête le rappel des poubelles », « décale le rappel 3 à 11 h », « rappelle-le-moi dans dix minutes »\n\
         - notes : « note que le code du portail est 4512 », « lis mes notes », « supprime la note 2 »\n\
         - listes : « ajoute du lait à la liste de courses », « lis la liste des tâches », « retire le lait de la liste »\n\
         - minuteurs : « minuteur pâtes de 10 minutes », « combien de temps reste-t-il ? », « ajoute 2 minutes », « annule le minuteur »\n\
         - réveils : « réveille-moi à 7 h », « quels sont mes réveils ? » ; quand il sonne : « c'est bon » ou « encore cinq minutes »\n\
         - l'heure et la date : « quelle heure est-il ? », « on est le combien ? »\n\
         - travail : « je commence à travailler sur Atlas », « pause », « j'arrête », « combien j'ai travaillé cette semaine ? », « briefing de la semaine »\n\
         - projets, décisions, préférences et souvenirs : « crée le projet Jardin », « retiens que… », « cherche dans ma mémoire… », « quels sont mes souvenirs ? », « la préférence 2 »{}",
        if online { "" } else { " (même hors ligne)" },
        if online {
            "\nPour le reste, pose-moi ta question : un modèle de langage y répond."
        } else {
            "\nSans modèle de langage, je ne réponds pas aux questions libres."
        }
    );
    let spoken = format!(
        "Je sais créer des rappels, même répétés, et des notes, tenir des listes, lancer des minuteurs et des réveils, te donner l'heure et la date, chronométrer ton travail et retenir tes préférences et tes souvenirs. Dis par exemple : rappelle-moi demain à neuf heures d'appeler Luc, ou : minuteur de dix minutes.{}",
        if online { "" } else { " Sans modèle de langage, je ne réponds pas aux questions libres." }
    );
    code(written, spoken)
}

/// The answer to something told by code.
pub fn told(t: Told, now: DateTime<Utc>, tz: Tz, online: bool, had_pending: bool) -> Vec<AnswerPart> {
    match t {
        Told::Time => {
            vec![code(format!("Il est {}.", fr::time(now, tz)), format!("Il est {}.", fr::spoken_time(now, tz)))]
        }
        Told::Date { days } => {
            let today = now.with_timezone(&tz).date_naive();
            let day = today + Duration::days(days);
            let written_day = fr::date(day);
            let spoken_day = fr::spoken_date(day, today);
            match days {
                0 => vec![code(format!("Nous sommes le {written_day}."), format!("Nous sommes le {spoken_day}."))],
                1 => vec![code(
                    format!("Demain, nous serons le {written_day}."),
                    format!("Demain, nous serons le {spoken_day}."),
                )],
                n if n > 1 => vec![code(
                    format!("Dans {n} jours, nous serons le {written_day}."),
                    format!("Dans {} jours, nous serons le {spoken_day}.", fr::number(n)),
                )],
                n => vec![code(
                    format!("Il y a {} jours, c'était le {written_day}.", -n),
                    format!("Il y a {} jours, c'était le {spoken_day}.", fr::number(-n)),
                )],
            }
        }
        Told::Help => vec![help(online)],
        Told::Courtesy(Courtesy::Hello) => vec![fixed("Bonjour ! Qu'est-ce que je peux faire pour toi ?")],
        Told::Courtesy(Courtesy::HowAreYou) => vec![fixed("Très bien, merci ! Qu'est-ce que je peux faire pour toi ?")],
        Told::Courtesy(Courtesy::Thanks) => vec![fixed("Avec plaisir.")],
        Told::Courtesy(Courtesy::Goodbye) => vec![fixed("À bientôt !")],
        Told::Cancel if had_pending => vec![fixed("D'accord, j'oublie : je n'ai rien fait.")],
        Told::Cancel => vec![fixed("Je n'ai rien annulé.")],
    }
}

/// The question that offers a write from its tool name and arguments (the witnessed write
/// of an online turn, offered again when no tool did it).
pub fn question_from_call(name: &str, args: &Value, now: DateTime<Utc>, tz: Tz) -> String {
    use ToolName as T;
    let texte = args.get("texte").and_then(Value::as_str).unwrap_or_default();
    let Some(tool) = ToolName::from_wire(name) else { return format!("Tu veux que j'exécute {name} ?") };
    match tool {
        T::CreerRappel => {
            let when = args
                .get("echeance")
                .and_then(Value::as_str)
                .and_then(|e| crate::time::DueAt::parse(e, tz))
                .map(|d| format!("le {}", crate::fr::datetime(d.0, tz)))
                .unwrap_or_default();
            // Written with digits, as the receipt would be; said in words (`compose::fixed`).
            let _ = now;
            format!("Tu veux que je crée le rappel « {texte} » pour {when} ?")
        }
        T::MemoriserPreference => format!("Tu veux que je retienne la préférence « {texte} » ?"),
        T::CreerNote => match args.get("projet").and_then(Value::as_str) {
            Some(p) => format!("Tu veux que je crée la note « {texte} » pour le projet {p} ?"),
            None => format!("Tu veux que je crée la note « {texte} » ?"),
        },
        T::MemoriserSouvenir => format!("Tu veux que je mémorise le souvenir « {texte} » ?"),
        T::MarquerRappelFait => match args.get("id").and_then(Value::as_i64) {
            Some(id) => format!("Tu veux que je marque le rappel n°{id} comme fait ?"),
            None => "Tu veux que je marque un rappel comme fait ?".to_string(),
        },
        T::DesactiverPreference => match args.get("id").and_then(Value::as_i64) {
            Some(id) => format!("Tu veux que je désactive la préférence n°{id} ?"),
            None => "Tu veux que je désactive une préférence ?".to_string(),
        },
        T::DemarrerSession => match args.get("projet").and_then(Value::as_str) {
            Some(p) => format!("Tu veux que je démarre une session de travail sur {p} ?"),
            None => "Tu veux que je démarre une session de travail ?".to_string(),
        },
        T::SuspendreSession => "Tu veux que je mette la session de travail en pause ?".to_string(),
        T::ReprendreSession => "Tu veux que je reprenne la session de travail ?".to_string(),
        T::ArreterSession => "Tu veux que j'arrête la session de travail ?".to_string(),
        T::CreerRappelRecurrent => format!("Tu veux que je crée le rappel répété « {texte} » ?"),
        T::DeplacerRappel => match args.get("id").and_then(Value::as_i64) {
            Some(id) => format!("Tu veux que je déplace le rappel n°{id} ?"),
            None => "Tu veux que je déplace un rappel ?".to_string(),
        },
        T::ArreterRappelRecurrent => match args.get("id").and_then(Value::as_i64) {
            Some(id) => format!("Tu veux que j'arrête le rappel répété n°{id} ?"),
            None => "Tu veux que j'arrête un rappel répété ?".to_string(),
        },
        T::CreerReveil => {
            let when = args
                .get("heure")
                .and_then(Value::as_str)
                .and_then(|e| crate::time::DueAt::parse(e, tz))
                .map(|d| crate::fr::datetime(d.0, tz))
                .unwrap_or_default();
            format!("Tu veux que je règle un réveil pour le {when} ?")
        }
        T::AnnulerReveil => "Tu veux que j'annule le réveil ?".to_string(),
        T::DemarrerMinuteur => {
            let nom = args.get("nom").and_then(Value::as_str).map(|n| format!(" « {n} »")).unwrap_or_default();
            match args.get("duree_secondes").and_then(Value::as_i64) {
                Some(secs) => {
                    format!("Tu veux que je lance un minuteur{nom} de {} ?", crate::fr::written_duration(secs))
                }
                None => format!("Tu veux que je lance un minuteur{nom} ?"),
            }
        }
        T::AjouterAListe | T::RetirerDeListe => {
            let element = args.get("element").and_then(Value::as_str).unwrap_or_default();
            let liste = args.get("liste").and_then(Value::as_str).unwrap_or_default();
            let verb = if tool == T::AjouterAListe { "j'ajoute « {e} » à" } else { "je retire « {e} » de" };
            format!("Tu veux que {} la liste {liste} ?", verb.replace("{e}", element))
        }
        T::CreerProjet => {
            let nom = args.get("nom").and_then(Value::as_str).unwrap_or_default();
            format!("Tu veux que je crée le projet « {nom} » ?")
        }
        T::SupprimerRappel | T::SupprimerNote => {
            let what = if tool == T::SupprimerNote { "la note" } else { "le rappel" };
            match args.get("id").and_then(Value::as_i64) {
                Some(id) => format!("Tu veux que je supprime {what} n°{id} ?"),
                None => format!("Tu veux que je supprime {what} ?"),
            }
        }
        T::ListerRappels
        | T::LireBriefingHebdo
        | T::ListerMinuteurs
        | T::ModifierMinuteur
        | T::AnnulerMinuteur
        | T::LireListe
        | T::ViderListe
        | T::ListerReveils
        | T::ListerProjets
        | T::LireProjet
        | T::ModifierProjet
        | T::ActerDecision
        | T::ListerNotes
        | T::LireTempsTravail
        | T::ListerPreferences
        | T::ChercherDansMemoire
        | T::ListerSouvenirs => format!("Tu veux que j'exécute {name} ?"),
    }
}
