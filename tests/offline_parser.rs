//! The French command grammar (`arthur-french`, read by `arthur_agents::understand`),
//! table-driven: each phrasing (as typed, or as whisper writes it: digits or words, missing
//! punctuation, lower case, "Arthur," in front, split elisions) with the tool call and
//! arguments it must give and whether it is sure, against a fixed clock (Monday 30 November
//! 2026, 10:00 in Paris). These phrasings come from the regex parser the grammar replaced.

use arthur_agents::understand::{understand, yes_no, Command, Reading};

/// What the grammar made of a phrase, in the shape of this table.
#[derive(Debug, Clone, PartialEq)]
enum OfflineAction {
    Tool { name: &'static str, args: Value, confident: bool },
    Unsupported,
}

fn parse(phrase: &str, now: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> OfflineAction {
    let lexicon = arthur_french::Lexicon {
        projects: ["Atlas", "Arthur", "Émeraude", "Mentorat", "Site vitrine"].map(String::from).to_vec(),
        ..Default::default()
    };
    match understand(phrase, now, tz, &lexicon).reading {
        Reading::Sure(Command::Tool(t)) => {
            OfflineAction::Tool { name: t.name(), args: t.arguments().unwrap_or(Value::Null), confident: true }
        }
        Reading::Unsure { command: Command::Tool(t), .. } => {
            OfflineAction::Tool { name: t.name(), args: t.arguments().unwrap_or(Value::Null), confident: false }
        }
        Reading::Incomplete { intent, .. } => {
            OfflineAction::Tool { name: Box::leak(intent.into_boxed_str()), args: Value::Null, confident: false }
        }
        _ => OfflineAction::Unsupported,
    }
}
use chrono::{TimeZone, Utc};
use serde_json::{json, Value};

/// (phrase, tool, arguments, confident)
type Case = (&'static str, &'static str, Value, bool);

fn cases() -> Vec<Case> {
    let r = |t: &str, e: &str| json!({"texte": t, "echeance": e});
    vec![
        // ---- reminders with French relative dates and times ----
        (
            "Rappelle-moi d'appeler la banque demain à 9 h.",
            "creer_rappel",
            r("appeler la banque", "2026-12-01T09:00"),
            true,
        ),
        (
            "rappelle-moi d'appeler la banque demain à 9h",
            "creer_rappel",
            r("appeler la banque", "2026-12-01T09:00"),
            true,
        ),
        (
            "Arthur, rappelle-moi d appeler la banque demain à neuf heures",
            "creer_rappel",
            r("appeler la banque", "2026-12-01T09:00"),
            true,
        ),
        (
            "arthur rappelle moi d'appeler la banque demain a 9 heures",
            "creer_rappel",
            r("appeler la banque", "2026-12-01T09:00"),
            true,
        ),
        (
            "Rappelle-moi demain à 9 h d'appeler la banque",
            "creer_rappel",
            r("appeler la banque", "2026-12-01T09:00"),
            true,
        ),
        (
            "Demain à 9 h, rappelle-moi d'appeler la banque.",
            "creer_rappel",
            r("appeler la banque", "2026-12-01T09:00"),
            true,
        ),
        ("Rappelle-moi d'acheter du pain ce soir", "creer_rappel", r("acheter du pain", "2026-11-30T19:00"), false),
        (
            "rappelle-moi ce soir à 20 h de sortir les poubelles",
            "creer_rappel",
            r("sortir les poubelles", "2026-11-30T20:00"),
            true,
        ),
        (
            "Rappelle-moi de payer le loyer lundi prochain",
            "creer_rappel",
            r("payer le loyer", "2026-12-07T09:00"),
            false,
        ),
        (
            "rappelle-moi lundi prochain à 10 h de payer le loyer",
            "creer_rappel",
            r("payer le loyer", "2026-12-07T10:00"),
            true,
        ),
        (
            "Rappelle-moi de relancer Paul dans deux heures",
            "creer_rappel",
            r("relancer Paul", "2026-11-30T12:00"),
            true,
        ),
        ("rappelle-moi dans 2 heures de relancer Paul", "creer_rappel", r("relancer Paul", "2026-11-30T12:00"), true),
        (
            "Rappelle-moi dans 20 minutes de sortir le gâteau",
            "creer_rappel",
            r("sortir le gâteau", "2026-11-30T10:20"),
            true,
        ),
        (
            "rappelle moi dans vingt minutes de sortir le gâteau",
            "creer_rappel",
            r("sortir le gâteau", "2026-11-30T10:20"),
            true,
        ),
        (
            "Rappelle-moi dans une demi-heure de rappeler maman",
            "creer_rappel",
            r("rappeler maman", "2026-11-30T10:30"),
            true,
        ),
        (
            "Rappelle-moi le 3 décembre à 14 h 30 le rendez-vous chez le dentiste",
            "creer_rappel",
            r("le rendez-vous chez le dentiste", "2026-12-03T14:30"),
            true,
        ),
        (
            "rappelle-moi le 3 décembre à 14h30 du rendez-vous chez le dentiste",
            "creer_rappel",
            r("du rendez-vous chez le dentiste", "2026-12-03T14:30"),
            true,
        ),
        (
            "Rappelle-moi le trois décembre à quatorze heures trente le dentiste",
            "creer_rappel",
            r("le dentiste", "2026-12-03T14:30"),
            true,
        ),
        (
            "Rappelle-moi le 15 janvier de renouveler le passeport",
            "creer_rappel",
            r("renouveler le passeport", "2027-01-15T09:00"),
            false,
        ),
        (
            "rappelle-moi le 1er décembre à 8 h de poser la déclaration",
            "creer_rappel",
            r("poser la déclaration", "2026-12-01T08:00"),
            true,
        ),
        (
            "Rappelle-moi vendredi à 18 h d'appeler le plombier",
            "creer_rappel",
            r("appeler le plombier", "2026-12-04T18:00"),
            true,
        ),
        (
            "rappelle-moi vendredi à six heures du soir d'appeler le plombier",
            "creer_rappel",
            r("appeler le plombier", "2026-12-04T18:00"),
            true,
        ),
        (
            "Rappelle-moi jeudi soir de préparer la réunion",
            "creer_rappel",
            r("préparer la réunion", "2026-12-03T19:00"),
            false,
        ),
        (
            "Rappelle-moi demain matin d'arroser les plantes",
            "creer_rappel",
            r("arroser les plantes", "2026-12-01T09:00"),
            false,
        ),
        (
            "rappelle-moi après-demain à 11 h de rendre les livres",
            "creer_rappel",
            r("rendre les livres", "2026-12-02T11:00"),
            true,
        ),
        (
            "Rappelle-moi à 15 h de prendre mes médicaments",
            "creer_rappel",
            r("prendre mes médicaments", "2026-11-30T15:00"),
            true,
        ),
        (
            // 8 h has passed at 10 h: tomorrow is assumed, so it is asked.
            "rappelle-moi à 8 h de prendre mes médicaments",
            "creer_rappel",
            r("prendre mes médicaments", "2026-12-01T08:00"),
            false,
        ),
        (
            "Rappelle-moi à midi de déjeuner avec Sarah",
            "creer_rappel",
            r("déjeuner avec Sarah", "2026-11-30T12:00"),
            true,
        ),
        (
            "rappelle-moi demain midi de déjeuner avec Sarah",
            "creer_rappel",
            r("déjeuner avec Sarah", "2026-12-01T12:00"),
            true,
        ),
        (
            "Rappelle-moi demain à 9 h 45 d'envoyer le devis",
            "creer_rappel",
            r("envoyer le devis", "2026-12-01T09:45"),
            true,
        ),
        (
            "rappelle-moi demain à neuf heures et quart d'envoyer le devis",
            "creer_rappel",
            r("envoyer le devis", "2026-12-01T09:15"),
            true,
        ),
        (
            "rappelle-moi demain à neuf heures et demie d'envoyer le devis",
            "creer_rappel",
            r("envoyer le devis", "2026-12-01T09:30"),
            true,
        ),
        ("Rappelle-moi de m'inscrire au club", "creer_rappel", r("m'inscrire au club", "2026-12-01T09:00"), false),
        (
            "Fais-moi penser à acheter des timbres demain à 10 h",
            "creer_rappel",
            r("acheter des timbres", "2026-12-01T10:00"),
            true,
        ),
        (
            "fais moi penser à acheter des timbres demain à 10h",
            "creer_rappel",
            r("acheter des timbres", "2026-12-01T10:00"),
            true,
        ),
        (
            "Mets un rappel pour la réunion d'équipe mardi à 14 h",
            "creer_rappel",
            r("la réunion d'équipe", "2026-12-01T14:00"),
            true,
        ),
        (
            "Crée un rappel : appeler Mme Martin demain à 17 h",
            "creer_rappel",
            r("appeler Mme Martin", "2026-12-01T17:00"),
            true,
        ),
        (
            "Nouveau rappel, réserver le restaurant samedi à 11 h",
            "creer_rappel",
            r("réserver le restaurant", "2026-12-05T11:00"),
            true,
        ),
        ("rappel demain 9 h dossier CAF", "creer_rappel", r("dossier CAF", "2026-12-01T09:00"), true),
        (
            "Rappelle-moi que la voiture passe au contrôle technique mercredi à 8 h 30",
            "creer_rappel",
            r("la voiture passe au contrôle technique", "2026-12-02T08:30"),
            true,
        ),
        (
            "Rappelle-moi qu'il faut payer la cantine dans 3 jours",
            "creer_rappel",
            r("il faut payer la cantine", "2026-12-03T09:00"),
            false,
        ),
        (
            "Rappelle-moi la semaine prochaine de faire le point avec Julie",
            "creer_rappel",
            r("faire le point avec Julie", "2026-12-07T09:00"),
            false,
        ),
        (
            "Rappelle-moi le 24/12 à 19 h d'appeler la famille",
            "creer_rappel",
            r("appeler la famille", "2026-12-24T19:00"),
            true,
        ),
        ("Rappelle-moi à 17:30 de partir", "creer_rappel", r("partir", "2026-11-30T17:30"), true),
        (
            "Rappelle-moi de rappeler le garage dans une heure",
            "creer_rappel",
            r("rappeler le garage", "2026-11-30T11:00"),
            true,
        ),
        (
            "rappelle-moi dans 1 heure de rappeler le garage",
            "creer_rappel",
            r("rappeler le garage", "2026-11-30T11:00"),
            true,
        ),
        (
            "Rappelle-moi dans deux heures et demie de vérifier le four",
            "creer_rappel",
            r("vérifier le four", "2026-11-30T12:30"),
            true,
        ),
        (
            "Rappelle-moi de souhaiter l'anniversaire de Léa le 12 décembre à 9 h",
            "creer_rappel",
            r("souhaiter l'anniversaire de Léa", "2026-12-12T09:00"),
            true,
        ),
        (
            "Rappelle-moi s'il te plaît d'envoyer le colis demain à 16 h",
            "creer_rappel",
            r("envoyer le colis", "2026-12-01T16:00"),
            true,
        ),
        (
            "RAPPELLE-MOI D'APPELER LA BANQUE DEMAIN À 9 H",
            "creer_rappel",
            r("APPELER LA BANQUE", "2026-12-01T09:00"),
            true,
        ),
        (
            "Rappelle-moi de faire les courses cet après-midi",
            "creer_rappel",
            r("faire les courses", "2026-11-30T15:00"),
            false,
        ),
        (
            "rappelle-moi à 3 h de l'après-midi de faire les courses",
            "creer_rappel",
            r("faire les courses", "2026-11-30T15:00"),
            true,
        ),
        (
            "rappelle-moi le 3 décembre à 14 h trente le dentiste",
            "creer_rappel",
            r("le dentiste", "2026-12-03T14:30"),
            true,
        ),
        ("Arthur. Rappelle-moi demain à 7 h de courir", "creer_rappel", r("courir", "2026-12-01T07:00"), true),
        ("ok arthur rappelle-moi demain à 7 h de courir", "creer_rappel", r("courir", "2026-12-01T07:00"), true),
        // ---- notes ----
        ("Note : acheter du pain", "creer_note", json!({"texte": "acheter du pain"}), true),
        ("note acheter du pain", "creer_note", json!({"texte": "acheter du pain"}), true),
        (
            "Arthur, note que le code wifi est sur le frigo",
            "creer_note",
            json!({"texte": "le code wifi est sur le frigo"}),
            true,
        ),
        ("Prends note que Paul préfère le jeudi", "creer_note", json!({"texte": "Paul préfère le jeudi"}), true),
        (
            "prends note : idée de podcast sur la cuisine",
            "creer_note",
            json!({"texte": "idée de podcast sur la cuisine"}),
            true,
        ),
        ("Nouvelle note : penser au DKIM", "creer_note", json!({"texte": "penser au DKIM"}), true),
        (
            "Note pour le projet Atlas : penser au DKIM",
            "creer_note",
            json!({"texte": "penser au DKIM", "projet": "Atlas"}),
            true,
        ),
        (
            "note pour le projet atlas, vérifier les quotas",
            "creer_note",
            // The project as the store spells it.
            json!({"texte": "vérifier les quotas", "projet": "Atlas"}),
            true,
        ),
        (
            "Note penser au DKIM pour le projet Atlas",
            "creer_note",
            json!({"texte": "penser au DKIM", "projet": "Atlas"}),
            true,
        ),
        ("Ajoute une note : la réunion est décalée", "creer_note", json!({"texte": "la réunion est décalée"}), true),
        ("Crée une note, le garage ferme à 18 h", "creer_note", json!({"texte": "le garage ferme à 18 h"}), true),
        (
            "note que d'après Marc le devis est trop cher",
            "creer_note",
            json!({"texte": "d'après Marc le devis est trop cher"}),
            true,
        ),
        (
            "Mémo : le badge est dans la boîte aux lettres",
            "creer_note",
            json!({"texte": "le badge est dans la boîte aux lettres"}),
            true,
        ),
        (
            "note que mon temps de trajet est de 40 minutes",
            "creer_note",
            json!({"texte": "mon temps de trajet est de 40 minutes"}),
            true,
        ),
        ("note 3 baguettes et 2 croissants", "creer_note", json!({"texte": "3 baguettes et 2 croissants"}), true),
        (
            "Note trois baguettes et deux croissants",
            "creer_note",
            json!({"texte": "trois baguettes et deux croissants"}),
            true,
        ),
        (
            "Arthur, peux-tu noter que la chaudière fait du bruit ?",
            "creer_note",
            json!({"texte": "la chaudière fait du bruit"}),
            true,
        ),
        // ---- listing ----
        ("Quels sont mes rappels ?", "lister_rappels", json!({}), true),
        ("quels sont mes rappels", "lister_rappels", json!({}), true),
        ("Liste mes rappels", "lister_rappels", json!({}), true),
        ("lis-moi mes rappels", "lister_rappels", json!({}), true),
        ("Montre-moi tous mes rappels", "lister_rappels", json!({"inclure_faits": true}), true),
        ("Qu'est-ce que j'ai à faire ?", "lister_rappels", json!({}), true),
        ("j'ai quoi à faire", "lister_rappels", json!({}), true),
        ("Donne-moi mes rappels, y compris les faits", "lister_rappels", json!({"inclure_faits": true}), true),
        ("Quelles sont mes notes ?", "lister_notes", json!({}), true),
        ("liste mes notes", "lister_notes", json!({}), true),
        ("Lis-moi les notes du projet Atlas", "lister_notes", json!({"projet": "Atlas"}), true),
        ("montre les notes sur le projet Émeraude", "lister_notes", json!({"projet": "Émeraude"}), true),
        // ---- marking done ----
        ("Le rappel 3 est fait", "marquer_rappel_fait", json!({"id": 3}), true),
        ("le rappel numéro 3 est fait", "marquer_rappel_fait", json!({"id": 3}), true),
        ("Le rappel numéro trois est fait.", "marquer_rappel_fait", json!({"id": 3}), true),
        ("Marque le rappel 12 comme fait", "marquer_rappel_fait", json!({"id": 12}), true),
        ("marque le rappel douze comme fait", "marquer_rappel_fait", json!({"id": 12}), true),
        ("Coche le rappel 7", "marquer_rappel_fait", json!({"id": 7}), true),
        ("J'ai fait le rappel 4", "marquer_rappel_fait", json!({"id": 4}), true),
        ("j'ai fini le rappel vingt et un", "marquer_rappel_fait", json!({"id": 21}), true),
        ("Arthur, rappel 5 terminé", "marquer_rappel_fait", json!({"id": 5}), true),
        ("rappel n°8 fait", "marquer_rappel_fait", json!({"id": 8}), true),
        // ---- preferences ----
        (
            "Retiens que je préfère des réponses courtes",
            "memoriser_preference",
            json!({"texte": "je préfère des réponses courtes"}),
            true,
        ),
        (
            "retiens que je préfère des réponses courtes.",
            "memoriser_preference",
            json!({"texte": "je préfère des réponses courtes"}),
            true,
        ),
        (
            "Mémorise que je veux que tu me vouvoies",
            "memoriser_preference",
            json!({"texte": "je veux que tu me vouvoies"}),
            true,
        ),
        (
            "Nouvelle préférence : réponds toujours en une phrase",
            "memoriser_preference",
            json!({"texte": "réponds toujours en une phrase"}),
            true,
        ),
        ("Ajoute une préférence : pas de blagues", "memoriser_preference", json!({"texte": "pas de blagues"}), true),
        (
            "Je préfère que tu me tutoies",
            "memoriser_preference",
            json!({"texte": "Je préfère que tu me tutoies"}),
            false,
        ),
        (
            // « désormais » + an instruction to Arthur: a preference, said plainly.
            "désormais parle-moi plus lentement",
            "memoriser_preference",
            json!({"texte": "parle-moi plus lentement"}),
            true,
        ),
        // A fact about the world to keep is a souvenir, not a preference about Arthur.
        ("Retiens que Paul a deux enfants", "memoriser_souvenir", json!({"texte": "Paul a deux enfants"}), true),
        ("Quelles sont mes préférences ?", "lister_preferences", json!({}), true),
        ("liste mes préférences", "lister_preferences", json!({}), true),
        ("Désactive la préférence 2", "desactiver_preference", json!({"id": 2}), true),
        ("désactive la préférence numéro deux", "desactiver_preference", json!({"id": 2}), true),
        ("Oublie la préférence 4", "desactiver_preference", json!({"id": 4}), true),
        ("Retire la préférence numéro 1", "desactiver_preference", json!({"id": 1}), true),
        ("supprime la préférence 11", "desactiver_preference", json!({"id": 11}), true),
        // ---- work sessions ----
        ("Je commence à travailler sur Atlas", "demarrer_session", json!({"projet": "Atlas"}), true),
        ("je commence sur Atlas", "demarrer_session", json!({"projet": "Atlas"}), true),
        ("Arthur, je bosse sur le projet Émeraude", "demarrer_session", json!({"projet": "Émeraude"}), true),
        ("Démarre une session sur Atlas", "demarrer_session", json!({"projet": "Atlas"}), true),
        ("démarre le chrono sur Atlas", "demarrer_session", json!({"projet": "Atlas"}), true),
        ("Lance le chrono pour le projet Mentorat", "demarrer_session", json!({"projet": "Mentorat"}), true),
        ("je me mets sur Atlas", "demarrer_session", json!({"projet": "Atlas"}), true),
        ("Je travaille sur Site vitrine", "demarrer_session", json!({"projet": "Site vitrine"}), true),
        // A bare word may be meant for the speech: asked before it touches the chrono.
        ("Pause", "suspendre_session", json!({}), false),
        ("pause.", "suspendre_session", json!({}), false),
        ("Je fais une pause", "suspendre_session", json!({}), true),
        ("Mets le chrono en pause", "suspendre_session", json!({}), true),
        ("Arthur, je prends une pause", "suspendre_session", json!({}), true),
        ("Je reprends", "reprendre_session", json!({}), true),
        ("je reprends le travail", "reprendre_session", json!({}), true),
        ("Fin de la pause", "reprendre_session", json!({}), true),
        ("c'est reparti", "reprendre_session", json!({}), true),
        // Bare, like « stop »: it may be meant for the speech; asked first.
        ("J'arrête", "arreter_session", json!({}), false),
        ("j'arrête de travailler", "arreter_session", json!({}), true),
        ("Arrête le chrono", "arreter_session", json!({}), true),
        ("stop", "arreter_session", json!({}), false),
        ("Arrête.", "arreter_session", json!({}), false),
        // The chrono in other words: understood, and sure.
        ("Mets la session en pause", "suspendre_session", json!({}), true),
        ("mets mon travail en pause", "suspendre_session", json!({}), true),
        ("Arthur, pause du chrono", "suspendre_session", json!({}), true),
        ("je mets le chrono en pause", "suspendre_session", json!({}), true),
        ("suspends la session de travail", "suspendre_session", json!({}), true),
        ("on fait une pause", "suspendre_session", json!({}), true),
        ("Arrête la session", "arreter_session", json!({}), true),
        ("stoppe le chrono", "arreter_session", json!({}), true),
        ("arrête mon travail", "arreter_session", json!({}), true),
        ("j'arrête mon travail", "arreter_session", json!({}), true),
        ("termine la session de travail", "arreter_session", json!({}), true),
        // The kitchen timer, now that there are timers.
        ("coupe le minuteur", "annuler_minuteur", json!({}), true),
        ("arrête de compter", "arreter_session", json!({}), true),
        ("mets fin à la session", "arreter_session", json!({}), true),
        ("on arrête le chrono", "arreter_session", json!({}), true),
        ("reprends la session", "reprendre_session", json!({}), true),
        ("relance mon travail", "reprendre_session", json!({}), true),
        ("je reprends le chrono", "reprendre_session", json!({}), true),
        ("remets le chrono en route", "reprendre_session", json!({}), true),
        ("Fin de session", "arreter_session", json!({}), true),
        ("J'ai fini pour aujourd'hui", "arreter_session", json!({}), true),
        // ---- work time ----
        ("Combien j'ai travaillé aujourd'hui ?", "lire_temps_travail", json!({"debut": "2026-11-30"}), true),
        ("combien de temps j'ai travaillé aujourd'hui", "lire_temps_travail", json!({"debut": "2026-11-30"}), true),
        ("Combien j'ai bossé cette semaine ?", "lire_temps_travail", json!({"debut": "2026-11-30"}), true),
        ("Combien j'ai travaillé hier ?", "lire_temps_travail", json!({"debut": "2026-11-29"}), true),
        (
            "combien j'ai travaillé la semaine dernière",
            "lire_temps_travail",
            json!({"debut": "2026-11-23", "fin": "2026-11-29"}),
            true,
        ),
        (
            "Combien j'ai travaillé sur Atlas ?",
            "lire_temps_travail",
            json!({"debut": "2026-11-30", "projet": "Atlas"}),
            true,
        ),
        (
            "combien de temps sur le projet Atlas cette semaine",
            "lire_temps_travail",
            json!({"debut": "2026-11-30", "projet": "Atlas"}),
            true,
        ),
        ("Mon temps de travail aujourd'hui", "lire_temps_travail", json!({"debut": "2026-11-30"}), true),
        (
            "temps de travail ce mois-ci",
            "lire_temps_travail",
            json!({"debut": "2026-11-01", "fin": "2026-11-30"}),
            true,
        ),
        // ---- briefings ----
        ("Briefing de la semaine", "lire_briefing_hebdo", json!({"periode": "semaine"}), true),
        ("Arthur, le point de la semaine", "lire_briefing_hebdo", json!({"periode": "semaine"}), true),
        ("fais-moi le résumé de la semaine", "lire_briefing_hebdo", json!({"periode": "semaine"}), true),
        ("briefing hebdo", "lire_briefing_hebdo", json!({"periode": "semaine"}), true),
        // ---- search ----
        // Searches keep the words, not the article in front.
        ("Cherche le code du portail", "chercher_dans_memoire", json!({"requete": "code du portail"}), true),
        (
            "cherche dans ma mémoire le nom du dentiste",
            "chercher_dans_memoire",
            json!({"requete": "nom du dentiste"}),
            true,
        ),
        ("Tu te souviens du nom du dentiste ?", "chercher_dans_memoire", json!({"requete": "nom du dentiste"}), true),
        ("Qu'est-ce que je sais sur Paul ?", "chercher_dans_memoire", json!({"requete": "Paul"}), true),
        ("retrouve l'adresse de Julie", "chercher_dans_memoire", json!({"requete": "adresse de Julie"}), true),
        ("Arthur, cherche ce que je sais sur le garage", "chercher_dans_memoire", json!({"requete": "garage"}), true),
    ]
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
}

#[test]
fn at_least_150_phrasings_parse_to_the_expected_tool_call() {
    let table = cases();
    let briefings = [
        "Briefing du jour",
        "mon briefing",
        "Arthur, le point du jour",
        "Qu'est-ce que j'ai aujourd'hui ?",
        "briefing",
        "Fais-moi le briefing du jour",
    ];
    assert!(table.len() + briefings.len() >= 150, "only {} phrasings", table.len() + briefings.len());
    let mut failures = Vec::new();
    for (phrase, tool, args, confident) in &table {
        let got = parse(phrase, now(), chrono_tz::Europe::Paris);
        let want = OfflineAction::Tool { name: tool, args: args.clone(), confident: *confident };
        if got != want {
            failures.push(format!("{phrase:?}\n   want {want:?}\n   got  {got:?}"));
        }
    }
    for phrase in briefings {
        let got = parse(phrase, now(), chrono_tz::Europe::Paris);
        let want =
            OfflineAction::Tool { name: "lire_briefing_hebdo", args: json!({"periode": "jour"}), confident: true };
        if got != want {
            failures.push(format!("{phrase:?}: want daily briefing, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn anything_else_is_unsupported_never_guessed() {
    for phrase in [
        "Quel temps fait-il demain ?",
        "Raconte-moi une blague",
        "Envoie un mail à Paul",
        "Qui a gagné le match ?",
        "",
        "Arthur",
        "euh",
        "Sous-titres réalisés par la communauté d'Amara.org",
        "Traduis bonjour en anglais",
        "Combien font deux plus deux ?",
    ] {
        assert_eq!(parse(phrase, now(), chrono_tz::Europe::Paris), OfflineAction::Unsupported, "{phrase:?}");
    }
}

#[test]
fn questions_and_negations_never_write() {
    for phrase in [
        "le rappel 3 n'est pas fait",
        "est-ce que le rappel 2 est fait ?",
        "quand se termine le rappel 4 ?",
        "ne supprime pas la préférence 2",
        "pourquoi as-tu retiré la préférence 2 ?",
        "est-ce que j'ai un rappel demain à 9 h ?",
        "tu as noté le pain ?",
        "je ne fais pas de pause",
    ] {
        match parse(phrase, now(), chrono_tz::Europe::Paris) {
            OfflineAction::Tool { name, .. } => assert!(
                ![
                    "marquer_rappel_fait",
                    "desactiver_preference",
                    "creer_rappel",
                    "creer_note",
                    "suspendre_session",
                    "memoriser_preference"
                ]
                .contains(&name),
                "{phrase:?} gave the write {name}"
            ),
            OfflineAction::Unsupported => {}
        }
    }
    // A reminder whose moment could not be read waits for confirmation, and never marks
    // reminder 10 done.
    match parse("mets un rappel dix minutes avant, pour vérifier que c'est fait", now(), chrono_tz::Europe::Paris) {
        OfflineAction::Tool { name, confident, .. } => assert_eq!((name, confident), ("creer_rappel", false)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn yes_and_no_answers() {
    for y in ["oui", "Oui.", "ouais", "d'accord", "vas-y", "OK", "Oui, vas-y", "c'est ça", "Arthur, oui"] {
        assert_eq!(yes_no(y), Some(true), "{y}");
    }
    for n in ["non", "Non.", "annule", "laisse tomber", "non merci", "c'est pas ça"] {
        assert_eq!(yes_no(n), Some(false), "{n}");
    }
    for other in ["rappelle-moi demain", "oui mais à 10 h", "peut-être"] {
        assert_eq!(yes_no(other), None, "{other}");
    }
}
