"""The `lint` and `tests` settings: commands the user names for files or tests agentls
should check their way (a language agentls does not detect, or an override of detection).

Each entry names a command (an argv list, never a shell line), what it covers (languages
and/or globs; neither = every file) and the output format it emits, so results come back in
the same structured shape as the detected tools'. The settings come from the editor, from
`.agentls.toml` or from `[tool.agentls]` in `pyproject.toml`, e.g.:

    [[tool.agentls.lint]]
    command = ["shellcheck", "-f", "gcc", "{paths}"]
    languages = ["shell"]
    format = 'regex:^(?P<file>[^:]+):(?P<line>\\d+):(?P<column>\\d+): (?P<message>.+)$'

    [[tool.agentls.tests]]
    command = ["make", "test", "ARGS={target}"]
    format = "raw"

An invalid entry is reported and dropped; the others apply (each entry of the list is
validated on its own, like every list of the settings tree).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import ClassVar, Final, Literal

from pydantic import Field, field_validator

from agentls.config.base import SettingsModel
from agentls.config.languages import LANGUAGES, canonical_language
from agentls.config.problems import entry_error
from agentls.config.regex import RegexGroupsError, compile_user_regex

__all__ = [
    "LINT_FORMATS",
    "REGEX_PREFIX",
    "TEST_FORMATS",
    "CheckEntry",
    "ChecksSettings",
    "LintEntry",
    "TestEntry",
]

REGEX_PREFIX: Final = "regex:"

LINT_FORMATS: Final[tuple[str, ...]] = (
    "eslint-json",
    "ruff-json",
    "tsc",
    "go-json",
    "cargo-json",
    "sarif",
    "mypy",
    "pyright-json",
    "pylint-json",
    "rubocop-json",
    "gofmt",
    "biome-json",
    "junit-xml",
    "raw",
)
"""What a lint command may print: the issue's formats plus those of the detected tools.
`regex:<pattern>` is also accepted (named groups `file`/`path`, `line`, `message`; optional
`column`, `severity`, `code`)."""

TEST_FORMATS: Final[tuple[str, ...]] = (
    "junit-xml",
    "go-json",
    "cargo-json",
    "jest-json",
    "vitest-json",
    "mocha-json",
    "rspec-json",
    "unittest",
    "raw",
)
"""What a test command may write: JUnit XML (from `{report}` or stdout), `go test -json`,
`cargo test`, the JSON reporters of jest/vitest/mocha/rspec, unittest's text, or raw text.
`regex:<pattern>` is also accepted: each match is one failure (groups `message` and
optional `name`, `file`/`path`, `line`)."""

PLACEHOLDERS: Final[frozenset[str]] = frozenset(
    {"{paths}", "{files}", "{target}", "{root}", "{python}", "{report}", "{junitxml}"}
)


class CheckEntry(SettingsModel):
    """One configured command. `command` is an argv template: `{paths}` (lint: the files),
    `{target}` (tests: what to run), `{root}` (the project folder), `{python}` (the
    project's interpreter), `{report}` (tests: a file the command writes its report to). An
    invalid part drops the whole entry: a command with a bad `languages` or `cwd` must not
    run on other files or in another folder instead."""

    command: tuple[str, ...] = Field(min_length=1)
    languages: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    """Workspace-relative glob patterns (`src/**/*.sql`); with `languages`, either matches."""
    format: str = "raw"
    name: str | None = Field(default=None, min_length=1, max_length=60)
    """Shown in results (default: the program's name)."""
    cwd: str | None = None
    """The folder to run in, relative to the workspace root (default: the root)."""
    timeout: float | None = Field(default=None, gt=0, le=3600)
    install: str | None = Field(default=None, min_length=1, max_length=300)
    """How to install the program, shown when it is missing (e.g. `pip install sqlfluff`)."""

    formats: ClassVar[tuple[str, ...]] = LINT_FORMATS
    regex_groups: ClassVar[tuple[str, ...]] = ("file", "line", "message")

    @field_validator("command")
    @classmethod
    def _program_named(cls, command: tuple[str, ...]) -> tuple[str, ...]:
        if not command[0].strip() or command[0] in PLACEHOLDERS:
            raise entry_error("the first word must name the program to run")
        return command

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, languages: tuple[str, ...]) -> tuple[str, ...]:
        known = []
        for name in languages:
            canonical = canonical_language(name)
            if canonical is None:
                raise entry_error(
                    f"unknown language {name!r} (known: {', '.join(sorted(LANGUAGES))})"
                )
            known.append(canonical)
        return tuple(known)

    @field_validator("cwd")
    @classmethod
    def _cwd_inside(cls, cwd: str | None) -> str | None:
        if cwd is None:
            return None
        path = PurePosixPath(cwd.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts or cwd.startswith("~"):
            raise entry_error("must be a folder inside the workspace, relative to its root")
        return str(path)

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str) -> str:
        if value.startswith(REGEX_PREFIX):
            try:
                compile_user_regex(value[len(REGEX_PREFIX) :], cls.regex_groups)
            except RegexGroupsError as exc:
                raise entry_error(str(exc)) from None
            return value
        if value not in cls.formats:
            known = ", ".join(cls.formats)
            raise entry_error(f"unknown format {value!r} (known: {known}, or regex:<pattern>)")
        return value

    @property
    def label(self) -> str:
        return self.name or PurePosixPath(self.command[0]).name


class LintEntry(CheckEntry):
    """One `lint` entry: findings in the given format, for the files it covers."""

    formats: ClassVar[tuple[str, ...]] = LINT_FORMATS
    regex_groups: ClassVar[tuple[str, ...]] = ("file", "line", "message")


class TestEntry(CheckEntry):
    """One `tests` entry: a test command whose report is read in the given format."""

    __test__ = False  # not a pytest test class, despite the name

    formats: ClassVar[tuple[str, ...]] = TEST_FORMATS
    regex_groups: ClassVar[tuple[str, ...]] = ("message",)


class ChecksSettings(SettingsModel):
    """When agentls checks the agent's edits by itself (docs/review.md)."""

    after_edit: Literal["diagnostics", "lint", "off"] = "diagnostics"
    """After each write tool's change: report the problems it introduced (new diagnostics
    with file:line and message, resolved ones as a count) in the tool result, from the
    editor's language servers, agentls's own, or (`lint`) the configured linter; `off`:
    never."""
    after_edit_seconds: float = Field(default=3.0, gt=0, le=60)
    """Longest wait for one source's answer after an edit; a late source is named as "not
    ready in time" and the edit goes on."""
    before_review: bool = True
    """When a run ends with staged edits, check each staged file in the shadow (new
    diagnostics and lint findings against the file before the session, and the relevant
    tests) and show the result per file wherever the edits are reviewed."""
    before_review_seconds: float = Field(default=20.0, gt=0, le=300)
    """Longest wait for one file's check before review ("not ready in time" past it)."""
    tests_seconds: float = Field(default=60.0, gt=0, le=1800)
    """Before review: the longest run of the relevant tests (those the agent ran, else
    those named after the changed files); past it they are stopped and said so."""
    block: Literal["off", "newErrors"] = "off"
    """Auto mode: `newErrors` keeps a file whose check finds new errors (or whose tests
    fail, before review) staged instead of writing it, with the reason."""
