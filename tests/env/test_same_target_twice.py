"""An action on two parts that names one twice changes nothing and is refused at no cost, on a system written here (a
dynamo, a lamp and two cables): ``swap_cables(cable, cable)`` cost 40 minutes and counted the cable repaired (a part
left broken then read as repaired: faults left undercounted), ``short_ports`` on one terminal twice cost 20."""

from __future__ import annotations

import diagkg
from diagkg.env.actions import Action
from diagkg.env.outcomes import Refusal
from diagkg.kg.loading import load_documents
from diagkg.kg.rdfio import parse_text
from diagkg.kg.store import KnowledgeStore

from .test_step_cost_types import LAMP, OFF

TWO_CABLES = LAMP.replace(
    ":lamp.n dk:connectedTo :dyn.neg .",
    ":lamp.n dk:connectedTo :ret.p . :ret.n dk:connectedTo :dyn.neg .\n"
    ':ret a dk:Cable ; dcterms:identifier "ret" ; rdfs:label "Return cable" ; dk:partOf :frame ;\n'
    "    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :ret.p, :ret.n .\n"
    ':ret.p a dk:Port ; dk:portName "p" . :ret.n a dk:Port ; dk:portName "n" .')


def test_an_action_naming_one_part_twice_is_refused_at_no_cost():
    assert TWO_CABLES != LAMP
    store = KnowledgeStore.memory()
    load_documents(store, [(parse_text(TWO_CABLES, "dynamo.ttl"), "test:dynamo.ttl"),
                           (parse_text(OFF, "dyn1.ttl"), "test:dyn1.ttl")])
    with diagkg.make("DYN.1", store=store) as session:
        session.reset(seed=0)
        for move in (Action("swap_cables", ("cable", "cable")), Action("short_ports", ("lamp.p", "lamp.p")),
                     Action("short_ports", ("lamp", "lamp"))):
            outcome, cost, terminated, truncated, info = session.step(move)
            assert outcome.refusal is Refusal.NO_EFFECT and cost == 0.0, (move, outcome.message, cost)
            assert not (terminated or truncated) and session.repaired == set(), (move, session.repaired)
        outcome, cost, *_ = session.step(Action("swap_cables", ("cable", "ret")))      # two cables: carried out
        assert outcome.refusal is None and cost == 40.0
