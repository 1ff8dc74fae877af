"""Static checks over the source tree parse it with `parse_module`."""

from __future__ import annotations

import ast
from pathlib import Path


def parse_module(path: Path) -> ast.Module:
    """`ast.parse`, once more on CPython 3.11's spurious "AST constructor recursion depth
    mismatch" (gh-106905: its depth counter can be left off by an earlier error in the
    same thread, as other tests in the process may cause); a real syntax error repeats."""
    text = path.read_text(encoding="utf-8")
    try:
        return ast.parse(text, filename=str(path))
    except SystemError:
        return ast.parse(text, filename=str(path))
