"""Step 1 of the scenario import (:mod:`diagkg.kg.importer`): reading a scenario
table and normalising it.

:func:`normalise` reads the CSV with the standard library (:func:`read_rows`),
finds its columns by their headers (:data:`COLUMNS`), checks the syntax of
every cell and splits the multi-valued ones into the small relational tables
the RML mapping reads (:data:`TABLES`: ``scenarios.csv``, ``faults.csv``,
``repair.csv``…), next to two lookup tables made from the shipped resources
(system names → keys, :func:`system_lookup`; action ids → action types,
:func:`action_lookup`).

Library code: raises :class:`~diagkg.errors.InputError` for a table that
cannot be read (with file, row and column), never prints or exits.
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from rdflib.namespace import RDFS

from ..errors import InputError
from . import graphs, resources
from .rdfio import parse_text, value_of
from .vocab import DK, DK_NS

if TYPE_CHECKING:
    from .store import KnowledgeSource

SYSTEM_LABELS = "scenario-systems.csv"
DEFAULT_BUDGET = 10

# field -> (header as in SCENARIOS_MASTER.csv, other accepted spellings...)
COLUMNS: dict[str, tuple[str, ...]] = {
    "number": ("scenario number",),
    "id": ("scenario id (system+first category+index)", "scenario id", "id"),
    "system": ("target system", "system"),
    "alterations": ("alterations to system configuartion", "alterations to system configuration"),
    "context": ("additional context",),
    "category": ("category", "categories"),
    "label": ("injected fault", "label"),
    "description": ("scenario description", "description"),
    "observations": ("canonical initial observations", "initial observations"),
    "diagnosis": ("ideal diagnosis example", "ideal diagnosis"),
    "allowance": ("minimum round number allowance",),
    # optional structured columns (not in the original table)
    "faults": ("faults",),
    "faulty": ("faulty components", "faulty component"),
    "repair": ("ideal repair",),
    "removed": ("removed components", "removed component"),
    "permanent": ("permanent repairs", "permanent repair"),
}
REQUIRED = ("number", "id", "system", "category", "label", "observations")
STRUCTURED = ("faults", "faulty", "repair", "removed", "permanent")
# the structured columns without which no scenario can conform
ESSENTIAL = ("faults", "faulty", "repair")

# the normalised tables and their columns (mappings/scenarios.rml.ttl reads them)
TABLES: dict[str, tuple[str, ...]] = {
    "scenarios": ("id", "number", "label", "description", "system", "observations", "diagnosis", "context", "budget"),
    "categories": ("id", "category"),
    "faults": ("id", "n", "mode", "target", "other", "value", "probability"),
    "faulty": ("id", "component"),
    "repair": ("id", "position", "action", "target", "value"),
    "configurations": ("id", "description"),
    "removed": ("id", "component"),
    "permanent": ("id", "action"),
    "systems": ("label", "key", "iri"),
    "actions": ("id", "name"),
}

_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")          # ids, part ids, mode and action names
_SCENARIO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_SPLIT_LIST = re.compile(r"[\s,;]+")
_SPLIT_ENTRIES = re.compile(r"[;\n]")
_SPLIT_TOKENS = re.compile(r"[\s,]+")


@dataclass
class ScenarioRow:
    """One scenario row of the table: its spreadsheet row, number, id and system (key and as written)."""

    row: int
    number: int
    id: str
    key: str | None
    system: str
    namespace: str | None = None       # the system's namespace (its parts' IRIs start with it)


@dataclass
class Normalised:
    """The normalised tables of one spreadsheet, ready for the RML mapping."""

    source: str
    tables: dict[str, list[dict[str, str]]]
    rows: list[ScenarioRow]
    columns: dict[str, str]                      # field -> header as written
    missing_columns: tuple[str, ...]
    problems: dict[str, list[tuple[str, str, str]]]  # scenario id -> (field, path, message)

    def write(self, folder: Path) -> None:
        """Write every table as ``<name>.csv`` into ``folder``."""
        for name, columns in TABLES.items():
            with open(folder / f"{name}.csv", "w", encoding="utf-8", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
                writer.writeheader()
                writer.writerows(self.tables[name])


class _Cells:
    """Collects cell errors so that one InputError reports all of them."""

    def __init__(self, source: str, columns: dict[str, str]):
        self.source = source
        self.columns = columns
        self.errors: list[str] = []

    def error(self, row: int, field_: str, message: str) -> None:
        self.errors.append(f"row {row}, column '{self.columns.get(field_, COLUMNS[field_][0])}': {message}")

    def raise_if_any(self) -> None:
        if self.errors:
            shown = self.errors[:25]
            more = f"\n  … and {len(self.errors) - 25} more" if len(self.errors) > 25 else ""
            raise InputError(f"{self.source}: {len(self.errors)} problem(s) in the table:\n  "
                             + "\n  ".join(shown) + more)


def _canon(header: str) -> str:
    return " ".join(header.replace("\ufeff", "").split()).casefold()


def read_rows(path: str | Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the data rows (with their spreadsheet row numbers) of a CSV
    file, up to the first blank row."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not a CSV file")
    records: list[list[str]] = []
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            first = f.readline()
            f.seek(0)
            # spreadsheets exported with a comma as decimal mark use semicolons
            delimiter = ";" if first.count(";") > first.count(",") else ","
            for record in csv.reader(f, delimiter=delimiter, strict=True):
                records.append(record)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                         "export the spreadsheet as CSV UTF-8") from None
    except csv.Error as exc:
        # the row the reader was in (a quote never closed: it said only "unexpected end of data", not where)
        raise InputError(f"{path}: row {len(records) + 1}: malformed CSV: {exc} (check the quotes of that row: "
                         "a quoted cell left open runs on to the end of the file)") from None
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror}") from None
    if not records or not any(c.strip() for c in records[0]):
        raise InputError(f"{path}: row 1: no header row (the file is empty)")
    rows: list[tuple[int, list[str]]] = []
    for index, record in enumerate(records[1:], start=2):
        if not any(c.strip() for c in record):
            break                       # the first blank row ends the table
        rows.append((index, record))
    return records[0], rows


def _header_fields(path: str | Path, header: Sequence[str]) -> dict[str, int]:
    by_name = {_canon(h): i for i, h in reversed(list(enumerate(header)))}
    found: dict[str, int] = {}
    for field_, names in COLUMNS.items():
        for name in names:
            if name in by_name:
                found[field_] = by_name[name]
                break
    missing = [COLUMNS[f][0] for f in REQUIRED if f not in found]
    if missing:
        have = ", ".join(repr(h) for h in header if h.strip()) or "(nothing)"
        raise InputError(f"{path}: row 1 (header): missing column(s) "
                         + ", ".join(repr(m) for m in missing) + f"; the header has {have}")
    return found


def system_lookup() -> dict[str, str]:
    """System names as a table may write them (normalised) -> system key: the
    original table's names (mappings/scenario-systems.csv), and each shipped
    system's key and rdfs:label."""
    out: dict[str, str] = {}
    with io.TextIOWrapper(resources.folder("mappings").joinpath(SYSTEM_LABELS).open("rb"), encoding="utf-8", newline="") as f:
        for r in csv.DictReader(f):
            out[_canon(r["label"])] = r["key"]
    label, key_p = str(RDFS.label), str(DK.systemKey)
    for file in resources.system_files():
        triples = parse_text(file.read_text(encoding="utf-8"), file.name).triples
        keys = {t.subject: value_of(t.object) for t in triples if t.predicate.value == key_p}
        for t in triples:
            if t.predicate.value == label and t.subject in keys:
                out.setdefault(_canon(value_of(t.object)), keys[t.subject])
        for key in keys.values():
            out.setdefault(_canon(key), key)
    return out


def _catalogue(prop: str) -> dict[str, str]:
    """``value of prop`` -> local name, for the dk: terms of the ontology that have it."""
    out: dict[str, str] = {}
    for f in resources.ontology_files():
        for t in parse_text(f.read_text(encoding="utf-8"), f.name).triples:
            if t.predicate.value == prop and value_of(t.subject).startswith(DK_NS):
                out.setdefault(value_of(t.object), value_of(t.subject)[len(DK_NS):])
    return out


def action_lookup() -> dict[str, str]:
    """Action id (replace_component) -> local name of the action type (ReplaceComponent)."""
    return _catalogue(str(DK.actionId))


def _probability_modes() -> set[str]:
    """Fault modes whose number is a probability (dk:faultParameter "probability")."""
    out: set[str] = set()
    for f in resources.ontology_files():
        for t in parse_text(f.read_text(encoding="utf-8"), f.name).triples:
            if t.predicate.value == str(DK.faultParameter) and value_of(t.object) == "probability":
                subject = value_of(t.subject)
                out.add(subject[len(DK_NS):] if subject.startswith(DK_NS) else subject)
    return out


def _category_name(label: str) -> str:
    """``Limited Observability`` / ``limited observability`` / ``dk:LimitedObservability``
    -> ``LimitedObservability``."""
    label = label.strip().removeprefix("dk:")
    words = label.replace("-", " ").replace("_", " ").split()
    if len(words) == 1 and words[0][:1].isupper():
        return words[0]
    return "".join(w[:1].upper() + w[1:] for w in words)


def _number(token: str) -> float | None:
    try:
        x = float(token)
    except ValueError:
        return None
    return x if x == x and abs(x) != float("inf") else None


def _decimal(token: str) -> str:
    return format(Decimal(token).normalize(), "f") if "e" in token.lower() else token


def _part(token: str) -> str:
    return token.strip().removeprefix("sys:")


# a number written with a decimal comma (0,5: a spreadsheet of a locale that writes them, exported with
# semicolons), as a token of its own; it was split at the comma into two numbers ("at most one number")
_DECIMAL_COMMA = re.compile(r"(?<![\w.,])(\d+),(\d+)(?![\w.,])")


def _point(text: str) -> str:
    """``text`` with its decimal commas written as points."""
    return _DECIMAL_COMMA.sub(r"\1.\2", text)


def _entries(text: str) -> Iterator[tuple[int, str, str, list[str], list[str], str | None]]:
    """The entries of a multi-valued cell ("head target [target] [number]; ..."): for each,
    (position, entry, head, target ids, numbers, what is wrong with its targets or number)."""
    for position, entry in enumerate((e.strip() for e in _SPLIT_ENTRIES.split(text) if e.strip()), start=1):
        head, *rest = _SPLIT_TOKENS.split(_point(entry))
        numbers = [t for t in rest if _number(t) is not None]
        targets = [_part(t) for t in rest if _number(t) is None]
        tail: str | None = None
        if len(numbers) > 1 or (numbers and rest[-1] != numbers[0]):
            tail = "at most one number, at the end"
        elif any(not _NAME.match(t) for t in targets):
            tail = f"{next(t for t in targets if not _NAME.match(t))!r} is not a part id"
        yield position, entry, head, targets, numbers, tail


def _iri(namespace: str, part: str) -> str:
    """A part's IRI in its system's namespace (none when the system is unknown: no triple is made)."""
    return namespace + part if namespace else ""


def _unknown_action(action: str, actions: Iterable[str]) -> str:
    close = difflib.get_close_matches(action, list(actions), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "see ontology/actions.ttl (dk:actionId)"
    return f"unknown action {action!r}; {hint}"


def store_systems(store: "KnowledgeSource | None") -> dict[str, tuple[str, str]]:
    """The systems of ``store``: key -> (label, IRI); none without a store."""
    if store is None:
        return {}
    return {str(r["key"]): (str(r["label"]), str(r["system"])) for r in store.select("system-summary", {})}


def normalise(path: str | Path, systems_of_store: dict[str, tuple[str, str]] | None = None) -> Normalised:
    """Read a scenario table and split it into the normalised tables.

    A scenario's system is named by its key or label: one of ``systems_of_store`` (key -> (label, IRI), a
    user's systems as :func:`store_systems` reads them), else a shipped one. Part ids are written into IRIs
    in the namespace of the system's IRI.

    Raises :class:`InputError` for a file that cannot be read, a missing
    required column or ill-formed cells (all of them, each with its row and
    column). Unknown names that are well-formed (a fault mode, a part) are left
    to the validation, which reports them as violations.
    """
    source = str(path)
    header, records = read_rows(path)
    found = _header_fields(path, header)
    columns = {f: header[i].strip() for f, i in found.items()}
    cells = _Cells(source, columns)
    systems = system_lookup()
    iris = {k: graphs.system_namespace(k) + k for k in systems.values()}
    for k, (label, iri) in (systems_of_store or {}).items():       # the store's own, before the shipped
        systems[_canon(k)] = k
        systems[_canon(label)] = k
        iris[k] = iri
    actions = action_lookup()
    probability_modes = _probability_modes()
    tables: dict[str, list[dict[str, str]]] = {name: [] for name in TABLES}
    rows: list[ScenarioRow] = []
    problems: dict[str, list[tuple[str, str, str]]] = {}
    seen_ids: dict[str, int] = {}
    seen_numbers: dict[int, int] = {}

    def cell(record: list[str], field_: str) -> str:
        i = found.get(field_)
        return record[i].strip() if i is not None and i < len(record) else ""

    # a row whose identifier or number is wrong is checked to its end all the same (the table is refused, with
    # every problem of every row; a row stopped at its first one hid the rest until that one was fixed)
    for row, record in records:
        sid, number_text = cell(record, "id"), cell(record, "number")
        if not sid:
            cells.error(row, "id", "empty: every scenario needs an identifier (e.g. 3CC.S.1)")
        elif not _SCENARIO_ID.match(sid):
            cells.error(row, "id", f"{sid!r} is not a usable identifier: use letters, digits, '.', '-', '_'")
        elif sid in seen_ids:
            cells.error(row, "id", f"{sid!r} is already used on row {seen_ids[sid]}")
        else:
            seen_ids[sid] = row
        try:
            number = int(number_text)
            if number < 1:
                raise ValueError
        except ValueError:
            cells.error(row, "number", f"expected a whole number ≥ 1, got {number_text!r}")
            number = 0
        if number in seen_numbers:
            cells.error(row, "number", f"{number} is already used on row {seen_numbers[number]}")
        elif number:
            seen_numbers[number] = row
        budget = DEFAULT_BUDGET
        allowance = cell(record, "allowance")
        if allowance:
            rounds = _number(_point(allowance))
            if rounds is None or not rounds.is_integer() or rounds < 1:
                cells.error(row, "allowance", f"expected a whole number of rounds ≥ 1, got {allowance!r}")
            else:
                # the original applied the allowance with min(), so it could only
                # shrink the usual budget; it is meant as a minimum
                budget = max(DEFAULT_BUDGET, int(rounds))
        system = cell(record, "system")
        key = systems.get(_canon(system)) if system else None
        if system and key is None:
            known = sorted({k for k in systems.values()})
            close = difflib.get_close_matches(_canon(system), list(systems), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.setdefault(sid, []).append((
                "system", "dk:onSystem",
                f"unknown target system {system!r}: give a system's name or key ({', '.join(known)}){hint}"))
        ns = graphs.namespace_of(iris[key]) if key is not None else None
        rows.append(ScenarioRow(row, number, sid, key, system, ns))
        tables["scenarios"].append({
            "id": sid, "number": str(number), "label": cell(record, "label"),
            "description": cell(record, "description"), "system": _canon(system),
            "observations": cell(record, "observations"), "diagnosis": cell(record, "diagnosis"),
            "context": cell(record, "context"), "budget": str(budget),
        })
        for label in filter(None, (c.strip() for c in cell(record, "category").split(","))):
            name = _category_name(label)
            if not _NAME.match(name):
                cells.error(row, "category", f"{label!r} is not a category name")
                continue
            tables["categories"].append({"id": sid, "category": name})
        k = ns or ""      # the parts' IRIs: the system's namespace and the part id (no system: none)

        # faults: "Mode target [other] [number]; ..."
        for n, entry, mode, targets, numbers, tail in _entries(cell(record, "faults")):
            mode = mode.removeprefix("dk:")
            where = f"fault {n} ({entry!r})"
            if not _NAME.match(mode) or _number(mode) is not None:
                cells.error(row, "faults", f"{where}: {mode!r} is not a fault mode name")
                continue
            if not targets or len(targets) > 2:
                cells.error(row, "faults", f"{where}: expected a fault mode, one or two target ids and "
                                           "an optional number (e.g. 'CrossedCables a.p b.p')")
                continue
            if tail:
                cells.error(row, "faults", f"{where}: {tail}")
                continue
            value = probability = ""
            if numbers:
                if mode in probability_modes:
                    probability = _decimal(numbers[0])
                else:
                    value = repr(float(numbers[0]))
            tables["faults"].append({"id": sid, "n": str(n), "mode": mode, "target": _iri(k, targets[0]),
                                     "other": _iri(k, targets[1]) if len(targets) > 1 else "", "value": value,
                                     "probability": probability})

        removed = 0
        for field_ in ("faulty", "removed"):
            for part in filter(None, _SPLIT_LIST.split(cell(record, field_))):
                part = _part(part)
                if not _NAME.match(part):
                    cells.error(row, field_, f"{part!r} is not a part id")
                    continue
                tables[field_].append({"id": sid, "component": _iri(k, part)})
                removed += field_ == "removed"

        alterations = cell(record, "alterations")
        if alterations or removed:
            tables["configurations"].append({"id": sid, "description": alterations})

        # ideal repair: "action_id target [target] [number]; ..."
        for position, entry, action, targets, numbers, tail in _entries(cell(record, "repair")):
            where = f"step {position} ({entry!r})"
            if not _NAME.match(action) or not targets:
                cells.error(row, "repair", f"{where}: expected an action id and its target ids "
                                           "(e.g. 'replace_component battery')")
                continue
            if tail:
                cells.error(row, "repair", f"{where}: {tail}")
                continue
            if action not in actions:
                problems.setdefault(sid, []).append((
                    "repair", "dk:actionType", f"step {position}: {_unknown_action(action, actions)}"))
            value = _decimal(numbers[0]) if numbers else ""
            for target in targets:
                tables["repair"].append({"id": sid, "position": str(position), "action": action,
                                         "target": _iri(k, target), "value": value})

        # action types whose effect persists in this scenario: "rotate_enclosure, ..."
        for action in filter(None, _SPLIT_LIST.split(cell(record, "permanent"))):
            if not _NAME.match(action):
                cells.error(row, "permanent", f"{action!r} is not an action id")
                continue
            if action not in actions:
                problems.setdefault(sid, []).append((
                    "permanent", "dk:permanentRepair", _unknown_action(action, actions)))
            tables["permanent"].append({"id": sid, "action": action})
    cells.raise_if_any()
    if not rows:
        raise InputError(f"{source}: no scenario rows (the table ends at the first blank row)")
    tables["systems"] = [{"label": label, "key": key, "iri": iris[key]} for label, key in sorted(systems.items())]
    tables["actions"] = [{"id": a, "name": name} for a, name in sorted(actions.items())]
    missing = tuple(COLUMNS[f][0] for f in ESSENTIAL if f not in found)
    if "removed" not in found and tables["configurations"]:
        missing += (COLUMNS["removed"][0],)   # configuration changes given only in words
    return Normalised(source, tables, rows, columns, missing, problems)
