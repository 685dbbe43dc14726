"""Shared fixtures: the shipped files, a validator, in-memory stores."""

from __future__ import annotations

from pathlib import Path

import pytest
import rdflib

from diagkg.store import KnowledgeStore
from diagkg.validation import Validator

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ROOT / "scenarios" / "systems"
DATA = Path(__file__).resolve().parent / "data"
THREE_CUBES = SYSTEMS / "three_cubes.ttl"
SYS = rdflib.Namespace("https://w3id.org/diagkg/system/three_cubes/")
TC_TRIPLES = len(rdflib.Graph().parse(THREE_CUBES, format="turtle"))


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
