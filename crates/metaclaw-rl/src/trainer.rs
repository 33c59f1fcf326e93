//! The online trainer: a batch of rewarded samples → forward_backward and optim_step
//! (submitted back to back) → weights saved for the sampler → hot swap; a resumable
//! checkpoint every N steps. Between operations it asks whether to pause (auto mode);
//! a paused batch stays in the database and is picked up first next time, also after a
//! restart.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use metaclaw_config::LossFn;
use metaclaw_domain::Event;
use metaclaw_store::{
    Checkpoint, CheckpointKind, SampleRow, SampleState, Store, TrainingStatus, TrainingStep,
};
use serde::Serialize;
use tinker_client::{AdamParams, Datum, LoraConfig, ServiceClient, TensorData, TrainingClient};
use tokio::sync::{Mutex, broadcast};

use crate::advantage::{self, Scored};
use crate::datum::Example;
use crate::error::RlError;
use crate::policy::{Policy, Sampler};

#[derive(Debug, Clone)]
pub struct TrainerSettings {
    pub base_model: String,
    pub lora_rank: u32,
    pub batch_size: u32,
    pub group_size: u32,
    pub loss_fn: LossFn,
    pub learning_rate: f64,
    pub checkpoint_every: u32,
    pub save_timeout: Duration,
    /// OPD reverse-KL coefficient; `None` when OPD is off.
    pub kl_coef: Option<f64>,
    /// A trained adapter waits for the gate ([`Policy::offer`]) instead of serving at once.
    pub gated: bool,
}

/// What one call to [`Trainer::step`] did.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepOutcome {
    Trained {
        step: u64,
        samples: u64,
        mean_reward: Option<f64>,
        loss: Option<f64>,
        sampler: String,
    },
    /// Nothing ready to train on.
    Skipped { reason: String },
    /// Stopped between operations because the scheduler's window closed.
    Paused { step: u64 },
}

/// Decides whether to stop between operations (the scheduler in auto mode).
pub trait PauseGate: Send + Sync {
    fn should_pause(&self) -> bool;
}

pub struct NeverPause;

impl PauseGate for NeverPause {
    fn should_pause(&self) -> bool {
        false
    }
}

pub struct Trainer {
    store: Arc<Store>,
    service: ServiceClient,
    training: Mutex<TrainingClient>,
    policy: Arc<Policy>,
    events: broadcast::Sender<Event>,
    settings: TrainerSettings,
    next_step: AtomicU64,
    /// A step trained but whose sampler was not saved yet (paused before the save).
    unsaved: AtomicBool,
}

fn tinker(e: tinker_client::Error) -> RlError {
    RlError::Tinker(e.to_string())
}

impl Trainer {
    /// Creates the LoRA model (resuming from `resume` when given) and serves its weights.
    pub async fn start(
        store: Arc<Store>,
        service: ServiceClient,
        policy: Arc<Policy>,
        events: broadcast::Sender<Event>,
        settings: TrainerSettings,
        resume: Option<String>,
    ) -> Result<Arc<Self>, RlError> {
        let training = create_model(&service, &settings, resume.as_deref()).await?;
        let last = store.training_steps(1)?.last().map_or(0, |s| s.step);
        let trainer = Arc::new(Self {
            store,
            service,
            training: Mutex::new(training),
            policy,
            events,
            settings,
            next_step: AtomicU64::new(last + 1),
            unsaved: AtomicBool::new(false),
        });
        {
            // Serve the model's current weights before any step.
            let training = trainer.training.lock().await;
            trainer.save_and_swap(&training, last, false).await?;
        }
        Ok(trainer)
    }

    pub fn settings(&self) -> &TrainerSettings {
        &self.settings
    }

    /// Runs one step on what is ready: the paused batch first, else up to `batch_size`
    /// complete groups (`all` = everything ready, for a manual step).
    pub async fn step(&self, gate: &dyn PauseGate, all: bool) -> Result<StepOutcome, RlError> {
        let mut training = self.training.lock().await;
        if self.unsaved.load(Ordering::Relaxed) {
            let step = self.next_step.load(Ordering::Relaxed).saturating_sub(1);
            self.save_and_swap(&training, step, true).await?;
            self.unsaved.store(false, Ordering::Relaxed);
        }
        let generation = self.store.skill_generation()?;
        let stale = self.store.mark_stale_samples(generation)?;
        if stale > 0 {
            tracing::info!(
                stale,
                generation,
                "trainer: samples from older skill generations left out"
            );
        }
        let batch = self.batch(all)?;
        if batch.is_empty() {
            return Ok(StepOutcome::Skipped {
                reason: "no rewarded samples are waiting".into(),
            });
        }
        let step = self.next_step.load(Ordering::Relaxed);
        let ids: Vec<i64> = batch.iter().map(|s| s.id).collect();
        self.store
            .set_sample_state(ids.clone(), SampleState::Batched, Some(step))?;

        let scored: Vec<Scored<'_>> = batch
            .iter()
            .map(|s| Scored {
                group: &s.turn_id,
                reward: s.reward.unwrap_or(0.0),
            })
            .collect();
        // Several samples of one prompt (rl.group_size, or a rollout's group) are compared
        // with each other; single samples with the batch.
        let group_relative = self.settings.group_size > 1 || batch.iter().any(|s| s.idx > 0);
        let advantages = advantage::advantages(&scored, group_relative);
        let mut examples = Vec::new();
        let mut used = Vec::new();
        let mut skipped = Vec::new();
        let mut kls = Vec::new();
        for (s, adv) in batch.iter().zip(&advantages) {
            // With OPD the teacher's signal trains even a constant-reward group.
            let adv = match (adv, self.settings.kl_coef, &s.teacher_logprobs) {
                (Some(a), _, _) => *a,
                (None, Some(_), Some(_)) => 0.0,
                _ => {
                    skipped.push(s.id);
                    continue;
                }
            };
            let teacher = self.settings.kl_coef.and(s.teacher_logprobs.as_deref());
            if let Some(t) = teacher
                && let Some(kl) = advantage::mean_kl(&s.response_logprobs, t)
            {
                kls.push(kl);
            }
            let per_token = advantage::per_token(
                adv,
                &s.response_logprobs,
                teacher,
                self.settings.kl_coef.unwrap_or(0.0),
            );
            match Example::new(
                &s.prompt_tokens,
                &s.response_tokens,
                &s.response_logprobs,
                &per_token,
            ) {
                Some(e) => {
                    examples.push(e);
                    used.push(s);
                }
                None => skipped.push(s.id),
            }
        }
        if !skipped.is_empty() {
            self.store
                .set_sample_state(skipped, SampleState::Skipped, Some(step))?;
        }
        if examples.is_empty() {
            return Ok(StepOutcome::Skipped {
                reason: "every group in the batch had the same reward: nothing to learn".into(),
            });
        }
        if gate.should_pause() {
            return Ok(StepOutcome::Paused { step });
        }

        let started = Instant::now();
        let rewards: Vec<f64> = used.iter().filter_map(|s| s.reward).collect();
        let mut row = TrainingStep {
            step,
            started_at: self.store.now(),
            finished_at: None,
            status: TrainingStatus::Running,
            loss: None,
            mean_reward: mean(&rewards),
            success_rate: (!rewards.is_empty()).then(|| {
                rewards.iter().filter(|r| **r > 0.0).count() as f64 / rewards.len() as f64
            }),
            tokens: Some(used.iter().map(|s| s.response_tokens.len() as u64).sum()),
            kl: mean(&kls),
            samples: Some(used.len() as u64),
            skill_generation: Some(generation),
            error: None,
            checkpoint: None,
            progress: Some(0.0),
        };
        self.record(&row, "running");

        let result = self.update(&training, examples).await;
        let loss = match result {
            Ok(loss) => loss,
            Err(e) => {
                row.status = TrainingStatus::Failed;
                row.error = Some(e.to_string());
                row.finished_at = Some(self.store.now());
                self.record(&row, "failed");
                if training.is_poisoned() {
                    // Later operations of a poisoned model cannot run (seq_id order): start
                    // over from the last checkpoint; the batch stays batched and is retried.
                    tracing::warn!("trainer: model poisoned by a failed step; recovering");
                    let resume = self.last_state_checkpoint()?;
                    *training =
                        create_model(&self.service, &self.settings, resume.as_deref()).await?;
                }
                return Err(e);
            }
        };
        self.store.set_sample_state(
            used.iter().map(|s| s.id).collect(),
            SampleState::Trained,
            Some(step),
        )?;
        self.next_step.store(step + 1, Ordering::Relaxed);
        row.loss = loss;
        row.progress = Some(0.5);

        if gate.should_pause() {
            self.unsaved.store(true, Ordering::Relaxed);
            row.status = TrainingStatus::Paused;
            self.record(&row, "paused");
            return Ok(StepOutcome::Paused { step });
        }
        let sampler = self.save_and_swap(&training, step, true).await?;
        if step.is_multiple_of(u64::from(self.settings.checkpoint_every.max(1)))
            && !gate.should_pause()
        {
            match self.checkpoint(&training, step).await {
                Ok(name) => row.checkpoint = Some(name),
                Err(e) => tracing::warn!(error = %e, step, "trainer: checkpoint failed"),
            }
        }
        row.status = TrainingStatus::Ok;
        row.progress = Some(1.0);
        row.finished_at = Some(self.store.now());
        self.record(&row, "ok");
        tracing::info!(
            step,
            samples = used.len(),
            ?loss,
            secs = started.elapsed().as_secs_f64(),
            "trainer: step done"
        );
        Ok(StepOutcome::Trained {
            step,
            samples: used.len() as u64,
            mean_reward: row.mean_reward,
            loss,
            sampler,
        })
    }

    /// forward_backward and optim_step, submitted back to back, then awaited.
    async fn update(
        &self,
        training: &TrainingClient,
        examples: Vec<Example>,
    ) -> Result<Option<f64>, RlError> {
        let data: Vec<Datum> = examples.into_iter().map(to_datum).collect();
        let loss_fn = match self.settings.loss_fn {
            LossFn::ImportanceSampling => tinker_client::LossFn::ImportanceSampling,
            LossFn::Ppo => tinker_client::LossFn::Ppo,
            LossFn::Cispo => tinker_client::LossFn::Cispo,
        };
        let config = match self.settings.loss_fn {
            LossFn::ImportanceSampling => BTreeMap::new(),
            LossFn::Ppo | LossFn::Cispo => BTreeMap::from([
                ("clip_low_threshold".to_owned(), 0.8),
                ("clip_high_threshold".to_owned(), 1.2),
            ]),
        };
        let fwd = training
            .forward_backward(data, loss_fn, config)
            .await
            .map_err(tinker)?;
        let adam = AdamParams {
            learning_rate: self.settings.learning_rate,
            ..AdamParams::default()
        };
        let opt = training.optim_step(adam).await.map_err(tinker)?;
        let out = fwd.result().await.map_err(tinker)?;
        opt.result().await.map_err(tinker)?;
        Ok(loss_of(&out))
    }

    /// Saves the weights for the sampler and swaps the new sampler in. After a step the save
    /// is named (`step-N`, recorded as a sampler checkpoint); at start-up it is ephemeral.
    async fn save_and_swap(
        &self,
        training: &TrainingClient,
        step: u64,
        named: bool,
    ) -> Result<String, RlError> {
        let name = named.then(|| format!("step-{step:06}"));
        let weights = tokio::time::timeout(self.settings.save_timeout, async {
            training
                .save_weights_for_sampler(name.as_deref())
                .await?
                .result()
                .await
        })
        .await
        .map_err(|_| RlError::Tinker("saving weights for the sampler timed out".into()))?
        .map_err(tinker)?;
        let client = training.sampling_client(&weights).await.map_err(tinker)?;
        let label = weights
            .path
            .clone()
            .unwrap_or_else(|| client.id().to_owned());
        if let (Some(name), Some(path)) = (&name, &weights.path) {
            self.store.record_checkpoint(Checkpoint {
                name: format!("sampler-{name}"),
                step,
                path: path.clone(),
                kind: CheckpointKind::Sampler,
                created_at: self.store.now(),
            })?;
        }
        let sampler = Sampler {
            client,
            name: label.clone(),
            step,
        };
        if named && self.settings.gated {
            self.policy.offer(sampler);
        } else {
            self.policy.swap(sampler);
        }
        Ok(label)
    }

    async fn checkpoint(&self, training: &TrainingClient, step: u64) -> Result<String, RlError> {
        let name = format!("state-{step:06}");
        let path = training
            .save_state(&name)
            .await
            .map_err(tinker)?
            .result()
            .await
            .map_err(tinker)?;
        self.store.record_checkpoint(Checkpoint {
            name: name.clone(),
            step,
            path,
            kind: CheckpointKind::State,
            created_at: self.store.now(),
        })?;
        Ok(name)
    }

    /// Saves the full training state after `step` (so a refused adapter can be undone).
    /// The step's periodic checkpoint serves when it was just taken: the server refuses a
    /// second state under the same name (HTTP 409).
    pub async fn snapshot(&self, step: u64) -> Result<String, RlError> {
        let saved = |store: &Store| -> Result<Option<String>, RlError> {
            Ok(store
                .checkpoints()?
                .into_iter()
                .find(|c| c.kind == CheckpointKind::State && c.step == step)
                .map(|c| c.path))
        };
        let training = self.training.lock().await;
        if let Some(path) = saved(&self.store)? {
            return Ok(path);
        }
        self.checkpoint(&training, step).await?;
        Ok(saved(&self.store)?.unwrap_or_default())
    }

    /// Puts the training weights (and optimizer) back to a saved state: the next step
    /// starts from there instead of from a refused or rolled-back adapter.
    ///
    /// The restored weights are then saved for the sampler again and serve as version
    /// `step`: some servers (SkyRL) sample every sampler of a LoRA model with its latest
    /// saved weights, so the sampler of the kept version would otherwise answer with the
    /// weights just undone.
    pub async fn restore(&self, state_path: &str, step: u64) -> Result<(), RlError> {
        let training = self.training.lock().await;
        training
            .load_state(state_path, true)
            .await
            .map_err(tinker)?
            .result()
            .await
            .map_err(|e| RlError::Tinker(format!("could not restore {state_path}: {e}")))?;
        tracing::info!(%state_path, step, "trainer: training state restored");
        self.save_and_swap(&training, step, false).await?;
        Ok(())
    }

    /// A sampler of the base model without an adapter (the `base` evaluation arm).
    pub async fn base_sampler(&self) -> Result<Sampler, RlError> {
        let client = self
            .service
            .create_sampling_session(tinker_client::SamplerSource::BaseModel(
                self.settings.base_model.clone(),
            ))
            .await
            .map_err(tinker)?;
        Ok(Sampler {
            name: format!("base:{}", self.settings.base_model),
            client,
            step: 0,
        })
    }

    /// A sampler for saved sampler weights (a rollback to a version no longer in memory).
    pub async fn sampler_at(&self, path: &str, step: u64) -> Result<Sampler, RlError> {
        let client = self
            .service
            .create_sampling_session(tinker_client::SamplerSource::ModelPath(path.to_owned()))
            .await
            .map_err(tinker)?;
        Ok(Sampler {
            client,
            name: path.to_owned(),
            step,
        })
    }

    fn last_state_checkpoint(&self) -> Result<Option<String>, RlError> {
        Ok(self
            .store
            .checkpoints()?
            .into_iter()
            .find(|c| c.kind == CheckpointKind::State)
            .map(|c| c.path))
    }

    /// Whether a step has something to train on. Cheap: counts, no token data.
    pub fn has_batch(&self) -> Result<bool, RlError> {
        if self.unsaved.load(Ordering::Relaxed) {
            return Ok(true);
        }
        if self
            .store
            .sample_counts()?
            .get("batched")
            .copied()
            .unwrap_or(0)
            > 0
        {
            return Ok(true);
        }
        let want = self.settings.batch_size as usize;
        Ok(self.store.ready_sample_groups(want)?.len() >= want)
    }

    /// The batch to train on: a batch left by a paused or failed step, else up to
    /// `batch_size` complete groups (`all`: every complete group, for a manual step).
    fn batch(&self, all: bool) -> Result<Vec<SampleRow>, RlError> {
        let pending = self.store.samples_in_state(SampleState::Batched, 100_000)?;
        if !pending.is_empty() {
            return Ok(pending);
        }
        let want = self.settings.batch_size as usize;
        let groups = self
            .store
            .ready_sample_groups(if all { usize::MAX } else { want })?;
        if !all && groups.len() < want {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for turn in groups {
            out.extend(
                self.store
                    .samples_for_turn(&turn)?
                    .into_iter()
                    .filter(|s| s.state == SampleState::Ready),
            );
        }
        // Groups become ready in whatever order their rewards land; a batch ordered by
        // session makes a step's update (float sums) repeatable for the same samples.
        out.sort_by(|a, b| a.session_id.cmp(&b.session_id).then(a.id.cmp(&b.id)));
        Ok(out)
    }

    fn record(&self, row: &TrainingStep, status: &str) {
        if let Err(e) = self.store.upsert_training_step(row.clone()) {
            tracing::warn!(error = %e, step = row.step, "trainer: could not record the step");
        }
        let _ = self.events.send(Event::Training {
            step: row.step,
            status: status.to_owned(),
            progress: row.progress,
        });
    }
}

async fn create_model(
    service: &ServiceClient,
    settings: &TrainerSettings,
    resume: Option<&str>,
) -> Result<TrainingClient, RlError> {
    let training = service
        .create_lora_model(
            &settings.base_model,
            LoraConfig {
                rank: settings.lora_rank,
                ..LoraConfig::default()
            },
        )
        .await
        .map_err(tinker)?;
    if let Some(path) = resume {
        tracing::info!(%path, "trainer: resuming from checkpoint");
        training
            .load_state(path, true)
            .await
            .map_err(tinker)?
            .result()
            .await
            .map_err(|e| RlError::Tinker(format!("could not resume from {path}: {e}")))?;
    }
    Ok(training)
}

fn to_datum(e: Example) -> Datum {
    Datum {
        model_input: e.input,
        loss_fn_inputs: BTreeMap::from([
            ("target_tokens".to_owned(), TensorData::i64(e.targets)),
            ("logprobs".to_owned(), TensorData::f32(e.logprobs)),
            ("advantages".to_owned(), TensorData::f32(e.advantages)),
        ]),
    }
}

/// The server's summed loss, or the sum of per-token losses when it reports no metric
/// (SkyRL's metrics are empty).
fn loss_of(out: &tinker_client::ForwardBackwardOutput) -> Option<f64> {
    out.metrics.get("loss:sum").copied().or_else(|| {
        let total: f64 = out
            .loss_fn_outputs
            .iter()
            .filter_map(|o| o.get("elementwise_loss"))
            .filter_map(TensorData::as_f32)
            .flat_map(|v| v.iter().map(|x| f64::from(*x)))
            .sum();
        total.is_finite().then_some(total)
    })
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}
