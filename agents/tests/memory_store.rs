//! The storage suite: every test is written once against the `MemoryStore` trait and run on
//! both backends, `SqliteStore` (a temporary file) and `PgStore` (a fresh database in the
//! binary's private PostgreSQL cluster), so that the two give the same results, orders and
//! refusals, including when writers race.

use crate::harness;

use std::sync::Arc;

use arthur_agents::memory::*;
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;
use tokio::sync::Barrier;

/// Minute `m` after 2026-11-30T09:00:00.250Z (milliseconds included, to check that they
/// round-trip).
fn at(m: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap() + Duration::milliseconds(250) + Duration::minutes(m)
}

type Store = Arc<dyn MemoryStore>;

/// Runs `$name(store)` on each backend.
macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            use super::*;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (store, _dir) = sqlite_store().await;
                    super::$name(Arc::new(store.clone())).await;
                    store.close().await;
                }
            )*
        }
        mod postgres {
            use super::*;
            $(
                #[cfg_attr(not(feature = "system-tests"), ignore = "system tier: PostgreSQL (--features system-tests)")]
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let _slot = PG_SLOTS.acquire().await.unwrap();
                    let store = pg_store().await;
                    super::$name(Arc::new(store.clone())).await;
                    store.close().await;
                }
            )*
        }
    };
}

/// PostgreSQL tests running at once: each pool may open 8 connections and the shared
/// cluster accepts 40.
static PG_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

async fn sqlite_store() -> (SqliteStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
    (store, dir)
}

async fn pg_store() -> PgStore {
    PgStore::open(&harness::fresh_database().await).await.unwrap()
}

suite!(
    notes_with_and_without_a_project,
    notes_between_is_half_open,
    a_constraint_violation_is_an_error_and_writes_nothing,
    reminders_are_listed_and_marked_done_once,
    due_reminders_are_announced_once,
    preferences_are_capped_deduplicated_and_deactivated,
    active_preferences_are_in_order_and_limited,
    souvenirs_keep_their_embeddings_bit_for_bit,
    keyword_search_prefixes_folds_accents_and_ranks_like_fts5,
    keyword_search_limits_and_empty_queries,
    projects_are_created_once_and_found_by_normalised_name,
    projects_change_with_phase_history_only_on_a_real_change,
    decisions_and_project_detail,
    the_chrono_refuses_what_does_not_apply,
    the_chrono_never_writes_a_time_before_the_last_event,
    sessions_overlapping_a_window,
    conversations_are_created_once_and_labelled_once,
    recent_messages_are_the_last_in_order,
    turns_are_traced_newest_first,
    a_voice_turn_keeps_its_stage_timings,
    a_pending_action_is_replaced_and_taken_once,
    racing_starts_run_one_session,
    racing_preferences_respect_the_cap,
    racing_marks_mark_a_reminder_once,
    racing_announcements_announce_once,
    racing_creations_create_one_project,
    a_recurring_reminder_moves_to_its_next_occurrence_when_done_or_delivered,
    a_reminder_is_moved_and_announced_again,
    alarms_ring_like_timers_and_are_put_off,
    racing_deliveries_advance_a_series_once,
);

// ---------------------------------------------------------------------------------------
// Repeats, moves and alarms (issue 42)

fn weekly(first: DateTime<Utc>) -> Repetition {
    let tz = chrono_tz::Europe::Paris;
    Repetition::new(Frequence::Hebdomadaire, 1, first.with_timezone(&tz).naive_local(), tz)
}

/// Monday 30 November 2026, 11:00 in Paris (a rule keeps whole minutes).
fn monday_11() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 10, 0, 0).unwrap()
}

async fn a_recurring_reminder_moves_to_its_next_occurrence_when_done_or_delivered(store: Store) {
    let first = monday_11();
    let r = store.create_recurring_rappel("sortir les poubelles", first, &weekly(first), at(0)).await.unwrap();
    assert_eq!(r.repetition.as_ref().map(|p| p.rrule()), Some("FREQ=WEEKLY;BYDAY=MO".to_string()));
    assert_eq!(store.get_rappel(r.id).await.unwrap().unwrap(), r, "read back as stored");
    // Done: the same reminder, a week later, one occurrence counted.
    let MarkDone::Advanced { before, after } = store.mark_rappel_done(r.id, at(61)).await.unwrap() else {
        panic!("advanced")
    };
    assert_eq!((before.echeance, after.echeance, after.fait), (first, first + Duration::days(7), false));
    assert_eq!(after.repetition.as_ref().unwrap().occurrences, 1);
    // Delivered: the next one comes and is announced again.
    let due = first + Duration::days(7);
    assert!(store.mark_rappel_announced(r.id, due).await.unwrap());
    assert!(store.mark_rappel_delivered(r.id, due + Duration::minutes(1), Delivery::Web).await.unwrap());
    let next = store.get_rappel(r.id).await.unwrap().unwrap();
    assert_eq!(next.echeance, first + Duration::days(14));
    assert_eq!(store.due_unannounced_rappels(next.echeance).await.unwrap().len(), 1);
    // Stopped: never again; a one-off has no series.
    let StopSeries::Stopped(stopped) = store.stop_rappel_series(r.id, at(70)).await.unwrap() else { panic!() };
    assert!(stopped.fait && stopped.is_recurring());
    assert!(matches!(store.stop_rappel_series(r.id, at(71)).await.unwrap(), StopSeries::AlreadyStopped(_)));
    let one = store.create_rappel("appeler Luc", at(90), at(0)).await.unwrap();
    assert!(matches!(store.stop_rappel_series(one.id, at(71)).await.unwrap(), StopSeries::NotRecurring(_)));
    assert!(matches!(store.stop_rappel_series(999, at(71)).await.unwrap(), StopSeries::NotFound));
    assert_eq!(store.list_rappels(false).await.unwrap(), vec![one]);
}

async fn a_reminder_is_moved_and_announced_again(store: Store) {
    let r = store.create_rappel("appeler la banque", at(10), at(0)).await.unwrap();
    assert!(store.mark_rappel_announced(r.id, at(10)).await.unwrap());
    assert_eq!(store.announced_since(at(5)).await.unwrap().len(), 1);
    let MoveRappel::Moved { before, after } = store.move_rappel(r.id, at(20)).await.unwrap() else { panic!() };
    assert_eq!((before.echeance, after.echeance), (at(10), at(20)));
    assert!(store.due_unannounced_rappels(at(15)).await.unwrap().is_empty());
    assert_eq!(store.due_unannounced_rappels(at(20)).await.unwrap(), vec![after.clone()]);
    store.mark_rappel_done(r.id, at(21)).await.unwrap();
    assert!(matches!(store.move_rappel(r.id, at(30)).await.unwrap(), MoveRappel::AlreadyDone(_)));
    assert_eq!(store.move_rappel(999, at(30)).await.unwrap(), MoveRappel::NotFound);
}

async fn alarms_ring_like_timers_and_are_put_off(store: Store) {
    let AlarmSet::Set(a) = store.set_alarm(None, at(60), at(0)).await.unwrap() else { panic!() };
    assert_eq!((a.genre, a.alarm_time(), a.echeance), (Genre::Reveil, at(60), Some(at(60))));
    assert!(matches!(store.set_alarm(Some("sport"), at(60), at(1)).await.unwrap(), AlarmSet::SameTime(_)));
    let AlarmSet::Set(b) = store.set_alarm(Some("sport"), at(90), at(1)).await.unwrap() else { panic!() };
    store.start_timer(Some("pâtes"), 7200, at(0)).await.unwrap();
    assert_eq!(store.active_alarms().await.unwrap().len(), 2);
    assert_eq!(store.active_timers().await.unwrap().len(), 1, "alarms are not timers");
    assert!(matches!(store.cancel_alarms(None, false, at(2)).await.unwrap(), AlarmCancel::Ambiguous(_)));
    let rung = store.ring_due_timers(at(60)).await.unwrap();
    assert_eq!(rung.iter().map(|m| m.id).collect::<Vec<_>>(), vec![a.id]);
    let snoozed = store.snooze_ringing(300, at(61)).await.unwrap();
    assert_eq!((snoozed.len(), snoozed[0].echeance), (1, Some(at(66))));
    assert_eq!(snoozed[0].alarm_time(), at(60), "the time it was set for stays");
    assert!(store.ringing_timers().await.unwrap().is_empty());
    assert_eq!(store.ring_due_timers(at(66)).await.unwrap().len(), 1);
    // Rung too long without an answer: it stops, and stays to acknowledge.
    let expired = store.expire_ringing_alarms(at(67)).await.unwrap();
    assert!(expired[0].unanswered());
    assert_eq!(store.acknowledge_timers(Some(a.id), at(70)).await.unwrap().len(), 1);
    let AlarmCancel::Cancelled(c) = store.cancel_alarms(Some(b.id), false, at(71)).await.unwrap() else { panic!() };
    assert_eq!(c[0].id, b.id);
    assert_eq!(store.cancel_alarms(Some(b.id), false, at(72)).await.unwrap(), AlarmCancel::NoAlarm { id: Some(b.id) });
    let all = store.all_timers().await.unwrap();
    assert_eq!(all.iter().filter(|m| m.genre == Genre::Reveil).count(), 2);
}

async fn racing_deliveries_advance_a_series_once(store: Store) {
    let first = monday_11();
    let r = store.create_recurring_rappel("arroser", first, &weekly(first), at(0)).await.unwrap();
    assert!(store.mark_rappel_announced(r.id, first).await.unwrap());
    let delivered = race(8, |i| {
        let store = store.clone();
        async move { store.mark_rappel_delivered(r.id, at(61 + i as i64), Delivery::Voice).await.unwrap() }
    })
    .await;
    assert_eq!(delivered.iter().filter(|d| **d).count(), 1, "delivered once");
    let next = store.get_rappel(r.id).await.unwrap().unwrap();
    assert_eq!((next.echeance, next.repetition.unwrap().occurrences), (first + Duration::days(7), 1));
}

// ---------------------------------------------------------------------------------------
// Notes

async fn notes_with_and_without_a_project(store: Store) {
    let CreateProjet::Created(p) = store.create_projet("Émeraude", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    let a = store.create_note("sans projet", None, at(1)).await.unwrap();
    let b = store.create_note("avec projet", Some(p.id), at(2)).await.unwrap();
    assert_eq!(a.texte, "sans projet");
    assert_eq!(a.projet, None);
    assert_eq!(a.created_at, at(1));
    assert_eq!(b.projet.as_deref(), Some("Émeraude"));
    assert_eq!(b.created_at, at(2));
    assert!(b.id > a.id);
    assert_eq!(store.list_notes(None).await.unwrap(), vec![a.clone(), b.clone()]);
    assert_eq!(store.list_notes(Some(p.id)).await.unwrap(), vec![b]);
    assert_eq!(store.list_notes(Some(p.id + 100)).await.unwrap(), vec![]);
}

async fn notes_between_is_half_open(store: Store) {
    let mut notes = Vec::new();
    for m in [0, 10, 20, 30] {
        notes.push(store.create_note(&format!("note {m}"), None, at(m)).await.unwrap());
    }
    assert_eq!(store.notes_between(at(10), at(30)).await.unwrap(), notes[1..3].to_vec());
    assert_eq!(store.notes_between(at(0), at(31)).await.unwrap(), notes);
    // One millisecond after a note excludes it; the upper bound is exclusive.
    let later = at(10) + Duration::milliseconds(1);
    assert_eq!(store.notes_between(later, at(20)).await.unwrap(), vec![]);
    assert_eq!(store.notes_between(at(40), at(50)).await.unwrap(), vec![]);
}

async fn a_constraint_violation_is_an_error_and_writes_nothing(store: Store) {
    let kept = store.create_note("gardée", None, at(0)).await.unwrap();
    // Unknown project (foreign key), blank text (CHECK): refused by the database.
    let err = store.create_note("orpheline", Some(4242), at(1)).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    let err = store.create_note("   ", None, at(1)).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    let err = store.create_rappel("", at(5), at(1)).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert_eq!(store.list_notes(None).await.unwrap(), vec![kept.clone()]);
    assert_eq!(store.list_rappels(true).await.unwrap(), vec![]);
    // The store is still usable, and ids still grow.
    let next = store.create_note("suivante", None, at(2)).await.unwrap();
    assert!(next.id > kept.id);
    assert_eq!(store.list_notes(None).await.unwrap(), vec![kept, next]);
}

// ---------------------------------------------------------------------------------------
// Reminders

async fn reminders_are_listed_and_marked_done_once(store: Store) {
    let late = store.create_rappel("appeler Paul", at(120), at(0)).await.unwrap();
    let early = store.create_rappel("acheter du pain", at(60), at(1)).await.unwrap();
    let same = store.create_rappel("poster la lettre", at(60), at(2)).await.unwrap();
    assert_eq!(early.echeance, at(60));
    assert_eq!(early.created_at, at(1));
    assert!(!early.fait);
    assert_eq!(early.fait_le, None);
    assert_eq!(store.list_rappels(false).await.unwrap(), vec![early.clone(), same.clone(), late.clone()]);
    assert_eq!(store.get_rappel(late.id).await.unwrap(), Some(late.clone()));
    assert_eq!(store.get_rappel(late.id + 100).await.unwrap(), None);

    let MarkDone::Marked(done) = store.mark_rappel_done(early.id, at(30)).await.unwrap() else { panic!("marked") };
    assert!(done.fait);
    assert_eq!(done.fait_le, Some(at(30)));
    assert_eq!(done.echeance, early.echeance);
    assert_eq!(store.mark_rappel_done(early.id, at(40)).await.unwrap(), MarkDone::AlreadyDone(done.clone()));
    assert_eq!(store.mark_rappel_done(late.id + 100, at(40)).await.unwrap(), MarkDone::NotFound);
    assert_eq!(store.get_rappel(early.id).await.unwrap(), Some(done.clone()));
    // Not done first (by due time, then id), then done.
    assert_eq!(store.list_rappels(false).await.unwrap(), vec![same.clone(), late.clone()]);
    assert_eq!(store.list_rappels(true).await.unwrap(), vec![same, late, done]);
}

async fn due_reminders_are_announced_once(store: Store) {
    let a = store.create_rappel("a", at(10), at(0)).await.unwrap();
    let b = store.create_rappel("b", at(5), at(0)).await.unwrap();
    let c = store.create_rappel("c", at(20), at(0)).await.unwrap();
    let d = store.create_rappel("d", at(1), at(0)).await.unwrap();
    store.mark_rappel_done(d.id, at(2)).await.unwrap();
    assert_eq!(store.due_unannounced_rappels(at(4)).await.unwrap(), vec![]);
    // Due at `now` counts.
    assert_eq!(store.due_unannounced_rappels(at(10)).await.unwrap(), vec![b.clone(), a.clone()]);
    assert!(store.mark_rappel_announced(b.id, at(10)).await.unwrap());
    assert!(!store.mark_rappel_announced(b.id, at(11)).await.unwrap());
    assert_eq!(store.due_unannounced_rappels(at(30)).await.unwrap(), vec![a.clone(), c.clone()]);
    // Announcing a reminder that does not exist: refused by the foreign key.
    let err = store.mark_rappel_announced(c.id + 100, at(30)).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    // A reminder done before its announcement is never due.
    store.mark_rappel_done(a.id, at(31)).await.unwrap();
    assert_eq!(store.due_unannounced_rappels(at(31)).await.unwrap(), vec![c]);
}

// ---------------------------------------------------------------------------------------
// Preferences

async fn preferences_are_capped_deduplicated_and_deactivated(store: Store) {
    let AddPreference::Added { preference: cafe, active: 1 } =
        store.add_preference("Café noir sans sucre", 2, at(0)).await.unwrap()
    else {
        panic!("added")
    };
    assert_eq!(cafe.texte, "Café noir sans sucre");
    assert!(cafe.active);
    assert_eq!(cafe.created_at, at(0));
    assert_eq!(cafe.desactivee_le, None);
    // Same text after normalisation (case, accents, spaces).
    assert_eq!(
        store.add_preference("  CAFE   noir sans Sucre ", 2, at(1)).await.unwrap(),
        AddPreference::Duplicate(cafe.clone())
    );
    let AddPreference::Added { preference: tu, active: 2 } =
        store.add_preference("Me tutoyer", 2, at(2)).await.unwrap()
    else {
        panic!("added")
    };
    assert_eq!(store.add_preference("Réveil à 7 h", 2, at(3)).await.unwrap(), AddPreference::CapReached { cap: 2 });
    // A duplicate is reported as such even at the cap.
    assert_eq!(store.add_preference("me tutoyer", 2, at(3)).await.unwrap(), AddPreference::Duplicate(tu.clone()));

    let Deactivate::Deactivated(off) = store.deactivate_preference(cafe.id, at(4)).await.unwrap() else {
        panic!("deactivated")
    };
    assert!(!off.active);
    assert_eq!(off.desactivee_le, Some(at(4)));
    assert_eq!(store.deactivate_preference(cafe.id, at(5)).await.unwrap(), Deactivate::AlreadyInactive(off.clone()));
    assert_eq!(store.deactivate_preference(tu.id + 100, at(5)).await.unwrap(), Deactivate::NotFound);

    // Inactive preferences neither count nor block the same text again.
    let AddPreference::Added { preference: again, active: 2 } =
        store.add_preference("café noir sans sucre", 2, at(6)).await.unwrap()
    else {
        panic!("added")
    };
    assert!(again.id > tu.id);
    // Active first (by id), then inactive.
    assert_eq!(store.list_preferences().await.unwrap(), vec![tu, again, off]);
}

async fn active_preferences_are_in_order_and_limited(store: Store) {
    let mut added = Vec::new();
    for (i, texte) in ["un", "deux", "trois", "quatre"].iter().enumerate() {
        let AddPreference::Added { preference, active } = store.add_preference(texte, 10, at(i as i64)).await.unwrap()
        else {
            panic!("added")
        };
        assert_eq!(active as usize, i + 1);
        added.push(preference);
    }
    store.deactivate_preference(added[1].id, at(10)).await.unwrap();
    let active: Vec<Preference> = [0, 2, 3].iter().map(|&i| added[i].clone()).collect();
    assert_eq!(store.active_preferences(10).await.unwrap(), active);
    assert_eq!(store.active_preferences(2).await.unwrap(), active[..2].to_vec());
    assert_eq!(store.active_preferences(0).await.unwrap(), vec![]);
}

// ---------------------------------------------------------------------------------------
// Souvenirs

async fn souvenirs_keep_their_embeddings_bit_for_bit(store: Store) {
    let vector = [0.1_f32, -2.5, 1e-30, f32::MAX, f32::MIN_POSITIVE / 2.0, -0.0, 3.4028e-38, 7.0];
    let plain = store.add_souvenir("Mon vélo est bleu", None, at(0)).await.unwrap();
    let embedded = store.add_souvenir("Ma sœur vit à Lyon", Some((&vector, "mistral-embed")), at(1)).await.unwrap();
    assert_eq!(plain.embedding_model, None);
    assert_eq!(plain.created_at, at(0));
    assert_eq!(embedded.embedding_model.as_deref(), Some("mistral-embed"));
    assert_eq!(store.list_souvenirs().await.unwrap(), vec![plain.clone(), embedded.clone()]);

    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let stored = store.souvenir_embeddings().await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0], (plain.clone(), None));
    assert_eq!(stored[1].0, embedded);
    assert_eq!(bits(stored[1].1.as_deref().unwrap()), bits(&vector));

    // Embedded later (the provider was back).
    let later = [0.25_f32, -0.75, 1.0 / 3.0];
    store.set_souvenir_embedding(plain.id, &later, "autre-modele").await.unwrap();
    let stored = store.souvenir_embeddings().await.unwrap();
    assert_eq!(stored[0].0.embedding_model.as_deref(), Some("autre-modele"));
    assert_eq!(bits(stored[0].1.as_deref().unwrap()), bits(&later));
    assert_eq!(bits(stored[1].1.as_deref().unwrap()), bits(&vector));
    // An empty vector is stored (as zero bytes) and read back empty.
    store.set_souvenir_embedding(embedded.id, &[], "vide").await.unwrap();
    assert_eq!(store.souvenir_embeddings().await.unwrap()[1].1, Some(vec![]));
}

fn terms(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

async fn texts_of(store: &Store, words: &[&str], limit: u32) -> Vec<String> {
    store.search_souvenirs_keyword(&terms(words), limit).await.unwrap().into_iter().map(|s| s.texte).collect()
}

async fn keyword_search_prefixes_folds_accents_and_ranks_like_fts5(store: Store) {
    for (i, texte) in [
        "Rendez-vous chez le dentiste lundi à 9 h",
        "Les dentistes de Lyon sont chers",
        "L'été dernier à Biarritz",
        "ete indien",
        "Café avec Martin l'ÉTÉ prochain",
        "Rien à voir",
    ]
    .iter()
    .enumerate()
    {
        store.add_souvenir(texte, None, at(i as i64)).await.unwrap();
    }
    // A prefix: "dentiste" finds "dentistes" (bm25: the shorter text first).
    assert_eq!(
        texts_of(&store, &["dentiste"], 10).await,
        ["Les dentistes de Lyon sont chers", "Rendez-vous chez le dentiste lundi à 9 h"]
    );
    // Accents and case folded both ways; bm25: the shortest text first, equal scores by id.
    let ete = ["ete indien", "L'été dernier à Biarritz", "Café avec Martin l'ÉTÉ prochain"];
    assert_eq!(texts_of(&store, &["ete"], 10).await, ete);
    assert_eq!(texts_of(&store, &["Été"], 10).await, ete);
    assert_eq!(texts_of(&store, &["CAFE"], 10).await, ["Café avec Martin l'ÉTÉ prochain"]);
    // Terms are OR-ed; the text matching more of them first.
    assert_eq!(
        texts_of(&store, &["lyon", "chers", "lundi"], 10).await,
        ["Les dentistes de Lyon sont chers", "Rendez-vous chez le dentiste lundi à 9 h"]
    );
    assert_eq!(
        texts_of(&store, &["dentiste", "lundi"], 10).await,
        ["Rendez-vous chez le dentiste lundi à 9 h", "Les dentistes de Lyon sont chers"]
    );
    // A term is a phrase of its words, the last one a prefix; punctuation is no syntax.
    assert_eq!(texts_of(&store, &["l'ete dern"], 10).await, ["L'été dernier à Biarritz"]);
    assert_eq!(texts_of(&store, &["\"dentiste\" OR *"], 10).await, Vec::<String>::new());
    assert_eq!(texts_of(&store, &["biarritz\""], 10).await, ["L'été dernier à Biarritz"]);
    // Only word starts match.
    assert_eq!(texts_of(&store, &["entiste"], 10).await, Vec::<String>::new());
    assert_eq!(texts_of(&store, &["pneu"], 10).await, Vec::<String>::new());
}

async fn keyword_search_limits_and_empty_queries(store: Store) {
    assert_eq!(texts_of(&store, &["rien"], 5).await, Vec::<String>::new());
    for i in 0..5 {
        store.add_souvenir(&format!("souvenir numéro {i}"), None, at(i)).await.unwrap();
    }
    let all = store.search_souvenirs_keyword(&terms(&["souvenir"]), 10).await.unwrap();
    assert_eq!(all, store.list_souvenirs().await.unwrap());
    assert_eq!(texts_of(&store, &["numero"], 2).await, ["souvenir numéro 0", "souvenir numéro 1"]);
    assert_eq!(texts_of(&store, &["numero"], 0).await, Vec::<String>::new());
    assert_eq!(store.search_souvenirs_keyword(&[], 10).await.unwrap(), vec![]);
    // Terms with no word in them match nothing, and do not stop the others.
    assert_eq!(texts_of(&store, &["!!", "-"], 10).await, Vec::<String>::new());
    assert_eq!(texts_of(&store, &["!!", "3"], 10).await, ["souvenir numéro 3"]);
}

// ---------------------------------------------------------------------------------------
// Projects and decisions

async fn projects_are_created_once_and_found_by_normalised_name(store: Store) {
    let CreateProjet::Created(p) =
        store.create_projet("Émeraude Café", Some("le site"), Some("maquette"), at(0)).await.unwrap()
    else {
        panic!("created")
    };
    assert_eq!(p.nom, "Émeraude Café");
    assert_eq!(p.description.as_deref(), Some("le site"));
    assert_eq!(p.phase.as_deref(), Some("maquette"));
    assert_eq!(p.statut, Statut::Actif);
    assert_eq!((p.created_at, p.updated_at), (at(0), at(0)));
    assert_eq!(
        store.create_projet("  emeraude   CAFE ", None, None, at(1)).await.unwrap(),
        CreateProjet::Duplicate(p.clone())
    );
    let CreateProjet::Created(q) = store.create_projet("Atlas", None, None, at(2)).await.unwrap() else {
        panic!("created")
    };
    assert_eq!(q.phase, None);
    for name in ["Émeraude Café", "EMERAUDE CAFÉ", " émeraude  café "] {
        assert_eq!(store.find_projet(name).await.unwrap(), Some(p.clone()), "{name}");
    }
    // The whole name, not a part of it.
    assert_eq!(store.find_projet("emeraude").await.unwrap(), None);
    assert_eq!(store.find_projet("Atla").await.unwrap(), None);
    assert_eq!(store.list_projets().await.unwrap(), vec![p.clone(), q]);
    let detail = store.projet_detail(p.id).await.unwrap().unwrap();
    assert_eq!(detail.phases, vec![PhaseChange { phase: "maquette".into(), since: at(0) }]);
}

async fn projects_change_with_phase_history_only_on_a_real_change(store: Store) {
    let CreateProjet::Created(p) = store.create_projet("Atlas", None, Some("cadrage"), at(0)).await.unwrap() else {
        panic!("created")
    };
    let phase = |p: &str| ProjetChanges { phase: Some(p.into()), ..Default::default() };

    let UpdateProjet::Updated { before, after } = store.update_projet(p.id, &phase("cadrage"), at(1)).await.unwrap()
    else {
        panic!("updated")
    };
    assert_eq!(before, p);
    assert_eq!(after.phase.as_deref(), Some("cadrage"));
    assert_eq!(after.updated_at, at(1));

    let UpdateProjet::Updated { after, .. } = store.update_projet(p.id, &phase("développement"), at(2)).await.unwrap()
    else {
        panic!("updated")
    };
    assert_eq!(after.phase.as_deref(), Some("développement"));

    let changes = ProjetChanges { description: Some("la refonte".into()), statut: Some(Statut::EnPause), phase: None };
    let UpdateProjet::Updated { before, after: last } = store.update_projet(p.id, &changes, at(3)).await.unwrap()
    else {
        panic!("updated")
    };
    assert_eq!(before, after);
    assert_eq!(last.description.as_deref(), Some("la refonte"));
    assert_eq!(last.statut, Statut::EnPause);
    assert_eq!(last.phase.as_deref(), Some("développement"));
    assert_eq!((last.created_at, last.updated_at), (at(0), at(3)));

    assert_eq!(store.update_projet(p.id + 100, &phase("x"), at(4)).await.unwrap(), UpdateProjet::NotFound);
    let detail = store.projet_detail(p.id).await.unwrap().unwrap();
    assert_eq!(detail.projet, last);
    assert_eq!(
        detail.phases,
        vec![
            PhaseChange { phase: "cadrage".into(), since: at(0) },
            PhaseChange { phase: "développement".into(), since: at(2) },
        ]
    );
    // Every status round-trips.
    for statut in Statut::ALL {
        let changes = ProjetChanges { statut: Some(statut), ..Default::default() };
        let UpdateProjet::Updated { after, .. } = store.update_projet(p.id, &changes, at(5)).await.unwrap() else {
            panic!("updated")
        };
        assert_eq!(after.statut, statut);
        assert_eq!(store.find_projet("atlas").await.unwrap().unwrap().statut, statut);
    }
}

async fn decisions_and_project_detail(store: Store) {
    let CreateProjet::Created(a) = store.create_projet("Alpha", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    let CreateProjet::Created(b) = store.create_projet("Bêta", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    let d1 = store.add_decision(a.id, "On garde Rust", at(10)).await.unwrap().unwrap();
    let d2 = store.add_decision(b.id, "PostgreSQL aussi", at(20)).await.unwrap().unwrap();
    let d3 = store.add_decision(a.id, "Pas de cache", at(30)).await.unwrap().unwrap();
    assert_eq!(d1.projet, "Alpha");
    assert_eq!(d2.projet, "Bêta");
    assert_eq!(d1.texte, "On garde Rust");
    assert_eq!(d1.created_at, at(10));
    assert_eq!(store.add_decision(b.id + 100, "perdue", at(40)).await.unwrap(), None);
    assert_eq!(store.list_decisions().await.unwrap(), vec![d1.clone(), d2.clone(), d3.clone()]);
    assert_eq!(store.decisions_between(at(10), at(30)).await.unwrap(), vec![d1.clone(), d2]);
    assert_eq!(store.decisions_between(at(31), at(40)).await.unwrap(), vec![]);

    store.create_note("une", Some(a.id), at(1)).await.unwrap();
    store.create_note("deux", Some(a.id), at(2)).await.unwrap();
    store.create_note("ailleurs", Some(b.id), at(3)).await.unwrap();
    store.create_note("nulle part", None, at(4)).await.unwrap();
    let detail = store.projet_detail(a.id).await.unwrap().unwrap();
    // A decision touches the project.
    assert_eq!(detail.projet.updated_at, at(30));
    assert_eq!(detail.decisions, vec![d1, d3]);
    assert_eq!(detail.notes, 2);
    assert_eq!(detail.phases, vec![]);
    assert_eq!(store.projet_detail(b.id + 100).await.unwrap(), None);
}

// ---------------------------------------------------------------------------------------
// The chrono

fn applied(change: ChronoChange) -> SessionTravail {
    match change {
        ChronoChange::Applied(s) => s,
        other => panic!("expected Applied, got {other:?}"),
    }
}

async fn the_chrono_refuses_what_does_not_apply(store: Store) {
    let CreateProjet::Created(p) = store.create_projet("Atlas", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    assert_eq!(store.start_session(p.id + 100, at(0)).await.unwrap(), ChronoChange::UnknownProject);
    assert_eq!(store.pause_session(at(0)).await.unwrap(), ChronoChange::NoSession);
    assert_eq!(store.resume_session(at(0)).await.unwrap(), ChronoChange::NoSession);
    assert_eq!(store.stop_session(at(0)).await.unwrap(), ChronoChange::NoSession);
    assert_eq!(store.running_session().await.unwrap(), None);

    let started = applied(store.start_session(p.id, at(1)).await.unwrap());
    assert_eq!(started.projet, "Atlas");
    assert_eq!((started.debut, started.fin, started.pauses.clone()), (at(1), None, vec![]));
    assert_eq!(store.start_session(p.id, at(2)).await.unwrap(), ChronoChange::AlreadyRunning(started.clone()));
    assert_eq!(store.resume_session(at(2)).await.unwrap(), ChronoChange::NotPaused(started.clone()));

    let paused = applied(store.pause_session(at(3)).await.unwrap());
    assert_eq!(paused.pauses, vec![Pause { debut: at(3), fin: None }]);
    assert!(paused.is_paused());
    assert_eq!(store.pause_session(at(4)).await.unwrap(), ChronoChange::AlreadyPaused(paused.clone()));
    assert_eq!(store.running_session().await.unwrap(), Some(paused));

    let resumed = applied(store.resume_session(at(5)).await.unwrap());
    assert_eq!(resumed.pauses, vec![Pause { debut: at(3), fin: Some(at(5)) }]);
    assert!(!resumed.is_paused());
    applied(store.pause_session(at(7)).await.unwrap());

    // Stopping a paused session closes its pause at the same instant.
    let stopped = applied(store.stop_session(at(9)).await.unwrap());
    assert_eq!(stopped.fin, Some(at(9)));
    assert_eq!(
        stopped.pauses,
        vec![Pause { debut: at(3), fin: Some(at(5)) }, Pause { debut: at(7), fin: Some(at(9)) }]
    );
    assert_eq!(store.stop_session(at(10)).await.unwrap(), ChronoChange::NoSession);
    assert_eq!(store.running_session().await.unwrap(), None);

    let next = applied(store.start_session(p.id, at(20)).await.unwrap());
    assert!(next.id > stopped.id);
    assert_eq!(store.list_sessions().await.unwrap(), vec![stopped, next]);
}

async fn the_chrono_never_writes_a_time_before_the_last_event(store: Store) {
    let CreateProjet::Created(p) = store.create_projet("Atlas", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    let s = applied(store.start_session(p.id, at(10)).await.unwrap());
    assert_eq!(s.debut, at(10));
    // The clock stepped back at every command.
    let s = applied(store.pause_session(at(5)).await.unwrap());
    assert_eq!(s.pauses, vec![Pause { debut: at(10), fin: None }]);
    let s = applied(store.resume_session(at(3)).await.unwrap());
    assert_eq!(s.pauses, vec![Pause { debut: at(10), fin: Some(at(10)) }]);
    let s = applied(store.pause_session(at(20)).await.unwrap());
    assert_eq!(s.pauses[1], Pause { debut: at(20), fin: None });
    let s = applied(store.stop_session(at(15)).await.unwrap());
    assert_eq!(s.fin, Some(at(20)));
    assert_eq!(s.pauses[1], Pause { debut: at(20), fin: Some(at(20)) });
    // A new session never starts before the last one ended.
    let next = applied(store.start_session(p.id, at(1)).await.unwrap());
    assert_eq!(next.debut, at(20));
    let next = applied(store.stop_session(at(2)).await.unwrap());
    assert_eq!(next.fin, Some(at(20)));
    let later = applied(store.start_session(p.id, at(30)).await.unwrap());
    assert_eq!(later.debut, at(30));
}

async fn sessions_overlapping_a_window(store: Store) {
    let CreateProjet::Created(a) = store.create_projet("Alpha", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    let CreateProjet::Created(b) = store.create_projet("Bêta", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    applied(store.start_session(a.id, at(0)).await.unwrap());
    applied(store.pause_session(at(2)).await.unwrap());
    applied(store.resume_session(at(3)).await.unwrap());
    let s1 = applied(store.stop_session(at(10)).await.unwrap());
    applied(store.start_session(b.id, at(20)).await.unwrap());
    let s2 = applied(store.stop_session(at(30)).await.unwrap());
    let s3 = applied(store.start_session(a.id, at(40)).await.unwrap());

    let window = |from, to, p| {
        let store = store.clone();
        async move { store.sessions_overlapping(at(from), at(to), p).await.unwrap() }
    };
    assert_eq!(window(0, 100, None).await, vec![s1.clone(), s2.clone(), s3.clone()]);
    assert_eq!(window(0, 100, Some(a.id)).await, vec![s1.clone(), s3.clone()]);
    assert_eq!(window(0, 100, Some(b.id)).await, vec![s2.clone()]);
    assert_eq!(window(0, 100, Some(b.id + 100)).await, vec![]);
    // [from, to): a session ending at `from` or starting at `to` does not overlap.
    assert_eq!(window(10, 20, None).await, vec![]);
    assert_eq!(window(9, 21, None).await, vec![s1.clone(), s2.clone()]);
    assert_eq!(window(25, 26, None).await, vec![s2]);
    // The running session overlaps everything after its start.
    assert_eq!(window(1000, 2000, None).await, vec![s3.clone()]);
    assert_eq!(window(1000, 2000, Some(a.id)).await, vec![s3]);
    assert_eq!(s1.pauses, vec![Pause { debut: at(2), fin: Some(at(3)) }]);
}

// ---------------------------------------------------------------------------------------
// Conversations, messages, turns, pending actions

async fn conversations_are_created_once_and_labelled_once(store: Store) {
    assert_eq!(store.conversation_domain("c1").await.unwrap(), None);
    store.create_conversation("c1", at(0)).await.unwrap();
    store.create_conversation("c1", at(1)).await.unwrap();
    assert_eq!(store.conversation_domain("c1").await.unwrap(), Some(None));
    assert_eq!(store.conversation_label_source("c1").await.unwrap(), None);
    assert_eq!(
        store.label_conversation("c1", "TRAVAIL", LabelSource::Fallback).await.unwrap().as_deref(),
        Some("TRAVAIL")
    );
    // The first label stays, and so does who set it.
    assert_eq!(store.label_conversation("c1", "PERSO", LabelSource::Router).await.unwrap().as_deref(), Some("TRAVAIL"));
    assert_eq!(store.conversation_domain("c1").await.unwrap(), Some(Some("TRAVAIL".into())));
    assert_eq!(store.conversation_label_source("c1").await.unwrap().as_deref(), Some("fallback"));
    assert_eq!(store.label_conversation("absente", "PERSO", LabelSource::Router).await.unwrap(), None);
    assert_eq!(store.conversation_domain("absente").await.unwrap(), None);
    // A domain outside the three is refused by the CHECK, and changes nothing.
    store.create_conversation("c2", at(2)).await.unwrap();
    let err = store.label_conversation("c2", "AUTRE", LabelSource::Router).await.unwrap_err();
    assert!(matches!(err, StoreError::Database(_)), "{err:?}");
    assert_eq!(store.conversation_domain("c2").await.unwrap(), Some(None));
    assert_eq!(
        store.label_conversation("c2", "QUOTIDIEN", LabelSource::Router).await.unwrap().as_deref(),
        Some("QUOTIDIEN")
    );
    assert_eq!(store.conversation_label_source("c2").await.unwrap().as_deref(), Some("router"));
}

async fn recent_messages_are_the_last_in_order(store: Store) {
    store.create_conversation("c1", at(0)).await.unwrap();
    store.create_conversation("c2", at(0)).await.unwrap();
    for i in 0..5 {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        store.append_message("c1", role, &format!("message {i}"), at(i)).await.unwrap();
        store.append_message("c2", "user", &format!("autre {i}"), at(i)).await.unwrap();
    }
    let pair = |r: &str, c: &str| (r.to_string(), c.to_string());
    assert_eq!(
        store.recent_messages("c1", 3).await.unwrap(),
        vec![pair("user", "message 2"), pair("assistant", "message 3"), pair("user", "message 4")]
    );
    assert_eq!(store.recent_messages("c1", 50).await.unwrap().len(), 5);
    assert_eq!(store.recent_messages("c1", 50).await.unwrap()[0], pair("user", "message 0"));
    assert_eq!(store.recent_messages("c2", 1).await.unwrap(), vec![pair("user", "autre 4")]);
    assert_eq!(store.recent_messages("c1", 0).await.unwrap(), vec![]);
    assert_eq!(store.recent_messages("absente", 5).await.unwrap(), vec![]);
    // Unknown conversation, or a role outside the two: refused.
    assert!(matches!(store.append_message("absente", "user", "x", at(9)).await, Err(StoreError::Database(_))));
    assert!(matches!(store.append_message("c1", "system", "x", at(9)).await, Err(StoreError::Database(_))));
    assert_eq!(store.recent_messages("c1", 50).await.unwrap().len(), 5);
}

async fn turns_are_traced_newest_first(store: Store) {
    store.create_conversation("c1", at(0)).await.unwrap();
    let first = store.begin_turn("c1", "quelle heure est-il", at(1)).await.unwrap();
    let second = store.begin_turn("c1", "note : acheter du pain", at(2)).await.unwrap();
    assert!(second > first);
    let trace = json!({"route": "QUOTIDIEN", "calls": [{"tool": "creer_note", "ok": true}], "é": 1.5});
    store.finish_turn(second, &trace, "Note créée.", "Note créée", at(3)).await.unwrap();

    let turns = store.list_turns(10).await.unwrap();
    assert_eq!(
        turns,
        vec![
            TurnRecord {
                id: second,
                conversation_id: "c1".into(),
                user_text: "note : acheter du pain".into(),
                trace,
                written: Some("Note créée.".into()),
                spoken: Some("Note créée".into()),
                status: "complete".into(),
                started_at: at(2),
                finished_at: Some(at(3)),
                stages: None,
            },
            TurnRecord {
                id: first,
                conversation_id: "c1".into(),
                user_text: "quelle heure est-il".into(),
                trace: json!({}),
                written: None,
                spoken: None,
                status: "interrupted".into(),
                started_at: at(1),
                finished_at: None,
                stages: None,
            },
        ]
    );
    assert_eq!(store.list_turns(1).await.unwrap(), turns[..1].to_vec());
    assert!(matches!(store.begin_turn("absente", "x", at(4)).await, Err(StoreError::Database(_))));
}

async fn a_voice_turn_keeps_its_stage_timings(store: Store) {
    store.create_conversation("c1", at(0)).await.unwrap();
    let typed = store.begin_turn("c1", "note : du pain", at(1)).await.unwrap();
    let spoken = store.begin_turn("c1", "rappelle-moi d'appeler la banque", at(2)).await.unwrap();
    store
        .finish_turn(spoken, &json!({"router": {}}), "Rappel n°1 enregistré.", "Rappel numéro un", at(3))
        .await
        .unwrap();
    let stages =
        json!({"end_of_speech_s": 12.4, "transcription_ms": 410, "routing_ms": null, "tools_ms": 0.8, "felt_ms": 760});
    store.set_turn_stages(spoken, &stages).await.unwrap();
    // A later write replaces them; an unknown turn is no error and writes nothing.
    let stages = json!({"end_of_speech_s": 12.4, "transcription_ms": 395, "felt_ms": 742, "é": "ok"});
    store.set_turn_stages(spoken, &stages).await.unwrap();
    store.set_turn_stages(spoken + 1000, &json!({"felt_ms": 1})).await.unwrap();
    let turns = store.list_turns(10).await.unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0].id, spoken);
    assert_eq!(turns[0].stages, Some(stages));
    assert_eq!(turns[0].trace, json!({"router": {}}), "the trace is untouched");
    assert_eq!(turns[1].id, typed);
    assert_eq!(turns[1].stages, None, "a typed turn has none");
}

async fn a_pending_action_is_replaced_and_taken_once(store: Store) {
    store.create_conversation("c1", at(0)).await.unwrap();
    store.create_conversation("c2", at(0)).await.unwrap();
    let pending = |conv: &str, tool: &str, m: i64| PendingAction {
        conversation_id: conv.into(),
        tool: tool.into(),
        arguments: json!({"texte": format!("{tool} {m}"), "n": m}),
        question: format!("Je fais {tool} ?"),
        created_at: at(m),
    };
    assert_eq!(store.take_pending("c1").await.unwrap(), None);
    store.set_pending(&pending("c1", "creer_note", 1)).await.unwrap();
    store.set_pending(&pending("c2", "creer_rappel", 2)).await.unwrap();
    store.set_pending(&pending("c1", "ajouter_preference", 3)).await.unwrap();
    assert_eq!(store.take_pending("c1").await.unwrap(), Some(pending("c1", "ajouter_preference", 3)));
    assert_eq!(store.take_pending("c1").await.unwrap(), None);
    assert_eq!(store.take_pending("c2").await.unwrap(), Some(pending("c2", "creer_rappel", 2)));
    assert_eq!(store.take_pending("c2").await.unwrap(), None);
    assert!(matches!(store.set_pending(&pending("absente", "x", 4)).await, Err(StoreError::Database(_))));
}

// ---------------------------------------------------------------------------------------
// Racing writers: each would break without the single writer.

/// Runs `n` copies of `op` at once (released together) and returns their results.
async fn race<T, F, Fut>(n: usize, op: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(n));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let barrier = barrier.clone();
            let fut = op(i);
            tokio::spawn(async move {
                barrier.wait().await;
                fut.await
            })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.unwrap());
    }
    out
}

async fn racing_starts_run_one_session(store: Store) {
    let CreateProjet::Created(p) = store.create_projet("Atlas", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    let pid = p.id;
    let mut sessions = Vec::new();
    // Several rounds: the later ones find the pool's connections already open.
    for round in 0..3_i64 {
        let results = race(20, |i| {
            let store = store.clone();
            async move { store.start_session(pid, at(100 * round + i as i64)).await.unwrap() }
        })
        .await;
        let winners: Vec<&SessionTravail> =
            results.iter().filter_map(|r| if let ChronoChange::Applied(s) = r { Some(s) } else { None }).collect();
        assert_eq!(winners.len(), 1, "{results:?}");
        let running = store.running_session().await.unwrap().unwrap();
        assert_eq!(&running, winners[0]);
        let refused = results.iter().filter(|r| **r == ChronoChange::AlreadyRunning(running.clone())).count();
        assert_eq!(refused, 19, "{results:?}");
        sessions.push(applied(store.stop_session(at(100 * round + 50)).await.unwrap()));
    }
    assert_eq!(store.list_sessions().await.unwrap(), sessions);
}

async fn racing_preferences_respect_the_cap(store: Store) {
    let results = race(30, |i| {
        let store = store.clone();
        async move { store.add_preference(&format!("préférence {i}"), 5, at(i as i64)).await.unwrap() }
    })
    .await;
    let mut counts: Vec<u32> = results
        .iter()
        .filter_map(|r| if let AddPreference::Added { active, .. } = r { Some(*active) } else { None })
        .collect();
    counts.sort();
    assert_eq!(counts, [1, 2, 3, 4, 5], "{results:?}");
    assert_eq!(results.iter().filter(|r| **r == AddPreference::CapReached { cap: 5 }).count(), 25);
    assert_eq!(store.active_preferences(100).await.unwrap().len(), 5);
    assert_eq!(store.list_preferences().await.unwrap().len(), 5);
}

async fn racing_marks_mark_a_reminder_once(store: Store) {
    // Several reminders, one after the other: the later races find the pool's connections
    // already open.
    for n in 0..4_i64 {
        let rappel = store.create_rappel(&format!("appeler le garage {n}"), at(10), at(0)).await.unwrap();
        let id = rappel.id;
        let results = race(10, |i| {
            let store = store.clone();
            async move { store.mark_rappel_done(id, at(20 + i as i64)).await.unwrap() }
        })
        .await;
        let marked: Vec<&Rappel> =
            results.iter().filter_map(|r| if let MarkDone::Marked(r) = r { Some(r) } else { None }).collect();
        assert_eq!(marked.len(), 1, "{results:?}");
        let done = store.get_rappel(id).await.unwrap().unwrap();
        assert_eq!(&done, marked[0]);
        assert_eq!(results.iter().filter(|r| **r == MarkDone::AlreadyDone(done.clone())).count(), 9);
    }
}

async fn racing_announcements_announce_once(store: Store) {
    let rappel = store.create_rappel("réunion", at(10), at(0)).await.unwrap();
    let id = rappel.id;
    let results = race(10, |i| {
        let store = store.clone();
        async move { store.mark_rappel_announced(id, at(10 + i as i64)).await.unwrap() }
    })
    .await;
    assert_eq!(results.iter().filter(|&&first| first).count(), 1, "{results:?}");
    assert_eq!(store.due_unannounced_rappels(at(100)).await.unwrap(), vec![]);
}

async fn racing_creations_create_one_project(store: Store) {
    let results = race(10, |i| {
        let store = store.clone();
        // The same name, spelled differently each time.
        let nom = if i % 2 == 0 { "Émeraude" } else { "emeraude" };
        async move { store.create_projet(nom, None, Some("cadrage"), at(i as i64)).await.unwrap() }
    })
    .await;
    let created: Vec<&Projet> =
        results.iter().filter_map(|r| if let CreateProjet::Created(p) = r { Some(p) } else { None }).collect();
    assert_eq!(created.len(), 1, "{results:?}");
    let projet = created[0].clone();
    assert_eq!(results.iter().filter(|r| **r == CreateProjet::Duplicate(projet.clone())).count(), 9);
    assert_eq!(store.list_projets().await.unwrap(), vec![projet.clone()]);
    assert_eq!(store.projet_detail(projet.id).await.unwrap().unwrap().phases.len(), 1);
}

// ---------------------------------------------------------------------------------------
// Both backends side by side

/// The keyword search of both backends on one corpus: the same souvenirs, in the same
/// order, for every query (FTS5 and its PostgreSQL rendition).
#[cfg_attr(not(feature = "system-tests"), ignore = "system tier: PostgreSQL (--features system-tests)")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyword_search_is_the_same_on_both_backends() {
    let _slot = PG_SLOTS.acquire().await.unwrap();
    let (sqlite, _dir) = sqlite_store().await;
    let pg = pg_store().await;
    let corpus = [
        "Rendez-vous chez le dentiste lundi à 9 h avec le docteur Martin",
        "Le dentiste a dit de revenir dans six mois",
        "Les dentistes de Lyon sont chers, ceux de Villeurbanne moins",
        "Ma sœur Élodie habite à Lyon depuis l'été 2019",
        "L'été dernier nous sommes allés à Biarritz, l'été d'avant à Étretat",
        "été",
        "Code du portail : 4512, code de l'alarme : 0000",
        "Martin préfère le thé vert ; Élodie le café",
        "Le vélo de Martin est rangé dans le garage",
        "Garage Dupont : vidange à faire avant l'hiver",
        "Anniversaire d'Élodie le 12 mars",
        "Le chat s'appelle Noël, il a peur de l'aspirateur",
        "réunion réunion réunion : trop de réunions cette semaine",
        "ŒUVRE complète de Zola à la bibliothèque",
        "Mot de passe du Wi-Fi : « Émeraude-2024 »",
    ];
    for (i, texte) in corpus.iter().enumerate() {
        let now = at(i as i64);
        assert_eq!(
            sqlite.add_souvenir(texte, None, now).await.unwrap(),
            pg.add_souvenir(texte, None, now).await.unwrap()
        );
    }
    let queries: &[&[&str]] = &[
        &["dentiste"],
        &["dentiste", "lyon"],
        &["lyon", "dentiste"],
        &["martin"],
        &["martin", "elodie", "cafe"],
        &["ete"],
        &["Été", "lyon"],
        &["l'ete"],
        &["reunion"],
        &["reunions", "semaine"],
        &["code"],
        &["cod", "garage", "velo"],
        &["oeuvre"],
        &["œuvre"],
        &["emeraude"],
        &["2019"],
        &["45"],
        &["le"],
        &["le", "de", "a"],
        &["noël", "chat"],
        &["wi-fi"],
        &["!!", "garage"],
        &["inconnu"],
        &["dentiste", "dentiste"],
    ];
    for query in queries {
        for limit in [1, 3, 10, 100] {
            let a = sqlite.search_souvenirs_keyword(&terms(query), limit).await.unwrap();
            let b = pg.search_souvenirs_keyword(&terms(query), limit).await.unwrap();
            assert_eq!(a, b, "query {query:?}, limit {limit}");
        }
    }
    sqlite.close().await;
    pg.close().await;
}

/// The PostgreSQL keyword search reads only the souvenirs holding a term: a row that
/// cannot be decoded, holding none of the terms, never breaks it (reading the whole table
/// would); its statistics come from `souvenirs_stats`, which follows every write.
#[cfg_attr(not(feature = "system-tests"), ignore = "system tier: PostgreSQL (--features system-tests)")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keyword_search_reads_only_the_matching_souvenirs() {
    let _slot = PG_SLOTS.acquire().await.unwrap();
    let pg = pg_store().await;
    pg.add_souvenir("Le code du portail est 4512", None, at(0)).await.unwrap();
    pg.add_souvenir("Le vélo est au garage", None, at(1)).await.unwrap();
    // Written behind the store's back with a timestamp it cannot read.
    sqlx::query("INSERT INTO souvenirs (texte, created_at, mots, nb_mots) VALUES ('hors sujet', 'pas une date', 'hors sujet', 2)")
        .execute(pg.pool())
        .await
        .unwrap();
    let found = pg.search_souvenirs_keyword(&terms(&["portail"]), 10).await.unwrap();
    assert_eq!(found.iter().map(|s| s.texte.as_str()).collect::<Vec<_>>(), ["Le code du portail est 4512"]);
    let stats: (i64, i64) =
        sqlx::query_as("SELECT nb_souvenirs, nb_mots FROM souvenirs_stats").fetch_one(pg.pool()).await.unwrap();
    assert_eq!(stats, (3, 6 + 5 + 2));
    // The corrupt row is reported when a query does reach it.
    assert!(matches!(
        pg.search_souvenirs_keyword(&terms(&["sujet"]), 10).await,
        Err(StoreError::Corrupt { table: "souvenirs", .. })
    ));
    pg.close().await;
}

/// The advisory lock of the PostgreSQL writers is the one documented.
#[cfg_attr(not(feature = "system-tests"), ignore = "system tier: PostgreSQL (--features system-tests)")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_writers_hold_the_arth_advisory_lock() {
    use arthur_agents::memory::postgres::{WRITE_LOCK_CLASS, WRITE_LOCK_KEY};
    assert_eq!(WRITE_LOCK_CLASS, i32::from_be_bytes(*b"ARTH"));
    assert_eq!((WRITE_LOCK_CLASS, WRITE_LOCK_KEY), (1_095_914_568, 0));

    let _slot = PG_SLOTS.acquire().await.unwrap();
    let store = pg_store().await;
    let CreateProjet::Created(p) = store.create_projet("Atlas", None, None, at(0)).await.unwrap() else {
        panic!("created")
    };
    // Someone else holds the writers' lock: a write waits for it, then sees what it wrote.
    let mut other = store.pool().begin().await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
        .bind(WRITE_LOCK_CLASS)
        .bind(WRITE_LOCK_KEY)
        .execute(&mut *other)
        .await
        .unwrap();
    sqlx::query("INSERT INTO sessions_travail (projet_id, debut) VALUES ($1, $2)")
        .bind(p.id)
        .bind(arthur_agents::time::to_db(at(1)))
        .execute(&mut *other)
        .await
        .unwrap();
    let start = tokio::spawn({
        let store = store.clone();
        async move { store.start_session(p.id, at(2)).await.unwrap() }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!start.is_finished(), "the write waits for the lock");
    other.commit().await.unwrap();
    let ChronoChange::AlreadyRunning(running) = start.await.unwrap() else { panic!("already running") };
    assert_eq!(running.debut, at(1));
    store.close().await;
}
