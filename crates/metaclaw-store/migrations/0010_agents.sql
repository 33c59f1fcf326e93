-- 0010: agents as identities. Every session, turn and sample carries the agent that sent it
-- ('default' for requests with no key or agent of their own, and for rows older than this);
-- a proposal carries the agent whose folder it goes to (NULL: the shared folder).

ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT 'default';
ALTER TABLE turns ADD COLUMN agent TEXT NOT NULL DEFAULT 'default';
ALTER TABLE samples ADD COLUMN agent TEXT NOT NULL DEFAULT 'default';
ALTER TABLE proposals ADD COLUMN agent TEXT;

-- The dashboard's per-agent lists and charts, in the order they are read.
CREATE INDEX sessions_agent_recent ON sessions (agent, last_seen_at DESC, id);
CREATE INDEX turns_agent_started_at ON turns (agent, started_at);
CREATE INDEX proposals_agent ON proposals (agent, id);
