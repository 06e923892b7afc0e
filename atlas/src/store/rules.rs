//! The decisions of the store's guarded writes, as pure functions: given what the write
//! transaction read, where does the row go, what is refused, what is recorded? Both backends
//! call them inside their write transaction (`super::sql`), so a rule is written and tested
//! once and the check and the write are never separated.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{AtlasStoreError, NewClient, Requeue, StepFailure};
use crate::mail::{is_public_domain, EmailAddress};
use crate::{EmailState, Intent};

/// The longest wait between two attempts of a failing step.
pub const MAX_BACKOFF_MINUTES: i64 = 60;

/// The wait after the `attempt`-th failure in a row: 1, 2, 4, 8 … minutes, at most 60.
pub fn backoff(attempt: i64) -> chrono::Duration {
    let exp = attempt.clamp(1, 8) - 1;
    chrono::Duration::minutes((1i64 << exp).min(MAX_BACKOFF_MINUTES))
}

/// What a failure does to the row (the same rule on both backends): the next attempt's time,
/// or parking once the failures have lasted `park_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailurePlan {
    pub attempts: i64,
    pub failing_since: DateTime<Utc>,
    /// None: parked.
    pub retry_at: Option<DateTime<Utc>>,
}

pub fn plan_failure(
    attempts_before: i64,
    failing_since: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    park_after: chrono::Duration,
) -> FailurePlan {
    let attempts = attempts_before + 1;
    let since = failing_since.unwrap_or(now);
    let retry_at = (now - since < park_after).then(|| now + backoff(attempts));
    FailurePlan { attempts, failing_since: since, retry_at }
}

/// The state a failed step leaves its row in: still its own while retries are planned, the
/// step's terminal state once parked.
pub fn state_after_failure(plan: &FailurePlan, f: &StepFailure) -> EmailState {
    if plan.retry_at.is_some() {
        f.from
    } else {
        f.terminal
    }
}

/// The detail of a failure's audit: the step's own, plus where the run of failures is.
pub fn failure_detail(detail: &Value, plan: &FailurePlan, now: DateTime<Utc>) -> Value {
    let mut detail = detail.clone();
    if let Value::Object(map) = &mut detail {
        map.insert("attempt".into(), plan.attempts.into());
        map.insert("failing_for_minutes".into(), (now - plan.failing_since).num_minutes().into());
        match plan.retry_at {
            Some(at) => map.insert("retry_in_minutes".into(), (at - now).num_minutes().into()),
            None => map.insert("parked".into(), true.into()),
        };
    }
    detail
}

/// Where a scan sends its row: `scanned` when every part is clean, `blocked` otherwise (an
/// infected part, or a scanner error reported as a verdict: nothing unclean is ever read).
pub fn state_after_scan(verdict: &str) -> EmailState {
    if verdict == "clean" {
        EmailState::Scanned
    } else {
        EmailState::Blocked
    }
}

/// Putting back a message parked by errors: `scan_failed` → `received`, `classify_failed` →
/// `scanned`; anything else (`blocked` by an infected attachment above all) stays.
pub fn requeue(from: EmailState) -> Result<EmailState, Requeue> {
    match from {
        EmailState::ScanFailed => Ok(EmailState::Received),
        EmailState::ClassifyFailed => Ok(EmailState::Scanned),
        other => Err(Requeue::NotParked(other)),
    }
}

/// The detail of a `retry_requested` audit: who asked, and the move.
pub fn requeue_detail(detail: Value, from: EmailState, to: EmailState) -> Value {
    let mut detail = detail;
    if let Value::Object(map) = &mut detail {
        map.insert("from".into(), from.as_str().into());
        map.insert("to".into(), to.as_str().into());
    }
    detail
}

/// The row an intent materialises: its kind, table and the state row's link column. Noise
/// materialises nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub kind: &'static str,
    pub table: &'static str,
    pub column: &'static str,
}

const ITEMS: [Item; 4] = [
    Item { kind: "run", table: "atlas_runs", column: "run_id" },
    Item { kind: "question", table: "atlas_questions", column: "question_id" },
    Item { kind: "negociation", table: "atlas_negociations", column: "negociation_id" },
    Item { kind: "conseil", table: "atlas_conseils", column: "conseil_id" },
];

pub fn item_of(intent: Intent) -> Option<Item> {
    match intent {
        Intent::Noise => None,
        Intent::Run => Some(ITEMS[0]),
        Intent::Question => Some(ITEMS[1]),
        Intent::Negociation => Some(ITEMS[2]),
        Intent::Conseil => Some(ITEMS[3]),
    }
}

/// The item kinds and their link columns, in the order the state row's links are read.
pub fn items() -> &'static [Item] {
    &ITEMS
}

/// The table of a materialised item kind (one of [`items`]).
pub fn item_table(kind: &str) -> &'static str {
    ITEMS.iter().find(|i| i.kind == kind).map(|i| i.table).unwrap_or("atlas_conseils")
}

/// A new client's addresses as stored, `(kind, value)`: its e-mail addresses, and its domains
/// lower-cased without a leading `@`. A public webmail domain is refused: it would make every
/// one of its users this client.
pub fn client_addresses(client: &NewClient) -> Result<Vec<(&'static str, String)>, AtlasStoreError> {
    if let Some(d) = client.domains.iter().find(|d| is_public_domain(d)) {
        return Err(AtlasStoreError::PublicDomain(d.clone()));
    }
    Ok(client
        .emails
        .iter()
        .map(|e| ("email", e.as_str().to_string()))
        .chain(client.domains.iter().map(|d| ("domain", d.trim().trim_start_matches('@').to_lowercase())))
        .collect())
}

/// Whether the domain of an address may identify a client when the exact address does not:
/// never a public webmail's.
pub fn domain_identifies(addr: &EmailAddress) -> bool {
    !addr.is_public_webmail()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(m: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, 9, 0, 0).unwrap() + chrono::Duration::minutes(m)
    }

    fn failure() -> StepFailure {
        StepFailure {
            from: EmailState::Received,
            event: "scan_failed",
            detail: serde_json::json!({"error": "clamd down"}),
            park_after: chrono::Duration::hours(24),
            terminal: EmailState::ScanFailed,
        }
    }

    #[test]
    fn failures_back_off_then_park_after_a_day() {
        assert_eq!([1, 2, 3, 7, 8, 20].map(|a| backoff(a).num_minutes()), [1, 2, 4, 60, 60, 60]);
        let first = plan_failure(0, None, at(0), chrono::Duration::hours(24));
        assert_eq!((first.attempts, first.failing_since, first.retry_at), (1, at(0), Some(at(1))));
        assert_eq!(state_after_failure(&first, &failure()), EmailState::Received);
        let late = plan_failure(9, Some(at(0)), at(24 * 60), chrono::Duration::hours(24));
        assert_eq!(late.retry_at, None);
        assert_eq!(state_after_failure(&late, &failure()), EmailState::ScanFailed);
        let d = failure_detail(&failure().detail, &late, at(24 * 60));
        assert_eq!(
            (d["attempt"].as_i64(), d["parked"].as_bool(), d["error"].as_str()),
            (Some(10), Some(true), Some("clamd down"))
        );
        let d = failure_detail(&failure().detail, &first, at(0));
        assert_eq!((d["retry_in_minutes"].as_i64(), d.get("parked")), (Some(1), None));
    }

    #[test]
    fn only_a_clean_scan_reaches_the_classifier_and_only_errors_are_requeued() {
        assert_eq!(state_after_scan("clean"), EmailState::Scanned);
        assert_eq!(state_after_scan("infected"), EmailState::Blocked);
        assert_eq!(state_after_scan("error"), EmailState::Blocked);
        assert_eq!(requeue(EmailState::ScanFailed), Ok(EmailState::Received));
        assert_eq!(requeue(EmailState::ClassifyFailed), Ok(EmailState::Scanned));
        for s in
            EmailState::ALL.into_iter().filter(|s| !matches!(s, EmailState::ScanFailed | EmailState::ClassifyFailed))
        {
            assert_eq!(requeue(s), Err(Requeue::NotParked(s)), "{s:?}");
        }
        let d = requeue_detail(serde_json::json!({"by": "cli"}), EmailState::ScanFailed, EmailState::Received);
        assert_eq!(d, serde_json::json!({"by": "cli", "from": "scan_failed", "to": "received"}));
    }

    #[test]
    fn each_intent_but_noise_materialises_in_its_own_table() {
        assert_eq!(item_of(Intent::Noise), None);
        let tables: Vec<&str> = Intent::ALL.into_iter().filter_map(item_of).map(|i| i.table).collect();
        assert_eq!(tables, ["atlas_runs", "atlas_questions", "atlas_negociations", "atlas_conseils"]);
        for item in items() {
            assert_eq!(item_table(item.kind), item.table);
            assert_eq!(item.column, format!("{}_id", item.kind));
        }
    }

    #[test]
    fn client_addresses_are_normalised_and_public_domains_refused() {
        let client = NewClient {
            name: "Boutique".into(),
            emails: vec![EmailAddress::parse("Jean@Boutique.fr").unwrap()],
            domains: vec![" @Boutique.FR ".into()],
            ..Default::default()
        };
        let addresses = client_addresses(&client).unwrap();
        assert_eq!(addresses[1], ("domain", "boutique.fr".to_string()));
        assert_eq!(addresses[0].0, "email");
        let webmail = NewClient { domains: vec!["gmail.com".into()], ..client };
        assert!(matches!(client_addresses(&webmail), Err(AtlasStoreError::PublicDomain(d)) if d == "gmail.com"));
        assert!(!domain_identifies(&EmailAddress::parse("x@gmail.com").unwrap()));
        assert!(domain_identifies(&EmailAddress::parse("x@boutique.fr").unwrap()));
    }
}
