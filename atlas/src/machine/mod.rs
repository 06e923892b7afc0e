//! What the launcher does after it started a message, as an explicit state machine: a step
//! (run Claude Code — the first pass, a resumed iteration, or a fresh pass when the resume is
//! refused —, deploy, QA the routes, merge back) and a pure `next(progress, observation)`
//! that returns every decision — the next step, a lane corrected by the contract, or the end
//! with the state it leads to — and records the facts the recap will state. An observation
//! carries the step it answers, so one cannot answer another step. The launcher performs
//! each step (PTY, git, commands), feeds back what it observed and executes the decisions; the
//! rules of spec §9 (lanes, downgrade, code decision, 3 / 8 iterations), of the bounded
//! retries (timeouts; an unavailable API or a refusal to run as root, parked with a backoff)
//! and of what counts as done (a run request with no commit is no change; a denied tool, the
//! turn limit or an API error is no success) live here, where a table of cases tests them
//! without a PTY, git or SMTP.

use super::{Complexity, EmailState, Intent};

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

/// How long a parked message waits before its next launch: 5, 10, 20, 40, then 60 minutes.
pub fn parking_backoff(parking: u32) -> chrono::Duration {
    let exp = parking.clamp(1, 6) - 1;
    chrono::Duration::minutes((5i64 << exp).min(60))
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

/// A step the launcher performs. Only the machine makes one (their fields are private), and
/// the only way to tell it what happened is the step's own `observed`, which consumes the
/// step: an observation always belongs to the step that was asked, and a step is observed
/// once.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    Run(RunStep),
    Deploy(DeployStep),
    Qa(QaStep),
    MergeBack(MergeStep),
}

/// Run Claude Code once (the first pass, a resumed iteration, or a fresh pass).
#[derive(Debug, PartialEq, Eq)]
pub struct RunStep(RunPlan);

impl RunStep {
    pub fn plan(&self) -> &RunPlan {
        &self.0
    }
    pub fn observed(self, pass: RunObservation) -> Observation {
        Observation::Ran(self, pass)
    }
}

/// Run `ATLAS_DEPLOY_CMD` for the contract's tenant.
#[derive(Debug, PartialEq, Eq)]
pub struct DeployStep {
    tenant: String,
    routes: Vec<String>,
}

impl DeployStep {
    pub fn tenant(&self) -> &str {
        &self.tenant
    }
    pub fn routes(&self) -> &[String] {
        &self.routes
    }
    /// Done, or why not.
    pub fn observed(self, result: Result<(), String>) -> Observation {
        Observation::Deployed(self, result)
    }
}

/// Run `ATLAS_QA_CMD` once per declared route.
#[derive(Debug, PartialEq, Eq)]
pub struct QaStep {
    tenant: String,
    routes: Vec<String>,
}

impl QaStep {
    pub fn tenant(&self) -> &str {
        &self.tenant
    }
    pub fn routes(&self) -> &[String] {
        &self.routes
    }
    pub fn observed(self, routes: Vec<RouteQa>) -> Observation {
        Observation::QaRan(self, routes)
    }
}

/// Merge the branch back into the trunk.
#[derive(Debug, PartialEq, Eq)]
pub struct MergeStep(());

impl MergeStep {
    pub fn observed(self, fact: MergeFact) -> Observation {
        Observation::Merged(self, fact)
    }
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

/// What a step came to, with the step it answers (see [`Step`]).
///
/// ```compile_fail
/// use arthur_atlas::machine::{DeployStep, Observation, RunObservation};
/// // A pass's observation cannot answer a deploy step:
/// fn answer(step: DeployStep, pass: RunObservation) -> Observation { Observation::Ran(step, pass) }
/// ```
///
/// ```compile_fail
/// use arthur_atlas::machine::{MergeFact, MergeStep};
/// // Nor can the launcher make up a step the machine did not ask for:
/// let obs = MergeStep(()).observed(MergeFact::NothingToMerge);
/// ```
#[derive(Debug, PartialEq)]
pub enum Observation {
    Ran(RunStep, RunObservation),
    /// The deploy command: done, or why not.
    Deployed(DeployStep, Result<(), String>),
    QaRan(QaStep, Vec<RouteQa>),
    Merged(MergeStep, MergeFact),
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
    /// Arthur's own shutdown stopped the run before its result: back in the queue, not
    /// counted as an attempt.
    Interrupted,
    /// Killed by a timeout before its result; `retry` = (this retry's number, the most
    /// allowed).
    TimedOut {
        retry: (u32, u32),
    },
    Escalated(EscalateWhy),
    /// The run could not work (`why`); the message goes back to the queue for a later try,
    /// `retry` = (this parking's number, the most allowed).
    Parked {
        why: Setback,
        retry: (u32, u32),
    },
}

/// Whether the founder gets the recap of this end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecapDecision {
    Send,
    /// One alert per message and state change: a second (or later) timeout or parking does
    /// not e-mail again (the escalation after the last one does). `attempt`: which one.
    Skip {
        attempt: u32,
    },
}

/// The end of a launch, and everything it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finish {
    pub end: End,
    /// The message's state after `spawned`: `classified` again for a retry, an interruption
    /// or a parking.
    pub state: EmailState,
    /// A timed-out, interrupted or parked run keeps its worktree: the retry continues in it.
    pub keep_workspace: bool,
    pub recap: RecapDecision,
}

impl Finish {
    pub fn of(end: End) -> Finish {
        let (state, keep_workspace) = match end {
            End::Delivered => (EmailState::Actioned, false),
            End::Failed(_) => (EmailState::Failed, false),
            End::Escalated(_) => (EmailState::Escalated, false),
            End::Interrupted | End::TimedOut { .. } | End::Parked { .. } => (EmailState::Classified, true),
        };
        let recap = match end {
            End::TimedOut { retry: (n, _) } | End::Parked { retry: (n, _), .. } if n > 1 => {
                RecapDecision::Skip { attempt: n }
            }
            _ => RecapDecision::Send,
        };
        Finish { end, state, keep_workspace, recap }
    }
}

/// What the launcher does next.
#[derive(Debug, PartialEq)]
pub enum Decision {
    Perform(Step),
    /// The launch is over: nothing more is observed.
    Finish(Finish),
}

/// One transition: the facts so far, and what follows.
#[derive(Debug, PartialEq)]
pub struct Transition {
    pub progress: Progress,
    /// The contract corrected the lane (toward no code only): the launcher records it.
    pub lane_corrected: Option<(Intent, Complexity)>,
    pub decision: Decision,
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
        Step::Run(RunStep(RunPlan { iteration: 1, mode, feedback: None }))
    }

    fn then(self, step: Step) -> Transition {
        Transition { progress: self, lane_corrected: None, decision: Decision::Perform(step) }
    }

    fn finish(self, end: End) -> Transition {
        Transition { progress: self, lane_corrected: None, decision: Decision::Finish(Finish::of(end)) }
    }

    /// Nothing committed on a run request: « aucun changement », never a delivery.
    fn no_change(mut self) -> Transition {
        self.deploy = DeployFact::NotNeeded;
        self.qa = QaFact::NotNeeded;
        self.merge = MergeFact::NothingToMerge;
        self.finish(End::Failed(FailReason::NoChange))
    }

    /// The work is done: merged back, then delivered.
    fn delivered(self) -> Transition {
        self.then(Step::MergeBack(MergeStep(())))
    }
}

/// The next decision after a step was performed and observed (the observation carries its
/// step). Pure.
pub fn next(mut p: Progress, observation: Observation) -> Transition {
    match observation {
        Observation::Ran(RunStep(plan), o) => {
            p.iteration = plan.iteration;
            p.commits = o.commits;
            if o.resume_refused {
                // No such session (not saved, expired, another project): a fresh pass on the
                // same branch, told what the previous one did. Twice in a row is a failure.
                p.session = None;
                if matches!(plan.mode, RunMode::Resume { .. }) {
                    let mode = RunMode::Fresh { after_refused_resume: true };
                    return p.then(Step::Run(RunStep(RunPlan { mode, ..plan })));
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
                    End::Interrupted
                } else if p.retries_done < p.max_retries {
                    End::TimedOut { retry: (p.retries_done + 1, p.max_retries) }
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
            let lane_corrected = downgrade(p.lane.0, p.lane.1, p.contract.intent);
            if let Some(lane) = lane_corrected {
                p.lane = lane;
            }
            let mut t = if !p.may_iterate() {
                if p.lane.0 == Intent::Run && p.commits == 0 {
                    p.no_change()
                } else {
                    p.deploy = DeployFact::NotNeeded;
                    p.qa = QaFact::NotNeeded;
                    p.delivered()
                }
            } else {
                match code_decision(&p.contract, p.commits) {
                    // The code lane is a run request: nothing committed is no change.
                    CodeDecision::Analysis => p.no_change(),
                    CodeDecision::MissingTenantOrRoutes => p.finish(End::Failed(FailReason::MissingTenantOrRoutes)),
                    CodeDecision::Deploy { tenant, routes } => p.then(Step::Deploy(DeployStep { tenant, routes })),
                }
            };
            t.lane_corrected = lane_corrected;
            t
        }
        Observation::Deployed(DeployStep { tenant, routes }, result) => match result {
            Err(why) => {
                p.deploy = DeployFact::Failed { why };
                p.finish(End::Failed(FailReason::DeployFailed))
            }
            Ok(()) => {
                p.deploy = DeployFact::Done { tenant: tenant.clone() };
                if p.qa_configured {
                    p.then(Step::Qa(QaStep { tenant, routes }))
                } else {
                    p.qa = QaFact::NotConfigured;
                    p.delivered()
                }
            }
        },
        Observation::QaRan(QaStep { .. }, routes) => {
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
            p.then(Step::Run(RunStep(RunPlan { iteration: iterations + 1, mode, feedback })))
        }
        Observation::Merged(MergeStep(()), fact) => {
            p.merge = fact;
            p.finish(End::Delivered)
        }
    }
}

#[cfg(test)]
mod tests;
