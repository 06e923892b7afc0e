//! A run's transcript, compacted for a relaunch prompt or a recap (spec §4.4.7): the
//! stream-json events become short markdown in which past turns lose their thinking, partial
//! `stream_event`s disappear (the full assistant message carries the same text), each tool
//! call is one line and each tool output is cleaned of terminal noise, reduced to a status
//! line when it ran clean, or cut to its head and tail when long.
//!
//! Pure: events in, text out. The events are the journal's, already redacted.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// How hard to compact. `Default` is the spec's rule: thinking of the last turn only, tool
/// outputs over 20 lines cut to the first 5 and the last 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactOptions {
    /// Keep the thinking of the very last turn (every earlier turn's is always dropped).
    pub keep_last_thinking: bool,
    /// A tool output longer than this (in lines, after cleaning) is cut.
    pub max_tool_lines: usize,
    /// Lines kept at the start of a cut output (the command's context).
    pub head: usize,
    /// Lines kept at the end of a cut output (the result or the error).
    pub tail: usize,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions { keep_last_thinking: true, max_tool_lines: 20, head: 5, tail: 10 }
    }
}

/// A single line longer than this (minified JSON, a base64 blob) is cut: one line can weigh
/// more than the whole rest of the transcript.
const MAX_LINE_CHARS: usize = 400;
/// A tool call's input summary is cut at this many characters.
const MAX_SUMMARY_CHARS: usize = 160;

/// The whole run as markdown, blocks separated by a blank line.
pub fn compact(events: &[Value], opts: &CompactOptions) -> String {
    let last_turn =
        events.iter().enumerate().rfind(|(_, e)| role_of(e) == Some("assistant")).map(|(i, e)| turn_key(i, e));
    let mut tool_names: HashMap<String, String> = HashMap::new();
    let mut blocks: Vec<String> = Vec::new();
    let mut last_text: Option<String> = None;

    for (index, event) in events.iter().enumerate() {
        match event.get("type").and_then(Value::as_str) {
            Some("stream_event") => continue,
            Some("system") => {
                if let Some(line) = system_line(event) {
                    blocks.push(line);
                }
                continue;
            }
            Some("result") => {
                let text = event.get("result").and_then(Value::as_str).map(str::trim).unwrap_or("");
                if !text.is_empty() && last_text.as_deref() != Some(text) {
                    blocks.push(text.to_string());
                }
                blocks.push(result_line(event));
                continue;
            }
            _ => {}
        }
        let Some(role) = role_of(event) else { continue };
        let in_last_turn = last_turn.as_ref() == Some(&turn_key(index, event));
        for block in content_blocks(event) {
            let block_type = block.get("type").and_then(Value::as_str).unwrap_or("text");
            match (role, block_type) {
                (_, "text") => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or("").trim();
                    if text.is_empty() {
                        continue;
                    }
                    if role == "assistant" {
                        last_text = Some(text.to_string());
                        blocks.push(text.to_string());
                    } else {
                        blocks.push(format!("**Demande :**\n{}", cut_lines(&split_lines(text), opts).join("\n")));
                    }
                }
                ("assistant", "thinking") if opts.keep_last_thinking && in_last_turn => {
                    let thinking = block.get("thinking").and_then(Value::as_str).unwrap_or("").trim();
                    if !thinking.is_empty() {
                        blocks.push(quote(&format!("_Réflexion :_ {thinking}")));
                    }
                }
                ("assistant", "tool_use" | "server_tool_use") => {
                    let name = block.get("name").and_then(Value::as_str).unwrap_or("outil");
                    if let Some(id) = block.get("id").and_then(Value::as_str) {
                        tool_names.insert(id.to_string(), name.to_string());
                    }
                    let input = block.get("input").unwrap_or(&Value::Null);
                    let summary = summarize_input(name, input);
                    blocks.push(if summary.is_empty() {
                        format!("→ {name}")
                    } else {
                        format!("→ {name} {summary}")
                    });
                }
                ("user", "tool_result") => {
                    let name = block
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .and_then(|id| tool_names.get(id))
                        .map_or("outil", String::as_str);
                    let is_error = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                    let output = tool_result_text(block.get("content").unwrap_or(&Value::Null));
                    blocks.push(render_output(Some(name), &compact_output(&output, is_error, opts), is_error, true));
                }
                // Past thinking, redacted thinking, images and unknown blocks are dropped.
                _ => {}
            }
        }
    }
    blocks.join("\n\n")
}

/// One tool output compacted: ANSI and progress noise removed (spinner/progress-bar redraws:
/// keep only the final state of `\r`-overwritten lines), a clean exit-0 output without
/// warnings reduced to a status line, more than `max_tool_lines` lines cut to the first
/// `head` and last `tail` with a marker "[… N lignes omises …]".
pub fn compact_tool_output(output: &str, is_error: bool, opts: &CompactOptions) -> String {
    render_output(None, &compact_output(output, is_error, opts), is_error, false)
}

/// What is left of a tool output.
enum Compacted {
    /// Ran clean: only the line count is kept.
    Clean { lines: usize },
    /// To be read: the (possibly cut) lines, and how many there were before the cut.
    Shown { lines: usize, kept: Vec<String> },
}

fn compact_output(output: &str, is_error: bool, opts: &CompactOptions) -> Compacted {
    let lines = clean_terminal(output);
    if !is_error && !lines.iter().any(|l| looks_like_a_warning(l)) {
        return Compacted::Clean { lines: lines.len() };
    }
    Compacted::Shown { lines: lines.len(), kept: cut_lines(&lines, opts) }
}

/// `✓ Bash : terminé sans avertissement (3 lignes)`, or a header line and the lines (in a
/// code fence when `fenced`, as inside the markdown transcript).
fn render_output(tool: Option<&str>, compacted: &Compacted, is_error: bool, fenced: bool) -> String {
    let who = tool.map(|t| format!("{t} : ")).unwrap_or_default();
    match compacted {
        Compacted::Clean { lines } => format!("✓ {who}terminé sans avertissement ({})", count_lines(*lines)),
        Compacted::Shown { lines, kept } => {
            let header = if is_error {
                format!("✗ {who}échec ({})", count_lines(*lines))
            } else {
                format!("⚠ {who}terminé, avertissements possibles ({})", count_lines(*lines))
            };
            if kept.is_empty() {
                return header;
            }
            let body = kept.join("\n");
            if fenced {
                let fence = "`".repeat(longest_backtick_run(&body).max(2) + 1);
                format!("{header}\n{fence}\n{body}\n{fence}")
            } else {
                format!("{header}\n{body}")
            }
        }
    }
}

fn count_lines(n: usize) -> String {
    match n {
        0 => "sortie vide".to_string(),
        1 => "1 ligne".to_string(),
        n => format!("{n} lignes"),
    }
}

/// Head and tail with a marker when there are more than `max_tool_lines`; long lines cut.
fn cut_lines(lines: &[String], opts: &CompactOptions) -> Vec<String> {
    let shorten = |l: &String| truncate_chars(l, MAX_LINE_CHARS);
    if lines.len() <= opts.max_tool_lines || lines.len() <= opts.head + opts.tail {
        return lines.iter().map(shorten).collect();
    }
    let omitted = lines.len() - opts.head - opts.tail;
    let marker =
        if omitted == 1 { "[… 1 ligne omise …]".to_string() } else { format!("[… {omitted} lignes omises …]") };
    lines[..opts.head]
        .iter()
        .map(shorten)
        .chain([marker])
        .chain(lines[lines.len() - opts.tail..].iter().map(shorten))
        .collect()
}

/// The lines a terminal would finally show: escape sequences removed, a line rewritten with
/// `\r` kept in its last state, lines redrawn through cursor-up moves replaced, runs of
/// progress lines reduced to their last one, trailing blank lines dropped.
fn clean_terminal(output: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for raw in output.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        // `ESC[nA` / `ESC[nF` move up n lines to redraw them: what was there is replaced.
        let ups: usize = CURSOR_UP
            .captures_iter(raw)
            .map(|c| c.get(1).map_or(1, |n| n.as_str().parse::<usize>().unwrap_or(1).max(1)))
            .sum();
        lines.truncate(lines.len().saturating_sub(ups));
        let last_state = raw
            .split('\r')
            .map(|segment| ANSI.replace_all(segment, "").into_owned())
            .rfind(|segment| !segment.trim().is_empty())
            .unwrap_or_default();
        let line = last_state.trim_end().to_string();
        if is_progress(&line) && lines.last().is_some_and(|previous| is_progress(previous)) {
            lines.pop();
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// CSI sequences (colours, cursor moves, erasing), OSC (titles, links), and two-byte escapes.
static ANSI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]",
    )
    .expect("ANSI pattern compiles")
});
static CURSOR_UP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[(\d*)[AF]").expect("cursor-up pattern compiles"));
/// A percentage, a drawn bar, or a spinner glyph at the start of the line.
static PROGRESS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\d(?:\.\d+)?\s?%|[█▓▒░■□▏▎▍▌▋▊▉]{2,}|\[[=#>\-. ]{5,}\]|^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷]")
        .expect("progress pattern compiles")
});
/// Words that make an output worth reading (the spec's warning/error/deprecated/fail, and a
/// few cousins such as npm's `ERR!` or a panic); counts of zero do not.
static WARNING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)warn|error|\berr\b|deprecat|fail|panic|fatal|exception|traceback")
        .expect("warning pattern compiles")
});
static ZERO_COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:0|no|zero)\s+(?:failed|failures?|errors?|warnings?)\b").expect("zero-count pattern compiles")
});

fn is_progress(line: &str) -> bool {
    PROGRESS.is_match(line)
}

/// "error", "warning", "deprecated", "failed"…, but not "0 failed" nor "no warnings".
fn looks_like_a_warning(line: &str) -> bool {
    WARNING.is_match(line) && WARNING.is_match(&ZERO_COUNT.replace_all(line, ""))
}

/// The text of a `tool_result`'s content: a string, or a list of `{type: "text", text}`
/// blocks (images become `[image]`).
fn tool_result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|item| match item.get("type").and_then(Value::as_str) {
                Some("text") => item.get("text").and_then(Value::as_str).map(str::to_string),
                Some("image") => Some("[image]".to_string()),
                _ => item.as_str().map(str::to_string),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The one-line summary of a tool call's input.
fn summarize_input(tool: &str, input: &Value) -> String {
    let field = |key: &str| input.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let summary = match tool {
        "Bash" => field("command").map(str::to_string),
        "Read" | "Write" | "Edit" | "MultiEdit" => field("file_path").map(str::to_string),
        "NotebookEdit" => field("notebook_path").map(str::to_string),
        "Grep" | "Glob" => field("pattern").map(|p| match field("path") {
            Some(path) => format!("{p} dans {path}"),
            None => p.to_string(),
        }),
        "TodoWrite" => input.get("todos").and_then(Value::as_array).map(|t| match t.len() {
            1 => "1 tâche".to_string(),
            n => format!("{n} tâches"),
        }),
        _ => None,
    };
    let summary = summary
        .or_else(|| {
            ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "name"]
                .iter()
                .find_map(|key| field(key))
                .map(str::to_string)
        })
        .or_else(|| match input {
            Value::Object(map) if map.is_empty() => None,
            Value::Null => None,
            other => Some(other.to_string()),
        })
        .unwrap_or_default();
    truncate_chars(&summary.split_whitespace().collect::<Vec<_>>().join(" "), MAX_SUMMARY_CHARS)
}

/// `_Session démarrée : modèle …, N outils_` for `system/init`; other system events are dropped.
fn system_line(event: &Value) -> Option<String> {
    if event.get("subtype").and_then(Value::as_str) != Some("init") {
        return None;
    }
    let model = event.get("model").and_then(Value::as_str).unwrap_or("inconnu");
    let tools = event.get("tools").and_then(Value::as_array).map_or(0, Vec::len);
    Some(format!("_Session démarrée : modèle {model}, {tools} outils_"))
}

/// `**Fin selon Claude Code :** succès · 4 tours · 0,0123 $ · 12,3 s`.
fn result_line(event: &Value) -> String {
    let subtype = event.get("subtype").and_then(Value::as_str).unwrap_or("");
    let is_error = match event.get("is_error").and_then(Value::as_bool) {
        Some(flag) => flag,
        None => subtype != "success",
    };
    let mut parts = vec![if !is_error {
        "succès".to_string()
    } else {
        match subtype {
            "error_max_turns" => "échec (limite de tours atteinte)".to_string(),
            "error_during_execution" => "échec (erreur pendant l'exécution)".to_string(),
            "error_max_budget_usd" => "échec (budget atteint)".to_string(),
            "success" | "" => "échec".to_string(),
            other => format!("échec ({other})"),
        }
    }];
    if let Some(turns) = event.get("num_turns").and_then(Value::as_u64) {
        parts.push(if turns == 1 { "1 tour".to_string() } else { format!("{turns} tours") });
    }
    if let Some(cost) = event.get("total_cost_usd").or_else(|| event.get("cost_usd")).and_then(Value::as_f64) {
        parts.push(format!("{cost:.4} $").replace('.', ","));
    }
    if let Some(ms) = event.get("duration_ms").and_then(Value::as_u64) {
        parts.push(duration(ms));
    }
    format!("**Fin selon Claude Code :** {}", parts.join(" · "))
}

fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 60 {
        format!("{:.1} s", ms as f64 / 1000.0).replace('.', ",")
    } else {
        format!("{} min {:02} s", secs / 60, secs % 60)
    }
}

/// The role of a message event: Claude Code's `{"type": "assistant", "message": {…}}`, or a
/// raw transcript line `{"role": "assistant", "content": […]}`.
fn role_of(event: &Value) -> Option<&str> {
    let role = match event.get("message") {
        Some(message) if message.is_object() => {
            message.get("role").and_then(Value::as_str).or_else(|| event.get("type").and_then(Value::as_str))
        }
        _ => event.get("role").and_then(Value::as_str),
    };
    role.filter(|r| matches!(*r, "assistant" | "user"))
}

/// The content blocks of a message event; a plain string is one text block.
fn content_blocks(event: &Value) -> Vec<Value> {
    let message = event.get("message").filter(|m| m.is_object()).unwrap_or(event);
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(Value::String(text)) => vec![serde_json::json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

/// Which turn an assistant event belongs to: Claude Code prints one event per content block,
/// all with the same message id, so the id is the turn; without one, the event is.
#[derive(Debug, PartialEq, Eq)]
enum TurnKey {
    Id(String),
    Event(usize),
}

fn turn_key(index: usize, event: &Value) -> TurnKey {
    match event.get("message").and_then(|m| m.get("id")).and_then(Value::as_str) {
        Some(id) => TurnKey::Id(id.to_string()),
        None => TurnKey::Event(index),
    }
}

fn split_lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

fn quote(text: &str) -> String {
    text.lines().map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") }).collect::<Vec<_>>().join("\n")
}

fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… ({} caractères)", &text[..cut], text.chars().count()),
    }
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn opts() -> CompactOptions {
        CompactOptions::default()
    }

    /// The spec's raw transcript (§4.4.7), line for line.
    fn seed_transcript() -> Vec<Value> {
        [
            r#"{"role":"user","content":[{"type":"text","text":"Crée hello.txt avec 'Hello World' et vérifie son contenu."}],"timestamp":"2026-09-21T07:15:00.000Z"}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"L'utilisateur veut initialiser un fichier hello.txt et inspecter sa création. Je vais utiliser la commande bash pour écrire le texte puis cat pour vérifier."},{"type":"tool_use","id":"call_123","name":"Bash","input":{"command":"echo 'Hello World' > hello.txt && cat hello.txt"}}],"timestamp":"2026-09-21T07:15:02.100Z"}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_123","content":"Hello World\n","is_error":false}],"timestamp":"2026-09-21T07:15:02.450Z"}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"Le fichier `hello.txt` a été créé et contient bien `Hello World`."}],"timestamp":"2026-09-21T07:15:03.200Z"}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
    }

    /// A Claude Code stream-json run: init, partials, one event per content block sharing the
    /// message id, a failing then passing `cargo test`, the result.
    fn claude_code_run() -> Vec<Value> {
        let long_failure: String = (1..=40)
            .map(|i| if i == 38 { "error[E0308]: mismatched types\n".to_string() } else { format!("line {i}\n") })
            .collect();
        vec![
            json!({"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-sonnet-4-5", "tools": ["Bash", "Read", "Edit"]}),
            json!({"type": "stream_event", "event": {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "PARTIAL-DELTA"}}}),
            json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "thinking", "thinking": "OLD-THOUGHT: run the tests first", "signature": "sig"}]}}),
            json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cargo test --lib", "description": "Run the tests"}}]}}),
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": long_failure, "is_error": true}]}}),
            json!({"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "Edit", "input": {"file_path": "/w/src/lib.rs", "old_string": "a", "new_string": "b"}}]}}),
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "The file /w/src/lib.rs has been updated."}]}]}}),
            json!({"type": "assistant", "message": {"id": "msg_3", "role": "assistant", "content": [{"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "cargo test --lib"}}]}}),
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "content": "\u{1b}[32m   Compiling\u{1b}[0m arthur\n    Building [=====>     ] 3/9\r    Building [=========> ] 8/9\r\ntest result: ok. 12 passed; 0 failed; 0 ignored\n", "is_error": false}]}}),
            json!({"type": "stream_event", "event": {"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": "PARTIAL-THINKING"}}}),
            json!({"type": "assistant", "message": {"id": "msg_4", "role": "assistant", "content": [{"type": "thinking", "thinking": "LAST-THOUGHT: all green, summarise", "signature": "sig"}]}}),
            json!({"type": "assistant", "message": {"id": "msg_4", "role": "assistant", "content": [{"type": "text", "text": "Les tests passent : le type de retour est corrigé."}]}}),
            json!({"type": "result", "subtype": "success", "is_error": false, "num_turns": 4, "total_cost_usd": 0.0123, "duration_ms": 12345, "result": "Les tests passent : le type de retour est corrigé."}),
        ]
    }

    #[test]
    fn seed_example_compacts_to_a_few_lines() {
        let out = compact(&seed_transcript(), &opts());
        assert_eq!(
            out,
            "**Demande :**\nCrée hello.txt avec 'Hello World' et vérifie son contenu.\n\n\
             → Bash echo 'Hello World' > hello.txt && cat hello.txt\n\n\
             ✓ Bash : terminé sans avertissement (1 ligne)\n\n\
             Le fichier `hello.txt` a été créé et contient bien `Hello World`."
        );
    }

    #[test]
    fn only_the_last_turns_thinking_is_kept() {
        let out = compact(&claude_code_run(), &opts());
        assert!(!out.contains("OLD-THOUGHT"), "{out}");
        assert!(out.contains("> _Réflexion :_ LAST-THOUGHT: all green, summarise"), "{out}");
        let without = compact(&claude_code_run(), &CompactOptions { keep_last_thinking: false, ..opts() });
        assert!(!without.contains("LAST-THOUGHT") && !without.contains("Réflexion"), "{without}");
    }

    #[test]
    fn the_last_turn_is_the_last_message_id_not_the_last_event() {
        // The thinking comes in its own event, before the text of the same message.
        let events = claude_code_run();
        let out = compact(&events, &opts());
        let thought = out.find("LAST-THOUGHT").unwrap();
        let text = out.find("Les tests passent").unwrap();
        assert!(thought < text);
        // A past turn whose thinking shares no id with the last one loses it.
        let seed = compact(&seed_transcript(), &opts());
        assert!(!seed.contains("initialiser"), "{seed}");
    }

    #[test]
    fn partials_and_system_noise_are_dropped() {
        let mut events = claude_code_run();
        events.push(json!({"type": "system", "subtype": "compact_boundary"}));
        let out = compact(&events, &opts());
        assert!(!out.contains("PARTIAL"), "{out}");
        assert!(!out.contains("compact_boundary"));
        assert!(out.starts_with("_Session démarrée : modèle claude-sonnet-4-5, 3 outils_"), "{out}");
    }

    #[test]
    fn tool_calls_are_one_line_and_outputs_compacted() {
        let out = compact(&claude_code_run(), &opts());
        assert!(out.contains("→ Bash cargo test --lib\n\n✗ Bash : échec (40 lignes)\n```\nline 1\n"), "{out}");
        assert!(out.contains("[… 25 lignes omises …]\nline 31\n"), "{out}");
        assert!(out.contains("error[E0308]: mismatched types\nline 39\nline 40\n```"), "{out}");
        assert!(out.contains("→ Edit /w/src/lib.rs\n\n✓ Edit : terminé sans avertissement (1 ligne)"), "{out}");
        // ANSI, the `\r` progress bar and "0 failed" do not make the second run worth reading.
        assert!(out.contains("✓ Bash : terminé sans avertissement (3 lignes)"), "{out}");
        assert!(!out.contains("Building"), "{out}");
    }

    #[test]
    fn assistant_text_is_kept_once_and_the_result_closes() {
        let out = compact(&claude_code_run(), &opts());
        assert_eq!(out.matches("Les tests passent").count(), 1, "{out}");
        assert!(out.ends_with("**Fin selon Claude Code :** succès · 4 tours · 0,0123 $ · 12,3 s"), "{out}");
        let failed = json!({"type": "result", "subtype": "error_max_turns", "num_turns": 30, "duration_ms": 125000, "result": ""});
        assert_eq!(
            compact(&[failed], &opts()),
            "**Fin selon Claude Code :** échec (limite de tours atteinte) · 30 tours · 2 min 05 s"
        );
        // `is_error` wins over the subtype; a result text never said by an assistant event is kept.
        let api_error = json!({"type": "result", "subtype": "success", "is_error": true, "num_turns": 1, "result": "API Error: 529 overloaded"});
        assert_eq!(
            compact(&[api_error], &opts()),
            "API Error: 529 overloaded\n\n**Fin selon Claude Code :** échec · 1 tour"
        );
    }

    #[test]
    fn tool_input_summaries() {
        let grep = json!({"pattern": "fn redact", "path": "src/atlas"});
        assert_eq!(summarize_input("Grep", &grep), "fn redact dans src/atlas");
        assert_eq!(summarize_input("TodoWrite", &json!({"todos": [{}, {}, {}]})), "3 tâches");
        assert_eq!(summarize_input("WebFetch", &json!({"url": "https://docs.rs", "prompt": "x"})), "https://docs.rs");
        assert_eq!(summarize_input("mcp__x__y", &json!({"n": 1})), r#"{"n":1}"#);
        let heredoc = format!("cat > f <<'EOF'\n{}\nEOF", "x".repeat(300));
        let s = summarize_input("Bash", &json!({"command": heredoc}));
        assert!(s.starts_with("cat > f <<'EOF' xxx") && s.ends_with("… (320 caractères)"), "{s}");
        assert_eq!(summarize_input("Bash", &json!({})), "");
    }

    #[test]
    fn clean_output_becomes_a_status_line() {
        assert_eq!(compact_tool_output("a\nb\nc\n", false, &opts()), "✓ terminé sans avertissement (3 lignes)");
        assert_eq!(compact_tool_output("", false, &opts()), "✓ terminé sans avertissement (sortie vide)");
        assert_eq!(
            compact_tool_output("test result: ok. 5 passed; 0 failed\nno warnings\n", false, &opts()),
            "✓ terminé sans avertissement (2 lignes)"
        );
        for noisy in
            ["warning: unused variable", "WARN deprecated API", "npm ERR! code 1", "DeprecationWarning", "1 failed"]
        {
            let out = compact_tool_output(&format!("ok\n{noisy}\n"), false, &opts());
            assert_eq!(out, format!("⚠ terminé, avertissements possibles (2 lignes)\nok\n{noisy}"));
        }
        assert_eq!(compact_tool_output("Exit code 1\nboom", true, &opts()), "✗ échec (2 lignes)\nExit code 1\nboom");
        assert_eq!(compact_tool_output("", true, &opts()), "✗ échec (sortie vide)");
    }

    #[test]
    fn long_outputs_keep_head_and_tail() {
        let output: String = (1..=100).map(|i| format!("error line {i}\n")).collect();
        let out = compact_tool_output(&output, true, &opts());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1 + 5 + 1 + 10);
        assert_eq!(lines[0], "✗ échec (100 lignes)");
        assert_eq!(lines[5], "error line 5");
        assert_eq!(lines[6], "[… 85 lignes omises …]");
        assert_eq!(lines[7], "error line 91");
        assert_eq!(lines[16], "error line 100");
        // Exactly `max_tool_lines` is not cut.
        let twenty: String = (1..=20).map(|i| format!("error {i}\n")).collect();
        assert_eq!(compact_tool_output(&twenty, true, &opts()).lines().count(), 21);
        // A huge single line is cut too.
        let blob = format!("error {}", "A".repeat(10_000));
        assert!(compact_tool_output(&blob, true, &opts()).ends_with("… (10006 caractères)"));
    }

    #[test]
    fn terminal_noise_is_removed() {
        let opts = opts();
        // Colours and OSC titles.
        assert_eq!(
            compact_tool_output("\u{1b}[1;31merror\u{1b}[0m: \u{1b}]0;title\u{7}bad", true, &opts),
            "✗ échec (1 ligne)\nerror: bad"
        );
        // `\r` redraws: only the final state.
        assert_eq!(
            compact_tool_output(
                "Downloading 10%\rDownloading 55%\rDownloading 100%\ndone, error count 1\n",
                false,
                &opts
            ),
            "⚠ terminé, avertissements possibles (2 lignes)\nDownloading 100%\ndone, error count 1"
        );
        // Progress printed on successive lines (no TTY): the run collapses to its last line.
        assert_eq!(
            compact_tool_output(
                "fetch [==>      ] 20%\nfetch [=====>   ] 60%\nfetch [========] 100%\nwarning: slow\n",
                false,
                &opts
            ),
            "⚠ terminé, avertissements possibles (2 lignes)\nfetch [========] 100%\nwarning: slow"
        );
        // Cursor-up redraws replace the lines they move over; spinner glyphs collapse.
        assert_eq!(
            compact_tool_output(
                "⠋ installing\n⠙ installing\n\u{1b}[1A\u{1b}[2K✔ installed\nwarn: peer dep\n",
                false,
                &opts
            ),
            "⚠ terminé, avertissements possibles (2 lignes)\n✔ installed\nwarn: peer dep"
        );
        // CRLF line ends are not redraws.
        assert_eq!(
            compact_tool_output("error one\r\nerror two\r\n", true, &opts),
            "✗ échec (2 lignes)\nerror one\nerror two"
        );
    }

    #[test]
    fn fences_outgrow_backticks_in_the_output() {
        let events = vec![
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "README.md"}}]}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "```rust\nfn error() {}\n```"}]}),
        ];
        let out = compact(&events, &opts());
        assert!(
            out.contains(
                "⚠ Read : terminé, avertissements possibles (3 lignes)\n````\n```rust\nfn error() {}\n```\n````"
            ),
            "{out}"
        );
    }

    #[test]
    fn unknown_tool_results_and_empty_runs() {
        assert_eq!(compact(&[], &opts()), "");
        let orphan = json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "fine"}]}});
        assert_eq!(compact(&[orphan], &opts()), "✓ outil : terminé sans avertissement (1 ligne)");
    }

    proptest! {
        #[test]
        fn a_compacted_output_is_bounded(
            lines in prop::collection::vec("[ -~\u{1b}\r⠋█%]{0,60}", 0..200),
            is_error in any::<bool>(),
        ) {
            let opts = CompactOptions::default();
            let output = lines.join("\n");
            let out = compact_tool_output(&output, is_error, &opts);
            prop_assert!(out.lines().count() <= 1 + opts.max_tool_lines);
            let escape = '\u{1b}';
            prop_assert!(!out.contains(escape) && !out.contains('\r'), "noise left in {:?}", out);
            prop_assert_eq!(out.starts_with('✗'), is_error);
        }
    }
}
