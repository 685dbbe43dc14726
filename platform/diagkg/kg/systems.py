"""The system descriptions shipped with diagkg, and how they are generated.

Each shipped system is a plain Turtle file in ``scenarios/systems/``; that file
is what gets validated, loaded and simulated, and a new system can be written
directly in Turtle. Our own five systems share modules (power supply, control,
load), so their Turtle is generated from Jinja2 templates: the modules are
written once as macros in ``scenarios/systems/modules/`` and each
``<key>.ttl.j2`` assembles them and adds its own wiring. ``diagkg build-systems``
regenerates the ``.ttl`` files; a test fails when one is out of date.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError, UnknownTermError
from . import resources

if TYPE_CHECKING:  # pragma: no cover
    from importlib.resources.abc import Traversable

    import jinja2

TEMPLATE_SUFFIX = ".ttl.j2"


def _systems_folder() -> Traversable:
    return resources.folder("scenarios").joinpath("systems")


def _load_template(name: str) -> str | None:
    node = _systems_folder()
    for part in name.split("/"):
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8") if node.is_file() else None


def _environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FunctionLoader(_load_template),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # output is Turtle written only by our own templates
        keep_trailing_newline=True,
    )


def template_keys() -> list[str]:
    """Keys of the systems that have a template (e.g. ``three_cubes``)."""
    return sorted(
        e.name[: -len(TEMPLATE_SUFFIX)] for e in _systems_folder().iterdir() if e.name.endswith(TEMPLATE_SUFFIX)
    )


def render(key: str) -> str:
    """The Turtle generated from ``<key>.ttl.j2``."""
    import jinja2

    name = key + TEMPLATE_SUFFIX
    try:
        text = _environment().get_template(name).render(system_key=key, template_name=name)
    except jinja2.TemplateNotFound:
        raise UnknownTermError(f"no system template {name}; known: {', '.join(template_keys())}") from None
    except jinja2.TemplateError as exc:
        raise InputError(f"{name}: template error: {exc}") from exc
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).lstrip("\n")


def build(out_dir: str | Path | None = None, check: bool = False) -> dict[str, bool]:
    """Render every template to ``<key>.ttl``; returns key -> whether the file changed.

    With ``check=True`` nothing is written (used by the freshness test).
    """
    folder = Path(str(_systems_folder())) if out_dir is None else Path(out_dir)
    changed: dict[str, bool] = {}
    for key in template_keys():
        text = render(key)
        target = folder / f"{key}.ttl"
        old = target.read_text(encoding="utf-8") if target.exists() else None
        changed[key] = old != text
        if changed[key] and not check:
            target.write_text(text, encoding="utf-8")
    return changed


def shipped_system_file(key: str) -> Traversable:
    """The shipped Turtle file of a system key."""
    node = _systems_folder().joinpath(f"{key}.ttl")
    if not node.is_file():
        known = sorted(e.name[:-4] for e in _systems_folder().iterdir() if e.name.endswith(".ttl"))
        raise UnknownTermError(f"no shipped system {key!r}; known: {', '.join(known)}")
    return node
