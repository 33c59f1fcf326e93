//! Operations as axum routes: one generic handler reads the path parameters, the query string
//! or the JSON body into the operation's types, runs it and writes its output as JSON.

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{RawPathParams, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use serde::de::DeserializeOwned;

use super::operation::{Method, Operation, PathArgs};
use super::{Api, ApiError};

pub(crate) fn route<O: Operation>(router: Router<Api>) -> Router<Api> {
    let handler: MethodRouter<Api> = match O::METHOD {
        Method::Get => get(handle::<O>),
        Method::Post => post(handle::<O>),
        Method::Put => put(handle::<O>),
        Method::Patch => patch(handle::<O>),
        Method::Delete => delete(handle::<O>),
    };
    router.route(O::PATH, handler)
}

async fn handle<O: Operation>(
    State(api): State<Api>,
    params: Result<RawPathParams, RawPathParamsRejection>,
    uri: Uri,
    body: Bytes,
) -> Response {
    let run = async {
        let values: Vec<&str> = match &params {
            Ok(p) => p.iter().map(|(_, v)| v).collect(),
            Err(_) => Vec::new(),
        };
        let path = O::Path::parse(&values).map_err(ApiError::bad_request)?;
        let input: O::Input = if O::METHOD.input_in_query() {
            query(uri.query().unwrap_or(""))?
        } else {
            json_body(&body)?
        };
        O::run(&api, path, input).await
    };
    match run.await {
        Ok(output) => axum::Json(output).into_response(),
        Err(e) => e.into_response(),
    }
}

fn query<T: DeserializeOwned>(text: &str) -> Result<T, ApiError> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(text.as_bytes()));
    serde_path_to_error::deserialize(de)
        .map_err(|e| ApiError::bad_request(format!("invalid query parameter {}", describe(&e))))
}

/// An empty body reads as `{}`, so operations whose fields are all optional need none.
fn json_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut de)
        .map_err(|e| ApiError::bad_request(format!("invalid request body {}", describe(&e))))
}

fn describe<E: std::fmt::Display>(e: &serde_path_to_error::Error<E>) -> String {
    let at = e.path().to_string();
    if at == "." {
        format!(": {}", e.inner())
    } else {
        format!("at `{at}`: {}", e.inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Body {
        rating: i8,
        note: Option<String>,
    }

    #[test]
    fn body_errors_name_the_field() {
        let e = json_body::<Body>(br#"{"rating": "x"}"#).unwrap_err();
        assert!(e.message.contains("at `rating`"), "{}", e.message);
        let e = json_body::<Body>(b"{").unwrap_err();
        assert!(
            e.message.starts_with("invalid request body"),
            "{}",
            e.message
        );
    }

    #[test]
    fn empty_bodies_and_query_strings_parse() {
        #[derive(serde::Deserialize, Debug)]
        struct Opt {
            limit: Option<u32>,
        }
        assert!(json_body::<Opt>(b"").unwrap().limit.is_none());
        assert_eq!(query::<Opt>("limit=5&v=1").unwrap().limit, Some(5));
        let e = query::<Opt>("limit=x").unwrap_err();
        assert!(e.message.contains("limit"), "{}", e.message);
    }
}
