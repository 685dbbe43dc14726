"""A reference engine: the same circuits built and solved through PySpice's own API.

:class:`PySpiceEngine` has the fast engine's interface (``operating_point``, see
:mod:`diagkg.sim.spice`), so a :class:`~diagkg.sim.simulator.Simulator` runs on either
(``diagkg simulate --engine pyspice``). It builds every circuit from the simulator's element
list with PySpice's ``Circuit`` (``R``, ``V``, ``D`` and ``model``), never from diagkg's own
netlist text, and solves it with PySpice's ngspice binding (``NgSpiceShared``); voltages and
currents are read from PySpice's analysis (its nodes, branches and the ``@r[i]``/``@d[id]``
internal parameters that ``save_currents`` asks for). Both engines end in the same ngspice:
comparing them checks how netlists are built and how results are read, not the solver.

ngspice's shared library is one instance per process, and the fast engine holds it in the
parent, so PySpice runs in a child process of its own (``python -m
diagkg.sim.pyspice_engine``), started on the first solve and reused for every later one. The
protocol is one JSON line each way per solve::

    child, once:  {"ready": "PySpice 1.5"}   or   {"error": "why it cannot start"}
    parent:       {"elements": [[name, kind, node_a, node_b, [IS, N] | null], ...],
                   "values": {name: value}, "nodes": [node, ...]}
    child:        {"voltages": {node: V}, "currents": {element: A}}   or   {"error": "..."}

The child answers on a copy of its standard output; whatever PySpice or ngspice print goes
to its standard error, which the parent keeps in a temporary file and quotes when the child
fails. Slow by design (a fresh parse per solve, and a process boundary): a cross-check, not
a replacement.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from typing import IO, Any, Sequence

from ..errors import SimulationError
from .spice import RELTOL, TEMPERATURE, Element, OperatingPoint, Topology

START_TIMEOUT = 60.0     # seconds for the child to import PySpice and load ngspice
SOLVE_TIMEOUT = 60.0     # seconds for one solve


class PySpiceEngine:
    """Solves circuits with PySpice in a child process; the fast engine's interface."""

    def __init__(self, command: Sequence[str] | None = None, start_timeout: float = START_TIMEOUT,
                 solve_timeout: float = SOLVE_TIMEOUT) -> None:
        # the child's command line: this module run by this Python unless told otherwise
        self.command = list(command or [sys.executable, "-m", __name__])
        self.start_timeout = start_timeout
        self.solve_timeout = solve_timeout
        self.solves = 0
        self.parses = 0            # every solve builds and parses its circuit afresh
        self.version = ""          # PySpice's version, once started
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> "PySpiceEngine":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- the child process -------------------------------------------------
    def start(self) -> None:
        """Start the child now (solves start it when needed); raises
        :class:`SimulationError` saying why when PySpice or ngspice cannot be used."""
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._stop()
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._stderr)
        except OSError as exc:
            raise SimulationError(f"cannot start the PySpice engine ({' '.join(self.command)}: {exc})") from None
        hello = self._receive(self.start_timeout, "starting")
        if "ready" not in hello:
            message = str(hello.get("error", hello))
            self._stop()
            raise SimulationError(f"the PySpice engine cannot start: {message}")
        self.version = str(hello["ready"])
        return self._proc

    def _receive(self, timeout: float, doing: str) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else b""
        if not line:
            reason = (f"no answer within {timeout:g} s" if proc.poll() is None
                      else f"the child process ended with status {proc.returncode}")
            tail = self._stderr_tail()
            self._stop()
            raise SimulationError(f"the PySpice engine failed while {doing}: {reason}"
                                  + (f"; it said: {tail}" if tail else ""))
        try:
            answer: dict[str, Any] = json.loads(line)
        except ValueError:
            self._stop()
            raise SimulationError(f"the PySpice engine answered something else than JSON while {doing}: "
                                  f"{line[:200]!r}") from None
        return answer

    def _stderr_tail(self, limit: int = 600) -> str:
        if self._stderr is None:
            return ""
        try:
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - 8 * limit))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line for line in text.splitlines() if line.strip()]
        return " | ".join(lines)[-limit:]

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def close(self) -> None:
        """End the child process (a later solve starts a new one)."""
        with self._lock:
            self._stop()

    # -- solving -----------------------------------------------------------
    def operating_point(self, topology: Topology, elements: list[Element], values: dict[str, float],
                        nodes: list[str]) -> OperatingPoint:
        """Solve ``.op``: every node's voltage and every element's current
        (entering at ``node_a``, leaving at ``node_b``). ``topology`` is not
        needed here (every circuit is built afresh) and is accepted for the
        fast engine's interface."""
        request = {
            "elements": [[el.name, el.kind, el.node_a, el.node_b, list(el.model) if el.model else None]
                         for el in elements],
            "values": {el.name: float(values.get(el.name, 0.0)) for el in elements},
            "nodes": list(nodes),
        }
        with self._lock:
            proc = self._ensure_started()
            assert proc.stdin is not None
            try:
                proc.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
                proc.stdin.flush()
            except OSError:
                pass     # the child died: _receive says so, with what it printed
            answer = self._receive(self.solve_timeout, "solving")
            self.solves += 1
            self.parses += 1
        if "error" in answer:
            raise SimulationError(f"PySpice: {answer['error']}")
        return OperatingPoint(voltages={k: float(v) for k, v in answer["voltages"].items()},
                              currents={k: float(v) for k, v in answer["currents"].items()})


# ---------------------------------------------------------------------------
# the child process
# ---------------------------------------------------------------------------

def _solve(request: dict[str, Any], circuit_class: Any, ngspice: Any, command_error: type[Exception]) -> dict[str, Any]:
    """Build the request's circuit with PySpice's API, solve it, read its values."""
    circuit = circuit_class("diagkg")
    values = request["values"]
    names: dict[str, str] = {}          # ngspice's lower-case instance name -> element name
    for name, kind, node_a, node_b, model in request["elements"]:
        if kind not in ("R", "V", "D") or not name.lower().startswith(kind.lower()):
            raise ValueError(f"element {name!r} of kind {kind!r}: expected R, V or D, named after its kind")
        a = circuit.gnd if node_a == "0" else node_a
        b = circuit.gnd if node_b == "0" else node_b
        suffix = name[1:]               # PySpice puts the kind's letter in front
        if kind == "R":
            circuit.R(suffix, a, b, values[name])
        elif kind == "V":
            circuit.V(suffix, a, b, values[name])
        else:
            saturation, emission = model
            circuit.model(f"m_{name}", "D", IS=saturation, N=emission)
            circuit.D(suffix, a, b, model=f"m_{name}")
        names[name.lower()] = name
    simulator = circuit.simulator(temperature=TEMPERATURE, nominal_temperature=TEMPERATURE,
                                  simulator="ngspice-shared", ngspice_shared=ngspice)
    simulator.options(reltol=RELTOL)   # the fast engine's tolerance: both stop Newton's iteration alike
    simulator.save_currents = True
    try:
        try:
            analysis = simulator.operating_point()
        except command_error:
            # PySpice takes every line ngspice writes on its standard error for an error, its notes
            # too ("Note: Starting dynamic gmin stepping"): as for the fast engine, the operating
            # point was found when ngspice made its plot
            plot = ngspice.last_plot
            if not str(plot).startswith("op"):
                raise
            analysis = ngspice.plot(simulator, plot).to_analysis()
    finally:
        try:
            ngspice.remove_circuit()    # ngspice keeps every circuit it is given
        except Exception:  # noqa: BLE001 - nothing left to remove after a circuit it could not parse
            pass
    solved = {str(k).lower(): float(v[0]) for k, v in analysis.nodes.items()}
    solved["0"] = 0.0
    missing = [n for n in request["nodes"] if n.lower() not in solved]
    if missing:
        raise ValueError(f"PySpice's analysis has no voltage for node(s) {', '.join(missing)}")
    currents: dict[str, float] = {}
    for key, vector in analysis.branches.items():
        if str(key).lower() in names:
            currents[names[str(key).lower()]] = float(vector[0])
    for key, vector in analysis.internal_parameters.items():
        # "@r1[i]", "@d1[id]"
        instance, _, parameter = str(key).lower().lstrip("@").rstrip("]").partition("[")
        if instance in names and parameter in ("i", "id"):
            currents[names[instance]] = float(vector[0])
    absent = [name for name in names.values() if name not in currents]
    if absent:
        raise ValueError(f"PySpice's analysis has no current for element(s) {', '.join(absent)}")
    return {"voltages": {n: solved[n.lower()] for n in request["nodes"]}, "currents": currents}


def serve() -> int:
    """The child's loop: one request a line on standard input, one answer a line."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)                      # what PySpice or ngspice print must not mix with the answers
    sys.stdout = sys.stderr

    def send(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    try:
        import PySpice
        from PySpice.Spice.Netlist import Circuit
        from PySpice.Spice.NgSpice.Shared import NgSpiceCommandError, NgSpiceShared

        ngspice = NgSpiceShared.new_instance()
    except ImportError as exc:
        send({"error": f"PySpice is not installed in {sys.executable} ({exc}); pip install 'PySpice==1.5'"})
        return 1
    except Exception as exc:  # noqa: BLE001 - anything that stops ngspice loading is reported as such
        send({"error": f"PySpice cannot load ngspice's shared library ({type(exc).__name__}: {exc}); install "
                       "Debian's libngspice0-dev or set NGSPICE_LIBRARY_PATH"})
        return 1
    send({"ready": f"PySpice {PySpice.__version__}"})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            send(_solve(json.loads(line), Circuit, ngspice, NgSpiceCommandError))
        except Exception as exc:  # noqa: BLE001 - every failure of a solve is the answer to that request
            said = [text for text in str(ngspice.stderr).splitlines() if text.strip()][-3:]
            send({"error": f"{type(exc).__name__}: {exc}".strip() + (f" (ngspice: {' | '.join(said)})" if said else "")})
    return 0


if __name__ == "__main__":
    sys.exit(serve())
