"""The Messages API beyond the basics, through the real SDK and the scripted server:
extended thinking kept unchanged across tool turns, the `x-api-key` option, custom
headers, and an `apiKeyHelper`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.run.model_client import AnthropicModelClient, ModelRequest, ignore_text
from agentls.agent.settings import AgentSettings
from agentls.testing import (
    RedactedThinkingBlock,
    ScriptedMessagesServer,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Turn,
    text_turn,
)
from tests.agent_support import make_session


def _thinking_turns() -> list[Turn]:
    return [
        Turn(
            content=[
                ThinkingBlock(thinking="The user wants a probe. I will call it."),
                ToolUseBlock(name="probe_read", input={"label": "first"}),
            ]
        ),
        Turn(
            content=[
                RedactedThinkingBlock(),
                ThinkingBlock(thinking="Now the second probe."),
                ToolUseBlock(name="probe_read", input={"label": "second"}),
            ]
        ),
        Turn(content=[ThinkingBlock(thinking="Both done."), TextBlock(text="all done")]),
    ]


async def test_thinking_blocks_go_back_unchanged_across_tool_turns(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    turns = _thinking_turns()
    api.extend(*turns)
    session = make_session(api, tmp_path, thinking_budget=2048, max_tokens=1000, temperature=0.3)
    result = await session.run("probe twice")
    assert result.status == "completed", result.error
    assert result.text == "all done", result.error
    first, second, third = api.message_requests
    assert first.json["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert first.json["max_tokens"] > 2048  # raised above the budget
    assert "temperature" not in first.json  # the API refuses one with thinking
    sent = second.json["messages"][1]["content"]
    assert sent[0] == {
        "type": "thinking",
        "thinking": "The user wants a probe. I will call it.",
        "signature": turns[0].content[0].signature,  # type: ignore[union-attr]
    }
    redacted = third.json["messages"][3]["content"][0]
    assert redacted == {"type": "redacted_thinking", "data": turns[1].content[0].data}  # type: ignore[union-attr]
    # the server refuses a changed or dropped thinking block (400), so completing proves
    # every request sent them back as they came


async def test_the_scripted_server_refuses_changed_thinking(
    api: ScriptedMessagesServer,
) -> None:
    """What the check above relies on: the fake behaves like the API."""
    import anthropic

    api.extend(*_thinking_turns())
    client = anthropic.AsyncAnthropic(api_key="k", base_url=api.base_url, max_retries=0)
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    first = await client.messages.create(
        model="m", max_tokens=2048, thinking=thinking, messages=[{"role": "user", "content": "go"}]
    )
    blocks = [b.model_dump(exclude_none=True) for b in first.content]
    tool_id = blocks[1]["id"]
    result = {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}
    changed = [{**blocks[0], "thinking": "something else"}, blocks[1]]
    dropped = [blocks[1]]
    for assistant in (changed, dropped):
        with pytest.raises(anthropic.BadRequestError) as caught:
            await client.messages.create(
                model="m",
                max_tokens=2048,
                thinking=thinking,
                messages=[
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": assistant},  # type: ignore[typeddict-item]
                    {"role": "user", "content": [result]},  # type: ignore[list-item]
                ],
            )
        assert "thinking" in str(caught.value)
    await client.close()


async def test_thinking_is_off_by_default(api: ScriptedMessagesServer, tmp_path: Path) -> None:
    api.extend(text_turn("hi"))
    session = make_session(api, tmp_path, temperature=0.3)
    await session.run("hello")
    body = api.message_requests[0].json
    assert "thinking" not in body
    assert body["temperature"] == 0.3


def _settings(api: ScriptedMessagesServer, **values: Any) -> AgentSettings:
    env = {"ANTHROPIC_BASE_URL": api.base_url, **values.pop("env", {})}
    return AgentSettings.from_env(env, **values)


async def _one_request(client: AnthropicModelClient) -> None:
    request = ModelRequest(
        model="m", max_tokens=10, system=[], tools=[], messages=[{"role": "user", "content": "x"}]
    )
    await client.stream(request, ignore_text)


async def test_x_api_key_option_and_custom_headers(api: ScriptedMessagesServer) -> None:
    api.extend(text_turn("a"), text_turn("b"), text_turn("c"))
    plain = AnthropicModelClient(_settings(api, env={"ANTHROPIC_API_KEY": "sk-plain-123456"}))
    await _one_request(plain)
    assert api.requests[-1].headers.get("authorization") == "Bearer sk-plain-123456"
    assert "x-api-key" not in api.requests[-1].headers
    only_key = AnthropicModelClient(
        _settings(
            api,
            env={
                "ANTHROPIC_AUTH_TOKEN": "tok-gateway-987654",
                "AGENTLS_AUTH_HEADER": "x-api-key",
                "AGENTLS_HEADERS": "X-Team: compilers\nX-Route: eu",
            },
        )
    )
    await _one_request(only_key)
    headers = api.requests[-1].headers
    assert headers.get("x-api-key") == "tok-gateway-987654"
    assert "authorization" not in headers
    assert headers.get("x-team") == "compilers"
    assert headers.get("x-route") == "eu"
    both = AnthropicModelClient(
        _settings(api, env={"ANTHROPIC_API_KEY": "sk-both-123456"}, auth_header="both")
    )
    await _one_request(both)
    headers = api.requests[-1].headers
    assert headers.get("x-api-key") == "sk-both-123456"
    assert headers.get("authorization") == "Bearer sk-both-123456"
    for client in (plain, only_key, both):
        await client.close()


async def test_an_api_key_helper_supplies_the_key_and_is_asked_again_after_a_401(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    counter = tmp_path / "count"
    script = (
        f"n=$(cat {shlex.quote(str(counter))} 2>/dev/null || echo 0); n=$((n+1)); "
        f"echo $n > {shlex.quote(str(counter))}; echo sk-helper-key-$n-abcdef"
    )
    api.extend(text_turn("first"), text_turn("second", error_status=401, error_times=1))
    client = AnthropicModelClient(_settings(api, api_key_helper=script))
    await _one_request(client)
    headers = api.requests[-1].headers
    assert headers.get("x-api-key") == "sk-helper-key-1-abcdef"  # both, as Claude Code
    assert headers.get("authorization") == "Bearer sk-helper-key-1-abcdef"
    await _one_request(client)  # 401 with key 1: the helper runs again, key 2 works
    assert [r.headers.get("x-api-key") for r in api.requests[-2:]] == [
        "sk-helper-key-1-abcdef",
        "sk-helper-key-2-abcdef",
    ]
    await client.close()


async def test_a_helper_key_is_redacted_from_tool_results(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    from agentls.agent.framework.tool import Tool, ToolInput

    class Echo(ToolInput):
        text: str

    class Leak(Tool[Echo]):
        name = "leak"
        usage = "Echoes text. For tests."
        input_model = Echo

        def is_read_only(self, input: Echo | None = None) -> bool:
            return True

        async def call(self, input: Echo, ctx: Any) -> str:
            return f"the key is {input.text}"

    key = "sk-helper-secret-5f1e2d3c4b"
    api.extend(Turn(content=[ToolUseBlock(name="leak", input={"text": key})]), text_turn("ok"))
    session = make_session(
        api, tmp_path, tools=[Leak()], api_key_helper=f"echo {key}", api_key=None
    )
    assert (await session.run("go")).status == "completed"
    sent = str(api.message_requests[1].tool_results())
    assert key not in sent
    assert "REDACTED" in sent


def test_a_failing_helper_is_a_clear_error(api: ScriptedMessagesServer) -> None:
    import asyncio

    from agentls.agent.run.model_client import ModelError

    client = AnthropicModelClient(
        _settings(api, api_key_helper=f"{sys.executable} -c 'raise SystemExit(3)'")
    )
    with pytest.raises(ModelError, match="apiKeyHelper command failed with exit status 3"):
        asyncio.run(_one_request(client))
