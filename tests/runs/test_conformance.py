"""The plug-in API version (and its shim for version 1) and the assistant conformance check.

The shipped assistants pass the check; the oracle is checked as ``diagkg run`` makes it, with its
privileged briefing (the allow-list names it by default). Adversarial plug-ins written here each get
the finding they deserve: one returns a string, one raises in ``record`` on a key it does not know,
one never ends, one mutates its briefing, one states API version 99, one states none (it passes,
with a warning, through the shim). A version-1 plug-in runs a real session through the shim and is
told the outcomes as version 1 told them.
"""

from __future__ import annotations

from typing import Any

import pytest

from diagkg.agents import registry
from diagkg.agents.registry import API1_FIELDS, API_VERSION, Api1Shim, Api2Shim, BaseAssistant, Briefing
from diagkg.cli import check_assistant as cli
from diagkg.env.actions import Action, Hypothesis
from diagkg.errors import AssistantError, UnknownTermError
from diagkg.runs.conformance import check_assistant, fixture_store
from diagkg.runs.runner import run_session

from ..support.torch import ON_SHIPPED, scenario_text

CURRENT_FIELDS = {"round", "kind", "intention", "success", "message", "cost", "verdict", "refusal", "executed", "data",
                  "healthy"}


class Stringly(BaseAssistant):
    """Answers in words."""

    name = "conf-stringly"
    api_version = API_VERSION
    config_keys = frozenset()

    def suggest(self) -> Any:
        return "measure the battery, please"


class Strict(BaseAssistant):
    """Refuses an outcome with a key it does not know."""

    name = "conf-strict"
    api_version = API_VERSION
    config_keys = frozenset()

    def record(self, outcome: dict[str, Any]) -> None:
        unknown = set(outcome) - CURRENT_FIELDS
        if unknown:
            raise KeyError(f"unknown outcome keys {sorted(unknown)}")
        super().record(outcome)

    def suggest(self) -> Action | Hypothesis | None:
        assert self.briefing is not None
        parts = sorted(p for p, k in self.briefing.parts.items() if k not in ("enclosure", "opening", "module"))
        return Hypothesis({parts[len(self.outcomes)]}) if len(self.outcomes) < len(parts) else None


class Endless(BaseAssistant):
    """Looks at the same part for ever."""

    name = "conf-endless"
    api_version = API_VERSION
    config_keys = frozenset()

    def suggest(self) -> Action | Hypothesis | None:
        assert self.briefing is not None
        return Action("observe_component", (sorted(self.briefing.parts)[0],))


class Meddler(Strict):
    """Takes a part out of its briefing, and gives up."""

    name = "conf-meddler"

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        briefing.parts.pop(sorted(briefing.parts)[0])
        briefing.symptoms = "all is well"

    def suggest(self) -> Action | Hypothesis | None:
        return None


class Future(Strict):
    name = "conf-future"
    api_version = 99


class Old(BaseAssistant):
    """Written for version 1 (states no api_version): it names the two-fault torch's parts one set after
    the other and keeps what it is told."""

    name = "conf-old"
    seen: list[dict[str, Any]] = []
    PLAN = ({"bat", "bulb"}, {"lead"}, {"bat"})        # overbroad, partial, correct on CONF.T3

    def record(self, outcome: dict[str, Any]) -> None:
        super().record(outcome)
        Old.seen.append(outcome)

    def suggest(self) -> Action | Hypothesis | None:
        assert self.briefing is not None
        if not self.PLAN[0] <= set(self.briefing.parts):     # not the torch: it gives up
            return None
        if len(self.outcomes) < len(self.PLAN):
            return Hypothesis(self.PLAN[len(self.outcomes)])
        return None


class Second(Old):
    """Written for version 2: told plain JSON outcomes (through the shim), keys of a later diagkg included."""

    name = "conf-second"
    api_version = 2
    seen: list[dict[str, Any]] = []

    def record(self, outcome: dict[str, Any]) -> None:
        BaseAssistant.record(self, outcome)  # type: ignore[arg-type]
        Second.seen.append(outcome)


ADVERSARIES = (Stringly, Strict, Endless, Meddler, Future, Old, Second)


@pytest.fixture(autouse=True, scope="module")
def _registered():
    for cls in ADVERSARIES:
        registry.register(cls.name, cls)
    yield
    for cls in ADVERSARIES:
        registry._REGISTERED.pop(cls.name, None)


def failed(report: Any) -> set[str]:
    return {f.check for f in report.failures}


@pytest.mark.parametrize("name", ["random-search", "neuro-symbolic", "oracle"])
def test_the_shipped_assistants_conform(name: str) -> None:
    report = check_assistant(name)
    assert report.passed, "\n".join(map(str, report.failures))
    assert report.api_version == API_VERSION
    checks = {f.check for f in report.findings}
    assert {"refused-action", "verdict-wrong", "verdict-overbroad", "verdict-partial", "unknown-keys",
            "empty-visible", "briefing-unchanged", "close", "suggest-time", "ends-within-budget"} <= checks
    assert {f.scenario for f in report.of("ends-within-budget")} == {"CONF.T1", "CONF.T2", "3CC.S.1"}


def test_a_string_for_a_move_is_a_finding() -> None:
    report = check_assistant("conf-stringly")
    assert not report.passed
    assert "move-type" in failed(report)
    assert "not an Action, a Hypothesis or None" in report.of("move-type")[0].reason


def test_raising_on_an_unknown_outcome_key_is_a_finding() -> None:
    report = check_assistant("conf-strict")
    assert failed(report) == {"unknown-keys"}
    assert "KeyError" in report.of("unknown-keys")[0].reason
    assert all(f.passed for f in report.of("record"))        # the outcomes of today it takes


def test_never_ending_is_a_warning_not_a_breach_of_the_contract() -> None:
    """Running out of rounds is a legitimate end (the shipped ``unhelpful`` baseline's): it failed the check,
    so ``diagkg check-assistant unhelpful`` exited 1."""
    report = check_assistant("conf-endless")
    ends = {f.scenario: f for f in report.of("ends-within-budget")}
    assert not ends["CONF.T1"].passed and not ends["CONF.T1"].required
    assert not ends["3CC.S.1"].passed and not ends["3CC.S.1"].required
    assert "budget" in ends["CONF.T1"].reason
    assert report.passed and check_assistant("unhelpful").passed


def test_mutating_the_briefing_is_a_finding() -> None:
    report = check_assistant("conf-meddler")
    assert "briefing-unchanged" in failed(report)
    assert "parts" in report.of("briefing-unchanged")[0].reason
    assert "symptoms" in report.of("briefing-unchanged")[0].reason


def test_a_newer_api_version_is_refused_naming_both(capsys: pytest.CaptureFixture[str]) -> None:
    report = check_assistant("conf-future")
    assert failed(report) == {"api-version"}
    assert "99" in report.of("api-version")[0].reason and str(API_VERSION) in report.of("api-version")[0].reason
    with pytest.raises(AssistantError, match=rf"version 99.*version {API_VERSION}"):
        registry.create("conf-future")
    from diagkg.cli.main import main

    assert main(["--memory", "run", "--scenario", "3CC.S.1", "--assistant", "conf-future"]) == 2
    assert "99" in capsys.readouterr().err


def test_a_plugin_stating_no_version_passes_through_the_shim_with_warnings() -> None:
    assert registry.declared_api_version(Old) is None
    assert isinstance(registry.create("conf-old"), Api1Shim)
    report = check_assistant("conf-old")
    assert report.passed, "\n".join(map(str, report.failures))
    assert {f.check for f in report.warnings} == {"declares-api-version", "declares-config-keys"}
    assert "shim" in report.of("api-version")[0].reason


def test_a_version_1_plugin_runs_a_session_through_the_shim() -> None:
    Old.seen.clear()
    result = run_session("CONF.T3", "conf-old", store=fixture_store(), record=False)
    assert result.end == "success" and result.rounds == 3
    assert [o["verdict"] for o in Old.seen] == ["wrong", "partial", "correct"]   # overbroad told as wrong
    assert all(set(o) <= set(API1_FIELDS) for o in Old.seen)                 # no refusal, no healthy
    assert result.record is not None and result.record.assistant == "conf-old"


def test_a_version_2_plugin_is_checked_through_its_shim_and_told_json() -> None:
    assert isinstance(registry.create("conf-second"), Api2Shim)
    Second.seen.clear()
    report = check_assistant("conf-second")
    assert report.passed, "\n".join(map(str, report.failures))
    assert report.api_version == 2 and "shim for version 2" in report.of("api-version")[0].reason
    assert Second.seen and all(type(o) is dict for o in Second.seen)
    assert any({"x_later_field", "x_note"} <= set(o) for o in Second.seen)     # the unknown-keys probe, as JSON


def test_the_shim_tells_a_refusal_by_its_message() -> None:
    outcome = {"round": 1, "kind": "action", "intention": "x", "success": False, "message": "cannot", "cost": 0.0,
               "verdict": None, "refusal": "not-afforded", "executed": [], "data": {}, "healthy": [], "later": 1}
    assert registry.api1_outcome(outcome) == {k: outcome[k] for k in API1_FIELDS}
    assert registry.api1_outcome(dict(outcome, kind="hypothesis", verdict="empty"))["verdict"] == "wrong"


def test_the_command_exits_0_1_and_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["random-search"]) == 0
    assert cli.main(["conf-stringly", "--format", "json"]) == 1
    assert '"passed": false' in capsys.readouterr().out
    assert cli.main(["no-such-assistant"]) == 2
    assert "no assistant named" in capsys.readouterr().err
    with pytest.raises(UnknownTermError):
        check_assistant("no-such-assistant")


def test_a_plugin_hosted_in_its_own_process_goes_through_the_version_check(capsys):
    # exec_host.serve makes the plug-in in the child process: a newer API version is refused
    # there (the parent sees the child stop, with the reason on its stderr), an older one adapted
    import io
    import json

    from diagkg.agents.registry import Api1Shim, BaseAssistant, adapt
    from diagkg.runs.exec_host import serve

    class Newer(BaseAssistant):
        name, api_version = "newer", 99

    class Older(BaseAssistant):
        name = "older"

    briefing = io.BytesIO((json.dumps({"kind": "briefing"}) + "\n").encode())
    assert serve(Newer, briefing, io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "version 99" in err and "'newer'" in err
    assert isinstance(adapt(Older()), Api1Shim)


# a user's scenario on a shipped system, numbered as the torch of the check numbers its own
USER_SCENARIO = scenario_text(**{**ON_SHIPPED, "id": "MINE.1", "number": 9901})


def test_a_users_scenario_file_never_collides_with_the_torchs_numbers(tmp_path, capsys):
    # the torch's scenarios are numbered 9901-9903, as a user's file may be (the shared example is 9901)
    path = tmp_path / "mine.ttl"
    path.write_text(USER_SCENARIO)
    assert cli.main(["random-search", "--scenario", str(path)]) == 0, capsys.readouterr().err
    assert "[MINE.1]" in capsys.readouterr().out
