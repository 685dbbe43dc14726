"""The small system the conformance check (:mod:`diagkg.runs.conformance`) works on: a torch (a
battery, a switch, a bulb with its lead, a power LED with its resistor, a return lead, in one case)
with three scenarios (a budget of 30 rounds each, ample for nine parts), written as a user would write
them (Turtle files in ``conformance_data/``, shipped in the package) and loaded into a store of the
check's own.

============  ======  ===============================================================
scenario      faults  what it is for
============  ======  ===============================================================
``CONF.T1``   1       a flat battery: a whole session
``CONF.T2``   1       the bulb lead off its terminal: a whole session
``CONF.T3``   2       both: hypotheses judged wrong, overbroad and partial
============  ======  ===============================================================
"""

from __future__ import annotations

from importlib import resources

from ..kg.loading import load_documents
from ..kg.rdfio import parse_text
from ..kg.store import KnowledgeStore

FILES = ("torch.ttl", "CONF.T1.ttl", "CONF.T2.ttl", "CONF.T3.ttl")
WHOLE_SESSIONS = ("CONF.T1", "CONF.T2")
TWO_FAULTS = "CONF.T3"


def load_torch(store: KnowledgeStore) -> None:
    """Load the torch and its scenarios into ``store`` (validated, as a user's files would be)."""
    folder = resources.files("diagkg.runs") / "conformance_data"
    load_documents(store, [(parse_text((folder / name).read_text(encoding="utf-8"), name), f"diagkg:conformance/{name}")
                           for name in FILES])


__all__ = ["FILES", "TWO_FAULTS", "WHOLE_SESSIONS", "load_torch"]
