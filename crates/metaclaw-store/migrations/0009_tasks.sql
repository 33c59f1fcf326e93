-- 0009: task rollouts, evaluations and adapter versions (issue 19).

-- A task's verifier can be a sample's reward: 'verifier' joins the reward sources. SQLite
-- cannot change a CHECK in place, so samples and turn_rewards are rebuilt with the same rows.
CREATE TABLE samples_0009 (
    id                INTEGER PRIMARY KEY NOT NULL,
    turn_id           TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL CHECK (idx >= 0),
    session_id        TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    skill_generation  INTEGER NOT NULL,
    sampler           TEXT NOT NULL,
    renderer          TEXT NOT NULL,
    prompt_tokens     BLOB NOT NULL,
    response_tokens   BLOB NOT NULL,
    response_logprobs BLOB NOT NULL,
    response_text     TEXT NOT NULL,
    teacher_logprobs  BLOB,
    reward            REAL,
    reward_source     TEXT
        CHECK (reward_source IN ('prm', 'feedback', 'combined', 'verifier')),
    state             TEXT NOT NULL
        CHECK (state IN ('pending', 'ready', 'batched', 'trained', 'stale', 'skipped')),
    step              INTEGER,
    UNIQUE (turn_id, idx)
) STRICT;
INSERT INTO samples_0009 SELECT * FROM samples;
DROP TABLE samples;
ALTER TABLE samples_0009 RENAME TO samples;
CREATE INDEX samples_state ON samples (state, id);
CREATE INDEX samples_session ON samples (session_id);

CREATE TABLE turn_rewards_0009 (
    turn_id    TEXT PRIMARY KEY NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    reward     REAL NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('prm', 'feedback', 'combined', 'verifier')),
    created_at TEXT NOT NULL
) STRICT;
INSERT INTO turn_rewards_0009 SELECT * FROM turn_rewards;
DROP TABLE turn_rewards;
ALTER TABLE turn_rewards_0009 RENAME TO turn_rewards;

-- Sessions an evaluation ran: never sampled for RL, never distilled into skills. Written
-- before the session's first turn, so it has no foreign key to sessions.
CREATE TABLE eval_sessions (
    session_id TEXT PRIMARY KEY NOT NULL,
    run_id     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- One arm of one evaluation over a task split.
CREATE TABLE eval_runs (
    id           INTEGER PRIMARY KEY NOT NULL,
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    task_dir     TEXT NOT NULL,
    split        TEXT NOT NULL,
    -- 'eval' (asked for), 'curve' (after a rollout step), 'gate' (a candidate adapter)
    purpose      TEXT NOT NULL CHECK (purpose IN ('eval', 'curve', 'gate')),
    arm          TEXT NOT NULL,
    -- The adapter version (training step) the arm served, when the policy served it.
    adapter_step INTEGER,
    successes    INTEGER NOT NULL DEFAULT 0,
    trials       INTEGER NOT NULL DEFAULT 0,
    mean_score   REAL
) STRICT;
CREATE INDEX eval_runs_started ON eval_runs (started_at);

CREATE TABLE eval_outcomes (
    run_id     INTEGER NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    passed     INTEGER NOT NULL CHECK (passed IN (0, 1)),
    score      REAL NOT NULL,
    answer     TEXT NOT NULL,
    detail     TEXT NOT NULL,
    PRIMARY KEY (run_id, session_id)
) STRICT, WITHOUT ROWID;

-- Every trained adapter is a version: its gate figure and whether it serves.
CREATE TABLE adapter_versions (
    step          INTEGER PRIMARY KEY NOT NULL,
    created_at    TEXT NOT NULL,
    sampler_path  TEXT,
    state_path    TEXT,
    -- 'serving', 'kept' (was accepted, no longer serves), 'refused' (failed the gate)
    status        TEXT NOT NULL CHECK (status IN ('serving', 'kept', 'refused')),
    eval_success  REAL,
    eval_trials   INTEGER,
    reason        TEXT
) STRICT;
