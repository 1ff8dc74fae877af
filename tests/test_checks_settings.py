"""The `lint` and `tests` settings: each entry validated on its own, bad ones reported and
dropped, the rest applied; a cloned project's commands only while project settings are
trusted; nothing in an entry can point a run outside the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.config import load_layer
from agentls.runtime.config_state import ConfigState, check_entries, load_project_config
from agentls.tools.checks.settings import LintEntry, TestEntry, validate_entries

GOOD = {
    "command": ["shellcheck", "-f", "gcc", "{paths}"],
    "languages": ["sh"],
    "format": "regex:^(?P<file>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<message>.+)$",
}


def test_entries_are_validated_one_by_one() -> None:
    raw = [
        GOOD,
        {"command": [], "format": "raw"},
        {"command": ["x"], "format": "jest-json"},  # a test format, not a lint format
        {"command": ["x"], "languages": ["klingon"]},
        {"command": ["x"], "format": "regex:(unclosed"},
        {"command": ["x"], "format": "regex:(?P<line>\\d+) (?P<message>.*)"},  # no file group
        {"command": ["x"], "frmat": "raw"},
    ]
    valid, problems = validate_entries(raw, LintEntry, "lint")
    assert valid == [GOOD]
    assert len(problems) == 6
    assert problems[1].startswith("lint[2] is invalid and ignored")
    assert "jest-json" in problems[1]
    assert "klingon" in problems[2]
    assert "does not compile" in problems[3]
    assert "lacks the named group(s) file" in problems[4]
    assert "frmat" in problems[5]
    entry = LintEntry.model_validate(GOOD)
    assert entry.languages == ("shell",)
    assert entry.label == "shellcheck"
    tests, _ = validate_entries(
        [{"command": ["go", "test", "-json", "{target}"], "format": "go-json"}], TestEntry, "tests"
    )
    assert tests
    assert TestEntry.model_validate(tests[0]).format == "go-json"


@pytest.mark.parametrize("cwd", ["../elsewhere", "/etc", "a/../../b", "~/x"])
def test_an_entry_cannot_run_outside_the_workspace(cwd: str) -> None:
    valid, problems = validate_entries([{"command": ["make"], "cwd": cwd}], TestEntry, "tests")
    assert valid == []
    assert "inside the workspace" in problems[0]


def test_backreferences_are_refused_with_a_reason() -> None:
    _, problems = validate_entries(
        [{"command": ["x"], "format": "regex:(?P<file>a)\\1(?P<line>1)(?P<message>m)"}],
        LintEntry,
        "lint",
    )
    assert "RE2 syntax, without backreferences" in problems[0]


def test_the_project_file_sets_lint_and_tests_and_bad_entries_are_reported(tmp_path: Path) -> None:
    (tmp_path / ".agentls.toml").write_text(
        "[[lint]]\ncommand = ['sqlfluff', 'lint', '{paths}']\nlanguages = ['sql']\nformat = 'raw'\n"
        "[[lint]]\ncommand = ['oops']\nformat = 'nonsense'\n"
        "[[tests]]\ncommand = ['make', 'test', 'ONLY={target}']\n"
    )
    result = load_project_config(tmp_path)
    assert [p for p in result.problems if "`lint[1]`" in str(p)]
    state = ConfigState()
    state.set_project(result)
    assert check_entries(state) == ((), ())  # held back until the workspace is trusted
    state.set_project_trusted(True)
    lint, tests = check_entries(state)
    assert [e.command for e in lint] == [("sqlfluff", "lint", "{paths}")]
    assert [e.command for e in tests] == [("make", "test", "ONLY={target}")]


def test_project_commands_need_trusted_project_settings(tmp_path: Path) -> None:
    """Like hooks: a cloned repository's commands run only once the user trusts the
    workspace (`agentls.agent.claude.trust`), never with `trustProjectSettings: false`; the user's
    own entries always apply."""
    (tmp_path / "pyproject.toml").write_text(
        "[[tool.agentls.lint]]\ncommand = ['evil', '{paths}']\n"
    )
    state = ConfigState()
    state.set_project(load_project_config(tmp_path))
    assert check_entries(state) == ((), ())
    state.set_project_trusted(True)
    assert [e.command for e in check_entries(state)[0]] == [("evil", "{paths}")]
    state.set_editor(
        {"trustProjectSettings": False, "lint": [{"command": ["mine", "{paths}"]}]}, "editor"
    )
    lint, tests = check_entries(state)
    assert [e.command for e in lint] == [("mine", "{paths}")]
    assert tests == ()
    state.set_editor({"trustProjectSettings": False}, "editor")
    assert check_entries(state) == ((), ())


def test_editor_settings_accept_camel_case_and_a_single_table() -> None:
    result = load_layer({"tests": {"command": ["npm", "test"], "timeout": 60}}, "editor", "user")
    assert result.problems == []
    assert result.values["tests"] == [{"command": ("npm", "test"), "timeout": 60}]
