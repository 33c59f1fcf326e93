//! `metaclaw train-step`: one RL training step now, through the running daemon's API.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use metaclaw_config::Home;
use serde_json::Value;

use crate::daemon;
use crate::output::say;

pub fn run(home: &Home, timeout: u64) -> Result<()> {
    let (base, token) = daemon::running_api(home, "metaclaw start --mode rl")?;
    let url = format!("{base}/api/training/step");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (status, body): (u16, Value) = runtime.block_on(async {
        let resp = reqwest::Client::builder()
            .timeout(Duration::from_secs(timeout))
            .build()?
            .post(&url)
            .bearer_auth(&token)
            .send()
            .await
            .with_context(|| format!("no answer from {url} within {timeout} s"))?;
        let status = resp.status().as_u16();
        Ok::<_, anyhow::Error>((status, resp.json().await.unwrap_or(Value::Null)))
    })?;
    if status != 200 {
        let message = body
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map_or_else(|| body.to_string(), str::to_owned);
        bail!("training step failed: {message}");
    }
    say(&describe(&body));
    Ok(())
}

fn describe(outcome: &Value) -> String {
    let num = |k: &str| outcome.get(k).and_then(Value::as_f64);
    match outcome.get("status").and_then(Value::as_str) {
        Some("trained") => format!(
            "Step {} trained on {} samples (mean reward {}, loss {}); now serving {}",
            outcome["step"],
            outcome["samples"],
            num("mean_reward").map_or("-".into(), |v| format!("{v:.3}")),
            num("loss").map_or("-".into(), |v| format!("{v:.4}")),
            outcome["sampler"].as_str().unwrap_or("?"),
        ),
        Some("paused") => format!(
            "Step {} paused: the training window closed; it resumes in the next one",
            outcome["step"]
        ),
        Some("skipped") => format!(
            "Nothing trained: {}",
            outcome["reason"].as_str().unwrap_or("no samples")
        ),
        _ => outcome.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outcomes_read_as_sentences() {
        let t = describe(&json!({"status": "trained", "step": 3, "samples": 4,
            "mean_reward": 0.25, "loss": -1.5, "sampler": "tinker://m/sampler_weights/step-000003"}));
        assert_eq!(
            t,
            "Step 3 trained on 4 samples (mean reward 0.250, loss -1.5000); now serving tinker://m/sampler_weights/step-000003"
        );
        let s =
            describe(&json!({"status": "skipped", "reason": "no rewarded samples are waiting"}));
        assert_eq!(s, "Nothing trained: no rewarded samples are waiting");
    }
}
