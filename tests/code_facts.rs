//! Every sentence code says about the store is a checked fact (issue 38): every refusal and
//! every question Arthur asks, run against an empty store, a filled one and random stores in
//! between, and each fact it states — « existe déjà », « n'existe pas », « déjà en pause »,
//! « aucun rappel », « n°3 « … » », a count — checked against the store itself. A sentence
//! built from a parse doubt instead of a row fails here.

use crate::common;

use std::sync::Arc;

use arthur_agents::memory::{BasicsStore, MemoryStore};
use arthur_agents::tools::contains_words;
use arthur_agents::turn::{PartSource, TurnEngine};
use proptest::prelude::*;
use regex::Regex;
use serde_json::{json, Value};

/// Rows a store may hold: every path below meets each of them present or absent.
fn pool() -> Vec<(&'static str, Value)> {
    vec![
        ("creer_note", json!({"texte": "appeler le plombier jeudi"})),
        ("creer_note", json!({"texte": "devis du plombier à relire"})),
        ("creer_note", json!({"texte": "le code du portail est 4512"})),
        ("creer_rappel", json!({"texte": "appeler la banque", "echeance": "2026-12-01T09:00"})),
        ("creer_rappel", json!({"texte": "dentiste", "echeance": "2026-12-02T15:00"})),
        ("creer_projet", json!({"nom": "Atlas", "phase": "cadrage"})),
        ("creer_projet", json!({"nom": "rénovation"})),
        ("memoriser_preference", json!({"texte": "réponds brièvement"})),
        ("ajouter_a_liste", json!({"liste": "courses", "element": "pain"})),
        ("ajouter_a_liste", json!({"liste": "courses", "element": "lait"})),
        ("ajouter_a_liste", json!({"liste": "bricolage", "element": "vis"})),
        ("demarrer_minuteur", json!({"duree_secondes": 600, "nom": "pâtes"})),
        ("demarrer_session", json!({"projet": "Atlas"})),
        ("suspendre_session", json!({})),
    ]
}

/// Words that take every refusal and question path the grammar and the registry have.
const PATHS: &[&str] = &[
    "le rappel 1 est fait",
    "le rappel 99 est fait",
    "supprime la note 42",
    "supprime le rappel 7",
    "supprime la note sur le plombier",
    "supprime la note sur le jardin",
    "efface le dernier rappel",
    "supprime la note",
    "le rappel 0 est fait",
    "arrête la session",
    "stop",
    "pause",
    "mets la session en pause",
    "reprends la session",
    "je commence à travailler sur Atlas",
    "je commence à travailler sur potager",
    "démarre une session sur le projet rénovation",
    "crée le projet Atlas",
    "nouveau projet rénovation de la salle de bain",
    "nouveau projet jardin",
    "passe le projet Atlas en phase réalisation",
    "minuteur pâtes de 5 minutes",
    "annule le minuteur",
    "ajoute deux minutes au minuteur",
    "mets le minuteur en pause",
    "ajoute du pain à la liste de courses",
    "retire le beurre de la liste de courses",
    "lis la liste bricolage",
    "lis la liste des cadeaux",
    "vide la liste de courses",
    "vide la liste des tâches",
    "vide la liste bricolage",
    "combien j'ai travaillé demain ?",
    "combien j'ai travaillé aujourd'hui ?",
    "désactive la préférence 9",
    "quelles sont mes préférences ?",
    "quels sont mes rappels ?",
    "lis mes notes",
    "rappelle-moi d'appeler Luc",
    "rappelle-moi d'appeler Luc hier à 10 h",
    "annule",
];

struct Store {
    app: common::TestApp,
    engine: TurnEngine,
}

async fn store_with(rows: &[(&'static str, Value)]) -> Store {
    let app = common::spawn_app().await;
    for (tool, args) in rows {
        // A row the others make impossible (a pause with no session) is simply not there.
        let _ = app.call(tool, args.clone()).await;
    }
    let engine = TurnEngine::new(None, app.ctx.clone());
    Store { app, engine }
}

/// A fact a sentence states, checked against the store; `Err` says which and why.
async fn check(store: &Arc<arthur_agents::memory::SqliteStore>, said: &str) -> Result<(), String> {
    let re = |p: &str| Regex::new(p).unwrap();
    let fail = |what: &str| Err(format!("« {said} »: {what}"));
    let notes = store.list_notes(None).await.unwrap();
    let rappels = store.list_rappels(true).await.unwrap();
    let running = store.running_session().await.unwrap();
    for c in re(r"[Ll]e projet (?:« )?([^»:.,]+?)(?: »)? existe déjà").captures_iter(said) {
        if store.find_projet(c[1].trim()).await.unwrap().is_none() {
            return fail(&format!("no project « {} »", &c[1]));
        }
    }
    for c in re(r"projet nommé « ([^»]+) » existe déjà").captures_iter(said) {
        if store.find_projet(&c[1]).await.unwrap().is_none() {
            return fail(&format!("no project « {} »", &c[1]));
        }
    }
    for c in re(r"[Ll]e projet « ([^»]+) » n'existe pas|aucun projet nommé « ([^»]+) »").captures_iter(said) {
        let name = c.get(1).or(c.get(2)).unwrap().as_str();
        if store.find_projet(name).await.unwrap().is_some() {
            return fail(&format!("project « {name} » exists"));
        }
    }
    if said.contains("ucune session de travail n'est en cours") && running.is_some() {
        return fail("a session is running");
    }
    if let Some(c) = re(r"la session sur (.+?) est déjà en pause").captures(said) {
        match &running {
            Some(s) if s.is_paused() && s.projet == c[1] => {}
            _ => return fail("no paused session on that project"),
        }
    }
    if let Some(c) = re(r"la session sur (.+?) n'est pas en pause").captures(said) {
        match &running {
            Some(s) if !s.is_paused() && s.projet == c[1] => {}
            _ => return fail("no running, unpaused session on that project"),
        }
    }
    for (kind, items) in [
        ("note", notes.iter().map(|n| (n.id, n.texte.clone())).collect::<Vec<_>>()),
        ("rappel", rappels.iter().map(|r| (r.id, r.texte.clone())).collect()),
    ] {
        let e = if kind == "note" { "e" } else { "" };
        for c in re(&format!(r"Aucun{e} {kind} ne parle de « ([^»]+) »")).captures_iter(said) {
            if items.iter().any(|(_, t)| contains_words(t, &c[1])) {
                return fail(&format!("a {kind} speaks of « {} »", &c[1]));
            }
        }
        if said.contains(&format!("Il n'y a aucun{e} {kind}")) && !items.is_empty() {
            return fail(&format!("there are {kind}s"));
        }
        if said.contains(&format!("aucun{e} {kind} n°")) {
            let id: i64 = re(&format!(r"aucun{e} {kind} n°(\d+)")).captures(said).unwrap()[1].parse().unwrap();
            if items.iter().any(|(i, _)| *i == id) {
                return fail(&format!("{kind} n°{id} exists"));
            }
        }
    }
    // « la note n°3 « … » », « le rappel n°2 « … » »: that row, with that text.
    for c in re(r"(note|rappel) n°(\d+) « ([^»]+) »").captures_iter(said) {
        if said.contains("supprimé") {
            continue; // a deletion's receipt names what is gone
        }
        let id: i64 = c[2].parse().unwrap();
        let found = if &c[1] == "note" {
            notes.iter().any(|n| n.id == id && n.texte == c[3])
        } else {
            rappels.iter().any(|r| r.id == id && r.texte == c[3])
        };
        if !found {
            return fail(&format!("no {} n°{id} « {} »", &c[1], &c[3]));
        }
    }
    if let Some(c) = re(r"le rappel n°(\d+) « [^»]+ » était déjà fait").captures(said) {
        let id: i64 = c[1].parse().unwrap();
        if !rappels.iter().any(|r| r.id == id && r.fait) {
            return fail("that reminder is not done");
        }
    }
    for c in re(r"Je ne connais pas de liste « ([^»]+) »|aucune liste « ([^»]+) »").captures_iter(said) {
        let name = c.get(1).or(c.get(2)).unwrap().as_str();
        if store.list(name).await.unwrap().is_some() {
            return fail(&format!("list « {name} » exists"));
        }
    }
    if let Some(c) = re(r"La liste (.+?) est déjà vide").captures(said) {
        if !store.list(&c[1]).await.unwrap().is_none_or(|l| l.elements.is_empty()) {
            return fail("that list is not empty");
        }
    }
    if let Some(c) = re(r"vide la liste (.+?) \? (\d+) éléments?").captures(said) {
        let n: usize = c[2].parse().unwrap();
        if store.list(&c[1]).await.unwrap().map(|l| l.elements.len()) != Some(n) {
            return fail("not that many items");
        }
    }
    if said.contains("Aucun minuteur") && !store.active_timers().await.unwrap().is_empty() {
        return fail("a timer is active");
    }
    if said.contains("Aucune préférence") && !store.list_preferences().await.unwrap().is_empty() {
        return fail("there are preferences");
    }
    Ok(())
}

/// Runs every path on a store holding `rows`; every code sentence's facts checked.
async fn run_paths(rows: &[(&'static str, Value)]) -> Result<usize, String> {
    let mut checked = 0;
    for path in PATHS {
        let s = store_with(rows).await;
        let r = s.engine.run(None, path, None).await.unwrap();
        for part in r.parts.iter().filter(|p| p.source == PartSource::Code) {
            check(&s.app.store, &part.written).await.map_err(|e| format!("{path}: {e}"))?;
            checked += 1;
        }
        // A question asked writes nothing; a « oui » to it is a later turn.
        if r.written.contains("Tu veux que je") {
            assert!(r.tools.iter().all(|t| t.outcome != "done" || !arthur_agents::tools::writes(&t.name)), "{path}");
        }
    }
    Ok(checked)
}

#[tokio::test]
async fn every_refusal_and_question_is_true_of_an_empty_store() {
    let n = run_paths(&[]).await.unwrap();
    assert!(n >= PATHS.len(), "{n} sentences checked");
}

#[tokio::test]
async fn every_refusal_and_question_is_true_of_a_filled_store() {
    let n = run_paths(&pool()).await.unwrap();
    assert!(n >= PATHS.len(), "{n} sentences checked");
}

/// The checker itself: the false sentences code once said are caught.
#[tokio::test]
async fn false_sentences_are_caught() {
    let empty = store_with(&[]).await;
    for lie in [
        "Le projet rénovation existe déjà : je n'ai rien créé.",
        "Il n'y a aucune note : je n'ai rien fait.",
        "Tu veux que je supprime la note n°1 « appeler le plombier jeudi » ?",
        "La liste courses est déjà vide : je n'ai rien fait.",
    ] {
        let store = if lie.starts_with("Il n'y a") || lie.starts_with("La liste") {
            store_with(&pool()).await
        } else {
            store_with(&[]).await
        };
        assert!(check(&store.app.store, lie).await.is_err(), "not caught: {lie}");
    }
    let filled = store_with(&pool()).await;
    assert!(check(&filled.app.store, "Le projet « Atlas » n'existe pas encore.").await.is_err());
    assert!(check(&empty.app.store, "Le projet « Atlas » n'existe pas encore.").await.is_ok());
    assert!(check(&filled.app.store, "Aucune session de travail n'est en cours : je n'ai touché à rien.")
        .await
        .is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, .. ProptestConfig::default() })]

    /// Any store in between: each row of the pool present or not.
    #[test]
    fn every_refusal_and_question_is_true_of_any_store(keep in proptest::collection::vec(any::<bool>(), 14)) {
        let rows: Vec<(&'static str, Value)> = pool().into_iter().zip(keep).filter(|(_, k)| *k).map(|(r, _)| r).collect();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = rt.block_on(run_paths(&rows));
        prop_assert!(result.is_ok(), "{:?}", result);
    }
}
