"""The agent loop through the real anthropic SDK against the scripted Messages API."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agentls.agent.persistence.transcript import read_records, render_tree
from agentls.agent.protocol.events import AgentEvent
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.agent_support import EventLog, ProbeRead, ProbeWrite, make_session


async def test_end_turn_completes_with_text_and_usage(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("All done.", usage={"input_tokens": 12, "output_tokens": 3}))
    events = EventLog()
    result = await make_session(api, tmp_path).run("say done", events=events)
    assert result.status == "completed"
    assert result.text == "All done."
    assert result.usage.input_tokens == 12
    assert result.usage.output_tokens == 3
    assert "".join(e.text for e in events.of("text_delta")) == "All done."
    assert events.of("run_finished")[0].status == "completed"


async def test_parallel_reads_overlap_and_writes_run_alone(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("probe_read", {"label": "a", "delay": 0.2}),
            ("probe_read", {"label": "b", "delay": 0.2}),
            ("probe_read", {"label": "c", "delay": 0.2}),
            ("probe_write", {"label": "w", "delay": 0.1}),
            ("probe_read", {"label": "d", "delay": 0.05}),
        ),
        text_turn("ok"),
    )
    events = EventLog()
    result = await make_session(api, tmp_path).run("go", events=events)
    assert result.status == "completed"
    spans = {e.tool_use_id: (e.started_at, e.finished_at) for e in events.of("tool_finished")}
    ids = [str(b["id"]) for b in _tool_uses(api, 0)]
    a, b, c, w, d = (spans[i] for i in ids)
    # the three leading reads overlap one another
    assert max(a[0], b[0], c[0]) < min(a[1], b[1], c[1])
    # the write overlaps nothing: it starts after every earlier call ended and ends before d
    assert w[0] >= max(a[1], b[1], c[1])
    assert w[1] <= d[0]
    results = api.message_requests[1].tool_results()
    assert [r["tool_use_id"] for r in results] == ids
    assert [r["content"] for r in results] == ["read:a", "read:b", "read:c", "wrote:w", "read:d"]


def _tool_uses(api: ScriptedMessagesServer, turn: int) -> list[dict[str, object]]:
    assistant = api.message_requests[turn + 1].messages[-2]
    return [b for b in assistant["content"] if b["type"] == "tool_use"]


async def test_each_failure_kind_is_an_error_result_and_the_run_continues(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("no_such_tool", {}),
            ("probe_read", {"delay": 0}),
            ("picky", {"label": "Upper"}),
            ("boom", {"label": "x"}),
            ("picky", {"label": "missing"}),
            ("probe_alias", {"label": "via-alias"}),
            ("huge", {"label": "h"}),
            ("probe_read", {"label": "extra", "colour": "red"}),
        ),
        text_turn("handled"),
    )
    result = await make_session(api, tmp_path).run("try everything")
    assert result.status == "completed"
    assert result.text == "handled"
    results = api.message_requests[1].tool_results()
    assert len(results) == 8
    unknown, invalid, picky, boom, tool_error, alias, huge, extra = results
    assert unknown["is_error"]
    assert "No such tool available: no_such_tool" in unknown["content"]
    assert "probe_read" in unknown["content"]
    assert "picky" in unknown["content"]
    assert invalid["is_error"]
    assert "`label`" in invalid["content"]
    assert "required" in invalid["content"]
    assert picky["is_error"]
    assert "lower case" in picky["content"]
    assert boom["is_error"]
    assert boom["content"] == "Error calling tool (boom): RuntimeError: kaboom x"
    assert tool_error["is_error"]
    assert "did you mean 'mission'" in tool_error["content"]
    assert not alias["is_error"]
    assert alias["content"] == "read:via-alias"
    assert not huge["is_error"]
    assert "Output truncated" in huge["content"]
    assert len(huge["content"]) < 1300
    assert extra["is_error"]
    assert "`colour`" in extra["content"]


async def test_refusal_stops_without_running_tools(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(tool_turn(("probe_write", {"label": "x"}), text="I won't", stop_reason="refusal"))
    events = EventLog()
    session = make_session(api, tmp_path)
    result = await session.run("do bad things", events=events)
    assert result.status == "refused"
    assert events.of("tool_started") == []
    # the history stays valid: the refused tool_use has its (error) result
    last = session.messages[-1]
    assert last["role"] == "user"
    assert last["content"][0]["type"] == "tool_result"
    assert last["content"][0]["is_error"]


async def test_max_turns_stops_the_run(api: ScriptedMessagesServer, tmp_path: Path) -> None:
    api.extend(*(tool_turn(("probe_read", {"label": str(i)})) for i in range(5)))
    result = await make_session(api, tmp_path, max_turns=3).run("loop forever")
    assert result.status == "max_turns"
    assert result.turns == 3
    assert len(api.message_requests) == 3
    assert any("maximum of 3 turns" in n for n in result.notices)


async def test_max_tokens_asks_to_continue_and_reports_it(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("first half, ", stop_reason="max_tokens"), text_turn("second half."))
    result = await make_session(api, tmp_path).run("write a lot")
    assert result.status == "completed"
    assert result.text == "first half, second half."
    assert "continue" in api.message_requests[1].user_text().lower()
    assert any("output token limit" in n for n in result.notices)


async def test_pause_turn_continues_without_new_user_message(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("thinking...", stop_reason="pause_turn"), text_turn("done"))
    result = await make_session(api, tmp_path).run("long task")
    assert result.status == "completed"
    second = api.message_requests[1].messages
    assert second[-1]["role"] == "assistant"


async def test_overloaded_then_success_is_retried(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("after retry", error_status=529, error_times=2))
    events = EventLog()
    result = await make_session(api, tmp_path).run("hi", events=events)
    assert result.status == "completed"
    assert result.text == "after retry"
    assert len(api.message_requests) == 3
    assert [e.attempt for e in events.of("retrying")] == [1, 2]


async def test_dropped_stream_and_rate_limit_are_retried(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        text_turn("survived the cut", cut_stream_after_events=3),
        text_turn("and the 429", error_status=429, retry_after="0.01"),
    )
    session = make_session(api, tmp_path)
    first = await session.run("one")
    second = await session.run("two")
    assert (first.text, second.text) == ("survived the cut", "and the 429")


async def test_persistent_500_fails_with_message_and_transcript(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("never", error_status=500, error_times=100))
    result = await make_session(api, tmp_path, max_retries=2).run("hi")
    assert result.status == "failed"
    assert result.error
    assert "500" in result.error
    assert len(api.message_requests) == 3
    records = list(read_records(result.transcript))
    assert records[-1]["type"] == "run_end"
    assert records[-1]["status"] == "failed"
    assert sum(r["type"] == "retry" for r in records) == 2


async def test_auth_failure_is_not_retried(api: ScriptedMessagesServer, tmp_path: Path) -> None:
    api.extend(text_turn("never", error_status=401, error_times=5))
    result = await make_session(api, tmp_path).run("hi")
    assert result.status == "failed"
    assert len(api.message_requests) == 1
    assert result.error
    assert "ANTHROPIC_API_KEY" in result.error


async def test_cache_control_on_tools_system_and_latest_message(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(tool_turn(("probe_read", {"label": "a"})), text_turn("ok"))
    await make_session(api, tmp_path).run("go")
    for request in api.message_requests:
        tools = request.tools
        assert [t.get("cache_control") for t in tools[:-1]] == [None] * (len(tools) - 1)
        assert tools[-1]["cache_control"] == {"type": "ephemeral"}
        assert request.json["system"][-1]["cache_control"] == {"type": "ephemeral"}
        blocks = [b for m in request.messages for b in m["content"]]
        marked = [b for b in blocks if "cache_control" in b]
        assert marked == [request.messages[-1]["content"][-1]]
    assert "tool_choice" not in api.message_requests[0].json
    assert [t["name"] for t in api.message_requests[0].tools] == sorted(
        t["name"] for t in api.message_requests[0].tools
    )


async def test_tools_and_system_are_byte_stable_across_turns_and_runs(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("probe_read", {"label": "a"})),
        tool_turn(("probe_write", {"label": "b"})),
        text_turn("1"),
        text_turn("2"),
    )
    session = make_session(api, tmp_path)
    await session.run("first")
    await session.run("second")
    raw = [_raw_field(r.body, "tools") for r in api.message_requests]
    system = [_raw_field(r.body, "system") for r in api.message_requests]
    assert len(raw) == 4
    assert len(set(raw)) == 1
    assert len(set(system)) == 1


def _raw_field(body: bytes, name: str) -> str:
    """The field re-serialised in wire order (json keeps key order), for byte comparison."""
    return json.dumps(json.loads(body)[name], separators=(",", ":"))


async def test_follow_up_prompt_continues_the_session(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("The answer is 4."), text_turn("Doubled: 8."))
    session = make_session(api, tmp_path)
    await session.run("what is 2+2?")
    result = await session.run("double it")
    assert result.text == "Doubled: 8."
    messages = api.message_requests[1].messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"][0]["text"] == "The answer is 4."
    assert session.runs == 2
    assert session.usage.output_tokens > result.usage.output_tokens > 0


async def test_cancel_during_tools_answers_every_tool_use(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(
            ("probe_read", {"label": "fast", "delay": 0}),
            ("probe_read", {"label": "slow", "delay": 30}),
            ("probe_write", {"label": "never", "delay": 0}),
        ),
        text_turn("continued after cancel"),
    )
    session = make_session(api, tmp_path)
    slow_started = asyncio.Event()

    def on_event(event: AgentEvent) -> None:
        if event.type == "tool_started" and "slow" in event.summary:
            slow_started.set()

    task = asyncio.create_task(session.run("go", events=on_event))
    await slow_started.wait()
    await asyncio.sleep(0.05)
    cancelled_at = time.monotonic()
    assert session.cancel()
    result = await task
    assert time.monotonic() - cancelled_at < 10  # the slow tool takes 30 s: not waited for
    assert result.status == "cancelled"
    results = session.messages[-1]["content"]
    assert [r["type"] for r in results] == ["tool_result"] * 3
    assert results[0]["content"] == "read:fast"
    assert not results[0]["is_error"]
    assert results[1]["is_error"]
    assert results[2]["is_error"]
    assert "Cancelled" in results[2]["content"]
    follow_up = await session.run("carry on")
    assert follow_up.status == "completed"
    assert follow_up.text == "continued after cancel"
    last_request = api.message_requests[-1].messages
    assert last_request[-1]["content"][-1]["text"] == "carry on"


async def test_cancel_during_a_hung_stream_stops_quickly(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("never arrives", hang=True))
    session = make_session(api, tmp_path)
    task = asyncio.create_task(session.run("hang"))
    api_wait = asyncio.to_thread(api.wait_for_requests, 1)
    await api_wait
    await asyncio.sleep(0.1)
    cancelled_at = time.monotonic()
    session.cancel()
    result = await task
    assert time.monotonic() - cancelled_at < 10  # the stream never ends: not waited for
    assert result.status == "cancelled"


async def test_concurrent_run_on_busy_session_is_refused(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    from agentls.agent.run.session import SessionBusy

    api.extend(text_turn("slow", event_delay=0.05))
    session = make_session(api, tmp_path)
    task = asyncio.create_task(session.run("first"))
    await asyncio.sleep(0.05)
    with pytest.raises(SessionBusy):
        await session.run("second")
    assert (await task).status == "completed"


async def test_plan_mode_offers_only_read_only_tools(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(tool_turn(("probe_write", {"label": "x"})), text_turn("planned"))
    await make_session(
        api,
        tmp_path,
    ).run("plan it", mode="plan")
    names = [t["name"] for t in api.message_requests[0].tools]
    assert "probe_write" not in names
    assert "boom" not in names
    assert "probe_read" in names
    result = api.message_requests[1].tool_results()[0]
    assert result["is_error"]
    assert "No such tool" in result["content"]


async def test_transcript_records_requests_calls_and_renders_a_tree(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("probe_read", {"label": "a"}), text="Let me look."), text_turn("Found it.")
    )
    result = await make_session(api, tmp_path).run("find it")
    assert result.transcript.parent == tmp_path / "transcripts"
    records = list(read_records(result.transcript))
    kinds = [r["type"] for r in records]
    assert kinds[0] == "session"
    assert kinds.count("request") == 2
    assert kinds[-1] == "run_end"
    assert "test-key" not in result.transcript.read_text()
    tree = render_tree(records)
    assert "probe_read" in tree
    assert "✓" in tree
    assert "completed after 2 turns" in tree


def test_tool_defaults_fail_closed() -> None:
    write = ProbeWrite()
    assert not write.is_read_only(None)
    assert not write.is_concurrency_safe(None)  # type: ignore[arg-type]
    assert ProbeRead().is_concurrency_safe(None)  # type: ignore[arg-type]
