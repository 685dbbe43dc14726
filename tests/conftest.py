"""Shared fixtures: the shipped files, a validator, in-memory stores.

The whole test session runs with its own default store (``DIAGKG_STORE``) and
cache folder (``XDG_CACHE_HOME``, where inferences are kept by hash), so no
test touches the user's own store; subprocesses inherit both.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import rdflib

from diagkg.kg.store import KnowledgeStore
from diagkg.kg.validation import Validator

from .support.paths import THREE_CUBES
from .support.stores import shipped_store
from .support.torch import torch_memory_store

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="diagkg-tests-"))
os.environ["DIAGKG_STORE"] = str(_SESSION_DIR / "default-store")
# one inference cache for every worker of a run (xdist's run id): the catalogue is reasoned over once,
# not once per worker (diagkg.kg.inference_cache lets one process reason while the others wait to read)
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")
os.environ["XDG_CACHE_HOME"] = str(Path(tempfile.gettempdir()) / f"diagkg-tests-cache-{_RUN}" if _RUN
                                   else _SESSION_DIR / "cache")
# every trajectory a test writes is checked against the shapes (the default checks a sample)
os.environ["DIAGKG_CHECK_TRAJECTORIES"] = "always"


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
