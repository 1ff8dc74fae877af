"""JUnit XML from runners other than pytest (no file/line attributes)."""

from __future__ import annotations

import pytest

from agentls.workspace.junit import JUnitError, parse_junit

GRADLE_STYLE = """<?xml version="1.0"?>
<testsuite name="com.acme.CalcTest" tests="3" failures="1" errors="0" skipped="1" time="0.5">
  <testcase classname="com.acme.CalcTest" name="adds" time="0.1"/>
  <testcase classname="com.acme.CalcTest" name="subtracts" time="0.2">
    <failure message="expected: &lt;1&gt; but was: &lt;2&gt;">org.opentest4j.AssertionFailedError
        at com.acme.CalcTest.subtracts(CalcTest.java:14)</failure>
    <system-out>debug line</system-out>
  </testcase>
  <testcase classname="com.acme.CalcTest" name="later"><skipped/></testcase>
</testsuite>
"""


def test_a_single_suite_without_file_attributes() -> None:
    report = parse_junit(GRADLE_STYLE)
    assert (report.tests, report.passed, report.failed, report.skipped) == (3, 1, 1, 1)
    assert report.duration == 0.5
    [failure] = report.problems
    assert failure.test_id == "com.acme.CalcTest.subtracts"
    assert failure.message == "expected: <1> but was: <2>"
    assert "CalcTest.java:14" in failure.details
    assert failure.output == "debug line"
    assert failure.file is None


def test_not_junit_is_an_error() -> None:
    with pytest.raises(JUnitError):
        parse_junit("<html></html>")
    with pytest.raises(JUnitError):
        parse_junit("not xml")
