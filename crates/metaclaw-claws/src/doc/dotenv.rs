//! `.env` files, edited line by line: comments, blank lines, ordering and
//! unrelated variables stay exactly as they were.

use serde_json::Value;

pub(crate) struct DotenvDoc {
    lines: Vec<String>,
    trailing_newline: bool,
}

/// A `KEY=value` line: (prefix up to and including `=`, key, raw value).
fn split_assignment(line: &str) -> Option<(&str, &str, &str)> {
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') {
        return None;
    }
    let body = trimmed
        .strip_prefix("export ")
        .map(str::trim_start)
        .unwrap_or(trimmed);
    let eq = body.find('=')?;
    let key = body[..eq].trim();
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-')
    {
        return None;
    }
    let prefix_len = line.len() - body.len() + eq + 1;
    Some((&line[..prefix_len], key, &line[prefix_len..]))
}

/// The value a dotenv reader sees: quotes removed, trailing ` # comment`
/// dropped for unquoted values.
fn unquote(raw: &str) -> String {
    let raw = raw.trim();
    if let Some(rest) = raw.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return out,
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(other) => out.push(other),
                    None => break,
                },
                _ => out.push(c),
            }
        }
    } else if let Some(rest) = raw.strip_prefix('\'')
        && let Some(end) = rest.find('\'')
    {
        return rest[..end].to_string();
    }
    match raw.find(" #") {
        Some(i) => raw[..i].trim_end().to_string(),
        None => raw.to_string(),
    }
}

fn quote_if_needed(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '#' | '\\' | '$' | '`'));
    if plain {
        value.to_string()
    } else {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Dotenv values are text: numbers and booleans are written as such.
pub(crate) fn scalar_text(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        _ => Err("a .env value must be text, a number or a boolean".into()),
    }
}

impl DotenvDoc {
    pub(crate) fn parse(text: &str) -> DotenvDoc {
        let trailing_newline = text.is_empty() || text.ends_with('\n');
        let body = text.strip_suffix('\n').unwrap_or(text);
        let lines = if text.is_empty() {
            Vec::new()
        } else {
            body.split('\n').map(str::to_string).collect()
        };
        DotenvDoc {
            lines,
            trailing_newline,
        }
    }

    /// The last assignment of `key` (later lines win, as in dotenv readers).
    pub(crate) fn get(&self, key: &str) -> Option<String> {
        self.lines
            .iter()
            .rev()
            .filter_map(|l| split_assignment(l))
            .find(|(_, k, _)| *k == key)
            .map(|(_, _, raw)| unquote(raw))
    }

    /// Rewrite every assignment of `key` (keeping `export ` and spacing);
    /// append one at the end when there is none.
    pub(crate) fn set(&mut self, key: &str, value: &str) {
        let rendered = quote_if_needed(value);
        let mut found = false;
        for line in &mut self.lines {
            if let Some((prefix, k, raw)) = split_assignment(line)
                && k == key
            {
                found = true;
                if unquote(raw) != value {
                    let lead = &raw[..raw.len() - raw.trim_start().len()];
                    *line = format!("{prefix}{lead}{rendered}");
                }
            }
        }
        if !found {
            // A file without a final newline gets one before the new line.
            self.trailing_newline = true;
            self.lines.push(format!("{key}={rendered}"));
        }
    }

    pub(crate) fn render(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.trailing_newline && !self.lines.is_empty() {
            text.push('\n');
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upserts_and_keeps_everything_else() {
        let src = "# header\nexport A=1\n\nB = \"two words\" \nC=x # note\n";
        let mut d = DotenvDoc::parse(src);
        assert_eq!(d.get("B").as_deref(), Some("two words"));
        assert_eq!(d.get("C").as_deref(), Some("x"));
        d.set("A", "http://h:1/v1");
        d.set("D", "new");
        d.set("C", "x");
        assert_eq!(
            d.render(),
            "# header\nexport A=http://h:1/v1\n\nB = \"two words\" \nC=x # note\nD=new\n"
        );
    }

    #[test]
    fn rewrites_duplicates_and_quotes_when_needed() {
        let mut d = DotenvDoc::parse("K=a\nK=b");
        d.set("K", "has space");
        d.set("E", "");
        assert_eq!(d.render(), "K=\"has space\"\nK=\"has space\"\nE=\"\"\n");
        assert_eq!(d.get("K").as_deref(), Some("has space"));
        let mut d = DotenvDoc::parse("");
        d.set("Q", "say \"hi\" \\ bye");
        assert_eq!(d.render(), "Q=\"say \\\"hi\\\" \\\\ bye\"\n");
        assert_eq!(d.get("Q").as_deref(), Some("say \"hi\" \\ bye"));
        let before = d.render();
        d.set("Q", "say \"hi\" \\ bye");
        assert_eq!(d.render(), before);
        assert_eq!(DotenvDoc::parse("").render(), "");
        assert_eq!(DotenvDoc::parse("\n").render(), "\n");
        assert_eq!(DotenvDoc::parse("A=1").render(), "A=1");
    }

    #[test]
    fn ignores_commented_out_assignments() {
        let mut d = DotenvDoc::parse("# K=old\n");
        assert_eq!(d.get("K"), None);
        d.set("K", "v");
        assert_eq!(d.render(), "# K=old\nK=v\n");
    }
}
