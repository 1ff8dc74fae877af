"""lint and run_tests on a Ruby project with the real rubocop and rspec (Debian's)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.tools.lint import LintTool
from agentls.tools.run_tests import RunTestsTool
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.checks_support import call, copy_fixture, require
from tests.shadow_support import make_ctx, stage, tree_state


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[ShadowRegistry]:
    reg = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield reg
    reg.close()


async def test_rubocop_and_rspec(tmp_path: Path, registry: ShadowRegistry) -> None:
    require("rubocop")
    require("rspec")
    project = copy_fixture("ruby", tmp_path)
    before = tree_state(project)
    ws, changes = Workspace([project]), ChangeSet()
    lint, is_error = await call(LintTool(shadows=registry), make_ctx(ws, changes), paths=["lib"])
    assert not is_error, lint
    assert [(d["file"], d["line"], d["code"], d["severity"]) for d in lint["diagnostics"]] == [
        ("lib/calc.rb", 8, "Lint/UselessAssignment", "warning")
    ]
    assert ".rubocop.yml found" in lint["checks"][0]["why"]

    tool = RunTestsTool(shadows=registry)
    tests, _ = await call(tool, make_ctx(ws, changes))
    assert (tests["runner"], tests["status"], tests["passed"], tests["failed"]) == (
        "rspec",
        "failed",
        1,
        1,
    )
    [failure] = tests["failures"]
    assert failure["test"] == "./spec/calc_spec.rb:2"
    assert failure["location"] == "spec/calc_spec.rb:3"  # the failing line, not the `it`
    assert "expected: 4" in failure["output"]
    assert "/gems/" not in failure["output"]

    one, _ = await call(tool, make_ctx(ws, changes), target="spec/calc_spec.rb:6")
    assert (one["status"], one["passed"]) == ("passed", 1)
    stage(
        changes,
        project / "lib" / "calc.rb",
        (project / "lib/calc.rb").read_text().replace("a - b", "a + b"),
    )
    fixed, _ = await call(tool, make_ctx(ws, changes))
    assert fixed["status"] == "passed"
    assert tree_state(project) == before
