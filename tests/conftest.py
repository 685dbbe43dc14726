"""Shared fixtures: the shipped files, a validator, in-memory stores.

The whole test session runs with its own default store (``DIAGKG_STORE``) and
cache folder (``XDG_CACHE_HOME``, where inferences are kept by hash) and state folder, so no
test touches the user's own store; subprocesses inherit both.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import rdflib

from diagkg.kg.store import KnowledgeStore
from diagkg.kg.validation import Validator
from diagkg.runs import heap

from .support.paths import THREE_CUBES
from .support.stores import shipped_store
from .support.torch import torch_memory_store

# One folder for the whole run, made by the first process that imports this file (pytest's own, which
# loads it before xdist starts its workers; they inherit the folder's name) and removed when that
# process exits: a run leaves nothing in the temporary folder, as it did (19 MB a run) before.
_OWNER = "DIAGKG_TESTS_DIR" not in os.environ
_RUN_DIR = Path(os.environ.get("DIAGKG_TESTS_DIR") or tempfile.mkdtemp(prefix="diagkg-tests-"))
os.environ["DIAGKG_TESTS_DIR"] = str(_RUN_DIR)
if _OWNER:
    atexit.register(shutil.rmtree, _RUN_DIR, ignore_errors=True)
# each process its own default store
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="process-", dir=_RUN_DIR))
os.environ["DIAGKG_STORE"] = str(_SESSION_DIR / "default-store")
# one inference cache for every worker of a run: the catalogue is reasoned over once, not once per
# worker (diagkg.kg.inference_cache lets one process reason while the others wait to read)
os.environ["XDG_CACHE_HOME"] = str(_RUN_DIR / "cache")
# and one state folder (a campaign run's money journal, diagkg.evaluation.money_journal), not the user's
os.environ["XDG_STATE_HOME"] = str(_RUN_DIR / "state")
# every trajectory a test writes is checked against the shapes (the default checks a sample)
os.environ["DIAGKG_CHECK_TRAJECTORIES"] = "always"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before each test, the worker's heap is settled as a campaign's worker settles it between sessions
    (diagkg.runs.heap: what earlier tests left is collected, what lives on, the session fixtures and
    caches, is frozen out of the collector's way): a worker's heap grows to 600,000 objects and more, and
    each full collection walked them all (a third of a second each, 7 % of the workers' time in the
    model-based, environment and simulator tests)."""
    heap.settle()


@pytest.fixture(scope="session")
def validator() -> Validator:
    return Validator()


@pytest.fixture()
def store():
    s = KnowledgeStore.memory()
    yield s
    s.close()


@pytest.fixture(scope="session")
def three_cubes_graph() -> rdflib.Graph:
    g = rdflib.Graph()
    g.parse(THREE_CUBES, format="turtle")
    return g


@pytest.fixture()
def shipped() -> KnowledgeStore:
    return shipped_store()


@pytest.fixture(scope="session")
def torch_quads(tmp_path_factory):
    """The torch of tests/support/torch.py and its scenarios, loaded (validated, reasoned) once."""
    loaded = torch_memory_store(tmp_path_factory.mktemp("torch"))
    quads = list(loaded.raw.quads_for_pattern(None, None, None, None))
    loaded.close()
    return quads


@pytest.fixture()
def torch_copy(torch_quads):
    """A fresh in-memory store holding the torch and its scenarios (a copy of :func:`torch_quads` per test)."""
    store = KnowledgeStore.memory()
    store.raw.extend(torch_quads)
    yield store
    store.close()
