"""Context management: token estimates, compaction and stubbing of old tool results.

**Compaction** replaces the older part of a session's history by one user message that
holds, in this order: the project's instruction files re-read from disk (`AGENTS.md`,
`CLAUDE.md`, `.agentls/instructions.md` in each workspace root), the list of staged edits,
and a structured summary (task, decisions, files touched, open todos) written by the model in
a separate request without tools. The last `keep_turns` assistant turns follow verbatim. The
cut is always made just before an assistant message, so a `tool_use` and its `tool_result`
(which lives in the next user message) are either both kept or both summarised.

**Stubbing** old tool results happens only when a request is built (the session's history
and the transcript keep the full text). It is deliberately step-wise, not sliding: the
session keeps a *stub boundary* (an assistant-turn count, persisted with the state) and
results before it are stubbed. The boundary moves to "N turns ago" only when the unstubbed
part has grown to N + N/2 turns, so the bytes of earlier messages change once every N/2 turns
instead of on every turn. Each move costs one prompt-cache miss from the boundary on; a
sliding window would cost one on every turn, which is more than the stubbing saves.
Compaction resets the boundary (the kept turns are recent by construction).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.agent.framework.registry import TOOL_SEARCH_NAME
from agentls.agent.protocol.messages import (
    PINNED_TAG,
    ContentBlockParam,
    History,
    MessageParam,
    TextBlockParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    blocks_of,
    text_block,
    user_message,
)
from agentls.workspace import ChangeSet

if TYPE_CHECKING:
    from agentls.agent.protocol.results import CompactionPayload

DEFAULT_CONTEXT_WINDOW = 200_000
CONTEXT_WINDOWS: dict[str, int] = {"claude-": DEFAULT_CONTEXT_WINDOW}
"""Model prefix → context window in tokens (longest prefix wins); override per session with
`AgentSettings.context_window` / `AGENTLS_CONTEXT_WINDOW` (e.g. for a 1M-token beta or a
local model with a small window)."""

CHARS_PER_TOKEN = 3.5
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".agentls/instructions.md")
MAX_INSTRUCTION_CHARS = 40_000
SUMMARY_INPUT_SHARE = 0.5
"""Share of the context window the summarisation request may use for the rendered history."""
RENDERED_RESULT_CHARS = 2_000
"""Each tool result is cut to this many characters when rendered for the summariser."""
STUB_PREVIEW_CHARS = 200


class CompactionError(Exception):
    """Compaction was not possible (nothing to summarise, or the summary request failed)."""


def context_window_for(model: str, override: int | None = None) -> int:
    if override:
        return override
    name = model.lower()
    best = max((p for p in CONTEXT_WINDOWS if name.startswith(p)), key=len, default=None)
    return CONTEXT_WINDOWS[best] if best is not None else DEFAULT_CONTEXT_WINDOW


def estimate_tokens(value: object) -> int:
    """Characters of the JSON form / 3.5: a rough, slightly pessimistic count for Claude."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


@dataclass
class TokenEstimator:
    """Estimates calibrated by the last real count: `ratio` = real tokens / raw estimate."""

    ratio: float = 1.0

    def estimate(self, payload: object) -> int:
        return max(1, round(estimate_tokens(payload) * self.ratio))

    def observe(self, payload: object, actual: int) -> None:
        raw = estimate_tokens(payload)
        if actual > 0 and raw > 0:
            # clamp: a cache-only or bogus figure must not make the estimate useless
            self.ratio = min(4.0, max(0.25, actual / raw))


# --- instruction files and staged edits ----------------------------------------------------


def load_instruction_files(roots: Sequence[Path]) -> list[tuple[Path, str]]:
    """The memory files of a session's start, in order (`agentls.agent.run.memory`: the
    user's `~/.claude/CLAUDE.md`, then per root `AGENTS.md`, `CLAUDE.md`,
    `.claude/CLAUDE.md`, `CLAUDE.local.md`, `.agentls/instructions.md` and
    `.claude/rules/*.md` without `paths:`, with their `@path` imports)."""
    from agentls.agent.run.memory import memory_files

    found: list[tuple[Path, str]] = []
    for file in memory_files(roots):
        text = file.text
        if len(text) > MAX_INSTRUCTION_CHARS:
            text = text[:MAX_INSTRUCTION_CHARS] + "\n[… truncated]"
        found.append((file.path, text))
    return found


def instructions_block(files: Sequence[tuple[Path, str]]) -> TextBlockParam | None:
    if not files:
        return None
    parts = [
        f'<system-reminder {PINNED_TAG}="instructions">',
        "Project instructions from the workspace's instruction files. Follow them; they "
        "take precedence over your defaults.",
    ]
    for path, text in files:
        parts.append(f"\n## {path}\n{text}")
    parts.append("</system-reminder>")
    return text_block("\n".join(parts))


def staged_edits_block(changes: ChangeSet) -> TextBlockParam | None:
    entries = changes.entries()
    if not entries:
        return None
    lines = [
        f'<system-reminder {PINNED_TAG}="staged-edits">',
        "Edits you made in this session that are staged (not yet accepted by the user). "
        "Tools read files with these edits applied.",
    ]
    for change in entries:
        if change.kind == "rename" and change.old_path is not None:
            lines.append(f"- rename {change.old_path} → {change.path}")
        else:
            lines.append(f"- {change.kind} {change.path}")
    lines.append("</system-reminder>")
    return text_block("\n".join(lines))


# --- turns and splitting -------------------------------------------------------------------


def assistant_indices(messages: Sequence[MessageParam]) -> list[int]:
    return [i for i, m in enumerate(messages) if m["role"] == "assistant"]


def split_history(messages: Sequence[MessageParam], keep_turns: int) -> tuple[History, History]:
    """(summarised, kept). The kept part starts at an assistant message (or is empty), so
    tool_use/tool_result pairs are never split; at least one turn is summarised."""
    starts = assistant_indices(messages)
    if not starts:
        return [], list(messages)
    keep = min(keep_turns, len(starts) - 1)
    cut = starts[len(starts) - keep] if keep > 0 else len(messages)
    return list(messages[:cut]), list(messages[cut:])


def result_text(content: object) -> str:
    """A tool result's text (its text blocks joined; images and other blocks left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return "" if content is None else str(content)


def user_prompts(messages: Sequence[MessageParam]) -> list[str]:
    """Text the user (not a tool, not a pinned reminder) wrote, in order."""
    prompts = []
    for message in messages:
        if message["role"] != "user":
            continue
        for block in blocks_of(message):
            text = block["text"] if block["type"] == "text" else ""
            if text.strip() and not text.lstrip().startswith("<system-reminder"):
                prompts.append(text.strip())
    return prompts


PATH_KEYS = ("path", "file", "file_path", "new_path", "old_path", "source", "destination")


def files_touched(messages: Sequence[MessageParam]) -> list[str]:
    """Paths named in tool calls, in first-use order (a mechanical complement to the summary)."""
    seen: dict[str, None] = {}
    for message in messages:
        for block in blocks_of(message):
            if block["type"] != "tool_use" or not isinstance(block.get("input"), dict):
                continue
            for key in PATH_KEYS:
                value = block["input"].get(key)
                if isinstance(value, str) and value:
                    seen.setdefault(value, None)
    return list(seen)


def render_for_summary(messages: Sequence[MessageParam], limit_chars: int) -> str:
    """The history as plain text for the summariser; long tool results are cut, and when
    the whole is still too long its oldest part is dropped (the newest matters most)."""
    lines: list[str] = []
    names: dict[str, str] = {}
    for message in messages:
        role = message["role"]
        for block in blocks_of(message):
            if block["type"] == "text" and block["text"].strip():
                lines.append(f"[{role}] {block['text']}")
            elif block["type"] == "tool_use":
                names[block["id"]] = block["name"]
                args = json.dumps(block.get("input", {}), ensure_ascii=False, default=str)
                lines.append(f"[assistant → tool {block['name']}] {args}")
            elif block["type"] == "tool_result":
                text = result_text(block.get("content"))
                if len(text) > RENDERED_RESULT_CHARS:
                    text = text[:RENDERED_RESULT_CHARS] + f"\n[… {len(text)} chars in all]"
                mark = " (error)" if block.get("is_error") else ""
                name = names.get(block["tool_use_id"], "tool")
                lines.append(f"[{name} result{mark}] {text}")
    rendered = "\n\n".join(lines)
    if len(rendered) > limit_chars:
        rendered = "[… earlier part omitted]\n" + rendered[-limit_chars:]
    return rendered


SUMMARY_SYSTEM = (
    "You summarise a coding agent's conversation so the agent can continue the work with "
    "only your summary. Be factual and specific (file paths, function names, commands, "
    "error messages). Never invent anything that is not in the conversation."
)

SUMMARY_INSTRUCTIONS = """Summarise the conversation above for the agent that will continue \
it. Use exactly these Markdown sections:

## Task
What the user asked for, including constraints and preferences they stated.
## Decisions
Approaches chosen or rejected, and why.
## Files touched
Each file read, created, edited, renamed or deleted, with what was done to it.
## Current state
What is done and verified (tests, lint), what failed and the last error.
## Open todos
What remains, in order, as a checklist.

Reply with the summary only."""


def summary_request_messages(rendered: str) -> History:
    return [
        user_message(
            [
                text_block(f"<conversation>\n{rendered}\n</conversation>"),
                text_block(SUMMARY_INSTRUCTIONS),
            ]
        )
    ]


def summary_block(
    summary: str, files: Sequence[str], latest_prompt: str | None, compaction: int
) -> TextBlockParam:
    parts = [
        f'<system-reminder {PINNED_TAG}="summary">',
        f"This session was compacted (compaction {compaction}): the earlier conversation was "
        "replaced by the summary below. Older tool results are gone; re-read files if you "
        "need their contents.",
        "",
        summary.strip() or "(the summary came back empty)",
    ]
    if files:
        parts += ["", "Paths named in the summarised tool calls: " + ", ".join(files)]
    if latest_prompt:
        parts += ["", "The user's most recent request, verbatim:", latest_prompt]
    parts.append("</system-reminder>")
    return text_block("\n".join(parts))


def compacted_history(pinned: Sequence[TextBlockParam], kept: Sequence[MessageParam]) -> History:
    """The pinned user message followed by the kept turns (which start with the assistant)."""
    content: list[ContentBlockParam] = list(pinned)
    if not kept:
        content.append(text_block("Continue with the task from where the summary leaves off."))
    head = user_message(content)
    if not kept:
        return [head]
    return [head, *kept]


# --- stubbing old tool results -------------------------------------------------------------


def next_stub_boundary(boundary: int, total_turns: int, after_turns: int) -> int:
    """The boundary moves to `total - N` once `N + max(1, N // 2)` turns are unstubbed."""
    if after_turns <= 0:
        return boundary
    if total_turns - boundary >= after_turns + max(1, after_turns // 2):
        return total_turns - after_turns
    return boundary


def stub_old_results(
    messages: Sequence[MessageParam], boundary_turns: int, min_chars: int
) -> History:
    """A copy of `messages` whose large tool results before turn `boundary_turns` (counted in
    assistant messages) are replaced by a stub; untouched messages are shared, not copied."""
    if boundary_turns <= 0:
        return list(messages)
    out: History = []
    calls: dict[str, ToolUseBlockParam] = {}
    turn = 0
    for message in messages:
        if message["role"] == "assistant":
            turn += 1
            for block in blocks_of(message):
                if block["type"] == "tool_use":
                    calls[block["id"]] = block
            out.append(message)
            continue
        # a user message belongs to the turn of the assistant message before it
        if turn == 0 or turn > boundary_turns or isinstance(message["content"], str):
            out.append(message)
            continue
        changed = False
        content: list[ContentBlockParam] = []
        for block in blocks_of(message):
            if block["type"] == "tool_result":
                call = calls.get(block["tool_use_id"])
                text = result_text(block.get("content"))
                if len(text) > min_chars and (call is None or call["name"] != TOOL_SEARCH_NAME):
                    stubbed: ToolResultBlockParam = {**block, "content": stub_text(call, text)}
                    stubbed.pop("cache_control", None)
                    block = stubbed
                    changed = True
            content.append(block)
        out.append(user_message(content) if changed else message)
    return out


def stub_text(call: ToolUseBlockParam | None, text: str) -> str:
    name = call["name"] if call is not None else "the tool"
    inp = call["input"] if call is not None else {}
    args = json.dumps(inp, ensure_ascii=False, sort_keys=True, default=str)
    if len(args) > 300:
        args = args[:299] + "…"
    preview = " ".join(text[:STUB_PREVIEW_CHARS].split())
    how = f"call {name} again with {args}"
    if name == "read_file" and isinstance(inp, dict):
        start = inp.get("offset") or 1
        limit = inp.get("limit")
        if isinstance(start, int) and isinstance(limit, int) and limit:
            span = f"lines {start}–{start + limit - 1}"
        else:
            span = f"from line {start}"
        how = f"read_file {inp.get('path')!s} ({span}) again"
    return (
        f"[Old tool result removed from context ({len(text)} chars) to save space. "
        f"Its start: {preview!r}… To see it again, {how}; the file or state may have changed "
        "since.]"
    )


# --- results and the session's context bookkeeping ----------------------------------------


@dataclass
class CompactionResult:
    reason: str
    before_tokens: int
    after_tokens: int
    messages_before: int
    messages_after: int
    summarized_messages: int
    kept_turns: int
    instruction_files: list[str] = field(default_factory=list)
    staged_paths: list[str] = field(default_factory=list)
    summary: str = ""

    def to_dict(self) -> CompactionPayload:
        return {
            "reason": self.reason,
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "summarized_messages": self.summarized_messages,
            "kept_turns": self.kept_turns,
            "instruction_files": list(self.instruction_files),
            "staged_paths": list(self.staged_paths),
            "summary": self.summary,
        }


@dataclass
class ContextState:
    """A session's context bookkeeping (persisted with it): calibration, stub boundary,
    compaction count, and the last request's real input size."""

    estimator: TokenEstimator = field(default_factory=TokenEstimator)
    last_input_tokens: int | None = None
    stub_boundary: int = 0
    compactions: int = 0
    last_compaction: CompactionResult | None = None
    compacting: bool = False
