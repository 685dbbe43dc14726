"""Evaluation campaigns over HTTP: each campaign's tables as JSON and its report as one
self-contained HTML page, recomputed from the store on every request (as ``diagkg report``
does), so a campaign still running shows what it has stored so far. Both carry the
qualitative results when a judge ran (cluster labels, rubric levels, gold match counts:
:mod:`diagkg.evaluation.rubric_report`), and the page its ``rubric.png``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from ..errors import InputError
from ..evaluation import campaign as cp
from ..evaluation import metrics as mx
from ..evaluation import report, rubric_report
from ..kg.store import KnowledgeStore
from .state import state_of

router = APIRouter(prefix="/api")


@router.get("/campaigns/{campaign}/tables", tags=["evaluation"],
            summary="A campaign's tables (by system, category, scenario, difficulty, paired…; the judge's cluster "
                    "labels, rubric levels and gold match counts when it ran), from the store")
def campaign_tables(request: Request, campaign: str) -> list[dict[str, Any]]:
    store, campaign = _with_campaign(request, campaign)
    data = mx.load(store, [campaign])
    qualitative = rubric_report.tables(store, rubric_report.load(store, [campaign]))
    return [{"name": t.name, "title": t.title, "columns": t.columns, "rows": t.rows}
            for t in report.tables(store, data) + qualitative]


@router.get("/campaigns/{campaign}/report.html", tags=["evaluation"], response_class=HTMLResponse,
            summary="A campaign's report: every table and plot in one self-contained page")
def campaign_report(request: Request, campaign: str) -> HTMLResponse:
    store, campaign = _with_campaign(request, campaign)
    with tempfile.TemporaryDirectory(prefix="diagkg-report-") as folder:
        report.write_report(store, [campaign], Path(folder))
        return HTMLResponse((Path(folder) / "report.html").read_text(encoding="utf-8"))


def _with_campaign(request: Request, campaign: str) -> tuple[KnowledgeStore, str]:
    """The store and the campaign's id (``campaign`` is an id, or the name it was given when one campaign has it)."""
    store = state_of(request).fresh()
    try:
        return store, cp.open_campaign(store, campaign).id
    except InputError as exc:                    # an unknown campaign: 404 with its message
        raise HTTPException(404, str(exc)) from None
    except ValueError:                           # characters no campaign id has (not an IRI)
        raise HTTPException(404, f"no campaign {campaign!r} in the store") from None
