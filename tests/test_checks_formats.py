"""Every lint and test format on captured (or format-faithful) output: no processes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentls.tools.checks.parsing import parse_findings, parse_report
from agentls.workspace.lint_formats import LintFormatError
from agentls.workspace.test_reports import ReportError

CAPTURED = Path(__file__).parent / "fixtures" / "checks" / "captured"


def _brief(fmt: str, stdout: str, stderr: str = "") -> list[tuple[object, ...]]:
    return [
        (d.file, d.line, d.column, d.severity, d.code, d.message)
        for d in parse_findings(fmt, stdout, stderr)
    ]


def test_tsc_lines_continuations_and_global_errors() -> None:
    out = (
        "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"
        "src/b.ts(10,1): error TS2345: Argument of type '{ a: string; }' is not assignable.\n"
        "  Types of property 'a' are incompatible.\n"
        "error TS5023: Unknown compiler option 'bogus'.\n"
    )
    assert _brief("tsc", out) == [
        ("src/a.ts", 3, 7, "error", "TS2322", "Type 'string' is not assignable to type 'number'."),
        (
            "src/b.ts",
            10,
            1,
            "error",
            "TS2345",
            "Argument of type '{ a: string; }' is not assignable.\n"
            "Types of property 'a' are incompatible.",
        ),
        ("tsconfig.json", 1, 1, "error", "TS5023", "Unknown compiler option 'bogus'."),
    ]


def test_mypy_codes_and_notes_folded_into_their_error() -> None:
    out = (
        'app.py:4:12: error: Incompatible return value type (got "int", expected "str")  '
        "[return-value]\n"
        'app.py:4:12: note: Did you mean "str(count)"?\n'
        'app.py:9:1: note: Revealed type is "builtins.int"\n'
    )
    assert _brief("mypy", out) == [
        (
            "app.py",
            4,
            12,
            "error",
            "return-value",
            'Incompatible return value type (got "int", expected "str")\n'
            'Did you mean "str(count)"?',
        ),
        ("app.py", 9, 1, "info", None, 'Revealed type is "builtins.int"'),
    ]


def test_go_vet_json_with_findings_and_a_package_that_does_not_compile() -> None:
    stderr = (
        "# example.com/m\n"
        'vet: ./broken.go:3:28: cannot use "x" (untyped string constant) as int value\n'
        "# example.com/m/calc\n"
        '{\n\t"example.com/m/calc": {\n\t\t"printf": [\n\t\t\t{\n'
        '\t\t\t\t"posn": "/w/calc/a.go:6:2",\n'
        '\t\t\t\t"message": "fmt.Printf format %d has arg x of wrong type string"\n'
        "\t\t\t}\n\t\t]\n\t}\n}\n"
    )
    assert _brief("go-json", "", stderr) == [
        (
            "./broken.go",
            3,
            28,
            "error",
            None,
            'cannot use "x" (untyped string constant) as int value',
        ),
        (
            "/w/calc/a.go",
            6,
            2,
            "warning",
            "printf",
            "fmt.Printf format %d has arg x of wrong type string",
        ),
    ]


def test_gofmt_lists_unformatted_files_and_syntax_errors() -> None:
    found = _brief("gofmt", "calc/sub.go\n", "main.go:4:1: expected declaration, found x\n")
    assert [f[:5] for f in found] == [
        ("calc/sub.go", 1, 1, "warning", "gofmt"),
        ("main.go", 4, 1, "error", "syntax"),
    ]


def test_cargo_json_uses_the_primary_span_and_drops_summaries() -> None:
    lines = [
        {"reason": "compiler-artifact"},
        {
            "reason": "compiler-message",
            "message": {
                "message": "length comparison to zero",
                "code": {"code": "clippy::len_zero"},
                "level": "error",
                "spans": [
                    {
                        "file_name": "src/x.rs",
                        "line_start": 1,
                        "column_start": 1,
                        "is_primary": False,
                    },
                    {
                        "file_name": "src/lib.rs",
                        "line_start": 9,
                        "column_start": 5,
                        "is_primary": True,
                    },
                ],
                "children": [{"spans": [{"suggested_replacement": "items.is_empty()"}]}],
            },
        },
        {
            "reason": "compiler-message",
            "message": {
                "message": "aborting due to 1 previous error",
                "level": "error",
                "spans": [],
            },
        },
    ]
    out = "\n".join(json.dumps(line) for line in lines)
    [diag] = parse_findings("cargo-json", out, "")
    assert (diag.file, diag.line, diag.column, diag.code, diag.fixable) == (
        "src/lib.rs",
        9,
        5,
        "clippy::len_zero",
        True,
    )


def test_sarif_results_with_uris_and_levels() -> None:
    sarif = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "semgrep"}},
                "results": [
                    {
                        "ruleId": "no-eval",
                        "level": "error",
                        "message": {"text": "eval is dangerous"},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {"uri": "file:///w/src/a%20b.js"},
                                    "region": {"startLine": 4, "startColumn": 2},
                                }
                            }
                        ],
                    },
                    {
                        "ruleId": "style",
                        "level": "note",
                        "message": {"text": "consider"},
                        "locations": [
                            {"physicalLocation": {"artifactLocation": {"uri": "src/c.js"}}}
                        ],
                    },
                ],
            }
        ],
    }
    found = parse_findings("sarif", json.dumps(sarif), "")
    assert [(d.file, d.line, d.column, d.severity, d.code, d.tool) for d in found] == [
        ("/w/src/a b.js", 4, 2, "error", "no-eval", "semgrep"),
        ("src/c.js", 1, 1, "info", "style", "semgrep"),
    ]


def test_pyright_pylint_rubocop_and_biome() -> None:
    pyright = {
        "generalDiagnostics": [
            {
                "file": "/w/a.py",
                "severity": "error",
                "message": "Cannot access attribute",
                "rule": "reportAttributeAccessIssue",
                "range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 9}},
            }
        ]
    }
    assert _brief("pyright-json", json.dumps(pyright)) == [
        ("/w/a.py", 3, 5, "error", "reportAttributeAccessIssue", "Cannot access attribute")
    ]
    pylint = [
        {
            "type": "convention",
            "path": "a.py",
            "line": 1,
            "column": 0,
            "symbol": "missing-docstring",
            "message-id": "C0114",
            "message": "Missing module docstring",
        },
        {
            "type": "error",
            "path": "a.py",
            "line": 5,
            "column": 4,
            "symbol": "no-member",
            "message-id": "E1101",
            "message": "no member",
        },
    ]
    assert _brief("pylint-json", json.dumps(pylint)) == [
        ("a.py", 1, 1, "info", "missing-docstring", "Missing module docstring"),
        ("a.py", 5, 5, "error", "no-member", "no member"),
    ]
    rubocop = {
        "files": [
            {
                "path": "lib/a.rb",
                "offenses": [
                    {
                        "severity": "convention",
                        "message": "Prefer single-quoted strings.",
                        "cop_name": "Style/StringLiterals",
                        "correctable": True,
                        "location": {
                            "start_line": 3,
                            "start_column": 8,
                            "last_line": 3,
                            "last_column": 14,
                        },
                    },
                    {
                        "severity": "error",
                        "message": "unexpected token",
                        "cop_name": "Lint/Syntax",
                        "location": {"line": 7, "column": 1},
                    },
                ],
            }
        ]
    }
    assert _brief("rubocop-json", json.dumps(rubocop)) == [
        ("lib/a.rb", 3, 8, "info", "Style/StringLiterals", "Prefer single-quoted strings."),
        ("lib/a.rb", 7, 1, "error", "Lint/Syntax", "unexpected token"),
    ]
    biome = (CAPTURED / "biome-2.json").read_text()  # biome 2.6.8, `biome lint --reporter=json`
    found = _brief("biome-json", biome)
    assert ("src/x.js", 2, 7, "error", "lint/suspicious/noDoubleEquals") in [f[:5] for f in found]
    assert ("src/x.js", 1, 1, "warning", "lint/style/useConst") in [f[:5] for f in found]


def test_junit_from_a_linter() -> None:
    xml = (
        '<?xml version="1.0"?><testsuites><testsuite name="/w/src/a.js" tests="1">'
        '<testcase name="org.eslint.semi" classname="/w/src/a"><failure message="Missing '
        'semicolon."><![CDATA[line 3, col 10, Error - Missing semicolon. (semi)]]></failure>'
        "</testcase></testsuite></testsuites>"
    )
    assert _brief("junit-xml", xml) == [
        ("/w/src/a.js", 3, 10, "error", "org.eslint.semi", "Missing semicolon.")
    ]
    with pytest.raises(LintFormatError):
        parse_findings("junit-xml", "<not xml", "")


def test_eslint_ignored_file_notices_are_not_findings() -> None:
    out = json.dumps(
        [
            {
                "filePath": "/w/dist/a.js",
                "messages": [
                    {"severity": 1, "message": "File ignored because of a matching ignore pattern."}
                ],
            }
        ]
    )
    assert parse_findings("eslint-json", out, "") == []


def test_unreadable_structured_output_is_an_error_not_silence() -> None:
    with pytest.raises(LintFormatError):
        parse_findings("eslint-json", "Oops! Something went wrong!", "")
    with pytest.raises(LintFormatError):
        parse_findings("sarif", "[]", "")


def test_user_regex_runs_in_linear_time() -> None:
    """A project file can set the `regex:` format: a catastrophic pattern for a backtracking
    engine must not freeze the server (RE2 does this in microseconds; `re` in ~forever)."""
    evil = r"regex:^(?P<file>(a+)+)b:(?P<line>\d+): (?P<message>.*)$"
    text = "a" * 40 + "c\n" + "x.py:3: fine\n"
    started = time.monotonic()
    assert parse_findings(evil, text, "") == []
    assert time.monotonic() - started < 10  # 2**40 steps for a backtracking engine


# -- test reports ---------------------------------------------------------------------------


def test_go_test_json_per_test_and_build_failures() -> None:
    report = parse_report(
        "go-json", (CAPTURED / "go-test.jsonl").read_text(), go_module="example.com/checks"
    )
    assert report is not None
    assert (report.passed, report.failed) == (1, 1)
    [failure] = report.problems
    assert (failure.test_id, failure.file, failure.line) == (
        "calc::TestAdd",
        "calc/calc_test.go",
        7,
    )
    build = (
        '{"Action":"output","Package":"example.com/m/api",'
        '"Output":"FAIL\\texample.com/m/api [build failed]\\n"}\n'
        '{"Action":"fail","Package":"example.com/m/api","Elapsed":0}\n'
    )
    stderr = "# example.com/m/api\napi/x.go:3:2: undefined: y\n"
    broken = parse_report("go-json", build, stderr, go_module="example.com/m")
    assert broken is not None
    [error] = broken.problems
    assert error.outcome == "error"
    assert error.test_id == "api"
    assert "undefined: y" in error.details


def test_cargo_test_old_panic_format_and_build_errors() -> None:
    out = (
        "running 1 test\ntest it_works ... FAILED\n\nfailures:\n\n---- it_works stdout ----\n"
        "thread 'it_works' panicked at 'assertion failed: false', src/main.rs:4:5\n\n"
        "failures:\n    it_works\n\ntest result: FAILED. 0 passed; 1 failed\n"
    )
    report = parse_report("cargo-json", out)
    assert report is not None
    [case] = report.problems
    assert (case.test_id, case.file, case.line, case.message) == (
        "it_works",
        "src/main.rs",
        4,
        "assertion failed: false",
    )
    error = json.dumps(
        {
            "reason": "compiler-message",
            "message": {
                "message": "mismatched types",
                "level": "error",
                "rendered": "error[E0308]: mismatched types",
                "spans": [{"file_name": "src/lib.rs", "line_start": 2, "is_primary": True}],
            },
        }
    )
    broken = parse_report("cargo-json", error, "error: could not compile `x`")
    assert broken is not None
    [build] = broken.problems
    assert (build.test_id, build.outcome, build.file, build.line) == (
        "build",
        "error",
        "src/lib.rs",
        2,
    )


def test_jest_report_with_a_file_that_failed_to_load() -> None:
    report_json = {
        "testResults": [
            {
                "name": "/w/test/a.test.js",
                "status": "failed",
                "message": "SyntaxError: Unexpected token (3:4)\n    at /w/test/a.test.js:3:4",
                "assertionResults": [],
            },
            {
                "name": "/w/test/b.test.js",
                "status": "passed",
                "assertionResults": [
                    {
                        "ancestorTitles": ["b"],
                        "title": "works",
                        "status": "passed",
                        "fullName": "b works",
                    },
                    {
                        "ancestorTitles": ["b"],
                        "title": "later",
                        "status": "pending",
                        "fullName": "b later",
                    },
                ],
            },
        ]
    }
    report = parse_report("jest-json", json.dumps(report_json))
    assert report is not None
    assert (report.passed, report.skipped, report.errors) == (1, 1, 1)
    [error] = report.problems
    assert (error.test_id, error.line) == ("/w/test/a.test.js", 3)


def test_mocha_and_rspec_reports() -> None:
    mocha = {
        "stats": {"tests": 2, "passes": 1, "failures": 1, "duration": 12},
        "passes": [{"title": "ok", "fullTitle": "math ok", "file": "/w/test/m.js", "duration": 1}],
        "failures": [
            {
                "title": "adds",
                "fullTitle": "math adds",
                "file": "/w/test/m.js",
                "err": {
                    "message": "expected 0 to equal 4",
                    "stack": "AssertionError: expected 0 to equal 4\n"
                    "    at Context.<anonymous> (/w/test/m.js:7:12)",
                },
            }
        ],
        "pending": [],
    }
    report = parse_report("mocha-json", json.dumps(mocha))
    assert report is not None
    assert (report.passed, report.failed) == (1, 1)
    [failure] = report.problems
    assert (failure.test_id, failure.line, failure.message) == (
        "/w/test/m.js::math adds",
        7,
        "expected 0 to equal 4",
    )
    rspec = {
        "examples": [
            {
                "id": "./spec/a_spec.rb[1:1]",
                "description": "adds",
                "full_description": "Calc adds",
                "status": "failed",
                "file_path": "./spec/a_spec.rb",
                "line_number": 4,
                "exception": {
                    "class": "RSpec::Expectations::ExpectationNotMetError",
                    "message": "expected: 4\n     got: 0",
                    "backtrace": ["./spec/a_spec.rb:5:in `block (2 levels) in <top (required)>'"],
                },
            },
            {
                "id": "./spec/a_spec.rb[1:2]",
                "description": "subs",
                "full_description": "Calc subs",
                "status": "passed",
                "file_path": "./spec/a_spec.rb",
                "line_number": 8,
            },
        ],
        "summary": {
            "duration": 0.01,
            "example_count": 2,
            "failure_count": 1,
            "pending_count": 0,
            "errors_outside_of_examples_count": 0,
        },
    }
    report = parse_report("rspec-json", json.dumps(rspec))
    assert report is not None
    assert (report.passed, report.failed) == (1, 1)
    [failure] = report.problems
    assert (failure.test_id, failure.file, failure.line) == (
        "./spec/a_spec.rb:4",
        "./spec/a_spec.rb",
        5,
    )


def test_unittest_summary_and_failure_blocks() -> None:
    out = (
        "test_a (t.T.test_a) ... FAIL\ntest_b (t.T) ... ok\n\n"
        + "=" * 70
        + "\nFAIL: test_a (t.T.test_a)\n"
        + "-" * 70
        + "\n"
        'Traceback (most recent call last):\n  File "/w/t.py", line 4, in test_a\n'
        "    self.assertEqual(1, 2)\nAssertionError: 1 != 2\n\n"
        + "-" * 70
        + "\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n"
    )
    report = parse_report("unittest", "", out)
    assert report is not None
    assert (report.tests, report.passed, report.failed) == (2, 1, 1)
    [failure] = report.problems
    assert (failure.test_id, failure.file, failure.line, failure.message) == (
        "t.T.test_a",
        "/w/t.py",
        4,
        "AssertionError: 1 != 2",
    )


def test_unreadable_reports_raise_so_the_tool_can_say_so() -> None:
    with pytest.raises(ReportError):
        parse_report("jest-json", "Error: Cannot find module 'jest'")
    with pytest.raises(ReportError):
        parse_report("junit-xml", "no xml here")
    assert parse_report("raw", "anything") is None
