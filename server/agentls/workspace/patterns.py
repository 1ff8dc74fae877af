"""What a search pattern needs before it runs: compiling, required literals, line locality.

Python `re` is the one regex dialect for every file (disk, buffer or staged), so results
never depend on where a file's text lives. Speed comes from analysing the pattern once:
the literal text every match must contain lets a file be ruled out with a C-speed
substring test on its raw bytes, and, since matches never span lines, the regex can run
on just the lines that contain that literal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CASE_FOLD_TRAPS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
"""ASCII letters that `re.IGNORECASE` also matches against non-ASCII letters (İ ı K ſ). An
ASCII-lowercased haystack cannot show those, so a file that has them is never ruled out."""

_FLAGS = re.compile(r"\(\?([aiLmsux]+)[):]")
_BRACE_QUANT = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_ESCAPE_WIDTH = {"x": 2, "u": 4, "U": 8}


def compile_regex(pattern: str, *, ignore_case: bool) -> re.Pattern[str]:
    """Compile for whole-text search (`^`/`$` at line boundaries). Raises `re.error`.

    `$` is rewritten to also match before "\\r\\n", so `foo$` finds lines of CRLF files too
    (errors are reported against the pattern as the model wrote it).
    """
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    compiled = re.compile(pattern, flags)
    rewritten = _crlf_dollar(pattern)
    return compiled if rewritten == pattern else re.compile(rewritten, flags)


def _crlf_dollar(pattern: str) -> str:
    """Replace each `$` anchor (not escaped, not in a class) with `(?=\r?$)`."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
        elif ch == "[":
            end = _skip_class(pattern, i)
            if end is None:
                return pattern
            out.append(pattern[i:end])
            i = end
        else:
            out.append("(?=\\r?$)" if ch == "$" else ch)
            i += 1
    return "".join(out)


class Prefilter:
    """A cheap test a file must pass before it is decoded and searched.

    `needles` are alternatives (one of them must occur); none means "no prefilter". With
    `ignore_case` the needles are ASCII and the haystack is lowercased first.
    """

    def __init__(self, needles: Sequence[str] = (), *, ignore_case: bool = False) -> None:
        self.ignore_case = ignore_case
        self.needles = tuple(dict.fromkeys(n.lower() if ignore_case else n for n in needles))
        self._raw = tuple(n.encode("utf-8") for n in self.needles)
        traps = {t for n in self.needles for ch in n for t in _CASE_FOLD_TRAPS.get(ch, "")}
        self._traps = tuple(sorted(traps)) if ignore_case else ()
        self._raw_traps = tuple(t.encode("utf-8") for t in self._traps)

    def __repr__(self) -> str:
        return f"Prefilter({self.needles!r}, ignore_case={self.ignore_case})"

    @property
    def raw_needles(self) -> tuple[bytes, ...]:
        return self._raw

    def haystack(self, data: bytes) -> bytes:
        """What the needles are looked for in: the bytes, ASCII-lowercased for ignore-case
        (same length, so offsets still point into `data`)."""
        return data.lower() if self.ignore_case else data

    def found_in(self, haystack: bytes) -> bool:
        return not self._raw or any(needle in haystack for needle in self._raw)

    def trapped(self, data: bytes) -> bool:
        """Whether `data` holds a non-ASCII letter ignore-case matching could equate with a
        needle letter, so a missing needle does not rule the file out."""
        return (
            bool(self._raw_traps)
            and not data.isascii()
            and any(trap in data for trap in self._raw_traps)
        )

    def may_match(self, data: bytes) -> bool:
        """Whether raw file bytes could contain a match."""
        return self.found_in(self.haystack(data)) or self.trapped(data)

    def may_match_text(self, text: str) -> bool:
        if not self.needles:
            return True
        if not self.ignore_case:
            return any(needle in text for needle in self.needles)
        lowered = text.lower()
        if any(needle in lowered for needle in self.needles):
            return True
        return not text.isascii() and any(trap in text for trap in self._traps)


def build_prefilter(pattern: str, *, ignore_case: bool) -> Prefilter:
    """Derive the required literal(s) of `pattern`; anything unclear gives no prefilter."""
    for flags in _FLAGS.findall(pattern):
        if "x" in flags:
            return Prefilter()
        if "i" in flags:
            ignore_case = True
    branches = _split_top_level(pattern)
    if branches is None:
        return Prefilter()
    needles: list[str] = []
    for branch in branches:
        runs = _literal_runs(branch)
        if runs is None:
            return Prefilter()
        if ignore_case:
            runs = [piece for run in runs for piece in _ascii_pieces(run)]
        runs = [run for run in runs if "\ufffd" not in run]
        if not runs:
            return Prefilter()
        best = max(runs, key=len)
        if len(best.encode()) < 2 and len(branches) == 1:
            return Prefilter()
        needles.append(best)
    return Prefilter(needles, ignore_case=ignore_case)


def _ascii_pieces(run: str) -> list[str]:
    """Split a literal at non-ASCII characters (their case folding is not byte-simple)."""
    pieces: list[str] = []
    current = ""
    for ch in run:
        if ch.isascii():
            current += ch
        else:
            if current:
                pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


def _skip_class(pattern: str, i: int) -> int | None:
    """Index just past the `]` closing the class that starts at `i` (a `[`)."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 2
            continue
        if pattern[j] == "]":
            return j + 1
        j += 1
    return None


def _skip_group(pattern: str, i: int) -> int | None:
    """Index just past the `)` closing the group that starts at `i` (a `(`)."""
    depth = 0
    j = i
    while j < len(pattern):
        ch = pattern[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "[":
            end = _skip_class(pattern, j)
            if end is None:
                return None
            j = end
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return None


def _split_top_level(pattern: str) -> list[str] | None:
    branches: list[str] = []
    start = 0
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            end = _skip_class(pattern, i)
        elif ch == "(":
            end = _skip_group(pattern, i)
        else:
            if ch == "|":
                branches.append(pattern[start:i])
                start = i + 1
            i += 1
            continue
        if end is None:
            return None
        i = end
    branches.append(pattern[start:])
    return branches


def _escape_end(branch: str, i: int) -> int:
    """Index past an escape like `\\d`, `\\x41`, `\\N{...}` or `\\12` starting at `i`."""
    kind = branch[i + 1]
    if kind in _ESCAPE_WIDTH:
        return i + 2 + _ESCAPE_WIDTH[kind]
    if kind == "N":
        close = branch.find("}", i)
        return len(branch) if close == -1 else close + 1
    if kind.isdigit():
        j = i + 1
        while j < len(branch) and j < i + 4 and branch[j].isdigit():
            j += 1
        return j
    return i + 2


def _literal_runs(branch: str) -> list[str] | None:
    """Maximal literal strings every match of `branch` must contain (None: can't tell)."""
    runs: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            runs.append("".join(current))
            current.clear()

    i = 0
    while i < len(branch):
        ch = branch[i]
        if ch == "\\":
            if i + 1 >= len(branch):
                return None
            nxt = branch[i + 1]
            if nxt.isascii() and (nxt.isalnum() or nxt == "_"):
                flush()
                i = _escape_end(branch, i)
                continue
            current.append(nxt)
            i += 2
        elif ch in ".^$":
            flush()
            i += 1
        elif ch in "[(":
            flush()
            end = _skip_class(branch, i) if ch == "[" else _skip_group(branch, i)
            if end is None:
                return None
            i = end
        elif ch in "*?":
            if current:
                current.pop()
            flush()
            i += 1
            if i < len(branch) and branch[i] in "?+":
                i += 1
        elif ch == "+":
            flush()
            i += 1
            if i < len(branch) and branch[i] in "?+":
                i += 1
        elif ch == "{":
            quant = _BRACE_QUANT.match(branch, i)
            if quant is None:
                flush()
                i += 1
                continue
            if current and not (quant.group(1) and int(quant.group(1)) >= 1):
                current.pop()
            flush()
            i = quant.end()
            if i < len(branch) and branch[i] in "?+":
                i += 1
        elif ch == ")":
            return None
        else:
            current.append(ch)
            i += 1
    flush()
    return runs


def starts_with_literal(pattern: str) -> bool:
    """Whether the pattern begins with literal text and has no top-level alternation.

    `re` then finds matches with its own fast literal scan, which beats searching only the
    lines that hold the prefilter's literal when matches are dense.
    """
    branches = _split_top_level(pattern)
    if branches is None or len(branches) != 1 or _FLAGS.search(pattern):
        return False
    first = pattern[:1]
    if first == "\\":
        second = pattern[1:2]
        return bool(second) and not (second.isalnum() or second == "_")
    return bool(first) and first not in ".^$*+?{}[]|()"
