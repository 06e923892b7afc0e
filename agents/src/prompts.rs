//! The system prompts, compiled in from `prompts/`, and the per-turn context added to them
//! by code (date, time zone, active preferences). Souvenirs are never added here.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::memory::Preference;
use crate::tools::AgentKind;

pub const SUPERVISOR: &str = include_str!("../../prompts/supervisor.txt");
pub const SPECIALIST_COMMON: &str = include_str!("../../prompts/specialist_common.txt");
pub const INTENDANT: &str = include_str!("../../prompts/intendant.txt");
pub const MENTOR: &str = include_str!("../../prompts/mentor.txt");

/// The specialist's system prompt for this turn.
pub fn specialist(agent: AgentKind, now: DateTime<Utc>, tz: Tz, preferences: &[Preference]) -> String {
    let role = match agent {
        AgentKind::Intendant => INTENDANT,
        AgentKind::Mentor => MENTOR,
    };
    let local = now.with_timezone(&tz);
    let mut out = format!(
        "{}\n{}\nMaintenant : {} (ISO {}, fuseau {}).\n",
        role.trim(),
        SPECIALIST_COMMON.trim(),
        crate::fr::datetime(now, tz),
        local.format("%Y-%m-%dT%H:%M"),
        tz.name()
    );
    if preferences.is_empty() {
        out.push_str("Préférences de la personne : aucune.\n");
    } else {
        out.push_str("Préférences de la personne (à respecter à chaque réponse) :\n");
        for p in preferences {
            out.push_str(&format!("- n°{} {}\n", p.id, p.texte));
        }
    }
    out
}
