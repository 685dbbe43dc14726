"""Sessions driven from outside, one move at a time (diagkg.runs.driven, under ``diagkg mcp``), on the torch."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from diagkg.env.contract import ProtocolError, ProtocolFault
from diagkg.errors import SessionError
from diagkg.kg.vocab import DK
from diagkg.runs.driven import DrivenSession


@pytest.fixture()
def torch(torch_copy):
    return torch_copy


def session_facts(store, iri: str, predicate) -> list[str]:
    return [q.object.value for q in store.raw.quads_for_pattern(ox.NamedNode(iri + "#session"), predicate.node, None, None)]


def test_never_briefed_with_the_answer_whatever_the_allow_list(torch, monkeypatch):
    monkeypatch.setenv("DIAGKG_PRIVILEGED_ASSISTANTS", "*")
    session = DrivenSession(torch, "TORCH.1", "mcp:anyone/1")
    brief = session.start()
    assert brief.scenario is None and brief.session is None
    with pytest.raises(ProtocolError) as bad:
        session.play({"kind": "hypothesis", "parts": ["battery_that_is_not_there"]})
    assert bad.value.fault is ProtocolFault.UNKNOWN_PART and session.step().round == 0     # no round played
    step = session.play({"kind": "hypothesis", "parts": ["bat"], "candidates": [["bat"], ["sw"]]})
    assert (step.end, step.outcome["verdict"], step.rounds_left) == ("success", "correct", 0)
    assert session_facts(torch, step.trajectory, DK.privileged) == ["false"]
    with pytest.raises(SessionError, match="over"):
        session.play({"kind": "stop"})


def test_a_silent_client_ends_in_surrender_with_a_late_reply(torch):
    session = DrivenSession(torch, "TORCH.2", "mcp:silent/0", idle_seconds=0.3)
    session.start()
    session.play({"kind": "act", "action": "observe_component", "targets": ["bulb"]})
    assert session.wait(10)                     # it ends by itself once the client is silent for 0.3 s
    assert session.result is not None and session.result.end == "surrender"
    assert session_facts(torch, session.result.trajectory, DK.protocolFault) == [str(DK.FaultLateReply)]
