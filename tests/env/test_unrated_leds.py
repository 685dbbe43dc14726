"""An LED that states no ``dk:maxCurrent`` is not rated: it never burns out, whatever it carries. A user's LED torch
(tests/support/ledtorch.py, written here) whose resistor is 0.1 ohm drives its white LED at over an ampere, lit for
good; ``diagkg load`` now says so, located at the LED, and says nothing of the same torch with its 47 ohm resistor,
nor of the shipped catalogue. Stating a maximum makes the LED burn (the warning it then gets is the burnt one)."""

from __future__ import annotations

from diagkg.env.checks import OVERDRIVEN, rating_warnings
from diagkg.env.service import simulator_for
from diagkg.kg.store import KnowledgeStore

from ..support.cli import run_cli
from ..support.ledtorch import LED_TORCH
from ..support.stores import load_files_at, shipped_store

OVERDRIVE = LED_TORCH.replace("dk:resistance 47", "dk:resistance 0.1")
RATED = OVERDRIVE.replace('dk:color "white" ;', 'dk:color "white" ; dk:maxCurrent 0.05 ;')


def warnings_for(tmp_path, text: str) -> list:
    store = KnowledgeStore.memory()
    load_files_at(store, {tmp_path / "ledtorch.ttl": text})
    return rating_warnings(store, simulator_for(store, "ledtorch"))


def test_an_unrated_led_driven_past_its_forward_current_is_a_located_warning(tmp_path):
    (w,) = warnings_for(tmp_path, OVERDRIVE)
    assert w.warning and w.passed and w.check == "ratings" and w.file == str(tmp_path / "ledtorch.ttl")
    assert (tmp_path / "ledtorch.ttl").read_text().splitlines()[w.line - 1].startswith(":led a dk:LED")
    assert "led carries 1.1" in w.message and "states no dk:maxCurrent" in w.message and "never burns out" in w.message
    times = float(w.message.split(" times its forward current")[0].rsplit(", ", 1)[1])
    assert times > OVERDRIVEN


def test_the_same_led_through_its_resistor_or_rated_gets_no_such_warning(tmp_path):
    assert warnings_for(tmp_path, LED_TORCH) == []
    (w,) = warnings_for(tmp_path, RATED)           # rated: it burns in the nominal state, and is told so
    assert "led is burnt out in the nominal state" in w.message and "maxCurrent" in w.message


def test_diagkg_load_says_so_and_the_shipped_catalogue_is_not_warned_of(tmp_path):
    (tmp_path / "ledtorch.ttl").write_text(OVERDRIVE)
    r = run_cli("--store", str(tmp_path / "store"), "load", str(tmp_path / "ledtorch.ttl"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{tmp_path / 'ledtorch.ttl'}:" in r.stderr and "never burns out" in r.stderr, r.stderr
    store = shipped_store()
    for key in ("three_cubes", "ten_cubes", "asymmetric_chains", "ambient_light_sensor", "current_sensor"):
        assert not [w for w in rating_warnings(store, simulator_for(store, key)) if "never burns" in w.message], key
