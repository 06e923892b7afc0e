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

/// Atlas' migrations (`migrations/atlas/sqlite`). They share the database, and its
/// `_sqlx_migrations` table, with the memory's: each migrator ignores the versions it does
/// not hold (`ignore_missing`), and a version number is never used by both (tested).
pub static MIGRATOR: sqlx::migrate::Migrator =
    sqlx::migrate::Migrator { ignore_missing: true, ..sqlx::migrate!("../migrations/atlas/sqlite") };

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

    /// Migrates Atlas' tables on `pool` (the database Arthur's memory is in) and upserts the
    /// seeded personas (`crate::persona::seed`); then the store.
    pub async fn open(pool: SqlitePool) -> StoreResult<Self> {
        MIGRATOR.run(&pool).await?;
        let store = Self::new(pool);
        crate::persona::seed(&store).await?;
        Ok(store)
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// A write transaction: SQLite's single writer, taken at `BEGIN`.
    async fn write_tx(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Takes the lease of a message unless a live one exists; an expired one is taken over.
    async fn lock_launch(
        &self,
        email_id: i64,
        holder: &str,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> StoreResult<bool> {
        let got = sqlx::query(
            "INSERT INTO atlas_leases (email_id, holder, acquired_at, expires_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (email_id) DO UPDATE SET holder = $2, acquired_at = $3, expires_at = $4
               WHERE atlas_leases.expires_at < $3",
        )
        .bind(email_id)
        .bind(holder)
        .bind(to_db(now))
        .bind(to_db(now + ttl))
        .execute(&self.pool)
        .await?
        .rows_affected();
        Ok(got == 1)
    }

    async fn renew_launch_lock(
        &self,
        email_id: i64,
        holder: &str,
        now: DateTime<Utc>,
        ttl: chrono::Duration,
    ) -> StoreResult<bool> {
        Ok(sqlx::query("UPDATE atlas_leases SET expires_at = $1 WHERE email_id = $2 AND holder = $3")
            .bind(to_db(now + ttl))
            .bind(email_id)
            .bind(holder)
            .execute(&self.pool)
            .await?
            .rows_affected()
            == 1)
    }

    async fn unlock_launch(&self, email_id: i64, holder: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM atlas_leases WHERE email_id = $1 AND holder = $2")
            .bind(email_id)
            .bind(holder)
            .execute(&self.pool)
            .await?;
        Ok(())
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
