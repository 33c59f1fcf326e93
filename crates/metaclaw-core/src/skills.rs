//! Skills as the running app uses them: the live library, per-skill switches from the
//! database, retrieval (with the embeddings endpoint when configured), and the hook that
//! injects the result into main turns. The CLI and the dashboard call the same functions.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use metaclaw_config::{Config, Home, Placement, RetrievalMode};
use metaclaw_domain::TurnType;
use metaclaw_proxy::{HookFuture, PreparedRequest, TurnContext, TurnHook};
use metaclaw_skills::{
    Embedder, EmbeddingCache, Library, Mode, Retrieval, RetrievalConfig, SkillBook, SkillSource,
    SkillState, Sources, States, WatchGuard,
};
use metaclaw_store::{StateChange, Store};
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{CoreError, SkillError};

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
}

pub struct SkillService {
    book: Arc<SkillBook>,
    store: Arc<Store>,
    /// Retrieval settings and the embeddings client: swapped as a whole by `reconfigure`.
    retrieval: ArcSwap<Retriever>,
    cache: LayeredCache,
    states: ArcSwap<States>,
    /// Bumped by every approved change to the library; turns record the one they ran under.
    generation: AtomicU64,
}

/// How skills are picked, as one value the live settings replace.
struct Retriever {
    config: RetrievalConfig,
    embedder: Option<Embedder>,
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
    }
}

impl SkillService {
    pub fn new(
        config: &Config,
        home: &Home,
        store: Arc<Store>,
    ) -> Result<Arc<SkillService>, CoreError> {
        let sources = Sources {
            user_dir: Some(config.skills_dir(home)),
            bundled: config.skills.include_bundled,
        };
        let retrieval = Retriever::new(config)?;
        let service = SkillService {
            book: SkillBook::load(sources),
            cache: LayeredCache {
                memory: Mutex::default(),
                store: store.clone(),
            },
            store: store.clone(),
            retrieval: ArcSwap::from_pointee(retrieval),
            states: ArcSwap::from_pointee(States::new()),
            generation: AtomicU64::new(store.skill_generation().unwrap_or(0)),
        };
        service.refresh_states();
        Ok(Arc::new(service))
    }

    /// Apply changed retrieval settings (mode, top-k, thresholds, budget, embeddings
    /// endpoint) to the running service; requests in flight finish with the old ones.
    pub fn reconfigure(&self, config: &Config) -> Result<(), CoreError> {
        if self.retrieval.load().source == Retriever::source(config) {
            return Ok(());
        }
        self.retrieval.store(Arc::new(Retriever::new(config)?));
        tracing::info!("skill retrieval settings applied");
        Ok(())
    }

    pub fn library(&self) -> Arc<Library> {
        self.book.library()
    }

    pub fn reload(&self) {
        self.book.reload();
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

    /// Reload automatically when the user's skills folder changes.
    pub fn watch(&self) -> Result<Option<WatchGuard>, CoreError> {
        Ok(self.book.watch()?)
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
        let states = self.states.load();
        let stats = self.store.skill_stats().unwrap_or_else(|e| {
            tracing::warn!("could not read skill stats: {e}");
            HashMap::new()
        });
        self.library()
            .skills()
            .iter()
            .map(|s| {
                let st = states.get(&s.name).copied().unwrap_or_default();
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

    /// Where injected skills go (`skills.placement`, applied live).
    pub fn placement(&self) -> Placement {
        self.retrieval.load().placement
    }

    /// What would be injected for `query`, with every candidate's score and reason.
    pub async fn retrieve(&self, query: &str) -> Retrieval {
        let library = self.library();
        let retriever = self.retrieval.load_full();
        let dense = match &retriever.embedder {
            Some(e) if !query.trim().is_empty() => match e.rank(&library, &self.cache, query).await
            {
                Ok(ranking) => Some(ranking),
                Err(err) => {
                    tracing::warn!("embedding retrieval failed, using BM25 alone: {err}");
                    None
                }
            },
            _ => None,
        };
        metaclaw_skills::retrieve(
            &library,
            &self.states.load(),
            query,
            &retriever.config,
            dense.as_deref(),
        )
    }
}

/// Injects the retrieved skills into main turns.
pub(crate) struct SkillInjector {
    pub service: Arc<SkillService>,
}

impl TurnHook for SkillInjector {
    fn before_forward<'a>(
        &'a self,
        ctx: &'a TurnContext,
        request: &'a mut PreparedRequest,
    ) -> HookFuture<'a> {
        Box::pin(async move {
            request.skill_generation = Some(self.service.generation());
            if ctx.turn_type != TurnType::Main {
                return;
            }
            let query = metaclaw_skills::query::from_body(&request.body);
            let retrieval = self.service.retrieve(&query).await;
            let library = self.service.library();
            if let Some(block) = metaclaw_skills::render(&library, &retrieval) {
                request.insert_skills(&block, self.service.placement());
            }
            request.injected.extend(retrieval.injected().map(|c| {
                json!({"kind": "skill", "name": c.name, "version": c.version, "score": c.score, "reason": c.reason})
            }));
        })
    }
}
