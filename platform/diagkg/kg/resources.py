"""Access to the declarative resources shipped with diagkg, by package name.

The folders ``ontology/``, ``shapes/``, ``queries/``, ``mappings/``,
``scenarios/`` and ``schemas/`` (the assistant protocol's JSON Schemas) at the top of the repository are mapped to the packages
``diagkg.data.<folder>`` (see pyproject.toml), so :func:`importlib.resources.files`
finds them in an editable install and in a wheel alike. Nothing else in diagkg
computes paths to them.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from typing import Iterator

FOLDERS = ("ontology", "shapes", "queries", "mappings", "scenarios", "schemas")


def folder(name: str) -> Traversable:
    """The resource folder ``name`` (one of :data:`FOLDERS`)."""
    if name not in FOLDERS:
        raise ValueError(f"unknown resource folder {name!r}; expected one of {', '.join(FOLDERS)}")
    return resources.files(f"diagkg.data.{name}")


def walk(root: Traversable, suffix: str) -> Iterator[Traversable]:
    """Every file below ``root`` whose name ends with ``suffix``, in name order."""
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            if entry.name != "__pycache__":
                yield from walk(entry, suffix)
        elif entry.name.endswith(suffix):
            yield entry


def files(name: str, suffix: str = ".ttl") -> list[Traversable]:
    """All files of a resource folder with the given suffix, recursively."""
    return list(walk(folder(name), suffix))


def ontology_files() -> list[Traversable]:
    return files("ontology")


def shape_files() -> list[Traversable]:
    return files("shapes")


def system_files() -> list[Traversable]:
    return list(walk(folder("scenarios").joinpath("systems"), ".ttl"))


def catalog_files() -> list[Traversable]:
    """The shipped scenario files, in name (= number) order."""
    return list(walk(folder("scenarios").joinpath("catalog"), ".ttl"))
