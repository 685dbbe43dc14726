"""``diagkg report``: tables, plots and one self-contained HTML page, from the store.

Tables (Markdown, LaTeX, CSV) by scenario, system, fault category, system ×
category, overall, the per-scenario difficulty table and paired comparisons;
PNG plots (:mod:`diagkg.evaluation.plots`, each stating its n): success vs
cost relative to the ideal repair, success per scenario (and per system),
relative cost distributions, convergence per batch and execution-cluster
dendrograms (adaptive campaigns); the qualitative analysis (cluster labels,
rubric distributions, gold match levels and their plot:
:mod:`diagkg.evaluation.rubric_report`); ``report.html``
(:mod:`diagkg.evaluation.html_report`) shows it all with a leaderboard, the
SPARQL behind every number and a step viewer of every trajectory. Campaigns
that repeat an (assistant, scenario, seed) are pooled only when asked
(:func:`pooling`).
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

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
        out.append(Table("paired", "Paired comparisons (same scenario and seed, each pair once): cost(a) − cost(b) "
                         "over the pairs both succeed in (a session that failed stopped short of its repair), with "
                         "a paired bootstrap interval; McNemar's exact test on success over every pair",
                         ["a", "b", "group", "pairs", "mean cost diff (both succeed)", "lo", "hi", "both succeed",
                          "only a",
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
    """Every plot (:mod:`diagkg.evaluation.plots`; convergence and dendrograms for adaptive campaigns), as PNG."""
    from . import plots as pl

    plt = _figure()
    written: list[Path] = []

    def save(fig: Any, name: str) -> None:
        path = out / name
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    save(pl.success_vs_cost(data), "success-vs-cost.png")
    save(pl.success_per_scenario(data), "success-per-scenario.png")
    if len({f.system for f in data.scenarios.values()}) > 1:
        save(pl.success_per_system(data), "success-per-system.png")
    save(pl.relative_cost_distributions(data), "relative-cost.png")

    conv = convergence_rows(store, data.campaigns)
    adaptive = [r for r in conv if r[5]]
    if adaptive:
        fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
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
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)
        ax.set_title(f"Convergence per batch\nn = {len(adaptive)} finished batches", fontsize=10)
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
        ax.set_title(f"Execution clusters: {a}, scenario {n} (n = {k} executions)", fontsize=10)
        path = out / f"dendrogram-{a}-{n}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


def _scenario_iri(store: KnowledgeStore, number: int) -> str:
    from ..env.scenarios import ScenarioCatalog

    return ScenarioCatalog(store).entry(number).iri


# ---------------------------------------------------------------------------
# the whole report
# ---------------------------------------------------------------------------

def pooling(store: KnowledgeStore, ids: Sequence[str], pool: bool) -> list[str]:
    """What reporting these campaigns together pools, said in a note; refused (:class:`InputError`) when two
    of them hold the same (assistant, scenario, seed) and ``pool`` is false: the same session counted twice
    makes intervals and tests look surer than they are."""
    if len(ids) < 2:
        return []
    repeated = mx.repeated_slots(store, ids)
    if not repeated:
        return [f"{len(ids)} campaigns pooled; no (assistant, scenario, seed) appears in more than one."]
    (a, n, seed), where = next(iter(sorted(repeated.items())))
    said = (f"{len(repeated)} (assistant, scenario, seed) slot(s) appear in more than one of the campaigns "
            f"{', '.join(ids)} (e.g. {a} on scenario {n} with seed {seed} in {', '.join(where)})")
    if not pool:
        raise InputError(f"{said}: pooling them counts those sessions twice; report the campaigns one at a time, "
                         "or give --pool to pool them anyway")
    return [f"pooled {len(ids)} campaigns: {said}; each is counted once per campaign in the rates and intervals; "
            "paired comparisons count each (scenario, seed) once."]


def gone_graphs(store: KnowledgeStore, campaigns: Iterable[cp.Campaign]) -> list[str]:
    """What to say of each of ``campaigns`` whose scenario or system graphs are no longer in the store
    (``diagkg remove``): a report reads them, so the trajectories that ran on them are left out of it."""
    out = []
    for campaign in campaigns:
        gone = [c.graph for c in cp.changed_versions(store, campaign) if not c.now]
        if gone:
            out.append(f"campaign {campaign.id}: {len(gone)} graph(s) it ran on are no longer in the store "
                       f"({', '.join(f'<{g}>' for g in gone[:3])}{', …' if len(gone) > 3 else ''}): the "
                       "trajectories on them are left out of the report; load them again to report them.")
    return out


def unfinished(store: KnowledgeStore, campaigns: Iterable[cp.Campaign]) -> list[str]:
    """What to say of each of ``campaigns`` that has not finished (killed, stopped by its cost limit, or running):
    its assistants may have been compared on different scenarios."""
    from .budget import stops

    out = []
    # a slot whose scenario was removed is not unfinished: its batches name the scenario by the number its graph
    # held, so they are not read back (what was removed is said by :func:`gone_graphs`)
    held = {int(r["number"]) for r in store.select("scenario-index")}
    for campaign in campaigns:
        cfg = campaign.config
        closed = cp.batches(store, campaign)
        open_ = [(a, n) for a in cfg.assistants for n in cfg.scenarios
                 if n in held and not (closed.get((a, n)) and closed[(a, n)][-1]["state"] in cp.FINAL_STATES)]
        if not open_:
            continue
        behind = sorted({a for a, _ in open_}, key=cfg.assistants.index)
        why = stops(store, campaign)
        then = (f"it was stopped ({why[-1]['reason']}): resume it with a larger limit to finish it" if why else
                f"resume it with `diagkg evaluate --resume {campaign.id}` to finish it")
        out.append(f"campaign {campaign.id} is unfinished: {len(open_)} of {len(cfg.assistants) * len(cfg.scenarios)} "
                   f"assistant × scenario slots have not run all their sessions ({', '.join(behind)}), so its "
                   f"assistants may be compared on different scenarios; {then}.")
    return out


def write_report(store: KnowledgeStore, runs: Sequence[str], out: Path,
                 progress: Callable[[str, int, int], None] | None = None, *, pool: bool = False,
                 notes: list[str] | None = None, rescore: bool = False, figures: Sequence[Path] = (),
                 summary: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write every table (md, tex, csv), plot (png) and ``report.html`` into ``out``; returns the files.
    ``summary`` gets the overall figures of each assistant (the rows of the ``overall`` table, by column).

    ``runs`` are campaign ids or the names given to ``--name`` (every campaign when empty); campaigns that
    repeat a slot are refused unless ``pool`` (:func:`pooling`); what was pooled is appended to ``notes``.
    ``rescore`` works every figure out from the trajectories (not the slot tallies), the figures measured
    against the optimum (:mod:`diagkg.evaluation.regret`) included. ``figures``: folders of a user's own
    ``figure-*.rq`` files, each a table too (:func:`~diagkg.evaluation.regret.with_figures`).
    """
    from . import html_report, regret

    queries = regret.with_figures(figures)        # a user's figure files checked before anything is written
    refs = list(runs) or [r["campaign"][len(cp.CAMPAIGN_BASE):] for r in cp.campaigns(store)]
    if not refs:
        raise InputError("the store holds no campaign; run `diagkg evaluate` first")
    opened = {c.id: c for c in (cp.open_campaign(store, ref) for ref in refs)}     # a clear error for an unknown one
    ids = list(opened)
    gone = gone_graphs(store, opened.values())
    said = pooling(store, ids, pool) + gone + unfinished(store, opened.values())
    if notes is not None:
        notes.extend(said)
    out.mkdir(parents=True, exist_ok=True)
    steps = 4

    def step(i: int, what: str) -> None:
        if progress:
            progress(what, i, steps)

    step(0, "metric queries")
    data = mx.load(store, ids, per_trajectory=rescore)
    if not data.by_scenario:
        raise InputError(" ".join(gone) if gone else f"campaign(s) {', '.join(ids)} hold no trajectory yet")
    step(1, "tables")
    written: list[Path] = []
    from . import rubric_report

    qualitative = rubric_report.load(store, ids)
    ts = tables(store, data) + regret.tables(store, ids, queries, rescore=rescore) + rubric_report.tables(store, qualitative)
    privileged = privileged_assistants(store, ids)
    mark_privileged(ts, privileged)
    if summary is not None:
        overall = next(t for t in ts if t.name == "overall")
        summary.extend(dict(zip(overall.columns, row, strict=True)) for row in overall.rows)
    for t in ts:
        for suffix, render in ((".md", to_markdown), (".tex", to_latex), (".csv", to_csv)):
            path = out / f"{t.name}{suffix}"
            path.write_text(render(t), encoding="utf-8")
            written.append(path)
    step(2, "plots")
    images = plots(store, data, out) + rubric_report.plots(qualitative, out)
    written += images
    step(3, "HTML")
    html = html_report.render(store, data, tables=ts, images=images, notes=said + rubric_report.notes(qualitative),
                              privileged=privileged)
    page = out / "report.html"
    page.write_text(html, encoding="utf-8")
    written.append(page)
    step(4, "done")
    return written
