"""The simulation layer: circuit skeleton and state, the simulator, the ngspice engine, schematics."""
