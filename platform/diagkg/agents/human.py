"""The ``human`` assistant: a person at the terminal chooses from menus."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ..env.actions import Action, Hypothesis
from ..env.outcomes import Outcome
from ..errors import AssistantError
from .registry import BaseAssistant, Briefing


class Human(BaseAssistant):
    """A person at the terminal picks actions and hypotheses from menus."""

    name = "human"
    config_keys: frozenset[str] = frozenset()      # it takes no configuration

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None, **config: Any):
        super().__init__(**config)
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def _say(self, text: str = "") -> None:
        print(text, file=self.stdout, flush=True)

    def _ask(self, prompt: str) -> str:
        print(prompt, end="", file=self.stdout, flush=True)
        line = self.stdin.readline()
        if not line:
            raise EOFError("no more input")
        return line.strip()

    def _choose(self, title: str, options: list[str]) -> str | None:
        self._say(title)
        for i, option in enumerate(options, 1):
            self._say(f"  {i:2d}. {option}")
        while True:
            answer = self._ask("number (empty to go back): ")
            if answer == "":
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1]
            self._say("please type one of the numbers")

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self._say(f"System: {briefing.system}\n{briefing.description}\n")
        self._say(f"Reported: {briefing.symptoms}\nYou see: {briefing.visible}\nBudget: {briefing.budget} rounds\n")

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        self._say(f"→ {outcome['message']} (cost {outcome['cost']:g} min)\n")

    def suggest(self) -> Action | Hypothesis | None:
        b = self.briefing
        if b is None:
            raise AssistantError("the human assistant was asked for a suggestion before setup()")
        parts = sorted(b.parts)
        while True:
            try:
                kind = self._choose("What next?", ["an action", "a hypothesis", "give up"])
                if kind == "give up":
                    return None
                if kind == "a hypothesis":
                    names = self._ask(f"faulty parts, separated by spaces ({len(parts)} parts; '?' lists them): ")
                    if names == "?":
                        self._say(", ".join(parts))
                        continue
                    chosen = [n for n in names.replace(",", " ").split() if n]
                    unknown = [n for n in chosen if n not in b.parts]
                    if unknown or not chosen:
                        self._say(f"unknown parts: {', '.join(unknown) or '(none given)'}")
                        continue
                    return Hypothesis(chosen, "chosen at the terminal")
                if kind == "an action":
                    labels = {f"{a}: {spec.label} ({spec.cost:g} min)": a for a, spec in sorted(b.catalogue.items())}
                    picked = self._choose("Which action?", list(labels))
                    if picked is None:
                        continue
                    spec = b.catalogue[labels[picked]]
                    targets = []
                    shown = {f"{p} — {b.labels.get(p, p)}": p for p in parts}
                    for n in range(spec.target_count):
                        t = self._choose(f"Target {n + 1} of {spec.id}:", list(shown))
                        if t is None:
                            break
                        targets.append(shown[t])
                    if len(targets) < spec.target_count:
                        continue
                    value = None
                    if spec.parameter:
                        value = float(self._ask(f"{spec.parameter}: "))
                    return Action(spec.id, tuple(targets), value)
            except EOFError:
                return None
