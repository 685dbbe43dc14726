"""An assistant package written by a test and installed for subprocesses (a folder with the module
and its ``.dist-info`` entry point, put on ``PYTHONPATH``): no build, no pip."""

from __future__ import annotations

import textwrap
from pathlib import Path

CRASHER = textwrap.dedent('''
    """A plug-in assistant that looks at the first part once, then raises (a bug of its own)."""
    from diagkg.agents.registry import BaseAssistant
    from diagkg.env.actions import Action


    class Crasher(BaseAssistant):
        name = "crasher"

        def suggest(self):
            if not self.outcomes:
                return Action("observe_component", (sorted(self.briefing.parts)[0],))
            raise RuntimeError("the crasher fell over")
''')


def install_assistant(folder: Path, name: str, module: str, source: str, attribute: str) -> Path:
    """Write ``module`` (``source``) and a distribution declaring ``name = module:attribute`` in the
    ``diagkg.assistants`` entry-point group into ``folder``; returns the folder (for ``PYTHONPATH``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(source)
    info = folder / f"{module}-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[diagkg.assistants]\n{name} = {module}:{attribute}\n")
    return folder
