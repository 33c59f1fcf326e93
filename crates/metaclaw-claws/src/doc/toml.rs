//! TOML through `toml_edit`: comments, ordering and layout survive; a
//! replaced value keeps its surrounding whitespace and trailing comment.

use serde_json::{Map, Value};
use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, TableLike};

use crate::keypath::{KeyPath, Segment};

enum Node<'a> {
    Item(&'a Item),
    Table(&'a Table),
    Value(&'a toml_edit::Value),
}

pub(crate) fn get(doc: &DocumentMut, path: &KeyPath) -> Option<Value> {
    get_node(Node::Item(doc.as_item()), path.segments())
}

fn get_node(node: Node<'_>, segs: &[Segment]) -> Option<Value> {
    let Some((seg, rest)) = segs.split_first() else {
        return Some(match node {
            Node::Item(i) => item_to_json(i),
            Node::Table(t) => table_to_json(t),
            Node::Value(v) => value_to_json(v),
        });
    };
    let table: &dyn TableLike = match node {
        Node::Item(i) => i.as_table_like()?,
        Node::Table(t) => t,
        Node::Value(v) => v.as_inline_table()?,
    };
    match seg {
        Segment::Key(k) => get_node(Node::Item(table.get(k)?), rest),
        Segment::Select { list, key, value } => {
            let list_item = table.get(list)?;
            if let Some(aot) = list_item.as_array_of_tables() {
                let t = aot.iter().find(|t| item_matches(t.get(key), value))?;
                return get_node(Node::Table(t), rest);
            }
            let v = list_item.as_array()?.iter().find(|v| {
                v.as_inline_table()
                    .is_some_and(|t| value_matches(t.get(key), value))
            })?;
            get_node(Node::Value(v), rest)
        }
    }
}

fn item_matches(item: Option<&Item>, want: &str) -> bool {
    item.and_then(Item::as_value)
        .is_some_and(|v| value_matches(Some(v), want))
}

fn value_matches(v: Option<&toml_edit::Value>, want: &str) -> bool {
    match v {
        Some(toml_edit::Value::String(s)) => s.value() == want,
        Some(toml_edit::Value::Integer(i)) => i.value().to_string() == want,
        _ => false,
    }
}

pub(crate) fn set(doc: &mut DocumentMut, path: &KeyPath, value: &Value) -> Result<(), String> {
    set_in(doc.as_table_mut(), false, path.segments(), value, "")
}

fn join(at: &str, k: &str) -> String {
    if at.is_empty() {
        k.to_string()
    } else {
        format!("{at}.{k}")
    }
}

fn set_in(
    table: &mut dyn TableLike,
    inline: bool,
    segs: &[Segment],
    value: &Value,
    at: &str,
) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else {
        return Ok(());
    };
    match seg {
        Segment::Key(k) => {
            let child_at = join(at, k);
            if rest.is_empty() {
                let new = json_to_item(value, !inline)
                    .ok_or_else(|| format!("{child_at}: TOML has no null"))?;
                match table.get_mut(k) {
                    // In place, so the key's own formatting and comments stay.
                    Some(existing) => replace_keeping_decor(existing, new),
                    None => {
                        table.insert(k, new);
                    }
                }
                return Ok(());
            }
            if table.get(k).is_none() {
                let child = if inline {
                    Item::Value(toml_edit::Value::InlineTable(InlineTable::new()))
                } else {
                    let mut t = Table::new();
                    // No `[a]` header for a table that only holds `[a.b]`.
                    t.set_implicit(true);
                    Item::Table(t)
                };
                table.insert(k, child);
            }
            let child = table.get_mut(k).ok_or("vanished")?;
            let child_inline = child.is_inline_table();
            let type_name = child.type_name();
            let child_table = child
                .as_table_like_mut()
                .ok_or_else(|| format!("{child_at} is {type_name}, not a table"))?;
            set_in(child_table, child_inline, rest, value, &child_at)
        }
        Segment::Select {
            list,
            key,
            value: want,
        } => {
            let list_at = join(at, list);
            let elem_at = format!("{list_at}[{key}={want}]");
            if table.get(list).is_none() {
                let empty = if inline {
                    Item::Value(toml_edit::Value::Array(Array::new()))
                } else {
                    Item::ArrayOfTables(ArrayOfTables::new())
                };
                table.insert(list, empty);
            }
            let list_item = table.get_mut(list).ok_or("vanished")?;
            let type_name = list_item.type_name();
            if let Some(aot) = list_item.as_array_of_tables_mut() {
                let found = aot.iter().position(|t| item_matches(t.get(key), want));
                if rest.is_empty() {
                    let element = element_table(key, want, value, &elem_at)?;
                    match found {
                        Some(i) => {
                            let old = aot.get(i).ok_or("vanished")?;
                            let mut element = element;
                            *element.decor_mut() = old.decor().clone();
                            aot.replace(i, element);
                        }
                        None => aot.push(element),
                    }
                    return Ok(());
                }
                let i = match found {
                    Some(i) => i,
                    None => {
                        let mut t = Table::new();
                        t.insert(key, toml_edit::value(want.as_str()));
                        aot.push(t);
                        aot.len() - 1
                    }
                };
                let t = aot.get_mut(i).ok_or("vanished")?;
                return set_in(t, false, rest, value, &elem_at);
            }
            if let Some(arr) = list_item.as_array_mut() {
                let found = arr.iter().position(|v| {
                    v.as_inline_table()
                        .is_some_and(|t| value_matches(t.get(key), want))
                });
                if rest.is_empty() {
                    let element = element_table(key, want, value, &elem_at)?.into_inline_table();
                    match found {
                        Some(i) => {
                            let old_decor = arr.get(i).ok_or("vanished")?.decor().clone();
                            let mut v = toml_edit::Value::InlineTable(element);
                            *v.decor_mut() = old_decor;
                            arr.replace(i, v);
                        }
                        None => arr.push(element),
                    }
                    return Ok(());
                }
                let i = match found {
                    Some(i) => i,
                    None => {
                        let mut t = InlineTable::new();
                        t.insert(key, want.as_str().into());
                        arr.push(t);
                        arr.len() - 1
                    }
                };
                let t = arr
                    .get_mut(i)
                    .and_then(toml_edit::Value::as_inline_table_mut)
                    .ok_or_else(|| format!("{elem_at} is not a table"))?;
                return set_in(t, true, rest, value, &elem_at);
            }
            Err(format!("{list_at} is {type_name}, not a list of tables"))
        }
    }
}

/// A table for a selected list element: the selector field first, then
/// the given fields.
fn element_table(key: &str, want: &str, value: &Value, at: &str) -> Result<Table, String> {
    let Value::Object(fields) = value else {
        return Err(format!("{at} must be set to a table"));
    };
    let mut t = Table::new();
    t.insert(key, toml_edit::value(want));
    for (k, v) in fields {
        let item = json_to_item(v, false).ok_or_else(|| format!("{at}.{k}: TOML has no null"))?;
        t.insert(k, item);
    }
    Ok(t)
}

fn replace_keeping_decor(existing: &mut Item, mut new: Item) {
    match (&*existing, &mut new) {
        (Item::Value(old), Item::Value(n)) => *n.decor_mut() = old.decor().clone(),
        (Item::Table(old), Item::Table(n)) => {
            *n.decor_mut() = old.decor().clone();
            n.set_position(old.position());
        }
        _ => {}
    }
    *existing = new;
}

/// JSON to TOML. Objects become `[tables]` when `tables_allowed`, inline
/// tables otherwise; `None` for null.
fn json_to_item(value: &Value, tables_allowed: bool) -> Option<Item> {
    if let (Value::Object(map), true) = (value, tables_allowed) {
        let mut t = Table::new();
        for (k, v) in map {
            t.insert(k, json_to_item(v, false)?);
        }
        return Some(Item::Table(t));
    }
    json_to_value(value).map(Item::Value)
}

fn json_to_value(value: &Value) -> Option<toml_edit::Value> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(items) => {
            let mut arr = Array::new();
            for v in items {
                arr.push(json_to_value(v)?);
            }
            toml_edit::Value::Array(arr)
        }
        Value::Object(map) => {
            let mut t = InlineTable::new();
            for (k, v) in map {
                t.insert(k, json_to_value(v)?);
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

pub(crate) fn item_to_json(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(v) => value_to_json(v),
        Item::Table(t) => table_to_json(t),
        Item::ArrayOfTables(aot) => Value::Array(aot.iter().map(table_to_json).collect()),
    }
}

fn table_to_json(t: &Table) -> Value {
    Value::Object(
        t.iter()
            .map(|(k, v)| (k.to_string(), item_to_json(v)))
            .collect::<Map<_, _>>(),
    )
}

fn value_to_json(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => Value::from(*f.value()),
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(value_to_json).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kp(s: &str) -> KeyPath {
        KeyPath::parse(s).unwrap()
    }

    fn doc(s: &str) -> DocumentMut {
        s.parse().unwrap()
    }

    #[test]
    fn replaces_values_keeping_comments() {
        let mut d = doc(
            "# top\n# about the key\napi_key = \"old\"  # trailing\nother = 1\n\n[gateway]\nport = 3000\n",
        );
        set(&mut d, &kp("api_key"), &json!("new")).unwrap();
        set(&mut d, &kp("default_model"), &json!("m")).unwrap();
        assert_eq!(
            d.to_string(),
            "# top\n# about the key\napi_key = \"new\"  # trailing\nother = 1\ndefault_model = \"m\"\n\n[gateway]\nport = 3000\n"
        );
        assert_eq!(get(&d, &kp("gateway.port")), Some(json!(3000)));
        assert_eq!(get(&d, &kp("api_key")), Some(json!("new")));
    }

    #[test]
    fn creates_nested_tables_without_empty_headers() {
        let mut d = doc("schema_version = 3\n");
        set(
            &mut d,
            &kp("providers.models.custom.metaclaw.uri"),
            &json!("http://x/v1"),
        )
        .unwrap();
        set(
            &mut d,
            &kp("providers.models.custom.metaclaw.max_tokens"),
            &json!(8192),
        )
        .unwrap();
        assert_eq!(
            d.to_string(),
            "schema_version = 3\n\n[providers.models.custom.metaclaw]\nuri = \"http://x/v1\"\nmax_tokens = 8192\n"
        );
        assert_eq!(
            get(&d, &kp("providers.models.custom.metaclaw")),
            Some(json!({"uri": "http://x/v1", "max_tokens": 8192}))
        );
    }

    #[test]
    fn upserts_arrays_of_tables_and_inline_arrays() {
        let mut d = doc(
            "[[routes]]\nhint = \"fast\"\nmodel = \"a\"\n\n[[routes]]\nhint = \"mc\"\nmodel = \"old\"\n",
        );
        set(&mut d, &kp("routes[hint=mc]"), &json!({"model": "new"})).unwrap();
        set(&mut d, &kp("routes[hint=deep].model"), &json!("d")).unwrap();
        assert_eq!(
            d.to_string(),
            "[[routes]]\nhint = \"fast\"\nmodel = \"a\"\n\n[[routes]]\nhint = \"mc\"\nmodel = \"new\"\n\n[[routes]]\nhint = \"deep\"\nmodel = \"d\"\n"
        );
        assert_eq!(get(&d, &kp("routes[hint=deep].model")), Some(json!("d")));

        let mut d = doc("l = [{ n = \"a\", v = 1 }]\n");
        set(&mut d, &kp("l[n=b]"), &json!({"v": 2})).unwrap();
        assert_eq!(
            d.to_string(),
            "l = [{ n = \"a\", v = 1 }, { n = \"b\", v = 2 }]\n"
        );
        assert_eq!(get(&d, &kp("l[n=b]")), Some(json!({"n": "b", "v": 2})));
        assert_eq!(get(&d, &kp("l[n=b].v")), Some(json!(2)));
    }

    #[test]
    fn refuses_to_nest_under_a_value() {
        let mut d = doc("model = \"x\"\n");
        let e = set(&mut d, &kp("model.name"), &json!("y")).unwrap_err();
        assert!(e.contains("model is string"), "{e}");
    }
}
