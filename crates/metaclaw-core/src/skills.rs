//! Skills as the running app uses them: the live library, per-skill switches from the
//! database, retrieval (with the embeddings endpoint when configured), and the hook that
//! injects the result into main turns. The CLI and the dashboard call the same functions.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use metaclaw_config::{AgentConfig, Config, Home, Placement, RetrievalMode};
use metaclaw_domain::TurnType;
use metaclaw_proxy::{HookFuture, PreparedRequest, TurnContext, TurnHook};
use metaclaw_skills::{
    Embedder, EmbeddingCache, Library, Mode, Retrieval, RetrievalConfig, SkillBook, SkillSource,
    SkillState, Sources, States,
};
use metaclaw_store::{ControlCause, StateChange, Store};
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{CoreError, SkillError};
use crate::evidence::DuplicatePair;

/// Embedding vectors in memory, backed by the database.
struct LayeredCache {
    memory: Mutex<HashMap<(String, String), Vec<f32>>>,
    store: Arc<Store>,
}

impl EmbeddingCache for LayeredCache {
    fn get(&self, model: &str, hash: &str) -> Option<Vec<f32>> {
        let key = (model.to_owned(), hash.to_owned());
        if let Some(v) = self.memory.lock().ok()?.get(&key) {
            return Some(v.clone());
        }
        let v = self.store.skill_embedding(model, hash).ok().flatten()?;
        self.memory.lock().ok()?.insert(key, v.clone());
        Some(v)
    }

    fn put(&self, model: &str, hash: &str, vector: &[f32]) {
        if let Ok(mut m) = self.memory.lock() {
            m.insert((model.to_owned(), hash.to_owned()), vector.to_vec());
        }
        self.store.put_skill_embedding(model, hash, vector);
    }
}

/// One skill as listed by the CLI and the dashboard.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SkillInfo {
    pub name: String,
    pub description: String,
    pub category: String,
    pub version: String,
    pub source: SkillSource,
    pub path: String,
    pub enabled: bool,
    pub pinned: bool,
    /// Turns it was injected into, and the thumbs those turns got.
    pub injected: u64,
    pub thumbs_up: u64,
    pub thumbs_down: u64,
    /// The agent whose own folder holds it; `None` for shared and bundled skills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

pub struct SkillService {
    book: Arc<SkillBook>,
    /// `skills.enabled`: when off, nothing is injected or distilled and the skill operations
    /// answer "skills are off"; the library stays loaded so turning it on is instant.
    enabled: AtomicBool,
    home: Home,
    store: Arc<Store>,
    /// Retrieval settings and the embeddings client: swapped as a whole by `reconfigure`.
    retrieval: ArcSwap<Retriever>,
    cache: LayeredCache,
    states: ArcSwap<States>,
    /// Bumped by every approved change to the library; turns record the one they ran under.
    generation: AtomicU64,
    /// Near-duplicate pairs of a library, computed once per library (libraries are
    /// immutable and replaced whole on reload): tokenising every skill costs more than
    /// the rest of the Skill health view.
    duplicates: Mutex<Option<DuplicatesOf>>,
    /// `agents:` as applied: each agent's switches and its own folder, layered over the
    /// shared library.
    agents: Mutex<BTreeMap<String, AgentLayer>>,
    /// Whether the folders are watched (agent folders added later are watched too).
    watching: AtomicBool,
}

/// One agent's own skills: a book over its folder alone, and the library it sees (its own
/// skills first, so they win over shared ones of the same name), rebuilt only when either
/// side was reloaded.
struct AgentLayer {
    settings: AgentConfig,
    dir: PathBuf,
    book: Arc<SkillBook>,
    merged: Option<Merged>,
}

/// A merged library and the two libraries it was built from.
struct Merged {
    own: Arc<Library>,
    shared: Arc<Library>,
    library: Arc<Library>,
}

/// A library and its near-duplicate pairs.
type DuplicatesOf = (Arc<Library>, Arc<Vec<DuplicatePair>>);

/// How skills are picked, as one value the live settings replace.
struct Retriever {
    config: RetrievalConfig,
    embedder: Option<Embedder>,
    /// `skills.holdout_share`: withhold retrieved skills in this share of conversations.
    holdout_share: f64,
    /// Where the block goes (`skills.placement`).
    placement: Placement,
    /// The settings it was built from, to tell whether a change concerns it.
    source: Value,
}

impl Retriever {
    fn new(config: &Config) -> Result<Retriever, CoreError> {
        let retrieval = retrieval_config(config);
        let embedder = if retrieval.mode == Mode::Embedding {
            let e = &config.skills.embedding;
            let base = if e.api_base.is_empty() {
                &config.llm.api_base
            } else {
                &e.api_base
            };
            let key = if e.api_key.is_empty() {
                &config.llm.api_key
            } else {
                &e.api_key
            };
            Some(
                Embedder::new(base, key, &e.model, Duration::from_millis(e.timeout_ms))
                    .map_err(|e| CoreError::Http(e.to_string()))?,
            )
        } else {
            None
        };
        Ok(Retriever {
            config: retrieval,
            embedder,
            holdout_share: config.skills.holdout_share.clamp(0.0, 0.5),
            placement: config.skills.placement,
            source: Retriever::source(config),
        })
    }

    fn source(config: &Config) -> Value {
        json!({
            "skills": config.skills,
            "llm_base": config.llm.api_base,
            "llm_key": config.llm.api_key,
        })
    }
}

/// Where the library reads skills from, per the settings.
fn sources(config: &Config, home: &Home) -> Sources {
    Sources {
        user_dir: Some(config.skills_dir(home)),
        bundled: config.skills.include_bundled,
    }
}

fn retrieval_config(config: &Config) -> RetrievalConfig {
    let s = &config.skills;
    RetrievalConfig {
        mode: match s.retrieval_mode {
            RetrievalMode::Bm25 => Mode::Bm25,
            RetrievalMode::Template => Mode::Template,
            RetrievalMode::Embedding => Mode::Embedding,
        },
        top_k: s.top_k as usize,
        task_specific_top_k: s.task_specific_top_k as usize,
        min_score: s.min_score as f32,
        relative_threshold: s.relative_threshold as f32,
        min_similarity: s.min_similarity as f32,
        token_budget: s.token_budget as usize,
        ..RetrievalConfig::default()
    }
}

impl SkillService {
    pub fn new(
        config: &Config,
        home: &Home,
        store: Arc<Store>,
    ) -> Result<Arc<SkillService>, CoreError> {
        let retrieval = Retriever::new(config)?;
        let service = SkillService {
            book: SkillBook::load(sources(config, home)),
            enabled: AtomicBool::new(config.skills.enabled),
            home: home.clone(),
            cache: LayeredCache {
                memory: Mutex::default(),
                store: store.clone(),
            },
            store: store.clone(),
            retrieval: ArcSwap::from_pointee(retrieval),
            states: ArcSwap::from_pointee(States::new()),
            generation: AtomicU64::new(store.skill_generation().unwrap_or(0)),
            duplicates: Mutex::default(),
            agents: Mutex::default(),
            watching: AtomicBool::new(false),
        };
        service.set_agents(config)?;
        service.refresh_states();
        Ok(Arc::new(service))
    }

    /// Apply changed skill settings to the running service: on/off, the folder and the
    /// bundled bank (the library is rebuilt and the watcher moves), and retrieval (mode,
    /// top-k, thresholds, budget, embeddings endpoint). Requests in flight finish with the
    /// library and settings they started with.
    pub fn reconfigure(&self, config: &Config) -> Result<(), CoreError> {
        let enabled = config.skills.enabled;
        if self.enabled.swap(enabled, Ordering::Relaxed) != enabled {
            tracing::info!(enabled, "skills switched");
        }
        if self.book.set_sources(sources(config, &self.home))? {
            tracing::info!(dir = %config.skills_dir(&self.home).display(), "skill sources applied");
        }
        self.set_agents(config)?;
        if self.retrieval.load().source == Retriever::source(config) {
            return Ok(());
        }
        self.retrieval.store(Arc::new(Retriever::new(config)?));
        tracing::info!("skill retrieval settings applied");
        Ok(())
    }

    /// Apply `agents:`: switches at once; a new or moved folder gets a book of its own.
    fn set_agents(&self, config: &Config) -> Result<(), CoreError> {
        let mut layers = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        layers.retain(|name, _| config.agents.contains_key(name));
        for (name, settings) in &config.agents {
            let dir = settings.skills_dir(name, &self.home);
            if let Some(layer) = layers.get_mut(name)
                && layer.dir == dir
            {
                layer.settings = settings.clone();
                continue;
            }
            let book = SkillBook::load(Sources {
                user_dir: Some(dir.clone()),
                bundled: false,
            });
            if self.watching.load(Ordering::Relaxed) {
                book.start_watching()?;
            }
            tracing::info!(agent = %name, dir = %dir.display(), "agent skills folder");
            layers.insert(
                name.clone(),
                AgentLayer {
                    settings: settings.clone(),
                    dir,
                    book,
                    merged: None,
                },
            );
        }
        Ok(())
    }

    /// An agent's settings as applied (the defaults for an agent not under `agents:`).
    pub fn agent_settings(&self, agent: &str) -> AgentConfig {
        let layers = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        layers
            .get(agent)
            .map(|l| l.settings.clone())
            .unwrap_or_default()
    }

    /// An agent's own skills folder, when it is under `agents:`.
    pub fn agent_dir(&self, agent: &str) -> Option<PathBuf> {
        let layers = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        layers.get(agent).map(|l| l.dir.clone())
    }

    /// The folder a skill of `agent` is written to: the agent's own, or the shared one.
    pub fn dir_for(&self, agent: Option<&str>) -> Option<PathBuf> {
        match agent {
            Some(a) => self.agent_dir(a),
            None => self.user_dir(),
        }
    }

    /// The library `agent`'s turns see: its own skills over the shared library.
    pub fn library_for(&self, agent: &str) -> Arc<Library> {
        let shared = self.library();
        let mut layers = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        let Some(layer) = layers.get_mut(agent) else {
            return shared;
        };
        let own = layer.book.library();
        if own.is_empty() {
            return shared;
        }
        if let Some(m) = &layer.merged
            && Arc::ptr_eq(&m.own, &own)
            && Arc::ptr_eq(&m.shared, &shared)
        {
            return m.library.clone();
        }
        // `from_skills` keeps the first of two skills with one name: the agent's.
        let skills = own
            .skills()
            .iter()
            .chain(shared.skills())
            .map(|s| (**s).clone())
            .collect();
        let problems = own
            .problems()
            .iter()
            .chain(shared.problems())
            .cloned()
            .collect();
        let library = Arc::new(Library::from_skills(skills, problems));
        layer.merged = Some(Merged {
            own,
            shared,
            library: library.clone(),
        });
        library
    }

    /// `skills.enabled` as the running core applies it.
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    pub(crate) fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn library(&self) -> Arc<Library> {
        self.book.library()
    }

    /// Near-duplicate pairs of the library in effect, enabled or not.
    pub fn duplicates(&self) -> Arc<Vec<DuplicatePair>> {
        let library = self.library();
        let mut cache = self.duplicates.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((of, pairs)) = cache.as_ref()
            && Arc::ptr_eq(of, &library)
        {
            return pairs.clone();
        }
        let pairs = Arc::new(crate::evidence::duplicates(&library));
        *cache = Some((library, pairs.clone()));
        pairs
    }

    /// Re-read the shared folder and every agent's own.
    pub fn reload(&self) {
        self.book.reload();
        let layers = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        for layer in layers.values() {
            layer.book.reload();
        }
    }

    /// The user's skills folder, where approved skills are written.
    pub fn user_dir(&self) -> Option<std::path::PathBuf> {
        self.book.sources().user_dir.clone()
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    pub(crate) fn set_generation(&self, generation: u64) {
        self.generation.store(generation, Ordering::Relaxed);
    }

    /// Reload automatically when the user's skills folder changes (the folder in use, also
    /// after `skills.dir` changes), until [`SkillService::stop_watching`].
    pub fn start_watching(&self) -> Result<(), CoreError> {
        self.watching.store(true, Ordering::Relaxed);
        self.book.start_watching()?;
        let layers = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        for layer in layers.values() {
            layer.book.start_watching()?;
        }
        Ok(())
    }

    pub fn stop_watching(&self) {
        self.watching.store(false, Ordering::Relaxed);
        self.book.stop_watching();
        let layers = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        for layer in layers.values() {
            layer.book.stop_watching();
        }
    }

    /// Re-read the switches from the database (another process may have changed them).
    pub fn refresh_states(&self) {
        match self.store.skill_states() {
            Ok(rows) => {
                let states: States = rows
                    .into_iter()
                    .map(|(name, s)| {
                        (
                            name,
                            SkillState {
                                enabled: s.enabled,
                                pinned: s.pinned,
                            },
                        )
                    })
                    .collect();
                self.states.store(Arc::new(states));
            }
            Err(e) => tracing::warn!("could not read skill switches: {e}"),
        }
        // Another process (the CLI) may have approved a change.
        match self.store.skill_generation() {
            Ok(g) => {
                self.generation.fetch_max(g, Ordering::Relaxed);
            }
            Err(e) => tracing::warn!("could not read the skill generation: {e}"),
        }
    }

    pub fn list(&self) -> Vec<SkillInfo> {
        self.list_in(&self.library(), None)
    }

    /// The skills in effect for `agent` (its own and the shared ones), marked by folder.
    pub fn list_for(&self, agent: &str) -> Vec<SkillInfo> {
        let dir = self.agent_dir(agent);
        let library = self.library_for(agent);
        self.list_in(&library, dir.as_deref().map(|d| (agent, d)))
    }

    fn list_in(&self, library: &Library, own: Option<(&str, &Path)>) -> Vec<SkillInfo> {
        let states = self.states.load();
        let stats = self.store.skill_stats().unwrap_or_else(|e| {
            tracing::warn!("could not read skill stats: {e}");
            HashMap::new()
        });
        library
            .skills()
            .iter()
            .map(|s| {
                let st = states.get(&s.name).copied().unwrap_or_default();
                let agent = own
                    .filter(|(_, dir)| s.path.starts_with(dir))
                    .map(|(name, _)| name.to_owned());
                SkillInfo {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    category: s.category.clone(),
                    version: s.version(),
                    source: s.source,
                    path: s.path.display().to_string(),
                    enabled: st.enabled,
                    pinned: st.pinned,
                    injected: stats.get(&s.name).map_or(0, |x| x.injected),
                    thumbs_up: stats.get(&s.name).map_or(0, |x| x.thumbs_up),
                    thumbs_down: stats.get(&s.name).map_or(0, |x| x.thumbs_down),
                    agent,
                }
            })
            .collect()
    }

    /// Enable/disable or pin/unpin a skill of the library.
    pub fn set_state(
        &self,
        name: &str,
        enabled: Option<bool>,
        pinned: Option<bool>,
    ) -> Result<(), SkillError> {
        if self.library().get(name).is_none() {
            return Err(SkillError::NotFound(name.to_owned()));
        }
        self.store.set_skill_state(StateChange {
            name: name.to_owned(),
            enabled,
            pinned,
        })?;
        self.refresh_states();
        Ok(())
    }

    /// Withholds the retrieved skills `session_id` holds out (`skills.holdout_share`) and
    /// names the skills this turn is a control for: those held out and the first
    /// [`RUNNERS_UP`] usable candidates below the cut. Pinned and always-on skills are never
    /// held out (the user asked for them).
    pub fn hold_out(
        &self,
        session_id: &str,
        retrieval: &mut Retrieval,
    ) -> Vec<(String, ControlCause)> {
        self.hold_out_in(&self.library(), session_id, retrieval)
    }

    /// [`SkillService::hold_out`] for a retrieval from `library` (an agent's).
    pub fn hold_out_in(
        &self,
        library: &Library,
        session_id: &str,
        retrieval: &mut Retrieval,
    ) -> Vec<(String, ControlCause)> {
        let share = self.retrieval.load().holdout_share;
        let states = self.states.load();
        let state = |name: &str| states.get(name).copied().unwrap_or_default();
        let mut controls = Vec::new();
        for c in retrieval.candidates.iter_mut().filter(|c| c.injected) {
            let forced = state(&c.name).pinned || library.get(&c.name).is_some_and(|s| s.always());
            if !forced && crate::evidence::held_out(session_id, &c.name, share) {
                c.injected = false;
                c.reason = "held out to measure it (skills.holdout_share)".into();
                controls.push((c.name.clone(), ControlCause::Holdout));
            }
        }
        let runners_up: Vec<(String, ControlCause)> = retrieval
            .candidates
            .iter()
            .filter(|c| !c.injected && c.score > 0.0)
            .filter(|c| !controls.iter().any(|(n, _)| *n == c.name))
            .filter(|c| state(&c.name).enabled)
            .filter(|c| {
                library
                    .get(&c.name)
                    .is_some_and(|s| !s.auto_invocation_disabled())
            })
            .take(RUNNERS_UP)
            .map(|c| (c.name.clone(), ControlCause::BelowCut))
            .collect();
        controls.extend(runners_up);
        controls
    }

    /// Where injected skills go (`skills.placement`, applied live).
    pub fn placement(&self) -> Placement {
        self.retrieval.load().placement
    }

    /// What would be injected for `query`, with every candidate's score and reason.
    pub async fn retrieve(&self, query: &str) -> Retrieval {
        self.retrieve_in(&self.library(), query).await
    }

    /// What would be injected for `query` from `library` (an agent's, see
    /// [`SkillService::library_for`]).
    pub async fn retrieve_in(&self, library: &Library, query: &str) -> Retrieval {
        let retriever = self.retrieval.load_full();
        let dense = match &retriever.embedder {
            Some(e) if !query.trim().is_empty() => {
                match e.rank(library, &self.cache, query).await {
                    Ok(ranking) => Some(ranking),
                    Err(err) => {
                        tracing::warn!("embedding retrieval failed, using BM25 alone: {err}");
                        None
                    }
                }
            }
            _ => None,
        };
        metaclaw_skills::retrieve(
            library,
            &self.states.load(),
            query,
            &retriever.config,
            dense.as_deref(),
        )
    }
}

/// Candidates ranked just below the cut that count as a turn's controls: the nearest
/// misses, which are the comparable turns for those skills.
pub const RUNNERS_UP: usize = 3;

/// Injects the retrieved skills into main turns.
pub(crate) struct SkillInjector {
    pub service: Arc<SkillService>,
    /// Sessions of a skills-off evaluation arm.
    pub skills_off: Arc<crate::rollout::SkillsOff>,
}

impl TurnHook for SkillInjector {
    fn before_forward<'a>(
        &'a self,
        ctx: &'a TurnContext,
        request: &'a mut PreparedRequest,
    ) -> HookFuture<'a> {
        Box::pin(async move {
            if !self.service.is_enabled() {
                return;
            }
            request.skill_generation = Some(self.service.generation());
            if ctx.turn_type != TurnType::Main
                || self.skills_off.contains(&ctx.session_id)
                || !self.service.agent_settings(&ctx.agent).skills
            {
                return;
            }
            let query = metaclaw_skills::query::from_body(&request.body);
            let library = self.service.library_for(&ctx.agent);
            let mut retrieval = self.service.retrieve_in(&library, &query).await;
            let controls = self
                .service
                .hold_out_in(&library, &ctx.session_id, &mut retrieval);
            if let Some(block) = metaclaw_skills::render(&library, &retrieval) {
                request.insert_skills(&block, self.service.placement());
            }
            request.injected.extend(retrieval.injected().map(|c| {
                json!({"kind": "skill", "name": c.name, "version": c.version, "score": c.score, "reason": c.reason})
            }));
            // Not injected, but recorded: these turns are the skills' comparison group.
            request.injected.extend(controls.into_iter().map(|(name, cause)| {
                json!({"kind": "skill_control", "name": name, "cause": cause.as_str()})
            }));
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thresholds are written twice: in config.yaml's defaults, which the product runs
    /// with, and in `RetrievalConfig`'s, which skills-eval and the quality tests measure. A
    /// figure measured on one must hold for the other.
    #[test]
    fn config_defaults_are_the_retrieval_defaults_the_evaluation_measures() {
        assert_eq!(
            retrieval_config(&Config::default()),
            RetrievalConfig::default()
        );
    }
}
