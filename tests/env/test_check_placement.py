"""``diagkg check`` warns (``placement``) of crossed cables whose two ends the fault catalogue does not place
together: its ``dk:otherTargetRule`` "alike" pairs ends of one port name on two parts of one type and module, as
``diagkg generate`` and the model-based assistant's candidates do. On an outsider's caravan panel (issue 30) the
feed cable's ``n`` end and the return cable's ``p`` end both lie at the loads; their crossing validated and passed
every check, and the model-based assistant, which never considers it, ran out of rounds (605 minutes) with nothing
saying why. The panel is written for the tests (tests/support/panel.py), not shipped."""

from __future__ import annotations

from diagkg.env.checks import check_scenario
from diagkg.env.scenarios import ScenarioCatalog
from tests.support.panel import case, panel_store

CROSSED = "dk:faultMode dk:CrossedCables ; dk:faultTarget sys:{} ; dk:otherTarget sys:{}"


def test_a_crossing_the_catalogue_does_not_place_is_warned_of(tmp_path):
    store = panel_store(tmp_path, [
        case("PANEL.4", 9754, [CROSSED.format("feed.n", "ret.p")], [("ReconnectCable", "feed"), ("ReconnectCable", "ret")],
             ("Lit", "Lit", "Dark"), "Both lamps work but the USB socket's LED is dark."),
        case("PANEL.5", 9755, [CROSSED.format("feed.p", "ret.p")], [("ReconnectCable", "feed"), ("ReconnectCable", "ret")],
             ("Dark", "Dark", "Dark"), "Nothing works.")])
    catalog = ScenarioCatalog(store)
    warned = {id: [f for f in check_scenario(store, catalog.resolve(id), seeds=1).findings if f.check == "placement"]
              for id in ("PANEL.4", "PANEL.5")}
    assert len(warned["PANEL.4"]) == 1 and warned["PANEL.4"][0].warning and warned["PANEL.4"][0].passed
    assert "feed.n and ret.p" in warned["PANEL.4"][0].message
    assert warned["PANEL.5"] == []          # ends of one port name: placed by the catalogue
