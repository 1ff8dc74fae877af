"""User-supplied patterns: the `regex:` output format of the `lint` and `tests` settings, and
Claude Code hook `matcher`s (`compile_linear`).

Why RE2 and not `re`: the pattern comes from a settings file — possibly a cloned project's
`.agentls.toml` — and runs over megabytes of tool output on the server's own threads. A
backtracking engine can be made to take hours on one line (`(a+)+$`); RE2 runs in time
linear in the input whatever the pattern, so a bad pattern cannot freeze the server. RE2
has no backreferences or lookaround; the error says so when a pattern uses them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import re2

__all__ = [
    "MAX_USER_PATTERN_CHARS",
    "PatternMatch",
    "RegexGroupsError",
    "UserPattern",
    "compile_linear",
    "compile_user_regex",
]

MAX_USER_PATTERN_CHARS = 4096
"""Longer settings patterns are refused: no matcher needs one, and a huge pattern costs
memory to compile (a 10 MB literal took 1.7 GB in Python's `re`)."""

_RE2_MAX_MEM = 32 << 20
"""RE2's budget for one compiled settings pattern; a pattern needing more is refused."""

_NO_LINEAR_ALGORITHM = (
    ("(?<=", "a look-behind `(?<=...)`"),
    ("(?<!", "a negative look-behind `(?<!...)`"),
    ("(?=", "a look-ahead `(?=...)`"),
    ("(?!", "a negative look-ahead `(?!...)`"),
    ("(?>", "an atomic group `(?>...)`"),
    ("(?(", "a conditional `(?(...)...)`"),
    ("(?P=", "a back-reference `(?P=name)`"),
    ("\\k<", "a back-reference `\\k<name>`"),
)
_BACKREFERENCE = re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]")
_POSSESSIVE = re.compile(r"(?<!\\)(?:\\\\)*(?:[*+?}])\+")

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


def compile_linear(pattern: str, *, multiline: bool = False) -> re2._Regexp[str]:
    """Compile a pattern from settings (a hook `matcher`, …) with RE2: linear time in the
    text whatever the pattern, so `(a+)+$` cannot freeze the server.

    Raises `RegexGroupsError` with a message for the user; a construct that only a
    backtracking engine can run (look-around, back-references) is named, with the reason it
    is refused, rather than run on Python's `re`.
    """
    if len(pattern) > MAX_USER_PATTERN_CHARS:
        raise RegexGroupsError(
            f"the pattern is {len(pattern):,} characters long; at most "
            f"{MAX_USER_PATTERN_CHARS:,} are accepted"
        )
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _RE2_MAX_MEM
    try:
        return re2.compile(f"(?m){pattern}" if multiline else pattern, options)
    except re2.error as exc:
        raise RegexGroupsError(_re2_problem(pattern, exc)) from None


def _re2_problem(pattern: str, exc: re2.error) -> str:
    construct = _backtracking_construct(pattern)
    if construct is not None:
        return (
            f"the pattern does not compile: it uses {construct}; RE2 syntax, without "
            "backreferences or lookaround (patterns from settings run on RE2, a linear-time "
            "engine, so that no pattern can freeze the server). Rewrite it without that "
            "construct, e.g. match the surrounding text or list the alternatives with `|`"
        )
    detail = exc.args[0] if exc.args else exc
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    if "pattern too large" in str(detail):
        detail = "it compiles to more than the memory budget allows; use smaller repetitions"
    return (
        f"the pattern does not compile ({detail}); RE2 syntax, without backreferences or lookaround"
    )


def _backtracking_construct(pattern: str) -> str | None:
    """The first construct of `pattern` that needs a backtracking engine, named, or None."""
    for token, name in _NO_LINEAR_ALGORITHM:
        if token in pattern:
            return name
    if _BACKREFERENCE.search(pattern):
        return "a back-reference (`\\1` … `\\9`)"
    if _POSSESSIVE.search(pattern):
        return "a possessive quantifier (`*+`, `++`, `?+`)"
    return None


def compile_user_regex(pattern: str, required: Sequence[str] = ()) -> UserPattern:
    """Compile `pattern` with RE2, multi-line (`^`/`$` match at each line); check that the
    named groups in `required` exist (`file` may be spelled `path`)."""
    compiled = compile_linear(pattern, multiline=True)
    user = UserPattern(pattern, compiled)
    missing = [name for name in required if name not in user.groups]
    if missing:
        raise RegexGroupsError(
            f"the pattern lacks the named group(s) {', '.join(missing)} "
            "(write them as (?P<name>...))"
        )
    return user
