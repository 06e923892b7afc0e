//! The personas a launch puts on (`atlas_agents`) and their lessons (`atlas_lessons`, with
//! their vectors).
//!
//! Written once for both backends ([`sql_personas!`] expands in each, as `super::sql` says).

/// The `personas` module of a backend (personas and lessons): the functions `AtlasStore`'s
/// methods call, on the backend's store.
macro_rules! sql_personas {
    ($store:ident, $db:ty, $row:ty) => {
        mod personas {
            use super::*;

            /// `atlas_agents` as a [`Persona`] (the family parsed, the domains split).
            fn persona_from(row: &$row) -> StoreResult<Persona> {
                let group_name: String = row.try_get("group_name")?;
                let group = group_name.parse().map_err(|_| AtlasStoreError::Corrupt {
                    column: "atlas_agents.group_name",
                    value: group_name.clone(),
                })?;
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
                    prompt_domains: domains
                        .split(',')
                        .map(str::trim)
                        .filter(|d| !d.is_empty())
                        .map(str::to_string)
                        .collect(),
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

            pub(super) async fn agent(store: &$store, codename: &str) -> StoreResult<Option<Persona>> {
                sqlx::query("SELECT * FROM atlas_agents WHERE codename = $1")
                    .bind(codename)
                    .fetch_optional(&store.pool)
                    .await?
                    .as_ref()
                    .map(persona_from)
                    .transpose()
            }

            pub(super) async fn active_agents(store: &$store) -> StoreResult<Vec<Persona>> {
                sqlx::query("SELECT * FROM atlas_agents WHERE active = 1 ORDER BY orchestrator DESC, codename")
                    .fetch_all(&store.pool)
                    .await?
                    .iter()
                    .map(persona_from)
                    .collect()
            }

            pub(super) async fn lessons(store: &$store, codename: &str) -> StoreResult<Vec<StoredLesson>> {
                sqlx::query(
                    "SELECT id, agent_codename, text, embedding, embedding_model, created_at FROM atlas_lessons
                     WHERE agent_codename = $1 OR agent_codename IS NULL ORDER BY id",
                )
                .bind(codename)
                .fetch_all(&store.pool)
                .await?
                .iter()
                .map(lesson_from)
                .collect()
            }

            pub(super) async fn add_lesson(
                store: &$store,
                codename: Option<&str>,
                text: &str,
                now: DateTime<Utc>,
            ) -> StoreResult<i64> {
                Ok(sqlx::query_scalar(
                    "INSERT INTO atlas_lessons (agent_codename, text, created_at) VALUES ($1, $2, $3) RETURNING id",
                )
                .bind(codename)
                .bind(text)
                .bind(to_db(now))
                .fetch_one(&store.pool)
                .await?)
            }

            pub(super) async fn upsert_agents(store: &$store, agents: &[Persona]) -> StoreResult<u64> {
                const TEXTS: [&str; 14] = [
                    "nickname",
                    "role",
                    "group_name",
                    "orchestrator",
                    "heritage",
                    "cognitive_frame",
                    "personality",
                    "quote",
                    "inspiration",
                    "proof",
                    "job_mission",
                    "job_perimeter",
                    "job_key_checks",
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
                let mut tx: Tx = store.write_tx().await?;
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

            pub(super) async fn set_lesson_vectors(
                store: &$store,
                vectors: &[(i64, &[f32])],
                model: &str,
            ) -> StoreResult<()> {
                let mut tx: Tx = store.write_tx().await?;
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

pub(super) use sql_personas;
