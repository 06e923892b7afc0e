//! The chat page in a real headless Chromium (Debian's `chromium` and `chromium-driver`,
//! installed by scripts/setup), driven over WebDriver: a message to a scripted model, the
//! verified answer and the refusal report appear, and `/rappels` shows the reminder that was
//! written. Screenshots are saved under target/test-artifacts/.

use crate::common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use arthur_agents::llm::scripted::Reply;
use common::{route, spawn_web_app};
use fantoccini::{ClientBuilder, Locator};

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

use crate::harness::free_port;

fn artifacts() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target").join("test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn start_chromedriver() -> (Driver, String) {
    let port = free_port();
    let mut child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver is required: run scripts/setup (Debian packages chromium and chromium-driver)");
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    for _ in 0..100 {
        if http.get(format!("{url}/status")).send().await.is_ok() {
            return (Driver(child), url);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("chromedriver did not start");
}

/// Headless Chromium over WebDriver, with a fresh profile.
async fn browser() -> (Driver, tempfile::TempDir, fantoccini::Client) {
    let (driver, driver_url) = start_chromedriver().await;
    let profile = tempfile::tempdir().unwrap();
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".to_string(),
        serde_json::json!({
            "binary": "/usr/bin/chromium",
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=430,900", format!("--user-data-dir={}", profile.path().display()),
            ]
        }),
    );
    let client =
        ClientBuilder::rustls().unwrap().capabilities(caps).connect(&driver_url).await.expect("WebDriver session");
    (driver, profile, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_in_the_browser_shows_receipts_refusals_and_the_written_reminder() {
    // Two rustls crypto providers are linked in the test build; pick one for WebDriver.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let w = spawn_web_app(false, None).await;
    w.turn.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    // The model streams a claim before its tool calls: it must never appear on the page.
    w.turn.llm.push(Reply::tool_calls(
        "C'est noté, je coche tout ça.",
        &[
            ("creer_rappel", r#"{"texte": "appeler la banque", "echeance": "2026-12-01T09:00"}"#),
            ("marquer_rappel_fait", r#"{"id": 99}"#),
        ],
    ));

    let (_driver, _profile, client) = browser().await;

    client.goto(&w.base).await.unwrap();
    let input = client.find(Locator::Css("#message")).await.unwrap();
    input.send_keys("rappelle-moi d'appeler la banque demain à 9 h").await.unwrap();
    client.find(Locator::Css("#send")).await.unwrap().click().await.unwrap();
    let answer = client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(".bubble.arthur[data-final='true']"))
        .await
        .expect("the final answer appears");
    let text = answer.text().await.unwrap();
    assert!(text.contains("Rappel n°1 enregistré : « appeler la banque »"), "{text}");
    assert!(text.contains("aucun rappel n°99") && text.contains("Rien n'a été écrit"), "{text}");
    let verified = client.find_all(Locator::Css(".bubble.arthur .part.code")).await.unwrap();
    assert_eq!(verified.len(), 2, "both parts are marked as written by code");
    // No draft, not even struck through: the page holds only the user's words and the answer.
    let page = client.find(Locator::Css("#conversation")).await.unwrap().text().await.unwrap();
    assert!(!page.contains("je coche"), "{page}");
    assert!(client.find_all(Locator::Css(".bubble.draft, .part.model")).await.unwrap().is_empty());
    std::fs::write(artifacts().join("browser-chat.png"), client.screenshot().await.unwrap()).unwrap();

    client.goto(&format!("{}/rappels", w.base)).await.unwrap();
    let item = client.find(Locator::Css("#rappel-1")).await.expect("the reminder is listed");
    let item_text = item.text().await.unwrap();
    assert!(item_text.contains("appeler la banque") && item_text.contains("n°1"), "{item_text}");
    std::fs::write(artifacts().join("browser-rappels.png"), client.screenshot().await.unwrap()).unwrap();
    client.close().await.unwrap();
}

/// The timers page is live (its script redraws it from /api/minuteurs): a timer started
/// appears with what is left, a ringing one gets a « C'est bon » button that stops it, an
/// alarm shows its time, one that rang unanswered stays with « Vu »; the lists page shows
/// each list with its items.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timers_and_lists_are_shown_on_the_web_page() {
    use arthur_agents::memory::BasicsStore;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let w = spawn_web_app(false, None).await;
    let app = &w.turn.app;
    app.done("demarrer_minuteur", serde_json::json!({"duree_secondes": 600, "nom": "pâtes"})).await;
    app.done("demarrer_minuteur", serde_json::json!({"duree_secondes": 60, "nom": "œufs"})).await;
    for e in ["lait", "pain", "pommes"] {
        app.done("ajouter_a_liste", serde_json::json!({"liste": "courses", "element": e})).await;
    }
    app.done("ajouter_a_liste", serde_json::json!({"liste": "tâches", "element": "réparer le volet"})).await;
    let (_driver, _profile, client) = browser().await;

    client.goto(&format!("{}/minuteurs", w.base)).await.unwrap();
    let pates = client.find(Locator::Css("#minuteur-1")).await.expect("the timer is listed");
    let text = pates.text().await.unwrap();
    assert!(text.contains("« pâtes »") && text.contains("10 min"), "{text}");
    // The eggs are done: the page shows them ringing within a second, without a reload.
    app.clock.advance(chrono::Duration::seconds(61));
    app.store.ring_due_timers(app.clock_now()).await.unwrap();
    let button = client
        .wait()
        .at_most(Duration::from_secs(5))
        .for_element(Locator::Css("#minuteur-2 button.ack"))
        .await
        .expect("a ringing timer gets its button");
    let ringing = client.find(Locator::Css("#minuteur-2")).await.unwrap().text().await.unwrap();
    assert!(ringing.contains("sonne"), "{ringing}");
    std::fs::write(artifacts().join("browser-minuteurs.png"), client.screenshot().await.unwrap()).unwrap();
    button.click().await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while client.find(Locator::Css("#minuteur-2")).await.is_ok() {
        assert!(std::time::Instant::now() < deadline, "the acknowledged timer leaves the list");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(app.store.ringing_timers().await.unwrap().is_empty());

    // An alarm is shown with its time; a timer that rang unanswered stays, with « Vu »,
    // until acknowledged; a passed deadline shows no time to come.
    app.done("creer_reveil", serde_json::json!({"heure": "2026-12-01T07:00"})).await;
    app.done("demarrer_minuteur", serde_json::json!({"duree_secondes": 30, "nom": "thé"})).await;
    let alarm = client
        .wait()
        .at_most(Duration::from_secs(5))
        .for_element(Locator::Css("#minuteur-3"))
        .await
        .expect("the alarm is listed");
    let text = alarm.text().await.unwrap();
    assert!(text.contains("Réveil n°3 (mardi 1er décembre 2026 à 7 h 00)") && text.contains("réglé"), "{text}");
    app.clock.advance(chrono::Duration::seconds(31));
    let now = app.clock_now();
    app.store.ring_due_timers(now).await.unwrap();
    app.store.expire_ringing(now + chrono::Duration::minutes(5)).await.unwrap();
    let seen = client
        .wait()
        .at_most(Duration::from_secs(5))
        .for_element(Locator::Css("#minuteur-4 button.ack"))
        .await
        .expect("rung unanswered: it stays with its button");
    let text = client.find(Locator::Css("#minuteur-4")).await.unwrap().text().await.unwrap();
    assert!(text.contains("a sonné sans réponse") && !text.contains("sonne à"), "{text}");
    assert_eq!(seen.text().await.unwrap(), "Vu");
    std::fs::write(artifacts().join("browser-minuteurs-sans-reponse.png"), client.screenshot().await.unwrap()).unwrap();
    seen.click().await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while client.find(Locator::Css("#minuteur-4")).await.is_ok() {
        assert!(std::time::Instant::now() < deadline, "acknowledged: it leaves the list");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    client.goto(&format!("{}/listes", w.base)).await.unwrap();
    let page = client.find(Locator::Css("main")).await.unwrap().text().await.unwrap();
    assert!(page.contains("courses (3)") && page.contains("pommes") && page.contains("réparer le volet"), "{page}");
    std::fs::write(artifacts().join("browser-listes.png"), client.screenshot().await.unwrap()).unwrap();
    client.close().await.unwrap();
}

/// Without a voice, a due reminder is shown on whatever page is open, live (the banner asks
/// /api/annonces), until the user says « Vu »: then it is delivered on the web, and leaves
/// the banner on every page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_due_reminder_appears_live_on_the_open_page_until_seen() {
    use arthur::notifier::{Notifier, NotifierDeps};
    use arthur_agents::memory::MemoryStore;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let w = spawn_web_app(false, None).await;
    let app = &w.turn.app;
    app.done("creer_rappel", serde_json::json!({"texte": "appeler la banque", "echeance": "2026-11-30T10:05"})).await;
    app.done("creer_note", serde_json::json!({"texte": "acheter du pain"})).await;
    let (_driver, _profile, client) = browser().await;
    client.goto(&format!("{}/notes", w.base)).await.unwrap();
    // Not due yet: no banner.
    assert!(!client.find(Locator::Css("#annonces")).await.unwrap().is_displayed().await.unwrap());
    // The time comes; serve's notifier (no voice) claims it.
    app.clock.advance(chrono::Duration::minutes(6));
    let deps = NotifierDeps {
        store: app.ctx.store.clone(),
        clock: app.ctx.clock.clone(),
        tz: app.ctx.tz,
        period: Duration::from_secs(30),
        announce: None,
        health: Default::default(),
        print: false,
    };
    assert_eq!(Notifier::default().tick(&deps).await.unwrap().len(), 1);
    let seen = client
        .wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("#annonces li button"))
        .await
        .expect("the due reminder shows up on the open page, without a reload");
    let banner = client.find(Locator::Css("#annonces")).await.unwrap().text().await.unwrap();
    assert!(banner.contains("Rappel : appeler la banque") && banner.contains("10 h 05"), "{banner}");
    std::fs::write(artifacts().join("browser-rappel-du.png"), client.screenshot().await.unwrap()).unwrap();
    seen.click().await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while client.find(Locator::Css("#annonces")).await.unwrap().is_displayed().await.unwrap() {
        assert!(std::time::Instant::now() < deadline, "the seen reminder leaves the banner");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let counts = app.store.reminder_deliveries().await.unwrap();
    assert_eq!((counts.seen_on_web, counts.waiting), (1, 0));
    client.close().await.unwrap();
}
