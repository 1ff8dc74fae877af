"""Which language a file is in, by name, for choosing its linters and test runners.

Kept small and explicit: the names are the vocabulary of the `languages` field of the `lint`
and `tests` settings, so they must stay stable. Ecosystems group the languages that share a
toolchain and project file (TypeScript and JavaScript both live in a `package.json` project).
"""

from __future__ import annotations

import os
from typing import Final

__all__ = [
    "ECOSYSTEM_OF",
    "LANGUAGES",
    "LANGUAGE_ALIASES",
    "canonical_language",
    "language_of",
]

_BY_SUFFIX: Final[dict[str, str]] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".cs": "csharp",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".lua": "lua",
    ".sh": "shell",
    ".bash": "shell",
    ".css": "css",
    ".scss": "css",
    ".html": "html",
    ".vue": "vue",
    ".svelte": "svelte",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".md": "markdown",
    ".sql": "sql",
    ".ex": "elixir",
    ".exs": "elixir",
    ".dart": "dart",
    ".zig": "zig",
    ".tf": "terraform",
}
_BY_NAME: Final[dict[str, str]] = {
    "Gemfile": "ruby",
    "Rakefile": "ruby",
    "Dockerfile": "dockerfile",
    "Makefile": "make",
}

LANGUAGES: Final[frozenset[str]] = frozenset({*_BY_SUFFIX.values(), *_BY_NAME.values()})
"""Every language name a setting may use."""

LANGUAGE_ALIASES: Final[dict[str, str]] = {
    "py": "python",
    "js": "javascript",
    "jsx": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "golang": "go",
    "rs": "rust",
    "rb": "ruby",
    "c++": "cpp",
    "c#": "csharp",
    "sh": "shell",
    "bash": "shell",
    "yml": "yaml",
}

ECOSYSTEM_OF: Final[dict[str, str]] = {
    "python": "python",
    "javascript": "node",
    "typescript": "node",
    "go": "go",
    "rust": "rust",
    "ruby": "ruby",
}
"""Languages whose linters and test runners agentls detects, by the toolchain they share."""


def language_of(path: str | os.PathLike[str]) -> str | None:
    """The language of a file by its name; None when unknown."""
    name = os.path.basename(os.fspath(path))
    if name in _BY_NAME:
        return _BY_NAME[name]
    return _BY_SUFFIX.get(os.path.splitext(name)[1].lower())


def canonical_language(name: str) -> str | None:
    """A language name as settings spell it (`TS`, `golang`) → its canonical name, or None."""
    lowered = name.strip().lower()
    lowered = LANGUAGE_ALIASES.get(lowered, lowered)
    return lowered if lowered in LANGUAGES else None
