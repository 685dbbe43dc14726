"""The neuro-symbolic assistant: evidence sets, a dense-set candidate rule and
greedy information gain over diagnostic knowledge derived from the graph.

Everything it knows comes from the store, through the ``ns-*`` queries:

* **dependencies** between components, from the functions of the system
  description after OWL reasoning (``dk:dependsOn`` is transitive and
  ``dk:monitors`` a sub-property of it; the closure is in the system's
  ``inferred/{key}`` graph, computed by HermiT (or OWL-RL when Java is
  missing) when the system was loaded; the assistant never runs a reasoner);
* **problems**: every fault mode of the catalogue that applies to a
  component's type;
* **tests**: every action of the catalogue that ``dk:reveals`` such a mode,
  applicable to the component (its affordances), with its cost in minutes.

No per-system knowledge is written by hand, so it works on any system
described in Turtle.

The session goes as follows:

1. the symptom report is classified (anomalous / nominal components) by :class:`KeywordClassifier` — component
   labels and synonyms from the graph, with negation — or by an LLM classifier (``classifier="llm"``);
2. each anomalous component X gives the evidence set {X} ∪ deps(X); each nominal component Y the set of all
   components except {Y} ∪ deps(Y);
3. candidates are the minimum open dense set of the topology the evidence sets generate (the components whose
   support — the evidence sets holding them — is inclusion-maximal);
4. the plan is the problems of the candidates and the tests that reveal them; the next action is the test with
   the best information gain per minute, the gain counting how its outcome splits the candidates: a light speaks
   of all it depends on, and (while the candidates span a chain of modules) a voltage of what it depends on on
   its side of the supply (:meth:`_reach`);
5. outcomes update the state: a local test (continuity, diode, switch, connections, a look at a part that is not
   a light) that finds an anomaly narrows the candidates to its target, one that finds nothing removes its
   target's problems; an observation (lights, voltages, currents) adds evidence like a symptom does, and one
   that reads right clears what it shows working; readings that keep changing (typed ``settled``) are anomalies;
   a cable's two potentials speak of the cable itself (an end that floats is off, two ends at one potential
   conduct) and, once a repair helped only partly, of the chain on its side of the supply; a partial verdict
   whose ``works`` is false leaves the main lamp dark;
6. hypotheses: first, what an inspected cable end showed against the description: the two cables whose swapped
   ends explain an end found on another net than its own, or the part whose end should sit beside it and is not
   there; then one candidate left after an anomaly, or the component of the only remaining problem, or all
   candidates when no problem is left, or the candidates cheaper to repair than to test when that costs less in
   expectation than testing (repair as a probe); a wrong verdict removes the named components and replans, a
   partial one also drops the anomalies the named parts may explain (their lights may be looked at again) and
   has the one cable it found faulty inspected next (a cable whose end sits beside it, where its own belonged,
   is named: its crossing partner).

Switching couplings (a relay opened and closed by what flows through it) make
the relay depend on what its current feeds; optical couplings are problems of
the element that would block them.

The assistant is split over seven modules: this one holds the session (setup,
the symptoms as evidence, the decision loop and how outcomes update the state);
:mod:`~diagkg.agents.neurosymbolic_symptoms` reads the symptom report,
:mod:`~diagkg.agents.neurosymbolic_knowledge` reads the knowledge from the store
and holds the candidate rule, :mod:`~diagkg.agents.neurosymbolic_ranking`
weighs the problems and chooses the next test, and
:mod:`~diagkg.agents.neurosymbolic_repairs` reads inspected cable ends, sets aside a fault that does not keep
the main lamps dark and repairs (rather than names) a part found faulty when naming it alone cannot be the whole
diagnosis, :mod:`~diagkg.agents.neurosymbolic_shorts` looks for a short between two nodes and what it damaged,
and :mod:`~diagkg.agents.neurosymbolic_undo` undoes what a reading shows.
"""

from __future__ import annotations

from typing import Any

from ..env.outcomes import Outcome, Refusal, TerminalState
from ..env.service import Action, Hypothesis, simulator_for
from ..errors import AssistantError
from ..llm.settings import CONFIG_KEYS as LLM_KEYS
from .neurosymbolic_config import ROUND_MINUTES, NeuroSymbolicConfig
from .neurosymbolic_knowledge import Knowledge, Test, dense_candidates
from .neurosymbolic_ranking import SPLITTING, SUSPECT_WEIGHT, Ranking
from .neurosymbolic_repairs import Repairs, data_of
from .neurosymbolic_shorts import CURRENT_TOLERANCE, VOLTAGE_TOLERANCE, current_off
from .neurosymbolic_symptoms import COMES_AND_GOES, KeywordClassifier, stated_lights
from .neurosymbolic_undo import Undoing
from .registry import BaseAssistant, Briefing

LIGHT_STATES = {"on": "on", "off": "off", "flickering": "intermittent"}     # a visible light's state, as the classifier says it
LOCAL_TESTS = {"continuity", "diode", "switch-test", "connections"}

# what other code imports from here, wherever it lives now
__all__ = ["CURRENT_TOLERANCE", "LOCAL_TESTS", "ROUND_MINUTES", "SPLITTING", "SUSPECT_WEIGHT", "VOLTAGE_TOLERANCE",
           "Knowledge", "KeywordClassifier", "NeuroSymbolic", "Test", "dense_candidates"]


class NeuroSymbolic(Undoing, Repairs, Ranking, BaseAssistant):
    """Evidence, dense candidates and information gain over the knowledge graph."""

    name = "neuro-symbolic"
    # its own, and a language model's when the symptoms are classified by one (classifier "llm")
    config_keys = NeuroSymbolicConfig.keys() | LLM_KEYS

    def __init__(self, classifier: str = "keywords", **config: Any):
        super().__init__(classifier=classifier, **config)
        settings = self.settings = NeuroSymbolicConfig.from_mapping(self.config)
        self.classifier_kind, self.split, self.round_minutes = settings.classifier, settings.split, settings.round_minutes
        self.access, self.weights = settings.access, settings.weights
        self.couplings_on, self.reinspect = settings.couplings, settings.reinspect
        self.use_priors = settings.priors
        self.intermittent_weight = settings.intermittent_weight
        self.blind_looks, self.tiebreak = settings.blind_looks, settings.tiebreak
        self.coupling_flicker = settings.coupling_flicker
        self.trust_seen, self.chain_modules = settings.trust_seen, settings.chain_modules
        self.cable_potentials, self.side_only = settings.cable_potentials, settings.side_only
        self.still_dark = settings.still_dark
        self.endgame = settings.endgame
        self.exhaust = settings.exhaust
        self.unsettled_elsewhere = settings.unsettled_elsewhere
        self.trip_weight = settings.trip_weight
        self.unsettled_flicker = settings.unsettled_flicker
        self.port_potentials = settings.port_potentials
        self.source_local = settings.source_local
        self.lit_modules = settings.lit_modules
        self.current_module = settings.current_module
        self.current_module_all = settings.current_module_all
        self.comes_and_goes = settings.comes_and_goes
        self.repair_probe = settings.repair_probe
        self.rebase = settings.rebase
        self.see_crossings = settings.crossings
        self.see_missing = settings.missing_ends
        self.dark_currents = settings.dark_currents
        self.aside_found = settings.aside

    def applied_config(self) -> dict[str, Any]:
        """Every key of :class:`NeuroSymbolicConfig` as applied, defaults included, and a language model's
        keys as given (never a secret): what the trajectory records."""
        given = super().applied_config()
        return {**{k: v for k, v in given.items() if k in LLM_KEYS}, **self.settings.applied()}

    # ------------------------------------------------------------------
    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.catalogue = briefing.catalogue
        self.budget = briefing.budget
        knowledge = Knowledge.of(briefing.view, briefing.system)
        self.deps, self.problems, self.tests = knowledge.deps, knowledge.problems, knowledge.tests
        self.wired = not self.deps and self.settings.wiring       # a system that declares no functions: its wiring's
        self.deps = knowledge.wired if self.wired else self.deps
        # needs a part has two of, either one enough: a dark part does not implicate one of them alone
        self.spares = knowledge.spares if self.settings.spares else {}
        self.keepers = knowledge.keepers if self.settings.keepers else {}
        self.port_modes = knowledge.port_modes
        names = knowledge.names
        self.components = set(names) & set(briefing.parts)
        self.part_types = dict(briefing.parts)
        self.coupling_modes: set[str] = set()
        self.dependents: dict[str, int] = {}
        for needs in self.deps.values():
            for d in needs:
                self.dependents[d] = self.dependents.get(d, 0) + 1
        self.modes = dict(knowledge.modes or {}) if self.use_priors else {}
        # faults that can make a light come and go: at random, and (coupling_flicker) couplings acting when they should not
        self.intermittent_modes = set(knowledge.intermittent)
        self.fed_by_switch: set[str] = set()    # what the current of a switch that this current opens feeds
        self.raising_modes = {iri for iri, m in (knowledge.modes or {}).items() if m.raises_current}
        self.tripping = False                # a reading kept changing where such a switch may keep tripping
        if self.couplings_on and knowledge.couplings:
            self._couple(knowledge, briefing)
        if self.couplings_on and knowledge.driven:
            self._switched(knowledge.driven, knowledge.reads)
        self.simulator = simulator_for(briefing.view, briefing.system)
        self._start_shorts(knowledge)
        self.view, self.system_key, self.start_lights = briefing.view, briefing.system, dict(briefing.lights)
        self.enclosed = knowledge.enclosed
        self.nominal = self.simulator.simulate()
        self.expected_nets = self.simulator.skeleton.net_of_port
        self.on_net: dict[int, list[tuple[str, str]]] = {}      # the (part, port)s the description puts on each net
        for (c, p), net in sorted(self.expected_nets.items()):
            self.on_net.setdefault(net, []).append((c, p))
        self.lamps = {c for c, comp in self.simulator.skeleton.components.items() if comp.type in ("Bulb", "LED")}
        # the lamps whose light is the system's function (lit when it works; not indicators)
        self.main_lamps = {c for c, comp in self.simulator.skeleton.components.items()
                           if comp.is_lamp and c in self.nominal.lit and not comp.params.get("isIndicator")}
        self.cables = {c for c, comp in self.simulator.skeleton.components.items() if comp.type == "Cable"}
        self.sides = self._sides()
        self.module_of = {c: comp.module for c, comp in self.simulator.skeleton.components.items()}
        self.revealed: dict[str, set[str]] = {}       # action -> the fault modes it reveals (on any part)
        for (action, _), t in self.tests.items():
            self.revealed.setdefault(action, set()).update(t.modes)
        self.evidence: list[frozenset[str]] = []      # symptoms -> evidence
        self.sources: list[tuple[str, bool, frozenset[str]]] = []   # per evidence set: (part, anomalous, implicated)
        self.seen: set[str] = set()          # lights whose state the report or the visible lights gave
        self.dark: set[str] = set()          # lamps seen dark (their current tells nothing: none flows)
        self.anomaly_seen, self.flickering = False, False       # (the latter: a light said to come and go)
        anomalous, nominal = self.classify(briefing, names)
        self.suspicious = set(anomalous)        # seen misbehaving: their own faults are the first suspects
        for comp in sorted(anomalous):
            self._add_evidence(comp, anomalous=True)
        for comp in sorted(nominal):
            self._add_evidence(comp, anomalous=False, reach=self._lit_shows(comp))
        self.excluded: set[str] = set()
        self.tried: set[frozenset[str]] = set()
        self.named_first: list[frozenset[str]] = []   # what inspected cable ends showed: to name before the rest
        self.look_again, self.just_repaired, self.partners = list[str](), set[str](), list[frozenset[str]]()
        self.executed: set[tuple[str, str]] = set()
        if not self.reinspect:       # what was already seen is not looked at again
            self.seen |= anomalous | nominal
            self.executed |= {(a, c) for (a, c) in self.tests if c in self.seen
                              and self.catalogue[a].observes == "visual" and c in self.lamps}
        self.cleared: set[tuple[str, str]] = set()     # (component, mode) ruled out by a test
        if self.trust_seen:          # a light seen lit as it should be has none of its own faults
            self.cleared |= {(c, m) for c in nominal & self.lamps for m in self.problems.get(c, ())}
        self.formed: dict[frozenset[str], float] = {}     # candidate sets: the weight of their problems when formed
        self.partly_repaired = False          # a hypothesis repaired some of what is wrong
        self.found: dict[str, bool] = {}
        self.aside: list[str] = []
        self.unrepairable: set[str] = set()
        self.repairing: str | None = None     # the part the last action repairs
        self.last: Action | Hypothesis | None = None
        self.last_test: Test | None = None
        self.read_on, self.undo_graph, self.undo_shadow = {}, None, None     # (Undoing)
        self._replan()

    def _couple(self, knowledge: Knowledge, briefing: Briefing) -> None:
        """Problems for couplings: the element that would block a coupling is a candidate
        of every anomaly of the coupling's emitter or receiver and what depends on them."""
        self.deps = {c: set(d) for c, d in self.deps.items()}
        self.problems = {c: set(p) for c, p in self.problems.items()}
        self.tests = dict(self.tests)
        for emitter, receiver, element, test in knowledge.couplings:
            if element not in briefing.parts:
                continue
            ends = {e for e in (emitter, receiver) if e}
            self.components.add(element)
            self.problems.setdefault(element, set()).update(test.modes)
            self.coupling_modes |= test.modes
            if self.coupling_flicker:
                self.intermittent_modes |= test.modes
            self.tests[(test.action, element)] = test
            for comp in sorted(self.components):
                if comp in ends or ends & self.deps.get(comp, set()):
                    self.deps.setdefault(comp, set()).add(element)

    def _switched(self, driven: frozenset[str], reads: dict[str, frozenset[str]]) -> None:
        """Switching couplings: a relay opened and closed by what flows through it (``load_switched``: its expression
        reads it or what it feeds, not a coil) depends on everything its current feeds, and so does what depends on it."""
        self.deps = {c: set(d) for c, d in self.deps.items()}
        for relay in sorted(driven & self.components):
            fed = {c for c, needs in self.deps.items() if relay in needs}
            if self.settings.load_switched and relay in reads and not reads[relay] & (fed | {relay}):
                continue
            self.fed_by_switch |= fed & self.components
            for comp in sorted(fed | {relay}):
                self.deps.setdefault(comp, set()).update(fed - {comp})

    def classify(self, briefing: Briefing, names: dict[str, list[str]]) -> tuple[set[str], set[str]]:
        """Anomalous and nominal components according to the symptom report."""
        names = {c: n for c, n in names.items() if c in self.components}
        if self.classifier_kind == "llm":
            from .llm import classify_symptoms  # asks an OpenAI-compatible endpoint, cached in the graph

            return classify_symptoms(briefing, names, self.config)
        if self.classifier_kind != "keywords":
            raise AssistantError(f"unknown symptom classifier {self.classifier_kind!r} (keywords or llm)")
        classifier = KeywordClassifier.configured(names, self.settings)
        anomalous, nominal = set(), set()
        said: dict[str, set[str]] = {}     # the states each component is said to be in
        if self.comes_and_goes and COMES_AND_GOES.search(briefing.symptoms.lower()):
            self.flickering = True
        # the visible lights as typed (their words when a briefing has none typed); only lights are lit or dark
        visible = [(c, LIGHT_STATES[str(s)]) for c, s in sorted(briefing.lights.items()) if c in names] \
            if briefing.lights else classifier.mentions(briefing.visible)
        stated = stated_lights(briefing.stated, names) if self.settings.stated_lights else []    # as data (dk:statedSymptom)
        for comp, state in classifier.mentions(briefing.symptoms) + stated + visible:
            if comp not in self.lamps:
                continue
            self.seen.add(comp)
            said.setdefault(comp, set()).add(state)
            expected = "on" if comp in self.nominal.lit else "off"
            if state == "intermittent":
                self.flickering = True
            if state == "intermittent" or state != expected:
                anomalous.add(comp)
            elif state == "on":
                # a light that is on as it should be shows that everything it depends on works;
                # one that is off as it should be (an alarm LED) shows nothing about them
                nominal.add(comp)
        # a lamp every mention says is off (not one also said to come and go)
        self.dark |= {c for c, states in said.items() if states == {"off"} and c in self.lamps}
        return anomalous, nominal - anomalous

    def _add_evidence(self, comp: str, anomalous: bool, reach: set[str] | None = None) -> None:
        needs = self.deps.get(comp, set()) - (self.spares.get(comp, set()) if anomalous else set())
        keep = self.keepers.get(comp, set()) & self.components if anomalous else set()   # lit where it is kept dark
        implicated = frozenset((reach if reach else {comp} | (needs & self.components)) | keep)
        self.evidence.append(implicated if anomalous else frozenset(self.components - implicated))
        self.sources.append((comp, anomalous, implicated))

    def _lit_shows(self, comp: str) -> set[str] | None:
        """What a light seen lit shows working: itself and what it depends on outside its own
        module (the graph orders dependencies between modules, not among one module's parts)."""
        if self.split != "sides" or not self.lit_modules or comp not in self.lamps:
            return None
        module = self.module_of.get(comp)
        return {comp} | {d for d in self.deps.get(comp, set()) & self.components
                         if module is None or self.module_of.get(d) != module}

    def _rebase(self, repaired: set[str]) -> None:
        """After a repair that helped only partly (the named parts, some of them repaired): an
        anomaly seen before that they could explain may be gone now, so its evidence goes and
        its light may be looked at again; what was seen working still works."""
        stale = self._drop_evidence(lambda _, anomalous, implicated: anomalous and bool(implicated & repaired))
        self.seen -= stale
        self.dark -= stale
        self.executed -= {(a, c) for (a, c) in self.executed if c in stale and c in self.lamps
                          and self.catalogue[a].observes == "visual"}
        self.suspicious -= stale

    def _replan(self) -> None:
        pool = self.components - self.excluded
        evidence = [e & pool for e in self.evidence]
        self.candidates = dense_candidates(pool, [e for e in evidence if e]) if pool else set()
        self.plan = {(c, m) for c in self.candidates for m in self.problems.get(c, ())} - self.cleared

    # ------------------------------------------------------------------
    def suggest(self) -> Action | Hypothesis | None:
        if (look := self._looked_again()) is not None:
            return look
        if (self.overcurrent or self._lit_at_start()) and (short := self._short_split() or self._short_suspect()) is not None:
            self.last = short
            return short
        for _ in range(len(self.components) + 2):
            hyp = self._hypothesis()
            repair = self._undoing(hyp) or (self._repair_instead(hyp) if hyp is not None else None)
            if repair is not None:
                self.last, self.last_test, self.repairing = repair, None, repair.targets[0]
                return repair
            if hyp is not None:
                self.last = hyp
                return hyp
            # (while a light comes and goes, not while a fault acting at random is left among them: no look rules it out)
            if self.exhaust and self.candidates and self._left_of_candidates() < self.exhaust and not (
                    self.flickering and any(m in self.intermittent_modes for _, m in self.plan)):
                # what these candidates were suspected of is nearly all ruled out: look elsewhere
                if (short := self._look_elsewhere()) is not None:
                    return short
                continue
            test = self._probe_dark() or self._best_test()
            if test is not None:
                return self._take(test)
            # nothing left to test among these candidates: name what no test reaches, then look elsewhere
            if not self.candidates:
                self.last = self._the_aside()
                return self.last
            if (untested := self._untested()) is not None:
                return untested
            if (short := self._look_elsewhere()) is not None:
                return short
        self.last = self._the_aside()
        return self.last

    def _left_of_candidates(self) -> float:
        """The share of the weight of the candidates' problems (as when these candidates were first
        formed) that the tests have not ruled out."""
        key = frozenset(self.candidates)
        full = {(c, m) for c in key for m in self.problems.get(c, ())}
        if key not in self.formed:
            self.formed[key] = self._weight_of(full)
        return self._weight_of(full - self.cleared) / self.formed[key] if self.formed[key] else 1.0

    def _hypothesis(self) -> Hypothesis | None:
        if not self.anomaly_seen:
            return None
        if (first := self._first_named(self.named_first, lambda parts: "two cables seen with their ends swapped"
                                       if len(parts) == 2 else "its end is off its terminal")) is not None:
            return first
        options = []
        if len(self.candidates) == 1:
            options.append(set(self.candidates))
        owners = {c for c, _ in self.plan}
        if len(owners) == 1:
            options.append(owners & self.candidates or owners)
        if not self.plan and self.candidates:
            options.append(set(self.candidates))
        for option in options:
            key = frozenset(option)
            if key and key not in self.tried:
                self.tried.add(key)
                return Hypothesis(key, "the only remaining explanation of the anomalies seen")
        return self._cheap_repairs()

    # ------------------------------------------------------------------
    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        if outcome["kind"] == "hypothesis":
            named = set(outcome.get("data", {}).get("candidates", [])) or set(getattr(self.last, "components", ()))
            if outcome["verdict"] in ("partial", "wrong"):
                self._shorts_after(outcome["verdict"], outcome.get("data", {}), frozenset(named))
                if outcome["verdict"] == "partial":
                    self.partly_repaired = True
                if outcome["verdict"] == "partial" and self.rebase:
                    self._rebase(named)
                    self._after_partial(frozenset(named), outcome.get("data", {}))
                    if self.still_dark and outcome.get("data", {}).get("works") is False:
                        self._main_lamp_dark(named)
                self.excluded |= named
                self.cleared |= {(c, m) for c in named for m in self.problems.get(c, ())}
                self._replan()
            return
        if self.repairing is not None:
            self._repaired(self.repairing, outcome)
            return
        test = self.last_test
        if test is None:
            return
        self._note_test(Action(test.action, (test.component,)), outcome)
        if not outcome["success"]:
            if outcome.get("refusal") == Refusal.REMOVED_PART:
                self.components.discard(test.component)
            self._replan()
            return
        if test.modes & self.coupling_modes:      # moved into place and nothing was mended: not that
            self.cleared |= {(test.component, m) for m in test.modes}
            self._replan()
            return
        verdict = self._verdict(test, outcome)
        kind = self.catalogue[test.action].observes
        self._reading(test.component, kind, data_of(outcome, test.component), verdict)    # an open part, a short
        if verdict and kind == "voltages" and self._no_drop(test.component, outcome):
            self.anomaly_seen = True     # no current through it: the parts whose opening gives that are the evidence
            return self._replan()
        if kind == "visual" and test.component in self.lamps:
            self._lamp_seen(test.component, outcome)
        if verdict is None:
            self._replan()
            return
        if kind == "voltages" and test.component in self.cables and self.cable_potentials != "never" and \
                self._cable_potentials(test, outcome):
            return
        if self.unsettled_elsewhere and kind in SPLITTING and \
                (data_of(outcome, test.component) or {}).get("settled") is False:
            # a reading that keeps changing: something switches on and off (a coupling, a loose end; a
            # switch its own current opens, tripping on an over-current), not where the part measured is
            self.anomaly_seen = True
            self.tripping = bool(self.fed_by_switch and self.raising_modes)
            self._replan()
            return
        # while a light comes and goes, one reading right does not rule out what acts at random
        held = self.intermittent_modes if self.flickering and self.settings.flicker_holds else set()
        local = kind in LOCAL_TESTS or (self.split == "sides" and kind == "visual" and test.component not in self.lamps)
        # a potential that depends on nothing else (a source's own terminals) shows that part alone
        local = local or (self.source_local and verdict is True and kind == "voltages" and self.split == "sides"
                          and (not self.deps.get(test.component, set()) & self.components or self._own_voltage_off(test, outcome)))
        if local:      # a look at a part that is not a light shows that part (a cable's ends), nothing else
            off = kind == "connections" and self._end_off(test.component, outcome)
            if kind == "connections" and not (verdict and self._reversed(test.component, outcome)):
                crossed = self._crossed(test.component, outcome) if verdict and self.see_crossings else []
                missing = self._missing(test.component, outcome) if self.see_missing else []
                # a part whose end is not where it should be, that the main lamps' anomalies do not implicate
                aside = [p for p in missing if len(p) == 1 and self._sets_aside(min(p), end_off=True)]
                shown = crossed + [p for p in missing if p not in aside]
                self.named_first += [p for p in shown if p not in self.named_first]
                if (shown and not verdict) or (aside and not crossed and not off):
                    # a neighbour's end is off (or elsewhere): an anomaly, not of this cable
                    self.anomaly_seen = True
                    self.cleared |= {(test.component, m) for m in test.modes}
                    self._replan()
                    return
            if verdict:
                self.anomaly_seen = True
                if self._sets_aside(test.component, end_off=off):
                    self._replan()
                    return
                self.candidates = {test.component}
                self.plan = {(test.component, m) for m in self.problems.get(test.component, ())} - self.cleared
                return
            self.cleared |= {(test.component, m) for m in test.modes - (held if kind != "connections" else set())}
        else:
            if verdict:
                self.anomaly_seen = True
                self.suspicious.add(test.component)
            reach = self._reach(test, working=not verdict) if self.split == "sides" else None
            if verdict and kind == "current" and self.current_module and \
                    (self.current_module_all or not self.deps.get(test.component)):
                # a current is shared by the parts in series with it: at the graph's grain, its module
                module = self.module_of.get(test.component)
                reach = {test.component} | (self.deps.get(test.component, set()) & self.components) | \
                    {c for c in self.components if module is not None and self.module_of.get(c) == module}
            implicated = self._anomalous_if(test)
            # (held: a reading right is a moment; the dark lamp's potentials speak of what cuts it off: _probe_dark)
            if (verdict or not held or kind == "visual") and not (verdict and test.component in self.probed):
                self._add_evidence(test.component, anomalous=verdict, reach=reach)
            if not verdict:
                own = set(test.modes)
                if kind == "voltages" and self.port_potentials:
                    # potentials are read at a part's ends: they show its ends' faults, not
                    # whether the part itself conducts (an open lamp beside a lit one reads right)
                    own &= self.port_modes
                self.cleared |= {(test.component, m) for m in own - held}
                if reach is not None:      # what a nominal reading depends on works
                    self.cleared |= {(c, m) for c, m in self._shown_working(test) if m not in held}
            if self.split == "dependencies" and kind in SPLITTING:
                # the outcome splits the candidates: an anomaly lies among what the part depends on; a nominal reading clears it
                if not verdict:
                    self.cleared |= implicated
                elif implicated:
                    self._replan()
                    self.plan &= implicated
                    self.candidates &= {c for c, _ in implicated} or self.candidates
                    return
        self._replan()

    def _repaired(self, part: str, outcome: Outcome) -> None:
        """A repair of ``part`` done, and the system does not work yet (or the session would have
        ended): as after a hypothesis that helped only partly, whether the main lamps are lit
        unknown. A repair refused: the part is named instead."""
        self.repairing = None
        if not outcome["success"]:
            self.unrepairable.add(part)
            self.tried.discard(frozenset({part}))
            return
        self.partly_repaired = True
        self._part_repaired(part)
        if self.rebase:
            self._rebase({part})
        self.excluded.add(part)
        self.cleared |= {(part, m) for m in self.problems.get(part, ())}
        self._replan()

    def _main_lamp_dark(self, repaired: set[str]) -> None:
        """The system still does not work after ``repaired``: its one main lamp is still dark (a
        suspect again, known dark, not looked at again). With several main lamps, which one is dark
        is not said."""
        if len(self.main_lamps) != 1:
            return
        lamp = next(iter(self.main_lamps))
        if lamp in repaired or lamp not in self.components:
            return
        self._add_evidence(lamp, anomalous=True)
        self.suspicious.add(lamp)
        self.seen.add(lamp)
        self.dark.add(lamp)
        if not self.reinspect:
            self.executed |= {(a, c) for (a, c) in self.tests if c == lamp and self.catalogue[a].observes == "visual"}

    def _lamp_seen(self, lamp: str, outcome: Outcome) -> None:
        """A look at a lamp with its ends on and steady: seen dark, or not (see :attr:`dark`)."""
        d = data_of(outcome, lamp)
        if not isinstance(d, dict) or "lit" not in d or d.get("flickering") or \
                any(v != TerminalState.ATTACHED for v in (d.get("visible_ends") or {}).values()):
            return
        (self.dark.discard if d["lit"] else self.dark.add)(lamp)

    def _verdict(self, test: Test, outcome: Outcome) -> bool | None:
        """True if the outcome shows an anomaly, False if it looks nominal, None if it says nothing."""
        d = data_of(outcome, test.component)
        kind = self.catalogue[test.action].observes
        nominal = self.nominal.components.get(test.component)
        if kind in ("continuity", "diode"):
            if kind == "continuity" and d and self.nominal.live.get(f"closed:{test.component}") is False:
                # contacts read as they are, judged against their closed resistance: a switch set up open
                # reads open when it works, and conducts when it is stuck closed (or shorted)
                return bool(d.get("verdict") != "open")
            return None if not d else d.get("verdict") not in ("nominal", "not applicable (a source)")
        if kind == "switch-test":
            return None if not d else not d.get("passed", True)
        if kind == "connections":
            if not isinstance(d, dict):
                return None
            if self._end_off(test.component, outcome):       # off its terminal, or loose
                return True
            for port, end in d.items():
                attached = set(end["attached_to"])
                net = self.expected_nets.get((test.component, port))
                same_net = {f"{c}.{p}" for c, p in self.on_net.get(net, []) if c != test.component} \
                    if net is not None else set()
                if attached != same_net and attached - same_net:
                    return True
            return False
        if kind in ("voltages", "current") and isinstance(d, dict) and d.get("settled") is False:
            if self.unsettled_flicker:     # a reading that keeps changing: something switches on and off
                self.flickering = True
            return True
        if kind == "voltages":
            volts = (d or {}).get("port_voltages") if isinstance(d, dict) else None
            if not volts or nominal is None:
                return None
            return any(v is None or abs(v - (nominal.port_v.get(p) or 0.0)) > VOLTAGE_TOLERANCE
                       for p, v in volts.items())
        if kind == "current":
            if not isinstance(d, dict) or nominal is None:
                return None
            return current_off(float(d["current"]), nominal.current)
        if kind == "visual":
            if not isinstance(d, dict):
                return None
            ends = d.get("visible_ends") or {}
            if any(v != TerminalState.ATTACHED for v in ends.values()) or d.get("flickering") or d.get("damage"):
                return True          # an end off, a light that comes and goes, a part seen blown or burnt out
            if "lit" in d:
                lit_when_nominal = test.component in self.nominal.lit
                if d["lit"] == lit_when_nominal and not lit_when_nominal:
                    return None   # dark as it should be: says nothing about what it depends on
                return bool(d["lit"] != lit_when_nominal)
            return False if ends else None
        return None

