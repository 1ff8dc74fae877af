"""YAML front matter of Claude Code's Markdown files (skills, commands, agents, rules).

`---` on the first line, YAML up to the next `---` line, then the body. Parsed as Claude
Code parses it, so every file Claude Code accepts loads here too:

1. strict YAML (`yaml.safe_load`: no tags, no code);
2. when that fails, Claude Code's repair: a one-line `key: value` whose value holds a
   character YAML reserves (`{ } [ ] * & # ! | > % @` and backquote) and is not quoted is
   read as a quoted string (`argument-hint: [user prompt] [orchestration prompt]`,
   `description: Use when <example>…`); a value that is a YAML list by itself
   (`tools: ["Read", "Grep"]`, `argument-hint: [name]`) stays a list;
3. when that fails too, field by field: a line at the left margin that starts with a key
   Claude Code knows (`name:`, `description:`, `tools:`, …, each key once) starts a field,
   and every other line belongs to the field above. This reads the agent files whose
   unquoted `description:` carries `Context:` / `user:` lines and multi-line `<example>`
   blocks (Anthropic's own plugin agents), where Claude Code itself keeps the file and
   its body. A field's value is read as YAML when it parses alone, else as its text.

Anything but a mapping is a problem the caller reports.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml  # imported where a file is parsed: an idle server with no skills, agents
    # or commands never needs it (0.75 MB of its memory, issue 33)

MAX_FILE_BYTES = 256 * 1024
"""A skill or command file larger than this is not read (it would flood the prompt)."""


class FrontMatterError(ValueError):
    """The file cannot be used; the message says why."""


def read_markdown(path: Path) -> tuple[dict[str, object], str]:
    """(front matter, body) of a Markdown file; `FrontMatterError` when unusable."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FrontMatterError(f"it is larger than {MAX_FILE_BYTES // 1024} KB")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FrontMatterError("it is not UTF-8 text") from None
    except OSError as exc:
        raise FrontMatterError(f"it cannot be read ({exc.strerror or exc})") from None
    return split_front_matter(text)


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            break
    else:
        raise FrontMatterError("its front matter has no closing `---` line")
    data = parse_front_matter(raw)
    return data, body


KNOWN_KEYS: frozenset[str] = frozenset(
    {
        "name", "description", "tools", "disallowedTools", "model", "color",
        "permissionMode", "skills", "hooks", "mcpServers", "memory", "maxTurns", "effort",
        "argument-hint", "allowed-tools", "disable-model-invocation", "user-invocable",
        "context", "agent", "version", "license", "metadata", "when_to_use", "when-to-use",
        "keep-coding-instructions", "paths", "globs", "alwaysApply", "enabled", "event",
        "pattern", "action", "conditions", "author", "tags", "category", "isolation",
    }
)  # fmt: skip
"""Keys that start a field in the field-by-field reading (rule 3)."""

_RESERVED = re.compile(r"[{}\[\]*&#!|>%@`]")
_ONE_LINE = re.compile(r"^([A-Za-z_-]+):\s+(.+)$")
_FIELD_START = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]|$)")


def parse_front_matter(raw: str) -> dict[str, object]:
    """The front matter's fields (rules 1–3 of the module's docstring)."""
    import yaml

    if not raw.strip():
        return {}
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        data = _lenient(raw, exc)
    if not isinstance(data, dict):
        raise FrontMatterError("its front matter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}


def _lenient(raw: str, error: yaml.YAMLError) -> object:
    import yaml

    repaired = quote_reserved_values(raw)
    if repaired != raw:
        try:
            return yaml.safe_load(repaired)
        except yaml.YAMLError:
            pass
    fields = _fields(raw)
    if not fields or not any(key in ("name", "description") for key in fields):
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        raise FrontMatterError(f"its front matter is not valid YAML{line}") from None
    return {key: _field_value(key, text) for key, text in fields.items()}


def quote_reserved_values(raw: str) -> str:
    """Claude Code's repair: quote one-line values that hold a YAML-reserved character."""
    lines = []
    for line in raw.split("\n"):
        match = _ONE_LINE.match(line)
        value = match.group(2) if match else ""
        quoted = len(value) > 1 and value[0] == value[-1] and value[0] in "\"'"
        if match and not quoted and _RESERVED.search(value) and not _is_list(value):
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            line = f'{match.group(1)}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


def _is_list(value: str) -> bool:
    """`tools: ["Read", "Grep"]`, `argument-hint: [name]`: a flow list stays a list."""
    import yaml

    try:
        return isinstance(yaml.safe_load(value), list)
    except yaml.YAMLError:
        return False


def _fields(raw: str) -> dict[str, str]:
    """Known keys at the left margin start fields; other lines continue the field above."""
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in raw.splitlines():
        match = _FIELD_START.match(line)
        key = match.group(1) if match else ""
        if key in KNOWN_KEYS and key not in fields:
            current = fields[key] = [line[match.end() :] if match else ""]
        elif current is not None:
            current.append(line)
    return {key: "\n".join(lines) for key, lines in fields.items()}


def _field_value(key: str, text: str) -> object:
    import yaml

    try:
        parsed = yaml.safe_load(f"{key}: {text}")
    except yaml.YAMLError:
        parsed = None
    if isinstance(parsed, dict) and key in parsed:
        return parsed[key]
    return text.strip()


def text_field(data: dict[str, object], key: str) -> str | None:
    """A string field (numbers and booleans written bare in YAML are taken as text)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str | int | float | bool):
        return str(value).strip()
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        # `argument-hint: [project-name]` is a YAML list; Claude Code shows it as written
        return " ".join(f"[{v}]" for v in value)
    raise FrontMatterError(f"`{key}` must be text")


def tools_field(data: dict[str, object], key: str = "allowed-tools") -> tuple[str, ...]:
    """`allowed-tools`: a comma-separated string or a YAML list of rules."""
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(_split_rules(value))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise FrontMatterError(f"`{key}` must be a list of tool rules or a comma-separated string")


def _split_rules(text: str) -> list[str]:
    """Split at commas outside parentheses (`Bash(git add:*), Read` → two rules)."""
    rules: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            rules.append(current.strip())
            current = ""
        else:
            current += char
    rules.append(current.strip())
    return [r for r in rules if r]
