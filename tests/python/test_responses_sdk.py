"""The official `openai` SDK's `client.responses` against the proxy: translated to chat
completions for the mock's chat API (provider `custom`), and forwarded as is to the mock's
Responses API (provider `openai`). Also the Anthropic SDK's `messages.count_tokens`."""

from __future__ import annotations

import json
import uuid

import openai
import pytest

from harness import MODEL_ID, default_reply, make_openai

GRAMMAR_TEXT = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]

READ_TOOL = {
    "type": "function",
    "name": "read_file",
    "description": "Read a file",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "strict": False,
}


def sid() -> str:
    return "py-resp-" + uuid.uuid4().hex[:10]


def squash(types: list[str]) -> list[str]:
    """Event types with runs of the same delta event collapsed to one."""
    out: list[str] = []
    for t in types:
        if not (out and out[-1] == t and t.endswith(".delta")):
            out.append(t)
    return out


@pytest.fixture
def native(mock, start_proxy):
    """The SDK against a proxy whose upstream has the Responses API (forwarded as is)."""
    c = make_openai(start_proxy(provider="openai", api_base=mock.openai_base))
    yield c
    c.close()


def test_create_text_translated(oai, mock, proxy):
    session = sid()
    r = oai.responses.create(
        model="codex-model",
        instructions="Be brief.",
        input="hello responses",
        store=False,
        max_output_tokens=100,
        extra_headers={"X-Session-Id": session},
    )
    assert r.object == "response" and r.status == "completed"
    assert r.id.startswith("resp_")
    assert r.output_text == default_reply("hello responses")
    assert r.usage is not None and r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens > 0
    [up] = mock.llm_requests()
    assert up["path"] == "/v1/chat/completions"
    assert up["body"]["model"] == MODEL_ID
    assert up["body"]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello responses"},
    ]
    assert up["body"]["max_tokens"] == 100

    [turn] = proxy.turns_for_session(session, count=1)
    assert (turn["status"], turn["http_status"], turn["api"]) == ("ok", 200, "openai")
    assert json.loads(turn["request_json"])["messages"][-1]["content"] == "hello responses"
    assert default_reply("hello responses") in turn["response_json"]


def test_stream_event_types_and_sequence_numbers(oai, mock):
    with oai.responses.stream(model="x", input="stream me a reply please") as stream:
        events = list(stream)
        final = stream.get_final_response()
    types = [e.type for e in events]
    assert squash(types) == GRAMMAR_TEXT, types
    assert types.count("response.output_text.delta") >= 2, "several text deltas"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == default_reply("stream me a reply please")
    assert final.output_text == deltas
    assert final.usage is not None and final.usage.output_tokens > 0
    [up] = mock.llm_requests()
    assert up["body"]["stream"] is True and up["body"]["stream_options"] == {"include_usage": True}


def test_stream_create_iterates_typed_events(oai, mock):
    events = list(oai.responses.create(model="x", input="raw stream", stream=True))
    assert events[0].type == "response.created" and events[0].response.status == "in_progress"
    assert events[-1].type == "response.completed"
    assert events[-1].response.output[0].content[0].text == default_reply("raw stream")


def test_tools_round_trip(oai, mock):
    mock.script({"kind": "tool_call", "name": "read_file", "arguments": json.dumps({"path": "HELLO.txt"})})
    first = oai.responses.create(model="x", input="read HELLO.txt", tools=[READ_TOOL], tool_choice="auto")
    calls = [o for o in first.output if o.type == "function_call"]
    assert len(calls) == 1
    call = calls[0]
    assert call.name == "read_file" and json.loads(call.arguments) == {"path": "HELLO.txt"}
    assert call.id.startswith("fc_") and call.call_id

    history = [
        {"role": "user", "content": "read HELLO.txt"},
        *[o.model_dump(exclude_none=True) for o in first.output],
        {"type": "function_call_output", "call_id": call.call_id, "output": "hello world"},
    ]
    second = oai.responses.create(model="x", input=history, tools=[READ_TOOL])
    assert second.output_text == default_reply("read HELLO.txt")
    up = mock.llm_requests()[1]["body"]
    assert up["tools"][0]["function"]["name"] == "read_file"
    assistant = next(m for m in up["messages"] if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["id"] == call.call_id
    assert assistant["tool_calls"][0]["function"] == {"name": "read_file", "arguments": call.arguments}
    assert {"role": "tool", "tool_call_id": call.call_id, "content": "hello world"} in up["messages"]


def test_streamed_tool_call_events(oai, mock):
    mock.script({"kind": "tool_call", "name": "read_file", "arguments": json.dumps({"path": "a/b.txt"})})
    with oai.responses.stream(model="x", input="read it", tools=[READ_TOOL]) as stream:
        events = list(stream)
        final = stream.get_final_response()
    types = squash([e.type for e in events])
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ], types
    done = next(e for e in events if e.type == "response.function_call_arguments.done")
    assert json.loads(done.arguments) == {"path": "a/b.txt"}
    [call] = final.output
    assert call.type == "function_call" and call.arguments == done.arguments


def test_errors_are_bad_requests_naming_the_field(oai, mock):
    with pytest.raises(openai.BadRequestError) as e:
        oai.responses.create(model="x", input=[{"type": "function_call_output", "output": "x"}])
    assert e.value.status_code == 400
    assert e.value.param == "input[0].call_id"
    assert "input[0].call_id" in e.value.message

    with pytest.raises(openai.BadRequestError) as e:
        oai.responses.create(model="x", input="more", previous_response_id="resp_123")
    assert e.value.param == "previous_response_id"
    assert "not supported" in e.value.message

    with pytest.raises(openai.BadRequestError) as e:
        oai.responses.create(model="x", input="x", max_output_tokens="many")  # type: ignore[arg-type]
    assert e.value.param == "max_output_tokens"
    assert mock.llm_requests() == [], "nothing malformed reached the upstream"


def test_wrong_key_is_an_authentication_error(proxy):
    c = make_openai(proxy, api_key="wrong")
    with pytest.raises(openai.AuthenticationError):
        c.responses.create(model="x", input="hi")
    c.close()


def test_upstream_failure_mid_stream_is_an_error_event(oai, mock):
    mock.script({"kind": "reset_mid_stream", "after_events": 3})
    events = list(oai.responses.create(model="x", input="break", stream=True))
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-2:] == ["error", "response.failed"], types
    assert events[-1].response.status == "failed"


def test_native_upstream_stream_passes_through(native, mock):
    mock.script({"kind": "reasoning", "reasoning": "think", "text": "native answer"})
    with native.responses.stream(model="x", input="native please", store=False) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert final.output_text == "native answer"
    assert final.id.startswith("resp_mock_"), "the upstream's own ids"
    assert any(e.type == "response.output_item.added" and e.item.type == "reasoning" for e in events)
    [up] = mock.llm_requests()
    assert up["path"] == "/v1/responses"
    assert up["body"]["input"] == "native please" and up["body"]["store"] is False


def test_native_upstream_keeps_previous_response_id(native, mock):
    r = native.responses.create(model="x", input="again", previous_response_id="resp_prev")
    assert r.output_text == default_reply("again")
    [up] = mock.llm_requests()
    assert up["body"]["previous_response_id"] == "resp_prev"


def test_count_tokens_estimated(claude, mock):
    r = claude.messages.count_tokens(
        model="claude-x", system="You are helpful.", messages=[{"role": "user", "content": "How many tokens?"}]
    )
    assert r.input_tokens > 5
    assert mock.requests() == [], "estimated by the proxy"


def test_count_tokens_forwarded(claude_native, mock):
    r = claude_native.messages.count_tokens(model="claude-x", messages=[{"role": "user", "content": "count me"}])
    [up] = mock.requests("/v1/messages/count_tokens")
    assert r.input_tokens == 1000 + len(json.dumps(up["body"], separators=(",", ":")).encode())
