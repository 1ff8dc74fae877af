"""Format name → parser, for lint findings and test reports (the names of the settings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from agentls.tools.checks.settings import REGEX_PREFIX
from agentls.workspace import lint_formats as lf
from agentls.workspace import lint_text_formats as lt
from agentls.workspace import test_reports as tr
from agentls.workspace import test_text_reports as tt
from agentls.workspace.junit import JUnitError, parse_junit, parse_junit_findings
from agentls.workspace.lint_formats import LintFormatError, RawDiagnostic
from agentls.workspace.test_reports import ReportError, TestReport

__all__ = ["LintFormatError", "ReportError", "parse_findings", "parse_report"]

_JSON_FINDINGS: Final[dict[str, Callable[[str], list[RawDiagnostic]]]] = {
    "eslint-json": lf.parse_json_diagnostics,
    "ruff-json": lf.parse_json_diagnostics,
    "cargo-json": lf.parse_cargo_json,
    "sarif": lf.parse_sarif,
    "pyright-json": lf.parse_pyright_json,
    "pylint-json": lf.parse_pylint_json,
    "rubocop-json": lf.parse_rubocop_json,
    "biome-json": lf.parse_biome_json,
}
_IGNORED_FILE_NOTES: Final = ("File ignored because", "File ignored by default")


def parse_findings(fmt: str, stdout: str, stderr: str) -> list[RawDiagnostic]:
    """Diagnostics in `fmt` (`raw` yields none: its output is shown as text)."""
    if fmt.startswith(REGEX_PREFIX):
        return lt.parse_regex(f"{stdout}\n{stderr}", fmt[len(REGEX_PREFIX) :])
    if fmt == "raw":
        return []
    if fmt == "tsc":
        return lt.parse_tsc(stdout + "\n" + stderr)
    if fmt == "mypy":
        return lt.parse_mypy(stdout)
    if fmt == "gofmt":
        return lt.parse_gofmt(stdout, stderr)
    if fmt == "go-json":
        return lf.parse_go_vet_json(f"{stdout}\n{stderr}")
    if fmt == "junit-xml":
        start = stdout.find("<")
        try:
            return parse_junit_findings(stdout[start:]) if start >= 0 else []
        except JUnitError as exc:
            raise LintFormatError(str(exc)) from None
    parser = _JSON_FINDINGS.get(fmt)
    if parser is None:
        raise LintFormatError(f"unknown lint format {fmt!r}")
    found = parser(stdout)
    if fmt == "eslint-json":  # a file eslint was given but its config ignores is not a finding
        found = [d for d in found if not d.message.startswith(_IGNORED_FILE_NOTES)]
    return found


def parse_report(
    fmt: str, text: str, stderr: str = "", *, go_module: str | None = None
) -> TestReport | None:
    """The test report in `fmt`; None for `raw` (nothing structured to read)."""
    if fmt.startswith(REGEX_PREFIX):
        return tt.parse_regex_failures(f"{text}\n{stderr}", fmt[len(REGEX_PREFIX) :])
    if fmt == "raw":
        return None
    if fmt == "junit-xml":
        start = text.find("<")
        if start < 0:
            raise ReportError("no JUnit XML in the output")
        return parse_junit(text[start:])
    if fmt in ("jest-json", "vitest-json"):
        return tr.parse_jest_json(text)
    if fmt == "mocha-json":
        return tr.parse_mocha_json(text)
    if fmt == "rspec-json":
        return tr.parse_rspec_json(text)
    if fmt == "go-json":
        return tt.parse_go_test_json(text, go_module, stderr)
    if fmt == "cargo-json":
        return tt.parse_cargo_test(text, stderr)
    if fmt == "unittest":
        return tt.parse_unittest(f"{text}\n{stderr}")
    raise ReportError(f"unknown test report format {fmt!r}")
