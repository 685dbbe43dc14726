"""Schematics drawn from the graph (graphviz): on a user's system written in the test."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from diagkg.env.service import make
from diagkg.sim import schematic

from ..support.torch import torch_memory_store

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("schematic"))


def shapes(svg: bytes) -> dict[str, dict[str, str]]:
    """Each node and cluster of an SVG from dot: its title -> fill colour of its first shape."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(SVG + "g"):
        if g.get("class") in ("node", "cluster"):
            title = g.find(SVG + "title").text
            shape = next((e for e in g.iter() if e.tag in (SVG + "polygon", SVG + "path")), None)
            out[title] = {"class": g.get("class"), "fill": shape.get("fill") if shape is not None else "",
                          "text": " ".join(t.text or "" for t in g.iter(SVG + "text"))}
    return out


def edges(svg: bytes) -> list[str]:
    root = ET.fromstring(svg)
    return sorted(g.find(SVG + "title").text for g in root.iter(SVG + "g") if g.get("class") == "edge")


def test_modules_components_ports_and_connections(torch):
    svg = schematic.render(torch, "torch")
    found = shapes(svg)
    comps = {k for k, v in found.items() if v["class"] == "node"}
    assert comps == {"bat", "sw", "lead", "bulb", "r_led", "led", "ret"}
    clusters = [v for v in found.values() if v["class"] == "cluster"]
    assert [c["text"] for c in clusters] == ["Body"]
    assert "pos" in found["bat"]["text"] and "6 V battery" in found["bat"]["text"]
    # the eight connections of the file, port to port
    pairs = {frozenset(part.split(":")[0] for part in e.split("--")) for e in edges(svg)}
    assert len(edges(svg)) == 8
    assert pairs == {frozenset(p) for p in [("bat", "sw"), ("bat", "r_led"), ("sw", "lead"), ("lead", "bulb"),
                                             ("r_led", "led"), ("bulb", "ret"), ("ret", "bat"), ("ret", "led")]}
    # nominal: the bulb and the LED are lit, the battery is not a lamp
    assert found["bulb"]["fill"] == schematic.LIT and found["led"]["fill"] == schematic.LIT
    assert found["bat"]["fill"] == schematic.PLAIN


def test_lamps_as_simulated_after_a_scenarios_faults(torch):
    session = make("TORCH.2", store=torch)      # the bulb lead is off: bulb dark, LED lit
    session.reset(seed=0)
    svg = schematic.render(torch, "torch", state=session.state(), result=session.initial_result)
    found = shapes(svg)
    assert found["bulb"]["fill"] == schematic.DARK and found["led"]["fill"] == schematic.LIT
    assert "detached" in found["lead"]["text"]
    # for someone diagnosing it: the lamps only, not the fault
    hidden = shapes(schematic.render(torch, "torch", state=session.state(), result=session.initial_result, faults=False))
    assert "detached" not in hidden["lead"]["text"] and hidden["bulb"]["fill"] == schematic.DARK


def test_png_for_vision_models_and_escaping(torch):
    png = schematic.render(torch, "torch", fmt="png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000
    assert schematic.record_text('a|b{c}<d>"e') == 'a\\|b\\{c\\}\\<d\\>\\"e'
    with pytest.raises(Exception, match="svg, png, dot"):
        schematic.render(torch, "torch", fmt="gif")
