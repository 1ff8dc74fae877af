"""How rg's first pass runs (issue 33): a sparse search is one rg run that reports every
line it may show; a dense one peeks and searches a first chunk alone. A guess from a
sample of the files picks one; either way the answer is the in-process engine's."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.workspace import ChangeSet, Workspace
from agentls.workspace import search as engine
from agentls.workspace.ripgrep import Ripgrep, find_ripgrep
from agentls.workspace.search import SearchRequest, run_search
from tests.test_ws_change_feed import record_rg_argv
from tests.ws_support import make_tree

FILES = 300


@pytest.fixture
def rg() -> Ripgrep:
    found = find_ripgrep()
    if found is None:
        pytest.skip("no ripgrep")
    return found


def small_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scale the plan to a 300-file tree: a first chunk of 40 files, 8 of them sampled."""
    monkeypatch.setattr(engine, "FIRST_CHUNK_MIN", 40)
    monkeypatch.setattr(engine, "PROBE_FILES", 8)


def _runs(argv: list[str]) -> int:
    return sum(1 for arg in argv if arg.endswith("/rg") or arg.endswith("rg.exe"))


def test_a_sparse_search_is_one_rg_run_with_every_line(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_sample(monkeypatch)
    files = {f"f{n:03d}.txt": "plain text\n" for n in range(FILES)}
    files["f150.txt"] = "".join(f"rare {n}\n" for n in range(20))  # more than PEEK lines
    ws = Workspace([make_tree(tmp_path, files)])
    view = ws.view(ChangeSet())
    argv = record_rg_argv(monkeypatch)
    outcome = run_search(view, view.file_strs(), SearchRequest.build("rare"), engine=rg)
    assert [(Path(h.path).name, len(h.lines)) for h in outcome.hits] == [("f150.txt", 20)]
    assert _runs(argv) == 1, "no first chunk alone, no second pass for the shown file"


@pytest.mark.parametrize("where", ["sampled", "missed"])
@pytest.mark.parametrize("mode", ["content", "files", "count"])
def test_either_plan_gives_the_in_process_answer(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch, mode: str, where: str
) -> None:
    """Dense matches in the sampled files of the first chunk (the chunked plan), or only
    in files the sample skips (the one-run plan, a wrong guess): the same hits, limit and
    truncation."""
    small_sample(monkeypatch)
    first = engine.FIRST_CHUNK_MIN
    sampled = {n * first // engine.PROBE_FILES for n in range(engine.PROBE_FILES)}
    files = {}
    for n in range(FILES):
        dense = (n in sampled) == (where == "sampled")
        body = "".join(f"hit {k}\n" for k in range(12)) if dense else "nothing\n"
        files[f"f{n:03d}.txt"] = body
    ws = Workspace([make_tree(tmp_path, files)])
    view = ws.view(ChangeSet())
    request = SearchRequest.build("hit", mode=mode, max_results=30)  # type: ignore[arg-type]
    listed = view.file_strs()
    assert engine._looks_sparse(listed, first, request) == (where == "missed")
    ours = run_search(view, listed, request, engine=rg)
    reference = run_search(view, listed, request, engine=None)
    shown = [(h.path, h.count, h.lines) for h in ours.hits]
    assert shown == [(h.path, h.count, h.lines) for h in reference.hits]
    assert ours.truncated == reference.truncated


@pytest.mark.parametrize("limit", [1 << 20, 400])
def test_argument_lists_are_split_only_when_too_long(
    tmp_path: Path, rg: Ripgrep, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    from agentls.workspace import ripgrep

    monkeypatch.setattr(ripgrep, "ARGV_CHUNK_BYTES", limit)
    files = {f"dir/ünï{n:02d}.txt": ("needle\n" if n % 3 else "hay\n") for n in range(30)}
    ws = Workspace([make_tree(tmp_path, files)])
    view = ws.view(ChangeSet())
    argv = record_rg_argv(monkeypatch)
    outcome = run_search(view, view.file_strs(), SearchRequest.build("needle"), engine=rg)
    assert [Path(h.path).name for h in outcome.hits] == [
        f"ünï{n:02d}.txt" for n in range(30) if n % 3
    ]
    assert (_runs(argv) > 1) == (limit == 400)
