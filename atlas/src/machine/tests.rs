//! The machine on its own: the table of launches, and every state against every event.

use super::*;

fn ran(class: ExitClass, contract: Contract, commits: usize, session: Option<&str>) -> RunObservation {
    RunObservation::plain(class, contract, commits, session.map(str::to_string))
}

fn plan_contract() -> Contract {
    Contract {
        ok: true,
        tenant: Some("shop".into()),
        routes_to_qa: vec!["/a".into()],
        commits: vec!["abc".into()],
        ..Default::default()
    }
}

fn qa(code: i32) -> Vec<RouteQa> {
    vec![RouteQa { declared: "/a".into(), route: "/a".into(), code: Some(code), output: String::new() }]
}

/// What the launcher observed, whatever the step: each answer is given to the step the
/// machine asked for, and a test fails if it asked for another.
#[derive(Debug, Clone)]
enum Seen {
    Ran(RunObservation),
    Deployed(Result<(), String>),
    QaRan(Vec<RouteQa>),
    Merged(MergeFact),
}

fn answer(step: Step, seen: Seen) -> Observation {
    match (step, seen) {
        (Step::Run(s), Seen::Ran(o)) => s.observed(o),
        (Step::Deploy(s), Seen::Deployed(r)) => s.observed(r),
        (Step::Qa(s), Seen::QaRan(r)) => s.observed(r),
        (Step::MergeBack(s), Seen::Merged(f)) => s.observed(f),
        (step, seen) => panic!("the machine asked for {step:?}, the test answers {seen:?}"),
    }
}

fn kind(step: &Step) -> &'static str {
    match step {
        Step::Run(s) => match &s.plan().mode {
            RunMode::First { persist: true } => "run(saved)",
            RunMode::First { persist: false } => "run(not saved)",
            RunMode::Resume { .. } => "resume",
            RunMode::Fresh { after_refused_resume: true } => "fresh(refused)",
            RunMode::Fresh { .. } => "fresh",
        },
        Step::Deploy(_) => "deploy",
        Step::Qa(_) => "qa",
        Step::MergeBack(_) => "merge",
    }
}

/// Plays the observations from the first step; returns the steps taken ("finish" last),
/// the progress and the finish.
fn play(mut p: Progress, observations: Vec<Seen>) -> (Vec<&'static str>, Progress, Option<Finish>) {
    let mut step = Some(p.first_step());
    let mut kinds = vec![kind(step.as_ref().unwrap())];
    let mut finish = None;
    for seen in observations {
        let s = step.take().expect("an observation after the end");
        let t = next(p, answer(s, seen));
        p = t.progress;
        match t.decision {
            Decision::Perform(s) => {
                kinds.push(kind(&s));
                step = Some(s);
            }
            Decision::Finish(f) => {
                kinds.push("finish");
                finish = Some(f);
            }
        }
    }
    (kinds, p, finish)
}

const PLAN: (Intent, Complexity) = (Intent::Run, Complexity::Plan);
const LEGER: (Intent, Complexity) = (Intent::Run, Complexity::Leger);

#[test]
fn lanes_and_downgrades() {
    assert!(is_no_code(Intent::Run, Complexity::Leger));
    assert!(!is_no_code(Intent::Run, Complexity::Plan));
    assert!(is_no_code(Intent::Conseil, Complexity::Leger));
    assert_eq!(
        downgrade(Intent::Run, Complexity::Plan, Some(Intent::Question)),
        Some((Intent::Question, Complexity::Leger))
    );
    assert_eq!(downgrade(Intent::Run, Complexity::Plan, Some(Intent::Run)), Some((Intent::Run, Complexity::Leger)));
    assert_eq!(downgrade(Intent::Question, Complexity::Leger, Some(Intent::Run)), None, "never an upgrade");
    assert_eq!(downgrade(Intent::Run, Complexity::Plan, Some(Intent::Noise)), None);
    assert_eq!(downgrade(Intent::Run, Complexity::Plan, None), None);
}

#[test]
fn code_decisions() {
    let mut c = Contract::default();
    assert_eq!(code_decision(&c, 0), CodeDecision::Analysis);
    assert_eq!(code_decision(&c, 2), CodeDecision::MissingTenantOrRoutes);
    c.tenant = Some("shop".into());
    assert_eq!(code_decision(&c, 2), CodeDecision::MissingTenantOrRoutes, "no routes");
    c.routes_to_qa = vec!["/panier".into()];
    assert_eq!(code_decision(&c, 2), CodeDecision::Deploy { tenant: "shop".into(), routes: vec!["/panier".into()] });
}

#[test]
fn the_launch_follows_the_table() {
    let merged = || Seen::Merged(MergeFact::Merged { base: "main".into(), sha: "f00".into(), commits: 1 });
    let refused =
        Seen::Ran(RunObservation { resume_refused: true, ..ran(ExitClass::Error, Contract::default(), 1, None) });
    let timeout =
        |by_shutdown| Seen::Ran(RunObservation { by_shutdown, ..ran(ExitClass::Idle, Contract::default(), 1, None) });
    let setback = |why| {
        Seen::Ran(RunObservation { setback: Some(why), ..ran(ExitClass::Error, Contract::default(), 0, Some("s1")) })
    };
    let ok = |contract, commits, session| Seen::Ran(ran(ExitClass::Ok, contract, commits, session));
    let overloaded = Setback::ApiUnavailable { status: Some(529) };
    let resumed = |session: &str| {
        let mut p = Progress::new(LEGER, true, 1, 2);
        p.resume = Some(session.into());
        p
    };
    #[allow(clippy::type_complexity)]
    let cases: Vec<(&str, Progress, Vec<Seen>, Vec<&str>, End)> = vec![
        (
            "light run: no deploy, merged",
            Progress::new(LEGER, true, 0, 2),
            vec![ok(Contract::default(), 1, None), merged()],
            vec!["run(saved)", "merge", "finish"],
            End::Delivered,
        ),
        (
            "plan run: deploy, QA passes, merged",
            Progress::new(PLAN, true, 0, 2),
            vec![ok(plan_contract(), 1, Some("s1")), Seen::Deployed(Ok(())), Seen::QaRan(qa(0)), merged()],
            vec!["run(saved)", "deploy", "qa", "merge", "finish"],
            End::Delivered,
        ),
        (
            "QA fails once: the saved session is resumed",
            Progress::new(PLAN, true, 0, 2),
            vec![
                ok(plan_contract(), 1, Some("s1")),
                Seen::Deployed(Ok(())),
                Seen::QaRan(qa(1)),
                ok(plan_contract(), 2, Some("s1")),
                Seen::Deployed(Ok(())),
                Seen::QaRan(qa(0)),
                merged(),
            ],
            vec!["run(saved)", "deploy", "qa", "resume", "deploy", "qa", "merge", "finish"],
            End::Delivered,
        ),
        (
            "the resume is refused: a fresh pass on the same branch",
            Progress::new(PLAN, true, 0, 2),
            vec![
                ok(plan_contract(), 1, Some("s1")),
                Seen::Deployed(Ok(())),
                Seen::QaRan(qa(1)),
                refused.clone(),
                ok(plan_contract(), 2, Some("s2")),
                Seen::Deployed(Ok(())),
                Seen::QaRan(qa(0)),
                merged(),
            ],
            vec!["run(saved)", "deploy", "qa", "resume", "fresh(refused)", "deploy", "qa", "merge", "finish"],
            End::Delivered,
        ),
        (
            "QA fails three times: escalated",
            Progress::new(PLAN, true, 0, 2),
            vec![
                ok(plan_contract(), 1, Some("s")),
                Seen::Deployed(Ok(())),
                Seen::QaRan(qa(1)),
                ok(plan_contract(), 1, Some("s")),
                Seen::Deployed(Ok(())),
                Seen::QaRan(qa(1)),
                ok(plan_contract(), 1, Some("s")),
                Seen::Deployed(Ok(())),
                Seen::QaRan(qa(1)),
            ],
            vec!["run(saved)", "deploy", "qa", "resume", "deploy", "qa", "resume", "deploy", "qa", "finish"],
            End::Escalated(EscalateWhy::QaBudget { iterations: 3, iso_only: false }),
        ),
        (
            "deploy fails",
            Progress::new(PLAN, true, 0, 2),
            vec![ok(plan_contract(), 1, None), Seen::Deployed(Err("x".into()))],
            vec!["run(saved)", "deploy", "finish"],
            End::Failed(FailReason::DeployFailed),
        ),
        (
            "no QA command: delivered, unverified",
            Progress::new(PLAN, false, 0, 2),
            vec![ok(plan_contract(), 1, None), Seen::Deployed(Ok(())), merged()],
            vec!["run(saved)", "deploy", "merge", "finish"],
            End::Delivered,
        ),
        (
            "commits without a tenant",
            Progress::new(PLAN, true, 0, 2),
            vec![ok(Contract { ok: true, ..Default::default() }, 2, None)],
            vec!["run(saved)", "finish"],
            End::Failed(FailReason::MissingTenantOrRoutes),
        ),
        (
            "neither tenant nor commits: an analysis",
            Progress::new(PLAN, true, 0, 2),
            vec![ok(Contract::default(), 0, None)],
            vec!["run(saved)", "finish"],
            End::Failed(FailReason::NoChange),
        ),
        (
            "a light run that committed nothing: no change, never an analysis",
            Progress::new(LEGER, true, 0, 2),
            vec![ok(Contract { ok: true, ..Default::default() }, 0, Some("s1"))],
            vec!["run(saved)", "finish"],
            End::Failed(FailReason::NoChange),
        ),
        (
            "a question answered without a commit is delivered",
            Progress::new((Intent::Question, Complexity::Leger), true, 0, 2),
            vec![ok(Contract::default(), 0, None), Seen::Merged(MergeFact::NothingToMerge)],
            vec!["run(saved)", "merge", "finish"],
            End::Delivered,
        ),
        (
            "the API is overloaded: parked, retry 1 of 5",
            Progress::new(LEGER, true, 0, 2),
            vec![setback(overloaded)],
            vec!["run(saved)", "finish"],
            End::Parked { why: overloaded, retry: (1, 5) },
        ),
        (
            "the API still unavailable after the cap: escalated",
            Progress { setbacks_done: 5, ..Progress::new(LEGER, true, 0, 2) },
            vec![setback(overloaded)],
            vec!["run(saved)", "finish"],
            End::Escalated(EscalateWhy::Unavailable { attempts: 6, why: overloaded }),
        ),
        (
            "root refused: parked, never failed",
            Progress::new(PLAN, true, 0, 2),
            vec![setback(Setback::RootRefused)],
            vec!["run(saved)", "finish"],
            End::Parked { why: Setback::RootRefused, retry: (1, 5) },
        ),
        (
            "the turn limit is a failure of its own",
            Progress::new(LEGER, true, 0, 2),
            vec![Seen::Ran(RunObservation { max_turns: true, ..ran(ExitClass::Error, Contract::default(), 0, None) })],
            vec!["run(saved)", "finish"],
            End::Failed(FailReason::MaxTurns),
        ),
        (
            "a denied tool is no success, whatever the result said",
            Progress::new(LEGER, true, 0, 2),
            vec![Seen::Ran(RunObservation {
                denied: vec!["Bash : echo hi > HELLO.md".into()],
                ..ran(ExitClass::Ok, Contract::default(), 1, None)
            })],
            vec!["run(saved)", "finish"],
            End::Failed(FailReason::ToolsDenied),
        ),
        (
            "a retry resumes the saved session",
            resumed("s1"),
            vec![ok(Contract::default(), 1, Some("s1")), merged()],
            vec!["resume", "merge", "finish"],
            End::Delivered,
        ),
        (
            "a retry whose session is gone starts afresh on its branch",
            resumed("gone"),
            vec![refused.clone(), ok(Contract::default(), 1, Some("s2")), merged()],
            vec!["resume", "fresh(refused)", "merge", "finish"],
            End::Delivered,
        ),
        (
            "downgraded to a question: no deploy",
            Progress::new(PLAN, true, 0, 2),
            vec![
                ok(Contract { intent: Some(Intent::Question), ..Default::default() }, 0, None),
                Seen::Merged(MergeFact::NothingToMerge),
            ],
            vec!["run(saved)", "merge", "finish"],
            End::Delivered,
        ),
        (
            "an error result",
            Progress::new(LEGER, true, 0, 2),
            vec![Seen::Ran(ran(ExitClass::Error, Contract::default(), 0, None))],
            vec!["run(saved)", "finish"],
            End::Failed(FailReason::Run(ExitClass::Error)),
        ),
        (
            "first timeout: retry 1 of 2",
            Progress::new(LEGER, true, 0, 2),
            vec![timeout(false)],
            vec!["run(saved)", "finish"],
            End::TimedOut { retry: (1, 2) },
        ),
        (
            "third timeout: escalated",
            Progress::new(LEGER, true, 2, 2),
            vec![timeout(false)],
            vec!["run(saved)", "finish"],
            End::Escalated(EscalateWhy::Timeouts { attempts: 3 }),
        ),
        (
            "a shutdown does not count as an attempt",
            Progress::new(LEGER, true, 2, 2),
            vec![timeout(true)],
            vec!["run(saved)", "finish"],
            End::Interrupted,
        ),
    ];
    for (name, p, observations, expected, end) in cases {
        let (kinds, _, finish) = play(p, observations);
        assert_eq!(kinds, expected, "{name}");
        assert_eq!(finish.map(|f| f.end), Some(end), "{name}");
    }
}

#[test]
fn the_end_decides_the_state_the_worktree_and_the_recap() {
    let overloaded = Setback::ApiUnavailable { status: None };
    let cases = [
        (End::Delivered, EmailState::Actioned, false, RecapDecision::Send),
        (End::Failed(FailReason::NoChange), EmailState::Failed, false, RecapDecision::Send),
        (End::Escalated(EscalateWhy::Timeouts { attempts: 3 }), EmailState::Escalated, false, RecapDecision::Send),
        (End::Interrupted, EmailState::Classified, true, RecapDecision::Send),
        (End::TimedOut { retry: (1, 2) }, EmailState::Classified, true, RecapDecision::Send),
        (End::TimedOut { retry: (2, 2) }, EmailState::Classified, true, RecapDecision::Skip { attempt: 2 }),
        (End::Parked { why: overloaded, retry: (1, 5) }, EmailState::Classified, true, RecapDecision::Send),
        (
            End::Parked { why: overloaded, retry: (3, 5) },
            EmailState::Classified,
            true,
            RecapDecision::Skip { attempt: 3 },
        ),
    ];
    for (end, state, keep_workspace, recap) in cases {
        assert_eq!(Finish::of(end), Finish { end, state, keep_workspace, recap }, "{end:?}");
    }
}

#[test]
fn mock_up_only_failures_get_eight_iterations() {
    let mut p = Progress::new(PLAN, true, 0, 2);
    let mut step = p.first_step();
    let mut runs = 0;
    let finish = loop {
        let seen = match &step {
            Step::Run(_) => {
                runs += 1;
                Seen::Ran(ran(ExitClass::Ok, plan_contract(), 1, Some("s")))
            }
            Step::Deploy(_) => Seen::Deployed(Ok(())),
            Step::Qa(_) => Seen::QaRan(qa(QA_EXIT_ISO_ONLY)),
            Step::MergeBack(_) => unreachable!("QA never passes"),
        };
        let t = next(p, answer(step, seen));
        p = t.progress;
        match t.decision {
            Decision::Perform(s) => step = s,
            Decision::Finish(f) => break f,
        }
    };
    assert_eq!(runs, 8);
    assert_eq!(finish.end, End::Escalated(EscalateWhy::QaBudget { iterations: 8, iso_only: true }));
    assert!(matches!(&p.qa, QaFact::Failed { iterations: 8, .. }));
}

#[test]
fn the_facts_follow_the_steps() {
    let (_, p, _) = play(
        Progress::new(PLAN, true, 0, 2),
        vec![
            Seen::Ran(ran(ExitClass::Ok, plan_contract(), 1, Some("s1"))),
            Seen::Deployed(Ok(())),
            Seen::QaRan(qa(0)),
            Seen::Merged(MergeFact::NotMerged { branch: "atlas/email-1".into(), why: NotMergedWhy::DirtyTrunk }),
        ],
    );
    assert_eq!(p.deploy, DeployFact::Done { tenant: "shop".into() });
    assert!(matches!(&p.qa, QaFact::Passed { iterations: 1, routes } if routes.len() == 1));
    assert!(!p.merge.on_trunk());
    assert_eq!(p.session.as_deref(), Some("s1"));
    // A refused resume twice in a row is a failure, never a loop.
    let refused = RunObservation { resume_refused: true, ..ran(ExitClass::Error, Contract::default(), 0, None) };
    let p = Progress::new(PLAN, true, 0, 2);
    let step = RunStep(RunPlan { iteration: 2, mode: RunMode::Resume { session: "x".into() }, feedback: None });
    let t = next(p, step.observed(refused.clone()));
    let Decision::Perform(Step::Run(step)) = t.decision else { panic!("{:?}", t.decision) };
    assert_eq!((step.plan().iteration, &step.plan().mode), (2, &RunMode::Fresh { after_refused_resume: true }));
    let t = next(t.progress, step.observed(refused));
    assert_eq!(t.decision, Decision::Finish(Finish::of(End::Failed(FailReason::ResumeRefused))));
}

#[test]
fn a_downgrade_is_a_decision_of_the_transition() {
    let step = Progress::new(PLAN, true, 0, 2).first_step();
    let Step::Run(step) = step else { unreachable!() };
    let contract = Contract { intent: Some(Intent::Conseil), ..Default::default() };
    let t = next(Progress::new(PLAN, true, 0, 2), step.observed(ran(ExitClass::Ok, contract, 0, None)));
    assert_eq!(t.lane_corrected, Some((Intent::Conseil, Complexity::Leger)));
    assert_eq!(t.progress.lane, (Intent::Conseil, Complexity::Leger));
    assert!(matches!(t.decision, Decision::Perform(Step::MergeBack(_))));
}

// ── Every state × every event ──────────────────────────────────────────────────────

/// The step pending in a state (the step is made fresh for every event: a step is
/// observed once).
#[derive(Debug, Clone, Copy)]
enum Pending {
    Run,
    Deploy,
    Qa,
    Merge,
}

fn modes() -> [RunMode; 4] {
    [
        RunMode::First { persist: true },
        RunMode::Resume { session: "old".into() },
        RunMode::Fresh { after_refused_resume: true },
        RunMode::Fresh { after_refused_resume: false },
    ]
}

/// Every progress the machine can be in when a step is pending: each of the `lanes`, QA
/// configured or not, retries and parkings spent or not, a session known or not, and each
/// of the `iterations`.
fn progresses(lanes: &[(Intent, Complexity)], iterations: &[u32]) -> Vec<Progress> {
    let mut out = Vec::new();
    for &lane in lanes {
        for qa_configured in [false, true] {
            for (retries_done, setbacks_done) in [(0, 0), (2, 0), (0, 5), (2, 5)] {
                for session in [None, Some("s0".to_string())] {
                    for &iteration in iterations {
                        let mut p = Progress::new(lane, qa_configured, retries_done, 2);
                        p.setbacks_done = setbacks_done;
                        p.session = session.clone();
                        p.iteration = iteration;
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

fn all_lanes() -> Vec<(Intent, Complexity)> {
    Intent::ALL.into_iter().flat_map(|i| [(i, Complexity::Leger), (i, Complexity::Plan)]).collect()
}

fn run_events() -> Vec<RunObservation> {
    let classes = [ExitClass::Ok, ExitClass::Idle, ExitClass::HardTimeout, ExitClass::Error, ExitClass::BadArguments];
    let contracts = [
        Contract::default(),
        plan_contract(),
        Contract { tenant: Some("shop".into()), ..Default::default() },
        Contract { intent: Some(Intent::Question), ..Default::default() },
        Contract { intent: Some(Intent::Noise), ..plan_contract() },
    ];
    let setbacks = [None, Some(Setback::ApiUnavailable { status: Some(529) }), Some(Setback::RootRefused)];
    let mut out = Vec::new();
    for class in classes {
        for contract in &contracts {
            for commits in [0, 2] {
                for setback in setbacks {
                    for flags in 0..16u8 {
                        out.push(RunObservation {
                            class,
                            by_shutdown: flags & 1 != 0,
                            resume_refused: flags & 2 != 0,
                            session: (flags & 4 != 0).then(|| "s1".to_string()),
                            contract: contract.clone(),
                            commits,
                            setback,
                            max_turns: flags & 8 != 0 && class == ExitClass::Error,
                            denied: if class == ExitClass::Ok && flags & 8 != 0 {
                                vec!["Bash : rm".into()]
                            } else {
                                Vec::new()
                            },
                        });
                    }
                }
            }
        }
    }
    out
}

fn qa_events() -> Vec<Vec<RouteQa>> {
    let route = |code| RouteQa { declared: "/a".into(), route: "/a".into(), code, output: "x".into() };
    vec![
        vec![],
        vec![route(Some(0))],
        vec![route(Some(1))],
        vec![route(Some(QA_EXIT_ISO_ONLY))],
        vec![route(Some(QA_EXIT_ISO_ONLY)), route(Some(1))],
        vec![route(Some(0)), route(None)],
    ]
}

fn merge_events() -> Vec<MergeFact> {
    vec![
        MergeFact::NothingToMerge,
        MergeFact::Merged { base: "main".into(), sha: "f00".into(), commits: 1 },
        MergeFact::InTrunk { commits: 1 },
        MergeFact::NotMerged { branch: "b".into(), why: NotMergedWhy::DirtyTrunk },
        MergeFact::NotMerged { branch: "b".into(), why: NotMergedWhy::Conflict("x".into()) },
        MergeFact::NotAttempted { branch: None },
    ]
}

/// What must hold of any transition, whatever the state and the event.
fn check(before: &Progress, pending: Pending, event: &Seen, t: &Transition) {
    let ctx = || format!("{pending:?} × {event:?} from {before:?}");
    let p = &t.progress;
    // Facts never go back: the classification stays, counters stay.
    assert_eq!(p.classified, before.classified, "{}", ctx());
    assert_eq!((p.retries_done, p.setbacks_done), (before.retries_done, before.setbacks_done), "{}", ctx());
    // A lane correction comes from a pass only, toward no code only, and is applied.
    if let Some(lane) = t.lane_corrected {
        assert!(matches!(pending, Pending::Run), "{}", ctx());
        assert!(is_no_code(lane.0, lane.1) && !is_no_code(before.lane.0, before.lane.1), "{}", ctx());
        assert_eq!((p.lane, lane.1), (lane, Complexity::Leger), "{}", ctx());
    } else {
        assert_eq!(p.lane, before.lane, "{}", ctx());
    }
    let failed_pass = matches!(event, Seen::Ran(o) if o.class != ExitClass::Ok || o.setback.is_some() || o.resume_refused || !o.denied.is_empty());
    match &t.decision {
        Decision::Finish(f) => {
            // Every end names the state it leads to, consistently.
            assert_eq!(*f, Finish::of(f.end), "{}", ctx());
            match f.end {
                // Delivered only once the work is merged back (or found on the trunk).
                End::Delivered => assert!(matches!(pending, Pending::Merge), "{}", ctx()),
                End::TimedOut { retry: (n, max) } | End::Parked { retry: (n, max), .. } => {
                    assert!(n >= 1 && n <= max, "{}", ctx())
                }
                End::Escalated(EscalateWhy::QaBudget { iterations, iso_only }) => {
                    assert!(matches!(pending, Pending::Qa), "{}", ctx());
                    let budget = if iso_only { MAX_ISO_ITERATIONS } else { MAX_QA_ITERATIONS };
                    assert!(iterations >= budget, "{}", ctx());
                }
                End::Escalated(EscalateWhy::Timeouts { attempts }) => {
                    assert_eq!(attempts, before.max_retries + 1, "{}", ctx())
                }
                End::Escalated(EscalateWhy::Unavailable { attempts, .. }) => {
                    assert_eq!(attempts, before.max_setbacks + 1, "{}", ctx())
                }
                End::Failed(_) | End::Interrupted => {}
            }
            if let Seen::Ran(o) = event {
                if o.setback.is_some() && !o.resume_refused {
                    assert!(
                        matches!(f.end, End::Parked { .. } | End::Escalated(EscalateWhy::Unavailable { .. })),
                        "an outage is never a failure: {}",
                        ctx()
                    );
                }
                if o.by_shutdown && o.class.retryable() && o.setback.is_none() && !o.resume_refused {
                    assert_eq!(f.end, End::Interrupted, "{}", ctx());
                }
            }
        }
        Decision::Perform(step) => {
            // A failed pass never goes on to deploy, QA or merge: only a fresh pass.
            if failed_pass {
                let Step::Run(s) = step else { panic!("a failed pass goes on: {}", ctx()) };
                assert_eq!(s.plan().mode, RunMode::Fresh { after_refused_resume: true }, "{}", ctx());
            }
            match step {
                Step::Run(s) => {
                    let plan = s.plan();
                    assert!(plan.iteration <= MAX_ISO_ITERATIONS, "{}", ctx());
                    if let RunMode::Resume { session } = &plan.mode {
                        assert_eq!(Some(session), p.session.as_ref(), "{}", ctx());
                    }
                    // A new pass follows a QA failure (feedback, one iteration more) or a
                    // refused resume (the same iteration, afresh).
                    match pending {
                        Pending::Qa => {
                            assert_eq!(plan.iteration, before.iteration + 1, "{}", ctx());
                            assert!(plan.feedback.as_ref().is_some_and(|f| !f.failed.is_empty()), "{}", ctx());
                            assert!(p.may_iterate(), "{}", ctx());
                        }
                        Pending::Run => {
                            assert!(matches!(event, Seen::Ran(o) if o.resume_refused), "{}", ctx())
                        }
                        _ => panic!("a pass after a deploy or a merge: {}", ctx()),
                    }
                }
                Step::Deploy(s) => {
                    assert!(matches!(pending, Pending::Run) && p.may_iterate(), "{}", ctx());
                    assert_eq!(Some(s.tenant()), p.contract.tenant.as_deref(), "{}", ctx());
                    assert!(!s.routes().is_empty() && s.routes() == p.contract.routes_to_qa, "{}", ctx());
                }
                Step::Qa(s) => {
                    assert!(matches!(pending, Pending::Deploy) && p.qa_configured, "{}", ctx());
                    assert!(matches!(&p.deploy, DeployFact::Done { tenant } if tenant == s.tenant()), "{}", ctx());
                }
                Step::MergeBack(_) => {
                    // Merging means the lane's work is done.
                    assert!(matches!(p.deploy, DeployFact::NotNeeded | DeployFact::Done { .. }), "{}", ctx());
                    assert!(
                        matches!(p.qa, QaFact::NotNeeded | QaFact::NotConfigured | QaFact::Passed { .. }),
                        "{}",
                        ctx()
                    );
                    // A light run request delivers only what it committed.
                    if p.lane == (Intent::Run, Complexity::Leger) {
                        assert!(p.commits > 0, "{}", ctx());
                    }
                }
            }
        }
    }
}

#[test]
fn every_state_meets_every_event() {
    // A pass can be pending in any lane (the first one, or after a refused resume); a deploy
    // or a QA only in the code lane (the lane that iterates); a merge in any lane.
    let every_iteration = [1, 2, MAX_QA_ITERATIONS, MAX_ISO_ITERATIONS - 1, MAX_ISO_ITERATIONS];
    let run_states = progresses(&all_lanes(), &[1, MAX_ISO_ITERATIONS]);
    let code_states = progresses(&[PLAN], &every_iteration);
    let merge_states = progresses(&all_lanes(), &[1]);
    let (runs, qas, merges) = (run_events(), qa_events(), merge_events());
    let deploys = [Ok(()), Err("code 1 : boom".to_string())];
    let (mut states, mut transitions) = (0usize, 0usize);
    let routes = vec!["/a".to_string()];
    for before in &run_states {
        // Every mode of pass × every pass observed.
        for mode in modes() {
            states += 1;
            for (i, o) in runs.iter().enumerate() {
                let step = || RunStep(RunPlan { iteration: before.iteration, mode: mode.clone(), feedback: None });
                let t = next(before.clone(), step().observed(o.clone()));
                if i % 97 == 0 {
                    // Pure: the same state and event give the same transition.
                    assert_eq!(t, next(before.clone(), step().observed(o.clone())));
                }
                check(before, Pending::Run, &Seen::Ran(o.clone()), &t);
                transitions += 1;
            }
        }
    }
    for before in &code_states {
        states += 2;
        for r in &deploys {
            let step = DeployStep { tenant: "shop".into(), routes: routes.clone() };
            let t = next(before.clone(), step.observed(r.clone()));
            check(before, Pending::Deploy, &Seen::Deployed(r.clone()), &t);
            transitions += 1;
        }
        let mut before = before.clone();
        before.deploy = DeployFact::Done { tenant: "shop".into() };
        for r in &qas {
            let step = QaStep { tenant: "shop".into(), routes: routes.clone() };
            let t = next(before.clone(), step.observed(r.clone()));
            check(&before, Pending::Qa, &Seen::QaRan(r.clone()), &t);
            transitions += 1;
        }
    }
    for before in &merge_states {
        states += 1;
        let mut before = before.clone();
        (before.deploy, before.qa, before.commits) = (DeployFact::NotNeeded, QaFact::NotNeeded, 1);
        for f in &merges {
            let t = next(before.clone(), MergeStep(()).observed(f.clone()));
            assert_eq!(t.progress.merge, *f);
            check(&before, Pending::Merge, &Seen::Merged(f.clone()), &t);
            transitions += 1;
        }
    }
    let events = runs.len() + deploys.len() + qas.len() + merges.len();
    assert_eq!((run_states.len(), code_states.len(), merge_states.len()), (320, 80, 160));
    assert_eq!((runs.len(), events), (2400, 2414));
    assert_eq!(states, 320 * 4 + 80 * 2 + 160);
    assert_eq!(transitions, 320 * 4 * 2400 + 80 * (2 + 6) + 160 * 6);
    eprintln!("{states} states × their events: {transitions} transitions checked ({events} distinct events)");
}
