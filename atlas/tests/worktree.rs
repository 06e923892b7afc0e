//! Worktrees and merge-back against real git repositories in temp dirs (`support::git`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use arthur_atlas::worktree::{
    cleanup, commits_since_fork, head_commit, merge_back, prepare, reopen, sweep, MergeOutcome, Workspace,
    WorktreeError,
};

use crate::support::git::{git, git_repo};

/// Writes `file` in `dir` and commits it; returns the new commit.
fn commit_file(dir: &Path, file: &str, content: &str, message: &str) -> String {
    if let Some(parent) = Path::new(file).parent() {
        fs::create_dir_all(dir.join(parent)).unwrap();
    }
    fs::write(dir.join(file), content).unwrap();
    git(dir, &["add", file]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

fn worktree_parts(ws: &Workspace) -> (PathBuf, PathBuf, String, String, String) {
    match ws {
        Workspace::Worktree { repo, path, branch, base, fork_commit } => {
            (repo.clone(), path.clone(), branch.clone(), base.clone(), fork_commit.clone())
        }
        Workspace::Trunk { reason, .. } => panic!("expected a worktree, fell back to the trunk: {reason}"),
    }
}

fn trunk_reason(ws: &Workspace) -> &str {
    match ws {
        Workspace::Trunk { reason, .. } => reason,
        other => panic!("expected the trunk fallback, got {other:?}"),
    }
}

fn head(dir: &Path) -> String {
    git(dir, &["rev-parse", "HEAD"])
}

fn branch_exists(repo: &Path, branch: &str) -> bool {
    !git(repo, &["branch", "--list", branch]).is_empty()
}

fn listed(repo: &Path, path: &Path) -> bool {
    let real = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .any(|p| Path::new(p) == real || Path::new(p) == path)
}

struct Fixture {
    repo: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture { repo: git_repo(), data: tempfile::tempdir().unwrap() }
    }
    fn repo(&self) -> &Path {
        self.repo.path()
    }
    fn worktrees(&self) -> PathBuf {
        self.data.path().join("worktrees")
    }
    async fn prepare(&self, name: &str) -> Workspace {
        prepare(self.repo(), &self.worktrees(), name, None).await.unwrap()
    }
}

#[tokio::test]
async fn prepare_creates_an_isolated_checkout_on_a_new_branch() {
    let f = Fixture::new();
    let trunk_head = head(f.repo());
    let ws = f.prepare("email-42-1").await;
    let (repo, path, branch, base, fork) = worktree_parts(&ws);

    assert_eq!(fs::canonicalize(&repo).unwrap(), fs::canonicalize(f.repo()).unwrap());
    assert_eq!(branch, "atlas/email-42-1");
    assert_eq!(base, "main");
    assert_eq!(fork, trunk_head);
    assert_eq!(ws.dir(), path.as_path());
    assert!(path.starts_with(fs::canonicalize(f.worktrees()).unwrap()), "{}", path.display());
    assert!(listed(f.repo(), &path));
    assert_eq!(git(&path, &["symbolic-ref", "--short", "HEAD"]), "atlas/email-42-1");
    assert_eq!(git(f.repo(), &["symbolic-ref", "--short", "HEAD"]), "main");

    // A change made in the worktree does not appear in the trunk, committed or not.
    fs::write(path.join("README.md"), "changed in the worktree\n").unwrap();
    fs::write(path.join("new.txt"), "new\n").unwrap();
    assert_eq!(fs::read_to_string(f.repo().join("README.md")).unwrap(), "# projet\n");
    assert!(!f.repo().join("new.txt").exists());
    assert_eq!(git(f.repo(), &["status", "--porcelain"]), "");
    commit_file(&path, "new.txt", "new\n", "add new");
    assert!(!f.repo().join("new.txt").exists());
    assert_eq!(head(f.repo()), trunk_head);
}

#[tokio::test]
async fn prepare_with_an_explicit_base_forks_from_it() {
    let f = Fixture::new();
    git(f.repo(), &["branch", "preprod"]);
    git(f.repo(), &["checkout", "-q", "preprod"]);
    let preprod = commit_file(f.repo(), "pre.txt", "pre\n", "preprod work");
    git(f.repo(), &["checkout", "-q", "main"]);

    let ws = prepare(f.repo(), &f.worktrees(), "email-7-1", Some("preprod")).await.unwrap();
    let (_, path, _, base, fork) = worktree_parts(&ws);
    assert_eq!(base, "preprod");
    assert_eq!(fork, preprod);
    assert!(path.join("pre.txt").exists());
    // The trunk is on main: merging back into preprod is refused without touching anything.
    commit_file(&path, "a.txt", "a\n", "a");
    assert_eq!(merge_back(&ws).await.unwrap(), MergeOutcome::TrunkNotOnBase { head: "main".into() });
    assert_eq!(git(f.repo(), &["rev-parse", "preprod"]), preprod);
}

#[tokio::test]
async fn commits_since_fork_lists_exactly_the_commits_made_there() {
    let f = Fixture::new();
    let ws = f.prepare("email-1-1").await;
    let (_, path, _, _, _) = worktree_parts(&ws);
    assert_eq!(commits_since_fork(&ws, None).await.unwrap(), vec![]);

    let a = commit_file(&path, "a.txt", "a\n", "first change");
    // A commit in the trunk after the fork is not the run's.
    commit_file(f.repo(), "trunk.txt", "t\n", "trunk work");
    let b = commit_file(&path, "src/b.rs", "fn b() {}\n", "second change: with a colon");

    let commits = commits_since_fork(&ws, None).await.unwrap();
    assert_eq!(
        commits,
        vec![(a.clone(), "first change".to_string()), (b.clone(), "second change: with a colon".to_string())]
    );
    // `since` restarts the count (an iteration's own commits).
    assert_eq!(commits_since_fork(&ws, Some(&a)).await.unwrap(), vec![(b, "second change: with a colon".into())]);
}

#[tokio::test]
async fn commits_since_fork_in_the_trunk_needs_the_recorded_start() {
    let f = Fixture::new();
    let start = head_commit(f.repo()).await.unwrap().unwrap();
    let ws = Workspace::Trunk { repo: f.repo().to_path_buf(), reason: "test".into() };
    assert!(matches!(commits_since_fork(&ws, None).await, Err(WorktreeError::NoStartCommit)));
    let c = commit_file(f.repo(), "x.txt", "x\n", "in the trunk");
    assert_eq!(commits_since_fork(&ws, Some(&start)).await.unwrap(), vec![(c, "in the trunk".to_string())]);
    assert_eq!(merge_back(&ws).await.unwrap(), MergeOutcome::NotAWorktree);
    assert_eq!(cleanup(&ws).await.unwrap(), Default::default());
}

#[tokio::test]
async fn merge_back_fast_forwards_when_the_trunk_did_not_move() {
    let f = Fixture::new();
    let before = head(f.repo());
    let ws = f.prepare("email-2-1").await;
    let (_, path, _, _, _) = worktree_parts(&ws);
    assert_eq!(merge_back(&ws).await.unwrap(), MergeOutcome::NothingToMerge);
    assert_eq!(head(f.repo()), before);

    commit_file(&path, "a.txt", "a\n", "a");
    let tip = commit_file(&path, "b.txt", "b\n", "b");
    assert_eq!(
        merge_back(&ws).await.unwrap(),
        MergeOutcome::Merged { commits: 2, sha: tip.clone() },
        "the trunk's new HEAD"
    );

    // Fast-forward: the trunk's HEAD is the branch tip, no merge commit, files checked out.
    assert_eq!(head(f.repo()), tip);
    assert_eq!(git(f.repo(), &["rev-list", "--merges", "--count", "HEAD"]), "0");
    assert_eq!(fs::read_to_string(f.repo().join("b.txt")).unwrap(), "b\n");
    assert_eq!(git(f.repo(), &["status", "--porcelain"]), "");
    // Merging again has nothing to do.
    assert_eq!(merge_back(&ws).await.unwrap(), MergeOutcome::NothingToMerge);
}

#[tokio::test]
async fn merge_back_creates_a_merge_commit_when_the_trunk_moved() {
    let f = Fixture::new();
    let ws = f.prepare("email-3-1").await;
    let (_, path, branch, _, _) = worktree_parts(&ws);
    let tip = commit_file(&path, "a.txt", "a\n", "run work");
    let moved = commit_file(f.repo(), "other.txt", "o\n", "someone else's work");

    assert!(matches!(merge_back(&ws).await.unwrap(), MergeOutcome::Merged { commits: 1, .. }));
    let parents = git(f.repo(), &["rev-list", "--parents", "-n", "1", "HEAD"]);
    assert_eq!(parents.split(' ').skip(1).collect::<Vec<_>>(), vec![moved.as_str(), tip.as_str()]);
    assert_eq!(
        git(f.repo(), &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]),
        "Atlas <atlas@localhost>|Atlas <atlas@localhost>"
    );
    assert!(git(f.repo(), &["log", "-1", "--format=%s"]).contains(&branch));
    assert_eq!(git(f.repo(), &["symbolic-ref", "--short", "HEAD"]), "main");
    assert!(f.repo().join("a.txt").exists() && f.repo().join("other.txt").exists());
    assert_eq!(git(f.repo(), &["status", "--porcelain"]), "");
}

#[tokio::test]
async fn merge_back_refuses_a_dirty_trunk_and_leaves_its_changes() {
    let f = Fixture::new();
    let ws = f.prepare("email-4-1").await;
    let (_, path, _, _, _) = worktree_parts(&ws);
    commit_file(&path, "a.txt", "a\n", "run work");
    let before = head(f.repo());

    fs::write(f.repo().join("README.md"), "uncommitted edit\n").unwrap();
    assert_eq!(merge_back(&ws).await.unwrap(), MergeOutcome::TrunkDirty);
    assert_eq!(head(f.repo()), before);
    assert_eq!(fs::read_to_string(f.repo().join("README.md")).unwrap(), "uncommitted edit\n");
    assert_eq!(git(f.repo(), &["status", "--porcelain"]), "M README.md");
    assert!(!f.repo().join("a.txt").exists());

    // Staged but uncommitted is dirty too.
    git(f.repo(), &["add", "README.md"]);
    assert_eq!(merge_back(&ws).await.unwrap(), MergeOutcome::TrunkDirty);
    assert_eq!(git(f.repo(), &["status", "--porcelain"]), "M  README.md");
    assert_eq!(head(f.repo()), before);
}

#[tokio::test]
async fn merge_back_with_an_untracked_file_in_the_way_changes_nothing() {
    let f = Fixture::new();
    let ws = f.prepare("email-4-2").await;
    let (_, path, _, _, _) = worktree_parts(&ws);
    commit_file(&path, "a.txt", "from the run\n", "run work");
    let before = head(f.repo());
    fs::write(f.repo().join("a.txt"), "untracked in the trunk\n").unwrap();

    assert_eq!(merge_back(&ws).await.unwrap(), MergeOutcome::TrunkDirty);
    assert_eq!(head(f.repo()), before);
    assert_eq!(fs::read_to_string(f.repo().join("a.txt")).unwrap(), "untracked in the trunk\n");
}

#[tokio::test]
async fn merge_back_conflict_leaves_the_trunk_unchanged() {
    let f = Fixture::new();
    let ws = f.prepare("email-5-1").await;
    let (_, path, branch, _, _) = worktree_parts(&ws);
    let run_tip = commit_file(&path, "README.md", "the run's version\n", "run edits README");
    let before = commit_file(f.repo(), "README.md", "the trunk's version\n", "trunk edits README");

    match merge_back(&ws).await.unwrap() {
        MergeOutcome::Conflict { detail } => assert!(detail.contains("README.md"), "{detail}"),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert_eq!(head(f.repo()), before);
    assert_eq!(git(f.repo(), &["status", "--porcelain"]), "");
    assert_eq!(fs::read_to_string(f.repo().join("README.md")).unwrap(), "the trunk's version\n");
    assert!(!f.repo().join(".git").join("MERGE_HEAD").exists());
    // The run's work is intact on its branch.
    assert_eq!(git(f.repo(), &["rev-parse", &branch]), run_tip);
}

#[tokio::test]
async fn cleanup_removes_the_directory_and_deletes_a_merged_branch() {
    let f = Fixture::new();
    let ws = f.prepare("email-6-1").await;
    let (_, path, branch, _, _) = worktree_parts(&ws);
    commit_file(&path, "a.txt", "a\n", "run work");
    fs::create_dir_all(path.join("node_modules/big")).unwrap();
    fs::write(path.join("node_modules/big/blob"), vec![0u8; 4096]).unwrap();
    assert!(matches!(merge_back(&ws).await.unwrap(), MergeOutcome::Merged { commits: 1, .. }));

    let out = cleanup(&ws).await.unwrap();
    assert!(out.removed_dir && out.branch_deleted, "{out:?}");
    assert_eq!(out.kept_branch, None);
    assert!(!path.exists());
    assert!(!listed(f.repo(), &path));
    assert!(!branch_exists(f.repo(), &branch));
    assert!(f.repo().join("a.txt").exists());
    // Cleaning up twice is harmless.
    let again = cleanup(&ws).await.unwrap();
    assert!(!again.removed_dir && !again.branch_deleted && again.kept_branch.is_none(), "{again:?}");
}

#[tokio::test]
async fn cleanup_keeps_an_unmerged_branch() {
    let f = Fixture::new();
    let ws = f.prepare("email-6-2").await;
    let (_, path, branch, _, _) = worktree_parts(&ws);
    commit_file(&path, "a.txt", "a\n", "one");
    let tip = commit_file(&path, "b.txt", "b\n", "two");
    fs::write(path.join("README.md"), "left uncommitted\n").unwrap();

    let out = cleanup(&ws).await.unwrap();
    assert!(out.removed_dir && !out.branch_deleted, "{out:?}");
    assert_eq!(out.kept_branch.as_deref(), Some(branch.as_str()));
    assert_eq!(out.unmerged_commits, 2);
    assert_eq!(out.discarded_changes, vec!["README.md".to_string()]);
    assert!(!path.exists());
    assert!(!listed(f.repo(), &path));
    assert_eq!(git(f.repo(), &["rev-parse", &branch]), tip);
    // The commits are still readable from the kept branch.
    assert_eq!(commits_since_fork(&ws, None).await.unwrap().len(), 2);
}

#[tokio::test]
async fn cleanup_deletes_a_branch_without_commits() {
    let f = Fixture::new();
    let ws = f.prepare("email-6-3").await;
    let (_, path, branch, _, _) = worktree_parts(&ws);
    let out = cleanup(&ws).await.unwrap();
    assert!(out.removed_dir && out.branch_deleted, "{out:?}");
    assert!(!path.exists());
    assert!(!branch_exists(f.repo(), &branch));
}

#[tokio::test]
async fn prepare_falls_back_to_the_trunk_on_an_empty_repository() {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "main"]);
    let data = tempfile::tempdir().unwrap();
    let ws = prepare(repo.path(), &data.path().join("worktrees"), "email-8-1", None).await.unwrap();
    assert!(trunk_reason(&ws).contains("no commits"), "{ws:?}");
    assert_eq!(fs::canonicalize(ws.dir()).unwrap(), fs::canonicalize(repo.path()).unwrap());
    assert_eq!(git(repo.path(), &["branch", "--list"]), "");
}

#[tokio::test]
async fn prepare_falls_back_to_the_trunk_when_the_base_branch_is_missing() {
    let f = Fixture::new();
    let ws = prepare(f.repo(), &f.worktrees(), "email-9-1", Some("preprod")).await.unwrap();
    assert!(trunk_reason(&ws).contains("preprod"), "{ws:?}");
    assert_eq!(fs::canonicalize(ws.dir()).unwrap(), fs::canonicalize(f.repo()).unwrap());
    assert!(!branch_exists(f.repo(), "atlas/email-9-1"));
    assert_eq!(git(f.repo(), &["worktree", "list"]).lines().count(), 1);
}

#[tokio::test]
async fn prepare_falls_back_when_the_worktrees_dir_is_not_writable() {
    let f = Fixture::new();
    // A regular file where the directory should be: creating it fails even as root.
    let blocker = f.data.path().join("worktrees");
    fs::write(&blocker, "not a directory").unwrap();
    let ws = prepare(f.repo(), &blocker.join("sub"), "email-10-1", None).await.unwrap();
    assert!(trunk_reason(&ws).contains("worktrees directory"), "{ws:?}");
    assert!(!branch_exists(f.repo(), "atlas/email-10-1"));

    // Read-only permissions, where they apply (not as root).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = f.data.path().join("ro");
        fs::create_dir(&ro).unwrap();
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
        if fs::write(ro.join("probe"), "").is_err() {
            let ws = prepare(f.repo(), &ro, "email-10-2", None).await.unwrap();
            trunk_reason(&ws);
            assert!(!branch_exists(f.repo(), "atlas/email-10-2"));
        }
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[tokio::test]
async fn prepare_on_a_path_that_is_not_a_repository_is_an_error() {
    let plain = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let err = prepare(plain.path(), data.path(), "email-11-1", None).await.unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepo(_)), "{err:?}");
    let err = prepare(&plain.path().join("missing"), data.path(), "email-11-1", None).await.unwrap_err();
    assert!(matches!(err, WorktreeError::NotARepo(_)), "{err:?}");
}

#[tokio::test]
async fn two_prepares_with_the_same_name_do_not_clobber_each_other() {
    let f = Fixture::new();
    let first = f.prepare("email-12-1").await;
    let (_, p1, b1, _, _) = worktree_parts(&first);
    commit_file(&p1, "first.txt", "1\n", "first run");
    fs::write(p1.join("wip.txt"), "work in progress\n").unwrap();

    let second = f.prepare("email-12-1").await;
    let (_, p2, b2, _, _) = worktree_parts(&second);
    assert_ne!(p1, p2);
    assert_ne!(b1, b2);
    assert_eq!(b2, "atlas/email-12-1-2");
    assert!(p1.join("first.txt").exists() && p1.join("wip.txt").exists());
    assert!(!p2.join("first.txt").exists());

    // A branch left behind by an earlier run (directory gone) is not reused either.
    let out = cleanup(&second).await.unwrap();
    assert!(out.branch_deleted);
    git(f.repo(), &["branch", "atlas/email-12-1-3"]);
    commit_file(&p1, "more.txt", "m\n", "more");

    // Concurrent prepares with the same name.
    let (c1, c2) = tokio::join!(f.prepare("email-12-1"), f.prepare("email-12-1"));
    let (_, cp1, cb1, _, _) = worktree_parts(&c1);
    let (_, cp2, cb2, _, _) = worktree_parts(&c2);
    assert_ne!(cp1, cp2);
    assert_ne!(cb1, cb2);
    for b in [&cb1, &cb2] {
        assert_ne!(b, &b1);
        assert_ne!(b, "atlas/email-12-1-3");
    }
    assert_eq!(git(&p1, &["log", "-1", "--format=%s"]), "more");
    assert_eq!(git(f.repo(), &["worktree", "list"]).lines().count(), 4);
}

#[tokio::test]
async fn prepare_leaves_a_leftover_directory_alone_and_takes_the_next_name() {
    let f = Fixture::new();
    let leftover = f.worktrees().join("email-14-1");
    fs::create_dir_all(&leftover).unwrap();
    fs::write(leftover.join("notes.txt"), "from a crashed run").unwrap();

    let ws = f.prepare("email-14-1").await;
    let (_, path, branch, _, _) = worktree_parts(&ws);
    assert_eq!(branch, "atlas/email-14-1-2");
    assert_eq!(path.file_name().unwrap(), "email-14-1-2");
    assert_eq!(fs::read_to_string(leftover.join("notes.txt")).unwrap(), "from a crashed run");
    assert!(!branch_exists(f.repo(), "atlas/email-14-1"));
}

#[tokio::test]
async fn prepare_falls_back_when_the_worktrees_dir_is_inside_the_repository() {
    let f = Fixture::new();
    let ws = prepare(f.repo(), &f.repo().join("data/worktrees"), "email-15-1", None).await.unwrap();
    assert!(trunk_reason(&ws).contains("inside the repository"), "{ws:?}");
    assert!(!branch_exists(f.repo(), "atlas/email-15-1"));
}

/// Sets the modification time of the places `sweep` reads to `when`.
fn backdate(worktree: &Path, when: SystemTime) {
    let admin = PathBuf::from(git(worktree, &["rev-parse", "--path-format=absolute", "--git-dir"]));
    for p in [
        worktree.to_path_buf(),
        worktree.join(".git"),
        admin.join("index"),
        admin.join("HEAD"),
        admin.join("logs/HEAD"),
    ] {
        if p.exists() {
            fs::File::open(&p).unwrap().set_modified(when).unwrap();
        }
    }
}

#[tokio::test]
async fn sweep_removes_stale_worktrees_and_reports_the_bytes() {
    let f = Fixture::new();
    let old = f.prepare("email-13-1").await;
    let (_, old_path, old_branch, _, _) = worktree_parts(&old);
    let old_tip = commit_file(&old_path, "a.txt", "a\n", "old run");
    fs::write(old_path.join("build.bin"), vec![7u8; 100_000]).unwrap();
    let fresh = f.prepare("email-13-2").await;
    let (_, fresh_path, _, _, _) = worktree_parts(&fresh);
    // Something under the directory that is not a worktree: never touched.
    let stranger = f.worktrees().join("not-a-worktree");
    fs::create_dir(&stranger).unwrap();
    fs::write(stranger.join("keep.txt"), "keep").unwrap();

    let two_days_ago = SystemTime::now() - Duration::from_secs(2 * 86_400);
    backdate(&old_path, two_days_ago);
    fs::File::open(&stranger).unwrap().set_modified(two_days_ago).unwrap();

    let (removed, bytes) = sweep(f.repo(), &f.worktrees(), Duration::from_secs(86_400)).await.unwrap();
    assert_eq!(removed, 1);
    assert!(bytes >= 100_000, "{bytes}");
    assert!(!old_path.exists());
    assert!(!listed(f.repo(), &old_path));
    assert!(fresh_path.exists() && listed(f.repo(), &fresh_path));
    assert!(stranger.join("keep.txt").exists());
    // The stale run's commits survive on its branch.
    assert_eq!(git(f.repo(), &["rev-parse", &old_branch]), old_tip);

    // Nothing stale left; a missing directory sweeps nothing.
    assert_eq!(sweep(f.repo(), &f.worktrees(), Duration::from_secs(86_400)).await.unwrap(), (0, 0));
    assert_eq!(sweep(f.repo(), &f.data.path().join("absent"), Duration::ZERO).await.unwrap(), (0, 0));
    assert!(matches!(
        sweep(&f.data.path().join("absent"), &f.worktrees(), Duration::ZERO).await,
        Err(WorktreeError::NotARepo(_))
    ));
}

/// A retry continues the kept branch: its worktree when it is still there, else a new
/// worktree of the same branch (the commits are all there); a vanished branch is an error.
#[tokio::test]
async fn reopen_continues_the_kept_branch() {
    let f = Fixture::new();
    let ws = f.prepare("email-9").await;
    let (_, path, branch, _, fork) = worktree_parts(&ws);
    let first = commit_file(&path, "a.txt", "a\n", "attempt 1");
    // The worktree is still there: reused as it is.
    let again = reopen(f.repo(), &f.worktrees(), &path, &branch, &fork, None).await.unwrap();
    assert_eq!(again, ws);
    // Its directory was swept: a new worktree of the same branch, with the commit.
    let out = Command::new("git")
        .arg("-C")
        .arg(f.repo())
        .args(["worktree", "remove", "--force"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let fresh = reopen(f.repo(), &f.worktrees(), &path, &branch, &fork, Some("main")).await.unwrap();
    let (_, new_path, new_branch, base, new_fork) = worktree_parts(&fresh);
    assert_ne!(new_path, path);
    assert_eq!((new_branch.as_str(), base.as_str(), new_fork.as_str()), (branch.as_str(), "main", fork.as_str()));
    assert_eq!(head(&new_path), first);
    assert!(new_path.join("a.txt").exists());
    let commits = commits_since_fork(&fresh, None).await.unwrap();
    assert_eq!(commits.len(), 1, "the earlier attempt's commit counts");
    // A branch that no longer exists cannot be continued.
    assert!(reopen(f.repo(), &f.worktrees(), &path, "atlas/gone", &fork, None).await.is_err());
}
