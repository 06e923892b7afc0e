//! Launches: the candidates, the exclusion of a message while it runs (the backend's lock,
//! `lock_launch` and co.), the reclaim of launches whose launcher died, and each launch's
//! row and stream-json journal.
//!
//! Written once for both backends ([`sql_launches!`] expands in each, as `super::sql` says).

/// A launch candidate (`$1`: the start of the quiet window, `$3`: now): classified, an intent
/// in the whitelist, and either parked until a time now past (`retry_at`: an unavailable API),
/// or not parked and no spawn audit in the window.
pub(super) const CANDIDATE: &str =
    "e.status = 'classified' AND e.intent IN ('run', 'question', 'negociation', 'conseil')
    AND ((e.retry_at IS NOT NULL AND e.retry_at <= $3)
      OR (e.retry_at IS NULL AND NOT EXISTS (SELECT 1 FROM atlas_audits a WHERE a.email_id = e.id
        AND a.event IN ('spawn_started', 'spawn_action_done', 'spawn_failed') AND a.created_at >= $1)))";

/// A lease asked for or renewed: message `email_id` held by `holder` from `now` for `ttl`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lease<'a> {
    pub email_id: i64,
    pub holder: &'a str,
    pub now: chrono::DateTime<chrono::Utc>,
    pub ttl: chrono::Duration,
}

/// The `launches` module of a backend (launches): the functions `AtlasStore`'s
/// methods call, on the backend's store.
macro_rules! sql_launches {
    ($store:ident, $db:ty, $row:ty) => {
        mod launches {
            use super::*;

            /// Writes the lease row of a message: `holder` since `now`, until `now + ttl`
            /// (SQLite's exclusion, or the journal of PostgreSQL's lock). `expired_only`: not
            /// over a live lease. Whether it was written.
            pub(super) async fn write_lease_row(
                conn: &mut Conn,
                lease: Lease<'_>,
                expired_only: bool,
            ) -> StoreResult<bool> {
                let guard = if expired_only { " WHERE atlas_leases.expires_at < $3" } else { "" };
                let sql = format!(
                    "INSERT INTO atlas_leases (email_id, holder, acquired_at, expires_at) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (email_id) DO UPDATE SET holder = $2, acquired_at = $3, expires_at = $4{guard}"
                );
                let written = sqlx::query(&sql)
                    .bind(lease.email_id)
                    .bind(lease.holder)
                    .bind(to_db(lease.now))
                    .bind(to_db(lease.now + lease.ttl))
                    .execute(conn)
                    .await?
                    .rows_affected();
                Ok(written == 1)
            }

            /// Pushes back the expiry of the holder's lease row; whether it holds one.
            pub(super) async fn renew_lease_row(conn: &mut Conn, lease: Lease<'_>) -> StoreResult<bool> {
                let renewed = sqlx::query("UPDATE atlas_leases SET expires_at = $1 WHERE email_id = $2 AND holder = $3")
                    .bind(to_db(lease.now + lease.ttl))
                    .bind(lease.email_id)
                    .bind(lease.holder)
                    .execute(conn)
                    .await?
                    .rows_affected();
                Ok(renewed == 1)
            }

            /// Removes `holder`'s lease row of a message (another holder's stays).
            pub(super) async fn delete_lease_row(conn: &mut Conn, email_id: i64, holder: &str) -> StoreResult<()> {
                sqlx::query("DELETE FROM atlas_leases WHERE email_id = $1 AND holder = $2")
                    .bind(email_id)
                    .bind(holder)
                    .execute(conn)
                    .await?;
                Ok(())
            }

            fn launch_row(r: &$row) -> StoreResult<LaunchRow> {
                Ok(LaunchRow {
                    id: r.try_get("id")?,
                    iteration: r.try_get("iteration")?,
                    prompt_kind: r.try_get("prompt_kind")?,
                    max_turns: r.try_get("max_turns")?,
                    workspace: r.try_get("workspace")?,
                    branch: r.try_get("branch")?,
                    fork_commit: r.try_get("fork_commit")?,
                    attempt: r.try_get("attempt")?,
                    session_mode: r.try_get("session_mode")?,
                    end: LaunchEnd {
                        status: r.try_get("status")?,
                        exit_code: r.try_get("exit_code")?,
                        killed: r.try_get("killed")?,
                        session_id: r.try_get("session_id")?,
                        cost_usd: r.try_get("cost_usd")?,
                        num_turns: r.try_get("num_turns")?,
                        duration_ms: r.try_get("duration_ms")?,
                        events: r.try_get("events")?,
                        redactions: r.try_get("redactions")?,
                        contract: r.try_get("contract")?,
                    },
                    started_at: ts(r, "started_at")?,
                    finished_at: opt_ts(r, "finished_at")?,
                })
            }

            pub(super) async fn launch_candidates(
                store: &$store,
                quiet_since: DateTime<Utc>,
                now: DateTime<Utc>,
                limit: i64,
            ) -> StoreResult<Vec<EmailRow>> {
                store.candidate_rows(&to_db(quiet_since), &to_db(now), limit).await?.iter().map(email_row).collect()
            }

            pub(super) async fn still_candidate(
                store: &$store,
                id: i64,
                quiet_since: DateTime<Utc>,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let sql = format!("SELECT e.id FROM atlas_emails e WHERE {CANDIDATE} AND e.id = $2");
                let found: Option<i64> = sqlx::query_scalar(&sql)
                    .bind(to_db(quiet_since))
                    .bind(id)
                    .bind(to_db(now))
                    .fetch_optional(&store.pool)
                    .await?;
                Ok(found.is_some())
            }

            pub(super) async fn old_leases(
                store: &$store,
                acquired_before: DateTime<Utc>,
            ) -> StoreResult<Vec<(i64, String, DateTime<Utc>)>> {
                let rows = store.held_lock_rows(&to_db(acquired_before)).await?;
                rows.iter().map(|r| Ok((r.try_get("email_id")?, r.try_get("holder")?, ts(r, "since")?))).collect()
            }

            pub(super) async fn reclaim_interrupted(store: &$store, now: DateTime<Utc>) -> StoreResult<Vec<i64>> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
                let orphans = $store::orphaned_launches(&mut tx, &now).await?;
                let mut ids = Vec::new();
                for id in orphans {
                    let moves = (EmailState::Spawned, EmailState::Classified);
                    let interrupted = (audit::LAUNCH_INTERRUPTED, &serde_json::json!({}));
                    if !move_state(&mut tx, id, moves, interrupted, &now).await? {
                        continue;
                    }
                    sqlx::query(
                        "UPDATE atlas_launches SET status = 'interrupted', finished_at = $1
                         WHERE email_id = $2 AND status = 'running'",
                    )
                    .bind(&now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                    sqlx::query("DELETE FROM atlas_leases WHERE email_id = $1").bind(id).execute(&mut *tx).await?;
                    // Back in the queue under the quiet window, not an old parking's time.
                    sqlx::query("UPDATE atlas_emails SET retry_at = NULL WHERE id = $1").bind(id).execute(&mut *tx).await?;
                    ids.push(id);
                }
                tx.commit().await?;
                Ok(ids)
            }

            pub(super) async fn start_launch(store: &$store, l: &NewLaunch, now: DateTime<Utc>) -> StoreResult<i64> {
                Ok(sqlx::query_scalar(
                    "INSERT INTO atlas_launches
                       (email_id, iteration, prompt_kind, max_turns, workspace, branch, fork_commit, started_at,
                        attempt, session_mode)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
                )
                .bind(l.email_id)
                .bind(l.iteration)
                .bind(l.prompt_kind)
                .bind(l.max_turns)
                .bind(&l.workspace)
                .bind(&l.branch)
                .bind(&l.fork_commit)
                .bind(to_db(now))
                .bind(l.attempt)
                .bind(l.session_mode)
                .fetch_one(&store.pool)
                .await?)
            }

            pub(super) async fn append_events(
                store: &$store,
                launch_id: i64,
                events: &[JournalEvent],
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                if events.is_empty() {
                    return Ok(());
                }
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
                for chunk in events.chunks(100) {
                    let rows =
                        (0..chunk.len()).map(|i| format!("({})", placeholders(i * 7 + 1, 7))).collect::<Vec<_>>();
                    let sql = format!(
                        "INSERT INTO atlas_launch_events (launch_id, seq, type, subtype, tool_name, payload, created_at)
                         VALUES {} ON CONFLICT (launch_id, seq) DO NOTHING",
                        rows.join(", ")
                    );
                    let mut q = sqlx::query(&sql);
                    for e in chunk {
                        q = q
                            .bind(launch_id)
                            .bind(e.seq)
                            .bind(&e.kind)
                            .bind(&e.subtype)
                            .bind(&e.tool_name)
                            .bind(&e.payload)
                            .bind(&now);
                    }
                    q.execute(&mut *tx).await?;
                }
                tx.commit().await?;
                Ok(())
            }

            pub(super) async fn finish_launch(
                store: &$store,
                launch_id: i64,
                end: &LaunchEnd,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                sqlx::query(
                    "UPDATE atlas_launches SET status = $1, exit_code = $2, killed = $3, session_id = $4, cost_usd = $5,
                       num_turns = $6, duration_ms = $7, events = $8, redactions = $9, contract = $10, finished_at = $11
                     WHERE id = $12",
                )
                .bind(&end.status)
                .bind(end.exit_code)
                .bind(&end.killed)
                .bind(&end.session_id)
                .bind(end.cost_usd)
                .bind(end.num_turns)
                .bind(end.duration_ms)
                .bind(end.events)
                .bind(end.redactions)
                .bind(&end.contract)
                .bind(to_db(now))
                .bind(launch_id)
                .execute(&store.pool)
                .await?;
                Ok(())
            }

            pub(super) async fn launches(store: &$store, email_id: i64) -> StoreResult<Vec<LaunchRow>> {
                sqlx::query("SELECT * FROM atlas_launches WHERE email_id = $1 ORDER BY id")
                    .bind(email_id)
                    .fetch_all(&store.pool)
                    .await?
                    .iter()
                    .map(launch_row)
                    .collect()
            }

            pub(super) async fn launch_events(store: &$store, launch_id: i64) -> StoreResult<Vec<JournalEvent>> {
                let rows = sqlx::query(
                    "SELECT seq, type, subtype, tool_name, payload FROM atlas_launch_events WHERE launch_id = $1
                     ORDER BY seq",
                )
                .bind(launch_id)
                .fetch_all(&store.pool)
                .await?;
                rows.iter()
                    .map(|r| {
                        Ok(JournalEvent {
                            seq: r.try_get("seq")?,
                            kind: r.try_get("type")?,
                            subtype: r.try_get("subtype")?,
                            tool_name: r.try_get("tool_name")?,
                            payload: r.try_get("payload")?,
                        })
                    })
                    .collect()
            }
        }
    };
}

pub(super) use sql_launches;
