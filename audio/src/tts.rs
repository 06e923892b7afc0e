//! Text-to-speech. The answer is cut into sentences and synthesised one by one, so the
//! first sentence can play while the rest is being made. espeak-ng is the fallback voice
//! when no Piper voice is installed (Piper voices: [`crate::piper`]).

use std::io::Cursor;
use std::process::{Command, Stdio};

/// Mono PCM at a given rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Pcm {
    pub samples: Vec<f32>,
    pub rate: u32,
}

impl Pcm {
    pub fn duration_secs(&self) -> f32 {
        self.samples.len() as f32 / self.rate.max(1) as f32
    }

    /// Appends `other` (same rate expected) after `gap_ms` of silence.
    pub fn append(&mut self, other: &Pcm, gap_ms: u32) {
        let gap = (self.rate as u64 * gap_ms as u64 / 1000) as usize;
        self.samples.extend(std::iter::repeat_n(0.0, gap));
        self.samples.extend_from_slice(&other.samples);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TtsError {
    #[error("speech synthesiser not available: {0}")]
    Unavailable(String),
    #[error("speech synthesis failed: {0}")]
    Failed(String),
    #[error("synthesised audio unreadable: {0}")]
    BadAudio(#[from] hound::Error),
}

/// Something that turns one sentence into speech.
pub trait Synthesizer: Send + Sync {
    fn name(&self) -> &str;
    fn synthesize(&self, sentence: &str) -> Result<Pcm, TtsError>;
}

/// The espeak-ng command-line synthesiser (Debian package `espeak-ng`).
#[derive(Debug, Clone)]
pub struct EspeakNg {
    pub voice: String,
    /// Words per minute.
    pub rate: u32,
    pub binary: String,
}

impl EspeakNg {
    pub fn new(voice: &str) -> Self {
        Self { voice: voice.to_string(), rate: 165, binary: "espeak-ng".to_string() }
    }
}

impl Synthesizer for EspeakNg {
    fn name(&self) -> &str {
        "espeak-ng"
    }

    fn synthesize(&self, sentence: &str) -> Result<Pcm, TtsError> {
        let output = Command::new(&self.binary)
            .args(["-v", &self.voice, "-s", &self.rate.to_string(), "--stdout"])
            .arg(sentence)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| TtsError::Unavailable(format!("{}: {e}", self.binary)))?;
        if !output.status.success() {
            return Err(TtsError::Failed(String::from_utf8_lossy(&output.stderr).trim().to_string()));
        }
        // espeak-ng writes a WAV whose size fields are left open on a pipe: read the
        // samples that are there.
        let mut reader = hound::WavReader::new(Cursor::new(output.stdout))?;
        let spec = reader.spec();
        let channels = spec.channels.max(1) as usize;
        let raw: Vec<f32> = match spec.sample_format {
            hound::SampleFormat::Int => {
                let scale = (1i64 << (spec.bits_per_sample - 1)) as f32;
                reader.samples::<i32>().map_while(Result::ok).map(|s| s as f32 / scale).collect()
            }
            hound::SampleFormat::Float => reader.samples::<f32>().map_while(Result::ok).collect(),
        };
        let samples = raw.chunks(channels).map(|c| c.iter().sum::<f32>() / channels as f32).collect();
        Ok(Pcm { samples, rate: spec.sample_rate })
    }
}

/// Splits an answer into sentences (and over-long sentences at clause breaks), keeping
/// punctuation, so that each piece can be synthesised and played in turn.
pub fn sentences(text: &str) -> Vec<String> {
    const MAX_CHARS: usize = 220;
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        let end = matches!(c, '.' | '!' | '?' | '…' | '\n')
            || (matches!(c, ';' | ':' | ',') && current.chars().count() > MAX_CHARS);
        if end {
            let piece = current.trim();
            if piece.chars().any(char::is_alphanumeric) {
                out.push(piece.to_string());
            }
            current.clear();
        }
    }
    let piece = current.trim();
    if piece.chars().any(char::is_alphanumeric) {
        out.push(piece.to_string());
    }
    out
}

/// The pieces an answer is synthesised in: its sentences, with the first one cut at its
/// first clause break (":", ";", ",") when both sides have words — Arthur's reports open
/// with "Rappel numéro un enregistré : …", and the shorter first piece starts playing
/// sooner; the break is a pause anyway.
pub fn chunks(text: &str) -> Vec<String> {
    let mut pieces = sentences(text);
    if let Some(first) = pieces.first().cloned() {
        let cut = first.char_indices().find(|(_, c)| matches!(c, ':' | ';' | ','));
        if let Some((at, c)) = cut {
            let (head, tail) = (first[..at + c.len_utf8()].trim(), first[at + c.len_utf8()..].trim());
            if head.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count() >= 2
                && tail.chars().any(char::is_alphanumeric)
            {
                pieces.splice(0..1, [head.to_string(), tail.to_string()]);
            }
        }
    }
    pieces
}

/// Synthesises `text` piece by piece (see [`chunks`]); `on_sentence` gets each piece as
/// soon as it is ready (to start playback early). Returns the whole answer.
pub fn speak(synth: &dyn Synthesizer, text: &str, mut on_sentence: impl FnMut(&Pcm)) -> Result<Pcm, TtsError> {
    let mut whole: Option<Pcm> = None;
    for sentence in chunks(text) {
        let pcm = synth.synthesize(&sentence)?;
        on_sentence(&pcm);
        match &mut whole {
            None => whole = Some(pcm),
            Some(w) => w.append(&pcm, 120),
        }
    }
    Ok(whole.unwrap_or(Pcm { samples: Vec::new(), rate: crate::SAMPLE_RATE_HZ }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_cut_into_sentences() {
        assert_eq!(
            sentences("Rappel n°1 enregistré. Rien n'a été écrit ! Autre chose ?"),
            ["Rappel n°1 enregistré.", "Rien n'a été écrit !", "Autre chose ?"]
        );
        assert!(sentences(" ... ").is_empty());
        let long = format!("{}, et puis la suite", "mot ".repeat(70));
        assert_eq!(sentences(&long).len(), 2);
    }

    #[test]
    fn the_first_piece_stops_at_the_first_clause_break() {
        assert_eq!(
            chunks("Rappel numéro un enregistré : « appeler la banque », pour demain. Autre chose ?"),
            ["Rappel numéro un enregistré :", "« appeler la banque », pour demain.", "Autre chose ?"]
        );
        assert_eq!(chunks("Oui, bien sûr. Voilà."), ["Oui, bien sûr.", "Voilà."], "one word is too short a piece");
        assert_eq!(chunks("Rien n'a été fait."), ["Rien n'a été fait."]);
        assert!(chunks("").is_empty());
    }

    #[test]
    fn espeak_speaks_french_sentence_by_sentence() {
        let synth = EspeakNg::new("fr");
        let mut pieces = 0;
        let whole = speak(&synth, "Bonjour. Rappel numéro un enregistré pour demain.", |p| {
            pieces += 1;
            assert!(p.duration_secs() > 0.3, "each sentence is real speech");
        })
        .expect("espeak-ng is installed by scripts/setup");
        assert_eq!(pieces, 2);
        assert!(whole.duration_secs() > 1.5);
        let rms = (whole.samples.iter().map(|s| s * s).sum::<f32>() / whole.samples.len() as f32).sqrt();
        assert!(rms > 0.01, "not silence: {rms}");
    }

    #[test]
    fn a_missing_binary_is_a_clear_error() {
        let mut synth = EspeakNg::new("fr");
        synth.binary = "/nonexistent/espeak-ng".into();
        assert!(matches!(synth.synthesize("bonjour"), Err(TtsError::Unavailable(_))));
    }
}
