//! Typed settings: built-in defaults, then `arthur.toml`, then the environment (the names of
//! docs/interface.md §2). Secrets are wrapped so that printing the settings never prints a key.

use std::path::{Path, PathBuf};

use arthur_agents::secret::Secret;
use arthur_agents::tools::DEFAULT_PREFERENCES_CAP;
use arthur_atlas::child_env::ChildEnv;
use arthur_atlas::settings::AtlasSettings;
use chrono_tz::Tz;
use serde::Deserialize;

pub const DEFAULT_TIMEZONE: &str = "Europe/Paris";
pub const DEFAULT_WEB_ADDR: &str = "127.0.0.1:8737";
pub const DEFAULT_MISTRAL_BASE_URL: &str = "https://api.mistral.ai";
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com";
pub const DEFAULT_ROUTER_MODEL: &str = "mistral-small-latest";
pub const DEFAULT_CHAT_MODEL: &str = "mistral-large-latest";
pub const DEFAULT_EMBED_MODEL: &str = "mistral-embed";
pub const DEFAULT_CLASSIFIER_MODEL: &str = "mistral-small-latest";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid config file {path}: {source}")]
    Parse { path: PathBuf, source: Box<toml::de::Error> },
    #[error("unknown time zone {0:?} (expected an IANA name such as Europe/Paris)")]
    TimeZone(String),
    #[error("invalid value for {name}: {value:?} ({expected})")]
    Invalid { name: &'static str, value: String, expected: &'static str },
    #[error("no data directory: set ARTHUR_DATA_DIR (no home directory was found)")]
    NoDataDir,
}

/// One language-model provider: present only when its API key is set.
#[derive(Debug, Clone)]
pub struct Provider {
    pub api_key: Secret,
    pub base_url: String,
}

#[derive(Debug, Clone, Default)]
pub struct Providers {
    pub mistral: Option<Provider>,
    pub anthropic: Option<Provider>,
    pub openai: Option<Provider>,
}

#[derive(Debug, Clone)]
pub struct Models {
    pub router: String,
    pub chat: String,
    pub embed: String,
    pub atlas_classifier: String,
}

#[derive(Debug, Clone)]
pub struct Voice {
    pub stt_lang: String,
    pub whisper_model: Option<PathBuf>,
    pub piper_voice: Option<PathBuf>,
    /// Microphone (`ARTHUR_AUDIO_INPUT`): a cpal device id or part of a device name.
    pub input_device: Option<String>,
    /// Speech during playback stops it (`ARTHUR_BARGE_IN`, default on). Off, the
    /// microphone is ignored while Arthur speaks (loudspeakers without echo cancellation).
    pub barge_in: bool,
    /// Where `models/fetch` installs the speech models (`ARTHUR_MODEL_DIR`, else
    /// `$XDG_DATA_HOME/arthur/models`, else `~/.local/share/arthur/models`); `None` when
    /// there is no home. The audio crate never looks for it itself.
    pub model_dir: Option<PathBuf>,
    /// ONNX Runtime (`ORT_DYLIB_PATH`, else `libonnxruntime.so` in the model directory).
    pub onnxruntime: Option<PathBuf>,
    /// The speech detector (`ARTHUR_VAD`).
    pub vad: VadSetting,
}

/// Which speech detector the voice loop uses (`ARTHUR_VAD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VadSetting {
    /// Silero VAD when installed (with ONNX Runtime), else earshot.
    #[default]
    Auto,
    Silero,
    Earshot,
    Energy,
}

impl VadSetting {
    fn parse(raw: String) -> Result<Self, ConfigError> {
        match raw.trim().to_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "silero" => Ok(Self::Silero),
            "earshot" => Ok(Self::Earshot),
            "energy" => Ok(Self::Energy),
            _ => Err(ConfigError::Invalid { name: "ARTHUR_VAD", value: raw, expected: "silero, earshot or energy" }),
        }
    }
}

/// Arthur's model directory for this environment (see [`Voice::model_dir`]).
pub fn model_dir_in(env: &dyn Env) -> Option<PathBuf> {
    if let Some(dir) = env.var("ARTHUR_MODEL_DIR") {
        return Some(PathBuf::from(dir));
    }
    let data = env
        .var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env.var("HOME").map(|home| PathBuf::from(home).join(".local/share")))?;
    Some(data.join("arthur").join("models"))
}

/// ONNX Runtime for this process's environment (see [`Voice::onnxruntime`]).
pub fn default_onnxruntime() -> Option<PathBuf> {
    ProcessEnv
        .var("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .or_else(|| default_model_dir().as_deref().and_then(arthur_audio::piper::onnxruntime_in))
}

/// The model directory of this process's environment (tests and benches use it to find the
/// models `models/fetch` installed).
pub fn default_model_dir() -> Option<PathBuf> {
    model_dir_in(&ProcessEnv)
}

#[derive(Debug, Clone)]
pub struct Settings {
    pub data_dir: PathBuf,
    pub database_url: String,
    pub timezone: Tz,
    pub preferences_cap: u32,
    pub web_addr: String,
    /// Required to bind the web server off loopback; then every request must carry it.
    pub web_token: Option<Secret>,
    /// Read-only demonstration mode (`ARTHUR_DEMO=1`): no writes, no background tasks.
    pub demo: bool,
    /// A command the grammar is sure of runs with no model call (`ARTHUR_LOCAL_FIRST`,
    /// `[understanding] local_first`; on by default).
    pub local_first: bool,
    pub providers: Providers,
    pub models: Models,
    pub voice: Voice,
    /// Atlas' own settings (the crate's type), read here with the rest.
    pub atlas: AtlasSettings,
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// Where each setting came from, by its environment variable (`arthur doctor`).
    pub origins: Vec<(&'static str, Origin)>,
}

/// Where a setting's value came from: each setting is read in one place, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Its environment variable.
    Environment,
    /// The configuration file.
    File,
    /// The built-in default (or the value derived from others).
    Default,
}

impl Settings {
    /// Where the setting named by `var` came from (`Default` for a name it does not know).
    pub fn origin(&self, var: &str) -> Origin {
        self.origins.iter().find(|(v, _)| *v == var).map(|(_, o)| *o).unwrap_or(Origin::Default)
    }

    /// The settings that did not come from the defaults, by origin.
    pub fn set_from(&self, origin: Origin) -> Vec<&'static str> {
        self.origins.iter().filter(|(_, o)| *o == origin).map(|(v, _)| *v).collect()
    }
}

// ---- the file, as written by the user (every field optional) ----

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    data_dir: Option<PathBuf>,
    database_url: Option<String>,
    timezone: Option<String>,
    demo: Option<bool>,
    #[serde(default)]
    memory: FileMemory,
    #[serde(default)]
    understanding: FileUnderstanding,
    #[serde(default)]
    web: FileWeb,
    #[serde(default)]
    providers: FileProviders,
    #[serde(default)]
    models: FileModels,
    #[serde(default)]
    voice: FileVoice,
    #[serde(default)]
    atlas: FileAtlas,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileMemory {
    preferences_cap: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileUnderstanding {
    local_first: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWeb {
    addr: Option<String>,
    token: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileProvider {
    api_key: Option<String>,
    base_url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileProviders {
    #[serde(default)]
    mistral: FileProvider,
    #[serde(default)]
    anthropic: FileProvider,
    #[serde(default)]
    openai: FileProvider,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileModels {
    router: Option<String>,
    chat: Option<String>,
    embed: Option<String>,
    atlas_classifier: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileVoice {
    stt_lang: Option<String>,
    whisper_model: Option<PathBuf>,
    piper_voice: Option<PathBuf>,
    input_device: Option<String>,
    barge_in: Option<bool>,
    model_dir: Option<PathBuf>,
    onnxruntime: Option<PathBuf>,
    vad: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAtlas {
    imap_url: Option<String>,
    smtp_url: Option<String>,
    founder_email: Option<String>,
    mailbox_email: Option<String>,
    repo: Option<PathBuf>,
    claude_bin: Option<String>,
    deploy_cmd: Option<String>,
    qa_cmd: Option<String>,
    disabled: Option<bool>,
    idle_timeout_s: Option<u64>,
    hard_timeout_s: Option<u64>,
    budget_s: Option<u64>,
    clamd_addr: Option<String>,
    clamscan_db: Option<PathBuf>,
    dkim_keys: Option<PathBuf>,
    base_branch: Option<String>,
    permission_mode: Option<String>,
    claude_model: Option<String>,
    allowed_tools: Option<String>,
    strict_mcp: Option<bool>,
    founder_signature: Option<String>,
    trust_unsigned_founder: Option<bool>,
    child_env: Option<Vec<String>>,
    max_retries: Option<u32>,
    worktree: Option<bool>,
    sandboxed: Option<bool>,
    api_retries: Option<u32>,
}

/// Reads environment variables; an empty value counts as unset.
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }
}

impl<F: Fn(&str) -> Option<String>> Env for F {
    fn var(&self, name: &str) -> Option<String> {
        self(name).filter(|v| !v.trim().is_empty())
    }
}

fn parse_num<T: std::str::FromStr>(name: &'static str, raw: String) -> Result<T, ConfigError> {
    raw.trim().parse().map_err(|_| ConfigError::Invalid { name, value: raw, expected: "a whole number" })
}

fn parse_bool(name: &'static str, raw: String) -> Result<bool, ConfigError> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::Invalid { name, value: raw, expected: "1/0, true/false" }),
    }
}

fn default_data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "arthur").map(|d| d.data_dir().to_path_buf())
}

/// The service's environment file (systemd's `EnvironmentFile`): it may hold API keys.
pub const ENV_FILE: &str = "/etc/arthur/arthur.env";

pub fn default_config_file() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "arthur").map(|d| d.config_dir().join("arthur.toml"))
}

impl Settings {
    /// Settings of this process: defaults → config file → environment.
    pub fn load() -> Result<Self, ConfigError> {
        Self::load_from(&ProcessEnv)
    }

    /// Loads with an explicit environment (tests). `ARTHUR_CONFIG` names the file; it must
    /// exist when named. Otherwise the XDG config file is read if present.
    pub fn load_from(env: &dyn Env) -> Result<Self, ConfigError> {
        let (file, config_file) = match env.var("ARTHUR_CONFIG").map(PathBuf::from) {
            Some(path) => (read_file(&path)?, Some(path)),
            None => match default_config_file().filter(|p| p.is_file()) {
                Some(path) => (read_file(&path)?, Some(path)),
                None => (FileSettings::default(), None),
            },
        };
        Self::merge(file, env, config_file)
    }

    fn merge(file: FileSettings, env: &dyn Env, config_file: Option<PathBuf>) -> Result<Self, ConfigError> {
        let origins = origins(&file, env);
        let data_dir = env
            .var("ARTHUR_DATA_DIR")
            .map(PathBuf::from)
            .or(file.data_dir)
            .or_else(default_data_dir)
            .ok_or(ConfigError::NoDataDir)?;
        let database_url = env
            .var("ARTHUR_DATABASE_URL")
            .or(file.database_url)
            .unwrap_or_else(|| format!("sqlite://{}", data_dir.join("arthur.db").display()));
        let tz_name = env.var("ARTHUR_TIMEZONE").or(file.timezone).unwrap_or_else(|| DEFAULT_TIMEZONE.to_string());
        let timezone: Tz = tz_name.parse().map_err(|_| ConfigError::TimeZone(tz_name.clone()))?;
        let preferences_cap = match env.var("ARTHUR_PREFERENCES_CAP") {
            Some(raw) => parse_num("ARTHUR_PREFERENCES_CAP", raw)?,
            None => file.memory.preferences_cap.unwrap_or(DEFAULT_PREFERENCES_CAP),
        };
        if preferences_cap == 0 {
            return Err(ConfigError::Invalid { name: "preferences_cap", value: "0".into(), expected: "at least 1" });
        }

        let provider = |key_var: &str, url_var: &str, f: FileProvider, default_url: &str| {
            let key = env.var(key_var).or(f.api_key.filter(|k| !k.trim().is_empty()))?;
            let base_url = env.var(url_var).or(f.base_url).unwrap_or_else(|| default_url.to_string());
            Some(Provider { api_key: Secret::new(key), base_url: base_url.trim_end_matches('/').to_string() })
        };
        let fp = file.providers;
        let providers = Providers {
            mistral: provider("MISTRAL_API_KEY", "MISTRAL_BASE_URL", fp.mistral, DEFAULT_MISTRAL_BASE_URL),
            anthropic: provider("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", fp.anthropic, DEFAULT_ANTHROPIC_BASE_URL),
            openai: provider("OPENAI_API_KEY", "OPENAI_BASE_URL", fp.openai, DEFAULT_OPENAI_BASE_URL),
        };
        let fm = file.models;
        let models = Models {
            router: env.var("ARTHUR_ROUTER_MODEL").or(fm.router).unwrap_or_else(|| DEFAULT_ROUTER_MODEL.into()),
            chat: env.var("ARTHUR_CHAT_MODEL").or(fm.chat).unwrap_or_else(|| DEFAULT_CHAT_MODEL.into()),
            embed: env.var("ARTHUR_EMBED_MODEL").or(fm.embed).unwrap_or_else(|| DEFAULT_EMBED_MODEL.into()),
            atlas_classifier: env
                .var("ATLAS_CLASSIFIER_MODEL")
                .or(fm.atlas_classifier)
                .unwrap_or_else(|| DEFAULT_CLASSIFIER_MODEL.into()),
        };
        let fv = file.voice;
        let model_dir =
            fv.model_dir.clone().filter(|_| env.var("ARTHUR_MODEL_DIR").is_none()).or_else(|| model_dir_in(env));
        let onnxruntime = env
            .var("ORT_DYLIB_PATH")
            .map(PathBuf::from)
            .or(fv.onnxruntime.clone())
            .or_else(|| model_dir.as_deref().and_then(arthur_audio::piper::onnxruntime_in));
        let voice = Voice {
            stt_lang: env.var("ARTHUR_STT_LANG").or(fv.stt_lang).unwrap_or_else(|| "fr".into()),
            whisper_model: env.var("ARTHUR_WHISPER_MODEL").map(PathBuf::from).or(fv.whisper_model),
            piper_voice: env.var("ARTHUR_PIPER_VOICE").map(PathBuf::from).or(fv.piper_voice),
            input_device: env.var("ARTHUR_AUDIO_INPUT").or(fv.input_device),
            barge_in: match env.var("ARTHUR_BARGE_IN") {
                Some(raw) => parse_bool("ARTHUR_BARGE_IN", raw)?,
                None => fv.barge_in.unwrap_or(true),
            },
            model_dir,
            onnxruntime,
            vad: match env.var("ARTHUR_VAD").or(fv.vad) {
                Some(raw) => VadSetting::parse(raw)?,
                None => VadSetting::Auto,
            },
        };
        let fa = file.atlas;
        let num = |name: &'static str, file_value: Option<u64>, default: u64| -> Result<u64, ConfigError> {
            match env.var(name) {
                Some(raw) => parse_num(name, raw),
                None => Ok(file_value.unwrap_or(default)),
            }
        };
        let atlas = AtlasSettings {
            imap_url: env.var("ATLAS_IMAP_URL").or(fa.imap_url).map(Secret::new),
            smtp_url: env.var("ATLAS_SMTP_URL").or(fa.smtp_url).map(Secret::new),
            founder_email: env.var("ATLAS_FOUNDER_EMAIL").or(fa.founder_email),
            mailbox_email: env.var("ATLAS_MAILBOX_EMAIL").or(fa.mailbox_email),
            repo: env.var("ATLAS_REPO").map(PathBuf::from).or(fa.repo),
            claude_bin: env.var("ATLAS_CLAUDE_BIN").or(fa.claude_bin).unwrap_or_else(|| "claude".into()),
            deploy_cmd: env.var("ATLAS_DEPLOY_CMD").or(fa.deploy_cmd),
            qa_cmd: env.var("ATLAS_QA_CMD").or(fa.qa_cmd),
            disabled: match env.var("ATLAS_DISABLED") {
                Some(raw) => parse_bool("ATLAS_DISABLED", raw)?,
                None => fa.disabled.unwrap_or(false),
            },
            idle_timeout_s: num("ATLAS_IDLE_TIMEOUT_S", fa.idle_timeout_s, 1200)?,
            hard_timeout_s: num("ATLAS_HARD_TIMEOUT_S", fa.hard_timeout_s, 6600)?,
            budget_s: num("ATLAS_BUDGET_S", fa.budget_s, 2400)?,
            clamd_addr: env.var("ATLAS_CLAMD_ADDR").or(fa.clamd_addr),
            clamscan_db: env.var("ATLAS_CLAMSCAN_DB").map(PathBuf::from).or(fa.clamscan_db),
            dkim_keys: env.var("ATLAS_DKIM_KEYS").map(PathBuf::from).or(fa.dkim_keys),
            base_branch: env.var("ATLAS_BASE_BRANCH").or(fa.base_branch),
            permission_mode: env
                .var("ATLAS_PERMISSION_MODE")
                .or(fa.permission_mode)
                .unwrap_or_else(|| "bypassPermissions".into()),
            claude_model: env.var("ATLAS_CLAUDE_MODEL").or(fa.claude_model),
            allowed_tools: env.var("ATLAS_ALLOWED_TOOLS").or(fa.allowed_tools),
            founder_signature: env.var("ATLAS_FOUNDER_SIGNATURE").or(fa.founder_signature),
            strict_mcp: match env.var("ATLAS_STRICT_MCP") {
                Some(raw) => parse_bool("ATLAS_STRICT_MCP", raw)?,
                None => fa.strict_mcp.unwrap_or(true),
            },
            trust_unsigned_founder: match env.var("ATLAS_TRUST_UNSIGNED_FOUNDER") {
                Some(raw) => parse_bool("ATLAS_TRUST_UNSIGNED_FOUNDER", raw)?,
                None => fa.trust_unsigned_founder.unwrap_or(false),
            },
            child_env: match env.var("ATLAS_CHILD_ENV") {
                Some(raw) => ChildEnv::parse(&raw).map_err(|e| ConfigError::Invalid {
                    name: "ATLAS_CHILD_ENV",
                    value: e.0,
                    expected: "environment variable names separated by commas",
                })?,
                None => ChildEnv::from_names(&fa.child_env.clone().unwrap_or_default()).map_err(|e| {
                    ConfigError::Invalid {
                        name: "atlas.child_env",
                        value: e.0,
                        expected: "a list of environment variable names",
                    }
                })?,
            },
            max_retries: match env.var("ATLAS_MAX_RETRIES") {
                Some(raw) => parse_num("ATLAS_MAX_RETRIES", raw)?,
                None => fa.max_retries.unwrap_or(2),
            },
            worktree: match env.var("ATLAS_WORKTREE") {
                Some(raw) => parse_bool("ATLAS_WORKTREE", raw)?,
                None => fa.worktree.unwrap_or(true),
            },
            sandboxed: match env.var("ATLAS_SANDBOXED") {
                Some(raw) => parse_bool("ATLAS_SANDBOXED", raw)?,
                None => fa.sandboxed.unwrap_or(false),
            },
            api_retries: match env.var("ATLAS_API_RETRIES") {
                Some(raw) => parse_num("ATLAS_API_RETRIES", raw)?,
                None => fa.api_retries.unwrap_or(arthur_atlas::machine::DEFAULT_MAX_SETBACKS),
            },
        };
        Ok(Settings {
            data_dir,
            database_url,
            timezone,
            preferences_cap,
            web_addr: env.var("ARTHUR_WEB_ADDR").or(file.web.addr).unwrap_or_else(|| DEFAULT_WEB_ADDR.into()),
            web_token: env.var("ARTHUR_WEB_TOKEN").or(file.web.token).filter(|t| !t.trim().is_empty()).map(Secret::new),
            demo: match env.var("ARTHUR_DEMO") {
                Some(raw) => parse_bool("ARTHUR_DEMO", raw)?,
                None => file.demo.unwrap_or(false),
            },
            local_first: match env.var("ARTHUR_LOCAL_FIRST") {
                Some(raw) => parse_bool("ARTHUR_LOCAL_FIRST", raw)?,
                None => file.understanding.local_first.unwrap_or(true),
            },
            providers,
            models,
            voice,
            atlas,
            config_file,
            origins,
        })
    }
}

/// Each setting by its environment variable, and whether the file set it: the one list of
/// what `merge` reads, so that `arthur doctor` can say where each value came from.
fn origins(file: &FileSettings, env: &dyn Env) -> Vec<(&'static str, Origin)> {
    let (fp, fm, fv, fa) = (&file.providers, &file.models, &file.voice, &file.atlas);
    let keys = |p: &FileProvider| p.api_key.as_deref().is_some_and(|k| !k.trim().is_empty());
    let table: [(&'static str, bool); 55] = [
        ("ARTHUR_DATA_DIR", file.data_dir.is_some()),
        ("ARTHUR_DATABASE_URL", file.database_url.is_some()),
        ("ARTHUR_TIMEZONE", file.timezone.is_some()),
        ("ARTHUR_PREFERENCES_CAP", file.memory.preferences_cap.is_some()),
        ("ARTHUR_WEB_ADDR", file.web.addr.is_some()),
        ("ARTHUR_WEB_TOKEN", file.web.token.is_some()),
        ("ARTHUR_DEMO", file.demo.is_some()),
        ("ARTHUR_LOCAL_FIRST", file.understanding.local_first.is_some()),
        ("MISTRAL_API_KEY", keys(&fp.mistral)),
        ("MISTRAL_BASE_URL", fp.mistral.base_url.is_some()),
        ("ANTHROPIC_API_KEY", keys(&fp.anthropic)),
        ("ANTHROPIC_BASE_URL", fp.anthropic.base_url.is_some()),
        ("OPENAI_API_KEY", keys(&fp.openai)),
        ("OPENAI_BASE_URL", fp.openai.base_url.is_some()),
        ("ARTHUR_ROUTER_MODEL", fm.router.is_some()),
        ("ARTHUR_CHAT_MODEL", fm.chat.is_some()),
        ("ARTHUR_EMBED_MODEL", fm.embed.is_some()),
        ("ATLAS_CLASSIFIER_MODEL", fm.atlas_classifier.is_some()),
        ("ARTHUR_STT_LANG", fv.stt_lang.is_some()),
        ("ARTHUR_WHISPER_MODEL", fv.whisper_model.is_some()),
        ("ARTHUR_PIPER_VOICE", fv.piper_voice.is_some()),
        ("ARTHUR_AUDIO_INPUT", fv.input_device.is_some()),
        ("ARTHUR_BARGE_IN", fv.barge_in.is_some()),
        ("ARTHUR_MODEL_DIR", fv.model_dir.is_some()),
        ("ORT_DYLIB_PATH", fv.onnxruntime.is_some()),
        ("ARTHUR_VAD", fv.vad.is_some()),
        ("ATLAS_IMAP_URL", fa.imap_url.is_some()),
        ("ATLAS_SMTP_URL", fa.smtp_url.is_some()),
        ("ATLAS_FOUNDER_EMAIL", fa.founder_email.is_some()),
        ("ATLAS_MAILBOX_EMAIL", fa.mailbox_email.is_some()),
        ("ATLAS_REPO", fa.repo.is_some()),
        ("ATLAS_CLAUDE_BIN", fa.claude_bin.is_some()),
        ("ATLAS_DEPLOY_CMD", fa.deploy_cmd.is_some()),
        ("ATLAS_QA_CMD", fa.qa_cmd.is_some()),
        ("ATLAS_DISABLED", fa.disabled.is_some()),
        ("ATLAS_IDLE_TIMEOUT_S", fa.idle_timeout_s.is_some()),
        ("ATLAS_HARD_TIMEOUT_S", fa.hard_timeout_s.is_some()),
        ("ATLAS_BUDGET_S", fa.budget_s.is_some()),
        ("ATLAS_CLAMD_ADDR", fa.clamd_addr.is_some()),
        ("ATLAS_CLAMSCAN_DB", fa.clamscan_db.is_some()),
        ("ATLAS_DKIM_KEYS", fa.dkim_keys.is_some()),
        ("ATLAS_BASE_BRANCH", fa.base_branch.is_some()),
        ("ATLAS_PERMISSION_MODE", fa.permission_mode.is_some()),
        ("ATLAS_CLAUDE_MODEL", fa.claude_model.is_some()),
        ("ATLAS_ALLOWED_TOOLS", fa.allowed_tools.is_some()),
        ("ATLAS_FOUNDER_SIGNATURE", fa.founder_signature.is_some()),
        ("ATLAS_STRICT_MCP", fa.strict_mcp.is_some()),
        ("ATLAS_TRUST_UNSIGNED_FOUNDER", fa.trust_unsigned_founder.is_some()),
        ("ATLAS_CHILD_ENV", fa.child_env.is_some()),
        ("ATLAS_MAX_RETRIES", fa.max_retries.is_some()),
        ("ATLAS_WORKTREE", fa.worktree.is_some()),
        ("ATLAS_SANDBOXED", fa.sandboxed.is_some()),
        ("ATLAS_API_RETRIES", fa.api_retries.is_some()),
        ("XDG_DATA_HOME", false),
        ("ARTHUR_CONFIG", false),
    ];
    table
        .into_iter()
        .map(|(var, in_file)| {
            let origin = if env.var(var).is_some() {
                Origin::Environment
            } else if in_file {
                Origin::File
            } else {
                Origin::Default
            };
            (var, origin)
        })
        .collect()
}

fn read_file(path: &Path) -> Result<FileSettings, ConfigError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
    toml::from_str(&text).map_err(|source| ConfigError::Parse { path: path.to_path_buf(), source: Box::new(source) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k: &str| map.get(k).cloned()
    }

    #[test]
    fn defaults_apply_with_no_file_and_no_env() {
        let s = Settings::merge(FileSettings::default(), &env(&[("ARTHUR_DATA_DIR", "/d")]), None).unwrap();
        assert_eq!(s.database_url, "sqlite:///d/arthur.db");
        assert_eq!(s.timezone, chrono_tz::Europe::Paris);
        assert_eq!(s.web_addr, "127.0.0.1:8737");
        assert_eq!(s.models.router, "mistral-small-latest");
        assert_eq!(s.models.chat, "mistral-large-latest");
        assert_eq!(s.models.embed, "mistral-embed");
        assert!(s.providers.mistral.is_none(), "a missing key skips the provider");
        assert_eq!(s.atlas.idle_timeout_s, 1200);
        assert_eq!(s.atlas.hard_timeout_s, 6600);
        assert_eq!(s.atlas.budget_s, 2400);
        assert_eq!(s.preferences_cap, DEFAULT_PREFERENCES_CAP);
    }

    #[test]
    fn the_speech_paths_are_resolved_here_environment_then_file_then_xdg() {
        let models = tempfile::tempdir().unwrap();
        std::fs::write(models.path().join(arthur_audio::piper::ONNXRUNTIME_FILE), b"").unwrap();
        let dir = models.path().to_str().unwrap();
        // Defaults: the XDG data home, else HOME; ONNX Runtime only if it is in the model dir.
        let s =
            Settings::merge(FileSettings::default(), &env(&[("ARTHUR_DATA_DIR", "/d"), ("HOME", "/h")]), None).unwrap();
        assert_eq!(s.voice.model_dir, Some(PathBuf::from("/h/.local/share/arthur/models")));
        assert_eq!(s.voice.onnxruntime, None, "nothing installed there");
        assert_eq!(s.voice.vad, VadSetting::Auto);
        let xdg = env(&[("ARTHUR_DATA_DIR", "/d"), ("HOME", "/h"), ("XDG_DATA_HOME", "/x"), ("ARTHUR_VAD", "Energy")]);
        let s = Settings::merge(FileSettings::default(), &xdg, None).unwrap();
        assert_eq!(s.voice.model_dir, Some(PathBuf::from("/x/arthur/models")));
        assert_eq!(s.voice.vad, VadSetting::Energy);
        // The file names the model dir; ONNX Runtime is found in it; the environment wins.
        let file: FileSettings = toml::from_str(&format!("[voice]\nmodel_dir = \"{dir}\"\nvad = \"earshot\"")).unwrap();
        let s = Settings::merge(file, &env(&[("ARTHUR_DATA_DIR", "/d"), ("HOME", "/h")]), None).unwrap();
        assert_eq!(s.voice.model_dir.as_deref(), Some(models.path()));
        assert_eq!(s.voice.onnxruntime, Some(models.path().join(arthur_audio::piper::ONNXRUNTIME_FILE)));
        assert_eq!(s.voice.vad, VadSetting::Earshot);
        let file: FileSettings = toml::from_str(&format!("[voice]\nmodel_dir = \"{dir}\"")).unwrap();
        let over = env(&[("ARTHUR_DATA_DIR", "/d"), ("ARTHUR_MODEL_DIR", "/m"), ("ORT_DYLIB_PATH", "/o/libort.so")]);
        let s = Settings::merge(file, &over, None).unwrap();
        assert_eq!(s.voice.model_dir, Some(PathBuf::from("/m")));
        assert_eq!(s.voice.onnxruntime, Some(PathBuf::from("/o/libort.so")));
        // A detector that does not exist is said, not guessed.
        let bad = env(&[("ARTHUR_DATA_DIR", "/d"), ("ARTHUR_VAD", "webrtc")]);
        let err = Settings::merge(FileSettings::default(), &bad, None).unwrap_err();
        assert!(err.to_string().contains("ARTHUR_VAD"), "{err}");
    }

    #[test]
    fn each_setting_says_where_it_came_from() {
        let file: FileSettings = toml::from_str(
            "timezone = \"America/Montreal\"\n[web]\naddr = \"127.0.0.1:9000\"\n[atlas]\nmax_retries = 3",
        )
        .unwrap();
        let s = Settings::merge(
            file,
            &env(&[("ARTHUR_DATA_DIR", "/d"), ("ARTHUR_WEB_ADDR", "127.0.0.1:9100"), ("MISTRAL_API_KEY", "k")]),
            None,
        )
        .unwrap();
        assert_eq!(s.origin("ARTHUR_TIMEZONE"), Origin::File);
        assert_eq!(s.origin("ARTHUR_WEB_ADDR"), Origin::Environment, "the environment wins over the file");
        assert_eq!(s.web_addr, "127.0.0.1:9100");
        assert_eq!(s.origin("ATLAS_MAX_RETRIES"), Origin::File);
        assert_eq!(s.origin("ARTHUR_BARGE_IN"), Origin::Default);
        assert_eq!(s.set_from(Origin::Environment), ["ARTHUR_DATA_DIR", "ARTHUR_WEB_ADDR", "MISTRAL_API_KEY"]);
        assert_eq!(s.set_from(Origin::File), ["ARTHUR_TIMEZONE", "ATLAS_MAX_RETRIES"]);
        // Every variable the origins list names is one `merge` reads: none is invented.
        let source = include_str!("config.rs");
        let code = &source[..source.find("#[cfg(test)]").unwrap()];
        for (var, _) in &s.origins {
            // Once in the origins' table, at least once where it is read.
            let named = code.matches(&format!("\"{var}\"")).count();
            assert!(named >= 2, "{var} is read by the settings (named {named} times)");
        }
    }

    #[test]
    fn environment_overrides_the_file() {
        let file: FileSettings = toml::from_str(
            r#"
            timezone = "America/Montreal"
            [memory]
            preferences_cap = 7
            [providers.mistral]
            api_key = "from-file"
            base_url = "http://file"
            "#,
        )
        .unwrap();
        let s = Settings::merge(
            file,
            &env(&[("ARTHUR_DATA_DIR", "/d"), ("MISTRAL_BASE_URL", "http://127.0.0.1:9/"), ("ARTHUR_TIMEZONE", "UTC")]),
            None,
        )
        .unwrap();
        let m = s.providers.mistral.unwrap();
        assert_eq!(m.api_key.expose(), "from-file");
        assert_eq!(m.base_url, "http://127.0.0.1:9");
        assert_eq!(s.timezone, chrono_tz::UTC);
        assert_eq!(s.preferences_cap, 7);
    }

    #[test]
    fn bad_values_are_clear_errors() {
        let e = Settings::merge(
            FileSettings::default(),
            &env(&[("ARTHUR_DATA_DIR", "/d"), ("ARTHUR_TIMEZONE", "Mars/Olympus")]),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("Mars/Olympus"));
        let e = Settings::merge(
            FileSettings::default(),
            &env(&[("ARTHUR_DATA_DIR", "/d"), ("ATLAS_BUDGET_S", "lots")]),
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("ATLAS_BUDGET_S"));
        assert!(toml::from_str::<FileSettings>("typo_key = 1").is_err(), "unknown keys are refused");
    }

    #[test]
    fn debug_never_prints_secrets() {
        let s = Settings::merge(
            FileSettings::default(),
            &env(&[
                ("ARTHUR_DATA_DIR", "/d"),
                ("MISTRAL_API_KEY", "sk-live-123"),
                ("ATLAS_IMAP_URL", "imap://u:hunter2@h/INBOX"),
            ]),
            None,
        )
        .unwrap();
        let printed = format!("{s:?}");
        assert!(!printed.contains("sk-live-123"));
        assert!(!printed.contains("hunter2"));
    }

    #[test]
    fn empty_env_values_count_as_unset() {
        let s = Settings::merge(
            FileSettings::default(),
            &env(&[("ARTHUR_DATA_DIR", "/d"), ("MISTRAL_API_KEY", "  ")]),
            None,
        )
        .unwrap();
        assert!(s.providers.mistral.is_none());
    }
}
