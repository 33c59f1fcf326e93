//! Embedding retrieval through the user's OpenAI-compatible `/v1/embeddings` endpoint.
//! Skill vectors are cached by (model, content hash), so only changed skills are re-embedded.

use std::time::Duration;

use metaclaw_llm::{EmbeddingRequest, LlmClient, LlmError};
use sha2::{Digest, Sha256};

use crate::library::Library;

/// Where skill vectors are kept between runs (the database, in the daemon).
pub trait EmbeddingCache: Send + Sync {
    fn get(&self, model: &str, hash: &str) -> Option<Vec<f32>>;
    fn put(&self, model: &str, hash: &str, vector: &[f32]);
}

/// How much of a skill is embedded: the body matters for routing, but models have limits.
const EMBED_CHARS: usize = 4000;

fn skill_text(name: &str, description: &str, body: &str) -> String {
    let mut text = format!("{name}: {description}\n\n{body}");
    if text.len() > EMBED_CHARS {
        let mut cut = EMBED_CHARS;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

#[derive(Debug, Clone)]
pub struct Embedder {
    client: LlmClient,
    model: String,
}

impl Embedder {
    /// `api_base` like `http://localhost:11434/v1`; the timeout bounds every call.
    pub fn new(
        api_base: &str,
        api_key: &str,
        model: &str,
        timeout: Duration,
    ) -> Result<Embedder, LlmError> {
        Ok(Embedder {
            client: LlmClient::new(api_base, api_key, timeout)?,
            model: model.to_owned(),
        })
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// One vector per input, in input order.
    pub async fn embed(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        self.client
            .embed(&EmbeddingRequest {
                model: self.model.clone(),
                input: inputs.to_vec(),
            })
            .await
    }

    /// A vector for every skill: cached ones as they are, the rest fetched in one batch.
    pub async fn skill_vectors(
        &self,
        lib: &Library,
        cache: &dyn EmbeddingCache,
    ) -> Result<Vec<(usize, Vec<f32>)>, LlmError> {
        let mut have = Vec::new();
        let mut missing: Vec<(usize, String, String)> = Vec::new();
        for (doc, s) in lib.skills().iter().enumerate() {
            let text = skill_text(&s.name, &s.description, &s.body);
            let hash = hex::encode(Sha256::digest(text.as_bytes()));
            match cache.get(&self.model, &hash) {
                Some(v) => have.push((doc, v)),
                None => missing.push((doc, hash, text)),
            }
        }
        for chunk in missing.chunks(64) {
            let texts: Vec<String> = chunk.iter().map(|(_, _, t)| t.clone()).collect();
            let vectors = self.embed(&texts).await?;
            for ((doc, hash, _), v) in chunk.iter().zip(vectors) {
                cache.put(&self.model, hash, &v);
                have.push((*doc, v));
            }
        }
        Ok(have)
    }

    /// Skills ranked by cosine similarity to `query`, best first.
    pub async fn rank(
        &self,
        lib: &Library,
        cache: &dyn EmbeddingCache,
        query: &str,
    ) -> Result<Vec<(usize, f32)>, LlmError> {
        let skills = self.skill_vectors(lib, cache).await?;
        let q = self
            .embed(&[query.to_owned()])
            .await?
            .pop()
            .unwrap_or_default();
        Ok(rank_by_similarity(&q, &skills))
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Exact cosine ranking; brute force is fast enough well past 10k skills.
pub fn rank_by_similarity(query: &[f32], skills: &[(usize, Vec<f32>)]) -> Vec<(usize, f32)> {
    let mut out: Vec<(usize, f32)> = skills.iter().map(|(d, v)| (*d, cosine(query, v))).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_ranking() {
        let skills = vec![
            (0, vec![1.0, 0.0]),
            (1, vec![0.7, 0.7]),
            (2, vec![0.0, 1.0]),
        ];
        let r = rank_by_similarity(&[1.0, 0.1], &skills);
        assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(
            cosine(&[1.0], &[1.0, 2.0]) == 0.0,
            "dimension mismatch is no similarity"
        );
    }
}
