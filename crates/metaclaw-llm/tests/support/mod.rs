//! A scripted OpenAI-compatible server on 127.0.0.1: each test starts its own and stops it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::watch;

/// What the server answers to the next request.
#[derive(Clone)]
pub enum Reply {
    Json {
        status: u16,
        body: Value,
        headers: Vec<(&'static str, String)>,
    },
    /// A body that is not JSON.
    Text(u16, String),
    /// Never answers (until the server stops).
    Hang,
    /// Answers with the request's `authorization` header in an OpenAI-shaped error.
    EchoKey(u16),
}

pub fn ok(body: Value) -> Reply {
    Reply::Json {
        status: 200,
        body,
        headers: Vec::new(),
    }
}

pub fn status(status: u16) -> Reply {
    Reply::Json {
        status,
        body: serde_json::json!({"error": {"message": format!("scripted {status}")}}),
        headers: Vec::new(),
    }
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    stop: watch::Receiver<bool>,
}

pub struct Upstream {
    /// The base URL, `http://127.0.0.1:port/v1`.
    pub url: String,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Upstream {
    pub async fn start(replies: impl IntoIterator<Item = Reply>) -> Upstream {
        let (stop, stop_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into_iter().collect()),
            requests: Mutex::default(),
            stop: stop_rx.clone(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let mut until = stop_rx;
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = until.wait_for(|s| *s).await;
                })
                .await
                .unwrap();
        });
        Upstream {
            url,
            shared,
            stop,
            task,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().unwrap().clone()
    }

    pub async fn stop(self) {
        let _ = self.stop.send(true);
        self.task.await.unwrap();
    }
}

async fn handle(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let parsed = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()))
    };
    shared.requests.lock().unwrap().push(Recorded {
        method,
        path: uri.path().to_owned(),
        headers: headers.clone(),
        body: parsed,
    });
    let next = shared.replies.lock().unwrap().pop_front();
    let code = |s: u16| StatusCode::from_u16(s).unwrap();
    match next {
        Some(Reply::Json {
            status,
            body,
            headers,
        }) => {
            let mut response = (code(status), axum::Json(body)).into_response();
            for (name, value) in headers {
                response.headers_mut().insert(name, value.parse().unwrap());
            }
            response
        }
        Some(Reply::Text(status, text)) => (code(status), text).into_response(),
        Some(Reply::Hang) => {
            let mut stop = shared.stop.clone();
            let _ = stop.wait_for(|s| *s).await;
            (StatusCode::SERVICE_UNAVAILABLE, "stopping").into_response()
        }
        Some(Reply::EchoKey(status)) => {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let body = serde_json::json!({"error": {"message": format!("Incorrect API key provided: {auth}")}});
            (code(status), axum::Json(body)).into_response()
        }
        None => (StatusCode::INTERNAL_SERVER_ERROR, "the script ran out").into_response(),
    }
}
