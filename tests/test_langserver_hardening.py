"""What each well-known server is started with before and after trust (no server runs
here; `tests/test_codeintel_untrusted.py` runs the real ones against a hostile repo)."""

from __future__ import annotations

from pathlib import Path

from agentls.codeintel.discovery import ServerPlan
from agentls.codeintel.project_code import project_code_in
from agentls.langservers.hardening import global_tsserver, harden, merge_options


def fake_tls(prefix: Path, with_typescript: bool) -> Path:
    """A typescript-language-server install under `prefix/node_modules` (npm's layout)."""
    package = prefix / "node_modules" / "typescript-language-server" / "lib"
    package.mkdir(parents=True)
    cli = package / "cli.mjs"
    cli.write_text("")
    if with_typescript:
        lib = prefix / "node_modules" / "typescript" / "lib"
        lib.mkdir(parents=True)
        (lib / "tsserver.js").write_text("")
    bin_dir = prefix / "node_modules" / ".bin"
    bin_dir.mkdir()
    link = bin_dir / "typescript-language-server"
    link.symlink_to(cli)
    return link


def plan(name: str, argv: tuple[str, ...]) -> ServerPlan:
    return ServerPlan("typescript", name, argv, "PATH")


def test_the_typescript_beside_the_server_is_passed_before_trust(tmp_path: Path) -> None:
    link = fake_tls(tmp_path / "tools", with_typescript=True)
    repo = tmp_path / "repo"
    (repo / "node_modules" / "typescript" / "lib").mkdir(parents=True)
    found = global_tsserver((str(link), "--stdio"))
    assert found == tmp_path / "tools" / "node_modules" / "typescript" / "lib" / "tsserver.js"
    hardening = harden(plan("typescript-language-server", (str(link), "--stdio")), False, [repo])
    assert hardening.initialization_options["tsserver"] == {"path": str(found)}
    assert hardening.initialization_options["disableAutomaticTypingAcquisition"] is True
    assert not hardening.problem
    trusted = harden(plan("typescript-language-server", (str(link), "--stdio")), True, [repo])
    assert not trusted.initialization_options  # trust: the workspace's TypeScript may load


def test_no_typescript_of_the_users_own_means_no_server_before_trust(tmp_path: Path) -> None:
    link = fake_tls(tmp_path / "tools", with_typescript=False)
    hardening = harden(plan("typescript-language-server", (str(link),)), False, [tmp_path])
    assert "not started in an untrusted workspace" in hardening.problem


def test_a_typescript_inside_the_workspace_is_not_the_users(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    link = fake_tls(repo, with_typescript=True)  # the server itself from the repository
    hardening = harden(plan("typescript-language-server", (str(link),)), False, [repo])
    assert hardening.problem


def test_rust_analyzer_and_gopls_run_no_project_code() -> None:
    rust = harden(plan("rust-analyzer", ("rust-analyzer",)), False, [])
    assert rust.initialization_options["cargo"] == {"buildScripts": {"enable": False}}
    assert rust.initialization_options["procMacro"] == {"enable": False}
    assert rust.env["RUSTC_WRAPPER"] == ""
    go = harden(plan("gopls", ("gopls",)), True, [])  # trusted or not
    assert go.env["GOTOOLCHAIN"] == "local"
    assert go.env["CGO_ENABLED"] == "0"


def test_the_users_options_win_over_ours() -> None:
    ours = {"tsserver": {"path": "/global"}, "disableAutomaticTypingAcquisition": True}
    merged = merge_options(ours, {"tsserver": {"logVerbosity": "off"}, "preferences": {}})
    assert merged == {
        "tsserver": {"path": "/global", "logVerbosity": "off"},
        "disableAutomaticTypingAcquisition": True,
        "preferences": {},
    }
    assert merge_options({}, None) is None


def test_project_code_is_named_for_the_trust_prompt(tmp_path: Path) -> None:
    (tmp_path / ".yarn" / "sdks" / "typescript" / "lib").mkdir(parents=True)
    (tmp_path / ".yarn" / "sdks" / "typescript" / "lib" / "tsserver.js").write_text("")
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    found = project_code_in([tmp_path], {"typescript-language-server", "basedpyright"})
    assert found == [
        (
            "typescript-language-server",
            ".yarn/sdks/typescript/lib/tsserver.js",
            "the project's TypeScript server and the tsconfig plugins beside it",
        )
    ]  # rust-analyzer is not available: its Cargo.toml asks nothing
