//! Tools over notes, reminders, preferences, souvenirs, work time and the briefings.

use chrono::Duration;

use super::args::{arg_kind, enum_schema, tool_args, Date, Due, Flag, OptDate, OptName, Text};
use super::*;
use crate::memory::{briefing, worktime, AddPreference, Deactivate, MarkDone};
use crate::text::normalise;
use crate::time::{local_today, IsoDate};

/// Cosine similarity under which a souvenir is not returned: an anti-hallucination guard.
pub const SIMILARITY_THRESHOLD: f32 = 0.6;
/// Most souvenirs one search returns.
pub const SEARCH_LIMIT: usize = 5;

pub(super) fn register(tools: &mut Vec<Box<dyn DynTool>>) {
    tools.push(Box::new(CreerNote));
    tools.push(Box::new(ListerNotes));
    tools.push(Box::new(CreerRappel));
    tools.push(Box::new(ListerRappels));
    tools.push(Box::new(MarquerRappelFait));
    tools.push(Box::new(LireBriefingHebdo));
    tools.push(Box::new(LireTempsTravail));
    tools.push(Box::new(MemoriserPreference));
    tools.push(Box::new(ListerPreferences));
    tools.push(Box::new(DesactiverPreference));
    tools.push(Box::new(ChercherDansMemoire));
    tools.push(Box::new(MemoriserSouvenir));
}

tool_args! {
    pub struct CreerNoteArgs { texte: Text, projet: OptName }
}

pub struct CreerNote;

#[async_trait]
impl Tool for CreerNote {
    const NAME: ToolName = ToolName::CreerNote;
    const PAGE: Page = Page::Notes;
    type Args = CreerNoteArgs;

    fn description(&self) -> &'static str {
        "Crée une note (mémo sans effet sur ton comportement)."
    }
    async fn run(&self, ctx: &ToolContext, CreerNoteArgs { texte, projet }: Self::Args) -> Result<Outcome, StoreError> {
        let projet_id = match projet {
            None => None,
            Some(nom) => match lookup_project(ctx, &nom).await? {
                Ok(p) => Some(p.id),
                Err(refusal) => return Ok(Outcome::Refused(refusal)),
            },
        };
        let note = ctx.store.create_note(&texte, projet_id, ctx.now()).await?;
        Ok(Outcome::Done(Receipt::NoteCreated { note }))
    }
}

tool_args! {
    pub struct ListerNotesArgs {
        projet: OptName,
        contient: OptName,
        id: super::repeat_tools::OptId,
        derniers: super::repeat_tools::Derniers,
    }
}

pub struct ListerNotes;

#[async_trait]
impl Tool for ListerNotes {
    const NAME: ToolName = ToolName::ListerNotes;
    const PAGE: Page = Page::Notes;
    type Args = ListerNotesArgs;

    fn description(&self) -> &'static str {
        "Liste les notes (filtres : projet, mots ; une par son numéro avec id ; les dernières avec derniers)."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        ListerNotesArgs { projet, contient, id, derniers }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let (projet_id, projet) = match projet {
            None => (None, None),
            Some(nom) => match lookup_project(ctx, &nom).await? {
                Ok(p) => (Some(p.id), Some(p.nom)),
                Err(refusal) => return Ok(Outcome::Refused(refusal)),
            },
        };
        let mut notes = ctx.store.list_notes(projet_id).await?;
        if let Some(words) = &contient {
            notes.retain(|n| contains_words(&n.texte, words));
        }
        let (portee, notes) = super::repeat_tools::limit(notes, id, None, derniers, |n| n.id, |n| n.texte.as_str());
        if let (Some(id), true) = (id, notes.is_empty()) {
            return Ok(Outcome::Refused(Refusal::NoteUnknown { id }));
        }
        Ok(Outcome::Done(Receipt::Notes { projet, contient, notes, portee }))
    }
}

tool_args! {
    pub struct CreerRappelArgs { texte: Text, echeance: Due = "AAAA-MM-JJTHH:MM, heure locale" }
}

pub struct CreerRappel;

#[async_trait]
impl Tool for CreerRappel {
    const NAME: ToolName = ToolName::CreerRappel;
    const PAGE: Page = Page::Rappels;
    type Args = CreerRappelArgs;

    fn description(&self) -> &'static str {
        "Crée un rappel daté (chose à faire)."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let CreerRappelArgs { texte, echeance: (due, bare) } = args;
        let now = ctx.now();
        if due.0 < now - Duration::seconds(PAST_DUE_GRACE_SECS) {
            return Ok(Outcome::Refused(Refusal::DueDateInPast { echeance: due.0 }));
        }
        let rappel = ctx.store.create_rappel(&texte, due.0, now).await?;
        Ok(Outcome::Done(Receipt::ReminderCreated { rappel, bare_date: bare }))
    }
}

tool_args! {
    /// Read in this order (the filter, then `inclure_faits`): the first wrong one is said.
    pub struct ListerRappelsArgs {
        debut: OptDate = "AAAA-MM-JJ",
        fin: OptDate = "AAAA-MM-JJ",
        contient: OptName,
        inclure_faits: Flag,
        id: super::repeat_tools::OptId,
        derniers: super::repeat_tools::Derniers,
    }
}

pub struct ListerRappels;

#[async_trait]
impl Tool for ListerRappels {
    const NAME: ToolName = ToolName::ListerRappels;
    const PAGE: Page = Page::Rappels;
    type Args = ListerRappelsArgs;

    fn description(&self) -> &'static str {
        "Liste les rappels à faire (filtres : échéance entre debut et fin, mots ; un par son numéro avec id ; les derniers créés avec derniers)."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let ListerRappelsArgs { debut, fin, contient, inclure_faits, id, derniers } = args;
        // One by its number is found whether done or not.
        let include_done = inclure_faits || id.is_some();
        let filter = ReminderFilter { debut, fin, contient };
        if let (Some(debut), Some(fin)) = (filter.debut, filter.fin) {
            if fin.0 < debut.0 {
                return Ok(Outcome::Refused(Refusal::InvertedRange { debut, fin }));
            }
        }
        let mut rappels = ctx.store.list_rappels(include_done).await?;
        rappels.retain(|r| {
            let day = r.echeance.with_timezone(&ctx.tz).date_naive();
            filter.debut.is_none_or(|d| day >= d.0)
                && filter.fin.is_none_or(|f| day <= f.0)
                && filter.contient.as_deref().is_none_or(|w| contains_words(&r.texte, w))
        });
        // « les derniers »: the last ones created.
        if derniers.is_some() {
            rappels.sort_by_key(|r| r.id);
        }
        let (portee, rappels) = super::repeat_tools::limit(rappels, id, None, derniers, |r| r.id, |r| r.texte.as_str());
        if let (Some(id), true) = (id, rappels.is_empty()) {
            return Ok(Outcome::Refused(Refusal::ReminderUnknown { id }));
        }
        Ok(Outcome::Done(Receipt::Reminders { include_done, filter, rappels, now: ctx.now(), portee }))
    }
}

pub struct MarquerRappelFait;

#[async_trait]
impl Tool for MarquerRappelFait {
    const NAME: ToolName = ToolName::MarquerRappelFait;
    const PAGE: Page = Page::Rappels;
    type Args = ById;

    fn description(&self) -> &'static str {
        "Marque un rappel comme fait."
    }
    async fn run(&self, ctx: &ToolContext, ById { id }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.mark_rappel_done(id, ctx.now()).await? {
            MarkDone::Marked(rappel) => Outcome::Done(Receipt::ReminderDone { rappel }),
            MarkDone::NotFound => Outcome::Refused(Refusal::ReminderUnknown { id }),
            MarkDone::AlreadyDone(rappel) => Outcome::Refused(Refusal::ReminderAlreadyDone { rappel }),
            MarkDone::Advanced { before, after } => {
                Outcome::Done(Receipt::ReminderOccurrenceDone { before: *before, after: *after })
            }
        })
    }
}

arg_kind! {
    /// `jour` or `semaine` (the default), whatever the case and the accents.
    Periode: BriefingKind, required = false, schema |_d| enum_schema(&["jour", "semaine"]),
        read |a, f, _| match a.opt_name(f)?.as_deref().map(crate::text::normalise).as_deref() {
            None | Some("semaine") => Ok(BriefingKind::Weekly),
            Some("jour") => Ok(BriefingKind::Daily),
            Some(_) => Err(ArgError::new(f, ArgProblem::NotAllowed)),
        };
}

tool_args! {
    pub struct LireBriefingArgs { periode: Periode }
}

pub struct LireBriefingHebdo;

#[async_trait]
impl Tool for LireBriefingHebdo {
    const NAME: ToolName = ToolName::LireBriefingHebdo;
    const PAGE: Page = Page::Sessions;
    type Args = LireBriefingArgs;

    fn description(&self) -> &'static str {
        "Lit le briefing du jour ou de la semaine."
    }
    async fn run(
        &self,
        ctx: &ToolContext,
        LireBriefingArgs { periode: kind }: Self::Args,
    ) -> Result<Outcome, StoreError> {
        let text = match kind {
            BriefingKind::Weekly => briefing::weekly(ctx.store.as_ref(), ctx.now(), ctx.tz).await?,
            BriefingKind::Daily => briefing::daily(ctx.store.as_ref(), ctx.now(), ctx.tz).await?,
        };
        Ok(Outcome::Briefing(Briefing { kind, text }))
    }
}

tool_args! {
    pub struct LireTempsTravailArgs {
        debut: Date = "AAAA-MM-JJ",
        fin: OptDate = "AAAA-MM-JJ inclus, défaut debut",
        projet: OptName,
    }
}

pub struct LireTempsTravail;

#[async_trait]
impl Tool for LireTempsTravail {
    const NAME: ToolName = ToolName::LireTempsTravail;
    const PAGE: Page = Page::Sessions;
    type Args = LireTempsTravailArgs;

    fn description(&self) -> &'static str {
        "Lit le temps de travail mesuré sur des jours passés ou aujourd'hui."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let LireTempsTravailArgs { debut, fin, projet } = args;
        let fin = fin.unwrap_or(debut);
        if fin < debut {
            return Ok(Outcome::Refused(Refusal::InvertedRange { debut, fin }));
        }
        let now = ctx.now();
        let today = local_today(now, ctx.tz);
        if debut.0 > today {
            return Ok(Outcome::Refused(Refusal::FutureDate { debut, today }));
        }
        let (projet_id, projet) = match projet {
            None => (None, None),
            Some(nom) => match lookup_project(ctx, &nom).await? {
                Ok(p) => (Some(p.id), Some(p.nom)),
                Err(refusal) => return Ok(Outcome::Refused(refusal)),
            },
        };
        let from = debut.start_utc(ctx.tz);
        let Some(next_day) = fin.0.succ_opt() else {
            return Ok(Outcome::Refused(Refusal::InvalidArguments(ArgError::new("fin", ArgProblem::BadDate))));
        };
        let day_after = IsoDate(next_day).start_utc(ctx.tz);
        let until_now = day_after > now;
        let to = day_after.min(now);
        let sessions = ctx.store.sessions_overlapping(from, to, projet_id).await?;
        let totals = worktime::totals(&sessions, from, to, now);
        let running = if until_now {
            ctx.store.running_session().await?.filter(|s| projet.as_ref().is_none_or(|p| *p == s.projet))
        } else {
            None
        };
        Ok(Outcome::Done(Receipt::WorkTime { debut, fin, until_now, projet, totals, running }))
    }
}

pub struct MemoriserPreference;

#[async_trait]
impl Tool for MemoriserPreference {
    const NAME: ToolName = ToolName::MemoriserPreference;
    const PAGE: Page = Page::Preferences;
    type Args = ByTexte;

    fn description(&self) -> &'static str {
        "Mémorise une préférence durable sur ta façon de répondre (plafonnée)."
    }
    async fn run(&self, ctx: &ToolContext, ByTexte { texte }: Self::Args) -> Result<Outcome, StoreError> {
        let cap = ctx.preferences_cap;
        Ok(match ctx.store.add_preference(&texte, cap, ctx.now()).await? {
            AddPreference::Added { preference, active } => {
                Outcome::Done(Receipt::PreferenceStored { preference, active, cap })
            }
            AddPreference::CapReached { cap } => Outcome::Refused(Refusal::PreferenceCapReached { cap }),
            AddPreference::Duplicate(preference) => Outcome::Refused(Refusal::PreferenceDuplicate { preference }),
        })
    }
}

pub struct ListerPreferences;

#[async_trait]
impl Tool for ListerPreferences {
    const NAME: ToolName = ToolName::ListerPreferences;
    const PAGE: Page = Page::Preferences;
    type Args = super::repeat_tools::LectureArgs;

    fn description(&self) -> &'static str {
        "Liste les préférences avec leur numéro : toutes, une par son numéro (id), celles qui contiennent des mots, ou les dernières."
    }
    async fn run(&self, ctx: &ToolContext, args: Self::Args) -> Result<Outcome, StoreError> {
        let super::repeat_tools::LectureArgs { id, contient, derniers } = args;
        let all = ctx.store.list_preferences().await?;
        let active = u32::try_from(all.iter().filter(|p| p.active).count()).unwrap_or(u32::MAX);
        let (portee, preferences) =
            super::repeat_tools::limit(all, id, contient, derniers, |p| p.id, |p| p.texte.as_str());
        if let (Some(id), true) = (id, preferences.is_empty()) {
            return Ok(Outcome::Refused(Refusal::PreferenceUnknown { id }));
        }
        Ok(Outcome::Done(Receipt::Preferences { preferences, active, cap: ctx.preferences_cap, portee }))
    }
}

pub struct DesactiverPreference;

#[async_trait]
impl Tool for DesactiverPreference {
    const NAME: ToolName = ToolName::DesactiverPreference;
    const PAGE: Page = Page::Preferences;
    type Args = ById;

    fn description(&self) -> &'static str {
        "Désactive une préférence (seule façon d'en retirer une)."
    }
    async fn run(&self, ctx: &ToolContext, ById { id }: Self::Args) -> Result<Outcome, StoreError> {
        Ok(match ctx.store.deactivate_preference(id, ctx.now()).await? {
            Deactivate::Deactivated(preference) => Outcome::Done(Receipt::PreferenceDeactivated { preference }),
            Deactivate::NotFound => Outcome::Refused(Refusal::PreferenceUnknown { id }),
            Deactivate::AlreadyInactive(preference) => {
                Outcome::Refused(Refusal::PreferenceAlreadyInactive { preference })
            }
        })
    }
}

tool_args! {
    pub struct ChercherArgs { requete: Text }
}

pub struct ChercherDansMemoire;

#[async_trait]
impl Tool for ChercherDansMemoire {
    const NAME: ToolName = ToolName::ChercherDansMemoire;
    const PAGE: Page = Page::Souvenirs;
    type Args = ChercherArgs;

    fn description(&self) -> &'static str {
        "Cherche dans les souvenirs. À utiliser avant de dire que tu ne sais pas."
    }
    async fn run(&self, ctx: &ToolContext, ChercherArgs { requete }: Self::Args) -> Result<Outcome, StoreError> {
        let reason = match &ctx.embedder {
            None => KeywordReason::NoEmbeddingProvider,
            Some(embedder) => match vector_search(ctx, embedder.as_ref(), &requete).await {
                Ok(Some(receipt)) => return Ok(Outcome::Done(receipt)),
                Ok(None) => KeywordReason::EmbeddingFailed,
                Err(e) => return Err(e),
            },
        };
        let terms = keyword_terms(&requete);
        let hits = ctx
            .store
            .search_souvenirs_keyword(&terms, SEARCH_LIMIT as u32)
            .await?
            .into_iter()
            .map(|souvenir| SearchHit { souvenir, score: None })
            .collect();
        Ok(Outcome::Done(Receipt::Search { requete, search: SearchMode::Keyword { reason }, hits, not_indexed: 0 }))
    }
}

/// Cosine search; `Ok(None)` when the embedding provider failed for the query.
async fn vector_search(
    ctx: &ToolContext,
    embedder: &dyn Embedder,
    requete: &str,
) -> Result<Option<Receipt>, StoreError> {
    let query = match embedder.embed(&[requete.to_string()]).await {
        Ok(mut v) if v.len() == 1 => v.remove(0),
        Ok(_) => return Ok(None),
        Err(e) => {
            tracing::warn!(error = %e, "query embedding failed, falling back to keyword search");
            return Ok(None);
        }
    };
    let model = embedder.model().to_string();
    let mut stored = ctx.store.souvenir_embeddings().await?;
    // Souvenirs stored offline (or with another model) are embedded now, so none stays
    // unreachable by the vector search.
    let missing: Vec<usize> = stored
        .iter()
        .enumerate()
        .filter(|(_, (s, v))| v.is_none() || s.embedding_model.as_deref() != Some(model.as_str()))
        .map(|(i, _)| i)
        .collect();
    let mut not_indexed = 0u32;
    if !missing.is_empty() {
        let texts: Vec<String> = missing.iter().map(|&i| stored[i].0.texte.clone()).collect();
        match embedder.embed(&texts).await {
            Ok(vectors) if vectors.len() == texts.len() => {
                for (&i, vector) in missing.iter().zip(vectors) {
                    ctx.store.set_souvenir_embedding(stored[i].0.id, &vector, &model).await?;
                    stored[i].0.embedding_model = Some(model.clone());
                    stored[i].1 = Some(vector);
                }
            }
            _ => {
                not_indexed = u32::try_from(missing.len()).unwrap_or(u32::MAX);
                for &i in &missing {
                    stored[i].1 = None;
                }
            }
        }
    }
    let mut hits: Vec<SearchHit> = stored
        .into_iter()
        .filter_map(|(souvenir, v)| {
            let score = cosine(&query, v.as_deref()?)?;
            (score >= SIMILARITY_THRESHOLD).then_some(SearchHit { souvenir, score: Some(score) })
        })
        .collect();
    hits.sort_by(|a, b| b.score.partial_cmp(&a.score).unwrap_or(std::cmp::Ordering::Equal));
    hits.truncate(SEARCH_LIMIT);
    Ok(Some(Receipt::Search {
        requete: requete.to_string(),
        search: SearchMode::Vector { threshold: SIMILARITY_THRESHOLD, model },
        hits,
        not_indexed,
    }))
}

/// Cosine similarity; `None` for vectors of different sizes or of zero norm.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        dot += f64::from(*x) * f64::from(*y);
        na += f64::from(*x) * f64::from(*x);
        nb += f64::from(*y) * f64::from(*y);
    }
    if na == 0.0 || nb == 0.0 {
        return None;
    }
    Some((dot / (na.sqrt() * nb.sqrt())) as f32)
}

/// Words that carry no meaning for a keyword search.
const STOP_WORDS: &[&str] = &[
    "les",
    "des",
    "une",
    "que",
    "qui",
    "quoi",
    "dans",
    "pour",
    "par",
    "sur",
    "avec",
    "est",
    "suis",
    "mon",
    "mes",
    "ton",
    "tes",
    "son",
    "ses",
    "ce",
    "cette",
    "ces",
    "aux",
    "du",
    "au",
    "et",
    "ou",
    "je",
    "tu",
    "il",
    "elle",
    "nous",
    "vous",
    "ils",
    "elles",
    "moi",
    "toi",
    "quand",
    "comment",
    "avais",
    "avait",
    "ai",
    "as",
    "the",
    "and",
    "souviens",
    "rappelles",
    "dit",
    "dis",
];

/// The words of a query worth searching for.
pub fn keyword_terms(requete: &str) -> Vec<String> {
    let normalised = normalise(requete);
    let mut terms: Vec<String> = Vec::new();
    for word in normalised.split(|c: char| !c.is_alphanumeric()) {
        if word.chars().count() >= 3 && !STOP_WORDS.contains(&word) && !terms.iter().any(|t| t == word) {
            terms.push(word.to_string());
        }
    }
    terms
}

pub struct MemoriserSouvenir;

#[async_trait]
impl Tool for MemoriserSouvenir {
    const NAME: ToolName = ToolName::MemoriserSouvenir;
    const PAGE: Page = Page::Souvenirs;
    type Args = ByTexte;

    fn description(&self) -> &'static str {
        "Mémorise un souvenir durable (fait de vie), retrouvable par chercher_dans_memoire."
    }
    async fn run(&self, ctx: &ToolContext, ByTexte { texte }: Self::Args) -> Result<Outcome, StoreError> {
        // The text is never lost for want of an embedding: it is stored either way and
        // embedded at the next vector search.
        let embedding = match &ctx.embedder {
            Some(e) => match e.embed(std::slice::from_ref(&texte)).await {
                Ok(mut v) if v.len() == 1 => Some((v.remove(0), e.model().to_string())),
                Ok(_) => None,
                Err(err) => {
                    tracing::warn!(error = %err, "souvenir stored without embedding");
                    None
                }
            },
            None => None,
        };
        let souvenir = ctx
            .store
            .add_souvenir(&texte, embedding.as_ref().map(|(v, m)| (v.as_slice(), m.as_str())), ctx.now())
            .await?;
        Ok(Outcome::Done(Receipt::SouvenirStored { souvenir }))
    }
}
