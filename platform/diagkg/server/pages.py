"""The web page (placeholder while being written)."""
from __future__ import annotations

from fastapi import FastAPI


def mount(app: FastAPI) -> None:
    pass
