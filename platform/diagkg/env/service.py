"""The diagnostic session: the Gymnasium-style environment (``reset``/``step``).

::

    import diagkg
    session = diagkg.make("3CC.S.1", store=store)     # or a number, e.g. diagkg.make(1, store=store)
    obs, info = session.reset(seed=0)
    obs, cost, terminated, truncated, info = session.step(diagkg.Action("measure_voltage", ("battery",)))
    obs, cost, terminated, truncated, info = session.step(diagkg.Hypothesis({"battery"}))
    session.close()          # its working memory goes back to the pool (or: with diagkg.make(...) as session)

A session works on the store in use: the scenario, the system, its inferences and the catalogues are
read from it into the session's working memory (:func:`diagkg.env.workspace.workspace`, a private
in-memory store), where the circuit state lives as a named graph; the runner writes the store once,
when it stores the trajectory. The saboteur writes the scenario's configuration and faults into the
state. The session only sequences rounds; each concept has its module:

* :mod:`~diagkg.env.access` — what a part affords now (SPARQL ASK templates);
* :mod:`~diagkg.env.effects` — actions applied through their catalogue
  templates, automatic access, LED slots and chains of modules;
* :mod:`~diagkg.env.observations` — what a person sees or measures, one
  handler per ``dk:observes`` of the catalogue;
* :mod:`~diagkg.env.verification` — hypotheses and their cost rules;
* :mod:`~diagkg.env.outcomes` — the typed records a round returns.

After each action the state is reset to the fault snapshot except for the
parts that were repaired for good (by a repair action, or by a verified
hypothesis). Costs are minutes of work (the action catalogue).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, SupportsIndex

import pyoxigraph as ox

from ..errors import ActionError, SessionError
from ..kg import graphs
from ..kg.memo import Memo
from ..kg.vocab import DK, DK_NS
from ..sim.circuit import CircuitState, read_state
from ..sim.simulator import SimulationResult, Simulator
from . import access, effects, verification
from .actions import Action, Hypothesis, action_catalogue, tools_at_hand
from .observations import OBSERVERS, describe_lights, seen_while_held, visible_lights
from .outcomes import End, Kind, Outcome, Refusal, Verdict, unknown_action
from .roles import Recall
from .scenarios import Scenario, configure, inject, restore, state_quads

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource, KnowledgeStore

# "crashed": a session that raised; a campaign records it as a failure (never a dropped sample)
END_VALUES = tuple(e.value for e in End)          # the end values, as JSON carries them
VERDICTS = tuple(v.value for v in Verdict)

_SIMULATORS: Memo[Simulator] = Memo("simulators", 16)     # by system key and the versions they are built from


def simulator_for(store: KnowledgeSource, key: str) -> Simulator:
    """The simulator of system ``key`` as ``store`` describes it; built once per
    version of the system description and the ontology (any store, view or
    session working memory holding the same versions shares it)."""
    version = (key, store.version_of(graphs.system(key)), store.version_of(graphs.ONTOLOGY))
    return _SIMULATORS.get_or(version, lambda: Simulator.from_store(store, key))


def make(scenario: str | int | Scenario | Path, store: KnowledgeStore | None = None, *,
         notify: Callable[[str], None] | None = None, **kw: Any) -> "Session":
    """A session on a scenario of ``store`` (number, identifier or :class:`Scenario`), or of a scenario file,
    validated against the store and loaded into it first (as ``diagkg run --scenario FILE``).

    ``store`` defaults to the on-disk store (``DIAGKG_STORE`` or the default
    path); a store that has never held the shipped catalogue gets it first.
    """
    from ..kg.store import KnowledgeStore
    from .workspace import is_file_ref, load_scenario_file, resolve_scenario

    store = KnowledgeStore() if store is None else store
    if isinstance(scenario, Path) or is_file_ref(scenario):
        scenario = load_scenario_file(store, scenario, notify=notify)[0]
    return Session(resolve_scenario(store, scenario, notify), store, notify=notify, **kw)


@dataclass(frozen=True)
class Checkpoint:
    """A session's state at one moment (see :meth:`Session.checkpoint`)."""

    scenario: Scenario
    state: frozenset[ox.Quad]          # the state graph's content (as state_key gives it)
    snapshot: tuple[ox.Quad, ...]
    rng: Any
    round: int
    total_cost: float
    end: End | None
    history: int
    repaired: frozenset[str]
    short_count: int


class Session:
    """One diagnostic session: the saboteur's faults, the service agent, the budget."""

    # what a session that tries the same steps again and again remembers: a what-if shadow
    # (:class:`~diagkg.env.worlds.Shadow`) has one; a real session works each step out afresh
    recall: Recall | None = None

    def __init__(self, scenario: Scenario, store: KnowledgeStore, session_id: str | None = None,
                 tools: str | Iterable[str] = ("multimeter",), budget: int | None = None,
                 notify: Callable[[str], None] | None = None):
        from .workspace import workspace

        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise SessionError(f"a session's budget is a whole number of rounds, at least 1, got {budget!r}")
        self.tools = tools_at_hand(tools, action_catalogue(store))      # (a string is one tool's name), before the memory
        self.scenario = scenario
        self.source = store                                   # the store in use (read from, never written)
        self.memory = workspace(store, scenario, notify)    # working memory: knowledge + circuit state
        self.store = self.memory.store
        self.closed = False
        self.id = session_id or uuid.uuid4().hex[:12]
        self.state_graph = graphs.named("state", self.id)
        self.system_graph = scenario.system_graph
        self.ns = graphs.namespace_of(scenario.system_iri)
        self.sim = simulator_for(self.store, scenario.key)
        self.sk = self.sim.skeleton
        # damage states (dk:blown…): local name -> IRI, and as predicates of the state graph
        self.damage_iris = {name: iri for iri, name in self.sk.damage_states.items()}
        self.damage_predicates = frozenset(ox.NamedNode(iri) for iri in self.sk.damage_states)
        self.catalogue = action_catalogue(self.store)
        # the version of the system graph the session reads (what answers shared between sessions key on)
        self.system_version = self.store.version_of(self.system_graph)
        self.budget = budget if budget is not None else scenario.budget
        self.access_cache: dict[str, list[dict[str, Any]]] = {}
        self.afford_cache: dict[tuple[frozenset[ox.Quad], str, str], bool] = {}
        self.affording_cache: dict[tuple[frozenset[ox.Quad], str, str], frozenset[str]] = {}
        self.physical_keys: dict[int, tuple[frozenset[ox.Quad], frozenset[ox.Quad]]] = {}
        self._state_key: frozenset[ox.Quad] = frozenset()   # the state graph's content as last read/written
        self._key_generation = -1
        # a session that rolls back (a model's shadow) sets its state graph lazily: the state it
        # stands in is ``_pending`` until something reads or writes the graph (see sync)
        self._lazy = False
        self._pending: frozenset[ox.Quad] | None = None
        self._started = False
        self._reset_fields()

    def _reset_fields(self) -> None:
        self.rng = random.Random(0)
        self.round = 0
        self.total_cost = 0.0
        self.end: End | None = None
        self.history: list[Outcome] = []
        self.repaired: set[str] = set()
        self.nominal_lit: tuple[str, ...] = ()
        self.nominal_bulbs: frozenset[str] = frozenset()
        self.main_bulbs: frozenset[str] = frozenset()
        self._snapshot: tuple[ox.Quad, ...] = ()
        self._snapshot_set: frozenset[ox.Quad] | None = None
        self.short_count = 0
        self._repairing: frozenset[str] = frozenset()

    # ------------------------------------------------------------------
    # Gymnasium-style API
    # ------------------------------------------------------------------
    def reset(self, *, seed: SupportsIndex | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Inject the scenario; returns the first observation and info (as Gymnasium's ``reset``). ``seed`` (a
        whole number) drives loose connections (default 0); ``options`` is accepted for compatibility and must be empty."""
        if options:
            raise SessionError(f"reset() takes no options, got {', '.join(sorted(options))}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0):  # ("1" and -5
            raise SessionError(f"reset(seed=…) takes a whole number, 0 or more, got {seed!r}")   # ran: -5 as 5, recorded -5)
        self.begin(int(seed) if seed is not None else 0)       # (numpy's integers too)
        configure(self.store, self.scenario, self.state_graph)
        self.nominal_state = self.state()       # the system as set up, before the faults
        self.set_nominal(self.sim.simulate(self.nominal_state, random.Random(self.seed)))
        inject(self.store, self.scenario, self.state_graph)
        self.injected_state = self.state()      # the faults as injected, before what they damage at once
        result = self.initial_result = self.simulate(self.injected_state)
        effects.keep_damage(self, result)       # what the faults damage at once belongs to the fault snapshot
        self._snapshot = tuple(state_quads(self.store, self.state_graph))
        self._snapshot_set = None
        lights = visible_lights(result, self)
        obs = {
            "scenario": self.scenario.number, "scenario_id": self.scenario.id,
            "system": self.scenario.key, "budget": self.budget,
            "symptoms": self.scenario.observations,
            "visible": describe_lights(lights),        # in words, for people
            "lights": lights,                          # lamp -> Light, for assistants
        }
        return obs, self._info()

    def begin(self, seed: int) -> None:
        """Start afresh (what a reset does before it writes the state graph): nothing done yet, the
        random draws of loose connections from ``seed``."""
        if self.closed:
            raise SessionError("reset() on a closed session: make a new one")
        self._reset_fields()
        self._started = True
        self._pending = None                  # the state graph is written afresh next
        self.store.compact()
        self.seed = seed
        self.rng = random.Random(seed)

    def set_nominal(self, nominal: SimulationResult) -> None:
        """The system as set up, simulated: what lights then, its bulbs, and the main ones (not indicators)."""
        self.nominal_result = nominal
        self.nominal_lit = nominal.lit
        bulbs = {c for c in nominal.lit if self.sk.components[c].is_lamp}
        self.nominal_bulbs = frozenset(bulbs)
        self.main_bulbs = frozenset(c for c in bulbs if not self.sk.components[c].params.get("isIndicator"))

    def step(self, act: Action | Hypothesis | None) -> tuple[Outcome, float, bool, bool, dict[str, Any]]:
        """One round: execute an action, verify a hypothesis, or (None) give up; the round's typed
        :class:`~diagkg.env.outcomes.Outcome` comes back as Gymnasium's observation."""
        if self.closed:
            raise SessionError("step() on a closed session: make a new one")
        if not self._started:
            raise SessionError("step() before reset(): call reset() first")
        if self.end is not None:
            raise SessionError(f"the session has ended ({self.end}); call reset()")
        if act is not None and not isinstance(act, (Action, Hypothesis)):
            # refused before the round is counted (it raised AttributeError, and the round was spent)
            raise SessionError(f"step() takes an Action, a Hypothesis or None (to give up), not {type(act).__name__}")
        if act is None:
            self.end = End.SURRENDER
            outcome = Outcome(self.round, Kind.NONE, "nothing", True, "The assistant had nothing more to suggest.", 0.0)
            self.history.append(outcome)
            return outcome, 0.0, True, False, self._info()
        self.round += 1
        if self.recall is not None:
            self.recall.reads = frozenset()
        if isinstance(act, Hypothesis):
            outcome = verification.verify(self, act)
            effects.keep_damage(self, self.simulate())   # a part repaired into an over-current is damaged again
        else:
            outcome = self.execute(act)
        self.total_cost += outcome.cost
        self.history.append(outcome)
        terminated = False
        if outcome.verdict == "correct":
            self.end, terminated = End.SUCCESS, True
        elif outcome.kind == "action" and self.works_again() and \
                not verification.worked_at_start(self, self._snapshot_facts(), self.nominal_bulbs):
            self.end, terminated = End.SUCCESS_NO_HYPOTHESIS, True
            outcome.message += " The system works again."
        truncated = not terminated and self.round >= self.budget
        if truncated:
            self.end = End.TIMEOUT
        return outcome, outcome.cost, terminated, truncated, self._info()

    def checkpoint(self) -> "Checkpoint":
        """Everything a step can change, to come back to with :meth:`rollback`
        (a model of the system tries actions on a session without keeping them)."""
        return Checkpoint(self.scenario, self.state_key(), self._snapshot,
                          self.rng.getstate(), self.round, self.total_cost, self.end, len(self.history),
                          frozenset(self.repaired), self.short_count)

    def rollback(self, point: "Checkpoint") -> None:
        """Back to a :meth:`checkpoint` of this session (its scenario included)."""
        if self.closed:
            raise SessionError("rollback() on a closed session: make a new one")
        self.scenario = point.scenario
        self._lazy = True
        self.set_state(point.state)
        self._snapshot = point.snapshot          # a tuple, never changed in place
        recall = self.recall
        known = recall.snapshots.get(id(point.snapshot)) if recall is not None else None
        if known is None or known[0] is not point.snapshot:
            known = (point.snapshot, frozenset(point.snapshot))
            if recall is not None:
                recall.snapshots.put(id(point.snapshot), known)
        self._snapshot_set = known[1]
        self.rng.setstate(point.rng)
        self.round, self.total_cost, self.end = point.round, point.total_cost, point.end
        del self.history[point.history:]
        self.repaired = set(point.repaired)
        self.short_count = point.short_count
        self._started = True

    def set_state(self, quads: frozenset[ox.Quad]) -> None:
        """Make the state graph hold exactly ``quads`` (a :meth:`state_key`), unless it does.
        A session that has rolled back writes it only when it is next read or written
        (:meth:`sync`): a prediction that reads only remembered answers writes nothing."""
        if self._lazy:
            if self._pending is not None and (self._pending is quads or self._pending == quads):
                return
            written = self._written()
            self._pending = None if written is not None and (written is quads or written == quads) else quads
            return
        self._write(quads)

    def sync(self) -> None:
        """Write the state the session stands in into the state graph if it is not there yet
        (before anything reads or writes that graph in the store)."""
        quads, self._pending = self._pending, None
        if quads is not None:
            self._write(quads)

    def _written(self) -> frozenset[ox.Quad] | None:
        """What the state graph holds, when that is known (nothing was written since it was read)."""
        return self._state_key if self._key_generation == self.store.generation else None

    def _write(self, quads: frozenset[ox.Quad]) -> None:
        """Make the state graph hold exactly ``quads`` now, unless it does (by difference when
        what it holds is known)."""
        self.store.compact()
        current = self._written()
        if current is None or (current is not quads and current != quads):
            restore(self.store, self.state_graph, quads, holds=current)
            # the state graph now holds exactly these quads: no need to read it again
            self._state_key, self._key_generation = quads, self.store.generation

    def close(self) -> None:
        """Release the working memory (to the pool, for a later session on the same knowledge;
        Gymnasium's ``close``). The session can then neither be reset nor stepped; closing again does
        nothing. ``with diagkg.make(...) as session:`` closes it at the end of the block; a session
        never closed leaves its memory to be dropped with it, not reused."""
        if not self.closed:
            self.closed = True
            self.memory.release()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def abort(self, end: End | str) -> None:
        """End the session from outside (e.g. ``llm_truncation`` when a model's reply is unusable)."""
        if end not in END_VALUES:
            raise ValueError(f"unknown end value {end!r}")
        self.end = End(end)

    def _info(self) -> dict[str, Any]:
        """What ``reset`` and ``step`` give beside the observation: nothing an agent could not see (the lamps lit
        behind a peephole are the evaluator's: ``initial_result.lit`` and ``nominal_lit``)."""
        return {"end": self.end, "round": self.round, "budget": self.budget, "total_cost": float(self.total_cost),
                "repaired": sorted(self.repaired)}

    # ------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------
    def state_key(self) -> frozenset[ox.Quad]:
        """The circuit-state graph's content (read again only after a write to the working memory): what caches key by."""
        if self.closed:     # its memory is in the pool: the next session empties and reuses it
            raise SessionError("the state of a closed session is gone (its memory went to the next session)")
        if self._pending is not None:
            return self._pending
        generation = self.store.generation
        if self._key_generation != generation:
            self._state_key = frozenset(state_quads(self.store, self.state_graph))
            self._key_generation = generation
        return self._state_key

    def state(self) -> CircuitState:
        key = self.state_key()
        if key not in self.sk.read_states:
            self.sync()
        return read_state(self.store, self.state_graph, self.sk, key)

    def simulate(self, state: CircuitState | None = None) -> SimulationResult:
        return self.sim.simulate(state or self.state(), self.rng)

    def is_nominal(self, state: CircuitState | None = None) -> bool:
        """Converged, every bulb lit nominally lit, none dark there lit (``none_lit_past``), however a loose end left
        falls (``verification.lamps_work``)."""
        return verification.lamps_work(self, state or self.state(), self.nominal_bulbs, bypass=False)

    def works_again(self) -> bool:
        """Repaired without a diagnosis: the system works (:meth:`is_nominal`, its switch controlling the lamps:
        :func:`~diagkg.env.verification.switch_controls`), and so does the working system with the faults left
        alone (what of the fault snapshot is still in the state graph): lamps lit by a fuse a test blew that cut
        a short off, by cables swapped past one whose end is off, past a switch stuck closed, are no repair; a
        broken indicator left alone stops none. With ``dk:permanentRepair`` repaired parts count as they are."""
        def works() -> bool:
            return verification.lamps_work(self, self.state(), self.nominal_bulbs, bypass=True)
        if not works():
            return False
        current = self.state_key()
        left = current & self._snapshot_facts()
        if self.scenario.permanent and self.repaired:
            owners = self._owners(current)
            left |= {q for q in current if owners.get(q, frozenset()) & self.repaired}
        if left == current:
            return True
        self.set_state(frozenset(left))
        try:
            return works()
        finally:
            self.set_state(current)

    def affords(self, part: str, affordance: str) -> bool:
        """Does ``part`` afford ``affordance`` (a dk: local name) in the current state?"""
        return access.affords(self, part, affordance)

    def iri_of(self, part: str) -> str:
        return self.ns + part

    def part_class(self, part: str) -> str | None:
        if part in self.sk.components:
            return "component"
        if "." in part and part.split(".", 1)[0] in self.sk.components:
            cid, port = part.split(".", 1)
            return "port" if port in self.sk.components[cid].ports else None
        if part in self.parts():
            return self.parts()[part]
        return None

    def parts(self) -> dict[str, str]:
        if not hasattr(self, "_part_kinds"):
            kinds = {}
            self.parent_of = {}
            for r in self.sk.parts:
                if r["parent"]:
                    self.parent_of[r["id"]] = r["parent"]
                cls = (r["class"] or "")[len(DK_NS):]
                kind = {"Enclosure": "enclosure", "InspectionPanel": "opening", "Peephole": "opening",
                        "Module": "module"}.get(cls)
                if kind and r["id"] not in kinds:
                    kinds[r["id"]] = kind
            self._part_kinds = kinds
        return self._part_kinds

    def _snapshot_facts(self) -> frozenset[ox.Quad]:
        """The fault snapshot's quads as a set (made once per snapshot)."""
        if self._snapshot_set is None:
            self._snapshot_set = frozenset(self._snapshot)
        return self._snapshot_set

    def _reset_to_snapshot(self, before: frozenset[ox.Quad], repairing: frozenset[str]) -> None:
        """Back to the fault snapshot after an action, except for repaired parts: a part the action
        repaired (``repairing``) stays as the action left it, a part repaired before stays as it was
        before the action (``before``, the state the action started from): a test on a part replaced
        earlier (a cable taken off, a switch opened, a bridge) is undone after its round as on any
        other part. Damage stays whatever part it is on, until the part is replaced. What it keeps
        depends only on the state graph's content, ``before``, the snapshot, the repaired parts and
        ``repairing``, so a session that remembers (a what-if shadow) keeps it by them; the state
        graph is set to it (not written when it already holds it). It depends on the repaired parts
        only through those whose state now or before differs from the snapshot (the shadow's
        :attr:`~diagkg.env.roles.Recall.reads`)."""
        snapshot = self._snapshot_facts()
        current = self.state_key()
        recall = self.recall
        bridges_stay = "short_ports" in self.scenario.permanent
        repaired = frozenset(self.repaired)
        key = (current, before, snapshot, repaired, repairing, bridges_stay)
        known = recall.resets.get(key) if recall is not None else None
        if known is None:
            none: frozenset[str] = frozenset()
            owners_now = self._owners(current)
            owners_then = self._owners(self._snapshot)
            owners_before = self._owners(before) if before is not current else owners_now
            earlier = repaired - repairing

            def stays(q: ox.Quad) -> bool:
                """A test's bridge is taken off whatever it touches, unless the scenario makes bridging a repair."""
                return bridges_stay or not effects.is_bridge(self, q.subject)

            # a triple about several parts (a short between two of them) goes with any of them repaired
            kept = frozenset([q for q in self._snapshot if not owners_then.get(q, none) & repaired]
                             + [q for q in before if (owners_before.get(q, none) & earlier
                                                      and not owners_before.get(q, none) & repairing and stays(q))]
                             + [q for q in current if (owners_now.get(q, none) & repairing and stays(q))
                                or q.predicate in self.damage_predicates])
            differ = {p for q in current ^ snapshot for p in owners_now.get(q, owners_then.get(q, none))} | \
                     {p for q in before ^ snapshot for p in owners_before.get(q, owners_then.get(q, none))}
            known = (kept, frozenset(differ))
            if recall is not None:
                recall.resets.put(key, known)
        if recall is not None:
            recall.reads = known[1]
        self.set_state(known[0])

    def _owners(self, quads: Iterable[ox.Quad]) -> dict[ox.Quad, frozenset[str]]:
        """Which parts each state triple is about (a port's triples belong to its component; a
        short between two ports, to both components)."""
        ns = self.ns
        node_owner: dict[Any, set[str]] = {}

        def part_of(term: object) -> str | None:
            if isinstance(term, ox.NamedNode) and term.value.startswith(ns):
                local = term.value[len(ns):]
                return local.split(".", 1)[0]
            return None

        for q in quads:   # blank nodes (overrides, loose connections, shorts) hang off parts
            p = q.predicate.value
            if p == str(DK.hasOverride):
                owner, node = part_of(q.subject), q.object
            elif p in (str(DK.onPort), str(DK.between)):
                owner, node = part_of(q.object), q.subject
            else:
                continue
            if owner is not None:
                node_owner.setdefault(node, set()).add(owner)
        out: dict[ox.Quad, frozenset[str]] = {}
        for q in quads:
            own = part_of(q.subject)
            out[q] = frozenset({own}) if own is not None else frozenset(node_owner.get(q.subject, ()))
        return out

    # ------------------------------------------------------------------
    # actions
    # ------------------------------------------------------------------
    def execute(self, action: Action) -> Outcome:
        outcome = Outcome(self.round, Kind.ACTION, str(action), False, "", 0.0)
        generation, repaired, before = self.store.generation, len(self.repaired), self.state_key()
        self._repairing = frozenset()          # the parts this action repairs (set by _execute)
        spec = self.catalogue.get(action.action)
        # a repair of a part that did not differ from its description is a false removal
        broken = effects.still_broken(self, self.state()) if spec is not None and spec.repair else None
        try:
            self._execute(action, outcome)
            if broken is not None and outcome.success:
                outcome.healthy = tuple(sorted({t.split(".", 1)[0] for t in action.targets} - broken))
        finally:
            # an action that changed nothing and repaired nothing leaves the state as the
            # last reset made it: resetting again would give the same quads
            if self.store.generation != generation or len(self.repaired) != repaired or self.state_key() is not before:
                self._reset_to_snapshot(before, self._repairing)
        outcome.cost = float(sum(c for _, _, c in outcome.executed))
        return outcome

    def _execute(self, action: Action, out: Outcome) -> None:
        spec = self.catalogue.get(action.action)
        if spec is None:
            out.refuse(*unknown_action(action.action, self.catalogue))
            return
        if len(action.targets) != spec.target_count:
            out.refuse(Refusal.TARGET_COUNT, f"{spec.id} takes {spec.target_count} target(s), got {len(action.targets)}.")
            return
        for target in action.targets:
            kind = self.part_class(target)
            if kind is None:
                out.refuse(Refusal.UNKNOWN_PART, f"There is no {target!r} in this system.")
                return
            if target in self.scenario.removed:
                out.refuse(Refusal.REMOVED_PART, f"{target} is not present: it has been removed from this system.")
                return
            if spec.target_kind not in ("any", kind) and not (spec.target_kind == "component" and kind == "port"
                                                             and spec.id == "short_ports"):
                out.refuse(Refusal.TARGET_KIND, f"{spec.label} applies to {_a(spec.target_kind)}, and {target} is {_a(kind)}.")
                return
        first = action.targets[0].split(".", 1)[0]
        if spec.types and first in self.sk.components and self.sk.components[first].type not in spec.types:
            out.refuse(Refusal.COMPONENT_TYPE, f"{spec.label} applies to {', '.join(sorted(spec.types))}; "
                                               f"{first} is {_a(self.sk.components[first].type)}.")
            return
        missing_tools = spec.tools - self.tools
        if missing_tools:
            out.refuse(Refusal.MISSING_TOOL, f"{spec.label} needs a {', '.join(sorted(missing_tools))}, which is not at hand.")
            return
        if spec.parameter and action.value is None:
            out.refuse(Refusal.MISSING_VALUE, f"{spec.label} needs a value ({spec.parameter}).")
            return
        # get at the targets (automatic access), then check every affordance
        # the second target of move_led / test_control_subchain is a destination, not something handled
        handled = action.targets[:1] if spec.id in ("move_led",) else action.targets
        for target in handled:
            part = target.split(".", 1)[0]
            for needed in ("Observable", "Reachable"):
                if needed in spec.requires and not access.affords(self, part, needed):
                    effects.gain_access(self, part, needed, out)
            for needed in sorted(spec.requires):
                if not access.affords(self, part, needed):
                    out.refuse(Refusal.NOT_AFFORDED, f"Cannot {spec.label} {target}: it is not {needed.lower()} now.")
                    out.executed.append((spec.id, action.targets, 0.0))
                    return
        handler = OBSERVERS.get(spec.observes)
        if handler is None:
            raise ActionError(f"the catalogue says {spec.id} observes {spec.observes!r}, which no handler reads")
        if spec.template and not effects.apply_effect(self, spec, action, out):
            return
        out.executed.append((spec.id, action.targets, spec.cost))
        out.success = True
        result = self.simulate()
        effects.keep_damage(self, result)
        handler(self, action, result, out)
        if out.refusal is not None and not spec.template:      # the handler refused it: nothing done, nothing charged
            out.executed[-1] = (spec.id, action.targets, 0.0)
        if not out.message:
            out.message = f"Done: {spec.label} {' and '.join(action.targets)}."
        seen_while_held(self, spec, result, out)
        if spec.repair or spec.id in self.scenario.permanent:
            self._repairing = frozenset(t.split(".", 1)[0] for t in action.targets)
            self.repaired |= self._repairing


def _a(noun: str) -> str:
    """``noun`` with its article (an enclosure, an LED, a port)."""
    return f"{'an' if noun[:1].lower() in 'aeiou' or noun.startswith('LED') else 'a'} {noun}"


__all__ = ["Action", "Hypothesis", "Session", "make", "action_catalogue", "END_VALUES", "VERDICTS"]
