"""lint and run_tests on a TypeScript project with the real eslint, tsc and vitest (npm,
installed by scripts/deps/checks.sh and linked in as the project's node_modules)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.tools.lint import LintTool
from agentls.tools.run_tests import RunTestsTool
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.checks_support import call, copy_fixture, npm_tools, require
from tests.shadow_support import make_ctx, stage, tree_state

MATH_FIXED = (
    (Path(__file__).parent / "fixtures/checks/ts/src/math.ts")
    .read_text()
    .replace("a - b", "a + b")
    .replace("let text", "const text")
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The fixture as the user has it after `npm ci` and a vitest run of their own: each
    package linked from the installed tools, and vitest's cache in node_modules/.vite."""
    require("node")
    root = copy_fixture("ts", tmp_path)
    modules = root / "node_modules"
    modules.mkdir()
    for entry in npm_tools().iterdir():
        if entry.name not in (".vite", ".cache"):
            (modules / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    (modules / ".vite" / "vitest").mkdir(parents=True)
    (modules / ".vite" / "vitest" / "results.json").write_text('{"the user\'s own run": true}')
    return root


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[ShadowRegistry]:
    reg = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield reg
    reg.close()


def _npm_entries() -> set[str]:
    return {p.name for p in npm_tools().iterdir()}


async def test_eslint_and_tsc_findings_in_one_shape(
    project: Path, registry: ShadowRegistry
) -> None:
    before, npm_before = tree_state(project), _npm_entries()
    result, is_error = await call(
        LintTool(shadows=registry), make_ctx(Workspace([project])), paths=["src"]
    )
    assert not is_error, result
    assert result["diagnostics"] == [
        {
            "file": "src/math.ts",
            "line": 6,
            "column": 7,
            "severity": "error",
            "code": "prefer-const",
            "message": "'text' is never reassigned. Use 'const' instead.",
            "source": "eslint",
            "fixable": True,
        },
        {
            "file": "src/total.ts",
            "line": 3,
            "column": 37,
            "severity": "error",
            "code": "TS2345",
            "message": "Argument of type 'string' is not assignable to parameter of type 'number'.",
            "source": "tsc",
            "fixable": False,
        },
    ]
    checks = {c["tool"]: c for c in result["checks"]}
    assert "eslint.config.mjs" in checks["eslint"]["why"]
    assert "tsconfig.json" in checks["tsc"]["why"]
    assert (
        checks["tsc"]["command"] == "node_modules/.bin/tsc --noEmit --pretty false -p tsconfig.json"
    )
    assert tree_state(project) == before  # nothing written into the user's tree
    assert _npm_entries() == npm_before  # nor into the linked node_modules


async def test_a_type_error_elsewhere_caused_by_the_edit_is_reported(
    project: Path, registry: ShadowRegistry
) -> None:
    """Linting only math.ts: tsc checks the project, so the broken caller shows up."""
    ws, changes = Workspace([project]), ChangeSet()
    stage(
        changes,
        project / "src" / "total.ts",
        'import { add } from "./math";\n\nexport const total: number = add(1, 2);\n',
    )
    stage(changes, project / "src" / "math.ts", MATH_FIXED.replace("b: number)", "b: string)"))
    result, _ = await call(LintTool(shadows=registry), make_ctx(ws, changes), paths=["src/math.ts"])
    assert [d["code"] for d in result["diagnostics"]] == ["TS2322"]  # in math.ts itself
    assert [(d["file"], d["code"]) for d in result["other_files"]] == [("src/total.ts", "TS2345")]


async def test_vitest_failure_structured_then_staged_fix_passes(
    project: Path, registry: ShadowRegistry
) -> None:
    before, npm_before = tree_state(project), _npm_entries()
    ws, changes = Workspace([project]), ChangeSet()
    tool = RunTestsTool(shadows=registry)
    failed, is_error = await call(tool, make_ctx(ws, changes))
    assert not is_error
    assert (failed["runner"], failed["status"], failed["passed"], failed["failed"]) == (
        "vitest",
        "failed",
        1,
        1,
    )
    [failure] = failed["failures"]
    assert failure["test"] == "test/math.test.ts::math adds"
    assert failure["location"] == "test/math.test.ts:6"
    assert "expected +0 to be 4" in failure["message"]
    assert "node_modules" not in failure["output"]  # the runner's own frames are dropped
    assert "vitest" in failed["why"]
    assert "raw" not in failed

    one, _ = await call(tool, make_ctx(ws, changes), target=failure["test"])
    assert (one["passed"], one["failed"], one["skipped"]) == (0, 1, 1)  # only that test ran

    stage(changes, project / "src" / "math.ts", MATH_FIXED)
    passed, _ = await call(tool, make_ctx(ws, changes))
    assert passed["status"] == "passed"
    assert passed["passed"] == 2
    assert tree_state(project) == before
    assert _npm_entries() == npm_before  # vitest's cache went to the shadow's node_modules


async def test_tools_missing_from_node_modules_name_the_install_command(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    require("node")
    project = copy_fixture("ts", tmp_path)  # no node_modules: `npm ci` was never run
    ctx = make_ctx(Workspace([project]))
    result, is_error = await call(LintTool(shadows=registry), ctx, paths=["src/math.ts"])
    assert is_error
    assert {p["tool"] for p in result["problems"]} == {"eslint", "tsc"}
    assert all(p["install"] == "npm ci (package-lock.json)" for p in result["problems"])
    assert "npm ci" in result["problems"][0]["message"]
    tests, is_error = await call(RunTestsTool(shadows=registry), ctx)
    assert is_error
    assert tests["status"] == "missing"
    assert "npm ci" in tests["message"]
