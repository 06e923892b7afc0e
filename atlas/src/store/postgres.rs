//! [`AtlasStore`] on PostgreSQL, so that several `arthur serve` workers can share one
//! database. The queries are shared with SQLite (`super::sql`); what is PostgreSQL's own is
//! here: multi-statement writes serialised by a transaction-level advisory lock (what
//! SQLite's `BEGIN IMMEDIATE` gives), the launch exclusion a session-level advisory lock per
//! message on a dedicated connection (which the server drops when its worker dies), the
//! candidates claimed `FOR UPDATE SKIP LOCKED`, and the reclaim and the watchdog reading the
//! granted locks in `pg_locks`.

use std::collections::HashMap;

use arthur_agents::memory::{decode_vector, encode_vector};
use arthur_agents::time::{from_db, to_db};
use sqlx::postgres::{PgConnection, PgPool, PgRow};
use sqlx::{Connection, Row};

use super::*;
use crate::audit;

/// Class of the transaction-level advisory lock taken by every multi-statement write
/// (0x41525448, "ARTH"), the memory's.
pub use arthur_agents::memory::postgres::WRITE_LOCK_CLASS;
/// Key of the Atlas writes within [`WRITE_LOCK_CLASS`] (the memory's writes use 0: the two
/// stores never wait for each other).
pub const WRITE_LOCK_KEY: i32 = 1;
/// Class of the session-level advisory lock held on a message for its whole launch
/// (0x41544C53, "ATLS"); the key is the message's id.
pub const LAUNCH_LOCK_CLASS: i32 = 1096043603;

/// `application_name` is truncated by the server to 63 bytes (NAMEDATALEN - 1).
const APPLICATION_NAME_MAX: usize = 63;

/// Atlas' migrations (`migrations/atlas`) in PostgreSQL's dialect.
pub use super::migrations::POSTGRES as MIGRATOR;

/// [`AtlasStore`] on a PostgreSQL database (the memory's), migrated with `migrations/atlas`.
pub struct PgAtlasStore {
    pool: PgPool,
    /// The dedicated connection holding each launch lock this process took, by message id.
    locks: tokio::sync::Mutex<HashMap<i64, PgConnection>>,
}

impl std::fmt::Debug for PgAtlasStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgAtlasStore").field("pool", &self.pool).finish_non_exhaustive()
    }
}

/// The launch lock's key for a message (the two-int form takes an `int4`).
fn lock_key(email_id: i64) -> StoreResult<i32> {
    i32::try_from(email_id)
        .map_err(|_| AtlasStoreError::Corrupt { column: "atlas_emails.id", value: email_id.to_string() })
}

/// `holder` cut to what `application_name` keeps, on a character boundary.
fn application_name(holder: &str) -> &str {
    let mut end = holder.len().min(APPLICATION_NAME_MAX);
    while !holder.is_char_boundary(end) {
        end -= 1;
    }
    &holder[..end]
}

/// Launch locks granted in this database, one row per message (`lock_email_id`, `pid`).
fn granted_launch_locks() -> String {
    format!(
        "SELECT l.objid::bigint AS lock_email_id, l.pid FROM pg_locks l
         WHERE l.locktype = 'advisory' AND l.classid = {LAUNCH_LOCK_CLASS}::oid AND l.objsubid = 2 AND l.granted
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
}

/// Closes a lock connection (the server drops its session locks); a broken one is dropped.
async fn close_quietly(conn: PgConnection) {
    if let Err(e) = conn.close().await {
        tracing::debug!("closing an Atlas lock connection: {e}");
    }
}

impl PgAtlasStore {
    /// The store on a pool whose database is already migrated (see [`Self::open`]).
    pub fn new(pool: PgPool) -> Self {
        Self { pool, locks: tokio::sync::Mutex::new(HashMap::new()) }
    }

    /// A write transaction that waits for the previous Atlas writer's commit.
    async fn write_tx(&self) -> StoreResult<sqlx::Transaction<'static, sqlx::Postgres>> {
        Ok(arthur_agents::memory::postgres::begin_write(&self.pool, WRITE_LOCK_KEY).await?)
    }

    /// Takes the message's launch lock on a connection of its own, kept until released; the
    /// lease row is the lock's journal (for the watchdog and the reclaim).
    async fn lock_launch(&self, lease: Lease<'_>) -> StoreResult<bool> {
        let Lease { email_id, holder, .. } = lease;
        let key = lock_key(email_id)?;
        if self.locks.lock().await.contains_key(&email_id) {
            return Ok(false);
        }
        // A dedicated connection: a session lock taken on a pooled one would outlive its
        // return to the pool, and session locks stack.
        let options = self.pool.connect_options().as_ref().clone().application_name(application_name(holder));
        let mut conn = PgConnection::connect_with(&options).await?;
        let locked: Result<bool, sqlx::Error> = sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
            .bind(LAUNCH_LOCK_CLASS)
            .bind(key)
            .fetch_one(&mut conn)
            .await;
        match locked {
            Ok(true) => {}
            Ok(false) => {
                close_quietly(conn).await;
                return Ok(false);
            }
            Err(e) => {
                close_quietly(conn).await;
                return Err(e.into());
            }
        }
        // The lock is the truth; the row is its journal, for the watchdog and the reclaim.
        let journal = launches::write_lease_row(&mut conn, lease, false).await;
        if let Err(e) = journal {
            close_quietly(conn).await;
            return Err(e);
        }
        let mut locks = self.locks.lock().await;
        if locks.contains_key(&email_id) {
            // Cannot happen (the server refuses a second session), but never keep two.
            drop(locks);
            close_quietly(conn).await;
            return Ok(false);
        }
        locks.insert(email_id, conn);
        Ok(true)
    }

    /// Checks the lock's connection is alive and refreshes its journal.
    async fn renew_launch_lock(&self, lease: Lease<'_>) -> StoreResult<bool> {
        let email_id = lease.email_id;
        let mut locks = self.locks.lock().await;
        let Some(conn) = locks.get_mut(&email_id) else { return Ok(false) };
        if sqlx::query("SELECT 1").execute(&mut *conn).await.is_err() {
            // The connection is gone, and the lock with it.
            if let Some(conn) = locks.remove(&email_id) {
                close_quietly(conn).await;
            }
            return Ok(false);
        }
        launches::renew_lease_row(conn, lease).await
    }

    /// Releases the lock (closing its connection) and removes its journal row.
    async fn unlock_launch(&self, email_id: i64, holder: &str) -> StoreResult<()> {
        let mut locks = self.locks.lock().await;
        if let Some(conn) = locks.get_mut(&email_id) {
            // Another holder of this process took it: not ours to release.
            let journal: Result<Option<String>, sqlx::Error> =
                sqlx::query_scalar("SELECT holder FROM atlas_leases WHERE email_id = $1")
                    .bind(email_id)
                    .fetch_optional(&mut *conn)
                    .await;
            if matches!(&journal, Ok(Some(h)) if h != holder) {
                return Ok(());
            }
            let mut conn = locks.remove(&email_id).expect("present above");
            drop(locks);
            let _ = sqlx::query("SELECT pg_advisory_unlock($1, $2)")
                .bind(LAUNCH_LOCK_CLASS)
                .bind(lock_key(email_id)?)
                .execute(&mut conn)
                .await;
            close_quietly(conn).await;
        } else {
            drop(locks);
        }
        let mut conn = self.pool.acquire().await?;
        launches::delete_lease_row(&mut conn, email_id, holder).await
    }

    /// The candidates, oldest first. Rows another worker is claiming at this instant are
    /// skipped, not waited for; a message whose launch lock is held (by anyone) is not one.
    async fn candidate_rows(&self, quiet_since: &str, now: &str, limit: i64) -> StoreResult<Vec<PgRow>> {
        let sql = format!(
            "{EMAIL_SELECT} WHERE {CANDIDATE}
               AND NOT EXISTS (SELECT 1 FROM ({locks}) k WHERE k.lock_email_id = e.id)
             ORDER BY e.id LIMIT $2 FOR UPDATE OF e SKIP LOCKED",
            locks = granted_launch_locks()
        );
        let mut tx = self.pool.begin().await?;
        let rows = sqlx::query(&sql).bind(quiet_since).bind(limit).bind(now).fetch_all(&mut *tx).await?;
        tx.commit().await?;
        Ok(rows)
    }

    /// `spawned` messages whose launch lock nobody holds: the server released a dead
    /// worker's session lock with its connection, so the message has lost its launcher.
    async fn orphaned_launches(tx: &mut PgConnection, _now: &str) -> StoreResult<Vec<i64>> {
        let sql = format!(
            "SELECT e.id FROM atlas_emails e WHERE e.status = 'spawned'
               AND NOT EXISTS (SELECT 1 FROM ({locks}) k WHERE k.lock_email_id = e.id)
             ORDER BY e.id",
            locks = granted_launch_locks()
        );
        Ok(sqlx::query_scalar(&sql).fetch_all(tx).await?)
    }

    /// Launch locks taken before `before` (`email_id`, `holder`, `since`). The locks are the
    /// truth: a lease row whose lock is gone is a dead worker's, left to the reclaim; a lock
    /// without a row (its journal not written yet) is reported with its session's name and
    /// start.
    async fn held_lock_rows(&self, before: &str) -> StoreResult<Vec<PgRow>> {
        let sql = format!(
            "SELECT email_id, holder, since FROM (
               SELECT k.lock_email_id AS email_id,
                      COALESCE(le.holder, a.application_name, '') AS holder,
                      COALESCE(le.acquired_at,
                               to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))
                        COLLATE \"C\" AS since
               FROM ({locks}) k
               LEFT JOIN pg_stat_activity a ON a.pid = k.pid
               LEFT JOIN atlas_leases le ON le.email_id = k.lock_email_id) held
             WHERE since < $1 ORDER BY email_id",
            locks = granted_launch_locks()
        );
        Ok(sqlx::query(&sql).bind(before).fetch_all(&self.pool).await?)
    }
}

super::sql::sql_atlas_store!(PgAtlasStore, sqlx::Postgres, PgRow);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_classes_spell_their_names() {
        assert_eq!(WRITE_LOCK_CLASS.to_be_bytes(), *b"ARTH");
        assert_eq!(LAUNCH_LOCK_CLASS.to_be_bytes(), *b"ATLS");
    }

    #[test]
    fn application_name_is_cut_on_a_character_boundary() {
        assert_eq!(application_name("host-1:42"), "host-1:42");
        let long = "é".repeat(40);
        let cut = application_name(&long);
        assert_eq!(cut.len(), 62);
        assert!(long.starts_with(cut));
    }

    #[test]
    fn an_id_beyond_int4_is_refused_as_a_lock_key() {
        assert_eq!(lock_key(42).unwrap(), 42);
        assert!(matches!(lock_key(i64::from(i32::MAX) + 1), Err(AtlasStoreError::Corrupt { .. })));
    }
}
