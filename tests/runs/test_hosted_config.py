"""A plug-in that is not trusted runs in a process of its own, yet a configuration key it does not declare
is refused before any session starts, as it is in diagkg's process (exit 2, naming the nearest key).

Before, the key reached the hosted process only with the briefing: the plug-in's constructor raised
there, the session was stored as a surrender (``exited``, a traceback as the reason), and ``diagkg run``
said nothing of the misspelt key on its own line; a campaign stored one such surrender per session.
"""

from __future__ import annotations

import os
import textwrap

from ..support.cli import run_cli
from ..support.plugins import install_assistant
from ..support.serving import torch_store

WALKER = textwrap.dedent('''
    """A plug-in that names each part in turn, in the order its configuration asks."""
    from diagkg.agents.registry import BaseAssistant
    from diagkg.env.actions import Hypothesis


    class Walker(BaseAssistant):
        name = "walker"
        api_version = 3
        config_keys = frozenset({"order"})

        def setup(self, briefing):
            super().setup(briefing)
            parts = sorted(p for p, kind in briefing.parts.items() if kind not in ("enclosure", "opening"))
            self.todo = parts[::-1] if self.config.get("order") == "desc" else parts

        def suggest(self):
            return Hypothesis([self.todo.pop(0)]) if self.todo else None
''')


def test_a_hosted_plugin_refuses_an_unknown_configuration_key_before_the_session(tmp_path):
    store = torch_store(tmp_path)
    site = install_assistant(tmp_path / "site", "walker", "diagkg_walker", WALKER, "Walker")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
           "DIAGKG_TRUSTED_ASSISTANTS": ""}          # hosted: python -m diagkg.runs.exec_host
    bad = run_cli("--store", str(store), "run", "--scenario", "TORCH.1", "--assistant", "walker",
                  "--config", '{"ordr": "desc"}', env=env)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "walker takes no configuration key 'ordr' (did you mean 'order'?); it takes order" in bad.stderr
    assert "trajectory:" not in bad.stdout           # no session was played, none stored
    listed = run_cli("--store", str(store), "query", "trajectory-list", "--format", "json", env=env)
    assert listed.returncode == 0 and "walker" not in listed.stdout, listed.stderr

    good = run_cli("--store", str(store), "run", "--scenario", "TORCH.1", "--assistant", "walker",
                   "--config", '{"order": "desc"}', env=env)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "end: success" in good.stdout and "round  1: hypothesis {sw}" in good.stdout     # desc: sw first


FUTURE = WALKER.replace('name = "walker"', 'name = "future"').replace("api_version = 3", "api_version = 99")


def test_a_hosted_plugin_for_a_newer_api_is_refused_before_the_session(tmp_path):
    """Before, the hosted process refused it only once briefed: a session stored as a surrender (exited)."""
    store = torch_store(tmp_path)
    site = install_assistant(tmp_path / "site", "future", "diagkg_future", FUTURE, "Walker")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
           "DIAGKG_TRUSTED_ASSISTANTS": ""}
    done = run_cli("--store", str(store), "run", "--scenario", "TORCH.1", "--assistant", "future", env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "written for plug-in API version 99, newer than this diagkg's version" in done.stderr
    assert "trajectory:" not in done.stdout


def test_a_campaign_refuses_a_key_its_hosted_plugin_does_not_take_before_it_starts(tmp_path):
    """Before, a campaign could not know a hosted plug-in's keys: it ran, one failed session per scenario."""
    store = torch_store(tmp_path)
    site = install_assistant(tmp_path / "site", "walker", "diagkg_walker", WALKER, "Walker")
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
           "DIAGKG_TRUSTED_ASSISTANTS": ""}
    done = run_cli("--store", str(store), "evaluate", "--name", "typo", "--scenarios", "TORCH.1", "--assistant", "walker",
                   "--config", '{"ordr": "desc"}', env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no assistant of the campaign (walker) takes the configuration key 'ordr' (did you mean 'order'?)" in done.stderr
    listed = run_cli("--store", str(store), "query", "trajectory-list", "--format", "json", env=env)
    assert listed.returncode == 0 and "walker" not in listed.stdout, listed.stderr
