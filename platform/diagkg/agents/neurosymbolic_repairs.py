"""What the neuro-symbolic assistant (:mod:`diagkg.agents.neurosymbolic`) makes of a part found
faulty and of inspected cable ends: :class:`Repairs`, a mixin that reads the state the assistant
keeps.

* **Cable ends.** An inspection (connections, typed) shows each end of a cable on a terminal or
  not; against the description's nets an end on another net names the two cables whose ends
  swapped (:meth:`Repairs._crossed`), a part whose end should sit beside it and does not is off
  its terminal (:meth:`Repairs._missing`), a part whose two ends each sit where the other should is
  mounted the wrong way round (:meth:`Repairs._reversed`: itself faulty, not its neighbours), and a
  cable's two potentials say whether an end floats or the cable conducts (:meth:`Repairs._cable_potentials`).
* **A fault that does not stop the system working.** A part a local test finds faulty that none
  of the main lamps' anomalies implicates (an indicator LED that is open while the lamp is dark for
  another reason) is set aside (:meth:`Repairs._sets_aside`): what it explains is accounted for,
  and the search goes on for what keeps the main lamps dark. It is repaired last, if at all. Not when
  its fault alone shows every light seen (then it explains the main lamps too).
* **A short between two nodes.** No test reveals one; once a current reads above the working
  system's, a fuse blows again, a part that conducts carries less than its working current (starved)
  and no part that opened explains that, or a naming is judged wrong (or the candidates are used up)
  where a bulb is lit that the working system keeps dark or no part that opened explains the readings,
  the parts a short that shows the lights seen, and gives every current and voltage read so far, may end
  on are named, the most placements left per minute of naming first (:meth:`Repairs._short_suspect`).
  Where opening a part explains it, those parts are evidence (:meth:`Repairs._opens_explaining`).
* **A source read turned round** is its own fault, whatever the wiring makes it depend on
  (:meth:`Repairs._turned`).
* **Repair rather than name.** While a fault is set aside, or some anomaly seen is not one the part
  could explain, naming that part alone cannot be the whole diagnosis: it is repaired with the
  catalogue's own repair instead (:meth:`Repairs._repair_instead`: the same work and minutes as
  naming it), and the session ends when that makes the system work again.
"""

from __future__ import annotations

from typing import Any, Callable

from ..env.actions import ActionType, repairs_fitting
from ..env.outcomes import Outcome, TerminalState
from ..env.service import Action, Hypothesis
from ..env.verification import REPAIR_TEMPLATE, naming_floor
from ..env.worlds import FaultMode
from ..errors import SimulationError
from ..kg.store import KnowledgeSource
from ..sim.circuit import NOMINAL
from ..sim.results import SimulationResult
from ..sim.simulator import Simulator
from .neurosymbolic_config import NeuroSymbolicConfig
from .neurosymbolic_knowledge import Knowledge, ShortScreen, Test, short_screen

SHORTED_OHMS = 0.001         # a part a diode test read shorted (no ohms read), simulated (see Repairs._fuses_blown_by)

VOLTAGE_TOLERANCE = 0.5      # volts
CURRENT_TOLERANCE = 0.1      # relative


def current_off(measured: float, expected: float) -> bool:
    """Whether a current read (``measured``, A) is off the one a circuit gives (``expected``): by more than
    :data:`CURRENT_TOLERANCE` of it (of a milliampere at least), whichever way it flows."""
    amps = abs(expected)
    return abs(measured - amps) > CURRENT_TOLERANCE * max(amps, 1e-3)


class Repairs:
    """Cable ends, faults set aside and repairs of :class:`~diagkg.agents.neurosymbolic.NeuroSymbolic`
    (a mixin: the assistant sets the state declared here)."""

    # configuration
    aside_found: bool
    # the system
    catalogue: dict[str, ActionType]
    components: set[str]
    part_types: dict[str, str]
    problems: dict[str, set[str]]
    dependents: dict[str, int]       # how many parts depend on each
    cables: set[str]
    main_lamps: set[str]
    expected_nets: dict[tuple[str, str], int]
    on_net: dict[int, list[tuple[str, str]]]
    # the session so far
    evidence: list[frozenset[str]]
    sources: list[tuple[str, bool, frozenset[str]]]
    excluded: set[str]
    cleared: set[tuple[str, str]]
    named_first: list[frozenset[str]]
    anomaly_seen: bool
    found: dict[str, bool]           # parts a test found faulty: True when an end of theirs was off or loose
    aside: list[str]                 # of those, the ones set aside (they do not keep the main lamps dark)
    unrepairable: set[str]           # parts whose repair was refused (named instead)
    # shorts between two nodes (see _short_suspect)
    settings: NeuroSymbolicConfig
    short_mode: FaultMode | None
    short_pairs: list[tuple[int, int]] | None     # the pairs of nodes a short may be between (None: to work out)
    short_named: frozenset[str] | None
    blown: set[str]
    renew: frozenset[str]
    overcurrent: bool
    starved: set[str]                # parts whose current read below their working current
    conducts: set[str]               # parts whose continuity (or diode test) read nominal
    readings: list[tuple[str, str, dict[str, Any]]]     # currents and voltages read before any repair
    partly_repaired: bool
    outcomes: list[dict[str, Any]]
    nominal: SimulationResult
    simulator: Simulator
    view: KnowledgeSource
    system_key: str
    start_lights: dict[str, Any]
    flickering: bool
    tried: set[frozenset[str]]
    _rounds_left: Callable[[], int]
    _explains_all: Callable[[str], bool]
    _replan: Callable[[], None]
    candidates: set[str]
    last: Action | Hypothesis | None
    last_test: Test | None
    tests: dict[tuple[str, str], Test]
    executed: set[tuple[str, str]]
    look_again: list[str]            # cables a partial naming repaired, to inspect next (see _after_partial)
    just_repaired: set[str]          # … and every such cable so far (see _crossed)
    partners: list[frozenset[str]]   # a cable whose end an inspection found beside one of those: named next
    formed: dict[frozenset[str], float]
    plan: set[tuple[str, str]]
    _best_test: Callable[[], Test | None]
    read_short: dict[str, float]
    blown_by: list[frozenset[str]]

    def _after_partial(self, named: frozenset[str], data: dict[str, Any]) -> None:
        """A naming judged partial that leaves the system not working: the one cable of it found faulty is inspected
        next (``look_after_partial``). Where two cables' ends were crossed and one was named, its repair puts its
        ends back where they belong, and the other cable's end is still there: it shows beside the repaired one's,
        and :meth:`_crossed` names that cable alone."""
        found = sorted(p for p in data.get("actually_faulty", ()) if p in named and p in self.cables)
        # (two cables found faulty in one naming: a crossing of the two was repaired whole)
        if self.settings.look_after_partial and data.get("works") is False and len(found) == 1:
            self.just_repaired |= set(found)
            self.look_again += [c for c in found if c not in self.look_again]
        if self.settings.fuses_after_shorted and data.get("works") is False:
            self._fuses_blown_by(set(data.get("actually_faulty", ())) & set(self.read_short))

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
            for fuse in sorted({d.component for d in result.damage if self.part_types.get(d.component) == "Fuse"}):
                if frozenset({fuse}) not in self.blown_by and fuse in self.components:
                    self.blown_by.append(frozenset({fuse}))

    def _first_named(self, queue: list[frozenset[str]], why: Callable[[frozenset[str]], str]) -> Hypothesis | None:
        """The first diagnosis of ``queue`` (taken off it, with those before it) not tried yet and clear of the
        parts ruled out, named (and marked tried); None when none is left."""
        while queue:
            parts = queue.pop(0)
            if parts not in self.tried and not parts & self.excluded:
                self.tried.add(parts)
                return Hypothesis(parts, why(parts))
        return None

    def _looked_again(self) -> Action | Hypothesis | None:
        """The cable whose end the inspection of a cable a partial naming repaired found beside it, named (before
        any other suspect: an end seen where it does not belong); else that inspection (see :meth:`_after_partial`)."""
        if (partner := self._first_named(self.partners, lambda _: "its end sits beside a cable repaired, where that "
                                         "cable's end was")) is not None or \
                (partner := self._first_named(self.blown_by, lambda _: "damaged by the short of a part repaired")) is not None:
            self.last = partner
            return partner
        while self.look_again and self._rounds_left() > 1:      # (a round for the inspection, one to name)
            cable = self.look_again.pop(0)
            test = next((t for (a, c), t in sorted(self.tests.items()) if c == cable
                         and self.catalogue[a].observes == "connections" and (a, c) not in self.executed), None)
            if test is not None:
                self.last, self.last_test = Action(test.action, (test.component,)), test
                self.executed.add((test.action, test.component))
                return self.last
        return None

    def _sets_aside(self, part: str, end_off: bool) -> bool:
        """``part`` was just found faulty (``end_off``: an end of it off or loose); set it aside when
        some main lamp is seen dark, nothing depends on it, none of the main lamps' anomalies implicates
        it and they still implicate a part not ruled out: the anomalies it explains are accounted for, and it leaves
        the candidates."""
        self.found[part] = end_off
        lamps = [implicated for comp, anomalous, implicated in self.sources if anomalous and comp in self.main_lamps]
        if not self.aside_found or not lamps or any(part in implicated for implicated in lamps):
            return False
        # only a part nothing depends on (an indicator): a part others depend on may feed the lamps too,
        # where the graph leaves that dependency out
        if self.dependents.get(part, 0):
            return False
        # … and only while the main lamps' anomalies have suspects of their own left (where the graph gives
        # a lamp few dependencies, the part found faulty is the best explanation there is), and its fault alone
        # does not show every light seen (then it explains them, whatever the graph says)
        if not self._suspects_left(lamps, part) or self._explains_all(part):
            return False
        self.aside.append(part)
        self.excluded.add(part)
        self._account_for({part})
        return True

    def _suspects_left(self, implicated: list[frozenset[str]], but: str) -> bool:
        """Whether the parts these anomalies implicate, ``but`` and the parts ruled out aside, have a
        problem no test has ruled out."""
        suspects = {c for parts in implicated for c in parts} - self.excluded - {but}
        return any((c, m) not in self.cleared for c in suspects for m in self.problems.get(c, ()))

    def _account_for(self, parts: set[str]) -> None:
        """Drop the anomalies ``parts`` may explain (they are known faulty: not evidence of more), and
        what they showed working (a faulty light vouches for nothing: a reversed LED lights on a
        reversed battery)."""
        self._drop_evidence(lambda comp, anomalous, implicated: bool(implicated & parts) if anomalous else comp in parts)

    def _drop_evidence(self, drop: Callable[[str, bool, frozenset[str]], bool]) -> set[str]:
        """Drop the evidence sets whose source (part, anomalous, implicated) ``drop`` says; the parts
        whose evidence went."""
        dropped = [drop(*source) for source in self.sources]
        gone = {source[0] for source, out in zip(self.sources, dropped, strict=True) if out}
        self.evidence = [e for e, out in zip(self.evidence, dropped, strict=True) if not out]
        self.sources = [source for source, out in zip(self.sources, dropped, strict=True) if not out]
        return gone

    def _repair_instead(self, hyp: Hypothesis) -> Action | None:
        """The catalogue's repair of the one part ``hyp`` names, when naming it alone cannot be the
        whole diagnosis (a fault is set aside, or an anomaly seen does not implicate it and implicates
        parts not ruled out) and a test found it faulty: for a cable with an end off or loose the cheapest repair fitting it
        (reconnecting), otherwise the repair that does what naming does (a replacement)."""
        if not self.aside_found or len(hyp.components) != 1:
            return None
        part = next(iter(hyp.components))
        if part not in self.found or part in self.unrepairable or part not in self.part_types:
            return None
        # anomalies it cannot explain, that still have suspects of their own: another fault, likely
        unexplained = [implicated for _, anomalous, implicated in self.sources if anomalous and part not in implicated]
        if not (self.aside or self._suspects_left(unexplained, part)):
            return None
        fitting = repairs_fitting(self.catalogue, self.part_types[part], "component")
        if not (self.found[part] and part in self.cables):
            fitting = [spec for spec in fitting if spec.template == REPAIR_TEMPLATE]
        return Action(fitting[0].id, (part,)) if fitting else None

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
        self.read_short: dict[str, float] = {}      # parts whose continuity (or diode test) read shorted: the ohms read
        self.blown_by: list[frozenset[str]] = []     # fuses a part found shorted and repaired blows: named next

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
        if not self.starved or self.partly_repaired or not self.settings.starved_shorts:
            return
        opens = self._opens_explaining()
        if opens:       # the fault is among them: evidence again with each reading they all give
            self.evidence.append(frozenset(opens))
            self.sources.append((part, True, frozenset(opens)))
        elif self.starved & self.conducts:
            self.overcurrent = True

    def _lights_seen(self) -> tuple[frozenset[str], frozenset[str]]:
        """The lamps seen lit and dark at the start."""
        return (frozenset(c for c, s in self.start_lights.items() if str(s) == "on"),
                frozenset(c for c, s in self.start_lights.items() if str(s) == "off"))

    def _opens_explaining(self) -> set[str]:
        """The parts which, cut off at one end (open, blown, burnt out, an end off), show the lights seen at
        the start and every current and voltage read so far, among those not found to conduct (continuity or
        a diode test nominal) nor named: a part in series with a starved one that opened starves it too;
        when none does, a short bypasses the starved part."""
        lit, dark = self._lights_seen()
        components = self.simulator.skeleton.components
        out = set()
        for cid in sorted(self.components - self.conducts - self.excluded):
            ports = sorted(components[cid].ports) if cid in components else []
            if not ports:
                continue
            try:
                result = self.simulator.simulate(NOMINAL.evolve(detached=frozenset({(cid, ports[0])})))
            except SimulationError:
                continue
            if lit <= set(result.lit) and not dark & set(result.lit) and \
                    self._agrees(result, cut=cid):
                out.add(cid)
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
                    if (v is None) != (w is None) or (v is not None and w is not None and abs(v - w) > VOLTAGE_TOLERANCE):
                        return False
        return True

    def _turned(self, test: Test, outcome: Outcome) -> bool:
        """Whether a source's two potentials read the other way round from the working system's: nothing
        outside a source turns the voltage across it, so that reading is of the source alone."""
        volts = (data_of(outcome, test.component) or {}).get("port_voltages") or {}
        working = self.nominal.components.get(test.component)
        if self.part_types.get(test.component) != "VoltageSource" or working is None or len(volts) != 2:
            return False
        (p, vp), (q, vq) = sorted(volts.items())
        wp, wq = working.port_v.get(p), working.port_v.get(q)
        if vp is None or vq is None or wp is None or wq is None:
            return False
        across, should = float(vp) - float(vq), wp - wq
        return abs(across - should) > VOLTAGE_TOLERANCE and across * should < 0

    def _shorts_after(self, verdict: str, data: dict[str, Any], named: frozenset[str]) -> None:
        """A verdict (``partial`` or ``wrong``, with its ``data``) on ``named``. Partial: a fuse among them
        blew, and the system still does not work with a new one — something draws more than it is rated for
        (a short that blows it again); or a short's end was named, and the fuses it blew meanwhile are to be
        named again. Wrong, while a bulb is seen lit that the working system keeps dark (``lit_past``): what
        the dependencies suspected did not light it, a short between two nodes may have (see
        :meth:`_lit_past`); or wrong, where no part cut off at one end gives the lights seen and every current
        and voltage read so far (``unexplained_shorts``, :meth:`_opens_explaining`): what the dependencies speak
        of does not explain them, a short between two nodes may."""
        if verdict == "wrong":
            self.overcurrent |= (self.settings.lit_past and self._lit_past()) or \
                (self.settings.unexplained_shorts and bool(self.readings) and not self._opens_explaining())
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
        end on it) damage in the working system, as the screen found, is named next."""
        self.overcurrent = False
        screen = self._screen()
        nodes = {n for n, ports in screen.nodes.items() if any(c in named for c, _ in ports)}
        damaged = {d for pair in self.short_pairs or [] if set(pair) & nodes for d in screen.damaged.get(pair, frozenset())}
        self.blown_by += [frozenset({d}) for d in sorted(damaged - named) if d in self.components
                          and frozenset({d}) not in self.blown_by]

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
        if self.settings.opens_hold and self.readings and (held := self.candidates & self._opens_explaining()):
            kept = self.candidates, self.plan
            self.candidates, self.plan = held, {(c, m) for c, m in self.plan if c in held}
            if self._best_test() is not None:
                self.formed[frozenset(held)] = 0.0      # (a share of nothing is taken as whole)
                return None
            self.candidates, self.plan = kept
        if self.settings.unexplained_shorts and not self.overcurrent and self.anomaly_seen and not self._opens_explaining():
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
        bulbs = {c for c, comp in self.simulator.skeleton.components.items() if comp.type == "Bulb"}
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
        if self.short_pairs is None:
            lit, dark = self._lights_seen()
            def agreeing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
                # … and every current and voltage read so far (before any repair)
                return [(a, b) for a, b in pairs if self._agrees(self._shorted(screen.nodes[a][0], screen.nodes[b][0]))] \
                    if self.readings else pairs

            pairs = agreeing(screen.showing(lit, dark, frozenset(self.blown)))
            if not pairs and not self.blown and self.settings.damaging_shorts:
                # none that damages nothing (and gives the readings): one that damaged something on its way to the
                # lights seen (a fuse it blew reads no current)
                pairs = agreeing(screen.showing(lit, dark, damaging=True))
            self.short_pairs = pairs
        # the placements left: none on a part named already (naming either end of a short clears it); a part
        # only set aside (its own faults ruled out, the candidates used up) may still be an end
        named = frozenset(c for key in self.tried for c in key)
        weighed = [(c, w) for c, w in screen.weigh(self.short_pairs, named) if c in self.components]
        if self.settings.short_by_cost:
            # per minute of naming (a round's minutes included), unless that finds the short less surely in the
            # rounds left (a fuse it blew is named again after it)
            by_cost = sorted(weighed, key=lambda cw: -cw[1] / (naming_floor(self.catalogue, self.part_types.get(cw[0], ""))
                                                                 + self.settings.round_minutes))
            rounds = self._rounds_left() - bool(self.blown)

            def chance(order: list[tuple[str, float]]) -> float:
                return screen.covered(self.short_pairs or [], frozenset(c for c, _ in order[:rounds]), named)

            weighed = by_cost if chance(by_cost) >= chance(weighed) - 1e-9 else weighed
        for part, _ in weighed:
            key = frozenset({part})
            if key not in self.tried:
                self.tried.add(key)
                self.short_named = key
                return Hypothesis(key, "a short between two nodes that shows the lights seen may end on it")
        return None

    @staticmethod
    def _end_off(part: str, outcome: Outcome) -> bool:
        """Whether an inspection found an end of ``part`` off its terminal or loose."""
        ends = data_of(outcome, part)
        return isinstance(ends, dict) and any(e["state"] != TerminalState.ATTACHED for e in ends.values())

    def _the_aside(self) -> Hypothesis | None:
        """Nothing else left to look for: name the faults set aside; with none set aside, the first part a short
        between two nodes may end on (``last_shorts``: as when no part cut off at one end explains what was seen);
        None when there is none of those either."""
        if not self.aside:
            lit, dark = self._lights_seen()
            if self.settings.last_shorts and not self.overcurrent and (lit - set(self.nominal.lit) or dark & set(self.nominal.lit)):
                self.overcurrent = self.anomaly_seen = True      # the lamps seen at the start are the anomaly
                return self._short_suspect()
            return None
        parts, self.aside = frozenset(self.aside), []
        return Hypothesis(parts, "found faulty earlier, set aside while the main lamps stayed dark")

    # ------------------------------------------------------------------
    def _attached_ends(self, cable: str, outcome: Outcome) -> list[tuple[int | None, set[str]]]:
        """Each end of ``cable`` an inspection (connections, typed) found on a terminal: the net the
        description puts it on, and the ports (``part.port``) it was found attached to."""
        ends = data_of(outcome, cable)
        if not isinstance(ends, dict):
            return []
        return [(self.expected_nets.get((cable, port)), set(end["attached_to"])) for port, end in sorted(ends.items())
                if end["state"] == TerminalState.ATTACHED]

    def _crossed(self, cable: str, outcome: Outcome) -> list[frozenset[str]]:
        """The pairs of cables whose swapped ends explain ``cable``'s end seen attached on another net
        than its own: an end of ``cable`` and a cable end nominally on the net it sits on swapped (beside a
        cable's end or any other part's), or the cable end it sits beside and a cable end nominally beside
        ``cable``'s. Two crossings look alike from here; each is one naming of two cables."""
        def cables_on(net: int | None, but: str) -> set[str]:
            return {c for c, _ in self.on_net.get(net, []) if c in self.cables and c != but} if net is not None else set()

        pairs: list[frozenset[str]] = []
        for own, attached in self._attached_ends(cable, outcome):
            for other in sorted(attached):
                owner, _, other_port = other.partition(".")
                there = self.expected_nets.get((owner, other_port))
                if there is None or there == own:
                    continue
                if owner in self.cables and cable in self.just_repaired and owner in self.components:
                    self.partners.append(frozenset({owner}))    # its partner was repaired: this end is left there
                elif owner in self.cables:
                    pairs += [frozenset({owner, m}) for m in sorted(cables_on(own, cable) - {owner})]
                # the cables nominally on the net it sits on (beside a cable's end or another part's)
                pairs += [frozenset({cable, b}) for b in sorted(cables_on(there, owner) - {cable})]
        return [p for p in dict.fromkeys(pairs) if len(p) == 2 and p <= self.components]

    def _missing(self, cable: str, outcome: Outcome) -> list[frozenset[str]]:
        """The parts whose end should sit beside an end of ``cable`` and is not there (against the
        description's nets): that end is off its terminal. Parts not fitted aside."""
        out = [frozenset({c}) for own, attached in self._attached_ends(cable, outcome) if own is not None
               for c, p in self.on_net[own] if c != cable and c in self.components and f"{c}.{p}" not in attached]
        return list(dict.fromkeys(out))

    def _reversed(self, part: str, outcome: Outcome) -> bool:
        """Whether an inspection (connections, typed) shows ``part``'s two ends each where the other one
        should be, against the description's nets: the part is mounted the wrong way round, and the
        parts it should sit beside are where they should be (none of their ends is off)."""
        ends = data_of(outcome, part)
        if not isinstance(ends, dict) or len(ends) != 2 or \
                any(end["state"] != TerminalState.ATTACHED for end in ends.values()):
            return False
        (p, at_p), (q, at_q) = sorted(ends.items())

        def beside(port: str) -> set[str] | None:
            net = self.expected_nets.get((part, port))
            return None if net is None else {f"{c}.{x}" for c, x in self.on_net.get(net, []) if c != part}

        should_p, should_q = beside(p), beside(q)
        return should_p is not None and should_q is not None and should_p != should_q and \
            set(at_p["attached_to"]) == should_q and set(at_q["attached_to"]) == should_p

    def _cable_potentials(self, test: Test, outcome: Outcome) -> bool:
        """What a cable's two potentials say of the cable itself: an end that floats is off its
        terminal (name the cable first); two ends at one potential show it conducts, so its own end
        faults are ruled out whatever the potential (a wrong one comes from further along its side).
        True when the reading is fully accounted for here."""
        volts = (data_of(outcome, test.component) or {}).get("port_voltages") or {}
        if not volts:
            return False
        if any(v is None for v in volts.values()):
            self.anomaly_seen = True
            shown = frozenset({test.component})
            if shown not in self.named_first:
                self.named_first.append(shown)
            return True
        if max(volts.values()) - min(volts.values()) <= VOLTAGE_TOLERANCE:
            self.cleared |= {(test.component, m) for m in test.modes}
        return False


def data_of(outcome: Outcome, part: str) -> Any:
    """What an outcome's typed data records of ``part`` (None when nothing)."""
    return (outcome.get("data") or {}).get(part)
