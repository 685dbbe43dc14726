"""Settings and readings shared by the tests of LLM campaigns and their judge."""

from __future__ import annotations

import json

import pyoxigraph as ox

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import qualitative
from diagkg.evaluation.qualitative import Dimension
from diagkg.kg.vocab import DK

HYPOTHESISE = json.dumps({"kind": "hypothesise", "components": ["bat"], "instruction": "Replace the battery."})


# 10 completion tokens at 10,000 per million: 0.1 a call; a call is sent only when max_tokens (20) at that
# price (0.2) still fits in what remains
PRICING = {"stub-model": [0.0, 10000.0]}


def llm_config(server) -> dict:
    return {"base_url": server.base_url, "model": "stub-model", "timeout": 5, "retries": 0, "backoff": 0.01,
            "max_tokens": 20, "pricing": PRICING}


def sessions_of(store, campaign) -> dict[int, dict]:
    """Per seed: the session's money, the cost limit it was given, its end."""
    out = {}
    for (_assistant, _number, seed), rec in cp.recorded(store, campaign).items():
        graph = ox.NamedNode(rec.trajectory.replace("/trajectory/", "/graph/trajectory/"))
        quads = store.quads(graph) if store.raw.contains_named_graph(graph) else []
        money = next((float(q.object.value) for q in quads
                      if q.subject.value.endswith("#session") and q.predicate.value == str(DK.moneyCost)), 0.0)
        config = next(json.loads(q.object.value) for q in quads if q.predicate.value == str(DK.assistantConfiguration))
        prior = next((float(q.object.value) for q in quads if q.predicate.value == str(DK.priorMoneyCost)), 0.0)
        out[seed] = {"money": money, "limit": config.get("cost_limit"), "end": rec.end, "prior": prior}
    return out


ANSWER = {  # satisfies both the label and the rubric schema
    "label": "Replace the suspect first", "description": "It names the likely part at once and replaces it.",
    **{d.value: {"level": "high", "rationale": f"{d.value} is fine."} for d in Dimension},
    "efficiency": {"level": "medium", "rationale": "One step too many."},
    "overall": "A short, direct session.", "match": "correct", "explanation": "It replaced the flat battery."}


def judge(server, **extra):
    return qualitative.judge_settings({"llm": {"base_url": server.base_url, "model": "judge-model", "retries": 0,
                                               "backoff": 0.01, "timeout": 5, **extra}})
