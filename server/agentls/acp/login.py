"""`agentls acp --login`: the terminal login ACP clients offer (`authMethods`, type terminal).

agentls keeps no credentials of its own: it reads `ANTHROPIC_API_KEY` (or
`ANTHROPIC_AUTH_TOKEN` with `ANTHROPIC_BASE_URL`) from the environment the editor starts it
with. So the login checks what that environment gives — a key is there and the endpoint
accepts it (its Models API) — and says how to set it where it is missing. It never asks
for a key and never stores one.
"""

from __future__ import annotations

import sys

SET_IT = (
    "Set ANTHROPIC_API_KEY in the environment your editor starts agentls with: in Zed, "
    '"env" of the agent server in settings.json; in JetBrains IDEs, "env" in '
    "~/.jetbrains/acp.json; or start the editor from a shell that exports it. Keys: "
    "https://console.anthropic.com/settings/keys"
)


def check_login(settings: object) -> int:
    """Print whether agentls can reach the model; 0 when it can, 1 otherwise."""
    from agentls.acp.agent import missing_credentials

    problem = missing_credentials(settings)
    if problem is not None:
        sys.stderr.write(f"agentls: {problem}\n\n{SET_IT}\n")
        return 1
    checked = _endpoint_answers(settings)
    if checked is not None:
        sys.stderr.write(f"agentls: the endpoint refused the key: {checked}\n\n{SET_IT}\n")
        return 1
    sys.stderr.write("agentls: the credentials work; you can close this terminal.\n")
    return 0


def _endpoint_answers(settings: object) -> str | None:
    """None when the endpoint accepts the credentials (or cannot say: no Models API)."""
    import anthropic

    from agentls.acp.agent import user_settings

    found = user_settings(settings)
    client = anthropic.Anthropic(
        api_key=found.api_key,
        auth_token=found.auth_token,
        base_url=found.base_url,
        timeout=10,
        max_retries=0,
    )
    try:
        client.models.list(limit=1)
    except anthropic.AuthenticationError as exc:
        return str(exc.message)
    except Exception:  # no Models API (a gateway), or offline: the run will say
        return None
    finally:
        client.close()
    return None
