"""``diagkg report``: tables, plots and one self-contained HTML page, from the store.

Tables (Markdown, LaTeX, CSV) by scenario, system, fault category, system ×
category, overall, the per-scenario difficulty table and paired comparisons;
PNG plots (matplotlib, Agg): success vs cost per assistant, per-system
success with intervals, cost distributions, convergence per batch and
execution-cluster dendrograms (adaptive campaigns); the qualitative analysis
(cluster labels, rubric distributions, gold match levels and their plot:
:mod:`diagkg.evaluation.rubric_report`); ``report.html`` shows it all with the
images inlined.
"""

from __future__ import annotations

import base64
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..errors import InputError
from . import campaign as cp
from . import metrics as mx
from .tables import Table, _figure, _fmt, mark_privileged, to_csv, to_latex, to_markdown

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore

METRIC_COLUMNS = [("sessions", "sessions"), ("n", "n"), ("success_rate", "success"), ("success_lo", "lo"),
                  ("success_hi", "hi"), ("diagnosed_rate", "diagnosed"), ("repaired_rate", "no diagnosis"),
                  ("mean_cost", "mean cost"), ("cost_lo", "cost lo"), ("cost_hi", "cost hi"),
                  ("relative_cost", "cost / ideal"), ("rounds", "rounds"), ("actions", "actions"),
                  ("hypotheses", "hypotheses"), ("correct_rate", "correct hyp."), ("healthy_replaced", "healthy repl."),
                  ("false_removals", "false removals"),
                  ("llm_truncation", "truncated"), ("crashed", "crashed")]


def metric_table(name: str, title: str, group_label: str, ms: Sequence[mx.GroupMetrics]) -> Table:
    rows = []
    for m in ms:
        r = m.row()
        rows.append([r["group"], r["assistant"], *(r[k] for k, _ in METRIC_COLUMNS)])
    return Table(name, title, [group_label, "assistant", *(label for _, label in METRIC_COLUMNS)], rows)


def side_by_side(name: str, title: str, group_label: str, ms: Sequence[mx.GroupMetrics],
                 assistants: Sequence[str]) -> Table:
    """One row per group, the assistants side by side: success rate [Wilson interval] and mean cost."""
    per = {(m.group, m.assistant): m for m in ms}
    groups = list(dict.fromkeys(m.group for m in ms))
    rows: list[list[Any]] = []
    for g in groups:
        row: list[Any] = [g]
        for a in assistants:
            m = per.get((g, a))
            if m is None:
                row += ["", ""]
            else:
                lo, hi = m.success_ci
                row += [f"{_fmt(m.success_rate)} [{_fmt(lo)}, {_fmt(hi)}]", _fmt(m.mean_cost)]
        rows.append(row)
    columns = [group_label] + [f"{a} {what}" for a in assistants for what in ("success", "cost")]
    return Table(name, title, columns, rows)


def tables(store: KnowledgeStore, data: mx.CampaignData) -> list[Table]:
    systems, categories = mx.by_system(data), mx.by_category(data)
    out = [side_by_side("side-by-side-system", "Assistants side by side, by system: success [Wilson 95 %] and mean "
                        "cost (minutes)", "system", [*mx.overall(data), *systems], data.assistants),
           side_by_side("side-by-side-category", "Assistants side by side, by fault category", "category",
                        categories, data.assistants),
           metric_table("overall", "All scenarios", "scenarios", mx.overall(data)),
           metric_table("by-system", "By system", "system", systems),
           metric_table("by-category", "By fault category (a scenario counts in each of its categories)",
                        "category", categories),
           metric_table("by-system-category", "By system × fault category", "system × category",
                        mx.by_system_category(data)),
           metric_table("by-scenario", "By scenario", "scenario", mx.by_scenario(data))]
    columns, rows = mx.difficulty(data)
    out.append(Table("difficulty", "Scenario difficulty: success rate of every assistant (largest spread first)",
                     columns, rows))
    paired_rows = []
    for a, b in combinations(data.assistants, 2):
        paired_rows += [list(p.row().values()) for p in mx.paired(store, data, a, b)]
    if paired_rows:
        out.append(Table("paired", "Paired comparisons (same scenario and seed): cost(a) − cost(b) with a paired "
                         "bootstrap interval, McNemar's exact test on success",
                         ["a", "b", "group", "pairs", "mean cost diff", "lo", "hi", "both succeed", "only a",
                          "only b", "neither", "McNemar p"], paired_rows))
    conv = convergence_rows(store, data.campaigns)
    if conv:
        out.append(Table("convergence", "Convergence per batch", ["campaign", "assistant", "scenario", "batch",
                                                                  "state", "reason", "execution ARI", "intent ARI",
                                                                  "noise floor", "notes"], conv))
    return out


def privileged_assistants(store: KnowledgeStore, campaign_ids: Sequence[str]) -> set[str]:
    """The assistants briefed with the answer in some session of these campaigns (their rows are marked)."""
    import pyoxigraph as ox

    return {r["assistant"] for cid in campaign_ids
            for r in store.select("campaign-privileged", {"campaign": ox.NamedNode(cp.CAMPAIGN_BASE + cid)})}


def convergence_rows(store: KnowledgeStore, campaign_ids: Sequence[str]) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for cid in campaign_ids:
        c = cp.Campaign(cid, cp.open_campaign(store, cid).config)
        for (assistant, number), history in sorted(cp.batches(store, c).items()):
            for h in history:
                rows.append([cid, assistant, number, int(h["batch"]), h["state"], h["reason"] or "",
                             h["executionAri"], h["intentAri"], h["noiseFloor"], h["note"] or ""])
    return rows


# ---------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------

def plots(store: KnowledgeStore, data: mx.CampaignData, out: Path) -> list[Path]:
    plt = _figure()
    written: list[Path] = []

    def save(fig: Any, name: str) -> None:
        path = out / name
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    overall = mx.overall(data)
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for m in overall:
        lo, hi = m.success_ci
        # an interval's end can sit a rounding error on the wrong side of its value (0 or 1 successes)
        ax.errorbar(m.mean_cost, m.success_rate, yerr=[[max(0.0, m.success_rate - lo)], [max(0.0, hi - m.success_rate)]],
                    xerr=[[max(0.0, m.mean_cost - m.cost_lo)], [max(0.0, m.cost_hi - m.mean_cost)]], fmt="o", capsize=4,
                    label=m.assistant)
        ax.annotate(m.assistant, (m.mean_cost, m.success_rate), textcoords="offset points", xytext=(6, 6))
    ax.set_xlabel("mean cost per session (minutes)")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Success vs cost (95 % intervals)")
    save(fig, "success-vs-cost.png")

    systems = mx.by_system(data)
    names = sorted({m.group for m in systems})
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(names) * max(1, len(data.assistants)) / 2), 4.5))
    width = 0.8 / max(1, len(data.assistants))
    for i, a in enumerate(data.assistants):
        ms = {m.group: m for m in systems if m.assistant == a}
        xs = [j + i * width for j in range(len(names))]
        ys = [ms[n].success_rate if n in ms else 0.0 for n in names]
        err = [[max(0.0, ms[n].success_rate - ms[n].success_ci[0]) if n in ms else 0 for n in names],
               [max(0.0, ms[n].success_ci[1] - ms[n].success_rate) if n in ms else 0 for n in names]]
        ax.bar(xs, ys, width, yerr=err, capsize=3, label=a)
    ax.set_xticks([j + width * (len(data.assistants) - 1) / 2 for j in range(len(names))], names, rotation=20)
    ax.set_ylabel("success rate (Wilson 95 %)")
    ax.set_ylim(0, 1.05)
    ax.legend()
    ax.set_title("Success per system")
    save(fig, "success-per-system.png")

    fig, ax = plt.subplots(figsize=(6, 4.5))
    costs = [[float(s["cost"]) for s in data.sessions if s["assistant"] == a] for a in data.assistants]
    if any(costs):
        ax.boxplot([c or [0.0] for c in costs], tick_labels=data.assistants)
    ax.set_ylabel("cost per session (minutes)")
    ax.set_title("Cost distributions")
    save(fig, "cost-distributions.png")

    conv = convergence_rows(store, data.campaigns)
    adaptive = [r for r in conv if r[5]]
    if adaptive:
        fig, ax = plt.subplots(figsize=(6, 4.5))
        per_batch: dict[tuple[str, int], list[int]] = {}
        for r in adaptive:
            per_batch.setdefault((r[1], r[3]), []).append(1 if r[4] in cp.FINAL_STATES else 0)
        for a in data.assistants:
            pts = sorted((b, sum(v)) for (aa, b), v in per_batch.items() if aa == a)
            if pts:
                cum, total = [], 0
                for _, v in pts:
                    total += v
                    cum.append(total)
                ax.plot([b + 1 for b, _ in pts], cum, marker="o", label=a)
        ax.set_xlabel("batch")
        ax.set_ylabel("scenarios settled (converged or capped)")
        ax.legend()
        ax.set_title("Convergence per batch")
        save(fig, "convergence.png")
        written += dendrograms(store, data, out, plt)
    return written


def dendrograms(store: KnowledgeStore, data: mx.CampaignData, out: Path, plt: Any, limit: int = 6) -> list[Path]:
    """Execution-cluster dendrograms (normalised Levenshtein, average linkage) of the largest adaptive groups."""
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:        # the adaptive protocol's dependency; without it there is no execution clustering
        return []
    from scipy.cluster.hierarchy import dendrogram, linkage
    from scipy.spatial.distance import squareform

    from .protocol import behaviours

    written = []
    groups: list[tuple[int, str, str, int, list[tuple[str, ...]]]] = []
    for cid in data.campaigns:
        c = cp.open_campaign(store, cid)
        for a in c.config.assistants:
            for n in c.config.scenarios:
                facts = data.scenarios.get(n)
                if facts is None:
                    continue
                scen_iri = _scenario_iri(store, n)
                seqs = [act for per in behaviours(store, c, a, scen_iri).values() for act, _ in per]
                if len(seqs) >= 3:
                    groups.append((len(seqs), cid, a, n, seqs))
    for _, _cid, a, n, seqs in sorted(groups, reverse=True)[:limit]:
        import numpy as np

        k = len(seqs)
        d = np.zeros((k, k))
        for i in range(k):
            for j in range(i + 1, k):
                d[i, j] = d[j, i] = Levenshtein.normalized_distance(list(seqs[i]), list(seqs[j]))
        fig, ax = plt.subplots(figsize=(6, 3.5))
        if float(d.max()) == 0.0:
            ax.text(0.5, 0.5, f"{k} identical executions", ha="center")
            ax.set_axis_off()
        else:
            dendrogram(linkage(squareform(d, checks=False), method="average"), ax=ax, no_labels=True)
            ax.set_ylabel("normalised edit distance")
        ax.set_title(f"Execution clusters: {a}, scenario {n}")
        path = out / f"dendrogram-{a}-{n}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def _scenario_iri(store: KnowledgeStore, number: int) -> str:
    from ..env.scenarios import ScenarioCatalog

    return ScenarioCatalog(store).resolve(number).iri


# ---------------------------------------------------------------------------
# the whole report
# ---------------------------------------------------------------------------

def write_report(store: KnowledgeStore, runs: Sequence[str], out: Path,
                 progress: Callable[[str, int, int], None] | None = None) -> list[Path]:
    """Write every table (md, tex, csv), plot (png) and ``report.html`` into ``out``; returns the files."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    ids = list(runs) or [r["campaign"][len(cp.CAMPAIGN_BASE):] for r in cp.campaigns(store)]
    if not ids:
        raise InputError("the store holds no campaign; run `diagkg evaluate` first")
    for cid in ids:
        cp.open_campaign(store, cid)       # a clear error for an unknown id
    out.mkdir(parents=True, exist_ok=True)
    steps = 4

    def step(i: int, what: str) -> None:
        if progress:
            progress(what, i, steps)

    step(0, "metric queries")
    data = mx.load(store, ids)
    if not data.by_scenario:
        raise InputError(f"campaign(s) {', '.join(ids)} hold no trajectory yet")
    step(1, "tables")
    written: list[Path] = []
    from . import rubric_report

    qualitative = rubric_report.load(store, ids)
    ts = tables(store, data) + rubric_report.tables(store, qualitative)
    mark_privileged(ts, privileged_assistants(store, ids))
    for t in ts:
        for suffix, render in ((".md", to_markdown), (".tex", to_latex), (".csv", to_csv)):
            path = out / f"{t.name}{suffix}"
            path.write_text(render(t), encoding="utf-8")
            written.append(path)
    step(2, "plots")
    images = plots(store, data, out) + rubric_report.plots(qualitative, out)
    written += images
    step(3, "HTML")
    env = Environment(loader=PackageLoader("diagkg", "templates"), autoescape=select_autoescape(["html", "j2"]))
    html = env.get_template("evaluation-report.html.j2").render(
        campaigns=ids, assistants=data.assistants, notes=rubric_report.notes(qualitative),
        tables=[(t, [[_fmt(v) for v in r] for r in t.rows]) for t in ts],
        images=[(p.stem, base64.b64encode(p.read_bytes()).decode("ascii")) for p in images])
    page = out / "report.html"
    page.write_text(html, encoding="utf-8")
    written.append(page)
    step(4, "done")
    return written
