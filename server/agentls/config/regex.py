"""User-supplied patterns (the `regex:` output format of the `lint` and `tests` settings).

Why RE2 and not `re`: the pattern comes from a settings file — possibly a cloned project's
`.agentls.toml` — and runs over megabytes of tool output on the server's own threads. A
backtracking engine can be made to take hours on one line (`(a+)+$`); RE2 runs in time
linear in the input whatever the pattern, so a bad pattern cannot freeze the server. RE2
has no backreferences or lookaround; the error says so when a pattern uses them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import re2

__all__ = ["PatternMatch", "RegexGroupsError", "UserPattern", "compile_user_regex"]

_ALIASES = {"path": "file"}
"""Group names accepted for the same thing (`path` is the older spelling of `file`)."""


class RegexGroupsError(ValueError):
    """The pattern does not compile, or lacks a required named group."""


class PatternMatch(Protocol):
    def groupdict(self) -> dict[str, str | None]: ...


class UserPattern:
    """A compiled user pattern; `matches` yields each match's named groups (aliases folded)."""

    def __init__(self, pattern: str, compiled: Any) -> None:
        self.pattern = pattern
        self._compiled = compiled

    @property
    def groups(self) -> frozenset[str]:
        return frozenset(_ALIASES.get(n, n) for n in self._compiled.groupindex)

    def matches(self, text: str) -> Iterator[dict[str, str]]:
        for match in self._compiled.finditer(text):
            found: dict[str, str] = {}
            for name, value in match.groupdict().items():
                if value is not None:
                    found[_ALIASES.get(name, name)] = value
            yield found


def compile_user_regex(pattern: str, required: Sequence[str] = ()) -> UserPattern:
    """Compile `pattern` with RE2, multi-line (`^`/`$` match at each line); check that the
    named groups in `required` exist (`file` may be spelled `path`)."""
    options = re2.Options()
    options.log_errors = False
    try:
        compiled = re2.compile(f"(?m){pattern}", options=options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise RegexGroupsError(
            f"the pattern does not compile ({detail}); RE2 syntax, without backreferences "
            "or lookaround"
        ) from None
    user = UserPattern(pattern, compiled)
    missing = [name for name in required if name not in user.groups]
    if missing:
        raise RegexGroupsError(
            f"the pattern lacks the named group(s) {', '.join(missing)} "
            "(write them as (?P<name>...))"
        )
    return user
