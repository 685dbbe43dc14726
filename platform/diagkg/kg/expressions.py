"""The small expression language of the behaviour declarations.

Expressions such as ``"resistance if has('resistance') else 120"`` or
``"abs(current('ctrl_relay')) <= 0.5"`` come from RDF (ontology/behaviour.ttl,
system couplings). They are parsed with :mod:`ast`, checked against a
whitelist (arithmetic, comparisons, boolean logic, conditional expressions,
names and calls of the functions the caller provides) and compiled once; no
attribute access, subscripts, lambdas or comprehensions get through.
"""

from __future__ import annotations

import ast
import functools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import ExpressionError, nearest
from .vocab import DK

_ALLOWED = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call,
    ast.Name, ast.Load, ast.Constant,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.Mod, ast.FloorDiv, ast.USub, ast.UAdd, ast.Not,
    ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)

# the functions each kind of expression may call (given values by the simulator)
ELEMENT_FUNCTIONS = ("has",)                                        # element values, conditions
COUPLING_FUNCTIONS = ("current", "lit", "illuminated", "voltage")   # couplings' closedWhen
# what each coupling function is given: a part's identifier, and voltage a port's name of it too, quoted
COUPLING_ARGUMENTS = {"current": ("part",), "lit": ("part",), "illuminated": ("part",), "voltage": ("part", "port")}
# emission and damage rules, after a solve: no functions (they read the component's power, current,
# voltage, and each named element's as <name>Power and <name>Current, e.g. filamentPower)
RESULT_FUNCTIONS: tuple[str, ...] = ()
_IDENTIFIER = "http://purl.org/dc/terms/identifier"     # dcterms:identifier, a part's name (coupling_problems)

MATH = {"min": min, "max": max, "abs": abs, "exp": math.exp, "log": math.log, "sqrt": math.sqrt}

_GLOBALS = {"__builtins__": {}, **MATH}

THERMAL_VOLTAGE = 1.380649e-23 * 298.15 / 1.602176634e-19  # kT/q at 25 °C


@dataclass(frozen=True)
class Expression:
    """A checked, compiled expression and the names it reads."""

    source: str
    where: str
    names: frozenset[str]
    code: Any
    calls: tuple[tuple[str, tuple[str, ...]], ...] = ()    # each call of a coupling function and what it names

    def __call__(self, env: Mapping[str, Any]) -> Any:
        try:
            return eval(self.code, _GLOBALS, env)  # noqa: S307 - checked AST, no builtins
        except NameError as exc:
            raise ExpressionError(f"{self.where}: {exc} in {self.source!r}") from None
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise ExpressionError(f"{self.where}: cannot evaluate {self.source!r}: {exc}") from None


def compile_expression(source: str, where: str, functions: Iterable[str] = ()) -> Expression:
    """Check and compile ``source``; ``where`` names its origin in error messages."""
    allowed_calls = set(MATH) | set(functions)
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{where}: not a valid expression {source!r}: {exc.msg}") from None
    names: set[str] = set()
    calls: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ExpressionError(f"{where}: {type(node).__name__} is not allowed in {source!r}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in allowed_calls or node.keywords:
                raise ExpressionError(f"{where}: only calls of {', '.join(sorted(allowed_calls))} are allowed in {source!r}")
            wanted = COUPLING_ARGUMENTS.get(node.func.id) if node.func.id in allowed_calls - set(MATH) else None
            if wanted is not None:
                calls.append((node.func.id, _named(node, wanted, where, source)))
        elif isinstance(node, ast.Name) and node.id not in allowed_calls:
            names.add(node.id)
        elif isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool)):
            raise ExpressionError(f"{where}: constant {node.value!r} is not allowed in {source!r}")
    return Expression(source, where, frozenset(names), compile(tree, where, "eval"), tuple(calls))


def names_read(source: str, where: str = "expression") -> frozenset[str]:
    """The names an expression of the behaviour declarations reads of what a component states (a stamp's value or
    condition, an emission or damage rule): its bare names, checked as :func:`compile_expression` checks them, but
    a name read only where ``has('name')`` holds, which asks whether a fault overrides it: ``"resistance if
    has('resistance') else (onResistance if closed else offResistance)"`` reads a fault's ``resistance``, never
    the one a switch states (a switch stating one was not warned that it changes nothing). Remembered by the
    text (a pure function of it: ``diagkg check`` asks it of every type's expressions for each scenario)."""
    try:
        return _names_read_of(source)
    except ExpressionError:
        return _names_read(source, where)       # raised again, saying where


@functools.lru_cache(maxsize=4096)
def _names_read_of(source: str) -> frozenset[str]:
    return _names_read(source, "expression")


def _names_read(source: str, where: str) -> frozenset[str]:
    expression = compile_expression(source, where, ELEMENT_FUNCTIONS)
    read: set[str] = set()

    def visit(node: ast.AST, guarded: frozenset[str]) -> None:
        test = node.test if isinstance(node, ast.IfExp) else None
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "has" and len(test.args) == 1 \
                and isinstance(test.args[0], ast.Constant) and isinstance(test.args[0].value, str):
            assert isinstance(node, ast.IfExp)
            visit(node.body, guarded | {test.args[0].value})
            visit(node.orelse, guarded)
            return
        if isinstance(node, ast.Name) and node.id not in guarded:
            read.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(ast.parse(source.strip(), mode="eval"), frozenset())
    return expression.names & frozenset(read)


def overload(expression: Expression) -> Expression | None:
    """For a damage rule written as a limit (``abs(current) > ratedCurrent``, ``power >= maxPower``): how far
    past the limit the component is, as ``abs(left) / abs(right)`` over the same names (of two fuses in series
    carrying one current, the one at the higher multiple of its rating blows first). None for any other form."""
    tree = ast.parse(expression.source.strip(), mode="eval")
    body = tree.body
    if not (isinstance(body, ast.Compare) and len(body.ops) == 1 and isinstance(body.ops[0], (ast.Gt, ast.GtE))):
        return None

    def magnitude(node: ast.expr) -> ast.expr:
        return ast.Call(ast.Name("abs", ast.Load()), [node], [])

    ratio = ast.Expression(ast.BinOp(magnitude(body.left), ast.Div(), magnitude(body.comparators[0])))
    ast.fix_missing_locations(ratio)
    return Expression(ast.unparse(ratio), expression.where, expression.names, compile(ratio, expression.where, "eval"))


def current_limits(expression: Expression) -> list[tuple[str, float]]:
    """The currents a coupling's condition compares with a number (``abs(current('cs')) > 0.5``: ``('cs', 0.5)``),
    the part's identifier and the number, each comparison of one side that is ``current('X')`` (or its ``abs``)
    with a number on the other."""
    out: list[tuple[str, float]] = []
    for node in ast.walk(ast.parse(expression.source.strip(), mode="eval")):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        sides = (node.left, node.comparators[0])
        parts = [_current_of(side) for side in sides]
        numbers = [side.value for side in sides if isinstance(side, ast.Constant) and isinstance(side.value, (int, float))]
        named = [p for p in parts if p is not None]
        if len(named) == 1 and len(numbers) == 1:
            out.append((named[0], float(numbers[0])))
    return out


def _current_of(node: ast.expr) -> str | None:
    """The part whose current ``node`` reads (``current('X')``, ``abs(current('X'))``), or None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "abs" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "current" and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return node.args[0].value
    return None


def _named(call: ast.Call, wanted: tuple[str, ...], where: str, source: str) -> tuple[str, ...]:
    """What a coupling function's call names: as many quoted names as it takes (``voltage('rx_r', 'p')``)."""
    name = call.func.id if isinstance(call.func, ast.Name) else "?"
    shown = ", ".join(wanted)
    if len(call.args) != len(wanted) or not all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                                 for a in call.args):
        raise ExpressionError(f"{where}: {name} takes {shown}, quoted ({name}({', '.join(repr(w) for w in wanted)})), "
                              f"in {source!r}")
    return tuple(str(a.value) for a in call.args if isinstance(a, ast.Constant))


def unknown_references(expression: Expression, ports: Mapping[str, Iterable[str]]) -> list[str]:
    """What ``expression``'s coupling calls name that the system lacks (``ports``: each component's identifier
    and its ports' names), one sentence each: a component unknown, or a port it does not have."""
    out = []
    for name, args in expression.calls:
        part = args[0]
        if part not in ports:
            near = nearest(part, ports)
            out.append(f"{name}({', '.join(map(repr, args))}) names {part!r}, which is no component of the system"
                       + (f" (did you mean {near!r}?)" if near else ""))
        elif len(args) > 1 and args[1] not in set(ports[part]):
            known = ", ".join(sorted(ports[part])) or "none"
            out.append(f"{name}({', '.join(map(repr, args))}): {part} has no port {args[1]!r} (its ports: {known})")
    return out


def coupling_problems(expression: Expression, coupling: str, triples: Iterable[tuple[str, str, str]]) -> list[str]:
    """What a coupling's expression names that its system lacks (a part, a part's port: a typo reads as 0 V
    or dark, never as an error), where the description holds the system's parts: ``triples`` as the values
    of their terms (IRIs, blank nodes' ids, literals' text); none when the parts are described elsewhere."""
    if not expression.calls:
        return []
    up: dict[str, set[str]] = defaultdict(set)
    ident: dict[str, str] = {}
    ports: dict[str, list[str]] = defaultdict(list)
    port_name: dict[str, str] = {}
    systems = set()
    for s, p, o in triples:
        if p == DK.partOf:
            up[s].add(o)
        elif p == _IDENTIFIER:
            ident[s] = o
        elif p == DK.hasPort:
            ports[s].append(o)
        elif p == DK.portName:
            port_name[s] = o
        elif p == DK.hasCoupling and o == coupling:
            systems.add(s)

    def within(node: str, seen: frozenset[str] = frozenset()) -> bool:
        return bool(up[node] & systems) or any(within(n, seen | {node}) for n in up[node] - seen - {node})

    # the components (the parts with ports: a module or an enclosure carries no current)
    parts = {ident[n]: [port_name.get(q, "") for q in ports[n]] for n in ident if n in up and n in ports and within(n)}
    return unknown_references(expression, parts) if parts else []

