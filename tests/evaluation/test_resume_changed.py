"""A resumed campaign notices a changed system (issue 25, item 5): on the torch of
tests/support/torch.py, a campaign is run, the torch's bulb is changed by ``diagkg update``, and
``evaluate --resume`` refuses (exit 2, naming the graph and both versions) unless told
``--allow-changed``."""

from __future__ import annotations

import json

from diagkg.kg import graphs
from diagkg.kg.store import KnowledgeStore

from ..support.cli import run_cli
from ..support.serving import torch_store

SYSTEM = graphs.system("torch").value
DOUBLE_BULB = ("PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
               f"DELETE {{ GRAPH <{SYSTEM}> {{ <https://example.org/torch/bulb> dk:resistance ?r }} }}\n"
               f"INSERT {{ GRAPH <{SYSTEM}> {{ <https://example.org/torch/bulb> dk:resistance 120 }} }}\n"
               f"WHERE {{ GRAPH <{SYSTEM}> {{ <https://example.org/torch/bulb> dk:resistance ?r }} }}")


def test_resume_refuses_a_changed_system_unless_allowed(tmp_path):
    path = torch_store(tmp_path)
    store = ["--store", str(path)]
    r = run_cli(*store, "evaluate", "--assistant", "oracle", "--scenarios", "TORCH.1", "--format", "json")
    assert r.returncode == 0, r.stderr
    campaign = json.loads(r.stdout)["campaign"]
    recorded = KnowledgeStore.open_for_reading(path).version_of(graphs.system("torch"))
    assert run_cli(*store, "evaluate", "--resume", campaign, "--format", "json").returncode == 0   # unchanged

    r = run_cli(*store, "update", DOUBLE_BULB)
    assert r.returncode == 0, r.stderr
    now = KnowledgeStore.open_for_reading(path).version_of(graphs.system("torch"))
    assert now != recorded

    r = run_cli(*store, "evaluate", "--resume", campaign, "--format", "json")
    assert r.returncode == 2, r.stderr
    assert f"<{SYSTEM}>" in r.stderr and recorded[:16] in r.stderr and now[:16] in r.stderr
    assert "scenario/TORCH.1" not in r.stderr           # the scenario itself did not change
    r = run_cli(*store, "evaluate", "--resume", campaign, "--allow-changed", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert "--allow-changed" in r.stderr and json.loads(r.stdout)["campaign"] == campaign
