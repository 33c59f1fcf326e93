-- 0013: the parts a served answer's RL reward is made of, per turn (judge, thumbs, and the
-- implicit signals of live use: correction, retry, tool error), each with the weight it was
-- given, so the session view can show how the reward came about. Rewritten whenever the
-- reward is set again before training; goes with its turn.
CREATE TABLE turn_reward_components (
    turn_id   TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    component TEXT NOT NULL,
    -- The raw signal: the judge's score, the rating, -1 for a bad implicit sign.
    signal    REAL NOT NULL,
    weight    REAL NOT NULL,
    -- signal × weight: what it added to the reward.
    value     REAL NOT NULL,
    PRIMARY KEY (turn_id, component)
) STRICT, WITHOUT ROWID;

-- The next user turn asked again (same message, "try again"); set like `corrected`.
ALTER TABLE turn_outcomes ADD COLUMN retried INTEGER NOT NULL DEFAULT 0;

-- Sessions a rollout ran as task episodes: their task's verifier rewards them, so the
-- implicit signals of live use never join their reward. Written before the session's
-- first turn, so it has no foreign key to sessions.
CREATE TABLE rollout_sessions (
    session_id TEXT PRIMARY KEY NOT NULL
) STRICT, WITHOUT ROWID;
