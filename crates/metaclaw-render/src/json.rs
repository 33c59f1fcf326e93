//! JSON text exactly as Python's `json.dumps` writes it, because chat templates render tool
//! schemas with Jinja's `tojson` (= `json.dumps(ensure_ascii=False)`) and the prompt tokens must
//! match what the model was trained on.

use std::io;

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{Formatter, PrettyFormatter, Serializer};

/// Python's default separators: `", "` and `": "` on one line.
pub fn python_dumps(value: &impl Serialize) -> String {
    write_with(value, PythonFormatter)
}

/// `json.dumps(..., indent=4)`.
pub fn python_dumps_indent4(value: &impl Serialize) -> String {
    write_with(value, PrettyFormatter::with_indent(b"    "))
}

/// `json.dumps(..., separators=(",", ":"))`.
pub fn compact(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The value with every object's keys sorted (Kimi's tokenizer sorts tool schemas this way
/// before rendering them).
pub fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

/// Python's `str()` of a JSON scalar (`None`, `True`, `1`, `1.0`, `1e-05`, a string as is);
/// `None` for arrays and objects, whose Python spelling we do not reproduce.
pub fn python_str(value: &Value) -> Option<String> {
    Some(match value {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Number(n) if n.is_f64() => python_float(n.as_f64()?),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

/// `repr(float)`: the shortest round-trip digits, fixed notation from 1e-4 up to 1e16 with at
/// least one decimal, scientific outside it with a signed two-digit exponent.
fn python_float(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-4..1e16).contains(&a) {
        let s = format!("{x}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let s = format!("{x:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = exp.strip_prefix('-').map_or(("+", exp), |d| ("-", d));
        format!("{mantissa}e{sign}{digits:0>2}")
    }
}

fn write_with(value: &impl Serialize, formatter: impl Formatter) -> String {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, formatter);
    // Serialising a serde_json::Value into memory cannot fail.
    if value.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(out).unwrap_or_default()
}

struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_python_separators() {
        let v = serde_json::json!({"a": [1, 2, {"b": "é\n"}], "c": {}, "d": []});
        assert_eq!(
            python_dumps(&v),
            r#"{"a": [1, 2, {"b": "é\n"}], "c": {}, "d": []}"#
        );
        assert_eq!(compact(&v), r#"{"a":[1,2,{"b":"é\n"}],"c":{},"d":[]}"#);
        let unsorted = serde_json::json!({"b": 1, "a": [{"d": 1, "c": 2}]});
        assert_eq!(
            compact(&sorted_keys(&unsorted)),
            r#"{"a":[{"c":2,"d":1}],"b":1}"#
        );
        assert_eq!(
            python_dumps_indent4(&serde_json::json!({"a": [1], "b": {}})),
            "{\n    \"a\": [\n        1\n    ],\n    \"b\": {}\n}"
        );
    }

    #[test]
    fn python_spellings_of_scalars() {
        let cases = [
            (serde_json::json!(null), "None"),
            (serde_json::json!(true), "True"),
            (serde_json::json!(3), "3"),
            (serde_json::json!(-2.0), "-2.0"),
            (serde_json::json!(0.5), "0.5"),
            (serde_json::json!(1e-5), "1e-05"),
            (serde_json::json!(2.5e20), "2.5e+20"),
            (serde_json::json!("^a+$"), "^a+$"),
        ];
        for (v, want) in cases {
            assert_eq!(python_str(&v).as_deref(), Some(want), "{v}");
        }
        assert_eq!(python_str(&serde_json::json!([1])), None);
    }
}
