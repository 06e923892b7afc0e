//! Turn-taking in the hands-free loop as a pure machine: what the loop remembers between
//! two events (the utterance being collected, an interruption, a command cut and waiting
//! for its end, when Arthur last stopped speaking), and for each event what it becomes and
//! what the loop must do. [`next`] does no I/O: transcriptions, turns, the speaker and the
//! clock stay in [`crate::listen`], which hands their results back as events. The wake
//! word and follow-up windows are the audio crate's own machine (`wake::Listener`).
//!
//! When the user pauses, two judges say whether they have finished: Smart Turn on the
//! sound, the grammar on the speculative reading ([`Verdict`]). The utterance closes at
//! once when both say finished, waits up to [`Silences::unfinished_ms`] when either says
//! unfinished, and otherwise keeps the silences of before (400 ms after a sentence that
//! sounds finished, 600 ms else). Without the sound's judge (`Rules::by_meaning` off, or no
//! model), a reading the grammar is sure of closes alone, as before issue 41.

/// One judge's view of whether the user has finished their turn, at a pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verdict {
    /// The turn is over: the sound falls like an end (Smart Turn), or the grammar reads a
    /// whole command it is sure of.
    Finished,
    /// More is coming: the sound is held open, or the reading stops on « à », on a comma,
    /// on a command without its object (« rappelle-moi »).
    Unfinished,
    /// This judge cannot tell (free speech for the grammar; no model for the sound).
    #[default]
    Unknown,
}

/// The silences that close an utterance (ms), by what is known of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Silences {
    /// Nothing known (the detector's own hangover).
    pub open_ms: u32,
    /// The reading sounds like a finished sentence.
    pub finished_ms: u32,
    /// A judge said unfinished: the user is given this long to go on.
    pub unfinished_ms: u32,
}

impl Silences {
    /// 600 ms, 400 after a sentence that sounds finished, 2 s when a judge says more is coming.
    pub const DEFAULT: Self = Self { open_ms: 600, finished_ms: 400, unfinished_ms: 2_000 };
}

/// The utterance being collected, as turn-taking sees it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Collecting {
    /// Nothing known yet: the listener will judge it when it closes.
    #[default]
    Open,
    /// What was said so far sounds finished: 400 ms of silence close it (not 600).
    SoundsFinished,
    /// A judge said the user has not finished: the silence may last up to
    /// [`Silences::unfinished_ms`] before it closes.
    Unfinished,
    /// Its start was decoded and has no wake word (that transcript): nothing more of it is
    /// decoded, and it is ignored when it closes.
    NotForArthur(String),
}

/// A transcript made during the user's pause, kept while no more speech comes.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    pub transcript: String,
    /// Length of the utterance (samples) when it was made.
    pub len: usize,
    pub millis: u64,
}

/// A command cut by an interruption, waiting for the rest until `until_secs`; `X` is what
/// the loop records of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Held<X> {
    pub text: String,
    pub until_secs: f64,
    pub record: X,
}

/// What the loop remembers between two events.
#[derive(Debug, Clone, PartialEq)]
pub struct State<X> {
    pub collecting: Collecting,
    /// The utterance being collected started during an answer and did not cut it (the
    /// room, or what is left of Arthur's echo): only its words can make it count.
    pub began_in_answer: bool,
    /// The next utterance cut an answer or follows a stop word: it is for Arthur.
    pub interrupting: bool,
    pub partial: Option<Partial>,
    pub held: Option<Held<X>>,
    /// When Arthur last stopped speaking (audio seconds); `None` before any answer.
    pub answer_end_secs: Option<f64>,
}

impl<X> Default for State<X> {
    fn default() -> Self {
        Self {
            collecting: Collecting::Open,
            began_in_answer: false,
            interrupting: false,
            partial: None,
            held: None,
            answer_end_secs: None,
        }
    }
}

/// The tuning's rules of turn-taking (see `listen::Tuning`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// Barge-in and the follow-up window need the user (foreground speech, or words).
    pub user_only: bool,
    /// A stop word this long after an answer (seconds) still only cuts the speech;
    /// `None`: stop words are commands like any other.
    pub stop_window: Option<f64>,
    /// A command cut by an interruption waits for the rest this long (seconds; 0: never).
    pub rejoin_secs: f64,
    /// The wake word is looked for in the start of a long utterance first.
    pub wake_prefix: bool,
    /// The end of a turn is judged by its sound and its meaning (issue 41); off: by the
    /// grammar's sure reading and silences alone, as before.
    pub by_meaning: bool,
    pub silences: Silences,
}

impl Rules {
    /// The silence (ms) after which the utterance closes, as it is collected now.
    pub fn closing_ms(&self, collecting: &Collecting) -> u32 {
        match collecting {
            Collecting::SoundsFinished => self.silences.finished_ms,
            Collecting::Unfinished => self.silences.unfinished_ms,
            Collecting::Open | Collecting::NotForArthur(_) => self.silences.open_ms,
        }
    }
}

/// How an answer (or an announcement) being spoken ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Finished,
    /// The user's speech cut it.
    BargeIn,
    /// A key, or the input ended.
    Other,
}

/// What happened, as the loop tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<X> {
    /// The detector heard speech begin; `playing`: something is being played.
    SpeechStarted { foreground: bool, playing: bool },
    /// A frame brought no detector event: `silence_ms` of silence followed what was said
    /// so far (0 when nothing is being collected); `speech_now` while speech goes on.
    Quiet { secs: f64, speech_now: bool, silence_ms: u32 },
    /// The user paused; `needs_wake`: the listener wants the wake word now; `long`: the
    /// utterance is long enough that only its start is decoded first.
    Paused { needs_wake: bool, long: bool },
    /// The start of the utterance was decoded: no wake word in it.
    NoWakeWord { prefix: String },
    /// What was said so far was decoded during the pause: whether the listener would take
    /// it, the grammar's verdict on that reading, the sound's verdict (Smart Turn, judged
    /// on the same audio; `Unknown` without it), and whether the reading sounds finished.
    PauseDecoded { partial: Partial, taken: bool, grammar: Verdict, audio: Verdict, sounds_finished: bool },
    /// The detector closed the utterance; its speech ended at `speech_end` (samples).
    Closed { speech_end: usize },
    /// Speech heard during (or begun in) an answer cut it by its words (the wake word, a
    /// stop word): this transcript is judged.
    WordsCut { transcript: String },
    /// The closed utterance was decoded: whether it is a stop word (wake word removed),
    /// whether something plays, its length, and what it says without leading stop words.
    Decoded { secs: f64, playing: bool, stop_word: bool, utterance_secs: f64, rest: String, interrupting: bool },
    /// The listener took a command; whether the grammar reads it as one.
    Command { secs: f64, text: String, reads_as_command: bool, interrupting: bool, record: X },
    /// A stop word only cut the speech.
    StoppedSpeech,
    /// Arthur's answer ended (`speech_now`: the user was already speaking).
    AnswerEnded { secs: f64, ended: Ended, speech_now: bool },
    /// An announcement (due reminder, timer) ended.
    AnnouncementEnded { secs: f64, ended: Ended },
    /// The input ended.
    InputEnded,
}

/// What the loop must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action<X> {
    /// Stop what is being played.
    StopSpeaking,
    /// Close the utterance now (its silence is enough).
    Close,
    /// Keep the utterance open through a silence this long (ms): a judge said the user has
    /// not finished (the detector's own hangover would close it sooner).
    HoldOpen { ms: u32 },
    /// Decode the start of the utterance, looking for the wake word (then
    /// [`Event::NoWakeWord`] or, found, decode what was said so far).
    DecodePrefix,
    /// Decode what was said so far (then [`Event::PauseDecoded`]).
    DecodeSoFar,
    /// Close the utterance now and take it with this transcript (made at the pause).
    CloseWith { transcript: String, millis: u64 },
    /// The closed utterance began during an answer: only a wake word or a stop word in it
    /// makes it count.
    CheckWords,
    /// The closed utterance was not for Arthur: record it as ignored (with this transcript).
    Ignore { transcript: String },
    /// Judge the closed utterance (the transcript made at the pause, if still whole);
    /// `interrupting`: it cut an answer.
    Judge { transcript: Option<(String, u64)>, interrupting: bool },
    /// A stop word near an answer: the speech is cut; the loop asks whether it
    /// acknowledges a ringing timer (then it runs as a command), else [`Event::StoppedSpeech`].
    StopWord,
    /// Run a command's turn.
    Run { text: String, record: X },
    /// Run the command joined with the one held: `earlier` is the record of the held part.
    Rejoin { text: String, earlier: X },
    /// Let the listener take the next utterance without the wake word (the user is
    /// addressing Arthur).
    Answered,
    /// Give the listener the decoded utterance (no stop word, nothing held took it).
    Listen,
}

/// The transition: `state` after `event`, and the actions, in order. Pure.
pub fn next<X>(rules: &Rules, mut s: State<X>, event: Event<X>) -> (State<X>, Vec<Action<X>>) {
    let mut act = Vec::new();
    match event {
        Event::SpeechStarted { foreground, playing } => {
            s.partial = None;
            s.collecting = Collecting::Open;
            s.began_in_answer = false;
            if playing && (foreground || !rules.user_only) {
                // An earcon, or the tail of an answer: the user is talking over it.
                act.push(Action::StopSpeaking);
            }
        }
        Event::Quiet { secs, speech_now, silence_ms } => {
            // (The detector's own hangover closes an open utterance at the same silence; a
            // hold asked for an earlier pause must not outlive a new judgement.)
            if silence_ms > 0 && silence_ms >= rules.closing_ms(&s.collecting) {
                // The user stayed silent as long as what was said allows.
                s.collecting = Collecting::Open;
                act.push(Action::Close);
            } else if s.held.as_ref().is_some_and(|h| secs > h.until_secs && !speech_now) {
                let held = s.held.take().expect("checked");
                act.push(Action::Run { text: held.text, record: held.record });
            }
        }
        Event::Paused { needs_wake, long } => match s.collecting {
            Collecting::NotForArthur(_) => {} // not for Arthur: nothing more is decoded
            _ if needs_wake && !s.interrupting && rules.wake_prefix && long => act.push(Action::DecodePrefix),
            _ => act.push(Action::DecodeSoFar),
        },
        Event::NoWakeWord { prefix } => s.collecting = Collecting::NotForArthur(prefix),
        Event::PauseDecoded { partial, taken, grammar, audio, sounds_finished } => {
            let mine = taken && !s.interrupting;
            // Without the sound's judge, the grammar's sure reading closes alone (as before).
            let by_meaning = rules.by_meaning && audio != Verdict::Unknown;
            let finished = grammar == Verdict::Finished && (!by_meaning || audio == Verdict::Finished);
            let unfinished = by_meaning && (grammar == Verdict::Unfinished || audio == Verdict::Unfinished);
            if mine && finished {
                // Closed here, judged with this reading: nothing of it is left to collect.
                s.collecting = Collecting::Open;
                s.partial = None;
                act.push(Action::CloseWith { transcript: partial.transcript, millis: partial.millis });
            } else {
                // What interrupts Arthur may be cut by his stopping: it waits for the hangover.
                s.collecting = if mine && unfinished {
                    act.push(Action::HoldOpen { ms: rules.silences.unfinished_ms });
                    Collecting::Unfinished
                } else if mine && sounds_finished {
                    Collecting::SoundsFinished
                } else {
                    Collecting::Open
                };
                s.partial = Some(partial);
            }
        }
        Event::Closed { speech_end } => {
            let partial = s.partial.take().filter(|p| p.len >= speech_end);
            let collecting = std::mem::take(&mut s.collecting);
            if std::mem::take(&mut s.began_in_answer) && rules.user_only {
                act.push(Action::CheckWords);
            } else if let Collecting::NotForArthur(prefix) = collecting {
                act.push(Action::Ignore { transcript: prefix });
            } else {
                let interrupting = std::mem::take(&mut s.interrupting);
                act.push(Action::Judge { transcript: partial.map(|p| (p.transcript, p.millis)), interrupting });
            }
        }
        Event::WordsCut { transcript } => {
            let interrupting = std::mem::take(&mut s.interrupting);
            act.push(Action::Judge { transcript: Some((transcript, 0)), interrupting });
        }
        Event::Decoded { secs, playing, stop_word, utterance_secs, rest, interrupting } => {
            let near_answer = playing
                || interrupting
                || s.answer_end_secs.is_some_and(|end| rules.stop_window.is_some_and(|w| secs - end <= w));
            if rules.stop_window.is_some() && near_answer && stop_word {
                act.push(Action::StopSpeaking);
                act.push(Action::StopWord);
            } else {
                if let Some(held) = s.held.take() {
                    if secs <= held.until_secs + utterance_secs {
                        // The rest of a command cut by an interruption.
                        let text = format!("{} {}", held.text.trim_end(), rest);
                        act.push(Action::Rejoin { text, earlier: held.record });
                        return (s, act);
                    }
                    act.push(Action::Run { text: held.text, record: held.record });
                }
                act.push(Action::Listen);
            }
        }
        Event::Command { secs, text, reads_as_command, interrupting, record } => {
            // A command that cut Arthur may itself be cut (he stopped, the user paused):
            // unless the grammar reads it whole, wait a moment for the rest.
            if interrupting && rules.rejoin_secs > 0.0 && !reads_as_command {
                s.held = Some(Held { text, until_secs: secs + rules.rejoin_secs, record });
                act.push(Action::Answered);
            } else {
                act.push(Action::Run { text, record });
            }
        }
        Event::StoppedSpeech => {
            // The user is addressing Arthur: what follows at once is for him too.
            act.push(Action::Answered);
            s.interrupting = true;
        }
        Event::AnswerEnded { secs, ended, speech_now } => {
            s.interrupting |= ended == Ended::BargeIn;
            s.answer_end_secs = Some(secs);
            s.began_in_answer = ended == Ended::Finished && speech_now;
        }
        Event::AnnouncementEnded { secs, ended } => {
            s.answer_end_secs = Some(secs);
            if ended == Ended::BargeIn {
                act.push(Action::Answered);
                s.interrupting = true;
            }
        }
        Event::InputEnded => {
            if let Some(held) = s.held.take() {
                act.push(Action::Run { text: held.text, record: held.record });
            }
        }
    }
    (s, act)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOM: Rules = Rules {
        user_only: true,
        stop_window: Some(5.0),
        rejoin_secs: 1.2,
        wake_prefix: true,
        by_meaning: true,
        silences: Silences::DEFAULT,
    };
    /// The room without Smart Turn (no model): the silences of before issue 41.
    const ROOM_SILENCES: Rules = Rules { by_meaning: false, ..ROOM };
    const BEFORE_ROOM: Rules = Rules {
        user_only: false,
        stop_window: None,
        rejoin_secs: 0.0,
        wake_prefix: false,
        by_meaning: false,
        silences: Silences::DEFAULT,
    };
    const VERDICTS: [Verdict; 3] = [Verdict::Finished, Verdict::Unfinished, Verdict::Unknown];

    type S = State<&'static str>;
    type E = Event<&'static str>;
    type A = Action<&'static str>;

    fn partial(t: &str, len: usize) -> Partial {
        Partial { transcript: t.into(), len, millis: 120 }
    }

    /// Every state the loop can be in, by its finite parts: what is being collected, begun
    /// in an answer or not, interrupting or not, a partial or not, a command held or not,
    /// an answer heard or not.
    fn states() -> Vec<S> {
        let mut out = Vec::new();
        for collecting in [
            Collecting::Open,
            Collecting::SoundsFinished,
            Collecting::Unfinished,
            Collecting::NotForArthur("hm".into()),
        ] {
            for bits in 0..16u8 {
                out.push(State {
                    collecting: collecting.clone(),
                    began_in_answer: bits & 1 != 0,
                    interrupting: bits & 2 != 0,
                    partial: (bits & 4 != 0).then(|| partial("note du pain", 16_000)),
                    held: (bits & 8 != 0).then(|| Held {
                        text: "rappelle-moi".into(),
                        until_secs: 10.0,
                        record: "held",
                    }),
                    answer_end_secs: (bits & 1 != 0).then_some(9.0),
                });
            }
        }
        out
    }

    /// Every event, each with the variations of its facts.
    fn events() -> Vec<E> {
        let mut out = Vec::new();
        for (foreground, playing) in [(false, false), (false, true), (true, false), (true, true)] {
            out.push(Event::SpeechStarted { foreground, playing });
        }
        for (secs, speech_now, silence_ms) in [
            (9.5, false, 0),
            (11.0, false, 0),
            (11.0, true, 0),
            (11.0, false, 450),
            (11.0, true, 90),
            (11.0, false, 700),
            (11.0, false, 2_100),
        ] {
            out.push(Event::Quiet { secs, speech_now, silence_ms });
        }
        for (needs_wake, long) in [(false, false), (true, false), (true, true), (false, true)] {
            out.push(Event::Paused { needs_wake, long });
        }
        out.push(Event::NoWakeWord { prefix: "la télé".into() });
        for bits in 0..4u8 {
            for grammar in VERDICTS {
                for audio in VERDICTS {
                    out.push(Event::PauseDecoded {
                        partial: partial("note du pain.", 20_000),
                        taken: bits & 1 != 0,
                        grammar,
                        audio,
                        sounds_finished: bits & 2 != 0,
                    });
                }
            }
        }
        out.push(Event::Closed { speech_end: 12_000 });
        out.push(Event::Closed { speech_end: 18_000 });
        for bits in 0..16u8 {
            out.push(Event::Decoded {
                secs: if bits & 8 != 0 { 10.5 } else { 30.0 },
                playing: bits & 1 != 0,
                stop_word: bits & 2 != 0,
                utterance_secs: 1.0,
                rest: "la banque".into(),
                interrupting: bits & 4 != 0,
            });
        }
        for bits in 0..4u8 {
            out.push(Event::Command {
                secs: 12.0,
                text: "rappelle-moi".into(),
                reads_as_command: bits & 1 != 0,
                interrupting: bits & 2 != 0,
                record: "cmd",
            });
        }
        out.push(Event::StoppedSpeech);
        out.push(Event::WordsCut { transcript: "Arthur, stop.".into() });
        for ended in [Ended::Finished, Ended::BargeIn, Ended::Other] {
            for speech_now in [false, true] {
                out.push(Event::AnswerEnded { secs: 20.0, ended, speech_now });
            }
            out.push(Event::AnnouncementEnded { secs: 20.0, ended });
        }
        out.push(Event::InputEnded);
        out
    }

    fn runs(actions: &[A]) -> usize {
        actions.iter().filter(|a| matches!(a, Action::Run { .. } | Action::Rejoin { .. })).count()
    }

    /// Every state × every event, under the three tunings: what must always hold.
    #[test]
    fn every_state_and_event() {
        let (states, events) = (states(), events());
        assert_eq!(states.len(), 64);
        let mut pairs = 0;
        for rules in [ROOM, ROOM_SILENCES, BEFORE_ROOM] {
            for s in &states {
                for e in &events {
                    pairs += 1;
                    let (after, act) = next(&rules, s.clone(), e.clone());
                    let why = format!("{s:?} × {e:?} → {after:?}, {act:?}");
                    // A held command is run at most once, and never lost silently.
                    let held_before = s.held.is_some();
                    let ran_held = act.iter().any(|a| {
                        matches!(a, Action::Run { record: "held", .. } | Action::Rejoin { earlier: "held", .. })
                    });
                    assert!(runs(&act) <= 2, "{why}");
                    if held_before && after.held.is_none() {
                        assert!(ran_held, "a held command disappeared without running: {why}");
                    }
                    if !held_before {
                        assert!(!ran_held, "{why}");
                    }
                    // Speech is stopped only with something playing or a stop word.
                    if act.contains(&Action::StopSpeaking) {
                        let playing = match e {
                            Event::SpeechStarted { playing, .. } | Event::Decoded { playing, .. } => *playing,
                            _ => false,
                        };
                        assert!(playing || act.contains(&Action::StopWord), "{why}");
                    }
                    // Without a stop window, a stop word is a command like any other.
                    if rules.stop_window.is_none() {
                        assert!(!act.contains(&Action::StopWord), "{why}");
                    }
                    // Closing an utterance forgets what was being collected.
                    if matches!(e, Event::Closed { .. }) {
                        assert_eq!(act.len(), 1, "{why}");
                        assert_eq!(after.collecting, Collecting::Open, "{why}");
                        assert!(after.partial.is_none() && !after.began_in_answer, "{why}");
                    }
                    // Nothing more is decoded of an utterance without the wake word.
                    if matches!(s.collecting, Collecting::NotForArthur(_)) && matches!(e, Event::Paused { .. }) {
                        assert!(act.is_empty(), "{why}");
                    }
                    // An answer's end is remembered, whatever ended it.
                    if matches!(e, Event::AnswerEnded { .. } | Event::AnnouncementEnded { .. }) {
                        assert_eq!(after.answer_end_secs, Some(20.0), "{why}");
                    }
                    // The end of a turn: closed at the pause only when the judges agree (the
                    // grammar alone without the sound's judge), held open when one says more
                    // is coming, and only for what the listener takes and interrupts nothing.
                    if let Event::PauseDecoded { partial, taken, grammar, audio, sounds_finished } = e {
                        let mine = *taken && !s.interrupting;
                        let closed = act.iter().any(|a| matches!(a, Action::CloseWith { .. }));
                        let judged = rules.by_meaning && *audio != Verdict::Unknown;
                        let agree = *grammar == Verdict::Finished && (!judged || *audio == Verdict::Finished);
                        assert_eq!(closed, mine && agree, "{why}");
                        let unfinished = judged && (*grammar == Verdict::Unfinished || *audio == Verdict::Unfinished);
                        let held = act.iter().any(|a| matches!(a, Action::HoldOpen { .. }));
                        assert_eq!(held, mine && unfinished, "{why}");
                        assert_eq!(after.collecting == Collecting::Unfinished, held, "{why}");
                        if !rules.by_meaning {
                            // Without the sound's judge, its verdict changes nothing.
                            let heard = |audio| Event::PauseDecoded {
                                partial: partial.clone(),
                                taken: *taken,
                                grammar: *grammar,
                                audio,
                                sounds_finished: *sounds_finished,
                            };
                            for other in VERDICTS {
                                assert_eq!(
                                    next(&rules, s.clone(), heard(other)),
                                    (after.clone(), act.clone()),
                                    "{why}"
                                );
                            }
                        }
                    }
                    // A silence closes the utterance once it is as long as what was said allows.
                    if let Event::Quiet { silence_ms, .. } = e {
                        let due = *silence_ms > 0 && *silence_ms >= rules.closing_ms(&s.collecting);
                        assert_eq!(act.contains(&Action::Close), due, "{why}");
                    }
                }
            }
        }
        assert_eq!(pairs, 3 * 64 * events.len());
    }

    #[test]
    fn barge_in_makes_the_next_utterance_a_command_for_arthur() {
        let (s, act) = next(&ROOM, S::default(), Event::SpeechStarted { foreground: true, playing: true });
        assert_eq!(act, [Action::StopSpeaking], "the user talks over the answer");
        let (s, _) = next(&ROOM, s, Event::AnswerEnded { secs: 4.0, ended: Ended::BargeIn, speech_now: true });
        assert!(s.interrupting);
        assert!(!s.began_in_answer, "it cut the answer: not merely begun in it");
        let (s, act) = next(&ROOM, s, Event::Closed { speech_end: 8_000 });
        assert_eq!(act, [Action::Judge { transcript: None, interrupting: true }]);
        assert!(!s.interrupting, "taken once");
    }

    #[test]
    fn background_speech_does_not_cut_an_answer_in_a_room() {
        let (_, act) = next(&ROOM, S::default(), Event::SpeechStarted { foreground: false, playing: true });
        assert!(act.is_empty(), "the television is not the user");
        let (_, act) = next(&BEFORE_ROOM, S::default(), Event::SpeechStarted { foreground: false, playing: true });
        assert_eq!(act, [Action::StopSpeaking], "before the room issues every onset cut");
    }

    #[test]
    fn speech_begun_in_an_answer_counts_only_by_its_words() {
        let (s, _) =
            next(&ROOM, S::default(), Event::AnswerEnded { secs: 4.0, ended: Ended::Finished, speech_now: true });
        assert!(s.began_in_answer);
        let (_, act) = next(&ROOM, s.clone(), Event::Closed { speech_end: 8_000 });
        assert_eq!(act, [Action::CheckWords]);
        let (_, act) = next(&BEFORE_ROOM, s.clone(), Event::Closed { speech_end: 8_000 });
        assert!(matches!(act[..], [Action::Judge { .. }]));
        let (_, act) = next(&ROOM, s, Event::WordsCut { transcript: "Arthur, stop.".into() });
        assert_eq!(act, [Action::Judge { transcript: Some(("Arthur, stop.".into(), 0)), interrupting: false }]);
    }

    #[test]
    fn a_stop_word_while_a_timer_rings_goes_to_the_loop_to_acknowledge() {
        let s = S { answer_end_secs: Some(10.0), ..S::default() };
        let decoded = |secs| Event::Decoded {
            secs,
            playing: false,
            stop_word: true,
            utterance_secs: 0.8,
            rest: String::new(),
            interrupting: false,
        };
        // Within five seconds of the bell's announcement: the speech is cut and the loop
        // asks whether « c'est bon » acknowledges the ringing timer.
        let (s2, act) = next(&ROOM, s.clone(), decoded(13.0));
        assert_eq!(act, [Action::StopSpeaking, Action::StopWord]);
        let (s3, act) = next(&ROOM, s2, Event::StoppedSpeech);
        assert_eq!(act, [Action::Answered]);
        assert!(s3.interrupting, "what follows at once is for Arthur");
        // Long after the answer a stop word is just words for the listener.
        let (_, act) = next(&ROOM, s, decoded(30.0));
        assert_eq!(act, [Action::Listen]);
    }

    #[test]
    fn a_command_cut_by_the_interruption_waits_for_its_end() {
        let command = |reads_as_command| Event::Command {
            secs: 5.0,
            text: "rappelle-moi d'appeler".into(),
            reads_as_command,
            interrupting: true,
            record: "first",
        };
        let (s, act) = next(&ROOM, S::default(), command(false));
        assert_eq!(act, [Action::Answered]);
        assert_eq!(s.held.as_ref().map(|h| h.until_secs), Some(6.2));
        // The rest comes in time: joined.
        let rest = |secs| Event::Decoded {
            secs,
            playing: false,
            stop_word: false,
            utterance_secs: 1.0,
            rest: "la banque".into(),
            interrupting: false,
        };
        let (joined, act) = next(&ROOM, s.clone(), rest(7.0));
        assert_eq!(act, [Action::Rejoin { text: "rappelle-moi d'appeler la banque".into(), earlier: "first" }]);
        assert!(joined.held.is_none());
        // Too late: the held command runs alone, then the new utterance is judged.
        let (_, act) = next(&ROOM, s.clone(), rest(9.0));
        assert_eq!(act, [Action::Run { text: "rappelle-moi d'appeler".into(), record: "first" }, Action::Listen]);
        // Nothing follows: it runs once the window passed in silence.
        let (_, act) = next(&ROOM, s.clone(), Event::Quiet { secs: 6.0, speech_now: false, silence_ms: 0 });
        assert!(act.is_empty());
        let (_, act) = next(&ROOM, s.clone(), Event::Quiet { secs: 6.5, speech_now: true, silence_ms: 0 });
        assert!(act.is_empty(), "the user is still talking");
        let (_, act) = next(&ROOM, s.clone(), Event::Quiet { secs: 6.5, speech_now: false, silence_ms: 0 });
        assert_eq!(act, [Action::Run { text: "rappelle-moi d'appeler".into(), record: "first" }]);
        let (_, act) = next(&ROOM, s, Event::InputEnded);
        assert_eq!(act.len(), 1, "the input ended: it runs");
        // Read whole by the grammar, or without rejoining: at once.
        let (_, act) = next(&ROOM, S::default(), command(true));
        assert!(matches!(act[..], [Action::Run { .. }]));
        let (_, act) = next(&BEFORE_ROOM, S::default(), command(false));
        assert!(matches!(act[..], [Action::Run { .. }]));
    }

    #[test]
    fn the_pause_decodes_and_may_close_early() {
        // Needs the wake word and long: the start first.
        let (s, act) = next(&ROOM, S::default(), Event::Paused { needs_wake: true, long: true });
        assert_eq!(act, [Action::DecodePrefix]);
        let (s, _) = next(&ROOM, s, Event::NoWakeWord { prefix: "la météo".into() });
        let (s, act) = next(&ROOM, s, Event::Paused { needs_wake: true, long: true });
        assert!(act.is_empty(), "nothing more decoded");
        let (_, act) = next(&ROOM, s, Event::Closed { speech_end: 100 });
        assert_eq!(act, [Action::Ignore { transcript: "la météo".into() }]);
        // In the follow-up window (no wake word needed): what was said so far.
        let (s, act) = next(&ROOM, S::default(), Event::Paused { needs_wake: false, long: true });
        assert_eq!(act, [Action::DecodeSoFar]);
        let decoded = |taken, grammar, sounds_finished| Event::PauseDecoded {
            partial: partial("note du pain.", 20_000),
            taken,
            grammar,
            audio: Verdict::Unknown,
            sounds_finished,
        };
        let (_, act) = next(&ROOM, s.clone(), decoded(true, Verdict::Finished, true));
        assert_eq!(act, [Action::CloseWith { transcript: "note du pain.".into(), millis: 120 }]);
        let (s2, act) = next(&ROOM, s.clone(), decoded(true, Verdict::Unknown, true));
        assert!(act.is_empty());
        assert_eq!(s2.collecting, Collecting::SoundsFinished);
        let (_, act) = next(&ROOM, s2.clone(), Event::Quiet { secs: 1.0, speech_now: true, silence_ms: 390 });
        assert!(act.is_empty());
        let (_, act) = next(&ROOM, s2.clone(), Event::Quiet { secs: 1.0, speech_now: true, silence_ms: 400 });
        assert_eq!(act, [Action::Close], "400 ms of silence after a finished sentence");
        // The partial is kept when no more speech came, dropped when more did.
        let (_, act) = next(&ROOM, s2.clone(), Event::Closed { speech_end: 20_000 });
        assert_eq!(act, [Action::Judge { transcript: Some(("note du pain.".into(), 120)), interrupting: false }]);
        let (_, act) = next(&ROOM, s2, Event::Closed { speech_end: 24_000 });
        assert_eq!(act, [Action::Judge { transcript: None, interrupting: false }]);
        // What interrupts Arthur waits for the full hangover.
        let interrupting = S { interrupting: true, ..S::default() };
        let (s3, act) = next(&ROOM, interrupting, decoded(true, Verdict::Finished, true));
        assert!(act.is_empty());
        assert_eq!(s3.collecting, Collecting::Open);
    }

    #[test]
    fn the_end_of_a_turn_is_judged_by_its_sound_and_its_meaning() {
        let pause = |grammar, audio| Event::PauseDecoded {
            partial: partial("Arthur, rappelle-moi demain à", 30_000),
            taken: true,
            grammar,
            audio,
            sounds_finished: false,
        };
        let close =
            |s: &S, silence_ms| next(&ROOM, s.clone(), Event::Quiet { secs: 3.0, speech_now: true, silence_ms });
        // Both say finished: closed at the pause, with the speculative reading.
        let (_, act) = next(&ROOM, S::default(), pause(Verdict::Finished, Verdict::Finished));
        assert!(matches!(act[..], [Action::CloseWith { .. }]), "{act:?}");
        // The sound says the user goes on (« euh… », a held last syllable): they wait.
        for (grammar, audio) in [
            (Verdict::Finished, Verdict::Unfinished),
            (Verdict::Unfinished, Verdict::Finished),
            (Verdict::Unknown, Verdict::Unfinished),
        ] {
            let (s, act) = next(&ROOM, S::default(), pause(grammar, audio));
            assert_eq!(act, [Action::HoldOpen { ms: 2_000 }], "{grammar:?} {audio:?}");
            assert_eq!(s.collecting, Collecting::Unfinished);
            assert!(close(&s, 700).1.is_empty(), "a 700 ms hesitation does not cut the sentence");
            assert!(close(&s, 1_900).1.is_empty());
            assert_eq!(close(&s, 2_000).1, [Action::Close], "then it closes anyway");
            // More speech came and the next pause is judged anew.
            let (_, act) = next(&ROOM, s, pause(Verdict::Finished, Verdict::Finished));
            assert!(matches!(act[..], [Action::CloseWith { .. }]), "{act:?}");
        }
        // Free speech the sound finds finished: the silences of before (600 ms, 400 when the
        // reading sounds finished), not a cut at the pause.
        let (s, act) = next(&ROOM, S::default(), pause(Verdict::Unknown, Verdict::Finished));
        assert!(act.is_empty());
        assert_eq!(s.collecting, Collecting::Open);
        assert!(close(&s, 590).1.is_empty());
        assert_eq!(close(&s, 600).1, [Action::Close]);
        // Without the model: the grammar's sure reading closes alone, and nothing is held.
        let (_, act) = next(&ROOM, S::default(), pause(Verdict::Finished, Verdict::Unknown));
        assert!(matches!(act[..], [Action::CloseWith { .. }]), "{act:?}");
        let (s, act) = next(&ROOM, S::default(), pause(Verdict::Unfinished, Verdict::Unknown));
        assert!(act.is_empty());
        assert_eq!(s.collecting, Collecting::Open);
        let (_, act) = next(&ROOM_SILENCES, S::default(), pause(Verdict::Finished, Verdict::Unfinished));
        assert!(matches!(act[..], [Action::CloseWith { .. }]), "the silences of before: {act:?}");
    }

    #[test]
    fn an_announcement_cut_by_the_user_opens_the_window() {
        let (s, act) = next(&ROOM, S::default(), Event::AnnouncementEnded { secs: 3.0, ended: Ended::BargeIn });
        assert_eq!(act, [Action::Answered]);
        assert!(s.interrupting);
        let (s, act) = next(&ROOM, S::default(), Event::AnnouncementEnded { secs: 3.0, ended: Ended::Finished });
        assert!(act.is_empty() && !s.interrupting);
        assert_eq!(s.answer_end_secs, Some(3.0));
    }
}
