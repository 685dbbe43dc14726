"""What the sessions of one campaign may spend together, across its worker processes.

A campaign with a cost limit (``diagkg evaluate --cost-limit``) gives each new session what remains as its
own ``cost_limit``. With ``--workers N``, N sessions and more are in flight at once, each given the same
remainder, so together they could spend several times what was left. The campaign's local worker processes
therefore share one small file (in the campaign's folder): before a call, the client reserves its estimated
cost there (the largest the call can be, as :meth:`~diagkg.llm.client.LLMClient._check_budget` estimates it)
and is refused, as by its own limit, when what the campaign's sessions spent and reserved in this run would
pass what the campaign had left when the run began; after the call, the reservation becomes what the call
cost. Calls take turns on the file (``flock``) for a few microseconds, not for the call. A call cut short by
its worker's death leaves its reservation (the campaign then stops a little early, never late).

Installed in each worker by :func:`install` (:func:`diagkg.evaluation.sessions.init_local_worker`); a
session run in the campaign's own process, or on a Dask cluster, has no such file (one session at a time in
the first; a cluster's workers share no folder: see docs/evaluation/campaigns.md).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass

__all__ = ["SharedMoney", "create", "current", "install"]


@dataclass(frozen=True)
class SharedMoney:
    """The file at ``path`` holding what this run's sessions spent and hold reserved, and ``allowance``, what the
    campaign had left when the run began."""

    path: str
    allowance: float

    def _turn(self, change: tuple[float, float] | None, fits: float | None = None) -> tuple[float, float] | None:
        """Under the file's lock: read (spent, reserved); with ``fits``, None (nothing written) when spent +
        reserved + ``fits`` passes the allowance; else add ``change`` and return the totals before it."""
        with open(self.path, "r+", encoding="ascii") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                words = f.read().split()
                spent, reserved = (float(words[0]), float(words[1])) if len(words) == 2 else (0.0, 0.0)
                if fits is not None and spent + reserved + fits > self.allowance + 1e-12:
                    return None
                if change is not None:
                    f.seek(0)
                    f.truncate()
                    f.write(f"{spent + change[0]!r} {max(0.0, reserved + change[1])!r}\n")
                    f.flush()
                return spent, reserved
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def reserve(self, estimate: float) -> bool:
        """Hold ``estimate`` for a call about to be sent; False (nothing held) when it does not fit."""
        return self._turn((0.0, estimate), fits=estimate) is not None

    def settle(self, estimate: float, money: float) -> None:
        """The call held ``estimate`` and cost ``money``."""
        self._turn((money, -estimate))

    def totals(self) -> tuple[float, float]:
        """What this run's sessions spent, and hold reserved."""
        found = self._turn(None)
        assert found is not None
        return found


def create(folder: str, allowance: float) -> SharedMoney:
    """The shared file of a run of a campaign that had ``allowance`` left, in ``folder`` (the campaign's)."""
    path = os.path.join(folder, "money")
    with open(path, "w", encoding="ascii") as f:
        f.write("0.0 0.0\n")
    return SharedMoney(path, allowance)


_INSTALLED: SharedMoney | None = None


def install(shared: SharedMoney | None) -> None:
    """Make ``shared`` the file every LLM client of this (worker) process reserves its calls in."""
    global _INSTALLED
    _INSTALLED = shared


def current() -> SharedMoney | None:
    """The shared file of the campaign this process works for, if any."""
    return _INSTALLED
