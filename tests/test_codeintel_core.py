"""The code-intelligence core without servers: positions, edits, discovery, settings, the
by-name scan, and the layering rule (the core never loads an LSP library)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentls.codeintel.discovery import plan_language
from agentls.codeintel.identifiers import occurrences
from agentls.codeintel.model import Pos, Span, TextChange
from agentls.codeintel.positions import locate
from agentls.codeintel.settings import (
    LanguageServerSettings,
    announced_methods,
    parse_language_servers,
)
from agentls.codeintel.views import apply_changes
from agentls.errors import ToolError

TEXT = "def total(x):\n    return x.total + total(x)  # total\n"


def test_a_symbol_on_a_line_becomes_a_position() -> None:
    assert locate(TEXT, "a.py", 2, "total", None, None).pos == Pos(1, 13)
    assert locate(TEXT, "a.py", 2, "total", None, 2).pos == Pos(1, 21)
    assert locate(TEXT, "a.py", 2, "x.total", None, None).pos == Pos(1, 13)  # last part
    assert locate(TEXT, "a.py", 2, "total()", None, None).pos == Pos(1, 13)
    assert locate(TEXT, "a.py", 2, "total", 23, None).pos == Pos(1, 21)  # the one at 23
    target = locate(TEXT, "a.py", 1, None, 6, None)
    assert target.pos == Pos(0, 5)
    assert target.name == "total"


@pytest.mark.parametrize(
    ("line", "symbol", "character", "occurrence", "message"),
    [
        (3, "total", None, None, "Line 3 is past the end of a.py, which has 2 lines"),
        (0, "total", None, None, "Line 0 is past the end"),
        (1, "price", None, None, "`price` is not on line 1 of a.py"),
        (2, "total", None, 4, "occurs 3 time(s) on line 2 of a.py"),
        (1, None, 99, None, "Character 99 is outside line 1 of a.py"),
        (1, None, None, None, "give `symbol` (one of `def`, `total`, `x`)"),
    ],
)
def test_bad_positions_say_what_to_do(
    line: int, symbol: str | None, character: int | None, occurrence: int | None, message: str
) -> None:
    with pytest.raises(ToolError) as caught:
        locate(TEXT, "a.py", line, symbol, character, occurrence)
    assert message in str(caught.value)


def test_rename_edits_apply_from_the_end() -> None:
    changes = (
        TextChange(Span(Pos(0, 4), Pos(0, 9)), "sum_all"),
        TextChange(Span(Pos(1, 21), Pos(1, 26)), "sum_all"),
    )
    assert apply_changes(TEXT, changes).splitlines() == [
        "def sum_all(x):",
        "    return x.total + sum_all(x)  # total",
    ]
    crlf = TEXT.replace("\n", "\r\n")
    assert apply_changes(crlf, changes).startswith("def sum_all(x):\r\n")
    overlapping = (
        TextChange(Span(Pos(0, 0), Pos(0, 6)), "a"),
        TextChange(Span(Pos(0, 4), Pos(0, 9)), "b"),
    )
    with pytest.raises(ToolError):
        apply_changes(TEXT, overlapping)


def test_identifier_occurrences_skip_comments_and_strings() -> None:
    data = (
        b'total = 1\nprint("total", total)  # total\nobj.total()\n'
        b'def f():\n    """total"""\n    return subtotal\n'
    )
    spans = occurrences("m.py", data, "total")
    assert [s.start for s in spans] == [Pos(0, 0), Pos(1, 15), Pos(2, 4)]
    assert occurrences("m.ts", b"const total = `${total}`; // total\n", "total") == [
        Span(Pos(0, 6), Pos(0, 11)),
        Span(Pos(0, 17), Pos(0, 22)),
    ]
    assert occurrences("notes.txt", b"total", "total") == []


def test_languageservers_setting_is_validated() -> None:
    parsed = parse_language_servers(
        {
            "python": {"command": ["pyright-langserver", "--stdio"], "requestTimeout": 30},
            "lua": {"command": ["lua-language-server"], "extensions": ["lua"]},
            "go": {"enabled": False},
        }
    )
    assert parsed["python"].request_timeout == 30
    assert parsed["lua"].extensions == (".lua",)
    bad_cases: list[tuple[object, str]] = [
        ({"python": {"command": []}}, "must name the server executable"),
        ({"python": {"cmd": ["x"]}}, "Extra inputs are not permitted"),
        ({"python": "pyright"}, "valid dictionary"),
    ]
    for bad, why in bad_cases:
        with pytest.raises(ValueError, match=why):
            parse_language_servers(bad)
    assert announced_methods(True) >= {"textDocument/references", "agentls/diagnostics"}
    assert announced_methods(["textDocument/hover", "bogus"]) == {"textDocument/hover"}


def _executable(path: Path, marker: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{marker}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_discovery_prefers_the_projects_server_only_when_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    on_path = _executable(tmp_path / "bin" / "typescript-language-server")
    project = _executable(root / "node_modules" / ".bin" / "typescript-language-server")
    monkeypatch.setenv("PATH", f"{on_path.parent}{os.pathsep}/usr/bin:/bin")
    trusted = plan_language("typescript", [root], LanguageServerSettings())
    assert trusted.argv == (str(project), "--stdio")
    assert trusted.origin == "node_modules/.bin"
    untrusted = plan_language("typescript", [root], LanguageServerSettings(trust_project=False))
    assert untrusted.argv == (str(on_path), "--stdio")
    assert untrusted.origin == "PATH"
    monkeypatch.setenv("PATH", "/nonexistent")
    missing = plan_language("go", [root], LanguageServerSettings())
    assert missing.argv is None
    assert missing.problem is not None
    assert "gopls" in missing.problem
    assert "go install" in missing.problem


def test_project_servers_need_trust_and_user_servers_win() -> None:
    user = parse_language_servers({"python": {"command": ["/opt/user-pyright"]}})
    project = parse_language_servers(
        {"python": {"command": ["./evil"]}, "rust": {"command": ["./evil"]}}
    )
    merged = LanguageServerSettings.merge(user, project)
    assert merged.configured["python"].origin == "user settings"
    assert merged.configured["rust"].origin == ".agentls.toml"
    untrusted = LanguageServerSettings.merge(user, project, trust_project=False)
    assert set(untrusted.configured) == {"python"}
    assert set(untrusted.ignored_project) == {"python", "rust"}


def test_the_core_loads_no_lsp_library() -> None:
    probe = (
        "import sys\n"
        "import agentls.codeintel.service, agentls.codeintel.discovery, agentls.codeintel.report\n"
        "import agentls.tools.code_intel, agentls.tools.code_intel_rename\n"
        "hosts = ('agentls.lsp', 'agentls.langservers', 'agentls.headless')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')\n"
        "             or m.startswith(hosts))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_doctor_lists_the_language_servers(tmp_path: Path) -> None:
    from tests.cli_support import cli_env, run_cli

    (tmp_path / ".agentls.toml").write_text(
        '[languageServers.go]\ncommand = ["no-such-gopls"]\n', encoding="utf-8"
    )
    env = cli_env(None, tmp_path)
    assert run_cli("trust", "-w", str(tmp_path), env=env).code == 0  # as a session needs
    result = run_cli("doctor", "--json", "-w", str(tmp_path), env=env)
    checks = [c for c in json.loads(result.stdout)["checks"] if c["group"] == "language servers"]
    by_name = {c["name"]: c for c in checks}
    assert by_name["basedpyright"]["status"] == "ok"  # next to this interpreter
    assert "python:" in by_name["basedpyright"]["detail"]
    go = next(c for c in checks if c["detail"].startswith("go:"))
    assert "`no-such-gopls` (from languageServers (.agentls.toml)) was not found" in go["detail"]
    assert "workspace read-only, network off" in by_name["sandbox"]["detail"]
