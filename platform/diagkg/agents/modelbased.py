"""The model-based assistant: the simulator is its model (GDE/Sherlock lineage).

Everything it knows comes from the graph and the simulator, never from the
scenario:

* **Candidates** are fault modes of the catalogue (``fault-modes.rq``: what
  each mode applies to, its template and default value) applied to the
  system's parts: every component of a type a mode applies to, every cable end,
  pairs of same-side cable ends (crossed), the two ends of a diode or LED
  (reversed), every coupling. Pairs of faults are added only when no single
  fault explains what has been observed, or before a costly repair of a
  single that holds little of the weight the singles had at the start
  (``widen_share``, ``widen_minutes``).
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
  catalogue (a pair weighs the product, times
  :data:`~diagkg.agents.candidates.PAIR_PRIOR`); nothing is written per system,
  so a system written in Turtle by a user works unchanged.

The assistant is composed of parts, each with a public interface, built at
:meth:`ModelBasedAssistant.setup`: its configuration
(:class:`~diagkg.agents.modelbased_config.ModelBasedConfig`, :attr:`settings`),
the worlds (:class:`~diagkg.agents.worlds.Worlds`: the steps done, starting
and predicting a candidate's world), the candidate space
(:class:`~diagkg.agents.candidates.CandidateSpace`: singles, pairs, what
stands), the classes of worlds alike (:class:`~diagkg.agents.likeness.Likeness`),
the scorer (:class:`~diagkg.agents.scoring.Scorer`) and the prober
(:class:`~diagkg.agents.probes.Prober`). This module decides with them.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..env.actions import Action, Hypothesis, fits_target
from ..env.outcomes import Outcome
from ..env.service import Checkpoint
from ..errors import SessionError, SimulationError
from .candidates import PAIR_PRIOR, CandidateSpace, weighed
from .combinations import Candidate
from .likeness import Likeness
from .modelbased_config import ModelBasedConfig
from .probes import Prober
from .readings import Reading
from .readings import reading as key_of
from .registry import BaseAssistant, Briefing
from .scoring import Scored, Scorer
from .worlds import Worlds

Sample = list[tuple[Candidate, Checkpoint]]


def by_value(weights: dict[frozenset[str], float], costs: dict[frozenset[str], float]) -> list[frozenset[str]]:
    """The diagnoses of ``weights``, the best probability per minute first (ties by their parts): the order of
    a sequential search."""
    return sorted(weights, key=lambda s: (-weights[s] / costs[s], sorted(s)))


class ModelBasedAssistant(BaseAssistant):
    name = "model-based"
    config_keys = ModelBasedConfig.keys()

    # the parts, built by setup
    worlds: Worlds
    space: CandidateSpace
    likeness: Likeness
    scorer: Scorer
    prober: Prober

    def __init__(self, **config: Any):
        super().__init__(**config)
        self.settings = ModelBasedConfig.from_mapping(config)
        self.decision_times: list[float] = []

    # ------------------------------------------------------------------
    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        settings = self.settings
        self.worlds = Worlds(briefing, chance=settings.chance, stated=settings.stated)
        self.space = CandidateSpace(self.worlds, settings, random.Random(briefing.seed))
        self.likeness = Likeness(self.worlds, screen=settings.screen, named_options=settings.named_options)
        self.scorer = Scorer(self.likeness, round_minutes=settings.round_minutes)
        self.prober = Prober(self.worlds, self.space, settings)
        self.pending: Action | Hypothesis | None = None
        self.rebased: set[int] = set()      # the repairs rebased on
        self.belief: dict[int, float] = {}  # step -> share of the candidates that named what it repaired
        self.overcurrent: set[int] = set()  # repairs of a fault an over-current may have left (see rebase)
        self.undo: Action | None = None     # the next step: a repair on a healthy part that undoes itself
        self.undoing_step: Action | None = None   # the last such step taken
        self.taken_back: dict[tuple[int, str], tuple[Checkpoint, bool]] = {}   # see undo_minutes
        self.space.begin()

    def close(self, end: str) -> None:
        """The session is over: the worlds' shadow session gives its working memory back."""
        self.worlds.close()

    # -- the loop ------------------------------------------------------------
    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        step, self.pending = self.pending, None
        if step is None:
            return
        seen = key_of(outcome)
        worlds, space = self.worlds, self.space
        if isinstance(step, Action):
            # how much the candidates believed the repaired parts faulty (see rebase)
            total = sum(c.prior for c, _ in space.live) or 1.0
            self.belief[len(worlds.steps)] = 1.0 if self.prober.probing == len(worlds.steps) else \
                sum(c.prior for c, _ in space.live if set(step.targets) <= c.faulty) / total
        if worlds.changes(step):
            parts = {t.split(".", 1)[0] for t in (step.targets if isinstance(step, Action) else step.components)}
            if space.left_by_overcurrent(parts):
                self.overcurrent.add(len(worlds.steps))
        index, targets = len(worlds.steps), {t.split(".", 1)[0] for t in getattr(step, "targets", ())}
        worlds.steps.append((step, seen))
        kept, before, repaired_some = [], None, False
        changes = worlds.changes(step)
        for c, point in space.live:
            if self.likeness.refuted(c, point, step, seen):
                continue
            followed = worlds.follow(c, point, step, seen)
            if followed is not None:
                likelihood, there = followed
                repaired_some |= bool(targets & c.faulty)
                # what is faulty in its world now (the shadow stands where the step left it), unless the
                # step ended the session there: then the real session is over too (it agreed)
                now = space.as_it_stands(c) if changes and there.end is None and there.state != point.state else c
                if now is not None:
                    kept.append((weighed(now, likelihood), there))
                    before = before or (point, there)
        space.live = kept
        space.loose_terminals()
        space.singles_gone()
        # a repair no world left holds a fault of (a report says nothing of the part itself: Outcome.told), or the
        # undoing of such a repair: it fixed nothing
        spec = self.worlds.briefing.catalogue.get(step.action) if isinstance(step, Action) else None
        futile = spec is not None and spec.repair and bool(kept) and not repaired_some
        if futile or step is self.undoing_step:
            self.belief[index] = 0.0
        if futile and before is not None and isinstance(step, Action):
            self.undo = self.undoing(step, *before)
        if not space.live and not self.rebase(strong=self.settings.probe_last) and not space.more_singles():
            space.widen()

    def undoing(self, step: Action, point: Checkpoint, there: Checkpoint) -> Action | None:
        """``step`` again when it undoes itself: a repair done on a healthy part changed it (a
        battery turned round that was the right way round), and taking it once more in a world
        that agrees (from ``there``, where it left the world standing at ``point``) puts the circuit
        back as it was. It must be undone before the system can work, and costs no more now than
        later; None when the step changed nothing or is not its own undoing."""
        return step if self.takes_back(step, point, there) else None

    def takes_back(self, step: Action, point: Checkpoint, there: Checkpoint | None = None) -> bool:
        """Whether ``step`` taken at ``point`` (leaving the world at ``there``, taken here when not
        given) changed the circuit, and taking it once more puts the circuit back as it was. The
        circuits are compared, not the state graphs: a parameter set back is written afresh."""
        shadow = self.worlds.shadow
        if shadow is None:
            return False
        try:
            shadow.rollback(point)
            before = shadow.state()
            if there is None:
                shadow.step(step)
            else:
                shadow.rollback(there)
            if shadow.end is not None or shadow.state() == before:
                return False
            shadow.step(step)
            return shadow.state() == before
        except (SessionError, SimulationError):
            return False

    def rebase(self, strong: bool = False) -> bool:
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

        With ``strong``, only hypotheses are rebased on. False when there is no repair left to
        rebase on."""
        worlds = self.worlds
        repairs = [n for n, (step, seen) in enumerate(worlds.steps) if n not in self.rebased and self.repair(n, step, seen)
                   and (not strong or isinstance(step, Hypothesis))]
        if not repairs:
            return False
        last = repairs[-1]
        self.rebased.add(last)
        step = worlds.steps[last][0]
        if isinstance(step, Hypothesis):
            worlds.since = last + 1
        else:
            assert isinstance(step, Action)
            worlds.since = last
            worlds.anchor += worlds.fixed_by(step, self.space.singles)
        self.space.restart()
        if last in self.overcurrent:
            # it repaired what an over-current often leaves (a fuse blown): the short that raised the
            # current may still be there, and may have undone the repair since
            self.space.admit_shorts()
        return True

    def repair(self, n: int, step: Action | Hypothesis, seen: Reading) -> bool:
        """Whether step ``n`` (with its report ``seen``) repaired something that did not make the
        system work: a hypothesis judged partly right, or a repair of parts that most candidates
        named (``anchor_belief``; a repair tried as a probe on a part few candidates named
        says little)."""
        if isinstance(step, Hypothesis):
            return seen.verdict == "partial"
        spec = self.worlds.briefing.catalogue.get(step.action)
        return spec is not None and spec.repair and seen.success and \
            self.belief.get(n, 0.0) >= self.settings.anchor_belief

    def suggest(self) -> Action | Hypothesis | None:
        t0 = time.perf_counter()
        try:
            choice = self.choose()
        finally:
            self.decision_times.append(time.perf_counter() - t0)
        self.pending = choice
        return choice

    def candidates(self) -> list[tuple[frozenset[str], float]]:
        """The remaining diagnoses (sets of parts) with their probability, most likely first."""
        return self.space.distribution()

    def ranked_candidates(self) -> list[frozenset[str]]:
        """The hook the hypothesis ledger records (candidate coverage at k): the diagnoses, most likely first."""
        return [parts for parts, _ in self.candidates()]

    def choose(self) -> Action | Hypothesis | None:
        """The next step (what :meth:`suggest` returns, without timing it or expecting its report): chosen again
        when it names parts while a part shorted stands (or stood at the start) and the shorts between nodes are
        not candidates yet (``shorts_before_naming``, :meth:`CandidateSpace.shorts_before_naming`)."""
        step = self.choose_step()
        if isinstance(step, Hypothesis) and self.settings.shorts_before_naming and self.briefing is not None and \
                self.briefing.budget - len(self.worlds.steps) > 2 and self.space.shorts_before_naming():
            step = self.choose_step()
        if isinstance(step, Hypothesis) and self.briefing is not None and self.briefing.budget - len(self.worlds.steps) <= 1:
            step = self.whole(step)
        return step

    def whole(self, step: Hypothesis) -> Hypothesis:
        """On the last round, ``step`` with what its worlds have broken besides its parts (the fuse a short blew),
        where the naming alone is judged partial there and with them correct: a partial verdict then ends the
        session unsolved, where earlier it costs a round more (and a wrong pair costs both parts)."""
        worlds = [(c, point) for c, point in self.space.sample() if c.faulty == step.components]
        if not worlds:
            return step
        c, point = worlds[0]
        if self.worlds.predicted(c, point, step)[2] or self.worlds.shadow is None:
            return step
        self.worlds.shadow.rollback(point)
        now = self.space.as_it_stands(c)          # what is faulty in its world, the parts its fault broke included
        more = (now.faulty if now is not None else frozenset()) - step.components
        whole = Hypothesis(step.components | more, step.explanation + "; with what its fault broke besides")
        return whole if more and self.worlds.predicted(c, point, whole)[2] else step

    def choose_step(self) -> Action | Hypothesis | None:
        """The next step, with the candidates as they stand."""
        assert self.briefing is not None
        settings, space, worlds = self.settings, self.space, self.worlds
        sk = worlds.sk
        undo, self.undo = self.undo, None
        if undo is not None and self.briefing.budget - len(worlds.steps) > 1:
            self.undoing_step = undo
            return undo                     # a repair that broke a healthy part, taken back
        last = worlds.steps[-1] if worlds.steps else None
        if last is not None and isinstance(last[0], Hypothesis) and last[1].verdict == "partial" and last[1].works \
                and (closing := self.prober.closing_step()) is not None:
            # a naming judged partial made the system work: the next step of any kind may end the session as a
            # repair (a fault it did not name is left, or a repair before fixed one), so the cheapest look, unless
            # naming what is likely left costs no more (only a correct naming ends a session: a diagnosis)
            ranked = self.candidates()
            if ranked and ranked[0][1] >= settings.confident:
                minutes, step = self.repair_of(ranked[0][0], space.sample())
                if isinstance(step, Hypothesis) and minutes <= worlds.briefing.catalogue[closing.action].cost:
                    return step
            return closing
        ranked = self.candidates()
        if not ranked and (self.rebase(strong=settings.probe_last) or space.more_singles()):
            ranked = self.candidates()
        while not ranked and space.widenings < settings.max_widenings:
            space.widen()                   # the next pairs, best first (those tried are not tried again)
            ranked = self.candidates()
        if not ranked and settings.probe_last and self.rebase():
            ranked = self.candidates()      # a repair tried as a probe did fix something: start again from it
            while not ranked and space.widenings < settings.max_widenings:
                space.widen()
                ranked = self.candidates()
        if not ranked and not space.tripled:
            space.tripled = True
            space.widen(3)
            ranked = self.candidates()
        if not ranked:
            return self.prober.probe_repair() if settings.last_probe else None
        best_set, p = ranked[0]
        rounds_left = self.briefing.budget - len(worlds.steps)
        if p >= settings.confident and rounds_left > 2 and space.widens_early() and \
                self.repair_of(best_set, space.sample())[0] >= settings.widen_minutes:
            # a costly repair of a confident single that holds little of the singles' first weight: weighed
            # against pairs
            space.widen_early()
            best_set, p = (ranked := self.candidates())[0]
        if len(ranked) == 1 or p >= settings.confident or rounds_left <= 1:
            why = f"the simulated fault explains every report ({p:.0%} of the candidates)"
            check = self.prober.confirming(best_set, space.sample()) if rounds_left > 2 and settings.confirm > 0 \
                else None
            if check is not None:
                return check
            return self.fix(best_set, space.sample(), why) if rounds_left > 1 else Hypothesis(best_set, why)
        # a part almost every candidate names is repaired first (its repair is then evidence, too)
        marginal: dict[str, float] = defaultdict(float)
        for parts, weight in ranked:
            for part in parts:
                marginal[part] += weight
        repaired = worlds.repaired()
        for part, weight in sorted(marginal.items(), key=lambda x: (-x[1], x[0])):     # (ties by name: not by hash order)
            if weight < settings.certain:
                break
            if part not in sk.components or part in repaired:
                continue
            if sk.components[part].type != "Cable":
                if self.prober.needed(part):
                    return Action("replace_component", (part,))
                continue
            fits = self.prober.repairs_fitting("Cable") if settings.certain_cables else []
            if fits:                       # a cable's cheapest repair of the catalogue (reconnecting it)
                return Action(fits[0].id, (part,))
        sample = space.sample()
        options = self.likeness.screened(self.likeness.options(sample), sample)
        # the best rate on the whole sample (or, with ``quick``, two passes: every option on a few
        # candidates, the most promising on all of the sample)
        if settings.quick <= 0:
            scored = self.scorer.scored(options, sample)
        else:
            first = self.scorer.scored(options, sample[: settings.quick], keep=settings.shortlist)
            shortlist = [o.step for o in sorted(first, key=lambda o: -o.rate)[: settings.shortlist]]
            scored = self.scorer.scored(shortlist, sample) if len(sample) > settings.quick else first
        if not scored:
            return Hypothesis(best_set, "no test tells the remaining candidates apart")
        best = self.paid_back(max(scored, key=lambda o: o.rate), options, sample)
        if isinstance(best.step, Hypothesis):
            return best.step
        # a probe only when it is cheaper in expectation than naming the diagnoses one by one now
        weights: dict[frozenset[str], float] = defaultdict(float)
        for c, _ in sample:
            weights[c.faulty] += c.prior
        # with naming_ends, the decision's likeliest namings per minute are offered after each report of a test
        # too, so that naming now and testing first are weighed with the same namings at hand (after a report, a
        # short's other end may be the diagnosis of no world that gives it, yet end them all)
        costs = self.naming_costs(weights, sample)
        reach = by_value(weights, costs)[: settings.naming_reach] if settings.naming_ends else None
        now, plan = self.naming_cost(weights, sample, rounds_left, reach, costs)

        def testing_first(option: Scored) -> float:
            # each report's diagnoses repaired in the worlds that give it (a reading that tells a battery
            # is the wrong way round leaves only turning it)
            after = sum(sum(group.values()) * self.naming_cost(
                group, (option.members.get(key) if settings.undo_cost else None) or sample, rounds_left - 1, reach)[0]
                for key, group in option.groups.items())
            return option.minutes + settings.round_minutes + after / sum(weights.values())

        tested = testing_first(best)
        if plan is not None and now <= tested:
            return self.fix(plan, sample, f"naming it is cheaper in expectation ({now:.0f} min) than testing "
                                          f"first ({tested:.0f} min)")
        return best.step

    def paid_back(self, best: Scored, options: list[Action | Hypothesis], sample: Sample) -> Scored:
        """``best``, or the best option once a probe that changes parts is priced with taking it back
        (``undo_cost``, :meth:`undo_minutes`): in a world where it does not make the system work and is its own
        undoing (a healthy battery turned round), it must be taken again before the system can work. Scored by
        rate, such a probe counted its minutes once; the others are scored again without it while it falls
        below them so priced (the best priced probe kept against the rest). Pricing only lowers a rate, so an
        option never priced because it never came out best would not come out best priced: this finds what
        pricing every option in the scorer would, pricing only those that reach the top."""
        catalogue, round_minutes = self.worlds.briefing.catalogue, self.settings.round_minutes
        total = sum(c.prior for c, _ in sample)
        left, kept = list(options), None
        while self.settings.undo_cost and isinstance(best.step, Action) and \
                getattr(catalogue.get(best.step.action), "template", None) is not None:
            step = best.step
            extra = sum(c.prior * self.undo_minutes(point, step) for c, point in sample
                        if not self.worlds.predicted(c, point, step)[2]) / total
            if extra <= 0:
                break
            priced = dataclasses.replace(best, minutes=best.minutes + extra,
                                         rate=best.rate * (best.minutes + round_minutes) / (best.minutes + extra + round_minutes))
            kept = priced if kept is None or priced.rate > kept.rate else kept
            left = [o for o in left if o != step]
            rival = max(self.scorer.scored(left, sample) if left else [], key=lambda o: o.rate, default=None)
            if rival is None or kept.rate >= rival.rate:
                return kept
            best = rival
        return kept if kept is not None and kept.rate > best.rate else best

    def fix(self, parts: frozenset[str], sample: Sample, why: str) -> Action | Hypothesis:
        """Name ``parts`` (the hypothesis's repair replaces them), unless a cheaper repair of the
        catalogue is expected to cost less (see :meth:`repair_of`)."""
        return self.repair_of(parts, sample, why)[1]

    def repair_of(self, parts: frozenset[str], sample: Sample, why: str = "") -> tuple[float, Action | Hypothesis]:
        """The expected minutes of repairing ``parts`` in the worlds of ``sample`` that name them, and
        the step to take: naming them, or a cheaper repair of the catalogue that fixes the system in
        some of those worlds (a battery turned round, crossed cables swapped) — naming them after it
        fails costs what naming would have cost, and (with ``undo_cost``) so does taking it back where
        it changed a healthy part and is its own undoing (a battery the right way round turned)."""
        worlds = [(c, point) for c, point in sample if c.faulty == parts] or sample[:1]
        total = sum(c.prior for c, _ in worlds)
        predicted = self.worlds.predicted
        naming = predicted(worlds[0][0], worlds[0][1], Hypothesis(parts))[1]
        best: tuple[float, Action | Hypothesis] = (naming, Hypothesis(parts, why))
        repaired = self.worlds.repaired()
        for spec in self.worlds.briefing.catalogue.values():
            # a repair of the catalogue, or (``effect_repairs``) any action with an effect and no value that
            # makes the system work in some of these worlds (a box turned so its light misses the sensor)
            fits = spec.repair or (self.settings.effect_repairs and spec.template is not None and spec.parameter is None)
            if not fits or spec.cost >= naming:
                continue
            # the repair's targets among the parts (two crossed cables of three parts named, the third an
            # indicator the system works without)
            for target in itertools.combinations(sorted(parts), spec.target_count):
                if any(p in repaired or not fits_target(spec, p, self.worlds.sk.components, self.worlds.briefing.parts)
                       for p in target):
                    continue
                action = Action(spec.id, target)
                fixed = cost = 0.0
                for c, point in worlds:
                    _, minutes, works = predicted(c, point, action)
                    cost += c.prior * minutes
                    fixed += c.prior * works
                    if not works and self.settings.undo_cost:
                        cost += c.prior * self.undo_minutes(point, action)
                if fixed <= 0:
                    continue
                expected = cost / total + (1 - fixed / total) * naming
                if expected < best[0]:
                    best = (expected, action)
        return best

    def undo_minutes(self, point: Checkpoint, step: Action) -> float:
        """The minutes of taking ``step`` back after it failed at ``point``: its own minutes again when
        it changed the world and taking it once more puts it back (a healthy battery turned round must
        be turned back, see :meth:`takes_back`), else none."""
        spec = self.worlds.briefing.catalogue.get(step.action)
        if spec is None:
            return 0.0
        # asked again for the same world and step by every naming cost of a decision: remembered
        # (a checkpoint never changes; the entry keeps it, so its id is not reused)
        key = (id(point), str(step))
        known = self.taken_back.get(key)
        if known is None or known[0] is not point:
            if len(self.taken_back) > 50_000:
                self.taken_back.clear()
            known = self.taken_back[key] = (point, self.takes_back(step, point))
        return spec.cost if known[1] else 0.0

    def naming_cost(self, weights: dict[frozenset[str], float], sample: Sample, rounds: int,
                    reach: list[frozenset[str]] | None = None,
                    costs: dict[frozenset[str], float] | None = None) -> tuple[float, frozenset[str] | None]:
        """The expected minutes of naming the diagnoses one after another, the best value first
        (probability per minute: the optimal order of a sequential search), and the first to name.
        Only ``rounds`` can be named: what is left after them counts as a failure
        (``fail_minutes``). The candidates may all be wrong (``unexplained``: more
        faults than they have): each naming is then paid for and none is right. With ``naming_ends``, see
        :meth:`naming_plan` (``reach``: the namings tried in every world, by default the ``naming_reach``
        likeliest per minute of ``weights``). ``costs``: the diagnoses' minutes (:meth:`naming_costs`), when
        already worked out on ``sample``."""
        settings = self.settings
        total = sum(weights.values()) / (1.0 - settings.unexplained)
        if total <= 0:
            return 0.0, None
        costs = dict(costs) if costs is not None else self.naming_costs(weights, sample)
        if settings.naming_ends:
            reach = by_value(weights, costs)[: settings.naming_reach] if reach is None else reach
            costs.update(self.naming_costs([s for s in reach if s not in costs], sample))
            return self.naming_plan(weights, sample, rounds, costs, total, reach)
        order = by_value(weights, costs)
        expected, left = 0.0, 1.0
        for n, s in enumerate(order):
            if n >= rounds:
                expected += max(left, 0.0) * settings.fail_minutes
                break
            expected += left * costs[s]
            left -= weights[s] / total
        return expected, order[0]

    def naming_costs(self, namings: Iterable[frozenset[str]], sample: Sample) -> dict[frozenset[str], float]:
        """The minutes of each naming and its round: what repairing it is expected to cost in its worlds of
        ``sample`` (:meth:`repair_of`, with ``undo_cost``), or naming it in the first world."""
        settings = self.settings
        c0, point0 = sample[0]
        if settings.undo_cost:        # each diagnosis at what repairing it is expected to cost (see repair_of)
            return {s: self.repair_of(s, sample)[0] + settings.round_minutes for s in namings}
        return {s: self.worlds.predicted(c0, point0, Hypothesis(s))[1] + settings.round_minutes for s in namings}

    def naming_plan(self, weights: dict[frozenset[str], float], sample: Sample, rounds: int,
                    costs: dict[frozenset[str], float], total: float,
                    reach: list[frozenset[str]]) -> tuple[float, frozenset[str] | None]:
        """:meth:`naming_cost` where a naming ends the session in more worlds than its diagnosis's (``naming_ends``):
        a short between two nodes is a candidate under the part of one end, but naming the part at the other end
        repairs it too and is judged correct; naming a part that a fault elsewhere damaged (a fuse blown by a
        short that another blown fuse now keeps out) makes the system work, and the session ends at the next
        look (:meth:`Prober.closing_step`). Each world stands for its diagnosis's weight in proportion to its
        prior; the namings (the diagnoses and ``reach``, those tried in the other diagnoses' worlds) are ordered
        greedily by the weight they end per minute (the order of :meth:`naming_cost` when each ends only its
        own)."""
        settings = self.settings
        worlds = [(c, point) for c, point in sample if c.faulty in weights]
        own: dict[frozenset[str], float] = defaultdict(float)
        for c, _ in worlds:
            own[c.faulty] += c.prior
        # each world's share of its diagnosis's weight; a diagnosis without a world here, as one of its own
        mass = [weights[c.faulty] * c.prior / own[c.faulty] if own[c.faulty] > 0 else 0.0 for c, _ in worlds]
        ends: dict[frozenset[str], dict[int, float]] = {s: {} for s in costs}
        for i, (c, _) in enumerate(worlds):
            ends[c.faulty][i] = 0.0
        for s in weights:
            if own[s] <= 0:
                ends[s][len(mass)] = 0.0
                mass.append(weights[s])
        closing = self.prober.closing_step()
        look = self.worlds.briefing.catalogue[closing.action].cost + settings.round_minutes if closing else 0.0
        # what a naming costs in another diagnosis's world, where it differs from its own price (two cables
        # named as crossed are a swap where they are, and turned back at a replacement's price where one is not)
        priced: dict[frozenset[str], dict[int, float]] = defaultdict(dict)
        for s in reach:
            hypothesis = Hypothesis(s)
            plain = settings.world_prices and isinstance(self.repair_of(s, sample)[1], Hypothesis)
            for i, (c, point) in enumerate(worlds):
                if c.faulty != s and mass[i] > 0:
                    seen, minutes, solved = self.worlds.predicted(c, point, hypothesis)
                    if solved or seen.works:    # judged correct (a short named by its other end), or made it work
                        ends[s][i] = 0.0 if solved else look
                    if plain:
                        priced[s][i] = minutes + settings.round_minutes - costs[s]
        expected, left, done = 0.0, 1.0, set[int]()
        first: frozenset[str] | None = None
        for n in range(len(costs)):
            gain = {s: sum(mass[i] for i in ended if i not in done) for s, ended in ends.items()}
            s = min(gain, key=lambda s: (-gain[s] / costs[s], sorted(s)))
            if gain[s] <= 0:
                break
            if n >= rounds:
                expected += max(left, 0.0) * settings.fail_minutes
                break
            first = s if first is None else first
            expected += left * costs[s] + sum(mass[i] * extra for i, extra in ends[s].items() if i not in done) / total \
                + sum(mass[i] * extra for i, extra in priced[s].items() if i not in done) / total
            left -= gain[s] / total
            done |= ends.pop(s).keys()
        return expected, first

    def applied_config(self) -> dict[str, Any]:
        """Every key of :class:`ModelBasedConfig` as applied, defaults included (what the trajectory records)."""
        return self.settings.applied()


__all__ = ["PAIR_PRIOR", "Candidate", "ModelBasedAssistant", "ModelBasedConfig"]
