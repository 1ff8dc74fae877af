"""Reading Claude Code's files: its settings keys (`settings`), front matter,
prompt commands, sub-agent types, skills, output styles, plugins and workspace trust.
"""
