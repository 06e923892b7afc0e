//! The SQL of timers and lists, written once for both backends like the rest of the memory
//! (`sql.rs`): each refusable change reads, decides with [`super::basics::rules`], writes
//! and reads back in one write transaction. Expanded per backend after `sql_memory_store!`,
//! whose row helpers (`ts`, `opt_ts`) it uses.

macro_rules! sql_basics_store {
    ($store:ident, $db:ty, $row:ty) => {
        fn minuteur_from(row: &$row) -> StoreResult<Minuteur> {
            let etat: String = row.try_get("etat")?;
            let genre: String = row.try_get("genre")?;
            Ok(Minuteur {
                id: row.try_get("id")?,
                genre: Genre::parse(&genre)
                    .ok_or_else(|| StoreError::Corrupt { table: "minuteurs", detail: format!("genre={genre}") })?,
                nom: row.try_get("nom")?,
                duree_secondes: row.try_get("duree_secondes")?,
                etat: EtatMinuteur::parse(&etat)
                    .ok_or_else(|| StoreError::Corrupt { table: "minuteurs", detail: format!("etat={etat}") })?,
                echeance: opt_ts(row, "echeance", "minuteurs")?,
                restant_secondes: row.try_get("restant_secondes")?,
                created_at: ts(row, "created_at", "minuteurs")?,
                fini_le: opt_ts(row, "fini_le", "minuteurs")?,
                acquitte_le: opt_ts(row, "acquitte_le", "minuteurs")?,
                annule_le: opt_ts(row, "annule_le", "minuteurs")?,
            })
        }

        /// Running, paused and ringing timers (not alarms), the soonest first.
        const ACTIVE_TIMERS: &str = "SELECT * FROM minuteurs WHERE etat IN ('en_cours', 'en_pause', 'sonne') \
                                     AND genre = 'minuteur' ORDER BY COALESCE(echeance, '9999'), id";
        /// Alarms set or ringing, the soonest first.
        const ACTIVE_ALARMS: &str = "SELECT * FROM minuteurs WHERE etat IN ('en_cours', 'sonne') \
                                     AND genre = 'reveil' ORDER BY COALESCE(echeance, '9999'), id";

        async fn active_timers_in<'c, E>(exec: E) -> StoreResult<Vec<Minuteur>>
        where
            E: sqlx::Executor<'c, Database = $db>,
        {
            sqlx::query(ACTIVE_TIMERS).fetch_all(exec).await?.iter().map(minuteur_from).collect()
        }

        async fn save_timer<'c, E>(exec: E, m: &Minuteur) -> StoreResult<Minuteur>
        where
            E: sqlx::Executor<'c, Database = $db>,
        {
            let row = sqlx::query(
                "UPDATE minuteurs SET duree_secondes = $1, etat = $2, echeance = $3, restant_secondes = $4 \
                 WHERE id = $5 RETURNING *",
            )
            .bind(m.duree_secondes)
            .bind(m.etat.as_str())
            .bind(m.echeance.map(to_db))
            .bind(m.restant_secondes)
            .bind(m.id)
            .fetch_one(exec)
            .await?;
            minuteur_from(&row)
        }

        async fn list_in<'c, E>(exec: E, nom: &str) -> StoreResult<Option<(i64, String, DateTime<Utc>)>>
        where
            E: sqlx::Executor<'c, Database = $db>,
        {
            let row = sqlx::query("SELECT * FROM listes WHERE nom_normalise = $1")
                .bind(name_key(nom))
                .fetch_optional(exec)
                .await?;
            row.map(|r| Ok((r.try_get("id")?, r.try_get("nom")?, ts(&r, "created_at", "listes")?))).transpose()
        }

        async fn elements_in<'c, E>(exec: E, liste_id: i64) -> StoreResult<Vec<ElementListe>>
        where
            E: sqlx::Executor<'c, Database = $db>,
        {
            let rows = sqlx::query("SELECT * FROM liste_elements WHERE liste_id = $1 ORDER BY id")
                .bind(liste_id)
                .fetch_all(exec)
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(ElementListe {
                        id: r.try_get("id")?,
                        texte: r.try_get("texte")?,
                        created_at: ts(r, "created_at", "liste_elements")?,
                    })
                })
                .collect()
        }

        #[async_trait]
        impl BasicsStore for $store {
            async fn start_timer(
                &self,
                nom: Option<&str>,
                duree_secondes: i64,
                now: DateTime<Utc>,
            ) -> StoreResult<TimerStart> {
                let mut tx = self.write_tx().await?;
                if let Some(n) = nom {
                    let key = name_key(n);
                    let taken = active_timers_in(&mut *tx)
                        .await?
                        .into_iter()
                        .find(|m| m.nom.as_deref().is_some_and(|x| name_key(x) == key));
                    if let Some(m) = taken {
                        return Ok(TimerStart::NameTaken(m));
                    }
                }
                let row = sqlx::query(
                    "INSERT INTO minuteurs (nom, duree_secondes, etat, echeance, created_at) \
                     VALUES ($1, $2, 'en_cours', $3, $4) RETURNING *",
                )
                .bind(nom)
                .bind(duree_secondes)
                .bind(to_db(now + chrono::Duration::seconds(duree_secondes)))
                .bind(to_db(now))
                .fetch_one(&mut *tx)
                .await?;
                let m = minuteur_from(&row)?;
                tx.commit().await?;
                Ok(TimerStart::Started(m))
            }

            async fn active_timers(&self) -> StoreResult<Vec<Minuteur>> {
                active_timers_in(&self.pool).await
            }

            async fn all_timers(&self) -> StoreResult<Vec<Minuteur>> {
                sqlx::query("SELECT * FROM minuteurs ORDER BY id DESC")
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(minuteur_from)
                    .collect()
            }

            async fn change_timer(
                &self,
                target: &TimerTarget,
                edit: TimerEdit,
                now: DateTime<Utc>,
            ) -> StoreResult<TimerChange> {
                let mut tx = self.write_tx().await?;
                let active = active_timers_in(&mut *tx).await?;
                let before = match super::basics::rules::pick(&active, target) {
                    Ok(m) => m,
                    Err(refused) => return Ok(*refused),
                };
                let after = match super::basics::rules::edit(&before, edit, now) {
                    Ok(a) => a,
                    Err(refused) => return Ok(*refused),
                };
                let after = save_timer(&mut *tx, &after).await?;
                tx.commit().await?;
                Ok(TimerChange::Applied { before, after })
            }

            async fn cancel_timers(
                &self,
                target: Option<&TimerTarget>,
                now: DateTime<Utc>,
            ) -> StoreResult<TimerCancel> {
                let mut tx = self.write_tx().await?;
                let active = active_timers_in(&mut *tx).await?;
                let chosen = match target {
                    None if active.is_empty() => return Ok(TimerCancel::NoTimer { nom: None }),
                    None => active,
                    Some(t) => match super::basics::rules::pick(&active, t).map_err(|b| *b) {
                        Ok(m) => vec![m],
                        Err(TimerChange::Ambiguous(many)) => return Ok(TimerCancel::Ambiguous(many)),
                        Err(TimerChange::NoTimer { nom }) => return Ok(TimerCancel::NoTimer { nom }),
                        Err(_) => return Ok(TimerCancel::NoTimer { nom: None }),
                    },
                };
                let mut done = Vec::new();
                for m in chosen {
                    let row = sqlx::query(
                        "UPDATE minuteurs SET etat = 'annule', annule_le = $1 WHERE id = $2 \
                         AND etat IN ('en_cours', 'en_pause', 'sonne') RETURNING *",
                    )
                    .bind(to_db(now))
                    .bind(m.id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    if let Some(row) = row {
                        done.push(minuteur_from(&row)?);
                    }
                }
                tx.commit().await?;
                Ok(TimerCancel::Cancelled(done))
            }

            async fn ring_due_timers(&self, now: DateTime<Utc>) -> StoreResult<Vec<Minuteur>> {
                let mut tx = self.write_tx().await?;
                let rows = sqlx::query(
                    "UPDATE minuteurs SET etat = 'sonne', fini_le = $1 \
                     WHERE etat = 'en_cours' AND echeance <= $1 RETURNING *",
                )
                .bind(to_db(now))
                .fetch_all(&mut *tx)
                .await?;
                let rung = rows.iter().map(minuteur_from).collect::<StoreResult<Vec<_>>>()?;
                tx.commit().await?;
                Ok(rung)
            }

            async fn ringing_timers(&self) -> StoreResult<Vec<Minuteur>> {
                sqlx::query("SELECT * FROM minuteurs WHERE etat = 'sonne' ORDER BY fini_le, id")
                    .fetch_all(&self.pool)
                    .await?
                    .iter()
                    .map(minuteur_from)
                    .collect()
            }

            async fn acknowledge_timers(&self, id: Option<i64>, now: DateTime<Utc>) -> StoreResult<Vec<Minuteur>> {
                let mut tx = self.write_tx().await?;
                let rows =
                    match id {
                        // One by its number (the page's button): ringing, or rung unanswered.
                        Some(id) => {
                            sqlx::query(
                                "UPDATE minuteurs SET etat = 'termine', acquitte_le = $1 WHERE id = $2 AND \
                                 (etat = 'sonne' OR (etat = 'termine' AND fini_le IS NOT NULL AND acquitte_le IS NULL)) \
                                 RETURNING *",
                            )
                            .bind(to_db(now))
                            .bind(id)
                            .fetch_all(&mut *tx)
                            .await?
                        }
                        None => sqlx::query(
                            "UPDATE minuteurs SET etat = 'termine', acquitte_le = $1 WHERE etat = 'sonne' RETURNING *",
                        )
                        .bind(to_db(now))
                        .fetch_all(&mut *tx)
                        .await?,
                    };
                let done = rows.iter().map(minuteur_from).collect::<StoreResult<Vec<_>>>()?;
                tx.commit().await?;
                Ok(done)
            }

            async fn expire_ringing(&self, before: DateTime<Utc>) -> StoreResult<Vec<Minuteur>> {
                let mut tx = self.write_tx().await?;
                let rows = sqlx::query(
                    "UPDATE minuteurs SET etat = 'termine' WHERE etat = 'sonne' AND genre = 'minuteur' \
                     AND fini_le <= $1 RETURNING *",
                )
                .bind(to_db(before))
                .fetch_all(&mut *tx)
                .await?;
                let done = rows.iter().map(minuteur_from).collect::<StoreResult<Vec<_>>>()?;
                tx.commit().await?;
                Ok(done)
            }

            async fn expire_ringing_alarms(&self, before: DateTime<Utc>) -> StoreResult<Vec<Minuteur>> {
                let mut tx = self.write_tx().await?;
                let rows = sqlx::query(
                    "UPDATE minuteurs SET etat = 'termine' WHERE etat = 'sonne' AND genre = 'reveil' \
                     AND fini_le <= $1 RETURNING *",
                )
                .bind(to_db(before))
                .fetch_all(&mut *tx)
                .await?;
                let done = rows.iter().map(minuteur_from).collect::<StoreResult<Vec<_>>>()?;
                tx.commit().await?;
                Ok(done)
            }

            async fn snooze_ringing(&self, secs: i64, now: DateTime<Utc>) -> StoreResult<Vec<Minuteur>> {
                let mut tx = self.write_tx().await?;
                let rows = sqlx::query(
                    "UPDATE minuteurs SET etat = 'en_cours', echeance = $1 WHERE etat = 'sonne' RETURNING *",
                )
                .bind(to_db(now + chrono::Duration::seconds(secs)))
                .fetch_all(&mut *tx)
                .await?;
                let snoozed = rows.iter().map(minuteur_from).collect::<StoreResult<Vec<_>>>()?;
                tx.commit().await?;
                Ok(snoozed)
            }

            async fn set_alarm(&self, nom: Option<&str>, at: DateTime<Utc>, now: DateTime<Utc>) -> StoreResult<AlarmSet> {
                let mut tx = self.write_tx().await?;
                let existing = sqlx::query(ACTIVE_ALARMS).fetch_all(&mut *tx).await?;
                for row in &existing {
                    let m = minuteur_from(row)?;
                    if m.alarm_time() == at || m.echeance == Some(at) {
                        return Ok(AlarmSet::SameTime(m));
                    }
                }
                let row = sqlx::query(
                    "INSERT INTO minuteurs (genre, nom, duree_secondes, etat, echeance, created_at) \
                     VALUES ('reveil', $1, $2, 'en_cours', $3, $4) RETURNING *",
                )
                .bind(nom)
                .bind((at - now).num_seconds().max(1))
                .bind(to_db(at))
                .bind(to_db(at - chrono::Duration::seconds((at - now).num_seconds().max(1))))
                .fetch_one(&mut *tx)
                .await?;
                let m = minuteur_from(&row)?;
                tx.commit().await?;
                Ok(AlarmSet::Set(m))
            }

            async fn active_alarms(&self) -> StoreResult<Vec<Minuteur>> {
                sqlx::query(ACTIVE_ALARMS).fetch_all(&self.pool).await?.iter().map(minuteur_from).collect()
            }

            async fn cancel_alarms(&self, id: Option<i64>, all: bool, now: DateTime<Utc>) -> StoreResult<AlarmCancel> {
                let mut tx = self.write_tx().await?;
                let active = sqlx::query(ACTIVE_ALARMS)
                    .fetch_all(&mut *tx)
                    .await?
                    .iter()
                    .map(minuteur_from)
                    .collect::<StoreResult<Vec<_>>>()?;
                let chosen: Vec<Minuteur> = match (id, all) {
                    (_, true) if active.is_empty() => return Ok(AlarmCancel::NoAlarm { id: None }),
                    (_, true) => active,
                    (Some(id), false) => match active.into_iter().find(|m| m.id == id) {
                        Some(m) => vec![m],
                        None => return Ok(AlarmCancel::NoAlarm { id: Some(id) }),
                    },
                    (None, false) => match active.len() {
                        0 => return Ok(AlarmCancel::NoAlarm { id: None }),
                        1 => active,
                        _ => return Ok(AlarmCancel::Ambiguous(active)),
                    },
                };
                let mut done = Vec::new();
                for m in chosen {
                    let row = sqlx::query(
                        "UPDATE minuteurs SET etat = 'annule', annule_le = $1 WHERE id = $2 \
                         AND etat IN ('en_cours', 'sonne') RETURNING *",
                    )
                    .bind(to_db(now))
                    .bind(m.id)
                    .fetch_optional(&mut *tx)
                    .await?;
                    if let Some(row) = row {
                        done.push(minuteur_from(&row)?);
                    }
                }
                tx.commit().await?;
                Ok(AlarmCancel::Cancelled(done))
            }

            async fn add_list_item(&self, liste: &str, element: &str, now: DateTime<Utc>) -> StoreResult<ListAdd> {
                let mut tx = self.write_tx().await?;
                let (id, nom, created_at, new_list) = match list_in(&mut *tx, liste).await? {
                    Some((id, nom, created_at)) => (id, nom, created_at, false),
                    None => {
                        let id: i64 = sqlx::query_scalar(
                            "INSERT INTO listes (nom, nom_normalise, created_at) VALUES ($1, $2, $3) RETURNING id",
                        )
                        .bind(liste.trim())
                        .bind(name_key(liste))
                        .bind(to_db(now))
                        .fetch_one(&mut *tx)
                        .await?;
                        (id, liste.trim().to_string(), now, true)
                    }
                };
                let existing = elements_in(&mut *tx, id).await?;
                let key = name_key(element);
                if let Some(e) = existing.iter().find(|e| name_key(&e.texte) == key) {
                    let liste = Liste { id, nom, created_at, elements: existing.clone() };
                    return Ok(ListAdd::AlreadyThere { liste, element: e.clone() });
                }
                let row = sqlx::query(
                    "INSERT INTO liste_elements (liste_id, texte, created_at) VALUES ($1, $2, $3) RETURNING *",
                )
                .bind(id)
                .bind(element.trim())
                .bind(to_db(now))
                .fetch_one(&mut *tx)
                .await?;
                let element = ElementListe {
                    id: row.try_get("id")?,
                    texte: row.try_get("texte")?,
                    created_at: ts(&row, "created_at", "liste_elements")?,
                };
                let elements = elements_in(&mut *tx, id).await?;
                tx.commit().await?;
                Ok(ListAdd::Added { liste: Liste { id, nom, created_at, elements }, element, new_list })
            }

            async fn remove_list_item(&self, liste: &str, element: &str) -> StoreResult<ListRemove> {
                let mut tx = self.write_tx().await?;
                let Some((id, nom, created_at)) = list_in(&mut *tx, liste).await? else {
                    return Ok(ListRemove::NoList { nom: liste.trim().to_string() });
                };
                let elements = elements_in(&mut *tx, id).await?;
                let liste = Liste { id, nom, created_at, elements };
                let found = match super::basics::rules::find_item(&liste.elements, element) {
                    Ok(e) => e,
                    Err(many) if many.is_empty() => return Ok(ListRemove::NotThere { liste }),
                    Err(many) => return Ok(ListRemove::Ambiguous { liste, elements: many }),
                };
                sqlx::query("DELETE FROM liste_elements WHERE id = $1").bind(found.id).execute(&mut *tx).await?;
                let elements = elements_in(&mut *tx, id).await?;
                tx.commit().await?;
                Ok(ListRemove::Removed { liste: Liste { elements, ..liste }, element: found })
            }

            async fn list(&self, liste: &str) -> StoreResult<Option<Liste>> {
                let mut tx = self.read_tx().await?;
                let Some((id, nom, created_at)) = list_in(&mut *tx, liste).await? else { return Ok(None) };
                let elements = elements_in(&mut *tx, id).await?;
                tx.commit().await?;
                Ok(Some(Liste { id, nom, created_at, elements }))
            }

            async fn clear_list(&self, liste: &str) -> StoreResult<ListClear> {
                let mut tx = self.write_tx().await?;
                let Some((id, nom, created_at)) = list_in(&mut *tx, liste).await? else {
                    return Ok(ListClear::NoList { nom: liste.trim().to_string() });
                };
                let elements = elements_in(&mut *tx, id).await?;
                sqlx::query("DELETE FROM liste_elements WHERE liste_id = $1").bind(id).execute(&mut *tx).await?;
                tx.commit().await?;
                Ok(ListClear::Cleared { liste: Liste { id, nom, created_at, elements } })
            }

            async fn lists(&self) -> StoreResult<Vec<Liste>> {
                let mut tx = self.read_tx().await?;
                let rows = sqlx::query("SELECT * FROM listes ORDER BY id").fetch_all(&mut *tx).await?;
                let mut out = Vec::new();
                for r in &rows {
                    let id: i64 = r.try_get("id")?;
                    let elements = elements_in(&mut *tx, id).await?;
                    out.push(Liste {
                        id,
                        nom: r.try_get("nom")?,
                        created_at: ts(r, "created_at", "listes")?,
                        elements,
                    });
                }
                tx.commit().await?;
                Ok(out)
            }
        }
    };
}

pub(crate) use sql_basics_store;
