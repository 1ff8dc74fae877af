"""YAML front matter of Claude Code's Markdown files (skills, custom commands).

`---` on the first line, YAML up to the next `---` line, then the body. Parsed with
`yaml.safe_load` (no tags, no code); anything but a mapping is a problem the caller
reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_FILE_BYTES = 256 * 1024
"""A skill or command file larger than this is not read (it would flood the prompt)."""


class FrontMatterError(ValueError):
    """The file cannot be used; the message says why."""


def read_markdown(path: Path) -> tuple[dict[str, Any], str]:
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


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
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
    try:
        data = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        raise FrontMatterError(f"its front matter is not valid YAML{line}") from None
    if not isinstance(data, dict):
        raise FrontMatterError("its front matter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}, body


def text_field(data: dict[str, Any], key: str) -> str | None:
    """A string field (numbers and booleans written bare in YAML are taken as text)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str | int | float | bool):
        return str(value).strip()
    raise FrontMatterError(f"`{key}` must be text")


def tools_field(data: dict[str, Any], key: str = "allowed-tools") -> tuple[str, ...]:
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
