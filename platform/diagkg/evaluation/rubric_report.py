"""The qualitative part of ``diagkg report``: the behaviour clusters with their
strategy labels, the rubric's level distributions per dimension and assistant
(overall, by system, by fault category), the gold match levels, and a PNG of
the distributions — all read from the campaigns' graphs
(``queries/qualitative-labels.rq``, ``queries/qualitative-ratings.rq``).
When no campaign holds a rating, the report says the rubric was not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from . import campaign as cp
from .qualitative import Dimension, Level, Match
from .tables import Table

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

NOT_RUN = ("The qualitative rubric was not run for these campaigns (no ratings in the store): configure a language "
           "model and run `diagkg qualitative CAMPAIGN`.")


@dataclass(frozen=True)
class Rating:
    """One trajectory's latest successful rubric rating (or its failure, when none succeeded)."""

    campaign: str
    trajectory: str
    assistant: str
    scenario: int
    match: Match | None
    levels: dict[Dimension, Level]

    @property
    def failed(self) -> bool:
        return self.match is None


@dataclass
class RubricData:
    ratings: list[Rating] = field(default_factory=list)
    labels: list[dict[str, Any]] = field(default_factory=list)
    systems: dict[int, str] = field(default_factory=dict)
    categories: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def assistants(self) -> list[str]:
        return sorted({r.assistant for r in self.ratings})


def load(store: KnowledgeStore, campaign_ids: Iterable[str]) -> RubricData:
    """The ratings and labels of these campaigns, with each rated scenario's system and categories."""
    data = RubricData()
    for cid in campaign_ids:
        campaign = cp.open_campaign(store, cid)
        per: dict[str, dict[str, Any]] = {}
        for r in store.select("qualitative-ratings", {"campaign": campaign.node}):
            entry = per.setdefault(r["trajectory"], {"assistant": r["assistant"], "scenario": int(r["scenario"]),
                                                     "done": {}, "failed": False})
            if r["match"] is not None and r["dimension"] is not None:
                done = entry["done"].setdefault(r["rating"], {"match": Match(r["match"]), "levels": {}})
                done["levels"][Dimension(r["dimension"])] = Level(r["level"])
            elif r["cause"] is not None:
                entry["failed"] = True
        for traj, e in sorted(per.items()):
            if e["done"]:
                best = e["done"][sorted(e["done"])[-1]]
                data.ratings.append(Rating(cid, traj, e["assistant"], e["scenario"], best["match"], best["levels"]))
            elif e["failed"]:
                data.ratings.append(Rating(cid, traj, e["assistant"], e["scenario"], None, {}))
        data.labels += [dict(r, campaign=cid) for r in store.select("qualitative-labels", {"campaign": campaign.node})]
        for r in store.select("metrics-scenarios", {"campaign": campaign.node}):   # as the metric tables name them
            n = int(r["scenario"])
            data.systems[n] = r["system"]
            data.categories[n] = tuple(sorted(c.strip() for c in (r["categories"] or "").split(",") if c.strip())) \
                or ("(none)",)
    return data


def _distribution(ratings: Sequence[Rating], group: Callable[[Rating], Iterable[str]],
                  group_label: str | None) -> list[list[Any]]:
    counts: dict[tuple[str, str, Dimension], dict[Level, int]] = {}
    for r in ratings:
        if r.failed:
            continue
        for g in group(r):
            for d, level in r.levels.items():
                c = counts.setdefault((g, r.assistant, d), {lv: 0 for lv in Level})
                c[level] += 1
    rows = []
    order = list(Dimension)
    for (g, a, d), c in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], order.index(kv[0][2]))):
        head: list[Any] = [a, d.value] if group_label is None else [g, a, d.value]
        rows.append([*head, c[Level.HIGH], c[Level.MEDIUM], c[Level.LOW], sum(c.values())])
    return rows


def tables(store: KnowledgeStore, data: RubricData) -> list[Table]:
    """The qualitative tables (none when there is nothing to show)."""
    out: list[Table] = []
    if data.labels:
        out.append(Table("cluster-labels", "Behaviour clusters with the judge's strategy labels",
                         ["campaign", "assistant", "scenario", "kind", "cluster", "size", "label", "strategy"],
                         [[r["campaign"], r["assistant"], int(r["scenario"]), r["kind"], int(r["index"]), int(r["size"]),
                           r["label"] or "(not labelled)", r["description"] or ""] for r in data.labels]))
    if not data.ratings:
        return out
    levels = ["high", "medium", "low", "rated"]
    out.append(Table("rubric-by-assistant", "Qualitative rubric: levels per dimension and assistant",
                     ["assistant", "dimension", *levels], _distribution(data.ratings, lambda r: [""], None)))
    out.append(Table("rubric-by-system", "Qualitative rubric by system",
                     ["system", "assistant", "dimension", *levels],
                     _distribution(data.ratings, lambda r: [data.systems[r.scenario]], "system")))
    out.append(Table("rubric-by-category", "Qualitative rubric by fault category (a scenario counts in each of its "
                     "categories)", ["category", "assistant", "dimension", *levels],
                     _distribution(data.ratings, lambda r: list(data.categories[r.scenario]), "category")))
    gold_rows = []
    for a in data.assistants:
        mine = [r for r in data.ratings if r.assistant == a]
        gold_rows.append([a, *(sum(1 for r in mine if r.match is m) for m in Match),
                          sum(1 for r in mine if r.failed), len(mine)])
    out.append(Table("gold-match", "Comparison with the gold (injected faults and ideal repair) per assistant",
                     ["assistant", *(m.value for m in Match), "rating failed", "trajectories"], gold_rows))
    return out


def plots(data: RubricData, out: Path) -> list[Path]:
    """``rubric.png``: per dimension, one stacked bar (high / medium / low shares) per assistant."""
    rated = [r for r in data.ratings if not r.failed]
    if not rated:
        return []
    from .tables import _figure

    plt = _figure()
    assistants = sorted({r.assistant for r in rated})
    dims = list(Dimension)
    width = 0.8 / len(assistants)
    colours = {Level.HIGH: "#2e7d32", Level.MEDIUM: "#f9a825", Level.LOW: "#c62828"}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(dims)) + 1.5, 4.0), layout="constrained")
    for i, a in enumerate(assistants):
        mine = [r for r in rated if r.assistant == a]
        xs = [k + (i - (len(assistants) - 1) / 2) * width for k in range(len(dims))]
        bottom = [0.0] * len(dims)
        for level in Level:
            share = [sum(1 for r in mine if r.levels.get(d) is level) / max(1, len(mine)) for d in dims]
            ax.bar(xs, share, width * 0.95, bottom=bottom, color=colours[level], edgecolor="white",
                   label=level.value if i == 0 else None)
            bottom = [b + s for b, s in zip(bottom, share, strict=True)]
        for x in xs:
            ax.text(x, 1.02, a, rotation=90, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(dims)), [d.value.replace("_", "\n") for d in dims], fontsize=8)
    ax.set_ylim(0, 1.45)
    ax.set_ylabel("share of rated trajectories")
    ax.set_title(f"Qualitative rubric per dimension (bars: assistants)\nn = {len(rated)} rated trajectories",
                 fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)
    path = out / "rubric.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def notes(data: RubricData) -> list[str]:
    return [] if data.ratings else [NOT_RUN]
