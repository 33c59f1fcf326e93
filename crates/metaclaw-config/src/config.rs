//! The typed configuration, its defaults and a few derived values.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::choices::{
    AuthMethod, LlmProvider, LossFn, Mode, Placement, ResponsesApi, RetrievalMode, RewardCombine,
    WireFormat,
};
use crate::claw_list::ClawTypes;
use crate::home::{Home, expand_tilde, user_home};

/// Served model name when `llm.model_id` is empty (same fallback as upstream).
pub const DEFAULT_SERVED_MODEL: &str = "metaclaw-model";
/// `skills.dir` default as written in upstream configs.
pub const DEFAULT_SKILLS_DIR: &str = "~/.metaclaw/skills";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Config {
    pub mode: Mode,
    pub llm: LlmConfig,
    pub proxy: ProxyConfig,
    pub skills: SkillsConfig,
    pub rl: RlConfig,
    pub opd: OpdConfig,
    pub scheduler: SchedulerConfig,
    pub session: SessionConfig,
    pub records: RecordsConfig,
    pub max_context_tokens: u64,
    pub context_window: u64,
    /// The agents wired on start: one name, a list, or a comma-separated string.
    #[schemars(with = "String")]
    pub claw_type: ClawTypes,
    /// Legacy v0.3 switch; `false` means `claw_type: none` (applied by `validate`).
    pub configure_openclaw: bool,
    /// Pause learning: no skill distillation and no training until resumed.
    pub learning_paused: bool,
    /// Programmatic rollouts (upstream's keys): the task folder, the split, parallel
    /// episodes and turns per episode.
    pub openclaw_env_data_dir: String,
    pub openclaw_env_split: String,
    pub openclaw_env_concurrency: u32,
    pub openclaw_env_max_steps: u32,
    /// Offer the agent a `run_command` tool in rollouts (sandboxed in the episode's folder).
    pub openclaw_env_allow_commands: bool,
    /// Per-agent identities and settings (`agents.<name>.*`), by agent name.
    pub agents: std::collections::BTreeMap<String, crate::agents::AgentConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mode: Mode::default(),
            llm: LlmConfig::default(),
            proxy: ProxyConfig::default(),
            skills: SkillsConfig::default(),
            rl: RlConfig::default(),
            opd: OpdConfig::default(),
            scheduler: SchedulerConfig::default(),
            session: SessionConfig::default(),
            records: RecordsConfig::default(),
            // Off unless asked for: the agent manages its own context, and a silent cap below
            // the model's window causes early compaction (upstream issue #38).
            max_context_tokens: 0,
            // 0 = auto: what the agent is told the model's window is (see `advertised_context_window`).
            context_window: 0,
            claw_type: ClawTypes::default(),
            configure_openclaw: true,
            learning_paused: false,
            openclaw_env_data_dir: String::new(),
            openclaw_env_split: "train".to_owned(),
            openclaw_env_concurrency: 4,
            openclaw_env_max_steps: 15,
            openclaw_env_allow_commands: false,
            agents: Default::default(),
        }
    }
}

impl Config {
    /// The effective configuration (defaults filled in) as a document, e.g. for masking and
    /// display or for applying changes to a running configuration.
    pub fn to_document(&self) -> crate::Document {
        let mut doc = crate::Document::empty();
        if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(self) {
            for (k, v) in map {
                // Keys are plain identifiers, so setting them cannot fail.
                let _ = doc.set(&k, v);
            }
        }
        doc
    }

    /// The model name MetaClaw advertises to the agent.
    /// The context window to advertise to agents. `context_window: 0` picks 200k tokens for
    /// hosted models (skills_only) and 32k in RL modes, whose sampler has a short sequence
    /// limit; a silent 32k cap everywhere made OpenClaw compact early (upstream #38).
    pub fn advertised_context_window(&self) -> u64 {
        match (self.context_window, self.mode) {
            (0, Mode::SkillsOnly) => 200_000,
            (0, _) => 32_768,
            (n, _) => n,
        }
    }

    /// An agent's settings: its own under `agents:`, the defaults for one not listed there
    /// (such as the default agent).
    pub fn agent(&self, name: &str) -> crate::agents::AgentConfig {
        self.agents.get(name).cloned().unwrap_or_default()
    }

    pub fn served_model(&self) -> &str {
        if self.llm.model_id.is_empty() {
            DEFAULT_SERVED_MODEL
        } else {
            &self.llm.model_id
        }
    }

    /// Where skills live. The upstream default (or an empty value) follows the
    /// MetaClaw home so `METACLAW_HOME` isolates everything; `~/` expands to
    /// `$HOME`; other relative paths are taken relative to the home root.
    pub fn skills_dir(&self, home: &Home) -> PathBuf {
        self.skills_dir_with(home, user_home().as_deref())
    }

    pub(crate) fn skills_dir_with(&self, home: &Home, user_home: Option<&Path>) -> PathBuf {
        let dir = self.skills.dir.trim();
        if dir.is_empty() || dir == DEFAULT_SKILLS_DIR {
            return home.default_skills_dir();
        }
        let path = expand_tilde(dir, user_home);
        if path.is_relative() {
            home.root().join(path)
        } else {
            path
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LlmConfig {
    pub provider: LlmProvider,
    pub model_id: String,
    pub api_base: String,
    pub api_key: String,
    pub timeout_seconds: u64,
    /// `passthrough`: forward the agent's own credential (a subscription sign-in) upstream.
    pub auth_method: AuthMethod,
    /// A subscription OAuth token (`sk-ant-oat…`): sent upstream as `Authorization: Bearer`
    /// (never as `x-api-key`) when `llm.api_key` is empty and the caller brings none.
    pub oauth_token: String,
    /// Whether `/v1/responses` is forwarded as is or translated to chat completions.
    pub responses_api: ResponsesApi,
}

impl LlmConfig {
    /// Whether the upstream speaks the Responses API itself: as set, else by provider.
    pub fn upstream_has_responses(&self) -> bool {
        match self.responses_api {
            ResponsesApi::Native => true,
            ResponsesApi::Translate => false,
            ResponsesApi::Auto => self.provider == LlmProvider::Openai,
        }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: LlmProvider::default(),
            model_id: String::new(),
            api_base: String::new(),
            api_key: String::new(),
            timeout_seconds: 600,
            responses_api: ResponsesApi::Auto,
            auth_method: AuthMethod::default(),
            oauth_token: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ProxyConfig {
    /// Loopback by default: upstream bound 0.0.0.0 with no auth.
    pub host: String,
    pub port: u16,
    /// Bearer token clients must present; empty disables the check.
    pub api_key: String,
    pub max_body_bytes: u64,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            host: "127.0.0.1".to_owned(),
            port: 30000,
            api_key: String::new(),
            max_body_bytes: 32 * 1024 * 1024,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct SkillsConfig {
    pub enabled: bool,
    pub dir: String,
    pub retrieval_mode: RetrievalMode,
    pub top_k: u32,
    pub task_specific_top_k: u32,
    pub auto_evolve: bool,
    pub evolution_every_n_turns: u32,
    /// Approve distilled skills without review (the Python MetaClaw's behaviour).
    pub auto_approve: bool,
    /// Also use the bank built into the binary (the user's copies win).
    pub include_bundled: bool,
    /// BM25 score the best skill needs for a request to get any (zero skills is a valid
    /// answer); further skills need 90% of it.
    pub min_score: f64,
    /// …and the fraction of the best match's score it needs.
    pub relative_threshold: f64,
    /// Embedding mode: the cosine similarity a skill needs on its own.
    pub min_similarity: f64,
    /// Tokens the injected block may take (pinned skills always fit).
    pub token_budget: u32,
    /// Where the skills block goes: beside the newest user turn (keeps the prompt cache
    /// warm) or at the end of the system prompt.
    pub placement: Placement,
    pub embedding: EmbeddingConfig,
    /// Share (0-0.5) of eligible turns in which a retrieved skill is withheld, the same way
    /// throughout a conversation, so its evidence has an unbiased control group. 0 is off.
    pub holdout_share: f64,
    /// Turns each side of a skill's comparison needs before the Skill health view gives an
    /// estimate instead of "not enough data".
    pub evidence_min_turns: u32,
}

/// `skills.embedding`: an OpenAI-compatible `/v1/embeddings` endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct EmbeddingConfig {
    /// Empty: use `llm.api_base`.
    pub api_base: String,
    /// Empty: use `llm.api_key`.
    pub api_key: String,
    pub model: String,
    pub timeout_ms: u64,
}

impl Default for EmbeddingConfig {
    fn default() -> Self {
        EmbeddingConfig {
            api_base: String::new(),
            api_key: String::new(),
            model: "text-embedding-3-small".to_owned(),
            timeout_ms: 1500,
        }
    }
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            enabled: true,
            dir: DEFAULT_SKILLS_DIR.to_owned(),
            retrieval_mode: RetrievalMode::default(),
            top_k: 6,
            task_specific_top_k: 10,
            auto_evolve: true,
            evolution_every_n_turns: 10,
            auto_approve: false,
            include_bundled: true,
            // Chosen with the everyday rule on the tuning files' half A (`skills-eval
            // --everyday`, round 8): the best recall with at most 5 % false injection there.
            min_score: 10.0,
            relative_threshold: 0.4,
            min_similarity: 0.35,
            token_budget: 2000,
            placement: Placement::default(),
            embedding: EmbeddingConfig::default(),
            holdout_share: 0.0,
            evidence_min_turns: 20,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct RlConfig {
    pub enabled: bool,
    pub model: String,
    pub base_url: String,
    pub api_key: String,
    pub tinker_api_key: String,
    pub tinker_base_url: String,
    pub prm_url: String,
    pub prm_model: String,
    pub prm_api_key: String,
    pub lora_rank: u32,
    pub batch_size: u32,
    pub resume_from_ckpt: String,
    pub evolver_api_base: String,
    pub evolver_api_key: String,
    pub evolver_model: String,
    pub manual_train_trigger: bool,
    /// Tinker loss for policy updates.
    pub loss_fn: LossFn,
    pub learning_rate: f64,
    /// Samples drawn per served prompt; above 1, advantages are relative to the group.
    pub group_size: u32,
    /// PRM judge votes per turn (majority wins, a tie scores 0).
    pub prm_m: u32,
    pub prm_temperature: f64,
    pub prm_max_new_tokens: u32,
    /// Chat renderer (`qwen3`, `qwen3_instruct`, `llama3`, `kimi_k2`, `kimi_k25`); empty =
    /// chosen from `rl.model`.
    pub renderer_name: String,
    /// A local `tokenizer.json` (or Kimi's `tiktoken.model`); empty = the model's hub repo,
    /// downloaded once into the home dir.
    pub tokenizer_path: String,
    /// Where tokenizers are downloaded from: a Hugging Face hub or a mirror of it (such as
    /// hf-mirror.com where huggingface.co is out of reach); empty = `HF_ENDPOINT`, else
    /// huggingface.co.
    pub tokenizer_hub_url: String,
    /// Tinker request encoding for forward_backward.
    pub wire_format: WireFormat,
    /// Save a resumable checkpoint every N steps.
    pub checkpoint_every: u32,
    pub save_weights_timeout_s: u64,
    /// Sampling defaults when a request sets none.
    pub temperature: f64,
    pub max_new_tokens: u32,
    /// A split of the task folder a new adapter must not regress on before it serves; empty
    /// = every trained adapter serves at once.
    pub gate_split: String,
    /// How much lower than the serving adapter's success on the gate split a new one may
    /// score and still serve (0..1).
    pub gate_tolerance: f64,
    /// How the verifier and the judge combine when both scored a sample.
    pub reward_combine: RewardCombine,
    /// Weights (0..1) of the reward's parts a served answer gets from live use, each
    /// multiplying its signal: thumbs (+1 up, -1 down; it replaces the judge's score), and
    /// -1 when the next user turn corrects it, retries it, or its tool calls failed. 0 turns
    /// a part off.
    pub thumbs_weight: f64,
    pub correction_weight: f64,
    pub retry_weight: f64,
    pub tool_error_weight: f64,
}

impl Default for RlConfig {
    fn default() -> Self {
        RlConfig {
            enabled: false,
            model: String::new(),
            base_url: String::new(),
            api_key: String::new(),
            tinker_api_key: String::new(),
            tinker_base_url: String::new(),
            prm_url: "https://api.openai.com/v1".to_owned(),
            prm_model: "gpt-5.2".to_owned(),
            prm_api_key: String::new(),
            lora_rank: 32,
            batch_size: 4,
            resume_from_ckpt: String::new(),
            evolver_api_base: String::new(),
            evolver_api_key: String::new(),
            evolver_model: String::new(),
            manual_train_trigger: false,
            loss_fn: LossFn::default(),
            learning_rate: 1e-4,
            group_size: 1,
            prm_m: 3,
            prm_temperature: 0.6,
            prm_max_new_tokens: 1024,
            renderer_name: String::new(),
            tokenizer_path: String::new(),
            tokenizer_hub_url: String::new(),
            wire_format: WireFormat::default(),
            checkpoint_every: 5,
            save_weights_timeout_s: 200,
            temperature: 0.7,
            max_new_tokens: 2048,
            gate_split: String::new(),
            gate_tolerance: 0.05,
            reward_combine: RewardCombine::default(),
            thumbs_weight: 1.0,
            correction_weight: 0.5,
            retry_weight: 0.5,
            tool_error_weight: 0.25,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct OpdConfig {
    pub enabled: bool,
    pub teacher_url: String,
    pub teacher_model: String,
    pub teacher_api_key: String,
    pub kl_penalty_coef: f64,
}

impl Default for OpdConfig {
    fn default() -> Self {
        OpdConfig {
            enabled: false,
            teacher_url: String::new(),
            teacher_model: String::new(),
            teacher_api_key: String::new(),
            kl_penalty_coef: 1.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct SchedulerConfig {
    pub enabled: bool,
    pub idle_threshold_minutes: u32,
    /// Local wall-clock time, `HH:MM`.
    pub sleep_start: String,
    /// Local wall-clock time, `HH:MM`.
    pub sleep_end: String,
    pub min_window_minutes: u32,
    /// Sleep hours open windows (each source can be turned off).
    pub sleep_enabled: bool,
    /// OS idle time (or time since the last request) opens windows.
    pub idle_enabled: bool,
    /// How often the idle time is read.
    pub poll_seconds: u64,
    pub calendar: CalendarConfig,
}

/// `scheduler.calendar`: meetings in .ics files or iCal URLs open windows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct CalendarConfig {
    pub enabled: bool,
    /// .ics files or folders (watched).
    pub paths: Vec<String>,
    /// .ics addresses, e.g. a calendar's secret iCal link (fetched with ETag).
    pub urls: Vec<String>,
    /// Your address in the calendar, so events you declined do not count.
    pub user_email: String,
    pub include_all_day: bool,
    pub refresh_minutes: u32,
}

impl Default for CalendarConfig {
    fn default() -> Self {
        CalendarConfig {
            enabled: false,
            paths: Vec::new(),
            urls: Vec::new(),
            user_email: String::new(),
            include_all_day: false,
            refresh_minutes: 15,
        }
    }
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            enabled: false,
            idle_threshold_minutes: 30,
            sleep_start: "23:00".to_owned(),
            sleep_end: "07:00".to_owned(),
            min_window_minutes: 15,
            sleep_enabled: true,
            idle_enabled: true,
            poll_seconds: 10,
            calendar: CalendarConfig::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct SessionConfig {
    /// Seconds of inactivity after which a conversation counts as finished.
    pub idle_timeout: u64,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig { idle_timeout: 300 }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct RecordsConfig {
    /// Days to keep conversation records; 0 keeps them forever.
    pub retention_days: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::ClawType;

    #[test]
    fn responses_api_follows_the_provider_unless_set() {
        let mut config = Config::default();
        assert!(!config.llm.upstream_has_responses(), "custom translates");
        config.llm.provider = LlmProvider::Openai;
        assert!(config.llm.upstream_has_responses());
        config.llm.responses_api = ResponsesApi::Translate;
        assert!(!config.llm.upstream_has_responses());
        config.llm.provider = LlmProvider::Kimi;
        config.llm.responses_api = ResponsesApi::Native;
        assert!(config.llm.upstream_has_responses());
    }

    #[test]
    fn served_model_falls_back_when_empty() {
        let mut config = Config::default();
        assert_eq!(config.served_model(), "metaclaw-model");
        config.llm.model_id = "moonshotai/Kimi-K2.5".into();
        assert_eq!(config.served_model(), "moonshotai/Kimi-K2.5");
    }

    #[test]
    fn skills_dir_resolution() {
        let home = Home::at("/data/mc");
        let user = Some(Path::new("/home/u"));
        let mut config = Config::default();
        assert_eq!(
            config.skills_dir_with(&home, user),
            PathBuf::from("/data/mc/skills")
        );
        config.skills.dir = "~/my-skills".into();
        assert_eq!(
            config.skills_dir_with(&home, user),
            PathBuf::from("/home/u/my-skills")
        );
        config.skills.dir = "/abs/skills".into();
        assert_eq!(
            config.skills_dir_with(&home, user),
            PathBuf::from("/abs/skills")
        );
        config.skills.dir = "rel".into();
        assert_eq!(
            config.skills_dir_with(&home, user),
            PathBuf::from("/data/mc/rel")
        );
        config.skills.dir = String::new();
        assert_eq!(
            config.skills_dir_with(&home, user),
            PathBuf::from("/data/mc/skills")
        );
    }

    #[test]
    fn defaults_match_documented_values() {
        let c = Config::default();
        assert_eq!(c.mode, Mode::SkillsOnly);
        assert_eq!(c.proxy.host, "127.0.0.1");
        assert_eq!(c.proxy.port, 30000);
        assert_eq!(c.proxy.max_body_bytes, 33_554_432);
        assert_eq!(c.llm.timeout_seconds, 600);
        assert_eq!(c.skills.retrieval_mode, RetrievalMode::Bm25);
        assert_eq!((c.skills.top_k, c.skills.task_specific_top_k), (6, 10));
        assert_eq!(c.rl.prm_url, "https://api.openai.com/v1");
        assert_eq!(c.rl.prm_model, "gpt-5.2");
        assert_eq!((c.rl.lora_rank, c.rl.batch_size), (32, 4));
        assert_eq!(c.opd.kl_penalty_coef, 1.0);
        assert_eq!(
            (
                c.scheduler.sleep_start.as_str(),
                c.scheduler.sleep_end.as_str()
            ),
            ("23:00", "07:00")
        );
        assert_eq!(c.session.idle_timeout, 300);
        assert_eq!(c.records.retention_days, 0);
        assert_eq!(c.claw_type.single(), Some(ClawType::Openclaw));
        assert!(c.configure_openclaw);
    }
}
