"""What detection returns, and helpers the ecosystem detectors share."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentls.tools.checks.commands import CheckCommand

__all__ = ["Detection"]


@dataclass
class Detection:
    lint: list[CheckCommand] = field(default_factory=list)
    tests: list[CheckCommand] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Candidates passed over and why (`biome.json also present: eslint wins`)."""
    nothing_found: str = ""
    """Why no linter was found, for files that end up unchecked."""
