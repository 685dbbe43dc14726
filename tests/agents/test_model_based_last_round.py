"""The model-based assistant's last round names what a fault broke besides, on the light barrier of
tests/support/barrier.py (not shipped).

A short from the transmitter's 0 V to the receiver's supply blows the fuse at once. Naming the short's part alone is
judged partial (the fuse stays blown): a round later the fuse is named too. On the last round there is no later: the
assistant named the photoresistor alone, was told it was faulty and the system still did not work, and the session
ended unsolved (generated scenario ``S.240`` of the barrier, and ``S.251``). It now names the part with what its
world has broken besides, where that naming is judged correct there (``{fuse, ldr}`` when written); earlier rounds are
as before (a wrong pair costs both parts)."""

from __future__ import annotations

from pathlib import Path

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.barrier import BARRIER

SHORT = """\
@prefix :        <https://example.org/barrier-scenarios/> .
@prefix sys:     <https://example.org/barrier/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:SHORT.1 a dk:Scenario ; dk:scenarioNumber 9811 ; dcterms:identifier "SHORT.1" ;
    rdfs:label "Short from the transmitter's 0 V to the receiver's supply" ;
    dk:onSystem sys:barrier ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:bat.neg ; dk:otherTarget sys:ldr.p ] ;
    dk:initialObservations "The green lamp and the emitter are dark." ;
    dk:statedSymptom [ dk:about sys:ok_lamp ; dk:appearance dk:Dark ], [ dk:about sys:tx_led ; dk:appearance dk:Dark ] ;
    dk:faultyComponent sys:bat, sys:fuse, sys:ldr ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:bat ] ;
        dk:step [ a dk:DiagnosticAction ; dk:position 2 ; dk:actionType dk:ReplaceComponent ; dk:target sys:fuse ] ] ;
    dk:actionBudget 11 .
"""


def test_the_last_naming_takes_the_fuse_the_short_blew(tmp_path: Path):
    (tmp_path / "barrier.ttl").write_text(BARRIER)
    (tmp_path / "short.ttl").write_text(SHORT)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path])
    named: list[tuple[str, ...]] = []
    result = run_session("SHORT.1", "model-based", store=store, seed=0, record=False,
                         on_round=lambda r: named.append(r.suspects) if r.suspects else None)
    # the last round names a pair, the fuse with the part its world says the short ended on; singles before it.
    # (Solved when written: {fuse, ldr}. Since an assistant is no longer told which parts a repair found healthy,
    # the cables reconnected as probes tell it nothing and it names them instead: the last pair is {fuse, tx_r},
    # tx_r not yet ruled out, and the session runs out; see the note of 2026-12-06.)
    assert result.rounds == 11 and len(named[-1]) == 2 and "fuse" in named[-1], named
    assert all(len(n) == 1 for n in named[:-1]), named
