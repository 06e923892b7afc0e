//! The environment of the processes Atlas starts for a run — Claude Code, the deploy command,
//! the QA command, and git itself (a repository's hooks run inside git): an empty
//! environment plus an allowlist, never Arthur's own. Arthur's environment holds the
//! provider keys, the mailbox and SMTP URLs with their passwords, the database URL and the
//! web token; an agent in `bypassPermissions` mode, driven by an e-mail, can read and print
//! whatever its environment holds, so none of it is there unless the founder lists the name
//! in `ATLAS_CHILD_ENV` (e.g. `ANTHROPIC_API_KEY` when Claude Code authenticates with a key).

use std::fmt;

/// Names every child gets from Arthur's environment, when set: what a shell, git, Node and
/// Claude Code need to find programs, their configuration and the locale.
pub const BASE_NAMES: [&str; 5] = ["PATH", "HOME", "USER", "TZ", "TERM"];
/// …and every name with one of these prefixes (the locale: `LANG`, `LANGUAGE`, `LC_ALL`, …).
pub const BASE_PREFIXES: [&str; 2] = ["LANG", "LC_"];

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid name {0:?} in ATLAS_CHILD_ENV (expected environment variable names separated by commas or spaces)")]
pub struct ChildEnvError(pub String);

/// The names the founder adds (`ATLAS_CHILD_ENV`), validated once.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    extra: Vec<String>,
}

impl fmt::Debug for ChildEnv {
    // Names only: the values are never formatted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildEnv").field("extra", &self.extra).finish()
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl ChildEnv {
    /// `ANTHROPIC_API_KEY, CLAUDE_CONFIG_DIR` (commas and/or spaces).
    pub fn parse(raw: &str) -> Result<Self, ChildEnvError> {
        let mut extra: Vec<String> = Vec::new();
        for name in raw.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()) {
            if !valid_name(name) {
                return Err(ChildEnvError(name.to_string()));
            }
            if !extra.iter().any(|n| n == name) {
                extra.push(name.to_string());
            }
        }
        Ok(Self { extra })
    }

    pub fn from_names(names: &[String]) -> Result<Self, ChildEnvError> {
        Self::parse(&names.join(","))
    }

    /// The names the founder added.
    pub fn extra(&self) -> &[String] {
        &self.extra
    }

    /// Whether `name` passes: a base name, a locale name, or one the founder listed.
    pub fn allows(&self, name: &str) -> bool {
        BASE_NAMES.contains(&name)
            || BASE_PREFIXES.iter().any(|p| name.starts_with(p))
            || self.extra.iter().any(|n| n == name)
    }

    /// The environment a child starts from: the allowed names present in `parent`, then
    /// `given` (the `ATLAS_*` values the launcher sets on purpose), which win.
    pub fn build(
        &self,
        parent: impl IntoIterator<Item = (String, String)>,
        given: &[(String, String)],
    ) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = parent.into_iter().filter(|(k, _)| self.allows(k)).collect();
        out.sort();
        for (k, v) in given {
            out.retain(|(name, _)| name != k);
            out.push((k.clone(), v.clone()));
        }
        out
    }

    /// [`build`](Self::build) from this process's environment (names or values that are not
    /// UTF-8 are left out).
    pub fn for_child(&self, given: &[(String, String)]) -> Vec<(String, String)> {
        self.build(std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))), given)
    }
}

/// Whether this process runs as root (effective uid 0, read from `/proc/self/status`; false
/// where there is no /proc). Claude Code refuses bypassPermissions to root unless the machine
/// is declared a sandbox.
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Uid:"))?;
            // "Uid:\treal\teffective\tsaved\tfs"
            line.split_whitespace().nth(2)?.parse::<u32>().ok()
        })
        .is_some_and(|euid| euid == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent() -> Vec<(String, String)> {
        [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/a"),
            ("LANG", "fr_FR.UTF-8"),
            ("LC_TIME", "fr_FR.UTF-8"),
            ("MISTRAL_API_KEY", "mk"),
            ("ANTHROPIC_API_KEY", "ak"),
            ("OPENAI_API_KEY", "ok"),
            ("ATLAS_IMAP_URL", "imap://u:p@h"),
            ("ATLAS_SMTP_URL", "smtp://u:p@h"),
            ("ARTHUR_DATABASE_URL", "postgres://u:p@h/db"),
            ("ARTHUR_WEB_TOKEN", "t"),
            ("ATLAS_CONTRACT_FILE", "/parent/contract.json"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn only_the_allowlist_and_what_the_launcher_gives() {
        let env = ChildEnv::default().build(parent(), &[("ATLAS_CONTRACT_FILE".into(), "/run/c.json".into())]);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["HOME", "LANG", "LC_TIME", "PATH", "ATLAS_CONTRACT_FILE"]);
        assert!(env.contains(&("ATLAS_CONTRACT_FILE".into(), "/run/c.json".into())), "the launcher's value wins");
        let with_key = ChildEnv::parse("ANTHROPIC_API_KEY").unwrap().build(parent(), &[]);
        assert!(with_key.contains(&("ANTHROPIC_API_KEY".into(), "ak".into())));
        assert!(!with_key.iter().any(|(k, _)| k == "MISTRAL_API_KEY" || k.starts_with("ATLAS_")));
    }

    #[test]
    fn names_are_validated() {
        assert_eq!(ChildEnv::parse(" A_B, C  D,A_B ").unwrap().extra(), ["A_B", "C", "D"]);
        assert_eq!(ChildEnv::parse("").unwrap().extra(), [] as [String; 0]);
        assert_eq!(ChildEnv::parse("OK,NO=1"), Err(ChildEnvError("NO=1".into())));
        assert!(ChildEnv::parse("1ABC").is_err());
    }
}
