"""The worlds the optimal policy is worked out over (:mod:`diagkg.evaluation.optimum`).

A *world* is one scenario standing in one state: the circuit state graph's
content, the parts repaired for good and the shorts made so far. Each scenario
has a what-if :class:`~diagkg.env.worlds.Shadow` of its own (the real session
machinery: observations, automatic access, verdicts and costs are exactly what a
real session gives); a move is tried in a world by rolling the shadow back to the
world and stepping it, and what it gives is remembered by (world, way, move).

A scenario with loose connections (intermittent faults) answers each step in one
of several *ways*: each loose connection is off during the step with the
probability its catalogue entry declares, on otherwise (every draw of one step
falls the same way, as :class:`Pattern` says); a scenario without one has a
single way.

The *moves* are the catalogue's actions on the parts they apply to (one-target
actions on every part of their kind and type; two-target actions on the pairs
listed in :meth:`Worlds.base_moves`) and hypotheses (:meth:`Worlds.namings`).
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence, Union

from ..agents.optimal import outcome_key
from ..env.actions import Action, Hypothesis
from ..env.effects import is_bridge, still_broken
from ..env.observations import describe_visible
from ..env.scenarios import Scenario
from ..env.service import Checkpoint, Session
from ..env.verification import injected_parts
from ..env.worlds import Shadow
from ..errors import ActionError, SessionError, SimulationError

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

Move = Union[Action, Hypothesis]
SOLVED = ("success", "success_no_hypothesis")      # the ends that count as success (the oracle's rule)
POSITIONS = (0.0, 1.0)                             # the values a move of a parameter is tried with
MAX_NAMING_SPAN = 3                                # parts between R(w) and H(w) whose subsets are named
BOUND_WORLDS = 64                                  # states the perfect-information bound expands at most
INF = float("inf")


class Pattern(random.Random):
    """The draws of one step of a world with loose connections: the i-th draw is ``values[i mod k]``
    (0.0 opens a loose connection, 1.0 keeps it on), so each of the ``k`` loose connections, drawn in
    the state's order, falls the way the pattern says in every simulation of the step."""

    def __init__(self, values: Sequence[float]):
        super().__init__(0)
        self.values = tuple(values)
        self.drawn = 0

    def random(self) -> float:
        value = self.values[self.drawn % len(self.values)]
        self.drawn += 1
        return value


@dataclass(frozen=True)
class Step:
    """What one move gave in one world, one way: the report (interned), its minutes, whether the session
    ended in success, and the world it left (-1 when the move could not be taken there)."""

    report: int
    cost: float
    solved: bool
    world: int


@dataclass(frozen=True)
class Start:
    """What a session shows at its start (the lights seen, the lights the report states, the parts fitted,
    the budget), one class of the prior: the worlds (with their probability, of the whole prior) that show
    it."""

    visible: str
    removed: frozenset[str]
    budget: int
    worlds: tuple[tuple[int, float], ...]
    # the report's lights as data (the scenarios' dk:statedSymptom: part, "Lit" | "Dark" | "Flickering"), which
    # every assistant is told at the start (Briefing.stated): a policy that did not condition on them would be
    # less informed than the assistants it is the anchor of
    stated: frozenset[tuple[str, str]] = frozenset()


class Worlds:
    """Shadow sessions of a system's scenarios, the moves, and what each move gives in each world."""

    def __init__(self, store: KnowledgeStore, scenarios: Sequence[Scenario], seed: int = 0,
                 actions: Sequence[str] | None = None):
        if not scenarios:
            raise ValueError("no scenario to work the optimum out over")
        self.scenarios = list(scenarios)
        self.seed = seed
        self.sessions: list[Session] = []
        self.roots: list[Checkpoint] = []
        self.ways: list[tuple[tuple[tuple[float, ...] | None, float], ...]] = []
        self._worlds: dict[tuple[int, Any, frozenset[str], int], int] = {}
        self.world_keys: list[tuple[int, frozenset[Any], frozenset[str], int]] = []
        self._points: dict[int, Checkpoint] = {}
        self._circuits: list[Any] = []          # each world's circuit state
        self._inert: dict[int, frozenset[str]] = {}
        self._reports: dict[str, int] = {}
        self.report_texts: list[str] = []
        self.moves: list[Move] = []
        self._move_ids: dict[Move, int] = {}
        self._steps: dict[tuple[int, int, int], Step] = {}
        self._namings: dict[int, tuple[int, ...]] = {}
        self._broken: dict[int, frozenset[str]] = {}
        self._bounds: dict[int, tuple[float, int]] = {}
        self._first_moves: dict[int, int] = {}
        self.steps_taken = 0
        for scenario in self.scenarios:
            session = Shadow(scenario, store)
            session.reset(seed=seed)
            self.sessions.append(session)
            self.roots.append(session.checkpoint())
            loose = session.state().loose
            if not loose:
                self.ways.append(((None, 1.0),))
                continue
            ways = []
            for bits in itertools.product((True, False), repeat=len(loose)):
                p = 1.0
                for off, (_, chance) in zip(bits, loose, strict=True):
                    p *= chance if off else 1.0 - chance
                if p > 0:
                    ways.append((tuple(0.0 if off else 1.0 for off in bits), p))
            self.ways.append(tuple(ways))
        first = self.sessions[0]
        self.catalogue = first.catalogue
        self.allowed = set(actions) if actions is not None else set(self.catalogue)
        unknown = sorted(self.allowed - set(self.catalogue))
        if unknown:
            raise ActionError(f"no action {', '.join(map(repr, unknown))} in the catalogue")
        self.base = [self.intern_move(m) for m in self.base_moves()]

    # -- moves ---------------------------------------------------------------
    def close(self) -> None:
        """Release the shadow sessions' working memories (the search is over)."""
        for session in self.sessions:
            session.close()

    def intern_move(self, move: Move) -> int:
        known = self._move_ids.get(move)
        if known is None:
            known = self._move_ids[move] = len(self.moves)
            self.moves.append(move)
        return known

    def base_moves(self) -> list[Action]:
        """The catalogue's actions on their targets: a one-target action on every component of its
        kind and type (and every enclosure, opening or module for those kinds), a parameter at each of
        :data:`POSITIONS`; two-target actions on the pairs a person would try: two cables of one module
        (``swap_cables``), an LED and another module (``move_led``), two enclosures (``test_control_subchain``,
        both orders), the two ends of one component (``test_path_continuity``, ``short_ports``)."""
        session = self.sessions[0]
        sk = session.sk
        components = sorted(sk.components)
        kinds = session.parts()
        by_kind: dict[str, list[str]] = {}
        for part, kind in sorted(kinds.items()):
            by_kind.setdefault(kind, []).append(part)
        out: list[Action] = []
        for aid in sorted(self.allowed):
            spec = self.catalogue[aid]
            fits = [c for c in components if not spec.types or sk.components[c].type in spec.types]
            if spec.target_count == 1:
                if spec.target_kind == "component":
                    targets = fits
                elif spec.target_kind == "any":
                    targets = fits + (by_kind.get("enclosure", []) + by_kind.get("opening", []) if not spec.types else [])
                else:
                    targets = by_kind.get(spec.target_kind, [])
                values: tuple[float | None, ...] = POSITIONS if spec.parameter else (None,)
                out += [Action(aid, (t,), v) for t in targets for v in values]
            elif aid == "swap_cables":
                cables = [c for c in fits if sk.components[c].type == "Cable"]
                out += [Action(aid, (a, b)) for a, b in itertools.combinations(cables, 2)
                        if sk.components[a].module == sk.components[b].module]
            elif aid == "move_led":
                out += [Action(aid, (led, m)) for led in fits for m in by_kind.get("module", [])
                        if m != sk.components[led].module]
            elif spec.target_kind == "enclosure":
                boxes = by_kind.get("enclosure", [])
                out += [Action(aid, (a, b)) for a in boxes for b in boxes]
            else:
                for c in fits:
                    ports = sorted(sk.components[c].ports)
                    if len(ports) == 2:
                        ends = (c, c) if aid == "test_path_continuity" else (f"{c}.{ports[0]}", f"{c}.{ports[1]}")
                        out.append(Action(aid, ends))
        return out

    def is_repair(self, move: int) -> bool:
        m = self.moves[move]
        return isinstance(m, Hypothesis) or self.catalogue[m.action].repair

    def changes_state(self, move: int) -> bool:
        """Whether the move may leave the world in another state (an effect or a repair; an
        observation reads the state and changes nothing)."""
        m = self.moves[move]
        return isinstance(m, Hypothesis) or bool(self.catalogue[m.action].template) or self.catalogue[m.action].repair

    def targets(self, move: int) -> frozenset[str]:
        m = self.moves[move]
        parts = m.components if isinstance(m, Hypothesis) else frozenset(m.targets)
        return frozenset(p.split(".", 1)[0] for p in parts)

    # -- worlds --------------------------------------------------------------
    def world(self, scenario: int, state: frozenset[Any], repaired: frozenset[str], shorts: int) -> int:
        """The world of ``scenario`` standing in the state graph content ``state``. Worlds are told apart
        by the circuit state it says (canonical: the same overrides written with other blank nodes are
        the same state), the parts repaired for good and, while a test's bridge is still in the state (a
        scenario that makes bridging a repair keeps it), the count of bridges made (which only names the
        next bridge's node)."""
        session = self.sessions[scenario]
        session.set_state(state)
        circuit = session.state()
        bridged = shorts if any(is_bridge(session, q.subject) for q in state) else 0
        key = (scenario, circuit, repaired, bridged)
        known = self._worlds.get(key)
        if known is None:
            known = self._worlds[key] = len(self.world_keys)
            self.world_keys.append((scenario, state, repaired, shorts))
            self._circuits.append(circuit)
        return known

    def root_world(self, scenario: int) -> int:
        point = self.roots[scenario]
        return self.world(scenario, point.state, point.repaired, point.short_count)

    def scenario_of(self, world: int) -> int:
        return self.world_keys[world][0]

    def budget_of(self, world: int) -> int:
        return self.scenarios[self.world_keys[world][0]].budget

    def point(self, world: int) -> Checkpoint:
        known = self._points.get(world)
        if known is None:
            scenario, state, repaired, shorts = self.world_keys[world]
            known = self._points[world] = dataclasses.replace(self.roots[scenario], state=state, repaired=repaired,
                                                              short_count=shorts)
        return known

    def starts(self) -> list[Start]:
        """The classes of the prior by what a session shows at its start: every scenario weighs
        the same, each way its loose connections may fall by its probability."""
        classes: dict[tuple[str, frozenset[str], int, frozenset[tuple[str, str]]], list[tuple[int, float]]] = {}
        share = 1.0 / len(self.scenarios)
        for n, scenario in enumerate(self.scenarios):
            session, world = self.sessions[n], self.root_world(n)
            for values, p in self.ways[n]:
                session.rollback(self.roots[n])
                session.rng = Pattern(values) if values is not None else random.Random(self.seed)
                visible = describe_visible(session.simulate(), session)
                # the report's lights as a session's briefing holds them (Briefing.stated: one look a part)
                key = (visible, scenario.removed, scenario.budget, frozenset(dict(scenario.symptoms).items()))
                classes.setdefault(key, []).append((world, share * p))
        out = []
        for (visible, removed, budget, stated), members in sorted(
                classes.items(), key=lambda kv: (kv[0][0], sorted(kv[0][1]), kv[0][2], sorted(kv[0][3]))):
            merged: dict[int, float] = {}
            for w, p in members:
                merged[w] = merged.get(w, 0.0) + p
            out.append(Start(visible, removed, budget, tuple(sorted(merged.items())), stated))
        return out

    def broken(self, world: int) -> frozenset[str]:
        """The parts that differ from their description in the world (what a diagnosis may name)."""
        known = self._broken.get(world)
        if known is None:
            session = self.sessions[self.scenario_of(world)]
            session.rollback(self.point(world))
            known = self._broken[world] = frozenset(still_broken(session, session.state()))
        return known

    def namings(self, world: int) -> tuple[int, ...]:
        """The hypotheses tried in a world: every set of its faulty parts, H, while H has at most
        :data:`MAX_NAMING_SPAN` + 1 (a short between two parts is cleared by naming either end, so a correct
        diagnosis need not name every part with an injected fault); beyond, every set between the parts with an
        injected fault still there, R, and H (each subset of H − R added to R while H − R has at most
        :data:`MAX_NAMING_SPAN` parts; else R and H), and each faulty part alone."""
        known = self._namings.get(world)
        if known is None:
            session = self.sessions[self.scenario_of(world)]
            broken = self.broken(world)
            required = frozenset(injected_parts(session)) & broken
            extra = sorted(broken - required)
            sets: set[frozenset[str]] = {frozenset({p}) for p in broken}
            if len(broken) <= MAX_NAMING_SPAN + 1:
                # every set of the faulty parts: a short between two parts belongs to both, and either end's
                # repair clears it, so a diagnosis need not name both ends (nor every injected part)
                for k in range(2, len(broken) + 1):
                    sets.update(frozenset(c) for c in itertools.combinations(sorted(broken), k))
            elif len(extra) <= MAX_NAMING_SPAN:
                for k in range(len(extra) + 1):
                    sets.update(required | set(c) for c in itertools.combinations(extra, k))
            else:
                sets.update((required, broken))
            known = self._namings[world] = tuple(sorted(self.intern_move(Hypothesis(s)) for s in sets if s))
        return known

    # -- steps ---------------------------------------------------------------
    def step(self, world: int, way: int, move: int) -> Step:
        """What ``move`` gives in ``world`` when its loose connections fall as way ``way`` says.

        A part repaired for good that stands as it stood at the start (a healthy part replaced) changes a
        step only if the step acts on it (the round's reset then keeps what the step did to it): for a move
        on other parts, the step is the one taken in the world without it, and it stays repaired after."""
        key = (world, way, move)
        known = self._steps.get(key)
        if known is None:
            strip = self.inert(world) - self.targets(move)
            if strip:
                scenario, state, repaired, shorts = self.world_keys[world]
                base = self.step(self.world(scenario, state, repaired - strip, shorts), way, move)
                if base.world >= 0:
                    scenario, state, repaired, shorts = self.world_keys[base.world]
                    base = dataclasses.replace(base, world=self.world(scenario, state, repaired | strip, shorts))
                known = base
            else:
                known = self._take(world, way, move)
            self._steps[key] = known
        return known

    def inert(self, world: int) -> frozenset[str]:
        """The parts repaired for good in ``world`` that stand as they stood at the start."""
        known = self._inert.get(world)
        if known is None:
            scenario, _, repaired, _ = self.world_keys[world]
            if not repaired:
                known = frozenset()
            else:
                now = self.circuit(world)
                start = self.circuit(self.root_world(scenario))
                known = frozenset(p for p in repaired if _mentions(now, p) == _mentions(start, p))
            self._inert[world] = known
        return known

    def circuit(self, world: int) -> Any:
        """The circuit state of ``world`` (canonical: :class:`~diagkg.sim.circuit.CircuitState`)."""
        return self._circuits[world]

    def _take(self, world: int, way: int, move: int) -> Step:
        scenario = self.scenario_of(world)
        session = self.sessions[scenario]
        session.rollback(self.point(world))
        values = self.ways[scenario][way][0]
        session.rng = Pattern(values) if values is not None else random.Random(self.seed)
        self.steps_taken += 1
        try:
            out, cost, *_ = session.step(self.moves[move])
        except (SessionError, SimulationError, ActionError):
            return Step(-1, 0.0, False, -1)
        text = outcome_key(out)
        report = self._reports.get(text)
        if report is None:
            report = self._reports[text] = len(self.report_texts)
            self.report_texts.append(text)
        point = session.checkpoint()
        after = self.world(scenario, point.state, point.repaired, point.short_count)
        return Step(report, float(cost), session.end in SOLVED, after)

    # -- the perfect-information bound -----------------------------------------
    def bound(self, world: int) -> float:
        """The least a world can cost to end in success when its scenario is known (perfect information):
        a shortest path over the states its repairs lead to, each loose connection falling the way that
        costs least. Only repairs are followed (a catalogue repair of a faulty part, an action the scenario
        makes permanent, a hypothesis): any other move is undone when the round ends, but for damage it
        does, which only adds to what must be repaired, so no path through one costs less. No policy that
        does not know the scenario does better. The search stops after :data:`BOUND_WORLDS` states: the
        least cost of a state not yet expanded is then the bound (every path leaves through one)."""
        known = self._bounds.get(world)
        if known is not None:
            return known[0]
        scenario = self.scenario_of(world)
        ways = range(len(self.ways[scenario]))
        permanent = self.scenarios[scenario].permanent
        repairs = [m for m in self.base if self.is_repair(m) or self.moves[m].action in permanent]   # type: ignore[union-attr]
        best: dict[int, float] = {world: 0.0}
        queue: list[tuple[float, int, int]] = [(0.0, 0, world)]
        result: tuple[float, int] = (INF, 0)
        expanded = 0
        first: int | None = None          # the move of a one-move path
        while queue:
            cost, rounds, here = heapq.heappop(queue)
            if cost > best.get(here, INF) or cost >= result[0]:
                continue
            if expanded >= BOUND_WORLDS:
                result = (cost, -1)       # not exact: a bound, and no path known
                break
            expanded += 1
            faulty = self.broken(here)
            for move in (*(m for m in repairs if self.targets(m) <= faulty), *self.namings(here)):
                for way in ways:
                    s = self.step(here, way, move)
                    if s.world < 0:
                        continue
                    total = cost + s.cost
                    if s.solved:
                        if (total, rounds + 1) < result:
                            result = (total, rounds + 1)
                            first = move if here == world else None
                    elif s.world != here and total < best.get(s.world, INF) and total < result[0]:
                        best[s.world] = total
                        heapq.heappush(queue, (total, rounds + 1, s.world))
        self._bounds[world] = result
        if first is not None and result[1] == 1:
            self._first_moves[world] = first
        return result[0]

    def bound_move(self, world: int) -> int | None:
        """The move that ends ``world`` at its perfect-information cost in one round (None when no one
        move does)."""
        self.bound(world)
        return self._first_moves.get(world)

    def bound_rounds(self, world: int) -> int:
        """The rounds of the path :meth:`bound` found (-1 when it stopped before it found the best path)."""
        self.bound(world)
        return self._bounds[world][1]


def _mentions(circuit: Any, part: str) -> tuple[Any, ...]:
    """Everything a circuit state says about one part (its overrides, positions, damage, ends…)."""
    def about(entry: Any) -> bool:
        if isinstance(entry, str):
            return entry == part or entry.startswith(part + ".")
        return isinstance(entry, tuple) and any(about(e) for e in entry)

    fields = ("overrides", "positions", "forced", "physical", "covered", "removed", "damaged", "detached", "rewired",
              "shorts", "loose")
    return tuple(tuple(sorted((e for e in getattr(circuit, f) if about(e)), key=repr)) for f in fields)


__all__ = ["Move", "Pattern", "SOLVED", "Start", "Step", "Worlds"]
