//! The persona Claude Code puts on before an Atlas launch (spec §2.4): an agent read from
//! `atlas_agents`, rendered at one of three token budgets, with its lessons (its own first,
//! then global ones) and the founder's preferences. Loading never degrades to an empty
//! string: an unknown agent, a database or an embedding failure is an error the caller sees.
//!
//! The visual ring is derived here, from the family alone (plus Atlas' dedicated centre), so
//! the spec's divergence between a stored `orbite` and a recomputed ring cannot recur: there
//! is no second field to disagree with.

use std::borrow::Cow;

use arthur_agents::llm::embeddings::{EmbedError, Embedder};
use arthur_agents::memory::{MemoryStore, StoreError};
use arthur_agents::text::normalise;
use arthur_agents::tools::cosine;
use chrono::{DateTime, Utc};

use crate::store::{AtlasStore, AtlasStoreError};

pub use crate::roster::{ring, seeds, Group, Persona, StoredLesson, ORCHESTRATOR_RING, SEED_FILE};

/// Cosine similarity under which a lesson is not recalled (the souvenirs' threshold).
pub const LESSON_SIMILARITY_THRESHOLD: f32 = 0.6;
/// Lessons recalled into a bundle.
pub const BUNDLE_LESSONS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum PersonaError {
    #[error("unknown agent {0:?}")]
    Unknown(String),
    #[error("agent {0:?} is not active")]
    Inactive(String),
    #[error("a lesson cannot be empty")]
    EmptyLesson,
    #[error("agents database: {0}")]
    Database(#[from] AtlasStoreError),
    #[error("embedding lessons: {0}")]
    Embedding(#[from] EmbedError),
}

/// Upserts the seeded personas by codename (their texts follow the file; which agents are
/// active stays the founder's choice); how many rows were written. Idempotent: a second
/// call writes nothing.
pub async fn seed(store: &dyn AtlasStore) -> Result<u64, AtlasStoreError> {
    store.upsert_agents(&seeds().map_err(AtlasStoreError::Seeds)?).await
}

/// The active agent `codename`; an unknown or inactive one is an error.
pub async fn load(store: &dyn AtlasStore, codename: &str) -> Result<Persona, PersonaError> {
    let persona = store.agent(codename.trim()).await?.ok_or_else(|| PersonaError::Unknown(codename.to_string()))?;
    if !persona.active {
        return Err(PersonaError::Inactive(persona.codename));
    }
    Ok(persona)
}

/// Every active agent, the orchestrator first, then by codename.
pub async fn list_active(store: &dyn AtlasStore) -> Result<Vec<Persona>, PersonaError> {
    Ok(store.active_agents().await?)
}

// ---------- briefing ----------

/// How much of the persona a briefing carries (spec §2.4), by token budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BriefingLevel {
    /// ~150 tokens: cognitive frame and minimal identity (fast path, sub-agents).
    Core,
    /// ~350 tokens: core + role, mission, perimeter, key checks (the launcher's default).
    #[default]
    Metier,
    /// ~600 tokens: metier + heritage, personality, inspiration, proof, quote.
    Full,
}

impl BriefingLevel {
    pub const ALL: [BriefingLevel; 3] = [BriefingLevel::Core, BriefingLevel::Metier, BriefingLevel::Full];

    /// The target size in tokens (estimated by [`estimate_tokens`]).
    pub fn budget_tokens(self) -> usize {
        match self {
            BriefingLevel::Core => 150,
            BriefingLevel::Metier => 350,
            BriefingLevel::Full => 600,
        }
    }
}

/// Rough token count: one token per four characters.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Most characters each field brings to a briefing: longer stored text is cut at a word
/// with "…", so every level stays within its budget whatever the table holds. The seeded
/// personas fit (tested), so they are never cut.
mod caps {
    pub const NICKNAME: usize = 64;
    pub const CODENAME: usize = 64;
    pub const FRAME: usize = 480;
    pub const ROLE: usize = 120;
    pub const MISSION: usize = 240;
    pub const PERIMETER: usize = 280;
    pub const KEY_CHECKS: usize = 360;
    pub const KEY_CHECK_LINES: usize = 6;
    pub const HERITAGE: usize = 160;
    pub const PERSONALITY: usize = 240;
    pub const INSPIRATION: usize = 180;
    pub const PROOF: usize = 200;
    pub const QUOTE: usize = 160;
    pub const LESSON: usize = 400;
}

/// The fields of `p` longer than what a briefing shows of them (empty: nothing is cut).
pub fn clipped_fields(p: &Persona) -> Vec<&'static str> {
    let fields: [(&'static str, &str, usize); 12] = [
        ("nickname", &p.nickname, caps::NICKNAME),
        ("codename", &p.codename, caps::CODENAME),
        ("cognitive_frame", &p.cognitive_frame, caps::FRAME),
        ("role", &p.role, caps::ROLE),
        ("job_mission", &p.job_mission, caps::MISSION),
        ("job_perimeter", &p.job_perimeter, caps::PERIMETER),
        ("job_key_checks", &p.job_key_checks, caps::KEY_CHECKS),
        ("heritage", &p.heritage, caps::HERITAGE),
        ("personality", &p.personality, caps::PERSONALITY),
        ("inspiration", &p.inspiration, caps::INSPIRATION),
        ("proof", &p.proof, caps::PROOF),
        ("quote", &p.quote, caps::QUOTE),
    ];
    let mut out: Vec<&'static str> =
        fields.iter().filter(|(_, text, cap)| text.trim().chars().count() > *cap).map(|(name, _, _)| *name).collect();
    if lines(&p.job_key_checks).count() > caps::KEY_CHECK_LINES && !out.contains(&"job_key_checks") {
        out.push("job_key_checks");
    }
    out
}

/// `text` trimmed, cut to at most `max` characters (at a word when one ends near the cut),
/// "…" marking the cut.
fn clip(text: &str, max: usize) -> Cow<'_, str> {
    let text = text.trim();
    if text.chars().count() <= max {
        return Cow::Borrowed(text);
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let cut = match head.rfind(char::is_whitespace) {
        Some(at) if head[at..].chars().count() <= 30 => head[..at].trim_end().to_string(),
        _ => head,
    };
    Cow::Owned(format!("{cut}…"))
}

/// The non-empty lines of `text`, trimmed.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty())
}

/// The persona as markdown for the system prompt, in French. Deterministic; each level's
/// lines are all found in the next level (core ⊂ metier ⊂ full).
pub fn format_briefing(p: &Persona, level: BriefingLevel) -> String {
    let metier = matches!(level, BriefingLevel::Metier | BriefingLevel::Full);
    let full = level == BriefingLevel::Full;
    let mut out = String::new();
    out.push_str(&format!(
        "## Persona : {} ({})\n",
        clip(&p.nickname, caps::NICKNAME),
        clip(&p.codename, caps::CODENAME)
    ));
    out.push_str(&format!(
        "Tu endosses cette persona pour toute la tâche. Famille : {}.\n",
        p.group.label().to_lowercase()
    ));
    if metier {
        out.push_str(&format!("Rôle : {}\n", clip(&p.role, caps::ROLE)));
    }
    out.push_str("\n### Cadre de raisonnement\n");
    for line in lines(&clip(&p.cognitive_frame, caps::FRAME)) {
        out.push_str(line);
        out.push('\n');
    }
    if metier {
        out.push_str(&format!("\n### Mission\n{}\n", clip(&p.job_mission, caps::MISSION)));
        out.push_str(&format!("\n### Périmètre\n{}\n", clip(&p.job_perimeter, caps::PERIMETER)));
        out.push_str("\n### Points de contrôle\n");
        for check in lines(&clip(&p.job_key_checks, caps::KEY_CHECKS)).take(caps::KEY_CHECK_LINES) {
            out.push_str(&format!("- {}\n", check.trim_start_matches("- ")));
        }
    }
    if full {
        let identity: [(&str, &str, usize); 4] = [
            ("Héritage", &p.heritage, caps::HERITAGE),
            ("Personnalité", &p.personality, caps::PERSONALITY),
            ("Inspiration", &p.inspiration, caps::INSPIRATION),
            ("Preuve attendue", &p.proof, caps::PROOF),
        ];
        let quote = clip(&p.quote, caps::QUOTE);
        if identity.iter().any(|(_, text, _)| !text.trim().is_empty()) || !quote.is_empty() {
            out.push_str("\n### Identité\n");
            for (label, text, cap) in identity {
                let text = clip(text, cap);
                if !text.is_empty() {
                    out.push_str(&format!("{label} : {}\n", text.replace('\n', " ")));
                }
            }
            if !quote.is_empty() {
                out.push_str(&format!("Devise : « {} »\n", quote.replace('\n', " ")));
            }
        }
    }
    out
}

// ---------- lessons ----------

/// Why a lesson was recalled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Relevance {
    /// Cosine similarity with the query (at least [`LESSON_SIMILARITY_THRESHOLD`]).
    Similarity(f32),
    /// How many of the query's words it shares.
    Keywords(usize),
}

/// A lesson recalled for a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    pub id: i64,
    /// None: a global lesson.
    pub agent_codename: Option<String>,
    pub text: String,
    pub created_at: DateTime<Utc>,
    pub relevance: Relevance,
}

/// The founder's active preferences (Arthur's memory, through its store), oldest first.
pub async fn founder_preferences(memory: &dyn MemoryStore) -> Result<Vec<String>, StoreError> {
    Ok(memory.active_preferences(u32::MAX).await?.into_iter().map(|p| p.texte).collect())
}

/// Whether the agent `codename` is active; `Unknown` when no agent has that name.
async fn is_active(store: &dyn AtlasStore, codename: &str) -> Result<bool, PersonaError> {
    let agent = store.agent(codename).await?;
    agent.map(|a| a.active).ok_or_else(|| PersonaError::Unknown(codename.to_string()))
}

/// Records a lesson for `codename` (None: a global lesson) and returns its id. Its
/// embedding is computed the first time a similarity search meets it.
pub async fn add_lesson(
    store: &dyn AtlasStore,
    codename: Option<&str>,
    text: &str,
    now: DateTime<Utc>,
) -> Result<i64, PersonaError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(PersonaError::EmptyLesson);
    }
    if let Some(codename) = codename {
        is_active(store, codename).await?;
    }
    Ok(store.add_lesson(codename, text, now).await?)
}

/// At most `k` lessons relevant to `query` for the active agent `codename`: its own first,
/// then global ones to fill up to `k` (so a backend agent never sees a frontend agent's
/// lessons, and its own never lose to global ones).
///
/// With an embedder: cosine similarity at or above [`LESSON_SIMILARITY_THRESHOLD`]; lessons
/// without a vector for this model are embedded now and the vectors stored. Without one:
/// shared words (accents and case ignored, a word matching its longer forms). An empty
/// query matches nothing. Every failure, the embedder's included, is returned: the caller
/// decides whether to try again without an embedder.
pub async fn lessons_for(
    store: &dyn AtlasStore,
    codename: &str,
    query: &str,
    embedder: Option<&dyn Embedder>,
    k: usize,
) -> Result<Vec<Lesson>, PersonaError> {
    if !is_active(store, codename).await? {
        return Err(PersonaError::Inactive(codename.to_string()));
    }
    if k == 0 || query.trim().is_empty() {
        return Ok(Vec::new());
    }
    let stored = store.lessons(codename).await?;
    let mut scored = match embedder {
        Some(embedder) => by_similarity(store, embedder, query, stored).await?,
        None => by_keywords(query, stored),
    };
    // Best first; ties: the most recent lesson first.
    scored.sort_by(|a, b| {
        let score = |l: &Lesson| match l.relevance {
            Relevance::Similarity(s) => f64::from(s),
            Relevance::Keywords(n) => n as f64,
        };
        score(b).partial_cmp(&score(a)).unwrap_or(std::cmp::Ordering::Equal).then(b.id.cmp(&a.id))
    });
    let (own, global): (Vec<Lesson>, Vec<Lesson>) = scored.into_iter().partition(|l| l.agent_codename.is_some());
    Ok(own.into_iter().chain(global).take(k).collect())
}

async fn by_similarity(
    store: &dyn AtlasStore,
    embedder: &dyn Embedder,
    query: &str,
    mut stored: Vec<StoredLesson>,
) -> Result<Vec<Lesson>, PersonaError> {
    let model = embedder.model().to_string();
    let query_vector = match embedder.embed(&[query.to_string()]).await? {
        mut v if v.len() == 1 => v.remove(0),
        _ => return Err(EmbedError::Malformed("not one vector for the query").into()),
    };
    let missing: Vec<usize> =
        (0..stored.len()).filter(|&i| stored[i].embedding.as_ref().is_none_or(|(_, m)| *m != model)).collect();
    if !missing.is_empty() {
        let texts: Vec<String> = missing.iter().map(|&i| stored[i].text.clone()).collect();
        let vectors = embedder.embed(&texts).await?;
        if vectors.len() != texts.len() {
            return Err(EmbedError::Malformed("not one vector per lesson").into());
        }
        let updates: Vec<(i64, &[f32])> =
            missing.iter().zip(&vectors).map(|(&i, v)| (stored[i].id, v.as_slice())).collect();
        store.set_lesson_vectors(&updates, &model).await?;
        for (&i, vector) in missing.iter().zip(vectors) {
            stored[i].embedding = Some((vector, model.clone()));
        }
    }
    Ok(stored
        .into_iter()
        .filter_map(|l| {
            let score = cosine(&query_vector, &l.embedding.as_ref()?.0)?;
            (score >= LESSON_SIMILARITY_THRESHOLD).then(|| recalled(l, Relevance::Similarity(score)))
        })
        .collect())
}

fn by_keywords(query: &str, stored: Vec<StoredLesson>) -> Vec<Lesson> {
    let terms = keyword_terms(query);
    stored
        .into_iter()
        .filter_map(|l| {
            let words = keyword_terms(&l.text);
            let shared = terms.iter().filter(|t| words.iter().any(|w| same_word(t, w))).count();
            (shared > 0).then(|| recalled(l, Relevance::Keywords(shared)))
        })
        .collect()
}

fn recalled(l: StoredLesson, relevance: Relevance) -> Lesson {
    Lesson { id: l.id, agent_codename: l.agent_codename, text: l.text, created_at: l.created_at, relevance }
}

/// Equal, or one a longer form of the other when the shorter has at least four letters
/// ("migration" finds "migrations").
fn same_word(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short == long || (short.chars().count() >= 4 && long.starts_with(short))
}

/// Words that say nothing about a lesson.
const STOP_WORDS: &[&str] = &[
    "les", "des", "une", "que", "qui", "quoi", "dans", "pour", "par", "sur", "avec", "est", "sont", "pas", "plus",
    "mais", "son", "ses", "aux", "nous", "vous", "ils", "elles", "cette", "ces", "tout", "tous", "toute", "leur",
    "leurs", "ete", "avant", "apres", "the", "and",
];

/// The distinct words of `text` worth matching (normalised, three letters or more).
fn keyword_terms(text: &str) -> Vec<String> {
    let normalised = normalise(text);
    let mut terms: Vec<String> = Vec::new();
    for word in normalised.split(|c: char| !c.is_alphanumeric()) {
        if word.chars().count() >= 3 && !STOP_WORDS.contains(&word) && !terms.iter().any(|t| t == word) {
            terms.push(word.to_string());
        }
    }
    terms
}

// ---------- bundle ----------

/// What the launched Claude reads about who it is: the briefing at `level`, the lessons
/// recalled for `query` (at most [`BUNDLE_LESSONS`]), and the founder's preferences (given by
/// the caller), each in its own section. Any failure is returned, never an empty bundle.
pub async fn bundle(
    store: &dyn AtlasStore,
    codename: &str,
    level: BriefingLevel,
    query: &str,
    embedder: Option<&dyn Embedder>,
    founder_preferences: &[String],
) -> Result<String, PersonaError> {
    let persona = load(store, codename).await?;
    let lessons = lessons_for(store, &persona.codename, query, embedder, BUNDLE_LESSONS).await?;
    let mut out = format_briefing(&persona, level);
    out.push_str("\n## Leçons consignées\n");
    if lessons.is_empty() {
        out.push_str("Aucune leçon consignée ne correspond à cette demande.\n");
    }
    for lesson in &lessons {
        let scope = if lesson.agent_codename.is_some() { "propre" } else { "globale" };
        out.push_str(&format!("- [{scope}] {}\n", clip(&lesson.text, caps::LESSON).replace('\n', " ")));
    }
    out.push_str("\n## Préférences du fondateur\n");
    let preferences: Vec<&str> = founder_preferences.iter().map(|p| p.trim()).filter(|p| !p.is_empty()).collect();
    if preferences.is_empty() {
        out.push_str("Aucune préférence du fondateur transmise.\n");
    }
    for preference in preferences {
        out.push_str(&format!("- {}\n", preference.replace('\n', " ")));
    }
    Ok(out)
}

// ---------- which agent a launch puts on ----------

/// A prompt domain (spec §7.3) and the agent it routes to. Mirrors the seeded
/// `prompt_domains` (tested both ways).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainAgent {
    pub domain: &'static str,
    pub codename: &'static str,
    pub group: Group,
}

const fn domain(domain: &'static str, codename: &'static str, group: Group) -> DomainAgent {
    DomainAgent { domain, codename, group }
}

pub const DOMAIN_AGENTS: [DomainAgent; 18] = [
    domain("offre", "strategie", Group::Direction),
    domain("devis", "strategie", Group::Direction),
    domain("tarif", "strategie", Group::Direction),
    domain("architecture", "architecte", Group::Cadrage),
    domain("securite", "securite", Group::Cadrage),
    domain("backend", "backend", Group::Execution),
    domain("api", "backend", Group::Execution),
    domain("base-de-donnees", "backend", Group::Execution),
    domain("frontend", "frontend", Group::Execution),
    domain("interface", "frontend", Group::Execution),
    domain("cover", "frontend", Group::Execution),
    domain("seo", "seo-technique", Group::Execution),
    domain("contenu", "redaction", Group::Execution),
    domain("faq", "redaction", Group::Execution),
    domain("linkedin", "redaction", Group::Execution),
    domain("qa", "qa", Group::Validation),
    domain("tests", "qa", Group::Validation),
    domain("accessibilite", "accessibilite", Group::Validation),
];

/// The agent a prompt domain routes to ("Sécurité", " SEO " and "base de données" match).
pub fn domain_agent(prompt_domain: &str) -> Option<&'static DomainAgent> {
    let key = normalise(prompt_domain).replace(' ', "-");
    DOMAIN_AGENTS.iter().find(|d| d.domain == key)
}

/// The codename a launch puts on, from the classifier's intent and complexity and an
/// optional prompt domain (all matched case- and accent-insensitively):
///
/// | intent                | domain's agent is…                 | otherwise                      |
/// |-----------------------|------------------------------------|--------------------------------|
/// | `negociation`         | (ignored)                          | `strategie` (direction)        |
/// | `question`, `conseil` | cadrage or direction → that agent  | `architecte` (cadrage)         |
/// | `run`                 | not direction → that agent         | `plan` → `architecte`, else `backend` |
/// | anything else         | (ignored)                          | `atlas` (fail-open)            |
///
/// A question or advice is framed, not executed, so it stays with a cadrage (or direction)
/// agent; a run goes to whoever works in its domain, a planned one without domain to the
/// architect who plans, a light one to the backend; an unknown intent gets the
/// orchestrator rather than a specialist chosen on a guess.
pub fn agent_for(intent: &str, complexity: &str, prompt_domain: Option<&str>) -> &'static str {
    let intent = normalise(intent);
    let planned = normalise(complexity) == "plan";
    let by_domain = prompt_domain.and_then(domain_agent);
    match intent.as_str() {
        "negociation" => "strategie",
        "question" | "conseil" => match by_domain {
            Some(d) if matches!(d.group, Group::Cadrage | Group::Direction) => d.codename,
            _ => "architecte",
        },
        "run" => match by_domain {
            Some(d) if d.group != Group::Direction => d.codename,
            _ if planned => "architecte",
            _ => "backend",
        },
        _ => "atlas",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn persona(group: Group, orchestrator: bool) -> Persona {
        Persona {
            codename: "x".into(),
            nickname: "X".into(),
            role: "r".into(),
            group,
            orchestrator,
            heritage: String::new(),
            cognitive_frame: "f".into(),
            personality: String::new(),
            quote: String::new(),
            inspiration: String::new(),
            proof: String::new(),
            job_mission: "m".into(),
            job_perimeter: "p".into(),
            job_key_checks: "k".into(),
            prompt_domains: Vec::new(),
            active: true,
        }
    }

    #[test]
    fn the_seed_file_holds_ten_agents_one_orchestrator_in_direction_and_routed_domains() {
        let seeds = seeds().unwrap();
        assert_eq!(seeds.len(), 10);
        let orchestrators: Vec<&Persona> = seeds.iter().filter(|p| p.orchestrator).collect();
        assert_eq!(orchestrators.len(), 1);
        assert_eq!((orchestrators[0].codename.as_str(), orchestrators[0].group), ("atlas", Group::Direction));
        for d in DOMAIN_AGENTS {
            let owner = seeds.iter().find(|p| p.prompt_domains.iter().any(|x| x == d.domain));
            assert_eq!(owner.map(|p| p.codename.as_str()), Some(d.codename), "{}", d.domain);
        }
        assert!(seeds.iter().all(|p| !p.cognitive_frame.starts_with('\n') && !p.job_key_checks.ends_with('\n')));
    }

    #[test]
    fn rings_follow_the_family_and_only_the_orchestrator_is_at_the_centre() {
        assert_eq!(Group::ALL.map(ring), [1, 2, 2, 3]);
        for group in Group::ALL {
            assert_eq!(persona(group, false).ring(), ring(group));
            assert_eq!(group.as_str().parse::<Group>().unwrap(), group);
        }
        assert_eq!(persona(Group::Direction, true).ring(), ORCHESTRATOR_RING);
        assert!("Direction".parse::<Group>().is_err());
    }

    #[test]
    fn clip_cuts_at_a_word_and_marks_the_cut() {
        assert_eq!(clip("  court  ", 10), "court");
        let long = "un deux trois quatre cinq six sept";
        let cut = clip(long, 16);
        assert!(cut.chars().count() <= 16, "{cut}");
        assert_eq!(cut, "un deux trois…");
        let word = "a".repeat(50);
        assert_eq!(clip(&word, 10).chars().count(), 10);
    }

    #[test]
    fn oversized_fields_keep_every_level_within_its_budget() {
        let mut p = persona(Group::Execution, false);
        let long = |w: &str| format!("{w} ").repeat(400);
        p.nickname = "N".repeat(64);
        p.codename = "c".repeat(64);
        p.role = long("rôle");
        p.cognitive_frame = long("cadre");
        p.job_mission = long("mission");
        p.job_perimeter = long("périmètre");
        p.job_key_checks = (0..40).map(|i| format!("contrôle {i} {}", long("x"))).collect::<Vec<_>>().join("\n");
        p.heritage = long("héritage");
        p.personality = long("personnalité");
        p.inspiration = long("inspiration");
        p.proof = long("preuve");
        p.quote = long("devise");
        assert!(!clipped_fields(&p).is_empty());
        for level in BriefingLevel::ALL {
            let text = format_briefing(&p, level);
            let limit = level.budget_tokens() * 13 / 10;
            assert!(estimate_tokens(&text) <= limit, "{level:?}: {} > {limit}\n{text}", estimate_tokens(&text));
        }
    }

    #[test]
    fn keywords_ignore_accents_case_and_small_words() {
        assert_eq!(keyword_terms("Les Migrations de la BASE, été"), vec!["migrations", "base"]);
        assert!(same_word("migration", "migrations"));
        assert!(same_word("api", "api"));
        assert!(!same_word("api", "apiculture"));
    }

    #[test]
    fn agent_for_routes_by_intent_then_domain() {
        assert_eq!(agent_for("run", "leger", None), "backend");
        assert_eq!(agent_for("run", "plan", None), "architecte");
        assert_eq!(agent_for("run", "leger", Some("SEO")), "seo-technique");
        assert_eq!(agent_for("run", "plan", Some("Sécurité")), "securite");
        assert_eq!(agent_for("run", "leger", Some("base de données")), "backend");
        assert_eq!(agent_for("run", "leger", Some("devis")), "backend");
        assert_eq!(agent_for("run", "leger", Some("podcast")), "backend");
        assert_eq!(agent_for("question", "leger", None), "architecte");
        assert_eq!(agent_for("conseil", "leger", Some("securite")), "securite");
        assert_eq!(agent_for("conseil", "leger", Some("tarif")), "strategie");
        assert_eq!(agent_for("question", "leger", Some("frontend")), "architecte");
        assert_eq!(agent_for(" Negociation ", "plan", Some("seo")), "strategie");
        assert_eq!(agent_for("noise", "leger", None), "atlas");
        assert_eq!(agent_for("", "", Some("seo")), "atlas");
    }
}
