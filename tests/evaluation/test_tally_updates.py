"""An update of a campaign's trajectory (diagkg update, /sparql: one write path) is checked against the
trajectory shapes like a system or scenario graph is, and the tallies of the slots it changed do not outlive
it: they are dropped in the same write, and the report reads those slots from the trajectories (outsider h3,
F2). A tally rebuilt from a trajectory that got into the store unchecked names the trajectory."""

from __future__ import annotations

import pytest

from diagkg.errors import InputError, ValidationError
from diagkg.evaluation import metrics, tally
from diagkg.kg.updates import apply_update

from .test_evaluation import hand_campaign, hand_quads, norm  # noqa: F401 - the fixtures, used by name

DK = "PREFIX dk: <https://w3id.org/diagkg/ontology#> "


def _trajectory(store, campaign, assistant: str, scenario: int, seed: int) -> str:
    rows = [r for r in tally.source_rows(store, campaign)
            if (r["assistant"], int(r["scenario"]), int(r["seed"])) == (assistant, scenario, seed)]
    assert len(rows) == 1
    return rows[0]["trajectory"]


def _graph(store, trajectory: str) -> str:
    found = {q.graph_name.value for q in store.raw.quads_for_pattern(None, None, None, None)
             if q.subject.value == trajectory}
    assert len(found) == 1
    return found.pop()


def test_an_update_of_a_trajectory_drops_its_slots_tally_and_the_report_follows(hand_campaign):  # noqa: F811
    store, campaign = hand_campaign
    assert tally.rebuild(store, campaign) == 4
    g = _graph(store, _trajectory(store, campaign, "b", 9101, 0))
    report = apply_update(store, DK + f"DELETE {{ GRAPH <{g}> {{ ?s dk:endValue dk:Success }} }} "
                                      f"INSERT {{ GRAPH <{g}> {{ ?s dk:endValue dk:Timeout }} }} "
                                      f"WHERE {{ GRAPH <{g}> {{ ?s dk:endValue dk:Success }} }}")
    assert report.stale == [tally.graph_of(campaign, "b", 9101).value]
    assert not store.raw.contains_named_graph(tally.graph_of(campaign, "b", 9101))
    assert store.raw.contains_named_graph(tally.graph_of(campaign, "b", 9102))     # other slots keep theirs
    data, truth = metrics.load(store, [campaign.id]), metrics.load(store, [campaign.id], per_trajectory=True)
    assert norm(data.by_scenario) == norm(truth.by_scenario)
    row = next(r for r in data.by_scenario if (r["assistant"], int(r["scenario"])) == ("b", 9101))
    assert int(row["successes"]) == 2                # 3 before the update
    assert tally.rebuild(store, campaign) == 4 and metrics.load(store, [campaign.id]).tallied == {campaign.id}


def test_an_update_that_breaks_a_trajectorys_shapes_is_refused(hand_campaign):  # noqa: F811
    store, campaign = hand_campaign
    tally.rebuild(store, campaign)
    g = _graph(store, _trajectory(store, campaign, "a", 9101, 1))
    before = set(store.raw.quads_for_pattern(None, None, None, None))
    with pytest.raises(ValidationError) as refused:
        apply_update(store, DK + f'INSERT {{ GRAPH <{g}> {{ ?s dk:costMinutes "lots" ; dk:roundCount -5 }} }} '
                                 f"WHERE {{ GRAPH <{g}> {{ ?s dk:roundCount ?n }} }}")
    assert {v.file for v in refused.value.violations} == {f"<{g}> as the update leaves it"}
    paths = {v.result_path for v in refused.value.violations}
    assert {"<https://w3id.org/diagkg/ontology#costMinutes>", "<https://w3id.org/diagkg/ontology#roundCount>"} <= paths
    assert set(store.raw.quads_for_pattern(None, None, None, None)) == before       # nothing written


def test_a_rebuild_over_a_trajectory_written_unchecked_names_it(hand_campaign):  # noqa: F811
    import pyoxigraph as ox

    store, campaign = hand_campaign
    trajectory = _trajectory(store, campaign, "a", 9101, 1)
    g = ox.NamedNode(_graph(store, trajectory))
    cost = ox.NamedNode("https://w3id.org/diagkg/ontology#costMinutes")
    triples = [q.triple for q in store.raw.quads_for_pattern(None, None, None, g)]
    store.write_graphs({g: [t if t.predicate != cost else ox.Triple(t.subject, cost, ox.Literal("lots"))
                            for t in triples]})
    with pytest.raises(InputError, match=trajectory):
        tally.rebuild(store, campaign)


def test_an_update_may_drop_a_tally_but_not_write_one(hand_campaign):  # noqa: F811
    """A report reads a slot's tally in place of its trajectories: an update that rewrote a tally (an end
    turned from success to give_up in dk:tallySessions) changed the report's success rate while every
    trajectory still said success (outsider fx2). Writing a tally is refused; dropping one is allowed, and the
    report reads that slot's trajectories."""
    from diagkg.errors import UpdateRefused

    store, campaign = hand_campaign
    tally.rebuild(store, campaign)
    g = tally.graph_of(campaign, "b", 9101).value
    truth = norm(metrics.load(store, [campaign.id], per_trajectory=True).by_scenario)
    assert norm(metrics.load(store, [campaign.id]).by_scenario) == truth
    before = set(store.raw.quads_for_pattern(None, None, None, None))
    rewrites = [DK + f"DELETE {{ GRAPH <{g}> {{ ?t dk:tallySessions ?s }} }} "
                     f"INSERT {{ GRAPH <{g}> {{ ?t dk:tallySessions ?w }} }} "
                     f"WHERE {{ GRAPH <{g}> {{ ?t dk:tallySessions ?s }} BIND(REPLACE(?s, ' success ', ' give_up ') AS ?w) }}",
                f"INSERT DATA {{ GRAPH <{g}> {{ <urn:x> <urn:y> 1 }} }}",
                f"INSERT DATA {{ GRAPH <{tally.graph_of(campaign, 'c', 9101).value}> {{ <urn:x> <urn:y> 1 }} }}"]
    for update in rewrites:
        with pytest.raises(UpdateRefused, match="tally"):
            apply_update(store, update)
        assert set(store.raw.quads_for_pattern(None, None, None, None)) == before       # nothing written
    assert norm(metrics.load(store, [campaign.id]).by_scenario) == truth
    apply_update(store, f"DROP GRAPH <{g}>")
    assert not store.raw.contains_named_graph(tally.graph_of(campaign, "b", 9101))
    assert norm(metrics.load(store, [campaign.id]).by_scenario) == truth
