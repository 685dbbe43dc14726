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

SCORING_VERSION = "1"     # 1: verification by repair on a copy of the state, costs as of this version
UNRECORDED = "unrecorded"  # the version of a trajectory made before versions were recorded

__all__ = ["PHYSICS_VERSION", "SCORING_VERSION", "UNRECORDED"]
