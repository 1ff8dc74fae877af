"""Token accounting, summed per turn, per run and per session."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens

    @classmethod
    def from_api(cls, usage: Any) -> Usage:
        """Read an SDK `Usage` object (missing or null cache fields count as 0)."""

        def number(name: str) -> int:
            value = getattr(usage, name, 0)
            return int(value) if isinstance(value, int) else 0

        return cls(
            number("input_tokens"),
            number("output_tokens"),
            number("cache_read_input_tokens"),
            number("cache_creation_input_tokens"),
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)
