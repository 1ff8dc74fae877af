"""JUnit XML → structured test results.

JUnit XML is the one result format nearly every test runner can write (pytest, jest via a
reporter, go-junit-report, gradle, cargo-nextest), so the test tool reads results from it
instead of scraping console output. pytest's `xunit1` family adds `file`/`line`, which
lets us rebuild real node ids (`tests/test_x.py::TestC::test_m`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET  # imported by the parsers: an idle server needs
    # no XML parser (0.5 MB of its memory, issue 33)

from agentls.workspace.lint_formats import RawDiagnostic, severity_of
from agentls.workspace.test_reports import (
    Outcome,
    ReportError,
    TestCaseResult,
    TestReport,
    report_of,
)

__all__ = ["JUnitError", "JUnitReport", "TestCaseResult", "parse_junit", "parse_junit_findings"]

_EMPTY_SECTION = re.compile(r"^-+ Captured (?:Log|Out|Err) -+\n\s*(?=\n|$)", re.MULTILINE)


class JUnitError(ReportError):
    """The file is not JUnit XML we can read."""


JUnitReport = TestReport
"""The common report shape (kept under its old name for callers of `parse_junit`)."""


def parse_junit(xml_text: str) -> TestReport:
    """Counts come from the test cases themselves, not the suite attributes: suites written
    by different tools disagree on whether `tests` includes skipped ones.
    """
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise JUnitError(f"not valid XML: {exc}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise JUnitError(f"expected <testsuites> or <testsuite>, got <{root.tag}>")
    suites = [root] if root.tag == "testsuite" else root.findall(".//testsuite")
    cases = [_case(tc) for suite in suites for tc in suite.findall("testcase")]
    duration = sum(_float(s.get("time")) for s in suites) or sum(c.duration for c in cases)
    return report_of(cases, duration)


_POSITION = re.compile(r"line (?P<line>\d+), col (?P<column>\d+), (?P<level>\w+)")


def parse_junit_findings(xml_text: str) -> list[RawDiagnostic]:
    """A linter's JUnit report (`eslint -f junit`, checkstyle converters): one finding per
    failed test case; the file is the case's `file`, else its suite's name, else its class;
    `line N, col M, Error` in the body gives the position and severity."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise JUnitError(f"not valid XML: {exc}") from exc
    suites = [root] if root.tag == "testsuite" else root.findall(".//testsuite")
    found = []
    for suite in suites:
        for tc in suite.findall("testcase"):
            problem = tc.find("failure")
            problem = problem if problem is not None else tc.find("error")
            if problem is None:
                continue
            body = (problem.text or "").strip()
            position = _POSITION.search(body)
            file = tc.get("file") or suite.get("name") or tc.get("classname") or ""
            line = int(position["line"]) if position else int(tc.get("line") or 1)
            found.append(
                RawDiagnostic(
                    file=file,
                    line=line,
                    column=int(position["column"]) if position else 1,
                    message=problem.get("message") or (body.splitlines()[0] if body else ""),
                    code=tc.get("name") or None,
                    severity=severity_of(position["level"] if position else "error"),
                )
            )
    return found


def _float(value: str | None) -> float:
    try:
        return float(value) if value else 0.0
    except ValueError:
        return 0.0


def _case(tc: ET.Element) -> TestCaseResult:
    outcome: Outcome = "passed"
    message = details = ""
    for tag, kind in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        found = tc.find(tag)
        if found is not None:
            outcome = kind  # type: ignore[assignment]
            message = found.get("message") or ""
            details = (found.text or "").strip()
            break
    file = tc.get("file")
    line_attr = tc.get("line")
    return TestCaseResult(
        test_id=_test_id(tc.get("classname") or "", tc.get("name") or "", file),
        outcome=outcome,
        duration=_float(tc.get("time")),
        message=message,
        details=details,
        output=_captured(tc),
        file=file,
        # pytest writes the 0-based line of the test's `def`.
        line=int(line_attr) + 1 if line_attr and line_attr.isdigit() else None,
    )


def _test_id(classname: str, name: str, file: str | None) -> str:
    """pytest-style node id when the file is known, else JUnit's `classname.name`."""
    if file and file.endswith(".py"):
        module = file[: -len(".py")].replace("/", ".").replace("\\", ".")
        rest = classname[len(module) :].lstrip(".") if classname.startswith(module) else ""
        parts = [file, *(p for p in rest.split(".") if p), name]
        return "::".join(parts)
    if classname:
        return f"{classname}.{name}" if name else classname
    return name


def _captured(tc: ET.Element) -> str:
    texts = []
    for tag in ("system-out", "system-err"):
        for element in tc.findall(tag):
            text = _EMPTY_SECTION.sub("", element.text or "").strip()
            if text:
                texts.append(text)
    return "\n".join(texts)
