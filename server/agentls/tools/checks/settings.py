"""The `lint` and `tests` settings for the tools (the models are part of the settings tree,
`agentls.config.checks`), and validating a list of entries one by one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import ValidationError

from agentls.config.checks import (
    LINT_FORMATS,
    PLACEHOLDERS,
    REGEX_PREFIX,
    TEST_FORMATS,
    CheckEntry,
    LintEntry,
    TestEntry,
)

__all__ = [
    "LINT_FORMATS",
    "PLACEHOLDERS",
    "REGEX_PREFIX",
    "TEST_FORMATS",
    "CheckEntry",
    "LintEntry",
    "TestEntry",
    "validate_entries",
]


def validate_entries(
    raw: object, model: type[CheckEntry], label: str
) -> tuple[list[dict[str, object]], list[str]]:
    """Each entry of `raw` validated on its own: the valid ones (as given) and one problem
    per invalid one, so a typo in one entry does not cost the others."""
    if isinstance(raw, Mapping):
        raw = [raw]  # a single entry written as a table
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        return [], [f"{label}: expected a list of entries, got {type(raw).__name__}"]
    valid: list[dict[str, object]] = []
    problems: list[str] = []
    for index, entry in enumerate(raw):
        try:
            model.model_validate(entry)
        except ValidationError as exc:
            why = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: "
                f"{e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors(include_url=False)
            )
            problems.append(f"{label}[{index}] is invalid and ignored ({why})")
            continue
        if isinstance(entry, Mapping):  # validated: a table of settings
            valid.append(dict(entry))
    return valid, problems
