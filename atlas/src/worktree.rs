//! Atlas runs Claude Code in an isolated `git worktree` (a dedicated branch forked from the
//! configured base) so that a run never shares the trunk's index with other sessions; the
//! work is merged back only into a clean trunk, any failure of the mechanism falls back to
//! the trunk (never a lost run), and worktrees are removed afterwards (or swept when stale).
//!
//! Everything goes through the `git` command line (`git -C <dir> …`), with no terminal
//! prompt, no editor, no optional locks, the C locale, no hook (a run can write hooks) and
//! only the allowlisted environment (`child_env`); the only commits Atlas creates
//! itself are merge commits, signed `Atlas <atlas@localhost>`. Nothing here forces anything
//! on the trunk: a merge that cannot complete is aborted and the trunk is checked to be
//! exactly as it was.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime};

use tokio::process::Command;

/// Prefix of the branches Atlas creates.
pub const BRANCH_PREFIX: &str = "atlas/";
/// The identity of the merge commits Atlas creates.
pub const ATLAS_NAME: &str = "Atlas";
pub const ATLAS_EMAIL: &str = "atlas@localhost";
/// Longest a single git command may run (a checkout of a large repository is the slow one).
pub const GIT_TIMEOUT: Duration = Duration::from_secs(300);
/// How many `-2`, `-3`, … suffixes are tried when a name is taken.
const MAX_SUFFIX: usize = 100;
/// Longest slug kept from a run name.
const MAX_SLUG: usize = 60;

#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("git {args} failed ({status}): {stderr}")]
    Git { args: String, status: String, stderr: String },
    #[error("git {args} did not finish within {}s", .timeout.as_secs())]
    Timeout { args: String, timeout: Duration },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    #[error("{} is not a git repository", .0.display())]
    NotARepo(PathBuf),
    #[error("the run works in the trunk: commits since the fork need the start commit recorded before the launch")]
    NoStartCommit,
    #[error("branch {0} no longer exists")]
    MissingBranch(String),
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> WorktreeError {
    let context = context.into();
    move |source| WorktreeError::Io { context, source }
}

/// Where the run works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workspace {
    /// A dedicated branch `atlas/<slug>` forked from `base` at `fork_commit`, checked out in
    /// `path` (under `<data_dir>/worktrees/`). `repo` is the trunk (the main checkout).
    Worktree { repo: PathBuf, path: PathBuf, branch: String, base: String, fork_commit: String },
    /// The mechanism failed: the run works in the repository itself (never a lost run);
    /// `reason` is audited by the caller.
    Trunk { repo: PathBuf, reason: String },
}

impl Workspace {
    /// The directory the run works in.
    pub fn dir(&self) -> &Path {
        match self {
            Workspace::Worktree { path, .. } => path,
            Workspace::Trunk { repo, .. } => repo,
        }
    }

    /// The trunk (main checkout) the workspace belongs to.
    pub fn repo(&self) -> &Path {
        match self {
            Workspace::Worktree { repo, .. } | Workspace::Trunk { repo, .. } => repo,
        }
    }

    pub fn is_worktree(&self) -> bool {
        matches!(self, Workspace::Worktree { .. })
    }
}

/// What `merge_back` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// The branch holds no commit that the base lacks.
    NothingToMerge,
    /// The base now contains the branch (fast-forward or an Atlas merge commit); `sha` is
    /// the trunk's new HEAD.
    Merged { commits: usize, sha: String },
    /// The trunk has uncommitted changes to tracked files, an operation in progress, or
    /// untracked files the merge would overwrite: nothing was touched.
    TrunkDirty,
    /// The trunk is checked out on another branch (or detached) than the base: nothing was
    /// touched. `head` is the branch name, or the commit when detached.
    TrunkNotOnBase { head: String },
    /// The merge conflicted and was aborted; the trunk is exactly as it was.
    Conflict { detail: String },
    /// The run worked in the trunk: there is nothing to merge back.
    NotAWorktree,
}

/// What `cleanup` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanupOutcome {
    /// The worktree directory was removed (false when it was already gone, or for the trunk).
    pub removed_dir: bool,
    /// The branch was merged into the base (or had no commits) and was deleted.
    pub branch_deleted: bool,
    /// The branch holds commits the base lacks: it is kept, under this name.
    pub kept_branch: Option<String>,
    /// How many commits the kept branch holds that the base lacks.
    pub unmerged_commits: usize,
    /// Tracked files that had uncommitted changes in the removed worktree (the run's
    /// contract is to commit; these are reported, not kept).
    pub discarded_changes: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Running git

struct GitOut {
    ok: bool,
    status: String,
    stdout: String,
    stderr: String,
}

/// Runs `git -C dir args…` with a deterministic, non-interactive environment.
async fn git_raw<S: AsRef<OsStr>>(dir: &Path, args: &[S], identity: bool) -> Result<GitOut, WorktreeError> {
    let shown = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ");
    let mut cmd = Command::new("git");
    // A run's agent can write into the repository's hooks directory: Atlas' own git commands
    // run no hook, and see none of Arthur's environment (its secrets) either.
    cmd.arg("-C").arg(dir).args(["-c", "core.hooksPath=/dev/null"]).args(args);
    cmd.env_clear().envs(super::child_env::ChildEnv::default().for_child(&[]));
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_MERGE_AUTOEDIT", "no")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .env("LANGUAGE", "C");
    if identity {
        cmd.env("GIT_AUTHOR_NAME", ATLAS_NAME)
            .env("GIT_AUTHOR_EMAIL", ATLAS_EMAIL)
            .env("GIT_COMMITTER_NAME", ATLAS_NAME)
            .env("GIT_COMMITTER_EMAIL", ATLAS_EMAIL);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let child = cmd.spawn().map_err(io_err(format!("starting git {shown}")))?;
    let out = match tokio::time::timeout(GIT_TIMEOUT, child.wait_with_output()).await {
        Ok(out) => out.map_err(io_err(format!("running git {shown}")))?,
        Err(_) => return Err(WorktreeError::Timeout { args: shown, timeout: GIT_TIMEOUT }),
    };
    Ok(GitOut {
        ok: out.status.success(),
        status: out.status.to_string(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// Runs git and requires success; returns stdout trimmed.
async fn git<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<String, WorktreeError> {
    let out = git_raw(dir, args, false).await?;
    if out.ok {
        Ok(out.stdout.trim().to_string())
    } else {
        Err(WorktreeError::Git {
            args: args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect::<Vec<_>>().join(" "),
            status: out.status,
            stderr: out.stderr,
        })
    }
}

/// Runs git and returns stdout when it succeeds, `None` when it exits non-zero (a query
/// whose negative answer is a non-zero exit: `--verify --quiet`, `--is-ancestor`, …).
async fn git_opt<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<Option<String>, WorktreeError> {
    let out = git_raw(dir, args, false).await?;
    Ok(out.ok.then(|| out.stdout.trim().to_string()))
}

async fn resolve_commit(dir: &Path, rev: &str) -> Result<Option<String>, WorktreeError> {
    git_opt(dir, &["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")]).await
}

async fn branch_sha(dir: &Path, branch: &str) -> Result<Option<String>, WorktreeError> {
    resolve_commit(dir, &format!("refs/heads/{branch}")).await
}

async fn count(dir: &Path, range: &str) -> Result<usize, WorktreeError> {
    let n = git(dir, &["rev-list", "--count", range]).await?;
    Ok(n.parse().unwrap_or(0))
}

async fn is_ancestor(dir: &Path, ancestor: &str, descendant: &str) -> Result<bool, WorktreeError> {
    Ok(git_opt(dir, &["merge-base", "--is-ancestor", ancestor, descendant]).await?.is_some())
}

/// The commit checked out in `dir`, or `None` in a repository without commits. The caller
/// records it before a run in the trunk, for `commits_since_fork`.
pub async fn head_commit(dir: &Path) -> Result<Option<String>, WorktreeError> {
    resolve_commit(dir, "HEAD").await
}

/// The branch checked out in `dir`, `None` when HEAD is detached.
async fn current_branch(dir: &Path) -> Result<Option<String>, WorktreeError> {
    Ok(git_opt(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]).await?.filter(|b| !b.is_empty()))
}

/// Tracked files with uncommitted changes (staged or not) in `dir`.
async fn tracked_changes(dir: &Path) -> Result<Vec<String>, WorktreeError> {
    let args = ["status", "--porcelain=v1", "--untracked-files=no", "--ignore-submodules=none"];
    let out = git_raw(dir, &args, false).await?;
    if !out.ok {
        return Err(WorktreeError::Git { args: args.join(" "), status: out.status, stderr: out.stderr });
    }
    // Not trimmed: the first column of `XY path` may be a space.
    Ok(out.stdout.lines().filter(|l| !l.trim().is_empty()).map(|l| l.get(3..).unwrap_or(l).to_string()).collect())
}

/// Whether a merge, rebase, cherry-pick, revert or bisect is in progress in `dir`.
async fn operation_in_progress(dir: &Path) -> Result<bool, WorktreeError> {
    for head in ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"] {
        if resolve_commit(dir, head).await?.is_some() {
            return Ok(true);
        }
    }
    for marker in ["rebase-merge", "rebase-apply", "BISECT_LOG"] {
        let p = git(dir, &["rev-parse", "--path-format=absolute", "--git-path", marker]).await?;
        if Path::new(&p).exists() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The worktrees `git worktree list` knows for `repo`: (path, locked).
async fn registered_worktrees(repo: &Path) -> Result<Vec<(PathBuf, bool)>, WorktreeError> {
    let out = git(repo, &["worktree", "list", "--porcelain"]).await?;
    let mut list: Vec<(PathBuf, bool)> = Vec::new();
    for line in out.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            list.push((PathBuf::from(p), false));
        } else if line == "locked" || line.starts_with("locked ") {
            if let Some(last) = list.last_mut() {
                last.1 = true;
            }
        }
    }
    Ok(list)
}

fn same_path(a: &Path, b: &Path) -> bool {
    let ca = std::fs::canonicalize(a).unwrap_or_else(|_| a.to_path_buf());
    let cb = std::fs::canonicalize(b).unwrap_or_else(|_| b.to_path_buf());
    ca == cb
}

// ---------------------------------------------------------------------------------------
// prepare

/// A branch- and directory-safe slug of a run name: lower-case ASCII letters, digits, `-`
/// and `_`, at most 60 characters, never empty.
pub fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '_' {
            s.push(c);
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s: String = s.trim_matches('-').chars().take(MAX_SLUG).collect();
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() {
        "run".to_string()
    } else {
        s
    }
}

/// Creates the worktree for a run (`name`, e.g. "email-42-1"), forked from `base` (the
/// configured branch) or, without one, from the branch the trunk has checked out. Any
/// failure of the mechanism gives `Ok(Workspace::Trunk { reason })`; only a `repo` that is
/// not a git repository at all is an error. A name already taken (branch or directory) gets
/// a `-2`, `-3`, … suffix: nothing existing is reused or overwritten.
pub async fn prepare(
    repo: &Path,
    worktrees_dir: &Path,
    name: &str,
    base: Option<&str>,
) -> Result<Workspace, WorktreeError> {
    if !repo.is_dir() {
        return Err(WorktreeError::NotARepo(repo.to_path_buf()));
    }
    let trunk = |repo: &Path, reason: String| Ok(Workspace::Trunk { repo: repo.to_path_buf(), reason });
    let bare = match git_raw(repo, &["rev-parse", "--is-bare-repository"], false).await {
        Ok(out) if out.ok => out.stdout.trim() == "true",
        Ok(out) if out.stderr.contains("not a git repository") => {
            return Err(WorktreeError::NotARepo(repo.to_path_buf()))
        }
        Ok(out) => return trunk(repo, format!("git cannot read the repository: {}", out.stderr)),
        Err(e) => return trunk(repo, format!("git unavailable: {e}")),
    };
    if bare {
        return trunk(repo, "the repository is bare (no working tree)".to_string());
    }
    let top = match git(repo, &["rev-parse", "--show-toplevel"]).await {
        Ok(top) if !top.is_empty() => PathBuf::from(top),
        Ok(_) => return trunk(repo, "git gave no top-level directory".to_string()),
        Err(e) => return trunk(repo, format!("the repository's top level is unknown: {e}")),
    };
    match create(&top, worktrees_dir, name, base).await {
        Ok(ws) => Ok(ws),
        Err(reason) => trunk(&top, reason),
    }
}

/// The worktree, or the reason the run falls back to the trunk.
async fn create(top: &Path, worktrees_dir: &Path, name: &str, base: Option<&str>) -> Result<Workspace, String> {
    let e = |what: &str, e: WorktreeError| format!("{what}: {e}");
    if head_commit(top).await.map_err(|x| e("reading HEAD", x))?.is_none()
        && git(top, &["rev-list", "-n", "1", "--all"]).await.map_err(|x| e("listing commits", x))?.is_empty()
    {
        return Err("the repository has no commits yet".to_string());
    }
    let base = match base.map(str::trim).filter(|b| !b.is_empty()) {
        Some(b) => b.strip_prefix("refs/heads/").unwrap_or(b).to_string(),
        None => match current_branch(top).await.map_err(|x| e("reading the current branch", x))? {
            Some(b) => b,
            None => return Err("no base branch configured and the trunk's HEAD is detached".to_string()),
        },
    };
    let Some(fork_commit) = branch_sha(top, &base).await.map_err(|x| e("resolving the base", x))? else {
        return Err(format!("the base branch '{base}' does not exist (or has no commits)"));
    };

    std::fs::create_dir_all(worktrees_dir)
        .map_err(|x| format!("cannot create the worktrees directory {}: {x}", worktrees_dir.display()))?;
    let dir = std::fs::canonicalize(worktrees_dir)
        .map_err(|x| format!("cannot resolve the worktrees directory {}: {x}", worktrees_dir.display()))?;
    if dir.starts_with(top) {
        return Err(format!("the worktrees directory {} is inside the repository {}", dir.display(), top.display()));
    }

    let stem = slug(name);
    for n in 1..=MAX_SUFFIX {
        let candidate = if n == 1 { stem.clone() } else { format!("{stem}-{n}") };
        let branch = format!("{BRANCH_PREFIX}{candidate}");
        if git(top, &["check-ref-format", "--branch", &branch]).await.is_err() {
            return Err(format!("'{branch}' is not a valid branch name"));
        }
        if branch_sha(top, &branch).await.map_err(|x| e("checking the branch", x))?.is_some() {
            continue;
        }
        let path = dir.join(&candidate);
        // Claiming the directory is atomic: a concurrent prepare with the same name gets
        // AlreadyExists and moves on to the next suffix.
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(x) if x.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(x) => return Err(format!("cannot create {} (worktrees directory not writable?): {x}", path.display())),
        }
        let args: Vec<&OsStr> = vec![
            "worktree".as_ref(),
            "add".as_ref(),
            "--quiet".as_ref(),
            "-b".as_ref(),
            branch.as_ref(),
            path.as_os_str(),
            fork_commit.as_ref(),
        ];
        let out = match git_raw(top, &args, false).await {
            Ok(out) => out,
            Err(x) => {
                undo_failed_add(top, &path, &branch, &fork_commit, true).await;
                return Err(e("git worktree add", x));
            }
        };
        if out.ok {
            return Ok(Workspace::Worktree { repo: top.to_path_buf(), path, branch, base, fork_commit });
        }
        if out.stderr.contains("already exists") {
            // Lost a race for the branch name: the other one's branch is left alone.
            undo_failed_add(top, &path, &branch, &fork_commit, false).await;
            continue;
        }
        undo_failed_add(top, &path, &branch, &fork_commit, true).await;
        return Err(format!("git worktree add failed ({}): {}", out.status, out.stderr));
    }
    Err(format!("no free name for '{stem}' after {MAX_SUFFIX} tries"))
}

/// Best effort after a failed `git worktree add`: the directory we claimed, git's metadata,
/// and (when we created it) the branch if it still points at the fork.
async fn undo_failed_add(top: &Path, path: &Path, branch: &str, fork_commit: &str, ours: bool) {
    if let Ok(list) = registered_worktrees(top).await {
        if list.iter().any(|(p, _)| same_path(p, path)) {
            let _ = git(top, &["worktree".as_ref(), "remove".as_ref(), "--force".as_ref(), path.as_os_str()]).await;
        }
    }
    if path.exists() && is_removable_worktree_dir(path) {
        let _ = std::fs::remove_dir_all(path);
    }
    let _ = git(top, &["worktree", "prune"]).await;
    if ours {
        let _ = git(top, &["update-ref", "-d", &format!("refs/heads/{branch}"), fork_commit]).await;
    }
}

/// The workspace of a retry: the kept branch of an earlier attempt, so that the retry
/// continues its commits instead of starting over. Its worktree when it is still there (and
/// on that branch), else a new worktree of the branch (`<name>-retry`, `-2`, …). The branch
/// must exist: otherwise `MissingBranch`, and the caller starts afresh.
pub async fn reopen(
    repo: &Path,
    worktrees_dir: &Path,
    previous_dir: &Path,
    branch: &str,
    fork_commit: &str,
    base: Option<&str>,
) -> Result<Workspace, WorktreeError> {
    let top = PathBuf::from(git(repo, &["rev-parse", "--show-toplevel"]).await?);
    if branch_sha(&top, branch).await?.is_none() {
        return Err(WorktreeError::MissingBranch(branch.to_string()));
    }
    let base = match base.map(str::trim).filter(|b| !b.is_empty()) {
        Some(b) => b.strip_prefix("refs/heads/").unwrap_or(b).to_string(),
        None => current_branch(&top).await?.ok_or_else(|| WorktreeError::Git {
            args: "symbolic-ref HEAD".into(),
            status: "detached".into(),
            stderr: "no base branch configured and the trunk's HEAD is detached".into(),
        })?,
    };
    let registered = registered_worktrees(&top).await?;
    if previous_dir.join(".git").exists() && registered.iter().any(|(p, _)| same_path(p, previous_dir)) {
        let on = current_branch(previous_dir).await?;
        if on.as_deref() == Some(branch) {
            return Ok(Workspace::Worktree {
                repo: top,
                path: previous_dir.to_path_buf(),
                branch: branch.to_string(),
                base,
                fork_commit: fork_commit.to_string(),
            });
        }
    }
    // The directory is gone (swept, or removed by hand): a new worktree of the same branch.
    let _ = git(&top, &["worktree", "prune"]).await;
    std::fs::create_dir_all(worktrees_dir).map_err(io_err(format!("creating {}", worktrees_dir.display())))?;
    let dir = std::fs::canonicalize(worktrees_dir).map_err(io_err(format!("resolving {}", worktrees_dir.display())))?;
    let stem = format!("{}-retry", slug(branch.strip_prefix(BRANCH_PREFIX).unwrap_or(branch)));
    for n in 1..=MAX_SUFFIX {
        let path = dir.join(if n == 1 { stem.clone() } else { format!("{stem}-{n}") });
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(x) if x.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(x) => return Err(WorktreeError::Io { context: format!("creating {}", path.display()), source: x }),
        }
        let args: Vec<&OsStr> =
            vec!["worktree".as_ref(), "add".as_ref(), "--quiet".as_ref(), path.as_os_str(), branch.as_ref()];
        let out = git_raw(&top, &args, false).await?;
        if out.ok {
            return Ok(Workspace::Worktree {
                repo: top,
                path,
                branch: branch.to_string(),
                base,
                fork_commit: fork_commit.to_string(),
            });
        }
        let _ = std::fs::remove_dir(&path);
        return Err(WorktreeError::Git {
            args: format!("worktree add {} {branch}", path.display()),
            status: out.status,
            stderr: out.stderr,
        });
    }
    Err(WorktreeError::Io {
        context: format!("no free directory for a worktree of {branch}"),
        source: io::Error::new(io::ErrorKind::AlreadyExists, "taken"),
    })
}

// ---------------------------------------------------------------------------------------
// commits

/// Commits made in the workspace since the fork: (sha, subject), oldest first. In a
/// worktree, `since` (when given) replaces the fork commit as the start (an iteration's
/// own commits); once the directory is gone the branch is read instead. In the trunk,
/// `since` is required: the commit the caller recorded before the launch (`head_commit`).
pub async fn commits_since_fork(ws: &Workspace, since: Option<&str>) -> Result<Vec<(String, String)>, WorktreeError> {
    let (dir, start, tip) = match ws {
        Workspace::Worktree { repo, path, branch, fork_commit, .. } => {
            let start = since.unwrap_or(fork_commit).to_string();
            if path.join(".git").exists() {
                (path.clone(), start, "HEAD".to_string())
            } else if branch_sha(repo, branch).await?.is_some() {
                (repo.clone(), start, format!("refs/heads/{branch}"))
            } else {
                return Err(WorktreeError::MissingBranch(branch.clone()));
            }
        }
        Workspace::Trunk { repo, .. } => {
            let start = since.ok_or(WorktreeError::NoStartCommit)?;
            (repo.clone(), start.to_string(), "HEAD".to_string())
        }
    };
    let out = git(&dir, &["log", "--reverse", "--format=%H %s", &format!("{start}..{tip}"), "--"]).await?;
    Ok(out
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once(' ') {
            Some((sha, subject)) => (sha.to_string(), subject.to_string()),
            None => (l.to_string(), String::new()),
        })
        .collect())
}

/// The full sha of `cited` (a sha or a prefix of one, as an agent writes it) when it names a
/// commit on the workspace's branch (its tip or an ancestor); `None` when no such commit is
/// there. Only hex text of 4 to 40 characters is looked up: anything else is no commit.
pub async fn find_on_branch(ws: &Workspace, cited: &str) -> Result<Option<String>, WorktreeError> {
    let cited = cited.trim();
    if !(4..=40).contains(&cited.len()) || !cited.chars().all(|c| c.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let (dir, tip) = match ws {
        Workspace::Worktree { repo, path, branch, .. } => {
            if path.join(".git").exists() {
                (path.clone(), "HEAD".to_string())
            } else if branch_sha(repo, branch).await?.is_some() {
                (repo.clone(), format!("refs/heads/{branch}"))
            } else {
                return Ok(None);
            }
        }
        Workspace::Trunk { repo, .. } => (repo.clone(), "HEAD".to_string()),
    };
    let Some(sha) = resolve_commit(&dir, cited).await? else { return Ok(None) };
    Ok(is_ancestor(&dir, &sha, &tip).await?.then_some(sha))
}

// ---------------------------------------------------------------------------------------
// merge_back

/// Merges the run's branch into `base` in the trunk, only when the trunk is checked out on
/// `base` with no uncommitted change to tracked files and no operation in progress:
/// fast-forward when the base did not move, else a merge commit by `Atlas <atlas@localhost>`.
/// A conflict aborts the merge; the trunk is then verified to be exactly as it was.
pub async fn merge_back(ws: &Workspace) -> Result<MergeOutcome, WorktreeError> {
    let Workspace::Worktree { repo, branch, base, .. } = ws else {
        return Ok(MergeOutcome::NotAWorktree);
    };
    let Some(tip) = branch_sha(repo, branch).await? else {
        return Err(WorktreeError::MissingBranch(branch.clone()));
    };
    let Some(base_sha) = branch_sha(repo, base).await? else {
        return Err(WorktreeError::MissingBranch(base.clone()));
    };
    if count(repo, &format!("{base_sha}..{tip}")).await? == 0 {
        return Ok(MergeOutcome::NothingToMerge);
    }
    match current_branch(repo).await? {
        Some(b) if &b == base => {}
        Some(b) => return Ok(MergeOutcome::TrunkNotOnBase { head: b }),
        None => {
            let head = head_commit(repo).await?.unwrap_or_default();
            return Ok(MergeOutcome::TrunkNotOnBase { head });
        }
    }
    if operation_in_progress(repo).await? || !tracked_changes(repo).await?.is_empty() {
        return Ok(MergeOutcome::TrunkDirty);
    }
    // The trunk's HEAD is `base`; read it again through HEAD (it may have moved since).
    let before = head_commit(repo).await?.unwrap_or(base_sha);
    let commits = count(repo, &format!("{before}..{tip}")).await?;
    if commits == 0 {
        return Ok(MergeOutcome::NothingToMerge);
    }
    let fast_forward = is_ancestor(repo, &before, &tip).await?;
    let message = format!("Atlas: merge {branch} into {base}");
    let mut args: Vec<&str> = vec!["merge", "--no-autostash", "--no-squash", "--no-gpg-sign", "--no-edit"];
    if fast_forward {
        args.push("--ff-only");
    } else {
        args.extend(["--no-ff", "--no-rerere-autoupdate", "-m", &message]);
    }
    args.push(&tip);
    let out = git_raw(repo, &args, !fast_forward).await?;
    if out.ok {
        let sha = head_commit(repo).await?.unwrap_or_default();
        return Ok(MergeOutcome::Merged { commits, sha });
    }

    // The merge failed: put the trunk back and say why.
    let in_merge = resolve_commit(repo, "MERGE_HEAD").await?.is_some();
    let conflicted = if in_merge {
        git(repo, &["diff", "--name-only", "--diff-filter=U"]).await.unwrap_or_default()
    } else {
        String::new()
    };
    if in_merge {
        git(repo, &["merge", "--abort"]).await?;
    }
    let after = head_commit(repo).await?.unwrap_or_default();
    let changes = tracked_changes(repo).await?;
    if after != before || !changes.is_empty() {
        return Err(WorktreeError::Git {
            args: args.join(" "),
            status: out.status,
            stderr: format!(
                "{}; the trunk could not be restored (HEAD {after}, expected {before}; changed: {})",
                out.stderr,
                changes.join(", ")
            ),
        });
    }
    if in_merge {
        let files = conflicted.lines().collect::<Vec<_>>().join(", ");
        let detail = if files.is_empty() {
            format!("merge of {branch} into {base} aborted: {}", out.stderr)
        } else {
            format!("merge of {branch} into {base} aborted, conflict in: {files}")
        };
        return Ok(MergeOutcome::Conflict { detail });
    }
    if out.stderr.contains("would be overwritten") || out.stderr.contains("untracked working tree files") {
        return Ok(MergeOutcome::TrunkDirty);
    }
    Err(WorktreeError::Git { args: args.join(" "), status: out.status, stderr: out.stderr })
}

// ---------------------------------------------------------------------------------------
// cleanup and sweep

/// Removes the worktree directory and prunes git's metadata, then deletes the branch when
/// the base contains it (merged, or no commits). A branch holding commits the base lacks is
/// never deleted: it is kept and named in the outcome. Uncommitted changes in the worktree
/// are discarded and listed. The trunk gives an empty outcome.
pub async fn cleanup(ws: &Workspace) -> Result<CleanupOutcome, WorktreeError> {
    let Workspace::Worktree { repo, path, branch, base, fork_commit } = ws else {
        return Ok(CleanupOutcome::default());
    };
    let mut outcome = CleanupOutcome::default();
    if path.exists() {
        if path.join(".git").exists() {
            outcome.discarded_changes = tracked_changes(path).await.unwrap_or_default();
        }
        let registered = registered_worktrees(repo).await?.into_iter().find(|(p, _)| same_path(p, path));
        if let Some((_, locked)) = registered {
            if locked {
                return Err(WorktreeError::Git {
                    args: format!("worktree remove {}", path.display()),
                    status: "refused".to_string(),
                    stderr: "the worktree is locked".to_string(),
                });
            }
            git(repo, &["worktree".as_ref(), "remove".as_ref(), "--force".as_ref(), path.as_os_str()]).await?;
        }
        if path.exists() {
            if !is_removable_worktree_dir(path) {
                return Err(WorktreeError::Io {
                    context: format!("{} does not look like an Atlas worktree; left in place", path.display()),
                    source: io::Error::new(io::ErrorKind::InvalidData, "not a worktree"),
                });
            }
            let p = path.clone();
            tokio::task::spawn_blocking(move || std::fs::remove_dir_all(p))
                .await
                .map_err(|j| WorktreeError::Io {
                    context: "removing the worktree".into(),
                    source: io::Error::other(j),
                })?
                .map_err(io_err(format!("removing {}", path.display())))?;
        }
        outcome.removed_dir = true;
    }
    git(repo, &["worktree", "prune"]).await?;

    let Some(tip) = branch_sha(repo, branch).await? else {
        return Ok(outcome);
    };
    let merged = match branch_sha(repo, base).await? {
        Some(base_sha) => is_ancestor(repo, &tip, &base_sha).await?,
        None => false,
    };
    if merged || tip == *fork_commit {
        // Compare-and-delete: only if the branch still points where we looked.
        git(repo, &["update-ref", "-d", &format!("refs/heads/{branch}"), &tip]).await?;
        outcome.branch_deleted = true;
    } else {
        outcome.unmerged_commits = match branch_sha(repo, base).await? {
            Some(base_sha) => count(repo, &format!("{base_sha}..{tip}")).await?,
            None => count(repo, &format!("{fork_commit}..{tip}")).await?,
        };
        outcome.kept_branch = Some(branch.clone());
    }
    Ok(outcome)
}

/// Removes the stale worktrees under `worktrees_dir`: those whose last activity (the
/// directory, its `.git` file, its index, HEAD and HEAD log) is older than `max_age`.
/// Only linked worktrees (a `.git` file pointing into a `worktrees/` admin directory) and
/// empty leftovers are touched; locked worktrees and anything containing the repository are
/// skipped. Branches are kept (their commits are never lost). Returns how many were removed
/// and the bytes freed.
pub async fn sweep(repo: &Path, worktrees_dir: &Path, max_age: Duration) -> Result<(usize, u64), WorktreeError> {
    let top = match git(repo, &["rev-parse", "--show-toplevel"]).await {
        Ok(top) if !top.is_empty() => PathBuf::from(top),
        Ok(_) | Err(WorktreeError::Git { .. }) => return Err(WorktreeError::NotARepo(repo.to_path_buf())),
        Err(e) => return Err(e),
    };
    let top = std::fs::canonicalize(&top).unwrap_or(top);
    let Ok(dir) = std::fs::canonicalize(worktrees_dir) else {
        return Ok((0, 0));
    };
    let registered = registered_worktrees(&top).await?;
    let entries = std::fs::read_dir(&dir).map_err(io_err(format!("reading {}", dir.display())))?;
    let now = SystemTime::now();
    let mut removed = 0;
    let mut freed = 0u64;
    for entry in entries {
        let entry = entry.map_err(io_err(format!("reading {}", dir.display())))?;
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.is_dir() || top.starts_with(&path) {
            continue;
        }
        let reg = registered.iter().find(|(p, _)| same_path(p, &path));
        if matches!(reg, Some((_, true))) {
            continue;
        }
        if reg.is_none() && !is_removable_worktree_dir(&path) {
            continue;
        }
        let last = last_activity(&path);
        if now.duration_since(last).unwrap_or_default() < max_age {
            continue;
        }
        let p = path.clone();
        let bytes = tokio::task::spawn_blocking(move || dir_size(&p)).await.unwrap_or(0);
        if reg.is_some() {
            let _ = git(&top, &["worktree".as_ref(), "remove".as_ref(), "--force".as_ref(), path.as_os_str()]).await;
        }
        if path.exists() {
            let p = path.clone();
            let res = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(p)).await.map_err(|j| {
                WorktreeError::Io { context: "removing a worktree".into(), source: io::Error::other(j) }
            })?;
            if res.is_err() && path.exists() {
                continue;
            }
        }
        removed += 1;
        freed += bytes;
    }
    git(&top, &["worktree", "prune"]).await?;
    Ok((removed, freed))
}

/// A directory this module may delete: a linked worktree (its `.git` is a file whose
/// `gitdir:` points into a `worktrees/` admin directory) or an empty directory.
fn is_removable_worktree_dir(path: &Path) -> bool {
    if let Ok(mut it) = std::fs::read_dir(path) {
        if it.next().is_none() {
            return true;
        }
    }
    match admin_dir(path) {
        Some(admin) => admin.parent().and_then(Path::file_name) == Some(OsStr::new("worktrees")),
        None => false,
    }
}

/// The admin directory named by a linked worktree's `.git` file.
fn admin_dir(path: &Path) -> Option<PathBuf> {
    let dotgit = path.join(".git");
    if !std::fs::symlink_metadata(&dotgit).ok()?.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&dotgit).ok()?;
    let gitdir = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let gitdir = Path::new(gitdir);
    Some(if gitdir.is_absolute() { gitdir.to_path_buf() } else { path.join(gitdir) })
}

/// The latest modification among the places a run touches.
fn last_activity(path: &Path) -> SystemTime {
    let mut places = vec![path.to_path_buf(), path.join(".git")];
    if let Some(admin) = admin_dir(path) {
        places.extend([admin.join("index"), admin.join("HEAD"), admin.join("logs").join("HEAD")]);
    }
    places
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).and_then(|m| m.modified()).ok())
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Apparent size of the regular files under `path`, symbolic links not followed.
fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.flatten().map(|e| e.path()));
            }
        } else if meta.is_file() {
            total += meta.len();
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_branch_and_path_safe() {
        assert_eq!(slug("email-42-1"), "email-42-1");
        assert_eq!(slug("Email 42/1"), "email-42-1");
        assert_eq!(slug("../../etc"), "etc");
        assert_eq!(slug("x.lock"), "x-lock");
        assert_eq!(slug("  "), "run");
        assert_eq!(slug("é"), "run");
        assert_eq!(slug(&"a".repeat(200)).len(), 60);
    }
}
