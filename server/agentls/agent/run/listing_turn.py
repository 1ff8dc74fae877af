"""The listing turn: a compact-profile run's first request, sent without tools.

Why (issue 29, measured): with the tool definitions in its prompt, Qwen2.5-Coder 1.5B
answered "add a parameter `greeting`" with `return greeting + 'Hello, ' + name` (no
parameter), "add triple to mathx.py" with a file that lost `double`, and "add a docstring"
with the unchanged function. The same requests with the same files shown, the same
listing instructions and no tools (aider's shape: the files in the prompt, one turn, a
short instruction) were answered with correct whole-file listings, 6 of 6. Qwen's chat
template puts the tools in the system text with "call functions" instructions, and the
small model then reaches for a call and gets its arguments wrong.

So when the first message shows the files the prompt names (compact profile, text tool
calls, write_file offered), the run's first request has no tools and a system prompt
without the tools section. Its listings are still write_file calls through the one
pipeline (permissions, review, problem checks); a call written as text still runs. A
turn whose writes all went through with no new error ends the run, as aider's does (a new
warning such as a missing annotation does not: the 1.5B model spent three more turns on
one, re-writing the same file); otherwise (a refused write, a new error, a call of another
tool) the run goes on with the tools, and the model sees the results.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from agentls.agent.protocol.messages import TextBlockParam
from agentls.agent.run.model_client import ModelRequest
from agentls.agent.run.pipeline import ToolCall, ToolCallResult
from agentls.agent.run.whole_writes import defined_names

_NEW_PROBLEMS = re.compile(r"\b\d+ new problems?\b")
"""How a write's result reports problems it introduced (`agentls.tools.after_edit`:
"1 new problem: calc.py:2 error: …", or one `- file:line severity: …` line each)."""

_ERROR = re.compile(r"\S+:\d+ error: (?P<message>[^\n]*)")
_QUOTED = re.compile(r"\"([A-Za-z_]\w*)\"")


def listing_request(request: ModelRequest, system: list[TextBlockParam]) -> ModelRequest:
    """`request` without tools, with the listing turn's system prompt."""
    return dataclasses.replace(request, tools=[], system=system)


def wrote_cleanly(calls: Sequence[ToolCall], results: Sequence[ToolCallResult]) -> bool:
    """Every call was a write_file that succeeded and reported no new error.

    Each write is checked as it is staged, before the turn's later writes: the 1.5B model
    listed app.py (`from lookup import find_user`) before lookup.py, and app.py's check
    reported `"find_user" is unknown import symbol`. An error naming a name that a later
    write of the turn defines is stale and does not count."""
    if not calls or any(call.name != "write_file" for call in calls):
        return False
    for at, result in enumerate(results):
        if result.is_error:
            return False
        later = {n for c in calls[at + 1 :] for n in defined_names(str(c.input.get("content")))}
        if any(not _stale(error, later) for error in _new_errors(str(result.content))):
            return False
    return True


def _new_errors(content: str) -> list[str]:
    head = _NEW_PROBLEMS.search(content)
    return [m.group("message") for m in _ERROR.finditer(content, head.start())] if head else []


def _stale(error: str, defined_later: set[str]) -> bool:
    return any(name in defined_later for name in _QUOTED.findall(error))
