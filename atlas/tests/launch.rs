//! The launcher end to end: classified e-mails → a fake `claude` (real stream-json through
//! the real PTY path) in a real git worktree → journal, contract, deploy/QA scripts,
//! iterations, merge-back → a recap received by a real SMTP server on loopback.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arthur_agents::time::Clock;
use arthur_atlas::store::AtlasStore;
use arthur_atlas::{audit, EmailState, Intent};

use crate::support::git::git;
use crate::support::launch::LaunchApp;
use crate::support::*;

fn subject(m: &crate::support::smtp::ReceivedMail) -> String {
    m.parsed().subject().unwrap_or("").to_string()
}

fn flag_value(argv: &[String], flag: &str) -> Option<String> {
    argv.iter().position(|a| a == flag).map(|i| argv[i + 1].clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_light_run_commits_in_a_worktree_merges_back_and_tells_the_founder() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Corriger le panier").await;
    let launcher = t.launcher(t.claude("commits", None), |_| {});
    let report = launcher.cycle().await.unwrap();
    assert_eq!((report.candidates, report.launched, report.actioned), (1, 1, 1), "{report:?}");
    assert_eq!(t.state(row.id).await.status, EmailState::Actioned);

    // The command line: -p first, --add-dir right after, the lean prompt's 40 turns.
    let argv = t.argv();
    assert_eq!(argv[0], "-p");
    assert_eq!(argv[2], "--add-dir");
    assert_eq!(flag_value(&argv, "--max-turns").as_deref(), Some("40"));
    assert_eq!(flag_value(&argv, "--output-format").as_deref(), Some("stream-json"));
    assert_eq!(flag_value(&argv, "--model").as_deref(), Some("claude-sonnet-4-5"));
    // The session is saved: a retry resumes it (issue 28).
    assert!(!argv.contains(&"--no-session-persistence".to_string()));
    let workdir = PathBuf::from(&argv[3]);
    assert!(workdir.starts_with(t.data.path().join("worktrees")), "ran in a worktree: {workdir:?}");
    assert!(argv[1].contains("Corriger le panier") && argv[1].contains(FOUNDER));
    // The persona the run puts on: run + leger → the backend agent, at the "metier" level.
    let system = flag_value(&argv, "--append-system-prompt").unwrap();
    assert!(system.contains("Pascal") && system.contains("écriture de code + git commit"), "{system}");

    // Merged into the trunk, worktree gone.
    assert!(t.repo.path().join("panier.txt").exists(), "the commit reached the trunk");
    assert!(git(t.repo.path(), &["log", "--format=%s"]).contains("fix: bouton du panier"));
    assert!(!workdir.exists(), "worktree cleaned up");

    // Journal and launch row.
    let launches = t.app.store.launches(row.id).await.unwrap();
    assert_eq!(launches.len(), 1);
    let l = &launches[0];
    assert_eq!((l.end.status.as_str(), l.prompt_kind.as_str(), l.max_turns), ("ok", "run", 40));
    let events = t.app.store.launch_events(l.id).await.unwrap();
    assert_eq!(events.len() as i64, l.end.events);
    assert_eq!(events.first().unwrap().kind, "system");
    assert_eq!(events.last().unwrap().kind, "result");
    assert!(events.windows(2).all(|w| w[0].seq + 1 == w[1].seq), "in order, no gap");
    assert!(events.iter().any(|e| e.tool_name.as_deref() == Some("Bash")));
    assert!(l.end.session_id.is_some() && l.end.cost_usd.is_some());

    let ev = t.app.events(row.id).await;
    for e in [
        audit::SPAWN_STARTED,
        audit::SPAWN_ACTION_DONE,
        audit::CONTRACT_READ,
        audit::WORKTREE_MERGED,
        audit::RECAP_SENT,
        audit::ACTIONED,
    ] {
        assert!(ev.contains(&e.to_string()), "{e} missing: {ev:?}");
    }
    // The recap: to the founder only, with the real status and the commits.
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert_eq!(mails[0].rcpt_tos, vec![FOUNDER.to_string()]);
    let text = mails[0].text();
    assert!(text.contains("fix: bouton du panier"), "{text}");
    assert!(subject(&mails[0]).starts_with("[Atlas] terminé"), "{}", subject(&mails[0]));

    // A second cycle launches nothing: the message is actioned.
    let again = launcher.cycle().await.unwrap();
    assert_eq!(again.launched, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn secrets_never_reach_the_journal() {
    let t = LaunchApp::new().await;
    let row = t.classified("question", "leger", FOUNDER, "Config ?").await;
    let launcher = t.launcher(t.claude("secrets", None), |_| {});
    launcher.cycle().await.unwrap();
    let dump: Vec<String> = sqlx::query_scalar(
        "SELECT payload FROM atlas_launch_events UNION ALL SELECT COALESCE(contract, '') FROM atlas_launches
         UNION ALL SELECT detail FROM atlas_audits",
    )
    .fetch_all(t.app.memory.pool())
    .await
    .unwrap();
    assert!(!dump.is_empty());
    for secret in [
        "s3cr3tpass",
        "sk-ant-api03-AbCdEf",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ] {
        assert!(dump.iter().all(|d| !d.contains(secret)), "{secret} stored");
    }
    let l = &t.app.store.launches(row.id).await.unwrap()[0];
    assert!(l.end.redactions >= 4, "{}", l.end.redactions);
    assert!(dump.iter().any(|d| d.contains("REDACTED")));
    // A question is rich, unlimited, and never codes.
    assert_eq!((l.prompt_kind.as_str(), l.max_turns), ("rich", 0));
    assert!(flag_value(&t.argv(), "--max-turns").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_run_times_out_is_salvaged_and_retried_after_the_quiet_window() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Bug").await;
    let launcher =
        t.launcher(t.claude("partial_contract_then_silence", None), |c| c.idle_timeout = Duration::from_secs(2));
    let report = launcher.cycle().await.unwrap();
    assert_eq!(report.retry_later, 1, "{report:?}");
    assert_eq!(t.state(row.id).await.status, EmailState::Classified, "back in the queue");
    let l = &t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!((l.end.status.as_str(), l.end.killed.as_deref()), ("idle", Some("idle")));
    let audits = t.app.store.audits(row.id).await.unwrap();
    let failed = audits.iter().find(|a| a.event == audit::SPAWN_FAILED).unwrap();
    assert_eq!((failed.detail["code"].as_i64(), failed.detail["retryable"].as_bool()), (Some(125), Some(true)));
    let salvaged = audits.iter().find(|a| a.event == audit::SALVAGED).unwrap();
    assert_eq!(salvaged.detail["commits"], 1, "the WIP commit was salvaged from the worktree");
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(subject(&mails[0]).starts_with("[Atlas] délai dépassé"), "{}", subject(&mails[0]));
    assert!(mails[0].text().contains("wip: diagnostic du panier"));

    // Within the hour: not relaunched. After it: relaunched.
    assert_eq!(launcher.cycle().await.unwrap().candidates, 0);
    t.app.clock.advance(chrono::Duration::minutes(61));
    let ok = t.launcher(t.claude("success", None), |_| {});
    assert_eq!(ok.cycle().await.unwrap().actioned, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_result_is_a_failure_even_with_exit_zero() {
    let t = LaunchApp::new().await;
    let row = t.classified("conseil", "leger", FOUNDER, "Avis").await;
    let report = t.launcher(t.claude("is_error_exit0", None), |_| {}).cycle().await.unwrap();
    assert_eq!(report.failed, 1);
    assert_eq!(t.state(row.id).await.status, EmailState::Failed);
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(subject(&mails[0]).starts_with("[Atlas] échec"), "{}", subject(&mails[0]));
    assert!(!mails[0].text().to_lowercase().contains("succès"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_kill_switch_and_a_held_lock_launch_nothing() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "x").await;
    let off = t.launcher(t.claude("success", None), |c| c.disabled = true);
    let report = off.cycle().await.unwrap();
    assert!(report.disabled);
    assert!(t.app.store.launches(row.id).await.unwrap().is_empty());

    // Another worker holds the lease: skipped and audited.
    assert!(t.app.store.try_lease(row.id, "other:99", t.app.clock.now(), chrono::Duration::minutes(5)).await.unwrap());
    let on = t.launcher(t.claude("commits", None), |_| {});
    let report = on.cycle().await.unwrap();
    assert_eq!((report.skipped_lock_held, report.launched), (1, 0));
    assert!(t.app.events(row.id).await.contains(&audit::SPAWN_SKIPPED_LOCK_HELD.to_string()));
    // Eleven minutes later the watchdog alerts, and the expired lease can be taken over.
    t.app.clock.advance(chrono::Duration::minutes(11));
    assert_eq!(on.watch_locks().await.unwrap(), 1);
    assert!(t.app.events(row.id).await.contains(&audit::LOCK_WATCHDOG_ALERT.to_string()));
    assert_eq!(on.cycle().await.unwrap().actioned, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_launcher_that_died_mid_run_is_reclaimed() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "x").await;
    // What a kill -9 leaves: the row spawned, a lease that will expire, a running launch.
    assert!(t.app.store.try_lease(row.id, "dead:1", t.app.clock.now(), chrono::Duration::minutes(5)).await.unwrap());
    t.app
        .store
        .transition(
            row.id,
            EmailState::Classified,
            EmailState::Spawned,
            audit::SPAWN_STARTED,
            serde_json::json!({}),
            t.app.clock.now(),
        )
        .await
        .unwrap();
    let launcher = t.launcher(t.claude("commits", None), |_| {});
    assert_eq!(launcher.cycle().await.unwrap().reclaimed, 0, "a live lease is respected");
    t.app.clock.advance(chrono::Duration::minutes(6));
    let report = launcher.cycle().await.unwrap();
    assert_eq!(report.reclaimed, 1);
    assert_eq!(report.launched, 0, "the spawn audit is less than an hour old");
    assert_eq!(t.state(row.id).await.status, EmailState::Classified);
    assert!(t.app.events(row.id).await.contains(&audit::LAUNCH_INTERRUPTED.to_string()));
    t.app.clock.advance(chrono::Duration::minutes(60));
    assert_eq!(launcher.cycle().await.unwrap().actioned, 1);
}

fn plan_script(contract: &str) -> String {
    format!(
        "{{\"commit\": \"feat: filtres du catalogue\"}}\n{{\"contract\": {contract}}}\n{{\"result\": {{\"result\": \"livré\"}}}}\n"
    )
}

fn qa_script(dir: &Path, pass_from_attempt: u32, fail_code: i32) -> String {
    let counter = dir.join("qa-count");
    let log = dir.join("qa.log");
    format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; echo \"$ATLAS_TENANT $ATLAS_ROUTE\" >> {l}; \
         if [ $n -ge {pass_from_attempt} ]; then echo ok; exit 0; else echo 'ERREUR 500 sur la page'; exit {fail_code}; fi",
        c = counter.display(),
        l = log.display()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_run_deploys_iterates_on_a_failed_qa_and_succeeds() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "plan", FOUNDER, "Refonte catalogue").await;
    std::fs::write(t.repo.path().join("sitemap.txt"), "/\n/boutique/catalogue\n").unwrap();
    git(t.repo.path(), &["add", "sitemap.txt"]);
    git(t.repo.path(), &["commit", "-q", "-m", "sitemap"]);
    let contract = r#"{"ok": true, "tenant": "shop", "routes_to_qa": ["/catalogue"], "commits": "$COMMITS", "summary_md": "Filtres ajoutés."}"#;
    let claude = t.claude("plan", Some(&plan_script(contract)));
    let deploy_log = t.bin.path().join("deploy.log");
    let launcher = t.launcher(claude, |c| {
        c.deploy_cmd = Some(format!("echo \"deploy $ATLAS_TENANT\" >> {}", deploy_log.display()));
        c.qa_cmd = Some(qa_script(t.bin.path(), 2, 1));
    });
    let report = launcher.cycle().await.unwrap();
    assert_eq!(report.actioned, 1, "{report:?} {:?}", t.app.events(row.id).await);
    let launches = t.app.store.launches(row.id).await.unwrap();
    assert_eq!(launches.len(), 2, "one relaunch after the failed QA");
    assert_eq!((launches[0].prompt_kind.as_str(), launches[0].max_turns), ("rich_plan", 0));
    assert_eq!(launches[1].prompt_kind, "iteration");
    // The first pass saved its session (the fake refuses to resume an unsaved one, as Claude
    // Code does); the relaunch resumed it and was told the QA errors, sorted by kind.
    assert_eq!(launches[0].session_mode.as_deref(), Some("saved"));
    assert_eq!((launches[1].session_mode.as_deref(), launches[1].end.status.as_str()), (Some("resumed"), "ok"));
    let argv = t.argv();
    assert_eq!(flag_value(&argv, "--resume"), launches[0].end.session_id, "{argv:?}");
    assert!(!argv.contains(&"--no-session-persistence".to_string()));
    assert!(
        argv[1].contains("Itération 2")
            && argv[1].contains("### Erreurs HTTP (L1)\n- /boutique/catalogue : ERREUR 500"),
        "{}",
        argv[1]
    );
    assert!(argv[1].contains("feat: filtres du catalogue"), "the commits already made: {}", argv[1]);
    assert!(!argv[1].contains("Résumé compacté"), "a resumed session remembers its pass: {}", argv[1]);
    assert_eq!(std::fs::read_to_string(&deploy_log).unwrap().lines().count(), 2);
    // The declared route was re-resolved against the sitemap.
    let qa_log = std::fs::read_to_string(t.bin.path().join("qa.log")).unwrap();
    assert!(qa_log.lines().all(|l| l == "shop /boutique/catalogue"), "{qa_log}");
    let ev = t.app.events(row.id).await;
    assert!(ev.contains(&audit::QA_FAILED.to_string()) && ev.contains(&audit::QA_PASSED.to_string()));
    assert_eq!(t.state(row.id).await.status, EmailState::Actioned);
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(subject(&mails[0]).starts_with("[Atlas] terminé"), "{}", subject(&mails[0]));
}

#[tokio::test(flavor = "multi_thread")]
async fn qa_failing_every_time_escalates_after_three_iterations_or_eight_for_mock_up_only() {
    for (fail_code, expected) in [(1, 3), (3, 8)] {
        let t = LaunchApp::new().await;
        let row = t.classified("run", "plan", FOUNDER, "Refonte").await;
        let contract =
            r#"{"ok": true, "tenant": "shop", "routes_to_qa": ["/a"], "commits": "$COMMITS", "summary_md": "x"}"#;
        let launcher = t.launcher(t.claude("plan", Some(&plan_script(contract))), |c| {
            c.deploy_cmd = Some("true".into());
            c.qa_cmd = Some(qa_script(t.bin.path(), 99, fail_code));
        });
        assert_eq!(launcher.cycle().await.unwrap().escalated, 1);
        assert_eq!(t.app.store.launches(row.id).await.unwrap().len(), expected, "fail code {fail_code}");
        assert!(t.app.events(row.id).await.contains(&audit::ESCALATED.to_string()));
        assert_eq!(t.state(row.id).await.status, EmailState::Escalated);
        let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
        assert!(subject(&mails[0]).starts_with("[Atlas] escalade"), "{}", subject(&mails[0]));
        // The unmerged work is kept on its branch, never lost.
        assert!(git(t.repo.path(), &["branch", "--list", "atlas/*"]).contains("atlas/"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn commits_without_a_tenant_are_an_orchestration_failure_and_a_downgrade_skips_deploy() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "plan", FOUNDER, "Refonte").await;
    let no_tenant = r#"{"ok": true, "commits": "$COMMITS", "summary_md": "x"}"#;
    let launcher = t.launcher(t.claude("nt", Some(&plan_script(no_tenant))), |c| c.deploy_cmd = Some("false".into()));
    assert_eq!(launcher.cycle().await.unwrap().failed, 1);
    let audits = t.app.store.audits(row.id).await.unwrap();
    let failure = audits.iter().find(|a| a.event == audit::ORCHESTRATION_FAILED).unwrap();
    assert_eq!(failure.detail["reason"], "missing_tenant_or_routes");

    // The agent read the whole thread: it was a question; the lane is corrected, nothing deployed.
    let row = t.classified("run", "plan", FOUNDER, "Question en fait").await;
    let downgraded =
        r#"{"ok": true, "intent": "question", "summary_md": "Réponse rédigée.", "draft_reply_for_user": "Bonjour…"}"#;
    let script = format!("{{\"contract\": {downgraded}}}\n{{\"result\": {{}}}}\n");
    let launcher = t.launcher(t.claude("dg", Some(&script)), |c| c.deploy_cmd = Some("false".into()));
    assert_eq!(launcher.cycle().await.unwrap().actioned, 1);
    let state = t.state(row.id).await;
    assert_eq!((state.intent, state.status), (Some(Intent::Question), EmailState::Actioned));
    assert!(t.app.events(row.id).await.contains(&audit::INTENT_DOWNGRADED.to_string()));
    assert!(!t.app.events(row.id).await.contains(&audit::DEPLOY_DONE.to_string()));

    // Neither tenant nor commits on a plan run: a run request that changed nothing — « aucun
    // changement », never « analyse livrée » (issue 28).
    let row = t.classified("run", "plan", FOUNDER, "Audit").await;
    let analysis = r#"{"ok": true, "tenant": null, "summary_md": "Analyse : rien à changer."}"#;
    let script = format!("{{\"contract\": {analysis}}}\n{{\"result\": {{}}}}\n");
    assert_eq!(t.launcher(t.claude("an", Some(&script)), |_| {}).cycle().await.unwrap().failed, 1);
    assert_eq!(t.state(row.id).await.status, EmailState::Failed);
    let failure =
        t.app.store.audits(row.id).await.unwrap().into_iter().rfind(|a| a.event == audit::ORCHESTRATION_FAILED);
    assert_eq!(failure.unwrap().detail["reason"], "no_change");
    let mails = t.smtp.wait_for_messages(3, Duration::from_secs(10));
    let mail = mails.iter().find(|m| subject(m).contains("Audit")).unwrap();
    assert!(subject(mail).starts_with("[Atlas] aucun changement"), "{}", subject(mail));
    assert!(!mail.text().contains("analyse livrée"), "{}", mail.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn at_most_three_launches_per_cycle() {
    let t = LaunchApp::new().await;
    for i in 0..5 {
        t.classified("question", "leger", FOUNDER, &format!("Q{i}")).await;
    }
    t.app.llm.push(verdict("noise", "leger", 0.9));
    t.app.process(msg("x@y.fr", "pub", "promo").raw()).await;
    let launcher = t.launcher(t.claude("success", None), |_| {});
    let first = launcher.cycle().await.unwrap();
    assert_eq!((first.candidates, first.launched), (3, 3));
    let second = launcher.cycle().await.unwrap();
    assert_eq!((second.candidates, second.launched), (2, 2), "noise is never launched");
    assert_eq!(launcher.cycle().await.unwrap().candidates, 0);
    let _ = Arc::new(());
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_contract_the_recap_carries_the_compacted_transcript() {
    let t = LaunchApp::new().await;
    let row = t.classified("question", "leger", FOUNDER, "Sans contrat").await;
    assert_eq!(t.launcher(t.claude("no_contract", None), |_| {}).cycle().await.unwrap().actioned, 1);
    let audits = t.app.store.audits(row.id).await.unwrap();
    let read = audits.iter().find(|a| a.event == audit::CONTRACT_READ).unwrap();
    assert_eq!(read.detail["ok"], false, "the early contract (ok: false) was never replaced");
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    let text = mails[0].text();
    assert!(text.contains("Le panier est corrigé."), "{text}");
    assert!(!text.contains("stream_event"), "partials dropped: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shutdown_interrupts_the_run_in_flight_and_salvages_it() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Long travail").await;
    t.classified("question", "leger", FOUNDER, "Suivant").await;
    let stop = tokio_util::sync::CancellationToken::new();
    let mut launcher =
        t.launcher(t.claude("partial_contract_then_silence", None), |c| c.idle_timeout = Duration::from_secs(120));
    launcher.shutdown = Some(stop.clone());
    let started = std::time::Instant::now();
    let cycle = tokio::spawn(async move { launcher.cycle().await });
    // Wait until the run is under way (its WIP commit exists), then stop Arthur.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !t.app.events(row.id).await.contains(&audit::SPAWN_STARTED.to_string())
        || started.elapsed() < Duration::from_secs(2)
    {
        assert!(std::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.cancel();
    let report =
        tokio::time::timeout(Duration::from_secs(15), cycle).await.expect("stopped promptly").unwrap().unwrap();
    assert_eq!((report.launched, report.retry_later), (1, 1), "the second candidate was not started: {report:?}");
    let l = &t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!((l.end.status.as_str(), l.end.killed.as_deref()), ("hard_timeout", Some("shutdown")));
    assert_eq!(t.state(row.id).await.status, EmailState::Classified, "relaunched after the quiet window");
    let salvaged = t.app.store.audits(row.id).await.unwrap().into_iter().find(|a| a.event == audit::SALVAGED).unwrap();
    assert_eq!(salvaged.detail["commits"], 1);
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(mails[0].text().contains("interrompu par l'arrêt d'Arthur"), "{}", mails[0].text());
}

// ---- launch authority (issue 17) ----

/// A `claude` that logs each start (the message id, read from the contract file's name),
/// then plays `scenario`.
fn logging_claude(t: &LaunchApp, scenario: &str) -> (PathBuf, PathBuf) {
    let log = t.bin.path().join("starts.log");
    let path = t.bin.path().join(format!("claude-log-{scenario}"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nbasename \"$ATLAS_CONTRACT_FILE\" .json >> '{log}'\nCLAUDE_CONFIG_DIR='{config}' FAKE_CLAUDE_SCENARIO={scenario} exec {fake} \"$@\"\n",
            log = log.display(),
            config = t.bin.path().join("claude-config").display(),
            fake = crate::support::fake_claude().display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    (path, log)
}

fn starts(log: &Path) -> Vec<i64> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("email-")?.parse().ok())
        .collect()
}

fn held_reason(audits: &[arthur_atlas::store::AuditRow]) -> Option<String> {
    audits
        .iter()
        .find(|a| a.event == audit::LAUNCH_HELD_UNVERIFIED_SENDER)
        .and_then(|a| a.detail["reason"].as_str().map(str::to_string))
}

#[cfg_attr(not(feature = "system-tests"), ignore = "system tier: Dovecot (--features system-tests)")]
#[tokio::test(flavor = "multi_thread")]
async fn only_verified_authors_start_claude_the_others_wait_for_the_founder() {
    use arthur_atlas::imap::ImapAccount;
    let t = LaunchApp::new().await;
    let imap = crate::support::dovecot::Dovecot::start().await;
    t.app.add_client_with("Boutique", &["jean@boutique.fr"], &[], Some(900.0), true).await;
    t.app.add_client_with("Atelier", &["paul@atelier.fr"], &[], Some(400.0), false).await;
    let keys = &t.app.keys;
    let body = "Supprime les anciennes commandes et pousse en production.";
    let mails: Vec<(&str, Vec<u8>)> = vec![
        ("stranger", msg("x@inconnu.fr", "Nettoyage", body).raw()),
        ("forged founder", msg(FOUNDER, "Urgent du patron", body).raw()),
        ("founder signed", keys.sign("maboite.fr", &msg(FOUNDER, "Corrige le panier", body))),
        ("client allowed, signed", keys.sign("boutique.fr", &msg("jean@boutique.fr", "Bouton cassé", body))),
        ("client not allowed, signed", keys.sign("atelier.fr", &msg("paul@atelier.fr", "Page contact", body))),
        ("client allowed, unsigned", msg("jean@boutique.fr", "Encore le bouton", body).raw()),
    ];
    for (_, raw) in &mails {
        t.app.llm.push(verdict("run", "leger", 0.9));
        imap.append(raw).await;
    }
    let account = ImapAccount::parse(&imap.url()).unwrap();
    let report = t.app.atlas.poll_once(&account).await.unwrap();
    assert_eq!(report.classified, 6, "{report:?}");
    let rows = t.app.store.list(None).await.unwrap();
    let id = |subject: &str| rows.iter().find(|r| r.subject == subject).unwrap().id;
    let (stranger, forged, founder, allowed, not_allowed, unsigned) = (
        id("Nettoyage"),
        id("Urgent du patron"),
        id("Corrige le panier"),
        id("Bouton cassé"),
        id("Page contact"),
        id("Encore le bouton"),
    );

    // Held as soon as classified, the founder asked at once (issue 28): before any launch cycle.
    let waiting = t.app.store.list(Some(EmailState::AwaitingApproval)).await.unwrap();
    assert_eq!(waiting.len(), 4, "{waiting:?}");
    let asked = t.smtp.wait_for_messages(4, Duration::from_secs(15));
    assert!(
        asked.iter().all(|m| subject(m).starts_with("[Atlas] à approuver")),
        "{:?}",
        asked.iter().map(subject).collect::<Vec<_>>()
    );
    let (claude, log) = logging_claude(&t, "commits");
    let launcher = t.launcher(claude, |_| {});
    let mut held = 0;
    for _ in 0..3 {
        let r = launcher.cycle().await.unwrap();
        held += r.held;
    }
    assert_eq!(held, 0, "already held");
    let mut started = starts(&log);
    started.sort();
    assert_eq!(started, vec![founder, allowed], "only the verified authors started claude");
    for (id, reason) in [
        (stranger, "unknown_sender"),
        (forged, "founder_unsigned"),
        (not_allowed, "client_not_allowed"),
        (unsigned, "client_unsigned"),
    ] {
        assert_eq!(t.state(id).await.status, EmailState::AwaitingApproval, "message {id}");
        assert!(t.app.store.launches(id).await.unwrap().is_empty());
        assert_eq!(held_reason(&t.app.store.audits(id).await.unwrap()).as_deref(), Some(reason), "message {id}");
    }
    for id in [founder, allowed] {
        assert_eq!(t.state(id).await.status, EmailState::Actioned);
        let started = t.app.store.audits(id).await.unwrap().into_iter().find(|a| a.event == audit::SPAWN_STARTED);
        let authority = started.unwrap().detail["authority"].as_str().unwrap().to_string();
        assert_eq!(authority, if id == founder { "founder_dkim" } else { "client_allowed_dkim" });
    }

    // One e-mail per held message (plus the two recaps), each saying how to decide.
    let mails = t.smtp.wait_for_messages(6, Duration::from_secs(15));
    let approvals: Vec<_> = mails.iter().filter(|m| subject(m).starts_with("[Atlas] à approuver")).collect();
    assert_eq!(approvals.len(), 4, "{:?}", mails.iter().map(subject).collect::<Vec<_>>());
    let stranger_mail = approvals.iter().find(|m| subject(m).contains("Nettoyage")).unwrap();
    assert_eq!(stranger_mail.rcpt_tos, vec![FOUNDER.to_string()]);
    let text = stranger_mail.text();
    for needle in [
        format!("arthur atlas approve {stranger}"),
        format!("arthur atlas cancel {stranger}"),
        "x@inconnu.fr".to_string(),
        "run / leger".to_string(),
        "aucune signature".to_string(),
        "Rien n'a été lancé".to_string(),
    ] {
        assert!(text.contains(&needle), "{needle:?} missing:\n{text}");
    }
    // Another cycle: no second e-mail, no launch.
    launcher.cycle().await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(t.smtp.wait_for_messages(6, Duration::from_secs(1)).len(), 6);
    assert_eq!(t.app.store.notices(None).await.unwrap().len(), 4);

    // Approving one launches it through the normal path; refusing one ends it.
    let now = t.app.clock.now();
    let (code, line) = arthur_atlas::decisions::approve(t.app.store.as_ref(), stranger, "cli", now).await.unwrap();
    assert_eq!(code, 0, "{line}");
    let (code, line) = arthur_atlas::decisions::cancel(t.app.store.as_ref(), forged, "cli", now).await.unwrap();
    assert_eq!(code, 0, "{line}");
    assert!(line.contains("lancement refusé"), "{line}");
    let r = launcher.cycle().await.unwrap();
    assert_eq!((r.launched, r.actioned), (1, 1), "{r:?}");
    assert!(starts(&log).contains(&stranger));
    assert!(!starts(&log).contains(&forged));
    assert_eq!(t.state(stranger).await.status, EmailState::Actioned);
    let approved = t.app.store.audits(stranger).await.unwrap();
    assert!(approved.iter().any(|a| a.event == audit::LAUNCH_APPROVED && a.detail["by"] == "cli"));
    assert_eq!(
        approved.iter().find(|a| a.event == audit::SPAWN_STARTED).unwrap().detail["authority"],
        "approved_by_founder"
    );
    assert_eq!(t.state(forged).await.status, EmailState::Cancelled);
    let runs: String = sqlx::query_scalar("SELECT status FROM atlas_runs WHERE email_id = ?")
        .bind(forged)
        .fetch_one(t.app.memory.pool())
        .await
        .unwrap();
    assert_eq!(runs, "annule", "the refused run counts as refused in the report");
    // A decision on a message that is not waiting is refused, and changes nothing.
    let (code, line) = arthur_atlas::decisions::approve(t.app.store.as_ref(), forged, "cli", now).await.unwrap();
    assert_eq!(code, 1, "{line}");
    assert!(line.contains("n'attend pas d'accord"), "{line}");
    assert_eq!(t.state(forged).await.status, EmailState::Cancelled);
}

#[tokio::test(flavor = "multi_thread")]
async fn trusting_the_unsigned_founder_is_for_their_own_address_only() {
    let mut t = LaunchApp::new().await;
    t.app.atlas.deps.trust_unsigned_founder = true;
    t.app.llm.push(verdict("run", "leger", 0.9));
    let founder = t.app.process(msg(FOUNDER, "Sans DKIM", "Corrige.").raw()).await;
    assert_eq!(founder.status, EmailState::Classified, "trusted: not held");
    t.app.llm.push(verdict("run", "leger", 0.9));
    let stranger = t.app.process(msg("x@inconnu.fr", "Moi aussi", "Corrige.").raw()).await;
    // Held at once, the founder asked at once: not at the next launch cycle (issue 28).
    assert_eq!(stranger.status, EmailState::AwaitingApproval);
    let asked = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(subject(&asked[0]).starts_with("[Atlas] à approuver — Moi aussi"), "{}", subject(&asked[0]));
    let (claude, log) = logging_claude(&t, "commits");
    let r = t.launcher(claude, |c| c.trust_unsigned_founder = true).cycle().await.unwrap();
    assert_eq!((r.launched, r.held), (1, 0), "{r:?}");
    assert_eq!(starts(&log), vec![founder.id]);
    let started = t.app.store.audits(founder.id).await.unwrap().into_iter().find(|a| a.event == audit::SPAWN_STARTED);
    assert_eq!(started.unwrap().detail["authority"], "founder_unsigned_trusted");
    assert_eq!(t.state(stranger.id).await.status, EmailState::AwaitingApproval);
}

// ---- after the launch (issue 18) ----

/// A `claude` that forgets every session before a `--resume` (an expired or foreign one):
/// the fake then refuses it as Claude Code does.
fn forgetful_claude(t: &LaunchApp, script: &str) -> PathBuf {
    let file = t.bin.path().join("forgetful.jsonl");
    std::fs::write(&file, script).unwrap();
    let config = t.bin.path().join("claude-config");
    let path = t.bin.path().join("claude-forgetful");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ncase \"$*\" in *--resume*) rm -rf '{config}' ;; esac\n\
             CLAUDE_CONFIG_DIR='{config}' FAKE_CLAUDE_SCRIPT='{file}' FAKE_CLAUDE_ARGV_FILE='{argv}' exec {fake} \"$@\"\n",
            config = config.display(),
            file = file.display(),
            argv = t.bin.path().join("argv.json").display(),
            fake = crate::support::fake_claude().display()
        ),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_resume_becomes_a_fresh_pass_on_the_same_branch() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "plan", FOUNDER, "Refonte catalogue").await;
    let contract = r#"{"ok": true, "tenant": "shop", "routes_to_qa": ["/catalogue"], "commits": "$COMMITS", "summary_md": "Filtres ajoutés."}"#;
    let launcher = t.launcher(forgetful_claude(&t, &plan_script(contract)), |c| {
        c.deploy_cmd = Some("true".into());
        c.qa_cmd = Some(qa_script(t.bin.path(), 2, 1));
    });
    let report = launcher.cycle().await.unwrap();
    assert_eq!(report.actioned, 1, "{report:?} {:?}", t.app.events(row.id).await);
    let launches = t.app.store.launches(row.id).await.unwrap();
    let modes: Vec<(&str, &str)> =
        launches.iter().map(|l| (l.session_mode.as_deref().unwrap_or("?"), l.end.status.as_str())).collect();
    assert_eq!(modes, [("saved", "ok"), ("resumed", "error"), ("fresh_after_refused_resume", "ok")]);
    assert_eq!(launches[1].end.events, 1, "the refused resume ran nothing: its one result said why");
    assert_eq!(launches[1].end.num_turns, Some(0));
    let audits = t.app.store.audits(row.id).await.unwrap();
    let refused = audits.iter().find(|a| a.event == audit::RESUME_REFUSED).expect("audited");
    assert!(refused.detail["said"].as_str().unwrap().contains("No conversation found"), "{}", refused.detail);
    // The fresh pass got what the resumed one would have remembered.
    let argv = t.argv();
    assert!(flag_value(&argv, "--resume").is_none());
    assert!(argv[1].contains("la session précédente n'a pas pu être reprise"), "{}", argv[1]);
    assert!(argv[1].contains("ERREUR 500") && argv[1].contains("feat: filtres du catalogue"), "{}", argv[1]);
    // Same branch: all the commits of the message are on one branch, merged once.
    let branches: std::collections::BTreeSet<_> = launches.iter().map(|l| l.branch.clone()).collect();
    assert_eq!(branches.len(), 1, "{branches:?}");
    assert_eq!(t.state(row.id).await.status, EmailState::Actioned);
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(subject(&mails[0]).starts_with("[Atlas] terminé"), "{}", subject(&mails[0]));
    let text = mails[0].text();
    assert!(text.contains("QA : passée, itération 2"), "the refused pass is no iteration: {text}");
    assert!(text.contains("Coût : 0,02 $ · Tours :"), "the refused pass ran nothing, costs nothing: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_skipped_merge_is_named_and_never_called_done() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Corriger le panier").await;
    // Someone works in the trunk: a tracked file has uncommitted changes.
    std::fs::write(t.repo.path().join("README.md"), "# projet\nen cours de modification\n").unwrap();
    assert_eq!(t.launcher(t.claude("commits", None), |_| {}).cycle().await.unwrap().actioned, 1);
    let launch = &t.app.store.launches(row.id).await.unwrap()[0];
    let branch = launch.branch.clone().unwrap();
    // The work is kept on its branch, the trunk untouched.
    assert!(!t.repo.path().join("panier.txt").exists());
    assert!(git(t.repo.path(), &["log", "--format=%s", &branch]).contains("fix: bouton du panier"));
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    let (subject, text) = (subject(&mails[0]), mails[0].text());
    assert!(subject.starts_with("[Atlas] non fusionné"), "{subject}");
    assert!(!subject.contains("terminé") && !text.contains("terminé"), "{text}");
    assert!(text.contains(&format!("la branche {branch} est gardée avec les commits")), "{text}");
    assert!(text.contains("modifications non commitées"), "{text}");
    assert!(text.contains("Déploiement : non nécessaire.") && text.contains("QA : non nécessaire."), "{text}");
    assert!(text.contains("Coût : 0,01 $ · Tours : 2 · Durée :"), "the figures of the result event: {text}");
    assert!(t.app.events(row.id).await.contains(&audit::WORKTREE_MERGE_SKIPPED.to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_before_its_result_has_unknown_figures_and_a_downgrade_is_told() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Bug").await;
    let launcher =
        t.launcher(t.claude("partial_contract_then_silence", None), |c| c.idle_timeout = Duration::from_secs(2));
    launcher.cycle().await.unwrap();
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    let text = mails[0].text();
    assert!(
        text.contains("Coût : inconnu") && text.contains("Tours : inconnu") && text.contains("Durée : inconnue"),
        "{text}"
    );
    assert!(!text.contains("0,00 $") && !text.contains("0 tour"), "{text}");
    assert!(text.contains("nouvel essai 1 sur 2 dans une heure, sur la même branche"), "{text}");
    assert_eq!(t.state(row.id).await.launch_retries, 1);

    // The agent read the thread: a question after all. The recap says both.
    let row = t.classified("run", "plan", FOUNDER, "Question en fait").await;
    let downgraded = r#"{"ok": true, "intent": "question", "summary_md": "Réponse rédigée."}"#;
    let script = format!("{{\"contract\": {downgraded}}}\n{{\"result\": {{}}}}\n");
    assert_eq!(t.launcher(t.claude("dg", Some(&script)), |_| {}).cycle().await.unwrap().actioned, 1);
    let mails = t.smtp.wait_for_messages(2, Duration::from_secs(10));
    let mail = mails.iter().find(|m| subject(m).contains("Question en fait")).unwrap();
    assert!(mail.text().contains("Intention : question (classée run / plan, corrigée par l'agent"), "{}", mail.text());
    assert!(subject(mail).starts_with("[Atlas] analyse livrée"), "{}", subject(mail));
    assert_eq!(t.state(row.id).await.intent, Some(Intent::Question));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_that_always_times_out_is_retried_on_its_branch_then_escalated_with_one_alert_each() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Migration longue").await;
    // Each attempt commits a step, writes its partial contract, then hangs.
    let script = r#"{"type": "system", "subtype": "init"}
{"commit": "wip: étape", "file": "etapes.txt"}
{"contract": {"ok": false, "commits": "$COMMITS", "summary_md": "Étape faite, la suite reste."}}
{"sleep": 3600}
"#;
    let claude = t.claude("slow", Some(script));
    let launcher = t.launcher(claude, |c| c.idle_timeout = Duration::from_secs(2));
    let mut ends = Vec::new();
    for attempt in 1..=3 {
        let r = launcher.cycle().await.unwrap();
        ends.push((r.retry_later, r.escalated));
        let state = t.state(row.id).await;
        if attempt < 3 {
            assert_eq!((state.status, state.launch_retries), (EmailState::Classified, attempt), "attempt {attempt}");
            // Not before the hour.
            assert_eq!(launcher.cycle().await.unwrap().launched, 0);
            t.app.clock.advance(chrono::Duration::minutes(61));
        }
    }
    assert_eq!(ends, [(1, 0), (1, 0), (0, 1)]);
    assert_eq!(t.state(row.id).await.status, EmailState::Escalated);
    // Three attempts, one branch: each retry continued the same branch and saw the work done.
    let launches = t.app.store.launches(row.id).await.unwrap();
    assert_eq!(launches.iter().map(|l| l.attempt).collect::<Vec<_>>(), [1, 2, 3]);
    let branch = launches[0].branch.clone().unwrap();
    assert!(launches.iter().all(|l| l.branch.as_deref() == Some(branch.as_str())), "one branch");
    let log = git(t.repo.path(), &["log", "--format=%s", &branch]);
    assert_eq!(log.lines().filter(|l| *l == "wip: étape").count(), 3, "{log}");
    let argv = t.argv();
    assert!(argv[1].contains("tentative 3 sur 3") && argv[1].contains("Étape faite, la suite reste."), "{}", argv[1]);
    assert_eq!(argv[1].matches("wip: étape").count(), 2, "the two earlier commits: {}", argv[1]);
    // One alert per state change: the first timeout, then the escalation; not the second.
    let mails = t.smtp.wait_for_messages(2, Duration::from_secs(10));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let subjects: Vec<String> = t.smtp.messages().iter().map(subject).collect();
    assert_eq!(subjects.len(), 2, "{subjects:?}");
    assert!(
        subjects[0].starts_with("[Atlas] délai dépassé") && subjects[1].starts_with("[Atlas] escalade"),
        "{subjects:?}"
    );
    let text = mails[1].text();
    assert!(text.contains("délai dépassé à chacune des 3 tentatives"), "{text}");
    assert!(text.contains(&format!("la branche {branch} garde ses commits")), "{text}");
    assert!(t.app.events(row.id).await.contains(&audit::RECAP_SKIPPED.to_string()));
    // The branch is never deleted.
    assert!(git(t.repo.path(), &["branch", "--list", &branch]).contains(&branch));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_emergency_switch_runs_in_the_trunk_and_the_journal_is_written_live() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Sans worktree").await;
    let script = r#"{"type": "system", "subtype": "init"}
{"type": "assistant", "message": {"content": [{"type": "text", "text": "Je commence."}]}}
{"commit": "fix: direct", "file": "direct.txt"}
{"sleep": 3}
{"contract": {"ok": true, "commits": "$COMMITS", "summary_md": "Fait dans le tronc."}}
{"result": {}}
"#;
    let launcher = t.launcher(t.claude("trunk", Some(script)), |c| c.use_worktree = false);
    let store = t.app.store.clone();
    let cycle = tokio::spawn(async move { launcher.cycle().await });
    // While the run sleeps, its first events are already in the database.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let live = loop {
        let launches = store.launches(row.id).await.unwrap();
        if let Some(l) = launches.first() {
            let events = store.launch_events(l.id).await.unwrap();
            if events.len() >= 2 {
                break (l.end.status.clone(), events.len());
            }
        }
        assert!(std::time::Instant::now() < deadline, "no live journal");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(live.0, "running", "the events were stored before the run ended");
    let report = cycle.await.unwrap().unwrap();
    assert_eq!(report.actioned, 1, "{report:?}");
    let l = &t.app.store.launches(row.id).await.unwrap()[0];
    assert_eq!(l.end.events, 3);
    assert_eq!((l.branch.as_deref(), l.workspace.as_str()), (None, t.repo.path().to_str().unwrap()));
    assert!(t.repo.path().join("direct.txt").exists(), "committed in the trunk itself");
    let audits = t.app.store.audits(row.id).await.unwrap();
    let fallback = audits.iter().find(|a| a.event == audit::WORKTREE_FALLBACK).unwrap();
    assert!(fallback.detail["reason"].as_str().unwrap().contains("ATLAS_WORKTREE=0"));
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    assert!(subject(&mails[0]).starts_with("[Atlas] terminé"), "{}", subject(&mails[0]));
    assert!(mails[0].text().contains("le run a travaillé directement dans le tronc (1 commit)"), "{}", mails[0].text());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_proofs_a_run_leaves_outlive_its_worktree_and_reach_the_recap() {
    let t = LaunchApp::new().await;
    let row = t.classified("run", "leger", FOUNDER, "Capture").await;
    let script = r#"{"commit": "test: capture du panier", "file": "atlas-proofs/capture.txt"}
{"contract": {"ok": true, "commits": "$COMMITS", "summary_md": "Capture jointe."}}
{"result": {}}
"#;
    assert_eq!(t.launcher(t.claude("proof", Some(script)), |_| {}).cycle().await.unwrap().actioned, 1);
    let workdir = PathBuf::from(&t.app.store.launches(row.id).await.unwrap()[0].workspace);
    assert!(!workdir.exists(), "the worktree is gone");
    let mails = t.smtp.wait_for_messages(1, Duration::from_secs(10));
    let parsed = mails[0].parsed();
    use mail_parser::MimeHeaders;
    let names: Vec<String> =
        parsed.attachments().map(|a| a.attachment_name().unwrap_or_default().to_string()).collect();
    assert_eq!(names, ["capture.txt"], "{}", mails[0].text());
    assert!(mails[0].text().contains("Preuves jointes (1) : capture.txt"), "{}", mails[0].text());
}
