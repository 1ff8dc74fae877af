"""Test runner reports → one shape (`TestReport` of `TestCaseResult`s).

Every runner agentls drives writes a machine-readable report (JUnit XML, `go test -json`,
jest/vitest/mocha/rspec JSON) or, for cargo and unittest, text regular enough to read per
test. Each parser returns the cases it found; counts always come from the cases, because
runners disagree on what their own totals include. A test's `test_id` is what `run_tests`
accepts back as a `target`; `file`/`line` (1-based, as the runner printed the path) is
where the failure happened when the report says, else where the test is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "Outcome",
    "ReportError",
    "TestCaseResult",
    "TestReport",
    "parse_jest_json",
    "parse_mocha_json",
    "parse_rspec_json",
    "report_of",
]

Outcome = Literal["passed", "failed", "error", "skipped"]


class ReportError(ValueError):
    """The report is not in the format the runner was expected to write."""


@dataclass(frozen=True)
class TestCaseResult:
    """One test case; `details` is the failure/error body (traceback), `output` captured I/O."""

    __test__ = False  # not a pytest test class, despite the name

    test_id: str
    outcome: Outcome
    duration: float = 0.0
    message: str = ""
    details: str = ""
    output: str = ""
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class TestReport:
    __test__ = False

    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    duration: float = 0.0
    cases: list[TestCaseResult] = field(default_factory=list)

    @property
    def problems(self) -> list[TestCaseResult]:
        return [c for c in self.cases if c.outcome in ("failed", "error")]


def report_of(cases: Iterable[TestCaseResult], duration: float | None = None) -> TestReport:
    """A report counted from its cases (duration: given, else the cases' sum)."""
    listed = list(cases)
    count = {o: sum(1 for c in listed if c.outcome == o) for o in ("passed", "failed", "error")}
    return TestReport(
        tests=len(listed),
        passed=count["passed"],
        failed=count["failed"],
        errors=count["error"],
        skipped=sum(1 for c in listed if c.outcome == "skipped"),
        duration=round(duration if duration is not None else sum(c.duration for c in listed), 3),
        cases=listed,
    )


def _load(text: str, what: str) -> object:
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ReportError(f"no {what} in the output")
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{what} is not valid JSON ({exc})") from None
    return value


def _dict(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one (a part the runner left out)."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


_FRAME: Final = re.compile(
    r"(?:\(|at |\s|^)(?:file://)?(?P<file>/[^\s():]+|[\w.][^\s():]*)"
    r":(?P<line>\d+)(?::\d+)?(?=[):]|\s|$)",
    re.MULTILINE,
)


def _same_file(printed: str, file: str) -> bool:
    a, b = printed.removeprefix("./"), file.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _frame_in(stack: str, file: str | None) -> int | None:
    """The line of the first stack frame in `file` (where an assertion failed in it)."""
    if not file:
        return None
    for match in _FRAME.finditer(stack):
        if _same_file(match["file"], file):
            return int(match["line"])
    return None


# -- jest and vitest ------------------------------------------------------------------------

_JS_OUTCOME: Final[dict[str, Outcome]] = {
    "passed": "passed",
    "failed": "failed",
    "pending": "skipped",
    "skipped": "skipped",
    "todo": "skipped",
    "disabled": "skipped",
    "focused": "passed",
}


def parse_jest_json(text: str) -> TestReport:
    """`jest --json` / `vitest --reporter=json` (the same shape). A test file that failed
    before its tests ran (a syntax or import error) becomes one `error` case."""
    data = _load(text, "jest/vitest JSON report")
    if not isinstance(data, dict) or not isinstance(data.get("testResults"), list):
        raise ReportError("expected a jest/vitest report: an object with `testResults`")
    cases: list[TestCaseResult] = []
    for suite in data["testResults"]:
        if isinstance(suite, dict):
            cases.extend(_jest_suite(suite))
    return report_of(cases)


def _jest_suite(suite: dict[str, object]) -> list[TestCaseResult]:
    file = name if isinstance(name := suite.get("name"), str) else None
    assertions = [a for a in _list(suite.get("assertionResults")) if isinstance(a, dict)]
    cases = [_jest_case(a, file) for a in assertions]
    message = str(suite.get("message") or suite.get("failureMessage") or "")
    if suite.get("status") == "failed" and not any(c.outcome == "failed" for c in cases):
        cases.append(
            TestCaseResult(
                test_id=file or "test file",
                outcome="error",
                message=message.strip().splitlines()[0] if message.strip() else "failed to run",
                details=message.strip(),
                file=file,
                line=_frame_in(message, file),
            )
        )
    return cases


def _jest_case(assertion: dict[str, object], file: str | None) -> TestCaseResult:
    titles = [str(t) for t in _list(assertion.get("ancestorTitles"))]
    name = str(assertion.get("fullName") or " ".join([*titles, str(assertion.get("title", ""))]))
    failures = "\n".join(str(m) for m in _list(assertion.get("failureMessages")))
    location = assertion.get("location")
    line = _frame_in(failures, file)
    if line is None and isinstance(location, dict) and isinstance(location.get("line"), int):
        line = location["line"]
    duration = assertion.get("duration")
    return TestCaseResult(
        test_id=f"{file}::{name}" if file else name,
        outcome=_JS_OUTCOME.get(str(assertion.get("status")), "skipped"),
        duration=round(duration / 1000, 3) if isinstance(duration, int | float) else 0.0,
        message=failures.strip().splitlines()[0] if failures.strip() else "",
        details=failures.strip(),
        file=file,
        line=line,
    )


# -- mocha ----------------------------------------------------------------------------------


def parse_mocha_json(text: str) -> TestReport:
    """mocha's `json` reporter: `passes`, `failures`, `pending` lists of tests."""
    data = _load(text, "mocha JSON report")
    if not isinstance(data, dict) or "stats" not in data:
        raise ReportError("expected a mocha report: an object with `stats`")
    cases: list[TestCaseResult] = []
    for key, outcome in (("passes", "passed"), ("failures", "failed"), ("pending", "skipped")):
        for test in data.get(key) or []:
            if isinstance(test, dict):
                cases.append(_mocha_case(test, outcome))  # type: ignore[arg-type]
    duration = (data.get("stats") or {}).get("duration")
    return report_of(cases, duration / 1000 if isinstance(duration, int | float) else None)


def _mocha_case(test: dict[str, object], outcome: Outcome) -> TestCaseResult:
    err = _dict(test.get("err"))
    file = path if isinstance(path := test.get("file"), str) else None
    name = str(test.get("fullTitle") or test.get("title") or "")
    stack = str(err.get("stack") or "")
    # A hook failure ("before each" hook) is an error, not a failed assertion.
    if outcome == "failed" and ('"before' in name or '"after' in name):
        outcome = "error"
    duration = test.get("duration")
    return TestCaseResult(
        test_id=f"{file}::{name}" if file else name,
        outcome=outcome,
        duration=round(duration / 1000, 3) if isinstance(duration, int | float) else 0.0,
        message=str(err.get("message") or ""),
        details=stack.strip(),
        file=file,
        line=_frame_in(stack, file),
    )


# -- rspec ----------------------------------------------------------------------------------


_RUBY_LIBRARY_FRAME: Final = re.compile(r"/gems/|/rubygems-integration/|/bin/rspec:")
"""Frames of rspec itself and of gems: noise in a failure's backtrace."""


def parse_rspec_json(text: str) -> TestReport:
    """`rspec --format json`: `examples[]` with status, file and line; errors outside
    examples (a spec file that does not load) become one `error` case."""
    data = _load(text, "rspec JSON report")
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        raise ReportError("expected an rspec report: an object with `examples`")
    cases = [_rspec_case(e) for e in data["examples"] if isinstance(e, dict)]
    summary = _dict(data.get("summary"))
    outside = summary.get("errors_outside_of_examples_count")
    if isinstance(outside, int) and outside:
        messages = "\n".join(str(m) for m in data.get("messages") or [])
        cases.append(
            TestCaseResult(
                test_id="rspec",
                outcome="error",
                message=f"{outside} error(s) occurred outside of examples",
                details=messages.strip(),
            )
        )
    duration = summary.get("duration")
    return report_of(cases, duration if isinstance(duration, int | float) else None)


def _rspec_case(example: dict[str, object]) -> TestCaseResult:
    status = str(example.get("status"))
    outcome: Outcome = (
        "passed" if status == "passed" else "failed" if status == "failed" else "skipped"
    )
    exception = _dict(example.get("exception"))
    frames = [str(b) for b in _list(exception.get("backtrace"))]
    backtrace = "\n".join(f for f in frames if not _RUBY_LIBRARY_FRAME.search(f))
    file = str(example.get("file_path") or "") or None
    line = number if isinstance(number := example.get("line_number"), int) else None
    failed_at = _frame_in(backtrace, file)
    name = str(example.get("full_description") or example.get("description") or "")
    klass = str(exception.get("class") or "")
    message = str(exception.get("message") or "").strip()
    return TestCaseResult(
        test_id=f"{file}:{line}" if file and line else name,
        outcome=outcome,
        duration=_seconds(example.get("run_time")),
        message=f"{name}: {message}" if message else name,
        details=f"{klass}: {message}\n{backtrace}".strip(": \n") if exception else "",
        file=file,
        line=failed_at or line,
    )


def _seconds(value: object) -> float:
    """rspec's `run_time` (missing or null: 0)."""
    return float(value) if isinstance(value, int | float | str) and value else 0.0
