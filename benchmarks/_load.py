"""The load average, printed beside every figure a benchmark prints (the project's rule).

The benchmarks are run as scripts (``.venv/bin/python benchmarks/X.py``), so this folder is
first on ``sys.path`` and they import it as ``from _load import load_average``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


def load_averages() -> list[float] | None:
    """The 1-, 5- and 15-minute load averages now, rounded to two decimals (for a JSON ``"load"``
    key), or ``None`` where the platform has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return None


def load_average(averages: Sequence[float] | None = None) -> str:
    """The 1-, 5- and 15-minute load averages, two decimals each: ``"load 0.93 0.80 0.71"``.

    Those of now unless ``averages`` gives them (as :func:`load_averages` returned them, in
    another process perhaps); ``"load ?"`` where the platform has none.
    """
    if averages is None:
        averages = load_averages()
    if averages is None:
        return "load ?"
    return "load " + " ".join(f"{x:.2f}" for x in averages)
