"""Scoring for the model-based assistant (:mod:`diagkg.agents.modelbased`): the
expected information gain per minute of each option over a sample of candidate
worlds, found exactly while predicting as few reports as possible.

An option's rate is bounded before any prediction (the classes of worlds that
report alike, :meth:`Likeness.bounds`, over the option's least minutes), and
again after each world predicted: the worlds predicted so far are known, and the
rest can at best each give a report of their own, at the option's least
minutes. An option is dropped as soon as its bound is below the best rate found,
so the option chosen is the one scoring every option on every world would choose."""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from dataclasses import dataclass, field

from ..env.actions import Action, Hypothesis
from ..env.service import Checkpoint
from ..env.verification import least_naming_cost
from .combinations import Candidate
from .likeness import Likeness, entropy
from .readings import Reading


@dataclass
class Scored:
    """An option with its expected information gain per minute, its expected minutes, and the
    diagnoses (with their weights) behind each report it may give, and the worlds that may give it."""

    rate: float
    step: Action | Hypothesis
    minutes: float
    groups: dict[tuple[str, tuple[int, ...]], dict[frozenset[str], float]]
    members: dict[tuple[str, tuple[int, ...]], list[tuple[Candidate, Checkpoint]]] = field(default_factory=dict)


def _share(mass: float, total: float) -> float:
    """One report's term of the entropy of the reports (``mass`` of ``total``)."""
    return -mass / total * math.log2(mass / total) if mass > 0 else 0.0


class Scorer:
    """Scores options over a sample of worlds, predicting through ``likeness`` (a report once
    per class of worlds alike); a round is worth ``round_minutes`` besides the option's own."""

    ahead = 6                           # options best at the last decision scored first

    def __init__(self, likeness: Likeness, *, round_minutes: float = 20.0):
        self.likeness = likeness
        self.round_minutes = round_minutes
        self.last_rates: dict[str, float] = {}     # each option's rate at the last decision

    def scored(self, options: list[Action | Hypothesis], sample: list[tuple[Candidate, Checkpoint]],
                keep: int = 1) -> list[Scored]:
        """Expected information gain per minute of the options that tell some of ``sample`` apart:
        the entropy of their reports less what chance alone adds (a loose connection's world may
        answer either way whatever the diagnosis). At least the ``keep`` best are scored, in the
        order given; an option that cannot be among them (its bound is below the ``keep``-th best
        rate found, before or while its reports are predicted) is not scored to the end."""
        worlds = self.likeness.worlds
        assert worlds.shadow is not None
        bounds = self.likeness.bounds(options, sample)
        catalogue = worlds.briefing.catalogue
        # the least minutes of each option: the catalogue's for an action (access aside), the repair
        # rules' for naming parts
        least = [least_naming_cost(worlds.shadow, o.components) if isinstance(o, Hypothesis) else
                 catalogue[o.action].cost if o.action in catalogue else 0.0 for o in options]
        order = sorted((i for i in range(len(options)) if bounds[i] > 1e-9),
                       key=lambda i: -bounds[i] / (least[i] + self.round_minutes))
        # the options that were best last time first: a good rate found early drops more options
        last = self.last_rates
        ahead = sorted((i for i in order if str(options[i]) in last), key=lambda i: -last[str(options[i])])[:self.ahead]
        order = ahead + [i for i in order if i not in ahead]
        total = sum(c.prior for c, _ in sample)
        # what each world may add to the entropy of the reports at most (each way it may answer a
        # report of its own), summed over the worlds after it
        pieces = [[c.prior * w for _, w in self.likeness.ways(c)] for c, _ in sample]
        after = [0.0] * (len(sample) + 1)
        for n in range(len(sample) - 1, -1, -1):
            after[n] = after[n + 1] + sum(_share(m, total) for m in pieces[n])
        found: dict[int, Scored] = {}
        rates: list[float] = []          # the best rates found, a min-heap of ``keep``
        for i in order:
            floor = rates[0] - 1e-12 if len(rates) >= keep else None
            if floor is not None and bounds[i] / (least[i] + self.round_minutes) < floor:
                continue        # (those that were best last time come first, out of this order)
            scored = self.score(options[i], sample, total, bounds[i], least[i], after, floor)
            if scored is not None:
                found[i] = scored
                heapq.heappush(rates, scored.rate)
                if len(rates) > keep:
                    heapq.heappop(rates)
        self.last_rates = {str(s.step): s.rate for s in found.values()}
        return [found[i] for i in sorted(found)]

    def score(self, step: Action | Hypothesis, sample: list[tuple[Candidate, Checkpoint]], total: float,
               bound: float, least: float, after: list[float], floor: float | None) -> Scored | None:
        """``step``'s rate over ``sample``, its reports predicted world by world; None when it tells
        nothing, or as soon as its rate is bound to be below ``floor``: the information is at most
        ``bound`` (its classes) and at most what the worlds predicted give with each world left
        giving a report of its own (``after``), less the chance the worlds predicted add; the
        minutes are at least theirs, and ``least`` for the rest."""
        groups: dict[tuple[str, tuple[int, ...]], dict[frozenset[str], float]] = defaultdict(lambda: defaultdict(float))
        masses: dict[tuple[str, tuple[int, ...]], float] = defaultdict(float)
        members: dict[tuple[str, tuple[int, ...]], list[tuple[Candidate, Checkpoint]]] = defaultdict(list)
        reports: dict[tuple[str, tuple[int, ...]], list[Reading]] = defaultdict(list)   # each class's distinct reports
        owns: list[tuple[float, dict[tuple[str, tuple[int, ...]], float]]] = []
        known = noise = cost = mass = 0.0      # the entropy of the reports so far, chance, minutes, weight
        for n, (c, point) in enumerate(sample):
            own: dict[tuple[str, tuple[int, ...]], float] = defaultdict(float)
            for weight, key, minutes in self.likeness.outcomes(c, point, step):
                group = key.group()
                if all(r.values != key.values for r in reports[group]):
                    reports[group].append(key)
                groups[group][c.faulty] += c.prior * weight
                if group not in own:
                    members[group].append((c, point))
                own[group] += weight
                cost += c.prior * weight * minutes
                if floor is not None:
                    before = masses[group]
                    masses[group] = before + c.prior * weight
                    known += _share(masses[group], total) - _share(before, total)
            noise += c.prior * entropy(list(own.values()))
            owns.append((c.prior, own))
            mass += c.prior
            if floor is not None and n + 1 < len(sample):
                most = min(bound, known + after[n + 1] - noise / total)
                if most / ((cost + least * (total - mass)) / total + self.round_minutes) < floor:
                    return None
        if len(groups) > 1 and (merged := _alike(reports)):
            # reports of neighbouring cells that agree are one report: the judge keeps every world that
            # predicted either, so the split they seem to make is none
            groups, members, noise = _merge(groups, members, owns, merged)
        gain = entropy([sum(g.values()) for g in groups.values()]) - noise / total
        if len(groups) < 2 or gain <= 1e-9:
            return None
        return Scored(gain / (cost / total + self.round_minutes), step, cost / total, groups, members)


Group = tuple[str, tuple[int, ...]]


def _alike(reports: dict[Group, list[Reading]]) -> dict[Group, Group]:
    """Classes of reports (cells of the grid) that are one report to the judge, each mapped to the class it joins:
    every report of the one agrees with every report of the other (neighbouring cells, within the measurement's
    tolerance), and with every report of the classes joined before. Empty when none joins."""
    joined: list[tuple[Group, list[Reading]]] = []
    out: dict[Group, Group] = {}
    for g, mine in reports.items():
        for head, theirs in joined:
            if head[0] == g[0] and all(a.agrees(b) for a in mine for b in theirs):
                theirs.extend(mine)
                out[g] = head
                break
        else:
            joined.append((g, list(mine)))
    return out


def _merge(groups: dict[Group, dict[frozenset[str], float]], members: dict[Group, list[tuple[Candidate, Checkpoint]]],
           owns: list[tuple[float, dict[Group, float]]], merged: dict[Group, Group]
           ) -> tuple[dict[Group, dict[frozenset[str], float]], dict[Group, list[tuple[Candidate, Checkpoint]]], float]:
    """``groups`` and ``members`` with the classes in ``merged`` joined to theirs, and the chance the worlds add
    (each world's entropy over its own reports) over the joined classes."""
    out: dict[Group, dict[frozenset[str], float]] = defaultdict(lambda: defaultdict(float))
    who: dict[Group, list[tuple[Candidate, Checkpoint]]] = defaultdict(list)
    for g, weights in groups.items():
        for faulty, w in weights.items():
            out[merged.get(g, g)][faulty] += w
    for g, worlds in members.items():
        into = who[merged.get(g, g)]
        into.extend(x for x in worlds if not any(x is y for y in into))
    noise = 0.0
    for prior, own in owns:
        joined: dict[Group, float] = defaultdict(float)
        for g, w in own.items():
            joined[merged.get(g, g)] += w
        noise += prior * entropy(list(joined.values()))
    return out, who, noise


__all__ = ["Scored", "Scorer"]
