"""Which language a file is, and which well-known language servers serve it.

Our language ids follow the symbol index's (`python`, `typescript`, `tsx`, ...); each has the
LSP `languageId` editors send in `didOpen`, and a group: languages whose files can refer to
each other (a `.ts` file calls into `.js`, C into C++ headers), so a by-name search covers
the whole group.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Language:
    id: str
    lsp_id: str
    extensions: tuple[str, ...]
    group: str


LANGUAGES: tuple[Language, ...] = (
    Language("python", "python", (".py", ".pyi"), "python"),
    Language("typescript", "typescript", (".ts", ".mts", ".cts"), "ecmascript"),
    Language("tsx", "typescriptreact", (".tsx",), "ecmascript"),
    Language("javascript", "javascript", (".js", ".mjs", ".cjs"), "ecmascript"),
    Language("jsx", "javascriptreact", (".jsx",), "ecmascript"),
    Language("go", "go", (".go",), "go"),
    Language("rust", "rust", (".rs",), "rust"),
    Language("c", "c", (".c", ".h"), "c"),
    Language(
        "cpp", "cpp", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"), "c"
    ),
    Language("java", "java", (".java",), "java"),
    Language("c_sharp", "csharp", (".cs",), "c_sharp"),
    Language("ruby", "ruby", (".rb", ".rake", ".gemspec"), "ruby"),
    Language("php", "php", (".php",), "php"),
)
BY_ID: dict[str, Language] = {lang.id: lang for lang in LANGUAGES}
_BY_EXTENSION: dict[str, Language] = {ext: lang for lang in LANGUAGES for ext in lang.extensions}

SETTING_KEYS: dict[str, tuple[str, ...]] = {
    "python": ("python",),
    "typescript": ("typescript", "tsx"),
    "typescriptreact": ("tsx",),
    "tsx": ("tsx",),
    "javascript": ("javascript", "jsx"),
    "javascriptreact": ("jsx",),
    "jsx": ("jsx",),
    "go": ("go",),
    "rust": ("rust",),
    "c": ("c",),
    "cpp": ("cpp",),
    "c++": ("cpp",),
    "java": ("java",),
    "csharp": ("c_sharp",),
    "c_sharp": ("c_sharp",),
    "ruby": ("ruby",),
    "php": ("php",),
}
"""A `languageServers` key → the languages it configures (LSP ids and ours both work;
`typescript` also covers `.tsx`, `javascript` also `.jsx`, unless those are set too)."""


def language_of(path: Path | str) -> Language | None:
    """The language of a file by its extension (None: not one agentls knows by name)."""
    suffix = Path(path).suffix.lower()
    return _BY_EXTENSION.get(suffix)


@dataclass(frozen=True)
class KnownServer:
    """A language server found by name when nothing is configured."""

    name: str
    argv: tuple[str, ...]
    languages: tuple[str, ...]
    install: str
    """How to get it (said when it is missing)."""
    ready_log: str = ""
    """A regular expression for the `window/logMessage` that says the server has found the
    project's files; queries wait for it (up to a limit) so the first cross-file answer is
    complete. Empty: ready once initialized."""


PYRIGHT_READY = r"^(Found \d+ source files?|No source files found)"
"""pyright (and basedpyright) log this when the workspace's files are enumerated: before it,
references miss files nothing imported yet."""


KNOWN_SERVERS: tuple[KnownServer, ...] = (
    KnownServer(
        "basedpyright",
        ("basedpyright-langserver", "--stdio"),
        ("python",),
        "pip install basedpyright",
        PYRIGHT_READY,
    ),
    KnownServer(
        "pyright",
        ("pyright-langserver", "--stdio"),
        ("python",),
        "npm install -g pyright",
        PYRIGHT_READY,
    ),
    KnownServer(
        "typescript-language-server",
        ("typescript-language-server", "--stdio"),
        ("typescript", "tsx", "javascript", "jsx"),
        "npm install -g typescript-language-server typescript",
    ),
    KnownServer("gopls", ("gopls",), ("go",), "go install golang.org/x/tools/gopls@latest"),
    KnownServer(
        "rust-analyzer", ("rust-analyzer",), ("rust",), "rustup component add rust-analyzer"
    ),
    KnownServer("clangd", ("clangd",), ("c", "cpp"), "apt-get install clangd"),
)


def known_servers_for(language: str) -> list[KnownServer]:
    return [s for s in KNOWN_SERVERS if language in s.languages]


def known_server_named(executable: str) -> KnownServer | None:
    """The well-known server an executable is (by its file name)."""
    name = executable.rsplit("/", 1)[-1]
    for server in KNOWN_SERVERS:
        if name == server.argv[0]:
            return server
    return None


def ready_log_for(executable: str) -> str:
    """The readiness message of a well-known server, recognised by its executable's name."""
    name = executable.rsplit("/", 1)[-1]
    for server in KNOWN_SERVERS:
        if server.ready_log and (name == server.argv[0] or server.name in name):
            return server.ready_log
    return ""
