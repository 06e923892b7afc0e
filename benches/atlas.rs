//! `cargo bench --bench atlas`: the intake's throughput over IMAP on loopback (a real Dovecot;
//! fetch + parse + DKIM + store + state row + \Seen, messages per second) on a few thousand
//! realistic messages, then the scan and the classification, whose overhead outside the
//! model call is measured by timing the model separately (a scripted server answers at once).
//! `ATLAS_BENCH_MESSAGES` sets the count (default 2000). Then the journal, and the launcher's
//! overhead per run outside the child: with a `claude` that answers at once, and with the real
//! Claude Code CLI (scripts/setup, or `ATLAS_BENCH_CLAUDE`) against a scripted endpoint.

#[path = "../atlas/tests/support/clamav.rs"]
mod clamav;
#[path = "../atlas/tests/support/dovecot.rs"]
mod dovecot;
#[path = "../tests/postgres/harness.rs"]
mod harness;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arthur_agents::llm::client::{ClientOptions, ConfiguredModels, LlmClient, ProviderEndpoint};
use arthur_agents::llm::scripted::{Reply, ScriptedLlm};
use arthur_agents::llm::{ChatModel, ChatRequest, ChatResponse, LlmError, ProviderKind, StreamEvent};
use arthur_agents::memory::SqliteStore;
use arthur_agents::secret::Secret;
use arthur_agents::time::SystemClock;
use arthur_atlas::client::Founder;
use arthur_atlas::dkim::DkimVerifier;
use arthur_atlas::imap::ImapAccount;
use arthur_atlas::mail::EmailAddress;
use arthur_atlas::ocr::Ocr;
use arthur_atlas::pipeline::{Atlas, AtlasDeps};
use arthur_atlas::scan::Scanner;
use arthur_atlas::store::SqliteAtlasStore;

/// Times every model call, so the rest of the classification can be measured alone.
struct Timed {
    inner: LlmClient,
    nanos: AtomicU64,
}

#[async_trait::async_trait]
impl ChatModel for Timed {
    async fn chat(
        &self,
        request: &ChatRequest,
        stream: Option<&(dyn Fn(StreamEvent) + Send + Sync)>,
    ) -> Result<ChatResponse, LlmError> {
        let t = Instant::now();
        let r = self.inner.chat(request, stream).await;
        self.nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        r
    }
}

/// A realistic mix: short notes, forwards with a quoted thread, long newsletters, and one
/// message in ten with a small attachment.
fn message(i: usize) -> Vec<u8> {
    let from = ["jean@client.fr", "boss@maboite.fr", "news@lettre.example", "ops@boutique.fr"][i % 4];
    let body = match i % 4 {
        0 => "Bonjour,\nle bouton « Commander » ne répond plus depuis ce matin.\nMerci de regarder.\nJean".to_string(),
        1 => format!(
            "Tu peux t'en occuper ?\n\n---------- Forwarded message ---------\nDe : Marie <marie@boutique.fr>\nDate : lundi\nObjet : refonte\n\n{}",
            "Nous voudrions refondre la page catalogue, avec filtres et tri.\n".repeat(20)
        ),
        2 => "Les nouveautés du mois : promotions, articles, conseils. ".repeat(200),
        _ => "Le site renvoie une erreur 500 sur /paiement.\n> ancien message cité\n> encore\n".repeat(5),
    };
    let mut m = format!(
        "From: {from}\r\nTo: atlas@maboite.fr\r\nSubject: Message {i}\r\nMessage-ID: <bench{i}@bench.example>\r\nDate: Mon, 30 Nov 2026 10:00:00 +0100\r\nMIME-Version: 1.0\r\n"
    );
    if i % 10 == 9 {
        m.push_str("Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n");
        m.push_str(&body.replace('\n', "\r\n"));
        m.push_str("\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"devis.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n");
        m.push_str(
            &"JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSL0ZpbHRlci9GbGF0ZURlY29kZT4+\r\n".repeat(40),
        );
        m.push_str("--b--\r\n");
    } else {
        m.push_str("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n");
        m.push_str(&body.replace('\n', "\r\n"));
        m.push_str("\r\n");
    }
    m.into_bytes()
}

fn main() {
    let part = std::env::var("ATLAS_BENCH_PART").unwrap_or_default();
    if part != "launch" {
        intake();
    }
    if part != "intake" {
        journal_and_launcher();
    }
}

#[tokio::main]
async fn intake() {
    let n: usize = std::env::var("ATLAS_BENCH_MESSAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let imap = dovecot::Dovecot::start().await;
    let t = Instant::now();
    let mut bytes = 0;
    for i in 0..n {
        let raw = message(i);
        bytes += raw.len();
        imap.append(&raw).await;
    }
    println!("appended {n} messages ({:.1} MiB) in {:.1} s", bytes as f64 / 1048576.0, t.elapsed().as_secs_f64());

    let dir = tempfile::tempdir().unwrap();
    let memory = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
    let store = Arc::new(SqliteAtlasStore::open(memory.pool().clone()).await.unwrap());
    let llm = ScriptedLlm::start().await;
    llm.set_fallback(Some(Reply::text(
        r#"{"intent": "question", "complexity": "leger", "confidence": 0.9, "justification": "bench"}"#,
    )));
    let timed = Arc::new(Timed {
        inner: LlmClient::new(
            vec![ProviderEndpoint::new(ProviderKind::Mistral, llm.base_url(), Secret::new("k"))],
            ConfiguredModels { router: Some("mistral-small-latest".into()), chat: None },
            ClientOptions::default(),
        )
        .unwrap(),
        nanos: AtomicU64::new(0),
    });
    let clamd = clamav::Clamd::start();
    let atlas = Atlas::new(AtlasDeps {
        store,
        scanner: Scanner::Clamd { addr: clamd.addr() },
        ocr: Ocr::default(),
        dkim: DkimVerifier::offline(HashMap::new()).unwrap(),
        llm: Some(timed.clone()),
        founder: Some(Founder(EmailAddress::parse("boss@maboite.fr").unwrap())),
        mailbox: Some(EmailAddress::parse("atlas@maboite.fr").unwrap()),
        trust_unsigned_founder: false,
        notifier: None,
        clock: Arc::new(SystemClock),
    });
    let account = ImapAccount::parse(&imap.url()).unwrap();

    let t = Instant::now();
    let report = atlas.intake_once(&account).await.unwrap();
    let intake = t.elapsed();
    assert_eq!(report.inserted, n);
    println!(
        "intake over IMAP: {n} messages in {:.2} s = {:.0} messages/s ({:.2} ms each: fetch, parse, DKIM, store, state row, \\Seen)",
        intake.as_secs_f64(),
        n as f64 / intake.as_secs_f64(),
        intake.as_secs_f64() * 1000.0 / n as f64
    );
    let t = Instant::now();
    let again = atlas.intake_once(&account).await.unwrap();
    println!("re-poll with nothing new: {:.1} ms ({} unseen)", t.elapsed().as_secs_f64() * 1000.0, again.unseen);

    let t = Instant::now();
    let mut scanned = 0;
    while scanned < n {
        let (clean, blocked) = atlas.scan_pending().await.unwrap();
        if clean + blocked == 0 {
            break;
        }
        scanned += clean + blocked;
    }
    let scan = t.elapsed();
    println!(
        "scan (clamd INSTREAM, every part): {scanned} in {:.1} s = {:.1} ms per message",
        scan.as_secs_f64(),
        scan.as_secs_f64() * 1000.0 / scanned.max(1) as f64
    );

    let t = Instant::now();
    let mut classified = 0;
    loop {
        let (ok, failed) = atlas.classify_pending().await.unwrap();
        if ok + failed == 0 {
            break;
        }
        classified += ok;
    }
    let total = t.elapsed();
    let model = Duration::from_nanos(timed.nanos.load(Ordering::Relaxed));
    let outside = total.saturating_sub(model);
    println!(
        "classification: {classified} in {:.2} s; model calls (loopback scripted server) {:.2} s; outside the model {:.3} ms per message",
        total.as_secs_f64(),
        model.as_secs_f64(),
        outside.as_secs_f64() * 1000.0 / classified.max(1) as f64
    );
}

/// The journal: realistic stream-json events persisted through the launcher's own writer
/// (redaction + batched transactions), and the launcher's overhead per run outside the
/// child process (a `claude` that answers at once, in a real git worktree).
#[tokio::main]
async fn journal_and_launcher() {
    use arthur_atlas::launch::journal_writer;
    use arthur_atlas::store::AtlasStore;

    let dir = tempfile::tempdir().unwrap();
    let memory = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
    let store: Arc<dyn AtlasStore> = Arc::new(SqliteAtlasStore::open(memory.pool().clone()).await.unwrap());
    let clock: Arc<dyn arthur_agents::time::Clock> = Arc::new(SystemClock);
    // A launch row to hang the events on.
    let raw = message(0);
    let atlas = Atlas::new(AtlasDeps {
        store: store.clone(),
        scanner: Scanner::Clamscan { db: None },
        ocr: Ocr::default(),
        dkim: DkimVerifier::offline(HashMap::new()).unwrap(),
        llm: None,
        founder: None,
        mailbox: None,
        trust_unsigned_founder: false,
        notifier: None,
        clock: clock.clone(),
    });
    let arthur_atlas::store::Inserted::New(email) = atlas.ingest("bench", None, raw).await.unwrap() else { panic!() };
    let launch = store
        .start_launch(
            &arthur_atlas::store::NewLaunch {
                email_id: email,
                iteration: 1,
                prompt_kind: "run",
                max_turns: 40,
                workspace: "/tmp".into(),
                branch: None,
                fork_commit: None,
                attempt: 1,
                session_mode: "not_saved",
            },
            clock.now(),
        )
        .await
        .unwrap();
    let n = 50_000usize;
    let sample = arthur_atlas::redact::bench_sample();
    let events: Vec<serde_json::Value> = (0..n)
        .map(|i| match i % 4 {
            0 => serde_json::json!({"type": "stream_event", "event": {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Je regarde le fichier panier.js "}}}),
            1 => serde_json::json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": "grep -rn panier src/"}}]}}),
            2 if i % 8 == 2 => serde_json::json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": format!("t{i}"),
                "content": format!("{sample}\nDATABASE_URL=postgres://app:s3cr3t{i}@db/prod\nAuthorization: Bearer sk-proj-{i:0>40}")}]}}),
            2 => serde_json::json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": sample.clone()}]}}),
            _ => serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "Le bouton est corrigé, je lance les tests."}]}}),
        })
        .collect();
    let bytes: usize = events.iter().map(|e| e.to_string().len()).sum();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let t = Instant::now();
    let writer = tokio::spawn(journal_writer(store.clone(), clock.clone(), launch, rx));
    for e in events {
        tx.send(e).unwrap();
    }
    drop(tx);
    let (written, redactions) = writer.await.unwrap().unwrap();
    let elapsed = t.elapsed();
    assert_eq!(written as usize, n);
    println!(
        "journal: {n} events ({:.1} MiB) persisted with redaction in {:.2} s = {:.0} events/s ({redactions} redactions; target ≥ 10,000/s)",
        bytes as f64 / 1048576.0,
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64()
    );

    // Launcher overhead: 10 launches of a `claude` that prints init + result and exits, then
    // (when installed) 10 launches of the real Claude Code CLI against a scripted endpoint.
    let fake = dir.path().join("claude-fake");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}'\n\
         echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":1,\"session_id\":\"s\",\"total_cost_usd\":0.01}'\n",
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    launcher_overhead("fake claude", &fake, None, &atlas, &store, &memory, &clock).await;
    match real_claude() {
        Some(real) => {
            let llm = ScriptedLlm::start().await;
            llm.set_fallback(Some(Reply::text("Rien à changer : la page est déjà correcte.")));
            launcher_overhead("real Claude Code", &real, Some(&llm), &atlas, &store, &memory, &clock).await;
        }
        None => println!(
            "launcher with the real Claude Code: skipped (not installed; scripts/setup, or ATLAS_BENCH_CLAUDE)"
        ),
    }
}

/// The real Claude Code CLI: `ATLAS_BENCH_CLAUDE`, else where scripts/setup installs it.
fn real_claude() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("ATLAS_BENCH_CLAUDE") {
        return Some(p.into());
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))?;
    let platform = if cfg!(target_arch = "aarch64") { "linux-arm64" } else { "linux-x64" };
    let bin = cache.join(format!("arthur/claude-code/node_modules/@anthropic-ai/claude-code-{platform}/claude"));
    bin.is_file().then_some(bin)
}

/// Ten launches of `claude` (a question each, in a real git worktree) through the launcher;
/// the child's own wall time is taken by a wrapper around it, so what is left is the
/// launcher's: lease, authority, persona, worktree, prompt, PTY, journal, contract, claims,
/// merge-back, cleanup, recap composition. `llm`: the endpoint of the real CLI.
async fn launcher_overhead(
    label: &str,
    claude: &std::path::Path,
    llm: Option<&ScriptedLlm>,
    atlas: &Atlas,
    store: &Arc<dyn arthur_atlas::store::AtlasStore>,
    memory: &SqliteStore,
    clock: &Arc<dyn arthur_agents::time::Clock>,
) {
    use arthur_atlas::launch::{Launcher, LauncherConfig};
    let dir = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(repo.path())
            .args(args)
            .env("GIT_AUTHOR_NAME", "b")
            .env("GIT_AUTHOR_EMAIL", "b@b")
            .env("GIT_COMMITTER_NAME", "b")
            .env("GIT_COMMITTER_EMAIL", "b@b")
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("README"), "x").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "init"]);
    let times = dir.path().join("child-ns");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let endpoint = match llm {
        Some(llm) => format!(
            "export HOME='{}' ANTHROPIC_BASE_URL='{}' ANTHROPIC_API_KEY=bench\n",
            home.display(),
            llm.base_url()
        ),
        None => String::new(),
    };
    let wrapper = dir.path().join("claude");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n{endpoint}s=$(date +%s%N)\n'{}' \"$@\"\nrc=$?\necho $(( $(date +%s%N) - s )) >> '{}'\nexit $rc\n",
            claude.display(),
            times.display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
    let k = 10;
    let mut ids = Vec::new();
    for i in 0..k {
        // From the founder (message 4n + 1), trusted unsigned below: the launch authority
        // lets them start, and its check is part of the overhead measured.
        let mut raw = message(4 * i + 1);
        raw.extend_from_slice(format!("\r\nunique {label} {i}\r\n").as_bytes());
        let arthur_atlas::store::Inserted::New(id) = atlas.ingest("bench-launch", None, raw).await.unwrap() else {
            panic!()
        };
        store
            .record_scan(
                id,
                &arthur_atlas::store::ScanRecord {
                    verdict: "clean",
                    scanned_parts: 1,
                    attachments: 0,
                    detail: serde_json::json!({}),
                },
                clock.now(),
            )
            .await
            .unwrap();
        let rec = arthur_atlas::store::ClassificationRecord {
            intent: arthur_atlas::Intent::Question,
            complexity: arthur_atlas::Complexity::Leger,
            confidence: 0.9,
            model: "bench".into(),
            justification: String::new(),
            client_id: None,
            client_source: "unknown",
            is_forward: false,
            chantier_id: None,
            audits: vec![],
        };
        store.record_classification(id, &rec, clock.now()).await.unwrap();
        ids.push(id);
    }
    let launcher = Launcher {
        store: store.clone(),
        cfg: LauncherConfig {
            claude_bin: wrapper,
            repo: Some(repo.path().to_path_buf()),
            base_branch: Some("main".into()),
            data_dir: dir.path().to_path_buf(),
            idle_timeout: Duration::from_secs(60),
            hard_timeout: Duration::from_secs(120),
            budget: Duration::from_secs(120),
            grace_after_result: Duration::from_secs(2),
            deploy_cmd: None,
            qa_cmd: None,
            disabled: false,
            permission_mode: "bypassPermissions".into(),
            model: None,
            allowed_tools: None,
            strict_mcp: true,
            smtp: None,
            founder: Some("boss@maboite.fr".into()),
            mailbox: None,
            child_env: Default::default(),
            trust_unsigned_founder: true,
            max_retries: 2,
            use_worktree: true,
            // The bench machine is a sandbox (root in CI).
            sandboxed: true,
            max_api_retries: 5,
        },
        clock: clock.clone(),
        holder: "bench:1".into(),
        personas: Some(Arc::new(memory.clone())),
        shutdown: None,
    };
    let t = Instant::now();
    let mut launched = 0;
    while launched < k {
        let r = launcher.cycle().await.unwrap();
        if r.launched == 0 {
            break;
        }
        launched += r.launched;
    }
    let total = t.elapsed();
    let child_ns: u64 =
        std::fs::read_to_string(&times).unwrap_or_default().lines().filter_map(|l| l.trim().parse::<u64>().ok()).sum();
    let child = Duration::from_nanos(child_ns);
    let mut actioned = 0;
    for id in &ids {
        if store.email(*id).await.unwrap().is_some_and(|r| r.status == arthur_atlas::EmailState::Actioned) {
            actioned += 1;
        }
    }
    println!(
        "launcher ({label}): {launched} runs ({actioned} actioned) in {:.2} s; child processes {:.2} s ({:.0} ms per run); overhead outside the child {:.0} ms per run (lease, persona, worktree, prompt, PTY, journal, contract, claims, merge-back, cleanup, recap)",
        total.as_secs_f64(),
        child.as_secs_f64(),
        child.as_secs_f64() * 1000.0 / launched.max(1) as f64,
        total.saturating_sub(child).as_secs_f64() * 1000.0 / launched.max(1) as f64
    );
}
