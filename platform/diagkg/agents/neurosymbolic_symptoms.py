"""Reading a symptom report for the neuro-symbolic assistant
(:mod:`diagkg.agents.neurosymbolic`): the word lists and :class:`KeywordClassifier`,
which finds the lights a report names (by their labels and synonyms from the graph,
numbered ranges and lists, "all eight …" and plurals of a numbered family) and whether
each is said to be lit, dark or coming and going, with negation.

A report is read sentence by sentence (``.``, ``;``, ``:``), each sentence segment by
segment (commas, "and", "but", "while", "although"…). A segment's state is what its own
words say; a segment that names lights and says nothing takes the state of the segment
joined to it by "and" or a comma that does ("the green LED and the red LED are lit"),
or, with "so", "too", "also" or "with it", the previous one's; a pronoun ("it", "they")
names what the segment before named; an auxiliary alone repeats the previous verb with
its own negation ("lamp 1 does not light; lamp 2 does"). What is said under a condition
("whether the lamp is on or off, …"), as an expectation ("it should be on") or of the
surroundings ("it is dark around the lamp") says nothing of a light. In a sentence that
says something happens now and then ("every so often", "whenever", "comes back"), a light
said to go out is one that comes and goes, unless it is said to stay so.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .neurosymbolic_config import NeuroSymbolicConfig

NEGATIONS = {"not", "no", "never", "neither", "nor", "n't", "doesn't", "don't", "isn't", "won't", "cannot",
             "can't", "without", "nothing"}
ON_WORDS = {"lit", "on", "lights", "light", "glows", "glow", "shines", "bright", "works", "lighting"}
OFF_WORDS = {"off", "dark", "out", "unlit", "dead", "extinguished", "dim"}
INTERMITTENT = {"flicker", "flickers", "flickering", "toggles", "occasionally", "intermittently", "sometimes",
                "blinks", "blinking", "oscillates", "oscillating", "keeps"}
# said of a whole report: something goes and comes back
COMES_AND_GOES = re.compile(r"\bevery so often\b|\bfrom time to time\b|\bnow and then\b|\bcomes? back\b|"
                            r"\bon and off\b|\boff and on\b")
# said of a sentence: what goes out in it does so now and then
NOW_AND_THEN = re.compile(r"\bevery so often\b|\bfrom time to time\b|\bnow and then\b|\bat (?:other )?times\b|"
                          r"\bat other moments\b|\bat the same moments?\b|\bwhenever\b|\boccasionally\b|"
                          r"\bsometimes\b|\bintermittently\b|\bcomes? back\b|\bback on\b")
# said of a light: it goes out and comes back ("goes on and off", "comes and goes"); the joining "and" would
# cut it into a light said on and one said off
ALTERNATING = re.compile(r"\b(?:on and off|off and on|(?:come|comes|coming|came) and (?:go|goes|going|went))\b")
# a lamp's kind, written alone ("the lamp") where one part's name holds it ("Lamp bulb")
LAMP_WORDS = {"lamp", "bulb", "led"}
STATED_LIGHTS = {"Lit": "on", "Dark": "off", "Flickering": "intermittent"}   # a light a report states as data, in words
STEADY = {"stays", "stay", "remains", "remain", "throughout", "always", "whole", "constantly", "steadily"}
CHANGES = {"goes", "go", "went", "going", "blinks", "switches", "switching", "turns", "drops"}
EXPECTED = {"should", "ought", "supposed", "would", "expected"}       # an expectation, not a sight
# the working system's look, said beside what is seen ("lit, where it is dark when the system works")
WORKING = re.compile(r"\bwhen the system works\b|\bin the working system\b")
HEDGES = {"perhaps", "maybe", "might", "possibly"}                   # a guess ("at most it flickers" too)
AMBIENT = {"around", "outside", "near", "nearby"}                     # "dark around the lamp": the room's
PRONOUNS = {"it", "they", "them", "both"}
AUXILIARIES = {"does", "do", "did", "is", "are", "was", "were"}
NOUN_BEFORE = {"the", "only", "a", "no", "any", "other", "of", "its", "their", "all"}
REMOVED = {"taken", "pulled", "left", "carried", "leave", "take"}
SAME = {"too", "also", "likewise"}          # and "so" before an auxiliary ("so is the red LED")
# all an elliptical segment holds besides names ("lamp 2 does", "but the LED does not")
ELLIPSIS = AUXILIARIES | NEGATIONS | {"the", "a", "but", "yet", "so", "too", "also", "either", "neither"}
QUANTIFIERS = {"all", "both", "every", "each", "either", "two", "three", "four", "five", "six", "seven", "eight",
               "nine", "ten"}
SENTENCES = re.compile(r"[.;:!?]")
JOINERS = re.compile(r"(,\s*(?:and|but|while|whereas)\s|,|\band\b|\bbut\b|\bwhile\b|\bwhereas\b|\balthough\b|"
                     r"\bthough\b)")
CONDITION = re.compile(r"\bwhether\b[^,]*,")             # "whether the lamp is on or off, …"
ASIDE = re.compile(r"\([^)]*\)")                          # "(two supplies, three control modules)"
NUMBER_LIST = re.compile(r"\b\d+(?:\s*,\s*\d+)*\s+(?:and|or)\s+\d+\b")   # "1, 2 and 3" -> one token "1_2_3"


@dataclass(frozen=True)
class _Segment:
    """A piece of a sentence between two joining words."""

    toks: list[str]
    found: list[str]                       # the lights it names
    free: list[str]                        # its words, the names taken out
    own: tuple[str, bool] | None           # what its own words say, and whether a negation said it
    joint: str                             # the word joining it to the next ("and", ",", "but"…)


_CLASSIFIERS: dict[tuple[object, ...], "KeywordClassifier"] = {}     # see KeywordClassifier.of


class KeywordClassifier:
    """Finds components in a symptom report by their names and reads whether
    each is said to be lit, dark or flickering (with negation)."""

    def __init__(self, names: dict[str, list[str]], coordinate: bool = False, whole_names: bool = True,
                 alternating: bool = True, lamp_words: bool = True):
        # with alternating, "goes on and off" ("off and on", "comes and goes") says a light comes and goes; with
        # lamp_words, a lamp's kind written alone ("the lamp") names the one part a name of which holds it
        self.alternating, self.lamp_words = alternating, lamp_words
        # with coordinate, a segment that names lights and says nothing takes the state of the next
        # segment joined by "and" even when that one names nothing ("lamp 2 and all five LEDs stay lit")
        self.coordinate = coordinate
        self.phrases: list[tuple[tuple[str, ...], str]] = []
        for comp, aliases in sorted(names.items()):
            for alias in sorted(set(aliases) | {comp}):
                toks = tuple(_tokens(alias.replace("_", " "))) if alias != comp else (comp.lower(),)
                if toks:
                    self.phrases.append((toks, comp))
        # with whole_names, a name holding what a report's reading cuts at or drops (an aside in brackets, a
        # stop, a comma: "Brake lamp (21 W)") is read whole where the report writes it whole, and without its
        # aside where that names one part only ("brake lamp"): the report's asides are dropped before reading
        self.whole: list[tuple[re.Pattern[str], str]] = []
        if whole_names:
            self.whole, short = _whole_names(names, {toks for toks, _ in self.phrases})
            self.phrases += short
        self.phrases = sorted(set(self.phrases), key=lambda p: (-len(p[0]), p))   # longest first, then a fixed order
        # numbered families ("control 3 LED", "LED of control 3"): a name with one number in
        # it, by the words around the number, for reports that give a range ("3 to 8"), a list
        # ("1 and 2") or all of them ("all eight control LEDs", "the supply LEDs")
        self.families: dict[frozenset[str], dict[int, str]] = {}
        for toks, comp in self.phrases:
            numbers = [t for t in toks if t.isdigit()]
            if len(numbers) == 1 and len(toks) > 1:
                words = frozenset(_singular(t) for t in toks if not t.isdigit())
                self.families.setdefault(words, {}).setdefault(int(numbers[0]), comp)
        # for a segment no name matches word for word: names of two words or more, as sets of words
        self.bags = [(frozenset(_singular(t) for t in toks), comp) for toks, comp in self.phrases if len(toks) > 1]
        self._said: dict[str, list[tuple[str, str]]] = {}     # text -> what mentions found in it

    @classmethod
    def of(cls, names: dict[str, list[str]], coordinate: bool = False, whole_names: bool = True,
           alternating: bool = True, lamp_words: bool = True) -> "KeywordClassifier":
        """The classifier of ``names`` (made once per process for the same names: a system's sessions
        all ask it, at setup)."""
        key = (tuple(sorted((c, tuple(n)) for c, n in names.items())), coordinate, whole_names, alternating, lamp_words)
        known = _CLASSIFIERS.get(key)
        if known is None:
            if len(_CLASSIFIERS) >= 64:
                _CLASSIFIERS.pop(next(iter(_CLASSIFIERS)))
            known = _CLASSIFIERS[key] = cls(names, coordinate, whole_names, alternating, lamp_words)
        return known

    @classmethod
    def configured(cls, names: dict[str, list[str]], settings: NeuroSymbolicConfig) -> "KeywordClassifier":
        """The classifier of ``names`` as the assistant's settings read a report."""
        return cls.of(names, settings.coordinate, settings.whole_names, settings.on_and_off, settings.lamp_words)

    def mentions(self, text: str) -> list[tuple[str, str]]:
        """(component, state) pairs; state is "on", "off" or "intermittent" (remembered per text: a
        scenario's every session reads the same report)."""
        said = self._said.get(text)
        if said is None:
            if len(self._said) >= 1024:
                self._said.clear()
            said = self._said[text] = self._mentions(text)
        return list(said)

    def _mentions(self, text: str) -> list[tuple[str, str]]:
        text = text.lower().replace("’", "'")
        for pattern, words in self.whole:        # a name written whole, its brackets and stops kept out of the reading
            text = pattern.sub(words, text)
        text = ASIDE.sub(" ", text)
        if self.alternating:       # one word for it, before "and" joins segments
            text = ALTERNATING.sub(" flickering ", text)
        text = NUMBER_LIST.sub(lambda m: "_".join(re.findall(r"\d+", m.group(0))), text)
        out: list[tuple[str, str]] = []
        named: list[str] = []            # what the last segment that named something named (for pronouns)
        previous: tuple[str, bool] | None = None      # the last state said, and whether with a negation
        for sentence in SENTENCES.split(text):
            segments, named = self._segments(CONDITION.sub(" ", sentence), named)
            for segment, state in zip(segments, self._states(segments, previous), strict=True):
                out += [(comp, state[0]) for comp in segment.found if state]
                previous = state or previous
        return out

    def _segments(self, sentence: str, named: list[str]) -> tuple[list[_Segment], list[str]]:
        """A sentence's segments (between commas, "and", "but", "while"…), each with the names it
        holds (a pronoun's: those named last), what its own words say, and the word joining it to
        the next; and what was named last."""
        now_and_then = bool(NOW_AND_THEN.search(sentence))
        pieces = JOINERS.split(sentence)
        segments = []
        for i in range(0, len(pieces), 2):
            toks = _tokens(pieces[i])
            if not toks:
                continue
            found, free = self._found(pieces[i], toks)
            if not found and PRONOUNS & set(toks):
                found = list(named)
            if found:
                named = found
            joint = pieces[i + 1].strip(" ,") if i + 1 < len(pieces) else ""
            segments.append(_Segment(toks, found, free, _state(free, now_and_then), joint))
        return segments, named

    def _states(self, segments: list[_Segment], previous: tuple[str, bool] | None) -> list[tuple[str, bool] | None]:
        """Each segment's state (and whether a negation said it): its own words', else the last one
        said ("so is", "too", "with it"), the last verb with its own negation ("lamp 2 does"), or the
        next segment's when joined to it by "and" or a comma ("the green LED and the red LED are lit")."""
        states: list[tuple[str, bool] | None] = []
        for k, seg in enumerate(segments):
            state = seg.own
            words, free = set(seg.toks), set(seg.free)
            said_so = SAME & words or any(t == "so" and u in AUXILIARIES for t, u in itertools.pairwise(seg.toks))
            if state is None and previous and (said_so or ("with" in words and {"it", "them"} & words)):
                state = (previous[0], False)
            if state is None and previous and AUXILIARIES & free and free <= ELLIPSIS:
                base = _flip(previous[0]) if previous[1] else previous[0]
                state = (_flip(base), True) if NEGATIONS & words else (base, False)
            if state is None and seg.found and seg.joint in ("and", "", "or", "nor") and k + 1 < len(segments):
                after = segments[k + 1]
                if after.own and (after.found or self.coordinate):
                    state = (after.own[0], False)
            states.append(state)
            previous = state or previous
        return states

    def _found(self, clause: str, toks: list[str]) -> tuple[list[str], list[str]]:
        """The components a clause names (longest names first, numbered ranges, lists and whole
        families too; failing those, the one name all of whose words the clause holds) and the
        words left over."""
        used = [False] * len(toks)
        found: list[str] = []
        for phrase, comp in self.phrases:
            n = len(phrase)
            for i in range(len(toks) - n + 1):
                if tuple(toks[i:i + n]) == phrase and not any(used[i:i + n]):
                    for j in range(i, i + n):
                        used[j] = True
                    if comp not in found:
                        found.append(comp)
        words = {_singular(t) for t in toks if not t[0].isdigit()}
        wanted: list[int] = []
        for low, high in re.findall(r"\b(\d+)\s+(?:to|through)\s+(\d+)\b", clause):
            wanted += range(int(low), int(high) + 1)
        for t, u in zip(toks, used, strict=True):
            if "_" in t and all(p.isdigit() for p in t.split("_")):
                wanted += [int(p) for p in t.split("_")]
            elif t.isdigit() and not u and not wanted:
                wanted.append(int(t))          # "the LED of control cube 8"
        plural = {_singular(t) for t in toks if t != _singular(t)}
        # a quantifier before a name's word ("either lamp", "each LED")
        quantified = {_singular(toks[i + 1]) for i in range(len(toks) - 1) if toks[i] in QUANTIFIERS}
        for family in [f for f in sorted(self.families, key=sorted) if f <= words]:
            members = self.families[family]
            if wanted:
                chosen = [members[n] for n in wanted if n in members]
            elif (plural | quantified) & family and not any(t.isdigit() for t in toks):
                chosen = [members[n] for n in sorted(members)]      # "all eight control LEDs", "the supply LEDs"
            else:
                continue
            for comp in chosen:
                if comp not in found:
                    found.append(comp)
            used = [u or _singular(t) in family or t[0].isdigit() for t, u in zip(toks, used, strict=True)]
        if not found:
            best = [(len(bag), comp) for bag, comp in self.bags if bag <= words]
            top = max((n for n, _ in best), default=0)
            comps = {comp for n, comp in best if n == top}
            if len(comps) == 1:
                found = sorted(comps)
                bag = max((b for b, c in self.bags if c in comps and b <= words), key=len)
                used = [u or _singular(t) in bag for t, u in zip(toks, used, strict=True)]
        if not found and self.lamp_words and (kinds := words & LAMP_WORDS):
            # "the lamp": the one part a name of which holds the word (and no other part's name does)
            comps = {comp for bag, comp in self.bags if bag & kinds} | {comp for toks_, comp in self.phrases if kinds & set(toks_)}
            if len(comps) == 1:
                found = sorted(comps)
                used = [u or _singular(t) in kinds for t, u in zip(toks, used, strict=True)]
        return found, [tok for tok, u in zip(toks, used, strict=True) if not u]


CUT = re.compile(r"[().,;:!?]")       # what the reading of a report drops (asides) or cuts at (sentences, segments)


def _whole_names(names: dict[str, list[str]], phrases: set[tuple[str, ...]]) \
        -> tuple[list[tuple[re.Pattern[str], str]], list[tuple[tuple[str, ...], str]]]:
    """For the names holding what a report's reading cuts at or drops: a pattern finding each written whole
    in a report, longest first, with its words (its phrase, as a report's words read it); and each name with
    its aside in brackets left out, as a phrase of its own where no other part's name reads the same."""
    whole: dict[str, str] = {}
    short: dict[tuple[str, ...], set[str]] = {}
    for comp, aliases in sorted(names.items()):
        for alias in sorted(set(aliases)):
            if not CUT.search(alias) or not (words := _tokens(alias.replace("_", " "))):
                continue
            whole[alias.lower().replace("’", "'")] = " ".join(words)
            if (toks := tuple(_tokens(ASIDE.sub(" ", alias.replace("_", " "))))) and toks not in phrases:
                short.setdefault(toks, set()).add(comp)
    patterns = [(re.compile(r"(?<![a-z0-9_])" + r"\s+".join(re.escape(w) for w in alias.split()) + r"(?![a-z0-9_])"),
                 f" {words} ") for alias, words in sorted(whole.items(), key=lambda a: (-len(a[0]), a[0]))]
    return patterns, sorted((toks, min(comps)) for toks, comps in short.items() if len(comps) == 1)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _tokens(text: str) -> list[str]:
    return re.findall(r"n't|[a-z0-9_]+", text.lower().replace("’", "'"))


def _flip(state: str) -> str:
    return {"on": "off", "off": "on"}.get(state, state)


ARTICLES = {"the", "a", "an", "top", "its", "each", "one", "both", "either", "this", "that"}


def _state(toks: list[str], now_and_then: bool = False) -> tuple[str, bool] | None:
    """What a segment's own words (the names taken out) say of a light, and whether a negation
    said it; None when they say nothing (or only an expectation)."""
    if EXPECTED & set(toks) or HEDGES & set(toks) or "at most" in " ".join(toks) or WORKING.search(" ".join(toks)):
        return None
    # "on" before an article is a preposition ("the LED on the control cube"), not a state; a state
    # word before "around" speaks of the room ("it is dark around the lamp")
    toks = [t for i, t in enumerate(toks) if not (i + 1 < len(toks) and (
        (t == "on" and toks[i + 1] in ARTICLES) or (toks[i + 1] in AMBIENT and (t in OFF_WORDS or t in ON_WORDS))))]
    # "the only light to watch" names lights, "taken out" removes one: neither says how one looks
    toks = [t for i, t in enumerate(toks) if not (
        (t in ("light", "lights") and i > 0 and toks[i - 1] in NOUN_BEFORE) or
        (t == "out" and i > 0 and toks[i - 1] in REMOVED))]
    words = set(toks)
    on, off = bool(ON_WORDS & words), bool(OFF_WORDS & words)
    if INTERMITTENT & words or (on and off and not NEGATIONS & words):
        return "intermittent", False
    negated = bool(NEGATIONS & words)
    if off:
        state = "on" if negated and not on else "off"
    elif on:
        state = "off" if negated else "on"
    else:
        return None
    if state == "off" and now_and_then and CHANGES & words and not STEADY & words:
        return "intermittent", negated       # goes out now and then
    return state, negated


def stated_lights(stated: dict[str, str], names: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The lights a report states as data (``Briefing.stated``: lamp -> ``Lit``, ``Dark`` or ``Flickering``, the
    scenario's ``dk:statedSymptom``) as :meth:`KeywordClassifier.mentions` gives the lights its words say, for the
    parts of ``names``: the words may name no lamp ("everything goes out now and then") where the data names each."""
    return [(c, STATED_LIGHTS[looks]) for c, looks in sorted(stated.items()) if c in names and looks in STATED_LIGHTS]
