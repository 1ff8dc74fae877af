"""The Python statement walk finds exactly what the Python definition query finds.

`queries/python.scm` is the specification; the index uses the faster walk for Python
(`python_walk`). Both are run on constructed sources covering every pattern and on this
repository's own Python files, and must agree on every definition (kind, name, ranges).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.index.extract import collect_by_query, rows_from_tree
from agentls.index.languages import LANGUAGES, parser
from agentls.index.python_walk import collect_python
from tests.index_support import definitions

PYTHON = LANGUAGES["python"]
REPO = Path(__file__).resolve().parents[1]

SOURCES = {
    "decorators": (
        "import functools\n"
        "@functools.cache\n"
        "@other(arg=lambda: 1)\n"
        "def cached(x):\n"
        "    def inner():\n"
        "        class Local:\n"
        "            z = 1\n"
        "        return Local\n"
        "    value = 3\n"
        "    return inner\n"
        "@dataclass\n"
        "class Point:\n"
        "    x: int = 0\n"
        "    y = z = 0\n"
        "    @property\n"
        "    def norm(self): return 0\n"
        "    class Meta:\n"
        "        ordering = ['x']\n"
    ),
    "module_level": (
        "A = 1\n"
        "b: int = 2\n"
        "c = d = 3\n"
        "e, f = 1, 2\n"
        "obj.attr = 4\n"
        "if TYPE_CHECKING:\n"
        "    G = 5\n"
        "    def only_typing(): ...\n"
        "elif other:\n"
        "    H = 6\n"
        "else:\n"
        "    I = 7\n"
        "try:\n"
        "    J = 8\n"
        "except ImportError:\n"
        "    K = 9\n"
        "    def fallback(): ...\n"
        "finally:\n"
        "    L = 10\n"
    ),
    "compound": (
        "for i in range(3):\n"
        "    def in_for(): ...\n"
        "while True:\n"
        "    class InWhile: ...\n"
        "    break\n"
        "with open('f') as fh:\n"
        "    def in_with(): ...\n"
        "match command:\n"
        "    case 'go':\n"
        "        def in_case(): ...\n"
        "    case _:\n"
        "        class Fallback: ...\n"
        "async def coroutine():\n"
        "    async with lock:\n"
        "        def nested(): ...\n"
        "x = [lambda: 1 for _ in range(2)]\n"
    ),
    "syntax_errors": (
        "class Broken(:\n"
        "    def method(self):\n"
        "        return 1\n"
        "def ok():\n"
        "    pass\n"
        "def half(\n"
        "CONST = 1\n"
    ),
    "unicode": "class Ünïcode:\n    ñame = '😀'\n    def 函数(self): ...\n",
}


def assert_same(source: bytes) -> int:
    """Both find the same definitions; returns how many."""
    tree = parser(PYTHON).parse(source)
    by_walk = definitions(collect_python(PYTHON, tree))
    assert by_walk == definitions(collect_by_query(PYTHON, tree))
    return len(by_walk)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_walk_matches_query_on_every_pattern(name: str) -> None:
    source = SOURCES[name].encode()
    assert assert_same(source) >= 3
    tree = parser(PYTHON).parse(source)
    assert len(rows_from_tree(PYTHON, tree, source)) >= 3


def test_walk_matches_query_on_this_repository() -> None:
    files = sorted(REPO.joinpath("server").rglob("*.py")) + sorted(
        REPO.joinpath("tests").rglob("*.py")
    )
    assert len(files) > 100
    assert sum(assert_same(path.read_bytes()) for path in files) > 1000
