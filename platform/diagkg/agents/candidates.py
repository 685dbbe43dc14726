"""The model-based assistant's candidate space (:mod:`diagkg.agents.modelbased`):
fault modes of the catalogue (``fault-modes.rq``: what each mode applies to, its
template and default value) applied to the system's parts — every component of
a type a mode applies to, every cable end, pairs of same-side cable ends
(crossed), the two ends of a diode or LED (reversed), every coupling — and the
candidates still standing, each with its world where it stands
(:attr:`CandidateSpace.live`). Pairs of faults, then triples, are added only
when no single fault explains what has been observed (:meth:`CandidateSpace.widen`).

A short between two nodes (a mode with ``dk:otherTargetRule "node"``) is a single fault too, but
not one of a part: any two ports on the two nodes give the same circuit, and only a repair tells
which. Shorts are tried when no single fault of a part explains, before the pairs (:meth:`CandidateSpace.widen`):
one world per pair of nodes screens it (its short between ports of parts no step touched; the lights
at the start first, every pair of nodes on one circuit: :meth:`Simulator.screen_shorts`), and the
pairs that agree with what was seen are spread into their placements, one per pair of parts on the
two nodes, each named by either of its parts (repairing either clears the short). They are tried
before a part shorted is named, too (:meth:`CandidateSpace.shorts_before_naming`): it shows the lights
of a short between its two nodes, or elsewhere past it.

Priors are data: each fault mode's ``dk:priorWeight`` in the fault catalogue, or its
``dk:TypePrior`` on the part's type (a cable broken inside is rarer than a bulb burned out); a
pair weighs the product, times :data:`PAIR_PRIOR`."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..env.scenarios import Fault
from ..env.service import Checkpoint
from ..env.worlds import FaultMode, fault_modes
from .combinations import Candidate, Combinations
from .modelbased_config import ModelBasedConfig
from .worlds import Worlds

PAIR_PRIOR = 0.1       # a pair of faults against a single one
Live = list[tuple[Candidate, Checkpoint]]      # candidates standing, each with its world where it stands


def weighed(c: Candidate, likelihood: float) -> Candidate:
    """``c`` with its weight times how likely its world gave what was seen."""
    return c if likelihood == 1.0 else dataclasses.replace(c, prior=c.prior * likelihood)


class CandidateSpace:
    """The candidates of one session on ``worlds``' system, as ``config`` says (``rng``: how a
    sample of them is drawn). :meth:`begin` admits the first ones."""

    def __init__(self, worlds: Worlds, config: ModelBasedConfig, rng: random.Random):
        self.worlds = worlds
        self.config = config
        self.rng = rng
        self.singles = self.single_candidates()
        # what pairs are made of: a component's own loose terminal is a single fault only (pairing
        # every terminal of every component would bury the likelier pairs)
        self.pairable = [c for c in self.singles if not self.own_terminal(c)]
        self.combinations = Combinations(worlds.sk, worlds.ns, self.pairable, role_depth=config.role_depth,
                                         prior_rank=config.prior_rank, minimal_first=config.minimal_first,
                                         triple_pool=config.triple_pool)
        self.symmetric = self.combinations.symmetric_pairs()
        self.live: Live = []
        self.widened = False
        self.tried_pairs: set[tuple[str, ...]] = set()
        self.widenings = 0
        self.tripled = False
        # whether components' own loose terminals are candidates yet: from the start (weighted by
        # terminal_prior) or, with terminal_prior 0, only once nothing else explains the reports
        self.terminals = config.terminal_prior > 0
        self.shorts = False          # whether shorts between nodes are candidates yet (see widen)
        self.shorted_at_start = False   # whether a part shorted was among the first candidates (see begin)
        self.start_weight = 0.0      # the weight of the singles admitted at the start (see widen_early)
        self.early = False           # whether pairs joined singles still standing, no shorts yet (see singles_gone)
        self.raising: frozenset[str] | None = None     # the modes that let more current flow (raises_current)
        self.loose_in: set[int] = set()   # own loose terminals admitted by loose_terminals (ids of singles)
        if self.terminals:
            self.singles = [dataclasses.replace(c, prior=c.prior * config.terminal_prior) if self.own_terminal(c) else c
                            for c in self.singles]

    def begin(self) -> None:
        """Admit the single faults whose worlds agree with what was seen; when none does, a component's own
        terminal (:meth:`more_singles`, a single fault too: as at every later decision), then pairs."""
        self.admit(self.singles if self.terminals else self.pairable)
        self.loose_terminals()
        if not self.live:
            self.more_singles()
        self.start_weight = sum(c.prior for c, _ in self.live)
        if not self.live:
            self.widen()
        # whether the lights at the start are those of a part shorted (a short between nodes may give them too):
        # where parts shorted are a likely reading of them (``shorted_share`` of the belief), the shorts are
        # candidates from the start, before a step that changes the circuit makes them dear to screen
        shorted = [c for c, _ in self.live if self.raises_current(c)]
        self.shorted_at_start = bool(shorted)
        if self.config.shorts_before_naming and shorted and \
                sum(c.prior for c in shorted) >= self.config.shorted_share * sum(c.prior for c, _ in self.live):
            self.admit_shorts()

    def raises_current(self, c: Candidate) -> bool:
        """Whether a fault of ``c`` lets more current flow (``dk:raisesCurrent``: a part shorted)."""
        if self.raising is None:
            self.raising = frozenset(m.name for m in self.modes().values() if m.raises_current)
        return any(f.mode in self.raising for f in c.faults)

    def shorts_before_naming(self) -> bool:
        """Admit the shorts between two nodes before parts are named (:meth:`admit_shorts`) where a part
        shorted stands, or stood at the start (the lights seen are then a short's), when they are not
        candidates yet and cost little to screen: no rebase (the lights at the start screen
        them, one solve per pair of nodes) and no step has changed the circuit (each short's world replays
        nothing that changed). A part shorted shows the lights of a short between its two nodes, and often
        of a short elsewhere that takes the same current past it; the shorts are single faults too, only
        not enumerated with the parts'. True when they were admitted."""
        worlds = self.worlds
        if self.shorts or worlds.since or worlds.changed() or \
                not (self.shorted_at_start or any(self.raises_current(c) or self.joins_parts(c) for c, _ in self.live)):
            return False
        self.admit_shorts()
        return True

    def joins_parts(self, c: Candidate) -> bool:
        """Whether a fault of ``c`` connects a port of one part where a port of another belongs (two cables
        crossed): what a short between two nodes can look like too. A part's own two ports (a diode turned
        round) are not."""
        return self.config.shorts_before_joins and \
            any(f.other is not None and self.part_of(f.target) != self.part_of(f.other) for f in c.faults)

    def loose_terminals(self) -> None:
        """Once only loose connections explain what was seen (every candidate left has one), a
        component's own loose terminal is as much a candidate as a cable's loose end (weighed by
        ``loose_terminal_prior``): what was seen says the contact comes and goes, and only where
        it is tells a cable's end from a part's own terminal. The other faults of a part's own
        terminals stay a fallback (see :meth:`more_singles`, ``terminal_prior``)."""
        if self.terminals or not self.config.loose_terminal_prior or not self.live or \
                not all(any(f.probability is not None for f in c.faults) for c, _ in self.live):
            return
        loose = [c for c in self.singles if self.own_terminal(c) and c.faults[0].probability is not None
                 and id(c) not in self.loose_in]
        self.loose_in.update(map(id, loose))
        anchored = {f.target for f in self.worlds.anchor}
        self.admit([dataclasses.replace(c, prior=c.prior * self.config.loose_terminal_prior) for c in loose
                    if c.faults[0].target not in anchored])

    # -- the single faults -------------------------------------------------
    def modes(self) -> dict[str, FaultMode]:
        """The fault modes of the catalogue (by IRI), as the what-if service reads them."""
        return fault_modes(self.worlds.graph)

    def fault(self, mode: FaultMode, target: str, other: str | None = None) -> Fault:
        """A fault of ``mode`` on ``target`` (and ``other``), at its default value."""
        return mode.fault(self.worlds.ns, target, other)

    def single_candidates(self) -> list[Candidate]:
        """Every fault mode applied to every part it fits (one fault each)."""
        sk, out = self.worlds.sk, []
        comps = {cid: c for cid, c in sorted(sk.components.items()) if cid not in self.worlds.removed}
        for m in self.modes().values():
            if not m.enumerable:
                continue            # shorts between any two nodes, degradations of unknown size
            if m.kind == "component":
                for cid, c in comps.items():
                    if c.type in m.types:
                        out.append(Candidate((self.fault(m, cid),), frozenset({cid}), m.prior_on(c.type)))
            elif m.kind == "coupling":
                for cp in sk.couplings:
                    # the repair of a coupling that should not act: moving what blocks it into place; one that
                    # nothing blocks leaves no part to name (a hypothesis naming the coupling itself names nothing
                    # of the system: judged empty, its world agreeing, and named again every round)
                    for mover in sorted({element for element, _ in cp.blocked_when}):
                        out.append(Candidate((self.fault(m, cp.id),), frozenset({mover}), m.prior))
            elif m.kind == "port" and "other" not in m.parameters:
                # an end that comes off (or off and on, at random): a cable's end, reconnected; a
                # chance fault (a loose end) may also be a component's own terminal, replaced with it
                for cid, c in comps.items():
                    if c.type == "Cable" or (m.chance and c.type not in ("Enclosure", "Opening")):
                        for port in sorted(c.ports):
                            out.append(Candidate((self.fault(m, f"{cid}.{port}"),), frozenset({cid}), m.prior_on(c.type)))
            elif m.kind == "port":
                out.extend(self.port_pairs(m, comps))
        return out

    def part_of(self, iri: str | None) -> str | None:
        """The id of the part that ``iri`` (a part's or a port's, ``part.port``) names; None when it is
        not a name of this system."""
        ns = self.worlds.ns
        return iri[len(ns):].split(".", 1)[0] if iri and iri.startswith(ns) else None

    def own_terminal(self, c: Candidate) -> bool:
        """A component's own terminal coming off (a single end, not a part put in backwards)."""
        if c.faults[0].other is not None:
            return False
        sk, target = self.worlds.sk, c.faults[0].target
        cid = self.part_of(target)
        on_a_port = "." in target[len(self.worlds.ns):]
        return on_a_port and cid in sk.components and sk.components[cid].type != "Cable"

    def port_pairs(self, m: FaultMode, comps: dict[str, Any]) -> list[Candidate]:
        """A fault between two ports: same-side ends of two cables crossed, or a two-ended part reversed."""
        out = []
        if "Cable" in m.types or m.iri.endswith("CrossedCables"):
            cables = [cid for cid, c in comps.items() if c.type == "Cable"]
            for a, b in itertools.combinations(cables, 2):
                if comps[a].module != comps[b].module:
                    continue
                for port in sorted(set(comps[a].ports) & set(comps[b].ports)):
                    out.append(Candidate((self.fault(m, f"{a}.{port}", f"{b}.{port}"),), frozenset({a, b}),
                                         m.prior))
        else:        # a component's own two ends, swapped (a diode or LED put in backwards)
            for cid, c in comps.items():
                if c.type in ("LED", "Diode") and len(c.ports) == 2:
                    p, q = sorted(c.ports)
                    out.append(Candidate((self.fault(m, f"{cid}.{p}", f"{cid}.{q}"),), frozenset({cid}),
                                         m.prior_on(c.type)))
        return out

    # -- admitting ---------------------------------------------------------
    def admit(self, candidates: list[Candidate]) -> None:
        """Keep, among ``candidates``, those whose worlds agree with everything seen so far (a
        world with a loose connection weighed by how likely its coin gave what was seen)."""
        changed = self.worlds.changed()
        for c in candidates:
            started = self.worlds.start(c)
            if started is not None:
                point, likelihood = started
                now = self.as_it_stands(c) if changed else c
                if now is not None:
                    self.live.append((weighed(now, likelihood), point))

    def as_it_stands(self, c: Candidate) -> Candidate | None:
        """``c`` naming what is faulty in its world now, where the shadow stands: the parts it
        names that are still faulty there, and any other part faulty there that its own faults are
        not on (a healthy battery a step turned round, a fuse its short blew). None when that is
        nothing (the real system does not work: the session goes on). A part of its own faults it
        does not name stays unnamed (the other part of a short, which either part's repair clears)."""
        broken = self.worlds.broken_here()
        parts = self.worlds.sk.components.keys()
        own = {p for f in c.faults for iri in (f.target, f.other) if (p := self.part_of(iri)) is not None}
        named = (c.faulty & broken) | {p for p in c.faulty if p not in parts} | (broken - own - c.faulty)
        if named == c.faulty:
            return c
        return dataclasses.replace(c, faulty=frozenset(named)) if named else None

    def widen(self, size: int = 2, shorts: bool = True) -> None:
        """No single fault explains the reports: pairs (``size`` 2), or, when no pair does
        either, triples (``size`` 3: the best pairs, each with one more single). Each single
        fault is run through what was seen without stopping at a disagreement; a combination is
        scored by what its faults would explain together — a lamp seen lit must stay lit under
        all of them, a lamp seen dark (or flickering) needs one of them to make it so, a later
        report needs one of them to give it — and combinations are tried best first. The shorts
        between two nodes come first (unless not ``shorts``: see :meth:`widen_early`)."""
        self.widened = True
        self.widenings += 1
        worlds = self.worlds
        # after a rebase the lights seen at the start no longer tell anything
        seen = {} if worlds.since else dict(worlds.briefing.lights)
        runs = [worlds.run_through(c) for c in self.pairable]
        ranked = self.combinations.ranked_pairs(seen, runs, len(worlds.steps))
        if size == 3:
            ranked = self.combinations.ranked_triples(seen, runs, ranked[: self.config.triple_pool], len(worlds.steps))
        if size == 2 and shorts:
            # a short between two nodes: one fault, but of no part the singles enumerate; tried before the
            # pairs, as a single fault is (each placement weighs a share of its mode's prior: less than a
            # pair). One that agrees settles the pairs at a quarter of max_pairs (see settled)
            self.admit_shorts()
            self.early = False
        if size == 2 and self.widenings == 1:
            self.admit_combos(self.symmetric, len(self.symmetric), settle=False)
        self.admit_combos(ranked, self.config.max_pairs)
        if size == 2 and not self.live:
            # two loose connections that make lamps come and go only together (redundant supplies): what
            # each explains alone ranks them low; tried when no pair ranked so explains what was seen
            loose = [c for c in self.pairable if len(c.faults) == 1 and c.faults[0].probability is not None
                     and c.faults[0].other is None]
            together = worlds.together_only(loose)
            self.admit_combos(together, len(together), settle=False)

    def widens_early(self) -> bool:
        """Whether pairs should join the singles still standing (:meth:`widen_early`): these hold less than
        ``widen_share`` of the weight the singles had at the start (before any rebase, once; the assistant
        asks only before a costly repair of a ``confident`` diagnosis). A single is believed only against
        other singles until pairs are tried, so one that survived because the reports went against the
        likelier ones would be named as certain, where the faults of two parts explain the same reports (both
        lamps dark, the battery reading 12 V: a lamp and an indicator, not the battery's inside)."""
        share = self.config.widen_share
        return bool(share) and not self.widened and not self.worlds.since and bool(self.live) and \
            sum(c.prior for c, _ in self.live) < share * self.start_weight

    def widen_early(self) -> None:
        """Pairs join the singles still standing (see :meth:`widens_early`). A pair that holds a standing
        single's faults is left out: that single explains what it does (it is not a minimal diagnosis)."""
        standing = [frozenset(c.faults) for c, _ in self.live]
        self.widen(shorts=False)     # (shorts between nodes are singles: tried when none of a part stands)
        self.widenings -= 1          # not one of the rounds of pairs tried when nothing stands (max_widenings)
        self.early = not self.shorts
        self.live = [(c, point) for c, point in self.live
                     if len(c.faults) == 1 or not any(faults <= frozenset(c.faults) for faults in standing)]

    def singles_gone(self) -> bool:
        """After an early widening (:meth:`widen_early`), once no single fault stands beside the pairs: what
        a widening tries before the pairs is tried now, a component's own terminal and the shorts between
        nodes (one fault that explains every report is likelier than two: a short across a lamp that blew
        the two fuses feeding it, not the two fuses). True when they were tried."""
        if not self.early or any(len(c.faults) == 1 for c, _ in self.live):
            return False
        self.early = False
        self.more_singles()
        self.admit_shorts()
        return True

    def admit_combos(self, ranked: Sequence[tuple[Candidate, ...]], most: int, settle: bool = True) -> None:
        """Admit combinations of singles not tried yet, in order: ``most`` at most (with
        ``settle``, a quarter of that once :meth:`settled`: one pair alone that agrees would be
        believed certain, with the truth perhaps further down the ranking). A combination whose
        lights at the start, composed from its singles' worlds (:meth:`Worlds.composed_lights`; each
        way its loose connections may fall, :meth:`Worlds.composed_ways`), are not those seen is turned
        away without writing its world (counted as tried)."""
        tried = 0
        for combo in ranked:
            faults = tuple(f for c in combo for f in c.faults)
            ident = tuple(sorted(f"{f.mode}:{f.target}:{f.other}" for f in faults))
            if ident in self.tried_pairs:
                continue
            self.tried_pairs.add(ident)
            tried += 1
            # the lights at the start first, composed from the singles' worlds (while they are still judged),
            # each way its loose connections may fall for a combination with some
            if self.worlds.since:
                agrees = True
            elif (shown := self.worlds.composed_lights(combo)) is not None:
                agrees = shown == self.worlds.briefing.lights
            else:
                ways = self.worlds.composed_ways(combo)
                agrees = ways is None or self.worlds.likelihood_at_start(ways) > 0
            if agrees:
                prior = PAIR_PRIOR ** (len(combo) - 1) * math.prod(c.prior for c in combo)
                self.admit([Candidate(faults, frozenset().union(*(c.faulty for c in combo)), prior)])
            if tried >= most or (settle and tried >= most // 4 and self.settled()):
                break

    def settled(self) -> bool:
        """Whether what agrees so far is enough to choose between, once a quarter of the pairs are
        tried: two diagnoses, or one fault alone (a short between two nodes, tried before the pairs:
        one fault that explains everything is likelier than two, as a single fault of a part is)."""
        return len({c.faulty for c, _ in self.live}) > 1 or any(len(c.faults) == 1 for c, _ in self.live)

    def more_singles(self) -> bool:
        """A component's own terminal coming loose is a candidate only when no cable end or
        other single fault explains the reports (the more common place for an end to come off
        is tried first, as pairs are only when no single fault explains)."""
        if self.terminals:
            return False
        self.terminals = True
        self.admit([c for c in self.singles if self.own_terminal(c) and id(c) not in self.loose_in])
        return bool(self.live)

    def left_by_overcurrent(self, parts: set[str]) -> bool:
        """Whether a candidate standing names one of ``parts`` faulty by a mode that often follows an
        over-current (``dk:followsOverCurrent``: a fuse blown), so that a repair of them may not last."""
        follows = {m.name for m in self.modes().values() if m.follows_overcurrent}
        return any(f.mode in follows and self.part_of(f.target) in parts
                   for c, _ in self.live if c.faulty & parts for f in c.faults)

    def admit_shorts(self) -> None:
        """Shorts between two nodes are candidates now (at a restart: a repair that may not last)."""
        if not self.shorts:
            self.shorts = True
            self.admit(self.short_candidates())

    def short_candidates(self) -> list[Candidate]:
        """The shorts between two nodes whose worlds agree with what was seen, one candidate per
        placement: each short mode between a port of a part on one node and a port of a part on
        the other (one port per part and node), named by either part (twin candidates: repairing
        either clears it), its mode's prior shared among the placements by how many ports they
        stand for. Each pair of nodes is screened first by one world, a short between ports of
        parts no step has touched (the circuit is the same whichever ports; only a step on a
        part of the short tells them apart)."""
        sk = self.worlds.sk
        nodes: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for (cid, port), net in sorted(sk.net_of_port.items()):
            if cid in sk.components and cid not in self.worlds.removed:
                nodes[net][cid].append(port)
        steps = self.worlds.steps
        touched = {t.split(".", 1)[0] for step, _ in steps for t in getattr(step, "targets", ())}
        touched |= {t for step, _ in steps for t in getattr(step, "components", ())}
        # the parts a step may have changed (a repair, a hypothesis's replacements): a short on one of
        # them is not the short between the same nodes on parts nobody changed (its repair cleared it).
        # Not the parts of a hypothesis judged wrong: a short on one of them would have made it faulty
        changed = {t.split(".", 1)[0] for n, (step, seen) in enumerate(steps) if self.worlds.changes(step)
                   and not (n >= self.worlds.since and getattr(seen, "verdict", None) == "wrong")
                   for t in (*getattr(step, "targets", ()), *getattr(step, "components", ()))}

        def first(parts: dict[str, list[str]], plain: str) -> tuple[str, str]:
            """A port of a part on the node that no step touched, else of ``plain`` (one no step changed)."""
            cid = next((c for c in parts if c not in changed and c not in touched), plain)
            return cid, parts[cid][0]

        out: list[Candidate] = []
        pairs = list(itertools.combinations(sorted(nodes), 2))
        for m in self.modes().values():
            if not m.node_short or m.default is None:      # (node_short says it has one)
                continue
            # the circuit at the start is the same wherever on the two nodes the short is
            ends = [(next(((c, ps[0]) for c, ps in nodes[x].items())), next(((c, ps[0]) for c, ps in nodes[y].items())))
                    for x, y in pairs]
            # the lights at the start first, simulated straight from the state (a world is written only
            # for a pair that shows them), while they are still judged (not after a rebase)
            lights = [None] * len(pairs) if self.worlds.since else \
                self.worlds.lights_with_short([(a, b, m.default) for a, b in ends])
            for (x, y), shown in zip(pairs, lights, strict=True):
                if shown is not None and shown != self.worlds.briefing.lights:
                    continue
                total = sum(map(len, nodes[x].values())) * sum(map(len, nodes[y].values()))
                screened = None
                for (a, ports_a), (b, ports_b) in itertools.product(nodes[x].items(), nodes[y].items()):
                    fault = self.fault(m, f"{a}.{ports_a[0]}", f"{b}.{ports_b[0]}")
                    if a in changed or b in changed:
                        # its own world: a step changed one of its parts
                        if self.worlds.start(Candidate((fault,), frozenset({a, b}), m.prior)) is None:
                            continue
                    else:
                        if screened is None:       # one world for every placement on parts nobody changed
                            (sa, pa), (sb, pb) = first(nodes[x], a), first(nodes[y], b)
                            screen = Candidate((self.fault(m, f"{sa}.{pa}", f"{sb}.{pb}"),), frozenset({sa, sb}), m.prior)
                            screened = self.worlds.start(screen) is not None
                        if not screened:
                            continue
                    share = m.prior * len(ports_a) * len(ports_b) / total
                    names = sorted({a, b})
                    out += [Candidate((fault,), frozenset({part}), share / len(names)) for part in names]
        return out

    def restart(self) -> None:
        """Start again from the single faults (none on a part the anchor's faults are on), judged
        on what the worlds must explain now (after a rebase)."""
        self.tried_pairs.clear()
        self.widenings = 0
        self.tripled = False
        self.worlds.through.clear()
        self.shorts = False          # tried again with the first pairs after this restart
        self.early = False           # (the pairs that joined early are gone)
        anchored = {f.target for f in self.worlds.anchor}
        pool = self.singles if self.terminals else self.pairable
        self.admit([c for c in pool if not any(f.target in anchored for f in c.faults)])
        self.loose_in.clear()
        self.loose_terminals()

    # -- what stands ---------------------------------------------------------
    def distribution(self) -> list[tuple[frozenset[str], float]]:
        """The remaining diagnoses (sets of parts) with their probability, most likely first."""
        weight: dict[frozenset[str], float] = defaultdict(float)
        for c, _ in self.live:
            weight[c.faulty] += c.prior
        total = sum(weight.values()) or 1.0
        return sorted(((s, w / total) for s, w in weight.items()), key=lambda x: (-x[1], sorted(x[0])))

    def sample(self) -> Live:
        """The candidates a decision looks at: all of them, or (more than ``config.sample``) a place for
        every diagnosis and the rest shared by weight (``diagnosis_mass``, :func:`stratified`); with more
        diagnoses than places, one world of each of ``config.sample`` drawn at random."""
        if len(self.live) <= self.config.sample:
            return list(self.live)
        by_set: dict[frozenset[str], Live] = defaultdict(list)
        for entry in self.live:
            by_set[entry[0].faulty].append(entry)
        if self.config.diagnosis_mass and len(by_set) < self.config.sample:
            return stratified(list(by_set.values()), self.config.sample)
        picked = [group[0] for group in by_set.values()]          # every diagnosis once …
        if len(picked) > self.config.sample:
            picked = self.rng.sample(picked, self.config.sample)
        return picked


def stratified(groups: list[Live], size: int) -> Live:
    """A sample of at most ``size`` worlds of the diagnoses ``groups`` (each a diagnosis's worlds, fewer
    diagnoses than ``size``) that weighs each diagnosis as all its worlds do: every diagnosis has a place,
    the places left are shared by weight (whole places only, so diagnoses alike get alike places; those a
    diagnosis of fewer worlds cannot fill are shared again), a diagnosis's likeliest worlds take its places,
    and they stand for the whole of its weight in proportion to their own. One world per diagnosis at its
    own weight would make a diagnosis of one world (a battery turned round) outweigh one of many (a short
    placed between any of several pairs of nodes)."""
    masses = [sum(c.prior for c, _ in g) for g in groups]
    places: dict[int, int] = {}
    left, room = list(range(len(groups))), size
    while left:     # a diagnosis with fewer worlds than its share takes them all, and the rest share what is left
        total = sum(masses[i] for i in left) or 1.0
        spare = room - len(left)
        share = {i: 1 + spare * masses[i] / total + 1e-9 for i in left}
        full = [i for i in left if len(groups[i]) <= share[i]]
        if not full:
            places.update((i, int(share[i])) for i in left)
            break
        for i in full:
            places[i] = len(groups[i])
            room -= len(groups[i])
        left = [i for i in left if i not in full]
    out: Live = []
    for i, g in enumerate(groups):
        if places[i] == len(g):
            out.extend(g)
            continue
        chosen = sorted(g, key=lambda e: -e[0].prior)[:places[i]]
        kept = sum(c.prior for c, _ in chosen) or 1.0
        out.extend((dataclasses.replace(c, prior=c.prior * masses[i] / kept), point) for c, point in chosen)
    return out


__all__ = ["PAIR_PRIOR", "CandidateSpace", "Live", "stratified", "weighed"]
