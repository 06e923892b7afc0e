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
    /// Conversation in the terminal.
    Chat,
    /// One turn: `arthur ask "rappelle-moi d'appeler la banque demain à 9 h"`.
    Ask {
        /// Print the turn as one JSON object (docs/interface.md §3.1).
        #[arg(long)]
        json: bool,
        /// Continue this conversation. Without it, the last conversation is continued when
        /// its last answer, less than five minutes ago, was a question; a new one otherwise.
        #[arg(long, conflicts_with = "new")]
        conversation: Option<String>,
        /// Start a new conversation even if the last one asked a question.
        #[arg(long)]
        new: bool,
        /// What the user says.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Voice conversation: hands-free (wake word "Arthur", then a follow-up window), or
    /// push-to-talk in the terminal with --ptt.
    Listen {
        /// Push-to-talk: Space starts and stops recording, Esc quits; no wake word.
        #[arg(long)]
        ptt: bool,
        #[command(flatten)]
        io: crate::voice::AudioIo,
        /// List the audio input devices and exit.
        #[arg(long)]
        devices: bool,
        /// Wake word (default "Arthur").
        #[arg(long, default_value = "Arthur")]
        wake_word: String,
        /// Follow-up window after an answer, in seconds.
        #[arg(long, default_value_t = 8)]
        follow_up: u64,
    },
    /// Print the text spoken in a WAV file (whisper; language ARTHUR_STT_LANG).
    Transcribe {
        /// The recording (any PCM WAV: resampled to 16 kHz mono).
        file: std::path::PathBuf,
        /// Threads for whisper (default 2).
        #[arg(long)]
        threads: Option<u32>,
    },
    /// Speak a text into a WAV file, sentence by sentence.
    Say {
        /// What to say.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// Output WAV file.
        #[arg(short, long)]
        output: std::path::PathBuf,
    },
    /// The appliance: web interface, hands-free voice, reminders spoken when due.
    /// SIGTERM or Ctrl-C stops it cleanly.
    Serve {
        #[command(flatten)]
        io: crate::voice::AudioIo,
        /// Run without the voice (web and reminders only).
        #[arg(long)]
        no_voice: bool,
        /// Seconds between two checks for due reminders.
        #[arg(long, default_value_t = 30)]
        reminder_check_secs: u64,
        /// Seconds between two polls of the Atlas mailbox (when ATLAS_IMAP_URL is set).
        #[arg(long, default_value_t = 60)]
        atlas_poll_secs: u64,
        /// Seconds between two Atlas launch cycles.
        #[arg(long, default_value_t = 300, hide = true)]
        atlas_launch_secs: u64,
        /// Seconds after the start before the first launch cycle.
        #[arg(long, default_value_t = 120, hide = true)]
        atlas_launch_offset_secs: u64,
        /// Seconds between two checks of the Atlas lock watchdog (15 minutes).
        #[arg(long, default_value_t = 900, hide = true)]
        atlas_watchdog_secs: u64,
        /// An Atlas worker only: the mailbox poller and the launcher, no web, voice or
        /// reminders. Several can share one PostgreSQL database (ARTHUR_DATABASE_URL).
        #[arg(long)]
        atlas_only: bool,
    },
    /// What works and what is missing (database, models, microphone, providers, Atlas).
    Doctor {
        /// « Est-ce que tu me comprends ? » — read ten short commands aloud: word error rate,
        /// commands understood, time of each stage, and whether a bigger whisper model is
        /// worth it on this machine.
        #[arg(long)]
        voix: bool,
        /// The voice self-test on a recording of the ten sentences read one after the other.
        #[arg(long, requires = "voix")]
        input: Option<std::path::PathBuf>,
        /// The microphone for the voice self-test (default ARTHUR_AUDIO_INPUT).
        #[arg(long, requires = "voix")]
        device: Option<String>,
    },
    /// The web interface alone (chat and memory pages), on ARTHUR_WEB_ADDR.
    Web,
    /// Run one tool directly: `arthur tool creer_note '{"texte": "…"}'`.
    Tool(ToolCmd),
    /// List the tools with their JSON Schema.
    Tools {
        #[arg(long)]
        json: bool,
    },
    /// Everything the memory holds.
    Export {
        /// JSON (the tool-argument field names); without it, the same content as text.
        #[arg(long)]
        json: bool,
    },
    /// The briefing of the day or of the week, composed from the store.
    Briefing(BriefingCmd),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
    /// Maintenance and test helpers.
    #[command(hide = true)]
    Debug {
        #[command(subcommand)]
        what: DebugCmd,
    },
    /// Atlas, the e-mail pipeline: poll, classify, report, list, show, clients.
    Atlas {
        #[command(subcommand)]
        what: crate::atlas_cli::AtlasCmd,
    },
}

#[derive(Debug, ClapArgs)]
pub struct ToolCmd {
    /// Tool name, e.g. creer_rappel.
    pub name: String,
    /// Arguments as a JSON object (default `{}`).
    pub args: Option<String>,
    /// Run as this agent (refuses tools outside its list).
    #[arg(long, value_enum)]
    pub agent: Option<AgentArg>,
    /// Print the outcome as JSON.
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
    /// Cost of each tool call on SQLite (median µs), and of a 3-tool turn.
    Store {
        #[arg(long, default_value_t = 300)]
        iterations: usize,
        /// Also on this empty PostgreSQL database (`postgres://…`), side by side.
        #[arg(long)]
        postgres: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum DebugCmd {
    /// Writes notes and chrono cycles in a loop, printing one line per committed write;
    /// used by the crash-safety test, which kills the process in the middle.
    WriteLoop {
        #[arg(long, default_value_t = 1000)]
        count: usize,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
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
    if text.contains("not available yet") {
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
            let app = open().await?;
            let text = text.join(" ");
            if text.trim().is_empty() {
                anyhow::bail!("empty message");
            }
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
            eprintln!("{secs:.1} s de parole écrits.");
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
