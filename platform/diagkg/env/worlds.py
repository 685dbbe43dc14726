"""What if: the one service for worlds other than the real one.

Whoever asks "what would this action show if these were the faults?" — the model-based assistant
(:mod:`diagkg.agents.worlds`), the hypothesis ledger (:mod:`diagkg.runs.ledger`), the optimal
policy (:mod:`diagkg.evaluation.optimum_worlds`), scenario generation
(:mod:`diagkg.generation.bench`) — asks it here, with the same three pieces:

* :func:`fault_modes`, the **fault catalogue** as typed :class:`FaultMode` records (read once per
  version of the ontology, from ``fault-modes.rq``), each turning a target into a
  :class:`~diagkg.env.scenarios.Fault` (:meth:`FaultMode.fault`);
* :func:`hypothetical`, a **hypothetical scenario** injecting given faults on a system (no
  answer, no ideal repair, an unbounded budget);
* :class:`Shadow`, a **what-if session**: the real session's code (so the same action gives the
  same report when the faults are the truth) on a working memory of its own, started on any
  hypothetical scenario, taken to a :meth:`~diagkg.env.service.Session.checkpoint` and rolled
  back after each try, remembering what it worked out (:class:`~diagkg.env.roles.Recall`), and
  :meth:`Shadow.trial` for "this step from that point", None when the world cannot take it.

What a world showed is derived data: callers keep it in :class:`~diagkg.kg.memo.Memo` instances
keyed by the graph versions, the faults and the steps (:func:`opening_key` names what a world's
reports depend on besides the steps).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from ..errors import SessionError, SimulationError
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.vocab import DK_NS
from .actions import Action, Hypothesis
from .outcomes import Outcome
from .roles import Recall
from .scenarios import Fault, Scenario
from .service import Checkpoint, Session

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource, KnowledgeStore
    from ..sim.circuit import CircuitState

UNBOUNDED = 10**6        # a what-if session's budget of rounds: never the reason it stops

# what the service understands of a fault mode: the kinds of target it takes and the parameters it
# sets (a catalogue mode with another is refused by the registry test, as the observers' is)
TARGET_KINDS = frozenset({"component", "port", "coupling"})
PARAMETERS = frozenset({"value", "probability", "other"})


@dataclass(frozen=True)
class FaultMode:
    """A fault mode of the catalogue (``dk:FaultMode``)."""

    iri: str
    label: str
    kind: str                        # what it targets: one of TARGET_KINDS
    template: str                    # the update template that injects it (``fault-….ru.j2``)
    types: frozenset[str]            # local names of the component classes it applies to
    parameters: frozenset[str]       # of PARAMETERS
    default: float | None            # its default value (a size, or a probability)
    prior: float                     # its ``dk:priorWeight`` (1 when the catalogue states none)
    comment: str = ""                # what it is, in words (``rdfs:comment``)
    rule: str | None = None          # where a second target lies (``dk:otherTargetRule``: own, alike, node)
    type_priors: tuple[tuple[str, float], ...] = ()   # (type's local name, weight): its ``dk:TypePrior``s
    raises_current: bool = False     # ``dk:raisesCurrent``: it lets more current flow (a short)
    follows_overcurrent: bool = False  # ``dk:followsOverCurrent``: often what an over-current leaves (a fuse blown)

    def prior_on(self, part_type: str | None) -> float:
        """How likely it is on one part of ``part_type`` (a component type's local name): the catalogue's
        weight for that type (``dk:TypePrior``), else its own :attr:`prior`."""
        return next((w for t, w in self.type_priors if t == part_type), self.prior)

    @property
    def name(self) -> str:
        """Its local name (``DepletedBattery``): what a :class:`Fault` carries as its mode."""
        return self.iri.rsplit("#", 1)[-1] if "#" in self.iri else self.iri.rsplit("/", 1)[-1]

    @property
    def two_targets(self) -> bool:
        """Whether it takes a second target (a short, two ends crossed, a part put in backwards)."""
        return "other" in self.parameters

    @property
    def chance(self) -> bool:
        """Whether it acts at random (a loose connection: a probability, not a size)."""
        return "probability" in self.parameters

    @property
    def to_any_node(self) -> bool:
        """A short to some other node: not a fault of one part, too many to enumerate blindly."""
        return "other" in self.parameters and "value" in self.parameters

    @property
    def sized(self) -> bool:
        """Whether it can be simulated as it stands: a degradation needs a default size."""
        return not (("value" in self.parameters or self.chance) and self.default is None)

    @property
    def node_short(self) -> bool:
        """A short between two nodes that can be simulated as it stands (at its default resistance)."""
        return self.to_any_node and self.sized and self.rule == "node" and self.default is not None

    @property
    def enumerable(self) -> bool:
        """Whether a what-if may try it on every part it fits (sized, not a short to any node, applying
        to some class of parts)."""
        return self.sized and not self.to_any_node and bool(self.types)

    def fault(self, ns: str, target: str, other: str | None = None) -> Fault:
        """This mode on ``target`` (and ``other``), local ids in the system namespace ``ns``, at
        its default value (or probability)."""
        probability = self.default if self.chance else None
        return Fault(mode=self.name, label=self.label, template=self.template, target=ns + target,
                     other=ns + other if other else None,
                     value=self.default if probability is None else None, probability=probability)


_MODES: Memo[dict[str, FaultMode]] = Memo("fault modes", 16)      # by the ontology's version


def _local_type(iri: str) -> str:
    """A class of the ontology by its local name (``Cable``); another IRI as it is."""
    return iri[len(DK_NS):] if iri.startswith(DK_NS) else iri


def fault_modes(store: KnowledgeSource) -> dict[str, FaultMode]:
    """The fault catalogue of ``store``, by mode IRI (in IRI order), read once per version of the ontology."""
    key = store.version_of(graphs.ONTOLOGY)
    known = _MODES.get(key)
    if known is not None:
        return known
    rows: dict[str, dict[str, Any]] = {}
    for r in store.select("fault-modes"):
        m = rows.setdefault(r["mode"], {"label": r["label"], "kind": r["targetKind"], "template": r["template"],
                                        "types": set(), "parameters": set(), "default": r["default"],
                                        "prior": float(r["prior"]) if r["prior"] is not None else 1.0,
                                        "comment": str(r["comment"] or ""), "rule": r["rule"],
                                        "raises": bool(r["raises"]), "follows": bool(r["follows"])})
        if r["appliesTo"]:
            m["types"].add(_local_type(r["appliesTo"]))
        if r["parameter"]:
            m["parameters"].add(r["parameter"])
    on_types: dict[str, list[tuple[str, float]]] = {}
    for r in store.select("fault-type-priors"):
        on_types.setdefault(r["mode"], []).append((_local_type(r["type"]), float(r["weight"])))
    modes = {iri: FaultMode(iri, m["label"], m["kind"], m["template"], frozenset(m["types"]),
                            frozenset(m["parameters"]), float(m["default"]) if m["default"] is not None else None,
                            m["prior"], m["comment"], str(m["rule"]) if m["rule"] is not None else None,
                            tuple(on_types.get(iri, ())), m["raises"], m["follows"])
             for iri, m in sorted(rows.items())}
    return _MODES.put(key, modes)


def hypothetical(faults: tuple[Fault, ...], *, iri: str, base: Scenario | None = None,
                 system_iri: str = "", key: str = "", label: str = "", faulty: Iterable[str] = (),
                 removed: Iterable[str] = (), permanent: Iterable[str] = ()) -> Scenario:
    """A hypothetical scenario injecting ``faults``: ``base``'s configuration (its removed parts,
    and its permanent changes with ``permanent`` added) with its answer, ideal repair and budget
    taken away; or, without ``base``, a scenario of the system ``system_iri`` (key ``key``)."""
    if base is not None:
        return dataclasses.replace(base, iri=iri, faults=faults, faulty=frozenset(faulty), repair=(),
                                   removed=base.removed | frozenset(removed),
                                   permanent=base.permanent | frozenset(permanent), budget=UNBOUNDED)
    return Scenario(iri=iri, number=0, id="what-if", label=label, system_iri=system_iri, key=key, budget=UNBOUNDED,
                    observations="", diagnosis=None, description=None, categories=(), faulty=frozenset(faulty),
                    removed=frozenset(removed), permanent=frozenset(permanent), notes=(), faults=faults)


def opening_key(store: KnowledgeSource, scenario: Scenario, seed: int) -> tuple[Any, ...]:
    """What a world's reports depend on besides the steps taken: the system and ontology
    versions, the configuration (removed parts, permanent changes), the faults, and the seed when
    a fault acts at random."""
    return (store.version_of(scenario.system_graph), store.version_of(graphs.ONTOLOGY), scenario.removed,
            scenario.permanent, scenario.faults,
            seed if any(f.probability is not None for f in scenario.faults) else None)


@dataclass(frozen=True)
class Opening:
    """What a shadow's start worked out (see :meth:`Shadow.start`): its state graph as the faults
    left it (the fault snapshot), the system as set up and as injected (simulated again when
    written back: the simulator remembers its results), and the first observation."""

    snapshot: tuple[ox.Quad, ...]
    nominal_state: CircuitState
    injected_state: CircuitState
    observation: dict[str, Any]


# what shadows' starts worked out, shared by the shadows of a process: by the world's opening key, the
# scenario's own fields its first observation shows, and the state graph the snapshot is written in
OPENINGS: Memo[Opening] = Memo("shadow openings", 5_000)


class Shadow(Session):
    """A what-if session: the real session's code on a working memory of its own, with an
    unbounded budget, started on any hypothetical scenario (:meth:`start`), tried from a
    checkpoint again and again (:meth:`trial`), remembering what it worked out (:attr:`recall`).
    Close it (or use it in a ``with`` block) when done: its working memory goes back to the pool.
    ``session_id`` names its state graph (a fresh one by default); shadows given the same name
    share what their starts worked out (:meth:`start`)."""

    def __init__(self, scenario: Scenario, store: KnowledgeStore, session_id: str | None = None):
        self.recall = Recall()
        self.named = session_id is not None       # its starts are shared (see start)
        super().__init__(scenario, store, session_id=session_id, budget=UNBOUNDED)

    @property
    def reads(self) -> frozenset[str]:
        """The parts whose being repaired (or not) the last step's end depended on (see
        :class:`~diagkg.env.roles.Recall`)."""
        assert self.recall is not None
        return self.recall.reads

    def start(self, scenario: Scenario, seed: int) -> dict[str, Any]:
        """Inject ``scenario``'s faults afresh (as a reset does); the first observation. A start
        worked out before in a state graph of the same name (this shadow's, or another's of the
        same name, on the same versions of the system and ontology) is written back as it was, its
        blank nodes included, rather than injected again: the same world then has the same state
        graph in every session, and what is remembered by that graph's content is found again."""
        self.scenario = scenario
        if not self.named:            # a state graph of its own: no other shadow could use its starts
            obs, _ = self.reset(seed=seed)
            return obs
        key = (opening_key(self.store, scenario, seed), self.state_graph.value, scenario.number, scenario.id,
               scenario.key, scenario.observations)
        known = OPENINGS.get(key)
        if known is None:
            obs, _ = self.reset(seed=seed)
            OPENINGS.put(key, Opening(self._snapshot, self.nominal_state, self.injected_state,
                                       {**obs, "lights": dict(obs["lights"])}))
            return obs
        self.begin(seed)
        self._write(frozenset(known.snapshot))
        # as reset simulates them (the draws of loose connections from the same random numbers)
        self.nominal_state = known.nominal_state
        self.set_nominal(self.sim.simulate(known.nominal_state, random.Random(seed)))
        self.injected_state = known.injected_state
        self.initial_result = self.simulate(known.injected_state)
        self._snapshot = known.snapshot
        self._snapshot_set = None
        return {**known.observation, "lights": dict(known.observation["lights"])}

    def trial(self, point: Checkpoint, step: Action | Hypothesis) -> Outcome | None:
        """What ``step`` reports taken at ``point`` (the shadow then stands after it); None when the
        world cannot take it (a refused or impossible step, a circuit that cannot be simulated)."""
        self.rollback(point)
        try:
            out, *_ = self.step(step)
        except (SessionError, SimulationError):
            return None
        return out


__all__ = ["OPENINGS", "PARAMETERS", "TARGET_KINDS", "UNBOUNDED", "FaultMode", "Opening", "Shadow", "fault_modes", "hypothetical",
           "opening_key"]
