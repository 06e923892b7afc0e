//! Property test of the chrono: random sequences of start / pause / resume / stop and of
//! time passing, run against the real tools and a real SQLite file, compared with a small
//! model. Total time is never negative, never counts a pause, sessions never overlap, and
//! each command's outcome is the one the model predicts.

use crate::common;

use std::collections::BTreeMap;

use arthur_agents::memory::MemoryStore;
use arthur_agents::tools::{Outcome, Receipt, Refusal};
use chrono::Duration;
use common::spawn_app;
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Cmd {
    Start(usize),
    Pause,
    Resume,
    Stop,
    Advance(i64),
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        2 => (0usize..3).prop_map(Cmd::Start),
        2 => Just(Cmd::Pause),
        2 => Just(Cmd::Resume),
        2 => Just(Cmd::Stop),
        3 => (1i64..180).prop_map(Cmd::Advance),
    ]
}

const PROJECTS: [&str; 3] = ["Atlas", "Émeraude", "Mentorat"];

#[derive(Debug, Default)]
struct Model {
    /// (project, paused, worked minutes of the running session)
    running: Option<(usize, bool, i64)>,
    worked: BTreeMap<usize, i64>,
}

impl Model {
    /// The outcome kind the chrono must give, and the state after it.
    fn apply(&mut self, c: &Cmd) -> &'static str {
        match (c, &mut self.running) {
            (Cmd::Start(p), None) => {
                self.running = Some((*p, false, 0));
                "done"
            }
            (Cmd::Start(_), Some(_)) => "already_running",
            (Cmd::Pause, None) | (Cmd::Resume, None) | (Cmd::Stop, None) => "no_session",
            (Cmd::Pause, Some((_, paused, _))) if *paused => "already_paused",
            (Cmd::Pause, Some((_, paused, _))) => {
                *paused = true;
                "done"
            }
            (Cmd::Resume, Some((_, paused, _))) if !*paused => "not_paused",
            (Cmd::Resume, Some((_, paused, _))) => {
                *paused = false;
                "done"
            }
            (Cmd::Stop, Some(_)) => {
                self.running = None;
                "done"
            }
            (Cmd::Advance(m), Some((p, false, w))) => {
                *w += m;
                *self.worked.entry(*p).or_default() += m;
                "advance"
            }
            (Cmd::Advance(_), _) => "advance",
        }
    }
}

fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Done(_) => "done",
        Outcome::Refused(Refusal::SessionAlreadyRunning { .. }) => "already_running",
        Outcome::Refused(Refusal::NoRunningSession) => "no_session",
        Outcome::Refused(Refusal::SessionAlreadyPaused { .. }) => "already_paused",
        Outcome::Refused(Refusal::SessionNotPaused { .. }) => "not_paused",
        other => panic!("unexpected outcome {other:?}"),
    }
}

async fn check(cmds: Vec<Cmd>) -> Result<(), TestCaseError> {
    let app = spawn_app().await;
    for p in PROJECTS {
        app.done("creer_projet", json!({"nom": p})).await;
    }
    let mut model = Model::default();
    for c in &cmds {
        let running_before = model.running;
        let expected = model.apply(c);
        let outcome = match c {
            Cmd::Advance(m) => {
                app.clock.advance(Duration::minutes(*m));
                continue;
            }
            Cmd::Start(p) => app.call("demarrer_session", json!({"projet": PROJECTS[*p]})).await,
            Cmd::Pause => app.call("suspendre_session", json!({})).await,
            Cmd::Resume => app.call("reprendre_session", json!({})).await,
            Cmd::Stop => app.call("arreter_session", json!({})).await,
        };
        prop_assert_eq!(kind(&outcome), expected, "command {:?}", c);
        if let Outcome::Done(Receipt::SessionStopped { worked_secs, .. }) = &outcome {
            let (_, _, minutes) = running_before.unwrap();
            prop_assert_eq!(*worked_secs, minutes * 60, "stop receipt");
        }
    }

    // Totals read through the tool agree with the model, per project and overall.
    let today = app.clock_today();
    let total_model: i64 = model.worked.values().sum();
    match app.call("lire_temps_travail", json!({"debut": "2026-11-30", "fin": today})).await {
        Outcome::Done(Receipt::WorkTime { totals, .. }) => {
            prop_assert!(totals.total_secs >= 0);
            prop_assert_eq!(totals.total_secs, total_model * 60);
            for (p, minutes) in &model.worked {
                let got = totals.par_projet.iter().find(|(n, _)| n == PROJECTS[*p]).map(|(_, s)| *s).unwrap_or(0);
                prop_assert_eq!(got, minutes * 60, "project {}", PROJECTS[*p]);
            }
        }
        other => return Err(TestCaseError::fail(format!("lire_temps_travail: {other:?}"))),
    }

    // Stored sessions never overlap, pauses stay inside their session, one runs at most.
    let sessions = app.fresh().await.list_sessions().await.unwrap();
    prop_assert!(sessions.iter().filter(|s| s.fin.is_none()).count() <= 1);
    for pair in sessions.windows(2) {
        let end = pair[0].fin.expect("only the last session may run");
        prop_assert!(end <= pair[1].debut, "overlap: {:?}", pair);
    }
    for s in &sessions {
        let mut open = 0;
        for p in &s.pauses {
            prop_assert!(p.debut >= s.debut);
            match (p.fin, s.fin) {
                (Some(pf), Some(sf)) => prop_assert!(pf <= sf && pf >= p.debut),
                (None, None) => open += 1,
                (None, Some(_)) => return Err(TestCaseError::fail("open pause in a stopped session")),
                (Some(pf), None) => prop_assert!(pf >= p.debut),
            }
        }
        prop_assert!(open <= 1);
    }
    Ok(())
}

trait Today {
    fn clock_today(&self) -> String;
}

impl Today for common::TestApp {
    fn clock_today(&self) -> String {
        use arthur_agents::time::Clock;
        arthur_agents::time::local_today(self.clock.now(), self.ctx.tz).to_string()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn the_chrono_matches_its_model(cmds in proptest::collection::vec(cmd(), 1..40)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(check(cmds))?;
    }
}
