"""The model-based assistant's worlds (:mod:`diagkg.agents.modelbased`): each
candidate is a world it simulates itself — a private copy of its view of the
knowledge graph, a hypothetical scenario injecting the candidate's faults, and
a service-agent session on it (the *shadow*, the same code as the real one, so
the same action gives the same report when the candidate is the truth). A
world is started, taken through what was done, and asked what an action would
report, rolled back after each try.

:class:`Worlds` holds what the worlds share: the system, the steps done and
what each showed (:attr:`Worlds.steps`), from which step on reports need
explaining (:attr:`Worlds.since`), and the faults repairs have shown and fixed
(:attr:`Worlds.anchor`), which every world carries."""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Sequence
from typing import Any

from ..env import access
from ..env.actions import Action, Hypothesis
from ..env.effects import still_broken
from ..env.observations import visible_lights
from ..env.outcomes import Light, Outcome
from ..env.scenarios import Fault, Scenario
from ..env.service import Checkpoint, simulator_for
from ..env.worlds import Shadow, hypothetical
from ..errors import AssistantError, SessionError, SimulationError
from ..kg import graphs
from ..kg.memo import Memo
from ..sim.circuit import CircuitState, PortRef, composed
from .chance import Coin, Fallen, Way, falls
from .combinations import Candidate
from .readings import UNKNOWN, Reading
from .readings import reading as key_of
from .registry import Briefing

SOLVED = ("success", "success_no_hypothesis")
Prediction = tuple[Reading, float, bool]       # a report (as a key), its minutes, whether the system works again

WORLDS_GRAPH = "model-based-worlds"       # the name of the worlds' state graph (see Worlds.shade)

# what worlds predicted, shared by the sessions of a process (see Worlds.predicted): keyed by the versions
# of the graphs the worlds read, the faults, the circuit state read from the world's state graph (free of
# its blank nodes and graph name), the parts repaired, the world's end, the step and the coin
# (with the parts the step's end depended on: see Worlds.remembered)
PREDICTED: Memo[tuple[Prediction, frozenset[str]]] = Memo("what worlds predicted", 50_000)

# worlds that disagreed with what was seen, shared by the sessions of a process (see Worlds.start), by a digest
# of what a start reads (Worlds.start_key): what the start noted (lights, state as injected), () if none.
# Digests and tuples of strings keep the entries out of the garbage collector's walks
REFUTED: Memo[tuple[Any, ...]] = Memo("worlds refuted by what was seen", 100_000)


class Worlds:
    """The candidates' worlds on one system, for one session: started, taken through the
    steps done, asked for predictions (remembered), all on one shadow session rolled back
    between them. ``chance``: a loose connection's world is tried open and closed (weighed
    by its probability) rather than as the real session's next draw falls."""

    def __init__(self, briefing: Briefing, *, chance: bool = True, stated: bool = True):
        if briefing.store is None:
            raise AssistantError("the model-based assistant needs the knowledge graph (briefing.store)")
        self.briefing = briefing
        self.chance_in_worlds = chance
        self.graph = briefing.store.shared_copy()
        # the versions of what the worlds read (the ontology, the system, its inferences, as the view holds
        # them): what the predictions shared between sessions are keyed by
        self.versions = briefing.store.versions
        self.sk = simulator_for(self.graph, briefing.system).skeleton
        self.ns = graphs.namespace_of(self.sk.iri)
        self.removed = frozenset(c for c in self.sk.components if c not in briefing.parts)
        # lamps the report says come and go: a world must be able to show one of them lit and dark
        self.flickering = frozenset(lamp for lamp, looks in briefing.stated.items()
                                    if stated and looks == "Flickering" and lamp in briefing.lights)
        self.steps: list[tuple[Action | Hypothesis, Reading]] = []     # what was done, and what it showed
        self.since = 0            # reports before this step need not be explained (see the assistant's rebase)
        self.anchor: tuple[Fault, ...] = ()  # faults that repairs done so far have shown and fixed
        self.shadow: Shadow | None = None
        self.predictions = 0      # predictions simulated (not remembered)
        self.started = 0          # worlds started and taken through the steps (not found refuted: see start)
        # a single fault run through the steps: lamps at the start, steps alike, where it got to, steps done
        self.through: dict[int, tuple[dict[str, str], frozenset[int], Checkpoint | None, int]] = {}
        self.first_lamps: dict[int, tuple[Candidate, tuple[Fault, ...], dict[str, str]]] = {}   # see lamps_at_start
        self.memo: dict[tuple[Any, ...], tuple[frozenset[str], dict[frozenset[str], Prediction]]] = {}
        # each world's faults as injected (with the anchor then), and the anchor's own world at its start
        # (as injected, and what can be seen there): what composed_lights composes
        self.injected: dict[int, tuple[Candidate, tuple[Fault, ...], CircuitState]] = {}
        self.base: tuple[tuple[Fault, ...], tuple[CircuitState, frozenset[str]] | None] | None = None
        # what a start reads besides faults and steps; with the steps: (steps, since, digest) (see start_key)
        self.setting = repr((self.versions, briefing.system, sorted(briefing.lights.items()), sorted(self.flickering),
                             sorted(self.removed), chance))
        self.context: tuple[int, int, bytes] = (-1, -1, b"")

    # -- a world -----------------------------------------------------------
    def scenario(self, c: Candidate, anchored: bool = True) -> Scenario:
        """The hypothetical scenario of ``c``'s world (with the anchor's faults unless not ``anchored``)."""
        faults = self.anchor + c.faults if anchored else c.faults
        permanent = frozenset({"rotate_enclosure"}) if any(f.mode == "CouplingEnabled" for f in faults) \
            else frozenset()
        return hypothetical(faults, iri=f"urn:diagkg:model-based:{id(c)}", system_iri=self.sk.iri,
                            key=self.briefing.system, label=c.label, faulty=c.faulty, removed=self.removed,
                            permanent=permanent)

    def start(self, c: Candidate) -> tuple[Checkpoint, float] | None:
        """A world for ``c``, run through everything done so far, and how likely it gave what was
        seen (1 without chance); None as soon as it disagrees. A world found disagreeing before
        (:data:`REFUTED`) is not run again; what its start noted is noted again, as a run would."""
        key = self.start_key(c)
        known = REFUTED.get(key)
        if known is not None:
            if known:
                lights, injected = known
                self.note_start(c, dict(lights), injected)
            return None
        started = self.run_start(c)
        if started is None:
            lamps, injected = self.first_lamps.get(id(c)), self.injected.get(id(c))
            if lamps is not None and injected is not None and lamps[0] is c is injected[0] \
                    and lamps[1] == self.anchor == injected[1]:
                REFUTED.put(key, (tuple(lamps[2].items()), injected[2]))
            else:                 # it could not be started
                REFUTED.put(key, ())
        return started

    def start_key(self, c: Candidate) -> bytes:
        """A digest of what :meth:`start` gives for ``c`` follows from (see :data:`REFUTED`): the
        versions of the graphs the worlds read, the lights and lamps seen at the start, the parts
        removed, whether worlds draw on chance, the steps done and what each showed, from which step
        on they are judged, the faults (the anchor's included), the parts ``c`` names (what a
        hypothesis's verdict reads) and the seed where a fault draws on chance."""
        if self.context[:2] != (len(self.steps), self.since):
            history = [(str(step), seen) for step, seen in self.steps]
            self.context = (len(self.steps), self.since,
                            hashlib.blake2b(repr((self.setting, history, self.since)).encode(), digest_size=16).digest())
        faults = self.anchor + c.faults
        chance = any(f.probability is not None for f in faults)
        text = repr((faults, sorted(c.faulty), self.briefing.seed if chance else None))
        return hashlib.blake2b(self.context[2] + text.encode(), digest_size=16).digest()

    def note_start(self, c: Candidate, lights: dict[str, str], injected: CircuitState) -> None:
        """Note what ``c``'s world showed at its start and the state it was injected into (see
        :meth:`lamps_at_start`, :meth:`composed_lights`)."""
        if len(self.first_lamps) > 20_000:
            self.first_lamps.clear()
        self.first_lamps[id(c)] = (c, self.anchor, lights)
        self.keep_injected(c, injected)

    def run_start(self, c: Candidate) -> tuple[Checkpoint, float] | None:
        """:meth:`start`, run."""
        self.started += 1
        briefing = self.briefing
        scenario = self.scenario(c)
        shadow = self.shade(scenario)
        fallen = self.falls(c)
        likelihood = 1.0
        try:
            obs = shadow.start(scenario, briefing.seed)
            self.note_start(c, obs["lights"], shadow.injected_state)
            if not self.since:
                if fallen is not None:
                    likelihood = self.likelihood_at_start([(self.lights(coin), w) for coin, w in fallen])
                elif not self.comes_and_goes(obs["lights"]):
                    return None
                if likelihood <= 0 or (fallen is None and obs["lights"] != briefing.lights):
                    return None
            for n, (step, seen) in enumerate(self.steps):
                if n < self.since:
                    shadow.step(step)
                    continue
                likelihood *= self.take(step, seen, fallen)
                if likelihood <= 0:
                    return None
        except (SessionError, SimulationError):
            return None
        return shadow.checkpoint(), likelihood

    def comes_and_goes(self, *shown: dict[str, str]) -> bool:
        """Whether a world showing the lights ``shown`` as its loose connections fall (one way for a
        world without chance) can show a lamp reported flickering lit and dark: one at least, when
        some are (two loose connections may each make one come and go, and a world of one of them is
        where a repair one at a time starts)."""
        return not self.flickering or any(
            Light.FLICKERING in looks or len(looks) > 1
            for looks in ({lights.get(lamp) for lights in shown} for lamp in self.flickering))

    def changed(self) -> bool:
        """Whether a step so far changed the circuit (:meth:`changes`)."""
        return any(self.changes(step) for step, _ in self.steps)

    def changes(self, step: Action | Hypothesis) -> bool:
        """Whether ``step`` may change what is faulty in a world: a hypothesis (its repair) or an
        action of the catalogue with an effect (an observation has none; reading a world's state
        to see what is faulty writes it to the store, so it is done only after such a step)."""
        if isinstance(step, Hypothesis):
            return True
        spec = self.briefing.catalogue.get(step.action)
        return spec is None or spec.template is not None

    def broken_here(self) -> frozenset[str]:
        """The parts that differ from their description in the world where the shadow stands (its
        faults still there, what its steps broke or damaged), parts removed from the system aside."""
        assert self.shadow is not None
        return frozenset(still_broken(self.shadow, self.shadow.state())) - self.removed

    def lights_with_short(self, shorts: list[tuple[tuple[str, str], tuple[str, str], float]]) -> list[dict[str, str] | None]:
        """The lights seen at the start of the world of the anchor's faults with each of ``shorts``
        (between two ports, of a resistance) added, simulated straight from the state: what
        :meth:`start` would compare first, without writing a world, every short on one circuit
        (:meth:`~diagkg.sim.simulator.Simulator.screen_shorts`). None for a short whose
        simulation damages something or draws on chance (a world's start says then)."""
        base = Candidate((), frozenset(), 1.0)
        scenario = self.scenario(base)
        shadow = self.shade(scenario)
        try:
            shadow.start(scenario, self.briefing.seed)
        except (SessionError, SimulationError):
            return [None] * len(shorts)
        state = shadow.state()
        if state.loose:
            return [None] * len(shorts)
        # one circuit for every short (see Simulator.screen_shorts): a short is two values changed
        return [None if result is None or result.damage else dict(visible_lights(result, shadow))
                for result in shadow.sim.screen_shorts(state, shorts)]

    def keep_injected(self, c: Candidate, injected: CircuitState) -> None:
        """Remember the state ``c``'s faults were injected into (with the anchor's)."""
        if len(self.injected) > 20_000:
            self.injected.clear()
        self.injected[id(c)] = (c, self.anchor, injected)

    def base_start(self) -> tuple[CircuitState, frozenset[str]] | None:
        """The world of the anchor's faults alone at its start: its state as injected and the parts
        that can be seen there (remembered per anchor); None when it cannot be started."""
        if self.base is None or self.base[0] != self.anchor:
            scenario = self.scenario(Candidate((), frozenset(), 1.0))
            shadow = self.shade(scenario)
            try:
                shadow.start(scenario, self.briefing.seed)
            except (SessionError, SimulationError):
                self.base = (self.anchor, None)
            else:
                self.base = (self.anchor, (shadow.injected_state, access.affording(shadow, "Observable")))
        return self.base[1]

    def together_only(self, loose: Sequence[Candidate]) -> list[tuple[Candidate, Candidate]]:
        """Pairs of ``loose`` (single loose connections, one port each) that put a lamp reported
        flickering out when both are open and neither does alone, in the anchor's world at its start: in
        a redundant design (two supplies, either one enough) only both together make those lamps come and
        go, so no single explains them and the ranking of pairs by what each explains alone cannot find
        them. One solve per loose connection and one per pair."""
        base = self.base_start()
        if not self.flickering or base is None:
            return []
        state, sim = base[0], simulator_for(self.graph, self.briefing.system)

        def dark(ports: Sequence[PortRef]) -> frozenset[str]:
            try:
                lit = sim.simulate(state.evolve(detached=state.detached | frozenset(ports), loose=())).lit
            except SimulationError:
                return frozenset()
            return self.flickering - frozenset(lit)

        alone = [(c, port, dark([port])) for c, port in ((c, self.sk.port_ref(c.faults[0].target)) for c in loose)]
        return [(a, b) for (a, pa, da), (b, pb, db) in itertools.combinations(alone, 2)
                if pa[0] != pb[0] and dark([pa, pb]) - da - db]

    def composed_lights(self, combo: Sequence[Candidate]) -> dict[str, str] | None:
        """The lights the world of ``combo``'s faults (with the anchor's) shows at its start, without
        writing it: each single's injected state (:meth:`keep_injected`) composed over the anchor's world
        (:func:`~diagkg.sim.circuit.composed`), simulated; what :meth:`start` compares first. None when it
        cannot be told: a single not started with this anchor, states that do not compose, a physical
        change, or a loose connection (:meth:`composed_ways`)."""
        if any(f.probability is not None for c in combo for f in c.faults):
            return None         # (composed_ways composes it: each pair is composed once)
        found = self.composed_state(combo)
        if found is None or found[0].loose:
            return None
        state, observable = found
        assert self.shadow is not None
        try:
            result = self.shadow.sim.simulate(state, random.Random(self.briefing.seed))
        except SimulationError:
            return None
        return dict(visible_lights(result, self.shadow, observable))

    def composed_ways(self, combo: Sequence[Candidate]) -> list[tuple[dict[str, str], float]] | None:
        """The lights the world of ``combo``'s faults together shows at its start each way its loose
        connections may fall (:meth:`falls`), with its probability, composed as in :meth:`composed_lights`.
        None when that cannot be told, no fault is a loose connection, or worlds draw without chance."""
        if not any(self.chance(c) is not None for c in combo):
            return None         # (composed_lights composes it)
        found = self.composed_state(combo)
        if found is None or not found[0].loose:
            return None
        state, observable = found
        ways = self.falls(Candidate(tuple(f for c in combo for f in c.faults), frozenset(), 1.0))
        if ways is None:
            return None
        assert self.shadow is not None
        try:
            return [(dict(visible_lights(self.shadow.sim.simulate(state, coin), self.shadow, observable)), weight)
                    for coin, weight in ways]
        except SimulationError:
            return None

    def likelihood_at_start(self, shown: Sequence[tuple[dict[str, str], float]]) -> float:
        """How likely a world showing ``shown`` at its start (lights each way, weighed) shows what was seen (0:
        a lamp reported flickering cannot come and go in it), as :meth:`start` judges."""
        if not self.comes_and_goes(*(looks for looks, _ in shown)):
            return 0.0
        return sum(w for looks, w in shown if looks == self.briefing.lights)

    def composed_state(self, combo: Sequence[Candidate]) -> tuple[CircuitState, frozenset[str]] | None:
        """The state of ``combo``'s world at its start, composed from its singles' worlds over the
        anchor's (see :meth:`composed_lights`), and the parts seen there; None when it cannot be told."""
        base = self.base_start()
        if base is None:
            return None
        before, observable = base
        states = []
        for c in combo:
            known = self.injected.get(id(c))
            if known is None or known[0] is not c or known[1] != self.anchor:
                return None
            states.append(known[2])
        state = composed(before, states)
        if state is None or state.physical != before.physical:
            return None
        return state, observable

    def chance(self, c: Candidate) -> float | None:
        """The probability of ``c``'s loose connection (None for a world without chance)."""
        if not self.chance_in_worlds:
            return None
        return next((f.probability for f in c.faults if f.probability is not None), None)

    def ways(self, c: Candidate) -> tuple[tuple[Way, float], ...]:
        """The ways ``c``'s world may answer, each with its probability: one (no coin) without chance,
        else each way its loose connections may fall (:meth:`falls`)."""
        return self.falls(c) or ((None, 1.0),)

    def falls(self, c: Candidate) -> tuple[tuple[Fallen, float], ...] | None:
        """Each way the loose connections of ``c`` may fall, with its probability (:func:`falls`); None
        for a world without chance."""
        if self.chance(c) is None:
            return None
        return falls([(self.sk.port_ref(f.target), f.probability) for f in c.faults if f.probability is not None])

    def lights(self, coin: random.Random) -> dict[str, str]:
        """The lights the world where the shadow stands shows with its loose connections as ``coin`` says."""
        assert self.shadow is not None
        self.shadow.rng = coin
        return dict(visible_lights(self.shadow.simulate(), self.shadow))

    def take(self, step: Action | Hypothesis, seen: Reading, ways: Sequence[tuple[Fallen, float]] | None) -> float:
        """Take ``step`` in the world where the shadow stands: how likely it gives ``seen`` (0
        when it disagrees). A world without chance (``ways`` None) answers one way (1 or 0); one with
        loose connections is tried each way they may fall (:meth:`ways`), and moves on as one that
        agrees (the same state either way)."""
        assert self.shadow is not None
        if ways is None:
            out, *_ = self.shadow.step(step)
            return 1.0 if key_of(out).agrees(seen) else 0.0
        point = self.shadow.checkpoint()
        agreed: list[tuple[float, Checkpoint]] = []
        for coin, weight in ways:
            self.shadow.rng = coin
            self.shadow.rollback(point)
            out, *_ = self.shadow.step(step)
            if key_of(out).agrees(seen):
                agreed.append((weight, self.shadow.checkpoint()))
        if len(agreed) == 1:
            self.shadow.rollback(agreed[0][1])
        return sum(w for w, _ in agreed)

    def follow(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis,
               seen: Reading) -> tuple[float, Checkpoint] | None:
        """``c``'s world at ``point`` after ``step``: how likely it gave ``seen``, and where it
        stands then; None when it cannot take the step or disagrees."""
        assert self.shadow is not None
        self.shadow.rollback(point)
        try:
            likelihood = self.take(step, seen, self.falls(c))
        except (SessionError, SimulationError):
            return None
        return (likelihood, self.shadow.checkpoint()) if likelihood > 0 else None

    # -- predictions -------------------------------------------------------
    def predicted(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis,
                  coin: Way = None) -> Prediction:
        """The report ``step`` would give in ``c``'s world (as a key), its cost, and whether the
        system would work again; with ``coin``, its loose connections fall as the coin says.
        A world answers the same action the same way in the same state (a loose connection's
        world, for the same coin) with the same parts repaired among those the answer reads (see
        :meth:`remembered`), so that is remembered across decisions and across the candidates
        that are the same world (the same faults, anchor included)."""
        remember = coin is not None or not any(f.probability is not None for f in c.faults)
        shared: tuple[Any, ...] | None = None
        if remember:
            known = self.remembered(c, point, step, coin)
            if known is not None:
                return known
            # another session of this process may have predicted it in the same world (the same faults,
            # circuit state and repairs, read from the graph as the step would read it)
            shared = self.shared_key(c, point, step, coin)
            if shared is not None:
                found = PREDICTED.get(shared)
                if found is not None:
                    self.remember(c, point, step, coin, found[1], found[0])
                    return found[0]
        assert self.shadow is not None
        if coin is not None:
            self.shadow.rng = coin
        out = self.predict(point, step)
        answer = (key_of(out), float(out["cost"]), self.shadow.end in SOLVED) if out is not None else (UNKNOWN, 0.0, False)
        if remember:
            self.remember(c, point, step, coin, self.shadow.reads, answer)
            if shared is not None:
                PREDICTED.put(shared, (answer, self.shadow.reads))
        return answer

    def shared_key(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis, coin: Way) -> tuple[Any, ...] | None:
        """What a prediction is shared between sessions by (:data:`PREDICTED`): the versions of the
        graphs the worlds read, the faults (anchor included), the circuit state the world stands in
        as read from its state graph (the same in every session, unlike the graph's blank nodes),
        every part repaired, whether the world has ended, the step and the coin. None when the
        state cannot be read."""
        assert self.shadow is not None
        try:
            self.shadow.rollback(point)
            state = self.shadow.state()
        except (SessionError, SimulationError):
            return None
        return (self.versions, self.anchor + c.faults, state, point.repaired, point.end, str(step),
                coin.value if isinstance(coin, Coin) else coin.opened if coin is not None else None)

    def predict(self, point: Checkpoint, step: Action | Hypothesis) -> Outcome | None:
        """The report of ``step`` taken at ``point`` (simulated; None when the world cannot take it)."""
        assert self.shadow is not None
        self.predictions += 1
        return self.shadow.trial(point, step)

    def memo_key(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis, coin: Way) -> tuple[Any, ...]:
        """What a world's own prediction of ``step`` is remembered by (its faults, anchor
        included, its state, and the coin its loose connections fall by); what was repaired is
        read by :meth:`remembered`."""
        return self.anchor + c.faults, point.state, str(step), \
            coin.value if isinstance(coin, Coin) else coin.opened if coin is not None else None

    def remembered(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis,
                   coin: Way) -> Prediction | None:
        """A world's own prediction of ``step``, if it was made: in the same world and state,
        with the same parts repaired among those the step's end depended on (the session's
        ``reads``: a repair that changed nothing in this world leaves its predictions
        standing)."""
        known = self.memo.get(self.memo_key(c, point, step, coin))
        return None if known is None else known[1].get(point.repaired & known[0])

    def remember(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis, coin: Way,
                 reads: frozenset[str], answer: Prediction) -> None:
        key = self.memo_key(c, point, step, coin)
        known = self.memo.get(key)
        if known is None:
            if len(self.memo) > 200_000:
                self.memo.clear()
            known = self.memo[key] = (reads, {})
        known[1][point.repaired & known[0]] = answer

    # -- a single fault through every step ----------------------------------
    def run_through(self, c: Candidate) -> tuple[dict[str, str], frozenset[int]]:
        """A single fault run through what was done without stopping at a
        disagreement: the lamps it shows at the start, and the reports it gives alike.
        Each single keeps where its run got to, so a later widening only runs the new steps."""
        shadow = self.shadow if self.shadow is not None else self.shade(self.scenario(c))
        known = self.through.get(id(c))
        if known is None:
            try:
                obs = shadow.start(self.scenario(c), self.briefing.seed)
            except (SessionError, SimulationError):
                self.through[id(c)] = known = ({}, frozenset(), None, 0)
            else:
                known = (dict(obs["lights"]), frozenset(), shadow.checkpoint(), 0)
                self.keep_injected(c, shadow.injected_state)
        seen_lamps, alike, point, done = known
        if point is not None and done < len(self.steps):
            shadow.rollback(point)
            seen = set(alike)
            try:
                for n in range(done, len(self.steps)):
                    step, report = self.steps[n]
                    out, *_ = shadow.step(step)
                    if key_of(out).agrees(report):
                        seen.add(n)
                point = shadow.checkpoint()
            except (SessionError, SimulationError):
                point = None
            alike = frozenset(seen)
        self.through[id(c)] = (seen_lamps, alike, point, len(self.steps))
        return seen_lamps, alike

    def through_point(self, c: Candidate) -> Checkpoint | None:
        """Where ``c``'s world stands after :meth:`run_through` (None: it could not take a step)."""
        self.run_through(c)
        return self.through[id(c)][2]

    def standing(self, c: Candidate) -> bool:
        """Whether ``c``'s world, taken through every step (see :meth:`run_through`), still has a fault."""
        point = self.through_point(c)
        return point is not None and point.end is None

    def lamps_at_start(self, c: Candidate) -> dict[str, str]:
        """The lamps ``c``'s world shows at the start: as its world showed them when it was started
        (with the same anchor), else as :meth:`run_through` finds them."""
        known = self.first_lamps.get(id(c))
        if known is not None and known[0] is c and known[1] == self.anchor:
            return known[2]
        return self.run_through(c)[0]

    def shade(self, scenario: Scenario) -> Shadow:
        """The shadow the worlds are tried on (made on first need, and again after :meth:`close`)."""
        if self.shadow is None:
            # one name for the worlds' state graph in every session: a world started again (here or in
            # another session of this process) gets the same graph, and what was remembered by it is found
            self.shadow = Shadow(scenario, self.graph, session_id=WORLDS_GRAPH)
        return self.shadow

    def close(self) -> None:
        """Release the shadow's working memory (the session is over). Worlds started afterwards
        (a test looking into the assistant) get a new shadow; points taken on the old one are
        still valid on it, once a world has been started."""
        if self.shadow is not None:
            self.shadow.close()
            self.shadow = None
        self.through.clear()          # where singles' runs got to: points on the old shadow's run

    # -- repairs -------------------------------------------------------------
    def fixed_by(self, step: Action, singles: list[Candidate]) -> tuple[Fault, ...]:
        """The single fault (of ``singles``) on ``step``'s parts that ``step`` repairs on its own
        (the likeliest), found by trying it in each such fault's world; none when no fault of the
        catalogue is. A fault that alone leaves the system working (a flat battery that feeds only a lamp the
        working system keeps dark) is not one: its world ends as a repair on any step."""
        targets = frozenset(step.targets)
        for c in sorted((c for c in singles if c.faulty <= targets and (len(targets) == 1 or c.faulty == targets)),
                        key=lambda c: -c.prior):
            alone = self.scenario(c, anchored=False)
            shadow = self.shade(alone)
            try:
                shadow.start(alone, self.briefing.seed)
                if shadow.works_again():
                    continue
                shadow.step(step)
            except (SessionError, SimulationError):
                continue
            if shadow.end in SOLVED:
                return c.faults
        return ()

    def repaired(self) -> set[str]:
        """Parts already replaced or reconnected, by an action or a hypothesis's repair."""
        out: set[str] = set()
        catalogue = self.briefing.catalogue
        for step, _ in self.steps:
            if isinstance(step, Hypothesis):
                out |= set(step.components)
            elif step.action in catalogue and catalogue[step.action].repair:
                out |= set(step.targets)
        return out


__all__ = ["PREDICTED", "REFUTED", "SOLVED", "Prediction", "Worlds"]
