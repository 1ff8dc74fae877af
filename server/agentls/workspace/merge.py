"""Line-level merging of the agent's change with the user's: what every host delivers with.

A staged change was computed against the text the agent read. When the user changed the
file since (typed in the buffer, saved, pulled), the agent's hunks are moved onto the
user's text if no hunk of one shares a line with a hunk of the other (`rebase`); else the host
leaves the file out as a conflict and the user's text is never overwritten. The LSP host
builds `WorkspaceEdit`s with these (`agentls.lsp.edits`); the ACP host writes whole files.
"""

from __future__ import annotations

import difflib
import re

__all__ = ["line_hunks", "lines_with_endings", "match_line_endings", "overlaps", "rebase"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LONE_LF = re.compile(r"(?<!\r)\n")


def lines_with_endings(text: str) -> list[str]:
    """Lines with their endings, split the way LSP counts lines (\\n, \\r\\n, \\r).

    Joining the result gives `text` back, so hunks can be moved and re-joined losslessly.
    Not `textio.split_lines`, which drops the endings and splits on "\\n" only (as git counts).
    """
    return _LINE.findall(text)


def match_line_endings(original: str | None, new: str) -> str:
    """Keep a CRLF file CRLF when the agent wrote plain LF lines into it."""
    if original is None or "\r\n" not in original:
        return new
    if original.count("\n") != original.count("\r\n"):
        return new  # the file itself mixes endings: leave the agent's text alone
    return _LONE_LF.sub("\r\n", new)


def line_hunks(old: str, new: str) -> list[tuple[int, int, list[str]]]:
    """Changed line ranges of `old` (start, end) and their replacement lines."""
    a, b = lines_with_endings(old), lines_with_endings(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(i1, i2, b[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two line ranges `[start, end)` of the same text share a line.

    Only shared lines count: a change to line 10 and one to line 11 do not overlap. An
    empty range (an insertion before a line) overlaps a range only strictly inside it, and
    another insertion only at the same point (their order would be a guess).
    """
    (a1, a2), (b1, b2) = a, b
    if a1 == a2 and b1 == b2:
        return a1 == b1
    if a1 == a2:
        return b1 < a1 < b2
    if b1 == b2:
        return a1 < b1 < a2
    return a1 < b2 and b1 < a2


def rebase(base: str, ours: str, theirs: str) -> str | None:
    """Apply the base→ours line changes onto theirs; None when they overlap theirs' changes.

    Only overlapping lines conflict: the agent's change to line 10 and the user's to line
    11 both apply. The same change made on both sides applies once.
    """
    user = line_hunks(base, theirs)
    mine = [h for h in line_hunks(base, ours) if h not in user]
    for i1, i2, _ in mine:
        for k1, k2, _ in user:
            if overlaps((i1, i2), (k1, k2)):
                return None
    lines = lines_with_endings(base)
    result: list[str] = []
    cursor = 0
    for start, end, replacement in sorted([*mine, *user], key=lambda h: (h[0], h[1])):
        result.extend(lines[cursor:start])
        result.extend(replacement)
        cursor = end
    result.extend(lines[cursor:])
    return "".join(result)
