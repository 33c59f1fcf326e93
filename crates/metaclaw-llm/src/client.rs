//! `LlmClient`: one endpoint (base URL, key, timeout), its typed calls, and the retry loop
//! every call goes through.

use std::time::Duration;

use backon::Retryable;
use metaclaw_domain::Dialect;
use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use crate::chat::{ChatMessage, ChatRequest, ChatResponse};
use crate::completion::{CompletionRequest, CompletionResponse};
use crate::embedding::{EmbeddingRequest, EmbeddingResponse};
use crate::error::{LlmError, Secret};
use crate::messages::{MessagesRequest, MessagesResponse};
use crate::models::ModelList;
use crate::retry::{RetryPolicy, parse_retry_after};

/// A client for one OpenAI-compatible endpoint. Cheap to clone (the connection pool is
/// shared). The timeout bounds a whole call, retries and their waits included.
#[derive(Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    base: String,
    key: Secret,
    timeout: Duration,
    retry: RetryPolicy,
    /// The API the endpoint speaks: it decides the model list's path and headers and what
    /// [`LlmClient::ping`] sends.
    dialect: Dialect,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("base", &self.key.redact(&self.base))
            .field("key", &self.key)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("dialect", &self.dialect)
            .finish()
    }
}

/// What [`LlmClient::probe`] found.
#[derive(Debug, Clone)]
pub enum Probe {
    /// The endpoint answered with this status (200, or an error that is not about the key).
    Reachable {
        status: u16,
    },
    /// The endpoint answered 401 or 403.
    KeyRefused {
        status: u16,
    },
    Unreachable(LlmError),
}

/// The endpoints this client calls, relative to the base URL.
#[derive(Debug, Clone, Copy)]
enum Route {
    Chat,
    Completions,
    Embeddings,
    Models,
    /// Anthropic's `POST /v1/messages`.
    Messages,
    /// Anthropic's `GET /v1/models` (`x-api-key` and `anthropic-version` only).
    AnthropicModels,
}

/// The Messages API version every Anthropic request names.
const ANTHROPIC_VERSION: &str = "2023-06-01";

impl Route {
    fn method(self) -> Method {
        match self {
            Route::Models | Route::AnthropicModels => Method::GET,
            _ => Method::POST,
        }
    }

    /// The path after a base URL; Anthropic bases are given with or without `/v1` (the
    /// proxy accepts both, so the client does too).
    fn path(self, base: &str) -> &'static str {
        let v1 = base.ends_with("/v1");
        match self {
            Route::Chat => "/chat/completions",
            Route::Completions => "/completions",
            Route::Embeddings => "/embeddings",
            Route::Models => "/models",
            Route::Messages if v1 => "/messages",
            Route::Messages => "/v1/messages",
            Route::AnthropicModels if v1 => "/models",
            Route::AnthropicModels => "/v1/models",
        }
    }

    /// The OpenAI model list is also how Anthropic-style endpoints (which `llm.api_base` may
    /// be) are probed; they read the key from `x-api-key`.
    fn sends_x_api_key(self) -> bool {
        matches!(self, Route::Models)
    }

    fn is_anthropic(self) -> bool {
        matches!(self, Route::Messages | Route::AnthropicModels)
    }
}

/// A successful answer before it is decoded.
struct Answer {
    status: u16,
    body: bytes::Bytes,
}

impl LlmClient {
    /// `base_url` like `http://localhost:11434/v1` (a trailing slash is ignored); an empty
    /// `api_key` sends no credentials.
    pub fn new(base_url: &str, api_key: &str, timeout: Duration) -> Result<LlmClient, LlmError> {
        let key = Secret::new(api_key);
        let base = base_url.trim().trim_end_matches('/').to_owned();
        match reqwest::Url::parse(&base) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {}
            Ok(_) | Err(_) => {
                return Err(LlmError::Config(format!(
                    "`{}` is not an http(s) URL",
                    key.redact(&base)
                )));
            }
        }
        let http = crate::http_client(&crate::HttpOptions::default())
            .map_err(|e| LlmError::Config(key.redact(&e.to_string())))?;
        Ok(LlmClient {
            http,
            base,
            key,
            timeout,
            retry: RetryPolicy::default(),
            dialect: Dialect::OpenAi,
        })
    }

    /// The same endpoint spoken to as `dialect`: Anthropic lists models at `/v1/models` and
    /// [`LlmClient::ping`] sends a Messages request.
    pub fn with_dialect(mut self, dialect: Dialect) -> LlmClient {
        self.dialect = dialect;
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> LlmClient {
        self.retry = retry;
        self
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        self.call(Route::Chat, Some(request), self.retry).await
    }

    /// The first choice's text; an answer without one is `Malformed`.
    pub async fn chat_text(&self, request: &ChatRequest) -> Result<String, LlmError> {
        let response = self.chat(request).await?;
        response
            .content()
            .map(str::to_owned)
            .ok_or_else(|| LlmError::Malformed {
                endpoint: self.endpoint(Route::Chat),
                status: 200,
                reason: "the answer has no message content".into(),
            })
    }

    pub async fn complete(
        &self,
        request: &CompletionRequest,
    ) -> Result<CompletionResponse, LlmError> {
        self.call(Route::Completions, Some(request), self.retry)
            .await
    }

    /// One vector per input, in input order, whatever order the server answered in.
    pub async fn embed(&self, request: &EmbeddingRequest) -> Result<Vec<Vec<f32>>, LlmError> {
        if request.input.is_empty() {
            return Ok(Vec::new());
        }
        let response: EmbeddingResponse = self
            .call(Route::Embeddings, Some(request), self.retry)
            .await?;
        response
            .into_vectors(request.input.len())
            .map_err(|reason| LlmError::Malformed {
                endpoint: self.endpoint(Route::Embeddings),
                status: 200,
                reason,
            })
    }

    /// The served models (the key is also sent as `x-api-key`).
    pub async fn models(&self) -> Result<ModelList, LlmError> {
        self.call(self.models_route(), None::<&()>, self.retry)
            .await
    }

    /// The smallest real request the endpoint serves: one token from `model` (a chat
    /// completion, or a Messages request for Anthropic). Unlike a model list, it proves the
    /// key, the model name and the route all work. The client's retry policy applies.
    pub async fn ping(&self, model: &str) -> Result<(), LlmError> {
        match self.dialect {
            Dialect::OpenAi => {
                let mut request = ChatRequest::new(model, vec![ChatMessage::user("ping")]);
                request.max_tokens = Some(1);
                self.chat(&request).await.map(drop)
            }
            Dialect::Anthropic => {
                let request = MessagesRequest::ping(model);
                self.call::<_, MessagesResponse>(Route::Messages, Some(&request), self.retry)
                    .await
                    .map(drop)
            }
        }
    }

    fn models_route(&self) -> Route {
        match self.dialect {
            Dialect::OpenAi => Route::Models,
            Dialect::Anthropic => Route::AnthropicModels,
        }
    }

    /// Whether the endpoint answers, from one `GET /models` without retries: a probe
    /// reports what the endpoint says now.
    pub async fn probe(&self) -> Probe {
        let answer: Result<ModelList, LlmError> = self
            .call(self.models_route(), None::<&()>, RetryPolicy::none())
            .await;
        match answer {
            Ok(_) => Probe::Reachable { status: 200 },
            Err(LlmError::Unauthorized { status, .. }) => Probe::KeyRefused { status },
            // Any answer, even an error or an odd body, shows the endpoint is there.
            Err(e) => match e.status() {
                Some(status) => Probe::Reachable { status },
                None => Probe::Unreachable(e),
            },
        }
    }

    fn endpoint(&self, route: Route) -> String {
        self.key.redact(&self.url(route))
    }

    fn url(&self, route: Route) -> String {
        format!("{}{}", self.base, route.path(&self.base))
    }

    async fn call<B: Serialize, T: DeserializeOwned>(
        &self,
        route: Route,
        body: Option<&B>,
        retry: RetryPolicy,
    ) -> Result<T, LlmError> {
        let url = self.url(route);
        let endpoint = self.endpoint(route);
        let body = body
            .map(serde_json::to_vec)
            .transpose()
            .map_err(|e| LlmError::Config(format!("the request could not be encoded: {e}")))?
            .map(bytes::Bytes::from);
        let deadline = Instant::now() + self.timeout;
        let attempt = || self.attempt(route, &url, &endpoint, body.clone(), deadline);
        let answer = attempt
            .retry(retry.backoff())
            .when(LlmError::is_retryable)
            .adjust(|err, next| {
                retry.wait(
                    next,
                    err.retry_after(),
                    deadline.saturating_duration_since(Instant::now()),
                )
            })
            .notify(|err, wait| tracing::debug!(error = %err, ?wait, "retrying the LLM call"))
            .await?;
        serde_json::from_slice(&answer.body).map_err(|e| LlmError::Malformed {
            endpoint,
            status: answer.status,
            reason: self.key.redact(&e.to_string()),
        })
    }

    async fn attempt(
        &self,
        route: Route,
        url: &str,
        endpoint: &str,
        body: Option<bytes::Bytes>,
        deadline: Instant,
    ) -> Result<Answer, LlmError> {
        let mut request = self.http.request(route.method(), url);
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body);
        }
        if route.is_anthropic() {
            request = request.header("anthropic-version", ANTHROPIC_VERSION);
            if !self.key.is_empty() {
                request = request.header("x-api-key", self.key.expose());
            }
        } else if !self.key.is_empty() {
            request = request.bearer_auth(self.key.expose());
            if route.sends_x_api_key() {
                request = request.header("x-api-key", self.key.expose());
            }
        }
        let exchange = async {
            let response = request.send().await?;
            let status = response.status();
            let now = metaclaw_domain::Clock::now(&metaclaw_domain::SystemClock).into();
            let retry_after = parse_retry_after(response.headers(), now);
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, retry_after, body))
        };
        let timed_out = || LlmError::Timeout {
            endpoint: endpoint.to_owned(),
            after: self.timeout,
        };
        match tokio::time::timeout_at(deadline, exchange).await {
            Err(_) => Err(timed_out()),
            Ok(Err(e)) if e.is_timeout() => Err(timed_out()),
            Ok(Err(e)) => Err(LlmError::from_transport(endpoint, &e, &self.key)),
            Ok(Ok((status, _, body))) if status.is_success() => Ok(Answer {
                status: status.as_u16(),
                body,
            }),
            Ok(Ok((status, retry_after, body))) => Err(LlmError::from_status(
                endpoint,
                status.as_u16(),
                &String::from_utf8_lossy(&body),
                retry_after,
                &self.key,
            )),
        }
    }
}
