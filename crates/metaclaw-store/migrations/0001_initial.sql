-- 0001: the turn log. Later migrations (skill versions, samples, training steps) add their
-- own tables; they may reference sessions(id), turns(id) and blobs(hash).
-- Timestamps are RFC 3339 UTC with milliseconds ("2025-01-02T03:04:05.678Z"), so string
-- comparison orders them correctly.

CREATE TABLE sessions (
    id           TEXT PRIMARY KEY NOT NULL,
    source       TEXT NOT NULL,              -- SessionSource: how the id was found
    started_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    ended_at     TEXT,
    end_reason   TEXT,                       -- SessionEndReason
    turn_count   INTEGER NOT NULL DEFAULT 0  -- turns currently stored for this session
) STRICT;

CREATE INDEX sessions_last_seen_at ON sessions (last_seen_at);

-- Content-addressed payloads (system prompts, tool lists): stored once, referenced from
-- turns.request_json as {"$blob": "<hash>"}.
CREATE TABLE blobs (
    hash       TEXT PRIMARY KEY NOT NULL,    -- sha256 hex of content
    kind       TEXT NOT NULL,                -- 'system' | 'tools' (kind of its first use)
    content    TEXT NOT NULL,                -- compact JSON text
    created_at TEXT NOT NULL
) STRICT;

CREATE TABLE turns (
    id            TEXT PRIMARY KEY NOT NULL,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    seq           INTEGER NOT NULL,          -- 1-based, in the order the writer received turns
    turn_type     TEXT NOT NULL,
    api           TEXT NOT NULL,             -- client dialect; decides where blob refs live
    stream        INTEGER NOT NULL,
    model         TEXT,
    request_json  TEXT NOT NULL,             -- with blob refs in place of system/tools
    system_blob   TEXT REFERENCES blobs (hash),
    tools_blob    TEXT REFERENCES blobs (hash),
    response_json TEXT,
    status        TEXT NOT NULL,
    http_status   INTEGER NOT NULL,
    error         TEXT,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    started_at    TEXT NOT NULL,
    latency_ms    REAL NOT NULL,
    ttfb_ms       REAL,
    injected_json TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX turns_session_seq ON turns (session_id, seq);
CREATE INDEX turns_started_at ON turns (started_at);
-- Needed so deleting a blob does not scan turns for the foreign-key check.
CREATE INDEX turns_system_blob ON turns (system_blob);
CREATE INDEX turns_tools_blob ON turns (tools_blob);

-- Every blob a turn references (not only the first system prompt), so retention can find
-- unreferenced blobs without parsing request_json.
CREATE TABLE turn_blobs (
    turn_id TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    hash    TEXT NOT NULL REFERENCES blobs (hash),
    PRIMARY KEY (turn_id, hash)
) STRICT, WITHOUT ROWID;

CREATE INDEX turn_blobs_hash ON turn_blobs (hash);
