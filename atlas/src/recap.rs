//! The recap e-mail Atlas composes after a run, for the founder only (doctrine "zéro mail
//! au client par l'IA"): the real status composed by code — a failed run is never called a
//! success — the agent's summary, the commits, the cost, and the proof files that exist on
//! disk (a missing or unreadable one is skipped and logged, never a reason to fail the send).
//! It composes only: [`letter`] hands a [`Letter`] to `smtp`, which delivers it.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::machine::{DeployFact, End, EscalateWhy, FailReason, MergeFact, NotMergedWhy, QaFact, RouteQa, Setback};
use super::smtp::{Attached, Letter};
use super::{Complexity, Intent};

/// A proof file larger than this is skipped (logged): one oversized capture must not get
/// the whole recap refused by the server.
pub const MAX_PROOF_BYTES: u64 = 10 * 1024 * 1024;
/// Total size of the attached proofs; the proofs past it are skipped (logged).
pub const MAX_PROOFS_TOTAL_BYTES: u64 = 20 * 1024 * 1024;
/// Longest request subject kept in the recap's subject line (in characters).
const MAX_SUBJECT_CHARS: usize = 150;

/// The status word of the recap's subject: what the facts allow the founder to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// The work is on the trunk (or needed no code) and QA passed or was not needed.
    Succeeded,
    /// An analysis or an answer, nothing to deploy.
    NoCode,
    /// The run delivered, but its work is not on the trunk (the branch is kept).
    NotMerged,
    /// On the trunk and deployed, but no QA checked it (`ATLAS_QA_CMD` unset).
    Unverified,
    Failed,
    TimedOut,
    Escalated,
    /// A run request that produced no commit (whatever the agent says it did).
    NoChange,
    /// Claude Code could not work (the API unavailable, root refused): tried again later.
    Parked,
}

impl RunStatus {
    pub const ALL: [RunStatus; 9] = [
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::TimedOut,
        RunStatus::Escalated,
        RunStatus::NoCode,
        RunStatus::NotMerged,
        RunStatus::Unverified,
        RunStatus::NoChange,
        RunStatus::Parked,
    ];

    /// The word of the subject line.
    pub fn word(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "terminé",
            RunStatus::Failed => "échec",
            RunStatus::TimedOut => "délai dépassé",
            RunStatus::Escalated => "escalade",
            RunStatus::NoCode => "analyse livrée",
            RunStatus::NotMerged => "non fusionné",
            RunStatus::Unverified => "à vérifier",
            RunStatus::NoChange => "aucun changement",
            RunStatus::Parked => "reporté",
        }
    }

    /// Whether the run delivered what it was asked (possibly not merged, or not verified):
    /// only then is the agent's summary shown as its report rather than its unconfirmed words.
    pub fn delivered(self) -> bool {
        matches!(self, RunStatus::Succeeded | RunStatus::NoCode | RunStatus::NotMerged | RunStatus::Unverified)
    }

    /// The body's status sentence, composed here and nowhere else.
    fn sentence(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "le run a abouti et son travail est sur le tronc.",
            RunStatus::NoCode => "une analyse a été livrée ; aucun code n'a été déployé.",
            RunStatus::NotMerged => "le run a abouti, mais son travail n'est PAS sur le tronc (voir « Fusion »).",
            RunStatus::Unverified => "le travail est sur le tronc et déployé, mais aucune QA ne l'a vérifié.",
            RunStatus::Failed => "le run n'a pas abouti ; rien n'est à considérer comme livré.",
            RunStatus::TimedOut => "le run a été interrompu avant la fin ; rien n'est à considérer comme livré.",
            RunStatus::Escalated => "Atlas n'a pas pu conclure seul ; une décision humaine est nécessaire.",
            RunStatus::NoChange => "aucun commit n'a été fait : rien n'a changé dans le dépôt.",
            RunStatus::Parked => {
                "Claude Code n'a pas pu travailler ; rien n'est à considérer comme livré, la demande sera reprise."
            }
        }
    }
}

/// A figure of the run (cost, turns, duration): known from the `result` events, partly known
/// when some pass had none, or unknown — never a 0 standing for "nothing was said".
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure<T> {
    Known(T),
    /// The sum of the passes that reported it; `missing` passes did not.
    Partial {
        known: T,
        missing: usize,
    },
    Unknown,
}

impl<T: Copy + std::ops::Add<Output = T>> Figure<T> {
    /// The sum over the passes' values (None: that pass had no `result` event).
    pub fn sum(values: impl IntoIterator<Item = Option<T>>) -> Figure<T> {
        let (mut known, mut missing): (Option<T>, usize) = (None, 0);
        for v in values {
            match v {
                Some(v) => known = Some(known.map_or(v, |k| k + v)),
                None => missing += 1,
            }
        }
        match (known, missing) {
            (Some(k), 0) => Figure::Known(k),
            (Some(k), m) => Figure::Partial { known: k, missing: m },
            (None, _) => Figure::Unknown,
        }
    }
}

/// What the recap reports: the facts the launcher recorded. The words around them — the
/// status word included — are composed by [`status`] and [`body`].
#[derive(Debug, Clone)]
pub struct Recap {
    pub email_id: i64,
    pub subject_of_request: String,
    pub client: Option<String>,
    /// As classified, and after the contract's downgrade.
    pub classified: (Intent, Complexity),
    pub lane: (Intent, Complexity),
    pub end: End,
    pub merge: MergeFact,
    pub deploy: DeployFact,
    pub qa: QaFact,
    /// A fact to add to the status line (an interruption by Arthur's shutdown…), or empty.
    pub note: String,
    /// The agent's summary (from its contract or salvaged).
    pub summary_md: String,
    /// (sha, subject)
    pub commits: Vec<(String, String)>,
    pub cost_usd: Figure<f64>,
    pub turns: Figure<u64>,
    pub duration_s: Figure<u64>,
    /// Screenshots, boards…; missing files are skipped.
    pub proofs: Vec<PathBuf>,
    /// Commits the agent cites (its contract, its words) that the branch does not back.
    pub claims: Vec<CitedCommit>,
    /// The agent wrote its contract (false: the summary is its transcript).
    pub contract_written: bool,
    /// Tool calls the permission mode denied ("Bash : echo hi > HELLO.md").
    pub denied: Vec<String>,
    /// When a parked message will be tried again, and how long from the recap that is.
    pub retry_at: Option<(DateTime<Utc>, chrono::Duration)>,
}

/// A commit the agent cites that is not one of this run's commits on its branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedCommit {
    /// As the agent wrote it.
    pub cited: String,
    pub found: CommitFound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitFound {
    /// No such commit on the branch.
    Nowhere,
    /// On the branch, but from before this run: not a change of the run.
    BeforeRun,
}

impl CitedCommit {
    /// « l'agent cite le commit deadbee…, introuvable sur la branche. »
    pub fn sentence(&self) -> String {
        let short: String = one_line(&self.cited).chars().take(7).collect();
        let ellipsis = if self.cited.chars().count() > 7 { "…" } else { "" };
        match self.found {
            CommitFound::Nowhere => format!("l'agent cite le commit {short}{ellipsis}, introuvable sur la branche."),
            CommitFound::BeforeRun => format!(
                "l'agent cite le commit {short}{ellipsis}, antérieur à ce run : ce n'est pas un changement qu'il a fait."
            ),
        }
    }
}

/// The status word the facts allow. « terminé » only when the work is on the trunk (or needed
/// no code) and QA passed or was not needed.
pub fn status(r: &Recap) -> RunStatus {
    match r.end {
        End::Failed(FailReason::NoChange) => RunStatus::NoChange,
        End::Failed(_) => RunStatus::Failed,
        End::TimedOut { .. } | End::Interrupted => RunStatus::TimedOut,
        End::Escalated(_) => RunStatus::Escalated,
        End::Parked { .. } => RunStatus::Parked,
        End::Delivered if !r.merge.on_trunk() => RunStatus::NotMerged,
        // A run request is for a change: without a commit it made none, whatever it says.
        End::Delivered if r.commits.is_empty() && r.lane.0 == Intent::Run => RunStatus::NoChange,
        End::Delivered if r.commits.is_empty() && r.deploy == DeployFact::NotNeeded => RunStatus::NoCode,
        End::Delivered => match r.qa {
            QaFact::Passed { .. } | QaFact::NotNeeded => RunStatus::Succeeded,
            QaFact::NotConfigured | QaFact::NotReached | QaFact::Failed { .. } => RunStatus::Unverified,
        },
    }
}

fn lane_words((intent, complexity): (Intent, Complexity)) -> String {
    if intent == Intent::Run {
        format!("{} / {}", intent.as_str(), complexity.as_str())
    } else {
        intent.as_str().to_string()
    }
}

/// The line about the trunk.
pub fn merge_line(merge: &MergeFact) -> String {
    match merge {
        MergeFact::Merged { base, sha, commits } => {
            format!(
                "Fusion : intégré au tronc {} en {} ({}).",
                one_line(base),
                short_sha(sha),
                count(*commits, "commit", "commits")
            )
        }
        MergeFact::InTrunk { commits } => {
            format!(
                "Fusion : sans objet — le run a travaillé directement dans le tronc ({}).",
                count(*commits, "commit", "commits")
            )
        }
        MergeFact::NothingToMerge => "Fusion : rien à fusionner (aucun commit).".to_string(),
        MergeFact::NotAttempted { branch: Some(b) } => {
            format!("Fusion : non tentée — le run n'a pas abouti ; la branche {} garde ses commits.", one_line(b))
        }
        MergeFact::NotAttempted { branch: None } => "Fusion : non tentée — le run n'a pas abouti.".to_string(),
        MergeFact::NotMerged { branch, why } => {
            let why = match why {
                NotMergedWhy::DirtyTrunk => {
                    "le tronc a des modifications non commitées (ou une opération git en cours)".to_string()
                }
                NotMergedWhy::Conflict(d) => format!("conflit ({})", one_line(d)),
                NotMergedWhy::TrunkElsewhere(head) => {
                    format!("le tronc est sur {} et non sur la branche de base", one_line(head))
                }
                NotMergedWhy::Failed(e) => format!("git a échoué ({})", one_line(e)),
            };
            format!("Fusion : NON fusionné — la branche {} est gardée avec les commits : {why}.", one_line(branch))
        }
    }
}

/// The line about the deployment.
pub fn deploy_line(deploy: &DeployFact) -> String {
    match deploy {
        DeployFact::NotNeeded => "Déploiement : non nécessaire.".to_string(),
        DeployFact::NotReached => "Déploiement : non atteint.".to_string(),
        DeployFact::Done { tenant } => format!("Déploiement : fait en préproduction (cible {}).", one_line(tenant)),
        DeployFact::Failed { why } => format!("Déploiement : échoué — {}.", one_line(why)),
    }
}

/// The line about the QA, route by route.
pub fn qa_line(qa: &QaFact) -> String {
    let routes = |routes: &[RouteQa]| {
        routes
            .iter()
            .map(|r| {
                let outcome = match r.code {
                    Some(0) => "ok".to_string(),
                    Some(3) => "écart à la maquette (code 3)".to_string(),
                    Some(c) => format!("en erreur (code {c})"),
                    None => "sans réponse".to_string(),
                };
                format!("{} {outcome}", one_line(&r.route))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    match qa {
        QaFact::NotNeeded => "QA : non nécessaire.".to_string(),
        QaFact::NotReached => "QA : non atteinte.".to_string(),
        QaFact::NotConfigured => "QA : non configurée (ATLAS_QA_CMD) — rien n'a été vérifié.".to_string(),
        QaFact::Passed { routes: r, iterations } => {
            format!("QA : passée, itération {iterations} ({} : {}).", count(r.len(), "route", "routes"), routes(r))
        }
        QaFact::Failed { routes: r, iterations } => {
            format!("QA : en échec à l'itération {iterations} ({} : {}).", count(r.len(), "route", "routes"), routes(r))
        }
    }
}

/// What stopped Claude Code, in words.
fn setback_words(why: Setback) -> String {
    match why {
        Setback::ApiUnavailable { status: Some(529) } => "l'API de Claude était surchargée (529)".into(),
        Setback::ApiUnavailable { status: Some(429) } => "l'API de Claude limitait le débit (429)".into(),
        Setback::ApiUnavailable { status: Some(s) } => format!("l'API de Claude était en erreur ({s})"),
        Setback::ApiUnavailable { status: None } => "l'API de Claude était injoignable ou muette".into(),
        Setback::RootRefused => "Claude Code refuse bypassPermissions quand Arthur tourne en root \
             (lance Arthur avec l'utilisateur du service, ou ATLAS_SANDBOXED=1 sur une machine bac à sable)"
            .into(),
    }
}

/// "vers 30/11 09:05 UTC (dans 5 min)"
fn when_words(at: Option<(DateTime<Utc>, chrono::Duration)>) -> String {
    match at {
        Some((at, wait)) => {
            let minutes = wait.num_minutes().max(0);
            let wait = if minutes < 60 {
                format!("{minutes} min")
            } else {
                format!("{} h {:02} min", minutes / 60, minutes % 60)
            };
            format!("vers {} UTC (dans {wait})", at.format("%d/%m %H:%M"))
        }
        None => "plus tard".into(),
    }
}

/// The detail the end adds to the status line.
fn end_detail(end: &End, retry_at: Option<(DateTime<Utc>, chrono::Duration)>) -> String {
    match end {
        End::Interrupted => "interrompu par l'arrêt d'Arthur ; sera relancé".into(),
        End::TimedOut { retry: (n, max) } => format!("nouvel essai {n} sur {max} dans une heure, sur la même branche"),
        End::Escalated(EscalateWhy::QaBudget { iterations, iso_only: true }) => {
            format!("écart à la maquette encore présent après {}", count(*iterations, "itération", "itérations"))
        }
        End::Escalated(EscalateWhy::QaBudget { iterations, .. }) => {
            format!("QA échouée après {} : un humain doit reprendre", count(*iterations, "itération", "itérations"))
        }
        End::Escalated(EscalateWhy::Timeouts { attempts }) => {
            format!("délai dépassé à chacune des {attempts} tentatives ; les commits sont gardés sur la branche")
        }
        End::Escalated(EscalateWhy::Unavailable { attempts, why }) => {
            format!("{} à chacune des {attempts} tentatives ; un humain doit reprendre", setback_words(*why))
        }
        End::Parked { why, retry: (n, max) } => {
            format!("{} ; nouvel essai {n} sur {max} {}", setback_words(*why), when_words(retry_at))
        }
        End::Failed(FailReason::MaxTurns) => {
            "Claude Code s'est arrêté au nombre maximal de tours (--max-turns) avant d'avoir fini".into()
        }
        End::Failed(FailReason::ToolsDenied) => {
            "le mode de permission de Claude Code a refusé des appels d'outil (voir ATLAS_PERMISSION_MODE, \
             ATLAS_ALLOWED_TOOLS)"
                .into()
        }
        End::Failed(FailReason::NoChange) => String::new(),
        End::Failed(FailReason::Run(class)) => format!("Claude Code : {} (code {})", class.as_str(), class.code()),
        End::Failed(FailReason::MissingTenantOrRoutes) => "commits sans cible ou sans route à vérifier".into(),
        End::Failed(FailReason::DeployFailed) => "le déploiement a échoué".into(),
        End::Failed(FailReason::ResumeRefused) => "Claude Code a refusé de reprendre la session, deux fois".into(),
        End::Delivered => String::new(),
    }
}

fn figure_line(r: &Recap) -> String {
    let cost = match r.cost_usd {
        Figure::Known(c) => format!("Coût : {}", format_cost(c)),
        Figure::Partial { known, missing } => {
            format!(
                "Coût : au moins {} ({} sans événement « result » : inconnu)",
                format_cost(known),
                count(missing, "passe", "passes")
            )
        }
        Figure::Unknown => "Coût : inconnu (aucun événement « result »)".to_string(),
    };
    let turns = match r.turns {
        Figure::Known(t) => format!("Tours : {t}"),
        Figure::Partial { known, missing } => {
            format!("Tours : au moins {known} ({} : inconnu)", count(missing, "passe", "passes"))
        }
        Figure::Unknown => "Tours : inconnu".to_string(),
    };
    let duration = match r.duration_s {
        Figure::Known(d) => format!("Durée : {}", format_duration(d)),
        Figure::Partial { known, missing } => {
            format!("Durée : au moins {} ({} : inconnue)", format_duration(known), count(missing, "passe", "passes"))
        }
        Figure::Unknown => "Durée : inconnue".to_string(),
    };
    format!("{cost} · {turns} · {duration}")
}

/// One line, no control characters (CR/LF/TAB… become spaces), runs of spaces collapsed.
fn one_line(text: &str) -> String {
    text.split(|c: char| c.is_control() || c.is_whitespace()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

/// The recap's subject: `[Atlas] <status word> — <request subject>` on one line.
pub fn subject(recap: &Recap) -> String {
    let mut request = one_line(&recap.subject_of_request);
    if request.chars().count() > MAX_SUBJECT_CHARS {
        request = request.chars().take(MAX_SUBJECT_CHARS - 1).collect::<String>() + "…";
    }
    if request.is_empty() {
        request = "(sans objet)".into();
    }
    format!("[Atlas] {} — {request}", status(recap).word())
}

/// "0,42 $"
pub fn format_cost(usd: f64) -> String {
    if !usd.is_finite() || usd < 0.0 {
        return "inconnu".into();
    }
    // -0.0 is not below 0.0, and would print with its sign.
    let usd = usd + 0.0;
    format!("{usd:.2} $").replace('.', ",")
}

/// "45 s", "3 min 05 s", "1 h 02 min"
pub fn format_duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min {:02} s", s / 60, s % 60),
        s => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

fn short_sha(sha: &str) -> String {
    one_line(sha).chars().take(7).collect()
}

/// The text/plain body: every fact, stated.
pub fn body(recap: &Recap, attached: &[PathBuf], skipped: &[PathBuf]) -> String {
    let status = status(recap);
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    line("Bonjour,");
    line("");
    line(&format!(
        "Atlas a traité la demande « {} » (e-mail n° {}).",
        one_line(&recap.subject_of_request),
        recap.email_id
    ));
    line(&format!(
        "Client : {}",
        recap.client.as_deref().map(one_line).filter(|c| !c.is_empty()).unwrap_or_else(|| "non résolu".into())
    ));
    if recap.lane == recap.classified {
        line(&format!("Intention : {}", lane_words(recap.lane)));
    } else {
        line(&format!(
            "Intention : {} (classée {}, corrigée par l'agent après lecture du fil)",
            lane_words(recap.lane),
            lane_words(recap.classified)
        ));
    }
    let detail = [end_detail(&recap.end, recap.retry_at), one_line(&recap.note)]
        .into_iter()
        .filter(|d| !d.is_empty())
        .collect::<Vec<_>>()
        .join(" ; ");
    if detail.is_empty() {
        line(&format!("Statut : {} — {}", status.word(), status.sentence()));
    } else {
        line(&format!("Statut : {} — {} ({detail})", status.word(), status.sentence()));
    }
    line(&merge_line(&recap.merge));
    line(&deploy_line(&recap.deploy));
    line(&qa_line(&recap.qa));
    // What the facts say against the agent's claims, and what it did not do, as facts.
    for claim in &recap.claims {
        line(&format!("Vérification : {}", claim.sentence()));
    }
    if !recap.contract_written {
        line("Contrat : l'agent ne l'a pas écrit ; le résumé ci-dessous est tiré de son transcript.");
    }
    if !recap.denied.is_empty() {
        line(&format!("Appels d'outil refusés par le mode de permission ({}) :", recap.denied.len()));
        for d in &recap.denied {
            line(&format!("- {}", one_line(d)));
        }
    }
    line("");

    let summary = recap.summary_md.trim();
    if status.delivered() && recap.claims.is_empty() && recap.contract_written {
        line("Résumé de l'agent :");
    } else if status.delivered() {
        // Delivered, but the agent's report is not what the facts show: its words, labelled.
        line("Ce que l'agent dit avoir fait (ses propres mots ; les faits ci-dessus ne les confirment pas tous) :");
    } else if status == RunStatus::NoChange {
        line("Ce que l'agent dit avoir fait (non confirmé : aucun commit ne le montre) :");
    } else {
        // The agent's own words about a run that did not deliver: quoted, never endorsed.
        line("Ce que l'agent dit avoir fait (non confirmé, le run n'a pas abouti) :");
    }
    if summary.is_empty() {
        line("  (aucun résumé fourni)");
    } else {
        for l in summary.lines() {
            line(&format!("> {}", l.trim_end()));
        }
    }
    line("");

    if recap.commits.is_empty() {
        line("Commits : aucun.");
    } else {
        line(&format!("Commits ({}) :", recap.commits.len()));
        for (sha, subject) in &recap.commits {
            line(&format!("- {} — {}", short_sha(sha), one_line(subject)));
        }
    }
    line("");
    line(&figure_line(recap));

    if !attached.is_empty() {
        let names: Vec<String> = attached.iter().map(|p| attachment_name(p)).collect();
        line(&format!("Preuves jointes ({}) : {}", attached.len(), names.join(", ")));
    }
    if !skipped.is_empty() {
        line(&format!("Preuves non jointes ({}, introuvables ou trop lourdes) :", skipped.len()));
        for p in skipped {
            line(&format!("- {}", one_line(&p.display().to_string())));
        }
    }
    line("");
    line("— Atlas");
    line("(Ce récapitulatif t'est adressé à toi seul ; Atlas n'écrit jamais au client.)");
    out
}

fn attachment_name(path: &Path) -> String {
    let name = path.file_name().map(|n| one_line(&n.to_string_lossy())).unwrap_or_default();
    if name.is_empty() {
        "preuve".into()
    } else {
        name
    }
}

fn content_type_of(path: &Path) -> &'static str {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let mime = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "txt" | "log" | "md" => "text/plain; charset=utf-8",
        "html" | "htm" => "text/html; charset=utf-8",
        "json" => "application/json",
        "zip" => "application/zip",
        "webm" => "video/webm",
        "mp4" => "video/mp4",
        _ => "application/octet-stream",
    };
    mime
}

/// Reads the proofs that exist, within the size limits; the others are returned as skipped
/// (each logged with its reason).
fn read_proofs(email_id: i64, proofs: &[PathBuf]) -> (Vec<(PathBuf, Vec<u8>)>, Vec<PathBuf>) {
    let mut read = Vec::new();
    let mut skipped = Vec::new();
    let mut total: u64 = 0;
    for path in proofs {
        let skip = |reason: String, skipped: &mut Vec<PathBuf>| {
            tracing::warn!(email_id, proof = %path.display(), %reason, "atlas recap: proof skipped");
            skipped.push(path.clone());
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => m,
            Ok(_) => {
                skip("not a regular file".into(), &mut skipped);
                continue;
            }
            Err(e) => {
                skip(e.to_string(), &mut skipped);
                continue;
            }
        };
        if meta.len() > MAX_PROOF_BYTES {
            skip(format!("{} bytes, over {MAX_PROOF_BYTES}", meta.len()), &mut skipped);
            continue;
        }
        if total + meta.len() > MAX_PROOFS_TOTAL_BYTES {
            skip(format!("attachments would exceed {MAX_PROOFS_TOTAL_BYTES} bytes"), &mut skipped);
            continue;
        }
        match std::fs::read(path) {
            Ok(bytes) => {
                total += bytes.len() as u64;
                read.push((path.clone(), bytes));
            }
            Err(e) => skip(e.to_string(), &mut skipped),
        }
    }
    (read, skipped)
}

/// The recap as a letter to the founder, and which proofs it carries or skips.
#[derive(Debug, Clone)]
pub struct RecapLetter {
    pub letter: Letter,
    pub attached: Vec<PathBuf>,
    /// Proofs not attached (missing, unreadable, too large), each logged.
    pub skipped: Vec<PathBuf>,
}

/// The recap's letter: its subject, its body and the proofs that can be read within the size
/// limits (reads files: call it off the async threads).
pub fn letter(recap: &Recap) -> RecapLetter {
    let (proofs, skipped) = read_proofs(recap.email_id, &recap.proofs);
    let attached: Vec<PathBuf> = proofs.iter().map(|(p, _)| p.clone()).collect();
    let body = body(recap, &attached, &skipped);
    let attachments = proofs
        .into_iter()
        .map(|(path, bytes)| Attached { name: attachment_name(&path), content_type: content_type_of(&path), bytes })
        .collect();
    RecapLetter { letter: Letter { subject: subject(recap), body, attachments }, attached, skipped }
}

/// "1 passe", "2 passes": a count with its noun agreed.
fn count(n: impl TryInto<i64>, one: &str, many: &str) -> String {
    arthur_agents::fr::count(n.try_into().unwrap_or(i64::MAX), one, many)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recap(status: RunStatus) -> Recap {
        let mut r = Recap {
            email_id: 7,
            subject_of_request: "Bouton\r\nBcc: evil@x.fr".into(),
            client: Some("client@boutique.fr".into()),
            classified: (Intent::Run, Complexity::Leger),
            lane: (Intent::Run, Complexity::Leger),
            end: End::Delivered,
            merge: MergeFact::Merged { base: "main".into(), sha: "abcdef1234".into(), commits: 1 },
            deploy: DeployFact::NotNeeded,
            qa: QaFact::NotNeeded,
            note: String::new(),
            summary_md: "Correction du bouton.".into(),
            commits: vec![("0123456789abcdef".into(), "fix: bouton".into())],
            cost_usd: Figure::Known(0.4249),
            turns: Figure::Known(12),
            duration_s: Figure::Known(185),
            proofs: vec![],
            claims: vec![],
            contract_written: true,
            denied: vec![],
            retry_at: None,
        };
        match status {
            RunStatus::Succeeded => {}
            RunStatus::Failed => r.end = End::Failed(FailReason::Run(ExitClass::Error)),
            RunStatus::TimedOut => r.end = End::TimedOut { retry: (1, 2) },
            RunStatus::Escalated => r.end = End::Escalated(EscalateWhy::Timeouts { attempts: 3 }),
            RunStatus::NoCode => {
                r.lane = (Intent::Question, Complexity::Leger);
                r.commits.clear();
            }
            RunStatus::NoChange => r.end = End::Failed(FailReason::NoChange),
            RunStatus::Parked => {
                r.end = End::Parked { why: Setback::ApiUnavailable { status: Some(529) }, retry: (1, 5) }
            }
            RunStatus::NotMerged => {
                r.merge = MergeFact::NotMerged { branch: "atlas/email-7".into(), why: NotMergedWhy::DirtyTrunk }
            }
            RunStatus::Unverified => {
                r.deploy = DeployFact::Done { tenant: "shop".into() };
                r.qa = QaFact::NotConfigured;
            }
        }
        assert_eq!(super::status(&r), status);
        r
    }

    use crate::pty::ExitClass;
    use proptest::prelude::*;

    fn route(code: Option<i32>) -> RouteQa {
        RouteQa { declared: "/panier".into(), route: "/boutique/panier".into(), code, output: String::new() }
    }

    fn ends() -> Vec<End> {
        vec![
            End::Delivered,
            End::Failed(FailReason::NoChange),
            End::Failed(FailReason::MaxTurns),
            End::Failed(FailReason::ToolsDenied),
            End::Parked { why: Setback::ApiUnavailable { status: None }, retry: (2, 5) },
            End::Escalated(EscalateWhy::Unavailable { attempts: 6, why: Setback::RootRefused }),
            End::Failed(FailReason::Run(ExitClass::Error)),
            End::Failed(FailReason::MissingTenantOrRoutes),
            End::Failed(FailReason::DeployFailed),
            End::Failed(FailReason::ResumeRefused),
            End::TimedOut { retry: (1, 2) },
            End::Interrupted,
            End::Escalated(EscalateWhy::QaBudget { iterations: 3, iso_only: false }),
            End::Escalated(EscalateWhy::QaBudget { iterations: 8, iso_only: true }),
            End::Escalated(EscalateWhy::Timeouts { attempts: 3 }),
        ]
    }

    fn merges(branch: &str) -> Vec<MergeFact> {
        vec![
            MergeFact::NotAttempted { branch: Some(branch.into()) },
            MergeFact::NotAttempted { branch: None },
            MergeFact::NothingToMerge,
            MergeFact::Merged { base: "main".into(), sha: "abcdef1234567".into(), commits: 2 },
            MergeFact::InTrunk { commits: 2 },
            MergeFact::NotMerged { branch: branch.into(), why: NotMergedWhy::DirtyTrunk },
            MergeFact::NotMerged { branch: branch.into(), why: NotMergedWhy::Conflict("panier.js".into()) },
            MergeFact::NotMerged { branch: branch.into(), why: NotMergedWhy::TrunkElsewhere("feature/x".into()) },
            MergeFact::NotMerged { branch: branch.into(), why: NotMergedWhy::Failed("git".into()) },
        ]
    }

    fn deploys() -> Vec<DeployFact> {
        vec![
            DeployFact::NotNeeded,
            DeployFact::NotReached,
            DeployFact::Done { tenant: "shop".into() },
            DeployFact::Failed { why: "exit 1".into() },
        ]
    }

    fn qas(iterations: u32) -> Vec<QaFact> {
        vec![
            QaFact::NotNeeded,
            QaFact::NotReached,
            QaFact::NotConfigured,
            QaFact::Passed { routes: vec![route(Some(0))], iterations },
            QaFact::Failed { routes: vec![route(Some(1)), route(Some(0))], iterations },
            QaFact::Failed { routes: vec![route(Some(3))], iterations },
        ]
    }

    fn figure<T: Copy>(kind: u8, v: T) -> Figure<T> {
        match kind % 3 {
            0 => Figure::Known(v),
            1 => Figure::Partial { known: v, missing: 1 },
            _ => Figure::Unknown,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// Every end × merge × deploy × QA: the status word follows from the facts (« terminé »
        /// only for work on the trunk, or needing no code, with QA passed or not needed), and
        /// every fact is stated — the branch kept and why, the deploy, each route and the
        /// iteration, the figures or « inconnu », the intent after a downgrade.
        #[test]
        fn the_status_word_follows_from_the_facts_and_every_fact_is_stated(
            branch in "atlas/email-[0-9]{1,4}",
            iterations in 1u32..9,
            commits in 0usize..3,
            cost in 0.0f64..20.0,
            turns in 0u64..200,
            secs in 0u64..10_000,
            kinds in (0u8..3, 0u8..3, 0u8..3),
            downgraded in any::<bool>(),
        ) {
            for end in ends() {
                for merge in merges(&branch) {
                    for deploy in deploys() {
                        for qa in qas(iterations) {
                            let r = Recap {
                                email_id: 1,
                                subject_of_request: "Demande".into(),
                                client: None,
                                classified: (Intent::Run, Complexity::Plan),
                                lane: if downgraded { (Intent::Question, Complexity::Leger) } else { (Intent::Run, Complexity::Plan) },
                                end,
                                merge: merge.clone(),
                                deploy: deploy.clone(),
                                qa: qa.clone(),
                                note: String::new(),
                                summary_md: String::new(),
                                commits: (0..commits).map(|i| (format!("{i}abcdef0"), format!("c{i}"))).collect(),
                                cost_usd: figure(kinds.0, cost),
                                turns: figure(kinds.1, turns),
                                duration_s: figure(kinds.2, secs),
                                proofs: vec![],
                                claims: vec![],
                                contract_written: true,
                                denied: vec![],
                                retry_at: None,
                            };
                            let st = super::status(&r);
                            let text = body(&r, &[], &[]);
                            let subject = subject(&r);
                            // The status word.
                            let terminé = end == End::Delivered
                                && merge.on_trunk()
                                && matches!(qa, QaFact::Passed { .. } | QaFact::NotNeeded)
                                && !(commits == 0 && deploy == DeployFact::NotNeeded)
                                && (commits != 0 || downgraded);
                            prop_assert_eq!(st == RunStatus::Succeeded, terminé, "{:?} {:?} {:?} {:?}", end, merge, deploy, qa);
                            let prefix = format!("[Atlas] {} — ", st.word());
                            prop_assert!(subject.starts_with(&prefix), "{}", subject);
                            if !merge.on_trunk() && end == End::Delivered {
                                prop_assert_eq!(st, RunStatus::NotMerged);
                            } else if end == End::Delivered && commits == 0 && !downgraded {
                                prop_assert_eq!(st, RunStatus::NoChange, "a run request without a commit");
                            }
                            if !st.delivered() {
                                let lower = text.to_lowercase();
                                for claim in ["terminé", "a abouti", "analyse livrée", "réussi"] {
                                    prop_assert!(!lower.contains(claim), "{:?} claims {}:\n{}", st, claim, text);
                                }
                            }
                            // Every fact.
                            prop_assert!(text.contains(&merge_line(&merge)), "{}", text);
                            if let MergeFact::NotMerged { .. } | MergeFact::NotAttempted { branch: Some(_) } = &merge {
                                prop_assert!(text.contains(branch.as_str()), "the kept branch is named:\n{}", text);
                            }
                            prop_assert!(text.contains(&deploy_line(&deploy)));
                            prop_assert!(text.contains(&qa_line(&qa)));
                            if let QaFact::Passed { .. } | QaFact::Failed { .. } = &qa {
                                let it = format!("itération {iterations}");
                                prop_assert!(text.contains("/boutique/panier") && text.contains(&it), "{}", text);
                            }
                            match r.cost_usd {
                                Figure::Unknown => prop_assert!(text.contains("Coût : inconnu") && !text.contains("0,00 $")),
                                Figure::Partial { .. } => prop_assert!(text.contains("Coût : au moins") && text.contains("inconnu")),
                                Figure::Known(c) => { let shown = format!("Coût : {}", format_cost(c)); prop_assert!(text.contains(&shown)) },
                            }
                            match r.turns {
                                Figure::Unknown => prop_assert!(text.contains("Tours : inconnu")),
                                Figure::Known(t) => { let shown = format!("Tours : {t}"); prop_assert!(text.contains(&shown)) },
                                Figure::Partial { .. } => prop_assert!(text.contains("Tours : au moins")),
                            }
                            match r.duration_s {
                                Figure::Unknown => prop_assert!(text.contains("Durée : inconnue")),
                                Figure::Known(d) => { let shown = format!("Durée : {}", format_duration(d)); prop_assert!(text.contains(&shown)) },
                                Figure::Partial { .. } => prop_assert!(text.contains("Durée : au moins")),
                            }
                            if downgraded {
                                prop_assert!(text.contains("Intention : question (classée run / plan"), "{}", text);
                            } else {
                                prop_assert!(text.contains("Intention : run / plan\n"), "{}", text);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn figures_are_summed_or_said_unknown() {
        assert_eq!(Figure::sum([Some(1.5), Some(2.0)]), Figure::Known(3.5));
        assert_eq!(Figure::sum([Some(1u64), None]), Figure::Partial { known: 1, missing: 1 });
        assert_eq!(Figure::<u64>::sum([None, None]), Figure::Unknown);
        assert_eq!(Figure::<u64>::sum([]), Figure::Unknown);
    }

    #[test]
    fn formats() {
        assert_eq!(format_cost(0.4249), "0,42 $");
        assert_eq!(format_cost(f64::NAN), "inconnu");
        assert_eq!(format_cost(-0.0), "0,00 $");
        assert_eq!(format_duration(45), "45 s");
        assert_eq!(format_duration(185), "3 min 05 s");
        assert_eq!(format_duration(3720), "1 h 02 min");
    }

    #[test]
    fn subject_is_one_line() {
        let s = subject(&recap(RunStatus::Failed));
        assert_eq!(s, "[Atlas] échec — Bouton Bcc: evil@x.fr");
    }

    #[test]
    fn every_status_makes_a_letter_to_the_founder() {
        for st in RunStatus::ALL {
            let l = letter(&recap(st));
            assert_eq!(l.letter.subject, subject(&recap(st)));
            assert!(l.letter.body.contains(st.word()) && l.letter.attachments.is_empty(), "{st:?}");
        }
    }
}
