"""Another git revision of diagkg to measure beside this checkout (``--before REV`` of the benchmarks).

:func:`checkout` extracts the revision's package and its declarative folders (``git archive``)
and links each folder where the package looks for it first, so that the old code reads its own
queries, shapes and ontology; put the returned folder first on ``PYTHONPATH``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("ontology", "shapes", "queries", "mappings", "scenarios", "schemas")


def checkout(rev: str, into: Path) -> Path:
    """Extract ``rev`` into ``into``; returns the folder to put first on ``PYTHONPATH``."""
    into.mkdir(parents=True, exist_ok=True)
    present = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", rev], check=True,
                             capture_output=True, text=True).stdout.split()
    folders = [f for f in FOLDERS if f in present]
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "platform", *folders], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    data = into / "platform" / "diagkg" / "data"
    for folder in folders:
        (data / folder).symlink_to(into / folder, target_is_directory=True)
    return into / "platform"
