-- 0005: training samples. What the RL policy produced for a main turn, token for token, so
-- training never re-tokenises text. Timestamps as in 0001.

-- One row per sampled response: idx 0 is the response the user got, idx 1.. are the extra
-- samples drawn for the same prompt when rl.group_size > 1. Goes with its turn.
CREATE TABLE samples (
    id                INTEGER PRIMARY KEY NOT NULL,
    turn_id           TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    idx               INTEGER NOT NULL CHECK (idx >= 0),
    session_id        TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    skill_generation  INTEGER NOT NULL,
    sampler           TEXT NOT NULL,          -- the sampler (weights) that produced it
    renderer          TEXT NOT NULL,
    prompt_tokens     BLOB NOT NULL,          -- u32 little-endian
    response_tokens   BLOB NOT NULL,          -- u32 little-endian, as sampled
    response_logprobs BLOB NOT NULL,          -- f32 little-endian, the sampler's
    response_text     TEXT NOT NULL,          -- parsed content, for the judge
    teacher_logprobs  BLOB,                   -- f32 little-endian, OPD teacher on the response
    reward            REAL,
    reward_source     TEXT CHECK (reward_source IN ('prm', 'feedback', 'combined')),
    state             TEXT NOT NULL
        CHECK (state IN ('pending', 'ready', 'batched', 'trained', 'stale', 'skipped')),
    step              INTEGER,                -- the training step that took it
    UNIQUE (turn_id, idx)
) STRICT;

CREATE INDEX samples_state ON samples (state, id);
CREATE INDEX samples_session ON samples (session_id);
