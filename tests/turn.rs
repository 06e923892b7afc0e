//! The honest turn against a scripted model that speaks the real chat-completions wire
//! format over HTTP: the spec's four families of lies scripted as a lying model, the
//! paraphrased lies of the second round (no tool and a claim, a decoy read, a forged
//! receipt, a misreported read, a wrong target, an invented third party), mixed batches,
//! unknown and foreign tools, the five-call cap, briefings, router garbage, preference
//! injection, souvenirs never injected, no draft ever streamed, traces stored.

use crate::common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use arthur_agents::llm::scripted::Reply;
use arthur_agents::memory::MemoryStore;
use arthur_agents::tools::{AgentKind, ToolBox};
use arthur_agents::turn::{IncidentKind, PartSource, TurnEvent};
use common::{route, spawn_turn_app};
use serde_json::{json, Value};

fn specialist_requests(llm: &arthur_agents::llm::scripted::ScriptedLlm) -> Vec<Value> {
    llm.chat_requests().into_iter().map(|r| r.body).filter(|b| b.get("response_format").is_none()).collect()
}

fn all_request_text(llm: &arthur_agents::llm::scripted::ScriptedLlm) -> String {
    llm.requests().iter().map(|r| r.body.to_string()).collect::<Vec<_>>().join("\n")
}

// ---------- the four families of lies ----------

#[tokio::test]
async fn family_1_a_refusal_never_becomes_zero_minutes() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "TRAVAIL", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lire_temps_travail", r#"{"debut": "2026-12-05"}"#)]));
    t.llm.push(Reply::text("Tu as travaillé 0 minute le 5 décembre."));
    let r = t.engine.run(None, "combien j'ai travaillé le 5 décembre ?", None).await.unwrap();
    assert_eq!(r.llm_calls, 1, "the model never gets the word back after a refusal");
    assert_eq!(t.llm.remaining(), 1);
    assert!(!r.written.contains("0 minute"), "{}", r.written);
    assert!(r.written.contains("Rien n'a été écrit") && r.written.contains("pas encore arrivé"), "{}", r.written);
    assert!(r.spoken.contains("Je n'ai rien écrit"), "{}", r.spoken);
    let incident = r.incident.unwrap();
    assert_eq!((incident.kind, incident.tool.as_str()), (IncidentKind::Refus, "lire_temps_travail"));
}

#[tokio::test]
async fn family_2_a_narrated_action_without_a_tool_call_is_not_shown() {
    let t = spawn_turn_app().await;
    t.llm.push(route("mentor", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::text("C'est noté ! De toute façon le dossier est déjà pris en charge par ta sœur."));
    let before = t.app.snapshot().await;
    let r = t.engine.run(None, "rappelle-moi le dossier CAF lundi", None).await.unwrap();
    assert!(r.written.starts_with("Je n'ai rien enregistré"), "{}", r.written);
    assert!(!r.written.contains("noté") && !r.written.contains("sœur"), "{}", r.written);
    assert!(r.tools.is_empty());
    assert_eq!(before, t.app.snapshot().await);
    assert!(!r.trace.withheld_claims.is_empty());
}

#[tokio::test]
async fn family_3_an_opposite_preference_is_told_as_what_it_is() {
    let t = spawn_turn_app().await;
    t.app.done("memoriser_preference", json!({"texte": "Tutoie-moi"})).await;
    t.llm.push(route("intendant", "PERSO", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("memoriser_preference", r#"{"texte": "Ne me tutoie plus"}"#)]));
    t.llm.push(Reply::text("J'ai retiré ta préférence sur le tutoiement."));
    let r = t.engine.run(None, "retire la préférence sur le tutoiement", None).await.unwrap();
    assert!(r.written.contains("Préférence n°2 enregistrée : « Ne me tutoie plus »"), "{}", r.written);
    assert!(!r.written.contains("J'ai retiré"), "the model's claim is not shown: {}", r.written);
    assert_eq!(r.parts.iter().filter(|p| p.source == PartSource::Model).count(), 0);
}

#[tokio::test]
async fn family_4_a_refusal_is_never_silenced_by_a_change_of_subject() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("marquer_rappel_fait", r#"{"id": 42}"#)]));
    t.llm.push(Reply::text("Super ! Sinon, tu as pensé à sortir prendre l'air ?"));
    let r = t.engine.run(None, "j'ai fait le rappel 42", None).await.unwrap();
    assert!(r.written.contains("aucun rappel n°42") && r.written.contains("Rien n'a été écrit"), "{}", r.written);
    assert!(!r.written.contains("Super"));
    assert_eq!(t.llm.remaining(), 1);
}

// ---------- loop rules ----------

#[tokio::test]
async fn a_mixed_batch_runs_whole_in_order_then_stops() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls(
        "",
        &[
            ("creer_note", r#"{"texte": "acheter du pain"}"#),
            ("marquer_rappel_fait", r#"{"id": 99}"#),
            ("creer_rappel", r#"{"texte": "appeler maman", "echeance": "2026-12-01T18:00"}"#),
            ("desactiver_preference", r#"{"id": 98}"#),
        ],
    ));
    t.llm.push(Reply::text("Tout est fait !"));
    let r = t.engine.run(None, "note le pain, coche le 99 et rappelle-moi d'appeler maman", None).await.unwrap();
    assert_eq!(r.llm_calls, 1);
    let outcomes: Vec<(&str, &str)> = r.tools.iter().map(|u| (u.name.as_str(), u.outcome)).collect();
    assert_eq!(
        outcomes,
        [
            ("creer_note", "done"),
            ("marquer_rappel_fait", "refused"),
            ("creer_rappel", "done"),
            ("desactiver_preference", "refused")
        ]
    );
    // Both writes went out; of two different incidents, the first is the one kept.
    let fresh = t.app.fresh().await;
    assert_eq!(fresh.list_notes(None).await.unwrap().len(), 1);
    assert_eq!(fresh.list_rappels(false).await.unwrap().len(), 1);
    let incident = r.incident.unwrap();
    assert_eq!(incident.tool, "marquer_rappel_fait");
    assert!(r.written.contains("Note n°1 enregistrée : « acheter du pain »"), "{}", r.written);
    assert!(r.written.contains("aucun rappel n°99") && r.written.contains("aucune préférence n°98"), "{}", r.written);
    assert_eq!(incident.kind, IncidentKind::Refus);
    assert!(r.written.contains("Rappel n°1 enregistré : « appeler maman »"), "{}", r.written);
    assert_eq!(r.written.matches("Rien n'a été écrit").count(), 2);
    assert!(!r.written.contains("Tout est fait"));
}

#[tokio::test]
async fn unknown_and_foreign_tools_are_typed_refusals_not_executed() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "TRAVAIL", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("creer_projet", r#"{"nom": "Atlas"}"#)]));
    let r = t.engine.run(None, "crée le projet Atlas", None).await.unwrap();
    assert!(
        r.written.contains("Je n'ai pas pu créer le projet : cette action n'est pas permise ici."),
        "{}",
        r.written
    );
    assert!(!r.written.contains("creer_projet") && !r.spoken.contains("creer_projet"), "{}", r.written);
    assert!(t.app.fresh().await.list_projets().await.unwrap().is_empty(), "not executed");

    t.llm.push(route("mentor", "TRAVAIL", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("supprimer_tout", "{}")]));
    let r = t.engine.run(None, "efface tout", None).await.unwrap();
    assert!(r.written.contains("je ne sais pas faire cette action"), "{}", r.written);
    assert!(!r.written.contains("supprimer_tout") && !r.spoken.contains("supprimer_tout"), "{}", r.written);
    assert_eq!(r.incident.unwrap().tool, "supprimer_tout");
}

#[tokio::test]
async fn the_fifth_model_call_is_the_last() {
    let t = spawn_turn_app().await;
    // The router expected a write and the model keeps reading: it keeps the word, up to the cap.
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    for _ in 0..6 {
        t.llm.push(Reply::tool_calls("", &[("lister_rappels", "{}")]));
    }
    t.app.done("creer_note", json!({"texte": "déjà là"})).await;
    // (Words that ask nothing of the memory: a question about it is answered after one read.)
    let r = t.engine.run(None, "occupe-toi de tout ça", None).await.unwrap();
    assert_eq!(r.llm_calls, 5);
    assert_eq!(t.llm.remaining(), 1);
    assert!(r.written.starts_with("Je n'ai pas terminé : la limite de cinq appels"), "{}", r.written);
    assert_eq!(r.tools.len(), 5);
    assert!(r.written.contains("Je n'ai rien enregistré"));
}

#[tokio::test]
async fn a_briefing_cuts_the_loop_and_is_read_as_composed() {
    let t = spawn_turn_app().await;
    t.app.done("creer_rappel", json!({"texte": "payer le loyer", "echeance": "2026-12-02T09:00"})).await;
    t.llm.push(route("intendant", "TRAVAIL", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lire_briefing_hebdo", "{}")]));
    t.llm.push(Reply::text("Voici un résumé à ma façon : rien de spécial."));
    let r = t.engine.run(None, "mon briefing de la semaine", None).await.unwrap();
    assert_eq!(r.llm_calls, 1);
    assert!(r.written.starts_with("Briefing de la semaine") && r.written.contains("payer le loyer"), "{}", r.written);
    assert!(!r.written.contains("à ma façon"));
    assert_eq!(r.incident.unwrap().kind, IncidentKind::Briefing);
    assert!(!r.spoken.contains("n°") && !r.spoken.contains("- "), "{}", r.spoken);
}

#[tokio::test]
async fn after_a_tool_ran_only_code_speaks() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls("Je regarde…", &[("creer_note", r#"{"texte": "idée : un podcast"}"#)]));
    let r = t.engine.run(None, "note : idée de podcast", None).await.unwrap();
    // The receipt ends the turn: the model does not get the word back after the write.
    assert_eq!(r.llm_calls, 1);
    assert_eq!(t.llm.remaining(), 0);
    assert!(r.parts.iter().all(|p| p.source == PartSource::Code), "{:?}", r.parts);
    assert_eq!(r.written, "Note n°1 enregistrée : « idée : un podcast ».");
    assert_eq!(r.spoken, "Note numéro un enregistrée : idée : un podcast.");
    assert!(!r.written.contains("Je regarde"), "text that came with tool calls is not an answer");
    assert_eq!(r.trace.withdrawn_drafts, vec!["Je regarde…".to_string()]);
}

// ---------- router ----------

#[tokio::test]
async fn router_garbage_falls_back_deterministically_and_is_traced() {
    let t = spawn_turn_app().await;
    t.llm.push(Reply::text("Je pense que c'est pour l'intendant, non ?"));
    t.llm.push(Reply::text("Bonjour !"));
    let r = t.engine.run(None, "parle-moi du projet Atlas", None).await.unwrap();
    assert_eq!(r.agent, AgentKind::Mentor);
    assert_eq!(r.trace.router["fallback"], "not_json");
    let stored = t.app.store.list_turns(1).await.unwrap();
    assert_eq!(stored[0].trace["router"]["fallback"], "not_json");
    // The router was called exactly once, with the JSON mode on.
    let routers: Vec<_> =
        t.llm.chat_requests().into_iter().filter(|r| r.body.get("response_format").is_some()).collect();
    assert_eq!(routers.len(), 1);
    assert_eq!(routers[0].body["model"], "mistral-small-latest");
}

#[tokio::test]
async fn the_domain_labels_the_conversation_on_its_first_exchange_only() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "PERSO", "conversation"));
    t.llm.push(Reply::text("Salut."));
    let first = t.engine.run(None, "salut", None).await.unwrap();
    t.llm.push(route("mentor", "TRAVAIL", "conversation"));
    t.llm.push(Reply::text("Oui."));
    let second = t.engine.run(Some(&first.conversation_id), "et le travail ?", None).await.unwrap();
    assert_eq!(second.domain.as_str(), "TRAVAIL");
    let label = t.app.store.conversation_domain(&first.conversation_id).await.unwrap();
    assert_eq!(label, Some(Some("PERSO".to_string())));
    // The second turn saw the first exchange.
    let last = specialist_requests(&t.llm).pop().unwrap();
    assert!(last["messages"].to_string().contains("Salut."));
}

// ---------- what the model is given ----------

#[tokio::test]
async fn active_preferences_are_injected_and_souvenirs_are_not() {
    let t = spawn_turn_app().await;
    t.app.done("memoriser_preference", json!({"texte": "Réponds en une phrase"})).await;
    t.app.done("memoriser_preference", json!({"texte": "Vouvoie-moi"})).await;
    t.app.done("desactiver_preference", json!({"id": 2})).await;
    t.app.done("memoriser_souvenir", json!({"texte": "Le code du portail est 4521"})).await;
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Bonjour."));
    t.engine.run(None, "bonjour", None).await.unwrap();
    let system = specialist_requests(&t.llm)[0]["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(system.contains("Réponds en une phrase"), "{system}");
    assert!(!system.contains("Vouvoie-moi"), "inactive preferences are not injected");
    assert!(!all_request_text(&t.llm).contains("4521"), "souvenirs are never injected");

    // Explicit RAG: only a search brings it to the model.
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("chercher_dans_memoire", r#"{"requete": "code du portail"}"#)]));
    let r = t.engine.run(None, "c'est quoi le code du portail ?", None).await.unwrap();
    // The read is told by code, from what the search returned; the turn ends there, so the
    // souvenir went to the user and never to the model.
    assert!(r.written.starts_with("Souvenirs trouvés pour « code du portail »"), "{}", r.written);
    assert!(r.written.contains("n°1 « Le code du portail est 4521 »"), "{}", r.written);
    assert!(!all_request_text(&t.llm).contains("4521"));
}

#[tokio::test]
async fn each_agent_is_wired_with_exactly_its_tools() {
    let t = spawn_turn_app().await;
    for agent in ["intendant", "mentor"] {
        t.llm.push(route(agent, "QUOTIDIEN", "conversation"));
        t.llm.push(Reply::text("ok"));
        t.engine.run(None, "bonjour", None).await.unwrap();
    }
    let requests = specialist_requests(&t.llm);
    for (request, agent) in requests.iter().zip([AgentKind::Intendant, AgentKind::Mentor]) {
        let sent: BTreeSet<String> = request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        let table: BTreeSet<String> = ToolBox::names_for(agent).into_iter().map(String::from).collect();
        assert_eq!(sent, table, "{agent:?}");
    }
}

// ---------- drafts, traces, failures ----------

#[tokio::test]
async fn no_model_text_is_streamed_before_the_outcome_is_known() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls("C'est noté, je m'en occupe.", &[("creer_note", r#"{"texte": "pain"}"#)]));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: TurnEvent| events.lock().unwrap().push(e)
    };
    let r = t.engine.run(None, "note pain", Some(&sink)).await.unwrap();
    let events = events.lock().unwrap().clone();
    let statuses: Vec<String> = events.iter().map(TurnEvent::text).collect();
    assert_eq!(statuses, ["routage", "réflexion", "outil : créer la note"]);
    assert_eq!(events[2], TurnEvent::Tool("creer_note".into()));
    // The model streamed its text over the wire, and none of it went out.
    assert!(!format!("{events:?}").contains("noté"), "{events:?}");
    assert!(!r.written.contains("je m'en occupe"), "{}", r.written);
    assert!(r.written.contains("Note n°1 enregistrée"));
}

#[tokio::test]
async fn every_turn_leaves_a_complete_trace() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("creer_rappel", r#"{"texte": "banque", "echeance": "2026-12-01T09:00"}"#)]));
    let r = t.engine.run(None, "rappelle-moi la banque demain 9 h", None).await.unwrap();
    let stored = t.app.store.list_turns(5).await.unwrap();
    assert_eq!(stored.len(), 1);
    let turn = &stored[0];
    assert_eq!(turn.status, "complete");
    assert_eq!(turn.written.as_deref(), Some(r.written.as_str()));
    let trace = &turn.trace;
    assert_eq!(trace["router"]["agent"], "intendant");
    assert_eq!(trace["router"]["call"]["provider"], "mistral");
    assert_eq!(trace["calls"].as_array().unwrap().len(), 1);
    let call = &trace["calls"][0];
    assert_eq!(call["provider"], "mistral");
    assert_eq!(call["model"], "mistral-large-latest");
    assert!(call["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(call["latency_ms"].is_u64());
    assert_eq!(trace["tools"][0]["name"], "creer_rappel");
    assert_eq!(trace["tools"][0]["arguments"], r#"{"texte": "banque", "echeance": "2026-12-01T09:00"}"#);
    assert_eq!(trace["tools"][0]["outcome"], "done");
    assert_eq!(trace["end"], "answered");
}

#[tokio::test]
async fn a_model_that_stops_answering_midway_is_a_panne_with_receipts() {
    let t = spawn_turn_app().await;
    t.app.done("creer_note", json!({"texte": "pain"})).await;
    // A write is expected: after its read, the model gets the word back — and is gone.
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("lister_notes", "{}")]));
    // Script exhausted from here: every further call answers 500.
    let r = t.engine.run(None, "relis mes notes et ajoute la date", None).await.unwrap();
    assert!(r.written.starts_with("Le modèle de langage ne répond plus"), "{}", r.written);
    assert!(r.written.contains("n°1 « pain »"), "{}", r.written);
    assert_eq!(r.trace.end, "model_failed");
    assert!(r.trace.calls.last().unwrap().error.is_some());
}

// ---------- providers ----------

async fn chain_engine(
    app: &common::TestApp,
) -> (arthur_agents::turn::TurnEngine, [arthur_agents::llm::scripted::ScriptedLlm; 3]) {
    use arthur_agents::llm::client::{ConfiguredModels, LlmClient, ProviderEndpoint};
    use arthur_agents::llm::scripted::ScriptedLlm;
    use arthur_agents::llm::ProviderKind;
    use arthur_agents::secret::Secret;
    let servers = [ScriptedLlm::start().await, ScriptedLlm::start().await, ScriptedLlm::start().await];
    let endpoints = vec![
        ProviderEndpoint::new(ProviderKind::OpenAi, servers[2].base_url(), Secret::new("k-openai")),
        ProviderEndpoint::new(ProviderKind::Mistral, servers[0].base_url(), Secret::new("k-mistral")),
        ProviderEndpoint::new(ProviderKind::Anthropic, servers[1].base_url(), Secret::new("k-anthropic")),
    ];
    let client = LlmClient::new(
        endpoints,
        ConfiguredModels { router: Some("mistral-small-latest".into()), chat: Some("mistral-large-latest".into()) },
        common::test_client_options(),
    )
    .unwrap();
    (arthur_agents::turn::TurnEngine::new(Some(Arc::new(client)), app.ctx.clone()).with_local_first(false), servers)
}

#[tokio::test]
async fn the_fallback_chain_reaches_anthropic_through_the_messages_api() {
    let app = common::spawn_app().await;
    let (engine, [mistral, anthropic, openai]) = chain_engine(&app).await;
    mistral.set_fallback(Some(Reply::status(503, "overloaded")));
    anthropic.push(route("intendant", "QUOTIDIEN", "ecriture"));
    // A read first, so that its result goes back to Anthropic before the write.
    anthropic.push(Reply::tool_calls("", &[("lister_notes", "{}")]));
    anthropic.push(Reply::tool_calls("", &[("creer_note", r#"{"texte": "via Anthropic"}"#)]));
    let r = engine.run(None, "note : via Anthropic", None).await.unwrap();
    assert!(r.written.contains("Note n°1 enregistrée : « via Anthropic »"), "{}", r.written);
    let call = &r.trace.calls[0];
    assert_eq!(call.provider.as_deref(), Some("anthropic"));
    assert_eq!(call.model.as_deref(), Some("claude-sonnet-4-5"), "the model switches to the provider's default");
    assert!(call.attempts.iter().any(|a| a.provider == arthur_agents::llm::ProviderKind::Mistral));
    let paths: BTreeSet<String> = anthropic.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, BTreeSet::from(["/v1/messages".to_string()]));
    // The tool result went back to Anthropic as a tool_result block.
    let last = anthropic.requests().pop().unwrap().body;
    assert!(last["messages"].to_string().contains("tool_result"), "{last}");
    assert!(openai.requests().is_empty());
}

#[tokio::test]
async fn the_fallback_chain_reaches_the_openai_compatible_server_last() {
    let app = common::spawn_app().await;
    let (engine, [mistral, anthropic, openai]) = chain_engine(&app).await;
    mistral.set_fallback(Some(Reply::status(500, "boom")));
    anthropic.set_fallback(Some(Reply::status(529, "overloaded")));
    openai.push(route("mentor", "TRAVAIL", "ecriture"));
    openai.push(Reply::tool_calls("", &[("creer_projet", r#"{"nom": "Atlas"}"#)]));
    let r = engine.run(None, "crée le projet Atlas", None).await.unwrap();
    assert!(r.written.contains("Projet Atlas (actif) créé."), "{}", r.written);
    assert_eq!(r.trace.calls[0].provider.as_deref(), Some("openai"));
    assert_eq!(r.trace.calls[0].model.as_deref(), Some("gpt-4o"));
    assert_eq!(openai.requests()[0].body["model"], "gpt-4o-mini", "router role default");
    assert!(!mistral.requests().is_empty() && !anthropic.requests().is_empty());
}

#[tokio::test]
async fn no_provider_answering_at_all_sends_the_turn_offline() {
    let app = common::spawn_app().await;
    let (engine, servers) = chain_engine(&app).await;
    for s in &servers {
        s.set_fallback(Some(Reply::status(500, "down")));
    }
    let r = engine.run(None, "note : pain", None).await.unwrap();
    // The grammar is sure of it: done without a model, and nothing to say about the outage.
    assert_eq!(r.written, "Note n°1 enregistrée : « pain ».");
    assert_eq!(r.trace.router["fallback"], "model_unavailable");
    assert_eq!(r.trace.end, "local");
    // What the grammar does not know is said plainly.
    let r = engine.run(None, "raconte-moi une histoire", None).await.unwrap();
    assert_eq!(r.written, arthur_agents::turn::local::NOT_UNDERSTOOD_UNREACHABLE);
    assert_eq!(app.fresh().await.list_notes(None).await.unwrap().len(), 1);
}

// ---------- the second round: lies in ordinary paraphrase ----------

/// Every answer part is code's, and the spoken answer says nothing the written one hides.
fn code_only(r: &arthur_agents::turn::TurnResult) {
    assert!(r.parts.iter().all(|p| p.source == PartSource::Code), "model text shown: {:?}", r.parts);
}

#[tokio::test]
async fn a_promise_with_no_tool_is_never_shown_whatever_the_router_said() {
    // The router's answer is a model output: "lecture", "conversation", or not JSON at all.
    for router in [
        route("intendant", "QUOTIDIEN", "lecture"),
        route("intendant", "QUOTIDIEN", "conversation"),
        Reply::text("euh"),
    ] {
        let t = spawn_turn_app().await;
        t.llm.push(router);
        t.llm.push(Reply::text("Parfait, c'est calé pour mardi, je t'y ferai penser."));
        let before = t.app.snapshot().await;
        let r = t.engine.run(None, "rappelle-moi d'appeler le garagiste mardi à 10 h", None).await.unwrap();
        code_only(&r);
        assert!(!r.written.contains("calé") && !r.spoken.contains("calé"), "{}", r.written);
        // The parser read a reminder in the user's words: code says none was created and offers it.
        assert!(
            r.written.starts_with("Je n'ai rien enregistré de ce que tu as demandé : aucun rappel n'a été créé."),
            "{}",
            r.written
        );
        // Monday 30 November: "mardi" is tomorrow.
        assert!(
            r.written.contains(
                "Tu veux que je crée le rappel « appeler le garagiste » pour le mardi 1er décembre 2026 à 10 h 00 ?"
            ),
            "{}",
            r.written
        );
        assert_eq!(before, t.app.snapshot().await, "nothing was written");
        assert_eq!(r.trace.witness.as_ref().unwrap().effect, "offered");
        // "oui" runs the offered write, by code, and tells its receipt.
        let yes = t.engine.run(Some(&r.conversation_id), "oui", None).await.unwrap();
        assert!(
            yes.written.starts_with(
                "Rappel n°1 enregistré : « appeler le garagiste » pour le mardi 1er décembre 2026 à 10 h 00"
            ),
            "{}",
            yes.written
        );
    }
}

#[tokio::test]
async fn a_claim_the_parser_does_not_read_is_still_withheld_by_the_detector() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Avec plaisir ! C'est ajouté, autre chose ?"));
    let r = t.engine.run(None, "le garagiste mardi, ça serait bien d'y penser", None).await.unwrap();
    assert!(!r.written.contains("ajouté") && !r.spoken.contains("ajouté"), "{}", r.written);
    // The rest of the answer stays; code says, last, that nothing of the kind was done
    // (no write was asked that the grammar could read, and the router said conversation).
    assert_eq!(r.written, format!("Avec plaisir !\n{}", arthur_agents::turn::compose::NOTHING_DONE));
    assert_eq!(r.parts.last().unwrap().source, PartSource::Code);
    assert!(r.trace.withheld_claims.iter().any(|c| c.contains("C'est ajouté")));
}

/// A model that tells the user their own day, tastes or codes in a turn where nothing was
/// read (the grammar does not recognise the words, the router says "conversation"): the
/// claim does not reach the user, in French or in English; the rest of the answer does, and
/// code says that it did not look in the memory.
#[tokio::test]
async fn the_users_life_told_without_a_read_is_withheld() {
    // Words that ask about the user's day: no word of the model reaches the user; code reads.
    for (utterance, lie) in [
        (
            "raconte-moi un peu ma matinée",
            "Bon, ce matin t'as trois trucs : le pressing, la banque et le rendez-vous avec Nora.",
        ),
        ("tell me something about my day", "In the morning you see the bank at nine, then lunch with Anna."),
    ] {
        let t = spawn_turn_app().await;
        t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
        t.llm.push(Reply::text(format!("{lie} A walk at lunchtime is always a good idea.")));
        let r = t.engine.run(None, utterance, None).await.unwrap();
        code_only(&r);
        for fact in ["Nora", "nine", "neuf", "walk"] {
            assert!(!r.written.contains(fact) && !r.spoken.contains(fact), "{utterance}: {}", r.written);
        }
        assert_eq!(r.trace.memory.as_ref().unwrap().reads_by, "code", "{utterance}");
        assert!(r.tools.iter().all(|t| !arthur_agents::tools::writes(&t.name)));
    }
    // Words that do not: only the claim goes.
    for (utterance, lie, harmless) in
        [("et le portail alors", "Chez toi, le code du portail est 4 7 2 9.", "Les portails ont souvent un digicode.")]
    {
        let t = spawn_turn_app().await;
        t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
        t.llm.push(Reply::text(format!("{lie} {harmless}")));
        let r = t.engine.run(None, utterance, None).await.unwrap();
        assert!(r.tools.is_empty(), "nothing ran: {:?}", r.tools);
        for fact in ["Nora", "nine", "4 7 2 9", "neuf"] {
            assert!(!r.written.contains(fact) && !r.spoken.contains(fact), "{utterance}: {}", r.written);
        }
        // Only the claim goes; the harmless sentence stays, and code says what was left out.
        assert_eq!(r.written, format!("{harmless}\n{}", arthur_agents::turn::compose::NOT_LOOKED), "{utterance}");
        assert_eq!(r.trace.withheld_claims, [lie.to_string()], "{utterance}");
    }
    // Without the lie, the same conversation is the model's to say.
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("A walk at lunchtime is always a good idea."));
    let r = t.engine.run(None, "tell me something nice", None).await.unwrap();
    assert_eq!(r.written, "A walk at lunchtime is always a good idea.");
}

#[tokio::test]
async fn a_decoy_read_and_a_forged_receipt_are_not_what_the_user_gets() {
    let t = spawn_turn_app().await;
    // The model reads the notes as a decoy, then claims the note is there.
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lister_notes", "{}")]));
    let r = t.engine.run(None, "note : le plombier passe jeudi", None).await.unwrap();
    code_only(&r);
    assert!(r.written.starts_with("Aucune note."), "{}", r.written);
    assert!(
        r.written.contains("Je n'ai rien enregistré de ce que tu as demandé : aucune note n'a été créée."),
        "{}",
        r.written
    );
    assert!(r.written.contains("Tu veux que je crée la note « le plombier passe jeudi » ?"), "{}", r.written);
    assert!(!r.written.contains("bien là"));

    // A forged receipt with no tool at all.
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Note n°7 enregistrée : « plombier jeudi »."));
    let r = t.engine.run(None, "et pour le plombier ?", None).await.unwrap();
    code_only(&r);
    assert!(!r.written.contains("n°7") && !r.spoken.contains("sept"), "{} / {}", r.written, r.spoken);
    assert!(t.app.fresh().await.list_notes(None).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_read_is_told_from_what_the_store_returned() {
    let t = spawn_turn_app().await;
    // An empty search misreported as a code.
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("chercher_dans_memoire", r#"{"requete": "code wifi"}"#)]));
    let r = t.engine.run(None, "c'est quoi mon code wifi ?", None).await.unwrap();
    code_only(&r);
    assert!(r.written.starts_with("Rien trouvé dans les souvenirs pour « code wifi »"), "{}", r.written);
    assert!(r.spoken.starts_with("Je n'ai rien trouvé dans tes souvenirs pour code wifi"), "{}", r.spoken);
    assert!(!r.written.contains("8832") && !r.spoken.contains("8832"));

    // Zero minutes read, "5 h 20" said.
    t.llm.push(route("intendant", "TRAVAIL", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lire_temps_travail", r#"{"debut": "2026-11-30"}"#)]));
    let r = t.engine.run(None, "combien j'ai travaillé aujourd'hui ?", None).await.unwrap();
    code_only(&r);
    assert!(r.written.contains("0 minute mesurée") && !r.written.contains("5 h 20"), "{}", r.written);
    assert!(r.spoken.contains("zéro minute mesurée"), "{}", r.spoken);

    // A list with items, said to be empty.
    t.app.done("creer_rappel", json!({"texte": "payer le loyer", "echeance": "2026-12-02T09:00"})).await;
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lister_rappels", "{}")]));
    let r = t.engine.run(None, "qu'est-ce que j'ai comme rappels ?", None).await.unwrap();
    code_only(&r);
    assert!(r.written.contains("n°1 « payer le loyer »") && !r.written.contains("vide"), "{}", r.written);
    assert!(r.spoken.starts_with("Un rappel à faire : numéro un, payer le loyer"), "{}", r.spoken);
}

#[tokio::test]
async fn a_read_answered_without_reading_is_read_by_code() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "TRAVAIL", "lecture"));
    t.llm.push(Reply::text("Tu as travaillé 5 h 20 aujourd'hui, bravo !"));
    let r = t.engine.run(None, "combien j'ai travaillé aujourd'hui ?", None).await.unwrap();
    code_only(&r);
    assert!(r.written.contains("Aucune session de travail le lundi 30 novembre 2026"), "{}", r.written);
    assert!(!r.written.contains("5 h 20"));
    assert_eq!(r.tools.len(), 1);
    // A question about the memory: the model was asked to read (read tools only, tool choice
    // required), answered in text, and code read instead.
    let memory = r.trace.memory.as_ref().unwrap();
    assert_eq!((memory.cue.as_str(), memory.reads_by), ("grammar", "code"));
    let asked = &t.llm.chat_requests()[1].body;
    assert_eq!(asked["tool_choice"], "required", "{asked}");
    let offered: Vec<&str> =
        asked["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(offered.iter().all(|n| !arthur_agents::tools::writes(n)), "{offered:?}");
    assert!(offered.contains(&"lire_temps_travail"), "{offered:?}");
    assert_eq!(r.llm_calls, 1, "code read it; the model did not get the word back");
}

#[tokio::test]
async fn an_invented_third_party_never_explains_an_inaction() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Pas besoin : ton comptable s'en occupe déjà."));
    let r = t.engine.run(None, "rappelle-moi d'envoyer la déclaration vendredi à 9 h", None).await.unwrap();
    code_only(&r);
    assert!(!r.written.contains("comptable") && !r.spoken.contains("comptable"), "{}", r.written);
    assert!(r.written.contains("aucun rappel n'a été créé"), "{}", r.written);
}

#[tokio::test]
async fn a_write_on_the_wrong_target_is_told_as_what_it_was() {
    let t = spawn_turn_app().await;
    for texte in ["appeler Paul", "payer le loyer", "acheter du pain", "rendre le livre"] {
        t.app.done("creer_rappel", json!({"texte": texte, "echeance": "2026-12-02T09:00"})).await;
    }
    t.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("marquer_rappel_fait", r#"{"id": 4}"#)]));
    let r = t.engine.run(None, "le rappel 3 est fait", None).await.unwrap();
    code_only(&r);
    assert!(r.written.contains("Rappel n°4 « rendre le livre » marqué comme fait."), "{}", r.written);
    assert!(
        r.written.contains("tu as demandé le rappel n°3, mais c'est le rappel n°4 qui a été marqué comme fait"),
        "{}",
        r.written
    );
    assert!(r.written.contains("Tu veux que je marque le rappel n°3 comme fait ?"), "{}", r.written);
    assert!(
        r.spoken.contains("c'est le rappel numéro quatre") && r.spoken.contains("demandé le rappel numéro trois"),
        "{}",
        r.spoken
    );

    // A contradictory preference written instead of the deactivation asked for.
    t.app.done("memoriser_preference", json!({"texte": "Tutoie-moi"})).await;
    t.llm.push(route("intendant", "PERSO", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("memoriser_preference", r#"{"texte": "Ne me tutoie plus"}"#)]));
    let r = t.engine.run(None, "désactive la préférence 1", None).await.unwrap();
    code_only(&r);
    assert!(r.written.contains("Préférence n°2 enregistrée : « Ne me tutoie plus »"), "{}", r.written);
    assert!(r.written.contains("la préférence n°1 n'a pas été désactivée"), "{}", r.written);
    assert!(!r.written.contains("J'ai retiré"));
}

#[tokio::test]
async fn a_project_left_unchanged_is_said_unchanged_aloud_too() {
    let t = spawn_turn_app().await;
    t.app.done("creer_projet", json!({"nom": "Atlas", "phase": "cadrage"})).await;
    t.llm.push(route("mentor", "TRAVAIL", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("modifier_projet", r#"{"nom": "Atlas", "phase": "cadrage"}"#)]));
    let r = t.engine.run(None, "passe Atlas en phase cadrage", None).await.unwrap();
    assert!(r.written.contains("Projet Atlas : rien n'a changé"), "{}", r.written);
    assert!(r.spoken.contains("Projet Atlas : rien n'a changé"), "{}", r.spoken);
    assert!(!r.spoken.contains("modifié"), "{}", r.spoken);
}

#[tokio::test]
async fn a_bare_stop_asks_before_touching_the_chrono() {
    let t = spawn_turn_app().await;
    t.app.done("creer_projet", json!({"nom": "Atlas"})).await;
    t.app.done("demarrer_session", json!({"projet": "Atlas"})).await;
    // No model call at all: the question is code's.
    let r = t.engine.run(None, "stop", None).await.unwrap();
    assert_eq!(r.written, "Tu veux que j'arrête la session de travail sur Atlas ?");
    assert_eq!(t.llm.requests().len(), 0);
    assert!(t.app.fresh().await.running_session().await.unwrap().is_some(), "the session still runs");
    let no = t.engine.run(Some(&r.conversation_id), "non", None).await.unwrap();
    assert_eq!(no.written, "D'accord, je n'ai rien fait.");
    assert!(t.app.fresh().await.running_session().await.unwrap().is_some());
    let r = t.engine.run(None, "pause", None).await.unwrap();
    assert_eq!(r.written, "Tu veux que je mette en pause la session de travail sur Atlas ?");
    let yes = t.engine.run(Some(&r.conversation_id), "oui", None).await.unwrap();
    assert!(yes.written.starts_with("Session sur Atlas mise en pause à"), "{}", yes.written);
    // In other words, explicit: understood at once (offline parser, then the model).
    t.llm.push(route("intendant", "TRAVAIL", "ecriture"));
    t.llm.push(Reply::tool_calls("", &[("arreter_session", "{}")]));
    let r = t.engine.run(None, "arrête la session", None).await.unwrap();
    assert!(r.written.starts_with("Session sur Atlas arrêtée"), "{}", r.written);
    // With no session running, a bare "stop" touches nothing and asks nothing.
    let r = t.engine.run(None, "stop", None).await.unwrap();
    assert_eq!(r.written, "Aucune session de travail n'est en cours : je n'ai touché à rien.");
}

#[tokio::test]
async fn the_daily_briefing_is_composed_by_code_online() {
    let t = spawn_turn_app().await;
    t.app.done("creer_rappel", json!({"texte": "payer le loyer", "echeance": "2026-11-30T18:00"})).await;
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lire_briefing_hebdo", r#"{"periode": "jour"}"#)]));
    let r = t.engine.run(None, "fais-moi le briefing du jour", None).await.unwrap();
    assert!(r.written.starts_with("Briefing du"), "{}", r.written);
    assert!(r.written.contains("payer le loyer"), "{}", r.written);
    assert_eq!(r.incident.as_ref().unwrap().kind, IncidentKind::Briefing);
    // The model writing its own briefing without the tool: code reads it instead.
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::text("Aujourd'hui tu n'as rien de prévu."));
    let r = t.engine.run(None, "fais-moi le briefing du jour", None).await.unwrap();
    code_only(&r);
    assert!(r.written.starts_with("Briefing du") && r.written.contains("payer le loyer"), "{}", r.written);
    // The tool's schema offers the period.
    let tools = &specialist_requests(&t.llm)[0]["tools"];
    let briefing = tools.as_array().unwrap().iter().find(|t| t["function"]["name"] == "lire_briefing_hebdo").unwrap();
    assert_eq!(briefing["function"]["parameters"]["properties"]["periode"]["enum"], json!(["jour", "semaine"]));
}

#[tokio::test]
async fn an_offline_first_exchange_labels_its_conversation_as_the_fallback_did() {
    let app = common::spawn_app().await;
    let engine = arthur_agents::turn::TurnEngine::new(None, app.ctx.clone());
    let r = engine.run(None, "je commence à travailler sur le projet Atlas", None).await.unwrap();
    assert_eq!(app.store.conversation_domain(&r.conversation_id).await.unwrap(), Some(Some("TRAVAIL".into())));
    assert_eq!(app.store.conversation_label_source(&r.conversation_id).await.unwrap().as_deref(), Some("fallback"));
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "PERSO", "conversation"));
    t.llm.push(Reply::text("Salut."));
    let r = t.engine.run(None, "salut", None).await.unwrap();
    assert_eq!(t.app.store.conversation_label_source(&r.conversation_id).await.unwrap().as_deref(), Some("router"));
}

// ---------- the third round: the grammar goes first ----------

/// A command the grammar is sure of runs with no model call at all, even with a model
/// configured; the answer is code's receipt.
#[tokio::test]
async fn a_sure_command_makes_no_model_call() {
    let t = common::spawn_local_first_app().await;
    let r = t.engine.run(None, "rapelle-moi d'appeler Luc demain à 10 h", None).await.unwrap();
    assert_eq!(r.written, "Rappel n°1 enregistré : « appeler Luc » pour le mardi 1er décembre 2026 à 10 h 00.");
    assert_eq!((r.llm_calls, t.llm.requests().len()), (0, 0));
    let reading = r.trace.reading.as_ref().unwrap();
    assert_eq!((reading.certainty, reading.intent.as_deref()), ("sure", Some("creer_rappel")));
    // A date written the ISO way is a date, not part of the text.
    let r = t.engine.run(None, "rappelle-moi d'appeler Luc le 2026-12-10 à 9:00", None).await.unwrap();
    assert_eq!(r.written, "Rappel n°2 enregistré : « appeler Luc » pour le jeudi 10 décembre 2026 à 9 h 00.");
    // A filter in a question is applied: only tomorrow's reminders.
    t.app.done("creer_rappel", json!({"texte": "payer le loyer", "echeance": "2026-12-05T09:00"})).await;
    let r = t.engine.run(None, "quels sont mes rappels de demain ?", None).await.unwrap();
    assert!(r.written.contains("appeler Luc") && !r.written.contains("payer le loyer"), "{}", r.written);
    assert_eq!(t.llm.requests().len(), 0);
}

/// A write the ears heard with doubt (issue 40: whisper itself weighed a word low) is asked,
/// never run: nothing is written before « oui », and « oui » writes exactly what was asked.
/// What writes nothing (the time, a list read) is answered as usual.
#[tokio::test]
async fn a_write_heard_with_doubt_is_asked_first() {
    let t = common::spawn_local_first_app().await;
    let before = t.app.snapshot().await;
    let r = t.engine.run_heard(None, "rappelle-moi d'appeler Luc demain à 10 h", true, None).await.unwrap();
    assert!(r.written.starts_with("J'ai peut-être mal entendu. Tu veux que je "), "{}", r.written);
    assert!(r.written.contains("appeler Luc") && r.written.ends_with(" ?"), "{}", r.written);
    assert_eq!(t.app.snapshot().await, before, "nothing written before « oui »");
    let r = t.engine.run(Some(&r.conversation_id), "oui", None).await.unwrap();
    assert_eq!(r.written, "Rappel n°1 enregistré : « appeler Luc » pour le mardi 1er décembre 2026 à 10 h 00.");
    let r = t.engine.run_heard(None, "quels sont mes rappels ?", true, None).await.unwrap();
    assert!(r.written.contains("appeler Luc") && !r.written.ends_with('?'), "{}", r.written);
    assert_eq!(t.llm.requests().len(), 0);
}

/// The answer to Arthur's question, heard with doubt, fills the frame but writes nothing:
/// what it would run is asked, and « oui » runs it (issue 40 on a frame, issue 39).
#[tokio::test]
async fn a_reply_heard_with_doubt_is_asked_before_it_writes() {
    let t = common::spawn_local_first_app().await;
    let before = t.app.snapshot().await;
    let r = t.engine.run_heard(None, "mets un minuteur", false, None).await.unwrap();
    assert!(r.written.starts_with("Pour combien de temps ?"), "{}", r.written);
    let conversation = r.conversation_id.clone();
    let r = t.engine.run_heard(Some(&conversation), "cinq minutes", true, None).await.unwrap();
    assert_eq!(r.written, "Tu veux que je lance un minuteur de 5 min ?");
    assert_eq!(t.app.snapshot().await, before, "nothing written before « oui »");
    let r = t.engine.run_heard(Some(&conversation), "oui", false, None).await.unwrap();
    assert!(r.written.contains("Minuteur"), "{}", r.written);
    assert_ne!(t.app.snapshot().await, before, "« oui » ran what was asked");
    // Heard without doubt, the same reply runs at once.
    let r = t.engine.run_heard(None, "mets un minuteur", false, None).await.unwrap();
    let r = t.engine.run_heard(Some(&r.conversation_id), "dix minutes", false, None).await.unwrap();
    assert!(r.written.contains("Minuteur de 10 min lancé"), "{}", r.written);
    assert_eq!(t.llm.requests().len(), 0);
}

/// What the grammar is not sure of is asked, naming what would be done, or said to be
/// wrong; nothing is written before « oui », and no model is called.
#[tokio::test]
async fn an_unsure_command_asks_and_writes_nothing() {
    let t = common::spawn_local_first_app().await;
    let before = t.app.snapshot().await;
    for (said, answer) in [
        (
            "rappelle-moi d'appeler Luc hier à 10 h",
            "Ce moment est déjà passé : je n'ai pas créé le rappel. Redis-moi quand.",
        ),
        (
            "rappelle-moi la banque dans -3 heures",
            "Ce moment est déjà passé : je n'ai pas créé le rappel. Redis-moi quand.",
        ),
        (
            "rappelle-moi de payer la cantine le 31 février à 9 h",
            "Cette date ou cette heure n'existe pas : je n'ai pas créé le rappel. Redis-moi quand.",
        ),
        ("minuteur", "Pour combien de temps ? Dis par exemple : minuteur de dix minutes."),
        (
            "rappelle-moi d'appeler le notaire jeudi",
            "Tu veux que je crée le rappel « appeler le notaire » pour le jeudi 3 décembre 2026 à 9 h 00 ?",
        ),
    ] {
        let r = t.engine.run(None, said, None).await.unwrap();
        assert_eq!(r.written, answer, "{said}");
        assert!(r.tools.is_empty(), "{said}: {:?}", r.tools);
        assert_eq!(r.trace.reading.as_ref().unwrap().certainty, "unsure", "{said}");
    }
    assert_eq!(before, t.app.snapshot().await, "nothing was written");
    assert_eq!(t.llm.requests().len(), 0);
}

/// Words the grammar does not know go to the model, and the witness says nothing about
/// them: no « rien enregistré », no read by code, no write offered.
#[tokio::test]
async fn what_the_grammar_does_not_know_gets_no_witness() {
    let t = common::spawn_local_first_app().await;
    for (said, answer) in [
        ("combien de temps met le train de Paris à Lyon ?", "Ça dépend du train que tu prends."),
        ("écris-moi un haïku sur l'automne", "Feuilles qui tombent, le vent chante doucement."),
        ("je trouve les préférences de Julie bizarres", "Chacun ses goûts !"),
    ] {
        t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
        t.llm.push(Reply::text(answer));
        let r = t.engine.run(None, said, None).await.unwrap();
        assert_eq!(r.trace.reading.as_ref().unwrap().certainty, "none", "{said}");
        assert!(r.tools.is_empty(), "{said}: {:?}", r.tools);
        assert!(r.trace.witness.is_none(), "{said}: {:?}", r.trace.witness);
        assert!(
            !r.written.contains("rien enregistré") && !r.written.contains("Tu veux que je"),
            "{said}: {}",
            r.written
        );
    }
    assert!(t.app.fresh().await.list_notes(None).await.unwrap().is_empty(), "no note « moi un haïku… »");
}

/// Only the claim is withheld, and code says in one sentence what was left out, true to the
/// case — on what the user reads and hears, the spoken answer carrying the same facts.
#[tokio::test]
async fn only_the_claim_is_withheld_and_code_says_what_was_left_out() {
    use arthur_agents::turn::compose::{NOTHING_DONE, NOTHING_RECORDED, NOT_LOOKED};
    let t = common::spawn_local_first_app().await;
    t.app.done("creer_rappel", json!({"texte": "dentiste", "echeance": "2026-11-30T15:00"})).await;
    let cases: [(&str, &str, &str, String); 5] = [
        // Ordinary answers: nothing withheld, nothing added, even when the router (a model)
        // wrongly expected a write.
        (
            "donne-moi une idée de dîner rapide",
            "ecriture",
            "Une omelette aux champignons avec une salade verte, prête en quinze minutes.",
            "Une omelette aux champignons avec une salade verte, prête en quinze minutes.".into(),
        ),
        // An action claimed, no write asked: « je n'ai rien fait de tel ».
        (
            "tu peux me motiver un peu ?",
            "conversation",
            "Tu as déjà fait le plus dur en commençant. J'ai ajouté un rappel pour demain.",
            format!("Tu as déjà fait le plus dur en commençant.\n{NOTHING_DONE}"),
        ),
        // An action claimed when the router expected a write: « rien enregistré ».
        (
            "le garagiste, faudrait que j'y pense",
            "ecriture",
            "Bonne idée. C'est noté pour mardi.",
            format!("Bonne idée.\n{NOTHING_RECORDED}"),
        ),
        // The user's data told without reading, words the grammar is not sure of:
        // « je n'ai pas regardé dans ta mémoire ».
        (
            "ça va être une belle journée ?",
            "conversation",
            "Belle journée en perspective ! Tu as rendez-vous chez le dentiste à 15 h.",
            format!("Belle journée en perspective !\n{NOT_LOOKED}"),
        ),
        // Both at once (« ça roule ? » would be answered by the grammar as a courtesy).
        (
            "tu m'entends ?",
            "conversation",
            "Oui ! J'ai noté ton rendez-vous. Ton code du portail est 4521.",
            format!("Oui !\n{}", arthur_agents::turn::compose::NOTHING_DONE_NOT_LOOKED),
        ),
    ];
    for (said, action, answer, expected) in cases {
        t.llm.push(route("intendant", "QUOTIDIEN", action));
        t.llm.push(Reply::text(answer));
        let r = t.engine.run(None, said, None).await.unwrap();
        assert_eq!(r.written, expected, "{said}");
        assert!(r.tools.is_empty(), "{said}: {:?}", r.tools);
        // What was said aloud is what was written, sentence for sentence.
        assert_eq!(r.spoken.replace('\n', " "), expected.replace('\n', " "), "{said}");
        for gone in ["rappel pour demain", "C'est noté", "15 h", "4521", "J'ai noté"] {
            assert!(!r.written.contains(gone) && !r.spoken.contains(gone), "{said}: {}", r.written);
        }
    }
    // The user's data told without reading, words the grammar is sure of: code reads it.
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Tu n'as aucun rappel, profite !"));
    let engine = t.engine.with_local_first(false);
    let r = engine.run(None, "quels sont mes rappels ?", None).await.unwrap();
    code_only(&r);
    assert!(r.written.contains("dentiste") && r.spoken.contains("dentiste"), "{}", r.written);
    assert!(!r.written.contains("profite"), "{}", r.written);
    assert_eq!(r.trace.memory.as_ref().unwrap().reads_by, "code");
    // Words that ask about the user's day, not known to the grammar: read and told by code,
    // the model's words gone, its true-sounding fact too.
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Belle journée en perspective ! Tu as rendez-vous chez le coiffeur à 11 h."));
    let r = engine.run(None, "raconte-moi ma journée", None).await.unwrap();
    code_only(&r);
    assert!(r.written.contains("« dentiste »") && !r.written.contains("coiffeur"), "{}", r.written);
}

/// With the grammar second (`ARTHUR_LOCAL_FIRST=0`), an ordinary tool turn costs at most two
/// calls: the router and the call that asks for the tool; its receipt ends the turn.
#[tokio::test]
async fn a_tool_turn_costs_at_most_two_calls() {
    let t = spawn_turn_app().await;
    t.llm.push(route("intendant", "QUOTIDIEN", "lecture"));
    t.llm.push(Reply::tool_calls("", &[("lister_rappels", "{}")]));
    t.llm.push(Reply::text("never asked for"));
    let r = t.engine.run(None, "qu'est-ce que j'ai comme rappels ?", None).await.unwrap();
    assert_eq!((r.llm_calls, t.llm.requests().len(), t.llm.remaining()), (1, 2, 1));
    assert!(r.written.starts_with("Aucun rappel"), "{}", r.written);
}

/// Being offline is told once per conversation, and again when the state changes; it is
/// never a prefix of every answer.
#[tokio::test]
async fn offline_is_told_once_per_conversation_and_when_it_changes() {
    use arthur_agents::turn::local::{
        MODEL_BACK, NOT_UNDERSTOOD_AGAIN, NOT_UNDERSTOOD_OFFLINE, NOT_UNDERSTOOD_UNREACHABLE,
    };
    // No model configured.
    let app = common::spawn_app().await;
    let engine = arthur_agents::turn::TurnEngine::new(None, app.ctx.clone());
    let first = engine.run(None, "raconte-moi une histoire", None).await.unwrap();
    assert_eq!(first.written, NOT_UNDERSTOOD_OFFLINE);
    let c = first.conversation_id.as_str();
    let again = engine.run(Some(c), "et une blague ?", None).await.unwrap();
    assert_eq!((again.written.as_str(), again.spoken.as_str()), (NOT_UNDERSTOOD_AGAIN, NOT_UNDERSTOOD_AGAIN));
    // A command the grammar knows says nothing about it.
    let note = engine.run(Some(c), "note : pain", None).await.unwrap();
    assert_eq!(note.written, "Note n°1 enregistrée : « pain ».");
    assert_eq!(engine.run(Some(c), "et un poème ?", None).await.unwrap().written, NOT_UNDERSTOOD_AGAIN);
    // Another conversation is told again.
    assert_eq!(engine.run(None, "et un poème ?", None).await.unwrap().written, NOT_UNDERSTOOD_OFFLINE);

    // A model that stops answering, then answers again, in one conversation.
    let t = spawn_turn_app().await;
    t.llm.set_fallback(Some(Reply::status(500, "down")));
    let down = t.engine.run(None, "raconte-moi une histoire", None).await.unwrap();
    assert_eq!(down.written, NOT_UNDERSTOOD_UNREACHABLE);
    assert_eq!(down.trace.connectivity, Some("unreachable"));
    let c = down.conversation_id.as_str();
    assert_eq!(t.engine.run(Some(c), "une autre ?", None).await.unwrap().written, NOT_UNDERSTOOD_AGAIN);
    t.llm.set_fallback(None);
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Il était une fois un chat."));
    let back = t.engine.run(Some(c), "une histoire de chat ?", None).await.unwrap();
    assert_eq!(back.written, format!("{MODEL_BACK}\nIl était une fois un chat."));
    assert!(back.spoken.starts_with(MODEL_BACK), "{}", back.spoken);
    // Said once: the next answer is the model's alone.
    t.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    t.llm.push(Reply::text("Le chat dormait."));
    assert_eq!(t.engine.run(Some(c), "et après ?", None).await.unwrap().written, "Le chat dormait.");
}
