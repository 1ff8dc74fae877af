"""The symbol index reads definitions of every supported language (fixtures in
tests/fixtures/index/): names, kinds, containers, ranges and first lines, via the public
`SymbolIndex.document_symbols`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.index import Symbol, SymbolIndex, SymbolKind, outline
from agentls.tools.symbols import KindName

FIXTURES = Path(__file__).parent / "fixtures" / "index"


def flatten(symbols: list[Symbol] | tuple[Symbol, ...]) -> list[Symbol]:
    out: list[Symbol] = []
    for s in symbols:
        out.append(s)
        out.extend(flatten(s.children))
    return out


@pytest.fixture(scope="module")
def index() -> SymbolIndex:
    idx = SymbolIndex(None)
    idx.build(sorted(FIXTURES.iterdir()), lambda p: p.read_bytes(), workers=1)
    return idx


def triples(index: SymbolIndex, name: str) -> set[tuple[str, str, str]]:
    """(kind, container, name) of every definition in the fixture `name`."""
    return {
        (s.kind.value, s.container, s.name)
        for s in flatten(index.document_symbols(FIXTURES / name))
    }


EXPECTED: dict[str, set[tuple[str, str, str]]] = {
    "sample.py": {
        ("constant", "", "MAX_SIZE"),
        ("variable", "", "default_name"),
        ("class", "", "UserService"),
        ("field", "UserService", "retries"),
        ("method", "UserService", "__init__"),
        ("method", "UserService", "name"),
        ("method", "UserService", "fetch"),
        ("function", "UserService.fetch", "helper"),
        ("class", "UserService", "Inner"),
        ("method", "UserService.Inner", "deep"),
        ("function", "", "top_level"),
        ("function", "", "decorated"),
    },
    "sample.js": {
        ("constant", "", "API_URL"),
        ("variable", "", "counter"),
        ("function", "", "makeThing"),
        ("function", "", "arrowFn"),
        ("class", "", "Widget"),
        ("constructor", "Widget", "constructor"),
        ("method", "Widget", "render"),
        ("method", "Widget", "create"),
        ("method", "", "method"),
        ("function", "", "gen"),
        ("function", "", "handler"),
    },
    "sample.ts": {
        ("interface", "", "Shape"),
        ("method", "Shape", "area"),
        ("property", "Shape", "label"),
        ("type", "", "Point"),
        ("enum", "", "Color"),
        ("enum_member", "Color", "Red"),
        ("enum_member", "Color", "Green"),
        ("class", "", "Base"),
        ("property", "Base", "count"),
        ("method", "Base", "area"),
        ("class", "", "Circle"),
        ("constructor", "Circle", "constructor"),
        ("method", "Circle", "area"),
        ("namespace", "", "Geometry"),
        ("function", "Geometry", "distance"),
        ("function", "", "declared"),
        ("constant", "", "origin"),
        ("function", "", "handler"),
    },
    "sample.tsx": {
        ("interface", "", "Props"),
        ("property", "Props", "title"),
        ("function", "", "Header"),
        ("function", "", "Footer"),
        ("class", "", "App"),
        ("method", "App", "render"),
    },
    "sample.go": {
        ("constant", "", "MaxItems"),
        ("constant", "", "ModeA"),
        ("constant", "", "ModeB"),
        ("variable", "", "registry"),
        ("interface", "", "Handler"),
        ("method", "Handler", "Handle"),
        ("struct", "", "Server"),
        ("field", "Server", "Name"),
        ("type", "", "ID"),
        ("function", "", "NewServer"),
        ("method", "Server", "Start"),
        ("method", "Server", "Stop"),
    },
    "sample.rs": {
        ("constant", "", "LIMIT"),
        ("constant", "", "GREETING"),
        ("struct", "", "Point"),
        ("field", "Point", "x"),
        ("enum", "", "Shape"),
        ("enum_member", "Shape", "Circle"),
        ("trait", "", "Area"),
        ("method", "Area", "area"),
        ("impl", "", "impl Point"),
        ("method", "Point", "new"),
        ("impl", "", "impl fmt::Display for Point"),
        ("method", "Point", "fmt"),
        ("module", "", "geometry"),
        ("function", "geometry", "distance"),
        ("type", "", "Meters"),
        ("macro", "", "square"),
        ("function", "", "main"),
    },
    "Sample.java": {
        ("class", "", "Sample"),
        ("constant", "Sample", "MAX"),
        ("field", "Sample", "name"),
        ("constructor", "Sample", "Sample"),
        ("method", "Sample", "getName"),
        ("class", "Sample", "Nested"),
        ("method", "Sample.Nested", "run"),
        ("enum", "Sample", "Level"),
        ("enum_member", "Sample.Level", "LOW"),
        ("interface", "", "Greeter"),
        ("method", "Greeter", "greet"),
        ("class", "", "Pair"),
        ("interface", "", "Marker"),
    },
    "sample.c": {
        ("macro", "", "BUFFER_SIZE"),
        ("macro", "", "SQUARE"),
        ("struct", "", "point"),
        ("field", "point", "x"),
        ("type", "", "person_t"),
        ("enum", "", "color"),
        ("enum_member", "color", "RED"),
        ("type", "", "size_type"),
        ("variable", "", "global_count"),
        ("function", "", "add"),
        ("function", "", "make_name"),
    },
    "sample.cpp": {
        ("namespace", "", "app"),
        ("namespace", "app", "detail"),
        ("function", "app.detail", "helper"),
        ("class", "app", "Widget"),
        ("constructor", "app.Widget", "Widget"),
        ("method", "app.Widget", "~Widget"),
        ("method", "app.Widget", "draw"),
        ("method", "app.Widget", "size"),
        ("field", "app.Widget", "size_"),
        ("struct", "app", "Config"),
        ("function", "app", "maximum"),
        ("enum", "app", "Mode"),
        ("enum_member", "app.Mode", "Fast"),
        ("type", "app", "Names"),
        ("function", "", "main"),
    },
    "Sample.cs": {
        ("namespace", "", "Example.App"),
        ("interface", "Example.App", "IRepository"),
        ("method", "Example.App.IRepository", "Save"),
        ("class", "Example.App", "Repository"),
        ("field", "Example.App.Repository", "_capacity"),
        ("constant", "Example.App.Repository", "Limit"),
        ("constructor", "Example.App.Repository", "Repository"),
        ("property", "Example.App.Repository", "Name"),
        ("method", "Example.App.Repository", "Save"),
        ("event", "Example.App.Repository", "Changed"),
        ("struct", "Example.App", "Vector"),
        ("enum", "Example.App", "Status"),
        ("enum_member", "Example.App.Status", "Active"),
        ("class", "Example.App", "Person"),
        ("type", "Example.App", "Callback"),
    },
    "sample.rb": {
        ("constant", "", "MAX_RETRIES"),
        ("module", "", "Billing"),
        ("constant", "Billing", "TAX"),
        ("class", "Billing", "Invoice"),
        ("constructor", "Billing.Invoice", "initialize"),
        ("method", "Billing.Invoice", "build"),
        ("method", "Billing.Invoice", "paid?"),
        ("function", "", "helper_method"),
    },
    "sample.php": {
        ("namespace", "", "App\\Models"),
        ("constant", "", "VERSION"),
        ("interface", "", "HasName"),
        ("method", "HasName", "getName"),
        ("trait", "", "Greets"),
        ("method", "Greets", "greet"),
        ("class", "", "User"),
        ("constant", "User", "TABLE"),
        ("property", "User", "name"),
        ("property", "User", "count"),
        ("constructor", "User", "__construct"),
        ("method", "User", "getName"),
        ("enum", "", "Suit"),
        ("enum_member", "Suit", "Hearts"),
        ("function", "", "helper"),
    },
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_definitions_per_language(index: SymbolIndex, name: str) -> None:
    found = triples(index, name)
    missing = EXPECTED[name] - found
    assert not missing, f"missing in {name}: {sorted(missing)}"


@pytest.mark.parametrize(
    ("name", "local"),
    [
        ("sample.py", "local_var"),
        ("sample.js", "inner"),
        ("sample.go", "fmt"),
    ],
)
def test_locals_and_imports_are_not_definitions(index: SymbolIndex, name: str, local: str) -> None:
    assert local not in {n for _, _, n in triples(index, name)}


def test_outline_is_a_tree_with_ranges_and_first_lines(index: SymbolIndex) -> None:
    top = index.document_symbols(FIXTURES / "sample.py")
    assert [s.name for s in top] == [
        "MAX_SIZE",
        "default_name",
        "UserService",
        "top_level",
        "decorated",
    ]
    service = top[2]
    assert [c.name for c in service.children] == ["retries", "__init__", "name", "fetch", "Inner"]
    assert service.line_text == "class UserService(Base):"
    assert service.selection_range.start == (7, 6)
    assert service.selection_range.end == (7, 17)
    assert service.range.start == (7, 0)
    assert service.range.end.line == 28
    # A decorator belongs to the definition's full range, the name line stays the def line.
    decorated = top[4]
    assert decorated.range.start.line == 35
    assert decorated.selection_range.start.line == 36
    assert decorated.line_text == "def decorated():"
    fetch = service.children[3]
    assert [c.name for c in fetch.children] == ["helper"]


def test_go_methods_carry_their_receiver_as_container(index: SymbolIndex) -> None:
    top = index.document_symbols(FIXTURES / "sample.go")
    start = next(s for s in top if s.name == "Start")
    assert (start.kind, start.container) == (SymbolKind.METHOD, "Server")
    assert start.line_text == "func (s *Server) Start() error {"


def test_columns_are_code_points_not_bytes() -> None:
    text = 'title = "héllo wörld"; x = 1\nclass Straße:\n    def größe(self): pass\n'
    syms = flatten(outline(Path("u.py"), text) or [])
    cls = next(s for s in syms if s.name == "Straße")
    assert cls.selection_range.start == (1, 6)
    assert cls.selection_range.end == (1, 12)
    method = next(s for s in syms if s.name == "größe")
    assert method.selection_range.start == (2, 8)
    assert method.selection_range.end == (2, 13)
    # ASCII lines of a file that has non-ASCII text elsewhere keep byte columns; lines
    # with emoji/CJK count code points (the LSP edge converts to UTF-16 later).
    ts_text = (
        "// © 2024 😀\nexport interface Plain { field: number }\nconst 名前 = 1; let after = 2\n"
    )
    ts_syms = {s.name: s for s in flatten(outline(Path("u.ts"), ts_text) or [])}
    assert ts_syms["Plain"].selection_range.start == (1, 17)
    assert ts_syms["field"].selection_range.start == (1, 25)
    assert ts_syms["名前"].selection_range.start == (2, 6)
    assert ts_syms["after"].selection_range.start == (2, 18)  # 22 in bytes


def test_typescript_variance_annotations_still_yield_definitions() -> None:
    # The TypeScript grammar answers `<out T>` / `<in out T>` with ERROR nodes.
    text = (
        "export interface Producer<out T> { get(): T }\n"
        "export class Box<in out T> extends Base { put(v: T) {} value = 1 }\n"
        "export type Fn<out R> = () => R;\n"
        "export function after() {}\n"
    )
    symbols = flatten(outline(Path("v.ts"), text) or [])
    names = {(s.kind.value, s.container, s.name) for s in symbols}
    assert {
        ("interface", "", "Producer"),
        ("method", "Producer", "get"),
        ("class", "", "Box"),
        ("method", "Box", "put"),
        ("type", "", "Fn"),
        ("function", "", "after"),
    } <= names


def test_definitions_inside_error_regions_are_found() -> None:
    text = "def ok():\n    pass\n\nclass Broken(:\n    def inside(self):\n        pass\n"
    names = {s.name for s in flatten(outline(Path("e.py"), text) or [])}
    assert {"ok", "inside"} <= names


def test_tool_kind_names_cover_every_searchable_kind() -> None:
    from typing import get_args

    assert set(get_args(KindName)) == {k.value for k in SymbolKind} - {"impl"}


def test_unsupported_files_have_no_outline() -> None:
    assert outline(Path("notes.txt"), "class A: pass") is None


RECALL_GAPS = {
    "python": (
        "try:\n    import fast_json as json_impl\nexcept ImportError:\n    json_impl = None\n"
        "else:\n    HAVE_FAST = True\nif A:\n    pass\nelif B:\n    ELIF_VALUE = 1\n"
        "else:\n    ELSE_VALUE = 2\nHORIZONTAL, VERTICAL = 1, 2\n(LEFT, RIGHT) = 3, 4\n"
        "class Form:\n    new_password1, new_password2 = 'a', 'b'\n"
        "def f():\n    local_a, local_b = 1, 2\n",
        {
            "json_impl",
            "HAVE_FAST",
            "ELIF_VALUE",
            "ELSE_VALUE",
            "HORIZONTAL",
            "VERTICAL",
            "LEFT",
            "RIGHT",
            "new_password1",
            "new_password2",
        },
        {"local_a", "local_b"},
    ),
    "javascript": (
        "'use strict';\n{\n  const SelectBox = {};\n  let popupIndex = 0;\n}\n"
        "if (typeof window !== 'undefined') {\n  const API_ROOT = '/api';\n} else {\n"
        "  var FALLBACK = 1;\n}\ntry {\n  const HAS_FETCH = !!fetch;\n} catch (e) {}\n"
        "function Legacy() { this.x = 1; const inner = 2; }\n"
        "Legacy.prototype.run = function () {};\n",
        {"SelectBox", "popupIndex", "API_ROOT", "FALLBACK", "HAS_FETCH", "Legacy", "run"},
        {"inner", "x"},
    ),
    "typescript": (
        'declare module "os" {\n  namespace constants {\n    const ECONNRESET: number;\n'
        "    var legacy: string;\n  }\n  const EOL: string;\n  export const devNull: string;\n}\n"
        "declare global {\n  var SlowBuffer: unknown;\n}\nnamespace Inner { const hidden = 1; }\n"
        "interface BufferConstructor {\n  new (size: number): Buffer;\n}\n"
        "function g() { const notMine = 1; }\n",
        {"ECONNRESET", "legacy", "EOL", "devNull", "SlowBuffer", "hidden", "new"},
        {"notMine"},
    ),
}


@pytest.mark.parametrize("language", sorted(RECALL_GAPS))
def test_recall_gaps_of_issue_22_are_closed(language: str) -> None:
    from agentls.index.extract import extract_rows
    from agentls.index.languages import LANGUAGES

    source, wanted, unwanted = RECALL_GAPS[language]
    names = {row[0] for row in extract_rows(LANGUAGES[language], source.encode())}
    assert wanted <= names, wanted - names
    assert not (unwanted & names), unwanted & names
