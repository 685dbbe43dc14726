"""Diagnostic assistants: one interface, registered by name.

An assistant is set up with what a technician would be told (the system's
description and parts, the reported symptoms, the visible lights, the action
catalogue, the budget) and then, round after round, suggests an
:class:`~diagkg.service.Action`, a :class:`~diagkg.service.Hypothesis`, or
``None`` to give up; it is told every outcome.

========================  ==========================================================
``oracle``                executes the scenario's ideal repair, then names the faulty
                          parts (a sanity bound; the only assistant that sees the answer)
``random-search``         names one part per round, in a random order, without repeats
``fixed-random``          one of five fixed random action sequences of the system,
                          chosen by the seed, then gives up
``unhelpful``             always the same useless suggestion
``human``                 a person at the terminal chooses from menus
``neuro-symbolic``        see :mod:`diagkg.neurosymbolic`
========================  ==========================================================
"""

from __future__ import annotations

import difflib
import random
import sys
from dataclasses import dataclass
from typing import Any, Callable, Protocol, TextIO

from .errors import UnknownTermError
from .service import Action, ActionType, Hypothesis


@dataclass
class Briefing:
    """What an assistant is told at the start of a session."""

    system: str                         # system key
    description: str                    # the system's description (dcterms:description)
    symptoms: str                       # the reported symptoms
    visible: str                        # the lights visible from outside
    parts: dict[str, str]               # part id -> kind/type ("Bulb", "Cable", "enclosure"…)
    labels: dict[str, str]              # part id -> human label
    catalogue: dict[str, ActionType]
    budget: int
    seed: int
    store: Any = None                   # a read-only KnowledgeView: ontology, system, inferences (no answer)
    cache: Any = None                   # an AnswerCache: where answers worth keeping go (LLM replies)
    scenario: Any = None                # only given to assistants that may see the answer (oracle)
    session: Any = None                 # only for assistants that may see the answer
    system_iri: str = ""                # the system's IRI (its parts are named in its namespace)


class Assistant(Protocol):
    name: str

    def setup(self, briefing: Briefing) -> None: ...

    def suggest(self) -> Action | Hypothesis | None: ...

    def record(self, outcome: dict[str, Any]) -> None: ...


class BaseAssistant:
    """Remembers the briefing and the outcomes; subclasses implement :meth:`suggest`."""

    name = "base"
    privileged = False   # sees the scenario (only the oracle)

    def __init__(self, **config: Any):
        self.config = dict(config)
        self.briefing: Briefing | None = None
        self.outcomes: list[dict[str, Any]] = []

    def setup(self, briefing: Briefing) -> None:
        self.briefing = briefing
        self.outcomes = []

    def record(self, outcome: dict[str, Any]) -> None:
        self.outcomes.append(outcome)

    def suggest(self) -> Action | Hypothesis | None:  # pragma: no cover - abstract
        raise NotImplementedError


class Oracle(BaseAssistant):
    """The scenario's ideal repair, step by step, then the correct hypothesis."""

    name = "oracle"
    privileged = True

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        scenario = briefing.scenario
        self.plan: list[Action | Hypothesis] = [Action(s.action, s.targets, s.value) for s in scenario.repair]
        self.plan.append(Hypothesis(scenario.faulty, "the scenario's faulty components"))

    def suggest(self) -> Action | Hypothesis | None:
        return self.plan.pop(0) if self.plan else None


class RandomSearch(BaseAssistant):
    """Hypothesises one part at a time, every part once, in a random order."""

    name = "random-search"

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.order = sorted(briefing.parts)
        random.Random(briefing.seed).shuffle(self.order)

    def suggest(self) -> Action | Hypothesis | None:
        return Hypothesis({self.order.pop(0)}, "a random guess") if self.order else None


class FixedRandom(BaseAssistant):
    """One of five action sequences drawn once per system (fixed), picked by the seed."""

    name = "fixed-random"
    SEQUENCES = 5

    @staticmethod
    def sequences(briefing: Briefing) -> list[list[Action]]:
        rng = random.Random(f"fixed-random/{briefing.system}")   # the same sequences on every run
        components = sorted(p for p, kind in briefing.parts.items() if kind not in ("enclosure", "opening", "module"))
        single = sorted(a for a, spec in briefing.catalogue.items()
                        if spec.target_count == 1 and spec.target_kind in ("component", "any") and not spec.parameter)
        out = []
        for _ in range(FixedRandom.SEQUENCES):
            out.append([Action(rng.choice(single), (rng.choice(components),)) for _ in range(rng.randint(3, 5))])
        return out

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.plan = list(self.sequences(briefing)[briefing.seed % self.SEQUENCES])

    def suggest(self) -> Action | Hypothesis | None:
        return self.plan.pop(0) if self.plan else None


class Unhelpful(BaseAssistant):
    """Always suggests looking at the same enclosure again."""

    name = "unhelpful"

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        boxes = sorted(p for p, kind in briefing.parts.items() if kind == "enclosure")
        self.target = boxes[0] if boxes else sorted(briefing.parts)[0]

    def suggest(self) -> Action | Hypothesis | None:
        return Action("observe_component", (self.target,))


class Human(BaseAssistant):
    """A person at the terminal picks actions and hypotheses from menus."""

    name = "human"

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

    def record(self, outcome: dict[str, Any]) -> None:
        super().record(outcome)
        self._say(f"→ {outcome['message']} (cost {outcome['cost']:g} min)\n")

    def suggest(self) -> Action | Hypothesis | None:
        b = self.briefing
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


REGISTRY: dict[str, Callable[..., BaseAssistant]] = {
    "oracle": Oracle,
    "random-search": RandomSearch,
    "fixed-random": FixedRandom,
    "unhelpful": Unhelpful,
    "human": Human,
}


def register(name: str, factory: Callable[..., BaseAssistant]) -> None:
    """Make an assistant available by name (e.g. from a plug-in)."""
    REGISTRY[name] = factory


def names() -> list[str]:
    _load_optional()
    return sorted(REGISTRY)


def create(name: str, **config: Any) -> BaseAssistant:
    """An assistant by name, with its configuration."""
    _load_optional()
    if name not in REGISTRY:
        close = difflib.get_close_matches(name, list(REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(sorted(REGISTRY))}"
        raise UnknownTermError(f"no assistant named {name!r}{hint}")
    return REGISTRY[name](**config)


def _load_optional() -> None:
    """Assistants living in their own modules register themselves on import."""
    try:
        from . import neurosymbolic  # noqa: F401
    except ImportError:  # pragma: no cover - the module is part of the package
        pass
