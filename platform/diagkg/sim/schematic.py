"""A system's schematic drawn from the graph: SVG for people, PNG for vision-capable models.

Modules are boxes (graphviz clusters) holding their components; each component
shows its ports, and the system's connections are drawn between ports. Lamps
and LEDs are coloured as simulated (lit yellow, dark grey); removed components
are dashed, detached ports are marked. graphviz's ``dot`` lays it out (Debian
package ``graphviz``, installed by ``scripts/setup.sh``)::

    from diagkg.sim.schematic import render
    svg = render(store, "three_cubes")                      # nominal state, simulated
    png = render(store, "three_cubes", state=s, fmt="png")  # a circuit state (e.g. after a fault)

Every name reaches the DOT text through :func:`quote` or :func:`record_text`.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from typing import TYPE_CHECKING

import pyoxigraph as ox

from ..errors import SimulationError
from .circuit import NOMINAL, CircuitState, Skeleton, load_skeleton

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeSource
    from .simulator import SimulationResult

FORMATS = {"svg": "image/svg+xml", "png": "image/png", "dot": "text/vnd.graphviz"}
LIT, DARK, PLAIN = "#ffd84d", "#5a5a5a", "#ffffff"


def quote(text: str) -> str:
    """A DOT quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def record_text(text: str) -> str:
    """Text inside a record label (its field separators escaped)."""
    out = text.replace("\\", "\\\\")
    for ch in '{}|<>"':
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", "\\n")


def to_dot(sk: Skeleton, connections: list[tuple[str, str]], result: SimulationResult | None = None,
           state: CircuitState = NOMINAL, faults: bool = True) -> str:
    """The DOT text of a system: ``connections`` are (port IRI, port IRI) pairs. ``faults=False``
    draws only what one sees (the lamps), not the state's removed, damaged or detached parts."""
    if not faults:
        state = NOMINAL
    labels = {r["id"]: (r.get("label") or r["id"]) for r in sk.parts}
    port_ids: dict[tuple[str, str], str] = {}
    lines = [f"graph {quote(sk.key)} {{",
             "  graph [rankdir=LR, fontname=Helvetica, fontsize=11, labelloc=t, label=" + quote(sk.label) + "];",
             "  node [shape=record, fontname=Helvetica, fontsize=10, style=filled, fillcolor=\"#ffffff\"];",
             "  edge [color=\"#3060a0\", penwidth=1.4];"]
    by_module: dict[str, list[str]] = {}
    for cid in sorted(sk.components):
        by_module.setdefault(sk.components[cid].module or "", []).append(cid)
    detached = {f"{c}.{p}" for c, p in state.detached}
    # damaged parts (a fuse blown, a lamp burnt out): in the state, or by the circuit as simulated
    damaged = {c for c, _ in state.damaged} | ({d.component for d in result.damage} if result is not None and faults
                                               else set())
    for n, (module, members) in enumerate(sorted(by_module.items())):
        indent = "  "
        if module:
            lines.append(f"  subgraph cluster_{n} {{")
            lines.append(f"    label={quote(labels.get(module, module))}; style=rounded; color=\"#8090a0\";")
            indent = "    "
        for cid in members:
            comp = sk.components[cid]
            ports = []
            for i, pname in enumerate(sorted(comp.ports)):
                port_ids[(cid, pname)] = f"p{i}"
                mark = " (detached)" if f"{cid}.{pname}" in detached else ""
                ports.append(f"<p{i}> {record_text(pname + mark)}")
            title = record_text(f"{cid}\n{labels.get(cid, cid)}\n({comp.type})")
            label = "{" + title + "|{" + "|".join(ports) + "}}" if ports else title
            attrs = [f'label="{label}"']     # record_text escaped every part of it
            emits = result is not None and result.components.get(cid) is not None \
                and result.components[cid].lit is not None
            if emits:
                assert result is not None
                on = cid in result.lit
                attrs.append(f"fillcolor={quote(LIT if on else DARK)}")
                attrs.append(f"fontcolor={quote('#000000' if on else '#ffffff')}")
                attrs.append(f"tooltip={quote(cid + (' lit' if on else ' dark'))}")
            if cid in state.removed:
                attrs.append('style="dashed"')
            if cid in damaged:
                attrs.append('color="#c03030"')
            lines.append(f"{indent}{quote(cid)} [{', '.join(attrs)}];")
        if module:
            lines.append("  }")
    seen: set[frozenset[tuple[str, str]]] = set()
    for a_iri, b_iri in connections:
        a, b = sk.port_of_iri.get(a_iri), sk.port_of_iri.get(b_iri)
        if a is None or b is None or frozenset((a, b)) in seen:    # each wire once, whichever way written
            continue
        seen.add(frozenset((a, b)))
        style = ' [style=dashed, color="#c03030"]' if f"{a[0]}.{a[1]}" in detached or f"{b[0]}.{b[1]}" in detached \
            else ""
        lines.append(f"  {quote(a[0])}:{port_ids[a]} -- {quote(b[0])}:{port_ids[b]}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def run_dot(dot: str, fmt: str) -> bytes:
    """Lay out DOT text with graphviz's ``dot`` (``svg`` or ``png``)."""
    if fmt == "dot":
        return dot.encode("utf-8")
    if fmt not in FORMATS:
        raise SimulationError(f"a schematic is drawn as {', '.join(FORMATS)}, not {fmt!r}")
    exe = shutil.which("dot")
    if exe is None:
        raise SimulationError("graphviz's `dot` is not installed; install the Debian package graphviz "
                              "(scripts/setup.sh does)")
    done = subprocess.run([exe, f"-T{fmt}"], input=dot.encode("utf-8"), capture_output=True, timeout=60)
    if done.returncode != 0:
        raise SimulationError(f"dot failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def render(store: KnowledgeSource, key: str, state: CircuitState | None = None, fmt: str = "svg",
           result: SimulationResult | None = None, simulate: bool = True, seed: int = 0,
           faults: bool = True) -> bytes:
    """The schematic of system ``key`` of ``store`` in ``fmt`` (svg, png or dot).

    Lamps are lit as ``result`` says, else as the simulator finds them in
    ``state`` (nominal by default); ``simulate=False`` draws no lamp state.
    ``faults=False`` hides what the state says about removed, blown or
    detached parts (for someone who is diagnosing it)."""
    from .simulator import Simulator

    sk = load_skeleton(store, key)
    state = state or NOMINAL
    if result is None and simulate:
        result = Simulator(sk).simulate(state, random.Random(seed))
    rows = store.select("sim-connections", {"system": ox.NamedNode(sk.iri)})
    return run_dot(to_dot(sk, [(r["a"], r["b"]) for r in rows], result, state, faults), fmt)
