//! Atlas through the `arthur` binary: the `arthur atlas …` commands and `arthur serve` run as
//! processes against real components (Dovecot, ClamAV, git, a fake `claude`, an SMTP server,
//! PostgreSQL for two workers), and the web pages of Atlas. The library's own tests are in
//! atlas/tests; their fixtures (`support`) are shared with this binary.

#[path = "../common/mod.rs"]
mod common;
#[path = "../postgres/harness.rs"]
mod harness;
#[path = "../../atlas/tests/support/mod.rs"]
mod support;

mod cli;
mod web;
mod workers;
