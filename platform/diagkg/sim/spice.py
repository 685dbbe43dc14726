"""DC operating points with ngspice, through its shared-library API.

One ngspice instance serves the whole process (ngspice is not thread-safe:
run parallel simulations in separate processes). Circuits are parsed once per
*topology* (which elements exist and which nodes they join); ngspice keeps
every parsed circuit, and a new state of the same topology only changes values
with ``alter`` before ``op``. Results are read straight from ngspice's vectors
and freed as soon as they are read, so a solve costs the same after a million
solves as after one.

What an engine gives back is one :class:`OperatingPoint`: every node's
voltage and every element's current, as ngspice solved them. The simulator
computes every current, power, light and meter reading from it and from
nothing else; any object with :meth:`SolverEngine.operating_point` can
stand in for :class:`NgspiceEngine` (e.g. the PySpice reference engine of
:mod:`diagkg.sim.pyspice_engine`).

Sign convention, for every element kind: an element's current is the current
that enters it at ``node_a``, flows through it and leaves at ``node_b``
(ngspice's own convention for ``v#branch``, ``@r[i]`` and ``@d[id]``): a
resistor or diode that conducts from ``node_a`` to ``node_b`` carries a
positive current, a voltage source that delivers power a negative one.

Where the currents come from (:meth:`NgspiceEngine.operating_point`):

* V: ngspice's branch current ``v#branch``;
* D: ngspice's device current ``@d[id]``, saved with ``.save all @d…[id]``
  (ngspice's diode model is not recomputed here: it differs from the
  textbook equation, e.g. it never uses a saturation current below 1e-28 A);
* R: ``(v(node_a) - v(node_b)) / R`` from ngspice's node voltages, which is
  how ngspice computes ``@r[i]`` itself (bit for bit) without saving a
  vector per resistor.

The currents at a node sum to zero as closely as ngspice's Newton iteration
converged (its ``reltol``; tests/sim/test_physics.py checks every node of
the shipped systems against 1 µA or 0.1 %).

The library is reached with :mod:`ctypes` and the five functions of
``sharedspice.h`` diagkg calls. PySpice's binding (``NgSpiceShared``) does the
same and much more, but importing it costs 0.15–0.2 s (numpy and PySpice's
unit system), more than a whole ``diagkg simulate`` may take. (The original
prototype, measured in ``benchmarks/original/``, runs on PySpice.)
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Hashable, Protocol

from ..errors import SimulationError

log = logging.getLogger(__name__)

TEMPERATURE = 25.0
# ngspice's relative tolerance. Its default (1e-3) lets Newton's iteration stop while a node
# near 12 V may still move by up to 12 mV, and ngspice reports the node voltages of the last
# iterate but one, at which its devices were evaluated: a diode conducting 0.1 A then shows
# 2 % more current than the resistor in series with it. At 1e-4 the currents of the shipped systems'
# states and of random circuits sum to zero at every node within 1 uA or 0.1 % (tests/sim/test_physics.py,
# tests/sim/test_random_circuits.py); 1e-5 and below make the states a model of the system tries
# (ends off, shorts) need many more iterations or gmin stepping: the model-based assistant took 2-10x
# longer on ten cubes at 1e-6 (3.6 s at 1e-4, 4.6 s at 1e-3, 9.3 s at 1e-5, 10.8 s at 1e-6 on 10CC.S.5).
RELTOL = 1e-4

Topology = tuple[Hashable, ...]   # a key that stands for one list of elements (same elements, same nodes)

_TOPOLOGIES: dict[tuple["Element", ...], int] = {}
_TOPOLOGY_LOCK = threading.Lock()


def topology_id(elements: tuple["Element", ...]) -> int:
    """A small number standing for a tuple of elements, the same for the whole process (hash it
    once, not per solve): a simulator's topology keys are built from it."""
    known = _TOPOLOGIES.get(elements)
    if known is None:
        with _TOPOLOGY_LOCK:
            known = _TOPOLOGIES.setdefault(elements, len(_TOPOLOGIES))
    return known


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


def element_power(op: "OperatingPoint", el: Element) -> float:
    """The power an element dissipates (negative: delivers) at an operating point."""
    va = 0.0 if el.node_a == "0" else op.voltages[el.node_a]
    vb = 0.0 if el.node_b == "0" else op.voltages[el.node_b]
    return (va - vb) * op.currents[el.name]


ISLAND_OHMS = 1e12      # a circuit nothing joins to ground, tied to it (see island_ties)


def island_ties(elements: list[Element]) -> list[Element]:
    """One resistor of :data:`ISLAND_OHMS` to ground from each part of the circuit that no element joins to
    ground, as ``R`` elements: without it such a part is not solved (a spare battery whose two ends are open by
    design: a source between two nodes nothing else touches), while a tie that carries no current changes
    nothing it shows. A circuit wholly joined to ground (every shipped one) gets none, nor one with a diode, which
    ngspice solves as it is (a bicycle's rear light, written with nothing in common with the front one)."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = node = parent[parent[node]]
        return node

    for el in elements:
        parent[root(el.node_a)] = root(el.node_b)
    ground = root("0")
    held = {root(el.node_a) for el in elements if el.kind == "D"}       # ngspice's gmin across a junction holds it
    islands = sorted({root(n): n for n in sorted(parent, reverse=True) if root(n) not in (ground, *held)}.values())
    return [Element(f"rtie{k}", "R", node, "0") for k, node in enumerate(islands)]


@dataclass(frozen=True)
class OperatingPoint:
    """A solved DC operating point.

    ``voltages``: every node asked for, in volts against ground (node ``"0"``);
    ``currents``: every element (R, V and D) by name, in amperes, entering it at
    ``node_a`` and leaving at ``node_b``.
    """

    voltages: dict[str, float]
    currents: dict[str, float]
    grounded: dict[str, float] | None = None      # the voltages with ground ("0": 0.0), when the engine made it


class SolverEngine(Protocol):
    """What the simulator needs of an engine."""

    def operating_point(self, topology: Topology, elements: list[Element], values: dict[str, float],
                        nodes: list[str]) -> OperatingPoint:
        """Solve ``.op`` of ``elements`` with ``values`` (ohms for R, volts for V; D elements carry
        their model). ``topology`` is a key that stands for ``elements`` (an engine may keep
        parsed circuits by it); ``nodes`` are the nodes whose voltages are wanted. Raises
        :class:`~diagkg.errors.SimulationError` when there is no operating point."""
        ...  # pragma: no cover - a protocol


class _VectorInfo(ctypes.Structure):
    _fields_ = [("v_name", ctypes.c_char_p), ("v_type", ctypes.c_int), ("v_flags", ctypes.c_short),
                ("v_realdata", ctypes.POINTER(ctypes.c_double)), ("v_compdata", ctypes.c_void_p),
                ("v_length", ctypes.c_int)]


_SendChar = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p)
_ControlledExit = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_bool, ctypes.c_bool, ctypes.c_int,
                                   ctypes.c_void_p)
LIBRARY_NAMES = ("libngspice.so.0", "libngspice.so", "libngspice.dylib", "ngspice.dll")


def _open_library() -> ctypes.CDLL:
    """ngspice's shared library: ``NGSPICE_LIBRARY_PATH`` (as PySpice reads it), else the system's."""
    explicit = os.environ.get("NGSPICE_LIBRARY_PATH")
    errors = []
    for name in [explicit] if explicit else LIBRARY_NAMES:
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            errors.append(str(exc))
    if not explicit:
        from ctypes.util import find_library

        found = find_library("ngspice")
        if found:
            return ctypes.CDLL(found)
    raise SimulationError(
        f"cannot load the ngspice shared library ({'; '.join(errors[:2])}); install Debian's "
        "libngspice0-dev (scripts/setup.sh does) or set NGSPICE_LIBRARY_PATH")


@dataclass(frozen=True)
class _Layout:
    """What to read of a solved circuit: every node's voltage (vector names as ngspice takes them),
    each V's branch current and each D's device current, and each R's nodes (its current is
    computed from them)."""

    nodes: tuple[tuple[str, bytes], ...]
    read: tuple[tuple[str, bytes], ...]               # element -> its current's vector (V and D)
    resistors: tuple[tuple[str, str, str], ...]       # (element, node_a, node_b)

    @staticmethod
    def of(elements: list[Element]) -> "_Layout":
        nodes = sorted({n for el in elements for n in (el.node_a, el.node_b) if n != "0"})
        return _Layout(tuple((n, n.encode("ascii")) for n in nodes),
                       tuple((el.name, (f"{el.name}#branch" if el.kind == "V" else f"@{el.name}[id]").encode("ascii"))
                             for el in elements if el.kind in ("V", "D")),
                       tuple((el.name, el.node_a, el.node_b) for el in elements if el.kind == "R"))


NGSPICE_PLACES = 100      # circuits ngspice (39) can hold safely at once: see NgspiceEngine.MAX_CIRCUITS


class NgspiceEngine:
    """Solves netlists with the ngspice shared library; keeps parsed circuits."""

    _instance: "NgspiceEngine | None" = None
    _lock = threading.Lock()
    # parsed circuits kept; past it the least recently solved is removed for each new one (see _remove_one). ngspice
    # keeps each circuit's parameter dictionary in a table of 100 places (numparam's dicos_list): a circuit loaded
    # while 100 are held gets none, and selecting it, then removing it, freed another circuit's dictionary, freed
    # again when that one was removed: the process aborted ("double free or corruption") or crashed. Kept below 100
    # whatever MAX_CIRCUITS says (NGSPICE_PLACES)
    MAX_CIRCUITS = 96

    def __init__(self) -> None:
        lib = self._lib = _open_library()
        lib.ngSpice_Init.argtypes = [_SendChar, ctypes.c_void_p, _ControlledExit, ctypes.c_void_p,
                                     ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        lib.ngSpice_Command.argtypes = [ctypes.c_char_p]
        lib.ngSpice_Circ.argtypes = [ctypes.POINTER(ctypes.c_char_p)]
        lib.ngGet_Vec_Info.argtypes = [ctypes.c_char_p]
        lib.ngGet_Vec_Info.restype = ctypes.POINTER(_VectorInfo)
        self._get_vector = lib.ngGet_Vec_Info
        lib.ngSpice_CurPlot.restype = ctypes.c_char_p
        # the last lines ngspice printed (its notes and errors), for messages
        self.messages: deque[str] = deque(maxlen=40)
        self.exited: int | None = None
        self._callbacks = (_SendChar(self._on_print), _ControlledExit(self._on_exit))   # kept alive
        if lib.ngSpice_Init(self._callbacks[0], None, self._callbacks[1], None, None, None, None) != 0:
            raise SimulationError("ngspice refused to start")
        self._order: list[Topology] = []          # the topologies ngspice holds, in load order (oldest first)
        self._index: dict[Topology, int] = {}     # topology -> its place in _order
        self._recent: OrderedDict[Topology, None] = OrderedDict()   # the same, least recently solved first
        self._loaded = 0                          # circuits loaded so far (for their titles)
        self._values: dict[Topology, dict[str, float]] = {}
        self._current: Topology | None = None
        self.parses = 0
        self.solves = 0
        self._layouts: dict[Topology, _Layout] = {}      # topology -> what to read after a solve
        self._solving = threading.Lock()        # one solve at a time in this process

    def _on_print(self, text: bytes | None, _id: int, _user: object) -> int:
        if text:
            self.messages.append(text.decode("utf-8", "replace"))
        return 0

    def _on_exit(self, status: int, _unload: bool, _quit: bool, _id: int, _user: object) -> int:
        self.exited = status   # ngspice wanted to quit: a later command will fail and say so
        return status

    @classmethod
    def shared(cls) -> "NgspiceEngine":
        with cls._lock:
            if cls._instance is None:
                cls._instance = NgspiceEngine()
            return cls._instance

    # -- low level ---------------------------------------------------------
    def _last_message(self) -> str:
        return self.messages[-1] if self.messages else "no message"

    def _command(self, text: str) -> None:
        if self._lib.ngSpice_Command(text.encode("ascii")) != 0:
            raise SimulationError(f"ngspice refused the command {text!r} ({self._last_message()})")

    def _load(self, topology: Topology, elements: list[Element], values: dict[str, float]) -> None:
        while len(self._order) >= min(self.MAX_CIRCUITS, NGSPICE_PLACES - 1):
            self._remove_one(next(iter(self._recent)))
        lines = [f"diagkg circuit {self._loaded + 1}"]
        models = []
        for el in elements:
            lines.append(el.card(values.get(el.name, 0.0)))
            if el.model is not None:
                models.append(f".model m_{el.name} D(IS={el.model[0]!r} N={el.model[1]!r})")
        lines += models
        lines.append(f".options temp={TEMPERATURE} tnom={TEMPERATURE} reltol={RELTOL!r}")
        diodes = [el.name for el in elements if el.kind == "D"]
        if diodes:
            # node voltages and branch currents as by default, and each diode's own current
            lines.append(".save all " + " ".join(f"@{name}[id]" for name in diodes))
        lines.append(".end")
        cards = (ctypes.c_char_p * (len(lines) + 1))(*[line.encode("ascii") for line in lines], None)
        if self._lib.ngSpice_Circ(cards) != 0:
            self._current = None      # whichever circuit ngspice now holds current, the next solve selects its own
            raise SimulationError(f"ngspice could not parse the circuit ({self._last_message()})")
        self.parses += 1
        self._loaded += 1
        self._index[topology] = len(self._order)
        self._order.append(topology)
        self._recent[topology] = None
        self._values[topology] = dict(values)
        self._layouts[topology] = _Layout.of(elements)
        self._current = topology

    def _select(self, topology: Topology) -> None:
        if self._current == topology:
            return
        # ngspice numbers the circuits it holds newest first, starting at 1
        number = len(self._order) - self._index[topology]
        self._command(f"setcirc {number}")
        self._current = topology

    def _remove_one(self, topology: Topology) -> None:
        """Remove ``topology``'s circuit from ngspice: selected, then ``remcirc`` (which removes the current circuit
        only), one at a time. (Past 1,500 circuits the engine removed them all, newest first, in one go: on the
        asymmetric chains' model-based sessions, seeds 0 then 2 in one process, the process aborted at the first
        such clearing, a circuit past ngspice's hundredth having freed another's parameter dictionary: see
        :data:`MAX_CIRCUITS` and docs/simulator.md.)"""
        self._select(topology)
        self._lib.ngSpice_Command(b"remcirc")
        self._current = None        # ngspice made another circuit current: the next solve selects its own
        place = self._index.pop(topology)
        del self._order[place]
        for later in self._order[place:]:
            self._index[later] -= 1
        del self._recent[topology]
        self._values.pop(topology, None)
        self._layouts.pop(topology, None)

    def _vector(self, name: bytes) -> float:
        """The first real value of a vector of the current plot (read with as few ctypes
        accesses as can be: a solve reads one per node and element current)."""
        info = self._get_vector(name)
        if info:
            vector = info.contents
            if vector.v_length > 0:
                try:
                    value: float = vector.v_realdata[0]
                    return value
                except ValueError:     # no real data (a NULL pointer)
                    pass
        raise SimulationError(f"ngspice returned no value for {name.decode()} ({self._last_message()})")

    def _release(self) -> None:
        """Free every result plot: ngspice keeps them all, and each solve slows
        down with the number it keeps (0.04 ms → 1.8 ms after 2,000)."""
        self._command("destroy all")

    # -- public ------------------------------------------------------------
    def operating_point(self, topology: Topology, elements: list[Element], values: dict[str, float],
                        nodes: list[str]) -> OperatingPoint:
        """Solve ``.op`` (see :class:`SolverEngine`). Threads of one process take turns
        (ngspice is one instance, not thread-safe)."""
        with self._solving:
            return self._operating_point(topology, elements, values, nodes)

    def _operating_point(self, topology: Topology, elements: list[Element], values: dict[str, float],
                         nodes: list[str]) -> OperatingPoint:
        """``topology`` identifies ``elements`` (same key, same elements and nodes);
        only the values may differ between calls with the same key."""
        if not math.isfinite(sum(values.values())):
            # ngspice takes a deck with an infinite value without a word and loads no circuit (so the next
            # circuits' numbers no longer match ours), and alters a value to NaN: refused here, named
            bad = next(((name, value) for name, value in sorted(values.items()) if not math.isfinite(value)), None)
            if bad is not None:
                raise SimulationError(f"element {bad[0]} has the value {bad[1]!r}, not a finite number: ngspice "
                                      "cannot solve a circuit with it (a parameter out of range?)")
        if topology not in self._index:
            self._load(topology, elements, values)
        else:
            self._select(topology)
            self._recent.move_to_end(topology)
            loaded = self._values[topology]
            for name, value in values.items():
                if loaded.get(name) != value:
                    self._command(f"alter {name} = {value!r}")
                    loaded[name] = value
        self.solves += 1
        if self._lib.ngSpice_CurPlot() != b"const":
            self._release()   # a previous read failed half-way
        if self._lib.ngSpice_Command(b"op") != 0:
            raise SimulationError(f"ngspice could not run the operating point ({self._last_message()})")
        if self._lib.ngSpice_CurPlot() == b"const":
            # no new plot: the operating point failed (e.g. a singular matrix)
            raise SimulationError("ngspice found no operating point for this circuit")
        layout = self._layouts[topology]
        vector = self._vector
        try:
            voltages = {n: vector(key) for n, key in layout.nodes}
            currents = {name: vector(key) for name, key in layout.read}
        finally:
            self._release()
        v = {"0": 0.0, **voltages}
        try:
            currents.update({name: (v[a] - v[b]) / values[name] for name, a, b in layout.resistors})
        except ZeroDivisionError:
            # ngspice solves a resistor of 0 ohm (as a short of its own choosing); its current is not ours to guess
            zero = next(name for name, *_ in layout.resistors if values[name] == 0)
            raise SimulationError(f"element {zero} is a resistor of 0 ohm: its current cannot be worked out "
                                  "(a parameter out of range?)") from None
        return OperatingPoint(voltages, currents, v)
