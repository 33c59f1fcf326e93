-- 0004: training. The trainer's steps and checkpoints, the process reward model's votes on
-- turns, and the reward each turn was given. Timestamps as in 0001 (RFC 3339 UTC, millis).

-- One row per training step, numbered by the trainer; written when the step starts and
-- replaced as it progresses and ends.
CREATE TABLE training_steps (
    step             INTEGER PRIMARY KEY NOT NULL CHECK (step >= 0),
    started_at       TEXT NOT NULL,
    finished_at      TEXT,
    status           TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'paused')),
    loss             REAL,
    mean_reward      REAL,
    success_rate     REAL,
    tokens           INTEGER,
    kl               REAL,                   -- KL to the reference policy (OPD)
    samples          INTEGER,
    skill_generation INTEGER,                -- meta.skill_generation the samples were served with
    error            TEXT,
    checkpoint       TEXT,                   -- checkpoints.name saved after this step, if any
    progress         REAL                    -- 0..1 within a running step
) STRICT;

CREATE INDEX training_steps_running ON training_steps (step) WHERE status = 'running';

-- Saved trainer state. Kept on retention (not tied to turns).
CREATE TABLE checkpoints (
    name       TEXT PRIMARY KEY NOT NULL,
    step       INTEGER NOT NULL,
    path       TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('state', 'sampler')),
    created_at TEXT NOT NULL
) STRICT;

CREATE INDEX checkpoints_created_at ON checkpoints (created_at);

-- Each judge vote of the process reward model on a turn: vote 0, 1, ... Goes with its turn.
CREATE TABLE prm_votes (
    turn_id    TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    vote       INTEGER NOT NULL CHECK (vote >= 0),
    score      INTEGER NOT NULL CHECK (score IN (-1, 0, 1)),
    rationale  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (turn_id, vote)
) STRICT, WITHOUT ROWID;

-- The reward a turn was given (at most one; setting it again replaces it). Goes with its turn.
CREATE TABLE turn_rewards (
    turn_id    TEXT PRIMARY KEY NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    reward     REAL NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('prm', 'feedback', 'combined')),
    created_at TEXT NOT NULL
) STRICT;
