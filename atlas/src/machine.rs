//! What the launcher does after it started a message, as an explicit state machine: a step
//! (run Claude Code — the first pass, a resumed iteration, or a fresh pass when the resume is
//! refused —, deploy, QA the routes, merge back, finish) and a pure `next(progress, step,
//! observation)` that says what comes next and records the facts the recap will state. The
//! launcher performs each step (PTY, git, commands) and feeds back what it observed; the
//! rules of spec §9 (lanes, downgrade, code decision, 3 / 8 iterations), of the bounded
//! retries (timeouts; an unavailable API or a refusal to run as root, parked with a backoff)
//! and of what counts as done (a run request with no commit is no change; a denied tool, the
//! turn limit or an API error is no success) live here, where a table of cases tests them
//! without a PTY, git or SMTP.

use super::{Complexity, Intent};

/// QA iterations before a human is asked (spec §9).
pub const MAX_QA_ITERATIONS: u32 = 3;
/// …when only the mock-up conformity failed.
pub const MAX_ISO_ITERATIONS: u32 = 8;
/// QA exit code meaning "only the mock-up conformity failed".
pub const QA_EXIT_ISO_ONLY: i32 = 3;

/// The lane after the run (spec §9): question/negociation/conseil never code; run codes
/// only with complexity plan.
pub fn is_no_code(intent: Intent, complexity: Complexity) -> bool {
    match intent {
        Intent::Run => complexity != Complexity::Plan,
        _ => true,
    }
}

/// The contract's downgrade: applied only toward a no-code lane, only when the lane is not
/// already no-code, complexity forced to leger.
pub fn downgrade(intent: Intent, complexity: Complexity, reported: Option<Intent>) -> Option<(Intent, Complexity)> {
    let reported = reported?;
    if is_no_code(intent, complexity) || reported == Intent::Noise {
        return None;
    }
    let target = (reported, Complexity::Leger);
    (is_no_code(target.0, target.1) && target != (intent, complexity)).then_some(target)
}

/// The contract, read leniently: every field has a safe default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Contract {
    pub ok: bool,
    pub intent: Option<Intent>,
    pub tenant: Option<String>,
    pub routes_to_qa: Vec<String>,
    pub commits: Vec<String>,
    pub summary_md: String,
    pub draft_reply_for_user: Option<String>,
}

/// What the code lane does with a contract (spec §9.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeDecision {
    /// Commits without a tenant or without routes: an anomaly.
    MissingTenantOrRoutes,
    /// Neither tenant nor commits: an analysis, treated as no-code.
    Analysis,
    Deploy {
        tenant: String,
        routes: Vec<String>,
    },
}

pub fn code_decision(contract: &Contract, commits: usize) -> CodeDecision {
    match (&contract.tenant, contract.routes_to_qa.is_empty(), commits) {
        (None, _, 0) => CodeDecision::Analysis,
        (Some(t), false, _) => CodeDecision::Deploy { tenant: t.clone(), routes: contract.routes_to_qa.clone() },
        (Some(_), true, 0) => CodeDecision::Analysis,
        _ => CodeDecision::MissingTenantOrRoutes,
    }
}

/// How a run ended, with the exit code the spec's wrapper gave each case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitClass {
    /// `result` with `is_error: false`.
    Ok,
    /// Killed after a silence of `idle_timeout` (no result): stuck, retryable.
    Idle,
    /// Killed by the hard timeout or Atlas' budget (no result): runaway, retryable.
    HardTimeout,
    /// A real failure: `result` with `is_error: true`, a crash, an exit without a result.
    Error,
    /// No result and an argument error on the terminal (`error: unknown option …`; exit 1 for
    /// the real CLI, 2 for the spec's wrapper): claude refused its command line.
    BadArguments,
}

impl ExitClass {
    pub fn code(self) -> i32 {
        match self {
            ExitClass::Ok => 0,
            ExitClass::Idle => 125,
            ExitClass::HardTimeout => 124,
            ExitClass::Error => 1,
            ExitClass::BadArguments => 2,
        }
    }

    /// Whether resuming the session may help (a timeout), as opposed to a real failure.
    pub fn retryable(self) -> bool {
        matches!(self, ExitClass::Idle | ExitClass::HardTimeout)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExitClass::Ok => "ok",
            ExitClass::Idle => "idle",
            ExitClass::HardTimeout => "hard_timeout",
            ExitClass::Error => "error",
            ExitClass::BadArguments => "bad_arguments",
        }
    }
}

/// Parkings after an unavailable API (or a refusal to run as root) before a human is asked
/// (`ATLAS_API_RETRIES`).
pub const DEFAULT_MAX_SETBACKS: u32 = 5;

/// Something outside the run stopped it before it could work: nothing it did is wrong, so
/// the message is parked and tried again later, never failed for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setback {
    /// Claude Code gave up on the API (overloaded, rate limited, a 5xx, the network or a
    /// timeout); `status` is the last HTTP status (None: no answer).
    ApiUnavailable { status: Option<u16> },
    /// Claude Code refused bypassPermissions because Arthur runs as root.
    RootRefused,
}

impl Setback {
    pub fn as_str(self) -> &'static str {
        match self {
            Setback::ApiUnavailable { .. } => "api_unavailable",
            Setback::RootRefused => "root_refused",
        }
    }
}

/// How a pass of Claude Code treats its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunMode {
    /// The first pass; `persist`: its session is saved, so an iteration can resume it.
    First { persist: bool },
    /// An iteration that resumes the saved session.
    Resume { session: String },
    /// An iteration in a new session (none was saved, or the resume was refused): the prompt
    /// carries what the previous pass did.
    Fresh { after_refused_resume: bool },
}

impl RunMode {
    /// `atlas_launches.session_mode`.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunMode::First { persist: false } => "not_saved",
            RunMode::First { persist: true } => "saved",
            RunMode::Resume { .. } => "resumed",
            RunMode::Fresh { after_refused_resume: true } => "fresh_after_refused_resume",
            RunMode::Fresh { after_refused_resume: false } => "not_saved",
        }
    }
}

/// One route's QA, as run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteQa {
    /// The route the contract declared.
    pub declared: String,
    /// The route tested (re-resolved against the sitemap).
    pub route: String,
    /// The QA command's exit code (None: it did not finish).
    pub code: Option<i32>,
    /// Its output, redacted and compacted.
    pub output: String,
}

impl RouteQa {
    pub fn passed(&self) -> bool {
        self.code == Some(0)
    }
}

/// The QA failures an iteration is told about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QaFeedback {
    pub failed: Vec<RouteQa>,
    /// Only the mock-up conformity failed (every failing route exited 3).
    pub iso_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPlan {
    /// 1 for the first pass, then one more per QA iteration.
    pub iteration: u32,
    pub mode: RunMode,
    pub feedback: Option<QaFeedback>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Run(RunPlan),
    Deploy { tenant: String, routes: Vec<String> },
    Qa { tenant: String, routes: Vec<String> },
    MergeBack,
    Finish,
}

/// What a pass of Claude Code came to.
#[derive(Debug, Clone, PartialEq)]
pub struct RunObservation {
    pub class: ExitClass,
    /// Arthur's own shutdown stopped it.
    pub by_shutdown: bool,
    /// `--resume` was asked and Claude Code refused it (no such session): nothing ran.
    pub resume_refused: bool,
    /// The session a later pass can resume (None when it was not saved).
    pub session: Option<String>,
    pub contract: Contract,
    /// Commits on the workspace since the fork.
    pub commits: usize,
    /// The API was unavailable, or Claude Code refused to run as root: nothing was tried.
    pub setback: Option<Setback>,
    /// The run hit `--max-turns`.
    pub max_turns: bool,
    /// Tool calls the permission mode denied ("Bash : echo hi > HELLO.md").
    pub denied: Vec<String>,
}

impl RunObservation {
    /// A pass with nothing special: its class, contract and commits.
    pub fn plain(class: ExitClass, contract: Contract, commits: usize, session: Option<String>) -> Self {
        RunObservation {
            class,
            by_shutdown: false,
            resume_refused: false,
            session,
            contract,
            commits,
            setback: None,
            max_turns: false,
            denied: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    Ran(RunObservation),
    /// The deploy command: done, or why not.
    Deployed(Result<(), String>),
    QaRan(Vec<RouteQa>),
    Merged(MergeFact),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeployFact {
    /// The lane deploys nothing (no code, or an analysis).
    NotNeeded,
    /// The run ended before a deploy.
    NotReached,
    Done {
        tenant: String,
    },
    Failed {
        why: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QaFact {
    NotNeeded,
    NotReached,
    /// Deployed, but `ATLAS_QA_CMD` is not set: nothing was checked.
    NotConfigured,
    Passed {
        routes: Vec<RouteQa>,
        iterations: u32,
    },
    Failed {
        routes: Vec<RouteQa>,
        iterations: u32,
    },
}

/// Why a finished run's branch is not in the trunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotMergedWhy {
    /// The trunk has uncommitted changes (or an operation in progress).
    DirtyTrunk,
    Conflict(String),
    /// The trunk is checked out on another branch (or detached).
    TrunkElsewhere(String),
    /// git failed.
    Failed(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeFact {
    /// No merge was tried: the run did not deliver (its branch, if any, is kept).
    NotAttempted {
        branch: Option<String>,
    },
    /// Nothing to merge: no commit the trunk lacks.
    NothingToMerge,
    Merged {
        base: String,
        sha: String,
        commits: usize,
    },
    /// The run worked in the trunk itself (`ATLAS_WORKTREE=0`, or the worktree failed).
    InTrunk {
        commits: usize,
    },
    NotMerged {
        branch: String,
        why: NotMergedWhy,
    },
}

impl MergeFact {
    /// Whether the work is on the trunk (or there was none to put there).
    pub fn on_trunk(&self) -> bool {
        matches!(self, MergeFact::NothingToMerge | MergeFact::Merged { .. } | MergeFact::InTrunk { .. })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// Claude Code failed (an error result, a crash, bad arguments).
    Run(ExitClass),
    /// Commits without a deployment target or without routes to check (spec §9.3).
    MissingTenantOrRoutes,
    DeployFailed,
    /// A resumed pass was refused twice in a row.
    ResumeRefused,
    /// Claude Code stopped at `--max-turns`.
    MaxTurns,
    /// The permission mode denied tool calls: the run did not do what it tried.
    ToolsDenied,
    /// A run request ended without a single commit.
    NoChange,
}

impl FailReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FailReason::Run(class) => class.as_str(),
            FailReason::MissingTenantOrRoutes => "missing_tenant_or_routes",
            FailReason::DeployFailed => "deploy_failed",
            FailReason::ResumeRefused => "resume_refused",
            FailReason::MaxTurns => "max_turns",
            FailReason::ToolsDenied => "tools_denied",
            FailReason::NoChange => "no_change",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscalateWhy {
    /// QA failed past its budget (3 iterations, 8 when only the mock-up conformity failed).
    QaBudget { iterations: u32, iso_only: bool },
    /// The run timed out on every attempt (the first and each retry).
    Timeouts { attempts: u32 },
    /// Parked after each of `attempts` launches (the API unavailable, or root refused).
    Unavailable { attempts: u32, why: Setback },
}

/// How the launch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The lane's work is done (code, or no code needed).
    Delivered,
    Failed(FailReason),
    /// Killed by a timeout (or Arthur's shutdown) before its result; `retry` = (this retry's
    /// number, the most allowed) when one is scheduled, None for a shutdown (not counted).
    TimedOut {
        by_shutdown: bool,
        retry: Option<(u32, u32)>,
    },
    Escalated(EscalateWhy),
    /// The run could not work (`why`); the message goes back to the queue for a later try,
    /// `retry` = (this parking's number, the most allowed).
    Parked {
        why: Setback,
        retry: (u32, u32),
    },
}

/// Everything known about the launch so far: the facts the recap states.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// As classified.
    pub classified: (Intent, Complexity),
    /// After the contract's downgrade.
    pub lane: (Intent, Complexity),
    /// The last pass's number.
    pub iteration: u32,
    pub session: Option<String>,
    pub contract: Contract,
    pub commits: usize,
    pub deploy: DeployFact,
    pub qa: QaFact,
    pub merge: MergeFact,
    pub end: Option<End>,
    /// `ATLAS_QA_CMD` is set.
    pub qa_configured: bool,
    /// Retries already made after timeouts, and the most allowed (`ATLAS_MAX_RETRIES`).
    pub retries_done: u32,
    pub max_retries: u32,
    /// Parkings already made (an unavailable API, root refused), and the most allowed.
    pub setbacks_done: u32,
    pub max_setbacks: u32,
    /// The session the first pass resumes (a retry of a launch whose session was saved).
    pub resume: Option<String>,
    /// Tool calls the permission mode denied.
    pub denied: Vec<String>,
}

impl Progress {
    pub fn new(classified: (Intent, Complexity), qa_configured: bool, retries_done: u32, max_retries: u32) -> Self {
        Progress {
            classified,
            lane: classified,
            iteration: 0,
            session: None,
            contract: Contract::default(),
            commits: 0,
            deploy: DeployFact::NotReached,
            qa: QaFact::NotReached,
            merge: MergeFact::NotAttempted { branch: None },
            end: None,
            qa_configured,
            retries_done,
            max_retries,
            setbacks_done: 0,
            max_setbacks: DEFAULT_MAX_SETBACKS,
            resume: None,
            denied: Vec::new(),
        }
    }

    /// Whether the lane can iterate (QA, then a relaunch): only the code lane (run + plan).
    pub fn may_iterate(&self) -> bool {
        !is_no_code(self.lane.0, self.lane.1)
    }

    /// The first step: one pass, its session saved (a QA iteration or a retry may resume it);
    /// a retry resumes the session its last launch saved.
    pub fn first_step(&self) -> Step {
        let mode = match &self.resume {
            Some(session) => RunMode::Resume { session: session.clone() },
            None => RunMode::First { persist: true },
        };
        Step::Run(RunPlan { iteration: 1, mode, feedback: None })
    }

    /// Nothing committed on a run request: « aucun changement », never a delivery.
    fn no_change(mut self) -> (Progress, Step) {
        self.deploy = DeployFact::NotNeeded;
        self.qa = QaFact::NotNeeded;
        self.merge = MergeFact::NothingToMerge;
        self.finish(End::Failed(FailReason::NoChange))
    }

    fn finish(mut self, end: End) -> (Progress, Step) {
        self.end = Some(end);
        (self, Step::Finish)
    }

    fn delivered(mut self) -> (Progress, Step) {
        self.end = Some(End::Delivered);
        (self, Step::MergeBack)
    }
}

/// The next step after `step` was performed and `obs` observed. Pure.
pub fn next(mut p: Progress, step: &Step, obs: Observation) -> (Progress, Step) {
    match (step, obs) {
        (Step::Run(plan), Observation::Ran(o)) => {
            p.iteration = plan.iteration;
            p.commits = o.commits;
            if o.resume_refused {
                // No such session (not saved, expired, another project): a fresh pass on the
                // same branch, told what the previous one did. Twice in a row is a failure.
                p.session = None;
                if matches!(plan.mode, RunMode::Resume { .. }) {
                    let mode = RunMode::Fresh { after_refused_resume: true };
                    return (p, Step::Run(RunPlan { mode, ..plan.clone() }));
                }
                return p.finish(End::Failed(FailReason::ResumeRefused));
            }
            p.contract = o.contract;
            p.session = o.session.or(p.session);
            if let Some(why) = o.setback {
                let end = if p.setbacks_done < p.max_setbacks {
                    End::Parked { why, retry: (p.setbacks_done + 1, p.max_setbacks) }
                } else {
                    End::Escalated(EscalateWhy::Unavailable { attempts: p.setbacks_done + 1, why })
                };
                return p.finish(end);
            }
            if o.class.retryable() {
                let end = if o.by_shutdown {
                    End::TimedOut { by_shutdown: true, retry: None }
                } else if p.retries_done < p.max_retries {
                    End::TimedOut { by_shutdown: false, retry: Some((p.retries_done + 1, p.max_retries)) }
                } else {
                    End::Escalated(EscalateWhy::Timeouts { attempts: p.retries_done + 1 })
                };
                return p.finish(end);
            }
            if o.class != ExitClass::Ok {
                let reason = if o.max_turns { FailReason::MaxTurns } else { FailReason::Run(o.class) };
                return p.finish(End::Failed(reason));
            }
            if !o.denied.is_empty() {
                p.denied = o.denied;
                return p.finish(End::Failed(FailReason::ToolsDenied));
            }
            if let Some(lane) = downgrade(p.lane.0, p.lane.1, p.contract.intent) {
                p.lane = lane;
            }
            if !p.may_iterate() {
                if p.lane.0 == Intent::Run && p.commits == 0 {
                    return p.no_change();
                }
                p.deploy = DeployFact::NotNeeded;
                p.qa = QaFact::NotNeeded;
                return p.delivered();
            }
            match code_decision(&p.contract, p.commits) {
                // The code lane is a run request: nothing committed is no change.
                CodeDecision::Analysis => p.no_change(),
                CodeDecision::MissingTenantOrRoutes => p.finish(End::Failed(FailReason::MissingTenantOrRoutes)),
                CodeDecision::Deploy { tenant, routes } => (p, Step::Deploy { tenant, routes }),
            }
        }
        (Step::Deploy { tenant, routes }, Observation::Deployed(result)) => match result {
            Err(why) => {
                p.deploy = DeployFact::Failed { why };
                p.finish(End::Failed(FailReason::DeployFailed))
            }
            Ok(()) => {
                p.deploy = DeployFact::Done { tenant: tenant.clone() };
                if p.qa_configured {
                    (p, Step::Qa { tenant: tenant.clone(), routes: routes.clone() })
                } else {
                    p.qa = QaFact::NotConfigured;
                    p.delivered()
                }
            }
        },
        (Step::Qa { .. }, Observation::QaRan(routes)) => {
            let iterations = p.iteration;
            let failed: Vec<RouteQa> = routes.iter().filter(|r| !r.passed()).cloned().collect();
            if failed.is_empty() {
                p.qa = QaFact::Passed { routes, iterations };
                return p.delivered();
            }
            let iso_only = failed.iter().all(|r| r.code == Some(QA_EXIT_ISO_ONLY));
            p.qa = QaFact::Failed { routes, iterations };
            let budget = if iso_only { MAX_ISO_ITERATIONS } else { MAX_QA_ITERATIONS };
            if iterations >= budget {
                return p.finish(End::Escalated(EscalateWhy::QaBudget { iterations, iso_only }));
            }
            let mode = match &p.session {
                Some(session) => RunMode::Resume { session: session.clone() },
                None => RunMode::Fresh { after_refused_resume: false },
            };
            let feedback = Some(QaFeedback { failed, iso_only });
            (p, Step::Run(RunPlan { iteration: iterations + 1, mode, feedback }))
        }
        (Step::MergeBack, Observation::Merged(fact)) => {
            p.merge = fact;
            (p, Step::Finish)
        }
        // A step and an observation that do not belong together: a bug of the caller. Stop
        // without claiming anything.
        (_, _) => {
            debug_assert!(false, "observation for another step");
            p.finish(End::Failed(FailReason::Run(ExitClass::Error)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(class: ExitClass, contract: Contract, commits: usize, session: Option<&str>) -> Observation {
        Observation::Ran(RunObservation::plain(class, contract, commits, session.map(str::to_string)))
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

    /// Plays the observations from the first step; returns the steps taken and the progress.
    fn play(mut p: Progress, observations: Vec<Observation>) -> (Vec<Step>, Progress) {
        let mut step = p.first_step();
        let mut steps = vec![step.clone()];
        for obs in observations {
            assert_ne!(step, Step::Finish, "an observation after the end");
            (p, step) = next(p, &step, obs);
            steps.push(step.clone());
        }
        (steps, p)
    }

    fn kinds(steps: &[Step]) -> Vec<&'static str> {
        steps
            .iter()
            .map(|s| match s {
                Step::Run(RunPlan { mode: RunMode::First { persist: true }, .. }) => "run(saved)",
                Step::Run(RunPlan { mode: RunMode::First { persist: false }, .. }) => "run(not saved)",
                Step::Run(RunPlan { mode: RunMode::Resume { .. }, .. }) => "resume",
                Step::Run(RunPlan { mode: RunMode::Fresh { after_refused_resume: true }, .. }) => "fresh(refused)",
                Step::Run(RunPlan { mode: RunMode::Fresh { .. }, .. }) => "fresh",
                Step::Deploy { .. } => "deploy",
                Step::Qa { .. } => "qa",
                Step::MergeBack => "merge",
                Step::Finish => "finish",
            })
            .collect()
    }

    const PLAN: (Intent, Complexity) = (Intent::Run, Complexity::Plan);
    const LEGER: (Intent, Complexity) = (Intent::Run, Complexity::Leger);

    #[test]
    fn the_launch_follows_the_table() {
        let merged = || Observation::Merged(MergeFact::Merged { base: "main".into(), sha: "f00".into(), commits: 1 });
        let refused = Observation::Ran(RunObservation {
            resume_refused: true,
            ..RunObservation::plain(ExitClass::Error, Contract::default(), 1, None)
        });
        let timeout = |by_shutdown| {
            Observation::Ran(RunObservation {
                by_shutdown,
                ..RunObservation::plain(ExitClass::Idle, Contract::default(), 1, None)
            })
        };
        let setback = |why| {
            Observation::Ran(RunObservation {
                setback: Some(why),
                ..RunObservation::plain(ExitClass::Error, Contract::default(), 0, Some("s1".into()))
            })
        };
        let overloaded = Setback::ApiUnavailable { status: Some(529) };
        let resumed = |session: &str| {
            let mut p = Progress::new(LEGER, true, 1, 2);
            p.resume = Some(session.into());
            p
        };
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, Progress, Vec<Observation>, Vec<&str>, End)> = vec![
            (
                "light run: no deploy, merged",
                Progress::new(LEGER, true, 0, 2),
                vec![ran(ExitClass::Ok, Contract::default(), 1, None), merged()],
                vec!["run(saved)", "merge", "finish"],
                End::Delivered,
            ),
            (
                "plan run: deploy, QA passes, merged",
                Progress::new(PLAN, true, 0, 2),
                vec![
                    ran(ExitClass::Ok, plan_contract(), 1, Some("s1")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(0)),
                    merged(),
                ],
                vec!["run(saved)", "deploy", "qa", "merge", "finish"],
                End::Delivered,
            ),
            (
                "QA fails once: the saved session is resumed",
                Progress::new(PLAN, true, 0, 2),
                vec![
                    ran(ExitClass::Ok, plan_contract(), 1, Some("s1")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(1)),
                    ran(ExitClass::Ok, plan_contract(), 2, Some("s1")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(0)),
                    merged(),
                ],
                vec!["run(saved)", "deploy", "qa", "resume", "deploy", "qa", "merge", "finish"],
                End::Delivered,
            ),
            (
                "the resume is refused: a fresh pass on the same branch",
                Progress::new(PLAN, true, 0, 2),
                vec![
                    ran(ExitClass::Ok, plan_contract(), 1, Some("s1")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(1)),
                    refused.clone(),
                    ran(ExitClass::Ok, plan_contract(), 2, Some("s2")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(0)),
                    merged(),
                ],
                vec!["run(saved)", "deploy", "qa", "resume", "fresh(refused)", "deploy", "qa", "merge", "finish"],
                End::Delivered,
            ),
            (
                "QA fails three times: escalated",
                Progress::new(PLAN, true, 0, 2),
                vec![
                    ran(ExitClass::Ok, plan_contract(), 1, Some("s")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(1)),
                    ran(ExitClass::Ok, plan_contract(), 1, Some("s")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(1)),
                    ran(ExitClass::Ok, plan_contract(), 1, Some("s")),
                    Observation::Deployed(Ok(())),
                    Observation::QaRan(qa(1)),
                ],
                vec!["run(saved)", "deploy", "qa", "resume", "deploy", "qa", "resume", "deploy", "qa", "finish"],
                End::Escalated(EscalateWhy::QaBudget { iterations: 3, iso_only: false }),
            ),
            (
                "deploy fails",
                Progress::new(PLAN, true, 0, 2),
                vec![ran(ExitClass::Ok, plan_contract(), 1, None), Observation::Deployed(Err("x".into()))],
                vec!["run(saved)", "deploy", "finish"],
                End::Failed(FailReason::DeployFailed),
            ),
            (
                "no QA command: delivered, unverified",
                Progress::new(PLAN, false, 0, 2),
                vec![ran(ExitClass::Ok, plan_contract(), 1, None), Observation::Deployed(Ok(())), merged()],
                vec!["run(saved)", "deploy", "merge", "finish"],
                End::Delivered,
            ),
            (
                "commits without a tenant",
                Progress::new(PLAN, true, 0, 2),
                vec![ran(ExitClass::Ok, Contract { ok: true, ..Default::default() }, 2, None)],
                vec!["run(saved)", "finish"],
                End::Failed(FailReason::MissingTenantOrRoutes),
            ),
            (
                "neither tenant nor commits: an analysis",
                Progress::new(PLAN, true, 0, 2),
                vec![ran(ExitClass::Ok, Contract::default(), 0, None)],
                vec!["run(saved)", "finish"],
                End::Failed(FailReason::NoChange),
            ),
            (
                "a light run that committed nothing: no change, never an analysis",
                Progress::new(LEGER, true, 0, 2),
                vec![ran(ExitClass::Ok, Contract { ok: true, ..Default::default() }, 0, Some("s1"))],
                vec!["run(saved)", "finish"],
                End::Failed(FailReason::NoChange),
            ),
            (
                "a question answered without a commit is delivered",
                Progress::new((Intent::Question, Complexity::Leger), true, 0, 2),
                vec![ran(ExitClass::Ok, Contract::default(), 0, None), Observation::Merged(MergeFact::NothingToMerge)],
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
                vec![Observation::Ran(RunObservation {
                    max_turns: true,
                    ..RunObservation::plain(ExitClass::Error, Contract::default(), 0, None)
                })],
                vec!["run(saved)", "finish"],
                End::Failed(FailReason::MaxTurns),
            ),
            (
                "a denied tool is no success, whatever the result said",
                Progress::new(LEGER, true, 0, 2),
                vec![Observation::Ran(RunObservation {
                    denied: vec!["Bash : echo hi > HELLO.md".into()],
                    ..RunObservation::plain(ExitClass::Ok, Contract::default(), 1, None)
                })],
                vec!["run(saved)", "finish"],
                End::Failed(FailReason::ToolsDenied),
            ),
            (
                "a retry resumes the saved session",
                resumed("s1"),
                vec![ran(ExitClass::Ok, Contract::default(), 1, Some("s1")), merged()],
                vec!["resume", "merge", "finish"],
                End::Delivered,
            ),
            (
                "a retry whose session is gone starts afresh on its branch",
                resumed("gone"),
                vec![refused.clone(), ran(ExitClass::Ok, Contract::default(), 1, Some("s2")), merged()],
                vec!["resume", "fresh(refused)", "merge", "finish"],
                End::Delivered,
            ),
            (
                "downgraded to a question: no deploy",
                Progress::new(PLAN, true, 0, 2),
                vec![
                    ran(ExitClass::Ok, Contract { intent: Some(Intent::Question), ..Default::default() }, 0, None),
                    Observation::Merged(MergeFact::NothingToMerge),
                ],
                vec!["run(saved)", "merge", "finish"],
                End::Delivered,
            ),
            (
                "an error result",
                Progress::new(LEGER, true, 0, 2),
                vec![ran(ExitClass::Error, Contract::default(), 0, None)],
                vec!["run(saved)", "finish"],
                End::Failed(FailReason::Run(ExitClass::Error)),
            ),
            (
                "first timeout: retry 1 of 2",
                Progress::new(LEGER, true, 0, 2),
                vec![timeout(false)],
                vec!["run(saved)", "finish"],
                End::TimedOut { by_shutdown: false, retry: Some((1, 2)) },
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
                End::TimedOut { by_shutdown: true, retry: None },
            ),
        ];
        for (name, p, observations, expected, end) in cases {
            let (steps, p) = play(p, observations);
            assert_eq!(kinds(&steps), expected, "{name}");
            assert_eq!(p.end, Some(end), "{name}");
        }
    }

    #[test]
    fn mock_up_only_failures_get_eight_iterations() {
        let mut p = Progress::new(PLAN, true, 0, 2);
        let mut step = p.first_step();
        let mut runs = 0;
        while step != Step::Finish {
            let obs = match &step {
                Step::Run(_) => {
                    runs += 1;
                    ran(ExitClass::Ok, plan_contract(), 1, Some("s"))
                }
                Step::Deploy { .. } => Observation::Deployed(Ok(())),
                Step::Qa { .. } => Observation::QaRan(qa(QA_EXIT_ISO_ONLY)),
                _ => unreachable!(),
            };
            (p, step) = next(p, &step, obs);
        }
        assert_eq!(runs, 8);
        assert_eq!(p.end, Some(End::Escalated(EscalateWhy::QaBudget { iterations: 8, iso_only: true })));
        assert!(matches!(&p.qa, QaFact::Failed { iterations: 8, .. }));
    }

    #[test]
    fn the_facts_follow_the_steps() {
        let (_, p) = play(
            Progress::new(PLAN, true, 0, 2),
            vec![
                ran(ExitClass::Ok, plan_contract(), 1, Some("s1")),
                Observation::Deployed(Ok(())),
                Observation::QaRan(qa(0)),
                Observation::Merged(MergeFact::NotMerged {
                    branch: "atlas/email-1".into(),
                    why: NotMergedWhy::DirtyTrunk,
                }),
            ],
        );
        assert_eq!(p.deploy, DeployFact::Done { tenant: "shop".into() });
        assert!(matches!(&p.qa, QaFact::Passed { iterations: 1, routes } if routes.len() == 1));
        assert!(!p.merge.on_trunk());
        assert_eq!(p.session.as_deref(), Some("s1"));
        // A refused resume twice in a row is a failure, never a loop.
        let refused = || {
            Observation::Ran(RunObservation {
                resume_refused: true,
                ..RunObservation::plain(ExitClass::Error, Contract::default(), 0, None)
            })
        };
        let p = Progress::new(PLAN, true, 0, 2);
        let step = Step::Run(RunPlan { iteration: 2, mode: RunMode::Resume { session: "x".into() }, feedback: None });
        let (p, step) = next(p, &step, refused());
        assert!(matches!(
            &step,
            Step::Run(RunPlan { mode: RunMode::Fresh { after_refused_resume: true }, iteration: 2, .. })
        ));
        let (p, step) = next(p, &step, refused());
        assert_eq!((step, p.end), (Step::Finish, Some(End::Failed(FailReason::ResumeRefused))));
    }
}
