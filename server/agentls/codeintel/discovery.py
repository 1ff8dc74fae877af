"""Which language server would serve a language, and why none would.

Configured servers (`languageServers`) come first; otherwise the well-known servers are
looked for, in this order: the project's virtualenv and `node_modules/.bin` (only while the
project is trusted: they are the repository's own executables), `PATH`, and the folder of
the interpreter running agentls (a virtualenv that is not activated). Every miss says what
was looked for and how to install it, for `agentls doctor` and `agentls.status`.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.codeintel.languages import (
    BY_ID,
    KNOWN_SERVERS,
    LANGUAGES,
    SETTING_KEYS,
    known_server_named,
    known_servers_for,
    language_of,
    ready_log_for,
)
from agentls.codeintel.settings import (
    ConfiguredServer,
    LanguageServerConfig,
    LanguageServerSettings,
)
from agentls.workspace.toolchain import project_venv

_BIN = "Scripts" if os.name == "nt" else "bin"


@dataclass(frozen=True)
class ServerPlan:
    """How one language would be served."""

    language: str
    name: str
    """A short display name ("basedpyright", or the configured executable's name)."""
    argv: tuple[str, ...] | None
    """The full command with a resolved executable; None when unavailable."""
    origin: str
    """Where it was found: "languageServers (user settings)", "PATH", ".venv/bin", ..."""
    problem: str | None = None
    """Why no server is available (None when `argv` is set)."""
    config: LanguageServerConfig | None = None
    lsp_language_id: str = ""
    ready_log: str = ""
    """See `KnownServer.ready_log`."""

    @property
    def key(self) -> tuple[str, ...]:
        """Languages whose plans share a key share one server process."""
        return self.argv or ()


@dataclass(frozen=True)
class SearchPlaces:
    """Folders searched for a bare executable name, with a label for each."""

    folders: tuple[tuple[str, str], ...]
    """(folder, label) pairs, searched in order before PATH."""

    @classmethod
    def of(cls, roots: Sequence[Path], trust_project: bool) -> SearchPlaces:
        folders: list[tuple[str, str]] = []
        if trust_project:
            venv = project_venv(roots)
            if venv is not None:
                folders.append((str(venv / _BIN), f"{venv.name}/{_BIN}"))
            for root in roots:
                folders.append((str(root / "node_modules" / ".bin"), "node_modules/.bin"))
        return cls(tuple(folders))

    def find(self, name: str) -> tuple[str, str] | None:
        """(absolute executable, where) for a bare name, else None."""
        for folder, label in self.folders:
            found = shutil.which(name, path=folder)
            if found:
                return found, label
        found = shutil.which(name)
        if found:
            return found, "PATH"
        beside = Path(sys.executable).parent
        found = shutil.which(name, path=str(beside))
        if found:
            return found, f"next to {sys.executable}"
        cached = _cached(name)
        if cached is not None:
            return str(cached), "agentls's cache (languageServers.autoInstall)"
        return None

    def describe(self) -> str:
        labels = [label for _, label in self.folders]
        return ", ".join(
            [*dict.fromkeys(labels), "PATH", "agentls's own environment", "agentls's cache"]
        )


def _cached(executable: str) -> Path | None:
    """A registry server auto-installed into agentls's cache (`autoinstall.py`)."""
    from agentls.codeintel.autoinstall import installed

    for server in KNOWN_SERVERS:
        if server.argv[0] == executable and server.install_spec.auto_installable:
            found = installed(server)
            if found is not None:
                return found
    return None


def configured_for(language: str, settings: LanguageServerSettings) -> ConfiguredServer | None:
    """The `languageServers` entry that configures our `language` (exact key wins)."""
    exact = settings.configured.get(language)
    if exact is not None:
        return exact
    lsp_id = BY_ID[language].lsp_id if language in BY_ID else language
    if lsp_id in settings.configured:
        return settings.configured[lsp_id]
    for key, entry in settings.configured.items():
        if language in SETTING_KEYS.get(key, ()):
            return entry
    return None


def custom_language_of(path: Path | str, settings: LanguageServerSettings) -> str | None:
    """A configured language agentls does not know, matched by its `extensions`."""
    suffix = Path(path).suffix.lower()
    for key, entry in settings.configured.items():
        if key not in SETTING_KEYS and suffix in entry.config.extensions:
            return key
    return None


def plan_language(
    language: str, roots: Sequence[Path], settings: LanguageServerSettings
) -> ServerPlan:
    """The server for `language` (ours or a configured custom key)."""
    places = SearchPlaces.of(roots, settings.trust_project)
    lsp_id = BY_ID[language].lsp_id if language in BY_ID else language
    entry = configured_for(language, settings)
    if entry is not None:
        return _plan_configured(language, lsp_id, entry, roots, places)
    known = known_servers_for(language)
    if not known:
        return ServerPlan(
            language,
            "",
            None,
            "",
            f"agentls knows no language server for {language}; configure one in the "
            f"`languageServers` setting",
            lsp_language_id=lsp_id,
        )
    for server in known:
        found = places.find(server.argv[0])
        if found is not None:
            argv = (found[0], *server.argv[1:])
            return ServerPlan(
                language,
                server.name,
                argv,
                found[1],
                lsp_language_id=lsp_id,
                ready_log=server.ready_log,
            )
    names = " or ".join(f"`{s.argv[0]}`" for s in known)
    hints = "; ".join(f"{s.name}: {s.install}" for s in known)
    untrusted = (
        ""
        if settings.trust_project
        else " (the project's own folders were not searched: project settings are not trusted)"
    )
    return ServerPlan(
        language,
        known[0].name,
        None,
        "",
        f"no {names} in {places.describe()}{untrusted}. Install one ({hints}) or set "
        f"`languageServers.{language}.command`",
        lsp_language_id=lsp_id,
    )


def _plan_configured(
    language: str,
    lsp_id: str,
    entry: ConfiguredServer,
    roots: Sequence[Path],
    places: SearchPlaces,
) -> ServerPlan:
    config = entry.config
    origin = f"languageServers ({entry.origin})"
    if not config.enabled:
        return ServerPlan(
            language,
            "",
            None,
            origin,
            f"disabled by `languageServers` in {entry.origin}",
            config,
            lsp_id,
        )
    program = config.command[0]
    name = _display_name(config.command)
    if os.sep in program or (os.altsep and os.altsep in program):
        candidate = Path(program).expanduser()
        if not candidate.is_absolute():
            candidate = roots[0] / candidate if roots else candidate.resolve()
        if candidate.is_file() and os.access(candidate, os.X_OK):
            argv = (str(candidate), *config.command[1:])
            return ServerPlan(language, name, argv, origin, None, config, lsp_id, _ready_log(argv))
        return ServerPlan(
            language,
            name,
            None,
            origin,
            f"`{program}` (from {origin}) is not an executable file",
            config,
            lsp_id,
        )
    found = places.find(program)
    if found is None:
        return ServerPlan(
            language,
            name,
            None,
            origin,
            f"`{program}` (from {origin}) was not found in {places.describe()}",
            config,
            lsp_id,
        )
    argv = (found[0], *config.command[1:])
    return ServerPlan(language, name, argv, origin, None, config, lsp_id, _ready_log(argv))


def _display_name(argv: tuple[str, ...]) -> str:
    """A configured command's name: the well-known server it runs (maybe via a wrapper),
    else its executable's file name."""
    for word in argv:
        known = known_server_named(word)
        if known is not None:
            return known.name
    return Path(argv[0]).name


def _ready_log(argv: tuple[str, ...]) -> str:
    """A configured command that runs a well-known server (maybe through a wrapper)."""
    for word in argv:
        found = ready_log_for(word)
        if found:
            return found
    return ""


def language_for_file(path: Path | str, settings: LanguageServerSettings) -> str | None:
    """Our language id for a file, or the configured custom language that claims it."""
    custom = custom_language_of(path, settings)
    if custom is not None:
        return custom
    known = language_of(path)
    return known.id if known is not None else None


def all_plans(roots: Sequence[Path], settings: LanguageServerSettings) -> list[ServerPlan]:
    """One plan per language with a known or configured server (for doctor and status)."""
    languages = [lang.id for lang in LANGUAGES if known_servers_for(lang.id)]
    for key in settings.configured:
        if key in SETTING_KEYS:
            languages.extend(SETTING_KEYS[key])
        else:
            languages.append(key)
    return [plan_language(lang, roots, settings) for lang in dict.fromkeys(languages)]
