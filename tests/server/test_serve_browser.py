"""The web page of ``diagkg serve`` in a real browser: Debian's Chromium driven by Playwright.

A real ``diagkg serve`` process on a store holding a user's system written in a
test (the torch). Screenshots go to ``$DIAGKG_SCREENSHOTS`` or
``tests/artifacts/screenshots`` (git-ignored). Skipped only when Chromium is
absent (``scripts/setup.sh --dev`` installs it; never ``playwright install``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..support.paths import ROOT
from ..support.serving import TOKEN, broken_scenario, start_server, stop_server, torch_store
from ..support.torch import LOOSE_LEAD, scenario_text
from .conftest import CHROMIUM

SHOTS = Path(os.environ.get("DIAGKG_SCREENSHOTS") or ROOT / "tests" / "artifacts" / "screenshots")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (scripts/setup.sh --dev)"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    store = torch_store(tmp_path_factory.mktemp("serve-browser"))
    proc, base = start_server(store)
    yield base
    stop_server(proc)


@pytest.fixture()
def browser(chromium):
    """The Chromium of tests/server/conftest.py, launched once per test process (each test opens its own contexts)."""
    return chromium


@pytest.fixture()
def page(browser, server):
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto(server + "/")
    pg.fill("#token", TOKEN)
    yield pg
    context.close()
    assert not errors, errors


def test_the_token_is_kept_for_this_tab_only(page, browser, server):
    page.wait_for_selector("#schematic svg")
    assert page.evaluate("sessionStorage.getItem('diagkg-token')") == TOKEN
    assert page.evaluate("localStorage.getItem('diagkg-token')") is None
    page.reload()                                        # the same tab keeps it
    assert page.input_value("#token") == TOKEN
    other = browser.new_context().new_page()            # another tab (a fresh context) starts without it
    other.goto(server + "/")
    assert other.input_value("#token") == "" and other.evaluate("localStorage.length") == 0
    other.context.close()


def test_the_page_shows_systems_and_a_schematic(page):
    page.wait_for_selector("#schematic svg")
    assert page.locator("#system option").all_inner_texts() == ["Torch (torch)"]
    assert page.locator("#schematic svg g.node").count() == 7
    page.select_option("#scenario", "TORCH.1")
    page.wait_for_function("document.querySelector('#editor').value.includes('TORCH.1')")
    page.screenshot(path=str(SHOTS / "01-scenario-browser.png"), full_page=True)


def test_author_a_broken_then_a_fixed_scenario(page):
    page.wait_for_selector("#schematic svg")
    page.fill("#editor", broken_scenario())
    page.fill("#filename", "torch-2.ttl")
    page.click("#validate")
    msg = page.wait_for_selector(".annotated .msg[data-line='18']")
    assert "actionBudgett" in msg.inner_text()
    assert "bad" in page.get_attribute(".annotated .line[data-line='18']", "class")
    assert "violation" in page.inner_text("#verdict")
    page.screenshot(path=str(SHOTS / "02-broken-scenario-validated.png"), full_page=True)
    with page.expect_response(lambda r: "/api/scenarios?name=" in r.url) as refused:
        page.click("#load")              # refused: nothing loaded
    assert refused.value.status == 422
    page.wait_for_function("document.querySelector('#verdict').textContent.includes('nothing was loaded')")
    page.fill("#editor", scenario_text(**LOOSE_LEAD))
    page.click("#validate")
    page.wait_for_function("document.querySelector('#verdict').textContent.startsWith('Conforms')")
    page.click("#load")
    page.wait_for_function("document.querySelector('#verdict').textContent.startsWith('Loaded')")
    page.wait_for_selector("#scenario option[value='TORCH.2']", state="attached")
    page.screenshot(path=str(SHOTS / "03-fixed-scenario-loaded.png"), full_page=True)


def _hold_back(page, prefix: str) -> None:
    """Answers to requests whose path starts with ``prefix`` reach the page 1.5 s late (``lateAnswered``
    is set then)."""
    page.evaluate("""(prefix) => {
        const plain = window.fetch;
        window.lateAnswered = false;
        window.fetch = (url, opts) => {
            const answer = plain(url, opts);
            if (!String(url).startsWith(prefix)) return answer;
            return answer.then((r) => new Promise((done) => setTimeout(() => { window.lateAnswered = true; done(r); }, 1500)));
        };
    }""", prefix)


def test_a_late_answer_does_not_overwrite_a_later_verdict(page):
    """A load refused slowly, answered after the fixed text's validation: the verdict stays the last
    one asked for (under load, the suite once saw the refusal overwrite "Conforms")."""
    page.wait_for_selector("#schematic svg")
    _hold_back(page, "/api/scenarios?name=")
    page.fill("#editor", broken_scenario())
    page.fill("#filename", "torch-late.ttl")
    page.click("#load")                  # refused, its answer held back 1.5 s
    page.fill("#editor", scenario_text(**LOOSE_LEAD))
    page.click("#validate")
    page.wait_for_function("document.querySelector('#verdict').textContent.startsWith('Conforms')")
    page.wait_for_function("window.lateAnswered === true")
    page.wait_for_timeout(200)
    assert page.inner_text("#verdict").startswith("Conforms")


def test_a_scenario_chosen_before_the_last_does_not_fill_the_editor(page):
    """TORCH.1 chosen, its text answered late, the nominal system chosen meanwhile: the editor is not filled
    with TORCH.1's text (it would be edited and loaded under the other choice)."""
    page.wait_for_selector("#schematic svg")
    page.fill("#editor", "")
    _hold_back(page, "/api/scenarios/TORCH.1")
    page.select_option("#scenario", "TORCH.1")
    page.select_option("#scenario", "")
    page.wait_for_function("window.lateAnswered === true")
    page.wait_for_timeout(200)
    assert "TORCH.1" not in page.input_value("#editor")


def test_run_a_scenario_with_the_oracle(page):
    page.click("nav button[data-tab='diagnosis']")
    page.wait_for_selector("#d-scenario option[value='TORCH.1']", state="attached")
    page.select_option("#d-scenario", "TORCH.1")
    page.select_option("#d-assistant", "oracle")
    page.click("#d-start")
    end = page.wait_for_selector("#chat li.end", timeout=60_000)
    assert "End: success" in end.inner_text()
    assert page.locator("#chat li.service").count() >= 2        # the report, then each result
    page.wait_for_selector("#d-schematic svg")
    page.screenshot(path=str(SHOTS / "04-oracle-session.png"), full_page=True)


def test_play_the_service_agent(page):
    page.click("nav button[data-tab='diagnosis']")
    page.wait_for_selector("#d-scenario option[value='TORCH.1']", state="attached")
    page.select_option("#d-scenario", "TORCH.1")
    page.select_option("#d-assistant", "oracle")
    page.select_option("#d-service", "human")
    page.click("#d-start")
    page.wait_for_selector("#do-execute")
    # the oracle names the flat battery (a diagnosis at the cost of replacing it: the cheaper way it knows)
    assert "hypothesis {bat}" in page.inner_text("#d-pending")
    page.wait_for_selector("#d-schematic svg")
    page.screenshot(path=str(SHOTS / "05-service-agent-asked.png"), full_page=True)
    clicks = 0
    while page.locator("#chat li.end").count() == 0:
        page.wait_for_selector("#do-execute, #chat li.end", timeout=60_000)
        if page.locator("#do-execute").count():
            page.click("#do-execute")
            clicks += 1
            page.wait_for_function(f"document.querySelectorAll('#chat li.assistant').length >= {2 * clicks}")
    assert clicks >= 1 and "End: success" in page.inner_text("#chat li.end")
    page.screenshot(path=str(SHOTS / "06-service-agent-done.png"), full_page=True)
    page.click("nav button[data-tab='trajectories']")
    page.wait_for_selector("#t-list tr.clickable")
    page.click("#t-list tr.clickable >> nth=0")
    page.wait_for_function("document.querySelector('#t-view').contentDocument?.body?.innerText?.includes('TORCH.1')")
    page.screenshot(path=str(SHOTS / "07-trajectory-transcript.png"), full_page=True)


def test_run_a_query(page):
    page.click("nav button[data-tab='sparql']")
    page.wait_for_selector("#q-examples option[value='system-summary']", state="attached")
    page.select_option("#q-examples", "system-summary")
    page.click("#q-run")
    page.wait_for_selector("#q-results td")
    assert "torch" in page.locator("#q-results td").all_inner_texts()
    page.screenshot(path=str(SHOTS / "08-sparql.png"), full_page=True)
    page.fill("#q-text", "SELECT ?x WHERE {")
    page.click("#q-run")
    page.wait_for_function("document.querySelector('#q-error').textContent.includes('malformed query')")
    assert page.inner_text("#q-info").startswith("400")


def test_play_the_assistant_from_menus(page):
    page.click("nav button[data-tab='diagnosis']")
    page.wait_for_selector("#d-scenario option[value='TORCH.1']", state="attached")
    page.select_option("#d-scenario", "TORCH.1")
    page.select_option("#d-assistant", "human")
    page.select_option("#d-service", "simulated")
    page.click("#d-start")
    page.wait_for_selector("#m-action")
    actions = page.locator("#m-action option").evaluate_all("os => os.map(o => o.value)")
    assert "replace_component" in actions
    page.select_option("#m-action", "replace_component")
    page.select_option(".m-target[data-n='0']", "bat")
    page.wait_for_selector("#d-schematic svg")
    page.screenshot(path=str(SHOTS / "09-assistant-menus.png"), full_page=True)
    page.click("#m-suggest")
    page.wait_for_selector("#chat li.service >> nth=1")       # the result of the replacement
    page.wait_for_selector("#d-schematic[data-round='1'] svg")  # redrawn: the new battery lights both lamps
    assert page.locator("#d-schematic svg polygon[fill='#ffd84d']").count() >= 2
    page.wait_for_selector("#chat li.end, #m-claim")
    if page.locator("#m-claim").count():
        page.check(".m-part[value='bat']")
        page.click("#m-claim")
    end = page.wait_for_selector("#chat li.end", timeout=60_000)
    assert "End: success" in end.inner_text()
    assert "replace_component bat" in page.inner_text("#chat")
    page.screenshot(path=str(SHOTS / "10-assistant-done.png"), full_page=True)
