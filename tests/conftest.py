"""Shared fixtures: the shipped files, a validator, in-memory stores.

The whole test session runs with its own default store (``DIAGKG_STORE``) and
cache folder (``XDG_CACHE_HOME``, where inferences are kept by hash), so no
test touches the user's own store; subprocesses inherit both.
"""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest
import rdflib

from diagkg.kg.store import KnowledgeStore
from diagkg.kg.validation import Validator

_SESSION_DIR = Path(tempfile.mkdtemp(prefix="diagkg-tests-"))
os.environ["DIAGKG_STORE"] = str(_SESSION_DIR / "default-store")
os.environ["XDG_CACHE_HOME"] = str(_SESSION_DIR / "cache")
# every trajectory a test writes is checked against the shapes (the default checks a sample)
os.environ["DIAGKG_CHECK_TRAJECTORIES"] = "always"

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ROOT / "scenarios" / "systems"
DATA = Path(__file__).resolve().parent / "data"
THREE_CUBES = SYSTEMS / "three_cubes.ttl"
SYS = rdflib.Namespace("https://w3id.org/diagkg/system/three_cubes/")
# the file's triples plus the two provenance triples a load adds (dk:loadedFrom, dk:contentHash)
TC_TRIPLES = len(rdflib.Graph().parse(THREE_CUBES, format="turtle")) + 2


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


def catalog_store() -> KnowledgeStore:
    """A new in-memory store holding the shipped catalogue, loaded as a user would."""
    from diagkg.kg.loading import load_shipped

    s = KnowledgeStore.memory()
    load_shipped(s)
    return s


@lru_cache(maxsize=1)
def shipped_store() -> KnowledgeStore:
    """One in-memory store with the shipped catalogue for the whole test session:
    read it, never write it (runs that store trajectories use ``catalog_store()``)."""
    return catalog_store()


@pytest.fixture()
def shipped() -> KnowledgeStore:
    return shipped_store()
