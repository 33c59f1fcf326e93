//! Secrets never leave the machine: API keys, tokens and passwords in a transcript are
//! replaced before it is sent to the evolver.

use std::sync::LazyLock;

use regex::Regex;

struct Rule {
    pattern: Regex,
    /// Replacement; `$name` groups keep the non-secret part (e.g. the key name).
    with: &'static str,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |p: &str, with| Rule {
        pattern: Regex::new(p).expect("redaction pattern compiles"),
        with,
    };
    vec![
        // PEM private keys, whole block.
        rule(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
            "[REDACTED PRIVATE KEY]",
        ),
        // Provider key formats.
        rule(
            r"\b(sk|pk|rk)-(proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}",
            "[REDACTED KEY]",
        ),
        rule(r"\bgh[pousr]_[A-Za-z0-9]{20,}", "[REDACTED TOKEN]"),
        rule(r"\bgithub_pat_[A-Za-z0-9_]{20,}", "[REDACTED TOKEN]"),
        rule(r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "[REDACTED TOKEN]"),
        rule(r"\bAKIA[0-9A-Z]{16}\b", "[REDACTED AWS KEY]"),
        rule(r"\bAIza[0-9A-Za-z_\-]{30,}", "[REDACTED KEY]"),
        rule(
            r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
            "[REDACTED JWT]",
        ),
        // Authorization headers.
        rule(
            r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{12,}",
            "$1 [REDACTED]",
        ),
        // URLs with credentials: scheme://user:password@host
        rule(
            r"(?P<scheme>[a-z][a-z0-9+.\-]*://)[^\s:/@]+:[^\s@/]+@",
            "${scheme}[REDACTED]@",
        ),
        // key=value / key: value for secret-looking names.
        rule(
            r#"(?i)(?P<name>\b[\w.\-]*(password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|client[_\-]?secret)[\w.\-]*)(?P<sep>"?\s*[:=]\s*"?)(?P<value>[^\s"',;]{4,})"#,
            "${name}${sep}[REDACTED]",
        ),
    ]
});

pub fn redact(text: &str) -> String {
    let mut out = text.to_owned();
    for rule in RULES.iter() {
        if rule.pattern.is_match(&out) {
            out = rule.pattern.replace_all(&out, rule.with).into_owned();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_keys_tokens_and_passwords() {
        let cases = [
            "my key is sk-proj-abcdefghijklmnopqrstuvwxyz123456",
            "export OPENAI_API_KEY=sk-abcdefghijklmnop1234",
            "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "Authorization: Bearer abcdef0123456789abcdef",
            "postgres://admin:hunter2@db.internal:5432/app",
            "password=hunter2!!",
            "{\"client_secret\": \"s3cr3t-value-here\"}",
            "AKIAIOSFODNN7EXAMPLE",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        ];
        for c in cases {
            let r = redact(c);
            assert!(r.contains("REDACTED"), "{c} -> {r}");
            for secret in [
                "abcdefghijklmnop",
                "hunter2",
                "s3cr3t",
                "AKIAIOSFODNN7",
                "MIIEow",
                "abcdef0123456789",
            ] {
                assert!(!r.contains(secret), "{c} -> {r}");
            }
        }
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        let text = "Run the tests with `cargo test` and check the password reset page copy.";
        assert_eq!(redact(text), text);
    }
}
