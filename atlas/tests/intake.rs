//! The intake against a real Dovecot on loopback: messages appended over IMAP, polled,
//! stored once, marked \Seen only after the commit, scanned by ClamAV and OCR'd by
//! Tesseract before the scripted classifier sees them.

use arthur_agents::time::Clock;
use arthur_atlas::imap::ImapAccount;
use arthur_atlas::store::AtlasStore;
use arthur_atlas::{audit, EmailState, Intent};

use crate::support::dovecot::Dovecot;
use crate::support::*;

async fn rows(app: &AtlasApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM atlas_emails").fetch_one(app.memory.pool()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_poll_stores_each_message_once_and_re_polls_create_nothing() {
    let (imap, app) = tokio::join!(Dovecot::start(), spawn_atlas());
    let account = ImapAccount::parse(&imap.url()).unwrap();
    for i in 0..3 {
        imap.append(&msg("jean@client.fr", &format!("Demande {i}"), "Corrige le panier").raw()).await;
    }
    app.llm.set_fallback(Some(verdict("run", "leger", 0.9)));
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!((report.unseen, report.inserted, report.marked_seen, report.classified), (3, 3, 3, 3));
    assert!(imap.seen_flags().await.iter().all(|(_, seen)| *seen), "all marked \\Seen after the commit");
    assert_eq!(rows(&app).await, 3);
    assert_eq!(app.llm.chat_requests().len(), 3);

    // A second poll finds nothing; the server re-announcing the messages creates nothing.
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!((report.unseen, report.inserted), (0, 0));
    imap.mark_all_unseen().await;
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!((report.unseen, report.inserted, report.duplicates, report.marked_seen), (3, 0, 3, 3));
    assert_eq!(rows(&app).await, 3);
    assert_eq!(app.llm.chat_requests().len(), 3, "nothing classified twice");
    assert_eq!(app.materialised_counts().await, [3, 0, 0, 0]);
    let listed = app.store.list(Some(EmailState::Classified)).await.unwrap();
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().all(|r| r.intent == Some(Intent::Run)));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_between_insert_and_seen_is_recovered_without_duplicate() {
    let (imap, app) = tokio::join!(Dovecot::start(), spawn_atlas());
    let account = ImapAccount::parse(&imap.url()).unwrap();
    let raw = msg("jean@client.fr", "Bug", "Le site plante").raw();
    let uid = imap.append(&raw).await;
    // The state a crash leaves: the message committed, its \Seen never set, nothing scanned.
    app.atlas.ingest(&account.label(), Some(uid), raw).await.unwrap();
    assert_eq!(imap.seen_flags().await, vec![(uid, false)]);

    app.llm.push(verdict("run", "leger", 0.9));
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!((report.unseen, report.inserted, report.duplicates), (1, 0, 1));
    assert_eq!(imap.seen_flags().await, vec![(uid, true)]);
    assert_eq!(rows(&app).await, 1);
    // The pending steps were chained in the same tick.
    assert_eq!(report.classified, 1);
    let row = &app.store.list(None).await.unwrap()[0];
    assert_eq!(row.status, EmailState::Classified);
    let events = app.events(row.id).await;
    assert_eq!(events.iter().filter(|e| *e == audit::POLL_INSERTED).count(), 1);
    assert!(events.contains(&audit::POLL_DUPLICATE.to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_and_duplicate_message_ids() {
    let (imap, app) = tokio::join!(Dovecot::start(), spawn_atlas());
    let account = ImapAccount::parse(&imap.url()).unwrap();
    app.llm.set_fallback(Some(verdict("question", "leger", 0.9)));
    let a = msg("a@x.fr", "sans id A", "A").no_message_id().raw();
    let b = msg("b@x.fr", "sans id B", "B").no_message_id().raw();
    imap.append(&a).await;
    imap.append(&b).await;
    imap.append(&a).await; // the same bytes again, no Message-ID: same fallback key
    let first = msg("c@x.fr", "premier", "1").message_id("<same@x.fr>").raw();
    let second = msg("d@x.fr", "second", "2").message_id("<same@x.fr>").raw();
    imap.append(&first).await;
    imap.append(&second).await;
    imap.append(&msg("e@x.fr", "id invalide", "3").message_id("no at sign").raw()).await;
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!((report.unseen, report.inserted, report.duplicates, report.marked_seen), (6, 4, 2, 6));
    let list = app.store.list(None).await.unwrap();
    let keys: Vec<&str> = list.iter().map(|r| r.message_key.as_str()).collect();
    assert_eq!(keys.iter().filter(|k| k.starts_with("sha256:")).count(), 3, "{keys:?}");
    assert!(keys.contains(&"mid:same@x.fr"));
    let same = list.iter().find(|r| r.message_key == "mid:same@x.fr").unwrap();
    assert_eq!(same.subject, "premier", "the first one is kept, the second is a duplicate");
    assert!(list.iter().all(|r| r.status == EmailState::Classified));
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_mime_and_huge_bodies_are_stored_and_classified() {
    let (imap, app) = tokio::join!(Dovecot::start(), spawn_atlas());
    let account = ImapAccount::parse(&imap.url()).unwrap();
    app.llm.set_fallback(Some(verdict("question", "leger", 0.9)));
    let broken = b"From: a@x.fr\r\nSubject: cass\xc3\xa9\r\nMessage-ID: <broken@x.fr>\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"nope\"\r\n\r\n--other\r\nContent-Type: text/plain\r\n\r\nCorps sans fin\r\n\
--nope\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!pas du base64!!!\r\n"
        .to_vec();
    imap.append(&broken).await;
    let huge = msg("b@x.fr", "énorme", &"ligne de texte assez longue pour remplir\n".repeat(60_000)).raw();
    assert!(huge.len() > 2_000_000);
    imap.append(&huge).await;
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!((report.inserted, report.classified), (2, 2));
    let list = app.store.list(None).await.unwrap();
    let big = list.iter().find(|r| r.subject == "énorme").unwrap();
    assert!(big.size as usize >= huge.len(), "the raw message is kept whole");
    for req in app.llm.chat_requests() {
        let prompt = user_text(&req.body);
        let start = prompt.find("USER_EMAIL_BODY_START").unwrap();
        let end = prompt.find("USER_EMAIL_BODY_END").unwrap();
        assert!(prompt[start..end].chars().count() <= 8100);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn eicar_blocks_classification_whatever_the_part_is_called() {
    let (imap, app) = tokio::join!(Dovecot::start(), spawn_atlas());
    let account = ImapAccount::parse(&imap.url()).unwrap();
    let eicar = crate::support::clamav::eicar();
    let named = msg("a@x.fr", "facture", "ci-joint").attach(Some("facture.pdf"), "application/pdf", &eicar);
    let rfc2231 = msg("b@x.fr", "devis", "ci-joint").attach(
        Some("filename*=UTF-8''devis%20%C3%A9t%C3%A9.bin"),
        "application/octet-stream",
        &eicar,
    );
    let unnamed = msg("c@x.fr", "sans nom", "voir").attach(None, "application/x-whatever", &eicar);
    let clean = msg("d@x.fr", "propre", "rien").attach(Some("notes.txt"), "text/plain", b"bonjour");
    for m in [&named, &rfc2231, &unnamed, &clean] {
        imap.append(&m.raw()).await;
    }
    app.llm.push(verdict("question", "leger", 0.9));
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!((report.inserted, report.blocked, report.scanned, report.classified), (4, 3, 1, 1));
    assert_eq!(app.llm.chat_requests().len(), 1, "no blocked message reaches the model");
    for row in app.store.list(Some(EmailState::Blocked)).await.unwrap() {
        assert_eq!(row.scan_verdict.as_deref(), Some("infected"));
        assert_eq!(row.intent, None);
        let audits = app.store.audits(row.id).await.unwrap();
        let blocked = audits.iter().find(|a| a.event == audit::CLASSIFY_BLOCKED_UNSAFE_ATTACHMENTS).unwrap();
        assert!(blocked.detail["infected"][0].as_str().unwrap().starts_with(crate::support::clamav::EICAR_SIG_NAME));
    }
    // A blocked message stays blocked: a later tick does not classify it.
    app.atlas.classify_pending().await.unwrap();
    assert_eq!(app.store.list(Some(EmailState::Blocked)).await.unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scanner_failing_for_a_day_parks_the_message_tells_the_founder_once_and_never_reads_it() {
    let mut app = spawn_atlas_with(Some(arthur_atlas::scan::Scanner::Clamd { addr: "127.0.0.1:1".into() })).await;
    let smtp = crate::support::smtp::SmtpServer::start();
    app.atlas.deps.notifier = Some(notifier(&app, &smtp));
    let id = match app.atlas.ingest(ACCOUNT, None, msg("a@x.fr", "Commande 12", "y").raw()).await.unwrap() {
        arthur_atlas::store::Inserted::New(id) => id,
        other => panic!("{other:?}"),
    };
    // Backing off 1, 2, 4 … 60 minutes: a tick before the next attempt does not scan.
    let mut scans = 0;
    let day = chrono::Duration::hours(24);
    let started = app.clock.now();
    while app.clock.now() - started < day {
        let (clean, blocked) = app.atlas.scan_pending().await.unwrap();
        assert_eq!((clean, blocked), (0, 0));
        let row = app.store.email(id).await.unwrap().unwrap();
        assert_eq!(row.status, EmailState::Received, "never blocked for a scanner error");
        scans += 1;
        let wait = row.retry_at.unwrap() - app.clock.now();
        assert_eq!(wait, arthur_atlas::store::backoff(scans), "attempt {scans}");
        app.clock.advance(wait - chrono::Duration::seconds(1));
        app.atlas.scan_pending().await.unwrap();
        assert_eq!(app.store.email(id).await.unwrap().unwrap().attempts, scans, "not due yet: not scanned");
        app.clock.advance(chrono::Duration::seconds(1));
    }
    // The day is over: the next failure parks it (scan_failed, not blocked), one e-mail.
    app.atlas.scan_pending().await.unwrap();
    let row = app.store.email(id).await.unwrap().unwrap();
    assert_eq!(row.status, EmailState::ScanFailed);
    assert!((28..=32).contains(&scans), "about 28 attempts in a day: {scans}");
    assert_eq!(app.llm.chat_requests().len(), 0, "nothing of it was read");
    let events = app.events(id).await;
    assert!(!events.contains(&audit::CLASSIFY_BLOCKED_UNSAFE_ATTACHMENTS.to_string()));
    assert!(events.contains(&audit::PARKED.to_string()));
    let mails = smtp.wait_for_messages(1, std::time::Duration::from_secs(10));
    assert_eq!(mails[0].rcpt_tos, vec![FOUNDER.to_string()]);
    let subject = mails[0].parsed().subject().unwrap_or("").to_string();
    assert!(subject.starts_with("[Atlas] mis de côté — Commande 12"), "{subject}");
    let text = mails[0].text();
    assert!(text.contains(&format!("arthur atlas retry {id}")) && text.contains("l'analyse antivirus"), "{text}");
    // Parked: later ticks neither scan it nor e-mail again.
    app.clock.advance(chrono::Duration::hours(2));
    app.atlas.scan_pending().await.unwrap();
    assert_eq!(app.store.email(id).await.unwrap().unwrap().attempts, row.attempts);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(smtp.messages().len(), 1);
    // `retry` puts it back (the scanner is still down: it fails again, backing off anew).
    let (code, line) = arthur_atlas::decisions::retry(app.store.as_ref(), id, "cli", app.clock.now()).await.unwrap();
    assert_eq!(code, 0, "{line}");
    assert_eq!(app.store.email(id).await.unwrap().unwrap().status, EmailState::Received);
    app.atlas.scan_pending().await.unwrap();
    let row = app.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.status, row.attempts), (EmailState::Received, 1));
}

/// A five-minute ClamAV outage (clamd's socket gone, then back) loses no message and parks
/// none: each is scanned once clamd answers again, then classified.
#[tokio::test(flavor = "multi_thread")]
async fn a_five_minute_scanner_outage_loses_no_message() {
    let clamd = crate::support::clamav::Clamd::start();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("clamd.sock");
    let scanner = arthur_atlas::scan::Scanner::Clamd { addr: socket.display().to_string() };
    let app = spawn_atlas_with(Some(scanner)).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let raw = msg("jean@x.fr", &format!("Demande {i}"), "Bonjour").raw();
        let arthur_atlas::store::Inserted::New(id) = app.atlas.ingest(ACCOUNT, None, raw).await.unwrap() else {
            panic!()
        };
        ids.push(id);
    }
    // Down for five minutes: every tick fails or waits; nothing parks.
    let start = app.clock.now();
    while app.clock.now() - start < chrono::Duration::minutes(5) {
        assert_eq!(app.atlas.scan_pending().await.unwrap(), (0, 0));
        app.clock.advance(chrono::Duration::seconds(30));
    }
    for id in &ids {
        let row = app.store.email(*id).await.unwrap().unwrap();
        assert_eq!(row.status, EmailState::Received);
        assert!(row.attempts >= 3, "{}", row.attempts);
    }
    // clamd is back (its socket reappears where Atlas looks).
    std::os::unix::fs::symlink(clamd.socket_path(), &socket).unwrap();
    for _ in ids.iter() {
        app.llm.push(verdict("question", "leger", 0.9));
    }
    let start = app.clock.now();
    let mut classified = 0;
    while classified < ids.len() && app.clock.now() - start < chrono::Duration::minutes(10) {
        app.atlas.scan_pending().await.unwrap();
        classified += app.atlas.classify_pending().await.unwrap().0;
        app.clock.advance(chrono::Duration::seconds(30));
    }
    for id in &ids {
        let row = app.store.email(*id).await.unwrap().unwrap();
        assert_eq!((row.status, row.scan_verdict.as_deref()), (EmailState::Classified, Some("clean")), "message {id}");
        assert_eq!((row.retry_at, row.failing_since), (None, None));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn image_text_reaches_the_model_but_never_the_database() {
    let (imap, app) = tokio::join!(Dovecot::start(), spawn_atlas());
    let account = ImapAccount::parse(&imap.url()).unwrap();
    let png = crate::support::clamav::render_png("Erreur 500 sur la page paiement");
    imap.append(&msg(FOUNDER, "capture", "vois la capture").attach(Some("ecran.png"), "image/png", &png).raw()).await;
    app.llm.push(verdict("noise", "leger", 0.9));
    let report = app.atlas.poll_once(&account).await.unwrap();
    assert_eq!(report.classified, 1);
    let prompt = app.last_prompt();
    let start = prompt.find("IMAGE_OCR_TEXT_START").expect("OCR block in the prompt");
    let end = prompt.find("IMAGE_OCR_TEXT_END").unwrap();
    assert!(start < end && prompt.find("USER_EMAIL_BODY_END").unwrap() < start);
    assert!(prompt[start..end].contains("paiement"), "{}", &prompt[start..end]);
    let row = &app.store.list(None).await.unwrap()[0];
    // The founder's capture judged noise is overridden: the content is in the image.
    assert_eq!(row.intent, Some(Intent::Question));
    let audits = app.store.audits(row.id).await.unwrap();
    let ocr = audits.iter().find(|a| a.event == audit::OCR_EXTRACTED).unwrap();
    assert_eq!(ocr.detail["images"], 1);
    assert!(ocr.detail["chars"].as_u64().unwrap() > 20);
    // The OCR text is nowhere in the database (the raw message holds the PNG, not the text).
    let dump: Vec<String> = sqlx::query_scalar(
        "SELECT detail FROM atlas_audits UNION ALL SELECT COALESCE(justification, '') FROM atlas_emails
         UNION ALL SELECT COALESCE(dkim_detail, '') FROM atlas_raw_messages",
    )
    .fetch_all(app.memory.pool())
    .await
    .unwrap();
    assert!(dump.iter().all(|d| !d.contains("paiement")), "{dump:?}");
}
