"""Whether a parsed JSON value can be stored and shown: the one check for free-form data.

Python's JSON parser accepts what neither database nor a page can take: ``NaN`` and
``Infinity`` (SQLite's ``JSON_VALID`` and PostgreSQL's ``jsonb`` refuse them), a lone
surrogate such as ``"\\ud83d"`` (no UTF-8 text holds it: the page that shows it fails, and
PostgreSQL refuses it), a NUL character (PostgreSQL cannot store it), integers beyond 64
bits (SQLite's integers and every integer column stop at 2**63 - 1) and nesting deeper than
any map or action needs (SQLite's JSON functions stop at 1000 levels; the pages recurse).

``json_value_problem`` walks the value with a loop, not a recursion, and names the place of
the first problem (``data.provinces[0].x``). Every path that stores free-form JSON calls it:
the API's body parser for every request body, and ``map_from_dict`` for every map (the
API, ``loadmap``, the demo).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Final

from .errors import RulesInputError

# Far more than any map (4 levels) or battle action needs; far less than SQLite's 1000.
MAX_DEPTH: Final = 32
# SQLite's INTEGER and PostgreSQL's bigint: a JSON integer beyond them cannot be stored in a
# column, and in JSON it would silently become a float.
INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**63 - 1


class JsonProblem(str, Enum):
    NOT_FINITE = "not_finite"
    SURROGATE = "surrogate"
    NUL = "nul"
    INTEGER = "integer"
    DEPTH = "depth"
    TYPE = "type"


MESSAGES: Final = {
    JsonProblem.NOT_FINITE: "must be a finite number, not {value}",
    JsonProblem.SURROGATE: "contains a lone surrogate ({value}), which is not a character",
    JsonProblem.NUL: "contains a NUL character (U+0000), which is never allowed",
    JsonProblem.INTEGER: f"the integer {{value}} is out of range ({INT_MIN} to {INT_MAX})",
    JsonProblem.DEPTH: f"nested deeper than {MAX_DEPTH} levels",
    JsonProblem.TYPE: "{value} is not a JSON value",
}


@dataclass(frozen=True, slots=True)
class JsonValueProblem:
    """Where a value breaks the rules above (``place``), which rule, and what was found."""

    place: str
    problem: JsonProblem
    value: str

    @property
    def message(self) -> str:
        return MESSAGES[self.problem].format(value=self.value)

    def __str__(self) -> str:
        return f"{self.place}: {self.message}" if self.place else self.message


class JsonValueError(RulesInputError):
    """A JSON value that could not be stored or shown."""

    def __init__(self, found: JsonValueProblem) -> None:
        self.found = found
        super().__init__(found.place, found.message)


def _string_problem(text: str) -> tuple[JsonProblem, str] | None:
    if "\x00" in text:
        return JsonProblem.NUL, ""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return JsonProblem.SURROGATE, f"U+{ord(text[error.start]):04X}"
    return None


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def text_storable(text: str) -> bool:
    """Whether a string can be stored and shown: no NUL, no lone surrogate."""
    # ASCII text holds no lone surrogate, and telling ASCII costs nothing; encode the rest.
    if text.isascii():
        return "\x00" not in text
    return _string_problem(text) is None


def number_storable(value: object) -> bool:
    """Whether a value is an int or a float that can be stored (finite, within 64 bits)."""
    kind = type(value)
    if kind is float:
        return math.isfinite(value)  # type: ignore[arg-type]
    return kind is int and INT_MIN <= value <= INT_MAX  # type: ignore[operator]


def json_value_storable(value: object) -> bool:
    """True when nothing in ``value`` breaks the rules above; False when something may.

    The quick pass of ``json_value_problem``: it builds no place names and checks each
    scalar where its container lists it, and it gives up (False) on anything unusual, such
    as a subclass of ``str`` or ``dict``, for the exact walk to judge.
    """
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        kind = type(item)
        if kind is dict:
            children = item.values()  # type: ignore[attr-defined]
            for key in item:  # type: ignore[attr-defined]
                if type(key) is not str or not (key.isascii() and "\x00" not in key):
                    return False
        elif kind is list or kind is tuple:
            children = item
        else:
            return _scalar_storable(item)  # a scalar at the top
        if depth >= MAX_DEPTH:
            return False
        depth += 1
        for child in children:
            kind = type(child)
            if kind is str:
                # ASCII text holds no lone surrogate; other text is rare: encode it.
                if "\x00" in child or not (child.isascii() or _string_problem(child) is None):
                    return False
            elif kind is dict or kind is list or kind is tuple:
                pending.append((child, depth))
            elif not (child is None or kind is bool or _scalar_storable(child)):
                return False
    return True


def _scalar_storable(item: object) -> bool:
    kind = type(item)
    if kind is int:
        return INT_MIN <= item <= INT_MAX  # type: ignore[operator]
    if kind is float:
        return math.isfinite(item)  # type: ignore[arg-type]
    if kind is str:
        return _string_problem(item) is None  # type: ignore[arg-type]
    return item is None or kind is bool


def json_value_problem(value: object, *, place: str = "") -> JsonValueProblem | None:
    """The first place in ``value`` that no database or page could hold, or None."""
    if json_value_storable(value):
        return None
    # Something is wrong: find the first problem, in document order, naming its place.
    pending: list[tuple[object, str, int]] = [(value, place, 0)]
    while pending:
        item, where, depth = pending.pop()
        found: tuple[JsonProblem, str] | None = None
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, int):
            if not INT_MIN <= item <= INT_MAX:
                shown = str(item) if item.bit_length() < 200 else f"of {item.bit_length()} bits"
                found = JsonProblem.INTEGER, shown
        elif isinstance(item, float):
            if not math.isfinite(item):
                found = JsonProblem.NOT_FINITE, "NaN" if math.isnan(item) else str(item)
        elif isinstance(item, str):
            found = _string_problem(item)
        elif isinstance(item, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                found = JsonProblem.DEPTH, ""
            elif isinstance(item, dict):
                for key, child in reversed(list(item.items())):
                    if not isinstance(key, str):
                        return JsonValueProblem(where, JsonProblem.TYPE, repr(key))
                    key_problem = _string_problem(key)
                    if key_problem is not None:
                        shown = key.encode("unicode_escape").decode("ascii")
                        return JsonValueProblem(_join(where, shown), *key_problem)
                    pending.append((child, _join(where, key), depth + 1))
            else:
                for index in range(len(item) - 1, -1, -1):
                    pending.append((item[index], f"{where}[{index}]", depth + 1))
        else:
            found = JsonProblem.TYPE, type(item).__name__
        if found is not None:
            return JsonValueProblem(where, *found)
    return None


def json_value_check(value: object, *, place: str = "") -> None:
    """Raise ``JsonValueError`` naming the first place ``value`` could not be stored."""
    found = json_value_problem(value, place=place)
    if found is not None:
        raise JsonValueError(found)
