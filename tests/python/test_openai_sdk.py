"""The official `openai` SDK against the proxy (OpenAI-compatible upstream = the mock)."""

from __future__ import annotations

import json
import time
import uuid

import openai
import pytest

from harness import MODEL_ID, UPSTREAM_KEY, default_reply, make_openai, slow_stream_text


def sid() -> str:
    return "py-" + uuid.uuid4().hex[:12]


def test_non_stream_text(oai, mock, proxy):
    r = oai.chat.completions.create(
        model="client-chosen-model",
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello proxy, non-stream"}],
    )
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content == default_reply("hello proxy, non-stream")
    assert r.choices[0].finish_reason == "stop"
    assert r.usage is not None and r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens > 0

    [up] = mock.llm_requests()
    assert up["path"] == "/v1/chat/completions"
    assert up["body"]["model"] == MODEL_ID, "proxy forces llm.model_id"
    assert up["headers"].get("authorization") == f"Bearer {UPSTREAM_KEY}", "upstream gets the upstream key"
    assert all("proxy-key" not in v for v in up["headers"].values()), "client key must not leak upstream"
    assert up["body"]["messages"][-1] == {"role": "user", "content": "hello proxy, non-stream"}


def test_stream_text_reassembles(oai, mock):
    stream = oai.chat.completions.create(
        model="x", stream=True, messages=[{"role": "user", "content": "stream me a reply please"}]
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == default_reply("stream me a reply please")
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) >= 2, "several content deltas"
    finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finals == ["stop"]
    [up] = mock.llm_requests()
    assert up["body"]["stream"] is True


def test_stream_is_incremental(oai, mock):
    events, interval = 8, 100
    mock.script({"kind": "slow_stream", "events": events, "interval_ms": interval})
    t0 = time.monotonic()
    arrivals: list[tuple[float, str]] = []
    for c in oai.chat.completions.create(model="x", stream=True, messages=[{"role": "user", "content": "slow"}]):
        if c.choices and c.choices[0].delta.content:
            arrivals.append((time.monotonic() - t0, c.choices[0].delta.content))
    assert "".join(t for _, t in arrivals) == slow_stream_text(events)
    first, last = arrivals[0][0], arrivals[-1][0]
    # The mock spaces the deltas 100 ms apart: a buffering proxy would deliver them together.
    assert last - first >= 0.5, f"deltas not streamed incrementally: first at {first:.3f}s, last at {last:.3f}s"


def test_stream_tool_calls_accumulate_by_index(oai, mock):
    mock.script(
        {
            "kind": "tool_calls",
            "calls": [
                {"name": "read", "arguments": json.dumps({"path": "HELLO.txt"})},
                {"name": "exec", "arguments": json.dumps({"command": "ls -la", "yieldMs": 100})},
            ],
        }
    )
    tools = [
        {"type": "function", "function": {"name": n, "description": n, "parameters": {"type": "object", "properties": {}}}}
        for n in ("read", "exec")
    ]
    calls: dict[int, dict] = {}
    finish = None
    for c in oai.chat.completions.create(
        model="x", stream=True, tools=tools, tool_choice="auto", messages=[{"role": "user", "content": "use tools"}]
    ):
        if not c.choices:
            continue
        ch = c.choices[0]
        finish = ch.finish_reason or finish
        for tc in ch.delta.tool_calls or []:
            acc = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
            if tc.id:
                acc["id"] = tc.id
            if tc.function and tc.function.name:
                acc["name"] += tc.function.name
            if tc.function and tc.function.arguments:
                acc["arguments"] += tc.function.arguments
    assert sorted(calls) == [0, 1]
    assert calls[0]["name"] == "read" and json.loads(calls[0]["arguments"]) == {"path": "HELLO.txt"}
    assert calls[1]["name"] == "exec" and json.loads(calls[1]["arguments"]) == {"command": "ls -la", "yieldMs": 100}
    assert calls[0]["id"] and calls[1]["id"] and calls[0]["id"] != calls[1]["id"]
    assert finish == "tool_calls"
    [up] = mock.llm_requests()
    assert [t["function"]["name"] for t in up["body"]["tools"]] == ["read", "exec"]


def test_non_stream_tool_call(oai, mock):
    mock.script({"kind": "tool_call", "name": "read", "arguments": '{"path":"a.txt"}'})
    r = oai.chat.completions.create(model="x", messages=[{"role": "user", "content": "read a.txt"}])
    [tc] = r.choices[0].message.tool_calls
    assert tc.type == "function" and tc.function.name == "read" and json.loads(tc.function.arguments) == {"path": "a.txt"}
    assert r.choices[0].finish_reason == "tool_calls"


def test_reasoning_deltas_pass_through(oai, mock):
    mock.script({"kind": "reasoning", "reasoning": "thinking step by step", "text": "the answer is 4"})
    reasoning, text = "", ""
    for c in oai.chat.completions.create(model="x", stream=True, messages=[{"role": "user", "content": "2+2?"}]):
        if not c.choices:
            continue
        d = c.choices[0].delta
        reasoning += getattr(d, "reasoning_content", None) or (d.model_extra or {}).get("reasoning_content") or ""
        text += d.content or ""
    assert reasoning == "thinking step by step"
    assert text == "the answer is 4"


def test_usage_chunk_when_include_usage(oai, mock):
    chunks = list(
        oai.chat.completions.create(
            model="x", stream=True, stream_options={"include_usage": True}, messages=[{"role": "user", "content": "usage please"}]
        )
    )
    last = chunks[-1]
    assert last.choices == [], "usage chunk has empty choices"
    assert last.usage is not None and last.usage.completion_tokens > 0 and last.usage.total_tokens > 0
    [up] = mock.llm_requests()
    assert up["body"]["stream_options"] == {"include_usage": True}


def test_no_usage_chunk_without_include_usage(oai, mock):
    chunks = list(oai.chat.completions.create(model="x", stream=True, messages=[{"role": "user", "content": "no usage"}]))
    # Clients that did not ask for usage index choices[0] on every chunk.
    assert all(c.choices for c in chunks), "a chunk with empty choices reached a client that did not ask for usage"


# ----------------------------------------------------------------------------- errors


def test_bad_proxy_key_401(proxy, mock):
    c = make_openai(proxy, api_key="wrong-key")
    with pytest.raises(openai.AuthenticationError) as ei:
        c.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    assert ei.value.status_code == 401
    assert "message" in ei.value.response.json()["error"]
    assert mock.llm_requests() == [], "unauthenticated requests must not reach the upstream"


@pytest.mark.parametrize(
    ("status", "exc"),
    [(401, openai.AuthenticationError), (429, openai.RateLimitError), (500, openai.InternalServerError)],
)
@pytest.mark.parametrize("stream", [False, True])
def test_upstream_error_status_kept(oai, mock, proxy, status, exc, stream):
    mock.script({"kind": "error", "status": status, "body": {"error": {"message": f"upstream says {status}", "type": "x", "code": None}}})
    session = sid()
    with pytest.raises(exc) as ei:
        r = oai.chat.completions.create(
            model="x", stream=stream, messages=[{"role": "user", "content": "fail"}], extra_headers={"X-Session-Id": session}
        )
        list(r) if stream else None
    assert ei.value.status_code == status
    body = ei.value.response.json()
    assert isinstance(body.get("error"), dict) and body["error"].get("message"), body
    [turn] = proxy.turns_for_session(session, count=1)
    assert (turn["status"], turn["http_status"]) == ("upstream_error", status)


def test_upstream_timeout_504(oai, mock, proxy):
    mock.script({"kind": "delay_ms", "ms": 4500, "then": {"kind": "reply", "text": "too late"}})
    session = sid()
    t0 = time.monotonic()
    with pytest.raises(openai.APIStatusError) as ei:
        oai.chat.completions.create(model="x", messages=[{"role": "user", "content": "slow"}], extra_headers={"X-Session-Id": session})
    elapsed = time.monotonic() - t0
    assert ei.value.status_code == 504
    assert ei.value.response.json()["error"]["message"]
    assert 2.5 <= elapsed < 4.4, f"timeout_seconds is 3, answered after {elapsed:.2f}s"
    [turn] = proxy.turns_for_session(session, count=1)
    assert turn["status"] == "upstream_unreachable"


def test_stream_reset_midway_raises(oai, mock, proxy):
    mock.script({"kind": "reset_mid_stream", "after_events": 3})
    session = sid()
    received = []
    with pytest.raises(openai.APIError) as ei:
        for c in oai.chat.completions.create(
            model="x", stream=True, messages=[{"role": "user", "content": "break please"}], extra_headers={"X-Session-Id": session}
        ):
            if c.choices and c.choices[0].delta.content:
                received.append(c.choices[0].delta.content)
    assert not isinstance(ei.value, openai.APIConnectionError), "expected an in-stream error event, got a broken connection"
    assert received, "the deltas sent before the break reach the client"
    [turn] = proxy.turns_for_session(session, count=1)
    assert turn["status"] == "stream_broken"


def test_client_disconnect_cancels_upstream(oai, mock, proxy):
    mock.script({"kind": "slow_stream", "events": 100, "interval_ms": 50})
    session = sid()
    stream = oai.chat.completions.create(
        model="x", stream=True, messages=[{"role": "user", "content": "long"}], extra_headers={"X-Session-Id": session}
    )
    got = 0
    for c in stream:
        if c.choices and c.choices[0].delta.content:
            got += 1
            if got == 3:
                break
    stream.close()
    deadline = time.monotonic() + 3
    while mock.stats()["cancelled_streams"] < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    stats = mock.stats()
    assert stats["cancelled_streams"] == 1, f"proxy kept reading the upstream after the client left: {stats}"
    [turn] = proxy.turns_for_session(session, count=1)
    assert turn["status"] == "client_aborted"


def test_upstream_refused_502(start_proxy):
    from harness import free_port

    p = start_proxy(provider="custom", api_base=f"http://127.0.0.1:{free_port()}/v1")
    c = make_openai(p)
    with pytest.raises(openai.APIStatusError) as ei:
        c.chat.completions.create(model="x", messages=[{"role": "user", "content": "anyone?"}], extra_headers={"X-Session-Id": "refused"})
    assert ei.value.status_code == 502
    assert ei.value.response.json()["error"]["message"]
    [turn] = p.turns_for_session("refused", count=1)
    assert (turn["status"], turn["http_status"]) == ("upstream_unreachable", 502)
    c.close()
