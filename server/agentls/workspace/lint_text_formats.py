"""Line-oriented linter output → `RawDiagnostic`: tsc, mypy, gofmt, `path:line:col:` lines
and user `regex:` patterns.

Our own patterns are simple and anchored per line, so Python's `re` is safe for them; a
user's pattern goes through RE2 (`agentls.config.regex`), which cannot be made to backtrack.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from agentls.config.regex import RegexGroupsError, compile_user_regex
from agentls.workspace.lint_formats import LintFormatError, RawDiagnostic, severity_of

__all__ = [
    "DEFAULT_LINE_PATTERN",
    "parse_gofmt",
    "parse_line_diagnostics",
    "parse_mypy",
    "parse_regex",
    "parse_tsc",
]

DEFAULT_LINE_PATTERN: Final = (
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?:(?P<column>\d+):)?\s*"
    r"(?:(?P<severity>error|warning|note|info)\s*:?\s*)?(?P<message>.+)$"
)
"""The classic compiler format: `path:line[:col]: [severity:] message`."""

_TSC: Final = re.compile(
    r"^(?P<file>[^\s(][^(\n]*)\((?P<line>\d+),(?P<column>\d+)\): "
    r"(?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.*)$"
)
_MYPY: Final = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<column>\d+):)?"
    r"(?:(?P<end_line>\d+):(?P<end_column>\d+):)? (?P<severity>error|warning|note): "
    r"(?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)
_GOFMT_ERROR: Final = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<message>.+)$"
)


def parse_tsc(text: str) -> list[RawDiagnostic]:
    """`tsc --pretty false`: `file(line,col): error TS1234: message`, continuation lines
    (indented: the rest of a long message chain) appended to the message."""
    found: list[RawDiagnostic] = []
    for line in text.splitlines():
        match = _TSC.match(line)
        if match:
            found.append(
                RawDiagnostic(
                    file=match["file"],
                    line=int(match["line"]),
                    column=int(match["column"]),
                    message=match["message"].strip(),
                    code=match["code"],
                    severity=severity_of(match["severity"], "error"),
                )
            )
        elif found and line.startswith("  ") and line.strip():
            last = found[-1]
            found[-1] = _with_message(last, f"{last.message}\n{line.strip()}")
        elif line.startswith("error TS"):  # a global error (a bad tsconfig): no position
            code, _, message = line.removeprefix("error ").partition(": ")
            found.append(RawDiagnostic("tsconfig.json", 1, 1, message, code, "error"))
    return found


def parse_mypy(text: str) -> list[RawDiagnostic]:
    """mypy's plain output with `--show-column-numbers --show-error-codes`; a `note:` on
    the same line as the error before it is folded into that error's message."""
    found: list[RawDiagnostic] = []
    for line in text.splitlines():
        match = _MYPY.match(line)
        if not match:
            continue
        severity = severity_of(match["severity"])
        last = found[-1] if found else None
        same_spot = last is not None and (last.file, last.line) == (
            match["file"],
            int(match["line"]),
        )
        if severity == "info" and same_spot and last is not None and last.severity != "info":
            found[-1] = _with_message(last, f"{last.message}\n{match['message'].strip()}")
            continue
        found.append(
            RawDiagnostic(
                file=match["file"],
                line=int(match["line"]),
                column=int(match["column"] or 1),
                message=match["message"].strip(),
                code=match["code"],
                severity=severity,
                end_line=int(match["end_line"]) if match["end_line"] else None,
                end_column=int(match["end_column"]) if match["end_column"] else None,
            )
        )
    return found


def parse_gofmt(stdout: str, stderr: str) -> list[RawDiagnostic]:
    """`gofmt -l`: each listed file is not formatted (one warning at its top); syntax
    errors come on stderr as `file:line:col: message`."""
    found = [
        RawDiagnostic(
            file=name.strip(),
            line=1,
            column=1,
            message="not formatted as gofmt formats it (run `gofmt -w` on it)",
            code="gofmt",
            severity="warning",
            fixable=True,
        )
        for name in stdout.splitlines()
        if name.strip()
    ]
    for line in stderr.splitlines():
        match = _GOFMT_ERROR.match(line)
        if match:
            found.append(
                RawDiagnostic(
                    file=match["file"],
                    line=int(match["line"]),
                    column=int(match["column"]),
                    message=match["message"],
                    code="syntax",
                    severity="error",
                )
            )
    return found


def parse_line_diagnostics(text: str, pattern: str = DEFAULT_LINE_PATTERN) -> list[RawDiagnostic]:
    """One diagnostic per match of one of our own patterns (named groups `path`/`file`,
    `line`, `message`; optional `column`, `code`, `severity`)."""
    regex = re.compile(pattern, re.MULTILINE)
    names = {"file" if n == "path" else n for n in regex.groupindex}
    missing = {"file", "line", "message"} - names
    if missing:
        raise LintFormatError(f"pattern lacks named groups: {', '.join(sorted(missing))}")
    found = []
    for match in regex.finditer(text):
        groups = {("file" if k == "path" else k): v for k, v in match.groupdict().items() if v}
        diag = _from_groups(groups)
        if diag is not None:
            found.append(diag)
    return found


def parse_regex(text: str, pattern: str) -> list[RawDiagnostic]:
    """A user's `regex:` format, run with RE2 (see `agentls.config.regex`)."""
    try:
        compiled = compile_user_regex(pattern, ("file", "line", "message"))
    except RegexGroupsError as exc:
        raise LintFormatError(str(exc)) from None
    found = []
    for groups in compiled.matches(text):
        diag = _from_groups(groups)
        if diag is not None:
            found.append(diag)
    return found


def _from_groups(groups: dict[str, str]) -> RawDiagnostic | None:
    line = groups.get("line", "")
    if not line.isdigit() or not groups.get("file"):
        return None
    column = groups.get("column", "")
    return RawDiagnostic(
        file=groups["file"].strip(),
        line=int(line),
        column=int(column) if column.isdigit() else 1,
        message=groups.get("message", "").strip(),
        code=groups.get("code") or None,
        severity=severity_of(groups.get("severity"), "warning"),
    )


def _with_message(diag: RawDiagnostic, message: str) -> RawDiagnostic:
    return dataclasses.replace(diag, message=message)
