"""Deciding whether a call may run: the decision types and the host's approver
port (`decision`), the pipeline's fixed guards, `RulePolicy` and settings-table edits.
"""
