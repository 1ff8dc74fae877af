"""Detection: which linters and test runner a project uses, read from its own files.

One module per ecosystem. Each returns the commands it chose, each with `why` (the file
that made the choice), and notes on the candidates it passed over, so the tool results and
`agentls doctor` can explain every choice. Within a role (the linter, the type checker,
the test runner) the first match wins, in the order the issue gives.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from agentls.tools.checks.detect.base import Detection
from agentls.tools.checks.projects import ProjectDir

__all__ = ["Detection", "detect"]


@cache
def _detectors() -> dict[str, Callable[[ProjectDir], Detection]]:
    from agentls.tools.checks.detect import go, node, python, ruby, rust

    return {
        "node": node.detect,
        "python": python.detect,
        "go": go.detect,
        "rust": rust.detect,
        "ruby": ruby.detect,
    }


def detect(ecosystem: str, project: ProjectDir) -> Detection:
    """What `project` uses for `ecosystem` (empty for an ecosystem agentls does not know)."""
    detector = _detectors().get(ecosystem)
    return detector(project) if detector is not None else Detection()
