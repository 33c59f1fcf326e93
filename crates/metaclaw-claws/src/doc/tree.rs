//! JSON and YAML documents as `serde_json::Value` trees (key order kept by
//! serde_json's `preserve_order`).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::keypath::{KeyPath, Segment};

pub(crate) struct JsonDoc {
    pub(crate) root: Value,
    indent: String,
    trailing_newline: bool,
}

impl JsonDoc {
    pub(crate) fn parse(text: &str) -> Result<JsonDoc, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Ok(JsonDoc {
                root: Value::Object(Map::new()),
                indent: "  ".into(),
                trailing_newline: true,
            });
        }
        let root: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if !root.is_object() {
            return Err(format!("the top level is {}, not an object", kind(&root)));
        }
        Ok(JsonDoc {
            root,
            indent: detect_indent(text).unwrap_or_else(|| "  ".into()),
            trailing_newline: text.ends_with('\n'),
        })
    }

    /// Pretty-printed with the file's own indentation and final newline.
    pub(crate) fn render(&self) -> Result<String, String> {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.indent.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        self.root.serialize(&mut ser).map_err(|e| e.to_string())?;
        let mut text = String::from_utf8(out).map_err(|e| e.to_string())?;
        if self.trailing_newline {
            text.push('\n');
        }
        Ok(text)
    }
}

/// The leading whitespace of the first indented line: one indent level in a
/// pretty-printed file.
fn detect_indent(text: &str) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let ws: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        (!ws.is_empty() && ws.len() < line.len()).then_some(ws)
    })
}

pub(crate) fn parse_yaml(text: &str) -> Result<Value, String> {
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
    options.leading_zero_numbers_as_strings = true;
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::AsString;
    let root: Value =
        serde_saphyr::from_str_with_options(text, options).map_err(|e| e.to_string())?;
    match root {
        Value::Null => Ok(Value::Object(Map::new())),
        Value::Object(_) => Ok(root),
        other => Err(format!("the top level is {}, not a mapping", kind(&other))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn matches(element: &Value, key: &str, value: &str) -> bool {
    match element.get(key) {
        Some(Value::String(s)) => s == value,
        Some(Value::Number(n)) => n.to_string() == value,
        _ => false,
    }
}

pub(crate) fn get<'a>(root: &'a Value, path: &KeyPath) -> Option<&'a Value> {
    let mut node = root;
    for seg in path.segments() {
        node = match seg {
            Segment::Key(k) => node.as_object()?.get(k)?,
            Segment::Select { list, key, value } => node
                .as_object()?
                .get(list)?
                .as_array()?
                .iter()
                .find(|e| matches(e, key, value))?,
        };
    }
    Some(node)
}

pub(crate) fn set(root: &mut Value, path: &KeyPath, value: &Value) -> Result<(), String> {
    set_in(root, path.segments(), value, "")
}

fn set_in(node: &mut Value, segs: &[Segment], value: &Value, at: &str) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else {
        return Ok(());
    };
    if node.is_null() {
        *node = Value::Object(Map::new());
    }
    let here = if at.is_empty() { "the top level" } else { at };
    let Value::Object(map) = node else {
        return Err(format!("{here} is {}, not a mapping", kind(node)));
    };
    match seg {
        Segment::Key(k) => {
            let child_at = join(at, k);
            if rest.is_empty() {
                // `insert` keeps an existing key where it is.
                map.insert(k.clone(), value.clone());
                return Ok(());
            }
            let child = map
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            set_in(child, rest, value, &child_at)
        }
        Segment::Select {
            list,
            key,
            value: want,
        } => {
            let list_at = join(at, list);
            let arr = map
                .entry(list.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            if arr.is_null() {
                *arr = Value::Array(Vec::new());
            }
            let Value::Array(items) = arr else {
                return Err(format!("{list_at} is {}, not a list", kind(arr)));
            };
            let found = items.iter().position(|e| matches(e, key, want));
            let elem_at = format!("{list_at}[{key}={want}]");
            if rest.is_empty() {
                let Value::Object(fields) = value else {
                    return Err(format!("{elem_at} must be set to a mapping"));
                };
                let mut element = Map::new();
                element.insert(key.clone(), Value::String(want.clone()));
                for (k, v) in fields {
                    element.insert(k.clone(), v.clone());
                }
                match found {
                    Some(i) => items[i] = Value::Object(element),
                    None => items.push(Value::Object(element)),
                }
                return Ok(());
            }
            let i = match found {
                Some(i) => i,
                None => {
                    let mut element = Map::new();
                    element.insert(key.clone(), Value::String(want.clone()));
                    items.push(Value::Object(element));
                    items.len() - 1
                }
            };
            set_in(&mut items[i], rest, value, &elem_at)
        }
    }
}

/// Remove what `path` names (a key, or the selected list element); a missing path is
/// already removed.
pub(crate) fn remove(root: &mut Value, path: &KeyPath) {
    let Some((last, parents)) = path.segments().split_last() else {
        return;
    };
    let mut node = root;
    for seg in parents {
        let next = match seg {
            Segment::Key(k) => node.as_object_mut().and_then(|m| m.get_mut(k)),
            Segment::Select { list, key, value } => node
                .as_object_mut()
                .and_then(|m| m.get_mut(list))
                .and_then(Value::as_array_mut)
                .and_then(|items| items.iter_mut().find(|e| matches(e, key, value))),
        };
        match next {
            Some(n) => node = n,
            None => return,
        }
    }
    let Some(map) = node.as_object_mut() else {
        return;
    };
    match last {
        Segment::Key(k) => {
            map.shift_remove(k);
        }
        Segment::Select { list, key, value } => {
            if let Some(items) = map.get_mut(list).and_then(Value::as_array_mut) {
                items.retain(|e| !matches(e, key, value));
            }
        }
    }
}

fn join(at: &str, k: &str) -> String {
    if at.is_empty() {
        k.to_string()
    } else {
        format!("{at}.{k}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kp(s: &str) -> KeyPath {
        KeyPath::parse(s).unwrap()
    }

    #[test]
    fn sets_nested_keys_in_place_and_creates_missing_ones() {
        let mut v = json!({"a": {"x": 1, "b": 2, "y": 3}});
        set(&mut v, &kp("a.b"), &json!("new")).unwrap();
        set(&mut v, &kp("c.d.e"), &json!(true)).unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"a":{"x":1,"b":"new","y":3},"c":{"d":{"e":true}}}"#
        );
    }

    #[test]
    fn upserts_list_elements_by_field() {
        let mut v = json!({"l": [{"name": "other", "v": 1}, {"name": "mc", "old": true}]});
        set(&mut v, &kp("l[name=mc]"), &json!({"v": 2})).unwrap();
        set(&mut v, &kp("l[name=new].v"), &json!(3)).unwrap();
        assert_eq!(
            v,
            json!({"l": [{"name": "other", "v": 1}, {"name": "mc", "v": 2}, {"name": "new", "v": 3}]})
        );
        assert_eq!(get(&v, &kp("l[name=new].v")), Some(&json!(3)));
        assert_eq!(get(&v, &kp("l[name=none]")), None);
    }

    #[test]
    fn refuses_to_replace_scalars_with_mappings() {
        let mut v = json!({"model": "gpt-4"});
        let e = set(&mut v, &kp("model.default"), &json!("x")).unwrap_err();
        assert_eq!(e, "model is a string, not a mapping");
        let mut v = json!({"l": 3});
        assert!(set(&mut v, &kp("l[name=a]"), &json!({})).is_err());
    }

    #[test]
    fn json_keeps_indentation_and_final_newline() {
        let d = JsonDoc::parse("{\n    \"a\": [1, 2]\n}").unwrap();
        assert_eq!(
            d.render().unwrap(),
            "{\n    \"a\": [\n        1,\n        2\n    ]\n}"
        );
        let d = JsonDoc::parse("").unwrap();
        assert_eq!(d.render().unwrap(), "{}\n");
        assert!(JsonDoc::parse("[1]").is_err());
    }
}
