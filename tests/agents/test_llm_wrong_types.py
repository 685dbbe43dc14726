"""The ``llm`` assistant given a field of the wrong type: a number, a string or an object where
the ``choose`` schema asks for a list of targets or components, or a boolean where an action
needs a number. Each is a choice that cannot be carried out: it goes back to the model with
the reason (``target-count``, ``missing-value``), recorded on the call, as the ``llm-grounded``
assistant reads them. Before, a number crashed the session with a raw TypeError
(``'int' object is not iterable``), a string's letters were read as part names, and ``true``
was taken as the value 1. Against a scripted OpenAI-compatible server on 127.0.0.1, on the
torch written in the tests."""

from __future__ import annotations

from dataclasses import replace

from diagkg.agents.llm_assistant import check_choice
from diagkg.llm import prompting
from diagkg.llm.records import recorded_calls
from diagkg.runs.runner import run_session

from ..support.llm_server import LLMServer, choose

FLAT = "TORCH.1"      # the torch's battery is flat


def test_a_field_of_the_wrong_type_goes_back_to_the_model(torch_copy):
    with LLMServer() as server:
        server.script.then(
            choose(kind="hypothesise", components=5),
            choose(kind="action", action="measure_voltage", targets=7),
            choose(kind="hypothesise", components="bat"),                  # a string, not a list
            choose(kind="action", action="measure_voltage", targets={"part": "bat"}),
            choose(kind="hypothesise", components=["bat"]))
        config = {"base_url": server.base_url, "model": "stub-model", "timeout": 2, "retries": 0, "corrections": 4}
        result = run_session(FLAT, "llm", config=config, store=torch_copy)
        corrections = [c["messages"][-1]["content"] for c in server.script.calls[1:]]
    calls = recorded_calls(torch_copy, result.trajectory)
    assert [c.rejected for c in calls] == ["target-count"] * 4 + [""]
    assert "target-count" in corrections[0] and "measure_voltage takes 1 target(s), and 0 were given" in corrections[1]
    first = result.record.rounds[0]
    assert first["kind"] == "hypothesis" and first["verdict"] == "correct"
    assert result.end == "success" and result.rounds == 1


def test_a_boolean_is_no_value(torch_copy):
    k = prompting.knowledge(torch_copy, "https://example.org/torch/torch")
    # the torch has no potentiometer: the action made to apply to any component, to reach the value's check
    k.actions["adjust_potentiometer"] = replace(k.actions["adjust_potentiometer"], types=[])
    choice = {"kind": "action", "action": "adjust_potentiometer", "targets": ["bulb"]}
    assert check_choice(k, dict(choice, value=True))[1]["code"] == "missing-value"
    assert check_choice(k, dict(choice, value="high"))[1]["code"] == "missing-value"
    ok, problem = check_choice(k, dict(choice, value=0.5))
    assert problem is None and ok is not None and ok.value == 0.5
