//! Atlas against the real Claude Code CLI (issue 28, system tier): the pinned
//! `@anthropic-ai/claude-code` that `scripts/setup` installs (its native binary, run through
//! Atlas' real PTY path in a real git worktree), its model a scripted Anthropic Messages
//! endpoint (`arthur_agents::llm::scripted`) whose script issues real tool calls — the CLI
//! runs the Bash and Write calls itself, in the worktree. Each scenario goes through the
//! launcher end to end and checks the recap the founder receives (printed, for the closing
//! note of the issue: `cargo test … real_claude -- --nocapture`).
//!
//! The child's HOME is a temp dir (the wrapper below sets it, as Arthur's service user's HOME
//! would be): what the CLI persists there is checked. Tests run as root in CI, where the CLI
//! refuses bypassPermissions unless `IS_SANDBOX=1`: the launcher's `sandboxed` setting
//! (`ATLAS_SANDBOXED=1`) gives it, and one test checks what happens without it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use arthur_agents::llm::scripted::{CutKind, RecordedRequest, Reply, ScriptedLlm};
use arthur_agents::time::Clock;
use arthur_atlas::launch::{Launcher, LauncherConfig};
use arthur_atlas::pty::{self, ClaudeArgs, LaunchSpec};
use arthur_atlas::store::{AtlasStore, EmailRow};
use arthur_atlas::{audit, EmailState};
use serde_json::{json, Value};

use crate::support::git::git;
use crate::support::launch::LaunchApp;
use crate::support::*;

/// The pinned version (scripts/setup).
const PINNED: &str = "2.1.332";

/// The real claude: `ATLAS_TEST_CLAUDE_BIN`, else where scripts/setup installs it.
fn real_claude_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("ATLAS_TEST_CLAUDE_BIN") {
        return PathBuf::from(p);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    let platform = if cfg!(target_arch = "aarch64") { "linux-arm64" } else { "linux-x64" };
    let bin = cache.join(format!("arthur/claude-code/node_modules/@anthropic-ai/claude-code-{platform}/claude"));
    assert!(bin.is_file(), "the real Claude Code CLI is not installed at {}: run scripts/setup", bin.display());
    bin
}

/// One scenario's world: the launcher fixture, the scripted model endpoint the CLI talks to,
/// the child's HOME, and a `claude` wrapper pointing the real CLI at them.
struct Real {
    t: LaunchApp,
    llm: ScriptedLlm,
    home: tempfile::TempDir,
    claude: PathBuf,
}

impl Real {
    async fn new() -> Self {
        Self::with_env("").await
    }

    /// `extra`: more `NAME=value` words for the wrapper's `export` (a knob of the CLI).
    async fn with_env(extra: &str) -> Self {
        let t = LaunchApp::new().await;
        // Claude Code's Bash commits as whoever the repository says (its HOME has no gitconfig).
        git(t.repo.path(), &["config", "user.name", "Atlas Test"]);
        git(t.repo.path(), &["config", "user.email", "atlas@localhost"]);
        git(t.repo.path(), &["config", "commit.gpgsign", "false"]);
        let llm = ScriptedLlm::start().await;
        let home = tempfile::tempdir().unwrap();
        let claude = t.bin.path().join("claude-real");
        // HOME and the endpoint are the wrapper's; everything else is what Atlas gives its
        // child (recorded in child.env, then the real binary).
        std::fs::write(
            &claude,
            format!(
                "#!/bin/sh\nenv > '{env}'\nexport HOME='{home}' ANTHROPIC_BASE_URL='{url}' ANTHROPIC_API_KEY=test-key {extra}\n\
                 exec '{bin}' \"$@\"\n",
                env = t.bin.path().join("child.env").display(),
                home = home.path().display(),
                url = llm.base_url(),
                extra = extra,
                bin = real_claude_bin().display(),
            ),
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&claude).status().unwrap();
        Real { t, llm, home, claude }
    }

    fn launcher(&self, tweak: impl FnOnce(&mut LauncherConfig)) -> Launcher {
        self.t.launcher(self.claude.clone(), |c| {
            // Room for a loaded 2-core machine; the scenarios that want a kill set their own.
            c.idle_timeout = Duration::from_secs(60);
            c.hard_timeout = Duration::from_secs(240);
            c.budget = Duration::from_secs(240);
            c.grace_after_result = Duration::from_secs(5);
            tweak(c)
        })
    }

    async fn classified(&self, intent: &str, complexity: &str, subject: &str) -> EmailRow {
        self.t.classified(intent, complexity, FOUNDER, subject).await
    }

    /// Where the run of message `id` works (its first launch, in a fresh data dir).
    fn worktree(&self, id: i64) -> PathBuf {
        self.t.data.path().join("worktrees").join(format!("email-{id}"))
    }

    fn contract(&self, id: i64) -> PathBuf {
        self.t.data.path().join("contracts").join(format!("email-{id}.json"))
    }

    /// The last recap (subject, text), printed for the closing note.
    fn recap(&self, count: usize, scenario: &str) -> (String, String) {
        let mails = self.t.smtp.wait_for_messages(count, Duration::from_secs(20));
        let mail = mails.last().unwrap();
        let subject = mail.parsed().subject().unwrap_or("").to_string();
        let text = mail.text().replace("\r\n", "\n");
        println!("===== recap, scenario « {scenario} » =====\nSubject: {subject}\n\n{text}\n===== end =====");
        (subject, text)
    }

    /// The requests Claude Code made to the model endpoint.
    fn requests(&self) -> Vec<RecordedRequest> {
        self.llm.requests()
    }

    fn child_env(&self) -> String {
        std::fs::read_to_string(self.t.bin.path().join("child.env")).unwrap_or_default()
    }
}

fn bash(text: &str, command: &str) -> Reply {
    Reply::tool_calls(text, &[("Bash", &json!({"command": command, "description": "atlas test"}).to_string())])
}

fn write(path: &Path, content: &str) -> Reply {
    Reply::tool_calls(
        "J'écris le fichier.",
        &[("Write", &json!({"file_path": path.display().to_string(), "content": content}).to_string())],
    )
}

/// A shell command writing the contract: `commits` is shell text (e.g. `$(git rev-parse HEAD)`).
fn contract_cmd(contract: &Path, commits: &str, summary: &str, extra: &str) -> String {
    format!(
        "printf '%s' \"{{\\\"ok\\\": true, \\\"commits\\\": [\\\"{commits}\\\"], \\\"summary_md\\\": \\\"{summary}\\\"{extra}}}\" > '{}'",
        contract.display()
    )
}

/// The tool results Claude Code sent back in a request.
fn tool_results(r: &RecordedRequest) -> Vec<Value> {
    r.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

/// The installed CLI is the pinned one, and it only ever talks to the model endpoint.
#[tokio::test(flavor = "multi_thread")]
async fn the_pinned_cli_is_installed() {
    let out = std::process::Command::new(real_claude_bin()).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("{PINNED} (Claude Code)"));
}

#[tokio::test(flavor = "multi_thread")]
async fn success_commits_in_the_worktree_merges_and_says_so() {
    let r = Real::new().await;
    let row = r.classified("run", "leger", "Ajouter HELLO.md").await;
    let (wt, contract) = (r.worktree(row.id), r.contract(row.id));
    r.llm.push(write(&wt.join("HELLO.md"), "Bonjour\n"));
    r.llm.push(bash(
        "Je commite et j'écris le contrat.",
        &format!(
            "git add HELLO.md && git commit -q -m 'docs: HELLO.md' && {}",
            contract_cmd(&contract, "$(git rev-parse HEAD)", "HELLO.md ajouté et commité.", "")
        ),
    ));
    r.llm.push(Reply::text("Fait : HELLO.md ajouté et commité."));
    let report = r.launcher(|_| {}).cycle().await.unwrap();
    assert_eq!(report.actioned, 1, "{report:?} {:?}", r.t.app.events(row.id).await);
    assert_eq!(r.t.state(row.id).await.status, EmailState::Actioned);
    assert_eq!(std::fs::read_to_string(r.t.repo.path().join("HELLO.md")).unwrap(), "Bonjour\n", "on the trunk");
    let l = &r.t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!(PathBuf::from(&l.workspace), wt);
    assert_eq!((l.end.status.as_str(), l.session_mode.as_deref()), ("ok", Some("saved")));
    assert!(l.end.cost_usd.is_some() && l.end.num_turns == Some(3), "{:?}", l.end);
    // Three model turns, nothing else: no warm-up, no telemetry (the quiet environment).
    let requests = r.requests();
    assert_eq!(requests.len(), 3, "{:?}", requests.iter().map(|q| &q.path).collect::<Vec<_>>());
    assert!(requests.iter().all(|q| q.path == "/v1/messages" && q.query.as_deref() == Some("beta=true")));
    assert_eq!(requests[0].header("x-api-key"), Some("test-key"));
    let results = tool_results(&requests[2]);
    assert!(results.iter().all(|b| b["is_error"] != true), "{results:?}");
    let env = r.child_env();
    assert!(env.contains("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1") && env.contains("IS_SANDBOX=1"), "{env}");
    assert!(!env.contains("ATLAS_SMTP_URL") && !env.contains("MISTRAL_API_KEY"), "{env}");
    // The session is kept under the child's HOME, where --resume finds it.
    let session = l.end.session_id.clone().unwrap();
    let slug: String =
        wt.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let transcript = r.home.path().join(".claude/projects").join(slug).join(format!("{session}.jsonl"));
    assert!(transcript.is_file(), "{} missing", transcript.display());

    let (subject, text) = r.recap(1, "succès");
    assert!(subject.starts_with("[Atlas] terminé"), "{subject}");
    assert!(text.contains("Résumé de l'agent :\n> HELLO.md ajouté et commité."), "{text}");
    assert!(text.contains("docs: HELLO.md") && !text.contains("Vérification"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_refused_by_a_hook_while_the_model_claims_success_is_no_change() {
    let r = Real::new().await;
    let hook = r.t.repo.path().join(".git/hooks/pre-commit");
    std::fs::write(&hook, "#!/bin/sh\necho 'commit refusé par le hook du dépôt' >&2\nexit 1\n").unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&hook).status().unwrap();
    let row = r.classified("run", "leger", "Ajouter LIAR.md").await;
    let contract = r.contract(row.id);
    r.llm.push(bash("J'ajoute LIAR.md.", "echo menteur > LIAR.md && git add LIAR.md && git commit -q -m 'docs: LIAR'"));
    r.llm.push(bash(
        "Je note le commit dans le contrat.",
        &contract_cmd(&contract, "$(git rev-parse --short HEAD)", "Fait : LIAR.md ajouté et commité.", ""),
    ));
    r.llm.push(Reply::text("Fait : LIAR.md ajouté et commité."));
    let report = r.launcher(|_| {}).cycle().await.unwrap();
    assert_eq!(report.failed, 1, "{report:?}");
    assert_eq!(r.t.state(row.id).await.status, EmailState::Failed, "never actioned");
    // The hook's refusal reached the model as an error…
    let refused = tool_results(&r.requests()[1]);
    assert!(refused.iter().any(|b| b["is_error"] == true && b.to_string().contains("commit refusé")), "{refused:?}");
    // …and the recap says what the facts say.
    let (subject, text) = r.recap(1, "commit refusé par un hook, succès prétendu");
    assert!(subject.starts_with("[Atlas] aucun changement"), "{subject}");
    assert!(!text.contains("analyse livrée") && !text.contains("Résumé de l'agent :"), "{text}");
    assert!(text.contains("antérieur à ce run"), "the cited HEAD is the base commit: {text}");
    assert!(
        text.contains("(non confirmé : aucun commit ne le montre) :\n> Fait : LIAR.md ajouté et commité."),
        "{text}"
    );
    assert!(text.contains("Commits : aucun."), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_contract_citing_a_commit_that_does_not_exist_is_stated() {
    let r = Real::new().await;
    let row = r.classified("run", "leger", "Ajouter HELLO.md").await;
    let (wt, contract) = (r.worktree(row.id), r.contract(row.id));
    r.llm.push(write(&wt.join("HELLO.md"), "Bonjour\n"));
    r.llm.push(bash(
        "Je commite.",
        &format!(
            "git add HELLO.md && git commit -q -m 'docs: HELLO.md' && {}",
            contract_cmd(
                &contract,
                "deadbeefcafe0123456789abcdef012345678901",
                "HELLO.md ajouté (commit deadbeefcafe).",
                ""
            )
        ),
    ));
    r.llm.push(Reply::text("Fait."));
    assert_eq!(r.launcher(|_| {}).cycle().await.unwrap().actioned, 1);
    let (subject, text) = r.recap(1, "le contrat cite un commit inexistant");
    assert!(subject.starts_with("[Atlas] terminé"), "the real commit is on the trunk: {subject}");
    assert_eq!(
        text.matches("Vérification : l'agent cite le commit deadbee…, introuvable sur la branche.").count(),
        1,
        "the contract's full sha and the summary's short one are one citation: {text}"
    );
    assert!(!text.contains("Résumé de l'agent :"), "its summary is its own claim: {text}");
    assert!(r.t.app.events(row.id).await.contains(&audit::CLAIMS_UNBACKED.to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_contract_never_written_is_said_and_the_transcript_stands_in() {
    let r = Real::new().await;
    let row = r.classified("run", "leger", "Ajouter HELLO.md").await;
    r.llm.push(bash("Je commite.", "echo Bonjour > HELLO.md && git add HELLO.md && git commit -q -m 'docs: HELLO.md'"));
    r.llm.push(Reply::text("HELLO.md est commité."));
    assert_eq!(r.launcher(|_| {}).cycle().await.unwrap().actioned, 1);
    let read = r.t.app.store.audits(row.id).await.unwrap().into_iter().find(|a| a.event == audit::CONTRACT_READ);
    assert_eq!(read.unwrap().detail["source"], "NotWritten");
    let (subject, text) = r.recap(1, "contrat jamais écrit");
    assert!(subject.starts_with("[Atlas] terminé"), "{subject}");
    assert!(text.contains("Contrat : l'agent ne l'a pas écrit ; le résumé ci-dessous est tiré de son transcript."));
    assert!(text.contains("HELLO.md est commité."), "the transcript: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_api_overloaded_throughout_parks_the_message_then_escalates_after_the_cap() {
    // Claude Code retries a 529 ten times over ≈3 minutes before it gives up; one retry is
    // enough here (the knob a deployment can set through ATLAS_CHILD_ENV too).
    let r = Real::with_env("CLAUDE_CODE_MAX_RETRIES=1").await;
    let row = r.classified("run", "leger", "Ajouter HELLO.md").await;
    r.llm.set_fallback(Some(Reply::api_error(529, "overloaded_error", "Overloaded")));
    let launcher = r.launcher(|c| c.max_api_retries = 1);
    let started = std::time::Instant::now();
    let report = launcher.cycle().await.unwrap();
    assert_eq!(report.parked, 1, "{report:?}");
    let cli_requests = r.requests().len();
    assert_eq!(cli_requests, 2, "one request and one retry ({:?})", started.elapsed());
    let state = r.t.state(row.id).await;
    let at = r.t.app.clock.now() + chrono::Duration::minutes(5);
    assert_eq!((state.status, state.attempts, state.retry_at), (EmailState::Classified, 1, Some(at)), "parked");
    let l = &r.t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!((l.end.status.as_str(), l.end.exit_code), ("error", Some(1)));
    let (subject, text) = r.recap(1, "API surchargée (première fois)");
    assert!(subject.starts_with("[Atlas] reporté"), "{subject}");
    assert!(text.contains("l'API de Claude était surchargée (529) ; nouvel essai 1 sur 1 vers"), "{text}");
    assert!(text.contains("(dans 5 min)"), "{text}");

    // Not before its time; then again, in the session it saved, and the cap is reached.
    assert_eq!(launcher.cycle().await.unwrap().launched, 0);
    r.t.app.clock.advance(chrono::Duration::minutes(5));
    let report = launcher.cycle().await.unwrap();
    assert_eq!(report.escalated, 1, "{report:?}");
    assert_eq!(r.t.state(row.id).await.status, EmailState::Escalated);
    let launches = r.t.app.store.launches(row.id).await.unwrap();
    assert_eq!(launches[1].session_mode.as_deref(), Some("resumed"), "{launches:?}");
    let session = launches[0].end.session_id.clone().unwrap();
    assert_eq!(r.requests()[cli_requests].header("x-claude-code-session-id"), Some(session.as_str()));
    let (subject, text) = r.recap(2, "API surchargée, plafond atteint");
    assert!(subject.starts_with("[Atlas] escalade"), "{subject}");
    assert!(text.contains("surchargée (529) à chacune des 2 tentatives"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_stream_is_killed_by_atlas_idle_watchdog_and_retried() {
    let r = Real::new().await;
    let row = r.classified("run", "leger", "Ajouter HELLO.md").await;
    // 200, message_start, then nothing with the connection open (the CLI itself waits 300 s).
    r.llm.set_fallback(Some(Reply::cut(1, CutKind::Hang, Reply::text("jamais"))));
    let report = r.launcher(|c| c.idle_timeout = Duration::from_secs(4)).cycle().await.unwrap();
    assert_eq!(report.retry_later, 1, "{report:?}");
    let l = &r.t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!((l.end.status.as_str(), l.end.killed.as_deref()), ("idle", Some("idle")));
    assert!(l.end.events >= 2, "status and message_start came before the silence: {}", l.end.events);
    assert_eq!(r.t.state(row.id).await.status, EmailState::Classified);
    let (subject, text) = r.recap(1, "flux bloqué (chien de garde d'inactivité)");
    assert!(subject.starts_with("[Atlas] délai dépassé"), "{subject}");
    assert!(text.contains("nouvel essai 1 sur 2 dans une heure"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_turn_limit_is_reached_and_said() {
    let r = Real::new().await;
    let row = r.classified("run", "leger", "Boucle").await;
    r.llm.set_fallback(Some(bash("Encore une vérification.", "true")));
    let report = r.launcher(|_| {}).cycle().await.unwrap();
    assert_eq!(report.failed, 1, "{report:?}");
    let l = &r.t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!((l.max_turns, l.end.num_turns), (40, Some(41)), "the CLI counts the turn it refused");
    assert_eq!(r.requests().len(), 40);
    let failure =
        r.t.app.store.audits(row.id).await.unwrap().into_iter().find(|a| a.event == audit::ORCHESTRATION_FAILED);
    assert_eq!(failure.unwrap().detail["reason"], "max_turns");
    let (subject, text) = r.recap(1, "nombre maximal de tours atteint");
    assert!(subject.starts_with("[Atlas] échec"), "{subject}");
    assert!(text.contains("nombre maximal de tours (--max-turns)"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn qa_fails_once_then_the_same_session_is_resumed() {
    let r = Real::new().await;
    let row = r.classified("run", "plan", "Refonte du catalogue").await;
    let (wt, contract) = (r.worktree(row.id), r.contract(row.id));
    let routes = r#", \"tenant\": \"shop\", \"routes_to_qa\": [\"/catalogue\"]"#;
    r.llm.push(bash(
        "J'ajoute les filtres.",
        &format!(
            "echo filtres > catalogue.txt && git add catalogue.txt && git commit -q -m 'feat: filtres' && {}",
            contract_cmd(&contract, "$(git rev-parse HEAD)", "Filtres ajoutés.", routes)
        ),
    ));
    r.llm.push(Reply::text("Filtres ajoutés au catalogue."));
    r.llm.push(bash(
        "Je corrige l'erreur 500.",
        &format!(
            "echo corrige >> catalogue.txt && git commit -q -am 'fix: erreur 500 du catalogue' && {}",
            contract_cmd(&contract, "$(git rev-parse HEAD)", "Erreur 500 corrigée.", routes)
        ),
    ));
    r.llm.push(Reply::text("Erreur 500 corrigée."));
    let qa_count = r.t.bin.path().join("qa-count");
    let report = r
        .launcher(|c| {
            c.deploy_cmd = Some("true".into());
            c.qa_cmd = Some(format!(
                "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; \
                 if [ $n -ge 2 ]; then exit 0; else echo 'HTTP 500 sur /catalogue'; exit 1; fi",
                c = qa_count.display()
            ));
        })
        .cycle()
        .await
        .unwrap();
    assert_eq!(report.actioned, 1, "{report:?} {:?}", r.t.app.events(row.id).await);
    let launches = r.t.app.store.launches(row.id).await.unwrap();
    let modes: Vec<_> = launches.iter().map(|l| l.session_mode.clone().unwrap_or_default()).collect();
    assert_eq!(modes, ["saved", "resumed"]);
    let session = launches[0].end.session_id.clone().unwrap();
    assert_eq!(launches[1].end.session_id.as_deref(), Some(session.as_str()), "the same session");
    // What the CLI keeps: one transcript under the child's HOME, in the worktree's project.
    let projects = r.home.path().join(".claude/projects");
    let found: Vec<PathBuf> =
        walk(&projects).into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].file_name().unwrap().to_string_lossy(), format!("{session}.jsonl"));
    assert!(found[0].parent().unwrap().ends_with(
        wt.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect::<String>()
    ));
    // The resumed pass's first request carries the first pass's conversation.
    let requests = r.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[2].header("x-claude-code-session-id"), Some(session.as_str()));
    assert!(requests[2].body["messages"].to_string().contains("Filtres ajoutés au catalogue."), "not resumed");
    assert!(requests[2].body["messages"].to_string().contains("HTTP 500 sur /catalogue"), "told the QA errors");
    // Cost: each pass's own share, not the session's running total twice.
    let costs: Vec<f64> = launches.iter().map(|l| l.end.cost_usd.unwrap()).collect();
    let (subject, text) = r.recap(1, "QA en échec une fois, session reprise");
    assert!(subject.starts_with("[Atlas] terminé"), "{subject}");
    assert!(text.contains("QA : passée, itération 2"), "{text}");
    assert!(text.contains(&format!("Coût : {}", arthur_atlas::recap::format_cost(costs[0] + costs[1]))), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_denied_by_the_permission_mode_is_no_success() {
    let r = Real::new().await;
    let row = r.classified("run", "leger", "Ajouter HELLO.md").await;
    r.llm.push(bash("J'écris HELLO.md.", "echo hi > HELLO.md"));
    r.llm.push(Reply::text("Fait : HELLO.md écrit."));
    // No bypass: as root too, the CLI runs in the default mode and denies the redirection.
    let report = r
        .launcher(|c| {
            c.permission_mode = "default".into();
            c.sandboxed = false;
        })
        .cycle()
        .await
        .unwrap();
    assert_eq!(report.failed, 1, "{report:?}");
    let l = &r.t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!(l.end.status, "ok", "the CLI itself called it a success");
    let denied = tool_results(&r.requests()[1]);
    assert!(denied.iter().any(|b| b["is_error"] == true), "{denied:?}");
    assert!(!r.t.repo.path().join("HELLO.md").exists());
    let (subject, text) = r.recap(1, "outil refusé en mode default");
    assert!(subject.starts_with("[Atlas] échec"), "{subject}");
    assert!(
        text.contains("Appels d'outil refusés par le mode de permission (1) :\n- Bash : echo hi > HELLO.md"),
        "{text}"
    );
    assert!(text.contains("Ce que l'agent dit avoir fait (non confirmé, le run n'a pas abouti) :"), "{text}");
    assert!(text.contains("Contrat : l'agent ne l'a pas écrit") && text.contains("> Fait : HELLO.md écrit."), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn as_root_bypass_is_refused_unless_the_machine_is_declared_a_sandbox() {
    let r = Real::new().await;
    let row = r.classified("run", "leger", "Ajouter HELLO.md").await;
    let root = arthur_atlas::child_env::running_as_root();
    let report = r.launcher(|c| c.sandboxed = false).cycle().await.unwrap();
    if !root {
        eprintln!("not root: the CLI accepts bypassPermissions here; nothing to refuse");
        return;
    }
    // Atlas does not even start it: the message stays in the queue, the founder is told why.
    assert_eq!((report.blocked_as_root, report.launched), (1, 0), "{report:?}");
    assert_eq!(r.t.state(row.id).await.status, EmailState::Classified, "never failed");
    assert!(r.requests().is_empty());
    let (subject, text) = r.recap(1, "root sans ATLAS_SANDBOXED");
    assert!(subject.contains("Arthur tourne en root"), "{subject}");
    assert!(text.contains("ATLAS_SANDBOXED=1") && text.contains("User=arthur"), "{text}");

    // And the CLI itself, started as root without IS_SANDBOX: the refusal Atlas recognises.
    let dir = tempfile::tempdir().unwrap();
    let args = pty::claude_args(&ClaudeArgs {
        prompt: "Ajoute HELLO.md".into(),
        add_dir: dir.path().to_path_buf(),
        permission_mode: "bypassPermissions".into(),
        max_turns: 0,
        system_prompt: "Sois bref.".into(),
        resume: None,
        persist_session: true,
        strict_mcp: true,
        allowed_tools: None,
        model: None,
    });
    let mut spec = LaunchSpec::new(&r.claude, args, dir.path());
    spec.env.push(("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()));
    let out = pty::run(spec, |_| {}).await.unwrap();
    assert!(out.refused_as_root(), "{out:?}");
    assert_eq!((out.exit_code, out.events), (Some(1), 0));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
