//! `/rappels.ics`: the reminders as an iCalendar feed (RFC 5545) the user's phone calendar
//! can subscribe to — one VEVENT with an alarm per reminder still to do. A recurring
//! reminder is one VEVENT with its `RRULE`, from its next occurrence, in local ("floating")
//! time so that 19 h stays 19 h across a change of time wherever the phone is set to the
//! same zone (`X-WR-TIMEZONE` names it).

use std::sync::Arc;

use arthur_agents::memory::Rappel;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};

use super::WebState;

/// TEXT escaping of RFC 5545 §3.3.11.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace(';', "\\;")
        .replace(',', "\\,")
        .replace("\r\n", "\\n")
        .replace(['\n', '\r'], "\\n")
}

/// Folds a content line at 75 octets (§3.1), never inside a UTF-8 character.
fn fold(line: &str) -> String {
    let mut out = String::new();
    let mut width = 0;
    for c in line.chars() {
        let len = c.len_utf8();
        if width + len > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(c);
        width += len;
    }
    out.push_str("\r\n");
    out
}

fn stamp(ts: DateTime<Utc>) -> String {
    ts.format("%Y%m%dT%H%M%SZ").to_string()
}

/// The calendar text for these reminders.
pub fn reminders_calendar(rappels: &[Rappel], now: DateTime<Utc>) -> String {
    let mut out = String::new();
    for line in [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//Arthur//Rappels//FR",
        "CALSCALE:GREGORIAN",
        "X-WR-CALNAME:Arthur — rappels",
    ] {
        out.push_str(&fold(line));
    }
    if let Some(zone) = rappels.iter().find_map(|r| r.repetition.as_ref().map(|p| p.fuseau.clone())) {
        out.push_str(&fold(&format!("X-WR-TIMEZONE:{zone}")));
    }
    for r in rappels.iter().filter(|r| !r.fait) {
        let start = match &r.repetition {
            Some(p) => vec![
                format!("DTSTART:{}", r.echeance.with_timezone(&p.tz()).naive_local().format("%Y%m%dT%H%M%S")),
                format!("RRULE:{}", p.rrule()),
            ],
            None => vec![format!("DTSTART:{}", stamp(r.echeance))],
        };
        let head = [
            "BEGIN:VEVENT".to_string(),
            format!("UID:rappel-{}@arthur.local", r.id),
            format!("DTSTAMP:{}", stamp(now)),
            format!("CREATED:{}", stamp(r.created_at)),
        ];
        for line in head.into_iter().chain(start).chain([
            "DURATION:PT15M".to_string(),
            format!("SUMMARY:{}", escape(&r.texte)),
            format!("DESCRIPTION:{}", escape(&format!("Rappel n°{} d'Arthur", r.id))),
            "BEGIN:VALARM".to_string(),
            "ACTION:DISPLAY".to_string(),
            format!("DESCRIPTION:{}", escape(&r.texte)),
            "TRIGGER:PT0M".to_string(),
            "END:VALARM".to_string(),
            "END:VEVENT".to_string(),
        ]) {
            out.push_str(&fold(&line));
        }
    }
    out.push_str(&fold("END:VCALENDAR"));
    out
}

pub async fn rappels_ics(State(state): State<Arc<WebState>>) -> Response {
    match state.store.list_rappels(false).await {
        Ok(rappels) => {
            ([(header::CONTENT_TYPE, "text/calendar; charset=utf-8")], reminders_calendar(&rappels, state.now()))
                .into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "calendar failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "Panne : la base de données n'a pas répondu.").into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fold_at_75_octets_and_text_is_escaped() {
        let long = format!("SUMMARY:{}", "é".repeat(60));
        let folded = fold(&long);
        assert!(folded.split("\r\n").all(|l| l.len() <= 75), "{folded}");
        assert_eq!(escape("a;b,c\\d\ne"), "a\\;b\\,c\\\\d\\ne");
    }
}
