"""Scenario checks by simulation: does a scenario do what it claims?

``diagkg check`` runs these on scenarios of the store (or on files, in a
scratch copy of the store's knowledge). Each check simulates the scenario
through the service agent and reports, located in the scenario's file:

* ``observable`` — the faults change something a person can see (a lamp or
  LED, lit, dark or flickering) or measure (a voltage at a terminal), as set
  up or with a hand switch worked (a switch stuck closed shows only when it is
  opened); an intermittent fault is tried over several seeds;
* ``working`` — the faults do not leave the system working as a session judges it (every lamp the working
  system lights lit, its switch controlling them): such a session would end in success at its first action,
  whatever it is (an LED that is the system's main light must be declared ``dk:isIndicator false``);
* ``masking`` — with several faults, each one changes something (as set up
  or with a hand switch worked) while the others are present, unless the
  scenario says it is hidden on purpose (``dk:masked true`` on the fault: a
  misleading multiple fault); a fault declared masked that is not hidden is
  reported too;
* ``repair`` — the ideal repair, action by action, brings the system back to
  nominal (as the service agent judges it, over several seeds when a fault is
  intermittent);
* ``hypotheses`` — the correct hypothesis (the stated faulty components and any
  other part whose injected fault is present) is verified as correct, and a wrong
  one (a part that is not faulty) is not;
* ``symptoms`` — each symptom the scenario states as data
  (``dk:statedSymptom``: a lamp or LED lit, dark or flickering) agrees with
  the simulation of the faulty system as found;
* ``damage`` — what the faults damage as soon as they are injected (a shorted
  lamp blowing a fuse: ontology/behaviour.ttl's damage rules), said as a
  note: the part stays damaged until it is replaced, so a scenario relying on
  it names it among its faulty components and replaces it in its ideal repair;
* ``placement`` — a *warning*: a fault between two ports that its mode's ``dk:otherTargetRule`` "alike"
  does not place (two cables' ends of different port names crossed): :func:`unplaced`;
* ``ratings`` — a *warning*, located at the component in the system's file,
  for each part the system's nominal state already damages (its current or
  power past a rating), and each LED that states no ``dk:maxCurrent`` (so never
  burns) carrying over :data:`OVERDRIVEN` times its forward current there: :func:`rating_warnings`, which ``diagkg load`` runs
  on the systems it loads; and ``lamps``, a warning :func:`lamp_warnings` gives ``diagkg load`` for a
  system with no lamp lit a session judges it by; ``solve``, the warning :func:`solve_warnings` gives it
  instead for a system that cannot be solved at all (voltage sources wired across each other);
  ``parameters``, a warning at the component for a parameter nothing of its type reads (a bulb's
  ``dk:ratedCurrent``): :func:`parameter_warnings`, given by ``diagkg load`` too.

A finding carries the file and line it is about; nothing here prints.
"""

from __future__ import annotations

import dataclasses
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pyoxigraph as ox

from ..kg import graphs, resources
from ..kg.collisions import SHIPPED_PREFIX
from ..kg.vocab import DK, DK_NS
from .effects import still_broken
from .parameters import unread_parameters, unread_text
from .repair_play import ideal_warnings, played
from .scenarios import Scenario
from .service import Hypothesis, Session
from .verification import REPAIR_ACTIONS, hand_switches, injected_parts, set_by_hand
from .workspace import graph_holding
from .worlds import fault_modes

REPLACE = REPAIR_ACTIONS["component"]
OVERDRIVEN = 5.0    # an unrated LED carrying this many times its forward current in the nominal state is warned of

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from ..sim.circuit import CircuitState, Skeleton
    from ..sim.simulator import SimulationResult, Simulator

CHECKS = ("observable", "working", "masking", "repair", "hypotheses", "symptoms", "damage", "ratings", "lamps", "solve",
          "threshold", "parameters")
APPEARANCES = ("Lit", "Dark", "Flickering")


@dataclass(frozen=True)
class Finding:
    """The result of one check of one scenario."""

    scenario: str
    check: str
    passed: bool
    message: str
    file: str | None = None
    line: int | None = None
    warning: bool = False           # passed, but worth a look (a nominal state that damages a part)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"{where}{self.scenario}: {self.check}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class ScenarioReport:
    scenario: str
    number: int
    file: str | None
    findings: list[Finding] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "number": self.number, "file": self.file, "passed": self.passed,
                "findings": [f.to_dict() for f in self.findings]}


# ---------------------------------------------------------------------------
# where a scenario is written
# ---------------------------------------------------------------------------

class _Locator:
    """Lines of a scenario's file, found by what they say (a scenario file is
    Turtle written by a person: the statement a check is about names the part)."""

    def __init__(self, path: str | None):
        self.path = path
        try:
            self.lines = Path(path).read_text(encoding="utf-8").splitlines() if path else []
        except OSError:
            self.lines = []

    def line(self, *patterns: str) -> int | None:
        """The first line matching every regular expression of ``patterns``."""
        compiled = [re.compile(p) for p in patterns]
        for number, text in enumerate(self.lines, start=1):
            if all(c.search(text) for c in compiled):
                return number
        return None

    def naming(self, keyword: str, part: str) -> int | None:
        """The line where ``keyword`` (e.g. ``dk:about``) is followed by the part ``part``."""
        return self.line(re.escape(keyword) + r"\s+\S*?[:/#]" + re.escape(part) + r"(?![\w.])")


def scenario_file(store: "KnowledgeStore", scenario: Scenario) -> str | None:
    """The file a scenario was loaded from (a shipped one: its place in the package)."""
    graph = graph_holding(store, scenario.iri, str(DK.Scenario))
    return None if graph is None else _loaded_file(store, graph)


def system_file(store: "KnowledgeStore", system_iri: str) -> str | None:
    """The file a system was loaded from (a shipped one: its place in the package)."""
    graph = graph_holding(store, system_iri, str(DK.System))
    return None if graph is None else _loaded_file(store, graph)


def _loaded_file(store: "KnowledgeStore", graph: ox.NamedNode) -> str | None:
    # read whole (again afresh if another process's compaction took a file meanwhile)
    for q in store.reading(lambda raw: list(raw.quads_for_pattern(graph, DK.loadedFrom.node, None, graph))):
        if not isinstance(q.object, ox.Literal):
            continue
        source = q.object.value
        if source.startswith(SHIPPED_PREFIX):
            folder, _, rest = source[len(SHIPPED_PREFIX):].partition("/")
            if folder in resources.FOLDERS:
                node = resources.folder(folder)
                for part in rest.split("/"):
                    node = node.joinpath(part)
                return str(node)
        return source
    return None


def rating_warnings(store: "KnowledgeStore", sim: "Simulator", result: "SimulationResult | None" = None,
                    about: str | None = None) -> list[Finding]:
    """A warning for each part that the nominal state of ``sim``'s system (``result``: its
    simulation, by default of the system as described) damages, and each unrated LED it overdrives
    (:data:`OVERDRIVEN`), located at the component in the system's file; ``about`` names the finding
    (the system's key by default)."""
    result = result if result is not None else sim.simulate()
    sk = sim.skeleton
    # an LED stating no dk:maxCurrent is not rated: it never burns, at any current (a white LED across 12 V, lit)
    unrated: dict[str, float] = {}
    for c, r in result.components.items():
        p = sk.params_of(sk.components[c]) if sk.components[c].type == "LED" else {}
        if p and "maxCurrent" not in p and isinstance(f := p.get("forwardCurrent"), (int, float)) and r.current > OVERDRIVEN * f:
            unrated[c] = r.current / f
    if not (result.damage or unrated):
        return []
    file = system_file(store, sk.iri)
    out = [Finding(about or sk.key, "ratings", True, f"{c} carries {result.components[c].current:.4g} A in the nominal "
                   f"state, {times:.0f} times its forward current, and states no dk:maxCurrent: it is simulated lit and "
                   "never burns out (a small LED burns at about 0.1 A: state its dk:maxCurrent)", file,
                   _line_in(file, sk.components[c].iri), warning=True) for c, times in sorted(unrated.items())]
    for d in result.damage:
        comp = sk.components[d.component]
        rules = " or ".join(r.source for r in sk.damage_rules_for(comp) if r.state == d.state)
        line = _line_in(file, comp.iri)
        out.append(Finding(about or sk.key, "ratings", True,
                           f"{d.component} is {sk.damage_labels.get(d.state, d.state)} in the nominal state: at "
                           f"{abs(d.current):.4g} A and {d.power:.4g} W, {rules} holds", file, line, warning=True))
    return out


def lamp_warnings(store: "KnowledgeStore", sim: "Simulator", result: "SimulationResult | None" = None) -> list[Finding]:
    """A warning, located at the system in its file, when no lamp a session judges by is lit in the nominal
    state (a bulb, or an LED declared ``dk:isIndicator false``): a session then finds the system working
    whenever it settles with no loose end, so almost any fault leaves it working and ends the session at its
    first action."""
    result = result if result is not None else sim.simulate()
    sk = sim.skeleton
    if any(sk.components[c].is_lamp for c in result.lit):
        return []
    leds = sorted(c for c in result.lit if sk.components[c].type == "LED")
    file = system_file(store, sk.iri)
    hint = (f"; {', '.join(leds)} {'is' if len(leds) == 1 else 'are'} lit, but an LED is an indicator unless "
            "declared dk:isIndicator false: declare the one that is the system's main light so") if leds else ""
    return [Finding(sk.key, "lamps", True, "no lamp a session judges the system by is lit in the nominal state (a bulb, "
                    "or an LED declared dk:isIndicator false): a session finds the system working whenever it "
                    "settles with no loose end, whatever the fault" + hint, file, _line_in(file, sk.iri), warning=True)]


def parameter_warnings(store: "KnowledgeStore", sim: "Simulator", about: str | None = None) -> list[Finding]:
    """A warning, located at the component in the system's file, for each parameter a component states that
    nothing of its type reads (:func:`diagkg.env.parameters.unread_parameters`: it changes nothing); ``about``
    names the finding (the system's key by default)."""
    sk = sim.skeleton
    found = unread_parameters(store, sim)
    file = system_file(store, sk.iri) if found else None
    return [Finding(about or sk.key, "parameters", True, unread_text(cid, sk.components[cid].type, name, known), file,
                    _line_in(file, sk.components[cid].iri), warning=True) for cid, name, known in found]


def threshold_warnings(store: "KnowledgeStore", sim: "Simulator") -> list[Finding]:
    """A warning, at the coupling in the system's file, for each coupling that trips on a current sensor's current
    at another number than the sensor's ``dk:currentThreshold`` (which no simulation reads: the coupling's
    condition is what trips)."""
    from ..kg.expressions import current_limits

    sk = sim.skeleton
    file = system_file(store, sk.iri)
    out = []
    for coupling in sk.couplings:
        for part, limit in current_limits(coupling.closed_when) if coupling.closed_when is not None else ():
            comp = sk.components.get(part)
            rated = sk.params_of(comp).get("currentThreshold") if comp is not None else None
            if not isinstance(rated, (int, float)) or abs(rated - limit) <= 1e-9 * max(abs(rated), 1.0):
                continue
            out.append(Finding(sk.key, "threshold", True, f"{coupling.id} trips on current('{part}') at {limit:g} A, "
                               f"where {part} states dk:currentThreshold {rated:g} A (the coupling is what trips)",
                               file, _line_in(file, coupling.iri), warning=True))
    return out


def parallel_sources(sk: "Skeleton") -> list[str]:
    """Voltage sources wired straight across each other (their two ports on the same two nodes), said as
    ``bat_a (12.6 V) and bat_b (12.4 V)``: ideal sources with nothing between them, which no solver can solve (at
    different voltages their difference drives a current without bound; at one voltage, none says how they
    share the current)."""
    by_nodes: dict[frozenset[int], list[tuple[str, float]]] = {}
    for cid, comp in sorted(sk.components.items()):
        nets = frozenset(sk.net_of_port[(cid, port)] for port in comp.ports if (cid, port) in sk.net_of_port)
        params = sk.params_of(comp)
        volts, inside = params.get("voltage"), params.get("internalResistance", 0)
        if comp.type == "VoltageSource" and len(nets) == 2 and isinstance(volts, (int, float)) and \
                not (isinstance(inside, (int, float)) and inside > 0):     # one behind its inside resistance is solved
            by_nodes.setdefault(nets, []).append((cid, float(volts)))
    return [" and ".join(f"{cid} ({volts:g} V)" for cid, volts in group) for group in by_nodes.values() if len(group) > 1]


def solve_warnings(store: "KnowledgeStore", sim: "Simulator", result: "SimulationResult | None" = None) -> list[Finding]:
    """A warning, located at the system in its file, when the working system cannot be solved (the solver's
    error, or the voltage sources wired straight across each other that cause it)."""
    result = result if result is not None else sim.simulate()
    if result.error is None:
        return []
    sk = sim.skeleton
    file = system_file(store, sk.iri)
    return [Finding(sk.key, "solve", True, f"the working system cannot be solved: {unsolved(sk, result.error)}",
                    file, _line_in(file, sk.iri), warning=True)]


def load_warnings(store: "KnowledgeStore", keys: list[str]) -> list[Finding]:
    """What ``diagkg load`` and ``POST /api/scenarios`` warn of for the systems just loaded: a part their nominal
    state damages (:func:`rating_warnings`), no lamp lit a session judges them by (:func:`lamp_warnings`), or
    else that they cannot be solved at all (:func:`solve_warnings`); a parameter nothing of a part's type reads
    (:func:`parameter_warnings`) and thresholds (:func:`threshold_warnings`). A system that cannot be simulated
    here is loaded all the same (``diagkg simulate`` says why): it gets no warning."""
    from ..errors import DiagkgError
    from .service import simulator_for

    out: list[Finding] = []
    for key in dict.fromkeys(keys):
        try:
            sim = simulator_for(store, key)
            out += parameter_warnings(store, sim)
            nominal = sim.simulate()
            unsolved = solve_warnings(store, sim, nominal)
            out += unsolved or rating_warnings(store, sim, nominal) + lamp_warnings(store, sim, nominal)
            out += threshold_warnings(store, sim)
        except DiagkgError:
            continue
    return out


def unsolved(sk: "Skeleton", error: str) -> str:
    """Why a system cannot be solved: the voltage sources wired straight across each other, where there are,
    else the solver's own words."""
    loops = parallel_sources(sk)
    if not loops:
        return error
    return ("; ".join(loops) + " are wired straight across each other: ideal sources with nothing between them "
            "cannot be solved (at different voltages their difference drives a current without bound; at one, "
            "nothing says how they share it): give each its internal resistance (dk:internalResistance)")


def _line_in(file: str | None, iri: str) -> int | None:
    """The first line of an RDF file where the term ``iri`` is written."""
    from ..errors import InputError
    from ..kg.rdfio import parse_file, to_rdflib

    if not file:
        return None
    try:
        return parse_file(file).line_of(to_rdflib(ox.NamedNode(iri)))
    except (OSError, InputError):
        return None


def _damage_text(session: Session, result: "SimulationResult") -> str:
    return ", ".join(f"{d.component} ({session.sk.damage_labels.get(d.state, d.state)} at {abs(d.current):.4g} A)"
                     for d in result.damage)


# ---------------------------------------------------------------------------
# what a person can see or measure
# ---------------------------------------------------------------------------

Signature = tuple[bool, tuple[str, ...], tuple[tuple[str, float], ...]]


def signature(result: SimulationResult) -> Signature:
    """Lights and terminal voltages (to 10 mV): what a person can see or measure."""
    volts = tuple(sorted((f"{cid}.{port}", round(v, 2)) for cid, c in result.components.items()
                         for port, v in c.port_v.items() if v is not None))
    return result.converged, tuple(sorted(result.lit)), volts


def _intermittent(scenario: Scenario) -> bool:
    return any(f.probability is not None for f in scenario.faults)


def _faulty_results(store: "KnowledgeStore", scenario: Scenario, seeds: int) -> tuple[Session, list[SimulationResult]]:
    """A session reset on the scenario, and the faulty system simulated with each seed."""
    session = Session(scenario, store)
    session.reset(seed=0)
    state = session.state()
    results = [session.sim.simulate(state, random.Random(seed)) for seed in range(seeds)]
    return session, results


def worked(session: Session, state: CircuitState, seeds: int) -> dict[str, frozenset[Signature]]:
    """What can be seen or measured in ``state`` with each hand switch worked (put the other way from how
    the system as set up has it), over ``seeds``: a fault that shows only then (a switch stuck closed) shows."""
    views: dict[str, frozenset[Signature]] = {}
    for cid in hand_switches(session):
        if cid in state.removed:
            continue
        other = not session.nominal_result.live.get(f"closed:{cid}", False)
        flipped = set_by_hand(state, cid, other)
        views[cid] = frozenset(signature(session.sim.simulate(flipped, random.Random(seed))) for seed in range(seeds))
    return views


def _appearance(results: list[SimulationResult], cid: str) -> str:
    """How a lamp looks over the seeds: flickering when it goes on and off in
    a state that does not settle, or when it is lit with some seeds and dark
    with others."""
    seen = {"Flickering" if cid in r.flickering else ("Lit" if cid in r.lit else "Dark") for r in results}
    return seen.pop() if len(seen) == 1 else "Flickering"


# ---------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------

def unplaced(store: "KnowledgeStore", session: Session, scenario: Scenario) -> list[str]:
    """A warning per fault of ``scenario`` between two ports that its mode's ``dk:otherTargetRule`` "alike" does not
    place: the catalogue places such a fault (crossed cables) between ends of the same port name on two parts of one
    type and module, and so do ``diagkg generate`` and the model-based assistant's candidates; a crossing of two
    cables' ends named otherwise (a user's return cable whose ``n`` end is at the battery) is a fault no assistant
    that follows the catalogue considers."""
    modes, sk, out = fault_modes(store), session.sk, []
    for f in scenario.faults:
        mode = modes.get(DK_NS + f.mode)
        a, b = sk.port_of_iri.get(f.target), sk.port_of_iri.get(f.other or "")
        if mode is None or mode.rule != "alike" or a is None or b is None:
            continue
        one, two = sk.components.get(a[0]), sk.components.get(b[0])
        if one is not None and two is not None and (one.type, one.module, a[1]) != (two.type, two.module, b[1]):
            out.append(f"{f.label or f.mode} between {a[0]}.{a[1]} and {b[0]}.{b[1]}: the catalogue places it between "
                       f"ends of one port name on two parts of one type and module (dk:otherTargetRule \"alike\"), as "
                       f"diagkg generate and the model-based assistant do: neither considers this one (name the ends that "
                       f"lie side by side alike)")
    return out


def check_scenario(store: "KnowledgeStore", scenario: Scenario, seeds: int = 8,
                   file: str | None = None) -> ScenarioReport:
    """Run every check on one scenario of ``store``."""
    file = file if file is not None else scenario_file(store, scenario)
    where = _Locator(file)
    head = where.line(r"\ba\s+dk:Scenario\b") or where.line(r"dk:Scenario\b")
    n = seeds if _intermittent(scenario) else 1
    report = ScenarioReport(scenario.id, scenario.number, file)

    def add(check: str, passed: bool, message: str, line: int | None = None, warning: bool = False) -> None:
        report.findings.append(Finding(scenario.id, check, passed, message, file, line or head, warning))

    session, faulty = _faulty_results(store, scenario, n)
    report.findings += rating_warnings(store, session.sim, session.nominal_result, scenario.id)
    report.findings += parameter_warnings(store, session.sim, scenario.id)
    # what the faults damage at once (kept in the state: it stays until the part is replaced)
    damaged = _damage_text(session, session.initial_result)
    if damaged:
        unnamed = sorted({d.component for d in session.initial_result.damage} - scenario.faulty)
        if unnamed:
            # a correct hypothesis is judged by the faulty components: naming them alone would be verified partial
            add("damage", False, f"the faults damage {damaged}: it stays damaged until replaced, but the scenario "
                f"does not name {', '.join(unnamed)} among its faulty components (a hypothesis naming the ones it "
                f"names is verified as partial): add dk:faultyComponent for {', '.join(unnamed)}",
                where.line(r"dk:faultyComponent\b"))
        else:
            add("damage", True, f"the faults damage {damaged}: it stays damaged until replaced, and the scenario "
                "names it among its faulty components")
    for message in unplaced(store, session, scenario):
        add("placement", True, message, where.line(r"dk:injects\b"), warning=True)
    nominal = signature(session.nominal_result)
    faulty_signatures = {signature(r) for r in faulty}

    # the faults change what can be seen or measured: as set up, or with a hand switch worked
    faulty_state = session.state()
    worked_faulty: dict[str, frozenset[Signature]] | None = None
    if faulty_signatures == {nominal}:
        worked_faulty = worked(session, faulty_state, n)
        worked_nominal = worked(session, session.nominal_state, 1)
        shows = [cid for cid in worked_faulty if worked_faulty[cid] != worked_nominal.get(cid)]
        if shows:
            add("observable", True, "the faults show only when a switch is worked by hand (" + ", ".join(shows)
                + "): as set up, every lamp and every terminal voltage is as in the working system")
        else:
            add("observable", False, "the faults change nothing a person can see or measure (every lamp and "
                "every terminal voltage is as in the working system, also with each hand switch worked"
                + (f", over {n} seeds" if n > 1 else "") + ")")
    else:
        add("observable", True, "the faults change what can be seen or measured")
    works_as_found = bool(faulty_signatures != {nominal} or worked_faulty) and session.works_again()
    if works_as_found:
        # judged working as the faults leave it: no action restores it, only a correct hypothesis ends a session
        indicators = sorted(cid for cid, comp in session.sk.components.items() if comp.type == "LED" and not comp.is_lamp
                            and (cid in session.nominal_result.lit) != (cid in session.initial_result.lit))
        add("working", False, "the system works with the faults in place, as a session judges it (every lamp "
            "the working system lights is lit and its switch controls them): no action can restore it, only a "
            "correct hypothesis ends a session"
            + (f"; the faults change the light of {', '.join(indicators)}, "
               + ("an LED, which counts as an indicator unless its system declares it" if len(indicators) == 1 else
                  "LEDs, which count as indicators unless their system declares them")
               + " dk:isIndicator false" if indicators else ""))
    elif faulty_signatures != {nominal} or worked_faulty:
        add("working", True, "with the faults in place the system does not work, as a session judges it")

    # with several faults, each one shows (unless masked on purpose)
    if len(scenario.faults) > 1:
        for fault in scenario.faults:
            others = dataclasses.replace(scenario, faults=tuple(f for f in scenario.faults if f is not fault))
            shadow, without = _faulty_results(store, others, n)
            hidden = {signature(r) for r in without} == faulty_signatures
            if hidden:      # and with each hand switch worked
                if worked_faulty is None:
                    worked_faulty = worked(session, faulty_state, n)
                hidden = worked(shadow, shadow.state(), n) == worked_faulty
            shadow.close()
            target = fault.target.rsplit("/", 1)[-1]
            line = where.naming("dk:faultTarget", target)
            label = f"the {fault.label.lower()} on {target}"
            if hidden and not fault.masked:
                add("masking", False, f"{label} changes nothing a person can see or measure while the other "
                    "faults are present; if that is on purpose, say so with dk:masked true on the fault", line)
            elif fault.masked and not hidden:
                add("masking", False, f"{label} is declared dk:masked, but it does change what can be seen or "
                    "measured while the other faults are present", line)
            else:
                add("masking", True, f"{label} " + ("is masked, as declared" if hidden else "shows"), line)

    # the ideal repair restores nominal
    repair_line = where.line(r"dk:idealRepair")
    failures = []
    plays = [played(store, scenario, scenario.repair, seed) for seed in range(min(n, 3))]
    for seed, play in enumerate(plays):
        if play.end != "success_no_hypothesis":
            # the lamps light, but not as a repair: what the steps did besides makes up for a fault left in place
            failures.append((seed, play.end or "still running", play.workaround, play.refused))
    if failures:
        seed, end, workaround, refused = failures[0]
        # the parts the plan replaces that a fault it leaves in place damages again (a fuse, the short still there)
        again = sorted(plays[seed].damaged & {t for step in scenario.repair if step.action == REPLACE for t in step.targets})
        add("repair", False, f"the ideal repair does not bring the system back to nominal (seed {seed}: the "
            f"session ends {end!r} after {len(scenario.repair)} step(s))"
            + (f"; {refused}" if refused else "")
            + (f"; the faults damage {damaged}, which stays damaged until it is replaced too"
               if damaged and not refused and not again else "")
            + (f"; the plan replaces {', '.join(again)}, but a fault it leaves in place damages "
               f"{'it' if len(again) == 1 else 'them'} again (repair what drew the current too)"
               if again and not refused else "")
            + ("; the system works as the faults leave it (check working), so no step ends the session"
               if works_as_found else
               "; the lamps light, but with the faults it leaves alone the system does not work: it works around "
               "a fault instead of repairing it (give the faulty part's own repair)" if workaround else ""),
            repair_line)
    else:
        add("repair", True, "the ideal repair restores nominal", repair_line)
        for message in ideal_warnings(store, session, scenario, plays, n):
            add("ideal", True, message, repair_line, warning=True)

    # the correct hypothesis is correct, a wrong one is not
    faulty_line = where.line(r"dk:faultyComponent")
    s = Session(scenario, store)
    s.reset(seed=0)
    # the complete diagnosis: the stated faulty components and every other part whose injected fault is
    # present at the start (a broken indicator the scenario does not count as faulty still needs naming)
    also = sorted(injected_parts(s) & still_broken(s, s.state()) - scenario.faulty)
    complete = frozenset(scenario.faulty | set(also))
    outcome, *_ = s.step(Hypothesis(complete))
    named = ", ".join(sorted(complete))
    if outcome["verdict"] != "correct":
        add("hypotheses", False, f"the correct hypothesis ({named}) is verified as {outcome['verdict']}", faulty_line)
    else:
        add("hypotheses", True, "the correct hypothesis is verified as correct"
            + (f" (with {', '.join(also)}, which has an injected fault of its own)" if also else ""), faulty_line)
    decoy = next((c for c in sorted(s.sk.components) if c not in scenario.faulty and c not in scenario.removed
                  and s.sk.components[c].type != "Cable"), None)
    s.close()
    if decoy is not None:
        s = Session(scenario, store)
        s.reset(seed=0)
        outcome, *_ = s.step(Hypothesis(frozenset({decoy})))
        s.close()
        if outcome["verdict"] == "correct":
            add("hypotheses", False, f"a wrong hypothesis ({decoy}, not faulty) is verified as correct", faulty_line)
        else:
            add("hypotheses", True, f"a wrong hypothesis ({decoy}) is verified as {outcome['verdict']}", faulty_line)

    # the stated symptoms agree with the simulation
    for cid, stated in scenario.symptoms:
        simulated = _appearance(faulty, cid)
        line = where.naming("dk:about", cid)
        if simulated != stated:
            add("symptoms", False, f"the scenario states {cid} is {stated.lower()}, but the simulation shows it "
                f"{simulated.lower()}" + (f" (over {n} seeds)" if n > 1 else ""), line)
        else:
            add("symptoms", True, f"{cid} is {stated.lower()}, as stated", line)
    session.close()
    return report


def check_scenarios(store: "KnowledgeStore", scenarios: list[Scenario], seeds: int = 8,
                    progress: Callable[[int, int], None] | None = None) -> list[ScenarioReport]:
    """Check several scenarios of ``store`` (``progress(done, total)`` after each)."""
    reports = []
    for done, scenario in enumerate(scenarios, 1):
        reports.append(check_scenario(store, scenario, seeds))
        if progress:
            progress(done, len(scenarios))
    return reports


def scratch_with(store: "KnowledgeStore") -> "KnowledgeStore":
    """An in-memory store holding the knowledge of ``store`` (ontology, shapes,
    systems and their inferences) and no scenario: files are checked there,
    so checking never writes the store in use."""
    from ..kg.store import KnowledgeStore

    scratch = KnowledgeStore.memory()
    keep = {"ontology", "shapes", "system", "inferred"}
    with scratch.writing() as w:
        for name, _ in store.graphs():
            graph = ox.NamedNode(name)
            if graphs.kind_of(graph) in keep:
                w.extend(store.raw.quads_for_pattern(None, None, None, graph))
    return scratch


__all__ = ["CHECKS", "Finding", "ScenarioReport", "check_scenario", "check_scenarios", "lamp_warnings", "parallel_sources",
           "parameter_warnings", "rating_warnings", "scenario_file", "scratch_with", "solve_warnings", "system_file",
           "threshold_warnings", "unsolved"]
