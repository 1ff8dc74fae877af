"""`languageServers.autoInstall`: a missing registry server is installed from PyPI (a real,
small install: fortls at the registry's pin) into a temporary agentls cache, only after the
user agreed, and never because a repository's settings asked before trust."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentls.codeintel.autoinstall import installed
from agentls.codeintel.model import Document, Overlay, Pos, SourceFailed
from agentls.codeintel.registry import KnownServer
from agentls.codeintel.settings import LanguageServerSettings
from agentls.config.model import AgentlsSettings as Settings
from agentls.langservers.pool import LanguageServerPool
from agentls.workspace import Workspace

FORTRAN = (
    "program main\n  call greet()\ncontains\n  subroutine greet()\n  end subroutine\nend program\n"
)


def _doc(root: Path) -> Document:
    path = root / "main.f90"
    path.write_text(FORTRAN, encoding="utf-8")
    return Document(path, FORTRAN, "fortran")


@pytest.mark.asyncio
async def test_a_missing_server_is_installed_after_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("AGENTLS_LANGSERVER_CACHE", str(cache))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no fortls of the test machine's own
    asked: list[str] = []

    async def agree(server: KnownServer) -> bool:
        asked.append(server.name)
        return True

    root = tmp_path / "project"
    root.mkdir()
    settings = LanguageServerSettings(auto_install=True)
    pool = LanguageServerPool(Workspace([root]), lambda: settings, confirm_install=agree)
    try:
        answer = await pool.definition(_doc(root), Pos(1, 8), Overlay())
        assert asked == ["fortls"]
        assert answer is not None
        assert [loc.span.start.line for loc in answer.value] == [3]
        assert (cache / "fortls-3.2.2" / ".complete").is_file()
        (entry,) = [e for e in pool.status() if e["language"] == "fortran"]
        assert entry["origin"] == "agentls's cache (languageServers.autoInstall)"
        await pool.definition(_doc(root), Pos(1, 8), Overlay())
        assert asked == ["fortls"]  # installed once, asked once
    finally:
        await pool.aclose()


@pytest.mark.asyncio
async def test_nothing_is_installed_without_a_yes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTLS_LANGSERVER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")

    async def decline(server: KnownServer) -> bool:
        return False

    root = tmp_path / "project"
    root.mkdir()
    for settings, confirm in (
        (LanguageServerSettings(auto_install=True), decline),
        (LanguageServerSettings(auto_install=True), None),  # a host that cannot ask
        (LanguageServerSettings(auto_install=False), decline),
    ):
        pool = LanguageServerPool(Workspace([root]), lambda s=settings: s, confirm_install=confirm)
        with pytest.raises(SourceFailed, match="No language server"):
            await pool.definition(_doc(root), Pos(1, 8), Overlay())
        await pool.aclose()
    assert not (tmp_path / "cache").exists()


def test_a_repositorys_auto_install_counts_only_once_trusted() -> None:
    project = Settings.model_validate({"languageServers": {"autoInstall": True}})
    entries = project.language_servers
    untrusted = LanguageServerSettings.merge(None, entries, trust_project=False)
    assert not untrusted.auto_install
    assert "autoInstall" in untrusted.ignored_project
    assert LanguageServerSettings.merge(None, entries, trust_project=True).auto_install
    assert LanguageServerSettings.merge(entries, None, trust_project=False).auto_install  # user


def test_auto_install_is_a_flag_and_only_it() -> None:
    with pytest.raises(ValueError, match="must be true or false"):
        Settings.model_validate({"languageServers": {"autoInstall": {"command": ["x"]}}})
    with pytest.raises(ValueError, match="must be a server table"):
        Settings.model_validate({"languageServers": {"python": True}})


def test_only_npm_and_pypi_rows_install(tmp_path: Path) -> None:
    from agentls.codeintel.autoinstall import InstallFailed, install
    from agentls.codeintel.languages import known_server_named

    clangd = known_server_named("clangd")
    assert clangd is not None
    with pytest.raises(InstallFailed, match="not on npm or PyPI"):
        install(clangd, tmp_path)
    fortls = known_server_named("fortls")
    assert fortls is not None
    assert installed(fortls, tmp_path) is None


class _Prompts:
    """A host's question port that records the question and gives a fixed answer."""

    def __init__(self, choice: str | None) -> None:
        self.choice = choice
        self.asked: list[str] = []

    async def ask_questions(self, request: Any) -> Any:
        from agentls.agent.framework.questions import QuestionAnswer

        question = request.questions[0]
        self.asked.append(question.question)
        if self.choice is None:
            return None
        return [QuestionAnswer(question.question, (self.choice,))]

    async def review_plan(self, request: Any) -> Any:
        return None


@pytest.mark.asyncio
async def test_the_host_asks_through_its_question_port() -> None:
    from agentls.codeintel.languages import known_server_named
    from agentls.runtime.code_sources import confirm_install_through

    fortls = known_server_named("fortls")
    assert fortls is not None
    yes, no, silent = _Prompts("Install"), _Prompts("Not now"), _Prompts(None)
    assert await confirm_install_through(lambda: yes)(fortls)
    assert "pipx install fortls==3.2.2" in yes.asked[0]
    assert not await confirm_install_through(lambda: no)(fortls)
    assert not await confirm_install_through(lambda: silent)(fortls)
    assert not await confirm_install_through(lambda: None)(fortls)  # nobody to ask
