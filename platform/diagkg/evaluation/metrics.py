"""Campaign metrics: counts and sums from SPARQL (``queries/metrics-*.rq``),
interval arithmetic here.

* success rate = (success + success_no_hypothesis) / sessions not truncated,
  with a Wilson 95 % interval; a crashed session is a failure; the rate of
  success with a diagnosis (a correct hypothesis: ``success`` only) apart;
* false removals per session (healthy parts replaced or named);
* mean cost with a percentile-bootstrap 95 % interval; cost relative to the
  scenario's ideal repair (total cost / total ideal-repair cost);
* rounds, actions, hypotheses and healthy parts replaced per session;
  correct-hypothesis rate (correct / hypotheses) with a Wilson interval;
* LLM truncations and crashes counted apart;
* paired comparison of two assistants on the same scenarios and seeds:
  paired bootstrap of the mean cost difference, McNemar's exact test on success.

Everything is recomputed from the store at any time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import pyoxigraph as ox

from .campaign import CAMPAIGN_BASE

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

Z95 = 1.959963984540054
BOOTSTRAP = 2000


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n ((0, 1) when n = 0)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at k = 0 or k = n the interval ends at the proportion itself (no rounding error past it)
    return (0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half))


def bootstrap_mean(values: Sequence[float], resamples: int = BOOTSTRAP, seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap 95 % interval of a mean (the value itself for fewer than two values)."""
    import numpy as np

    if not values:
        return (math.nan, math.nan)
    arr = np.asarray(values, dtype=float)
    if len(arr) < 2 or float(arr.min()) == float(arr.max()):
        return (float(arr.mean()), float(arr.mean()))
    arr.sort()          # the same interval whatever order the values come in (tallies, trajectories)
    rng = np.random.default_rng(seed)
    values_, counts = np.unique(arr, return_counts=True)
    if len(values_) * 4 <= len(arr):
        # few distinct values (costs are sums of catalogue costs): a resample is a multinomial draw of how many
        # times each value is picked -- the same bootstrap distribution in O(distinct) instead of O(n) a resample
        picks = rng.multinomial(len(arr), counts / len(arr), size=resamples)
        means = picks @ values_ / len(arr)
    else:
        means = arr[rng.integers(0, len(arr), size=(resamples, len(arr)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return (float(lo), float(hi))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (scipy's binomial test)."""
    if only_a + only_b == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(only_a, only_a + only_b, 0.5).pvalue)


@dataclass
class GroupMetrics:
    """Metrics of one assistant on one group of scenarios (a scenario, a system, a category, all)."""

    assistant: str
    group: str
    total: int = 0
    truncated: int = 0
    crashed: int = 0
    n: int = 0
    successes: int = 0
    cost: float = 0.0
    ideal: float = 0.0         # the ideal-repair cost summed over the sessions (scenarios with one)
    cost_with_ideal: float = 0.0
    rounds: int = 0
    actions: int = 0
    hypotheses: int = 0
    correct: int = 0
    healthy: int = 0
    diagnosed: int = 0
    false_removals: int = 0
    cost_lo: float = math.nan
    cost_hi: float = math.nan

    def add(self, row: dict[str, Any], ideal: float | None) -> None:
        self.total += int(row["total"])
        self.truncated += int(row["truncated"])
        self.crashed += int(row["crashed"])
        self.n += int(row["n"])
        self.successes += int(row["successes"])
        self.cost += float(row["cost"])
        self.rounds += int(row["rounds"])
        self.actions += int(row["actions"])
        self.hypotheses += int(row["hypotheses"])
        self.correct += int(row["correct"])
        self.healthy += int(row["healthy"])
        self.diagnosed += int(row.get("diagnosed") or 0)
        self.false_removals += int(row.get("falseRemovals") or 0)
        if ideal:
            self.ideal += ideal * int(row["n"])
            self.cost_with_ideal += float(row["cost"])

    def _per(self, x: float) -> float:
        return x / self.n if self.n else math.nan

    @property
    def success_rate(self) -> float:
        return self._per(self.successes)

    @property
    def success_ci(self) -> tuple[float, float]:
        return wilson(self.successes, self.n)

    @property
    def mean_cost(self) -> float:
        return self._per(self.cost)

    @property
    def relative_cost(self) -> float:
        return self.cost_with_ideal / self.ideal if self.ideal else math.nan

    @property
    def correct_rate(self) -> float:
        return self.correct / self.hypotheses if self.hypotheses else math.nan

    @property
    def correct_ci(self) -> tuple[float, float]:
        return wilson(self.correct, self.hypotheses)

    def row(self) -> dict[str, Any]:
        lo, hi = self.success_ci
        clo, chi = self.correct_ci
        return {"assistant": self.assistant, "group": self.group, "sessions": self.total, "n": self.n,
                "llm_truncation": self.truncated, "crashed": self.crashed, "successes": self.successes,
                "success_rate": self.success_rate, "success_lo": lo, "success_hi": hi,
                "mean_cost": self.mean_cost, "cost_lo": self.cost_lo, "cost_hi": self.cost_hi,
                "relative_cost": self.relative_cost, "rounds": self._per(self.rounds),
                "actions": self._per(self.actions), "hypotheses": self._per(self.hypotheses),
                "correct_rate": self.correct_rate, "correct_lo": clo, "correct_hi": chi,
                "healthy_replaced": self._per(self.healthy),
                "diagnosed_rate": self._per(self.diagnosed), "repaired_rate": self._per(self.successes - self.diagnosed),
                "false_removals": self._per(self.false_removals)}


@dataclass(frozen=True)
class ScenarioFacts:
    number: int
    id: str
    system: str
    categories: tuple[str, ...]
    ideal_cost: float | None


@dataclass
class CampaignData:
    """What the metric queries return for a set of campaigns."""

    by_scenario: list[dict[str, Any]]
    sessions: list[dict[str, Any]]
    scenarios: dict[int, ScenarioFacts]
    assistants: list[str]
    campaigns: list[str]
    tallied: frozenset[str] = frozenset()    # the campaigns read from their slot tallies
    # language-model money per assistant of each tallied campaign whose tally entries keep it (the rest: none)
    money: dict[str, dict[str, float]] = field(default_factory=dict)
    # the metrics of each grouping, once worked out (see by_scenario and the rest; the data is not changed after)
    groupings: dict[str, list[GroupMetrics]] = field(default_factory=dict, repr=False, compare=False)


def _campaign_node(ref: str) -> ox.NamedNode:
    return ox.NamedNode(ref if ref.startswith(CAMPAIGN_BASE) else CAMPAIGN_BASE + ref)


def load(store: KnowledgeStore, campaign_ids: Iterable[str], per_trajectory: bool = False) -> CampaignData:
    """Run the metric queries for these campaigns: over their slot tallies (``queries/tally-*.rq``), or over
    every trajectory (``queries/metrics-*.rq``) for a campaign without tallies or when ``per_trajectory``."""
    from .tally import keep_figures, scenario_row, unpack_all, up_to_date

    by_scenario: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    scenarios: dict[int, ScenarioFacts] = {}
    tallied: set[str] = set()
    money: dict[str, dict[str, float]] = {}
    ids = list(campaign_ids)
    for cid in ids:
        node = _campaign_node(cid)
        rows = [] if per_trajectory else store.select("tally-sessions", {"campaign": node})
        slots = [(r, unpack_all(r["sessions"])) for r in rows]
        if slots and up_to_date(store, node, sum(len(entries) for _, entries in slots)):
            tallied.add(cid)
            spent: dict[str, float] = {}
            kept = True
            for r, entries in slots:
                # the slot's counts from its sessions (the tally keeps the same counts beside them)
                by_scenario.append(scenario_row(r["campaign"], r["assistant"], r["scenario"], entries))
                sessions += [{"campaign": r["campaign"], "assistant": r["assistant"], "scenario": r["scenario"],
                              "seed": e.seed, "cost": e.cost, "ok": int(e.ok)}
                             for e in entries if not e.truncated]
                spent[r["assistant"]] = spent.get(r["assistant"], 0.0) + sum(e.money for e in entries)
                kept = kept and keep_figures(entries)
            if kept:
                money[cid] = spent
        else:
            by_scenario += store.select("metrics-by-scenario", {"campaign": node})
            sessions += store.select("metrics-sessions", {"campaign": node})
        for r in store.select("metrics-scenarios", {"campaign": node}):
            cats = tuple(sorted(c.strip() for c in (r["categories"] or "").split(",") if c.strip()))
            scenarios[int(r["scenario"])] = ScenarioFacts(int(r["scenario"]), r["id"], r["system"], cats,
                                                          float(r["idealCost"]) if r["idealCost"] is not None else None)
    assistants = list(dict.fromkeys(r["assistant"] for r in by_scenario))
    return CampaignData(by_scenario, sessions, scenarios, assistants, ids, frozenset(tallied), money)


def group_metrics(data: CampaignData, key: Callable[[ScenarioFacts], Iterable[str]]) -> list[GroupMetrics]:
    """Metrics per assistant and group; ``key`` names the groups a scenario counts in (one or several)."""
    groups: dict[tuple[str, str], GroupMetrics] = {}
    for r in data.by_scenario:
        facts = data.scenarios.get(int(r["scenario"]))
        if facts is None:
            continue
        for g in key(facts):
            m = groups.setdefault((r["assistant"], g), GroupMetrics(r["assistant"], g))
            m.add(r, facts.ideal_cost)
    costs: dict[tuple[str, str], list[float]] = {}
    for s in data.sessions:
        facts = data.scenarios.get(int(s["scenario"]))
        if facts is None:
            continue
        for g in key(facts):
            costs.setdefault((s["assistant"], g), []).append(float(s["cost"]))
    for k, m in groups.items():
        m.cost_lo, m.cost_hi = bootstrap_mean(costs.get(k, []))
    return sorted(groups.values(), key=lambda m: (_sort_key(m.group), m.assistant))


def _sort_key(group: str) -> tuple[int, Any]:
    return (0, int(group)) if group.isdigit() else (1, group)


def _grouped(data: CampaignData, name: str, key: Callable[[ScenarioFacts], Iterable[str]]) -> list[GroupMetrics]:
    """A grouping's metrics, worked out once per :class:`CampaignData` (a report asks for some several times;
    each group's bootstrap is the costly part)."""
    if name not in data.groupings:
        data.groupings[name] = group_metrics(data, key)
    return data.groupings[name]


def by_scenario(data: CampaignData) -> list[GroupMetrics]:
    return _grouped(data, "scenario", lambda f: [str(f.number)])


def by_system(data: CampaignData) -> list[GroupMetrics]:
    return _grouped(data, "system", lambda f: [f.system])


def by_category(data: CampaignData) -> list[GroupMetrics]:
    """A scenario counts in every category it has."""
    return _grouped(data, "category", lambda f: list(f.categories) or ["(none)"])


def by_system_category(data: CampaignData) -> list[GroupMetrics]:
    return _grouped(data, "system × category", lambda f: [f"{f.system} × {c}" for c in (f.categories or ("(none)",))])


def overall(data: CampaignData) -> list[GroupMetrics]:
    return _grouped(data, "all", lambda f: ["all"])


@dataclass(frozen=True)
class Paired:
    a: str
    b: str
    group: str
    pairs: int
    mean_diff: float          # mean of cost(a) − cost(b) over the pairs both succeed in
    diff_lo: float
    diff_hi: float
    both: int
    only_a: int
    only_b: int
    neither: int
    p_mcnemar: float

    def row(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "group": self.group, "pairs": self.pairs, "mean_cost_diff": self.mean_diff,
                "diff_lo": self.diff_lo, "diff_hi": self.diff_hi, "both_succeed": self.both,
                "only_a_succeeds": self.only_a, "only_b_succeeds": self.only_b, "neither": self.neither,
                "mcnemar_p": self.p_mcnemar}


def paired(store: KnowledgeStore, data: CampaignData, a: str, b: str) -> list[Paired]:
    """Paired comparison of assistants ``a`` and ``b`` overall and per system (pairs: same scenario and seed; the
    cost difference over the pairs both succeed in, success over every pair;
    when several campaigns hold the same scenario and seed, the pair of the first is taken: a session run
    again is not a new pair)."""
    rows: list[dict[str, Any]] = []
    for cid in data.campaigns:
        if cid in data.tallied:
            rows += _pairs(data, cid, a, b)
        else:
            rows += store.select("metrics-paired", {"campaign": _campaign_node(cid), "a": ox.Literal(a),
                                                    "b": ox.Literal(b)})
    seen: set[tuple[int, int]] = set()
    distinct = []
    for r in rows:
        key = (int(r["scenario"]), int(r["seed"]))
        if key not in seen:
            seen.add(key)
            distinct.append(r)
    rows = distinct
    groups: dict[str, list[dict[str, Any]]] = {"all": rows}
    for r in rows:
        facts = data.scenarios.get(int(r["scenario"]))
        if facts is not None:
            groups.setdefault(facts.system, []).append(r)
    out = []
    for g, rs in groups.items():
        # over the pairs both succeed in: a session that failed stopped short of the repair it owed (one that
        # gives up at once costs nothing), so beside one that succeeded it read as the cheaper
        diffs = [float(r["costA"]) - float(r["costB"]) for r in rs if r["okA"] and r["okB"]]
        lo, hi = bootstrap_mean(diffs)
        both = sum(1 for r in rs if r["okA"] and r["okB"])
        only_a = sum(1 for r in rs if r["okA"] and not r["okB"])
        only_b = sum(1 for r in rs if r["okB"] and not r["okA"])
        out.append(Paired(a, b, g, len(rs), sum(diffs) / len(diffs) if diffs else math.nan, lo, hi, both, only_a,
                          only_b, len(rs) - both - only_a - only_b, mcnemar_exact(only_a, only_b)))
    return sorted(out, key=lambda p: (p.group != "all", p.group))


def repeated_slots(store: KnowledgeStore, campaign_ids: Iterable[str]) -> dict[tuple[str, int, int], list[str]]:
    """The (assistant, scenario, seed) slots that more than one of these campaigns holds, with those campaigns."""
    from .campaign import open_campaign, recorded

    where: dict[tuple[str, int, int], list[str]] = {}
    for cid in campaign_ids:
        for slot in recorded(store, open_campaign(store, cid)):
            where.setdefault(slot, []).append(cid)
    return {slot: cids for slot, cids in where.items() if len(cids) > 1}


def _pairs(data: CampaignData, cid: str, a: str, b: str) -> list[dict[str, Any]]:
    """metrics-paired.rq's rows from a tallied campaign's sessions (truncations are already left out, so a
    scenario and seed with both assistants is a pair)."""
    iri = _campaign_node(cid).value
    mine: dict[str, dict[tuple[int, int], dict[str, Any]]] = {a: {}, b: {}}
    for s in data.sessions:
        if s["campaign"] == iri and s["assistant"] in mine:
            mine[s["assistant"]][(int(s["scenario"]), int(s["seed"]))] = s
    return [{"campaign": iri, "a": a, "b": b, "scenario": k[0], "seed": k[1], "costA": sa["cost"],
             "costB": mine[b][k]["cost"], "okA": sa["ok"], "okB": mine[b][k]["ok"]}
            for k, sa in sorted(mine[a].items()) if k in mine[b]]


def difficulty(data: CampaignData) -> tuple[list[str], list[list[Any]]]:
    """Per scenario, every assistant's success rate, and the spread between the best and the worst
    (the scenarios that separate assistants come first)."""
    rates: dict[int, dict[str, float]] = {}
    for m in by_scenario(data):
        rates.setdefault(int(m.group), {})[m.assistant] = m.success_rate
    columns = ["scenario", "id", "system", *data.assistants, "spread"]
    table: list[list[Any]] = []
    for n, per in rates.items():
        facts = data.scenarios[n]
        values = [per.get(a, math.nan) for a in data.assistants]
        known = [v for v in values if not math.isnan(v)]
        spread = max(known) - min(known) if known else math.nan
        table.append([n, facts.id, facts.system, *values, spread])
    table.sort(key=lambda row: (-(float(row[-1]) if not math.isnan(float(row[-1])) else -1.0), int(row[0])))
    return columns, table
