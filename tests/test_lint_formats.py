"""Linter output parsers on captured output (no processes needed)."""

from __future__ import annotations

import json

import pytest

from agentls.workspace.lint_formats import LintFormatError, parse_json_diagnostics
from agentls.workspace.lint_text_formats import parse_line_diagnostics


def test_eslint_json_is_read_per_message() -> None:
    output = json.dumps(
        [
            {
                "filePath": "/x/src/a.js",
                "messages": [
                    {
                        "ruleId": "no-unused-vars",
                        "severity": 1,
                        "message": "'x' unused",
                        "line": 2,
                        "column": 7,
                        "endLine": 2,
                        "endColumn": 8,
                    },
                    {
                        "ruleId": None,
                        "fatal": True,
                        "severity": 2,
                        "message": "Parsing error",
                        "line": 9,
                        "column": 1,
                    },
                    {
                        "ruleId": "semi",
                        "severity": 2,
                        "message": "Missing semicolon.",
                        "line": 3,
                        "column": 10,
                        "fix": {"range": [1, 1], "text": ";"},
                    },
                ],
            }
        ]
    )
    found = parse_json_diagnostics(output)
    assert [(d.file, d.line, d.column, d.code, d.severity, d.fixable) for d in found] == [
        ("/x/src/a.js", 2, 7, "no-unused-vars", "warning", False),
        ("/x/src/a.js", 9, 1, None, "error", False),
        ("/x/src/a.js", 3, 10, "semi", "error", True),
    ]


def test_line_format_takes_optional_column_and_severity_and_skips_noise() -> None:
    output = (
        "checking...\nsrc/a.c:3:5: error: expected ';'\nsrc/b.c:10: note: see here\n2 problems\n"
    )
    found = parse_line_diagnostics(output)
    assert [(d.file, d.line, d.column, d.severity, d.message) for d in found] == [
        ("src/a.c", 3, 5, "error", "expected ';'"),
        ("src/b.c", 10, 1, "info", "see here"),
    ]


def test_bad_output_and_bad_patterns_are_reported() -> None:
    with pytest.raises(LintFormatError, match="expected JSON"):
        parse_json_diagnostics("Traceback (most recent call last): ...")
    with pytest.raises(LintFormatError, match="line, message"):
        parse_line_diagnostics("a:1: b", r"(?P<path>\w+)")
    assert parse_json_diagnostics("") == []
