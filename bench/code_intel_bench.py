"""Code intelligence on Django: precision/recall of `find_references` and its latency.

Corpus: the Django sdist of `bench/fetch_corpus.py` (run that first). For about 80 common
method names (`get`, `save`, `filter`, `clean`, …) the ground truth comes from running part
of Django's own test suite under a profiler: every line that called the target method is a
true reference; every line that called *some* function of that name decides whether a
reported line is right. Each name's target is the definition called from the most lines;
the first 50 names with at least 3 such lines are measured.

Three answers per method, all from the definition's position:
- `find_references` through `agentls serve` (basedpyright, source 2, over stdio);
- the index fallback (source 3: tree-sitter identifiers by name, in process);
- a name-based grep (`\\bname\\b` on every line, comments and strings included).

Recall = true lines found / true lines; precision = true lines found / found lines whose
calls were observed (lines never executed by the tests can be judged by nobody).

Latency: the first query (cold: basedpyright starts and reads Django) and warm p50/p95
over 3 passes of the 50 queries, against the same `textDocument/references` sent straight to
basedpyright by a bare pygls client in the same run (alternating which goes first, after a
warm-up pass). Both servers run at once on the same cores, so single runs vary; agentls's
own work per query is a few milliseconds (the rest is the server).
Target: warm p95 through agentls ≤ 1.5× the bare client's.

    python bench/fetch_corpus.py
    python bench/code_intel_bench.py [--names 50] [--rounds 3] [--json out.json]

The first run creates a virtualenv with Django's test requirements (asgiref, sqlparse) under
~/.cache/agentls-bench and caches the trace there.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from agentls.codeintel.model import Document, Overlay, Pos
from agentls.codeintel.service import CodeIntel
from agentls.headless.client import ServerConnection
from agentls.index import index_for
from agentls.workspace import Workspace

CACHE = Path.home() / ".cache" / "agentls-bench"
PYRIGHT = Path(sys.executable).parent / "basedpyright-langserver"
CORPUS = CACHE / "corpus" / "django"
TRACE_APPS = [
    "basic",
    "lookup",
    "queries",
    "model_forms",
    "forms_tests.tests.test_forms",
    "model_fields",
    "aggregation",
    "expressions",
    "update",
    "delete",
    "many_to_one",
    "custom_managers",
    "validation",
    "get_or_create",
    "select_related",
    "ordering",
    "annotations",
    "model_inheritance",
    "generic_relations",
    "m2m_through",
]
CANDIDATES = [
    "get",
    "save",
    "filter",
    "clean",
    "delete",
    "update",
    "create",
    "exclude",
    "all",
    "count",
    "exists",
    "first",
    "last",
    "values",
    "values_list",
    "order_by",
    "annotate",
    "aggregate",
    "copy",
    "check",
    "deconstruct",
    "to_python",
    "get_prep_value",
    "from_db_value",
    "formfield",
    "contribute_to_class",
    "has_changed",
    "is_valid",
    "full_clean",
    "add",
    "remove",
    "clear",
    "set",
    "close",
    "flush",
    "encode",
    "decode",
    "resolve",
    "render",
    "as_sql",
    "compile",
    "get_db_prep_value",
    "validate",
    "run_validators",
    "setdefault",
    "pop",
    "items",
    "keys",
    "using",
    "get_queryset",
    "get_or_create",
    "update_or_create",
    "bulk_create",
    "in_bulk",
    "only",
    "defer",
    "select_related",
    "prefetch_related",
    "distinct",
    "none",
    "iterator",
    "latest",
    "earliest",
    "refresh_from_db",
    "clean_fields",
    "validate_unique",
    "prepare_value",
    "value_from_datadict",
    "format_value",
    "get_context",
    "add_error",
    "get_field",
    "get_fields",
    "resolve_expression",
    "get_source_expressions",
    "relabeled_clone",
    "select_format",
    "as_sqlite",
    "get_lookup",
    "get_transform",
    "execute_sql",
    "as_sql_query",
    "chain",
    "clone",
]
TRACER = r"""
import json, os, runpy, sys, threading
NAMES = set(os.environ["TRACE_NAMES"].split(","))
seen = {}
def profile(frame, event, arg):
    if event != "call" or frame.f_code.co_name not in NAMES or frame.f_back is None:
        return
    code, caller = frame.f_code, frame.f_back
    key = (code.co_name, code.co_filename, code.co_firstlineno, caller.f_code.co_filename,
           caller.f_lineno)
    seen[key] = 1
sys.path.insert(0, os.getcwd())
sys.setprofile(profile)
threading.setprofile(profile)
try:
    sys.argv = ["runtests.py", *sys.argv[1:]]
    runpy.run_path("runtests.py", run_name="__main__")
except SystemExit:
    pass
finally:
    sys.setprofile(None)
    with open(os.environ["TRACE_OUT"], "w") as out:
        json.dump(list(seen), out)
"""


# -- the ground truth ----------------------------------------------------------------------


def django_root() -> Path:
    found = sorted(CORPUS.glob("django-*"))
    if not found:
        raise SystemExit(f"no Django corpus in {CORPUS}: run `python bench/fetch_corpus.py`")
    return found[-1]


def test_python() -> str:
    venv = CACHE / "django-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "asgiref>=3.8,<4", "sqlparse>=0.3.1"]
        subprocess.run(pip, check=True)
    return str(python)


def trace(root: Path) -> list[list[Any]]:
    """(name, callee file, callee first line, caller file, caller line) per observed call."""
    key = hashlib.sha256(" ".join([str(root), *TRACE_APPS, *CANDIDATES]).encode()).hexdigest()
    cached = CACHE / f"django-trace-{key[:12]}.json"
    if cached.exists():
        loaded: list[list[Any]] = json.loads(cached.read_text())
        return loaded
    print(f"tracing Django's tests ({len(TRACE_APPS)} apps; a few minutes) …", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "trace.py"
        script.write_text(TRACER)
        env = {
            **os.environ,
            "TRACE_NAMES": ",".join(CANDIDATES),
            "TRACE_OUT": str(cached),
            "PYTHONPATH": str(root),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        argv = [test_python(), str(script), "--parallel", "1", *TRACE_APPS]
        subprocess.run(argv, cwd=root / "tests", env=env, capture_output=True, check=False)
    loaded = json.loads(cached.read_text())
    return loaded


@dataclass
class Target:
    name: str
    path: Path
    line: int
    """1-based line of `def name`."""
    true_lines: set[tuple[str, int]]
    observed_lines: set[tuple[str, int]]
    results: dict[str, set[tuple[str, int]]] = field(default_factory=dict)

    @property
    def rel(self) -> str:
        return self.path.as_posix()


def choose_targets(root: Path, calls: list[list[Any]], count: int) -> list[Target]:
    inside = str(root) + os.sep
    callers: dict[tuple[str, str, int], set[tuple[str, int]]] = defaultdict(set)
    observed: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for name, callee, first, caller, line in calls:
        if not caller.startswith(inside):
            continue
        where = (caller[len(inside) :], int(line))
        observed[name].add(where)
        if callee.startswith(inside + "django" + os.sep):
            callers[(name, callee[len(inside) :], int(first))].add(where)
    targets: list[Target] = []
    for name in CANDIDATES:
        options = [(len(v), k) for k, v in callers.items() if k[0] == name and len(v) >= 3]
        if not options:
            continue
        _, (_, rel, first) = max(options)
        line = def_line(root / rel, name, first)
        if line is None:
            continue
        truth = callers[(name, rel, first)]
        targets.append(Target(name, Path(rel), line, truth, observed[name]))
        if len(targets) == count:
            break
    return targets


def def_line(path: Path, name: str, first: int) -> int | None:
    """The `def name` line at or after a code object's first line (decorators come first)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    pattern = re.compile(rf"^\s*(async\s+)?def\s+{re.escape(name)}\b")
    for number in range(first, min(first + 30, len(lines)) + 1):
        if pattern.match(lines[number - 1]):
            return number
    return None


# -- the answers ---------------------------------------------------------------------------


COMPACT = re.compile(r"\d+:\d+(, \d+:\d+)*")
"""find_references's positions-only listing (a long confirmed part next to unconfirmed ones)."""


def parse_references(content: str) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    current = ""
    for line in content.splitlines():
        if line and not line.startswith((" ", "Note:", "[")):
            current = line.strip()
        elif line.startswith("  ") and current and COMPACT.fullmatch(line.strip()):
            found.update((current, int(at.split(":", 1)[0])) for at in line.split(","))
        elif line.startswith("  ") and current and line.strip()[:1].isdigit():
            found.add((current, int(line.strip().split(":", 1)[0])))
    return found


def grep(root: Path, files: list[Path], name: str) -> set[tuple[str, int]]:
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    found = set()
    for path in files:
        rel = path.relative_to(root).as_posix()
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, 1):
                if pattern.search(text):
                    found.add((rel, number))
    return found


async def index_answers(root: Path, targets: list[Target]) -> None:
    workspace = Workspace([root])
    index_for(workspace).wait_built(600)
    service = CodeIntel(workspace)  # no sources installed: the index by name
    for target in targets:
        path = root / target.path
        doc = Document(path, path.read_text(encoding="utf-8"), "python")
        column = doc.text.splitlines()[target.line - 1].index(target.name)
        answer = await service.references(doc, Pos(target.line - 1, column), Overlay(), True)
        target.results["index"] = {
            (loc.path.relative_to(root).as_posix(), loc.span.start.line + 1) for loc in answer.value
        }
    workspace.close()


# -- latency -------------------------------------------------------------------------------


class BareClient:
    """basedpyright driven straight by a pygls client: the reference for the latency."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.client = LanguageClient("bare", "1")
        self.ready = asyncio.Event()
        self.opened: set[str] = set()

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(ls: LanguageClient, params: types.LogMessageParams) -> None:
            if re.match(r"Found \d+ source file", params.message):
                self.ready.set()

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(ls: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            return None

        @self.client.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(ls: LanguageClient, params: types.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

    async def start(self) -> None:
        await self.client.start_io(str(PYRIGHT), "--stdio", cwd=str(self.root))
        uri = self.root.as_uri()
        await self.client.initialize_async(
            types.InitializeParams(
                process_id=None,
                root_uri=uri,
                capabilities=types.ClientCapabilities(
                    workspace=types.WorkspaceClientCapabilities(configuration=True)
                ),
                workspace_folders=[types.WorkspaceFolder(uri=uri, name=self.root.name)],
            )
        )
        self.client.initialized(types.InitializedParams())
        await asyncio.wait_for(self.ready.wait(), 300)

    async def references(self, target: Target) -> set[tuple[str, int]]:
        path = self.root / target.path
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8")
        if uri not in self.opened:
            self.opened.add(uri)
            item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            self.client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        column = text.splitlines()[target.line - 1].index(target.name)
        result = await self.client.text_document_references_async(
            types.ReferenceParams(
                context=types.ReferenceContext(include_declaration=True),
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=target.line - 1, character=column),
            )
        )
        found = set()
        for loc in result or []:
            local = Path(loc.uri.removeprefix("file://"))
            if local.is_relative_to(self.root):
                found.add((local.relative_to(self.root).as_posix(), loc.range.start.line + 1))
        return found

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def agentls_references(conn: ServerConnection, target: Target) -> set[tuple[str, int]]:
    """The confirmed references (the server's answer); with the unconfirmed matches by name
    in `target.results["agentls+unconfirmed"]`."""
    confirmed, unconfirmed = await agentls_split(conn, target)
    target.results["agentls+unconfirmed"] = confirmed | unconfirmed
    return confirmed


async def agentls_split(
    conn: ServerConnection, target: Target, server: str = "basedpyright"
) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    query = {"path": target.rel, "line": target.line, "symbol": target.name}
    result = await conn.command(
        "agentls.tool", {"name": "find_references", "input": {**query, "max_results": 1000}}
    )
    if result.get("is_error"):
        raise RuntimeError(f"find_references {target.name}: {result.get('content')}")
    content = str(result.get("content"))
    if f"source: language server ({server})" not in content:
        notes = [line for line in content.splitlines() if line.startswith("Note:")]
        raise RuntimeError(f"not answered by {server}: {content[:200]} … {notes}")
    confirmed, _, unconfirmed = content.partition("unconfirmed match")
    return parse_references(confirmed), parse_references(unconfirmed)


async def timed(coro: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = await coro
    return time.perf_counter() - started, value


async def measure(root: Path, targets: list[Target], rounds: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["XDG_CACHE_HOME"] = str(CACHE / "xdg")
    env["AGENTLS_TRANSCRIPT_DIR"] = str(CACHE / "transcripts")
    figures: dict[str, Any] = {}
    # a cold basedpyright needs more than the default 60 s for its first query on Django
    slow = {
        "languageServers": {"python": {"command": [str(PYRIGHT), "--stdio"], "requestTimeout": 900}}
    }
    async with ServerConnection(root, env=env, initialization_options=slow) as conn:
        await conn.command("agentls.status", {})  # initialized; basedpyright not started yet
        cold, _ = await timed(agentls_references(conn, targets[0]))
        figures["cold_agentls_s"] = cold
        bare = BareClient(root)
        bare_cold_start, _ = await timed(bare.start())
        bare_first, _ = await timed(bare.references(targets[0]))
        figures["cold_bare_s"] = bare_cold_start + bare_first
        for target in targets:  # warm-up pass: every name once through each
            target.results["agentls"] = await agentls_references(conn, target)
            target.results["bare"] = await bare.references(target)
        ours: list[float] = []
        theirs: list[float] = []
        for round_number in range(rounds):
            for index, target in enumerate(targets):
                pair = [
                    ("agentls", agentls_references(conn, target)),
                    ("bare", bare.references(target)),
                ]
                first_ours = (index + round_number) % 2 == 0
                for kind, coro in pair if first_ours else reversed(pair):
                    seconds, _ = await timed(coro)
                    (ours if kind == "agentls" else theirs).append(seconds)
        await bare.stop()
    figures["warm_agentls"] = ours
    figures["warm_bare"] = theirs
    return figures


# -- report --------------------------------------------------------------------------------


def scores(targets: list[Target], kind: str) -> tuple[float, float, int]:
    found_true = found_decided = truth = reported = 0
    for target in targets:
        declared = (target.rel, target.line)
        result = target.results[kind] - {declared}
        found_true += len(result & target.true_lines)
        found_decided += len(result & target.observed_lines)
        truth += len(target.true_lines)
        reported += len(result)
    precision = found_true / found_decided if found_decided else 0.0
    return precision, found_true / truth if truth else 0.0, reported


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="measured passes (warm)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    root = django_root()
    targets = choose_targets(root, trace(root), args.names)
    print(f"{len(targets)} methods, {sum(len(t.true_lines) for t in targets)} true call lines")
    files = sorted(p for p in root.rglob("*.py") if ".venv" not in p.parts)
    for target in targets:
        target.results["grep"] = grep(root, files, target.name)
    asyncio.run(index_answers(root, targets))
    figures = asyncio.run(measure(root, targets, args.rounds))
    rows = []
    for kind, label in (
        ("agentls", "find_references (basedpyright)"),
        ("agentls+unconfirmed", "find_references + unconfirmed"),
        ("index", "index fallback (by name)"),
        ("grep", "grep \\bname\\b"),
    ):
        precision, recall, reported = scores(targets, kind)
        rows.append({"answer": label, "precision": precision, "recall": recall, "lines": reported})
    ours, theirs = figures["warm_agentls"], figures["warm_bare"]
    latency = {
        "cold_agentls_s": figures["cold_agentls_s"],
        "cold_bare_s": figures["cold_bare_s"],
        "warm_agentls_p50_ms": statistics.median(ours) * 1000,
        "warm_agentls_p95_ms": p95(ours) * 1000,
        "warm_bare_p50_ms": statistics.median(theirs) * 1000,
        "warm_bare_p95_ms": p95(theirs) * 1000,
    }
    latency["warm_p95_ratio"] = latency["warm_agentls_p95_ms"] / latency["warm_bare_p95_ms"]
    same = sum(t.results["agentls"] == t.results["bare"] for t in targets)
    print(f"\n{'answer':<34} {'precision':>9} {'recall':>7} {'lines':>7}")
    for row in rows:
        print(
            f"{row['answer']:<34} {row['precision']:>9.3f} {row['recall']:>7.3f} {row['lines']:>7}"
        )
    print(
        f"\ncold first query: agentls {latency['cold_agentls_s']:.1f} s (server start included), "
        f"bare client {latency['cold_bare_s']:.1f} s"
    )
    print(
        f"warm p50/p95: agentls {latency['warm_agentls_p50_ms']:.0f}/"
        f"{latency['warm_agentls_p95_ms']:.0f} ms, bare {latency['warm_bare_p50_ms']:.0f}/"
        f"{latency['warm_bare_p95_ms']:.0f} ms → p95 ratio {latency['warm_p95_ratio']:.2f}× "
        "(target ≤ 1.5×)"
    )
    print(f"identical reference sets (agentls vs bare client): {same}/{len(targets)}")
    if args.json:
        payload = {"scores": rows, "latency": latency, "methods": len(targets), "identical": same}
        args.json.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
