"""Parsers for linter output: ruff/eslint-style JSON and `path:line:col: message` lines.

Kept apart from the lint tool so the formats can be tested on captured output and reused
(e.g. by a future diagnostics publisher) without running anything. Paths stay as the
linter printed them; mapping them back from the shadow is the caller's job.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DEFAULT_LINE_PATTERN",
    "LintFormatError",
    "RawDiagnostic",
    "Severity",
    "parse_json_diagnostics",
    "parse_line_diagnostics",
    "ruff_severity",
]

Severity = Literal["error", "warning", "info"]

DEFAULT_LINE_PATTERN = (
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:(?P<column>\d+):)?\s*"
    r"(?:(?P<severity>error|warning|note|info)\s*:?\s*)?(?P<message>.+)$"
)
"""The classic compiler format: `path:line[:col]: [severity:] message`."""

# Codes that mean "this will fail at runtime", the set flake8's docs suggest gating CI on.
_RUFF_ERROR_PREFIXES = ("E9", "F63", "F7", "F82")


class LintFormatError(ValueError):
    """The linter's output was not in the format it was configured with."""


@dataclass(frozen=True)
class RawDiagnostic:
    """One finding, positions 1-based, path as the linter printed it."""

    file: str
    line: int
    column: int
    message: str
    code: str | None = None
    severity: Severity = "warning"
    fixable: bool = False
    end_line: int | None = None
    end_column: int | None = None


def ruff_severity(code: str | None) -> Severity:
    """ruff calls everything an error; keep `error` for syntax and certain runtime failures."""
    if code is None or code == "invalid-syntax" or code.startswith(_RUFF_ERROR_PREFIXES):
        return "error"
    return "warning"


def parse_json_diagnostics(text: str) -> list[RawDiagnostic]:
    """ruff's `--output-format json` or eslint's `--format json` (detected per entry)."""
    try:
        data = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as exc:
        raise LintFormatError(f"expected JSON output, got: {text[:200]!r}") from exc
    if not isinstance(data, list):
        raise LintFormatError("expected a JSON array of diagnostics or files")
    found: list[RawDiagnostic] = []
    for entry in data:
        if not isinstance(entry, dict):
            continue
        if "filePath" in entry and isinstance(entry.get("messages"), list):
            found.extend(_eslint_file(entry))
        elif "filename" in entry and "location" in entry:
            found.append(_ruff_entry(entry))
    return found


def _int(value: Any, default: int = 1) -> int:
    return value if isinstance(value, int) else default


def _ruff_entry(entry: dict[str, Any]) -> RawDiagnostic:
    location = entry.get("location") or {}
    end = entry.get("end_location") or {}
    code = entry.get("code")
    fix = entry.get("fix")
    return RawDiagnostic(
        file=str(entry["filename"]),
        line=_int(location.get("row")),
        column=_int(location.get("column")),
        message=str(entry.get("message", "")),
        code=code if isinstance(code, str) else None,
        severity=ruff_severity(code if isinstance(code, str) else None),
        fixable=isinstance(fix, dict),
        end_line=end.get("row"),
        end_column=end.get("column"),
    )


def _eslint_file(entry: dict[str, Any]) -> list[RawDiagnostic]:
    found = []
    for msg in entry["messages"]:
        if not isinstance(msg, dict):
            continue
        level = msg.get("severity")
        found.append(
            RawDiagnostic(
                file=str(entry["filePath"]),
                line=_int(msg.get("line")),
                column=_int(msg.get("column")),
                message=str(msg.get("message", "")),
                code=msg.get("ruleId") if isinstance(msg.get("ruleId"), str) else None,
                severity="error" if level == 2 or msg.get("fatal") else "warning",
                fixable="fix" in msg,
                end_line=msg.get("endLine"),
                end_column=msg.get("endColumn"),
            )
        )
    return found


def parse_line_diagnostics(text: str, pattern: str = DEFAULT_LINE_PATTERN) -> list[RawDiagnostic]:
    """One diagnostic per matching line; named groups `path`, `line`, `message` required,
    `column`, `code`, `severity` optional. Non-matching lines (banners, summaries) are skipped.
    """
    regex = re.compile(pattern, re.MULTILINE)
    missing = {"path", "line", "message"} - set(regex.groupindex)
    if missing:
        raise LintFormatError(f"pattern lacks named groups: {', '.join(sorted(missing))}")
    found = []
    for match in regex.finditer(text):
        groups = match.groupdict()
        level = (groups.get("severity") or "").lower()
        severity: Severity = (
            "error"
            if level == "error"
            else "info"
            if level
            in (
                "note",
                "info",
            )
            else "warning"
        )
        found.append(
            RawDiagnostic(
                file=groups["path"].strip(),
                line=int(groups["line"]),
                column=int(groups.get("column") or 1),
                message=groups["message"].strip(),
                code=groups.get("code") or None,
                severity=severity,
            )
        )
    return found
