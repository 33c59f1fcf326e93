//! The OpenAPI 3.1 document of `/api`, generated from the operations' Rust types (their JSON
//! Schemas come from `schemars`). `docs/openapi.json` is this document checked in, and the UI's
//! TypeScript types are generated from that file (scripts/gen-api.sh); tests fail when either
//! has drifted from the code.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use super::catalogue;
use super::error::ErrorBody;
use super::operation::{NoInput, Operation, PathArgs, path_names};

/// A document being assembled: operations add their paths and their types' schemas.
pub(crate) struct Document {
    schemas: SchemaGenerator,
    paths: Map<String, Value>,
}

fn schema_value(schema: Schema) -> Value {
    schema.to_value()
}

/// `GetStatus` → `getStatus`.
fn operation_id<O>() -> String {
    let name = std::any::type_name::<O>()
        .rsplit("::")
        .next()
        .unwrap_or("op");
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Document {
    fn new() -> Document {
        // Outputs are the bulk of the API, so schemas describe what the server writes; inputs
        // mark their optional fields `skip_serializing_if`, which reads the same both ways.
        let settings = SchemaSettings::draft2020_12().for_serialize().with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        });
        Document {
            schemas: settings.into_generator(),
            paths: Map::new(),
        }
    }

    fn operation(&mut self, method: &str, path: &str, op: Value) {
        let item = self
            .paths
            .entry(path.to_owned())
            .or_insert_with(|| json!({}));
        item[method] = op;
    }

    fn path_parameters(path: &str, types: &[&str]) -> Vec<Value> {
        path_names(path)
            .into_iter()
            .zip(types.iter().chain(std::iter::repeat(&"string")))
            .map(|(name, ty)| {
                json!({"name": name, "in": "path", "required": true, "schema": {"type": ty}})
            })
            .collect()
    }

    /// The query parameters of a GET/DELETE input: its properties, one parameter each.
    fn query_parameters<T: JsonSchema>(&mut self) -> Vec<Value> {
        let reference = schema_value(self.schemas.subschema_for::<T>());
        let definition = match reference.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.rsplit('/').next().unwrap_or_default().to_owned();
                self.schemas
                    .definitions()
                    .get(&name)
                    .cloned()
                    .unwrap_or(Value::Null)
            }
            None => reference,
        };
        let required: Vec<&str> = definition["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        definition["properties"]
            .as_object()
            .map(|props| {
                props
                    .iter()
                    .map(|(name, schema)| {
                        let mut p = json!({
                            "name": name,
                            "in": "query",
                            "required": required.contains(&name.as_str()),
                            "schema": schema,
                        });
                        if let Some(d) = schema.get("description") {
                            p["description"] = d.clone();
                        }
                        p
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub(crate) fn add_operation<O: Operation>(&mut self) {
        let mut parameters = Self::path_parameters(O::PATH, <O::Path as PathArgs>::TYPES);
        let mut op = json!({
            "operationId": operation_id::<O>(),
            "summary": O::SUMMARY,
        });
        let no_input = std::any::TypeId::of::<O::Input>() == std::any::TypeId::of::<NoInput>();
        if O::METHOD.input_in_query() {
            if !no_input {
                parameters.extend(self.query_parameters::<O::Input>());
            }
        } else if !no_input {
            let schema = schema_value(self.schemas.subschema_for::<O::Input>());
            op["requestBody"] = json!({
                "required": false,
                "content": {"application/json": {"schema": schema}},
            });
        }
        if !parameters.is_empty() {
            op["parameters"] = Value::Array(parameters);
        }
        let output = schema_value(self.schemas.subschema_for::<O::Output>());
        op["responses"] = json!({
            "200": {"description": "OK", "content": {"application/json": {"schema": output}}},
            "default": {"$ref": "#/components/responses/Error"},
        });
        op["security"] = json!([{"bearer": []}, {"cookie": []}]);
        self.operation(O::METHOD.as_str(), O::PATH, op);
    }

    fn add_raw_routes(&mut self) {
        let error = json!({"$ref": "#/components/responses/Error"});
        let security = json!([{"bearer": []}, {"cookie": []}]);
        self.operation(
            "get",
            "/api/charts/{name}",
            json!({
                "operationId": "getChart",
                "summary": "An SVG chart: reward.svg, loss.svg, success_rate.svg, kl.svg, prm_distribution.svg, turns_per_day.svg",
                "parameters": [
                    {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "theme", "in": "query", "required": false, "schema": {"enum": ["light", "dark"]}}
                ],
                "responses": {"200": {"description": "The chart", "content": {"image/svg+xml": {"schema": {"type": "string"}}}}, "default": error},
                "security": security,
            }),
        );
        let event = schema_value(self.schemas.subschema_for::<metaclaw_domain::Event>());
        self.operation(
            "get",
            "/api/events",
            json!({
                "operationId": "streamEvents",
                "summary": "Live updates as Server-Sent Events; each `data` is an Event, the SSE event name its kind",
                "responses": {"200": {"description": "An event stream", "content": {"text/event-stream": {"schema": event}}}, "default": error},
                "security": security,
            }),
        );
        self.operation(
            "get",
            "/api/openapi.json",
            json!({
                "operationId": "getOpenapi",
                "summary": "This document",
                "responses": {"200": {"description": "The OpenAPI document", "content": {"application/json": {"schema": {"type": "object"}}}}},
                "security": security,
            }),
        );
    }
}

/// The whole document.
pub fn document() -> Value {
    let mut doc = Document::new();
    catalogue::document_operations(&mut doc);
    doc.add_raw_routes();
    let error = schema_value(doc.schemas.subschema_for::<ErrorBody>());
    let mut schemas: Vec<(String, Value)> =
        doc.schemas.take_definitions(true).into_iter().collect();
    // Stable order, so the checked-in copy only changes when the API does.
    schemas.sort_by(|a, b| a.0.cmp(&b.0));
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "MetaClaw dashboard API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The API of a running MetaClaw (daemon or tray app) on its loopback port. Errors are {\"error\": {\"code\", \"message\", \"keys\"}} with a stable code.",
        },
        "paths": doc.paths,
        "components": {
            "schemas": Map::from_iter(schemas),
            "responses": {"Error": {"description": "A failure, with a stable code", "content": {"application/json": {"schema": error}}}},
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "The per-install token in ~/.metaclaw/dashboard.token"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": super::auth::COOKIE},
            },
        },
    })
}

/// Route paths and methods the document lists, for the router/document agreement test.
#[cfg(test)]
pub(crate) fn listed_routes(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for method in item.as_object().into_iter().flatten().map(|(m, _)| m) {
            out.push((method.clone(), path.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked_in_path() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json")
    }

    /// `docs/openapi.json` is the document the code generates (run with
    /// `METACLAW_UPDATE_API=1` after changing the API, then `scripts/gen-api.sh`).
    #[test]
    fn checked_in_document_is_current() {
        let generated = serde_json::to_string_pretty(&document()).unwrap() + "\n";
        let path = checked_in_path();
        if std::env::var_os("METACLAW_UPDATE_API").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "docs/openapi.json is out of date: run `METACLAW_UPDATE_API=1 cargo test -p metaclaw-core openapi` and `scripts/gen-api.sh`"
        );
    }

    #[test]
    fn every_route_is_documented_once() {
        let doc = document();
        let mut listed = listed_routes(&doc);
        let mut expected: Vec<(String, String)> = catalogue::entries()
            .iter()
            .map(|e| (e.method.as_str().to_owned(), e.path.to_owned()))
            .chain(
                catalogue::RAW_ROUTES
                    .iter()
                    .map(|(m, p)| ((*m).to_owned(), (*p).to_owned())),
            )
            .collect();
        listed.sort();
        expected.sort();
        assert_eq!(listed, expected);
        let mut ids: Vec<&str> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|item| item.as_object().unwrap().values())
            .map(|op| op["operationId"].as_str().unwrap())
            .collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "operation ids must be unique");
    }

    #[test]
    fn references_resolve() {
        let doc = document();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let text = doc.to_string();
        for piece in text.split("\"$ref\":\"").skip(1) {
            let target = piece.split('"').next().unwrap();
            if let Some(name) = target.strip_prefix("#/components/schemas/") {
                assert!(schemas.contains_key(name), "dangling $ref {target}");
            }
        }
        // Outputs have real schemas, not "anything".
        let status = &doc["paths"]["/api/status"]["get"]["responses"]["200"];
        assert_eq!(
            status["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Status"
        );
        assert!(schemas["Status"]["properties"]["counts"].is_object());
    }
}
