//! MetaClaw-Bench through the product: a user's checkout of the public benchmark run day by
//! day, serially, as real sessions through this core's proxy, in the paper's arms.
//!
//! A day is one session: the persona files as the system message, the day's seeded
//! conversation, then each round's question prefixed with the previous round's feedback,
//! and at the end the last feedback on its own (not scored). The agent works in a fresh
//! copy of the day's workspace with `run_command` (when allowed); a `file_check` round runs
//! its checker there after the answer. Arms:
//! - `baseline`: skills off; the sessions are marked as an evaluation's, so they are never
//!   distilled into skills nor sampled for RL.
//! - `skills`: skills on; the sessions are distilled like live ones (skills evolve from the
//!   feedback, as the proxy's `auto_evolve` does in the original), never sampled for RL.
//! - `skills-rl`: skills on, each round's score rewards its turns and a training step runs
//!   between days (every `train_every` days, never after the last). Without RL serving it
//!   is reported as not run, with the reason.
//!
//! Each arm is an `eval_runs` row (split `metaclaw-bench`) with its rounds in
//! `bench_rounds`.

use metaclaw_tasks::bench::report::render;
use metaclaw_tasks::bench::round::{message, python_env};
use metaclaw_tasks::bench::{ArmTable, Bench, Day, FileProblem, RoundKind, RoundOutcome};
use metaclaw_tasks::episode::run_turns;
use serde_json::json;

use super::*;

/// What a benchmark run is asked to do (`metaclaw bench`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct BenchRequest {
    /// The benchmark variant folder of a checkout (`benchmark/data/metaclaw-bench` or
    /// `benchmark/data/metaclaw-bench-small`).
    pub dir: String,
    /// `baseline`, `skills`, `skills-rl`; default all three, in that order.
    pub arms: Vec<String>,
    /// Only the first N days.
    pub days: Option<u32>,
    /// Requests per round, tool calls included (default `openclaw_env_max_steps`).
    pub max_steps: Option<u32>,
    /// Offer `run_command`, which `file_check` rounds need to write files (default
    /// `openclaw_env_allow_commands`).
    pub allow_commands: Option<bool>,
    /// The skills + RL arm trains after every N days (default 1), never after the last.
    pub train_every: Option<u32>,
}

/// The table of a benchmark run, filled arm by arm.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BenchReport {
    pub dir: String,
    pub name: String,
    pub days: u32,
    pub rounds: u32,
    pub file_check_rounds: u32,
    pub multi_choice_rounds: u32,
    pub arms: Vec<ArmTable>,
    /// Files or rounds that were skipped, with their file and line.
    pub problems: Vec<FileProblem>,
    pub warnings: Vec<String>,
    /// The table as `metaclaw bench` prints it.
    pub table: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BenchArm {
    Baseline,
    Skills,
    SkillsRl,
}

impl BenchArm {
    fn parse(name: &str) -> Result<BenchArm, RolloutError> {
        Ok(match name.trim() {
            "baseline" => BenchArm::Baseline,
            "skills" => BenchArm::Skills,
            "skills-rl" | "skills+rl" => BenchArm::SkillsRl,
            other => {
                return Err(RolloutError::Invalid(format!(
                    "unknown bench arm {other:?}: use baseline, skills or skills-rl"
                )));
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            BenchArm::Baseline => "baseline",
            BenchArm::Skills => "skills",
            BenchArm::SkillsRl => "skills-rl",
        }
    }
}

/// What every day of a run shares.
struct RunContext<'a> {
    agent: &'a ProxyAgent,
    bench: &'a Bench,
    settings: &'a EpisodeSettings,
    /// The system message of every day.
    system: &'a str,
    /// Names this run's sessions.
    tag: &'a str,
    req: &'a BenchRequest,
}

/// Tells the agent where it works; the original's agent (OpenClaw) has the workspace as its
/// working folder and the persona files in its system prompt.
fn system_message(persona: Option<&str>, commands: bool) -> String {
    let mut text = String::from(
        "You are working in the user's workspace folder. Paths like dayNN/<file> are \
         relative to it; done.log lives at its root.",
    );
    if commands {
        text.push_str(" Use the run_command tool to read and write files there.");
    }
    if let Some(p) = persona {
        text.push_str("\n\n");
        text.push_str(p);
    }
    text
}

impl TaskRunner {
    /// Starts a MetaClaw-Bench run in the background; the table lands in
    /// [`TaskRunner::status`] (`bench`), arm by arm.
    pub fn start_bench(self: &Arc<Self>, req: BenchRequest) -> Result<JobStatus, RolloutError> {
        if req.dir.trim().is_empty() {
            return Err(RolloutError::Invalid(
                "no benchmark folder: pass a checkout's benchmark/data/metaclaw-bench-small \
                 (or metaclaw-bench)"
                    .into(),
            ));
        }
        let names = if req.arms.is_empty() {
            vec!["baseline".into(), "skills".into(), "skills-rl".into()]
        } else {
            req.arms.clone()
        };
        let arms = names
            .iter()
            .map(|n| BenchArm::parse(n))
            .collect::<Result<Vec<_>, _>>()?;
        if req.days == Some(0) {
            return Err(RolloutError::Invalid("--days must be at least 1".into()));
        }
        // Fail fast on a folder that is not a benchmark; the job re-reads nothing.
        let bench = Bench::load(Path::new(req.dir.trim()), req.days.map(|d| d as usize))?;
        self.claim(JobKind::Bench)?;
        let me = self.clone();
        tokio::spawn(async move {
            let result = me.bench(&req, &arms, bench).await;
            me.finish(result, |_, ()| {});
        });
        Ok(self.status())
    }

    async fn bench(
        &self,
        req: &BenchRequest,
        arms: &[BenchArm],
        bench: Bench,
    ) -> Result<(), RolloutError> {
        let config = self.live.get();
        let mut settings = self.episode_settings(&config, req.max_steps, req.allow_commands, None);
        settings.model = "metaclaw-bench".into();
        let rounds: Vec<RoundKind> = bench
            .days
            .iter()
            .flat_map(|d| d.rounds.iter().map(|r| r.kind()))
            .collect();
        let count = |k: RoundKind| rounds.iter().filter(|r| **r == k).count() as u32;
        let mut warnings = self.command_warnings(&settings);
        let commands = settings.allow_commands && metaclaw_tasks::command::sandbox().is_some();
        if count(RoundKind::FileCheck) > 0 && !settings.allow_commands {
            warnings.push(
                "file_check rounds grade files the agent writes: without run_command \
                 (allow commands when starting the run) they cannot pass"
                    .into(),
            );
        }
        let report = BenchReport {
            dir: bench.dir.display().to_string(),
            name: bench.name.clone(),
            days: bench.days.len() as u32,
            rounds: rounds.len() as u32,
            file_check_rounds: count(RoundKind::FileCheck),
            multi_choice_rounds: count(RoundKind::MultiChoice),
            arms: Vec::new(),
            problems: bench.problems.clone(),
            warnings,
            table: String::new(),
        };
        self.update(|s| {
            s.bench = Some(report);
            s.episodes_total = 0;
        });
        let agent = self.agent(&config)?;
        let persona = bench.persona();
        let system = system_message(persona.as_deref(), commands);
        let day_arcs: Vec<(String, Option<String>)> = bench
            .days
            .iter()
            .map(|d| (d.id.clone(), d.arc.clone()))
            .collect();
        let run_tag = uuid::Uuid::new_v4().simple().to_string();
        for &arm in arms {
            let table = match self.bench_refusal(arm, &config) {
                Some(reason) => ArmTable::not_run(arm.name(), reason),
                None => {
                    self.update(|s| s.episodes_total += rounds.len() as u64);
                    let rl = arm == BenchArm::SkillsRl;
                    if rl {
                        self.rl.hold_training(true);
                    }
                    let ctx = RunContext {
                        agent: &agent,
                        bench: &bench,
                        settings: &settings,
                        system: &system,
                        tag: &run_tag,
                        req,
                    };
                    let result = self.bench_arm(&ctx, arm).await;
                    if rl {
                        self.rl.hold_training(false);
                    }
                    let (run_id, outcomes, steps) = result?;
                    let mut t = ArmTable::from_outcomes(arm.name(), &outcomes, &day_arcs);
                    t.run_id = Some(run_id);
                    t.training_steps = steps;
                    t
                }
            };
            self.update(|s| {
                if let Some(b) = &mut s.bench {
                    b.arms.push(table);
                    b.table = render(&b.arms);
                }
            });
        }
        Ok(())
    }

    /// Why an arm cannot run with the current settings.
    fn bench_refusal(&self, arm: BenchArm, config: &Config) -> Option<String> {
        if arm != BenchArm::Baseline && !config.skills.enabled {
            return Some("skills are off: turn skills on in Settings to run this arm".into());
        }
        if arm == BenchArm::SkillsRl {
            if !config.mode.is_rl() {
                return Some(format!(
                    "RL is off (mode {}): turn RL on in Settings and wait until it serves",
                    config.mode
                ));
            }
            if self.rl.policy().is_none() {
                return Some(
                    "RL is on but its policy is not serving yet: wait until the Training \
                     page says it serves"
                        .into(),
                );
            }
        }
        None
    }

    /// Runs every day of `bench` in one arm; returns its run id, the graded rounds and the
    /// training steps taken.
    async fn bench_arm(
        &self,
        ctx: &RunContext<'_>,
        arm: BenchArm,
    ) -> Result<(i64, Vec<RoundOutcome>, u32), RolloutError> {
        let config = self.live.get();
        let (bench, req) = (ctx.bench, ctx.req);
        let rl = arm == BenchArm::SkillsRl;
        let run_id = self.store.start_eval_run(
            &bench.dir.display().to_string(),
            "metaclaw-bench",
            EvalPurpose::Eval,
            arm.name(),
            if config.mode.is_rl() {
                self.rl.serving_step()
            } else {
                None
            },
        )?;
        let train_every = req.train_every.unwrap_or(1).max(1) as usize;
        let mut outcomes = Vec::new();
        let mut steps = 0u32;
        for (i, day) in bench.days.iter().enumerate() {
            self.update(|s| s.phase = format!("{}: {} ({})", arm.name(), day.id, day.desc));
            let session = format!("bench-{}-{}-{}", arm.name(), &ctx.tag[..8], day.id);
            self.rl.pins().set(
                &session,
                SessionPin {
                    adapter: AdapterChoice::Serving,
                    samples: rl.then_some(1),
                    record: rl,
                },
            );
            if arm == BenchArm::Baseline {
                self.skills_off.lock().insert(session.clone());
                self.store.mark_eval_session(&session, run_id)?;
            }
            let result = self.bench_day(ctx, day, &session, rl, &config).await;
            self.rl.pins().remove(&session);
            self.skills_off.lock().remove(&session);
            for o in result? {
                self.store.add_bench_round(
                    run_id,
                    metaclaw_store::BenchRound {
                        day: o.day.clone(),
                        round: o.round.clone(),
                        kind: o.kind.to_string(),
                        session_id: o.session_id.clone(),
                        passed: o.passed,
                        score: o.score,
                        detail: o.detail.clone(),
                    },
                )?;
                outcomes.push(o);
            }
            let last = i + 1 == bench.days.len();
            if rl && !last && (i + 1) % train_every == 0 {
                self.update(|s| s.phase = format!("{}: training after {}", arm.name(), day.id));
                if let StepOutcome::Trained { .. } = self.rl.train_step().await? {
                    steps += 1;
                    self.update(|s| s.steps_done += 1);
                }
            }
        }
        self.store.finish_bench_run(run_id)?;
        Ok((run_id, outcomes, steps))
    }

    /// One day as one session; returns its graded rounds.
    async fn bench_day(
        &self,
        ctx: &RunContext<'_>,
        day: &Day,
        session: &str,
        rl: bool,
        config: &Config,
    ) -> Result<Vec<RoundOutcome>, RolloutError> {
        let (agent, settings) = (ctx.agent, ctx.settings);
        let workspace = ctx.bench.workspace(day)?;
        let env = match python_env(workspace.path()) {
            Ok(Some(env)) => env,
            Ok(None) => {
                self.warn_once(
                    "no Python 3 on this machine: the checker scripts of file_check rounds \
                     are Python, so those rounds fail (install python3)",
                );
                BTreeMap::new()
            }
            Err(e) => return Err(RolloutError::Tasks(TaskError::Scratch(e))),
        };
        let mut messages = vec![json!({"role": "system", "content": ctx.system})];
        messages.extend(day.seed.iter().cloned());
        let mut feedback: Option<String> = None;
        let mut out = Vec::new();
        for round in &day.rounds {
            messages.push(json!({"role": "user",
                "content": message(feedback.as_deref(), &round.question)}));
            let mut settings = settings.clone();
            settings.seed = Some(seed(&day.id, 0, &round.id));
            let turns = run_turns(
                agent,
                session,
                &mut messages,
                workspace.path(),
                &settings,
                false,
            )
            .await;
            // Graded even when the request failed, as the original runner does: files the
            // agent wrote before count.
            let grade = round.grade(&turns.answer, workspace.path(), &env).await;
            if rl && !turns.turn_ids.is_empty() {
                let last = turns.turn_ids.last().cloned().unwrap_or_default();
                let samples = self.wait_for_samples(&last, 1).await?;
                let scores = vec![grade.score; samples.len().min(1)];
                self.apply_rewards(&turns.turn_ids, &samples, &scores, grade.score, config)
                    .await?;
            }
            out.push(RoundOutcome {
                day: day.id.clone(),
                round: round.id.clone(),
                kind: round.kind(),
                session_id: session.to_owned(),
                passed: grade.passed,
                score: grade.score,
                detail: match &turns.error {
                    Some(e) => format!("error: {e}; {}", grade.detail),
                    None => grade.detail.clone(),
                },
            });
            feedback = Some(grade.feedback);
            self.update(|s| s.episodes_done += 1);
        }
        // The last round's feedback still reaches the agent (and the skill evolver); its
        // reply is not scored.
        match feedback.filter(|f| !f.trim().is_empty()) {
            Some(fb) => {
                if rl {
                    // Nothing grades this reply: it is not sampled for training.
                    self.rl.pins().set(
                        session,
                        SessionPin {
                            adapter: AdapterChoice::Serving,
                            samples: None,
                            record: false,
                        },
                    );
                }
                messages
                    .push(json!({"role": "user", "content": format!("[Previous Feedback] {fb}")}));
                let mut settings = settings.clone();
                settings.seed = Some(seed(&day.id, 0, "feedback"));
                let turns = run_turns(
                    agent,
                    session,
                    &mut messages,
                    workspace.path(),
                    &settings,
                    true,
                )
                .await;
                if let Some(e) = turns.error {
                    tracing::warn!(session, error = %e, "bench: the closing feedback failed");
                    let _ = agent.end_session(session).await;
                }
            }
            None => {
                let _ = agent.end_session(session).await;
            }
        }
        Ok(out)
    }

    fn warn_once(&self, warning: &str) {
        self.update(|s| {
            if let Some(b) = &mut s.bench
                && !b.warnings.iter().any(|w| w == warning)
            {
                b.warnings.push(warning.to_owned());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_are_the_papers() {
        assert_eq!(BenchArm::parse("skills+rl").unwrap(), BenchArm::SkillsRl);
        assert_eq!(BenchArm::parse(" baseline").unwrap().name(), "baseline");
        assert!(
            BenchArm::parse("rl-only")
                .unwrap_err()
                .to_string()
                .contains("baseline, skills or skills-rl")
        );
    }
}
