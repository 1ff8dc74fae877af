"""run_tests with real pytest in the shadow copy; the user's tree must stay byte-identical."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import ToolError, output_to_content
from agentls.tools.checks.settings import TestEntry
from agentls.tools.run_tests import RunTestsInput, RunTestsTool, TestConfig
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.process import run_process
from agentls.workspace.shadow import ShadowRegistry
from tests.shadow_support import (
    make_ctx,
    process_gone,
    read_when_there,
    stage,
    tree_state,
    unsandboxed,
)

CALC = "def add(a, b):\n    return a - b\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"  # same size: stale bytecode would hide the fix
TESTS = """\
import pytest
from calc import add


def test_add():
    assert add(2, 2) == 4


def test_zero():
    assert add(0, 0) == 0


@pytest.mark.skip(reason="not today")
def test_later():
    pass
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "calc").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (root / "src" / "calc" / "__init__.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TESTS)
    return root


@pytest.fixture(scope="module")
def pycache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by this module's runs, as the real cache is shared by sessions, and warmed here
    once: a cold start compiles pytest (seconds on a busy machine), which would eat into the
    timeout of the hanging-test case."""
    cache = tmp_path_factory.mktemp("pycache")
    empty = tmp_path_factory.mktemp("empty")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(cache), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    warm = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co"]
    warm += [f"--junitxml={empty / 'warm.xml'}", str(empty)]
    subprocess.run(warm, cwd=empty, env=env, capture_output=True, check=False)
    return cache


@pytest.fixture(autouse=True)
def _bytecode_on_plugins_off(monkeypatch: pytest.MonkeyPatch) -> None:
    # Bytecode writing on, so a stray .pyc in the user's tree (or a stale one in the shadow)
    # would show; plugin autoload off, because this venv's plugins (pytest-lsp) take seconds
    # to import and the fixture project needs none.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def registry(tmp_path: Path, pycache: Path) -> Iterator[ShadowRegistry]:
    reg = ShadowRegistry(base_dir=tmp_path / "shadows", pycache_dir=pycache)
    yield reg
    reg.close()


async def _run(tool: RunTestsTool, ctx: ToolContext, **raw: object) -> dict[str, Any]:
    result = await tool.call(tool.parse_input(raw), ctx)
    content = output_to_content(result).content
    assert isinstance(content, str)
    parsed: dict[str, Any] = json.loads(content)
    return parsed


async def test_failing_then_staged_fix_passes_and_user_tree_is_untouched(
    project: Path, registry: ShadowRegistry
) -> None:
    before = tree_state(project)
    ws, changes = Workspace([project]), ChangeSet()
    tool = RunTestsTool(shadows=registry)

    failed = await _run(tool, make_ctx(ws, changes))
    assert failed["status"] == "failed"
    assert (failed["passed"], failed["failed"], failed["errors"], failed["skipped"]) == (1, 1, 0, 1)
    [failure] = failed["failures"]
    assert failure["test"] == "tests/test_calc.py::test_add"
    assert failure["location"] == "tests/test_calc.py:6"
    assert "assert 0 == 4" in failure["message"]
    assert "assert add(2, 2) == 4" in failure["output"]
    assert str(registry.get("t", ws).directory) not in json.dumps(failed)  # paths mapped back

    stage(changes, project / "src" / "calc" / "__init__.py", CALC_FIXED)
    passed = await _run(tool, make_ctx(ws, changes))
    assert passed["status"] == "passed", passed
    assert (passed["passed"], passed["failed"], passed["skipped"]) == (2, 0, 1)
    assert "failures" not in passed

    assert tree_state(project) == before


async def test_unsaved_buffer_is_what_runs_and_node_ids_select(
    project: Path, registry: ShadowRegistry
) -> None:
    ws = Workspace([project])
    ws.set_buffer(
        project / "tests" / "test_calc.py",
        TESTS + "\n\ndef test_new():\n    assert add(1, 2) == 3\n",
        2,
    )
    target = "tests/test_calc.py::test_new"  # exists only in the unsaved buffer
    result = await _run(RunTestsTool(shadows=registry), make_ctx(ws), target=target)
    assert (result["status"], result["passed"], result["failed"]) == ("failed", 0, 1)
    assert result["failures"][0]["test"] == target
    assert result["command"].endswith(target)


async def test_a_name_filter_and_a_missing_file(project: Path, registry: ShadowRegistry) -> None:
    tool, ctx = RunTestsTool(shadows=registry), make_ctx(Workspace([project]))
    filtered = await _run(tool, ctx, target="add")
    assert (filtered["status"], filtered["failed"], filtered["passed"]) == ("failed", 1, 0)
    assert filtered["command"].endswith("-k add")
    with pytest.raises(ToolError, match=r"No test file tests/test_nope\.py"):
        await _run(tool, ctx, target="tests/test_nope.py::test_x")


def _hanging_test(project: Path, pid_file: Path) -> None:
    (project / "tests" / "test_hang.py").write_text(
        "import pathlib, subprocess, sys, time\n\n\ndef test_hangs():\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"    pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))\n"
        "    time.sleep(60)\n"
    )


async def test_a_hanging_test_is_killed_with_its_children(
    project: Path, registry: ShadowRegistry, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    _hanging_test(project, pid_file)
    tool = RunTestsTool(shadows=registry)
    ctx = make_ctx(unsandboxed(Workspace([project])))
    result = await _run(tool, ctx, target="tests/test_hang.py", timeout=3)
    assert result["status"] == "timeout"
    assert "did not finish within 3 s" in result["message"]
    assert "tests/test_hang.py" in result["output_tail"]  # pytest reported where it hung
    assert "KeyboardInterrupt" in result["output_tail"]
    assert process_gone(int(read_when_there(pid_file)))
    assert result["duration"] < 8


SPAWN_AND_HANG = (
    "import pathlib, subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "pathlib.Path(sys.argv[1]).write_text(str(child.pid))\n"
    "time.sleep(60)\n"
)


async def test_cancelling_the_call_kills_the_run(
    project: Path, registry: ShadowRegistry, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    config = TestConfig(
        entries=(TestEntry(command=(sys.executable, "-c", SPAWN_AND_HANG, "{target}")),)
    )
    tool = RunTestsTool(config, shadows=registry)
    ctx = make_ctx(unsandboxed(Workspace([project])))
    task = asyncio.create_task(tool.call(RunTestsInput(target=str(pid_file)), ctx))
    for _ in range(500):
        if read_when_there(pid_file):
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert process_gone(int(read_when_there(pid_file)))


@pytest.fixture
def editable_venv(project: Path) -> Path:
    """A `.venv` in the project with the project installed editable, both ways installers do
    it: a `.pth` path entry (hatch, flit, old setuptools) and a meta-path finder appended by a
    `.pth` import line (setuptools >= 64). Both point at the user's `src/`."""
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    (site / "_editable_calc.pth").write_text(f"{project / 'src'}\n")
    (site / "__editable___calc_finder.py").write_text(
        "import importlib.util, sys\n"
        f"ROOT = {str(project / 'src' / 'calc' / '__init__.py')!r}\n"
        "class Finder:\n"
        "    @classmethod\n"
        "    def find_spec(cls, name, path=None, target=None):\n"
        "        if name == 'calc':\n"
        "            return importlib.util.spec_from_file_location(name, ROOT)\n"
        "def install():\n"
        "    sys.meta_path.append(Finder)\n"
    )
    (site / "__editable__.calc.pth").write_text(
        "import __editable___calc_finder; __editable___calc_finder.install()\n"
    )
    # The fixture venv has no pip; borrow this interpreter's packages (pytest) after our .pth.
    (site / "zz_borrow.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


async def test_editable_install_of_the_users_tree_does_not_win(
    project: Path, editable_venv: Path, registry: ShadowRegistry
) -> None:
    """The project's venv imports `calc` from the user's tree; in the shadow run the copy
    (with the staged fix) must win, and no bytecode may land in the user's `.venv`."""
    (project / "tests" / "test_where.py").write_text(
        "import calc\n\n\ndef test_imports_the_copy():\n"
        f"    assert not calc.__file__.startswith({str(project)!r}), calc.__file__\n"
    )
    before = tree_state(project)
    ws, changes = Workspace([project]), ChangeSet()
    stage(changes, project / "src" / "calc" / "__init__.py", CALC_FIXED)
    result = await _run(RunTestsTool(shadows=registry), make_ctx(ws, changes))
    assert result["status"] == "passed", result
    assert result["passed"] == 3
    assert str(editable_venv / "bin" / "python") in result["command"]
    assert tree_state(project) == before

    # Control: the same interpreter without the shadow's environment imports the user's tree.
    python = str(editable_venv / "bin" / "python")
    plain = await run_process(
        [python, "-c", "import calc; print(calc.__file__)"],
        cwd=registry.get("t", ws).shadow_root(),
        env={"PYTHONDONTWRITEBYTECODE": "1"},
        inherit_env=False,
    )
    assert plain.stdout.strip().startswith(str(project)), plain


async def test_not_a_python_project_without_a_command(
    tmp_path: Path, registry: ShadowRegistry
) -> None:
    root = tmp_path / "web"
    root.mkdir()
    (root / "index.js").write_text("console.log(1)\n")
    with pytest.raises(ToolError, match="No test command is configured"):
        await _run(RunTestsTool(shadows=registry), make_ctx(Workspace([root])))


async def test_custom_command_without_junit_reports_exit_code_and_output(
    project: Path, registry: ShadowRegistry
) -> None:
    command = (
        sys.executable,
        "-c",
        "import os, sys; print('ran', sys.argv[1:], os.getcwd()); sys.exit(1)",
        "{target}",
    )
    entry = TestEntry(command=(*command, "--only={target}"))
    tool = RunTestsTool(TestConfig(entries=(entry,)), shadows=registry)
    result = await _run(tool, make_ctx(Workspace([project])), target="suite-a")
    assert result["status"] == "failed"
    assert result["exit_code"] == 1
    # cwd shown as the root, not the shadow
    assert "ran ['suite-a', '--only=suite-a'] ." in result["output_tail"]
    without = await _run(tool, make_ctx(Workspace([project])))
    assert "ran [] ." in without["output_tail"]


def test_usage_and_flags() -> None:
    tool = RunTestsTool()
    assert tool.is_read_only(None)
    assert not tool.is_concurrency_safe(RunTestsInput())
    assert tool.summary(RunTestsInput(target="tests/test_x.py")) == "Running tests: tests/test_x.py"
    assert tool.summary(RunTestsInput()) == "Running tests"
    assert set(tool.input_schema()["properties"]) == {"target", "timeout"}
