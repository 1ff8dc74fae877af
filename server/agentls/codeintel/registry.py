"""The registry of language servers agentls knows by name: one table row per server.

Each row says which of our languages the server serves, its command, how to install it at
a pinned version (npm, PyPI, the system's package manager, a language's toolchain), the
initialization options agentls sends by default, and what it may load or run from the
project, which decides how it starts before the workspace is trusted:

- `"nothing"`: it reads the project's files and configuration, runs none of its code;
- `"hardened"`: `agentls.langservers.hardening` starts it so that it runs none (the
  workspace's TypeScript, a virtualenv interpreter, build scripts are held back);
- `"held back"`: it would run project code that no option switches off (build files,
  plugins named by project configuration, a config written in JavaScript); it is not
  started at all until the workspace is trusted (then inside the sandbox).

Rows serving the same language are tried in order (the first found wins); `primary=False`
rows (linters, helpers beside the main server) are never discovered on their own: they
are started when `languageServers` names them, and `agentls doctor` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["KNOWN_SERVERS", "PYRIGHT_READY", "Install", "KnownServer"]

InstallKind = Literal["npm", "pypi", "apt", "toolchain", "manual"]
BeforeTrust = Literal["nothing", "hardened", "held back"]


@dataclass(frozen=True)
class Install:
    """How to get a server: a package of one ecosystem at a pinned version."""

    kind: InstallKind
    package: str
    version: str = ""
    extra: tuple[str, ...] = ()
    """Packages installed beside it (npm: `typescript` for typescript-language-server)."""
    how: str = ""
    """The command for `toolchain`/`manual` installs (nothing to pin with a registry)."""

    @property
    def specs(self) -> tuple[str, ...]:
        """The pinned package specs (`pyright@1.1.414`, `ruff==0.17.6`)."""
        if self.kind == "npm":
            return (f"{self.package}@{self.version}", *self.extra)
        if self.kind == "pypi":
            return (f"{self.package}=={self.version}", *self.extra)
        return (self.package,)

    @property
    def auto_installable(self) -> bool:
        """npm and PyPI packages install into agentls's cache (`languageServers.autoInstall`)."""
        return self.kind in ("npm", "pypi")

    def command(self) -> str:
        """The exact command a user runs to install it."""
        if self.kind == "npm":
            return "npm install -g " + " ".join(self.specs)
        if self.kind == "pypi":
            return "pipx install " + " ".join(self.specs)
        if self.kind == "apt":
            return f"sudo apt-get install {self.package}"
        return self.how


@dataclass(frozen=True)
class KnownServer:
    """A language server found by name when nothing is configured."""

    name: str
    argv: tuple[str, ...]
    languages: tuple[str, ...]
    install_spec: Install
    ready_log: str = ""
    """A regular expression for the `window/logMessage` that says the server has found the
    project's files; queries wait for it (up to a limit) so the first cross-file answer is
    complete. Empty: ready once initialized."""
    initialization_options: dict[str, object] = field(default_factory=dict)
    """Sent with `initialize` unless `languageServers` gives its own (theirs win per key)."""
    settings: dict[str, object] = field(default_factory=dict)
    """Answered to `workspace/configuration` under `languageServers`' `settings`."""
    loads: str = ""
    """What it may load or run from the project (empty: only reads files)."""
    before_trust: BeforeTrust = "nothing"
    project_files: tuple[str, ...] = ()
    """Files whose presence means trust would let it run project code (the trust prompt)."""
    primary: bool = True

    @property
    def install(self) -> str:
        """How to get it (said when it is missing)."""
        return self.install_spec.command()


PYRIGHT_READY = r"^(Found \d+ source files?|No source files found)"
"""pyright (and basedpyright) log this when the workspace's files are enumerated: before it,
references miss files nothing imported yet."""

_VENV_PYTHONS = tuple(
    f"{venv}/bin/{exe}"
    for venv in (".venv", "venv", ".env", "env")
    for exe in ("python", "python3")
)
_JS_CONFIG = "a configuration file written in JavaScript, and the packages it names"


def _npm(package: str, version: str, *extra: str) -> Install:
    return Install("npm", package, version, extra)


def _pypi(package: str, version: str) -> Install:
    return Install("pypi", package, version)


def _tool(how: str, package: str = "") -> Install:
    return Install("toolchain", package or how.split()[-1], how=how)


def _held(
    name: str,
    argv: tuple[str, ...],
    languages: tuple[str, ...],
    install: Install,
    loads: str,
    files: tuple[str, ...],
    **more: Any,
) -> KnownServer:
    return KnownServer(
        name, argv, languages, install, loads=loads, before_trust="held back",
        project_files=files, **more,
    )  # fmt: skip


_PYTHON = (
    KnownServer(
        "basedpyright",
        ("basedpyright-langserver", "--stdio"),
        ("python",),
        _pypi("basedpyright", "1.40.2"),
        PYRIGHT_READY,
        loads="the project's virtualenv interpreter (run to list its import paths)",
        before_trust="hardened",
        project_files=_VENV_PYTHONS,
    ),
    KnownServer(
        "pyright",
        ("pyright-langserver", "--stdio"),
        ("python",),
        _npm("pyright", "1.1.414"),
        PYRIGHT_READY,
        loads="the project's virtualenv interpreter (run to list its import paths)",
        before_trust="hardened",
        project_files=_VENV_PYTHONS,
    ),
    _held(
        "pylsp",
        ("pylsp",),
        ("python",),
        _pypi("python-lsp-server", "1.15.0"),
        "its plugins' project configuration (pylint `init-hook`, mypy `plugins`) and, "
        "through jedi, compiled modules on the project's path",
        ("setup.cfg", "tox.ini", ".pylintrc", "pyproject.toml", "mypy.ini"),
    ),
    _held(
        "jedi-language-server",
        ("jedi-language-server",),
        ("python",),
        _pypi("jedi-language-server", "0.45.1"),
        "compiled modules on the project's path (jedi imports them to read their names)",
        ("pyproject.toml", "setup.py"),
    ),
    KnownServer(
        "ruff",
        ("ruff", "server"),
        ("python",),
        _pypi("ruff", "0.17.6"),
        loads="its configuration (pyproject.toml, ruff.toml): settings only",
        primary=False,
    ),
)

_ECMASCRIPT = (
    KnownServer(
        "typescript-language-server",
        ("typescript-language-server", "--stdio"),
        ("typescript", "tsx", "javascript", "jsx"),
        _npm("typescript-language-server", "5.3.0", "typescript@5.9.3"),
        loads="the project's TypeScript server and the tsconfig plugins beside it",
        before_trust="hardened",
        project_files=(
            "node_modules/typescript/lib/tsserver.js",
            ".yarn/sdks/typescript/lib/tsserver.js",
            ".vscode/pnpify/typescript/lib/tsserver.js",
        ),
    ),
    KnownServer(
        "vue-language-server",
        ("vue-language-server", "--stdio"),
        ("vue",),
        _npm("@vue/language-server", "2.1.10", "typescript@5.9.3"),
        initialization_options={"vue": {"hybridMode": False}},
        loads="the project's TypeScript (`typescript.tsdk`) and its tsconfig plugins",
        before_trust="hardened",
        project_files=("node_modules/typescript/lib/tsserver.js",),
    ),
    _held(
        "svelte-language-server",
        ("svelteserver", "--stdio"),
        ("svelte",),
        _npm("svelte-language-server", "0.18.4"),
        f"svelte.config.js ({_JS_CONFIG}: preprocessors) and the project's svelte",
        ("svelte.config.js", "svelte.config.mjs", "svelte.config.cjs"),
    ),
    _held(
        "tailwindcss-language-server",
        ("tailwindcss-language-server", "--stdio"),
        ("css", "html", "vue", "svelte", "tsx", "jsx"),
        _npm("@tailwindcss/language-server", "0.16.0"),
        f"tailwind.config.js ({_JS_CONFIG}: plugins) and the project's tailwindcss",
        ("tailwind.config.js", "tailwind.config.ts", "tailwind.config.cjs", "package.json"),
        primary=False,
    ),
)

_EXTRACTED = _npm("vscode-langservers-extracted", "4.10.0")
_WEB = (
    KnownServer(
        "vscode-html-language-server",
        ("vscode-html-language-server", "--stdio"),
        ("html",),
        _EXTRACTED,
        initialization_options={"provideFormatter": False},
    ),
    KnownServer(
        "vscode-css-language-server",
        ("vscode-css-language-server", "--stdio"),
        ("css", "scss", "less"),
        _EXTRACTED,
        initialization_options={"provideFormatter": False},
        settings={lang: {"validate": True, "lint": {}} for lang in ("css", "scss", "less")},
    ),
    KnownServer(
        "vscode-json-language-server",
        ("vscode-json-language-server", "--stdio"),
        ("json",),
        _EXTRACTED,
        initialization_options={"provideFormatter": False},
        loads="JSON schemas the project's files name by URL (fetched; no network in the sandbox)",
    ),
    KnownServer(
        "yaml-language-server",
        ("yaml-language-server", "--stdio"),
        ("yaml",),
        _npm("yaml-language-server", "2.0.0"),
        loads="JSON schemas the project's files name by URL (fetched; no network in the sandbox)",
    ),
    KnownServer(
        "bash-language-server",
        ("bash-language-server", "start"),
        ("bash",),
        _npm("bash-language-server", "5.8.1"),
        loads=".shellcheckrc (settings only; shellcheck runs when installed)",
    ),
    KnownServer(
        "docker-langserver",
        ("docker-langserver", "--stdio"),
        ("dockerfile",),
        _npm("dockerfile-language-server-nodejs", "0.15.0"),
    ),
    KnownServer(
        "intelephense",
        ("intelephense", "--stdio"),
        ("php",),
        _npm("intelephense", "1.18.5"),
        r"^Indexer: Indexing (finished|cancelled|aborted)",
        initialization_options={"storagePath": "/tmp/intelephense", "clearCache": True},
    ),
    _held(
        "graphql-lsp",
        ("graphql-lsp", "server", "-m", "stream"),
        ("graphql",),
        _npm("graphql-language-service-cli", "3.5.0"),
        f"graphql.config.js ({_JS_CONFIG})",
        ("graphql.config.js", "graphql.config.ts", ".graphqlrc.js"),
    ),
    KnownServer(
        "elm-language-server",
        ("elm-language-server", "--stdio"),
        ("elm",),
        _npm("@elm-tooling/elm-language-server", "2.10.0"),
    ),
)

_SYSTEMS = (
    KnownServer(
        "gopls",
        ("gopls",),
        ("go",),
        _tool("go install golang.org/x/tools/gopls@latest", "gopls"),
        loads="go.mod's `toolchain` line (GOTOOLCHAIN=local holds it back)",
        before_trust="hardened",
    ),
    KnownServer(
        "rust-analyzer",
        ("rust-analyzer",),
        ("rust",),
        _tool("rustup component add rust-analyzer"),
        loads="the crate's build scripts, proc macros and `rust-toolchain.toml` toolchain",
        before_trust="hardened",
        project_files=("Cargo.toml",),
    ),
    KnownServer(
        "clangd",
        ("clangd",),
        ("c", "cpp"),
        Install("apt", "clangd"),
        loads=".clangd and compile_commands.json (settings only; no `--query-driver`)",
    ),
    KnownServer(
        "fortls",
        ("fortls",),
        ("fortran",),
        _pypi("fortls", "3.2.2"),
        loads=".fortlsrc (settings only)",
    ),
    KnownServer(
        "cmake-language-server",
        ("cmake-language-server",),
        ("cmake",),
        _pypi("cmake-language-server", "0.1.11"),
    ),
    KnownServer(
        "zls",
        ("zls",),
        ("zig",),
        _tool("zig's release of zls (https://github.com/zigtools/zls)", "zls"),
        loads="build.zig (run to find the packages) once trusted",
        before_trust="held back",
        project_files=("build.zig",),
    ),
)

_JVM_AND_MORE = (
    _held(
        "jdtls",
        ("jdtls",),
        ("java",),
        Install("manual", "jdtls", how="download Eclipse JDT LS and put `jdtls` on PATH"),
        "the build (Gradle/Maven build files and their plugins)",
        ("build.gradle", "build.gradle.kts", "pom.xml"),
    ),
    _held(
        "kotlin-language-server",
        ("kotlin-language-server",),
        ("kotlin",),
        Install("manual", "kotlin-language-server", how="brew install kotlin-language-server"),
        "the Gradle or Maven build (run to find the classpath)",
        ("build.gradle", "build.gradle.kts", "pom.xml"),
    ),
    _held(
        "metals",
        ("metals",),
        ("scala",),
        _tool("coursier install metals", "metals"),
        "the sbt/Mill build (imported through Bloop)",
        ("build.sbt", "build.sc"),
    ),
    _held(
        "csharp-ls",
        ("csharp-ls",),
        ("c_sharp",),
        _tool("dotnet tool install --global csharp-ls", "csharp-ls"),
        "MSBuild project files (their targets run)",
        ("Directory.Build.props", "Directory.Build.targets"),
    ),
    _held(
        "ruby-lsp",
        ("ruby-lsp",),
        ("ruby",),
        _tool("gem install ruby-lsp", "ruby-lsp"),
        "the Gemfile's bundle (installed and loaded) and its add-ons",
        ("Gemfile",),
    ),
    _held(
        "sourcekit-lsp",
        ("sourcekit-lsp",),
        ("swift",),
        _tool("install the Swift toolchain (swift.org)", "sourcekit-lsp"),
        "Package.swift (run to resolve the package)",
        ("Package.swift",),
    ),
    _held(
        "haskell-language-server",
        ("haskell-language-server-wrapper", "--lsp"),
        ("haskell",),
        _tool("ghcup install hls", "haskell-language-server"),
        "cabal/stack builds and Template Haskell splices",
        ("cabal.project", "stack.yaml", "package.yaml"),
    ),
    _held(
        "elixir-ls",
        ("elixir-ls",),
        ("elixir",),
        Install("manual", "elixir-ls", how="download elixir-ls and put `elixir-ls` on PATH"),
        "mix.exs (the project is compiled, macros run)",
        ("mix.exs",),
    ),
    _held(
        "erlang_ls",
        ("erlang_ls",),
        ("erlang",),
        Install("manual", "erlang_ls", how="build erlang_ls (rebar3) and put it on PATH"),
        "rebar.config (parse transforms run)",
        ("rebar.config",),
    ),
    _held(
        "ocamllsp",
        ("ocamllsp",),
        ("ocaml",),
        _tool("opam install ocaml-lsp-server", "ocaml-lsp-server"),
        "dune's ppx rewriters",
        ("dune-project",),
    ),
    _held(
        "dart",
        ("dart", "language-server"),
        ("dart",),
        _tool("install the Dart SDK (dart.dev)", "dart"),
        "analyzer plugins named in analysis_options.yaml",
        ("analysis_options.yaml", "pubspec.yaml"),
    ),
    _held(
        "r-languageserver",
        ("R", "--slave", "-e", "languageserver::run()"),
        ("r",),
        _tool("R -e 'install.packages(\"languageserver\")'", "languageserver"),
        "the project's .Rprofile (R runs it on start)",
        (".Rprofile",),
    ),
    _held(
        "julia-languageserver",
        ("julia", "--startup-file=no", "-e", "using LanguageServer; runserver()"),
        ("julia",),
        _tool("julia -e 'using Pkg; Pkg.add(\"LanguageServer\")'", "LanguageServer"),
        "the project's environment (Project.toml packages are loaded)",
        ("Project.toml",),
    ),
    _held(
        "clojure-lsp",
        ("clojure-lsp",),
        ("clojure",),
        _tool("brew install clojure-lsp/brew/clojure-lsp-native", "clojure-lsp"),
        "the classpath command of deps.edn/project.clj (run)",
        ("deps.edn", "project.clj"),
    ),
    _held(
        "perlnavigator",
        ("perlnavigator", "--stdio"),
        ("perl",),
        Install("manual", "perlnavigator", how="install PerlNavigator from its releases"),
        "`perl -c` on the project's files (BEGIN blocks run)",
        ("Makefile.PL", "cpanfile"),
    ),
)

_TEXT = (
    KnownServer(
        "lua-language-server",
        ("lua-language-server",),
        ("lua",),
        Install("manual", "lua-language-server", how="brew install lua-language-server"),
        loads=".luarc.json (settings only)",
    ),
    KnownServer(
        "marksman",
        ("marksman", "server"),
        ("markdown",),
        Install("manual", "marksman", how="brew install marksman"),
    ),
    KnownServer(
        "taplo",
        ("taplo", "lsp", "stdio"),
        ("toml",),
        _npm("@taplo/cli", "0.7.0"),
        loads="schemas named by URL in .taplo.toml (fetched; no network in the sandbox)",
    ),
    KnownServer(
        "terraform-ls",
        ("terraform-ls", "serve"),
        ("terraform",),
        Install("manual", "terraform-ls", how="install terraform-ls from HashiCorp's releases"),
    ),
    KnownServer(
        "texlab",
        ("texlab",),
        ("latex",),
        Install("manual", "texlab", how="cargo install --locked texlab"),
    ),
    KnownServer(
        "nil",
        ("nil",),
        ("nix",),
        Install("manual", "nil", how="nix profile install nixpkgs#nil"),
    ),
    KnownServer(
        "buf",
        ("buf", "beta", "lsp"),
        ("protobuf",),
        Install("manual", "buf", how="npm install -g @bufbuild/buf"),
    ),
    _held(
        "sqls",
        ("sqls",),
        ("sql",),
        _tool("go install github.com/sqls-server/sqls@latest", "sqls"),
        "the database connections its config names (queries run against them)",
        (".sqls.yml", "config.yml"),
    ),
)

KNOWN_SERVERS: tuple[KnownServer, ...] = (
    *_PYTHON,
    *_ECMASCRIPT,
    *_WEB,
    *_SYSTEMS,
    *_JVM_AND_MORE,
    *_TEXT,
)
