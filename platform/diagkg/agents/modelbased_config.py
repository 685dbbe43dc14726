"""The model-based assistant's configuration (:mod:`diagkg.agents.modelbased`): one
frozen value, every key typed and range-checked when it is built from the
configuration mapping (:class:`~diagkg.agents.settings.Settings`). Unknown keys are
refused before, by :class:`~diagkg.agents.registry.BaseAssistant` against
:meth:`ModelBasedConfig.keys`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .settings import INF, Settings

# (least, most) of each number; a count of at least 0 where none is given
RANGES: dict[str, tuple[float, float]] = {
    "max_pairs": (0, INF), "pair_pool": (0, INF), "sample": (1, INF), "confident": (0.0, 1.0), "quick": (0, INF),
    "round_minutes": (0.0, INF), "certain": (0.0, 1.0), "max_widenings": (0, INF), "shortlist": (1, INF),
    "fail_minutes": (0.0, INF), "triple_pool": (0, INF), "role_depth": (0, INF), "terminal_prior": (0.0, INF),
    "loose_terminal_prior": (0.0, INF),
    "anchor_belief": (0.0, 1.0), "prior_rank": (0.0, INF), "named_options": (0, INF), "unexplained": (0.0, 0.9),
    "confirm": (0.0, 1.0), "shorted_share": (0.0, 1.0), "widen_share": (0.0, 1.0), "widen_minutes": (0.0, INF)}


@dataclass(frozen=True)
class ModelBasedConfig(Settings):
    """What the model-based assistant is told to do; the defaults are what it does unconfigured."""

    ASSISTANT: ClassVar[str] = "model-based"
    RANGES: ClassVar[dict[str, tuple[float, float]]] = RANGES

    max_pairs: int = 600            # combinations admitted per widening at most
    pair_pool: int = 16             # (declared for older configurations; not read)
    sample: int = 24                # candidates a decision looks at
    confident: float = 0.8          # hypothesise when one set of parts is this likely
    # candidates of a first pass over the options, whose best (shortlist) are scored on all of the
    # sample; 0: one pass over the whole sample, exact (the bounds prune what cannot be best)
    quick: int = 0
    # a round is worth minutes too: the budget counts rounds, so a cheap test that tells little is not free
    round_minutes: float = 20.0
    certain: float = 0.9            # repair a part that this share of candidates names
    max_widenings: int = 2          # rounds of pairs tried when none is left
    shortlist: int = 8              # options of the second pass
    fail_minutes: float = 600.0     # what running out of rounds is worth
    triple_pool: int = 40           # best pairs extended to triples (and thirds per pair)
    role_depth: int = 2             # connections deep that parts' roles compare
    # a component's own terminal against a cable's end (the likelier place for an end to come off)
    terminal_prior: float = 0.0
    # … and its own loose terminal, once only loose connections explain what was seen (0: a fallback too)
    loose_terminal_prior: float = 0.6
    anchor_belief: float = 0.5      # a repair of parts at least this share of candidates named anchors a rebase
    prior_rank: float = 1.0         # weight of the priors in ranking pairs
    # a loose connection's report as what it shows open (with its probability) or closed, rather
    # than what the real session's next draw happens to be
    chance: bool = True
    # a world must be able to show a lamp the report says flickers (Briefing.stated) lit and dark
    stated: bool = True
    screen: bool = True             # observations are tried only on parts where the worlds' simulations differ
    named_options: int = 3          # hypotheses tried as probes: the likeliest
    # the chance that no candidate is the truth (more faults than they have), in the cost of naming them
    unexplained: float = 0.0
    # a repair tried as a probe is taken to have fixed something only once pairs explain nothing either
    probe_last: bool = False
    minimal_first: bool = True      # pairs whose faults explain the lights only together first
    certain_cables: bool = True     # a cable nearly all candidates name is reconnected
    last_probe: bool = True         # nothing explains the reports: repair as a probe
    confirm: float = 0.3            # the chance a diagnosis about to be named is wrong, for a check first
    confirm_after_wrong: bool = True   # a check only once a naming was judged wrong
    # a repair's expected minutes count taking it back where it changed a healthy part (see repair_of)
    undo_cost: bool = True
    # an action with an effect that makes the system work in a diagnosis's worlds counts as its repair
    effect_repairs: bool = True
    # before parts are named where a part shorted stands (or stood at the start), the shorts between nodes too
    shorts_before_naming: bool = True
    # … and from the start, where parts shorted hold this share of the belief in what the lights at the start say
    shorted_share: float = 0.1
    # … and where a fault joining two parts' ports stands (two cables crossed: a short can look the same)
    shorts_before_joins: bool = True
    # the naming plan prices a naming in each diagnosis's world as it would be paid there, not at its own
    world_prices: bool = True
    # beyond ``sample`` worlds, every diagnosis a place, the rest shared by weight, a diagnosis's worlds standing for
    # its whole weight (false: one world per diagnosis at that world's own weight)
    diagnosis_mass: bool = True
    # naming a part ends the session in the worlds of other diagnoses where it makes the system work (a fuse a
    # short blew, the short kept out by another blown fuse): the namings ordered by the weight each ends
    naming_ends: bool = True
    naming_reach: int = 3           # … tried there: a decision's first namings by weight per minute, after every report too
    # the pairs join the singles still standing once these hold less than this share of the weight the singles had
    # at the start and one diagnosis is ``confident`` (the reports went against the likelier singles; pairs that
    # contain a standing single stay out), before a costly repair
    widen_share: float = 0.3
    widen_minutes: float = 60.0     # … before a repair expected to cost this many minutes at least (not a reconnection)


__all__ = ["RANGES", "ModelBasedConfig"]
