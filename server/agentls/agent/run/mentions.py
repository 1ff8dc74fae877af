"""Files the prompt names, shown to the model with the prompt as if it had read them.

Why: "fix last_n in window.py" names the file the model must read before it can edit it.
Claude Code attaches an @-mentioned file as a read_file call and its result; aider adds the
files named in the chat. A small local model otherwise edits without reading (read-before-
edit then refuses, costing a turn of a slow CPU model each time) or invents the text it
replaces. So the first request shows each named file (a workspace-relative path, or a base
name only one file has, written as a whole word) the way read_file would, and the session
counts it as read. Bounded: a few files, each within a share of the context window; the
rest is left to read_file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from agentls.agent.framework.reads import ReadLog
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.secrets import Redactor
from agentls.workspace.textio import number_line, split_lines

MAX_FILES = 4
"""Files shown at most (the first ones the prompt names)."""

EDITOR_CONTEXT = "The user's current file is `"
"""How an editor's context starts a prompt (`agentls.lsp.actions.prompt_with_context`): the
current file and the selection are the editor's words, not files the user named."""


def user_words(prompt: str) -> str:
    """`prompt` without the editor's context in front of it: a selection stays a selection,
    its whole file is not shown as read."""
    if not prompt.startswith(EDITOR_CONTEXT):
        return prompt
    first, _, rest = prompt.partition("\n")
    if "; they selected" in first:
        _, fence, after = rest.partition("\n```\n\n")
        return after if fence else ""
    return rest.removeprefix("\n")


def named_files(prompt: str, files: Iterable[str]) -> list[str]:
    """The `files` (workspace-relative, `/`-separated) the prompt names, in prompt order: by
    their path, or by a base name no other file shares. A name counts as a whole word: not
    inside a longer name or path (`app.py` is not named by `myapp.py` or `src/app.py`)."""
    files = list(files)
    base_count: dict[str, int] = {}
    for file in files:
        base = file.rsplit("/", 1)[-1]
        base_count[base] = base_count.get(base, 0) + 1
    found: list[tuple[int, str]] = []
    for file in files:
        base = file.rsplit("/", 1)[-1]
        names = [file] + ([base] if base != file and base_count[base] == 1 else [])
        at = min((_find_word(prompt, name) for name in names), default=-1, key=_first)
        if at >= 0:
            found.append((at, file))
    return [file for _, file in sorted(found)]


def _first(at: int) -> int:
    return at if at >= 0 else 1 << 30


def _find_word(text: str, name: str) -> int:
    match = re.search(r"(?<![\w./\\-])" + re.escape(name) + r"(?![\w/\\-]|\.\w)", text)
    return match.start() if match else -1


def shown_as_read(
    prompt: str,
    workspace: Workspace,
    changes: ChangeSet,
    reads: ReadLog,
    budget: int,
    readable: Callable[[Path], bool],
    redactor: Redactor,
    listings: bool = False,
) -> str:
    """The named files as read_file results ("" when the prompt names none that fit in
    `budget` characters); each one shown is recorded in `reads`. A file that holds one of
    the agent's credentials is left out: read_file's result would be withheld and redacted
    by the pipeline, and this text does not pass through it.

    `listings`: show each file as a whole-file listing (its path, then its text in a fenced
    block), the form the model may answer in (`agentls.agent.run.file_listings`): a small
    model copies the form it was shown."""
    files = [p for p in workspace.view(changes).file_strs(None) if readable(Path(p))]
    by_name = {workspace.display(Path(p)): Path(p) for p in files}
    parts: list[str] = []
    used = 0
    texts: dict[str, str] = {}
    for name in named_files(user_words(prompt), by_name)[:MAX_FILES]:
        try:
            texts[name] = workspace.load(by_name[name], changes).text
        except Exception:  # binary, unreadable, too large: read_file will say why
            continue
    if listings:
        texts |= _referenced(texts, by_name, workspace, changes)
    for name, text in texts.items():
        path = by_name[name]
        if redactor.contains(text):
            continue
        shown = _as_listing(name, text) if listings else _as_read(name, text)
        if used + len(shown) > budget:
            continue
        reads.record(path, text)
        parts.append(shown)
        used += len(shown)
    if not parts:
        return ""
    if listings:
        return "\n\n".join([LISTINGS_HEAD, *parts])
    return "\n".join(["<system-reminder>", *parts, "</system-reminder>"])


LISTINGS_HEAD = "The files named in the request (and the files they use), as they are now:"


def _referenced(
    texts: dict[str, str], by_name: dict[str, Path], workspace: Workspace, changes: ChangeSet
) -> dict[str, str]:
    """Files the shown ones use, by module name: a file whose name without its extension
    (`config` for config.py) is a whole word in a shown file's text (`from config import
    DEFAULT_PORT`). Why: "which port does start() in server.py use" is answered in
    config.py; aider is given every file of a small task, and a small model seldom reads
    the file it needs. One hop, within `MAX_FILES` in all; the budget still applies."""
    found: dict[str, str] = {}
    for name, path in by_name.items():
        if len(texts) + len(found) >= MAX_FILES:
            break
        stem = path.stem
        if name in texts or len(stem) < 3:
            continue
        word = re.compile(r"(?<![\w.])" + re.escape(stem) + r"(?!\w)")
        if not any(word.search(text) for text in texts.values()):
            continue
        try:
            found[name] = workspace.load(path, changes).text
        except Exception:
            continue
    return found


def _as_listing(name: str, text: str) -> str:
    fence = "````" if "```" in text else "```"
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"{name}\n{fence}\n{body}{fence}"


def _as_read(name: str, text: str) -> str:
    lines = split_lines(text)
    body = [number_line(n, line) for n, line in enumerate(lines, start=1)]
    footer = f"[lines 1-{len(lines)} of {len(lines)}]" if lines else f"[{name} is empty (0 lines)]"
    call = json.dumps({"path": name})
    return "\n".join(
        [
            f"Called the read_file tool with the following input: {call}",
            "Result of calling the read_file tool:",
            *body,
            footer,
        ]
    )
