//! `ears-fr` (issues 29 and 40): French commands understood by whisper base alone, said by
//! the natural French test voice (Kokoro-82M, voice ff_siwis, at two speeds:
//! `scripts/kokoro-say`) beside MBROLA's diphone voice fr3, in silence and under a
//! television at 12 and 6 dB, for each way of decoding, side by side:
//! - before: one plain reading, prompt « Arthur »;
//! - favoured words (issue 29, shipped);
//! - the grammar as the language model (`arthur_audio::phrases`: tokens that leave every
//!   sentence of the grammar lose a penalty), at several penalties, with and without the
//!   favoured words;
//! - each row with and without the doubt gate (`ears::Confidence`): a command that would
//!   write, heard with a token whisper itself weighed low, is asked instead of run.
//!
//! Per row: commands understood (the grammar reads the same tool with the same arguments,
//! sure), asked, and run wrongly (a write the grammar is sure of that differs from what was
//! said: the count that must be 0); the words stored in free text that differ from what
//! was said; free speech's word error rate (Kokoro and MBROLA: a note's text, questions to
//! the model, after the wake word); the decoding time. `VOICE_BENCH_EARS_FR=0,2` keeps some
//! rows, `VOICE_BENCH_FR_VOICES=0,2` some voices, `VOICE_BENCH_FR_THREADS=1` whisper's
//! threads; `VOICE_BENCH_VERBOSE=1` prints every miss.

use std::path::PathBuf;
use std::time::Instant;

use arthur_agents::ears::{self, Confidence};
use arthur_agents::understand::{understand, Command, Reading};
use arthur_audio::stt::{Room, SteeredReading, SttOptions, Transcriber};
use arthur_audio::wake::strip_wake_word;
use arthur_audio::wav;

use super::noise::{self, Noise, NoiseMaker, RATE};
use super::{fnv, mbrola_fr3, median};

/// The sentences the issue quotes as misheard, beside the `selftest` ones and the basics.
const ISSUE_40: [&str; 4] = [
    "Crée le projet cuisine.",
    "Quels sont mes rappels ?",
    "Note que le rendez-vous chez le dentiste est déplacé à jeudi.",
    "Rappelle-moi d'appeler le plombier vendredi à dix-huit heures.",
];
const BASICS: [&str; 6] = [
    "Ajoute des pommes à la liste de courses.",
    "Minuteur de cinq minutes.",
    "Quelle heure est-il ?",
    "Retire le lait de la liste de courses.",
    "Rappelle-moi d'arroser le jardin samedi à dix heures.",
    "Je commence à travailler sur le jardin.",
];
/// Free speech (what favouring or steering must not distort), said after the wake word.
const FREE_FR: [&str; 8] = [
    "Le plombier passera jeudi pour réparer la fuite sous l'évier.",
    "Quelle est la capitale de l'Australie et combien d'habitants compte-t-elle ?",
    "Penser à acheter de la farine, des œufs et une bougie pour dimanche.",
    "Peux-tu me conseiller un bon livre sur l'histoire de Rome ?",
    "Écris un petit poème sur les feuilles d'automne dans le parc.",
    "Comment faire une sauce tomate simple pour les pâtes ?",
    "La voiture a besoin de pneus neufs avant les vacances d'hiver.",
    "Raconte-moi une histoire drôle sur un chat et un violon.",
];

/// `texts` said by Kokoro (ff_siwis) at `speed`, 16 kHz (cached; one model load for all the
/// missing ones). Empty when the voice is not installed (`scripts/fetch-french-test-voice`).
pub(super) fn kokoro(texts: &[String], speed: f32) -> Vec<Vec<f32>> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/kokoro-say");
    let dir = std::env::temp_dir().join("arthur-voice-bench-noise");
    let _ = std::fs::create_dir_all(&dir);
    let paths: Vec<PathBuf> =
        texts.iter().map(|t| dir.join(format!("kokoro-{speed:.2}-{:016x}.wav", fnv(t)))).collect();
    let jobs: String = texts
        .iter()
        .zip(&paths)
        .filter(|(_, p)| !p.is_file())
        .map(|(t, p)| format!("{}\t{}\n", p.display(), t.replace(['\t', '\n'], " ")))
        .collect();
    if !jobs.is_empty() {
        use std::io::Write;
        let child = std::process::Command::new(&script)
            .args(["--batch", "--speed", &speed.to_string()])
            .stdin(std::process::Stdio::piped())
            .spawn();
        let ok = child.is_ok_and(|mut c| {
            let written = c.stdin.take().is_some_and(|mut i| i.write_all(jobs.as_bytes()).is_ok());
            c.wait().is_ok_and(|s| s.success()) && written
        });
        if !ok {
            return vec![Vec::new(); texts.len()];
        }
    }
    paths.iter().map(|p| wav::read_wav_16k_mono(p).unwrap_or_default()).collect()
}

/// What became of one command heard.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Right,
    Asked,
    /// A write the grammar is sure of whose tool or closed slot (date, hour, number, list,
    /// project, target) is not the one said: it would run. Must be 0.
    WrongWrite,
    /// The right write, but words of its free text (a reminder's text, an item) misheard.
    FreeWordsWrong,
    Missed,
}

/// Arguments that hold free text (what is stored as said); every other one is closed.
const FREE_ARGUMENTS: [&str; 5] = ["texte", "element", "contient", "requete", "description"];

pub(super) async fn part(maker: &NoiseMaker) {
    let dir = arthur::config::default_model_dir().expect("data dir");
    let tz = chrono_tz::Europe::Paris;
    let now = chrono::Utc::now();
    let lexicon = arthur_french::Lexicon {
        projects: vec!["Atlas".into(), "jardin".into()],
        lists: vec!["courses".into()],
        ..Default::default()
    };
    let sentences: Vec<&str> = arthur_voice::selftest::FRENCH
        .iter()
        .chain(BASICS.iter())
        .chain(ISSUE_40.iter())
        .copied()
        .filter(|s| {
            let command = understand(s, now, tz, &lexicon).reading != Reading::NotCommand;
            if !command {
                eprintln!("left out of ears-fr: the grammar does not read {s:?} as a command");
            }
            command
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let said: Vec<String> = sentences.iter().map(|s| format!("Arthur, {s}")).collect();
    let free_said: Vec<String> = FREE_FR.iter().map(|s| format!("Arthur, {s}")).collect();
    let voices = ["kokoro 1.0", "kokoro 1.2", "mbrola fr3 150"];
    // VOICE_BENCH_FR_VOICES=0,2 keeps some voices (a loaded machine runs a third faster).
    let wanted_voices: Vec<usize> = std::env::var("VOICE_BENCH_FR_VOICES")
        .ok()
        .map(|v| v.split(',').filter_map(|i| i.trim().parse().ok()).collect())
        .unwrap_or_else(|| (0..voices.len()).collect());
    let say = |v: usize, texts: &[String]| -> Vec<Vec<f32>> {
        match v {
            0 => kokoro(texts, 1.0),
            1 => kokoro(texts, 1.2),
            _ => texts.iter().map(|t| mbrola_fr3(t, 150)).collect(),
        }
    };
    let margin = RATE as usize * 3 / 10;
    let pad = |speech: &[f32]| {
        let mut pcm = vec![0.0; margin];
        pcm.extend(speech);
        pcm.extend(vec![0.0; margin]);
        pcm
    };
    type Clip<'a> = (usize, usize, Vec<f32>, Option<Room>, &'a str);
    let mut clips: Vec<Clip> = Vec::new();
    let mut free: Vec<(usize, Vec<f32>, &str)> = Vec::new();
    let mut present = Vec::new();
    for (v, voice) in voices.iter().enumerate().filter(|(v, _)| wanted_voices.contains(v)) {
        let speech = say(v, &said);
        if speech.iter().any(Vec::is_empty) {
            eprintln!("ears-fr: no {voice} here (scripts/fetch-french-test-voice)");
            continue;
        }
        present.push(v);
        for (pcm, s) in speech.iter().zip(&sentences) {
            clips.push((0, v, pad(pcm), None, s));
        }
        for (c, snr) in [(1usize, 12.0f32), (2, 6.0)] {
            let mut track = maker.make(Noise::Tv, (speech.len() * 8 + 4) as f32, 61 + v as u64 * 7 + c as u64);
            for (i, (pcm, s)) in speech.iter().zip(&sentences).enumerate() {
                let at = 2 * RATE as usize + i * 8 * RATE as usize;
                let span = noise::mix_at_snr(&mut track, at, pcm, snr);
                let background = 20.0 * wav::rms(&track[at - RATE as usize..at - margin]).max(1e-9).log10();
                let voiced = at + noise::first_voiced_sample(pcm)..at + noise::last_voiced_sample(pcm);
                let level = 20.0 * wav::rms(&track[voiced]).max(1e-9).log10();
                let room = Room { level_db: level, background_db: background };
                clips.push((c, v, track[span.start - margin..span.end + margin].to_vec(), Some(room), s));
            }
        }
        if v != 1 {
            for (pcm, s) in say(v, &free_said).iter().zip(FREE_FR.iter()) {
                free.push((v, pad(pcm), s));
            }
        }
    }
    let per = clips.iter().filter(|c| c.0 == 0).count();
    println!(
        "\n## French commands by ear (issue 40: {} sentences × {}; whisper base fr, greedy)",
        sentences.len(),
        present.iter().map(|v| voices[*v]).collect::<Vec<_>>().join(" + ")
    );
    println!(
        "Understood = the grammar reads the same tool and arguments, sure; asked = unsure or incomplete (the turn asks); \
         wrong writes = a write the grammar is sure of whose tool or closed slot is not the one said (must be 0); written, free text misheard = the right write with words of its text wrong. [per voice: {}]",
        present.iter().map(|v| voices[*v]).collect::<Vec<_>>().join(" / ")
    );
    println!(
        "| decoding | understood: silence | TV 12 dB | TV 6 dB | asked | wrong writes (frame or closed slot) | written, free text misheard | stored words wrong (free text) | free speech WER (Kokoro / MBROLA) | STT per command (median) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");

    let expected = |s: &str| understand(s, now, tz, &lexicon).reading;
    let read = |heard: &str| {
        let rest = strip_wake_word(heard, "Arthur");
        rest.map(|r| understand(&r, now, tz, &lexicon).reading)
    };
    let favoured = ears::favoured_words("Arthur", &lexicon);
    let phrases = arthur_voice::phrases::net(&ears::phrase_net("Arthur", &lexicon));
    // VOICE_BENCH_FR_THREADS=1: on a machine loaded by others, whisper's two threads spin
    // at each barrier; one thread gets the same counts sooner (the times are then not the
    // loop's).
    let threads = std::env::var("VOICE_BENCH_FR_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2);
    let plain = SttOptions {
        language: "fr".into(),
        initial_prompt: Some("Arthur".into()),
        adaptive_audio_ctx: true,
        threads,
        ..Default::default()
    };
    // Day names favoured too: free text mishears them (« jeudi » → « Jodi », « judy »).
    let days: Vec<String> = favoured
        .iter()
        .cloned()
        .chain(["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"].map(String::from))
        .collect();
    // (name, favour bonus, phrase penalty, gate, day names favoured)
    type Row = (String, Option<f32>, Option<f32>, Option<Confidence>, bool);
    let mut rows: Vec<Row> = vec![
        ("before: one plain reading".into(), None, None, None, false),
        ("favoured words, bonus 3 (shipped)".into(), Some(3.0), None, None, false),
        ("favoured words + day names, bonus 3".into(), Some(3.0), None, None, true),
    ];
    for p in [2.0f32, 4.0, 8.0] {
        rows.push((format!("favoured words + grammar as LM, penalty {p}"), Some(3.0), Some(p), None, false));
    }
    rows.push(("grammar as LM alone, penalty 4".into(), None, Some(4.0), None, false));
    rows.push(("favoured words + day names + grammar as LM, penalty 4".into(), Some(3.0), Some(4.0), None, true));
    let gated: Vec<_> = rows
        .iter()
        .skip(1)
        .map(|(n, f, p, _, d)| (format!("{n} + doubt gate"), *f, *p, Some(Confidence::MEASURED), *d))
        .collect();
    rows.extend(gated);
    if let Ok(only) = std::env::var("VOICE_BENCH_EARS_FR") {
        let keep: Vec<usize> = only.split(',').filter_map(|i| i.trim().parse().ok()).collect();
        rows = rows.into_iter().enumerate().filter(|(i, _)| keep.contains(i)).map(|(_, r)| r).collect();
    }
    let verbose = std::env::var_os("VOICE_BENCH_VERBOSE").is_some();
    let t = Transcriber::load(&dir.join("ggml-base.bin"), plain).expect("base");
    // Readings are the same for a row and its gated twin: decoded once per (favour, penalty, days).
    type Readings = (Vec<SteeredReading>, Vec<SteeredReading>, Vec<f64>);
    let mut cache: std::collections::HashMap<(Option<u32>, Option<u32>, bool), Readings> = Default::default();
    for (name, bonus, penalty, gate, with_days) in rows {
        let key = (bonus.map(f32::to_bits), penalty.map(f32::to_bits), with_days);
        if let std::collections::hash_map::Entry::Vacant(slot) = cache.entry(key) {
            let words = if with_days { &days } else { &favoured };
            let vocabulary = bonus.map(|b| t.vocabulary(&words.iter().map(String::as_str).collect::<Vec<_>>(), b));
            let steer = penalty.map(|p| (&phrases, p));
            let mut times = Vec::new();
            let mut readings = Vec::new();
            for (c, _, pcm, room, _) in &clips {
                let started = Instant::now();
                readings.push(t.read_steered(pcm, *room, Some("Arthur"), vocabulary.as_ref(), steer).unwrap());
                if *c == 0 {
                    times.push(started.elapsed().as_secs_f64());
                }
            }
            let free_readings = free
                .iter()
                .map(|(_, pcm, _)| t.read_steered(pcm, None, Some("Arthur"), vocabulary.as_ref(), steer).unwrap())
                .collect();
            slot.insert((readings, free_readings, times));
        }
        let (readings, free_readings, times) = &cache[&key];
        let mut understood = [0usize; 3];
        let mut by_voice = vec![[0usize; 3]; voices.len()];
        let (mut asked, mut wrong_writes, mut free_wrong) = (0, 0, 0);
        let (mut text_errors, mut text_words) = (0, 0);
        for ((c, v, _, _, sentence), r) in clips.iter().zip(readings) {
            let want = expected(sentence);
            let mut got = read(&r.text).unwrap_or(Reading::NotCommand);
            if let Some(gate) = gate {
                if gate.doubts(r.tokens.iter().map(|t| (t.text.as_str(), t.logprob, t.gap)), "Arthur") {
                    got = ears::doubted(got);
                }
            }
            let outcome = match (&got, &want) {
                (g, w) if g == w => Outcome::Right,
                (Reading::Unsure { .. } | Reading::Incomplete { .. }, _) => Outcome::Asked,
                (Reading::Sure(Command::Tool(g)), Reading::Sure(Command::Tool(w)))
                    if ears::writes(g) && g.name() == w.name() && {
                        let closed = |c: &arthur_agents::understand::ToolCommand| {
                            let mut a = c.arguments().unwrap_or_default();
                            if let Some(o) = a.as_object_mut() {
                                o.retain(|k, _| !FREE_ARGUMENTS.contains(&k.as_str()));
                            }
                            a
                        };
                        closed(g) == closed(w)
                    } =>
                {
                    Outcome::FreeWordsWrong
                }
                (Reading::Sure(Command::Tool(cmd)), _) if ears::writes(cmd) => Outcome::WrongWrite,
                _ => Outcome::Missed,
            };
            // Free text stored: the words of a write of the right tool, against what was said.
            if let (Reading::Sure(Command::Tool(g)), Reading::Sure(Command::Tool(w))) = (&got, &want) {
                if g.name() == w.name() && ears::writes(g) {
                    let (ga, wa) = (g.arguments().unwrap_or_default(), w.arguments().unwrap_or_default());
                    for (k, wv) in wa.as_object().into_iter().flatten() {
                        if let Some(ws) = wv.as_str().filter(|_| FREE_ARGUMENTS.contains(&k.as_str())) {
                            let expected = arthur_voice::selftest::comparable_words(ws);
                            let heard = arthur_voice::selftest::comparable_words(ga[k].as_str().unwrap_or_default());
                            let errors = arthur_voice::selftest::word_errors(&expected, &heard);
                            text_errors += errors;
                            text_words += expected.len();
                            if verbose && errors > 0 {
                                eprintln!("stored ({name}): {k} = {heard:?} for {expected:?}");
                            }
                        }
                    }
                }
            }
            match outcome {
                Outcome::Right => {
                    understood[*c] += 1;
                    by_voice[*v][*c] += 1;
                }
                Outcome::Asked => asked += 1,
                Outcome::WrongWrite => {
                    wrong_writes += 1;
                    eprintln!("WRONG WRITE ({name}, {}, condition {c}): {:?} for {sentence:?}", voices[*v], r.text);
                }
                Outcome::FreeWordsWrong => free_wrong += 1,
                Outcome::Missed => {}
            }
            if verbose && outcome != Outcome::Right {
                eprintln!("{outcome:?} ({name}, {}, condition {c}): {:?} for {sentence:?}", voices[*v], r.text);
            }
        }
        let mut wer = [(0usize, 0usize); 3];
        for ((v, _, said), r) in free.iter().zip(free_readings) {
            let heard = strip_wake_word(&r.text, "Arthur").unwrap_or_else(|| r.text.clone());
            let expected = arthur_voice::selftest::comparable_words(said);
            let got = arthur_voice::selftest::comparable_words(&heard);
            wer[*v].0 += arthur_voice::selftest::word_errors(&expected, &got);
            wer[*v].1 += expected.len();
            if verbose && expected != got {
                eprintln!("free speech ({name}, {}): {heard:?} for {said:?}", voices[*v]);
            }
        }
        let pct = |n: usize| format!("{n} of {per} ({:.0} %)", 100.0 * n as f64 / per.max(1) as f64);
        let detail = |c: usize| {
            format!(" [{}]", present.iter().map(|v| by_voice[*v][c].to_string()).collect::<Vec<_>>().join(" / "))
        };
        let rate = |(e, w): (usize, usize)| {
            if w == 0 {
                "—".into()
            } else {
                format!("{:.1} %", 100.0 * e as f64 / w as f64)
            }
        };
        println!(
            "| {name} | {}{} | {}{} | {}{} | {asked} | {wrong_writes} | {free_wrong} | {text_errors} of {text_words} | {} / {} | {:.3} s |",
            pct(understood[0]),
            detail(0),
            pct(understood[1]),
            detail(1),
            pct(understood[2]),
            detail(2),
            rate(wer[0]),
            rate(wer[2]),
            median(times.clone()),
        );
    }
}
