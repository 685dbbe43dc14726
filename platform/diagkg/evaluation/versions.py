"""One scoring and physics version at a time.

Every trajectory records the scoring version and the physics version it was made under
(:mod:`diagkg.env.versions`; ``unrecorded`` for trajectories made before they were recorded).
Numbers made under different rules are not comparable, so ``diagkg evaluate --resume`` refuses
to add trajectories of this code's versions to a campaign holding others, and ``diagkg report``
refuses to put trajectories of different versions in one report, both unless told
(``--mix-versions``), saying which versions they found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from ..env.versions import PHYSICS_VERSION, SCORING_VERSION
from ..errors import InputError
from .campaign import CAMPAIGN_BASE

if TYPE_CHECKING:  # pragma: no cover
    from ..kg.store import KnowledgeStore
    from .campaign import Campaign


@dataclass(frozen=True, order=True)
class Versions:
    """The rules a trajectory was made under."""

    scoring: str
    physics: str

    def __str__(self) -> str:
        return f"scoring {self.scoring}, physics {self.physics}"


CURRENT = Versions(SCORING_VERSION, PHYSICS_VERSION)


def found(store: KnowledgeStore, campaigns: Iterable[Campaign] | None = None) -> dict[str, dict[Versions, int]]:
    """The versions of each campaign's trajectories (by campaign id), with how many trajectories each;
    every campaign of the store when ``campaigns`` is None."""
    out: dict[str, dict[Versions, int]] = {}
    if campaigns is None:
        rows = store.select("campaign-trajectory-versions")
    else:
        rows = [r for c in campaigns for r in store.select("campaign-trajectory-versions", {"campaign": c.node})]
    for r in rows:
        cid = r["campaign"][len(CAMPAIGN_BASE):] if r["campaign"].startswith(CAMPAIGN_BASE) else r["campaign"]
        counts = out.setdefault(cid, {})
        v = Versions(str(r["scoring"]), str(r["physics"]))
        counts[v] = counts.get(v, 0) + int(r["trajectories"])
    return out


def describe(counts: dict[Versions, int]) -> str:
    return "; ".join(f"{v} ({n} trajectories)" for v, n in sorted(counts.items()))


def check_resume(store: KnowledgeStore, campaign: Campaign, mix: bool = False) -> None:
    """Refuse to resume a campaign holding trajectories of other versions than this code's, unless ``mix``."""
    counts = found(store, [campaign]).get(campaign.id, {})
    if mix or all(v == CURRENT for v in counts):
        return
    raise InputError(f"campaign {campaign.id} holds trajectories made under {describe(counts)}; this diagkg makes "
                     f"them under {CURRENT}, so resuming would mix versions in one campaign. Start a new campaign, "
                     "or give --mix-versions to resume it anyway")


def check_report(store: KnowledgeStore, campaigns: Iterable[Campaign], mix: bool = False) -> None:
    """Refuse to report trajectories of different versions together, unless ``mix``."""
    per = found(store, list(campaigns))
    every = {v for counts in per.values() for v in counts}
    if mix or len(every) <= 1:
        return
    listed = " | ".join(f"{cid}: {describe(counts)}" for cid, counts in sorted(per.items()))
    raise InputError(f"the campaigns hold trajectories made under {len(every)} different versions ({listed}); their "
                     "numbers are not comparable. Report campaigns of one version (diagkg report RUN…), or give "
                     "--mix-versions to report them together anyway")
