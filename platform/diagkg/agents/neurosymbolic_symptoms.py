"""Reading a symptom report for the neuro-symbolic assistant
(:mod:`diagkg.agents.neurosymbolic`): the word lists and :class:`KeywordClassifier`,
which finds the components a report names (by their labels and synonyms from the
graph, numbered ranges too) and whether each is said to be lit, dark or
flickering, with negation.
"""

from __future__ import annotations

import re

NEGATIONS = {"not", "no", "never", "neither", "nor", "n't", "doesn't", "don't", "isn't", "won't", "cannot",
             "can't", "without", "nothing"}
ON_WORDS = {"lit", "on", "lights", "light", "glows", "glow", "shines", "bright", "works", "lighting"}
OFF_WORDS = {"off", "dark", "out", "unlit", "dead", "extinguished", "dim"}
INTERMITTENT = {"flicker", "flickers", "flickering", "toggles", "occasionally", "intermittently", "sometimes",
                "blinks", "blinking", "oscillates", "oscillating"}
# said of a whole report: something goes and comes back
COMES_AND_GOES = re.compile(r"\bevery so often\b|\bfrom time to time\b|\bnow and then\b|\bcomes? back\b|"
                            r"\bon and off\b|\boff and on\b")

class KeywordClassifier:
    """Finds components in a symptom report by their names and reads whether
    each is said to be lit, dark or flickering (with negation)."""

    def __init__(self, names: dict[str, list[str]], coordinate: bool = False):
        self.coordinate = coordinate      # a name joined by "and" to a clause that says a state shares it
        self.phrases: list[tuple[tuple[str, ...], str]] = []
        for comp, aliases in sorted(names.items()):
            for alias in sorted(set(aliases) | {comp}):
                toks = tuple(_tokens(alias.replace("_", " "))) if alias != comp else (comp.lower(),)
                if toks:
                    self.phrases.append((toks, comp))
        self.phrases.sort(key=lambda p: (-len(p[0]), p))   # longest first, then a fixed order
        # numbered families ("control 3 LED", "LED of control 3"): a name with one number in
        # it, by the words around the number, for reports that give a range ("3 to 8")
        self.families: dict[frozenset[str], dict[int, str]] = {}
        for toks, comp in self.phrases:
            numbers = [t for t in toks if t.isdigit()]
            if len(numbers) == 1 and len(toks) > 1:
                words = frozenset(_singular(t) for t in toks if not t.isdigit())
                self.families.setdefault(words, {}).setdefault(int(numbers[0]), comp)

    def mentions(self, text: str) -> list[tuple[str, str]]:
        """(component, state) pairs; state is "on", "off" or "intermittent"."""
        parts = re.split(r"([.;:]|,\s*(?:and|but)\s|\band\b|\bbut\b|\bwhile\b|\bwhereas\b)", text.lower())
        clauses: list[tuple[list[str], list[str], str | None, str]] = []   # tokens, parts, own state, joint after
        for i in range(0, len(parts), 2):
            toks = _tokens(parts[i])
            if toks:
                found, free = self._found(parts[i], toks)
                clauses.append((toks, found, _state(free), parts[i + 1].strip() if i + 1 < len(parts) else ""))
        out: list[tuple[str, str]] = []
        previous = None
        for k, (toks, found, own, joint) in enumerate(clauses):
            state = own or (previous if found and ("so" in toks or "too" in toks or "also" in toks) else None)
            following = clauses[k + 1][2] if k + 1 < len(clauses) else None
            if state is None and found and self.coordinate and joint == "and" and following:
                state = following     # "lamp 2 and all five LEDs stay lit": what follows says it
            if state is None and found and previous and len(toks) <= 6:
                state = previous
            for comp in found:
                if state:
                    out.append((comp, state))
            if state:
                previous = state
        return out

    def _found(self, clause: str, toks: list[str]) -> tuple[list[str], list[str]]:
        """The components a clause names (longest names first, numbered ranges too) and
        the words left over."""
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
        for low, high in re.findall(r"\b(\d+)\s+(?:to|through)\s+(\d+)\b", clause):
            words = {_singular(t) for t in toks if not t.isdigit()}
            for family in [f for f in sorted(self.families, key=sorted) if f <= words]:
                members = self.families[family]
                found += [members[n] for n in range(int(low), int(high) + 1)
                          if n in members and members[n] not in found]
        return found, [tok for tok, u in zip(toks, used, strict=True) if not u]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _tokens(text: str) -> list[str]:
    return re.findall(r"n't|[a-z0-9_]+", text.lower().replace("’", "'"))


ARTICLES = {"the", "a", "an", "top", "its", "each", "one", "both", "either", "this", "that"}


def _state(toks: list[str]) -> str | None:
    if INTERMITTENT & set(toks) or ("on" in toks and "off" in toks and "and" in toks):
        return "intermittent"
    # "on" before an article is a preposition ("the LED on the control cube"), not a state
    toks = [t for i, t in enumerate(toks) if not (t == "on" and i + 1 < len(toks) and toks[i + 1] in ARTICLES)]
    negated = bool(NEGATIONS & set(toks))
    if OFF_WORDS & set(toks):
        return "on" if negated and not (ON_WORDS & set(toks)) else "off"
    if ON_WORDS & set(toks):
        return "off" if negated else "on"
    return None
