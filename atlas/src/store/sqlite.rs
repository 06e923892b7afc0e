//! [`AtlasStore`] on SQLite, the appliance's file. The queries are shared with PostgreSQL
//! (`super::sql`); what is SQLite's own is here: every write in a `BEGIN IMMEDIATE`
//! transaction (SQLite's single writer, taken at `BEGIN`), and the launch exclusion, a lease
//! row with an expiry that its launcher renews while the run lasts — a launcher that died
//! stops renewing, and its lease expires.

use arthur_agents::memory::{decode_vector, encode_vector};
use arthur_agents::time::{from_db, to_db};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, SqliteConnection, SqlitePool};

use super::*;
use crate::audit;

/// Atlas' migrations (`migrations/atlas`) in SQLite's dialect.
pub use super::migrations::SQLITE as MIGRATOR;

/// [`AtlasStore`] on the appliance's SQLite file (the memory's database).
#[derive(Debug, Clone)]
pub struct SqliteAtlasStore {
    pool: SqlitePool,
}

impl SqliteAtlasStore {
    /// The store on a pool whose database is already migrated (see [`Self::open`]).
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// A write transaction: SQLite's single writer, taken at `BEGIN`.
    async fn write_tx(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Takes the lease of a message unless a live one exists; an expired one is taken over.
    async fn lock_launch(&self, lease: Lease<'_>) -> StoreResult<bool> {
        let mut conn = self.pool.acquire().await?;
        launches::write_lease_row(&mut conn, lease, true).await
    }

    /// Pushes back the expiry of the holder's lease.
    async fn renew_launch_lock(&self, lease: Lease<'_>) -> StoreResult<bool> {
        let mut conn = self.pool.acquire().await?;
        launches::renew_lease_row(&mut conn, lease).await
    }

    async fn unlock_launch(&self, email_id: i64, holder: &str) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await?;
        launches::delete_lease_row(&mut conn, email_id, holder).await
    }

    /// The candidates, oldest first: one writer at a time, nothing to claim.
    async fn candidate_rows(&self, quiet_since: &str, now: &str, limit: i64) -> StoreResult<Vec<SqliteRow>> {
        Ok(sqlx::query(&format!("{EMAIL_SELECT} WHERE {CANDIDATE} ORDER BY e.id LIMIT $2"))
            .bind(quiet_since)
            .bind(limit)
            .bind(now)
            .fetch_all(&self.pool)
            .await?)
    }

    /// `spawned` messages whose lease expired: their launcher stopped renewing it.
    async fn orphaned_launches(tx: &mut SqliteConnection, now: &str) -> StoreResult<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT e.id FROM atlas_emails e WHERE e.status = 'spawned'
               AND NOT EXISTS (SELECT 1 FROM atlas_leases l WHERE l.email_id = e.id AND l.expires_at >= $1)
             ORDER BY e.id",
        )
        .bind(now)
        .fetch_all(tx)
        .await?)
    }

    /// Leases taken before `before` (`email_id`, `holder`, `since`).
    async fn held_lock_rows(&self, before: &str) -> StoreResult<Vec<SqliteRow>> {
        Ok(sqlx::query(
            "SELECT email_id, holder, acquired_at AS since FROM atlas_leases WHERE acquired_at < $1 ORDER BY email_id",
        )
        .bind(before)
        .fetch_all(&self.pool)
        .await?)
    }
}

super::sql::sql_atlas_store!(SqliteAtlasStore, sqlx::Sqlite, SqliteRow);

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared SQL numbers its placeholders `$N` and reuses them (`$1` twice in one
    /// statement, `$3` before `$1`): SQLite binds each name once, to the N-th value.
    #[tokio::test]
    async fn sqlite_binds_repeated_and_out_of_order_dollar_placeholders_by_number() {
        let pool = SqlitePool::connect("sqlite::memory:").await.unwrap();
        let (text,): (String,) = sqlx::query_as("SELECT $3 || '-' || $1 || '-' || $2 || '-' || $1")
            .bind("a")
            .bind("b")
            .bind("c")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(text, "c-a-b-a");
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM (SELECT 1 AS x UNION ALL SELECT 2) WHERE x >= $1 AND $1 IS NOT NULL")
                .bind(2i64)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(n, 1);
        // IS NOT DISTINCT FROM (open chantiers of no client) needs SQLite 3.39.
        let (same,): (bool,) =
            sqlx::query_as("SELECT NULL IS NOT DISTINCT FROM $1").bind(None::<i64>).fetch_one(&pool).await.unwrap();
        assert!(same);
        assert_eq!(placeholders(3, 3), "$3, $4, $5");
    }
}
