"""`prompt` and `agent` hooks: a model decides, as in Claude Code.

A `prompt` hook puts its `prompt` to a model once, with `$ARGUMENTS` replaced by the
event's JSON (appended when the prompt has no `$ARGUMENTS`), and no tools. An `agent` hook
gives the same prompt to a verifier agent that may read the workspace (read-only tools:
`read_file`, `grep`, `list_files`, …) before it answers. Either answers with JSON:
`{"ok": true}` lets the action go on; `{"ok": false, "reason": "…"}` blocks it — for Stop
and SubagentStop the reason becomes the agent's next instruction, for a tool call it is
the refusal the model reads, for a prompt it is what the user sees. Anything else (no
answer, no JSON, a timeout) is a non-blocking error reported to the user.

Both run as a sub-agent of the session (`RunControls.run_subagent`): the session's
endpoint and credentials, its permission pipeline for every call the verifier makes, its
accounting and transcripts (`<session>.agents/`). The hook's `model` is resolved like an
agent file's (`haiku`, `sonnet`, an id); without one the session's model answers (Claude
Code defaults to its small fast model, which another endpoint may not serve). The hook's
timeout stops the verifier alone: the run it guards goes on. The verifiers' own calls
never start `prompt` or `agent` hooks (no hook recursion).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from agentls.agent.claude.subagents import AgentType

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext
    from agentls.agent.hooks.config import HookCommand

PROMPT_HOOK_AGENT = "prompt-hook"
AGENT_HOOK_AGENT = "agent-hook"
VERIFIERS = frozenset({PROMPT_HOOK_AGENT, AGENT_HOOK_AGENT})
READ_TOOLS = ("read_file", "grep", "list_files", "search_symbols", "find_references")

_ANSWER = """Answer with one JSON object and nothing else: {"ok": true} when the condition \
holds and the action may go on, or {"ok": false, "reason": "<why, and what to do instead>"} \
when it must not."""

PROMPT_ROLE = f"""You evaluate one event of a coding agent for a hook the user configured. \
You have no tools: judge from the event below. {_ANSWER}"""

AGENT_ROLE = f"""You verify one event of a coding agent for a hook the user configured. Use \
the read-only tools to check what the instructions ask about (read files, search the code), \
then decide. Change nothing. {_ANSWER}"""


def verifier(hook: HookCommand) -> AgentType:
    """The sub-agent type a `prompt` or `agent` hook runs as."""
    if hook.kind == "agent":
        return AgentType(
            AGENT_HOOK_AGENT,
            "verifies an event for an agent hook",
            AGENT_ROLE,
            tools=READ_TOOLS,
            model=hook.model,
            read_only_tools=True,
            source="hook",
            pin_instructions=False,
        )
    return AgentType(
        PROMPT_HOOK_AGENT,
        "evaluates an event for a prompt hook",
        PROMPT_ROLE,
        tools=(),
        model=hook.model,
        source="hook",
        pin_instructions=False,
    )


def hook_prompt(hook: HookCommand, data: str) -> str:
    """The prompt with `$ARGUMENTS` replaced by the event's JSON (appended when absent)."""
    if "$ARGUMENTS" in hook.command:
        return hook.command.replace("$ARGUMENTS", data)
    return f"{hook.command}\n\nThe event (JSON):\n{data}"


class ModelAnswer(TypedDict):
    """A prompt or agent hook's verdict as the model writes it (Claude Code's shape)."""

    ok: bool
    reason: NotRequired[object]
    """Shown when `ok` is false; a string unless the model got it wrong."""


def answer_json(text: str) -> ModelAnswer | None:
    """The `{"ok": …}` object in the model's answer (fenced or surrounded by prose too)."""
    start = text.find("{")
    decoder = json.JSONDecoder()
    while start != -1:
        with contextlib.suppress(ValueError):
            value, _ = decoder.raw_decode(text, start)
            if isinstance(value, dict) and isinstance(value.get("ok"), bool):
                return cast(ModelAnswer, value)
        start = text.find("{", start + 1)
    return None


def as_hook_output(answer: ModelAnswer) -> str:
    """The verdict as a command hook's JSON stdout: `ok: false` is `decision: block`."""
    if answer["ok"]:
        return "{}"
    reason = answer.get("reason")
    text = reason if isinstance(reason, str) and reason.strip() else "a model hook blocked this"
    return json.dumps({"decision": "block", "reason": text})


class ModelVerdict:
    """How one prompt or agent hook ended, in a command run's terms."""

    def __init__(
        self,
        exit_code: int | None,
        stdout: str = "",
        *,
        error: str | None = None,
        timed_out: bool = False,
        seconds: float = 0.0,
    ) -> None:
        self.exit_code = exit_code
        self.stdout = stdout
        self.error = error
        self.timed_out = timed_out
        self.seconds = seconds


async def evaluate(hook: HookCommand, data: str, ctx: ToolContext | None) -> ModelVerdict:
    """Ask the model (a verifier sub-agent) and read its verdict."""
    started = time.monotonic()
    if ctx is None or not ctx.run.in_run:
        return ModelVerdict(None, error=f"{hook.kind} hooks run only while the agent runs")
    own = asyncio.Event()
    watcher = asyncio.ensure_future(_follow(ctx.cancelled, own))
    agent = verifier(hook)
    running = asyncio.ensure_future(
        ctx.run.run_subagent(agent, f"{hook.kind} hook", hook_prompt(hook, data), ctx, own)
    )
    try:
        report = await asyncio.wait_for(asyncio.shield(running), hook.timeout)
    except TimeoutError:
        own.set()  # the verifier stops; the run it guards goes on
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(running, 2.0)
        return ModelVerdict(None, timed_out=True, seconds=time.monotonic() - started)
    except Exception as exc:
        return ModelVerdict(None, error=str(exc) or type(exc).__name__)
    finally:
        watcher.cancel()
    seconds = time.monotonic() - started
    if report.error:
        return ModelVerdict(None, error=f"the model failed: {report.error}", seconds=seconds)
    answer = answer_json(report.text)
    if answer is None:
        shown = " ".join(report.text.split())[:200] or "nothing"
        return ModelVerdict(
            None, error=f'the model did not answer {{"ok": …}} (it said: {shown})', seconds=seconds
        )
    return ModelVerdict(0, as_hook_output(answer), seconds=seconds)


async def _follow(source: asyncio.Event, target: asyncio.Event) -> None:
    """Cancelling the run cancels the verifier too."""
    await source.wait()
    target.set()
