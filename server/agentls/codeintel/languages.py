"""Which language a file is, and which well-known language servers serve it.

Our language ids follow the symbol index's (`python`, `typescript`, `tsx`, ...); each has the
LSP `languageId` editors send in `didOpen`, and a group: languages whose files can refer to
each other (a `.ts` file calls into `.js`, C into C++ headers), so a by-name search covers
the whole group.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentls.codeintel.registry import KNOWN_SERVERS, PYRIGHT_READY, KnownServer

__all__ = [
    "BY_ID",
    "KNOWN_SERVERS",
    "LANGUAGES",
    "PYRIGHT_READY",
    "SETTING_KEYS",
    "KnownServer",
    "Language",
    "known_server_named",
    "known_servers_for",
    "language_of",
    "ready_log_for",
]


@dataclass(frozen=True)
class Language:
    id: str
    lsp_id: str
    extensions: tuple[str, ...]
    group: str
    filenames: tuple[str, ...] = ()
    """Whole file names (`Dockerfile`, `CMakeLists.txt`) for files without an extension."""


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
    Language("bash", "shellscript", (".sh", ".bash"), "bash"),
    Language("yaml", "yaml", (".yaml", ".yml"), "yaml"),
    Language("json", "json", (".json", ".jsonc"), "json"),
    Language("html", "html", (".html", ".htm"), "html"),
    Language("css", "css", (".css",), "css"),
    Language("scss", "scss", (".scss",), "css"),
    Language("less", "less", (".less",), "css"),
    Language(
        "dockerfile", "dockerfile", (".dockerfile",), "dockerfile", ("Dockerfile", "Containerfile")
    ),
    Language("vue", "vue", (".vue",), "ecmascript"),
    Language("svelte", "svelte", (".svelte",), "ecmascript"),
    Language("fortran", "fortran", (".f90", ".f95", ".f03", ".f08", ".f", ".for"), "fortran"),
    Language("cmake", "cmake", (".cmake",), "cmake", ("CMakeLists.txt",)),
    Language("markdown", "markdown", (".md", ".markdown"), "markdown"),
    Language("lua", "lua", (".lua",), "lua"),
    Language("kotlin", "kotlin", (".kt", ".kts"), "java"),
    Language("scala", "scala", (".scala", ".sc"), "java"),
    Language("swift", "swift", (".swift",), "swift"),
    Language("zig", "zig", (".zig",), "zig"),
    Language("haskell", "haskell", (".hs",), "haskell"),
    Language("elixir", "elixir", (".ex", ".exs"), "elixir"),
    Language("erlang", "erlang", (".erl", ".hrl"), "erlang"),
    Language("ocaml", "ocaml", (".ml", ".mli"), "ocaml"),
    Language("dart", "dart", (".dart",), "dart"),
    Language("toml", "toml", (".toml",), "toml"),
    Language("terraform", "terraform", (".tf", ".tfvars"), "terraform"),
    Language("latex", "latex", (".tex",), "latex"),
    Language("nix", "nix", (".nix",), "nix"),
    Language("r", "r", (".r",), "r"),
    Language("julia", "julia", (".jl",), "julia"),
    Language("clojure", "clojure", (".clj", ".cljs", ".cljc"), "clojure"),
    Language("elm", "elm", (".elm",), "elm"),
    Language("perl", "perl", (".pl", ".pm"), "perl"),
    Language("graphql", "graphql", (".graphql", ".gql"), "graphql"),
    Language("protobuf", "proto", (".proto",), "protobuf"),
    Language("sql", "sql", (".sql",), "sql"),
)
BY_ID: dict[str, Language] = {lang.id: lang for lang in LANGUAGES}
_BY_EXTENSION: dict[str, Language] = {ext: lang for lang in LANGUAGES for ext in lang.extensions}
_BY_FILENAME: dict[str, Language] = {name: lang for lang in LANGUAGES for name in lang.filenames}

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
    **{key: (lang.id,) for lang in LANGUAGES[13:] for key in dict.fromkeys((lang.id, lang.lsp_id))},
}
"""A `languageServers` key → the languages it configures (LSP ids and ours both work;
`typescript` also covers `.tsx`, `javascript` also `.jsx`, unless those are set too)."""


def language_of(path: Path | str) -> Language | None:
    """The language of a file by its extension (None: not one agentls knows by name)."""
    name = Path(path).name
    return _BY_FILENAME.get(name) or _BY_EXTENSION.get(Path(name).suffix.lower())


def known_servers_for(language: str) -> list[KnownServer]:
    """The registry's servers discovered for `language`, in the order they are tried."""
    return [s for s in KNOWN_SERVERS if language in s.languages and s.primary]


def known_server_named(executable: str) -> KnownServer | None:
    """The well-known server an executable is (by its file name)."""
    name = executable.rsplit("/", 1)[-1]
    for server in KNOWN_SERVERS:
        if name == server.argv[0] or name == server.name:
            return server
    return None


def ready_log_for(executable: str) -> str:
    """The readiness message of a well-known server, recognised by its executable's name."""
    name = executable.rsplit("/", 1)[-1]
    for server in KNOWN_SERVERS:
        if server.ready_log and (name == server.argv[0] or server.name in name):
            return server.ready_log
    return ""
