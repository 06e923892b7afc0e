//! The launcher's pseudo-terminal path, end to end: a fake `claude` (atlas/tests/fake_claude)
//! replays stream-json through a real PTY, and each exit class, the watchdog's kills, the
//! terminal noise and the cleanup of the whole session are checked on what really happened.

use std::path::Path;
use std::time::{Duration, Instant};

use arthur_atlas::pty::{self, claude_args, ClaudeArgs, ExitClass, LaunchSpec, PtyError, RunOutcome};
use serde_json::Value;

use crate::support::fake_claude;

/// A command line claude accepts (built by the real `claude_args`).
fn atlas_args(dir: &Path) -> Vec<String> {
    claude_args(&ClaudeArgs {
        prompt: "Corrige le bouton du panier.".into(),
        add_dir: dir.to_path_buf(),
        permission_mode: "bypassPermissions".into(),
        max_turns: 40,
        system_prompt: "Tu es Atlas.".into(),
        resume: None,
        persist_session: false,
        strict_mcp: true,
        allowed_tools: None,
        model: None,
    })
}

/// A spec with short timeouts, running `scenario` in a fresh directory.
fn spec(dir: &Path, scenario: &str) -> LaunchSpec {
    let mut spec = LaunchSpec::new(fake_claude(), atlas_args(dir), dir);
    // The child gets this environment only (LaunchSpec::new's allowlist, plus these).
    spec.env.extend([
        ("FAKE_CLAUDE_SCENARIO".into(), scenario.into()),
        ("FAKE_CLAUDE_PID_FILE".into(), dir.join("pids").to_string_lossy().into_owned()),
        ("ATLAS_CONTRACT_FILE".into(), dir.join("contract.json").to_string_lossy().into_owned()),
    ]);
    spec.idle_timeout = Duration::from_secs(20);
    spec.hard_timeout = Duration::from_secs(60);
    spec.budget = Duration::from_secs(60);
    spec.grace_after_result = Duration::from_secs(1);
    spec
}

/// Runs on its own task, as the launcher does, each event sent on as it comes (the future must
/// be `Send + 'static`).
async fn launch(spec: LaunchSpec) -> (RunOutcome, Vec<Value>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let run = tokio::spawn(pty::run(spec, move |e| {
        let _ = tx.send(e);
    }));
    let outcome = run.await.expect("the run task").expect("the fake starts");
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (outcome, events)
}

fn types(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| e["type"].as_str().unwrap_or("?").to_string()).collect()
}

/// The pids the fake (and its sleepers) wrote.
fn pids(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("pids")).unwrap_or_default().lines().filter_map(|l| l.parse().ok()).collect()
}

/// Running: present in /proc and not a zombie waiting for its parent.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        }
        Err(_) => false,
    }
}

async fn assert_all_gone(pids: &[u32]) {
    // SIGKILL is delivered at once, but a dying process lingers for a few milliseconds.
    for _ in 0..50 {
        if !pids.iter().any(|p| alive(*p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left: Vec<_> = pids.iter().filter(|p| alive(**p)).collect();
    panic!("processes left behind: {left:?}");
}

#[tokio::test]
async fn success_delivers_every_event_in_order_and_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let (out, events) = launch(spec(dir.path(), "success")).await;
    assert_eq!(out.class, ExitClass::Ok);
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.killed, None);
    assert_eq!(
        types(&events),
        ["system", "stream_event", "stream_event", "stream_event", "assistant", "user", "assistant", "result"]
    );
    assert_eq!(events[0]["subtype"], "init");
    assert_eq!(events[0]["cwd"], dir.path().to_string_lossy().as_ref());
    assert_eq!(events[4]["message"]["content"][1]["name"], "Bash");
    assert_eq!(events[5]["message"]["content"][0]["tool_use_id"], "toolu_01");
    assert_eq!((out.events, out.skipped_lines), (8, 0));
    let result = out.result.expect("result captured");
    assert_eq!(result, events[7]);
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "Le panier est corrigé.");
    // The environment reached the child: the contract was written where Atlas said.
    let contract: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("contract.json")).unwrap()).unwrap();
    assert_eq!(contract["ok"], true);
    assert!(out.duration < Duration::from_secs(10), "{:?}", out.duration);
    assert_all_gone(&pids(dir.path())).await;
}

#[tokio::test]
async fn a_result_with_is_error_is_an_error_even_when_the_exit_code_is_zero() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = launch(spec(dir.path(), "is_error_exit0")).await;
    assert_eq!((out.class, out.exit_code, out.killed), (ExitClass::Error, Some(0), None));
    assert_eq!(out.class.code(), 1);
    assert!(!out.class.retryable());
    assert_eq!(out.result.unwrap()["subtype"], "error_during_execution");
}

#[tokio::test]
async fn a_successful_result_wins_over_exit_code_one() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = launch(spec(dir.path(), "success_exit1")).await;
    assert_eq!((out.class, out.exit_code), (ExitClass::Ok, Some(1)));
    // And over exit code 2: with a result, it was not a refused command line.
    let (out, _) = launch(spec(dir.path(), "exit2_with_result")).await;
    assert_eq!((out.class, out.exit_code), (ExitClass::Ok, Some(2)));
}

#[tokio::test]
async fn a_crash_without_result_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (out, events) = launch(spec(dir.path(), "crash")).await;
    assert_eq!((out.class, out.exit_code, out.killed), (ExitClass::Error, Some(1), None));
    assert!(out.result.is_none());
    assert_eq!(types(&events), ["system"]);
    // The stack trace on stderr shares the terminal: it is counted, not delivered.
    assert_eq!(out.skipped_lines, 1);
}

#[tokio::test]
async fn silence_is_killed_by_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), "silence");
    spec.idle_timeout = Duration::from_secs(2);
    let started = Instant::now();
    let (out, events) = launch(spec).await;
    assert_eq!((out.class, out.killed, out.exit_code), (ExitClass::Idle, Some("idle"), None));
    assert_eq!((out.class.code(), out.class.retryable()), (125, true));
    assert_eq!(types(&events), ["system"]);
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(1900) && took < Duration::from_secs(8), "{took:?}");
    assert_all_gone(&pids(dir.path())).await;
}

#[tokio::test]
async fn a_runaway_is_killed_by_the_hard_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), "runaway");
    spec.idle_timeout = Duration::from_secs(2);
    spec.hard_timeout = Duration::from_secs(3);
    let started = Instant::now();
    let (out, events) = launch(spec).await;
    // It never fell silent: the hard ceiling stopped it, not the idle watchdog.
    assert_eq!((out.class, out.killed, out.exit_code), (ExitClass::HardTimeout, Some("hard_timeout"), None));
    assert_eq!((out.class.code(), out.class.retryable()), (124, true));
    assert!(events.len() > 10, "{} events", events.len());
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(2900) && took < Duration::from_secs(8), "{took:?}");
    assert_all_gone(&pids(dir.path())).await;
}

#[tokio::test]
async fn atlas_budget_shorter_than_the_hard_timeout_kills_as_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), "runaway");
    spec.budget = Duration::from_secs(1);
    let (out, _) = launch(spec).await;
    assert_eq!((out.class, out.killed), (ExitClass::HardTimeout, Some("budget")));
    assert_eq!(out.class.code(), 124);
    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
}

#[tokio::test]
async fn a_process_hanging_after_its_result_is_killed_with_its_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let (out, events) = launch(spec(dir.path(), "hang_after_result")).await;
    // The result decides the class; the kill is only housekeeping.
    assert_eq!((out.class, out.killed, out.exit_code), (ExitClass::Ok, Some("after_result"), None));
    assert_eq!(events.last().unwrap()["type"], "result");
    assert!(out.duration < Duration::from_secs(6), "{:?}", out.duration);
    // The fake ignores SIGHUP/SIGTERM and started a sleeper in its group: both are gone.
    let pids = pids(dir.path());
    assert_eq!(pids.len(), 2, "fake and sleeper: {pids:?}");
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn processes_left_behind_holding_the_terminal_are_swept() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = launch(spec(dir.path(), "leave_sleeper")).await;
    assert_eq!((out.class, out.exit_code, out.killed), (ExitClass::Ok, Some(0), None));
    // The terminal stayed open after the exit: the run waited `grace_after_result` (1 s), then
    // killed what was left in the session.
    assert!(out.duration >= Duration::from_millis(900) && out.duration < Duration::from_secs(6), "{:?}", out.duration);
    let pids = pids(dir.path());
    assert_eq!(pids.len(), 2, "fake and sleeper: {pids:?}");
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn ansi_noise_carriage_returns_and_a_two_megabyte_line_are_parsed_intact() {
    let dir = tempfile::tempdir().unwrap();
    let (out, events) = launch(spec(dir.path(), "ansi_noise")).await;
    assert_eq!(out.class, ExitClass::Ok);
    assert_eq!(types(&events), ["system", "stream_event", "assistant", "result"]);
    assert_eq!(events[1]["event"]["delta"]["text"], "café ☕");
    let big = events[2]["message"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(big.len(), 2 * 1024 * 1024);
    assert!(big.bytes().all(|b| b == b'x'));
    // The spinner and the broken line; blank lines are not counted.
    assert_eq!(out.skipped_lines, 2);
    // The result came on a last line without a newline.
    assert_eq!(out.result.unwrap()["result"], "bruit traversé");
}

#[tokio::test]
async fn a_program_reading_its_input_sees_end_of_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), "read_stdin");
    spec.idle_timeout = Duration::from_secs(3);
    let (out, events) = launch(spec).await;
    assert_eq!((out.class, out.killed), (ExitClass::Ok, None));
    assert_eq!(events[1]["subtype"], "stdin");
    assert_eq!(events[1]["bytes"], 0);
}

#[tokio::test]
async fn secrets_in_tool_results_reach_the_callback_unchanged() {
    // Redaction happens downstream (atlas::redact); the launcher delivers what claude said.
    let dir = tempfile::tempdir().unwrap();
    let (out, events) = launch(spec(dir.path(), "secrets")).await;
    assert_eq!(out.class, ExitClass::Ok);
    let text = serde_json::to_string(&events).unwrap();
    for secret in ["s3cr3tpass", "-----BEGIN OPENSSH PRIVATE KEY-----", "sk-ant-api03-", "ghp_"] {
        assert!(text.contains(secret), "{secret} missing");
    }
}

#[tokio::test]
async fn refused_arguments_are_bad_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let mut no_verbose = spec(dir.path(), "success");
    no_verbose.args.retain(|a| a != "--verbose");
    let mut unknown_flag = spec(dir.path(), "success");
    unknown_flag.args.push("--frobnicate".into());
    for spec in [no_verbose, unknown_flag] {
        let (out, events) = launch(spec).await;
        // Exit 1, as Claude Code 2.1.332 does: the class comes from what it said.
        assert_eq!((out.class, out.exit_code, out.killed), (ExitClass::BadArguments, Some(1), None));
        assert_eq!(out.class.code(), 2);
        assert!(events.is_empty());
        assert_eq!(out.skipped_lines, 1, "the error line on stderr");
    }
}

#[tokio::test]
async fn a_missing_binary_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(dir.path(), "success");
    spec.program = dir.path().join("no-such-claude");
    let err = pty::run(spec.clone(), |_| {}).await.unwrap_err();
    assert!(matches!(err, PtyError::ProgramNotFound { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("no-such-claude") && message.contains("ATLAS_CLAUDE_BIN"), "{message}");

    spec.program = "atlas-claude-that-is-not-installed".into();
    let message = pty::run(spec.clone(), |_| {}).await.unwrap_err().to_string();
    assert!(message.contains("atlas-claude-that-is-not-installed"), "{message}");

    spec.program = fake_claude();
    spec.cwd = dir.path().join("gone");
    let err = pty::run(spec, |_| {}).await.unwrap_err();
    assert!(matches!(err, PtyError::MissingWorkingDir(_)), "{err:?}");
}

#[tokio::test]
async fn commits_and_the_contract_land_in_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    let (out, _) = launch(spec(dir.path(), "commits")).await;
    assert_eq!(out.class, ExitClass::Ok);
    let log = git(&["log", "--format=%H %s"]);
    let contract: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("contract.json")).unwrap()).unwrap();
    let commits: Vec<&str> = contract["commits"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(commits.len(), 2);
    assert!(log.contains(&format!("{} fix: bouton du panier", commits[0])), "{log}");
    assert!(log.contains(&format!("{} test: panier", commits[1])), "{log}");
}

#[tokio::test]
async fn a_partial_contract_survives_the_idle_kill() {
    let dir = tempfile::tempdir().unwrap();
    assert!(std::process::Command::new("git").args(["init", "-q"]).current_dir(dir.path()).status().unwrap().success());
    let mut spec = spec(dir.path(), "partial_contract_then_silence");
    spec.idle_timeout = Duration::from_secs(2);
    let (out, _) = launch(spec).await;
    assert_eq!(out.class, ExitClass::Idle);
    let contract: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("contract.json")).unwrap()).unwrap();
    assert_eq!((contract["partial"].as_bool(), contract["commits"].as_array().map(Vec::len)), (Some(true), Some(1)));
}

#[tokio::test]
async fn a_scripted_scenario_file_replaces_the_built_ins() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("scenario.jsonl");
    std::fs::write(
        &script,
        [
            r#"{"type":"system","subtype":"init","session_id":"s-1"}"#,
            r#"{"raw":"plain text"}"#,
            r#"{"sleep":0.1}"#,
            r#"{"contract":{"ok":true,"summary_md":"scripted"}}"#,
            r#"{"result":{"is_error":true,"result":"scripted failure"}}"#,
            r#"{"exit":0}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let mut spec = spec(dir.path(), "success");
    spec.env.push(("FAKE_CLAUDE_SCRIPT".into(), script.to_string_lossy().into_owned()));
    let (out, events) = launch(spec).await;
    assert_eq!((out.class, out.skipped_lines), (ExitClass::Error, 1));
    assert_eq!(types(&events), ["system", "result"]);
    assert!(uuid_like(events[1]["session_id"].as_str().unwrap()), "a new session gets a UUID: {:?}", events[1]);
    assert_eq!(out.result.unwrap()["result"], "scripted failure");
    assert!(std::fs::read_to_string(dir.path().join("contract.json")).unwrap().contains("scripted"));
}

#[test]
fn claude_args_put_add_dir_right_after_the_prompt() {
    let mut a = ClaudeArgs {
        prompt: "Corrige le panier".into(),
        add_dir: "/srv/worktrees/run-42".into(),
        permission_mode: "bypassPermissions".into(),
        max_turns: 40,
        system_prompt: "Tu es Atlas.".into(),
        resume: None,
        persist_session: false,
        strict_mcp: true,
        allowed_tools: Some("Bash,Edit,Read".into()),
        model: Some("claude-sonnet-4-5".into()),
    };
    let args = claude_args(&a);
    assert_eq!(
        args,
        [
            "-p",
            "Corrige le panier",
            "--add-dir",
            "/srv/worktrees/run-42",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "bypassPermissions",
            "--max-turns",
            "40",
            "--append-system-prompt",
            "Tu es Atlas.",
            "--no-session-persistence",
            "--exclude-dynamic-system-prompt-sections",
            "--strict-mcp-config",
            "--include-partial-messages",
            "--include-hook-events",
            "--allowed-tools",
            "Bash,Edit,Read",
            "--model",
            "claude-sonnet-4-5",
        ]
    );

    a.max_turns = 0;
    a.resume = Some("sess-7".into());
    a.strict_mcp = false;
    a.allowed_tools = None;
    a.model = None;
    let args = claude_args(&a);
    assert!(!args.iter().any(|x| x == "--max-turns"), "{args:?}");
    assert!(!args.iter().any(|x| x == "--no-session-persistence" || x == "--strict-mcp-config"), "{args:?}");
    let resume = args.iter().position(|x| x == "--resume").expect("--resume");
    assert_eq!(args[resume + 1], "sess-7");
    assert_eq!(&args[..4], ["-p", "Corrige le panier", "--add-dir", "/srv/worktrees/run-42"]);
}

/// A command line for a pass in `dir`: saved or not, resuming `resume` or not.
fn session_args(dir: &Path, persist: bool, resume: Option<&str>) -> Vec<String> {
    claude_args(&ClaudeArgs {
        prompt: "- reprends".into(),
        add_dir: dir.to_path_buf(),
        permission_mode: "acceptEdits".into(),
        max_turns: 0,
        system_prompt: "Tu es Atlas.".into(),
        resume: resume.map(str::to_string),
        persist_session: persist,
        strict_mcp: false,
        allowed_tools: Some("Bash".into()),
        model: Some("claude-opus-4-1".into()),
    })
}

/// The fake keeps sessions the way Claude Code documents it (see its header): saved unless
/// `--no-session-persistence`, resumable from the same project (any of its git worktrees),
/// otherwise "No conversation found", one `result` (error_during_execution, no turn, no init)
/// and exit 1, as Claude Code 2.1.332 does.
#[tokio::test]
async fn the_fake_resumes_saved_sessions_only_as_claude_code_does() {
    let repo = crate::support::git::git_repo();
    let config = tempfile::tempdir().unwrap();
    let in_dir = |dir: &Path, args: Vec<String>| {
        let mut spec = spec(dir, "success");
        spec.args = args;
        spec.env.push(("CLAUDE_CONFIG_DIR".into(), config.path().to_string_lossy().into_owned()));
        spec
    };
    // A saved session, then resumed: same id, a result.
    let (out, events) = launch(in_dir(repo.path(), session_args(repo.path(), true, None))).await;
    assert_eq!(out.class, ExitClass::Ok);
    let saved = out.session_id.clone().expect("a session id");
    assert!(uuid_like(&saved), "{saved}");
    assert_eq!(events[0]["session_id"], saved.as_str());
    assert_eq!(events[0]["model"], "claude-opus-4-1");
    let (out, events) = launch(in_dir(repo.path(), session_args(repo.path(), true, Some(&saved)))).await;
    assert_eq!((out.class, out.session_id.as_deref()), (ExitClass::Ok, Some(saved.as_str())), "{events:?}");
    // From another worktree of the same repository: the same project, resumable.
    let other = tempfile::tempdir().unwrap();
    let wt = other.path().join("wt");
    crate::support::git::git(repo.path(), &["worktree", "add", "-q", "-b", "atlas/other", wt.to_str().unwrap()]);
    let (out, _) = launch(in_dir(&wt, session_args(&wt, true, Some(&saved)))).await;
    assert_eq!(out.class, ExitClass::Ok, "a worktree of the project sees its sessions");

    // Not saved (--no-session-persistence): cannot be resumed.
    let (out, _) = launch(in_dir(repo.path(), session_args(repo.path(), false, None))).await;
    let unsaved = out.session_id.clone().expect("a session id even unsaved");
    let refused = |out: &RunOutcome, events: &[Value]| {
        assert_eq!((out.class, out.exit_code, out.events, out.init_seen), (ExitClass::Error, Some(1), 1, false));
        assert!(out.resume_refused(), "{:?}", out.result);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["subtype"], "error_during_execution");
        assert!(out.noise.iter().any(|l| l.contains("No conversation found with session ID")), "{:?}", out.noise);
    };
    let (out, events) = launch(in_dir(repo.path(), session_args(repo.path(), true, Some(&unsaved)))).await;
    refused(&out, &events);
    // Unknown, or from another project: refused alike.
    let (out, events) =
        launch(in_dir(repo.path(), session_args(repo.path(), true, Some("7d3c2a1b-0000-4000-8000-000000000000"))))
            .await;
    refused(&out, &events);
    let elsewhere = tempfile::tempdir().unwrap();
    let (out, events) = launch(in_dir(elsewhere.path(), session_args(elsewhere.path(), true, Some(&saved)))).await;
    refused(&out, &events);
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn dropping_the_run_kills_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let task = tokio::spawn(pty::run(spec(dir.path(), "hang_after_result"), |_| {}));
    // Wait until the fake and its sleeper are up, then cancel the run (a daemon shutting down).
    let started = Instant::now();
    while pids(dir.path()).len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(20), "the fake never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_all_gone(&pids(dir.path())).await;
}
