"""The loop guard: a model that repeats the same failing call is told, then stopped.

Why: small models resend a call whose error already named the fix ("Did you mean:
lookup.py?") until max turns. From the second identical failure the result carries an
instruction to change approach; after `limit` identical failures the run ends with a clear
status instead of burning the remaining turns. A call that succeeds clears its count; one
that succeeds with the very result it returned last time is told that repeating it will
not help (a note only: reading a file again after an edit is normal, and gets new text).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from agentls.agent.run.pipeline import ToolCall, ToolCallResult

WARN_AFTER = 2


def change_approach(count: int) -> str:
    return (
        f"\n\n[This exact call has now failed {count} times. Do not send it again: read the "
        "error above and change the arguments, or use another tool first (list_files to see "
        "which files exist, read_file to see a file's exact text).]"
    )


def same_result(count: int) -> str:
    return (
        f"\n\n[This exact call has now returned this same result {count} times: nothing "
        "changed in between, so calling it again will not help. Act on the result (for "
        "example, edit the file it points at) or give your answer.]"
    )


@dataclass
class LoopGuard:
    limit: int
    failures: dict[str, int] = field(default_factory=dict)
    repeats: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Successful calls: key → (their result, how many times in a row it came back)."""
    stuck: str | None = None
    """Set once a call failed `limit` times: what the run's error says."""

    def check(
        self, calls: Sequence[ToolCall], results: list[ToolCallResult]
    ) -> list[ToolCallResult]:
        """The results, with a change-approach note on repeated failures."""
        by_id = {call.id: call for call in calls}
        checked: list[ToolCallResult] = []
        for result in results:
            call = by_id.get(result.tool_use_id)
            if call is None:
                checked.append(result)
                continue
            key = _key(call)
            if not result.is_error:
                self.failures.pop(key, None)
                checked.append(self._repeated(key, result))
                continue
            count = self.failures.get(key, 0) + 1
            self.failures[key] = count
            if count >= self.limit and self.stuck is None:
                self.stuck = (
                    f"stuck: the model sent the same failing {call.name} call {count} times "
                    "(setting loopGuard); the run was stopped"
                )
            if count >= WARN_AFTER and isinstance(result.content, str):
                result = replace(result, content=result.content + change_approach(count))
            checked.append(result)
        return checked

    def _repeated(self, key: str, result: ToolCallResult) -> ToolCallResult:
        """A successful call that returns the same text again (the 1.5B model ran the same
        lint three times, then stopped without fixing what it reported) is told so."""
        if not isinstance(result.content, str):
            return result
        seen, count = self.repeats.get(key, ("", 0))
        count = count + 1 if seen == result.content else 1
        self.repeats[key] = (result.content, count)
        if count >= WARN_AFTER:
            return replace(result, content=result.content + same_result(count))
        return result


def _key(call: ToolCall) -> str:
    return call.name + "\0" + json.dumps(call.input, sort_keys=True, default=str)
