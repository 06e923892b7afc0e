//! `arthur bench store`: the cost of every tool call on a real SQLite file, outside model
//! time, and of a 3-tool turn (target: ≤ 20 ms on a 2-core machine); with `--postgres URL`,
//! the same calls on an empty PostgreSQL database, side by side in the same run.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use arthur_agents::memory::{MemoryStore, PgStore, SqliteStore};
use arthur_agents::time::{Clock, ManualClock};
use arthur_agents::tools::{Outcome, ToolBox, ToolContext};
use chrono::{Duration, TimeZone, Utc};
use serde_json::{json, Value};

use crate::app::App;

fn median_and_p95(mut samples: Vec<u128>) -> (u128, u128) {
    samples.sort_unstable();
    let median = samples[samples.len() / 2];
    let p95 = samples[(samples.len() * 95 / 100).min(samples.len() - 1)];
    (median, p95)
}

struct Bench {
    tools: ToolBox,
    ctx: ToolContext,
    clock: Arc<ManualClock>,
}

impl Bench {
    async fn call(&self, name: &str, args: Value) -> anyhow::Result<u128> {
        let start = Instant::now();
        let outcome = self.tools.invoke(&self.ctx, name, &args).await;
        let elapsed = start.elapsed().as_micros();
        match outcome {
            Outcome::Done(_) | Outcome::Briefing(_) => Ok(elapsed),
            other => bail!("bench call {name} {args} did not succeed: {other:?}"),
        }
    }
}

/// Median and p95 per tool, then the 3-tool turn's samples.
type Measured = (Vec<(&'static str, Vec<u128>)>, Vec<u128>);

pub async fn store(iterations: usize, postgres: Option<&str>) -> anyhow::Result<()> {
    let iterations = iterations.max(10);
    let dir = tempfile::tempdir().context("creating a temporary directory")?;
    let sqlite = Arc::new(SqliteStore::open_path(&dir.path().join("bench.db")).await?);
    eprintln!("SQLite…");
    let (rows, turns) = measure(sqlite.clone(), iterations).await?;
    sqlite.close().await;
    let pg = match postgres {
        None => None,
        Some(url) => {
            let store = Arc::new(PgStore::open(url).await.context("opening the PostgreSQL database")?);
            if !store.list_projets().await?.is_empty() {
                bail!("the PostgreSQL database must be empty (the benchmark fills it)");
            }
            eprintln!("PostgreSQL…");
            let measured = measure(store.clone(), iterations).await?;
            store.close().await;
            Some(measured)
        }
    };

    println!("arthur bench store — {iterations} calls per tool, memory pre-filled; median / p95 in µs");
    println!("SQLite: WAL, synchronous=NORMAL{}", if pg.is_some() { "; PostgreSQL: the URL given" } else { "" });
    match &pg {
        None => println!("{:<24} {:>12} {:>12}", "tool", "median µs", "p95 µs"),
        Some(_) => {
            println!("{:<24} {:>12} {:>12} {:>12} {:>12}", "tool", "sqlite med", "sqlite p95", "pg med", "pg p95")
        }
    }
    let mut sorted: Vec<usize> = (0..rows.len()).collect();
    sorted.sort_by(|&a, &b| rows[a].0.cmp(rows[b].0));
    let line = |name: &str, a: &[u128], b: Option<&[u128]>| {
        let (m, p) = median_and_p95(a.to_vec());
        match b {
            None => println!("{name:<24} {m:>12} {p:>12}"),
            Some(b) => {
                let (bm, bp) = median_and_p95(b.to_vec());
                println!("{name:<24} {m:>12} {p:>12} {bm:>12} {bp:>12}");
            }
        }
    };
    for i in sorted {
        line(rows[i].0, &rows[i].1, pg.as_ref().map(|(r, _)| r[i].1.as_slice()));
    }
    line("turn: 3 tools", &turns, pg.as_ref().map(|(_, t)| t.as_slice()));
    for (backend, samples) in [("SQLite", Some(&turns)), ("PostgreSQL", pg.as_ref().map(|(_, t)| t))] {
        let Some(samples) = samples else { continue };
        let (m, _) = median_and_p95(samples.clone());
        println!(
            "{backend}: 3-tool turn median {:.2} ms (target ≤ 20 ms): {}",
            m as f64 / 1000.0,
            if m <= 20_000 { "OK" } else { "OVER TARGET" }
        );
    }
    Ok(())
}

/// Every tool call `iterations` times against `store`, after filling it.
async fn measure(store: Arc<dyn MemoryStore>, iterations: usize) -> anyhow::Result<Measured> {
    let clock = Arc::new(ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).single().context("start time")?));
    let ctx = ToolContext {
        store,
        clock: clock.clone() as Arc<dyn Clock>,
        tz: chrono_tz::Europe::Paris,
        embedder: None,
        preferences_cap: u32::MAX,
    };
    let b = Bench { tools: ToolBox::new(), ctx, clock };

    // A lived-in memory: the costs below are measured against it.
    eprintln!("seeding…");
    for p in 0..8 {
        b.call("creer_projet", json!({"nom": format!("Projet {p}"), "phase": "cadrage"})).await?;
    }
    for i in 0..300 {
        b.call(
            "creer_note",
            json!({"texte": format!("note de fond {i} sur le projet"), "projet": format!("Projet {}", i % 8)}),
        )
        .await?;
        b.call("creer_rappel", json!({"texte": format!("rappel de fond {i}"), "echeance": "2027-01-15T10:00"})).await?;
        b.call("memoriser_souvenir", json!({"texte": format!("souvenir {i} : le dentiste s'appelle Martin, rue {i}")}))
            .await?;
        b.call("acter_decision", json!({"projet": format!("Projet {}", i % 8), "texte": format!("décision {i}")}))
            .await?;
    }
    for i in 0..100 {
        b.call("demarrer_session", json!({"projet": format!("Projet {}", i % 8)})).await?;
        b.clock.advance(Duration::minutes(50));
        b.call("arreter_session", json!({})).await?;
        b.clock.advance(Duration::minutes(10));
    }
    for i in 0..iterations {
        b.call("creer_rappel", json!({"texte": format!("à marquer {i}"), "echeance": "2027-02-01T09:00"})).await?;
        b.call("memoriser_preference", json!({"texte": format!("préférence à désactiver {i}")})).await?;
    }
    let first_mark_id = 300 + 1;
    let first_pref_id = 1;

    let mut rows: Vec<(&'static str, Vec<u128>)> = Vec::new();
    let mut push = |name: &'static str, samples: Vec<u128>| rows.push((name, samples));

    macro_rules! measure {
        ($name:literal, $args:expr) => {{
            let mut samples = Vec::with_capacity(iterations);
            for i in 0..iterations {
                #[allow(clippy::redundant_closure_call)]
                let args = ($args)(i);
                samples.push(b.call($name, args).await?);
            }
            push($name, samples);
        }};
    }

    measure!("creer_note", |i| json!({"texte": format!("note {i}"), "projet": "Projet 1"}));
    measure!("lister_notes", |_| json!({"projet": "Projet 2"}));
    measure!("creer_rappel", |i| json!({"texte": format!("rappel {i}"), "echeance": "2027-06-24T18:00"}));
    measure!("lister_rappels", |_| json!({}));
    measure!("marquer_rappel_fait", |i| json!({"id": first_mark_id + i}));
    measure!("lire_briefing_hebdo", |_| json!({}));
    measure!("lire_temps_travail", |_| json!({"debut": "2026-11-23", "fin": "2026-11-30"}));
    measure!("memoriser_preference", |i| json!({"texte": format!("préférence mesurée {i}")}));
    measure!("lister_preferences", |_| json!({}));
    measure!("desactiver_preference", |i| json!({"id": first_pref_id + i}));
    measure!("chercher_dans_memoire", |_| json!({"requete": "comment s'appelle le dentiste"}));
    measure!("lister_projets", |_| json!({}));
    measure!("lire_projet", |_| json!({"nom": "Projet 3"}));
    measure!("creer_projet", |i| json!({"nom": format!("Mesure {i}"), "description": "banc"}));
    measure!("modifier_projet", |i| json!({"nom": "Projet 4", "phase": format!("phase {i}")}));
    measure!("acter_decision", |i| json!({"projet": "Projet 5", "texte": format!("décision mesurée {i}")}));
    measure!("memoriser_souvenir", |i| json!({"texte": format!("souvenir mesuré {i}")}));

    let (mut start, mut pause, mut resume, mut stop) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..iterations {
        start.push(b.call("demarrer_session", json!({"projet": "Projet 6"})).await?);
        b.clock.advance(Duration::minutes(20));
        pause.push(b.call("suspendre_session", json!({})).await?);
        b.clock.advance(Duration::minutes(5));
        resume.push(b.call("reprendre_session", json!({})).await?);
        b.clock.advance(Duration::minutes(20));
        stop.push(b.call("arreter_session", json!({})).await?);
        b.clock.advance(Duration::minutes(1));
    }
    push("demarrer_session", start);
    push("suspendre_session", pause);
    push("reprendre_session", resume);
    push("arreter_session", stop);

    let mut turns = Vec::with_capacity(iterations);
    for i in 0..iterations {
        let t = Instant::now();
        b.call("creer_rappel", json!({"texte": format!("tour {i}"), "echeance": "2027-06-02T09:00"})).await?;
        b.call("lister_rappels", json!({})).await?;
        b.call("creer_note", json!({"texte": format!("tour {i}")})).await?;
        turns.push(t.elapsed().as_micros());
    }

    Ok((rows, turns))
}

/// Writes forever-ish, one confirmed write per output line, for the crash-safety test.
pub async fn write_loop(app: &App, count: usize) -> anyhow::Result<()> {
    use std::io::Write;
    let tools = &app.tools;
    let ctx = &app.ctx;
    let projet = json!({"nom": "Crash", "description": "test de robustesse"});
    tools.invoke(ctx, "creer_projet", &projet).await;
    let stdout = std::io::stdout();
    for i in 0..count {
        for (name, args) in [
            ("creer_note", json!({"texte": format!("note {i}"), "projet": "Crash"})),
            ("demarrer_session", json!({"projet": "Crash"})),
            ("suspendre_session", json!({})),
            ("arreter_session", json!({})),
            ("modifier_projet", json!({"nom": "Crash", "phase": format!("phase {i}")})),
        ] {
            let outcome = tools.invoke(ctx, name, &args).await;
            if !matches!(outcome, Outcome::Done(_)) {
                bail!("write loop: {name} gave {outcome:?}");
            }
            let mut out = stdout.lock();
            writeln!(out, "{i} {name} committed")?;
            out.flush()?;
        }
    }
    Ok(())
}
