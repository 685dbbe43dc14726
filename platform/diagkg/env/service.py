"""The service agent and the diagnostic session (a Gymnasium-style API).

::

    import diagkg
    session = diagkg.make("3CC.S.1")            # or a number, e.g. diagkg.make(1)
    obs, info = session.reset(seed=0)
    obs, cost, terminated, truncated, info = session.step(diagkg.Action("measure_voltage", ("battery",)))
    obs, cost, terminated, truncated, info = session.step(diagkg.Hypothesis({"battery"}))

A session works on the store in use: the scenario, the system, its inferences
and the catalogues are read from it, into the session's working memory
(:func:`diagkg.workspace.workspace`, a private in-memory store). The
session's circuit state is a named graph of that working memory, never of the
store in use; the runner writes the store once, when it stores the
trajectory. The saboteur writes
the scenario's configuration and faults into it; every action's effect is the
SPARQL UPDATE template of its catalogue entry; preconditions are SPARQL ASK
templates. After each action the state is reset to the fault snapshot except
for the parts that were repaired for good (by a repair action, or by a
verified hypothesis). Costs are minutes of work (the action catalogue).
"""

from __future__ import annotations

import random
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pyoxigraph as ox

from ..errors import ActionError, SessionError
from ..kg import graphs
from ..kg.vocab import DK, DK_NS
from ..sim.circuit import CircuitState, PortRef, read_state
from ..sim.simulator import SimulationResult, Simulator
from .actions import Action, ActionType, Hypothesis, action_catalogue
from .observations import OBSERVERS, describe_visible
from .outcomes import Outcome, Refusal
from .scenarios import Scenario, configure, inject, restore, state_quads

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource, KnowledgeStore

END_VALUES = ("success", "success_no_hypothesis", "timeout", "surrender", "llm_truncation")
VERDICTS = ("correct", "partial", "wrong")

# Cost rules of hypothesis verification (minutes): the repair work it implies.
CABLE_PORT_COST = 10          # per cable end put back on its terminal (at least one per cable)
COMPONENT_REPAIR_COST = 120   # per component replaced
ENCLOSURE_MOVE_COST = 10      # per shielding enclosure moved
UNSPECIFIC_COST = 120         # naming a whole box instead of a part

# Arguments of the effect templates that depend on the action, not on its target.
EFFECT_ARGUMENTS: dict[str, dict[str, Any]] = {
    "open_switch": {"closed": False},
    "close_switch": {"closed": True},
    "open_opening": {"add": [str(DK.Open)], "remove": []},
    "close_opening": {"add": [], "remove": [str(DK.Open)]},
    "invert_enclosure": {"add": [str(DK.Inverted)], "remove": []},
    "restore_enclosure": {"add": [], "remove": [str(DK.Inverted), str(DK.Rotated)]},
    "rotate_enclosure": {"add": [str(DK.Rotated)], "remove": []},
    "cover_component": {"covered": True},
    "uncover_component": {"covered": False},
}


_SIMULATORS: "OrderedDict[tuple[str, str, str], Simulator]" = OrderedDict()
_SIMULATOR_LIMIT = 16


def simulator_for(store: KnowledgeSource, key: str) -> Simulator:
    """The simulator of system ``key`` as ``store`` describes it; built once per
    version of the system description and the ontology (any store, view or
    session working memory holding the same versions shares it)."""
    version = (key, store.version_of(graphs.system(key)), store.version_of(graphs.ONTOLOGY))
    sim = _SIMULATORS.get(version)
    if sim is None:
        sim = _SIMULATORS[version] = Simulator.from_store(store, key)
        while len(_SIMULATORS) > _SIMULATOR_LIMIT:
            _SIMULATORS.popitem(last=False)
    else:
        _SIMULATORS.move_to_end(version)
    return sim


def make(scenario: str | int | Scenario, store: KnowledgeStore | None = None, *,
         notify: Callable[[str], None] | None = None, **kw: Any) -> "Session":
    """A session on a scenario of ``store`` (number, identifier or :class:`Scenario`).

    ``store`` defaults to the on-disk store (``DIAGKG_STORE`` or the default
    path); a store that has never held the shipped catalogue gets it first.
    """
    from ..kg.store import KnowledgeStore
    from .workspace import resolve_scenario

    store = KnowledgeStore() if store is None else store
    return Session(resolve_scenario(store, scenario, notify), store, notify=notify, **kw)


class Session:
    """One diagnostic session: the saboteur's faults, the service agent, the budget."""

    def __init__(self, scenario: Scenario, store: KnowledgeStore, session_id: str | None = None,
                 tools: Iterable[str] = ("multimeter",), budget: int | None = None,
                 notify: Callable[[str], None] | None = None):
        from .workspace import workspace

        self.scenario = scenario
        self.source = store                                   # the store in use (read from, never written)
        self.store = workspace(store, scenario, notify)       # working memory: knowledge + circuit state
        self.id = session_id or uuid.uuid4().hex[:12]
        self.state_graph = graphs.named("state", self.id)
        self.system_graph = scenario.system_graph
        self.ns = graphs.namespace_of(scenario.system_iri)
        self.sim = simulator_for(self.store, scenario.key)
        self.sk = self.sim.skeleton
        self.catalogue = action_catalogue(self.store)
        self.tools = frozenset(t.lower() for t in tools)
        self.budget = budget if budget is not None else scenario.budget
        self._access_rows: dict[str, list[dict[str, Any]]] = {}
        self._started = False
        self._reset_fields()

    def _reset_fields(self) -> None:
        self.rng = random.Random(0)
        self.round = 0
        self.total_cost = 0.0
        self.end: str | None = None
        self.history: list[Outcome] = []
        self.repaired: set[str] = set()
        self.nominal_lit: tuple[str, ...] = ()
        self.nominal_bulbs: frozenset[str] = frozenset()
        self.main_bulbs: frozenset[str] = frozenset()
        self._snapshot: list[ox.Quad] = []
        self._short_count = 0

    # ------------------------------------------------------------------
    # Gymnasium-style API
    # ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """Inject the scenario; returns the first observation and info (as Gymnasium's
        ``reset``). ``seed`` drives loose connections (default 0); ``options`` is
        accepted for compatibility and must be empty."""
        if options:
            raise SessionError(f"reset() takes no options, got {', '.join(sorted(options))}")
        self._reset_fields()
        self._started = True
        self.seed = seed if seed is not None else 0
        self.rng = random.Random(self.seed)
        configure(self.store, self.scenario, self.state_graph)
        nominal = self.sim.simulate(self.state(), random.Random(self.seed))
        self.nominal_result = nominal
        self.nominal_lit = nominal.lit
        bulbs = {c for c in nominal.lit if self.sk.components[c].type == "Bulb"}
        self.nominal_bulbs = frozenset(bulbs)
        self.main_bulbs = frozenset(c for c in bulbs if not self.sk.components[c].params.get("isIndicator"))
        inject(self.store, self.scenario, self.state_graph)
        self._snapshot = state_quads(self.store, self.state_graph)
        result = self.initial_result = self.simulate()
        obs = {
            "scenario": self.scenario.number, "scenario_id": self.scenario.id,
            "system": self.scenario.key, "budget": self.budget,
            "symptoms": self.scenario.observations,
            "visible": describe_visible(result, self),
        }
        return obs, self._info(result=result)

    def step(self, act: Action | Hypothesis | None) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One round: execute an action, verify a hypothesis, or (None) give up."""
        if not self._started:
            raise SessionError("step() before reset(): call reset() first")
        if self.end is not None:
            raise SessionError(f"the session has ended ({self.end}); call reset()")
        if act is None:
            self.end = "surrender"
            outcome = Outcome(self.round, "none", "nothing", True, "The assistant had nothing more to suggest.", 0.0)
            self.history.append(outcome)
            return outcome.to_dict(), 0.0, True, False, self._info()
        self.round += 1
        if isinstance(act, Hypothesis):
            outcome = self.verify(act)
        else:
            outcome = self.execute(act)
        self.total_cost += outcome.cost
        self.history.append(outcome)
        terminated = False
        if outcome.verdict == "correct":
            self.end, terminated = "success", True
        elif outcome.kind == "action" and self.is_nominal():
            self.end, terminated = "success_no_hypothesis", True
            outcome.message += " The system works again."
        truncated = not terminated and self.round >= self.budget
        if truncated:
            self.end = "timeout"
        return outcome.to_dict(), outcome.cost, terminated, truncated, self._info()

    def abort(self, end: str) -> None:
        """End the session from outside (e.g. ``llm_truncation`` when a model's reply is unusable)."""
        if end not in END_VALUES:
            raise ValueError(f"unknown end value {end!r}")
        self.end = end

    def _info(self, result: SimulationResult | None = None) -> dict[str, Any]:
        info = {"end": self.end, "round": self.round, "budget": self.budget, "total_cost": self.total_cost,
                "repaired": sorted(self.repaired)}
        if result is not None:
            info["lit"] = list(result.lit)
            info["nominal_lit"] = list(self.nominal_lit)
        return info

    # ------------------------------------------------------------------
    # state
    # ------------------------------------------------------------------
    def state(self) -> CircuitState:
        return read_state(self.store, self.state_graph, self.sk)

    def simulate(self, state: CircuitState | None = None) -> SimulationResult:
        return self.sim.simulate(state or self.state(), self.rng)

    def is_nominal(self, state: CircuitState | None = None) -> bool:
        """Converged, no loose connection left, and every bulb lit in the nominal state is lit."""
        state = state or self.state()
        if state.loose:
            return False
        result = self.simulate(state)
        return result.converged and self.nominal_bulbs <= set(result.lit)

    def _iri(self, part: str) -> str:
        return self.ns + part

    def _part_class(self, part: str) -> str | None:
        if part in self.sk.components:
            return "component"
        if "." in part and part.split(".", 1)[0] in self.sk.components:
            cid, port = part.split(".", 1)
            return "port" if port in self.sk.components[cid].ports else None
        if part in self._parts():
            return self._parts()[part]
        return None

    def _parts(self) -> dict[str, str]:
        if not hasattr(self, "_part_kinds"):
            kinds = {}
            self._parent = {}
            for r in self.store.select("system-parts", {"system": ox.NamedNode(self.sk.iri)}):
                if r["parent"]:
                    self._parent[r["id"]] = r["parent"]
                cls = (r["class"] or "")[len(DK_NS):]
                kind = {"Enclosure": "enclosure", "InspectionPanel": "opening", "Peephole": "opening",
                        "Module": "module"}.get(cls)
                if kind and r["id"] not in kinds:
                    kinds[r["id"]] = kind
            self._part_kinds = kinds
        return self._part_kinds

    def affords(self, part: str, affordance: str) -> bool:
        """ASK (SPARQL template) whether a part affords something in the current state."""
        return bool(self.store.query("precondition-affords", part=self._iri(part),
                                     affordance=str(getattr(DK, affordance)),
                                     system=self.system_graph, state=self.state_graph))

    def _reset_to_snapshot(self) -> None:
        """Back to the fault snapshot, keeping the current state of repaired parts."""
        current = state_quads(self.store, self.state_graph)
        owners_now = self._owners(current)
        owners_then = self._owners(self._snapshot)
        kept = [q for q in self._snapshot if owners_then.get(q) not in self.repaired]
        kept += [q for q in current if owners_now.get(q) in self.repaired]
        restore(self.store, self.state_graph, kept)

    def _owners(self, quads: list[ox.Quad]) -> dict[ox.Quad, str | None]:
        """Which part each state triple is about (a port's triples belong to its component)."""
        ns = self.ns
        node_owner: dict[Any, str | None] = {}

        def part_of(term: object) -> str | None:
            if isinstance(term, ox.NamedNode) and term.value.startswith(ns):
                local = term.value[len(ns):]
                return local.split(".", 1)[0]
            return None

        for q in quads:   # blank nodes (overrides, loose connections, shorts) hang off a part
            p = q.predicate.value
            if p == str(DK.hasOverride):
                node_owner[q.object] = part_of(q.subject)
            elif p in (str(DK.onPort), str(DK.between)) and q.subject not in node_owner:
                node_owner[q.subject] = part_of(q.object)
        return {q: part_of(q.subject) or node_owner.get(q.subject) for q in quads}

    # ------------------------------------------------------------------
    # actions
    # ------------------------------------------------------------------
    def execute(self, action: Action) -> Outcome:
        outcome = Outcome(self.round, "action", str(action), False, "", 0.0)
        try:
            self._execute(action, outcome)
        finally:
            self._reset_to_snapshot()
        outcome.cost = sum(c for _, _, c in outcome.executed)
        return outcome

    def _execute(self, action: Action, out: Outcome) -> None:
        spec = self.catalogue.get(action.action)
        if spec is None:
            out.refuse(Refusal.UNKNOWN_ACTION, f"Unknown action {action.action!r}. Known actions: "
                                               f"{', '.join(sorted(self.catalogue))}.")
            return
        if len(action.targets) != spec.target_count:
            out.refuse(Refusal.TARGET_COUNT, f"{spec.id} takes {spec.target_count} target(s), got {len(action.targets)}.")
            return
        for target in action.targets:
            kind = self._part_class(target)
            if kind is None:
                out.refuse(Refusal.UNKNOWN_PART, f"There is no {target!r} in this system.")
                return
            if target in self.scenario.removed:
                out.refuse(Refusal.REMOVED_PART, f"{target} is not present: it has been removed from this system.")
                return
            if spec.target_kind not in ("any", kind) and not (spec.target_kind == "component" and kind == "port"
                                                             and spec.id == "short_ports"):
                out.refuse(Refusal.TARGET_KIND, f"{spec.label} applies to a {spec.target_kind}, and {target} is a {kind}.")
                return
        first = action.targets[0].split(".", 1)[0]
        if spec.types and first in self.sk.components and self.sk.components[first].type not in spec.types:
            out.refuse(Refusal.COMPONENT_TYPE, f"{spec.label} applies to {', '.join(sorted(spec.types))}; "
                                               f"{first} is a {self.sk.components[first].type}.")
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
                if needed in spec.requires and not self.affords(part, needed):
                    self._gain_access(part, needed, out)
            for needed in sorted(spec.requires):
                if not self.affords(part, needed):
                    out.refuse(Refusal.NOT_AFFORDED, f"Cannot {spec.label} {target}: it is not {needed.lower()} now.")
                    out.executed.append((spec.id, action.targets, 0.0))
                    return
        handler = OBSERVERS.get(spec.observes)
        if handler is None:
            raise ActionError(f"the catalogue says {spec.id} observes {spec.observes!r}, which no handler reads")
        if spec.template:
            if not self._apply_effect(spec, action, out):
                return
        out.executed.append((spec.id, action.targets, spec.cost))
        out.success = True
        result = self.simulate()
        handler(self, action, result, out)
        if not out.message:
            out.message = f"Done: {spec.label} {' and '.join(action.targets)}."
        if spec.repair or spec.id in self.scenario.permanent:
            self.repaired.update(t.split(".", 1)[0] for t in action.targets)

    def _access(self, iri: str) -> list[dict[str, Any]]:
        """The enclosure holding a part or port and its openings (part-access.rq, read once per part)."""
        rows = self._access_rows.get(iri)
        if rows is None:
            rows = self._access_rows[iri] = self.store.select("part-access", {"part": ox.NamedNode(iri)})
        return rows

    def _gain_access(self, part: str, needed: str, out: Outcome) -> None:
        """Open a panel or peephole of the part's enclosure, else turn the enclosure over."""
        rows = self._access(self._iri(part))
        if not rows:
            return
        enclosure = rows[0]["enclosureId"]
        openings = sorted({(r["openingKind"], r["openingId"]) for r in rows if r["openingId"]})
        # a panel gives reach and sight, a peephole only sight
        for kind, opening in sorted(openings, key=lambda o: o[0] != "InspectionPanel"):
            if needed == "Reachable" and kind == "Peephole":
                continue
            self._auto("open_opening", opening, out)
            if self.affords(part, needed):
                return
        self._auto("invert_enclosure", enclosure, out)

    def _auto(self, action_id: str, target: str, out: Outcome) -> None:
        spec = self.catalogue[action_id]
        self._apply_effect(spec, Action(action_id, (target,)), out)
        out.executed.append((action_id, (target,), spec.cost))

    def _apply_effect(self, spec: ActionType, action: Action, out: Outcome) -> bool:
        args: dict[str, Any] = {"state": self.state_graph, "system": self.system_graph,
                                "target": self._iri(action.targets[0])}
        args.update(EFFECT_ARGUMENTS.get(spec.id, {}))
        if spec.id == "reverse_battery" and self.sk.components[action.targets[0]].type != "VoltageSource":
            out.refuse(Refusal.COMPONENT_TYPE, f"{action.targets[0]} is not a battery.")
            return False
        if spec.id == "adjust_potentiometer":
            if action.value is None or not 0.0 <= action.value <= 1.0:
                out.refuse(Refusal.MISSING_VALUE, "A potentiometer's position is between 0 and 1.")
                return False
            args["value"] = float(action.value)
        if spec.id == "swap_cables":
            a, b = self._swap_ends(*action.targets)
            args.update(target=self._iri(a), other=self._iri(b))
        assert spec.template is not None      # only actions with an effect template get here
        if spec.id == "move_led":
            moves = self._led_moves(action.targets[0], action.targets[1], out)
            if moves is None:
                return False
            for port, onto in moves:
                self.store.update(spec.template, state=self.state_graph, target=self._iri(port), other=self._iri(onto))
            out.data["moves"] = [{"end": end, "onto": onto} for end, onto in moves]
            return True
        if spec.id == "short_ports":
            pa, pb = (self.port_of(t) for t in action.targets)
            self._short_count += 1
            args.update(target=self._iri(f"{pa[0]}.{pa[1]}"), other=self._iri(f"{pb[0]}.{pb[1]}"),
                        value=0.01, short=f"{self.state_graph.value}#bridge-{self._short_count}")
        self.store.update(spec.template, **args)
        return True

    # -- LED slots and control chains -------------------------------------
    def module_of(self, part: str) -> str | None:
        """The module a component, enclosure or opening belongs to."""
        self._parts()
        if part in self.sk.components:
            return self.sk.components[part].module
        seen: str | None = part
        while seen is not None and self._parts().get(seen) != "module":
            seen = self._parent.get(seen)
        return seen

    def _led_and_resistor(self, module: str) -> tuple[str, str] | None:
        """A module's indicator LED and the resistor in series with it (from the wiring)."""
        net = self.sk.net_of_port
        for cid in sorted(self.sk.components):
            comp = self.sk.components[cid]
            if comp.type != "LED" or comp.module != module:
                continue
            anode = net[(cid, "anode")]
            for rid in sorted(self.sk.components):
                r = self.sk.components[rid]
                if r.type == "Resistor" and r.module == module and any(net[(rid, p)] == anode for p in r.ports):
                    return cid, rid
        return None

    def _led_slot(self, module: str) -> tuple[str, str, str, str] | None:
        """(LED, resistor, resistor's far end, LED cathode) of a module's LED slot."""
        pair = self._led_and_resistor(module)
        if pair is None:
            return None
        led, res = pair
        net = self.sk.net_of_port
        far = next(p for p in sorted(self.sk.components[res].ports) if net[(res, p)] != net[(led, "anode")])
        return led, res, f"{res}.{far}", f"{led}.cathode"

    def _led_moves(self, led: str, destination: str, out: Outcome) -> list[tuple[str, str]] | None:
        if led not in self.sk.components or self.sk.components[led].type != "LED":
            out.refuse(Refusal.COMPONENT_TYPE, f"{led} is not an LED.")
            return None
        source, target = self.module_of(led), self.module_of(destination)
        here, there = (self._led_slot(m) if m else None for m in (source, target))
        if here is None or there is None or source == target:
            out.refuse(Refusal.NO_EFFECT, f"There is no other LED slot in {destination} to move {led} to.")
            return None
        moves = [(here[2], there[2]), (here[3], there[3])]
        if there[0] not in self.scenario.removed:       # an LED already sits there: swap them
            moves += [(there[2], here[2]), (there[3], here[3])]
        out.data["slot"] = {"led": led, "module": target, "displaced": there[0]
                            if there[0] not in self.scenario.removed else None}
        return moves

    def chain_ends(self, module: str, nearest: bool) -> list[PortRef]:
        """The two outer cable ends of a module nearest to (or farthest from) the supply,
        as (+ line, - line) by their nominal voltage."""
        distance = self._distances()
        ends = []
        for cid in sorted(self.sk.components):
            comp = self.sk.components[cid]
            if comp.module != module or comp.type != "Cable":
                continue
            for port, iri in comp.ports.items():
                if not self._inside(iri):
                    ends.append((cid, port))
        if len(ends) < 2:
            return []
        volts = self.nominal_result.components
        ends.sort(key=lambda e: -(volts[e[0]].port_v.get(e[1]) or 0.0) if e[0] in volts else 0.0)
        half = len(ends) // 2
        pick = min if nearest else max
        key = lambda e: distance.get(self.sk.net_of_port[e], 10**6)   # noqa: E731
        return [pick(ends[:half], key=key), pick(ends[half:], key=key)]

    def _inside(self, port_iri: str) -> bool:
        return any(r["part"] == port_iri for r in self._access(port_iri))

    def _distances(self) -> dict[int, int]:
        """Breadth-first distance of every electrical node from the supply's nodes."""
        from collections import deque

        sk = self.sk
        by_net: dict[int, set[str]] = {}
        for (cid, _), net in sk.net_of_port.items():
            by_net.setdefault(net, set()).add(cid)
        sources = {sk.net_of_port[(cid, p)] for cid, c in sk.components.items() if c.type == "VoltageSource"
                   for p in c.ports}
        dist = {n: 0 for n in sources}
        queue = deque(sources)
        while queue:
            net = queue.popleft()
            for cid in by_net.get(net, ()):
                for p in sk.components[cid].ports:
                    other = sk.net_of_port[(cid, p)]
                    if other not in dist:
                        dist[other] = dist[net] + 1
                        queue.append(other)
        return dist

    def port_of(self, target: str) -> PortRef:
        if "." in target:
            cid, port = target.split(".", 1)
            return cid, port
        comp = self.sk.components[target]
        return target, self.sim._positive[target] if target in self.sim._positive else min(comp.ports)

    def _swap_ends(self, a: str, b: str) -> tuple[str, str]:
        """The ends of two cables to exchange: the rewired ones, else their p ends."""
        state = self.state()
        rewired = dict(state.rewired)
        ends = []
        for cable in (a, b):
            moved = [f"{cid}.{port}" for (cid, port) in rewired if cid == cable]
            ends.append(moved[0] if moved else f"{cable}.p")
        return ends[0], ends[1]

    # ------------------------------------------------------------------
    # observations (what a person would see or measure; never the fault itself)
    # ------------------------------------------------------------------
    def visible_ends(self, cid: str, state: CircuitState) -> list[str]:
        out = []
        for port, iri in sorted(self.sk.components[cid].ports.items()):
            inside = [r for r in self._access(iri) if r["part"] == iri]
            if not inside:
                out.append(port)
                continue
            enclosure = inside[0]["enclosureId"]
            opened = any((r["openingId"], "Open") in state.physical for r in inside if r["openingId"])
            if (enclosure, "Inverted") in state.physical or opened:
                out.append(port)
        return out

    # ------------------------------------------------------------------
    # hypotheses
    # ------------------------------------------------------------------
    def verify(self, hypothesis: Hypothesis) -> Outcome:
        out = Outcome(self.round, "hypothesis", str(hypothesis), False, "", 0.0)
        unknown = sorted(c for c in hypothesis.components if self._part_class(c) is None)
        candidates = sorted(c.split(".", 1)[0] for c in hypothesis.components
                            if self._part_class(c) is not None and c not in self.scenario.removed)
        candidates = sorted(set(candidates))
        shielding = {el for c in self.sk.couplings for el, _ in c.blocked_when}
        enclosures = [c for c in candidates if self._parts().get(c) in ("enclosure", "module", "opening")]
        if not candidates:
            out.verdict, out.message = "wrong", (
                "The hypothesis names nothing that is in this system" + (f" ({', '.join(unknown)})" if unknown else "") + ".")
            out.executed.append(("verify_repair", tuple(sorted(hypothesis.components)), 0.0))
            return out
        vague = [c for c in enclosures if c not in shielding]
        if vague:
            out.verdict = "wrong"
            out.cost = UNSPECIFIC_COST
            out.executed.append(("verify_repair", tuple(candidates), UNSPECIFIC_COST))
            out.message = (f"{', '.join(vague)} is a whole box or module, not a part that can be repaired: "
                           "name the specific components you suspect.")
            return out
        state = self.state()
        broken = self.still_broken(state)
        actually = sorted(set(candidates) & broken)
        cost = sum(self._repair_cost(c, state) for c in candidates)
        trial = self._repaired_state(candidates)
        works = self._main_function_works(trial)
        verdict = "correct" if works else ("partial" if actually else "wrong")
        out.verdict = verdict
        out.cost = cost
        out.executed.append(("verify_repair", tuple(candidates), cost))
        out.success = verdict == "correct"
        if verdict in ("correct", "partial"):
            fixed = actually + ([c for c in candidates if c in shielding] if works else [])
            for part in fixed:
                self._make_repair(part)
            self.repaired.update(fixed)
        texts = {
            "correct": "Repairing " + ", ".join(candidates) + " makes the system work again: the hypothesis is correct.",
            "partial": "Among " + ", ".join(candidates) + f", {', '.join(actually)} was indeed faulty and has been "
                       "repaired, but the system still does not work: something else is wrong too.",
            "wrong": "Repairing " + ", ".join(candidates) + " changes nothing: none of them was faulty.",
        }
        out.message = texts[verdict] + (f" (Unknown names ignored: {', '.join(unknown)}.)" if unknown else "")
        out.data = {"candidates": candidates, "actually_faulty": actually, "verdict": verdict}
        return out

    def still_broken(self, state: CircuitState) -> set[str]:
        """Parts that differ from their nominal description in this state."""
        broken = {c for c, _, _ in state.overrides} | {c for c, _ in state.forced} | set(state.blown)
        broken |= {c for c, _ in state.detached} | {c for (c, _), _ in state.rewired}
        broken |= {c for (c, _), _ in state.loose}
        broken |= {p[0] for a, b, _ in state.shorts for p in (a, b)}
        active = dict(state.couplings)
        for c in self.sk.couplings:
            if active.get(c.id, c.active_by_default) and not c.active_by_default:
                if not any(pair in state.physical for pair in c.blocked_when):
                    broken |= {el for el, _ in c.blocked_when}
        return broken - set(state.removed)

    def _repair_cost(self, part: str, state: CircuitState) -> float:
        kind = self._parts().get(part)
        if kind in ("enclosure", "module", "opening"):
            return ENCLOSURE_MOVE_COST
        comp = self.sk.components[part]
        if comp.type == "Cable":
            ends = {p for c, p in state.detached if c == part} | {p for (c, p), _ in state.rewired if c == part}
            ends |= {p for (c, p), _ in state.loose if c == part}
            return CABLE_PORT_COST * max(1, len(ends))
        return COMPONENT_REPAIR_COST

    def _repaired_state(self, parts: Iterable[str]) -> CircuitState:
        """The current state with these parts repaired, tried on a copy of the state graph
        with the same repair templates as a real repair (nothing of it is kept)."""
        trial = graphs.named("state", f"{self.id}-trial")
        quads = state_quads(self.store, self.state_graph)
        restore(self.store, trial, [ox.Quad(q.subject, q.predicate, q.object, trial) for q in quads])
        try:
            for part in parts:
                self._make_repair(part, trial)
            return read_state(self.store, trial, self.sk)
        finally:
            self.store.raw.remove_graph(trial)

    def _main_function_works(self, state: CircuitState) -> bool:
        """The test_repair check: main lamps lit, settled, no loose end, and no bypass."""
        if state.loose or not self.main_bulbs:
            return False
        result = self.sim.simulate(state, self.rng)
        if not (result.converged and self.main_bulbs <= set(result.lit)):
            return False
        # bypass guard: opening the first closed hand switch must put a main lamp out
        driven = {c.drives for c in self.sk.couplings if c.kind == "SwitchingCoupling"}
        for cid in sorted(self.sk.components):
            comp = self.sk.components[cid]
            if comp.type != "Switch" or cid in driven or cid in state.removed:
                continue
            if not result.live.get(f"closed:{cid}", False):
                continue
            opened = state.evolve(positions=[p for p in state.positions if p[0] != cid] + [(cid, False)])
            if dict(opened.forced).get(cid) is True:
                continue
            check = self.sim.simulate(opened, self.rng)
            if self.main_bulbs <= set(check.lit):
                return False
            break
        return True

    def _make_repair(self, part: str, graph: ox.NamedNode | None = None) -> None:
        """Repair a part for good in ``graph`` (the session's state by default): a
        shielding enclosure is moved, a component is made as new."""
        graph = graph or self.state_graph
        if self._parts().get(part) == "enclosure":
            self.store.update("effect-physical-state", state=graph, target=self._iri(part),
                              add=[str(DK.Rotated)], remove=[])
        else:
            self.store.update("effect-repair-component", state=graph, system=self.system_graph,
                              target=self._iri(part))


# ---------------------------------------------------------------------------
# observation helpers
# ---------------------------------------------------------------------------


__all__ = ["Action", "Hypothesis", "Session", "make", "action_catalogue", "END_VALUES", "VERDICTS"]
