//! How the hands-free loop reads what was said, by code: the stop words (said alone they
//! only cut Arthur's speech), whether a transcript sounds like a finished sentence (it
//! shortens the silence that ends it), the grammar's reading (a whole command closes
//! the utterance at the pause; a command needs no wake word in the follow-up window), and
//! the grammar's verdict on the end of the turn at a pause ([`grammar_verdict`]).

use crate::turns::Verdict;

/// The stop words: said alone (after an optional wake word), they only cut Arthur's speech.
const STOP_WORDS: &[&str] = &[
    "stop",
    "stoppe",
    "arrete",
    "arretez",
    "arrete toi",
    "arrete de parler",
    "tais toi",
    "taisez vous",
    "tais",
    "chut",
    "silence",
    "ca suffit",
    "suffit",
    "assez",
    "c est bon",
    "stop stop",
    "ok stop",
    "d accord stop",
    "merci stop",
    "quiet",
    "be quiet",
    "shut up",
    "enough",
    "hush",
    "okay stop",
    "stop it",
    "stop talking",
];

/// Whether `text` (wake word already removed) is only a stop word.
pub fn is_stop_word(text: &str) -> bool {
    let n = arthur_audio::wake::normalize(text);
    !n.is_empty() && STOP_WORDS.contains(&n.as_str())
}

/// `text` without the stop words it starts with as clauses of their own ("Stop. Call my
/// mother." → "Call my mother."; "Stop the session." stays), as written.
pub fn strip_leading_stop_words(text: &str) -> &str {
    let mut rest = text.trim();
    loop {
        let Some(clause_end) = rest.find(['.', ',', '!', ';', ':', '?']) else {
            return if is_stop_word(rest) { "" } else { rest };
        };
        if !is_stop_word(&rest[..clause_end]) {
            return rest;
        }
        rest = rest[clause_end..].trim_start_matches(|c: char| !c.is_alphanumeric()).trim_start();
    }
}

/// Words a finished sentence does not end on.
const CONTINUATIONS: &[&str] = &[
    "et", "ou", "de", "du", "des", "le", "la", "les", "un", "une", "a", "au", "aux", "pour", "sur", "dans", "avec",
    "que", "qui", "mon", "ma", "mes", "ton", "ta", "the", "an", "to", "and", "or", "of", "for", "on", "in", "at",
    "with", "my", "your", "that", "me", "call", "appeler", "rappelle",
];

/// Whether a transcript reads as a finished sentence: closed by whisper with a full stop,
/// a question or an exclamation mark, not on a word that needs a continuation. Weaker
/// than the parser's reading (whisper punctuates fragments too): it only shortens the
/// hangover, it never closes the utterance at once.
pub fn sounds_finished(text: &str) -> bool {
    let t = text.trim();
    if !(t.ends_with('.') || t.ends_with('?') || t.ends_with('!')) || t.ends_with("...") || t.ends_with('…') {
        return false;
    }
    let words = arthur_audio::wake::normalize(t);
    let last = words.rsplit(' ').next().unwrap_or("");
    words.split(' ').count() >= 2 && !CONTINUATIONS.contains(&last)
}

/// Whether the grammar reads `text` as a whole command it is sure of.
pub fn parses_whole(text: &str, now: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> bool {
    let lexicon = arthur_french::Lexicon::default();
    matches!(
        arthur_agents::understand::understand(text, now, tz, &lexicon).reading,
        arthur_agents::understand::Reading::Sure(_)
    )
}

/// The grammar's verdict at a pause on what was said so far (`text`: the speculative
/// reading, wake word removed): finished when it reads a whole command it is sure of;
/// unfinished when the reading stops where a sentence cannot (on « à », « de », « et »…, on
/// a comma or a colon, on « … », whisper's mark of a hesitation), is a command still
/// missing its object or its time (« rappelle-moi », « rappelle-moi d'appeler Luc jeudi »,
/// « mets un minuteur de »), or ends on the items of a list (more may follow); else it
/// cannot tell (free speech, a command it would ask about for another reason).
pub fn grammar_verdict(text: &str, now: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> Verdict {
    use arthur_agents::understand::{Command, Doubt, Reading, ToolCommand};
    let text = strip_leading_stop_words(text);
    let t = text.trim();
    if t.is_empty() {
        return Verdict::Unknown;
    }
    if t.ends_with([',', ';', ':', '-', '…']) || t.ends_with("...") {
        return Verdict::Unfinished;
    }
    let words = arthur_audio::wake::normalize(t);
    let last = words.rsplit(' ').next().unwrap_or("");
    if CONTINUATIONS.contains(&last) || DANGLING.contains(&last) {
        return Verdict::Unfinished;
    }
    let lexicon = arthur_french::Lexicon::default();
    let reading = arthur_agents::understand::understand(t, now, tz, &lexicon).reading;
    // Items said last (« ajoute à la liste de courses du pain », « ajoute du beurre ») may
    // be the first of several: whisper ends the reading with a full stop all the same.
    if let Reading::Sure(Command::Tool(ToolCommand::AjouterAListe { element, .. }))
    | Reading::Unsure { command: Command::Tool(ToolCommand::AjouterAListe { element, .. }), .. } = &reading
    {
        if arthur_audio::wake::normalize(element).rsplit(' ').next() == Some(last) {
            return Verdict::Unfinished;
        }
    }
    match reading {
        Reading::Sure(_) => Verdict::Finished,
        Reading::Incomplete { .. } => Verdict::Unfinished,
        // A reminder without its hour, a date cut short, a piece missing: the user may be
        // about to say it.
        Reading::Unsure { doubt: Doubt::DefaultTime | Doubt::Vague | Doubt::Missing, .. } => Verdict::Unfinished,
        Reading::Unsure { .. } | Reading::NotCommand => {
            if COMMAND_OPENINGS.contains(&words.as_str()) {
                Verdict::Unfinished
            } else {
                Verdict::Unknown
            }
        }
    }
}

/// Words on which a French sentence is left hanging, beyond [`CONTINUATIONS`]: the
/// prepositions and articles before an hour, a date or a list item.
const DANGLING: &[&str] =
    &["en", "vers", "chez", "par", "d", "l", "j", "qu", "puis", "mais", "donc", "alors", "ni", "euh", "heu", "hum"];

/// A command's opening said alone: its object (what to remember, note, add) is still to come.
const COMMAND_OPENINGS: &[&str] = &[
    "rappelle moi",
    "rappel moi",
    "rappelle moi de",
    "rappel moi de",
    "rappelle moi demain",
    "rappel moi demain",
    "note",
    "prends note",
    "ajoute",
    "mets",
    "cree",
    "lance",
    "demarre",
    "je commence",
    "je commence a travailler",
    "remind me",
];

/// Whether the grammar takes `text` for a command (sure or not).
pub fn reads_as_command(text: &str, now: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> bool {
    let lexicon = arthur_french::Lexicon::default();
    arthur_agents::understand::understand(text, now, tz, &lexicon).is_command()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_alone_and_at_the_start() {
        for t in ["Stop.", "stop !", "Arrête.", "Tais-toi !", "Chut.", "Ça suffit.", "Shut up.", "Be quiet!"] {
            assert!(is_stop_word(t), "{t}");
        }
        for t in ["Stop the work session.", "Arrête la session.", "Stopper le chrono", "", "stop stop stop stop"] {
            assert!(!is_stop_word(t), "{t}");
        }
        assert_eq!(strip_leading_stop_words("Stop. Call my mother."), "Call my mother.");
        assert_eq!(strip_leading_stop_words("Chut, arrête : note du pain"), "note du pain");
        assert_eq!(strip_leading_stop_words("Stop the session."), "Stop the session.");
        assert_eq!(strip_leading_stop_words("Stop."), "");
    }

    #[test]
    fn only_a_whole_parse_closes_early() {
        let now = chrono::Utc::now();
        let tz = chrono_tz::Europe::Paris;
        assert!(parses_whole("rappelle-moi d'appeler la banque demain à 9 h", now, tz));
        assert!(parses_whole("note : acheter du pain", now, tz));
        assert!(!parses_whole("rappelle-moi d'appeler", now, tz), "a time would be guessed");
        assert!(!parses_whole("Remind me to call.", now, tz), "whisper's full stop is no proof");
        assert!(reads_as_command("rappelle-moi d'appeler", now, tz));
        assert!(sounds_finished("Remind me to call the bank tomorrow at nine."));
        assert!(!sounds_finished("Remind me to call."), "ends on a verb that wants its object");
        assert!(!sounds_finished("Remind me to call the"));
        assert!(!sounds_finished("Remind me to..."));
        assert!(!sounds_finished("Stop."), "one word");
    }

    /// What the grammar says at a pause, on readings whisper makes of commands cut where
    /// people hesitate, and of whole ones.
    #[test]
    fn the_grammar_judges_the_end_of_the_turn() {
        let now = chrono::Utc::now();
        let tz = chrono_tz::Europe::Paris;
        let verdict = |t| grammar_verdict(t, now, tz);
        for whole in [
            "Rappelle-moi demain à neuf heures d'appeler la banque.",
            "rappelle-moi d'appeler la banque demain à 9 h",
            "Note : acheter du pain.",
            "Ajoute du pain à la liste de courses.",
            "Mets un minuteur de dix minutes.",
        ] {
            assert_eq!(verdict(whole), Verdict::Finished, "{whole}");
        }
        for cut in [
            "Rappelle-moi.",
            "Rappelle-moi...",
            "Rappelle-moi demain à",
            "Rappelle-moi demain à.",
            "rappelle-moi d'appeler le dentiste jeudi",
            "Ajoute à la liste de courses du pain,",
            "Ajoute à la liste de courses du pain.",
            "Ajoute du beurre de la farine.",
            "Rappel-moi.",
            "Ajoute du beurre, de la farine et",
            "Note :",
            "Mets un minuteur de",
            "Stop. Rappelle-moi de",
        ] {
            assert_eq!(verdict(cut), Verdict::Unfinished, "{cut}");
        }
        for free in ["Quel temps fera-t-il demain ?", "Raconte-moi une histoire.", ""] {
            assert_eq!(verdict(free), Verdict::Unknown, "{free}");
        }
    }
}
