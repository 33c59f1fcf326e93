-- 0012: MetaClaw-Bench rounds (issue 19). Each arm of a bench run is an eval_runs row
-- (purpose 'eval', split 'metaclaw-bench'); its rounds live here because a benchmark day is
-- one session of many rounds, and eval_outcomes holds one row per session.
CREATE TABLE bench_rounds (
    run_id     INTEGER NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
    day        TEXT NOT NULL,
    round      TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('file_check', 'multi_choice')),
    session_id TEXT NOT NULL,
    passed     INTEGER NOT NULL CHECK (passed IN (0, 1)),
    score      REAL NOT NULL,
    detail     TEXT NOT NULL,
    PRIMARY KEY (run_id, day, round)
) STRICT, WITHOUT ROWID;
