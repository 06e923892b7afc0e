//! What Arthur stores is what was said, and « annule » undoes or says it did not (issue 38):
//! awkward texts (e-mails, URLs, numbers, repeats, brackets, quotes, emoji) stored exactly as
//! typed and, from a transcript, without their hesitations only; a text too long refused with
//! its limit, never cut; « annule » right after a write takes it back and says what was
//! undone, or says plainly what is still there — through the turn, `arthur ask` (the binary,
//! one process per command) and the web chat.

use crate::common;

use arthur_agents::memory::{BasicsStore, MemoryStore};
use arthur_agents::turn::TurnEngine;
use serde_json::Value;

fn awkward() -> Vec<&'static str> {
    include_str!("corpus/awkward_texts.txt").lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect()
}

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
}

#[tokio::test]
async fn typed_texts_are_stored_character_for_character() {
    let o = Offline::new().await;
    let texts = awkward();
    for text in &texts {
        let r = o.engine.run(None, &format!("note : {text}"), None).await.unwrap();
        let notes = o.app.store.list_notes(None).await.unwrap();
        let last = notes.iter().max_by_key(|n| n.id).unwrap();
        assert_eq!(last.texte, *text, "{}", r.written);
        // The receipt shows what was stored, and nothing else.
        assert!(r.written.contains(&format!("« {text} »")), "{}", r.written);
    }
    assert_eq!(o.app.store.list_notes(None).await.unwrap().len(), texts.len());
}

#[tokio::test]
async fn a_transcript_loses_its_hesitations_only() {
    let o = Offline::new().await;
    for text in awkward() {
        // « euh » said inside the text, and after its first word.
        let mut words: Vec<&str> = text.split(' ').collect();
        words.insert(1, "euh");
        let heard = format!("Arthur, note : {}", words.join(" "));
        o.engine.run_heard(None, &heard, false, None).await.unwrap();
        let notes = o.app.store.list_notes(None).await.unwrap();
        let last = notes.iter().max_by_key(|n| n.id).unwrap();
        assert_eq!(last.texte, text, "heard: {heard}");
    }
}

#[tokio::test]
async fn a_reminder_keeps_its_text_as_said() {
    let o = Offline::new().await;
    for text in awkward() {
        let r = o.engine.run(None, &format!("rappelle-moi demain à 9 h de {text}"), None).await.unwrap();
        if r.written.contains("Tu veux que je") {
            // A time inside the text is asked about first; the text asked is the text said.
            assert!(r.written.contains(&format!("« {text} »")), "{}", r.written);
            let yes = o.engine.run(Some(&r.conversation_id), "oui", None).await.unwrap();
            assert!(
                yes.tools.iter().any(|t| t.name == "creer_rappel" && t.outcome == "done"),
                "{text}: {}",
                yes.written
            );
        }
        let rappels = o.app.store.list_rappels(true).await.unwrap();
        let last = rappels.iter().max_by_key(|r| r.id).unwrap();
        assert_eq!(last.texte, text, "{}", r.written);
    }
}

#[tokio::test]
async fn a_text_too_long_is_refused_with_its_limit_never_cut() {
    let o = Offline::new().await;
    // 12,000 characters of « bla »: the repeats are content.
    let long = "bla ".repeat(3000);
    let r = o.engine.run(None, &format!("note : {}", long.trim()), None).await.unwrap();
    assert!(r.written.contains("2000 caractères"), "{}", r.written);
    assert!(r.written.contains("Rien n'a été écrit"), "{}", r.written);
    assert!(o.app.store.list_notes(None).await.unwrap().is_empty());
    // 2,500 characters of varied words, for a reminder: refused the same way.
    let words = ["appeler", "la", "banque", "pour", "le", "prêt", "et", "les", "papiers", "du", "notaire"];
    let text: String = (0..400).map(|i| words[i % words.len()]).collect::<Vec<_>>().join(" ");
    assert!(text.len() > 2000);
    let r = o.engine.run(None, &format!("rappelle-moi demain à 9 h de {text}"), None).await.unwrap();
    assert!(r.written.contains("2000 caractères"), "{}", r.written);
    assert!(o.app.store.list_rappels(true).await.unwrap().is_empty());
    // Just under the limit: stored whole.
    let fits: String = (0..330).map(|i| words[i % words.len()]).collect::<Vec<_>>().join(" ");
    assert!(fits.chars().count() <= 2000 && fits.split(' ').count() > 80);
    o.engine.run(None, &format!("note : {fits}"), None).await.unwrap();
    assert_eq!(o.app.store.list_notes(None).await.unwrap()[0].texte, fits);
}

#[tokio::test]
async fn annule_takes_back_the_write_just_made_and_says_what() {
    let o = Offline::new().await;
    let say = |text: &'static str| async { o.engine.run(None, text, None).await.unwrap() };
    // A note, a reminder, a list item, a timer, a preference: each undone.
    for (said, gone) in [
        ("note : le code du portail est 4512", "Note n°1"),
        ("rappelle-moi demain à 10 h d'appeler Luc", "Rappel n°1"),
        ("ajoute du pain à la liste de courses", "pain"),
        ("minuteur pâtes de 10 minutes", "pâtes"),
    ] {
        let done = say(said).await;
        assert!(done.tools.iter().all(|t| t.outcome == "done"), "{said}: {}", done.written);
        let undone = say("annule").await;
        assert!(undone.written.starts_with("J'annule ce que je viens de faire :"), "{said}: {}", undone.written);
        assert!(undone.written.contains(gone), "{said}: {}", undone.written);
        assert_eq!(undone.trace.undid, Some(done.turn_id));
    }
    assert!(o.app.store.list_notes(None).await.unwrap().is_empty());
    assert!(o.app.store.list_rappels(true).await.unwrap().is_empty());
    assert!(o.app.store.list("courses").await.unwrap().is_none_or(|l| l.elements.is_empty()));
    assert!(o.app.store.active_timers().await.unwrap().is_empty());
    // Twice: nothing more is undone, and it is said.
    let again = say("oublie ça").await;
    assert_eq!(again.written, "Je viens déjà d'annuler ta dernière action : il n'y a rien d'autre à annuler.");
    assert!(again.tools.is_empty());
}

#[tokio::test]
async fn annule_says_plainly_what_it_cannot_take_back() {
    let o = Offline::new().await;
    o.engine.run(None, "souviens-toi que ma sœur s'appelle Julie", None).await.unwrap();
    let r = o.engine.run(None, "laisse tomber", None).await.unwrap();
    assert!(
        r.written
            .starts_with("Je n'ai rien annulé : le souvenir n°1 « ma sœur s'appelle Julie » est toujours mémorisé."),
        "{}",
        r.written
    );
    assert_eq!(o.app.store.list_souvenirs().await.unwrap().len(), 1, "the souvenir is still there, as said");
    // Nothing written just before.
    o.engine.run(None, "quelle heure est-il ?", None).await.unwrap();
    let r = o.engine.run(None, "annule", None).await.unwrap();
    assert_eq!(r.written, "Rien à annuler : ta dernière demande n'a rien enregistré ni modifié.");
    // Too late.
    o.engine.run(None, "note : acheter du pain", None).await.unwrap();
    o.app.clock.advance(chrono::Duration::minutes(6));
    let r = o.engine.run(None, "annule", None).await.unwrap();
    assert!(
        r.written.starts_with("Je n'ai rien annulé : ta dernière action date de plus de cinq minutes."),
        "{}",
        r.written
    );
    assert_eq!(o.app.store.list_notes(None).await.unwrap().len(), 1);
}

// ---------- the same through the binary and the web ----------

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        let mut c = common::arthur_command();
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("ARTHUR_DATA_DIR", self.dir.path().join("data"))
            .args(args);
        c.output().unwrap()
    }

    fn ask(&self, text: &str) -> Value {
        let out = self.run(&["ask", "--json", text]);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    }

    fn export(&self) -> Value {
        let out = self.run(&["export", "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

#[test]
fn through_arthur_ask_text_is_kept_and_annule_undoes() {
    let cli = Cli::new();
    let said = "la chanson s'appelle New York New York (version live) — paul@exemple.fr";
    let r = cli.ask(&format!("note : {said}"));
    assert!(r["written"].as_str().unwrap().contains(&format!("« {said} »")), "{r}");
    assert_eq!(cli.export()["notes"][0]["texte"], said);
    // « annule » in another process, a new conversation: the write just made is undone.
    let r = cli.ask("annule");
    let written = r["written"].as_str().unwrap();
    assert!(written.starts_with("J'annule ce que je viens de faire :"), "{written}");
    assert!(written.contains("Note n°1"), "{written}");
    assert_eq!(cli.export()["notes"], serde_json::json!([]));
    assert_eq!(r["tools"][0]["name"], "supprimer_note");
    // And said again: nothing more, said so.
    let r = cli.ask("annule");
    assert!(r["written"].as_str().unwrap().starts_with("Je viens déjà d'annuler"), "{r}");
}

#[tokio::test]
async fn through_the_web_chat_text_is_kept_and_annule_undoes() {
    let web = common::spawn_web_app(false, None).await;
    let last = |lines: Vec<Value>| lines.last().cloned().unwrap();
    let said = "rdv chez le dentiste (important) « 3e étage »";
    let final_line = last(web.chat(&format!("note : {said}"), None).await);
    let conversation = final_line["conversation"].as_str().map(str::to_string);
    let notes = web.turn.app.store.list_notes(None).await.unwrap();
    assert_eq!(notes[0].texte, said, "{final_line}");
    let final_line = last(web.chat("annule", conversation.as_deref()).await);
    let written = final_line["written"].as_str().unwrap();
    assert!(written.starts_with("J'annule ce que je viens de faire :"), "{written}");
    assert!(web.turn.app.store.list_notes(None).await.unwrap().is_empty());
}
