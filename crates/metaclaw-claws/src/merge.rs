//! Unwiring a file that changed after MetaClaw wrote it (an agent reformatting or migrating
//! its config on start, the user editing it): the file is compared, as data, with what
//! MetaClaw wrote. MetaClaw's keys come out; whatever else changed is kept, applied to the
//! original file; when nothing but the agent's own bookkeeping changed, the original bytes
//! go back as they were.

use serde_json::Value;

use crate::doc::{Doc, tree};
use crate::keypath::KeyPath;
use crate::recipe::Format;

#[derive(Debug, PartialEq)]
pub(crate) enum Merge {
    /// Only layout, MetaClaw's keys or the agent's bookkeeping keys changed: the original
    /// bytes are the answer.
    Original,
    /// The original with the changes made since wiring (listed by key path).
    Merged { bytes: Vec<u8>, kept: Vec<String> },
    /// A key was removed, or a file does not parse: left to the user.
    Unmergeable,
}

/// The inputs of one merge.
pub(crate) struct Sides<'a> {
    pub(crate) format: Format,
    /// `None`: the file did not exist before wiring.
    pub(crate) original: Option<&'a [u8]>,
    /// What MetaClaw wrote over the original.
    pub(crate) wired: &'a [u8],
    pub(crate) current: &'a [u8],
}

pub(crate) fn merge(sides: &Sides<'_>, ours: &[KeyPath], agent_keys: &[KeyPath]) -> Merge {
    let parse = |bytes: &[u8]| {
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| Doc::parse(sides.format, t).ok())
    };
    let (Some(wired), Some(current)) = (parse(sides.wired), parse(sides.current)) else {
        return Merge::Unmergeable;
    };
    let (Some(mut wired), Some(mut current)) = (wired.to_value(), current.to_value()) else {
        return Merge::Unmergeable;
    };
    for key in ours {
        // A plain key of ours set to something else since (the user picked another model)
        // is theirs now: compared and kept like their other settings.
        let replaced = key.is_plain() && tree::get(&current, key) != tree::get(&wired, key);
        if !replaced {
            tree::remove(&mut wired, key);
            tree::remove(&mut current, key);
        }
    }
    let mut changes = Vec::new();
    if !diff(&wired, &current, &mut Vec::new(), &mut changes) {
        return Merge::Unmergeable;
    }
    if changes
        .iter()
        .all(|(path, _)| agent_keys.iter().any(|k| k.covers(path)))
    {
        return Merge::Original;
    }
    let Some(mut doc) = parse(sides.original.unwrap_or_default()) else {
        return Merge::Unmergeable;
    };
    let mut kept = Vec::new();
    for (path, value) in &changes {
        let Some(key) = KeyPath::from_keys(path) else {
            // The whole document changed type: nothing sensible to merge.
            return Merge::Unmergeable;
        };
        if doc.set(&key, value).is_err() {
            return Merge::Unmergeable;
        }
        kept.push(key.to_string());
    }
    match doc.render() {
        Ok(text) => Merge::Merged {
            bytes: text.into_bytes(),
            kept,
        },
        Err(_) => Merge::Unmergeable,
    }
}

/// Collects the keys added or changed from `before` to `after` (objects compared key by
/// key, anything else as a whole). False when a key was removed.
fn diff(
    before: &Value,
    after: &Value,
    at: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Value)>,
) -> bool {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            if b.keys().any(|k| !a.contains_key(k)) {
                return false;
            }
            for (k, v) in a {
                at.push(k.clone());
                let ok = match b.get(k) {
                    Some(old) => diff(old, v, at, out),
                    // A new table is compared leaf by leaf, so an agent's flag inside one is
                    // told apart from the user's settings beside it.
                    None if v.as_object().is_some_and(|m| !m.is_empty()) => {
                        diff(&Value::Object(Default::default()), v, at, out)
                    }
                    None => {
                        out.push((at.clone(), v.clone()));
                        true
                    }
                };
                at.pop();
                if !ok {
                    return false;
                }
            }
            true
        }
        _ => {
            if before != after {
                out.push((at.clone(), after.clone()));
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(list: &[&str]) -> Vec<KeyPath> {
        list.iter().map(|k| KeyPath::parse(k).unwrap()).collect()
    }

    fn run(format: Format, original: Option<&str>, wired: &str, current: &str) -> Merge {
        let ours = match format {
            Format::Toml => keys(&["model_provider", "model_providers.metaclaw"]),
            _ => keys(&[
                "modelProviders.openai[name=MetaClaw]",
                "env.METACLAW_API_KEY",
                "model.name",
            ]),
        };
        merge(
            &Sides {
                format,
                original: original.map(str::as_bytes),
                wired: wired.as_bytes(),
                current: current.as_bytes(),
            },
            &ours,
            &keys(&["$version", "tui.screen_reader_detection_done"]),
        )
    }

    const QWEN_ORIGINAL: &str = "{\n    \"ui\": { \"theme\": \"GitHub\" }\n}\n";
    const QWEN_WIRED: &str = "{\n    \"ui\": {\n        \"theme\": \"GitHub\"\n    },\n    \"modelProviders\": {\n        \"openai\": [\n            {\n                \"name\": \"MetaClaw\",\n                \"baseUrl\": \"http://127.0.0.1:1/v1\"\n            }\n        ]\n    },\n    \"env\": {\n        \"METACLAW_API_KEY\": \"mc-key\"\n    },\n    \"model\": {\n        \"name\": \"m\"\n    }\n}\n";

    #[test]
    fn a_reformatted_file_with_a_version_stamp_gets_its_original_bytes_back() {
        // Qwen Code's first start: two-space indent, no final newline, `$version` added.
        let current = "{\n  \"ui\": {\n    \"theme\": \"GitHub\"\n  },\n  \"modelProviders\": {\n    \"openai\": [\n      {\n        \"name\": \"MetaClaw\",\n        \"baseUrl\": \"http://127.0.0.1:1/v1\"\n      }\n    ]\n  },\n  \"env\": {\n    \"METACLAW_API_KEY\": \"mc-key\"\n  },\n  \"model\": {\n    \"name\": \"m\"\n  },\n  \"$version\": 4\n}";
        assert_eq!(
            run(Format::Json, Some(QWEN_ORIGINAL), QWEN_WIRED, current),
            Merge::Original
        );
    }

    #[test]
    fn the_users_own_changes_since_wiring_are_kept_and_ours_removed() {
        let current = QWEN_WIRED.replace("\"GitHub\"", "\"Dracula\"").replace(
            "\"model\": {",
            "\"tools\": { \"sandbox\": true },\n    \"model\": {",
        );
        let Merge::Merged { bytes, kept } =
            run(Format::Json, Some(QWEN_ORIGINAL), QWEN_WIRED, &current)
        else {
            panic!("expected a merge");
        };
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            "{\n    \"ui\": {\n        \"theme\": \"Dracula\"\n    },\n    \"tools\": {\n        \"sandbox\": true\n    }\n}\n"
        );
        assert_eq!(kept, ["ui.theme", "tools.sandbox"]);
        assert!(!text.contains("mc-key"));
    }

    #[test]
    fn codex_tables_appended_after_wiring_keep_the_original_comments() {
        let original = "# mine\napproval_policy = \"on-request\" # ask\n";
        let wired = "# mine\napproval_policy = \"on-request\" # ask\nmodel_provider = \"metaclaw\"\n\n[model_providers.metaclaw]\nbase_url = \"http://127.0.0.1:1/v1\"\n";
        // The TUI's first start alone: the original bytes.
        let tui = format!("{wired}\n[tui]\nscreen_reader_detection_done = true\n");
        assert_eq!(
            run(Format::Toml, Some(original), wired, &tui),
            Merge::Original
        );
        // Trusting a project is the user's decision: kept.
        let trusted = format!("{tui}\n[projects.\"/home/u/p\"]\ntrust_level = \"trusted\"\n");
        let Merge::Merged { bytes, kept } = run(Format::Toml, Some(original), wired, &trusted)
        else {
            panic!("expected a merge");
        };
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with("# mine\napproval_policy = \"on-request\" # ask\n"),
            "{text}"
        );
        assert!(text.contains("trust_level = \"trusted\""), "{text}");
        assert!(!text.contains("metaclaw"), "{text}");
        assert!(
            kept.contains(&"projects./home/u/p.trust_level".to_owned()),
            "{kept:?}"
        );
    }

    #[test]
    fn a_file_metaclaw_created_keeps_only_what_others_added() {
        let wired = "{\n  \"env\": {\n    \"METACLAW_API_KEY\": \"k\"\n  }\n}\n";
        assert_eq!(run(Format::Json, None, wired, wired), Merge::Original);
        let current = "{\n  \"env\": {\n    \"METACLAW_API_KEY\": \"k\"\n  },\n  \"ui\": 1\n}";
        let Merge::Merged { bytes, .. } = run(Format::Json, None, wired, current) else {
            panic!("expected a merge");
        };
        assert_eq!(String::from_utf8(bytes).unwrap(), "{\n  \"ui\": 1\n}\n");
    }

    #[test]
    fn a_key_of_ours_the_user_changed_since_stays_theirs() {
        let current = QWEN_WIRED.replace("\"name\": \"m\"", "\"name\": \"qwen3-coder\"");
        let Merge::Merged { bytes, kept } =
            run(Format::Json, Some(QWEN_ORIGINAL), QWEN_WIRED, &current)
        else {
            panic!("expected a merge");
        };
        assert_eq!(kept, ["model.name"]);
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.contains("qwen3-coder") && !text.contains("MetaClaw"),
            "{text}"
        );
    }

    #[test]
    fn removed_keys_and_broken_files_are_left_to_the_user() {
        let current = QWEN_WIRED.replace("\"ui\": {\n        \"theme\": \"GitHub\"\n    },\n", "");
        assert_eq!(
            run(Format::Json, Some(QWEN_ORIGINAL), QWEN_WIRED, &current),
            Merge::Unmergeable
        );
        assert_eq!(
            run(Format::Json, Some(QWEN_ORIGINAL), QWEN_WIRED, "{ not json"),
            Merge::Unmergeable
        );
    }
}
