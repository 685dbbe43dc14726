"""DC operating points with ngspice (through PySpice's shared-library binding).

One ngspice instance serves the whole process (ngspice is not thread-safe:
run parallel simulations in separate processes). Circuits are parsed once per
*topology* (which elements exist and which nodes they join); ngspice keeps
every parsed circuit, and a new state of the same topology only changes values
with ``alter`` before ``op``. Results are read straight from ngspice's vectors,
without building PySpice analysis objects.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from typing import Hashable

from ..errors import SimulationError

log = logging.getLogger(__name__)

TEMPERATURE = 25.0

Topology = tuple[Hashable, ...]   # a key that stands for one list of elements (same elements, same nodes)


@dataclass(frozen=True)
class Element:
    """One SPICE element: kind R, V or D, its two nodes, and for D its model."""

    name: str            # lower-case SPICE instance name, e.g. "r_main_bulb"
    kind: str
    node_a: str
    node_b: str
    model: tuple[float, float] | None = None   # (IS, N) for diodes

    def card(self, value: float) -> str:
        if self.kind == "D":
            return f"{self.name} {self.node_a} {self.node_b} m_{self.name}"
        return f"{self.name} {self.node_a} {self.node_b} {value!r}"


class NgspiceEngine:
    """Solves netlists with the ngspice shared library; keeps parsed circuits."""

    _instance: "NgspiceEngine | None" = None
    _lock = threading.Lock()
    MAX_CIRCUITS = 400
    RELEASE_EVERY = 500

    def __init__(self) -> None:
        os.environ.setdefault("PYSPICE_NO_LOGGING", "1")
        # ngspice's own notes (no spinit file, gmin stepping…) reach PySpice's
        # logger as errors; diagkg reports failures itself.
        logging.getLogger("PySpice").setLevel(logging.CRITICAL)
        try:
            from PySpice.Spice.NgSpice.Shared import NgSpiceShared, ffi
        except ImportError as exc:  # pragma: no cover - PySpice is a dependency
            raise SimulationError(f"PySpice is not installed: {exc}") from None
        try:
            self._ng = NgSpiceShared.new_instance()
        except OSError as exc:
            raise SimulationError(
                f"cannot load the ngspice shared library ({exc}); install Debian's libngspice0-dev "
                "(scripts/setup.sh does) or set NGSPICE_LIBRARY_PATH") from None
        self._ffi = ffi
        self._lib = self._ng._ngspice_shared
        self._order: list[Topology] = []          # topologies in load order
        self._index: dict[Topology, int] = {}     # topology -> load position
        self._values: dict[Topology, dict[str, float]] = {}
        self._current: Topology | None = None
        self._runs = 0
        self.parses = 0
        self._topologies: dict[tuple[Element, ...], int] = {}

    def topology_id(self, elements: tuple[Element, ...]) -> int:
        """A small number standing for a tuple of elements (hash it once, not per call)."""
        return self._topologies.setdefault(elements, len(self._topologies))

    @classmethod
    def shared(cls) -> "NgspiceEngine":
        with cls._lock:
            if cls._instance is None:
                cls._instance = NgspiceEngine()
            return cls._instance

    # -- low level ---------------------------------------------------------
    def _command(self, text: str) -> None:
        if self._lib.ngSpice_Command(text.encode("ascii")) != 0:
            raise SimulationError(f"ngspice refused the command {text!r}")

    def _load(self, topology: Topology, elements: list[Element], values: dict[str, float]) -> None:
        if len(self._order) >= self.MAX_CIRCUITS:
            self._command("remcirc")  # pragma: no cover - long campaigns only
            self._order.clear()
            self._index.clear()
            self._values.clear()
        lines = [f"diagkg circuit {len(self._order) + 1}"]
        models = []
        for el in elements:
            lines.append(el.card(values.get(el.name, 0.0)))
            if el.model is not None:
                models.append(f".model m_{el.name} D(IS={el.model[0]!r} N={el.model[1]!r})")
        lines += models
        lines.append(f".options temp={TEMPERATURE} tnom={TEMPERATURE}")
        lines.append(".end")
        self._ng.load_circuit("\n".join(lines))
        self.parses += 1
        self._index[topology] = len(self._order)
        self._order.append(topology)
        self._values[topology] = dict(values)
        self._current = topology

    def _select(self, topology: Topology) -> None:
        if self._current == topology:
            return
        # ngspice numbers circuits newest first, starting at 1
        number = len(self._order) - self._index[topology]
        self._command(f"setcirc {number}")
        self._current = topology

    def _vector(self, name: str) -> float:
        info = self._lib.ngGet_Vec_Info(name.encode("ascii"))
        if info == self._ffi.NULL or info.v_length < 1:
            raise SimulationError(f"ngspice returned no value for {name}")
        if info.v_realdata != self._ffi.NULL:
            return float(info.v_realdata[0])
        return float(info.v_compdata[0].cx_real)  # pragma: no cover - DC results are real

    # -- public ------------------------------------------------------------
    def operating_point(self, topology: Topology, elements: list[Element], values: dict[str, float],
                        nodes: list[str], branches: list[str]) -> tuple[dict[str, float], dict[str, float]]:
        """Solve ``.op``; returns (node voltages, branch currents of V sources).

        ``topology`` identifies ``elements`` (same key, same elements and nodes);
        only the values may differ between calls with the same key.
        """
        if topology not in self._index:
            self._load(topology, elements, values)
        else:
            self._select(topology)
            loaded = self._values[topology]
            for name, value in values.items():
                if loaded.get(name) != value:
                    self._command(f"alter {name} = {value!r}")
                    loaded[name] = value
        self._runs += 1
        if self._runs % self.RELEASE_EVERY == 0:
            self._command("destroy all")   # old result plots
            self._ng._stdout.clear()        # PySpice keeps every line ngspice prints
            self._ng._stderr.clear()
        before = self._ffi.string(self._lib.ngSpice_CurPlot())
        if self._lib.ngSpice_Command(b"op") != 0:
            raise SimulationError("ngspice could not run the operating point")
        if self._ffi.string(self._lib.ngSpice_CurPlot()) == before:
            # no new plot: the operating point failed (e.g. a singular matrix)
            raise SimulationError("ngspice found no operating point for this circuit")
        voltages = {n: self._vector(n) for n in nodes}
        currents = {b: self._vector(f"{b}#branch") for b in branches}
        return voltages, currents
