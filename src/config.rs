//! Typed settings: built-in defaults, then `arthur.toml`, then the environment (the names of
//! docs/interface.md §2). Each setting is declared once, in one table ([`SETTINGS`]): its
//! variable, its file key, its type and default; the file's shape, the reading and where each
//! value came from are derived from it. Secrets are wrapped so that printing the settings
//! never prints a key.

use std::path::{Path, PathBuf};

use arthur_agents::secret::Secret;
use arthur_agents::tools::DEFAULT_PREFERENCES_CAP;
use arthur_atlas::child_env::ChildEnv;
use arthur_atlas::settings::AtlasSettings;
use chrono_tz::Tz;

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
    #[error("invalid config file {path}: unknown key {key:?}")]
    UnknownKey { path: PathBuf, key: String },
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

/// The widest beam `ARTHUR_STT_BEAM` accepts (whisper.cpp keeps at most 8 decoders).
pub const MAX_STT_BEAM: u32 = 8;

/// Greedy decoding by default, on the figures (`cargo bench --bench voice` and `cargo bench
/// -p arthur-audio --bench stt`, issue 29's note). Beam search 5 with favoured words heard
/// 28 French commands of 48 in silence against 26, 18 English of 20 against 16, French free
/// speech 29.8 % word errors against 34.0 %, for 0.02 more of a core under babble. But it
/// costs +0.17 s per turn, and its STT time is 0.70× faster-whisper int8 at the same beam,
/// over the 0.6× goal (greedy: 0.54×). `ARTHUR_STT_BEAM=5` chooses it.
pub const DEFAULT_STT_BEAM: u32 = 1;

#[derive(Debug, Clone)]
pub struct Voice {
    pub stt_lang: String,
    /// Whisper's decoding for the conversation (`ARTHUR_STT_BEAM`, [`DEFAULT_STT_BEAM`]):
    /// 1 is greedy, more is a beam search of that width.
    pub stt_beam: u32,
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

/// Home Assistant's voice protocol (`[wyoming]`): Arthur's server and the satellites it hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wyoming {
    /// Where the Wyoming server listens (`ARTHUR_WYOMING_ADDR`); `None`: off (the default).
    /// A bare port is on loopback; another interface must be named. The protocol has no
    /// authentication: whoever reaches this port can make Arthur speak and give him commands.
    pub addr: Option<String>,
    /// The satellites Arthur connects to (`ARTHUR_WYOMING_SATELLITES`), as `host:port`.
    pub satellites: Vec<String>,
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
    fn parse(name: &'static str, raw: String) -> Result<Self, ConfigError> {
        match raw.trim().to_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "silero" => Ok(Self::Silero),
            "earshot" => Ok(Self::Earshot),
            "energy" => Ok(Self::Energy),
            _ => Err(ConfigError::Invalid { name, value: raw, expected: "silero, earshot or energy" }),
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
    pub wyoming: Wyoming,
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

// ---- the table: every setting declared once ----

/// One setting as the table declares it (its variable, its `arthur.toml` key, whether it
/// is secret): what `arthur doctor` and the tests know of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingInfo {
    /// Its environment variable (docs/interface.md §2).
    pub env: &'static str,
    /// Its key in `arthur.toml`, dotted (`atlas.budget_s` is `[atlas] budget_s`).
    pub file_key: Option<&'static str>,
    /// Never printed: it is held in a [`Secret`].
    pub secret: bool,
}

/// Declares the settings: one line each, `field: Type = "VARIABLE", file "key", default
/// value;` (no `default`: the value is optional), then the variables read elsewhere. Gives
/// [`SETTINGS`], the resolved `Values` and their reading, environment over file over
/// default, with where each came from.
macro_rules! settings {
    (@key) => { None };
    (@key $key:literal) => { Some($key) };
    (@ty $ty:ty) => { Option<$ty> };
    (@ty $ty:ty, $default:expr) => { $ty };
    (@value $v:ident) => { $v };
    (@value $v:ident, $default:expr) => { $v.unwrap_or_else(|| IntoSetting::into_setting($default)) };
    ($(
        $(#[doc = $doc:literal])*
        $field:ident: $ty:ty = $env:literal $(, file $key:literal)? $(, default $default:expr)?;
    )*
    @elsewhere $($other:literal),*;
    ) => {
        /// Every setting, in the table's order.
        pub const SETTINGS: &[SettingInfo] = &[$(SettingInfo {
            env: $env,
            file_key: settings!(@key $($key)?),
            secret: <$ty as SettingValue>::SECRET,
        },)* $(SettingInfo { env: $other, file_key: None, secret: false }),*];

        /// Every setting's value: environment, else file, else default.
        struct Values {
            $($(#[doc = $doc])* $field: settings!(@ty $ty $(, $default)?),)*
        }

        impl Values {
            fn read(file: &FileSettings, env: &dyn Env) -> Result<(Self, Vec<(&'static str, Origin)>), ConfigError> {
                let mut origins = Vec::new();
                $(
                    let ($field, origin) = read_setting::<$ty>($env, settings!(@key $($key)?), file, env)?;
                    origins.push(($env, origin));
                    let $field = settings!(@value $field $(, $default)?);
                )*
                $(origins.push(($other, if env.var($other).is_some() { Origin::Environment } else { Origin::Default }));)*
                Ok((Self { $($field),* }, origins))
            }
        }
    };
}

settings! {
    // Arthur
    data_dir: PathBuf = "ARTHUR_DATA_DIR", file "data_dir";
    database_url: String = "ARTHUR_DATABASE_URL", file "database_url";
    timezone: Tz = "ARTHUR_TIMEZONE", file "timezone", default DEFAULT_TIMEZONE;
    /// At least 1.
    preferences_cap: u32 = "ARTHUR_PREFERENCES_CAP", file "memory.preferences_cap", default DEFAULT_PREFERENCES_CAP;
    web_addr: String = "ARTHUR_WEB_ADDR", file "web.addr", default DEFAULT_WEB_ADDR;
    web_token: Secret = "ARTHUR_WEB_TOKEN", file "web.token";
    demo: bool = "ARTHUR_DEMO", file "demo", default false;
    local_first: bool = "ARTHUR_LOCAL_FIRST", file "understanding.local_first", default true;
    // Providers and models
    mistral_api_key: Secret = "MISTRAL_API_KEY", file "providers.mistral.api_key";
    mistral_base_url: String = "MISTRAL_BASE_URL", file "providers.mistral.base_url", default DEFAULT_MISTRAL_BASE_URL;
    anthropic_api_key: Secret = "ANTHROPIC_API_KEY", file "providers.anthropic.api_key";
    anthropic_base_url: String = "ANTHROPIC_BASE_URL", file "providers.anthropic.base_url",
        default DEFAULT_ANTHROPIC_BASE_URL;
    openai_api_key: Secret = "OPENAI_API_KEY", file "providers.openai.api_key";
    openai_base_url: String = "OPENAI_BASE_URL", file "providers.openai.base_url", default DEFAULT_OPENAI_BASE_URL;
    router_model: String = "ARTHUR_ROUTER_MODEL", file "models.router", default DEFAULT_ROUTER_MODEL;
    chat_model: String = "ARTHUR_CHAT_MODEL", file "models.chat", default DEFAULT_CHAT_MODEL;
    embed_model: String = "ARTHUR_EMBED_MODEL", file "models.embed", default DEFAULT_EMBED_MODEL;
    classifier_model: String = "ATLAS_CLASSIFIER_MODEL", file "models.atlas_classifier",
        default DEFAULT_CLASSIFIER_MODEL;
    // Voice
    stt_lang: String = "ARTHUR_STT_LANG", file "voice.stt_lang", default "fr";
    stt_beam: u32 = "ARTHUR_STT_BEAM", file "voice.stt_beam", default DEFAULT_STT_BEAM;
    whisper_model: PathBuf = "ARTHUR_WHISPER_MODEL", file "voice.whisper_model";
    piper_voice: PathBuf = "ARTHUR_PIPER_VOICE", file "voice.piper_voice";
    input_device: String = "ARTHUR_AUDIO_INPUT", file "voice.input_device";
    barge_in: bool = "ARTHUR_BARGE_IN", file "voice.barge_in", default true;
    /// Else the XDG data home's (see [`model_dir_in`]).
    model_dir: PathBuf = "ARTHUR_MODEL_DIR", file "voice.model_dir";
    /// Else the one in the model directory.
    onnxruntime: PathBuf = "ORT_DYLIB_PATH", file "voice.onnxruntime";
    vad: VadSetting = "ARTHUR_VAD", file "voice.vad", default VadSetting::Auto;
    // Atlas
    imap_url: Secret = "ATLAS_IMAP_URL", file "atlas.imap_url";
    smtp_url: Secret = "ATLAS_SMTP_URL", file "atlas.smtp_url";
    founder_email: String = "ATLAS_FOUNDER_EMAIL", file "atlas.founder_email";
    mailbox_email: String = "ATLAS_MAILBOX_EMAIL", file "atlas.mailbox_email";
    repo: PathBuf = "ATLAS_REPO", file "atlas.repo";
    claude_bin: String = "ATLAS_CLAUDE_BIN", file "atlas.claude_bin", default "claude";
    deploy_cmd: String = "ATLAS_DEPLOY_CMD", file "atlas.deploy_cmd";
    qa_cmd: String = "ATLAS_QA_CMD", file "atlas.qa_cmd";
    disabled: bool = "ATLAS_DISABLED", file "atlas.disabled", default false;
    idle_timeout_s: u64 = "ATLAS_IDLE_TIMEOUT_S", file "atlas.idle_timeout_s", default 1200;
    hard_timeout_s: u64 = "ATLAS_HARD_TIMEOUT_S", file "atlas.hard_timeout_s", default 6600;
    budget_s: u64 = "ATLAS_BUDGET_S", file "atlas.budget_s", default 2400;
    clamd_addr: String = "ATLAS_CLAMD_ADDR", file "atlas.clamd_addr";
    clamscan_db: PathBuf = "ATLAS_CLAMSCAN_DB", file "atlas.clamscan_db";
    dkim_keys: PathBuf = "ATLAS_DKIM_KEYS", file "atlas.dkim_keys";
    base_branch: String = "ATLAS_BASE_BRANCH", file "atlas.base_branch";
    permission_mode: String = "ATLAS_PERMISSION_MODE", file "atlas.permission_mode", default "bypassPermissions";
    claude_model: String = "ATLAS_CLAUDE_MODEL", file "atlas.claude_model";
    allowed_tools: String = "ATLAS_ALLOWED_TOOLS", file "atlas.allowed_tools";
    founder_signature: String = "ATLAS_FOUNDER_SIGNATURE", file "atlas.founder_signature";
    strict_mcp: bool = "ATLAS_STRICT_MCP", file "atlas.strict_mcp", default true;
    trust_unsigned_founder: bool = "ATLAS_TRUST_UNSIGNED_FOUNDER", file "atlas.trust_unsigned_founder", default false;
    child_env: ChildEnv = "ATLAS_CHILD_ENV", file "atlas.child_env", default ChildEnv::default();
    max_retries: u32 = "ATLAS_MAX_RETRIES", file "atlas.max_retries", default 2;
    worktree: bool = "ATLAS_WORKTREE", file "atlas.worktree", default true;
    sandboxed: bool = "ATLAS_SANDBOXED", file "atlas.sandboxed", default false;
    api_retries: u32 = "ATLAS_API_RETRIES", file "atlas.api_retries",
        default arthur_atlas::machine::DEFAULT_MAX_SETBACKS;
    // Wyoming
    wyoming_addr: ListenAddr = "ARTHUR_WYOMING_ADDR", file "wyoming.addr";
    satellites: Satellites = "ARTHUR_WYOMING_SATELLITES", file "wyoming.satellites", default Satellites::default();
    // Environment only, read by `model_dir_in` and before the rest (the file's path).
    @elsewhere "XDG_DATA_HOME", "ARTHUR_CONFIG";
}

/// One setting's value: read from its variable, or from its file key.
trait SettingValue: Sized {
    /// Held in a [`Secret`]: never printed, and a blank one in the file counts as unset.
    const SECRET: bool = false;
    fn from_env(name: &'static str, raw: String) -> Result<Self, ConfigError>;
    /// `None`: the file's value counts as unset. By default a text, read as in the environment.
    fn from_file(key: &'static str, value: toml::Value) -> Result<Option<Self>, ConfigError> {
        Self::from_env(key, file_text(key, value)?).map(Some)
    }
}

/// A default written as the table writes it (`"fr"` for a `String`).
trait IntoSetting<T> {
    fn into_setting(self) -> T;
}

impl<T> IntoSetting<T> for T {
    fn into_setting(self) -> T {
        self
    }
}

impl IntoSetting<String> for &'static str {
    fn into_setting(self) -> String {
        self.to_string()
    }
}

impl IntoSetting<Tz> for &'static str {
    fn into_setting(self) -> Tz {
        self.parse().unwrap_or(Tz::UTC)
    }
}

/// Environment over file over nothing; a bad file value is an error even when the
/// environment overrides it.
fn read_setting<T: SettingValue>(
    var: &'static str,
    key: Option<&'static str>,
    file: &FileSettings,
    env: &dyn Env,
) -> Result<(Option<T>, Origin), ConfigError> {
    let in_file = match key.and_then(|k| Some((k, file.values.get(k)?))) {
        Some((k, value)) => T::from_file(k, value.clone())?,
        None => None,
    };
    Ok(match env.var(var) {
        Some(raw) => (Some(T::from_env(var, raw)?), Origin::Environment),
        None if in_file.is_some() => (in_file, Origin::File),
        None => (None, Origin::Default),
    })
}

fn file_text(key: &'static str, value: toml::Value) -> Result<String, ConfigError> {
    match value {
        toml::Value::String(s) => Ok(s),
        other => Err(ConfigError::Invalid { name: key, value: other.to_string(), expected: "a text" }),
    }
}

fn file_list(key: &'static str, value: toml::Value) -> Result<Vec<String>, ConfigError> {
    let wrong = |v: &toml::Value| ConfigError::Invalid { name: key, value: v.to_string(), expected: "a list of texts" };
    match &value {
        toml::Value::Array(items) => {
            items.iter().map(|i| i.as_str().map(str::to_string).ok_or_else(|| wrong(&value))).collect()
        }
        _ => Err(wrong(&value)),
    }
}

impl SettingValue for String {
    fn from_env(_: &'static str, raw: String) -> Result<Self, ConfigError> {
        Ok(raw)
    }
}

impl SettingValue for PathBuf {
    fn from_env(_: &'static str, raw: String) -> Result<Self, ConfigError> {
        Ok(PathBuf::from(raw))
    }
}

impl SettingValue for Secret {
    const SECRET: bool = true;
    fn from_env(_: &'static str, raw: String) -> Result<Self, ConfigError> {
        Ok(Secret::new(raw))
    }
    fn from_file(key: &'static str, value: toml::Value) -> Result<Option<Self>, ConfigError> {
        Ok(Some(file_text(key, value)?).filter(|s| !s.trim().is_empty()).map(Secret::new))
    }
}

impl SettingValue for bool {
    fn from_env(name: &'static str, raw: String) -> Result<Self, ConfigError> {
        parse_bool(name, raw)
    }
    fn from_file(key: &'static str, value: toml::Value) -> Result<Option<Self>, ConfigError> {
        match value {
            toml::Value::Boolean(b) => Ok(Some(b)),
            other => Err(ConfigError::Invalid { name: key, value: other.to_string(), expected: "true or false" }),
        }
    }
}

macro_rules! whole_number_setting {
    ($($t:ty),*) => {$(
        impl SettingValue for $t {
            fn from_env(name: &'static str, raw: String) -> Result<Self, ConfigError> {
                parse_num(name, raw)
            }
            fn from_file(key: &'static str, value: toml::Value) -> Result<Option<Self>, ConfigError> {
                match value {
                    toml::Value::Integer(i) if <$t>::try_from(i).is_ok() => Ok(<$t>::try_from(i).ok()),
                    other => {
                        Err(ConfigError::Invalid { name: key, value: other.to_string(), expected: "a whole number" })
                    }
                }
            }
        }
    )*};
}
whole_number_setting!(u32, u64);

impl SettingValue for Tz {
    fn from_env(_: &'static str, raw: String) -> Result<Self, ConfigError> {
        raw.parse().map_err(|_| ConfigError::TimeZone(raw))
    }
}

impl SettingValue for VadSetting {
    fn from_env(name: &'static str, raw: String) -> Result<Self, ConfigError> {
        VadSetting::parse(name, raw)
    }
}

impl SettingValue for ChildEnv {
    fn from_env(name: &'static str, raw: String) -> Result<Self, ConfigError> {
        ChildEnv::parse(&raw).map_err(|e| ConfigError::Invalid {
            name,
            value: e.0,
            expected: "environment variable names separated by commas",
        })
    }
    fn from_file(key: &'static str, value: toml::Value) -> Result<Option<Self>, ConfigError> {
        ChildEnv::from_names(&file_list(key, value)?).map(Some).map_err(|e| ConfigError::Invalid {
            name: key,
            value: e.0,
            expected: "a list of environment variable names",
        })
    }
}

/// Where the Wyoming server listens: a bare port is on loopback.
struct ListenAddr(String);

impl SettingValue for ListenAddr {
    fn from_env(name: &'static str, raw: String) -> Result<Self, ConfigError> {
        arthur_wyoming::addr::listen_addr(&raw).map(ListenAddr).map_err(|e| ConfigError::Invalid {
            name,
            value: e.value,
            expected: "a port (on loopback) or host:port",
        })
    }
}

/// The Wyoming satellites, each checked: separated by commas or spaces in the environment,
/// a list in the file.
#[derive(Default)]
struct Satellites(Vec<String>);

impl Satellites {
    fn checked(name: &'static str, raw: &[String]) -> Result<Self, ConfigError> {
        raw.iter()
            .map(|one| {
                arthur_wyoming::addr::satellite_addr(one).map_err(|e| ConfigError::Invalid {
                    name,
                    value: e.value,
                    expected: "host:port of wyoming-satellite, separated by commas",
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Satellites)
    }
}

impl SettingValue for Satellites {
    fn from_env(name: &'static str, raw: String) -> Result<Self, ConfigError> {
        let each: Vec<String> = raw.split([',', ' ']).filter(|s| !s.trim().is_empty()).map(str::to_string).collect();
        Self::checked(name, &each)
    }
    fn from_file(key: &'static str, value: toml::Value) -> Result<Option<Self>, ConfigError> {
        Self::checked(key, &file_list(key, value)?).map(Some)
    }
}

// ---- the file, as written by the user ----

/// `arthur.toml`, every value by its dotted key; a key the table does not know is refused.
#[derive(Debug, Default)]
struct FileSettings {
    values: std::collections::BTreeMap<String, toml::Value>,
}

/// Why a configuration file was refused (the path is added by [`read_file`]).
#[derive(Debug)]
enum FileError {
    Toml(toml::de::Error),
    UnknownKey(String),
}

impl FileSettings {
    fn parse(text: &str) -> Result<Self, FileError> {
        fn flatten(prefix: &str, table: toml::Table, into: &mut std::collections::BTreeMap<String, toml::Value>) {
            for (key, value) in table {
                let path = if prefix.is_empty() { key } else { format!("{prefix}.{key}") };
                match value {
                    toml::Value::Table(inner) => flatten(&path, inner, into),
                    leaf => {
                        into.insert(path, leaf);
                    }
                }
            }
        }
        let mut values = std::collections::BTreeMap::new();
        flatten("", toml::from_str(text).map_err(FileError::Toml)?, &mut values);
        if let Some(unknown) = values.keys().find(|k| !SETTINGS.iter().any(|s| s.file_key == Some(k.as_str()))) {
            return Err(FileError::UnknownKey(unknown.clone()));
        }
        Ok(Self { values })
    }
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

    /// The public shape from the table's values, with the defaults that derive from others.
    fn merge(file: FileSettings, env: &dyn Env, config_file: Option<PathBuf>) -> Result<Self, ConfigError> {
        let (v, origins) = Values::read(&file, env)?;
        let data_dir = v.data_dir.or_else(default_data_dir).ok_or(ConfigError::NoDataDir)?;
        let database_url =
            v.database_url.unwrap_or_else(|| format!("sqlite://{}", data_dir.join("arthur.db").display()));
        if v.preferences_cap == 0 {
            return Err(ConfigError::Invalid { name: "preferences_cap", value: "0".into(), expected: "at least 1" });
        }
        if !(1..=MAX_STT_BEAM).contains(&v.stt_beam) {
            return Err(ConfigError::Invalid {
                name: "ARTHUR_STT_BEAM",
                value: v.stt_beam.to_string(),
                expected: "1 (greedy decoding) to 8 (beam search of that width)",
            });
        }
        // A provider exists only with its key.
        let provider = |api_key: Option<Secret>, base_url: String| {
            Some(Provider { api_key: api_key?, base_url: base_url.trim_end_matches('/').to_string() })
        };
        let model_dir = v.model_dir.or_else(|| model_dir_in(env));
        let onnxruntime = v.onnxruntime.or_else(|| model_dir.as_deref().and_then(arthur_audio::piper::onnxruntime_in));
        Ok(Settings {
            data_dir,
            database_url,
            timezone: v.timezone,
            preferences_cap: v.preferences_cap,
            web_addr: v.web_addr,
            web_token: v.web_token,
            demo: v.demo,
            local_first: v.local_first,
            providers: Providers {
                mistral: provider(v.mistral_api_key, v.mistral_base_url),
                anthropic: provider(v.anthropic_api_key, v.anthropic_base_url),
                openai: provider(v.openai_api_key, v.openai_base_url),
            },
            models: Models {
                router: v.router_model,
                chat: v.chat_model,
                embed: v.embed_model,
                atlas_classifier: v.classifier_model,
            },
            voice: Voice {
                stt_lang: v.stt_lang,
                stt_beam: v.stt_beam,
                whisper_model: v.whisper_model,
                piper_voice: v.piper_voice,
                input_device: v.input_device,
                barge_in: v.barge_in,
                model_dir,
                onnxruntime,
                vad: v.vad,
            },
            atlas: AtlasSettings {
                imap_url: v.imap_url,
                smtp_url: v.smtp_url,
                founder_email: v.founder_email,
                mailbox_email: v.mailbox_email,
                repo: v.repo,
                claude_bin: v.claude_bin,
                deploy_cmd: v.deploy_cmd,
                qa_cmd: v.qa_cmd,
                disabled: v.disabled,
                idle_timeout_s: v.idle_timeout_s,
                hard_timeout_s: v.hard_timeout_s,
                budget_s: v.budget_s,
                clamd_addr: v.clamd_addr,
                clamscan_db: v.clamscan_db,
                dkim_keys: v.dkim_keys,
                base_branch: v.base_branch,
                permission_mode: v.permission_mode,
                claude_model: v.claude_model,
                allowed_tools: v.allowed_tools,
                strict_mcp: v.strict_mcp,
                founder_signature: v.founder_signature,
                trust_unsigned_founder: v.trust_unsigned_founder,
                child_env: v.child_env,
                max_retries: v.max_retries,
                worktree: v.worktree,
                sandboxed: v.sandboxed,
                api_retries: v.api_retries,
            },
            wyoming: Wyoming { addr: v.wyoming_addr.map(|a| a.0), satellites: v.satellites.0 },
            config_file,
            origins,
        })
    }
}

fn read_file(path: &Path) -> Result<FileSettings, ConfigError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
    FileSettings::parse(&text).map_err(|e| match e {
        FileError::Toml(source) => ConfigError::Parse { path: path.to_path_buf(), source: Box::new(source) },
        FileError::UnknownKey(key) => ConfigError::UnknownKey { path: path.to_path_buf(), key },
    })
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
    fn whispers_beam_is_greedy_by_default_and_bounded() {
        let merge = |pairs: &[(&str, &str)], file: &str| {
            let mut all = vec![("ARTHUR_DATA_DIR", "/d")];
            all.extend_from_slice(pairs);
            Settings::merge(FileSettings::parse(file).unwrap(), &env(&all), None)
        };
        assert_eq!(merge(&[], "").unwrap().voice.stt_beam, DEFAULT_STT_BEAM);
        assert_eq!(merge(&[("ARTHUR_STT_BEAM", "5")], "").unwrap().voice.stt_beam, 5);
        assert_eq!(merge(&[], "[voice]\nstt_beam = 3").unwrap().voice.stt_beam, 3);
        for wrong in ["0", "9"] {
            let err = merge(&[("ARTHUR_STT_BEAM", wrong)], "").unwrap_err();
            assert!(err.to_string().contains("ARTHUR_STT_BEAM"), "{err}");
        }
        assert!(merge(&[("ARTHUR_STT_BEAM", "cinq")], "").is_err());
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
        let file = FileSettings::parse(&format!("[voice]\nmodel_dir = \"{dir}\"\nvad = \"earshot\"")).unwrap();
        let s = Settings::merge(file, &env(&[("ARTHUR_DATA_DIR", "/d"), ("HOME", "/h")]), None).unwrap();
        assert_eq!(s.voice.model_dir.as_deref(), Some(models.path()));
        assert_eq!(s.voice.onnxruntime, Some(models.path().join(arthur_audio::piper::ONNXRUNTIME_FILE)));
        assert_eq!(s.voice.vad, VadSetting::Earshot);
        let file = FileSettings::parse(&format!("[voice]\nmodel_dir = \"{dir}\"")).unwrap();
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
        let file = FileSettings::parse(
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
        // Every setting of the table says where it came from, in the table's order.
        let vars: Vec<&str> = s.origins.iter().map(|(v, _)| *v).collect();
        assert_eq!(vars, SETTINGS.iter().map(|i| i.env).collect::<Vec<_>>());
    }

    #[test]
    fn every_setting_is_in_the_interface_once_with_its_file_key() {
        let doc = include_str!("../docs/interface.md");
        let mut seen = std::collections::HashSet::new();
        for setting in SETTINGS {
            assert!(seen.insert(setting.env), "{} declared twice", setting.env);
            let key = match setting.file_key.map(|k| k.rsplit_once('.').unwrap_or(("", k))) {
                None => "—".to_string(),
                Some(("", key)) => format!("`{key}`"),
                Some((section, key)) => format!("`[{section}] {key}`"),
            };
            let row = format!("| `{}` | {key}", setting.env);
            assert!(doc.contains(&row), "docs/interface.md §2 has no row starting {row:?}");
        }
        let keys: Vec<_> = SETTINGS.iter().filter_map(|s| s.file_key).collect();
        assert_eq!(keys.len(), keys.iter().collect::<std::collections::HashSet<_>>().len(), "a file key twice");
    }

    #[test]
    fn secrets_are_the_keys_tokens_and_mail_urls_and_never_printed() {
        for setting in SETTINGS {
            let looks_secret = setting.env.ends_with("_KEY")
                || setting.env.ends_with("_TOKEN")
                || ["ATLAS_IMAP_URL", "ATLAS_SMTP_URL"].contains(&setting.env);
            assert_eq!(setting.secret, looks_secret, "{}", setting.env);
        }
        let sentinels: Vec<(&str, String)> =
            SETTINGS.iter().filter(|s| s.secret).map(|s| (s.env, format!("sentinel-{}", s.env))).collect();
        assert!(sentinels.len() >= 6);
        let env = |k: &str| match k {
            "ARTHUR_DATA_DIR" => Some("/d".to_string()),
            _ => sentinels.iter().find(|(v, _)| *v == k).map(|(_, s)| s.clone()),
        };
        let s = Settings::merge(FileSettings::default(), &env, None).unwrap();
        let printed = format!("{s:?}");
        for (var, sentinel) in &sentinels {
            assert!(!printed.contains(sentinel.as_str()), "{var} printed");
            assert_eq!(s.origin(var), Origin::Environment, "{var} was read");
        }
        assert!(s.providers.mistral.is_some() && s.web_token.is_some() && s.atlas.imap_url.is_some());
    }

    #[test]
    fn wyoming_is_off_by_default_on_loopback_for_a_bare_port_and_checked() {
        let s = Settings::merge(FileSettings::default(), &env(&[("ARTHUR_DATA_DIR", "/d")]), None).unwrap();
        assert_eq!(s.wyoming, Wyoming::default(), "off by default, no satellite");
        let file =
            FileSettings::parse("[wyoming]\naddr = \"10300\"\nsatellites = [\"cuisine.local\", \"10.0.0.5:10701\"]")
                .unwrap();
        let s = Settings::merge(file, &env(&[("ARTHUR_DATA_DIR", "/d")]), None).unwrap();
        assert_eq!(s.wyoming.addr.as_deref(), Some("127.0.0.1:10300"), "a bare port stays on this machine");
        assert_eq!(s.wyoming.satellites, ["cuisine.local:10700", "10.0.0.5:10701"]);
        assert_eq!(s.origin("ARTHUR_WYOMING_SATELLITES"), Origin::File);
        let over = env(&[
            ("ARTHUR_DATA_DIR", "/d"),
            ("ARTHUR_WYOMING_ADDR", "0.0.0.0:10300"),
            ("ARTHUR_WYOMING_SATELLITES", "a:1, b:2"),
        ]);
        let s = Settings::merge(FileSettings::default(), &over, None).unwrap();
        assert_eq!(s.wyoming.addr.as_deref(), Some("0.0.0.0:10300"), "an interface named is taken");
        assert_eq!(s.wyoming.satellites, ["a:1", "b:2"]);
        for (var, bad) in [("ARTHUR_WYOMING_ADDR", "partout"), ("ARTHUR_WYOMING_SATELLITES", "a:1,10700")] {
            let err = Settings::merge(FileSettings::default(), &env(&[("ARTHUR_DATA_DIR", "/d"), (var, bad)]), None)
                .unwrap_err();
            assert!(err.to_string().contains(var), "{err}");
        }
    }

    #[test]
    fn environment_overrides_the_file() {
        let file = FileSettings::parse(
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
        assert!(matches!(FileSettings::parse("typo_key = 1"), Err(FileError::UnknownKey(k)) if k == "typo_key"));
        assert!(
            matches!(FileSettings::parse("[atlas]\nbudget = 1"), Err(FileError::UnknownKey(k)) if k == "atlas.budget")
        );
        assert!(matches!(FileSettings::parse("memory = 3"), Err(FileError::UnknownKey(_))), "a section is a table");
        let file = FileSettings::parse("[atlas]\nbudget_s = \"lots\"").unwrap();
        let e = Settings::merge(file, &env(&[("ARTHUR_DATA_DIR", "/d"), ("ATLAS_BUDGET_S", "9")]), None).unwrap_err();
        assert!(e.to_string().contains("atlas.budget_s"), "a bad file value is said even when overridden: {e}");
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
