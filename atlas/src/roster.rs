//! The agents Atlas can put on, as data: their family, their stored row, the seeded roster
//! (`atlas/personas.toml`) and a stored lesson. A leaf module: the store keeps these rows
//! and `persona` renders them, so both use it and it uses neither.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::Deserialize;

/// The ring of the orchestrator (Atlas), alone at the centre.
pub const ORCHESTRATOR_RING: u8 = 0;

/// The functional family of an agent (spec §2.2, §7), the source of truth for its ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    Direction,
    Cadrage,
    Execution,
    Validation,
}

impl Group {
    pub const ALL: [Group; 4] = [Group::Direction, Group::Cadrage, Group::Execution, Group::Validation];

    /// The stored name (`group_name`).
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Direction => "direction",
            Group::Cadrage => "cadrage",
            Group::Execution => "execution",
            Group::Validation => "validation",
        }
    }

    /// The French name shown to people.
    pub fn label(self) -> &'static str {
        match self {
            Group::Direction => "Direction",
            Group::Cadrage => "Cadrage",
            Group::Execution => "Exécution",
            Group::Validation => "Validation",
        }
    }
}

impl FromStr for Group {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Group::ALL.into_iter().find(|g| g.as_str() == s).ok_or_else(|| format!("unknown group {s:?}"))
    }
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The visual ring of a family: Direction 1, Cadrage and Exécution 2, Validation 3 — the
/// spec's Réacteur (`ringMap`, §7.2), the picture the founder already knows. Atlas, the
/// only orchestrator, sits at [`ORCHESTRATOR_RING`] (0) instead: see [`Persona::ring`].
pub fn ring(group: Group) -> u8 {
    match group {
        Group::Direction => 1,
        Group::Cadrage | Group::Execution => 2,
        Group::Validation => 3,
    }
}

/// An agent as stored in `atlas_agents`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Persona {
    pub codename: String,
    pub nickname: String,
    pub role: String,
    pub group: Group,
    /// Atlas itself: at most one agent (a partial unique index), always in direction.
    pub orchestrator: bool,
    pub heritage: String,
    /// One dimension per line.
    pub cognitive_frame: String,
    pub personality: String,
    pub quote: String,
    pub inspiration: String,
    pub proof: String,
    pub job_mission: String,
    pub job_perimeter: String,
    /// One check per line.
    pub job_key_checks: String,
    pub prompt_domains: Vec<String>,
    pub active: bool,
}

impl Persona {
    /// The ring drawn on `/atlas/agents`: the orchestrator at the centre, everyone else on
    /// their family's ring.
    pub fn ring(&self) -> u8 {
        if self.orchestrator {
            ORCHESTRATOR_RING
        } else {
            ring(self.group)
        }
    }
}

// ---------- the seeded agents ----------

/// The seeded personas, one data file for both backends (`atlas/personas.toml`), upserted
/// when the store opens. Migration 0006 inserted their first version, written once per SQL
/// dialect; it stays unchanged — a database records each applied migration's checksum and
/// refuses to open if the file differs — and a test checks it still agrees with this file.
pub const SEED_FILE: &str = include_str!("../personas.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedFile {
    agent: Vec<SeedAgent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedAgent {
    codename: String,
    nickname: String,
    role: String,
    group: String,
    #[serde(default)]
    orchestrator: bool,
    #[serde(default)]
    heritage: String,
    cognitive_frame: String,
    #[serde(default)]
    personality: String,
    #[serde(default)]
    quote: String,
    #[serde(default)]
    inspiration: String,
    #[serde(default)]
    proof: String,
    job_mission: String,
    job_perimeter: String,
    job_key_checks: String,
    #[serde(default)]
    prompt_domains: Vec<String>,
}

/// The seeded personas as stored rows (all active), in the file's order.
pub fn seeds() -> Result<Vec<Persona>, String> {
    let file: SeedFile = toml::from_str(SEED_FILE).map_err(|e| e.to_string())?;
    file.agent
        .into_iter()
        .map(|a| {
            Ok(Persona {
                group: a.group.parse().map_err(|e| format!("{}: {e}", a.codename))?,
                codename: a.codename,
                nickname: a.nickname,
                role: a.role,
                orchestrator: a.orchestrator,
                heritage: a.heritage,
                cognitive_frame: a.cognitive_frame,
                personality: a.personality,
                quote: a.quote,
                inspiration: a.inspiration,
                proof: a.proof,
                job_mission: a.job_mission,
                job_perimeter: a.job_perimeter,
                job_key_checks: a.job_key_checks,
                prompt_domains: a.prompt_domains,
                active: true,
            })
        })
        .collect()
}

/// A lesson as stored, with its vector when one was computed (and by which model).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredLesson {
    pub id: i64,
    pub agent_codename: Option<String>,
    pub text: String,
    pub created_at: DateTime<Utc>,
    pub embedding: Option<(Vec<f32>, String)>,
}
