"""The one reader of settings files: JSON (Claude Code's `settings*.json`, `.mcp.json`,
`~/.claude.json`) and TOML (`.agentls.toml`, `pyproject.toml`), by suffix.

It only reads and decodes; what a file must contain is the settings model's business. A
file that is missing is no problem (None, None); one that cannot be read or decoded gives
a problem that names the file and why, and never raises.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

MAX_SETTINGS_FILE_BYTES = 1 << 20
"""Settings files larger than this (1 MiB) are refused unread."""


def read_settings_file(
    path: Path, *, max_bytes: int | None = MAX_SETTINGS_FILE_BYTES
) -> tuple[object | None, str | None]:
    """(data, None); (None, None) when the file does not exist; or (None, problem)."""
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            return None, f"{path}: larger than {max_bytes // (1 << 20)} MiB"
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return None, f"{path}: cannot be read ({reason})"
    if path.suffix == ".toml":
        try:
            return tomllib.loads(text), None
        except tomllib.TOMLDecodeError as exc:
            return None, f"{path}: invalid TOML ({exc})"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}"
