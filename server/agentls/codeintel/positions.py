"""Turning the model's position (`line` + `symbol`/`occurrence`, or `character`) into a
precise one, with errors that say what is on that line.

Models count columns badly, so the tools take the identifier as written on a 1-based line
(like `read_file` shows it); `occurrence` picks the n-th one. `character` (1-based, code
points) is the alternative for what is not an identifier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentls.codeintel.model import Pos
from agentls.errors import ToolError
from agentls.workspace.textio import split_lines

_IDENTIFIER = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")
_SHOWN_IDENTIFIERS = 12


@dataclass(frozen=True)
class Target:
    """Where a query points: the position and the identifier there ("" if none)."""

    pos: Pos
    name: str
    line_text: str

    @property
    def line(self) -> int:
        """1-based, as the model counts."""
        return self.pos.line + 1


def _word(symbol: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w$])" + re.escape(symbol) + r"(?![\w$])")


def identifiers_on(line_text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0) for m in _IDENTIFIER.finditer(line_text)))


def identifier_at(line_text: str, column: int) -> str:
    """The identifier at (or just before) a 0-based column, "" when there is none."""
    for match in _IDENTIFIER.finditer(line_text):
        if match.start() <= column <= match.end():
            return match.group(0)
    return ""


def _clean(symbol: str) -> str:
    """What the model meant: `obj.save()` → `save` when the whole text is not on the line."""
    text = symbol.strip()
    if text.endswith("()"):
        text = text[:-2]
    return text


def locate(
    text: str,
    display: str,
    line: int,
    symbol: str | None,
    character: int | None,
    occurrence: int | None,
) -> Target:
    """The position a tool call means; `ToolError` (saying what to do) when it is not there."""
    lines = split_lines(text)
    if line < 1 or line > len(lines):
        raise ToolError(
            f"Line {line} is past the end of {display}, which has {len(lines)} lines. Read the "
            "file (read_file) and give the line number it shows for the symbol."
        )
    line_text = lines[line - 1]
    if symbol is not None and symbol.strip():
        return _by_symbol(line_text, display, line, _clean(symbol), character, occurrence)
    if character is not None:
        return _by_character(line_text, display, line, character)
    raise ToolError(
        f"Say which symbol on line {line} of {display} you mean: give `symbol` (one of "
        f"{_listing(line_text)}) or `character` (1-based column)."
    )


def _by_symbol(
    line_text: str,
    display: str,
    line: int,
    symbol: str,
    character: int | None,
    occurrence: int | None,
) -> Target:
    starts = [m.start() for m in _word(symbol).finditer(line_text)]
    name = symbol
    if "." in symbol:  # `self.save` or `models.Model`: the last part is meant
        name = symbol.rsplit(".", 1)[1]
        offset = len(symbol) - len(name)
        starts = [s + offset for s in starts] or [
            m.start() for m in _word(name).finditer(line_text)
        ]
    if not starts:
        raise ToolError(
            f"`{symbol}` is not on line {line} of {display}. That line is:\n"
            f"{line:>6}\t{line_text.strip()[:200]}\nIdentifiers on it: {_listing(line_text)}. "
            "Give one of them as `symbol`, or check the line number with read_file."
        )
    if character is not None:
        for start in starts:
            if start <= character - 1 <= start + len(name):
                return Target(Pos(line - 1, start), name, line_text)
    wanted = occurrence or 1
    if wanted < 1 or wanted > len(starts):
        raise ToolError(
            f"`{name}` occurs {len(starts)} time(s) on line {line} of {display}; "
            f"`occurrence` must be between 1 and {len(starts)}."
        )
    return Target(Pos(line - 1, starts[wanted - 1]), name, line_text)


def _by_character(line_text: str, display: str, line: int, character: int) -> Target:
    if character < 1 or character > len(line_text) + 1:
        raise ToolError(
            f"Character {character} is outside line {line} of {display} (it has "
            f"{len(line_text)} characters; columns are 1-based). Prefer `symbol`: one of "
            f"{_listing(line_text)}."
        )
    column = character - 1
    return Target(Pos(line - 1, column), identifier_at(line_text, column), line_text)


def _listing(line_text: str) -> str:
    names = identifiers_on(line_text)
    if not names:
        return "none: the line has no identifiers"
    shown = ", ".join(f"`{n}`" for n in names[:_SHOWN_IDENTIFIERS])
    more = len(names) - _SHOWN_IDENTIFIERS
    return shown + (f" and {more} more" if more > 0 else "")
