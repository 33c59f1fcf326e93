"""Raw HTTP (httpx) against the proxy: validation errors, auth forms, limits, and replays of
requests captured from OpenClaw (see /work/shared/spec/openclaw-integration.md §2)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from harness import MAX_BODY_BYTES, MODEL_ID, PROXY_KEY, default_reply

FIXTURES = Path(__file__).parent / "fixtures"
BEARER = {"authorization": f"Bearer {PROXY_KEY}"}
INTERNAL = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"


@pytest.fixture
def http(proxy):
    with httpx.Client(base_url=proxy.base, timeout=15, trust_env=False) as c:
        yield c


def openai_error(r: httpx.Response) -> dict:
    body = r.json()
    assert isinstance(body.get("error"), dict) and isinstance(body["error"].get("message"), str), f"not OpenAI-shaped: {body}"
    return body["error"]


def anthropic_error(r: httpx.Response) -> dict:
    body = r.json()
    assert body.get("type") == "error" and isinstance(body.get("error"), dict), f"not Anthropic-shaped: {body}"
    return body["error"]


def test_healthz(http):
    r = http.get("/healthz")
    assert r.status_code == 200 and r.json()["ok"] is True


def test_malformed_json_400(http, mock):
    r = http.post("/v1/chat/completions", content=b'{"model": "x", "messages": [', headers={**BEARER, "content-type": "application/json"})
    assert r.status_code == 400
    openai_error(r)
    assert mock.llm_requests() == []


def test_missing_messages_400(http, mock):
    r = http.post("/v1/chat/completions", json={"model": "x"}, headers=BEARER)
    assert r.status_code == 400
    openai_error(r)
    assert mock.llm_requests() == []


def test_anthropic_malformed_json_400(http, mock):
    r = http.post("/v1/messages", content=b"not json", headers={"x-api-key": PROXY_KEY, "content-type": "application/json"})
    assert r.status_code == 400
    anthropic_error(r)
    assert mock.llm_requests() == []


def test_body_over_limit_413(http, mock):
    big = "x" * (MAX_BODY_BYTES + 512 * 1024)
    r = http.post("/v1/chat/completions", json={"model": "x", "messages": [{"role": "user", "content": big}]}, headers=BEARER)
    assert r.status_code == 413
    openai_error(r)
    assert mock.llm_requests() == []


def test_body_under_limit_passes(http, mock):
    text = "y" * (MAX_BODY_BYTES - 64 * 1024)
    r = http.post("/v1/chat/completions", json={"model": "x", "messages": [{"role": "user", "content": text}]}, headers=BEARER)
    assert r.status_code == 200, r.text[:300]
    assert r.json()["choices"][0]["message"]["content"] == default_reply(text)


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages"])
def test_missing_or_wrong_key_401_in_api_shape(http, mock, path):
    body = {"model": "x", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    for headers in ({}, {"authorization": "Bearer nope"}, {"x-api-key": "nope"}):
        r = http.post(path, json=body, headers=headers)
        assert r.status_code == 401, (headers, r.text)
        (openai_error if path == "/v1/chat/completions" else anthropic_error)(r)
    assert mock.llm_requests() == []


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages"])
def test_either_auth_header_accepted(http, mock, path):
    body = {"model": "x", "max_tokens": 5, "messages": [{"role": "user", "content": "auth"}]}
    for headers in (BEARER, {"x-api-key": PROXY_KEY}):
        r = http.post(path, json=body, headers=headers)
        assert r.status_code == 200, (headers, r.text)


def test_models(http):
    r = http.get("/v1/models", headers=BEARER)
    assert r.status_code == 200
    ids = [m["id"] for m in r.json()["data"]]
    assert MODEL_ID in ids


def test_session_id_body_key_is_stripped(http, mock, proxy):
    r = http.post(
        "/v1/chat/completions",
        json={"model": "x", "session_id": "body-session-1", "messages": [{"role": "user", "content": "strip it"}]},
        headers=BEARER,
    )
    assert r.status_code == 200
    [up] = mock.llm_requests()
    assert "session_id" not in up["body"], "session_id must not be forwarded upstream"
    rows = proxy.turns_for_session("body-session-1", count=1)
    assert len(rows) == 1


def _sse_events(r: httpx.Response) -> list[tuple[str | None, str]]:
    out, event, data = [], None, []
    for line in r.iter_lines():
        if line == "":
            if data:
                out.append((event, "\n".join(data)))
            event, data = None, []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        out.append((event, "\n".join(data)))
    return out


def _openclaw_user_text(messages: list[dict]) -> str:
    for m in reversed(messages):
        if m.get("role") != "user":
            continue
        c = m["content"]
        t = c if isinstance(c, str) else "".join(b.get("text", "") for b in c if b.get("type") == "text")
        if t.strip() and not t.lstrip().startswith(INTERNAL):
            return t
    return ""


def test_openclaw_openai_request_replay(http, mock):
    """The exact body OpenClaw sends (stream, include_usage, tools, internal-context carrier)."""
    body = json.loads((FIXTURES / "openclaw_openai_request.json").read_text())
    headers = {**BEARER, "user-agent": "OpenAI/JS 7.15.0", "traceparent": "00-79e74668ddd46ad7c525e8a8e026b69f-a5bd4bcead1f11d0-01"}
    with http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events = _sse_events(r)
    assert events[-1][1] == "[DONE]"
    chunks = [json.loads(d) for _, d in events[:-1]]
    assert chunks[0]["choices"][0]["delta"].get("role") == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == default_reply(_openclaw_user_text(body["messages"]))
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    [up] = mock.llm_requests()
    sent = up["body"]
    assert sent["model"] == MODEL_ID
    assert [t["function"]["name"] for t in sent["tools"]] == [t["function"]["name"] for t in body["tools"]]
    assert sent["messages"][1:] == body["messages"][1:], "history and the internal-context carrier are forwarded as-is"
    assert sent["messages"][0]["content"].startswith(body["messages"][0]["content"][:1000]), "stable system prefix kept"


def test_openclaw_tool_followup_replay(http, mock):
    body = json.loads((FIXTURES / "openclaw_openai_toolcall_followup.json").read_text())
    with http.stream("POST", "/v1/chat/completions", json=body, headers=BEARER) as r:
        assert r.status_code == 200
        events = _sse_events(r)
    assert events[-1][1] == "[DONE]"
    [up] = mock.llm_requests()
    roles = [m["role"] for m in up["body"]["messages"]]
    assert roles == [m["role"] for m in body["messages"]]
    [tool] = [m for m in up["body"]["messages"] if m["role"] == "tool"]
    [orig] = [m for m in body["messages"] if m["role"] == "tool"]
    assert tool == orig


@pytest.mark.parametrize("native", [False, True], ids=["translated", "native"])
def test_openclaw_anthropic_request_replay(mock, request, native):
    """OpenClaw's Anthropic body: system blocks with cache_control, two consecutive user messages."""
    p = request.getfixturevalue("anthropic_proxy" if native else "proxy")
    body = json.loads((FIXTURES / "openclaw_anthropic_request.json").read_text())
    headers = {"x-api-key": PROXY_KEY, "anthropic-version": "2023-06-01", "anthropic-dangerous-direct-browser-access": "true"}
    with httpx.Client(base_url=p.base, timeout=15, trust_env=False) as c, c.stream("POST", "/v1/messages", json=body, headers=headers) as r:
        assert r.status_code == 200, r.read()[:300]
        events = _sse_events(r)
    names = [e for e, _ in events]
    assert names[0] == "message_start" and names[-1] == "message_stop"
    assert "content_block_start" in names and "message_delta" in names
    text = "".join(
        json.loads(d)["delta"].get("text", "") for e, d in events if e == "content_block_delta"
    )
    assert text == default_reply(_openclaw_user_text(body["messages"]))
    [up] = mock.llm_requests()
    if native:
        assert up["path"] == "/v1/messages"
        assert up["body"]["messages"] == body["messages"]
        assert up["body"]["system"][0] == body["system"][0], "cached STABLE system block unchanged"
    else:
        assert up["path"] == "/v1/chat/completions"
        users = [m for m in up["body"]["messages"] if m["role"] == "user"]
        assert len(users) == 2, "both consecutive user messages survive translation"
