"""A trajectory records the versions of the system and scenario it was played on (``dk:usedVersion``, as a
campaign does), and a replay says when the system has been replaced since: a bicycle lamp written here, its
fuse rated 1 A, then 0.3 A (below what the lamp draws). Before, nothing in a trajectory told which system it
was played on, and ``diagkg run --replay`` replayed on the replaced one without a word (another cost, exit 0)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import replay_session, run_session

from ..support.bike_lamp import bike_lamp, cable_off


def test_a_trajectory_says_what_it_was_played_on_and_a_replay_what_changed(tmp_path: Path):
    (tmp_path / "veclamp.ttl").write_text(bike_lamp("veclamp", 1.0))
    (tmp_path / "vec1.ttl").write_text(cable_off("veclamp", "VEC.1", 9751))
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "veclamp.ttl", tmp_path / "vec1.ttl"])
    system, scenario = graphs.system("veclamp"), graphs.named("scenario", "VEC.1")
    before = {system.value: store.version_of(system), scenario.value: store.version_of(scenario)}
    result = run_session("VEC.1", "oracle", store=store, seed=0)
    recorded = {r["graph"]: r["hash"] for r in store.select("trajectory-versions", {"trajectory": ox.NamedNode(result.trajectory)})}
    assert recorded == before
    said: list[str] = []
    again = replay_session(store, result.trajectory, record=False, notify=said.append)
    assert again.end == result.end and not [s for s in said if "has changed" in s], said
    (tmp_path / "veclamp.ttl").write_text(bike_lamp("veclamp", 0.3))
    load_files(store, [tmp_path / "veclamp.ttl"], replace=True)
    assert store.version_of(system) != before[system.value]
    said.clear()
    replay_session(store, result.trajectory, record=False, notify=said.append)
    changed = [s for s in said if "has changed" in s]
    assert changed == [f"<{system.value}> has changed since the session was recorded (replaced): the replay plays it "
                       "as it is now"], said
