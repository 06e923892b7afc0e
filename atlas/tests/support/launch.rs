//! The launcher's test fixture: an Atlas app, a git repository, an SMTP server, a fake
//! `claude` per scenario and a launcher configured for them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arthur_atlas::launch::{Launcher, LauncherConfig};
use arthur_atlas::smtp::SmtpAccount;
use arthur_atlas::store::{AtlasStore, EmailRow};
use arthur_atlas::EmailState;

use super::git::git_repo;
use super::smtp::SmtpServer;
use super::*;

pub struct LaunchApp {
    pub app: AtlasApp,
    pub repo: tempfile::TempDir,
    pub smtp: SmtpServer,
    pub bin: tempfile::TempDir,
    pub data: tempfile::TempDir,
}

impl LaunchApp {
    pub async fn new() -> Self {
        let mut app = spawn_atlas().await;
        let smtp = SmtpServer::start();
        // The pipeline asks the founder's approval as soon as it classifies (issue 28).
        app.atlas.deps.notifier = Some(notifier(&app, &smtp));
        LaunchApp { app, repo: git_repo(), smtp, bin: tempfile::tempdir().unwrap(), data: tempfile::tempdir().unwrap() }
    }

    /// A `claude` for this test: the fake with its scenario (or script) and an argv log.
    pub fn claude(&self, scenario: &str, script: Option<&str>) -> PathBuf {
        let path = self.bin.path().join(format!("claude-{scenario}"));
        // Sessions are kept in this test's directory (CLAUDE_CONFIG_DIR), never in $HOME.
        let mut env = format!(
            "FAKE_CLAUDE_SCENARIO={scenario} FAKE_CLAUDE_ARGV_FILE={argv} CLAUDE_CONFIG_DIR={config} ",
            argv = self.bin.path().join("argv.json").display(),
            config = self.bin.path().join("claude-config").display()
        );
        if let Some(s) = script {
            let file = self.bin.path().join(format!("{scenario}.jsonl"));
            std::fs::write(&file, s).unwrap();
            env.push_str(&format!("FAKE_CLAUDE_SCRIPT={} ", file.display()));
        }
        let body = format!("#!/bin/sh\n{env}exec {} \"$@\"\n", super::fake_claude().display());
        std::fs::write(&path, body).unwrap();
        let _ = std::process::Command::new("chmod").arg("+x").arg(&path).status();
        path
    }

    pub fn launcher(&self, claude: PathBuf, tweak: impl FnOnce(&mut LauncherConfig)) -> Launcher {
        let mut cfg = LauncherConfig {
            claude_bin: claude,
            repo: Some(self.repo.path().to_path_buf()),
            base_branch: Some("main".into()),
            data_dir: self.data.path().to_path_buf(),
            // Generous: a loaded CI machine may pause between two events; the tests that
            // want the idle kill set their own.
            idle_timeout: Duration::from_secs(30),
            hard_timeout: Duration::from_secs(60),
            budget: Duration::from_secs(60),
            grace_after_result: Duration::from_secs(2),
            deploy_cmd: None,
            qa_cmd: None,
            disabled: false,
            permission_mode: "bypassPermissions".into(),
            model: Some("claude-sonnet-4-5".into()),
            allowed_tools: None,
            strict_mcp: true,
            smtp: Some(SmtpAccount::parse(&self.smtp.url()).unwrap()),
            founder: Some(FOUNDER.into()),
            mailbox: Some(MAILBOX.into()),
            child_env: Default::default(),
            trust_unsigned_founder: false,
            max_retries: 2,
            use_worktree: true,
            // The fake claude does not care; the real one, run as root in CI, needs it.
            sandboxed: true,
            max_api_retries: 5,
        };
        tweak(&mut cfg);
        Launcher {
            store: self.app.store.clone(),
            cfg,
            clock: self.app.clock.clone(),
            holder: "test:1".into(),
            personas: Some(Arc::new(self.app.memory.clone())),
            shutdown: None,
        }
    }

    /// An e-mail classified as `intent`/`complexity` by the scripted model; the founder's is
    /// DKIM-signed (a verified author, so it launches on its own).
    pub async fn classified(&self, intent: &str, complexity: &str, from: &str, subject: &str) -> EmailRow {
        self.app.llm.push(verdict(intent, complexity, 0.9));
        let m = msg(from, subject, "Le bouton panier ne marche plus.");
        let raw = if from == FOUNDER { self.app.signed(&m) } else { m.raw() };
        let row = self.app.process(raw).await;
        assert_eq!(row.status, EmailState::Classified);
        row
    }

    pub fn argv(&self) -> Vec<String> {
        serde_json::from_str(&std::fs::read_to_string(self.bin.path().join("argv.json")).unwrap()).unwrap()
    }

    pub async fn state(&self, id: i64) -> EmailRow {
        self.app.store.email(id).await.unwrap().unwrap()
    }
}
