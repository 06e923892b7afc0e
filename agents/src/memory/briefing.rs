//! Daily and weekly briefings, composed by code from the store only: the model reads them
//! out, it never writes them.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

use super::worktime::totals;
use super::{MemoryStore, Rappel, StoreResult};
use crate::fr;
use crate::fr::written_minutes as format_duration;
use crate::time::{local_today, week_start, IsoDate};

/// The briefing of the current week (Monday 00:00 local → now).
pub async fn weekly(store: &dyn MemoryStore, now: DateTime<Utc>, tz: Tz) -> StoreResult<String> {
    let today = local_today(now, tz);
    let monday = week_start(today);
    let next_monday = monday + Duration::days(7);
    let from = IsoDate(monday).start_utc(tz);
    let week_end = IsoDate(next_monday).start_utc(tz);
    let header = format!("Briefing de la semaine du {} (au {}).", fr::date(monday), fr::date(today));
    compose(store, now, tz, header, "cette semaine", from, week_end).await
}

/// The briefing of the day (00:00 local → now).
pub async fn daily(store: &dyn MemoryStore, now: DateTime<Utc>, tz: Tz) -> StoreResult<String> {
    let today: NaiveDate = local_today(now, tz);
    let from = IsoDate(today).start_utc(tz);
    let tomorrow = IsoDate(today + Duration::days(1)).start_utc(tz);
    let header = format!("Briefing du {}.", fr::date(today));
    compose(store, now, tz, header, "aujourd'hui", from, tomorrow).await
}

fn rappel_line(r: &Rappel, tz: Tz) -> String {
    format!("  - n°{} « {} » pour le {}", r.id, r.texte, fr::datetime(r.echeance, tz))
}

#[allow(clippy::too_many_arguments)]
async fn compose(
    store: &dyn MemoryStore,
    now: DateTime<Utc>,
    tz: Tz,
    header: String,
    period: &str,
    from: DateTime<Utc>,
    period_end: DateTime<Utc>,
) -> StoreResult<String> {
    let mut out = vec![header];

    let sessions = store.sessions_overlapping(from, now, None).await?;
    let work = totals(&sessions, from, now, now);
    if sessions.is_empty() {
        out.push(format!("Temps de travail {period} : aucune session."));
    } else {
        out.push(format!("Temps de travail {period} : {}.", format_duration(work.total_secs)));
        for (projet, secs) in &work.par_projet {
            out.push(format!("  - {projet} : {}", format_duration(*secs)));
        }
    }
    if let Some(running) = store.running_session().await? {
        let state = if running.is_paused() { "en pause" } else { "en cours" };
        out.push(format!("Session {state} sur {} depuis {}.", running.projet, fr::time(running.debut, tz)));
    }

    let open = store.list_rappels(false).await?;
    let overdue: Vec<&Rappel> = open.iter().filter(|r| r.echeance < now).collect();
    let upcoming: Vec<&Rappel> = open.iter().filter(|r| r.echeance >= now && r.echeance < period_end).collect();
    if overdue.is_empty() {
        out.push("Rappels en retard : aucun.".to_string());
    } else {
        out.push(format!("Rappels en retard : {}.", overdue.len()));
        out.extend(overdue.iter().map(|r| rappel_line(r, tz)));
    }
    if upcoming.is_empty() {
        out.push(format!("Rappels à venir {period} : aucun."));
    } else {
        out.push(format!("Rappels à venir {period} : {}.", upcoming.len()));
        out.extend(upcoming.iter().map(|r| rappel_line(r, tz)));
    }

    let decisions = store.decisions_between(from, period_end).await?;
    if decisions.is_empty() {
        out.push(format!("Décisions {period} : aucune."));
    } else {
        out.push(format!("Décisions {period} : {}.", decisions.len()));
        out.extend(decisions.iter().map(|d| format!("  - {} : « {} »", d.projet, d.texte)));
    }

    let notes = store.notes_between(from, period_end).await?;
    if notes.is_empty() {
        out.push(format!("Notes {period} : aucune."));
    } else {
        out.push(format!("Notes {period} : {}.", notes.len()));
        out.extend(notes.iter().map(|n| match &n.projet {
            Some(p) => format!("  - n°{} ({p}) « {} »", n.id, n.texte),
            None => format!("  - n°{} « {} »", n.id, n.texte),
        }));
    }
    Ok(out.join("\n"))
}
