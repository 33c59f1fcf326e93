//! Shared setup for the in-process proxy tests: a mock upstream and a running core on port 0.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use metaclaw_config::{Config, Home, LlmProvider};
use metaclaw_core::{CoreOptions, RunningCore};
use metaclaw_domain::{Clock, SystemClock};
use metaclaw_tests::mock_upstream::MockUpstream;

pub const PROXY_KEY: &str = "proxy-key";

pub struct Harness {
    pub mock: MockUpstream,
    pub core: Option<RunningCore>,
    pub base: String,
    pub client: reqwest::Client,
    config: Config,
    _home: tempfile::TempDir,
}

pub fn config_for(mock: &MockUpstream) -> Config {
    let mut config = Config::default();
    config.llm.provider = LlmProvider::Custom;
    config.llm.model_id = "mock-model".into();
    config.llm.api_base = mock.openai_base();
    config.llm.api_key = "upstream-key".into();
    config.llm.timeout_seconds = 2;
    config.proxy.api_key = PROXY_KEY.into();
    config
}

impl Harness {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(edit: impl FnOnce(&mut Config)) -> Self {
        Self::start_full(edit, Arc::new(SystemClock)).await
    }

    pub async fn start_full(edit: impl FnOnce(&mut Config), clock: Arc<dyn Clock>) -> Self {
        let mock = MockUpstream::start().await.expect("mock upstream");
        let mut config = config_for(&mock);
        edit(&mut config);
        let home = tempfile::tempdir().expect("tempdir");
        let mut opts = CoreOptions::new(Home::at(home.path()), config.clone());
        opts.bind = Some("127.0.0.1:0".parse().unwrap());
        opts.clock = clock;
        let core = metaclaw_core::start(opts).await.expect("core starts");
        let base = format!("http://{}", core.addr());
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        Self {
            mock,
            core: Some(core),
            base,
            client,
            config,
            _home: home,
        }
    }

    /// Stops the core and starts a new one on the same home directory and config (a
    /// daemon restart); the mock upstream keeps running.
    pub async fn restart(mut self) -> Self {
        if let Some(core) = self.core.take() {
            core.shutdown().await.unwrap();
        }
        let mut opts = CoreOptions::new(Home::at(self._home.path()), self.config.clone());
        opts.bind = Some("127.0.0.1:0".parse().unwrap());
        let core = metaclaw_core::start(opts).await.expect("core restarts");
        self.base = format!("http://{}", core.addr());
        self.core = Some(core);
        self
    }

    pub fn home(&self) -> &std::path::Path {
        self._home.path()
    }

    pub fn core(&self) -> &RunningCore {
        self.core.as_ref().expect("core running")
    }

    pub fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.base))
            .bearer_auth(PROXY_KEY)
    }

    /// POST a chat completion with the proxy key.
    pub async fn chat(&self, body: &serde_json::Value) -> reqwest::Response {
        self.post("/v1/chat/completions")
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    /// Every stored turn, in session order.
    pub fn all_turns(&self) -> Vec<metaclaw_store::TurnRow> {
        let store = self.core().store();
        store
            .sessions(1000)
            .unwrap()
            .iter()
            .flat_map(|s| store.turns_in_session(&s.id).unwrap())
            .collect()
    }

    /// Wait until the store holds `n` turns (turns are recorded off the request path).
    pub async fn wait_turns(&self, n: u64) {
        for _ in 0..200 {
            self.core().store().flush().unwrap();
            if self.core().store().turn_count().unwrap() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "expected {n} turns, have {}",
            self.core().store().turn_count().unwrap()
        );
    }

    pub async fn stop(mut self) {
        if let Some(core) = self.core.take() {
            core.shutdown().await.unwrap();
        }
        self.mock.stop().await;
    }
}

/// The dashboard's `/api`, called as a browser or the CLI would, with the install's token.
pub struct ApiClient<'a> {
    h: &'a Harness,
    token: String,
    /// Text no answer may contain (a key the test handed in).
    never_echo: Vec<String>,
}

impl Harness {
    pub fn api(&self) -> ApiClient<'_> {
        let token = std::fs::read_to_string(self.home().join("dashboard.token")).unwrap();
        ApiClient {
            h: self,
            token: token.trim().to_owned(),
            never_echo: Vec::new(),
        }
    }
}

impl ApiClient<'_> {
    /// Every answer is checked not to contain `secret`.
    pub fn never_echo(mut self, secret: &str) -> Self {
        self.never_echo.push(secret.to_owned());
        self
    }

    pub fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.h
            .client
            .request(method, format!("{}{path}", self.h.base))
            .bearer_auth(&self.token)
    }

    /// Any call; the body is JSON when it parses (`Null` otherwise).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (reqwest::StatusCode, serde_json::Value) {
        let mut req = self.req(method, path);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let r = req.send().await.unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        for secret in &self.never_echo {
            assert!(!text.contains(secret), "{path} echoed a secret: {text}");
        }
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }

    /// The status a GET answers with.
    pub async fn status(&self, path: &str) -> reqwest::StatusCode {
        self.call(reqwest::Method::GET, path, None).await.0
    }

    /// GET that must succeed.
    pub async fn get(&self, path: &str) -> serde_json::Value {
        let (status, v) = self.call(reqwest::Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {v}");
        v
    }

    /// POST that must succeed.
    pub async fn post(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let (status, v) = self.call(reqwest::Method::POST, path, Some(body)).await;
        assert_eq!(status, 200, "POST {path}: {v}");
        v
    }

    /// PATCH one key through the settings path; the answer must not ask for a restart.
    pub async fn set(&self, key: &str, value: serde_json::Value) -> serde_json::Value {
        let (status, v) = self
            .call(
                reqwest::Method::PATCH,
                "/api/config",
                Some(serde_json::json!({"set": {key: value}})),
            )
            .await;
        assert_eq!(status, 200, "set {key}: {v}");
        assert_eq!(v["restart_required"], false, "{key}: {v}");
        v
    }
}
