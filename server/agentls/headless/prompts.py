"""The terminal side of `agentls run`: questions and plan reviews answered at the keyboard.

The CLI is an LSP client of `agentls serve`; on a terminal it announces that it shows
agentls's question and plan requests itself (`agentls/askQuestions`, `agentls/reviewPlan`;
see `agentls.lsp.questions`) and answers them here. Each function blocks on the keyboard
(the connection runs it in a daemon thread) and returns the JSON answer, or None when the
user gave none (end of input, Ctrl-C).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from rich.markup import escape

from agentls.headless.ui import RunView

MAX_TRIES = 3
Answer = dict[str, object] | None


@contextmanager
def paused(view: RunView) -> Iterator[None]:
    """Stop the spinner while the user types, start it again afterwards."""
    view.stop()
    try:
        yield
    finally:
        if view.live:
            view._status = view.console.status(view._current, spinner="dots")
            view._status.start()


def _read(view: RunView, prompt: str) -> str | None:
    try:
        return str(view.console.input(prompt))
    except (EOFError, KeyboardInterrupt):
        return None


def _choices(text: str, count: int, multi: bool) -> list[int] | None:
    """1-based numbers typed by the user ("2", "1,3", "1 3"), or None when not valid."""
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if not parts or not all(p.isdigit() and 1 <= int(p) <= count for p in parts):
        return None
    numbers = list(dict.fromkeys(int(p) for p in parts))
    return numbers if multi or len(numbers) == 1 else None


def question_prompter(view: RunView) -> Callable[[Mapping[str, Any]], Answer]:
    """Answers `agentls/askQuestions` on the terminal."""

    def ask(params: Mapping[str, Any]) -> Answer:
        other_label = str(params.get("other_label") or "Other…")
        answers: list[dict[str, object]] = []
        with paused(view):
            for question in params.get("questions") or []:
                answer = _ask_one(view, question, other_label)
                if answer is None:
                    return {"answers": answers} if answers else None
                answers.append(answer)
        return {"answers": answers}

    return ask


def _ask_one(view: RunView, question: Mapping[str, Any], other_label: str) -> Answer:
    console = view.console
    options = [o for o in question.get("options") or [] if isinstance(o, Mapping)]
    multi = bool(question.get("multi_select"))
    console.print(
        f"[bold yellow]?[/bold yellow] [bold]{escape(str(question.get('header', '')))}[/bold] "
        f"— {escape(str(question.get('question', '')))}"
    )
    for index, option in enumerate(options, 1):
        detail = f" [dim]— {escape(str(option.get('description')))}[/dim]"
        console.print(
            f"  {index}) {escape(str(option.get('label')))}"
            + (detail if option.get("description") else "")
        )
    other = len(options) + 1
    console.print(f"  {other}) {escape(other_label)} [dim](type your own answer)[/dim]")
    hint = "choices, e.g. 1,3" if multi else "choice"
    for _ in range(MAX_TRIES):
        text = _read(view, f"{hint} [1]: ")
        if text is None:
            return None
        picked = _choices(text or "1", other, multi)
        if picked is None:
            console.print(f"[red]Type {'numbers' if multi else 'a number'} from 1 to {other}.")
            continue
        selected = [str(options[n - 1].get("label")) for n in picked if n != other]
        answer: dict[str, object] = {"selected": selected, "other": None}
        if other in picked:
            own = _read(view, "your answer: ")
            if own is None:
                return None
            answer["other"] = own.strip() or None
        return answer
    return None


def plan_reviewer(view: RunView) -> Callable[[Mapping[str, Any]], Answer]:
    """Answers `agentls/reviewPlan` on the terminal: the plan printed, then the choice."""

    def review(params: Mapping[str, Any]) -> Answer:
        from rich.markdown import Markdown
        from rich.rule import Rule

        choices = [c for c in params.get("choices") or [] if isinstance(c, Mapping)]
        if not choices:
            return None
        console = view.console
        with paused(view):
            console.print(Rule("The agent's plan"))
            console.print(Markdown(str(params.get("plan") or "")))
            console.print(Rule())
            console.print("[bold yellow]?[/bold yellow] What now?")
            for index, choice in enumerate(choices, 1):
                console.print(f"  {index}) {escape(str(choice.get('label')))}")
            for _ in range(MAX_TRIES):
                text = _read(view, "choice [1]: ")
                if text is None:
                    return None
                picked = _choices(text or "1", len(choices), multi=False)
                if picked is None:
                    console.print(f"[red]Type a number from 1 to {len(choices)}.")
                    continue
                decision = str(choices[picked[0] - 1].get("id"))
                answer: dict[str, object] = {"decision": decision}
                if decision == "keep_planning":
                    feedback = _read(view, "what should change? (optional): ")
                    answer["feedback"] = (feedback or "").strip()
                return answer
        return None

    return review
