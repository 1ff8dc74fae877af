"""What a search pattern needs before it runs: compiling, required literals, line locality.

Python `re` is the one regex dialect for every file (disk, buffer or staged), so results
never depend on where a file's text lives. Speed comes from analysing the pattern once:
the literal text every match must contain lets a file be ruled out with a C-speed
substring test on its raw bytes, and, since matches never span lines, the regex can run
on just the lines that contain that literal. Most source files are pure ASCII, and on ASCII
a bytes twin of the regex matches exactly where the text regex does, so such files are
searched without decoding them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_CASE_FOLD_TRAPS = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
"""ASCII letters that `re.IGNORECASE` also matches against non-ASCII letters (İ ı K ſ). An
ASCII-lowercased haystack cannot show those, so a file that has them is never ruled out."""

_TRAP_LETTER = {trap: letter for letter, traps in _CASE_FOLD_TRAPS.items() for trap in traps}

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


def compile_ascii_regex(pattern: str, *, ignore_case: bool) -> re.Pattern[bytes] | None:
    """The bytes twin of `compile_regex`, for files that are pure ASCII.

    On ASCII input it matches exactly where the text regex matches the decoded text (the
    Unicode-aware `\\w`, `\\d`, `\\b` and case folding agree with their ASCII meanings
    there), so such files need no decoding. The one ASCII difference, text `\\s` also
    matching the separators \\x1c-\\x1f, is rewritten in. None when the pattern cannot have
    a twin: non-ASCII, `\\u`/`\\N{}` escapes or `(?u)` (bytes patterns refuse them), or a
    `\\S` inside a class, or the ASCII flag (text `\\s` then needs no widening; rare enough
    to leave to the text regex).
    """
    if not pattern.isascii() or any("a" in flags for flags in _FLAGS.findall(pattern)):
        return None
    spaced = _ascii_spaces(_crlf_dollar(pattern))
    if spaced is None:
        return None
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        return re.compile(spaced.encode("ascii"), flags)
    except re.error:
        return None


_STR_SPACES = "\\x1c-\\x1f"
"""ASCII characters text `\\s` matches besides bytes `\\s` (str.isspace() is true for them)."""


def _ascii_spaces(pattern: str) -> str | None:
    """`pattern` with `\\s`/`\\S` widened to text `\\s`; None for a `\\S` in a class."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            escape = pattern[i : i + 2]
            out.append(
                f"[\\s{_STR_SPACES}]"
                if escape == "\\s"
                else f"[^\\s{_STR_SPACES}]"
                if escape == "\\S"
                else escape
            )
            i += 2
        elif ch == "[":
            end = _skip_class(pattern, i)
            if end is None:
                return None
            members = _class_spaces(pattern[i:end])
            if members is None:
                return None
            out.append(members)
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _class_spaces(klass: str) -> str | None:
    """A `[...]` class with `\\s` widened; None if it holds `\\S` (not expressible)."""
    out: list[str] = []
    i = 0
    while i < len(klass):
        if klass[i] == "\\":
            escape = klass[i : i + 2]
            if escape == "\\S":
                return None
            out.append(f"\\s{_STR_SPACES}" if escape == "\\s" else escape)
            i += 2
        else:
            out.append(klass[i])
            i += 1
    return "".join(out)


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
    `ignore_case` the needles are ASCII and the haystack is lowercased first. `anchored`:
    every match starts where a needle occurs (see `_starts_with_needle`).
    """

    def __init__(
        self, needles: Sequence[str] = (), *, ignore_case: bool = False, anchored: bool = False
    ) -> None:
        self.ignore_case = ignore_case
        self.anchored = anchored and bool(needles)
        self.needles = tuple(dict.fromkeys(n.lower() if ignore_case else n for n in needles))
        self._raw = tuple(n.encode("utf-8") for n in self.needles)
        traps = {t for n in self.needles for ch in n for t in _CASE_FOLD_TRAPS.get(ch, "")}
        self._traps = tuple(sorted(traps)) if ignore_case else ()
        self._folds = tuple((t.encode("utf-8"), _TRAP_LETTER[t].encode()) for t in self._traps)
        self._leads = tuple(sorted({fold[:1] for fold, _ in self._folds}))
        # Each needle's longest run without a letter that has a trap: a match that needs
        # folding still shows it as is, so its absence rules folding out cheaply.
        self._plain = tuple(
            max(re.split(f"[{''.join(_CASE_FOLD_TRAPS)}]", n), key=len).encode()
            for n in self.needles
        )

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
        if len(self._raw) == 1:  # the usual case, without a generator per file
            return self._raw[0] in haystack
        return not self._raw or any(needle in haystack for needle in self._raw)

    def folding(self, haystack: bytes) -> bool:
        """Whether the bytes hold a non-ASCII letter that ignore-case matching equates with
        a needle letter (İ ı K ſ), so a line can match without showing a needle."""
        if not self._leads:
            return False
        return any(lead in haystack for lead in self._leads) and any(
            fold in haystack for fold, _ in self._folds
        )

    def trapped(self, haystack: bytes) -> bool:
        """Whether a needle shows once those letters are folded to ASCII, for a file
        `found_in` rules out (such a file is then searched whole).

        Folding changes offsets, which is fine for a yes/no answer. Without it every file
        holding such a letter (any Turkish text, for an "i") would be searched whole.
        """
        if not self._leads or not any(lead in haystack for lead in self._leads):
            return False  # (a one-byte `in` is a memchr: fast even when absent)
        if not any(plain in haystack for plain in self._plain):
            return False
        folded = haystack
        for fold, letter in self._folds:
            folded = folded.replace(fold, letter)
        return folded is not haystack and self.found_in(folded)

    def may_match(self, data: bytes) -> bool:
        """Whether raw file bytes could contain a match."""
        haystack = self.haystack(data)
        return self.found_in(haystack) or self.trapped(haystack)

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
    anchored = True
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
        anchored = anchored and _starts_with_needle(branch, best, ignore_case)
    return Prefilter(needles, ignore_case=ignore_case, anchored=anchored)


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


def is_line_local(pattern: str) -> bool:
    """Whether the regex answers the same on a line cut out of its text as on the line in
    place (searched between the line's bounds).

    Only a few constructs look outside those bounds: `\\A` (the text's start), a
    lookbehind, and a flag group that could switch `^` back to "text start" (`(?-m:...)`).
    The test is textual: an escaped look-alike only loses the faster path.
    """
    return not any(marker in pattern for marker in ("\\A", "(?<", "(?-"))


def literal_prefix(pattern: str) -> str:
    """The literal text every match of a case-sensitive pattern starts with ("" if none).

    The search jumps between its occurrences with a substring find, which scans text about
    twice as fast as `re` looking for the same literal.
    """
    return _leading_text(pattern, 0) if starts_with_literal(pattern) else ""


def _leading_text(branch: str, i: int) -> str:
    """The literal text at `branch[i:]` that every match of it starts with."""
    text: list[str] = []
    while i < len(branch):
        ch = branch[i]
        if ch == "\\":
            escaped = branch[i + 1 : i + 2]
            if not escaped or escaped.isalnum() or escaped == "_":
                break
            text.append(escaped)
            i += 2
        elif ch in ".^$*+?{}[]|()":
            break
        else:
            text.append(ch)
            i += 1
    if branch[i : i + 1] in ("*", "?", "{"):
        text = text[:-1]  # the last character may be optional
    return "".join(text)


def _starts_with_needle(branch: str, needle: str, ignore_case: bool) -> bool:
    """Whether every match of `branch` starts with `needle`, after zero-width `^`, `\\b`
    or `\\B` (so a match can be tried right where the needle occurs)."""
    i = 0
    while branch.startswith(("^", "\\b", "\\B"), i):
        i += 1 if branch[i] == "^" else 2
    lead = _leading_text(branch, i)[: len(needle)]
    if ignore_case:
        return lead.isascii() and lead.lower() == needle.lower()
    return lead == needle


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
