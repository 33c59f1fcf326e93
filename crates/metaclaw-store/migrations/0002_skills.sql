-- Per-skill switches, kept here so SKILL.md stays spec-valid.
CREATE TABLE skill_state (
    name       TEXT PRIMARY KEY,
    enabled    INTEGER NOT NULL DEFAULT 1,
    pinned     INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
) STRICT;

-- Skill vectors from the embeddings endpoint, by model and hash of the embedded text.
CREATE TABLE skill_embeddings (
    model      TEXT NOT NULL,
    hash       TEXT NOT NULL,
    vector     BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (model, hash)
) STRICT;
