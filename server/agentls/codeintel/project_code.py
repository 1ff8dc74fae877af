"""What a language server would load or run from the repository once it is trusted.

Language servers are not just readers: typescript-language-server prefers the workspace's
own TypeScript (`node_modules/typescript/lib/tsserver.js`, Yarn's `.yarn/sdks`, pnpify),
which then loads the tsconfig `plugins` found beside it; pyright and basedpyright run the
interpreter on `PATH` to list its import paths (the project's virtualenv once it is
activated for them); rust-analyzer runs `build.rs` scripts and proc macros and follows
`rust-toolchain.toml` to whatever toolchain it names. Before the workspace is trusted,
agentls starts every server so that none of this happens (`agentls.langservers.hardening`);
this table names what trust would widen, so the trust assessment can ask about it
(`agentls.agent.claude.trust`) and `docs/security.md` can say it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentls.codeintel.registry import KNOWN_SERVERS

__all__ = ["PROJECT_CODE", "ProjectCode", "project_code_in"]


@dataclass(frozen=True)
class ProjectCode:
    """Files of a repository that a server loads or runs as code once trusted."""

    server: str
    """The well-known server's name (`KnownServer.name`)."""
    paths: tuple[str, ...]
    """Relative to a workspace root; the first one that exists is reported."""
    what: str
    """What trust lets the server do with it (said in the trust prompt)."""


PROJECT_CODE: tuple[ProjectCode, ...] = tuple(
    ProjectCode(server.name, server.project_files, server.loads)
    for server in KNOWN_SERVERS
    if server.before_trust != "nothing" and server.project_files
)
"""From the registry: every server that trust would let run project code."""


def project_code_in(roots: Sequence[Path], servers: Iterable[str]) -> list[tuple[str, str, str]]:
    """(server, relative path, what) for each available server's project code present in
    a root (`servers`: the names of the servers that would start)."""
    wanted = set(servers)
    found: list[tuple[str, str, str]] = []
    for entry in PROJECT_CODE:
        if entry.server not in wanted:
            continue
        for root in roots:
            hit = next((p for p in entry.paths if (Path(root) / p).exists()), None)
            if hit is not None:
                found.append((entry.server, hit, entry.what))
                break
    return found
