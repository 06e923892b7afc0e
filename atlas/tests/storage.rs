//! `AtlasStore` on both backends: every test below `suite!` lists it runs once on SQLite and
//! once on PostgreSQL with the same assertions; the PostgreSQL-only tests prove the launch
//! coordination of several workers on one database (advisory locks, SKIP LOCKED).

use std::sync::Arc;
use std::time::Duration;

use arthur_agents::memory::SqliteStore;
use arthur_atlas::mail::EmailAddress;
use arthur_atlas::store::postgres::{LAUNCH_LOCK_CLASS, WRITE_LOCK_CLASS, WRITE_LOCK_KEY};
use arthur_atlas::store::{
    AtlasStore, AtlasStoreError, ClassificationRecord, Inserted, JournalEvent, LaunchEnd, NewClient, NewLaunch,
    NewMessage, PgAtlasStore, Requeue, ScanRecord, SqliteAtlasStore, StepFailure,
};
use arthur_atlas::{Complexity, EmailState, Intent};
use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{Connection, SqlitePool};

// ---- fixtures ----

/// PostgreSQL tests running at once. The shared cluster accepts 40 connections and one test
/// opens up to about ten (two pools of three, lock connections, raw sessions).
static PG_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(3);

enum Db {
    Sqlite(SqlitePool),
    Postgres { pool: PgPool, url: String },
}

/// One backend, empty and migrated.
struct Fx {
    store: Arc<dyn AtlasStore>,
    db: Db,
    _memory: Option<SqliteStore>,
    _dir: Option<tempfile::TempDir>,
    // Last: released once the pools above are gone.
    _slot: Option<tokio::sync::SemaphorePermit<'static>>,
}

impl Fx {
    async fn sqlite() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let memory = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
        let pool = memory.pool().clone();
        Fx {
            store: Arc::new(SqliteAtlasStore::open(pool.clone()).await.unwrap()),
            db: Db::Sqlite(pool),
            _memory: Some(memory),
            _dir: Some(dir),
            _slot: None,
        }
    }

    async fn postgres() -> Fx {
        let slot = PG_SLOTS.acquire().await.unwrap();
        let url = crate::harness::fresh_database().await;
        let pool = migrated_pg(&url).await;
        Fx {
            store: Arc::new(PgAtlasStore::open(pool.clone()).await.unwrap()),
            db: Db::Postgres { pool, url },
            _memory: None,
            _dir: None,
            _slot: Some(slot),
        }
    }

    /// A single integer from literal SQL (no binds: the text is the same on both backends).
    async fn scalar(&self, sql: &str) -> i64 {
        match &self.db {
            Db::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
            Db::Postgres { pool, .. } => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
        }
    }

    async fn exec(&self, sql: &str) {
        match &self.db {
            Db::Sqlite(pool) => sqlx::query(sql).execute(pool).await.map(drop).unwrap(),
            Db::Postgres { pool, .. } => sqlx::query(sql).execute(pool).await.map(drop).unwrap(),
        }
    }

    fn pg(&self) -> (&PgPool, &str) {
        match &self.db {
            Db::Postgres { pool, url } => (pool, url),
            Db::Sqlite(_) => panic!("a PostgreSQL-only test on SQLite"),
        }
    }

    /// A store on a fresh database of the same backend, migrated but never seeded: the rows
    /// are the migrations' own. The temporary directory (SQLite) is returned with it.
    async fn unseeded(&self) -> (Arc<dyn AtlasStore>, Option<tempfile::TempDir>) {
        match &self.db {
            Db::Sqlite(_) => {
                let dir = tempfile::tempdir().unwrap();
                let options = sqlx::sqlite::SqliteConnectOptions::new()
                    .filename(dir.path().join("unseeded.db"))
                    .create_if_missing(true);
                let pool = sqlx::sqlite::SqlitePoolOptions::new().connect_with(options).await.unwrap();
                arthur_agents::memory::sqlite::MIGRATOR.run(&pool).await.unwrap();
                arthur_atlas::store::sqlite::MIGRATOR.run(&pool).await.unwrap();
                (Arc::new(SqliteAtlasStore::new(pool)), Some(dir))
            }
            Db::Postgres { .. } => {
                let pool = migrated_pg(&crate::harness::fresh_database().await).await;
                (Arc::new(PgAtlasStore::new(pool)), None)
            }
        }
    }

    /// The store opened again on the same database, as at the next start (migrations, seeds).
    async fn reopen(&self) -> Arc<dyn AtlasStore> {
        match &self.db {
            Db::Sqlite(pool) => Arc::new(SqliteAtlasStore::open(pool.clone()).await.unwrap()),
            Db::Postgres { pool, .. } => Arc::new(PgAtlasStore::open(pool.clone()).await.unwrap()),
        }
    }

    /// A second worker on the same database: its own pool, its own store.
    async fn second_pg_store(&self) -> PgAtlasStore {
        let (_, url) = self.pg();
        PgAtlasStore::new(PgPoolOptions::new().max_connections(3).connect(url).await.unwrap())
    }
}

/// A database as Arthur opens it: the memory's migrations, then Atlas' own.
async fn migrated_pg(url: &str) -> PgPool {
    let pool = PgPoolOptions::new().max_connections(3).connect(url).await.unwrap();
    arthur_agents::memory::postgres::MIGRATOR.run(&pool).await.unwrap();
    arthur_atlas::store::postgres::MIGRATOR.run(&pool).await.unwrap();
    pool
}

// ---- builders ----

/// Monday 2 March 2026, 09:00 UTC.
fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap()
}

fn minutes(n: i64) -> chrono::Duration {
    chrono::Duration::minutes(n)
}

const ACCOUNT: &str = "atlas@127.0.0.1:143/INBOX";

fn message(key: &str) -> NewMessage {
    NewMessage {
        account: ACCOUNT.into(),
        message_key: format!("mid:{key}"),
        message_id: Some(key.into()),
        imap_uid: Some(7),
        from_email: Some("jean@acme.fr".into()),
        subject: format!("Sujet {key}"),
        raw: format!("Subject: {key}\r\n\r\nCorps\r\n").into_bytes(),
        dkim_pass: true,
        dkim_detail: "pass".into(),
    }
}

async fn insert(fx: &Fx, key: &str, now: DateTime<Utc>) -> i64 {
    match fx.store.insert_message(&message(key), now).await.unwrap() {
        Inserted::New(id) => id,
        other => panic!("{key}: {other:?}"),
    }
}

fn clean() -> ScanRecord {
    ScanRecord { verdict: "clean", scanned_parts: 2, attachments: 1, detail: json!({"parts": 2}) }
}

fn verdict(intent: Intent, complexity: Complexity, confidence: f64, client_id: Option<i64>) -> ClassificationRecord {
    ClassificationRecord {
        intent,
        complexity,
        confidence,
        model: "mistral-small-latest".into(),
        justification: "scripted".into(),
        client_id,
        client_source: if client_id.is_some() { "envelope" } else { "unknown" },
        is_forward: false,
        chantier_id: None,
        audits: vec![],
    }
}

/// A message taken to `classified` with this intent; returns its id.
async fn classified(fx: &Fx, key: &str, intent: Intent, now: DateTime<Utc>) -> i64 {
    let id = insert(fx, key, now).await;
    assert!(fx.store.record_scan(id, &clean(), now).await.unwrap());
    fx.store.record_classification(id, &verdict(intent, Complexity::Leger, 0.9, None), now).await.unwrap().unwrap();
    id
}

async fn spawned(fx: &Fx, key: &str, now: DateTime<Utc>) -> i64 {
    let id = classified(fx, key, Intent::Run, now).await;
    assert!(fx
        .store
        .transition(id, EmailState::Classified, EmailState::Spawned, "spawn_started", json!({}), now)
        .await
        .unwrap());
    id
}

async fn status(fx: &Fx, id: i64) -> EmailState {
    fx.store.email(id).await.unwrap().unwrap().status
}

async fn events(fx: &Fx, id: i64) -> Vec<String> {
    fx.store.audits(id).await.unwrap().into_iter().map(|a| a.event).collect()
}

fn launch(email_id: i64) -> NewLaunch {
    NewLaunch {
        email_id,
        iteration: 1,
        prompt_kind: "run",
        max_turns: 40,
        workspace: "/tmp/ws".into(),
        branch: None,
        fork_commit: Some("abc123".into()),
        attempt: 1,
        session_mode: "saved",
    }
}

fn sorted<T: std::fmt::Debug>(items: &[T]) -> Vec<String> {
    let mut out: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
    out.sort();
    out
}

// ---- the shared suite ----

async fn insert_message_stores_once_per_account_and_key(fx: Fx) {
    let id = insert(&fx, "a@x", t0()).await;
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!(row.status, EmailState::Received);
    assert_eq!(row.message_id.as_deref(), Some("a@x"));
    assert_eq!(row.message_key, "mid:a@x");
    assert_eq!(row.from_email.as_deref(), Some("jean@acme.fr"));
    assert_eq!(row.subject, "Sujet a@x");
    assert!(row.dkim_pass);
    assert_eq!(row.size, message("a@x").raw.len() as i64);
    assert_eq!((row.attempts, row.intent, row.materialised), (0, None, None));
    assert_eq!((row.created_at, row.updated_at), (t0(), t0()));

    let again = fx.store.insert_message(&message("a@x"), t0() + minutes(1)).await.unwrap();
    assert_eq!(again, Inserted::Duplicate(id));
    let mut other_account = message("a@x");
    other_account.account = "other@127.0.0.1:143/INBOX".into();
    other_account.dkim_pass = false;
    let Inserted::New(other) = fx.store.insert_message(&other_account, t0()).await.unwrap() else {
        panic!("same key, other account: a new message")
    };
    assert_ne!(other, id);
    assert!(!fx.store.email(other).await.unwrap().unwrap().dkim_pass);
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_raw_messages").await, 2);
    assert_eq!(events(&fx, id).await, ["poll_inserted"]);
    let audit = &fx.store.audits(id).await.unwrap()[0];
    assert_eq!(audit.detail, json!({"uid": 7, "size": row.size, "dkim_pass": true, "key": "message-id"}));
    assert!(fx.store.email(9999).await.unwrap().is_none());
}

async fn raw_round_trips_exact_bytes(fx: Fx) {
    let mut msg = message("raw@x");
    msg.raw = (0..=255u8).chain([0, 0xff, 0xfe, b'\r', b'\n', 0]).collect();
    msg.message_id = None;
    msg.imap_uid = None;
    let Inserted::New(id) = fx.store.insert_message(&msg, t0()).await.unwrap() else { panic!("new") };
    assert_eq!(fx.store.raw(id).await.unwrap().unwrap(), msg.raw);
    assert_eq!(fx.store.email(id).await.unwrap().unwrap().size, 262);
    assert_eq!(fx.store.audits(id).await.unwrap()[0].detail["key"], "sha256");
    assert_eq!(fx.store.audits(id).await.unwrap()[0].detail["uid"], json!(null));
    assert!(fx.store.raw(id + 100).await.unwrap().is_none());
}

async fn audits_keep_their_order_detail_and_time(fx: Fx) {
    let id = insert(&fx, "au@x", t0()).await;
    let other = insert(&fx, "au2@x", t0()).await;
    fx.store.audit(Some(id), "first", json!({"n": 1, "nested": {"ok": true}}), t0() + minutes(1)).await.unwrap();
    fx.store.audit(None, "global", json!({}), t0() + minutes(2)).await.unwrap();
    fx.store.audit(Some(other), "elsewhere", json!({}), t0() + minutes(2)).await.unwrap();
    fx.store.audit(Some(id), "second", json!(["a", 2.5]), t0() + minutes(3)).await.unwrap();
    let audits = fx.store.audits(id).await.unwrap();
    assert_eq!(audits.iter().map(|a| a.event.as_str()).collect::<Vec<_>>(), ["poll_inserted", "first", "second"]);
    assert!(audits.windows(2).all(|w| w[0].id < w[1].id));
    assert!(audits.iter().all(|a| a.email_id == Some(id)));
    assert_eq!(audits[1].detail, json!({"n": 1, "nested": {"ok": true}}));
    assert_eq!(audits[2].detail, json!(["a", 2.5]));
    assert_eq!(audits[2].created_at, t0() + minutes(3));
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_audits WHERE email_id IS NULL").await, 1);

    // A timestamp that is not one is reported as corrupt, not as a parse panic.
    fx.exec("UPDATE atlas_audits SET created_at = 'hier' WHERE event = 'second'").await;
    match fx.store.audits(id).await {
        Err(AtlasStoreError::Corrupt { column, value }) => assert_eq!((column, value.as_str()), ("created_at", "hier")),
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

async fn emails_in_pages_with_a_cursor(fx: Fx) {
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(insert(&fx, &format!("page{n}@x"), t0()).await);
    }
    assert!(fx.store.record_scan(ids[1], &clean(), t0()).await.unwrap());
    let page = |after, limit| {
        let store = fx.store.clone();
        async move {
            store
                .emails_in(&[EmailState::Received], after, limit)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.id)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(page(0, 2).await, [ids[0], ids[2]]);
    assert_eq!(page(ids[2], 2).await, [ids[3], ids[4]]);
    assert_eq!(page(ids[4], 2).await, Vec::<i64>::new());
    let both = fx.store.emails_in(&[EmailState::Received, EmailState::Scanned], ids[0], 10).await.unwrap();
    assert_eq!(both.iter().map(|r| r.id).collect::<Vec<_>>(), ids[1..]);
    assert!(fx.store.emails_in(&[EmailState::Spawned], 0, 10).await.unwrap().is_empty());
}

async fn record_scan_moves_received_once(fx: Fx) {
    let ok = insert(&fx, "scan1@x", t0()).await;
    let bad = insert(&fx, "scan2@x", t0()).await;
    assert!(fx.store.record_scan(ok, &clean(), t0() + minutes(1)).await.unwrap());
    assert!(!fx.store.record_scan(ok, &clean(), t0() + minutes(2)).await.unwrap(), "a replay is a no-op");
    let row = fx.store.email(ok).await.unwrap().unwrap();
    assert_eq!(row.status, EmailState::Scanned);
    assert_eq!((row.scan_verdict.as_deref(), row.attachment_count), (Some("clean"), Some(1)));
    assert_eq!(row.updated_at, t0() + minutes(1));
    assert_eq!(events(&fx, ok).await, ["poll_inserted", "scanned"]);

    let infected =
        ScanRecord { verdict: "infected", scanned_parts: 3, attachments: 2, detail: json!({"virus": "eicar"}) };
    assert!(fx.store.record_scan(bad, &infected, t0()).await.unwrap());
    assert_eq!(status(&fx, bad).await, EmailState::Blocked);
    assert_eq!(events(&fx, bad).await, ["poll_inserted", "scanned", "classify_blocked_unsafe_attachments"]);
    assert_eq!(fx.store.audits(bad).await.unwrap()[2].detail, json!({"virus": "eicar"}));
}

async fn record_failure_backs_off_then_parks_after_the_window(fx: Fx) {
    let id = insert(&fx, "fail@x", t0()).await;
    let failure = StepFailure {
        from: EmailState::Received,
        event: "scan_failed",
        detail: json!({"error": "clamd down"}),
        park_after: minutes(30),
        terminal: EmailState::ScanFailed,
    };
    // 1, 2, 4 … minutes between attempts; the row waits (not due) until then.
    let mut now = t0();
    for (attempt, wait) in [(1, 1), (2, 2), (3, 4), (4, 8)] {
        assert_eq!(
            fx.store.record_failure(id, &failure, now).await.unwrap(),
            EmailState::Received,
            "attempt {attempt}"
        );
        let row = fx.store.email(id).await.unwrap().unwrap();
        assert_eq!((row.attempts, row.retry_at, row.failing_since), (attempt, Some(now + minutes(wait)), Some(t0())));
        assert!(fx.store.due_in(&[EmailState::Received], 0, 10, now).await.unwrap().is_empty(), "backing off");
        now += minutes(wait);
        assert_eq!(fx.store.due_in(&[EmailState::Received], 0, 10, now).await.unwrap().len(), 1, "due again");
    }
    // Failing for the whole window (15 minutes in, then 30): parked.
    now = t0() + minutes(31);
    assert_eq!(fx.store.record_failure(id, &failure, now).await.unwrap(), EmailState::ScanFailed);
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.status, row.attempts, row.retry_at, row.updated_at), (EmailState::ScanFailed, 5, None, now));
    let audits = fx.store.audits(id).await.unwrap();
    assert_eq!(audits.iter().filter(|a| a.event == "scan_failed").count(), 5);
    let last = audits.iter().rfind(|a| a.event == "scan_failed").unwrap();
    assert_eq!(last.detail, json!({"error": "clamd down", "attempt": 5, "failing_for_minutes": 31, "parked": true}));
    let first = audits.iter().find(|a| a.event == "scan_failed").unwrap();
    assert_eq!(first.detail["retry_in_minutes"], 1);
    assert!(audits.iter().any(|a| a.event == "parked" && a.detail["state"] == "scan_failed"));
    // Parked: a further failure of the same step writes nothing and reports where it is.
    assert_eq!(fx.store.record_failure(id, &failure, now).await.unwrap(), EmailState::ScanFailed);
    assert_eq!(fx.store.email(id).await.unwrap().unwrap().attempts, 5);
    // A missing row: the step's own state.
    assert_eq!(fx.store.record_failure(id + 50, &failure, t0()).await.unwrap(), EmailState::Received);

    // A successful scan resets the count and the backoff.
    let other = insert(&fx, "fail2@x", t0()).await;
    fx.store.record_failure(other, &failure, t0()).await.unwrap();
    assert!(fx.store.record_scan(other, &clean(), t0()).await.unwrap());
    let row = fx.store.email(other).await.unwrap().unwrap();
    assert_eq!((row.attempts, row.retry_at, row.failing_since), (0, None, None));
}

async fn retry_parked_requeues_errors_never_an_infection(fx: Fx) {
    let scan = StepFailure {
        from: EmailState::Received,
        event: "scan_failed",
        detail: json!({}),
        park_after: minutes(0),
        terminal: EmailState::ScanFailed,
    };
    let parked = insert(&fx, "parked@x", t0()).await;
    assert_eq!(fx.store.record_failure(parked, &scan, t0()).await.unwrap(), EmailState::ScanFailed);
    let infected = insert(&fx, "eicar@x", t0()).await;
    let verdict = ScanRecord { verdict: "infected", scanned_parts: 1, attachments: 1, detail: json!({}) };
    assert!(fx.store.record_scan(infected, &verdict, t0()).await.unwrap());
    let classify = classified(&fx, "ok@x", Intent::Run, t0()).await;

    let back = fx.store.retry_parked(parked, json!({"by": "cli"}), t0() + minutes(5)).await.unwrap();
    assert_eq!(back, Requeue::Requeued { from: EmailState::ScanFailed, to: EmailState::Received });
    let row = fx.store.email(parked).await.unwrap().unwrap();
    assert_eq!((row.status, row.attempts, row.retry_at, row.failing_since), (EmailState::Received, 0, None, None));
    assert!(events(&fx, parked).await.contains(&"retry_requested".to_string()));
    assert_eq!(fx.store.due_in(&[EmailState::Received], 0, 10, t0()).await.unwrap().len(), 1);
    assert_eq!(
        fx.store.retry_parked(infected, json!({}), t0()).await.unwrap(),
        Requeue::NotParked(EmailState::Blocked),
        "an infected attachment is never retried"
    );
    assert_eq!(status(&fx, infected).await, EmailState::Blocked);
    assert_eq!(
        fx.store.retry_parked(classify, json!({}), t0()).await.unwrap(),
        Requeue::NotParked(EmailState::Classified)
    );
    assert_eq!(fx.store.retry_parked(9999, json!({}), t0()).await.unwrap(), Requeue::Missing);
}

async fn a_timed_out_launch_is_requeued_with_its_count(fx: Fx) {
    let id = spawned(&fx, "late@x", t0()).await;
    assert!(fx.store.schedule_launch_retry(id, json!({"attempt": 1, "max": 2}), t0()).await.unwrap());
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.status, row.launch_retries), (EmailState::Classified, 1));
    assert!(!fx.store.schedule_launch_retry(id, json!({}), t0()).await.unwrap(), "only from spawned");
    let scheduled = events(&fx, id).await.iter().filter(|e| *e == "retry_scheduled").count();
    assert_eq!(scheduled, 1, "the write that did not move the row wrote no audit");
    assert!(fx
        .store
        .transition(id, EmailState::Classified, EmailState::Spawned, "spawn_started", json!({}), t0())
        .await
        .unwrap());
    assert!(fx
        .store
        .transition(id, EmailState::Spawned, EmailState::Escalated, "escalated", json!({}), t0())
        .await
        .unwrap());
    assert_eq!(status(&fx, id).await, EmailState::Escalated);
}

async fn record_classification_materialises_into_one_table_once(fx: Fx) {
    let client = fx.store.add_client(&NewClient { name: "Acme".into(), ..NewClient::default() }, t0()).await.unwrap();
    let chantier = fx.store.add_chantier("Refonte", Some(client), t0()).await.unwrap();
    let cases = [
        (Intent::Run, "atlas_runs", "run"),
        (Intent::Question, "atlas_questions", "question"),
        (Intent::Negociation, "atlas_negociations", "negociation"),
        (Intent::Conseil, "atlas_conseils", "conseil"),
    ];
    for (n, (intent, table, kind)) in cases.into_iter().enumerate() {
        let id = insert(&fx, &format!("cls{n}@x"), t0()).await;
        let mut rec = verdict(intent, Complexity::Plan, 0.75, Some(client));
        if matches!(intent, Intent::Run | Intent::Question) {
            rec.chantier_id = Some(chantier);
        }
        rec.audits = vec![("classification_uncertain", json!({"why": "test"}))];
        assert!(fx.store.record_classification(id, &rec, t0()).await.unwrap().is_none(), "not scanned yet");
        fx.store.record_scan(id, &clean(), t0()).await.unwrap();
        let Some(Some((got_kind, item))) = fx.store.record_classification(id, &rec, t0()).await.unwrap() else {
            panic!("{kind}: materialised")
        };
        assert_eq!(got_kind, kind);
        let row = fx.store.email(id).await.unwrap().unwrap();
        assert_eq!(row.status, EmailState::Classified);
        assert_eq!((row.intent, row.complexity, row.confidence), (Some(intent), Some(Complexity::Plan), Some(0.75)));
        assert_eq!((row.client_id, row.client_source.as_deref()), (Some(client), Some("envelope")));
        assert_eq!(row.materialised, Some((kind, item)));
        assert_eq!(row.model.as_deref(), Some("mistral-small-latest"));
        assert_eq!(row.justification.as_deref(), Some("scripted"));
        let mut expected = vec!["poll_inserted", "scanned", "classification_uncertain", "classified", "materialised"];
        if rec.chantier_id.is_some() {
            expected.push("chantier_linked");
            assert_eq!(row.chantier_id, Some(chantier));
        }
        assert_eq!(events(&fx, id).await, expected);

        // A replay is a no-op; a forced re-run of the step finds the same row.
        assert!(fx.store.record_classification(id, &rec, t0()).await.unwrap().is_none());
        assert!(fx
            .store
            .transition(id, EmailState::Classified, EmailState::Scanned, "test", json!({}), t0())
            .await
            .unwrap());
        assert_eq!(fx.store.record_classification(id, &rec, t0()).await.unwrap(), Some(Some((kind, item))));
        assert_eq!(fx.scalar(&format!("SELECT COUNT(*) FROM {table} WHERE email_id = {id}")).await, 1);
        for (_, other, _) in cases.iter().filter(|(_, t, _)| *t != table) {
            assert_eq!(fx.scalar(&format!("SELECT COUNT(*) FROM {other} WHERE email_id = {id}")).await, 0);
        }
    }
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_runs WHERE complexity = 'plan'").await, 1);

    let noise = insert(&fx, "noise@x", t0()).await;
    fx.store.record_scan(noise, &clean(), t0()).await.unwrap();
    let rec = verdict(Intent::Noise, Complexity::Leger, 0.2, None);
    assert_eq!(fx.store.record_classification(noise, &rec, t0()).await.unwrap(), Some(None));
    let row = fx.store.email(noise).await.unwrap().unwrap();
    assert_eq!(
        (row.intent, row.materialised, row.client_source.as_deref()),
        (Some(Intent::Noise), None, Some("unknown"))
    );
}

async fn retry_failed_rescans_classify_failures(fx: Fx) {
    let id = insert(&fx, "retry@x", t0()).await;
    let other = insert(&fx, "retry2@x", t0()).await;
    fx.store.record_scan(id, &clean(), t0()).await.unwrap();
    let f = StepFailure {
        from: EmailState::Scanned,
        event: "classify_failed",
        detail: json!({}),
        park_after: minutes(5),
        terminal: EmailState::ClassifyFailed,
    };
    fx.store.record_failure(id, &f, t0()).await.unwrap();
    assert_eq!(fx.store.record_failure(id, &f, t0() + minutes(6)).await.unwrap(), EmailState::ClassifyFailed);
    assert_eq!(fx.store.retry_failed(t0() + minutes(9)).await.unwrap(), 1);
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.status, row.attempts, row.updated_at), (EmailState::Scanned, 0, t0() + minutes(9)));
    assert_eq!((row.retry_at, row.failing_since), (None, None), "due at once again");
    assert_eq!(status(&fx, other).await, EmailState::Received);
    assert_eq!(fx.store.retry_failed(t0()).await.unwrap(), 0);
}

async fn clients_refuse_duplicates_and_resolve_addresses(fx: Fx) {
    let addr = |s: &str| EmailAddress::parse(s).unwrap();
    let acme = NewClient {
        name: "Acme".into(),
        emails: vec![addr("jean@acme.fr")],
        domains: vec![" @Acme.FR ".into()],
        mrr: Some(1200.5),
        priority: Some("haute".into()),
        ai_provider: Some("anthropic".into()),
        ai_model: Some("claude-x".into()),
        claude_model: Some("opus".into()),
        ..NewClient::default()
    };
    let acme_id = fx.store.add_client(&acme, t0()).await.unwrap();
    let client = fx.store.client(acme_id).await.unwrap().unwrap();
    assert_eq!(client.name, "Acme");
    assert_eq!(client.mrr, Some(1200.5));
    assert!(client.is_paying());
    assert_eq!((client.status.as_str(), client.priority.as_str()), ("actif", "haute"));
    assert_eq!(
        (client.emails.clone(), client.domains.clone()),
        (vec!["jean@acme.fr".to_string()], vec!["acme.fr".to_string()])
    );
    assert_eq!(
        (client.ai_provider.as_deref(), client.ai_model.as_deref(), client.claude_model.as_deref()),
        (Some("anthropic"), Some("claude-x"), Some("opus"))
    );

    let dup = fx.store.add_client(&NewClient { name: "Acme".into(), ..NewClient::default() }, t0()).await;
    assert!(matches!(dup, Err(AtlasStoreError::DuplicateClient(ref n)) if n == "Acme"), "{dup:?}");
    let beta = NewClient {
        name: "Beta".into(),
        emails: vec![addr("boss@beta.fr"), addr("jean@acme.fr")],
        ..NewClient::default()
    };
    let dup = fx.store.add_client(&beta, t0()).await;
    assert!(matches!(dup, Err(AtlasStoreError::DuplicateAddress(ref a)) if a == "jean@acme.fr"), "{dup:?}");
    let gamma = NewClient { name: "Gamma".into(), domains: vec!["gmail.com".into()], ..NewClient::default() };
    let public = fx.store.add_client(&gamma, t0()).await;
    assert!(matches!(public, Err(AtlasStoreError::PublicDomain(ref d)) if d == "gmail.com"), "{public:?}");
    // Refused clients left nothing behind (Beta's first address included).
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_clients").await, 1);
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_client_addresses").await, 2);

    let delta = NewClient {
        name: "  Delta ".into(),
        emails: vec![addr("delta.boss@gmail.com")],
        mrr: None,
        status: Some("prospect".into()),
        ..NewClient::default()
    };
    let delta_id = fx.store.add_client(&delta, t0()).await.unwrap();
    let names: Vec<String> = fx.store.clients().await.unwrap().into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["Acme", "Delta"]);
    let delta = fx.store.client(delta_id).await.unwrap().unwrap();
    assert_eq!((delta.mrr, delta.status.as_str(), delta.is_paying()), (None, "prospect", false));

    let who = |s: &'static str| {
        let store = fx.store.clone();
        async move { store.client_for(&EmailAddress::parse(s).unwrap()).await.unwrap().map(|c| c.id) }
    };
    assert_eq!(who("jean@acme.fr").await, Some(acme_id), "exact address");
    assert_eq!(who("paul@ACME.fr").await, Some(acme_id), "by domain");
    assert_eq!(who("paul@sub.acme.fr").await, None);
    assert_eq!(who("delta.boss@gmail.com").await, Some(delta_id), "an exact public address");
    assert_eq!(who("someone@gmail.com").await, None, "never by a public domain");
    assert!(fx.store.client(delta_id + 10).await.unwrap().is_none());
}

async fn chantiers_are_listed_per_client(fx: Fx) {
    let acme = fx.store.add_client(&NewClient { name: "Acme".into(), ..NewClient::default() }, t0()).await.unwrap();
    let other = fx.store.add_client(&NewClient { name: "Other".into(), ..NewClient::default() }, t0()).await.unwrap();
    let refonte = fx.store.add_chantier("Refonte", Some(acme), t0()).await.unwrap();
    let interne = fx.store.add_chantier("Interne", None, t0()).await.unwrap();
    let seo = fx.store.add_chantier("SEO", Some(acme), t0()).await.unwrap();
    let closed = fx.store.add_chantier("Fini", Some(acme), t0()).await.unwrap();
    fx.exec(&format!("UPDATE atlas_chantiers SET status = 'ferme' WHERE id = {closed}")).await;
    assert_eq!(
        fx.store.open_chantiers(Some(acme)).await.unwrap(),
        [(refonte, "Refonte".to_string()), (seo, "SEO".to_string())]
    );
    assert_eq!(fx.store.open_chantiers(None).await.unwrap(), [(interne, "Interne".to_string())]);
    assert!(fx.store.open_chantiers(Some(other)).await.unwrap().is_empty());
}

async fn list_filters_by_state(fx: Fx) {
    let a = insert(&fx, "l1@x", t0()).await;
    let b = classified(&fx, "l2@x", Intent::Question, t0()).await;
    let c = insert(&fx, "l3@x", t0()).await;
    fx.store.record_scan(c, &clean(), t0()).await.unwrap();
    let ids = |rows: Vec<arthur_atlas::store::EmailRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(fx.store.list(None).await.unwrap()), [a, b, c]);
    assert_eq!(ids(fx.store.list(Some(EmailState::Scanned)).await.unwrap()), [c]);
    assert_eq!(ids(fx.store.list(Some(EmailState::Classified)).await.unwrap()), [b]);
    assert!(fx.store.list(Some(EmailState::Actioned)).await.unwrap().is_empty());
}

async fn report_data_counts_the_window(fx: Fx) {
    let since = t0() - chrono::Duration::days(1);
    let acme = fx.store.add_client(&NewClient { name: "Acme".into(), ..NewClient::default() }, t0()).await.unwrap();
    let seeds = [
        (Intent::Run, Complexity::Plan, 0.9, Some(acme)),
        (Intent::Question, Complexity::Leger, 0.8, None),
        (Intent::Noise, Complexity::Leger, 0.3, None),
        (Intent::Negociation, Complexity::Leger, 0.7, Some(acme)),
        (Intent::Conseil, Complexity::Leger, 0.6, None),
    ];
    let mut ids = Vec::new();
    for (n, (intent, complexity, confidence, client)) in seeds.into_iter().enumerate() {
        let id = insert(&fx, &format!("rep{n}@x"), t0()).await;
        fx.store.record_scan(id, &clean(), t0()).await.unwrap();
        fx.store.record_classification(id, &verdict(intent, complexity, confidence, client), t0()).await.unwrap();
        ids.push(id);
    }
    assert_eq!(fx.store.cancel_item(ids[4], t0()).await.unwrap().map(|(k, _)| k), Some("conseil"));
    // Before the window: counted nowhere.
    let old = t0() - chrono::Duration::days(2);
    let id = insert(&fx, "old@x", old).await;
    fx.store.record_scan(id, &clean(), old).await.unwrap();
    fx.store.record_classification(id, &verdict(Intent::Run, Complexity::Leger, 0.5, None), old).await.unwrap();
    // Not classified: not counted as classified.
    insert(&fx, "fresh@x", t0()).await;

    let data = fx.store.report_data(since).await.unwrap();
    assert_eq!(sorted(&data.classified), sorted(&seeds));
    let counts: Vec<(&str, i64)> = data.audit_counts.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        counts,
        [("cancelled_by_founder", 1), ("classified", 5), ("materialised", 4), ("poll_inserted", 6), ("scanned", 5)]
    );
    let items = [
        (Intent::Run, Some(Complexity::Plan), "ouvert".to_string(), false),
        (Intent::Question, None, "ouvert".to_string(), true),
        (Intent::Negociation, None, "ouvert".to_string(), false),
        (Intent::Conseil, None, "annule".to_string(), true),
    ];
    assert_eq!(sorted(&data.items), sorted(&items));
    let all = fx.store.report_data(old - minutes(1)).await.unwrap();
    assert_eq!((all.classified.len(), all.items.len(), all.audit_counts["poll_inserted"]), (6, 5, 7));
}

async fn launch_candidates_follow_the_rules(fx: Fx) {
    let quiet_since = t0() - minutes(60);
    let run = classified(&fx, "c1@x", Intent::Run, t0()).await;
    let noise = classified(&fx, "c2@x", Intent::Noise, t0()).await;
    let recent = classified(&fx, "c3@x", Intent::Question, t0()).await;
    fx.store.audit(Some(recent), "spawn_started", json!({}), t0() - minutes(10)).await.unwrap();
    let long_ago = classified(&fx, "c4@x", Intent::Conseil, t0()).await;
    fx.store.audit(Some(long_ago), "spawn_failed", json!({}), t0() - minutes(120)).await.unwrap();
    let scanned = insert(&fx, "c5@x", t0()).await;
    fx.store.record_scan(scanned, &clean(), t0()).await.unwrap();
    let nego = classified(&fx, "c6@x", Intent::Negociation, t0()).await;
    let skipped = classified(&fx, "c7@x", Intent::Run, t0()).await;
    fx.store.audit(Some(skipped), "spawn_skipped_lock_held", json!({}), t0() - minutes(1)).await.unwrap();
    let done = classified(&fx, "c8@x", Intent::Run, t0()).await;
    fx.store.audit(Some(done), "spawn_action_done", json!({}), quiet_since).await.unwrap();

    let ids = |rows: Vec<arthur_atlas::store::EmailRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(fx.store.launch_candidates(quiet_since, t0(), 10).await.unwrap()), [run, long_ago, nego, skipped]);
    assert_eq!(ids(fx.store.launch_candidates(quiet_since, t0(), 2).await.unwrap()), [run, long_ago]);
    let rows = fx.store.launch_candidates(quiet_since, t0(), 1).await.unwrap();
    assert_eq!((rows[0].intent, rows[0].subject.as_str()), (Some(Intent::Run), "Sujet c1@x"));
    // A later window start lets the recent one back in.
    let later = t0() - minutes(5);
    assert_eq!(
        ids(fx.store.launch_candidates(later, t0(), 10).await.unwrap()),
        [run, recent, long_ago, nego, skipped, done]
    );

    for (id, expected) in
        [(run, true), (noise, false), (recent, false), (long_ago, true), (scanned, false), (done, false)]
    {
        assert_eq!(fx.store.still_candidate(id, quiet_since, t0()).await.unwrap(), expected, "message {id}");
    }
    assert!(!fx.store.still_candidate(run + 100, quiet_since, t0()).await.unwrap());
    fx.store
        .transition(run, EmailState::Classified, EmailState::Spawned, "spawn_started", json!({}), t0())
        .await
        .unwrap();
    assert!(!fx.store.still_candidate(run, quiet_since, t0()).await.unwrap());
    assert!(!ids(fx.store.launch_candidates(quiet_since, t0(), 10).await.unwrap()).contains(&run));

    // Parked (the API was unavailable): not before its time, then at once, quiet window or not.
    let at = t0() + minutes(5);
    assert!(fx.store.park_launch(run, at, json!({"reason": "api_unavailable"}), t0()).await.unwrap());
    assert!(!fx.store.park_launch(run, at, json!({}), t0()).await.unwrap(), "only a spawned row parks");
    let row = fx.store.email(run).await.unwrap().unwrap();
    assert_eq!((row.status, row.attempts, row.retry_at), (EmailState::Classified, 1, Some(at)));
    assert!(!fx.store.still_candidate(run, quiet_since, t0() + minutes(4)).await.unwrap());
    assert!(fx.store.still_candidate(run, quiet_since, at).await.unwrap(), "the quiet window does not apply");
    assert!(ids(fx.store.launch_candidates(quiet_since, at, 10).await.unwrap()).contains(&run));
    // A timed-out launch goes back under the quiet window.
    fx.store
        .transition(run, EmailState::Classified, EmailState::Spawned, "spawn_started", json!({}), at)
        .await
        .unwrap();
    assert!(fx.store.schedule_launch_retry(run, json!({}), at).await.unwrap());
    assert_eq!(fx.store.email(run).await.unwrap().unwrap().retry_at, None);
    assert!(!fx.store.still_candidate(run, at - minutes(60), at).await.unwrap());
}

async fn leases_exclude_until_released(fx: Fx) {
    let id = classified(&fx, "lease@x", Intent::Run, t0()).await;
    let other = classified(&fx, "lease2@x", Intent::Run, t0()).await;
    let ttl = minutes(30);
    assert!(fx.store.try_lease(id, "worker-a", t0(), ttl).await.unwrap());
    assert!(!fx.store.try_lease(id, "worker-a", t0(), ttl).await.unwrap(), "held: refused, even to its holder");
    assert!(!fx.store.try_lease(id, "worker-b", t0() + minutes(1), ttl).await.unwrap());
    assert!(fx.store.try_lease(other, "worker-b", t0(), ttl).await.unwrap(), "one lease per message");
    assert!(fx.store.renew_lease(id, "worker-a", t0() + minutes(1), ttl).await.unwrap());
    assert!(!fx.store.renew_lease(id, "worker-b", t0() + minutes(1), ttl).await.unwrap(), "not the holder");
    assert_eq!(
        fx.scalar(&format!(
            "SELECT COUNT(*) FROM atlas_leases WHERE email_id = {id} AND expires_at = '2026-03-02T09:31:00.000Z'"
        ))
        .await,
        1
    );
    fx.store.release_lease(id, "worker-a").await.unwrap();
    fx.store.release_lease(id, "worker-a").await.unwrap();
    assert!(!fx.store.renew_lease(id, "worker-a", t0() + minutes(2), ttl).await.unwrap(), "released");
    assert_eq!(fx.scalar(&format!("SELECT COUNT(*) FROM atlas_leases WHERE email_id = {id}")).await, 0);
    assert!(fx.store.try_lease(id, "worker-b", t0() + minutes(2), ttl).await.unwrap());
    assert_eq!(
        fx.scalar(&format!("SELECT COUNT(*) FROM atlas_leases WHERE email_id = {id} AND holder = 'worker-b'")).await,
        1
    );
    fx.store.release_lease(id, "worker-b").await.unwrap();
    fx.store.release_lease(other, "worker-b").await.unwrap();
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_leases").await, 0);
}

async fn old_leases_report_what_is_held_too_long(fx: Fx) {
    let a = classified(&fx, "old1@x", Intent::Run, t0()).await;
    let b = classified(&fx, "old2@x", Intent::Run, t0()).await;
    assert!(fx.store.try_lease(b, "worker-b", t0() + minutes(5), minutes(30)).await.unwrap());
    assert!(fx.store.try_lease(a, "worker-a", t0(), minutes(30)).await.unwrap());
    assert!(fx.store.old_leases(t0()).await.unwrap().is_empty());
    assert_eq!(fx.store.old_leases(t0() + minutes(1)).await.unwrap(), [(a, "worker-a".to_string(), t0())]);
    assert_eq!(
        fx.store.old_leases(t0() + minutes(10)).await.unwrap(),
        [(a, "worker-a".to_string(), t0()), (b, "worker-b".to_string(), t0() + minutes(5))]
    );
    fx.store.release_lease(a, "worker-a").await.unwrap();
    assert_eq!(
        fx.store.old_leases(t0() + minutes(10)).await.unwrap(),
        [(b, "worker-b".to_string(), t0() + minutes(5))]
    );
    fx.store.release_lease(b, "worker-b").await.unwrap();
}

async fn reclaim_interrupted_spares_live_leases(fx: Fx) {
    let dead = spawned(&fx, "dead@x", t0()).await;
    let live = spawned(&fx, "live@x", t0()).await;
    let waiting = classified(&fx, "wait@x", Intent::Run, t0()).await;
    let dead_launch = fx.store.start_launch(&launch(dead), t0()).await.unwrap();
    let live_launch = fx.store.start_launch(&launch(live), t0()).await.unwrap();
    assert!(fx.store.try_lease(live, "worker-live", t0(), minutes(30)).await.unwrap());

    let now = t0() + minutes(1);
    assert_eq!(fx.store.reclaim_interrupted(now).await.unwrap(), [dead]);
    let row = fx.store.email(dead).await.unwrap().unwrap();
    assert_eq!((row.status, row.updated_at), (EmailState::Classified, now));
    assert_eq!(events(&fx, dead).await.last().map(String::as_str), Some("launch_interrupted"));
    let launches = fx.store.launches(dead).await.unwrap();
    assert_eq!((launches[0].id, launches[0].end.status.as_str()), (dead_launch, "interrupted"));
    assert_eq!(launches[0].finished_at, Some(now));
    assert_eq!(status(&fx, live).await, EmailState::Spawned);
    assert_eq!(fx.store.launches(live).await.unwrap()[0].end.status, "running");
    assert!(!events(&fx, live).await.contains(&"launch_interrupted".to_string()));
    assert_eq!(status(&fx, waiting).await, EmailState::Classified);
    assert!(fx.store.reclaim_interrupted(now).await.unwrap().is_empty(), "a replay is a no-op");

    // Its launcher gone (the lease released without leaving `spawned`): reclaimed next time.
    fx.store.release_lease(live, "worker-live").await.unwrap();
    assert_eq!(fx.store.reclaim_interrupted(now + minutes(1)).await.unwrap(), [live]);
    let launches = fx.store.launches(live).await.unwrap();
    assert_eq!((launches[0].id, launches[0].end.status.as_str()), (live_launch, "interrupted"));
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_audits WHERE event = 'launch_interrupted'").await, 2);
}

async fn transition_is_guarded(fx: Fx) {
    let id = classified(&fx, "tr@x", Intent::Run, t0()).await;
    let before = fx.store.audits(id).await.unwrap().len();
    let wrong = fx
        .store
        .transition(id, EmailState::Spawned, EmailState::Actioned, "actioned", json!({}), t0() + minutes(3))
        .await
        .unwrap();
    assert!(!wrong);
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.status, row.updated_at), (EmailState::Classified, t0()));
    assert_eq!(fx.store.audits(id).await.unwrap().len(), before);

    let now = t0() + minutes(4);
    assert!(fx
        .store
        .transition(id, EmailState::Classified, EmailState::Spawned, "spawn_started", json!({"n": 1}), now)
        .await
        .unwrap());
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.status, row.updated_at), (EmailState::Spawned, now));
    let last = fx.store.audits(id).await.unwrap().pop().unwrap();
    assert_eq!((last.event.as_str(), last.detail, last.created_at), ("spawn_started", json!({"n": 1}), now));
    assert!(!fx
        .store
        .transition(id + 99, EmailState::Classified, EmailState::Spawned, "x", json!({}), now)
        .await
        .unwrap());
}

async fn correct_intent_is_audited(fx: Fx) {
    let id = insert(&fx, "ci@x", t0()).await;
    fx.store.record_scan(id, &clean(), t0()).await.unwrap();
    fx.store.record_classification(id, &verdict(Intent::Run, Complexity::Plan, 0.9, None), t0()).await.unwrap();
    fx.store.correct_intent(id, Intent::Question, Complexity::Leger, t0() + minutes(7)).await.unwrap();
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!(
        (row.intent, row.complexity, row.updated_at),
        (Some(Intent::Question), Some(Complexity::Leger), t0() + minutes(7))
    );
    let last = fx.store.audits(id).await.unwrap().pop().unwrap();
    assert_eq!(last.event, "intent_downgraded");
    assert_eq!(
        last.detail,
        json!({"from": {"intent": "run", "complexity": "plan"}, "to": {"intent": "question", "complexity": "leger"}})
    );
    let missing = fx.store.correct_intent(id + 40, Intent::Noise, Complexity::Leger, t0()).await;
    assert!(matches!(missing, Err(AtlasStoreError::Db(sqlx::Error::RowNotFound))), "{missing:?}");
}

async fn launches_and_their_journal_round_trip(fx: Fx) {
    let id = spawned(&fx, "ln@x", t0()).await;
    let first = fx.store.start_launch(&launch(id), t0()).await.unwrap();
    let mut second_launch = launch(id);
    second_launch.iteration = 2;
    second_launch.prompt_kind = "iteration";
    second_launch.branch = Some("atlas/ln".into());
    second_launch.fork_commit = None;
    second_launch.attempt = 2;
    second_launch.session_mode = "resumed";
    let second = fx.store.start_launch(&second_launch, t0() + minutes(1)).await.unwrap();

    let rows = fx.store.launches(id).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [first, second]);
    let r = &rows[0];
    assert_eq!((r.iteration, r.prompt_kind.as_str(), r.max_turns, r.workspace.as_str()), (1, "run", 40, "/tmp/ws"));
    assert_eq!((r.branch.clone(), r.started_at, r.finished_at), (None, t0(), None));
    assert_eq!((r.end.status.as_str(), r.end.exit_code, r.end.cost_usd, r.end.events), ("running", None, None, 0));
    assert_eq!((rows[1].iteration, rows[1].branch.as_deref()), (2, Some("atlas/ln")));
    assert_eq!((r.attempt, r.session_mode.as_deref(), r.fork_commit.as_deref()), (1, Some("saved"), Some("abc123")));
    assert_eq!((rows[1].attempt, rows[1].session_mode.as_deref()), (2, Some("resumed")));

    let end = LaunchEnd {
        status: "ok".into(),
        exit_code: Some(0),
        killed: None,
        session_id: Some("sess-1".into()),
        cost_usd: Some(0.123_456_789),
        num_turns: Some(7),
        duration_ms: Some(123_456_789_012),
        events: 253,
        redactions: 2,
        contract: Some(r#"{"done": true}"#.into()),
    };
    fx.store.finish_launch(first, &end, t0() + minutes(9)).await.unwrap();
    let killed = LaunchEnd {
        status: "hard_timeout".into(),
        exit_code: Some(-9),
        killed: Some("idle".into()),
        ..Default::default()
    };
    fx.store.finish_launch(second, &killed, t0() + minutes(10)).await.unwrap();
    let rows = fx.store.launches(id).await.unwrap();
    let e = &rows[0].end;
    assert_eq!(
        (e.status.as_str(), e.exit_code, e.killed.as_deref(), e.session_id.as_deref()),
        ("ok", Some(0), None, Some("sess-1"))
    );
    assert_eq!((e.cost_usd, e.num_turns, e.duration_ms), (Some(0.123_456_789), Some(7), Some(123_456_789_012)));
    assert_eq!((e.events, e.redactions, e.contract.as_deref()), (253, 2, Some(r#"{"done": true}"#)));
    assert_eq!(rows[0].finished_at, Some(t0() + minutes(9)));
    let k = &rows[1].end;
    assert_eq!(
        (k.status.as_str(), k.exit_code, k.killed.as_deref(), k.cost_usd),
        ("hard_timeout", Some(-9), Some("idle"), None)
    );

    let journal: Vec<JournalEvent> = (1..=253)
        .map(|seq| JournalEvent {
            seq,
            kind: if seq % 2 == 0 { "assistant".into() } else { "user".into() },
            subtype: (seq % 3 == 0).then(|| "tool_use".to_string()),
            tool_name: (seq % 5 == 0).then(|| "Bash".to_string()),
            payload: format!(r#"{{"seq": {seq}, "text": "é\u0000"}}"#),
        })
        .collect();
    fx.store.append_events(first, &journal[..200], t0()).await.unwrap();
    // Overlapping replay: the events already written are kept as they were.
    let mut replay = journal[150..].to_vec();
    replay[0].payload = "changed".into();
    fx.store.append_events(first, &replay, t0()).await.unwrap();
    fx.store.append_events(first, &[], t0()).await.unwrap();
    assert_eq!(fx.store.launch_events(first).await.unwrap(), journal);
    assert!(fx.store.launch_events(second).await.unwrap().is_empty());
}

async fn drafts_are_kept_in_order(fx: Fx) {
    let id = classified(&fx, "dr@x", Intent::Question, t0()).await;
    let a = fx.store.add_draft(id, "Bonjour,\nvoici…", "mistral", "mistral-large", t0()).await.unwrap();
    let b = fx.store.add_draft(id, "Second jet", "anthropic", "claude", t0() + minutes(1)).await.unwrap();
    assert_eq!(
        fx.store.drafts(id).await.unwrap(),
        [
            (a, "Bonjour,\nvoici…".to_string(), "mistral".to_string(), "mistral-large".to_string(), t0()),
            (b, "Second jet".to_string(), "anthropic".to_string(), "claude".to_string(), t0() + minutes(1)),
        ]
    );
    let audits = fx.store.audits(id).await.unwrap();
    let written: Vec<_> = audits.iter().filter(|a| a.event == "draft_written").map(|a| a.detail.clone()).collect();
    assert_eq!(written[1], json!({"draft_id": b, "provider": "anthropic", "model": "claude"}));
    assert!(fx.store.drafts(id + 1).await.unwrap().is_empty());
}

async fn cancel_item_marks_what_was_materialised(fx: Fx) {
    let run = classified(&fx, "cx1@x", Intent::Run, t0()).await;
    let noise = classified(&fx, "cx2@x", Intent::Noise, t0()).await;
    let fresh = insert(&fx, "cx3@x", t0()).await;
    let item = fx.store.email(run).await.unwrap().unwrap().materialised.unwrap();
    assert_eq!(fx.store.cancel_item(run, t0() + minutes(2)).await.unwrap(), Some(item));
    assert_eq!(item.0, "run");
    assert_eq!(
        fx.scalar(&format!("SELECT COUNT(*) FROM atlas_runs WHERE id = {} AND status = 'annule'", item.1)).await,
        1
    );
    let last = fx.store.audits(run).await.unwrap().pop().unwrap();
    assert_eq!((last.event.as_str(), last.detail), ("cancelled_by_founder", json!({"kind": "run", "id": item.1})));
    assert_eq!(fx.store.cancel_item(noise, t0()).await.unwrap(), None);
    assert_eq!(fx.store.cancel_item(fresh, t0()).await.unwrap(), None);
    assert_eq!(fx.store.cancel_item(fresh + 100, t0()).await.unwrap(), None);
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_audits WHERE event = 'cancelled_by_founder'").await, 1);
}

// ---- the backends' own lease semantics ----

/// SQLite: a lease is a row with an expiry; an expired one is taken over, and its `spawned`
/// message reclaimed.
async fn sqlite_an_expired_lease_is_taken_over(fx: Fx) {
    let id = spawned(&fx, "exp@x", t0()).await;
    assert!(fx.store.try_lease(id, "worker-a", t0(), minutes(30)).await.unwrap());
    assert!(fx.store.reclaim_interrupted(t0() + minutes(29)).await.unwrap().is_empty());
    assert!(!fx.store.try_lease(id, "worker-b", t0() + minutes(29), minutes(30)).await.unwrap());
    assert_eq!(fx.store.reclaim_interrupted(t0() + minutes(31)).await.unwrap(), [id]);
    assert!(fx.store.try_lease(id, "worker-b", t0() + minutes(31), minutes(30)).await.unwrap());
}

/// PostgreSQL: the lock is the truth. It does not expire while its connection lives, and a
/// lease row without a lock (its worker died) is reclaimed at once, whatever its expiry.
async fn postgres_the_lock_not_the_row_decides(fx: Fx) {
    let held = spawned(&fx, "held@x", t0()).await;
    let orphan = spawned(&fx, "orphan@x", t0()).await;
    assert!(fx.store.try_lease(held, "worker-a", t0(), minutes(30)).await.unwrap());
    let far = t0() + chrono::Duration::days(2);
    assert!(!fx.store.try_lease(held, "worker-b", far, minutes(30)).await.unwrap(), "a lock does not expire");
    fx.exec(&format!(
        "INSERT INTO atlas_leases (email_id, holder, acquired_at, expires_at)
         VALUES ({orphan}, 'dead-worker', '2026-03-02T09:00:00.000Z', '2099-01-01T00:00:00.000Z')"
    ))
    .await;
    assert!(fx.store.old_leases(far).await.unwrap().iter().all(|(id, _, _)| *id != orphan), "no lock, not reported");
    assert_eq!(fx.store.reclaim_interrupted(far).await.unwrap(), [orphan]);
    assert_eq!(fx.scalar(&format!("SELECT COUNT(*) FROM atlas_leases WHERE email_id = {orphan}")).await, 0);
    assert_eq!(status(&fx, held).await, EmailState::Spawned);
    // A stale row does not stop a new lock either.
    fx.exec(&format!(
        "INSERT INTO atlas_leases (email_id, holder, acquired_at, expires_at)
         VALUES ({orphan}, 'dead-worker', '2026-03-02T09:00:00.000Z', '2099-01-01T00:00:00.000Z')"
    ))
    .await;
    assert!(fx.store.try_lease(orphan, "worker-b", far, minutes(30)).await.unwrap());
    assert_eq!(
        fx.store.old_leases(far + minutes(1)).await.unwrap(),
        [(held, "worker-a".to_string(), t0()), (orphan, "worker-b".to_string(), far)]
    );
    fx.store.release_lease(held, "worker-a").await.unwrap();
    fx.store.release_lease(orphan, "worker-b").await.unwrap();
}

// ---- PostgreSQL: several workers on one database ----

/// Launch locks of this test's database as pg_locks shows them: (email id, pid, application name).
async fn launch_locks(pool: &PgPool) -> Vec<(i64, i32, String)> {
    sqlx::query_as(
        "SELECT l.objid::bigint, l.pid, COALESCE(a.application_name, '') FROM pg_locks l
         LEFT JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.classid = $1::oid AND l.objsubid = 2 AND l.granted
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
         ORDER BY 1",
    )
    .bind(i64::from(LAUNCH_LOCK_CLASS))
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn postgres_a_lease_is_refused_to_another_worker(fx: Fx) {
    let (pool, _) = fx.pg();
    let id = classified(&fx, "two@x", Intent::Run, t0()).await;
    let b = fx.second_pg_store().await;
    assert!(fx.store.try_lease(id, "host-a:100", t0(), minutes(30)).await.unwrap());
    let locks = launch_locks(pool).await;
    assert_eq!(locks.len(), 1);
    assert_eq!((locks[0].0, locks[0].2.as_str()), (id, "host-a:100"), "on a connection named after its holder");
    assert!(!b.try_lease(id, "host-b:200", t0(), minutes(30)).await.unwrap());
    assert!(!b.renew_lease(id, "host-b:200", t0(), minutes(30)).await.unwrap());
    b.release_lease(id, "host-b:200").await.unwrap();
    assert_eq!(launch_locks(pool).await.len(), 1, "B's release does not free A's lock");
    assert!(b.still_candidate(id, t0() - minutes(60), t0()).await.unwrap(), "the lock is not part of still_candidate");
    assert!(
        b.launch_candidates(t0() - minutes(60), t0(), 10).await.unwrap().is_empty(),
        "a locked message is no candidate"
    );

    fx.store.release_lease(id, "host-a:100").await.unwrap();
    assert!(launch_locks(pool).await.is_empty());
    assert_eq!(b.launch_candidates(t0() - minutes(60), t0(), 10).await.unwrap().len(), 1);
    assert!(b.try_lease(id, "host-b:200", t0(), minutes(30)).await.unwrap());
    assert!(!fx.store.try_lease(id, "host-a:100", t0(), minutes(30)).await.unwrap());
    assert_eq!(launch_locks(pool).await[0].2, "host-b:200");

    // Racing for the same message: exactly one worker wins.
    let race = classified(&fx, "race@x", Intent::Run, t0()).await;
    let b = Arc::new(b);
    let mut tasks = Vec::new();
    for n in 0..6 {
        let store: Arc<dyn AtlasStore> = if n % 2 == 0 { fx.store.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move { store.try_lease(race, &format!("racer-{n}"), t0(), minutes(30)).await }));
    }
    let mut won = 0;
    for t in tasks {
        won += t.await.unwrap().unwrap() as usize;
    }
    assert_eq!(won, 1);
    assert_eq!(launch_locks(pool).await.len(), 2);
}

async fn postgres_a_dead_workers_lock_is_freed_and_its_message_reclaimed(fx: Fx) {
    let (pool, _) = fx.pg();
    let id = spawned(&fx, "crash@x", t0()).await;
    let launch_id = fx.store.start_launch(&launch(id), t0()).await.unwrap();
    let b = fx.second_pg_store().await;
    let holder = "host-a:4242 (crash test)";
    assert!(fx.store.try_lease(id, holder, t0(), minutes(30)).await.unwrap());
    assert!(b.reclaim_interrupted(t0() + minutes(1)).await.unwrap().is_empty(), "its worker is alive");
    assert!(!b.try_lease(id, "host-b:1", t0(), minutes(30)).await.unwrap());

    // The worker's lock connection dies (as when its process is killed).
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = $1 AND datname = current_database()",
    )
    .bind(holder)
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(killed, [true]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !launch_locks(pool).await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "the server did not release the dead session's lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Long before the lease row's expiry.
    let now = t0() + minutes(2);
    assert_eq!(b.reclaim_interrupted(now).await.unwrap(), [id]);
    assert_eq!(status(&fx, id).await, EmailState::Classified);
    assert_eq!(events(&fx, id).await.last().map(String::as_str), Some("launch_interrupted"));
    let l = &fx.store.launches(id).await.unwrap()[0];
    assert_eq!((l.id, l.end.status.as_str(), l.finished_at), (launch_id, "interrupted", Some(now)));
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_leases").await, 0);

    assert!(b.try_lease(id, "host-b:1", now, minutes(30)).await.unwrap());
    // The dead worker's store notices its connection is gone, and its release touches nothing.
    assert!(!fx.store.renew_lease(id, holder, now, minutes(30)).await.unwrap());
    fx.store.release_lease(id, holder).await.unwrap();
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_leases WHERE holder = 'host-b:1'").await, 1);
    assert_eq!(launch_locks(pool).await.iter().map(|l| l.2.as_str()).collect::<Vec<_>>(), ["host-b:1"]);
    b.release_lease(id, "host-b:1").await.unwrap();
}

async fn postgres_old_leases_come_from_the_locks(fx: Fx) {
    let (pool, url) = fx.pg();
    let journaled = classified(&fx, "wd1@x", Intent::Run, t0()).await;
    let bare = classified(&fx, "wd2@x", Intent::Run, t0()).await;
    assert!(fx.store.try_lease(journaled, "host-a:7", t0(), minutes(30)).await.unwrap());
    // A lock without its journal row (a worker between its lock and its row): reported with
    // its session's name and start.
    let options: PgConnectOptions = url.parse::<PgConnectOptions>().unwrap().application_name("host-c:9");
    let mut bare_conn = PgConnection::connect_with(&options).await.unwrap();
    let before = Utc::now() - chrono::Duration::seconds(5);
    let got: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
        .bind(LAUNCH_LOCK_CLASS)
        .bind(bare as i32)
        .fetch_one(&mut bare_conn)
        .await
        .unwrap();
    assert!(got);
    // Another database of the cluster, same message id: no interference.
    let other_url = crate::harness::fresh_database().await;
    let other = PgAtlasStore::new(migrated_pg(&other_url).await);
    let other_id = classified_on(&other, "wd3@x").await;
    assert!(other.try_lease(other_id, "elsewhere", t0(), minutes(30)).await.unwrap());
    assert_eq!(other_id, journaled, "the same message id, in another database");

    let old = fx.store.old_leases(Utc::now() + minutes(60)).await.unwrap();
    assert_eq!(old.len(), 2, "{old:?}");
    assert_eq!(old[0], (journaled, "host-a:7".to_string(), t0()));
    assert_eq!((old[1].0, old[1].1.as_str()), (bare, "host-c:9"));
    assert!(old[1].2 > before && old[1].2 <= Utc::now(), "backend start {:?}", old[1].2);
    assert_eq!(fx.store.old_leases(t0() + minutes(1)).await.unwrap(), [(journaled, "host-a:7".to_string(), t0())]);
    assert!(!fx.store.try_lease(bare, "host-a:7", t0(), minutes(30)).await.unwrap());
    assert_eq!(launch_locks(pool).await.len(), 2);

    bare_conn.close().await.unwrap();
    assert!(fx.store.try_lease(bare, "host-a:7", t0(), minutes(30)).await.unwrap());
    other.release_lease(other_id, "elsewhere").await.unwrap();
}

async fn classified_on(store: &PgAtlasStore, key: &str) -> i64 {
    let Inserted::New(id) = store.insert_message(&message(key), t0()).await.unwrap() else { panic!("new") };
    store.record_scan(id, &clean(), t0()).await.unwrap();
    store.record_classification(id, &verdict(Intent::Run, Complexity::Leger, 0.9, None), t0()).await.unwrap();
    id
}

async fn postgres_concurrent_claims_skip_locked_rows(fx: Fx) {
    let (_, url) = fx.pg();
    let quiet_since = t0() - minutes(60);
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(classified(&fx, &format!("sk{n}@x"), Intent::Run, t0()).await);
    }
    let b: Arc<dyn AtlasStore> = Arc::new(fx.second_pg_store().await);
    let a = fx.store.clone();
    let claim = |store: Arc<dyn AtlasStore>| async move {
        let rows = tokio::time::timeout(Duration::from_secs(5), store.launch_candidates(quiet_since, t0(), 10))
            .await
            .expect("SKIP LOCKED: never waits for another claim")
            .unwrap();
        rows.into_iter().map(|r| r.id).collect::<Vec<_>>()
    };

    // A third session holds the first two rows (an ongoing claim or write).
    let mut third = PgConnection::connect(url).await.unwrap();
    let mut held = third.begin().await.unwrap();
    let locked: Vec<i64> = sqlx::query_scalar("SELECT id FROM atlas_emails WHERE id = ANY($1) ORDER BY id FOR UPDATE")
        .bind(&ids[..2])
        .fetch_all(&mut *held)
        .await
        .unwrap();
    assert_eq!(locked, ids[..2]);
    // Two claims at once: neither returns a held row, none is lost (a row one of them skips
    // is one the other holds, and returns), and, when they overlap, they do not share a row.
    let (from_a, from_b) = tokio::join!(claim(a.clone()), claim(b.clone()));
    let mut union: Vec<i64> = from_a.iter().chain(&from_b).copied().collect();
    union.sort();
    union.dedup();
    assert_eq!(union, ids[2..], "A {from_a:?}, B {from_b:?}");
    assert_eq!(claim(b.clone()).await, ids[2..], "alone, a claim gets every free row");

    // Worker B in the middle of its claim transaction holds the next two: A gets the rest,
    // so the three sets are disjoint.
    let mut worker_b = PgConnection::connect(url).await.unwrap();
    let mut claim_b = worker_b.begin().await.unwrap();
    let b_claimed: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM atlas_emails WHERE status = 'classified' ORDER BY id LIMIT 2 FOR UPDATE SKIP LOCKED",
    )
    .fetch_all(&mut *claim_b)
    .await
    .unwrap();
    assert_eq!(b_claimed, ids[2..4]);
    assert_eq!(claim(a.clone()).await, ids[4..]);
    assert_eq!(claim(a.clone()).await.len(), 1);

    claim_b.commit().await.unwrap();
    held.commit().await.unwrap();
    assert_eq!(claim(a.clone()).await, ids);
    // The claim is committed before returning: nothing stays locked behind it.
    let mut probe = PgConnection::connect(url).await.unwrap();
    let mut tx = probe.begin().await.unwrap();
    let all: Vec<i64> = sqlx::query_scalar("SELECT id FROM atlas_emails ORDER BY id FOR UPDATE NOWAIT")
        .fetch_all(&mut *tx)
        .await
        .unwrap();
    assert_eq!(all, ids);
    tx.rollback().await.unwrap();
}

async fn postgres_writes_wait_for_the_previous_writer(fx: Fx) {
    let (_, url) = fx.pg();
    let id = classified(&fx, "wl@x", Intent::Run, t0()).await;
    let mut other = PgConnection::connect(url).await.unwrap();
    let mut writer = other.begin().await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(WRITE_LOCK_CLASS)
        .bind(WRITE_LOCK_KEY)
        .execute(&mut *writer)
        .await
        .unwrap();
    let store = fx.store.clone();
    let pending = tokio::spawn(async move {
        store.transition(id, EmailState::Classified, EmailState::Spawned, "spawn_started", json!({}), t0()).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!pending.is_finished(), "a write transaction waits for the writer ahead of it");
    // The writer ahead moves the row first; the waiting transition then sees it and is a no-op.
    sqlx::query("UPDATE atlas_emails SET status = 'failed' WHERE id = $1")
        .bind(id)
        .execute(&mut *writer)
        .await
        .unwrap();
    writer.commit().await.unwrap();
    assert!(!pending.await.unwrap().unwrap());
    assert_eq!(status(&fx, id).await, EmailState::Failed);
    assert!(!events(&fx, id).await.contains(&"spawn_started".to_string()));

    // Two workers inserting the same messages at once: each stored once.
    let b: Arc<dyn AtlasStore> = Arc::new(fx.second_pg_store().await);
    let mut tasks = Vec::new();
    for n in 0..10 {
        let store = if n % 2 == 0 { fx.store.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move { store.insert_message(&message(&format!("dup{}@x", n / 2)), t0()).await }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap().unwrap());
    }
    assert_eq!(results.iter().filter(|r| matches!(r, Inserted::New(_))).count(), 5);
    for pair in results.chunks(2) {
        let id = |r: &Inserted| match *r {
            Inserted::New(id) | Inserted::Duplicate(id) => id,
        };
        assert_eq!(id(&pair[0]), id(&pair[1]));
    }
}

// ---- instantiation ----

// ---- launch authority (issue 17) ----

async fn approval_is_a_guarded_decision(fx: Fx) {
    let t = t0();
    let id = classified(&fx, "held", Intent::Run, t).await;
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.dkim_detail.as_deref(), row.approved_at), (Some("pass"), None));
    // Only a held message can be approved or refused.
    assert!(!fx.store.approve_launch(id, json!({"by": "cli"}), t).await.unwrap());
    assert_eq!(fx.store.refuse_launch(id, json!({"by": "cli"}), t).await.unwrap(), None);
    assert!(fx
        .store
        .transition(
            id,
            EmailState::Classified,
            EmailState::AwaitingApproval,
            "launch_held_unverified_sender",
            json!({"reason": "unknown_sender"}),
            t
        )
        .await
        .unwrap());
    assert_eq!(status(&fx, id).await, EmailState::AwaitingApproval);
    assert!(
        fx.store.launch_candidates(t - minutes(60), t0(), 10).await.unwrap().is_empty(),
        "a held message is no candidate"
    );
    assert!(fx.store.approve_launch(id, json!({"by": "web"}), t + minutes(3)).await.unwrap());
    assert!(!fx.store.approve_launch(id, json!({"by": "web"}), t + minutes(3)).await.unwrap(), "once");
    let approvals = events(&fx, id).await.iter().filter(|e| *e == "launch_approved").count();
    assert_eq!(approvals, 1, "an approval that changed nothing is not in the journal");
    let row = fx.store.email(id).await.unwrap().unwrap();
    assert_eq!((row.status, row.approved_at), (EmailState::Classified, Some(t + minutes(3))));
    assert_eq!(fx.store.launch_candidates(t, t0(), 10).await.unwrap().len(), 1, "approved: a candidate again");
    assert!(events(&fx, id).await.contains(&"launch_approved".to_string()));

    let other = classified(&fx, "refused", Intent::Question, t).await;
    assert!(fx
        .store
        .transition(
            other,
            EmailState::Classified,
            EmailState::AwaitingApproval,
            "launch_held_unverified_sender",
            json!({}),
            t
        )
        .await
        .unwrap());
    let item = fx.store.refuse_launch(other, json!({"by": "cli"}), t).await.unwrap().unwrap();
    assert_eq!(item.map(|(kind, _)| kind), Some("question"));
    assert_eq!(status(&fx, other).await, EmailState::Cancelled);
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_questions WHERE status = 'annule'").await, 1);
    let ev = events(&fx, other).await;
    assert!(ev.contains(&"launch_refused".to_string()) && ev.contains(&"cancelled_by_founder".to_string()), "{ev:?}");
    assert_eq!(fx.store.refuse_launch(other, json!({}), t).await.unwrap(), None, "once");

    let counts = fx.store.state_counts().await.unwrap();
    assert_eq!(sorted(&counts), sorted(&[(EmailState::Cancelled, 1), (EmailState::Classified, 1)]));
}

async fn a_clients_launch_flag_is_off_by_default(fx: Fx) {
    let t = t0();
    let base = |name: &str, email: &str| NewClient {
        name: name.into(),
        emails: vec![EmailAddress::parse(email).unwrap()],
        ..Default::default()
    };
    let off = fx.store.add_client(&base("Off", "a@off.fr"), t).await.unwrap();
    let on = fx.store.add_client(&NewClient { auto_launch: true, ..base("On", "b@on.fr") }, t).await.unwrap();
    assert!(!fx.store.client(off).await.unwrap().unwrap().auto_launch);
    assert!(fx.store.client(on).await.unwrap().unwrap().auto_launch);
    assert!(fx.store.set_auto_launch(off, true, t).await.unwrap());
    assert!(fx.store.client_for(&EmailAddress::parse("a@off.fr").unwrap()).await.unwrap().unwrap().auto_launch);
    assert!(!fx.store.set_auto_launch(9999, true, t).await.unwrap());
}

async fn notices_go_out_once_and_failed_ones_are_retried(fx: Fx) {
    use arthur_atlas::store::NewNotice;
    let t = t0();
    let id = classified(&fx, "n", Intent::Run, t).await;
    let notice = NewNotice {
        email_id: Some(id),
        kind: "approval_request".into(),
        dedupe_key: format!("approval:{id}"),
        subject: "[Atlas] à approuver".into(),
        body: "Bonjour".into(),
    };
    let n = fx.store.claim_notice(&notice, t).await.unwrap().expect("first claim");
    assert_eq!(fx.store.claim_notice(&notice, t).await.unwrap(), None, "the key makes a second claim a no-op");
    // An attempt holds the notice: a second worker does not retry it inside the lease.
    assert!(fx.store.try_notice(n, t - minutes(5), t).await.unwrap());
    assert!(!fx.store.try_notice(n, t - minutes(5), t + minutes(1)).await.unwrap());
    fx.store.finish_notice(n, Some("connection refused"), t).await.unwrap();
    let unsent = fx.store.unsent_notices(10, 10).await.unwrap();
    assert_eq!(unsent.len(), 1);
    assert_eq!((unsent[0].attempts, unsent[0].last_error.as_deref()), (1, Some("connection refused")));
    assert_eq!(unsent[0].notice, notice);
    assert!(fx.store.try_notice(n, t + minutes(1), t + minutes(6)).await.unwrap(), "after the lease");
    fx.store.finish_notice(n, None, t + minutes(6)).await.unwrap();
    assert!(fx.store.unsent_notices(10, 10).await.unwrap().is_empty());
    assert!(!fx.store.try_notice(n, t + minutes(20), t + minutes(30)).await.unwrap(), "sent: never again");
    let all = fx.store.notices(Some(id)).await.unwrap();
    assert_eq!((all.len(), all[0].sent_at), (1, Some(t + minutes(6))));
    let ev = events(&fx, id).await;
    assert!(ev.contains(&"notice_failed".to_string()) && ev.contains(&"notice_sent".to_string()), "{ev:?}");
    // Too many attempts: no longer offered for a retry (kept, with its error).
    let other = NewNotice { dedupe_key: "lock:1".into(), email_id: None, ..notice };
    let o = fx.store.claim_notice(&other, t).await.unwrap().unwrap();
    for i in 0..3 {
        assert!(fx.store.try_notice(o, t + minutes(10 * i), t + minutes(10 * i + 6)).await.unwrap());
        fx.store.finish_notice(o, Some("down"), t).await.unwrap();
    }
    assert!(fx.store.unsent_notices(3, 10).await.unwrap().is_empty());
    assert_eq!(fx.store.unsent_notices(4, 10).await.unwrap().len(), 1);
}

/// The personas' data file and migration 0006 (which inserted their first version, once per
/// dialect) agree field for field, so the upsert at start changes nothing on a database
/// migrated before the file existed.
async fn the_seed_file_says_what_migration_0006_inserted(fx: Fx) {
    use arthur_atlas::persona;
    let (store, _dir) = fx.unseeded().await;
    let mut stored = store.active_agents().await.unwrap();
    let mut seeds = persona::seeds().unwrap();
    stored.sort_by(|a, b| a.codename.cmp(&b.codename));
    seeds.sort_by(|a, b| a.codename.cmp(&b.codename));
    assert_eq!(stored, seeds);
    assert_eq!(persona::seed(store.as_ref()).await.unwrap(), 0, "the upsert finds nothing to change");
}

/// At each start the seeded texts are restored and a missing seeded agent comes back, but an
/// agent the founder turned off stays off; a second start writes nothing.
async fn seeded_personas_are_upserted_by_codename_and_active_stays_the_founders(fx: Fx) {
    fx.exec("UPDATE atlas_agents SET role = 'Rôle modifié', prompt_domains = 'seo' WHERE codename = 'backend'").await;
    fx.exec("UPDATE atlas_agents SET active = 0 WHERE codename = 'redaction'").await;
    fx.exec("DELETE FROM atlas_agents WHERE codename = 'qa'").await;
    let store = fx.reopen().await;
    let backend = store.agent("backend").await.unwrap().unwrap();
    assert_eq!(backend.role, "Développeur backend");
    assert_eq!(backend.prompt_domains, ["backend", "api", "base-de-donnees"]);
    assert!(store.agent("qa").await.unwrap().unwrap().active, "the missing agent is back");
    assert!(!store.agent("redaction").await.unwrap().unwrap().active, "the founder's choice is kept");
    assert_eq!(fx.scalar("SELECT COUNT(*) FROM atlas_agents").await, 10);
    assert_eq!(arthur_atlas::persona::seed(store.as_ref()).await.unwrap(), 0, "idempotent");
}

/// A database filled before migration 0007 keeps every row and every reference through the
/// two rebuilds of atlas_emails (0007, 0008: SQLite cannot alter a CHECK in place).
async fn sqlite_the_state_table_rebuild_keeps_every_row_and_reference(_fx: Fx) {
    use sqlx::migrate::Migrator;
    let dir = tempfile::tempdir().unwrap();
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(dir.path().join("old.db"))
        .create_if_missing(true)
        .foreign_keys(true);
    let pool = sqlx::sqlite::SqlitePoolOptions::new().max_connections(1).connect_with(opts).await.unwrap();
    // The memory's and Atlas' migrations as one list, as they were applied before 0007.
    let mut all: Vec<_> = arthur_agents::memory::sqlite::MIGRATOR
        .iter()
        .chain(arthur_atlas::store::sqlite::MIGRATOR.iter())
        .cloned()
        .collect();
    all.sort_by_key(|m| m.version);
    let before: Vec<_> = all.iter().filter(|m| m.version <= 6).cloned().collect();
    let old = Migrator { migrations: std::borrow::Cow::Owned(before), ..Migrator::DEFAULT };
    old.run(&pool).await.unwrap();
    let store = SqliteAtlasStore::new(pool.clone());
    let t = t0();
    let mut ids = Vec::new();
    for key in ["a", "b", "c"] {
        let id = match store.insert_message(&message(key), t).await.unwrap() {
            Inserted::New(id) => id,
            other => panic!("{other:?}"),
        };
        ids.push(id);
    }
    // The rows as the old schema wrote them (the store of today writes columns it lacks).
    sqlx::query("UPDATE atlas_emails SET status = 'scanned', scan_verdict = 'clean'").execute(&pool).await.unwrap();
    sqlx::query(
        "UPDATE atlas_emails SET status = 'classified', intent = 'run', complexity = 'plan', confidence = 0.8 WHERE id = ?",
    )
    .bind(ids[0])
    .execute(&pool)
    .await
    .unwrap();
    let run: i64 = sqlx::query_scalar(
        "INSERT INTO atlas_runs (email_id, complexity, created_at) VALUES (?, 'plan', 't') RETURNING id",
    )
    .bind(ids[0])
    .fetch_one(&pool)
    .await
    .unwrap();
    sqlx::query("UPDATE atlas_emails SET run_id = ? WHERE id = ?").bind(run).bind(ids[0]).execute(&pool).await.unwrap();
    // Before 0008 a scanner outage parked a message as `blocked` with no verdict.
    sqlx::query("UPDATE atlas_emails SET status = 'blocked', scan_verdict = NULL WHERE id = ?")
        .bind(ids[1])
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("UPDATE atlas_emails SET status = 'blocked', scan_verdict = 'infected' WHERE id = ?")
        .bind(ids[2])
        .execute(&pool)
        .await
        .unwrap();
    let launch = sqlx::query_scalar::<_, i64>(
        "INSERT INTO atlas_launches (email_id, prompt_kind, workspace, started_at) VALUES (?, 'run', '/w', ?) RETURNING id",
    )
    .bind(ids[0])
    .bind(arthur_agents::time::to_db(t))
    .fetch_one(&pool)
    .await
    .unwrap();
    let count = |sql: &'static str| {
        let pool = pool.clone();
        async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await.unwrap() }
    };
    let rows_before =
        (count("SELECT COUNT(*) FROM atlas_emails").await, count("SELECT COUNT(*) FROM atlas_audits").await);
    arthur_agents::memory::sqlite::MIGRATOR.run(&pool).await.unwrap();
    arthur_atlas::store::sqlite::MIGRATOR.run(&pool).await.unwrap();
    assert_eq!(
        (count("SELECT COUNT(*) FROM atlas_emails").await, count("SELECT COUNT(*) FROM atlas_audits").await),
        rows_before
    );
    let violations: Vec<(String,)> =
        sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check").fetch_all(&pool).await.unwrap();
    assert!(violations.is_empty(), "{violations:?}");
    let row = store.email(ids[0]).await.unwrap().unwrap();
    assert_eq!(
        (row.status, row.intent, row.complexity),
        (EmailState::Classified, Some(Intent::Run), Some(Complexity::Plan))
    );
    assert_eq!(row.materialised.map(|(k, _)| k), Some("run"));
    let launched = &store.launches(ids[0]).await.unwrap()[0];
    assert_eq!((launched.id, launched.attempt, launched.session_mode.as_deref()), (launch, 1, None));
    // Scanner errors are no infection: parked by errors, retryable; the infected one stays blocked.
    assert_eq!(store.email(ids[1]).await.unwrap().unwrap().status, EmailState::ScanFailed);
    assert_eq!(store.email(ids[2]).await.unwrap().unwrap().status, EmailState::Blocked);
    assert_eq!(store.email(ids[0]).await.unwrap().unwrap().launch_retries, 0);
    // The new states are accepted, an unknown one still refused; references still enforced.
    assert!(store
        .transition(ids[0], EmailState::Classified, EmailState::AwaitingApproval, "x", json!({}), t)
        .await
        .unwrap());
    assert!(sqlx::query("UPDATE atlas_emails SET status = 'launched' WHERE id = 1").execute(&pool).await.is_err());
    assert!(sqlx::query("INSERT INTO atlas_audits (email_id, event, created_at) VALUES (999, 'x', 't')")
        .execute(&pool)
        .await
        .is_err());
    let index: i64 =
        count("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'atlas_emails_status'").await;
    assert_eq!(index, 1);
}

macro_rules! suite {
    (both: [$($t:ident),* $(,)?], sqlite: [$($s:ident),* $(,)?], postgres: [$($p:ident),* $(,)?] $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $t() {
                    super::$t(super::Fx::sqlite().await).await
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $s() {
                    super::$s(super::Fx::sqlite().await).await
                }
            )*
        }
        mod postgres {
            $(
                #[cfg_attr(not(feature = "system-tests"), ignore = "system tier: PostgreSQL (--features system-tests)")]
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $t() {
                    super::$t(super::Fx::postgres().await).await
                }
            )*
            $(
                #[cfg_attr(not(feature = "system-tests"), ignore = "system tier: PostgreSQL (--features system-tests)")]
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $p() {
                    super::$p(super::Fx::postgres().await).await
                }
            )*
        }
    };
}

suite! {
    both: [
        insert_message_stores_once_per_account_and_key,
        raw_round_trips_exact_bytes,
        audits_keep_their_order_detail_and_time,
        emails_in_pages_with_a_cursor,
        record_scan_moves_received_once,
        record_failure_backs_off_then_parks_after_the_window,
        retry_parked_requeues_errors_never_an_infection,
        a_timed_out_launch_is_requeued_with_its_count,
        record_classification_materialises_into_one_table_once,
        retry_failed_rescans_classify_failures,
        clients_refuse_duplicates_and_resolve_addresses,
        chantiers_are_listed_per_client,
        list_filters_by_state,
        report_data_counts_the_window,
        launch_candidates_follow_the_rules,
        leases_exclude_until_released,
        old_leases_report_what_is_held_too_long,
        reclaim_interrupted_spares_live_leases,
        transition_is_guarded,
        correct_intent_is_audited,
        launches_and_their_journal_round_trip,
        drafts_are_kept_in_order,
        cancel_item_marks_what_was_materialised,
        approval_is_a_guarded_decision,
        a_clients_launch_flag_is_off_by_default,
        notices_go_out_once_and_failed_ones_are_retried,
        the_seed_file_says_what_migration_0006_inserted,
        seeded_personas_are_upserted_by_codename_and_active_stays_the_founders,
    ],
    sqlite: [sqlite_an_expired_lease_is_taken_over, sqlite_the_state_table_rebuild_keeps_every_row_and_reference],
    postgres: [
        postgres_the_lock_not_the_row_decides,
        postgres_a_lease_is_refused_to_another_worker,
        postgres_a_dead_workers_lock_is_freed_and_its_message_reclaimed,
        postgres_old_leases_come_from_the_locks,
        postgres_concurrent_claims_skip_locked_rows,
        postgres_writes_wait_for_the_previous_writer,
    ],
}
