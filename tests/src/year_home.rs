//! A MetaClaw home after a year of heavy use, generated: `config.yaml` and a `metaclaw.db`
//! with sessions, turns (content-addressed system prompts and tool lists, messages of a few
//! KB), injected skills, feedback, samples with tokens, PRM votes, rewards, training steps,
//! checkpoints, proposals, skill versions and evolver runs, spread over `days` days.
//!
//! The schema comes from the store itself ([`Store::open`] migrates an empty database), so
//! the generated file is exactly what this build writes. Rows are then bulk-inserted on one
//! connection with prepared statements in large transactions. Everything is drawn from one
//! seeded RNG: the same spec gives the same database.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use chrono::{DateTime, SecondsFormat, Utc};
use metaclaw_config::{Document, Home};
use metaclaw_store::Store;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rusqlite::{CachedStatement, Connection, params};
use sha2::{Digest, Sha256};

/// What to generate.
#[derive(Debug, Clone)]
pub struct YearSpec {
    pub seed: u64,
    pub sessions: u64,
    pub turns: u64,
    pub days: u32,
    /// The newest data is just before this instant.
    pub end: DateTime<Utc>,
}

impl YearSpec {
    /// A year of heavy use: a million turns in 20,000 sessions, ending at `end`.
    pub fn year(end: DateTime<Utc>) -> Self {
        Self {
            seed: 0x4d43_2025,
            sessions: 20_000,
            turns: 1_000_000,
            days: 365,
            end,
        }
    }
}

/// What was generated.
#[derive(Debug, Clone, Default)]
pub struct YearReport {
    pub sessions: u64,
    pub turns: u64,
    pub blobs: u64,
    pub feedback: u64,
    pub samples: u64,
    pub prm_votes: u64,
    pub rewards: u64,
    pub training_steps: u64,
    pub checkpoints: u64,
    pub proposals: u64,
    pub skill_versions: u64,
    pub evolution_runs: u64,
    pub elapsed: Duration,
}

/// Turns per transaction: large enough that commits cost nothing, small enough that the
/// WAL stays modest.
const TURNS_PER_TX: u64 = 20_000;
const SYSTEM_PROMPTS: usize = 40;
const TOOL_LISTS: usize = 12;
const MODELS: &[&str] = &["mock-model", "qwen3-32b", "kimi-k2", "llama-3.3-70b"];

/// Fills `root` (a home directory, created if needed) with a year of use. Refuses a home
/// that already has a database.
pub fn generate(root: &Path, spec: &YearSpec) -> Result<YearReport> {
    ensure!(spec.sessions > 0, "at least one session is needed");
    ensure!(
        spec.turns >= spec.sessions,
        "at least one turn per session is needed ({} turns for {} sessions)",
        spec.turns,
        spec.sessions
    );
    ensure!(spec.days > 0, "at least one day is needed");
    let started = Instant::now();
    let home = Home::at(root);
    home.ensure().context("creating the home directory")?;
    let db = home.db_path();
    ensure!(!db.exists(), "{} already exists", db.display());
    write_config(&home)?;
    // The store's own migrations create the schema.
    Store::open(&db)
        .and_then(Store::close)
        .with_context(|| format!("creating {}", db.display()))?;

    let mut conn = Connection::open(&db)?;
    // A throwaway bulk load: durability of each commit does not matter until the end.
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA cache_size = -262144;
         PRAGMA temp_store = MEMORY;",
    )?;
    let mut g = Generator::new(spec);
    g.turns_and_sessions(&mut conn)?;
    g.evolution(&mut conn)?;
    g.training(&mut conn)?;
    conn.execute_batch("PRAGMA synchronous = NORMAL; ANALYZE; PRAGMA wal_checkpoint(TRUNCATE);")?;
    drop(conn);
    g.report.elapsed = started.elapsed();
    Ok(g.report)
}

fn write_config(home: &Home) -> Result<()> {
    let mut doc = Document::empty();
    for (key, value) in [
        ("llm.provider", "custom"),
        ("llm.model_id", "mock-model"),
        ("llm.api_base", "http://127.0.0.1:9/v1"),
        ("llm.api_key", "upstream-key"),
        ("proxy.api_key", "proxy-key"),
        ("records.retention_days", "0"),
    ] {
        doc.set_str(key, value)
            .with_context(|| format!("config key {key}"))?;
    }
    metaclaw_config::save(&home.config_path(), &doc).context("writing config.yaml")?;
    Ok(())
}

fn ts(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Plain words to cut message texts from (only characters JSON needs no escape for).
fn corpus(rng: &mut StdRng) -> String {
    const WORDS: &[&str] = &[
        "the",
        "build",
        "fails",
        "when",
        "cargo",
        "runs",
        "tests",
        "in",
        "parallel",
        "please",
        "fix",
        "function",
        "returns",
        "error",
        "because",
        "config",
        "file",
        "missing",
        "path",
        "update",
        "the",
        "readme",
        "and",
        "commit",
        "change",
        "refactor",
        "module",
        "into",
        "smaller",
        "parts",
        "database",
        "query",
        "slow",
        "index",
        "needed",
        "on",
        "column",
        "stream",
        "response",
        "chunk",
        "client",
        "server",
        "retry",
        "backoff",
        "timeout",
        "token",
        "skill",
        "session",
        "turn",
        "proxy",
        "upstream",
        "latency",
        "benchmark",
        "deploy",
        "release",
        "version",
        "branch",
        "merge",
        "review",
        "comment",
        "lint",
    ];
    let mut out = String::with_capacity(300_000);
    while out.len() < 256 * 1024 {
        out.push_str(WORDS[rng.random_range(0..WORDS.len())]);
        out.push(if rng.random_bool(0.08) { '.' } else { ' ' });
    }
    out
}

struct Generator<'s> {
    spec: &'s YearSpec,
    rng: StdRng,
    corpus: String,
    skills: Vec<String>,
    start: DateTime<Utc>,
    report: YearReport,
}

/// A stored turn the later tables refer to.
struct TurnRef {
    id: String,
    session_id: String,
    at: DateTime<Utc>,
}

impl<'s> Generator<'s> {
    fn new(spec: &'s YearSpec) -> Self {
        let mut rng = StdRng::seed_from_u64(spec.seed);
        let corpus = corpus(&mut rng);
        let skills = metaclaw_skills::bundled_files()
            .into_iter()
            .map(|(name, _)| name.to_owned())
            .collect();
        Self {
            spec,
            rng,
            corpus,
            skills,
            start: spec.end - chrono::Duration::days(i64::from(spec.days)),
            report: YearReport::default(),
        }
    }

    fn text(&mut self, min: usize, max: usize) -> &str {
        let len = self.rng.random_range(min..max);
        let from = self.rng.random_range(0..self.corpus.len() - len);
        &self.corpus[from..from + len]
    }

    fn id(&mut self, prefix: &str) -> String {
        format!("{prefix}{:032x}", self.rng.random::<u128>())
    }

    /// A time in the span, weighted towards working hours.
    fn moment(&mut self) -> DateTime<Utc> {
        let span = (self.spec.end - self.start).num_seconds().max(1);
        let mut secs = self.rng.random_range(0..span);
        // Night-time draws are moved to daytime three times out of four.
        let hour = (secs / 3600) % 24;
        if !(8..22).contains(&hour) && self.rng.random_bool(0.75) {
            secs =
                (secs - hour * 3600 + 9 * 3600 + self.rng.random_range(0..12 * 3600)).min(span - 1);
        }
        self.start + chrono::Duration::seconds(secs)
    }

    /// Session lengths summing to exactly `spec.turns`: mostly short, some very long.
    fn session_lengths(&mut self) -> Vec<u64> {
        let n = self.spec.sessions as usize;
        let raw: Vec<f64> = (0..n)
            .map(|_| {
                let u: f64 = self.rng.random_range(0.0..1.0);
                match u {
                    u if u < 0.70 => self.rng.random_range(2.0..40.0),
                    u if u < 0.95 => self.rng.random_range(40.0..150.0),
                    _ => self.rng.random_range(150.0..800.0),
                }
            })
            .collect();
        let scale = self.spec.turns as f64 / raw.iter().sum::<f64>();
        let mut lengths: Vec<u64> = raw.iter().map(|r| ((r * scale) as u64).max(1)).collect();
        let mut total: u64 = lengths.iter().sum();
        let mut i = 0;
        while total != self.spec.turns {
            if total < self.spec.turns {
                lengths[i % n] += 1;
                total += 1;
            } else if lengths[i % n] > 1 {
                lengths[i % n] -= 1;
                total -= 1;
            }
            i += 1;
        }
        lengths
    }

    fn blobs(&mut self, conn: &Connection) -> Result<(Vec<String>, Vec<String>)> {
        let mut insert = conn.prepare(
            "INSERT OR IGNORE INTO blobs (hash, kind, content, created_at) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let at = ts(self.start);
        let mut systems = Vec::new();
        for i in 0..SYSTEM_PROMPTS {
            let prompt = format!("You are agent {i}. {}", self.text(6_000, 12_000));
            let content = serde_json::to_string(&prompt)?;
            let hash = sha256_hex(&content);
            insert.execute(params![hash, "system", content, at])?;
            systems.push(hash);
        }
        let mut tools = Vec::new();
        for i in 0..TOOL_LISTS {
            let list: Vec<serde_json::Value> = (0..self.rng.random_range(8..24))
                .map(|t| {
                    serde_json::json!({"type": "function", "function": {
                        "name": format!("tool_{i}_{t}"),
                        "description": self.text(100, 400),
                        "parameters": {"type": "object", "properties": {
                            "path": {"type": "string"}, "query": {"type": "string"}}}}})
                })
                .collect();
            let content = serde_json::to_string(&list)?;
            let hash = sha256_hex(&content);
            insert.execute(params![hash, "tools", content, at])?;
            tools.push(hash);
        }
        self.report.blobs = (systems.len() + tools.len()) as u64;
        Ok((systems, tools))
    }

    fn turns_and_sessions(&mut self, conn: &mut Connection) -> Result<()> {
        let (systems, tools) = {
            let tx = conn.transaction()?;
            let b = self.blobs(&tx)?;
            tx.commit()?;
            b
        };
        let lengths = self.session_lengths();
        let mut starts: Vec<DateTime<Utc>> = (0..lengths.len()).map(|_| self.moment()).collect();
        starts.sort();
        let open_from = lengths.len().saturating_sub(3);

        let mut tx = conn.transaction()?;
        let mut in_tx = 0u64;
        for (s, (&len, &start)) in lengths.iter().zip(&starts).enumerate() {
            let session_id = self.id("s-");
            let system = systems[self.rng.random_range(0..systems.len())].clone();
            let tool_list = tools[self.rng.random_range(0..tools.len())].clone();
            let model = MODELS[self.rng.random_range(0..MODELS.len())];
            let mut at = start;
            {
                let mut st = Statements::prepare(&tx)?;
                st.session.execute(params![session_id, "body", ts(start)])?;
                for seq in 1..=len {
                    let turn = TurnRef {
                        id: self.id("t-"),
                        session_id: session_id.clone(),
                        at,
                    };
                    self.turn(&mut st, &turn, seq, model, &system, &tool_list)?;
                    at += chrono::Duration::seconds(self.rng.random_range(15..180));
                }
                let last = at.min(self.spec.end);
                let (ended, reason) = if s >= open_from {
                    (None, None)
                } else {
                    (
                        Some(ts(last + chrono::Duration::seconds(300))),
                        Some("idle_timeout"),
                    )
                };
                st.session_end
                    .execute(params![session_id, ts(last), ended, reason, len as i64])?;
            }
            self.report.sessions += 1;
            in_tx += len;
            if in_tx >= TURNS_PER_TX {
                tx.commit()?;
                tx = conn.transaction()?;
                in_tx = 0;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn turn(
        &mut self,
        st: &mut Statements<'_>,
        t: &TurnRef,
        seq: u64,
        model: &str,
        system: &str,
        tools: &str,
    ) -> Result<()> {
        let main = self.rng.random_bool(0.85);
        let history = self.rng.random_range(1..=6);
        let mut messages = format!(r#"[{{"role":"system","content":{{"$blob":"{system}"}}}}"#);
        for m in 0..history {
            let role = if m % 2 == history % 2 {
                "assistant"
            } else {
                "user"
            };
            let text = self.text(200, 700).to_owned();
            messages.push_str(&format!(r#",{{"role":"{role}","content":"{text}"}}"#));
        }
        messages.push(']');
        let request = format!(
            r#"{{"model":"{model}","stream":true,"messages":{messages},"tools":{{"$blob":"{tools}"}}}}"#
        );
        let failed = self.rng.random_bool(0.01);
        let answer = self.text(300, 1_200).to_owned();
        let response = (!failed).then(|| {
            format!(
                r#"{{"id":"chatcmpl-{seq}","object":"chat.completion","model":"{model}","choices":[{{"index":0,"message":{{"role":"assistant","content":"{answer}"}},"finish_reason":"stop"}}]}}"#
            )
        });
        let n_skills = if main {
            self.rng.random_range(0..=3)
        } else {
            0
        };
        let mut injected = Vec::new();
        for _ in 0..n_skills {
            let name = self.skills[self.rng.random_range(0..self.skills.len())].clone();
            if injected.iter().any(|(n, _): &(String, f64)| *n == name) {
                continue;
            }
            injected.push((name, self.rng.random_range(0.5..9.0)));
        }
        let injected_json = serde_json::to_string(
            &injected
                .iter()
                .map(|(n, score)| serde_json::json!({"kind": "skill", "name": n, "version": "1", "score": score}))
                .collect::<Vec<_>>(),
        )?;
        let at = ts(t.at);
        let generation = (t.at - self.start).num_days();
        st.turn.execute(params![
            t.id,
            t.session_id,
            seq as i64,
            if main { "main" } else { "side" },
            "openai",
            true,
            model,
            request,
            system,
            tools,
            response,
            if failed { "upstream_error" } else { "ok" },
            if failed { 502 } else { 200 },
            failed.then_some("upstream answered 502"),
            self.rng.random_range(2_000..12_000i64),
            self.rng.random_range(50..900i64),
            at,
            self.rng.random_range(300.0..9_000.0f64),
            self.rng.random_range(80.0..900.0f64),
            injected_json,
            generation,
        ])?;
        st.turn_blob.execute(params![t.id, system])?;
        st.turn_blob.execute(params![t.id, tools])?;
        for (name, _) in &injected {
            st.turn_skill.execute(params![t.id, name, "1"])?;
        }
        // Runners-up below the cut: the skills' comparison turns.
        if main {
            for _ in 0..2 {
                let name = &self.skills[self.rng.random_range(0..self.skills.len())];
                if !injected.iter().any(|(n, _)| n == name) {
                    st.turn_control.execute(params![t.id, name, "below_cut"])?;
                }
            }
            let corrected = self.rng.random_bool(0.04);
            let tool_error = self.rng.random_bool(0.02);
            if corrected || tool_error {
                st.outcome.execute(params![t.id, corrected, tool_error])?;
            }
        }
        self.report.turns += 1;
        if main && self.rng.random_bool(0.02) {
            let rating = if self.rng.random_bool(0.7) { 1 } else { -1 };
            st.feedback
                .execute(params![t.id, rating, Option::<String>::None, at])?;
            self.report.feedback += 1;
        }
        // RL ran in the second half of the year, on a share of the main turns.
        let rl = main && (t.at - self.start).num_days() > i64::from(self.spec.days) / 2;
        if rl && self.rng.random_bool(0.05) {
            self.sample(st, t, generation, &answer)?;
        }
        Ok(())
    }

    fn sample(
        &mut self,
        st: &mut Statements<'_>,
        t: &TurnRef,
        generation: i64,
        text: &str,
    ) -> Result<()> {
        let at = ts(t.at);
        let prompt: Vec<u8> = (0..self.rng.random_range(1_000..3_000u32))
            .flat_map(|i| (i * 7919 % 151_000).to_le_bytes())
            .collect();
        let n = self.rng.random_range(100..400u32);
        let response: Vec<u8> = (0..n)
            .flat_map(|i| (i * 31 % 151_000).to_le_bytes())
            .collect();
        let logprobs: Vec<u8> = (0..n)
            .flat_map(|_| (-self.rng.random_range(0.0..3.0f32)).to_le_bytes())
            .collect();
        let mut votes = [0i64; 3];
        for (vote, slot) in votes.iter_mut().enumerate() {
            *slot = self.rng.random_range(-1..=1);
            st.vote
                .execute(params![t.id, vote as i64, *slot, "judge rationale", at])?;
        }
        self.report.prm_votes += 3;
        let reward = votes.iter().sum::<i64>() as f64 / 3.0;
        st.reward.execute(params![t.id, reward, "prm", at])?;
        self.report.rewards += 1;
        let trained = t.at < self.spec.end - chrono::Duration::days(2);
        st.sample.execute(params![
            t.id,
            t.session_id,
            at,
            generation,
            "sampler-1",
            "qwen3",
            prompt,
            response,
            logprobs,
            &text[..text.len().min(400)],
            reward,
            "prm",
            if trained { "trained" } else { "ready" },
            trained.then_some(self.report.samples as i64 / 32),
        ])?;
        self.report.samples += 1;
        Ok(())
    }

    /// Proposals, the skill versions approvals created, and an evolver run per ended
    /// session (one in two).
    fn evolution(&mut self, conn: &mut Connection) -> Result<()> {
        let tx = conn.transaction()?;
        {
            let mut proposal = tx.prepare(
                "INSERT INTO proposals (kind, skill_name, content, base_content, diff, reason,
                     session_id, turn_ids, signals, evolver_model, status, reject_reason,
                     fingerprint, created_at, decided_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, NULL, '[]', '{}', 'mock-model', ?7, ?8, ?9, ?10, ?11)",
            )?;
            let mut version = tx.prepare(
                "INSERT INTO skill_versions (skill_name, version, content, author, action,
                     proposal_id, generation, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            let mut moments: Vec<DateTime<Utc>> = (0..3_000).map(|_| self.moment()).collect();
            moments.sort();
            let mut versions: std::collections::HashMap<String, i64> = Default::default();
            let mut generation = 0i64;
            for (i, at) in moments.iter().enumerate() {
                let update = self.rng.random_bool(0.4);
                let name = if update {
                    self.skills[self.rng.random_range(0..self.skills.len())].clone()
                } else {
                    format!("learned-skill-{i}")
                };
                let description = self.text(40, 120).to_owned();
                let body = self.text(800, 2_500).to_owned();
                let content =
                    format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}");
                let recent = *at > self.spec.end - chrono::Duration::days(14);
                let status = match self.rng.random_range(0..10) {
                    _ if recent => "pending",
                    0..=4 => "approved",
                    5..=8 => "rejected",
                    _ => "undone",
                };
                let decided = (status != "pending").then(|| ts(*at + chrono::Duration::hours(3)));
                proposal.execute(params![
                    if update { "update" } else { "new" },
                    name,
                    content,
                    update.then(|| content.clone()),
                    update.then_some("@@ -1 +1 @@\n-old\n+new\n"),
                    self.text(60, 200).to_owned(),
                    status,
                    (status == "rejected").then_some("not useful"),
                    sha256_hex(&content),
                    ts(*at),
                    decided,
                ])?;
                self.report.proposals += 1;
                if status == "approved" || status == "undone" {
                    let id = tx.last_insert_rowid();
                    let v = versions.entry(name.clone()).or_insert(0);
                    *v += 1;
                    generation += 1;
                    version.execute(params![
                        name,
                        *v,
                        content,
                        "evolver",
                        "approve",
                        id,
                        generation,
                        ts(*at + chrono::Duration::hours(3)),
                    ])?;
                    self.report.skill_versions += 1;
                }
            }
            tx.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'skill_generation'",
                [generation.to_string()],
            )?;

            let mut run = tx.prepare(
                "INSERT INTO evolution_runs (session_id, \"trigger\", status, error, proposals,
                     model, started_at, finished_at)
                 VALUES (?1, 'session_end', ?2, ?3, ?4, 'mock-model', ?5, ?6)",
            )?;
            let mut ended = tx.prepare(
                "SELECT id, ended_at FROM sessions WHERE ended_at IS NOT NULL ORDER BY ended_at",
            )?;
            let sessions: Vec<(String, String)> = ended
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            for (id, at) in sessions {
                if !self.rng.random_bool(0.5) {
                    continue;
                }
                let failed = self.rng.random_bool(0.03);
                run.execute(params![
                    id,
                    if failed { "failed" } else { "ok" },
                    failed.then_some("evolver timed out"),
                    i64::from(!failed && self.rng.random_bool(0.15)),
                    at,
                    at,
                ])?;
                self.report.evolution_runs += 1;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Nightly training in the second half of the year: a few steps a night, a checkpoint
    /// every tenth step.
    fn training(&mut self, conn: &mut Connection) -> Result<()> {
        let tx = conn.transaction()?;
        {
            let mut step_stmt = tx.prepare(
                "INSERT INTO training_steps (step, started_at, finished_at, status, loss,
                     mean_reward, success_rate, tokens, kl, samples, skill_generation, error,
                     checkpoint, progress)
                 VALUES (?1, ?2, ?3, 'ok', ?4, ?5, ?6, ?7, ?8, 32, ?9, NULL, ?10, NULL)",
            )?;
            let mut checkpoint = tx.prepare(
                "INSERT INTO checkpoints (name, step, path, kind, created_at)
                 VALUES (?1, ?2, ?3, 'state', ?4)",
            )?;
            let mut step = 0i64;
            for day in i64::from(self.spec.days) / 2..i64::from(self.spec.days) {
                let night = self.start + chrono::Duration::days(day) + chrono::Duration::hours(2);
                for k in 0..self.rng.random_range(3..9) {
                    let at = night + chrono::Duration::minutes(k * 6);
                    let name = (step % 10 == 9).then(|| format!("step-{step:06}"));
                    step_stmt.execute(params![
                        step,
                        ts(at),
                        ts(at + chrono::Duration::minutes(5)),
                        self.rng.random_range(0.1..2.0f64),
                        self.rng.random_range(-1.0..1.0f64),
                        self.rng.random_range(0.0..1.0f64),
                        self.rng.random_range(10_000..90_000i64),
                        self.rng.random_range(0.0..0.2f64),
                        day,
                        name,
                    ])?;
                    self.report.training_steps += 1;
                    if let Some(name) = name {
                        checkpoint.execute(params![
                            name,
                            step,
                            format!("tinker://run/weights/{name}"),
                            ts(at + chrono::Duration::minutes(5)),
                        ])?;
                        self.report.checkpoints += 1;
                    }
                    step += 1;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }
}

/// The prepared statements of the turn log, for one transaction.
struct Statements<'c> {
    session: CachedStatement<'c>,
    session_end: CachedStatement<'c>,
    turn: CachedStatement<'c>,
    turn_blob: CachedStatement<'c>,
    turn_skill: CachedStatement<'c>,
    turn_control: CachedStatement<'c>,
    outcome: CachedStatement<'c>,
    feedback: CachedStatement<'c>,
    vote: CachedStatement<'c>,
    reward: CachedStatement<'c>,
    sample: CachedStatement<'c>,
}

impl<'c> Statements<'c> {
    fn prepare(conn: &'c Connection) -> Result<Self> {
        Ok(Self {
            session: conn.prepare_cached(
                "INSERT INTO sessions (id, source, started_at, last_seen_at, turn_count)
                 VALUES (?1, ?2, ?3, ?3, 0)",
            )?,
            session_end: conn.prepare_cached(
                "UPDATE sessions SET last_seen_at = ?2, ended_at = ?3, end_reason = ?4,
                     turn_count = ?5 WHERE id = ?1",
            )?,
            turn: conn.prepare_cached(
                "INSERT INTO turns (
                     id, session_id, seq, turn_type, api, stream, model, request_json,
                     system_blob, tools_blob, response_json, status, http_status, error,
                     input_tokens, output_tokens, started_at, latency_ms, ttfb_ms, injected_json,
                     skill_generation)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                         ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
            )?,
            turn_blob: conn
                .prepare_cached("INSERT INTO turn_blobs (turn_id, hash) VALUES (?1, ?2)")?,
            turn_skill: conn.prepare_cached(
                "INSERT INTO turn_skills (turn_id, skill_name, version) VALUES (?1, ?2, ?3)",
            )?,
            turn_control: conn.prepare_cached(
                "INSERT OR IGNORE INTO turn_skill_controls (turn_id, skill_name, cause) VALUES (?1, ?2, ?3)",
            )?,
            // What the writer does when the next turn corrects this one or reports tool errors.
            outcome: conn.prepare_cached(
                "INSERT INTO turn_outcomes (turn_id, main, corrected, tool_error) VALUES (?1, 1, ?2, ?3)",
            )?,
            feedback: conn.prepare_cached(
                "INSERT INTO feedback (turn_id, rating, note, created_at) VALUES (?1, ?2, ?3, ?4)",
            )?,
            vote: conn.prepare_cached(
                "INSERT INTO prm_votes (turn_id, vote, score, rationale, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
            reward: conn.prepare_cached(
                "INSERT INTO turn_rewards (turn_id, reward, source, created_at)
                 VALUES (?1, ?2, ?3, ?4)",
            )?,
            sample: conn.prepare_cached(
                "INSERT INTO samples (turn_id, idx, session_id, created_at, skill_generation,
                     sampler, renderer, prompt_tokens, response_tokens, response_logprobs,
                     response_text, teacher_logprobs, reward, reward_source, state, step)
                 VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, NULL, ?11, ?12, ?13, ?14)",
            )?,
        })
    }
}
