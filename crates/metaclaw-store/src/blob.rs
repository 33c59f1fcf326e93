//! Content addressing of the big, repeated parts of requests (system prompts, tool lists).
//!
//! Agents resend the same multi-kilobyte system prompt and tool list on every turn; storing
//! them once keeps the log small. Each such value is replaced in the stored request by
//! `{"$blob": "<sha256 hex>"}` and reinflated on read.
//!
//! The positions are fixed per dialect and *every* non-null value at a position is replaced,
//! so a ref found there on read is always ours, even if a client literally sent an object
//! shaped like a ref.

use std::collections::HashMap;

use metaclaw_domain::Dialect;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::{Result, StoreError};

const REF_KEY: &str = "$blob";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlobKind {
    System,
    Tools,
}

impl BlobKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Tools => "tools",
        }
    }
}

/// One content-addressed value, ready to insert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Blob {
    pub(crate) hash: String,
    pub(crate) kind: BlobKind,
    /// Compact JSON text exactly as serialized (key order preserved), which is what is hashed.
    /// Not key-sorted on purpose: reinflation must give back the client's exact request.
    pub(crate) content: String,
}

/// What [`extract`] took out of a request.
#[derive(Debug, Default)]
pub(crate) struct Extracted {
    /// In request order; may repeat a hash (e.g. two identical system messages).
    pub(crate) blobs: Vec<Blob>,
    /// Hash of the first system (or developer) content.
    pub(crate) system_hash: Option<String>,
    pub(crate) tools_hash: Option<String>,
}

pub(crate) fn hash_text(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn make_ref(hash: &str) -> Value {
    let mut map = serde_json::Map::with_capacity(1);
    map.insert(REF_KEY.to_owned(), Value::String(hash.to_owned()));
    Value::Object(map)
}

fn ref_hash(value: &Value) -> Option<&str> {
    let map = value.as_object()?;
    if map.len() != 1 {
        return None;
    }
    map.get(REF_KEY)?.as_str()
}

/// Calls `f` on every content-addressed position of `request`, in request order.
fn for_each_slot<E>(
    api: Dialect,
    request: &mut Value,
    mut f: impl FnMut(BlobKind, &mut Value) -> Result<(), E>,
) -> Result<(), E> {
    let Some(body) = request.as_object_mut() else {
        return Ok(());
    };
    match api {
        Dialect::OpenAi => {
            if let Some(Value::Array(messages)) = body.get_mut("messages") {
                for message in messages.iter_mut().filter_map(Value::as_object_mut) {
                    let is_system = matches!(
                        message.get("role").and_then(Value::as_str),
                        Some("system" | "developer")
                    );
                    if let Some(content) = message.get_mut("content").filter(|_| is_system) {
                        f(BlobKind::System, content)?;
                    }
                }
            }
        }
        Dialect::Anthropic => {
            if let Some(system) = body.get_mut("system") {
                f(BlobKind::System, system)?;
            }
        }
    }
    if let Some(tools) = body.get_mut("tools") {
        f(BlobKind::Tools, tools)?;
    }
    Ok(())
}

/// Moves the content-addressed parts out of `request`, leaving refs in their place.
pub(crate) fn extract(api: Dialect, request: &mut Value) -> Result<Extracted> {
    let mut out = Extracted::default();
    for_each_slot(api, request, |kind, slot| {
        // null stays inline: it is tiny and can never be mistaken for a ref.
        if slot.is_null() {
            return Ok(());
        }
        let content = serde_json::to_string(slot)?;
        let hash = hash_text(&content);
        *slot = make_ref(&hash);
        match kind {
            BlobKind::System if out.system_hash.is_none() => out.system_hash = Some(hash.clone()),
            BlobKind::Tools => out.tools_hash = Some(hash.clone()),
            BlobKind::System => {}
        }
        out.blobs.push(Blob {
            hash,
            kind,
            content,
        });
        Ok::<_, StoreError>(())
    })?;
    Ok(out)
}

/// Replaces every ref in `request` by the blob it names, fetched through `lookup`.
pub(crate) fn reinflate(
    api: Dialect,
    request: &mut Value,
    mut lookup: impl FnMut(&str) -> Result<Value>,
) -> Result<()> {
    for_each_slot(api, request, |_, slot| {
        if let Some(hash) = ref_hash(slot).map(str::to_owned) {
            *slot = lookup(&hash)?;
        }
        Ok(())
    })
}

pub(crate) fn insert(conn: &Connection, blob: &Blob, created_at: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO blobs (hash, kind, content, created_at) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        blob.hash,
        blob.kind.as_str(),
        blob.content,
        created_at
    ])?;
    Ok(())
}

/// Loads blobs by hash for one read call, parsing each at most once.
pub(crate) struct BlobCache<'c> {
    conn: &'c Connection,
    parsed: HashMap<String, Value>,
}

impl<'c> BlobCache<'c> {
    pub(crate) fn new(conn: &'c Connection) -> Self {
        Self {
            conn,
            parsed: HashMap::new(),
        }
    }

    pub(crate) fn reinflate(
        &mut self,
        turn_id: &str,
        api: Dialect,
        request: &mut Value,
    ) -> Result<()> {
        reinflate(api, request, |hash| {
            if let Some(value) = self.parsed.get(hash) {
                return Ok(value.clone());
            }
            let content: String = self
                .conn
                .prepare_cached("SELECT content FROM blobs WHERE hash = ?1")?
                .query_row([hash], |r| r.get(0))
                .optional()?
                .ok_or_else(|| StoreError::MissingBlob {
                    turn_id: turn_id.to_owned(),
                    hash: hash.to_owned(),
                })?;
            let value: Value = serde_json::from_str(&content)?;
            self.parsed.insert(hash.to_owned(), value.clone());
            Ok(value)
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn roundtrip(api: Dialect, original: &Value) -> (Value, Extracted) {
        let mut stored = original.clone();
        let extracted = extract(api, &mut stored).unwrap();
        let by_hash: HashMap<_, _> = extracted
            .blobs
            .iter()
            .map(|b| (b.hash.clone(), b.content.clone()))
            .collect();
        let mut back = stored.clone();
        reinflate(api, &mut back, |h| Ok(serde_json::from_str(&by_hash[h])?)).unwrap();
        assert_eq!(&back, original);
        // Same text, hence same key order, not just map equality.
        assert_eq!(back.to_string(), original.to_string());
        (stored, extracted)
    }

    #[test]
    fn openai_system_and_developer_contents_and_tools_become_refs() {
        let req = json!({
            "model": "gpt",
            "messages": [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": "hi"},
                {"role": "developer", "content": [{"type": "text", "text": "be brief"}]},
                {"role": "assistant", "content": "hello"},
            ],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            "temperature": 0.30000000000000004,
        });
        let (stored, ex) = roundtrip(Dialect::OpenAi, &req);
        assert_eq!(ex.blobs.len(), 3);
        assert_eq!(ex.blobs[0].content, r#""You are helpful.""#);
        assert_eq!(ex.system_hash.as_deref(), Some(ex.blobs[0].hash.as_str()));
        assert_eq!(ex.tools_hash.as_deref(), Some(ex.blobs[2].hash.as_str()));
        assert_eq!(
            stored["messages"][0]["content"],
            json!({"$blob": ex.blobs[0].hash})
        );
        assert_eq!(stored["messages"][1]["content"], "hi");
        assert_eq!(
            stored["messages"][2]["content"],
            json!({"$blob": ex.blobs[1].hash})
        );
        assert_eq!(stored["tools"], json!({"$blob": ex.blobs[2].hash}));
        assert_eq!(ex.blobs[0].hash, hash_text(r#""You are helpful.""#));
    }

    #[test]
    fn anthropic_system_string_or_list_and_tools() {
        let req = json!({
            "model": "claude",
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "t", "input_schema": {"type": "object"}}],
        });
        let (stored, ex) = roundtrip(Dialect::Anthropic, &req);
        assert_eq!(ex.blobs.len(), 2);
        assert_eq!(stored["system"], json!({"$blob": ex.system_hash.unwrap()}));
        assert_eq!(stored["tools"], json!({"$blob": ex.tools_hash.unwrap()}));
        // A "system" role message is not a thing in Anthropic; messages are untouched.
        assert_eq!(stored["messages"], req["messages"]);

        let (_, ex) = roundtrip(
            Dialect::Anthropic,
            &json!({"system": "plain", "messages": []}),
        );
        assert_eq!(ex.blobs.len(), 1);
        assert!(ex.tools_hash.is_none());
    }

    #[test]
    fn ref_lookalikes_from_clients_survive() {
        let req = json!({
            "messages": [{"role": "system", "content": {"$blob": "not-ours"}}],
            "tools": null,
        });
        let (stored, ex) = roundtrip(Dialect::OpenAi, &req);
        assert_eq!(ex.blobs.len(), 1);
        assert_eq!(stored["tools"], Value::Null);
    }

    #[test]
    fn non_object_requests_are_left_alone() {
        let (_, ex) = roundtrip(Dialect::OpenAi, &json!(["not", "a", "body"]));
        assert!(ex.blobs.is_empty());
    }
}
