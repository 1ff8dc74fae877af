"""The host and the core stay editor-agnostic; the server starts without the heavy SDKs."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import {module}
loaded = sorted({{m.split('.')[0] for m in sys.modules}} & {{{names}}})
print(','.join(loaded))
"""


def _loaded(module: str, *names: str) -> list[str]:
    code = PROBE.format(module=module, names=", ".join(repr(n) for n in names))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [name for name in out.stdout.strip().split(",") if name]


def test_the_host_does_not_import_the_lsp_libraries() -> None:
    assert _loaded("agentls.host", "pygls", "lsprotocol") == []


def test_building_the_server_imports_neither_the_model_sdk_nor_pydantic() -> None:
    probe = "agentls.cli, agentls.lsp.server as s; s.create_server()"
    assert _loaded(probe, "anthropic", "pydantic", "tree_sitter") == []
