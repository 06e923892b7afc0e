//! The memory's SQL, written once for both backends: every query (with `$N` placeholders,
//! which SQLite accepts too), every row decoding, and the sequence of each refusable write
//! (read, decide with [`super::rules`], write, read back the receipt) in one transaction.
//! A backend module holds only what really differs: its connection and migrations, how a
//! write transaction takes the single-writer lock (`write_tx`), how a read transaction gets
//! one snapshot (`read_tx`), and the keyword search (`keyword_search`); it then expands
//! [`sql_memory_store!`] for its database types.
//!
//! A macro rather than generics: sqlx's traits would need the same bounds repeated on
//! every function, while here each backend gets plain, concrete code from one source.

/// The `MemoryStore` implementation for `$store`, a struct with a `pool` field and the
/// inherent methods `write_tx`, `read_tx` and `keyword_search`, over database `$db` whose
/// rows are `$row`.
macro_rules! sql_memory_store {
    ($store:ident, $db:ty, $row:ty) => {
        fn ts(row: &$row, col: &str, table: &'static str) -> StoreResult<DateTime<Utc>> {
            let raw: String = row.try_get(col)?;
            from_db(&raw).ok_or_else(|| StoreError::Corrupt { table, detail: format!("{col}={raw}") })
        }

        fn opt_ts(row: &$row, col: &str, table: &'static str) -> StoreResult<Option<DateTime<Utc>>> {
            let raw: Option<String> = row.try_get(col)?;
            raw.map(|r| from_db(&r).ok_or_else(|| StoreError::Corrupt { table, detail: format!("{col}={r}") })).transpose()
        }

        const NOTE_SELECT: &str =
            "SELECT n.id, n.texte, p.nom AS projet, n.created_at FROM notes n LEFT JOIN projets p ON p.id = n.projet_id";

        fn note_from(row: &$row) -> StoreResult<Note> {
            Ok(Note {
                id: row.try_get("id")?,
                texte: row.try_get("texte")?,
                projet: row.try_get("projet")?,
                created_at: ts(row, "created_at", "notes")?,
            })
        }

        fn rappel_from(row: &$row) -> StoreResult<Rappel> {
            let regle: Option<String> = row.try_get("regle")?;
            let repetition = match regle {
                None => None,
                Some(rrule) => {
                    let debut: Option<String> = row.try_get("regle_debut")?;
                    let fuseau: Option<String> = row.try_get("fuseau")?;
                    let occurrences: i64 = row.try_get("occurrences")?;
                    let rep = recurrence::Repetition::from_stored(
                        &rrule,
                        debut.as_deref().unwrap_or_default(),
                        fuseau.as_deref().unwrap_or_default(),
                        occurrences,
                    )
                    .ok_or_else(|| StoreError::Corrupt { table: "rappels", detail: format!("regle={rrule}") })?;
                    Some(rep)
                }
            };
            Ok(Rappel {
                id: row.try_get("id")?,
                texte: row.try_get("texte")?,
                echeance: ts(row, "echeance", "rappels")?,
                fait: row.try_get::<i64, _>("fait")? == 1,
                fait_le: opt_ts(row, "fait_le", "rappels")?,
                created_at: ts(row, "created_at", "rappels")?,
                repetition,
            })
        }

        /// A recurring reminder whose occurrence was done or seen moves to the next one
        /// (after `after`), and will be announced again; a one-off reminder is left as it is.
        async fn advance_in(
            tx: &mut sqlx::Transaction<'static, $db>,
            r: &Rappel,
            after: DateTime<Utc>,
        ) -> StoreResult<Option<Rappel>> {
            let Some(rep) = &r.repetition else { return Ok(None) };
            if r.fait {
                return Ok(None);
            }
            let Some(next) = rep.next_after(after.max(r.echeance)) else { return Ok(None) };
            sqlx::query("DELETE FROM rappel_annonces WHERE rappel_id = $1").bind(r.id).execute(&mut **tx).await?;
            let row = sqlx::query(
                "UPDATE rappels SET echeance = $1, occurrences = occurrences + 1 WHERE id = $2 RETURNING *",
            )
            .bind(to_db(next))
            .bind(r.id)
            .fetch_one(&mut **tx)
            .await?;
            Ok(Some(rappel_from(&row)?))
        }

        fn preference_from(row: &$row) -> StoreResult<Preference> {
            Ok(Preference {
                id: row.try_get("id")?,
                texte: row.try_get("texte")?,
                active: row.try_get::<i64, _>("active")? == 1,
                created_at: ts(row, "created_at", "preferences")?,
                desactivee_le: opt_ts(row, "desactivee_le", "preferences")?,
            })
        }

        fn souvenir_from(row: &$row) -> StoreResult<Souvenir> {
            Ok(Souvenir {
                id: row.try_get("id")?,
                texte: row.try_get("texte")?,
                embedding_model: row.try_get("embedding_model")?,
                created_at: ts(row, "created_at", "souvenirs")?,
            })
        }

        fn projet_from(row: &$row) -> StoreResult<Projet> {
            let statut: String = row.try_get("statut")?;
            Ok(Projet {
                id: row.try_get("id")?,
                nom: row.try_get("nom")?,
                description: row.try_get("description")?,
                phase: row.try_get("phase")?,
                statut: Statut::parse(&statut)
                    .ok_or_else(|| StoreError::Corrupt { table: "projets", detail: format!("statut={statut}") })?,
                created_at: ts(row, "created_at", "projets")?,
                updated_at: ts(row, "updated_at", "projets")?,
            })
        }

        const DECISION_SELECT: &str =
            "SELECT d.id, p.nom AS projet, d.texte, d.created_at FROM decisions d JOIN projets p ON p.id = d.projet_id";

        fn decision_from(row: &$row) -> StoreResult<Decision> {
            Ok(Decision {
                id: row.try_get("id")?,
                projet: row.try_get("projet")?,
                texte: row.try_get("texte")?,
                created_at: ts(row, "created_at", "decisions")?,
            })
        }

        /// Sessions joined with their pauses; rows ordered by session then pause.
        const SESSION_SELECT: &str =
            "SELECT s.id, p.nom AS projet, s.debut, s.fin, pa.debut AS pause_debut, pa.fin AS pause_fin \
             FROM sessions_travail s JOIN projets p ON p.id = s.projet_id \
             LEFT JOIN pauses pa ON pa.session_id = s.id";

        fn sessions_from(rows: &[$row]) -> StoreResult<Vec<SessionTravail>> {
            let mut out: Vec<SessionTravail> = Vec::new();
            for row in rows {
                let id: i64 = row.try_get("id")?;
                if out.last().map(|s| s.id) != Some(id) {
                    out.push(SessionTravail {
                        id,
                        projet: row.try_get("projet")?,
                        debut: ts(row, "debut", "sessions_travail")?,
                        fin: opt_ts(row, "fin", "sessions_travail")?,
                        pauses: Vec::new(),
                    });
                }
                if let Some(debut) = opt_ts(row, "pause_debut", "pauses")? {
                    let fin = opt_ts(row, "pause_fin", "pauses")?;
                    if let Some(last) = out.last_mut() {
                        last.pauses.push(Pause { debut, fin });
                    }
                }
            }
            Ok(out)
        }

        async fn running_in<'c, E>(exec: E) -> StoreResult<Option<SessionTravail>>
        where
            E: sqlx::Executor<'c, Database = $db>,
        {
            let rows =
                sqlx::query(&format!("{SESSION_SELECT} WHERE s.fin IS NULL ORDER BY s.id, pa.id")).fetch_all(exec).await?;
            Ok(sessions_from(&rows)?.into_iter().next())
        }

        async fn session_by_id<'c, E>(exec: E, id: i64) -> StoreResult<SessionTravail>
        where
            E: sqlx::Executor<'c, Database = $db>,
        {
            let rows =
                sqlx::query(&format!("{SESSION_SELECT} WHERE s.id = $1 ORDER BY s.id, pa.id")).bind(id).fetch_all(exec).await?;
            sessions_from(&rows)?
                .into_iter()
                .next()
                .ok_or(StoreError::Corrupt { table: "sessions_travail", detail: format!("session {id} vanished") })
        }

        #[async_trait]
        impl MemoryStore for $store {
            async fn create_note(&self, texte: &str, projet_id: Option<i64>, now: DateTime<Utc>) -> StoreResult<Note> {
                let mut tx = self.write_tx().await?;
                let id: i64 =
                    sqlx::query_scalar("INSERT INTO notes (texte, projet_id, created_at) VALUES ($1, $2, $3) RETURNING id")
                        .bind(texte)
                        .bind(projet_id)
                        .bind(to_db(now))
                        .fetch_one(&mut *tx)
                        .await?;
                let row = sqlx::query(&format!("{NOTE_SELECT} WHERE n.id = $1")).bind(id).fetch_one(&mut *tx).await?;
                let note = note_from(&row)?;
                tx.commit().await?;
                Ok(note)
            }

            async fn list_notes(&self, projet_id: Option<i64>) -> StoreResult<Vec<Note>> {
                let rows = match projet_id {
                    Some(p) => {
                        sqlx::query(&format!("{NOTE_SELECT} WHERE n.projet_id = $1 ORDER BY n.id"))
                            .bind(p)
                            .fetch_all(&self.pool)
                            .await?
                    }
                    None => sqlx::query(&format!("{NOTE_SELECT} ORDER BY n.id")).fetch_all(&self.pool).await?,
                };
                rows.iter().map(note_from).collect()
            }

            async fn notes_between(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> StoreResult<Vec<Note>> {
                let rows = sqlx::query(&format!("{NOTE_SELECT} WHERE n.created_at >= $1 AND n.created_at < $2 ORDER BY n.id"))
                    .bind(to_db(from))
                    .bind(to_db(to))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(note_from).collect()
            }

            async fn create_rappel(&self, texte: &str, echeance: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<Rappel> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query("INSERT INTO rappels (texte, echeance, created_at) VALUES ($1, $2, $3) RETURNING *")
                    .bind(texte)
                    .bind(to_db(echeance))
                    .bind(to_db(now))
                    .fetch_one(&mut *tx)
                    .await?;
                let rappel = rappel_from(&row)?;
                tx.commit().await?;
                Ok(rappel)
            }

            async fn create_recurring_rappel(
                &self,
                texte: &str,
                echeance: DateTime<Utc>,
                repetition: &recurrence::Repetition,
                now: DateTime<Utc>,
            ) -> StoreResult<Rappel> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query(
                    "INSERT INTO rappels (texte, echeance, created_at, regle, regle_debut, fuseau) \
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
                )
                .bind(texte)
                .bind(to_db(echeance))
                .bind(to_db(now))
                .bind(repetition.rrule())
                .bind(repetition.debut_stored())
                .bind(&repetition.fuseau)
                .fetch_one(&mut *tx)
                .await?;
                let rappel = rappel_from(&row)?;
                tx.commit().await?;
                Ok(rappel)
            }

            async fn move_rappel(&self, id: i64, echeance: DateTime<Utc>) -> StoreResult<MoveRappel> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query("SELECT * FROM rappels WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?;
                let before = match row.as_ref().map(rappel_from).transpose()? {
                    None => return Ok(MoveRappel::NotFound),
                    Some(r) if r.fait => return Ok(MoveRappel::AlreadyDone(r)),
                    Some(r) => r,
                };
                // Announced again at its new time.
                sqlx::query("DELETE FROM rappel_annonces WHERE rappel_id = $1").bind(id).execute(&mut *tx).await?;
                let row = sqlx::query("UPDATE rappels SET echeance = $1 WHERE id = $2 RETURNING *")
                    .bind(to_db(echeance))
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await?;
                let after = rappel_from(&row)?;
                tx.commit().await?;
                Ok(MoveRappel::Moved { before, after })
            }

            async fn stop_rappel_series(&self, id: i64, now: DateTime<Utc>) -> StoreResult<StopSeries> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query("SELECT * FROM rappels WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?;
                match row.as_ref().map(rappel_from).transpose()? {
                    None => return Ok(StopSeries::NotFound),
                    Some(r) if r.repetition.is_none() => return Ok(StopSeries::NotRecurring(r)),
                    Some(r) if r.fait => return Ok(StopSeries::AlreadyStopped(r)),
                    Some(_) => {}
                }
                let row = sqlx::query("UPDATE rappels SET fait = 1, fait_le = $1 WHERE id = $2 RETURNING *")
                    .bind(to_db(now))
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await?;
                let stopped = rappel_from(&row)?;
                tx.commit().await?;
                Ok(StopSeries::Stopped(stopped))
            }

            async fn list_rappels(&self, include_done: bool) -> StoreResult<Vec<Rappel>> {
                let sql = if include_done {
                    "SELECT * FROM rappels ORDER BY fait, echeance, id"
                } else {
                    "SELECT * FROM rappels WHERE fait = 0 ORDER BY echeance, id"
                };
                let rows = sqlx::query(sql).fetch_all(&self.pool).await?;
                rows.iter().map(rappel_from).collect()
            }

            async fn due_unannounced_rappels(&self, now: DateTime<Utc>) -> StoreResult<Vec<Rappel>> {
                let rows = sqlx::query(
                    "SELECT r.* FROM rappels r LEFT JOIN rappel_annonces a ON a.rappel_id = r.id \
                     WHERE r.fait = 0 AND a.rappel_id IS NULL ORDER BY r.echeance, r.id",
                )
                .fetch_all(&self.pool)
                .await?;
                let mut due = Vec::new();
                for row in &rows {
                    let rappel = rappel_from(row)?;
                    if rappel.echeance <= now {
                        due.push(rappel);
                    }
                }
                Ok(due)
            }

            async fn mark_rappel_announced(&self, id: i64, at: DateTime<Utc>) -> StoreResult<bool> {
                let mut tx = self.write_tx().await?;
                let done =
                    sqlx::query("INSERT INTO rappel_annonces (rappel_id, annonce_le) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                        .bind(id)
                        .bind(to_db(at))
                        .execute(&mut *tx)
                        .await?
                        .rows_affected();
                tx.commit().await?;
                Ok(done == 1)
            }

            async fn announced_since(&self, since: DateTime<Utc>) -> StoreResult<Vec<(Rappel, DateTime<Utc>)>> {
                let rows = sqlx::query(
                    "SELECT r.*, a.annonce_le FROM rappels r JOIN rappel_annonces a ON a.rappel_id = r.id \
                     WHERE r.fait = 0 AND a.annonce_le >= $1 ORDER BY a.annonce_le DESC, r.id DESC",
                )
                .bind(to_db(since))
                .fetch_all(&self.pool)
                .await?;
                rows.iter().map(|row| Ok((rappel_from(row)?, ts(row, "annonce_le", "rappel_annonces")?))).collect()
            }

            async fn undelivered_rappels(&self) -> StoreResult<Vec<(Rappel, DateTime<Utc>)>> {
                let rows = sqlx::query(
                    "SELECT r.*, a.annonce_le FROM rappels r JOIN rappel_annonces a ON a.rappel_id = r.id \
                     WHERE r.fait = 0 AND a.livre_le IS NULL ORDER BY a.annonce_le, r.id",
                )
                .fetch_all(&self.pool)
                .await?;
                rows.iter().map(|row| Ok((rappel_from(row)?, ts(row, "annonce_le", "rappel_annonces")?))).collect()
            }

            async fn mark_rappel_delivered(&self, id: i64, at: DateTime<Utc>, by: Delivery) -> StoreResult<bool> {
                let mut tx = self.write_tx().await?;
                let done = sqlx::query(
                    "UPDATE rappel_annonces SET livre_le = $1, livre_par = $2 WHERE rappel_id = $3 AND livre_le IS NULL",
                )
                .bind(to_db(at))
                .bind(by.as_str())
                .bind(id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if done == 1 {
                    // A recurring reminder seen: its next occurrence comes.
                    let row = sqlx::query("SELECT * FROM rappels WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?;
                    if let Some(r) = row.as_ref().map(rappel_from).transpose()? {
                        advance_in(&mut tx, &r, at).await?;
                    }
                }
                tx.commit().await?;
                Ok(done == 1)
            }

            async fn reminder_deliveries(&self) -> StoreResult<ReminderDeliveries> {
                let row = sqlx::query(
                    "SELECT \
                       COUNT(CASE WHEN a.livre_par = 'voix' THEN 1 END) AS spoken, \
                       COUNT(CASE WHEN a.livre_par = 'web' THEN 1 END) AS seen, \
                       COUNT(CASE WHEN a.livre_le IS NULL AND r.fait = 0 THEN 1 END) AS waiting \
                     FROM rappel_annonces a JOIN rappels r ON r.id = a.rappel_id",
                )
                .fetch_one(&self.pool)
                .await?;
                Ok(ReminderDeliveries {
                    spoken: row.try_get("spoken")?,
                    seen_on_web: row.try_get("seen")?,
                    waiting: row.try_get("waiting")?,
                })
            }

            async fn get_rappel(&self, id: i64) -> StoreResult<Option<Rappel>> {
                let row = sqlx::query("SELECT * FROM rappels WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
                row.as_ref().map(rappel_from).transpose()
            }

            async fn mark_rappel_done(&self, id: i64, now: DateTime<Utc>) -> StoreResult<MarkDone> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query("SELECT * FROM rappels WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?;
                let current = row.as_ref().map(rappel_from).transpose()?;
                let current = match super::rules::mark_done(current) {
                    Ok(r) => r,
                    Err(refused) => return Ok(refused),
                };
                // A recurring reminder: this occurrence is done, the next one comes.
                if let Some(after) = advance_in(&mut tx, &current, now).await? {
                    tx.commit().await?;
                    return Ok(MarkDone::Advanced { before: Box::new(current), after: Box::new(after) });
                }
                let row = sqlx::query("UPDATE rappels SET fait = 1, fait_le = $1 WHERE id = $2 RETURNING *")
                    .bind(to_db(now))
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await?;
                let rappel = rappel_from(&row)?;
                tx.commit().await?;
                Ok(MarkDone::Marked(rappel))
            }

            async fn add_preference(&self, texte: &str, cap: u32, now: DateTime<Utc>) -> StoreResult<AddPreference> {
                let mut tx = self.write_tx().await?;
                let normalised = normalise(texte);
                let duplicate = sqlx::query("SELECT * FROM preferences WHERE active = 1 AND texte_normalise = $1")
                    .bind(&normalised)
                    .fetch_optional(&mut *tx)
                    .await?
                    .as_ref()
                    .map(preference_from)
                    .transpose()?;
                let active: i64 =
                    sqlx::query_scalar("SELECT count(*) FROM preferences WHERE active = 1").fetch_one(&mut *tx).await?;
                let active = match super::rules::add_preference(duplicate, active, cap) {
                    Ok(after) => after,
                    Err(refused) => return Ok(refused),
                };
                let row =
                    sqlx::query("INSERT INTO preferences (texte, texte_normalise, created_at) VALUES ($1, $2, $3) RETURNING *")
                        .bind(texte)
                        .bind(&normalised)
                        .bind(to_db(now))
                        .fetch_one(&mut *tx)
                        .await?;
                let preference = preference_from(&row)?;
                tx.commit().await?;
                Ok(AddPreference::Added { preference, active })
            }

            async fn list_preferences(&self) -> StoreResult<Vec<Preference>> {
                let rows = sqlx::query("SELECT * FROM preferences ORDER BY active DESC, id").fetch_all(&self.pool).await?;
                rows.iter().map(preference_from).collect()
            }

            async fn active_preferences(&self, limit: u32) -> StoreResult<Vec<Preference>> {
                let rows = sqlx::query("SELECT * FROM preferences WHERE active = 1 ORDER BY id LIMIT $1")
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(preference_from).collect()
            }

            async fn deactivate_preference(&self, id: i64, now: DateTime<Utc>) -> StoreResult<Deactivate> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query("SELECT * FROM preferences WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?;
                let current = row.as_ref().map(preference_from).transpose()?;
                if let Err(refused) = super::rules::deactivate(current) {
                    return Ok(refused);
                }
                let row = sqlx::query("UPDATE preferences SET active = 0, desactivee_le = $1 WHERE id = $2 RETURNING *")
                    .bind(to_db(now))
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await?;
                let pref = preference_from(&row)?;
                tx.commit().await?;
                Ok(Deactivate::Deactivated(pref))
            }

            async fn add_souvenir(
                &self,
                texte: &str,
                embedding: Option<(&[f32], &str)>,
                now: DateTime<Utc>,
            ) -> StoreResult<Souvenir> {
                let mut tx = self.write_tx().await?;
                let (mots, nb_mots) = super::fts5::indexed(texte);
                let row = sqlx::query(
                    "INSERT INTO souvenirs (texte, embedding, embedding_model, created_at, mots, nb_mots) \
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
                )
                .bind(texte)
                .bind(embedding.map(|(v, _)| super::encode_vector(v)))
                .bind(embedding.map(|(_, m)| m.to_string()))
                .bind(to_db(now))
                .bind(mots)
                .bind(nb_mots)
                .fetch_one(&mut *tx)
                .await?;
                let souvenir = souvenir_from(&row)?;
                tx.commit().await?;
                Ok(souvenir)
            }

            async fn list_souvenirs(&self) -> StoreResult<Vec<Souvenir>> {
                let rows = sqlx::query("SELECT * FROM souvenirs ORDER BY id").fetch_all(&self.pool).await?;
                rows.iter().map(souvenir_from).collect()
            }

            async fn souvenir_embeddings(&self) -> StoreResult<Vec<(Souvenir, Option<Vec<f32>>)>> {
                let rows = sqlx::query("SELECT * FROM souvenirs ORDER BY id").fetch_all(&self.pool).await?;
                rows.iter()
                    .map(|row| {
                        let blob: Option<Vec<u8>> = row.try_get("embedding")?;
                        let vector = blob
                            .map(|b| {
                                super::decode_vector(&b).ok_or_else(|| StoreError::Corrupt {
                                    table: "souvenirs",
                                    detail: format!("embedding of {} bytes", b.len()),
                                })
                            })
                            .transpose()?;
                        Ok((souvenir_from(row)?, vector))
                    })
                    .collect()
            }

            async fn set_souvenir_embedding(&self, id: i64, embedding: &[f32], model: &str) -> StoreResult<()> {
                let mut tx = self.write_tx().await?;
                sqlx::query("UPDATE souvenirs SET embedding = $1, embedding_model = $2 WHERE id = $3")
                    .bind(super::encode_vector(embedding))
                    .bind(model)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn search_souvenirs_keyword(&self, terms: &[String], limit: u32) -> StoreResult<Vec<Souvenir>> {
                if terms.is_empty() {
                    return Ok(Vec::new());
                }
                self.keyword_search(terms, limit).await
            }

            async fn create_projet(
                &self,
                nom: &str,
                description: Option<&str>,
                phase: Option<&str>,
                now: DateTime<Utc>,
            ) -> StoreResult<CreateProjet> {
                let mut tx = self.write_tx().await?;
                let normalised = normalise(nom);
                if let Some(row) = sqlx::query("SELECT * FROM projets WHERE nom_normalise = $1")
                    .bind(&normalised)
                    .fetch_optional(&mut *tx)
                    .await?
                {
                    return Ok(CreateProjet::Duplicate(projet_from(&row)?));
                }
                let stamp = to_db(now);
                let row = sqlx::query(
                    "INSERT INTO projets (nom, nom_normalise, description, phase, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
                )
                .bind(nom)
                .bind(&normalised)
                .bind(description)
                .bind(phase)
                .bind(&stamp)
                .bind(&stamp)
                .fetch_one(&mut *tx)
                .await?;
                let projet = projet_from(&row)?;
                if let Some(phase) = phase {
                    sqlx::query("INSERT INTO phases_projet (projet_id, phase, since) VALUES ($1, $2, $3)")
                        .bind(projet.id)
                        .bind(phase)
                        .bind(&stamp)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
                Ok(CreateProjet::Created(projet))
            }

            async fn find_projet(&self, nom: &str) -> StoreResult<Option<Projet>> {
                let row = sqlx::query("SELECT * FROM projets WHERE nom_normalise = $1")
                    .bind(normalise(nom))
                    .fetch_optional(&self.pool)
                    .await?;
                row.as_ref().map(projet_from).transpose()
            }

            async fn list_projets(&self) -> StoreResult<Vec<Projet>> {
                let rows = sqlx::query("SELECT * FROM projets ORDER BY id").fetch_all(&self.pool).await?;
                rows.iter().map(projet_from).collect()
            }

            async fn projet_detail(&self, id: i64) -> StoreResult<Option<ProjetDetail>> {
                // One read transaction so the parts agree with each other.
                let mut tx = self.read_tx().await?;
                let Some(row) = sqlx::query("SELECT * FROM projets WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?
                else {
                    return Ok(None);
                };
                let projet = projet_from(&row)?;
                let phases = sqlx::query("SELECT phase, since FROM phases_projet WHERE projet_id = $1 ORDER BY id")
                    .bind(id)
                    .fetch_all(&mut *tx)
                    .await?
                    .iter()
                    .map(|r| Ok(PhaseChange { phase: r.try_get("phase")?, since: ts(r, "since", "phases_projet")? }))
                    .collect::<StoreResult<Vec<_>>>()?;
                let decisions = sqlx::query(&format!("{DECISION_SELECT} WHERE d.projet_id = $1 ORDER BY d.id"))
                    .bind(id)
                    .fetch_all(&mut *tx)
                    .await?
                    .iter()
                    .map(decision_from)
                    .collect::<StoreResult<Vec<_>>>()?;
                let notes: i64 =
                    sqlx::query_scalar("SELECT count(*) FROM notes WHERE projet_id = $1").bind(id).fetch_one(&mut *tx).await?;
                tx.commit().await?;
                Ok(Some(ProjetDetail { projet, phases, decisions, notes: usize::try_from(notes).unwrap_or(0) }))
            }

            async fn update_projet(&self, id: i64, changes: &ProjetChanges, now: DateTime<Utc>) -> StoreResult<UpdateProjet> {
                let mut tx = self.write_tx().await?;
                let Some(row) = sqlx::query("SELECT * FROM projets WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?
                else {
                    return Ok(UpdateProjet::NotFound);
                };
                let before = projet_from(&row)?;
                let stamp = to_db(now);
                let row = sqlx::query(
                    "UPDATE projets SET description = coalesce($1, description), phase = coalesce($2, phase), \
                     statut = coalesce($3, statut), updated_at = $4 WHERE id = $5 RETURNING *",
                )
                .bind(changes.description.as_deref())
                .bind(changes.phase.as_deref())
                .bind(changes.statut.map(Statut::as_str))
                .bind(&stamp)
                .bind(id)
                .fetch_one(&mut *tx)
                .await?;
                let after = projet_from(&row)?;
                if let Some(phase) = &changes.phase {
                    if before.phase.as_deref() != Some(phase.as_str()) {
                        sqlx::query("INSERT INTO phases_projet (projet_id, phase, since) VALUES ($1, $2, $3)")
                            .bind(id)
                            .bind(phase)
                            .bind(&stamp)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                tx.commit().await?;
                Ok(UpdateProjet::Updated { before, after })
            }

            async fn add_decision(&self, projet_id: i64, texte: &str, now: DateTime<Utc>) -> StoreResult<Option<Decision>> {
                let mut tx = self.write_tx().await?;
                let exists: Option<i64> =
                    sqlx::query_scalar("SELECT id FROM projets WHERE id = $1").bind(projet_id).fetch_optional(&mut *tx).await?;
                if exists.is_none() {
                    return Ok(None);
                }
                let id: i64 =
                    sqlx::query_scalar("INSERT INTO decisions (projet_id, texte, created_at) VALUES ($1, $2, $3) RETURNING id")
                        .bind(projet_id)
                        .bind(texte)
                        .bind(to_db(now))
                        .fetch_one(&mut *tx)
                        .await?;
                sqlx::query("UPDATE projets SET updated_at = $1 WHERE id = $2")
                    .bind(to_db(now))
                    .bind(projet_id)
                    .execute(&mut *tx)
                    .await?;
                let row = sqlx::query(&format!("{DECISION_SELECT} WHERE d.id = $1")).bind(id).fetch_one(&mut *tx).await?;
                let decision = decision_from(&row)?;
                tx.commit().await?;
                Ok(Some(decision))
            }

            async fn decisions_between(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> StoreResult<Vec<Decision>> {
                let rows =
                    sqlx::query(&format!("{DECISION_SELECT} WHERE d.created_at >= $1 AND d.created_at < $2 ORDER BY d.id"))
                        .bind(to_db(from))
                        .bind(to_db(to))
                        .fetch_all(&self.pool)
                        .await?;
                rows.iter().map(decision_from).collect()
            }

            async fn list_decisions(&self) -> StoreResult<Vec<Decision>> {
                let rows = sqlx::query(&format!("{DECISION_SELECT} ORDER BY d.id")).fetch_all(&self.pool).await?;
                rows.iter().map(decision_from).collect()
            }

            async fn start_session(&self, projet_id: i64, now: DateTime<Utc>) -> StoreResult<ChronoChange> {
                let mut tx = self.write_tx().await?;
                let exists: Option<i64> =
                    sqlx::query_scalar("SELECT id FROM projets WHERE id = $1").bind(projet_id).fetch_optional(&mut *tx).await?;
                let running = running_in(&mut *tx).await?;
                let last_end: Option<String> =
                    sqlx::query_scalar("SELECT max(fin) FROM sessions_travail").fetch_one(&mut *tx).await?;
                let start = match super::rules::start(exists.is_some(), running, last_end.as_deref().and_then(from_db), now) {
                    Ok(start) => start,
                    Err(refused) => return Ok(refused),
                };
                let id: i64 = sqlx::query_scalar("INSERT INTO sessions_travail (projet_id, debut) VALUES ($1, $2) RETURNING id")
                    .bind(projet_id)
                    .bind(to_db(start))
                    .fetch_one(&mut *tx)
                    .await?;
                let session = session_by_id(&mut *tx, id).await?;
                tx.commit().await?;
                Ok(ChronoChange::Applied(session))
            }

            async fn pause_session(&self, now: DateTime<Utc>) -> StoreResult<ChronoChange> {
                let mut tx = self.write_tx().await?;
                let (running, at) = match super::rules::pause(running_in(&mut *tx).await?, now) {
                    Ok(go) => go,
                    Err(refused) => return Ok(refused),
                };
                sqlx::query("INSERT INTO pauses (session_id, debut) VALUES ($1, $2)")
                    .bind(running.id)
                    .bind(to_db(at))
                    .execute(&mut *tx)
                    .await?;
                let session = session_by_id(&mut *tx, running.id).await?;
                tx.commit().await?;
                Ok(ChronoChange::Applied(session))
            }

            async fn resume_session(&self, now: DateTime<Utc>) -> StoreResult<ChronoChange> {
                let mut tx = self.write_tx().await?;
                let (running, at) = match super::rules::resume(running_in(&mut *tx).await?, now) {
                    Ok(go) => go,
                    Err(refused) => return Ok(refused),
                };
                sqlx::query("UPDATE pauses SET fin = $1 WHERE session_id = $2 AND fin IS NULL")
                    .bind(to_db(at))
                    .bind(running.id)
                    .execute(&mut *tx)
                    .await?;
                let session = session_by_id(&mut *tx, running.id).await?;
                tx.commit().await?;
                Ok(ChronoChange::Applied(session))
            }

            async fn stop_session(&self, now: DateTime<Utc>) -> StoreResult<ChronoChange> {
                let mut tx = self.write_tx().await?;
                let (running, at) = match super::rules::stop(running_in(&mut *tx).await?, now) {
                    Ok(go) => go,
                    Err(refused) => return Ok(refused),
                };
                let end = to_db(at);
                // Closing the open pause and the session is one write: never one without the other.
                sqlx::query("UPDATE pauses SET fin = $1 WHERE session_id = $2 AND fin IS NULL")
                    .bind(&end)
                    .bind(running.id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("UPDATE sessions_travail SET fin = $1 WHERE id = $2")
                    .bind(&end)
                    .bind(running.id)
                    .execute(&mut *tx)
                    .await?;
                let session = session_by_id(&mut *tx, running.id).await?;
                tx.commit().await?;
                Ok(ChronoChange::Applied(session))
            }

            async fn running_session(&self) -> StoreResult<Option<SessionTravail>> {
                running_in(&self.pool).await
            }

            async fn sessions_overlapping(
                &self,
                from: DateTime<Utc>,
                to: DateTime<Utc>,
                projet_id: Option<i64>,
            ) -> StoreResult<Vec<SessionTravail>> {
                let rows = sqlx::query(&format!(
                    "{SESSION_SELECT} WHERE s.debut < $1 AND (s.fin IS NULL OR s.fin > $2) AND (CAST($3 AS BIGINT) IS NULL OR s.projet_id = $3) \
                     ORDER BY s.id, pa.id"
                ))
                .bind(to_db(to))
                .bind(to_db(from))
                .bind(projet_id)
                .fetch_all(&self.pool)
                .await?;
                sessions_from(&rows)
            }

            async fn list_sessions(&self) -> StoreResult<Vec<SessionTravail>> {
                let rows = sqlx::query(&format!("{SESSION_SELECT} ORDER BY s.id, pa.id")).fetch_all(&self.pool).await?;
                sessions_from(&rows)
            }

            async fn create_conversation(&self, id: &str, now: DateTime<Utc>) -> StoreResult<()> {
                let mut tx = self.write_tx().await?;
                sqlx::query("INSERT INTO conversations (id, created_at) VALUES ($1, $2) ON CONFLICT(id) DO NOTHING")
                    .bind(id)
                    .bind(to_db(now))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn label_conversation(&self, id: &str, domain: &str, source: LabelSource) -> StoreResult<Option<String>> {
                let mut tx = self.write_tx().await?;
                sqlx::query("UPDATE conversations SET domain = $1, domain_source = $2 WHERE id = $3 AND domain IS NULL")
                    .bind(domain)
                    .bind(source.as_str())
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                let label: Option<Option<String>> = sqlx::query_scalar("SELECT domain FROM conversations WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(label.flatten())
            }

            async fn conversation_label_source(&self, id: &str) -> StoreResult<Option<String>> {
                Ok(sqlx::query_scalar::<_, Option<String>>("SELECT domain_source FROM conversations WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?
                    .flatten())
            }

            async fn conversation_domain(&self, id: &str) -> StoreResult<Option<Option<String>>> {
                Ok(sqlx::query_scalar("SELECT domain FROM conversations WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn append_message(
                &self,
                conversation_id: &str,
                role: &str,
                content: &str,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                let mut tx = self.write_tx().await?;
                sqlx::query("INSERT INTO messages (conversation_id, role, content, created_at) VALUES ($1, $2, $3, $4)")
                    .bind(conversation_id)
                    .bind(role)
                    .bind(content)
                    .bind(to_db(now))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn recent_messages(&self, conversation_id: &str, limit: u32) -> StoreResult<Vec<(String, String)>> {
                let rows = sqlx::query(
                    "SELECT role, content FROM (SELECT id, role, content FROM messages WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2) AS recent ORDER BY id",
                )
                .bind(conversation_id)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
                rows.iter().map(|r| Ok((r.try_get("role")?, r.try_get("content")?))).collect()
            }

            async fn begin_turn(&self, conversation_id: &str, user_text: &str, now: DateTime<Utc>) -> StoreResult<i64> {
                let mut tx = self.write_tx().await?;
                let id: i64 = sqlx::query_scalar(
                    "INSERT INTO turn_traces (conversation_id, user_text, trace, status, started_at) \
                     VALUES ($1, $2, '{}', 'interrupted', $3) RETURNING id",
                )
                .bind(conversation_id)
                .bind(user_text)
                .bind(to_db(now))
                .fetch_one(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(id)
            }

            async fn finish_turn(
                &self,
                id: i64,
                trace: &serde_json::Value,
                written: &str,
                spoken: &str,
                now: DateTime<Utc>,
            ) -> StoreResult<()> {
                let mut tx = self.write_tx().await?;
                sqlx::query(
                    "UPDATE turn_traces SET trace = $1, written = $2, spoken = $3, status = 'complete', finished_at = $4 WHERE id = $5",
                )
                .bind(trace.to_string())
                .bind(written)
                .bind(spoken)
                .bind(to_db(now))
                .bind(id)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn set_pending(&self, pending: &PendingAction) -> StoreResult<()> {
                let mut tx = self.write_tx().await?;
                sqlx::query(
                    "INSERT INTO pending_actions (conversation_id, tool, arguments, question, created_at) VALUES ($1, $2, $3, $4, $5) \
                     ON CONFLICT(conversation_id) DO UPDATE SET tool = excluded.tool, arguments = excluded.arguments, \
                     question = excluded.question, created_at = excluded.created_at",
                )
                .bind(&pending.conversation_id)
                .bind(&pending.tool)
                .bind(pending.arguments.to_string())
                .bind(&pending.question)
                .bind(to_db(pending.created_at))
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn delete_note(&self, id: i64) -> StoreResult<Option<Note>> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query(&format!("{NOTE_SELECT} WHERE n.id = $1")).bind(id).fetch_optional(&mut *tx).await?;
                let Some(note) = row.as_ref().map(note_from).transpose()? else { return Ok(None) };
                sqlx::query("DELETE FROM notes WHERE id = $1").bind(id).execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(Some(note))
            }

            async fn delete_rappel(&self, id: i64) -> StoreResult<Option<Rappel>> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query("SELECT * FROM rappels WHERE id = $1").bind(id).fetch_optional(&mut *tx).await?;
                let Some(rappel) = row.as_ref().map(rappel_from).transpose()? else { return Ok(None) };
                sqlx::query("DELETE FROM rappel_annonces WHERE rappel_id = $1").bind(id).execute(&mut *tx).await?;
                sqlx::query("DELETE FROM rappels WHERE id = $1").bind(id).execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(Some(rappel))
            }

            async fn take_pending(&self, conversation_id: &str) -> StoreResult<Option<PendingAction>> {
                let mut tx = self.write_tx().await?;
                let row = sqlx::query("DELETE FROM pending_actions WHERE conversation_id = $1 RETURNING *")
                    .bind(conversation_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                tx.commit().await?;
                let Some(row) = row else { return Ok(None) };
                let arguments: String = row.try_get("arguments")?;
                Ok(Some(PendingAction {
                    conversation_id: row.try_get("conversation_id")?,
                    tool: row.try_get("tool")?,
                    arguments: serde_json::from_str(&arguments)
                        .map_err(|e| StoreError::Corrupt { table: "pending_actions", detail: e.to_string() })?,
                    question: row.try_get("question")?,
                    created_at: ts(&row, "created_at", "pending_actions")?,
                }))
            }

            async fn set_turn_stages(&self, turn_id: i64, stages: &serde_json::Value) -> StoreResult<()> {
                let mut tx = self.write_tx().await?;
                sqlx::query("UPDATE turn_traces SET stages = $1 WHERE id = $2")
                    .bind(stages.to_string())
                    .bind(turn_id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn list_turns(&self, limit: u32) -> StoreResult<Vec<TurnRecord>> {
                let rows = sqlx::query("SELECT * FROM turn_traces ORDER BY id DESC LIMIT $1")
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?;
                rows.iter().map(turn_from).collect()
            }

            async fn conversation_traces(&self, conversation_id: &str, limit: u32) -> StoreResult<Vec<serde_json::Value>> {
                let rows: Vec<String> = sqlx::query_scalar(
                    "SELECT trace FROM turn_traces WHERE conversation_id = $1 AND status = 'complete' ORDER BY id DESC LIMIT $2",
                )
                .bind(conversation_id)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?;
                rows.iter()
                    .map(|t| {
                        serde_json::from_str(t)
                            .map_err(|e| StoreError::Corrupt { table: "turn_traces", detail: e.to_string() })
                    })
                    .collect()
            }
        }

        fn turn_from(row: &$row) -> StoreResult<TurnRecord> {
            let trace: String = row.try_get("trace")?;
            Ok(TurnRecord {
                id: row.try_get("id")?,
                conversation_id: row.try_get("conversation_id")?,
                user_text: row.try_get("user_text")?,
                trace: serde_json::from_str(&trace)
                    .map_err(|e| StoreError::Corrupt { table: "turn_traces", detail: e.to_string() })?,
                written: row.try_get("written")?,
                spoken: row.try_get("spoken")?,
                status: row.try_get("status")?,
                started_at: ts(row, "started_at", "turn_traces")?,
                finished_at: opt_ts(row, "finished_at", "turn_traces")?,
                stages: row
                    .try_get::<Option<String>, _>("stages")?
                    .map(|s| serde_json::from_str(&s))
                    .transpose()
                    .map_err(|e| StoreError::Corrupt { table: "turn_traces", detail: e.to_string() })?,
            })
        }
    };
}

pub(crate) use sql_memory_store;
