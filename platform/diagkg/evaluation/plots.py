"""The report's plots (matplotlib, Agg), each stating the sessions it rests on.

* ``success-vs-cost.png`` — per assistant, the success rate (Wilson 95 %) against
  the cost relative to each scenario's ideal repair (mean over sessions of cost /
  ideal cost, percentile-bootstrap 95 %), so that scenarios whose ideal costs
  differ tenfold weigh alike;
* ``success-per-scenario.png`` — per scenario, each assistant's success rate
  with its interval and n (at most :data:`MAX_SCENARIOS` scenarios: those that
  separate the assistants most, said in the title);
* ``success-per-system.png`` — the same per system, when a campaign spans more
  than one;
* ``relative-cost.png`` — per assistant, the distribution of cost / ideal cost
  over its sessions (scenarios without an ideal repair left out, and counted).

Legends sit beside the axes, never on the data; no text is placed where another
can be (:func:`text_overlaps` finds any two labels that overlap, for the tests).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from . import metrics as mx
from .tables import _figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

MAX_SCENARIOS = 40


def relative_costs(data: mx.CampaignData) -> tuple[dict[str, list[float]], int]:
    """Per assistant, each session's cost / its scenario's ideal-repair cost; and how many sessions were
    left out (a scenario without an ideal repair, or one that costs nothing)."""
    out: dict[str, list[float]] = {a: [] for a in data.assistants}
    left_out = 0
    for s in data.sessions:
        facts = data.scenarios.get(int(s["scenario"]))
        ideal = facts.ideal_cost if facts is not None else None
        if not ideal:
            left_out += 1
            continue
        out.setdefault(s["assistant"], []).append(float(s["cost"]) / ideal)
    return out, left_out


def _n_sessions(ms: Sequence[mx.GroupMetrics]) -> str:
    per = sorted({m.n for m in ms})
    each = f"{per[0]} per assistant" if len(per) == 1 else "per assistant " + "/".join(str(m.n) for m in ms)
    return f"n = {sum(m.n for m in ms)} sessions ({each})"


def _legend_beside(ax: Any) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)


def success_vs_cost(data: mx.CampaignData) -> Figure:
    plt = _figure()
    overall = mx.overall(data)
    rel, left_out = relative_costs(data)
    fig: Figure
    fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
    for m in overall:
        lo, hi = m.success_ci
        values = rel.get(m.assistant, [])
        x = sum(values) / len(values) if values else math.nan
        xlo, xhi = mx.bootstrap_mean(values) if values else (math.nan, math.nan)
        ax.errorbar(x, m.success_rate, yerr=[[max(0.0, m.success_rate - lo)], [max(0.0, hi - m.success_rate)]],
                    xerr=[[max(0.0, x - xlo)], [max(0.0, xhi - x)]] if values else None, fmt="o", capsize=4,
                    label=f"{m.assistant} (n = {m.n})")
    ax.set_xlabel("cost / ideal-repair cost (mean over sessions, 1 = ideal)")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    extra = f"; {left_out} without an ideal repair left out of the cost" if left_out else ""
    ax.set_title(f"Success vs relative cost (95 % intervals)\n{_n_sessions(overall)}{extra}", fontsize=10)
    _legend_beside(ax)
    return fig


def _grouped_bars(data: mx.CampaignData, ms: list[mx.GroupMetrics], groups: list[str], labels: dict[str, str],
                  title: str) -> Figure:
    """Horizontal bars, one row of bars per group (top to bottom), one bar per assistant."""
    plt = _figure()
    k = max(1, len(data.assistants))
    height = 0.8 / k
    fig: Figure
    fig, ax = plt.subplots(figsize=(7.5, max(2.6, 0.55 + 0.22 * k * len(groups) + 0.9)), layout="constrained")
    per = {(m.group, m.assistant): m for m in ms}
    for i, a in enumerate(data.assistants):
        ys = [len(groups) - 1 - j - (i - (k - 1) / 2) * height for j in range(len(groups))]
        present = [(y, per[(g, a)]) for y, g in zip(ys, groups, strict=True) if (g, a) in per]
        if not present:
            continue
        rates = [m.success_rate for _, m in present]
        err = [[max(0.0, m.success_rate - m.success_ci[0]) for _, m in present],
               [max(0.0, m.success_ci[1] - m.success_rate) for _, m in present]]
        ax.barh([y for y, _ in present], rates, height * 0.95, xerr=err, capsize=2, label=a)
    ax.set_yticks([len(groups) - 1 - j for j in range(len(groups))], [labels[g] for g in groups], fontsize=8)
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("success rate (Wilson 95 %)")
    ax.set_title(title, fontsize=10)
    _legend_beside(ax)
    return fig


def _n_label(ms: list[mx.GroupMetrics], group: str, assistants: Sequence[str]) -> str:
    ns = [m.n for m in ms if m.group == group]
    per = sorted(set(ns))
    return f"n = {per[0]}" if len(per) == 1 and len(ns) == len(assistants) else "n = " + "/".join(map(str, ns))


def success_per_scenario(data: mx.CampaignData) -> Figure:
    ms = mx.by_scenario(data)
    _, table = mx.difficulty(data)           # largest spread between assistants first
    order = [str(row[0]) for row in table]
    shown = order[:MAX_SCENARIOS]
    shown.sort(key=int)
    labels = {g: f"{data.scenarios[int(g)].id} ({_n_label(ms, g, data.assistants)})" for g in shown}
    more = (f"; the {MAX_SCENARIOS} of {len(order)} scenarios that separate the assistants most"
            if len(order) > MAX_SCENARIOS else "")
    total = sum(m.n for m in ms if m.group in shown)
    return _grouped_bars(data, ms, shown, labels,
                         f"Success per scenario\nn = {total} sessions over {len(shown)} scenarios{more}")


def success_per_system(data: mx.CampaignData) -> Figure:
    ms = mx.by_system(data)
    groups = sorted({m.group for m in ms})
    labels = {g: f"{g} ({_n_label(ms, g, data.assistants)})" for g in groups}
    return _grouped_bars(data, ms, groups, labels,
                         f"Success per system\nn = {sum(m.n for m in ms)} sessions over {len(groups)} systems")


def relative_cost_distributions(data: mx.CampaignData) -> Figure:
    plt = _figure()
    rel, left_out = relative_costs(data)
    names = [a for a in data.assistants if rel.get(a)]
    fig: Figure
    fig, ax = plt.subplots(figsize=(7.5, max(2.8, 1.6 + 0.45 * len(names))), layout="constrained")
    if names:                 # one box a row (top to bottom in the assistants' order): labels never crowd
        ax.boxplot([rel[a] for a in reversed(names)], orientation="horizontal",
                   tick_labels=[f"{a} (n = {len(rel[a])})" for a in reversed(names)])
        ax.axvline(1.0, color="#888888", linewidth=0.8, linestyle="--")
        ax.tick_params(axis="y", labelsize=8)
    ax.set_xlabel("cost / ideal-repair cost (1 = ideal)")
    extra = f"; {left_out} without an ideal repair left out" if left_out else ""
    ax.set_title(f"Cost relative to each scenario's ideal repair\nn = {sum(len(v) for v in rel.values())} "
                 f"sessions{extra}", fontsize=10)
    return fig


def text_overlaps(fig: Figure) -> list[tuple[str, str]]:
    """Every two visible, non-empty texts of ``fig`` (titles, axis labels, tick labels, legend entries,
    annotations) whose drawn boxes overlap."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()     # type: ignore[attr-defined]
    boxes = []
    for text in fig.findobj(match=Text):
        if not isinstance(text, Text) or not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.width > 0 and box.height > 0:
            boxes.append((text.get_text(), box))
    out = []
    for i, (ta, a) in enumerate(boxes):
        for tb, b in boxes[i + 1:]:
            if a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1:
                out.append((ta, tb))
    return out
