-- 0007: the judge's verdict on each turn, kept by triggers on prm_votes, so the PRM score
-- chart counts one small row per judged turn on an index instead of grouping every vote.

-- Votes per score for a turn, and the verdict they give: a score wins only with more votes
-- than each other score; any tie at the top is 0. A row exists while the turn has votes.
CREATE TABLE prm_verdicts (
    turn_id TEXT PRIMARY KEY NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    up      INTEGER NOT NULL,
    zero    INTEGER NOT NULL,
    down    INTEGER NOT NULL,
    verdict INTEGER NOT NULL GENERATED ALWAYS AS (
        CASE WHEN up > down AND up > zero THEN 1
             WHEN down > up AND down > zero THEN -1
             ELSE 0 END
    ) STORED
) STRICT, WITHOUT ROWID;

CREATE INDEX prm_verdicts_verdict ON prm_verdicts (verdict);

INSERT INTO prm_verdicts (turn_id, up, zero, down)
SELECT turn_id, sum(score = 1), sum(score = 0), sum(score = -1)
FROM prm_votes
GROUP BY turn_id;

CREATE TRIGGER prm_verdicts_voted AFTER INSERT ON prm_votes
BEGIN
    INSERT INTO prm_verdicts (turn_id, up, zero, down)
    VALUES (NEW.turn_id, NEW.score = 1, NEW.score = 0, NEW.score = -1)
    ON CONFLICT (turn_id) DO UPDATE SET
        up = up + excluded.up,
        zero = zero + excluded.zero,
        down = down + excluded.down;
END;

-- A turn's votes go when they are replaced or when the turn goes (ON DELETE CASCADE, in
-- either order with the verdict row: if that went first, there is nothing left to update).
CREATE TRIGGER prm_verdicts_unvoted AFTER DELETE ON prm_votes
BEGIN
    UPDATE prm_verdicts SET
        up = up - (OLD.score = 1),
        zero = zero - (OLD.score = 0),
        down = down - (OLD.score = -1)
    WHERE turn_id = OLD.turn_id;
    DELETE FROM prm_verdicts WHERE turn_id = OLD.turn_id AND up + zero + down <= 0;
END;

CREATE TRIGGER prm_verdicts_revoted AFTER UPDATE OF score ON prm_votes
BEGIN
    UPDATE prm_verdicts SET
        up = up - (OLD.score = 1) + (NEW.score = 1),
        zero = zero - (OLD.score = 0) + (NEW.score = 0),
        down = down - (OLD.score = -1) + (NEW.score = -1)
    WHERE turn_id = NEW.turn_id;
END;
