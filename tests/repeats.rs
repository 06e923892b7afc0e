//! The everyday basics, second round, through the turn offline (no model): a reminder that
//! repeats (its rule stored, its next occurrence after one is done or seen, the series
//! stopped), a reminder moved or said again later, alarms that ring like timers until
//! « c'est bon » or « encore cinq minutes », the souvenirs and preferences read by number,
//! words or the last ones, and a timer whose deadline passed with no bell running. The
//! clock is Monday 30 November 2026, 10:00 in Paris.

use crate::common;

use arthur_agents::memory::{BasicsStore, Delivery, Frequence, Genre, MemoryStore};
use arthur_agents::turn::TurnEngine;
use chrono::{Duration, TimeZone, Utc};

struct Offline {
    app: common::TestApp,
    engine: TurnEngine,
}

impl Offline {
    async fn new() -> Self {
        let app = common::spawn_app().await;
        let engine = TurnEngine::new(None, app.ctx.clone());
        Self { app, engine }
    }

    async fn say(&self, text: &str) -> String {
        self.engine.run(None, text, None).await.unwrap().written
    }

    async fn say_in(&self, conversation: &str, text: &str) -> String {
        self.engine.run(Some(conversation), text, None).await.unwrap().written
    }
}

fn paris(d: u32, h: u32, m: u32) -> chrono::DateTime<Utc> {
    chrono_tz::Europe::Paris.with_ymd_and_hms(2026, 12, d, h, m, 0).unwrap().with_timezone(&Utc)
}

#[tokio::test]
async fn a_weekly_reminder_is_stored_as_a_rule_and_comes_back_after_each_occurrence() {
    let o = Offline::new().await;
    let r = o.say("rappelle-moi tous les lundis à 19 h de sortir les poubelles").await;
    assert_eq!(
        r,
        "Rappel répété n°1 enregistré : « sortir les poubelles », tous les lundis à 19 h 00 ; le premier le lundi 30 novembre 2026 à 19 h 00."
    );
    let stored = o.app.fresh().await.get_rappel(1).await.unwrap().unwrap();
    let rule = stored.repetition.clone().expect("stored as a rule");
    assert_eq!((rule.frequence, rule.intervalle), (Frequence::Hebdomadaire, 1));
    let listed = o.say("quels sont mes rappels ?").await;
    assert!(
        listed.contains("« sortir les poubelles » pour le lundi 30 novembre 2026 à 19 h 00, tous les lundis à 19 h 00"),
        "{listed}"
    );

    // Done: the next occurrence comes, the reminder keeps its number.
    o.app.clock.set(paris(1, 8, 0) - Duration::hours(13));
    let done = o.say("le rappel 1 est fait").await;
    assert_eq!(
        done,
        "Rappel n°1 « sortir les poubelles » fait pour le lundi 30 novembre 2026 à 19 h 00 ; le prochain : le lundi 7 décembre 2026 à 19 h 00 (tous les lundis à 19 h 00)."
    );
    let next = o.app.fresh().await.get_rappel(1).await.unwrap().unwrap();
    assert_eq!((next.echeance, next.fait, next.repetition.unwrap().occurrences), (paris(7, 19, 0), false, 1));

    // Seen (heard to the end by the voice): the next occurrence comes too, announced again.
    o.app.clock.set(paris(7, 19, 0));
    assert!(o.app.store.mark_rappel_announced(1, paris(7, 19, 0)).await.unwrap());
    assert!(o.app.store.mark_rappel_delivered(1, paris(7, 19, 1), Delivery::Voice).await.unwrap());
    let next = o.app.fresh().await.get_rappel(1).await.unwrap().unwrap();
    assert_eq!(next.echeance, paris(14, 19, 0));
    assert!(o.app.store.due_unannounced_rappels(paris(14, 19, 0)).await.unwrap().iter().any(|r| r.id == 1));

    // « arrête le rappel des poubelles »: described, so asked first; « oui » ends the series.
    let asked = o.say_in("c1", "arrête le rappel des poubelles").await;
    assert_eq!(asked, "Tu veux que j'arrête le rappel répété n°1 « sortir les poubelles » ?");
    assert!(!o.app.fresh().await.get_rappel(1).await.unwrap().unwrap().fait, "nothing written before « oui »");
    let stopped = o.say_in("c1", "oui").await;
    assert!(
        stopped.starts_with(
            "Rappel répété n°1 « sortir les poubelles » arrêté (tous les lundis à 19 h 00) : il ne reviendra plus"
        ),
        "{stopped}"
    );
    assert!(o.app.fresh().await.list_rappels(false).await.unwrap().is_empty());
    let all = o.say("tous mes rappels").await;
    assert!(all.contains("(série arrêtée)"), "{all}");
}

#[tokio::test]
async fn a_rule_said_without_its_hour_or_loosely_is_asked_and_never_made_a_one_off() {
    let o = Offline::new().await;
    let asked = o.say_in("c", "rappelle-moi tous les lundis de sortir les poubelles").await;
    assert_eq!(
        asked,
        "Tu veux que je crée le rappel répété « sortir les poubelles » tous les lundis à 9 h 00, à partir du lundi 7 décembre 2026 à 9 h 00 ?"
    );
    assert!(o.app.fresh().await.list_rappels(true).await.unwrap().is_empty(), "asked, nothing written");
    let created = o.say_in("c", "oui").await;
    assert!(
        created.starts_with("Rappel répété n°1 enregistré : « sortir les poubelles », tous les lundis à 9 h 00"),
        "{created}"
    );
    // Every weekday, every month on the 5th, every two weeks.
    assert!(o
        .say("rappelle-moi du lundi au vendredi à 8 h de prendre mes médicaments")
        .await
        .contains("du lundi au vendredi à 8 h 00 ; le premier le mardi 1er décembre 2026 à 8 h 00"));
    assert!(o
        .say("rappelle-moi le 5 de chaque mois à 10 h de payer le loyer")
        .await
        .contains("tous les mois le 5 à 10 h 00 ; le premier le samedi 5 décembre 2026 à 10 h 00"));
    assert!(o
        .say("rappelle-moi toutes les deux semaines le lundi à 18 h d'arroser les bonsaïs")
        .await
        .contains("un lundi sur deux à 18 h 00"));
    assert!(o
        .say("rappelle-moi tous les jours à 21 h de fermer les volets")
        .await
        .contains("tous les jours à 21 h 00"));
    let written = o.app.fresh().await.list_rappels(false).await.unwrap();
    assert_eq!(written.len(), 5);
    assert!(written.iter().all(|r| r.is_recurring()), "never a one-off: {written:?}");
}

#[tokio::test]
async fn a_reminder_is_moved_with_its_old_and_new_time_and_said_again_later() {
    let o = Offline::new().await;
    o.say("rappelle-moi demain à 9 h d'appeler la banque").await;
    let moved = o.say_in("c", "décale le rappel 1 à 11 h").await;
    assert_eq!(
        moved,
        "Rappel n°1 « appeler la banque » déplacé : il était prévu le mardi 1er décembre 2026 à 9 h 00, il l'est maintenant le lundi 30 novembre 2026 à 11 h 00."
    );
    assert_eq!(
        o.app.fresh().await.get_rappel(1).await.unwrap().unwrap().echeance,
        Utc.with_ymd_and_hms(2026, 11, 30, 10, 0, 0).unwrap()
    );
    // « repousse-le à demain »: the reminder just said, at its own hour.
    let again = o.say_in("c", "repousse-le à demain").await;
    assert!(again.ends_with("il l'est maintenant le mardi 1er décembre 2026 à 11 h 00."), "{again}");
    let r = o.app.fresh().await.get_rappel(1).await.unwrap().unwrap();
    assert_eq!(r.echeance, paris(1, 11, 0));

    // Right after a due reminder: « rappelle-le-moi dans dix minutes ».
    o.app.clock.set(paris(1, 11, 0));
    assert!(o.app.store.mark_rappel_announced(1, paris(1, 11, 0)).await.unwrap());
    let snoozed = o.say("rappelle-le-moi dans dix minutes").await;
    assert!(snoozed.contains("il était prévu le mardi 1er décembre 2026 à 11 h 00, il l'est maintenant le mardi 1er décembre 2026 à 11 h 10"), "{snoozed}");
    assert!(o.app.store.due_unannounced_rappels(paris(1, 11, 5)).await.unwrap().is_empty(), "not before its new time");
    assert_eq!(o.app.store.due_unannounced_rappels(paris(1, 11, 10)).await.unwrap().len(), 1, "announced again then");

    // Nothing said before: « le » names nothing, nothing moves.
    let unknown = o.say("repousse-le à demain").await;
    assert!(unknown.starts_with("Je ne sais pas de quel rappel tu parles"), "{unknown}");
    // A time already past is never written.
    let past = o.say("décale le rappel 1 à hier 9 h").await;
    assert!(past.contains("déjà passé"), "{past}");
    assert_eq!(o.app.fresh().await.get_rappel(1).await.unwrap().unwrap().echeance, paris(1, 11, 10));
}

#[tokio::test]
async fn an_alarm_rings_like_a_timer_until_heard_or_put_off() {
    let o = Offline::new().await;
    assert_eq!(o.say("réveille-moi à 7 h").await, "Réveil n°1 réglé pour le mardi 1er décembre 2026 à 7 h 00.");
    assert_eq!(
        o.say("mets un réveil pour 6 h 30 demain").await,
        "Réveil n°2 réglé pour le mardi 1er décembre 2026 à 6 h 30."
    );
    let listed = o.say("quels sont mes réveils ?").await;
    assert!(listed.starts_with("Réveils (2) :"), "{listed}");
    // Alarms are not timers: « le minuteur » still means none.
    assert!(o.say("combien de temps reste-t-il ?").await.contains("Aucun minuteur"));
    let ambiguous = o.say("annule le réveil").await;
    assert!(
        ambiguous.contains("plusieurs réveils sont réglés") && ambiguous.contains("Rien n'a été écrit"),
        "{ambiguous}"
    );
    assert!(o.say("annule le réveil 2").await.starts_with("Réveil n°2 (mardi 1er décembre 2026 à 6 h 30) annulé."));

    // 7:00: it rings; « encore cinq minutes »; it rings again; « c'est bon ».
    o.app.clock.set(paris(1, 7, 0));
    let rung = o.app.store.ring_due_timers(paris(1, 7, 0)).await.unwrap();
    assert_eq!((rung.len(), rung[0].genre), (1, Genre::Reveil));
    let r = o.engine.run(None, "encore cinq minutes", None).await.unwrap();
    assert_eq!(r.written, "Réveil de 7 h 00 : je sonne de nouveau dans 5 min, à 7 h 05.");
    assert_eq!(r.spoken, "Réveil de sept heures : je sonne de nouveau dans cinq minutes, à sept heures cinq.");
    assert!(o.app.store.ringing_timers().await.unwrap().is_empty());
    o.app.clock.set(paris(1, 7, 5));
    assert_eq!(o.app.store.ring_due_timers(paris(1, 7, 5)).await.unwrap().len(), 1);
    assert_eq!(o.say("c'est bon").await, "Réveil de 7 h 00 arrêté.");
    assert!(o.app.fresh().await.active_alarms().await.unwrap().is_empty());
    assert!(o.say("quels sont mes réveils ?").await.starts_with("Aucun réveil réglé."));
    // An hour without a day that has passed is tomorrow's; a day without an hour is asked.
    assert!(o.say("réveille-moi à 6 h").await.contains("mercredi 2 décembre 2026 à 6 h 00"));
    assert_eq!(o.say("réveille-moi demain").await, "À quelle heure ? Dis par exemple : réveille-moi demain à 7 h.");
}

#[tokio::test]
async fn souvenirs_and_preferences_are_read_by_number_words_or_the_last_ones() {
    let o = Offline::new().await;
    o.say("retiens que ma fille s'appelle Léa").await;
    o.say("retiens que le code du portail est 4512").await;
    o.say("retiens que le dentiste est le docteur Martin").await;
    let all = o.say("quels sont mes souvenirs ?").await;
    assert!(all.starts_with("Souvenirs (3) :") && all.contains("n°2 « le code du portail est 4512 »"), "{all}");
    let one = o.say("le souvenir 2").await;
    assert_eq!(one, "Souvenirs n°2 (1) :\n- n°2 « le code du portail est 4512 »");
    let words = o.say("mes souvenirs sur le portail").await;
    assert!(words.contains("n°2") && !words.contains("n°1 "), "{words}");
    let last = o.say("mes derniers souvenirs").await;
    assert!(last.starts_with("Souvenirs, les derniers : 5 sur 3 (3) :"), "{last}");
    let unknown = o.say("le souvenir 9").await;
    assert!(unknown.contains("aucun souvenir n°9") && unknown.contains("Rien n'a été écrit"), "{unknown}");

    o.say("préférence : réponds en phrases courtes").await;
    o.say("préférence : tutoie-moi").await;
    let pref = o.say("la préférence 2").await;
    assert!(pref.starts_with("Préférences n°2 (1) :\n- n°2 « tutoie-moi »"), "{pref}");
    let by_words = o.say("mes préférences sur les phrases").await;
    assert!(by_words.contains("n°1 « réponds en phrases courtes »") && !by_words.contains("n°2"), "{by_words}");
}

#[tokio::test]
async fn notes_and_reminders_are_read_by_number_and_the_last_ones() {
    let o = Offline::new().await;
    for t in ["note que le code du portail est 4512", "note : acheter des ampoules", "note : rappeler le plombier"] {
        o.say(t).await;
    }
    assert_eq!(o.say("lis-moi la note 2").await, "Notes n°2 (1) :\n- n°2 « acheter des ampoules »");
    let last = o.say("mes 2 dernières notes").await;
    assert!(
        last.starts_with("Notes, les dernières : 2 sur 3 (2) :") && last.contains("n°3") && !last.contains("n°1 "),
        "{last}"
    );
    assert!(o.say("lis-moi la note 9").await.contains("aucune note n°9"));
    o.say("rappelle-moi demain à 9 h d'appeler la banque").await;
    o.say("rappelle-moi jeudi à 10 h de poster la lettre").await;
    let one = o.say("lis-moi le rappel 1").await;
    assert!(one.starts_with("Rappels à faire n°1 (1) :") || one.starts_with("Rappels n°1 (1) :"), "{one}");
    assert!(one.contains("« appeler la banque »"), "{one}");
    let last = o.say("mon dernier rappel").await;
    assert!(last.contains("« poster la lettre »") && !last.contains("banque"), "{last}");
}

#[tokio::test]
async fn a_deadline_passed_with_no_bell_running_is_never_told_in_the_future() {
    let o = Offline::new().await;
    o.say("minuteur de 1 minute").await;
    o.app.clock.advance(Duration::minutes(3));
    let status = o.say("combien de temps reste-t-il ?").await;
    assert_eq!(status, "Minuteur n°1 (1 min) : temps écoulé à 10 h 01.");
    assert!(!status.contains("sonnera"));
    let r = o.engine.run(None, "combien de temps reste-t-il", None).await.unwrap();
    assert!(!r.spoken.contains("sonnera") && r.spoken.contains("dix heures une"), "{}", r.spoken);
}
