//! Skills: `SKILL.md` files (YAML frontmatter + Markdown), the bundled bank, retrieval
//! (BM25F over CJK bigrams, multilingual stems and trigger phrases; upstream's template
//! routing; embeddings fused by rank) and the injected block.
//!
//! Knows nothing about the proxy or the database: the core wires it into both.

mod analyzer;
mod block;
mod book;
mod bundled;
mod embedding;
mod error;
mod index;
mod library;
mod lint;
pub mod query;
mod retrieve;
mod skill;
mod template;
mod vocabulary;

pub use analyzer::{Analyzer, AnalyzerOptions, Cjk};
pub use block::{BLOCK_END, BLOCK_START, render};
pub use book::{SkillBook, WatchGuard};
pub use bundled::{files as bundled_files, install as install_bundled};
pub use embedding::{Embedder, EmbeddingCache, rank_by_similarity};
pub use error::{Result, SkillsError};
pub use index::{Hit, Index};
pub use library::{Library, Sources};
pub use lint::{Finding, KNOWN_CATEGORIES, Level, check as check_skill, lint_dir};
pub use retrieve::{
    Candidate, EVERYDAY_RULE, EverydayRule, Mode, Retrieval, RetrievalConfig, SkillState, States,
    retrieve,
};
pub use skill::{DEFAULT_CATEGORY, Skill, SkillSource, valid_name};
