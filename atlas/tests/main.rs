//! Atlas' tests, one binary: the pipeline against real components — a Dovecot IMAP server on
//! loopback, ClamAV with a generated EICAR database, Tesseract, git, a real pseudo-terminal
//! with a fake `claude` speaking stream-json, an SMTP server, a scripted model server — and
//! the store on SQLite and on a private PostgreSQL cluster. Shared helpers: `support`.
//! Dovecot, clamd, SMTP and PostgreSQL runs are the system tier (feature `system-tests`), and so
//! is `real_claude`: the launcher against the real Claude Code CLI that scripts/setup pins.

#[path = "../../tests/postgres/harness.rs"]
mod harness;
mod support;

mod classify;
#[cfg(feature = "system-tests")]
mod dovecot;
#[cfg(feature = "system-tests")]
mod intake;
mod launch;
mod migrations;
mod persona;
mod pty;
#[cfg(feature = "system-tests")]
mod real_claude;
mod recap;
mod report;
#[cfg(feature = "system-tests")]
mod scan;
mod storage;
#[cfg(feature = "system-tests")]
mod workers;
mod worktree;
