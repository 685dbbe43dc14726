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

1. the symptom report is classified (anomalous / nominal components) by
   :class:`KeywordClassifier` — component labels and synonyms from the graph,
   with negation — or by an LLM classifier (``classifier="llm"``);
2. each anomalous component X gives the evidence set {X} ∪ deps(X); each
   nominal component Y the set of all components except {Y} ∪ deps(Y);
3. candidates are the minimum open dense set of the topology the evidence
   sets generate (the components whose support — the evidence sets holding
   them — is inclusion-maximal);
4. the plan is the problems of the candidates and the tests that reveal them;
   the next action is the test with the best information gain per minute,
   the gain counting how its outcome splits the candidates: a light speaks of
   all it depends on, and (while the candidates span a chain of modules) a
   voltage of what it depends on on its side of the supply (:meth:`_reach`);
5. outcomes update the state: a local test (continuity, diode, switch,
   connections, a look at a part that is not a light) that finds an anomaly
   narrows the candidates to its target, one that finds nothing removes its
   target's problems; an observation (lights, voltages, currents) adds
   evidence like a symptom does, and one that reads right clears what it
   shows working; readings that keep changing (typed ``settled``) are anomalies;
6. hypotheses: one candidate left after an anomaly, or the component of the
   only remaining problem, or all candidates when no problem is left, or the
   candidates cheaper to repair than to test when that costs less in
   expectation than testing (repair as a probe); a wrong verdict removes the
   named components and replans, a partial one also drops the anomalies the
   named parts may explain (their lights may be looked at again).

Switching couplings (a relay opened and closed by what flows through it) make
the relay depend on what its current feeds; optical couplings are problems of
the element that would block them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox

from ..env.actions import repairs_fitting
from ..env.outcomes import Refusal, TerminalState
from ..env.service import Action, Hypothesis, simulator_for
from ..errors import AssistantError
from ..kg import graphs
from ..kg.store import KnowledgeSource
from ..llm.settings import CONFIG_KEYS as LLM_KEYS
from .registry import BaseAssistant, Briefing

LOCAL_TESTS = {"continuity", "diode", "switch-test", "connections"}
VOLTAGE_TOLERANCE = 0.5      # volts
CURRENT_TOLERANCE = 0.1      # relative
SUSPECT_WEIGHT = 1.5                # prior weight of the problems of a component seen misbehaving
ROUND_MINUTES = 20.0         # what a round is worth in minutes (the budget counts rounds)
SPLITTING = {"voltages", "current"}   # observations whose outcome depends on what the part depends on

NEGATIONS = {"not", "no", "never", "neither", "nor", "n't", "doesn't", "don't", "isn't", "won't", "cannot",
             "can't", "without", "nothing"}
ON_WORDS = {"lit", "on", "lights", "light", "glows", "glow", "shines", "bright", "works", "lighting"}
OFF_WORDS = {"off", "dark", "out", "unlit", "dead", "extinguished", "dim"}
INTERMITTENT = {"flicker", "flickers", "flickering", "toggles", "occasionally", "intermittently", "sometimes",
                "blinks", "blinking", "oscillates", "oscillating"}
# said of a whole report: something goes and comes back
COMES_AND_GOES = re.compile(r"\bevery so often\b|\bfrom time to time\b|\bnow and then\b|\bcomes? back\b|"
                            r"\bon and off\b|\boff and on\b")


@dataclass(frozen=True)
class Test:
    action: str
    component: str
    cost: float
    modes: frozenset[str]


class KeywordClassifier:
    """Finds components in a symptom report by their names and reads whether
    each is said to be lit, dark or flickering (with negation)."""

    def __init__(self, names: dict[str, list[str]], coordinate: bool = False):
        self.coordinate = coordinate      # a name joined by "and" to a clause that says a state shares it
        self.phrases: list[tuple[tuple[str, ...], str]] = []
        for comp, aliases in sorted(names.items()):
            for alias in sorted(set(aliases) | {comp}):
                toks = tuple(_tokens(alias.replace("_", " "))) if alias != comp else (comp.lower(),)
                if toks:
                    self.phrases.append((toks, comp))
        self.phrases.sort(key=lambda p: (-len(p[0]), p))   # longest first, then a fixed order
        # numbered families ("control 3 LED", "LED of control 3"): a name with one number in
        # it, by the words around the number, for reports that give a range ("3 to 8")
        self.families: dict[frozenset[str], dict[int, str]] = {}
        for toks, comp in self.phrases:
            numbers = [t for t in toks if t.isdigit()]
            if len(numbers) == 1 and len(toks) > 1:
                words = frozenset(_singular(t) for t in toks if not t.isdigit())
                self.families.setdefault(words, {}).setdefault(int(numbers[0]), comp)

    def mentions(self, text: str) -> list[tuple[str, str]]:
        """(component, state) pairs; state is "on", "off" or "intermittent"."""
        parts = re.split(r"([.;:]|,\s*(?:and|but)\s|\band\b|\bbut\b|\bwhile\b|\bwhereas\b)", text.lower())
        clauses: list[tuple[list[str], list[str], str | None, str]] = []   # tokens, parts, own state, joint after
        for i in range(0, len(parts), 2):
            toks = _tokens(parts[i])
            if toks:
                found, free = self._found(parts[i], toks)
                clauses.append((toks, found, _state(free), parts[i + 1].strip() if i + 1 < len(parts) else ""))
        out: list[tuple[str, str]] = []
        previous = None
        for k, (toks, found, own, joint) in enumerate(clauses):
            state = own or (previous if found and ("so" in toks or "too" in toks or "also" in toks) else None)
            following = clauses[k + 1][2] if k + 1 < len(clauses) else None
            if state is None and found and self.coordinate and joint == "and" and following:
                state = following     # "lamp 2 and all five LEDs stay lit": what follows says it
            if state is None and found and previous and len(toks) <= 6:
                state = previous
            for comp in found:
                if state:
                    out.append((comp, state))
            if state:
                previous = state
        return out

    def _found(self, clause: str, toks: list[str]) -> tuple[list[str], list[str]]:
        """The components a clause names (longest names first, numbered ranges too) and
        the words left over."""
        used = [False] * len(toks)
        found: list[str] = []
        for phrase, comp in self.phrases:
            n = len(phrase)
            for i in range(len(toks) - n + 1):
                if tuple(toks[i:i + n]) == phrase and not any(used[i:i + n]):
                    for j in range(i, i + n):
                        used[j] = True
                    if comp not in found:
                        found.append(comp)
        for low, high in re.findall(r"\b(\d+)\s+(?:to|through)\s+(\d+)\b", clause):
            words = {_singular(t) for t in toks if not t.isdigit()}
            for family in [f for f in sorted(self.families, key=sorted) if f <= words]:
                members = self.families[family]
                found += [members[n] for n in range(int(low), int(high) + 1)
                          if n in members and members[n] not in found]
        return found, [tok for tok, u in zip(toks, used, strict=True) if not u]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _tokens(text: str) -> list[str]:
    return re.findall(r"n't|[a-z0-9_]+", text.lower().replace("’", "'"))


ARTICLES = {"the", "a", "an", "top", "its", "each", "one", "both", "either", "this", "that"}


def _state(toks: list[str]) -> str | None:
    if INTERMITTENT & set(toks) or ("on" in toks and "off" in toks and "and" in toks):
        return "intermittent"
    # "on" before an article is a preposition ("the LED on the control cube"), not a state
    toks = [t for i, t in enumerate(toks) if not (t == "on" and i + 1 < len(toks) and toks[i + 1] in ARTICLES)]
    negated = bool(NEGATIONS & set(toks))
    if OFF_WORDS & set(toks):
        return "on" if negated and not (ON_WORDS & set(toks)) else "off"
    if ON_WORDS & set(toks):
        return "off" if negated else "on"
    return None


def dense_candidates(components: set[str], evidence: list[frozenset[str]]) -> set[str]:
    """The minimum open dense set: components whose support is inclusion-maximal."""
    if not evidence:
        return set(components)
    support = {c: frozenset(i for i, e in enumerate(evidence) if c in e) for c in components}
    patterns = set(support.values())
    maximal = {p for p in patterns if not any(p < q for q in patterns)}
    return {c for c, p in support.items() if p in maximal}


@dataclass(frozen=True)
class Knowledge:
    """What the graph says about one system, read once per store (the ns-* queries).

    Shared between sessions: read it, never change it.
    """

    deps: dict[str, set[str]]
    names: dict[str, list[str]]
    problems: dict[str, set[str]]
    tests: dict[tuple[str, str], Test]
    enclosed: frozenset[str] = frozenset()        # components inside an enclosure (access costs a step)
    # couplings an element can block: (emitter, receiver, element, test) — a coupling that
    # acts when it should not is a problem of the element that would block it
    couplings: tuple[tuple[str | None, str | None, str, Test], ...] = ()
    priors: dict[str, float] | None = None        # fault mode -> dk:priorWeight of the fault catalogue
    intermittent: frozenset[str] = frozenset()    # fault modes that act at random (a probability parameter)
    driven: frozenset[str] = frozenset()          # parts a switching coupling opens and closes (relays)
    port_modes: frozenset[str] = frozenset()      # fault modes of a part's ends (dk:targetKind "port")

    @classmethod
    def of(cls, store: KnowledgeSource, key: str) -> "Knowledge":
        """The knowledge of system ``key`` (cached by the versions of the graphs it is read from)."""
        version = (key, *(store.version_of(g) for g in (graphs.ONTOLOGY, graphs.system(key), graphs.inferred(key))))
        if version not in _KNOWLEDGE:
            if not version[3]:
                raise AssistantError(f"the store holds no inferences for system {key}; load the system "
                                     "again (inferences are computed when a system is loaded) or run "
                                     f"`diagkg reason {key}`")
            system = ox.NamedNode(store.select("sim-system", {"key": ox.Literal(key)})[0]["system"])
            deps: dict[str, set[str]] = {}
            for r in store.select("ns-dependencies", {"system": system}):
                deps.setdefault(r["component"], set()).add(r["dependency"])
            names: dict[str, list[str]] = {}
            for r in store.select("ns-labels", {"system": system}):
                names.setdefault(r["component"], []).append(r["name"])
            problems: dict[str, set[str]] = {}
            for r in store.select("ns-problems", {"system": system}):
                problems.setdefault(r["component"], set()).add(r["mode"])
            found: dict[tuple[str, str], dict[str, Any]] = {}
            for r in store.select("ns-tests", {"system": system}):
                t = found.setdefault((r["action"], r["component"]), {"cost": float(r["cost"]), "modes": set()})
                t["modes"].add(r["mode"])
            tests = {k: Test(k[0], k[1], v["cost"], frozenset(v["modes"])) for k, v in found.items()}
            ns = graphs.namespace_of(system.value)
            enclosed = frozenset(c for c in names if store.select("part-access", {"part": ox.NamedNode(ns + c)}))
            couplings = tuple((r["emitter"], r["receiver"], r["element"],
                               Test(r["action"], r["element"], float(r["cost"]), frozenset({r["mode"]})))
                              for r in store.select("ns-coupling-tests", {"system": system}))
            modes = store.select("fault-modes")
            priors = {r["mode"]: float(r["prior"]) for r in modes if r["prior"] is not None}
            intermittent = frozenset(r["mode"] for r in modes if r["parameter"] == "probability")
            if len(_KNOWLEDGE) >= 32:
                _KNOWLEDGE.pop(next(iter(_KNOWLEDGE)))
            driven = frozenset(r["driven"] for r in store.select("ns-switching", {"system": system}))
            port_modes = frozenset(r["mode"] for r in modes if r["targetKind"] == "port")
            _KNOWLEDGE[version] = cls(deps, names, problems, tests, enclosed, couplings, priors, intermittent, driven,
                                      port_modes)
        return _KNOWLEDGE[version]


_KNOWLEDGE: dict[tuple[str, ...], Knowledge] = {}


class NeuroSymbolic(BaseAssistant):
    """Evidence, dense candidates and information gain over the knowledge graph."""

    name = "neuro-symbolic"
    # its own, and a language model's when the symptoms are classified by one (classifier "llm")
    config_keys = frozenset({
        "classifier", "access", "blind_looks", "chain_modules", "comes_and_goes", "coordinate", "coupling_flicker",
        "couplings", "current_module", "current_module_all", "intermittent_weight", "lit_modules", "port_potentials",
        "priors", "rebase", "reinspect", "repair_probe", "round_minutes", "source_local", "split", "tiebreak",
        "trust_seen", "unsettled_flicker", "weights"}) | LLM_KEYS

    def __init__(self, classifier: str = "keywords", **config: Any):
        super().__init__(classifier=classifier, **config)
        self.classifier_kind = classifier
        # how an observation (lights, voltages, currents) splits the problems: by the
        # components it depends on ("dependencies"), by those of them on the same side of
        # the supply ("sides": a lamp's look by all it depends on, a voltage by those at
        # its own nominal potential) or only by its own ("problems")
        self.split = str(config.get("split", "sides"))
        # minutes a round is worth (the budget counts rounds), added to a test's cost
        self.round_minutes = float(config.get("round_minutes", ROUND_MINUTES))
        self.access = bool(config.get("access", True))          # expected access cost in the gain
        # what the gain counts: problems ("problems") or candidates, each sharing its weight among its problems
        self.weights = str(config.get("weights", "problems"))
        self.couplings_on = bool(config.get("couplings", True))    # problems for couplings
        self.reinspect = bool(config.get("reinspect", False))      # look again at lights already seen
        self.use_priors = bool(config.get("priors", True))        # weigh problems by their mode's prior
        # a light that comes and goes makes faults that act at random this much more likely
        self.intermittent_weight = float(config.get("intermittent_weight", 4.0))
        self.blind_looks = bool(config.get("blind_looks", False))   # look at parts a look shows nothing of
        self.tiebreak = str(config.get("tiebreak", "upstream"))         # "order" or "upstream"
        self.coupling_flicker = bool(config.get("coupling_flicker", True))
        self.trust_seen = bool(config.get("trust_seen", False))
        # bisect with voltages while the candidates lie in at least this many modules
        self.chain_modules = int(config.get("chain_modules", 5))
        # a reading that keeps changing counts as a light that comes and goes
        self.unsettled_flicker = bool(config.get("unsettled_flicker", True))
        self.port_potentials = bool(config.get("port_potentials", True))  # a right voltage clears only end faults
        self.source_local = bool(config.get("source_local", True))   # a wrong potential of a source is its own
        self.lit_modules = bool(config.get("lit_modules", False))   # a light seen lit vouches for other modules only
        self.current_module = bool(config.get("current_module", True))   # a wrong current speaks of its module
        self.current_module_all = bool(config.get("current_module_all", True))
        self.comes_and_goes = bool(config.get("comes_and_goes", False))   # "from time to time" in a report
        # name cheap suspects together as a probe: off, since naming healthy parts with a faulty one is
        # overbroad (turned back, nothing repaired) under the honest success rule
        self.repair_probe = bool(config.get("repair_probe", False))
        self.rebase = bool(config.get("rebase", True))      # after a partial repair, drop what it may explain

    # ------------------------------------------------------------------
    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.catalogue = briefing.catalogue
        knowledge = Knowledge.of(briefing.store, briefing.system)
        self.deps, self.problems, self.tests = knowledge.deps, knowledge.problems, knowledge.tests
        self.port_modes = knowledge.port_modes
        names = knowledge.names
        self.components = set(names) & set(briefing.parts)
        self.part_types = dict(briefing.parts)
        self.coupling_modes: set[str] = set()
        self.dependents: dict[str, int] = {}
        for needs in self.deps.values():
            for d in needs:
                self.dependents[d] = self.dependents.get(d, 0) + 1
        self.priors = dict(knowledge.priors or {}) if self.use_priors else {}
        # faults that can make a light come and go: those acting at random, and (with
        # coupling_flicker) couplings that act when they should not (a feedback loop)
        self.intermittent_modes = set(knowledge.intermittent)
        if self.couplings_on and knowledge.couplings:
            self._couple(knowledge, briefing)
        if self.couplings_on and knowledge.driven:
            self._switched(knowledge.driven)
        self.simulator = simulator_for(briefing.store, briefing.system)
        self.enclosed = knowledge.enclosed
        self.nominal = self.simulator.simulate()
        self.expected_nets = self.simulator.skeleton.net_of_port
        self.lamps = {c for c, comp in self.simulator.skeleton.components.items() if comp.type in ("Bulb", "LED")}
        self.cables = {c for c, comp in self.simulator.skeleton.components.items() if comp.type == "Cable"}
        self.sides = self._sides()
        self.module_of = {c: comp.module for c, comp in self.simulator.skeleton.components.items()}
        self.revealed: dict[str, set[str]] = {}       # action -> the fault modes it reveals (on any part)
        for (action, _), t in self.tests.items():
            self.revealed.setdefault(action, set()).update(t.modes)
        # symptoms -> evidence
        self.evidence: list[frozenset[str]] = []
        self.sources: list[tuple[str, bool, frozenset[str]]] = []   # per evidence set: (part, anomalous, implicated)
        self.anomaly_seen = False
        self.seen: set[str] = set()          # lights whose state the report or the visible lights gave
        self.flickering = False              # a light said to come and go
        anomalous, nominal = self.classify(briefing, names)
        self.suspicious = set(anomalous)        # seen misbehaving: their own faults are the first suspects
        for comp in sorted(anomalous):
            self._add_evidence(comp, anomalous=True)
        for comp in sorted(nominal):
            self._add_evidence(comp, anomalous=False, reach=self._lit_shows(comp))
        self.excluded: set[str] = set()
        self.tried: set[frozenset[str]] = set()
        self.executed: set[tuple[str, str]] = set()
        if not self.reinspect:       # what was already seen is not looked at again
            self.seen |= anomalous | nominal
            self.executed |= {(a, c) for (a, c) in self.tests if c in self.seen
                              and self.catalogue[a].observes == "visual" and c in self.lamps}
        self.cleared: set[tuple[str, str]] = set()     # (component, mode) ruled out by a test
        if self.trust_seen:          # a light seen lit as it should be has none of its own faults
            self.cleared |= {(c, m) for c in nominal & self.lamps for m in self.problems.get(c, ())}
        self.last: Action | Hypothesis | None = None
        self.last_test: Test | None = None
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

    def _switched(self, driven: frozenset[str]) -> None:
        """Switching couplings: a relay opened and closed by what flows through it depends on
        everything its current feeds, and so does whatever depends on the relay."""
        self.deps = {c: set(d) for c, d in self.deps.items()}
        for relay in sorted(driven & self.components):
            fed = {c for c, needs in self.deps.items() if relay in needs}
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
        classifier = KeywordClassifier(names, coordinate=bool(self.config.get("coordinate", False)))
        anomalous, nominal = set(), set()
        if self.comes_and_goes and COMES_AND_GOES.search(briefing.symptoms.lower()):
            self.flickering = True
        for comp, state in classifier.mentions(briefing.symptoms) + classifier.mentions(briefing.visible):
            self.seen.add(comp)
            expected = "on" if comp in self.nominal.lit else "off"
            if state == "intermittent":
                self.flickering = True
            if state == "intermittent" or state != expected:
                anomalous.add(comp)
            elif state == "on":
                # a light that is on as it should be shows that everything it depends on works;
                # one that is off as it should be (an alarm LED) shows nothing about them
                nominal.add(comp)
        return anomalous, nominal - anomalous

    def _add_evidence(self, comp: str, anomalous: bool, reach: set[str] | None = None) -> None:
        implicated = frozenset(reach if reach else {comp} | (self.deps.get(comp, set()) & self.components))
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
        kept = [i for i, (_, anomalous, implicated) in enumerate(self.sources)
                if not (anomalous and implicated & repaired)]
        stale = {self.sources[i][0] for i in range(len(self.sources)) if i not in kept}
        self.evidence = [self.evidence[i] for i in kept]
        self.sources = [self.sources[i] for i in kept]
        self.seen -= stale
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
        for _ in range(len(self.components) + 2):
            hyp = self._hypothesis()
            if hyp is not None:
                self.last = hyp
                return hyp
            test = self._best_test()
            if test is not None:
                self.last, self.last_test = Action(test.action, (test.component,)), test
                self.executed.add((test.action, test.component))
                return self.last
            # nothing left to test among these candidates: look elsewhere
            if not self.candidates:
                return None
            self.excluded |= self.candidates
            self._replan()
        return None

    def _hypothesis(self) -> Hypothesis | None:
        if not self.anomaly_seen:
            return None
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

    def _weights(self) -> dict[tuple[str, str], float]:
        """Each problem of the plan weighted by how suspect its part is and its mode's prior."""
        suspect = {c: (SUSPECT_WEIGHT if c in self.suspicious else 1.0) for c, _ in self.plan}
        if self.weights == "candidates":        # each candidate weighs the same, shared among its problems
            count: dict[str, int] = {}
            for c, _ in self.plan:
                count[c] = count.get(c, 0) + 1
            suspect = {c: w / count[c] for c, w in suspect.items()}
        boost = self.intermittent_weight if self.flickering else 1.0
        return {(c, m): suspect[c] * self.priors.get(m, 1.0) * (boost if m in self.intermittent_modes else 1.0)
                for c, m in self.plan}

    def _repair_cost(self, part: str) -> float:
        """What repairing a part costs: the cheapest repair action of the catalogue for its type."""
        fitting = repairs_fitting(self.catalogue, self.part_types.get(part, ""), "component")
        return fitting[0].cost if fitting else math.inf

    def _cheap_repairs(self) -> Hypothesis | None:
        """Repair as a probe: the candidates cheaper to repair than to test (a cable is put
        back on its terminals for less than an inspection costs), repaired together when
        that costs less in expectation than finding the fault among the candidates by
        tests (about log2(n + 1) tests for n candidates, each at the best test's cost)."""
        if not self.repair_probe or not self.plan:
            return None
        owners = {c for c, _ in self.plan} & self.candidates
        cheap = {c for c in owners
                 if self._repair_cost(c) <= min((t.cost for (a, p), t in self.tests.items() if p == c), default=0.0)}
        if not cheap or frozenset(cheap) in self.tried:
            return None
        test = self._best_test()
        per_test = self._expected_cost(test) if test is not None else math.inf
        weight = self._weights()
        total = sum(weight.values())
        p = sum(w for (c, _), w in weight.items() if c in cheap) / total if total else 0.0
        repair = sum(self._repair_cost(c) for c in cheap) + self.round_minutes
        by_tests = math.log2(len(owners) + 1) * per_test
        rest = math.log2(len(owners - cheap) + 1) * per_test
        if repair + (1 - p) * rest < by_tests:
            self.tried.add(frozenset(cheap))
            return Hypothesis(frozenset(cheap), "the suspects that cost less to repair than to test")
        return None

    def _best_test(self) -> Test | None:
        """The test with the best information gain per minute over the remaining
        problems, each problem weighted by how suspect its component is (a
        component seen misbehaving weighs :data:`SUSPECT_WEIGHT` times more)."""
        weight = self._weights()
        total = sum(weight.values())
        if total == 0:
            return None
        best, best_gain = None, -1.0
        # in a fixed order (action, component), so that ties never depend on the store's row order
        for (action, comp), test in sorted(self.tests.items()):
            if comp not in self.candidates or (action, comp) in self.executed:
                continue
            if not self.blind_looks and self.catalogue[action].observes == "visual" and not test.modes & self.coupling_modes \
                    and comp not in self.lamps and comp not in self.cables:
                continue           # a look shows a light or a cable's ends, nothing of other parts
            covered = sum(weight[p] for p in self._anomalous_if(test))
            if covered == 0:
                continue
            a, b = covered, total - covered
            split = 0.0 if b <= 1e-9 else (a / total) * math.log2(total / a) + (b / total) * math.log2(total / b)
            # a test that covers everything still tells something when only one problem is left
            gain = (split if split > 0 else 1e-3) / max(self._expected_cost(test), 1.0)
            if gain > best_gain + 1e-12 or (abs(gain - best_gain) <= 1e-12 and best and self._before(test, best)):
                best, best_gain = test, gain
        return best

    def ranked_candidates(self) -> list[frozenset[str]]:
        """Its candidates, one part each, the heaviest first: the summed weight of
        each one's remaining problems (suspicion × prior), then by name."""
        weight: dict[str, float] = {c: 0.0 for c in self.candidates}
        boost = self.intermittent_weight if self.flickering else 1.0
        for c, m in self.plan:
            if c in weight:
                weight[c] += (SUSPECT_WEIGHT if c in self.suspicious else 1.0) * self.priors.get(m, 1.0) \
                    * (boost if m in self.intermittent_modes else 1.0)
        return [frozenset({c}) for c in sorted(weight, key=lambda c: (-weight[c], c))]

    def _before(self, test: Test, other: Test) -> bool:
        """Between two tests of equal gain: the cheaper, then (``tiebreak="upstream"``)
        the one on the part more others depend on; otherwise the first in (action, part) order."""
        if test.cost != other.cost:
            return test.cost < other.cost
        if self.tiebreak == "upstream":
            return self.dependents.get(test.component, 0) > self.dependents.get(other.component, 0)
        return False

    def _sides(self) -> dict[str, frozenset[str]]:
        """The side of the supply each part sits on in the nominal state: "high" for
        ports near the supply's potential, "low" for ports near 0 V (a lamp has both)."""
        volts = [v for c in self.nominal.components.values() for v in c.port_v.values() if v is not None]
        top = max((abs(v) for v in volts), default=0.0)
        sides: dict[str, frozenset[str]] = {}
        for cid, comp in self.nominal.components.items():
            found = {"high" if abs(v) > top / 2 else "low" for v in comp.port_v.values() if v is not None}
            sides[cid] = frozenset(found or {"high", "low"})
        return sides

    def _reach(self, test: Test, working: bool = False) -> set[str]:
        """The parts whose faults the outcome of ``test`` speaks of: its own part, and for an
        observation that splits the candidates the parts the observed one depends on. With
        ``working``, those a nominal outcome shows working: the graph orders dependencies
        between modules, not among the parts of one module (a module's function depends on
        all its cables), so a nominal reading clears nothing of its own module but its part."""
        comp, kind = test.component, self.catalogue[test.action].observes
        deps = self.deps.get(comp, set()) & self.components
        if self.split == "dependencies" and kind in SPLITTING:
            return {comp} | deps
        if self.split != "sides":
            return {comp}
        if kind == "visual" and comp in self.lamps and comp in self.nominal.lit:
            found = {comp} | deps     # a lamp lights only when everything it depends on works
        elif kind == "voltages" and len({self.module_of.get(c) for c in self.candidates}) >= self.chain_modules:
            # among candidates spread over a chain of modules, a potential shows breaks
            # between it and the supply's pole on its side
            side = self.sides.get(comp, frozenset({"high", "low"}))
            found = {comp} | {d for d in deps if self.sides.get(d, side) & side}
        else:
            return {comp}
        if working:
            module = self.module_of.get(comp)
            found = {d for d in found if d == comp or module is None or self.module_of.get(d) != module}
        return found

    def _anomalous_if(self, test: Test) -> set[tuple[str, str]]:
        """The problems of the plan under which ``test`` would show an anomaly: its own
        part's modes it reveals, and every problem of the other parts in its reach (the
        evidence an outcome adds narrows the candidates to its reach, or away from it)."""
        own = {(test.component, m) for m in test.modes if (test.component, m) in self.plan}
        reach = self._reach(test) - {test.component}
        return own | {(c, m) for c, m in self.plan if c in reach}

    def _shown_working(self, test: Test) -> set[tuple[str, str]]:
        """The problems a nominal outcome of ``test`` rules out: the modes it reveals, on its
        own part and on the parts in its reach."""
        modes = self.revealed.get(test.action, set())
        return {(c, m) for c in self._reach(test, working=True) - {test.component}
                for m in self.problems.get(c, ()) if m in modes}

    def _expected_cost(self, test: Test) -> float:
        """Its minutes, getting at the part when it is inside an enclosure, and the round it takes."""
        access = 0.0
        if self.access and test.component in self.enclosed and \
                self.catalogue[test.action].requires & {"Observable", "Reachable"}:
            access = min((spec.cost for aid, spec in self.catalogue.items() if aid == "open_opening"), default=0.0)
        return test.cost + access + self.round_minutes

    # ------------------------------------------------------------------
    def record(self, outcome: dict[str, Any]) -> None:
        super().record(outcome)
        if outcome["kind"] == "hypothesis":
            named = set(outcome.get("data", {}).get("candidates", [])) or set(getattr(self.last, "components", ()))
            if outcome["verdict"] in ("partial", "wrong"):
                if outcome["verdict"] == "partial" and self.rebase:
                    self._rebase(named)
                self.excluded |= named
                self.cleared |= {(c, m) for c in named for m in self.problems.get(c, ())}
                self._replan()
            return
        test = self.last_test
        if test is None:
            return
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
        if verdict is None:
            self._replan()
            return
        local = kind in LOCAL_TESTS or (self.split == "sides" and kind == "visual" and test.component not in self.lamps)
        # a potential that depends on nothing else (a source's own terminals) shows that part alone
        local = local or (self.source_local and verdict is True and kind == "voltages" and self.split == "sides"
                          and not self.deps.get(test.component, set()) & self.components)
        if local:      # a look at a part that is not a light shows that part (a cable's ends), nothing else
            if verdict:
                self.anomaly_seen = True
                self.candidates = {test.component}
                self.plan = {(test.component, m) for m in self.problems.get(test.component, ())} - self.cleared
                return
            self.cleared |= {(test.component, m) for m in test.modes}
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
            self._add_evidence(test.component, anomalous=verdict, reach=reach)
            if not verdict:
                own = set(test.modes)
                if kind == "voltages" and self.port_potentials:
                    # potentials are read at a part's ends: they show its ends' faults, not
                    # whether the part itself conducts (an open lamp beside a lit one reads right)
                    own &= self.port_modes
                self.cleared |= {(test.component, m) for m in own}
                if reach is not None:      # what a nominal reading depends on works
                    self.cleared |= self._shown_working(test)
            if self.split == "dependencies" and kind in SPLITTING:
                # the outcome splits the candidates: an anomaly lies among what the part depends
                # on; a nominal reading clears all of that
                if not verdict:
                    self.cleared |= implicated
                elif implicated:
                    self._replan()
                    self.plan &= implicated
                    self.candidates &= {c for c, _ in implicated} or self.candidates
                    return
        self._replan()

    def _verdict(self, test: Test, outcome: dict[str, Any]) -> bool | None:
        """True if the outcome shows an anomaly, False if it looks nominal, None if it says nothing."""
        data = outcome.get("data") or {}
        d = data.get(test.component)
        kind = self.catalogue[test.action].observes
        nominal = self.nominal.components.get(test.component)
        if kind in ("continuity", "diode"):
            return None if not d else d.get("verdict") not in ("nominal", "not applicable (a source)")
        if kind == "switch-test":
            return None if not d else not d.get("passed", True)
        if kind == "connections":
            if not isinstance(d, dict):
                return None
            for port, end in d.items():
                if end["state"] != TerminalState.ATTACHED:       # off its terminal, or loose
                    return True
                attached = set(end["attached_to"])
                same_net = {f"{c}.{p}" for (c, p), net in self.expected_nets.items()
                            if net == self.expected_nets.get((test.component, port)) and c != test.component}
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
            amps = abs(nominal.current)
            return bool(abs(float(d["current"]) - amps) > CURRENT_TOLERANCE * max(amps, 1e-3))
        if kind == "visual":
            if not isinstance(d, dict):
                return None
            ends = d.get("visible_ends") or {}
            if any(v != TerminalState.ATTACHED for v in ends.values()) or d.get("flickering"):
                return True
            if "lit" in d:
                lit_when_nominal = test.component in self.nominal.lit
                if d["lit"] == lit_when_nominal and not lit_when_nominal:
                    return None   # dark as it should be: says nothing about what it depends on
                return bool(d["lit"] != lit_when_nominal)
            return False if ends else None
        return None
