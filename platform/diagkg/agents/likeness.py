"""Worlds alike where an action looks, for the model-based assistant
(:mod:`diagkg.agents.modelbased`): what one simulation of a candidate's world
shows of each part (its *signature*, on the grid readings are split by), which
parts a candidate's faults are on or next to, and from these the class of
worlds an action's report cannot tell apart — one prediction serves the class,
and an observation that no two worlds tell apart is not tried at all (the
model-based diagnosis way: probe only where the predictions differ)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ..env import access
from ..env.actions import Action, Hypothesis
from ..env.observations import amps, volts
from ..env.service import Checkpoint
from ..env.verification import switch_controls
from ..errors import SimulationError
from .chance import CLOSED, OPEN, Coin, Way, coins
from .combinations import Candidate
from .readings import TOLERANCE, Reading, grid
from .worlds import Worlds

# the actions that only look (an observation's report depends on the part it looks at)
OBSERVATIONS = ("observe_component", "inspect_connections", "measure_voltage", "test_continuity", "test_diode",
                "test_switch", "measure_current")

# what a part's signature holds, one small number each: its port voltages, its current, its light
# (lit, flickering), its contacts (closed or open, as the simulation left them) and what a look at
# it shows besides its light (its lever, whether it is covered, which of its ends are off)
VOLTS, AMPS, LIGHT, CONTACT, SIGHT = range(5)
# what an observation's report reads, by what the catalogue says it observes (``dk:observes``):
# the aspects of the part's signature, and which faults (on the part, on it or next to it, none).
# An observation not named here reads everything, with the faults next to the part.
READS: dict[str, tuple[tuple[int, ...], str]] = {
    "voltages": ((VOLTS,), "none"),           # the meter reads the port voltages (and whether they settle)
    "current": ((AMPS,), "none"),
    "visual": ((LIGHT, SIGHT), "none"),       # its light, lever and ends off their terminals
    "connections": ((), "near"),              # what is attached at its terminals: no simulation read
    "continuity": ((CONTACT,), "own"),        # the part out of circuit: its own faults, its contacts as they are
    "diode": ((), "own"),                     # what the part is declared to be now
}
EVERYTHING: tuple[tuple[int, ...], str] = ((VOLTS, AMPS, LIGHT, CONTACT, SIGHT), "near")
Outcomes = list[tuple[float, Reading, float]]    # (probability, report, minutes), one per way a world may answer


def entropy(weights: list[float]) -> float:
    total = sum(weights)
    return -sum(w / total * math.log2(w / total) for w in weights if w > 0) if total > 0 else 0.0


def cell(value: float | None, unit: str) -> int | None:
    """A value on the grid readings are split by (see :meth:`Reading.group`)."""
    if value is None:
        return None
    return grid(value, *TOLERANCE[unit])


class Likeness:
    """What :class:`~diagkg.agents.modelbased.ModelBasedAssistant` uses to tell which worlds an
    action cannot tell apart, and to predict an action's reports once per class of worlds alike.
    ``screen``: observations are tried only on parts where the worlds' simulations differ, and
    worlds alike share a prediction; ``named_options``: hypotheses tried as probes (the likeliest)."""

    def __init__(self, worlds: Worlds, *, screen: bool = True, named_options: int = 3):
        self.worlds = worlds
        self.screen = screen
        self.named_options = named_options
        self.near = self.nearby()
        # what faults of components (and their ports) are on, as the fault catalogue names them
        self.component_terms = frozenset(worlds.ns + cid for cid in worlds.sk.components) | frozenset(
            f"{worlds.ns}{cid}.{port}" for cid, comp in worlds.sk.components.items() for port in comp.ports)
        self.signatures: dict[tuple[Any, ...], tuple[dict[str, tuple[int, ...]], ...]] = {}
        self.interned: dict[tuple[Any, ...], int] = {}
        self.metered: dict[float | None, int | None] = {}     # see signature
        self.metered_amps: dict[float, int | None] = {}
        self.looks: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], tuple[int, ...], frozenset[str] | None] | None] = {}
        self.world_keys: dict[int, tuple[Checkpoint, Candidate, tuple[Any, ...] | None]] = {}
        self.shared: dict[tuple[Any, ...], tuple[Reading, float]] = {}
        self.fault_index: dict[tuple[Any, ...], tuple[tuple[str, str], ...]] = {}

    def outcomes(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis) -> Outcomes:
        """The reports ``step`` may give in ``c``'s world, each with its probability and minutes.
        Worlds alike where ``step`` looks share one prediction (see :meth:`alike`)."""
        out = []
        for n, (coin, weight) in enumerate(self.ways(c)):
            key = self.alike(c, point, step, n)
            known = self.shared.get(key) if key is not None else None
            if known is None:
                known = self.worlds.predicted(c, point, step, coin)[:2]
                if key is not None:
                    if len(self.shared) > 200_000:
                        self.shared.clear()
                    self.shared[key] = known
            out.append((weight, *known))
        return out

    def nearby(self) -> dict[str, frozenset[str]]:
        """Each component with those it shares a net with: where a fault can show on inspection."""
        by_net: dict[int, set[str]] = defaultdict(set)
        for (cid, _), net in self.worlds.sk.net_of_port.items():
            by_net[net].add(cid)
        near: dict[str, set[str]] = {cid: {cid} for cid in self.worlds.sk.components}
        for members in by_net.values():
            for cid in members:
                near[cid] |= members
        return {cid: frozenset(parts) for cid, parts in near.items()}

    def touched(self, c: Candidate) -> frozenset[str]:
        """The components ``c``'s faults are on (a port's component; the parts its repair names)."""
        out = set(c.faulty)
        for f in c.faults:
            for term in (f.target, f.other):
                if term is not None and term.startswith(self.worlds.ns):
                    out.add(term[len(self.worlds.ns):].split(".", 1)[0])
        return frozenset(out)

    def signature(self, c: Candidate, point: Checkpoint) -> tuple[dict[str, tuple[int, ...]], ...]:
        """What one simulation of ``c``'s world (each way its loose connections may fall) shows of
        every component, aspect by aspect (:data:`VOLTS`, :data:`AMPS`, :data:`LIGHT`,
        :data:`CONTACT`, :data:`SIGHT`), and of the whole system (key ``""``: its lights, whether it settles, and
        with every lamp lit whether its switch still controls them)."""
        assert self.worlds.shadow is not None
        ways = [way for way, _ in self.ways(c)]
        key = self.signature_key(c, point)
        known = self.signatures.get(key)
        if known is not None:
            return known
        out: list[dict[str, tuple[int, ...]]] = []
        intern = self.interned.setdefault
        for coin in ways:
            self.worlds.shadow.rollback(point)
            if coin is not None:
                self.worlds.shadow.rng = coin
            try:
                result = self.worlds.shadow.simulate()
            except SimulationError:
                out.append({})
                continue
            # each aspect as a small number (the same for the same value), quick to compare and hash
            state = self.worlds.shadow.state()
            off: dict[str, list[str]] = defaultdict(list)
            rewired = dict(state.rewired)
            for cid, port in state.detached:
                if (cid, port) not in rewired:
                    off[cid].append(port)
            positions = dict(state.positions)
            # damage shows on inspection: what the state holds and what this simulation does (kept by the step)
            damaged: dict[str, frozenset[str]] = {}
            for cid, damage in (*state.damaged, *((d.component, d.state) for d in result.damage)):
                damaged[cid] = damaged.get(cid, frozenset()) | {damage}
            shows: dict[str, tuple[int, ...]] = {}
            metered, metered_amps = self.metered, self.metered_amps
            if len(metered) + len(metered_amps) > 100_000:
                metered.clear()
                metered_amps.clear()
            for cid in self.worlds.sk.components:
                r = result.components.get(cid)
                # what a meter shows of a value, on the grid, worked out once per value
                shown = []
                for port, v in sorted(r.port_v.items()) if r is not None else ():
                    at = metered.get(v)
                    if at is None:
                        at = metered[v] = None if v is None else cell(volts(v), "V")
                    shown.append((port, at))
                current = 0.0 if r is None else r.current
                flows = metered_amps.get(current)
                if flows is None:
                    flows = metered_amps[current] = cell(amps(current), "A")
                shows[cid] = (
                    intern((VOLTS, None if r is None else tuple(shown)), len(self.interned)),
                    intern((AMPS, flows), len(self.interned)),
                    intern((LIGHT, None if r is None else r.lit, cid in result.flickering), len(self.interned)),
                    intern((CONTACT, result.live.get(f"closed:{cid}")), len(self.interned)),
                    intern((SIGHT, positions.get(cid), cid in state.covered, tuple(sorted(off.get(cid, ()))),
                            damaged.get(cid)), len(self.interned)))
            # whether the session would end on this step: the lamps, and with all of them lit whether the
            # switch still controls them (a switch stuck closed keeps them lit: no working system)
            shadow = self.worlds.shadow
            controls = switch_controls(shadow, state, result) if shadow.nominal_bulbs <= set(result.lit) else None
            shows[""] = (intern(("", result.lit, result.flickering, result.converged, controls), len(self.interned)),)
            out.append(shows)
        if len(self.signatures) > 50_000:
            self.signatures.clear()
        self.signatures[key] = known = tuple(out)
        return known

    def ways(self, c: Candidate) -> tuple[tuple[Way, float], ...]:
        """The ways ``c``'s world may answer, each with its probability: one (no coin) without
        chance, else each way its loose connections may fall (:meth:`Worlds.ways`)."""
        return self.worlds.ways(c)

    def signature_key(self, c: Candidate, point: Checkpoint) -> tuple[Any, ...]:
        """What a signature is remembered by: the world's faults and state, and whether chance is
        in it (a simulation of the state reads nothing else: what was repaired is not read)."""
        return self.worlds.anchor + c.faults, point.state, self.worlds.chance(c) is None

    def screened(self, options: list[Action | Hypothesis],
                  sample: list[tuple[Candidate, Checkpoint]]) -> list[Action | Hypothesis]:
        """Drop the observations that cannot tell ``sample`` apart (the model-based diagnosis
        way: probe only where the candidates' predictions differ). An observation of a part
        reads what the simulation shows of it and, on inspection, the faults on it and on what
        it connects to: when every world's simulation shows the part alike and no world's faults
        are on it or next to it, every world gives the same report. Hypotheses are kept for the
        likeliest diagnoses only (:attr:`named_options`)."""
        if not self.screen or len(sample) < 2:
            return options
        distant = any(self.at_a_distance(c) for c, _ in sample)
        signatures = [self.signature(c, point) for c, point in sample]
        touched = [self.touched(c) for c, _ in sample]
        weights: dict[frozenset[str], float] = defaultdict(float)
        for c, _ in sample:
            weights[c.faulty] += c.prior
        named = set(sorted(weights, key=lambda s: (-weights[s], sorted(s)))[: self.named_options])
        differs: dict[str, bool] = {}

        def telling(cid: str) -> bool:
            known = differs.get(cid)
            if known is None:
                near = self.near.get(cid, frozenset({cid}))
                seen = {(tuple(sig.get(cid) for sig in sigs), tuple(sorted(t & near))) for sigs, t in zip(signatures, touched,
                                                                                                       strict=True)}
                known = differs[cid] = len(seen) > 1
            return known

        out: list[Action | Hypothesis] = []
        for o in options:
            if isinstance(o, Hypothesis):
                if o.components in named:
                    out.append(o)
            elif distant or o.action not in OBSERVATIONS or telling(o.targets[0]):
                out.append(o)
        return out

    def alike(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis, coin: int) -> tuple[Any, ...] | None:
        """What ``step``'s report in ``c``'s world depends on (the ``coin``-th way its loose
        connections fall): what one simulation shows of the parts it looks at (only what its
        kind of observation reads, :data:`READS`) and of the whole system (does it work?), the
        faults it can see (on the parts, or next to them), whether chance is in the world, how
        the parts are reached (openings and enclosures) and which of those were repaired for
        good (an observation changes nothing else, and the reset after it keeps a repaired
        part as the step left it: see ``Shadow.reads``). Worlds that differ only in
        what the report does not read give the same report, so a prediction is made once per
        class (None: no class, predict in this world)."""
        if not self.screen or isinstance(step, Hypothesis):
            return None         # a verdict is about the whole system: every world answers for itself
        where = (step.action, step.targets)
        look = self.looks[where] if where in self.looks else self.looks.setdefault(where, self.look(step))
        world = self.world_key(c, point)
        if look is None or world is None:
            return None
        parts, aspects, seen = look
        signatures, faults, chancy, physical = world
        shows = signatures[coin]
        return (step.action, step.targets, step.value, shows.get(""),
                tuple([(shows[p][a] if p in shows else None) for p in parts for a in aspects]),
                tuple([f for part, f in faults if part in seen]) if seen else (), chancy, physical,
                frozenset(p for p in point.repaired if p not in self.worlds.sk.components), len(self.worlds.anchor))

    def look(self, step: Action) -> tuple[tuple[str, ...], tuple[int, ...], frozenset[str] | None] | None:
        """Where ``step`` looks: its parts, the aspects of their signatures its report reads and
        the parts whose faults it can see (None: ``step`` has no class: it changes the world,
        or it looks at something that is not a component)."""
        comps = tuple(sorted({p.split(".", 1)[0] for p in step.targets}))
        spec = self.worlds.briefing.catalogue.get(step.action)
        if spec is None or any(p not in self.near for p in comps):
            return None
        if step.action not in OBSERVATIONS or spec.template:
            return None     # an action that changes the world: whether it works again depends on every fault
        aspects, faults = READS.get(spec.observes, EVERYTHING)
        seen = None if faults == "none" else frozenset(comps) if faults == "own" else \
            frozenset().union(*(self.near[p] for p in comps))
        return comps, aspects, seen

    def refuted(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis, seen: Reading) -> bool:
        """Whether what ``c``'s world was predicted to report (its own prediction, or its class's:
        see :meth:`alike`) already says it cannot agree with ``seen``, each way its loose
        connections may fall; False when nothing was predicted (the step is then taken). A world
        whose class is not known yet (it was not in the sample) is not simulated to find it:
        taking the step costs less."""
        for n, (coin, _) in enumerate(self.ways(c)):
            own = self.worlds.remembered(c, point, step, coin)
            if own is not None:
                if own[0].agrees(seen):
                    return False
                continue
            if self.signature_key(c, point) not in self.signatures:
                return False
            key = self.alike(c, point, step, n)
            shared = self.shared.get(key) if key is not None else None
            if shared is None or not shared[0].apart(seen):
                return False
        return True

    def at_a_distance(self, c: Candidate) -> bool:
        """Whether a fault of ``c`` is a coupling's: it acts at a distance (and may show only once
        a box is opened or turned), so what a part shows does not say what it would report."""
        return any(f.target not in self.component_terms for f in c.faults)

    def world_key(self, c: Candidate, point: Checkpoint) -> tuple[Any, ...] | None:
        """What :meth:`alike` reads of a world (remembered while the world stands where it is);
        None for a world with a fault of a coupling, which acts at a distance (and may show only
        once a box is opened or turned): that world answers for itself."""
        known = self.world_keys.get(id(point))
        if known is not None and known[0] is point and known[1] is c:
            return known[2]
        if self.at_a_distance(c):
            world = None
        else:
            world = (self.signature(c, point), self.fault_parts(c), self.worlds.chance(c) is not None,
                     self.physical(point.state))
        if len(self.world_keys) > 20_000:
            self.world_keys.clear()
        self.world_keys[id(point)] = (point, c, world)
        return world

    def bounds(self, options: list[Action | Hypothesis], sample: list[tuple[Candidate, Checkpoint]]) -> list[float]:
        """For each option, the most information its reports can carry about ``sample``: the
        information in the classes of :meth:`alike` (a report is one per class, so it tells
        no more than the class does), less what chance alone adds. Worlds without a class count
        as a class each."""
        total = sum(c.prior for c, _ in sample) or 1.0
        ways = [self.ways(c) for c, _ in sample]
        out = []
        for step in options:
            groups: dict[Any, float] = defaultdict(float)
            noise = 0.0
            for n, ((c, point), chances) in enumerate(zip(sample, ways, strict=True)):
                own: dict[Any, float] = defaultdict(float)
                for m, (_, weight) in enumerate(chances):
                    key = self.alike(c, point, step, m) or (n, m)
                    groups[key] += c.prior * weight
                    own[key] += weight
                if len(own) > 1:
                    noise += c.prior * entropy(list(own.values()))
            out.append(entropy(list(groups.values())) - noise / total)
        return out

    def fault_parts(self, c: Candidate) -> tuple[tuple[str, str], ...]:
        """Each component ``c``'s faults are on (or its repair names), with the fault."""
        known = self.fault_index.get(c.faults)
        if known is None:
            out = set()
            for f in c.faults:
                ident = f"{f.mode}:{f.target}:{f.other}:{f.value}:{f.probability}"
                for part in self.touched(Candidate((f,), c.faulty)):
                    out.add((part, ident))
            known = self.fault_index[c.faults] = tuple(sorted(out))
        return known

    def physical(self, state: frozenset[Any]) -> frozenset[Any]:
        """The quads of a state that say how parts are reached (openings, enclosures)."""
        assert self.worlds.shadow is not None
        return access.physical_of(self.worlds.shadow, state)

    def options(self, sample: list[tuple[Candidate, Checkpoint]]) -> list[Action | Hypothesis]:
        """Tests on the parts the candidates name (and the lamps), repairs as probes, and hypotheses."""
        sk = self.worlds.sk
        parts: set[str] = set()
        for c, _ in sample:
            parts |= {p for p in c.faulty if p in sk.components}
        lamps = {cid for cid, c in sk.components.items() if c.type in ("Bulb", "LED") and cid not in self.worlds.removed}
        catalogue = self.worlds.briefing.catalogue
        options: list[Action | Hypothesis] = []
        for cid in sorted(parts | lamps):
            kind = sk.components[cid].type
            for action in OBSERVATIONS:
                spec = catalogue.get(action)
                if spec is not None and (not spec.types or kind in spec.types):
                    options.append(Action(action, (cid,)))
        # repairs are probes too: every repair of the catalogue that fits a named part (or, for a
        # repair of two parts, a diagnosis whose one fault is on both parts it fits: crossed cables
        # swapped; two faults apart are each repaired on their own)
        repairs = [spec for spec in catalogue.values() if spec.repair]
        for cid in sorted(parts):
            kind = sk.components[cid].type
            for spec in repairs:
                if spec.target_count == 1 and (not spec.types or kind in spec.types):
                    options.append(Action(spec.id, (cid,)))
        on_both = {tuple(sorted(c.faulty)) for c, _ in sample
                   if len(c.faulty) == 2 and any(len(self.touched(Candidate((f,), frozenset()))) == 2 for f in c.faults)}
        for named in sorted(on_both):
            if all(p in sk.components for p in named):
                for spec in repairs:
                    if spec.target_count == 2 and (not spec.types or {sk.components[p].type for p in named} <= spec.types):
                        options.append(Action(spec.id, named))
        options.extend(Hypothesis(s) for s in sorted({c.faulty for c, _ in sample}, key=sorted))
        done = {str(s) for s, _ in self.worlds.steps}
        return [o for o in options if str(o) not in done]


__all__ = ["CLOSED", "EVERYTHING", "OBSERVATIONS", "OPEN", "READS", "Outcomes", "Coin", "Likeness", "cell", "coins", "entropy"]
