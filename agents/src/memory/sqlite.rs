//! The SQLite backend of [`MemoryStore`]: one file, WAL, busy timeout, foreign keys, and
//! every write in a `BEGIN IMMEDIATE` transaction so a read-then-write can never be
//! overtaken by another writer. The queries are shared with PostgreSQL (`super::sql`);
//! what is SQLite's own is here: the connection, the writers' lock, and the keyword search
//! in the FTS5 table.

use std::str::FromStr;
use std::time::Duration as StdDuration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

use super::basics::name_key;
use super::*;
use crate::text::normalise;
use crate::time::{from_db, to_db};

pub use super::{decode_vector, encode_vector};

/// How long a writer waits for another one before giving up.
pub const BUSY_TIMEOUT: StdDuration = StdDuration::from_secs(5);

/// The memory's migrations (`migrations/memory`) in SQLite's dialect.
pub use super::migrations::SQLITE as MIGRATOR;

#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if needed) and migrates the database at `url` (`sqlite://path`).
    pub async fn open(url: &str) -> StoreResult<Self> {
        let options = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool })
    }

    /// Opens the database file at `path`.
    pub async fn open_path(path: &std::path::Path) -> StoreResult<Self> {
        Self::open(&format!("sqlite://{}", path.display())).await
    }

    /// The pool, for checks that need raw SQL (integrity checks, tests).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// A write transaction: SQLite's single writer, taken at `BEGIN`.
    async fn write_tx(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// A read transaction: its statements see one snapshot.
    async fn read_tx(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin().await?)
    }

    /// FTS5: each term quoted (its syntax is never taken from user text) and prefix-matched
    /// so that "dentiste" finds "dentistes"; ranked by bm25, then id.
    async fn keyword_search(&self, terms: &[String], limit: u32) -> StoreResult<Vec<Souvenir>> {
        let query = terms.iter().map(|t| format!("\"{}\"*", t.replace('"', "\"\""))).collect::<Vec<_>>().join(" OR ");
        let rows = sqlx::query(
            "SELECT s.* FROM souvenirs_fts f JOIN souvenirs s ON s.id = f.rowid \
             WHERE souvenirs_fts MATCH $1 ORDER BY bm25(souvenirs_fts), s.id LIMIT $2",
        )
        .bind(query)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(souvenir_from).collect()
    }
}

super::sql::sql_memory_store!(SqliteStore, sqlx::Sqlite, SqliteRow);
super::basics_sql::sql_basics_store!(SqliteStore, sqlx::Sqlite, SqliteRow);
