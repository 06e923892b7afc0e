//! Atlas' tests, one binary: the pipeline against real components — a Dovecot IMAP server on
//! loopback, ClamAV with a generated EICAR database, Tesseract, git, a real pseudo-terminal
//! with a fake `claude` speaking stream-json, an SMTP server, a scripted model server — and
//! the store on SQLite and on a private PostgreSQL cluster. Shared helpers: `support`.

#[path = "../../tests/postgres/harness.rs"]
mod harness;
mod support;

mod classify;
mod dovecot;
mod intake;
mod launch;
mod migrations;
mod persona;
mod pty;
mod recap;
mod report;
mod scan;
mod storage;
mod workers;
mod worktree;
