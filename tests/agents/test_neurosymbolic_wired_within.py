"""On a system that declares no functions the neuro-symbolic assistant takes its dependencies from the wiring,
part by part; yet a nominal reading (a lamp seen lit, a potential right) vouched only for parts of other modules
(the functions order modules, not a module's parts). On an outsider's caravan panel of one module (issue 30), a
lamp seen lit then cleared only itself: with the return cable's end off and the USB LED's resistor open behind it,
once the cable was named (partial) the reading lamp lit and the USB LED dark still left the battery, the fuse, the
main switch and the feed cable suspect, and the rounds ran out on them. Now, where the dependencies are the
wiring's, a nominal reading vouches for what it depends on within its module too (``wired_within``). The panel is
written for the tests (tests/support/panel.py), not shipped."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session
from tests.support.panel import case, panel_store

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    return panel_store(tmp_path_factory.mktemp("panel"), [
        case("PANEL.3", 9753, ["dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:ret.n",
                               "dk:faultMode dk:OpenComponent ; dk:faultTarget sys:usb_led_r ; dk:masked true"],
             [("ReconnectCable", "ret"), ("ReplaceComponent", "usb_led_r")], ("Dark", "Dark", "Dark"),
             "With the main switch on, nothing works: both lamps and the USB LED are dark.", category="Double")])


def session(store: KnowledgeStore, seed: int, **config: bool) -> tuple[str, list[str]]:
    steps: list[str] = []
    result = run_session("PANEL.3", NeuroSymbolic(**config), store=store, seed=seed, record=False, keep_ledger=False,
                         on_round=lambda r: steps.append(str(r.to_dict().get("intention"))))
    return str(result.end), steps


def test_a_lamp_seen_lit_vouches_for_its_wired_supply_within_one_module(store):
    for seed in SEEDS:
        end, steps = session(store, seed)
        assert end == "success", steps
        after = steps[steps.index("hypothesis {ret}") + 1:]
        # the supply the lit reading lamp depends on is not tested again
        assert not any(s.endswith((" bat", " fuse", " main_sw")) for s in after), steps
    assert any(session(store, seed, wired_within=False)[0] != "success" for seed in SEEDS)
