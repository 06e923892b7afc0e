//! Atlas' SQL, written once for both backends: every query (with `$N` placeholders, which
//! SQLite accepts too — repeated and out of order, tested in `sqlite`), every row decoding,
//! and the sequence of each guarded write (read, decide with [`super::rules`], write, audit)
//! in one transaction. This file holds what every part shares — the row decoding of a
//! message, the audit, and the one guarded write [`sql_atlas_store!`]'s `guarded` — and the
//! `AtlasStore` implementation, each method handed to the part of the store it belongs to,
//! one file per aggregate: `messages` (intake and reads), `transitions` (the pipeline's
//! steps on a message), `audits` (the journal and the report), `clients`, `launches`,
//! `notices` and `personas`.
//!
//! A backend module holds only what really differs, as inherent methods the parts call:
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
//! Macros rather than generics, as for the memory store: sqlx's traits would need the same
//! bounds repeated on every function, while here each backend gets plain, concrete code from
//! one source. Each part's macro expands to a module of the backend's (`messages`, …) whose
//! functions take the store.

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
        use super::launches::{Lease, CANDIDATE};
        use super::rules;
        use super::sql::{placeholders, EMAIL_SELECT};

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
            let update =
                sqlx::query("UPDATE atlas_emails SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4")
                    .bind(to.as_str())
                    .bind(now)
                    .bind(id)
                    .bind(from.as_str());
            guarded(tx, update, Some(id), event, detail, now).await
        }

        impl $store {
            /// Migrates Atlas' tables on `pool` (the database Arthur's memory is in) and
            /// upserts the seeded personas (`crate::roster::seeds`); then the store.
            pub async fn open(pool: sqlx::Pool<$db>) -> StoreResult<Self> {
                MIGRATOR.run(&pool).await?;
                let store = Self::new(pool);
                crate::store::AtlasStore::upsert_agents(
                    &store,
                    &crate::roster::seeds().map_err(AtlasStoreError::Seeds)?,
                )
                .await?;
                Ok(store)
            }

            pub fn pool(&self) -> &sqlx::Pool<$db> {
                &self.pool
            }
        }

        super::messages::sql_messages!($store, $db, $row);
        super::transitions::sql_transitions!($store, $db, $row);
        super::audits::sql_audits!($store, $db, $row);
        super::clients::sql_clients!($store, $db, $row);
        super::launches::sql_launches!($store, $db, $row);
        super::notices::sql_notices!($store, $db, $row);
        super::personas::sql_personas!($store, $db, $row);

        #[async_trait]
        impl AtlasStore for $store {
            async fn insert_message(&self, msg: &NewMessage, now: DateTime<Utc>) -> StoreResult<Inserted> {
                messages::insert_message(self, msg, now).await
            }

            async fn audit(
                &self,
                email_id: Option<i64>,
                event: &str,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                audits::audit(self, email_id, event, detail, now).await
            }

            async fn emails_in(&self, states: &[EmailState], after_id: i64, limit: i64) -> StoreResult<Vec<EmailRow>> {
                messages::emails_in(self, states, after_id, limit).await
            }

            async fn email(&self, id: i64) -> StoreResult<Option<EmailRow>> {
                messages::email(self, id).await
            }

            async fn raw(&self, id: i64) -> StoreResult<Option<Vec<u8>>> {
                messages::raw(self, id).await
            }

            async fn record_scan(&self, id: i64, scan: &ScanRecord, now: DateTime<Utc>) -> StoreResult<bool> {
                transitions::record_scan(self, id, scan, now).await
            }

            async fn record_failure(&self, id: i64, f: &StepFailure, now: DateTime<Utc>) -> StoreResult<EmailState> {
                transitions::record_failure(self, id, f, now).await
            }

            async fn due_in(
                &self,
                states: &[EmailState],
                after_id: i64,
                limit: i64,
                now: DateTime<Utc>,
            ) -> StoreResult<Vec<EmailRow>> {
                messages::due_in(self, states, after_id, limit, now).await
            }

            async fn retry_parked(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<Requeue> {
                transitions::retry_parked(self, id, detail, now).await
            }

            async fn schedule_launch_retry(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<bool> {
                transitions::schedule_launch_retry(self, id, detail, now).await
            }

            async fn park_launch(
                &self,
                id: i64,
                retry_at: DateTime<Utc>,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                transitions::park_launch(self, id, retry_at, detail, now).await
            }

            async fn record_classification(
                &self,
                id: i64,
                rec: &ClassificationRecord,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<Option<(&'static str, i64)>>> {
                transitions::record_classification(self, id, rec, now).await
            }

            async fn retry_failed(&self, now: DateTime<Utc>) -> StoreResult<u64> {
                transitions::retry_failed(self, now).await
            }

            async fn add_client(&self, client: &NewClient, now: DateTime<Utc>) -> StoreResult<i64> {
                clients::add_client(self, client, now).await
            }

            async fn clients(&self) -> StoreResult<Vec<Client>> {
                clients::clients(self).await
            }

            async fn client(&self, id: i64) -> StoreResult<Option<Client>> {
                clients::client(self, id).await
            }

            async fn client_for(&self, addr: &EmailAddress) -> StoreResult<Option<Client>> {
                clients::client_for(self, addr).await
            }

            async fn add_chantier(&self, name: &str, client_id: Option<i64>, now: DateTime<Utc>) -> StoreResult<i64> {
                clients::add_chantier(self, name, client_id, now).await
            }

            async fn open_chantiers(&self, client_id: Option<i64>) -> StoreResult<Vec<(i64, String)>> {
                clients::open_chantiers(self, client_id).await
            }

            async fn audits(&self, email_id: i64) -> StoreResult<Vec<AuditRow>> {
                audits::audits(self, email_id).await
            }

            async fn list(&self, state: Option<EmailState>) -> StoreResult<Vec<EmailRow>> {
                messages::list(self, state).await
            }

            async fn report_data(&self, since: DateTime<Utc>) -> StoreResult<ReportData> {
                audits::report_data(self, since).await
            }

            async fn launch_candidates(
                &self,
                quiet_since: DateTime<Utc>,
                now: DateTime<Utc>,
                limit: i64,
            ) -> StoreResult<Vec<EmailRow>> {
                launches::launch_candidates(self, quiet_since, now, limit).await
            }

            async fn still_candidate(
                &self,
                id: i64,
                quiet_since: DateTime<Utc>,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                launches::still_candidate(self, id, quiet_since, now).await
            }

            async fn try_lease(
                &self,
                email_id: i64,
                holder: &str,
                now: DateTime<Utc>,
                ttl: chrono::Duration,
            ) -> StoreResult<bool> {
                self.lock_launch(Lease { email_id, holder, now, ttl }).await
            }

            async fn renew_lease(
                &self,
                email_id: i64,
                holder: &str,
                now: DateTime<Utc>,
                ttl: chrono::Duration,
            ) -> StoreResult<bool> {
                self.renew_launch_lock(Lease { email_id, holder, now, ttl }).await
            }

            async fn release_lease(&self, email_id: i64, holder: &str) -> StoreResult<()> {
                self.unlock_launch(email_id, holder).await
            }

            async fn old_leases(
                &self,
                acquired_before: DateTime<Utc>,
            ) -> StoreResult<Vec<(i64, String, DateTime<Utc>)>> {
                launches::old_leases(self, acquired_before).await
            }

            async fn reclaim_interrupted(&self, now: DateTime<Utc>) -> StoreResult<Vec<i64>> {
                launches::reclaim_interrupted(self, now).await
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
                transitions::transition(self, id, from, to, event, detail, now).await
            }

            async fn correct_intent(
                &self,
                id: i64,
                intent: Intent,
                complexity: Complexity,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                transitions::correct_intent(self, id, intent, complexity, now).await
            }

            async fn start_launch(&self, l: &NewLaunch, now: DateTime<Utc>) -> StoreResult<i64> {
                launches::start_launch(self, l, now).await
            }

            async fn append_events(
                &self,
                launch_id: i64,
                events: &[JournalEvent],
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                launches::append_events(self, launch_id, events, now).await
            }

            async fn finish_launch(&self, launch_id: i64, end: &LaunchEnd, now: DateTime<Utc>) -> StoreResult<()> {
                launches::finish_launch(self, launch_id, end, now).await
            }

            async fn launches(&self, email_id: i64) -> StoreResult<Vec<LaunchRow>> {
                launches::launches(self, email_id).await
            }

            async fn launch_events(&self, launch_id: i64) -> StoreResult<Vec<JournalEvent>> {
                launches::launch_events(self, launch_id).await
            }

            async fn cancel_item(&self, email_id: i64, now: DateTime<Utc>) -> StoreResult<Option<(&'static str, i64)>> {
                transitions::cancel_item(self, email_id, now).await
            }

            async fn add_draft(
                &self,
                email_id: i64,
                text: &str,
                provider: &str,
                model: &str,
                now: DateTime<Utc>,
            ) -> StoreResult<i64> {
                messages::add_draft(self, email_id, text, provider, model, now).await
            }

            async fn drafts(&self, email_id: i64) -> StoreResult<Vec<(i64, String, String, String, DateTime<Utc>)>> {
                messages::drafts(self, email_id).await
            }

            async fn set_auto_launch(&self, client_id: i64, allowed: bool, now: DateTime<Utc>) -> StoreResult<bool> {
                clients::set_auto_launch(self, client_id, allowed, now).await
            }

            async fn approve_launch(&self, id: i64, detail: Value, now: DateTime<Utc>) -> StoreResult<bool> {
                transitions::approve_launch(self, id, detail, now).await
            }

            async fn refuse_launch(
                &self,
                id: i64,
                detail: Value,
                now: DateTime<Utc>,
            ) -> StoreResult<Option<Option<(&'static str, i64)>>> {
                transitions::refuse_launch(self, id, detail, now).await
            }

            async fn state_counts(&self) -> StoreResult<Vec<(EmailState, i64)>> {
                messages::state_counts(self).await
            }

            async fn claim_notice(&self, n: &NewNotice, now: DateTime<Utc>) -> StoreResult<Option<i64>> {
                notices::claim_notice(self, n, now).await
            }

            async fn try_notice(&self, id: i64, retry_before: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<bool> {
                notices::try_notice(self, id, retry_before, now).await
            }

            async fn finish_notice(&self, id: i64, error: Option<&str>, now: DateTime<Utc>) -> StoreResult<()> {
                notices::finish_notice(self, id, error, now).await
            }

            async fn unsent_notices(&self, max_attempts: i64, limit: i64) -> StoreResult<Vec<NoticeRow>> {
                notices::unsent_notices(self, max_attempts, limit).await
            }

            async fn notices(&self, email_id: Option<i64>) -> StoreResult<Vec<NoticeRow>> {
                notices::notices(self, email_id).await
            }

            async fn agent(&self, codename: &str) -> StoreResult<Option<Persona>> {
                personas::agent(self, codename).await
            }

            async fn active_agents(&self) -> StoreResult<Vec<Persona>> {
                personas::active_agents(self).await
            }

            async fn lessons(&self, codename: &str) -> StoreResult<Vec<StoredLesson>> {
                personas::lessons(self, codename).await
            }

            async fn add_lesson(&self, codename: Option<&str>, text: &str, now: DateTime<Utc>) -> StoreResult<i64> {
                personas::add_lesson(self, codename, text, now).await
            }

            async fn upsert_agents(&self, agents: &[Persona]) -> StoreResult<u64> {
                personas::upsert_agents(self, agents).await
            }

            async fn set_lesson_vectors(&self, vectors: &[(i64, &[f32])], model: &str) -> StoreResult<()> {
                personas::set_lesson_vectors(self, vectors, model).await
            }
        }
    };
}

pub(super) use sql_atlas_store;
