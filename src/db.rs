//! The appliance's database, whichever backend `ARTHUR_DATABASE_URL` names: opened and
//! migrated once, then shared as the memory store, the Atlas store and the pool the persona
//! queries read. SQLite (a file) is the embedded default; PostgreSQL is for several Atlas
//! workers on one database.

use std::sync::Arc;

use anyhow::{bail, Context};
use arthur_agents::memory::{MemoryStore, PgStore, SqliteStore};
use sqlx::postgres::PgPool;
use sqlx::SqlitePool;

use crate::atlas::persona::AgentsDb;
use crate::atlas::store::{AtlasStore, PgAtlasStore, SqliteAtlasStore};

/// Which backend a database URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// `sqlite:` or `postgres://` / `postgresql://`; anything else is refused.
    pub fn of(url: &str) -> anyhow::Result<Self> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else {
            bail!("unsupported ARTHUR_DATABASE_URL scheme (expected sqlite:// or postgres://)")
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// The connection pool, for the queries that live outside the store traits (personas).
#[derive(Debug, Clone)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
    pub fn agents(&self) -> AgentsDb<'_> {
        match self {
            Pool::Sqlite(p) => AgentsDb::Sqlite(p),
            Pool::Postgres(p) => AgentsDb::Postgres(p),
        }
    }

    pub async fn close(&self) {
        match self {
            Pool::Sqlite(p) => p.close().await,
            Pool::Postgres(p) => p.close().await,
        }
    }
}

impl From<SqlitePool> for Pool {
    fn from(pool: SqlitePool) -> Self {
        Pool::Sqlite(pool)
    }
}

impl From<PgPool> for Pool {
    fn from(pool: PgPool) -> Self {
        Pool::Postgres(pool)
    }
}

/// One open database: both stores share its pool (and, on PostgreSQL, the Atlas store
/// keeps the launch locks this process holds, so there is exactly one per process).
#[derive(Clone)]
pub struct Database {
    pub backend: Backend,
    pub memory: Arc<dyn MemoryStore>,
    pub atlas: Arc<dyn AtlasStore>,
    pub pool: Pool,
}

impl Database {
    /// Opens (creating a SQLite file if needed) and migrates the database at `url`.
    pub async fn open(url: &str) -> anyhow::Result<Self> {
        let backend = Backend::of(url)?;
        // The URL may carry a password: errors name the backend, never the URL.
        match backend {
            Backend::Sqlite => {
                let store = SqliteStore::open(url).await.with_context(|| format!("opening database {url}"))?;
                let pool = store.pool().clone();
                Ok(Database {
                    backend,
                    memory: Arc::new(store),
                    atlas: Arc::new(SqliteAtlasStore::new(pool.clone())),
                    pool: Pool::Sqlite(pool),
                })
            }
            Backend::Postgres => {
                let store = PgStore::open(url).await.map_err(|e| {
                    anyhow::anyhow!(crate::atlas::redact::redact(&e.to_string()).0.into_owned())
                        .context("opening the PostgreSQL database (ARTHUR_DATABASE_URL)")
                })?;
                let pool = store.pool().clone();
                Ok(Database {
                    backend,
                    memory: Arc::new(store),
                    atlas: Arc::new(PgAtlasStore::new(pool.clone())),
                    pool: Pool::Postgres(pool),
                })
            }
        }
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}
