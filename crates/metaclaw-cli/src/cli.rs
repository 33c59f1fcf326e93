use clap::{Args, Parser, Subcommand, ValueEnum};

/// MetaClaw: a local proxy that makes your AI agent learn from its own conversations.
#[derive(Debug, Parser)]
#[command(name = "metaclaw", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create or update ~/.metaclaw/config.yaml (interactive, or with flags).
    Setup(SetupArgs),
    /// Start the proxy (detached unless --foreground).
    Start(StartArgs),
    /// Stop the running daemon.
    Stop {
        /// Also restore the agent's own configuration (undo the wiring).
        #[arg(long)]
        unwire: bool,
    },
    /// Stop, unwire the agent and (with --purge) delete ~/.metaclaw.
    Uninstall {
        /// Do not ask for confirmation.
        #[arg(long, short)]
        yes: bool,
        /// Also delete the home directory: config, database, logs and your skills.
        #[arg(long)]
        purge: bool,
    },
    /// Show whether the daemon runs, its mode, uptime, upstream and today's turns.
    Status(StatusArgs),
    /// `config show`, `config KEY`, or `config KEY VALUE`.
    Config(ConfigArgs),
    /// Browse, search, switch and lint skills.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Training windows: `scheduler status` or `scheduler next-window`.
    #[command(subcommand)]
    Scheduler(SchedulerCommand),
    /// Run one RL training step now on the rewarded samples waiting (rl/auto mode).
    TrainStep {
        /// Seconds to wait for the step (the first step on a cold server compiles).
        #[arg(long, default_value_t = 600)]
        timeout: u64,
    },
    /// Run a task folder's split as episodes through the proxy and train on them.
    Rollout(RolloutArgs),
    /// Evaluate a task split (never trained on), comparing arms.
    Eval(EvalArgs),
    /// Run MetaClaw-Bench from a checkout (days serially through the proxy) and print the
    /// paper's table per arm.
    Bench(BenchArgs),
    /// List the trained adapter versions: which serves, their gate figures, why.
    Adapters,
    /// Serve an earlier adapter version again.
    Rollback {
        /// The version (training step), as `metaclaw adapters` lists it.
        step: u64,
    },
    /// Thumbs up or down on a turn (a signal for skill evolution).
    Feedback {
        turn_id: String,
        #[arg(value_parser = ["up", "down"])]
        rating: String,
        #[arg(long)]
        note: Option<String>,
    },
    /// Open the dashboard in a browser (a one-time login link).
    Dashboard {
        /// Only print the login URL.
        #[arg(long)]
        print_url: bool,
    },
    /// Developer tools.
    #[command(subcommand, hide = true)]
    Dev(DevCommand),
    /// Print the version.
    Version,
}

#[derive(Debug, Subcommand)]
pub enum SchedulerCommand {
    /// The scheduler's state, its sources and the current window.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// The next window in which training may run, with its source and times.
    NextWindow {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Fill the database with sample sessions, a proposal and training steps (UI tests, demos).
    Seed,
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List the skills in effect (yours over the bundled bank).
    List {
        #[arg(long)]
        category: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Print one skill's SKILL.md.
    Show { name: String },
    /// Show what would be injected for a request, with each candidate's score and reason.
    Search {
        query: String,
        #[arg(long)]
        json: bool,
    },
    /// Let a skill be injected again.
    Enable { name: String },
    /// Never inject a skill (SKILL.md stays as it is).
    Disable { name: String },
    /// Inject a skill on every main turn.
    Pin { name: String },
    /// Stop pinning a skill.
    Unpin { name: String },
    /// Check SKILL.md files (default: your skills folder and the bundled bank); exits non-zero on errors.
    Lint { dir: Option<std::path::PathBuf> },
    /// Copy the bundled bank into your skills folder (existing skills are kept).
    Install,
    /// Distil skills from a session now (default: the most recent session).
    Distil { session: Option<String> },
    /// Proposals waiting for review.
    Pending {
        #[arg(long)]
        json: bool,
    },
    /// Approve a proposal, optionally editing it first.
    Approve {
        id: i64,
        /// Open the proposal in $EDITOR before approving.
        #[arg(long)]
        edit: bool,
        /// Approve this file's content instead of the proposal's.
        #[arg(long, conflicts_with = "edit")]
        file: Option<std::path::PathBuf>,
    },
    /// Reject a proposal; it will not be proposed again.
    Reject {
        id: i64,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Take back an approval.
    Undo { id: i64 },
    /// Every version of a skill.
    History { name: String },
    /// Restore a version of a skill.
    Rollback { name: String, version: u64 },
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
#[value(rename_all = "snake_case")]
pub enum ModeArg {
    SkillsOnly,
    Rl,
    Auto,
}

impl ModeArg {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SkillsOnly => "skills_only",
            Self::Rl => "rl",
            Self::Auto => "auto",
        }
    }
}

#[derive(Debug, Args, Clone)]
pub struct StartArgs {
    /// Override `mode` for this run only.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Override `proxy.port` for this run only.
    #[arg(long)]
    pub port: Option<u16>,
    /// Run in this terminal instead of detaching.
    #[arg(long)]
    pub foreground: bool,
    /// Do not configure the agent (claw_type) to use the proxy.
    #[arg(long)]
    pub no_wire: bool,
    /// Log to the home's size-rotated metaclaw.log instead of stderr (what a detached
    /// daemon does).
    #[arg(long, hide = true)]
    pub log_to_file: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print machine-readable JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// `show`, or a dotted key such as `proxy.port`.
    pub key: String,
    /// New value for KEY.
    pub value: Option<String>,
}

#[derive(Debug, Args, Default)]
pub struct SetupArgs {
    /// Never prompt; take everything from flags and defaults.
    #[arg(long)]
    pub non_interactive: bool,
    /// Provider preset: kimi, qwen, openai, openrouter, anthropic, ollama, vllm, lmstudio or
    /// custom (the local servers are saved as `custom` with their URL).
    #[arg(long)]
    pub provider: Option<String>,
    #[arg(long)]
    pub api_base: Option<String>,
    #[arg(long)]
    pub api_key: Option<String>,
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    #[arg(long)]
    pub port: Option<u16>,
    /// Copy the bundled skill bank into the skills folder (asked when interactive).
    #[arg(long)]
    pub install_skills: bool,
    /// Forward your agent's own sign-in (e.g. a Claude Pro/Max subscription) for its requests
    /// (llm.auth_method: passthrough); --api-key is then MetaClaw's own key, for learning
    /// skills, the judge and status checks.
    #[arg(long)]
    pub own_sign_in: bool,
    /// The agents `metaclaw start` wires, comma-separated (openclaw, claude-code, codex,
    /// qwen-code, hermes…), or `none` (claw_type). Asked when interactive, with the agents
    /// found on this machine preselected; otherwise the stored value stays.
    #[arg(long)]
    pub agents: Option<String>,
}

#[derive(Debug, Args)]
pub struct RolloutArgs {
    /// The task folder (`<split>.jsonl` files); default openclaw_env_data_dir.
    pub dir: Option<std::path::PathBuf>,
    /// The split to train on; default openclaw_env_split (train).
    #[arg(long)]
    pub split: Option<String>,
    /// Answers sampled per task, compared with each other; default rl.group_size.
    #[arg(long)]
    pub group: Option<u32>,
    /// Parallel episodes; default openclaw_env_concurrency (4).
    #[arg(long)]
    pub concurrency: Option<u32>,
    /// Turns per episode; default openclaw_env_max_steps (15).
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// Repeat the split until this many training steps were taken.
    #[arg(long)]
    pub steps: Option<u32>,
    /// Evaluate this split before and after every step: the learning curve.
    #[arg(long)]
    pub eval: Option<String>,
    /// Offer the agent a run_command tool (confined to each episode's scratch folder).
    #[arg(long)]
    pub allow_commands: bool,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The benchmark folder of a MetaClaw checkout: benchmark/data/metaclaw-bench or
    /// benchmark/data/metaclaw-bench-small (the 12-day variant). Nothing is downloaded.
    pub dir: std::path::PathBuf,
    /// Comma-separated: baseline (skills off), skills, skills-rl (skills on, training
    /// between days; needs RL serving).
    #[arg(long, default_value = "baseline,skills,skills-rl")]
    pub arms: String,
    /// Only the first N days.
    #[arg(long)]
    pub days: Option<u32>,
    /// Requests per round, tool calls included; default openclaw_env_max_steps (15).
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// Offer the agent a run_command tool confined to the day's workspace copy (file_check
    /// rounds need it to write files).
    #[arg(long)]
    pub allow_commands: bool,
    /// The skills-rl arm trains after every N days (default 1).
    #[arg(long)]
    pub train_every: Option<u32>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The task folder; default openclaw_env_data_dir.
    pub dir: Option<std::path::PathBuf>,
    #[arg(long)]
    pub split: Option<String>,
    /// Comma-separated: current, skills-on, skills-off, base, previous, v<step>.
    #[arg(long, default_value = "current")]
    pub arms: String,
    #[arg(long)]
    pub concurrency: Option<u32>,
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}
