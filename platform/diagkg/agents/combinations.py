"""Combinations of single faults for the model-based assistant
(:mod:`diagkg.agents.modelbased`): which parts share a structural role (the
same fault on two of them is a redundant design's pair), and how pairs and
triples of single faults are ranked from what each explains alone."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from ..env.scenarios import Fault


@dataclass(frozen=True)
class Candidate:
    """A diagnosis: the faults it injects and the parts a repair must name."""

    faults: tuple[Fault, ...]
    faulty: frozenset[str]
    prior: float = 1.0

    @property
    def label(self) -> str:
        return " + ".join(f"{f.label} on {f.target.rsplit('/', 1)[-1]}" for f in self.faults)


class Ranked(Sequence[tuple[Candidate, ...]]):
    """Pairs of ``pairable``, the ``k``-th of ``pairable[first[k]]`` and ``pairable[second[k]]``, each made
    only when it is read (indices as numpy arrays: a list of every pair of a large system's singles took
    a tenth of a second to build, for the few hundred a widening tries)."""

    def __init__(self, pairable: list[Candidate], first: Any, second: Any):
        self.pairable, self.first, self.second = pairable, first, second

    def __len__(self) -> int:
        return len(self.first)

    @overload
    def __getitem__(self, k: int) -> tuple[Candidate, ...]: ...

    @overload
    def __getitem__(self, k: slice) -> list[tuple[Candidate, ...]]: ...

    def __getitem__(self, k: int | slice) -> tuple[Candidate, ...] | list[tuple[Candidate, ...]]:
        if isinstance(k, slice):
            return [self[n] for n in range(*k.indices(len(self)))]
        return self.pairable[int(self.first[k])], self.pairable[int(self.second[k])]

    def __iter__(self) -> Iterator[tuple[Candidate, ...]]:
        return (self[n] for n in range(len(self)))


class Combinations:
    """How :class:`~diagkg.agents.modelbased.ModelBasedAssistant` pairs the single faults
    ``pairable`` of system ``sk`` (its parts named in namespace ``ns``). ``role_depth``: connections
    deep that parts' roles compare; ``prior_rank``: the weight of the priors in ranking pairs;
    ``minimal_first``: pairs whose faults explain the lights only together first;
    ``triple_pool``: best pairs extended to triples (and thirds per pair)."""

    def __init__(self, sk: Any, ns: str, pairable: list[Candidate], *, role_depth: int = 2, prior_rank: float = 1.0,
                 minimal_first: bool = True, triple_pool: int = 40):
        self.sk = sk
        self.ns = ns
        self.pairable = pairable
        self.role_depth = role_depth
        self.prior_rank = prior_rank
        self.minimal_first = minimal_first
        self.triple_pool = triple_pool

    def roles(self) -> dict[str, int]:
        """Each part's structural role: parts alike in type, parameters and what they connect to,
        a few connections deep (colour refinement over the circuit's nets), share a role, as the
        supplies of a redundant design or the same part of two identical modules do."""
        sk = self.sk
        nets: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for (cid, port), net in sk.net_of_port.items():
            nets[net].append((cid, port))
        ground = sk.net_of_port.get(sk.ground)
        colour = {cid: hash((c.type, tuple(sorted((k, str(v)) for k, v in c.params.items())), tuple(sorted(c.ports))))
                  for cid, c in sk.components.items()}
        for _ in range(self.role_depth):
            net_colour = {net: hash((net == ground, tuple(sorted((colour.get(cid, 0), port) for cid, port in members))))
                          for net, members in nets.items()}
            colour = {cid: hash((colour[cid], tuple(sorted((port, net_colour.get(sk.net_of_port.get((cid, port), -1), 0))
                                                             for port in c.ports))))
                      for cid, c in sk.components.items()}
        return colour

    def symmetric_pairs(self) -> list[tuple[Candidate, Candidate]]:
        """Pairs of the same fault on two parts with the same role (see :meth:`roles`): in a
        redundant design one such fault shows nothing, both together do, so no single explains
        any of it and the ranking of :meth:`CandidateSpace.widen` (what each fault explains alone) cannot find
        them; they are few, and tried first."""
        role = self.roles()
        groups: dict[tuple[Any, ...], list[Candidate]] = defaultdict(list)
        for c in self.pairable:
            f = c.faults[0]
            target = f.target[len(self.ns):]
            cid, _, port = target.partition(".")
            if cid in role and f.other is None:
                groups[(f.mode, role[cid], port)].append(c)
        return [pair for group in groups.values() if len(group) <= 8 for pair in itertools.combinations(group, 2)]

    def explained(self, seen: dict[str, str], runs: list[tuple[dict[str, str], frozenset[int]]],
                  steps_done: int) -> tuple[Any, Any, Any]:
        """Per single: which lamps seen lit it leaves lit, which lamps seen dark (or flickering)
        it makes so, and which later reports it gives alike (0/1 matrices, one row a single)."""
        import numpy as np

        on = [lamp for lamp, state in seen.items() if state == "on"]
        off = [(lamp, state) for lamp, state in seen.items() if state != "on"]
        a_on = np.array([[lamps.get(x) == "on" for x in on] for lamps, _ in runs], dtype=np.int32).reshape(len(runs), -1)
        a_off = np.array([[lamps.get(x) == st for x, st in off] for lamps, _ in runs], dtype=np.int32).reshape(len(runs), -1)
        steps = np.zeros((len(runs), max(steps_done, 1)), dtype=np.int32)
        for row, (_, alike) in enumerate(runs):
            steps[row, list(alike)] = 1
        return a_on, a_off, steps

    def ranked_pairs(self, seen: dict[str, str], runs: list[tuple[dict[str, str], frozenset[int]]],
                     steps_done: int) -> Sequence[tuple[Candidate, ...]]:
        """Pairs of singles, best first: the lamps the two explain together, then the later
        reports either explains, then the better of the two alone. ``runs``: each of
        :attr:`pairable` run through the ``steps_done`` steps (see ``Worlds.run_through``).
        The pairs are made as they are read (:class:`Ranked`): a widening reads a few hundred
        of the hundreds of thousands ranked."""
        import numpy as np

        a_on, a_off, steps = self.explained(seen, runs, steps_done)
        # a lamp seen lit stays lit under both, or one of the two puts that lamp itself in
        # backwards (its two ends swapped: it lights again when the supply is reversed too; an
        # open or shorted lamp never lights)
        on = [lamp for lamp, state in seen.items() if state == "on"]
        own = np.array([[lamp in c.faulty and c.faults[0].other is not None for lamp in on] for c in self.pairable],
                       dtype=np.int32).reshape(len(runs), -1)
        lit = (1 - (1 - a_on[:, None, :] * a_on[None, :, :]) * (1 - own[:, None, :]) * (1 - own[None, :, :])).sum(axis=2)
        lamps = lit + (a_off.shape[1] - (1 - a_off) @ (1 - a_off).T)
        n_steps = steps.sum(axis=1)
        either = n_steps[:, None] + n_steps[None, :] - steps @ steps.T
        alone = a_on.sum(axis=1) + a_off.sum(axis=1)
        better_alone = np.maximum(alone[:, None], alone[None, :])
        first, second = np.triu_indices(len(runs), k=1)
        codes = {t: n for n, t in enumerate(dict.fromkeys(c.faults[0].target for c in self.pairable))}
        target = np.array([codes[c.faults[0].target] for c in self.pairable])
        keep = target[first] != target[second]
        i, j = first[keep], second[keep]
        # what the two explain (lamps, then later reports), and with prior_rank > 0 what they explain
        # and how likely they are together (each halving of the prior costs prior_rank reports)
        logprior = np.log2(np.array([c.prior for c in self.pairable]))
        if self.minimal_first:
            # the lights first, and among pairs that explain them, those where neither fault alone
            # does (a fault that explains every light alone was tried as a single and failed on a
            # later report; the later reports of a pair are not those of its two faults apart)
            score = lamps[i, j] + self.prior_rank * (logprior[i] + logprior[j])
            order = np.lexsort((np.arange(len(i)), -either[i, j], better_alone[i, j], -score))
        elif self.prior_rank > 0:
            score = lamps[i, j] + either[i, j] + self.prior_rank * (logprior[i] + logprior[j])
            order = np.lexsort((np.arange(len(i)), better_alone[i, j], -either[i, j], -score))
        else:
            order = np.lexsort((np.arange(len(i)), better_alone[i, j], -either[i, j], -lamps[i, j]))
        return Ranked(self.pairable, i[order], j[order])

    def ranked_triples(self, seen: dict[str, str], runs: list[tuple[dict[str, str], frozenset[int]]],
                       pairs: Sequence[tuple[Candidate, ...]], steps_done: int) -> list[tuple[Candidate, ...]]:
        """The best pairs, each with a third single, scored as pairs are (all three together)."""
        import numpy as np

        a_on, a_off, steps = self.explained(seen, runs, steps_done)
        row = {id(c): n for n, c in enumerate(self.pairable)}
        targets = [c.faults[0].target for c in self.pairable]
        scored: list[tuple[int, int, int, int, tuple[Candidate, ...]]] = []
        for rank, (a, b) in enumerate(pairs):
            ia, ib = row[id(a)], row[id(b)]
            on = a_on[ia] * a_on[ib] * a_on                        # lit under all three
            missed = (1 - a_off[ia]) * (1 - a_off[ib]) * (1 - a_off)   # dark under none of them
            lamps = on.sum(axis=1) + a_off.shape[1] - missed.sum(axis=1)
            either = np.maximum(np.maximum(steps[ia], steps[ib]), steps).sum(axis=1)
            for k in np.argsort(-(lamps * 1000 + either), kind="stable")[: self.triple_pool].tolist():
                if targets[k] in (targets[ia], targets[ib]):
                    continue
                scored.append((-int(lamps[k]), -int(either[k]), rank, k, (a, b, self.pairable[k])))
        scored.sort(key=lambda x: x[:4])
        return [combo for *_, combo in scored]


__all__ = ["Candidate", "Combinations"]
