//! The appliance's database, whichever backend `ARTHUR_DATABASE_URL` names: opened and
//! migrated once — the memory's migrations, then Atlas' own, each migrator ignoring the
//! other's versions — then shared as the memory store and the Atlas store. SQLite (a file)
//! is the embedded default; PostgreSQL is for several Atlas workers on one database.

use std::sync::Arc;

use anyhow::{bail, Context};
use arthur_agents::memory::{MemoryStore, PgStore, SqliteStore};
use arthur_atlas::store::{AtlasStore, PgAtlasStore, SqliteAtlasStore};
use sqlx::postgres::PgPool;
use sqlx::SqlitePool;

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

/// The connection pool both stores share (closed once, at the end).
#[derive(Debug, Clone)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
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
                let atlas = SqliteAtlasStore::open(pool.clone())
                    .await
                    .with_context(|| format!("opening database {url} (migrating it)"))?;
                Ok(Database { backend, memory: Arc::new(store), atlas: Arc::new(atlas), pool: Pool::Sqlite(pool) })
            }
            Backend::Postgres => {
                let store = PgStore::open(url).await.map_err(|e| {
                    anyhow::anyhow!(redact_url_passwords(&e.to_string()))
                        .context("opening the PostgreSQL database (ARTHUR_DATABASE_URL)")
                })?;
                let pool = store.pool().clone();
                let atlas = PgAtlasStore::open(pool.clone()).await.map_err(|e| {
                    anyhow::anyhow!(redact_url_passwords(&e.to_string()))
                        .context("opening the PostgreSQL database (ARTHUR_DATABASE_URL): migrating it")
                })?;
                Ok(Database { backend, memory: Arc::new(store), atlas: Arc::new(atlas), pool: Pool::Postgres(pool) })
            }
        }
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// `scheme://user:password@` with the password replaced: a database error may quote the URL.
pub fn redact_url_passwords(text: &str) -> String {
    arthur_agents::redact::redact(text).0.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_urls_are_redacted_and_the_rest_kept() {
        let e = "error connecting to postgres://arthur:hunter2@db:5432/arthur: refused";
        assert_eq!(
            redact_url_passwords(e),
            "error connecting to postgres://arthur:[REDACTED:url_password]@db:5432/arthur: refused"
        );
        assert_eq!(redact_url_passwords("sqlite:///d/arthur.db"), "sqlite:///d/arthur.db");
        let two = redact_url_passwords("postgresql://u:p%40ss@h/db and again postgres://v:w@h");
        assert_eq!(two, "postgresql://u:[REDACTED:url_password]@h/db and again postgres://v:[REDACTED:url_password]@h");
    }
}
