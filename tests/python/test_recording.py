"""Turns land in <METACLAW_HOME>/metaclaw.db grouped by session, in order."""

from __future__ import annotations

import json
import time

from harness import MODEL_ID, default_reply, make_openai, make_anthropic


def test_turns_recorded_per_session_in_order(mock, start_proxy):
    p = start_proxy(provider="custom", api_base=mock.openai_base)
    oai = make_openai(p)
    plan = [("A", "a-one", False), ("B", "b-one", True), ("A", "a-two", True), ("B", "b-two", False), ("A", "a-three", False)]
    for session, text, stream in plan:
        r = oai.chat.completions.create(
            model="x", stream=stream, messages=[{"role": "user", "content": text}], extra_headers={"X-Session-Id": f"sess-{session}"}
        )
        if stream:
            list(r)

    rows = p.wait_rows("SELECT * FROM turns ORDER BY session_id, seq", count=5)
    time.sleep(0.3)  # nothing else must show up
    rows = p.query("SELECT * FROM turns ORDER BY session_id, seq")
    assert len(rows) == 5, [dict(r) for r in rows]
    by_session: dict[str, list] = {}
    for r in rows:
        by_session.setdefault(r["session_id"], []).append(r)
    assert sorted(by_session) == ["sess-A", "sess-B"]
    for session in ("A", "B"):
        turns = by_session[f"sess-{session}"]
        expected = [(text, stream) for s, text, stream in plan if s == session]
        assert len(turns) == len(expected)
        seqs = [t["seq"] for t in turns]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        for t, (text, stream) in zip(turns, expected):
            req = json.loads(t["request_json"])
            assert req["messages"][-1]["content"] == text, "turns in the order they were sent"
            assert default_reply(text) in t["response_json"]
            assert (t["status"], t["http_status"], t["api"], bool(t["stream"]), t["model"]) == ("ok", 200, "openai", stream, MODEL_ID)
    sessions = {r["id"]: r for r in p.query("SELECT * FROM sessions")}
    assert set(sessions) == {"sess-A", "sess-B"}
    assert (sessions["sess-A"]["turn_count"], sessions["sess-B"]["turn_count"]) == (3, 2)
    assert {s["source"] for s in sessions.values()} == {"header"}

    # `session_id` in the body, and the Anthropic API, land in the same store.
    claude = make_anthropic(p)
    claude.messages.create(model="c", max_tokens=10, messages=[{"role": "user", "content": "c-one"}], extra_body={"session_id": "sess-C"})
    [c_turn] = p.turns_for_session("sess-C", count=1)
    assert c_turn["api"] == "anthropic" and c_turn["status"] == "ok"
    assert "session_id" not in mock.llm_requests()[-1]["body"]

    # X-Session-Done ends the session.
    oai.chat.completions.create(
        model="x", messages=[{"role": "user", "content": "b-done"}], extra_headers={"X-Session-Id": "sess-B", "X-Session-Done": "true"}
    )
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        [b] = p.query("SELECT * FROM sessions WHERE id = 'sess-B'")
        if b["ended_at"]:
            break
        time.sleep(0.05)
    assert b["ended_at"] and b["end_reason"] == "explicit", dict(b)
    assert len(p.turns_for_session("sess-B", count=3)) == 3
    oai.close()
    claude.close()
