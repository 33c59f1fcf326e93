//! `POST /embeddings`: texts in, one vector per text out, in the order of the inputs.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EmbeddingRequest {
    pub model: String,
    pub input: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct EmbeddingResponse {
    pub data: Vec<EmbeddingData>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct EmbeddingData {
    /// Position of the input; servers may answer out of order. Absent: the list position.
    #[serde(default)]
    pub index: Option<usize>,
    pub embedding: Vec<f32>,
}

impl EmbeddingResponse {
    /// The vectors in input order, exactly one per input, or what is wrong with the answer.
    pub(crate) fn into_vectors(self, inputs: usize) -> Result<Vec<Vec<f32>>, String> {
        if self.data.len() != inputs {
            return Err(format!(
                "{} embeddings for {inputs} inputs",
                self.data.len()
            ));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; inputs];
        for (position, item) in self.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            match out.get_mut(index) {
                Some(slot @ None) => *slot = Some(item.embedding),
                Some(Some(_)) => return Err(format!("two embeddings for input {index}")),
                None => return Err(format!("an embedding for input {index}, past the end")),
            }
        }
        // Every slot is filled: as many items as inputs and no index twice.
        Ok(out.into_iter().flatten().collect())
    }
}
