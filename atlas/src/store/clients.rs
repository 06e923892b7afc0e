//! Clients (their addresses and domains, whether their e-mails may launch on their own) and
//! the chantiers a message can be attached to.
//!
//! Written once for both backends ([`sql_clients!`] expands in each, as `super::sql` says).

/// The `clients` module of a backend (clients and chantiers): the functions `AtlasStore`'s
/// methods call, on the backend's store.
macro_rules! sql_clients {
    ($store:ident, $db:ty, $row:ty) => {
        mod clients {
            use super::*;

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

            pub(super) async fn add_client(store: &$store, client: &NewClient, now: DateTime<Utc>) -> StoreResult<i64> {
                let addresses = rules::client_addresses(client)?;
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn clients(store: &$store) -> StoreResult<Vec<Client>> {
                let ids: Vec<i64> =
                    sqlx::query_scalar("SELECT id FROM atlas_clients ORDER BY name").fetch_all(&store.pool).await?;
                let mut out = Vec::new();
                for id in ids {
                    out.extend(load_client(&store.pool, id).await?);
                }
                Ok(out)
            }

            pub(super) async fn client(store: &$store, id: i64) -> StoreResult<Option<Client>> {
                load_client(&store.pool, id).await
            }

            pub(super) async fn client_for(store: &$store, addr: &EmailAddress) -> StoreResult<Option<Client>> {
                let by = |kind: &'static str, value: String| async move {
                    sqlx::query_scalar::<_, i64>(
                        "SELECT client_id FROM atlas_client_addresses WHERE kind = $1 AND value = $2",
                    )
                    .bind(kind)
                    .bind(value)
                    .fetch_optional(&store.pool)
                    .await
                };
                let id = match by("email", addr.as_str().to_string()).await? {
                    Some(id) => Some(id),
                    None if rules::domain_identifies(addr) => by("domain", addr.domain().to_string()).await?,
                    None => None,
                };
                match id {
                    Some(id) => load_client(&store.pool, id).await,
                    None => Ok(None),
                }
            }

            pub(super) async fn add_chantier(
                store: &$store,
                name: &str,
                client_id: Option<i64>,
                now: DateTime<Utc>,
            ) -> StoreResult<i64> {
                Ok(sqlx::query_scalar(
                    "INSERT INTO atlas_chantiers (name, client_id, created_at) VALUES ($1, $2, $3) RETURNING id",
                )
                .bind(name)
                .bind(client_id)
                .bind(to_db(now))
                .fetch_one(&store.pool)
                .await?)
            }

            pub(super) async fn open_chantiers(
                store: &$store,
                client_id: Option<i64>,
            ) -> StoreResult<Vec<(i64, String)>> {
                Ok(sqlx::query_as(
                    "SELECT id, name FROM atlas_chantiers WHERE status = 'ouvert' AND client_id IS NOT DISTINCT FROM $1
                     ORDER BY id",
                )
                .bind(client_id)
                .fetch_all(&store.pool)
                .await?)
            }

            pub(super) async fn set_auto_launch(
                store: &$store,
                client_id: i64,
                allowed: bool,
                now: DateTime<Utc>,
            ) -> StoreResult<bool> {
                let mut tx: Tx = store.write_tx().await?;
                let update =
                    sqlx::query("UPDATE atlas_clients SET auto_launch = $1 WHERE id = $2").bind(allowed as i64).bind(client_id);
                let detail = serde_json::json!({"client_id": client_id, "auto_launch": allowed});
                let done = guarded(&mut tx, update, None, audit::CLIENT_AUTO_LAUNCH, &detail, &to_db(now)).await?;
                tx.commit().await?;
                Ok(done)
            }
        }
    };
}

pub(super) use sql_clients;
