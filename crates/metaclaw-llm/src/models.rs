//! `GET /models`: the models an endpoint serves; also how a connection is probed.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ModelList {
    pub data: Vec<Model>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Model {
    pub id: String,
    #[serde(default)]
    pub owned_by: Option<String>,
}
