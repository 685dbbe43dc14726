"""What the session's helpers use of a session: a narrow protocol instead of the whole
:class:`~diagkg.env.service.Session`.

:mod:`~diagkg.env.access`, :mod:`~diagkg.env.effects`, :mod:`~diagkg.env.observations` and
:mod:`~diagkg.env.verification` are handed the session that calls them. They type it as a
:class:`Workbench`, declared here below all of them, so that none of them imports
``service`` (not even for typing: the session imports them, and no import runs back up).
A :class:`~diagkg.env.service.Session` is one; so is anything else with these members (a
test's stand-in, a shadow of another design).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Protocol

import pyoxigraph as ox

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from ..sim.circuit import CircuitState, Skeleton
    from ..sim.results import SimulationResult
    from ..sim.simulator import Simulator
    from .actions import ActionType
    from .scenarios import Scenario


class Workbench(Protocol):
    """A session as its helpers see it: its knowledge and circuit state (working memory,
    simulator, scenario), what it has done (round, repairs, shorts), and its caches."""

    # what it works on
    scenario: Scenario
    store: KnowledgeStore
    sim: Simulator
    sk: Skeleton
    ns: str
    state_graph: ox.NamedNode
    system_graph: ox.NamedNode
    system_version: str
    catalogue: dict[str, ActionType]
    damage_iris: dict[str, str]
    nominal_result: SimulationResult
    main_bulbs: frozenset[str]
    parent_of: dict[str, str]
    # where it stands
    rng: random.Random
    round: int
    repaired: set[str]
    short_count: int
    # what it remembers (derived data, keyed by state)
    access_cache: dict[str, list[dict[str, Any]]]
    afford_cache: dict[tuple[frozenset[ox.Quad], str, str], bool]
    affording_cache: dict[tuple[frozenset[ox.Quad], str, str], frozenset[str]]
    physical_keys: dict[int, tuple[frozenset[ox.Quad], frozenset[ox.Quad]]]
    effect_cache: dict[tuple[Any, ...], frozenset[ox.Quad]]
    trial_cache: dict[tuple[Any, ...], CircuitState]
    access_steps_cache: dict[tuple[Any, ...], tuple[tuple[str, tuple[str, ...], float], ...]]

    def state_key(self) -> frozenset[ox.Quad]: ...

    def state(self) -> CircuitState: ...

    def set_state(self, quads: frozenset[ox.Quad]) -> None: ...

    def sync(self) -> None: ...

    def iri_of(self, part: str) -> str: ...

    def part_class(self, part: str) -> str | None: ...

    def parts(self) -> dict[str, str]: ...


__all__ = ["Workbench"]
