"""Neovim: `:AgentlsRun /<Tab>` completes the custom commands the server lists, in a real
headless Neovim (0.7, Debian's, and 0.11 from PyPI) attached to `agentls serve`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editor_support import neovim
from tests.lsp_support import server_env

PLUGIN = Path(__file__).resolve().parent.parent / "editor-clients" / "neovim"

SCRIPT = """
vim.opt.runtimepath:append(%(plugin)r)
require("agentls").setup({ cmd = { %(python)r, "-m", "agentls", "serve" }, view = false })
vim.cmd("filetype on")
vim.cmd("edit " .. %(file)r)
local ok = vim.wait(60000, function()
  return #require("agentls.prompt_commands").list() > 0
end, 250)
local result = { attached = ok }
if ok then
  result.slash = vim.fn.getcompletion("AgentlsRun /", "cmdline")
  result.prefix = vim.fn.getcompletion("AgentlsRun /re", "cmdline")
  result.later = vim.fn.getcompletion("AgentlsRun fix /re", "cmdline")
end
local out = io.open(%(out)r, "w")
out:write(vim.json and vim.json.encode(result) or vim.fn.json_encode(result))
out:close()
vim.cmd("qa!")
"""


@pytest.mark.parametrize("version", ["0.7", "0.11"])
def test_agentls_run_completes_custom_commands(tmp_path: Path, version: str) -> None:
    nvim = neovim(version)
    root = tmp_path / "ws"
    for name, text in {
        ".claude/commands/review.md": "---\ndescription: Review\n---\nReview $0\n",
        ".agentls/commands/release.md": "Write release notes.\n",
        "app.py": "x = 1\n",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    out = tmp_path / "result.json"
    script = tmp_path / "test.lua"
    script.write_text(
        SCRIPT
        % {
            "plugin": str(PLUGIN),
            "python": sys.executable,
            "file": str(root / "app.py"),
            "out": str(out),
        }
    )
    env = server_env(None, tmp_path / "state")
    done = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {script}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.exists(), done.stdout + done.stderr
    result = json.loads(out.read_text())
    assert result["attached"], result
    assert result["slash"] == ["/release", "/review"]
    assert result["prefix"] == ["/release", "/review"]  # both start with /re
    assert result["later"] == []  # only the first word is a command
