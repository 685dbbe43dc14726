"""The physics version: what a trajectory's observations were simulated under.

Bump :data:`PHYSICS_VERSION` whenever the simulator would show something else for the same system
and state: the engine (:mod:`diagkg.sim.simulator`, :mod:`diagkg.sim.spice`, :mod:`diagkg.sim.circuit`)
or the behaviour it reads from ``ontology/behaviour.ttl`` (element stamps, emission rules,
couplings, fault effects). Every trajectory records the version it was made under
(``dk:physicsVersion``); ``diagkg report`` and ``diagkg evaluate --resume`` refuse to put
trajectories of different versions together unless told (``--mix-versions``).
"""

from __future__ import annotations

PHYSICS_VERSION = "1"     # 1: ngspice operating point with the behaviour declarations as of this version
