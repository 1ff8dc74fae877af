"""Python: ruff by default, plus mypy, pyright / basedpyright and pylint when the project
configures them; pytest, else unittest.

The project's virtualenv (in the project folder or a parent up to the root) supplies the
interpreter and, first, the tools, so results match what the user gets in their shell.
"""

from __future__ import annotations

import configparser
import contextlib
from pathlib import Path
from typing import Final

from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.detect.base import Detection
from agentls.tools.checks.projects import ProjectDir
from agentls.workspace.toolchain import has_module, venv_in

__all__ = ["PYTEST_ARGV", "detect", "install_hint", "project_venv_of"]

PY: Final = frozenset({"python"})

PYTEST_ARGV: Final[tuple[str, ...]] = (
    "{python}",
    "-m",
    "pytest",
    "-p",
    "no:cacheprovider",  # no .pytest_cache, even in the shadow
    "-q",
    "--tb=short",
    "-o",
    "junit_family=xunit1",  # adds file/line → real node ids
    "-o",
    "junit_logging=all",
    "--junitxml={report}",
    "{target}",
)
RUFF_ARGV: Final = ("ruff", "check", "--output-format", "json", "--force-exclude", "--no-fix")
MYPY_ARGV: Final = (
    "mypy",
    "--show-column-numbers",
    "--show-error-codes",
    "--no-error-summary",
    "--no-pretty",
    "--no-color-output",
    "--python-executable",
    "{python}",
)
_PYTEST_FILES: Final = ("pytest.ini", "conftest.py")


def project_venv_of(project: ProjectDir) -> Path | None:
    """The virtualenv of the project folder or of a parent up to the root (read side)."""
    for base, _ in project.upwards():
        found = venv_in(base)
        if found is not None:
            return found
    return None


def install_hint(project: ProjectDir, package: str) -> str:
    """How this project installs a dev tool: its lock file's tool, else pip in its venv."""
    for lock, hint in (
        ("uv.lock", f"uv sync (or uv add --dev {package})"),
        ("poetry.lock", f"poetry install (or poetry add --group dev {package})"),
        ("pdm.lock", f"pdm install (or pdm add -dG dev {package})"),
        ("Pipfile.lock", f"pipenv install --dev (or pipenv install --dev {package})"),
    ):
        if project.find_up(lock):
            return hint
    venv = project_venv_of(project)
    if venv is not None:
        return f"{venv.name}/bin/pip install {package}"
    return f"pip install {package}"


def detect(project: ProjectDir) -> Detection:
    found = Detection()
    pyproject = project.read_toml("pyproject.toml")
    tools = _dict(pyproject.get("tool"))
    setup_cfg = _setup_cfg(project)
    found.lint.append(_ruff(project, tools))
    mypy = _mypy_config(project, tools, setup_cfg)
    if mypy:
        found.lint.append(_mypy(project, mypy))
    pyright = _pyright(project, tools)
    if pyright is not None:
        found.lint.append(pyright)
    pylint = _pylint_config(project, tools, setup_cfg)
    if pylint:
        found.lint.append(
            _python_tool(
                project,
                "pylint",
                ("pylint", "--output-format=json", "{paths}"),
                "pylint-json",
                f"{pylint} configures pylint",
            )
        )
    found.tests.append(_test_runner(project, tools, setup_cfg, pyproject))
    return found


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _setup_cfg(project: ProjectDir) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    text = project.read_text("setup.cfg")
    if text:
        with contextlib.suppress(configparser.Error):  # a broken setup.cfg configures nothing
            parser.read_string(text)
    return parser


def _python_tool(
    project: ProjectDir, tool: str, argv: tuple[str, ...], fmt: str, why: str
) -> CheckCommand:
    """A Python linter: from the project's venv, else PATH, else `python -m <tool>`."""
    return CheckCommand(
        kind="lint",
        tool=tool,
        argv=argv,
        format=fmt,
        project=project.path,
        languages=PY,
        lookup=("venv", "path"),
        module=tool,
        install=install_hint(project, tool),
        why=why,
    )


def _ruff(project: ProjectDir, tools: dict[str, object]) -> CheckCommand:
    own = project.find_up("ruff.toml", ".ruff.toml")
    if own:
        why = f"{own[0]} configures ruff"
    elif "ruff" in tools:
        why = "[tool.ruff] in pyproject.toml configures ruff"
    else:
        why = "ruff is the default linter for Python"
    return _python_tool(project, "ruff", (*RUFF_ARGV, "{paths}"), "ruff-json", why)


def _mypy_config(
    project: ProjectDir, tools: dict[str, object], setup_cfg: configparser.ConfigParser
) -> str:
    if "mypy" in tools:
        return "[tool.mypy] in pyproject.toml"
    own = project.has("mypy.ini", ".mypy.ini")
    if own:
        return own
    return "[mypy] in setup.cfg" if setup_cfg.has_section("mypy") else ""


def _mypy(project: ProjectDir, config: str) -> CheckCommand:
    why = f"{config} configures mypy"
    return _python_tool(project, "mypy", (*MYPY_ARGV, "{paths}"), "mypy", why)


def _pyright(project: ProjectDir, tools: dict[str, object]) -> CheckCommand | None:
    if "basedpyright" in tools:
        program, why = "basedpyright", "[tool.basedpyright] in pyproject.toml"
    elif project.has("pyrightconfig.json"):
        program, why = "pyright", "pyrightconfig.json"
    elif "pyright" in tools:
        program, why = "pyright", "[tool.pyright] in pyproject.toml"
    else:
        return None
    return CheckCommand(
        kind="lint",
        tool=program,
        argv=(program, "--outputjson", "{paths}"),
        format="pyright-json",
        project=project.path,
        languages=PY,
        lookup=("venv", "node", "path"),
        install=f"{install_hint(project, program)} (or npm install --save-dev pyright)",
        why=f"{why} configures {program}",
    )


def _pylint_config(
    project: ProjectDir, tools: dict[str, object], setup_cfg: configparser.ConfigParser
) -> str:
    if any(key == "pylint" or key.startswith("pylint.") for key in tools):
        return "[tool.pylint] in pyproject.toml"
    own = project.has(".pylintrc", "pylintrc")
    if own:
        return own
    if any(s == "pylint" or s.startswith("pylint.") for s in setup_cfg.sections()):
        return "[pylint] in setup.cfg"
    return ""


def _pytest_config(
    project: ProjectDir,
    tools: dict[str, object],
    setup_cfg: configparser.ConfigParser,
    pyproject: dict[str, object],
) -> str:
    if "pytest" in tools:
        return "[tool.pytest] in pyproject.toml"
    own = project.has(*_PYTEST_FILES)
    if own:
        return own
    if setup_cfg.has_section("tool:pytest"):
        return "[tool:pytest] in setup.cfg"
    if "pytest" in (project.read_text("tox.ini") or "") and "[pytest]" in (
        project.read_text("tox.ini") or ""
    ):
        return "[pytest] in tox.ini"
    if "pytest" in str(_dict(pyproject.get("project")).get("optional-dependencies", "")):
        return "pytest in the project's optional dependencies"
    if "pytest" in str(pyproject.get("dependency-groups", "")):
        return "pytest in the project's dependency groups"
    return ""


def _test_runner(
    project: ProjectDir,
    tools: dict[str, object],
    setup_cfg: configparser.ConfigParser,
    pyproject: dict[str, object],
) -> CheckCommand:
    venv = project_venv_of(project)
    configured = _pytest_config(project, tools, setup_cfg, pyproject)
    installed = has_module(venv, "pytest")
    where = f"{venv.name}/" if venv is not None else "agentls's Python"
    if configured or installed:
        why = f"{configured} (pytest)" if configured else f"pytest is installed in {where}"
        return CheckCommand(
            kind="tests",
            tool="pytest",
            argv=PYTEST_ARGV,
            format="junit-xml",
            project=project.path,
            languages=PY,
            why=f"{why}; results from its JUnit XML report",
            lookup=("venv",),
            module="pytest",
            install=install_hint(project, "pytest"),
            targets="pytest",
        )
    return CheckCommand(
        kind="tests",
        tool="unittest",
        argv=("{python}", "-m", "unittest", "-v", "{target}"),
        format="unittest",
        project=project.path,
        languages=PY,
        why=f"pytest is neither configured nor installed in {where}: the standard unittest runs",
        lookup=("venv",),
        targets="unittest",
    )
