//! Hub downloads against a local axum server on 127.0.0.1: cache layout, cache hits without
//! network, model → repo mapping, auth, errors. Every server is shut down at the end.

#![cfg(feature = "test-tokenizer")]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, Uri};
use metaclaw_render::{
    HubConfig, PROGRESS_STEP, RenderError, Renderer, RendererKind, TokenizerFormat,
    TokenizerSource, load_tokenizer, load_tokenizer_reporting, write_kimi_tiktoken,
    write_test_tokenizer_json,
};

#[derive(Default)]
struct Hub {
    files: HashMap<String, Vec<u8>>,
    /// (path, Authorization header) of every request.
    requests: Mutex<Vec<(String, Option<String>)>>,
}

struct Server {
    base_url: String,
    hub: Arc<Hub>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(files: HashMap<String, Vec<u8>>) -> Self {
        let hub = Arc::new(Hub {
            files,
            ..Hub::default()
        });
        let state = Arc::clone(&hub);
        let app = Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
            let hub = Arc::clone(&state);
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                hub.requests
                    .lock()
                    .unwrap()
                    .push((uri.path().to_owned(), auth));
                match hub.files.get(uri.path()) {
                    Some(body) => (StatusCode::OK, body.clone()),
                    None => (StatusCode::NOT_FOUND, b"not found".to_vec()),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
                .unwrap();
        });
        Server {
            base_url,
            hub,
            shutdown: Some(tx),
            task,
        }
    }

    fn config(&self) -> HubConfig {
        HubConfig {
            base_url: self.base_url.clone(),
            token: None,
            revision: None,
        }
    }

    fn requests(&self) -> Vec<(String, Option<String>)> {
        self.hub.requests.lock().unwrap().clone()
    }

    async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.task.await.unwrap();
    }
}

fn tokenizer_json_bytes(kind: RendererKind) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    write_test_tokenizer_json(kind, &path);
    std::fs::read(path).unwrap()
}

#[tokio::test]
async fn downloads_once_then_uses_the_cache_offline() {
    let files = HashMap::from([(
        "/Qwen/Qwen3-8B/resolve/main/tokenizer.json".to_owned(),
        tokenizer_json_bytes(RendererKind::Qwen3),
    )]);
    let server = Server::start(files).await;
    let cache = tempfile::tempdir().unwrap();
    let hub = server.config();

    let tok = load_tokenizer("Qwen/Qwen3-8B:peft:run-7", None, cache.path(), &hub)
        .await
        .unwrap();
    assert_eq!(tok.name(), "Qwen/Qwen3-8B");
    Renderer::new(RendererKind::Qwen3, tok).unwrap();
    assert!(
        cache
            .path()
            .join("Qwen/Qwen3-8B/main/tokenizer.json")
            .is_file()
    );
    // Only the final file, no temporary left behind.
    assert_eq!(
        std::fs::read_dir(cache.path().join("Qwen/Qwen3-8B/main"))
            .unwrap()
            .count(),
        1
    );
    assert_eq!(server.requests().len(), 1);

    load_tokenizer("Qwen/Qwen3-8B", None, cache.path(), &hub)
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 1, "second load must hit the cache");

    server.stop().await;
    // With the server gone the cache still serves.
    load_tokenizer("Qwen/Qwen3-8B", None, cache.path(), &hub)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_download_reports_its_progress_from_zero_to_the_whole_file() {
    // Real tokenizer files are megabytes: pad a small one (JSON allows trailing whitespace).
    let mut body = tokenizer_json_bytes(RendererKind::Qwen3);
    body.resize(body.len() + 3 * PROGRESS_STEP as usize + 1000, b' ');
    let len = body.len() as u64;
    let files = HashMap::from([(
        "/Qwen/Qwen3-8B/resolve/main/tokenizer.json".to_owned(),
        body,
    )]);
    let server = Server::start(files).await;
    let cache = tempfile::tempdir().unwrap();
    let seen = Mutex::new(Vec::new());
    load_tokenizer_reporting(
        "Qwen/Qwen3-8B",
        None,
        cache.path(),
        &server.config(),
        &|p| seen.lock().unwrap().push(p),
    )
    .await
    .unwrap();
    let seen = seen.into_inner().unwrap();
    assert!(seen.iter().all(|p| p.file == "tokenizer.json"));
    assert!(seen.iter().all(|p| p.total_bytes == Some(len)), "{seen:?}");
    let done: Vec<u64> = seen.iter().map(|p| p.done_bytes).collect();
    assert_eq!(done.first(), Some(&0));
    assert_eq!(done.last(), Some(&len));
    assert!(done.windows(2).all(|w| w[0] < w[1]), "{done:?}");
    assert!(done.len() >= 4, "a report per step: {done:?}");

    // From the cache: nothing to download, nothing reported.
    let again = Mutex::new(0);
    load_tokenizer_reporting(
        "Qwen/Qwen3-8B",
        None,
        cache.path(),
        &server.config(),
        &|_| *again.lock().unwrap() += 1,
    )
    .await
    .unwrap();
    assert_eq!(*again.lock().unwrap(), 0);
    server.stop().await;
}

#[tokio::test]
async fn llama_uses_the_ungated_repo_with_revision_and_token() {
    let files = HashMap::from([(
        "/thinkingmachineslabinc/meta-llama-3-instruct-tokenizer/resolve/abc123/tokenizer.json"
            .to_owned(),
        tokenizer_json_bytes(RendererKind::Llama3),
    )]);
    let server = Server::start(files).await;
    let cache = tempfile::tempdir().unwrap();
    let hub = HubConfig {
        token: Some("hf_secret".into()),
        revision: Some("abc123".into()),
        ..server.config()
    };
    let tok = load_tokenizer("meta-llama/Llama-3.1-8B-Instruct", None, cache.path(), &hub)
        .await
        .unwrap();
    Renderer::new(RendererKind::Llama3, tok).unwrap();
    assert_eq!(
        server.requests(),
        [(
            "/thinkingmachineslabinc/meta-llama-3-instruct-tokenizer/resolve/abc123/tokenizer.json"
                .to_owned(),
            Some("Bearer hf_secret".to_owned())
        )]
    );
    assert!(
        cache
            .path()
            .join("thinkingmachineslabinc/meta-llama-3-instruct-tokenizer/abc123/tokenizer.json")
            .is_file()
    );
    server.stop().await;
}

#[tokio::test]
async fn kimi_downloads_tiktoken_files() {
    let src = tempfile::tempdir().unwrap();
    let (model, config) = write_kimi_tiktoken(src.path());
    let files = HashMap::from([
        (
            "/moonshotai/Kimi-K2-Thinking/resolve/main/tiktoken.model".to_owned(),
            std::fs::read(&model).unwrap(),
        ),
        (
            "/moonshotai/Kimi-K2-Thinking/resolve/main/tokenizer_config.json".to_owned(),
            std::fs::read(&config).unwrap(),
        ),
    ]);
    let server = Server::start(files).await;
    let cache = tempfile::tempdir().unwrap();
    let tok = load_tokenizer(
        "moonshotai/Kimi-K2-Thinking",
        None,
        cache.path(),
        &server.config(),
    )
    .await
    .unwrap();
    let r = Renderer::new(RendererKind::KimiK2, tok).unwrap();
    assert_eq!(r.stop_tokens().len(), 1);
    assert_eq!(server.requests().len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn http_errors_name_the_url_and_status() {
    let server = Server::start(HashMap::new()).await;
    let cache = tempfile::tempdir().unwrap();
    let err = load_tokenizer("Qwen/Qwen3-32B", None, cache.path(), &server.config())
        .await
        .unwrap_err();
    let expected_url = format!(
        "{}/Qwen/Qwen3-32B/resolve/main/tokenizer.json",
        server.base_url
    );
    assert!(
        matches!(&err, RenderError::DownloadStatus { url, status: 404 } if *url == expected_url),
        "{err}"
    );
    assert!(err.to_string().contains("404"));
    assert!(
        !cache
            .path()
            .join("Qwen/Qwen3-32B/main/tokenizer.json")
            .exists()
    );
    let base_url = server.base_url.clone();
    server.stop().await;

    // Nothing listens any more: a transport error, still naming the URL.
    let hub = HubConfig {
        base_url,
        token: None,
        revision: None,
    };
    let err = load_tokenizer("Qwen/Qwen3-32B", None, cache.path(), &hub)
        .await
        .unwrap_err();
    assert!(matches!(err, RenderError::DownloadFailed { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("/Qwen/Qwen3-32B/resolve/main/tokenizer.json")
    );
}

#[tokio::test]
async fn local_paths_need_no_hub() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("tokenizer.json");
    write_test_tokenizer_json(RendererKind::Qwen3, &json);
    // Unroutable hub: any network use would fail the test.
    let hub = HubConfig {
        base_url: "http://127.0.0.1:9".into(),
        token: None,
        revision: None,
    };
    let cache = dir.path().join("cache");
    for path in [json.as_path(), dir.path()] {
        let tok = load_tokenizer("anything", Some(path), &cache, &hub)
            .await
            .unwrap();
        assert!(tok.special_id("<|im_end|>").is_some());
    }

    let kimi_dir = tempfile::tempdir().unwrap();
    let (model, _) = write_kimi_tiktoken(kimi_dir.path());
    for path in [model.as_path(), kimi_dir.path()] {
        let tok = load_tokenizer("kimi", Some(path), &cache, &hub)
            .await
            .unwrap();
        Renderer::new(RendererKind::KimiK25, tok).unwrap();
    }

    let empty = tempfile::tempdir().unwrap();
    let err = load_tokenizer("x", Some(empty.path()), &cache, &hub)
        .await
        .unwrap_err();
    assert!(matches!(err, RenderError::TokenizerMissing(_)), "{err}");
    let err = load_tokenizer(
        "x",
        Some(Path::new("/nonexistent/tokenizer.json")),
        &cache,
        &hub,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, RenderError::TokenizerMissing(_)), "{err}");
    assert!(!cache.exists(), "local loads never touch the cache");
}

#[tokio::test]
async fn unsafe_repo_names_are_rejected() {
    let cache = tempfile::tempdir().unwrap();
    let hub = HubConfig {
        base_url: "http://127.0.0.1:9".into(),
        token: None,
        revision: Some("../../etc".into()),
    };
    let err = load_tokenizer("Qwen/Qwen3-8B", None, cache.path(), &hub)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("invalid hub repo"), "{err}");
}

#[test]
fn model_to_tokenizer_source() {
    let src = |m: &str| TokenizerSource::for_model(m);
    assert_eq!(src("Qwen/Qwen3-8B").repo, "Qwen/Qwen3-8B");
    assert_eq!(
        src("Qwen/Qwen3-30B-A3B-Instruct-2507:abc").repo,
        "Qwen/Qwen3-30B-A3B-Instruct-2507"
    );
    assert_eq!(
        src("meta-llama/Llama-3.3-70B-Instruct").repo,
        metaclaw_render::LLAMA3_TOKENIZER_REPO
    );
    assert_eq!(
        src("meta-llama/Llama-3.2-1B").repo,
        metaclaw_render::LLAMA3_TOKENIZER_REPO
    );
    let kimi = src("moonshotai/Kimi-K2.5");
    assert_eq!(
        (kimi.repo.as_str(), kimi.format),
        ("moonshotai/Kimi-K2.5", TokenizerFormat::Tiktoken)
    );
    assert_eq!(src("Qwen/Qwen3-8B").format, TokenizerFormat::HfJson);
}

#[test]
fn model_to_renderer() {
    use RendererKind::*;
    let cases = [
        ("Qwen/Qwen3-8B", Some(Qwen3)),
        ("Qwen/Qwen3-32B:peft:xyz", Some(Qwen3)),
        ("Qwen/Qwen3-30B-A3B", Some(Qwen3)),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", Some(Qwen3Instruct)),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507", Some(Qwen3Instruct)),
        ("meta-llama/Llama-3.1-8B-Instruct", Some(Llama3)),
        ("meta-llama/Llama-3.3-70B-Instruct", Some(Llama3)),
        ("moonshotai/Kimi-K2-Thinking", Some(KimiK2)),
        ("moonshotai/Kimi-K2-Instruct", Some(KimiK2)),
        ("moonshotai/Kimi-K2.5", Some(KimiK25)),
        ("deepseek-ai/DeepSeek-V3.1", None),
    ];
    for (model, expected) in cases {
        assert_eq!(RendererKind::for_model(model), expected, "{model}");
    }
    for kind in RendererKind::ALL {
        assert_eq!(kind.as_str().parse::<RendererKind>().unwrap(), kind);
        assert_eq!(kind.to_string(), kind.as_str());
    }
    assert_eq!(
        "Qwen3-Instruct".parse::<RendererKind>().unwrap(),
        Qwen3Instruct
    );
    let err = "gpt5".parse::<RendererKind>().unwrap_err();
    assert!(
        err.to_string().contains("unknown renderer \"gpt5\""),
        "{err}"
    );
}
