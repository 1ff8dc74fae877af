"""Token accounting, summed per turn, per run and per session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict


class UsageDict(TypedDict):
    """Token counts as results, events, transcripts and state files carry them."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int


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
    def from_api(cls, usage: object) -> Usage:
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

    @classmethod
    def from_dict(cls, data: object) -> Usage:
        """Counts read back from JSON; missing or non-integer figures count as 0."""
        values = data if isinstance(data, dict) else {}

        def number(name: str) -> int:
            value = values.get(name, 0)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return cls(
            number("input_tokens"),
            number("output_tokens"),
            number("cache_read_input_tokens"),
            number("cache_creation_input_tokens"),
        )

    def to_dict(self) -> UsageDict:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        }

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
        )
