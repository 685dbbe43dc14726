"""Systems a stranger could write that no solver can solve, and the notes ``diagkg simulate`` gives under its table,
written here (not shipped). Two batteries wired straight across each other (a garden lantern's fresh 12.6 V battery
beside an older 12.4 V one, nothing between them) failed with ngspice's own words ("ngspice returned no value for
n1") and exit code 0; ``diagkg load`` said only that no lamp was lit, and ``diagkg generate`` wrote no scenario,
"178 unseen". Each now names the two batteries and what to do. And the parts a solve's damage leaves on a node
nothing joins to 0 V (two fuses in series, both blown) were not named: the note read the state as given, without
the damage. A spare battery left in the box, both its ends open by design, made the whole system unsolvable: a
source between two nodes nothing else touches; a part of the circuit nothing joins to ground is now tied to it
through 1 TΩ, which carries no current."""

from __future__ import annotations

import json
from pathlib import Path

from ..support.cli import run_cli

TWIN = '''\
@prefix :        <https://example.org/twin/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:twin a dk:System ; dk:systemKey "twin" ; dcterms:identifier "twin" ; rdfs:label "Twin-battery lamp" ;
    dk:groundReference :a.neg ;
    dcterms:description "Two batteries side by side feed one lamp through two fuses in series." .
:box a dk:Module ; dcterms:identifier "box" ; rdfs:label "Box" ; dk:partOf :twin .
:a a dk:VoltageSource ; dcterms:identifier "a" ; rdfs:label "Fresh battery" ; dk:partOf :box ; dk:voltage 12.6 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :a.pos, :a.neg .
:a.pos a dk:Port ; dk:portName "pos" .
:a.neg a dk:Port ; dk:portName "neg" .
:b a dk:VoltageSource ; dcterms:identifier "b" ; rdfs:label "Older battery" ; dk:partOf :box ; dk:voltage 12.4 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :b.pos, :b.neg .
:b.pos a dk:Port ; dk:portName "pos" .
:b.neg a dk:Port ; dk:portName "neg" .
:f1 a dk:Fuse ; dcterms:identifier "f1" ; rdfs:label "First fuse" ; dk:partOf :box ; dk:ratedCurrent 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :f1.p, :f1.n .
:f1.p a dk:Port ; dk:portName "p" .
:f1.n a dk:Port ; dk:portName "n" .
:f2 a dk:Fuse ; dcterms:identifier "f2" ; rdfs:label "Second fuse" ; dk:partOf :box ; dk:ratedCurrent 1 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :f2.p, :f2.n .
:f2.p a dk:Port ; dk:portName "p" .
:f2.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Lamp" ; dk:partOf :box ; dk:resistance 72 ; dk:powerThreshold 0.5 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" .
:lamp.n a dk:Port ; dk:portName "n" .

:a.pos dk:connectedTo :b.pos, :f1.p .
:a.neg dk:connectedTo :b.neg, :lamp.n .
:f1.n dk:connectedTo :f2.p .
:f2.n dk:connectedTo :lamp.p .
'''

# one battery, the same two fuses and lamp (the other battery a spare, left unconnected)
SERIES = TWIN.replace(":a.pos dk:connectedTo :b.pos, :f1.p .", ":a.pos dk:connectedTo :f1.p .").replace(
    ":a.neg dk:connectedTo :b.neg, :lamp.n .", ":a.neg dk:connectedTo :lamp.n .\n:b.pos dk:openByDesign true .\n"
    ":b.neg dk:openByDesign true .")

SAID = "a (12.6 V) and b (12.4 V) are wired straight across each other"


def test_batteries_wired_across_each_other_are_named(tmp_path: Path):
    path = tmp_path / "twin.ttl"
    path.write_text(TWIN)
    r = run_cli("--memory", "simulate", str(path))
    assert r.returncode == 1 and SAID in r.stderr and "internal resistance" in r.stderr, r.stdout + r.stderr
    store = str(tmp_path / "store")
    r = run_cli("--store", store, "load", str(path))
    line = TWIN.splitlines().index(next(x for x in TWIN.splitlines() if x.startswith(":twin a dk:System"))) + 1
    assert r.returncode == 0 and f"{path}:{line}: twin: solve: the working system cannot be solved: {SAID}" in r.stderr, \
        r.stderr
    assert "no lamp a session judges" not in r.stderr
    r = run_cli("--store", store, "generate", "twin", "--out", str(tmp_path / "gen"))
    assert r.returncode == 2 and SAID in r.stderr, r.stdout + r.stderr


def test_a_spare_battery_and_a_node_the_solves_damage_cut_off(tmp_path: Path):
    assert SERIES != TWIN
    system, state = tmp_path / "series.ttl", tmp_path / "short.ttl"
    system.write_text(SERIES)
    r = run_cli("--memory", "simulate", str(system))
    assert r.returncode == 0 and "lit: lamp" in r.stdout, r.stdout + r.stderr
    assert "b          VoltageSource" in r.stdout and "0.000         0.000" in r.stdout     # the spare carries nothing
    state.write_text("@prefix : <https://example.org/twin/> .\n@prefix dk: <https://w3id.org/diagkg/ontology#> .\n"
                     ":lamp dk:hasOverride [ a dk:ParameterValue ; dk:parameter dk:resistance ; dk:value 0.5 ] .\n")
    r = run_cli("--memory", "simulate", str(system), "--state", str(state))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "damaged by the circuit: f1 (blown" in r.stdout and "f2 (blown" in r.stdout, r.stdout
    note = next((x for x in r.stdout.splitlines() if x.startswith("not joined to 0 V")), "")
    assert note.endswith(": b, f1, f2"), r.stdout


# the two batteries each behind its internal resistance (0.1 ohm): the fresh one charges the older
RESISTORS = """
:ra a dk:Resistor ; dcterms:identifier "ra" ; rdfs:label "Fresh battery's inside" ; dk:partOf :box ; dk:resistance 0.1 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :ra.p, :ra.n .
:ra.p a dk:Port ; dk:portName "p" .
:ra.n a dk:Port ; dk:portName "n" .
:rb a dk:Resistor ; dcterms:identifier "rb" ; rdfs:label "Older battery's inside" ; dk:partOf :box ; dk:resistance 0.1 ;
    dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :rb.p, :rb.n .
:rb.p a dk:Port ; dk:portName "p" .
:rb.n a dk:Port ; dk:portName "n" .
"""
CHARGING = TWIN.replace(":a.pos dk:connectedTo :b.pos, :f1.p .",
                        ":a.pos dk:connectedTo :ra.p .\n:b.pos dk:connectedTo :rb.p .\n:ra.n dk:connectedTo :rb.n, :f1.p .") \
    + RESISTORS


def test_a_battery_being_charged_is_said_to_take_power_in(tmp_path: Path):
    # the power column is unsigned: the older battery, taking 0.9 A in, read like one giving it
    assert CHARGING != TWIN + RESISTORS
    (tmp_path / "charging.ttl").write_text(CHARGING)
    r = run_cli("--memory", "simulate", str(tmp_path / "charging.ttl"))
    assert r.returncode == 0, r.stdout + r.stderr
    said = next((x for x in r.stdout.splitlines() if x.startswith("taking power in")), "")
    assert said.endswith(": b"), r.stdout


def test_a_battery_turned_round_gives_power_and_a_short_is_a_row_of_the_table(tmp_path: Path):
    """The torch (tests/support/torch.py) with its battery turned round, then a short across its bulb: the lone
    battery, turned round, delivers (its current enters at its positive port, which is the lower one): it was said
    to take power in, because only the current's sign was read. The short carries current that no row showed (nor
    ``--format json``), so the bulb's node did not add up."""
    from ..support.torch import ONE_FAULT, TORCH

    files = [tmp_path / "torch.ttl", tmp_path / "rev.ttl", tmp_path / "short.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(ONE_FAULT.format(id="TORCH.REV", number=9181, label="Battery turned round", category="Simple",
                                         fault="dk:faultMode dk:ReversedBattery ; dk:faultTarget sys:bat",
                                         symptoms="Nothing lights.", faulty="sys:bat", repair="ReplaceComponent", part="bat"))
    files[2].write_text(ONE_FAULT.format(id="TORCH.SH", number=9182, label="Bulb shorted", category="Simple",
                                         fault="dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:bulb.p ; "
                                               "dk:otherTarget sys:bulb.n ; dk:faultValue 0.5",
                                         symptoms="The bulb is dark.", faulty="sys:bulb", repair="ReplaceComponent",
                                         part="bulb"))
    store = str(tmp_path / "store")
    r = run_cli("--store", store, "load", *map(str, files))
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("--store", store, "simulate", "--scenario", "TORCH.REV")
    assert r.returncode == 0 and "bat" in r.stdout, r.stdout + r.stderr
    assert not any(x.startswith("taking power in") for x in r.stdout.splitlines()), r.stdout
    r = run_cli("--store", store, "simulate", "--scenario", "TORCH.SH", "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads(r.stdout)
    (short,) = result["shorts"]
    assert sorted(short["between"]) == ["bulb.n", "bulb.p"] and short["power"] > 0
    down = short["current"] * (1 if short["between"][0] == "bulb.p" else -1)     # from the bulb's feed to its return
    # the current law at the bulb's feed: what the lead brings is what the bulb and the short take
    parts = result["components"]
    assert down > 0.01 and abs(parts["lead"]["current"] - parts["bulb"]["current"] - down) < 1e-6, (parts, short)
    r = run_cli("--store", store, "simulate", "--scenario", "TORCH.SH")
    assert any(x.startswith(f"short {short['between'][0]}–{short['between'][1]}") for x in r.stdout.splitlines()), r.stdout
