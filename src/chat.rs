//! `arthur chat`: the terminal conversation. Free text goes through the honest turn; what
//! Arthur is doing (routing, each tool) is shown on stderr while it works — never a model
//! draft that could be withdrawn — and the answer, once its outcome is known, on stdout.
//! Direct tool commands (`/creer_note {"texte": "…"}`) and the briefings work too, with or
//! without a model.

use arthur_agents::memory::briefing;
use arthur_agents::report;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::app::App;

const HELP: &str = "Commandes :\n\
  /aide                      cette aide\n\
  /outils                    la liste des outils\n\
  /jour, /semaine            le briefing du jour ou de la semaine\n\
  /NOM_OUTIL {arguments}     appelle un outil, ex. /creer_note {\"texte\": \"acheter du pain\"}\n\
  /quitter                   termine la conversation";

/// Runs the conversation until `/quitter` or the end of input.
pub async fn run<R, W>(app: &App, input: R, mut output: W) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut lines = BufReader::new(input).lines();
    let mut conversation: Option<String> = None;
    let greeting = if app.settings.providers.mistral.is_none()
        && app.settings.providers.anthropic.is_none()
        && app.settings.providers.openai.is_none()
    {
        "Arthur, en mode terminal. Aucun modèle de langage n'est configuré : je prends les commandes directes (/aide).\n"
    } else {
        "Arthur, en mode terminal. Parle-moi, ou tape /aide pour les commandes directes.\n"
    };
    output.write_all(greeting.as_bytes()).await?;
    loop {
        output.write_all("toi › ".as_bytes()).await?;
        output.flush().await?;
        let Some(line) = lines.next_line().await? else { break };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('/') {
            let result = app.engine.run(conversation.as_deref(), line, Some(&show_status)).await;
            clear_status();
            let answer = match result {
                Ok(r) => {
                    conversation = Some(r.conversation_id.clone());
                    r.written
                }
                Err(e) => {
                    tracing::error!(error = %e, "turn failed");
                    "Panne : la base de données n'a pas répondu, l'effet est inconnu. Vérifie la page Journal (/journal)."
                        .to_string()
                }
            };
            output.write_all(format!("arthur › {answer}\n").as_bytes()).await?;
            continue;
        }
        let answer = match answer(app, line).await {
            Some(a) => a,
            None => break,
        };
        output.write_all(format!("arthur › {answer}\n").as_bytes()).await?;
    }
    output.write_all("À bientôt.\n".as_bytes()).await?;
    output.flush().await?;
    Ok(())
}

/// The live status on stderr, dimmed, on one line that the next status overwrites.
fn show_status(event: arthur_agents::turn::TurnEvent) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let text = event.text();
    let _ = write!(err, "\r\x1b[2m… {text}\x1b[0m\x1b[K");
    let _ = err.flush();
}

/// Clears the status line before the answer is printed.
fn clear_status() {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[K");
    let _ = err.flush();
}

/// One answer to a `/` command; `None` means the user asked to quit.
async fn answer(app: &App, line: &str) -> Option<String> {
    let command = line.strip_prefix('/').unwrap_or(line);
    let (name, rest) = command.split_once(char::is_whitespace).unwrap_or((command, ""));
    let (store, now, tz) = (app.ctx.store.as_ref(), app.ctx.now(), app.ctx.tz);
    Some(match name {
        "quitter" | "q" | "exit" => return None,
        "aide" | "help" => HELP.to_string(),
        "outils" => app.tools.all().map(|t| t.name()).collect::<Vec<_>>().join(", "),
        "jour" => briefing::daily(store, now, tz).await.unwrap_or_else(|e| {
            tracing::error!(error = %e, "daily briefing failed");
            "Panne : le briefing n'a pas pu être lu. Vérifie la page Sessions (/sessions).".to_string()
        }),
        "semaine" => briefing::weekly(store, now, tz).await.unwrap_or_else(|e| {
            tracing::error!(error = %e, "weekly briefing failed");
            "Panne : le briefing n'a pas pu être lu. Vérifie la page Sessions (/sessions).".to_string()
        }),
        tool => {
            let rest = rest.trim();
            let raw = if rest.is_empty() {
                serde_json::Value::Null
            } else {
                serde_json::from_str(rest).unwrap_or_else(|_| serde_json::Value::String(rest.to_string()))
            };
            let outcome = app.tools.invoke(&app.ctx, tool, &raw).await;
            report::compose_written(tool, &outcome, tz)
        }
    })
}
