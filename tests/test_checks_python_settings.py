"""mypy on a Python project, and the `lint` / `tests` settings with real commands: a
`regex:` format, a configured tool that is missing, a test command that hangs."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.tools.checks.settings import LintEntry, TestEntry
from agentls.tools.lint import LintConfig, LintTool
from agentls.tools.run_tests import RunTestsTool, TestConfig
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.checks_support import call, copy_fixture
from tests.shadow_support import (
    make_ctx,
    process_gone,
    read_when_there,
    stage,
    tree_state,
    unsandboxed,
)


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[ShadowRegistry]:
    reg = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield reg
    reg.close()


async def test_mypy_runs_when_the_project_configures_it(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    project = copy_fixture("python", tmp_path)
    before = tree_state(project)
    ws, changes = Workspace([project]), ChangeSet()
    tool = LintTool(shadows=registry)
    result, is_error = await call(tool, make_ctx(ws, changes), paths=["shop"])
    assert not is_error, result
    assert result["diagnostics"] == [
        {
            "file": "shop/cart.py",
            "line": 6,
            "column": 12,
            "severity": "error",
            "code": "return-value",
            "message": 'Incompatible return value type (got "int", expected "str")',
            "source": "mypy",
            "fixable": False,
        }
    ]
    assert {c["tool"] for c in result["checks"]} == {"ruff", "mypy"}
    assert (
        "[tool.mypy] in pyproject.toml"
        in next(c for c in result["checks"] if c["tool"] == "mypy")["why"]
    )
    stage(
        changes,
        project / "shop" / "cart.py",
        "def label(count: int) -> str:\n    return str(count)\n",
    )
    fixed, _ = await call(tool, make_ctx(ws, changes), paths=["shop/cart.py"])
    assert fixed["diagnostics"] == []
    assert tree_state(project) == before  # .mypy_cache went to the shadow


SQL_LINT = """\
import sys
for name in sys.argv[1:]:
    for number, line in enumerate(open(name), 1):
        if "select *" in line.lower():
            print(f"{name}|{number}|W01|avoid SELECT *")
"""


async def test_a_lint_setting_with_a_regex_format(tmp_path: Path, registry: ShadowRegistry) -> None:
    project = tmp_path / "db"
    (project / "queries").mkdir(parents=True)
    (project / "queries" / "users.sql").write_text("-- users\nSELECT * FROM users;\n")
    entry = LintEntry(
        name="sqlcheck",
        command=(sys.executable, "-c", SQL_LINT, "{paths}"),
        languages=("sql",),
        format=r"regex:^(?P<file>[^|]+)\|(?P<line>\d+)\|(?P<code>\w+)\|(?P<message>.+)$",
    )
    tool = LintTool(LintConfig(entries=(entry,)), shadows=registry)
    result, is_error = await call(tool, make_ctx(Workspace([project])), paths=["queries"])
    assert not is_error, result
    assert result["diagnostics"] == [
        {
            "file": "queries/users.sql",
            "line": 2,
            "column": 1,
            "severity": "warning",
            "code": "W01",
            "message": "avoid SELECT *",
            "source": "sqlcheck",
            "fixable": False,
        }
    ]
    assert result["checks"][0]["why"] == "configured in the `lint` setting (entry 0)"


async def test_a_setting_overrides_detection_for_the_files_it_covers(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    project = copy_fixture("python", tmp_path)
    entry = LintEntry(
        name="echo-lint",
        command=(sys.executable, "-c", "import sys; print(sys.argv[1] + ':1:1: hello')", "{paths}"),
        globs=("shop/cart.py",),
        format=r"regex:^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<message>.+)$",
    )
    tool = LintTool(LintConfig(entries=(entry,)), shadows=registry)
    result, _ = await call(
        tool, make_ctx(Workspace([project])), paths=["shop/cart.py", "shop/__init__.py"]
    )
    assert [(d["file"], d["source"]) for d in result["diagnostics"]] == [
        ("shop/cart.py", "echo-lint")
    ]
    ran = {c["tool"]: c["command"] for c in result["checks"]}
    assert "shop/cart.py" not in ran["ruff"]
    assert "shop/__init__.py" in ran["ruff"]


async def test_a_configured_linter_that_is_missing_is_an_error(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    project = copy_fixture("python", tmp_path)
    entry = LintEntry(
        command=("sqlfluff-not-here", "lint", "{paths}"),
        languages=("python",),
        install="pip install sqlfluff",
    )
    tool = LintTool(LintConfig(entries=(entry,)), shadows=registry)
    result, is_error = await call(tool, make_ctx(Workspace([project])), paths=["shop/cart.py"])
    assert is_error
    [problem] = result["problems"]
    assert problem["tool"] == "sqlfluff-not-here"
    assert problem["install"] == "pip install sqlfluff"
    assert "could not run" in result["summary"]


async def test_a_configured_test_runner_that_is_missing_is_an_error(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    project = copy_fixture("python", tmp_path)
    entry = TestEntry(command=("nox-not-here", "-s", "tests"), install="pip install nox")
    result, is_error = await call(
        RunTestsTool(TestConfig(entries=(entry,)), shadows=registry), make_ctx(Workspace([project]))
    )
    assert is_error
    assert result["status"] == "missing"
    assert result["install"] == "pip install nox"
    assert "pip install nox" in result["message"]


HANG = """\
import pathlib, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
pathlib.Path(sys.argv[1]).write_text(str(child.pid))
print("started the server", flush=True)
time.sleep(120)
"""


async def test_a_hanging_test_command_is_killed_with_its_process_group(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    project = copy_fixture("python", tmp_path)
    pid_file = tmp_path / "child.pid"
    entry = TestEntry(command=(sys.executable, "-c", HANG, str(pid_file)), format="raw")
    tool = RunTestsTool(TestConfig(entries=(entry,), interrupt_grace=1.0), shadows=registry)
    started = asyncio.get_running_loop().time()
    # unsandboxed: the grandchild reports its host pid through a file outside the shadow
    services = unsandboxed(Workspace([project]))
    result, is_error = await call(tool, make_ctx(services), timeout=2)
    assert not is_error
    assert result["status"] == "timeout"
    assert "did not finish within 2 s" in result["message"]
    assert "started the server" in result["output_tail"]
    assert process_gone(int(read_when_there(pid_file)))  # the grandchild died too
    assert asyncio.get_running_loop().time() - started < 15


async def test_raw_test_output_says_nothing_structured_was_read(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    project = copy_fixture("python", tmp_path)
    entry = TestEntry(
        command=(sys.executable, "-c", "print('2 of 3 checks passed'); raise SystemExit(1)")
    )
    result, _ = await call(
        RunTestsTool(TestConfig(entries=(entry,)), shadows=registry), make_ctx(Workspace([project]))
    )
    assert (result["status"], result["raw"]) == ("failed", True)
    assert "No structured results could be read" in result["message"]
    assert "2 of 3 checks passed" in result["output_tail"]
    assert "passed" not in result  # no counts were read, none are made up


async def test_a_nested_python_project_imports_its_own_sources_from_the_copy(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    root = tmp_path / "mono"
    backend = root / "backend"
    (backend / "src" / "pricing").mkdir(parents=True)
    (backend / "tests").mkdir()
    (root / "web").mkdir()
    (root / "web" / "index.html").write_text("<p>hi</p>\n")
    (backend / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
    (backend / "src" / "pricing" / "__init__.py").write_text("def net(x):\n    return x * 2\n")
    (backend / "tests" / "test_net.py").write_text(
        "import pricing\n\n\ndef test_net():\n"
        f"    assert not pricing.__file__.startswith({str(root)!r})\n"
        "    assert pricing.net(2) == 2\n"
    )
    ws, changes = Workspace([root]), ChangeSet()
    stage(changes, backend / "src" / "pricing" / "__init__.py", "def net(x):\n    return x\n")
    result, _ = await call(RunTestsTool(shadows=registry), make_ctx(ws, changes), target="backend")
    assert (result["runner"], result["status"], result["passed"]) == ("pytest", "passed", 1), result
