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
* **A short between two nodes**, and readings an opened part would give: see
  :class:`~diagkg.agents.neurosymbolic_shorts.Shorts`, which this mixin builds on.
* **A source read turned round, or flat,** is its own fault, whatever the wiring makes it depend on
  (:meth:`Repairs._own_voltage_off`).
* **Repair rather than name.** While a fault is set aside, or some anomaly seen is not one the part
  could explain, naming that part alone cannot be the whole diagnosis: it is repaired with the
  catalogue's own repair instead (:meth:`Repairs._repair_instead`: the same work and minutes as
  naming it), and the session ends when that makes the system work again.
"""

from __future__ import annotations

from typing import Any, Callable

from ..env.actions import repairs_fitting
from ..env.outcomes import Outcome, TerminalState
from ..env.service import Action, Hypothesis
from ..env.verification import REPAIR_TEMPLATE
from .neurosymbolic_knowledge import Test
from .neurosymbolic_shorts import VOLTAGE_TOLERANCE, Shorts


class Repairs(Shorts):
    """Cable ends, faults set aside and repairs of :class:`~diagkg.agents.neurosymbolic.NeuroSymbolic`
    (a mixin: the assistant sets the state declared here)."""

    # configuration
    aside_found: bool
    source_local: bool
    last_test: Test | None
    # the system
    problems: dict[str, set[str]]
    dependents: dict[str, int]       # how many parts depend on each
    cables: set[str]
    main_lamps: set[str]
    expected_nets: dict[tuple[str, str], int]
    on_net: dict[int, list[tuple[str, str]]]
    # the session so far
    cleared: set[tuple[str, str]]
    named_first: list[frozenset[str]]
    found: dict[str, bool]           # parts a test found faulty: True when an end of theirs was off or loose
    aside: list[str]                 # of those, the ones set aside (they do not keep the main lamps dark)
    unrepairable: set[str]           # parts whose repair was refused (named instead)
    _explains_all: Callable[[str], bool]
    look_again: list[str]            # cables a partial naming repaired, to inspect next (see _after_partial)
    just_repaired: set[str]          # … and every such cable so far (see _crossed)
    partners: list[frozenset[str]]   # a cable whose end an inspection found beside one of those: named next

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
        self._drop_probe()

    def _part_repaired(self, part: str) -> None:
        """``part`` repaired by the catalogue's repair, the system not working yet: a fuse counts as blown again
        (:meth:`_fuse_replaced`), and what the dark lamp's potentials said goes (:meth:`_drop_probe`)."""
        self._fuse_replaced(part)
        self._drop_probe()

    def _drop_probe(self) -> None:
        """A repair helped only partly: the dark lamp's potentials (:meth:`_probe_dark`) were read with that fault in
        place, and are no evidence now."""
        if self.probed:
            self._drop_evidence(lambda part, anomalous, implicated: part in self.probed)

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
                return self._take(test)
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

    def _across_of(self, part: str, data: Any) -> tuple[float, float] | None:
        """A source's voltage across its terminals as read (``data``: the reading of it), and as in the working
        system (None when the part is no source or a potential is missing)."""
        volts = (data if isinstance(data, dict) else {}).get("port_voltages") or {}
        working = self.nominal.components.get(part)
        if self.part_types.get(part) != "VoltageSource" or working is None or len(volts) != 2:
            return None
        (p, vp), (q, vq) = sorted(volts.items())
        wp, wq = working.port_v.get(p), working.port_v.get(q)
        if vp is None or vq is None or wp is None or wq is None:
            return None
        return float(vp) - float(vq), wp - wq

    def _own_voltage_off(self, test: Test, outcome: Outcome) -> bool:
        """Whether the voltage across a source reads other than the working system's: the other way round
        (turned), or less (flat: a cell of a stack, whose terminals both sit away from ground). Nothing
        outside a source sets the voltage across it, so that reading is of the source alone."""
        across = self._across_of(test.component, data_of(outcome, test.component))
        return across is not None and abs(across[0] - across[1]) > VOLTAGE_TOLERANCE

    def _no_drop(self, part: str, outcome: Outcome) -> bool:
        """Whether ``part`` (no cable, no source) reads the same potential at both ends where the working system
        drops a voltage across it, while parts elsewhere opened explain every reading (``open_split``): no current
        flows through it, and the reading speaks of a break beyond it more than of the part itself (a string of
        lamps in series, one burnt out: each lamp before it reads the supply at both ends)."""
        if not self.settings.open_split or self.partly_repaired or not self.opens_found - {part} or \
                self.part_types.get(part) in ("Cable", "VoltageSource"):
            return False
        volts = [v for v in ((data_of(outcome, part) or {}).get("port_voltages") or {}).values() if v is not None]
        working = [v for v in self.nominal.components[part].port_v.values() if v is not None] \
            if part in self.nominal.components else []
        return len(volts) == 2 == len(working) and abs(volts[0] - volts[1]) <= VOLTAGE_TOLERANCE < \
            abs(working[0] - working[1])

    def _reading(self, part: str, kind: str, data: Any, verdict: bool | None) -> None:
        """A source's potentials may read off (or keep changing) while the voltage across it is right (a short
        draws its current through a resistor before it, a loose end elsewhere): its own faults, which the
        reading tests, are then ruled out, whatever the anomaly says of the rest."""
        test = self.last_test
        if kind == "voltages" and verdict and self.source_local and test is not None and test.component == part \
                and (across := self._across_of(part, data)) is not None and abs(across[0] - across[1]) <= VOLTAGE_TOLERANCE:
            self.cleared |= {(part, m) for m in test.modes}
        super()._reading(part, kind, data, verdict)

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
            if self.settings.last_shorts and not self.overcurrent and self._out_of_place():
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
