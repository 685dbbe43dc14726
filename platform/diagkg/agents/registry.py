"""Diagnostic assistants: one interface, and a registry of them by name.

An assistant is set up with what a technician would be told (the system's
description and parts, the reported symptoms, the visible lights, the action
catalogue, the budget, and a read-only view of the system's knowledge graph)
and then, round after round, suggests an :class:`~diagkg.env.service.Action`,
a :class:`~diagkg.env.service.Hypothesis`, or ``None`` to give up; it is
told every outcome.

Assistants are found through the ``diagkg.assistants`` entry-point group, so
a separate package adds one without editing diagkg::

    [project.entry-points."diagkg.assistants"]
    my-assistant = "my_package.module:MyAssistant"

The registry never imports an assistant before it is asked for. diagkg's own
(``oracle``, ``random-search``, ``fixed-random``, ``unhelpful``, ``human``,
``neuro-symbolic``, ``model-based``, ``llm``) are declared the same way in its ``pyproject.toml``.
:func:`register` adds one at run time (tests, notebooks).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable, Protocol

from ..env.actions import Action, ActionType, Hypothesis
from ..errors import AssistantError, UnknownTermError

GROUP = "diagkg.assistants"


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
    llm: Any = None                     # the session's CallLog (diagkg.llm.records): LLM calls, and a replay's answers


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

    def ranked_candidates(self) -> list[frozenset[str]]:
        """The candidate diagnoses (sets of parts) it holds now, most likely
        first; empty for an assistant that keeps no such list. The runner
        records the list at each decision (the hypothesis ledger's candidate
        coverage at k)."""
        return []



Factory = Callable[..., BaseAssistant]
_REGISTERED: dict[str, Factory] = {}


_FOUND: dict[str, EntryPoint] | None = None


def _entry_points(fresh: bool = False) -> dict[str, EntryPoint]:
    """The installed assistants (read once per process: reading every
    distribution's metadata costs milliseconds; ``fresh`` reads again)."""
    global _FOUND
    if _FOUND is None or fresh:
        found: dict[str, EntryPoint] = {}
        for ep in entry_points(group=GROUP):
            found.setdefault(ep.name, ep)
        _FOUND = found
    return _FOUND


def register(name: str, factory: Factory) -> None:
    """Make an assistant available by name at run time (entry points are the
    lasting way: see the module's documentation)."""
    _REGISTERED[name] = factory


def names() -> list[str]:
    """Every assistant name: the entry points' and those registered at run time."""
    return sorted(set(_entry_points()) | set(_REGISTERED))


def factory(name: str) -> Factory:
    """The class (or factory) of the assistant ``name``, imported only now."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    found = _entry_points()
    if name not in found:
        found = _entry_points(fresh=True)     # installed since the first look?
    if name not in found:
        known = names()
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(known)}"
        raise UnknownTermError(f"no assistant named {name!r}{hint}")
    try:
        loaded = found[name].load()
    except Exception as exc:   # a broken plug-in: say which, not a traceback
        raise AssistantError(f"the assistant {name!r} ({found[name].value}) cannot be loaded: {exc}") from exc
    if not callable(loaded):
        raise AssistantError(f"the assistant {name!r} ({found[name].value}) is not a class or factory")
    return loaded  # type: ignore[no-any-return]


def create(name: str, **config: Any) -> BaseAssistant:
    """An assistant by name, with its configuration."""
    return factory(name)(**config)
