"""The model-based assistant and shorts between two nodes, on the torch of tests/support/torch.py
(written in the tests, not shipped).

Any two ports on the same two nodes give the same circuit, so a short is not a fault of a part it
could enumerate like the others. With the first pairs of faults, once no single fault explains, it
screens each pair of nodes with one world, spreads the pairs that agree into their placements, and
names either part of a placement (repairing either clears the short). Before, such a scenario made
it pair and triple single faults again and again (on a generated current-sensor short, 31
widenings and 18,904 worlds in 112 s, then a timeout)."""

from __future__ import annotations

import pytest

from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.torch import TORCH, short_scenario
from ..support.worlds import KeptOpen

# the bulb's two nodes: lead.n and bulb.p on one, bulb.n and ret.p on the other
PLACEMENTS = {"TORCH.S1": ("lead.n", "ret.p"), "TORCH.S2": ("bulb.p", "ret.p"), "TORCH.S3": ("lead.n", "bulb.n")}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("shorts")
    files = [folder / "torch.ttl"]
    files[0].write_text(TORCH)
    for n, (ident, (a, b)) in enumerate(sorted(PLACEMENTS.items())):
        path = folder / f"{ident}.ttl"
        path.write_text(short_scenario(ident, 9140 + n, a, b, "A short across the bulb",
                                       "The bulb stays dark; the green LED is lit."))
        files.append(path)
    out = KnowledgeStore.memory()
    load_files(out, files)
    return out


@pytest.mark.parametrize("scenario", sorted(PLACEMENTS))
def test_a_short_between_two_nodes_is_found_wherever_its_ports_are(store, scenario):
    assistant = ModelBasedAssistant()
    result = run_session(scenario, assistant, store=store, seed=0)
    assert result.end == "success", [r.outcome.intention for r in result.record.rounds]
    owners = {p.split(".")[0] for p in PLACEMENTS[scenario]}
    named = result.record.rounds[-1].outcome.data["candidates"]
    # one part of the short is enough (on the torch a lead's own fault explains what a short across the
    # bulb shows, so it may be named as that: either way repairing it clears the short)
    assert set(named) & owners and len(named) == 1


def test_short_candidates_are_every_placement_on_the_nodes_that_agree(store):
    assistant = KeptOpen()
    run_session("TORCH.S1", assistant, store=store, seed=0, budget=1, record=False)
    assistant.worlds.steps.clear()           # judged on the lights seen at the start only
    space = assistant.space
    shorts = space.short_candidates()
    assert shorts
    sk = space.worlds.sk
    node_pairs = set()
    for c in shorts:
        (fault,) = c.faults
        a, b = (iri.rsplit("/", 1)[-1].split(".") for iri in (fault.target, fault.other))
        x, y = sk.net_of_port[tuple(a)], sk.net_of_port[tuple(b)]
        assert x != y
        node_pairs.add(frozenset({x, y}))
        assert len(c.faulty) == 1 and c.faulty <= {a[0], b[0]}       # named by either of its parts
    # every pair of parts on the two nodes of each pair that agrees, each named by both of its parts
    for pair in node_pairs:
        x, y = sorted(pair)
        owners_x = {cid for (cid, _), net in sk.net_of_port.items() if net == x}
        owners_y = {cid for (cid, _), net in sk.net_of_port.items() if net == y}
        placed = {(c.faults[0].target, c.faults[0].other) for c in shorts
                  if frozenset(sk.net_of_port[tuple(i.rsplit("/", 1)[-1].split("."))]
                               for i in (c.faults[0].target, c.faults[0].other)) == pair}
        assert len(placed) == len(owners_x) * len(owners_y)
    across = {frozenset({sk.net_of_port["bulb", "p"], sk.net_of_port["bulb", "n"]}),
              frozenset({sk.net_of_port["led", "anode"], sk.net_of_port["led", "cathode"]})}
    assert across & node_pairs == {frozenset({sk.net_of_port["bulb", "p"], sk.net_of_port["bulb", "n"]})}
    # the priors of a node pair's placements add up to its mode's prior
    assert sum(c.prior for c in shorts) == pytest.approx(0.2 * len(node_pairs))


def test_shorts_that_agree_are_candidates_before_the_pairs_are_admitted(store):
    # a short is one fault: it is tried before pairs of two, and one that agrees (one fault, named by
    # either part) settles the pairs that follow at a quarter of max_pairs rather than every one of them
    # being started (after a rebase, with no lights at the start to screen them, a short that was the
    # truth waited for all of them)
    assistant = KeptOpen(max_pairs=16)
    run_session("TORCH.S1", assistant, store=store, seed=0, budget=1, record=False)
    space = assistant.space
    assistant.worlds.steps.clear()           # judged on the lights seen at the start only
    space.live, space.tried_pairs, space.shorts, space.widenings = [], set(), False, 0
    node_shorts = {m.name for m in space.modes().values() if m.node_short}
    admitted: list[tuple[int, int]] = []     # per ranked admission: shorts standing before it, pairs tried
    admit_combos = space.admit_combos

    def watched(ranked, most, settle=True):
        shorts = sum(1 for c, _ in space.live if c.faults[0].mode in node_shorts)
        before = len(space.tried_pairs)
        admit_combos(ranked, most, settle)
        if settle:
            admitted.append((shorts, len(space.tried_pairs) - before))

    space.admit_combos = watched
    space.widen()
    ((shorts, tried),) = admitted
    assert shorts > 0
    assert len({c.faulty for c, _ in space.live}) > 1
    assert tried == 16 // 4
