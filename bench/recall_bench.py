"""Recall of the symbol index against universal-ctags, per language, on the same files.

Both index the same list: every Python, JavaScript and TypeScript file of the corpus that
the index parses (files it skips as over 2 MB or minified are left out for both). A ctags
definition counts as found when the index has a definition of the same name starting on
the same line (its name or its whole range).

Omitted by design, and so not counted (each is classified with the file's own syntax tree,
not by ctags' kind, which its JavaScript parser often gets wrong):

- imports (`import x as y`, `from m import y as z`: ctags' `namespace`/`unknown` kinds);
- locals: anything declared inside a function or method body, except nested named
  functions and classes (those are indexed);
- object-literal members (`{key: value}`, `{method() {}}`: ctags calls them property,
  class, method or function) and `this.x = …` / `self.x = …` attributes;
- ctags' synthetic names for anonymous functions (`AnonymousFunction…`);
- parameters and type parameters (ctags 5.9 sometimes tags setter parameters as fields);
- ctags misparses: a "name" that is not an identifier at that place in the syntax tree
  (`readonly` in `readonly X: 1`, `is`/`Buffer` in the predicate `obj is Buffer`, `T` in
  `infer T`, `x1403` in `0x1403`), or a type reference rather than a declaration.

    python bench/recall_bench.py [--corpus DIR] [--misses N]

Prints per language: found / counted (recall), what was left out and why, and the kinds
still missed with examples.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import tree_sitter as ts

from agentls.index import language_for
from agentls.index.extract import extract_rows, skip_reason
from agentls.index.languages import parser

DEFAULT_CORPUS = Path.home() / ".cache" / "agentls-bench" / "corpus"
LANGUAGES = {"python": "Python", "javascript": "JavaScript", "typescript": "TypeScript"}
TARGET = 0.98

_FUNCTIONS = {
    "function_definition",
    "function_declaration",
    "function_expression",
    "function",
    "arrow_function",
    "method_definition",
    "generator_function",
    "generator_function_declaration",
    "lambda",
}
_OBJECT_MEMBER = {"pair", "shorthand_property_identifier", "shorthand_property", "object"}
_ATTRIBUTE = {"member_expression", "attribute"}
_NAMED_DEFS = {
    "function_declaration",
    "function_definition",
    "class_declaration",
    "class_definition",
    "class",
    "generator_function_declaration",
}


def corpus_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*")):
        spec = language_for(path)
        if spec is None or spec.name not in LANGUAGES or not path.is_file():
            continue
        if skip_reason(path.read_bytes()) is None:
            found.append(path)
    return found


def ctags_tags(files: list[Path]) -> list[dict[str, object]]:
    ctags = shutil.which("ctags")
    if ctags is None:
        raise SystemExit("universal-ctags is needed (apt-get install universal-ctags)")
    done = subprocess.run(
        [
            ctags,
            "--languages=Python,JavaScript,TypeScript",
            "--output-format=json",
            "--fields=+nKzlZ",
            "-f",
            "-",
            "-L",
            "-",
        ],
        input="\n".join(map(str, files)),
        capture_output=True,
        text=True,
        check=False,
    )
    tags = []
    for line in done.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag":
            tags.append(tag)
    return tags


_TYPE_DECLARATIONS = {
    "interface_declaration",
    "type_alias_declaration",
    "class_declaration",
    "abstract_class_declaration",
    "enum_declaration",
}


def omitted(tag: dict[str, object], tree: ts.Tree, lines: list[bytes]) -> str | None:
    """Why a ctags definition is left out by design (None: it counts)."""
    name = str(tag["name"])
    why = _omitted_by_tag(name, str(tag.get("kind")), tag.get("language"))
    if why is not None:
        return why
    node = _name_node(tree, lines, int(str(tag["line"])) - 1, name)
    if node is not None and node.type == "construct_signature" and name == "new":
        return None  # `new (...): T` in an interface: indexed as a constructor
    if node is None or (node.text or b"").decode("utf-8", "replace") != name:
        return "ctags misparse"
    return _omitted_by_parent(node) or _omitted_by_scope(node)


def _omitted_by_tag(name: str, kind: str, language: object) -> str | None:
    """Tags left out by what ctags says of them alone."""
    if name.startswith("AnonymousFunction"):
        return "anonymous function"
    if language == "Python" and kind in ("namespace", "unknown"):
        return "import"
    if language == "JavaScript" and kind == "property":
        return "object-literal member"
    return None


_IMPORT_PARENTS = (
    "import_specifier",
    "aliased_import",
    "import_alias",
    "import_clause",
    "namespace_import",
)


def _omitted_by_parent(node: ts.Node) -> str | None:
    """Names that are not definitions because of the node directly around them."""
    parent = node.parent
    if parent is None:
        return "ctags misparse" if node.type == "type_identifier" else None
    if parent.type in _ATTRIBUTE:
        return "attribute (this.x / self.x)"
    if parent.type in ("formal_parameters", "parameters"):
        return "parameter"
    if parent.type in ("type_parameter", "infer_type"):
        return "type parameter"
    if node.type == "type_identifier" and parent.type not in _TYPE_DECLARATIONS:
        return "ctags misparse"
    if parent.type in _IMPORT_PARENTS:
        return "import"
    return None


def _omitted_by_scope(node: ts.Node) -> str | None:
    """Names inside object literals or function bodies (locals), found by the nearest scope."""
    for ancestor in _ancestors(node):
        if ancestor.type in _OBJECT_MEMBER:
            return "object-literal member"
        if ancestor.type in _FUNCTIONS:
            definition = node.parent
            if definition is not None and definition.type in _NAMED_DEFS:
                return None  # a nested named function or class: indexed
            return "local"
        if ancestor.type in ("class_body", "program", "module", "interface_body"):
            return None
    return None


def _ancestors(node: ts.Node) -> list[ts.Node]:
    out = []
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out


def _name_node(tree: ts.Tree, lines: list[bytes], row: int, name: str) -> ts.Node | None:
    """The syntax node of `name` on that line (its first occurrence as a whole word)."""
    if row >= len(lines):
        return None
    word = re.compile(rb"(?<![\w$])" + re.escape(name.encode()) + rb"(?![\w$])")
    found = word.search(lines[row])
    if found is None:
        return None
    col, end = found.span()
    return tree.root_node.named_descendant_for_point_range((row, col), (row, end))


def main() -> None:
    parser_ = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser_.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser_.add_argument("--misses", type=int, default=3, help="examples per missed kind")
    args = parser_.parse_args()
    root = args.corpus.expanduser()
    files = corpus_files(root)
    by_path: dict[str, list[dict[str, object]]] = collections.defaultdict(list)
    for tag in ctags_tags(files):
        by_path[str(tag["path"])].append(tag)
    counted: collections.Counter[tuple[str, str, str]] = collections.Counter()
    left_out: collections.Counter[tuple[str, str]] = collections.Counter()
    misses: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for path in files:
        spec = language_for(path)
        assert spec is not None
        data = path.read_bytes()
        rows = extract_rows(spec, data)
        ours = {(r[0], r[8] + 1) for r in rows} | {(r[0], r[4] + 1) for r in rows}
        tree = parser(spec).parse(data)
        lines = data.split(b"\n")
        for tag in by_path.get(str(path), []):
            language = str(tag.get("language"))
            why = omitted(tag, tree, lines)
            if why is not None:
                left_out[(language, why)] += 1
                continue
            kind = str(tag.get("kind"))
            counted[(language, kind, "all")] += 1
            if (tag["name"], tag["line"]) in ours:
                counted[(language, kind, "found")] += 1
            else:
                rel = os.path.relpath(path, root)
                misses[(language, kind)].append(f"{rel}:{tag['line']} {tag['name']}")
    print(f"corpus: {root}: {len(files)} files both index")
    for language in LANGUAGES.values():
        total = sum(v for (lang, _, w), v in counted.items() if lang == language and w == "all")
        found = sum(v for (lang, _, w), v in counted.items() if lang == language and w == "found")
        verdict = "met" if total and found / total >= TARGET else "NOT met"
        ratio = found / total if total else 0.0
        print(f"{language}: {found}/{total} = {ratio:.2%} (target {TARGET:.0%}: {verdict})")
        skipped = {why: n for (lang, why), n in left_out.items() if lang == language}
        print(f"  left out by design: {skipped}")
        for (lang, kind, w), n in sorted(counted.items()):
            if lang != language or w != "all":
                continue
            got = counted[(lang, kind, "found")]
            if got < n:
                examples = "; ".join(misses[(lang, kind)][: args.misses])
                print(f"  {kind:12} {got}/{n} ({got / n:.1%}) missed e.g. {examples}")


if __name__ == "__main__":
    main()
