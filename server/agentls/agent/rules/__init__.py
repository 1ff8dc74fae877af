"""Permission rules in Claude Code's form (`rule`), the shell parsing they match
commands with (`shell`), the read-only command list (`readonly`) and the rules offered for
"allow for this session" (`suggestions`). Pure functions over strings.
"""
