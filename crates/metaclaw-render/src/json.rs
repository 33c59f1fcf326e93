//! JSON text exactly as Python's `json.dumps` writes it, because chat templates render tool
//! schemas with Jinja's `tojson` (= `json.dumps(ensure_ascii=False)`) and the prompt tokens must
//! match what the model was trained on.

use std::io;

use serde::Serialize;
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
        assert_eq!(
            python_dumps_indent4(&serde_json::json!({"a": [1], "b": {}})),
            "{\n    \"a\": [\n        1\n    ],\n    \"b\": {}\n}"
        );
    }
}
