//! Hiding secrets when a config is shown to the user.

use serde_json::Value;

use crate::document::Document;

const SECRET_MARKERS: &[&str] = &["api_key", "token", "secret", "password"];
/// Shorter secrets are fully hidden: showing 7 characters of them would reveal too much.
const MIN_PARTIAL_LEN: usize = 12;

/// Copy of the document with every secret string masked (`sk-…abcd`).
pub fn masked(doc: &Document) -> Value {
    mask_tree(doc.as_value(), false)
}

/// Mask `value` as if it sat under a key for which `secret` holds.
pub(crate) fn mask_tree(value: &Value, secret: bool) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), mask_tree(v, secret || is_secret_key(k))))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| mask_tree(v, secret)).collect()),
        Value::String(s) if secret => Value::String(mask_secret(s)),
        other => other.clone(),
    }
}

/// Whether the last segment of a key names a secret. `*_path` keys (e.g.
/// `scheduler.calendar.token_path`) point at files and are shown as is;
/// numbers (e.g. `memory.max_injected_tokens`) are never masked.
pub fn is_secret_key(segment: &str) -> bool {
    let segment = segment.to_ascii_lowercase();
    !segment.ends_with("_path") && SECRET_MARKERS.iter().any(|m| segment.contains(m))
}

pub fn mask_secret(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    match chars.len() {
        0 => String::new(),
        n if n < MIN_PARTIAL_LEN => "***".to_owned(),
        n => {
            let head: String = chars[..3].iter().collect();
            let tail: String = chars[n - 4..].iter().collect();
            format!("{head}…{tail}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_secret_keys_only() {
        let doc = Document::parse(
            "llm:\n  api_key: sk-abcdefghijklmnop\n  oauth_token: short\n  model_id: kimi\n\
             rl:\n  tinker_api_key: ''\n  prm_api_key: tk-0123456789wxyz\n\
             scheduler:\n  calendar:\n    token_path: ~/.metaclaw/calendar_token.json\n\
             memory:\n  max_injected_tokens: 800\n\
             extra:\n  client_secret: [aaaaaaaaaaaaaaaa]\n  DB_PASSWORD: hunter2\n",
        )
        .unwrap();
        let shown = masked(&doc);
        assert_eq!(shown["llm"]["api_key"], json!("sk-…mnop"));
        assert_eq!(shown["llm"]["oauth_token"], json!("***"));
        assert_eq!(shown["llm"]["model_id"], json!("kimi"));
        assert_eq!(shown["rl"]["tinker_api_key"], json!(""));
        assert_eq!(shown["rl"]["prm_api_key"], json!("tk-…wxyz"));
        assert_eq!(
            shown["scheduler"]["calendar"]["token_path"],
            json!("~/.metaclaw/calendar_token.json")
        );
        assert_eq!(shown["memory"]["max_injected_tokens"], json!(800));
        assert_eq!(shown["extra"]["client_secret"], json!(["aaa…aaaa"]));
        assert_eq!(shown["extra"]["DB_PASSWORD"], json!("***"));
        // The document itself is untouched.
        assert_eq!(doc.get("llm.api_key"), Some(&json!("sk-abcdefghijklmnop")));
    }

    #[test]
    fn mask_lengths() {
        assert_eq!(mask_secret(""), "");
        assert_eq!(mask_secret("12345678901"), "***");
        assert_eq!(mask_secret("123456789012"), "123…9012");
        assert_eq!(mask_secret("ключ-секрет-длинный"), "клю…нный");
    }
}
