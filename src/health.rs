//! What state the appliance is in, for `GET /healthz` (machines) and `arthur doctor`
//! (people): database, speech models, voice loop, providers, Atlas. Components of
//! `arthur serve` report into a shared [`HealthBoard`]; the checks themselves are here.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::config::Settings;
pub use arthur_voice::tally::Tally;
pub use arthur_web::board::{HealthBoard, LiveState, ProviderCheck};

/// The board of `arthur serve`, showing what `tally` counts where the bell and the notifier
/// run (copied at each read: the web crate knows neither).
pub fn board(tally: Arc<Tally>) -> HealthBoard {
    HealthBoard::counting(move || {
        let c = tally.counts();
        arthur_web::board::Counts {
            reminders_due: c.reminders_due,
            reminders_printed: c.reminders_printed,
            timers_rung: c.timers_rung,
        }
    })
}

/// The speech model files found (or not).
#[derive(Debug, Clone, Serialize)]
pub struct ModelFiles {
    pub whisper: Option<PathBuf>,
    pub piper_voice: Option<PathBuf>,
    pub onnxruntime: Option<PathBuf>,
}

pub fn model_files(settings: &Settings) -> ModelFiles {
    let lang = if settings.voice.stt_lang.starts_with("en") { "en" } else { "fr" };
    ModelFiles {
        whisper: crate::voice::whisper_model(settings).ok(),
        piper_voice: settings.voice.piper_voice.clone().filter(|p| p.is_file()).or_else(|| {
            settings.voice.model_dir.as_deref().and_then(|dir| arthur_audio::piper::default_voice_path(dir, lang))
        }),
        onnxruntime: settings.voice.onnxruntime.clone().filter(|p| p.is_file()),
    }
}

/// The configured providers, in fallback order.
pub fn providers(settings: &Settings) -> Vec<ProviderCheck> {
    let p = &settings.providers;
    [("mistral", &p.mistral), ("anthropic", &p.anthropic), ("openai", &p.openai)]
        .into_iter()
        .filter_map(|(name, provider)| {
            provider.as_ref().map(|pr| ProviderCheck { name, base_url: pr.base_url.clone(), reachable: None })
        })
        .collect()
}

/// Whether each provider's server answers HTTP at all (any status) within 3 s. No key is
/// sent: this checks the network path, not the account.
pub async fn check_providers(mut providers: Vec<ProviderCheck>) -> Vec<ProviderCheck> {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(3)).build();
    for p in &mut providers {
        p.reachable = Some(match &client {
            Ok(c) => c.get(&p.base_url).send().await.is_ok(),
            Err(_) => false,
        });
    }
    providers
}

/// What Atlas needs besides its mailbox, checked without touching the network: the
/// scanner, Tesseract, the repository, Claude Code, the recap's SMTP and the founder.
pub fn atlas_checks(settings: &Settings) -> Vec<(bool, String)> {
    let a = &settings.atlas;
    let on_path = |bin: &str| {
        let p = std::path::Path::new(bin);
        if p.components().count() > 1 {
            return p.is_file();
        }
        std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(bin).is_file()))
    };
    let mut out = Vec::new();
    out.push(match &a.clamd_addr {
        Some(addr) => (true, format!("Atlas · antivirus : clamd {addr}")),
        None if on_path("clamscan") => (true, "Atlas · antivirus : clamscan".into()),
        None => (
            false,
            "Atlas · antivirus : ni clamd (ATLAS_CLAMD_ADDR) ni clamscan — aucune pièce jointe ne sera lue".into(),
        ),
    });
    out.push(if on_path("tesseract") {
        (true, "Atlas · OCR : tesseract".into())
    } else {
        (false, "Atlas · OCR : tesseract absent — les captures d'écran ne seront pas lues".into())
    });
    out.push(match &a.founder_email {
        Some(f) => (true, format!("Atlas · fondateur : {f}")),
        None => (false, "Atlas · fondateur : ATLAS_FOUNDER_EMAIL manquant (transferts et récapitulatifs)".into()),
    });
    match &a.repo {
        None => out.push((false, "Atlas · lanceur : ATLAS_REPO manquant — rien ne sera lancé".into())),
        Some(repo) => {
            let git = repo.join(".git").exists();
            out.push((
                git,
                format!("Atlas · dépôt : {}{}", repo.display(), if git { "" } else { " (pas un dépôt git)" }),
            ));
            let claude = on_path(&a.claude_bin);
            out.push((
                claude,
                format!(
                    "Atlas · Claude Code : {}{}",
                    a.claude_bin,
                    if claude { "" } else { " introuvable (ATLAS_CLAUDE_BIN)" }
                ),
            ));
            out.push(if a.disabled {
                (false, "Atlas · lancements : désactivés (ATLAS_DISABLED=1)".into())
            } else {
                (true, "Atlas · lancements : toutes les 5 minutes".into())
            });
            out.extend(root_check(arthur_atlas::child_env::running_as_root(), &a.permission_mode, a.sandboxed));
        }
    }
    out.push(if a.trust_unsigned_founder {
        (
            false,
            "Atlas · autorité : ATLAS_TRUST_UNSIGNED_FOUNDER=1 — ton adresse lance Claude Code même sans signature DKIM \
             (plus faible : l'en-tête From se falsifie sans effort)"
                .into(),
        )
    } else {
        (
            true,
            "Atlas · autorité : seuls tes e-mails signés DKIM et les clients autorisés lancent Claude Code ; \
             les autres attendent ton accord"
                .into(),
        )
    });
    out.push(if a.worktree {
        (
            true,
            format!(
                "Atlas · runs : worktree isolé, {} après un délai dépassé (ATLAS_MAX_RETRIES)",
                match a.max_retries {
                    0 => "aucun nouvel essai".to_string(),
                    1 => "1 nouvel essai".to_string(),
                    n => format!("{n} nouveaux essais"),
                }
            ),
        )
    } else {
        (false, "Atlas · runs : ATLAS_WORKTREE=0 — les runs travaillent directement dans le tronc".into())
    });
    let extra = a.child_env.extra();
    out.push((
        true,
        format!(
            "Atlas · environnement des runs : PATH, HOME, USER, LANG/LC_*, TZ, TERM{}",
            if extra.is_empty() {
                " (aucun secret d'Arthur)".to_string()
            } else {
                format!(" + ATLAS_CHILD_ENV : {}", extra.join(", "))
            }
        ),
    ));
    out.push(if a.smtp_url.is_some() {
        (true, "Atlas · récapitulatifs : par e-mail au fondateur (ATLAS_SMTP_URL)".into())
    } else {
        (false, "Atlas · récapitulatifs : ATLAS_SMTP_URL manquant — le fondateur ne sera pas prévenu".into())
    });
    out
}

/// Claude Code refuses bypassPermissions to root (2.1.x): as root, say why nothing would be
/// launched and what to do, or that the machine is declared a sandbox.
pub fn root_check(is_root: bool, permission_mode: &str, sandboxed: bool) -> Option<(bool, String)> {
    if !is_root || permission_mode != "bypassPermissions" {
        return None;
    }
    Some(if sandboxed {
        (
            true,
            "Atlas · root : ATLAS_SANDBOXED=1 — Claude Code reçoit IS_SANDBOX=1 et accepte bypassPermissions en root \
             (à réserver à une machine bac à sable)"
                .into(),
        )
    } else {
        (
            false,
            "Atlas · root : Arthur tourne en root, où Claude Code refuse bypassPermissions — rien ne sera lancé. \
             Lance Arthur avec l'utilisateur du service (User=arthur), ou mets ATLAS_SANDBOXED=1 si la machine est \
             un bac à sable jetable"
                .into(),
        )
    })
}

/// Atlas' messages that wait on the founder, from the counts by state: one line each, with
/// the command that moves them on. An unknown count is said as unknown.
pub fn atlas_waiting(counts: Option<&[(arthur_atlas::EmailState, i64)]>) -> Vec<(bool, String)> {
    use arthur_atlas::EmailState;
    let Some(counts) = counts else {
        return vec![(false, "Atlas · e-mails en attente : inconnu (base illisible)".into())];
    };
    let n = |s: EmailState| counts.iter().find(|(state, _)| *state == s).map(|(_, n)| *n).unwrap_or(0);
    let mut out = Vec::new();
    let held = n(EmailState::AwaitingApproval);
    out.push((
        held == 0,
        format!("Atlas · en attente de ton accord : {held} (arthur atlas approve|cancel ID, ou la page /atlas)"),
    ));
    let (scan, classify) = (n(EmailState::ScanFailed), n(EmailState::ClassifyFailed));
    out.push((
        scan + classify == 0,
        format!(
            "Atlas · mis de côté après une journée d'erreurs : {} (antivirus {scan}, classification {classify}) — arthur atlas retry ID",
            scan + classify
        ),
    ));
    let escalated = n(EmailState::Escalated);
    out.push((escalated == 0, format!("Atlas · escaladés (un humain doit reprendre) : {escalated}")));
    out
}

/// What `arthur doctor` found by trying, beyond the settings.
pub struct Findings<'a> {
    /// The database opened and migrated, or why not (English, from the error).
    pub database: Result<(), String>,
    pub providers: &'a [ProviderCheck],
    /// Atlas' messages by state — `None` when not asked (the first start), `Some(None)`
    /// when the database could not say.
    pub atlas_counts: Option<Option<&'a [(arthur_atlas::EmailState, i64)]>>,
    /// The microphone after a short listen — `None` when not tried (the first start).
    pub microphone: Option<Result<arthur_audio::capture::Probe, String>>,
}

/// Opens the microphone the voice would use and listens briefly: it works only if frames
/// come. Blocking (about half a second).
pub fn probe_microphone(settings: &Settings) -> Result<arthur_audio::capture::Probe, String> {
    use arthur_audio::capture::CaptureError;
    let config = arthur_audio::capture::CaptureConfig { device: settings.voice.input_device.clone() };
    arthur_audio::capture::probe(&config, Duration::from_millis(600)).map_err(|e| {
        tracing::info!(error = %e, "microphone probe failed");
        match e {
            CaptureError::NoDefaultDevice => "aucune entrée audio sur cette machine".to_string(),
            CaptureError::DeviceNotFound { wanted, .. } => format!("l'entrée « {wanted} » n'existe pas"),
            CaptureError::Host(_) => "le système audio n'est pas disponible".to_string(),
            CaptureError::Open { device, .. } => format!("l'entrée {device} refuse de s'ouvrir"),
        }
    })
}

/// Why a path cannot be written, in French.
fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::PermissionDenied => "droits insuffisants".into(),
        ErrorKind::NotFound => "chemin introuvable".into(),
        ErrorKind::ReadOnlyFilesystem => "disque en lecture seule".into(),
        ErrorKind::StorageFull => "disque plein".into(),
        ErrorKind::NotADirectory | ErrorKind::AlreadyExists => "ce n'est pas un dossier".into(),
        _ => "erreur d'écriture".into(),
    }
}

/// Why the database did not open, in French, from the error's English chain (which goes to
/// the log).
pub fn database_reason(e: &anyhow::Error) -> String {
    let text = error_chain(e).to_lowercase();
    tracing::info!(error = %text, "database unavailable");
    if text.contains("data directory") {
        "le dossier de données ne peut pas être créé".into()
    } else if text.contains("permission denied") || text.contains("readonly") || text.contains("read-only") {
        "droits insuffisants sur le fichier ou le dossier".into()
    } else if text.contains("unable to open database file") || text.contains("no such file") {
        "le fichier ne peut pas être créé ni ouvert".into()
    } else if text.contains("connection refused") || text.contains("timed out") || text.contains("pool timed out") {
        "le serveur de base de données ne répond pas".into()
    } else if text.contains("password") || text.contains("authentication") {
        "le serveur refuse l'identifiant ou le mot de passe".into()
    } else if text.contains("migrat") {
        "ses tables sont d'une version que cet Arthur ne connaît pas".into()
    } else if text.contains("not a database") || text.contains("malformed") {
        "le fichier n'est pas une base lisible".into()
    } else {
        "erreur inattendue de la base, détaillée avec RUST_LOG=info".into()
    }
}

/// Whether Arthur can write in its data directory: a file is created, then removed.
pub fn data_dir_writable(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| io_reason(&e))?;
    let probe = dir.join(format!(".arthur-doctor-{}", std::process::id()));
    std::fs::write(&probe, b"ok").map_err(|e| io_reason(&e))?;
    std::fs::remove_file(&probe).map_err(|e| io_reason(&e))
}

/// Files that may hold secrets (the configuration, the service's environment file) and
/// that others can read.
pub fn readable_secret_files(settings: &Settings) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let candidates =
        settings.config_file.iter().cloned().chain(std::iter::once(PathBuf::from(crate::config::ENV_FILE)));
    candidates.filter(|p| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o077 != 0)).collect()
}

/// `arthur doctor` and the first-start screen: what works, what is missing, and for every
/// "--" line why and what to do.
pub fn report(settings: &Settings, found: &Findings<'_>) -> String {
    let files = model_files(settings);
    let mut out = String::new();
    let mut line = |ok: bool, text: String| out.push_str(&format!("  [{}] {text}\n", if ok { "ok" } else { "--" }));
    match data_dir_writable(&settings.data_dir) {
        Ok(()) => line(true, format!("données : {} (écriture possible)", settings.data_dir.display())),
        Err(why) => line(
            false,
            format!(
                "données : {} — impossible d'y écrire ({why}). Donne-toi les droits sur ce dossier, ou choisis-en un autre avec ARTHUR_DATA_DIR.",
                settings.data_dir.display()
            ),
        ),
    }
    match &found.database {
        Ok(()) => line(true, "base : ouverte et migrée".into()),
        Err(why) => line(
            false,
            format!("base : inaccessible ({why}). Vérifie ARTHUR_DATABASE_URL (ou le dossier de données) ; rien n'a été modifié."),
        ),
    }
    line(
        true,
        match &settings.config_file {
            Some(f) => format!("configuration : {}", f.display()),
            None => "configuration : aucun fichier (valeurs par défaut et variables d'environnement ; `arthur serve` écrit un exemple au premier démarrage)".into(),
        },
    );
    for file in readable_secret_files(settings) {
        line(
            false,
            format!(
                "secrets : {} est lisible par d'autres comptes alors qu'il peut contenir des clés. Corrige avec : chmod 600 {}",
                file.display(),
                file.display()
            ),
        );
    }
    // Where each value came from: the variables and file keys that changed a default.
    let from_env = settings.set_from(crate::config::Origin::Environment);
    let from_file = settings.set_from(crate::config::Origin::File);
    line(
        true,
        match (from_env.is_empty(), from_file.is_empty()) {
            (true, true) => "réglages : tous par défaut".to_string(),
            _ => {
                let mut parts = Vec::new();
                if !from_env.is_empty() {
                    parts.push(format!("de l'environnement : {}", from_env.join(", ")));
                }
                if !from_file.is_empty() {
                    parts.push(format!("du fichier : {}", from_file.join(", ")));
                }
                format!("réglages : {} ; le reste par défaut", parts.join(" ; "))
            }
        },
    );
    match &files.whisper {
        Some(p) => line(true, format!("reconnaissance vocale : {}", p.display())),
        None => line(
            false,
            "reconnaissance vocale : aucun modèle whisper — lance models/fetch (ou ARTHUR_WHISPER_MODEL) ; sans lui, pas de voix mains libres".into(),
        ),
    }
    match (&files.piper_voice, &files.onnxruntime) {
        (Some(v), Some(_)) => line(true, format!("voix : Piper {}", v.display())),
        (Some(_), None) => line(false, "voix : ONNX Runtime absent — models/fetch ; espeak-ng en attendant".into()),
        (None, _) => {
            line(false, "voix : pas de voix Piper de la langue — models/fetch ; espeak-ng en attendant".into())
        }
    }
    let (ok, text) = crate::voice::turn_end_line(settings);
    line(ok, text);
    match &found.microphone {
        None => {}
        Some(Ok(p)) if p.frames > 0 => line(
            true,
            format!(
                "micro : {} ({} trames reçues en 0,6 s ; `arthur doctor --voix` vérifie que je te comprends)",
                p.info.device, p.frames
            ),
        ),
        Some(Ok(p)) => line(
            false,
            format!(
                "micro : {} s'ouvre mais n'envoie aucun son. Branche un micro ou choisis-en un autre (ARTHUR_AUDIO_INPUT ; `arthur listen --devices` les liste). La voix mains libres ne marchera pas ; le web et le terminal, si.",
                p.info.device
            ),
        ),
        Some(Err(why)) => line(
            false,
            format!(
                "micro : aucun ne répond ({why}). Branche un micro ou choisis-en un (ARTHUR_AUDIO_INPUT ; `arthur listen --devices` les liste). La voix mains libres ne marchera pas ; le web et le terminal, si."
            ),
        ),
    }
    let providers = found.providers;
    if providers.is_empty() {
        line(
            false,
            "modèle de langue : aucune clé — hors ligne, je comprends les commandes courantes (notes, rappels, \
             minuteurs, listes, sessions, bilans). Pour le reste, mets une clé : MISTRAL_API_KEY, ANTHROPIC_API_KEY \
             ou OPENAI_API_KEY (ou api_key sous [providers.mistral] dans arthur.toml)"
                .into(),
        );
    }
    for p in providers {
        let ok = p.reachable.unwrap_or(true);
        let state = match p.reachable {
            Some(true) => "joignable",
            Some(false) => "injoignable",
            None => "configuré",
        };
        let todo = if ok {
            ""
        } else {
            " — vérifie la clé et l'adresse ; en attendant, je comprends les commandes courantes"
        };
        line(ok, format!("modèle de langue : {} ({}) {state}{todo}", p.name, p.base_url));
    }
    let atlas = settings.atlas.imap_url.is_some();
    // Atlas is optional: not set up is no fault.
    line(
        true,
        if atlas {
            "Atlas : configuré".into()
        } else {
            "Atlas : non configuré (facultatif ; ATLAS_IMAP_URL pour l'activer, voir le README)".to_string()
        },
    );
    if atlas {
        for (ok, text) in atlas_checks(settings) {
            line(ok, text);
        }
        if let Some(counts) = found.atlas_counts {
            for (ok, text) in atlas_waiting(counts) {
                line(ok, text);
            }
        }
    }
    out.push_str(&format!("  web : http://{} (chat, rappels, journal)\n", settings.web_addr));
    out
}

/// An error and its causes on one line, each cause once: an error whose message already
/// quotes its source (« cannot open X: no such file ») does not repeat it.
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn root_and_bypass_are_explained() {
        assert_eq!(super::root_check(false, "bypassPermissions", false), None);
        assert_eq!(super::root_check(true, "dontAsk", false), None);
        let (ok, line) = super::root_check(true, "bypassPermissions", false).unwrap();
        assert!(!ok && line.contains("User=arthur") && line.contains("ATLAS_SANDBOXED=1"), "{line}");
        assert!(super::root_check(true, "bypassPermissions", true).unwrap().0);
    }
}
