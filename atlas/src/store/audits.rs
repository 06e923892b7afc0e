//! The audit journal of the pipeline, and the calibration report counted from it and from the
//! materialised items.
//!
//! Written once for both backends ([`sql_audits!`] expands in each, as `super::sql` says).

/// The `audits` module of a backend (the journal and the report): the functions `AtlasStore`'s
/// methods call, on the backend's store.
macro_rules! sql_audits {
    ($store:ident, $db:ty, $row:ty) => {
        mod audits {
            use super::*;

            pub(super) async fn audit(
                store: &$store,
                email_id: Option<i64>,
                event: &str,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                let mut conn = store.pool.acquire().await?;
                insert_audit(&mut conn, email_id, event, &detail, &to_db(now)).await
            }

            pub(super) async fn audits(store: &$store, email_id: i64) -> StoreResult<Vec<AuditRow>> {
                let rows = sqlx::query("SELECT * FROM atlas_audits WHERE email_id = $1 ORDER BY id")
                    .bind(email_id)
                    .fetch_all(&store.pool)
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

            pub(super) async fn report_data(store: &$store, since: DateTime<Utc>) -> StoreResult<ReportData> {
                let since = to_db(since);
                let mut data = ReportData::default();
                let rows = sqlx::query(
                    "SELECT intent, complexity, confidence, client_id FROM atlas_emails
                     WHERE classified_at >= $1 AND intent IS NOT NULL ORDER BY id",
                )
                .bind(&since)
                .fetch_all(&store.pool)
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
                        .fetch_all(&store.pool)
                        .await?;
                data.audit_counts = counts.into_iter().collect();
                let items = sqlx::query(
                    "SELECT 'run' AS kind, complexity, status, client_id FROM atlas_runs WHERE created_at >= $1
                     UNION ALL SELECT 'question', NULL, status, client_id FROM atlas_questions WHERE created_at >= $1
                     UNION ALL SELECT 'negociation', NULL, status, client_id FROM atlas_negociations WHERE created_at >= $1
                     UNION ALL SELECT 'conseil', NULL, status, client_id FROM atlas_conseils WHERE created_at >= $1",
                )
                .bind(&since)
                .fetch_all(&store.pool)
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
        }
    };
}

pub(super) use sql_audits;
