"""Dependency symbols shared across workspaces (issue 33, item 5): a second workspace with
the same `site-packages`/`node_modules`/`.d.ts` files parses only its own code, answers like
a fresh index, and survives a corrupt or hostile cache entry. The cache is per user (0700,
entries 0600) and never holds a secret file's symbols."""

from __future__ import annotations

import json
import marshal
import os
import stat
from pathlib import Path

import pytest

from agentls.index import SymbolIndex, index_for
from agentls.index import worker as worker_module
from agentls.index.depcache import DepCache, decode, encode
from agentls.index.records import FileRecord, Packed, pack
from agentls.index.registry import forget
from agentls.workspace import Workspace

DEPS = {
    "site-packages/requests/api.py": "def get(url):\n    return url\nclass Session:\n"
    "    def send(self): pass\n",
    "site-packages/requests/models.py": "class Response:\n    status_code = 200\n",
    "node_modules/@types/node/fs.d.ts": "declare module 'fs' {\n"
    "  export function readFileSync(p: string): string;\n"
    "  export interface Stats { size: number }\n}\n",
    "node_modules/lodash/chunk.js": "function chunk(array, size) { return array; }\n",
}


def project(root: Path, own: dict[str, str]) -> list[Path]:
    """A workspace folder with its own files and a copy of `DEPS`; every indexable path."""
    files = []
    for rel, text in {**DEPS, **own}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)
    return files


OWN_A = {"app/views.py": "def index(request):\n    return get('/')\n"}
OWN_B = {"src/main.ts": "export function main(): void {}\n", "src/util.py": "def helper(): pass\n"}


@pytest.fixture
def extractions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every tree-sitter extraction of a build (in-process builds: `workers=1`)."""
    seen: list[str] = []
    real = worker_module.parse_file

    def counting(path: str, data: bytes, trees: object = None) -> object:
        seen.append(path)
        return real(path, data)

    monkeypatch.setattr(worker_module, "parse_file", counting)
    return seen


def build(files: list[Path], shared: DepCache | None) -> SymbolIndex:
    index = SymbolIndex(None, shared)
    index.build(files, workers=1)
    index.flush()
    return index


def answers(index: SymbolIndex, files: list[Path], root: Path) -> object:
    """Everything the index says about `files`, with paths relative to `root`."""
    outlines = {str(p.relative_to(root)): index.document_symbols(p) for p in files}
    found = {
        q: [
            (s.name, s.kind, str(s.path.relative_to(root)), s.range)
            for s in index.search(q).symbols
        ]
        for q in ("get", "Session", "readFileSync", "chunk", "Stats", "status_code")
    }
    return repr((outlines, found)).replace(str(root), "<root>")


def test_a_second_workspace_parses_only_its_own_code(
    tmp_path: Path, extractions: list[str]
) -> None:
    shared = DepCache(tmp_path / "deps")
    a = project(tmp_path / "a", OWN_A)
    first = build(a, shared)
    assert (first.state.parsed_files, first.state.shared_files) == (len(a), 0)
    extractions.clear()

    b = project(tmp_path / "b", OWN_B)
    second = build(b, shared)
    state = second.state
    own = [str(tmp_path / "b" / rel) for rel in OWN_B]
    assert sorted(extractions) == sorted(own)  # no dependency file extracted again
    assert (state.parsed_files, state.shared_files, state.files) == (len(OWN_B), len(DEPS), len(b))
    fresh = build(b, None)
    assert answers(second, b, tmp_path / "b") == answers(fresh, b, tmp_path / "b")
    assert second.search("readFileSync").symbols  # the shared symbols are really there


def test_without_the_shared_cache_every_workspace_parses_its_dependencies(
    tmp_path: Path, extractions: list[str]
) -> None:
    build(project(tmp_path / "a", OWN_A), None)
    extractions.clear()
    b = project(tmp_path / "b", OWN_B)
    assert build(b, None).state.parsed_files == len(b)
    assert len(extractions) == len(b)


def test_a_changed_dependency_is_parsed_again(tmp_path: Path, extractions: list[str]) -> None:
    shared = DepCache(tmp_path / "deps")
    build(project(tmp_path / "a", OWN_A), shared)
    b = project(tmp_path / "b", OWN_B)
    changed = tmp_path / "b" / "site-packages/requests/models.py"
    changed.write_text("class Response:\n    def json(self): pass\n")
    extractions.clear()
    index = build(b, shared)
    assert str(changed) in extractions
    assert [s.name for s in index.search("json").symbols] == ["json"]


def entries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_a_corrupt_entry_is_parsed_and_written_again(
    tmp_path: Path, extractions: list[str]
) -> None:
    shared = DepCache(tmp_path / "deps")
    build(project(tmp_path / "a", OWN_A), shared)
    stored = entries(tmp_path / "deps")
    assert len(stored) == len(DEPS)
    victim = stored[0]
    good = victim.read_bytes()
    victim.write_bytes(good[: len(good) // 2])  # truncated
    b = project(tmp_path / "b", OWN_B)
    extractions.clear()
    index = build(b, shared)
    assert (index.state.parsed_files, index.state.shared_files) == (3, len(DEPS) - 1)
    assert victim.read_bytes() == good  # rebuilt
    assert answers(index, b, tmp_path / "b") == answers(build(b, None), b, tmp_path / "b")


ROW = ["get", 11, "", -1, 0, 0, 1, 14, 0, 4, 0, 7, "def get(url):"]


def hostile(payload: object) -> bytes:
    return b"agentls-deps 1\n" + json.dumps(payload).encode()


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"agentls-deps 1\n",
        b'agentls-deps 1\n["", [',
        b"\xff\xfe garbage",
        b"agentls-deps 1\n\xff\xfe",
        b"agentls-deps 1\n" + b"[" * 100_000 + b"]" * 100_000,
        hostile({"skipped": ""}),
        hostile(["", "rows"]),
        hostile([1, []]),
        hostile(["", [ROW[:5]]]),
        hostile(["", [[*ROW[:1], 10**6, *ROW[2:]]]]),  # no such kind
        hostile(["", [[*ROW[:3], 5, *ROW[4:]]]]),  # parent after the child
        hostile(["", [["a\nb", *ROW[1:]]]]),  # a newline would shift every later name
        hostile(["", [[*ROW[:4], -3, *ROW[5:]]]]),
        hostile(["", [[*ROW[:1], True, *ROW[2:]]]]),
        hostile(["", [[*ROW[:1], 1.5, *ROW[2:]]]]),
        hostile(["too large", [ROW]]),
        b"agentls-deps 1\n" + marshal.dumps(("", [tuple(ROW)])),
    ],
)
def test_hostile_entries_are_misses(raw: bytes) -> None:
    assert decode(raw) is None


def test_a_hostile_entry_cannot_crash_a_build(tmp_path: Path) -> None:
    shared = DepCache(tmp_path / "deps")
    a = project(tmp_path / "a", OWN_A)
    build(a, shared)
    for i, entry in enumerate(entries(tmp_path / "deps")):
        entry.write_bytes([b"agentls-deps 1\n[", hostile(["", [[*ROW[:3], 9, *ROW[4:]]]])][i % 2])
    index = build(project(tmp_path / "b", OWN_B), shared)
    assert (index.state.shared_files, index.state.parsed_files) == (0, len(DEPS) + len(OWN_B))
    assert [s.name for s in index.search("readFileSync").symbols] == ["readFileSync"]


def rows(packed: Packed) -> list[object]:
    rec = FileRecord(Path(), 0, 0, packed)
    return [rec.row(i) for i in range(len(rec))]


def test_entries_round_trip_exactly(tmp_path: Path) -> None:
    index = build(project(tmp_path / "a", OWN_A), None)
    for path in project(tmp_path / "a", OWN_A):
        packed = index._records[str(path)].packed()
        again = decode(encode(packed))
        assert again is not None
        # the same rows (marshal may share repeated strings differently in the bytes)
        assert again._replace(rows=b"", offsets=b"") == packed._replace(rows=b"", offsets=b"")
        assert rows(again) == rows(packed)
    assert decode(encode(pack([], "minified or generated"))) == pack([], "minified or generated")


def test_the_cache_is_private_to_the_user(tmp_path: Path) -> None:
    root = tmp_path / "deps"
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    build(project(tmp_path / "a", OWN_A), DepCache(root))
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for entry in entries(root):
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600
        assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o700


def test_least_recently_used_entries_are_evicted(tmp_path: Path) -> None:
    shared = DepCache(tmp_path / "deps")
    packs = {f"{i:02x}" * 32: pack([], f"reason {i}" + "x" * 100) for i in range(10)}
    assert shared.put(packs.items()) == 10
    for age, key in enumerate(packs):  # the first key is the oldest
        os.utime(tmp_path / "deps" / key[:2] / key, (1000 + age, 1000 + age))
    first = next(iter(packs))
    assert shared.get(first) is not None  # used now: the newest
    size = sum(p.stat().st_size for p in entries(tmp_path / "deps"))
    shared.max_bytes = size // 2
    assert shared.evict() > 0
    left = {p.name for p in entries(tmp_path / "deps")}
    assert first in left
    assert "01" * 32 not in left
    assert "09" * 32 in left
    assert sum(p.stat().st_size for p in entries(tmp_path / "deps")) <= size // 2


SITE_PACKAGES = [rel for rel in DEPS if rel.startswith("site-packages/")]
VALUE = "depcache-0123456789-do-not-leak"


def test_secret_files_are_never_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    project(root, {"site-packages/pkg/.env.py": f"API_KEY = '{VALUE}'\n"})
    workspace = Workspace([root])
    try:
        index = index_for(workspace, cache_path=None, shared_cache=tmp_path / "deps", workers=1)
        assert index.wait_built(10)
    finally:
        forget(workspace)  # waits for the build's own flush
    stored = entries(tmp_path / "deps")
    assert len(stored) == len(SITE_PACKAGES)  # the walk skips node_modules
    assert not any(VALUE.encode() in p.read_bytes() for p in stored)


def test_held_persistence_shares_nothing_until_the_rules_allow(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    project(root, OWN_A)
    workspace = Workspace([root])
    denied = str(root / "site-packages" / "requests" / "api.py")
    try:
        index = index_for(
            workspace,
            cache_path=None,
            shared_cache=tmp_path / "deps",
            workers=1,
            hold_persistence=True,
        )
        assert index.wait_built(10)
        index.flush()
        assert entries(tmp_path / "deps") == []
        index.excluded = lambda path: path == denied  # the user's rules, loaded late
        index.allow_persistence()
    finally:
        forget(workspace)
    assert len(entries(tmp_path / "deps")) == len(SITE_PACKAGES) - 1
