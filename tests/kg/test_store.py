"""The Oxigraph store: named graphs, all-or-nothing loading, locking."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pyoxigraph as ox
import pytest

from diagkg.errors import InputError, RdfSyntaxError, StoreError, StoreLockedError, ValidationError
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import ENV_VAR, KnowledgeStore, default_store_path

from ..support.paths import DATA, TC_TRIPLES, THREE_CUBES


def test_named_graph_convention(store):
    load_files(store, [THREE_CUBES, DATA / "workbench.ttl"])
    names = dict(store.graphs())
    assert set(names) == {graphs.ONTOLOGY.value, graphs.SHAPES.value,
                          graphs.system("three_cubes").value, graphs.system("workbench").value,
                          graphs.inferred("three_cubes").value, graphs.inferred("workbench").value}
    assert names[graphs.system("three_cubes").value] == TC_TRIPLES
    assert graphs.kind_of(graphs.system("x")) == "system"
    assert graphs.named("trajectory", "a b").value.endswith("trajectory/a%20b")
    with pytest.raises(ValueError):
        graphs.named("nonsense", "x")


def test_reload_replaces_the_graph(store, tmp_path):
    load_files(store, [THREE_CUBES])
    text = THREE_CUBES.read_text().replace('rdfs:label "Main Load (lamp)"', 'rdfs:label "Big lamp"')
    (tmp_path / "three_cubes.ttl").write_text(text)
    with pytest.raises(InputError, match="already holds"):     # another file: refused unless replacing
        load_files(store, [tmp_path / "three_cubes.ttl"])
    load_files(store, [tmp_path / "three_cubes.ttl"], replace=True)
    load_files(store, [tmp_path / "three_cubes.ttl"])           # the same file again: replaces its own graph
    assert dict(store.graphs())[graphs.system("three_cubes").value] == TC_TRIPLES
    labels = [r["label"] for r in store.select("system-components", {"system": ox.NamedNode(
        "https://w3id.org/diagkg/system/three_cubes/three_cubes")}) if r["id"] == "main_bulb"]
    assert labels == ["Big lamp"]


def test_nothing_is_loaded_when_one_file_fails(store, tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text(THREE_CUBES.read_text().replace("dk:resistance 120.0", "dk:resistance -1"))
    with pytest.raises(ValidationError) as info:
        load_files(store, [DATA / "workbench.ttl", bad])
    assert any(v.focus == ":main_bulb" for v in info.value.violations)
    assert len(store) == 0


def test_malformed_file_is_located(store, tmp_path):
    bad = tmp_path / "broken.ttl"
    bad.write_text("@prefix : <http://x/> .\n:a :b :c .\n:d :e \"unterminated .\n")
    with pytest.raises(RdfSyntaxError) as info:
        load_files(store, [bad])
    assert info.value.location.line == 3
    assert str(info.value).startswith(f"{bad}:3:")
    assert len(store) == 0
    with pytest.raises(InputError, match="no such file"):
        load_files(store, [tmp_path / "missing.ttl"])


def test_default_path_and_env(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "s"))
    assert default_store_path() == tmp_path / "s"
    monkeypatch.delenv(ENV_VAR)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_store_path() == tmp_path / "xdg" / "diagkg" / "store"


def test_on_disk_store_persists(tmp_path):
    with KnowledgeStore(tmp_path / "store") as s:
        load_files(s, [THREE_CUBES])
    with KnowledgeStore(tmp_path / "store", read_only=True) as s:
        assert graphs.system("three_cubes").value in dict(s.graphs())
        with pytest.raises(StoreError, match="read-only"):
            load_files(s, [THREE_CUBES])


HOLDER = textwrap.dedent("""
    import sys
    import pyoxigraph as ox
    writer = ox.Store(sys.argv[1])       # another process in the middle of a long write
    print("locked", flush=True)
    sys.stdin.readline()
""")


@pytest.fixture(scope="module")
def three_cubes_on_disk(tmp_path_factory):
    """An on-disk store holding the three cubes, loaded once for the module in this process; each test locks
    a copy of its own (see :func:`locked_store`)."""
    path = tmp_path_factory.mktemp("three-cubes") / "store"
    with KnowledgeStore(path) as s:
        load_files(s, [THREE_CUBES])
    return path


@pytest.fixture()
def locked_store(tmp_path, three_cubes_on_disk):
    """A copy of the loaded store that another process holds open for writing."""
    path = tmp_path / "store"
    shutil.copytree(three_cubes_on_disk, path)
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    yield path
    proc.communicate("\n", timeout=30)


def test_second_writer_gets_a_clear_message(locked_store):
    store = KnowledgeStore(locked_store, wait=0.2)      # opening does not take the lock…
    with pytest.raises(StoreLockedError) as info:
        load_files(store, [THREE_CUBES])                 # …writing does, after waiting
    assert "still being written by another process after waiting 0.2 s" in str(info.value)
    assert str(locked_store) in str(info.value) and "Nothing was written" in str(info.value)


def test_opening_while_another_writer_compacts_neither_fails_nor_waits_for_the_lock(locked_store, monkeypatch):
    # a read handle opened while the writer's compaction replaces a file meets "No such file":
    # the store is complete, so opening tries the read again instead of taking the write lock
    # (which the other process holds: the constructor used to raise StoreLockedError)
    real, calls = ox.Store.read_only, []

    def flaky(path):
        calls.append(path)
        if len(calls) == 1:
            raise OSError("IO error: No such file or directory: 000123.sst")
        return real(path)

    monkeypatch.setattr(ox.Store, "read_only", flaky)
    store = KnowledgeStore(locked_store, wait=0.2)
    assert len(calls) == 2 and graphs.system("three_cubes").value in dict(store.graphs())
    with pytest.raises(StoreLockedError):
        load_files(store, [THREE_CUBES])


def test_a_snapshot_that_lost_a_file_to_compaction_is_read_again_afresh(locked_store, monkeypatch):
    # a long-lived read handle whose files another process's compaction removed meets "No such file"
    # on any read (the version of a graph, its quads, whether it is there before a write): each is
    # tried again on a fresh snapshot (`diagkg run` failed so while a campaign wrote)
    store = KnowledgeStore(locked_store, wait=0.2)
    system = graphs.system("three_cubes")
    expected = (store.version_of(system), len(store.quads(system)))
    real, opened = ox.Store.read_only, []

    class Stale:        # the snapshot another process's compaction left behind
        def __getattr__(self, name):
            def fail(*args, **kw):
                raise OSError("IO error: No such file or directory: While open a file for random read: 000056.sst")
            return fail

    def snapshot(path):
        opened.append(path)
        return Stale() if len(opened) % 2 else real(path)

    monkeypatch.setattr(ox.Store, "read_only", snapshot)
    for n, read in enumerate((lambda: store.version_of(system), lambda: len(store.quads(system)))):
        store.refresh()
        assert read() == expected[n]
    assert len(opened) == 4
    with pytest.raises(OSError, match="unreadable"):
        store.reading(lambda raw: (_ for _ in ()).throw(OSError("unreadable: not a lost file")))


def test_reading_keeps_working_while_locked(locked_store):
    with KnowledgeStore.open_for_reading(locked_store) as s:
        assert s.read_only
        assert graphs.system("three_cubes").value in dict(s.graphs())


def test_cli_while_locked(locked_store):
    from ..support.cli import run_cli

    r = run_cli("--store", str(locked_store), "graphs")
    assert r.returncode == 0 and "system/three_cubes" in r.stdout
    r = run_cli("--store", str(locked_store), "--wait", "0.5", "load", str(THREE_CUBES))
    assert r.returncode == 3 and "still being written by another process" in r.stderr


def test_a_write_check_runs_inside_the_lock_and_can_drop_more(tmp_path):
    s = KnowledgeStore(tmp_path / "store")
    a, b = graphs.named("file", "a"), graphs.named("file", "b")
    t = ox.Triple(ox.NamedNode("urn:x"), ox.NamedNode("urn:p"), ox.Literal("1"))
    s.write_graphs({a: [t], b: [t]})
    seen = []

    def check(writer):
        seen.append(writer.contains_named_graph(b))    # the check sees the store opened for writing
        return [b]                                     # and asks for one more graph to go

    s.write_graphs({a: [t]}, check=check)
    assert seen == [True]
    assert {g for g, _ in s.graphs()} == {a.value}

    def refuse(writer):
        raise InputError("meanwhile, something collided")

    with pytest.raises(InputError):
        s.write_graphs({}, drop=[a], check=refuse)
    assert {g for g, _ in s.graphs()} == {a.value}      # nothing was written
