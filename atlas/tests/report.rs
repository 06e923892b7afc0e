//! The calibration report's numbers on a seeded dataset: volume, mean and standard deviation
//! of the confidence per intent, uncertainty, failures, the success proxy, and the phase-3
//! gate counted on internal run + plan items (strictly above 90 % on at least 30).

use arthur_atlas::report::{compute, markdown};
use arthur_atlas::store::{AtlasStore, ClassificationRecord, Inserted, NewMessage, ScanRecord, StepFailure};
use arthur_atlas::{audit, Complexity, EmailState, Intent};
use serde_json::json;

use crate::support::start_time;
use crate::support::*;

async fn seed(app: &AtlasApp, n: usize, intent: Intent, complexity: Complexity, confidence: f64, client: Option<i64>) {
    for _ in 0..n {
        let m = msg("x@y.fr", "seed", "seed");
        let raw = m.raw();
        let new = NewMessage {
            account: ACCOUNT.into(),
            message_key: format!("mid:{}", m.message_id.clone().unwrap()),
            message_id: m.message_id.clone(),
            imap_uid: None,
            from_email: Some("x@y.fr".into()),
            subject: "seed".into(),
            raw,
            dkim_pass: false,
            dkim_detail: String::new(),
        };
        let Inserted::New(id) = app.store.insert_message(&new, start_time()).await.unwrap() else { panic!() };
        let scan = ScanRecord { verdict: "clean", scanned_parts: 1, attachments: 0, detail: json!({}) };
        assert!(app.store.record_scan(id, &scan, start_time()).await.unwrap());
        let mut audits = vec![];
        if confidence < 0.7 {
            audits.push((audit::CLASSIFICATION_UNCERTAIN, json!({})));
        }
        let rec = ClassificationRecord {
            intent,
            complexity,
            confidence,
            model: "seed".into(),
            justification: String::new(),
            client_id: client,
            client_source: if client.is_some() { "envelope" } else { "unknown" },
            is_forward: false,
            chantier_id: None,
            audits,
        };
        app.store.record_classification(id, &rec, start_time()).await.unwrap().unwrap();
    }
}

async fn cancel_runs(app: &AtlasApp, n: i64) {
    sqlx::query(
        "UPDATE atlas_runs SET status = 'annule' WHERE id IN
           (SELECT id FROM atlas_runs WHERE complexity = 'plan' AND client_id IS NULL AND status = 'ouvert' LIMIT ?)",
    )
    .bind(n)
    .execute(app.memory.pool())
    .await
    .unwrap();
}

#[tokio::test]
async fn the_report_computes_its_numbers_and_opens_the_gate_on_run_plan() {
    let app = spawn_atlas().await;
    let client = app.add_client("Boutique", &[], &["boutique.fr"], Some(10.0)).await;
    seed(&app, 30, Intent::Run, Complexity::Plan, 0.9, None).await; // internal run + plan
    seed(&app, 5, Intent::Run, Complexity::Plan, 0.8, Some(client)).await; // client work: not internal
    seed(&app, 4, Intent::Run, Complexity::Leger, 0.6, None).await;
    seed(&app, 2, Intent::Question, Complexity::Leger, 0.5, None).await;
    seed(&app, 2, Intent::Question, Complexity::Leger, 0.9, None).await;
    seed(&app, 3, Intent::Noise, Complexity::Leger, 1.0, None).await;
    // Failures: one classify_failed, one blocked.
    let Inserted::New(failing) = app.store.insert_message(&fake("fail"), start_time()).await.unwrap() else { panic!() };
    let scan = ScanRecord { verdict: "clean", scanned_parts: 1, attachments: 0, detail: json!({}) };
    app.store.record_scan(failing, &scan, start_time()).await.unwrap();
    let failure = StepFailure {
        from: EmailState::Scanned,
        event: audit::CLASSIFY_FAILED,
        detail: json!({}),
        park_after: chrono::Duration::hours(24),
        terminal: EmailState::ClassifyFailed,
    };
    app.store.record_failure(failing, &failure, start_time()).await.unwrap();
    let Inserted::New(blocked) = app.store.insert_message(&fake("virus"), start_time()).await.unwrap() else {
        panic!()
    };
    let infected = ScanRecord { verdict: "infected", scanned_parts: 2, attachments: 1, detail: json!({}) };
    app.store.record_scan(blocked, &infected, start_time()).await.unwrap();
    cancel_runs(&app, 2).await;

    let data = app.store.report_data(start_time() - chrono::Duration::days(30)).await.unwrap();
    let c = compute(&data);
    assert_eq!(c.total, 46);
    let run = c.per_intent.iter().find(|r| r.0 == Intent::Run).unwrap();
    assert_eq!(run.1, 39);
    let mean = (30.0 * 0.9 + 5.0 * 0.8 + 4.0 * 0.6) / 39.0;
    assert!((run.2 - mean).abs() < 1e-9);
    let var = (30.0 * (0.9f64 - mean).powi(2) + 5.0 * (0.8f64 - mean).powi(2) + 4.0 * (0.6f64 - mean).powi(2)) / 39.0;
    assert!((run.3 - var.sqrt()).abs() < 1e-9);
    let q = c.per_intent.iter().find(|r| r.0 == Intent::Question).unwrap();
    assert_eq!(q.1, 4);
    assert!((q.2 - 0.7).abs() < 1e-9 && (q.3 - 0.2).abs() < 1e-9, "{q:?}");
    assert_eq!(c.uncertain, 6, "4 runs at 0.6 and 2 questions at 0.5");
    assert_eq!((c.classify_failed, c.blocked), (1, 1));
    assert_eq!(c.success.iter().find(|s| s.0 == Intent::Run).unwrap(), &(Intent::Run, 37, 39));
    assert_eq!(c.gate_items, (28, 30));
    assert!(c.gate_open, "28/30 = 93 % > 90 % on 30 internal run + plan items");
    let md = markdown(&c, 30, start_time());
    assert!(md.contains("| run | 39 | 0,86 | 0,09 |"), "{md}");
    assert!(md.contains("Incertaines (confiance < 0,7) : 6 sur 46 (13,0 %)"), "{md}");
    assert!(md.contains("Run + plan internes : 28 non annulés sur 30 (93,3 %)"), "{md}");
    assert!(md.contains("**Seuil franchi**"));

    // One more cancellation: 27/30 = 90 % is not above 90 %.
    cancel_runs(&app, 1).await;
    let c = compute(&app.store.report_data(start_time() - chrono::Duration::days(30)).await.unwrap());
    assert_eq!(c.gate_items, (27, 30));
    assert!(!c.gate_open);
    assert!(markdown(&c, 30, start_time()).contains("**Seuil non franchi** : taux de succès insuffisant"));

    // Outside the window, nothing counts.
    let c = compute(&app.store.report_data(start_time() + chrono::Duration::days(1)).await.unwrap());
    assert_eq!((c.total, c.gate_items), (0, (0, 0)));
}

fn fake(tag: &str) -> NewMessage {
    NewMessage {
        account: ACCOUNT.into(),
        message_key: format!("mid:{tag}@x"),
        message_id: Some(format!("{tag}@x")),
        imap_uid: None,
        from_email: None,
        subject: tag.into(),
        raw: tag.as_bytes().to_vec(),
        dkim_pass: false,
        dkim_detail: String::new(),
    }
}
