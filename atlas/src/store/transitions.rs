//! The pipeline's steps on a message's state row: each a guarded transition (`guarded`, in
//! `super::sql`) decided with `super::rules` and audited in the same transaction, so that
//! replaying a step, a crash or a second worker only repeats a no-op.
//!
//! Written once for both backends ([`sql_transitions!`] expands in each, as `super::sql` says).

/// The `transitions` module of a backend (the pipeline's transitions): the functions `AtlasStore`'s
/// methods call, on the backend's store.
macro_rules! sql_transitions {
    ($store:ident, $db:ty, $row:ty) => {
        mod transitions {
            use super::*;

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

            pub(super) async fn record_scan(
                store: &$store,
                id: i64,
                scan: &ScanRecord,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let now = to_db(now);
                let status = rules::state_after_scan(scan.verdict);
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn record_failure(
                store: &$store,
                id: i64,
                f: &StepFailure,
                now: DateTime<Utc>,
            ) -> StoreResult<EmailState> {
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn retry_parked(
                store: &$store,
                id: i64,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<Requeue> {
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn schedule_launch_retry(
                store: &$store,
                id: i64,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn park_launch(
                store: &$store,
                id: i64,
                retry_at: DateTime<Utc>,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn record_classification(
                store: &$store,
                id: i64,
                rec: &ClassificationRecord,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<Option<(&'static str, i64)>>> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn retry_failed(store: &$store, now: DateTime<Utc>) -> StoreResult<u64> {
                Ok(sqlx::query(
                    "UPDATE atlas_emails SET status = 'scanned', attempts = 0, retry_at = NULL, failing_since = NULL,
                       updated_at = $1
                     WHERE status = 'classify_failed'",
                )
                .bind(to_db(now))
                .execute(&store.pool)
                .await?
                .rows_affected())
            }

            pub(super) async fn transition(
                store: &$store,
                id: i64,
                from: EmailState,
                to: EmailState,
                event: &str,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
                let done = move_state(&mut tx, id, (from, to), (event, &detail), &now).await?;
                tx.commit().await?;
                Ok(done)
            }

            pub(super) async fn correct_intent(
                store: &$store,
                id: i64,
                intent: Intent,
                complexity: Complexity,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn cancel_item(
                store: &$store,
                email_id: i64,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<(&'static str, i64)>> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
                let Some(row) = email_in(&mut tx, email_id).await? else { return Ok(None) };
                let Some(item) = row.materialised else { return Ok(None) };
                cancel_materialised(&mut tx, email_id, item, &now).await?;
                tx.commit().await?;
                Ok(Some(item))
            }

            pub(super) async fn approve_launch(
                store: &$store,
                id: i64,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn refuse_launch(
                store: &$store,
                id: i64,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<Option<(&'static str, i64)>>> {
                let now = to_db(now);
                let mut tx: Tx = store.write_tx().await?;
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
        }
    };
}

pub(super) use sql_transitions;
