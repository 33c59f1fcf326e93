//! What an API operation is: one HTTP route with typed path parameters, a typed input (the
//! query string of a GET or DELETE, the JSON body otherwise) and a typed output, plus the
//! function that runs it on the core. The `/api` router, the OpenAPI document, the HTTP client
//! the CLI uses and the tray's in-process calls are all derived from these declarations.

use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Api, ApiError};

/// The HTTP method of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
            Method::Put => "put",
            Method::Patch => "patch",
            Method::Delete => "delete",
        }
    }

    /// GET and DELETE take their input from the query string; the others from a JSON body.
    pub fn input_in_query(self) -> bool {
        matches!(self, Method::Get | Method::Delete)
    }
}

/// One operation of the dashboard API.
pub trait Operation: 'static {
    const METHOD: Method;
    /// The route, with `{name}` for each path parameter.
    const PATH: &'static str;
    /// One line for the OpenAPI document.
    const SUMMARY: &'static str;
    /// The path parameters, in the order they appear in [`Self::PATH`].
    type Path: PathArgs;
    type Input: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
    type Output: Serialize + DeserializeOwned + JsonSchema + Send + 'static;

    fn run(
        api: &Api,
        path: Self::Path,
        input: Self::Input,
    ) -> impl Future<Output = Result<Self::Output, ApiError>> + Send;
}

/// Path parameters: parsed from and rendered into the route's `{…}` segments.
pub trait PathArgs: Sized + Send + 'static {
    /// The JSON Schema type of each parameter, for the OpenAPI document.
    const TYPES: &'static [&'static str];
    fn parse(values: &[&str]) -> Result<Self, String>;
    fn render(&self) -> Vec<String>;
}

impl PathArgs for () {
    const TYPES: &'static [&'static str] = &[];
    fn parse(_: &[&str]) -> Result<Self, String> {
        Ok(())
    }
    fn render(&self) -> Vec<String> {
        Vec::new()
    }
}

impl PathArgs for String {
    const TYPES: &'static [&'static str] = &["string"];
    fn parse(values: &[&str]) -> Result<Self, String> {
        values
            .first()
            .map(|v| (*v).to_owned())
            .ok_or_else(|| "a path parameter is missing".to_owned())
    }
    fn render(&self) -> Vec<String> {
        vec![self.clone()]
    }
}

impl PathArgs for i64 {
    const TYPES: &'static [&'static str] = &["integer"];
    fn parse(values: &[&str]) -> Result<Self, String> {
        let v = values
            .first()
            .ok_or_else(|| "a path parameter is missing".to_owned())?;
        v.parse()
            .map_err(|_| format!("`{v}` is not a number (an id is expected)"))
    }
    fn render(&self) -> Vec<String> {
        vec![self.to_string()]
    }
}

/// The input of an operation that takes none. Query strings with extra parameters (a cache
/// buster, say) and empty or `{}` bodies are accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, JsonSchema)]
pub struct NoInput {}

/// The names of a route's path parameters, in order.
pub fn path_names(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

/// The route with its parameters filled in (percent-encoded).
pub fn fill_path(path: &str, values: &[String]) -> String {
    let mut values = values.iter();
    path.split('/')
        .map(|seg| {
            if seg.starts_with('{') {
                values.next().map(|v| percent_encode(v)).unwrap_or_default()
            } else {
                seg.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_filled_and_named() {
        assert_eq!(path_names("/api/skills/{name}/history"), ["name"]);
        assert_eq!(
            fill_path("/api/skills/{name}/history", &["a b/c".into()]),
            "/api/skills/a%20b%2Fc/history"
        );
        assert_eq!(fill_path("/api/status", &[]), "/api/status");
    }

    #[test]
    fn path_args_parse() {
        assert_eq!(i64::parse(&["12"]), Ok(12));
        assert!(i64::parse(&["x"]).unwrap_err().contains("not a number"));
        assert_eq!(String::parse(&["n"]).unwrap(), "n");
        assert_eq!(<()>::parse(&[]), Ok(()));
    }
}
