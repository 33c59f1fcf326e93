//! RL: training steps, checkpoints, one step on demand, and RL's state.

use metaclaw_rl::{RlStatus, StepOutcome};
use metaclaw_store::{Checkpoint, TrainingStep};

use crate::api::{Api, ApiError, Method, NoInput, Operation};

pub struct ListSteps;

impl Operation for ListSteps {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/training/steps";
    const SUMMARY: &'static str = "Training steps and their metrics";
    type Path = ();
    type Input = NoInput;
    type Output = Vec<TrainingStep>;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Vec<TrainingStep>, ApiError> {
        Ok(api.store().training_steps(10_000)?)
    }
}

pub struct ListCheckpoints;

impl Operation for ListCheckpoints {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/training/checkpoints";
    const SUMMARY: &'static str = "Saved checkpoints";
    type Path = ();
    type Input = NoInput;
    type Output = Vec<Checkpoint>;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<Vec<Checkpoint>, ApiError> {
        Ok(api.store().checkpoints()?)
    }
}

pub struct TrainStep;

impl Operation for TrainStep {
    const METHOD: Method = Method::Post;
    const PATH: &'static str = "/api/training/step";
    const SUMMARY: &'static str = "Run one training step now on everything that is ready";
    type Path = ();
    type Input = NoInput;
    type Output = StepOutcome;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<StepOutcome, ApiError> {
        Ok(api.parts().rl.train_step().await?)
    }
}

pub struct GetRl;

impl Operation for GetRl {
    const METHOD: Method = Method::Get;
    const PATH: &'static str = "/api/rl";
    const SUMMARY: &'static str =
        "RL's state: phase, what is missing, reward sources, sampler, samples";
    type Path = ();
    type Input = NoInput;
    type Output = RlStatus;

    async fn run(api: &Api, _: (), _: NoInput) -> Result<RlStatus, ApiError> {
        Ok(api.parts().rl.status())
    }
}
