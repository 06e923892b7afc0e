//! Spoken = written, fact for fact. For every `Receipt` and `Refusal` variant, generated
//! with random contents, the facts are listed from the data itself (ids, names and texts,
//! dates, times, durations, counts, states such as "nothing changed"), independently of
//! the composers; each fact must appear in the written report in its written form and in
//! the spoken report in words. Lists are spoken up to their first five items, then
//! "et N autres": the facts of those five, and the count, are checked.

use arthur_agents::fr;
use arthur_agents::memory::worktime::{format_duration, WorkTotals};
use arthur_agents::memory::{
    Decision, EtatMinuteur, Frequence, Genre, Minuteur, Note, Pause, PhaseChange, Preference, Projet, ProjetDetail,
    Rappel, Repetition, SessionTravail, Souvenir, Statut,
};
use arthur_agents::report::{compose_spoken, compose_written};
use arthur_agents::time::IsoDate;
use arthur_agents::tools::{
    ArgError, ArgProblem, Expected, KeywordReason, Outcome, Portee, Receipt, Refusal, ReminderFilter, SearchHit,
    SearchMode,
};
use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;

const TZ: Tz = chrono_tz::Europe::Paris;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 9, 0, 0).unwrap()
}

/// One fact of a report.
#[derive(Debug, Clone)]
enum Fact {
    Id(i64),
    /// A text or a name, said as written.
    Text(String),
    DateTime(DateTime<Utc>),
    Date(NaiveDate),
    Time(DateTime<Utc>),
    Duration(i64),
    /// The number of items of a list ("Notes (3)", "Aucune note").
    Count(usize),
    /// A number written in digits, said in words ("3 actives sur 20").
    Number(i64),
    /// A state, in its written and its spoken wording.
    Words(&'static str, &'static str),
    /// Made from the data: its written and its spoken wording (a rule, a label).
    Pair(String, String),
}

impl Fact {
    fn written(&self) -> String {
        match self {
            Fact::Id(id) => format!("n°{id}"),
            Fact::Text(t) => t.clone(),
            Fact::DateTime(ts) => fr::datetime(*ts, TZ),
            Fact::Date(d) => fr::date(*d),
            Fact::Time(ts) => fr::time(*ts, TZ),
            Fact::Duration(s) => format_duration(*s),
            Fact::Count(0) => "aucun".to_string(),
            Fact::Count(n) => format!("({n})"),
            Fact::Number(n) => n.to_string(),
            Fact::Words(w, _) => w.to_string(),
            Fact::Pair(w, _) => w.clone(),
        }
    }
    fn spoken(&self) -> String {
        let today = now().with_timezone(&TZ).date_naive();
        match self {
            Fact::Id(id) => format!("numéro {}", fr::number(*id)),
            Fact::Text(t) => t.clone(),
            Fact::DateTime(ts) => fr::spoken_datetime(*ts, now(), TZ),
            Fact::Date(d) => fr::spoken_date(*d, today),
            Fact::Time(ts) => fr::spoken_time(*ts, TZ),
            Fact::Duration(s) => fr::spoken_duration(*s),
            Fact::Count(0) => "aucun".to_string(),
            Fact::Count(1) => "un".to_string(),
            Fact::Count(n) => fr::number(*n as i64),
            Fact::Number(n) => fr::number(*n),
            Fact::Words(_, s) => s.to_string(),
            Fact::Pair(_, s) => s.clone(),
        }
    }
}

// ---------- generators ----------

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "banque",
        "pain",
        "dentiste",
        "loyer",
        "Atlas",
        "maman",
        "tutoiement",
        "portail",
        "réunion",
        "vélo",
        "Rust",
        "courses",
        "facture",
        "jardin",
    ])
    .prop_map(String::from)
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 1..4).prop_map(|w| w.join(" "))
}

fn id() -> impl Strategy<Value = i64> {
    1i64..2500
}

fn instant() -> impl Strategy<Value = DateTime<Utc>> {
    (-400i64 * 24 * 60..400 * 24 * 60).prop_map(|m| now() + Duration::minutes(m))
}

fn day() -> impl Strategy<Value = NaiveDate> {
    (-400i64..400).prop_map(|d| now().with_timezone(&TZ).date_naive() + Duration::days(d))
}

fn secs() -> impl Strategy<Value = i64> {
    (0i64..40 * 3600).prop_map(|s| s - s % 60)
}

fn statut() -> impl Strategy<Value = Statut> {
    prop::sample::select(Statut::ALL.to_vec())
}

prop_compose! {
    fn note()(id in id(), texte in text(), projet in prop::option::of(word()), at in instant()) -> Note {
        Note { id, texte, projet, created_at: at }
    }
}
prop_compose! {
    fn rappel()(id in id(), texte in text(), echeance in instant(), fait in any::<bool>()) -> Rappel {
        Rappel { id, texte, echeance, fait, fait_le: fait.then(now), created_at: now(), repetition: None }
    }
}
prop_compose! {
    fn preference()(id in id(), texte in text(), active in any::<bool>()) -> Preference {
        Preference { id, texte, active, created_at: now(), desactivee_le: None }
    }
}
prop_compose! {
    fn souvenir()(id in id(), texte in text()) -> Souvenir {
        Souvenir { id, texte, embedding_model: None, created_at: now() }
    }
}
prop_compose! {
    fn projet()(id in id(), nom in word(), description in prop::option::of(text()), phase in prop::option::of(word()), statut in statut()) -> Projet {
        Projet { id, nom, description, phase, statut, created_at: now(), updated_at: now() }
    }
}
prop_compose! {
    fn session()(id in id(), projet in word(), debut in instant(), paused in any::<bool>(), stopped in any::<bool>()) -> SessionTravail {
        let pauses = if paused { vec![Pause { debut: debut + Duration::minutes(30), fin: stopped.then(|| debut + Duration::minutes(45)) }] } else { vec![] };
        SessionTravail { id, projet, debut, fin: stopped.then(|| debut + Duration::minutes(90)), pauses }
    }
}
prop_compose! {
    fn decision()(id in id(), projet in word(), texte in text(), at in instant()) -> Decision {
        Decision { id, projet, texte, created_at: at }
    }
}
prop_compose! {
    fn filter()(debut in prop::option::of(day()), len in 0i64..20, fin in any::<bool>(), contient in prop::option::of(word())) -> ReminderFilter {
        let fin = if fin { debut.map(|d| IsoDate(d + Duration::days(len))) } else { None };
        ReminderFilter { debut: debut.map(IsoDate), fin, contient }
    }
}

fn rappel_facts(r: &Rappel) -> Vec<Fact> {
    let mut f = vec![Fact::Id(r.id), Fact::Text(r.texte.clone()), Fact::DateTime(r.echeance)];
    if r.fait {
        f.push(Fact::Words("(fait)", ", fait"));
    } else if r.echeance < now() {
        f.push(Fact::Words("(en retard)", ", en retard"));
    }
    f
}

fn filter_facts(f: &ReminderFilter) -> Vec<Fact> {
    let mut out: Vec<Fact> = [f.debut, f.fin].iter().flatten().map(|d| Fact::Date(d.0)).collect();
    out.extend(f.contient.iter().map(|w| Fact::Text(w.clone())));
    out
}

fn projet_facts(p: &Projet) -> Vec<Fact> {
    let mut f = vec![Fact::Text(p.nom.clone()), Fact::Text(p.statut.label().to_string())];
    f.extend(p.phase.iter().map(|ph| Fact::Text(ph.clone())));
    f
}

/// The first five items' facts and the count of a list.
fn list_facts<T>(items: &[T], each: impl Fn(&T) -> Vec<Fact>) -> Vec<Fact> {
    let mut f = vec![Fact::Count(items.len())];
    for item in items.iter().take(5) {
        f.extend(each(item));
    }
    f
}

/// A receipt and its facts, derived from the data.
fn receipt() -> impl Strategy<Value = (Receipt, Vec<Fact>)> {
    prop_oneof![
        note().prop_map(|n| {
            let mut f = vec![Fact::Id(n.id), Fact::Text(n.texte.clone())];
            f.extend(n.projet.iter().map(|p| Fact::Text(p.clone())));
            (Receipt::NoteCreated { note: n }, f)
        }),
        (prop::option::of(word()), prop::option::of(word()), prop::collection::vec(note(), 0..9)).prop_map(
            |(projet, contient, notes)| {
                let mut f = list_facts(&notes, |n| vec![Fact::Id(n.id), Fact::Text(n.texte.clone())]);
                f.extend(projet.iter().chain(contient.iter()).map(|w| Fact::Text(w.clone())));
                (Receipt::Notes { projet, contient, notes, portee: Default::default() }, f)
            }
        ),
        (rappel(), any::<bool>()).prop_map(|(r, bare)| {
            let mut f = vec![Fact::Id(r.id), Fact::Text(r.texte.clone()), Fact::DateTime(r.echeance)];
            if bare {
                f.push(Fact::Words("9 h par défaut", "neuf heures par défaut"));
            }
            (Receipt::ReminderCreated { rappel: r, bare_date: bare }, f)
        }),
        (any::<bool>(), filter(), prop::collection::vec(rappel(), 0..9)).prop_map(|(include_done, filter, rappels)| {
            let mut f = list_facts(&rappels, rappel_facts);
            f.extend(filter_facts(&filter));
            (Receipt::Reminders { include_done, filter, rappels, now: now(), portee: Default::default() }, f)
        }),
        rappel().prop_map(|r| {
            let f = vec![Fact::Id(r.id), Fact::Text(r.texte.clone())];
            (Receipt::ReminderDone { rappel: r }, f)
        }),
        (
            day(),
            0i64..10,
            any::<bool>(),
            prop::option::of(word()),
            secs(),
            prop::collection::vec((word(), secs()), 0..4),
            prop::option::of(session())
        )
            .prop_map(|(debut, len, until_now, projet, total, par, running)| {
                let fin = debut + Duration::days(len);
                let mut f = vec![Fact::Date(debut), Fact::Date(fin)];
                f.extend(projet.iter().map(|p| Fact::Text(p.clone())));
                f.push(if total == 0 { Fact::Words("0 minute", "zéro minute") } else { Fact::Duration(total) });
                if until_now {
                    f.push(Fact::Words("jusqu'à maintenant", "jusqu'à maintenant"));
                }
                if projet.is_none() && par.len() > 1 {
                    for (p, s) in &par {
                        f.push(Fact::Text(p.clone()));
                        f.push(Fact::Duration(*s));
                    }
                }
                let running = running.map(|mut s| {
                    s.fin = None;
                    s
                });
                if let Some(s) = &running {
                    f.push(Fact::Text(s.projet.clone()));
                    f.push(Fact::Time(s.debut));
                    f.push(if s.is_paused() {
                        Fact::Words("en pause", "en pause")
                    } else {
                        Fact::Words("en cours", "en cours")
                    });
                }
                // A session of a few tenths of a second counts as a session (issue 38).
                let sessions = if total == 0 { 0 } else { par.len().max(1) as u32 };
                if total > 0 && total < 60 {
                    f.push(Fact::Number(sessions.into()));
                }
                let totals = WorkTotals { total_secs: total, par_projet: par, sessions };
                (Receipt::WorkTime { debut: IsoDate(debut), fin: IsoDate(fin), until_now, projet, totals, running }, f)
            }),
        (preference(), 0u32..30, 1u32..30).prop_map(|(p, active, cap)| {
            let f = vec![
                Fact::Id(p.id),
                Fact::Text(p.texte.clone()),
                Fact::Number(active.into()),
                Fact::Number(cap.into()),
            ];
            (Receipt::PreferenceStored { preference: p, active, cap }, f)
        }),
        (prop::collection::vec(preference(), 0..9), 1u32..30).prop_map(|(preferences, cap)| {
            let active = preferences.iter().filter(|p| p.active).count() as u32;
            let mut f = list_facts(&preferences, |p| {
                let mut f = vec![Fact::Id(p.id), Fact::Text(p.texte.clone())];
                if !p.active {
                    f.push(Fact::Words("désactivée", "désactivée"));
                }
                f
            });
            f.push(Fact::Number(active.into()));
            f.push(Fact::Number(cap.into()));
            (Receipt::Preferences { preferences, active, cap, portee: Default::default() }, f)
        }),
        preference().prop_map(|p| {
            let f = vec![Fact::Id(p.id), Fact::Text(p.texte.clone())];
            (Receipt::PreferenceDeactivated { preference: p }, f)
        }),
        (text(), 0usize..3, prop::collection::vec(souvenir(), 0..8), 0u32..4).prop_map(
            |(requete, mode, souvenirs, not_indexed)| {
                let search = match mode {
                    0 => SearchMode::Vector { threshold: 0.6, model: "mistral-embed".into() },
                    1 => SearchMode::Keyword { reason: KeywordReason::NoEmbeddingProvider },
                    _ => SearchMode::Keyword { reason: KeywordReason::EmbeddingFailed },
                };
                let mut f = vec![Fact::Text(requete.clone())];
                f.push(match mode {
                    0 => Fact::Words("similarité", "similarité"),
                    1 => Fact::Words("aucun modèle d'embeddings", "aucun modèle d'embeddings"),
                    _ => Fact::Words("n'a pas répondu", "n'a pas répondu"),
                });
                if mode == 0 {
                    f.push(Fact::Words("0.6", "zéro virgule six"));
                }
                let hits: Vec<SearchHit> =
                    souvenirs.into_iter().map(|s| SearchHit { souvenir: s, score: None }).collect();
                for h in hits.iter().take(5) {
                    f.push(Fact::Id(h.souvenir.id));
                    f.push(Fact::Text(h.souvenir.texte.clone()));
                }
                if hits.is_empty() {
                    f.push(Fact::Words("Rien trouvé", "rien trouvé"));
                }
                if not_indexed > 0 {
                    f.push(Fact::Number(not_indexed.into()));
                }
                (Receipt::Search { requete, search, hits, not_indexed }, f)
            }
        ),
        session().prop_map(|s| {
            let f = vec![Fact::Id(s.id), Fact::Text(s.projet.clone()), Fact::Time(s.debut)];
            (Receipt::SessionStarted { session: s }, f)
        }),
        session().prop_map(|mut s| {
            s.fin = None;
            s.pauses = vec![Pause { debut: s.debut + Duration::minutes(20), fin: None }];
            let f = vec![Fact::Text(s.projet.clone()), Fact::Time(s.pauses[0].debut)];
            (Receipt::SessionPaused { session: s }, f)
        }),
        session().prop_map(|mut s| {
            s.fin = None;
            s.pauses =
                vec![Pause { debut: s.debut + Duration::minutes(20), fin: Some(s.debut + Duration::minutes(35)) }];
            let f = vec![Fact::Text(s.projet.clone()), Fact::Time(s.debut + Duration::minutes(35))];
            (Receipt::SessionResumed { session: s }, f)
        }),
        (session(), secs()).prop_map(|(mut s, worked)| {
            s.fin = Some(s.debut + Duration::minutes(90));
            let f = vec![
                Fact::Text(s.projet.clone()),
                Fact::Time(s.fin.unwrap()),
                Fact::Duration(worked),
                Fact::Words("pauses exclues", "pauses exclues"),
            ];
            (Receipt::SessionStopped { session: s, worked_secs: worked }, f)
        }),
        prop::collection::vec(projet(), 0..8).prop_map(|projets| {
            let f = list_facts(&projets, projet_facts);
            (Receipt::Projects { projets }, f)
        }),
        (projet(), prop::collection::vec(word(), 0..4), prop::collection::vec(decision(), 0..7), 0usize..30, secs())
            .prop_map(|(p, phases, decisions, notes, worked)| {
                let mut f = projet_facts(&p);
                f.extend(p.description.iter().map(|d| Fact::Text(d.clone())));
                f.push(Fact::Duration(worked));
                if phases.len() > 1 {
                    f.extend(phases.iter().map(|ph| Fact::Text(ph.clone())));
                }
                f.push(Fact::Count(decisions.len()));
                for d in decisions.iter().take(5) {
                    f.push(Fact::Text(d.texte.clone()));
                    f.push(Fact::Date(d.created_at.with_timezone(&TZ).date_naive()));
                }
                f.push(Fact::Number(notes as i64));
                let phases = phases.into_iter().map(|phase| PhaseChange { phase, since: now() }).collect();
                (
                    Receipt::Project {
                        detail: ProjetDetail { projet: p, phases, decisions, notes },
                        worked_secs: worked,
                    },
                    f,
                )
            }),
        projet().prop_map(|p| {
            let f = projet_facts(&p);
            (Receipt::ProjectCreated { projet: p }, f)
        }),
        (projet(), prop::option::of(text()), prop::option::of(word()), prop::option::of(statut())).prop_map(
            |(before, description, phase, statut)| {
                let mut after = before.clone();
                if let Some(d) = description {
                    after.description = Some(d);
                }
                if let Some(ph) = phase {
                    after.phase = Some(ph);
                }
                if let Some(s) = statut {
                    after.statut = s;
                }
                let mut f = vec![Fact::Text(after.nom.clone())];
                let mut changed = false;
                if before.description != after.description {
                    changed = true;
                    f.push(Fact::Text(after.description.clone().unwrap_or_default()));
                }
                if before.phase != after.phase {
                    changed = true;
                    f.push(Fact::Text(after.phase.clone().unwrap_or_default()));
                    f.extend(before.phase.iter().map(|p| Fact::Text(p.clone())));
                }
                if before.statut != after.statut {
                    changed = true;
                    f.push(Fact::Text(before.statut.label().to_string()));
                    f.push(Fact::Text(after.statut.label().to_string()));
                }
                f.push(if changed {
                    Fact::Words("modifié", "modifié")
                } else {
                    Fact::Words("rien n'a changé", "rien n'a changé")
                });
                (Receipt::ProjectUpdated { before, after }, f)
            }
        ),
        decision().prop_map(|d| {
            let f = vec![Fact::Id(d.id), Fact::Text(d.projet.clone()), Fact::Text(d.texte.clone())];
            (Receipt::DecisionRecorded { decision: d }, f)
        }),
        souvenir().prop_map(|s| {
            let f = vec![Fact::Id(s.id), Fact::Text(s.texte.clone())];
            (Receipt::SouvenirStored { souvenir: s }, f)
        }),
    ]
}

fn problem() -> impl Strategy<Value = (ArgProblem, Option<&'static str>)> {
    prop_oneof![
        Just((ArgProblem::NotAnObject, None)),
        Just((ArgProblem::Missing, Some("manque"))),
        Just((ArgProblem::WrongType { expected: Expected::Integer }, Some("nombre entier"))),
        Just((ArgProblem::Empty, Some("vide"))),
        Just((ArgProblem::TooLong { max: 2000 }, Some("dépasse"))),
        Just((ArgProblem::BadDate, Some("date"))),
        Just((ArgProblem::BadDateTime, Some("date avec une heure"))),
        Just((ArgProblem::NotPositive, Some("positif"))),
        Just((ArgProblem::NotAllowed, Some("permise"))),
    ]
}

/// A refusal and its facts, derived from the data.
fn refusal() -> impl Strategy<Value = (Refusal, Vec<Fact>)> {
    prop_oneof![
        (prop::sample::select(vec!["texte", "echeance", "id", "debut"]), problem()).prop_map(
            |(field, (problem, word))| {
                let mut f = vec![];
                if problem != ArgProblem::NotAnObject {
                    // The field as the user reads it (« l'échéance »), not its JSON name.
                    f.push(Fact::Text(arthur_agents::report::labels::field(field).to_string()));
                }
                f.extend(word.map(|w| Fact::Words(w, w)));
                (Refusal::InvalidArguments(ArgError { field, problem }), f)
            }
        ),
        // Internal names (a tool the model made up, an agent) are not the user's words: the
        // fact said is that the action is unknown or not allowed.
        word().prop_map(|name| {
            let f = vec![Fact::Words("je ne sais pas faire", "je ne sais pas faire")];
            (Refusal::UnknownTool { name }, f)
        }),
        Just((
            Refusal::ToolNotAllowed { name: "creer_projet", agent: "intendant" },
            vec![Fact::Words("pas permise", "pas permise")]
        )),
        id().prop_map(|id| (Refusal::ReminderUnknown { id }, vec![Fact::Id(id)])),
        rappel().prop_map(|r| {
            let f = vec![Fact::Id(r.id), Fact::Text(r.texte.clone()), Fact::Words("déjà fait", "déjà fait")];
            (Refusal::ReminderAlreadyDone { rappel: r }, f)
        }),
        instant().prop_map(|e| (
            Refusal::DueDateInPast { echeance: e },
            vec![Fact::DateTime(e), Fact::Words("passée", "passée")]
        )),
        id().prop_map(|id| (Refusal::PreferenceUnknown { id }, vec![Fact::Id(id)])),
        preference().prop_map(|p| {
            let f =
                vec![Fact::Id(p.id), Fact::Text(p.texte.clone()), Fact::Words("déjà désactivée", "déjà désactivée")];
            (Refusal::PreferenceAlreadyInactive { preference: p }, f)
        }),
        preference().prop_map(|p| {
            let f = vec![Fact::Id(p.id), Fact::Text(p.texte.clone()), Fact::Words("existe déjà", "existe déjà")];
            (Refusal::PreferenceDuplicate { preference: p }, f)
        }),
        (1u32..40).prop_map(|cap| (
            Refusal::PreferenceCapReached { cap },
            vec![Fact::Number(cap.into()), Fact::Words("plafond", "plafond")]
        )),
        day().prop_map(|d| {
            let f = vec![Fact::Date(d), Fact::Words("aucune lecture n'a été faite", "aucune lecture n'a été faite")];
            (Refusal::FutureDate { debut: IsoDate(d), today: now().date_naive() }, f)
        }),
        (day(), 1i64..30).prop_map(|(fin, back)| {
            let debut = fin + Duration::days(back);
            (
                Refusal::InvertedRange { debut: IsoDate(debut), fin: IsoDate(fin) },
                vec![Fact::Date(debut), Fact::Date(fin)],
            )
        }),
        session().prop_map(|mut s| {
            s.fin = None;
            let f = vec![
                Fact::Text(s.projet.clone()),
                Fact::Time(s.debut),
                if s.is_paused() { Fact::Words("en pause", "en pause") } else { Fact::Words("en cours", "en cours") },
            ];
            (Refusal::SessionAlreadyRunning { session: s }, f)
        }),
        session().prop_map(|s| (
            Refusal::SessionAlreadyPaused { session: s.clone() },
            vec![Fact::Text(s.projet), Fact::Words("déjà en pause", "déjà en pause")]
        )),
        session().prop_map(|s| (
            Refusal::SessionNotPaused { session: s.clone() },
            vec![Fact::Text(s.projet), Fact::Words("pas en pause", "pas en pause")]
        )),
        Just((Refusal::NoRunningSession, vec![Fact::Words("aucune session", "aucune session")])),
        word().prop_map(|nom| (Refusal::ProjectUnknown { nom: nom.clone() }, vec![Fact::Text(nom)])),
        projet().prop_map(|p| (
            Refusal::ProjectDuplicate { projet: p.clone() },
            vec![Fact::Text(p.nom), Fact::Words("existe déjà", "existe déjà")]
        )),
        Just((Refusal::NothingToChange, vec![Fact::Words("aucune modification", "aucune modification")])),
    ]
}

fn check(tool: &str, outcome: &Outcome, facts: &[Fact]) -> Result<(), TestCaseError> {
    let written = compose_written(tool, outcome, TZ).to_lowercase();
    let spoken = compose_spoken(tool, outcome, now(), TZ).to_lowercase();
    for fact in facts {
        let (w, s) = (fact.written().to_lowercase(), fact.spoken().to_lowercase());
        prop_assert!(written.contains(&w), "written lacks {fact:?} ({w:?}):\n{written}");
        prop_assert!(spoken.contains(&s), "spoken lacks {fact:?} ({s:?}):\n{spoken}\nwritten: {written}");
    }
    prop_assert!(!spoken.contains("n°") && !spoken.contains('*') && !spoken.contains('«'), "{spoken}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_fact_of_a_receipt_is_said((receipt, facts) in receipt()) {
        check("lister_notes", &Outcome::Done(receipt), &facts)?;
    }

    #[test]
    fn every_fact_of_a_refusal_is_said((refusal, facts) in refusal()) {
        let mut facts = facts;
        facts.push(Fact::Words("rien n'a été écrit", "je n'ai rien écrit"));
        check("creer_note", &Outcome::Refused(refusal), &facts)?;
    }
}

// ---------- the second round: repeats, moves, alarms, reads ----------

prop_compose! {
    fn repeated()(r in rappel(), f in prop::sample::select(Frequence::ALL.to_vec()), k in 1u32..4) -> Rappel {
        let local = r.echeance.with_timezone(&TZ).naive_local();
        Rappel { fait: false, fait_le: None, repetition: Some(Repetition::new(f, k, local, TZ)), ..r }
    }
}
prop_compose! {
    fn alarm()(id in id(), nom in prop::option::of(word()), ahead in 1i64..(3 * 24 * 3600), ringing in any::<bool>()) -> Minuteur {
        Minuteur {
            id,
            genre: Genre::Reveil,
            nom,
            duree_secondes: ahead,
            etat: if ringing { EtatMinuteur::Sonne } else { EtatMinuteur::EnCours },
            echeance: Some(now() + Duration::seconds(ahead)),
            restant_secondes: None,
            created_at: now(),
            fini_le: None,
            acquitte_le: None,
            annule_le: None,
        }
    }
}

fn rule_fact(r: &Rappel) -> Fact {
    let p = r.repetition.as_ref().unwrap();
    Fact::Pair(p.label(), p.spoken_label())
}

fn alarm_facts(m: &Minuteur) -> Vec<Fact> {
    let mut f = vec![Fact::Id(m.id), Fact::DateTime(m.alarm_time())];
    f.extend(m.nom.iter().map(|n| Fact::Text(n.clone())));
    f
}

fn receipt_round2() -> impl Strategy<Value = (Receipt, Vec<Fact>)> {
    prop_oneof![
        repeated().prop_map(|r| {
            let f = vec![Fact::Id(r.id), Fact::Text(r.texte.clone()), Fact::DateTime(r.echeance), rule_fact(&r)];
            (Receipt::RecurringReminderCreated { rappel: r }, f)
        }),
        (repeated(), 1i64..40).prop_map(|(before, days)| {
            let after = Rappel { echeance: before.echeance + Duration::days(days), ..before.clone() };
            let f = vec![
                Fact::Id(after.id),
                Fact::Text(after.texte.clone()),
                Fact::DateTime(before.echeance),
                Fact::DateTime(after.echeance),
                rule_fact(&after),
            ];
            (Receipt::ReminderOccurrenceDone { before, after }, f)
        }),
        (prop_oneof![rappel(), repeated()], 1i64..(40 * 24 * 60)).prop_map(|(before, minutes)| {
            let after =
                Rappel { echeance: now() + Duration::minutes(minutes), fait: false, fait_le: None, ..before.clone() };
            let mut f = vec![
                Fact::Id(after.id),
                Fact::Text(after.texte.clone()),
                Fact::DateTime(before.echeance),
                Fact::DateTime(after.echeance),
            ];
            if after.is_recurring() {
                f.push(rule_fact(&after));
            }
            (Receipt::ReminderMoved { before, after }, f)
        }),
        repeated().prop_map(|r| {
            let f = vec![
                Fact::Id(r.id),
                Fact::Text(r.texte.clone()),
                rule_fact(&r),
                Fact::Words("ne reviendra plus", "ne reviendra plus"),
            ];
            (Receipt::ReminderSeriesStopped { rappel: r }, f)
        }),
        alarm().prop_map(|m| {
            let f = alarm_facts(&m);
            (Receipt::AlarmSet { reveil: m }, f)
        }),
        prop::collection::vec(alarm(), 0..4).prop_map(|reveils| {
            let mut f: Vec<Fact> = reveils.iter().flat_map(alarm_facts).collect();
            if reveils.is_empty() {
                f.push(Fact::Words("aucun réveil", "aucun réveil"));
            }
            for m in &reveils {
                if m.etat == EtatMinuteur::Sonne {
                    f.push(Fact::Words("il sonne", "il sonne"));
                }
            }
            (Receipt::Alarms { reveils, now: now() }, f)
        }),
        prop::collection::vec(alarm(), 0..4).prop_map(|reveils| {
            let mut f: Vec<Fact> = reveils.iter().flat_map(alarm_facts).collect();
            f.push(if reveils.is_empty() {
                Fact::Words("rien n'a été annulé", "rien n'a été annulé")
            } else {
                Fact::Words("annulé", "annulé")
            });
            (Receipt::AlarmsCancelled { reveils }, f)
        }),
        (prop::collection::vec(souvenir(), 0..9), prop::option::of(word()), prop::option::of(1u32..6), 0usize..40)
            .prop_map(|(souvenirs, contient, derniers, extra)| {
                let portee =
                    Portee { numero: None, contient: contient.clone(), derniers, total: souvenirs.len() + extra };
                let mut f = list_facts(&souvenirs, |s| vec![Fact::Id(s.id), Fact::Text(s.texte.clone())]);
                f.extend(contient.iter().map(|w| Fact::Text(w.clone())));
                if let Some(n) = derniers {
                    f.push(Fact::Number(n.into()));
                    f.push(Fact::Number(portee.total as i64));
                }
                (Receipt::Souvenirs { portee, souvenirs }, f)
            }),
        (prop::collection::vec(preference(), 0..9), 1u32..30, prop::option::of(word()), prop::option::of(1u32..6))
            .prop_map(|(preferences, cap, contient, derniers)| {
                let active = preferences.iter().filter(|p| p.active).count() as u32;
                let portee =
                    Portee { numero: None, contient: contient.clone(), derniers, total: preferences.len() + 3 };
                let mut f = list_facts(&preferences, |p| vec![Fact::Id(p.id), Fact::Text(p.texte.clone())]);
                f.extend(contient.iter().map(|w| Fact::Text(w.clone())));
                if let Some(n) = derniers {
                    f.push(Fact::Number(n.into()));
                }
                f.push(Fact::Number(cap.into()));
                (Receipt::Preferences { preferences, active, cap, portee }, f)
            }),
    ]
}

fn refusal_round2() -> impl Strategy<Value = (Refusal, Vec<Fact>)> {
    prop_oneof![
        id().prop_map(|id| (Refusal::SouvenirUnknown { id }, vec![Fact::Id(id)])),
        rappel().prop_map(|r| {
            let f =
                vec![Fact::Id(r.id), Fact::Text(r.texte.clone()), Fact::Words("ne se répète pas", "ne se répète pas")];
            (Refusal::ReminderNotRecurring { rappel: r }, f)
        }),
        repeated().prop_map(|r| {
            let f = vec![Fact::Id(r.id), Fact::Text(r.texte.clone()), Fact::Words("déjà arrêté", "déjà arrêté")];
            (Refusal::ReminderSeriesAlreadyStopped { rappel: r }, f)
        }),
        rappel().prop_map(|r| {
            let f = vec![Fact::Id(r.id), Fact::Text(r.texte.clone()), Fact::DateTime(r.echeance)];
            (Refusal::ReminderSameTime { rappel: r }, f)
        }),
        alarm().prop_map(|m| {
            let f = alarm_facts(&m);
            (Refusal::AlarmSameTime { reveil: m }, f)
        }),
        prop::option::of(id()).prop_map(|id| {
            let mut f = vec![Fact::Words("aucun réveil", "aucun réveil")];
            f.extend(id.map(Fact::Id));
            (Refusal::NoAlarm { id }, f)
        }),
        prop::collection::vec(alarm(), 2..4).prop_map(|reveils| {
            let mut f: Vec<Fact> = reveils.iter().flat_map(alarm_facts).collect();
            f.push(Fact::Words("dis lequel", "dis lequel"));
            (Refusal::AlarmsAmbiguous { reveils }, f)
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn every_fact_of_a_second_round_receipt_is_said((receipt, facts) in receipt_round2()) {
        check("lister_rappels", &Outcome::Done(receipt), &facts)?;
    }

    #[test]
    fn every_fact_of_a_second_round_refusal_is_said((refusal, facts) in refusal_round2()) {
        let mut facts = facts;
        facts.push(Fact::Words("rien n'a été écrit", "je n'ai rien écrit"));
        check("deplacer_rappel", &Outcome::Refused(refusal), &facts)?;
    }
}
