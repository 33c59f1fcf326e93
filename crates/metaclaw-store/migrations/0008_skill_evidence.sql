-- 0008: evidence per skill. Which turns had a skill as a candidate that was not injected
-- (the control group), the bad outcomes of every turn, and per-skill counts of both kept by
-- triggers, so the Skill health view reads one small row per skill and arm.

-- Skills retrieval ranked just below the cut in a turn ('below_cut'), or retrieved but
-- withheld by skills.holdout_share ('holdout'). Goes with its turn.
CREATE TABLE turn_skill_controls (
    turn_id    TEXT NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    skill_name TEXT NOT NULL,
    cause      TEXT NOT NULL CHECK (cause IN ('below_cut', 'holdout')),
    PRIMARY KEY (turn_id, skill_name)
) STRICT, WITHOUT ROWID;

CREATE INDEX turn_skill_controls_skill_name ON turn_skill_controls (skill_name);

-- What went wrong after a turn: thumbs down, the judge's verdict -1, the user's next message
-- correcting it, its tool calls coming back with errors. A row exists once any flag was set.
CREATE TABLE turn_outcomes (
    turn_id     TEXT PRIMARY KEY NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    thumbs_down INTEGER NOT NULL DEFAULT 0,
    judged_bad  INTEGER NOT NULL DEFAULT 0,
    corrected   INTEGER NOT NULL DEFAULT 0,
    tool_error  INTEGER NOT NULL DEFAULT 0,
    -- A main turn (counted in outcome_totals); set when the row is created.
    main        INTEGER NOT NULL DEFAULT 0,
    bad         INTEGER NOT NULL GENERATED ALWAYS AS (
        thumbs_down OR judged_bad OR corrected OR tool_error
    ) STORED
) STRICT, WITHOUT ROWID;

-- The corrected turns of a skill, for the evolver's revision request.
CREATE INDEX turn_outcomes_corrected ON turn_outcomes (turn_id) WHERE corrected = 1;

INSERT INTO turn_outcomes (turn_id, main, thumbs_down, judged_bad)
SELECT t.id,
       t.turn_type = 'main',
       coalesce((SELECT rating = -1 FROM feedback WHERE turn_id = t.id), 0),
       coalesce((SELECT verdict = -1 FROM prm_verdicts WHERE turn_id = t.id), 0)
FROM turns t
WHERE t.id IN (SELECT turn_id FROM feedback WHERE rating = -1
               UNION SELECT turn_id FROM prm_verdicts WHERE verdict = -1);

-- Per skill and arm ('injected', 'below_cut', 'holdout'): turns, and how many of them had a
-- bad outcome (and which kinds). A row goes when its last turn goes.
CREATE TABLE skill_evidence (
    skill_name  TEXT NOT NULL,
    arm         TEXT NOT NULL CHECK (arm IN ('injected', 'below_cut', 'holdout')),
    turns       INTEGER NOT NULL,
    bad         INTEGER NOT NULL,
    thumbs_down INTEGER NOT NULL,
    judged_bad  INTEGER NOT NULL,
    corrected   INTEGER NOT NULL,
    tool_error  INTEGER NOT NULL,
    PRIMARY KEY (skill_name, arm)
) STRICT, WITHOUT ROWID;

INSERT INTO skill_evidence
    (skill_name, arm, turns, bad, thumbs_down, judged_bad, corrected, tool_error)
SELECT ts.skill_name, 'injected', count(*),
       coalesce(sum(o.bad), 0), coalesce(sum(o.thumbs_down), 0), coalesce(sum(o.judged_bad), 0),
       coalesce(sum(o.corrected), 0), coalesce(sum(o.tool_error), 0)
FROM turn_skills ts
LEFT JOIN turn_outcomes o ON o.turn_id = ts.turn_id
GROUP BY ts.skill_name;

-- Main turns and how many had a bad outcome: the fallback comparison ("all other turns")
-- for a skill that has too few candidate turns without it. One row, id 1.
CREATE TABLE outcome_totals (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    turns INTEGER NOT NULL,
    bad   INTEGER NOT NULL
) STRICT;

INSERT INTO outcome_totals (id, turns, bad)
SELECT 1,
       (SELECT count(*) FROM turns WHERE turn_type = 'main'),
       (SELECT count(*) FROM turn_outcomes WHERE main AND bad);

CREATE TRIGGER outcome_totals_turn AFTER INSERT ON turns WHEN NEW.turn_type = 'main'
BEGIN
    UPDATE outcome_totals SET turns = turns + 1 WHERE id = 1;
END;

-- Its bad outcome is taken off when its turn_outcomes row goes (ON DELETE CASCADE).
CREATE TRIGGER outcome_totals_turn_gone AFTER DELETE ON turns WHEN OLD.turn_type = 'main'
BEGIN
    UPDATE outcome_totals SET turns = turns - 1 WHERE id = 1;
END;

-- Outcome flags from the user's thumbs and the judge's verdicts. Each sets its own column;
-- a row is only created for a flag that is set. (NOT EXISTS, not INSERT OR IGNORE: inside a
-- trigger the outer statement's conflict policy would override the IGNORE.)
CREATE TRIGGER turn_outcomes_rated AFTER INSERT ON feedback
BEGIN
    UPDATE turn_outcomes SET thumbs_down = (NEW.rating = -1) WHERE turn_id = NEW.turn_id;
    INSERT INTO turn_outcomes (turn_id, main, thumbs_down)
    SELECT NEW.turn_id,
           coalesce((SELECT turn_type = 'main' FROM turns WHERE id = NEW.turn_id), 0),
           1
    WHERE NEW.rating = -1
      AND NOT EXISTS (SELECT 1 FROM turn_outcomes WHERE turn_id = NEW.turn_id);
END;

CREATE TRIGGER turn_outcomes_rerated AFTER UPDATE OF rating ON feedback
BEGIN
    UPDATE turn_outcomes SET thumbs_down = (NEW.rating = -1) WHERE turn_id = NEW.turn_id;
    INSERT INTO turn_outcomes (turn_id, main, thumbs_down)
    SELECT NEW.turn_id,
           coalesce((SELECT turn_type = 'main' FROM turns WHERE id = NEW.turn_id), 0),
           1
    WHERE NEW.rating = -1
      AND NOT EXISTS (SELECT 1 FROM turn_outcomes WHERE turn_id = NEW.turn_id);
END;

CREATE TRIGGER turn_outcomes_unrated AFTER DELETE ON feedback
BEGIN
    UPDATE turn_outcomes SET thumbs_down = 0 WHERE turn_id = OLD.turn_id;
END;

CREATE TRIGGER turn_outcomes_judged AFTER INSERT ON prm_verdicts
BEGIN
    UPDATE turn_outcomes SET judged_bad = (NEW.verdict = -1) WHERE turn_id = NEW.turn_id;
    INSERT INTO turn_outcomes (turn_id, main, judged_bad)
    SELECT NEW.turn_id,
           coalesce((SELECT turn_type = 'main' FROM turns WHERE id = NEW.turn_id), 0),
           1
    WHERE NEW.verdict = -1
      AND NOT EXISTS (SELECT 1 FROM turn_outcomes WHERE turn_id = NEW.turn_id);
END;

CREATE TRIGGER turn_outcomes_rejudged AFTER UPDATE ON prm_verdicts
BEGIN
    UPDATE turn_outcomes SET judged_bad = (NEW.verdict = -1) WHERE turn_id = NEW.turn_id;
    INSERT INTO turn_outcomes (turn_id, main, judged_bad)
    SELECT NEW.turn_id,
           coalesce((SELECT turn_type = 'main' FROM turns WHERE id = NEW.turn_id), 0),
           1
    WHERE NEW.verdict = -1
      AND NOT EXISTS (SELECT 1 FROM turn_outcomes WHERE turn_id = NEW.turn_id);
END;

CREATE TRIGGER turn_outcomes_unjudged AFTER DELETE ON prm_verdicts
BEGIN
    UPDATE turn_outcomes SET judged_bad = 0 WHERE turn_id = OLD.turn_id;
END;

-- A turn's outcome counts for every skill injected into it or held back from it. (Two
-- statements: each finds its skill_evidence rows by primary key, a UNION would scan.)
CREATE TRIGGER skill_evidence_outcome_new AFTER INSERT ON turn_outcomes
BEGIN
    UPDATE skill_evidence SET
        bad = bad + NEW.bad,
        thumbs_down = thumbs_down + NEW.thumbs_down,
        judged_bad = judged_bad + NEW.judged_bad,
        corrected = corrected + NEW.corrected,
        tool_error = tool_error + NEW.tool_error
    WHERE arm = 'injected'
      AND skill_name IN (SELECT skill_name FROM turn_skills WHERE turn_id = NEW.turn_id);
    UPDATE skill_evidence SET
        bad = bad + NEW.bad,
        thumbs_down = thumbs_down + NEW.thumbs_down,
        judged_bad = judged_bad + NEW.judged_bad,
        corrected = corrected + NEW.corrected,
        tool_error = tool_error + NEW.tool_error
    WHERE (skill_name, arm) IN (
        SELECT skill_name, cause FROM turn_skill_controls WHERE turn_id = NEW.turn_id);
    UPDATE outcome_totals SET bad = bad + NEW.bad WHERE id = 1 AND NEW.main;
END;

CREATE TRIGGER skill_evidence_outcome_changed AFTER UPDATE ON turn_outcomes
BEGIN
    UPDATE skill_evidence SET
        bad = bad - OLD.bad + NEW.bad,
        thumbs_down = thumbs_down - OLD.thumbs_down + NEW.thumbs_down,
        judged_bad = judged_bad - OLD.judged_bad + NEW.judged_bad,
        corrected = corrected - OLD.corrected + NEW.corrected,
        tool_error = tool_error - OLD.tool_error + NEW.tool_error
    WHERE arm = 'injected'
      AND skill_name IN (SELECT skill_name FROM turn_skills WHERE turn_id = NEW.turn_id);
    UPDATE skill_evidence SET
        bad = bad - OLD.bad + NEW.bad,
        thumbs_down = thumbs_down - OLD.thumbs_down + NEW.thumbs_down,
        judged_bad = judged_bad - OLD.judged_bad + NEW.judged_bad,
        corrected = corrected - OLD.corrected + NEW.corrected,
        tool_error = tool_error - OLD.tool_error + NEW.tool_error
    WHERE (skill_name, arm) IN (
        SELECT skill_name, cause FROM turn_skill_controls WHERE turn_id = NEW.turn_id);
    UPDATE outcome_totals SET bad = bad - OLD.bad + NEW.bad WHERE id = 1 AND NEW.main;
END;

CREATE TRIGGER skill_evidence_outcome_gone AFTER DELETE ON turn_outcomes
BEGIN
    UPDATE skill_evidence SET
        bad = bad - OLD.bad,
        thumbs_down = thumbs_down - OLD.thumbs_down,
        judged_bad = judged_bad - OLD.judged_bad,
        corrected = corrected - OLD.corrected,
        tool_error = tool_error - OLD.tool_error
    WHERE arm = 'injected'
      AND skill_name IN (SELECT skill_name FROM turn_skills WHERE turn_id = OLD.turn_id);
    UPDATE skill_evidence SET
        bad = bad - OLD.bad,
        thumbs_down = thumbs_down - OLD.thumbs_down,
        judged_bad = judged_bad - OLD.judged_bad,
        corrected = corrected - OLD.corrected,
        tool_error = tool_error - OLD.tool_error
    WHERE (skill_name, arm) IN (
        SELECT skill_name, cause FROM turn_skill_controls WHERE turn_id = OLD.turn_id);
    UPDATE outcome_totals SET bad = bad - OLD.bad WHERE id = 1 AND OLD.main;
END;

CREATE TRIGGER skill_evidence_injected AFTER INSERT ON turn_skills
BEGIN
    INSERT INTO skill_evidence
        (skill_name, arm, turns, bad, thumbs_down, judged_bad, corrected, tool_error)
    SELECT NEW.skill_name, 'injected', 1,
           coalesce(o.bad, 0), coalesce(o.thumbs_down, 0), coalesce(o.judged_bad, 0),
           coalesce(o.corrected, 0), coalesce(o.tool_error, 0)
    FROM (SELECT 1) LEFT JOIN turn_outcomes o ON o.turn_id = NEW.turn_id
    WHERE true
    ON CONFLICT (skill_name, arm) DO UPDATE SET
        turns = turns + 1,
        bad = bad + excluded.bad,
        thumbs_down = thumbs_down + excluded.thumbs_down,
        judged_bad = judged_bad + excluded.judged_bad,
        corrected = corrected + excluded.corrected,
        tool_error = tool_error + excluded.tool_error;
END;

CREATE TRIGGER skill_evidence_controlled AFTER INSERT ON turn_skill_controls
BEGIN
    INSERT INTO skill_evidence
        (skill_name, arm, turns, bad, thumbs_down, judged_bad, corrected, tool_error)
    SELECT NEW.skill_name, NEW.cause, 1,
           coalesce(o.bad, 0), coalesce(o.thumbs_down, 0), coalesce(o.judged_bad, 0),
           coalesce(o.corrected, 0), coalesce(o.tool_error, 0)
    FROM (SELECT 1) LEFT JOIN turn_outcomes o ON o.turn_id = NEW.turn_id
    WHERE true
    ON CONFLICT (skill_name, arm) DO UPDATE SET
        turns = turns + 1,
        bad = bad + excluded.bad,
        thumbs_down = thumbs_down + excluded.thumbs_down,
        judged_bad = judged_bad + excluded.judged_bad,
        corrected = corrected + excluded.corrected,
        tool_error = tool_error + excluded.tool_error;
END;

CREATE TRIGGER skill_evidence_injection_gone AFTER DELETE ON turn_skills
BEGIN
    UPDATE skill_evidence SET
        turns = turns - 1,
        bad = bad - coalesce((SELECT bad FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        thumbs_down = thumbs_down
            - coalesce((SELECT thumbs_down FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        judged_bad = judged_bad
            - coalesce((SELECT judged_bad FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        corrected = corrected
            - coalesce((SELECT corrected FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        tool_error = tool_error
            - coalesce((SELECT tool_error FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0)
    WHERE skill_name = OLD.skill_name AND arm = 'injected';
    DELETE FROM skill_evidence
    WHERE skill_name = OLD.skill_name AND arm = 'injected' AND turns <= 0;
END;

CREATE TRIGGER skill_evidence_control_gone AFTER DELETE ON turn_skill_controls
BEGIN
    UPDATE skill_evidence SET
        turns = turns - 1,
        bad = bad - coalesce((SELECT bad FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        thumbs_down = thumbs_down
            - coalesce((SELECT thumbs_down FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        judged_bad = judged_bad
            - coalesce((SELECT judged_bad FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        corrected = corrected
            - coalesce((SELECT corrected FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0),
        tool_error = tool_error
            - coalesce((SELECT tool_error FROM turn_outcomes WHERE turn_id = OLD.turn_id), 0)
    WHERE skill_name = OLD.skill_name AND arm = OLD.cause;
    DELETE FROM skill_evidence
    WHERE skill_name = OLD.skill_name AND arm = OLD.cause AND turns <= 0;
END;
