//! The everyday basics through the turn, offline (no model configured): the clock, timers
//! (named, several, changed, rung and acknowledged), lists, deleting what was saved wrongly,
//! help, courtesy and « annule ». Everything is said by code; the clock is Monday 30
//! November 2026, 10:00 in Paris.

use crate::common;

use arthur_agents::memory::{BasicsStore, MemoryStore};
use arthur_agents::turn::TurnEngine;
use chrono::Duration;
use serde_json::json;

struct Offline {
    app: common::TestApp,
    engine: TurnEngine,
}

impl Offline {
    async fn new() -> Self {
        let app = common::spawn_app().await;
        let engine = TurnEngine::new(None, app.ctx.clone());
        Self { app, engine }
    }

    async fn say(&self, text: &str) -> String {
        self.engine.run(None, text, None).await.unwrap().written
    }

    async fn say_in(&self, conversation: &str, text: &str) -> String {
        self.engine.run(Some(conversation), text, None).await.unwrap().written
    }
}

#[tokio::test]
async fn the_clock_is_told_by_code() {
    let o = Offline::new().await;
    assert_eq!(o.say("Quelle heure est-il ?").await, "Il est 10 h 00.");
    let r = o.engine.run(None, "quelle heure est-il", None).await.unwrap();
    assert_eq!(r.spoken, "Il est dix heures.");
    assert_eq!(o.say("On est le combien ?").await, "Nous sommes le lundi 30 novembre 2026.");
    assert_eq!(
        o.say("quel jour serons-nous dans dix jours").await,
        "Dans 10 jours, nous serons le jeudi 10 décembre 2026."
    );
    o.app.clock.advance(Duration::minutes(95));
    assert_eq!(o.say("il est quelle heure").await, "Il est 11 h 35.");
}

#[tokio::test]
async fn timers_by_voice_words() {
    let o = Offline::new().await;
    assert_eq!(o.say("Mets un minuteur de 5 minutes").await, "Minuteur de 5 min lancé (n°1), il sonnera à 10 h 05.");
    assert_eq!(o.say("minuteur pâtes de 10 minutes").await, "Minuteur « pâtes » lancé : 10 min, il sonnera à 10 h 10.");
    assert_eq!(o.say("minuteur de 2 h et 16 min").await, "Minuteur de 2 h 16 min lancé (n°3), il sonnera à 12 h 16.");
    assert_eq!(o.say("minuteur 01h30").await, "Minuteur de 1 h 30 min lancé (n°4), il sonnera à 11 h 30.");
    assert_eq!(
        o.say("minuteur d'une heure appelé chocolatine").await,
        "Minuteur « chocolatine » lancé : 1 h, il sonnera à 11 h 00."
    );
    o.app.clock.advance(Duration::seconds(150));
    assert_eq!(
        o.say("combien de temps reste-t-il sur le minuteur des pâtes ?").await,
        "Minuteur « pâtes » : il reste 7 min 30 s (il sonnera à 10 h 10)."
    );
    assert!(o
        .say("ajoute deux minutes au minuteur des pâtes")
        .await
        .starts_with("Minuteur « pâtes » : 2 min ajoutées, il reste 9 min 30 s"));
    assert_eq!(
        o.say("mets le minuteur des pâtes en pause").await,
        "Minuteur « pâtes » mis en pause : il reste 9 min 30 s."
    );
    o.app.clock.advance(Duration::minutes(3));
    assert!(o
        .say("reprends le minuteur des pâtes")
        .await
        .starts_with("Minuteur « pâtes » relancé : il reste 9 min 30 s"));
    assert_eq!(o.say("annule le minuteur chocolatine").await, "Minuteur « chocolatine » annulé.");
    // « le minuteur » while several run: which one is not guessed.
    let r = o.say("ajoute une minute au minuteur").await;
    assert!(r.contains("plusieurs minuteurs sont en cours") && r.contains("Rien n'a été écrit"), "{r}");
    let all = o.say("combien de temps reste-t-il").await;
    assert!(all.starts_with("Minuteurs (4) :"), "{all}");
    assert!(o.say("annule tous les minuteurs").await.starts_with("4 minuteurs annulés"));
    assert!(o.app.store.active_timers().await.unwrap().is_empty());
    // Nothing to guess: a timer with no duration, a negative one.
    assert_eq!(o.say("lance un minuteur").await, "Pour combien de temps ? Dis par exemple : minuteur de dix minutes.");
    assert!(o.say("minuteur de moins cinq minutes").await.starts_with("Un minuteur doit durer plus que zéro seconde"));
}

#[tokio::test]
async fn a_ringing_timer_stops_on_c_est_bon() {
    let o = Offline::new().await;
    o.say("minuteur œufs de 3 minutes").await;
    o.app.clock.advance(Duration::minutes(3));
    let rung = o.app.store.ring_due_timers(o.app.clock_now()).await.unwrap();
    assert_eq!(rung.len(), 1);
    // « stop » while a timer rings is for the timer, not for the chrono.
    assert_eq!(o.say("c'est bon").await, "Minuteur « œufs » arrêté.");
    assert!(o.app.store.ringing_timers().await.unwrap().is_empty());
    // Nothing rings any more: « stop » is back to its usual meaning.
    assert_eq!(o.say("stop").await, "Aucune session de travail n'est en cours : je n'ai touché à rien.");
}

#[tokio::test]
async fn lists_by_name() {
    let o = Offline::new().await;
    assert_eq!(
        o.say("ajoute des pommes à la liste de courses").await,
        "Nouvelle liste « courses » créée ; « pommes » ajouté (1 élément)."
    );
    assert_eq!(
        o.say("mets réparer le volet dans la liste de tâches").await,
        "Nouvelle liste « tâches » créée ; « réparer le volet » ajouté (1 élément)."
    );
    assert_eq!(o.say("mets du lait dans la liste").await, "« lait » ajouté à la liste de courses (2 éléments).");
    let r = o.engine.run(None, "lis-moi la liste de courses", None).await.unwrap();
    assert_eq!(r.written, "Liste courses (2) :\n- pommes\n- lait");
    assert_eq!(r.spoken, "Deux éléments sur la liste de courses : pommes ; lait.");
    assert_eq!(
        o.say("retire les pommes de la liste de courses").await,
        "« pommes » retiré de la liste de courses (1 restant)."
    );
    // Clearing is asked, naming what would go.
    let asked = o.engine.run(None, "vide la liste de courses", None).await.unwrap();
    assert_eq!(asked.written, "Tu veux que je vide la liste de courses ? 1 élément en serait retiré : lait.");
    assert_eq!(o.app.store.list("courses").await.unwrap().unwrap().elements.len(), 1, "not before « oui »");
    assert_eq!(o.say_in(&asked.conversation_id, "oui").await, "Liste courses vidée : 1 élément retiré (lait).");
    // Lists are not notes.
    assert!(o.app.store.list_notes(None).await.unwrap().is_empty());
}

#[tokio::test]
async fn what_was_saved_wrongly_is_deleted_and_only_that() {
    let o = Offline::new().await;
    o.app.done("creer_note", json!({"texte": "appeler le plombier jeudi"})).await;
    o.app.done("creer_note", json!({"texte": "code du portail 4512"})).await;
    for texte in ["banque", "dentiste", "garage"] {
        o.app.done("creer_rappel", json!({"texte": texte, "echeance": "2026-12-02T09:00"})).await;
    }
    assert_eq!(
        o.say("supprime le rappel 3").await,
        "Rappel n°3 supprimé : « garage », prévu le mercredi 2 décembre 2026 à 9 h 00."
    );
    // A target described is guessed: asked first, naming it.
    let asked = o.engine.run(None, "efface la note sur le plombier", None).await.unwrap();
    assert_eq!(asked.written, "Tu veux que je supprime la note n°1 « appeler le plombier jeudi » ?");
    assert_eq!(o.app.store.list_notes(None).await.unwrap().len(), 2);
    assert_eq!(o.say_in(&asked.conversation_id, "oui").await, "Note n°1 supprimée : « appeler le plombier jeudi ».");
    let left = o.app.store.list_notes(None).await.unwrap();
    assert_eq!(left.iter().map(|n| n.id).collect::<Vec<_>>(), [2]);
    assert_eq!(o.app.store.list_rappels(true).await.unwrap().len(), 2);
    assert_eq!(o.say("efface la note sur le jardin").await, "Aucune note ne parle de « jardin » : je n'ai rien fait.");
}

#[tokio::test]
async fn help_courtesy_and_annule_need_no_model() {
    let o = Offline::new().await;
    let help = o.say("aide").await;
    assert!(help.starts_with("Voici ce que je sais faire (même hors ligne) :"), "{help}");
    assert!(help.contains("minuteurs") && help.contains("listes") && help.contains("rappels"), "{help}");
    assert_eq!(o.say("qu'est-ce que tu sais faire ?").await, help);
    assert_eq!(o.say("bonjour").await, "Bonjour ! Qu'est-ce que je peux faire pour toi ?");
    assert_eq!(o.say("merci").await, "Avec plaisir.");
    // Nothing was written just before: nothing is undone, and it is said (never « D'accord. »).
    assert_eq!(o.say("laisse tomber").await, "Rien à annuler : ta dernière demande n'a rien enregistré ni modifié.");
    // With a question pending, « oublie » drops it quietly.
    let asked = o.engine.run(None, "rappelle-moi d'appeler Paul jeudi", None).await.unwrap();
    assert!(asked.written.starts_with("Tu veux que je crée le rappel"), "{}", asked.written);
    assert_eq!(o.say_in(&asked.conversation_id, "oublie").await, "D'accord, je n'ai rien fait.");
    assert!(o.app.store.list_rappels(true).await.unwrap().is_empty());
    assert!(!help.contains("hors ligne :"), "never « je suis hors ligne » as an answer: {help}");
}

/// The bell of `arthur serve`: a timer whose deadline passed rings (its bell and its name,
/// through the voice's announcement queue), is said again while nobody answers, and stops
/// when acknowledged; unanswered, it stops after the bounded time.
#[tokio::test]
async fn the_bell_rings_repeats_and_stops() {
    use arthur::timers::{ring, Bell, BellDeps};
    let o = Offline::new().await;
    o.say("minuteur pâtes de 2 minutes").await;
    o.say("minuteur thé de 10 minutes").await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let deps = BellDeps {
        store: o.app.ctx.store.clone(),
        clock: o.app.ctx.clock.clone(),
        tz: o.app.ctx.tz,
        announce: Some(tx),
        health: Default::default(),
        check_every: std::time::Duration::from_secs(1),
        repeat_every: std::time::Duration::from_secs(10),
        ring_for: std::time::Duration::from_secs(60),
    };
    let mut said = Bell::new(arthur_agents::time::Clock::now(&*o.app.clock));
    assert!(ring(&deps, &mut said).await.unwrap().is_empty(), "nothing due yet");
    o.app.clock.advance(Duration::seconds(121));
    let rung = ring(&deps, &mut said).await.unwrap();
    assert_eq!(rung.iter().map(|m| m.nom.clone().unwrap()).collect::<Vec<_>>(), ["pâtes"]);
    let a = rx.try_recv().unwrap();
    assert_eq!((a.text.as_str(), a.bell), ("Le minuteur pâtes est terminé.", true));
    // Said again only after the repeat delay.
    o.app.clock.advance(Duration::seconds(5));
    assert!(ring(&deps, &mut said).await.unwrap().is_empty());
    o.app.clock.advance(Duration::seconds(6));
    assert_eq!(ring(&deps, &mut said).await.unwrap().len(), 1);
    assert_eq!(rx.try_recv().unwrap().text, "Le minuteur pâtes est terminé.");
    // Heard: it stops.
    assert_eq!(o.say("stop").await, "Minuteur « pâtes » arrêté.");
    o.app.clock.advance(Duration::seconds(30));
    assert!(ring(&deps, &mut said).await.unwrap().is_empty());
    // The other one, never answered, stops ringing after the bounded time and is kept as
    // ended without an answer.
    // It is found late (the check came after its deadline) while Arthur was running: that
    // is not « pendant que j'étais arrêté ».
    o.app.clock.advance(Duration::minutes(10));
    assert_eq!(ring(&deps, &mut said).await.unwrap().len(), 1);
    assert_eq!(rx.try_recv().unwrap().text, "Le minuteur thé est terminé.");
    // A bell started after its deadline (Arthur restarted) says so.
    let mut restarted = Bell::new(arthur_agents::time::Clock::now(&*o.app.clock));
    assert_eq!(ring(&deps, &mut restarted).await.unwrap().len(), 1);
    assert!(rx.try_recv().unwrap().text.ends_with("pendant que j'étais arrêté."));
    o.app.clock.advance(Duration::seconds(61));
    ring(&deps, &mut said).await.unwrap();
    assert!(o.app.store.ringing_timers().await.unwrap().is_empty());
    let all = o.app.store.all_timers().await.unwrap();
    let the = all.iter().find(|m| m.nom.as_deref() == Some("thé")).unwrap();
    assert_eq!((the.etat.as_str(), the.acquitte_le), ("termine", None));
}
