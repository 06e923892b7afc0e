//! The personas of `atlas_agents` on a real migrated SQLite file: every seeded agent loads,
//! an unknown or inactive one is an error, the three briefing levels nest and keep to their
//! budgets, lessons come own-first with and without embeddings, the ring cannot disagree
//! with the family, and `/atlas/agents` shows them grouped, escaped.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use arthur_agents::llm::embeddings::{EmbedError, Embedder};
use arthur_agents::memory::SqliteStore;
use arthur_agents::text::normalise;
use arthur_atlas::persona::{
    self, agent_for, clipped_fields, estimate_tokens, format_briefing, lessons_for, ring, BriefingLevel, Group,
    PersonaError, Relevance, DOMAIN_AGENTS, ORCHESTRATOR_RING,
};
use sqlx::SqlitePool;

use arthur_atlas::store::SqliteAtlasStore;

use crate::support::start_time;

/// The seeded agents and their families.
const SEEDED: [(&str, Group); 10] = [
    ("atlas", Group::Direction),
    ("strategie", Group::Direction),
    ("architecte", Group::Cadrage),
    ("securite", Group::Cadrage),
    ("backend", Group::Execution),
    ("frontend", Group::Execution),
    ("seo-technique", Group::Execution),
    ("redaction", Group::Execution),
    ("qa", Group::Validation),
    ("accessibilite", Group::Validation),
];

struct Db {
    _dir: tempfile::TempDir,
    store: SqliteStore,
    atlas: SqliteAtlasStore,
}

impl Db {
    async fn open() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open_path(&dir.path().join("arthur.db")).await.unwrap();
        let atlas = SqliteAtlasStore::open(store.pool().clone()).await.unwrap();
        Db { _dir: dir, store, atlas }
    }

    fn pool(&self) -> &SqlitePool {
        self.store.pool()
    }

    /// The Atlas store, where the personas are read.
    fn agents(&self) -> &SqliteAtlasStore {
        &self.atlas
    }

    async fn sql(&self, statement: &str) -> Result<(), sqlx::Error> {
        sqlx::query(statement).execute(self.pool()).await.map(drop)
    }

    async fn lesson(&self, codename: Option<&str>, text: &str) -> i64 {
        persona::add_lesson(&self.atlas, codename, text, start_time()).await.unwrap()
    }
}

fn insert_agent(codename: &str, group: &str, orchestrator: u8) -> String {
    format!(
        "INSERT INTO atlas_agents (codename, nickname, role, group_name, orchestrator, cognitive_frame, \
         job_mission, job_perimeter, job_key_checks) \
         VALUES ('{codename}', 'N', 'R', '{group}', {orchestrator}, 'F', 'M', 'P', 'K')"
    )
}

#[tokio::test]
async fn every_seeded_persona_loads_with_its_family() {
    let db = Db::open().await;
    for (codename, group) in SEEDED {
        let p = persona::load(db.agents(), codename).await.unwrap();
        assert_eq!(p.codename, codename);
        assert_eq!(p.group, group, "{codename}");
        assert!(p.active);
        for text in [&p.nickname, &p.role, &p.cognitive_frame, &p.job_mission, &p.job_perimeter, &p.job_key_checks] {
            assert!(!text.trim().is_empty(), "{codename}");
        }
        for text in [&p.heritage, &p.personality, &p.quote, &p.inspiration, &p.proof] {
            assert!(!text.trim().is_empty(), "{codename}: the full level has an identity");
        }
        assert_eq!(p.cognitive_frame.lines().count(), 4, "{codename}: four cognitive dimensions");
    }
    let active: Vec<String> =
        persona::list_active(db.agents()).await.unwrap().into_iter().map(|p| p.codename).collect();
    assert_eq!(active[0], "atlas", "the orchestrator comes first");
    let expected: BTreeSet<String> = SEEDED.iter().map(|(c, _)| c.to_string()).collect();
    assert_eq!(active.iter().cloned().collect::<BTreeSet<String>>(), expected);
    for group in Group::ALL {
        assert!(SEEDED.iter().any(|(_, g)| *g == group), "{group} has an agent");
    }
}

#[tokio::test]
async fn unknown_or_inactive_agents_are_errors_never_empty_text() {
    let db = Db::open().await;
    assert!(matches!(persona::load(db.agents(), "inconnu").await, Err(PersonaError::Unknown(c)) if c == "inconnu"));
    assert!(matches!(persona::load(db.agents(), "").await, Err(PersonaError::Unknown(_))));
    db.sql("UPDATE atlas_agents SET active = 0 WHERE codename = 'redaction'").await.unwrap();
    assert!(
        matches!(persona::load(db.agents(), "redaction").await, Err(PersonaError::Inactive(c)) if c == "redaction")
    );
    assert!(matches!(lessons_for(db.agents(), "redaction", "texte", None, 3).await, Err(PersonaError::Inactive(_))));
    assert!(matches!(
        persona::bundle(db.agents(), "redaction", BriefingLevel::Metier, "texte", None, &[]).await,
        Err(PersonaError::Inactive(_))
    ));
    assert!(matches!(
        persona::bundle(db.agents(), "inconnu", BriefingLevel::Metier, "texte", None, &[]).await,
        Err(PersonaError::Unknown(_))
    ));
    assert!(matches!(lessons_for(db.agents(), "inconnu", "texte", None, 3).await, Err(PersonaError::Unknown(_))));
    let active = persona::list_active(db.agents()).await.unwrap();
    assert!(active.iter().all(|p| p.codename != "redaction"));
    // A lesson for an agent that does not exist is refused, not stored as global.
    assert!(matches!(
        persona::add_lesson(db.agents(), Some("inconnu"), "x", start_time()).await,
        Err(PersonaError::Unknown(_))
    ));
    assert!(matches!(persona::add_lesson(db.agents(), None, "  ", start_time()).await, Err(PersonaError::EmptyLesson)));
    // The database itself gone: an error, not an empty persona.
    db.store.close().await;
    assert!(matches!(persona::load(db.agents(), "backend").await, Err(PersonaError::Database(_))));
}

#[tokio::test]
async fn briefing_levels_nest_and_keep_to_their_budgets() {
    let db = Db::open().await;
    assert_eq!(BriefingLevel::default(), BriefingLevel::Metier);
    for p in persona::list_active(db.agents()).await.unwrap() {
        assert!(
            clipped_fields(&p).is_empty(),
            "{}: seeded fields are shown whole: {:?}",
            p.codename,
            clipped_fields(&p)
        );
        let [core, metier, full] = BriefingLevel::ALL.map(|level| format_briefing(&p, level));
        for (level, text) in BriefingLevel::ALL.into_iter().zip([&core, &metier, &full]) {
            let tokens = estimate_tokens(text);
            assert!(tokens * 10 <= level.budget_tokens() * 13, "{} {level:?}: {tokens} tokens\n{text}", p.codename);
            assert_eq!(text, &format_briefing(&p, level), "deterministic");
        }
        assert!(estimate_tokens(&core) < estimate_tokens(&metier) && estimate_tokens(&metier) < estimate_tokens(&full));
        let lines = |t: &str| t.lines().filter(|l| !l.is_empty()).map(str::to_string).collect::<BTreeSet<_>>();
        assert!(lines(&core).is_subset(&lines(&metier)), "{}: core ⊂ metier\n{core}\n{metier}", p.codename);
        assert!(lines(&metier).is_subset(&lines(&full)), "{}: metier ⊂ full", p.codename);
        // Core: the frame and who; metier adds the job; full adds the identity.
        let first_dimension = p.cognitive_frame.lines().next().unwrap();
        assert!(core.contains(first_dimension) && core.contains(&p.nickname) && core.contains(&p.codename));
        for job in [&p.role, &p.job_mission, &p.job_perimeter] {
            assert!(!core.contains(job.as_str()) && metier.contains(job.as_str()), "{}: {job}", p.codename);
        }
        for check in p.job_key_checks.lines() {
            assert!(metier.contains(&format!("- {check}")), "{}: {check}", p.codename);
        }
        for identity in [&p.heritage, &p.quote, &p.personality, &p.inspiration, &p.proof] {
            assert!(!metier.contains(identity.as_str()) && full.contains(identity.as_str()), "{}", p.codename);
        }
    }
}

#[tokio::test]
async fn the_ring_is_derived_from_the_family_and_one_agent_only_sits_at_the_centre() {
    let db = Db::open().await;
    let agents = persona::list_active(db.agents()).await.unwrap();
    let centre: Vec<_> = agents.iter().filter(|p| p.ring() == ORCHESTRATOR_RING).collect();
    assert_eq!(centre.len(), 1);
    assert_eq!(centre[0].codename, "atlas");
    assert!(centre[0].orchestrator && centre[0].group == Group::Direction);
    for p in agents.iter().filter(|p| !p.orchestrator) {
        assert_eq!(p.ring(), ring(p.group), "{}", p.codename);
    }
    // The database keeps no ring of its own that could disagree.
    let columns: Vec<String> =
        sqlx::query_scalar("SELECT name FROM pragma_table_info('atlas_agents')").fetch_all(db.pool()).await.unwrap();
    assert!(columns.iter().all(|c| !c.contains("orbit") && !c.contains("ring")), "{columns:?}");
    // A second agent at the centre, an orchestrator outside direction, Atlas deactivated:
    // all refused by the database.
    assert!(db.sql(&insert_agent("second-atlas", "direction", 1)).await.is_err());
    assert!(db.sql("UPDATE atlas_agents SET orchestrator = 1 WHERE codename = 'strategie'").await.is_err());
    assert!(db.sql("UPDATE atlas_agents SET group_name = 'execution' WHERE codename = 'atlas'").await.is_err());
    assert!(db.sql("UPDATE atlas_agents SET active = 0 WHERE codename = 'atlas'").await.is_err());
    let orchestrators: i64 = sqlx::query_scalar("SELECT count(*) FROM atlas_agents WHERE orchestrator = 1")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(orchestrators, 1);
    // Other rows obey the family and codename rules.
    db.sql(&insert_agent("veille", "cadrage", 0)).await.unwrap();
    assert_eq!(persona::load(db.agents(), "veille").await.unwrap().ring(), ring(Group::Cadrage));
    for bad in ["Veille", "veille_2", "-veille", "veille-", "veille--x", "2veille", "v"] {
        assert!(db.sql(&insert_agent(bad, "cadrage", 0)).await.is_err(), "{bad}");
    }
    assert!(db.sql(&insert_agent("orbite", "orbite", 0)).await.is_err());
}

#[tokio::test]
async fn launch_routing_names_seeded_agents_and_mirrors_their_prompt_domains() {
    let db = Db::open().await;
    let agents = persona::list_active(db.agents()).await.unwrap();
    let by_codename = |c: &str| agents.iter().find(|p| p.codename == c);
    for d in DOMAIN_AGENTS {
        let p = by_codename(d.codename).unwrap_or_else(|| panic!("{} routes to a missing agent", d.domain));
        assert!(p.prompt_domains.iter().any(|x| x == d.domain), "{} does not list {}", p.codename, d.domain);
        assert_eq!(p.group, d.group, "{}", d.codename);
    }
    for p in &agents {
        for domain in &p.prompt_domains {
            let routed = persona::domain_agent(domain).unwrap_or_else(|| panic!("{domain} is not routed"));
            assert_eq!(routed.codename, p.codename, "{domain}");
        }
    }
    let mut domains: Vec<Option<&str>> = DOMAIN_AGENTS.iter().map(|d| Some(d.domain)).collect();
    domains.extend([None, Some("podcast"), Some("")]);
    for intent in ["run", "question", "negociation", "conseil", "noise", "", "chantier"] {
        for complexity in ["leger", "plan", ""] {
            for domain in &domains {
                let codename = agent_for(intent, complexity, *domain);
                let p = persona::load(db.agents(), codename).await.unwrap();
                match intent {
                    "question" | "conseil" => assert!(matches!(p.group, Group::Cadrage | Group::Direction)),
                    "negociation" => assert_eq!(p.group, Group::Direction),
                    "run" => assert_ne!(p.group, Group::Direction, "a run is never given to direction"),
                    _ => assert!(p.orchestrator),
                }
            }
        }
    }
}

#[tokio::test]
async fn keyword_lessons_come_own_first_then_global_up_to_k() {
    let db = Db::open().await;
    let global_migration = db.lesson(None, "Toujours sauvegarder la base avant une migration de données.").await;
    let own_old =
        db.lesson(Some("backend"), "Une migration SQLite ne supporte pas ALTER COLUMN : recréer la table.").await;
    let frontend = db.lesson(Some("frontend"), "Migration du thème : vérifier la base des couleurs.").await;
    let own_best =
        db.lesson(Some("backend"), "Migration de la base : tester la migration sur une copie des données.").await;
    let global_other = db.lesson(None, "Écrire le contrat JSON tôt.").await;
    let global_base = db.lesson(None, "La base de préproduction est remise à zéro chaque nuit.").await;

    let query = "Peux-tu lancer la migration de la base de données ?";
    let got = lessons_for(db.agents(), "backend", query, None, 10).await.unwrap();
    let ids: Vec<i64> = got.iter().map(|l| l.id).collect();
    // Own lessons first (best first), then global ones (best first); never frontend's.
    assert_eq!(ids, vec![own_best, own_old, global_migration, global_base], "{got:#?}");
    assert!(!ids.contains(&frontend) && !ids.contains(&global_other));
    assert!(matches!(got[0].relevance, Relevance::Keywords(3)), "{:?}", got[0].relevance);
    assert_eq!(got[0].agent_codename.as_deref(), Some("backend"));
    assert_eq!(got[2].agent_codename, None);

    // k is respected, and own lessons are not pushed out by better global ones.
    let two = lessons_for(db.agents(), "backend", query, None, 2).await.unwrap();
    assert_eq!(two.iter().map(|l| l.id).collect::<Vec<_>>(), vec![own_best, own_old]);
    let three = lessons_for(db.agents(), "backend", query, None, 3).await.unwrap();
    assert_eq!(three.iter().map(|l| l.id).collect::<Vec<_>>(), vec![own_best, own_old, global_migration]);
    assert!(lessons_for(db.agents(), "backend", query, None, 0).await.unwrap().is_empty());
    assert!(lessons_for(db.agents(), "backend", "   ", None, 5).await.unwrap().is_empty());
    assert!(lessons_for(db.agents(), "backend", "licorne", None, 5).await.unwrap().is_empty());
    // Another agent: only global lessons (accents and case ignored).
    let qa = lessons_for(db.agents(), "qa", "BASE DE PRÉPRODUCTION", None, 5).await.unwrap();
    assert_eq!(qa.iter().map(|l| l.id).collect::<Vec<_>>(), vec![global_base, global_migration]);
}

/// A deterministic embedder: one dimension per normalised word of a small vocabulary.
struct BagOfWords {
    model: String,
    calls: AtomicUsize,
    texts: AtomicUsize,
    fail: bool,
}

const VOCABULARY: [&str; 8] = ["migration", "base", "donnees", "sauvegarde", "couleur", "contrat", "json", "theme"];

impl BagOfWords {
    fn new(model: &str) -> Self {
        BagOfWords { model: model.into(), calls: AtomicUsize::new(0), texts: AtomicUsize::new(0), fail: false }
    }
}

#[async_trait::async_trait]
impl Embedder for BagOfWords {
    fn model(&self) -> &str {
        &self.model
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        if self.fail {
            return Err(EmbedError::Status { status: 503 });
        }
        Ok(texts
            .iter()
            .map(|t| {
                let text = normalise(t);
                let mut v: Vec<f32> = VOCABULARY.iter().map(|w| text.matches(w).count() as f32).collect();
                v.push(0.05); // never a zero vector
                v
            })
            .collect())
    }
}

#[tokio::test]
async fn similar_lessons_come_own_first_and_vectors_are_stored_once() {
    let db = Db::open().await;
    let global_close = db.lesson(None, "Migration de la base de données : sauvegarde d'abord.").await;
    let own_close = db.lesson(Some("backend"), "Migration de base : une copie des données.").await;
    let own_far = db.lesson(Some("backend"), "Le contrat JSON est écrit tôt.").await;
    let frontend = db.lesson(Some("frontend"), "Migration de la base de couleurs du thème.").await;
    let global_far = db.lesson(None, "Couleur du thème.").await;

    let embedder = BagOfWords::new("bow-1");
    let got = lessons_for(db.agents(), "backend", "migration de la base de données", Some(&embedder), 5).await.unwrap();
    let ids: Vec<i64> = got.iter().map(|l| l.id).collect();
    assert_eq!(ids, vec![own_close, global_close], "{got:#?}");
    assert!(!ids.contains(&own_far) && !ids.contains(&frontend) && !ids.contains(&global_far));
    for l in &got {
        let Relevance::Similarity(score) = l.relevance else { panic!("{l:?}") };
        assert!(score >= persona::LESSON_SIMILARITY_THRESHOLD);
    }
    // The query and the four lessons in reach (own + global) embedded, in two calls.
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 2);
    assert_eq!(embedder.texts.load(Ordering::SeqCst), 5);
    let stored: Vec<(i64, Option<String>)> =
        sqlx::query_as("SELECT id, embedding_model FROM atlas_lessons WHERE embedding IS NOT NULL ORDER BY id")
            .fetch_all(db.pool())
            .await
            .unwrap();
    assert_eq!(
        stored.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        vec![global_close, own_close, own_far, global_far]
    );
    assert!(stored.iter().all(|(_, m)| m.as_deref() == Some("bow-1")));

    // Again: only the query is embedded. k = 1: the own lesson wins over the global one.
    let one = lessons_for(db.agents(), "backend", "migration de la base de données", Some(&embedder), 1).await.unwrap();
    assert_eq!(one.iter().map(|l| l.id).collect::<Vec<_>>(), vec![own_close]);
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 3);
    assert_eq!(embedder.texts.load(Ordering::SeqCst), 6);

    // Another model: the stored vectors are recomputed for it.
    let other = BagOfWords::new("bow-2");
    lessons_for(db.agents(), "backend", "contrat json", Some(&other), 5).await.unwrap();
    assert_eq!(other.texts.load(Ordering::SeqCst), 5);

    // A failing provider is an error, not "no lessons"; the keyword path still answers.
    let mut failing = BagOfWords::new("bow-3");
    failing.fail = true;
    let err = lessons_for(db.agents(), "backend", "migration", Some(&failing), 5).await.unwrap_err();
    assert!(matches!(err, PersonaError::Embedding(EmbedError::Status { status: 503 })), "{err:?}");
    assert!(!lessons_for(db.agents(), "backend", "migration", None, 5).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_bundle_holds_briefing_lessons_and_preferences_in_their_sections() {
    let db = Db::open().await;
    db.lesson(Some("seo-technique"), "Un noindex oublié en préproduction a déjà été déployé : vérifier robots.txt.")
        .await;
    db.lesson(None, "Vérifier le sitemap après chaque déploiement.").await;
    let preferences = vec!["Tutoiement interdit avec les clients.".to_string(), "  ".to_string()];
    let text = persona::bundle(
        db.agents(),
        "seo-technique",
        BriefingLevel::Metier,
        "le sitemap et robots.txt du client",
        None,
        &preferences,
    )
    .await
    .unwrap();
    let p = persona::load(db.agents(), "seo-technique").await.unwrap();
    assert!(text.starts_with(&format_briefing(&p, BriefingLevel::Metier)), "{text}");
    let lessons_at = text.find("\n## Leçons consignées\n").expect("lessons section");
    let preferences_at = text.find("\n## Préférences du fondateur\n").expect("preferences section");
    assert!(lessons_at < preferences_at);
    let own = text.find("- [propre] Un noindex oublié").expect("own lesson");
    let global = text.find("- [globale] Vérifier le sitemap").expect("global lesson");
    assert!(lessons_at < own && own < global && global < preferences_at, "{text}");
    assert!(text.ends_with("- Tutoiement interdit avec les clients.\n"), "{text}");

    let empty = persona::bundle(db.agents(), "qa", BriefingLevel::Core, "licorne", None, &[]).await.unwrap();
    assert!(empty.contains("Aucune leçon consignée ne correspond à cette demande."));
    assert!(empty.contains("Aucune préférence du fondateur transmise."));
}
