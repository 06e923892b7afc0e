//! E-mails to the founder that must go out once per event — a launch held for approval, a
//! message parked after an outage, an escalation, a lock held too long — and never once per
//! cycle. Each notice is recorded under a unique key before it is sent (a second worker, a
//! replay or the next cycle finds the key and sends nothing), and one whose send failed
//! (SMTP down) is retried later, never dropped. The words are composed by code.

use std::sync::Arc;

use arthur_agents::time::Clock;

use super::smtp::{self, Letter, SmtpAccount};
use super::store::{AtlasStore, NewNotice, StoreResult};

/// Attempts before an unsent notice is given up (it stays in the table, with its error).
pub const MAX_NOTICE_ATTEMPTS: i64 = 10;
/// A send attempt holds its notice this long: another worker does not retry it meanwhile.
pub const NOTICE_ATTEMPT_LEASE_MINUTES: i64 = 5;

/// What became of one notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeOutcome {
    Sent,
    /// Its key was already recorded: sent (or being sent) before.
    AlreadyNotified,
    /// Recorded, not sent (retried later): why.
    Failed(String),
    /// No `ATLAS_SMTP_URL` or no `ATLAS_FOUNDER_EMAIL`: recorded, retried once configured.
    NotConfigured,
}

/// Sends the founder the notices, once each.
#[derive(Clone)]
pub struct Notifier {
    pub store: Arc<dyn AtlasStore>,
    pub clock: Arc<dyn Clock>,
    pub smtp: Option<SmtpAccount>,
    pub founder: Option<String>,
    /// Atlas' own address (the sender); the founder's when unset.
    pub mailbox: Option<String>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier").field("smtp", &self.smtp).field("founder", &self.founder).finish_non_exhaustive()
    }
}

impl Notifier {
    /// Records the notice and sends it, unless one with its key exists.
    pub async fn notify_once(&self, notice: NewNotice) -> StoreResult<NoticeOutcome> {
        let now = self.clock.now();
        let Some(id) = self.store.claim_notice(&notice, now).await? else {
            return Ok(NoticeOutcome::AlreadyNotified);
        };
        self.attempt(id, &notice).await
    }

    /// Sends the notices whose earlier attempts failed (or that a crash left unsent);
    /// returns how many went out.
    pub async fn retry_unsent(&self) -> StoreResult<usize> {
        let mut sent = 0;
        for row in self.store.unsent_notices(MAX_NOTICE_ATTEMPTS, 50).await? {
            if self.attempt(row.id, &row.notice).await? == NoticeOutcome::Sent {
                sent += 1;
            }
        }
        Ok(sent)
    }

    async fn attempt(&self, id: i64, notice: &NewNotice) -> StoreResult<NoticeOutcome> {
        let (Some(account), Some(founder)) = (&self.smtp, &self.founder) else {
            return Ok(NoticeOutcome::NotConfigured);
        };
        let now = self.clock.now();
        let lease = now - chrono::Duration::minutes(NOTICE_ATTEMPT_LEASE_MINUTES);
        if !self.store.try_notice(id, lease, now).await? {
            return Ok(NoticeOutcome::AlreadyNotified);
        }
        let from = self.mailbox.clone().unwrap_or_else(|| founder.clone());
        match smtp::send(account, &from, founder, &letter(notice)).await {
            Ok(_) => {
                self.store.finish_notice(id, None, self.clock.now()).await?;
                tracing::info!(kind = %notice.kind, email = ?notice.email_id, "atlas: founder notified");
                Ok(NoticeOutcome::Sent)
            }
            Err(e) => {
                let error = e.to_string();
                tracing::warn!(kind = %notice.kind, email = ?notice.email_id, %error, "atlas: notice not sent; retried later");
                self.store.finish_notice(id, Some(&error), self.clock.now()).await?;
                Ok(NoticeOutcome::Failed(error))
            }
        }
    }
}

/// Longest notice subject (in characters); a longer one is cut with « … ».
const MAX_SUBJECT_CHARS: usize = 190;

/// The notice as a plain letter: its subject on one line, cut if it is very long.
fn letter(notice: &NewNotice) -> Letter {
    let words: Vec<&str> =
        notice.subject.split(|c: char| c.is_control() || c.is_whitespace()).filter(|w| !w.is_empty()).collect();
    let mut subject = words.join(" ");
    if subject.chars().count() > MAX_SUBJECT_CHARS {
        subject = subject.chars().take(MAX_SUBJECT_CHARS - 1).collect::<String>() + "…";
    }
    Letter { subject, body: notice.body.clone(), attachments: Vec::new() }
}
