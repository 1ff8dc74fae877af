"""What ACP's review tool call shows: each file's diff, or, for a file with several hunks,
each hunk under a line with its number, which `/accept N` and `/reject N <reason>` take
(`agentls.acp.hunk_commands`; the numbers of the session's staged diff, as
`agentls.status` lists them, see `agentls.workspace.hunks`)."""

from __future__ import annotations

import re
from pathlib import Path

from acp.schema import ContentToolCallContent, FileEditToolCallContent, TextContentBlock

from agentls.agent.persistence.staged import relative_to
from agentls.agent.protocol.results import FileCheckPayload
from agentls.workspace.changes import Change
from agentls.workspace.hunks import file_hunks

_NUMBERS = re.compile(r"^\s*((?:\d+\s*,?\s*)+)(.*)$", re.DOTALL)


def parse(argument: str) -> tuple[list[int], str | None]:
    """`"2, 3 too risky"` → ([2, 3], "too risky"); no leading numbers → ([], None)."""
    found = _NUMBERS.match(argument)
    if found is None:
        return [], None
    ids = [int(n) for n in re.findall(r"\d+", found.group(1))]
    reason = found.group(2).strip()
    return ids, reason or None


def diff_of(change: Change) -> FileEditToolCallContent:
    """A staged change as ACP diff content (a deletion's new text is empty)."""
    new = change.new_text
    if new is None and change.kind == "rename":
        new = change.original_text
    return FileEditToolCallContent(
        type="diff", path=str(change.path), old_text=change.original_text, new_text=new or ""
    )


ReviewContent = FileEditToolCallContent | ContentToolCallContent


def review_content(entries: list[Change], roots: list[Path]) -> list[ReviewContent]:
    """The review tool call's content: a file with one hunk as its whole diff; a file with
    several, hunk by hunk, each under a line naming its number (for `/accept N`)."""
    relative = relative_to(roots)
    content: list[ReviewContent] = []
    for entry in file_hunks(entries):
        if len(entry.hunks) == 1:
            content.append(diff_of(entry.change))
            continue
        for hunk in entry.hunks:
            content.append(_label(f"Hunk {hunk.id}: {relative(hunk.path)} ({hunk.where()})"))
            content.append(
                FileEditToolCallContent(
                    type="diff",
                    path=str(hunk.path),
                    old_text="".join(hunk.old_lines),
                    new_text="".join(hunk.new_lines),
                )
            )
    return content


def _label(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def checks_content(checks: list[FileCheckPayload], roots: list[Path]) -> ContentToolCallContent:
    """The checks before review, one line per file ("b.py: 1 new error: b.py:3 …")."""
    relative = relative_to(roots)
    lines = [f"{relative(Path(c['path']))}: {c['summary']}" for c in checks]
    return _label("Checks before review:\n" + "\n".join(lines))


def hunk_hint(entries: list[Change]) -> str:
    """A title suffix saying hunks can be decided one by one, when a file has several."""
    if all(len(entry.hunks) == 1 for entry in file_hunks(entries)):
        return ""
    return " — or keep them staged and decide per hunk: /accept N…, /reject N… <reason>"
