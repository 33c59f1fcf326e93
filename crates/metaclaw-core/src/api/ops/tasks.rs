//! Task rollouts, evaluations and adapter versions: start a rollout or an evaluation,
//! follow it, list stored evaluations and versions, roll back to a version.

use metaclaw_store::{AdapterVersion, EvalRun};

use crate::api::{Api, ApiError, ErrorCode, Method, NoInput, Operation};
use crate::rollout::bench::BenchRequest;
use crate::rollout::{EvalRequest, JobStatus, RolloutError, RolloutRequest, TaskRunner};
use crate::skills_comparison::{MIN_TRIALS, SkillsComparison, skills_comparison};

fn runner(api: &Api) -> Result<&std::sync::Arc<TaskRunner>, ApiError> {
    api.parts().tasks.as_ref().ok_or_else(|| {
        ApiError::new(
            ErrorCode::NotRunning,
            "rollouts and evaluations run in MetaClaw: start it first (metaclaw start)",
        )
    })
}

impl From<RolloutError> for ApiError {
    fn from(e: RolloutError) -> Self {
        let code = match &e {
            RolloutError::Busy(_) => ErrorCode::Conflict,
            RolloutError::Tasks(_) | RolloutError::Invalid(_) => ErrorCode::BadRequest,
            RolloutError::Rl(_) => ErrorCode::NotReady,
            RolloutError::Store(_) => ErrorCode::Internal,
        };
        ApiError::new(code, e.to_string())
    }
}

pub struct StartRollout;

impl Operation for StartRollout {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/rollouts";
    const SUMMARY: &'static str = "Start a task rollout through the proxy (episodes, verifier rewards, training steps, learning curve)";
    type Path = ();
    type Input = RolloutRequest;
    type Output = JobStatus;

    async fn run(api: &Api, _: (), req: RolloutRequest) -> Result<JobStatus, ApiError> {
        Ok(runner(api)?.start_rollout(req)?)
    }
}

pub struct GetJob;

impl Operation for GetJob {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/rollouts";
    const SUMMARY: &'static str =
        "The running or last rollout or evaluation: progress, learning curve, report";
    type Path = ();
    type Input = NoInput;
    type Output = JobStatus;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<JobStatus, ApiError> {
        Ok(api
            .parts()
            .tasks
            .as_ref()
            .map(|t| t.status())
            .unwrap_or_default())
    }
}

pub struct StartEval;

impl Operation for StartEval {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/evals";
    const SUMMARY: &'static str =
        "Start an evaluation of a task split in one or more arms (never trained on or distilled)";
    type Path = ();
    type Input = EvalRequest;
    type Output = JobStatus;

    async fn run(api: &Api, _: (), req: EvalRequest) -> Result<JobStatus, ApiError> {
        Ok(runner(api)?.start_eval(req)?)
    }
}

pub struct StartBench;

impl Operation for StartBench {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/bench";
    const SUMMARY: &'static str = "Start a MetaClaw-Bench run on a checkout of the benchmark: days serially through the proxy in the paper's arms (baseline, skills, skills + RL); follow it and read its table on /api/rollouts";
    type Path = ();
    type Input = BenchRequest;
    type Output = JobStatus;

    async fn run(api: &Api, _: (), req: BenchRequest) -> Result<JobStatus, ApiError> {
        Ok(runner(api)?.start_bench(req)?)
    }
}

pub struct ListEvals;

impl Operation for ListEvals {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/evals";
    const SUMMARY: &'static str =
        "Stored evaluation runs (asked for, learning-curve points, gate checks)";
    type Path = ();
    type Input = NoInput;
    type Output = Vec<EvalRun>;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Vec<EvalRun>, ApiError> {
        Ok(api.store().eval_runs(1000)?)
    }
}

/// The newest skills off / on comparison, if any evaluation made one.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SkillsComparisonView {
    pub comparison: Option<SkillsComparison>,
    /// How many tasks each arm needs before a verdict is given.
    pub min_trials: u64,
}

pub struct GetSkillsComparison;

impl Operation for GetSkillsComparison {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/evals/skills";
    const SUMMARY: &'static str = "Skills off against skills on: the newest pair of evaluation arms of one task split, with the difference's 95 % interval";
    type Path = ();
    type Input = NoInput;
    type Output = SkillsComparisonView;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<SkillsComparisonView, ApiError> {
        Ok(SkillsComparisonView {
            comparison: skills_comparison(&api.store().eval_runs(1000)?),
            min_trials: MIN_TRIALS,
        })
    }
}

pub struct ListAdapters;

impl Operation for ListAdapters {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/adapters";
    const SUMMARY: &'static str =
        "Adapter versions: gate figure, status (serving, kept, refused) and why";
    type Path = ();
    type Input = NoInput;
    type Output = Vec<AdapterVersion>;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Vec<AdapterVersion>, ApiError> {
        Ok(api.store().adapter_versions()?)
    }
}

pub struct RollbackAdapter;

impl Operation for RollbackAdapter {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/adapters/{step}/rollback";
    const SUMMARY: &'static str =
        "Serve an earlier adapter version again (training continues from it)";
    type Path = i64;
    type Input = NoInput;
    type Output = AdapterVersion;

    async fn run(api: &Api, step: i64, _: NoInput) -> Result<AdapterVersion, ApiError> {
        let step = u64::try_from(step).map_err(|_| {
            ApiError::new(
                ErrorCode::BadRequest,
                "an adapter version is a step number >= 0",
            )
        })?;
        Ok(api.parts().rl.rollback(step).await?)
    }
}
