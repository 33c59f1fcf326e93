//! Dotted key paths with list selectors: `agents.defaults.model_name`,
//! `model_list[model_name=metaclaw]`, `custom_providers[name=metaclaw].api_key`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// A key in a mapping / table.
    Key(String),
    /// The element of the list `list` whose `key` field equals `value`
    /// (created when missing).
    Select {
        list: String,
        key: String,
        value: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyPath {
    text: String,
    segments: Vec<Segment>,
}

impl KeyPath {
    pub(crate) fn parse(text: &str) -> Result<KeyPath, String> {
        let mut segments = Vec::new();
        for part in split_outside_brackets(text)? {
            segments.push(parse_segment(&part).map_err(|m| format!("key path `{text}`: {m}"))?);
        }
        if segments.is_empty() {
            return Err("empty key path".to_string());
        }
        Ok(KeyPath {
            text: text.to_string(),
            segments,
        })
    }

    /// A path of plain keys, which may hold dots or brackets themselves (found in a file,
    /// not written in a recipe).
    pub(crate) fn from_keys(keys: &[String]) -> Option<KeyPath> {
        (!keys.is_empty()).then(|| KeyPath {
            text: keys.join("."),
            segments: keys.iter().cloned().map(Segment::Key).collect(),
        })
    }

    /// Whether `keys` (plain keys from the top) is this path or lies under it. A selector
    /// segment matches the whole list it selects from.
    pub(crate) fn covers(&self, keys: &[String]) -> bool {
        if keys.len() < self.segments.len() {
            return false;
        }
        self.segments.iter().zip(keys).all(|(seg, k)| match seg {
            Segment::Key(name) => name == k,
            Segment::Select { list, .. } => list == k,
        })
    }

    pub(crate) fn segments(&self) -> &[Segment] {
        &self.segments
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The last plain key name, used to decide whether a value is a secret.
    pub(crate) fn leaf_name(&self) -> &str {
        match self.segments.last() {
            Some(Segment::Key(k)) => k,
            Some(Segment::Select { list, .. }) => list,
            None => "",
        }
    }

    /// No list selector in it.
    pub(crate) fn is_plain(&self) -> bool {
        self.segments.iter().all(|s| matches!(s, Segment::Key(_)))
    }

    pub(crate) fn is_single_key(&self) -> bool {
        matches!(self.segments.as_slice(), [Segment::Key(_)])
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn split_outside_brackets(text: &str) -> Result<Vec<String>, String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '[' => {
                depth += 1;
                current.push(c);
            }
            ']' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("key path `{text}`: unbalanced `]`"))?;
                current.push(c);
            }
            '.' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
            }
            _ => current.push(c),
        }
    }
    if depth != 0 {
        return Err(format!("key path `{text}`: unbalanced `[`"));
    }
    parts.push(current);
    Ok(parts)
}

fn parse_segment(part: &str) -> Result<Segment, String> {
    if part.is_empty() {
        return Err("empty segment".to_string());
    }
    let Some(open) = part.find('[') else {
        return Ok(Segment::Key(part.to_string()));
    };
    let list = &part[..open];
    let inner = part[open + 1..]
        .strip_suffix(']')
        .ok_or_else(|| format!("`{part}`: text after `]`"))?;
    let (key, value) = inner
        .split_once('=')
        .ok_or_else(|| format!("`{part}`: a selector reads [field=value]"))?;
    if list.is_empty() || key.is_empty() || value.is_empty() {
        return Err(format!("`{part}`: empty list name, field or value"));
    }
    Ok(Segment::Select {
        list: list.to_string(),
        key: key.to_string(),
        value: value.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_selector_segments() {
        let p = KeyPath::parse("model_list[model_name=metaclaw].api_base").unwrap();
        assert_eq!(
            p.segments(),
            &[
                Segment::Select {
                    list: "model_list".into(),
                    key: "model_name".into(),
                    value: "metaclaw".into()
                },
                Segment::Key("api_base".into())
            ]
        );
        assert_eq!(p.leaf_name(), "api_base");
        let p = KeyPath::parse("a.b.c").unwrap();
        assert_eq!(p.segments().len(), 3);
    }

    #[test]
    fn dots_inside_selector_values_do_not_split() {
        let p = KeyPath::parse("models[id=gpt-4.1].name").unwrap();
        assert_eq!(p.segments().len(), 2);
    }

    #[test]
    fn rejects_malformed_paths() {
        for bad in ["", "a..b", "a[b]", "a[=x]", "a[b=x", "a[b=x]c", "a]b"] {
            assert!(KeyPath::parse(bad).is_err(), "{bad}");
        }
    }
}
