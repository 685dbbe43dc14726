"""Figures measured against the best possible, per assistant and system (``diagkg report``).

Each figure comes from a query file of ``queries/`` run over the campaigns'
trajectories (the arithmetic — ratios, medians, pass^k — is done here), or, for a
campaign whose slot tallies keep every session's figures (its rounds and minutes
to isolate, its decision times), from the tallies (``tally-figures.rq``: a few
hundred nodes instead of every trajectory; ``diagkg report --rescore`` reads the
trajectories, and gives the same figures):

* ``figure-optimum-cost.rq`` — cost against the system's stored optimal policy
  (:mod:`diagkg.evaluation.optimum`): cost / optimum and the regret in minutes
  per session, each session against the policy's expected cost in its scenario;
* ``figure-oracle-cost.rq`` — cost / oracle, each session against the campaign's
  oracle session on the same scenario and seed (else the oracle cost the stored
  optimum recorded for the scenario);
* ``figure-success-by-seed.rq`` — pass@1 (the mean success rate), pass^k (the
  chance that k runs of a scenario all succeed, C(c, k) / C(n, k) with c
  successes in n runs, averaged over the scenarios) and the flip rate (the share
  of scenarios run more than once whose runs disagree);
* ``figure-isolation.rq`` — isolation accuracy (sessions ending with a correct
  diagnosis), false removals per session, rounds and minutes to isolate, and the
  share isolated to the faulty parts alone (one part per fault) and with at most
  one part more;
* ``figure-decision-times.rq`` — the median and largest decision time;
* ``optimum-summary.rq`` — the stored optimum of each system (or that there is
  none, or that it was worked out for another version of the system).

Any other ``queries/figure-*.rq`` whose only input is ``?campaign`` is shown as a
table of its rows: a figure is added to stored campaigns by adding a query file,
not by running the campaigns again (``diagkg report --rescore`` works every figure
out afresh from the trajectories).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from math import comb
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pyoxigraph as ox

from . import campaign as cp
from .tables import Table
from .tally import Entry, keep_figures, optional_float, unpack_all, up_to_date

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.queries import QueryLibrary
    from ..kg.store import KnowledgeStore

FIGURE_PREFIX = "figure-"
KNOWN = ("figure-optimum-cost", "figure-oracle-cost", "figure-success-by-seed", "figure-isolation",
         "figure-decision-times")
PASS_K = 3          # pass^k with k = 3, or every run when a scenario has fewer


@dataclass
class Row:
    """Every figure of one assistant on one system, summed over the campaigns."""

    assistant: str
    system: str
    sessions: int = 0
    cost: float = 0.0
    succeeded: int = 0
    covered: int = 0                 # sessions that succeeded on a scenario with a stored optimum
    covered_cost: float = 0.0
    optimum: float = 0.0
    oracle_covered: int = 0          # sessions that succeeded whose oracle cost is known
    oracle_covered_cost: float = 0.0
    oracle: float = 0.0
    runs: dict[int, tuple[int, int]] = field(default_factory=dict)    # scenario -> (runs, successes)
    isolated: int = 0
    false_removals: int = 0
    rounds: float = 0.0
    minutes: float = 0.0
    to_one: int = 0
    to_two: int = 0
    decisions: list[float] = field(default_factory=list)

    def per(self, x: float, n: int) -> float:
        return x / n if n else math.nan

    @property
    def mean_cost(self) -> float:
        return self.per(self.cost, self.sessions)

    @property
    def optimum_ratio(self) -> float:
        return self.covered_cost / self.optimum if self.covered and self.optimum > 0 else math.nan

    @property
    def regret(self) -> float:
        return self.per(self.covered_cost - self.optimum, self.covered)

    @property
    def oracle_ratio(self) -> float:
        return self.oracle_covered_cost / self.oracle if self.oracle_covered and self.oracle > 0 else math.nan

    def pass_at_1(self) -> float:
        rates = [c / n for n, c in self.runs.values() if n]
        return sum(rates) / len(rates) if rates else math.nan

    def k(self) -> int:
        """:data:`PASS_K`, or the most runs a scenario has when none has that many."""
        return min([PASS_K, max(n for n, _ in self.runs.values())]) if self.runs else 0

    def pass_hat_k(self) -> float:
        """C(c, k) / C(n, k) averaged over the scenarios, k of :meth:`k` or, for a scenario with fewer runs, its
        runs (one scenario run once — its other sessions truncated — set k to 1 for every scenario: pass@1)."""
        if self.k() <= 0:
            return math.nan
        scored = [(n, c, min(self.k(), n)) for n, c in self.runs.values() if n]
        return sum(comb(c, k) / comb(n, k) for n, c, k in scored) / len(scored) if scored else math.nan

    def flip_rate(self) -> float:
        repeated = [(n, c) for n, c in self.runs.values() if n >= 2]
        return sum(1 for n, c in repeated if 0 < c < n) / len(repeated) if repeated else math.nan


def _node(cid: str) -> ox.NamedNode:
    return ox.NamedNode(cid if cid.startswith(cp.CAMPAIGN_BASE) else cp.CAMPAIGN_BASE + cid)


def _short(system_iri: str) -> str:
    return system_iri.rstrip("/").rsplit("/", 1)[-1]


def load(store: KnowledgeStore, campaign_ids: Sequence[str], rescore: bool = False,
         read: list[str] | None = None) -> dict[tuple[str, str], Row]:
    """Every figure over these campaigns, by (system IRI, assistant): from a campaign's slot tallies
    (``tally-figures.rq``, a few hundred nodes) where they hold every session's figures, else (or with
    ``rescore``) from the figure queries over its trajectories. ``read`` gets the names of the queries used."""
    rows: dict[tuple[str, str], Row] = {}

    def row(r: dict[str, Any]) -> Row:
        key = (r["system"], r["assistant"])
        if key not in rows:
            rows[key] = Row(r["assistant"], r["system"])
        return rows[key]

    for cid in campaign_ids:
        bound = {"campaign": _node(cid)}
        if not rescore:
            slots = [(r, unpack_all(r["sessions"])) for r in store.select("tally-figures", bound)]
            if slots and keep_figures(e for _, entries in slots for e in entries) and \
                    up_to_date(store, bound["campaign"], sum(len(entries) for _, entries in slots)):
                _from_tallies(slots, row)
                if read is not None:
                    read.append("tally-figures")
                continue
        if read is not None:
            read.extend(KNOWN)
        for r in store.select("figure-optimum-cost", bound):
            x = row(r)
            x.sessions += int(r["sessions"])
            x.cost += float(r["cost"])
            x.succeeded += int(r["succeeded"])
            x.covered += int(r["covered"])
            x.covered_cost += float(r["coveredCost"])
            x.optimum += float(r["optimum"])
        for r in store.select("figure-oracle-cost", bound):
            x = row(r)
            x.oracle_covered += int(r["covered"])
            x.oracle_covered_cost += float(r["coveredCost"])
            x.oracle += float(r["oracle"])
        for r in store.select("figure-success-by-seed", bound):
            x = row(r)
            n, c = x.runs.get(int(r["scenario"]), (0, 0))
            x.runs[int(r["scenario"])] = (n + int(r["runs"]), c + int(r["successes"]))
        for r in store.select("figure-isolation", bound):
            x = row(r)
            x.isolated += int(r["isolated"])
            x.false_removals += int(r["falseRemovals"])
            x.rounds += float(r["rounds"])
            x.minutes += float(r["minutes"])
            x.to_one += int(r["toOne"])
            x.to_two += int(r["toTwo"])
        for r in store.select("figure-decision-times", bound):
            row(r).decisions.append(float(r["seconds"]))
    return rows


def _from_tallies(slots: list[tuple[dict[str, Any], list[Entry]]], row: Callable[[dict[str, Any]], Row]) -> None:
    """The figures of one campaign from its slot tallies: what the five figure queries give, summed the same way
    (sessions cut short by a language model's output limit left out, as there; each session against the oracle's
    session on the same scenario and seed, else the oracle cost stored for the scenario)."""
    oracle = {(int(r["scenario"]), e.seed): e.cost for r, entries in slots if r["assistant"] == "oracle"
              for e in entries}
    for r, entries in slots:
        number = int(r["scenario"])
        expected, stored = optional_float(r["expected"]), optional_float(r["stored"])
        kept = [e for e in entries if not e.truncated]
        if not kept and not any(e.decisions for e in entries):
            continue
        x = row(r)
        for e in kept:
            x.sessions += 1
            x.cost += e.cost
            x.succeeded += e.ok
            if expected is not None and e.ok:
                x.covered += 1
                x.covered_cost += e.cost
                x.optimum += expected
            reference = oracle.get((number, e.seed), stored)
            if reference is not None and e.ok:
                x.oracle_covered += 1
                x.oracle_covered_cost += e.cost
                x.oracle += reference
            diagnosed = e.end == "success"
            x.isolated += diagnosed
            x.false_removals += e.false_removals
            if diagnosed:
                x.rounds += e.isolate_rounds or 0
                x.minutes += e.isolate_minutes or 0.0
                x.to_one += e.false_removals == 0
                x.to_two += e.false_removals <= 1
        if kept:
            n, c = x.runs.get(number, (0, 0))
            x.runs[number] = (n + len(kept), c + sum(e.ok for e in kept))
        for e in entries:
            x.decisions.extend(e.decisions or ())


def optimum_table(store: KnowledgeStore, systems: Sequence[str], campaign_ids: Sequence[str] = ()) -> Table:
    """The stored optimum of each system the campaigns ran on, or why there is none to measure against, and which
    of ``campaign_ids`` played another version of it."""
    from ..env.workspace import graph_holding
    from ..kg import graphs
    from ..kg.vocab import DK

    out: list[list[Any]] = []
    for system in systems:
        found = store.select("optimum-summary", {"system": ox.NamedNode(system)})
        key = _short(system)
        if not found:
            out.append([key, None, None, None, None, None, None, None,
                        f"no stored optimum: run diagkg optimum {key}"])
            continue
        r = found[0]
        held = graph_holding(store, system, str(DK.System)) or graphs.system(key)
        note = "" if r["systemVersion"] == store.version_of(held) else \
            f"worked out for another version of the system: run diagkg optimum {key} again"
        note = "; ".join(n for n in (note or _coverage_note(store, system, key), _played_note(store, key, campaign_ids))
                         if n)
        out.append([key, optional_float(r["expectedCost"]), float(r["lower"]), optional_float(r["upper"]),
                    bool(r["exact"]), int(r["scenarios"]), optional_float(r["perfect"]), optional_float(r["oracle"]),
                    note])
    return Table("optimum", "The optimal policy of each system (diagkg optimum): expected cost of ending in success "
                 "over its scenarios as a uniform prior, proven bounds (minutes)",
                 ["system", "optimum", "lower", "upper", "exact", "scenarios", "perfect information", "oracle",
                  "note"], out)


def _played_note(store: KnowledgeStore, key: str, campaign_ids: Sequence[str]) -> str:
    """The campaigns that played a version of the optimal policy other than the one stored now (it was worked out
    again since): their optimal assistant's sessions are that policy's, and may cost less than the optimum shown."""
    from ..kg import graphs

    policy = graphs.named("optimum", key)
    now = store.version_of(policy)
    played = [cid for cid in campaign_ids for r in store.select("campaign-versions", {"campaign": _node(cid)})
              if str(r["graph"]) == policy.value and str(r["hash"]) != now]
    if not played:
        return ""
    return (f"worked out again since {', '.join(played)} played it: the optimal assistant's sessions there are of "
            "the policy then, measured against this one")


def _coverage_note(store: KnowledgeStore, system: str, key: str) -> str:
    """What the optimum's prior lacks of the system's scenarios in the store (loaded after it was worked out:
    sessions on them are not measured against it), and what it holds that the store no longer has."""
    rows = store.select("optimum-coverage", {"system": ox.NamedNode(system)})

    def named(found: list[dict[str, Any]]) -> str:
        ids = [str(r["id"] or str(r["scenario"]).rsplit("/", 1)[-1]) for r in found]     # (a removed one: its IRI's end)
        return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")

    new = [r for r in rows if r["inStore"] and not r["inPrior"]]
    gone = [r for r in rows if r["inPrior"] and not r["inStore"]]
    said = []
    if new:
        said.append(f"its prior lacks {len(new)} scenario(s) of the store ({named(new)}): sessions on them are "
                    "not measured against it")
    if gone:
        said.append(f"its prior holds {len(gone)} scenario(s) no longer in the store ({named(gone)})")
    return "; ".join(said) + (f": run diagkg optimum {key} again" if said else "")


def tables(store: KnowledgeStore, campaign_ids: Sequence[str], queries: QueryLibrary | None = None,
           rescore: bool = False) -> list[Table]:
    """The optimum per system, cost and regret against it, success over seeds, fault isolation, and a table
    for each further ``figure-*.rq`` of ``queries`` (the shipped library by default; see the module's
    documentation)."""
    rows = sorted(load(store, campaign_ids, rescore).values(), key=lambda x: (x.system, x.assistant))
    systems = list(dict.fromkeys(x.system for x in rows))
    anchored, reliable, isolation = [], [], []
    for x in rows:
        key = _short(x.system)
        times = sorted(x.decisions)
        anchored.append([key, x.assistant, x.sessions, x.succeeded, x.covered, x.mean_cost, x.per(x.covered_cost, x.covered),
                         x.per(x.optimum, x.covered), x.optimum_ratio,
                         x.regret, x.per(x.oracle, x.oracle_covered), x.oracle_ratio,
                         statistics.median(times) * 1000 if times else math.nan, times[-1] if times else math.nan])
        reliable.append([key, x.assistant, len(x.runs), x.k(), x.pass_at_1(), x.pass_hat_k(), x.flip_rate()])
        isolation.append([key, x.assistant, x.sessions, x.per(x.isolated, x.sessions), x.per(x.false_removals, x.sessions),
                          x.per(x.rounds, x.isolated), x.per(x.minutes, x.isolated), x.per(x.to_one, x.sessions),
                          x.per(x.to_two, x.sessions)])
    out = [optimum_table(store, systems, campaign_ids),
           Table("regret", "Measured against the best possible: mean cost, the optimum's expected cost in the same "
                 "scenarios, cost / optimum, regret (minutes per session), the oracle, cost / oracle, decision times "
                 "(the optimal assistant knows which scenarios there are, the oracle knows the answer). The optimum is "
                 "the expected cost of ending in success: its figures, and the oracle's, are over the sessions that "
                 "succeeded on a scenario its prior holds (against optimum; a session that failed stopped short of "
                 "the repair it owed, and one that gives up at once costs nothing); mean cost is over every session",
                 ["system", "assistant", "sessions", "succeeded", "against optimum", "mean cost",
                  "mean cost (against optimum)", "optimum", "cost / optimum", "regret", "oracle",
                  "cost / oracle", "median decision ms", "max decision s"], anchored),
           Table("reliability", "Success over seeds: pass@1 (mean success rate), pass^k (all of k runs of a scenario "
                 "succeed), flip rate (scenarios whose runs disagree)",
                 ["system", "assistant", "scenarios", "k", "pass@1", "pass^k", "flip rate"], reliable),
           Table("isolation", "Fault isolation: sessions ending with a correct diagnosis, healthy parts replaced or "
                 "named per session, rounds and minutes to isolate, isolated to the faulty parts alone and with at "
                 "most one part more",
                 ["system", "assistant", "sessions", "isolation accuracy", "false removals", "rounds to isolate",
                  "minutes to isolate", "isolated to 1 part", "isolated to ≤ 2 parts"], isolation)]
    return out + extra_tables(store, campaign_ids, queries)


def extra_tables(store: KnowledgeStore, campaign_ids: Sequence[str], queries: QueryLibrary | None = None) -> list[Table]:
    """A table of rows for each ``figure-*.rq`` of ``queries`` (the shipped library by default) not shown
    above whose only input is ``?campaign``."""
    from ..kg.queries import library

    out = []
    for q in (queries or library()).files():
        if not q.name.startswith(FIGURE_PREFIX) or q.name in KNOWN or q.is_update or q.is_template:
            continue
        if [p.name for p in q.inputs] != ["campaign"]:
            continue
        rows = [r for cid in campaign_ids for r in store.select(q, {"campaign": _node(cid)})]
        columns = q.outputs or (list(rows[0]) if rows else [])
        out.append(Table(q.name, q.summary, columns, [[r.get(c) for c in columns] for r in rows]))
    return out


def with_figures(folders: Sequence[str | Path]) -> QueryLibrary | None:
    """The shipped queries with a user's figure files (``diagkg report --figures DIR``; None without folders):
    each folder must hold a ``figure-*.rq``, and each of those must take ``?campaign`` alone (a figure that
    takes more is refused, naming its file, rather than left out of the report without a word)."""
    from ..errors import InputError, QueryError
    from ..kg.queries import QueryLibrary, library

    if not folders:
        return None
    for folder in map(Path, folders):
        if not folder.is_dir():
            raise InputError(f"--figures {folder}: no such folder")
        if not any(f.name.startswith(FIGURE_PREFIX) and f.suffix == ".rq" for f in folder.iterdir()):
            raise InputError(f"--figures {folder}: no {FIGURE_PREFIX}*.rq file in it")
    try:
        lib = QueryLibrary(extra=folders)
    except QueryError as exc:
        raise QueryError(f"--figures {', '.join(map(str, folders))}: {exc} (a shipped query's name cannot be reused)") \
            from None
    shipped = set(library().names())
    for q in lib.files():
        if q.name.startswith(FIGURE_PREFIX) and q.name not in shipped and [p.name for p in q.inputs] != ["campaign"]:
            given = ", ".join("?" + p.name for p in q.inputs) or "none"
            raise QueryError(f"{q.source}: a figure takes ?campaign alone as its input (in its header: "
                             f"# inputs: / #   ?campaign (iri)); its inputs are: {given}")
    return lib


__all__ = ["FIGURE_PREFIX", "KNOWN", "PASS_K", "Row", "extra_tables", "load", "optimum_table", "tables", "with_figures"]
