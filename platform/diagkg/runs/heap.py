"""The heap of a process that runs session after session (a campaign's worker, a campaign run
in its own process, a benchmark).

What the sessions of a process share (the simulators' results, the model-based worlds'
predictions and refutations: :mod:`diagkg.agents.worlds`) grows to a million objects and more,
and every full collection of Python's cyclic garbage collector walks all of them: about a second
each once the heap holds 1.5 GB, falling inside whichever decision it lands in. :func:`settle`,
called before a session, collects what the sessions before it left behind and moves what is still
alive into the collector's permanent generation (:func:`gc.freeze`), which later collections do not
walk. It does so at most every :data:`EVERY_SECONDS` (a collection costs a few milliseconds, a lot
beside a session of a few milliseconds), and every :data:`UNFREEZE_EVERY` times it walks the
permanent generation once more, so that what was frozen and has since become unreachable in a
cycle (an entry a bounded memo let go) is collected too. Objects freed by their reference count are
freed whether frozen or not.

``FREEZE = False`` (or ``DIAGKG_SETTLE=0`` in the environment, which worker processes inherit) leaves
the collector as Python set it: for a program embedding the campaigns that manages its own heap, or to
compare."""

from __future__ import annotations

import gc
import os
import time

FREEZE = os.environ.get("DIAGKG_SETTLE", "1") != "0"      # settle between sessions (see the module's docstring)
EVERY_SECONDS = 0.5         # the least time between two settlings
UNFREEZE_EVERY = 100        # settlings between two walks of everything frozen


class _Settled:
    times = 0               # settlings done in this process
    last = float("-inf")    # when the last one ended (time.monotonic)


def settle() -> None:
    """Before a session: unless the last settling was less than :data:`EVERY_SECONDS` ago, collect
    what was left behind and freeze what is still alive (every :data:`UNFREEZE_EVERY` settlings,
    unfreeze everything first, so that all of it is walked once)."""
    if not FREEZE or time.monotonic() - _Settled.last < EVERY_SECONDS:
        return
    _Settled.times += 1
    if _Settled.times % UNFREEZE_EVERY == 0:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    _Settled.last = time.monotonic()


__all__ = ["EVERY_SECONDS", "FREEZE", "UNFREEZE_EVERY", "settle"]
