//! Groundwork of the PostgreSQL backend (issue 10), on a private PostgreSQL cluster per
//! test (`harness`): the PostgreSQL migrations — the memory's (`migrations/memory`) and
//! Atlas' (`migrations/atlas`), two migrators on one database — apply and re-apply,
//! give the same tables and columns as the SQLite schema, keep the SQLite schema's
//! invariants, and advisory locks behave as the launcher's lock needs.

use crate::harness;
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arthur_agents::memory::SqliteStore;
use harness::Postgres;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::{Connection, Row};

/// SQLite tables with no table of the same name on PostgreSQL, and what stands for them
/// there: an index of the given name on the given table (see migrations/memory/0001).
const PARITY_EXCEPTIONS: &[(&str, &str, &str)] = &[
    // FTS5 external-content table (and its shadow tables) → GIN index on the stored
    // tokens, to_tsvector('simple', coalesce(mots, '')).
    ("souvenirs_fts", "souvenirs", "souvenirs_mots"),
];

/// The migrator the stores run: the memory's (`migrations/memory`) or Atlas'
/// (`migrations/atlas`), in one backend's dialect; each ignores the other's versions.
fn migrator(part: &str, backend: &str) -> &'static Migrator {
    match (part, backend) {
        ("atlas", "postgres") => &arthur_atlas::store::postgres::MIGRATOR,
        ("atlas", _) => &arthur_atlas::store::sqlite::MIGRATOR,
        (_, "postgres") => &arthur_agents::memory::postgres::MIGRATOR,
        _ => &arthur_agents::memory::sqlite::MIGRATOR,
    }
}

/// A database as Arthur opens it: the memory's migrations, then Atlas'.
async fn migrated(pg: &Postgres, name: &str) -> PgPool {
    let url = pg.create_db(name).await;
    let pool = PgPoolOptions::new().max_connections(4).connect(&url).await.expect("connect");
    for part in ["memory", "atlas"] {
        migrator(part, "postgres").run(&pool).await.expect("migrate");
    }
    pool
}

#[tokio::test]
async fn harness_starts_in_parallel_and_stops_without_leaving_a_process() {
    let t0 = Instant::now();
    let (a, b, c) = tokio::join!(Postgres::start(), Postgres::start(), Postgres::start());
    eprintln!(
        "three clusters in parallel: {:?} (each: {:?}, {:?}, {:?})",
        t0.elapsed(),
        a.started_in,
        b.started_in,
        c.started_in
    );
    let ports: BTreeSet<String> = [&a, &b, &c].iter().map(|pg| pg.url("postgres")).collect();
    assert_eq!(ports.len(), 3, "three servers, three ports");
    for pg in [&a, &b, &c] {
        let mut conn = PgConnection::connect(&pg.url("postgres")).await.expect("connect");
        let version: String = sqlx::query_scalar("SHOW server_version").fetch_one(&mut conn).await.unwrap();
        assert!(!version.is_empty());
        conn.close().await.unwrap();
    }
    let pids = [a.pid(), b.pid(), c.pid()];
    assert!(pids.iter().all(|&p| harness::alive(p)));
    let t1 = Instant::now();
    drop((a, b, c));
    eprintln!("three clusters stopped in {:?}", t1.elapsed());
    for pid in pids {
        assert!(!harness::alive(pid), "postmaster {pid} still running after drop");
    }
}

#[tokio::test]
async fn migrations_apply_to_a_fresh_database_and_a_second_run_is_a_no_op() {
    let pg = Postgres::start().await;
    eprintln!("cluster started in {:?}", pg.started_in);
    let url = pg.create_db("arthur").await;
    let pool = PgPoolOptions::new().max_connections(2).connect(&url).await.unwrap();
    let names = |m: &Migrator| m.iter().map(|m| (m.version, m.description.to_string())).collect::<Vec<_>>();
    let mut versions = Vec::new();
    for (part, count) in [("memory", MEMORY_MIGRATIONS), ("atlas", ATLAS_MIGRATIONS)] {
        // Same versions and descriptions as the SQLite tree: the two stay in step.
        let pg = migrator(part, "postgres");
        let lite = migrator(part, "sqlite");
        assert_eq!(names(pg), names(lite), "{part}: the postgres and sqlite migrations differ");
        assert_eq!(pg.iter().count() as i64, count, "{part}");
        versions.extend(pg.iter().map(|m| m.version));
    }
    let distinct: BTreeSet<i64> = versions.iter().copied().collect();
    assert_eq!(distinct.len(), versions.len(), "a version number is used by the memory and by Atlas: {versions:?}");

    for part in ["memory", "atlas"] {
        migrator(part, "postgres").run(&pool).await.expect("first run");
    }
    let applied: Vec<(i64, bool)> = sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(applied, (1..=MIGRATIONS).map(|v| (v, true)).collect::<Vec<_>>());
    let agents: i64 = sqlx::query_scalar("SELECT count(*) FROM atlas_agents").fetch_one(&pool).await.unwrap();
    assert_eq!(agents, 10, "the seeded personas");

    let tables_before = table_count(&pool).await;
    for part in ["memory", "atlas"] {
        migrator(part, "postgres").run(&pool).await.expect("second run");
    }
    let again: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations").fetch_one(&pool).await.unwrap();
    assert_eq!(again, MIGRATIONS, "the second run applied nothing");
    assert_eq!(table_count(&pool).await, tables_before);
    let agents: i64 = sqlx::query_scalar("SELECT count(*) FROM atlas_agents").fetch_one(&pool).await.unwrap();
    assert_eq!(agents, 10, "the seed was not inserted twice");
    pool.close().await;
}

/// The memory's migrations (`migrations/memory`), Atlas' (`migrations/atlas`), and all of
/// them: versions 1 to 14 between the two.
const MEMORY_MIGRATIONS: i64 = 9;
const ATLAS_MIGRATIONS: i64 = 5;
const MIGRATIONS: i64 = MEMORY_MIGRATIONS + ATLAS_MIGRATIONS;

async fn table_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// One column: its name and whether it may hold NULL.
type Columns = Vec<(String, bool)>;

#[tokio::test]
async fn schema_parity_with_sqlite() {
    // SQLite: a fresh database through the real stores (their embedded migrators).
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_path(&dir.path().join("parity.db")).await.expect("sqlite store");
    let lite = store.pool();
    arthur_atlas::store::SqliteAtlasStore::open(lite.clone()).await.expect("sqlite Atlas store");
    let rows = sqlx::query(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations' ORDER BY name",
    )
    .fetch_all(lite)
    .await
    .unwrap();
    let all: Vec<(String, String)> = rows.iter().map(|r| (r.get("name"), r.get("sql"))).collect();
    let virtual_tables: BTreeSet<String> =
        all.iter().filter(|(_, sql)| sql.starts_with("CREATE VIRTUAL TABLE")).map(|(n, _)| n.clone()).collect();
    // FTS shadow tables: `<virtual table>_data`, `_idx`, `_docsize`, `_config`, `_content`.
    let shadow = |name: &str| virtual_tables.iter().any(|v| name.starts_with(&format!("{v}_")));
    let exceptions: BTreeSet<String> = PARITY_EXCEPTIONS.iter().map(|(t, _, _)| t.to_string()).collect();
    assert_eq!(virtual_tables, exceptions, "every SQLite virtual table needs a documented PostgreSQL stand-in");

    let mut sqlite_tables: Vec<(String, Columns)> = Vec::new();
    for (name, _) in all.iter().filter(|(n, _)| !virtual_tables.contains(n) && !shadow(n)) {
        let cols = sqlx::query("SELECT name, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid")
            .bind(name)
            .fetch_all(lite)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get::<String, _>("name"), r.get::<i64, _>("notnull") == 0 && r.get::<i64, _>("pk") == 0))
            .collect();
        sqlite_tables.push((name.clone(), cols));
    }
    store.close().await;
    assert!(sqlite_tables.len() >= 30, "read {} SQLite tables", sqlite_tables.len());

    // PostgreSQL: the same tables, columns in the same order, same nullability.
    let pg = Postgres::start().await;
    let pool = migrated(&pg, "parity").await;
    let pg_tables: BTreeSet<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations'",
    )
    .fetch_all(&pool)
    .await
    .unwrap()
    .into_iter()
    .collect();

    let mut differences = Vec::new();
    for (table, lite_cols) in &sqlite_tables {
        if !pg_tables.contains(table) {
            differences.push(format!("{table}: missing on PostgreSQL"));
            continue;
        }
        let pg_cols: Columns = sqlx::query(
            "SELECT column_name::text AS name, is_nullable::text = 'YES' AS nullable FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
        )
        .bind(table)
        .fetch_all(&pool)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get("name"), r.get("nullable")))
        .collect();
        let lite_names: Vec<&String> = lite_cols.iter().map(|(n, _)| n).collect();
        let pg_names: Vec<&String> = pg_cols.iter().map(|(n, _)| n).collect();
        let missing: Vec<_> = lite_names.iter().filter(|n| !pg_names.contains(n)).collect();
        let extra: Vec<_> = pg_names.iter().filter(|n| !lite_names.contains(n)).collect();
        for name in &missing {
            differences.push(format!("{table}.{name}: missing on PostgreSQL"));
        }
        for name in &extra {
            differences.push(format!("{table}.{name}: only on PostgreSQL"));
        }
        if missing.is_empty() && extra.is_empty() && lite_names != pg_names {
            differences.push(format!("{table}: column order differs: SQLite {lite_names:?}, PostgreSQL {pg_names:?}"));
        }
        if lite_names == pg_names {
            for ((name, lite_null), (_, pg_null)) in lite_cols.iter().zip(&pg_cols) {
                if lite_null != pg_null {
                    differences
                        .push(format!("{table}.{name}: nullable on SQLite = {lite_null}, on PostgreSQL = {pg_null}"));
                }
            }
        }
    }
    let lite_names: BTreeSet<&String> = sqlite_tables.iter().map(|(t, _)| t).collect();
    for table in pg_tables.iter().filter(|t| !lite_names.contains(t)) {
        differences.push(format!("{table}: only on PostgreSQL"));
    }
    for (vtab, table, index) in PARITY_EXCEPTIONS {
        let def: Option<String> = sqlx::query_scalar(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 AND indexname = $2",
        )
        .bind(table)
        .bind(index)
        .fetch_optional(&pool)
        .await
        .unwrap();
        match def {
            Some(def) if def.contains("gin") && def.contains("to_tsvector('simple'") && def.contains("mots") => {}
            other => differences.push(format!("{vtab}: expected GIN index {index} on {table}, found {other:?}")),
        }
    }
    assert!(differences.is_empty(), "schema differences SQLite → PostgreSQL:\n  {}", differences.join("\n  "));

    // The FTS stand-in answers a prefix of a folded token through the index's expression,
    // and the statistics follow the rows.
    sqlx::query(
        "INSERT INTO souvenirs (texte, created_at, mots, nb_mots) \
         VALUES ('La réunion de chantier est le mardi', $1, 'la reunion de chantier est le mardi', 7)",
    )
    .bind("2026-01-01T00:00:00.000Z")
    .execute(&pool)
    .await
    .unwrap();
    let found: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM souvenirs WHERE to_tsvector('simple', coalesce(mots, '')) @@ to_tsquery('simple', $1)",
    )
    .bind("'reun':*")
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(found, 1);
    let stats: (i64, i64) =
        sqlx::query_as("SELECT nb_souvenirs, nb_mots FROM souvenirs_stats").fetch_one(&pool).await.unwrap();
    assert_eq!(stats, (1, 7));
    pool.close().await;
}

/// Runs `sql`, which must fail with SQLSTATE `code` on `constraint` (when given).
async fn must_fail(pool: &PgPool, what: &str, sql: &str, code: &str, constraint: Option<&str>) {
    let err = match sqlx::raw_sql(sql).execute(pool).await {
        Ok(_) => panic!("{what}: accepted by PostgreSQL, must be refused\n{sql}"),
        Err(e) => e,
    };
    let db = err.as_database_error().unwrap_or_else(|| panic!("{what}: not a database error: {err}"));
    assert_eq!(db.code().as_deref(), Some(code), "{what}: {db}");
    if let Some(constraint) = constraint {
        assert_eq!(db.constraint(), Some(constraint), "{what}: {db}");
    }
}

async fn exec(pool: &PgPool, sql: &str) {
    sqlx::raw_sql(sql).execute(pool).await.unwrap_or_else(|e| panic!("{e}\n{sql}"));
}

const UNIQUE: &str = "23505";
const CHECK: &str = "23514";

#[tokio::test]
async fn invariants_carried_by_constraints_hold_on_postgres() {
    let pg = Postgres::start().await;
    let pool = migrated(&pg, "invariants").await;
    let t = "'2026-01-01T09:00:00.000Z'";

    // At most one running work session.
    exec(
        &pool,
        &format!("INSERT INTO projets (nom, nom_normalise, created_at, updated_at) VALUES ('A', 'a', {t}, {t})"),
    )
    .await;
    exec(&pool, &format!("INSERT INTO sessions_travail (projet_id, debut) VALUES (1, {t})")).await;
    must_fail(
        &pool,
        "a second running session",
        &format!("INSERT INTO sessions_travail (projet_id, debut) VALUES (1, {t})"),
        UNIQUE,
        Some("one_running_session"),
    )
    .await;

    // At most one open pause per session.
    exec(&pool, &format!("INSERT INTO pauses (session_id, debut, fin) VALUES (1, {t}, {t})")).await;
    exec(&pool, &format!("INSERT INTO pauses (session_id, debut) VALUES (1, {t})")).await;
    must_fail(
        &pool,
        "a second open pause",
        &format!("INSERT INTO pauses (session_id, debut) VALUES (1, {t})"),
        UNIQUE,
        Some("one_open_pause"),
    )
    .await;
    // Closing the session makes room for the next one (the index is partial).
    exec(&pool, "UPDATE pauses SET fin = '2026-01-01T10:00:00.000Z' WHERE fin IS NULL").await;
    exec(&pool, "UPDATE sessions_travail SET fin = '2026-01-01T10:00:00.000Z' WHERE id = 1").await;
    exec(&pool, &format!("INSERT INTO sessions_travail (projet_id, debut) VALUES (1, {t})")).await;
    must_fail(
        &pool,
        "a session ending before it starts",
        "UPDATE sessions_travail SET fin = '2025-12-31T23:59:59.999Z' WHERE fin IS NULL",
        CHECK,
        Some("sessions_travail_check"),
    )
    .await;

    // Atlas raw messages: unique on (account, message_key).
    let raw = |account: &str, key: &str| {
        format!(
            "INSERT INTO atlas_raw_messages (account, message_key, raw, size, received_at) \
             VALUES ('{account}', '{key}', '\\x0102'::bytea, 2, {t})"
        )
    };
    exec(&pool, &raw("atlas@example.org", "<m1@example.org>")).await;
    exec(&pool, &raw("other@example.org", "<m1@example.org>")).await;
    must_fail(
        &pool,
        "the same message twice on one account",
        &raw("atlas@example.org", "<m1@example.org>"),
        UNIQUE,
        Some("atlas_raw_messages_account_message_key_key"),
    )
    .await;

    // Ids come from the identity alone: an INSERT naming one is refused.
    must_fail(
        &pool,
        "an explicit id",
        &format!(
            "INSERT INTO atlas_raw_messages (id, account, message_key, raw, size, received_at) \
                  VALUES (99, 'a', 'k', '\\x00'::bytea, 1, {t})"
        ),
        "428C9",
        None,
    )
    .await;

    // One state row per raw message.
    let email = |raw: i64, status: &str| {
        format!(
            "INSERT INTO atlas_emails (raw_message_id, status, created_at, updated_at) \
             VALUES ({raw}, '{status}', {t}, {t})"
        )
    };
    exec(&pool, &email(1, "received")).await;
    must_fail(&pool, "a second state row", &email(1, "received"), UNIQUE, Some("atlas_emails_raw_message_id_key"))
        .await;

    // The CHECK on atlas_emails.status.
    must_fail(&pool, "an unknown status", &email(2, "launched"), CHECK, Some("atlas_emails_status_check")).await;
    must_fail(
        &pool,
        "a status updated to an unknown value",
        "UPDATE atlas_emails SET status = 'done' WHERE id = 1",
        CHECK,
        Some("atlas_emails_status_check"),
    )
    .await;
    // The states of the launch authority (issue 17) and of the retries (18) are accepted.
    for state in ["awaiting_approval", "cancelled", "scan_failed", "escalated"] {
        exec(&pool, &format!("UPDATE atlas_emails SET status = '{state}' WHERE id = 1")).await;
    }
    exec(&pool, "UPDATE atlas_emails SET status = 'classified' WHERE id = 1").await;
    // A notice to the founder goes out once per key; a client's launch flag is 0 or 1.
    let notice = format!(
        "INSERT INTO atlas_notices (email_id, kind, dedupe_key, subject, body, created_at) \
         VALUES (1, 'approval_request', 'approval:1', 's', 'b', {t})"
    );
    exec(&pool, &notice).await;
    must_fail(&pool, "a second notice with the same key", &notice, UNIQUE, Some("atlas_notices_dedupe_key_key")).await;
    must_fail(
        &pool,
        "a negative retry count",
        "UPDATE atlas_emails SET launch_retries = -1 WHERE id = 1",
        CHECK,
        Some("atlas_emails_launch_retries_check"),
    )
    .await;
    must_fail(
        &pool,
        "a launch flag that is not 0/1",
        &format!("INSERT INTO atlas_clients (name, auto_launch, created_at) VALUES ('X', 2, {t})"),
        CHECK,
        Some("atlas_clients_auto_launch_check"),
    )
    .await;

    // One materialised row per e-mail, in each of the four tables.
    for (table, extra_cols, extra_vals) in [
        ("atlas_runs", ", complexity", ", 'leger'"),
        ("atlas_questions", "", ""),
        ("atlas_negociations", "", ""),
        ("atlas_conseils", "", ""),
    ] {
        let insert = format!("INSERT INTO {table} (email_id{extra_cols}, created_at) VALUES (1{extra_vals}, {t})");
        exec(&pool, &insert).await;
        let constraint = format!("{table}_email_id_key");
        must_fail(&pool, &format!("a second row in {table}"), &insert, UNIQUE, Some(&constraint)).await;
    }

    // One orchestrator (the spec's Atlas is the one).
    let agent = |codename: &str, group: &str, orchestrator: i64| {
        format!(
            "INSERT INTO atlas_agents (codename, nickname, role, group_name, orchestrator, cognitive_frame, \
             job_mission, job_perimeter, job_key_checks) \
             VALUES ('{codename}', 'N', 'R', '{group}', {orchestrator}, 'f', 'm', 'p', 'k')"
        )
    };
    exec(&pool, &agent("second-director", "direction", 0)).await;
    must_fail(
        &pool,
        "a second orchestrator",
        &agent("other-centre", "direction", 1),
        UNIQUE,
        Some("atlas_agents_single_orchestrator"),
    )
    .await;
    must_fail(&pool, "an orchestrator outside direction", &agent("outsider", "execution", 1), CHECK, None).await;
    // The codename's GLOB patterns, as regular expressions.
    for bad in ["9lives", "Upper", "trailing-", "double--hyphen", "under_score", "x"] {
        must_fail(
            &pool,
            &format!("codename {bad:?}"),
            &agent(bad, "execution", 0),
            CHECK,
            Some("atlas_agents_codename_check"),
        )
        .await;
    }
    exec(&pool, &agent("front-2", "execution", 0)).await;

    // json_valid(trace) → a cast to jsonb that fails.
    exec(&pool, &format!("INSERT INTO conversations (id, created_at) VALUES ('c1', {t})")).await;
    must_fail(
        &pool,
        "a trace that is not JSON",
        &format!(
            "INSERT INTO turn_traces (conversation_id, user_text, trace, status, started_at) \
             VALUES ('c1', 'u', '{{not json', 'complete', {t})"
        ),
        "22P02",
        None,
    )
    .await;
    pool.close().await;
}

/// Whether any session holds the advisory lock `key` (one-argument form: classid/objid are
/// the key's high and low 32 bits, objsubid 1).
async fn lock_held(conn: &mut PgConnection, key: i64) -> bool {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted \
         AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1)",
    )
    .bind(key)
    .fetch_one(conn)
    .await
    .unwrap()
}

async fn try_lock(conn: &mut PgConnection, key: i64) -> bool {
    sqlx::query_scalar("SELECT pg_try_advisory_lock($1)").bind(key).fetch_one(conn).await.unwrap()
}

/// Polls `try_lock` until it succeeds (the holder's backend exits asynchronously).
async fn eventually_locks(conn: &mut PgConnection, key: i64, what: &str) -> Duration {
    let t0 = Instant::now();
    while !try_lock(conn, key).await {
        assert!(t0.elapsed() < Duration::from_secs(10), "{what}: lock {key} still held after 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    t0.elapsed()
}

#[tokio::test]
async fn advisory_lock_is_exclusive_and_released_when_the_holder_goes() {
    let pg = Postgres::start().await;
    let url = pg.create_db("locks").await;
    let key: i64 = 42;

    // Taken on one connection, refused on another; released when the holder closes.
    let mut a = PgConnection::connect(&url).await.unwrap();
    let mut b = PgConnection::connect(&url).await.unwrap();
    assert!(try_lock(&mut a, key).await, "A takes the lock");
    assert!(!try_lock(&mut b, key).await, "B is refused while A holds it");
    assert!(try_lock(&mut b, key + 1).await, "another key is independent");
    a.close().await.unwrap();
    let waited = eventually_locks(&mut b, key, "after A closed").await;
    eprintln!("lock free {waited:?} after the holder closed its connection");
    b.close().await.unwrap();

    // Released when the holding process dies: psql takes it, then is killed with SIGKILL while
    // its session sits idle (as the launcher's will, during a launch).
    let mut watcher = PgConnection::connect(&url).await.unwrap();
    let mut psql = Command::new(pg.bin("psql"))
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn psql");
    {
        use std::io::Write as _;
        let stdin = psql.stdin.as_mut().unwrap();
        writeln!(stdin, "SELECT pg_advisory_lock({key});").unwrap();
        stdin.flush().unwrap();
    }
    let t0 = Instant::now();
    while !lock_held(&mut watcher, key).await {
        assert!(t0.elapsed() < Duration::from_secs(10), "psql never took the lock");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!try_lock(&mut watcher, key).await, "refused while psql holds it");
    psql.kill().expect("SIGKILL psql");
    psql.wait().unwrap();
    let waited = eventually_locks(&mut watcher, key, "after psql was killed").await;
    eprintln!("lock free {waited:?} after the holding process was killed");
    assert!(lock_held(&mut watcher, key).await);
    watcher.close().await.unwrap();
}
