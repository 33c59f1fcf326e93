"""The official `anthropic` SDK against the proxy: translated to the OpenAI-compatible upstream
(`claude` fixture) and native passthrough to an Anthropic upstream (`claude_native`)."""

from __future__ import annotations

import json
import time
import uuid

import anthropic
import pytest

from harness import MODEL_ID, UPSTREAM_KEY, default_reply, make_anthropic, slow_stream_text

TOOLS = [
    {
        "name": "read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]


def sid() -> str:
    return "py-" + uuid.uuid4().hex[:12]


def text_of(msg) -> str:
    return "".join(b.text for b in msg.content if b.type == "text")


# ----------------------------------------------------------------------------- translated (OpenAI upstream)


def test_non_stream_text(claude, mock):
    m = claude.messages.create(
        model="claude-whatever", max_tokens=100, system="You are terse.", messages=[{"role": "user", "content": "hello claude"}]
    )
    assert m.type == "message" and m.role == "assistant"
    assert text_of(m) == default_reply("hello claude")
    assert m.stop_reason == "end_turn"
    assert m.usage.input_tokens > 0 and m.usage.output_tokens > 0

    [up] = mock.llm_requests()
    assert up["path"] == "/v1/chat/completions", "OpenAI-compatible upstream gets an OpenAI request"
    assert up["body"]["model"] == MODEL_ID
    assert up["headers"].get("authorization") == f"Bearer {UPSTREAM_KEY}"
    msgs = up["body"]["messages"]
    assert msgs[0]["role"] == "system" and "You are terse." in str(msgs[0]["content"])
    assert msgs[-1]["role"] == "user" and "hello claude" in json.dumps(msgs[-1]["content"])


def test_stream_text_final_message(claude, mock):
    with claude.messages.stream(model="c", max_tokens=100, messages=[{"role": "user", "content": "stream to claude"}]) as s:
        deltas = list(s.text_stream)
        final = s.get_final_message()
    assert "".join(deltas) == default_reply("stream to claude")
    assert text_of(final) == default_reply("stream to claude")
    assert final.stop_reason == "end_turn"
    assert len(deltas) >= 2


def test_stream_is_incremental(claude, mock):
    events = 8
    mock.script({"kind": "slow_stream", "events": events, "interval_ms": 100})
    t0 = time.monotonic()
    arrivals = []
    with claude.messages.stream(model="c", max_tokens=100, messages=[{"role": "user", "content": "slow"}]) as s:
        for t in s.text_stream:
            arrivals.append((time.monotonic() - t0, t))
    assert "".join(t for _, t in arrivals) == slow_stream_text(events)
    assert arrivals[-1][0] - arrivals[0][0] >= 0.5, f"not incremental: {arrivals[0][0]:.3f}s .. {arrivals[-1][0]:.3f}s"


def test_tool_use_round_trip(claude, mock):
    question = "What is in HELLO.txt?"
    mock.script({"kind": "tool_call", "name": "read", "arguments": json.dumps({"path": "HELLO.txt"})})
    with claude.messages.stream(model="c", max_tokens=200, tools=TOOLS, messages=[{"role": "user", "content": question}]) as s:
        first = s.get_final_message()
    assert first.stop_reason == "tool_use"
    [tu] = [b for b in first.content if b.type == "tool_use"]
    assert tu.name == "read" and tu.input == {"path": "HELLO.txt"} and tu.id

    second = claude.messages.create(
        model="c",
        max_tokens=200,
        tools=TOOLS,
        messages=[
            {"role": "user", "content": question},
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tu.id, "content": "hello from the probe file"}]},
        ],
    )
    assert text_of(second) == default_reply(question)

    up1, up2 = mock.llm_requests()
    assert up1["body"]["tools"][0]["type"] == "function" and up1["body"]["tools"][0]["function"]["name"] == "read"
    msgs = up2["body"]["messages"]
    [asst] = [m for m in msgs if m["role"] == "assistant"]
    [call] = asst["tool_calls"]
    assert call["function"]["name"] == "read" and json.loads(call["function"]["arguments"]) == {"path": "HELLO.txt"}
    [tool] = [m for m in msgs if m["role"] == "tool"]
    assert tool["tool_call_id"] == call["id"]
    assert "hello from the probe file" in json.dumps(tool["content"])


@pytest.mark.parametrize(
    ("status", "exc", "etype"),
    [
        (401, anthropic.AuthenticationError, "authentication_error"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (500, anthropic.InternalServerError, "api_error"),
    ],
)
def test_upstream_errors(claude, mock, status, exc, etype):
    mock.script({"kind": "error", "status": status})
    with pytest.raises(exc) as ei:
        claude.messages.create(model="c", max_tokens=10, messages=[{"role": "user", "content": "fail"}])
    assert ei.value.status_code == status
    body = ei.value.body
    assert isinstance(body, dict) and body.get("type") == "error", f"not Anthropic-shaped: {body}"
    assert body["error"]["type"] == etype and body["error"]["message"]


def test_bad_proxy_key_401(proxy, mock):
    c = make_anthropic(proxy, api_key="wrong")
    with pytest.raises(anthropic.AuthenticationError) as ei:
        c.messages.create(model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert ei.value.status_code == 401
    assert ei.value.body.get("type") == "error" and ei.value.body["error"]["type"] == "authentication_error"
    assert mock.llm_requests() == []


def test_stream_reset_raises(claude, mock, proxy):
    mock.script({"kind": "reset_mid_stream", "after_events": 3})
    session = sid()
    got = []
    with pytest.raises(anthropic.APIError) as ei:
        with claude.messages.stream(
            model="c", max_tokens=100, messages=[{"role": "user", "content": "break"}], extra_headers={"X-Session-Id": session}
        ) as s:
            for t in s.text_stream:
                got.append(t)
    assert not isinstance(ei.value, anthropic.APIConnectionError), "expected an `event: error`, got a broken connection"
    [turn] = proxy.turns_for_session(session, count=1)
    assert turn["status"] == "stream_broken"


# ----------------------------------------------------------------------------- native passthrough


def test_native_non_stream(claude_native, mock):
    m = claude_native.messages.create(
        model="claude-x", max_tokens=64, system=[{"type": "text", "text": "sys"}], messages=[{"role": "user", "content": "native hello"}]
    )
    assert text_of(m) == default_reply("native hello")
    [up] = mock.llm_requests()
    assert up["path"] == "/v1/messages"
    assert up["body"]["model"] == MODEL_ID
    assert up["headers"].get("x-api-key") == UPSTREAM_KEY
    assert up["headers"].get("anthropic-version")
    assert all("proxy-key" not in v for v in up["headers"].values())
    assert up["body"]["messages"] == [{"role": "user", "content": "native hello"}]
    assert up["body"]["max_tokens"] == 64


def test_native_stream_tool_use_and_thinking(claude_native, mock):
    mock.script(
        {"kind": "reasoning", "reasoning": "let me think", "text": "thought it through"},
        {"kind": "tool_call", "name": "read", "arguments": '{"path":"x.md"}', "text": "Reading."},
    )
    with claude_native.messages.stream(model="c", max_tokens=100, messages=[{"role": "user", "content": "think"}]) as s:
        m1 = s.get_final_message()
    assert [b.type for b in m1.content] == ["thinking", "text"]
    assert m1.content[0].thinking == "let me think" and m1.content[1].text == "thought it through"

    with claude_native.messages.stream(model="c", max_tokens=100, tools=TOOLS, messages=[{"role": "user", "content": "read"}]) as s:
        m2 = s.get_final_message()
    assert m2.stop_reason == "tool_use"
    assert [b.type for b in m2.content] == ["text", "tool_use"]
    assert m2.content[1].name == "read" and m2.content[1].input == {"path": "x.md"}
    up = mock.llm_requests()[-1]
    assert up["body"]["tools"] == TOOLS, "native passthrough forwards tools unchanged"


def test_native_errors_and_reset(claude_native, mock):
    mock.script({"kind": "error", "status": 429, "headers": {"retry-after": "3"}}, {"kind": "reset_mid_stream", "after_events": 4})
    with pytest.raises(anthropic.RateLimitError) as ei:
        claude_native.messages.create(model="c", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert ei.value.status_code == 429 and ei.value.body["error"]["type"] == "rate_limit_error"
    with pytest.raises(anthropic.APIError) as ei2:
        with claude_native.messages.stream(model="c", max_tokens=10, messages=[{"role": "user", "content": "x"}]) as s:
            s.get_final_message()
    assert not isinstance(ei2.value, anthropic.APIConnectionError), "expected an `event: error`, got a broken connection"
