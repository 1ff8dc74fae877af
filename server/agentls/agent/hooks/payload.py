"""What a hook command receives about a tool call, in Claude Code's words.

Hook scripts written for Claude Code test `tool_name == "Bash"` and read
`tool_input["command"]` or `tool_input["file_path"]`; Claude Code's own documented
`bash_command_validator_example.py` is one. So the JSON a hook gets names the call the way
Claude Code would:

- `tool_name`: Claude Code's name (`run_command` → `Bash`, `edit_file` → `Edit`,
  `list_files` → `Glob` with a pattern, else `LS`, …); a tool Claude Code does not have
  keeps its own name (`rename_file`, MCP tools, which share Claude Code's `mcp__…` form);
- `tool_input`: Claude Code's field names (`command`, `file_path` (absolute),
  `old_string`, `timeout` in milliseconds, `-i`, `output_mode`, …), our other fields as
  they are;
- `agentls_tool_name` and `agentls_tool_input`: our own name and input, unchanged;
- `tool_response` (PostToolUse): Claude Code's shape for the tools it has (`Bash`: stdout,
  stderr, interrupted; `Write`/`Edit`: filePath and the strings; `Read`: the file's lines
  without numbers), plus `success`, `content` (what the model saw) and `is_error`.

An `updatedInput` a hook returns may use either vocabulary; `input_from_hook` maps Claude
Code's names back (`file_path` → `path`, milliseconds → seconds) before the pipeline
validates the result again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentls.agent.protocol.messages import JsonObject

__all__ = [
    "CLAUDE_NAMES",
    "ClaudeCall",
    "claude_call",
    "hook_names",
    "input_from_hook",
    "tool_response",
]


@dataclass(frozen=True)
class _Mapping:
    """One tool: Claude Code's name and its input fields (ours → theirs)."""

    name: str
    fields: Mapping[str, str] = field(default_factory=dict)
    paths: frozenset[str] = frozenset()
    """Our fields holding a path that Claude Code sends absolute."""
    millis: frozenset[str] = frozenset()
    """Our fields in seconds that Claude Code sends in milliseconds."""
    values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Our field → our value → Claude Code's value (enumerations)."""


_GREP_MODES = {"content": "content", "files": "files_with_matches", "count": "count"}

CLAUDE_NAMES: dict[str, _Mapping] = {
    "run_command": _Mapping(
        "Bash",
        {"dangerously_disable_sandbox": "dangerouslyDisableSandbox"},
        millis=frozenset({"timeout"}),
    ),
    "read_file": _Mapping("Read", {"path": "file_path"}, paths=frozenset({"path"})),
    "write_file": _Mapping("Write", {"path": "file_path"}, paths=frozenset({"path"})),
    "edit_file": _Mapping("Edit", {"path": "file_path"}, paths=frozenset({"path"})),
    "grep": _Mapping(
        "Grep",
        {
            "ignore_case": "-i",
            "context": "-C",
            "output": "output_mode",
            "max_results": "head_limit",
        },
        paths=frozenset({"path"}),
        values={"output": _GREP_MODES},
    ),
    "notebook_edit": _Mapping("NotebookEdit", {"path": "notebook_path"}, paths=frozenset({"path"})),
    "web_fetch": _Mapping("WebFetch"),
    "web_search": _Mapping("WebSearch"),
    "task": _Mapping("Task"),
    "todo_write": _Mapping("TodoWrite"),
    "ask_user_question": _Mapping("AskUserQuestion"),
    "exit_plan_mode": _Mapping("ExitPlanMode"),
    "enter_plan_mode": _Mapping("EnterPlanMode"),
    "skill": _Mapping("Skill", {"name": "skill"}),
    "list_mcp_resources": _Mapping("ListMcpResourcesTool"),
    "read_mcp_resource": _Mapping("ReadMcpResourceTool"),
}
"""Our tool → Claude Code's tool and field names. `list_files` is `Glob` or `LS`
(`_list_files`); tools missing here keep their names."""

_MATCHER_ALIASES: dict[str, tuple[str, ...]] = {
    "edit_file": ("MultiEdit",),
    "list_files": ("Glob", "LS"),
    "task": ("Agent",),
}
"""Further Claude Code names a hook matcher may use for one of our tools."""

_NESTED_CAMEL = {"active_form": "activeForm", "multi_select": "multiSelect"}
"""Inner field names that differ (todo_write's todos, ask_user_question's questions)."""


@dataclass(frozen=True)
class ClaudeCall:
    """A tool call as Claude Code names it."""

    name: str
    input: JsonObject


def hook_names(tool: str) -> list[str]:
    """Every name a hook matcher may use for our `tool`: ours and Claude Code's."""
    names = [tool]
    mapping = CLAUDE_NAMES.get(tool)
    if mapping is not None:
        names.append(mapping.name)
    names += _MATCHER_ALIASES.get(tool, ())
    return list(dict.fromkeys(names))


def claude_call(tool: str, input: Mapping[str, object], cwd: Path) -> ClaudeCall:
    """Our call as Claude Code would have made it (see the module docstring)."""
    if tool == "list_files":
        return _list_files(input, cwd)
    mapping = CLAUDE_NAMES.get(tool)
    if mapping is None:
        return ClaudeCall(tool, _with_file_path(dict(input), cwd))
    sent: JsonObject = {}
    for key, value in input.items():
        name = mapping.fields.get(key, key)
        if key in mapping.paths and isinstance(value, str):
            value = _absolute(value, cwd)
        elif key in mapping.millis and isinstance(value, int | float) and value is not None:
            value = int(value * 1000)
        elif key in mapping.values and isinstance(value, str):
            value = mapping.values[key].get(value, value)
        sent[name] = _camel_inner(value)
    return ClaudeCall(mapping.name, sent)


def _list_files(input: Mapping[str, object], cwd: Path) -> ClaudeCall:
    path = input.get("path")
    folder = _absolute(path, cwd) if isinstance(path, str) and path else str(cwd)
    pattern = input.get("pattern")
    if isinstance(pattern, str) and pattern:
        return ClaudeCall("Glob", {"pattern": pattern, "path": folder})
    return ClaudeCall("LS", {"path": folder})


def _with_file_path(sent: JsonObject, cwd: Path) -> JsonObject:
    """A tool Claude Code lacks still gets `file_path` for its `path` (hooks that guard
    files find it where they look)."""
    path = sent.get("path")
    if isinstance(path, str) and "file_path" not in sent:
        sent["file_path"] = _absolute(path, cwd)
    return sent


def _camel_inner(value: object) -> object:
    if isinstance(value, list):
        return [_camel_inner(v) for v in value]
    if isinstance(value, dict):
        return {_NESTED_CAMEL.get(k, k): _camel_inner(v) for k, v in value.items()}
    return value


def _absolute(path: str, cwd: Path) -> str:
    return path if os.path.isabs(path) else os.path.normpath(cwd / path)


def input_from_hook(
    tool: str, ours: Mapping[str, object], sent: Mapping[str, object], update: Mapping[str, object]
) -> JsonObject:
    """Our input after a hook's `updatedInput` (merged into what we had). Fields the hook
    changed may use Claude Code's names or ours; a field it sent back unchanged is kept."""
    changes = {k: v for k, v in update.items() if sent.get(k, _MISSING) != v}
    reverse = _reverse_fields(tool)
    mapping = CLAUDE_NAMES.get(tool)
    result = dict(ours)
    for key, value in changes.items():
        if key in ("file_path", "notebook_path") and "path" in reverse.values():
            result["path"] = value
            continue
        name = reverse.get(key, key)
        if mapping is not None and name in mapping.millis and isinstance(value, int | float):
            value = value / 1000
        if mapping is not None and name in mapping.values and isinstance(value, str):
            back = {v: k for k, v in mapping.values[name].items()}
            value = back.get(value, value)
        result[name] = _snake_inner(value)
    return result


_MISSING = object()
_NESTED_SNAKE = {v: k for k, v in _NESTED_CAMEL.items()}


def _snake_inner(value: object) -> object:
    if isinstance(value, list):
        return [_snake_inner(v) for v in value]
    if isinstance(value, dict):
        return {_NESTED_SNAKE.get(k, k): _snake_inner(v) for k, v in value.items()}
    return value


def _reverse_fields(tool: str) -> dict[str, str]:
    """Claude Code's field names → ours, for one tool."""
    if tool == "list_files":
        return {"file_path": "path"}
    mapping = CLAUDE_NAMES.get(tool)
    reverse = {theirs: ours for ours, theirs in mapping.fields.items()} if mapping else {}
    reverse.setdefault("file_path", "path")
    return reverse


# -- tool_response ---------------------------------------------------------------------------

Shaper = Callable[[Mapping[str, object], ClaudeCall, str, bool], JsonObject]

_EXIT = re.compile(r"^Exit code: (-?\d+)$", re.MULTILINE)
_TIMED_OUT = re.compile(r"^Timed out after ", re.MULTILINE)
_NUMBERED = re.compile(r"^ *(\d+)\t(.*)$")
_READ_FOOTER = re.compile(r"^\[lines (\d+)-(\d+) of (\d+)")


def tool_response(
    tool: str, ours: Mapping[str, object], call: ClaudeCall, text: str, is_error: bool
) -> JsonObject:
    """PostToolUse's `tool_response`: Claude Code's fields for its tools, and for every
    tool `success`, `content` (the result the model saw) and `is_error`."""
    shaper = _SHAPERS.get(call.name)
    shaped = shaper(ours, call, text, is_error) if shaper is not None else {}
    return {**shaped, "success": not is_error, "content": text, "is_error": is_error}


def _bash(ours: Mapping[str, object], call: ClaudeCall, text: str, is_error: bool) -> JsonObject:
    stdout, stderr = _sections(text)
    found = _EXIT.search(text)
    return {
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": bool(_TIMED_OUT.search(text)),
        "isImage": False,
        "exitCode": int(found.group(1)) if found else None,
    }


def _sections(text: str) -> tuple[str, str]:
    """stdout and stderr of run_command's result (`stdout:` / `stderr:` sections)."""
    stdout: list[str] = []
    stderr: list[str] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        if line == "stdout:" and current is None:
            current = stdout
        elif line == "stderr:" and current is not stderr:
            current = stderr
        elif current is not None:
            current.append(line)
    return "\n".join(stdout), "\n".join(stderr)


def _write(ours: Mapping[str, object], call: ClaudeCall, text: str, is_error: bool) -> JsonObject:
    kind = "update" if text.startswith("Overwrote") else "create"
    return {
        "type": kind,
        "filePath": call.input.get("file_path"),
        "content": ours.get("content"),
        "structuredPatch": [],
    }


def _edit(ours: Mapping[str, object], call: ClaudeCall, text: str, is_error: bool) -> JsonObject:
    return {
        "filePath": call.input.get("file_path"),
        "oldString": ours.get("old_string"),
        "newString": ours.get("new_string"),
        "replaceAll": bool(ours.get("replace_all")),
        "userModified": False,
        "structuredPatch": [],
    }


def _read(ours: Mapping[str, object], call: ClaudeCall, text: str, is_error: bool) -> JsonObject:
    lines: list[str] = []
    first: int | None = None
    total: int | None = None
    for line in text.split("\n"):
        numbered = _NUMBERED.match(line)
        if numbered:
            first = first or int(numbered.group(1))
            lines.append(numbered.group(2))
            continue
        footer = _READ_FOOTER.match(line)
        if footer:
            total = int(footer.group(3))
    return {
        "type": "text",
        "file": {
            "filePath": call.input.get("file_path"),
            "content": "\n".join(lines),
            "numLines": len(lines),
            "startLine": first or 1,
            "totalLines": total if total is not None else len(lines),
        },
    }


def _files(ours: Mapping[str, object], call: ClaudeCall, text: str, is_error: bool) -> JsonObject:
    names = [line for line in text.split("\n") if line and not line.startswith(("[", "("))]
    if call.name == "Grep" and call.input.get("output_mode", "files_with_matches") != (
        "files_with_matches"
    ):
        return {"mode": call.input.get("output_mode")}
    return {"filenames": names, "numFiles": len(names)}


_SHAPERS: dict[str, Shaper] = {
    "Bash": _bash,
    "Write": _write,
    "Edit": _edit,
    "Read": _read,
    "Grep": _files,
    "Glob": _files,
    "LS": _files,
}
