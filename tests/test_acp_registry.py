"""The ACP registry entry (`editor-clients/acp-registry/agentls/agent.json`).

Checked as the registry's CI checks an entry: against the registry's own schema
(`agent.schema.json` of github:agentclientprotocol/registry, read from the fetched mirror —
`AGENTLS_ACP_REGISTRY` or /work/.mirror; skipped when absent), the folder named by the id,
the uvx package pinned to the entry's version (this package's), a 16x16 monochrome icon,
and the command the entry starts (`agentls acp`) answering `initialize` with an auth method
of a type the registry accepts (agent or terminal) whose command works.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[1]
ENTRY = REPO / "editor-clients" / "acp-registry" / "agentls"
REGISTRY_REPO = "github:agentclientprotocol/registry"
MIRROR = Path("/work/.mirror/agentclientprotocol+registry/repo")


def registry_schema() -> dict[str, Any]:
    found = os.environ.get("AGENTLS_ACP_REGISTRY")
    git_dir = Path(found) if found else MIRROR
    if not git_dir.exists():
        pytest.skip(f"the ACP registry is not fetched ({git_dir}): fetch {REGISTRY_REPO}")
    text = subprocess.run(
        ["git", "-C", str(git_dir), "show", "HEAD:agent.schema.json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(json.loads(text))


def entry() -> dict[str, Any]:
    return dict(json.loads((ENTRY / "agent.json").read_text(encoding="utf-8")))


def test_the_entry_validates_against_the_registrys_schema() -> None:
    jsonschema.validate(entry(), registry_schema())


def test_the_entry_names_this_package_and_version() -> None:
    found = entry()
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert found["id"] == ENTRY.name
    assert found["version"] == project["version"]
    assert found["license"] == "MIT"
    uvx = found["distribution"]["uvx"]
    assert uvx["package"] == f"{project['name']}=={project['version']}"
    assert uvx["args"] == ["acp"]


def test_the_icon_is_a_monochrome_16px_svg() -> None:
    icon = (ENTRY / entry()["icon"]).read_text(encoding="utf-8")
    assert 'width="16"' in icon
    assert 'height="16"' in icon
    assert "currentColor" in icon
    assert not re.search(r'(fill|stroke)="(?!currentColor|none)[^"]*"', icon)


def test_the_command_offers_a_terminal_login_the_registry_accepts(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["HOME"] = str(tmp_path)
    args = entry()["distribution"]["uvx"]["args"]
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    done = subprocess.run(
        [sys.executable, "-m", "agentls", *args],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    answer = json.loads(done.stdout.splitlines()[0])
    methods = answer["result"]["authMethods"]
    terminal = [m for m in methods if m.get("type", "agent") in ("agent", "terminal")]
    assert terminal, methods
    login = subprocess.run(
        [sys.executable, "-m", "agentls", *terminal[0]["args"]],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert login.returncode == 1  # no key in this environment: it says so, and how to set it
    assert "ANTHROPIC_API_KEY" in login.stderr
