"""Every registry server that installs here, driven through agentls's own headless path
(`LanguageServerPool`, hardened and sandboxed as in use): definition, references and
diagnostics on a small fixture each (`langserver_registry_support.CASES` says which
operations a server does not offer; the pool must then answer None, so the tools fall back
to the index, never an empty "no references").

A server `scripts/deps/langservers.sh` did not install is skipped, naming the script.
Run a few at a time (`-k`): each case starts a real server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.codeintel.languages import known_server_named
from agentls.codeintel.model import Document, Location, Overlay, Pos
from agentls.codeintel.settings import (
    ConfiguredServer,
    LanguageServerConfig,
    LanguageServerSettings,
)
from agentls.langservers.pool import LanguageServerPool
from agentls.workspace import Workspace
from tests.langserver_registry_support import CASES, INSTALL, Case, find_server, npm_bin

pytestmark = pytest.mark.asyncio


def _lines(root: Path, found: list[Location]) -> set[tuple[str, int]]:
    return {(loc.path.relative_to(root).as_posix(), loc.span.start.line + 1) for loc in found}


@pytest.fixture
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Case, Path, Path]:
    case: Case = request.param
    known = known_server_named(case.server)
    assert known is not None, case.server
    program = find_server(known.argv[0])
    if program is None:
        pytest.skip(f"{case.server} is not installed: {INSTALL}")
    root = tmp_path / "project"
    for name, text in case.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    for package in case.links:  # the project's own package (Tailwind's server loads it)
        (root / "node_modules").mkdir(exist_ok=True)
        (root / "node_modules" / package).symlink_to(npm_bin().parent / package)
    return case, root, program


def _pool(case: Case, root: Path, program: Path, trusted: bool) -> LanguageServerPool:
    known = known_server_named(case.server)
    assert known is not None
    config = LanguageServerConfig(command=(str(program), *known.argv[1:]))
    settings = LanguageServerSettings(
        {case.language: ConfiguredServer(config, "user settings")}, trust_project=trusted
    )
    return LanguageServerPool(Workspace([root]), lambda: settings)


def _doc(root: Path, name: str, language: str) -> Document:
    path = root / name
    return Document(path, path.read_text(encoding="utf-8"), language)


@pytest.mark.parametrize("setup", CASES, ids=[c.server for c in CASES], indirect=True)
async def test_definition_references_and_diagnostics(setup: tuple[Case, Path, Path]) -> None:
    case, root, program = setup
    pool = _pool(case, root, program, case.trusted)
    try:
        name, line, word = case.query
        doc = _doc(root, name, case.language)
        pos = Pos(line - 1, doc.text.splitlines()[line - 1].index(word) + 1)
        overlay = Overlay()

        definition = await pool.definition(doc, pos, overlay)
        if "definition" in case.unsupported:
            assert definition is None or not definition.value, definition
        else:
            assert definition is not None, f"{case.server} offers no definition"
            assert case.definition in _lines(root, definition.value), definition
            assert definition.source == f"language server ({case.server})"

        references = await pool.references(doc, pos, overlay, include_declaration=True)
        if "references" in case.unsupported:
            assert references is None or not references.value, references
        else:
            assert references is not None, f"{case.server} offers no references"
            assert case.references <= _lines(root, references.value), references

        if "diagnostics" not in case.unsupported:
            broken = _doc(root, case.broken, case.language)
            found = await pool.diagnostics([broken], overlay)
            assert found is not None
            assert any(d.path == broken.path for d in found.value), (case.server, found)
    finally:
        await pool.aclose()


HELD_BACK = [c for c in CASES if c.trusted]


@pytest.mark.parametrize("setup", HELD_BACK, ids=[c.server for c in HELD_BACK], indirect=True)
async def test_a_held_back_server_never_starts_before_trust(
    setup: tuple[Case, Path, Path],
) -> None:
    case, root, program = setup
    pool = _pool(case, root, program, trusted=False)
    try:
        doc = _doc(root, case.query[0], case.language)
        with pytest.raises(Exception, match="not started in an untrusted workspace"):
            await pool.definition(doc, Pos(0, 0), Overlay())
        (entry,) = [e for e in pool.status() if e["language"] == case.language]
        assert entry["state"] == "refused"
        assert "pid" not in entry
    finally:
        await pool.aclose()
