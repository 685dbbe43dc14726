"""Live diagnostic sessions (placeholder while being written)."""
from __future__ import annotations

from fastapi import APIRouter, FastAPI

router = APIRouter()


class Sessions:
    def close(self) -> None:
        pass


def sessions_of(app: FastAPI) -> Sessions:
    return Sessions()
