"""The original simulator's equivalent of `diagkg simulate three_cubes`.

Runs under the original's own venv (see README.md in this folder):

    ORIGINAL_SIM=/work/original/sim /work/original/venv/bin/python original_simulate.py

Imports the original package from its checkout (ORIGINAL_SIM, or --sim PATH),
builds the 3-cubes system with the default PySpice/ngspice backend, simulates
once and prints one line per light emitter (bulbs and LEDs): lit or off.
ngspice writes its own notes on stderr; they are left alone.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    sim = os.environ.get("ORIGINAL_SIM", "/work/original/sim")
    if len(argv) >= 2 and argv[0] == "--sim":
        sim = argv[1]
    sys.path.insert(0, sim)

    from diagnosable_systems_simulation import build_three_cubes_system
    from diagnosable_systems_simulation.world.components import LED, Bulb

    system = build_three_cubes_system(extra_tools={"multimeter"})
    result = system.simulate()
    print(f"three_cubes: converged={result.converged}")
    for cid, comp in sorted(system.all_components().items()):
        if isinstance(comp, (Bulb, LED)):
            print(f"  {cid}: {'lit' if result.is_lit(cid) else 'off'}")
    return 0 if result.converged else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
