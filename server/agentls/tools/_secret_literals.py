"""Language-server text must not quote values from secret files.

A type checker names the literal type of a constant, and that type is its value: with
`settings_local.py` marked secret, `diagnostics` on a file importing it printed basedpyright's
`Type of "PLAIN" is "Literal['tok-plain-000']"`. The code tools read the files a checked or
hovered Python document imports; for those the secret patterns (or a deny rule) hide, every
literal they define is a secret value. Language-server text (hover, diagnostics) then goes
through the same `Redactor` as command output, with those values, and a `Literal[...]` that
holds one is replaced whole (numbers and short strings included).

Limits: Python imports only (`import a.b`, `from a import b`, relative imports), resolved
against the document's folder and the workspace roots; other languages' messages get the
credential redaction of every tool result only.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from agentls.workspace import Workspace
from agentls.workspace.secrets import Redactor

__all__ = ["MARKER", "SecretLiterals"]

MARKER = "[REDACTED: value from a secret file]"
_LITERAL = re.compile(r"Literal\[[^\]\n]{0,2000}\]")
_MIN_FREE_CHARS = 4
"""Values shorter than this are redacted inside `Literal[...]` only (a bare `1` or `ok` would
hide half a message)."""
_MAX_MODULE_BYTES = 1 << 20


class SecretLiterals:
    """The literal values of the secret modules some documents import, and their redaction."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = tuple(sorted(set(values), key=len, reverse=True))
        free = tuple(v for v in self.values if len(v) >= _MIN_FREE_CHARS)
        self._redactor = Redactor(free, marker=MARKER)

    @classmethod
    def of(cls, workspace: Workspace, documents: Iterable[tuple[Path, str]]) -> SecretLiterals:
        """For Python documents (path, text): the values of the hidden modules they import."""
        secrets = workspace.services.secrets
        values: set[str] = set()
        seen: set[Path] = set()
        for path, text in documents:
            if path.suffix not in (".py", ".pyi"):
                continue
            for module in _imported_files(path, text, workspace.roots):
                if module not in seen and secrets.blocks_reading(module):
                    values.update(_literals(module))
                seen.add(module)
        return cls(values)

    def redact(self, text: str) -> str:
        if not self.values:
            return text
        text = _LITERAL.sub(self._literal, text)
        return self._redactor.redact(text)

    def _literal(self, match: re.Match[str]) -> str:
        body = match.group(0)
        return f"Literal[{MARKER}]" if any(v in body for v in self.values) else body


def _imported_files(path: Path, text: str, roots: Iterable[Path]) -> Iterator[Path]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    bases = [path.parent, *roots]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield from _module_files(bases, alias.name)
        elif isinstance(node, ast.ImportFrom):
            here = bases
            if node.level:
                up = path.parent
                for _ in range(node.level - 1):
                    up = up.parent
                here = [up]
            module = node.module or ""
            if module:
                yield from _module_files(here, module)
            for alias in node.names:  # `from pkg import module`
                yield from _module_files(here, f"{module}.{alias.name}".strip("."))


def _module_files(bases: Iterable[Path], dotted: str) -> Iterator[Path]:
    rel = Path(*dotted.split("."))
    for base in bases:
        for candidate in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
            if candidate.is_file():
                yield candidate


def _literals(module: Path) -> set[str]:
    """Every string and number the module's source spells out."""
    found: set[str] = set()
    with contextlib.suppress(OSError, SyntaxError, ValueError):
        data = module.read_bytes()[:_MAX_MODULE_BYTES]
        for node in ast.walk(ast.parse(data)):
            if not isinstance(node, ast.Constant) or isinstance(node.value, bool | None):
                continue
            value = node.value
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            if text.strip():
                found.add(text)
    return found
