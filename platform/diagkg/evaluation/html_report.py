"""``report.html``: one self-contained page a person reads (no external resource, scripts inline).

* a **leaderboard**: per assistant, success with its Wilson 95 % interval, success
  with a diagnosis (a correct hypothesis) apart, mean cost with its bootstrap
  interval, cost relative to the ideal repair, rounds, language-model money;
  beside every number a link to the SPARQL that computed what it rests on (the
  query's text, the campaign it was bound to, and the arithmetic done after it);
* the plots, each stating its n;
* a **step viewer**: any trajectory of the campaigns, every round with what the
  assistant suggested, what the service agent did, what was observed, the
  hypothesis ledger as it stood after the round and the running cost;
* every table of :mod:`diagkg.evaluation.report`, and the queries.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import pyoxigraph as ox

from . import campaign as cp
from . import metrics as mx
from . import steps as st
from .tables import PRIVILEGED_MARK, Table, _fmt

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore


@dataclass(frozen=True)
class Cell:
    """A number of the leaderboard and the queries it was computed from."""

    text: str
    queries: tuple[str, ...]
    how: str = ""


@dataclass(frozen=True)
class QueryUse:
    name: str
    summary: str
    text: str
    bindings: str
    used_for: str


def _pct(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.0%}"


def _interval(lo: float, hi: float, fmt: str = "{:.0%}") -> str:
    if math.isnan(lo) or math.isnan(hi):
        return ""
    return f"[{fmt.format(lo)}, {fmt.format(hi)}]"


def sources(data: mx.CampaignData) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The queries the metrics were read with: per scenario and per session (slot tallies or every trajectory)."""
    per_scenario, per_session = [], []
    for cid in data.campaigns:
        if cid in data.tallied:
            per_scenario.append("tally-sessions")
            per_session.append("tally-sessions")
        else:
            per_scenario.append("metrics-by-scenario")
            per_session.append("metrics-sessions")
    return tuple(dict.fromkeys(per_scenario)), tuple(dict.fromkeys(per_session))


def money_by_assistant(store: KnowledgeStore, data: mx.CampaignData, read: list[str] | None = None) -> dict[str, float]:
    """What each assistant's sessions (and the failed sessions they replaced) spent on language models: from a
    campaign's slot tallies where every session's entry keeps it (read by :func:`metrics.load` with the
    sessions, ``tally-sessions``), else from its trajectories (``campaign-money-by-assistant``); ``read`` gets
    the names of the queries used."""
    out: dict[str, float] = {}
    for cid in data.campaigns:
        if cid in data.money:
            for assistant, spent in data.money[cid].items():
                out[assistant] = out.get(assistant, 0.0) + spent
            if read is not None:
                read.append("tally-sessions")
            continue
        for r in store.select("campaign-money-by-assistant", {"campaign": ox.NamedNode(cp.CAMPAIGN_BASE + cid)}):
            out[r["assistant"]] = out.get(r["assistant"], 0.0) + float(r["money"])
        if read is not None:
            read.append("campaign-money-by-assistant")
    return out


COLUMNS = ("assistant", "n", "success", "diagnosed", "no diagnosis", "mean cost (min)", "cost / ideal", "rounds",
           "LLM money")


def leaderboard(store: KnowledgeStore, data: mx.CampaignData, privileged: set[str]) -> list[list[Cell]]:
    """One row per assistant, best first (success with a diagnosis, then success, then lower cost)."""
    scen, sess = sources(data)
    money_from: list[str] = []
    money = money_by_assistant(store, data, money_from)
    money_queries = tuple(dict.fromkeys(money_from))
    rows = []
    def rank(m: mx.GroupMetrics) -> tuple[float, float, float]:
        if not m.n:
            return (0.0, 0.0, math.inf)
        return (-m.diagnosed / m.n, -m.success_rate, m.mean_cost)

    for m in sorted(mx.overall(data), key=rank):
        lo, hi = m.success_ci
        dlo, dhi = mx.wilson(m.diagnosed, m.n)
        name = m.assistant + (PRIVILEGED_MARK if m.assistant in privileged else "")
        rows.append([
            Cell(name, ("campaign-privileged",) if m.assistant in privileged else (),
                 "briefed with the answer in some session"),
            Cell(f"{m.n} of {m.total}", scen, "sessions summed over the scenarios; n leaves out LLM truncations"),
            Cell(f"{_pct(m.success_rate)} {_interval(lo, hi)}", scen,
                 "Σ successes / Σ n over scenarios; Wilson 95 % interval"),
            Cell(f"{_pct(m.diagnosed / m.n if m.n else math.nan)} {_interval(dlo, dhi)}", scen,
                 "sessions ended by a correct hypothesis / n; Wilson 95 % interval"),
            Cell(_pct((m.successes - m.diagnosed) / m.n if m.n else math.nan), scen,
                 "successes without a diagnosis (the system works again) / n"),
            Cell(f"{_fmt(m.mean_cost)} {_interval(m.cost_lo, m.cost_hi, '{:.1f}')}", scen + sess,
                 "Σ cost / n; percentile bootstrap of the sessions' costs"),
            Cell(_fmt(m.relative_cost), scen + ("metrics-scenarios",),
                 "Σ cost / Σ ideal-repair cost over the sessions of scenarios with one"),
            Cell(_fmt(m.rounds / m.n if m.n else math.nan), scen, "Σ rounds / n"),
            Cell(f"{money.get(m.assistant, 0.0):.4f}", money_queries,
                 "what its sessions (and the failed sessions they replaced) spent on language models"),
        ])
    return rows


def query_uses(names: Sequence[str], campaign_ids: Sequence[str], used_for: dict[str, list[str]]) -> list[QueryUse]:
    """The text of each query named, bound to the campaigns, with what was computed from it."""
    from ..kg.queries import library

    lib = library()
    bindings = ", ".join(f"?campaign = <{cp.CAMPAIGN_BASE}{cid}>" for cid in campaign_ids)
    out = []
    for name in dict.fromkeys(names):
        q = lib.get(name)
        needs = {p.name for p in q.inputs}
        out.append(QueryUse(name, q.summary, q.text, bindings if "campaign" in needs else "(none)",
                            "; ".join(dict.fromkeys(used_for.get(name, [])))))
    return out


def render(store: KnowledgeStore, data: mx.CampaignData, *, tables: list[Table], images: list[Path],
           notes: list[str], privileged: set[str]) -> str:
    """The page (see the module's documentation)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    board = leaderboard(store, data, privileged)
    shown: list[str] = []
    trajectories = [t.to_json() for t in st.load(store, data.campaigns, notes=shown)]
    used = list(dict.fromkeys([q for row in board for cell in row for q in cell.queries] + list(st.QUERIES)
                              + ["tally-examples", "metrics-scenarios"]))
    used_for: dict[str, list[str]] = {q: ["the step viewer's rounds"] for q in st.QUERIES}
    used_for["tally-examples"] = ["the step viewer's trajectories: each slot's example in a campaign of more than "
                                  f"{st.VIEWER_LIMIT} trajectories"]
    used_for["metrics-scenarios"] = ["each scenario's system, categories and ideal-repair cost (tables, plots)"]
    for row in board:
        for column, cell in zip(COLUMNS, row, strict=True):
            for q in cell.queries:
                used_for.setdefault(q, []).append(f"{column}: {cell.how}")
    env = Environment(loader=PackageLoader("diagkg", "templates"), autoescape=select_autoescape(["html", "j2"]))
    sessions = sum(m.n for m in mx.overall(data))
    return env.get_template("evaluation-report.html.j2").render(
        campaigns=data.campaigns, assistants=data.assistants, notes=notes + shown, sessions=sessions,
        scenarios=len(data.scenarios), columns=COLUMNS, board=board,
        tables=[(t, [[_fmt(v) for v in r] for r in t.rows]) for t in tables],
        images=[(p.stem, base64.b64encode(p.read_bytes()).decode("ascii")) for p in images],
        trajectories=trajectories, queries=query_uses(used, data.campaigns, used_for),
        qindex={name: f"Q{i}" for i, name in enumerate(used, 1)})
