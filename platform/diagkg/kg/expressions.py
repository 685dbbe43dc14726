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
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import ExpressionError

_ALLOWED = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call,
    ast.Name, ast.Load, ast.Constant,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.Mod, ast.FloorDiv, ast.USub, ast.UAdd, ast.Not,
    ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)

# the functions each kind of expression may call (given values by the simulator)
ELEMENT_FUNCTIONS = ("has",)                                        # element values, conditions
COUPLING_FUNCTIONS = ("current", "lit", "illuminated", "voltage")   # couplings' closedWhen
# emission and damage rules, after a solve: no functions (they read the component's power, current,
# voltage, and each named element's as <name>Power and <name>Current, e.g. filamentPower)
RESULT_FUNCTIONS: tuple[str, ...] = ()

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
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise ExpressionError(f"{where}: {type(node).__name__} is not allowed in {source!r}")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in allowed_calls or node.keywords:
                raise ExpressionError(f"{where}: only calls of {', '.join(sorted(allowed_calls))} are allowed in {source!r}")
        elif isinstance(node, ast.Name) and node.id not in allowed_calls:
            names.add(node.id)
        elif isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool)):
            raise ExpressionError(f"{where}: constant {node.value!r} is not allowed in {source!r}")
    return Expression(source, where, frozenset(names), compile(tree, where, "eval"))
