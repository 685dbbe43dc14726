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

from ..kg.memo import Memo

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
    nominal_state: CircuitState
    nominal_result: SimulationResult
    initial_result: SimulationResult             # the faults as injected, simulated (what they damage at once)
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
    # what a session that tries steps again and again remembers (a what-if shadow: None otherwise)
    recall: Recall | None

    def state_key(self) -> frozenset[ox.Quad]: ...

    def state(self) -> CircuitState: ...

    def set_state(self, quads: frozenset[ox.Quad]) -> None: ...

    def sync(self) -> None: ...

    def iri_of(self, part: str) -> str: ...

    def part_class(self, part: str) -> str | None: ...

    def parts(self) -> dict[str, str]: ...


class Recall:
    """What a session that tries the same steps again and again remembers (a what-if shadow,
    :class:`~diagkg.env.worlds.Shadow`): the state an effect led to, a hypothesis's trial repair,
    the access a repair needs, the state a reset keeps, each keyed by the state it started from
    (derived data: bounded :class:`~diagkg.kg.memo.Memo` instances). A real session, stepped once a
    round, has none (``Workbench.recall`` is None) and works each out afresh.

    :attr:`reads` are the parts whose being repaired (or not) the last step's resulting state
    depended on: those the step left differing from the fault snapshot before the reset. A step
    ends the same way for every set of repaired parts with the same ones among these (a model of
    the system remembers predictions by it)."""

    def __init__(self) -> None:
        self.effects: Memo[frozenset[ox.Quad]] = Memo("shadow effects", 20_000)
        self.trials: Memo[CircuitState] = Memo("shadow trial repairs", 20_000)
        self.access_steps: Memo[tuple[tuple[str, tuple[str, ...], float], ...]] = Memo("shadow access steps", 5_000)
        self.resets: Memo[tuple[frozenset[ox.Quad], frozenset[str]]] = Memo("shadow resets", 20_000)
        self.snapshots: Memo[tuple[tuple[ox.Quad, ...], frozenset[ox.Quad]]] = Memo("shadow snapshots", 1_000)
        self.reads: frozenset[str] = frozenset()


__all__ = ["Recall", "Workbench"]
