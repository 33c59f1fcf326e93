//! One episode: a task's instruction sent to the agent's model as a session, the
//! `run_command` tool executed in the scratch folder when allowed, the final answer
//! verified. The transport is the caller's ([`Agent`]): the core sends it through its own
//! proxy, so an episode is recorded, rewarded and trained like a live session.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::command::{CommandLimits, run_confined, sandbox};
use crate::error::TaskError;
use crate::scratch::Scratch;
use crate::task::Task;
use crate::verify::{Verdict, verify};

/// One chat request of an episode.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub session_id: String,
    /// The last request of the session (`X-Session-Done`).
    pub done: bool,
    /// An OpenAI chat-completions body.
    pub body: Value,
}

/// The model's answer and the id the proxy gave the turn.
#[derive(Debug, Clone)]
pub struct ChatReply {
    pub body: Value,
    pub turn_id: Option<String>,
}

pub type AgentFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, TaskError>> + Send + 'a>>;

/// Where an episode's requests go.
pub trait Agent: Send + Sync {
    fn chat(&self, request: ChatRequest) -> AgentFuture<'_, ChatReply>;
    /// Ends a session whose last request was not known to be the last when it was sent.
    fn end_session(&self, session_id: &str) -> AgentFuture<'_, ()>;
}

#[derive(Debug, Clone)]
pub struct EpisodeSettings {
    pub max_steps: u32,
    pub temperature: Option<f64>,
    /// Offer `run_command` (only with a sandbox; see [`crate::command`]).
    pub allow_commands: bool,
    pub limits: CommandLimits,
    pub model: String,
    /// Sampling seed sent with every request (reproducible runs).
    pub seed: Option<u64>,
}

/// What an episode did.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EpisodeResult {
    pub task_id: String,
    pub session_id: String,
    pub answer: String,
    pub steps: u32,
    /// The turns of the session, in order (the proxy's ids).
    pub turn_ids: Vec<String>,
    /// `None` without verifiers or when the episode failed.
    pub verdict: Option<Verdict>,
    pub error: Option<String>,
}

impl EpisodeResult {
    /// An episode of `task` as session `session_id` that has not run a turn yet.
    fn start(task: &Task, session_id: &str) -> Self {
        EpisodeResult {
            task_id: task.id.clone(),
            session_id: session_id.to_owned(),
            answer: String::new(),
            steps: 0,
            turn_ids: Vec::new(),
            verdict: None,
            error: None,
        }
    }

    /// An episode that ended with `error` before its first turn.
    pub fn failed(task: &Task, session_id: &str, error: String) -> Self {
        EpisodeResult {
            error: Some(error),
            ..Self::start(task, session_id)
        }
    }

    pub fn passed(&self) -> bool {
        self.verdict.as_ref().is_some_and(|v| v.passed)
    }
}

fn run_command_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "run_command",
        "description": "Run a shell command in the task's working folder and get its output.",
        "parameters": {"type": "object",
            "properties": {"command": {"type": "string", "description": "The shell command."}},
            "required": ["command"]}
    }})
}

/// Runs `task` as session `session_id`. Failures of the agent's requests end the episode
/// with an error (and no verdict); they do not fail the run.
pub async fn run_episode(
    agent: &dyn Agent,
    task: &Task,
    session_id: &str,
    settings: &EpisodeSettings,
) -> EpisodeResult {
    let scratch = match Scratch::new(task.workspace.as_deref()) {
        Ok(s) => s,
        Err(e) => return EpisodeResult::failed(task, session_id, e.to_string()),
    };
    let mut result = EpisodeResult::start(task, session_id);
    let mut messages = vec![json!({"role": "user", "content": task.instruction})];
    let turns = run_turns(
        agent,
        session_id,
        &mut messages,
        scratch.path(),
        settings,
        true,
    )
    .await;
    result.answer = turns.answer;
    result.steps = turns.steps;
    result.turn_ids = turns.turn_ids;
    result.error = turns.error;
    if result.error.is_none() {
        result.verdict = verify(
            &task.verifiers,
            &result.answer,
            scratch.path(),
            &settings.limits,
        )
        .await;
    }
    result
}

/// What one exchange of a session did: the final answer, the requests it took and the
/// proxy's turn ids.
#[derive(Debug, Clone, Default)]
pub struct Turns {
    pub answer: String,
    pub steps: u32,
    pub turn_ids: Vec<String>,
    pub error: Option<String>,
}

/// Sends `messages` (the whole conversation so far) as session `session_id` until the model
/// answers without a tool call, running `run_command` calls in `dir` when allowed. The
/// assistant's messages and tool results are appended to `messages`, so a caller can
/// continue the same conversation (MetaClaw-Bench's rounds of one day). With `close`, the
/// session ends with this exchange.
pub async fn run_turns(
    agent: &dyn Agent,
    session_id: &str,
    messages: &mut Vec<Value>,
    dir: &Path,
    settings: &EpisodeSettings,
    close: bool,
) -> Turns {
    let mut out = Turns::default();
    let tools = settings.allow_commands && sandbox().is_some();
    let mut closed = false;
    let max_steps = settings.max_steps.max(1);
    for step in 1..=max_steps {
        // Without tools the first answer is the final one.
        let last = !tools || step == max_steps;
        let done = close && last;
        let mut body = json!({"model": settings.model, "messages": messages});
        if let Some(t) = settings.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(seed) = settings.seed {
            body["seed"] = json!(seed);
        }
        if tools {
            body["tools"] = json!([run_command_tool()]);
        }
        let reply = match agent
            .chat(ChatRequest {
                session_id: session_id.to_owned(),
                done,
                body,
            })
            .await
        {
            Ok(r) => r,
            Err(e) => {
                out.error = Some(e.to_string());
                break;
            }
        };
        closed = done;
        out.steps = step;
        out.turn_ids.extend(reply.turn_id.clone());
        let message = reply.body["choices"][0]["message"].clone();
        let content = message["content"].as_str().unwrap_or_default().to_owned();
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if calls.is_empty() || !tools || last {
            messages.push(json!({"role": "assistant", "content": content}));
            out.answer = content;
            break;
        }
        messages.push(message);
        for call in calls {
            let output = run_tool(&call, dir, &settings.limits).await;
            messages.push(json!({"role": "tool",
                "tool_call_id": call["id"].as_str().unwrap_or_default(),
                "content": output}));
        }
    }
    if close
        && !closed
        && out.steps > 0
        && let Err(e) = agent.end_session(session_id).await
    {
        tracing::warn!(error = %e, session = session_id, "episode: session not ended");
    }
    out
}

async fn run_tool(call: &Value, dir: &Path, limits: &CommandLimits) -> String {
    let name = call["function"]["name"].as_str().unwrap_or_default();
    if name != "run_command" {
        return format!("error: unknown tool {name:?}; the only tool is run_command");
    }
    let args: Value = call["function"]["arguments"]
        .as_str()
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or(Value::Null);
    let Some(command) = args["command"].as_str() else {
        return "error: run_command needs {\"command\": \"...\"}".to_owned();
    };
    match run_confined(command, dir, b"", limits, &BTreeMap::new()).await {
        Ok(out) if out.timed_out => format!("error: timed out after {:?}", limits.timeout),
        Ok(out) => format!(
            "exit code: {}\n{}{}",
            out.exit_code.map_or("killed".to_owned(), |c| c.to_string()),
            out.output,
            if out.truncated {
                "\n[output truncated]"
            } else {
                ""
            }
        ),
        Err(e) => format!("error: {e}"),
    }
}

/// Verifies another answer to `task` (an extra sample of the same prompt) in a fresh
/// scratch folder.
pub async fn verify_answer(
    task: &Task,
    answer: &str,
    limits: &CommandLimits,
) -> Result<Option<Verdict>, TaskError> {
    let scratch = Scratch::new(task.workspace.as_deref())?;
    Ok(verify(&task.verifiers, answer, scratch.path(), limits).await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    use crate::verify::Verifier;

    /// Answers with a tool call first, then with the command's output.
    struct Scripted {
        seen: Mutex<Vec<ChatRequest>>,
        ended: Mutex<Vec<String>>,
    }

    impl Agent for Scripted {
        fn chat(&self, request: ChatRequest) -> AgentFuture<'_, ChatReply> {
            Box::pin(async move {
                let n = {
                    let mut seen = self.seen.lock().unwrap();
                    seen.push(request.clone());
                    seen.len()
                };
                let body = if n == 1 {
                    json!({"choices": [{"message": {"role": "assistant", "content": "",
                        "tool_calls": [{"id": "c1", "type": "function", "function": {
                            "name": "run_command", "arguments": "{\"command\": \"cat data.txt\"}"}}]}}]})
                } else {
                    let out = request.body["messages"][2]["content"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    let answer = out.lines().nth(1).unwrap_or_default().to_owned();
                    json!({"choices": [{"message": {"role": "assistant", "content": answer}}]})
                };
                Ok(ChatReply {
                    body,
                    turn_id: Some(format!("t{n}")),
                })
            })
        }
        fn end_session(&self, session_id: &str) -> AgentFuture<'_, ()> {
            let id = session_id.to_owned();
            Box::pin(async move {
                self.ended.lock().unwrap().push(id);
                Ok(())
            })
        }
    }

    #[tokio::test]
    async fn a_tool_episode_runs_the_command_in_the_workspace_copy_and_verifies() {
        if sandbox().is_none() {
            // run_command is not offered without a sandbox; the single-turn path is
            // covered by the core's tests.
            return;
        }
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("data.txt"), "forty-two\n").unwrap();
        let task = Task {
            id: "t".into(),
            instruction: "What is in data.txt?".into(),
            verifiers: vec![Verifier::Answer("forty-two".into())],
            workspace: Some(ws.path().to_owned()),
        };
        let agent = Scripted {
            seen: Mutex::default(),
            ended: Mutex::default(),
        };
        let settings = EpisodeSettings {
            max_steps: 5,
            temperature: None,
            allow_commands: true,
            limits: CommandLimits::default(),
            model: "m".into(),
            seed: None,
        };
        let r = run_episode(&agent, &task, "s1", &settings).await;
        assert!(r.passed(), "{r:?}");
        assert_eq!(r.steps, 2);
        assert_eq!(r.turn_ids, ["t1", "t2"]);
        let seen = agent.seen.lock().unwrap();
        assert!(seen.iter().all(|r| !r.done && r.session_id == "s1"));
        assert_eq!(seen[0].body["tools"][0]["function"]["name"], "run_command");
        assert_eq!(*agent.ended.lock().unwrap(), ["s1"]);
    }

    #[tokio::test]
    async fn without_commands_the_first_answer_is_final_and_closes_the_session() {
        let task = Task {
            id: "t".into(),
            instruction: "x".into(),
            verifiers: vec![],
            workspace: None,
        };
        let agent = Scripted {
            seen: Mutex::default(),
            ended: Mutex::default(),
        };
        let settings = EpisodeSettings {
            max_steps: 5,
            temperature: Some(0.6),
            allow_commands: false,
            limits: CommandLimits::default(),
            model: "m".into(),
            seed: None,
        };
        let r = run_episode(&agent, &task, "s2", &settings).await;
        assert_eq!(r.steps, 1);
        assert!(r.verdict.is_none());
        let seen = agent.seen.lock().unwrap();
        assert!(seen[0].done);
        assert!(seen[0].body.get("tools").is_none());
        assert_eq!(seen[0].body["temperature"], 0.6);
        assert!(agent.ended.lock().unwrap().is_empty());
    }
}
