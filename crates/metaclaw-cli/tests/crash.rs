//! `kill -9` the daemon under load, restart it, and check that no acknowledged turn was lost.
//! The store's guarantee: a turn is committed within 1 s of its response ending.

use std::collections::HashSet;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use metaclaw_tests::mock_upstream::MockUpstream;

struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_daemon(home: &std::path::Path) -> Daemon {
    let child = Command::new(env!("CARGO_BIN_EXE_metaclaw"))
        .args(["start", "--foreground"])
        .env("METACLAW_HOME", home)
        .env("METACLAW_OPENCLAW_BIN", "/nonexistent/openclaw")
        .env("METACLAW_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn metaclaw");
    Daemon(child)
}

async fn wait_healthy(client: &reqwest::Client, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Ok(r) = client
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .send()
            .await
            && r.status() == 200
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("daemon never became healthy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_dash_nine_loses_no_acknowledged_turn() {
    let mock = MockUpstream::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        home.path().join("config.yaml"),
        format!(
            "llm:\n  provider: custom\n  model_id: mock-model\n  api_base: {}\n  api_key: k\nproxy:\n  port: {port}\n  api_key: pk\n",
            mock.openai_base()
        ),
    )
    .unwrap();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut daemon = spawn_daemon(home.path());
    wait_healthy(&client, port).await;

    // (turn id, when its response finished) for every acknowledged turn.
    let acked: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..8 {
        let (client, acked, stop) = (client.clone(), acked.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let stream = i % 2 == 1;
                let body = serde_json::json!({"model": "m", "stream": stream,
                    "messages": [{"role": "user", "content": format!("worker {w} turn {i}")}]});
                let sent = client
                    .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
                    .bearer_auth("pk")
                    .header("x-session-id", format!("crash-{w}"))
                    .json(&body)
                    .send()
                    .await;
                let Ok(resp) = sent else { break };
                let Some(id) = resp
                    .headers()
                    .get("x-metaclaw-turn-id")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
                else {
                    break;
                };
                // Acknowledged = the client has read the whole response.
                if resp.status() != 200 || resp.bytes().await.is_err() {
                    break;
                }
                acked.lock().unwrap().push((id, Instant::now()));
                i += 1;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let killed_at = Instant::now();
    daemon.0.kill().unwrap(); // SIGKILL
    daemon.0.wait().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in workers {
        let _ = w.await;
    }

    // Restart on the same home: the lock is free again and the database opens cleanly.
    let restarted = spawn_daemon(home.path());
    wait_healthy(&client, port).await;
    let store = metaclaw_store::Store::open_read_only(home.path().join("metaclaw.db")).unwrap();
    let mut stored = HashSet::new();
    for w in 0..8 {
        for id in store.turn_ids_in_session(&format!("crash-{w}")).unwrap() {
            assert!(stored.insert(id), "a turn was stored twice");
        }
    }
    let acked = acked.lock().unwrap().clone();
    let settled: Vec<&String> = acked
        .iter()
        .filter(|(_, at)| killed_at.duration_since(*at) >= Duration::from_secs(1))
        .map(|(id, _)| id)
        .collect();
    assert!(
        settled.len() > 50,
        "too little load to mean anything: {} turns",
        settled.len()
    );
    let missing: Vec<&&String> = settled.iter().filter(|id| !stored.contains(**id)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} acknowledged turns lost: {missing:?}",
        missing.len(),
        settled.len()
    );
    let recent = acked.iter().filter(|(id, _)| stored.contains(id)).count();
    eprintln!(
        "acknowledged {}, committed {recent}, settled {}",
        acked.len(),
        settled.len()
    );
    drop(restarted);
    mock.stop().await;
}
