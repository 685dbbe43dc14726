"""Work that must not hold up its caller for ever: :func:`in_thread` runs it in a daemon thread of its own and
waits at most a time limit. Oxigraph evaluates a query without looking at signals, and an HTTP client's timeout
bounds each wait for a byte, not a whole answer: the caller's wait is what Ctrl-C interrupts and what a limit
ends. Past the limit the work is left running (a daemon thread: it ends with the process) and :class:`StillRunning`
is raised, for the caller to say what that means."""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")


class StillRunning(Exception):
    """The work had not finished within its time limit (it runs on in its daemon thread)."""


def in_thread(work: Callable[[], T], timeout: float | None, name: str) -> T:
    """``work()``'s result, run in a daemon thread named ``name`` and waited for here at most ``timeout`` seconds
    (None: as long as it takes; Ctrl-C interrupts the wait, a KeyboardInterrupt as anywhere else). What it raises is
    raised here as it was; past ``timeout``, :class:`StillRunning`."""
    done: dict[str, T] = {}
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread
            failed.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise StillRunning(name)
    if failed:
        raise failed[0]
    return done["value"]


__all__ = ["StillRunning", "in_thread"]
