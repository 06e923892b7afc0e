//! The command line: parses arguments, opens the app, runs one command, maps the result to
//! an exit code. User-facing messages are French; the English detail follows for logs.

use std::process::ExitCode;

use anyhow::Context;
use arthur_agents::memory::{briefing, export};
use arthur_agents::report;
use arthur_agents::tools::{AgentKind, Outcome};
use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

use crate::app::App;
use crate::config::Settings;

/// Exit code when a tool refused (nothing was written).
pub const EXIT_REFUSED: u8 = 3;
/// Exit code when a tool failed (effect unknown).
pub const EXIT_FAILED: u8 = 4;

#[derive(Debug, Parser)]
#[command(
    name = "arthur",
    version,
    about = "Arthur : assistant vocal local qui ne peut pas mentir sur ce qu'il vient de faire"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Conversation dans le terminal.
    Chat,
    /// Un échange : `arthur ask "rappelle-moi d'appeler la banque demain à 9 h"`.
    Ask {
        /// Affiche l'échange comme un objet JSON (docs/interface.md §3.1).
        #[arg(long)]
        json: bool,
        /// Continue cette conversation. Sans elle, la dernière conversation continue quand
        /// sa dernière réponse, il y a moins de cinq minutes, était une question ; sinon une nouvelle.
        #[arg(long, conflicts_with = "new")]
        conversation: Option<String>,
        /// Commence une nouvelle conversation même si la dernière posait une question.
        #[arg(long)]
        new: bool,
        /// Ce que tu dis.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Conversation à la voix : mains libres (mot d'éveil « Arthur », puis un temps de suite), ou
    /// appuyer pour parler dans le terminal avec --ptt.
    Listen {
        /// Appuyer pour parler : Espace démarre et arrête l'enregistrement, Échap quitte ; pas de mot d'éveil.
        #[arg(long)]
        ptt: bool,
        #[command(flatten)]
        io: crate::voice::AudioIo,
        /// Liste les entrées audio, puis s'arrête.
        #[arg(long)]
        devices: bool,
        /// Mot d'éveil (« Arthur » par défaut).
        #[arg(long, default_value = "Arthur")]
        wake_word: String,
        /// Temps d'écoute après une réponse, en secondes.
        #[arg(long, default_value_t = 8)]
        follow_up: u64,
    },
    /// Écrit ce qui est dit dans un fichier WAV (whisper ; langue ARTHUR_STT_LANG).
    Transcribe {
        /// L'enregistrement (tout WAV PCM : rééchantillonné en 16 kHz mono).
        file: std::path::PathBuf,
        /// Fils de calcul pour whisper (2 par défaut).
        #[arg(long)]
        threads: Option<u32>,
    },
    /// Dit un texte dans un fichier WAV, phrase par phrase.
    Say {
        /// Ce qu'il faut dire.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// Le fichier WAV écrit.
        #[arg(short, long)]
        output: std::path::PathBuf,
    },
    /// L'appareil : interface web, voix mains libres, rappels dits à leur heure.
    /// SIGTERM ou Ctrl-C l'arrêtent proprement.
    Serve {
        #[command(flatten)]
        io: crate::voice::AudioIo,
        /// Sans la voix (web et rappels seulement).
        #[arg(long)]
        no_voice: bool,
        /// Secondes entre deux vérifications des rappels dus.
        #[arg(long, default_value_t = 30)]
        reminder_check_secs: u64,
        /// Secondes entre deux relèves de la boîte d'Atlas (quand ATLAS_IMAP_URL est réglé).
        #[arg(long, default_value_t = 60)]
        atlas_poll_secs: u64,
        /// Secondes entre deux cycles de lancement d'Atlas.
        #[arg(long, default_value_t = 300, hide = true)]
        atlas_launch_secs: u64,
        /// Secondes après le démarrage avant le premier cycle de lancement.
        #[arg(long, default_value_t = 120, hide = true)]
        atlas_launch_offset_secs: u64,
        /// Secondes entre deux vérifications des verrous d'Atlas (15 minutes).
        #[arg(long, default_value_t = 900, hide = true)]
        atlas_watchdog_secs: u64,
        /// Un travailleur Atlas seulement : la relève et le lanceur, sans web, voix ni
        /// rappels. Plusieurs peuvent partager une base PostgreSQL (ARTHUR_DATABASE_URL).
        #[arg(long)]
        atlas_only: bool,
    },
    /// Ce qui marche et ce qui manque (base, modèles, micro, fournisseurs, Atlas).
    Doctor {
        /// « Est-ce que tu me comprends ? » — lis dix commandes courtes à voix haute : taux d'erreur,
        /// commandes comprises, temps de chaque étape, et s'il vaut la peine de prendre un modèle
        /// whisper plus gros sur cette machine.
        #[arg(long)]
        voix: bool,
        /// Le test de la voix sur un enregistrement des dix phrases lues l'une après l'autre.
        #[arg(long, requires = "voix")]
        input: Option<std::path::PathBuf>,
        /// Le micro du test de la voix (ARTHUR_AUDIO_INPUT par défaut).
        #[arg(long, requires = "voix")]
        device: Option<String>,
    },
    /// L'interface web seule (conversation et pages de la mémoire), sur ARTHUR_WEB_ADDR.
    Web,
    /// Lance un outil directement : `arthur tool creer_note '{"texte": "…"}'`.
    Tool(ToolCmd),
    /// Les outils, avec leur schéma JSON.
    Tools {
        #[arg(long)]
        json: bool,
    },
    /// Tout ce que la mémoire contient.
    Export {
        /// En JSON (les noms des arguments des outils) ; sans, le même contenu en texte.
        #[arg(long)]
        json: bool,
    },
    /// Le point du jour ou de la semaine, composé à partir de la mémoire.
    Briefing(BriefingCmd),
    /// Mesures de performance.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
    /// Aides à la maintenance et aux tests.
    #[command(hide = true)]
    Debug {
        #[command(subcommand)]
        what: DebugCmd,
    },
    /// Atlas, la chaîne des e-mails : relève, classement, rapport, liste, détail, clients.
    Atlas {
        #[command(subcommand)]
        what: crate::atlas_cli::AtlasCmd,
    },
}

#[derive(Debug, ClapArgs)]
pub struct ToolCmd {
    /// Nom de l'outil, par exemple creer_rappel.
    pub name: String,
    /// Arguments, en objet JSON (`{}` par défaut).
    pub args: Option<String>,
    /// Comme cet agent (refuse les outils hors de sa liste).
    #[arg(long, value_enum)]
    pub agent: Option<AgentArg>,
    /// Affiche le résultat en JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AgentArg {
    Intendant,
    Mentor,
}

#[derive(Debug, ClapArgs)]
#[group(required = true, multiple = false)]
pub struct BriefingCmd {
    #[arg(long)]
    pub jour: bool,
    #[arg(long)]
    pub semaine: bool,
}

#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// Coût de chaque appel d'outil sur SQLite (µs médianes), et d'un échange de 3 outils.
    Store {
        #[arg(long, default_value_t = 300)]
        iterations: usize,
        /// Aussi sur cette base PostgreSQL vide (`postgres://…`), côte à côte.
        #[arg(long)]
        postgres: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DebugCmd {
    /// Écrit des notes et des cycles du chrono en boucle, une ligne par écriture validée ;
    /// sert au test de résistance aux arrêts brutaux, qui tue le processus au milieu.
    WriteLoop {
        #[arg(long, default_value_t = 1000)]
        count: usize,
    },
}

/// `--help` in French: the headings, the help and version flags (clap's own parse errors
/// stay in English).
pub fn french_help(cmd: clap::Command) -> clap::Command {
    let cmd = cmd
        .disable_help_flag(true)
        .disable_help_subcommand(true)
        .help_template("{about-with-newline}\nUtilisation : {usage}\n\n{all-args}{after-help}")
        .subcommand_help_heading("Commandes")
        .subcommand_value_name("COMMANDE")
        .arg(clap::Arg::new("aide").short('h').long("help").action(clap::ArgAction::Help).help("Affiche cette aide"));
    cmd.mut_subcommands(french_help)
}

pub fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let command = french_help(Cli::command()).disable_version_flag(true).arg(
        clap::Arg::new("version")
            .short('V')
            .long("version")
            .action(clap::ArgAction::Version)
            .help("Affiche la version"),
    );
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Colours for a person at a terminal; plain text in a redirected log.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    export_speech_environment();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("Erreur : impossible de démarrer.\n  detail: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Erreur : {}\n  detail: {}", french_summary(&e), error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// Points espeak-ng (inside piper-rs) at the system's data, here while this is the only
/// thread: the environment may only be changed before the runtime starts its workers.
fn export_speech_environment() {
    use arthur_audio::piper::{espeak_data_dir, ESPEAK_DATA_VAR};
    if std::env::var_os(ESPEAK_DATA_VAR).is_none() {
        if let Some(dir) = espeak_data_dir() {
            std::env::set_var(ESPEAK_DATA_VAR, dir);
        }
    }
}

pub use crate::health::error_chain;

fn french_summary(e: &anyhow::Error) -> &'static str {
    let text = format!("{e:#}");
    if text.contains("empty message") {
        "le message est vide. Écris ta demande après ask, par exemple : arthur ask \"quelle heure est-il ?\""
    } else if text.contains("aucun micro") {
        "aucun micro utilisable. Branche-en un et choisis-le avec --device (arthur listen --devices les liste), \
         ou enregistre-toi en lisant les dix phrases et donne le fichier avec --input FICHIER.wav."
    } else if text.contains("aucun haut-parleur") {
        "aucun haut-parleur utilisable : --output FICHIER.wav écrit les réponses dans un fichier à la place."
    } else if text.contains("readonly") || text.contains("read-only") || text.contains("Permission denied") {
        "la base de données ne peut pas être écrite (dossier ou fichier en lecture seule) : donne-toi le droit \
         d'écrire dans le dossier de données (chmod u+w), ou choisis-en un autre avec ARTHUR_DATA_DIR."
    } else if text.contains("not available yet") {
        "cette façon d'écouter n'est pas encore disponible."
    } else if text.contains("whisper model") || text.contains("ARTHUR_WHISPER_MODEL") {
        "aucun modèle de reconnaissance vocale : lance models/fetch."
    } else if (text.contains("reading") || text.contains("fichier audio illisible")) && text.contains(".wav") {
        "le fichier audio est illisible."
    } else if text.contains("access token") || text.contains("listen") {
        "l'interface web ne peut pas démarrer."
    } else if text.contains("ATLAS_IMAP_URL") || text.contains("IMAP") {
        "la boîte d'Atlas est injoignable ou mal configurée."
    } else if text.contains("draft") || text.contains("run of e-mail") {
        "le brouillon n'a pas pu être écrit."
    } else if text.contains("client") {
        "le client n'a pas pu être ajouté."
    } else if text.contains("config") || text.contains("time zone") || text.contains("invalid value") {
        "la configuration est invalide."
    } else if text.contains("database") || text.contains("data directory") {
        "impossible d'ouvrir la base de données."
    } else {
        "la commande a échoué."
    }
}

async fn open() -> anyhow::Result<App> {
    let settings = Settings::load().context("loading configuration")?;
    App::open(settings).await
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Chat => {
            let app = open().await?;
            crate::chat::run(&app, tokio::io::stdin(), tokio::io::stdout()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Ask { json, conversation, new, text } => {
            let text = text.join(" ");
            // Said before anything opens: nothing to run.
            if text.trim().is_empty() {
                anyhow::bail!("empty message");
            }
            let app = open().await?;
            // « oui » after a question answers it: the conversation that asked goes on.
            let conversation = match conversation {
                Some(c) => Some(c),
                None if !new => app.engine.conversation_awaiting_reply().await.context("reading the last turn")?,
                None => None,
            };
            let result = app.engine.run(conversation.as_deref(), &text, None).await.context("running the turn")?;
            eprintln!("conversation: {}", result.conversation_id);
            if json {
                println!("{}", serde_json::to_string(&result.to_ask_json())?);
            } else {
                println!("{}", result.written);
            }
            Ok(match result.status() {
                arthur_agents::turn::TurnStatus::Done => ExitCode::SUCCESS,
                arthur_agents::turn::TurnStatus::Refused => ExitCode::from(EXIT_REFUSED),
                arthur_agents::turn::TurnStatus::Failed => ExitCode::from(EXIT_FAILED),
            })
        }
        Command::Tool(cmd) => {
            let app = open().await?;
            run_tool(&app, cmd).await
        }
        Command::Listen { ptt, io, devices, wake_word, follow_up } => {
            if devices {
                for d in arthur_audio::capture::input_devices() {
                    println!("{d}");
                }
                return Ok(ExitCode::SUCCESS);
            }
            let app = open().await?;
            let listen = crate::voice::ListenArgs { ptt, io, wake_word, follow_up };
            crate::voice::listen(&app, listen, shutdown_signal()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Transcribe { file, threads } => {
            let settings = Settings::load().context("loading configuration")?;
            let text = tokio::task::spawn_blocking(move || crate::voice::transcribe(&settings, &file, threads))
                .await
                .context("transcription task")??;
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Say { text, output } => {
            let settings = Settings::load().context("loading configuration")?;
            let text = text.join(" ");
            let secs = tokio::task::spawn_blocking(move || crate::voice::say(&settings, &text, &output))
                .await
                .context("synthesis task")??;
            eprintln!("{} s de parole écrits.", arthur_agents::fr::decimal(f64::from(secs), 1));
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve {
            io,
            no_voice,
            reminder_check_secs,
            atlas_poll_secs,
            atlas_launch_secs,
            atlas_launch_offset_secs,
            atlas_watchdog_secs,
            atlas_only,
        } => {
            let first_start = if atlas_only { None } else { crate::first_start::prepare().context("first start")? };
            let app = open().await?;
            if let Some(config) = first_start {
                let providers = crate::health::check_providers(crate::health::providers(&app.settings)).await;
                let found = crate::health::Findings {
                    database: Ok(()),
                    providers: &providers,
                    atlas_counts: None,
                    microphone: None,
                };
                eprintln!(
                    "Arthur : premier démarrage. Exemple de configuration écrit dans {} (tout y est commenté, lisible par toi seul).\n{}",
                    config.display(),
                    crate::health::report(&app.settings, &found)
                );
            }
            let args = crate::serve::ServeArgs {
                io,
                no_voice,
                reminder_check: std::time::Duration::from_secs(reminder_check_secs.max(1)),
                atlas_poll: std::time::Duration::from_secs(atlas_poll_secs.max(1)),
                atlas_launch: std::time::Duration::from_secs(atlas_launch_secs.max(1)),
                atlas_launch_offset: std::time::Duration::from_secs(atlas_launch_offset_secs),
                atlas_watchdog: std::time::Duration::from_secs(atlas_watchdog_secs.max(1)),
                atlas_only,
            };
            crate::serve::run(app, args, shutdown_signal()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor { voix: true, input, device } => {
            let app = open().await?;
            crate::voice::selftest(&app, &crate::voice::SelfTestArgs { input, device }).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor { .. } => {
            let settings = Settings::load().context("loading configuration")?;
            let opened = App::open(settings.clone()).await;
            let database = opened.as_ref().map(|_| ()).map_err(crate::health::database_reason);
            let app = opened.ok();
            let database_ok = app.is_some();
            // Atlas' messages by state (parked, awaiting approval…); unknown if the read fails.
            let counts = match &app {
                Some(app) => app.db.atlas.state_counts().await.ok(),
                None => None,
            };
            let providers = crate::health::check_providers(crate::health::providers(&settings)).await;
            let mic_settings = settings.clone();
            let microphone = tokio::task::spawn_blocking(move || crate::health::probe_microphone(&mic_settings))
                .await
                .context("microphone check")?;
            let found = crate::health::Findings {
                database,
                providers: &providers,
                atlas_counts: Some(counts.as_deref()),
                microphone: Some(microphone),
            };
            let mut report = crate::health::report(&settings, &found);
            // Wyoming (issue 31): the server's address, and whether each satellite answers now.
            for (ok, text) in crate::wyoming::doctor(&settings).await {
                report.push_str(&format!("  [{}] {text}\n", if ok { "ok" } else { "--" }));
            }
            println!("Arthur — état\n{report}");
            Ok(if database_ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Command::Web => {
            let app = open().await?;
            let (listener, state) = crate::web::bind_for(&app, Default::default()).await?;
            crate::web::run(listener, state, shutdown_signal()).await.context("web server")?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Tools { json } => {
            let tools = arthur_agents::tools::ToolBox::new();
            if json {
                let defs: Vec<_> = tools.all().map(|t| t.definition()).collect();
                println!("{}", serde_json::to_string_pretty(&defs)?);
            } else {
                for agent in [AgentKind::Intendant, AgentKind::Mentor] {
                    println!("{} : {}", agent.as_str(), arthur_agents::tools::ToolBox::names_for(agent).join(", "));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Export { json } => {
            let app = open().await?;
            let data = export::export(app.ctx.store.as_ref(), app.ctx.now()).await.context("reading the database")?;
            if json {
                println!("{}", serde_json::to_string_pretty(&data)?);
            } else {
                print!("{}", export::to_text(&data)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Briefing(b) => {
            let app = open().await?;
            let (store, now, tz) = (app.ctx.store.as_ref(), app.ctx.now(), app.ctx.tz);
            let text =
                if b.jour { briefing::daily(store, now, tz).await } else { briefing::weekly(store, now, tz).await }
                    .context("reading the database")?;
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench { what: BenchCmd::Store { iterations, postgres } } => {
            crate::bench::store(iterations, postgres.as_deref()).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Atlas { what } => {
            let app = open().await?;
            crate::atlas_cli::run(&app, what, shutdown_signal()).await
        }
        Command::Debug { what: DebugCmd::WriteLoop { count } } => {
            let app = open().await?;
            crate::bench::write_loop(&app, count).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The one stop signal of every command: a token cancelled on Ctrl-C or SIGTERM. Each
/// long-running part (`serve`'s components, the voice loops, the web, Atlas' workers)
/// takes it as its `shutdown`.
pub fn shutdown_signal() -> tokio_util::sync::CancellationToken {
    let token = tokio_util::sync::CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! { _ = ctrl_c => {}, _ = term => {} }
        tracing::info!("shutdown requested");
        cancel.cancel();
    });
    token
}

async fn run_tool(app: &App, cmd: ToolCmd) -> anyhow::Result<ExitCode> {
    let raw = match cmd.args.as_deref() {
        None => serde_json::Value::Null,
        // Handed over as a string: the tool reports malformed JSON as a typed refusal.
        Some(text) => serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string())),
    };
    let outcome = match cmd.agent {
        None => app.tools.invoke(&app.ctx, &cmd.name, &raw).await,
        Some(a) => {
            let agent = match a {
                AgentArg::Intendant => AgentKind::Intendant,
                AgentArg::Mentor => AgentKind::Mentor,
            };
            app.tools.invoke_as(agent, &app.ctx, &cmd.name, &raw).await
        }
    };
    let text = report::compose_written(&cmd.name, &outcome, app.ctx.tz);
    if cmd.json {
        let value = serde_json::json!({
            "tool": cmd.name,
            "outcome": outcome.kind(),
            "report": text,
            "detail": outcome,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{text}");
    }
    Ok(match outcome {
        Outcome::Done(_) | Outcome::Briefing(_) => ExitCode::SUCCESS,
        Outcome::Refused(_) => ExitCode::from(EXIT_REFUSED),
        Outcome::Failed(_) => ExitCode::from(EXIT_FAILED),
    })
}

#[cfg(test)]
mod summary_tests {
    use super::french_summary;

    /// Every error a new user can cause says, in French, what to do.
    #[test]
    fn errors_a_user_can_cause_say_what_to_do() {
        let said = |e: anyhow::Error| french_summary(&e);
        assert!(said(anyhow::anyhow!("empty message")).contains("arthur ask \"quelle heure est-il ?\""));
        let mic = said(anyhow::anyhow!("cannot open the audio input").context("aucun micro utilisable"));
        assert!(
            mic.contains("--device") && mic.contains("--input FICHIER.wav") && mic.contains("arthur listen --devices")
        );
        let ro = said(anyhow::anyhow!("attempt to write a readonly database").context("opening database sqlite://x"));
        assert!(ro.contains("lecture seule") && ro.contains("ARTHUR_DATA_DIR"), "{ro}");
        assert_eq!(said(anyhow::anyhow!("something else")), "la commande a échoué.");
    }
}
