"""Readers and writers of one on-disk store take turns (diagkg.kg.turns): a reader opens its read-only
handle between writers' commits, never during one (pyoxigraph calls that undefined behaviour; a load
beside a campaign ran away there), a writer that waits keeps new readers out, and a process's own reads
never wait for its own writes. The graphs are written here; the writers are real processes."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyoxigraph as ox
import pytest

from diagkg.errors import StoreLockedError
from diagkg.kg import turns
from diagkg.kg.compaction import optimize
from diagkg.kg.store import KnowledgeStore

EX = "http://example.org/turns/"

# a writer that stops in the middle of its commit until told to go on (its graph is not committed before)
WRITER = """
import sys
from pathlib import Path
import pyoxigraph as ox
from diagkg.kg.store import KnowledgeStore
store = KnowledgeStore(sys.argv[1])
with store.writing() as raw:
    raw.add(ox.Quad(ox.NamedNode(sys.argv[2] + "s"), ox.NamedNode(sys.argv[2] + "p"), ox.Literal("late"),
                    ox.NamedNode(sys.argv[2] + "late")))
    print("writing", flush=True)
    sys.stdin.readline()
print("done", flush=True)
"""


def _graph(name: str) -> ox.NamedNode:
    return ox.NamedNode(EX + name)


def _new_store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    store = KnowledgeStore(path)
    with store.writing() as raw:
        raw.add(ox.Quad(ox.NamedNode(EX + "s"), ox.NamedNode(EX + "p"), ox.Literal("early"), _graph("early")))
    return path


def _writer(path: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), EX], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    return proc


def _finish(proc: subprocess.Popen[str]) -> None:
    out, _ = proc.communicate("\n", timeout=30)
    assert proc.returncode == 0 and "done" in out


def test_a_reader_opens_after_the_writers_commit_not_during_it(tmp_path):
    path = _new_store(tmp_path)
    proc = _writer(path)
    seen: list[bool] = []

    def read() -> None:
        reader = KnowledgeStore.open_for_reading(path)
        seen.append(reader.raw.contains_named_graph(_graph("late")))

    thread = threading.Thread(target=read)
    try:
        thread.start()
        thread.join(0.6)
        assert thread.is_alive(), "the reader opened the store in the middle of another process's commit"
    finally:
        _finish(proc)
    thread.join(30)
    assert seen == [True]          # it waited for the commit, and sees all of it
    # RocksDB leaves the lock files alone through compaction, and the store stays whole
    writer = KnowledgeStore(path)
    optimize(writer)
    assert (path / turns.LOCK_FILE).exists() and (path / turns.GATE_FILE).exists()
    assert KnowledgeStore.open_for_reading(path).raw.contains_named_graph(_graph("early"))


def test_a_reader_that_waits_too_long_is_told_so(tmp_path):
    path = _new_store(tmp_path)
    proc = _writer(path)
    try:
        reader = KnowledgeStore(path, read_only=True, wait=0.3)
        t0 = time.monotonic()
        with pytest.raises(StoreLockedError) as info:
            reader.version_of(ox.NamedNode(EX + "early"))
        assert 0.25 <= time.monotonic() - t0 < 10
        assert info.value.reading and str(path) in str(info.value)
        assert "readers open it between commits" in str(info.value) and "--wait" in str(info.value)
    finally:
        _finish(proc)
    assert reader.raw.contains_named_graph(_graph("late"))       # and reads once the commit is done


def test_a_writer_waiting_for_its_turn_keeps_new_readers_out(tmp_path):
    path = _new_store(tmp_path)
    with turns.reading(path, wait=5):              # a reader opening its handle (slowly)
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), EX], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        gate = os.open(path / turns.GATE_FILE, os.O_RDONLY)
        try:
            deadline = time.monotonic() + 30
            while True:                            # the writer has come and waits: it holds the gate
                try:
                    fcntl.flock(gate, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    fcntl.flock(gate, fcntl.LOCK_UN)
                except BlockingIOError:
                    break
                assert time.monotonic() < deadline and proc.poll() is None, "the writer never came"
                time.sleep(0.01)
        finally:
            os.close(gate)
        with pytest.raises(StoreLockedError):     # a second reader does not slip in before it…
            with turns.reading(path, wait=0.2):
                pass
        assert proc.poll() is None                 # …and the writer waits for the first one to be done
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    _finish(proc)


def test_a_thread_reads_while_it_writes_without_waiting_for_itself_and_other_threads_wait(tmp_path):
    path = _new_store(tmp_path)
    writer = KnowledgeStore(path)
    elsewhere: list[BaseException] = []

    def read_elsewhere() -> None:
        try:
            KnowledgeStore(path, read_only=True, wait=0.3).version_of(_graph("early"))
        except StoreLockedError as exc:
            elsewhere.append(exc)

    with writer.holding():
        writer.add_quads([ox.Quad(ox.NamedNode(EX + "s"), ox.NamedNode(EX + "p"), ox.Literal("mine"),
                                  _graph("mine"))])
        t0 = time.monotonic()
        other = KnowledgeStore(path, read_only=True, wait=5)
        assert other.raw.contains_named_graph(_graph("early"))
        assert time.monotonic() - t0 < 2.5
        thread = threading.Thread(target=read_elsewhere)
        thread.start()
        thread.join(30)
        assert len(elsewhere) == 1       # another thread of this process waits for the turn, as a process does
    assert KnowledgeStore.open_for_reading(path).raw.contains_named_graph(_graph("mine"))


def test_a_server_keeps_its_snapshot_while_another_process_commits(tmp_path):
    # what diagkg serve's quick queries read: renewed only where that needs no wait
    path = _new_store(tmp_path)
    served = KnowledgeStore(path, read_only=True, wait=30)
    assert served.raw.contains_named_graph(_graph("early"))
    proc = _writer(path)
    try:
        t0 = time.monotonic()
        assert served.refresh_now() is False and time.monotonic() - t0 < 1
        assert served.raw.contains_named_graph(_graph("early"))          # the snapshot at hand
        assert not served.raw.contains_named_graph(_graph("late"))
    finally:
        _finish(proc)
    assert served.refresh_now() is True
    assert served.raw.contains_named_graph(_graph("late"))
