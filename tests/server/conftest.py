"""Fixtures shared by the tests of ``diagkg serve``."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium, headless, driven by Playwright: launched once per test module (about 2 s, more on a
    loaded machine). Each test opens its own browser context (its own storage, cookies and pages) and closes it.
    Not once per process: Playwright's sync API keeps an asyncio loop running in the thread while it is open, so
    another module's `sync_playwright()` or `asyncio.run` in that worker failed ("using Playwright Sync API
    inside the asyncio loop")."""
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh --dev)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()
