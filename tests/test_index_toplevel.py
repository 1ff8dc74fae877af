"""JavaScript/TypeScript top-level variables found from the program's children agree with
the query patterns rooted at `program` (which stay in the .scm files as the spec).

Both ways run on constructed sources covering every shape and on this repository's own
TypeScript and JavaScript (the VS Code client); every definition must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.index.extract import collect_by_query
from agentls.index.languages import LANGUAGES, parser
from agentls.index.toplevel import toplevel_shapes
from tests.index_support import definitions

REPO = Path(__file__).resolve().parents[1]

SOURCES = {
    "javascript": (
        "const A = 1, b = 2;\n"
        "let c = 3;\n"
        "var d;\n"
        "export const E = 4;\n"
        "export let f = 5;\n"
        "export var g = 6;\n"
        "export default function h() {}\n"
        "const arrow = () => 1;\n"
        "const { x, y } = obj;\n"
        "function outer() { const inner = 1; let local = 2; }\n"
        "if (z) { const inIf = 1; } else { let inElse = 2; }\n"
        "{ var inBlock = 3; }\n"
        "try { const inTry = 4; } catch (e) { const notTop = 5; }\n"
        "const klass = class Named {};\n"
        "const 函数 = '😀';\n"
    ),
    "typescript": (
        "const A: number = 1;\n"
        "let b = 2;\n"
        "declare const C: string;\n"
        "declare var d: number;\n"
        "declare let e: number;\n"
        "export const F = 1;\n"
        "export declare const G: number;\n"
        "namespace NS { export const H = 1; export let i = 2; }\n"
        "declare namespace Amb { const J: number; }\n"
        "const fn = function () {};\n"
        "export { A as Alias };\n"
    ),
    "tsx": "export const View = () => <div/>;\nconst count = 1;\nlet state = 2;\n",
}


def assert_same(language: str, source: bytes) -> int:
    spec = LANGUAGES[language]
    tree = parser(spec).parse(source)
    fast = definitions(collect_by_query(spec, tree))
    assert fast == definitions(collect_by_query(spec, tree, reference=True))
    return len(fast)


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_toplevel_pass_matches_the_program_patterns(language: str) -> None:
    assert toplevel_shapes(LANGUAGES[language])  # the patterns it replaces exist
    assert assert_same(language, SOURCES[language].encode()) >= 3


def test_agrees_on_this_repositorys_typescript_and_javascript() -> None:
    files = [
        p
        for p in REPO.joinpath("editor-clients").rglob("*")
        if p.suffix in (".ts", ".js", ".mjs") and "node_modules" not in p.parts
    ]
    assert files
    for path in files:
        language = "typescript" if path.suffix == ".ts" else "javascript"
        assert_same(language, path.read_bytes())
