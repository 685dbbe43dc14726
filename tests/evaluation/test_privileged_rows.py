"""A campaign with an assistant in a process of its own, run by worker processes; the report marks
the rows of assistants that were briefed with the answer (dk:privileged)."""

from __future__ import annotations

import sys

from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution
from diagkg.evaluation.campaign import CampaignConfig
from diagkg.evaluation.report import privileged_assistants, write_report
from diagkg.evaluation.tables import PRIVILEGED_MARK

from ..support.programs import SEARCHER
from ..support.torch import torch_memory_store


def test_an_exec_program_in_a_campaign_with_workers_and_the_report_marks_the_oracle(tmp_path, monkeypatch):
    store = torch_memory_store(tmp_path)
    (tmp_path / "s.py").write_text(SEARCHER)
    (tmp_path / "py").symlink_to(sys.executable)
    monkeypatch.chdir(tmp_path)          # a short command: the report's plots label it in full
    exec_name = "exec:./py s.py log search"
    campaign = cp.create(store, CampaignConfig(assistants=("oracle", exec_name), scenarios=(9101, 9102), runs=1,
                                               name="exec"))
    summary = execution.run(store, campaign, workers=2)
    assert summary.progress.stored == 4 and summary.progress.ends.get("crashed", 0) == 0
    slots = cp.recorded(store, campaign)
    assert {a for a, _, _ in slots} == {"oracle", exec_name}
    assert all(rec.end.startswith("success") for rec in slots.values())
    assert privileged_assistants(store, [campaign.id]) == {"oracle"}
    write_report(store, [campaign.id], tmp_path / "report")
    overall = (tmp_path / "report" / "overall.csv").read_text().splitlines()
    rows = {line.split(",")[1]: line for line in overall[1:]}
    assert f"oracle{PRIVILEGED_MARK}" in rows and not any(PRIVILEGED_MARK in a for a in rows if a != f"oracle{PRIVILEGED_MARK}")
    wide = (tmp_path / "report" / "side-by-side-system.csv").read_text().splitlines()[0]
    assert f"oracle{PRIVILEGED_MARK} success" in wide and f"{exec_name} success" in wide
