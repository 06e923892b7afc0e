//! `arthur chat`: the terminal conversation. Until the model-driven turn lands, it takes
//! direct tool commands (`/creer_note {"texte": "…"}`) and the briefings, and says plainly
//! that it does not understand free text yet — it never guesses.

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
    output
        .write_all(b"Arthur - mode terminal. Sans modele de langage, je prends les commandes directes : /aide pour la liste.\n")
        .await?;
    loop {
        output.write_all("vous › ".as_bytes()).await?;
        output.flush().await?;
        let Some(line) = lines.next_line().await? else { break };
        let line = line.trim();
        if line.is_empty() {
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

/// One answer; `None` means the user asked to quit.
async fn answer(app: &App, line: &str) -> Option<String> {
    let Some(command) = line.strip_prefix('/') else {
        return Some(
            "Je ne comprends pas encore les phrases libres sans modèle de langage, et je ne devine pas. \
             Rien n'a été fait. Tape /aide pour les commandes."
                .to_string(),
        );
    };
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
