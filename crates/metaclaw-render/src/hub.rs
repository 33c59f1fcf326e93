//! Finding tokenizer files: a configured local path, or the model's HuggingFace hub repo
//! downloaded once into a cache (`<cache_dir>/<repo>/<revision>/<file>`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::RenderError;
use crate::tokenizer::Tokenizer;

pub const DEFAULT_HUB_URL: &str = "https://huggingface.co";

/// Ungated copy of the Llama 3 Instruct tokenizer that Tinker uses for every Llama-3 model.
pub const LLAMA3_TOKENIZER_REPO: &str = "thinkingmachineslabinc/meta-llama-3-instruct-tokenizer";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubConfig {
    /// Hub base URL; files live at `{base_url}/{repo}/resolve/{revision}/{file}`.
    pub base_url: String,
    /// Bearer token for gated/private repos.
    pub token: Option<String>,
    /// Revision (branch, tag or commit); `main` when unset.
    pub revision: Option<String>,
}

impl Default for HubConfig {
    fn default() -> Self {
        Self {
            base_url: DEFAULT_HUB_URL.to_owned(),
            token: None,
            revision: None,
        }
    }
}

/// Which files make up a tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerFormat {
    /// HuggingFace `tokenizer.json`.
    HfJson,
    /// Kimi: `tiktoken.model` + `tokenizer_config.json`.
    Tiktoken,
}

impl TokenizerFormat {
    pub fn files(self) -> &'static [&'static str] {
        match self {
            TokenizerFormat::HfJson => &["tokenizer.json"],
            TokenizerFormat::Tiktoken => &["tiktoken.model", "tokenizer_config.json"],
        }
    }
}

/// Where a model's tokenizer comes from on the hub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenizerSource {
    pub repo: String,
    pub format: TokenizerFormat,
}

/// Tinker model ids may carry a `:suffix` (e.g. `Qwen/Qwen3-8B:peft:1234`); the tokenizer is
/// the base model's.
pub fn strip_model_suffix(model: &str) -> &str {
    model.split(':').next().unwrap_or(model).trim()
}

impl TokenizerSource {
    /// Maps a model name to its tokenizer repo, as Tinker's cookbook does.
    pub fn for_model(model: &str) -> Self {
        let repo = strip_model_suffix(model);
        let name = repo.rsplit('/').next().unwrap_or(repo).to_ascii_lowercase();
        if name.starts_with("llama-3") || name.starts_with("meta-llama-3") {
            return Self {
                repo: LLAMA3_TOKENIZER_REPO.to_owned(),
                format: TokenizerFormat::HfJson,
            };
        }
        let format = if name.starts_with("kimi-k2") {
            TokenizerFormat::Tiktoken
        } else {
            TokenizerFormat::HfJson
        };
        Self {
            repo: repo.to_owned(),
            format,
        }
    }
}

/// How far the download of one tokenizer file has got (for a progress bar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadProgress {
    /// The file's name in the repo (`tokenizer.json`).
    pub file: String,
    pub done_bytes: u64,
    /// From `Content-Length`, when the hub sends one.
    pub total_bytes: Option<u64>,
}

/// Called as a download advances: at its start, then at most every [`PROGRESS_STEP`] bytes,
/// and at its end.
pub type OnProgress<'a> = &'a (dyn Fn(DownloadProgress) + Send + Sync);

/// Bytes between two progress reports (a tokenizer.json is 5–15 MB).
pub const PROGRESS_STEP: u64 = 256 * 1024;

/// Loads the tokenizer for `model`: from `local_path` when given (a `tokenizer.json`, a
/// `tiktoken.model` next to its `tokenizer_config.json`, or a directory holding either),
/// otherwise from the hub through the cache. Cached files are used without any network access.
pub async fn load_tokenizer(
    model: &str,
    local_path: Option<&Path>,
    cache_dir: &Path,
    hub: &HubConfig,
) -> Result<Arc<Tokenizer>, RenderError> {
    load_tokenizer_reporting(model, local_path, cache_dir, hub, &|_| {}).await
}

/// [`load_tokenizer`], telling `progress` how each file that has to be downloaded advances.
pub async fn load_tokenizer_reporting(
    model: &str,
    local_path: Option<&Path>,
    cache_dir: &Path,
    hub: &HubConfig,
    progress: OnProgress<'_>,
) -> Result<Arc<Tokenizer>, RenderError> {
    let (files, format, name) = match local_path {
        Some(path) => {
            let (files, format) = local_files(path)?;
            (files, format, path.display().to_string())
        }
        None => {
            let source = TokenizerSource::for_model(model);
            let files = fetch_files(&source, cache_dir, hub, progress).await?;
            (files, source.format, source.repo)
        }
    };
    // Parsing a multi-megabyte tokenizer.json is CPU work; keep it off the async workers.
    let tok = tokio::task::spawn_blocking(move || match format {
        TokenizerFormat::HfJson => Tokenizer::from_file(&files[0]),
        TokenizerFormat::Tiktoken => Tokenizer::from_tiktoken(&files[0], &files[1]),
    })
    .await
    .map_err(|e| RenderError::Tokenizer(format!("tokenizer loading task failed: {e}")))??;
    tracing::info!(tokenizer = %name, vocab = tok.vocab_size(), "tokenizer loaded");
    Ok(Arc::new(tok.with_name(name)))
}

fn local_files(path: &Path) -> Result<(Vec<PathBuf>, TokenizerFormat), RenderError> {
    let dir_or_parent = if path.is_dir() {
        path.to_path_buf()
    } else {
        let is_tiktoken = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(".model"));
        if !is_tiktoken {
            return Ok((vec![path.to_path_buf()], TokenizerFormat::HfJson));
        }
        let config = path.with_file_name("tokenizer_config.json");
        return Ok((vec![path.to_path_buf(), config], TokenizerFormat::Tiktoken));
    };
    let json = dir_or_parent.join("tokenizer.json");
    if json.is_file() {
        return Ok((vec![json], TokenizerFormat::HfJson));
    }
    let model = dir_or_parent.join("tiktoken.model");
    if model.is_file() {
        let config = dir_or_parent.join("tokenizer_config.json");
        return Ok((vec![model, config], TokenizerFormat::Tiktoken));
    }
    Err(RenderError::TokenizerMissing(json))
}

/// Path components must not climb out of the cache.
fn safe_component(s: &str) -> bool {
    !s.is_empty()
        && s.split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\\'))
}

async fn fetch_files(
    source: &TokenizerSource,
    cache_dir: &Path,
    hub: &HubConfig,
    progress: OnProgress<'_>,
) -> Result<Vec<PathBuf>, RenderError> {
    let revision = hub.revision.as_deref().unwrap_or("main");
    if !safe_component(&source.repo) || !safe_component(revision) {
        return Err(RenderError::Tokenizer(format!(
            "invalid hub repo or revision: {}@{revision}",
            source.repo
        )));
    }
    let dir = cache_dir.join(&source.repo).join(revision);
    let mut paths = Vec::new();
    let mut client: Option<reqwest::Client> = None;
    for file in source.format.files() {
        let path = dir.join(file);
        if !tokio::fs::try_exists(&path).await.unwrap_or(false) {
            let url = format!(
                "{}/{}/resolve/{revision}/{file}",
                hub.base_url.trim_end_matches('/'),
                source.repo
            );
            // A stalled hub must not hang startup forever; files are at most tens of MB.
            let client = client.get_or_insert_with(|| {
                metaclaw_llm::http_client(&metaclaw_llm::HttpOptions::with_timeout(
                    std::time::Duration::from_secs(600),
                ))
                .unwrap_or_default()
            });
            download(client, &url, hub.token.as_deref(), &path, file, progress).await?;
        }
        paths.push(path);
    }
    Ok(paths)
}

/// Downloads to a temporary file next to `dest` and renames it into place, so a crash or a
/// concurrent loader never sees a half-written tokenizer. The body is written as it arrives.
async fn download(
    client: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    dest: &Path,
    file: &str,
    progress: OnProgress<'_>,
) -> Result<(), RenderError> {
    use tokio::io::AsyncWriteExt;

    tracing::info!(%url, "downloading tokenizer file");
    let failed = |reason: String| RenderError::DownloadFailed {
        url: url.to_owned(),
        reason,
    };
    let mut request = client.get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| failed(e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(RenderError::DownloadStatus {
            url: url.to_owned(),
            status: status.as_u16(),
        });
    }
    let total_bytes = response.content_length();
    let report = |done_bytes: u64| {
        progress(DownloadProgress {
            file: file.to_owned(),
            done_bytes,
            total_bytes,
        })
    };
    report(0);

    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RenderError::Io { path, source }
    };
    let dir = dest.parent().unwrap_or(Path::new("."));
    tokio::fs::create_dir_all(dir).await.map_err(io(dir))?;
    // Unique per process and call, so concurrent loaders never share a temporary file.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.{}.{}.part",
        dest.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let written = async {
        let mut out = tokio::fs::File::create(&tmp).await.map_err(io(&tmp))?;
        let mut response = response;
        let (mut done, mut reported) = (0u64, 0u64);
        while let Some(chunk) = response.chunk().await.map_err(|e| failed(e.to_string()))? {
            out.write_all(&chunk).await.map_err(io(&tmp))?;
            done += chunk.len() as u64;
            if done - reported >= PROGRESS_STEP {
                reported = done;
                report(done);
            }
        }
        out.flush().await.map_err(io(&tmp))?;
        if let Some(total) = total_bytes
            && done != total
        {
            return Err(failed(format!(
                "the download ended after {done} of {total} bytes"
            )));
        }
        if reported != done {
            report(done);
        }
        Ok(())
    }
    .await;
    if let Err(e) = written {
        let _ = tokio::fs::remove_file(&tmp).await;
        return Err(e);
    }
    if let Err(e) = tokio::fs::rename(&tmp, dest).await {
        let _ = tokio::fs::remove_file(&tmp).await;
        return Err(io(dest)(e));
    }
    Ok(())
}
