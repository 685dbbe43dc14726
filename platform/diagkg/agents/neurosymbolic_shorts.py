"""What the neuro-symbolic assistant (:mod:`diagkg.agents.neurosymbolic`) makes of a short between two nodes,
and of readings an opened part would give: :class:`Shorts`, a mixin that reads the state the assistant keeps
(:class:`~diagkg.agents.neurosymbolic_repairs.Repairs` builds on it).

* **A short between two nodes.** No test reveals one; once a current reads above the working
  system's, a fuse blows again, a part that conducts carries less than its working current (starved)
  and no part that opened explains that, or a naming is judged wrong (or the candidates are used up)
  where a bulb is lit that the working system keeps dark or no part that opened explains the readings,
  the parts a short that shows the lights seen, and gives every current and voltage read so far, may end
  on are named, the most placements left per minute of naming first (:meth:`Shorts._short_suspect`), after
  a reading (a part's potentials or current) that tells the pairs of nodes apart, where that pays
  (:meth:`Shorts._short_split`).
  Where opening a part explains it, those parts are evidence (:meth:`Shorts._opens_explaining`), and hold
  the candidates while a test of theirs is left (:meth:`Shorts._look_elsewhere`).
* **What a short damaged.** A fuse replaced or named that does not bring the system back may be blown
  again by a short (:meth:`Shorts._fuse_replaced`); a short's end found faulty ends the short suspects, and
  what the short damaged is named next (:meth:`Shorts._short_cleared`), as are the fuses a part found
  shorted blows (:meth:`Shorts._fuses_blown_by`).
"""

from __future__ import annotations

from typing import Any, Callable

from ..env.actions import ActionType
from ..env.service import Action, Hypothesis
from ..env.verification import naming_floor
from ..env.worlds import FaultMode
from ..errors import SimulationError
from ..kg.store import KnowledgeSource
from ..sim.circuit import NOMINAL
from ..sim.results import SimulationResult
from ..sim.simulator import Simulator
from .neurosymbolic_config import NeuroSymbolicConfig
from .neurosymbolic_knowledge import Knowledge, ShortScreen, Test, short_screen

SHORTED_OHMS = 0.001         # a part a diode test read shorted (no ohms read), simulated (see Shorts._fuses_blown_by)

VOLTAGE_TOLERANCE = 0.5      # volts
SPLIT_KINDS = ("voltages", "current")      # the readings that may tell short suspects apart (see Shorts._short_split)
CURRENT_TOLERANCE = 0.1      # relative


def potential_off(read: float | None, expected: float | None) -> bool:
    """Whether a potential read (``read``, V; None: no potential, an end off) is off the one a circuit gives
    (``expected``): one is missing where the other is not, or they differ by more than :data:`VOLTAGE_TOLERANCE`."""
    return (read is None) != (expected is None) or \
        (read is not None and expected is not None and abs(read - expected) > VOLTAGE_TOLERANCE)


def current_off(measured: float, expected: float) -> bool:
    """Whether a current read (``measured``, A) is off the one a circuit gives (``expected``): by more than
    :data:`CURRENT_TOLERANCE` of it (of a milliampere at least), whichever way it flows."""
    amps = abs(expected)
    return abs(measured - amps) > CURRENT_TOLERANCE * max(amps, 1e-3)


class Shorts:
    """Shorts between two nodes, and opened parts read, of :class:`~diagkg.agents.neurosymbolic.NeuroSymbolic`
    (a mixin: the assistant sets the state declared here)."""

    # the system
    catalogue: dict[str, ActionType]
    components: set[str]
    part_types: dict[str, str]
    settings: NeuroSymbolicConfig
    nominal: SimulationResult
    simulator: Simulator
    view: KnowledgeSource
    system_key: str
    # the session so far
    evidence: list[frozenset[str]]
    sources: list[tuple[str, bool, frozenset[str]]]
    excluded: set[str]
    anomaly_seen: bool
    partly_repaired: bool
    outcomes: list[dict[str, Any]]
    start_lights: dict[str, Any]
    flickering: bool
    tried: set[frozenset[str]]
    candidates: set[str]
    plan: set[tuple[str, str]]
    formed: dict[frozenset[str], float]
    last: Action | Hypothesis | None
    _rounds_left: Callable[[], int]
    _replan: Callable[[], None]
    _best_test: Callable[[], Test | None]
    # shorts between two nodes (see _short_suspect)
    short_mode: FaultMode | None
    short_pairs: list[tuple[int, int]] | None     # the pairs of nodes a short may be between (None: to work out)
    short_named: frozenset[str] | None
    blown: set[str]
    renew: frozenset[str]
    overcurrent: bool
    starved: set[str]                # parts whose current read below their working current
    conducts: set[str]               # parts whose continuity (or diode test) read nominal
    readings: list[tuple[str, str, dict[str, Any]]]     # currents and voltages read before any repair
    read_short: dict[str, float]
    blown_by: list[frozenset[str]]
    probed: set[str]
    dark: set[str]
    tests: dict[tuple[str, str], Test]
    executed: set[tuple[str, str]]
    last_test: Test | None

    def _start_shorts(self, knowledge: Knowledge) -> None:
        """A short between two nodes: no test reveals one, and it is a fault of no part the dependencies
        know; once a current reads above the working system's, or a fuse blows again, the parts it may end
        on are named (see :meth:`_short_suspect`)."""
        self.short_mode = next((m for m in (knowledge.modes or {}).values() if m.node_short), None)
        self.short_pairs = None
        self.blown = set()              # fuses found blown whose replacement did not bring the system back
        self.renew = frozenset()        # those fuses, to be named again once the short is cleared
        self.short_named = None         # the last part named as a short's end
        self.overcurrent = False        # a current read above the working system's, or a part starved
        self.starved, self.conducts, self.readings = set(), set(), []
        self.opens_found: frozenset[str] = frozenset()     # the last parts whose opening explained every reading
        self.probed: set[str] = set()       # the dark lamp whose ends' potentials were read (see _probe_dark)
        self.read_short = {}            # parts whose continuity (or diode test) read shorted: the ohms read
        self.blown_by = []              # what a short blew or damaged (see _fuses_blown_by, _short_cleared): named next

    def _reading(self, part: str, kind: str, data: Any, verdict: bool | None) -> None:
        """A test of ``part`` read (``kind``, its ``data`` and verdict): what it says of an open part or a
        short. A part whose current reads below its working one is starved: the parts whose opening would
        give every reading so far are evidence (:meth:`_opens_explaining`); when none would and a starved
        part conducts (its continuity or diode test nominal, in either order), something bypasses it, as
        when a current reads above the working system's: a short. Currents and voltages read before any
        repair are what a short named must give (see :meth:`_agrees`)."""
        if not isinstance(data, dict) or data.get("settled") is False:
            return
        if kind in ("current", "voltages") and not self.partly_repaired:
            self.readings.append((part, kind, data))
            self.short_pairs = None
        working = self.nominal.components.get(part)
        if kind == "current" and verdict and working is not None:
            amps, normal = abs(float(data["current"])), abs(working.current)
            self.overcurrent |= amps > normal
            if normal > 1e-3 and amps < normal:         # starved: less than it carries working
                self.starved.add(part)
        if kind in ("continuity", "diode") and verdict is False:
            self.conducts.add(part)
        if kind in ("continuity", "diode") and data.get("verdict") in ("short", "shorted"):
            self.read_short[part] = float(data.get("resistance") or SHORTED_OHMS)
        if kind == "voltages" and part in self.dark & self.conducts and not self.partly_repaired:
            self.probed.add(part)
        if not (self.starved or self.probed) or self.partly_repaired or not self.settings.starved_shorts:
            return
        opens = self._opens_explaining()
        self.opens_found = frozenset(opens)
        if opens:       # the fault is among them: evidence again with each reading they all give
            self.evidence.append(frozenset(opens))
            self.sources.append((part, True, frozenset(opens)))
        elif self.starved & self.conducts or self.probed:
            self.overcurrent = True

    def _probe_dark(self) -> Test | None:
        """The one lamp seen out of place at the start, dark where the working system lights it, found conducting:
        the potentials at its ends, read next (``probe_dark``); with ``probe_dark_many``, where several lamps are
        out of place, all of them dark, the first of them found conducting."""
        if not self.settings.probe_dark or self.short_mode is None or self.partly_repaired or self.probed:
            return None
        _, dark = self._lights_seen()
        odd = self._out_of_place()
        ready = sorted(odd & dark & self.conducts & self.candidates)
        if not odd <= dark or not ready or (len(odd) > 1 and not self.settings.probe_dark_many):
            return None
        return next((t for lamp in ready for (a, c), t in sorted(self.tests.items()) if c == lamp
                     and (a, c) not in self.executed and self.catalogue[a].observes == "voltages"), None)

    def _lights_seen(self) -> tuple[frozenset[str], frozenset[str]]:
        """The lamps seen lit and dark at the start."""
        return (frozenset(c for c, s in self.start_lights.items() if str(s) == "on"),
                frozenset(c for c, s in self.start_lights.items() if str(s) == "off"))

    def _out_of_place(self) -> frozenset[str]:
        """The lamps seen at the start otherwise than the working system shows them: lit where it keeps them dark,
        dark where it lights them."""
        lit, dark = self._lights_seen()
        working = set(self.nominal.lit)
        return (lit - working) | (dark & working)

    def _opens_explaining(self) -> set[str]:
        """The parts which, cut off at one end (open, blown, burnt out, an end off), show the lights seen at
        the start and every current and voltage read so far, among those not found to conduct (continuity or
        a diode test nominal) nor named: a part in series with a starved one that opened starves it too;
        when none does, a short bypasses the starved part."""
        lit, dark = self._lights_seen()
        out = set()
        for cid in sorted(self.components - self.conducts - self.excluded):
            result = self._opened(cid)
            if result is not None and lit <= set(result.lit) and not dark & set(result.lit) and \
                    self._agrees(result, cut=cid):
                out.add(cid)
        return out

    def _opened(self, cid: str) -> SimulationResult | None:
        """The working system with part ``cid`` cut off at one end (its first port's), simulated; None for a part
        with no ports or a circuit that cannot be solved."""
        component = self.simulator.skeleton.components.get(cid)
        if component is None or not component.ports:
            return None
        try:
            return self.simulator.simulate(NOMINAL.evolve(detached=frozenset({(cid, min(component.ports))})))
        except SimulationError:
            return None

    def _open_worlds(self) -> dict[str, SimulationResult]:
        """The working system with each candidate open (cut off at one end, as :meth:`_opens_explaining` cuts it),
        simulated, while the candidates are all parts whose opening explained every reading (``open_split``;
        none otherwise, or once a repair changed the system): what a reading would show with each of them the
        fault."""
        parts = self.candidates
        if not self.settings.open_split or self.partly_repaired or not parts or not parts <= self.opens_found:
            return {}
        out: dict[str, SimulationResult] = {}
        for cid in sorted(parts):
            result = self._opened(cid)
            if result is None:
                return {}
            out[cid] = result
        return out

    def _screen(self) -> ShortScreen:
        """The short screen of the system (worked out once per version of its description)."""
        assert self.short_mode is not None
        return short_screen(self.view, self.system_key, float(self.short_mode.default or 0.0))

    def _shorted(self, a: tuple[str, str], b: tuple[str, str]) -> SimulationResult | None:
        """The working system with a short between ports ``a`` and ``b``, simulated whole (the screen's
        floating nodes hang on its hub's ties: their potentials are not for reading); None if it cannot be."""
        assert self.short_mode is not None
        try:
            return self.simulator.simulate(NOMINAL.evolve(shorts=((a, b, float(self.short_mode.default or 0.0)),)))
        except SimulationError:
            return None

    def _agrees(self, result: SimulationResult | None, cut: str | None = None) -> bool:
        """Whether a circuit (``result``: the working system with a short, or with part ``cut`` cut off at one
        end) gives every current and voltage read so far (within the tolerances a reading is judged by). The
        end ``cut`` is off in the model reads no potential; cut inside instead (a fuse blown, a filament burnt
        out) it reads its net's: any potential read there agrees."""
        if result is None:
            return False
        for part, kind, data in self.readings:
            there = result.components.get(part)
            if there is None:
                return False
            if kind == "current" and current_off(float(data["current"]), there.current):
                return False
            if kind == "voltages":
                for port, v in (data.get("port_voltages") or {}).items():
                    w = there.port_v.get(port)
                    if part == cut and w is None:
                        continue
                    if potential_off(v, w):
                        return False
        return True

    def _shorts_after(self, verdict: str, data: dict[str, Any], named: frozenset[str]) -> None:
        """A verdict (``partial`` or ``wrong``, with its ``data``) on ``named``. Partial: a fuse among them
        blew, and the system still does not work with a new one — something draws more than it is rated for
        (a short that blows it again); or a short's end was named, and the fuses it blew meanwhile are to be
        named again; or a short's end was named and no fuse was found blown: what the short damaged is named
        next (``short_damage``, :meth:`_short_cleared`). Wrong, while a bulb is seen lit that the working system
        keeps dark (``lit_past``): what the dependencies suspected did not light it, a short between two nodes may
        have (see :meth:`_lit_past`); or wrong, where no part cut off at one end gives the lights seen and every current
        and voltage read so far (``unexplained_shorts``, :meth:`_opens_explaining`): what the dependencies speak
        of does not explain them, a short between two nodes may."""
        if verdict == "wrong":
            self.overcurrent |= (self.settings.lit_past and self._lit_past()) or \
                (self.settings.unexplained_shorts and bool(self.readings) and not self.partly_repaired
                 and not self._opens_explaining())
            return
        fuses = {p for p in data.get("actually_faulty", ()) if self.part_types.get(p) == "Fuse"}
        if fuses and data.get("works") is False and self.settings.blown_fuses:
            self.blown |= fuses
            self.overcurrent, self.short_pairs = True, None
        elif self.blown and named == self.short_named and data.get("works") is False:
            self.renew = frozenset(self.blown)
        elif named == self.short_named and data.get("works") is False and self.settings.short_damage:
            self._short_cleared(named)

    def _short_cleared(self, named: frozenset[str]) -> None:
        """A part named as a short's end was found faulty (its repair cleared the short) and the system still does
        not work (``short_damage``): no more short suspects; what the shorts it may have ended (those left that
        end on it) damage in the working system, as the screen found, is named next. With ``damaging_shorts``, so
        is what any short ending there damages that shows the lights seen and gives the readings: the suspects may
        have been only those that damage nothing, and the short there was not one of them (the readings were
        taken with a fuse it blew open, and a short beside it, upstream of the fuse, gives them too)."""
        self.overcurrent = False
        screen = self._screen()
        nodes = {n for n, ports in screen.nodes.items() if any(c in named for c, _ in ports)}
        pairs = list(self.short_pairs or [])
        if self.settings.damaging_shorts:       # the short there may have been one that damaged something: any that agrees
            lit, dark = self._lights_seen()
            pairs += self._agreeing(screen, [p for p in screen.showing(lit, dark, damaging=True) if set(p) & nodes])
        damaged = {d for pair in pairs if set(pair) & nodes for d in screen.damaged.get(pair, frozenset())}
        self._name_next(damaged - named)

    def _fuses_blown_by(self, parts: set[str]) -> None:
        """``parts``, found shorted by their own test, were repaired and the system still does not work: the fuses
        a short across one of them (as many ohms as its test read) blows in the working system (simulated) are named
        next (``fuses_after_shorted``; the current it drew blew them before it was repaired)."""
        for part in sorted(parts):
            ports = sorted(self.simulator.skeleton.components[part].ports) if part in self.simulator.skeleton.components else []
            if len(ports) != 2:
                continue
            try:
                across = ((part, ports[0]), (part, ports[1]), self.read_short[part])
                result = self.simulator.simulate(NOMINAL.evolve(shorts=(across,)))
            except SimulationError:
                continue
            self._name_next({d.component for d in result.damage if self.part_types.get(d.component) == "Fuse"})

    def _name_next(self, parts: set[str]) -> None:
        """Queue each of ``parts`` still in the system, alone, to be named next (:attr:`blown_by`), once."""
        self.blown_by += [frozenset({p}) for p in sorted(parts) if p in self.components and frozenset({p}) not in self.blown_by]

    def _fuse_replaced(self, part: str) -> None:
        """A fuse a test found faulty was replaced and the system does not work yet: as after naming it (see
        :meth:`_shorts_after`), a short may blow the new one; it is named again once the short is cleared."""
        if self.part_types.get(part) == "Fuse" and self.settings.blown_fuses:
            self.blown.add(part)
            self.overcurrent, self.short_pairs = True, None

    def _look_elsewhere(self) -> Hypothesis | None:
        """The candidates are used up (their suspects ruled out, or nothing left to test among them): where no
        part cut off at one end gives the lights seen and every current and voltage read (``unexplained_shorts``),
        the first part a short may end on (the short suspects go on from there); else None, the candidates
        left aside and the plan made again from what is left. Not while a current or voltage read is what the opening
        of some of them gives and a test of theirs is left (``opens_hold``): those are the candidates, and what the
        tests left of their faults, however unlikely the catalogue makes it (a cable broken inside), is tested."""
        hold = self.settings.opens_hold and bool(self.readings)
        seek = self.settings.unexplained_shorts and not self.overcurrent and self.anomaly_seen
        opens = self._opens_explaining() if hold or seek else set()       # (one simulation per part: worked out once)
        if hold and (held := self.candidates & opens):
            kept = self.candidates, self.plan
            self.candidates, self.plan = held, {(c, m) for c, m in self.plan if c in held}
            if self._best_test() is not None:
                self.formed[frozenset(held)] = 0.0      # (a share of nothing is taken as whole)
                return None
            self.candidates, self.plan = kept
        if seek and not opens:
            self.overcurrent = True
            if (short := self._short_suspect()) is not None:
                self.last = short
                return short
        self.excluded |= self.candidates
        self._replan()
        return None

    def _lit_past(self) -> bool:
        """Whether a bulb was seen lit at the start that the working system keeps dark: a part's opening
        (what the dependencies say of a part) never lights a lamp; a short between two nodes may, by a path
        the working system does not have (an indicator LED lit may be the system's own alarm)."""
        bulbs = {c for c, comp in self.simulator.skeleton.components.items() if comp.is_lamp}
        lit, _ = self._lights_seen()
        return bool(lit & bulbs - set(self.nominal.lit))

    def _lit_at_start(self) -> bool:
        """Whether, before any step, a lamp is seen lit that the working system keeps dark and another dark
        that it lights, and no part cut off at one end shows the lights seen (``lit_at_start``): a short
        between two nodes may do both, feeding one by a path the working system does not have and taking
        the other's current, so the parts it may end on go first (as after a wrong naming while a bulb is so
        lit, :meth:`_lit_past`); the dark lamp's dependencies speak of what feeds it, which the short
        bypasses. A lamp lit alone points at itself, on the short's path, and the dependencies are followed;
        so are an opening that shows the lights (a cable across a lamp come off, a fuse blown lighting an alarm).
        When it holds, the session goes on as after a current above nominal (``overcurrent`` set)."""
        if self.overcurrent or self.outcomes or not self.settings.lit_at_start:
            return False
        lit, dark = self._lights_seen()
        working = set(self.nominal.lit)
        if not lit - working or not dark & working or self._opens_explaining():
            return False
        self.overcurrent = self.anomaly_seen = True
        return True

    def _agreeing(self, screen: ShortScreen, pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Those of the screen's short ``pairs`` (of its nodes) that give every current and voltage read so far."""
        return [(a, b) for a, b in pairs if self._agrees(self._shorted(screen.nodes[a][0], screen.nodes[b][0]))] \
            if self.readings else pairs

    def _suspected_pairs(self, screen: ShortScreen) -> list[tuple[int, int]]:
        """The pairs of nodes a short between which shows the lights seen at the start and gives every current and
        voltage read (:attr:`short_pairs`, worked out again after each reading)."""
        if self.short_pairs is None:
            lit, dark = self._lights_seen()
            pairs = self._agreeing(screen, screen.showing(lit, dark, frozenset(self.blown)))
            if not self.blown and self.settings.damaging_shorts and (not pairs or self.settings.damaging_alike):
                # none that damages nothing (and gives the readings): one that damaged something on its way to the
                # lights seen (a fuse it blew reads no current)
                pairs += self._agreeing(screen, screen.showing(lit, dark, damaging=True))
            self.short_pairs = pairs
        return self.short_pairs

    def _short_split(self) -> Action | None:
        """Before the next short suspect is named (``short_split``): the potentials at the ends of a part, or the
        current through it, when reading them is expected to cost less than it saves. Each pair of nodes a short
        may join is simulated (the working system with that short); were the short each pair in turn, the reading
        would leave the pairs that give the same reading there (:meth:`_alike`). Taken when its minutes (a round's
        included) and those of naming the suspects of what it leaves, weighed by each pair's placements, come
        below naming them all now (:meth:`_naming_minutes`); never with two rounds left or fewer."""
        if not self.settings.short_split or self.renew or not self.settings.shorts or self.short_mode is None or \
                not self.anomaly_seen or self.flickering or self._rounds_left() <= 2:
            return None
        screen = self._screen()
        named = self._named_ends()
        weight = {(a, b): float(screen.placements(a, b, named)) for a, b in self._suspected_pairs(screen)}
        pairs = [pair for pair, placed in weight.items() if placed]
        if len(pairs) < 2:
            return None
        total = sum(weight[pair] for pair in pairs)
        best, least = None, self._naming_minutes(screen, pairs, named)
        shorted = {(a, b): self._shorted(screen.nodes[a][0], screen.nodes[b][0]) for a, b in pairs}
        known: dict[frozenset[tuple[int, int]], float] = {}

        def naming(rest: frozenset[tuple[int, int]]) -> float:
            if rest not in known:
                known[rest] = self._naming_minutes(screen, sorted(rest), named)
            return known[rest]

        for (action, part), test in sorted(self.tests.items()):
            kind = self.catalogue[action].observes
            if (action, part) in self.executed or part not in self.components or kind not in SPLIT_KINDS:
                continue
            seen = {pair: self._predicted(shorted[pair], part, kind) for pair in pairs}
            # what is left once it is read, the short being each pair in turn: the pairs that agree with it
            left = {pair: frozenset(q for q in pairs if self._alike(seen[pair], seen[q])) for pair in pairs}
            if all(len(rest) == len(pairs) for rest in left.values()):
                continue
            minutes = test.cost + self.settings.round_minutes + sum(
                weight[pair] / total * naming(rest) for pair, rest in left.items())
            if minutes < least:
                best, least = test, minutes
        return self._take(best) if best is not None else None

    def _take(self, test: Test) -> Action:
        """``test`` as the next step: the action, noted as the last step and test, and as executed."""
        self.last, self.last_test = Action(test.action, (test.component,)), test
        self.executed.add((test.action, test.component))
        return self.last

    @staticmethod
    def _predicted(result: SimulationResult | None, part: str, kind: str) -> dict[str, float | None] | float | None:
        """What reading ``kind`` of ``part`` gives in ``result``: the potentials at its ends, or the current
        through it (None: no solution, or no such part)."""
        there = result.components.get(part) if result is not None else None
        if there is None:
            return None
        return abs(there.current) if kind == "current" else dict(there.port_v)

    @staticmethod
    def _alike(a: dict[str, float | None] | float | None, b: dict[str, float | None] | float | None) -> bool:
        """Whether two readings read the same, within the tolerances a reading is judged by."""
        if a is None or b is None:
            return a is b
        if isinstance(a, float) or isinstance(b, float):
            return isinstance(a, float) and isinstance(b, float) and not current_off(a, b)
        return a.keys() == b.keys() and not any(potential_off(a[k], b[k]) for k in a)

    def _naming_minutes(self, screen: ShortScreen, pairs: list[tuple[int, int]], named: frozenset[str]) -> float:
        """The minutes expected to clear a short between one of ``pairs`` of nodes (each placement alike, none on a
        part of ``named``) by naming the parts it may end on one by one, the most placements per minute first: each
        naming's minutes (:meth:`_naming_price`) weighed by the share of placements not cleared before it."""
        count = screen.ending(pairs, named)
        order = sorted((c for c in count if c in self.components), key=lambda c: (-count[c] / self._naming_price(c), c))
        total = sum(screen.placements(a, b, named) for a, b in pairs)
        minutes, chosen = 0.0, set[str]()
        for part in order:
            left = screen.uncleared(pairs, chosen, named)
            if not left:
                break
            minutes += left / total * self._naming_price(part)
            chosen.add(part)
        return minutes

    def _naming_price(self, part: str) -> float:
        """What naming ``part`` costs at least, a round's minutes included (the order short suspects are named in)."""
        return naming_floor(self.catalogue, self.part_types.get(part, "")) + self.settings.round_minutes

    def _named_ends(self) -> frozenset[str]:
        """The parts named already: a short's placements on them are ruled out (naming either end of a short clears
        it); a part only set aside (its own faults ruled out, the candidates used up) may still be an end."""
        return frozenset(c for key in self.tried for c in key)

    def _short_suspect(self) -> Hypothesis | None:
        """The next part a short between two nodes may end on, among the shorts that show the lights seen
        at the start (:func:`~diagkg.agents.neurosymbolic_knowledge.short_screen`, worked out when first
        needed) and give every current and voltage read: the part that ends the largest share of the
        placements left (none on a part named already) per minute of naming it (``short_by_cost``; in the
        last round the likeliest); None when there is none left (or a light comes and goes: a short
        does not make one)."""
        if self.renew:
            renew, self.renew = self.renew, frozenset()
            return Hypothesis(renew, "blown again while the short was there")
        if not self.settings.shorts or self.short_mode is None or not self.anomaly_seen or self.flickering:
            return None
        screen = self._screen()
        pairs = self._suspected_pairs(screen)
        named = self._named_ends()      # the placements left
        weighed = [(c, w) for c, w in screen.weigh(pairs, named) if c in self.components]
        if self.settings.short_by_cost:
            # per minute of naming (a round's minutes included), unless that finds the short less surely in the
            # rounds left (a fuse it blew is named again after it)
            total = sum(screen.placements(a, b, named) for a, b in pairs) or 1

            def price(part: str) -> float:
                # (``spare_damaged``) a part the short may have damaged without ending on it (a fuse it blew) is
                # named again once the short is found: its naming then costs twice, in that share of placements
                again = sum(screen.uncleared([pair], {part}, named) for pair in pairs
                            if part in screen.damaged.get(pair, ())) / total if self.settings.spare_damaged else 0.0
                return self._naming_price(part) * (1 + again)
            by_cost = sorted(weighed, key=lambda cw: -cw[1] / price(cw[0]))
            rounds = self._rounds_left() - bool(self.blown)

            def chance(order: list[tuple[str, float]]) -> float:
                return screen.covered(pairs, frozenset(c for c, _ in order[:rounds]), named)

            weighed = by_cost if chance(by_cost) >= chance(weighed) - 1e-9 else weighed
        for part, _ in weighed:
            key = frozenset({part})
            if key not in self.tried:
                self.tried.add(key)
                self.short_named = key
                return Hypothesis(key, "a short between two nodes that shows the lights seen may end on it")
        return None
