"""diagkg: diagnostic scenarios and assistants on a knowledge graph."""

from typing import Any

__version__ = "0.1.0"

__all__ = ["make", "Action", "Hypothesis", "Session", "__version__"]


def __getattr__(name: str) -> Any:
    # the session API is imported lazily: `import diagkg` stays cheap
    if name in ("make", "Action", "Hypothesis", "Session"):
        from .env import service

        return getattr(service, name)
    raise AttributeError(f"module 'diagkg' has no attribute {name!r}")
