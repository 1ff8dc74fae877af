"""Which tree-sitter grammar and definition query serve which file.

Grammars come from the per-language PyPI packages (`tree-sitter-python`, ...), which ship the
compiled parser inside the wheel: nothing is downloaded at run time, which matters on offline
machines. Grammars, parsers and compiled queries are loaded lazily and cached per process
(worker processes load only what their files need).
"""

from __future__ import annotations

import hashlib
import importlib
import threading
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by the functions that parse: listing languages needs no parser
    import tree_sitter as ts


@dataclass(frozen=True)
class LanguageSpec:
    """How to parse one language and read its definitions.

    `upper_constants`: an ALL_CAPS variable is a
    constant by convention. `constructor_names`: methods that construct.
    `toplevel_methods_are_functions`: the grammar says "method" for every `def` (Ruby).
    """

    name: str
    module: str
    factory: str
    queries: tuple[str, ...]
    upper_constants: bool = False
    constructor_names: frozenset[str] = frozenset()
    toplevel_methods_are_functions: bool = False


LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        LanguageSpec(
            "python",
            "tree_sitter_python",
            "language",
            ("python",),
            upper_constants=True,
        ),
        LanguageSpec(
            "javascript",
            "tree_sitter_javascript",
            "language",
            ("ecmascript", "javascript"),
            constructor_names=frozenset({"constructor"}),
        ),
        LanguageSpec(
            "typescript",
            "tree_sitter_typescript",
            "language_typescript",
            ("ecmascript", "typescript"),
            constructor_names=frozenset({"constructor"}),
        ),
        LanguageSpec(
            "tsx",
            "tree_sitter_typescript",
            "language_tsx",
            ("ecmascript", "typescript"),
            constructor_names=frozenset({"constructor"}),
        ),
        LanguageSpec("go", "tree_sitter_go", "language", ("go",)),
        LanguageSpec("rust", "tree_sitter_rust", "language", ("rust",), upper_constants=True),
        LanguageSpec("java", "tree_sitter_java", "language", ("java",), upper_constants=True),
        LanguageSpec("c", "tree_sitter_c", "language", ("c",), upper_constants=True),
        LanguageSpec(
            "cpp",
            "tree_sitter_cpp",
            "language",
            ("cpp",),
            upper_constants=True,
        ),
        LanguageSpec("c_sharp", "tree_sitter_c_sharp", "language", ("c_sharp",)),
        LanguageSpec(
            "ruby",
            "tree_sitter_ruby",
            "language",
            ("ruby",),
            constructor_names=frozenset({"initialize"}),
            toplevel_methods_are_functions=True,
        ),
        LanguageSpec(
            "php",
            "tree_sitter_php",
            "language_php",
            ("php",),
            constructor_names=frozenset({"__construct"}),
        ),
    )
}

_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".cs": "c_sharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
}

_GRAMMAR_PACKAGES = (
    "tree-sitter",
    "tree-sitter-python",
    "tree-sitter-javascript",
    "tree-sitter-typescript",
    "tree-sitter-go",
    "tree-sitter-rust",
    "tree-sitter-java",
    "tree-sitter-c",
    "tree-sitter-cpp",
    "tree-sitter-c-sharp",
    "tree-sitter-ruby",
    "tree-sitter-php",
)


def language_for(path: Path | str) -> LanguageSpec | None:
    """The language of a file by its extension, or None when we have no grammar for it."""
    name = str(path)
    dot = name.rfind(".")
    if dot < 0:
        return None
    lang = _EXTENSIONS.get(name[dot:].lower())
    return LANGUAGES[lang] if lang else None


def supported_extensions() -> frozenset[str]:
    return frozenset(_EXTENSIONS)


@cache
def grammar(spec: LanguageSpec) -> ts.Language:
    import tree_sitter as ts

    module = importlib.import_module(spec.module)
    return ts.Language(getattr(module, spec.factory)())


@cache
def query_source(spec: LanguageSpec) -> str:
    folder = resources.files(__package__).joinpath("queries")
    return "\n".join(folder.joinpath(f"{q}.scm").read_text("utf-8") for q in spec.queries)


@cache
def definition_query(spec: LanguageSpec) -> ts.Query:
    """The whole definition query (the reference; the index runs `toplevel.fast_query`)."""
    import tree_sitter as ts

    return ts.Query(grammar(spec), query_source(spec))


@cache
def compiled_query(spec: LanguageSpec) -> ts.Query:
    """The definition query as the index runs it: compiled once per process (a few hundred
    milliseconds per language, paid by every index worker at start), shared by the
    pattern texts below and by `toplevel.fast_query`, which disables some patterns in it."""
    import tree_sitter as ts

    return ts.Query(grammar(spec), query_source(spec))


@cache
def pattern_texts(spec: LanguageSpec) -> tuple[str, ...]:
    """The source text of each pattern of the definition query, by pattern index."""
    query = compiled_query(spec)
    source = query_source(spec)
    return tuple(
        source[query.start_byte_for_pattern(i) : query.end_byte_for_pattern(i)]
        for i in range(query.pattern_count)
    )


def kind_id(spec: LanguageSpec, name: str) -> int:
    """The grammar's id of the named node kind `name` (-1 when it has none): walks compare
    ids, which is cheaper than comparing type names."""
    return grammar(spec).id_for_node_kind(name, True) or -1


def field_id(spec: LanguageSpec, name: str) -> int:
    """The grammar's id of the field `name` (-1 when it has none)."""
    return grammar(spec).field_id_for_name(name) or -1


_local = threading.local()


def parser(spec: LanguageSpec) -> ts.Parser:
    """A parser for this thread: `ts.Parser` is not safe to share between threads."""
    import tree_sitter as ts

    parsers: dict[str, ts.Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    p = parsers.get(spec.name)
    if p is None:
        p = parsers[spec.name] = ts.Parser(grammar(spec))
    return p


@cache
def fingerprint() -> str:
    """Changes whenever a grammar package, a query or the extraction code changes: persisted
    symbols are stale then (the cache is disposable; a rebuild costs one cold start)."""
    h = hashlib.sha256()
    for pkg in _GRAMMAR_PACKAGES:
        try:
            h.update(f"{pkg}={metadata.version(pkg)};".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{pkg}=?;".encode())
    for spec in LANGUAGES.values():
        h.update(query_source(spec).encode())
    here = resources.files(__package__)
    rules = ("extract.py", "python_walk.py", "toplevel.py", "defs.py", "records.py", "matching.py")
    for module in rules:  # the extraction rules and the row format
        h.update(here.joinpath(module).read_bytes())
    return h.hexdigest()[:16]
