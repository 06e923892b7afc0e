//! `arthur atlas …`: the pipeline's commands (poll, classify, launch, report, list, show,
//! drafts, decisions, clients, chantiers) and the lines they print. The binary builds the
//! pipeline from its settings and hands it over as a [`Wiring`].

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::decisions::{approve, cancel, retry};
use crate::draft::Drafter;
use crate::imap::ImapAccount;
use crate::launch::Launcher;
use crate::mail::EmailAddress;
use crate::pipeline::{Atlas, AtlasDeps};
use crate::store::{AtlasStore, EmailRow, NewClient};
use crate::watchdog::LockWatchdog;
use crate::worker::{self, ClassifyPass, LauncherDeps, PollStatus, TickOutcome, WorkerDeps};
use crate::EmailState;

/// The pipeline's parts as the binary's settings make them.
pub trait Wiring {
    /// Atlas' store (on the app's database).
    fn store(&self) -> Arc<dyn AtlasStore>;
    fn now(&self) -> DateTime<Utc>;
    /// The poller's and classifier's dependencies.
    fn deps(&self) -> anyhow::Result<AtlasDeps>;
    fn account(&self) -> anyhow::Result<ImapAccount>;
    fn launcher(&self) -> anyhow::Result<Launcher>;
    fn watchdog(&self) -> anyhow::Result<LockWatchdog>;
    fn drafter(&self) -> Drafter;
}

/// How often `arthur atlas poll` (and `serve`) polls the mailbox.
pub const POLL_INTERVAL: Duration = Duration::from_secs(60);
/// How often the launcher runs (spec §10: every 5 minutes, 2 minutes after the poll).
pub const LAUNCH_INTERVAL: Duration = Duration::from_secs(300);
pub const LAUNCH_OFFSET: Duration = Duration::from_secs(120);

#[derive(Debug, Subcommand)]
pub enum AtlasCmd {
    /// Relève la boîte (ATLAS_IMAP_URL), puis analyse et classe ; chaque minute, ou une fois.
    Poll {
        #[arg(long)]
        once: bool,
    },
    /// Analyse et classe ce qui attend, sans relever ; chaque minute, ou une fois.
    Classify {
        /// Un passage, puis s'arrête (sans : un passage par minute jusqu'à l'arrêt).
        #[arg(long)]
        once: bool,
        /// Remet d'abord dans la file les messages dont le classement a trop souvent échoué.
        #[arg(long)]
        retry_failed: bool,
    },
    /// Lance Claude Code sur les messages classés ; toutes les 5 minutes, ou une fois.
    Launch {
        #[arg(long)]
        once: bool,
    },
    /// Le rapport d'étalonnage du classeur (markdown).
    Report {
        #[arg(long, default_value_t = 30)]
        days: u32,
    },
    /// Les e-mails et leur état.
    List {
        #[arg(long)]
        json: bool,
        /// Seulement cet état (received, scanned, blocked, classified, classify_failed, …).
        #[arg(long)]
        state: Option<String>,
    },
    /// Un e-mail : état, classement, audits, lancements.
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// Un brouillon de réponse au client pour un lancement fini, écrit pour toi (jamais envoyé).
    Draft { id: i64 },
    /// Laisse un message retenu (auteur non vérifié) lancer Claude Code (au prochain cycle).
    Approve { id: i64 },
    /// Remet dans la file un message mis de côté après un jour d'erreurs de l'antivirus ou du classeur
    /// (jamais un message bloqué pour une pièce jointe infectée).
    Retry { id: i64 },
    /// Refuse un lancement retenu (le message finit `cancelled`), ou ce qu'un e-mail a créé
    /// (le rapport le compte comme un échec).
    Cancel { id: i64 },
    /// Les clients dont le classeur est informé.
    Client {
        #[command(subcommand)]
        what: ClientCmd,
    },
    /// Les chantiers ouverts ; on en crée toujours un à la main.
    Chantier {
        #[command(subcommand)]
        what: ChantierCmd,
    },
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum ClientCmd {
    /// Ajoute un client : `arthur atlas client add --name Boutique --email jean@boutique.fr --mrr 1200`.
    Add {
        #[arg(long)]
        name: String,
        /// Une adresse du client (répétable).
        #[arg(long)]
        email: Vec<String>,
        /// Un domaine du client (répétable ; jamais un domaine de messagerie publique).
        #[arg(long)]
        domain: Vec<String>,
        /// Revenu mensuel récurrent confirmé, en euros.
        #[arg(long)]
        mrr: Option<f64>,
        /// actif, prospect ou inactif.
        #[arg(long, default_value = "actif")]
        status: String,
        /// basse, normale ou haute.
        #[arg(long, default_value = "normale")]
        priority: String,
        /// Fournisseur des brouillons de ce client : mistral (par défaut), anthropic ou openai.
        #[arg(long)]
        ai_provider: Option<String>,
        /// Modèle des brouillons de ce client (sinon celui du fournisseur).
        #[arg(long)]
        ai_model: Option<String>,
        /// Le modèle de Claude Code pour les lancements de ce client.
        #[arg(long)]
        claude_model: Option<String>,
        /// Les e-mails signés DKIM de ce client peuvent lancer Claude Code sans ton accord.
        #[arg(long)]
        auto_launch: bool,
    },
    /// Autorise (ou, avec --off, arrête) les lancements par les e-mails signés DKIM d'un client sans ton accord.
    AutoLaunch {
        #[arg(long)]
        name: String,
        #[arg(long)]
        off: bool,
    },
    /// Liste les clients.
    List {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ChantierCmd {
    /// Ouvre un chantier, éventuellement pour un client (par son nom).
    Add {
        #[arg(long)]
        name: String,
        #[arg(long)]
        client: Option<String>,
    },
}

fn launch_line(r: &crate::launch::CycleReport) -> String {
    if r.disabled {
        return "Atlas : lancements désactivés (ATLAS_DISABLED=1). Rien n'a été lancé.".into();
    }
    if r.blocked_as_root > 0 {
        return format!(
            "Atlas : {}, rien n'a été lancé : Arthur tourne en root et Claude Code y refuse \
             bypassPermissions. Lance Arthur avec l'utilisateur du service, ou mets ATLAS_SANDBOXED=1 si la \
             machine est un bac à sable. Les e-mails restent dans la file.",
            count(r.candidates, "candidat", "candidats")
        );
    }
    format!(
        "Atlas : {}, {}, {}, {}, {} à relancer plus tard, {} (API indisponible), {}, {} en attente de ton accord, {}, {}.",
        count(r.candidates, "candidat", "candidats"),
        count(r.launched, "lancé", "lancés"),
        count(r.actioned, "traité", "traités"),
        count(r.failed, "échec", "échecs"),
        r.retry_later,
        count(r.parked, "reporté", "reportés"),
        count(r.escalated, "escaladé", "escaladés"),
        r.held,
        count(r.skipped_lock_held, "verrou déjà pris", "verrous déjà pris"),
        count(r.reclaimed, "lancement interrompu repris", "lancements interrompus repris"),
    )
}

/// "1 lancé", "2 lancés": a count with its noun agreed.
fn count(n: impl TryInto<i64>, one: &str, many: &str) -> String {
    arthur_agents::fr::count(n.try_into().unwrap_or(i64::MAX), one, many)
}

/// Runs one command; a looping one (poll, classify, launch without `--once`) runs until
/// `shutdown` is cancelled and finishes its tick in progress first.
pub async fn run(w: &dyn Wiring, cmd: AtlasCmd, shutdown: CancellationToken) -> anyhow::Result<ExitCode> {
    match cmd {
        AtlasCmd::Poll { once } => {
            let account = w.account()?;
            let atlas = Atlas::new(w.deps()?);
            if once {
                let report = atlas.poll_once(&account).await.context("polling the Atlas mailbox")?;
                println!("{}", poll_line(&report));
                return Ok(ExitCode::SUCCESS);
            }
            // The poller `serve` runs, its ticks printed; nobody reads its status here.
            let (status, _) = watch::channel(PollStatus::default());
            let deps = WorkerDeps { atlas, account, period: POLL_INTERVAL, status };
            worker::run_with(deps, shutdown, |tick| match tick {
                TickOutcome::Polled(report) => println!("{}", poll_line(report)),
                TickOutcome::Failed(e) => {
                    eprintln!("Atlas : relève impossible, nouvel essai dans une minute.\n  detail: {e}")
                }
            })
            .await;
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Classify { once, retry_failed } => {
            let atlas = Atlas::new(w.deps()?);
            if retry_failed {
                let n = atlas.deps.store.retry_failed(w.now()).await?;
                println!("{} dans la file de classification.", count(n, "message remis", "messages remis"));
            }
            if once {
                println!("{}", classify_line(&worker::classify_pass(&atlas).await?));
                return Ok(ExitCode::SUCCESS);
            }
            worker::run_classifier(&atlas, POLL_INTERVAL, shutdown, |pass| match pass {
                Ok(pass) => println!("{}", classify_line(&pass)),
                Err(e) => {
                    eprintln!("Atlas : classification impossible, nouvel essai dans une minute.\n  detail: {e:#}")
                }
            })
            .await;
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Launch { once } => {
            let mut launcher = w.launcher()?;
            if once {
                launcher.watch_locks().await?;
                let report = launcher.cycle().await.context("launching")?;
                println!("{}", launch_line(&report));
                return Ok(ExitCode::SUCCESS);
            }
            let watchdog = w.watchdog()?;
            // As in `serve`: a run in flight when the command is stopped is salvaged.
            launcher.shutdown = Some(shutdown.clone());
            let deps = LauncherDeps { launcher, offset: Duration::ZERO, period: LAUNCH_INTERVAL };
            worker::run_launcher_with(deps, Some(watchdog), shutdown, |cycle| match cycle {
                Ok(report) => println!("{}", launch_line(&report)),
                Err(e) => {
                    eprintln!("Atlas : cycle de lancement impossible, nouvel essai dans 5 minutes.\n  detail: {e}")
                }
            })
            .await;
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Draft { id } => {
            let draft = w.drafter().write(id).await.context("writing the draft reply")?;
            println!(
                "Brouillon n°{} ({} / {}) — à relire, Atlas ne l'enverra pas :\n\n{}",
                draft.id, draft.provider, draft.model, draft.text
            );
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Approve { id } => decided(approve(w.store().as_ref(), id, "cli", w.now()).await?),
        AtlasCmd::Retry { id } => decided(retry(w.store().as_ref(), id, "cli", w.now()).await?),
        AtlasCmd::Cancel { id } => decided(cancel(w.store().as_ref(), id, "cli", w.now()).await?),
        AtlasCmd::Report { days } => {
            let store = w.store();
            let now = w.now();
            let data = store.report_data(now - chrono::Duration::days(days as i64)).await?;
            print!("{}", crate::report::markdown(&crate::report::compute(&data), days, now));
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::List { json, state } => {
            let state = state.map(|s| s.parse::<EmailState>()).transpose().map_err(anyhow::Error::msg)?;
            let rows = w.store().list(state).await?;
            if json {
                let list: Vec<Value> = rows.iter().map(list_json).collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if rows.is_empty() {
                println!("Aucun e-mail.");
            } else {
                for r in &rows {
                    println!(
                        "#{} {} {} {} — {}",
                        r.id,
                        r.status.as_str(),
                        r.intent.map(|i| i.as_str()).unwrap_or("-"),
                        r.from_email.as_deref().unwrap_or("(expéditeur inconnu)"),
                        r.subject
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Show { id, json } => {
            let store = w.store();
            let Some(row) = store.email(id).await? else {
                eprintln!("Erreur : aucun e-mail Atlas n°{id}.");
                return Ok(ExitCode::from(1));
            };
            let audits = store.audits(id).await?;
            let client = match row.client_id {
                Some(cid) => store.client(cid).await?,
                None => None,
            };
            let mut value = show_json(&row, &audits, client.as_ref());
            let mut launches = Vec::new();
            for l in store.launches(id).await? {
                let events = store.launch_events(l.id).await?;
                launches.push(json!({
                    "id": l.id, "iteration": l.iteration, "attempt": l.attempt, "session_mode": l.session_mode,
                    "prompt": l.prompt_kind, "max_turns": l.max_turns,
                    "workspace": l.workspace, "branch": l.branch, "status": l.end.status, "exit_code": l.end.exit_code,
                    "killed": l.end.killed, "session_id": l.end.session_id, "cost_usd": l.end.cost_usd, "num_turns": l.end.num_turns,
                    "duration_ms": l.end.duration_ms, "redactions": l.end.redactions,
                    "started_at": l.started_at.to_rfc3339(), "finished_at": l.finished_at.map(|t| t.to_rfc3339()),
                    "events": events.iter().map(|e| json!({
                        "seq": e.seq, "type": e.kind, "subtype": e.subtype, "tool": e.tool_name,
                        "payload": serde_json::from_str::<Value>(&e.payload).unwrap_or(Value::String(e.payload.clone())),
                    })).collect::<Vec<_>>(),
                }));
            }
            value["launch_events"] = Value::Array(launches);
            value["notices"] = store
                .notices(Some(id))
                .await?
                .iter()
                .map(|n| {
                    json!({"kind": n.notice.kind, "subject": n.notice.subject, "attempts": n.attempts,
                           "sent_at": n.sent_at.map(|t| t.to_rfc3339()), "last_error": n.last_error})
                })
                .collect();
            if json {
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                println!("E-mail #{} — {} — {}", row.id, row.status.as_str(), row.subject);
                for a in &audits {
                    println!("  {} {} {}", a.created_at.format("%Y-%m-%d %H:%M:%S"), a.event, a.detail);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Client {
            what:
                ClientCmd::Add {
                    name,
                    email,
                    domain,
                    mrr,
                    status,
                    priority,
                    ai_provider,
                    ai_model,
                    claude_model,
                    auto_launch,
                },
        } => {
            if ai_provider.as_deref().is_some_and(|p| !["mistral", "anthropic", "openai"].contains(&p)) {
                bail!("invalid value for --ai-provider: expected mistral, anthropic or openai");
            }
            if name.trim().is_empty() {
                bail!("invalid client: empty name");
            }
            if !["actif", "prospect", "inactif"].contains(&status.as_str()) {
                bail!("invalid value for --status: {status:?} (expected actif, prospect or inactif)");
            }
            if !["basse", "normale", "haute"].contains(&priority.as_str()) {
                bail!("invalid value for --priority: {priority:?} (expected basse, normale or haute)");
            }
            if mrr.is_some_and(|m| !m.is_finite() || m < 0.0) {
                bail!("invalid value for --mrr: expected a positive amount in euros");
            }
            let emails = email
                .iter()
                .map(|e| EmailAddress::parse(e).with_context(|| format!("invalid value for --email: {e:?}")))
                .collect::<anyhow::Result<Vec<_>>>()?;
            if emails.is_empty() && domain.is_empty() {
                bail!("invalid client: give at least one --email or --domain");
            }
            let client = NewClient {
                name: name.clone(),
                emails,
                domains: domain,
                mrr,
                status: Some(status),
                priority: Some(priority),
                ai_provider,
                ai_model,
                claude_model,
                auto_launch,
            };
            let id = w.store().add_client(&client, w.now()).await.context("adding the client")?;
            println!(
                "Client n°{id} ajouté : {name}{}.",
                if auto_launch { " (ses e-mails signés DKIM lancent Claude Code sans ton accord)" } else { "" }
            );
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Client { what: ClientCmd::AutoLaunch { name, off } } => {
            let store = w.store();
            let Some(client) = store.clients().await?.into_iter().find(|c| c.name.eq_ignore_ascii_case(name.trim()))
            else {
                eprintln!("Erreur : aucun client nommé « {name} ». Rien n'a changé.");
                return Ok(ExitCode::from(1));
            };
            store.set_auto_launch(client.id, !off, w.now()).await?;
            println!(
                "Client {} : {}",
                client.name,
                if off {
                    "ses e-mails attendront ton accord avant tout lancement."
                } else {
                    "ses e-mails signés DKIM lanceront Claude Code sans ton accord."
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Client { what: ClientCmd::List { json } } => {
            let clients = w.store().clients().await?;
            if json {
                let list: Vec<Value> = clients
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "name": c.name, "mrr": c.mrr, "status": c.status,
                               "priority": c.priority, "emails": c.emails, "domains": c.domains,
                               "auto_launch": c.auto_launch})
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for c in &clients {
                    println!(
                        "#{} {} ({}, {}) {}",
                        c.id,
                        c.name,
                        c.status,
                        c.priority,
                        [c.emails.clone(), c.domains.clone()].concat().join(", ")
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AtlasCmd::Chantier { what: ChantierCmd::Add { name, client } } => {
            let store = w.store();
            let client_id = match client {
                None => None,
                Some(n) => Some(
                    store
                        .clients()
                        .await?
                        .into_iter()
                        .find(|c| c.name.eq_ignore_ascii_case(n.trim()))
                        .with_context(|| format!("invalid value for --client: no client named {n:?}"))?
                        .id,
                ),
            };
            let id = store.add_chantier(&name, client_id, w.now()).await?;
            println!("Chantier n°{id} ouvert : {name}.");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A founder's decision's line, on stdout when it was taken (exit 0), on stderr otherwise.
fn decided((code, line): (u8, String)) -> anyhow::Result<ExitCode> {
    if code == 0 {
        println!("{line}");
    } else {
        eprintln!("{line}");
    }
    Ok(ExitCode::from(code))
}

/// One scan-and-classify pass, as its line.
fn classify_line(p: &ClassifyPass) -> String {
    format!(
        "Atlas : {}, {}, {}, {} de classification.",
        count(p.scanned, "analysé sain", "analysés sains"),
        count(p.blocked, "bloqué", "bloqués"),
        count(p.classified, "classé", "classés"),
        count(p.failed, "échec", "échecs"),
    )
}

fn poll_line(r: &crate::pipeline::PollReport) -> String {
    format!(
        "Atlas : {}, {}, {}, {} ; {}, {} ; {}, {}.",
        count(r.unseen, "non lu", "non lus"),
        count(r.inserted, "nouveau", "nouveaux"),
        count(r.duplicates, "doublon", "doublons"),
        count(r.marked_seen, "marqué lu", "marqués lus"),
        count(r.scanned, "sain", "sains"),
        count(r.blocked, "bloqué", "bloqués"),
        count(r.classified, "classé", "classés"),
        count(r.classify_failed, "échec", "échecs"),
    )
}

/// `arthur atlas list --json`: one object per e-mail (docs/interface.md §3.3).
pub fn list_json(r: &EmailRow) -> Value {
    json!({
        "id": r.id,
        "message_id": r.message_id,
        "state": r.status.as_str(),
        "intent": r.intent.map(|i| i.as_str()),
        "complexity": r.complexity.map(|c| c.as_str()),
        "confidence": r.confidence,
        "from": r.from_email,
        "subject": r.subject,
        "received_at": r.created_at.to_rfc3339(),
    })
}

/// `arthur atlas show ID --json`: state, classification, audits, launch events.
pub fn show_json(r: &EmailRow, audits: &[crate::store::AuditRow], client: Option<&crate::store::Client>) -> Value {
    json!({
        "id": r.id,
        "message_id": r.message_id,
        "message_key": r.message_key,
        "state": r.status.as_str(),
        "from": r.from_email,
        "subject": r.subject,
        "size": r.size,
        "dkim_pass": r.dkim_pass,
        "scan_verdict": r.scan_verdict,
        "attachments": r.attachment_count,
        "attempts": r.attempts,
        "retry_at": r.retry_at.map(|t| t.to_rfc3339()),
        "failing_since": r.failing_since.map(|t| t.to_rfc3339()),
        "launch_retries": r.launch_retries,
        "approved_at": r.approved_at.map(|t| t.to_rfc3339()),
        "client": client.map(|c| json!({"id": c.id, "name": c.name, "source": r.client_source})),
        "classification": r.intent.map(|i| json!({
            "intent": i.as_str(),
            "complexity": r.complexity.map(|c| c.as_str()),
            "confidence": r.confidence,
            "model": r.model,
            "justification": r.justification,
        })),
        "materialised": r.materialised.map(|(kind, id)| json!({"kind": kind, "id": id})),
        "chantier_id": r.chantier_id,
        "audits": audits.iter().map(|a| json!({"event": a.event, "detail": a.detail, "at": a.created_at.to_rfc3339()})).collect::<Vec<_>>(),
        "launch_events": [],
        "received_at": r.created_at.to_rfc3339(),
        "updated_at": r.updated_at.to_rfc3339(),
    })
}
