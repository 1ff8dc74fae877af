"""Test reports read from a stream of events or text: `go test -json`, `cargo test`,
unittest, and a user's `regex:` pattern.

cargo's test harness has no stable machine-readable output (`--format json` is nightly-only),
and unittest has none at all, but both print one line per test and a block per failure in a
fixed format, which is what is read here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final

from agentls.config.regex import RegexGroupsError, compile_user_regex
from agentls.workspace.lint_formats import cargo_message_records
from agentls.workspace.test_reports import (
    Outcome,
    ReportError,
    TestCaseResult,
    TestReport,
    report_of,
)

__all__ = ["parse_cargo_test", "parse_go_test_json", "parse_regex_failures", "parse_unittest"]


# -- go test -json --------------------------------------------------------------------------

_GO_POSITION: Final = re.compile(r"^\s+(?P<file>[\w./-]+\.go):(?P<line>\d+):", re.MULTILINE)


_GO_OUTCOMES: Final[dict[str, Outcome]] = {"pass": "passed", "fail": "failed", "skip": "skipped"}


@dataclass
class _GoTest:
    package: str
    name: str | None
    outcome: Outcome | None = None
    elapsed: float = 0.0
    output: list[str] = field(default_factory=list)


def parse_go_test_json(text: str, module: str | None = None, stderr: str = "") -> TestReport:
    """`go test -json` events → one case per test (subtests included, `Parent/sub`), plus an
    `error` case per package that failed outside any test (a build error: its compiler
    output comes on stderr). With the module path from go.mod, files are given relative to
    the module root (`calc/calc_test.go`), as the test ids are (`calc::TestAdd`)."""
    tests: dict[tuple[str, str | None], _GoTest] = {}
    seen_event = False
    for line in text.splitlines():
        event = _go_event(line)
        if event is None:
            continue
        seen_event = True
        test = event.get("Test")
        key = (str(event.get("Package", "")), test if isinstance(test, str) else None)
        entry = tests.setdefault(key, _GoTest(*key))
        action = event.get("Action")
        if action == "output":
            entry.output.append(str(event.get("Output", "")))
        elif action in ("pass", "fail", "skip"):
            entry.outcome = _GO_OUTCOMES[action]
            elapsed = event.get("Elapsed")
            entry.elapsed = float(elapsed) if isinstance(elapsed, int | float) else 0.0
    if not seen_event and not stderr.strip():
        raise ReportError("no `go test -json` events in the output")
    cases = [_go_case(t, module) for t in tests.values() if t.name is not None and t.outcome]
    cases += _go_package_failures(tests, module, stderr)
    return report_of(cases)


def _go_event(line: str) -> dict[str, object] | None:
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and "Action" in event else None


def _go_dir(package: str, module: str | None) -> str:
    if module and package == module:
        return ""
    if module and package.startswith(module + "/"):
        return package[len(module) + 1 :]
    return package


def _go_case(test: _GoTest, module: str | None) -> TestCaseResult:
    folder = _go_dir(test.package, module)
    output = "".join(test.output)
    position = _GO_POSITION.search(output)
    file = line = None
    if position:
        file = f"{folder}/{position['file']}" if folder else position["file"]
        line = int(position["line"])
    body = "".join(o for o in test.output if not o.startswith(("=== RUN", "=== PAUSE", "=== CONT")))
    message = next((o.strip() for o in test.output if _GO_POSITION.match(o)), "")
    return TestCaseResult(
        test_id=f"{folder or '.'}::{test.name}",
        outcome=test.outcome or "failed",
        duration=test.elapsed,
        message=message,
        details=body.strip() if test.outcome == "failed" else "",
        file=file,
        line=line,
    )


def _go_package_failures(
    tests: dict[tuple[str, str | None], _GoTest], module: str | None, stderr: str
) -> list[TestCaseResult]:
    failed_tests = {pkg for (pkg, name), t in tests.items() if name and t.outcome == "failed"}
    cases = []
    for (package, name), entry in tests.items():
        if name is not None or entry.outcome != "failed" or package in failed_tests:
            continue
        output = "".join(entry.output).strip()
        folder = _go_dir(package, module)
        section = _stderr_section(stderr, package)
        cases.append(
            TestCaseResult(
                test_id=f"{folder or '.'}",
                outcome="error",
                message=f"package {package} failed outside its tests (build or setup error)",
                details="\n".join(p for p in (section, output) if p).strip(),
            )
        )
    if not cases and stderr.strip() and not tests:
        cases.append(
            TestCaseResult(
                test_id=".", outcome="error", message="go test failed", details=stderr.strip()
            )
        )
    return cases


def _stderr_section(stderr: str, package: str) -> str:
    """The `# package` block of go's stderr (compiler errors of that package)."""
    lines, inside = [], False
    for line in stderr.splitlines():
        if line.startswith("# "):
            inside = line[2:].split()[0] == package if line[2:].split() else False
            continue
        if inside:
            lines.append(line)
    return "\n".join(lines)


# -- cargo test -----------------------------------------------------------------------------

_CARGO_RESULT: Final = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<result>ok|FAILED|ignored)\b")
_CARGO_SECTION: Final = re.compile(r"^---- (?P<name>.+?) std(?:out|err) ----$")
_PANIC_NEW: Final = re.compile(r"panicked at (?P<file>[^\s:]+):(?P<line>\d+):\d+:?\s*$")
# Before Rust 1.73 the message is quoted and may span lines (`assert_eq!`'s left/right).
_PANIC_OLD: Final = re.compile(
    r"panicked at '(?P<message>.*?)', (?P<file>[^\s:]+):(?P<line>\d+):\d+", re.DOTALL
)


def parse_cargo_test(text: str, stderr: str = "") -> TestReport:
    """`cargo test --message-format=json`: compiler messages as JSON lines (errors become
    `error` cases: the tests did not build), the harness's own lines as text."""
    cases: list[TestCaseResult] = _cargo_build_errors(text)
    results: dict[str, Outcome] = {}
    sections = _cargo_sections(text)
    for line in text.splitlines():
        match = _CARGO_RESULT.match(line)
        if match:
            word = match["result"]
            results[match["name"]] = (
                "passed" if word == "ok" else "failed" if word == "FAILED" else "skipped"
            )
    for name, outcome in results.items():
        cases.append(_cargo_case(name, outcome, sections.get(name, "")))
    if not cases and "error" in stderr and "could not compile" in stderr:
        cases.append(
            TestCaseResult("build", "error", message="the tests did not compile", details=stderr)
        )
    if not cases and "running " not in text and "test result:" not in text:
        raise ReportError("no cargo test results in the output")
    return report_of(cases)


def _cargo_sections(text: str) -> dict[str, str]:
    """`---- name stdout ----` blocks: a failed test's output and panic message."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = _CARGO_SECTION.match(line)
        if header:
            current = sections.setdefault(header["name"], [])
            continue
        if current is not None and (line in ("failures:", "successes:") or line.startswith("{")):
            current = None
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}


def _cargo_case(name: str, outcome: Outcome, section: str) -> TestCaseResult:
    file = line = None
    message = ""
    lines = section.splitlines()
    for index, text in enumerate(lines):
        new = _PANIC_NEW.search(text)
        if new:
            file, line = new["file"], int(new["line"])
            message = lines[index + 1].strip() if index + 1 < len(lines) else ""
            break
    old = None if file else _PANIC_OLD.search(section)
    if old:
        file, line, message = old["file"], int(old["line"]), old["message"]
    return TestCaseResult(
        test_id=name,
        outcome=outcome,
        message=message,
        details=section if outcome == "failed" else "",
        file=file,
        line=line,
    )


def _cargo_build_errors(text: str) -> list[TestCaseResult]:
    cases = []
    for message in cargo_message_records(text):
        if message.get("level") != "error":
            continue
        listed = message.get("spans")
        spans = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
        primary = next((s for s in spans if s.get("is_primary")), None)
        if primary is None:
            continue
        rendered = message.get("rendered")
        cases.append(
            TestCaseResult(
                test_id="build",
                outcome="error",
                message=str(message.get("message", "")),
                details=str(rendered or message.get("message", "")).strip(),
                file=str(primary.get("file_name")),
                line=primary.get("line_start")
                if isinstance(primary.get("line_start"), int)
                else None,
            )
        )
    return cases


# -- unittest -------------------------------------------------------------------------------

_UNITTEST_BLOCK: Final = re.compile(
    r"^={50,}\n(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): "
    r"(?P<name>\S+) \((?P<where>[^)]*)\)[^\n]*\n-{50,}\n"
    r"(?P<body>.*?)(?=^={50,}$|^-{50,}\nRan )",
    re.MULTILINE | re.DOTALL,
)
_UNITTEST_RAN: Final = re.compile(r"^Ran (?P<count>\d+) tests? in (?P<secs>[\d.]+)s", re.MULTILINE)
_UNITTEST_COUNTS: Final = re.compile(
    r"(?P<key>failures|errors|skipped|expected failures|unexpected successes)=(?P<n>\d+)"
)
_TRACE_FILE: Final = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)


def parse_unittest(text: str) -> TestReport:
    """`python -m unittest`'s summary (`Ran N tests`, `FAILED (failures=1, ...)`) and its
    failure blocks; the failure's line is the deepest traceback frame outside the stdlib."""
    ran = _UNITTEST_RAN.search(text)
    if ran is None:
        raise ReportError("no unittest summary (`Ran N tests`) in the output")
    tail = text[ran.end() :]
    counts = {m["key"]: int(m["n"]) for m in _UNITTEST_COUNTS.finditer(tail)}
    cases = [_unittest_case(m) for m in _UNITTEST_BLOCK.finditer(text)]
    failed = counts.get("failures", 0) + counts.get("unexpected successes", 0)
    errors = counts.get("errors", 0)
    skipped = counts.get("skipped", 0)
    total = int(ran["count"])
    return TestReport(
        tests=total,
        passed=max(total - failed - errors - skipped, 0),
        failed=failed,
        errors=errors,
        skipped=skipped,
        duration=float(ran["secs"]),
        cases=cases,
    )


def _unittest_case(match: re.Match[str]) -> TestCaseResult:
    where = match["where"]
    # Python >= 3.11 prints the full dotted id in parentheses, older ones the class only.
    test_id = where if where.endswith("." + match["name"]) else f"{where}.{match['name']}"
    body = match["body"].strip()
    frames = [
        f
        for f in _TRACE_FILE.finditer(body)
        if "/unittest/" not in f["file"] and "/lib/python" not in f["file"]
    ]
    last = frames[-1] if frames else None
    lines = body.splitlines()
    return TestCaseResult(
        test_id=test_id,
        outcome="error" if match["kind"] == "ERROR" else "failed",
        message=lines[-1] if lines else match["kind"],
        details=body,
        file=last["file"] if last else None,
        line=int(last["line"]) if last else None,
    )


# -- regex ----------------------------------------------------------------------------------


def parse_regex_failures(text: str, pattern: str) -> TestReport:
    """A user's `regex:` test format: each match is one failure (`message`, optional `name`,
    `file`, `line`); passing tests are not counted."""
    try:
        compiled = compile_user_regex(pattern, ("message",))
    except RegexGroupsError as exc:
        raise ReportError(str(exc)) from None
    cases = []
    for groups in compiled.matches(text):
        line = groups.get("line", "")
        cases.append(
            TestCaseResult(
                test_id=groups.get("name") or groups.get("file") or "failure",
                outcome="failed",
                message=groups.get("message", "").strip(),
                details=groups.get("message", "").strip(),
                file=groups.get("file"),
                line=int(line) if line.isdigit() else None,
            )
        )
    return report_of(cases)
