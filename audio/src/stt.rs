//! Speech-to-text with whisper.cpp (through whisper-rs): one utterance of 16 kHz mono PCM
//! in, one trimmed line of text out, with whisper's known silence hallucinations removed.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};
use std::time::Instant;

pub use crate::favour::Vocabulary;
use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters, WhisperState};

/// File name of the default (multilingual base) model in Arthur's model directory.
pub const DEFAULT_MODEL_FILE: &str = "ggml-base.bin";

/// What went wrong while loading a model or transcribing.
#[derive(Debug, thiserror::Error)]
pub enum SttError {
    #[error("whisper model not found at {path} (run `models/fetch --offline` or `models/fetch`)")]
    ModelMissing { path: PathBuf },
    #[error("whisper could not load the model {path}: {source}")]
    Load { path: PathBuf, source: whisper_rs::WhisperError },
    #[error("whisper transcription failed: {0}")]
    Whisper(#[from] whisper_rs::WhisperError),
    #[error("invalid speech-to-text option: {0}")]
    InvalidOption(String),
    #[error("the whisper state lock was poisoned by a panic in another transcription")]
    Poisoned,
}

/// How the recogniser runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SttOptions {
    /// Whisper language code ("fr", "en", …); English-only models (`*.en`) need "en".
    pub language: String,
    /// CPU threads used by whisper.cpp.
    pub threads: u32,
    /// Text given to the decoder before the audio: the user's vocabulary (project names…).
    pub initial_prompt: Option<String>,
    /// Encoder context in frames of 20 ms (1500 = the full 30 s window). Shorter is faster
    /// for short utterances; `None` keeps whisper.cpp's default.
    pub audio_ctx: Option<i32>,
    /// Without an explicit `audio_ctx`, size the encoder context to each utterance (see
    /// [`adaptive_audio_ctx`]): ~3.7× faster on short commands for the same accuracy.
    pub adaptive_audio_ctx: bool,
    /// The smallest adaptive context, in frames of 20 ms ([`DEFAULT_AUDIO_CTX_FLOOR`]).
    pub audio_ctx_floor: i32,
    /// Beam search of this width instead of greedy decoding (`None`).
    pub beam_size: Option<u32>,
    /// whisper.cpp's flash attention (set when the model loads).
    pub flash_attn: bool,
    /// When to clean the utterance with the RNNoise denoiser before whisper.
    pub denoise: Denoise,
    /// Words each decoding favours ([`crate::favour`]): command words, the user's names.
    pub favour: Vec<String>,
    /// The bonus those words' tokens get, in logits (natural log of a probability ratio).
    pub favour_bonus: f32,
}

impl Default for SttOptions {
    fn default() -> Self {
        Self {
            language: "fr".to_owned(),
            threads: 2,
            initial_prompt: None,
            audio_ctx: None,
            adaptive_audio_ctx: false,
            audio_ctx_floor: DEFAULT_AUDIO_CTX_FLOOR,
            beam_size: None,
            flash_attn: false,
            denoise: Denoise::Off,
            favour: Vec::new(),
            favour_bonus: DEFAULT_FAVOUR_BONUS,
        }
    }
}

/// The bonus of a favoured word's tokens when none is chosen, in logits (×20 in
/// probability). Measured by `cargo bench --bench voice`, parts `ears` and `ears-fr`
/// (bonuses 1 to 5 side by side): 3 heard the most commands in silence in both languages
/// (English 12 → 16 of 20, French 21 → 26 of 48) with no more errors in free speech.
pub const DEFAULT_FAVOUR_BONUS: f32 = 3.0;

/// When the denoiser runs before whisper.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Denoise {
    #[default]
    Off,
    Always,
    /// Only when the room is loud: the utterance stands less than this many dB above the
    /// background the detector measured ([`Room`]).
    BelowSnrDb(f32),
}

/// What the speech detector knows of the room when an utterance closes
/// (`vad::Utterance::level_db` and `background_db`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Room {
    /// Mean power of the speech, dBFS.
    pub level_db: f32,
    /// The background's level, dBFS.
    pub background_db: f32,
}

impl Room {
    pub fn snr_db(&self) -> f32 {
        self.level_db - self.background_db
    }
}

/// The smallest adaptive encoder context: 500 frames (10 s), measured as accurate as the
/// full window on short commands.
pub const DEFAULT_AUDIO_CTX_FLOOR: i32 = 500;

/// Encoder context for an utterance of `samples` at 16 kHz: the utterance plus 2 s of
/// margin, never under [`DEFAULT_AUDIO_CTX_FLOOR`] nor over 1500 (the full 30 s window).
pub fn adaptive_audio_ctx(samples: usize) -> i32 {
    fitted_audio_ctx(samples, DEFAULT_AUDIO_CTX_FLOOR)
}

/// [`adaptive_audio_ctx`] with another floor (frames of 20 ms).
pub fn fitted_audio_ctx(samples: usize, floor: i32) -> i32 {
    let secs = samples as f64 / f64::from(crate::SAMPLE_RATE_HZ) + 2.0;
    ((secs / 30.0 * 1500.0).ceil() as i32).clamp(floor.clamp(1, 1500), 1500)
}

/// A loaded whisper model, ready to transcribe one utterance at a time.
pub struct Transcriber {
    ctx: WhisperContext,
    state: Mutex<WhisperState>,
    options: SttOptions,
    /// [`SttOptions::favour`], tokenized for this model.
    favour: Option<Vocabulary>,
    /// The model's tokens as pieces of words, for the phrase network (built on first use).
    tokens: std::sync::OnceLock<crate::phrases::TokenTable>,
}

impl std::fmt::Debug for Transcriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcriber")
            .field("multilingual", &self.ctx.is_multilingual())
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

static LOG_HOOKS: Once = Once::new();

impl Transcriber {
    /// Loads a whisper.cpp ggml model.
    pub fn load(path: &Path, options: SttOptions) -> Result<Self, SttError> {
        if !path.is_file() {
            return Err(SttError::ModelMissing { path: path.to_owned() });
        }
        if options.threads == 0 {
            return Err(SttError::InvalidOption("threads must be at least 1".to_owned()));
        }
        if options.language.is_empty() || !options.language.chars().all(|c| c.is_ascii_lowercase()) {
            return Err(SttError::InvalidOption(format!("language {:?} is not a whisper code", options.language)));
        }
        if options.beam_size == Some(0) {
            return Err(SttError::InvalidOption("beam_size must be at least 1".to_owned()));
        }
        if let Some(ctx) = options.audio_ctx {
            if !(1..=1500).contains(&ctx) {
                return Err(SttError::InvalidOption(format!("audio_ctx {ctx} is outside 1..=1500")));
            }
        }
        // whisper.cpp and ggml log to stderr by default; send them to `tracing` instead.
        LOG_HOOKS.call_once(whisper_rs::install_logging_hooks);
        let started = Instant::now();
        let load_err = |source| SttError::Load { path: path.to_owned(), source };
        let mut ctx_params = WhisperContextParameters::default();
        ctx_params.flash_attn(options.flash_attn);
        let ctx = WhisperContext::new_with_params(path, ctx_params).map_err(load_err)?;
        if !ctx.is_multilingual() && options.language != "en" {
            return Err(SttError::InvalidOption(format!(
                "{} is an English-only model; language {:?} needs a multilingual one",
                path.display(),
                options.language
            )));
        }
        let state = ctx.create_state().map_err(load_err)?;
        tracing::info!(
            model = %path.display(),
            multilingual = ctx.is_multilingual(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "whisper model loaded"
        );
        let mut t = Self { ctx, state: Mutex::new(state), options, favour: None, tokens: Default::default() };
        if !t.options.favour.is_empty() {
            let phrases: Vec<&str> = t.options.favour.iter().map(String::as_str).collect();
            t.favour = Some(t.vocabulary(&phrases, t.options.favour_bonus)).filter(|v| !v.is_empty());
        }
        Ok(t)
    }

    /// `phrases` tokenized for this model, each of their tokens worth `bonus` logits: what
    /// [`Self::hypotheses_favouring`] takes (the voice loop builds one from the user's names).
    pub fn vocabulary(&self, phrases: &[&str], bonus: f32) -> Vocabulary {
        Vocabulary::build(&self.ctx, phrases, bonus)
    }

    /// The options this transcriber runs with.
    pub fn options(&self) -> &SttOptions {
        &self.options
    }

    /// Transcribes one utterance (16 kHz mono samples in -1..1): greedy decoding (or beam
    /// search, [`SttOptions::beam_size`]), no timestamps, one segment. Returns an empty
    /// string for silence and for whisper's known hallucinations. Knows nothing of the room:
    /// the denoiser runs only when it is [`Denoise::Always`] (see [`Self::transcribe_in`]).
    pub fn transcribe(&self, pcm_16k_mono: &[f32]) -> Result<String, SttError> {
        self.transcribe_in(pcm_16k_mono, None)
    }

    /// [`Self::transcribe`] in a room the detector measured: the denoiser runs when
    /// [`SttOptions::denoise`] says the room is loud enough for it.
    pub fn transcribe_in(&self, pcm_16k_mono: &[f32], room: Option<Room>) -> Result<String, SttError> {
        let prompt = self.options.initial_prompt.as_deref();
        Ok(self.hypotheses(pcm_16k_mono, room, &[prompt])?.pop().unwrap_or_default())
    }

    /// Several readings of one utterance, one per prompt given (`None`: no prompt), in that
    /// order; each is a whole decoding (the encoder runs again), so two prompts cost twice
    /// the time. The caller judges them (for Arthur, the grammar: `arthur_agents::ears`).
    pub fn hypotheses(
        &self,
        pcm_16k_mono: &[f32],
        room: Option<Room>,
        prompts: &[Option<&str>],
    ) -> Result<Vec<String>, SttError> {
        self.hypotheses_favouring(pcm_16k_mono, room, prompts, self.favour.as_ref())
    }

    /// [`Self::hypotheses`], each reading favouring `vocabulary`'s words (`None`: none, not
    /// even [`SttOptions::favour`]).
    pub fn hypotheses_favouring(
        &self,
        pcm_16k_mono: &[f32],
        room: Option<Room>,
        prompts: &[Option<&str>],
        vocabulary: Option<&Vocabulary>,
    ) -> Result<Vec<String>, SttError> {
        // whisper.cpp refuses input shorter than 100 ms (and pads everything to 1 s anyway).
        if pcm_16k_mono.len() < crate::SAMPLE_RATE_HZ as usize / 10 {
            return Ok(vec![String::new(); prompts.len()]);
        }
        let denoise = self.denoises(room);
        let cleaned;
        let pcm = if denoise {
            cleaned = crate::denoise::denoise(pcm_16k_mono);
            &cleaned[..]
        } else {
            pcm_16k_mono
        };
        let mut out = Vec::with_capacity(prompts.len());
        let mut state = self.state.lock().map_err(|_| SttError::Poisoned)?;
        for prompt in prompts {
            let started = Instant::now();
            let mut params = self.params(*prompt, pcm.len());
            if let Some(v) = vocabulary.filter(|v| !v.is_empty()) {
                crate::favour::install(&mut params, v);
            }
            state.full(params, pcm)?;
            let text = segments_text(&state)?;
            let filtered = is_hallucination(&text);
            tracing::debug!(
                audio_ms = pcm.len() as u64 * 1000 / u64::from(crate::SAMPLE_RATE_HZ),
                elapsed_ms = started.elapsed().as_millis() as u64,
                chars = text.chars().count(),
                prompted = prompt.is_some(),
                favoured = vocabulary.is_some(),
                denoised = denoise,
                filtered,
                "whisper transcription"
            );
            out.push(if filtered { String::new() } else { text });
        }
        Ok(out)
    }

    /// The decoding parameters for one reading of `samples` samples with `prompt`.
    fn params(&self, prompt: Option<&str>, samples: usize) -> FullParams<'_, '_> {
        let mut params = match self.options.beam_size {
            Some(width) => FullParams::new(SamplingStrategy::BeamSearch { beam_size: width as i32, patience: -1.0 }),
            None => FullParams::new(SamplingStrategy::Greedy { best_of: 1 }),
        };
        params.set_n_threads(self.options.threads as i32);
        params.set_language(Some(&self.options.language));
        params.set_translate(false);
        params.set_no_timestamps(true);
        params.set_single_segment(true);
        params.set_no_context(true);
        params.set_suppress_blank(true);
        params.set_print_special(false);
        params.set_print_progress(false);
        params.set_print_realtime(false);
        params.set_print_timestamps(false);
        if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
            params.set_initial_prompt(prompt);
        }
        match (self.options.audio_ctx, self.options.adaptive_audio_ctx) {
            (Some(ctx), _) => params.set_audio_ctx(ctx),
            (None, true) => params.set_audio_ctx(fitted_audio_ctx(samples, self.options.audio_ctx_floor)),
            (None, false) => {}
        }
        params
    }

    /// The model's tokens as pieces of words (built once, ~50 k tokens).
    fn token_table(&self) -> &crate::phrases::TokenTable {
        self.tokens.get_or_init(|| {
            let n = self.ctx.n_vocab().max(0);
            let bytes = (0..n).map(|t| self.ctx.token_to_bytes(t).map(<[u8]>::to_vec).unwrap_or_default()).collect();
            crate::phrases::TokenTable::new(bytes, self.ctx.token_eot())
        })
    }

    /// One reading of an utterance, steered: `vocabulary`'s words favoured, and, with
    /// `net`, the tokens that would leave the phrase network lowered by its penalty
    /// ([`crate::phrases`]). Returns the text with the weight whisper itself gave each of
    /// its tokens before any steering (greedy decoding only: with beam search the weights
    /// are left empty, the decoders' steps being interleaved).
    pub fn read_steered(
        &self,
        pcm_16k_mono: &[f32],
        room: Option<Room>,
        prompt: Option<&str>,
        vocabulary: Option<&Vocabulary>,
        net: Option<(&crate::phrases::PhraseNet, f32)>,
    ) -> Result<SteeredReading, SttError> {
        if pcm_16k_mono.len() < crate::SAMPLE_RATE_HZ as usize / 10 {
            return Ok(SteeredReading::default());
        }
        let cleaned;
        let pcm = if self.denoises(room) {
            cleaned = crate::denoise::denoise(pcm_16k_mono);
            &cleaned[..]
        } else {
            pcm_16k_mono
        };
        let table = self.token_table();
        let steer =
            crate::phrases::Steer::new(vocabulary.filter(|v| !v.is_empty()), net.filter(|(n, _)| !n.is_empty()), table);
        let started = Instant::now();
        let mut state = self.state.lock().map_err(|_| SttError::Poisoned)?;
        let mut params = self.params(prompt, pcm.len());
        crate::favour::install(&mut params, &steer);
        state.full(params, pcm)?;
        let text = segments_text(&state)?;
        drop(state);
        let filtered = is_hallucination(&text);
        let weights = if self.options.beam_size.is_some() { Vec::new() } else { steer.weights() };
        let mut tokens = Vec::with_capacity(weights.len());
        for w in weights {
            let piece =
                self.ctx.token_to_bytes(w.id).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
            tokens.push(HeardToken { text: piece, logprob: w.logprob, gap: w.gap });
        }
        tracing::debug!(
            audio_ms = pcm.len() as u64 * 1000 / u64::from(crate::SAMPLE_RATE_HZ),
            elapsed_ms = started.elapsed().as_millis() as u64,
            chars = text.chars().count(),
            steered_steps = steer.steered_steps(),
            filtered,
            "whisper steered transcription"
        );
        Ok(if filtered {
            SteeredReading::default()
        } else {
            SteeredReading { text, tokens, steered_steps: steer.steered_steps() }
        })
    }

    fn denoises(&self, room: Option<Room>) -> bool {
        match self.options.denoise {
            Denoise::Off => false,
            Denoise::Always => true,
            Denoise::BelowSnrDb(limit) => room.is_some_and(|r| r.snr_db() < limit),
        }
    }
}

/// A reading and how whisper weighed it ([`Transcriber::read_steered`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SteeredReading {
    pub text: String,
    /// The reading's tokens in order (their text concatenated is the reading, give or
    /// take the spaces `text` was trimmed of).
    pub tokens: Vec<HeardToken>,
    /// Decoding steps at which the phrase network lowered some token.
    pub steered_steps: usize,
}

/// One token of a reading as whisper weighed it before any steering.
#[derive(Debug, Clone, PartialEq)]
pub struct HeardToken {
    pub text: String,
    /// Its log-probability under the model alone.
    pub logprob: f32,
    /// Logits below the model's own first choice at that step (0: whisper's own choice).
    pub gap: f32,
}

/// The text of the segments whisper decoded, trimmed.
fn segments_text(state: &WhisperState) -> Result<String, SttError> {
    let mut text = String::new();
    for i in 0..state.full_n_segments() {
        if let Some(segment) = state.get_segment(i) {
            text.push_str(&segment.to_str_lossy()?);
        }
    }
    Ok(text.trim().to_owned())
}

/// Phrases whisper produces on silence or noise (learnt from subtitles), compared after
/// [`fold`]: lowercase, accents removed, only letters and digits separated by one space.
const HALLUCINATIONS: &[&str] = &[
    "sous titres realises par la communaute d amara org",
    "sous titres realises para la communaute d amara org",
    "sous titrage st 501",
    "sous titrage st501",
    "sous titrage societe radio canada",
    "sous titres par la communaute d amara org",
    "merci d avoir regarde",
    "merci d avoir regarde cette video",
    "merci de votre attention",
    "merci a tous",
    "abonnez vous",
    "n oubliez pas de vous abonner",
    "thank you for watching",
    "thanks for watching",
    "thank you for watching and see you next time",
    "please subscribe",
    "subtitles by the amara org community",
    "you",
    "bye",
    "musique",
    "music",
];

/// Fragments that alone betray a subtitle credit, wherever they appear.
const HALLUCINATION_FRAGMENTS: &[&str] = &["amara org", "sous titres realises par", "sous titrage st"];

/// Whether `text` is one of whisper's known silence/noise hallucinations (subtitle credits,
/// "thank you for watching", a bracketed sound description such as "[Musique]" or
/// "(applaudissements)", music notes) or carries no word at all.
pub fn is_hallucination(text: &str) -> bool {
    let spoken = strip_annotations(text);
    let folded = fold(&spoken);
    if folded.is_empty() {
        return true;
    }
    HALLUCINATIONS.contains(&folded.as_str()) || HALLUCINATION_FRAGMENTS.iter().any(|f| folded.contains(f))
}

/// Removes bracketed sound descriptions ("[Musique]", "(rires)", "*applause*") and music notes.
fn strip_annotations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut closing: Option<char> = None;
    for c in text.chars() {
        match closing {
            Some(end) if c == end => closing = None,
            Some(_) => {}
            None => match c {
                '[' => closing = Some(']'),
                '(' => closing = Some(')'),
                '*' => closing = Some('*'),
                '♪' | '♫' | '♬' | '🎵' | '🎶' => {}
                _ => out.push(c),
            },
        }
    }
    out
}

/// Lowercase, common Latin accents removed, every run of non-alphanumerics one space.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = match c {
            'à' | 'â' | 'ä' | 'á' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'î' | 'ï' | 'í' => 'i',
            'ô' | 'ö' | 'ó' => 'o',
            'ù' | 'û' | 'ü' | 'ú' => 'u',
            'ç' => 'c',
            'ÿ' => 'y',
            c => c,
        };
        if c.is_alphanumeric() {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.push(c);
        } else {
            pending_space = true;
        }
    }
    out
}

/// Bigger multilingual models `models/fetch --whisper NAME` installs, preferred to base in
/// this order (the user fetched one because base understood them poorly).
pub const BIGGER_MODEL_FILES: [&str; 3] = ["ggml-large-v3-turbo-q5_0.bin", "ggml-medium.bin", "ggml-small.bin"];

/// The default model in `dir` (Arthur's model directory, resolved by the binary's
/// configuration): a bigger one `models/fetch --whisper` installed, else `ggml-base.bin`.
pub fn default_model_path(dir: &Path) -> Option<PathBuf> {
    BIGGER_MODEL_FILES.iter().chain([&DEFAULT_MODEL_FILE]).map(|f| dir.join(f)).find(|p| p.is_file())
}

#[cfg(test)]
mod adaptive_tests {
    #[test]
    fn context_grows_with_the_utterance() {
        assert_eq!(super::adaptive_audio_ctx(16_000 * 3), 500);
        assert_eq!(super::adaptive_audio_ctx(16_000 * 18), 1000);
        assert_eq!(super::adaptive_audio_ctx(16_000 * 60), 1500);
        assert_eq!(super::fitted_audio_ctx(16_000 * 3, 200), 250, "3 s + 2 s of margin");
        assert_eq!(super::fitted_audio_ctx(16_000, 200), 200);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_hallucinations_are_recognised() {
        for text in [
            "Sous-titres réalisés par la communauté d'Amara.org",
            " Merci d'avoir regardé !",
            "Sous-titrage ST' 501",
            "Thank you for watching.",
            "[Musique]",
            "(applaudissements)",
            "♪ ♪",
            "*music*",
            "",
            "   ",
            "...",
            " you",
            "[BLANK_AUDIO]",
        ] {
            assert!(is_hallucination(text), "{text:?} should be a hallucination");
        }
    }

    #[test]
    fn real_commands_are_kept() {
        for text in [
            "Arthur, rappelle-moi d'appeler Marie demain à 9 h.",
            "Merci",
            "Note que le projet Atlas avance.",
            "Set a reminder for tomorrow.",
            "Thank you, Arthur.",
        ] {
            assert!(!is_hallucination(text), "{text:?} should be kept");
        }
    }

    #[test]
    fn fold_removes_case_accents_and_punctuation() {
        assert_eq!(fold("  Déjà vu, l'Été !"), "deja vu l ete");
    }

    #[test]
    fn missing_model_is_a_clear_error() {
        let err = Transcriber::load(Path::new("/nonexistent/ggml-base.bin"), SttOptions::default()).unwrap_err();
        assert!(matches!(err, SttError::ModelMissing { .. }));
        assert!(err.to_string().contains("models/fetch"));
    }
}
