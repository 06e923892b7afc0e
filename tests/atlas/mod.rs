//! Atlas through the `arthur` binary: the `arthur atlas …` commands and `arthur serve` run as
//! processes against real components (Dovecot, ClamAV, git, a fake `claude`, an SMTP server,
//! PostgreSQL for two workers), and the web pages of Atlas. The library's own tests are in
//! atlas/tests; their fixtures (`support`) are shared with this binary.

// The Dovecot, ClamAV, SMTP and PostgreSQL runs are the system tier.
#[cfg(feature = "system-tests")]
mod cli;
mod web;
#[cfg(feature = "system-tests")]
mod workers;
