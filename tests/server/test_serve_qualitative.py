"""The served campaign pages show the qualitative results: a real ``diagkg serve``
process on an on-disk store holding the torch (written in the tests, not
shipped), after an adaptive campaign and a judge run against the scripted
OpenAI-compatible server. ``/api/campaigns/{id}/tables`` carries the cluster
labels, the rubric counts and the gold match counts (the same tables as
``diagkg report``, computed by hand here), and ``/api/campaigns/{id}/report.html``
shows them, escaped, with ``rubric.png``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import httpx
import pytest

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, qualitative
from diagkg.evaluation.qualitative import Dimension
from diagkg.kg.store import KnowledgeStore

from ..support.llm_campaign import ANSWER, judge
from ..support.llm_server import LLMServer
from ..support.serving import start_server, stop_server

LABEL = "Replace <b>first</b> & look later"      # markup in a judge's label stays text on the page


@pytest.fixture(scope="module")
def judged(tmp_path_factory, torch_quads):  # noqa: F811
    """An on-disk store after an adaptive campaign and its judge run; (store path, campaign id, summary)."""
    path = tmp_path_factory.mktemp("serve-qualitative") / "store"
    store = KnowledgeStore(path)
    store.add_quads(torch_quads)
    campaign = cp.create(store, cp.CampaignConfig(assistants=("random-search",), scenarios=(9102,),
                                                  protocol="adaptive", batch_size=4, max_batches=2, name="served-q"))
    execution.run(store, campaign)
    with LLMServer() as server:
        server.script.content = json.dumps(dict(ANSWER, label=LABEL))
        summary = qualitative.run(store, campaign, judge(server))
    store.close()
    assert summary.labels >= 1 and summary.ratings >= 1 and summary.ratings_failed == 0
    return path, campaign.id, summary


@pytest.fixture(scope="module")
def server(judged):
    proc, base = start_server(Path(judged[0]))
    try:
        yield base
    finally:
        stop_server(proc)


def test_the_tables_carry_labels_rubric_and_gold(judged, server):
    _, cid, summary = judged
    r = httpx.get(f"{server}/api/campaigns/{cid}/tables", timeout=120)
    assert r.status_code == 200, r.text
    tables = {t["name"]: t for t in r.json()}
    assert {"overall", "cluster-labels", "rubric-by-assistant", "rubric-by-system", "rubric-by-category",
            "gold-match"} <= set(tables)
    labels = tables["cluster-labels"]["rows"]
    assert len(labels) == summary.labels and {row[6] for row in labels} == {LABEL}
    assert {row[1] for row in labels} == {"random-search"} and {row[2] for row in labels} == {9102}
    n = summary.ratings       # every rating answered ANSWER: high everywhere but efficiency (medium), correct
    by_assistant = {row[1]: row[2:] for row in tables["rubric-by-assistant"]["rows"]}
    assert by_assistant == {d.value: ([0, n, 0, n] if d is Dimension.EFFICIENCY else [n, 0, 0, n])
                            for d in Dimension}
    gold = tables["gold-match"]
    assert gold["columns"] == ["assistant", "correct", "partial", "incorrect", "different_strategy",
                               "rating failed", "trajectories"]
    assert gold["rows"] == [["random-search", n, 0, 0, 0, 0, n]]
    assert {row[0] for row in tables["rubric-by-system"]["rows"]} == {"torch"}


def test_the_report_page_shows_them_escaped_with_the_rubric_plot(judged, server):
    _, cid, summary = judged
    r = httpx.get(f"{server}/api/campaigns/{cid}/report.html", timeout=120)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    assert "Behaviour clusters with the judge&#39;s strategy labels" in page or \
        "Behaviour clusters with the judge's strategy labels" in page
    assert html.escape(LABEL) in page and LABEL not in page                 # autoescaped, never markup
    n = summary.ratings
    assert f"<td>random-search</td><td>{n}</td><td>0</td><td>0</td><td>0</td><td>0</td><td>{n}</td>" in page
    assert f"<td>random-search</td><td>efficiency</td><td>0</td><td>{n}</td><td>0</td><td>{n}</td>" in page
    assert 'alt="rubric" src="data:image/png;base64,' in page
    assert "qualitative rubric was not run" not in page


def test_the_markdown_files_carry_labels_as_text(judged, tmp_path):
    """``diagkg report``'s Markdown tables: the judge's label escaped (no HTML, no emphasis)."""
    from diagkg.evaluation import report

    path, cid, _ = judged
    store = KnowledgeStore.open_for_reading(path)
    report.write_report(store, [cid], tmp_path)
    md = (tmp_path / "cluster-labels.md").read_text()
    assert "Replace &lt;b&gt;first&lt;/b&gt; &amp; look later" in md and "<b>" not in md
