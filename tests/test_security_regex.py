"""No pattern from a model, a repository or a user reaches a backtracking engine (issue 27, 2).

Two halves: an AST walk over `server/` that fails on any `re.compile`/`re.search`/… call
whose pattern is not built from literals (and `re.escape` of anything), unless the call
site is in `ALLOWED` with the reason it is linear; and attacks through the tools, each of
which froze the server for more than 40 s (the matcher alone 105 s) before the fix. The
attacks assert a CPU bound (5 s) orders of magnitude apart from the freeze: it tells
linear from exponential, not fast from slow.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.index import SymbolIndex
from agentls.workspace.secrets import SecretMatcher
from tests.ws_support import Runner, make_ctx, make_tree

SERVER = Path(__file__).resolve().parents[1] / "server"

RE_FUNCTIONS = {
    "compile", "search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split",
}  # fmt: skip

ALLOWED = {
    ("agentls/workspace/globs.py", "glob_regex"): "compiled for every glob, but matched only "
    "when `backtracks_little` holds (no braces, one `*` run per segment, one `**`); else RE2",
    ("agentls/workspace/secrets.py", "_compile"): "only when `backtracks_little` holds",
    ("agentls/workspace/secrets.py", "_Combined.__init__"): "an alternation of globs that "
    "each passed `backtracks_little` (alternatives add their costs, never multiply)",
    ("agentls/workspace/ignore.py", "_alternation"): "ignore lines that passed `_cheap` "
    "(`backtracks_little`); the others go to `_alternation_re2`",
    ("agentls/workspace/lint_text_formats.py", "parse_line_diagnostics"): "`pattern` is one "
    "of agentls's own constants; settings patterns go through `config.regex` (RE2)",
    ("agentls/langservers/managed.py", "ManagedServer._start"): "`ready_log` comes from the "
    "built-in server table (`codeintel.discovery`), never from settings or a repository",
}
"""Call sites whose pattern is not a literal, and why each one is still linear."""


def _safe(node: ast.expr) -> bool:
    """A pattern built only from literals and `re.escape(...)` (an escaped literal)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _safe(node.left) and _safe(node.right)
    if isinstance(node, ast.JoinedStr):
        return all(_safe(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "escape"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
    )


def _calls(tree: ast.Module) -> Iterator[tuple[str, ast.Call]]:
    """(qualified function name, call) for every `re.<function>(...)` call."""

    def walk(node: ast.AST, scope: list[str]) -> Iterator[tuple[str, ast.Call]]:
        for child in ast.iter_child_nodes(node):
            named = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            inner = [*scope, child.name] if named else scope  # type: ignore[union-attr]
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr in RE_FUNCTIONS
                and isinstance(child.func.value, ast.Name)
                and child.func.value.id == "re"
            ):
                yield ".".join(scope), child
            yield from walk(child, inner)

    yield from walk(tree, [])


def _input_derived_sites() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted((SERVER / "agentls").rglob("*.py")):
        rel = str(path.relative_to(SERVER))
        for scope, call in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            if call.args and not _safe(call.args[0]):
                found.append((rel, scope, call.lineno))
    return found


def test_every_input_derived_pattern_is_on_re2_or_allowed_with_a_reason() -> None:
    sites = _input_derived_sites()
    unexplained = [f"{rel}:{line} in {scope}" for rel, scope, line in sites]
    unexplained = [
        text for text, (rel, scope, _) in zip(unexplained, sites, strict=True)
        if (rel, scope) not in ALLOWED
    ]  # fmt: skip
    assert unexplained == [], (
        "a pattern that is not a literal reaches Python's backtracking `re`: use RE2 "
        "(`re2`, `agentls.config.regex`) or add the site to ALLOWED with why it is linear"
    )
    stale = set(ALLOWED) - {(rel, scope) for rel, scope, _ in sites}
    assert stale == set(), "ALLOWED names call sites that no longer exist"


def test_the_walk_sees_an_input_derived_pattern() -> None:
    tree = ast.parse("import re\ndef f(q):\n    return re.compile('x' + q)\n")
    assert [scope for scope, call in _calls(tree) if not _safe(call.args[0])] == ["f"]


BRACES = "{a,a,a,a}" * 16 + "b"
"""4^16 ways for `re` to fail on a name of 16+ `a`s (105 s in the report)."""
LONG_NAME = "a" * 40
CPU_BOUND_S = 5.0


def _cpu(began: float) -> float:
    return time.process_time() - began


async def test_grep_glob_with_braces_is_linear(tmp_path: Path) -> None:
    make_tree(tmp_path, {LONG_NAME: "needle\n", "x.py": "needle\n"})
    runner = Runner(make_ctx(tmp_path))
    began = time.process_time()
    await runner.call("grep", pattern="needle", glob=BRACES)
    assert _cpu(began) < CPU_BOUND_S


async def test_list_files_pattern_with_braces_is_linear(tmp_path: Path) -> None:
    make_tree(tmp_path, {LONG_NAME: "x\n", "x.py": "x\n"})
    runner = Runner(make_ctx(tmp_path))
    began = time.process_time()
    await runner.call("list_files", pattern=BRACES)
    assert _cpu(began) < CPU_BOUND_S


async def test_a_projects_secret_pattern_with_braces_is_linear(tmp_path: Path) -> None:
    make_tree(tmp_path, {LONG_NAME: "plain\n"})
    ctx = make_ctx(tmp_path)
    ctx.workspace.services.secrets = SecretMatcher(patterns=(BRACES,), roots=[tmp_path])
    runner = Runner(ctx)
    began = time.process_time()
    assert "plain" in await runner.ok("read_file", path=LONG_NAME)
    assert _cpu(began) < CPU_BOUND_S


@pytest.mark.parametrize("query", ["a a a a a a a a a a zz", "aaaaaaaaaaaaaaaaaaaaaaaaazz"])
def test_search_symbols_query_is_linear(query: str) -> None:
    index = SymbolIndex(None)
    # word form `ZzAAAA…`: every query word starts words of every name, but not in order
    name = "zz_" + "_".join("a" * 60)
    text = "".join(f"def {name}_{i}(): pass\n" for i in range(1000))
    index.update_file(Path("/ws/m.py"), text, 0, len(text))
    began = time.process_time()
    assert index.search(query).symbols == []
    assert _cpu(began) < CPU_BOUND_S
