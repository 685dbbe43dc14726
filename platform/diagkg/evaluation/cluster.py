"""What a Dask cluster's workers hold for a campaign: its knowledge, given to each worker when it joins.

The knowledge (ontology, systems, the campaign's scenarios: megabytes of N-Quads) goes to the cluster
as a worker plug-in (:class:`Knowledge`): the scheduler gives it to every worker, those that join later
included, and each parses it once into a store of its own (:func:`~diagkg.evaluation.sessions.init_worker`);
a task names it by its digest, as on a local pool. It used to be scattered to the workers as data the tasks
depended on, and a session that killed every worker (a native crash tried on each) took the only copies
with them: the other sessions could never run, and the campaign waited for them forever. A restarted
worker now gets the knowledge again as it joins. Imported only when a campaign runs on Dask.
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from .sessions import init_worker


class Knowledge(WorkerPlugin):
    """The campaign's knowledge, loaded into each worker as it joins the cluster."""

    def __init__(self, data: bytes):
        self.data = data

    def setup(self, worker: Any) -> None:
        init_worker(self.data)


def plugin_name(digest: str) -> str:
    """The name the knowledge of ``digest`` is registered under (a cluster shared by campaigns holds each once)."""
    return f"diagkg-knowledge-{digest[:16]}"
