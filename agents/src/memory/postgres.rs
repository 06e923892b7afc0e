//! The PostgreSQL backend of [`MemoryStore`], so that several Arthur processes can share one
//! memory: the same tables as SQLite (`migrations/memory`), the same SQL where the
//! dialects agree, and the same results, orders and refusals as [`SqliteStore`].
//!
//! SQLite runs every write in `BEGIN IMMEDIATE`: one writer at a time, so a read-then-write
//! (a cap, a duplicate, "a session already runs") can never be overtaken. PostgreSQL runs in
//! READ COMMITTED; every write transaction here starts by taking one transaction-level
//! advisory lock ([`WRITE_LOCK_CLASS`], [`WRITE_LOCK_KEY`]). It is released at commit or
//! rollback, after the writes are visible, so the next writer's statements see them: the
//! same single writer as SQLite.
//!
//! The queries are shared with SQLite (`super::sql`). Keyword search reproduces FTS5
//! (`unicode61 remove_diacritics 2`, `"term"*` prefix phrases OR-ed, ranked by `bm25` then
//! id, `super::fts5`): each souvenir's tokens are stored (`mots`) under a GIN index, the
//! souvenirs holding a term are found through it, and they are ranked with the table's
//! statistics — no query reads the whole table.
//!
//! [`SqliteStore`]: super::SqliteStore

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::postgres::{PgPoolOptions, PgRow};
use sqlx::{PgPool, Row};

use super::basics::name_key;
use super::*;
use crate::text::normalise;
use crate::time::{from_db, to_db};

/// Advisory-lock class of Arthur's locks: "ARTH" (0x41525448), the first half of the
/// two-int form `pg_advisory_xact_lock(class, key)`, so that other users of the database
/// cannot collide with Arthur's keys.
pub const WRITE_LOCK_CLASS: i32 = 0x4152_5448;
/// Key, within [`WRITE_LOCK_CLASS`], of the lock every memory write transaction holds
/// (SQLite's single writer).
pub const WRITE_LOCK_KEY: i32 = 0;

/// A write transaction holding lock `key` of [`WRITE_LOCK_CLASS`] (the memory's, or another
/// store's in the same database): it waits for the previous writer of that key to commit, and
/// in READ COMMITTED its later statements then see that writer's rows. `BEGIN` and the lock
/// go in one round trip (simple query protocol).
pub async fn begin_write(pool: &PgPool, key: i32) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
    pool.begin_with(format!("BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK_CLASS}, {key})")).await
}

/// Connections in the pool.
pub const MAX_CONNECTIONS: u32 = 8;

/// The memory's migrations (`migrations/memory`) in PostgreSQL's dialect.
pub use super::migrations::POSTGRES as MIGRATOR;

#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to and migrates the database at `url` (`postgres://…`).
    pub async fn open(url: &str) -> StoreResult<Self> {
        let pool = PgPoolOptions::new().max_connections(MAX_CONNECTIONS).connect(url).await?;
        MIGRATOR.run(&pool).await?;
        let store = Self { pool };
        store.index_missing_souvenirs().await?;
        Ok(store)
    }

    /// The pool, for checks that need raw SQL (tests).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// A write transaction: waits for the previous writer to commit or roll back.
    async fn write_tx(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Postgres>> {
        Ok(begin_write(&self.pool, WRITE_LOCK_KEY).await?)
    }

    /// A read transaction whose statements all see one snapshot (as a SQLite read
    /// transaction does; READ COMMITTED would give each statement its own).
    async fn read_tx(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Postgres>> {
        Ok(self.pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY").await?)
    }

    /// Souvenirs written before their tokens were stored (migration 0010) get them, once.
    async fn index_missing_souvenirs(&self) -> StoreResult<()> {
        let mut tx = self.write_tx().await?;
        let rows = sqlx::query("SELECT id, texte FROM souvenirs WHERE mots IS NULL").fetch_all(&mut *tx).await?;
        for row in &rows {
            let (id, texte): (i64, String) = (row.try_get("id")?, row.try_get("texte")?);
            let (mots, nb_mots) = super::fts5::indexed(&texte);
            sqlx::query("UPDATE souvenirs SET mots = $1, nb_mots = $2 WHERE id = $3")
                .bind(mots)
                .bind(nb_mots)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// FTS5's search and order without reading the table: the rows holding a term come
    /// from the GIN index on `mots`; bm25 needs the row count and the token count (kept in
    /// `souvenirs_stats` by a trigger) and each term's row count (the index again); all in
    /// one snapshot.
    async fn keyword_search(&self, terms: &[String], limit: u32) -> StoreResult<Vec<Souvenir>> {
        let queries: Vec<Option<String>> = terms.iter().map(|t| super::fts5::tsquery(t)).collect();
        let any: Vec<&str> = queries.iter().flatten().map(String::as_str).collect();
        if any.is_empty() {
            return Ok(Vec::new());
        }
        let either = any.iter().map(|q| format!("({q})")).collect::<Vec<_>>().join(" | ");
        let mut tx = self.read_tx().await?;
        let rows = sqlx::query(
            "SELECT id, texte, embedding_model, created_at FROM souvenirs \
             WHERE to_tsvector('simple', coalesce(mots, '')) @@ to_tsquery('simple', $1) ORDER BY id",
        )
        .bind(&either)
        .fetch_all(&mut *tx)
        .await?;
        if rows.is_empty() {
            tx.commit().await?;
            return Ok(Vec::new());
        }
        let (count, total): (i64, i64) =
            sqlx::query_as("SELECT nb_souvenirs, nb_mots FROM souvenirs_stats WHERE id = 1")
                .fetch_one(&mut *tx)
                .await?;
        let mut hits = Vec::with_capacity(queries.len());
        for q in &queries {
            hits.push(match q {
                None => 0,
                Some(q) => {
                    sqlx::query_scalar(
                        "SELECT count(*) FROM souvenirs \
                         WHERE to_tsvector('simple', coalesce(mots, '')) @@ to_tsquery('simple', $1)",
                    )
                    .bind(q)
                    .fetch_one(&mut *tx)
                    .await?
                }
            });
        }
        tx.commit().await?;
        let souvenirs = rows.iter().map(souvenir_from).collect::<StoreResult<Vec<_>>>()?;
        let texts: Vec<&str> = souvenirs.iter().map(|s| s.texte.as_str()).collect();
        let stats = super::fts5::Stats { rows: count, tokens: total, hits };
        let ranked = super::fts5::rank_with(terms, &texts, &stats);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        Ok(ranked.into_iter().take(limit).map(|i| souvenirs[i].clone()).collect())
    }
}

super::sql::sql_memory_store!(PgStore, sqlx::Postgres, PgRow);
super::basics_sql::sql_basics_store!(PgStore, sqlx::Postgres, PgRow);
