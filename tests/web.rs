//! The web interface on port 0: every route, the NDJSON sequence of a turn with a refusal,
//! escaping of user and model text, the access token off loopback, cross-site and demo
//! protections, concurrent conversations, and the iCalendar feed checked by a parser.

use crate::common;

use arthur_agents::llm::scripted::Reply;
use arthur_agents::memory::{BasicsStore, MemoryStore};
use common::{route, spawn_web_app};
use serde_json::{json, Value};

#[tokio::test]
async fn every_page_answers_in_french_with_the_ids_reports_use() {
    let w = spawn_web_app(false, None).await;
    let app = &w.turn.app;
    app.done("creer_projet", json!({"nom": "Atlas", "phase": "cadrage"})).await;
    app.done("creer_note", json!({"texte": "penser au DKIM", "projet": "Atlas"})).await;
    app.done("creer_rappel", json!({"texte": "appeler la banque", "echeance": "2026-12-01T09:00"})).await;
    app.done("memoriser_preference", json!({"texte": "réponses courtes"})).await;
    app.done("memoriser_souvenir", json!({"texte": "le dentiste s'appelle Martin"})).await;
    app.done("acter_decision", json!({"projet": "Atlas", "texte": "écrire en Rust"})).await;
    app.done("demarrer_session", json!({"projet": "Atlas"})).await;
    for (path, expect) in [
        ("/", "Écris à Arthur"),
        ("/notes", "penser au DKIM"),
        ("/rappels", "appeler la banque"),
        ("/preferences", "1 active sur 20 au maximum"),
        ("/souvenirs", "le dentiste s'appelle Martin"),
        ("/projets", "écrire en Rust"),
        ("/sessions", "Session en cours sur"),
        ("/journal", "Journal des tours"),
        ("/atlas", "Aucun e-mail lu par Atlas"),
    ] {
        let r = w.get(path).await;
        assert_eq!(r.status(), 200, "{path}");
        assert!(r.headers()["content-security-policy"].to_str().unwrap().contains("script-src 'self'"));
        let body = r.text().await.unwrap();
        assert!(body.contains("lang=\"fr\""), "{path}");
        assert!(body.contains(expect), "{path} lacks {expect:?}");
    }
    assert!(w.get("/notes").await.text().await.unwrap().contains("id=\"note-1\""));
    assert!(w.get("/rappels").await.text().await.unwrap().contains("id=\"rappel-1\""));
    let health: Value = w.get("/healthz").await.json().await.unwrap();
    assert_eq!(health["database"], "ok");
    let export: Value = w.get("/api/export").await.json().await.unwrap();
    assert_eq!(export["notes"][0]["texte"], "penser au DKIM");
    assert_eq!(export, app.snapshot().await);
    let js = w.get("/static/chat.js").await;
    assert!(js.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    assert!(!js.text().await.unwrap().contains("innerHTML"), "text is only set with textContent");
    let due = w.get("/static/due.js").await.text().await.unwrap();
    assert!(due.contains("textContent") && !due.contains("innerHTML"));
}

/// A newcomer's web: a French 404 page, the Atlas tab only when Atlas is set up, and no
/// internal name in the pages' text.
#[tokio::test]
async fn unknown_pages_are_french_and_atlas_shows_only_when_set_up() {
    let w = spawn_web_app(false, None).await;
    let r = w.get("/nulle-part").await;
    assert_eq!(r.status(), 404);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let body = r.text().await.unwrap();
    assert!(body.contains("lang=\"fr\"") && body.contains("Page introuvable") && body.contains("href=\"/\""), "{body}");
    // Atlas is not set up here: no tab on any page.
    for path in ["/", "/notes", "/rappels", "/souvenirs", "/journal"] {
        let body = w.get(path).await.text().await.unwrap();
        assert!(!body.contains("href=\"/atlas\""), "{path} shows the Atlas tab");
        for internal in ["chercher_dans_memoire", "model_unavailable", "Refus ("] {
            assert!(!body.contains(internal), "{path} shows {internal}");
        }
    }
}

/// What was due and not yet heard or seen is counted from the store, by where it reached
/// the user.
#[tokio::test]
async fn healthz_counts_reminders_by_where_they_were_delivered() {
    use arthur_agents::memory::Delivery;
    let w = spawn_web_app(false, None).await;
    let app = &w.turn.app;
    for (texte, at) in [("a", "2026-11-30T10:01"), ("b", "2026-11-30T10:02"), ("c", "2026-11-30T10:03")] {
        app.done("creer_rappel", json!({"texte": texte, "echeance": at})).await;
    }
    app.clock.advance(chrono::Duration::minutes(5));
    let now = app.clock_now();
    for id in 1..=3 {
        assert!(app.store.mark_rappel_announced(id, now).await.unwrap());
    }
    app.store.mark_rappel_delivered(1, now, Delivery::Voice).await.unwrap();
    let due: Value = w.get("/api/annonces").await.json().await.unwrap();
    assert_eq!(due["rappels"].as_array().unwrap().len(), 2, "{due}");
    assert_eq!(due["rappels"][0]["texte"], "b");
    let seen = w.post_json("/api/rappels/2/vu", json!({})).await;
    assert_eq!(seen.status(), 200);
    assert_eq!(w.post_json("/api/rappels/2/vu", json!({})).await.status(), 409, "seen once");
    let health: Value = w.get("/healthz").await.json().await.unwrap();
    assert_eq!(health["reminders"]["spoken"], 1, "{health}");
    assert_eq!(health["reminders"]["seen_on_web"], 1);
    assert_eq!(health["reminders"]["waiting"], 1);
    assert_eq!(health["reminders_announced"], 2, "delivered: heard or seen");
}

#[tokio::test]
async fn a_turn_with_a_refusal_streams_its_events_in_order() {
    let w = spawn_web_app(false, None).await;
    w.turn.llm.push(route("intendant", "QUOTIDIEN", "ecriture"));
    w.turn.llm.push(Reply::tool_calls(
        "Je coche ça tout de suite.",
        &[("creer_note", r#"{"texte": "pain"}"#), ("marquer_rappel_fait", r#"{"id": 9}"#)],
    ));
    let lines = w.chat("note le pain et coche le rappel 9", None).await;
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let pos = |t: &str| types.iter().position(|x| *x == t).unwrap_or_else(|| panic!("no {t} in {types:?}"));
    assert!(pos("status") < pos("report"));
    // No model text on screen before the outcome: no draft line at all, and the text that
    // came with the tool calls is nowhere in the stream.
    assert!(!types.iter().any(|t| t.starts_with("draft")), "{types:?}");
    assert!(!lines.iter().any(|l| l.to_string().contains("Je coche")), "{lines:?}");
    let statuses: Vec<&str> =
        lines.iter().filter(|l| l["type"] == "status").map(|l| l["text"].as_str().unwrap()).collect();
    assert!(statuses.contains(&"routage") && statuses.contains(&"outil : créer la note"), "{statuses:?}");
    // The internal name is data for tools, never the text shown.
    assert!(lines.iter().any(|l| l["type"] == "status" && l["tool"] == "creer_note"), "{lines:?}");
    assert!(!statuses.iter().any(|s| s.contains('_')), "{statuses:?}");
    assert_eq!(*types.last().unwrap(), "final");
    let reports: Vec<&str> =
        lines.iter().filter(|l| l["type"] == "report").map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(reports.len(), 2);
    assert!(reports[0].contains("Note n°1 enregistrée"));
    assert!(reports[1].contains("Rien n'a été écrit"));
    let last = lines.last().unwrap();
    assert_eq!(last["incident"], json!({"kind": "refus", "tool": "marquer_rappel_fait"}));
    assert_eq!(
        last["tools"],
        json!([{"name": "creer_note", "outcome": "done"}, {"name": "marquer_rappel_fait", "outcome": "refused"}])
    );
    assert!(last["written"].as_str().unwrap().contains("aucun rappel n°9"));
    assert!(last["spoken"].is_string());
    assert!(!last["written"].as_str().unwrap().contains("Je coche"));
    assert!(last["parts"].as_array().unwrap().iter().all(|p| p["source"] == "code"));
    assert!(last["conversation"].is_string());
}

#[tokio::test]
async fn user_and_model_text_are_escaped_everywhere() {
    let w = spawn_web_app(false, None).await;
    let evil = r#"<script>alert("x")</script><img src=x onerror=alert(1)>"#;
    w.turn.app.done("creer_note", json!({"texte": evil})).await;
    w.turn.app.done("memoriser_preference", json!({"texte": evil})).await;
    w.turn.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    w.turn.llm.push(Reply::text(format!("Voici : {evil}")));
    let lines = w.chat(evil, None).await;
    assert_eq!(lines.last().unwrap()["written"], format!("Voici : {evil}"), "JSON carries it as data");
    for path in ["/notes", "/preferences", "/journal"] {
        let body = w.get(path).await.text().await.unwrap();
        assert!(!body.contains("<script>alert"), "{path}");
        assert!(!body.contains("<img src=x"), "{path}");
        assert!(body.contains("&lt;script&gt;"), "{path}");
    }
}

#[tokio::test]
async fn off_loopback_needs_a_token_and_the_token_is_enforced() {
    use arthur::web::listen_address;
    use arthur_agents::secret::Secret;
    assert!(listen_address("0.0.0.0:8737", None).is_err());
    assert!(listen_address("192.168.1.10:8737", None).is_err());
    assert!(listen_address("127.0.0.1:8737", None).is_ok());
    assert!(listen_address("[::1]:8737", None).is_ok());
    assert!(listen_address("0.0.0.0:8737", Some(&Secret::new("t0k3n"))).is_ok());
    assert!(listen_address("pas une adresse", None).is_err());

    let w = spawn_web_app(false, Some("t0k3n")).await;
    assert_eq!(w.get("/notes").await.status(), 401);
    assert_eq!(w.get("/api/export").await.status(), 401);
    let bearer = w.http.get(format!("{}/notes", w.base)).bearer_auth("t0k3n").send().await.unwrap();
    assert_eq!(bearer.status(), 200);
    let wrong = w.http.get(format!("{}/notes", w.base)).bearer_auth("nope").send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    let visit = w.get("/notes?token=t0k3n").await;
    assert_eq!(visit.status(), 200);
    let cookie = visit.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let with_cookie = w
        .http
        .get(format!("{}/rappels", w.base))
        .header("cookie", cookie.split(';').next().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(with_cookie.status(), 200);
    assert!(!w.get("/notes?token=t0k3n").await.text().await.unwrap().contains("t0k3n"), "never on a page");
}

#[tokio::test]
async fn the_cli_refuses_to_listen_off_loopback_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::arthur_command()
        .env_clear()
        .env("HOME", dir.path())
        .env("ARTHUR_DATA_DIR", dir.path())
        .env("ARTHUR_WEB_ADDR", "0.0.0.0:0")
        .arg("web")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ARTHUR_WEB_TOKEN"));
}

#[tokio::test]
async fn cross_site_writes_are_refused_before_any_handler() {
    let w = spawn_web_app(false, None).await;
    let post = |origin: Option<&str>, site: Option<&str>, content_type: &str| {
        let mut r = w.http.post(format!("{}/api/chat", w.base)).header("content-type", content_type.to_string());
        if let Some(o) = origin {
            r = r.header("origin", o.to_string());
        }
        if let Some(s) = site {
            r = r.header("sec-fetch-site", s.to_string());
        }
        r.body(r#"{"message": "note : piège"}"#).send()
    };
    assert_eq!(post(Some("http://evil.example"), None, "application/json").await.unwrap().status(), 403);
    assert_eq!(post(None, Some("cross-site"), "application/json").await.unwrap().status(), 403);
    assert_eq!(post(None, None, "text/plain").await.unwrap().status(), 415);
    assert_eq!(post(None, None, "application/x-www-form-urlencoded").await.unwrap().status(), 415);
    assert!(w.turn.llm.requests().is_empty(), "no handler ran");
    assert!(w.turn.app.store.list_turns(5).await.unwrap().is_empty());
    // Same origin is fine; bad bodies are clear errors.
    let same = w.base.clone();
    let r = post(Some(&same), Some("same-origin"), "application/json");
    w.turn.llm.push(route("intendant", "QUOTIDIEN", "conversation"));
    w.turn.llm.push(Reply::text("ok"));
    assert_eq!(r.await.unwrap().status(), 200);
    let bad = w.http.post(format!("{}/api/chat", w.base)).json(&json!({"message": "   "})).send().await.unwrap();
    assert_eq!(bad.status(), 400);
    let v: Value = bad.json().await.unwrap();
    assert_eq!(v["message"], "Le message est vide.");
}

#[tokio::test]
async fn a_foreign_host_name_gets_nothing_without_a_token() {
    let w = spawn_web_app(false, None).await;
    // DNS rebinding: a hostile name resolved to 127.0.0.1.
    let r = w.http.get(format!("{}/api/export", w.base)).header("host", "evil.example:8737").send().await.unwrap();
    assert_eq!(r.status(), 421);
    let r = w.http.get(format!("{}/notes", w.base)).header("host", "localhost").send().await.unwrap();
    assert_eq!(r.status(), 200);
    let port = w.base.rsplit(':').next().unwrap();
    let r = w.http.get(format!("{}/notes", w.base)).header("host", format!("[::1]:{port}")).send().await.unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn demo_mode_is_read_only() {
    let w = spawn_web_app(true, None).await;
    let r = w.http.post(format!("{}/api/chat", w.base)).json(&json!({"message": "note : x"})).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.text().await.unwrap(), "Mode démo : lecture seule");
    for method in [reqwest::Method::PUT, reqwest::Method::DELETE, reqwest::Method::PATCH] {
        let r = w.http.request(method.clone(), format!("{}/notes", w.base)).send().await.unwrap();
        assert_eq!(r.status(), 405, "{method}");
    }
    assert_eq!(w.get("/notes").await.status(), 200);
    assert!(w.get("/").await.text().await.unwrap().contains("Mode démo"));
    assert!(w.turn.llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_conversations_run_and_one_conversation_is_serialised() {
    let w = spawn_web_app(false, None).await;
    // Every call answers the same way, after a short delay, so turns overlap in time.
    w.turn.llm.set_fallback(Some(Reply::delayed(
        std::time::Duration::from_millis(40),
        Reply::text(r#"{"agent": "intendant", "domain": "QUOTIDIEN", "action": "conversation"}"#),
    )));
    let w = std::sync::Arc::new(w);
    let mut handles = Vec::new();
    for conversation in ["conv-a", "conv-b", "conv-c"] {
        for i in 0..3 {
            let w = w.clone();
            handles.push(tokio::spawn(async move {
                (conversation, w.chat(&format!("bonjour {i}"), Some(conversation)).await)
            }));
        }
    }
    for h in handles {
        let (conversation, lines) = h.await.unwrap();
        let last = lines.last().unwrap();
        assert_eq!(last["type"], "final");
        assert_eq!(last["conversation"], conversation);
    }
    let turns = w.turn.app.store.list_turns(100).await.unwrap();
    assert_eq!(turns.len(), 9);
    for conversation in ["conv-a", "conv-b", "conv-c"] {
        let mut mine: Vec<_> = turns.iter().filter(|t| t.conversation_id == conversation).collect();
        mine.sort_by_key(|t| t.started_at);
        assert_eq!(mine.len(), 3);
        for pair in mine.windows(2) {
            assert!(pair[0].finished_at.unwrap() <= pair[1].started_at, "turns of one conversation never overlap");
        }
    }
}

#[tokio::test]
async fn the_reminders_calendar_parses_as_icalendar() {
    let w = spawn_web_app(false, None).await;
    w.turn
        .app
        .done("creer_rappel", json!({"texte": "appeler la banque; vite, très vite", "echeance": "2026-12-01T09:30"}))
        .await;
    w.turn.app.done("creer_rappel", json!({"texte": "déjà fait", "echeance": "2026-12-02T10:00"})).await;
    w.turn.app.done("marquer_rappel_fait", json!({"id": 2})).await;
    w.turn.app.done("creer_rappel", json!({"texte": "x".repeat(300), "echeance": "2026-12-03T10:00"})).await;
    let r = w.get("/rappels.ics").await;
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("text/calendar"));
    let body = r.text().await.unwrap();
    assert!(body.split("\r\n").all(|l| l.len() <= 75), "folded lines");
    let script = r#"
import sys, icalendar
cal = icalendar.Calendar.from_ical(sys.stdin.buffer.read())
for ev in cal.walk("VEVENT"):
    print(ev["UID"], ev["DTSTART"].dt.isoformat(), str(ev["SUMMARY"]), len(ev.walk("VALARM")), sep="|")
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "icalendar parser: {}", String::from_utf8_lossy(&out.stderr));
    let parsed = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = parsed.lines().collect();
    assert_eq!(lines.len(), 2, "done reminders are not in the feed: {parsed}");
    assert_eq!(lines[0], "rappel-1@arthur.local|2026-12-01T08:30:00+00:00|appeler la banque; vite, très vite|1");
    assert!(lines[1].contains(&"x".repeat(300)), "long summaries survive folding");
}

/// The second round on the web: a recurring reminder is one calendar event with its rule
/// (parsed by Python's icalendar), shown with its rule on /rappels; /minuteurs shows alarms,
/// never a passed deadline as to come, and keeps a timer that rang unanswered until « Vu ».
#[tokio::test]
async fn repeats_in_the_calendar_and_alarms_and_unanswered_timers_on_the_page() {
    let w = spawn_web_app(false, None).await;
    let app = &w.turn.app;
    app.done(
        "creer_rappel_recurrent",
        json!({"texte": "sortir les poubelles", "echeance": "2026-12-07T19:00", "frequence": "hebdomadaire"}),
    )
    .await;
    let body = w.get("/rappels.ics").await.text().await.unwrap();
    let script = r#"
import sys, icalendar
cal = icalendar.Calendar.from_ical(sys.stdin.buffer.read())
for ev in cal.walk("VEVENT"):
    print(ev["UID"], ev["DTSTART"].dt.isoformat(), ev["RRULE"].to_ical().decode(), sep="|")
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(body.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "icalendar parser: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "rappel-1@arthur.local|2026-12-07T19:00:00|FREQ=WEEKLY;BYDAY=MO",
        "local (floating) time: 19 h stays 19 h across a change of time"
    );
    assert!(body.contains("X-WR-TIMEZONE:Europe/Paris"));
    assert!(w.get("/rappels").await.text().await.unwrap().contains("tous les lundis à 19 h 00"));

    app.done("creer_reveil", json!({"heure": "2026-12-01T07:00"})).await;
    app.done("demarrer_minuteur", json!({"duree_secondes": 60, "nom": "thé"})).await;
    app.clock.advance(chrono::Duration::minutes(2));
    let api: Value = w.get("/api/minuteurs").await.json().await.unwrap();
    let by_name = |api: &Value, n: &str| api["actifs"].as_array().unwrap().iter().find(|t| t["nom"] == n).cloned();
    let tea = by_name(&api, "thé").expect("listed");
    assert_eq!((tea["etat_libelle"].as_str(), tea["sonne_a"].is_null()), (Some("temps écoulé"), true), "{tea}");
    let alarm = api["actifs"].as_array().unwrap().iter().find(|t| t["genre"] == "reveil").cloned().unwrap();
    assert_eq!(alarm["libelle"], "Réveil n°1 (mardi 1er décembre 2026 à 7 h 00)");
    assert_eq!(alarm["etat_libelle"], "réglé");

    // It rings, nobody answers, it stops ringing: it stays until « Vu ».
    let now = app.clock_now();
    app.store.ring_due_timers(now).await.unwrap();
    app.store.expire_ringing(now + chrono::Duration::minutes(5)).await.unwrap();
    let api: Value = w.get("/api/minuteurs").await.json().await.unwrap();
    let tea = by_name(&api, "thé").expect("still shown");
    assert_eq!(
        (tea["sans_reponse"].as_bool(), tea["etat_libelle"].as_str()),
        (Some(true), Some("a sonné sans réponse"))
    );
    assert!(w.get("/minuteurs").await.text().await.unwrap().contains("a sonné sans réponse"));
    let id = tea["id"].as_i64().unwrap();
    let r = w.post_json(&format!("/api/minuteurs/{id}/acquitter"), json!({})).await;
    assert_eq!(r.status(), 200);
    let api: Value = w.get("/api/minuteurs").await.json().await.unwrap();
    assert!(by_name(&api, "thé").is_none(), "acknowledged: no longer shown");
    assert_eq!(w.post_json(&format!("/api/minuteurs/{id}/acquitter"), json!({})).await.status(), 409);
}

/// The web chat carries a frame from one message to the next of its conversation (issue 39,
/// §3.8): « mets un minuteur » asks, « cinq minutes » starts it; the model is never called.
#[tokio::test]
async fn the_web_chat_takes_the_answer_to_its_own_question() {
    let w = common::spawn_web_app_with(false, None, true).await;
    let asked = w.chat("mets un minuteur", Some("web-frame")).await;
    let last = asked.last().unwrap();
    assert_eq!(last["tools"], json!([]), "{asked:?}");
    assert!(last["written"].as_str().unwrap().contains('?'), "{asked:?}");
    let filled = w.chat("cinq minutes", Some("web-frame")).await;
    let last = filled.last().unwrap();
    assert_eq!(last["tools"], json!([{"name": "demarrer_minuteur", "outcome": "done"}]), "{filled:?}");
    assert!(last["parts"].as_array().unwrap().iter().all(|p| p["source"] == "code"), "{last}");
    let timers = w.turn.app.ctx.store.all_timers().await.unwrap();
    assert_eq!(timers.len(), 1, "{timers:?}");
    assert_eq!(timers[0].duree_secondes, 300, "{timers:?}");
    assert_eq!(w.turn.llm.requests().len(), 0, "the grammar and the frame, no model");
}
