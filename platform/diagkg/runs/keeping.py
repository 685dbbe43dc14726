"""No finished session is lost.

* :func:`store_or_keep` stores a session's trajectory, waiting for the write lock as the store
  says (its ``wait``) and trying again for as long as the caller's ``retry`` wants; when the store
  still cannot take it, the trajectory is saved as an N-Quads file (next to the store, else in the
  user's cache folder) and :class:`~diagkg.errors.TrajectoryKept` says where, with the command that
  loads it (``diagkg load`` takes a trajectory file like any other: validated, then stored).
* :func:`crashed_record` is the record of a session that raised: end ``crashed``, with the rounds
  it had played and what went wrong (a failure, never a dropped session).
"""

from __future__ import annotations

import os
import shlex
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import pyoxigraph as ox

from ..env.outcomes import End
from ..errors import StoreError, StoreLockedError, TrajectoryKept
from . import scoring, trajectory
from .trajectory import SessionRecord

if TYPE_CHECKING:  # pragma: no cover
    from ..env.scenarios import Scenario
    from ..kg.store import KnowledgeStore

FOLDER_SUFFIX = ".unstored"            # <store>.unstored/ beside an on-disk store
CACHE_FOLDER = "unstored-trajectories"  # in $XDG_CACHE_HOME/diagkg/ (~/.cache/diagkg/) otherwise


def store_or_keep(store: KnowledgeStore, record: SessionRecord, catalogue_iris: dict[str, str], *,
                  retry: Callable[[StoreLockedError], bool] | None = None) -> str:
    """Store ``record``'s trajectory (as :func:`diagkg.runs.trajectory.store_record`) and return its IRI.

    Each attempt waits for the write lock as long as the store's ``wait`` says; while the lock is
    still held and ``retry`` (given the error) returns true, it tries again. When the store cannot
    take the trajectory, it is saved to a file and :class:`~diagkg.errors.TrajectoryKept` is raised."""
    reason: StoreError
    while True:
        try:
            return trajectory.store_record(store, record, catalogue_iris)
        except StoreLockedError as exc:
            if retry is not None and retry(exc):
                continue
            reason = exc
        except TrajectoryKept:  # pragma: no cover - store_record never raises it
            raise
        except StoreError as exc:
            reason = exc
        break
    quads = trajectory.to_quads(record, catalogue_iris)
    file = keep_quads(store, quads, record.trajectory_id)
    raise TrajectoryKept(reason, file, load_command(store, file))


def folders(store: KnowledgeStore) -> list[Path]:
    """Where an unstored trajectory goes, in order: beside an on-disk store, then the cache folder."""
    out: list[Path] = []
    if store.path is not None:
        where = store.path.absolute()
        out.append(where.parent / (where.name + FOLDER_SUFFIX))
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    out.append(Path(cache) / "diagkg" / CACHE_FOLDER)
    return out


def keep_quads(store: KnowledgeStore, quads: Iterable[ox.Quad], name: str) -> Path:
    """Write ``quads`` as N-Quads to ``{name}.nq`` in the first folder of :func:`folders` that takes it
    (written whole, then renamed: a half-written file never has the final name)."""
    data = ox.serialize(list(quads), format=ox.RdfFormat.N_QUADS) or b""
    problems: list[str] = []
    for folder in folders(store):
        target = folder / f"{name}.nq"
        part = folder / f".{name}.nq.part"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            part.write_bytes(data)
            os.replace(part, target)
            return target
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror or exc}")
    raise StoreError("the finished session's trajectory could not be stored nor saved to a file ("
                     + "; ".join(problems) + ")")


def load_command(store: KnowledgeStore, file: Path) -> str:
    """The command that stores a kept file into ``store``."""
    where = [] if store.in_memory else ["--store", store.location]
    return shlex.join(["diagkg", *where, "load", str(file)])


def crashed_record(scenario: Scenario, assistant: str, config: dict[str, Any], seed: int, exc: BaseException, *,
                   rounds: Sequence[dict[str, Any]] = (), started: datetime | None = None,
                   wall_time: float = 0.0, budget: int | None = None) -> SessionRecord:
    """The trajectory of a session that raised ``exc`` after playing ``rounds`` (the runner's round
    entries): end ``crashed``, its last round saying what went wrong and where, and the diagnosis figures of
    what it played (:mod:`~diagkg.runs.scoring`; against the scenario's faulty components, the live session being
    gone): an assistant that replaced healthy parts and then raised read no false removals."""
    from .runner import SECRET_KEYS

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" (at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})" if where else ""
    message = f"The session crashed: {type(exc).__name__}: {exc}{place}"
    played = [dict(r) for r in rounds]
    played.append({"round": len(played) + 1, "kind": "none", "intention": "(crashed)", "message": message,
                   "cost": 0.0, "success": False, "executed": []})
    record = SessionRecord(
        trajectory_id=trajectory.new_id(scenario.number, assistant, seed), scenario_iri=scenario.iri,
        scenario_number=scenario.number, system_key=scenario.key, system_iri=scenario.system_iri,
        assistant=assistant, config={k: v for k, v in config.items() if k not in SECRET_KEYS}, seed=seed,
        budget=scenario.budget if budget is None else budget, end=End.CRASHED,
        total_cost=float(sum(float(r.get("cost", 0.0)) for r in played)), rounds=played,
        started=started or datetime.now(timezone.utc), wall_time=wall_time)
    record.extra.extend(scoring.triples(scoring.score(scenario.faulty, played), ox.NamedNode(record.iri + "#session")))
    return record
