"""The scoring version: how a trajectory's session was judged and charged.

Bump :data:`SCORING_VERSION` whenever the same session would end or cost differently: the verdict
of a hypothesis and the repair it implies (:mod:`diagkg.env.verification`), what counts as a
success, the costs of actions and of verification. Every trajectory records the version it was
made under (``dk:scoringVersion``) beside the physics version
(:data:`diagkg.sim.versions.PHYSICS_VERSION`); ``diagkg report`` and ``diagkg evaluate --resume``
refuse to put trajectories of different versions together unless told (``--mix-versions``).
"""

from __future__ import annotations

from ..sim.versions import PHYSICS_VERSION

# 1: a hypothesis correct when repairing what it names restores the system (naming every part succeeded),
#    a flat 120 min a component, access not charged
# 2: honest success — judged only on what it names (correct, partial, wrong, overbroad, empty; only
#    correct ends in success); verifying costs the implied repairs at the catalogue's costs plus their access
# 3: an LED declared dk:isIndicator false is a lamp the working system needs lit (every LED was an indicator,
#    whatever its description said: a fault seen only on such an LED ended the session at its first action);
#    a diagnosis's precision and recall count a part the faults damaged at once (a blown fuse) as faulty
# 4: a loose end left stops a repair only where one way it falls changes the lamps (on an indicator's branch alone it
#    is as a broken indicator, which stops none); a system works only if it works however its loose ends fall;
#    a hypothesis's repair, like an action's, makes a system none of whose lamps lights as set up (a warning lamp)
#    work when none lights (no naming was ever correct there)
# 5: automatic access opens what a part's dk:affordsWhen says grants what the action needs (a part reached through
#    an opening typed dk:Peephole was never reached: its enclosure was turned over, for nothing, and the repair
#    refused; a panel that grants it nothing is no longer opened first). The shipped catalogue's sessions are unchanged
# 6: a session ends in llm_truncation (left out of the success rate) only when a failed language-model call of its
#    log bears it out; an assistant raising the truncation itself ends in surrender (guessing once and "truncating"
#    every miss read 100 % success); a crashed session records the false removals (and diagnosis figures) of the
#    rounds it played (none were recorded: a shotgun that raised read no false removals), one whose worker died
#    too (its rounds were lost: it read 0 minutes); a hypothesis naming a whole box costs 120 a box plus the repairs
#    of the parts named beside it, the healthy ones false removals (it cost 120 in all and counted none); the
#    system's own key named is such a box (it was ignored: "the battery and the whole torch" was correct).
#    An assistant's briefing holds a catalogue of its own (one that set its prices in it was charged them, and so
#    was every later session in the process). No action restores a system its faults do not stop (a scenario
#    whose fault is on an indicator's branch alone ended at the first action). A cable swapped with itself, or a
#    terminal bridged to itself, is refused at no cost (it cost 40 and counted the cable repaired). The shipped catalogue's sessions
#    (seed 0) are unchanged but for model-based on 10 of 135 (mean 121.0 -> 120.9): the sessions it plays in its
#    worlds follow this rule, and a coupling nothing blocks is no longer a candidate (each alone changes some)
# 7: a test undone after its round (an action with an effect that is no repair, nor one the scenario keeps: a bridge, a
#    switch opened, a cable taken off, a box turned) shows the lights seen from outside while it holds (the outcome's
#    data "lights", and in words; recorded as light observations): a bridge across a suspect part told only how its
#    two ends look, and was gone by the next round's look, so no such test could tell anything
SCORING_VERSION = "7"
UNRECORDED = "unrecorded"  # the version of a trajectory made before versions were recorded

__all__ = ["PHYSICS_VERSION", "SCORING_VERSION", "UNRECORDED"]
