"""Helpers for the code-intelligence tests: where the real language servers are, and the
fixture projects they analyse.

The servers are installed by `scripts/deps/codeintel.sh` (basedpyright as a dev dependency,
typescript-language-server + typescript into a cached folder keyed by the lock file); a
missing one fails the test with a message naming the script, never a silent skip.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEPS = ROOT / "scripts" / "deps" / "codeintel"
INSTALL = "run `bash scripts/deps/codeintel.sh` (or `bash scripts/test-deps.sh`)"


def tools_dir() -> Path:
    return Path(os.environ.get("AGENTLS_TOOLS_DIR") or Path.home() / ".cache" / "agentls-tools")


def typescript_bin() -> Path:
    """`node_modules/.bin` of the cached typescript-language-server install."""
    data = (DEPS / "package.json").read_bytes() + (DEPS / "package-lock.json").read_bytes()
    key = hashlib.sha256(data).hexdigest()[:12]
    folder = tools_dir() / f"codeintel-{key}" / "node_modules" / ".bin"
    if not (folder / "typescript-language-server").exists():
        pytest.fail(f"typescript-language-server is not installed in {folder}: {INSTALL}")
    return folder


def basedpyright_langserver() -> Path:
    """basedpyright's language server, installed next to this interpreter (dev dependency)."""
    found = Path(sys.executable).parent / "basedpyright-langserver"
    if not found.exists():
        pytest.fail(f"basedpyright-langserver is not installed next to {sys.executable}: {INSTALL}")
    return found


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


PYTHON_SHOP = {
    "shop/__init__.py": "",
    "shop/models.py": '''
        class Cart:
            def total(self, tax: float) -> float:
                """Sum of the items, with tax."""
                return 0.0 * tax


        def total(values: list[int]) -> int:  # unrelated: same name
            return sum(values)
        ''',
    "shop/checkout.py": """
        from shop.models import Cart


        def pay(cart: Cart) -> float:
            return cart.total(0.2)
        """,
    "shop/report.py": """
        from shop import models


        def summary(cart: models.Cart) -> str:
            return f"{cart.total(0.1):.2f}"
        """,
    "shop/legacy.py": """
        from shop.models import Cart as Basket


        def old(b: Basket) -> float:
            # total is computed here
            return b.total(0.0) + 1
        """,
    "shop/unrelated.py": """
        from shop.models import total

        print(total([1, 2]), "total")
        """,
    "scripts/tool.rb": """
        # total of the cart
        def total(items)
          items.sum
        end

        puts total([1, 2])
        puts "total"
        """,
}
"""`Cart.total` is called from three files (one through `Cart as Basket`); a function of the
same name, comments and strings mention `total` too, which a resolved search must skip."""

CART_TOTAL_REFERENCES = {
    ("shop/models.py", 2),
    ("shop/checkout.py", 5),
    ("shop/report.py", 5),
    ("shop/legacy.py", 6),
}

TYPESCRIPT_APP = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, '
    '"include": ["src"]}\n',
    "src/greeter.ts": """
        export function greet(name: string): string {
          return `Hello, ${name}`;
        }
        """,
    "src/a.ts": """
        import { greet } from "./greeter";

        export const a = greet("a");
        """,
    "src/b.ts": """
        import { greet as hello } from "./greeter";

        export const b = hello("b");
        """,
}


def tool_input(path: str, line: int, symbol: str, **extra: Any) -> dict[str, Any]:
    return {"path": path, "line": line, "symbol": symbol, **extra}


def reference_lines(content: str) -> set[tuple[str, int]]:
    """(file, line) pairs of a find_references result (`  5:12  text` under each file)."""
    found: set[tuple[str, int]] = set()
    current = ""
    for line in content.splitlines():
        if line and not line.startswith(" ") and not line.startswith(("Note:", "[")):
            current = line.strip()
        elif line.startswith("  ") and current and _COMPACT.fullmatch(line.strip()):
            found.update((current, int(at.split(":", 1)[0])) for at in line.split(","))
        elif line.startswith("  ") and current and line.strip()[:1].isdigit():
            found.add((current, int(line.strip().split(":", 1)[0])))
    return found


_COMPACT = re.compile(r"\d+:\d+(, \d+:\d+)*")
"""The positions-only listing (`  5:12, 9:3`) of a long confirmed part."""


NVIM = os.environ.get("AGENTLS_NVIM") or shutil.which("nvim")
NVIM_PLUGIN = Path(__file__).resolve().parent.parent / "editor-clients" / "neovim"


def run_neovim_script(
    tmp_path: Path, files: dict[str, str], script: Path, extra_env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Headless Neovim with the agentls plugin and basedpyright, in a workspace of `files`,
    running the Lua `script` (`extra_env` for what else it starts); the JSON result it wrote
    (its `ok` asserted, with the server's log on failure)."""
    assert NVIM is not None
    workspace = tmp_path / "shop"
    write_tree(workspace, files)
    result = tmp_path / "result.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env.update(
        {
            "CI_WORKSPACE": str(workspace),
            "CI_RESULT": str(result),
            "CI_PYRIGHT": str(basedpyright_langserver()),
            "CI_AGENTLS_CMD": json.dumps(
                [sys.executable, "-m", "agentls", "serve", "--log-file", str(tmp_path / "s.log")]
            ),
            "AGENTLS_TRANSCRIPT_DIR": str(tmp_path / "transcripts"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            **(extra_env or {}),
        }
    )
    argv = [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    argv += ["--cmd", f"set rtp^={NVIM_PLUGIN}", "-c", f"luafile {script}"]
    proc = subprocess.run(
        argv, env=env, cwd=workspace, capture_output=True, text=True, timeout=240, check=False
    )
    assert result.exists(), f"nvim wrote no result: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    data: dict[str, Any] = json.loads(result.read_text())
    log = tmp_path / "s.log"
    assert data.get("ok"), json.dumps(data, indent=1)[-4000:] + (
        log.read_text()[-3000:] if log.exists() else ""
    )
    return data
