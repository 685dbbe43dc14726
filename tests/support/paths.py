"""Where the shipped files and the tests' own data lie."""

from __future__ import annotations

from pathlib import Path

import rdflib

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = ROOT / "scenarios" / "systems"
DATA = ROOT / "tests" / "data"
THREE_CUBES = SYSTEMS / "three_cubes.ttl"
SYS = rdflib.Namespace("https://w3id.org/diagkg/system/three_cubes/")
# the file's triples plus the two provenance triples a load adds (dk:loadedFrom, dk:contentHash)
TC_TRIPLES = len(rdflib.Graph().parse(THREE_CUBES, format="turtle")) + 2
