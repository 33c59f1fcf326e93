//! The [`Store`] handle: owns the writer thread and a read connection.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use chrono::{DateTime, NaiveDate, Utc};
use metaclaw_domain::{Clock, SystemClock};
use rusqlite::Connection;

use crate::backlog::{Backlog, DEFAULT_LIMIT_BYTES};
use crate::error::{Result, StoreError};
#[cfg(test)]
use crate::evals::AdapterStatus;
use crate::evals::{self, AdapterVersion, BenchRound, EvalOutcome, EvalPurpose, EvalRun};
use crate::evidence::{self, EvidenceArm, OutcomeCounts};
use crate::evolution_runs::{self, EvolutionRunRow, NewEvolutionRun};
use crate::feedback::{self, Feedback};
use crate::proposals::{self, NewProposal, ProposalRow, ProposalStatus};
use crate::recorder::Recorder;
use crate::retention::{self, PruneReport};
use crate::reward_components::{self, RewardPart, SignalledSample, TurnSignals};
use crate::rewards::{self, PrmVote, RewardSource, TurnReward};
use crate::samples::{self, NewSample, RatedSample, SampleRow, SampleState};
use crate::sessions::{self, SessionRow};
use crate::skills::{self, SkillStats, SkillSwitches, StateChange};
use crate::training::{self, Checkpoint, TrainingStep};
use crate::turns::{self, TurnRow};
use crate::versions::{self, NewSkillVersion, SkillVersionRow};
use crate::writer::{self, Call, Message, Write, in_transaction};
use crate::{connection, migrations, timestamp};

/// The turn log. Writes go through [`Recorder`]s to one background writer thread; reads use
/// their own connection (WAL lets them run while the writer commits).
///
/// Dropping the store flushes pending records and stops the writer (like [`Store::close`],
/// but errors are only logged).
pub struct Store {
    path: PathBuf,
    /// Reads are for the CLI and dashboard, not the hot path: one connection is enough.
    reader: Mutex<Connection>,
    /// `None` when opened read-only.
    writer: Option<WriterHandle>,
    /// Stamps `created_at`, `decided_at`, ... (injected so tests control it).
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("read_only", &self.writer.is_none())
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct WriterHandle {
    tx: Sender<Message>,
    thread: JoinHandle<()>,
    backlog: Arc<Backlog>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database, then starts the writer thread.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_clock(path, Arc::new(SystemClock))
    }

    /// [`Store::open`] with the clock that stamps the rows it writes.
    pub fn open_with_clock(path: impl AsRef<Path>, clock: Arc<dyn Clock>) -> Result<Self> {
        Self::open_with_linger(path, clock, writer::LINGER)
    }

    /// `linger`: how long the writer lets a batch of writes wait for more ([`writer::LINGER`]).
    fn open_with_linger(
        path: impl AsRef<Path>,
        clock: Arc<dyn Clock>,
        linger: std::time::Duration,
    ) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let mut write_conn = connection::open_writer(&path)?;
        migrations::migrate(&mut write_conn)?;
        let reader = connection::open_reader(&path)?;
        let (tx, rx) = mpsc::channel();
        let backlog = Arc::new(Backlog::new(DEFAULT_LIMIT_BYTES));
        let thread = writer::spawn(write_conn, rx, backlog.clone(), clock.clone(), linger)?;
        tracing::debug!(path = %path.display(), "store: opened");
        Ok(Self {
            path,
            reader: Mutex::new(reader),
            writer: Some(WriterHandle {
                tx,
                thread,
                backlog,
            }),
            clock,
        })
    }

    /// Opens an existing database for reading only, e.g. from the CLI while the daemon runs.
    /// Starts no writer and runs no migrations: the schema must be exactly this build's.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let reader = connection::open_reader(&path)?;
        migrations::require_current(&reader)?;
        Ok(Self {
            path,
            reader: Mutex::new(reader),
            writer: None,
            clock: Arc::new(SystemClock),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The time by the store's clock: what the rows written through it are stamped with, so
    /// work recorded here (training steps, runs) uses the same injected time.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn is_read_only(&self) -> bool {
        self.writer.is_none()
    }

    /// A handle for recording; records sent to a read-only store's recorder are dropped
    /// with a warning.
    pub fn recorder(&self) -> Recorder {
        Recorder::new(
            self.writer
                .as_ref()
                .map(|w| (w.tx.clone(), w.backlog.clone())),
        )
    }

    /// Blocks until everything sent (by any recorder) before this call is committed.
    /// Records that failed even after retry are logged, not reported here.
    pub fn flush(&self) -> Result<()> {
        let Some(writer) = &self.writer else {
            return Ok(());
        };
        let (reply, done) = mpsc::channel();
        writer
            .tx
            .send(Message::Flush(reply))
            .map_err(|_| StoreError::WriterGone)?;
        done.recv().map_err(|_| StoreError::WriterGone)
    }

    /// Retention: deletes turns started before `older_than`, sessions left with no turns
    /// and blobs no turn references. Works in batches of bounded size, each one call on the
    /// writer thread, so turns recorded meanwhile are committed between batches.
    pub fn prune(&self, older_than: DateTime<Utc>) -> Result<PruneReport> {
        self.prune_in_batches(older_than, retention::BATCH)
    }

    /// [`Store::prune`] with a chosen batch size (tests use small ones).
    pub fn prune_in_batches(&self, older_than: DateTime<Utc>, batch: usize) -> Result<PruneReport> {
        let batch = batch.max(1);
        let mut total = PruneReport::default();
        loop {
            let (report, done) =
                self.call(move |conn| retention::prune_batch(conn, older_than, batch))?;
            total.add(report);
            if done {
                break;
            }
        }
        retention::log(older_than, &total);
        Ok(total)
    }

    /// Deletes one session with its turns and what only they referenced ("delete this
    /// conversation" in the dashboard). `NotFound` when there is no such session.
    pub fn delete_session(&self, session_id: &str) -> Result<PruneReport> {
        let id = session_id.to_owned();
        self.call(move |conn| retention::delete_session(conn, &id))
    }

    /// Size of the database on disk: the main file and its write-ahead log.
    pub fn size_bytes(&self) -> u64 {
        let main = self.path();
        let wal = {
            let mut p = main.as_os_str().to_owned();
            p.push("-wal");
            std::path::PathBuf::from(p)
        };
        [main.to_owned(), wal]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// Runs `f` on the writer connection once everything sent before is committed, and
    /// waits for its result. `f` opens its own transaction (see [`in_transaction`]).
    fn call<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let writer = self.writer.as_ref().ok_or(StoreError::ReadOnly)?;
        let (reply, done) = mpsc::channel();
        let call = Call::new(move |conn| {
            let _ = reply.send(f(conn));
        });
        writer
            .tx
            .send(Message::Call(call))
            .map_err(|_| StoreError::WriterGone)?;
        done.recv().map_err(|_| StoreError::WriterGone)?
    }

    /// Commits everything pending and stops the writer thread.
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        let Some(WriterHandle { tx, thread, .. }) = self.writer.take() else {
            return Ok(());
        };
        // If the send fails the thread has already ended; join tells us how.
        let sent = tx.send(Message::Shutdown).is_ok();
        let joined = thread.join().is_ok();
        if sent && joined {
            Ok(())
        } else {
            Err(StoreError::WriterGone)
        }
    }

    fn read(&self) -> MutexGuard<'_, Connection> {
        // A panic mid-read leaves the connection usable; ignore the poison.
        self.reader.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Most recently active sessions first.
    pub fn sessions(&self, limit: usize) -> Result<Vec<SessionRow>> {
        self.sessions_page(limit, 0)
    }

    /// Most recently active sessions first (ties by id), `limit` of them after the first
    /// `offset`.
    pub fn sessions_page(&self, limit: usize, offset: usize) -> Result<Vec<SessionRow>> {
        sessions::list(&self.read(), None, limit, offset)
    }

    /// [`Store::sessions_page`] of one agent's sessions only (every agent's when `None`).
    pub fn agent_sessions_page(
        &self,
        agent: Option<&str>,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<SessionRow>> {
        sessions::list(&self.read(), agent, limit, offset)
    }

    /// The agents that have sessions, with how many sessions each, by name.
    pub fn session_agents(&self) -> Result<Vec<(String, u64)>> {
        sessions::agents(&self.read())
    }

    /// Sessions without an end, most recently active first.
    pub fn open_sessions(&self) -> Result<Vec<SessionRow>> {
        sessions::open(&self.read())
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionRow>> {
        sessions::get(&self.read(), id)
    }

    /// Ordered by `seq`, requests reinflated.
    pub fn turns_in_session(&self, session_id: &str) -> Result<Vec<TurnRow>> {
        turns::in_session(&self.read(), session_id, usize::MAX, 0, true)
    }

    /// `limit` turns from the `offset`-th, ordered by `seq`, requests as stored: system
    /// prompts and tool lists stay `{"$blob": "<hash>"}` refs. For views of the conversation
    /// only (a long session's turns would otherwise each carry a copy of the same large
    /// prompt and tool list).
    pub fn turns_in_session_unexpanded(
        &self,
        session_id: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<TurnRow>> {
        turns::in_session(&self.read(), session_id, limit, offset, false)
    }

    /// The last `n` turns of a session, ordered by `seq`, requests reinflated (what the
    /// evolver reads: a session of thousands of turns is never loaded whole).
    pub fn last_turns_in_session(&self, session_id: &str, n: usize) -> Result<Vec<TurnRow>> {
        turns::tail_of_session(&self.read(), session_id, n)
    }

    /// Ordered by `seq`.
    pub fn turn_ids_in_session(&self, session_id: &str) -> Result<Vec<String>> {
        turns::ids_in_session(&self.read(), session_id)
    }

    /// A turn with up to `before` turns before it and `after` after it in its session, by
    /// `seq`, requests as stored (system prompts and tool lists stay blob refs).
    pub fn turns_around(&self, turn_id: &str, before: usize, after: usize) -> Result<Vec<TurnRow>> {
        turns::around(&self.read(), turn_id, before, after)
    }

    /// The turn with its request reinflated to exactly the recorded JSON.
    pub fn turn(&self, id: &str) -> Result<Option<TurnRow>> {
        turns::get(&self.read(), id)
    }

    /// Turns stored, summed from the sessions' counts (not a scan of the turn log).
    pub fn turn_count(&self) -> Result<u64> {
        sessions::turn_total(&self.read())
    }

    pub fn session_count(&self) -> Result<u64> {
        sessions::count(&self.read())
    }

    /// Turns started at or after `since` (e.g. "turns today").
    pub fn turns_since(&self, since: DateTime<Utc>) -> Result<u64> {
        turns::count_since(&self.read(), since)
    }

    /// Per-skill switches; skills without a row are enabled and not pinned.
    pub fn skill_states(&self) -> Result<HashMap<String, SkillSwitches>> {
        skills::states(&self.read())
    }

    /// Change a skill's switches and wait until the change is committed.
    pub fn set_skill_state(&self, change: StateChange) -> Result<()> {
        let writer = self.writer.as_ref().ok_or(StoreError::ReadOnly)?;
        writer
            .tx
            .send(Message::Write(Write::SkillState(change)))
            .map_err(|_| StoreError::WriterGone)?;
        self.flush()
    }

    /// A cached skill vector.
    pub fn skill_embedding(&self, model: &str, hash: &str) -> Result<Option<Vec<f32>>> {
        skills::embedding(&self.read(), model, hash)
    }

    /// Cache a skill vector (written in the background).
    pub fn put_skill_embedding(&self, model: &str, hash: &str, vector: &[f32]) {
        if let Some(writer) = &self.writer {
            let write = Write::SkillEmbedding {
                model: model.to_owned(),
                hash: hash.to_owned(),
                vector: vector.to_vec(),
            };
            let _ = writer.tx.send(Message::Write(write));
        }
    }

    /// Sets (or replaces) the user's rating of a stored turn: `rating` is 1 (thumbs up) or
    /// -1 (thumbs down). Committed on return; `NotFound` if the turn is not stored.
    pub fn set_feedback(&self, turn_id: &str, rating: i8, note: Option<String>) -> Result<()> {
        feedback::check_rating(rating)?;
        let turn_id = turn_id.to_owned();
        let at = timestamp::format(self.clock.now());
        self.call(move |conn| {
            in_transaction(conn, |tx| {
                feedback::set(tx, &turn_id, rating, note.as_deref(), &at)
            })
        })
    }

    pub fn feedback(&self, turn_id: &str) -> Result<Option<Feedback>> {
        feedback::get(&self.read(), turn_id)
    }

    /// Ratings of a session's turns, by turn id (unrated turns are absent).
    pub fn feedback_in_session(&self, session_id: &str) -> Result<HashMap<String, Feedback>> {
        feedback::in_session(&self.read(), session_id)
    }

    /// Ratings of the given turns, by turn id (unrated turns are absent).
    pub fn feedback_on_turns(&self, turn_ids: &[&str]) -> Result<HashMap<String, Feedback>> {
        feedback::on_turns(&self.read(), turn_ids)
    }

    /// Usage of every skill injected into a stored turn, with the feedback on those turns.
    pub fn skill_stats(&self) -> Result<HashMap<String, SkillStats>> {
        skills::stats(&self.read())
    }

    /// Turns and bad outcomes per skill and arm (injected, below the cut, held out), from
    /// `skill_evidence` (kept by triggers, see migration 0008).
    pub fn skill_evidence(&self) -> Result<HashMap<String, HashMap<EvidenceArm, OutcomeCounts>>> {
        evidence::counts(&self.read())
    }

    /// All stored main turns and how many of them had a bad outcome.
    pub fn outcome_totals(&self) -> Result<(u64, u64)> {
        evidence::totals(&self.read())
    }

    /// (session id, turn id) of the newest turns `skill` was injected into that the user
    /// corrected on the next turn.
    pub fn corrected_turns(&self, skill: &str, limit: usize) -> Result<Vec<(String, String)>> {
        evidence::corrected_turns(&self.read(), skill, limit)
    }

    /// When the oldest stored turn started; `None` for an empty log.
    pub fn first_turn_at(&self) -> Result<Option<DateTime<Utc>>> {
        evidence::first_turn_at(&self.read())
    }

    /// When each skill with a recorded version got its first one.
    pub fn skill_first_versions(&self) -> Result<HashMap<String, DateTime<Utc>>> {
        evidence::skill_first_versions(&self.read())
    }

    /// Stores a pending proposal; returns its id once committed.
    pub fn insert_proposal(&self, proposal: NewProposal) -> Result<i64> {
        let at = timestamp::format(self.clock.now());
        self.call(move |conn| in_transaction(conn, |tx| proposals::insert(tx, &proposal, &at)))
    }

    pub fn proposal(&self, id: i64) -> Result<Option<ProposalRow>> {
        proposals::get(&self.read(), id)
    }

    /// Newest first; every proposal when `status` is `None`.
    pub fn proposals(&self, status: Option<ProposalStatus>) -> Result<Vec<ProposalRow>> {
        self.proposals_page(status, usize::MAX, 0)
    }

    /// Newest first, `limit` of them after the first `offset`.
    pub fn proposals_page(
        &self,
        status: Option<ProposalStatus>,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ProposalRow>> {
        proposals::list(&self.read(), status, None, limit, offset)
    }

    /// [`Store::proposals_page`] of the proposals for one agent's folder only (every
    /// proposal when `None`).
    pub fn agent_proposals_page(
        &self,
        status: Option<ProposalStatus>,
        agent: Option<&str>,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ProposalRow>> {
        proposals::list(&self.read(), status, agent, limit, offset)
    }

    /// Give a proposal to every agent (`None`: its skill goes to the shared folder) or to one.
    pub fn set_proposal_agent(&self, id: i64, agent: Option<String>) -> Result<()> {
        self.call(move |conn| proposals::set_agent(conn, id, agent.as_deref()))
    }

    /// How many proposals have `status`.
    pub fn proposal_count(&self, status: ProposalStatus) -> Result<u64> {
        proposals::count(&self.read(), status)
    }

    /// Records the user's decision: sets the status, the reject reason (`None` clears it)
    /// and `decided_at` (cleared when set back to pending). `NotFound` if there is no such
    /// proposal.
    pub fn set_proposal_status(
        &self,
        id: i64,
        status: ProposalStatus,
        reject_reason: Option<String>,
    ) -> Result<()> {
        let at = timestamp::format(self.clock.now());
        self.call(move |conn| {
            in_transaction(conn, |tx| {
                proposals::set_status(tx, id, status, reject_reason.as_deref(), &at)
            })
        })
    }

    /// Fingerprints of rejected proposals, so the evolver does not propose them again.
    pub fn rejected_fingerprints(&self) -> Result<HashSet<String>> {
        proposals::rejected_fingerprints(&self.read())
    }

    /// Skill names of rejected proposals, distinct and sorted.
    pub fn rejected_names(&self) -> Result<Vec<String>> {
        proposals::rejected_names(&self.read())
    }

    /// Records a skill change in one transaction: the next version number of that skill
    /// (1 for its first), and the next skill generation, which the row carries.
    pub fn record_skill_version(&self, version: NewSkillVersion) -> Result<SkillVersionRow> {
        let at = timestamp::format(self.clock.now());
        self.call(move |conn| in_transaction(conn, |tx| versions::record(tx, &version, &at)))
    }

    /// A skill's versions, oldest first.
    pub fn skill_versions(&self, skill_name: &str) -> Result<Vec<SkillVersionRow>> {
        versions::list(&self.read(), skill_name)
    }

    pub fn skill_version(&self, skill_name: &str, version: u64) -> Result<Option<SkillVersionRow>> {
        versions::get(&self.read(), skill_name, version)
    }

    /// Bumped by every recorded skill version; 0 before the first.
    pub fn skill_generation(&self) -> Result<u64> {
        versions::generation(&self.read())
    }

    /// Logs a finished evolver run; returns its id once committed.
    pub fn record_evolution_run(&self, run: NewEvolutionRun) -> Result<i64> {
        self.call(move |conn| in_transaction(conn, |tx| evolution_runs::insert(tx, &run)))
    }

    /// Newest first.
    pub fn evolution_runs(&self, limit: usize) -> Result<Vec<EvolutionRunRow>> {
        evolution_runs::list(&self.read(), limit)
    }

    /// The most recent failed run, if any (later successful runs do not hide it).
    pub fn last_evolution_failure(&self) -> Result<Option<EvolutionRunRow>> {
        evolution_runs::last_failure(&self.read())
    }

    /// Writes a training step, replacing every field of a stored step with the same
    /// number. Committed on return. Non-finite numbers are stored as `None`; a step number
    /// above `i64::MAX` is `InvalidValue`.
    pub fn upsert_training_step(&self, step: TrainingStep) -> Result<()> {
        self.call(move |conn| in_transaction(conn, |tx| training::upsert_step(tx, &step)))
    }

    /// The last `limit` training steps (the highest step numbers), in ascending step order.
    pub fn training_steps(&self, limit: usize) -> Result<Vec<TrainingStep>> {
        training::steps(&self.read(), limit)
    }

    /// The running step (the highest-numbered one if several are marked running).
    pub fn current_training_step(&self) -> Result<Option<TrainingStep>> {
        training::current_step(&self.read())
    }

    /// Records a checkpoint, replacing one with the same name. Committed on return.
    pub fn record_checkpoint(&self, checkpoint: Checkpoint) -> Result<()> {
        self.call(move |conn| {
            in_transaction(conn, |tx| training::record_checkpoint(tx, &checkpoint))
        })
    }

    /// Newest first.
    pub fn checkpoints(&self) -> Result<Vec<Checkpoint>> {
        training::checkpoints(&self.read())
    }

    /// Replaces the PRM votes of a stored turn with `votes` (an empty slice clears them).
    /// Committed on return; `NotFound` if the turn is not stored, `InvalidValue` for a score
    /// outside -1..=1; a repeated vote index fails the whole call.
    pub fn record_prm_votes(&self, turn_id: &str, votes: &[PrmVote]) -> Result<()> {
        rewards::check_votes(votes)?;
        let turn_id = turn_id.to_owned();
        let votes = votes.to_vec();
        self.call(move |conn| {
            in_transaction(conn, |tx| rewards::record_votes(tx, &turn_id, &votes))
        })
    }

    /// A turn's PRM votes, by vote index.
    pub fn prm_votes(&self, turn_id: &str) -> Result<Vec<PrmVote>> {
        rewards::votes(&self.read(), turn_id)
    }

    /// Sets (or replaces) the reward of a stored turn. Committed on return; `NotFound` if
    /// the turn is not stored, `InvalidValue` if `reward` is not finite.
    pub fn set_turn_reward(&self, turn_id: &str, reward: f64, source: RewardSource) -> Result<()> {
        rewards::check_reward(reward)?;
        let turn_id = turn_id.to_owned();
        let at = timestamp::format(self.clock.now());
        self.call(move |conn| {
            in_transaction(conn, |tx| {
                rewards::set_reward(tx, &turn_id, reward, source, &at)
            })
        })
    }

    pub fn turn_reward(&self, turn_id: &str) -> Result<Option<TurnReward>> {
        rewards::reward(&self.read(), turn_id)
    }

    /// Records a sample of a stored turn (state `pending`). Committed on return;
    /// `NotFound` if the turn is not stored, `InvalidValue` if the logprobs do not match
    /// the response tokens one to one.
    pub fn insert_sample(&self, sample: NewSample) -> Result<i64> {
        samples::check_new(&sample)?;
        self.call(move |conn| in_transaction(conn, |tx| samples::insert(tx, &sample)))
    }

    /// A turn's samples, by index.
    pub fn samples_for_turn(&self, turn_id: &str) -> Result<Vec<SampleRow>> {
        samples::for_turn(&self.read(), turn_id)
    }

    /// Up to `limit` samples in `state`, oldest first.
    pub fn samples_in_state(&self, state: SampleState, limit: usize) -> Result<Vec<SampleRow>> {
        samples::in_state(&self.read(), state, limit)
    }

    /// Up to `limit` turns whose samples are all scored (some ready, none pending), oldest
    /// first; reads no token data.
    pub fn ready_sample_groups(&self, limit: usize) -> Result<Vec<String>> {
        samples::ready_groups(&self.read(), limit)
    }

    /// Turns with samples waiting for a reward whose session has a later main turn or has
    /// ended, oldest first; reads no token data.
    pub fn turns_due_for_judging(&self) -> Result<Vec<String>> {
        samples::due_for_judging(&self.read())
    }

    /// Rated served samples, not trained yet, whose reward does not include the rating.
    pub fn rated_samples_without_feedback(&self) -> Result<Vec<RatedSample>> {
        samples::rated_without_feedback(&self.read())
    }

    /// Sets a sample's reward; a pending sample becomes ready. Returns false when the
    /// sample does not exist or is already batched, trained or left out.
    pub fn set_sample_reward(
        &self,
        turn_id: &str,
        idx: u32,
        reward: f64,
        source: RewardSource,
    ) -> Result<bool> {
        rewards::check_reward(reward)?;
        let turn_id = turn_id.to_owned();
        self.call(move |conn| {
            in_transaction(conn, |tx| {
                samples::set_reward(tx, &turn_id, idx, reward, source)
            })
        })
    }

    /// Stores the OPD teacher's logprobs of a sample's response tokens.
    pub fn set_teacher_logprobs(&self, sample_id: i64, logprobs: Vec<f32>) -> Result<()> {
        self.call(move |conn| {
            in_transaction(conn, |tx| {
                samples::set_teacher_logprobs(tx, sample_id, &logprobs)
            })
        })
    }

    /// Moves samples to `state` (and records the training step that took them).
    pub fn set_sample_state(
        &self,
        ids: Vec<i64>,
        state: SampleState,
        step: Option<u64>,
    ) -> Result<()> {
        self.call(move |conn| in_transaction(conn, |tx| samples::set_state(tx, &ids, state, step)))
    }

    /// Marks untrained samples from skill generations before `generation` stale.
    pub fn mark_stale_samples(&self, generation: u64) -> Result<usize> {
        self.call(move |conn| in_transaction(conn, |tx| samples::mark_stale(tx, generation)))
    }

    /// Takes `agent`'s untrained samples out of training (pending and ready ones become
    /// skipped); returns how many.
    pub fn skip_agent_samples(&self, agent: &str) -> Result<usize> {
        let agent = agent.to_owned();
        self.call(move |conn| in_transaction(conn, |tx| samples::skip_agent(tx, &agent)))
    }

    /// Number of samples in each state (every state present).
    pub fn sample_counts(&self) -> Result<std::collections::BTreeMap<String, u64>> {
        samples::counts(&self.read())
    }

    /// How many stored turns have each majority PRM score, always
    /// `[(-1, n), (0, n), (1, n)]`. Computed from `prm_votes`: a turn counts with the score
    /// most of its votes gave, a tie between the most frequent scores counts as 0, and
    /// turns without votes are left out. (`turn_rewards` is not used: a `combined` reward
    /// no longer says what the PRM voted.)
    pub fn prm_score_distribution(&self) -> Result<Vec<(i8, u64)>> {
        rewards::score_distribution(&self.read())
    }

    /// Turns per local day for the last `days` days up to today, where local time is UTC
    /// plus `tz_offset_minutes` (e.g. 120 for UTC+2, -300 for UTC-5; what JavaScript's
    /// `getTimezoneOffset()` returns, negated). Oldest first, one entry per day, days
    /// without turns included as 0. `InvalidValue` for an offset of a day or more, or more
    /// than [`crate::MAX_DAYS`] days.
    pub fn turns_per_day(
        &self,
        days: u32,
        tz_offset_minutes: i32,
    ) -> Result<Vec<(NaiveDate, u64)>> {
        self.turns_per_day_at(self.clock.now(), days, tz_offset_minutes)
    }

    /// [`Store::turns_per_day`] with "today" taken from `now` (for an injected clock).
    pub fn turns_per_day_at(
        &self,
        now: DateTime<Utc>,
        days: u32,
        tz_offset_minutes: i32,
    ) -> Result<Vec<(NaiveDate, u64)>> {
        turns::per_day(&self.read(), now, days, tz_offset_minutes, None)
    }

    /// [`Store::turns_per_day`] of one agent's turns only (every agent's when `None`).
    pub fn agent_turns_per_day(
        &self,
        agent: Option<&str>,
        days: u32,
        tz_offset_minutes: i32,
    ) -> Result<Vec<(NaiveDate, u64)>> {
        turns::per_day(
            &self.read(),
            self.clock.now(),
            days,
            tz_offset_minutes,
            agent,
        )
    }

    #[cfg(test)]
    pub(crate) fn hold_writer(&self) -> Sender<()> {
        let (release, hold) = mpsc::channel();
        if let Some(w) = &self.writer {
            w.tx.send(Message::Hold(hold)).expect("writer alive");
        }
        release
    }

    /// What the judge and the user said about a turn so far (judge verdict, thumbs,
    /// correction, retry, tool error).
    pub fn turn_signals(&self, turn_id: &str) -> Result<TurnSignals> {
        reward_components::signals(&self.read(), turn_id)
    }

    /// Served answers not trained yet that have a rating or an implicit signal.
    pub fn signalled_samples(&self) -> Result<Vec<SignalledSample>> {
        reward_components::signalled(&self.read())
    }

    /// Replaces the parts a turn's reward was made of.
    pub fn set_reward_parts(&self, turn_id: &str, parts: Vec<RewardPart>) -> Result<()> {
        let turn_id = turn_id.to_owned();
        self.call(move |conn| {
            in_transaction(conn, |tx| reward_components::set(tx, &turn_id, &parts))
        })
    }

    pub fn reward_parts(&self, turn_id: &str) -> Result<Vec<RewardPart>> {
        reward_components::for_turn(&self.read(), turn_id)
    }

    /// The reward parts of a session's turns, by turn id (turns without any are absent).
    pub fn reward_parts_in_session(
        &self,
        session_id: &str,
    ) -> Result<HashMap<String, Vec<RewardPart>>> {
        reward_components::in_session(&self.read(), session_id)
    }

    /// Marks a session as an evaluation's: its turns are never sampled for RL or distilled.
    pub fn mark_eval_session(&self, session_id: &str, run_id: i64) -> Result<()> {
        let session_id = session_id.to_owned();
        self.call(move |conn| {
            in_transaction(conn, |tx| evals::mark_session(tx, &session_id, run_id))
        })
    }

    /// Marks a session as a rollout's task episode: its verifier rewards it, and the
    /// implicit signals of live use never join that reward.
    pub fn mark_rollout_session(&self, session_id: &str) -> Result<()> {
        let session_id = session_id.to_owned();
        self.call(move |conn| {
            in_transaction(conn, |tx| reward_components::mark_rollout(tx, &session_id))
        })
    }

    pub fn is_eval_session(&self, session_id: &str) -> Result<bool> {
        evals::is_eval_session(&self.read(), session_id)
    }

    /// Opens an evaluation run (one arm over a split); returns its id.
    pub fn start_eval_run(
        &self,
        task_dir: &str,
        split: &str,
        purpose: EvalPurpose,
        arm: &str,
        adapter_step: Option<u64>,
    ) -> Result<i64> {
        let at = timestamp::format(self.clock.now());
        let (task_dir, split, arm) = (task_dir.to_owned(), split.to_owned(), arm.to_owned());
        self.call(move |conn| {
            in_transaction(conn, |tx| {
                evals::start_run(tx, &at, &task_dir, &split, purpose, &arm, adapter_step)
            })
        })
    }

    pub fn add_eval_outcome(&self, run_id: i64, outcome: EvalOutcome) -> Result<()> {
        self.call(move |conn| in_transaction(conn, |tx| evals::add_outcome(tx, run_id, &outcome)))
    }

    /// Closes a run: its totals are counted from its outcomes.
    pub fn finish_eval_run(&self, run_id: i64) -> Result<()> {
        let at = timestamp::format(self.clock.now());
        self.call(move |conn| in_transaction(conn, |tx| evals::finish_run(tx, run_id, &at)))
    }

    /// The last `limit` evaluation runs, oldest first.
    pub fn eval_runs(&self, limit: usize) -> Result<Vec<EvalRun>> {
        evals::runs(&self.read(), limit)
    }

    pub fn eval_outcomes(&self, run_id: i64) -> Result<Vec<EvalOutcome>> {
        evals::outcomes(&self.read(), run_id)
    }

    pub fn add_bench_round(&self, run_id: i64, round: BenchRound) -> Result<()> {
        self.call(move |conn| in_transaction(conn, |tx| evals::add_bench_round(tx, run_id, &round)))
    }

    /// Closes a bench arm's run: its totals are counted from its rounds.
    pub fn finish_bench_run(&self, run_id: i64) -> Result<()> {
        let at = timestamp::format(self.clock.now());
        self.call(move |conn| in_transaction(conn, |tx| evals::finish_bench_run(tx, run_id, &at)))
    }

    pub fn bench_rounds(&self, run_id: i64) -> Result<Vec<BenchRound>> {
        evals::bench_rounds(&self.read(), run_id)
    }

    /// Records an adapter version (or updates it); a serving one makes the others `kept`.
    pub fn upsert_adapter_version(&self, version: AdapterVersion) -> Result<()> {
        self.call(move |conn| in_transaction(conn, |tx| evals::upsert_adapter(tx, &version)))
    }

    /// Every adapter version, oldest first.
    pub fn adapter_versions(&self) -> Result<Vec<AdapterVersion>> {
        evals::adapters(&self.read())
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Err(error) = self.shutdown() {
            tracing::error!(%error, path = %self.path.display(), "store: writer did not stop cleanly");
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use metaclaw_domain::{Dialect, SessionSource, TurnRecord, TurnStatus, TurnType, Usage};
    use serde_json::json;

    use super::*;

    fn turn(session: &str, id: &str) -> TurnRecord {
        TurnRecord {
            turn_id: id.to_owned(),
            session_id: session.to_owned(),
            session_source: SessionSource::Body,
            turn_type: TurnType::Main,
            api: Dialect::OpenAi,
            stream: false,
            model: None,
            request: json!({"messages": [{"role": "system", "content": "sys"}], "tools": []}),
            response: None,
            status: TurnStatus::Ok,
            http_status: 200,
            error: None,
            usage: Usage::default(),
            started_at: Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap(),
            latency_ms: 1.0,
            ttfb_ms: None,
            injected: json!({}),
            agent: metaclaw_domain::DEFAULT_AGENT.to_owned(),
            skill_generation: None,
        }
    }

    fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::TempDir::new().unwrap();
        let store = Store::open(dir.path().join("db.sqlite")).unwrap();
        (dir, store)
    }

    /// Queues `ids` while the writer is stalled, so they are written as one batch.
    fn record_as_one_batch(store: &Store, ids: &[&str]) {
        let release = store.hold_writer();
        let rec = store.recorder();
        for id in ids {
            // "x-dup" records a second turn with id "x".
            rec.record_turn(turn("s", id.trim_end_matches("-dup")));
        }
        drop(release);
        store.flush().unwrap();
    }

    fn poison(store: &Store, action: &str) {
        let conn = Connection::open(store.path()).unwrap();
        conn.execute_batch(&format!(
            "CREATE TRIGGER poison BEFORE INSERT ON turns WHEN NEW.id LIKE 'poison%'
             BEGIN SELECT RAISE({action}, 'poisoned turn'); END;"
        ))
        .unwrap();
    }

    /// A write waits up to the linger for company before it commits, and a flush cuts the
    /// wait short. (Without the linger the turn is visible within microseconds; only an
    /// extremely slow machine could make the first check pass without it.)
    #[test]
    fn writes_wait_for_company_until_a_flush() {
        let dir = tempfile::TempDir::new().unwrap();
        let store = Store::open_with_linger(
            dir.path().join("db.sqlite"),
            Arc::new(SystemClock),
            std::time::Duration::from_secs(120),
        )
        .unwrap();
        store.recorder().record_turn(turn("s", "a"));
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(store.turn_ids_in_session("s").unwrap().is_empty());
        store.recorder().record_turn(turn("s", "b"));
        store.flush().unwrap();
        assert_eq!(store.turn_ids_in_session("s").unwrap(), ["a", "b"]);
    }

    #[test]
    fn duplicate_inside_one_batch_does_not_sink_the_batch() {
        let (_dir, store) = open();
        record_as_one_batch(&store, &["a", "b", "a-dup", "c"]);
        assert_eq!(store.turn_ids_in_session("s").unwrap(), ["a", "b", "c"]);
        assert_eq!(store.session("s").unwrap().unwrap().turn_count, 3);
    }

    #[test]
    fn statement_level_failure_loses_only_that_turn() {
        let (_dir, store) = open();
        poison(&store, "ABORT");
        record_as_one_batch(&store, &["a", "poison-1", "b"]);
        assert_eq!(store.turn_ids_in_session("s").unwrap(), ["a", "b"]);
    }

    #[test]
    fn transaction_level_failure_falls_back_to_one_turn_per_transaction() {
        let (_dir, store) = open();
        // RAISE(ROLLBACK) aborts the whole transaction, like SQLITE_FULL would.
        poison(&store, "ROLLBACK");
        record_as_one_batch(&store, &["a", "poison-1", "b", "c"]);
        assert_eq!(store.turn_ids_in_session("s").unwrap(), ["a", "b", "c"]);
        assert_eq!(store.session("s").unwrap().unwrap().turn_count, 3);
        // And the writer is still healthy afterwards.
        store.recorder().record_turn(turn("s", "d"));
        store.flush().unwrap();
        assert_eq!(store.turn("d").unwrap().unwrap().seq, 4);
    }

    #[test]
    fn a_panicking_call_fails_alone_and_the_writer_keeps_going() {
        let (_dir, store) = open();
        store.recorder().record_turn(turn("s", "a"));
        let result: Result<()> = store.call(|conn| {
            in_transaction(conn, |tx| {
                tx.execute("DELETE FROM turns", [])?;
                panic!("bug in a call");
            })
        });
        assert!(matches!(result, Err(StoreError::WriterGone)));
        // The turn queued before the call was committed; the call's delete was rolled back.
        assert_eq!(store.turn_ids_in_session("s").unwrap(), ["a"]);
        store.recorder().record_turn(turn("s", "b"));
        assert_eq!(store.call(|_| Ok(7)).unwrap(), 7);
        assert_eq!(store.turn_ids_in_session("s").unwrap(), ["a", "b"]);
        store.close().unwrap();
    }

    #[test]
    fn evaluations_and_adapter_versions_round_trip() {
        let (_dir, store) = open();
        let run = store
            .start_eval_run("/tasks", "test", EvalPurpose::Gate, "candidate", Some(3))
            .unwrap();
        store.mark_eval_session("ev-1", run).unwrap();
        assert!(store.is_eval_session("ev-1").unwrap());
        assert!(!store.is_eval_session("live").unwrap());
        for (session, passed) in [("ev-1", true), ("ev-2", false)] {
            let outcome = EvalOutcome {
                task_id: session.to_owned(),
                session_id: session.to_owned(),
                passed,
                score: f64::from(u8::from(passed)),
                answer: "a".into(),
                detail: String::new(),
            };
            store.add_eval_outcome(run, outcome).unwrap();
        }
        store.finish_eval_run(run).unwrap();
        let runs = store.eval_runs(10).unwrap();
        assert_eq!((runs[0].successes, runs[0].trials), (1, 2));
        assert_eq!(runs[0].mean_score, Some(0.5));
        assert_eq!(runs[0].adapter_step, Some(3));
        assert_eq!(store.eval_outcomes(run).unwrap().len(), 2);

        // A bench arm: many rounds of one day session, totals from its rounds.
        let bench = store
            .start_eval_run(
                "/bench",
                "metaclaw-bench",
                EvalPurpose::Eval,
                "skills",
                None,
            )
            .unwrap();
        for (round, kind, score) in [("r1", "file_check", 1.0), ("r2", "multi_choice", 0.5)] {
            let r = BenchRound {
                day: "day01".into(),
                round: round.into(),
                kind: kind.into(),
                session_id: "bench-day01".into(),
                passed: score == 1.0,
                score,
                detail: String::new(),
            };
            store.add_bench_round(bench, r).unwrap();
        }
        store.finish_bench_run(bench).unwrap();
        let run = store.eval_runs(10).unwrap().pop().unwrap();
        assert_eq!(
            (run.successes, run.trials, run.mean_score),
            (1, 2, Some(0.75))
        );
        assert_eq!(store.bench_rounds(bench).unwrap()[1].kind, "multi_choice");

        let version = |step, status| AdapterVersion {
            step,
            created_at: store.now(),
            sampler_path: Some(format!("tinker://s/{step}")),
            state_path: None,
            status,
            eval_success: Some(0.5),
            eval_trials: Some(4),
            reason: None,
        };
        store
            .upsert_adapter_version(version(1, AdapterStatus::Serving))
            .unwrap();
        store
            .upsert_adapter_version(version(2, AdapterStatus::Serving))
            .unwrap();
        store
            .upsert_adapter_version(version(3, AdapterStatus::Refused))
            .unwrap();
        let statuses: Vec<AdapterStatus> = store
            .adapter_versions()
            .unwrap()
            .iter()
            .map(|v| v.status)
            .collect();
        assert_eq!(
            statuses,
            [
                AdapterStatus::Kept,
                AdapterStatus::Serving,
                AdapterStatus::Refused
            ]
        );
        // A verifier reward is a valid sample and turn reward source.
        store.recorder().record_turn(turn("s", "t1"));
        store.flush().unwrap();
        store
            .set_turn_reward("t1", 1.0, RewardSource::Verifier)
            .unwrap();
        assert_eq!(
            store.turn_reward("t1").unwrap().unwrap().source,
            RewardSource::Verifier
        );
    }

    #[test]
    fn flush_and_close_report_a_dead_writer_only_when_dead() {
        let (_dir, store) = open();
        store.flush().unwrap();
        store.close().unwrap();
    }
}
