"""Glob patterns as the model writes them: `**/*.py`, `src/**/test_*.py`, `*.{ts,tsx}`.

Python 3.11 has no glob-to-regex for `**` and braces, and `fnmatch` lets `*` cross `/`, so
this is a small translator with the usual semantics: `*` and `?` stay within one path
segment, `**` spans any number of segments (including none), `[...]` is a character class
(`[!...]` negated) and `{a,b}` is an alternation (nestable).

A glob comes from the model (grep, list_files) or a hook, so matching it must take linear
time: `*a*a*a*a*b` against a long file name makes a backtracking engine try every way to
split the name (minutes for 80 characters), and `{a,a,a,a}` sixteen times then `b` makes it
try 4^16 ways. Globs that cannot backtrack much (at most one `*` run per path segment, at
most one `**` segment, no braces) run on Python's `re`; the rest on RE2 (linear always, but
about 20x the per-call cost through its binding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import re2

__all__ = ["GlobError", "PathGlob", "backtracks_little", "glob_re2", "glob_regex"]


class GlobError(ValueError):
    """The glob pattern is malformed (e.g. an unclosed `[` or `{`)."""


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob to a regex that must match a whole posix relative path."""
    body, end = _translate(pattern, 0, in_brace=False)
    if end != len(pattern):  # pragma: no cover - _translate consumes everything at top level
        raise GlobError(f"unexpected '{pattern[end]}' at position {end} in glob '{pattern}'")
    return re.compile(f"(?s:{body})\\Z")


@lru_cache(maxsize=256)
def glob_re2(pattern: str, *, ignore_case: bool = False) -> re2._Regexp[str]:
    """The same translation for RE2 (call `fullmatch`): linear time whatever the glob."""
    body, _ = _translate(pattern, 0, in_brace=False)
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(f"(?s:{body})", options)
    except re2.error as exc:
        raise GlobError(f"invalid glob '{pattern}': {exc}") from None


_STAR_RUN = re.compile(r"\*+")


@lru_cache(maxsize=256)
def backtracks_little(pattern: str) -> bool:
    """Whether `re` matches this glob in near-linear time: at most one `*` run per path
    segment, at most one `**` segment and no braces (conservative: an escaped or bracketed
    `*` or `{` counts too). Any brace is refused because alternatives that overlap
    (`{a,a}`, `{a,ab}`) multiply: n of them in a row give `re` 2^n ways to fail."""
    if "{" in pattern:
        return False
    segments = pattern.split("/")
    if sum(segment == "**" for segment in segments) > 1:
        return False
    return all(len(_STAR_RUN.findall(segment)) <= 1 for segment in segments)


def _translate(pattern: str, pos: int, *, in_brace: bool) -> tuple[str, int]:
    out: list[str] = []
    n = len(pattern)
    i = pos
    while i < n:
        ch = pattern[i]
        if in_brace and ch in ",}":
            return "".join(out), i
        if ch == "*":
            regex, i = _star(pattern, i)
        elif ch == "[":
            regex, i = _char_class(pattern, i)
        elif ch == "{":
            regex, i = _brace(pattern, i)
        elif ch == "\\" and i + 1 < n:
            regex, i = re.escape(pattern[i + 1]), i + 2
        else:
            regex, i = ("[^/]" if ch == "?" else re.escape(ch)), i + 1
        out.append(regex)
    if in_brace:
        raise GlobError(f"unclosed '{{' in glob '{pattern}'")
    return "".join(out), i


def _star(pattern: str, i: int) -> tuple[str, int]:
    """`**` as a whole segment (any folders), else a run of `*` (within one segment)."""
    n = len(pattern)
    if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
        after = i + 2
        if after == n:
            return ".*", after
        if pattern[after] == "/":
            return "(?:[^/]*/)*", after + 1
    while i < n and pattern[i] == "*":
        i += 1
    return "[^/]*", i


def _brace(pattern: str, i: int) -> tuple[str, int]:
    """`{a,b,…}` (alternatives may hold globs and braces) from the `{` at `i`."""
    alternatives: list[str] = []
    i += 1
    while True:
        alt, i = _translate(pattern, i, in_brace=True)
        alternatives.append(alt)
        if i >= len(pattern):
            raise GlobError(f"unclosed '{{' in glob '{pattern}'")
        if pattern[i] == "}":
            return "(?:" + "|".join(alternatives) + ")", i + 1
        i += 1


def _char_class(pattern: str, start: int) -> tuple[str, int]:
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    chars: list[str] = []
    first = True
    while i < len(pattern) and (pattern[i] != "]" or first):
        ch = pattern[i]
        chars.append("\\\\" if ch == "\\" else "\\]" if ch == "]" else ch)
        first = False
        i += 1
    if i >= len(pattern):
        raise GlobError(f"unclosed '[' in glob '{pattern}'")
    body = "".join(chars).replace("[", "\\[")
    return ("[^/" if negate else "[") + body + "]", i + 1


@dataclass(frozen=True)
class PathGlob:
    """A compiled glob plus how to apply it.

    `basename_only` follows ripgrep's `--glob`: a pattern without `/` matches the file name
    at any depth. `negated` (a leading `!`) excludes what matches.
    """

    pattern: str
    regex: re.Pattern[str]
    basename_only: bool
    negated: bool = False
    linear: re2._Regexp[str] | None = None
    """RE2's twin of `regex`, used instead when `regex` could backtrack a lot."""

    @classmethod
    def compile(cls, pattern: str, *, rg_style: bool) -> PathGlob:
        text = pattern.strip()
        negated = rg_style and text.startswith("!")
        if negated:
            text = text[1:]
        text = text.removeprefix("./")
        if rg_style:
            text = text.lstrip("/")
        if not text:
            raise GlobError("the glob pattern is empty")
        regex = glob_regex(text)
        linear = None if backtracks_little(text) else glob_re2(text)
        return cls(pattern, regex, rg_style and "/" not in text, negated, linear)

    def matches(self, relative: str) -> bool:
        """Whether a posix path relative to the search folder passes this filter."""
        subject = relative.rsplit("/", 1)[-1] if self.basename_only else relative
        if self.linear is not None:
            return (self.linear.fullmatch(subject) is not None) != self.negated
        return (self.regex.match(subject) is not None) != self.negated
