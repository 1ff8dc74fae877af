"""lint and run_tests on Go (Debian's golang-go) and Rust (cargo, a crate without
dependencies, offline) projects, with the real toolchains; the user's tree stays as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.tools.checks import runner as runner_module
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


async def test_go_vet_and_gofmt_findings(tmp_path: Path, registry: ShadowRegistry) -> None:
    require("go")
    project = copy_fixture("go", tmp_path)
    before = tree_state(project)
    result, is_error = await call(
        LintTool(shadows=registry), make_ctx(Workspace([project])), paths=["."]
    )
    assert not is_error, result
    found = [
        (d["file"], d["line"], d["code"], d["source"], d["severity"]) for d in result["diagnostics"]
    ]
    assert found == [
        ("calc/sub.go", 1, "gofmt", "gofmt", "warning"),
        ("main.go", 10, "printf", "go vet", "warning"),
    ]
    assert "wrong type string" in result["diagnostics"][1]["message"]
    assert tree_state(project) == before


async def test_go_type_error_is_an_error_diagnostic(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    require("go")
    project = copy_fixture("go", tmp_path)
    ws, changes = Workspace([project]), ChangeSet()
    stage(
        changes,
        project / "calc" / "calc.go",
        'package calc\n\nfunc Add(a, b int) int {\n\treturn "x"\n}\n',
    )
    result, _ = await call(
        LintTool(shadows=registry), make_ctx(ws, changes), paths=["calc/calc.go"]
    )
    [error] = [d for d in result["diagnostics"] if d["severity"] == "error"]
    assert (error["file"], error["line"]) == ("calc/calc.go", 4)
    assert "cannot use" in error["message"]


async def test_go_test_failure_per_test(tmp_path: Path, registry: ShadowRegistry) -> None:
    require("go")
    project = copy_fixture("go", tmp_path)
    before = tree_state(project)
    ws, changes = Workspace([project]), ChangeSet()
    tool = RunTestsTool(shadows=registry)
    result, _ = await call(tool, make_ctx(ws, changes))
    assert (result["runner"], result["status"], result["passed"], result["failed"]) == (
        "go test",
        "failed",
        1,
        1,
    )
    failure = next(f for f in result["failures"] if f["test"] == "calc::TestAdd")
    assert failure["location"] == "calc/calc_test.go:7"
    assert "Add(2, 2) = 0, want 4" in failure["message"]

    one, _ = await call(tool, make_ctx(ws, changes), target="calc::TestAddZero")
    assert (one["status"], one["passed"], one["failed"]) == ("passed", 1, 0)

    stage(
        changes,
        project / "calc" / "calc.go",
        (project / "calc" / "calc.go").read_text().replace("a - b", "a + b"),
    )
    fixed, _ = await call(tool, make_ctx(ws, changes), target="calc/")
    assert (fixed["status"], fixed["passed"]) == ("passed", 2)
    assert tree_state(project) == before


async def test_cargo_clippy_findings(tmp_path: Path, registry: ShadowRegistry) -> None:
    require("cargo")
    project = copy_fixture("rust", tmp_path)
    before = tree_state(project)
    result, is_error = await call(
        LintTool(shadows=registry), make_ctx(Workspace([project])), paths=["src/lib.rs"]
    )
    assert not is_error, result
    found = {(d["line"], d["code"], d["severity"]) for d in result["diagnostics"]}
    assert (13, "unused_variables", "warning") in found  # rustc's, with clippy or cargo check
    [check] = result["checks"]
    if check["tool"] == "cargo clippy":
        assert (9, "clippy::len_zero", "error") in found
    else:  # Debian's cargo without clippy: detection fell back, and says so
        assert "clippy is not installed" in check["note"]
    assert len(result["diagnostics"]) == len(found)  # each reported once, not once per target
    assert tree_state(project) == before  # no target/ and no Cargo.lock in the user's tree


async def test_cargo_check_when_clippy_is_missing(
    tmp_path: Path, registry: ShadowRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("cargo")
    project = copy_fixture("rust", tmp_path)
    ws, changes = Workspace([project]), ChangeSet()
    stage(
        changes, project / "src" / "lib.rs", "pub fn label(count: i32) -> String {\n    count\n}\n"
    )

    real_probe = runner_module.CheckRunner._probe

    async def no_clippy(
        self: runner_module.CheckRunner, command: object, argv: list[str], limits: object
    ) -> bool:
        if "clippy" in argv:
            return False
        return await real_probe(self, command, argv, limits)  # type: ignore[arg-type]

    monkeypatch.setattr(runner_module.CheckRunner, "_probe", no_clippy)
    result, _ = await call(LintTool(shadows=registry), make_ctx(ws, changes), paths=["src/lib.rs"])
    [check] = result["checks"]
    assert check["tool"] == "cargo check"
    assert "clippy is not installed" in check["note"]
    assert [(d["line"], d["code"], d["severity"]) for d in result["diagnostics"]] == [
        (2, "E0308", "error")
    ]


async def test_cargo_test_failure_per_test(tmp_path: Path, registry: ShadowRegistry) -> None:
    require("cargo")
    project = copy_fixture("rust", tmp_path)
    before = tree_state(project)
    tool = RunTestsTool(shadows=registry)
    ctx = make_ctx(Workspace([project]))
    result, _ = await call(tool, ctx)
    assert (result["runner"], result["status"], result["passed"], result["failed"]) == (
        "cargo test",
        "failed",
        1,
        1,
    )
    [failure] = result["failures"]
    assert (failure["test"], failure["location"]) == ("tests::adds", "src/lib.rs:23")
    output = failure["output"].replace("`", "")  # Rust < 1.73 quotes the values
    assert "left: 0" in output
    assert "right: 4" in output
    assert failure["message"].startswith("assertion")  # the panic message, multi-line before 1.73
    one, _ = await call(tool, ctx, target="tests::labels")
    assert (one["status"], one["passed"], one["failed"]) == ("passed", 1, 0)
    assert tree_state(project) == before
