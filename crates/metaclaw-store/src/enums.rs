//! Domain enums are stored as their `as_str()` names; most equal their serde names.

use metaclaw_domain::Dialect;
use serde::de::{DeserializeOwned, IntoDeserializer, value::StrDeserializer};

use crate::error::{Result, StoreError};

pub(crate) fn parse<T: DeserializeOwned>(column: &'static str, text: &str) -> Result<T> {
    let de: StrDeserializer<'_, serde::de::value::Error> = text.into_deserializer();
    T::deserialize(de).map_err(|_| StoreError::InvalidColumn {
        column,
        value: text.to_owned(),
    })
}

/// `Dialect::as_str` ("openai") differs from its serde name ("open_ai"), so it gets its own.
pub(crate) fn parse_dialect(column: &'static str, text: &str) -> Result<Dialect> {
    [Dialect::OpenAi, Dialect::Anthropic]
        .into_iter()
        .find(|d| d.as_str() == text)
        .ok_or_else(|| StoreError::InvalidColumn {
            column,
            value: text.to_owned(),
        })
}

#[cfg(test)]
mod tests {
    use metaclaw_domain::{SessionEndReason, SessionSource, TurnStatus};

    use super::*;

    #[test]
    fn as_str_parses_back() {
        for s in [
            TurnStatus::Ok,
            TurnStatus::StreamBroken,
            TurnStatus::ClientAborted,
        ] {
            assert_eq!(parse::<TurnStatus>("c", s.as_str()).unwrap(), s);
        }
        let r = SessionEndReason::IdleTimeout;
        assert_eq!(parse::<SessionEndReason>("c", r.as_str()).unwrap(), r);
        let src = SessionSource::PromptCacheKey;
        assert_eq!(parse::<SessionSource>("c", src.as_str()).unwrap(), src);
        assert!(parse::<TurnStatus>("c", "nope").is_err());
        for d in [Dialect::OpenAi, Dialect::Anthropic] {
            assert_eq!(parse_dialect("c", d.as_str()).unwrap(), d);
        }
    }
}
