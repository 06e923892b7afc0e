//! Atlas' SQL, written once for both backends: every query (with `$N` placeholders, which
//! SQLite accepts too — repeated and out of order, tested in `sqlite`), every row decoding,
//! and the sequence of each guarded write (read, decide with [`super::rules`], write, audit)
//! in one transaction. A backend module holds only what really differs, as inherent methods
//! [`sql_atlas_store!`] calls:
//!
//! - `write_tx`: a write transaction holding the single writer's lock (SQLite's `BEGIN
//!   IMMEDIATE`, PostgreSQL's transaction-level advisory lock);
//! - `lock_launch`, `renew_launch_lock`, `unlock_launch`: the launch exclusion (a lease row
//!   with an expiry on SQLite, a session-level advisory lock on a dedicated connection on
//!   PostgreSQL);
//! - `candidate_rows`: reading the launch candidates (PostgreSQL claims them `FOR UPDATE
//!   SKIP LOCKED` and skips messages whose lock is held);
//! - `orphaned_launches` and `held_lock_rows`: the reclaim's and the watchdog's reads, from
//!   the lease rows (SQLite) or from `pg_locks` (PostgreSQL).
//!
//! A macro rather than generics, as for the memory store: sqlx's traits would need the same
//! bounds repeated on every function, while here each backend gets plain, concrete code from
//! one source.

/// A launch candidate (`$1`: the start of the quiet window, `$3`: now): classified, an intent
/// in the whitelist, and either parked until a time now past (`retry_at`: an unavailable API),
/// or not parked and no spawn audit in the window.
pub(super) const CANDIDATE: &str =
    "e.status = 'classified' AND e.intent IN ('run', 'question', 'negociation', 'conseil')
    AND ((e.retry_at IS NOT NULL AND e.retry_at <= $3)
      OR (e.retry_at IS NULL AND NOT EXISTS (SELECT 1 FROM atlas_audits a WHERE a.email_id = e.id
        AND a.event IN ('spawn_started', 'spawn_action_done', 'spawn_failed') AND a.created_at >= $1)))";

/// The state row with what the list and the pipeline need from its raw message.
pub(super) const EMAIL_SELECT: &str =
    "SELECT e.*, r.message_id, r.message_key, r.from_email, r.subject, r.dkim_pass, r.dkim_detail, r.size
     FROM atlas_emails e JOIN atlas_raw_messages r ON r.id = e.raw_message_id";

/// `$first, $first+1, …` for `n` binds (an `IN (…)` list).
pub(super) fn placeholders(first: usize, n: usize) -> String {
    (first..first + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
}

/// The `AtlasStore` implementation for `$store`, a struct with a `pool` field and the
/// inherent methods listed above, over database `$db` whose rows are `$row`.
macro_rules! sql_atlas_store {
    ($store:ident, $db:ty, $row:ty) => {
        use super::rules;
        use super::sql::{placeholders, CANDIDATE, EMAIL_SELECT};

        type Tx = sqlx::Transaction<'static, $db>;
        type Conn = <$db as sqlx::Database>::Connection;

        fn parse_opt<T: std::str::FromStr>(row: &$row, column: &'static str) -> StoreResult<Option<T>> {
            let raw: Option<String> = row.try_get(column)?;
            raw.map(|v| v.parse::<T>().map_err(|_| AtlasStoreError::Corrupt { column, value: v.clone() })).transpose()
        }

        fn ts(row: &$row, column: &'static str) -> StoreResult<DateTime<Utc>> {
            let raw: String = row.try_get(column)?;
            from_db(&raw).ok_or(AtlasStoreError::Corrupt { column, value: raw })
        }

        fn opt_ts(row: &$row, column: &'static str) -> StoreResult<Option<DateTime<Utc>>> {
            Ok(row.try_get::<Option<String>, _>(column)?.as_deref().and_then(from_db))
        }

        fn state(raw: String) -> StoreResult<EmailState> {
            raw.parse().map_err(|_| AtlasStoreError::Corrupt { column: "status", value: raw })
        }

        fn email_row(row: &$row) -> StoreResult<EmailRow> {
            let materialised = rules::items()
                .iter()
                .find_map(|i| row.try_get::<Option<i64>, _>(i.column).ok().flatten().map(|id| (i.kind, id)));
            Ok(EmailRow {
                id: row.try_get("id")?,
                message_id: row.try_get("message_id")?,
                message_key: row.try_get("message_key")?,
                status: state(row.try_get("status")?)?,
                from_email: row.try_get("from_email")?,
                subject: row.try_get::<Option<String>, _>("subject")?.unwrap_or_default(),
                dkim_pass: row.try_get::<i64, _>("dkim_pass")? == 1,
                dkim_detail: row.try_get("dkim_detail")?,
                size: row.try_get("size")?,
                scan_verdict: row.try_get("scan_verdict")?,
                attachment_count: row.try_get("attachment_count")?,
                attempts: row.try_get("attempts")?,
                client_id: row.try_get("client_id")?,
                client_source: row.try_get("client_source")?,
                intent: parse_opt(row, "intent")?,
                complexity: parse_opt(row, "complexity")?,
                confidence: row.try_get("confidence")?,
                model: row.try_get("model")?,
                justification: row.try_get("justification")?,
                chantier_id: row.try_get("chantier_id")?,
                materialised,
                approved_at: opt_ts(row, "approved_at")?,
                retry_at: opt_ts(row, "retry_at")?,
                failing_since: opt_ts(row, "failing_since")?,
                launch_retries: row.try_get("launch_retries")?,
                created_at: ts(row, "created_at")?,
                updated_at: ts(row, "updated_at")?,
            })
        }

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

        /// `atlas_agents` as a [`Persona`] (the family parsed, the domains split).
        fn persona_from(row: &$row) -> StoreResult<Persona> {
            let group_name: String = row.try_get("group_name")?;
            let group = group_name
                .parse()
                .map_err(|_| AtlasStoreError::Corrupt { column: "atlas_agents.group_name", value: group_name.clone() })?;
            let domains: String = row.try_get("prompt_domains")?;
            Ok(Persona {
                codename: row.try_get("codename")?,
                nickname: row.try_get("nickname")?,
                role: row.try_get("role")?,
                group,
                orchestrator: row.try_get::<i64, _>("orchestrator")? == 1,
                heritage: row.try_get("heritage")?,
                cognitive_frame: row.try_get("cognitive_frame")?,
                personality: row.try_get("personality")?,
                quote: row.try_get("quote")?,
                inspiration: row.try_get("inspiration")?,
                proof: row.try_get("proof")?,
                job_mission: row.try_get("job_mission")?,
                job_perimeter: row.try_get("job_perimeter")?,
                job_key_checks: row.try_get("job_key_checks")?,
                prompt_domains: domains.split(',').map(str::trim).filter(|d| !d.is_empty()).map(str::to_string).collect(),
                active: row.try_get::<i64, _>("active")? == 1,
            })
        }

        /// `atlas_lessons`, its vector decoded (little-endian f32, as the souvenirs').
        fn lesson_from(row: &$row) -> StoreResult<StoredLesson> {
            let blob: Option<Vec<u8>> = row.try_get("embedding")?;
            let model: Option<String> = row.try_get("embedding_model")?;
            let embedding = match (blob, model) {
                (Some(bytes), Some(model)) => {
                    let vector = decode_vector(&bytes).ok_or_else(|| AtlasStoreError::Corrupt {
                        column: "atlas_lessons.embedding",
                        value: format!("{} bytes", bytes.len()),
                    })?;
                    Some((vector, model))
                }
                _ => None,
            };
            Ok(StoredLesson {
                id: row.try_get("id")?,
                agent_codename: row.try_get("agent_codename")?,
                text: row.try_get("text")?,
                created_at: ts(row, "created_at")?,
                embedding,
            })
        }

        async fn insert_audit(
            conn: &mut Conn,
            email_id: Option<i64>,
            event: &str,
            detail: &Value,
            now: &str,
        ) -> StoreResult<()> {
            sqlx::query("INSERT INTO atlas_audits (email_id, event, detail, created_at) VALUES ($1, $2, $3, $4)")
                .bind(email_id)
                .bind(event)
                .bind(detail.to_string())
                .bind(now)
                .execute(conn)
                .await?;
            Ok(())
        }

        async fn email_in(conn: &mut Conn, id: i64) -> StoreResult<Option<EmailRow>> {
            sqlx::query(&format!("{EMAIL_SELECT} WHERE e.id = $1"))
                .bind(id)
                .fetch_optional(conn)
                .await?
                .as_ref()
                .map(email_row)
                .transpose()
        }

        async fn load_client(pool: &sqlx::Pool<$db>, id: i64) -> StoreResult<Option<Client>> {
            let Some(row) =
                sqlx::query("SELECT * FROM atlas_clients WHERE id = $1").bind(id).fetch_optional(pool).await?
            else {
                return Ok(None);
            };
            let addresses =
                sqlx::query("SELECT kind, value FROM atlas_client_addresses WHERE client_id = $1 ORDER BY id")
                    .bind(id)
                    .fetch_all(pool)
                    .await?;
            let (mut emails, mut domains) = (Vec::new(), Vec::new());
            for a in addresses {
                let (kind, value): (String, String) = (a.try_get("kind")?, a.try_get("value")?);
                if kind == "email" {
                    emails.push(value)
                } else {
                    domains.push(value)
                }
            }
            Ok(Some(Client {
                id,
                name: row.try_get("name")?,
                mrr: row.try_get("mrr")?,
                status: row.try_get("status")?,
                priority: row.try_get("priority")?,
                emails,
                domains,
                ai_provider: row.try_get("ai_provider")?,
                ai_model: row.try_get("ai_model")?,
                claude_model: row.try_get("claude_model")?,
                auto_launch: row.try_get::<i64, _>("auto_launch")? == 1,
            }))
        }

        /// Marks what an e-mail materialised refused (`annule`) and audits it.
        async fn cancel_materialised(
            tx: &mut Conn,
            email_id: i64,
            (kind, id): (&'static str, i64),
            now: &str,
        ) -> StoreResult<()> {
            sqlx::query(&format!("UPDATE {} SET status = 'annule' WHERE id = $1", rules::item_table(kind)))
                .bind(id)
                .execute(&mut *tx)
                .await?;
            let detail = serde_json::json!({"kind": kind, "id": id});
            insert_audit(tx, Some(email_id), audit::CANCELLED_BY_FOUNDER, &detail, now).await
        }

        /// The one guarded write: `update`, whose `WHERE` holds the guard (the state the row
        /// must be in), then its audit — written only if the row moved, so the journal never
        /// tells of a change that a concurrent writer won. Whether it moved.
        async fn guarded<'q>(
            tx: &mut Conn,
            update: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>,
            email_id: Option<i64>,
            event: &str,
            detail: &Value,
            now: &str,
        ) -> StoreResult<bool> {
            let moved = update.execute(&mut *tx).await?.rows_affected() == 1;
            if moved {
                insert_audit(tx, email_id, event, detail, now).await?;
            }
            Ok(moved)
        }

        /// A guarded status change (`from` → `to`) and its audit; whether it happened.
        async fn move_state(
            tx: &mut Conn,
            id: i64,
            (from, to): (EmailState, EmailState),
            (event, detail): (&str, &Value),
            now: &str,
        ) -> StoreResult<bool> {
            let update = sqlx::query("UPDATE atlas_emails SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4")
                .bind(to.as_str())
                .bind(now)
                .bind(id)
                .bind(from.as_str());
            guarded(tx, update, Some(id), event, detail, now).await
        }

        #[async_trait]
        impl AtlasStore for $store {
            async fn insert_message(&self, msg: &NewMessage, now: DateTime<Utc>) -> StoreResult<Inserted> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
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

            async fn audit(
                &self,
                email_id: Option<i64>,
                event: &str,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                let mut conn = self.pool.acquire().await?;
                insert_audit(&mut conn, email_id, event, &detail, &to_db(now)).await
            }

            async fn emails_in(&self, states: &[EmailState], after_id: i64, limit: i64) -> StoreResult<Vec<EmailRow>> {
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
                q.bind(after_id).bind(limit).fetch_all(&self.pool).await?.iter().map(email_row).collect()
            }

            async fn email(&self, id: i64) -> StoreResult<Option<EmailRow>> {
                let mut conn = self.pool.acquire().await?;
                email_in(&mut conn, id).await
            }

            async fn raw(&self, id: i64) -> StoreResult<Option<Vec<u8>>> {
                Ok(sqlx::query_scalar(
                    "SELECT r.raw FROM atlas_emails e JOIN atlas_raw_messages r ON r.id = e.raw_message_id
                     WHERE e.id = $1",
                )
                .bind(id)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn record_scan(&self, id: i64, scan: &ScanRecord, now: DateTime<Utc>) -> StoreResult<bool> {
                let now = to_db(now);
                let status = rules::state_after_scan(scan.verdict);
                let mut tx: Tx = self.write_tx().await?;
                let update = sqlx::query(
                    "UPDATE atlas_emails SET status = $1, scan_verdict = $2, scanned_parts = $3, attachment_count = $4,
                       attempts = 0, retry_at = NULL, failing_since = NULL, updated_at = $5
                     WHERE id = $6 AND status = 'received'",
                )
                .bind(status.as_str())
                .bind(scan.verdict)
                .bind(scan.scanned_parts as i64)
                .bind(scan.attachments as i64)
                .bind(&now)
                .bind(id);
                let done = guarded(&mut tx, update, Some(id), audit::SCANNED, &scan.detail, &now).await?;
                if done {
                    if status == EmailState::Blocked {
                        insert_audit(&mut tx, Some(id), audit::CLASSIFY_BLOCKED_UNSAFE_ATTACHMENTS, &scan.detail, &now)
                            .await?;
                    }
                }
                tx.commit().await?;
                Ok(done)
            }

            async fn record_failure(&self, id: i64, f: &StepFailure, now: DateTime<Utc>) -> StoreResult<EmailState> {
                let mut tx: Tx = self.write_tx().await?;
                let row = sqlx::query("SELECT attempts, failing_since FROM atlas_emails WHERE id = $1 AND status = $2")
                    .bind(id)
                    .bind(f.from.as_str())
                    .fetch_optional(&mut *tx)
                    .await?;
                let Some(row) = row else {
                    let status: Option<String> = sqlx::query_scalar("SELECT status FROM atlas_emails WHERE id = $1")
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    return Ok(status.and_then(|s| s.parse().ok()).unwrap_or(f.from));
                };
                let plan = rules::plan_failure(row.try_get("attempts")?, opt_ts(&row, "failing_since")?, now, f.park_after);
                let state = rules::state_after_failure(&plan, f);
                let now_s = to_db(now);
                sqlx::query(
                    "UPDATE atlas_emails SET attempts = $1, failing_since = $2, retry_at = $3, status = $4, updated_at = $5
                     WHERE id = $6",
                )
                .bind(plan.attempts)
                .bind(to_db(plan.failing_since))
                .bind(plan.retry_at.map(to_db))
                .bind(state.as_str())
                .bind(&now_s)
                .bind(id)
                .execute(&mut *tx)
                .await?;
                insert_audit(&mut tx, Some(id), f.event, &rules::failure_detail(&f.detail, &plan, now), &now_s).await?;
                if state == f.terminal {
                    let detail = serde_json::json!({"state": state.as_str(), "after": f.event, "attempts": plan.attempts});
                    insert_audit(&mut tx, Some(id), audit::PARKED, &detail, &now_s).await?;
                }
                tx.commit().await?;
                Ok(state)
            }

            async fn due_in(
                &self,
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
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(email_row)
                    .collect()
            }

            async fn retry_parked(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<Requeue> {
                let mut tx: Tx = self.write_tx().await?;
                let status: Option<String> = sqlx::query_scalar("SELECT status FROM atlas_emails WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?;
                let Some(status) = status else { return Ok(Requeue::Missing) };
                let from = state(status)?;
                let to = match rules::requeue(from) {
                    Ok(to) => to,
                    Err(refused) => {
                        tx.commit().await?;
                        return Ok(refused);
                    }
                };
                let now = to_db(now);
                let update = sqlx::query(
                    "UPDATE atlas_emails SET status = $1, attempts = 0, retry_at = NULL, failing_since = NULL, updated_at = $2
                     WHERE id = $3 AND status = $4",
                )
                .bind(to.as_str())
                .bind(&now)
                .bind(id)
                .bind(from.as_str());
                let detail = rules::requeue_detail(detail, from, to);
                // Read and write are in one writer's transaction, so the row cannot move in
                // between; the guard still decides, and a row that did not move is not audited.
                let moved = guarded(&mut tx, update, Some(id), audit::RETRY_REQUESTED, &detail, &now).await?;
                tx.commit().await?;
                Ok(if moved { Requeue::Requeued { from, to } } else { Requeue::NotParked(from) })
            }

            async fn schedule_launch_retry(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let update = sqlx::query(
                    "UPDATE atlas_emails SET status = 'classified', launch_retries = launch_retries + 1, retry_at = NULL,
                       updated_at = $1
                     WHERE id = $2 AND status = 'spawned'",
                )
                .bind(&now)
                .bind(id);
                let done = guarded(&mut tx, update, Some(id), audit::RETRY_SCHEDULED, &detail, &now).await?;
                tx.commit().await?;
                Ok(done)
            }

            async fn park_launch(
                &self,
                id: i64,
                retry_at: DateTime<Utc>,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let retry_at = to_db(retry_at);
                let update = sqlx::query(
                    "UPDATE atlas_emails SET status = 'classified', attempts = attempts + 1, retry_at = $1,
                       failing_since = COALESCE(failing_since, $2), updated_at = $2
                     WHERE id = $3 AND status = 'spawned'",
                )
                .bind(&retry_at)
                .bind(&now)
                .bind(id);
                let done = guarded(&mut tx, update, Some(id), audit::RETRY_SCHEDULED, &detail, &now).await?;
                tx.commit().await?;
                Ok(done)
            }

            async fn record_classification(
                &self,
                id: i64,
                rec: &ClassificationRecord,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<Option<(&'static str, i64)>>> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let updated = sqlx::query(
                    "UPDATE atlas_emails SET status = 'classified', intent = $1, complexity = $2, confidence = $3,
                       model = $4, justification = $5, client_id = $6, client_source = $7, is_forward = $8,
                       chantier_id = $9, classified_at = $10, updated_at = $10, attempts = 0, retry_at = NULL,
                       failing_since = NULL
                     WHERE id = $11 AND status = 'scanned'",
                )
                .bind(rec.intent.as_str())
                .bind(rec.complexity.as_str())
                .bind(rec.confidence)
                .bind(&rec.model)
                .bind(&rec.justification)
                .bind(rec.client_id)
                .bind(rec.client_source)
                .bind(rec.is_forward as i64)
                .bind(rec.chantier_id)
                .bind(&now)
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if updated != 1 {
                    tx.commit().await?;
                    return Ok(None);
                }
                for (event, detail) in &rec.audits {
                    insert_audit(&mut tx, Some(id), event, detail, &now).await?;
                }
                let classified = serde_json::json!({
                    "intent": rec.intent.as_str(), "complexity": rec.complexity.as_str(),
                    "confidence": rec.confidence, "model": rec.model, "client_source": rec.client_source,
                });
                insert_audit(&mut tx, Some(id), audit::CLASSIFIED, &classified, &now).await?;
                let Some(item) = rules::item_of(rec.intent) else {
                    tx.commit().await?;
                    return Ok(Some(None));
                };
                // Exactly one table per intent; the UNIQUE(email_id) makes a replay a no-op.
                let upsert = "ON CONFLICT (email_id) DO UPDATE SET email_id = excluded.email_id RETURNING id";
                let sql = match rec.intent {
                    Intent::Run => format!(
                        "INSERT INTO atlas_runs (email_id, client_id, chantier_id, complexity, created_at)
                         VALUES ($1, $2, $3, $4, $5) {upsert}"
                    ),
                    Intent::Question => format!(
                        "INSERT INTO atlas_questions (email_id, client_id, chantier_id, created_at)
                         VALUES ($1, $2, $3, $4) {upsert}"
                    ),
                    _ => format!(
                        "INSERT INTO {} (email_id, client_id, created_at) VALUES ($1, $2, $3) {upsert}",
                        item.table
                    ),
                };
                let mut q = sqlx::query_scalar::<_, i64>(&sql).bind(id).bind(rec.client_id);
                match rec.intent {
                    Intent::Run => q = q.bind(rec.chantier_id).bind(rec.complexity.as_str()),
                    Intent::Question => q = q.bind(rec.chantier_id),
                    _ => {}
                }
                let item_id = q.bind(&now).fetch_one(&mut *tx).await?;
                sqlx::query(&format!("UPDATE atlas_emails SET {} = $1 WHERE id = $2", item.column))
                    .bind(item_id)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                let materialised = serde_json::json!({"kind": item.kind, "id": item_id});
                insert_audit(&mut tx, Some(id), audit::MATERIALISED, &materialised, &now).await?;
                if let Some(chantier) = rec.chantier_id {
                    let detail = serde_json::json!({"chantier_id": chantier});
                    insert_audit(&mut tx, Some(id), audit::CHANTIER_LINKED, &detail, &now).await?;
                }
                tx.commit().await?;
                Ok(Some(Some((item.kind, item_id))))
            }

            async fn retry_failed(&self, now: DateTime<Utc>) -> StoreResult<u64> {
                Ok(sqlx::query(
                    "UPDATE atlas_emails SET status = 'scanned', attempts = 0, retry_at = NULL, failing_since = NULL,
                       updated_at = $1
                     WHERE status = 'classify_failed'",
                )
                .bind(to_db(now))
                .execute(&self.pool)
                .await?
                .rows_affected())
            }

            async fn add_client(&self, client: &NewClient, now: DateTime<Utc>) -> StoreResult<i64> {
                let addresses = rules::client_addresses(client)?;
                let mut tx: Tx = self.write_tx().await?;
                let id: Option<i64> = sqlx::query_scalar(
                    "INSERT INTO atlas_clients
                       (name, mrr, status, priority, ai_provider, ai_model, claude_model, auto_launch, created_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                     ON CONFLICT (name) DO NOTHING RETURNING id",
                )
                .bind(client.name.trim())
                .bind(client.mrr)
                .bind(client.status.as_deref().unwrap_or("actif"))
                .bind(client.priority.as_deref().unwrap_or("normale"))
                .bind(&client.ai_provider)
                .bind(&client.ai_model)
                .bind(&client.claude_model)
                .bind(client.auto_launch as i64)
                .bind(to_db(now))
                .fetch_optional(&mut *tx)
                .await?;
                let Some(id) = id else {
                    return Err(AtlasStoreError::DuplicateClient(client.name.clone()));
                };
                for (kind, value) in addresses {
                    let inserted = sqlx::query(
                        "INSERT INTO atlas_client_addresses (client_id, kind, value) VALUES ($1, $2, $3)
                         ON CONFLICT (value) DO NOTHING",
                    )
                    .bind(id)
                    .bind(kind)
                    .bind(&value)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    if inserted == 0 {
                        // Dropping the transaction rolls the client back too.
                        return Err(AtlasStoreError::DuplicateAddress(value));
                    }
                }
                tx.commit().await?;
                Ok(id)
            }

            async fn clients(&self) -> StoreResult<Vec<Client>> {
                let ids: Vec<i64> =
                    sqlx::query_scalar("SELECT id FROM atlas_clients ORDER BY name").fetch_all(&self.pool).await?;
                let mut out = Vec::new();
                for id in ids {
                    out.extend(load_client(&self.pool, id).await?);
                }
                Ok(out)
            }

            async fn client(&self, id: i64) -> StoreResult<Option<Client>> {
                load_client(&self.pool, id).await
            }

            async fn client_for(&self, addr: &EmailAddress) -> StoreResult<Option<Client>> {
                let by = |kind: &'static str, value: String| async move {
                    sqlx::query_scalar::<_, i64>(
                        "SELECT client_id FROM atlas_client_addresses WHERE kind = $1 AND value = $2",
                    )
                    .bind(kind)
                    .bind(value)
                    .fetch_optional(&self.pool)
                    .await
                };
                let id = match by("email", addr.as_str().to_string()).await? {
                    Some(id) => Some(id),
                    None if rules::domain_identifies(addr) => by("domain", addr.domain().to_string()).await?,
                    None => None,
                };
                match id {
                    Some(id) => load_client(&self.pool, id).await,
                    None => Ok(None),
                }
            }

            async fn add_chantier(&self, name: &str, client_id: Option<i64>, now: DateTime<Utc>) -> StoreResult<i64> {
                Ok(sqlx::query_scalar(
                    "INSERT INTO atlas_chantiers (name, client_id, created_at) VALUES ($1, $2, $3) RETURNING id",
                )
                .bind(name)
                .bind(client_id)
                .bind(to_db(now))
                .fetch_one(&self.pool)
                .await?)
            }

            async fn open_chantiers(&self, client_id: Option<i64>) -> StoreResult<Vec<(i64, String)>> {
                Ok(sqlx::query_as(
                    "SELECT id, name FROM atlas_chantiers WHERE status = 'ouvert' AND client_id IS NOT DISTINCT FROM $1
                     ORDER BY id",
                )
                .bind(client_id)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn audits(&self, email_id: i64) -> StoreResult<Vec<AuditRow>> {
                let rows = sqlx::query("SELECT * FROM atlas_audits WHERE email_id = $1 ORDER BY id")
                    .bind(email_id)
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter()
                    .map(|r| {
                        let detail: String = r.try_get("detail")?;
                        Ok(AuditRow {
                            id: r.try_get("id")?,
                            email_id: r.try_get("email_id")?,
                            event: r.try_get("event")?,
                            detail: serde_json::from_str(&detail).unwrap_or(Value::String(detail)),
                            created_at: ts(r, "created_at")?,
                        })
                    })
                    .collect()
            }

            async fn list(&self, state: Option<EmailState>) -> StoreResult<Vec<EmailRow>> {
                let rows = match state {
                    Some(s) => {
                        sqlx::query(&format!("{EMAIL_SELECT} WHERE e.status = $1 ORDER BY e.id"))
                            .bind(s.as_str())
                            .fetch_all(&self.pool)
                            .await?
                    }
                    None => sqlx::query(&format!("{EMAIL_SELECT} ORDER BY e.id")).fetch_all(&self.pool).await?,
                };
                rows.iter().map(email_row).collect()
            }

            async fn report_data(&self, since: DateTime<Utc>) -> StoreResult<ReportData> {
                let since = to_db(since);
                let mut data = ReportData::default();
                let rows = sqlx::query(
                    "SELECT intent, complexity, confidence, client_id FROM atlas_emails
                     WHERE classified_at >= $1 AND intent IS NOT NULL ORDER BY id",
                )
                .bind(&since)
                .fetch_all(&self.pool)
                .await?;
                for r in &rows {
                    let intent: Option<Intent> = parse_opt(r, "intent")?;
                    let complexity: Option<Complexity> = parse_opt(r, "complexity")?;
                    if let Some(intent) = intent {
                        data.classified.push((
                            intent,
                            complexity.unwrap_or(Complexity::Leger),
                            r.try_get::<Option<f64>, _>("confidence")?.unwrap_or(0.0),
                            r.try_get("client_id")?,
                        ));
                    }
                }
                let counts: Vec<(String, i64)> =
                    sqlx::query_as("SELECT event, COUNT(*) FROM atlas_audits WHERE created_at >= $1 GROUP BY event")
                        .bind(&since)
                        .fetch_all(&self.pool)
                        .await?;
                data.audit_counts = counts.into_iter().collect();
                let items = sqlx::query(
                    "SELECT 'run' AS kind, complexity, status, client_id FROM atlas_runs WHERE created_at >= $1
                     UNION ALL SELECT 'question', NULL, status, client_id FROM atlas_questions WHERE created_at >= $1
                     UNION ALL SELECT 'negociation', NULL, status, client_id FROM atlas_negociations WHERE created_at >= $1
                     UNION ALL SELECT 'conseil', NULL, status, client_id FROM atlas_conseils WHERE created_at >= $1",
                )
                .bind(&since)
                .fetch_all(&self.pool)
                .await?;
                for r in &items {
                    let kind: Option<Intent> = parse_opt(r, "kind")?;
                    let complexity: Option<Complexity> = parse_opt(r, "complexity")?;
                    let client: Option<i64> = r.try_get("client_id")?;
                    if let Some(kind) = kind {
                        data.items.push((kind, complexity, r.try_get("status")?, client.is_none()));
                    }
                }
                Ok(data)
            }

            async fn launch_candidates(
                &self,
                quiet_since: DateTime<Utc>,
                now: DateTime<Utc>,
                limit: i64,
            ) -> StoreResult<Vec<EmailRow>> {
                self.candidate_rows(&to_db(quiet_since), &to_db(now), limit).await?.iter().map(email_row).collect()
            }

            async fn still_candidate(&self, id: i64, quiet_since: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<bool> {
                let sql = format!("SELECT e.id FROM atlas_emails e WHERE {CANDIDATE} AND e.id = $2");
                let found: Option<i64> = sqlx::query_scalar(&sql)
                    .bind(to_db(quiet_since))
                    .bind(id)
                    .bind(to_db(now))
                    .fetch_optional(&self.pool)
                    .await?;
                Ok(found.is_some())
            }

            async fn try_lease(
                &self,
                email_id: i64,
                holder: &str,
                now: DateTime<Utc>,
                ttl: chrono::Duration,
            ) -> StoreResult<bool> {
                self.lock_launch(email_id, holder, now, ttl).await
            }

            async fn renew_lease(
                &self,
                email_id: i64,
                holder: &str,
                now: DateTime<Utc>,
                ttl: chrono::Duration,
            ) -> StoreResult<bool> {
                self.renew_launch_lock(email_id, holder, now, ttl).await
            }

            async fn release_lease(&self, email_id: i64, holder: &str) -> StoreResult<()> {
                self.unlock_launch(email_id, holder).await
            }

            async fn old_leases(
                &self,
                acquired_before: DateTime<Utc>,
            ) -> StoreResult<Vec<(i64, String, DateTime<Utc>)>> {
                let rows = self.held_lock_rows(&to_db(acquired_before)).await?;
                rows.iter().map(|r| Ok((r.try_get("email_id")?, r.try_get("holder")?, ts(r, "since")?))).collect()
            }

            async fn reclaim_interrupted(&self, now: DateTime<Utc>) -> StoreResult<Vec<i64>> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let orphans = Self::orphaned_launches(&mut tx, &now).await?;
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

            async fn transition(
                &self,
                id: i64,
                from: EmailState,
                to: EmailState,
                event: &str,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let done = move_state(&mut tx, id, (from, to), (event, &detail), &now).await?;
                tx.commit().await?;
                Ok(done)
            }

            async fn correct_intent(
                &self,
                id: i64,
                intent: Intent,
                complexity: Complexity,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let before: (Option<String>, Option<String>) =
                    sqlx::query_as("SELECT intent, complexity FROM atlas_emails WHERE id = $1")
                        .bind(id)
                        .fetch_one(&mut *tx)
                        .await?;
                sqlx::query("UPDATE atlas_emails SET intent = $1, complexity = $2, updated_at = $3 WHERE id = $4")
                    .bind(intent.as_str())
                    .bind(complexity.as_str())
                    .bind(&now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                let detail = serde_json::json!({"from": {"intent": before.0, "complexity": before.1},
                                                "to": {"intent": intent.as_str(), "complexity": complexity.as_str()}});
                insert_audit(&mut tx, Some(id), audit::INTENT_DOWNGRADED, &detail, &now).await?;
                tx.commit().await?;
                Ok(())
            }

            async fn start_launch(&self, l: &NewLaunch, now: DateTime<Utc>) -> StoreResult<i64> {
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
                .fetch_one(&self.pool)
                .await?)
            }

            async fn append_events(
                &self,
                launch_id: i64,
                events: &[JournalEvent],
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                if events.is_empty() {
                    return Ok(());
                }
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
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

            async fn finish_launch(&self, launch_id: i64, end: &LaunchEnd, now: DateTime<Utc>) -> StoreResult<()> {
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
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn launches(&self, email_id: i64) -> StoreResult<Vec<LaunchRow>> {
                sqlx::query("SELECT * FROM atlas_launches WHERE email_id = $1 ORDER BY id")
                    .bind(email_id)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(launch_row)
                    .collect()
            }

            async fn launch_events(&self, launch_id: i64) -> StoreResult<Vec<JournalEvent>> {
                let rows = sqlx::query(
                    "SELECT seq, type, subtype, tool_name, payload FROM atlas_launch_events WHERE launch_id = $1
                     ORDER BY seq",
                )
                .bind(launch_id)
                .fetch_all(&self.pool)
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

            async fn cancel_item(
                &self,
                email_id: i64,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<(&'static str, i64)>> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let Some(row) = email_in(&mut tx, email_id).await? else { return Ok(None) };
                let Some(item) = row.materialised else { return Ok(None) };
                cancel_materialised(&mut tx, email_id, item, &now).await?;
                tx.commit().await?;
                Ok(Some(item))
            }

            async fn add_draft(
                &self,
                email_id: i64,
                text: &str,
                provider: &str,
                model: &str,
                now: DateTime<Utc>,
            ) -> StoreResult<i64> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
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

            async fn drafts(&self, email_id: i64) -> StoreResult<Vec<(i64, String, String, String, DateTime<Utc>)>> {
                let rows = sqlx::query("SELECT * FROM atlas_drafts WHERE email_id = $1 ORDER BY id")
                    .bind(email_id)
                    .fetch_all(&self.pool)
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

            async fn set_auto_launch(&self, client_id: i64, allowed: bool, now: DateTime<Utc>) -> StoreResult<bool> {
                let mut tx: Tx = self.write_tx().await?;
                let update =
                    sqlx::query("UPDATE atlas_clients SET auto_launch = $1 WHERE id = $2").bind(allowed as i64).bind(client_id);
                let detail = serde_json::json!({"client_id": client_id, "auto_launch": allowed});
                let done = guarded(&mut tx, update, None, audit::CLIENT_AUTO_LAUNCH, &detail, &to_db(now)).await?;
                tx.commit().await?;
                Ok(done)
            }

            async fn approve_launch(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let update = sqlx::query(
                    "UPDATE atlas_emails SET status = 'classified', approved_at = $1, updated_at = $1
                     WHERE id = $2 AND status = 'awaiting_approval'",
                )
                .bind(&now)
                .bind(id);
                let done = guarded(&mut tx, update, Some(id), audit::LAUNCH_APPROVED, &detail, &now).await?;
                tx.commit().await?;
                Ok(done)
            }

            async fn refuse_launch(
                &self,
                id: i64,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<Option<(&'static str, i64)>>> {
                let now = to_db(now);
                let mut tx: Tx = self.write_tx().await?;
                let moves = (EmailState::AwaitingApproval, EmailState::Cancelled);
                if !move_state(&mut tx, id, moves, (audit::LAUNCH_REFUSED, &detail), &now).await? {
                    tx.commit().await?;
                    return Ok(None);
                }
                let item = email_in(&mut tx, id).await?.and_then(|row| row.materialised);
                if let Some(item) = item {
                    cancel_materialised(&mut tx, id, item, &now).await?;
                }
                tx.commit().await?;
                Ok(Some(item))
            }

            async fn state_counts(&self) -> StoreResult<Vec<(EmailState, i64)>> {
                let rows: Vec<(String, i64)> =
                    sqlx::query_as("SELECT status, COUNT(*) FROM atlas_emails GROUP BY status ORDER BY status")
                        .fetch_all(&self.pool)
                        .await?;
                rows.into_iter().map(|(s, n)| Ok((state(s)?, n))).collect()
            }

            async fn claim_notice(&self, n: &NewNotice, now: DateTime<Utc>) -> StoreResult<Option<i64>> {
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
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn try_notice(&self, id: i64, retry_before: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<bool> {
                Ok(sqlx::query(
                    "UPDATE atlas_notices SET attempts = attempts + 1, last_try_at = $1
                     WHERE id = $2 AND sent_at IS NULL AND (last_try_at IS NULL OR last_try_at < $3)",
                )
                .bind(to_db(now))
                .bind(id)
                .bind(to_db(retry_before))
                .execute(&self.pool)
                .await?
                .rows_affected()
                    == 1)
            }

            async fn finish_notice(&self, id: i64, error: Option<&str>, now: DateTime<Utc>) -> StoreResult<()> {
                let mut tx: Tx = self.write_tx().await?;
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

            async fn unsent_notices(&self, max_attempts: i64, limit: i64) -> StoreResult<Vec<NoticeRow>> {
                sqlx::query("SELECT * FROM atlas_notices WHERE sent_at IS NULL AND attempts < $1 ORDER BY id LIMIT $2")
                    .bind(max_attempts)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(notice_row)
                    .collect()
            }

            async fn notices(&self, email_id: Option<i64>) -> StoreResult<Vec<NoticeRow>> {
                let rows = match email_id {
                    Some(id) => {
                        sqlx::query("SELECT * FROM atlas_notices WHERE email_id = $1 ORDER BY id")
                            .bind(id)
                            .fetch_all(&self.pool)
                            .await?
                    }
                    None => sqlx::query("SELECT * FROM atlas_notices ORDER BY id").fetch_all(&self.pool).await?,
                };
                rows.iter().map(notice_row).collect()
            }

            async fn agent(&self, codename: &str) -> StoreResult<Option<Persona>> {
                sqlx::query("SELECT * FROM atlas_agents WHERE codename = $1")
                    .bind(codename)
                    .fetch_optional(&self.pool)
                    .await?
                    .as_ref()
                    .map(persona_from)
                    .transpose()
            }

            async fn active_agents(&self) -> StoreResult<Vec<Persona>> {
                sqlx::query("SELECT * FROM atlas_agents WHERE active = 1 ORDER BY orchestrator DESC, codename")
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(persona_from)
                    .collect()
            }

            async fn lessons(&self, codename: &str) -> StoreResult<Vec<StoredLesson>> {
                sqlx::query(
                    "SELECT id, agent_codename, text, embedding, embedding_model, created_at FROM atlas_lessons
                     WHERE agent_codename = $1 OR agent_codename IS NULL ORDER BY id",
                )
                .bind(codename)
                .fetch_all(&self.pool)
                .await?
                .iter()
                .map(lesson_from)
                .collect()
            }

            async fn add_lesson(&self, codename: Option<&str>, text: &str, now: DateTime<Utc>) -> StoreResult<i64> {
                Ok(sqlx::query_scalar(
                    "INSERT INTO atlas_lessons (agent_codename, text, created_at) VALUES ($1, $2, $3) RETURNING id",
                )
                .bind(codename)
                .bind(text)
                .bind(to_db(now))
                .fetch_one(&self.pool)
                .await?)
            }

            async fn upsert_agents(&self, agents: &[Persona]) -> StoreResult<u64> {
                const TEXTS: [&str; 14] = [
                    "nickname", "role", "group_name", "orchestrator", "heritage", "cognitive_frame", "personality",
                    "quote", "inspiration", "proof", "job_mission", "job_perimeter", "job_key_checks",
                    "prompt_domains",
                ];
                let sql = format!(
                    "INSERT INTO atlas_agents (codename, {columns}) VALUES ({values})
                     ON CONFLICT (codename) DO UPDATE SET {set} WHERE {changed}",
                    columns = TEXTS.join(", "),
                    values = placeholders(1, TEXTS.len() + 1),
                    set = TEXTS.map(|c| format!("{c} = excluded.{c}")).join(", "),
                    changed = TEXTS.map(|c| format!("atlas_agents.{c} <> excluded.{c}")).join(" OR "),
                );
                let mut tx: Tx = self.write_tx().await?;
                let mut written = 0;
                for p in agents {
                    written += sqlx::query(&sql)
                        .bind(&p.codename)
                        .bind(&p.nickname)
                        .bind(&p.role)
                        .bind(p.group.as_str())
                        .bind(p.orchestrator as i64)
                        .bind(&p.heritage)
                        .bind(&p.cognitive_frame)
                        .bind(&p.personality)
                        .bind(&p.quote)
                        .bind(&p.inspiration)
                        .bind(&p.proof)
                        .bind(&p.job_mission)
                        .bind(&p.job_perimeter)
                        .bind(&p.job_key_checks)
                        .bind(p.prompt_domains.join(","))
                        .execute(&mut *tx)
                        .await?
                        .rows_affected();
                }
                tx.commit().await?;
                Ok(written)
            }

            async fn set_lesson_vectors(&self, vectors: &[(i64, &[f32])], model: &str) -> StoreResult<()> {
                let mut tx: Tx = self.write_tx().await?;
                for (id, vector) in vectors {
                    sqlx::query("UPDATE atlas_lessons SET embedding = $1, embedding_model = $2 WHERE id = $3")
                        .bind(encode_vector(vector))
                        .bind(model)
                        .bind(id)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(())
            }
        }
    };
}

pub(super) use sql_atlas_store;
