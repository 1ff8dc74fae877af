"""The one regex dialect of `grep`: ripgrep's (RE2/Rust syntax, linear time).

Files on disk are searched by ripgrep, unsaved buffers and staged edits by RE2
(`google-re2`); both engines are automata without backtracking, so no pattern can take
more than linear time (`(a+)+$` included), and the same pattern means the same thing in
both. This module checks a pattern before either engine sees it, and translates it for
RE2 where the two read the same syntax differently:

- refused with a message naming the construct: look-around, back-references, atomic
  groups, possessive quantifiers, conditionals (no linear-time engine can run them; the
  model gets an actionable `is_error`, Claude Code's Grep refuses them the same way), and
  patterns over `MAX_PATTERN_CHARS`;
- unbalanced groups and classes are reported with their position, before compiling;
- for RE2: `\\d`, `\\s`, `\\w` widened to their Unicode meaning (ripgrep's default),
  `\\uXXXX`/`\\u{X}`/`\\UXXXXXXXX` written as `\\x{X}`, and `.` never matches "\\r"
  (ripgrep's `--crlf`; the text's "\\r\\n" are made "\\n" before RE2 sees it, so `$`
  matches before them as in rg). RE2's `\\b` knows only ASCII word characters:
  `uses_word_boundary` tells the caller to let ripgrep search such text instead.
"""

from __future__ import annotations

import re2

MAX_PATTERN_CHARS = 4096
"""Longer patterns are refused: no search needs one, and a huge pattern costs memory in
both engines (a 10 MB literal took 1.7 GB in Python's `re`)."""

RE2_MAX_MEM = 64 << 20
"""RE2's budget for one compiled pattern; a pattern needing more is refused (clearly)."""

DIALECT = "ripgrep's regex syntax (RE2/Rust: no look-around, no back-references)"

_WORD = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}\\p{Nl}\\x{200C}\\x{200D}"
"""Rust's Unicode `\\w` (Alphabetic, marks, decimal digits, connector punctuation,
join controls) as RE2 class members (Alphabetic approximated by letters and Nl)."""
_SPACE = (
    "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}"
    "\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
)
"""Unicode White_Space as RE2 class members (Rust's `\\s`)."""
_CLASS_MEMBERS = {"d": "\\p{Nd}", "w": _WORD, "s": _SPACE}
_OUTSIDE = {
    "d": "\\p{Nd}",
    "D": "\\P{Nd}",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
}

_UNSUPPORTED_GROUPS = (
    ("(?<=", "a look-behind `(?<=...)`"),
    ("(?<!", "a negative look-behind `(?<!...)`"),
    ("(?=", "a look-ahead `(?=...)`"),
    ("(?!", "a negative look-ahead `(?!...)`"),
    ("(?>", "an atomic group `(?>...)`"),
    ("(?(", "a conditional `(?(...)...)`"),
    ("(?P=", "a back-reference `(?P=name)`"),
    ("(?P>", "a recursive call `(?P>name)`"),
    ("(?&", "a recursive call `(?&name)`"),
)
_UNSUPPORTED_ESCAPES = {
    "k": "a back-reference `\\k<name>`",
    "g": "a back-reference `\\g{...}`",
    "A": "`\\A` (matching is per line: write `^` for a line start)",
    "z": "`\\z` (matching is per line: write `$` for a line end)",
    "Z": "`\\Z` (matching is per line: write `$` for a line end)",
    "G": "`\\G`",
    "K": "`\\K`",
    "Q": "`\\Q...\\E` quoting (escape each special character with a backslash instead)",
}
_HINTS = {
    "look": "Match the surrounding text instead (e.g. 'foo\\(' rather than 'foo(?=\\()'), or "
    "search for the plain part and narrow the results with a second search.",
    "back": "Write the repeated text out, or search for one part and then the other.",
    "other": "Rewrite it with plain groups and quantifiers.",
}


class PatternError(ValueError):
    """A pattern grep cannot run; the message is for the model (position, construct, fix)."""


def check_pattern(pattern: str) -> None:
    """Refuse patterns that are too long, use constructs without a linear-time algorithm,
    or have unbalanced groups/classes. Raises `PatternError`."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(
            f"The pattern is {len(pattern):,} characters long; grep accepts at most "
            f"{MAX_PATTERN_CHARS:,}. Search for a short, distinctive part of the text instead "
            "(then read_file around the hits)."
        )
    _Scanner(pattern).scan()


def re2_pattern(pattern: str) -> str:
    """`pattern` (already checked) rewritten so RE2 reads it as ripgrep does (see above)."""
    return "(?m)" + _Scanner(pattern).translate()


def uses_word_boundary(pattern: str) -> bool:
    """Whether `\\b`/`\\B` occur (RE2 reads them as ASCII-only; rg as Unicode)."""
    return "\\b" in pattern or "\\B" in pattern


def compile_re2(pattern: str, *, ignore_case: bool) -> re2._Regexp[str]:
    """The RE2 twin of what ripgrep runs (per line: matches never span a newline).
    Raises `PatternError` with RE2's message for what RE2 rejects."""
    options = re2.Options()
    options.never_nl = True  # like ripgrep's line-by-line search: "\n" is never matched
    options.case_sensitive = not ignore_case
    options.log_errors = False
    options.max_mem = RE2_MAX_MEM
    try:
        return re2.compile(re2_pattern(pattern), options)
    except re2.error as exc:
        raise PatternError(_invalid(pattern, _re2_message(exc))) from None


def _re2_message(exc: re2.error) -> str:
    text = str(exc.args[0] if exc.args else exc)
    if text.startswith(("b'", 'b"')):
        text = text[2:-1]
    if "pattern too large" in text:
        return (
            "the pattern compiles to more than the memory budget allows "
            "(use fewer or smaller repetitions)"
        )
    return text


def _invalid(pattern: str, problem: str, position: int | None = None) -> str:
    where = ""
    if position is not None:
        shown = pattern if len(pattern) <= 200 else pattern[:200] + "…"
        where = f" at position {position}"
        if position <= 200:
            where += f"\n  {shown}\n  {' ' * position}^"
    return (
        f"Invalid regex /{_short(pattern)}/: {problem}{where}\n"
        f"grep uses {DIALECT}. To match a character like ( ) [ ] {{ }} . * + ? | \\ "
        "literally, escape it with a backslash (e.g. 'foo\\(' or 'a\\.b')."
    )


def _short(pattern: str) -> str:
    return pattern if len(pattern) <= 200 else pattern[:200] + "…"


def _unsupported(pattern: str, construct: str, position: int, hint: str) -> PatternError:
    return PatternError(
        f"Unsupported regex /{_short(pattern)}/: {construct} at position {position}. "
        f"grep uses {DIALECT}, which runs in linear time. {_HINTS[hint]}"
    )


class _Scanner:
    """One pass over the pattern: checks it, or rewrites it for RE2."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.out: list[str] = []
        self.dot_all = "s" in _inline_flags(pattern)

    def scan(self) -> None:
        self._walk(write=False)

    def translate(self) -> str:
        self._walk(write=True)
        return "".join(self.out)

    def _walk(self, *, write: bool) -> None:
        p = self.p
        groups: list[int] = []
        i = 0
        while i < len(p):
            ch = p[i]
            if ch == "\\":
                i = self._escape(i, write, in_class=False)
                continue
            if ch == "[":
                i = self._class(i, write)
                continue
            if ch == "(":
                self._group_start(i)
                groups.append(i)
            elif ch == ")":
                if not groups:
                    raise PatternError(_invalid(p, "unbalanced parenthesis", i))
                groups.pop()
            elif ch in "*+?}" and p[i + 1 : i + 2] == "+" and i > 0:
                raise _unsupported(p, "a possessive quantifier", i, "other")
            if write:
                if ch == "." and not self.dot_all:
                    self.out.append("[^\\r\\n]")
                else:
                    self.out.append(ch)
            i += 1
        if groups:
            raise PatternError(_invalid(p, "missing ), unterminated subpattern", groups[-1]))

    def _group_start(self, i: int) -> None:
        p = self.p
        for opener, construct in _UNSUPPORTED_GROUPS:
            if p.startswith(opener, i):
                kind = "look" if "look" in construct else "back" if "back" in construct else "other"
                raise _unsupported(p, construct, i, kind)

    def _escape(self, i: int, write: bool, *, in_class: bool) -> int:
        """Handle the escape at `i` (a backslash); returns the index after it."""
        p = self.p
        if i + 1 >= len(p):
            raise PatternError(_invalid(p, "trailing backslash (escape sequence incomplete)", i))
        kind = p[i + 1]
        if kind.isdigit() and kind != "0":
            raise _unsupported(p, f"a back-reference `\\{kind}`", i, "back")
        if kind in _UNSUPPORTED_ESCAPES:
            hint = "back" if "back" in _UNSUPPORTED_ESCAPES[kind] else "other"
            raise _unsupported(p, _UNSUPPORTED_ESCAPES[kind], i, hint)
        if kind in "uU":
            return self._unicode_escape(i, write)
        if write:
            table = _CLASS_MEMBERS if in_class else _OUTSIDE
            self.out.append(table.get(kind, p[i : i + 2]))
        end = i + 2
        if kind in "pPx" and p[end : end + 1] == "{":
            close = p.find("}", end)
            end = len(p) if close == -1 else close + 1
            if write:
                self.out.append(p[i + 2 : end])
        return end

    def _unicode_escape(self, i: int, write: bool) -> int:
        """`\\u007F`, `\\u{7F}`, `\\U0000007F`, `\\U{7F}` (Rust) as RE2's `\\x{7F}`."""
        p = self.p
        if p[i + 2 : i + 3] == "{":
            close = p.find("}", i + 3)
            if close == -1:
                raise PatternError(_invalid(p, "unclosed `{` in a \\u escape", i))
            digits, end = p[i + 3 : close], close + 1
        else:
            width = 4 if p[i + 1] == "u" else 8
            digits, end = p[i + 2 : i + 2 + width], i + 2 + width
            if len(digits) != width:
                digits = ""
        if not digits or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise PatternError(_invalid(p, "invalid \\u escape (hex digits expected)", i))
        if write:
            self.out.append(f"\\x{{{digits}}}")
        return end

    def _class(self, i: int, write: bool) -> int:
        """Copy (or check) the class starting at `i`; returns the index after its `]`."""
        p = self.p
        j = self._class_head(i + 1, write)
        while j < len(p):
            ch = p[j]
            if ch == "\\":
                j = self._escape(j, write, in_class=True)
                continue
            close = p.find(":]", j + 2) if ch == "[" and p[j + 1 : j + 2] == ":" else -1
            if close != -1:  # a POSIX class, [:alpha:]
                self._emit(p[j : close + 2], write)
                j = close + 2
                continue
            self._emit(ch, write)
            if ch == "]":
                return j + 1
            j += 1
        raise PatternError(_invalid(p, "unterminated character set", i))

    def _class_head(self, j: int, write: bool) -> int:
        """`[`, a negating `^` and a leading `]` (a member); the index after them."""
        p = self.p
        self._emit("[", write)
        if p[j : j + 1] == "^":
            j += 1
            self._emit("^", write)
        if p[j : j + 1] == "]":
            j += 1
            self._emit("\\]", write)
        return j

    def _emit(self, text: str, write: bool) -> None:
        if write:
            self.out.append(text)


def _inline_flags(pattern: str) -> str:
    """Letters of every `(?flags)`/`(?flags:` group (a rough test for `s`)."""
    letters: list[str] = []
    at = pattern.find("(?")
    while at != -1:
        j = at + 2
        while j < len(pattern) and pattern[j].isalpha():
            letters.append(pattern[j])
            j += 1
        at = pattern.find("(?", at + 2)
    return "".join(letters)
