-- 0006: reads that stay fast after a year of use (a million turns). Indexes for the pages
-- the dashboard reads, and per-skill usage kept up to date by triggers instead of joining
-- every injected skill with its turn and feedback on each read.

-- The session list, newest first, read page by page (ORDER BY last_seen_at DESC, id).
-- Also serves retention's last_seen_at range.
DROP INDEX sessions_last_seen_at;
CREATE INDEX sessions_recent ON sessions (last_seen_at DESC, id);

-- Sessions still open, which start-up closes; few, so the partial index stays tiny.
CREATE INDEX sessions_open ON sessions (last_seen_at) WHERE ended_at IS NULL;

-- Proposals by status, newest first, and counted by status.
DROP INDEX proposals_status;
CREATE INDEX proposals_status_id ON proposals (status, id);

-- The last failed evolver run.
CREATE INDEX evolution_runs_failed ON evolution_runs (started_at) WHERE status = 'failed';

-- Usage of each skill in the stored turns: turns it was injected into, the thumbs on those
-- turns, and the newest such turn. Kept by the triggers below. Retention deletes the oldest
-- turns first, so the newest injection stays right while any injection is left; a skill left
-- with none loses its row.
CREATE TABLE skill_usage (
    skill_name       TEXT PRIMARY KEY NOT NULL,
    injected         INTEGER NOT NULL,
    thumbs_up        INTEGER NOT NULL,
    thumbs_down      INTEGER NOT NULL,
    last_injected_at TEXT
) STRICT;

INSERT INTO skill_usage (skill_name, injected, thumbs_up, thumbs_down, last_injected_at)
SELECT ts.skill_name,
       count(*),
       count(*) FILTER (WHERE f.rating = 1),
       count(*) FILTER (WHERE f.rating = -1),
       max(t.started_at)
FROM turn_skills ts
JOIN turns t ON t.id = ts.turn_id
LEFT JOIN feedback f ON f.turn_id = ts.turn_id
GROUP BY ts.skill_name;

CREATE TRIGGER skill_usage_injected AFTER INSERT ON turn_skills
BEGIN
    INSERT INTO skill_usage (skill_name, injected, thumbs_up, thumbs_down, last_injected_at)
    VALUES (
        NEW.skill_name,
        1,
        (SELECT count(*) FROM feedback WHERE turn_id = NEW.turn_id AND rating = 1),
        (SELECT count(*) FROM feedback WHERE turn_id = NEW.turn_id AND rating = -1),
        (SELECT started_at FROM turns WHERE id = NEW.turn_id)
    )
    ON CONFLICT (skill_name) DO UPDATE SET
        injected = injected + 1,
        thumbs_up = thumbs_up + excluded.thumbs_up,
        thumbs_down = thumbs_down + excluded.thumbs_down,
        last_injected_at = CASE
            WHEN last_injected_at IS NULL OR excluded.last_injected_at > last_injected_at
            THEN excluded.last_injected_at
            ELSE last_injected_at
        END;
END;

-- When a turn goes, its feedback and its skills go too (ON DELETE CASCADE), in either order:
-- whichever row goes first takes the thumbs off, the other then finds nothing to subtract.
CREATE TRIGGER skill_usage_forgotten AFTER DELETE ON turn_skills
BEGIN
    UPDATE skill_usage SET
        injected = injected - 1,
        thumbs_up = thumbs_up
            - (SELECT count(*) FROM feedback WHERE turn_id = OLD.turn_id AND rating = 1),
        thumbs_down = thumbs_down
            - (SELECT count(*) FROM feedback WHERE turn_id = OLD.turn_id AND rating = -1)
    WHERE skill_name = OLD.skill_name;
    DELETE FROM skill_usage WHERE skill_name = OLD.skill_name AND injected <= 0;
END;

CREATE TRIGGER skill_usage_rated AFTER INSERT ON feedback
BEGIN
    UPDATE skill_usage SET
        thumbs_up = thumbs_up + (NEW.rating = 1),
        thumbs_down = thumbs_down + (NEW.rating = -1)
    WHERE skill_name IN (SELECT skill_name FROM turn_skills WHERE turn_id = NEW.turn_id);
END;

CREATE TRIGGER skill_usage_rerated AFTER UPDATE OF rating ON feedback
BEGIN
    UPDATE skill_usage SET
        thumbs_up = thumbs_up - (OLD.rating = 1) + (NEW.rating = 1),
        thumbs_down = thumbs_down - (OLD.rating = -1) + (NEW.rating = -1)
    WHERE skill_name IN (SELECT skill_name FROM turn_skills WHERE turn_id = NEW.turn_id);
END;

CREATE TRIGGER skill_usage_unrated AFTER DELETE ON feedback
BEGIN
    UPDATE skill_usage SET
        thumbs_up = thumbs_up - (OLD.rating = 1),
        thumbs_down = thumbs_down - (OLD.rating = -1)
    WHERE skill_name IN (SELECT skill_name FROM turn_skills WHERE turn_id = OLD.turn_id);
END;
