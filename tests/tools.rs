//! Every tool × every outcome branch, against a real SQLite file. Receipts are compared
//! with what a fresh connection reads back; refusals are checked to have written nothing.

use crate::common;

use std::collections::BTreeSet;

use arthur_agents::memory::{BasicsStore, MemoryStore};
use arthur_agents::report::compose_written;
use arthur_agents::time::Clock;
use arthur_agents::tools::{
    AgentKind, ArgError, ArgProblem, Expected, Outcome, Page, Receipt, Refusal, ToolBox, ToolName,
};
use chrono::{Duration, TimeZone, Utc};
use common::{spawn_app, spawn_app_with, start_time};
use serde_json::json;

fn invalid(field: &'static str, problem: ArgProblem) -> Refusal {
    Refusal::InvalidArguments(ArgError { field, problem })
}

// ---------- wiring ----------

#[test]
fn each_agent_gets_exactly_its_tools_from_the_design_table() {
    let intendant: BTreeSet<&str> = ToolBox::names_for(AgentKind::Intendant).into_iter().collect();
    let mentor: BTreeSet<&str> = ToolBox::names_for(AgentKind::Mentor).into_iter().collect();
    let expected_intendant: BTreeSet<&str> = [
        "lister_rappels",
        "marquer_rappel_fait",
        "lire_briefing_hebdo",
        "supprimer_rappel",
        "demarrer_minuteur",
        "lister_minuteurs",
        "modifier_minuteur",
        "annuler_minuteur",
        "ajouter_a_liste",
        "retirer_de_liste",
        "lire_liste",
        "vider_liste",
        "creer_rappel_recurrent",
        "deplacer_rappel",
        "arreter_rappel_recurrent",
        "creer_reveil",
        "lister_reveils",
        "annuler_reveil",
        "creer_note",
        "lister_notes",
        "supprimer_note",
        "creer_rappel",
        "lire_temps_travail",
        "memoriser_preference",
        "lister_preferences",
        "desactiver_preference",
        "chercher_dans_memoire",
        "lister_souvenirs",
        "demarrer_session",
        "suspendre_session",
        "reprendre_session",
        "arreter_session",
    ]
    .into();
    let expected_mentor: BTreeSet<&str> = [
        "lister_projets",
        "lire_projet",
        "creer_projet",
        "modifier_projet",
        "acter_decision",
        "memoriser_souvenir",
        "creer_note",
        "lister_notes",
        "supprimer_note",
        "creer_rappel",
        "lire_temps_travail",
        "memoriser_preference",
        "lister_preferences",
        "desactiver_preference",
        "chercher_dans_memoire",
        "lister_souvenirs",
        "demarrer_session",
        "suspendre_session",
        "reprendre_session",
        "arreter_session",
    ]
    .into();
    assert_eq!(intendant, expected_intendant);
    assert_eq!(mentor, expected_mentor);
    assert_eq!(intendant.intersection(&mentor).count(), 14, "14 shared tools");
    assert_eq!(ToolName::ALL.len(), 38);

    // Every name in the table is a registered tool, and nothing else is registered.
    let tools = ToolBox::new();
    let registered: BTreeSet<&str> = tools.all().map(|t| t.name()).collect();
    assert_eq!(registered.len(), 38);
    assert_eq!(registered, intendant.union(&mentor).copied().collect());
    assert_eq!(tools.definitions_for(AgentKind::Intendant).len(), 32);
    assert_eq!(tools.definitions_for(AgentKind::Mentor).len(), 20);
}

#[test]
fn schemas_use_exactly_the_interface_argument_names() {
    // docs/interface.md §4, "Tool arguments": name → (all properties, required ones). The read filters
    // (`contient`, `debut`/`fin` of lister_rappels) are optional extensions of it.
    let table: &[(&str, &[&str], &[&str])] = &[
        ("creer_note", &["texte", "projet"], &["texte"]),
        ("lister_notes", &["projet", "contient", "id", "derniers"], &[]),
        ("creer_rappel", &["texte", "echeance"], &["texte", "echeance"]),
        ("lister_rappels", &["inclure_faits", "debut", "fin", "contient", "id", "derniers"], &[]),
        ("marquer_rappel_fait", &["id"], &["id"]),
        ("lire_briefing_hebdo", &["periode"], &[]),
        ("lire_temps_travail", &["debut", "fin", "projet"], &["debut"]),
        ("memoriser_preference", &["texte"], &["texte"]),
        ("lister_preferences", &["id", "contient", "derniers"], &[]),
        ("desactiver_preference", &["id"], &["id"]),
        ("chercher_dans_memoire", &["requete"], &["requete"]),
        ("demarrer_session", &["projet"], &["projet"]),
        ("suspendre_session", &[], &[]),
        ("reprendre_session", &[], &[]),
        ("arreter_session", &[], &[]),
        ("lister_projets", &[], &[]),
        ("lire_projet", &["nom"], &["nom"]),
        ("creer_projet", &["nom", "description", "phase"], &["nom"]),
        ("modifier_projet", &["nom", "description", "phase", "statut"], &["nom"]),
        ("acter_decision", &["projet", "texte"], &["projet", "texte"]),
        ("memoriser_souvenir", &["texte"], &["texte"]),
        ("supprimer_note", &["id"], &["id"]),
        ("supprimer_rappel", &["id"], &["id"]),
        ("demarrer_minuteur", &["duree_secondes", "nom"], &["duree_secondes"]),
        ("lister_minuteurs", &["nom", "duree_initiale_secondes"], &[]),
        ("modifier_minuteur", &["nom", "duree_initiale_secondes", "delta_secondes", "action"], &[]),
        ("annuler_minuteur", &["nom", "duree_initiale_secondes", "tous"], &[]),
        ("ajouter_a_liste", &["liste", "element"], &["liste", "element"]),
        ("retirer_de_liste", &["liste", "element"], &["liste", "element"]),
        ("lire_liste", &["liste"], &["liste"]),
        ("vider_liste", &["liste"], &["liste"]),
        (
            "creer_rappel_recurrent",
            &["texte", "echeance", "frequence", "intervalle"],
            &["texte", "echeance", "frequence"],
        ),
        ("deplacer_rappel", &["id", "echeance"], &["id", "echeance"]),
        ("arreter_rappel_recurrent", &["id"], &["id"]),
        ("creer_reveil", &["heure", "nom"], &["heure"]),
        ("lister_reveils", &[], &[]),
        ("annuler_reveil", &["id", "tous"], &[]),
        ("lister_souvenirs", &["id", "contient", "derniers"], &[]),
    ];
    let tools = ToolBox::new();
    assert_eq!(table.len(), 38);
    for (name, props, required) in table {
        let def = tools.get(name).unwrap_or_else(|| panic!("{name} missing")).definition();
        assert_eq!(def.parameters["type"], "object", "{name}");
        let got: BTreeSet<String> = def.parameters["properties"].as_object().unwrap().keys().cloned().collect();
        let want: BTreeSet<String> = props.iter().map(|s| s.to_string()).collect();
        assert_eq!(got, want, "{name} properties");
        let got_req: BTreeSet<String> = def
            .parameters
            .get("required")
            .map(|r| r.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        let want_req: BTreeSet<String> = required.iter().map(|s| s.to_string()).collect();
        assert_eq!(got_req, want_req, "{name} required");
        assert!(!def.description.is_empty());
    }
}

#[tokio::test]
async fn unknown_tools_and_tools_of_the_other_agent_are_refused_unexecuted() {
    let app = spawn_app().await;
    let before = app.snapshot().await;
    let o = app.tools.invoke_as(AgentKind::Intendant, &app.ctx, "creer_projet", &json!({"nom": "X"})).await;
    assert_eq!(o, Outcome::Refused(Refusal::ToolNotAllowed { name: "creer_projet", agent: "intendant" }));
    let o = app.tools.invoke_as(AgentKind::Mentor, &app.ctx, "marquer_rappel_fait", &json!({"id": 1})).await;
    assert_eq!(o, Outcome::Refused(Refusal::ToolNotAllowed { name: "marquer_rappel_fait", agent: "mentor" }));
    let o = app.tools.invoke_as(AgentKind::Mentor, &app.ctx, "supprimer_tout", &json!({})).await;
    assert_eq!(o, Outcome::Refused(Refusal::UnknownTool { name: "supprimer_tout".into() }));
    let long = "x".repeat(500);
    match app.call(&long, json!({})).await {
        Outcome::Refused(Refusal::UnknownTool { name }) => assert_eq!(name.len(), 64),
        other => panic!("{other:?}"),
    }
    assert_eq!(before, app.snapshot().await);
    // A shared tool works for both agents.
    for agent in [AgentKind::Intendant, AgentKind::Mentor] {
        let o = app.tools.invoke_as(agent, &app.ctx, "creer_note", &json!({"texte": "partagée"})).await;
        assert_eq!(o.kind(), "done");
    }
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_refused() {
    let app = spawn_app().await;
    for raw in [json!([1, 2]), json!(42), json!("pas du json")] {
        assert_eq!(app.refused("creer_note", raw).await, invalid("arguments", ArgProblem::NotAnObject));
    }
    // The wire format carries arguments as a JSON string: that works.
    let r = app.done("creer_note", json!("{\"texte\": \"dans une chaîne\"}")).await;
    assert!(matches!(r, Receipt::NoteCreated { note } if note.texte == "dans une chaîne"));
}

// ---------- notes ----------

#[tokio::test]
async fn notes_receipts_match_the_stored_rows() {
    let app = spawn_app().await;
    app.done("creer_projet", json!({"nom": "Atlas"})).await;
    let Receipt::NoteCreated { note } =
        app.done("creer_note", json!({"texte": "  penser au DKIM  ", "projet": "atlas"})).await
    else {
        panic!()
    };
    assert_eq!(note.texte, "penser au DKIM", "stored trimmed");
    assert_eq!(note.projet.as_deref(), Some("Atlas"));
    let fresh = app.fresh().await;
    assert_eq!(fresh.list_notes(None).await.unwrap(), vec![note.clone()]);

    let Receipt::NoteCreated { note: free } = app.done("creer_note", json!({"texte": "acheter du pain"})).await else {
        panic!()
    };
    assert_eq!(free.projet, None);
    let Receipt::Notes { projet, notes, .. } = app.done("lister_notes", json!({"projet": "ATLAS"})).await else {
        panic!()
    };
    assert_eq!(projet.as_deref(), Some("Atlas"));
    assert_eq!(notes, vec![note.clone()]);
    let Receipt::Notes { notes, .. } = app.done("lister_notes", json!({})).await else { panic!() };
    assert_eq!(notes, fresh.list_notes(None).await.unwrap());
    assert_eq!(notes.len(), 2);
    // The model picks the words; the code tells what they found, whatever the accents.
    let Receipt::Notes { contient, notes, .. } = app.done("lister_notes", json!({"contient": "dkim"})).await else {
        panic!()
    };
    assert_eq!((contient.as_deref(), notes.len()), (Some("dkim"), 1));
    let listed = compose_written(
        "lister_notes",
        &Outcome::Done(Receipt::Notes { projet: None, contient, notes, portee: Default::default() }),
        app.ctx.tz,
    );
    assert!(listed.starts_with("Notes contenant « dkim » (1) :"), "{listed}");
    let Receipt::Notes { notes, .. } = app.done("lister_notes", json!({"contient": "plombier"})).await else {
        panic!()
    };
    assert!(notes.is_empty());

    let text = compose_written("creer_note", &Outcome::Done(Receipt::NoteCreated { note }), app.ctx.tz);
    assert!(text.contains("penser au DKIM") && text.contains("Atlas") && text.contains("n°1"), "{text}");
}

#[tokio::test]
async fn notes_refusals() {
    let app = spawn_app().await;
    assert_eq!(
        app.refused("creer_note", json!({"texte": "x", "projet": "Fantôme"})).await,
        Refusal::ProjectUnknown { nom: "Fantôme".into() }
    );
    assert_eq!(app.refused("creer_note", json!({})).await, invalid("texte", ArgProblem::Missing));
    assert_eq!(app.refused("creer_note", json!({"texte": "   "})).await, invalid("texte", ArgProblem::Empty));
    assert_eq!(
        app.refused("creer_note", json!({"texte": 12})).await,
        invalid("texte", ArgProblem::WrongType { expected: Expected::Text })
    );
    assert_eq!(
        app.refused("creer_note", json!({"texte": "x".repeat(2001)})).await,
        invalid("texte", ArgProblem::TooLong { max: 2000 })
    );
    assert_eq!(
        app.refused("lister_notes", json!({"projet": "Fantôme"})).await,
        Refusal::ProjectUnknown { nom: "Fantôme".into() }
    );
}

// ---------- reminders ----------

#[tokio::test]
async fn reminders_are_created_listed_and_marked_done_as_stored() {
    let app = spawn_app().await;
    let Receipt::ReminderCreated { rappel, bare_date } =
        app.done("creer_rappel", json!({"texte": "appeler la banque", "echeance": "2026-12-01T09:30"})).await
    else {
        panic!()
    };
    assert!(!bare_date);
    // 09:30 in Paris is 08:30 UTC in winter.
    assert_eq!(rappel.echeance, Utc.with_ymd_and_hms(2026, 12, 1, 8, 30, 0).unwrap());
    let fresh = app.fresh().await;
    assert_eq!(fresh.get_rappel(rappel.id).await.unwrap().as_ref(), Some(&rappel));

    let Receipt::ReminderCreated { rappel: bare, bare_date } =
        app.done("creer_rappel", json!({"texte": "dossier CAF", "echeance": "2026-12-03"})).await
    else {
        panic!()
    };
    assert!(bare_date);
    assert_eq!(bare.echeance, Utc.with_ymd_and_hms(2026, 12, 3, 8, 0, 0).unwrap());
    let text = compose_written(
        "creer_rappel",
        &Outcome::Done(Receipt::ReminderCreated { rappel: bare.clone(), bare_date }),
        app.ctx.tz,
    );
    assert!(text.contains("9 h par défaut") && text.contains("jeudi 3 décembre 2026"), "{text}");

    let Receipt::ReminderDone { rappel: marked } = app.done("marquer_rappel_fait", json!({"id": rappel.id})).await
    else {
        panic!()
    };
    assert!(marked.fait);
    assert_eq!(marked.fait_le, Some(start_time()));
    assert_eq!(fresh.get_rappel(rappel.id).await.unwrap().as_ref(), Some(&marked));

    let Receipt::Reminders { rappels, include_done, .. } = app.done("lister_rappels", json!({})).await else {
        panic!()
    };
    assert!(!include_done);
    assert_eq!(rappels, vec![bare.clone()]);
    let Receipt::Reminders { rappels, .. } = app.done("lister_rappels", json!({"inclure_faits": true})).await else {
        panic!()
    };
    assert_eq!(rappels, fresh.list_rappels(true).await.unwrap());
    assert_eq!(rappels.len(), 2);
}

#[tokio::test]
async fn reminders_filtered_by_due_date_and_words() {
    let app = spawn_app().await;
    app.done("creer_rappel", json!({"texte": "appeler la banque", "echeance": "2026-12-01T09:30"})).await;
    app.done("creer_rappel", json!({"texte": "dentiste", "echeance": "2026-12-03T14:00"})).await;
    app.done("creer_rappel", json!({"texte": "Banque : virement", "echeance": "2026-12-10T09:00"})).await;
    let ids = |r: Receipt| match r {
        Receipt::Reminders { rappels, .. } => rappels.iter().map(|r| r.id).collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(ids(app.done("lister_rappels", json!({"debut": "2026-12-01", "fin": "2026-12-03"})).await), [1, 2]);
    assert_eq!(ids(app.done("lister_rappels", json!({"debut": "2026-12-03"})).await), [2, 3]);
    assert_eq!(ids(app.done("lister_rappels", json!({"fin": "2026-12-01"})).await), [1]);
    assert_eq!(ids(app.done("lister_rappels", json!({"contient": "banque"})).await), [1, 3]);
    assert_eq!(ids(app.done("lister_rappels", json!({"contient": "banque", "debut": "2026-12-05"})).await), [3]);
    let r = app.done("lister_rappels", json!({"debut": "2026-12-04", "fin": "2026-12-05"})).await;
    let text = compose_written("lister_rappels", &Outcome::Done(r), app.ctx.tz);
    assert_eq!(text, "Aucun rappel à faire du vendredi 4 décembre 2026 au samedi 5 décembre 2026.");
    assert!(matches!(
        app.refused("lister_rappels", json!({"debut": "2026-12-05", "fin": "2026-12-01"})).await,
        Refusal::InvertedRange { .. }
    ));
    assert_eq!(app.refused("lister_rappels", json!({"debut": "demain"})).await, invalid("debut", ArgProblem::BadDate));
}

#[tokio::test]
async fn reminders_refusals() {
    let app = spawn_app().await;
    app.done("creer_rappel", json!({"texte": "r", "echeance": "2026-12-01T09:30"})).await;
    app.done("marquer_rappel_fait", json!({"id": 1})).await;
    match app.refused("marquer_rappel_fait", json!({"id": 1})).await {
        Refusal::ReminderAlreadyDone { rappel } => assert_eq!(rappel.id, 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(app.refused("marquer_rappel_fait", json!({"id": 99})).await, Refusal::ReminderUnknown { id: 99 });
    assert_eq!(
        app.refused("marquer_rappel_fait", json!({"id": "douze"})).await,
        invalid("id", ArgProblem::WrongType { expected: Expected::Integer })
    );
    assert_eq!(app.refused("marquer_rappel_fait", json!({"id": 0})).await, invalid("id", ArgProblem::NotPositive));
    assert_eq!(app.refused("marquer_rappel_fait", json!({})).await, invalid("id", ArgProblem::Missing));
    assert_eq!(
        app.refused("creer_rappel", json!({"texte": "r", "echeance": "demain matin"})).await,
        invalid("echeance", ArgProblem::BadDateTime)
    );
    assert_eq!(
        app.refused("creer_rappel", json!({"texte": "r", "echeance": "2026-02-30T10:00"})).await,
        invalid("echeance", ArgProblem::BadDateTime)
    );
    assert_eq!(app.refused("creer_rappel", json!({"texte": "r"})).await, invalid("echeance", ArgProblem::Missing));
    assert_eq!(
        app.refused("creer_rappel", json!({"texte": "r", "echeance": "2025-11-30T10:00"})).await,
        Refusal::DueDateInPast { echeance: Utc.with_ymd_and_hms(2025, 11, 30, 9, 0, 0).unwrap() }
    );
    assert_eq!(
        app.refused("lister_rappels", json!({"inclure_faits": "oui"})).await,
        invalid("inclure_faits", ArgProblem::WrongType { expected: Expected::Boolean })
    );
    let text =
        compose_written("marquer_rappel_fait", &Outcome::Refused(Refusal::ReminderUnknown { id: 99 }), app.ctx.tz);
    assert!(text.contains("Rien n'a été écrit") && text.contains("99"), "{text}");
}

// ---------- preferences ----------

#[tokio::test]
async fn preferences_are_capped_deactivated_and_never_inverted() {
    let app = spawn_app_with(None, 2).await;
    let Receipt::PreferenceStored { preference, active, cap } =
        app.done("memoriser_preference", json!({"texte": "Tutoie-moi"})).await
    else {
        panic!()
    };
    assert_eq!((active, cap), (1, 2));
    let fresh = app.fresh().await;
    assert_eq!(fresh.list_preferences().await.unwrap(), vec![preference.clone()]);

    match app.refused("memoriser_preference", json!({"texte": "tutoie-moi"})).await {
        Refusal::PreferenceDuplicate { preference: p } => assert_eq!(p.id, preference.id),
        other => panic!("{other:?}"),
    }
    app.done("memoriser_preference", json!({"texte": "Réponses courtes"})).await;
    let refusal = app.refused("memoriser_preference", json!({"texte": "Parle-moi en anglais"})).await;
    assert_eq!(refusal, Refusal::PreferenceCapReached { cap: 2 });
    let text = compose_written("memoriser_preference", &Outcome::Refused(refusal), app.ctx.tz);
    assert!(text.contains("plafond de 2"), "the cap is said: {text}");

    let Receipt::Preferences { preferences, active, cap, .. } = app.done("lister_preferences", json!({})).await else {
        panic!()
    };
    assert_eq!((preferences.len(), active, cap), (2, 2, 2));

    let Receipt::PreferenceDeactivated { preference: off } = app.done("desactiver_preference", json!({"id": 1})).await
    else {
        panic!()
    };
    assert!(!off.active);
    assert_eq!(off.desactivee_le, Some(start_time()));
    assert_eq!(fresh.list_preferences().await.unwrap().iter().find(|p| p.id == 1), Some(&off));
    // Deactivating wrote no contrary preference: still exactly two rows.
    assert_eq!(fresh.list_preferences().await.unwrap().len(), 2);

    match app.refused("desactiver_preference", json!({"id": 1})).await {
        Refusal::PreferenceAlreadyInactive { preference } => assert_eq!(preference.id, 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(app.refused("desactiver_preference", json!({"id": 42})).await, Refusal::PreferenceUnknown { id: 42 });
    assert_eq!(
        app.refused("desactiver_preference", json!({"id": true})).await,
        invalid("id", ArgProblem::WrongType { expected: Expected::Integer })
    );
    // A slot is free again.
    let Receipt::PreferenceStored { active, .. } =
        app.done("memoriser_preference", json!({"texte": "Parle-moi en anglais"})).await
    else {
        panic!()
    };
    assert_eq!(active, 2);
    assert_eq!(app.store.active_preferences(10).await.unwrap().len(), 2);
}

// ---------- work sessions and work time ----------

#[tokio::test]
async fn the_chrono_runs_pauses_resumes_and_stops() {
    let app = spawn_app().await;
    assert_eq!(
        app.refused("demarrer_session", json!({"projet": "Atlas"})).await,
        Refusal::ProjectUnknown { nom: "Atlas".into() }
    );
    assert_eq!(app.refused("demarrer_session", json!({})).await, invalid("projet", ArgProblem::Missing));
    for tool in ["suspendre_session", "reprendre_session", "arreter_session"] {
        assert_eq!(app.refused(tool, json!({})).await, Refusal::NoRunningSession, "{tool}");
    }
    app.done("creer_projet", json!({"nom": "Atlas"})).await;
    let Receipt::SessionStarted { session } = app.done("demarrer_session", json!({"projet": "atlas"})).await else {
        panic!()
    };
    assert_eq!(session.projet, "Atlas");
    assert_eq!(session.debut, start_time());
    let fresh = app.fresh().await;
    assert_eq!(fresh.running_session().await.unwrap().as_ref(), Some(&session));

    match app.refused("demarrer_session", json!({"projet": "Atlas"})).await {
        Refusal::SessionAlreadyRunning { session: s } => assert_eq!(s.id, session.id),
        other => panic!("{other:?}"),
    }
    match app.refused("reprendre_session", json!({})).await {
        Refusal::SessionNotPaused { .. } => {}
        other => panic!("{other:?}"),
    }
    app.clock.advance(Duration::minutes(30));
    let Receipt::SessionPaused { session: paused } = app.done("suspendre_session", json!({})).await else { panic!() };
    assert!(paused.is_paused());
    assert_eq!(fresh.running_session().await.unwrap().as_ref(), Some(&paused));
    match app.refused("suspendre_session", json!({})).await {
        Refusal::SessionAlreadyPaused { .. } => {}
        other => panic!("{other:?}"),
    }
    app.clock.advance(Duration::minutes(15));
    let Receipt::SessionResumed { session: resumed } = app.done("reprendre_session", json!({})).await else { panic!() };
    assert!(!resumed.is_paused());
    app.clock.advance(Duration::minutes(20));
    let Receipt::SessionStopped { session: stopped, worked_secs } = app.done("arreter_session", json!({})).await else {
        panic!()
    };
    assert_eq!(worked_secs, 50 * 60, "30 + 20 minutes, the 15-minute pause excluded");
    assert_eq!(fresh.list_sessions().await.unwrap(), vec![stopped.clone()]);
    assert_eq!(app.refused("arreter_session", json!({})).await, Refusal::NoRunningSession);
    let text = compose_written(
        "arreter_session",
        &Outcome::Done(Receipt::SessionStopped { session: stopped, worked_secs }),
        app.ctx.tz,
    );
    assert!(text.contains("50 min") && text.contains("pauses exclues"), "{text}");
}

#[tokio::test]
async fn stopping_a_paused_session_closes_the_pause_and_does_not_count_it() {
    let app = spawn_app().await;
    app.done("creer_projet", json!({"nom": "Atlas"})).await;
    app.done("demarrer_session", json!({"projet": "Atlas"})).await;
    app.clock.advance(Duration::minutes(10));
    app.done("suspendre_session", json!({})).await;
    app.clock.advance(Duration::minutes(60));
    let Receipt::SessionStopped { session, worked_secs } = app.done("arreter_session", json!({})).await else {
        panic!()
    };
    assert_eq!(worked_secs, 600);
    assert!(session.pauses.iter().all(|p| p.fin.is_some()));
}

#[tokio::test]
async fn work_time_is_read_from_sessions_and_refuses_the_future() {
    let app = spawn_app().await;
    app.done("creer_projet", json!({"nom": "Atlas"})).await;
    app.done("creer_projet", json!({"nom": "Mentorat"})).await;
    // Monday 10:00–11:00 on Atlas with a 10-min pause, 11:00–11:30 on Mentorat.
    app.done("demarrer_session", json!({"projet": "Atlas"})).await;
    app.clock.advance(Duration::minutes(20));
    app.done("suspendre_session", json!({})).await;
    app.clock.advance(Duration::minutes(10));
    app.done("reprendre_session", json!({})).await;
    app.clock.advance(Duration::minutes(30));
    app.done("arreter_session", json!({})).await;
    app.done("demarrer_session", json!({"projet": "Mentorat"})).await;
    app.clock.advance(Duration::minutes(30));
    app.done("arreter_session", json!({})).await;
    app.done("demarrer_session", json!({"projet": "Atlas"})).await;
    app.clock.advance(Duration::minutes(5));

    let Receipt::WorkTime { totals, until_now, running, .. } =
        app.done("lire_temps_travail", json!({"debut": "2026-11-30"})).await
    else {
        panic!()
    };
    assert!(until_now);
    assert_eq!(totals.total_secs, (50 + 30 + 5) * 60);
    assert_eq!(totals.par_projet, vec![("Atlas".to_string(), 55 * 60), ("Mentorat".to_string(), 30 * 60)]);
    assert!(running.is_some());
    let Receipt::WorkTime { totals, .. } =
        app.done("lire_temps_travail", json!({"debut": "2026-11-30", "projet": "mentorat"})).await
    else {
        panic!()
    };
    assert_eq!(totals.total_secs, 30 * 60);

    // A past day with no session is a measured zero, said as such.
    let r = app.done("lire_temps_travail", json!({"debut": "2026-11-20", "fin": "2026-11-22"})).await;
    let Receipt::WorkTime { ref totals, until_now, .. } = r else { panic!() };
    assert_eq!((totals.total_secs, until_now), (0, false));
    let text = compose_written("lire_temps_travail", &Outcome::Done(r), app.ctx.tz);
    assert!(text.contains("Aucune session"), "{text}");

    // The future is refused, never "0 minutes".
    let refusal = app.refused("lire_temps_travail", json!({"debut": "2026-12-01"})).await;
    assert!(matches!(refusal, Refusal::FutureDate { .. }), "{refusal:?}");
    let text = compose_written("lire_temps_travail", &Outcome::Refused(refusal), app.ctx.tz);
    assert!(!text.contains("0 minute") && text.contains("pas encore arrivé"), "{text}");
    assert!(matches!(
        app.refused("lire_temps_travail", json!({"debut": "2026-11-30", "fin": "2026-11-29"})).await,
        Refusal::InvertedRange { .. }
    ));
    assert_eq!(
        app.refused("lire_temps_travail", json!({"debut": "30/11/2026"})).await,
        invalid("debut", ArgProblem::BadDate)
    );
    assert_eq!(app.refused("lire_temps_travail", json!({})).await, invalid("debut", ArgProblem::Missing));
    assert_eq!(
        app.refused("lire_temps_travail", json!({"debut": "2026-11-30", "projet": "Inconnu"})).await,
        Refusal::ProjectUnknown { nom: "Inconnu".into() }
    );
}

// ---------- projects and decisions ----------

#[tokio::test]
async fn projects_are_created_read_changed_and_decided_on() {
    let app = spawn_app().await;
    let Receipt::ProjectCreated { projet } =
        app.done("creer_projet", json!({"nom": "Émeraude", "description": "site vitrine", "phase": "cadrage"})).await
    else {
        panic!()
    };
    let fresh = app.fresh().await;
    assert_eq!(fresh.find_projet("emeraude").await.unwrap().as_ref(), Some(&projet));
    match app.refused("creer_projet", json!({"nom": "EMERAUDE"})).await {
        Refusal::ProjectDuplicate { projet: p } => assert_eq!(p.id, projet.id),
        other => panic!("{other:?}"),
    }
    assert_eq!(app.refused("creer_projet", json!({"nom": ""})).await, invalid("nom", ArgProblem::Empty));
    assert_eq!(
        app.refused("creer_projet", json!({"nom": "x".repeat(121)})).await,
        invalid("nom", ArgProblem::TooLong { max: 120 })
    );

    app.clock.advance(Duration::hours(1));
    let Receipt::ProjectUpdated { before, after } =
        app.done("modifier_projet", json!({"nom": "émeraude", "phase": "maquette", "statut": "en pause"})).await
    else {
        panic!()
    };
    assert_eq!(before, projet);
    assert_eq!(after.phase.as_deref(), Some("maquette"));
    assert_eq!(after.statut.as_str(), "en_pause");
    assert_eq!(fresh.find_projet("Émeraude").await.unwrap().as_ref(), Some(&after));
    assert_eq!(app.refused("modifier_projet", json!({"nom": "Émeraude"})).await, Refusal::NothingToChange);
    assert_eq!(
        app.refused("modifier_projet", json!({"nom": "Émeraude", "statut": "vendu"})).await,
        invalid("statut", ArgProblem::NotAllowed)
    );
    assert_eq!(
        app.refused("modifier_projet", json!({"nom": "Saphir", "phase": "x"})).await,
        Refusal::ProjectUnknown { nom: "Saphir".into() }
    );

    let Receipt::DecisionRecorded { decision } =
        app.done("acter_decision", json!({"projet": "Emeraude", "texte": "On part sur Astro"})).await
    else {
        panic!()
    };
    assert_eq!(decision.projet, "Émeraude");
    assert_eq!(fresh.list_decisions().await.unwrap(), vec![decision.clone()]);
    assert_eq!(
        app.refused("acter_decision", json!({"projet": "Saphir", "texte": "x"})).await,
        Refusal::ProjectUnknown { nom: "Saphir".into() }
    );
    assert_eq!(
        app.refused("acter_decision", json!({"projet": "Émeraude"})).await,
        invalid("texte", ArgProblem::Missing)
    );

    app.done("demarrer_session", json!({"projet": "Émeraude"})).await;
    app.clock.advance(Duration::minutes(45));
    app.done("arreter_session", json!({})).await;
    app.done("creer_note", json!({"texte": "logo en SVG", "projet": "Émeraude"})).await;
    let Receipt::Project { detail, worked_secs } = app.done("lire_projet", json!({"nom": "EMERAUDE"})).await else {
        panic!()
    };
    assert_eq!(worked_secs, 45 * 60);
    assert_eq!(detail.decisions, vec![decision]);
    assert_eq!(detail.notes, 1);
    assert_eq!(detail.phases.iter().map(|p| p.phase.as_str()).collect::<Vec<_>>(), vec!["cadrage", "maquette"]);
    assert_eq!(Some(detail), fresh.projet_detail(projet.id).await.unwrap());
    assert_eq!(
        app.refused("lire_projet", json!({"nom": "Saphir"})).await,
        Refusal::ProjectUnknown { nom: "Saphir".into() }
    );

    let Receipt::Projects { projets } = app.done("lister_projets", json!({})).await else { panic!() };
    assert_eq!(projets, fresh.list_projets().await.unwrap());
}

// ---------- briefing ----------

#[tokio::test]
async fn the_weekly_briefing_is_composed_from_the_store() {
    let app = spawn_app().await;
    app.done("creer_projet", json!({"nom": "Atlas"})).await;
    app.done("creer_rappel", json!({"texte": "payer le loyer", "echeance": "2026-11-30T10:30"})).await;
    app.done("creer_rappel", json!({"texte": "rendez-vous dentiste", "echeance": "2026-12-04T15:00"})).await;
    app.done("creer_rappel", json!({"texte": "fête", "echeance": "2026-12-20T20:00"})).await;
    app.done("acter_decision", json!({"projet": "Atlas", "texte": "poller toutes les minutes"})).await;
    app.done("creer_note", json!({"texte": "idée de titre"})).await;
    app.done("demarrer_session", json!({"projet": "Atlas"})).await;
    app.clock.advance(Duration::minutes(95));
    app.done("arreter_session", json!({})).await;

    match app.call("lire_briefing_hebdo", json!({})).await {
        Outcome::Briefing(b) => {
            let t = &b.text;
            assert!(t.contains("1 h 35"), "{t}");
            assert!(t.contains("Atlas : 1 h 35"), "{t}");
            assert!(t.contains("Rappels en retard : 1") && t.contains("payer le loyer"), "{t}");
            assert!(t.contains("rendez-vous dentiste"), "{t}");
            assert!(!t.contains("fête"), "a reminder after the week is not in the week: {t}");
            assert!(t.contains("poller toutes les minutes") && t.contains("idée de titre"), "{t}");
        }
        other => panic!("{other:?}"),
    }
}

// ---------- database errors ----------

#[tokio::test]
async fn database_errors_become_failed_naming_the_page() {
    // (tool, arguments, table to break, page to check)
    let cases: &[(&str, serde_json::Value, &str, Page)] = &[
        ("creer_note", json!({"texte": "x"}), "notes", Page::Notes),
        ("lister_notes", json!({}), "notes", Page::Notes),
        ("creer_rappel", json!({"texte": "x", "echeance": "2026-12-24T10:00"}), "rappels", Page::Rappels),
        ("lister_rappels", json!({}), "rappels", Page::Rappels),
        ("marquer_rappel_fait", json!({"id": 1}), "rappels", Page::Rappels),
        ("lire_briefing_hebdo", json!({}), "rappels", Page::Sessions),
        ("lire_temps_travail", json!({"debut": "2026-11-30"}), "sessions_travail", Page::Sessions),
        ("memoriser_preference", json!({"texte": "x"}), "preferences", Page::Preferences),
        ("lister_preferences", json!({}), "preferences", Page::Preferences),
        ("desactiver_preference", json!({"id": 1}), "preferences", Page::Preferences),
        ("chercher_dans_memoire", json!({"requete": "dentiste"}), "souvenirs", Page::Souvenirs),
        ("memoriser_souvenir", json!({"texte": "x"}), "souvenirs", Page::Souvenirs),
        ("demarrer_session", json!({"projet": "Base"}), "sessions_travail", Page::Sessions),
        ("suspendre_session", json!({}), "sessions_travail", Page::Sessions),
        ("reprendre_session", json!({}), "pauses", Page::Sessions),
        ("arreter_session", json!({}), "pauses", Page::Sessions),
        ("lister_projets", json!({}), "projets", Page::Projets),
        ("lire_projet", json!({"nom": "Base"}), "projets", Page::Projets),
        ("creer_projet", json!({"nom": "Nouveau"}), "projets", Page::Projets),
        ("modifier_projet", json!({"nom": "Base", "phase": "x"}), "projets", Page::Projets),
        ("acter_decision", json!({"projet": "Base", "texte": "x"}), "decisions", Page::Projets),
    ];
    assert_eq!(cases.len(), 21);
    for (tool, args, table, page) in cases {
        let app = spawn_app().await;
        app.done("creer_projet", json!({"nom": "Base"})).await;
        app.done("creer_rappel", json!({"texte": "r", "echeance": "2026-12-24T10:00"})).await;
        app.done("memoriser_preference", json!({"texte": "p"})).await;
        if *tool == "reprendre_session" || *tool == "arreter_session" {
            app.done("demarrer_session", json!({"projet": "Base"})).await;
            app.done("suspendre_session", json!({})).await;
        }
        app.sql(&format!("ALTER TABLE {table} RENAME TO broken_{table}")).await;
        match app.call(tool, args.clone()).await {
            Outcome::Failed(f) => {
                assert_eq!(f.page, *page, "{tool}");
                let text = compose_written(tool, &Outcome::Failed(f), app.ctx.tz);
                assert!(text.contains("l'effet est inconnu") && text.contains(page.path()), "{text}");
            }
            other => panic!("{tool} with {table} broken: expected Failed, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_write_that_fails_midway_leaves_no_half_written_row() {
    let app = spawn_app().await;
    app.done("creer_projet", json!({"nom": "Atlas", "phase": "cadrage"})).await;
    // The phase history insert fails after the project row was updated: the whole
    // modification must be rolled back.
    app.sql("CREATE TRIGGER no_phase BEFORE INSERT ON phases_projet BEGIN SELECT RAISE(ABORT, 'disk on fire'); END")
        .await;
    let before = app.snapshot().await;
    let o = app.call("modifier_projet", json!({"nom": "Atlas", "phase": "prototype"})).await;
    assert!(matches!(o, Outcome::Failed(ref f) if f.page == Page::Projets), "{o:?}");
    assert_eq!(before, app.snapshot().await);
    assert_eq!(app.fresh().await.find_projet("Atlas").await.unwrap().unwrap().phase.as_deref(), Some("cadrage"));
}

// ---------- the everyday basics ----------

#[tokio::test]
async fn timers_start_read_change_and_cancel_as_stored() {
    let app = spawn_app().await;
    let started = app.done("demarrer_minuteur", json!({"duree_secondes": 600, "nom": "pâtes"})).await;
    let Receipt::TimerStarted { minuteur } = &started else { panic!("{started:?}") };
    assert_eq!(
        compose_written("demarrer_minuteur", &Outcome::Done(started.clone()), tz()),
        "Minuteur « pâtes » lancé : 10 min, il sonnera à 10 h 10."
    );
    let stored = app.fresh().await.active_timers().await.unwrap();
    assert_eq!(stored, vec![minuteur.clone()], "the receipt is the stored row");
    // The same name twice is refused, nothing written.
    let r = app.refused("demarrer_minuteur", json!({"duree_secondes": 60, "nom": "les pâtes"})).await;
    assert!(matches!(r, Refusal::TimerNameTaken { .. }), "{r:?}");
    assert_eq!(
        app.refused("demarrer_minuteur", json!({"duree_secondes": 0})).await,
        invalid("duree_secondes", ArgProblem::NotPositive)
    );
    // Time passes; what is left is told by code.
    app.clock.advance(Duration::seconds(150));
    let read = app.done("lister_minuteurs", json!({"nom": "pâtes"})).await;
    assert_eq!(
        compose_written("lister_minuteurs", &Outcome::Done(read), tz()),
        "Minuteur « pâtes » : il reste 7 min 30 s (il sonnera à 10 h 10)."
    );
    // Add, pause, resume.
    let added = app.done("modifier_minuteur", json!({"delta_secondes": 120})).await;
    assert!(compose_written("modifier_minuteur", &Outcome::Done(added), tz())
        .starts_with("Minuteur « pâtes » : 2 min ajoutées, il reste 9 min 30 s"));
    app.done("modifier_minuteur", json!({"action": "pause"})).await;
    app.clock.advance(Duration::seconds(300));
    let r = app.refused("modifier_minuteur", json!({"action": "pause"})).await;
    assert!(matches!(r, Refusal::TimerAlreadyPaused { .. }));
    let resumed = app.done("modifier_minuteur", json!({"action": "reprendre"})).await;
    let Receipt::TimerChanged { after, .. } = &resumed else { panic!() };
    assert_eq!(after.remaining(app.clock.now()), 570, "the pause did not count");
    let r = app.refused("modifier_minuteur", json!({"delta_secondes": -3600})).await;
    assert!(matches!(r, Refusal::TimerWouldEnd { remaining: 570, .. }), "{r:?}");
    // A second timer: « le minuteur » is no longer one.
    app.done("demarrer_minuteur", json!({"duree_secondes": 30})).await;
    let r = app.refused("modifier_minuteur", json!({"delta_secondes": 60})).await;
    assert!(matches!(r, Refusal::TimersAmbiguous { ref minuteurs } if minuteurs.len() == 2), "{r:?}");
    let all = app.done("annuler_minuteur", json!({"tous": true})).await;
    assert_eq!(
        compose_written("annuler_minuteur", &Outcome::Done(all), tz()),
        "2 minuteurs annulés : n°2 (30 s), « pâtes »."
    );
    assert!(app.fresh().await.active_timers().await.unwrap().is_empty());
    assert_eq!(app.refused("annuler_minuteur", json!({})).await, Refusal::NoTimer { nom: None });
}

#[tokio::test]
async fn a_timer_rings_once_its_deadline_has_passed_until_heard() {
    let app = spawn_app().await;
    app.done("demarrer_minuteur", json!({"duree_secondes": 60, "nom": "thé"})).await;
    assert!(app.store.ring_due_timers(app.clock.now()).await.unwrap().is_empty());
    app.clock.advance(Duration::seconds(61));
    let rung = app.store.ring_due_timers(app.clock.now()).await.unwrap();
    assert_eq!(rung.len(), 1);
    assert!(app.store.ring_due_timers(app.clock.now()).await.unwrap().is_empty(), "it rings once");
    let r = app.refused("modifier_minuteur", json!({"delta_secondes": 60})).await;
    assert!(matches!(r, Refusal::TimerRinging { .. }), "{r:?}");
    let heard = app.store.acknowledge_timers(None, app.clock.now()).await.unwrap();
    assert_eq!(heard.len(), 1);
    assert!(heard[0].acquitte_le.is_some());
    assert!(app.fresh().await.ringing_timers().await.unwrap().is_empty());
}

#[tokio::test]
async fn lists_are_kept_by_name_apart_from_notes() {
    let app = spawn_app().await;
    let r = app.done("ajouter_a_liste", json!({"liste": "courses", "element": "lait"})).await;
    assert_eq!(
        compose_written("ajouter_a_liste", &Outcome::Done(r), tz()),
        "Nouvelle liste « courses » créée ; « lait » ajouté (1 élément)."
    );
    let r = app.done("ajouter_a_liste", json!({"liste": "Courses", "element": "pommes"})).await;
    assert_eq!(
        compose_written("ajouter_a_liste", &Outcome::Done(r), tz()),
        "« pommes » ajouté à la liste de courses (2 éléments)."
    );
    let r = app.refused("ajouter_a_liste", json!({"liste": "courses", "element": "Lait"})).await;
    assert_eq!(r, Refusal::ListItemAlreadyThere { liste: "courses".into(), element: "lait".into() });
    let read = app.done("lire_liste", json!({"liste": "course"})).await;
    assert_eq!(compose_written("lire_liste", &Outcome::Done(read), tz()), "Liste courses (2) :\n- lait\n- pommes");
    assert_eq!(
        app.refused("lire_liste", json!({"liste": "vacances"})).await,
        Refusal::ListUnknown { nom: "vacances".into() }
    );
    // The usual lists exist before anything was added to them.
    let empty = app.done("lire_liste", json!({"liste": "tâches"})).await;
    assert_eq!(compose_written("lire_liste", &Outcome::Done(empty), tz()), "La liste de tâches est vide.");
    let r = app.done("retirer_de_liste", json!({"liste": "courses", "element": "le lait"})).await;
    assert_eq!(
        compose_written("retirer_de_liste", &Outcome::Done(r), tz()),
        "« lait » retiré de la liste de courses (1 restant)."
    );
    assert_eq!(
        app.refused("retirer_de_liste", json!({"liste": "courses", "element": "beurre"})).await,
        Refusal::ListItemNotThere { liste: "courses".into(), element: "beurre".into() }
    );
    let r = app.done("vider_liste", json!({"liste": "courses"})).await;
    assert_eq!(
        compose_written("vider_liste", &Outcome::Done(r), tz()),
        "Liste courses vidée : 1 élément retiré (pommes)."
    );
    assert!(app.fresh().await.list_notes(None).await.unwrap().is_empty(), "lists are not notes");
    let export = app.snapshot().await;
    assert_eq!(export["listes"][0]["nom"], "courses");
    assert_eq!(export["listes"][0]["elements"], json!([]));
}

#[tokio::test]
async fn a_note_or_a_reminder_is_deleted_by_number_and_nothing_else() {
    let app = spawn_app().await;
    app.done("creer_note", json!({"texte": "appeler le plombier"})).await;
    app.done("creer_note", json!({"texte": "code du portail 4512"})).await;
    app.done("creer_rappel", json!({"texte": "banque", "echeance": "2026-12-01T09:00"})).await;
    app.done("creer_rappel", json!({"texte": "dentiste", "echeance": "2026-12-02T09:00"})).await;
    let r = app.done("supprimer_note", json!({"id": 1})).await;
    assert_eq!(
        compose_written("supprimer_note", &Outcome::Done(r), tz()),
        "Note n°1 supprimée : « appeler le plombier »."
    );
    let r = app.done("supprimer_rappel", json!({"id": 2})).await;
    assert_eq!(
        compose_written("supprimer_rappel", &Outcome::Done(r), tz()),
        "Rappel n°2 supprimé : « dentiste », prévu le mercredi 2 décembre 2026 à 9 h 00."
    );
    let fresh = app.fresh().await;
    assert_eq!(fresh.list_notes(None).await.unwrap().iter().map(|n| n.id).collect::<Vec<_>>(), [2]);
    assert_eq!(fresh.list_rappels(true).await.unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), [1]);
    assert_eq!(app.refused("supprimer_note", json!({"id": 1})).await, Refusal::NoteUnknown { id: 1 });
    assert_eq!(app.refused("supprimer_rappel", json!({"id": 9})).await, Refusal::ReminderUnknown { id: 9 });
}

fn tz() -> chrono_tz::Tz {
    chrono_tz::Europe::Paris
}

// ---------- the second round: repeats, moves, alarms, reads ----------

#[tokio::test]
async fn repeats_moves_alarms_and_reads_as_stored_and_refusals_write_nothing() {
    let app = spawn_app().await;
    let fresh = app.fresh().await;
    // A weekly reminder: the receipt is the stored row, the rule included.
    let r = app
        .done(
            "creer_rappel_recurrent",
            json!({"texte": "sortir les poubelles", "echeance": "2026-12-07T19:00", "frequence": "hebdomadaire"}),
        )
        .await;
    let Receipt::RecurringReminderCreated { rappel } = &r else { panic!("{r:?}") };
    assert_eq!(Some(rappel), fresh.get_rappel(rappel.id).await.unwrap().as_ref());
    assert_eq!(
        compose_written("creer_rappel_recurrent", &Outcome::Done(r.clone()), tz()),
        "Rappel répété n°1 enregistré : « sortir les poubelles », tous les lundis à 19 h 00 ; le premier le lundi 7 décembre 2026 à 19 h 00."
    );
    let before = app.snapshot().await;
    for (tool, args) in [
        ("creer_rappel_recurrent", json!({"texte": "x", "echeance": "2026-12-07T19:00", "frequence": "annuelle"})),
        (
            "creer_rappel_recurrent",
            json!({"texte": "x", "echeance": "2026-12-07T19:00", "frequence": "jours_ouvres", "intervalle": 2}),
        ),
        ("creer_rappel_recurrent", json!({"texte": "x", "echeance": "2026-11-01T19:00", "frequence": "quotidienne"})),
        ("deplacer_rappel", json!({"id": 9, "echeance": "2026-12-08T19:00"})),
        ("deplacer_rappel", json!({"id": 1, "echeance": "2026-12-07T19:00"})),
        ("deplacer_rappel", json!({"id": 1, "echeance": "2026-11-01T19:00"})),
        ("arreter_rappel_recurrent", json!({"id": 9})),
        ("creer_reveil", json!({"heure": "2026-11-30T07:00"})),
        ("annuler_reveil", json!({})),
        ("lister_souvenirs", json!({"id": 4})),
        ("lister_souvenirs", json!({"derniers": 0})),
    ] {
        let refused = app.refused(tool, args.clone()).await;
        let written = compose_written(tool, &Outcome::Refused(refused), tz());
        assert!(written.ends_with("Rien n'a été écrit."), "{tool} {args}: {written}");
    }
    assert_eq!(app.snapshot().await, before, "refusals wrote nothing");

    // Moved: old and new time, read back; a one-off reminder has no series to stop.
    let moved = app.done("deplacer_rappel", json!({"id": 1, "echeance": "2026-12-08T20:00"})).await;
    let Receipt::ReminderMoved { before, after } = &moved else { panic!() };
    assert_eq!((before.echeance, Some(after)), (rappel.echeance, fresh.get_rappel(1).await.unwrap().as_ref()));
    app.done("creer_rappel", json!({"texte": "appeler Luc", "echeance": "2026-12-01T10:00"})).await;
    assert!(matches!(
        app.refused("arreter_rappel_recurrent", json!({"id": 2})).await,
        Refusal::ReminderNotRecurring { .. }
    ));
    let stopped = app.done("arreter_rappel_recurrent", json!({"id": 1})).await;
    let Receipt::ReminderSeriesStopped { rappel } = &stopped else { panic!() };
    assert_eq!(Some(rappel), fresh.get_rappel(1).await.unwrap().as_ref());
    assert!(rappel.fait);

    // Alarms: set, listed, refused at the same time, cancelled; kept apart from timers.
    let set = app.done("creer_reveil", json!({"heure": "2026-12-01T07:00", "nom": "sport"})).await;
    let Receipt::AlarmSet { reveil } = &set else { panic!() };
    assert_eq!(fresh.active_alarms().await.unwrap(), vec![reveil.clone()]);
    assert!(fresh.active_timers().await.unwrap().is_empty());
    assert!(matches!(
        app.refused("creer_reveil", json!({"heure": "2026-12-01T07:00"})).await,
        Refusal::AlarmSameTime { .. }
    ));
    let Receipt::Alarms { reveils, .. } = app.done("lister_reveils", json!({})).await else { panic!() };
    assert_eq!(reveils.len(), 1);
    let cancelled = app.done("annuler_reveil", json!({"id": reveil.id})).await;
    assert_eq!(
        compose_written("annuler_reveil", &Outcome::Done(cancelled), tz()),
        "Réveil « sport » (n°1, mardi 1er décembre 2026 à 7 h 00) annulé."
    );
    assert!(fresh.active_alarms().await.unwrap().is_empty());

    // Souvenirs read back by number, words, the last ones.
    for t in ["le portail: 4512", "ma fille s'appelle Léa", "le dentiste est le docteur Martin"] {
        app.done("memoriser_souvenir", json!({"texte": t})).await;
    }
    let Receipt::Souvenirs { souvenirs, portee } = app.done("lister_souvenirs", json!({"derniers": 2})).await else {
        panic!()
    };
    assert_eq!((souvenirs.iter().map(|s| s.id).collect::<Vec<_>>(), portee.total), (vec![2, 3], 3));
    let Receipt::Souvenirs { souvenirs, .. } = app.done("lister_souvenirs", json!({"contient": "dentiste"})).await
    else {
        panic!()
    };
    assert_eq!(souvenirs.len(), 1);
    let Receipt::Souvenirs { souvenirs, .. } = app.done("lister_souvenirs", json!({"id": 2})).await else { panic!() };
    assert_eq!(souvenirs[0].texte, "ma fille s'appelle Léa");
}
