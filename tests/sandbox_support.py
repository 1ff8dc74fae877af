"""Helpers for the sandbox tests: bubblewrap present, workspaces with chosen settings.

`AGENTLS_TEST_SANDBOX=off` runs every test that asks for `sandboxed()` with the sandbox
switched off instead: that is how to see each boundary test fail without the sandbox
(`AGENTLS_TEST_SANDBOX=off pytest tests/test_sandbox_*.py` must fail, test by test).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import psutil
import pytest

from agentls.agent.framework.services import ToolServices
from agentls.sandbox import SandboxConfig, SandboxSettings, probe
from agentls.workspace import Workspace

INSTALL = "bash scripts/deps/sandbox.sh"


def require_bwrap() -> None:
    """Fail (never skip) when no sandbox can run here, naming the install script."""
    found = probe()
    if not found.ok:
        pytest.fail(
            f"the sandbox tests need bubblewrap that works here: {found.describe()} "
            f"Run `{INSTALL}` (CI does).",
            pytrace=False,
        )


def sandbox_off() -> bool:
    return os.environ.get("AGENTLS_TEST_SANDBOX") == "off"


def sandboxed(workspace: Workspace, **settings: Any) -> ToolServices:
    """Services of `workspace` with these sandbox settings (camelCase keys, as a user
    writes them)."""
    require_bwrap()
    if sandbox_off():
        settings["enabled"] = False
    services = ToolServices(workspace)
    services.sandbox.config = SandboxConfig(SandboxSettings.model_validate(settings))
    return services


def marked(token: str) -> list[psutil.Process]:
    """Live processes on this machine whose command line mentions `token`."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(token in part for part in proc.info["cmdline"] or ()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with the things an attacker wants: an SSH key, AWS credentials, a
    GitHub token, a `.bashrc`; `HOME` points there for the test."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN KEY----- ssh-secret-7f3a\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = aws-secret-91c2\n")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("oauth_token: gh-secret-55d1\n")
    (home / ".bashrc").write_text("# the user's bashrc\n")
    (home / ".netrc").write_text("machine x login u password netrc-secret-0b7e\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def have(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        pytest.fail(f"{program} is needed for this test and is not installed", pytrace=False)
    return found
