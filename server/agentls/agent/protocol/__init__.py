"""The shapes every layer speaks: Messages-API blocks (`messages`), token usage and
its cost (`usage`, `pricing`, `accounting`), the events a run emits (`events`) and the JSON
the hosts answer with (`results`). Imports nothing else of `agent/`.
"""
