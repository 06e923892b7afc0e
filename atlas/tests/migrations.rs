//! Two migrators on one database: the memory's (`arthur_agents::memory::{sqlite,postgres}::
//! MIGRATOR`) and Atlas' (`arthur_atlas::store::{sqlite,postgres}::MIGRATOR`). Before the
//! split they were one folder of ten migrations; databases in use have those ten applied, with
//! their checksums recorded. Here: the files kept every byte (their SHA-384, as sqlx records
//! it, equals the one recorded by the old migrator), a database migrated by the old combined
//! migrator opens with the two new ones and works, a fresh database gets every table whichever
//! migrator runs first, no version belongs to both, and the memory's migrator alone creates
//! no Atlas table.

use std::borrow::Cow;
use std::collections::BTreeSet;

use arthur_agents::memory::{PgStore, SqliteStore};
use arthur_atlas::store::{AtlasStore, Inserted, NewMessage, PgAtlasStore, SqliteAtlasStore};
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::SqlitePool;

use crate::support::start_time;

/// SHA-384 of each migration file before the split (`sha384sum migrations/*/00*.sql` at
/// commit 9df2044): what `_sqlx_migrations.checksum` holds in every database in use.
const SQLITE_CHECKSUMS: [(i64, &str); 10] = [
    (1, "23fcfae9eb3072ef5021680bf6bf0ef28a5268c30e81f8b96438db0a69606813324ae153a4ba4145f05a29669e655862"),
    (2, "d7c6991b8aee4818d8848fe0c03dee41350dca46501159205447d79861a41185ec0b7feea30f3b584f690ec24b7a48e2"),
    (3, "95aaf429683c8aad00dfb48b83cc04c314042dc95000ae633e1776e0b804d794964a15bc31cabefa9ec7d207ed208654"),
    (4, "bc5039d1d5afb61dd47a70c686a152fd70a64acb7bd02738250d0ea1d6a59ef27a8da1f933ebb25b7b1d351a5411e39e"),
    (5, "eac40068d59b3daf96a2262c799040117860674593aab2c40ef64f40f5b0e90c2ec014087c207d5755d22c542f33a422"),
    (6, "2d061bbabe7eede0b0c875db33ed08313c002617adb63ecd869f51d96c062951208a5d17e3e5d66211d7e708b1ee1058"),
    (7, "9350743d85b586a2d28b1d11a9b0a9417d612cea3883439883ce610818c563ad5421e5aed48c38b7ce0407a18c18c0b2"),
    (8, "e0452a1e1120a9267b23195c5a72fc882eb21552abb021ca70d9eeac636e80d6b6f32f6141b7b846e622db8675b56e95"),
    (9, "88b08132f3badaa64d1e2397a1e3f593780d7acc10990e612368f44e81470d744b8c9caae31f8688d4f17ecd9e140027"),
    (10, "81ab35978ddd0a49ad95114a2fb640dc70b780811b98d0aa0e7226af9c10c2c3bebb1e74cc366a3bcab3d73e4782e00f"),
];
const POSTGRES_CHECKSUMS: [(i64, &str); 10] = [
    (1, "916b28bfcd0336c86b89949123dd9750309cb8584bff80633c275fd78141a3b3bc13a92aed9e1d025f5a6fd3e0991882"),
    (2, "c18995338414ae5bb2a762dcf05cf329f196f7a7ef1f73cf96d63e1d7d5ed9ab27ba339afd364b8d2b6099b32a7f8817"),
    (3, "33c2168b0e35bb6b452e7241332ed3bc0b506f11ed324f96afb9751be6c78150d598e558e34a04cd16bc15f58255739a"),
    (4, "20d6a618a496a7e93467334b3d0420227c7d6b5e20e77d2c0d15310a751ffdafbf427dbc9a116788971929bfc3897991"),
    (5, "71b56655bd7f593341435bfb5d20eaaf568858da81af441a7b0741ba72cf26b124384c76be152d745ff45479d6bc9862"),
    (6, "59e66b5f1f64471dd851c4dd0b6ccf79532d325f381dcf46e0e06b1fffd1adae121a229b9c5c07e327ea2395c7d38dde"),
    (7, "3fc7a1e08a683144482835662e70f9d30973318232ae947a8bf31e1acb867d01ea0a27c60f650924793a80c447d6637a"),
    (8, "b3da0cdccd2c09198cc06bbf95d400d53491b0aca3df0ff40c55fd0059beaccc7b591db9e707796d9ecf0e14b39ee061"),
    (9, "88b08132f3badaa64d1e2397a1e3f593780d7acc10990e612368f44e81470d744b8c9caae31f8688d4f17ecd9e140027"),
    (10, "125dd38ddeece39862604e63bfef154065e9eadc19a48b1039e4265cd7ea12b37c4eb1f3dc48916a1a8cdaa40d6a124d"),
];

/// SHA-384 of the migrations written after the split, as their files held them before the
/// files became templates of both dialects (`migrations/{memory,atlas}`).
const SQLITE_LATER_CHECKSUMS: [(i64, &str); 4] = [
    (11, "fb2e3059d2cd28231a1278950e4fd0b91203bff5cf402cbd10939279bc1c427a45665b4ba0d6b4d23f13fbf2144a36e6"),
    (12, "e798be1db14fe94ef771d29335249cc53b3796b112e41e99815cd77ec828f301e450a5623c3c807482f39ffdd40ceac7"),
    (13, "7382e71464ce907cd105a1737ac1139e966a18b584e301db097b9da14c87409400cc90998333d6fb81852d55984abdf0"),
    (14, "5952903d31b2b6d0482c41d44896a8ca69e709a407a9b3e84d31ab2c76ef2cdb23fa49778fe17b551fd26ab18ffa6333"),
];
const POSTGRES_LATER_CHECKSUMS: [(i64, &str); 4] = [
    (11, "d1ee6f9b6a92104312886c92854a9045b0d61d865de1224db26839d1d788428128a8896efab635e6b9e45523ccccba5d"),
    (12, "51b32a030d48e5bf37ba14104d59d414b808a87eea1e9d80e564ae04d8837296897e6f53e197f602e7d1d9e1987c12e4"),
    (13, "6d57b457966748002a690ba95177ec4cfdb190018b0c077e4afca4c5853ca19c78cff9fae509c225d23bc0baf44b16a6"),
    (14, "ac7187d3fb4344f2c5aa6fb7815f8cb6d98a91dac8cf7b4606899e92edaea6a74545b94a127066e9a0e4b3d0d8f03f38"),
];

/// The last version of all (the memory's 0011_turn_stages came after the split).
const LATEST: i64 = 14;

/// The Atlas versions (the rest of 1–11 is the memory's).
const ATLAS_VERSIONS: [i64; 5] = [4, 5, 6, 7, 8];

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The migrator before the split: the memory's and Atlas' migrations as one list, which must
/// be the old files byte for byte (the recorded checksums), and which, like the old embedded
/// one, refuses a database holding a version it does not know.
fn old_combined(memory: &Migrator, atlas: &Migrator, checksums: &[(i64, &str)]) -> Migrator {
    // Only the files that existed then (later migrations are applied by the new migrators).
    let mut all: Vec<_> =
        memory.iter().chain(atlas.iter()).filter(|m| checksums.iter().any(|(v, _)| *v == m.version)).cloned().collect();
    all.sort_by_key(|m| m.version);
    let got: Vec<(i64, String)> = all.iter().map(|m| (m.version, hex(&m.checksum))).collect();
    let want: Vec<(i64, String)> = checksums.iter().map(|(v, c)| (*v, c.to_string())).collect();
    assert_eq!(got, want, "a migration file changed: existing databases would refuse to open");
    Migrator { migrations: Cow::Owned(all), ignore_missing: false, ..Migrator::DEFAULT }
}

/// Each migration a template gives is the text every database in use applied: its checksum
/// is the one recorded, in each dialect, for every version (a template that drifted by one
/// byte would make those databases refuse to open).
#[test]
fn every_migration_hashes_to_the_checksum_databases_recorded() {
    for (memory, atlas, before, later) in [
        (
            &arthur_agents::memory::sqlite::MIGRATOR,
            &arthur_atlas::store::sqlite::MIGRATOR,
            &SQLITE_CHECKSUMS,
            &SQLITE_LATER_CHECKSUMS,
        ),
        (
            &arthur_agents::memory::postgres::MIGRATOR,
            &arthur_atlas::store::postgres::MIGRATOR,
            &POSTGRES_CHECKSUMS,
            &POSTGRES_LATER_CHECKSUMS,
        ),
    ] {
        let mut got: Vec<(i64, String)> =
            memory.iter().chain(atlas.iter()).map(|m| (m.version, hex(&m.checksum))).collect();
        got.sort();
        let want: Vec<(i64, String)> = before.iter().chain(later.iter()).map(|(v, c)| (*v, c.to_string())).collect();
        assert_eq!(got, want);
        assert!(memory.iter().chain(atlas.iter()).all(|m| !m.no_tx), "every migration runs in a transaction");
    }
}

#[test]
fn no_version_belongs_to_both_migrators_and_only_atlas_holds_atlas_versions() {
    for (memory, atlas) in [
        (&arthur_agents::memory::sqlite::MIGRATOR, &arthur_atlas::store::sqlite::MIGRATOR),
        (&arthur_agents::memory::postgres::MIGRATOR, &arthur_atlas::store::postgres::MIGRATOR),
    ] {
        let m: BTreeSet<i64> = memory.iter().map(|m| m.version).collect();
        let a: BTreeSet<i64> = atlas.iter().map(|m| m.version).collect();
        assert!(m.is_disjoint(&a), "memory {m:?} and Atlas {a:?} share a version");
        assert_eq!(a.iter().copied().collect::<Vec<_>>(), ATLAS_VERSIONS);
        assert!(atlas.iter().all(|m| m.description.starts_with("atlas")), "Atlas' folder holds Atlas' migrations");
        assert!(memory.iter().all(|m| !m.description.contains("atlas")), "the memory's holds none of them");
        assert!(memory.ignore_missing && atlas.ignore_missing, "each ignores the other's versions");
    }
}

async fn sqlite_pool(dir: &tempfile::TempDir) -> SqlitePool {
    let options =
        SqliteConnectOptions::new().filename(dir.path().join("arthur.db")).create_if_missing(true).foreign_keys(true);
    SqlitePoolOptions::new().max_connections(2).connect_with(options).await.unwrap()
}

fn message(key: &str) -> NewMessage {
    NewMessage {
        account: "atlas@127.0.0.1:143/INBOX".into(),
        message_key: format!("mid:{key}"),
        message_id: Some(key.into()),
        imap_uid: Some(1),
        from_email: Some("jean@acme.fr".into()),
        subject: format!("Sujet {key}"),
        raw: b"Subject: x\r\n\r\nCorps\r\n".to_vec(),
        dkim_pass: false,
        dkim_detail: "no DKIM-Signature".into(),
    }
}

/// The versions recorded in `_sqlx_migrations`, and whether each succeeded.
async fn applied_sqlite(pool: &SqlitePool) -> Vec<(i64, bool)> {
    sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version").fetch_all(pool).await.unwrap()
}

#[tokio::test]
async fn sqlite_a_database_migrated_before_the_split_opens_with_the_two_migrators() {
    let dir = tempfile::tempdir().unwrap();
    let pool = sqlite_pool(&dir).await;
    let old = old_combined(
        &arthur_agents::memory::sqlite::MIGRATOR,
        &arthur_atlas::store::sqlite::MIGRATOR,
        &SQLITE_CHECKSUMS,
    );
    old.run(&pool).await.unwrap();
    // Data written by the old appliance.
    let old_store = SqliteAtlasStore::new(pool.clone());
    let Inserted::New(before) = old_store.insert_message(&message("avant"), start_time()).await.unwrap() else {
        panic!("a new message")
    };
    sqlx::query("INSERT INTO notes (texte, created_at) VALUES ('avant la séparation', '2026-11-30T09:00:00.000Z')")
        .execute(&pool)
        .await
        .unwrap();
    let recorded = applied_sqlite(&pool).await;
    pool.close().await;

    // Arthur after the split opens it as `db::Database::open` does: memory, then Atlas.
    let url = format!("sqlite://{}", dir.path().join("arthur.db").display());
    let memory = SqliteStore::open(&url).await.expect("the memory's migrator accepts Atlas' versions");
    let atlas = SqliteAtlasStore::open(memory.pool().clone()).await.expect("Atlas' migrator accepts the memory's");
    assert_eq!(recorded, (1..=10).map(|v| (v, true)).collect::<Vec<_>>());
    // Nothing applied again, nothing missing; only what came after the split is added.
    let recorded = applied_sqlite(memory.pool()).await;
    assert_eq!(recorded, (1..=LATEST).map(|v| (v, true)).collect::<Vec<_>>());
    assert_eq!(atlas.email(before).await.unwrap().unwrap().subject, "Sujet avant");
    assert!(matches!(atlas.insert_message(&message("après"), start_time()).await.unwrap(), Inserted::New(_)));
    use arthur_agents::memory::MemoryStore;
    assert_eq!(memory.list_notes(None).await.unwrap()[0].texte, "avant la séparation");
    assert!(atlas.agent("backend").await.unwrap().is_some(), "the seeded personas are there");

    // Opened again: still a no-op.
    drop(atlas);
    memory.close().await;
    let memory = SqliteStore::open(&url).await.unwrap();
    SqliteAtlasStore::open(memory.pool().clone()).await.unwrap();
    assert_eq!(applied_sqlite(memory.pool()).await, recorded);
}

#[tokio::test]
async fn sqlite_a_fresh_database_gets_every_table_whichever_migrator_runs_first() {
    let mut schemas = Vec::new();
    for atlas_first in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let pool = sqlite_pool(&dir).await;
        let (memory, atlas) = (&arthur_agents::memory::sqlite::MIGRATOR, &arthur_atlas::store::sqlite::MIGRATOR);
        let order = if atlas_first { [atlas, memory] } else { [memory, atlas] };
        for m in order {
            m.run(&pool).await.unwrap();
        }
        assert_eq!(applied_sqlite(&pool).await, (1..=LATEST).map(|v| (v, true)).collect::<Vec<_>>());
        let tables: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger') ORDER BY name",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        schemas.push(tables);
    }
    assert_eq!(schemas[0], schemas[1], "the same schema in either order");
    assert!(schemas[0].iter().any(|t| t == "atlas_emails") && schemas[0].iter().any(|t| t == "notes"));
}

#[tokio::test]
async fn the_memory_store_alone_creates_no_atlas_table() {
    let dir = tempfile::tempdir().unwrap();
    let memory = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
    let atlas_tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'atlas%'")
            .fetch_all(memory.pool())
            .await
            .unwrap();
    assert!(atlas_tables.is_empty(), "{atlas_tables:?}");
    let versions: Vec<i64> = sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
        .fetch_all(memory.pool())
        .await
        .unwrap();
    assert!(versions.iter().all(|v| !ATLAS_VERSIONS.contains(v)), "{versions:?}");
}

#[cfg_attr(not(feature = "system-tests"), ignore = "system tier: PostgreSQL (--features system-tests)")]
#[tokio::test]
async fn postgres_a_database_migrated_before_the_split_opens_with_the_two_migrators() {
    let url = crate::harness::fresh_database().await;
    let pool = PgPoolOptions::new().max_connections(2).connect(&url).await.unwrap();
    let old = old_combined(
        &arthur_agents::memory::postgres::MIGRATOR,
        &arthur_atlas::store::postgres::MIGRATOR,
        &POSTGRES_CHECKSUMS,
    );
    old.run(&pool).await.unwrap();
    let Inserted::New(before) =
        PgAtlasStore::new(pool.clone()).insert_message(&message("avant"), start_time()).await.unwrap()
    else {
        panic!("a new message")
    };
    let recorded: Vec<(i64, bool)> = sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(&pool)
        .await
        .unwrap();
    pool.close().await;

    let memory = PgStore::open(&url).await.expect("the memory's migrator accepts Atlas' versions");
    let atlas = PgAtlasStore::open(memory.pool().clone()).await.expect("Atlas' migrator accepts the memory's");
    let now: Vec<(i64, bool)> = sqlx::query_as("SELECT version, success FROM _sqlx_migrations ORDER BY version")
        .fetch_all(memory.pool())
        .await
        .unwrap();
    assert_eq!(recorded, (1..=10).map(|v| (v, true)).collect::<Vec<_>>());
    assert_eq!(now, (1..=LATEST).map(|v| (v, true)).collect::<Vec<_>>(), "only what came after the split is added");
    assert_eq!(atlas.email(before).await.unwrap().unwrap().subject, "Sujet avant");
    assert!(atlas.agent("backend").await.unwrap().is_some());
    memory.close().await;
}
