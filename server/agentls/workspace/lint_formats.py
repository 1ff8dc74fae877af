"""Linter output → one shape (`RawDiagnostic`), for every format the lint tool reads.

Kept apart from the lint tool so each format can be tested on captured output without
running anything. Paths stay as the tool printed them (relative or absolute); resolving them
and mapping them back from the shadow is the caller's job. JSON formats live here, the
line-oriented ones (tsc, mypy, gofmt, `regex:`) in `lint_text_formats`; `parse_diagnostics`
dispatches on the format name used by detection and by the `lint` setting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlparse

__all__ = [
    "LintFormatError",
    "RawDiagnostic",
    "Severity",
    "cargo_message_records",
    "json_documents",
    "parse_biome_json",
    "parse_cargo_json",
    "parse_go_vet_json",
    "parse_json_diagnostics",
    "parse_pylint_json",
    "parse_pyright_json",
    "parse_rubocop_json",
    "parse_sarif",
    "ruff_severity",
    "severity_of",
]

Severity = Literal["error", "warning", "info"]

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
    tool: str | None = None
    """The tool that found it, when the format says (SARIF runs name their driver)."""


def severity_of(word: object, default: Severity = "warning") -> Severity:
    """A tool's severity word → ours (`fatal`, `error` → error; `note`, `hint`, `info`,
    `convention`, `refactor` → info; the rest → warning)."""
    if not isinstance(word, str):
        return default
    lowered = word.lower()
    if lowered in ("error", "fatal", "failure"):
        return "error"
    if lowered in ("note", "info", "information", "hint", "convention", "refactor", "none"):
        return "info"
    if lowered in ("warning", "warn"):
        return "warning"
    return default


def ruff_severity(code: str | None) -> Severity:
    """ruff calls everything an error; keep `error` for syntax and certain runtime failures."""
    if code is None or code == "invalid-syntax" or code.startswith(_RUFF_ERROR_PREFIXES):
        return "error"
    return "warning"


def _load(text: str, what: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except json.JSONDecodeError as exc:
        raise LintFormatError(f"expected {what}, got: {text.strip()[:200]!r}") from exc


def _dict(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one (a part the tool left out)."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def _int(value: object, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _opt_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def json_documents(text: str) -> Iterator[Any]:
    """Every JSON value in `text`, skipping what lies between them (`# package` banners,
    progress lines): for tools that print one object per line or per package."""
    decoder = json.JSONDecoder()
    index, end = 0, len(text)
    while index < end:
        start = min(
            (i for i in (text.find("{", index), text.find("[", index)) if i >= 0), default=-1
        )
        if start < 0:
            return
        try:
            value, index = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            index = start + 1
            continue
        yield value


# -- ruff and eslint ----------------------------------------------------------------------


def parse_json_diagnostics(text: str) -> list[RawDiagnostic]:
    """ruff's `--output-format json` or eslint's `--format json` (detected per entry)."""
    data = _load(text, "JSON output")
    if data is None:
        return []
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


def _ruff_entry(entry: dict[str, object]) -> RawDiagnostic:
    location = _dict(entry.get("location"))
    end = _dict(entry.get("end_location"))
    code = _str(entry.get("code"))
    return RawDiagnostic(
        file=str(entry["filename"]),
        line=_int(location.get("row")),
        column=_int(location.get("column")),
        message=str(entry.get("message", "")),
        code=code,
        severity=ruff_severity(code),
        fixable=isinstance(entry.get("fix"), dict),
        end_line=_opt_int(end.get("row")),
        end_column=_opt_int(end.get("column")),
    )


def _eslint_file(entry: dict[str, object]) -> list[RawDiagnostic]:
    found = []
    for msg in _list(entry["messages"]):
        if not isinstance(msg, dict):
            continue
        level = msg.get("severity")
        found.append(
            RawDiagnostic(
                file=str(entry["filePath"]),
                line=_int(msg.get("line")),
                column=_int(msg.get("column")),
                message=str(msg.get("message", "")),
                code=_str(msg.get("ruleId")),
                severity="error" if level == 2 or msg.get("fatal") else "warning",
                fixable="fix" in msg,
                end_line=_opt_int(msg.get("endLine")),
                end_column=_opt_int(msg.get("endColumn")),
            )
        )
    return found


# -- biome ----------------------------------------------------------------------------------


def parse_biome_json(text: str) -> list[RawDiagnostic]:
    """`biome lint --reporter=json`: biome 2 gives line/column; biome 1 a byte span, turned
    into a line/column with the source code it includes."""
    data = _load(text, "biome's JSON report")
    if not isinstance(data, dict) or not isinstance(data.get("diagnostics"), list):
        raise LintFormatError("expected biome's report: an object with `diagnostics`")
    found = []
    for diag in data["diagnostics"]:
        if not isinstance(diag, dict):
            continue
        location = diag.get("location") or {}
        path = location.get("path")
        if isinstance(path, dict):
            path = path.get("file")
        if not isinstance(path, str):
            continue
        line, column = _biome_position(location)
        end = location.get("end") or {}
        found.append(
            RawDiagnostic(
                file=path,
                line=line,
                column=column,
                message=str(diag.get("message") or diag.get("description") or ""),
                code=_str(diag.get("category")),
                severity=severity_of(diag.get("severity"), "error"),
                end_line=_opt_int(end.get("line")) if isinstance(end, dict) else None,
                end_column=_opt_int(end.get("column")) if isinstance(end, dict) else None,
            )
        )
    return found


def _biome_position(location: dict[str, object]) -> tuple[int, int]:
    start = location.get("start")
    if isinstance(start, dict):
        return _int(start.get("line")), _int(start.get("column"))
    span, source = location.get("span"), location.get("sourceCode")
    if isinstance(span, list) and span and isinstance(span[0], int) and isinstance(source, str):
        before = source.encode("utf-8")[: span[0]].decode("utf-8", "replace")
        return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
    return 1, 1


# -- go vet -json -------------------------------------------------------------------------


def parse_go_vet_json(text: str) -> list[RawDiagnostic]:
    """`go vet -json`: per package `{pkg: {analyzer: [{posn, message}]}}` objects between
    `# pkg` lines; a package that does not type-check gives `{"error": ...}` entries."""
    found = _go_type_errors(text)
    for doc in json_documents(text):
        if not isinstance(doc, dict):
            continue
        for analyzers in doc.values():
            if not isinstance(analyzers, dict):
                continue
            for analyzer, items in analyzers.items():
                for item in items if isinstance(items, list) else [items]:
                    diag = _go_vet_item(analyzer, item)
                    if diag is not None:
                        found.append(diag)
    return found


_GO_ERROR_LINE = re.compile(r"^(?:vet: )?(?P<posn>[^\s:][^:\n]*\.go:\d+:\d+): (?P<message>.+)$")


def _go_type_errors(text: str) -> list[RawDiagnostic]:
    """Packages that do not compile: vet prints `vet: file:line:col: message` in plain text
    even with `-json` (and the compiler `file:line:col: message`)."""
    found = []
    for line in text.splitlines():
        match = _GO_ERROR_LINE.match(line)
        if match:
            file, number, column = _split_position(match["posn"])
            found.append(RawDiagnostic(file, number, column, match["message"], None, "error"))
    return found


def _go_vet_item(analyzer: str, item: Any) -> RawDiagnostic | None:
    if not isinstance(item, dict) or not isinstance(item.get("posn"), str):
        return None
    file, line, column = _split_position(item["posn"])
    error = analyzer == "error"
    return RawDiagnostic(
        file=file,
        line=line,
        column=column,
        message=str(item.get("message", "")),
        code=None if error else analyzer,
        severity="error" if error else "warning",
    )


def _split_position(posn: str) -> tuple[str, int, int]:
    """`path:line:col` (or `path:line`) → parts; the path may itself hold colons."""
    parts = posn.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    head, _, line = posn.rpartition(":")
    if head and line.isdigit():
        return head, int(line), 1
    return posn, 1, 1


# -- cargo --------------------------------------------------------------------------------


def parse_cargo_json(text: str) -> list[RawDiagnostic]:
    """`cargo clippy|check|build --message-format=json`: one `compiler-message` per line;
    its primary span is the position. Summaries without a span ("aborting due to ...") are
    dropped: they repeat what the spanned messages said."""
    return [d for m in cargo_message_records(text) if (d := _cargo_message(m)) is not None]


def cargo_message_records(text: str) -> Iterator[dict[str, object]]:
    """The `message` objects of cargo's `compiler-message` lines."""
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("reason") == "compiler-message":
            message = record.get("message")
            if isinstance(message, dict):
                yield message


def _cargo_message(message: dict[str, object]) -> RawDiagnostic | None:
    spans = [s for s in _list(message.get("spans")) if isinstance(s, dict)]
    primary = next((s for s in spans if s.get("is_primary")), spans[0] if spans else None)
    if primary is None or not isinstance(primary.get("file_name"), str):
        return None
    code = message.get("code")
    suggestion = any(
        isinstance(s, dict) and s.get("suggested_replacement") is not None
        for child in _list(message.get("children"))
        if isinstance(child, dict)
        for s in child.get("spans") or []
    )
    return RawDiagnostic(
        file=primary["file_name"],
        line=_int(primary.get("line_start")),
        column=_int(primary.get("column_start")),
        message=str(message.get("message", "")),
        code=_str(code.get("code")) if isinstance(code, dict) else None,
        severity=severity_of(message.get("level")),
        fixable=suggestion,
        end_line=_opt_int(primary.get("line_end")),
        end_column=_opt_int(primary.get("column_end")),
    )


# -- SARIF --------------------------------------------------------------------------------


def parse_sarif(text: str) -> list[RawDiagnostic]:
    """SARIF 2.1 (`runs[].results[]`): the first location of each result; the run's driver
    names the tool. `file://` URIs become paths; relative URIs stay relative."""
    data = _load(text, "a SARIF log")
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        raise LintFormatError("expected a SARIF log: an object with `runs`")
    found = []
    for run in data["runs"]:
        if not isinstance(run, dict):
            continue
        driver = ((run.get("tool") or {}).get("driver") or {}) if isinstance(run, dict) else {}
        tool = _str(driver.get("name")) if isinstance(driver, dict) else None
        for result in run.get("results") or []:
            diag = _sarif_result(result, tool)
            if diag is not None:
                found.append(diag)
    return found


def _sarif_result(result: Any, tool: str | None) -> RawDiagnostic | None:
    if not isinstance(result, dict):
        return None
    locations = result.get("locations") or []
    physical = locations[0].get("physicalLocation") if locations else None
    if not isinstance(physical, dict):
        return None
    uri = (physical.get("artifactLocation") or {}).get("uri")
    if not isinstance(uri, str):
        return None
    region = physical.get("region") or {}
    message = result.get("message") or {}
    return RawDiagnostic(
        file=_uri_path(uri),
        line=_int(region.get("startLine")),
        column=_int(region.get("startColumn")),
        message=str(message.get("text") or message.get("markdown") or ""),
        code=_str(result.get("ruleId")),
        severity=severity_of(result.get("level"), "warning"),
        fixable=bool(result.get("fixes")),
        end_line=_opt_int(region.get("endLine")),
        end_column=_opt_int(region.get("endColumn")),
        tool=tool,
    )


def _uri_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return unquote(uri) if not parsed.scheme else uri


# -- Python type checkers and pylint ------------------------------------------------------


def parse_pyright_json(text: str) -> list[RawDiagnostic]:
    """`pyright --outputjson` (and basedpyright): 0-based ranges in `generalDiagnostics`."""
    data = _load(text, "pyright's JSON report")
    if not isinstance(data, dict):
        raise LintFormatError("expected pyright's report: an object with `generalDiagnostics`")
    found = []
    for diag in data.get("generalDiagnostics") or []:
        if not isinstance(diag, dict) or not isinstance(diag.get("file"), str):
            continue
        rng = diag.get("range") or {}
        start, end = rng.get("start") or {}, rng.get("end") or {}
        found.append(
            RawDiagnostic(
                file=diag["file"],
                line=_int(start.get("line"), 0) + 1,
                column=_int(start.get("character"), 0) + 1,
                message=str(diag.get("message", "")),
                code=_str(diag.get("rule")),
                severity=severity_of(diag.get("severity")),
                end_line=_int(end.get("line"), 0) + 1 if end else None,
                end_column=_int(end.get("character"), 0) + 1 if end else None,
            )
        )
    return found


def parse_pylint_json(text: str) -> list[RawDiagnostic]:
    """`pylint --output-format=json`: 0-based columns, `type` error/warning/convention/..."""
    data = _load(text, "pylint's JSON report")
    if data is None:
        return []
    if not isinstance(data, list):
        raise LintFormatError("expected pylint's report: a JSON array")
    found = []
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        kind = item.get("type")
        found.append(
            RawDiagnostic(
                file=item["path"],
                line=_int(item.get("line")),
                column=_int(item.get("column"), 0) + 1,
                message=str(item.get("message", "")),
                code=_str(item.get("symbol")) or _str(item.get("message-id")),
                severity="error" if kind in ("error", "fatal") else severity_of(kind),
            )
        )
    return found


# -- rubocop ------------------------------------------------------------------------------


def parse_rubocop_json(text: str) -> list[RawDiagnostic]:
    """`rubocop --format json`: `files[].offenses[]`; severities convention/refactor are
    style (info), warning, error/fatal."""
    data = _load(text, "rubocop's JSON report")
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise LintFormatError("expected rubocop's report: an object with `files`")
    found = []
    for entry in data["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        for offense in entry.get("offenses") or []:
            if not isinstance(offense, dict):
                continue
            location = offense.get("location") or {}
            found.append(
                RawDiagnostic(
                    file=entry["path"],
                    line=_int(location.get("start_line", location.get("line"))),
                    column=_int(location.get("start_column", location.get("column"))),
                    message=str(offense.get("message", "")),
                    code=_str(offense.get("cop_name")),
                    severity=severity_of(offense.get("severity")),
                    fixable=bool(offense.get("correctable")),
                    end_line=_opt_int(location.get("last_line")),
                    end_column=_opt_int(location.get("last_column")),
                )
            )
    return found
