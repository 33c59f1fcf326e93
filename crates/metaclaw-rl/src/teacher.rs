//! The OPD teacher: an OpenAI-compatible `/v1/completions` endpoint asked for the logprob
//! of every token of prompt + response (`echo`), sent as token ids so both models score
//! exactly the same sequence. A teacher whose tokenizer differs would read those ids as
//! other text; that is detected (its echoed tokens do not spell our text) and refused.

use std::time::Duration;

use metaclaw_llm::{CompletionRequest, CompletionResponse, LlmClient, Prompt};

use crate::error::RlError;

#[derive(Debug, Clone)]
pub struct TeacherSettings {
    /// OpenAI-compatible base URL (`…/v1`).
    pub url: String,
    pub model: String,
    pub api_key: String,
    pub timeout: Duration,
}

#[derive(Clone)]
pub struct Teacher {
    client: LlmClient,
    settings: TeacherSettings,
}

impl Teacher {
    pub fn new(settings: TeacherSettings) -> Result<Self, RlError> {
        let client = LlmClient::new(&settings.url, &settings.api_key, settings.timeout)?;
        Ok(Self { client, settings })
    }

    /// The teacher's logprobs of `response`, one per token. `text` is our decoding of
    /// prompt + response, used to check the teacher read the same text.
    pub async fn logprobs(
        &self,
        prompt: &[u32],
        response: &[u32],
        text: &str,
    ) -> Result<Vec<f32>, RlError> {
        let ids: Vec<u32> = prompt.iter().chain(response).copied().collect();
        let mut request = CompletionRequest::new(&self.settings.model, Prompt::Tokens(ids));
        request.echo = true;
        request.logprobs = Some(1);
        // max_tokens 1: some servers refuse 0; the one generated token is ignored.
        request.max_tokens = Some(1);
        request.temperature = Some(0.0);
        let answer = self.client.complete(&request).await?;
        align(&answer, prompt.len(), response.len(), text)
    }
}

/// Picks the response part out of an echoed completion, refusing misaligned answers.
pub fn align(
    completion: &CompletionResponse,
    prompt_len: usize,
    response_len: usize,
    text: &str,
) -> Result<Vec<f32>, RlError> {
    let lp = completion
        .choices
        .first()
        .and_then(|c| c.logprobs.as_ref())
        .ok_or_else(|| {
            RlError::Teacher("the answer has no logprobs (is echo supported?)".into())
        })?;
    let values = lp
        .token_logprobs
        .as_deref()
        .ok_or_else(|| RlError::Teacher("the answer has no token_logprobs".into()))?;
    let n = prompt_len + response_len;
    if values.len() < n {
        return Err(RlError::Teacher(format!(
            "it scored {} tokens for a {n}-token sequence: its tokenizer differs from the \
             student's; use a teacher of the same model family",
            values.len()
        )));
    }
    if let Some(tokens) = &lp.tokens {
        let echoed: String = tokens.iter().take(n).map(String::as_str).collect();
        if echoed != text {
            return Err(RlError::Teacher(
                "the teacher read the token ids as different text: its tokenizer differs \
                 from the student's; use a teacher of the same model family"
                    .into(),
            ));
        }
    }
    Ok(values[prompt_len..n]
        .iter()
        .map(|v| v.map_or(0.0, |x| x as f32))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(tokens: &[&str], lps: &[Option<f64>]) -> CompletionResponse {
        serde_json::from_value(
            json!({"choices": [{"text": "", "logprobs": {"tokens": tokens, "token_logprobs": lps}}]}),
        )
        .unwrap()
    }

    #[test]
    fn response_logprobs_are_cut_out_of_the_echo() {
        let a = answer(
            &["He", "llo", " wor", "ld", "!"],
            &[None, Some(-1.0), Some(-2.0), Some(-0.5), Some(-9.0)],
        );
        assert_eq!(align(&a, 2, 2, "Hello world").unwrap(), [-2.0, -0.5]);
    }

    #[test]
    fn a_different_tokenizer_is_refused() {
        let short = answer(&["Hello world"], &[None]);
        let err = align(&short, 2, 2, "Hello world").unwrap_err().to_string();
        assert!(err.contains("tokenizer differs"), "{err}");
        let other = answer(
            &["a", "b", "c", "d"],
            &[None, Some(-1.0), Some(-1.0), Some(-1.0)],
        );
        let err = align(&other, 2, 2, "Hello world").unwrap_err().to_string();
        assert!(err.contains("different text"), "{err}");
        let none: CompletionResponse =
            serde_json::from_value(json!({"choices": [{"text": ""}]})).unwrap();
        assert!(align(&none, 1, 1, "x").is_err());
    }
}
