//! Calendar sources: local `.ics` files/folders (watched with `notify`) and `.ics` URLs (fetched
//! with `If-None-Match`). Broken sources are listed as problems and skipped; a URL whose fetch
//! fails keeps its last good copy.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use crate::ics::{BusyFilter, MAX_ICS_BYTES, ParsedCalendar, merge_intervals, parse_ics};
use crate::settings::CalendarSettings;
use crate::types::{
    CalendarFileStatus, CalendarStatus, CalendarUrlStatus, Interval, SourceProblem,
};

/// Folder scans go at most this deep.
const MAX_DIR_DEPTH: usize = 4;
/// Per-file event warnings copied into the problem list.
const MAX_WARNINGS_PER_SOURCE: usize = 5;

/// The answer to a conditional GET.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchResponse {
    /// 304: the copy we have is current.
    NotModified,
    Body {
        bytes: Vec<u8>,
        etag: Option<String>,
    },
}

pub type FetchFuture<'a> = Pin<Box<dyn Future<Output = Result<FetchResponse, String>> + Send + 'a>>;

/// Network access for calendar URLs, injectable for tests.
pub trait CalendarFetcher: Send + Sync + 'static {
    /// GET `url`, sending `If-None-Match: <etag>` when given. `Err` carries a short reason.
    fn fetch<'a>(&'a self, url: &'a str, etag: Option<&'a str>) -> FetchFuture<'a>;
}

/// The real fetcher (reqwest, 30 s timeout, bodies capped at [`MAX_ICS_BYTES`]).
#[derive(Debug, Clone)]
pub struct HttpFetcher {
    client: Result<reqwest::Client, String>,
}

impl Default for HttpFetcher {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpFetcher {
    pub fn new() -> Self {
        let client = metaclaw_llm::http_client(&metaclaw_llm::HttpOptions::with_timeout(
            std::time::Duration::from_secs(30),
        ))
        .map_err(|e| format!("HTTP client: {e}"));
        Self { client }
    }

    async fn get(&self, url: &str, etag: Option<&str>) -> Result<FetchResponse, String> {
        let client = self.client.as_ref().map_err(Clone::clone)?;
        let url = match url
            .strip_prefix("webcal://")
            .or_else(|| url.strip_prefix("webcals://"))
        {
            Some(rest) => format!("https://{rest}"),
            None => url.to_owned(),
        };
        let mut req = client.get(&url);
        if let Some(tag) = etag {
            req = req.header(reqwest::header::IF_NONE_MATCH, tag);
        }
        let mut resp = req
            .send()
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(FetchResponse::NotModified);
        }
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        let etag = resp
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_ICS_BYTES as u64)
        {
            return Err(format!("body larger than {MAX_ICS_BYTES} bytes"));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| format!("read failed: {e}"))?
        {
            if bytes.len() + chunk.len() > MAX_ICS_BYTES {
                return Err(format!("body larger than {MAX_ICS_BYTES} bytes"));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(FetchResponse::Body { bytes, etag })
    }
}

impl CalendarFetcher for HttpFetcher {
    fn fetch<'a>(&'a self, url: &'a str, etag: Option<&'a str>) -> FetchFuture<'a> {
        Box::pin(self.get(url, etag))
    }
}

#[derive(Debug)]
struct FileEntry {
    path: PathBuf,
    calendar: Arc<ParsedCalendar>,
    loaded_at: DateTime<Utc>,
}

#[derive(Debug)]
struct UrlEntry {
    url: String,
    calendar: Option<Arc<ParsedCalendar>>,
    etag: Option<String>,
    last_attempt: Option<DateTime<Utc>>,
    last_success: Option<DateTime<Utc>>,
    not_modified: bool,
    problem: Option<SourceProblem>,
}

#[derive(Debug)]
struct BusyCache {
    generation: u64,
    tz: Tz,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    merged: Arc<Vec<Interval>>,
}

#[derive(Debug)]
struct StoreInner {
    files: Vec<FileEntry>,
    file_problems: Vec<SourceProblem>,
    urls: Vec<UrlEntry>,
    generation: u64,
    cache: Option<BusyCache>,
}

/// All calendars the scheduler knows, with their problems.
#[derive(Debug)]
pub struct CalendarStore {
    settings: CalendarSettings,
    filter: BusyFilter,
    inner: Mutex<StoreInner>,
}

impl CalendarStore {
    pub fn new(settings: CalendarSettings) -> Self {
        let filter = BusyFilter {
            user_email: settings.user_email.clone(),
            include_all_day: settings.include_all_day,
        };
        let urls = settings
            .urls
            .iter()
            .map(|u| UrlEntry {
                url: u.clone(),
                calendar: None,
                etag: None,
                last_attempt: None,
                last_success: None,
                not_modified: false,
                problem: None,
            })
            .collect();
        Self {
            settings,
            filter,
            inner: Mutex::new(StoreInner {
                files: Vec::new(),
                file_problems: Vec::new(),
                urls,
                generation: 0,
                cache: None,
            }),
        }
    }

    pub fn enabled(&self) -> bool {
        self.settings.enabled
    }

    pub fn settings(&self) -> &CalendarSettings {
        &self.settings
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StoreInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Incremented on every change of calendar data.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// (Re)read every configured path. Blocking file I/O; calendars are small.
    pub fn reload_files(&self, now: DateTime<Utc>) {
        if !self.settings.enabled {
            return;
        }
        let mut files = Vec::new();
        let mut problems = Vec::new();
        for path in &self.settings.paths {
            let mut found = Vec::new();
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => collect_ics(path, 0, &mut found, &mut problems, now),
                Ok(_) => found.push(path.clone()),
                Err(e) => problems.push(problem(path.display().to_string(), e.to_string(), now)),
            }
            for file in found {
                match read_and_parse(&file) {
                    Ok(cal) => {
                        for w in cal.warnings().iter().take(MAX_WARNINGS_PER_SOURCE) {
                            problems.push(problem(file.display().to_string(), w.clone(), now));
                        }
                        files.push(FileEntry {
                            path: file,
                            calendar: Arc::new(cal),
                            loaded_at: now,
                        });
                    }
                    Err(reason) => problems.push(problem(file.display().to_string(), reason, now)),
                }
            }
        }
        for p in &problems {
            tracing::warn!(source = %p.source, reason = %p.reason, "calendar source problem");
        }
        let mut inner = self.lock();
        inner.files = files;
        inner.file_problems = problems;
        inner.generation += 1;
    }

    /// Fetch every URL once (conditional GET). Never holds the lock across the network.
    pub async fn refresh_urls(&self, fetcher: &dyn CalendarFetcher, now: DateTime<Utc>) {
        if !self.settings.enabled {
            return;
        }
        let requests: Vec<(usize, String, Option<String>)> = self
            .lock()
            .urls
            .iter()
            .enumerate()
            .map(|(i, u)| {
                // Only send the ETag when we still hold the body it belongs to.
                let etag = u.calendar.as_ref().and(u.etag.clone());
                (i, u.url.clone(), etag)
            })
            .collect();
        for (i, url, etag) in requests {
            let outcome = fetcher.fetch(&url, etag.as_deref()).await;
            let parsed = match outcome {
                Ok(FetchResponse::Body { bytes, etag }) => Some(
                    parse_ics(&bytes)
                        .map(|c| (c, etag))
                        .map_err(|e| e.to_string()),
                ),
                Ok(FetchResponse::NotModified) => None,
                Err(e) => Some(Err(e)),
            };
            let mut inner = self.lock();
            let Some(entry) = inner.urls.get_mut(i) else {
                continue;
            };
            entry.last_attempt = Some(now);
            match parsed {
                None => {
                    entry.not_modified = true;
                    entry.last_success = Some(now);
                    entry.problem = None;
                }
                Some(Ok((cal, etag))) => {
                    entry.problem = cal.warnings().first().map(|w| {
                        problem(
                            url.clone(),
                            format!(
                                "{} event(s) skipped or simplified, e.g. {w}",
                                cal.warnings().len()
                            ),
                            now,
                        )
                    });
                    entry.calendar = Some(Arc::new(cal));
                    entry.etag = etag;
                    entry.not_modified = false;
                    entry.last_success = Some(now);
                    inner.generation += 1;
                }
                Some(Err(reason)) => {
                    let reason = if entry.calendar.is_some() {
                        format!("{reason} (using the copy from the last successful fetch)")
                    } else {
                        reason
                    };
                    tracing::warn!(url = %url, reason = %reason, "calendar URL problem");
                    entry.not_modified = false;
                    entry.problem = Some(problem(url.clone(), reason, now));
                }
            }
        }
    }

    /// Merged busy intervals overlapping `[from, to)` (cached; the cache is rebuilt for a
    /// wider range when the calendars change or the query leaves it).
    pub fn busy(&self, from: DateTime<Utc>, to: DateTime<Utc>, tz: Tz) -> Vec<Interval> {
        if !self.settings.enabled || to <= from {
            return Vec::new();
        }
        let (generation, cals) = {
            let inner = self.lock();
            if let Some(c) = &inner.cache
                && c.generation == inner.generation
                && c.tz == tz
                && c.from <= from
                && to <= c.to
            {
                return c
                    .merged
                    .iter()
                    .filter(|i| i.overlaps(from, to))
                    .copied()
                    .collect();
            }
            let cals: Vec<Arc<ParsedCalendar>> = inner
                .files
                .iter()
                .map(|f| f.calendar.clone())
                .chain(inner.urls.iter().filter_map(|u| u.calendar.clone()))
                .collect();
            (inner.generation, cals)
        };
        // Cache generously so the scheduler's different query ranges (evaluation: −2..+8 days,
        // next window: 0..+14 days, timeline) share one expansion for days.
        let c_from = from - chrono::Duration::days(3);
        let c_to = to.max(from + chrono::Duration::days(16)) + chrono::Duration::days(1);
        let raw: Vec<Interval> = cals
            .iter()
            .flat_map(|c| c.busy_intervals(c_from, c_to, tz, &self.filter))
            .map(|b| b.interval)
            .collect();
        let merged = Arc::new(merge_intervals(raw));
        let out = merged
            .iter()
            .filter(|i| i.overlaps(from, to))
            .copied()
            .collect();
        let mut inner = self.lock();
        if inner.generation == generation {
            inner.cache = Some(BusyCache {
                generation,
                tz,
                from: c_from,
                to: c_to,
                merged,
            });
        }
        out
    }

    pub fn status(&self, busy_now: Option<Interval>) -> CalendarStatus {
        let inner = self.lock();
        let mut problems = inner.file_problems.clone();
        problems.extend(inner.urls.iter().filter_map(|u| u.problem.clone()));
        CalendarStatus {
            enabled: self.settings.enabled,
            files: inner
                .files
                .iter()
                .map(|f| CalendarFileStatus {
                    path: f.path.clone(),
                    events: f.calendar.len(),
                    loaded_at: f.loaded_at,
                })
                .collect(),
            urls: inner
                .urls
                .iter()
                .map(|u| CalendarUrlStatus {
                    url: u.url.clone(),
                    events: u.calendar.as_ref().map(|c| c.len()),
                    etag: u.etag.clone(),
                    last_attempt: u.last_attempt,
                    last_success: u.last_success,
                    not_modified: u.not_modified,
                })
                .collect(),
            problems,
            busy_now,
        }
    }
}

fn problem(source: String, reason: String, at: DateTime<Utc>) -> SourceProblem {
    SourceProblem { source, reason, at }
}

fn is_ics(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("ics"))
}

fn collect_ics(
    dir: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
    problems: &mut Vec<SourceProblem>,
    now: DateTime<Utc>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(problem(dir.display().to_string(), e.to_string(), now));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        if p.is_dir() {
            if depth < MAX_DIR_DEPTH {
                collect_ics(&p, depth + 1, out, problems, now);
            }
        } else if is_ics(&p) {
            out.push(p);
        }
    }
}

fn read_and_parse(path: &Path) -> Result<ParsedCalendar, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if meta.len() > MAX_ICS_BYTES as u64 {
        return Err(format!("file larger than {MAX_ICS_BYTES} bytes"));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    parse_ics(&bytes).map_err(|e| e.to_string())
}

/// Start watching the configured paths; `on_change` runs (on notify's thread) for each
/// relevant event. Paths that do not exist yet are covered by watching their parent folder.
pub(crate) fn watch_paths(
    store: Arc<CalendarStore>,
    on_change: impl Fn() + Send + 'static,
) -> notify::Result<notify::RecommendedWatcher> {
    use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind};
    use notify::{EventKind, RecursiveMode, Watcher};

    // Compare event paths with both the configured and the canonical form (macOS reports
    // canonical paths, e.g. /private/var/... for /var/...).
    let mut targets: Vec<PathBuf> = store.settings.paths.clone();
    targets.extend(
        store
            .settings
            .paths
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok()),
    );
    let relevant = move |p: &Path| {
        targets
            .iter()
            .any(|c| p == c || (p.starts_with(c) && is_ics(p)))
    };
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else {
            // Overflow or watcher error: reload to be safe.
            on_change();
            return;
        };
        let interesting = match event.kind {
            // Our own reads produce open/close-read events: ignore them, or we would loop.
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Access(_) => false,
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
            _ => true,
        };
        if interesting && event.paths.iter().any(|p| relevant(p)) {
            on_change();
        }
    })?;
    for path in &store.settings.paths {
        let result = if path.is_dir() {
            watcher.watch(path, RecursiveMode::Recursive)
        } else {
            match path.parent().filter(|p| p.is_dir()) {
                Some(parent) => watcher.watch(parent, RecursiveMode::NonRecursive),
                None => watcher.watch(path, RecursiveMode::NonRecursive),
            }
        };
        if let Err(e) = result {
            tracing::warn!(path = %path.display(), error = %e, "cannot watch calendar path");
        }
    }
    Ok(watcher)
}
