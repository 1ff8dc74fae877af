"""The language-server registry: breadth, pins that match the committed locks, the trust
rule for every row, and what `agentls doctor` says about the workspace's languages (no
server runs here; tests/test_langserver_registry_servers.py runs them)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentls.codeintel.discovery import ServerPlan
from agentls.codeintel.languages import BY_ID, KNOWN_SERVERS, LANGUAGES, language_of
from agentls.codeintel.project_code import project_code_in
from agentls.codeintel.report import workspace_language_lines
from agentls.codeintel.settings import LanguageServerSettings
from agentls.langservers.hardening import harden

ROOT = Path(__file__).resolve().parent.parent


def test_thirty_languages_have_a_server_with_an_install_command() -> None:
    served = {lang for s in KNOWN_SERVERS if s.primary for lang in s.languages}
    assert len(served) >= 30
    assert served <= set(BY_ID)  # every row serves languages agentls can tell files of
    assert len(LANGUAGES) >= 30
    for server in KNOWN_SERVERS:
        assert server.install, server.name
        if server.install_spec.kind in ("npm", "pypi"):
            assert server.install_spec.version, server.name
    assert language_of("docker/Dockerfile") == BY_ID["dockerfile"]
    assert language_of("CMakeLists.txt") == BY_ID["cmake"]


def test_the_pins_are_the_ones_the_test_installs_use() -> None:
    package = json.loads((ROOT / "scripts/deps/langservers/package.json").read_text())
    npm = package["dependencies"]
    lock = (ROOT / "requirements/langservers.lock").read_text()
    pypi = dict(re.findall(r"^([a-z0-9-]+)==([^ \\\n]+)", lock, re.MULTILINE))
    checked = 0
    for server in KNOWN_SERVERS:
        spec = server.install_spec
        if spec.kind == "npm" and spec.package in npm:
            assert npm[spec.package] == spec.version, server.name
            checked += 1
        elif spec.kind == "pypi":
            assert pypi.get(spec.package) == spec.version, server.name
            checked += 1
    assert checked >= 16


def test_a_server_that_would_run_project_code_is_held_back_before_trust() -> None:
    for server in KNOWN_SERVERS:
        if server.before_trust != "held back":
            continue
        plan = ServerPlan(server.languages[0], server.name, ("/usr/bin/true",), "PATH")
        untrusted = harden(plan, False, [])
        assert "not started in an untrusted workspace" in untrusted.problem, server.name
        assert server.loads in untrusted.problem
        assert not harden(plan, True, []).problem, server.name  # trust: sandboxed run
    held = [s.name for s in KNOWN_SERVERS if s.before_trust == "held back"]
    assert {"pylsp", "jedi-language-server", "svelte-language-server"} <= set(held)
    assert {"tailwindcss-language-server", "jdtls"} <= set(held)


def test_every_row_that_loads_project_code_is_named_for_the_trust_prompt(tmp_path: Path) -> None:
    (tmp_path / "svelte.config.js").write_text("export default {}\n")
    (tmp_path / "build.gradle").write_text("\n")
    found = project_code_in([tmp_path], {"svelte-language-server", "jdtls", "clangd"})
    assert [f[:2] for f in found] == [
        ("svelte-language-server", "svelte.config.js"),
        ("jdtls", "build.gradle"),
    ]


def test_doctor_names_each_language_its_state_and_install_command(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "run.sh").write_text("echo\n")
    (tmp_path / "Dockerfile").write_text("FROM debian\n")
    (tmp_path / "App.svelte").write_text("<p></p>\n")
    (tmp_path / "node_modules" / "dep").mkdir(parents=True)
    (tmp_path / "node_modules" / "dep" / "x.lua").write_text("\n")  # dependencies: skipped
    settings = LanguageServerSettings(trust_project=False)
    lines = {name: (state, detail) for name, state, detail in workspace_language_lines(
        tmp_path, settings, trusted=False
    )}  # fmt: skip
    assert set(lines) == {"python", "bash", "dockerfile", "svelte"}
    assert lines["python"][0] == "ok"  # basedpyright beside this interpreter
    assert "1 file; basedpyright" in lines["python"][1]
    for language in ("bash", "dockerfile", "svelte"):
        state, detail = lines[language]
        known = next(s for s in KNOWN_SERVERS if language in s.languages)
        assert state == ("info" if "not installed" in detail else "ok")
        if "not installed" in detail:
            assert f"`{known.install}`" in detail
            assert "@" in known.install  # pinned
