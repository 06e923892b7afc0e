//! Atlas through the web interface: the `/atlas` page's buttons (approve, refuse, retry,
//! draft) behind the write guards, `/healthz`'s Atlas counts, and `/atlas/agents`; the app's
//! web state over an Atlas store set up by the shared Atlas fixtures (atlas/tests/support).

use std::sync::Arc;
use std::time::Duration;

use arthur_agents::time::Clock;
use arthur_atlas::persona::Group;
use arthur_atlas::store::AtlasStore;
use arthur_atlas::{audit, EmailState};

use crate::common::spawn_app;
use crate::support::launch::LaunchApp;
use crate::support::*;

struct MapEnv(std::collections::HashMap<String, String>);
impl arthur::config::Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_founder_gets_a_checked_signed_draft_reply_never_sent() {
    use arthur_agents::llm::scripted::Reply;
    use arthur_atlas::draft::DraftError;
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Corriger le panier").await;
    assert_eq!(t.launcher(t.claude("commits", None), |_| {}).cycle().await.unwrap().actioned, 1);
    let pending = t.classified("question", "leger", FOUNDER, "Pas encore traité").await;
    let settings = arthur::config::Settings::load_from(&MapEnv(
        [
            ("ARTHUR_DATA_DIR", t.data.path().display().to_string()),
            ("MISTRAL_API_KEY", "k".to_string()),
            ("MISTRAL_BASE_URL", t.app.llm.base_url()),
            ("ATLAS_FOUNDER_EMAIL", "jean-marc.dupont@maboite.fr".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
    ))
    .unwrap();
    let drafter = Arc::new(arthur::atlas_cli::drafter(&settings, t.app.store.clone(), t.app.clock.clone()));
    let before = t.app.llm.chat_requests().len();
    // First answer in "tu": refused by code, rewritten once.
    t.app.llm.push(Reply::text("Salut, tu peux regarder le panier. Il marche. Dis-moi si ton site va bien."));
    t.app.llm.push(Reply::text(
        "Bonjour, merci pour votre message. Le bouton du panier fonctionne de nouveau. Vous pouvez le vérifier dès maintenant.",
    ));
    let draft = drafter.write(row.id).await.unwrap();
    assert!(draft.text.ends_with("Bien cordialement,\nJean Marc Dupont"), "{}", draft.text);
    assert_eq!(draft.provider, "mistral");
    let reqs = t.app.llm.chat_requests();
    assert_eq!(reqs.len(), before + 2);
    assert_eq!(reqs[before].body["model"], "mistral-large-latest", "the provider's chat model by default");
    assert!(user_text(&reqs[before + 1].body).contains("ne respecte pas la consigne"));
    assert!(
        user_text(&reqs[before].body).contains("Le panier est corrigé")
            || user_text(&reqs[before].body).contains("panier")
    );
    assert!(t.app.events(row.id).await.contains(&audit::DRAFT_WRITTEN.to_string()));
    assert_eq!(t.app.store.drafts(row.id).await.unwrap().len(), 1);
    // Never sent: the SMTP server got the recap only.
    assert_eq!(t.smtp.wait_for_messages(1, Duration::from_secs(10)).len(), 1);

    // Not finished → refused, nothing asked of the model.
    let n = t.app.llm.chat_requests().len();
    assert!(matches!(drafter.write(pending.id).await, Err(DraftError::NotFinished { .. })));
    assert_eq!(t.app.llm.chat_requests().len(), n);
    // A client whose provider has no key: a clear error, no fallback to another provider.
    sqlx::query("INSERT INTO atlas_clients (name, status, priority, ai_provider, created_at) VALUES ('Souverain', 'actif', 'normale', 'anthropic', '2026-11-30T09:00:00.000Z')")
        .execute(t.app.memory.pool())
        .await
        .unwrap();
    sqlx::query(
        "UPDATE atlas_emails SET client_id = (SELECT id FROM atlas_clients WHERE name = 'Souverain') WHERE id = ?",
    )
    .bind(row.id)
    .execute(t.app.memory.pool())
    .await
    .unwrap();
    assert!(matches!(drafter.write(row.id).await, Err(DraftError::NoModel("anthropic"))));

    // Through the web: the button's endpoint.
    let web = spawn_app().await;
    let state = Arc::new(arthur::web::WebState {
        engine: Arc::new(arthur_agents::turn::TurnEngine::new(None, web.ctx.clone())),
        store: web.ctx.store.clone(),
        tz: web.ctx.tz,
        preferences_cap: web.ctx.preferences_cap,
        demo: false,
        token: None,
        health: Default::default(),
        atlas: Some(t.app.store.clone()),
        drafter: Some(drafter.clone()),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(arthur::web::run(listener, state, Default::default()));
    let page = reqwest::get(format!("{base}/atlas")).await.unwrap().text().await.unwrap();
    assert!(page.contains(&format!("data-draft=\"{}\"", row.id)), "{page}");
    // Atlas is set up here: its tab is in the navigation of every page.
    let notes = reqwest::get(format!("{base}/notes")).await.unwrap().text().await.unwrap();
    assert!(notes.contains("href=\"/atlas\""), "{notes}");
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{base}/api/atlas/{}/draft", row.id))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503, "the Souverain client has no Anthropic key");
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("anthropic"));
    let r = http
        .post(format!("{base}/api/atlas/999/draft"))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let cross = http
        .post(format!("{base}/api/atlas/{}/draft", row.id))
        .header("content-type", "application/json")
        .header("sec-fetch-site", "cross-site")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), 403, "another site cannot ask for drafts");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_atlas_page_approves_and_refuses_behind_the_write_guards() {
    let t = LaunchApp::new().await;
    t.app.llm.push(verdict("question", "leger", 0.9));
    let a = t.app.process(msg("x@inconnu.fr", "Question A", "?").raw()).await;
    t.app.llm.push(verdict("question", "leger", 0.9));
    let b = t.app.process(msg("y@inconnu.fr", "Question B", "?").raw()).await;
    let launcher = t.launcher(t.claude("success", None), |_| {});
    // Held as soon as they were classified (issue 28).
    assert_eq!((a.status, b.status), (EmailState::AwaitingApproval, EmailState::AwaitingApproval));
    assert_eq!(launcher.cycle().await.unwrap().held, 0);

    let web = spawn_app().await;
    let token = arthur_agents::secret::Secret::new("jeton-de-test");
    let state = Arc::new(arthur::web::WebState {
        engine: Arc::new(arthur_agents::turn::TurnEngine::new(None, web.ctx.clone())),
        store: web.ctx.store.clone(),
        tz: web.ctx.tz,
        preferences_cap: web.ctx.preferences_cap,
        demo: false,
        token: Some(token),
        health: Default::default(),
        atlas: Some(t.app.store.clone()),
        drafter: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(arthur::web::run(listener, state, Default::default()));
    let http = reqwest::Client::new();
    let post = |path: String, auth: bool, cross: bool| {
        let mut r = http.post(format!("{base}{path}")).header("content-type", "application/json").body("{}");
        if auth {
            r = r.header("authorization", "Bearer jeton-de-test");
        }
        if cross {
            r = r.header("sec-fetch-site", "cross-site");
        }
        r.send()
    };
    let page = http
        .get(format!("{base}/atlas"))
        .header("authorization", "Bearer jeton-de-test")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains(&format!("data-decide=\"approve\" data-id=\"{}\"", a.id)), "{page}");
    assert!(page.contains(&format!("data-decide=\"cancel\" data-id=\"{}\"", b.id)), "{page}");

    // No token, or another site: refused, nothing changed.
    assert_eq!(post(format!("/api/atlas/{}/approve", a.id), false, false).await.unwrap().status(), 401);
    assert_eq!(post(format!("/api/atlas/{}/approve", a.id), true, true).await.unwrap().status(), 403);
    assert_eq!(t.state(a.id).await.status, EmailState::AwaitingApproval);

    let r = post(format!("/api/atlas/{}/approve", a.id), true, false).await.unwrap();
    assert_eq!(r.status(), 200);
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("approuvé"), "{body}");
    assert_eq!(t.state(a.id).await.status, EmailState::Classified);
    assert!(t
        .app
        .store
        .audits(a.id)
        .await
        .unwrap()
        .iter()
        .any(|x| x.event == audit::LAUNCH_APPROVED && x.detail["by"] == "web"));
    let r = post(format!("/api/atlas/{}/cancel", b.id), true, false).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(t.state(b.id).await.status, EmailState::Cancelled);
    // Twice, or an unknown message: a clear refusal.
    assert_eq!(post(format!("/api/atlas/{}/approve", b.id), true, false).await.unwrap().status(), 409);
    assert_eq!(post("/api/atlas/9999/approve".into(), true, false).await.unwrap().status(), 404);
    // The approved one launches at the next cycle.
    assert_eq!(launcher.cycle().await.unwrap().actioned, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn parked_messages_are_retried_from_the_page_and_counted_on_healthz() {
    use arthur_atlas::store::{ScanRecord, StepFailure};
    let t = LaunchApp::new().await;
    let now = t.app.clock.now();
    let insert = |subject: &'static str| {
        let app = &t.app;
        async move {
            match app.atlas.ingest(ACCOUNT, None, msg("x@y.fr", subject, "corps").raw()).await.unwrap() {
                arthur_atlas::store::Inserted::New(id) => id,
                other => panic!("{other:?}"),
            }
        }
    };
    let parked = insert("Scanner en panne").await;
    let failure = StepFailure {
        from: EmailState::Received,
        event: audit::SCAN_FAILED,
        detail: serde_json::json!({}),
        park_after: chrono::Duration::zero(),
        terminal: EmailState::ScanFailed,
    };
    assert_eq!(t.app.store.record_failure(parked, &failure, now).await.unwrap(), EmailState::ScanFailed);
    let infected = insert("Virus").await;
    let verdict = ScanRecord { verdict: "infected", scanned_parts: 1, attachments: 1, detail: serde_json::json!({}) };
    assert!(t.app.store.record_scan(infected, &verdict, now).await.unwrap());

    let web = spawn_app().await;
    let state = Arc::new(arthur::web::WebState {
        engine: Arc::new(arthur_agents::turn::TurnEngine::new(None, web.ctx.clone())),
        store: web.ctx.store.clone(),
        tz: web.ctx.tz,
        preferences_cap: web.ctx.preferences_cap,
        demo: false,
        token: None,
        health: Default::default(),
        atlas: Some(t.app.store.clone()),
        drafter: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(arthur::web::run(listener, state, Default::default()));
    let health: serde_json::Value = reqwest::get(format!("{base}/healthz")).await.unwrap().json().await.unwrap();
    assert_eq!(health["atlas"]["parked"]["scan_failed"], 1, "{health}");
    assert_eq!(health["atlas"]["parked"]["classify_failed"], 0, "{health}");
    let page = reqwest::get(format!("{base}/atlas")).await.unwrap().text().await.unwrap();
    assert!(page.contains(&format!("data-decide=\"retry\" data-id=\"{parked}\"")), "{page}");
    assert!(!page.contains(&format!("data-decide=\"retry\" data-id=\"{infected}\"")), "no retry for an infection");
    let http = reqwest::Client::new();
    let post = |id: i64| {
        http.post(format!("{base}/api/atlas/{id}/retry")).header("content-type", "application/json").body("{}").send()
    };
    let cross = http
        .post(format!("{base}/api/atlas/{parked}/retry"))
        .header("content-type", "application/json")
        .header("sec-fetch-site", "cross-site")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), 403);
    let r = post(infected).await.unwrap();
    assert_eq!(r.status(), 409);
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("jamais relancé"), "{body}");
    assert_eq!(t.state(infected).await.status, EmailState::Blocked);
    let r = post(parked).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(t.state(parked).await.status, EmailState::Received);
    let health: serde_json::Value = reqwest::get(format!("{base}/healthz")).await.unwrap().json().await.unwrap();
    assert_eq!(health["atlas"]["parked"]["scan_failed"], 0, "{health}");
}

#[tokio::test]
async fn the_agents_page_groups_by_family_with_derived_rings_escaped() {
    let app = spawn_app().await;
    let pool = app.store.pool().clone();
    let atlas = Arc::new(arthur_atlas::store::SqliteAtlasStore::open(pool.clone()).await.unwrap());
    sqlx::query(
        "INSERT INTO atlas_agents (codename, nickname, role, group_name, cognitive_frame, job_mission, \
         job_perimeter, job_key_checks) VALUES ('veille', '<script>alert(1)</script>', 'Veilleur', 'cadrage', 'F', \
         'Surveiller & résumer', 'P', 'K')",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("UPDATE atlas_agents SET active = 0 WHERE codename = 'redaction'").execute(&pool).await.unwrap();
    let state = Arc::new(arthur::web::WebState {
        engine: Arc::new(arthur_agents::turn::TurnEngine::new(None, app.ctx.clone())),
        store: app.ctx.store.clone(),
        tz: app.ctx.tz,
        preferences_cap: app.ctx.preferences_cap,
        demo: false,
        token: None,
        health: Default::default(),
        atlas: Some(atlas),
        drafter: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(arthur::web::run(listener, state, Default::default()));

    let response = reqwest::get(format!("{base}/atlas/agents")).await.unwrap();
    assert_eq!(response.status(), 200);
    let html = response.text().await.unwrap();
    let sections: Vec<usize> =
        Group::ALL.iter().map(|g| html.find(&format!("id=\"{g}\"")).unwrap_or_else(|| panic!("{g} section"))).collect();
    assert!(sections.windows(2).all(|w| w[0] < w[1]), "families in order");
    let row = |codename: &str| {
        let at = html.find(&format!("id=\"agent-{codename}\"")).unwrap_or_else(|| panic!("{codename} row"));
        (at, &html[at..at + html[at..].find("</tr>").unwrap()])
    };
    let (atlas_at, atlas) = row("atlas");
    assert!(atlas.contains("Orchestrateur") && atlas.contains("<td class=\"ring\">0</td>"), "{atlas}");
    assert!(sections[0] < atlas_at && atlas_at < sections[1]);
    let (backend_at, backend) = row("backend");
    assert!(backend.contains("Pascal") && backend.contains("Développeur backend"));
    assert!(backend.contains("<td class=\"ring\">2</td>") && backend.contains("Réaliser les évolutions"));
    assert!(sections[2] < backend_at && backend_at < sections[3]);
    assert!(row("qa").1.contains("<td class=\"ring\">3</td>"));
    assert!(row("strategie").1.contains("<td class=\"ring\">1</td>"));
    assert!(!html.contains("agent-redaction"), "inactive agents are not listed");
    let (_, veille) = row("veille");
    assert!(veille.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && veille.contains("Surveiller &amp; résumer"));
    assert!(!html.contains("<script>alert(1)"));
}
