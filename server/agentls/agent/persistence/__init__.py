"""What a session keeps on disk: the state file (`store`, `state`), transcripts,
the turn journal, staged edits and rewind checkpoints.
"""
