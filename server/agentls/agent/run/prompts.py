"""The system prompt, including a "using your tools" section modelled on Claude Code's.

Built once per session so it is byte-identical on every turn (it sits in the cached prefix).
"""

from __future__ import annotations

import datetime
import platform
from collections.abc import Collection, Sequence
from pathlib import Path

from agentls.agent.protocol.messages import TextBlockParam, cache_control

INTRO = """You are agentls, a coding agent working inside the user's editor through the Language \
Server Protocol. You help with software engineering tasks: fixing bugs, adding features, \
refactoring, explaining code. Your file changes are delivered to the editor as workspace edits \
the user can preview, accept, reject and undo, so make focused, minimal changes and never \
touch files unrelated to the task. Be concise: the user reads your answer in an editor panel."""

DEDICATED_TOOLS = (
    ("read_file", "read files with read_file (not cat/head/tail)"),
    ("edit_file", "edit with edit_file (not sed/awk)"),
    ("write_file", "create files with write_file"),
    ("list_files", "find files with list_files (not find/ls)"),
    ("grep", "search contents with grep (not grep/rg)"),
    ("search_symbols", "find definitions with search_symbols"),
)
"""Each clause of the "prefer the dedicated tools" line, kept only when its tool is offered."""


def using_your_tools(offered: Collection[str] | None = None) -> str:
    """The "Using your tools" section, naming only tools in `offered` (None: all)."""

    def has(name: str) -> bool:
        return offered is None or name in offered

    clauses = [text for name, text in DEDICATED_TOOLS if has(name)]
    lines = ["# Using your tools"]
    if clauses:
        lines.append("- Prefer the dedicated tools over a shell: " + ", ".join(clauses) + ".")
    if has("read_file") and has("edit_file"):
        lines.append(
            "- Read a file with read_file before editing it: edit_file refuses files not read "
            "in this session, and old_string must be copied exactly from what read_file shows."
        )
    lines += [
        "- Tools read the editor's view of the workspace, including unsaved buffers and your "
        "own staged edits, so re-read a file after changing it instead of assuming its contents.",
        "- When calls are independent of each other, make them all in the same turn: they run "
        "in parallel. Make dependent calls one after another.",
    ]
    checks = [name for name in ("lint", "run_tests") if has(name)]
    if checks:
        lines.append(f"- Verify your work: run {' and '.join(checks)} after editing.")
    lines += [
        "- A failed call returns an error that says what went wrong; read it and adjust instead "
        "of repeating the same call.",
        "- If the user denies a tool call, do not repeat the same call. Think about why it was "
        "denied and change your approach, or ask the user.",
        "- Never claim to have changed or run something you have not.",
    ]
    return "\n".join(lines)


USING_YOUR_TOOLS = using_your_tools()

FILE_LISTINGS = """# Changing files
To change a file, reply with a file listing instead of a tool call: the file's path alone \
on one line, then the entire new content of the file in a fenced code block. It is applied \
like write_file. For example:

path/of/the/file.py
```
the complete new file, every line
```

A listing replaces the whole file: keep every line you do not change, and never shorten \
the code with "..." or comments like "rest of the code". Use edit_file only for a file too \
long to repeat whole."""
"""For a small local model (compact profile, text tool calls): aider's "whole" edit format,
which such models get right far more often than an exact-substring edit
(`agentls.agent.run.file_listings`)."""


def environment_section(roots: Sequence[Path], today: datetime.date | None = None) -> str:
    """What varies by folder and day: the workspace roots, the platform, the date."""
    day = (today or datetime.date.today()).isoformat()
    return "\n".join(
        [
            "# Environment",
            *(f"- Workspace root: {root}" for root in roots),
            f"- Platform: {platform.system()}",
            f"- Today's date: {day}",
        ]
    )


def build_system_prompt(
    roots: Sequence[Path],
    extra_instructions: str = "",
    today: datetime.date | None = None,
    intro: str = INTRO,
    skills: str = "",
    offered: Collection[str] | None = None,
    environment: bool = True,
    listings: bool = False,
    tools_section: bool = True,
) -> list[TextBlockParam]:
    """System blocks; the last carries the cache breakpoint. `intro`: who the agent is (a
    sub-agent has its own); `offered`: the tool names the prompt may mention;
    `environment=False` leaves the environment out (the caller sends it with the messages);
    `listings`: replies may rewrite a file as a whole-file listing (`FILE_LISTINGS`);
    `tools_section=False` leaves out "Using your tools" (a request that offers no tools).

    Stable parts first, what varies by folder and day last (the environment), so a new
    workspace or a new day re-reads as little of the prompt as possible.
    """
    sections = [intro, using_your_tools(offered)] if tools_section else [intro]
    if listings:
        sections.append(FILE_LISTINGS)
    if intro == INTRO:  # the main agent's prompt; sub-agents keep their own voice
        from agentls.agent.claude.output_styles import output_style

        style = output_style(roots)
        if style is not None:
            sections.append(style.section())
    if skills:
        sections.append(skills)  # `SkillCatalog.prompt_section()`, fixed for the session
    if extra_instructions.strip():
        sections.append("# Project instructions\n" + extra_instructions.strip())
    if environment:
        sections.append(environment_section(roots, today))
    return [{"type": "text", "text": "\n\n".join(sections), "cache_control": cache_control()}]


MAX_DEFERRED_HINTS = 100


def deferred_tools_reminder(hints: Sequence[tuple[str, str]], *, server_side: bool) -> str:
    """The system reminder that names the deferred tools (name + one-line hint each).

    Sent as a second system block, after the cached one: it depends on the run's pool (mode,
    MCP servers), so keeping it out of the first block leaves the main prompt's cache entry
    intact when it changes, and it is byte-stable across the turns of a run because the pool is.
    """
    how = (
        "Search for them with the tool search tool; matching tools become callable."
        if server_side
        else 'Load one with tool_search (query "select:NAME", or keywords) before calling it; '
        "its full definition is then added to your tools."
    )
    if len(hints) > MAX_DEFERRED_HINTS:
        # Hundreds of hints would cost what deferral saves: names only, search for the rest.
        hints = [(name, "") for name, _ in hints]
    lines = [f"- {name}: {hint}" if hint else f"- {name}" for name, hint in hints]
    return "\n".join(
        [
            "<system-reminder>",
            "These deferred tools are available but their schemas are not loaded yet. " + how,
            *lines,
            "</system-reminder>",
        ]
    )


def search_summary(query: object) -> str:
    """The progress line of one server-side web search."""
    return (
        f"Searching the web: {query}" if isinstance(query, str) and query else "Searching the web"
    )
