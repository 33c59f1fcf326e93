//! The settings catalogue: one typed description of every user-facing config key (group,
//! label, help, kind, unit, bounds), from which the dashboard's Settings page renders. The
//! kinds and choices come from the config crate's key table; a test fails when a key there is
//! neither described here nor on the short list of keys hidden on purpose.

use metaclaw_config::{Config, KeyKind, is_secret_key, known_keys, mask_secret};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a setting is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SettingGroup {
    General,
    Llm,
    Skills,
    Evolution,
    Rl,
    Judge,
    Teacher,
    Scheduler,
    Data,
    /// One block per agent (`agents.<name>.*`).
    Agents,
}

impl SettingGroup {
    pub const ALL: &'static [SettingGroup] = &[
        SettingGroup::General,
        SettingGroup::Llm,
        SettingGroup::Skills,
        SettingGroup::Evolution,
        SettingGroup::Rl,
        SettingGroup::Judge,
        SettingGroup::Teacher,
        SettingGroup::Scheduler,
        SettingGroup::Data,
        SettingGroup::Agents,
    ];

    pub fn label(self) -> &'static str {
        match self {
            SettingGroup::General => "General",
            SettingGroup::Llm => "LLM",
            SettingGroup::Skills => "Skills & retrieval",
            SettingGroup::Evolution => "Evolution",
            SettingGroup::Rl => "RL & Tinker",
            SettingGroup::Judge => "Judge",
            SettingGroup::Teacher => "Teacher (OPD)",
            SettingGroup::Scheduler => "Scheduler",
            SettingGroup::Data => "Data",
            SettingGroup::Agents => "Agents",
        }
    }
}

/// How a setting is edited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    Bool,
    Int,
    Float,
    Text,
    /// Write-only: the current value is never sent, only whether one is set.
    Secret,
    /// One of `options`.
    Enum,
    /// A list of strings.
    List,
    /// A file or folder on this machine.
    Path,
    /// An http(s) address.
    Url,
}

/// How the text of a string key is meant (the config crate only knows "a string").
#[derive(Debug, Clone, Copy, PartialEq)]
enum Text {
    Plain,
    Path,
    Url,
}

/// The part of a field written by hand: what the config crate cannot know.
#[derive(Debug)]
struct Described {
    key: &'static str,
    group: SettingGroup,
    label: &'static str,
    help: &'static str,
    text: Text,
    unit: Option<&'static str>,
    min: Option<f64>,
    max: Option<f64>,
}

const fn d(
    key: &'static str,
    group: SettingGroup,
    label: &'static str,
    help: &'static str,
) -> Described {
    Described {
        key,
        group,
        label,
        help,
        text: Text::Plain,
        unit: None,
        min: None,
        max: None,
    }
}

impl Described {
    const fn url(mut self) -> Self {
        self.text = Text::Url;
        self
    }
    const fn path(mut self) -> Self {
        self.text = Text::Path;
        self
    }
    const fn unit(mut self, unit: &'static str) -> Self {
        self.unit = Some(unit);
        self
    }
    const fn min(mut self, min: f64) -> Self {
        self.min = Some(min);
        self
    }
    const fn range(mut self, min: f64, max: f64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }
}

use SettingGroup as G;

/// Keys the dashboard does not show, and why. Small on purpose.
pub const HIDDEN: &[(&str, &str)] = &[
    (
        "proxy.host",
        "where the daemon listens: changing it moves the dashboard itself (CLI only)",
    ),
    (
        "proxy.port",
        "where the daemon listens: changing it moves the dashboard itself (CLI only)",
    ),
    ("rl.tinker_api_key", "legacy name of rl.api_key"),
    ("rl.tinker_base_url", "legacy name of rl.base_url"),
];

const DESCRIBED: &[Described] = &[
    // General
    d(
        "mode",
        G::General,
        "Mode",
        "skills_only injects and distils skills; rl also trains; auto trains only in scheduler windows.",
    ),
    d(
        "learning_paused",
        G::General,
        "Pause learning",
        "Stop distilling skills and training until you resume. Skills are still injected.",
    ),
    d(
        "claw_type",
        G::General,
        "Agent",
        "Which agents MetaClaw wires itself into: one, or several separated by commas (e.g. claude-code, codex).",
    ),
    d(
        "configure_openclaw",
        G::General,
        "Wire the agent on start",
        "Point the agent at MetaClaw when MetaClaw starts.",
    ),
    d(
        "context_window",
        G::General,
        "Advertised context window",
        "What the agent is told the model's window is; 0 picks it automatically.",
    )
    .unit("tokens")
    .min(0.0),
    // LLM
    d(
        "llm.provider",
        G::Llm,
        "Provider",
        "Preset the endpoint was chosen from.",
    ),
    d(
        "llm.api_base",
        G::Llm,
        "Endpoint",
        "OpenAI-compatible base URL chat is forwarded to.",
    )
    .url(),
    d("llm.model_id", G::Llm, "Model", "Model name sent upstream."),
    d("llm.api_key", G::Llm, "API key", "Key for the endpoint."),
    d(
        "llm.auth_method",
        G::Llm,
        "Sign-in",
        "api_key: MetaClaw's key for the endpoint. passthrough: use my agent's own sign-in (e.g. a Claude Pro/Max subscription); the agent's credential is forwarded untouched and never stored. Skill distillation, the judge and status checks then need an endpoint of their own (Endpoint and API key above).",
    ),
    d(
        "llm.oauth_token",
        G::Llm,
        "Subscription token",
        "A subscription OAuth token (sk-ant-oat…) sent as a bearer when there is no API key and the agent sends no credential.",
    ),
    d(
        "llm.timeout_seconds",
        G::Llm,
        "Timeout",
        "How long to wait for the upstream (also the judge and teacher).",
    )
    .unit("s")
    .min(1.0),
    d(
        "llm.responses_api",
        G::Llm,
        "Responses API",
        "Whether the endpoint has /v1/responses (Codex): auto = only OpenAI; \
         translate = convert to chat completions.",
    ),
    d(
        "max_context_tokens",
        G::Llm,
        "Context limit",
        "Trim older messages above this many tokens; 0 = no limit.",
    )
    .unit("tokens")
    .min(0.0),
    d(
        "proxy.api_key",
        G::Llm,
        "Proxy key",
        "Key agents must send to MetaClaw; empty = none.",
    ),
    d(
        "proxy.max_body_bytes",
        G::Llm,
        "Largest request",
        "Requests above this size are refused.",
    )
    .unit("bytes")
    .min(1024.0),
    d(
        "session.idle_timeout",
        G::Llm,
        "Session idle timeout",
        "A session ends after this long without a request.",
    )
    .unit("s")
    .min(0.0),
    // Skills & retrieval
    d(
        "skills.enabled",
        G::Skills,
        "Skills",
        "Inject skills into requests.",
    ),
    d(
        "skills.dir",
        G::Skills,
        "Skills folder",
        "Where your SKILL.md files live.",
    )
    .path(),
    d(
        "skills.include_bundled",
        G::Skills,
        "Bundled skills",
        "Also use the skills that ship with MetaClaw.",
    ),
    d(
        "skills.retrieval_mode",
        G::Skills,
        "Retrieval",
        "How skills are picked: bm25, template or embedding.",
    ),
    d(
        "skills.top_k",
        G::Skills,
        "Skills per request",
        "At most this many skills are injected.",
    )
    .min(1.0),
    d(
        "skills.task_specific_top_k",
        G::Skills,
        "Task-specific skills",
        "At most this many task-specific skills.",
    )
    .min(0.0),
    d(
        "skills.min_score",
        G::Skills,
        "Minimum score",
        "A request whose best skill scores below this gets none; further skills need 90% of it.",
    )
    .min(0.0),
    d(
        "skills.relative_threshold",
        G::Skills,
        "Relative threshold",
        "Keep skills within this fraction of the best score.",
    )
    .range(0.0, 1.0),
    d(
        "skills.min_similarity",
        G::Skills,
        "Minimum similarity",
        "Embedding retrieval: cosine similarity below this is ignored.",
    )
    .range(-1.0, 1.0),
    d(
        "skills.token_budget",
        G::Skills,
        "Token budget",
        "Injected skills fit in this many tokens.",
    )
    .unit("tokens")
    .min(0.0),
    d(
        "skills.holdout_share",
        G::Skills,
        "Skill holdout",
        "To measure whether a skill helps, leave it out of this share of the conversations it \
         would be used in (the same way for a whole conversation) and compare. 0 turns this off; \
         0.1 means one conversation in ten goes without it.",
    )
    .range(0.0, 0.5),
    d(
        "skills.evidence_min_turns",
        G::Skills,
        "Evidence needs",
        "Skill health shows an estimate only once a skill has this many turns with it and this \
         many comparable turns without it; before that it says \"not enough data\".",
    )
    .unit("turns")
    .min(1.0),
    d(
        "skills.placement",
        G::Skills,
        "Where skills go",
        "user: beside the newest user message, after the prompt-cache breakpoint, so the cached prefix stays identical turn to turn (cheaper, faster). system: at the end of the system prompt (changes the prefix when the chosen skills change).",
    ),
    d(
        "skills.embedding.api_base",
        G::Skills,
        "Embeddings endpoint",
        "OpenAI-compatible /embeddings base URL; empty = the LLM's.",
    )
    .url(),
    d(
        "skills.embedding.api_key",
        G::Skills,
        "Embeddings key",
        "Empty = the LLM's key.",
    ),
    d(
        "skills.embedding.model",
        G::Skills,
        "Embeddings model",
        "Model used for embeddings.",
    ),
    d(
        "skills.embedding.timeout_ms",
        G::Skills,
        "Embeddings timeout",
        "Past this, retrieval falls back to BM25.",
    )
    .unit("ms")
    .min(1.0),
    // Evolution
    d(
        "skills.auto_evolve",
        G::Evolution,
        "Distil skills",
        "Propose new skills from finished sessions.",
    ),
    d(
        "skills.auto_approve",
        G::Evolution,
        "Auto-approve",
        "Apply proposals without review.",
    ),
    d(
        "skills.evolution_every_n_turns",
        G::Evolution,
        "Every N turns",
        "Also distil after this many turns; 0 = only at session end.",
    )
    .unit("turns")
    .min(0.0),
    d(
        "rl.evolver_api_base",
        G::Evolution,
        "Evolver endpoint",
        "Endpoint that writes skill proposals; empty = the LLM's.",
    )
    .url(),
    d(
        "rl.evolver_model",
        G::Evolution,
        "Evolver model",
        "Empty = the LLM's model.",
    ),
    d(
        "rl.evolver_api_key",
        G::Evolution,
        "Evolver key",
        "Empty = the LLM's key.",
    ),
    // RL & Tinker
    d(
        "rl.enabled",
        G::Rl,
        "Reinforcement learning",
        "Train a LoRA adapter on your recorded turns.",
    ),
    d(
        "rl.base_url",
        G::Rl,
        "Tinker URL",
        "Tinker-compatible training server; empty = the Tinker cloud.",
    )
    .url(),
    d(
        "rl.api_key",
        G::Rl,
        "Tinker API key",
        "Key for the training server (a local server needs none).",
    ),
    d(
        "rl.model",
        G::Rl,
        "Base model",
        "Model to fine-tune, e.g. Qwen/Qwen3-4B; empty = the LLM model.",
    ),
    d(
        "rl.renderer_name",
        G::Rl,
        "Chat format",
        "qwen3, qwen3_instruct, llama3, kimi_k2, kimi_k25; empty = from the model name.",
    ),
    d(
        "rl.tokenizer_path",
        G::Rl,
        "Tokenizer file",
        "A local tokenizer.json; empty = download from the Hugging Face hub.",
    )
    .path(),
    d(
        "rl.tokenizer_hub_url",
        G::Rl,
        "Tokenizer download site",
        "The Hugging Face hub or a mirror of it (e.g. https://hf-mirror.com); empty = huggingface.co.",
    ),
    d("rl.lora_rank", G::Rl, "LoRA rank", "Rank of the adapter.").min(1.0),
    d(
        "rl.batch_size",
        G::Rl,
        "Batch size",
        "Sample groups per training step.",
    )
    .min(1.0),
    d("rl.group_size", G::Rl, "Group size", "Samples per prompt.").min(1.0),
    d("rl.loss_fn", G::Rl, "Loss", "Policy loss."),
    d(
        "rl.learning_rate",
        G::Rl,
        "Learning rate",
        "Adam learning rate.",
    )
    .min(0.0),
    d(
        "rl.checkpoint_every",
        G::Rl,
        "Checkpoint every",
        "Save the training state every N steps.",
    )
    .unit("steps")
    .min(1.0),
    d(
        "rl.save_weights_timeout_s",
        G::Rl,
        "Save timeout",
        "How long saving weights may take.",
    )
    .unit("s")
    .min(1.0),
    d(
        "rl.resume_from_ckpt",
        G::Rl,
        "Resume from",
        "A tinker:// checkpoint to start from; empty = the last one.",
    ),
    d(
        "rl.gate_split",
        G::Rl,
        "Gate split",
        "A split of the task folder (e.g. gate) a new adapter must not do worse on before it serves; empty = every adapter serves at once.",
    ),
    d(
        "rl.gate_tolerance",
        G::Rl,
        "Gate tolerance",
        "How much lower (0..1) a new adapter's success on the gate split may be than the serving one's.",
    )
    .range(0.0, 1.0),
    d(
        "rl.reward_combine",
        G::Rl,
        "Verifier and judge",
        "When a task's verifier and the judge both scored an answer: verifier decides, mean of both, or the lower (min).",
    ),
    d(
        "rl.thumbs_weight",
        G::Rl,
        "Thumbs weight",
        "A served answer's reward gets this times your thumbs (+1 up, -1 down), in place of the judge's score; 0 = thumbs do not count.",
    )
    .range(0.0, 1.0),
    d(
        "rl.correction_weight",
        G::Rl,
        "Correction weight",
        "Taken off an answer's reward when your next message corrects it (\"no, that's wrong…\"); 0 = corrections do not count.",
    )
    .range(0.0, 1.0),
    d(
        "rl.retry_weight",
        G::Rl,
        "Retry weight",
        "Taken off an answer's reward when your next message asks again (the same message, or \"try again\"); 0 = retries do not count.",
    )
    .range(0.0, 1.0),
    d(
        "rl.tool_error_weight",
        G::Rl,
        "Tool error weight",
        "Taken off an answer's reward when the tool calls it made came back with errors; 0 = tool errors do not count.",
    )
    .range(0.0, 1.0),
    d(
        "openclaw_env_data_dir",
        G::Rl,
        "Task folder",
        "A folder of <split>.jsonl tasks for rollouts and evaluations (metaclaw rollout, metaclaw eval).",
    )
    .path(),
    d(
        "openclaw_env_split",
        G::Rl,
        "Rollout split",
        "The task split rollouts train on.",
    ),
    d(
        "openclaw_env_concurrency",
        G::Rl,
        "Parallel episodes",
        "Tasks run at the same time in a rollout or evaluation.",
    )
    .min(1.0),
    d(
        "openclaw_env_max_steps",
        G::Rl,
        "Turns per episode",
        "The most model turns one task may take.",
    )
    .min(1.0),
    d(
        "openclaw_env_allow_commands",
        G::Rl,
        "Let tasks run commands",
        "Warning: the agent may then run shell commands during rollouts. They run only in each task's scratch folder (needs bubblewrap), with a time limit and an output cap.",
    ),
    d(
        "rl.manual_train_trigger",
        G::Rl,
        "Train only on demand",
        "Train only when you ask (Training page or metaclaw train-step).",
    ),
    d(
        "rl.temperature",
        G::Rl,
        "Sampling temperature",
        "Temperature when the policy answers.",
    )
    .min(0.0),
    d(
        "rl.max_new_tokens",
        G::Rl,
        "Max new tokens",
        "Longest answer the policy writes.",
    )
    .unit("tokens")
    .min(1.0),
    d(
        "rl.wire_format",
        G::Rl,
        "Wire format",
        "How training requests are encoded; auto fits the server.",
    ),
    // Judge
    d(
        "rl.prm_url",
        G::Judge,
        "Judge endpoint",
        "OpenAI-compatible endpoint that scores turns.",
    )
    .url(),
    d(
        "rl.prm_model",
        G::Judge,
        "Judge model",
        "Model that scores turns.",
    ),
    d(
        "rl.prm_api_key",
        G::Judge,
        "Judge key",
        "Without a judge, only turns you rate train.",
    ),
    d(
        "rl.prm_m",
        G::Judge,
        "Votes",
        "Judge calls per turn (majority vote).",
    )
    .min(1.0),
    d(
        "rl.prm_temperature",
        G::Judge,
        "Judge temperature",
        "Sampling temperature of the judge.",
    )
    .min(0.0),
    d(
        "rl.prm_max_new_tokens",
        G::Judge,
        "Judge max tokens",
        "Longest verdict.",
    )
    .unit("tokens")
    .min(1.0),
    // Teacher (OPD)
    d(
        "opd.enabled",
        G::Teacher,
        "On-policy distillation",
        "Use a teacher model's log-probabilities as an extra training signal.",
    ),
    d(
        "opd.teacher_url",
        G::Teacher,
        "Teacher endpoint",
        "OpenAI-compatible endpoint with logprobs.",
    )
    .url(),
    d(
        "opd.teacher_model",
        G::Teacher,
        "Teacher model",
        "Must share the policy's tokenizer.",
    ),
    d(
        "opd.teacher_api_key",
        G::Teacher,
        "Teacher key",
        "Key for the teacher endpoint.",
    ),
    d(
        "opd.kl_penalty_coef",
        G::Teacher,
        "KL coefficient",
        "Weight of the teacher signal.",
    )
    .min(0.0),
    // Scheduler
    d(
        "scheduler.enabled",
        G::Scheduler,
        "Scheduler",
        "Train only in windows when you are away (mode auto always does).",
    ),
    d(
        "scheduler.sleep_enabled",
        G::Scheduler,
        "Sleep hours",
        "Train while you sleep.",
    ),
    d(
        "scheduler.sleep_start",
        G::Scheduler,
        "Sleep from",
        "HH:MM, local time.",
    ),
    d(
        "scheduler.sleep_end",
        G::Scheduler,
        "Sleep until",
        "HH:MM, local time.",
    ),
    d(
        "scheduler.idle_enabled",
        G::Scheduler,
        "When idle",
        "Train when the computer has been idle.",
    ),
    d(
        "scheduler.idle_threshold_minutes",
        G::Scheduler,
        "Idle after",
        "Minutes without input before a window opens.",
    )
    .unit("min")
    .min(0.0),
    d(
        "scheduler.min_window_minutes",
        G::Scheduler,
        "Shortest window",
        "Windows shorter than this are skipped.",
    )
    .unit("min")
    .min(0.0),
    d(
        "scheduler.poll_seconds",
        G::Scheduler,
        "Check every",
        "How often the scheduler looks at idle time.",
    )
    .unit("s")
    .min(1.0),
    d(
        "scheduler.calendar.enabled",
        G::Scheduler,
        "Calendar",
        "Train in meetings' gaps only when your calendar is free.",
    ),
    d(
        "scheduler.calendar.paths",
        G::Scheduler,
        "Calendar files",
        ".ics files or folders, one a line.",
    )
    .path(),
    d(
        "scheduler.calendar.urls",
        G::Scheduler,
        "Calendar URLs",
        "iCal addresses, one a line.",
    )
    .url(),
    d(
        "scheduler.calendar.user_email",
        G::Scheduler,
        "Your e-mail",
        "Events you declined with this address do not count as busy.",
    ),
    d(
        "scheduler.calendar.include_all_day",
        G::Scheduler,
        "All-day events",
        "Count all-day events as busy.",
    ),
    d(
        "scheduler.calendar.refresh_minutes",
        G::Scheduler,
        "Refresh every",
        "How often calendar URLs are fetched.",
    )
    .unit("min")
    .min(1.0),
    // Data
    d(
        "records.retention_days",
        G::Data,
        "Keep turns for",
        "Older turns are deleted; 0 = keep forever.",
    )
    .unit("days")
    .min(0.0),
];

/// The settings of each agent, described once with `*` for the agent's name.
const AGENT_DESCRIBED: &[Described] = &[
    d(
        "agents.*.skills",
        G::Agents,
        "skills",
        "Inject skills into this agent's turns.",
    ),
    d(
        "agents.*.learning",
        G::Agents,
        "learning",
        "Learn from this agent: distil skills from its sessions and keep its turns for training.",
    ),
    d(
        "agents.*.train_shared_policy",
        G::Agents,
        "trains the shared model",
        "Let this agent's turns train the one policy every agent is served by (RL modes).",
    ),
    d(
        "agents.*.skills_dir",
        G::Agents,
        "own skills folder",
        "Skills only this agent sees, over the shared ones (same name: this one wins). Empty: a folder under the MetaClaw home.",
    )
    .path(),
    d(
        "agents.*.api_key",
        G::Agents,
        "proxy key",
        "The key this agent sends, written into its configuration when MetaClaw wires it; requests with it are recorded as this agent's.",
    ),
];

/// The agents the Settings page shows a block for: those under `agents:` and the configured
/// ones (so a newly chosen agent can be set up before it was wired).
fn agent_names(config: &Config) -> Vec<String> {
    let mut names: Vec<String> = config
        .agents
        .keys()
        .cloned()
        .chain(config.claw_type.agents().map(|c| c.as_str().to_owned()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// One setting as the dashboard shows it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SettingField {
    /// The dotted config key (`metaclaw config KEY VALUE`).
    pub key: String,
    pub group: SettingGroup,
    pub label: String,
    pub help: String,
    pub kind: FieldKind,
    /// The allowed values of an `enum`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    pub unit: Option<String>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// What the key accepts, in the words of the CLI's error.
    pub expected: String,
    /// The current value; `null` for a secret (see `masked`).
    pub value: Value,
    /// For a secret: whether one is set, shown masked (`sk-…abcd`).
    pub masked: Option<String>,
    /// A change applies to the running core without a restart.
    pub live: bool,
}

/// A group and its label, in page order.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GroupInfo {
    pub id: SettingGroup,
    pub label: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SettingsCatalogue {
    pub groups: Vec<GroupInfo>,
    pub fields: Vec<SettingField>,
    /// What RL still needs, per key and why (empty when RL could start): the dashboard marks
    /// these when it is opened on the RL section (`#/settings/rl`, the tray's "Enable RL").
    pub rl_missing: Vec<crate::api::FieldError>,
}

fn value_at(doc: &Value, key: &str) -> Value {
    key.split('.')
        .try_fold(doc, |v, part| v.get(part))
        .cloned()
        .unwrap_or(Value::Null)
}

/// The catalogue with the current values of `config`; secrets are masked.
pub fn catalogue(config: &Config) -> SettingsCatalogue {
    let doc = config.to_document().as_value().clone();
    let per_agent = agent_names(config).into_iter().flat_map(|name| {
        AGENT_DESCRIBED.iter().map(move |f| {
            let key = f.key.replace('*', &name);
            // Values the file does not hold yet are the defaults.
            let current = config.agent(&name);
            let value = serde_json::to_value(&current)
                .ok()
                .and_then(|v| v.get(f.key.rsplit('.').next()?).cloned())
                .unwrap_or(Value::Null);
            (f, key, Some((name.clone(), value)))
        })
    });
    let fields = DESCRIBED
        .iter()
        .map(|f| (f, f.key.to_owned(), None))
        .chain(per_agent)
        .filter_map(|(f, key, agent)| {
            let spec = known_keys()
                .iter()
                .chain(metaclaw_config::agent_keys())
                .find(|k| k.key == f.key)?;
            let secret = is_secret_key(f.key.rsplit('.').next().unwrap_or(f.key));
            let (kind, options) = match spec.kind {
                KeyKind::Bool => (FieldKind::Bool, Vec::new()),
                KeyKind::Int => (FieldKind::Int, Vec::new()),
                KeyKind::Float => (FieldKind::Float, Vec::new()),
                KeyKind::StrList => (FieldKind::List, Vec::new()),
                KeyKind::Choice(names) => (
                    FieldKind::Enum,
                    names.iter().map(|n| (*n).to_owned()).collect(),
                ),
                KeyKind::Str if secret => (FieldKind::Secret, Vec::new()),
                KeyKind::Str => match f.text {
                    Text::Plain => (FieldKind::Text, Vec::new()),
                    Text::Path => (FieldKind::Path, Vec::new()),
                    Text::Url => (FieldKind::Url, Vec::new()),
                },
                KeyKind::Section => return None,
            };
            let (current, label) = match agent {
                Some((name, value)) => (value, format!("{name}: {}", f.label)),
                None => (value_at(&doc, f.key), f.label.to_owned()),
            };
            let (value, masked) = if kind == FieldKind::Secret {
                let set = current.as_str().filter(|s| !s.is_empty());
                (Value::Null, set.map(mask_secret))
            } else {
                (current, None)
            };
            Some(SettingField {
                live: crate::settings::is_live(&key),
                key,
                group: f.group,
                label,
                help: f.help.to_owned(),
                kind,
                options,
                unit: f.unit.map(str::to_owned),
                min: f.min,
                max: f.max,
                expected: spec.allowed(),
                value,
                masked,
            })
        })
        .collect();
    SettingsCatalogue {
        groups: SettingGroup::ALL
            .iter()
            .map(|g| GroupInfo {
                id: *g,
                label: g.label().to_owned(),
            })
            .collect(),
        fields,
        rl_missing: crate::settings::missing_fields(&crate::settings::rl_readiness(config)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf_keys() -> Vec<&'static str> {
        known_keys()
            .iter()
            .filter(|k| k.kind != KeyKind::Section)
            .map(|k| k.key)
            .collect()
    }

    /// A key the config crate reads must be described here or hidden on purpose.
    #[test]
    fn every_user_facing_key_is_described() {
        let missing: Vec<_> = leaf_keys()
            .into_iter()
            .filter(|k| DESCRIBED.iter().all(|f| f.key != *k))
            .filter(|k| HIDDEN.iter().all(|(h, _)| h != k))
            .collect();
        assert!(
            missing.is_empty(),
            "config keys with no settings field (describe them or add them to HIDDEN): {missing:?}"
        );
    }

    #[test]
    fn described_keys_exist_once_and_are_not_hidden() {
        let leaves = leaf_keys();
        for (i, f) in DESCRIBED.iter().enumerate() {
            assert!(leaves.contains(&f.key), "{} is not a config key", f.key);
            assert!(
                HIDDEN.iter().all(|(h, _)| *h != f.key),
                "{} is hidden",
                f.key
            );
            assert!(
                DESCRIBED[i + 1..].iter().all(|g| g.key != f.key),
                "{} twice",
                f.key
            );
        }
        for (h, _) in HIDDEN {
            assert!(leaves.contains(h), "hidden {h} is not a config key");
        }
    }

    #[test]
    fn secrets_are_never_returned() {
        let mut c = Config::default();
        c.rl.api_key = "tml-secret-value-1234".into();
        let cat = catalogue(&c);
        let field = cat.fields.iter().find(|f| f.key == "rl.api_key").unwrap();
        assert_eq!(field.kind, FieldKind::Secret);
        assert_eq!(field.value, Value::Null);
        let shown = serde_json::to_string(&cat).unwrap();
        assert!(!shown.contains("tml-secret-value-1234"));
        assert!(field.masked.as_deref().unwrap().ends_with("1234"));
        // A Tinker key is set but no model: the catalogue says what RL still needs.
        c.llm.model_id.clear();
        let keys: Vec<_> = catalogue(&c)
            .rl_missing
            .into_iter()
            .map(|f| f.key)
            .collect();
        assert_eq!(keys, ["rl.model"]);
    }

    #[test]
    fn each_agent_gets_its_settings_with_the_key_masked() {
        let mut c = Config {
            claw_type: "codex".parse().unwrap(),
            ..Config::default()
        };
        c.agents.insert(
            "claude-code".into(),
            metaclaw_config::AgentConfig {
                api_key: "mc-0123456789abcdef-secret".into(),
                learning: false,
                ..Default::default()
            },
        );
        let cat = catalogue(&c);
        let get = |k: &str| cat.fields.iter().find(|f| f.key == k);
        let learning = get("agents.claude-code.learning").unwrap();
        assert_eq!(learning.group, SettingGroup::Agents);
        assert_eq!(learning.kind, FieldKind::Bool);
        assert_eq!(learning.value, Value::Bool(false));
        assert!(learning.live);
        assert!(learning.label.starts_with("claude-code"));
        // A configured agent not yet under `agents:` shows its defaults.
        assert_eq!(get("agents.codex.skills").unwrap().value, Value::Bool(true));
        assert_eq!(
            get("agents.codex.skills_dir").unwrap().kind,
            FieldKind::Path
        );
        let key = get("agents.claude-code.api_key").unwrap();
        assert_eq!(key.kind, FieldKind::Secret);
        assert_eq!(key.value, Value::Null);
        assert!(
            !serde_json::to_string(&cat)
                .unwrap()
                .contains("0123456789abcdef")
        );
        // Every per-agent description names a real per-agent key.
        for f in AGENT_DESCRIBED {
            assert!(
                metaclaw_config::agent_keys().iter().any(|k| k.key == f.key),
                "{}",
                f.key
            );
        }
    }

    #[test]
    fn kinds_and_choices_come_from_the_config_crate() {
        let cat = catalogue(&Config::default());
        let get = |k: &str| cat.fields.iter().find(|f| f.key == k).unwrap();
        assert_eq!(get("rl.loss_fn").kind, FieldKind::Enum);
        assert!(get("rl.loss_fn").options.contains(&"ppo".to_owned()));
        assert_eq!(get("skills.top_k").kind, FieldKind::Int);
        assert_eq!(get("scheduler.calendar.urls").kind, FieldKind::List);
        assert_eq!(get("rl.base_url").kind, FieldKind::Url);
        assert_eq!(get("skills.top_k").expected, "expected an integer >= 1");
        let restart: Vec<_> = cat
            .fields
            .iter()
            .filter(|f| !f.live)
            .map(|f| f.key.as_str())
            .collect();
        assert!(
            restart.is_empty(),
            "no key shown in Settings waits for a restart: {restart:?}"
        );
    }
}
