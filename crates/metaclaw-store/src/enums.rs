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

/// A value that is not one of an enum's names, from `FromStr` of the store's own enums.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} {value:?} (expected one of: {})", expected.join(", "))]
pub struct ParseEnumError {
    pub kind: &'static str,
    pub value: String,
    pub expected: &'static [&'static str],
}

/// A store enum kept in a TEXT column: `as_str` is the stored name and the serde name
/// (snake_case), `FromStr` parses it back.
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($kind:literal) {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::enums::ParseEnumError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok(Self::$variant),)+
                    _ => Err($crate::enums::ParseEnumError {
                        kind: $kind,
                        value: s.to_owned(),
                        expected: &[$($text),+],
                    }),
                }
            }
        }
    };
}
pub(crate) use text_enum;

/// Parses a store enum read from `column`.
pub(crate) fn parse_text<T: std::str::FromStr>(column: &'static str, text: &str) -> Result<T> {
    text.parse().map_err(|_| StoreError::InvalidColumn {
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

    /// The stored name, the serde name and `FromStr` agree for every store enum.
    fn check_text_enum<T>(all: &[T])
    where
        T: Copy + PartialEq + std::fmt::Debug + std::fmt::Display,
        T: std::str::FromStr<Err = ParseEnumError> + serde::Serialize + serde::de::DeserializeOwned,
    {
        for &v in all {
            let name = v.to_string();
            assert_eq!(serde_json::to_value(v).unwrap(), serde_json::json!(name));
            assert_eq!(name.parse::<T>().unwrap(), v);
            assert_eq!(parse::<T>("c", &name).unwrap(), v);
            assert_eq!(parse_text::<T>("c", &name).unwrap(), v);
        }
        assert!(matches!(
            parse_text::<T>("c", "bogus"),
            Err(StoreError::InvalidColumn { column: "c", .. })
        ));
    }

    #[test]
    fn store_enums_round_trip() {
        use crate::{
            Author, EvolutionRunStatus, EvolutionTrigger, ProposalKind, ProposalStatus,
            VersionAction,
        };
        check_text_enum(ProposalKind::ALL);
        check_text_enum(ProposalStatus::ALL);
        check_text_enum(Author::ALL);
        check_text_enum(VersionAction::ALL);
        check_text_enum(EvolutionTrigger::ALL);
        check_text_enum(EvolutionRunStatus::ALL);
        check_text_enum(crate::ControlCause::ALL);
        check_text_enum(crate::EvidenceArm::ALL);
        assert_eq!(EvolutionTrigger::EveryNTurns.as_str(), "every_n_turns");
        assert_eq!(VersionAction::ALL.len(), 6);
        let err = "later".parse::<ProposalStatus>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown proposal status \"later\" (expected one of: pending, approved, rejected, undone)"
        );
    }
}
