//! The e-mails to the founder, sent once per event: claimed under a unique key, each send
//! attempt taken as a lease, its result recorded and audited.
//!
//! Written once for both backends ([`sql_notices!`] expands in each, as `super::sql` says).

/// The `notices` module of a backend (notices): the functions `AtlasStore`'s
/// methods call, on the backend's store.
macro_rules! sql_notices {
    ($store:ident, $db:ty, $row:ty) => {
        mod notices {
            use super::*;

            fn notice_row(r: &$row) -> StoreResult<NoticeRow> {
                Ok(NoticeRow {
                    id: r.try_get("id")?,
                    notice: NewNotice {
                        email_id: r.try_get("email_id")?,
                        kind: r.try_get("kind")?,
                        dedupe_key: r.try_get("dedupe_key")?,
                        subject: r.try_get("subject")?,
                        body: r.try_get("body")?,
                    },
                    attempts: r.try_get("attempts")?,
                    last_error: r.try_get("last_error")?,
                    sent_at: opt_ts(r, "sent_at")?,
                    created_at: ts(r, "created_at")?,
                })
            }

            pub(super) async fn claim_notice(
                store: &$store,
                n: &NewNotice,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<i64>> {
                Ok(sqlx::query_scalar(
                    "INSERT INTO atlas_notices (email_id, kind, dedupe_key, subject, body, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (dedupe_key) DO NOTHING RETURNING id",
                )
                .bind(n.email_id)
                .bind(&n.kind)
                .bind(&n.dedupe_key)
                .bind(&n.subject)
                .bind(&n.body)
                .bind(to_db(now))
                .fetch_optional(&store.pool)
                .await?)
            }

            pub(super) async fn try_notice(
                store: &$store,
                id: i64,
                retry_before: DateTime<Utc>,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                Ok(sqlx::query(
                    "UPDATE atlas_notices SET attempts = attempts + 1, last_try_at = $1
                     WHERE id = $2 AND sent_at IS NULL AND (last_try_at IS NULL OR last_try_at < $3)",
                )
                .bind(to_db(now))
                .bind(id)
                .bind(to_db(retry_before))
                .execute(&store.pool)
                .await?
                .rows_affected()
                    == 1)
            }

            pub(super) async fn finish_notice(
                store: &$store,
                id: i64,
                error: Option<&str>,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                let mut tx: Tx = store.write_tx().await?;
                let row = sqlx::query("SELECT email_id, kind FROM atlas_notices WHERE id = $1")
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await?;
                let (email_id, kind): (Option<i64>, String) = (row.try_get("email_id")?, row.try_get("kind")?);
                let now = to_db(now);
                match error {
                    None => {
                        sqlx::query("UPDATE atlas_notices SET sent_at = $1, last_error = NULL WHERE id = $2")
                            .bind(&now)
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                        let detail = serde_json::json!({"kind": kind});
                        insert_audit(&mut tx, email_id, audit::NOTICE_SENT, &detail, &now).await?;
                    }
                    Some(e) => {
                        sqlx::query("UPDATE atlas_notices SET last_error = $1 WHERE id = $2")
                            .bind(e)
                            .bind(id)
                            .execute(&mut *tx)
                            .await?;
                        let detail = serde_json::json!({"kind": kind, "error": e});
                        insert_audit(&mut tx, email_id, audit::NOTICE_FAILED, &detail, &now).await?;
                    }
                }
                tx.commit().await?;
                Ok(())
            }

            pub(super) async fn unsent_notices(
                store: &$store,
                max_attempts: i64,
                limit: i64,
            ) -> StoreResult<Vec<NoticeRow>> {
                sqlx::query("SELECT * FROM atlas_notices WHERE sent_at IS NULL AND attempts < $1 ORDER BY id LIMIT $2")
                    .bind(max_attempts)
                    .bind(limit)
                    .fetch_all(&store.pool)
                    .await?
                    .iter()
                    .map(notice_row)
                    .collect()
            }

            pub(super) async fn notices(store: &$store, email_id: Option<i64>) -> StoreResult<Vec<NoticeRow>> {
                let rows = match email_id {
                    Some(id) => {
                        sqlx::query("SELECT * FROM atlas_notices WHERE email_id = $1 ORDER BY id")
                            .bind(id)
                            .fetch_all(&store.pool)
                            .await?
                    }
                    None => sqlx::query("SELECT * FROM atlas_notices ORDER BY id").fetch_all(&store.pool).await?,
                };
                rows.iter().map(notice_row).collect()
            }
        }
    };
}

pub(super) use sql_notices;
