"""The model-based assistant: the simulator is its model (GDE/Sherlock lineage).

Everything it knows comes from the graph and the simulator, never from the
scenario:

* **Candidates** are fault modes of the catalogue (``fault-modes.rq``: what
  each mode applies to, its template and default value) applied to the
  system's parts: every component of a type a mode applies to, every cable end,
  pairs of same-side cable ends (crossed), the two ends of a diode or LED
  (reversed), every coupling. Pairs of faults are added only when no single
  fault explains what has been observed.
* **Each candidate is a world the assistant simulates itself**: a private copy
  of its view of the knowledge graph, a hypothetical scenario injecting the
  candidate's faults, and a service-agent session on it (the same code as the
  real one, so the same action gives the same report when the candidate is
  the truth, loose connections included: same seed, same draws). A candidate
  stays while its world has answered every action so far exactly as the real
  system did, starting with the lights seen at the start.
* **The next action** is the one whose predicted reports split the candidates
  best per minute of expected cost (access included): expected information
  gain over the candidates' reports, predicted by trying the action in each
  world and rolling it back (:mod:`~diagkg.agents.scoring`: exactly the best
  option, with an option dropped as soon as its bound falls below the best
  rate found). Repairs are probes too. When every remaining
  candidate names the same parts, or one set of parts is likely enough, it
  hypothesises them; a verdict is evidence like any other report.
* **Priors** are data: each fault mode's ``dk:priorWeight`` in the fault
  catalogue (a pair weighs the product, times :data:`PAIR_PRIOR`); nothing is
  written per system, so a system written in Turtle by a user works unchanged.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..env.actions import Action, Hypothesis
from ..env.observations import describe_visible
from ..env.scenarios import Fault, Scenario
from ..env.service import Checkpoint, Session, simulator_for
from ..errors import AssistantError, SessionError, SimulationError
from ..kg import graphs
from ..kg.vocab import DK_NS
from .combinations import Candidate, Combinations
from .likeness import Coin, Likeness, coins
from .probes import Probes
from .readings import UNKNOWN, Reading
from .readings import lamps_of as _lamps
from .readings import reading as _key
from .registry import BaseAssistant, Briefing
from .scoring import Scoring

PAIR_PRIOR = 0.1       # a pair of faults against a single one
SOLVED = ("success", "success_no_hypothesis")


def _weighed(c: Candidate, likelihood: float) -> Candidate:
    """``c`` with its weight times how likely its world gave what was seen."""
    return c if likelihood == 1.0 else dataclasses.replace(c, prior=c.prior * likelihood)


class ModelBasedAssistant(Probes, Likeness, Scoring, Combinations, BaseAssistant):
    name = "model-based"
    config_keys = frozenset({
        "anchor_belief", "certain", "certain_cables", "chance", "confident", "confirm", "confirm_after_wrong",
        "fail_minutes", "last_probe", "max_pairs", "max_widenings", "minimal_first", "named_options", "pair_pool",
        "prior_rank", "probe_last", "quick", "role_depth", "round_minutes", "sample", "screen", "shortlist",
        "terminal_prior", "triple_pool", "unexplained"})

    def __init__(self, **config: Any):
        super().__init__(**config)
        self.max_pairs = int(config.get("max_pairs", 600))
        self.pair_pool = int(config.get("pair_pool", 16))      # single faults paired when none explains all
        self.sample = int(config.get("sample", 24))          # candidates a decision looks at
        self.confident = float(config.get("confident", 0.8))  # hypothesise when one set is this likely
        # candidates of a first pass over the options, whose best (shortlist) are scored on all of the
        # sample; 0: one pass over the whole sample, exact (the bounds prune what cannot be best)
        self.quick = int(config.get("quick", 0))
        # a round is worth minutes too: the budget counts rounds, so a cheap test that tells little is not free
        self.round_minutes = float(config.get("round_minutes", 20.0))
        self.certain = float(config.get("certain", 0.9))      # repair a part that this share of candidates names
        self.max_widenings = int(config.get("max_widenings", 4))   # rounds of pairs tried when none is left
        self.shortlist = int(config.get("shortlist", 8))      # options of the second pass
        self.fail_minutes = float(config.get("fail_minutes", 600.0))   # what running out of rounds is worth
        self.triple_pool = int(config.get("triple_pool", 40))   # best pairs extended to triples (and thirds per pair)
        self.role_depth = int(config.get("role_depth", 2))   # connections deep that parts' roles compare
        # a component's own terminal against a cable's end (the likelier place for an end to come off)
        self.terminal_prior = float(config.get("terminal_prior", 0.0))
        self.anchor_belief = float(config.get("anchor_belief", 0.5))   # see _repair
        self.prior_rank = float(config.get("prior_rank", 1.0))   # weight of the priors in ranking pairs
        # a loose connection's report as what it shows open (with its probability) or closed, rather
        # than what the real session's next draw happens to be
        self.chance = bool(config.get("chance", True))
        # observations are tried only on parts where the candidates' simulations differ (see _screened)
        self.screen = bool(config.get("screen", True))
        self.named_options = int(config.get("named_options", 3))   # hypotheses tried as probes: the likeliest
        # the chance that no candidate is the truth (more faults than they have), in the cost of naming them
        self.unexplained = min(0.9, max(0.0, float(config.get("unexplained", 0.0))))
        # a repair tried as a probe is taken to have fixed something only once pairs explain nothing either
        self.probe_last = bool(config.get("probe_last", False))
        self.minimal_first = bool(config.get("minimal_first", True))   # see Combinations._ranked_pairs
        self.certain_cables = bool(config.get("certain_cables", True))  # a cable nearly all name is reconnected
        self.last_probe = bool(config.get("last_probe", True))   # see _probe_repair
        self.confirm = float(config.get("confirm", 0.3))   # see Probes._confirming
        self.confirm_after_wrong = bool(config.get("confirm_after_wrong", True))   # only once a naming was wrong
        self._probing = -1
        self.decision_times: list[float] = []
        self._memo: dict[tuple[Any, ...], tuple[frozenset[str], dict[frozenset[str], tuple[Reading, float, bool]]]] = {}
        self._signatures: dict[tuple[Any, ...], tuple[dict[str, tuple[int, ...]], ...]] = {}
        self._interned: dict[tuple[Any, ...], int] = {}
        self._metered: dict[float | None, int | None] = {}     # see Likeness._signature
        self._metered_amps: dict[float, int | None] = {}
        self._last_rates: dict[str, float] = {}                # see Scoring._scored
        self._looks: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], tuple[int, ...], frozenset[str] | None] | None] = {}
        self._worlds: dict[int, tuple[Checkpoint, Candidate, tuple[Any, ...] | None]] = {}
        self._shared: dict[tuple[Any, ...], tuple[Reading, float]] = {}
        self._fault_index: dict[tuple[Fault, ...], tuple[tuple[str, str], ...]] = {}

    # ------------------------------------------------------------------
    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        if briefing.store is None:
            raise AssistantError("the model-based assistant needs the knowledge graph (briefing.store)")
        self.world = briefing.store.private_copy()
        self.sk = simulator_for(self.world, briefing.system).skeleton
        self.ns = graphs.namespace_of(self.sk.iri)
        self.removed = frozenset(c for c in self.sk.components if c not in briefing.parts)
        self.rng = random.Random(briefing.seed)
        self.steps: list[tuple[Action | Hypothesis, Reading]] = []     # what was done, and what it showed
        self.pending: Action | Hypothesis | None = None
        self._checked: set[frozenset[str]] = set()       # diagnoses a test was chosen to confirm
        self.singles = self._single_candidates()
        # what pairs are made of: a component's own loose terminal is a single fault only (pairing
        # every terminal of every component would bury the likelier pairs)
        self.pairable = [c for c in self.singles if not self._own_terminal(c)]
        self.symmetric = self._symmetric_pairs()
        self.near = self._nearby()
        # what faults of components (and their ports) are on, as the fault catalogue names them
        self._component_terms = frozenset(self.ns + cid for cid in self.sk.components) | frozenset(
            f"{self.ns}{cid}.{port}" for cid, comp in self.sk.components.items() for port in comp.ports)
        self.shadow: Session | None = None
        self.live: list[tuple[Candidate, Checkpoint]] = []
        self.widened = False
        self.tried_pairs: set[tuple[str, ...]] = set()
        self._through: dict[int, tuple[dict[str, str], frozenset[int], Checkpoint | None, int]] = {}
        self._first_lamps: dict[int, tuple[Candidate, tuple[Fault, ...], str]] = {}   # see Probes._lamps_of
        self.widenings = 0
        self.tripled = False
        self.since = 0            # reports before this step need not be explained (see _rebase)
        self.rebased: set[int] = set()      # the repairs rebased on
        self.belief: dict[int, float] = {}  # step -> share of the candidates that named what it repaired
        self.anchor: tuple[Fault, ...] = ()  # faults that repairs done so far have shown and fixed
        # whether components' own loose terminals are candidates yet: from the start (weighted by
        # terminal_prior) or, with terminal_prior 0, only once nothing else explains the reports
        self.terminals = self.terminal_prior > 0
        if self.terminals:
            self.singles = [dataclasses.replace(c, prior=c.prior * self.terminal_prior) if self._own_terminal(c) else c
                            for c in self.singles]
        self._admit(self.singles if self.terminals else self.pairable)
        if not self.live:
            self._widen()

    # -- candidates --------------------------------------------------------
    def _modes(self) -> dict[str, dict[str, Any]]:
        modes: dict[str, dict[str, Any]] = {}
        for r in self.world.select("fault-modes"):
            m = modes.setdefault(r["mode"], {"label": r["label"], "kind": r["targetKind"], "template": r["template"],
                                             "types": set(), "parameters": set(), "default": r["default"],
                                             "prior": float(r["prior"]) if r["prior"] is not None else 1.0})
            m["types"].add(r["appliesTo"][len(DK_NS):])
            if r["parameter"]:
                m["parameters"].add(r["parameter"])
        return modes

    def _fault(self, mode: str, m: dict[str, Any], target: str, other: str | None = None) -> Fault:
        default = float(m["default"]) if m["default"] is not None else None
        probability = default if "probability" in m["parameters"] else None
        value = default if probability is None else None
        return Fault(mode=mode.rsplit("#", 1)[-1], label=m["label"], template=m["template"], target=self.ns + target,
                     other=self.ns + other if other else None, value=value, probability=probability)

    def _single_candidates(self) -> list[Candidate]:
        sk, out = self.sk, []
        comps = {cid: c for cid, c in sorted(sk.components.items()) if cid not in self.removed}
        for mode, m in sorted(self._modes().items()):
            if "other" in m["parameters"] and "value" in m["parameters"]:
                continue            # shorts between any two nodes: too many to enumerate blindly
            if ("value" in m["parameters"] or "probability" in m["parameters"]) and m["default"] is None:
                continue            # a degradation of unknown size (no default value to simulate)
            if m["kind"] == "component":
                for cid, c in comps.items():
                    if c.type in m["types"]:
                        out.append(Candidate((self._fault(mode, m, cid),), frozenset({cid}), m["prior"]))
            elif m["kind"] == "coupling":
                for cp in sk.couplings:
                    # the repair of a coupling that should not act: moving what blocks it into place
                    movers = sorted({element for element, _ in cp.blocked_when}) or [cp.id]
                    for mover in movers:
                        out.append(Candidate((self._fault(mode, m, cp.id),), frozenset({mover}), m["prior"]))
            elif m["kind"] == "port" and "other" not in m["parameters"]:
                # an end that comes off (or off and on, at random): a cable's end, reconnected; a
                # chance fault (a loose end) may also be a component's own terminal, replaced with it
                chance = "probability" in m["parameters"]
                for cid, c in comps.items():
                    if c.type == "Cable" or (chance and c.type not in ("Enclosure", "Opening")):
                        for port in sorted(c.ports):
                            out.append(Candidate((self._fault(mode, m, f"{cid}.{port}"),), frozenset({cid}),
                                                 m["prior"]))
            elif m["kind"] == "port":
                out.extend(self._port_pairs(mode, m, comps))
        return out

    def _own_terminal(self, c: Candidate) -> bool:
        """A component's own terminal coming off (a single end, not a part put in backwards)."""
        if c.faults[0].other is not None:
            return False
        target = c.faults[0].target[len(self.ns):]
        cid = target.split(".", 1)[0]
        return "." in target and cid in self.sk.components and self.sk.components[cid].type != "Cable"

    def _port_pairs(self, mode: str, m: dict[str, Any], comps: dict[str, Any]) -> list[Candidate]:
        out = []
        if "Cable" in m.get("types", set()) or mode.endswith("CrossedCables"):
            cables = [cid for cid, c in comps.items() if c.type == "Cable"]
            for a, b in itertools.combinations(cables, 2):
                if comps[a].module != comps[b].module:
                    continue
                for port in sorted(set(comps[a].ports) & set(comps[b].ports)):
                    out.append(Candidate((self._fault(mode, m, f"{a}.{port}", f"{b}.{port}"),), frozenset({a, b}),
                                         m["prior"]))
        else:        # a component's own two ends, swapped (a diode or LED put in backwards)
            for cid, c in comps.items():
                if c.type in ("LED", "Diode") and len(c.ports) == 2:
                    p, q = sorted(c.ports)
                    out.append(Candidate((self._fault(mode, m, f"{cid}.{p}", f"{cid}.{q}"),), frozenset({cid}),
                                         m["prior"]))
        return out

    def _widen(self, size: int = 2) -> None:
        """No single fault explains the reports: pairs (``size`` 2), or, when no pair does
        either, triples (``size`` 3: the best pairs, each with one more single). Each single
        fault is run through what was seen without stopping at a disagreement; a combination is
        scored by what its faults would explain together — a lamp seen lit must stay lit under
        all of them, a lamp seen dark (or flickering) needs one of them to make it so, a later
        report needs one of them to give it — and combinations are tried best first."""
        self.widened = True
        self.widenings += 1
        assert self.briefing is not None
        # after a rebase (see _rebase) the lights seen at the start no longer tell anything
        seen = {} if self.since else _lamps(self.briefing.visible)
        runs = [self._run_through(c) for c in self.pairable]
        ranked = self._ranked_pairs(seen, runs)
        if size == 3:
            ranked = self._ranked_triples(seen, runs, ranked[: self.triple_pool])
        if size == 2 and self.widenings == 1:
            self._admit_combos(self.symmetric, len(self.symmetric), settle=False)
        self._admit_combos(ranked, self.max_pairs)

    def _admit_combos(self, ranked: Sequence[tuple[Candidate, ...]], most: int, settle: bool = True) -> None:
        """Admit combinations of singles not tried yet, in order: ``most`` at most (with
        ``settle``, a quarter of that once some agree with everything seen)."""
        tried = 0
        for combo in ranked:
            faults = tuple(f for c in combo for f in c.faults)
            ident = tuple(sorted(f"{f.mode}:{f.target}:{f.other}" for f in faults))
            if ident in self.tried_pairs:
                continue
            self.tried_pairs.add(ident)
            prior = PAIR_PRIOR ** (len(combo) - 1) * math.prod(c.prior for c in combo)
            c = Candidate(faults, frozenset().union(*(c.faulty for c in combo)), prior)
            self._admit([c])
            tried += 1
            if tried >= most or (settle and self.live and tried >= most // 4):
                break

    def _run_through(self, c: Candidate) -> tuple[dict[str, str], frozenset[int]]:
        """A single fault run through what was done without stopping at a
        disagreement: the lamps it shows at the start, and the reports it gives alike.
        Each single keeps where its run got to, so a later widening only runs the new steps."""
        assert self.briefing is not None and self.shadow is not None
        known = self._through.get(id(c))
        if known is None:
            self.shadow.scenario = self._scenario(c)
            try:
                obs, _ = self.shadow.reset(seed=self.briefing.seed)
            except (SessionError, SimulationError):
                self._through[id(c)] = known = ({}, frozenset(), None, 0)
            else:
                known = (_lamps(obs["visible"]), frozenset(), self.shadow.checkpoint(), 0)
        lamps, alike, point, done = known
        if point is not None and done < len(self.steps):
            self.shadow.rollback(point)
            seen = set(alike)
            try:
                for n in range(done, len(self.steps)):
                    step, report = self.steps[n]
                    out, *_ = self.shadow.step(step)
                    if _key(out).agrees(report):
                        seen.add(n)
                point = self.shadow.checkpoint()
            except (SessionError, SimulationError):
                point = None
            alike = frozenset(seen)
        self._through[id(c)] = (lamps, alike, point, len(self.steps))
        return lamps, alike

    # -- worlds ------------------------------------------------------------
    def _scenario(self, c: Candidate, anchored: bool = True) -> Scenario:
        assert self.briefing is not None
        faults = self.anchor + c.faults if anchored else c.faults
        permanent = frozenset({"rotate_enclosure"}) if any(f.mode == "CouplingEnabled" for f in faults) \
            else frozenset()
        return Scenario(iri=f"urn:diagkg:model-based:{id(c)}", number=0, id="model", label=c.label,
                        system_iri=self.sk.iri, key=self.briefing.system, budget=10**6, observations="",
                        diagnosis=None, description=None, categories=(), faulty=c.faulty, removed=self.removed,
                        permanent=permanent, notes=(), faults=faults)

    def _admit(self, candidates: list[Candidate]) -> None:
        """Keep, among ``candidates``, those whose worlds agree with everything seen so far (a
        world with a loose connection weighed by how likely its coin gave what was seen)."""
        for c in candidates:
            started = self._start(c)
            if started is not None:
                point, likelihood = started
                self.live.append((_weighed(c, likelihood), point))

    def _start(self, c: Candidate) -> tuple[Checkpoint, float] | None:
        """A world for ``c``, run through everything done so far, and how likely it gave what was
        seen (1 without chance); None as soon as it disagrees."""
        assert self.briefing is not None
        scenario = self._scenario(c)
        if self.shadow is None:
            self.shadow = Session(scenario, self.world, budget=10**6)
        self.shadow.scenario = scenario
        chance = self._chance(c)
        likelihood = 1.0
        try:
            obs, _ = self.shadow.reset(seed=self.briefing.seed)
            if len(self._first_lamps) > 20_000:
                self._first_lamps.clear()
            self._first_lamps[id(c)] = (c, self.anchor, obs["visible"])
            if not self.since:
                if chance is not None:
                    likelihood = sum(w for coin, w in coins(chance) if self._visible(coin) == self.briefing.visible)
                if likelihood <= 0 or (chance is None and obs["visible"] != self.briefing.visible):
                    return None
            for n, (step, seen) in enumerate(self.steps):
                if n < self.since:
                    self.shadow.step(step)
                    continue
                likelihood *= self._take(step, seen, chance)
                if likelihood <= 0:
                    return None
        except (SessionError, SimulationError):
            return None
        return self.shadow.checkpoint(), likelihood

    def _chance(self, c: Candidate) -> float | None:
        """The probability of ``c``'s loose connection (None for a world without chance)."""
        if not self.chance:
            return None
        return next((f.probability for f in c.faults if f.probability is not None), None)

    def _visible(self, coin: random.Random) -> str:
        """The lights the world where the shadow stands shows with its loose connections as ``coin`` says."""
        assert self.shadow is not None
        self.shadow.rng = coin
        return describe_visible(self.shadow.simulate(), self.shadow)

    def _take(self, step: Action | Hypothesis, seen: Reading, chance: float | None) -> float:
        """Take ``step`` in the world where the shadow stands: how likely it gives ``seen`` (0
        when it disagrees). A world without chance answers one way (1 or 0); one with a loose
        connection is tried open (probability ``chance``) and closed, and moves on as one that
        agrees (the same state either way)."""
        assert self.shadow is not None
        if chance is None:
            out, *_ = self.shadow.step(step)
            return 1.0 if _key(out).agrees(seen) else 0.0
        point = self.shadow.checkpoint()
        agreed: list[tuple[float, Checkpoint]] = []
        for coin, weight in coins(chance):
            self.shadow.rng = coin
            self.shadow.rollback(point)
            out, *_ = self.shadow.step(step)
            if _key(out).agrees(seen):
                agreed.append((weight, self.shadow.checkpoint()))
        if len(agreed) == 1:
            self.shadow.rollback(agreed[0][1])
        return sum(w for w, _ in agreed)

    def _outcomes(self, c: Candidate, point: Checkpoint,
                  step: Action | Hypothesis) -> list[tuple[float, Reading, float]]:
        """The reports ``step`` may give in ``c``'s world, each with its probability and minutes.
        Worlds alike where ``step`` looks share one prediction (see :meth:`_alike`)."""
        out = []
        for n, (coin, weight) in enumerate(self._ways(c)):
            key = self._alike(c, point, step, n)
            known = self._shared.get(key) if key is not None else None
            if known is None:
                known = self._predicted(c, point, step, coin)[:2]
                if key is not None:
                    if len(self._shared) > 200_000:
                        self._shared.clear()
                    self._shared[key] = known
            out.append((weight, *known))
        return out

    def _predicted(self, c: Candidate, point: Checkpoint, step: Action | Hypothesis,
                   coin: Coin | None = None) -> tuple[Reading, float, bool]:
        """The report ``step`` would give in ``c``'s world (as a key), its cost, and whether the
        system would work again; with ``coin``, its loose connections fall as the coin says.
        A world answers the same action the same way in the same state (a loose connection's
        world, for the same coin) with the same parts repaired among those the answer reads (see
        :meth:`_remembered`), so that is remembered across decisions and across the candidates
        that are the same world (the same faults, anchor included)."""
        remember = coin is not None or not any(f.probability is not None for f in c.faults)
        if remember:
            known = self._remembered(c, point, step, coin)
            if known is not None:
                return known
        assert self.shadow is not None
        if coin is not None:
            self.shadow.rng = coin
        out = self._predict(point, step)
        answer = (_key(out), float(out["cost"]), self.shadow.end in SOLVED) if out is not None else (UNKNOWN, 0.0, False)
        if remember:
            self._remember(c, point, step, coin, self.shadow.reset_reads, answer)
        return answer

    def _predict(self, point: Checkpoint, step: Action | Hypothesis) -> dict[str, Any] | None:
        assert self.shadow is not None
        self.shadow.rollback(point)
        try:
            out, *_ = self.shadow.step(step)
        except (SessionError, SimulationError):
            return None
        return out

    def _fix(self, parts: frozenset[str], sample: list[tuple[Candidate, Checkpoint]],
             why: str) -> Action | Hypothesis:
        """Name ``parts`` (the hypothesis's repair replaces them), unless a cheaper repair of the
        catalogue is expected to cost less: it fixes the system in some of the worlds that name
        these parts (a battery turned round, crossed cables swapped), and naming them after it
        fails costs what naming would have cost."""
        worlds = [(c, point) for c, point in sample if c.faulty == parts] or sample[:1]
        total = sum(c.prior for c, _ in worlds)
        naming = self._predicted(worlds[0][0], worlds[0][1], Hypothesis(parts))[1]
        best: tuple[float, Action | Hypothesis] = (naming, Hypothesis(parts, why))
        assert self.briefing is not None
        repaired = self._repaired()
        for spec in self.briefing.catalogue.values():
            if not spec.repair or spec.cost >= naming:
                continue
            targets = [(p,) for p in sorted(parts)] if spec.target_count == 1 else \
                      ([tuple(sorted(parts))] if spec.target_count == len(parts) else [])
            for target in targets:
                if any(p not in self.sk.components or p in repaired for p in target) or \
                        (spec.types and not {self.sk.components[p].type for p in target} <= spec.types):
                    continue
                action = Action(spec.id, target)
                fixed = cost = 0.0
                for c, point in worlds:
                    _, minutes, works = self._predicted(c, point, action)
                    cost += c.prior * minutes
                    fixed += c.prior * works
                if fixed <= 0:
                    continue
                expected = cost / total + (1 - fixed / total) * naming
                if expected < best[0]:
                    best = (expected, action)
        return best[1]

    # -- the loop ------------------------------------------------------------
    def record(self, outcome: dict[str, Any]) -> None:
        super().record(outcome)
        step, self.pending = self.pending, None
        if step is None:
            return
        seen = _key(outcome)
        if isinstance(step, Action):
            # how much the candidates believed the repaired parts faulty (see _rebase)
            total = sum(c.prior for c, _ in self.live) or 1.0
            self.belief[len(self.steps)] = 1.0 if self._probing == len(self.steps) else \
                sum(c.prior for c, _ in self.live if set(step.targets) <= c.faulty) / total
        self.steps.append((step, seen))
        kept = []
        assert self.shadow is not None
        for c, point in self.live:
            if self._refuted(c, point, step, seen):
                continue
            self.shadow.rollback(point)
            try:
                likelihood = self._take(step, seen, self._chance(c))
            except (SessionError, SimulationError):
                continue
            if likelihood > 0:
                kept.append((_weighed(c, likelihood), self.shadow.checkpoint()))
        self.live = kept
        if not self.live and not self._rebase(strong=self.probe_last) and not self._more_singles():
            self._widen()

    def _rebase(self, strong: bool = False) -> bool:
        """A repair is a probe (IRS). When nothing explains every report, the latest repair not
        yet rebased on is taken to have fixed something, and what is left to explain is what was
        seen from it on: the candidates start again from the single faults, each judged only on
        those reports (the steps before are replayed, so the world's state is the real one).

        * After a hypothesis judged partly right, the parts it found faulty were replaced; the
          reports from the verdict on are judged.
        * After a repair of the catalogue (a battery turned round, cables swapped), the fault
          that repair fixes on its own is added to every candidate's world (an *anchor*): turning
          a healthy battery round would break it, so the replay needs the fault the repair
          fixed. The repair's own report is judged too (it says whether the system works now).

        False when there is no repair left to rebase on."""
        repairs = [n for n, (step, seen) in enumerate(self.steps) if n not in self.rebased and self._repair(n, step, seen)
                   and (not strong or isinstance(step, Hypothesis))]
        if not repairs:
            return False
        last = repairs[-1]
        self.rebased.add(last)
        step = self.steps[last][0]
        if isinstance(step, Hypothesis):
            self.since = last + 1
        else:
            assert isinstance(step, Action)
            self.since = last
            self.anchor += self._fixed_by(step)
        self.tried_pairs.clear()
        self.widenings = 0
        self.tripled = False
        self._through.clear()
        anchored = {f.target for f in self.anchor}
        pool = self.singles if self.terminals else self.pairable
        self._admit([c for c in pool if not any(f.target in anchored for f in c.faults)])
        return True

    def _repair(self, n: int, step: Action | Hypothesis, seen: Reading) -> bool:
        """Whether step ``n`` (with its report ``seen``) repaired something that did not make the
        system work: a hypothesis judged partly right, or a repair of parts that most candidates
        named (:attr:`anchor_belief`; a repair tried as a probe on a part few candidates named
        says little)."""
        if isinstance(step, Hypothesis):
            return seen.verdict == "partial"
        assert self.briefing is not None
        spec = self.briefing.catalogue.get(step.action)
        return spec is not None and spec.repair and seen.success and self.belief.get(n, 0.0) >= self.anchor_belief

    def _fixed_by(self, step: Action) -> tuple[Fault, ...]:
        """The single fault on ``step``'s parts that ``step`` repairs on its own (the likeliest),
        found by trying it in each such fault's world; none when no fault of the catalogue is."""
        assert self.briefing is not None
        targets = frozenset(step.targets)
        for c in sorted((c for c in self.singles if c.faulty <= targets and (len(targets) == 1 or c.faulty == targets)),
                        key=lambda c: -c.prior):
            assert self.shadow is not None
            self.shadow.scenario = self._scenario(c, anchored=False)
            try:
                self.shadow.reset(seed=self.briefing.seed)
                self.shadow.step(step)
            except (SessionError, SimulationError):
                continue
            if self.shadow.end in SOLVED:
                return c.faults
        return ()

    def _more_singles(self) -> bool:
        """A component's own terminal coming loose is a candidate only when no cable end or
        other single fault explains the reports (the more common place for an end to come off
        is tried first, as pairs are only when no single fault explains)."""
        if self.terminals:
            return False
        self.terminals = True
        self._admit([c for c in self.singles if self._own_terminal(c)])
        return bool(self.live)

    def suggest(self) -> Action | Hypothesis | None:
        t0 = time.perf_counter()
        try:
            choice = self._choose()
        finally:
            self.decision_times.append(time.perf_counter() - t0)
        self.pending = choice
        return choice

    def candidates(self) -> list[tuple[frozenset[str], float]]:
        """The remaining diagnoses (sets of parts) with their probability, most likely first."""
        weight: dict[frozenset[str], float] = defaultdict(float)
        for c, _ in self.live:
            weight[c.faulty] += c.prior
        total = sum(weight.values()) or 1.0
        return sorted(((s, w / total) for s, w in weight.items()), key=lambda x: (-x[1], sorted(x[0])))

    def ranked_candidates(self) -> list[frozenset[str]]:
        """The hook the hypothesis ledger records (candidate coverage at k): the diagnoses, most likely first."""
        return [parts for parts, _ in self.candidates()]

    def _choose(self) -> Action | Hypothesis | None:
        assert self.briefing is not None
        ranked = self.candidates()
        if not ranked and (self._rebase(strong=self.probe_last) or self._more_singles()):
            ranked = self.candidates()
        while not ranked and self.widenings < self.max_widenings:
            self._widen()                   # the next pairs, best first (those tried are not tried again)
            ranked = self.candidates()
        if not ranked and self.probe_last and self._rebase():
            ranked = self.candidates()      # a repair tried as a probe did fix something: start again from it
            while not ranked and self.widenings < self.max_widenings:
                self._widen()
                ranked = self.candidates()
        if not ranked and not self.tripled:
            self.tripled = True
            self._widen(3)
            ranked = self.candidates()
        if not ranked:
            return self._probe_repair() if self.last_probe else None
        best_set, p = ranked[0]
        rounds_left = self.briefing.budget - len(self.steps)
        if len(ranked) == 1 or p >= self.confident or rounds_left <= 1:
            why = f"the simulated fault explains every report ({p:.0%} of the candidates)"
            check = self._confirming(best_set, self._sample()) if rounds_left > 2 and self.confirm > 0 else None
            if check is not None:
                return check
            return self._fix(best_set, self._sample(), why) if rounds_left > 1 else Hypothesis(best_set, why)
        # a part almost every candidate names is repaired first (its repair is then evidence, too)
        marginal: dict[str, float] = defaultdict(float)
        for parts, weight in ranked:
            for part in parts:
                marginal[part] += weight
        repaired = self._repaired()
        for part, weight in sorted(marginal.items(), key=lambda x: -x[1]):
            if weight < self.certain:
                break
            if part not in self.sk.components or part in repaired:
                continue
            if self.sk.components[part].type != "Cable":
                if self._needed(part):
                    return Action("replace_component", (part,))
                continue
            fits = self._repairs_fitting("Cable") if self.certain_cables else []
            if fits:                       # a cable's cheapest repair of the catalogue (reconnecting it)
                return Action(fits[0].id, (part,))
        sample = self._sample()
        options = self._screened(self._options(sample), sample)
        # the best rate on the whole sample (or, with ``quick``, two passes: every option on a few
        # candidates, the most promising on all of the sample)
        if self.quick <= 0:
            scored = self._scored(options, sample)
        else:
            first = self._scored(options, sample[: self.quick], keep=self.shortlist)
            shortlist = [o.step for o in sorted(first, key=lambda o: -o.rate)[: self.shortlist]]
            scored = self._scored(shortlist, sample) if len(sample) > self.quick else first
        if not scored:
            return Hypothesis(best_set, "no test tells the remaining candidates apart")
        best = max(scored, key=lambda o: o.rate)
        if isinstance(best.step, Hypothesis):
            return best.step
        # a probe only when it is cheaper in expectation than naming the diagnoses one by one now
        weights: dict[frozenset[str], float] = defaultdict(float)
        for c, _ in sample:
            weights[c.faulty] += c.prior
        now, plan = self._naming_cost(weights, sample, rounds_left)
        after = sum(sum(group.values()) * self._naming_cost(group, sample, rounds_left - 1)[0]
                    for group in best.groups.values())
        after /= sum(weights.values())
        if plan is not None and now <= best.minutes + self.round_minutes + after:
            return self._fix(plan, sample, f"naming it is cheaper in expectation ({now:.0f} min) than testing "
                                           f"first ({best.minutes + self.round_minutes + after:.0f} min)")
        return best.step

    def _naming_cost(self, weights: dict[frozenset[str], float], sample: list[tuple[Candidate, Checkpoint]],
                     rounds: int) -> tuple[float, frozenset[str] | None]:
        """The expected minutes of naming the diagnoses one after another, the best value first
        (probability per minute: the optimal order of a sequential search), and the first to name.
        Only ``rounds`` can be named: what is left after them counts as a failure
        (:attr:`fail_minutes`). The candidates may all be wrong (:attr:`unexplained`: more
        faults than they have): each naming is then paid for and none is right."""
        total = sum(weights.values()) / (1.0 - self.unexplained)
        if total <= 0:
            return 0.0, None
        c0, point0 = sample[0]
        costs = {s: self._predicted(c0, point0, Hypothesis(s))[1] + self.round_minutes for s in weights}
        order = sorted(weights, key=lambda s: (-weights[s] / costs[s], sorted(s)))
        expected, left = 0.0, 1.0
        for n, s in enumerate(order):
            if n >= rounds:
                expected += max(left, 0.0) * self.fail_minutes
                break
            expected += left * costs[s]
            left -= weights[s] / total
        return expected, order[0]

    def _repaired(self) -> set[str]:
        """Parts already replaced or reconnected, by an action or a hypothesis's repair."""
        out: set[str] = set()
        for step, _ in self.steps:
            if isinstance(step, Hypothesis):
                out |= set(step.components)
            elif self.briefing is not None and step.action in self.briefing.catalogue \
                    and self.briefing.catalogue[step.action].repair:
                out |= set(step.targets)
        return out

    def _sample(self) -> list[tuple[Candidate, Checkpoint]]:
        if len(self.live) <= self.sample:
            return list(self.live)
        by_set: dict[frozenset[str], list[tuple[Candidate, Checkpoint]]] = defaultdict(list)
        for entry in self.live:
            by_set[entry[0].faulty].append(entry)
        picked = [group[0] for group in by_set.values()]          # every diagnosis once …
        if len(picked) > self.sample:
            picked = self.rng.sample(picked, self.sample)
        return picked


__all__ = ["Candidate", "ModelBasedAssistant"]
