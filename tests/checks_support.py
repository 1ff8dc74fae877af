"""Helpers for the lint/run_tests tests on real toolchains: where `scripts/deps/checks.sh`
installed them, fixture projects copied out of the repository, and tool calls.

A missing toolchain fails the test with a message naming the install script: these tests
are the acceptance of the feature and never skip silently.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, output_to_content

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "checks"
INSTALL = "run `bash scripts/deps/checks.sh` (or `bash scripts/test-deps.sh`) to install it"


def npm_tools() -> Path:
    """The `node_modules` of eslint/typescript/vitest installed from the committed lock."""
    lock = FIXTURES / "npm" / "package-lock.json"
    key = hashlib.sha256(lock.read_bytes()).hexdigest()[:16]
    base = Path(os.environ.get("AGENTLS_TOOLS_DIR", Path.home() / ".cache" / "agentls-tools"))
    folder = base / f"checks-npm-{key}"
    if not (folder / ".complete").exists():
        pytest.fail(
            f"the npm tools for the lint/test fixtures are not installed in {folder}: {INSTALL}"
        )
    return folder / "node_modules"


def require(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        pytest.fail(f"{program} is not installed: {INSTALL}")
    return found


def copy_fixture(name: str, target: Path) -> Path:
    """A fresh copy of a fixture project (the user's tree in the test)."""
    project = target / name
    shutil.copytree(FIXTURES / name, project)
    return project


async def call(tool: Tool[Any], ctx: ToolContext, **raw: object) -> tuple[dict[str, Any], bool]:
    """The tool's result as the model gets it: parsed JSON and the is_error flag."""
    output = output_to_content(await tool.call(tool.parse_input(raw), ctx))
    assert isinstance(output.content, str)
    parsed: dict[str, Any] = json.loads(output.content)
    return parsed, output.is_error
