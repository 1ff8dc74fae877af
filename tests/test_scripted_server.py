"""The scripted Messages API fake, driven by the real `anthropic` SDK (and raw HTTP).

These tests pin down the wire format (so the SDK parses it as it parses the real API) and
what each injected fault becomes: a transport fault is asserted through agentls's own model
client (a transient `ModelError` naming the endpoint, then a retry that plays), whichever
exception a given SDK release raises or wraps.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic.types import MessageParam

from agentls.agent.run.model_client import (
    AnthropicModelClient,
    ModelError,
    ModelRequest,
    ignore_text,
)
from agentls.agent.settings import AgentSettings
from agentls.testing import (
    RecordedRequest,
    Scenario,
    ScriptedMessagesServer,
    TextBlock,
    ThinkingBlock,
    Turn,
    TurnLike,
    text_turn,
    tool_turn,
)

MODEL = "claude-sonnet-5-5"
USER: list[MessageParam] = [{"role": "user", "content": "hello"}]

Serve = Callable[..., ScriptedMessagesServer]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Starts servers on demand and always stops them, even when a test fails."""
    servers: list[ScriptedMessagesServer] = []

    def start(*turns: TurnLike, **options: Any) -> ScriptedMessagesServer:
        server = ScriptedMessagesServer(list(turns), **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
async def connect() -> AsyncIterator[Callable[..., anthropic.AsyncAnthropic]]:
    clients: list[anthropic.AsyncAnthropic] = []

    def make(server: ScriptedMessagesServer, **options: Any) -> anthropic.AsyncAnthropic:
        # The SDK's own transport settings, minus loading the CA bundle (~55 ms per client),
        # which a plain-http base URL never uses.
        transport = anthropic.DefaultAsyncHttpxClient(verify=False)
        options = {"api_key": "test", "max_retries": 0, "http_client": transport, **options}
        client = anthropic.AsyncAnthropic(base_url=server.base_url, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


async def stream_once(
    client: anthropic.AsyncAnthropic, **params: Any
) -> tuple[list[Any], anthropic.types.Message]:
    """Streams one request; returns the SDK's high-level events and the final message."""
    params = {"model": MODEL, "max_tokens": 1024, "messages": USER, **params}
    async with client.messages.stream(**params) as stream:
        events = [event async for event in stream]
        return events, await stream.get_final_message()


REQUEST = ModelRequest(model=MODEL, max_tokens=1024, system=[], tools=[], messages=USER)


@pytest.fixture
async def model_client() -> AsyncIterator[Callable[..., AnthropicModelClient]]:
    """agentls's own model client for a scripted server (closed when the test ends)."""
    clients: list[AnthropicModelClient] = []

    def make(server: ScriptedMessagesServer, **env: str) -> AnthropicModelClient:
        settings = AgentSettings.from_env(
            {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": server.base_url, **env}
        )
        clients.append(AnthropicModelClient(settings))
        return clients[-1]

    yield make
    for client in clients:
        await client.close()


# -- happy paths ---------------------------------------------------------------------------


async def test_streaming_text_arrives_in_several_deltas(serve: Serve, connect: Any) -> None:
    text = "Hello, world! This reply is streamed in pieces."
    usage = {"input_tokens": 120, "output_tokens": 12, "cache_read_input_tokens": 100}
    server = serve(text_turn(text, usage=usage))

    events, final = await stream_once(connect(server))

    deltas = [event.text for event in events if event.type == "text"]
    assert len(deltas) >= 3
    assert "".join(deltas) == text
    assert final.content[0].type == "text"
    assert final.content[0].text == text
    assert final.stop_reason == "end_turn"
    assert final.model == MODEL
    assert final.id.startswith("msg_")
    assert final.usage.input_tokens == 120
    assert final.usage.output_tokens == 12
    assert final.usage.cache_read_input_tokens == 100
    assert final.usage.cache_creation_input_tokens == 0
    assert server.remaining == 0


async def test_streaming_tool_use_reassembles_scripted_input(serve: Serve, connect: Any) -> None:
    tool_input = {"path": "src/app.py", "start_line": 10, "end_line": 42, "note": "ünïcode"}
    turn = tool_turn(("read_file", tool_input), text="Let me look.")
    server = serve(turn)

    events, final = await stream_once(connect(server))

    assert len([event for event in events if event.type == "input_json"]) >= 3
    tool_use = final.content[1]
    assert tool_use.type == "tool_use"
    assert tool_use.input == tool_input
    assert tool_use.name == "read_file"
    assert tool_use.id == turn.tool_uses[0].id
    assert tool_use.id.startswith("toolu_01")
    assert final.stop_reason == "tool_use"


async def test_generated_tool_ids_are_unique() -> None:
    turn = tool_turn(("a", {}), ("b", {}), ("c", {"x": 1}, "toolu_fixed"))
    ids = [block.id for block in turn.tool_uses]
    assert len(set(ids)) == 3
    assert ids[2] == "toolu_fixed"


async def test_non_streaming_create(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("Truncated answ", stop_reason="max_tokens"))

    message = await connect(server).messages.create(model=MODEL, max_tokens=5, messages=USER)

    assert message.content[0].type == "text"
    assert message.content[0].text == "Truncated answ"
    assert message.stop_reason == "max_tokens"
    assert message.usage.input_tokens > 0
    assert message.usage.output_tokens > 0
    assert server.requests[0].stream is False


async def test_thinking_block_streams_with_signature(serve: Serve, connect: Any) -> None:
    thinking = ThinkingBlock(thinking="The user greets me; I should greet back.", signature="sig1")
    server = serve(Turn(content=[thinking, TextBlock(text="Hi!")]))

    _, final = await stream_once(connect(server))

    block = final.content[0]
    assert block.type == "thinking"
    assert block.thinking == thinking.thinking
    assert block.signature == "sig1"


async def test_dict_and_callable_turns(serve: Serve, connect: Any) -> None:
    def echo_tool_results(request: RecordedRequest) -> dict[str, Any]:
        results = request.tool_results()
        return {"content": [{"type": "text", "text": f"got {results[0]['content']}"}]}

    call = tool_turn(("read_file", {"path": "a.py"}))
    server = serve({"content": [{"type": "text", "text": "first"}]}, call, echo_tool_results)
    client = connect(server)
    await stream_once(client)
    _, tool_message = await stream_once(client)
    tool_id = call.tool_uses[0].id
    followup = [
        *USER,
        tool_message.to_param(),
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "print(1)"}],
        },
    ]

    _, final = await stream_once(client, messages=followup)

    assert final.content[0].type == "text"
    assert final.content[0].text == "got print(1)"


# -- what gets recorded --------------------------------------------------------------------


async def test_requests_are_recorded_with_body_and_headers(serve: Serve, connect: Any) -> None:
    tools = [{"name": "read_file", "description": "Read", "input_schema": {"type": "object"}}]
    system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}]
    call = tool_turn(("read_file", {"path": "a.py"}))
    server = serve(call, text_turn("done"))
    client = connect(server)
    _, message = await stream_once(client, system=system, tools=tools)
    result = {"type": "tool_result", "tool_use_id": call.tool_uses[0].id, "content": "x = 1"}
    messages = [*USER, message.to_param(), {"role": "user", "content": [result]}]

    await stream_once(client, system=system, tools=tools, messages=messages)

    first, second = server.requests
    assert (first.method, first.path) == ("POST", "/v1/messages")
    assert first.stream is True
    assert first.model == MODEL
    assert first.system == system
    assert first.system_text == "You are terse."
    assert first.tools == tools
    assert first.tool_names == ["read_file"]
    assert first.messages == USER
    assert first.user_text() == "hello"
    assert first.json["max_tokens"] == 1024
    assert json.loads(first.body) == first.json
    assert first.api_key == "test"
    assert "anthropic-version" in first.headers
    assert second.tool_results() == [result]
    assert first.tool_results() == []


async def test_count_tokens_and_unknown_routes(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("unused"))
    client = connect(server)

    counted = await client.messages.count_tokens(model=MODEL, messages=USER)
    with pytest.raises(anthropic.NotFoundError) as not_found:
        await client.models.list()

    assert counted.input_tokens > 0
    assert not_found.value.type == "not_found_error"
    assert [request.path for request in server.requests] == [
        "/v1/messages/count_tokens",
        "/v1/models",
    ]
    assert server.remaining == 1


# -- injected faults -----------------------------------------------------------------------


async def test_overloaded_529_does_not_consume_the_turn(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("finally", error_status=529))
    client = connect(server)

    with pytest.raises(anthropic.OverloadedError) as raised:
        await stream_once(client)
    assert raised.value.status_code == 529
    assert raised.value.type == "overloaded_error"
    assert isinstance(raised.value, anthropic.InternalServerError)
    assert server.remaining == 1

    _, final = await stream_once(client)
    assert final.content[0].type == "text"
    assert final.content[0].text == "finally"
    assert server.remaining == 0


async def test_rate_limit_429_sends_retry_after(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("ok", error_status=429, retry_after=7))

    with pytest.raises(anthropic.RateLimitError) as raised:
        await connect(server).messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert raised.value.type == "rate_limit_error"
    assert float(raised.value.response.headers["retry-after"]) == 7
    assert raised.value.request_id is not None


async def test_500_repeats_error_times_then_plays(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("ok", error_status=500, error_times=2, error_message="boom"))
    client = connect(server)

    for _ in range(2):
        with pytest.raises(anthropic.InternalServerError) as raised:
            await stream_once(client)
        assert raised.value.type == "api_error"
        assert raised.value.api_message == "boom"
    _, final = await stream_once(client)

    assert final.content[0].type == "text"
    assert final.content[0].text == "ok"


async def test_sdk_retries_consume_injected_errors(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("ok", error_status=529, error_times=2, retry_after=0.01))

    _, final = await stream_once(connect(server, max_retries=2))

    assert final.content[0].type == "text"
    assert final.content[0].text == "ok"
    assert len(server.requests) == 3


async def test_a_cut_stream_is_a_transient_model_error_then_the_retry_plays(
    serve: Serve, model_client: Any
) -> None:
    text = "a reply long enough to be cut in the middle of its text block"
    server = serve(text_turn(text, cut_stream_after_events=4))
    client = model_client(server)

    with pytest.raises(ModelError) as raised:
        await client.stream(REQUEST, ignore_text)
    # agentls's own terms, whichever transport error the SDK raises or wraps: worth a
    # retry, and the message names the endpoint.
    assert raised.value.transient
    assert server.base_url in str(raised.value)
    assert server.remaining == 1

    reply = await client.stream(REQUEST, ignore_text)
    assert reply.content == [{"type": "text", "text": text}]


async def test_cut_non_streaming_is_an_api_connection_error(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("ok", cut_stream_after_events=0))

    with pytest.raises(anthropic.APIConnectionError):
        await connect(server).messages.create(model=MODEL, max_tokens=10, messages=USER)

    assert server.remaining == 1


async def test_sse_error_event_raises_api_status_error(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("a text that the error interrupts", sse_error=True))
    client = connect(server)

    with pytest.raises(anthropic.APIStatusError) as raised:
        await stream_once(client)
    assert raised.value.status_code == 200
    assert raised.value.type == "overloaded_error"
    assert not isinstance(raised.value, anthropic.InternalServerError)

    _, final = await stream_once(client)
    assert final.content[0].type == "text"
    assert final.content[0].text == "a text that the error interrupts"


async def test_truncated_stream_ends_cleanly_before_message_stop(
    serve: Serve, connect: Any
) -> None:
    text = "a reply whose stream the server ends early, without an error"
    server = serve(text_turn(text, chunk_size=8, truncate_after_events=5))
    client = connect(server)

    events, final = await stream_once(client)  # the SDK raises nothing: a clean end
    assert "message_stop" not in [event.type for event in events]
    assert final.content[0].type == "text"
    assert final.content[0].text != text
    assert text.startswith(final.content[0].text)
    assert server.remaining == 1

    events, final = await stream_once(client)
    assert events[-1].type == "message_stop"
    assert final.content[0].text == text


async def test_keepalive_pings_outlast_the_read_timeout(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("never sent", hang=True, keepalive_interval=0.1))
    client = connect(server, timeout=0.5)  # a read timeout the pings never let fire

    # wait_for's TimeoutError, not the SDK's httpx2.ReadTimeout: the stream stayed open
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(stream_once(client), 1.5)
    assert not issubclass(httpx2.ReadTimeout, TimeoutError)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [("<html><body>Sign in</body></html>", "text/html"), ('{"ok": true}', "application/json")],
)
async def test_raw_bodies_are_not_a_message_for_the_sdk(
    serve: Serve, connect: Any, body: str, content_type: str
) -> None:
    server = serve(text_turn("after", raw_body=body, raw_content_type=content_type))
    client = connect(server)
    params = {"model": MODEL, "max_tokens": 10, "messages": USER}

    async with client.messages.stream(**params) as stream:
        assert stream.response.status_code == 200
        assert stream.response.headers["content-type"] == content_type
        assert (await stream.response.aread()).decode() == body
    assert server.remaining == 1
    _, final = await stream_once(client)
    assert final.content[0].type == "text"
    assert final.content[0].text == "after"


async def test_raw_error_page_is_an_api_status_error(serve: Serve, connect: Any) -> None:
    page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    server = serve(text_turn("ok", raw_body=page, raw_status=502))

    with pytest.raises(anthropic.APIStatusError) as raised:
        await stream_once(connect(server))
    assert raised.value.status_code == 502
    assert "502 Bad Gateway" in raised.value.response.text


async def test_hang_until_client_cancels_then_next_turn(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("never sent", hang=True), text_turn("next"))
    client = connect(server)
    started = time.monotonic()

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(stream_once(client), 0.1)

    assert time.monotonic() - started < 10  # the hang is not waited for
    _, final = await stream_once(client)
    assert final.content[0].type == "text"
    assert final.content[0].text == "next"


async def test_a_hang_past_the_request_timeout_is_a_transient_model_error(
    serve: Serve, model_client: Any
) -> None:
    server = serve(text_turn("never sent", hang=True))

    with pytest.raises(ModelError) as raised:
        await model_client(server, AGENTLS_REQUEST_TIMEOUT="0.1").stream(REQUEST, ignore_text)

    assert raised.value.transient
    assert server.base_url in str(raised.value)


async def test_stop_ends_a_hung_stream(serve: Serve, model_client: Any) -> None:
    server = serve(text_turn("never sent", hang=True))
    task = asyncio.create_task(model_client(server).stream(REQUEST, ignore_text))
    await asyncio.sleep(0.1)

    await asyncio.to_thread(server.stop)

    with pytest.raises(ModelError) as raised:
        await asyncio.wait_for(task, 2)
    assert raised.value.transient


async def test_event_delay_makes_streams_slow(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("slow text here", chunk_size=2, event_delay=0.01))
    started = time.monotonic()

    await stream_once(connect(server))

    assert time.monotonic() - started >= 0.01 * 10


async def test_scenario_exhausted_is_500_and_recorded(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("only"))
    client = connect(server)
    await stream_once(client)

    with pytest.raises(anthropic.InternalServerError) as raised:
        await stream_once(client)

    assert raised.value.api_message is not None
    assert "scenario exhausted" in raised.value.api_message
    assert len(server.requests) == 2


async def test_require_auth(serve: Serve, connect: Any) -> None:
    server = serve(text_turn("welcome"), require_auth="sk-right")

    with pytest.raises(anthropic.AuthenticationError):
        await stream_once(connect(server, api_key="sk-wrong"))
    _, final = await stream_once(connect(server, api_key="sk-right"))

    assert final.content[0].type == "text"
    assert final.content[0].text == "welcome"


async def test_unanswered_tool_use_is_rejected_like_the_real_api(
    serve: Serve, connect: Any
) -> None:
    server = serve(text_turn("unused"))
    tool_use = {"type": "tool_use", "id": "toolu_01x", "name": "f", "input": {}}
    messages = [*USER, {"role": "assistant", "content": [tool_use]}, *USER]

    with pytest.raises(anthropic.BadRequestError) as raised:
        await stream_once(connect(server), messages=messages)

    assert "toolu_01x" in str(raised.value.api_message)
    assert server.remaining == 1


# -- wire format, files, command line ------------------------------------------------------


def _raw_sse(server: ScriptedMessagesServer, body: dict[str, Any]) -> list[tuple[str, Any]]:
    request = urllib.request.Request(
        server.base_url + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        frames = response.read().decode().split("\n\n")
    return [_parse_frame(frame) for frame in frames if frame]


def _parse_frame(frame: str) -> tuple[str, Any]:
    event_line, data_line = frame.split("\n")
    assert event_line.startswith("event: ")
    assert data_line.startswith("data: ")
    return event_line.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))


def test_sse_wire_format(serve: Serve) -> None:
    server = serve(tool_turn(("grep", {"pattern": "def main"}), text="Searching."))

    frames = _raw_sse(server, {"model": MODEL, "max_tokens": 50, "messages": USER, "stream": True})

    names = [name for name, _ in frames]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    start = frames[0][1]["message"]
    assert start["role"] == "assistant"
    assert start["content"] == []
    assert start["model"] == MODEL
    assert start["stop_reason"] is None
    assert set(start["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    }
    assert all(data["type"] == name for name, data in frames)
    delta = frames[-2][1]
    assert delta["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}


def test_plain_http_errors_have_the_api_shape(serve: Serve) -> None:
    server = serve()

    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(server.base_url + "/nope", timeout=5)

    assert raised.value.code == 404
    assert json.loads(raised.value.read())["error"]["type"] == "not_found_error"


def test_scenario_file_round_trip(tmp_path: Path) -> None:
    scenario = Scenario.of(
        tool_turn(("read_file", {"path": "a.py"})),
        text_turn("done", error_status=529, retry_after=1),
        description="two turns",
    )
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario.to_json()))

    loaded = Scenario.from_file(path)

    assert loaded.description == "two turns"
    assert loaded.turns == scenario.turns
    bare_list = Scenario.from_json([{"content": [{"type": "text", "text": "x"}]}])
    assert bare_list.turns == [Turn(content=[TextBlock(text="x")])]
    with pytest.raises(ValueError, match="extra"):
        Scenario.from_json([{"content": [], "stop_reasn": "end_turn"}])


def test_command_line_serves_a_scenario_file(tmp_path: Path) -> None:
    scenario_file = tmp_path / "scenario.json"
    scenario_file.write_text(json.dumps({"turns": [{"content": [{"type": "text", "text": "hi"}]}]}))
    record = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "agentls.testing.scripted_server"]
    command += ["--scenario", str(scenario_file), "--record", str(record)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        base_url = line.removeprefix("listening on ").strip()
        client = anthropic.Anthropic(base_url=base_url, api_key="test", max_retries=0)
        message = client.messages.create(model=MODEL, max_tokens=10, messages=USER)
        assert message.content[0].type == "text"
        assert message.content[0].text == "hi"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=5)
    assert process.returncode == 0, stderr
    assert "Warning" not in stderr
    recorded = [json.loads(line) for line in record.read_text().splitlines()]
    assert recorded[0]["json"]["messages"] == USER
