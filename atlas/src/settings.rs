//! Atlas' settings, typed: what the binary reads from `arthur.toml` and the environment
//! (the `ATLAS_*` names of docs/interface.md §2), handed over whole. The values are parsed
//! here once (addresses, URLs, the DKIM key file), so each component gets what it needs
//! already checked and a bad value is one clear error at start.

use std::path::{Path, PathBuf};
use std::time::Duration;

use arthur_agents::secret::Secret;

use crate::child_env::ChildEnv;
use crate::client::Founder;
use crate::dkim::{DkimConfigError, DkimVerifier};
use crate::imap::{ImapAccount, ImapError};
use crate::launch::LauncherConfig;
use crate::mail::EmailAddress;
use crate::scan::Scanner;
use crate::smtp::{SmtpAccount, SmtpError};

#[derive(Debug, Clone)]
pub struct AtlasSettings {
    pub imap_url: Option<Secret>,
    pub smtp_url: Option<Secret>,
    pub founder_email: Option<String>,
    pub mailbox_email: Option<String>,
    pub repo: Option<PathBuf>,
    pub claude_bin: String,
    pub deploy_cmd: Option<String>,
    pub qa_cmd: Option<String>,
    pub disabled: bool,
    pub idle_timeout_s: u64,
    pub hard_timeout_s: u64,
    pub budget_s: u64,
    pub clamd_addr: Option<String>,
    pub clamscan_db: Option<PathBuf>,
    /// Static DKIM key records consulted before DNS (`ATLAS_DKIM_KEYS`, a file of
    /// `selector._domainkey.domain v=DKIM1; k=…; p=…` lines).
    pub dkim_keys: Option<PathBuf>,
    /// Branch the run worktrees fork from (`ATLAS_BASE_BRANCH`; the repo's current branch by default).
    pub base_branch: Option<String>,
    /// Claude Code's `--permission-mode` (`ATLAS_PERMISSION_MODE`, default bypassPermissions:
    /// the run is isolated in its worktree).
    pub permission_mode: String,
    /// `--model` for Claude Code (`ATLAS_CLAUDE_MODEL`); Claude Code's default otherwise.
    pub claude_model: Option<String>,
    /// `--allowed-tools` (`ATLAS_ALLOWED_TOOLS`).
    pub allowed_tools: Option<String>,
    /// `--strict-mcp-config` (`ATLAS_STRICT_MCP`, default on).
    pub strict_mcp: bool,
    /// Signature under draft replies (`ATLAS_FOUNDER_SIGNATURE`).
    pub founder_signature: Option<String>,
    /// `ATLAS_TRUST_UNSIGNED_FOUNDER=1`: the founder's address starts runs without a DKIM
    /// pass (weaker: From is forgeable; for a founder whose domain does not sign).
    pub trust_unsigned_founder: bool,
    /// Names of Arthur's environment that Claude Code, the deploy and the QA commands also
    /// get (`ATLAS_CHILD_ENV`), beyond PATH, HOME, USER, LANG/LC_*, TZ, TERM.
    pub child_env: ChildEnv,
    /// Retries of a timed-out launch before it is escalated (`ATLAS_MAX_RETRIES`, default 2).
    pub max_retries: u32,
    /// `ATLAS_WORKTREE` (default on); `0` is the spec's emergency switch: runs work in the trunk.
    pub worktree: bool,
    /// `ATLAS_SANDBOXED=1`: the machine is a throw-away sandbox, so Claude Code may bypass
    /// permissions as root (it gets `IS_SANDBOX=1`). Off by default: as root, nothing launches.
    pub sandboxed: bool,
    /// Parkings after an unavailable API before a human is asked (`ATLAS_API_RETRIES`, 5).
    pub api_retries: u32,
}

impl Default for AtlasSettings {
    /// The built-in defaults (docs/interface.md §2): nothing configured, nothing launched.
    fn default() -> Self {
        AtlasSettings {
            imap_url: None,
            smtp_url: None,
            founder_email: None,
            mailbox_email: None,
            repo: None,
            claude_bin: "claude".into(),
            deploy_cmd: None,
            qa_cmd: None,
            disabled: false,
            idle_timeout_s: 1200,
            hard_timeout_s: 6600,
            budget_s: 2400,
            clamd_addr: None,
            clamscan_db: None,
            dkim_keys: None,
            base_branch: None,
            permission_mode: "bypassPermissions".into(),
            claude_model: None,
            allowed_tools: None,
            strict_mcp: true,
            founder_signature: None,
            trust_unsigned_founder: false,
            child_env: ChildEnv::default(),
            max_retries: 2,
            worktree: true,
            sandboxed: false,
            api_retries: crate::machine::DEFAULT_MAX_SETBACKS,
        }
    }
}

/// A setting that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("Atlas is not configured: set ATLAS_IMAP_URL (imap://user:password@host:port/INBOX)")]
    NoMailbox,
    #[error("invalid value for {name}: {value:?} (expected an e-mail address)")]
    Address { name: &'static str, value: String },
    #[error(transparent)]
    Imap(#[from] ImapError),
    #[error(transparent)]
    Smtp(#[from] SmtpError),
    #[error(transparent)]
    Dkim(#[from] DkimConfigError),
}

impl AtlasSettings {
    /// The mailbox to poll (`ATLAS_IMAP_URL`), parsed once.
    pub fn imap_account(&self) -> Result<ImapAccount, SettingsError> {
        let url = self.imap_url.as_ref().ok_or(SettingsError::NoMailbox)?;
        Ok(ImapAccount::parse(url.expose())?)
    }

    /// The SMTP account of the recaps and notices (`ATLAS_SMTP_URL`); None: not configured.
    pub fn smtp(&self) -> Result<Option<SmtpAccount>, SettingsError> {
        Ok(self.smtp_url.as_ref().map(|u| SmtpAccount::parse(u.expose())).transpose()?)
    }

    /// The founder (`ATLAS_FOUNDER_EMAIL`), checked as an address.
    pub fn founder(&self) -> Result<Option<Founder>, SettingsError> {
        Ok(address("ATLAS_FOUNDER_EMAIL", &self.founder_email)?.map(Founder))
    }

    /// Atlas' own address (`ATLAS_MAILBOX_EMAIL`), checked as an address.
    pub fn mailbox(&self) -> Result<Option<EmailAddress>, SettingsError> {
        address("ATLAS_MAILBOX_EMAIL", &self.mailbox_email)
    }

    /// The DKIM verifier: the system resolver, after the static records of `ATLAS_DKIM_KEYS`.
    pub fn dkim(&self) -> Result<DkimVerifier, SettingsError> {
        let records = match &self.dkim_keys {
            Some(path) => DkimVerifier::read_key_file(path)?,
            None => Default::default(),
        };
        Ok(DkimVerifier::system(records)?)
    }

    /// clamd when `ATLAS_CLAMD_ADDR` is set, else one clamscan run per message.
    pub fn scanner(&self) -> Scanner {
        Scanner::from_settings(self.clamd_addr.as_deref(), self.clamscan_db.as_deref())
    }

    /// The launcher's configuration; its worktrees and contracts go under `data_dir`.
    pub fn launcher_config(&self, data_dir: &Path) -> Result<LauncherConfig, SettingsError> {
        Ok(LauncherConfig {
            claude_bin: self.claude_bin.clone().into(),
            repo: self.repo.clone(),
            base_branch: self.base_branch.clone(),
            data_dir: data_dir.to_path_buf(),
            idle_timeout: Duration::from_secs(self.idle_timeout_s),
            hard_timeout: Duration::from_secs(self.hard_timeout_s),
            budget: Duration::from_secs(self.budget_s),
            grace_after_result: Duration::from_secs(5),
            deploy_cmd: self.deploy_cmd.clone(),
            qa_cmd: self.qa_cmd.clone(),
            disabled: self.disabled,
            permission_mode: self.permission_mode.clone(),
            model: self.claude_model.clone(),
            allowed_tools: self.allowed_tools.clone(),
            strict_mcp: self.strict_mcp,
            smtp: self.smtp()?,
            founder: self.founder_email.clone(),
            mailbox: self.mailbox_email.clone(),
            child_env: self.child_env.clone(),
            trust_unsigned_founder: self.trust_unsigned_founder,
            max_retries: self.max_retries,
            use_worktree: self.worktree,
            sandboxed: self.sandboxed,
            max_api_retries: self.api_retries,
        })
    }

    /// The founder's signature under drafts (`ATLAS_FOUNDER_SIGNATURE`, else from the address).
    pub fn signature(&self) -> String {
        if let Some(s) = &self.founder_signature {
            return s.clone();
        }
        match self.founder_email.as_deref().and_then(|e| e.split('@').next()) {
            Some(local) if !local.is_empty() => {
                let name: String = local
                    .split(['.', '_', '-'])
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        let mut c = p.chars();
                        c.next().map(|f| f.to_uppercase().chain(c).collect::<String>()).unwrap_or_default()
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                format!("Bien cordialement,\n{name}")
            }
            _ => "Bien cordialement.".into(),
        }
    }
}

fn address(name: &'static str, value: &Option<String>) -> Result<Option<EmailAddress>, SettingsError> {
    match value {
        None => Ok(None),
        Some(v) => EmailAddress::parse(v).map(Some).ok_or_else(|| SettingsError::Address { name, value: v.clone() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_comes_from_the_setting_or_the_address() {
        let mut s = AtlasSettings { founder_email: Some("jean-marc.dupont@maboite.fr".into()), ..Default::default() };
        assert_eq!(s.signature(), "Bien cordialement,\nJean Marc Dupont");
        s.founder_signature = Some("JM".into());
        assert_eq!(s.signature(), "JM");
        assert_eq!(AtlasSettings::default().signature(), "Bien cordialement.");
    }

    #[test]
    fn bad_addresses_name_their_variable() {
        let s = AtlasSettings { founder_email: Some("pas une adresse".into()), ..Default::default() };
        let e = s.founder().unwrap_err().to_string();
        assert!(e.contains("ATLAS_FOUNDER_EMAIL"), "{e}");
        assert!(matches!(AtlasSettings::default().imap_account(), Err(SettingsError::NoMailbox)));
    }
}
