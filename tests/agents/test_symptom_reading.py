"""The neuro-symbolic assistant's keyword reading of a symptom report, on names written here (a
greenhouse's lights, not a shipped system): what each sentence says of each light, and what it does not."""

from __future__ import annotations

import pytest

from diagkg.agents.neurosymbolic_symptoms import KeywordClassifier

NAMES = {
    "grow_lamp": ["grow lamp", "main lamp", "lamp"],
    "pump_led": ["pump LED", "pump indicator", "green LED on the pump box"],
    "fan_led": ["fan box LED", "fan indicator", "amber LED"],
    **{f"bed{k}_light": [f"bed {k} light", f"light of bed {k}", f"bed {k} lamp"] for k in range(1, 5)},
    "pump_switch": ["pump switch"],
}


def read(text: str) -> dict[str, set[str]]:
    said: dict[str, set[str]] = {}
    for comp, state in KeywordClassifier(NAMES).mentions(text):
        said.setdefault(comp, set()).add(state)
    return said


@pytest.mark.parametrize("text, expected", [
    # one clause a light, separated by a comma only
    ("The pump LED is lit, the amber LED is dark.", {"pump_led": {"on"}, "fan_led": {"off"}}),
    # a name joined by "and" to a clause that says how both look
    ("The pump LED and the amber LED are both lit.", {"pump_led": {"on"}, "fan_led": {"on"}}),
    # an auxiliary alone repeats the previous verb, with its own negation
    ("Bed 1 light does not light; bed 2 light does.", {"bed1_light": {"off"}, "bed2_light": {"on"}}),
    ("Bed 1 light lights; bed 2 light does not; bed 3 light does.",
     {"bed1_light": {"on"}, "bed2_light": {"off"}, "bed3_light": {"on"}}),
    ("The grow lamp is dark, and so is the pump LED.", {"grow_lamp": {"off"}, "pump_led": {"off"}}),
    # a condition says nothing; what follows it does
    ("Whether the lamp is on or off, the pump LED stays lit and the amber LED stays dark.",
     {"pump_led": {"on"}, "fan_led": {"off"}}),
    # something that goes out now and then comes and goes; what stays lit throughout is lit
    ("Every so often the lamp goes out by itself and comes back later. The pump LED stays lit throughout.",
     {"grow_lamp": {"intermittent"}, "pump_led": {"on"}}),
    ("Whenever the lamp goes out, the lights of beds 1 and 3 go out with it, while the pump LED stays lit.",
     {"grow_lamp": {"intermittent"}, "bed1_light": {"intermittent"}, "bed3_light": {"intermittent"},
      "pump_led": {"on"}}),
    # a whole numbered family, by a quantifier or a plural
    ("All four bed lights are dark.", {f"bed{k}_light": {"off"} for k in range(1, 5)}),
    ("The lights of beds 2 to 3 are lit.", {"bed2_light": {"on"}, "bed3_light": {"on"}}),
    ("The light of bed 4 is dark.", {"bed4_light": {"off"}}),
    # a pronoun names what the segment before named
    ("The grow lamp never stays lit; it flickers.", {"grow_lamp": {"off", "intermittent"}}),
    # the room, an expectation, a removed part and a guess say nothing of how a light looks
    ("It is dark around the lamp, so it should be on, but it stays off.", {"grow_lamp": {"off"}}),
    ("The fan box LED has been taken out, so the lamp is the only light to watch.", {}),
    ("The amber LED is dark or flickers at most.", {}),
    # no name matches word for word: the one name whose words the segment holds
    ("The pump LED is lit, the LED on the fan box is dark.", {"pump_led": {"on"}, "fan_led": {"off"}}),
    # a range with no numbered name around it says nothing
    ("Boxes 1 to 3 are dark.", {}),
    # the working system's look said beside what is seen (the generator's wording) is no second sight: a bulb
    # lit where it is dark when the system works was read as flickering (lit and dark at once)
    ("With every switch as set up, the grow lamp is lit, where it is dark when the system works; the pump LED "
     "is dark, where it is lit when the system works.", {"grow_lamp": {"on"}, "pump_led": {"off"}}),
])
def test_a_report_is_read_light_by_light(text: str, expected: dict[str, set[str]]) -> None:
    assert read(text) == expected


def test_a_shipped_report_and_its_stated_symptoms_agree_where_the_report_speaks(shipped) -> None:
    """Over every shipped scenario, whatever the reading says of a light its stated symptoms (the same
    report transcribed as data) also say: no light read lit that is stated dark, or the reverse."""
    from diagkg.agents.neurosymbolic_knowledge import Knowledge
    from diagkg.env.scenarios import ScenarioCatalog

    catalog = ScenarioCatalog(shipped)
    wrong, read_lights = [], 0
    word = {"Lit": "on", "Dark": "off", "Flickering": "intermittent"}
    for n in catalog.numbers():
        scenario = catalog.resolve(n)
        stated = {c: word[a] for c, a in scenario.symptoms}
        classifier = KeywordClassifier(Knowledge.of(shipped, scenario.key).names)
        for comp, state in classifier.mentions(scenario.observations):
            if comp in stated:
                read_lights += 1
                # a light that comes and goes may also be said to be on or off at some moment
                if state != stated[comp] and stated[comp] != "intermittent":
                    wrong.append((scenario.id, comp, state, stated[comp]))
    assert read_lights > 200
    assert wrong == []


def test_one_classifier_per_names_and_what_it_reads_is_remembered_apart_from_what_a_caller_does_with_it():
    classifier = KeywordClassifier.of(NAMES)
    assert KeywordClassifier.of({k: list(v) for k, v in reversed(NAMES.items())}) is classifier
    assert KeywordClassifier.of(NAMES, coordinate=True) is not classifier
    assert KeywordClassifier.of({**NAMES, "vent_led": ["vent LED"]}) is not classifier
    text = "The pump LED is lit, the amber LED is dark."
    first = classifier.mentions(text)
    assert first == KeywordClassifier(NAMES).mentions(text) == [("pump_led", "on"), ("fan_led", "off")]
    first.append(("grow_lamp", "off"))               # a caller's list is its own
    assert classifier.mentions(text) == [("pump_led", "on"), ("fan_led", "off")]
