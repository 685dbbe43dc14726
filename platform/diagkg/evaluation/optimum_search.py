"""AO* over belief sets: the search behind :mod:`diagkg.evaluation.optimum`.

A *node* is a belief: the worlds (:mod:`~diagkg.evaluation.optimum_worlds`) still
possible after what was seen, each with its probability (normalised), and the
rounds played. An *option* is a move there: its expected minutes, the mass of the
worlds it ends in success, and one child node per report it may give (the worlds
that give that report, where the move left them). A node's value is the least
expected cost, over the options, of the option's minutes plus its children's values
(each by its probability): the expected cost of ending in success.

Every node carries two bounds: ``lower`` (admissible: an unexpanded node's is the
perfect-information bound of its worlds, :meth:`Worlds.bound`) and ``upper`` (the
value of a complete policy below it: infinite until one is known; a node of one
world without chance that one move ends at its perfect-information cost knows one at
once). AO* expands, again and again, an unsolved tip of the best partial policy (by
lower bound), where the most probability and the widest gap meet, and backs the bounds
up; a node is solved when its bounds meet. An expansion stops when the deadline passes.
Then :meth:`Search.settle` fixes the policy that is stored: the search's best options
where it went; where it did not, until ``grow_until``, the nodes the policy reaches are
expanded and their best option by lower bound followed (a greedy policy of tests and
repairs), and hypotheses alone are always an option (so a time limit always leaves a
complete policy, whose expected cost is the upper bound).

Reductions (each keeps the optimum of the moves considered):

* a move is dropped where it cannot be taken in some world (the session would fail)
  or where a world it does not end would run out of rounds;
* a move that neither ends a world, nor tells the worlds apart, nor changes one is
  dropped (it only costs);
* a repair (a catalogue repair or a hypothesis) is considered only on parts faulty in
  some world of the node; one that ends the session in no world is a probe like any
  test (naming a part tells a partial verdict from a wrong one). Repairs were terminal
  until 2026-12-07, which lost such policies while calling the result exact;
* moves that lead to the same children with the same probabilities and end the same
  mass are one option: the cheapest;
* a report that only reweighs the node's worlds (a loose connection seen on, which a
  world without it also shows) is followed at most ``repeats`` times in a row.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .optimum_worlds import Worlds

INF = math.inf
TOLERANCE = 1e-7          # bounds this close (relative) are equal: the node is solved
CHECK_EVERY = 16          # moves tried between two looks at the clock


class OutOfTime(Exception):
    """The deadline passed in the middle of an expansion (the node is left unexpanded)."""


@dataclass(eq=False)
class Node:
    worlds: tuple[tuple[int, float], ...]       # (world, probability), normalised
    depth: int                                  # rounds played
    reweighs: int                               # reports in a row that only reweighed the worlds
    lower: float
    upper: float = INF
    options: list["Option"] | None = None       # None: not expanded yet
    parents: list["Option"] = field(default_factory=list)

    @property
    def solved(self) -> bool:
        """The bounds meet (a node no policy can end, both infinite, counts as settled)."""
        if self.lower == INF:
            return True
        return self.upper - self.lower <= TOLERANCE * max(1.0, abs(self.lower))


@dataclass(eq=False)
class Option:
    node: Node
    move: int
    cost: float                                  # expected minutes of the move itself
    ended: float                                 # probability that the move ends the session in success
    children: list[tuple[float, int, Node]]      # (probability, report, child)
    lower: float = INF
    upper: float = INF

    def evaluate(self) -> None:
        self.lower = self.cost + sum(p * c.lower for p, _, c in self.children)
        self.upper = self.cost + sum(p * c.upper for p, _, c in self.children)


@dataclass
class Stats:
    expanded: int = 0
    nodes: int = 0


class Search:
    """AO* over the beliefs of ``worlds`` from the starts' classes (see the module's documentation)."""

    def __init__(self, worlds: Worlds, repeats: int = 2):
        self.w = worlds
        self.repeats = repeats
        self.nodes: dict[tuple[int, int, tuple[tuple[int, float], ...]], Node] = {}
        self.stats = Stats()
        self._final: dict[int, tuple[float, Option | None]] = {}     # see settle
        self._grow_until = -INF                                        # see settle
        self._kept: tuple[float, dict[int, tuple[float, Option | None]]] | None = None   # see settle
        self.tick: Callable[[], None] | None = None      # told about once a second while it works (see ticked)
        self._ticked = time.monotonic()
        self.roots: list[tuple[float, Node]] = []
        self.starts = worlds.starts()
        for start in self.starts:
            mass = sum(p for _, p in start.worlds)
            self.roots.append((mass, self.node(_normalised(start.worlds), 0, 0)))

    # -- bounds of the whole prior --------------------------------------------
    @property
    def lower(self) -> float:
        return sum(p * n.lower for p, n in self.roots)

    @property
    def upper(self) -> float:
        return sum(p * n.upper for p, n in self.roots)

    @property
    def solved(self) -> bool:
        return all(n.solved for _, n in self.roots)

    # -- nodes -----------------------------------------------------------------
    def node(self, worlds: tuple[tuple[int, float], ...], depth: int, reweighs: int) -> Node:
        key = (depth, reweighs, worlds)
        known = self.nodes.get(key)
        if known is None:
            lower = sum(p * self.w.bound(w) for w, p in worlds)
            known = self.nodes[key] = Node(worlds, depth, reweighs, lower)
            self.stats.nodes += 1
            if len(worlds) == 1 and lower < INF:
                w = worlds[0][0]
                if len(self.w.ways[self.w.scenario_of(w)]) == 1 and self.w.bound_rounds(w) == 1 and \
                        depth < self.w.budget_of(w):
                    # one world, no chance, and one move ends it at the least cost: that move is the policy
                    # (the bound is admissible and that move reaches it)
                    known.upper = lower
        return known

    def candidates(self, node: Node) -> list[int]:
        """The moves tried at ``node``: the base moves (repairs only on parts faulty in some world)
        and the hypotheses of its worlds."""
        faulty: frozenset[str] = frozenset().union(*(self.w.broken(w) for w, _ in node.worlds))
        moves = [m for m in self.w.base if not self.w.is_repair(m) or self.w.targets(m) <= faulty]
        namings = sorted({m for w, _ in node.worlds for m in self.w.namings(w)})
        return moves + namings

    def expand(self, node: Node, deadline: float = INF) -> None:
        """Work out the options of ``node`` (see the module's documentation for what is dropped);
        :class:`OutOfTime` when ``deadline`` passes meanwhile (the node stays unexpanded)."""
        here = set(w for w, _ in node.worlds)
        best: dict[tuple[float, tuple[tuple[float, int], ...]], Option] = {}
        for n, move in enumerate(self.candidates(node)):
            if n % CHECK_EVERY == 0:
                self.ticked()
            if n % CHECK_EVERY == 0 and time.monotonic() > deadline:
                raise OutOfTime
            option = self._option(node, move, here)
            if option is None:
                continue
            signature = (round(option.ended, 12), tuple(sorted((round(p, 12), id(c)) for p, _, c in option.children)))
            kept = best.get(signature)
            if kept is None or option.cost < kept.cost:
                best[signature] = option
        self.stats.expanded += 1
        node.options = list(best.values())
        for option in node.options:
            for _, _, child in option.children:
                child.parents.append(option)
            option.evaluate()
        self._update(node)

    def _option(self, node: Node, move: int, here: set[int]) -> Option | None:
        w = self.w
        cost = ended = 0.0
        groups: dict[int, dict[int, float]] = {}
        for world, p in node.worlds:
            left = w.budget_of(world) - node.depth - 1
            for way, (_, q) in enumerate(w.ways[w.scenario_of(world)]):
                step = w.step(world, way, move)
                if step.world < 0:
                    return None
                mass = p * q
                cost += mass * step.cost
                if step.solved:
                    ended += mass
                    continue
                if left <= 0:
                    return None            # this world would run out of rounds
                group = groups.setdefault(step.report, {})
                group[step.world] = group.get(step.world, 0.0) + mass
        children: list[tuple[float, int, Node]] = []
        for report, group in sorted(groups.items()):
            total = sum(group.values())
            worlds = _normalised(tuple(group.items()))
            if ended <= 0 and len(groups) == 1 and worlds == node.worlds:
                return None                # nothing ended, nothing told apart, nothing changed
            reweighs = 0
            if set(group) == here and worlds != node.worlds:
                reweighs = node.reweighs + 1
                if reweighs > self.repeats:
                    return None
            children.append((total, report, self.node(worlds, node.depth + 1, reweighs)))
        return Option(node, move, cost, ended, children)

    def _update(self, start: Node) -> None:
        """Back the bounds up from ``start`` to every ancestor whose bounds change (deepest first)."""
        heap: list[tuple[int, int, Node]] = [(-start.depth, id(start), start)]
        queued = {id(start)}
        while heap:
            _, _, node = heapq.heappop(heap)
            queued.discard(id(node))
            options = node.options or []
            for option in options:
                option.evaluate()
            lower = min((o.lower for o in options), default=INF)
            upper = min((o.upper for o in options), default=INF)
            if node is not start and lower == node.lower and upper == node.upper:
                continue
            node.lower, node.upper = max(node.lower, lower) if options else INF, upper
            for parent in node.parents:
                if id(parent.node) not in queued:
                    queued.add(id(parent.node))
                    heapq.heappush(heap, (-parent.node.depth, id(parent.node), parent.node))

    # -- the search ------------------------------------------------------------
    def run(self, deadline: float) -> None:
        """Expand until the optimum is proven or ``deadline`` (``time.monotonic``) passes."""
        try:
            while not self.solved and time.monotonic() < deadline:
                tip = self._tip()
                if tip is None:
                    break
                self.expand(tip, deadline)
        except OutOfTime:
            pass

    def ticked(self) -> None:
        """Call :attr:`tick` (to show progress) if a second has passed since it was last called."""
        if self.tick is not None and time.monotonic() - self._ticked >= 1.0:
            self._ticked = time.monotonic()
            self.tick()

    def _tip(self) -> Node | None:
        """An unexpanded node of the best partial policy: from the class with the most to gain, down
        the options best by lower bound, to the child where probability and gap weigh most."""
        pending = [(p, n) for p, n in self.roots if not n.solved and n.lower < INF]
        node = _heaviest(pending)
        while node is not None and node.options is not None:
            option = min(node.options, key=lambda o: (o.lower, o.upper), default=None)
            if option is None or option.lower == INF:
                return None
            node = _heaviest([(p, c) for p, _, c in option.children if not c.solved])
        return node

    def settle(self, deadline: float = INF, grow_until: float = -INF) -> float:
        """Fix the policy that is stored, and return its expected cost (an upper bound of the optimum;
        infinite when no complete policy was found by ``deadline``). At each node it takes the best of a
        few options of the search (the best by upper bound, and by lower bound) and, where the search did
        not go, a policy of hypotheses only: the one that ends the most probability per expected minute,
        again and again. Until ``grow_until`` (``time.monotonic``; never by default), a node the search
        did not expand is expanded first, so its options by lower bound are followed too (a greedy policy
        where hypotheses alone would name part after part: on a random system of 34 scenarios stopped at
        60 s, 257.5 minutes with hypotheses alone). Where the optimum was proven, it is the search's own
        policy. The policy without growing is worked out first and kept where the grown one is not
        cheaper or not complete by ``deadline``; so is the policy an earlier call fixed (the nodes stay,
        so it is still complete) where this call's costs more or is not complete in time."""
        best = (self._settle_all(deadline, -INF), self._final)
        if grow_until > -INF and time.monotonic() < grow_until:
            grown = self._settle_all(deadline, grow_until)
            if grown <= best[0]:
                best = (grown, self._final)
        if self._kept is not None and self._kept[0] < best[0]:
            best = self._kept
        self._kept = best
        self._final = best[1]
        return best[0]

    def _settle_all(self, deadline: float, grow_until: float) -> float:
        self._final = {}
        self._grow_until = grow_until
        try:
            return sum(p * self._settle(root, deadline) for p, root in self.roots)
        except OutOfTime:
            self._final = {}
            return INF

    def _settle(self, node: Node, deadline: float) -> float:
        known = self._final.get(id(node))
        if known is not None:
            return known[0]
        if time.monotonic() > deadline:
            raise OutOfTime
        self._final[id(node)] = (INF, None)
        if node.options is None and not node.solved and time.monotonic() < self._grow_until:
            try:
                self.expand(node, self._grow_until)
            except OutOfTime:
                pass                     # left unexpanded: hypotheses alone there
        candidates: list[Option] = []
        if node.options is None and node.upper < INF:
            shortcut = self._shortcut(node)
            if shortcut is not None:
                candidates.append(shortcut)
        if node.options:
            by_upper = min(node.options, key=lambda o: (o.upper, o.lower, o.move))
            by_lower = min(node.options, key=lambda o: (o.lower, o.upper, o.move))
            candidates += [by_upper] if by_upper is by_lower else [by_upper, by_lower]
        if not node.solved:
            naming = self._naming(node)
            if naming is not None:
                candidates.append(naming)
        best: tuple[float, Option | None] = (INF, None)
        for option in candidates:
            value = option.cost + sum(p * self._settle(child, deadline) for p, _, child in option.children)
            if value < best[0]:
                best = (value, option)
        self._final[id(node)] = best
        return best[0]

    def _shortcut(self, node: Node) -> Option | None:
        """The one move that ends the single world of a node settled by its perfect-information path."""
        world = node.worlds[0][0]
        move = self.w.bound_move(world)
        if move is None:
            return None
        step = self.w.step(world, 0, move)
        return Option(node, move, step.cost, 1.0, []) if step.solved else None

    def _naming(self, node: Node) -> Option | None:
        """The hypothesis of the node's worlds that ends the most probability per expected minute."""
        here = set(w for w, _ in node.worlds)
        best: tuple[float, float, int, Option | None] = (0.0, 0.0, 0, None)
        for move in sorted({m for w, _ in node.worlds for m in self.w.namings(w)}):
            option = self._option(node, move, here)
            if option is not None and option.ended > 0:
                rate = option.ended / max(option.cost, 1e-9)
                if best[3] is None or (rate, -option.cost, -move) > best[:3]:
                    best = (rate, -option.cost, -move, option)
        return best[3]

    # -- the policy found ------------------------------------------------------
    def chosen(self, node: Node) -> Option | None:
        """The option the stored policy takes at ``node`` (see :meth:`settle`, which fixes it)."""
        known = self._final.get(id(node))
        return known[1] if known is not None else None

    def policy_nodes(self) -> list[Node]:
        """Every node of the stored policy (:meth:`settle`), from the classes down, each once."""
        seen: dict[int, Node] = {}
        stack = [n for _, n in self.roots]
        while stack:
            node = stack.pop()
            option = self.chosen(node)
            if id(node) in seen or option is None:
                continue
            seen[id(node)] = node
            if option is not None:
                stack.extend(c for _, _, c in option.children)
        return list(seen.values())

    def scenario_costs(self) -> dict[int, float]:
        """The policy's expected cost in each scenario: over the classes its start may show (each by
        how likely it shows it) and the ways its loose connections fall at each step."""
        out: dict[int, float] = {}
        share = 1.0 / len(self.w.scenarios)
        for start, (_, root) in zip(self.starts, self.roots, strict=True):
            for world, p in start.worlds:
                n = self.w.scenario_of(world)
                out[n] = out.get(n, 0.0) + p / share * self._cost(root, world)
        return out

    def _cost(self, node: Node, world: int) -> float:
        option = self.chosen(node)
        if option is None:
            return INF
        total = 0.0
        by_report = {report: child for _, report, child in option.children}
        for way, (_, q) in enumerate(self.w.ways[self.w.scenario_of(world)]):
            step = self.w.step(world, way, option.move)
            total += q * step.cost
            if not step.solved:
                total += q * self._cost(by_report[step.report], step.world)
        return total


def _normalised(worlds: Iterable[tuple[int, float]]) -> tuple[tuple[int, float], ...]:
    items = sorted(worlds)
    total = sum(p for _, p in items)
    return tuple((w, round(p / total, 12)) for w, p in items)


def _heaviest(pairs: list[tuple[float, Node]]) -> Node | None:
    """The node where probability times the gap between its bounds is largest (an unbounded gap first)."""
    if not pairs:
        return None
    return max(pairs, key=lambda pn: (pn[1].upper == INF, pn[0] * (pn[1].upper - pn[1].lower)
                                      if pn[1].upper < INF else pn[0]))[1]


__all__ = ["Node", "Option", "Search", "Stats"]
