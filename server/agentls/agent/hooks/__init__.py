"""Hooks: the runner protocol the pipeline calls (`runner`), and Claude Code's command
hooks: their settings (`config`), what a command receives (`payload`), running them
(`commands`).
"""
