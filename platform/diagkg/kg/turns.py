"""Turns on one on-disk store: a writer has the store to itself from opening it for writing until it
lets go, and a reader opens its read-only handle only between writers.

RocksDB (under Oxigraph) lets a process open a read-only handle while another process writes, but
pyoxigraph's ``Store.read_only`` calls that undefined behaviour: the opening reads the manifest and
replays the write-ahead log that the writer is appending to (Oxigraph even recycles its log files,
overwriting them in place). A ``diagkg load`` beside a running campaign was seen to run away there
(21.7 GB, then an allocation failure). So the processes that share a store take turns through an
advisory lock (``flock``) on :data:`LOCK_FILE` in the store's folder:

- a writer holds it exclusively for as long as its handle is open (a campaign, per commit);
- a reader shares it only while it opens its handle (or copies the store: :func:`reading`), which
  takes milliseconds; once open, a handle reads table files, which never change (one that a later
  compaction removed is met as "no such file", and the read is tried again on a fresh handle);
- a writer that waits holds a second lock, :data:`GATE_FILE`, which a reader must pass before it opens:
  readers that open again and again cannot keep a writer out (measured: two readers opening in a loop
  kept a writer waiting past its 60 s without it).

A reader waits for a writer's turn to end, up to the store's ``wait``; a thread that writes the store
opens its own readers without waiting for itself (another thread of the same process waits, as another
process does: the locks belong to each opening of the lock file). Where the lock file cannot be opened (a
read-only folder of somebody else's), nothing is coordinated, as before, and RocksDB's own lock still
keeps writers apart. Processes that do not take turns (an ``oxigraph serve`` on the folder, a script
with pyoxigraph) are not kept out by this lock; RocksDB's lock keeps them from writing at the same time.
The lock files are opened close-on-exec (a command started meanwhile does not inherit a turn), but a
child forked without an exec while its parent holds a turn holds it too, until it ends: diagkg's own
worker processes are spawned.
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pyoxigraph as ox

from ..errors import StoreError, StoreLockedError

LOCK_FILE = "diagkg-turns.lock"
GATE_FILE = "diagkg-gate.lock"     # held by a writer from the moment it waits: no new reader slips in before it


# what a store's folder holds of its own (RocksDB's files and the lock files above); anything else is a user's
_STORE_FILES = re.compile(r"CURRENT|IDENTITY|LOCK|LOG(\.old.*)?|MANIFEST-\d+|OPTIONS-\d+(\.dbtmp)?|\d+\.(sst|log|blob)"
                          r"|diagkg-[\w-]+\.lock")


def held_by(path: Path) -> str:
    """The other processes holding a lock on the store at ``path`` (RocksDB's ``LOCK``: a writer, diagkg's or an
    ``oxigraph serve``; or a turn), as ``pid N (command)``, as far as the machine tells (Linux's
    ``/proc/locks``); empty when it tells nothing. For a message only."""
    wanted: set[tuple[str, int]] = set()
    for name in ("LOCK", LOCK_FILE):
        try:
            st = os.stat(path / name)
        except OSError:
            continue
        wanted.add((f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}", st.st_ino))
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return ""
    pids: list[str] = []
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[-4] in pids or fields[-4] == str(os.getpid()):
            continue
        dev, _, inode = fields[-3].rpartition(":")
        if inode.isdigit() and (dev, int(inode)) in wanted:
            pids.append(fields[-4])
    out = []
    for pid in pids[:3]:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            command = ""
        out.append(f"pid {pid} ({command[:160]})" if command else f"pid {pid}")
    return ", ".join(out)


def foreign_files(folder: Path, most: int = 3) -> list[str]:
    """Up to ``most`` names of what ``folder`` holds that no store writes (none when it is missing, empty or
    a store's, created or being created)."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if not _STORE_FILES.fullmatch(p.name))[:most]


def check_new_store(path: Path, read_only: bool) -> None:
    """Refuse to open ``path``, which holds no store yet, as one: a file; a folder of other files (a project's, a
    home: a store writes dozens of files of its own into it); or any folder when only reading."""
    if path.exists() and not path.is_dir():
        raise StoreError(f"{path} is a file, not a store (a store is a folder of its own)")
    if read_only:
        raise StoreError(f"there is no store at {path} yet; load something into it first")
    if others := foreign_files(path):
        raise StoreError(f"{path} holds files that are not a store's ({', '.join(others)}): name a new folder for the "
                         "store, or an empty one")


class _Held(threading.local):
    """Write turns this thread holds now (``box[0]``): its own readers do not wait for them (another
    thread's do). A turn keeps its thread's box, so that a release from elsewhere counts there."""

    def __init__(self) -> None:
        self.box = [0]


_held = _Held()


def _lock_fd(path: Path, name: str) -> int | None:
    """A lock file of the store at ``path``, opened (created if need be); None where that is impossible."""
    target = path / name
    for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
        try:
            return os.open(target, flags | os.O_CLOEXEC, 0o666)
        except OSError:
            continue
    return None


def is_lock_error(exc: OSError) -> bool:
    """Whether opening for writing failed only because another writer holds the lock (RocksDB's words;
    a ``LOCK`` file that cannot be opened, ``while open a file for lock: …``, is no writer to wait for)."""
    text = str(exc).lower()
    return "lock hold by current process" in text or (
        "while lock file" in text and "resource temporarily unavailable" in text)


class _NoFlock(Exception):
    """The file system takes no ``flock``: there is nothing to coordinate."""


def _take(fd: int, how: int, deadline: float, path: Path, wait: float, say: Callable[[], None]) -> None:
    """``flock(fd, how)``, polling until ``deadline``, then :class:`~diagkg.errors.StoreLockedError`."""
    delay = 0.001           # short polls: a campaign's writer lets go for a second between its commits,
    while True:             # a writer that commits back to back for milliseconds only
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StoreLockedError(path, wait, holder=held_by(path)) from None
            say()
            time.sleep(delay)
            delay = min(delay * 1.5, 0.01)
        except OSError:
            raise _NoFlock from None


def _teller(on_wait: Callable[[str], None] | None, message: str) -> Callable[[], None]:
    told = False

    def say() -> None:
        nonlocal told
        if not told and on_wait is not None:
            on_wait(message)
        told = True
    return say


class WriteTurn:
    """An exclusive turn on a store, held until :meth:`release`."""

    def __init__(self, fds: tuple[int, ...]):
        self._fds = fds
        self._released = False
        self._box = _held.box         # the taking thread's count, wherever it is released
        self._box[0] += 1

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        for fd in reversed(self._fds):
            os.close(fd)         # lets go of its lock
        self._box[0] -= 1


def write_turn(path: Path, wait: float, on_wait: Callable[[str], None] | None = None) -> WriteTurn:
    """The store's write turn: waits up to ``wait`` seconds for the writer before (its whole turn) and for
    the readers opening their handles now (milliseconds; none starts once this one waits), then raises
    :class:`~diagkg.errors.StoreLockedError`."""
    deadline = time.monotonic() + max(wait, 0.0)
    say = _teller(on_wait, f"waiting for the store at {path} (another process is writing)…")
    fds: list[int] = []
    try:
        for name in (GATE_FILE, LOCK_FILE):
            fd = _lock_fd(path, name)
            if fd is None:
                break
            fds.append(fd)
            _take(fd, fcntl.LOCK_EX, deadline, path, wait, say)
    except _NoFlock:
        pass
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return WriteTurn(tuple(fds))


def try_write_turn(path: Path) -> WriteTurn | None:
    """The store's write turn if nobody holds it now, else None."""
    try:
        return write_turn(path, 0.0)
    except StoreLockedError:
        return None


@contextmanager
def reading(path: Path, wait: float, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """A reader's turn on the store at ``path`` for the ``with`` block (open a handle, copy the store):
    waits up to ``wait`` seconds while another process writes or waits to write, then raises
    :class:`~diagkg.errors.StoreLockedError`."""
    gate = None if _held.box[0] else _lock_fd(path, GATE_FILE)
    turn = None if gate is None else _lock_fd(path, LOCK_FILE)
    try:
        if gate is not None and turn is not None:
            deadline = time.monotonic() + max(wait, 0.0)
            say = _teller(on_wait, f"waiting for the store at {path} (another process is committing)…")
            try:
                _take(gate, fcntl.LOCK_SH, deadline, path, wait, say)     # no writer holds it or waits for it…
                fcntl.flock(gate, fcntl.LOCK_UN)
                _take(turn, fcntl.LOCK_SH, deadline, path, wait, say)     # …and none writes now
            except _NoFlock:
                pass
            except StoreLockedError:
                raise StoreLockedError(path, wait, reading=True, holder=held_by(path)) from None
        yield
    finally:
        for fd in (turn, gate):
            if fd is not None:
                os.close(fd)     # lets go of its lock


def open_read_only(path: Path, wait: float = 60.0, on_wait: Callable[[str], None] | None = None) -> ox.Store:
    """A read-only handle on the on-disk store, opened between writers (:func:`reading`). A file
    that the last writer's compaction replaced (``No such file or directory``) is tried again."""
    delay = 0.01
    for attempt in range(12):
        try:
            with reading(path, wait, on_wait):
                return ox.Store.read_only(str(path))
        except (OSError, RuntimeError) as exc:
            if "no such file" in str(exc).lower() and attempt < 11:
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
                continue
            raise StoreError(f"cannot read the store at {path}: {exc} (if a process creating it was "
                             "interrupted, any command that writes, e.g. a load, finishes it)") from None
    raise AssertionError("unreachable")  # pragma: no cover
