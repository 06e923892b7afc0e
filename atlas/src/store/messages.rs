//! A message as stored: its intake (the raw message and its `received` state row, once per
//! account and key), the reads of its state row, its counts per state, and the draft replies
//! written for the founder.
//!
//! Written once for both backends ([`sql_messages!`] expands in each, as `super::sql` says).

/// The `messages` module of a backend (the messages' reads and intake): the functions `AtlasStore`'s
/// methods call, on the backend's store.
macro_rules! sql_messages {
    ($store:ident, $db:ty, $row:ty) => {
        mod messages {
            use super::*;

            pub(super) async fn insert_message(
                store: &$store,
                msg: &NewMessage,
                now: DateTime<Utc>,
            ) -> StoreResult<Inserted> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
                let raw_id: Option<i64> = sqlx::query_scalar(
                    "INSERT INTO atlas_raw_messages
                       (account, message_key, message_id, imap_uid, from_email, subject, raw, size, dkim_pass,
                        dkim_detail, received_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                     ON CONFLICT (account, message_key) DO NOTHING RETURNING id",
                )
                .bind(&msg.account)
                .bind(&msg.message_key)
                .bind(&msg.message_id)
                .bind(msg.imap_uid.map(i64::from))
                .bind(&msg.from_email)
                .bind(&msg.subject)
                .bind(&msg.raw)
                .bind(msg.raw.len() as i64)
                .bind(msg.dkim_pass as i64)
                .bind(&msg.dkim_detail)
                .bind(&now)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(raw_id) = raw_id else {
                    let existing: i64 = sqlx::query_scalar(
                        "SELECT e.id FROM atlas_emails e JOIN atlas_raw_messages r ON r.id = e.raw_message_id
                         WHERE r.account = $1 AND r.message_key = $2",
                    )
                    .bind(&msg.account)
                    .bind(&msg.message_key)
                    .fetch_one(&mut *tx)
                    .await?;
                    tx.commit().await?;
                    return Ok(Inserted::Duplicate(existing));
                };
                let email_id: i64 = sqlx::query_scalar(
                    "INSERT INTO atlas_emails (raw_message_id, status, created_at, updated_at)
                     VALUES ($1, 'received', $2, $2) RETURNING id",
                )
                .bind(raw_id)
                .bind(&now)
                .fetch_one(&mut *tx)
                .await?;
                let detail = serde_json::json!({
                    "uid": msg.imap_uid, "size": msg.raw.len(), "dkim_pass": msg.dkim_pass,
                    "key": if msg.message_id.is_some() { "message-id" } else { "sha256" },
                });
                insert_audit(&mut tx, Some(email_id), audit::POLL_INSERTED, &detail, &now).await?;
                tx.commit().await?;
                Ok(Inserted::New(email_id))
            }

            pub(super) async fn emails_in(
                store: &$store,
                states: &[EmailState],
                after_id: i64,
                limit: i64,
            ) -> StoreResult<Vec<EmailRow>> {
                let n = states.len();
                let sql = format!(
                    "{EMAIL_SELECT} WHERE e.status IN ({}) AND e.id > ${} ORDER BY e.id LIMIT ${}",
                    placeholders(1, n),
                    n + 1,
                    n + 2
                );
                let mut q = sqlx::query(&sql);
                for s in states {
                    q = q.bind(s.as_str());
                }
                q.bind(after_id).bind(limit).fetch_all(&store.pool).await?.iter().map(email_row).collect()
            }

            pub(super) async fn email(store: &$store, id: i64) -> StoreResult<Option<EmailRow>> {
                let mut conn = store.pool.acquire().await?;
                email_in(&mut conn, id).await
            }

            pub(super) async fn raw(store: &$store, id: i64) -> StoreResult<Option<Vec<u8>>> {
                Ok(sqlx::query_scalar(
                    "SELECT r.raw FROM atlas_emails e JOIN atlas_raw_messages r ON r.id = e.raw_message_id
                     WHERE e.id = $1",
                )
                .bind(id)
                .fetch_optional(&store.pool)
                .await?)
            }

            pub(super) async fn due_in(
                store: &$store,
                states: &[EmailState],
                after_id: i64,
                limit: i64,
                now: DateTime<Utc>,
            ) -> StoreResult<Vec<EmailRow>> {
                let n = states.len();
                let sql = format!(
                    "{EMAIL_SELECT} WHERE e.status IN ({}) AND e.id > ${} AND (e.retry_at IS NULL OR e.retry_at <= ${})
                     ORDER BY e.id LIMIT ${}",
                    placeholders(1, n),
                    n + 1,
                    n + 2,
                    n + 3
                );
                let mut q = sqlx::query(&sql);
                for s in states {
                    q = q.bind(s.as_str());
                }
                q.bind(after_id)
                    .bind(to_db(now))
                    .bind(limit)
                    .fetch_all(&store.pool)
                    .await?
                    .iter()
                    .map(email_row)
                    .collect()
            }

            pub(super) async fn list(store: &$store, state: Option<EmailState>) -> StoreResult<Vec<EmailRow>> {
                let rows = match state {
                    Some(s) => {
                        sqlx::query(&format!("{EMAIL_SELECT} WHERE e.status = $1 ORDER BY e.id"))
                            .bind(s.as_str())
                            .fetch_all(&store.pool)
                            .await?
                    }
                    None => sqlx::query(&format!("{EMAIL_SELECT} ORDER BY e.id")).fetch_all(&store.pool).await?,
                };
                rows.iter().map(email_row).collect()
            }

            pub(super) async fn add_draft(
                store: &$store,
                email_id: i64,
                text: &str,
                provider: &str,
                model: &str,
                now: DateTime<Utc>,
            ) -> StoreResult<i64> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO atlas_drafts (email_id, text, provider, model, created_at) VALUES ($1, $2, $3, $4, $5)
                     RETURNING id",
                )
                .bind(email_id)
                .bind(text)
                .bind(provider)
                .bind(model)
                .bind(&now)
                .fetch_one(&mut *tx)
                .await?;
                let detail = serde_json::json!({"draft_id": id, "provider": provider, "model": model});
                insert_audit(&mut tx, Some(email_id), audit::DRAFT_WRITTEN, &detail, &now).await?;
                tx.commit().await?;
                Ok(id)
            }

            pub(super) async fn drafts(
                store: &$store,
                email_id: i64,
            ) -> StoreResult<Vec<(i64, String, String, String, DateTime<Utc>)>> {
                let rows = sqlx::query("SELECT * FROM atlas_drafts WHERE email_id = $1 ORDER BY id")
                    .bind(email_id)
                    .fetch_all(&store.pool)
                    .await?;
                rows.iter()
                    .map(|r| {
                        Ok((
                            r.try_get("id")?,
                            r.try_get("text")?,
                            r.try_get("provider")?,
                            r.try_get("model")?,
                            ts(r, "created_at")?,
                        ))
                    })
                    .collect()
            }

            pub(super) async fn state_counts(store: &$store) -> StoreResult<Vec<(EmailState, i64)>> {
                let rows: Vec<(String, i64)> =
                    sqlx::query_as("SELECT status, COUNT(*) FROM atlas_emails GROUP BY status ORDER BY status")
                        .fetch_all(&store.pool)
                        .await?;
                rows.into_iter().map(|(s, n)| Ok((state(s)?, n))).collect()
            }
        }
    };
}

pub(super) use sql_messages;
