//! Crash safety: the real `arthur` binary writes in a loop (notes, chrono cycles, project
//! phase changes that touch two tables) and is killed with SIGKILL in the middle. The
//! reopened database holds no half-written row, nothing confirmed is lost, and Arthur
//! carries on.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Row};

fn arthur(data_dir: &std::path::Path) -> Command {
    let mut c = crate::common::arthur_command();
    c.env_clear()
        .env("ARTHUR_DATA_DIR", data_dir)
        .env("HOME", data_dir)
        .env("XDG_CONFIG_HOME", data_dir.join("config"))
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    c
}

/// Runs the write loop and kills it after `lines` confirmed writes; returns the confirmed
/// lines.
fn write_then_kill(data_dir: &std::path::Path, lines: usize) -> Vec<String> {
    let mut child = arthur(data_dir)
        .args(["debug", "write-loop", "--count", "1000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn arthur");
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut confirmed = Vec::new();
    let mut line = String::new();
    while confirmed.len() < lines {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("write loop ended early after {} lines", confirmed.len());
        }
        confirmed.push(line.trim().to_string());
    }
    child.kill().expect("SIGKILL"); // Child::kill is SIGKILL on Unix.
    child.wait().unwrap();
    // The loop ran on between the last line read and the kill (a loaded machine lets it run
    // far ahead): what it printed before dying was confirmed too, and waits in the pipe.
    for rest in reader.lines() {
        let Ok(rest) = rest else { break };
        if !rest.trim().is_empty() {
            confirmed.push(rest.trim().to_string());
        }
    }
    confirmed
}

/// `extra_sessions`: sessions started after the kill, outside the confirmed lines.
async fn check_database(path: &std::path::Path, confirmed: &[String], extra_sessions: i64) {
    let mut conn = SqliteConnectOptions::new().filename(path).connect().await.unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await.unwrap();
    assert_eq!(integrity, "ok");

    let count = |name: &str| confirmed.iter().filter(|l| l.ends_with(&format!(" {name} committed"))).count() as i64;
    // A write confirmed is there; at most the one in flight may also be there.
    let notes: i64 = sqlx::query_scalar("SELECT count(*) FROM notes").fetch_one(&mut conn).await.unwrap();
    assert!(
        notes == count("creer_note") || notes == count("creer_note") + 1,
        "notes {notes} vs {}",
        count("creer_note")
    );
    let sessions: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions_travail").fetch_one(&mut conn).await.unwrap();
    let started = count("demarrer_session") + extra_sessions;
    assert!(sessions == started || sessions == started + 1, "sessions {sessions} vs {started}");

    // No half-written chrono: a stopped session has no open pause; one session runs at most.
    let open_in_stopped: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pauses p JOIN sessions_travail s ON s.id = p.session_id WHERE s.fin IS NOT NULL AND p.fin IS NULL",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(open_in_stopped, 0);
    let running: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions_travail WHERE fin IS NULL")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(running <= 1);

    // No half-written phase change: the project's phase is the last one in its history,
    // and there is one history row per applied change.
    let row = sqlx::query("SELECT p.phase, (SELECT phase FROM phases_projet WHERE projet_id = p.id ORDER BY id DESC LIMIT 1) AS last, (SELECT count(*) FROM phases_projet WHERE projet_id = p.id) AS n FROM projets p WHERE nom = 'Crash'")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let phase: Option<String> = row.get("phase");
    let last: Option<String> = row.get("last");
    let n: i64 = row.get("n");
    assert_eq!(phase, last);
    let changes = count("modifier_projet");
    assert!(n == changes || n == changes + 1, "phase rows {n} vs {changes}");
}

#[tokio::test]
async fn killing_arthur_mid_write_leaves_no_half_written_row() {
    for kill_after in [7, 61, 233] {
        let dir = tempfile::tempdir().unwrap();
        let confirmed = write_then_kill(dir.path(), kill_after);
        check_database(&dir.path().join("arthur.db"), &confirmed, 0).await;

        // Arthur starts again on the same file and the chrono is usable: whatever state
        // the kill left, stopping then starting works.
        let out = arthur(dir.path()).args(["tool", "arreter_session"]).output().unwrap();
        assert!(matches!(out.status.code(), Some(0) | Some(3)), "{out:?}");
        let out = arthur(dir.path()).args(["tool", "demarrer_session", r#"{"projet": "crash"}"#]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
        check_database(&dir.path().join("arthur.db"), &confirmed, 1).await;
    }
}
