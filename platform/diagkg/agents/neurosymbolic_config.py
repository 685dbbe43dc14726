"""The neuro-symbolic assistant's configuration (:mod:`diagkg.agents.neurosymbolic`): one frozen
value, every key typed and checked when it is built from the configuration mapping
(:class:`~diagkg.agents.settings.Settings`). A language model's keys (for the ``llm`` symptom
classifier) are not its own: they are read by :class:`~diagkg.llm.settings.LLMSettings`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .settings import INF, Settings

ROUND_MINUTES = 30.0         # what a round is worth in minutes (the budget counts rounds)


@dataclass(frozen=True)
class NeuroSymbolicConfig(Settings):
    """What the neuro-symbolic assistant is told to do; the defaults are what it does unconfigured."""

    ASSISTANT: ClassVar[str] = "neuro-symbolic"
    RANGES: ClassVar[dict[str, tuple[float, float]]] = {
        "round_minutes": (0.0, INF), "intermittent_weight": (0.0, INF), "trip_weight": (0.0, INF), "chain_modules": (0, INF),
        "endgame": (0, INF), "exhaust": (0.0, 1.0)}
    CHOICES: ClassVar[dict[str, tuple[str, ...]]] = {
        "classifier": ("keywords", "llm"), "split": ("dependencies", "sides", "problems"),
        "weights": ("problems", "candidates"), "tiebreak": ("order", "upstream"),
        "cable_potentials": ("never", "after-repair", "always")}

    classifier: str = "keywords"       # how the reported symptoms are read: keywords, or a language model
    coordinate: bool = False           # "lamp 2 and all five LEDs stay lit": what follows says it (keywords)
    # a name holding brackets or stops ("Brake lamp (21 W)") is read whole in a report, and without its aside where
    # that names one part only (keywords); without it, the report's asides are dropped and such a light is never read
    whole_names: bool = True
    # a light said to go "on and off" ("off and on", "comes and goes") comes and goes (keywords); without it, the
    # joining "and" cut the words apart and such a light was read lit (or dark) as the moment showed it
    on_and_off: bool = True
    # a lamp's kind written alone ("the lamp", "the bulb", "the LED") names the one part a name of which holds the
    # word (a stranger's "Lamp bulb"), where no name is written whole (keywords); without it, such a light went unread
    lamp_words: bool = True
    # how an observation (lights, voltages, currents) splits the problems: by the components it depends on
    # ("dependencies"), by those of them on the same side of the supply ("sides": a lamp's look by all it
    # depends on, a voltage by those at its own nominal potential) or only by its own ("problems")
    split: str = "sides"
    round_minutes: float = ROUND_MINUTES     # minutes a round is worth, added to a test's cost
    access: bool = True                # expected access cost in the gain
    # what the gain counts: problems, or candidates each sharing its weight among its problems
    weights: str = "problems"
    couplings: bool = True             # problems for couplings
    # a relay a switching coupling drives depends on all its current feeds (and they on each other) only where the
    # coupling's expression reads the relay or a part it feeds (an over-current trip); one a coil's current or a
    # sensor's divider drives keeps the needs the functions or the wiring give (false: every driven relay)
    load_switched: bool = True
    wiring: bool = True                # a system that declares no functions: dependencies from its wiring
    # … and then a nominal reading (a lamp lit, a potential right) vouches for what it depends on in its own module too:
    # the wiring orders a module's parts (the functions order modules only); without it, on a system of one module a
    # lamp seen lit cleared only itself
    wired_within: bool = True
    spares: bool = True                # a dark part does not implicate one of two needs either of which is enough
    # a lamp seen lit (or coming and going) that the working system keeps dark implicates what keeps it dark:
    # the parts whose opening lights it (a cable across it)
    keepers: bool = True
    shorts: bool = True                # a current above nominal: name the parts a short showing the lights seen may end on
    # a bulb seen lit that the working system keeps dark, and a naming judged wrong: a short between two nodes
    # may light it; the parts it may end on are named as after a current above nominal
    lit_past: bool = True
    # … and before any step, a lamp seen lit that the working system keeps dark and one dark that it lights, no
    # part cut off at one end showing the lights seen: the parts a short may end on go first
    lit_at_start: bool = True
    # a naming judged wrong (or the candidates used up), and no part cut off at one end gives the lights seen and
    # every current and voltage read: the parts a short may end on are named, as after a current above nominal
    unexplained_shorts: bool = True
    # no short that damages nothing shows the lights seen (and no fuse was found blown): one that damaged
    # something on its way to them (the lamps of the damaged circuit)
    damaging_shorts: bool = True
    # … and those that damaged something are suspected beside those that damage nothing, whenever they give every
    # reading (a fuse a short blew reads no current: a reading there tells them apart)
    damaging_alike: bool = True
    # a part the suspected shorts may have damaged without ending on it (a fuse one blew) is priced, in the order
    # short suspects are named, with its naming again in that share of the placements (it blows again meanwhile)
    spare_damaged: bool = True
    # a short's parts by the share of the placements left they end (those on parts named are ruled out) per
    # minute of naming them (a round's minutes included), unless that finds it less surely in the rounds left
    short_by_cost: bool = True
    flicker_holds: bool = True         # a light comes and goes: a reading right once does not clear random faults
    starved_shorts: bool = True        # a part carries less than working: the parts whose opening explains it, else a short
    # while the candidates are the parts whose opening explains every reading, a voltage read next is chosen by how
    # its readings, simulated with each of them open, split them (a string of lamps in series: halved, not walked)
    open_split: bool = True
    blown_fuses: bool = True           # a fuse replaced that did not bring the system back: a short that blows it
    reinspect: bool = False            # look again at lights already seen
    priors: bool = True                # weigh problems by their mode's prior
    intermittent_weight: float = 4.0   # a light that comes and goes makes faults acting at random this much likelier
    blind_looks: bool = False          # look at parts a look shows nothing of
    tiebreak: str = "upstream"         # "order" or "upstream"
    coupling_flicker: bool = True
    trust_seen: bool = False
    chain_modules: int = 5             # bisect with voltages while the candidates lie in at least this many modules
    # after a repair that helped only partly, when the fault left is sought along a chain, a cable's
    # potentials bisect it ("after-repair"); "always" from the start, "never" a cable's voltage is its own
    cable_potentials: str = "after-repair"
    # after a repair that helped only partly and the system still does not work: its one main lamp is
    # still dark (the verdict's typed ``works``)
    still_dark: bool = True
    endgame: int = 2                   # rounds left at which voltages speak only of their part again
    # candidates of which less than this share of what they were suspected of is left untested (as
    # weighed when they became the candidates): look elsewhere, as when nothing is left
    exhaust: float = 0.2
    # … unless a reading only their opening gives holds them, and a test of theirs is left
    opens_hold: bool = True
    # nothing left to test nor to name (no fault set aside): the parts a short between two nodes may end on
    last_shorts: bool = True
    # a reading that keeps changing says something switches on and off, not where the part measured is
    unsettled_elsewhere: bool = True
    # … and where a switch is opened by its own current (a dk:SwitchingCoupling driving it), that it may
    # keep tripping: the faults that raise the current (dk:raisesCurrent) of what its current feeds
    # become this much likelier (1: no more)
    trip_weight: float = 4.0
    side_only: bool = True             # a right potential vouches only for the parts wholly on its side
    unsettled_flicker: bool = True     # a reading that keeps changing counts as a light that comes and goes
    port_potentials: bool = True       # a right voltage clears only end faults
    source_local: bool = True          # a wrong potential of a source is its own (and one turned round, always)
    lit_modules: bool = False          # a light seen lit vouches for other modules only
    current_module: bool = True        # a wrong current speaks of its module
    current_module_all: bool = True
    comes_and_goes: bool = False       # "from time to time" in a report
    # name cheap suspects together as a probe: off, since naming healthy parts with a faulty one is
    # overbroad (turned back, nothing repaired) under the honest success rule
    repair_probe: bool = False
    rebase: bool = True                # after a partial repair, drop what it may explain
    # a cable end found on another net than its own: name the two cables that swapped ends (either pair)
    crossings: bool = True
    # a naming judged partial that leaves the system not working: inspect the one cable of it found faulty next (an
    # end crossed with it stays beside it once it is repaired: that cable is named)
    look_after_partial: bool = True
    # a part found shorted by its own test, repaired, and the system still not working: the fuses a short across it
    # blows (simulated on the working system) are named next
    fuses_after_shorted: bool = True
    # a part named as a short's end found faulty, the system still not working: no more short suspects; what the
    # shorts ending on it damage (a fuse blown, as the screen found) is named next, among them those that damage
    # something and give the readings (with damaging_shorts), whichever were suspected
    short_damage: bool = True
    # the one lamp seen out of place, dark where the working system lights it, found conducting: the potentials at its
    # ends are read next; once no part cut off at one end gives them, the parts a short may end on are named
    probe_dark: bool = True
    # … and where several lamps are out of place, all of them dark, one of them found conducting (the first)
    probe_dark_many: bool = True
    # before the next short suspect is named: the potentials at a part's ends, or the current through it, when the
    # pairs of nodes the short may join give them apart and reading them is expected to cost less than it saves
    short_split: bool = True
    # the lights the report states as data (Briefing.stated, the scenario's dk:statedSymptom) are read as its words
    # would say them; without it, only the words were read, and a report naming no lamp ("everything goes out now and
    # then") said nothing of a light
    stated_lights: bool = True
    # a part that should sit beside an inspected cable end and is not there: its end is off, name it
    missing_ends: bool = True
    dark_currents: bool = False        # measure the current through a lamp seen dark (none flows: it tells nothing)
    # a part found faulty that none of the main lamps' anomalies implicates is set aside (repaired last) while
    # the search goes on; a part found faulty whose naming alone cannot be the whole diagnosis is repaired
    # with the catalogue's repair instead (the session ends when the system works again)
    aside: bool = True
    # a part a test found faulty is repaired by the catalogue's repair cheaper than replacing it that undoes
    # every fault mode its readings fit (a battery in the wrong way round is turned round, not replaced)
    undo: bool = True
    # nothing left to test among the candidates, and what they are suspected of is not all ruled out (no test
    # reaches it: a part a person cannot measure): name the likeliest of them, one at a time, before looking
    # elsewhere (they were left aside unnamed)
    name_untested: bool = True


__all__ = ["ROUND_MINUTES", "NeuroSymbolicConfig"]
