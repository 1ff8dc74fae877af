"""A broken endpoint cannot hang a run, sneak in a half-streamed turn, or fail obscurely.

Through the real anthropic SDK against the scripted Messages API: a stream that pings
forever, a plain hang, a stream that ends before `message_stop` (with text, and with a
half-streamed `tool_use`), and bodies that are not a Messages API response at all.
Settings come from the environment, as a user sets them.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.settings import AgentSettings, ConfigError
from agentls.config import AgentlsSettings, load_layer
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.workspace import Workspace
from tests.agent_support import EventLog, all_test_tools, close_at_loop_end

LIMIT = 30.0
"""Seconds a faulty run may take here at most (today's code would wait for ever)."""


class NoteInput(ToolInput):
    text: str = ""


class Note(Tool[NoteInput]):
    """Records every call it really executes."""

    name = "note"
    usage = "Writes a note. For tests."
    input_model = NoteInput

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def call(self, input: NoteInput, ctx: ToolContext) -> str:
        self.calls.append(input.text)
        return f"noted {len(input.text)} characters"


def session_from_env(
    api: ScriptedMessagesServer, tmp_path: Path, tools: list[Any] | None = None, **env: str
) -> AgentSession:
    settings = AgentSettings.from_env(
        {
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": api.base_url,
            "AGENTLS_RETRY_BASE_DELAY": "0.01",
            "AGENTLS_RETRY_MAX_DELAY": "0.05",
            **env,
        }
    )
    config = SessionConfig(
        settings=settings,
        workspace=Workspace([tmp_path]),
        tools=tools if tools is not None else all_test_tools(),
        transcript_dir=tmp_path / "transcripts",
    )
    return close_at_loop_end(AgentSession(AnthropicModelClient(settings), config))


async def bounded(session: AgentSession, prompt: str, events: EventLog) -> Any:
    return await asyncio.wait_for(session.run(prompt, events=events), LIMIT)


# --- item 13: an endpoint that never finishes --------------------------------------------


async def test_a_stream_that_only_pings_is_dropped_by_the_stall_detector(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(  # message_start and the first content, then only pings
        text_turn("never", hang=True, hang_after_events=3, keepalive_interval=0.5),
        text_turn("after the stall"),
    )
    session = session_from_env(
        api, tmp_path, AGENTLS_REQUEST_TIMEOUT="5", AGENTLS_STALL_TIMEOUT="1.5"
    )
    events = EventLog()
    started = time.monotonic()
    result = await bounded(session, "hi", events)
    assert result.status == "completed"
    assert result.text == "after the stall"
    (retry,) = events.of("retrying")
    assert "no content for 1.5 s" in retry.error
    assert "AGENTLS_STALL_TIMEOUT" in retry.error
    assert time.monotonic() - started < 10


async def test_a_local_endpoint_reading_its_prompt_may_ping_longer_than_the_stall_timeout(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """llama.cpp on a CPU: message_start, pings for minutes while it reads the prompt, then
    the answer. Before the first content, pings count as alive (issue 29)."""
    api.extend(text_turn("read it all", ping_before_content=2.5, keepalive_interval=0.3))
    session = session_from_env(api, tmp_path, AGENTLS_STALL_TIMEOUT="1")
    events = EventLog()
    result = await bounded(session, "hi", events)
    assert result.status == "completed", result.error
    assert result.text == "read it all"
    assert not events.of("retrying")


async def test_the_request_deadline_ends_a_run_on_an_endpoint_that_pings_for_ever(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        *[text_turn("never", hang=True, keepalive_interval=0.5) for _ in range(6)],
    )
    session = session_from_env(
        api,
        tmp_path,
        AGENTLS_REQUEST_TIMEOUT="5",
        AGENTLS_STALL_TIMEOUT="0",  # the stall detector off: only the deadline is left
        AGENTLS_REQUEST_DEADLINE="2",
    )
    started = time.monotonic()
    result = await bounded(session, "hi", EventLog())
    elapsed = time.monotonic() - started
    assert result.status == "failed"
    assert "did not complete within 2 s" in str(result.error)
    assert "AGENTLS_REQUEST_DEADLINE" in str(result.error)
    assert elapsed < 8


async def test_a_plain_hang_costs_the_deadline_not_timeout_times_attempts(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(*[text_turn("never", hang=True, hang_after_events=0) for _ in range(6)])
    session = session_from_env(
        api, tmp_path, AGENTLS_STALL_TIMEOUT="1", AGENTLS_REQUEST_DEADLINE="2.5"
    )  # the request timeout stays at its 600 s default
    events = EventLog()
    started = time.monotonic()
    result = await bounded(session, "hi", events)
    assert result.status == "failed"
    assert "did not complete within 2.5 s" in str(result.error)
    assert events.of("retrying"), "each stalled attempt is retried until the deadline"
    assert time.monotonic() - started < 8


def test_deadline_and_stall_settings_are_read_and_checked() -> None:
    defaults = AgentSettings.from_env({})
    assert defaults.stall_timeout == 120
    assert defaults.request_deadline == 900
    assert defaults.request_deadline < 3600  # minutes, not an hour
    custom = AgentSettings.from_env(
        {"AGENTLS_STALL_TIMEOUT": "0", "AGENTLS_REQUEST_DEADLINE": "60"}
    )
    assert (custom.stall_timeout, custom.request_deadline) == (0, 60)
    with pytest.raises(ConfigError, match="AGENTLS_REQUEST_DEADLINE"):
        AgentSettings.from_env({"AGENTLS_REQUEST_DEADLINE": "soon"})
    with pytest.raises(ConfigError, match=r"requestDeadline.*greater than 0"):
        AgentSettings.from_env({"AGENTLS_REQUEST_DEADLINE": "0"})
    with pytest.raises(ConfigError, match=r"stallTimeout.*greater than or equal to 0"):
        AgentSettings.from_env({"AGENTLS_STALL_TIMEOUT": "-1"})


def test_deadline_and_stall_are_also_editor_and_project_settings() -> None:
    editor = AgentlsSettings.model_validate({"stallTimeout": 5, "requestDeadline": 60})
    settings = AgentSettings.resolve(editor)
    assert (settings.stall_timeout, settings.request_deadline) == (5, 60)
    assert load_layer({"requestDeadline": 0}, "example", "user").problems
    assert load_layer({"stallTimeout": -1}, "example", "project").problems


# --- item 14: truncated streams ----------------------------------------------------------


async def test_a_stream_that_ends_before_message_stop_is_retried_not_accepted(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    whole = "The complete answer, which is long enough to need several deltas."
    api.extend(text_turn(whole, chunk_size=8, truncate_after_events=5))
    events = EventLog()
    result = await bounded(session_from_env(api, tmp_path), "hi", events)
    assert result.status == "completed"
    assert result.text == whole
    assert len(api.message_requests) == 2
    (retry,) = events.of("retrying")
    assert "ended before `message_stop`" in retry.error
    assert api.base_url in retry.error


async def test_a_truncated_tool_use_is_never_executed(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    full = "x" * 200
    note = Note()
    # the call is cut inside its input JSON (message_start, ping, block start, 3 deltas)
    api.extend(
        tool_turn(("note", {"text": full}), chunk_size=16, truncate_after_events=6),
        text_turn("noted"),
    )
    result = await bounded(session_from_env(api, tmp_path, tools=[note]), "note", EventLog())
    assert result.status == "completed"
    assert note.calls == [full]  # only the complete call, once


async def test_a_stream_that_keeps_ending_early_fails_clearly_and_runs_nothing(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    note = Note()
    api.extend(
        tool_turn(
            ("note", {"text": "y" * 200}), chunk_size=16, truncate_after_events=6, truncate_times=9
        )
    )
    session = session_from_env(api, tmp_path, tools=[note], AGENTLS_MAX_RETRIES="2")
    result = await bounded(session, "note", EventLog())
    assert result.status == "failed"
    assert "ended before `message_stop`" in str(result.error)
    assert note.calls == []
    assert len(api.message_requests) == 3
    assert session.messages[-1]["role"] == "user"  # no half turn in the history


# --- item 14: bodies that are not a Messages API response ----------------------------------

HTML = "<html><head><title>Sign in</title></head><body>" + "<p>portal</p>" * 400 + "</body></html>"


async def test_an_html_page_fails_with_endpoint_status_and_first_bytes(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("unreachable", raw_body=HTML, raw_status=200, raw_times=9))
    result = await bounded(session_from_env(api, tmp_path), "hi", EventLog())
    assert result.status == "failed"
    error = str(result.error)
    assert api.base_url in error
    assert "HTTP 200" in error
    assert "text/html" in error
    assert "<html><head><title>Sign in" in error
    assert len(error) < 600
    assert "AssertionError" not in error


async def test_json_that_is_not_a_message_fails_clearly(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        text_turn(
            "unreachable",
            raw_body='{"status": "ok", "models": []}',
            raw_content_type="application/json",
            raw_times=9,
        )
    )
    result = await bounded(session_from_env(api, tmp_path), "hi", EventLog())
    assert result.status == "failed"
    error = str(result.error)
    assert api.base_url in error
    assert "application/json" in error
    assert '{"status": "ok"' in error


async def test_a_proxy_error_page_is_retried_and_named_briefly(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    page = "<html><body><h1>502 Bad Gateway</h1>" + "<!-- padding -->" * 300 + "</body></html>"
    api.extend(text_turn("through", raw_body=page, raw_status=502))
    events = EventLog()
    result = await bounded(session_from_env(api, tmp_path), "hi", events)
    assert result.status == "completed"
    assert result.text == "through"
    (retry,) = events.of("retrying")
    assert "502" in retry.error
    assert api.base_url in retry.error
    assert "502 Bad Gateway" in retry.error
    assert len(retry.error) < 600
