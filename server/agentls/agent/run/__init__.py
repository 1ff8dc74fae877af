"""Running a session: `AgentSession`, the loop, the conversation, the per-call pipeline
and its orchestration, compaction, model clients, the system prompt and sub-agent runs.
"""
