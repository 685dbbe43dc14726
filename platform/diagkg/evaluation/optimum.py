"""The optimal policy of a system: the anchor costs are measured against (``diagkg optimum``).

Given the system's stored scenarios as the prior (each weighs the same; the
policy knows which scenarios there are, which no other assistant does) and the
catalogue's actions with their costs, the optimal policy is the one that
minimises the expected cost (minutes) of ending a session in success under the
one cost rule (:mod:`diagkg.env.verification`). *Success* is either end the
oracle may reach: a correct hypothesis (``success``) or an action that makes the
system work again (``success_no_hypothesis``) — the oracle takes the cheaper of
its ideal repair and naming every faulty part, so the same ends count here.

Every outcome is read from the real session machinery on shadow sessions
(:mod:`~diagkg.evaluation.optimum_worlds`), and the policy is found by AO* over
belief sets with the perfect-information cost as an admissible heuristic
(:mod:`~diagkg.evaluation.optimum_search`). Within the time limit it is exact;
where the limit stops the search, the search's best options are completed where it
did not go by a greedy policy grown from its frontier and by hypotheses
(``Search.settle``), and a proven
lower bound and the cost of the policy stored (an upper bound) are reported.

What the policy conditions on at the start is what a session shows in typed form:
the lights seen (``Briefing.visible``, as the session derives them), the lights the
report states as data (the scenario's ``dk:statedSymptom``, ``Briefing.stated``: every
assistant is told them), the parts removed and the budget — not the wording of the
reported symptoms.

The policy is stored as RDF in the graph ``optimum/{key}`` (ontology/optimum.ttl;
:mod:`~diagkg.evaluation.optimum_rdf`), read back by ``diagkg report`` (regret)
and played by the ``optimal`` assistant (:mod:`diagkg.agents.optimal`).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..env.actions import Action, Hypothesis
from ..env.scenarios import Scenario, ScenarioCatalog
from ..errors import InputError
from .optimum_result import Optimum, ScenarioFigures
from .optimum_search import Search
from .optimum_worlds import Worlds

if TYPE_CHECKING:  # pragma: no cover
    import pyoxigraph as ox

    from ..kg.store import KnowledgeStore

DEFAULT_TIME_LIMIT = 600.0          # seconds, the whole command
Notify = Callable[[str], None]
Progress = Callable[[str, int, int], None]      # (stage, done, total): the search's seconds against its limit


def scenarios_of(store: KnowledgeStore, key: str, selection: Sequence[str] | None = None) -> list[Scenario]:
    """The stored scenarios of system ``key`` (those ``selection`` names, in the syntax of
    ``diagkg evaluate --scenarios``; every one of the system by default)."""
    from .campaign import select_scenarios

    catalog = ScenarioCatalog(store)
    if selection:
        chosen = [catalog.resolve(n) for n in dict.fromkeys(select_scenarios(store, selection))]
        other = [s for s in chosen if s.key != key]
        if other:
            raise InputError(f"--scenarios: {', '.join(s.id for s in other)} "
                             f"{'is' if len(other) == 1 else 'are'} not on system {key!r}")
    else:
        chosen = [catalog.resolve(e.number) for e in map(catalog.entry, catalog.numbers()) if e.key == key]
    if not chosen:
        keys = sorted({catalog.entry(n).key for n in catalog.numbers()})
        raise InputError(f"no stored scenario on a system {key!r} (systems with scenarios: {', '.join(keys) or 'none'})")
    return chosen


def oracle_cost(store: KnowledgeStore, scenario: Scenario, seed: int) -> float | None:
    """What the oracle's plan costs in a session of ``scenario`` (None when it does not end in success)."""
    from ..agents.baselines import Oracle
    from ..env.service import Session

    with Session(scenario, store) as session:
        session.reset(seed=seed)
        repair: list[Action | Hypothesis] = [Action(s.action, s.targets, s.value) for s in scenario.repair]
        repair.append(Hypothesis(scenario.faulty))
        for step in Oracle.cheapest(session, repair):
            _, _, terminated, truncated, _ = session.step(step)
            if terminated or truncated:
                break
        return session.total_cost if (session.end or "").startswith("success") else None


def solve(store: KnowledgeStore, key: str, *, scenarios: Sequence[Scenario] | None = None,
          time_limit: float = DEFAULT_TIME_LIMIT, seed: int = 0, actions: Sequence[str] | None = None,
          repeats: int = 2, started: float | None = None, notify: Notify | None = None,
          progress: Progress | None = None) -> Optimum:
    """Work out the optimal policy of system ``key`` over ``scenarios`` (every stored one of the system by
    default) within ``time_limit`` seconds from ``started`` (``time.monotonic()``; now by default).
    ``actions`` restricts the catalogue's actions (every one by default); ``repeats`` is how many
    reports in a row may only reweigh the worlds (a loose connection seen on). ``progress`` is told, about
    once a second while the search runs, its lower bound and the seconds spent against ``time_limit``."""
    from ..env.workspace import graph_holding
    from ..kg import graphs
    from ..kg.vocab import DK
    from .optimum_rdf import policy_triples

    started = time.monotonic() if started is None else started
    deadline = started + time_limit
    reserve = min(max(2.0, 0.15 * time_limit), 90.0)      # to complete the policy, work out the oracle, write
    chosen = list(scenarios) if scenarios is not None else scenarios_of(store, key)
    worlds = Worlds(store, chosen, seed=seed, actions=actions)
    try:
        search = Search(worlds, repeats=repeats)
        say = notify or (lambda _: None)
        say(f"{len(chosen)} scenario(s), {len(worlds.base)} actions on their targets, {len(search.roots)} start(s); "
            f"perfect-information bound {search.lower:.1f} min")
        # half the time to the search; if it is not done by then, a greedy policy grows from its frontier
        # for a quarter (its expansions raise the lower bound too), and the search goes on from there
        halfway = started + (time_limit - reserve) / 2

        def tick() -> None:
            if progress is not None:
                progress(f"searching (lower bound {search.lower:.1f} min, {search.stats.expanded} expanded)",
                         min(int(time.monotonic() - started), int(time_limit)), int(time_limit))

        search.tick = tick
        tick()
        search.run(halfway)
        if not search.solved:
            grown = search.settle(deadline - reserve, grow_until=halfway + (time_limit - reserve) / 4)
            say(f"half time: lower bound {search.lower:.1f} min, a complete policy of {grown:.1f} min; searching on")
            search.run(deadline - reserve)
        tick()
        if not search.solved:
            say(f"time limit: lower bound {search.lower:.1f} min after {search.stats.expanded} expansions; "
                "settling a complete policy")
        # where the search stopped, hypotheses alone complete the policy (nothing expanded: quick), then a greedy
        # policy grows from its frontier until a third of the reserve is spent, kept where it costs less
        search.settle(deadline - reserve / 2, grow_until=deadline - reserve * 2 / 3)
        costs = search.scenario_costs()
        figures = []
        for n, scenario in enumerate(chosen):
            oracle = oracle_cost(store, scenario, seed) if time.monotonic() < deadline - 1 else None
            figures.append(ScenarioFigures(scenario.number, scenario.id, scenario.iri, costs.get(n, math.inf),
                                           worlds.bound(worlds.root_world(n)), oracle))
        system_iri = chosen[0].system_iri
        held = graph_holding(store, system_iri, str(DK.System)) or graphs.system(key)
        # the upper bound is what the stored policy costs, scenario by scenario (the search's own figure, recomputed)
        upper = sum(f.expected for f in figures) / len(figures)
        exact = search.solved and upper - search.lower <= 1e-6 * max(1.0, search.lower)
        result = Optimum(key, system_iri, store.version_of(held), min(search.lower, upper), upper, exact, figures,
                         time.monotonic() - started, time_limit, seed, search.stats.expanded, search.stats.nodes,
                         worlds.steps_taken, len(worlds.base), len(search.roots))
        result.triples = policy_triples(result, search)
    finally:
        worlds.close()       # the shadow sessions' working memories go back to the pool
    return result


def store_optimum(store: KnowledgeStore, optimum: Optimum) -> ox.NamedNode:
    """Write the optimum (policy and figures) into the graph ``optimum/{key}``, replacing what was there."""
    from ..kg import graphs

    graph = graphs.named("optimum", optimum.system)
    store.replace_graph(graph, optimum.triples)
    return graph


def stored_optimum(store: Any, system_iri: str) -> dict[str, Any] | None:
    """The stored optimum's summary of a system (``optimum-summary.rq``), or None."""
    import pyoxigraph as ox

    rows = store.select("optimum-summary", {"system": ox.NamedNode(system_iri)})
    return rows[0] if rows else None


__all__ = ["DEFAULT_TIME_LIMIT", "Optimum", "ScenarioFigures", "oracle_cost", "scenarios_of", "solve",
           "store_optimum", "stored_optimum"]
