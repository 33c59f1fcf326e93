-- 0003: skill evolution. Which skills each turn saw, the user's feedback on turns, the
-- evolver's proposals and runs, and the version history of every skill.

-- The skill generation (meta.skill_generation) the turn was served with; NULL if unknown.
ALTER TABLE turns ADD COLUMN skill_generation INTEGER;

-- The skills injected into a turn, from its injected_json entries with "kind": "skill".
-- Goes with its turn on retention (ON DELETE CASCADE).
CREATE TABLE turn_skills (
    turn_id    TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    skill_name TEXT NOT NULL,
    version    TEXT,
    PRIMARY KEY (turn_id, skill_name)
) STRICT, WITHOUT ROWID;

CREATE INDEX turn_skills_skill_name ON turn_skills (skill_name);

-- Turns logged before this migration.
INSERT OR IGNORE INTO turn_skills (turn_id, skill_name, version)
SELECT t.id,
       json_extract(e.value, '$.name'),
       CAST(json_extract(e.value, '$.version') AS TEXT)
FROM turns t, json_each(t.injected_json) e
WHERE json_type(t.injected_json) = 'array'
  AND e.type = 'object'
  AND json_extract(e.value, '$.kind') = 'skill'
  AND json_type(e.value, '$.name') = 'text';

-- At most one rating per turn; setting it again replaces it.
CREATE TABLE feedback (
    turn_id    TEXT PRIMARY KEY NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    rating     INTEGER NOT NULL CHECK (rating IN (-1, 1)),
    note       TEXT,
    created_at TEXT NOT NULL
) STRICT;

-- Skills the evolver proposes (new ones, or updates of existing ones), until the user
-- decides. Kept after retention prunes the turns they cite.
CREATE TABLE proposals (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL CHECK (kind IN ('new', 'update')),
    skill_name    TEXT NOT NULL,
    content       TEXT NOT NULL,             -- the full proposed SKILL.md
    base_content  TEXT,                      -- the SKILL.md an update targets, at proposal time
    diff          TEXT,
    reason        TEXT NOT NULL,
    session_id    TEXT,
    turn_ids      TEXT NOT NULL,             -- JSON array of turn ids
    signals       TEXT NOT NULL,             -- JSON
    evolver_model TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'undone')),
    reject_reason TEXT,
    fingerprint   TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    decided_at    TEXT
) STRICT;

CREATE INDEX proposals_status ON proposals (status);
CREATE INDEX proposals_fingerprint ON proposals (fingerprint);

-- Small persisted counters and settings.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;

-- Bumped by every skill_versions row: a skill change of any kind starts a new generation.
INSERT INTO meta (key, value) VALUES ('skill_generation', '0');

-- Every state each skill has been in, numbered 1, 2, ... per skill.
CREATE TABLE skill_versions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    skill_name  TEXT NOT NULL,
    version     INTEGER NOT NULL,
    content     TEXT NOT NULL,
    author      TEXT NOT NULL CHECK (author IN ('user', 'evolver')),
    action      TEXT NOT NULL
                CHECK (action IN ('create', 'approve', 'edit', 'rollback', 'undo', 'delete')),
    proposal_id INTEGER REFERENCES proposals (id),
    generation  INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    UNIQUE (skill_name, version)
) STRICT;

CREATE TABLE evolution_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT,
    "trigger"   TEXT NOT NULL CHECK ("trigger" IN ('session_end', 'every_n_turns', 'manual')),
    status      TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'skipped')),
    error       TEXT,
    proposals   INTEGER NOT NULL,
    model       TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL
) STRICT;

CREATE INDEX evolution_runs_started_at ON evolution_runs (started_at);
