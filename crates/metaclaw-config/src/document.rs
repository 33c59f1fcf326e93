//! The raw YAML document, kept as a JSON-like tree so unknown keys and key
//! order survive `metaclaw config KEY VALUE` round trips.

use serde_json::{Map, Value};

use crate::error::ConfigError;

#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Always an object.
    root: Value,
}

impl Default for Document {
    fn default() -> Self {
        Document::empty()
    }
}

impl Document {
    pub fn empty() -> Document {
        Document {
            root: Value::Object(Map::new()),
        }
    }

    /// Parse YAML; an empty (or comment-only) file is an empty mapping.
    pub fn parse(yaml: &str) -> Result<Document, ConfigError> {
        let root: Value =
            serde_saphyr::from_str_with_options(yaml, parse_options()).map_err(|e| {
                let location = e.location();
                ConfigError::Yaml {
                    message: e.without_snippet().to_string(),
                    line: location.map(|l| l.line()),
                    column: location.map(|l| l.column()),
                }
            })?;
        match root {
            Value::Null => Ok(Document::empty()),
            Value::Object(_) => Ok(Document { root }),
            other => Err(ConfigError::NotAMapping {
                found: type_name(&other),
            }),
        }
    }

    pub fn to_yaml(&self) -> Result<String, ConfigError> {
        serde_saphyr::to_string(&self.root).map_err(|e| ConfigError::Serialize(e.to_string()))
    }

    /// Value at a dotted key (`"llm.api_key"`), if present.
    pub fn get(&self, dotted: &str) -> Option<&Value> {
        let mut node = &self.root;
        for segment in dotted.split('.') {
            node = node.as_object()?.get(segment)?;
        }
        Some(node)
    }

    /// Set a dotted key from a command-line string, coercing like upstream
    /// (see [`coerce`]). Returns the stored value.
    pub fn set_str(&mut self, dotted: &str, raw: &str) -> Result<Value, ConfigError> {
        let value = coerce(raw);
        self.set(dotted, value.clone())?;
        Ok(value)
    }

    /// Set a dotted key, creating intermediate mappings (a null one is replaced).
    /// An existing key keeps its position; a new one is appended.
    pub fn set(&mut self, dotted: &str, value: Value) -> Result<(), ConfigError> {
        let segments: Vec<&str> = dotted.split('.').collect();
        if segments.iter().any(|s| s.trim().is_empty()) {
            return Err(ConfigError::InvalidKey {
                key: dotted.to_owned(),
                reason: "expected dot-separated, non-empty names such as `proxy.port`".to_owned(),
            });
        }
        let (last, parents) = segments.split_last().expect("split yields one segment");
        let mut node = &mut self.root;
        for (depth, segment) in parents.iter().enumerate() {
            let map = node
                .as_object_mut()
                .expect("walk only descends into objects");
            let child = map
                .entry(segment.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if child.is_null() {
                *child = Value::Object(Map::new());
            }
            if !child.is_object() {
                return Err(ConfigError::InvalidKey {
                    key: dotted.to_owned(),
                    reason: format!(
                        "`{}` is {}, not a mapping",
                        segments[..=depth].join("."),
                        type_name(child)
                    ),
                });
            }
            node = child;
        }
        node.as_object_mut()
            .expect("walk only descends into objects")
            .insert(last.to_string(), value);
        Ok(())
    }

    pub fn as_value(&self) -> &Value {
        &self.root
    }
}

/// Upstream's CLI coercion: `true`/`false` (any case) become booleans, then
/// integers, then floats; anything else stays a string. Deliberate deviation:
/// numbers written with redundant leading zeros (`007`, `0700`) stay strings,
/// since they are identifiers or times far more often than quantities, and
/// non-finite floats (`inf`, `nan`) stay strings because YAML/JSON cannot
/// round-trip them as numbers here.
pub fn coerce(raw: &str) -> Value {
    if raw.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if raw.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if has_redundant_leading_zero(raw) {
        return Value::String(raw.to_owned());
    }
    if let Ok(n) = raw.parse::<i64>() {
        return Value::from(n);
    }
    if let Ok(n) = raw.parse::<u64>() {
        return Value::from(n);
    }
    if looks_like_decimal(raw)
        && let Ok(f) = raw.parse::<f64>()
        && f.is_finite()
    {
        return Value::from(f);
    }
    Value::String(raw.to_owned())
}

fn has_redundant_leading_zero(raw: &str) -> bool {
    let digits = raw.strip_prefix(['+', '-']).unwrap_or(raw);
    let int_part: &str = digits.split(['.', 'e', 'E']).next().unwrap_or("");
    int_part.len() > 1 && int_part.starts_with('0') && int_part.bytes().all(|b| b.is_ascii_digit())
}

/// Rust's float parser also accepts "inf", "NaN" and "infinity"; keep those as text.
fn looks_like_decimal(raw: &str) -> bool {
    raw.bytes().any(|b| b.is_ascii_digit())
        && raw
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
}

fn parse_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    // PyYAML keeps the last of duplicate keys; refusing such a file would break upstream configs.
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    // `0700` in a hand-written file is far more likely a time or id than an octal number.
    options.leading_zero_numbers_as_strings = true;
    // JSON has no infinity; keep the spelling so validation can name it.
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::AsString;
    options
}

pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_and_comment_only_files_are_empty_mappings() {
        assert_eq!(Document::parse("").unwrap(), Document::empty());
        assert_eq!(Document::parse("# nothing\n").unwrap(), Document::empty());
        assert_eq!(Document::parse("{}").unwrap().as_value(), &json!({}));
    }

    #[test]
    fn non_mapping_root_is_rejected() {
        let err = Document::parse("- a\n- b\n").unwrap_err();
        assert!(matches!(
            err,
            ConfigError::NotAMapping {
                found: "a sequence"
            }
        ));
    }

    #[test]
    fn syntax_error_reports_line_and_column() {
        let err = Document::parse("llm:\n  provider: kimi\n model_id: x\n").unwrap_err();
        let ConfigError::Yaml { line, column, .. } = &err else {
            panic!("expected a YAML error, got {err:?}");
        };
        assert_eq!((*line, *column), (Some(3), Some(2)));
        let text = err.to_string();
        assert!(text.contains("line 3, column 2"), "{text}");

        let err = Document::parse("proxy: [1\n").unwrap_err();
        assert!(err.to_string().contains("line 1, column 8"), "{err}");
    }

    #[test]
    fn get_walks_dotted_keys() {
        let doc = Document::parse("llm:\n  provider: kimi\nproxy:\n  port: 30000\n").unwrap();
        assert_eq!(doc.get("llm.provider"), Some(&json!("kimi")));
        assert_eq!(doc.get("proxy.port"), Some(&json!(30000)));
        assert_eq!(doc.get("proxy"), Some(&json!({"port": 30000})));
        assert_eq!(doc.get("llm.provider.x"), None);
        assert_eq!(doc.get("nope"), None);
    }

    #[test]
    fn set_str_coercion() {
        let mut doc = Document::empty();
        assert_eq!(doc.set_str("a", "true").unwrap(), json!(true));
        assert_eq!(doc.set_str("a", "False").unwrap(), json!(false));
        assert_eq!(doc.set_str("a", "42").unwrap(), json!(42));
        assert_eq!(doc.set_str("a", "-3").unwrap(), json!(-3));
        assert_eq!(doc.set_str("a", "0").unwrap(), json!(0));
        assert_eq!(doc.set_str("a", "1.5").unwrap(), json!(1.5));
        assert_eq!(doc.set_str("a", "1e3").unwrap(), json!(1000.0));
        assert_eq!(doc.set_str("a", "0.5").unwrap(), json!(0.5));
        assert_eq!(doc.set_str("a", "hello").unwrap(), json!("hello"));
        assert_eq!(doc.set_str("a", "007").unwrap(), json!("007"));
        assert_eq!(doc.set_str("a", "0700").unwrap(), json!("0700"));
        assert_eq!(doc.set_str("a", "inf").unwrap(), json!("inf"));
        assert_eq!(doc.set_str("a", "NaN").unwrap(), json!("NaN"));
        assert_eq!(doc.set_str("a", "").unwrap(), json!(""));
        assert_eq!(doc.set_str("a", "sk-123").unwrap(), json!("sk-123"));
        assert_eq!(doc.set_str("a", "23:00").unwrap(), json!("23:00"));
        assert_eq!(doc.get("a"), Some(&json!("23:00")));
    }

    #[test]
    fn set_creates_intermediate_mappings_and_keeps_order() {
        let mut doc = Document::parse("b: 1\nrl:\n  x: 1\n  y: 2\nopd:\n").unwrap();
        doc.set("rl.x", json!(9)).unwrap();
        doc.set("new.deep.key", json!("v")).unwrap();
        doc.set("opd.enabled", json!(true)).unwrap();
        assert_eq!(
            serde_json::to_string(doc.as_value()).unwrap(),
            r#"{"b":1,"rl":{"x":9,"y":2},"opd":{"enabled":true},"new":{"deep":{"key":"v"}}}"#
        );
    }

    #[test]
    fn set_through_a_scalar_or_with_empty_segments_fails() {
        let mut doc = Document::parse("mode: rl\n").unwrap();
        let err = doc.set_str("mode.x", "1").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid key `mode.x`: `mode` is a string, not a mapping"
        );
        for bad in ["", ".a", "a..b", "a."] {
            assert!(
                matches!(doc.set_str(bad, "1"), Err(ConfigError::InvalidKey { .. })),
                "{bad:?}"
            );
        }
        assert_eq!(doc.as_value(), &json!({"mode": "rl"}));
    }

    #[test]
    fn yaml_round_trip_keeps_unknown_keys_and_order() {
        let src = "zeta: 1\nmode: rl\ncustom:\n  b: [1, 2]\n  a: '0700'\nllm:\n  provider: kimi\n";
        let doc = Document::parse(src).unwrap();
        let yaml = doc.to_yaml().unwrap();
        let again = Document::parse(&yaml).unwrap();
        assert_eq!(again, doc);
        let keys: Vec<&String> = again.as_value().as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zeta", "mode", "custom", "llm"]);
        assert_eq!(again.get("custom.a"), Some(&json!("0700")));
    }

    #[test]
    fn yaml_scalar_resolution() {
        let doc =
            Document::parse("a: yes\nb: 0700\nc: .inf\nd: 23:00\ne: ~\nk: 1\nk: 2\n").unwrap();
        assert_eq!(
            doc.as_value(),
            &json!({"a": true, "b": "0700", "c": ".inf", "d": "23:00", "e": null, "k": 2})
        );
    }
}
