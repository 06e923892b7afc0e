//! The text model: a sentence cut into clauses of words, each word as written and folded,
//! each clause with what frames it (a question, an offer, a condition).

use super::lexicon::LEX;
use crate::text::normalise;

/// One word of a clause: as written (lower case, accents kept), folded, and whether it was
/// written with a capital (a name).
#[derive(Debug, Clone)]
pub(super) struct Word {
    pub raw: String,
    pub folded: String,
    pub capital: bool,
}

/// One clause and what frames it.
#[derive(Debug, Clone)]
pub(super) struct Clause {
    pub words: Vec<Word>,
    /// Folded words joined by single spaces, with a space at each end.
    pub joined: String,
    /// Ends with a question mark.
    pub asks: bool,
    /// Led by a question word or an offer ("quand", "veux-tu", "would you").
    pub question_led: bool,
    /// Continues a hypothetical clause: the consequence of "si…", the rest of a list
    /// after "je peux…" ("I can keep notes, set reminders…").
    pub inherited_frame: bool,
    /// Continues a condition ("si tu oublies, …", "quand le minuteur sera fini, …"): what
    /// it says is hypothetical, but a promise made in it is still a promise.
    pub after_condition: bool,
    /// Ends with a colon.
    pub colon: bool,
    /// Content that is not Arthur's word about himself or the memory: what follows "Un
    /// petit poème :", "Dis par exemple :", or the user's own deed after "Félicitations,".
    pub content: bool,
    /// Quoted content: what follows "Un petit poème :" or "Dis par exemple :".
    pub quoted: bool,
    /// Opens after "et", "ou", "mais"… in the same piece of the sentence.
    pub after_conjunction: bool,
    /// The sentence it belongs to asks something ("Entendu, mais quel jour ?").
    pub sentence_asks: bool,
    /// The sentence it belongs to sets a lasting change ("À partir de maintenant, je…").
    pub sentence_lasting: bool,
    /// Describes the noun phrase of the clause before it ("Une omelette aux champignons,
    /// prête en quinze minutes"): an apposition, not a receipt's headline.
    pub apposition: bool,
}

impl Clause {
    /// The folded word at `i`, or "" past the end.
    pub fn folded(&self, i: usize) -> &str {
        self.words.get(i).map(|w| w.folded.as_str()).unwrap_or("")
    }
    /// The word at `i` as written, or "" past the end.
    pub fn raw(&self, i: usize) -> &str {
        self.words.get(i).map(|w| w.raw.as_str()).unwrap_or("")
    }
    /// The folded word before `i`, or "".
    pub fn before(&self, i: usize) -> &str {
        if i == 0 {
            ""
        } else {
            self.folded(i - 1)
        }
    }
    /// Some word of the clause is in `set`.
    pub fn any(&self, set: &super::lexicon::Words) -> bool {
        self.words.iter().any(|w| set.has(&w.folded))
    }
    /// Index of the first word from `i` on that is not a clitic or an adverb.
    pub fn after_clitics(&self, mut i: usize) -> usize {
        while i < self.words.len() && LEX.clitics.has(self.folded(i)) {
            i += 1;
        }
        i
    }
    /// Opens on a frame that makes it hypothetical (a condition, a purpose, an
    /// instruction to the user), or continues one.
    pub fn framed(&self) -> bool {
        LEX.frame_leads.leads(&self.joined) || self.inherited_frame
    }
    /// Opens on a condition or a time clause ("si…", "une fois que…", "once…").
    pub fn conditional(&self) -> bool {
        LEX.condition_leads.leads(&self.joined)
    }
}

/// Joined words that must stay one word ("rendez-vous" is not "vous"); case is kept so
/// that names can be told apart.
pub(super) fn protect(text: &str) -> String {
    static JOINED: std::sync::LazyLock<Vec<(regex::Regex, &'static str)>> = std::sync::LazyLock::new(|| {
        LEX.joined
            .0
            .iter()
            .map(|(from, to)| (regex::Regex::new(&format!("(?i){}", regex::escape(from))).unwrap(), to.as_str()))
            .collect()
    });
    let mut t = text.replace(['’', '`', '´', 'ʼ'], "'");
    for (from, to) in JOINED.iter() {
        t = from.replace_all(&t, *to).into_owned();
    }
    t
}

/// Removes what is quoted: a quoted phrase is content, not the model's own claim. Only a
/// quote that closes counts: an unmatched mark hides nothing after it.
pub(super) fn unquote(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let quoted = quoted_mask(&chars);
    chars.iter().zip(quoted).filter(|(_, q)| !q).map(|(c, _)| *c).collect()
}

/// For each character, whether it lies inside a quote that opens and closes (the marks
/// included): « … », “ … ”, and straight quotes taken in pairs.
pub fn quoted_mask(chars: &[char]) -> Vec<bool> {
    let mut mask = vec![false; chars.len()];
    let mut opened = Vec::new();
    let mut straight = None;
    for (i, &c) in chars.iter().enumerate() {
        let span = match c {
            '«' | '“' => {
                opened.push(i);
                None
            }
            '»' | '”' => opened.pop().map(|o| (o, i)),
            '"' => match straight.take() {
                Some(o) => Some((o, i)),
                None => {
                    straight = Some(i);
                    None
                }
            },
            _ => None,
        };
        if let Some((from, to)) = span {
            mask[from..=to].iter_mut().for_each(|m| *m = true);
        }
    }
    mask
}

pub(super) fn words_of(text: &str) -> Vec<Word> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| Word {
            raw: w.to_lowercase(),
            folded: normalise(w),
            capital: w.chars().next().is_some_and(char::is_uppercase),
        })
        .collect()
}

/// Folded words joined by single spaces, with a space at each end.
pub(super) fn join(words: &[Word]) -> String {
    format!(" {} ", words.iter().map(|w| w.folded.as_str()).collect::<Vec<_>>().join(" "))
}

/// Splits a sentence into clauses at punctuation and coordinating conjunctions.
pub(super) fn clauses(sentence: &str) -> Vec<Clause> {
    let text = protect(&unquote(sentence));
    let mut pieces: Vec<(String, char)> = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if matches!(c, ',' | ';' | ':' | '!' | '?' | '…' | '(' | ')' | '—' | '–' | '.' | '\n') {
            pieces.push((std::mem::take(&mut current), c));
        } else {
            current.push(c);
        }
    }
    pieces.push((current, ' '));
    let mut out = Vec::new();
    for (piece, end) in pieces {
        let asks = end == '?';
        let words = words_of(&piece);
        // Coordinated clauses: "je l'ai noté et je te le rappellerai".
        let mut start = 0;
        let mut groups = Vec::new();
        for (i, w) in words.iter().enumerate() {
            // "elle est alors décalée": after an auxiliary or a copula, an adverb.
            let adverb = i > 0 && (LEX.copulas.has(&words[i - 1].folded) || LEX.past_aux.has(&words[i - 1].folded));
            if i > start && LEX.conjunctions.has(&w.folded) && !adverb {
                groups.push(words[start..i].to_vec());
                start = i + 1;
            }
        }
        groups.push(words[start.min(words.len())..].to_vec());
        let last = groups.len() - 1;
        for (gi, words) in groups.into_iter().enumerate() {
            if words.is_empty() {
                continue;
            }
            let colon = end == ':' && gi == last;
            // ", et c'est prêt": a clause that opens on a conjunction follows one too.
            let after_conjunction = gi > 0 || LEX.conjunctions.has(&words[0].folded);
            let joined = join(&words);
            // "mais à quelle heure ?", "mais pour quand ?", "for what time?": the question
            // word after a conjunction or a preposition.
            let linking = |w: &Word| LEX.conjunctions.has(&w.folded) || LEX.prepositions.has(&w.folded);
            let linked = words.iter().take(2).take_while(|w| linking(w)).count();
            let question_led = (0..=linked).any(|k| LEX.question_leads.leads(&join(&words[k..])));
            out.push(Clause {
                words,
                joined,
                asks,
                question_led,
                inherited_frame: false,
                after_condition: false,
                colon,
                content: false,
                quoted: false,
                after_conjunction,
                sentence_asks: false,
                sentence_lasting: false,
                apposition: false,
            });
        }
    }
    out
}

/// The clauses of a sentence, with the frames one clause passes to the next: the
/// consequence of "si…", the rest of a list after "je peux…".
pub(super) fn framed_clauses(sentence: &str) -> Vec<Clause> {
    let mut clauses = clauses(sentence);
    let sentence_asks = clauses.iter().any(|c| c.asks);
    let sentence_lasting = clauses.iter().any(|c| LEX.lasting.in_(&c.joined));
    for c in clauses.iter_mut() {
        c.sentence_asks = sentence_asks;
        c.sentence_lasting = sentence_lasting;
    }
    // "Un petit poème : …", "Dis simplement : rappelle-moi…": what follows the colon is
    // content, not Arthur's word.
    if let Some(intro) = clauses.iter().position(|c| {
        c.colon
            && (LEX.say_leads.leads(&c.joined)
                || c.any(&LEX.genres)
                || c.words.iter().any(|w| LEX.say_verbs.has(&w.folded)))
    }) {
        let genre = clauses[intro].any(&LEX.genres);
        for c in clauses.iter_mut().skip(intro + 1) {
            // "Dis-moi si ça te va : j'ai programmé le rappel" is Arthur's own word again.
            c.content = genre || !c.any(&LEX.first_person);
            c.quoted = c.content;
        }
    }
    for k in 1..clauses.len() {
        let outcome = {
            // "Félicitations, c'est fait !": the user's deed; "Ajoute un filet d'huile
            // d'olive et c'est prêt": an instruction and its outcome.
            let (prev, next) = (&clauses[k - 1], &clauses[k]);
            let impersonal = !next.any(&LEX.first_person)
                && !next.any(&LEX.user_mentions)
                && !next.words.iter().any(|w| is_memory_word(&w.folded))
                && next.words.iter().all(|w| !matches_state(&w.raw) || LEX.completion.has(&w.raw));
            let head = &prev.words[0];
            let instruction = !is_participle(&head.raw)
                && (LEX.imperatives.has(&head.folded) || LEX.present_verbs.has(&head.folded))
                && !prev.framed();
            (LEX.praise.leads(&prev.joined) || instruction && next.after_conjunction) && impersonal
        };
        if outcome {
            clauses[k].content = true;
        }
        let prev = &clauses[k - 1];
        let condition = LEX.condition_leads.leads(&prev.joined);
        let hypothetical = condition || modal_clause(prev) || prev.inherited_frame;
        let prev_after_condition = prev.after_condition;
        let head = clauses[k].folded(0).to_string();
        let continues = clauses[k].after_conjunction
            || LEX.continuation_endings.ending_of(&head)
            || LEX.present_verbs.has(&head) && clauses[k].words[0].raw.is_ascii()
            || LEX.continuation_heads.has(&head)
            || clauses[k].words[0].raw.is_ascii()
                && !clauses[k].any(&LEX.first_person)
                && !LEX.subject_pronouns.has(&head)
                && !LEX.determiners.has(&head)
                && !LEX.user_possessives.has(&head)
                && !clauses[k].words[0].capital;
        if hypothetical && (condition || continues) {
            clauses[k].inherited_frame = true;
            clauses[k].after_condition = condition || prev_after_condition;
        }
        let (prev, next) = (&clauses[k - 1], &clauses[k]);
        // "Dis-moi l'heure et je le programme", "just tell me the time and I'll set it up":
        // what waits on the user's answer is an offer.
        let lead = if LEX.lead_adverbs.has(prev.folded(0)) { join(&prev.words[1..]) } else { prev.joined.clone() };
        let awaits_answer = LEX.answer_leads.leads(&lead) && next.after_conjunction;
        // "prends dix minutes pour lister tes rendez-vous et tes trois priorités": a noun
        // phrase after « et » is one more object of the instruction.
        let prev_head = &prev.words[0];
        let instruction = !is_participle(&prev_head.raw)
            && (LEX.imperatives.has(&prev_head.folded) || LEX.present_verbs.has(&prev_head.folded));
        let noun_phrase = LEX.determiners.has(next.folded(0)) || LEX.user_possessives.has(next.folded(0));
        let more_objects = instruction && next.after_conjunction && noun_phrase && !has_verb(next);
        if awaits_answer || more_objects {
            clauses[k].inherited_frame = true;
        }
        // "Une omelette aux champignons, prête en quinze minutes": what follows a noun
        // phrase of the world describes it.
        let prev = &clauses[k - 1];
        let worldly_noun_phrase = LEX.determiners.has(prev.folded(0)) && !names_memory(prev);
        let next = &clauses[k];
        if worldly_noun_phrase && !next.after_conjunction && !names_memory(next) && matches_state(&next.words[0].raw) {
            clauses[k].apposition = true;
        }
    }
    // "Tu m'as demandé de te rappeler l'anniversaire de ta mère : pour quelle date ?": the
    // user's request of this conversation, echoed to ask what it lacks, is not a record.
    if clauses.iter().any(|c| c.asks && c.question_led) {
        for c in clauses.iter_mut().filter(|c| !c.asks && echoes_request(c)) {
            c.content = true;
        }
    }
    clauses
}

/// The user's words of this conversation told back: "tu m'as demandé", "tu as dit", "you
/// said" (a past perfect, "tu m'avais dit", is older than the conversation).
fn echoes_request(c: &Clause) -> bool {
    c.words.iter().enumerate().any(|(i, w)| {
        let verb = c.after_clitics(i + 1);
        LEX.user_subject.has(&w.folded)
            && (LEX.echo_said.has(c.raw(verb))
                || LEX.echo_aux.has(c.folded(verb)) && LEX.echo_said.has(c.raw(c.after_clitics(verb + 1))))
    })
}

/// Names one of the memory's things or an operation on them.
fn names_memory(c: &Clause) -> bool {
    c.words
        .iter()
        .any(|w| is_memory_word(&w.folded) || LEX.operation_nouns.has(&w.folded) || LEX.user_possessives.has(&w.folded))
}

/// Some word of the clause is a verb form: a subject pronoun, a copula, an auxiliary or a
/// state ("priorités" only ends like a participle).
fn has_verb(c: &Clause) -> bool {
    c.words.iter().any(|w| {
        LEX.subject_pronouns.has(&w.folded)
            || LEX.copulas.has(&w.folded)
            || LEX.third_person_aux.has(&w.folded)
            || matches_state(&w.raw)
    })
}

/// A rate ("toutes les 5 minutes", "3 rappels par jour"): a rule, not a count nor the
/// user's life. "Tous les mercredis", "every Sunday" are a schedule, not a rate.
pub(super) fn rate(c: &Clause) -> bool {
    c.words.windows(2).any(|w| LEX.rate_marks.has(&w[0].folded) && LEX.rate_units.has(&w[1].folded))
        || c.words.iter().enumerate().any(|(i, w)| {
            LEX.every_words.has(&w.folded) && c.words[i + 1..].iter().take(3).any(|u| LEX.measure_units.has(&u.folded))
        })
}

/// Set in history: a century, an era, or a year after "en"/"in" — the world's story.
pub(super) fn historical(c: &Clause) -> bool {
    c.any(&LEX.eras)
        || c.words.iter().enumerate().any(|(i, w)| {
            w.folded.len() == 4
                && w.folded.chars().all(|ch| ch.is_ascii_digit())
                && LEX.year_marks.has(c.before(i))
                && !LEX.hour_units.has(c.folded(i + 1))
        })
}

/// A subject followed by a modal: "je peux…", "tu pourrais…", "on peut…" — a capability
/// or an offer, not a statement of what is stored or done.
pub(super) fn modal_clause(c: &Clause) -> bool {
    c.words.iter().enumerate().any(|(i, w)| {
        let m = c.after_clitics(i + 1);
        // "je sais que tu…" knows; "je sais le faire" can.
        LEX.persons.has(&w.folded)
            && LEX.modals.has(c.folded(m))
            && !(LEX.knowing.has(c.folded(m)) && LEX.que.has(c.folded(m + 1)))
    })
}

/// Ends like a past participle written with its accent, or an English "-ed", or is an
/// irregular one.
pub(super) fn is_participle(raw: &str) -> bool {
    if LEX.irregular_participles.has(raw) {
        return true;
    }
    (LEX.participle_endings.ending_of(raw) && raw.chars().count() > 2)
        || (raw.ends_with("ed") && raw.len() > 4 && raw.is_ascii())
}

/// Looks like a participle once an auxiliary says one must follow ("a été prévenu",
/// "je n'ai pas réussi"): the endings of the second and third groups too.
pub(super) fn is_participle_after_aux(raw: &str) -> bool {
    is_participle(raw)
        || (raw.chars().count() > 3 && LEX.participle_endings_after_aux.ending_of(raw) && !LEX.not_participles.has(raw))
}

/// A word of what became of something ("noté", "ajoutées", "done"): agreement endings
/// accepted.
pub(super) fn matches_state(raw: &str) -> bool {
    LEX.state_words.has(raw)
        || raw.strip_suffix("es").is_some_and(|r| LEX.state_words.has(r))
        || raw.strip_suffix('e').is_some_and(|r| LEX.state_words.has(r))
        || raw.strip_suffix('s').is_some_and(|r| LEX.state_words.has(r))
}

/// One of the memory's nouns, singular or plural.
pub(super) fn is_memory_word(folded: &str) -> bool {
    LEX.memory_nouns.has(folded) || LEX.memory_nouns.has(folded.trim_end_matches('s'))
}

pub(super) fn is_number(w: &Word) -> bool {
    w.folded.chars().any(|c| c.is_ascii_digit()) || LEX.number_words.has(&w.folded)
}

pub(super) fn has_number(c: &Clause) -> bool {
    c.words.iter().any(is_number)
}

/// A figure in the clause: a number, or an English hour said in words ("at nine").
pub(super) fn counted(c: &Clause) -> bool {
    has_number(c) || c.any(&LEX.english_hours)
}

/// A time word anywhere: a day, a part of the day, an hour, a unit of time.
pub(super) fn has_time(c: &Clause) -> bool {
    c.words.iter().any(|w| {
        LEX.time_words.has(&w.folded)
            || (w.folded.chars().any(|ch| ch.is_ascii_digit()) && (w.folded.ends_with('h') || w.folded.contains('h')))
    }) || LEX.time_phrases.in_(&c.joined)
}

/// A moment that names a day or an hour ("jeudi", "demain", "à 14 h", "le 3/12"), not
/// a mere unit ("une heure", "la semaine").
pub(super) fn has_specific_time(c: &Clause) -> bool {
    c.words.iter().enumerate().any(|(i, w)| {
        let f = w.folded.as_str();
        LEX.days.has(f)
            || (f.chars().any(|ch| ch.is_ascii_digit()) && f.contains('h'))
            || ((f.chars().all(|ch| ch.is_ascii_digit()) || LEX.number_words.has(f))
                && LEX.hour_units.has(c.folded(i + 1))
                && !LEX.duration_marks.has(c.before(i)))
    }) || LEX.specific_time_phrases.in_(&c.joined)
}
