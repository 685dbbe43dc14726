"""A round the ``llm`` service agent carried out, whose result the model then failed to put
into words, is played: it is stored, and told through ``on_round`` like every round (what
``diagkg run`` prints, what a campaign keeps of a session that crashes later, what the live
server shows). Before, it was stored but never told: ``diagkg run`` printed no round at all,
then ``rounds: 1`` and a cost of 20 min. Against a scripted OpenAI-compatible server on
127.0.0.1, on the torch written in the tests."""

from __future__ import annotations

from diagkg.llm.records import FailureCause
from diagkg.runs.runner import run_session

from ..support.llm_server import LLMServer, Reply, choose

FLAT = "TORCH.1"      # the torch's battery is flat


def test_a_round_whose_wording_failed_is_told(torch_copy):
    told = []
    with LLMServer() as server:
        server.script.then(choose(kind="action", action="measure_voltage", targets=["bat"]),      # the assistant
                           Reply.call("perform", action="measure_voltage", targets=["bat"]),        # the mapping
                           Reply(status=500), Reply(status=500))                                    # the wording
        config = {"base_url": server.base_url, "model": "stub-model", "timeout": 2, "retries": 1, "backoff": 0.01}
        result = run_session(FLAT, "llm", config=config, store=torch_copy, service="llm",
                             on_round=lambda entry: told.append(entry.to_dict()))
    assert result.end == "llm_truncation" and result.llm_cause is FailureCause.SERVER_ERROR
    assert result.rounds == 1 and result.cost == 20.0
    assert [(r["intention"], r["cost"]) for r in told] == [("measure_voltage bat", 20.0)]
    assert [r["intention"] for r in told] == [r["intention"] for r in result.record.rounds]
