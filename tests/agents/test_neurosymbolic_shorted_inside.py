"""A lamp shorted inside blew the panel's fuse (an outsider's caravan panel, issue 30). Once the new fuse blew
again, the neuro-symbolic assistant named the parts a short between two nodes may end on, cheapest first (the
return cable, an LED, the feed cable) and ran out of rounds, never reading the lamp's own continuity (20
minutes), which shows a part shorted inside where naming it costs a replacement (120). Now a part across the
nodes the short may join that may be shorted inside is tested by its own test first, and named once read shorted
(``shorted_inside``). The panel is written for the tests (tests/support/panel.py), not shipped."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic import NeuroSymbolic
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session
from tests.support.panel import case, panel_store

ALL_DARK = "With the main switch on, nothing works: both lamps and the USB LED are dark."


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    return panel_store(tmp_path_factory.mktemp("panel"), [
        case("PANEL.1", 9751, ["dk:faultMode dk:ShortedComponent ; dk:faultTarget sys:ceiling"],
             [("ReplaceComponent", "ceiling"), ("ReplaceComponent", "fuse")], ("Dark", "Dark", "Dark"), ALL_DARK)])


def session(store: KnowledgeStore, seed: int, **config: bool) -> tuple[str, float, list[str]]:
    steps: list[str] = []
    result = run_session("PANEL.1", NeuroSymbolic(**config), store=store, seed=seed, record=False, keep_ledger=False,
                         on_round=lambda r: steps.append(str(r.to_dict().get("intention"))))
    return str(result.end), result.cost, steps


@pytest.mark.parametrize("seed", [0, 1])
def test_a_lamp_shorted_inside_is_tested_before_the_ends_of_a_short_are_named(store, seed):
    end, cost, steps = session(store, seed)
    assert end == "success", steps
    # once the fuse blew again, the lamp's own test comes before any short's end is named, and the lamp then the fuse
    after = steps[next(k for k, s in enumerate(steps) if s == "hypothesis {fuse}") + 1:]
    assert after[:3] == ["test_continuity ceiling", "hypothesis {ceiling}", "hypothesis {fuse}"], steps
    end_before, cost_before, _ = session(store, seed, shorted_inside=False)
    assert end_before != "success" or cost_before > cost
