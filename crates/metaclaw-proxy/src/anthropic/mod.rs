//! The Anthropic Messages dialect: translation to and from OpenAI chat completions.

pub mod stream;
pub mod translate;
