//! Atlas intake and classification against real components: a Dovecot IMAP server on
//! loopback, ClamAV with a generated EICAR database, Tesseract, and a scripted model server.

#[path = "../common/mod.rs"]
mod common;

mod classify;
mod cli;
mod dovecot;
mod intake;
mod launch;
mod persona;
mod pty;
mod recap;
mod report;
mod scan;
mod support;
mod workers;
mod worktree;

#[path = "../postgres/harness.rs"]
mod harness;
