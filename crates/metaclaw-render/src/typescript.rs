//! Kimi K2.5's tool declarations: its tokenizer's `apply_chat_template` sorts the tools' keys
//! and writes each function as a TypeScript type in a `functions` namespace (JSON Schema
//! descriptions and constraints become `//` comments, required fields come first, both halves
//! sorted by name). A schema it cannot express makes the whole list fall back to compact JSON;
//! [`declare`] returns `None` for exactly those, so the caller does the same.
//!
//! The output must match the tokenizer's text character for character (the model was trained
//! on it); `tests/golden/kimi_k25_tools*.txt` were written by that converter.

use serde_json::{Map, Value};

use crate::json::{python_dumps, python_str};

const INDENT: &str = "  ";

/// The `tool_declare` text for OpenAI-shaped, key-sorted tools, or `None` when a schema has a
/// construct the format cannot express (`oneOf`, `allOf`, `const`, a `$ref` outside `$defs`,
/// a typeless schema, …).
pub(crate) fn declare(tools: &[Value]) -> Option<String> {
    let mut functions = Vec::new();
    for tool in tools {
        if tool.get("type").and_then(Value::as_str) != Some("function") {
            continue;
        }
        match tool.get("function") {
            Some(Value::Object(f)) if !f.is_empty() => functions.push(function(f)?),
            _ => {}
        }
    }
    if functions.is_empty() {
        return None;
    }
    Some(format!(
        "# Tools\n\n## functions\nnamespace functions {{\n{}\n}}\n",
        functions.join("\n")
    ))
}

fn function(f: &Map<String, Value>) -> Option<String> {
    let mut defs = Defs::default();
    let empty = Value::Object(Map::new());
    let parameters = match f.get("parameters") {
        None | Some(Value::Null) => &empty,
        Some(p) => p,
    };
    let Value::Object(params) = parameters else {
        return None;
    };
    let root = object(params, &mut defs)?;
    let Ty::Object { props, .. } = &root.ty else {
        return None;
    };

    let mut interfaces = Vec::new();
    // A `"$ref": "#"` (recursion into the parameters) names the root `parameters`.
    let self_ref = defs.self_ref;
    if self_ref {
        let fields: Vec<String> = props.iter().map(|p| p.render(INDENT)).collect();
        interfaces.push(format!("interface parameters {{{}}}", wrap_lines(&fields)));
    }
    // Only the definitions known now: ones registered while rendering these are not listed.
    for (name, schema) in defs.list.clone() {
        let node = parse(&schema, &mut defs)?;
        let description = description_of(schema.get("description"))?;
        let doc = if description.is_empty() {
            String::new()
        } else {
            comment(&description, "") + "\n"
        };
        interfaces.push(format!("{doc}interface {name} {}", node.render("")));
    }

    let name = match f.get("name") {
        Some(Value::String(n)) => n.clone(),
        None => "function".to_owned(),
        Some(_) => return None,
    };
    let signature = if self_ref {
        "parameters".to_owned()
    } else {
        root.render("")
    };
    let description = description_of(f.get("description"))?;
    let parts = [
        interfaces.join("\n"),
        if description.is_empty() {
            String::new()
        } else {
            comment(&description, "")
        },
        format!("type {name} = (_: {signature}) => any;"),
    ];
    Some(
        parts
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// `$defs` in the order they were met, and whether the root refers to itself.
#[derive(Default)]
struct Defs {
    list: Vec<(String, Value)>,
    self_ref: bool,
}

impl Defs {
    fn register(&mut self, defs: &Value) -> Option<()> {
        match defs {
            Value::Null => Some(()),
            Value::Object(map) => {
                for (name, schema) in map {
                    match self.list.iter_mut().find(|(n, _)| n == name) {
                        Some(slot) => slot.1 = schema.clone(),
                        None => self.list.push((name.clone(), schema.clone())),
                    }
                }
                Some(())
            }
            _ => None,
        }
    }

    /// The type name a `$ref` stands for.
    fn resolve(&mut self, reference: &str) -> Option<String> {
        if reference == "#" {
            self.self_ref = true;
            return Some("parameters".to_owned());
        }
        let name = reference.strip_prefix("#/$defs/")?;
        let name = name.rsplit('/').next().unwrap_or(name);
        self.list
            .iter()
            .any(|(n, _)| n == name)
            .then(|| name.to_owned())
    }
}

struct Node {
    ty: Ty,
    description: String,
    /// `name: value` pairs, sorted by name.
    constraints: Vec<(String, String)>,
}

enum Ty {
    Scalar(String),
    Object {
        props: Vec<Param>,
        additional: Option<Additional>,
    },
    Array(Box<Node>),
    Enum(Vec<String>),
    AnyOf(Vec<Node>),
    Union(Vec<&'static str>),
    Ref(String),
}

enum Additional {
    Any,
    Never,
    Node(Box<Node>),
}

struct Param {
    name: String,
    node: Node,
    optional: bool,
    default: Option<String>,
}

fn parse(schema: &Value, defs: &mut Defs) -> Option<Node> {
    let o = match schema {
        Value::Bool(true) => return Some(scalar("any")),
        Value::Bool(false) => return Some(scalar("null")),
        Value::Object(o) => o,
        _ => return None,
    };
    let description = description_of(o.get("description"))?;
    let node = |ty| Node {
        ty,
        description: description.clone(),
        constraints: Vec::new(),
    };
    if let Some(reference) = o.get("$ref") {
        return Some(node(Ty::Ref(defs.resolve(reference.as_str()?)?)));
    }
    if let Some(any_of) = o.get("anyOf") {
        let types = any_of
            .as_array()?
            .iter()
            .map(|t| parse(t, defs))
            .collect::<Option<Vec<_>>>()?;
        return Some(node(Ty::AnyOf(types)));
    }
    if let Some(values) = o.get("enum") {
        return Some(node(Ty::Enum(enumeration(
            values.as_array()?,
            o.get("type"),
        )?)));
    }
    match o.get("type") {
        Some(Value::Array(types)) => {
            let names = types
                .iter()
                .map(|t| union_member(t.as_str()?))
                .collect::<Option<Vec<_>>>()?;
            Some(node(Ty::Union(names)))
        }
        Some(Value::String(t)) if t == "object" => object(o, defs),
        Some(Value::String(t)) if t == "array" => {
            let item = match o.get("items") {
                Some(items) if truthy(items) => parse(items, defs)?,
                _ => scalar("any"),
            };
            Some(Node {
                ty: Ty::Array(Box::new(item)),
                description,
                constraints: constraints(o, &["maxItems", "minItems"])?,
            })
        }
        Some(Value::String(t)) => {
            let allowed: &[&str] = match t.as_str() {
                "string" => &["maxLength", "minLength", "pattern"],
                "number" | "integer" => &["maximum", "minimum"],
                _ => &[],
            };
            Some(Node {
                ty: Ty::Scalar(t.clone()),
                description,
                constraints: constraints(o, allowed)?,
            })
        }
        Some(_) => None,
        None if o.is_empty() => Some(scalar("any")),
        None => None,
    }
}

fn object(o: &Map<String, Value>, defs: &mut Defs) -> Option<Node> {
    let description = description_of(o.get("description"))?;
    if let Some(d) = o.get("$defs") {
        defs.register(d)?;
    }
    let additional = match o.get("additionalProperties") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(true)) => Some(Additional::Any),
        Some(Value::Bool(false)) => Some(Additional::Never),
        Some(schema @ Value::Object(_)) => Some(Additional::Node(Box::new(parse(schema, defs)?))),
        Some(_) => return None,
    };
    let mut props = Vec::new();
    if let Some(properties) = o.get("properties") {
        let required: Vec<&str> = match o.get("required") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            Some(_) => return None,
        };
        for (name, schema) in properties.as_object()? {
            let default = match schema.get("default") {
                None | Some(Value::Null) => None,
                Some(v @ (Value::Bool(_) | Value::Number(_))) => python_str(v),
                Some(v) => Some(python_dumps(v)),
            };
            props.push(Param {
                name: name.clone(),
                node: parse(schema, defs)?,
                optional: !required.contains(&name.as_str()),
                default,
            });
        }
    }
    Some(Node {
        ty: Ty::Object { props, additional },
        description,
        constraints: Vec::new(),
    })
}

fn scalar(name: &str) -> Node {
    Node {
        ty: Ty::Scalar(name.to_owned()),
        description: String::new(),
        constraints: Vec::new(),
    }
}

fn union_member(t: &str) -> Option<&'static str> {
    Some(match t {
        "string" => "string",
        "number" | "integer" => "number",
        "boolean" => "boolean",
        "null" => "null",
        "object" => "{}",
        "array" => "Array<any>",
        _ => return None,
    })
}

/// Enum members as TypeScript literals, checked against a declared `type` the way the
/// tokenizer checks them (it rejects, and so falls back, on a mismatch).
fn enumeration(values: &[Value], declared: Option<&Value>) -> Option<Vec<String>> {
    let declared = match declared {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => match ts.as_slice() {
            [t] => Some(t.as_str()?),
            [a, b] if a == "null" => Some(b.as_str()?),
            [a, b] if b == "null" => Some(a.as_str()?),
            _ => return None,
        },
        Some(_) => return None,
    };
    values
        .iter()
        .map(|v| {
            let fits = match (declared, v) {
                (_, Value::Null) | (None, _) => true,
                (Some("string"), v) => v.is_string(),
                // Python's bool is an int, so booleans pass as numbers.
                (Some("number"), v) => v.is_number() || v.is_boolean(),
                (Some("integer"), v) => v.is_i64() || v.is_u64() || v.is_boolean(),
                (Some("boolean"), v) => v.is_boolean(),
                (Some(_), _) => true,
            };
            if !fits {
                return None;
            }
            match v {
                Value::String(s) => Some(format!("\"{s}\"")),
                other => python_str(other),
            }
        })
        .collect()
}

fn constraints(o: &Map<String, Value>, allowed: &[&str]) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for key in allowed {
        if let Some(v) = o.get(*key) {
            out.push(((*key).to_owned(), python_str(v)?));
        }
    }
    out.sort();
    Some(out)
}

/// A description as text: absent, null or empty mean none; anything but a string is a schema
/// the format cannot express.
fn description_of(value: Option<&Value>) -> Option<String> {
    match value {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Bool(false)) => Some(String::new()),
        Some(_) => None,
    }
}

/// JSON's truthiness in Python: empty containers, `false`, `0` and `""` are false.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Each line as a `//` comment at `indent`; blank lines stay blank.
fn comment(text: &str, indent: &str) -> String {
    text.split('\n')
        .map(|line| {
            if line.is_empty() {
                String::new()
            } else {
                format!("{indent}// {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Fields one per line between braces' newlines, or nothing.
fn wrap_lines(fields: &[String]) -> String {
    if fields.is_empty() {
        String::new()
    } else {
        format!("\n{}\n", fields.join(",\n"))
    }
}

impl Node {
    /// The comment lines above a field of this type.
    fn doc(&self, indent: &str) -> String {
        let mut out = String::new();
        if !self.description.is_empty() {
            out += &comment(&self.description, indent);
            out.push('\n');
        }
        if !self.constraints.is_empty() {
            let list: Vec<String> = self
                .constraints
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            out += &format!("{indent}// {}\n", list.join(", "));
        }
        out
    }

    fn render(&self, indent: &str) -> String {
        match &self.ty {
            Ty::Scalar(t) if t == "integer" => "number".to_owned(),
            Ty::Scalar(t) => t.clone(),
            Ty::Object { props, additional } => {
                let inner = format!("{indent}{INDENT}");
                let mut required: Vec<&Param> = props.iter().filter(|p| !p.optional).collect();
                let mut optional: Vec<&Param> = props.iter().filter(|p| p.optional).collect();
                required.sort_by(|a, b| a.name.cmp(&b.name));
                optional.sort_by(|a, b| a.name.cmp(&b.name));
                let mut fields: Vec<String> = required
                    .into_iter()
                    .chain(optional)
                    .map(|p| p.render(&inner))
                    .collect();
                if let Some(extra) = additional {
                    let t = match extra {
                        Additional::Any => "any".to_owned(),
                        Additional::Never => "never".to_owned(),
                        Additional::Node(n) => n.render(&inner),
                    };
                    fields.push(format!("{inner}[k: string]: {t}"));
                }
                if fields.is_empty() {
                    "{}".to_owned()
                } else {
                    format!("{{{}{indent}}}", wrap_lines(&fields))
                }
            }
            Ty::Array(item) => {
                let inner = format!("{indent}{INDENT}");
                let doc = item.doc(&inner);
                if doc.is_empty() {
                    format!("Array<{}>", item.render(indent))
                } else {
                    format!("Array<\n{doc}{inner}{}\n{indent}>", item.render(&inner))
                }
            }
            Ty::Enum(members) => members.join(" | "),
            Ty::AnyOf(types) => types
                .iter()
                .map(|t| t.render(indent))
                .collect::<Vec<_>>()
                .join(" | "),
            Ty::Union(names) => names.join(" | "),
            Ty::Ref(name) => name.clone(),
        }
    }
}

impl Param {
    fn render(&self, indent: &str) -> String {
        let mut out = self.node.doc(indent);
        if let Some(default) = &self.default {
            out += &format!("{indent}// Default: {default}\n");
        }
        let mark = if self.optional { "?" } else { "" };
        out + &format!("{indent}{}{mark}: {}", self.name, self.node.render(indent))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json::sorted_keys;

    /// As the renderer calls it: keys sorted first.
    fn one(function: Value) -> Option<String> {
        declare(&[sorted_keys(
            &json!({"type": "function", "function": function}),
        )])
    }

    #[test]
    fn required_first_comments_and_constraints() {
        let ts = one(json!({
            "name": "get_weather",
            "description": "Get the weather.\n\nFast.",
            "parameters": {"type": "object", "required": ["city"], "properties": {
                "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
                "city": {"type": "string", "description": "City", "minLength": 1},
                "days": {"type": "array", "items": {"type": "integer", "maximum": 7}}
            }}
        }))
        .unwrap();
        assert_eq!(
            ts,
            "# Tools\n\n## functions\nnamespace functions {\n\
             // Get the weather.\n\n// Fast.\n\
             type get_weather = (_: {\n\
             \x20 // City\n  // minLength: 1\n  city: string,\n\
             \x20 days?: Array<\n    // maximum: 7\n    number\n  >,\n\
             \x20 // Default: \"c\"\n  unit?: \"c\" | \"f\"\n\
             }) => any;\n}\n"
        );
    }

    #[test]
    fn empty_parameters_and_extra_properties() {
        let ts = one(json!({"name": "now", "parameters": {"type": "object", "properties": {}}}));
        assert!(ts.unwrap().contains("type now = (_: {}) => any;"));
        let ts = one(
            json!({"name": "kv", "parameters": {"type": "object", "additionalProperties": {"type": "string"}}}),
        );
        assert!(
            ts.unwrap()
                .contains("type kv = (_: {\n  [k: string]: string\n}) => any;")
        );
    }

    #[test]
    fn defs_and_self_references_become_interfaces() {
        let ts = one(json!({
            "name": "tree",
            "parameters": {"type": "object",
                "$defs": {"Leaf": {"type": "object", "description": "A leaf", "properties": {"v": {"type": "number"}}}},
                "properties": {"leaf": {"$ref": "#/$defs/Leaf"}, "child": {"$ref": "#"}}}
        }))
        .unwrap();
        assert!(
            ts.contains("interface parameters {\n  child?: parameters,\n  leaf?: Leaf\n}"),
            "{ts}"
        );
        assert!(
            ts.contains("// A leaf\ninterface Leaf {\n  v?: number\n}"),
            "{ts}"
        );
        assert!(ts.contains("type tree = (_: parameters) => any;"), "{ts}");
    }

    #[test]
    fn inexpressible_schemas_fall_back() {
        for schema in [
            json!({"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}]}}}),
            json!({"type": "object", "properties": {"x": {"description": "no type"}}}),
            json!({"type": "object", "properties": {"x": {"$ref": "#/definitions/X"}}}),
            json!({"type": "object", "properties": {"x": {"type": "string", "enum": [1]}}}),
            json!({"type": "object", "properties": {"x": {"type": ["string", "date"]}}}),
            json!(["not", "an", "object"]),
        ] {
            assert_eq!(
                one(json!({"name": "f", "parameters": schema})),
                None,
                "{schema}"
            );
        }
    }
}
