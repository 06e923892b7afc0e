//! Claude Code in a real pseudo-terminal, as the spec's harness ran it (spec §4: node-pty, "never
//! a bare pipe"): its stream-json is read line by line as it arrives (each event handed to the
//! caller, who persists it live), and a watchdog kills the whole session on silence, on the hard
//! ceiling or on Atlas' budget. The `result` event, not the exit code, says whether the run
//! succeeded (spec §4; docs/interface.md §6.4).
//!
//! The spec's reason for the terminal — `claude -p` hanging behind a pipe — does not hold for
//! the CLI Atlas is tested against (2.1.332, see docs/interface.md §6.4): with stdin closed it
//! runs as well on a pipe, and an open stdin pipe only costs it a 3 s wait. The terminal is kept
//! because it costs nothing and gives the child its own session, which the watchdog kills whole.
//!
//! What the real CLI prints when it fails, and how this module reads it (observed on 2.1.332):
//! a command-line error exits 1 (not 2) with `error: …` on stderr and no event; as root it
//! refuses bypassPermissions with one stderr line and exit 1 unless `IS_SANDBOX=1`; a refused
//! `--resume` prints one `result` with `subtype: error_during_execution` and `num_turns: 0`
//! (no `init` event); an API failure it gave up on ends with a `result` with `is_error: true`,
//! `terminal_reason: api_error` and `api_error_status` (null for a network error or a
//! timeout); `--max-turns` ends with `subtype: error_max_turns`; tools the permission mode
//! denied are listed in the result's `permission_denials` while the run ends `success`;
//! `total_cost_usd` adds up every pass of a resumed session.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use portable_pty::{native_pty_system, Child, CommandBuilder, ExitStatus, MasterPty, PtySize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// The machine owns the vocabulary of how a run ended; the PTY driver only reports it.
pub use super::machine::ExitClass;

/// No output at all for this long: the agent is stuck (`ATLAS_IDLE_TIMEOUT_S`).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(1200);
/// Absolute ceiling of one run (`ATLAS_HARD_TIMEOUT_S`).
pub const DEFAULT_HARD_TIMEOUT: Duration = Duration::from_secs(6600);
/// Atlas' own budget, the ceiling that matters in practice (`ATLAS_BUDGET_S`).
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(2400);
/// How long a process that already sent its `result` may take to exit.
pub const DEFAULT_GRACE_AFTER_RESULT: Duration = Duration::from_secs(5);
/// Wide enough that nothing in the terminal wraps a JSON line.
pub const DEFAULT_COLS: u16 = 400;
pub const PTY_ROWS: u16 = 50;
/// A line longer than this (no newline yet) is dropped and counted as skipped, so a runaway
/// child cannot exhaust memory. Real events of several MiB pass.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// After we killed the session, how long we wait for the child to be reaped before giving up.
const REAP_AFTER_KILL: Duration = Duration::from_secs(5);
/// Bytes per read from the PTY master.
const READ_CHUNK: usize = 64 * 1024;
/// The terminal type node-pty gave claude in the original harness.
const TERM: &str = "xterm-color";

/// Everything needed to start one Claude Code run.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// The claude executable (`ATLAS_CLAUDE_BIN`): a path, or a name looked up on PATH.
    pub program: PathBuf,
    /// Built by the caller, usually with [`claude_args`].
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The child's WHOLE environment (nothing is inherited; `TERM` is set on top): build it
    /// with [`ChildEnv::for_child`](super::child_env::ChildEnv::for_child), which keeps
    /// Arthur's secrets out.
    pub env: Vec<(String, String)>,
    /// No output for this long → the session is killed, class `Idle`.
    pub idle_timeout: Duration,
    /// Since the start → killed, class `HardTimeout`.
    pub hard_timeout: Duration,
    /// Atlas' own budget, since the start → killed, class `HardTimeout` (killed = "budget").
    pub budget: Duration,
    /// After the `result` event, the process gets this long to exit before its session is
    /// killed; also how long we wait, after it exited, for the terminal to close.
    pub grace_after_result: Duration,
    /// Terminal width (rows are [`PTY_ROWS`]).
    pub cols: u16,
}

impl LaunchSpec {
    /// The defaults of docs/interface.md §2 (1200 s idle, 6600 s hard, 2400 s budget, 5 s grace, 400
    /// columns) and the base allowlisted environment (PATH, HOME, USER, LANG/LC_*, TZ).
    pub fn new(program: impl Into<PathBuf>, args: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        LaunchSpec {
            program: program.into(),
            args,
            cwd: cwd.into(),
            env: super::child_env::ChildEnv::default().for_child(&[]),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            hard_timeout: DEFAULT_HARD_TIMEOUT,
            budget: DEFAULT_BUDGET,
            grace_after_result: DEFAULT_GRACE_AFTER_RESULT,
            cols: DEFAULT_COLS,
        }
    }
}

/// Why we killed the session, when we did.
pub mod kill_reason {
    pub const IDLE: &str = "idle";
    pub const HARD_TIMEOUT: &str = "hard_timeout";
    pub const BUDGET: &str = "budget";
    pub const AFTER_RESULT: &str = "after_result";
}

#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub class: ExitClass,
    /// The process's own exit code, when it exited by itself (not by a signal).
    pub exit_code: Option<i32>,
    /// The `result` event, if one came (the last one, should there be several).
    pub result: Option<Value>,
    /// JSON events handed to `on_event`.
    pub events: u64,
    /// Non-blank lines that were not a JSON object (or longer than [`MAX_LINE_BYTES`]).
    pub skipped_lines: u64,
    pub duration: Duration,
    /// One of [`kill_reason`] when the watchdog killed the session.
    pub killed: Option<&'static str>,
    /// The first `session_id` of the stream (present even when no `result` came).
    pub session_id: Option<String>,
    /// The first non-JSON lines (at most 3, 300 characters each), NOT redacted: for
    /// diagnosis only, never stored as they are.
    pub noise: Vec<String>,
    /// A `system`/`init` event came: the CLI started the session (a refused `--resume` never
    /// gets that far).
    pub init_seen: bool,
}

/// What Claude Code printed when root may not bypass permissions (2.1.332), on its terminal.
pub const ROOT_REFUSAL: &str = "cannot be used with root/sudo privileges";

/// An API failure Claude Code gave up on, from its `result` event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiFailure {
    /// `api_error_status`: None for a network error or a timeout.
    pub status: Option<u16>,
    /// The CLI's own message (`result`), for the logs and the recap.
    pub message: String,
}

impl ApiFailure {
    /// Overloaded (529), rate limited (429), a server error (5xx), a timeout (408) or the
    /// network: worth trying again later. A refused key or a bad request is not.
    pub fn transient(&self) -> bool {
        match self.status {
            None => true,
            Some(s) => s == 408 || s == 409 || s == 429 || s >= 500,
        }
    }
}

/// A tool call the permission mode denied (the result's `permission_denials`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    pub tool: String,
    /// The command, file or other input, on one line and cut to 120 characters.
    pub input: String,
}

impl RunOutcome {
    /// The `result` event's string field.
    fn result_str(&self, key: &str) -> Option<&str> {
        self.result.as_ref().and_then(|r| r.get(key)).and_then(Value::as_str)
    }

    /// The API failure the run ended on, when it ended on one.
    pub fn api_failure(&self) -> Option<ApiFailure> {
        let r = self.result.as_ref()?;
        if !result_is_error(r) {
            return None;
        }
        let status = r.get("api_error_status").and_then(Value::as_u64).and_then(|s| u16::try_from(s).ok());
        let api = self.result_str("terminal_reason") == Some("api_error") || status.is_some();
        api.then(|| ApiFailure { status, message: self.result_str("result").unwrap_or_default().to_string() })
    }

    /// Claude Code refused to start because it runs as root with bypassPermissions.
    pub fn refused_as_root(&self) -> bool {
        self.result.is_none() && self.noise.iter().any(|l| l.contains(ROOT_REFUSAL))
    }

    /// `--resume` was refused (no such session): nothing ran. The real CLI says so in a
    /// `result` (`error_during_execution`, no turn, no `init` before it); an older one printed
    /// no event at all.
    pub fn resume_refused(&self) -> bool {
        match &self.result {
            Some(r) => {
                !self.init_seen
                    && self.result_str("subtype") == Some("error_during_execution")
                    && r.get("num_turns").and_then(Value::as_u64).unwrap_or(0) == 0
            }
            None => self.events == 0 && self.class == ExitClass::Error,
        }
    }

    /// The run hit `--max-turns`.
    pub fn max_turns_reached(&self) -> bool {
        self.result_str("subtype") == Some("error_max_turns")
    }

    /// The tool calls the permission mode denied.
    pub fn permission_denials(&self) -> Vec<Denial> {
        let Some(list) = self.result.as_ref().and_then(|r| r.get("permission_denials")).and_then(Value::as_array)
        else {
            return Vec::new();
        };
        list.iter()
            .map(|d| {
                let input = &d["tool_input"];
                let shown = ["command", "file_path", "path", "url", "pattern"]
                    .iter()
                    .find_map(|k| input.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
                    .unwrap_or_else(|| if input.is_null() { String::new() } else { input.to_string() });
                let one: String = shown.split_whitespace().collect::<Vec<_>>().join(" ");
                Denial {
                    tool: d["tool_name"].as_str().unwrap_or("?").to_string(),
                    input: one.chars().take(120).collect(),
                }
            })
            .collect()
    }

    /// What this pass cost. Claude Code's `total_cost_usd` adds up every pass of a resumed
    /// session, so the pass's own share is read from `model_usage_since_last_result` when the
    /// CLI gives it, else the difference with the session's previous total (`before`).
    pub fn pass_cost_usd(&self, before: Option<f64>) -> Option<f64> {
        let r = self.result.as_ref()?;
        if let Some(models) = r.get("model_usage_since_last_result").and_then(Value::as_object) {
            // `+ 0.0`: an empty float sum is -0.0, which would print as "-0,00 $".
            return Some(models.values().filter_map(|m| m.get("costUSD").and_then(Value::as_f64)).sum::<f64>() + 0.0);
        }
        let total = r.get("total_cost_usd").and_then(Value::as_f64)?;
        Some(match before {
            Some(b) if total >= b => total - b,
            _ => total,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    #[error("the program {} was not found (ATLAS_CLAUDE_BIN names the claude executable)", .program.display())]
    ProgramNotFound { program: PathBuf },
    #[error("the program {} is not an executable file", .program.display())]
    NotExecutable { program: PathBuf },
    /// portable-pty would silently start the child in $HOME instead.
    #[error("the working directory {} does not exist", .0.display())]
    MissingWorkingDir(PathBuf),
    #[error("cannot open a pseudo-terminal: {0}")]
    OpenPty(String),
    #[error("cannot start {}: {detail}", .program.display())]
    Spawn { program: PathBuf, detail: String },
    #[error("the launcher's setup thread failed: {0}")]
    Setup(String),
}

/// The claude command line Atlas uses.
#[derive(Debug, Clone)]
pub struct ClaudeArgs {
    pub prompt: String,
    /// Must come right after the prompt: `--add-dir` takes several values and would otherwise
    /// eat the prompt as a directory.
    pub add_dir: PathBuf,
    pub permission_mode: String,
    /// 0 = unlimited (the flag is left out).
    pub max_turns: u32,
    pub system_prompt: String,
    /// A session to resume.
    pub resume: Option<String>,
    /// Save the session so that a later pass can `--resume` it; otherwise
    /// `--no-session-persistence` (Claude Code then saves nothing: it cannot be resumed).
    pub persist_session: bool,
    /// `--strict-mcp-config`: the user's MCP suite is not loaded.
    pub strict_mcp: bool,
    pub allowed_tools: Option<String>,
    pub model: Option<String>,
}

/// `-p <prompt> --add-dir <dir> --output-format stream-json --verbose --permission-mode <m>
/// [--max-turns N] --append-system-prompt <text> [--no-session-persistence | --resume <id>]
/// --exclude-dynamic-system-prompt-sections [--strict-mcp-config] --include-partial-messages
/// --include-hook-events [--allowed-tools <list>] [--model <m>]`. Free text that starts with `-` gets a leading space,
/// so claude's option parser cannot take it for a flag.
pub fn claude_args(a: &ClaudeArgs) -> Vec<String> {
    let mut args = vec!["-p".to_string(), not_a_flag(&a.prompt)];
    args.extend(["--add-dir".to_string(), a.add_dir.to_string_lossy().into_owned()]);
    args.extend(["--output-format", "stream-json", "--verbose"].map(String::from));
    args.extend(["--permission-mode".to_string(), a.permission_mode.clone()]);
    if a.max_turns > 0 {
        args.extend(["--max-turns".to_string(), a.max_turns.to_string()]);
    }
    args.extend(["--append-system-prompt".to_string(), not_a_flag(&a.system_prompt)]);
    match a.resume.as_deref().filter(|id| !id.is_empty()) {
        Some(id) => args.extend(["--resume".to_string(), id.to_string()]),
        None if a.persist_session => {}
        None => args.push("--no-session-persistence".to_string()),
    }
    args.push("--exclude-dynamic-system-prompt-sections".to_string());
    if a.strict_mcp {
        args.push("--strict-mcp-config".to_string());
    }
    args.push("--include-partial-messages".to_string());
    // Hook lifecycle events in the stream too (spec §4.2), so the journal shows them.
    args.push("--include-hook-events".to_string());
    if let Some(tools) = a.allowed_tools.as_deref().filter(|t| !t.is_empty()) {
        args.extend(["--allowed-tools".to_string(), tools.to_string()]);
    }
    if let Some(model) = a.model.as_deref().filter(|m| !m.is_empty()) {
        args.extend(["--model".to_string(), model.to_string()]);
    }
    args
}

fn not_a_flag(text: &str) -> String {
    if text.starts_with('-') {
        format!(" {text}")
    } else {
        text.to_string()
    }
}

/// Runs the child in a PTY; every JSON event (one per line, after stripping ANSI escapes and
/// `\r`) is passed to `on_event` in order as it arrives. Returns once the child is gone (by
/// itself or killed with its whole session) and its output is read. Dropping the future kills
/// the session too.
pub async fn run(spec: LaunchSpec, mut on_event: impl FnMut(Value) + Send) -> Result<RunOutcome, PtyError> {
    let program = resolve_program(&spec.program, &spec.env)?;
    if !spec.cwd.is_dir() {
        return Err(PtyError::MissingWorkingDir(spec.cwd.clone()));
    }
    let started = Instant::now();
    let setup_spec = spec.clone();
    let Launched { master, child, reader, writer } = tokio::task::spawn_blocking(move || launch(&program, &setup_spec))
        .await
        .map_err(|e| PtyError::Setup(e.to_string()))??;
    let Some(pid) = child.process_id() else {
        return Err(PtyError::Spawn { program: spec.program.clone(), detail: "no process id".into() });
    };
    // From here on, leaving early (an error, a dropped future) kills the whole session.
    let mut session = SessionGuard { leader: pid, leader_reaped: false, armed: true };
    tracing::info!(pid, program = %spec.program.display(), "atlas: claude started in a pty");

    let (chunks_tx, mut chunks) = mpsc::channel::<Vec<u8>>(32);
    spawn_reader(reader, chunks_tx);
    let mut exit_rx = spawn_waiter(child);

    let mut lines = LineSplitter::default();
    let mut tally = Tally::default();
    let mut last_output = started;
    let mut result_at: Option<Instant> = None;
    let mut exit: Option<ExitStatus> = None;
    let mut exited_at: Option<Instant> = None;
    let mut killed: Option<(&'static str, Instant)> = None;
    let mut eof = false;
    let mut leftovers_swept_at: Option<Instant> = None;

    loop {
        if eof && exit.is_some() {
            break;
        }
        let (deadline, expiry) = next_deadline(&Clocks {
            spec: &spec,
            started,
            last_output,
            result_at,
            exited_at,
            killed_at: killed.map(|k| k.1),
            leftovers_swept_at,
        });
        tokio::select! {
            chunk = chunks.recv(), if !eof => match chunk {
                Some(bytes) => {
                    last_output = Instant::now();
                    for line in lines.push(&bytes) {
                        if tally.take(line, &mut on_event) && result_at.is_none() {
                            result_at = Some(Instant::now());
                        }
                    }
                }
                None => {
                    eof = true;
                    if let Some(line) = lines.finish() {
                        if tally.take(line, &mut on_event) && result_at.is_none() {
                            result_at = Some(Instant::now());
                        }
                    }
                }
            },
            status = &mut exit_rx, if exit.is_none() => {
                let status = status.unwrap_or_else(|_| ExitStatus::with_signal("lost"));
                tracing::debug!(pid, %status, "atlas: claude exited");
                session.leader_reaped = true;
                exit = Some(status);
                exited_at = Some(Instant::now());
            },
            _ = tokio::time::sleep_until(deadline) => match expiry {
                Expiry::Kill(reason) => {
                    tracing::warn!(pid, reason, elapsed_s = started.elapsed().as_secs(), "atlas: killing claude's session");
                    session.kill();
                    killed = Some((reason, Instant::now()));
                }
                Expiry::NotReaped => {
                    tracing::error!(pid, "atlas: claude's session was killed but the process was not reaped");
                    break;
                }
                Expiry::TerminalHeldOpen => {
                    // The child exited but something it started still holds the terminal.
                    tracing::warn!(pid, "atlas: processes left behind by claude hold its terminal; killing them");
                    session.kill();
                    leftovers_swept_at = Some(Instant::now());
                }
                Expiry::GiveUpOnTerminal => {
                    tracing::warn!(pid, "atlas: the terminal is still open after the sweep; not reading further");
                    break;
                }
            },
        }
    }
    // Whatever the child left in its session (a background server, a stray shell) goes too.
    session.kill();
    session.armed = false;
    drop(writer);
    drop(master);

    let killed = killed.map(|k| k.0);
    let exit_code = exit.as_ref().filter(|s| s.signal().is_none()).map(|s| s.exit_code() as i32);
    let class = classify(tally.result.as_ref(), exit_code, killed, &tally.noise);
    let outcome = RunOutcome {
        class,
        exit_code,
        result: tally.result,
        events: tally.events,
        skipped_lines: tally.skipped,
        duration: started.elapsed(),
        killed,
        session_id: tally.session_id,
        noise: tally.noise,
        init_seen: tally.init_seen,
    };
    tracing::info!(
        pid,
        class = class.as_str(),
        exit_code,
        killed,
        events = outcome.events,
        skipped = outcome.skipped_lines,
        duration_ms = outcome.duration.as_millis() as u64,
        "atlas: claude run ended"
    );
    Ok(outcome)
}

/// The class of a finished run. A `result` event is authoritative over the exit code. Without
/// one, an argument error on the terminal (`noise`) is `BadArguments` whatever the code: the
/// real CLI exits 1 for it, the spec's wrapper 2.
pub fn classify(result: Option<&Value>, exit_code: Option<i32>, killed: Option<&str>, noise: &[String]) -> ExitClass {
    if let Some(result) = result {
        return if result_is_error(result) { ExitClass::Error } else { ExitClass::Ok };
    }
    match (killed, exit_code) {
        (Some(kill_reason::IDLE), _) => ExitClass::Idle,
        (Some(kill_reason::HARD_TIMEOUT | kill_reason::BUDGET), _) => ExitClass::HardTimeout,
        (None, Some(2)) => ExitClass::BadArguments,
        (None, Some(1)) if noise.iter().any(|l| is_argument_error(l)) => ExitClass::BadArguments,
        _ => ExitClass::Error,
    }
}

/// A command-line error as Claude Code prints it (commander's `error: unknown option …`,
/// `error: option '--max-turns <turns>' argument 'abc' is invalid.`, its own `Error: When using
/// --print, …` and `Error: Input must be provided …`).
fn is_argument_error(line: &str) -> bool {
    let line = line.trim();
    (line.starts_with("error: ") || line.starts_with("Error: "))
        && ["--", "option", "argument", "Input must be provided", "session ID"].iter().any(|w| line.contains(w))
}

/// `is_error` when present, else anything but `subtype: "success"` is an error.
fn result_is_error(result: &Value) -> bool {
    match result.get("is_error").and_then(Value::as_bool) {
        Some(is_error) => is_error,
        None => result.get("subtype").and_then(Value::as_str) != Some("success"),
    }
}

/// The child, its terminal's master end and the two halves of I/O on it.
struct Launched {
    master: Box<dyn MasterPty + Send>,
    child: Box<dyn Child + Send + Sync>,
    reader: Box<dyn Read + Send>,
    /// Kept open until the end: dropping it types a newline then EOF into the terminal.
    writer: Box<dyn Write + Send>,
}

fn launch(program: &Path, spec: &LaunchSpec) -> Result<Launched, PtyError> {
    let size = PtySize { rows: PTY_ROWS, cols: spec.cols.max(1), pixel_width: 0, pixel_height: 0 };
    let pair = native_pty_system().openpty(size).map_err(|e| PtyError::OpenPty(format!("{e:#}")))?;
    let mut cmd = CommandBuilder::new(program);
    cmd.args(&spec.args);
    cmd.cwd(&spec.cwd);
    // Nothing of Arthur's own environment: only what the spec lists.
    cmd.env_clear();
    for (key, value) in &spec.env {
        cmd.env(key, value);
    }
    cmd.env("TERM", TERM);
    let spawned = pair.slave.spawn_command(cmd);
    // Our copy of the slave end goes right away: otherwise the master never sees EOF.
    drop(pair.slave);
    let child = spawned.map_err(|e| PtyError::Spawn { program: spec.program.clone(), detail: format!("{e:#}") })?;
    let mut session = SessionGuard::new(&*child);
    let io = |e: anyhow::Error| PtyError::OpenPty(format!("{e:#}"));
    let reader = pair.master.try_clone_reader().map_err(io)?;
    let mut writer = pair.master.take_writer().map_err(io)?;
    // Nothing is typed into the terminal but an end-of-file (^D on an empty line, not echoed):
    // a program that reads its standard input sees it closed instead of blocking forever.
    writer.write_all(&[0x04]).and_then(|()| writer.flush()).map_err(|e| PtyError::OpenPty(e.to_string()))?;
    session.armed = false;
    Ok(Launched { master: pair.master, child, reader, writer })
}

fn spawn_reader(mut reader: Box<dyn Read + Send>, chunks: mpsc::Sender<Vec<u8>>) {
    let spawned = std::thread::Builder::new().name("atlas-pty-reader".into()).spawn(move || {
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if chunks.blocking_send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // EIO: every slave end is closed, the Linux way of saying end-of-file.
                Err(_) => break,
            }
        }
    });
    if let Err(e) = spawned {
        // The channel closes with the dropped closure: the run sees end-of-file.
        tracing::error!(error = %e, "atlas: cannot start the pty reader thread");
    }
}

fn spawn_waiter(mut child: Box<dyn Child + Send + Sync>) -> oneshot::Receiver<ExitStatus> {
    let (tx, rx) = oneshot::channel();
    let spawned = std::thread::Builder::new().name("atlas-pty-waiter".into()).spawn(move || {
        let status = child.wait().unwrap_or_else(|_| ExitStatus::with_signal("wait failed"));
        let _ = tx.send(status);
    });
    if let Err(e) = spawned {
        // The sender is dropped with the closure: the run records an exit it could not observe.
        tracing::error!(error = %e, "atlas: cannot start the pty waiter thread");
    }
    rx
}

/// What the run loop waits for next, and what happens when it comes.
#[derive(Debug, Clone, Copy)]
enum Expiry {
    Kill(&'static str),
    NotReaped,
    TerminalHeldOpen,
    GiveUpOnTerminal,
}

struct Clocks<'a> {
    spec: &'a LaunchSpec,
    started: Instant,
    last_output: Instant,
    result_at: Option<Instant>,
    exited_at: Option<Instant>,
    killed_at: Option<Instant>,
    leftovers_swept_at: Option<Instant>,
}

fn next_deadline(c: &Clocks<'_>) -> (Instant, Expiry) {
    if let Some(exited_at) = c.exited_at {
        // The child is gone; only the terminal (end-of-file) is awaited.
        return match c.leftovers_swept_at {
            None => (after(exited_at, c.spec.grace_after_result), Expiry::TerminalHeldOpen),
            Some(swept) => (after(swept, REAP_AFTER_KILL), Expiry::GiveUpOnTerminal),
        };
    }
    if let Some(killed_at) = c.killed_at {
        return (after(killed_at, REAP_AFTER_KILL), Expiry::NotReaped);
    }
    let mut candidates = vec![
        (after(c.started, c.spec.hard_timeout), Expiry::Kill(kill_reason::HARD_TIMEOUT)),
        (after(c.started, c.spec.budget), Expiry::Kill(kill_reason::BUDGET)),
    ];
    match c.result_at {
        Some(at) => candidates.push((after(at, c.spec.grace_after_result), Expiry::Kill(kill_reason::AFTER_RESULT))),
        None => candidates.push((after(c.last_output, c.spec.idle_timeout), Expiry::Kill(kill_reason::IDLE))),
    }
    candidates.into_iter().min_by_key(|(at, _)| *at).expect("at least one deadline")
}

/// `at + d`, or about thirty years from now when a configured duration is absurdly large.
fn after(at: Instant, d: Duration) -> Instant {
    at.checked_add(d).unwrap_or_else(|| Instant::now() + Duration::from_secs(30 * 365 * 86_400))
}

/// The events and skipped lines of one run.
#[derive(Default)]
struct Tally {
    events: u64,
    skipped: u64,
    result: Option<Value>,
    /// The first `session_id` an event carried (the `init` event's, usually).
    session_id: Option<String>,
    /// The first few non-JSON lines (what claude said instead of stream-json, e.g. why it
    /// refused a `--resume`).
    noise: Vec<String>,
    init_seen: bool,
}

/// Non-JSON lines kept in [`RunOutcome::noise`], and the characters kept of each.
const NOISE_LINES: usize = 3;
const NOISE_CHARS: usize = 300;

impl Tally {
    /// Handles one line; true when it was a `result` event.
    fn take(&mut self, line: RawLine, on_event: &mut impl FnMut(Value)) -> bool {
        match parse_line(line) {
            Parsed::Blank => false,
            Parsed::Skipped(text) => {
                self.skipped += 1;
                if let Some(text) = text.filter(|_| self.noise.len() < NOISE_LINES) {
                    self.noise.push(text.chars().take(NOISE_CHARS).collect());
                }
                false
            }
            Parsed::Event(event) => {
                self.events += 1;
                if self.session_id.is_none() {
                    self.session_id = event.get("session_id").and_then(Value::as_str).map(str::to_string);
                }
                let kind = event.get("type").and_then(Value::as_str);
                if kind == Some("system") && event.get("subtype").and_then(Value::as_str) == Some("init") {
                    self.init_seen = true;
                }
                let is_result = kind == Some("result");
                if is_result {
                    self.result = Some(event.clone());
                }
                on_event(event);
                is_result
            }
        }
    }
}

/// One line of terminal output, without its `\n`.
#[derive(Debug, PartialEq, Eq)]
enum RawLine {
    Bytes(Vec<u8>),
    /// Longer than [`MAX_LINE_BYTES`]: its bytes were dropped.
    TooLong,
}

/// Splits the PTY's byte stream into lines; a line may span any number of reads.
#[derive(Default)]
struct LineSplitter {
    partial: Vec<u8>,
    overflowed: bool,
}

impl LineSplitter {
    fn push(&mut self, mut chunk: &[u8]) -> Vec<RawLine> {
        let mut lines = Vec::new();
        while let Some(newline) = chunk.iter().position(|&b| b == b'\n') {
            if self.overflowed {
                self.overflowed = false;
                lines.push(RawLine::TooLong);
            } else {
                self.partial.extend_from_slice(&chunk[..newline]);
                lines.push(RawLine::Bytes(std::mem::take(&mut self.partial)));
            }
            chunk = &chunk[newline + 1..];
        }
        if !self.overflowed {
            self.partial.extend_from_slice(chunk);
            if self.partial.len() > MAX_LINE_BYTES {
                self.partial = Vec::new();
                self.overflowed = true;
            }
        }
        lines
    }

    /// The last line, when the output did not end with a newline.
    fn finish(&mut self) -> Option<RawLine> {
        if std::mem::take(&mut self.overflowed) {
            return Some(RawLine::TooLong);
        }
        (!self.partial.is_empty()).then(|| RawLine::Bytes(std::mem::take(&mut self.partial)))
    }
}

enum Parsed {
    Blank,
    /// Not a JSON object (its text, when it was short enough to be kept).
    Skipped(Option<String>),
    Event(Value),
}

fn parse_line(line: RawLine) -> Parsed {
    let RawLine::Bytes(bytes) = line else {
        return Parsed::Skipped(None);
    };
    let clean = strip_terminal_noise(&bytes);
    let text = clean.trim_ascii();
    if text.is_empty() {
        return Parsed::Blank;
    }
    match serde_json::from_slice::<Value>(text) {
        Ok(event @ Value::Object(_)) => Parsed::Event(event),
        _ => Parsed::Skipped((text.len() <= 4 * NOISE_CHARS).then(|| String::from_utf8_lossy(text).into_owned())),
    }
}

/// The line without ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ST`, DCS and
/// the other string sequences, two- and three-byte `ESC` sequences) and without `\r`. A JSON
/// text never holds a raw ESC or CR, so nothing of an event is lost.
pub fn strip_terminal_noise(line: &[u8]) -> Vec<u8> {
    const ESC: u8 = 0x1b;
    const BEL: u8 = 0x07;
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'\r' => i += 1,
            ESC => {
                i += 1;
                match line.get(i) {
                    None => {}
                    Some(b'[') => {
                        // CSI: parameters and intermediates, then one final byte 0x40..=0x7e.
                        i += 1;
                        while i < line.len() && (0x20..=0x3f).contains(&line[i]) {
                            i += 1;
                        }
                        if i < line.len() && (0x40..=0x7e).contains(&line[i]) {
                            i += 1;
                        }
                    }
                    Some(b']' | b'P' | b'X' | b'^' | b'_') => {
                        // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \).
                        i += 1;
                        while i < line.len() {
                            if line[i] == BEL {
                                i += 1;
                                break;
                            }
                            if line[i] == ESC && line.get(i + 1) == Some(&b'\\') {
                                i += 2;
                                break;
                            }
                            i += 1;
                        }
                    }
                    Some(_) => {
                        // ESC, intermediates 0x20..=0x2f, then one final byte.
                        while i < line.len() && (0x20..=0x2f).contains(&line[i]) {
                            i += 1;
                        }
                        if i < line.len() && (0x30..=0x7e).contains(&line[i]) {
                            i += 1;
                        }
                    }
                }
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// The absolute path of the program: a path is checked as is (relative to our working
/// directory), a bare name is looked up on PATH (the one given in `env`, else ours).
fn resolve_program(program: &Path, env: &[(String, String)]) -> Result<PathBuf, PtyError> {
    let not_found = || PtyError::ProgramNotFound { program: program.to_path_buf() };
    if program.as_os_str().is_empty() {
        return Err(not_found());
    }
    if program.components().count() > 1 || program.is_absolute() {
        let path = std::path::absolute(program).map_err(|_| not_found())?;
        return match is_executable(&path) {
            Some(true) => Ok(path),
            Some(false) => Err(PtyError::NotExecutable { program: program.to_path_buf() }),
            None => Err(not_found()),
        };
    }
    let path_var: Option<OsString> =
        env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.into()).or_else(|| std::env::var_os("PATH"));
    let dirs = path_var.map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default();
    dirs.into_iter().map(|dir| dir.join(program)).find(|c| is_executable(c) == Some(true)).ok_or_else(not_found)
}

/// `None` when nothing is there, `Some(false)` for a directory or a file without an `x` bit.
fn is_executable(path: &Path) -> Option<bool> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The child's session: the child is its leader (portable-pty calls `setsid`), so its session
/// and process-group ids are its pid. Killing it kills everything still in it, plus anything
/// that descends from those processes, with SIGKILL. Armed, it does so when dropped.
struct SessionGuard {
    leader: u32,
    /// Once the leader is reaped its pid may be reused, so the group is no longer signalled
    /// blindly: only processes seen in the session (which keep the id allocated) are.
    leader_reaped: bool,
    armed: bool,
}

impl SessionGuard {
    fn new(child: &(dyn Child + Send + Sync)) -> Self {
        SessionGuard { leader: child.process_id().unwrap_or(0), leader_reaped: false, armed: true }
    }

    fn kill(&self) {
        if self.leader == 0 {
            return;
        }
        let mut targets: Vec<String> = session_processes(self.leader).into_iter().map(|p| p.to_string()).collect();
        if !self.leader_reaped {
            targets.push(format!("-{}", self.leader));
        }
        if targets.is_empty() {
            return;
        }
        send_sigkill(&targets);
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

/// `kill -KILL -- <targets>` (a negative target is a process group), through the `kill`
/// executable or, where there is none, the shell's builtin.
fn send_sigkill(targets: &[String]) {
    let quiet = |mut cmd: Command| {
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        cmd.status()
    };
    let mut kill = Command::new("kill");
    kill.arg("-KILL").arg("--").args(targets);
    if let Err(e) = quiet(kill) {
        tracing::debug!(error = %e, "atlas: no kill executable, using the shell's");
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(format!("kill -KILL -- {}", targets.join(" ")));
        if let Err(e) = quiet(sh) {
            tracing::error!(error = %e, "atlas: cannot kill claude's session");
        }
    }
}

/// Live processes of session `sid` or process group `sid`, and their descendants (found
/// through /proc; empty where there is no /proc).
fn session_processes(sid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    // (pid, ppid, pgrp, session) of every live process.
    let table: Vec<(u32, u32, u32, u32)> = dir
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // "pid (comm) state ppid pgrp session …"; comm may hold spaces and parentheses.
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            if state == "Z" || state == "X" {
                return None;
            }
            let ppid = fields.next()?.parse().ok()?;
            let pgrp = fields.next()?.parse().ok()?;
            let session = fields.next()?.parse().ok()?;
            Some((pid, ppid, pgrp, session))
        })
        .collect();
    let mut found: Vec<u32> =
        table.iter().filter(|(_, _, pgrp, session)| *session == sid || *pgrp == sid).map(|p| p.0).collect();
    loop {
        let before = found.len();
        for (pid, ppid, _, _) in &table {
            if found.contains(ppid) && !found.contains(pid) {
                found.push(*pid);
            }
        }
        if found.len() == before {
            break;
        }
    }
    found.retain(|pid| *pid != me);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn noise_is_stripped_and_json_survives() {
        let line = b"\x1b[?25l\x1b[2K\x1b]0;title\x07\x1b(B{\"type\":\"x\",\"t\":\"a[b]\"}\x1b[0m\r\r";
        assert_eq!(strip_terminal_noise(line), br#"{"type":"x","t":"a[b]"}"#.to_vec());
        assert_eq!(strip_terminal_noise(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), b"link".to_vec());
        assert_eq!(strip_terminal_noise(b"a\x1b7b\x1b=c\x1b"), b"abc".to_vec());
    }

    #[test]
    fn lines_span_reads_and_the_last_one_needs_no_newline() {
        let mut s = LineSplitter::default();
        assert!(s.push(b"{\"a\":").is_empty());
        assert_eq!(s.push(b"1}\r\n\n{\"b\""), vec![RawLine::Bytes(b"{\"a\":1}\r".to_vec()), RawLine::Bytes(vec![])]);
        assert_eq!(s.push(b":2}"), vec![]);
        assert_eq!(s.finish(), Some(RawLine::Bytes(b"{\"b\":2}".to_vec())));
        assert_eq!(s.finish(), None);
    }

    #[test]
    fn a_result_decides_over_the_exit_code() {
        let ok = json!({"type": "result", "subtype": "success", "is_error": false});
        let failed = json!({"type": "result", "subtype": "success", "is_error": true});
        let no_flag = json!({"type": "result", "subtype": "error_max_turns"});
        assert_eq!(classify(Some(&ok), Some(1), None, &[]), ExitClass::Ok);
        assert_eq!(classify(Some(&ok), None, Some(kill_reason::AFTER_RESULT), &[]), ExitClass::Ok);
        assert_eq!(classify(Some(&failed), Some(0), None, &[]), ExitClass::Error);
        assert_eq!(classify(Some(&no_flag), Some(0), None, &[]), ExitClass::Error);
        assert_eq!(classify(None, Some(0), None, &[]), ExitClass::Error);
        assert_eq!(classify(None, Some(2), None, &[]), ExitClass::BadArguments);
        assert_eq!(classify(None, None, Some(kill_reason::IDLE), &[]), ExitClass::Idle);
        assert_eq!(classify(None, None, Some(kill_reason::BUDGET), &[]), ExitClass::HardTimeout);
        assert_eq!(classify(None, None, Some(kill_reason::HARD_TIMEOUT), &[]), ExitClass::HardTimeout);
        // The real CLI's argument errors exit 1; the root refusal is no argument error.
        for said in [
            "error: unknown option '--bogus-flag'",
            "Error: When using --print, --output-format=stream-json requires --verbose",
            "error: option '--max-turns <turns>' argument 'abc' is invalid. must be a number",
            "Error: Input must be provided either through stdin or as a prompt argument when using --print",
        ] {
            assert_eq!(classify(None, Some(1), None, &[said.to_string()]), ExitClass::BadArguments, "{said}");
        }
        let root = format!("--dangerously-skip-permissions {ROOT_REFUSAL} for security reasons");
        assert_eq!(classify(None, Some(1), None, &[root]), ExitClass::Error);
        assert_eq!(
            [ExitClass::Ok, ExitClass::Idle, ExitClass::HardTimeout, ExitClass::Error, ExitClass::BadArguments]
                .map(|c| (c.code(), c.retryable())),
            [(0, false), (125, true), (124, true), (1, false), (2, false)]
        );
    }

    fn outcome(result: Value, init_seen: bool) -> RunOutcome {
        RunOutcome {
            class: classify(Some(&result), Some(1), None, &[]),
            exit_code: Some(1),
            result: Some(result),
            events: 1,
            skipped_lines: 0,
            duration: Duration::ZERO,
            killed: None,
            session_id: None,
            noise: vec![],
            init_seen,
        }
    }

    /// The `result` events of the real CLI (2.1.332), trimmed to the fields read here.
    #[test]
    fn the_real_clis_results_are_read() {
        let overloaded = outcome(
            json!({"type": "result", "subtype": "success", "is_error": true, "terminal_reason": "api_error",
                "api_error_status": 529, "result": "API Error: Repeated 529 Overloaded errors.", "total_cost_usd": 0,
                "model_usage_since_last_result": {}}),
            true,
        );
        let api = overloaded.api_failure().unwrap();
        assert_eq!((api.status, api.transient()), (Some(529), true));
        assert_eq!(overloaded.pass_cost_usd(None).map(f64::is_sign_negative), Some(false), "never -0");
        let refused_network = outcome(
            json!({"type": "result", "is_error": true, "terminal_reason": "api_error", "api_error_status": null,
                "result": "API Error: Connection refused"}),
            true,
        );
        assert_eq!(refused_network.api_failure().map(|a| a.transient()), Some(true));
        let bad_key = outcome(
            json!({"type": "result", "is_error": true, "terminal_reason": "api_error", "api_error_status": 401}),
            true,
        );
        assert_eq!(bad_key.api_failure().map(|a| a.transient()), Some(false));
        let no_session = outcome(
            json!({"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 0,
                "errors": ["No conversation found with session ID: 1111"]}),
            false,
        );
        assert!(no_session.resume_refused() && no_session.api_failure().is_none());
        let max_turns = outcome(
            json!({"type": "result", "subtype": "error_max_turns", "is_error": true, "num_turns": 3,
                "terminal_reason": "max_turns"}),
            true,
        );
        assert!(max_turns.max_turns_reached() && !max_turns.resume_refused() && max_turns.api_failure().is_none());
        let denied = outcome(
            json!({"type": "result", "subtype": "success", "is_error": false, "permission_denials": [
                {"tool_name": "Bash", "tool_use_id": "t", "tool_input": {"command": "echo hi >\n HELLO.md"}}]}),
            true,
        );
        assert_eq!(denied.permission_denials(), [Denial { tool: "Bash".into(), input: "echo hi > HELLO.md".into() }]);
        // A resumed pass: its own share, not the session's running total.
        let resumed = outcome(json!({"type": "result", "is_error": false, "total_cost_usd": 0.0016}), true);
        assert_eq!(resumed.pass_cost_usd(Some(0.0008)), Some(0.0008));
        let per_run = outcome(
            json!({"type": "result", "is_error": false, "total_cost_usd": 0.0016,
                "model_usage_since_last_result": {"claude-opus-5-5": {"costUSD": 0.0008}}}),
            true,
        );
        assert_eq!(per_run.pass_cost_usd(Some(0.0008)), Some(0.0008));
    }

    #[test]
    fn free_text_never_looks_like_a_flag() {
        let args = claude_args(&ClaudeArgs {
            prompt: "- corrige le panier".into(),
            add_dir: "/w".into(),
            permission_mode: "bypassPermissions".into(),
            max_turns: 0,
            system_prompt: "--sois bref".into(),
            resume: None,
            persist_session: false,
            strict_mcp: false,
            allowed_tools: Some(String::new()),
            model: None,
        });
        assert_eq!(args[1], " - corrige le panier");
        assert!(args.contains(&" --sois bref".to_string()));
        assert!(!args.iter().any(|a| a == "--strict-mcp-config" || a == "--allowed-tools" || a == "--model"));
    }
}
