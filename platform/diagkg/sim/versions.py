"""The physics version: what a trajectory's observations were simulated under.

Bump :data:`PHYSICS_VERSION` whenever the simulator would show something else for the same system
and state: the engine (:mod:`diagkg.sim.simulator`, :mod:`diagkg.sim.spice`, :mod:`diagkg.sim.circuit`)
or the behaviour it reads from ``ontology/behaviour.ttl`` (element stamps, emission rules,
couplings, fault effects). Every trajectory records the version it was made under
(``dk:physicsVersion``); ``diagkg report`` and ``diagkg evaluate --resume`` refuse to put
trajectories of different versions together unless told (``--mix-versions``).
"""

from __future__ import annotations

# 1: ngspice operating point, diode and LED currents recomputed from node voltages
# 2: every current read off the operating point ngspice solved (its device currents), reltol 1e-4,
#    ratings and damage as data (fuses open, lamps and LEDs burn open), a short across a lamp
#    bypasses its filament
# 3: a voltage is read as a 10 MΩ voltmeter reads it: a node cut off on every side by opens (a blown fuse, then an
#    end off) reads what the meter pulls it to, not the ratio of the opens' gigaohms (half the supply)
# 4: of the components of one type that one solve would damage alike, those furthest past their limit first, then
#    solved again (of two fuses in series the one at the higher multiple of its rating blows, the other holds); a part
#    of the circuit nothing joins to ground (no diode in it) tied to ground through 1 TΩ (a spare battery)
# 5: a state that does not settle (a relay chattering) damages what any of its last solves calls for (a fuse carrying
#    13 times its rating in every other solve blows); a voltmeter's node is held by a diode only while it conducts
#    (an LED fed through an open contact's leakage reads what the meter pulls it to)
# 6: a diode or LED whose forward voltage asks for a saturation current below the least ngspice uses (1e-28 A) gets
#    that one and a larger emission coefficient, so that it carries its forward current at its forward voltage (a
#    white LED declared at 3.0 V conducted from 2.8 V, one at 30 V lit on 12 V); the shipped systems' do not
# 7: what a fault's short across a part carries (dk:bypassesComponent) is left out of the current its coupling
#    reads and of the current and power its damage rules read (a shorted relay coil lets its relay drop out; a
#    resistor is not burnt out by its short's current); a diode declared above about 18 V (an LED above 33 V) is
#    solved, where its saturation current overflowed; a fuse or current sensor has the dk:resistance it states
#    (it was 0.01 ohm whatever it stated); the shipped systems' states are unchanged
# 8: a damage state declared dk:failsFirst (a fuse blowing) happens before any other damage the same solve calls
#    for: a fuse that a short blows protects the diode or lamp behind it, which burnt out with it before when
#    rated too (a 5 A fuse and a 6 A diode both carrying 97 A); the shipped systems rate no part, and are unchanged;
#    a part's power includes the contacts its ends sit on (a cable's, 0.1 mOhm each: 11.7 W of a 241 A short); a
#    cable is the dk:resistance it states down to 1 mOhm (it was never below 0.01 ohm)
PHYSICS_VERSION = "8"
